/*
 * fastgrammar.c - the fast decoder's public handle (fastgrammar.h, docs/fastgrammar.md): one
 * model's vocabulary index, the automata of the grammars met so far (compiled once, by text),
 * the on-disk cache directory and the samplers' scratch.
 */
#define _POSIX_C_SOURCE 200809L
#include "fastgrammar.h"

#include "fg_automaton.h"
#include "fg_cache.h"
#include "fg_grow.h"
#include "fg_index.h"
#include "log.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FG_MAX_GRAMMARS 512

struct fg_entry {
    uint64_t hash;
    char *gbnf;
    struct fg_automaton *a; /* NULL: outside the subset */
    uint64_t disk_key;      /* fg_automaton_key(), 0 when the on-disk cache is off */
    bool from_disk;         /* its states came from the on-disk cache */
    bool transient;         /* a grammar for one step (fg_lookup) */
};

struct pipit_fastgrammar {
    const void *owner; /* the model the vocabulary came from (compared, never used) */
    struct fg_index *ix;
    struct fg_entry *entries;
    size_t n_entries, cap_entries;
    double t_index_ms, t_compile_ms;
    bool index_cached; /* the trie came from the on-disk cache */
    char *cache_dir;   /* the on-disk cache directory, NULL when off */
    int32_t *scratch;  /* fg_scratch() */
    uint32_t *stamp;
    uint32_t stamp_gen;
};

static uint64_t hash_text(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return h;
}

enum pipit_status fg_decoder_new(struct fg_vocab *v,
                                 const void *owner,
                                 double t0,
                                 struct pipit_fastgrammar **out,
                                 struct pipit_error *err) {
    *out = NULL;
    struct pipit_fastgrammar *fg = calloc(1, sizeof(*fg));
    if (fg == NULL) {
        free(v->text);
        free(v->off);
        free(v->eog);
        *v = (struct fg_vocab){0};
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "fastgrammar: out of memory");
    }
    fg->owner = owner;
    char dir[4096];
    bool use_cache = fg_cache_dir(dir, sizeof(dir));
    enum pipit_status st =
        fg_index_new_cached(v, use_cache ? dir : NULL, &fg->index_cached, &fg->ix);
    fg->t_index_ms = pipit_now_ms() - t0;
    size_t nv = st == PIPIT_OK ? (size_t)fg->ix->n_vocab + 1 : 0;
    if (st == PIPIT_OK && ((use_cache && (fg->cache_dir = strdup(dir)) == NULL) ||
                           (fg->scratch = malloc(sizeof(int32_t) * nv)) == NULL ||
                           (fg->stamp = malloc(sizeof(uint32_t) * nv)) == NULL)) {
        free(fg->cache_dir);
        free(fg->scratch);
        fg_index_free(fg->ix);
        st = PIPIT_ERR_NOMEM;
    }
    if (st == PIPIT_OK) { /* touch every page now, not in a sampler's first steps */
        memset(fg->scratch, 0, sizeof(int32_t) * nv);
        memset(fg->stamp, 0, sizeof(uint32_t) * nv);
    }
    if (st != PIPIT_OK) {
        free(fg);
        return pipit_error_set(err, st, "fastgrammar: cannot index the vocabulary: %s",
                               pipit_status_str(st));
    }
    *out = fg;
    return PIPIT_OK;
}

int32_t pipit_fastgrammar_save(struct pipit_fastgrammar *fg) {
    int32_t n = 0;
    for (size_t i = 0; fg != NULL && fg->cache_dir != NULL && i < fg->n_entries; i++) {
        struct fg_entry *e = &fg->entries[i];
        char path[4200];
        if (e->a == NULL || e->disk_key == 0 || !fg_automaton_dirty(e->a) ||
            !fg_automaton_cache_path(path, sizeof(path), fg->cache_dir, e->disk_key)) {
            continue;
        }
        if (fg_automaton_store(e->a, path, e->disk_key)) {
            n++;
        } else {
            pipit_log(PIPIT_LOG_DEBUG, "fastgrammar: cannot write the mask cache %s", path);
        }
    }
    return n;
}

void pipit_fastgrammar_free(struct pipit_fastgrammar *fg) {
    if (fg == NULL) {
        return;
    }
    pipit_fastgrammar_save(fg);
    free(fg->cache_dir);
    free(fg->scratch);
    free(fg->stamp);
    for (size_t i = 0; i < fg->n_entries; i++) {
        free(fg->entries[i].gbnf);
        fg_automaton_free(fg->entries[i].a);
    }
    free(fg->entries);
    fg_index_free(fg->ix);
    free(fg);
}

/* Frees the automata of the transient grammars met before. */
static void forget_transient(struct pipit_fastgrammar *fg) {
    size_t kept = 0;
    for (size_t i = 0; i < fg->n_entries; i++) {
        if (fg->entries[i].transient) {
            free(fg->entries[i].gbnf);
            fg_automaton_free(fg->entries[i].a);
        } else {
            fg->entries[kept++] = fg->entries[i];
        }
    }
    fg->n_entries = kept;
}

