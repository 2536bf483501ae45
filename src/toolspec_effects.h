/*
 * toolspec_effects.h - the per-tool part of a pack: each tool's effect (read, cloud, or the
 * state keys it sets and steps), its examples, the keys it can change and the undo that
 * follows from them. Checked against the declared state (toolspec_pack.h) and the tool's
 * parameters.
 */
#ifndef PIPIT_TOOLSPEC_EFFECTS_H
#define PIPIT_TOOLSPEC_EFFECTS_H

#include "toolspec.h"
#include "toolspec_parser.h"

#include <jansson.h>
#include <stdbool.h>

/* Per tool of the array `list` at `tools_path` ("$" for a plain array, or "$.tools"): effect,
 * examples, the default undo, and undo keys against the declared state, into ts->tool_pk. */
bool ts_parse_tool_packs(struct ts_parser *P,
                         struct pipit_toolset *ts,
                         const json_t *list,
                         const char *tools_path);

/* Free what one tool's pack part owns and zero it. */
void ts_tool_pack_clear(struct pipit_tool_pack *tp);

#endif /* PIPIT_TOOLSPEC_EFFECTS_H */
