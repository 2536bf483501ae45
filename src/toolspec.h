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
 * - 1..PIPIT_TOOLSPEC_MAX_TOOLS tools, names unique and [a-zA-Z0-9_.-]{1,64}.
 * - every tool's `params` is an object schema (possibly without properties);
 *   property names are any non-empty JSON strings (no NUL), unique, in the JSON order.
 * - schema depth <= PIPIT_TOOLSPEC_MAX_DEPTH (the parameters object is depth 1); local
 *   "$ref"s are expanded inline (every node is its own copy), so the tree has no cycles
 *   and at most PIPIT_TOOLSPEC_MAX_NODES nodes per tool.
 * - every enum value validates against the rest of its schema.
 * - every template has balanced placeholders; failure templates, when any,
 *   include the catch-all code "*".
 * - all strings are NUL-terminated and owned by the toolset; json_t pointers are
 *   borrowed from the toolset's document and live as long as the toolset.
 */
#ifndef PIPIT_TOOLSPEC_H
#define PIPIT_TOOLSPEC_H

#include "device.h"
#include "pipit.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ============================================================================
 * limits (documented in docs/toolspec.md) */

#define PIPIT_TOOLSPEC_MAX_FILE_BYTES  (1024 * 1024) /* whole specification */
#define PIPIT_TOOLSPEC_MAX_TOOLS       64
#define PIPIT_TOOLSPEC_MAX_PROPERTIES  128  /* per object schema */
#define PIPIT_TOOLSPEC_MAX_DEPTH       16   /* parameters object = 1 */
#define PIPIT_TOOLSPEC_MAX_NAME        64   /* tool, property, code, undo key names (bytes) */
#define PIPIT_TOOLSPEC_MAX_DESCRIPTION 4096 /* bytes */
#define PIPIT_TOOLSPEC_MAX_PROP_NAME   128  /* property names (bytes) */
#define PIPIT_TOOLSPEC_MAX_NODES       4096 /* schema nodes per tool, after $ref expansion */
#define PIPIT_TOOLSPEC_MAX_ALTS        16   /* anyOf / oneOf / type-list alternatives */
#define PIPIT_TOOLSPEC_MAX_PATTERN     256  /* bytes per "pattern" */
#define PIPIT_TOOLSPEC_MAX_ENUM        256  /* values per enum */
#define PIPIT_TOOLSPEC_MAX_ENUM_STRING 256  /* bytes per string enum value */
#define PIPIT_TOOLSPEC_MAX_TEMPLATE    512  /* bytes per sentence template */
#define PIPIT_TOOLSPEC_MAX_CODES       32   /* failure templates per tool */
#define PIPIT_TOOLSPEC_MAX_UNDO_KEYS   32
#define PIPIT_PACK_MAX_KEYS            64  /* declared state keys */
#define PIPIT_PACK_MAX_KEY_NAME        48  /* bytes: "<key>_out_of_range" fits a reason code */
#define PIPIT_PACK_MAX_EXAMPLES        32  /* per tool */
#define PIPIT_PACK_MAX_ROUTER_WORDS    128 /* router verbs, and nouns */
#define PIPIT_PACK_MAX_EFFECT_SETS     16  /* keys one "set" effect writes */

/* ============================================================================
 * schema tree */

enum pipit_schema_type {
    PIPIT_SCHEMA_OBJECT = 0,
    PIPIT_SCHEMA_STRING = 1,
    PIPIT_SCHEMA_NUMBER = 2,
    PIPIT_SCHEMA_INTEGER = 3,
    PIPIT_SCHEMA_BOOLEAN = 4,
    PIPIT_SCHEMA_ARRAY = 5,
    PIPIT_SCHEMA_NULL = 6,
    PIPIT_SCHEMA_ANY = 7,   /* no type: any JSON value (an enum, when n_enum > 0) */
    PIPIT_SCHEMA_UNION = 8, /* anyOf / oneOf / a type list: one of `alts` */
};

