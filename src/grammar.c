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
#include "toolspec.h"
#include "utf8.h"
#include "words.h"

#include <jansson.h>
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
/* ============================================================================ copied strings */

/* Whether `value` shares a word with `say` (words of two or more characters, any case). */
static bool shares_word_as_is(const char *say, const char *value) {
    struct words_tok a[64], b[32];
    size_t na = words_tokenize(say, strlen(say), 0, a, 64);
    size_t nb = words_tokenize(value, strlen(value), 0, b, 32);
    for (size_t j = 0; j < nb; j++) {
        for (size_t i = 0; i < na && strlen(b[j].w) >= 2; i++) {
            if (strcmp(a[i].w, b[j].w) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* ... as is, or by the parts of its words a '-' or '_' joins ("Q3-report" is "look for the Q3
 * report"'s words joined; "F-201" is a word of "open F-201" whole). */
static bool shares_word(const char *say, const char *value) {
    char parts[256];
    snprintf(parts, sizeof(parts), "%s", value);
    for (char *c = parts; *c != '\0'; c++) {
        *c = *c == '-' || *c == '_' ? ' ' : *c;
    }
    return shares_word_as_is(say, value) || shares_word_as_is(say, parts);
}

/* The top-level arguments of tool `ti` whose free strings are copied (NULL: none or off):
 * every argument, unless a pack example gives it a string that shares no word with the
 * example's sentence (an alarm's "06:00" for "6am", a summary the example composes). Of the
 * cloud tool only `user_query_context`: the agent gives the cloud the person's words anyway,
 * and a copy is bounded where a free string ran to the token limit and broke the call; its
 * reason stays free. string_expr() decides which of them are free strings. */
static bool *copy_props_of(const struct pipit_toolset *ts, size_t ti, bool on) {
    const struct pipit_tool *t = &ts->tools[ti];
    if (!on || t->params == NULL || t->params->n_props == 0) {
        return NULL;
    }
    bool *copy = calloc(t->params->n_props, sizeof(bool));
    if (copy == NULL) {
        return NULL;
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, ti);
    bool cloud = pipit_toolset_is_cloud(ts, ti);
    for (size_t i = 0; i < t->params->n_props; i++) {
        /* the cloud's: only the question, which the agent replaces by the person's words */
        copy[i] = !cloud || strcmp(t->params->props[i].name, "user_query_context") == 0;
        for (size_t e = 0; tp != NULL && e < tp->n_examples && copy[i]; e++) {
            const json_t *v = json_object_get(tp->examples[e].args, t->params->props[i].name);
            if (json_is_string(v) && json_string_length(v) > 0 &&
                !shares_word(tp->examples[e].say, json_string_value(v))) {
                copy[i] = false;
            }
        }
    }
    return copy;
}

/* The rule `copy` a grammar compiled with copy_strings ends with: any string, until a turn's
 * text replaces it. */
static void default_copy_rule(struct strbuf *b, const struct gctx *g) {
    strbuf_printf(b, "copy ::= \"\\\"\" " GRAMMAR_STRING_CHAR "{1,%lld} \"\\\"\"\n",
                  (long long)g->max_string);
}

static void
args_rule(struct gctx *g, const struct pipit_tool *t, const bool *copy, const char *prefix) {
    struct strbuf body = {0};
    g->copy_props = copy;
    if (g->syntax == PIPIT_SYNTAX_HERMES) {
        strbuf_str(&body, "\"{\" ");
        grammar_members_expr(g, &body, t->params, prefix, false, "args");
        strbuf_str(&body, " \"}\"");
    } else {
        strbuf_str(&body, "\"(\" ");
        grammar_members_expr(g, &body, t->params, prefix, true, "args");
        strbuf_str(&body, " \")\"");
    }
    g->copy_props = NULL;
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

static char *compile_call(const struct pipit_toolset *ts, struct gctx *base, bool copy_on) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.bad = NULL;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    strbuf_str(&top, "root ::= ");
    for (size_t i = 0; i < ts->n_tools; i++) {
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "t%zu", i);
        bool *copy = copy_props_of(ts, i, copy_on);
        args_rule(&g, &ts->tools[i], copy, prefix);
        free(copy);
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
    if (g.used_copy) {
        default_copy_rule(&top, &g); /* last, for pipit_grammar_with_copy() */
    }
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

static char *
compile_args(const struct pipit_toolset *ts, size_t ti, struct gctx *base, bool copy_on) {
    struct strbuf rules = {0}, top = {0};
    struct gctx g = *base;
    g.bad = NULL;
    g.rules = &rules;
    enum pipit_call_syntax syntax = g.syntax;
    bool *copy = copy_props_of(ts, ti, copy_on);
    args_rule(&g, &ts->tools[ti], copy, "a");
    free(copy);
    strbuf_str(&top, "root ::= a-args");
    const char *tail = grammar_call_tail(syntax);
    if (tail[0] != '\0') {
        strbuf_str(&top, " ");
        grammar_gbnf_lit(&top, tail);
    }
    strbuf_str(&top, "\n");
    strbuf_add(&top, rules.data != NULL ? rules.data : "", rules.len);
    if (g.used_copy) {
        default_copy_rule(&top, &g);
    }
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
    args_rule(&g, &ts->tools[index], NULL, "a");
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
    g->call = compile_call(ts, &base, p.copy_strings);
    g->names = compile_names(ts, syntax);
    bool ok = g->args != NULL && g->call != NULL && g->names != NULL;
    for (size_t i = 0; ok && i < ts->n_tools; i++) {
        g->args[i] = compile_args(ts, i, &base, p.copy_strings);
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

bool pipit_call_is_none(const struct pipit_toolset *ts, const struct pipit_call *call) {
    return call != NULL && call->args_json != NULL && strcmp(call->name, NONE_NAME) == 0 &&
           strcmp(call->args_json, "{}") == 0 && (ts == NULL || !has_own_none(ts));
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

/* ============================================================================ copy spans */

#define COPY_RUN_WORDS 40  /* words per run of spans: a longer line is cut */
#define COPY_MAX_WORDS 400 /* words in all */

/* Marks that never start (lead) or end (trail) a copied span. */
static bool copy_lead(unsigned char c) {
    return c != '\0' && strchr("\"'`([{<", c) != NULL;
}
static bool copy_trail(unsigned char c) {
    return c != '\0' && strchr(".,!?;:\"'`)]}>", c) != NULL;
}
static bool copy_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Append `s[0..n)` as a GBNF literal of its JSON-escaped text; false when it is not UTF-8. */
static bool copy_lit(struct strbuf *b, const char *s, size_t n) {
    json_t *j = json_stringn(s, n);
    char *q = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (q == NULL) {
        return false;
    }
    size_t len = strlen(q);
    q[len - 1] = '\0'; /* the JSON quotes are the rule's */
    grammar_gbnf_lit(b, q + 1);
    free(q);
    return true;
}

struct copy_word {
    const char *start, *end;
};

/* Words a copied value rarely starts or ends with ("show me photos from Lisbon" copies
 * "Lisbon", not "from"; "find my lease" copies "lease"): English function words and the verbs
 * that introduce a value. A span may still hold them inside ("Bring me the horizon"). */
static const char *const COPY_EDGE_STOP[] = {
    "a",      "an",      "the",      "my",     "your",  "our",    "his",  "her",    "their",
    "its",    "to",      "from",     "for",    "of",    "in",     "on",   "at",     "by",
    "with",   "about",   "into",     "and",    "or",    "me",     "us",   "him",    "them",
    "it",     "that",    "this",     "these",  "those", "please", "pls",  "called", "named",
    "titled", "labeled", "labelled", "saying", "says",  "then",   "now",  "also",   "too",
    "just",   "some",    "show",     "find",   "open",  "text",   "send", "tell",   "set",
    "add",    "make",    "create",   "search", "is",    "are",    "be",   "was",    "so",
    "up",     "i",       "you",      "we",     "can",   "could",  "play", "put",    "throw",
    "start",  "give",    "get",      "take",   "turn",  "switch", "call", "ask",    "let",
    "try",    "read",    "write",    "remind", "book",  "order",  "go",   "bring",  "look",
    "save",   "email",   "message",  "ping",   "note",  "any",    "want", "need",   "like",
    "would",  "will",    "do",       "again",  "there", "here",   "one",
};

/* A word that starts with a capital letter: part of a name ("Miles Davis", "Abbey Road"); "I"
 * and "I'm" are not. */
static bool copy_capital(const struct copy_word *w) {
    bool pronoun = w->start[0] == 'I' && (w->end - w->start == 1 || w->start[1] == '\'');
    return w->start[0] >= 'A' && w->start[0] <= 'Z' && !pronoun; /* not "I", "I'm", "I'll" */
}

static bool copy_edge_ok(const struct copy_word *w) {
    char low[16];
    size_t n = (size_t)(w->end - w->start);
    if (n >= sizeof(low)) {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        char c = w->start[i];
        low[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    low[n] = '\0';
    return !words_in_list(low, COPY_EDGE_STOP, sizeof(COPY_EDGE_STOP) / sizeof(COPY_EDGE_STOP[0]));
}

/* Rules cp<k> for the words of one run: word k and the end of the span (when word k may end
 * one), or word k, the text up to word k+1 and the rule cp<k+1> (when that leads to an end).
 * Appends the run's starts to `alts`: words that may start a span. With `edges` false every
 * word may start and end one. */
static void copy_run(struct strbuf *rules,
                     struct strbuf *alts,
                     const struct copy_word *w,
                     size_t n,
                     size_t *k,
                     bool edges) {
    /* a span neither starts nor ends inside a name: "Davis" alone is not "Miles Davis" */
    bool can_start[COPY_RUN_WORDS] = {false}, can_end[COPY_RUN_WORDS] = {false};
    for (size_t i = 0; i < n; i++) {
        bool cap = copy_capital(&w[i]);
        can_start[i] =
            !edges || (copy_edge_ok(&w[i]) && !(cap && i > 0 && copy_capital(&w[i - 1]) &&
                                                w[i].start - w[i - 1].end == 1));
        can_end[i] =
            !edges || (copy_edge_ok(&w[i]) && !(cap && i + 1 < n && copy_capital(&w[i + 1]) &&
                                                w[i + 1].start - w[i].end == 1));
    }
    bool valid[COPY_RUN_WORDS + 1] = {false};
    for (size_t i = n; i-- > 0;) {
        valid[i] = can_end[i] || (i + 1 < n && valid[i + 1]);
    }
    for (size_t i = 0; i < n; i++) {
        if (!valid[i]) {
            continue;
        }
        size_t id = *k + i;
        bool ok = true;
        bool end_here = can_end[i];
        bool go_on = i + 1 < n && valid[i + 1];
        strbuf_printf(rules, "cp%zu ::= ", id);
        ok = copy_lit(rules, w[i].start, (size_t)(w[i].end - w[i].start));
        if (go_on) {
            strbuf_str(rules, end_here ? " (" : " ");
            ok = ok && copy_lit(rules, w[i].end, (size_t)(w[i + 1].start - w[i].end));
            strbuf_printf(rules, end_here ? " cp%zu)?" : " cp%zu", id + 1);
        }
        strbuf_str(rules, "\n");
        rules->failed = rules->failed || !ok; /* the text is UTF-8: only memory runs out */
        if (can_start[i]) {
            strbuf_printf(alts, "%scp%zu", alts->len > 0 ? " | " : "", id);
        }
    }
    *k += n;
}

/* The rules of the spans of `texts` into `rules`, their starts into `alts`. */
static bool copy_spans(const char *const *texts,
                       size_t n_texts,
                       bool edges,
                       struct strbuf *rules,
                       struct strbuf *alts) {
    struct copy_word *w = malloc(sizeof(*w) * COPY_MAX_WORDS);
    if (w == NULL) {
        return false;
    }
    size_t total = 0, k = 0;
    for (size_t t = 0; t < n_texts && total < COPY_MAX_WORDS; t++) {
        const char *p = texts[t] != NULL ? texts[t] : "";
        if (!utf8_valid(p, strlen(p))) {
            continue; /* every piece cut at ASCII bytes of a UTF-8 text is UTF-8 */
        }
        while (*p != '\0' && total < COPY_MAX_WORDS) {
            size_t n = 0; /* the words of one line, at most one run */
            while (*p != '\0' && *p != '\n' && n < COPY_RUN_WORDS && total + n < COPY_MAX_WORDS) {
                while (*p == ' ' || *p == '\t' || *p == '\r') {
                    p++;
                }
                const char *s = p;
                while (*p != '\0' && !copy_space((unsigned char)*p)) {
                    p++;
                }
                const char *e = p;
                while (s < e && copy_lead((unsigned char)*s)) {
                    s++;
                }
                while (e > s && copy_trail((unsigned char)e[-1])) {
                    e--;
                }
                if (e > s) {
                    w[n++] = (struct copy_word){s, e};
                }
            }
            copy_run(rules, alts, w, n, &k, edges);
            total += n;
            if (*p == '\n') {
                p++;
            }
        }
    }
    free(w);
    return !rules->failed && !alts->failed;
}

enum pipit_status
pipit_grammar_with_copy(const char *gbnf, const char *const *texts, size_t n_texts, char **out) {
    if (out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (gbnf == NULL || (texts == NULL && n_texts > 0)) {
        return PIPIT_ERR_INVALID_ARG;
    }
    const char *at = NULL;
    for (const char *p = gbnf; (p = strstr(p, "copy ::= ")) != NULL; p++) {
        if (p == gbnf || p[-1] == '\n') {
            at = p;
        }
    }
    if (at == NULL) {
        return PIPIT_OK;
    }
    struct strbuf rules = {0}, alts = {0};
    bool ok = copy_spans(texts, n_texts, true, &rules, &alts);
    if (ok && alts.len == 0) { /* nothing but function words: any span */
        strbuf_free(&rules);
        ok = copy_spans(texts, n_texts, false, &rules, &alts);
    }
    if (!ok || alts.len == 0) {
        strbuf_free(&rules);
        strbuf_free(&alts);
        return ok ? PIPIT_OK : PIPIT_ERR_NOMEM;
    }
    struct strbuf b = {0};
    strbuf_add(&b, gbnf, (size_t)(at - gbnf));
    strbuf_printf(&b, "copy ::= \"\\\"\" (%s) \"\\\"\"\n", alts.data);
    strbuf_add(&b, rules.data, rules.len);
    strbuf_free(&rules);
    strbuf_free(&alts);
    if (b.failed) {
        strbuf_free(&b);
        return PIPIT_ERR_NOMEM;
    }
    *out = strbuf_take(&b); /* pipit_free() is free() */
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}
