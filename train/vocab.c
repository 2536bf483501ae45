/*
 * vocab.c - a small SentencePiece-style ("llama") vocabulary built from the training text.
 *
 * Layout of the vocabulary (ids):
 *   0 <unk> (unknown)   1 <s> (BOS, control)   2 </s> (EOS, control)
 *   3..258   <0x00>..<0xFF> byte-fallback tokens (type byte)
 *   259      "<call>" (user-defined: matched everywhere, even with parse_special = false)
 *   then every character of the corpus, then BPE merges in rank order (score = -rank)
 *
 * The corpus is split into lines ('\n' never joins a piece: it is always the byte token
 * <0x0A>), spaces become "▁" and every "▁" starts a new word, so a piece holds "▁" only as its
 * first character. libllama's SPM tokenizer merges adjacent symbols by the score of the merged
 * piece, which replays the merges in rank order. No space prefix is added
 * (tokenizer.ggml.add_space_prefix = false): a text tokenized in pieces split at line ends
 * gives the same tokens as the whole text.
 *
 * Deterministic: ties between equally frequent pairs go to the pair seen first.
 */
#include "datagen.h"
#include "fileio.h"
#include "gguf.h"
#include "status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACE_MARK     "\xe2\x96\x81" /* U+2581 ▁ */
#define VOCAB_MAX_TEXT 200000         /* examples sampled from the training split */

/* ============================================================================
 * string -> id hash (open addressing) */

struct strmap {
    char **keys;
    int32_t *vals;
    size_t cap, n;
};

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    }
    return h;
}

static bool strmap_grow(struct strmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 4096;
    char **keys = calloc(cap, sizeof(char *));
    int32_t *vals = calloc(cap, sizeof(int32_t));
    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] != NULL) {
            size_t j = hash_bytes(m->keys[i], strlen(m->keys[i])) & (cap - 1);
            while (keys[j] != NULL) {
                j = (j + 1) & (cap - 1);
            }
            keys[j] = m->keys[i];
            vals[j] = m->vals[i];
        }
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return true;
}

/* The slot of key s[0..n), inserting it with value -1 when absent; NULL on OOM. */
static int32_t *strmap_slot(struct strmap *m, const char *s, size_t n) {
    if ((m->n + 1) * 2 > m->cap && !strmap_grow(m)) {
        return NULL;
    }
    size_t j = hash_bytes(s, n) & (m->cap - 1);
    while (m->keys[j] != NULL) {
        if (strlen(m->keys[j]) == n && memcmp(m->keys[j], s, n) == 0) {
            return &m->vals[j];
        }
        j = (j + 1) & (m->cap - 1);
    }
    char *k = malloc(n + 1);
    if (k == NULL) {
        return NULL;
    }
    memcpy(k, s, n);
    k[n] = '\0';
    m->keys[j] = k;
    m->vals[j] = -1;
    m->n++;
    return &m->vals[j];
}

static void strmap_free(struct strmap *m) {
    for (size_t i = 0; i < m->cap; i++) {
        free(m->keys[i]);
    }
    free(m->keys);
    free(m->vals);
}

/* ============================================================================
 * BPE state */

struct word {
    int32_t *sym; /* symbol ids */
    int32_t n;
    int64_t count;
};

struct bpe {
    struct strmap words; /* word text -> index into w */
    struct word *w;
    size_t n_w, cap_w;
    char **pieces; /* symbol id -> text */
    size_t n_pieces, cap_pieces;
    struct strmap piece_ids;
};

static int32_t piece_id(struct bpe *b, const char *s, size_t n) {
    int32_t *slot = strmap_slot(&b->piece_ids, s, n);
    if (slot == NULL) {
        return -1;
    }
    if (*slot >= 0) {
        return *slot;
    }
    if (b->n_pieces == b->cap_pieces) {
        size_t cap = b->cap_pieces ? b->cap_pieces * 2 : 1024;
        char **p = realloc(b->pieces, cap * sizeof(char *));
        if (p == NULL) {
            return -1;
        }
        b->pieces = p;
        b->cap_pieces = cap;
    }
    char *t = malloc(n + 1);
    if (t == NULL) {
        return -1;
    }
    memcpy(t, s, n);
    t[n] = '\0';
    b->pieces[b->n_pieces] = t;
    *slot = (int32_t)b->n_pieces;
    return (int32_t)b->n_pieces++;
}

