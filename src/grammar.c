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
    int64_t max_string; /* characters */
    int64_t max_items;  /* for arrays without maxItems */
};

static void
value_expr(struct gctx *g, struct strbuf *b, const struct pipit_schema *s, const char *rule_prefix);

/* Members of an object schema, in order, optional ones skippable. `first_sep` is what comes
 * before the first member (""), `sep` between members, `key_fmt` the member key. Emits rules
 * <prefix>-m<i>-f (first member position) and -n (later). */
static void members_expr(struct gctx *g,
                         struct strbuf *b,
                         const struct pipit_schema *s,
                         const char *prefix,
                         bool top_level_pipit) {
    size_t n = s->n_props;
    if (n == 0) {
        strbuf_str(b, "\"\"");
        return;
    }
    /* rules r(i, first): members from i on; "first" = no member written yet */
    for (size_t i = n; i-- > 0;) {
        struct strbuf val = {0};
        char vprefix[160];
        snprintf(vprefix, sizeof(vprefix), "%s-p%zu", prefix, i);
        value_expr(g, &val, s->props[i].schema, vprefix);
        for (int first = 0; first < 2; first++) {
            struct strbuf kv = {0};
            if (!first) {
                strbuf_str(&kv, "\", \" ");
            }
            if (top_level_pipit) {
                strbuf_str(&kv, "\"");
                gbnf_escape(&kv, s->props[i].name);
                strbuf_str(&kv, "=\" ");
            } else {
                char key[PIPIT_TOOLSPEC_MAX_NAME + 8];
                snprintf(key, sizeof(key), "\"%s\": ", s->props[i].name);
                gbnf_lit(&kv, key);
                strbuf_str(&kv, " ");
            }
            strbuf_add(&kv, val.data != NULL ? val.data : "", val.len);
            if (val.failed) {
                kv.failed = true;
            }
            if (i + 1 < n) {
                strbuf_printf(&kv, " %s-m%zu-n", prefix, i + 1);
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
                    strbuf_str(g->rules, " | \"\"");
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

static void
value_expr(struct gctx *g, struct strbuf *b, const struct pipit_schema *s, const char *prefix) {
    switch (s->type) {
        case PIPIT_SCHEMA_BOOLEAN:
            strbuf_str(b, "(\"true\" | \"false\")");
            return;
        case PIPIT_SCHEMA_STRING:
            if (s->n_enum > 0) {
                strbuf_str(b, "(");
                for (size_t i = 0; i < s->n_enum; i++) {
                    if (i > 0) {
                        strbuf_str(b, " | ");
                    }
                    gbnf_json_string_lit(b, s->enum_str[i]);
                }
                strbuf_str(b, ")");
            } else {
                int64_t max = s->max_length >= 0 && s->max_length < g->max_string ? s->max_length
                                                                                  : g->max_string;
                strbuf_printf(b, "(\"\\\"\" [^\"\\\\\\x00-\\x1f]{0,%lld} \"\\\"\")",
                              (long long)max);
            }
            return;
        case PIPIT_SCHEMA_INTEGER:
            /* a numeric enum is not forced either: "timer 7 seconds" is refused, not bent */
            integer_expr(b);
            return;
        case PIPIT_SCHEMA_NUMBER:
            number_expr(b);
            return;
        case PIPIT_SCHEMA_ARRAY: {
            char iprefix[160];
            snprintf(iprefix, sizeof(iprefix), "%s-i", prefix);
            struct strbuf item = {0};
            value_expr(g, &item, s->items, iprefix);
            strbuf_printf(g->rules, "%s ::= %s\n", iprefix, item.data != NULL ? item.data : "");
            if (item.failed) {
                g->rules->failed = true;
            }
            strbuf_free(&item);
            int64_t max = s->max_items >= 0 ? s->max_items : g->max_items;
            if (max == 0) {
                strbuf_str(b, "\"[]\"");
            } else if (max == 1) {
                strbuf_printf(b, "(\"[\" %s? \"]\")", iprefix);
            } else {
                strbuf_printf(b, "(\"[\" (%s (\", \" %s){0,%lld})? \"]\")", iprefix, iprefix,
                              (long long)(max - 1));
            }
            return;
        }
        case PIPIT_SCHEMA_OBJECT: {
            strbuf_str(b, "(\"{\" ");
            members_expr(g, b, s, prefix, false);
            strbuf_str(b, " \"}\")");
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
        members_expr(g, &body, t->params, prefix, false);
        strbuf_str(&body, " \"}\"");
    } else {
        strbuf_str(&body, "\"(\" ");
        members_expr(g, &body, t->params, prefix, true);
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
