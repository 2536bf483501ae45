/*
 * overlap.c - which scenario utterances the training data already holds (docs/training.md,
 * "Overlap").
 *
 * A development set measures what a person sees only if the model never trained on its
 * sentences. The index folds every training utterance two ways and keeps both in hash sets;
 * a scenario utterance, and each router segment of a compound one, is folded the same way and
 * looked up. A compound is split by the router of the scenario's tool set (router_new() of the
 * tool file its "device" names), so the segments are the ones the agent decodes.
 *
 *   verbatim  ASCII letters lowercased; apostrophes dropped ("don't" = "dont"); every other
 *             byte that is not a letter, a digit or part of a UTF-8 character separates words,
 *             except a '.' before a digit ("0.5", ".5"); words joined by one space.
 *   near      the verbatim words, then: letters and digits split apart ("2x" = "2 x"); numbers
 *             written as words read as numbers ("two", "twenty five", "one point five",
 *             "one and a half", "1 and a half") and every number written in its shortest form
 *             ("1.50" = "1.5", ".5" = "0.5"); politeness and filler phrases at either end
 *             dropped, as many as there are ("ok can you zoom in please" = "zoom in"). A text
 *             that would fold to nothing keeps its words.
 *
 * Typos are not folded: a misspelling is a new surface form, and the generator writes typos of
 * its own, which the verbatim check finds. Invariants: the index owns copies of every string it
 * returns; it is read-only after pipit_overlap_index_init() and may be shared by threads.
 */
#include "pipit_tools.h"
#include "router.h"
#include "status.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OVERLAP_MAX_FILE  (64u << 20) /* bytes of a scenario file that are read */
#define OVERLAP_MAX_WORDS 128         /* words of a text that are folded (the rest is cut) */
#define OVERLAP_MAX_SEGS  3           /* the agent's default max_steps */

/* ============================================================================
 * folding */

static bool is_word_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

static bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* The verbatim folding into `b` (words joined by one space). */
static void fold_verbatim(const char *text, struct strbuf *b) {
    const unsigned char *s = (const unsigned char *)text;
    bool pending_space = false;
    for (size_t i = 0; s[i] != '\0'; i++) {
        unsigned char c = s[i];
        if (c == '\'') {
            continue;
        }
        if (c == 0xE2 && s[i + 1] == 0x80 && (s[i + 2] == 0x98 || s[i + 2] == 0x99)) {
            i += 2; /* the typographic apostrophes U+2018, U+2019 */
            continue;
        }
        bool keep = is_word_byte(c) || (c == '.' && is_digit(s[i + 1]));
        if (!keep) {
            pending_space = b->len > 0;
            continue;
        }
        if (pending_space) {
            strbuf_add(b, " ", 1);
            pending_space = false;
        }
        char lc = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        strbuf_add(b, &lc, 1);
    }
}

static const char *const UNITS[] = {
    "zero",     "one",     "two",     "three",     "four",     "five",     "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
};
static const char *const TENS[] = {"twenty", "thirty",  "forty",  "fifty",
                                   "sixty",  "seventy", "eighty", "ninety"};

/* Politeness and filler phrases dropped at the start / the end by the near folding. */
static const char *const PREFIX_FILLERS[] = {
    "could you please",
    "can you please",
    "would you please",
    "can you",
    "could you",
    "would you",
    "will you",
    "can u",
    "could u",
    "please",
    "pls",
    "plz",
    "hey",
    "hi",
    "ok",
    "okay",
    "alright",
    "um",
    "uh",
    "so",
    "now",
    "just",
    "then",
    "and",
    "also",
    "yo",
    "oh",
    "ah",
    "well",
    "hmm",
    "camera",
    "pipit",
    "quickly",
};
static const char *const SUFFIX_FILLERS[] = {
    "please",     "pls",       "plz",    "thanks",  "thank you",  "thx",
    "now",        "right now", "for me", "quickly", "real quick", "asap",
    "if you can", "ok",        "okay",   "then",    "for now",
};

struct words {
    char *w[OVERLAP_MAX_WORDS];
    int n;
};

