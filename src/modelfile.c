/*
 * modelfile.c - a model file checked before llama.cpp sees it, and its fingerprint.
 *
 * llama.cpp reports every load failure as NULL: pipit reads the file first (existence, magic,
 * GGUF header and metadata, tensor data extent, architecture key, hyperparameters) and names
 * what is wrong. Through ggml's gguf.h only: no llama.h here (engine.c alone includes it).
 *
 * llama.cpp asserts (aborts the process) on some hyperparameters instead of returning NULL:
 * block_count 0 or above 512, expert counts that do not add up, duplicate tokenizer tokens, a
 * negative norm epsilon (at the first decode). pipit checks them, and the shapes they imply,
 * before llama.cpp sees the file, and names the key and its value. Checks apply only to keys
 * that are present: a missing required key is llama.cpp's to report (it does so without
 * aborting).
 */
#define _GNU_SOURCE

#include "modelfile.h"

#include "gguf.h"
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GGUF_MAX_LAYERS  512       /* LLAMA_MAX_LAYERS */
#define GGUF_MAX_EXPERTS 1024      /* LLAMA_MAX_EXPERTS */
#define GGUF_MAX_WIDTH   (1 << 17) /* embedding, head and key widths */
#define GGUF_MAX_FF      (1 << 20) /* feed-forward width */
#define GGUF_MAX_HEADS   4096      /* attention heads */
#define GGUF_MAX_CTX     (1 << 26) /* trained context length */
#define GGUF_MAX_VOCAB   (1 << 24) /* tokenizer tokens */

static bool gguf_type_is_int(enum gguf_type t) {
    return t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_INT8 || t == GGUF_TYPE_UINT16 ||
           t == GGUF_TYPE_INT16 || t == GGUF_TYPE_UINT32 || t == GGUF_TYPE_INT32 ||
           t == GGUF_TYPE_UINT64 || t == GGUF_TYPE_INT64 || t == GGUF_TYPE_BOOL;
}

/* Element `i` of an integer value (scalar: data points at it) as int64. */
static int64_t gguf_int_at(enum gguf_type t, const void *data, size_t i) {
    const unsigned char *p = data;
    switch (t) {
        case GGUF_TYPE_UINT8:
        case GGUF_TYPE_BOOL:
            return p[i];
        case GGUF_TYPE_INT8:
            return ((const int8_t *)data)[i];
        case GGUF_TYPE_UINT16: {
            uint16_t v;
            memcpy(&v, p + 2 * i, 2);
            return v;
        }
        case GGUF_TYPE_INT16: {
            int16_t v;
            memcpy(&v, p + 2 * i, 2);
            return v;
        }
        case GGUF_TYPE_UINT32: {
            uint32_t v;
            memcpy(&v, p + 4 * i, 4);
            return v;
        }
        case GGUF_TYPE_INT32: {
            int32_t v;
            memcpy(&v, p + 4 * i, 4);
            return v;
        }
        case GGUF_TYPE_UINT64: {
            uint64_t v;
            memcpy(&v, p + 8 * i, 8);
            return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
        }
        case GGUF_TYPE_INT64: {
            int64_t v;
            memcpy(&v, p + 8 * i, 8);
            return v;
        }
        default:
            return 0;
    }
}

/* A per-layer integer key: a scalar or an array of integers. */
struct gguf_ints {
    bool present;
    enum gguf_type type;
    const void *data;
    size_t n; /* 1 for a scalar */
    char key[128];
};

static int64_t ints_at(const struct gguf_ints *v, size_t i) {
    return gguf_int_at(v->type, v->data, v->n == 1 ? 0 : i);
}

static int64_t ints_max(const struct gguf_ints *v) {
    int64_t m = INT64_MIN;
    for (size_t i = 0; i < v->n; i++) {
        int64_t x = ints_at(v, i);
        m = x > m ? x : m;
    }
    return m;
}

/* Read `<arch>.<name>`; PIPIT_ERR_CORRUPT when it is present but not an integer (or an array
 * of them when `per_layer`). */
