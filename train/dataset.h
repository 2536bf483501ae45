/*
 * dataset.h - the data set layout shared by the training modules (train/): generators append
 * examples, the vocabulary builder, the trainer, the evaluation and the overlap index read them.
 * The public accessors (pipit_dataset_size/get/free) are declared in include/pipit.h.
 */
#ifndef PIPIT_TRAIN_DATASET_H
#define PIPIT_TRAIN_DATASET_H

#include "pipit_tools.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One stored example: its four strings live in the data set's string arena. */
struct ds_example {
    uint32_t memory, state, utterance, output; /* offsets into pipit_dataset.arena */
    uint32_t system;                           /* ... or DS_NO_SYSTEM: the caller's */
    uint16_t category;                         /* index into the category table */
    bool tracker;                              /* a State-Tracker example (docs/memory.md) */
    int32_t template_id;
};

struct pipit_dataset {
    struct ds_example *ex[2]; /* by enum pipit_split */
    int32_t n[2];
    char *arena; /* NUL-terminated strings */
    size_t arena_len, arena_cap;
    const char *const *categories; /* names by ds_example.category (set by the generator) */
    int n_categories;
};

#define DS_NO_SYSTEM UINT32_MAX

/* Append an example to `split` (the caller grew ds->ex[split] to hold it); false when out of
 * memory. The strings are copied into the arena. Used by the pack generator (train/packgen.c). */
bool datagen_append(struct pipit_dataset *ds,
                    enum pipit_split split,
                    const char *memory,
                    const char *state,
                    const char *utterance,
                    const char *output,
                    int category,
                    int32_t template_id,
                    bool tracker);

#endif /* PIPIT_TRAIN_DATASET_H */