static int word_index(const char *w, const char *const *list, int n) {
    for (int i = 0; i < n; i++) {
        if (strcmp(w, list[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* An integer said in words at w[i..]: "seven", "twenty five", "one hundred", "a hundred and
 * ten" is not read (rare in commands). Returns the words used, 0 for none. */
static int read_int_words(const struct words *ws, int i, double *v) {
    if (i >= ws->n) {
        return 0;
    }
    int u = word_index(ws->w[i], UNITS, 20);
    int t = word_index(ws->w[i], TENS, 8);
    int used = 0;
    if (u >= 0) {
        *v = u;
        used = 1;
        if (i + 1 < ws->n && strcmp(ws->w[i + 1], "hundred") == 0) {
            *v *= 100;
            used = 2;
        }
        return used;
    }
    if (t >= 0) {
        *v = 20 + 10 * t;
        used = 1;
        int u2 = i + 1 < ws->n ? word_index(ws->w[i + 1], UNITS, 10) : -1;
        if (u2 >= 1) {
            *v += u2;
            used = 2;
        }
    }
    return used;
}

static bool all_digits_number(const char *w) {
    bool digit = false;
    for (const char *p = w; *p != '\0'; p++) {
        if (is_digit((unsigned char)*p)) {
            digit = true;
        } else if (*p != '.') {
            return false;
        }
    }
    return digit;
}

/* A number at w[i..] in words or digits, with "point d d" decimals and "and a half". */
static int read_number(const struct words *ws, int i, double *v) {
    int used = 0;
    if (all_digits_number(ws->w[i])) {
        *v = strtod(ws->w[i], NULL);
        used = 1;
    } else {
        used = read_int_words(ws, i, v);
        if (used == 0 && strcmp(ws->w[i], "point") == 0 && i + 1 < ws->n &&
            word_index(ws->w[i + 1], UNITS, 10) >= 0) {
            *v = 0;
        } else if (used == 0) {
            return 0;
        }
    }
    int j = i + used;
    if (j + 1 < ws->n && strcmp(ws->w[j], "point") == 0 &&
        word_index(ws->w[j + 1], UNITS, 10) >= 0) {
        double scale = 0.1;
        j++;
        for (int d; j < ws->n && (d = word_index(ws->w[j], UNITS, 10)) >= 0; j++) {
            *v += d * scale;
            scale /= 10;
        }
    } else if (j + 2 < ws->n && strcmp(ws->w[j], "and") == 0 && strcmp(ws->w[j + 1], "a") == 0 &&
               strcmp(ws->w[j + 2], "half") == 0) {
        *v += 0.5;
        j += 3;
    }
    return j - i;
}

/* Does the phrase (space-separated words) match ws->w[at..]? Returns its word count or 0. */
static int phrase_at(const struct words *ws, int at, int end, const char *phrase) {
    int k = at;
    const char *p = phrase;
    while (*p != '\0') {
        const char *sp = strchr(p, ' ');
        size_t len = sp != NULL ? (size_t)(sp - p) : strlen(p);
        if (k >= end || strlen(ws->w[k]) != len || strncmp(ws->w[k], p, len) != 0) {
            return 0;
        }
        k++;
        p += len + (sp != NULL ? 1 : 0);
    }
    return k - at;
}

/* Phrase ending at ws->w[end-1]: its word count or 0. */
static int phrase_before(const struct words *ws, int start, int end, const char *phrase) {
    int n_words = 1;
    for (const char *p = phrase; *p != '\0'; p++) {
        n_words += *p == ' ';
    }
    if (end - n_words < start) {
        return 0;
    }
    return phrase_at(ws, end - n_words, end, phrase) == n_words ? n_words : 0;
}

/* The near folding of the verbatim-folded `v` (modified in place: split into words) into b. */
static void fold_near(char *v, struct strbuf *b) {
    /* split letters from digits: "2x" -> "2 x", "x2" -> "x 2" (a '.' goes with the digits) */
    struct strbuf split = {0};
    for (size_t i = 0; v[i] != '\0'; i++) {
        if (i > 0 && v[i] != ' ' && v[i - 1] != ' ') {
            bool d0 = is_digit((unsigned char)v[i - 1]) || v[i - 1] == '.';
            bool d1 = is_digit((unsigned char)v[i]) || v[i] == '.';
            if (d0 != d1) {
                strbuf_add(&split, " ", 1);
            }
        }
        strbuf_add(&split, v + i, 1);
    }
    char *s = strbuf_take(&split);
    if (s == NULL) {
        b->failed = true;
        return;
    }
    struct words ws = {.n = 0};
    for (char *tok = s; *tok != '\0' && ws.n < OVERLAP_MAX_WORDS;) {
        char *sp = strchr(tok, ' ');
        ws.w[ws.n++] = tok;
        if (sp == NULL) {
            break;
        }
        *sp = '\0';
        tok = sp + 1;
    }
    /* numbers */
    char num[OVERLAP_MAX_WORDS][32];
    const char *out[OVERLAP_MAX_WORDS];
    int n_out = 0;
    for (int i = 0; i < ws.n;) {
        double value = 0;
        int used = read_number(&ws, i, &value);
        if (used > 0) {
            pipit_format(num[n_out], sizeof(num[n_out]), "%g", value);
            out[n_out] = num[n_out];
            n_out++;
            i += used;
        } else {
            out[n_out++] = ws.w[i++];
        }
    }
    /* fillers at the edges */
    struct words fw = {.n = n_out};
    for (int i = 0; i < n_out; i++) {
        fw.w[i] = (char *)out[i];
    }
    int start = 0, end = n_out;
    for (bool again = true; again && start < end;) {
        again = false;
        for (size_t k = 0; k < sizeof(PREFIX_FILLERS) / sizeof(PREFIX_FILLERS[0]); k++) {
            int m = phrase_at(&fw, start, end, PREFIX_FILLERS[k]);
            if (m > 0) {
                start += m;
                again = true;
                break;
            }
        }
        for (size_t k = 0; !again && k < sizeof(SUFFIX_FILLERS) / sizeof(SUFFIX_FILLERS[0]); k++) {
            int m = phrase_before(&fw, start, end, SUFFIX_FILLERS[k]);
            if (m > 0) {
                end -= m;
                again = true;
            }
        }
    }
    if (start >= end) { /* only fillers: keep them all */
        start = 0;
        end = n_out;
    }
    for (int i = start; i < end; i++) {
        if (i > start) {
            strbuf_add(b, " ", 1);
        }
        strbuf_str(b, out[i]);
    }
    free(s);
}

char *pipit_overlap_fold(const char *text, bool near) {
    if (text == NULL) {
        return NULL;
    }
    struct strbuf b = {0};
    fold_verbatim(text, &b);
    char *v = strbuf_take(&b);
    if (v == NULL || !near) {
        return v;
    }
    fold_near(v, &b);
    free(v);
    return strbuf_take(&b);
}

/* ============================================================================
 * the index: two open-addressing hash sets over one string arena */

struct entry {
    uint64_t hash;
    uint32_t key;   /* arena offset of the folded key */
    uint32_t train; /* arena offset of the training utterance */
};

struct table {
    struct entry *e; /* cap slots; key == UINT32_MAX: empty */
    uint32_t cap, n;
};

struct pipit_overlap_index {
    struct table verbatim, near;
    struct strbuf arena; /* NUL-terminated strings back to back; offset 0 holds "" */
};

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return h;
}

static bool table_grow(struct table *t) {
    uint32_t cap = t->cap > 0 ? t->cap * 2 : 1024;
    struct entry *e = malloc(sizeof(*e) * cap);
    if (e == NULL) {
        return false;
    }
    for (uint32_t i = 0; i < cap; i++) {
        e[i].key = UINT32_MAX;
    }
    for (uint32_t i = 0; i < t->cap; i++) {
        if (t->e[i].key == UINT32_MAX) {
            continue;
        }
        uint32_t k = (uint32_t)t->e[i].hash & (cap - 1);
        while (e[k].key != UINT32_MAX) {
            k = (k + 1) & (cap - 1);
        }
        e[k] = t->e[i];
    }
    free(t->e);
    t->e = e;
    t->cap = cap;
    return true;
}

static const struct entry *
table_find(const struct table *t, const struct strbuf *arena, const char *key, uint64_t h) {
    if (t->cap == 0) {
        return NULL;
    }
    for (uint32_t k = (uint32_t)h & (t->cap - 1);; k = (k + 1) & (t->cap - 1)) {
        const struct entry *e = &t->e[k];
        if (e->key == UINT32_MAX) {
            return NULL;
        }
        if (e->hash == h && strcmp(arena->data + e->key, key) == 0) {
            return e;
        }
    }
}

static bool arena_put(struct strbuf *arena, const char *s, uint32_t *off) {
    if (arena->len + strlen(s) + 1 >= UINT32_MAX) {
        return false;
    }
    *off = (uint32_t)arena->len;
    strbuf_add(arena, s, strlen(s) + 1);
    return !arena->failed;
}

/* Insert key -> train (a training utterance offset, or UINT32_MAX: store `utt` first). */
static bool table_add(struct table *t,
                      struct strbuf *arena,
                      const char *key,
                      const char *utt,
                      uint32_t *train) {
    uint64_t h = hash_str(key);
    const struct entry *found = table_find(t, arena, key, h);
    if (found != NULL) {
        if (*train == UINT32_MAX) {
            *train = found->train;
        }
        return true;
    }
    if ((t->n + 1) * 2 > t->cap && !table_grow(t)) {
        return false;
    }
    struct entry e = {.hash = h};
    if (*train == UINT32_MAX && !arena_put(arena, utt, train)) {
        return false;
    }
    e.train = *train;
    if (!arena_put(arena, key, &e.key)) {
        return false;
    }
    uint32_t k = (uint32_t)h & (t->cap - 1);
    while (t->e[k].key != UINT32_MAX) {
        k = (k + 1) & (t->cap - 1);
    }
    t->e[k] = e;
    t->n++;
    return true;
}

static bool index_add(struct pipit_overlap_index *idx, const char *utt) {
    char *v = pipit_overlap_fold(utt, false);
    char *n = pipit_overlap_fold(utt, true);
    bool ok = v != NULL && n != NULL;
    uint32_t train = UINT32_MAX;
    if (ok && v[0] != '\0') {
        ok = table_add(&idx->verbatim, &idx->arena, v, utt, &train) &&
             table_add(&idx->near, &idx->arena, n, utt, &train);
    }
    free(v);
    free(n);
    return ok;
}

void pipit_overlap_index_free(struct pipit_overlap_index *idx) {
    if (idx == NULL) {
        return;
    }
    free(idx->verbatim.e);
    free(idx->near.e);
    strbuf_free(&idx->arena);
    free(idx);
}

enum pipit_status pipit_overlap_index_init(const struct pipit_dataset *ds,
                                           struct pipit_overlap_index **out,
                                           struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL || ds == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "overlap: %s is NULL",
                               out == NULL ? "out" : "ds");
    }
    *out = NULL;
    struct pipit_overlap_index *idx = calloc(1, sizeof(*idx));
    if (idx == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "overlap: out of memory");
    }
    strbuf_add(&idx->arena, "", 1);
    bool ok = !idx->arena.failed;
    for (int32_t i = 0; ok && i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (!ex.tracker) {
            ok = index_add(idx, ex.utterance);
            continue;
        }
        /* a State-Tracker example: the person's lines of the turn it reads */
        for (const char *p = ex.utterance; ok && p != NULL && *p != '\0';) {
            const char *nl = strchr(p, '\n');
            size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
            if (len > 6 && strncmp(p, "user: ", 6) == 0) {
                char *line = malloc(len - 5);
                ok = line != NULL;
                if (ok) {
                    memcpy(line, p + 6, len - 6);
                    line[len - 6] = '\0';
                    ok = index_add(idx, line);
                    free(line);
                }
            }
            p = nl != NULL ? nl + 1 : NULL;
        }
    }
    if (!ok) {
        pipit_overlap_index_free(idx);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "overlap: out of memory");
    }
    *out = idx;
    return PIPIT_OK;
}