static enum pipit_status gguf_read_ints(const struct gguf_context *g,
                                        const char *arch,
                                        const char *name,
                                        bool per_layer,
                                        struct gguf_ints *out,
                                        const char *path,
                                        struct pipit_error *err) {
    memset(out, 0, sizeof(*out));
    pipit_format(out->key, sizeof(out->key), "%s%s%s", arch, arch[0] != '\0' ? "." : "", name);
    int64_t k = gguf_find_key(g, out->key);
    if (k < 0) {
        return PIPIT_OK;
    }
    enum gguf_type t = gguf_get_kv_type(g, k);
    if (per_layer && t == GGUF_TYPE_ARRAY) {
        enum gguf_type at = gguf_get_arr_type(g, k);
        size_t n = gguf_get_arr_n(g, k);
        if (!gguf_type_is_int(at) || n == 0) {
            return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                   "engine: %s: %s is an array of %zu %s; integers are expected",
                                   path, out->key, n, gguf_type_name(at));
        }
        *out = (struct gguf_ints){true, at, gguf_get_arr_data(g, k), n, {0}};
    } else if (gguf_type_is_int(t)) {
        *out = (struct gguf_ints){true, t, gguf_get_val_data(g, k), 1, {0}};
    } else {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "engine: %s: %s has type %s; an integer is expected", path, out->key,
                               gguf_type_name(t));
    }
    pipit_format(out->key, sizeof(out->key), "%s%s%s", arch, arch[0] != '\0' ? "." : "", name);
    return PIPIT_OK;
}

/* Every value of a present key within [lo, hi]. */
static enum pipit_status gguf_check_range(const struct gguf_ints *v,
                                          int64_t lo,
                                          int64_t hi,
                                          const char *path,
                                          struct pipit_error *err) {
    if (!v->present) {
        return PIPIT_OK;
    }
    for (size_t i = 0; i < v->n; i++) {
        int64_t x = ints_at(v, i);
        if (x < lo || x > hi) {
            char where[32] = "";
            if (v->n > 1) {
                pipit_format(where, sizeof(where), "[%zu]", i);
            }
            return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                   "engine: %s: %s%s is %lld; it must be %lld to %lld", path,
                                   v->key, where, (long long)x, (long long)lo, (long long)hi);
        }
    }
    return PIPIT_OK;
}

static int cmp_u64_pair(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* The tokenizer's token list: a sane count and no token twice (llama.cpp asserts on both). */
static enum pipit_status gguf_check_tokens(const struct gguf_context *g,
                                           int64_t *n_tokens,
                                           const char *path,
                                           struct pipit_error *err) {
    *n_tokens = -1;
    int64_t k = gguf_find_key(g, "tokenizer.ggml.tokens");
    if (k < 0) {
        return PIPIT_OK;
    }
    if (gguf_get_kv_type(g, k) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, k) != GGUF_TYPE_STRING) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "engine: %s: tokenizer.ggml.tokens is not an array of strings",
                               path);
    }
    size_t n = gguf_get_arr_n(g, k);
    if (n < 1 || n > GGUF_MAX_VOCAB) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "engine: %s: tokenizer.ggml.tokens holds %zu tokens; it must be "
                               "1 to %d",
                               path, n, GGUF_MAX_VOCAB);
    }
    uint64_t *h = malloc(sizeof(uint64_t) * 2 * n);
    if (h == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = gguf_get_arr_str(g, k, i);
        uint64_t x = 14695981039346656037ull;
        for (; *s != '\0'; s++) {
            x = (x ^ (unsigned char)*s) * 1099511628211ull;
        }
        h[2 * i] = x;
        h[2 * i + 1] = i;
    }
    qsort(h, n, 2 * sizeof(uint64_t), cmp_u64_pair);
    enum pipit_status st = PIPIT_OK;
    for (size_t i = 1; i < n && st == PIPIT_OK; i++) {
        for (size_t j = i; j-- > 0 && h[2 * j] == h[2 * i];) {
            const char *a = gguf_get_arr_str(g, k, (size_t)h[2 * j + 1]);
            const char *b = gguf_get_arr_str(g, k, (size_t)h[2 * i + 1]);
            if (strcmp(a, b) == 0) {
                st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                     "engine: %s: tokenizer.ggml.tokens holds token %llu and "
                                     "token %llu with the same text",
                                     path, (unsigned long long)h[2 * j + 1],
                                     (unsigned long long)h[2 * i + 1]);
                break;
            }
        }
    }
    free(h);
    *n_tokens = (int64_t)n;
    return st;
}

