/*
 * dataset.c - a generated data set: examples whose strings live in one arena (dataset.h).
 * A leaf of the training modules: the generators write through it, the readers (vocabulary,
 * trainer, evaluation, overlap) read through it, and it calls none of them.
 */
#include "dataset.h"

#include "status.h"

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
    ex->system = e->system != DS_NO_SYSTEM ? ds->arena + e->system : NULL;
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
    e->system = DS_NO_SYSTEM;
    if (!arena_add(ds, memory, &e->memory) || !arena_add(ds, state, &e->state) ||
        !arena_add(ds, utterance, &e->utterance) || !arena_add(ds, output, &e->output)) {
        return false;
    }
    ds->n[split]++;
    return true;
}

enum pipit_status pipit_dataset_append(struct pipit_dataset *dst,
                                       const struct pipit_dataset *src,
                                       const char *system,
                                       struct pipit_error *err) {
    pipit_error_clear(err);
    if (dst == NULL || src == NULL || system == NULL || dst == src ||
        dst->categories != src->categories) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "dataset: append needs two data sets of the same generator and a "
                               "system text");
    }
    uint32_t sys = 0;
    if (!arena_add(dst, system, &sys)) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "dataset: out of memory");
    }
    for (int split = 0; split < 2; split++) {
        const int32_t n_dst = dst->n[split], n_src = src->n[split];
        struct ds_example *merged = malloc(sizeof(*merged) * (size_t)(n_dst + n_src + 1));
        if (merged == NULL) {
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "dataset: out of memory");
        }
        /* interleaved in proportion, so any prefix of the result (the examples a vocabulary or
         * an evaluation reads first) holds every pack's share */
        int32_t a = 0, b = 0, k = 0;
        while (a < n_dst || b < n_src) {
            bool take_src = a >= n_dst || (b < n_src && (int64_t)b * n_dst < (int64_t)a * n_src);
            if (!take_src) {
                merged[k++] = dst->ex[split][a++];
                continue;
            }
            const struct ds_example *e = &src->ex[split][b++];
            struct ds_example *o = &merged[k++];
            *o = *e;
            /* the strings move into dst's arena; the source's own system, when it has one,
             * stays */
            o->system = sys;
            if (!arena_add(dst, src->arena + e->memory, &o->memory) ||
                !arena_add(dst, src->arena + e->state, &o->state) ||
                !arena_add(dst, src->arena + e->utterance, &o->utterance) ||
                !arena_add(dst, src->arena + e->output, &o->output) ||
                (e->system != DS_NO_SYSTEM &&
                 !arena_add(dst, src->arena + e->system, &o->system))) {
                free(merged);
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "dataset: out of memory");
            }
        }
        free(dst->ex[split]);
        dst->ex[split] = merged;
        dst->n[split] = k;
    }
    return PIPIT_OK;
}

enum pipit_status
pipit_dataset_set_system(struct pipit_dataset *ds, const char *system, struct pipit_error *err) {
    pipit_error_clear(err);
    if (ds == NULL || system == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "dataset: NULL argument");
    }
    uint32_t sys = 0;
    if (!arena_add(ds, system, &sys)) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "dataset: out of memory");
    }
    for (int split = 0; split < 2; split++) {
        for (int32_t i = 0; i < ds->n[split]; i++) {
            if (ds->ex[split][i].system == DS_NO_SYSTEM) {
                ds->ex[split][i].system = sys;
            }
        }
    }
    return PIPIT_OK;
}
