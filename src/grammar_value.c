/*
 * grammar_value.c - a JSON Schema value as GBNF rules: objects (members in schema order,
 * optional ones skippable, extra members), arrays (at most max_items), strings (no escapes or
 * control characters, at most max_string characters; enums, formats, patterns), numbers
 * (grammar_number.c), any value; and, with a report, what the grammar enforces and what is left
 * to validation. Rule names come from tool and property indexes.
 */
#include "grammar_value.h"

#include "grammar_number.h"
#include "pattern.h"
#include "status.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================ text helpers */

/* Append `s` as the body of a GBNF string literal. */
static void gbnf_escape(struct strbuf *b, const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            char esc[2] = {'\\', (char)*p};
            strbuf_add(b, esc, 2);
        } else if (*p == '\n') {
            strbuf_str(b, "\\n");
        } else if (*p < 0x20 || *p == 0x7f) {
            strbuf_printf(b, "\\x%02x", *p);
        } else {
            strbuf_add(b, (const char *)p, 1);
        }
    }
}

/* Append a GBNF literal for `s`. */
void grammar_gbnf_lit(struct strbuf *b, const char *s) {
    strbuf_str(b, "\"");
    gbnf_escape(b, s);
    strbuf_str(b, "\"");
}

/* Append a GBNF literal for the JSON string "s" (with its quotes). */
static void gbnf_json_string_lit(struct strbuf *b, const char *s) {
    char *q = NULL;
    json_t *j = json_string(s);
    if (j != NULL) {
        q = json_dumps(j, JSON_ENCODE_ANY);
        json_decref(j);
    }
    if (q == NULL) {
        b->failed = true;
        return;
    }
    grammar_gbnf_lit(b, q);
    free(q);
}

/* ============================================================================ values */

/* One line of the enforcement report: `path: type (grammar: ...; validated: ...)`. */
static void report_line(struct gctx *g,
                        const char *path,
                        const char *what,
                        const char *grammar,
                        const char *validated) {
    if (g->report == NULL) {
        return;
    }
    strbuf_printf(g->report, "  %s: %s", path, what);
    if (grammar[0] != '\0') {
        strbuf_printf(g->report, "; grammar: %s", grammar);
    }
    if (validated[0] != '\0') {
        strbuf_printf(g->report, "; validated: %s", validated);
    }
    strbuf_str(g->report, "\n");
}

static void value_expr(struct gctx *g,
                       struct strbuf *b,
                       const struct pipit_schema *s,
                       const char *prefix,
                       const char *path);

/* `base.name`, or `base["name"]` when the name is not an identifier (as validation writes). */
static void member_path(char *out, size_t cap, const char *base, const char *name) {
    bool ident = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p != '\0' && ident; p++) {
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_';
    }
    snprintf(out, cap, ident ? "%s.%s" : "%s[\"%s\"]", base, name);
}

#define STRING_CHAR GRAMMAR_STRING_CHAR

/* Append the key of member `name`: `name=` (pipit syntax, top level: bare when an identifier,
 * else the JSON string) or `"name": ` (JSON). */
static void key_expr(struct strbuf *kv, const char *name, bool top_level_pipit) {
    bool ident = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; *p != '\0' && ident; p++) {
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_';
    }
    if (top_level_pipit && ident) {
        strbuf_str(kv, "\"");
        gbnf_escape(kv, name);
        strbuf_str(kv, "=\" ");
        return;
    }
    gbnf_json_string_lit(kv, name);
    strbuf_str(kv, top_level_pipit ? " \"=\" " : " \": \" ");
}

/* Members of an object schema, in order, optional ones skippable, then (additionalProperties)
 * up to max_items extra members with any key. Emits rules <prefix>-m<i>-f (first member
 * position) and -n (later), <prefix>-x-f/-n for the extra members. */