/* The hyperparameters of architecture `arch` and the shapes they imply. */
static enum pipit_status
gguf_check_hparams(const char *path, const char *arch, bool vocab_only, struct pipit_error *err) {
    struct gguf_context *meta_ctx_owner = NULL;
    struct ggml_context *meta = NULL;
    struct gguf_init_params gp = {.no_alloc = true, .ctx = &meta};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    meta_ctx_owner = g;
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "engine: truncated or malformed GGUF header or metadata: %s", path);
    }
    int64_t n_tokens = -1;
    enum pipit_status st = gguf_check_tokens(g, &n_tokens, path, err);
    /* zeroed: a read that fails stops the loop below, and the keys after it stay absent */
    struct gguf_ints layers = {0}, embd = {0}, ff = {0}, head = {0}, head_kv = {0}, ctx_len = {0},
                     key_len = {0}, val_len = {0}, nextn = {0}, experts = {0}, used = {0},
                     groups = {0}, group_used = {0}, vocab_size = {0};
    if (st == PIPIT_OK && !vocab_only) {
        /* read every key first (a wrong type is an error of its own) */
        struct {
            const char *name;
            bool per_layer;
            struct gguf_ints *out;
        } keys[] = {
            {"block_count", false, &layers},
            {"embedding_length", false, &embd},
            {"feed_forward_length", true, &ff},
            {"attention.head_count", true, &head},
            {"attention.head_count_kv", true, &head_kv},
            {"context_length", false, &ctx_len},
            {"attention.key_length", false, &key_len},
            {"attention.value_length", false, &val_len},
            {"nextn_predict_layers", false, &nextn},
            {"expert_count", false, &experts},
            {"expert_used_count", true, &used},
            {"expert_group_count", false, &groups},
            {"expert_group_used_count", false, &group_used},
            {"vocab_size", false, &vocab_size},
        };
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && st == PIPIT_OK; i++) {
            st = gguf_read_ints(g, arch, keys[i].name, keys[i].per_layer, keys[i].out, path, err);
        }
        int64_t n_layer = layers.present ? ints_at(&layers, 0) : -1;
        if (st == PIPIT_OK) {
            st = gguf_check_range(&layers, 1, GGUF_MAX_LAYERS, path, err);
        }
        /* per-layer arrays have one value per block */
        struct gguf_ints *arrays[] = {&ff, &head, &head_kv, &used};
        for (size_t i = 0; i < 4 && st == PIPIT_OK; i++) {
            if (arrays[i]->present && arrays[i]->n > 1 && (int64_t)arrays[i]->n != n_layer) {
                st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                     "engine: %s: %s has %zu values, %s is %lld", path,
                                     arrays[i]->key, arrays[i]->n, layers.key, (long long)n_layer);
            }
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&embd, 1, GGUF_MAX_WIDTH, path, err);
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&ff, 0, GGUF_MAX_FF, path, err);
        }
        if (st == PIPIT_OK) {
            /* 0 heads: a layer without attention (recurrent layers of hybrid models) */
            st = gguf_check_range(&head, head.n > 1 ? 0 : 1, GGUF_MAX_HEADS, path, err);
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&head_kv, 0, GGUF_MAX_HEADS, path, err);
        }
        for (size_t i = 0; st == PIPIT_OK && head.present && head_kv.present && i < head.n; i++) {
            int64_t h = ints_at(&head, i), hk = ints_at(&head_kv, i);
            if ((h > 0 && hk == 0) || (hk > 0 && h % hk != 0)) {
                st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                     "engine: %s: %s is %lld and %s is %lld (layer %zu); the key "
                                     "and value heads must divide the query heads",
                                     path, head.key, (long long)h, head_kv.key, (long long)hk, i);
            }
        }
        /* without an explicit head width, the embedding must split evenly into heads */
        if (st == PIPIT_OK && embd.present && head.present && !key_len.present) {
            int64_t e = ints_at(&embd, 0);
            for (size_t i = 0; i < head.n && st == PIPIT_OK; i++) {
                int64_t h = ints_at(&head, i);
                if (h > 0 && (e % h != 0 || h > e)) {
                    st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                         "engine: %s: %s %lld does not split into %s %lld", path,
                                         embd.key, (long long)e, head.key, (long long)h);
                }
            }
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&key_len, 1, GGUF_MAX_WIDTH, path, err);
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&val_len, 1, GGUF_MAX_WIDTH, path, err);
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&ctx_len, 1, GGUF_MAX_CTX, path, err);
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&nextn, 0, n_layer > 0 ? n_layer : GGUF_MAX_LAYERS, path, err);
        }
        /* experts: llama.cpp asserts on each of these */
        int64_t n_exp = experts.present ? ints_at(&experts, 0) : 0;
        if (st == PIPIT_OK) {
            st = gguf_check_range(&experts, 0, GGUF_MAX_EXPERTS, path, err);
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&used, 0, n_exp, path, err);
        }
        if (st == PIPIT_OK && n_exp > 0 && (!used.present || ints_max(&used) <= 0)) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                 "engine: %s: %s is %lld but %s is %s; a model with experts uses "
                                 "at least one",
                                 path, experts.key, (long long)n_exp, used.key,
                                 used.present ? "0" : "missing");
        }
        if (st == PIPIT_OK) {
            st = gguf_check_range(&groups, 0, n_exp > 0 ? n_exp - 1 : 0, path, err);
        }
        int64_t n_groups = groups.present ? ints_at(&groups, 0) : 0;
        if (st == PIPIT_OK && n_groups > 1 &&
            (n_exp % n_groups != 0 || !group_used.present || ints_at(&group_used, 0) <= 0 ||
             ints_at(&group_used, 0) >= n_groups)) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                 "engine: %s: %s %lld, %s %lld and %s %lld do not fit together",
                                 path, experts.key, (long long)n_exp, groups.key,
                                 (long long)n_groups, group_used.key,
                                 (long long)(group_used.present ? ints_at(&group_used, 0) : -1));
        }
        /* the vocabulary: the key, the tokenizer and the embedding table agree */
        if (st == PIPIT_OK && vocab_size.present && n_tokens >= 0 &&
            ints_at(&vocab_size, 0) != n_tokens) {
            st = pipit_error_set(
                err, PIPIT_ERR_CORRUPT, "engine: %s: %s is %lld, the tokenizer has %lld tokens",
                path, vocab_size.key, (long long)ints_at(&vocab_size, 0), (long long)n_tokens);
        }
        struct ggml_tensor *te = meta != NULL ? ggml_get_tensor(meta, "token_embd.weight") : NULL;
        if (st == PIPIT_OK && te != NULL && n_tokens >= 0 && te->ne[1] != n_tokens) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                 "engine: %s: token_embd.weight has %lld rows, the tokenizer has "
                                 "%lld tokens",
                                 path, (long long)te->ne[1], (long long)n_tokens);
        }
        if (st == PIPIT_OK && te != NULL && embd.present && te->ne[0] != ints_at(&embd, 0)) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                 "engine: %s: token_embd.weight is %lld wide, %s is %lld", path,
                                 (long long)te->ne[0], embd.key, (long long)ints_at(&embd, 0));
        }
        /* norm epsilons: a negative one aborts the first decode */
        int64_t n_kv = gguf_get_n_kv(g);
        size_t alen = strlen(arch);
        for (int64_t i = 0; i < n_kv && st == PIPIT_OK; i++) {
            const char *key = gguf_get_key(g, i);
            if (strncmp(key, arch, alen) != 0 || strstr(key, "epsilon") == NULL) {
                continue;
            }
            enum gguf_type t = gguf_get_kv_type(g, i);
            double v = t == GGUF_TYPE_FLOAT32   ? gguf_get_val_f32(g, i)
                       : t == GGUF_TYPE_FLOAT64 ? gguf_get_val_f64(g, i)
                                                : 0.0;
            if (!(v >= 0.0) || isinf(v)) {
                st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                     "engine: %s: %s is %g; a norm epsilon is a small positive "
                                     "number",
                                     path, key, v);
            }
        }
    }
    if (meta != NULL) {
        ggml_free(meta);
    }
    gguf_free(meta_ctx_owner);
    return st;
}