/* Count one word (already with ▁ for spaces). */
static bool add_word(struct bpe *b, const char *s, size_t n) {
    if (n == 0) {
        return true;
    }
    int32_t *slot = strmap_slot(&b->words, s, n);
    if (slot == NULL) {
        return false;
    }
    if (*slot >= 0) {
        b->w[*slot].count++;
        return true;
    }
    if (b->n_w == b->cap_w) {
        size_t cap = b->cap_w ? b->cap_w * 2 : 4096;
        struct word *w = realloc(b->w, cap * sizeof(*w));
        if (w == NULL) {
            return false;
        }
        b->w = w;
        b->cap_w = cap;
    }
    struct word *w = &b->w[b->n_w];
    w->sym = malloc(n * sizeof(int32_t));
    if (w->sym == NULL) {
        return false;
    }
    w->n = 0;
    w->count = 1;
    for (size_t i = 0; i < n;) {
        size_t len = 1;
        unsigned char c = (unsigned char)s[i];
        if (c >= 0xF0) {
            len = 4;
        } else if (c >= 0xE0) {
            len = 3;
        } else if (c >= 0xC0) {
            len = 2;
        }
        if (i + len > n) {
            len = n - i;
        }
        int32_t id = piece_id(b, s + i, len);
        if (id < 0) {
            return false;
        }
        w->sym[w->n++] = id;
        i += len;
    }
    *slot = (int32_t)b->n_w++;
    return true;
}

/* Split a text into words: lines, "<call>" removed, spaces -> ▁ starting a word. */
static bool add_text(struct bpe *b, const char *text) {
    char buf[2048];
    size_t o = 0;
    for (const char *p = text;; p++) {
        bool end = *p == '\0' || *p == '\n';
        if (!end && strncmp(p, "<call>", 6) == 0) {
            if (!add_word(b, buf, o)) {
                return false;
            }
            o = 0;
            p += 5;
            continue;
        }
        if (end || *p == ' ' || o + 4 >= sizeof(buf)) {
            if (!add_word(b, buf, o)) {
                return false;
            }
            o = 0;
        }
        if (*p == '\0') {
            return true;
        }
        if (*p == ' ') {
            memcpy(buf + o, SPACE_MARK, 3);
            o += 3;
        } else if (*p != '\n') {
            buf[o++] = *p;
        }
    }
}

struct pair_count {
    int64_t key; /* (a << 32) | b, -1 = empty */
    int64_t count;
    int64_t first; /* order of first sight, for deterministic ties */
};

