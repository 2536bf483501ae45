/*
 * toolspec_keywords.h - the JSON Schema keywords of one schema node, read into a
 * `struct pipit_schema`: which keywords apply to which type, counts and bounded pairs
 * (minLength/maxLength ...), numeric ranges, formats, string keywords, enum/const, and the
 * checks that refuse a node no value (or no value a call can write) satisfies.
 *
 * Nothing here recurses into child schemas: toolspec_schema.c walks the tree and calls these
 * per node. Every reader reports through ts_fail and returns false (or NULL) on error.
 */
#ifndef PIPIT_TOOLSPEC_KEYWORDS_H
#define PIPIT_TOOLSPEC_KEYWORDS_H

#include "toolspec.h"
#include "toolspec_parser.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* A new node of `type` for the schema object `node` (no limits set: max_* = -1). NULL when out
 * of memory (reported). */
struct pipit_schema *
ts_schema_alloc(struct ts_parser *P, enum pipit_schema_type type, const json_t *node);

/* Free a node and everything it owns; NULL is a no-op. */
void ts_schema_free(struct pipit_schema *s);

/* Whether `key` is an annotation (accepted anywhere, no effect on validation) or an "x-"
 * extension. */
bool ts_is_annotation(const char *key);

/* Whether `key` is one of the keywords of schema type `type` ("minLength" for strings ...). */
bool ts_is_keyword_of(enum pipit_schema_type type, const char *key);

/* Refuse every key of `node` that is not an annotation, not a keyword of any type (type, enum,
 * const, nullable) and applies to none of the types in `mask` (bit 1 << type). */
bool ts_check_keywords(struct ts_parser *P, const json_t *node, const char *path, unsigned mask);

/* The optional count keywords `min_key` and `max_key` of `node` ("minItems", "maxItems"): each
 * present one must be a non-negative integer, read into *min / *max (left as they are when
 * absent); then max >= min unless *max is -1 (none). `what` names the value in the message
 * ("array": "... so no array can satisfy the schema"). */
bool ts_get_bounds(struct ts_parser *P,
                   const json_t *node,
                   const char *path,
                   const char *min_key,
                   const char *max_key,
                   const char *what,
                   int64_t *min,
                   int64_t *max);

/* The values of "enum" (or the one of "const") that have the schema's type, into `s`. When
 * `filter` (a member of a type list), values of other types are skipped; otherwise they are an
 * error. n_enum may end 0 only when filtering. */
bool ts_parse_enum(struct ts_parser *P,
                   struct pipit_schema *s,
                   const json_t *node,
                   const char *path,
                   bool filter);

/* minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf and format of a number or
 * integer node. */
bool ts_parse_number_keywords(struct ts_parser *P,
                              struct pipit_schema *s,
                              const json_t *node,
                              const char *path);

/* minLength, maxLength, pattern and format of a string node. */
bool ts_parse_string_keywords(struct ts_parser *P,
                              struct pipit_schema *s,
                              const json_t *node,
                              const char *path);

/* Annotations of `node` that travel with the schema it names (for "$ref", "allOf", a type
 * list's members): the description and the default. */
bool ts_take_annotations(struct ts_parser *P,
                         struct pipit_schema *s,
                         const json_t *node,
                         const char *path);

/* Every enum value must satisfy the rest of its schema: otherwise the value could be generated
 * and then refused, or no value at all could satisfy the schema. */
bool ts_check_enum_values(struct ts_parser *P, const struct pipit_schema *s, const char *path);

/* Refuse a number or integer schema no value satisfies, or none a call can write. */
bool ts_check_satisfiable(struct ts_parser *P, const struct pipit_schema *s, const char *path);

#endif /* PIPIT_TOOLSPEC_KEYWORDS_H */