void grammar_members_expr(struct gctx *g,
                          struct strbuf *b,
                          const struct pipit_schema *s,
                          const char *prefix,
                          bool top_level_pipit,
                          const char *path) {
    size_t n = s->n_props;
    /* what follows the last member: nothing, or the extra members */
    char tail_f[200] = "\"\"", tail_n[200] = "\"\"";
    if (s->additional != NULL) {
        char vprefix[160], xpath[600];
        snprintf(vprefix, sizeof(vprefix), "%s-xv", prefix);
        snprintf(xpath, sizeof(xpath), "%s.*", path);
        struct strbuf val = {0};
        value_expr(g, &val, s->additional, vprefix, xpath);
        strbuf_printf(g->rules, "%s-xk ::= \"\\\"\" " STRING_CHAR "{1,%d} \"\\\"\" %s %s\n", prefix,
                      PIPIT_TOOLSPEC_MAX_PROP_NAME, top_level_pipit ? "\"=\"" : "\": \"",
                      val.data != NULL ? val.data : "\"\"");
        if (val.failed) {
            g->rules->failed = true;
        }
        strbuf_free(&val);
        int64_t max = g->max_items > 0 ? g->max_items : 1;
        strbuf_printf(g->rules, "%s-x-f ::= (%s-xk (\", \" %s-xk){0,%lld})?\n", prefix, prefix,
                      prefix, (long long)(max - 1));
        strbuf_printf(g->rules, "%s-x-n ::= (\", \" %s-xk){0,%lld}\n", prefix, prefix,
                      (long long)max);
        snprintf(tail_f, sizeof(tail_f), "%s-x-f", prefix);
        snprintf(tail_n, sizeof(tail_n), "%s-x-n", prefix);
    }
    if (n == 0) {
        strbuf_str(b, tail_f);
        return;
    }
    /* rules r(i, first): members from i on; "first" = no member written yet */
    for (size_t i = n; i-- > 0;) {
        struct strbuf val = {0};
        char vprefix[160], vpath[600];
        snprintf(vprefix, sizeof(vprefix), "%s-p%zu", prefix, i);
        member_path(vpath, sizeof(vpath), path, s->props[i].name);
        /* a copied member's own nested members are free again */
        const bool *copy_props = g->copy_props;
        bool copy_now = g->copy_now;
        g->copy_now = copy_props != NULL && copy_props[i];
        g->copy_props = NULL;
        value_expr(g, &val, s->props[i].schema, vprefix, vpath);
        g->copy_props = copy_props;
        g->copy_now = copy_now;
        for (int first = 0; first < 2; first++) {
            struct strbuf kv = {0};
            if (!first) {
                strbuf_str(&kv, "\", \" ");
            }
            key_expr(&kv, s->props[i].name, top_level_pipit);
            strbuf_add(&kv, val.data != NULL ? val.data : "", val.len);
            if (val.failed) {
                kv.failed = true;
            }
            if (i + 1 < n) {
                strbuf_printf(&kv, " %s-m%zu-n", prefix, i + 1);
            } else if (s->additional != NULL) {
                strbuf_printf(&kv, " %s", tail_n);
            }
            strbuf_printf(g->rules, "%s-m%zu-%s ::= ", prefix, i, first ? "f" : "n");
            if (s->props[i].required) {
                strbuf_add(g->rules, kv.data != NULL ? kv.data : "", kv.len);
            } else {
                strbuf_str(g->rules, "(");
                strbuf_add(g->rules, kv.data != NULL ? kv.data : "", kv.len);
                strbuf_str(g->rules, ")");
                if (i + 1 < n) {
                    strbuf_printf(g->rules, " | %s-m%zu-%s", prefix, i + 1, first ? "f" : "n");
                } else {
                    strbuf_printf(g->rules, " | %s", first ? tail_f : tail_n);
                }
            }
            strbuf_str(g->rules, "\n");
            if (kv.failed) {
                g->rules->failed = true;
            }
            strbuf_free(&kv);
        }
        strbuf_free(&val);
    }
    strbuf_printf(b, "%s-m0-f", prefix);
}

/* The literal alternatives of an enum, each value as compact JSON. */
static void enum_expr(struct strbuf *b, const struct pipit_schema *s) {
    strbuf_str(b, "(");
    for (size_t i = 0; i < s->n_enum; i++) {
        if (i > 0) {
            strbuf_str(b, " | ");
        }
        char *q = json_dumps(s->enum_json[i], JSON_ENCODE_ANY | JSON_COMPACT);
        if (q == NULL) {
            b->failed = true;
            return;
        }
        grammar_gbnf_lit(b, q);
        free(q);
    }
    strbuf_str(b, ")");
}

/* Any JSON value, nested at most two levels (rules <prefix>-j0..2). The grammar offers a
 * subset of what the schema allows ("any value"); validation accepts every value. */