/* "format" of a string (checked by validation, shaped by the grammar) or a number. */
enum pipit_schema_format {
    PIPIT_FORMAT_NONE = 0,
    PIPIT_FORMAT_DATE,      /* RFC 3339 full-date 2024-02-29 */
    PIPIT_FORMAT_TIME,      /* RFC 3339 full-time 13:45:00Z, 13:45:00.5+02:00 */
    PIPIT_FORMAT_DATE_TIME, /* date "T" time */
    PIPIT_FORMAT_EMAIL,     /* local@domain.example */
    PIPIT_FORMAT_URI,       /* scheme:rest, no spaces */
    PIPIT_FORMAT_UUID,      /* 8-4-4-4-12 hex digits */
    PIPIT_FORMAT_INT32,     /* an integer in -2^31..2^31-1 */
    PIPIT_FORMAT_OTHER,     /* any other name: an annotation, listed by `tools check` */
};

struct pipit_schema;

struct pipit_schema_prop {
    char *name;                  /* any JSON string, <= PIPIT_TOOLSPEC_MAX_PROP_NAME bytes */
    bool required;               /* listed in the object's "required" */
    struct pipit_schema *schema; /* owned */
};

struct pipit_schema {
    enum pipit_schema_type type;
    const char *description;     /* borrowed from the document, NULL when absent */
    const json_t *json;          /* the schema object in the document (borrowed; for a "$ref",
                                    the referenced one) */
    const json_t *default_value; /* "default" (borrowed, NULL when absent): what an omitted
                                    optional argument means; recorded, not validated */
    enum pipit_schema_format format;
    const char *format_name; /* "format" as written (borrowed), NULL when absent */

    /* object: properties in document order */
    size_t n_props;
    struct pipit_schema_prop *props;

    /* enum / const (n_enum > 0): enum_json[i] are the values as written (borrowed) for every
     * type, so a compiler can print them exactly. In addition: string enum: enum_str, the
     * decoded UTF-8 values; number/integer enum: enum_num, the values as doubles. */
    size_t n_enum;
    char **enum_str;          /* string enums only, owned */
    double *enum_num;         /* number/integer enums only, owned */
    const json_t **enum_json; /* every enum kind, borrowed nodes */

    /* string */
    int64_t min_length;  /* minimum length in code points, 0 = none */
    int64_t max_length;  /* maximum length in code points, -1 = none */
    const char *pattern; /* "pattern" (borrowed), NULL when absent */

    /* number / integer */
    bool has_min, has_max;
    double min, max; /* inclusive */
    bool has_xmin, has_xmax;
    double xmin, xmax;  /* exclusive ("exclusiveMinimum"/"exclusiveMaximum") */
    double multiple_of; /* "multipleOf", 0 = none */

    /* array */
    struct pipit_schema *items; /* owned, never NULL for arrays */
    int64_t min_items;          /* 0 = none */
    int64_t max_items;          /* -1 = none */
    bool unique_items;

    /* object: "additionalProperties" as a schema (owned; ANY for `true`); NULL = no keys
     * beyond `props` (absent or false: pipit rejects unknown arguments) */
    struct pipit_schema *additional;
    int64_t min_props; /* "minProperties", 0 = none */
    int64_t max_props; /* "maxProperties", -1 = none */

    /* union: the alternatives (owned, 2..PIPIT_TOOLSPEC_MAX_ALTS, none a union); one_of: exactly
     * one may match ("oneOf"), else at least one ("anyOf", a type list) */
    size_t n_alts;
    struct pipit_schema **alts;
    bool one_of;
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
    const json_t *function;      /* the "function" object (borrowed; for an MCP tool, the
                                    equivalent {name, description, parameters}, owned below) */
    json_t *own_function;        /* owned, NULL unless the entry is an MCP tool */

    char *success; /* NULL: the default success template is used */
    size_t n_failures;
    struct pipit_tool_template *failures; /* in document order */

    enum pipit_undo_kind undo;
    size_t n_undo_keys;
    char **undo_keys;
};

