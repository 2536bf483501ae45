/*
 * toolspec_parser.h - the state of one tool-set load and its error reporting.
 *
 * jansson does not remember where a value came from, so when a check fails, a small scanner
 * walks the original text again, rebuilding JSON paths as it goes (with ts_path_key and
 * ts_path_index), and stops at the value (or key) whose path is the one reported: errors carry
 * file:line:column and the JSON path. The scanner only runs on error and only over text jansson
 * has already accepted.
 *
 * Invariant: the first failure wins. Once `status` is not PIPIT_OK, later ts_fail/ts_nomem
 * calls change nothing, so callers may simply return false up the stack.
 */
#ifndef PIPIT_TOOLSPEC_PARSER_H
#define PIPIT_TOOLSPEC_PARSER_H

#include "status.h"
#include "toolspec.h"
#include "toolspec_json.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define TS_PARSER_MAX_REFS 32 /* references expanded inside each other */

struct ts_parser {
    const char *name; /* file name for messages */
    const char *text;
    size_t len;
    struct pipit_error *err;
    enum pipit_status status; /* first failure, PIPIT_OK while none */
    /* the schema being parsed: "$ref" targets are looked up in doc_root (the tool's
     * parameters), whose path is doc_path; the references being expanded; nodes made */
    const json_t *doc_root;
    char doc_path[TS_PATH_CAP];
    const json_t *ref_stack[TS_PARSER_MAX_REFS];
    const char *ref_name[TS_PARSER_MAX_REFS];
    int ref_depth[TS_PARSER_MAX_REFS];
    int n_refs;
    size_t n_nodes;
    json_t *derived; /* schema objects pipit made (merges), handed to the toolset */
};

/* Report a content error at `path` (the key when at_key, else the value): PIPIT_ERR_SPEC with
 * "<name>:<line>:<column>: <path>: <what>" in P->err. Keeps the first error. */
void ts_fail(struct ts_parser *P, const char *path, bool at_key, const char *fmt, ...)
    PIPIT_PRINTF(4, 5);

/* Report running out of memory (keeps the first error). */
void ts_nomem(struct ts_parser *P);

/* The string member `key` of `obj` (at `path`): NULL when absent (reported if `required`) or
 * on error (not a string, over `max_bytes`, empty when `non_empty`, holding a NUL). */
const char *ts_get_string(struct ts_parser *P,
                          const json_t *obj,
                          const char *key,
                          const char *path,
                          bool required,
                          size_t max_bytes,
                          bool non_empty);

/* Refuse the first key of `obj` not in `allowed` (NULL-terminated); `what` names the object
 * in the message. */
bool ts_only_keys(struct ts_parser *P,
                  const json_t *obj,
                  const char *path,
                  const char *const *allowed,
                  const char *what);

#endif /* PIPIT_TOOLSPEC_PARSER_H */