int32_t pipit_overlap_index_size(const struct pipit_overlap_index *idx) {
    return idx != NULL ? (int32_t)idx->verbatim.n : 0;
}

enum pipit_overlap_kind
pipit_overlap_find(const struct pipit_overlap_index *idx, const char *text, const char **train) {
    if (train != NULL) {
        *train = NULL;
    }
    if (idx == NULL || text == NULL) {
        return PIPIT_OVERLAP_NONE;
    }
    enum pipit_overlap_kind kind = PIPIT_OVERLAP_NONE;
    char *v = pipit_overlap_fold(text, false);
    const struct entry *e = NULL;
    if (v != NULL && v[0] != '\0') {
        e = table_find(&idx->verbatim, &idx->arena, v, hash_str(v));
        kind = e != NULL ? PIPIT_OVERLAP_VERBATIM : PIPIT_OVERLAP_NONE;
        if (e == NULL) {
            char *n = pipit_overlap_fold(text, true);
            if (n != NULL) {
                e = table_find(&idx->near, &idx->arena, n, hash_str(n));
                kind = e != NULL ? PIPIT_OVERLAP_NEAR : PIPIT_OVERLAP_NONE;
            }
            free(n);
        }
    }
    free(v);
    if (e != NULL && train != NULL) {
        *train = idx->arena.data + e->train;
    }
    return kind;
}