/* ============================================================================
 * packs (docs/toolspec.md, "Packs"): the set-level "pipit" block and the per-tool effect and
 * examples of a tool-set file written as {"tools": [...], "pipit": {...}}.
 *
 * Every string below is borrowed from the toolset's document (or owned by the toolset) and
 * lives as long as the toolset. A loaded pack keeps these invariants:
 * - state keys are identifiers of 1..PIPIT_PACK_MAX_KEY_NAME bytes, unique, in document order;
 * - every key's `initial` has the key's type and lies inside its range or enum;
 * - every effect names declared keys only, and every value it can write has the key's type
 *   (ranges are checked when the call runs: an argument may lie outside a key's range);
 * - every example's args pass the tool's schema. */

/* One declared state key. type is BOOLEAN, INTEGER, NUMBER, STRING, or ARRAY (of strings). */
struct pipit_pack_key {
    const char *key;
    enum pipit_schema_type type;
    const json_t *initial; /* borrowed, valid for the key */
    bool has_min, has_max; /* numbers: inclusive range */
    double min, max;
    size_t n_enum;                 /* strings (or array items): the allowed values, 0 = any */
    const char **enum_str;         /* owned array of borrowed strings */
    const char *show;              /* label in the state line; NULL: the key is not shown */
    struct device_key_words words; /* words.key == key; other fields NULL when not declared */
};

struct pipit_pack {
    const char *name;   /* "pack": the name a scenario's "device" uses */
    const char *system; /* one-line system text, NULL when not declared */
    size_t n_keys;
    struct pipit_pack_key *keys; /* in declared order (owned) */
    size_t n_verbs, n_nouns;
    const char **verbs; /* router verbs (owned array of borrowed strings) */
    const char **nouns; /* router nouns */
};

enum pipit_effect_kind {
    PIPIT_EFFECT_NONE = 0,   /* no effect declared: an action without state (take_photo) */
    PIPIT_EFFECT_READ = 1,   /* "read": a query, changes nothing */
    PIPIT_EFFECT_CLOUD = 2,  /* "cloud": delegation to the cloud model */
    PIPIT_EFFECT_CHANGE = 3, /* {"set": ..., "step": ...}: writes state keys */
};

/* Where an effect's value comes from: an argument, an argument mapped through a table, or a
 * constant. An absent optional argument writes nothing. */
struct pipit_effect_value {
    const char *arg;        /* argument name; NULL for a constant */
    const json_t *map;      /* object: argument value -> value; NULL: the argument's value */
    const json_t *constant; /* arg == NULL: the value */
};

/* A key an effect writes: "living_light", or "{room}_light" where `room` is a string-enum
 * argument (one placeholder at most); every expansion is a declared key. */
struct pipit_effect_key {
    const char *key;     /* as written */
    const char *key_arg; /* the placeholder's argument, NULL when the key is fixed */
    size_t prefix_len;   /* bytes before the placeholder */
    const char *suffix;  /* the text after the placeholder ("_light") */
};

struct pipit_effect_set {
    struct pipit_effect_key key;
    struct pipit_effect_value value;
};

struct pipit_effect_step {
    struct pipit_effect_key key;
    struct pipit_effect_value by;   /* a number */
    struct pipit_effect_value sign; /* a number multiplying `by`; constant 1 when not declared */
};

struct pipit_pack_example {
    const char *say;    /* the utterance */
    const json_t *args; /* an object that passes the tool's schema (borrowed) */
};

struct pipit_tool_pack {
    enum pipit_effect_kind effect;
    size_t n_set;
    struct pipit_effect_set *set; /* owned */
    bool has_step;
    struct pipit_effect_step step;
    size_t n_examples;
    struct pipit_pack_example *examples; /* owned */
    size_t n_changes;
    const char **changes; /* every declared key the effect can write, in declared order */
};

struct pipit_toolset {
    char *name;      /* file name or caller's name used in messages */
    json_t *root;    /* the parsed document (owned) */
    json_t *derived; /* schema objects made by merging allOf parts (owned), NULL when none */
    size_t n_tools;
    struct pipit_tool *tools;
    struct pipit_pack *pack;         /* NULL: a plain array, or an object without "pipit" */
    struct pipit_tool_pack *tool_pk; /* n_tools entries, NULL for a plain array */
};

/* The set's pack block, NULL for a plain array (or an object form without "pipit"). */
const struct pipit_pack *pipit_toolset_pack(const struct pipit_toolset *ts);