static void any_expr(struct gctx *g, struct strbuf *b, const char *prefix) {
    strbuf_printf(g->rules, "%s-j0 ::= (\"\\\"\" " STRING_CHAR "{0,%lld} \"\\\"\") | ", prefix,
                  (long long)g->max_string);
    grammar_number_expr(g->rules, GRAMMAR_INT_DIGITS, GRAMMAR_FRACTION_DIGITS);
    strbuf_str(g->rules, " | \"true\" | \"false\" | \"null\"\n");
    for (int d = 1; d <= 2; d++) {
        strbuf_printf(
            g->rules,
            "%s-j%d ::= %s-j0 | \"[\" (%s-j%d (\", \" %s-j%d){0,7})? \"]\" | \"{\" "
            "(\"\\\"\" " STRING_CHAR "{1,64} \"\\\": \" %s-j%d (\", \" \"\\\"\" " STRING_CHAR
            "{1,64} \"\\\": \" %s-j%d){0,7})? \"}\"\n",
            prefix, d, prefix, prefix, d - 1, prefix, d - 1, prefix, d - 1, prefix, d - 1);
    }
    strbuf_printf(b, "%s-j2", prefix);
}

/* The grammar of a string "format" (its shape; validation checks the calendar, the ranges). */
static bool format_expr(struct strbuf *b, enum pipit_schema_format f) {
    static const char *const TIME =
        "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" [0-5] [0-9] (\".\" [0-9]{1,6})? "
        "(\"Z\" | [+-] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])";
    /* a real calendar date: 31-day months, 30-day months, February to the 28th, and the 29th
     * in leap years (the last two digits a multiple of 4 but not 00, or 00 after a multiple
     * of 4) */
    static const char *const DATE =
        "([0-9]{4} \"-\" ((\"0\" [13578] | \"1\" [02]) \"-\" (\"0\" [1-9] | [12] [0-9] | \"3\" "
        "[01]) | (\"0\" [469] | \"11\") \"-\" (\"0\" [1-9] | [12] [0-9] | \"30\") | \"02-\" (\"0\" "
        "[1-9] | \"1\" [0-9] | \"2\" [0-8])) | ([0-9] [0-9] (\"0\" [48] | [2468] [048] | [13579] "
        "[26]) | ([02468] [048] | [13579] [26]) \"00\") \"-02-29\")";
    static const char *const HEX = "[0-9a-f]";
    switch (f) {
        case PIPIT_FORMAT_DATE:
            strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", DATE);
            return true;
        case PIPIT_FORMAT_TIME:
            strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", TIME);
            return true;
        case PIPIT_FORMAT_DATE_TIME:
            strbuf_printf(b, "(\"\\\"\" %s \"T\" %s \"\\\"\")", DATE, TIME);
            return true;
        case PIPIT_FORMAT_UUID:
            strbuf_printf(
                b, "(\"\\\"\" %s{8} \"-\" %s{4} \"-\" %s{4} \"-\" %s{4} \"-\" %s{12} \"\\\"\")",
                HEX, HEX, HEX, HEX, HEX);
            return true;
        case PIPIT_FORMAT_EMAIL:
            strbuf_str(b, "(\"\\\"\" [a-zA-Z0-9._%+-]{1,64} \"@\" [a-zA-Z0-9-]{1,60} (\".\" "
                          "[a-zA-Z0-9-]{1,60}){1,3} \"\\\"\")");
            return true;
        case PIPIT_FORMAT_URI:
            strbuf_str(b, "(\"\\\"\" [a-zA-Z] [a-zA-Z0-9+.-]{0,15} \":\" "
                          "[a-zA-Z0-9._~:/?#@!$&'()*+,;=%-]{1,200} \"\\\"\")");
            return true;
        default:
            return false;
    }
}

static void add_word(char *buf, size_t cap, const char *word) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n > 0 ? ", " : "", word);
}

/* The string of `s`'s pattern with its length range folded in, when pattern.c can. */
static bool pattern_with_lengths(struct gctx *g, struct strbuf *b, const struct pipit_schema *s) {
    struct strbuf pat = {0};
    bool ok = pattern_gbnf_lengths(s->pattern, g->max_string, s->min_length, s->max_length, &pat);
    if (ok) {
        strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", pat.data);
    }
    strbuf_free(&pat);
    return ok;
}

