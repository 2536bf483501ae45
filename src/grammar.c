/*
 * grammar.c - tool set -> GBNF grammars for the two call syntaxes.
 *
 * A compiled grammar set holds, for one tool set and one syntax:
 *   call   "exactly one call to one of these tools", starting with the syntax's trigger text
 *          (so the same grammar serves the lazy mode: unconstrained until the trigger);
 *   names  "the trigger and the name of one tool" (just-in-time stage 1);
 *   args   per tool, "the arguments of this one tool" (just-in-time stage 2).
 *
 * The grammar guarantees a call's shape, not its numeric ranges: a constrained call always
 * parses and names a tool, its arguments and their JSON types exactly, and validation (which
 * always runs before a handler) refuses a number outside its range. So:
 * - string enums are alternatives of the exact values;
 * - integers and numbers are any JSON number of that type, at most GRAMMAR_INT_DIGITS integer
 *   and GRAMMAR_FRACTION_DIGITS fractional digits, whatever their minimum, maximum or numeric
 *   enum (see "numbers" below for why);
 * - strings are JSON strings without escapes or control characters, at most maxLength (default
 *   GRAMMAR_DEFAULT_MAX_STRING, the params' cap) characters;
 * - arrays hold at most maxItems (default GRAMMAR_DEFAULT_MAX_ITEMS) items;
 * - whitespace is fixed: ", " between members, ": " after JSON keys.
 * Object members appear in schema order; optional members may be left out.
 *
 * Rule names are derived from tool and property indexes (tool names may hold '_', which GBNF
 * rule names may not).
 */
#include "grammar.h"

#include "pattern.h"
#include "status.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAMMAR_FRACTION_DIGITS    3
#define GRAMMAR_INT_DIGITS         12
#define GRAMMAR_DEFAULT_MAX_STRING 128
#define GRAMMAR_DEFAULT_MAX_ITEMS  8
#define GRAMMAR_HARD_MAX_STRING    4096

struct pipit_grammar {
    enum pipit_call_syntax syntax;
    char *call;  /* GBNF, root: trigger + one call */
    char *names; /* GBNF, root: trigger + one tool name */
    char **args; /* per tool: GBNF, root: the arguments */
    size_t n_tools;
};

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
static void gbnf_lit(struct strbuf *b, const char *s) {
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
    gbnf_lit(b, q);
    free(q);
}

/* ============================================================================ numbers */

/*
 * Numbers have their JSON shape, not their schema's range: a person who asks for "zoom 50x" must
 * be told that the zoom stops at 10x, not be given 5x. The grammar therefore lets every number of
 * the right type through (bounded in length, so a decode always ends) and validation refuses the
 * ones outside `minimum`/`maximum` or a numeric `enum` before any handler runs.
 *
 *   integer  "0" or an optional "-" and 1..GRAMMAR_INT_DIGITS digits without a leading zero
 *   number   the same integer part ("-0" only with a fraction), then optionally "." and
 *            1..GRAMMAR_FRACTION_DIGITS digits
 */
static void integer_expr(struct strbuf *b) {
    strbuf_printf(b, "(\"0\" | \"-\"? [1-9] [0-9]{0,%d})", GRAMMAR_INT_DIGITS - 1);
}

static void number_expr(struct strbuf *b) {
    strbuf_printf(b,
                  "(\"0\" (\".\" [0-9]{1,%d})? | \"-0.\" [0-9]{1,%d} | "
                  "\"-\"? [1-9] [0-9]{0,%d} (\".\" [0-9]{1,%d})?)",
                  GRAMMAR_FRACTION_DIGITS, GRAMMAR_FRACTION_DIGITS, GRAMMAR_INT_DIGITS - 1,
                  GRAMMAR_FRACTION_DIGITS);
}

/* ============================================================================ values */

struct gctx {
    struct strbuf *rules; /* extra rule definitions */
    enum pipit_call_syntax syntax;
    int64_t max_string;    /* characters */
    int64_t max_items;     /* for arrays without maxItems */
    struct strbuf *report; /* NULL, or where grammar_describe() writes what is enforced where */
};

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

/* A JSON string in the grammar's alphabet: no escapes, no control characters. */
#define STRING_CHAR "[^\"\\\\\\x00-\\x1f]"

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
static void members_expr(struct gctx *g,
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
        value_expr(g, &val, s->props[i].schema, vprefix, vpath);
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
        gbnf_lit(b, q);
        free(q);
    }
    strbuf_str(b, ")");
}

/* Any JSON value, nested at most two levels (rules <prefix>-j0..2). The grammar offers a
 * subset of what the schema allows ("any value"); validation accepts every value. */