enum pipit_status fg_lookup(struct pipit_fastgrammar *fg,
                            const char *gbnf,
                            bool transient,
                            struct fg_automaton **out,
                            char *msg,
                            size_t msg_size) {
    char local[200];
    if (msg == NULL || msg_size == 0) {
        msg = local;
        msg_size = sizeof(local);
    }
    *out = NULL;
    msg[0] = '\0';
    uint64_t h = hash_text(gbnf);
    for (size_t i = 0; i < fg->n_entries; i++) {
        if (fg->entries[i].hash == h && strcmp(fg->entries[i].gbnf, gbnf) == 0) {
            *out = fg->entries[i].a;
            if (*out == NULL) {
                snprintf(msg, msg_size, "fastgrammar: grammar outside the fast subset");
            }
            return *out != NULL ? PIPIT_OK : PIPIT_ERR_GRAMMAR;
        }
    }
    if (transient) {
        forget_transient(fg);
    }
    if (fg->n_entries >= FG_MAX_GRAMMARS) {
        /* bounded: forget the oldest grammar that no sampler can be using right now is not
         * knowable here, so refuse instead (the caller falls back to llama.cpp's sampler) */
        snprintf(msg, msg_size, "fastgrammar: more than %d grammars", FG_MAX_GRAMMARS);
        return PIPIT_ERR_GRAMMAR;
    }
    if (!fg_grow((void **)&fg->entries, &fg->cap_entries, fg->n_entries + 1,
                 sizeof(struct fg_entry))) {
        return PIPIT_ERR_NOMEM;
    }
    size_t len = strlen(gbnf);
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    memcpy(copy, gbnf, len + 1);
    double t0 = pipit_now_ms();
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_automaton_new(fg->ix, gbnf, &a, msg, msg_size);
    if (st == PIPIT_ERR_NOMEM) {
        fg->t_compile_ms += pipit_now_ms() - t0;
        free(copy);
        return st;
    }
    uint64_t key = 0;
    bool from_disk = false;
    char path[4200];
    if (a != NULL && !transient && fg->cache_dir != NULL &&
        (key = fg_automaton_key(a, gbnf)) != 0 &&
        fg_automaton_cache_path(path, sizeof(path), fg->cache_dir, key)) {
        /* a missing or damaged file leaves the fresh automaton as it is */
        from_disk = fg_automaton_load(a, path, key);
    }
    fg->t_compile_ms += pipit_now_ms() - t0;
    if (a == NULL) {
        /* never silent: a sampler given this grammar uses llama.cpp's (slower) GBNF sampler */
        pipit_log(PIPIT_LOG_WARN, "%s; this grammar falls back to llama.cpp's GBNF sampler",
                  msg[0] != '\0' ? msg : "fastgrammar: grammar outside the subset");
    }
    fg->entries[fg->n_entries++] = (struct fg_entry){h, copy, a, key, from_disk, transient};
    *out = a;
    return a != NULL ? PIPIT_OK : PIPIT_ERR_GRAMMAR;
}

enum pipit_status
pipit_fastgrammar_check(const char *gbnf, int32_t *nfa_states, struct pipit_error *err) {
    pipit_error_clear(err);
    if (nfa_states != NULL) {
        *nfa_states = 0;
    }
    if (gbnf == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "fastgrammar: NULL argument");
    }
    char msg[200];
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_automaton_new(NULL, gbnf, &a, msg, sizeof(msg));
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "%s", msg[0] != '\0' ? msg : pipit_status_str(st));
    }
    if (nfa_states != NULL) {
        *nfa_states = (int32_t)a->n_nfa;
    }
    fg_automaton_free(a);
    return PIPIT_OK;
}

void fg_scratch(struct pipit_fastgrammar *fg, int32_t **buf, uint32_t **stamp, uint32_t **gen) {
    *buf = fg->scratch;
    *stamp = fg->stamp;
    *gen = &fg->stamp_gen;
}

const struct fg_index *fg_index_of(const struct pipit_fastgrammar *fg) {
    return fg->ix;
}

const void *fg_owner_of(const struct pipit_fastgrammar *fg) {
    return fg->owner;
}

enum pipit_status
pipit_fastgrammar_add(struct pipit_fastgrammar *fg, const char *gbnf, struct pipit_error *err) {
    pipit_error_clear(err);
    if (fg == NULL || gbnf == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "fastgrammar: NULL argument");
    }
    char msg[200];
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_lookup(fg, gbnf, false, &a, msg, sizeof(msg));
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "%s", msg[0] != '\0' ? msg : pipit_status_str(st));
    }
    return PIPIT_OK;
}

enum pipit_status pipit_fastgrammar_match(struct pipit_fastgrammar *fg,
                                          const char *gbnf,
                                          const char *text,
                                          bool *prefix_ok,
                                          bool *complete) {
    if (fg == NULL || gbnf == NULL || text == NULL || prefix_ok == NULL || complete == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *prefix_ok = false;
    *complete = false;
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_lookup(fg, gbnf, false, &a, NULL, 0);
    if (st != PIPIT_OK) {
        return st;
    }
    int32_t s = fg_step_bytes(a, fg_start(a), text, strlen(text));
    *prefix_ok = s >= 0;
    *complete = fg_accepting(a, s);
    return PIPIT_OK;
}

void pipit_fastgrammar_get_info(const struct pipit_fastgrammar *fg,
                                struct pipit_fastgrammar_info *info) {
    memset(info, 0, sizeof(*info));
    if (fg == NULL) {
        return;
    }
    info->n_vocab = fg->ix->n_vocab;
    info->index_bytes = fg_index_bytes(fg->ix);
    info->t_index_ms = fg->t_index_ms;
    info->t_compile_ms = fg->t_compile_ms;
    info->index_cached = fg->index_cached;
    for (size_t i = 0; i < fg->n_entries; i++) {
        if (fg->entries[i].a == NULL) {
            info->n_unsupported++;
            continue;
        }
        struct fg_stats st;
        fg_automaton_stats(fg->entries[i].a, &st);
        info->n_grammars++;
        info->n_grammars_cached += fg->entries[i].from_disk ? 1 : 0;
        info->dfa_states += st.dfa_states;
        info->listed_states += st.listed_states;
        info->automaton_bytes += st.bytes;
    }
}