static void
string_expr(struct gctx *g, struct strbuf *b, const struct pipit_schema *s, const char *path) {
    char gr[256] = "type", va[256] = "";
    char what[96];
    if (s->n_enum > 0) {
        enum_expr(b, s);
        add_word(gr, sizeof(gr), "enum");
        if (s->format != PIPIT_FORMAT_NONE) {
            add_word(va, sizeof(va), "format");
        }
        report_line(g, path, "string", gr, va);
        return;
    }
    bool lengths_in_grammar = false;
    if (format_expr(b, s->format)) {
        add_word(gr, sizeof(gr), "format");
        if (s->pattern != NULL) {
            add_word(va, sizeof(va), "pattern");
        }
    } else if (s->pattern != NULL && (s->min_length > 0 || s->max_length >= 0) &&
               pattern_with_lengths(g, b, s)) {
        add_word(gr, sizeof(gr), "pattern");
        lengths_in_grammar = true;
    } else if (s->pattern != NULL) {
        struct strbuf pat = {0};
        if (pattern_gbnf(s->pattern, g->max_string, &pat)) {
            strbuf_printf(b, "(\"\\\"\" %s \"\\\"\")", pat.data);
            add_word(gr, sizeof(gr), "pattern");
        } else {
            strbuf_printf(b, "(\"\\\"\" " STRING_CHAR "{0,%lld} \"\\\"\")",
                          (long long)g->max_string);
            add_word(va, sizeof(va), "pattern");
        }
        strbuf_free(&pat);
    } else if (g->copy_now) {
        /* spans of the turn's text (pipit_grammar_with_copy); validation keeps the lengths */
        strbuf_str(b, "copy");
        g->used_copy = true;
        add_word(gr, sizeof(gr), "copied from the turn's text (agent)");
    } else {
        int64_t max =
            s->max_length >= 0 && s->max_length < g->max_string ? s->max_length : g->max_string;
        if (max < s->min_length) {
            max = s->min_length;
        }
        strbuf_printf(b, "(\"\\\"\" " STRING_CHAR "{%lld,%lld} \"\\\"\")", (long long)s->min_length,
                      (long long)max);
        lengths_in_grammar = true;
    }
    if (s->format == PIPIT_FORMAT_OTHER) {
        snprintf(what, sizeof(what), "format %.40s (annotation, not checked)", s->format_name);
        add_word(va, sizeof(va), what);
    }
    if (s->min_length > 0) {
        add_word(lengths_in_grammar ? gr : va, lengths_in_grammar ? sizeof(gr) : sizeof(va),
                 "minLength");
    }
    if (s->max_length >= 0) {
        add_word(lengths_in_grammar ? gr : va, lengths_in_grammar ? sizeof(gr) : sizeof(va),
                 "maxLength");
    }
    report_line(g, path, "string", gr, va);
}

