/*
 * datagen.h - internals shared by the training modules (train/): the data set layout and a
 * seeded RNG.
 *
 * The public functions (pipit_datagen_camera, pipit_dataset_*, pipit_train_prompt) are declared
 * in include/pipit.h; this header lets vocab.c, trainer.c and evaluate.c walk a data set, and the
 * pack generator (packgen.c) share the RNG, the split seeds and the surface noise.
 */
#ifndef PIPIT_TRAIN_DATAGEN_H
#define PIPIT_TRAIN_DATAGEN_H

#include "dataset.h"
#include "pipit_tools.h"
#include "rng.h"

#include <stdbool.h>
#include <stdint.h>

/* Category names, indexed by ds_example.category. */
extern const char *const datagen_categories[];
extern const int datagen_n_categories;

/* `memory` without its first `drop` lines (the agent trims the oldest lines first when a prompt
 * would not fit the trained length; docs/training.md). */
const char *datagen_memory_skip(const char *memory, int drop);
/* The number of lines of `memory`. */
int datagen_memory_lines(const char *memory);

/* Surface noise shared by the generators (train/datagen.c, train/packgen.c). */

/* One typo in one word of at least four letters of `text`: swap, drop or double the letter at
 * offset 1..min(length - 2, max_offset) of a word drawn from `rng`. Doubling needs one byte of
 * room after the NUL. */
void train_add_typo(uint64_t *rng, char *text, uint32_t max_offset);

/* A letter case drawn from `rng` out of 20: below `lower` unchanged (lowercase), below `first`
 * the first letter capitalized, below `upper` all capitals, otherwise Title Case. */
void train_apply_case(uint64_t *rng, char *text, uint32_t lower, uint32_t first, uint32_t upper);

#endif /* PIPIT_TRAIN_DATAGEN_H */