static void any_expr(struct gctx *g, struct strbuf *b, const char *prefix) {
    strbuf_printf(g->rules, "%s-j0 ::= (\"\\\"\" " STRING_CHAR "{0,%lld} \"\\\"\") | ", prefix,
                  (long long)g->max_string);
    number_expr(g->rules);
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
    static const char *const DATE = "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" "
                                    "[1-9] | [12] [0-9] | \"3\" [01])";
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
    } else if (s->format == PIPIT_FORMAT_DATE || s->format == PIPIT_FORMAT_DATE_TIME) {
        add_word(va, sizeof(va), "format (the calendar: days per month)");
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
            /* a numeric enum is not forced either: "timer 7 seconds" is refused, not bent */
            if (s->type == PIPIT_SCHEMA_INTEGER) {
                integer_expr(b);
            } else {
                number_expr(b);
            }
            if (s->n_enum > 0) {
                add_word(va, sizeof(va), "enum");
            }
            if (s->has_min) {
                add_word(va, sizeof(va), "minimum");
            }
            if (s->has_max) {
                add_word(va, sizeof(va), "maximum");
            }
            if (s->has_xmin) {
                add_word(va, sizeof(va), "exclusiveMinimum");
            }
            if (s->has_xmax) {
                add_word(va, sizeof(va), "exclusiveMaximum");
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
            members_expr(g, b, s, prefix, false, path);
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

/* ============================================================================ compile */

const char *pipit_call_syntax_trigger(enum pipit_call_syntax syntax) {
    return syntax == PIPIT_SYNTAX_HERMES ? "<tool_call>" : "<call>";
}

const char *pipit_call_syntax_str(enum pipit_call_syntax syntax) {
    switch (syntax) {
        case PIPIT_SYNTAX_PIPIT:
            return "pipit";
        case PIPIT_SYNTAX_HERMES:
            return "hermes";
    }
    return "unknown";
}

/* The text that opens a call of tool `name`, up to where its arguments begin. */
void grammar_call_head(enum pipit_call_syntax syntax, const char *name, struct strbuf *b) {
    if (syntax == PIPIT_SYNTAX_HERMES) {
        strbuf_printf(b, "<tool_call>\n{\"name\": \"%s\", \"arguments\": ", name);
    } else {
        strbuf_printf(b, "<call>%s", name);
    }
}

/* The text that closes a call after its arguments. */
const char *grammar_call_tail(enum pipit_call_syntax syntax) {
    return syntax == PIPIT_SYNTAX_HERMES ? "}\n</tool_call>" : "";
}

/* Append "the arguments of tool t" as a rule named <prefix>-args. */
static void args_rule(struct gctx *g, const struct pipit_tool *t, const char *prefix) {
    struct strbuf body = {0};
    if (g->syntax == PIPIT_SYNTAX_HERMES) {
        strbuf_str(&body, "\"{\" ");
        members_expr(g, &body, t->params, prefix, false, "args");
        strbuf_str(&body, " \"}\"");
    } else {
        strbuf_str(&body, "\"(\" ");
        members_expr(g, &body, t->params, prefix, true, "args");
        strbuf_str(&body, " \")\"");
    }
    strbuf_printf(g->rules, "%s-args ::= %s\n", prefix, body.data != NULL ? body.data : "");
    if (body.failed) {
        g->rules->failed = true;
    }
    strbuf_free(&body);
}

static char *compile_call(const struct pipit_toolset *ts, const struct gctx *base) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    strbuf_str(&top, "root ::= ");
    for (size_t i = 0; i < ts->n_tools; i++) {
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "t%zu", i);
        args_rule(&g, &ts->tools[i], prefix);
        if (i > 0) {
            strbuf_str(&top, " | ");
        }
        struct strbuf head = {0};
        grammar_call_head(syntax, ts->tools[i].name, &head);
        strbuf_str(&top, "(");
        gbnf_lit(&top, head.data != NULL ? head.data : "");
        strbuf_printf(&top, " %s-args", prefix);
        const char *tail = grammar_call_tail(syntax);
        if (tail[0] != '\0') {
            strbuf_str(&top, " ");
            gbnf_lit(&top, tail);
        }
        strbuf_str(&top, ")");
        strbuf_free(&head);
    }
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (rules.failed) {
        top.failed = true;
    }
    strbuf_free(&rules);
    return strbuf_take(&top);
}

static char *compile_names(const struct pipit_toolset *ts, enum pipit_call_syntax syntax) {
    struct strbuf b = {0};
    strbuf_str(&b, "root ::= ");
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (i > 0) {
            strbuf_str(&b, " | ");
        }
        struct strbuf head = {0};
        grammar_call_head(syntax, ts->tools[i].name, &head);
        /* the arguments' opener ends the name: no tool name is a prefix of another's call */
        strbuf_str(&head, syntax == PIPIT_SYNTAX_HERMES ? "{" : "(");
        gbnf_lit(&b, head.data != NULL ? head.data : "");
        strbuf_free(&head);
    }
    strbuf_str(&b, "\n");
    return strbuf_take(&b);
}