/* One merge step: find the most frequent pair; returns false when none is left. */
static bool
best_pair(const struct bpe *b, struct pair_count *tab, size_t cap, int32_t *pa, int32_t *pb) {
    for (size_t i = 0; i < cap; i++) {
        tab[i].key = -1;
    }
    int64_t order = 0;
    for (size_t wi = 0; wi < b->n_w; wi++) {
        const struct word *w = &b->w[wi];
        for (int32_t i = 0; i + 1 < w->n; i++) {
            int64_t key = ((int64_t)w->sym[i] << 32) | (int64_t)w->sym[i + 1];
            size_t j = (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
            while (tab[j].key != -1 && tab[j].key != key) {
                j = (j + 1) & (cap - 1);
            }
            if (tab[j].key == -1) {
                tab[j].key = key;
                tab[j].count = 0;
                tab[j].first = order++;
            }
            tab[j].count += w->count;
        }
    }
    const struct pair_count *best = NULL;
    for (size_t i = 0; i < cap; i++) {
        if (tab[i].key != -1 && (best == NULL || tab[i].count > best->count ||
                                 (tab[i].count == best->count && tab[i].first < best->first))) {
            best = &tab[i];
        }
    }
    if (best == NULL || best->count < 2) {
        return false;
    }
    *pa = (int32_t)(best->key >> 32);
    *pb = (int32_t)(best->key & 0xffffffff);
    return true;
}

static void apply_merge(struct bpe *b, int32_t pa, int32_t pb, int32_t id) {
    for (size_t wi = 0; wi < b->n_w; wi++) {
        struct word *w = &b->w[wi];
        int32_t o = 0;
        for (int32_t i = 0; i < w->n; i++) {
            if (i + 1 < w->n && w->sym[i] == pa && w->sym[i + 1] == pb) {
                w->sym[o++] = id;
                i++;
            } else {
                w->sym[o++] = w->sym[i];
            }
        }
        w->n = o;
    }
}

static void bpe_free(struct bpe *b) {
    for (size_t i = 0; i < b->n_w; i++) {
        free(b->w[i].sym);
    }
    free(b->w);
    for (size_t i = 0; i < b->n_pieces; i++) {
        free(b->pieces[i]);
    }
    free(b->pieces);
    strmap_free(&b->words);
    strmap_free(&b->piece_ids);
}

/* ============================================================================
 * GGUF */

#define N_FIXED 260 /* unk, bos, eos, 256 bytes, <call> */

enum pipit_status pipit_vocab_build(const struct pipit_dataset *ds,
                                    const char *system,
                                    int32_t n_vocab,
                                    const char *out_path,
                                    struct pipit_error *err) {
    pipit_error_clear(err);
    if (ds == NULL || system == NULL || out_path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "vocab: data set, system text and output path are required");
    }
    if (n_vocab < 300 || n_vocab > 32000) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "vocab: size outside 300..32000: %d",
                               (int)n_vocab);
    }
    struct bpe b;
    memset(&b, 0, sizeof(b));
    enum pipit_status st = PIPIT_OK;
    int32_t n = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    if (n > VOCAB_MAX_TEXT) {
        n = VOCAB_MAX_TEXT;
    }
    for (int32_t i = 0; i < n && st == PIPIT_OK; i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        char *prompt = pipit_train_prompt_example(system, &ex);
        if (prompt == NULL || !add_text(&b, prompt) || !add_text(&b, ex.output)) {
            st = PIPIT_ERR_NOMEM;
        }
        free(prompt);
    }
    /* characters first (already pieces 0..n_chars-1), then merges */
    size_t n_chars = b.n_pieces;
    size_t cap = 1 << 17;
    struct pair_count *tab = st == PIPIT_OK ? malloc(cap * sizeof(*tab)) : NULL;
    if (st == PIPIT_OK && tab == NULL) {
        st = PIPIT_ERR_NOMEM;
    }
    while (st == PIPIT_OK && N_FIXED + b.n_pieces < (size_t)n_vocab) {
        int32_t pa, pb;
        if (!best_pair(&b, tab, cap, &pa, &pb)) {
            break;
        }
        char merged[256];
        pipit_format(merged, sizeof(merged), "%s%s", b.pieces[pa], b.pieces[pb]);
        size_t before = b.n_pieces;
        int32_t id = piece_id(&b, merged, strlen(merged));
        if (id < 0) {
            st = PIPIT_ERR_NOMEM;
            break;
        }
        apply_merge(&b, pa, pb, id);
        if (b.n_pieces == before) {
            /* the concatenation already existed as a piece: the merge still happened */
            continue;
        }
    }
    free(tab);
    if (st != PIPIT_OK) {
        bpe_free(&b);
        return pipit_error_set(err, st, "vocab: out of memory");
    }

    size_t total = N_FIXED + b.n_pieces;
    const char **tokens = calloc(total, sizeof(char *));
    float *scores = calloc(total, sizeof(float));
    int32_t *types = calloc(total, sizeof(int32_t));
    char(*bytes)[8] = calloc(256, 8);
    if (tokens == NULL || scores == NULL || types == NULL || bytes == NULL) {
        free(tokens), free(scores), free(types), free(bytes);
        bpe_free(&b);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "vocab: out of memory");
    }
    tokens[0] = "<unk>", types[0] = 2;
    tokens[1] = "<s>", types[1] = 3;
    tokens[2] = "</s>", types[2] = 3;
    for (int i = 0; i < 256; i++) {
        pipit_format(bytes[i], 8, "<0x%02X>", i);
        tokens[3 + i] = bytes[i];
        types[3 + i] = 6;
    }
    tokens[259] = "<call>", types[259] = 4;
    for (size_t i = 0; i < b.n_pieces; i++) {
        tokens[N_FIXED + i] = b.pieces[i];
        types[N_FIXED + i] = 1;
        scores[N_FIXED + i] = i < n_chars ? 0.0f : -(float)(i - n_chars + 1);
    }

    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_str(g, "general.architecture", "llama");
    gguf_set_val_str(g, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, total);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, total);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, total);
    gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", 0);
    gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", true);
    gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", false);
    gguf_set_val_bool(g, "tokenizer.ggml.add_space_prefix", false);

    struct fileio_tmp w;
    bool ok = fileio_begin(&w, out_path) && gguf_write_to_file_ptr(g, w.f, false);
    if (!fileio_commit(&w, ok, FILEIO_DURABLE)) {
        st = pipit_error_set(err, PIPIT_ERR_IO, "vocab: cannot write %s: %s", out_path,
                             strerror(errno));
    }
    gguf_free(g);
    free(tokens), free(scores), free(types), free(bytes);
    bpe_free(&b);
    return st;
}