/* ============================================================================
 * scenario files */

static enum pipit_status check_turn(const struct pipit_overlap_index *idx,
                                    const struct router *router,
                                    struct pipit_overlap *o,
                                    pipit_overlap_fn fn,
                                    void *ud,
                                    struct pipit_overlap_counts *c) {
    const char *utt = o->text;
    c->n_utterances++;
    o->segment = -1;
    o->kind = pipit_overlap_find(idx, utt, &o->train);
    bool whole = o->kind != PIPIT_OVERLAP_NONE;
    char(*segs)[ROUTER_MAX_SEGMENT] = malloc(sizeof(*segs) * OVERLAP_MAX_SEGS);
    if (segs == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    size_t n = router_split_with(router, utt, segs, OVERLAP_MAX_SEGS);
    o->n_segments = (int32_t)n;
    if (whole) {
        c->n_utterances_overlap++;
        c->n_verbatim += o->kind == PIPIT_OVERLAP_VERBATIM;
        c->n_near += o->kind == PIPIT_OVERLAP_NEAR;
        if (fn != NULL) {
            fn(o, ud);
        }
    }
    if (n == 1) {
        c->n_segments++;
        c->n_segments_overlap += whole;
    }
    for (size_t k = 0; n > 1 && k < n; k++) {
        c->n_segments++;
        o->segment = (int32_t)k;
        o->text = segs[k];
        o->kind = pipit_overlap_find(idx, segs[k], &o->train);
        if (o->kind == PIPIT_OVERLAP_NONE) {
            continue;
        }
        c->n_segments_overlap++;
        c->n_verbatim += o->kind == PIPIT_OVERLAP_VERBATIM;
        c->n_near += o->kind == PIPIT_OVERLAP_NEAR;
        if (fn != NULL) {
            fn(o, ud);
        }
    }
    o->text = utt;
    free(segs);
    return PIPIT_OK;
}

/* The routers of the scenario file's tool sets: routers[k] splits the scenarios of
 * devices[k]. */
struct scenario_routers {
    const struct pipit_eval_device *devices;
    size_t n;
    struct router **routers;
};

static void routers_free(struct scenario_routers *sr) {
    for (size_t k = 0; sr->routers != NULL && k < sr->n; k++) {
        router_free(sr->routers[k]);
    }
    free(sr->routers);
    sr->routers = NULL;
}

/* Add an utterance and each segment the router makes of it (--exclude). */
static enum pipit_status
collect_turn(struct pipit_overlap_index *idx, const struct router *router, const char *utt) {
    char(*segs)[ROUTER_MAX_SEGMENT] = malloc(sizeof(*segs) * OVERLAP_MAX_SEGS);
    bool ok = segs != NULL && index_add(idx, utt);
    size_t n = ok ? router_split_with(router, utt, segs, OVERLAP_MAX_SEGS) : 0;
    for (size_t k = 0; ok && n > 1 && k < n; k++) {
        ok = index_add(idx, segs[k]);
    }
    free(segs);
    return ok ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

/* Each turn of a line: checked against `idx`, or added to `collect` when it is not NULL. */
static enum pipit_status check_line(const struct pipit_overlap_index *idx,
                                    struct pipit_overlap_index *collect,
                                    const struct scenario_routers *sr,
                                    const char *path,
                                    int32_t line,
                                    const char *text,
                                    size_t len,
                                    pipit_overlap_fn fn,
                                    void *ud,
                                    struct pipit_overlap_counts *c,
                                    struct pipit_error *err) {
    json_error_t jerr;
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (root == NULL) {
        return pipit_error_set(err, PIPIT_ERR_JSON, "overlap: %s:%d:%d: $: invalid JSON: %s", path,
                               (int)line, jerr.column, jerr.text);
    }
    enum pipit_status st = PIPIT_OK;
    json_t *id = json_object_get(root, "id"), *turns = json_object_get(root, "turns");
    if (!json_is_string(id)) {
        st = pipit_error_set(err, PIPIT_ERR_JSON, "overlap: %s:%d: $.id: expected a string", path,
                             (int)line);
    } else if (!json_is_array(turns)) {
        st = pipit_error_set(err, PIPIT_ERR_JSON, "overlap: %s:%d: $.turns: expected an array",
                             path, (int)line);
    }
    const struct router *router = NULL; /* no tool sets given: the generic lexicon */
    if (st == PIPIT_OK && sr->n > 0) {
        json_t *device = json_object_get(root, "device");
        size_t k = 0;
        while (json_is_string(device) && k < sr->n &&
               strcmp(sr->devices[k].device, json_string_value(device)) != 0) {
            k++;
        }
        if (device == NULL && sr->n == 1) {
            router = sr->routers[0]; /* as pipit eval: the one tool set given */
        } else if (!json_is_string(device)) {
            st = pipit_error_set(err, PIPIT_ERR_JSON,
                                 "overlap: %s:%d: $.device: expected a string (the scenario's "
                                 "tool set splits its utterances; without it, only one tool "
                                 "set may be given)",
                                 path, (int)line);
        } else if (k == sr->n) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "overlap: %s:%d: $.device: no tool set was given for \"%s\"", path,
                                 (int)line, json_string_value(device));
        } else {
            router = sr->routers[k];
        }
    }
    for (size_t t = 0; st == PIPIT_OK && t < json_array_size(turns); t++) {
        json_t *user = json_object_get(json_array_get(turns, t), "user");
        if (!json_is_string(user)) {
            st = pipit_error_set(err, PIPIT_ERR_JSON,
                                 "overlap: %s:%d: $.turns[%zu].user: expected a string", path,
                                 (int)line, t);
            break;
        }
        struct pipit_overlap o = {.file = path,
                                  .line = line,
                                  .id = json_string_value(id),
                                  .turn = (int32_t)t,
                                  .text = json_string_value(user)};
        st = collect != NULL ? collect_turn(collect, router, o.text)
                             : check_turn(idx, router, &o, fn, ud, c);
        if (st != PIPIT_OK) {
            st = pipit_error_set(err, st, "overlap: out of memory");
        }
    }
    json_decref(root);
    return st;
}