static char *compile_args(const struct pipit_tool *t, const struct gctx *base) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    args_rule(&g, t, "a");
    strbuf_str(&top, "root ::= a-args");
    const char *tail = grammar_call_tail(syntax);
    if (tail[0] != '\0') {
        strbuf_str(&top, " ");
        gbnf_lit(&top, tail);
    }
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (rules.failed) {
        top.failed = true;
    }
    strbuf_free(&rules);
    return strbuf_take(&top);
}

enum pipit_status
pipit_grammar_describe_tool(const struct pipit_toolset *ts, size_t index, char **out) {
    if (out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (ts == NULL || index >= ts->n_tools) {
        return PIPIT_ERR_INVALID_ARG;
    }
    struct strbuf rules = {0}, report = {0};
    struct gctx g = {.rules = &rules,
                     .syntax = PIPIT_SYNTAX_PIPIT,
                     .max_string = GRAMMAR_DEFAULT_MAX_STRING,
                     .max_items = GRAMMAR_DEFAULT_MAX_ITEMS,
                     .report = &report};
    args_rule(&g, &ts->tools[index], "a");
    strbuf_free(&rules);
    /* the compiler writes a node's line after its children and members last to first:
     * reversed, the lines read in document order, each node before its children */
    struct strbuf rev = {0};
    for (size_t end = report.len; end > 0;) {
        size_t start = end - 1;
        while (start > 0 && report.data[start - 1] != '\n') {
            start--;
        }
        strbuf_add(&rev, report.data + start, end - start);
        end = start;
    }
    if (report.failed) {
        rev.failed = true;
    }
    strbuf_free(&report);
    if (rev.len == 0) {
        strbuf_str(&rev, "  (no arguments)\n");
    }
    *out = strbuf_take(&rev);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

struct pipit_grammar_params pipit_grammar_default_params(void) {
    struct pipit_grammar_params p = {
        .syntax = PIPIT_SYNTAX_PIPIT,
        .max_string_chars = GRAMMAR_DEFAULT_MAX_STRING,
        .max_array_items = GRAMMAR_DEFAULT_MAX_ITEMS,
    };
    return p;
}

enum pipit_status pipit_grammar_compile(const struct pipit_toolset *ts,
                                        const struct pipit_grammar_params *params,
                                        struct pipit_grammar **out,
                                        struct pipit_error *err) {
    pipit_error_clear(err);
    if (ts == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "grammar: NULL argument");
    }
    *out = NULL;
    struct pipit_grammar_params p = params != NULL ? *params : pipit_grammar_default_params();
    enum pipit_call_syntax syntax = p.syntax;
    if (p.max_string_chars > GRAMMAR_HARD_MAX_STRING || p.max_array_items > 1024) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "grammar: max_string_chars %u (<= %d) or max_array_items %u "
                               "(<= 1024) too large",
                               p.max_string_chars, GRAMMAR_HARD_MAX_STRING, p.max_array_items);
    }
    struct gctx base = {.rules = NULL,
                        .syntax = syntax,
                        .max_string = p.max_string_chars,
                        .max_items = p.max_array_items};
    if (syntax != PIPIT_SYNTAX_PIPIT && syntax != PIPIT_SYNTAX_HERMES) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "grammar: unknown call syntax %d",
                               (int)syntax);
    }
    struct pipit_grammar *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "grammar: out of memory");
    }
    g->syntax = syntax;
    g->n_tools = ts->n_tools;
    g->args = calloc(ts->n_tools > 0 ? ts->n_tools : 1, sizeof(char *));
    g->call = compile_call(ts, &base);
    g->names = compile_names(ts, syntax);
    bool ok = g->args != NULL && g->call != NULL && g->names != NULL;
    for (size_t i = 0; ok && i < ts->n_tools; i++) {
        g->args[i] = compile_args(&ts->tools[i], &base);
        ok = g->args[i] != NULL;
    }
    if (!ok) {
        pipit_grammar_free(g);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "grammar: out of memory");
    }
    *out = g;
    return PIPIT_OK;
}

void pipit_grammar_free(struct pipit_grammar *g) {
    if (g == NULL) {
        return;
    }
    for (size_t i = 0; g->args != NULL && i < g->n_tools; i++) {
        free(g->args[i]);
    }
    free(g->args);
    free(g->call);
    free(g->names);
    free(g);
}

const char *pipit_grammar_call(const struct pipit_grammar *g) {
    return g != NULL ? g->call : NULL;
}

const char *pipit_grammar_names(const struct pipit_grammar *g) {
    return g != NULL ? g->names : NULL;
}

const char *pipit_grammar_args(const struct pipit_grammar *g, size_t tool_index) {
    return g != NULL && tool_index < g->n_tools ? g->args[tool_index] : NULL;
}

enum pipit_call_syntax pipit_grammar_syntax(const struct pipit_grammar *g) {
    return g != NULL ? g->syntax : PIPIT_SYNTAX_PIPIT;
}
