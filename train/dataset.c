/*
 * dataset.c - a generated data set: examples whose strings live in one arena (dataset.h).
 * A leaf of the training modules: the generators write through it, the readers (vocabulary,
 * trainer, evaluation, overlap) read through it, and it calls none of them.
 */
#include "dataset.h"

#include <stdlib.h>
#include <string.h>

static bool arena_add(struct pipit_dataset *ds, const char *s, uint32_t *off) {
    size_t n = strlen(s) + 1;
    if (ds->arena_len + n > ds->arena_cap) {
        size_t cap = ds->arena_cap > 0 ? ds->arena_cap * 2 : (size_t)1 << 20;
        while (ds->arena_len + n > cap) {
            cap *= 2;
        }
        if (cap > UINT32_MAX) {
            return false;
        }
        char *a = realloc(ds->arena, cap);
        if (a == NULL) {
            return false;
        }
        ds->arena = a;
        ds->arena_cap = cap;
    }
    memcpy(ds->arena + ds->arena_len, s, n);
    *off = (uint32_t)ds->arena_len;
    ds->arena_len += n;
    return true;
}

void pipit_dataset_free(struct pipit_dataset *ds) {
    if (ds == NULL) {
        return;
    }
    free(ds->ex[0]);
    free(ds->ex[1]);
    free(ds->arena);
    free(ds);
}

int32_t pipit_dataset_size(const struct pipit_dataset *ds, enum pipit_split split) {
    if (ds == NULL || (split != PIPIT_SPLIT_TRAIN && split != PIPIT_SPLIT_VALID)) {
        return 0;
    }
    return ds->n[split];
}

bool pipit_dataset_get(const struct pipit_dataset *ds,
                       enum pipit_split split,
                       int32_t i,
                       struct pipit_example *ex) {
    if (ds == NULL || ex == NULL || (split != PIPIT_SPLIT_TRAIN && split != PIPIT_SPLIT_VALID) ||
        i < 0 || i >= ds->n[split]) {
        return false;
    }
    const struct ds_example *e = &ds->ex[split][i];
    ex->memory = ds->arena + e->memory;
    ex->state = ds->arena + e->state;
    ex->utterance = ds->arena + e->utterance;
    ex->output = ds->arena + e->output;
    ex->category = ds->categories[e->category];
    ex->template_id = e->template_id;
    ex->tracker = e->tracker;
    return true;
}

bool datagen_append(struct pipit_dataset *ds,
                    enum pipit_split split,
                    const char *memory,
                    const char *state,
                    const char *utterance,
                    const char *output,
                    int category,
                    int32_t template_id,
                    bool tracker) {
    struct ds_example *e = &ds->ex[split][ds->n[split]];
    e->category = (uint16_t)category;
    e->template_id = template_id;
    e->tracker = tracker;
    if (!arena_add(ds, memory, &e->memory) || !arena_add(ds, state, &e->state) ||
        !arena_add(ds, utterance, &e->utterance) || !arena_add(ds, output, &e->output)) {
        return false;
    }
    ds->n[split]++;
    return true;
}
