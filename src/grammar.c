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
 * - integers and numbers are any JSON number of that type, with as many integer and fractional
 *   digits as their bounds need (at least GRAMMAR_INT_DIGITS and GRAMMAR_FRACTION_DIGITS),
 *   whatever their minimum, maximum or numeric enum (see "numbers" below for why), unless
 *   exact_values compiles those in too;
 * - strings are JSON strings without escapes or control characters, at most maxLength (default
 *   GRAMMAR_DEFAULT_MAX_STRING, the params' cap) characters;
 * - arrays hold at most maxItems (default GRAMMAR_DEFAULT_MAX_ITEMS) items;
 * - whitespace is fixed: ", " between members, ": " after JSON keys.
 * Object members appear in schema order; optional members may be left out.
 *
 * The values' rules are grammar_value.c's, the numbers' grammar_number.c's.
 *
 * Rule names are derived from tool and property indexes (tool names may hold '_', which GBNF
 * rule names may not).
 */
#include "grammar.h"

#include "grammar_value.h"
#include "status.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        case PIPIT_SYNTAX_AUTO:
            return "auto";
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
        grammar_members_expr(g, &body, t->params, prefix, false, "args");
        strbuf_str(&body, " \"}\"");
    } else {
        strbuf_str(&body, "\"(\" ");
        grammar_members_expr(g, &body, t->params, prefix, true, "args");
        strbuf_str(&body, " \")\"");
    }
    strbuf_printf(g->rules, "%s-args ::= %s\n", prefix, body.data != NULL ? body.data : "");
    if (body.failed) {
        g->rules->failed = true;
    }
    strbuf_free(&body);
}

/* The first unwritable value a compile met goes back to `base` (which owns it). */
static void keep_bad(struct gctx *base, struct gctx *g) {
    if (base->bad == NULL) {
        base->bad = g->bad;
    } else {
        free(g->bad);
    }
    g->bad = NULL;
}

/* ----------------------------------------------------------------------------
 * "none of these tools" (docs/grammar.md): besides one call to one of the tools, the call
 * grammar offers the call `none()` (pipit) / {"name": "none", "arguments": {}} (Hermes), the
 * honest outcome when no tool of the set does what was asked; the agent runs nothing and says
 * so. A set with its own tool named "none" keeps that tool instead. */

#define NONE_NAME "none"

static bool has_own_none(const struct pipit_toolset *ts) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (strcmp(ts->tools[i].name, NONE_NAME) == 0) {
            return true;
        }
    }
    return false;
}

/* Append " | (the none call)" (the whole call, or with `head_only` up to its arguments). */
static void none_alternative(struct strbuf *b,
                             const struct pipit_toolset *ts,
                             enum pipit_call_syntax syntax,
                             bool head_only) {
    if (has_own_none(ts)) {
        return;
    }
    struct strbuf text = {0};
    grammar_call_head(syntax, NONE_NAME, &text);
    if (head_only) {
        strbuf_str(&text, syntax == PIPIT_SYNTAX_HERMES ? "{" : "(");
    } else {
        strbuf_str(&text, syntax == PIPIT_SYNTAX_HERMES ? "{}" : "()");
        strbuf_str(&text, grammar_call_tail(syntax));
    }
    strbuf_str(b, " | ");
    grammar_gbnf_lit(b, text.data != NULL ? text.data : "");
    b->failed = b->failed || text.failed;
    strbuf_free(&text);
}

static char *compile_call(const struct pipit_toolset *ts, struct gctx *base) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.bad = NULL;
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
        grammar_gbnf_lit(&top, head.data != NULL ? head.data : "");
        strbuf_printf(&top, " %s-args", prefix);
        const char *tail = grammar_call_tail(syntax);
        if (tail[0] != '\0') {
            strbuf_str(&top, " ");
            grammar_gbnf_lit(&top, tail);
        }
        strbuf_str(&top, ")");
        strbuf_free(&head);
    }
    none_alternative(&top, ts, syntax, false);
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (rules.failed) {
        top.failed = true;
    }
    strbuf_free(&rules);
    keep_bad(base, &g);
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
        grammar_gbnf_lit(&b, head.data != NULL ? head.data : "");
        strbuf_free(&head);
    }
    none_alternative(&b, ts, syntax, true); /* "none of these tools" (docs/grammar.md) */
    strbuf_str(&b, "\n");
    return strbuf_take(&b);
}

static char *compile_args(const struct pipit_tool *t, struct gctx *base) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.bad = NULL;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    args_rule(&g, t, "a");
    strbuf_str(&top, "root ::= a-args");
    const char *tail = grammar_call_tail(syntax);
    if (tail[0] != '\0') {
        strbuf_str(&top, " ");
        grammar_gbnf_lit(&top, tail);
    }
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (rules.failed) {
        top.failed = true;
    }
    strbuf_free(&rules);
    keep_bad(base, &g);
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
    free(g.bad); /* the report describes; compiling says what cannot be written */
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
                        .max_items = p.max_array_items,
                        .exact = p.exact_values,
                        .bad = NULL};
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
    if (!ok || base.bad != NULL) {
        pipit_grammar_free(g);
        enum pipit_status st = ok ? PIPIT_ERR_SPEC : PIPIT_ERR_NOMEM;
        pipit_error_set(err, st, "grammar: %s", ok ? base.bad : "out of memory");
        free(base.bad);
        return st;
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
