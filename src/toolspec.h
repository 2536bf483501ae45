/*
 * toolspec.h - internal view of a parsed tool specification.
 *
 * The public API (include/pipit.h, "tool specifications") hides these structs
 * behind `struct pipit_toolset`. The grammar compiler, the dispatcher and the
 * renderer use this header instead: the schema tree below is what a GBNF
 * compiler walks, and the jansson nodes let the agent work on arguments
 * directly.
 *
 * Invariants of a loaded toolset (checked by the parser, relied on by users):
 * - 1..PIPIT_TOOLSPEC_MAX_TOOLS tools, names unique and [a-zA-Z_][a-zA-Z0-9_]*.
 * - every tool's `params` is an object schema (possibly without properties);
 *   property names are identifiers, unique, and listed in the JSON order.
 * - schema depth <= PIPIT_TOOLSPEC_MAX_DEPTH (the parameters object is depth 1).
 * - every template has balanced placeholders; failure templates, when any,
 *   include the catch-all code "*".
 * - all strings are NUL-terminated and owned by the toolset; json_t pointers are
 *   borrowed from the toolset's document and live as long as the toolset.
 */
#ifndef PIPIT_TOOLSPEC_H
#define PIPIT_TOOLSPEC_H

#include "pipit.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ============================================================================
 * limits (documented in docs/toolspec.md) */

#define PIPIT_TOOLSPEC_MAX_FILE_BYTES  (1024 * 1024) /* whole specification */
#define PIPIT_TOOLSPEC_MAX_TOOLS       64
#define PIPIT_TOOLSPEC_MAX_PROPERTIES  32   /* per object schema */
#define PIPIT_TOOLSPEC_MAX_DEPTH       8    /* parameters object = 1 */
#define PIPIT_TOOLSPEC_MAX_NAME        64   /* tool, property, code, undo key names (bytes) */
#define PIPIT_TOOLSPEC_MAX_DESCRIPTION 1024 /* bytes */
#define PIPIT_TOOLSPEC_MAX_ENUM        64   /* values per enum */
#define PIPIT_TOOLSPEC_MAX_ENUM_STRING 128  /* bytes per string enum value */
#define PIPIT_TOOLSPEC_MAX_TEMPLATE    512  /* bytes per sentence template */
#define PIPIT_TOOLSPEC_MAX_CODES       32   /* failure templates per tool */
#define PIPIT_TOOLSPEC_MAX_UNDO_KEYS   32

/* ============================================================================
 * schema tree */

enum pipit_schema_type {
    PIPIT_SCHEMA_OBJECT = 0,
    PIPIT_SCHEMA_STRING = 1,
    PIPIT_SCHEMA_NUMBER = 2,
    PIPIT_SCHEMA_INTEGER = 3,
    PIPIT_SCHEMA_BOOLEAN = 4,
    PIPIT_SCHEMA_ARRAY = 5,
};

struct pipit_schema;

struct pipit_schema_prop {
    char *name;                  /* identifier, <= PIPIT_TOOLSPEC_MAX_NAME bytes */
    bool required;               /* listed in the object's "required" */
    struct pipit_schema *schema; /* owned */
};

struct pipit_schema {
    enum pipit_schema_type type;
    const char *description; /* borrowed from the document, NULL when absent */
    const json_t *json;      /* the schema object in the document (borrowed) */

    /* object: properties in document order */
    size_t n_props;
    struct pipit_schema_prop *props;

    /* string enum (n_enum > 0): the allowed values, decoded UTF-8 */
    /* number/integer enum (n_enum > 0): the allowed values; enum_json[i] is the
     * value as written (integer or real node) so a compiler can print it exactly */
    size_t n_enum;
    char **enum_str;          /* string enums only, owned */
    double *enum_num;         /* number/integer enums only, owned */
    const json_t **enum_json; /* every enum kind, borrowed nodes */

    /* string */
    int64_t max_length; /* maximum length in code points, -1 = none */

    /* number / integer */
    bool has_min, has_max;
    double min, max; /* inclusive */

    /* array */
    struct pipit_schema *items; /* owned, never NULL for arrays */
    int64_t max_items;          /* -1 = none */
};

/* ============================================================================
 * tools */

struct pipit_tool_template {
    char *code; /* failure reason code, or "*" for the catch-all */
    char *text; /* the template */
};

struct pipit_tool {
    char *name;
    char *description;
    struct pipit_schema *params; /* object schema, owned */
    const json_t *function;      /* the "function" object (borrowed) */

    char *success; /* NULL: the default success template is used */
    size_t n_failures;
    struct pipit_tool_template *failures; /* in document order */

    enum pipit_undo_kind undo;
    size_t n_undo_keys;
    char **undo_keys;
};

struct pipit_toolset {
    char *name;   /* file name or caller's name used in messages */
    json_t *root; /* the parsed document (owned) */
    size_t n_tools;
    struct pipit_tool *tools;
};

/* The tool at `index`, NULL when out of range. Borrowed. */
const struct pipit_tool *pipit_toolset_tool(const struct pipit_toolset *ts, size_t index);

/* Validate parsed arguments against `tool`'s parameter schema. Problems are
 * written to `problems` (up to `max_problems`, may be NULL with 0); *n_problems
 * receives the number written. Returns PIPIT_OK or PIPIT_ERR_INVALID_ARGS. */
enum pipit_status pipit_tool_check_args(const struct pipit_tool *tool,
                                        const json_t *args,
                                        struct pipit_arg_problem *problems,
                                        size_t max_problems,
                                        size_t *n_problems);

/* The schema type's name as written in JSON Schema ("number", ...). */
const char *pipit_schema_type_name(enum pipit_schema_type type);

#endif /* PIPIT_TOOLSPEC_H */
