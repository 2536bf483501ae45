/*
 * grammar_value.h - a JSON Schema value as GBNF rules (grammar_value.c).
 */
#ifndef PIPIT_GRAMMAR_VALUE_H
#define PIPIT_GRAMMAR_VALUE_H

#include "pipit.h"
#include "strbuf.h"
#include "toolspec.h"

#include <stdbool.h>
#include <stdint.h>

/* A JSON string's character in the grammar's alphabet: no escapes, no control characters. */
#define GRAMMAR_STRING_CHAR "[^\"\\\\\\x00-\\x1f]"

/* One compile's context: where the rules go, the limits, the enforcement report. */
struct gctx {
    struct strbuf *rules; /* extra rule definitions */
    enum pipit_call_syntax syntax;
    int64_t max_string;     /* characters */
    int64_t max_items;      /* for arrays without maxItems */
    struct strbuf *report;  /* NULL, or where grammar_describe() writes what is enforced where */
    bool exact;             /* ranges and numeric enums compiled in (exact_values) */
    char *bad;              /* first value no call can write (its path and why), owned */
    const bool *copy_props; /* the object's members whose free strings are `copy` (top level of
                               a tool's arguments only), NULL: none */
    bool copy_now;          /* the value being compiled is such a member's */
    bool used_copy;         /* some value refers to the rule `copy` */
};

/* Append a GBNF literal for `s`. */
/* Append `s` as a GBNF string literal (quoted, escaped). */
void grammar_gbnf_lit(struct strbuf *b, const char *s);

/* Members of an object schema, in order, optional ones skippable, then (additionalProperties)
 * up to max_items extra members with any key. Emits rules <prefix>-m<i>-f (first member
 * position) and -n (later), <prefix>-x-f/-n for the extra members. */
/* Append the members of object schema `s`, in order, optional ones skippable, then up to
 * max_items extra members when additionalProperties allows; the rules they need go to g->rules
 * under `prefix`. `top_level_pipit`: pipit's name=value syntax, else JSON. `path` names the
 * object in the report and in g->bad. */
void grammar_members_expr(struct gctx *g,
                          struct strbuf *b,
                          const struct pipit_schema *s,
                          const char *prefix,
                          bool top_level_pipit,
                          const char *path);

#endif /* PIPIT_GRAMMAR_VALUE_H */
