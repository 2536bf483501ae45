/*
 * toolspec_pack.h - the set-level "pipit" block of a pack (docs/toolspec.md, "Packs"): its
 * name and system line, the declared state keys with their types, ranges, enums, labels and
 * words, and the router's verbs and nouns. Reading a value against a key
 * (pipit_pack_key_check) and finding a key (pipit_pack_find_key) are in toolspec.h.
 */
#ifndef PIPIT_TOOLSPEC_PACK_H
#define PIPIT_TOOLSPEC_PACK_H

#include "toolspec.h"
#include "toolspec_parser.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Read the block `pip` at `path` ("$.pipit") into ts->pack (set even on error, for
 * ts_pack_free). */
bool ts_parse_pack(struct ts_parser *P,
                   struct pipit_toolset *ts,
                   const json_t *pip,
                   const char *path);

/* Free a pack block; NULL is a no-op. */
void ts_pack_free(struct pipit_pack *pk);

/* A key type as messages name it ("array of strings" for ARRAY). */
const char *ts_pack_type_name(enum pipit_schema_type t);

/* Whether `s` is one of the `n` strings of `list`. */
bool ts_string_in(const char *const *list, size_t n, const char *s);

#endif /* PIPIT_TOOLSPEC_PACK_H */
