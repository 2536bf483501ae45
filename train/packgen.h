/*
 * packgen.h - training data for any pack, from its spec (docs/training.md, "Any pack").
 *
 * The generator reads only the pack: tool names, descriptions and parameter schemas, the
 * declared state and its words, each tool's effect and examples, and the cloud tool. A generic
 * phrase bank (how people word commands, chat, undo, unsupported requests and questions) does
 * the rest. Every example is played on the pack's own simulated device (src/devices/pack.c:
 * the state line) with the agent's own memory (src/memory.c: the CSO lines of earlier turns),
 * so the prompt is the one the agent builds for that pack.
 *
 * Invariants:
 * - Deterministic: the same tool set and params give the same bytes.
 * - Held out by template: template t of an intent with at least four templates is held out
 *   when t % 5 == 3 (as train/datagen.c); the training split never uses a held-out template.
 * - Every call passes the tool's schema, except in category "out_of_range", whose numbers are
 *   outside the schema's range on purpose (the call carries what the person asked; the
 *   harness refuses it with the limit).
 * - No State-Tracker examples (tracker_percent is ignored): the model is trained for one role.
 */
#ifndef PIPIT_TRAIN_PACKGEN_H
#define PIPIT_TRAIN_PACKGEN_H

#include "pipit_tools.h"
#include "toolspec.h"

/* The categories of a pack data set, in the order of their indices. */
extern const char *const packgen_categories[];
extern const int packgen_n_categories;

/* The system text a model for `ts` is trained with: the pack's "system", else its name. NULL
 * for a tool set without a pack. Borrowed from the tool set. */
const char *packgen_system(const struct pipit_toolset *ts);

/* Generate the data set of the pack of `ts`. Errors: PIPIT_ERR_INVALID_ARG (no pack, no
 * declared state, sizes outside 1..10,000,000, a pack with no tool the generator can phrase),
 * PIPIT_ERR_NOMEM. */
enum pipit_status packgen_generate(const struct pipit_toolset *ts,
                                   const struct pipit_datagen_params *params,
                                   struct pipit_dataset **out,
                                   struct pipit_error *err);

#endif /* PIPIT_TRAIN_PACKGEN_H */