static void value_expr(struct gctx *g,
                       struct strbuf *b,
                       const struct pipit_schema *s,
                       const char *prefix,
                       const char *path) {
    char gr[256] = "type", va[256] = "";
    switch (s->type) {
        case PIPIT_SCHEMA_BOOLEAN:
            if (s->n_enum > 0) {
                enum_expr(b, s);
                add_word(gr, sizeof(gr), "enum");
            } else {
                strbuf_str(b, "(\"true\" | \"false\")");
            }
            report_line(g, path, "boolean", gr, va);
            return;
        case PIPIT_SCHEMA_NULL:
            strbuf_str(b, "\"null\"");
            report_line(g, path, "null", gr, va);
            return;
        case PIPIT_SCHEMA_STRING:
            string_expr(g, b, s, path);
            return;
        case PIPIT_SCHEMA_INTEGER:
        case PIPIT_SCHEMA_NUMBER:
            /* without exact_values, a numeric enum is not forced either: "timer 7 seconds" is
             * refused, not bent */
            if (!grammar_number_value(b, s, g->exact)) {
                if (g->bad == NULL) {
                    struct strbuf msg = {0};
                    strbuf_printf(&msg,
                                  "%s: no %s that a call can write (at most %d integer and "
                                  "%d fraction digits) satisfies the schema",
                                  path, pipit_schema_type_name(s->type), GRAMMAR_MAX_INT_DIGITS,
                                  GRAMMAR_MAX_DIGITS);
                    g->bad = strbuf_take(&msg);
                }
                strbuf_str(b, "\"\"");
            }
            {
                /* exact_values: in the grammar (and validated again); else validated only */
                char *lim = g->exact ? gr : va;
                size_t lim_size = g->exact ? sizeof(gr) : sizeof(va);
                if (s->n_enum > 0) {
                    add_word(lim, lim_size, "enum");
                }
                if (s->has_min) {
                    add_word(lim, lim_size, "minimum");
                }
                if (s->has_max) {
                    add_word(lim, lim_size, "maximum");
                }
            }
            if (s->has_xmin) {
                add_word(g->exact ? gr : va, g->exact ? sizeof(gr) : sizeof(va),
                         "exclusiveMinimum");
            }
            if (s->has_xmax) {
                add_word(g->exact ? gr : va, g->exact ? sizeof(gr) : sizeof(va),
                         "exclusiveMaximum");
            }
            if (s->multiple_of > 0) {
                add_word(va, sizeof(va), "multipleOf");
            }
            if (s->format == PIPIT_FORMAT_INT32) {
                add_word(va, sizeof(va), "format int32");
            } else if (s->format == PIPIT_FORMAT_OTHER) {
                char what[96];
                snprintf(what, sizeof(what), "format %.40s (annotation)", s->format_name);
                add_word(va, sizeof(va), what);
            }
            report_line(g, path, pipit_schema_type_name(s->type), gr, va);
            return;
        case PIPIT_SCHEMA_ANY:
            if (s->n_enum > 0) {
                enum_expr(b, s);
                report_line(g, path, "any", "enum", "");
            } else {
                any_expr(g, b, prefix);
                report_line(g, path, "any", "JSON value (nested at most 2 levels)", "");
            }
            return;
        case PIPIT_SCHEMA_UNION: {
            /* built last to first, like object members, so the report reads in order */
            struct strbuf alt[PIPIT_TOOLSPEC_MAX_ALTS];
            memset(alt, 0, sizeof(alt));
            for (size_t i = s->n_alts; i-- > 0;) {
                char aprefix[160], apath[600];
                snprintf(aprefix, sizeof(aprefix), "%s-u%zu", prefix, i);
                snprintf(apath, sizeof(apath), "%s (alternative %zu)", path, i + 1);
                value_expr(g, &alt[i], s->alts[i], aprefix, apath);
            }
            strbuf_str(b, "(");
            for (size_t i = 0; i < s->n_alts; i++) {
                if (i > 0) {
                    strbuf_str(b, " | ");
                }
                strbuf_add(b, alt[i].data != NULL ? alt[i].data : "", alt[i].len);
                if (alt[i].failed) {
                    b->failed = true;
                }
                strbuf_free(&alt[i]);
            }
            strbuf_str(b, ")");
            report_line(g, path, s->one_of ? "oneOf" : "anyOf", "one of the alternatives",
                        s->one_of ? "exactly one matches" : "");
            return;
        }
        case PIPIT_SCHEMA_ARRAY: {
            if (s->n_enum > 0) {
                enum_expr(b, s);
                report_line(g, path, "array", "enum", "");
                return;
            }
            char iprefix[160], ipath[600];
            snprintf(iprefix, sizeof(iprefix), "%s-i", prefix);
            snprintf(ipath, sizeof(ipath), "%s[]", path);
            struct strbuf item = {0};
            value_expr(g, &item, s->items, iprefix, ipath);
            strbuf_printf(g->rules, "%s ::= %s\n", iprefix, item.data != NULL ? item.data : "");
            if (item.failed) {
                g->rules->failed = true;
            }
            strbuf_free(&item);
            int64_t max = s->max_items >= 0 ? s->max_items : g->max_items;
            if (max < s->min_items) {
                max = s->min_items;
            }
            if (max == 0) {
                strbuf_str(b, "\"[]\"");
            } else if (s->min_items == 0 && max == 1) {
                strbuf_printf(b, "(\"[\" %s? \"]\")", iprefix);
            } else if (s->min_items == 0) {
                strbuf_printf(b, "(\"[\" (%s (\", \" %s){0,%lld})? \"]\")", iprefix, iprefix,
                              (long long)(max - 1));
            } else {
                strbuf_printf(b, "(\"[\" %s (\", \" %s){%lld,%lld} \"]\")", iprefix, iprefix,
                              (long long)(s->min_items - 1), (long long)(max - 1));
            }
            if (s->min_items > 0) {
                add_word(gr, sizeof(gr), "minItems");
            }
            if (s->max_items >= 0) {
                add_word(gr, sizeof(gr), "maxItems");
            }
            if (s->unique_items) {
                add_word(va, sizeof(va), "uniqueItems");
            }
            report_line(g, path, "array", gr, va);
            return;
        }
        case PIPIT_SCHEMA_OBJECT: {
            if (s->n_enum > 0) {
                enum_expr(b, s);
                report_line(g, path, "object", "enum", "");
                return;
            }
            strbuf_str(b, "(\"{\" ");
            grammar_members_expr(g, b, s, prefix, false, path);
            strbuf_str(b, " \"}\")");
            char ov[128] = "";
            if (s->additional != NULL) {
                add_word(ov, sizeof(ov), "no duplicate keys");
            }
            if (s->min_props > 0) {
                add_word(ov, sizeof(ov), "minProperties");
            }
            if (s->max_props >= 0) {
                add_word(ov, sizeof(ov), "maxProperties");
            }
            report_line(g, path, "object", "keys, required", ov);
            return;
        }
    }
}