/* The declared key `key`, NULL when the pack (or the key) is absent. */
const struct pipit_pack_key *pipit_pack_find_key(const struct pipit_pack *pack, const char *key);

/* The effect and examples of the tool at `index`; NULL out of range or for a plain array. */
const struct pipit_tool_pack *pipit_toolset_tool_pack(const struct pipit_toolset *ts, size_t index);

/* Whether `v` is a valid value for `k` (type, range, enum). On false, `why` (may be NULL)
 * receives a short reason naming the value and the domain ("35 is outside 10..30"). */
bool pipit_pack_key_check(const struct pipit_pack_key *k, const json_t *v, char *why, size_t size);

/* Whether the tool at `index` delegates to the cloud: effect "cloud", or the reserved name
 * process_with_cloud_llm. */
bool pipit_toolset_is_cloud(const struct pipit_toolset *ts, size_t index);

/* Whether `tool` is an index of one of the pack's own tools: in range (so not the built-in undo
 * after them) and not the cloud tool. What most rules that read words into a call start with. */
bool pipit_toolset_is_pack_tool(const struct pipit_toolset *ts, int32_t tool);

/* The tool at `index`, NULL when out of range. Borrowed. */
const struct pipit_tool *pipit_toolset_tool(const struct pipit_toolset *ts, size_t index);

/* Tool `t`'s required arguments: how many in *n_required (may be NULL), and the one when there
 * is exactly one, else NULL. Borrowed. */
const struct pipit_schema_prop *pipit_tool_only_required(const struct pipit_tool *t,
                                                         size_t *n_required);

/* Validate parsed arguments against `tool`'s parameter schema. Problems are
 * written to `problems` (up to `max_problems`, may be NULL with 0); *n_problems
 * receives the number written. Returns PIPIT_OK or PIPIT_ERR_INVALID_ARGS. */
enum pipit_status pipit_tool_check_args(const struct pipit_tool *tool,
                                        const json_t *args,
                                        struct pipit_arg_problem *problems,
                                        size_t max_problems,
                                        size_t *n_problems);

/* Validate one value against a schema node ("args" paths as pipit_tool_check_args). */
enum pipit_status pipit_schema_check(const struct pipit_schema *s,
                                     const json_t *value,
                                     const char *path,
                                     struct pipit_arg_problem *problems,
                                     size_t max_problems,
                                     size_t *n_problems);

/* A new object: `args` with the "default" of every omitted top-level argument filled in
 * (what an omitted optional argument means), or a new reference to `args` when none is
 * omitted. NULL when out of memory. */
json_t *pipit_tool_args_with_defaults(const struct pipit_tool *tool, const json_t *args);

/* Whether a string matches the "format" `f` (PIPIT_FORMAT_NONE/OTHER: always). */
bool pipit_format_check(enum pipit_schema_format f, const char *s);

/* Whether `s` is a time of day: a string, no enum, whose description says "HH:MM" or whose
 * pattern is two digits, a colon and two digits ("^\\d{2}:\\d{2}$"). */
bool pipit_schema_time_of_day(const struct pipit_schema *s);

/* Whether `s` is a string the person's words fill: no enum, pattern or format, and no time of
 * day (a name, a place, a message). */
bool pipit_schema_free_string(const struct pipit_schema *s);

/* The words a string enum's description gives value `value`, in parentheses right after it
 * ("standard (normal), economy (eco, saver), sleep": "eco" and "saver" of "economy"; docs/pack.md):
 * at most `max` of them into out (lowercase as written, trimmed; each under
 * PIPIT_SCHEMA_WORD_CAP bytes, longer ones left out). Returns how many. */
#define PIPIT_SCHEMA_WORD_CAP 48
int pipit_schema_value_words(const struct pipit_schema *s,
                             const char *value,
                             char (*out)[PIPIT_SCHEMA_WORD_CAP],
                             int max);

/* The schema type's name as written in JSON Schema ("number", ...). */
const char *pipit_schema_type_name(enum pipit_schema_type type);

#endif /* PIPIT_TOOLSPEC_H */