static enum pipit_status scan_file(const struct pipit_overlap_index *idx,
                                   struct pipit_overlap_index *collect,
                                   const char *path,
                                   const struct pipit_eval_device *devices,
                                   size_t n_devices,
                                   pipit_overlap_fn fn,
                                   void *user_data,
                                   struct pipit_overlap_counts *out,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    if ((idx == NULL && collect == NULL) || path == NULL || (devices == NULL && n_devices > 0)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "overlap: %s is NULL",
                               path == NULL ? "path" : (devices == NULL ? "devices" : "idx"));
    }
    for (size_t k = 0; k < n_devices; k++) {
        if (devices[k].device == NULL || devices[k].tools == NULL) {
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "overlap: devices[%zu] has no %s", k,
                                   devices[k].device == NULL ? "device name" : "tool set");
        }
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return pipit_error_set(err, PIPIT_ERR_IO, "overlap: cannot read %s", path);
    }
    struct strbuf buf = {0};
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0 && buf.len < OVERLAP_MAX_FILE) {
        strbuf_add(&buf, chunk, got);
    }
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error || buf.len >= OVERLAP_MAX_FILE) {
        strbuf_free(&buf);
        return pipit_error_set(err, PIPIT_ERR_IO, "overlap: cannot read %s%s", path,
                               read_error ? "" : ": larger than 64 MiB");
    }
    if (buf.failed) {
        strbuf_free(&buf);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "overlap: out of memory");
    }
    struct scenario_routers sr = {devices, n_devices, NULL};
    if (n_devices > 0) {
        sr.routers = calloc(n_devices, sizeof(*sr.routers));
        for (size_t k = 0; sr.routers != NULL && k < n_devices; k++) {
            sr.routers[k] = router_new(devices[k].tools);
            if (sr.routers[k] == NULL) {
                routers_free(&sr);
            }
        }
        if (sr.routers == NULL) {
            strbuf_free(&buf);
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "overlap: out of memory");
        }
    }
    struct pipit_overlap_counts c = {0};
    enum pipit_status st = PIPIT_OK;
    int32_t line = 0;
    for (const char *p = buf.data; st == PIPIT_OK && p != NULL && *p != '\0';) {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        line++;
        size_t k = 0;
        while (k < len && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r')) {
            k++;
        }
        if (k < len && p[k] != '#') {
            st = check_line(idx, collect, &sr, path, line, p, len, fn, user_data, &c, err);
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    routers_free(&sr);
    strbuf_free(&buf);
    if (st == PIPIT_OK && out != NULL) {
        out->n_utterances += c.n_utterances;
        out->n_utterances_overlap += c.n_utterances_overlap;
        out->n_segments += c.n_segments;
        out->n_segments_overlap += c.n_segments_overlap;
        out->n_verbatim += c.n_verbatim;
        out->n_near += c.n_near;
    }
    return st;
}

enum pipit_status pipit_overlap_check_file(const struct pipit_overlap_index *idx,
                                           const char *path,
                                           const struct pipit_eval_device *devices,
                                           size_t n_devices,
                                           pipit_overlap_fn fn,
                                           void *user_data,
                                           struct pipit_overlap_counts *out,
                                           struct pipit_error *err) {
    if (idx == NULL) {
        pipit_error_clear(err);
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "overlap: idx is NULL");
    }
    return scan_file(idx, NULL, path, devices, n_devices, fn, user_data, out, err);
}

enum pipit_status pipit_overlap_index_empty(struct pipit_overlap_index **out,
                                            struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "overlap: out is NULL");
    }
    *out = calloc(1, sizeof(**out));
    if (*out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "overlap: out of memory");
    }
    strbuf_add(&(*out)->arena, "", 1);
    if ((*out)->arena.failed) {
        pipit_overlap_index_free(*out);
        *out = NULL;
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "overlap: out of memory");
    }
    return PIPIT_OK;
}

enum pipit_status pipit_overlap_index_add_file(struct pipit_overlap_index *idx,
                                               const char *path,
                                               const struct pipit_eval_device *devices,
                                               size_t n_devices,
                                               struct pipit_error *err) {
    if (idx == NULL) {
        pipit_error_clear(err);
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "overlap: idx is NULL");
    }
    return scan_file(NULL, idx, path, devices, n_devices, NULL, NULL, NULL, err);
}