/* Check a file before handing it to llama.cpp, which reports every failure as
 * NULL. On success `arch` holds general.architecture. */
enum pipit_status modelfile_check(const char *path,
                                  bool vocab_only,
                                  char *arch,
                                  size_t arch_size,
                                  struct pipit_error *err) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return pipit_error_set(err, PIPIT_ERR_IO, "engine: cannot open model file: %s: %s", path,
                               strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_IO, "engine: not a regular file: %s", path);
    }
    unsigned char magic[4] = {0};
    size_t got = fread(magic, 1, sizeof(magic), f);
    fclose(f);
    if (st.st_size == 0) {
        return pipit_error_set(err, PIPIT_ERR_NOT_GGUF, "engine: model file is empty: %s", path);
    }
    if (got < 4 || memcmp(magic, "GGUF", 4) != 0) {
        return pipit_error_set(err, PIPIT_ERR_NOT_GGUF,
                               "engine: not a GGUF file (magic %02x %02x %02x %02x, expected "
                               "\"GGUF\"): %s",
                               magic[0], magic[1], magic[2], magic[3], path);
    }

    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "engine: truncated or malformed GGUF header or metadata: %s", path);
    }
    /* gguf_init_from_file only reads the header: check that every tensor's bytes
     * exist. */
    uint64_t need = gguf_get_data_offset(g);
    int64_t n_tensors = gguf_get_n_tensors(g);
    for (int64_t i = 0; i < n_tensors; i++) {
        uint64_t end =
            gguf_get_data_offset(g) + gguf_get_tensor_offset(g, i) + gguf_get_tensor_size(g, i);
        if (end > need) {
            need = end;
        }
    }
    if (n_tensors > 0 && need > (uint64_t)st.st_size) {
        gguf_free(g);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "engine: truncated GGUF: tensor data needs %llu bytes, file has "
                               "%lld: %s",
                               (unsigned long long)need, (long long)st.st_size, path);
    }
    int64_t key = gguf_find_key(g, "general.architecture");
    if (key < 0 || gguf_get_kv_type(g, key) != GGUF_TYPE_STRING) {
        gguf_free(g);
        return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                               "engine: no general.architecture in %s", path);
    }
    pipit_format(arch, arch_size, "%s", gguf_get_val_str(g, key));
    gguf_free(g);
    return gguf_check_hparams(path, arch, vocab_only, err);
}

/* FNV-1a over the model's shape and the first 64 KiB of its tensor data: two random models of
 * the same shape differ, the same file copied elsewhere does not. */
uint64_t modelfile_fingerprint(const char *path, const struct pipit_model_info *info) {
    uint64_t h = 14695981039346656037ull;
    const unsigned char *p = (const unsigned char *)info;
    int64_t shape[6] = {info->n_vocab, info->n_ctx_train,       info->n_embd,
                        info->n_layer, (int64_t)info->n_params, (int64_t)info->size_bytes};
    p = (const unsigned char *)shape;
    for (size_t i = 0; i < sizeof(shape); i++) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    FILE *f = fopen(path, "rb");
    if (g != NULL && f != NULL && fseek(f, (long)gguf_get_data_offset(g), SEEK_SET) == 0) {
        unsigned char buf[4096];
        for (int block = 0; block < 16; block++) {
            size_t n = fread(buf, 1, sizeof(buf), f);
            for (size_t i = 0; i < n; i++) {
                h = (h ^ buf[i]) * 1099511628211ull;
            }
            if (n < sizeof(buf)) {
                break;
            }
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    if (g != NULL) {
        gguf_free(g);
    }
    return h;
}
