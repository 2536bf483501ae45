/*
 * toolspec_json.h - small JSON helpers shared by the tool-specification modules: JSON paths as
 * messages print them, the JSON kind a user reads, numbers printed back exactly, JSON Schema
 * equality and type tests.
 *
 * Every function is pure (no state, no allocation except ts_dup_str).
 */
#ifndef PIPIT_TOOLSPEC_JSON_H
#define PIPIT_TOOLSPEC_JSON_H

#include "toolspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define TS_PATH_CAP 512 /* bytes of a JSON path in messages ("$.tools[0].function.name") */

/* A malloc'd copy of `s`, NULL when out of memory. */
char *ts_dup_str(const char *s);

/* Whether `s` matches [a-zA-Z_][a-zA-Z0-9_]* (false for NULL or ""). */
bool ts_is_identifier(const char *s);

/* JSON type name as a user reads it: integers and reals are both "number". */
const char *ts_json_kind(const json_t *v);

/* Shortest "%g" text that reads back as exactly `v` (integers print without a fraction). */
void ts_format_number(char *buf, size_t size, double v);

/* A JSON number as written: integers exactly, reals as ts_format_number. */
void ts_format_json_number(char *buf, size_t size, const json_t *v);

/* Append a key to a JSON path: ".key" for identifiers, ["key"] otherwise. The error locator
 * and every checker build paths with this, so they compare equal. */
void ts_path_key(char *out, size_t cap, const char *base, const char *key);

/* Append an array index to a JSON path: "base[index]". */
void ts_path_index(char *out, size_t cap, const char *base, size_t index);

/* Whether `v` is an integer the validator holds exactly (|v| <= 2^53). */
bool ts_is_integral(double v);

/* Whether `v` has the JSON type of schema type `t` (ANY and UNION: every value). */
bool ts_value_has_type(enum pipit_schema_type t, const json_t *v);

/* JSON Schema equality: numbers by value (1 == 1.0), the rest structurally. */
bool ts_json_same(const json_t *a, const json_t *b);

/* The value of the hex digit `c` (0..15), -1 when it is none. */
int ts_hexval(char c);

#endif /* PIPIT_TOOLSPEC_JSON_H */
