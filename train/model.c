/*
 * model.c - the trainer's tensors and files: a new llama model, or a frozen base with LoRA
 * pairs (train/model.h).
 *
 * A LoRA pair follows llama.cpp's adapter format (src/llama-adapter.cpp): for a matrix W with
 * ne [n_in, n_out] the adapter holds "<W's name>.lora_a" ne [n_in, r] and "<W's name>.lora_b"
 * ne [r, n_out], general.type "adapter", adapter.type "lora" and adapter.lora.alpha, and
 * llama.cpp adds (alpha / r) * B (A x) to W x. The trainer's graph computes exactly that, so
 * what was trained is what llama_adapter_lora_init loads.
 */
#include "model.h"

#include "datagen.h"
#include "fileio.h"
#include "gguf.h"
#include "modelgen.h"
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RMS_EPS   1e-5f
#define ROPE_BASE 10000.0f
#define TWO_PI    6.283185307179586476925

const char *const train_mat_names[TRAIN_N_MATS] = {
    "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down",
};

/* ============================================================================
 * a new model */

static struct ggml_tensor *
new_param(struct train_model *m, const char *name, int64_t ne0, int64_t ne1) {
    struct ggml_tensor *t = ne1 > 0 ? ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, ne0, ne1)
                                    : ggml_new_tensor_1d(m->ctx, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    ggml_set_param(t);
    m->params[m->n_params++] = t;
    return t;
}

bool train_model_create(struct train_model *m,
                        const struct pipit_train_params *p,
                        int32_t n_vocab,
                        ggml_backend_t backend) {
    memset(m, 0, sizeof(*m));
    m->n_vocab = n_vocab;
    m->n_embd = p->n_embd;
    m->n_layer = p->n_layer;
    m->n_head = p->n_head;
    m->n_head_kv = p->n_head;
    m->n_ff = p->n_ff;
    m->rope_base = ROPE_BASE;
    m->rms_eps = RMS_EPS;
    const size_t n_tensors = 3 + 9 * (size_t)m->n_layer;
    m->params = calloc(n_tensors, sizeof(*m->params));
    struct ggml_init_params ip = {
        .mem_size = (n_tensors + 4) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    m->ctx = m->params != NULL ? ggml_init(ip) : NULL;
    if (m->ctx == NULL) {
        return false;
    }
    const int64_t d = m->n_embd;
    m->tok_embd = new_param(m, "token_embd.weight", d, m->n_vocab);
    m->out_norm = new_param(m, "output_norm.weight", d, 0);
    m->output.w = new_param(m, "output.weight", d, m->n_vocab);
    for (int i = 0; i < m->n_layer; i++) {
        struct train_layer *l = &m->l[i];
        char name[64];
        /* the order of the tensors is the order of the random draws: keep it */
        pipit_format(name, sizeof(name), "blk.%d.attn_norm.weight", i);
        l->attn_norm = new_param(m, name, d, 0);
        for (int k = 0; k < TRAIN_N_MATS; k++) {
            if (k == TRAIN_MAT_GATE) {
                pipit_format(name, sizeof(name), "blk.%d.ffn_norm.weight", i);
                l->ffn_norm = new_param(m, name, d, 0);
            }
            int64_t n_in = k == TRAIN_MAT_DOWN ? m->n_ff : d;
            int64_t n_out = k == TRAIN_MAT_GATE || k == TRAIN_MAT_UP ? m->n_ff : d;
            pipit_format(name, sizeof(name), "blk.%d.%s.weight", i, train_mat_names[k]);
            l->m[k].w = new_param(m, name, n_in, n_out);
        }
    }
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx, backend);
    return m->buf != NULL;
}

static void fill_normal(uint64_t *rng, float *buf, int64_t n, float std) {
    for (int64_t k = 0; k < n; k += 2) {
        double u1 = train_rng_unit(rng) + 1e-12;
        double u2 = train_rng_unit(rng);
        double r = sqrt(-2.0 * log(u1));
        buf[k] = (float)(r * cos(TWO_PI * u2)) * std;
        if (k + 1 < n) {
            buf[k + 1] = (float)(r * sin(TWO_PI * u2)) * std;
        }
    }
}

void train_model_init_weights(struct train_model *m, uint64_t seed) {
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int i = 0; i < m->n_params; i++) {
        struct ggml_tensor *t = m->params[i];
        int64_t n = ggml_nelements(t);
        float *buf = malloc(sizeof(float) * (size_t)n);
        if (buf == NULL) {
            continue;
        }
        const char *name = ggml_get_name(t);
        size_t len = strlen(name);
        bool lora_b = len > 7 && strcmp(name + len - 7, ".lora_b") == 0;
        bool lora_a = len > 7 && strcmp(name + len - 7, ".lora_a") == 0;
        float std = 0.02f;
        if (lora_a) {
            std = 1.0f / sqrtf((float)t->ne[0]);
        } else if (strstr(name, "attn_output") != NULL || strstr(name, "ffn_down") != NULL) {
            std = 0.02f / sqrtf(2.0f * (float)m->n_layer);
        }
        fill_normal(&rng, buf, n, std); /* drawn for norms too: the same stream as before */
        if (ggml_n_dims(t) == 1 || lora_b) {
            /* unit norms; B = 0: an untrained adapter changes nothing */
            for (int64_t k = 0; k < n; k++) {
                buf[k] = lora_b ? 0.0f : 1.0f;
            }
        }
        ggml_backend_tensor_set(t, buf, 0, ggml_nbytes(t));
        free(buf);
    }
}

/* ============================================================================
 * a frozen base with LoRA pairs */

/* A u32/i32 key, or an array of them that holds one value (per-layer keys some converters
 * write); false when absent or not one value. */
static bool kv_int(const struct gguf_context *g, const char *key, int32_t *out) {
    int64_t k = gguf_find_key(g, key);
    if (k < 0) {
        return false;
    }
    enum gguf_type t = gguf_get_kv_type(g, k);
    if (t == GGUF_TYPE_UINT32) {
        *out = (int32_t)gguf_get_val_u32(g, k);
        return true;
    }
    if (t == GGUF_TYPE_INT32) {
        *out = gguf_get_val_i32(g, k);
        return true;
    }
    if (t == GGUF_TYPE_ARRAY && gguf_get_arr_n(g, k) > 0 &&
        (gguf_get_arr_type(g, k) == GGUF_TYPE_UINT32 ||
         gguf_get_arr_type(g, k) == GGUF_TYPE_INT32)) {
        const int32_t *v = gguf_get_arr_data(g, k);
        for (size_t i = 1; i < gguf_get_arr_n(g, k); i++) {
            if (v[i] != v[0]) {
                return false;
            }
        }
        *out = v[0];
        return true;
    }
    return false;
}

static float kv_float(const struct gguf_context *g, const char *key, float dflt) {
    int64_t k = gguf_find_key(g, key);
    return k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_FLOAT32 ? gguf_get_val_f32(g, k) : dflt;
}

static const char *kv_str(const struct gguf_context *g, const char *key) {
    int64_t k = gguf_find_key(g, key);
    return k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_STRING ? gguf_get_val_str(g, k) : NULL;
}

/* The type a frozen matrix is kept in: its own when the CPU backend multiplies and
 * back-propagates through it (mul_mat and out_prod), else F32. */
static enum ggml_type frozen_type(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K:
            return t;
        default:
            return GGML_TYPE_F32;
    }
}

/* Which matrices p->lora_targets names ("attn_q,ffn_up", "all"; NULL = all seven of a block)
 * into adapt[] (TRAIN_N_MATS block matrices, then the output matrix). */
static enum pipit_status
parse_targets(const char *list, bool adapt[TRAIN_N_MATS + 1], struct pipit_error *err) {
    memset(adapt, 0, sizeof(bool) * (TRAIN_N_MATS + 1));
    if (list == NULL || strcmp(list, "all") == 0) {
        for (int k = 0; k < TRAIN_N_MATS; k++) {
            adapt[k] = true;
        }
        return PIPIT_OK;
    }
    const char *s = list;
    while (*s != '\0') {
        size_t n = strcspn(s, ",");
        bool found = false;
        for (int k = 0; k <= TRAIN_N_MATS && !found; k++) {
            const char *name = k < TRAIN_N_MATS ? train_mat_names[k] : "output";
            if (strlen(name) == n && strncmp(s, name, n) == 0) {
                adapt[k] = found = true;
            }
        }
        if (!found) {
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "train: LoRA target '%.*s' is not one of attn_q, attn_k, "
                                   "attn_v, attn_output, ffn_gate, ffn_up, ffn_down, output, all",
                                   (int)n, s);
        }
        s += n;
        s += *s == ',' ? 1 : 0;
    }
    return PIPIT_OK;
}

/* The base's hyperparameters into m, refusing what the trainer's graph does not compute as
 * libllama does. */
static enum pipit_status base_hparams(struct train_model *m,
                                      const struct gguf_context *g,
                                      const char *path,
                                      struct pipit_error *err) {
    const char *arch = kv_str(g, "general.architecture");
    if (arch == NULL || strcmp(arch, "llama") != 0) {
        return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                               "train: --base %s: architecture '%s'; the trainer's graph is "
                               "libllama's 'llama' (docs/training.md)",
                               path, arch != NULL ? arch : "(none)");
    }
    const char *type = kv_str(g, "general.type");
    if (type != NULL && strcmp(type, "adapter") == 0) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "train: --base %s is an adapter, not a model", path);
    }
    int32_t n_head_kv = 0, key_len = 0, val_len = 0, n_rot = 0, n_expert = 0, n_ctx = 0;
    if (!kv_int(g, "llama.embedding_length", &m->n_embd) ||
        !kv_int(g, "llama.block_count", &m->n_layer) ||
        !kv_int(g, "llama.attention.head_count", &m->n_head) ||
        !kv_int(g, "llama.feed_forward_length", &m->n_ff)) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "train: --base %s: llama.embedding_length, block_count, "
                               "attention.head_count or feed_forward_length missing or not one "
                               "value for every layer",
                               path);
    }
    m->n_head_kv = kv_int(g, "llama.attention.head_count_kv", &n_head_kv) ? n_head_kv : m->n_head;
    m->n_ctx_train = kv_int(g, "llama.context_length", &n_ctx) ? n_ctx : 0;
    m->rope_base = kv_float(g, "llama.rope.freq_base", ROPE_BASE);
    m->rms_eps = kv_float(g, "llama.attention.layer_norm_rms_epsilon", RMS_EPS);
    if (m->n_layer < 1 || m->n_layer > TRAIN_MAX_LAYERS || m->n_embd < 1 || m->n_head < 1 ||
        m->n_head_kv < 1 || m->n_head % m->n_head_kv != 0 || m->n_embd % m->n_head != 0 ||
        (m->n_embd / m->n_head) % 2 != 0 || m->n_ff < 1) {
        return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                               "train: --base %s: shape not supported (layers %d of at most %d, "
                               "embedding %d, heads %d/%d kv, feed-forward %d)",
                               path, m->n_layer, TRAIN_MAX_LAYERS, m->n_embd, m->n_head,
                               m->n_head_kv, m->n_ff);
    }
    const int32_t hd = m->n_embd / m->n_head;
    const char *scaling = kv_str(g, "llama.rope.scaling.type");
    if ((kv_int(g, "llama.attention.key_length", &key_len) && key_len != hd) ||
        (kv_int(g, "llama.attention.value_length", &val_len) && val_len != hd) ||
        (kv_int(g, "llama.rope.dimension_count", &n_rot) && n_rot != hd) ||
        (kv_int(g, "llama.expert_count", &n_expert) && n_expert > 0) ||
        (scaling != NULL && strcmp(scaling, "none") != 0) ||
        gguf_find_tensor(g, "rope_freqs.weight") >= 0) {
        return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                               "train: --base %s: a head size other than embedding / heads, "
                               "partial rope, rope scaling or experts: not in the trainer's "
                               "graph (docs/training.md)",
                               path);
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        const char *name = gguf_get_tensor_name(g, i);
        size_t len = strlen(name);
        if (len > 5 && strcmp(name + len - 5, ".bias") == 0) {
            return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                                   "train: --base %s: tensor %s: biases are not in the "
                                   "trainer's graph",
                                   path, name);
        }
    }
    return PIPIT_OK;
}

enum pipit_status train_model_check_base(const char *path, struct pipit_error *err) {
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "train: --base %s: not a readable GGUF file",
                               path);
    }
    struct train_model m;
    memset(&m, 0, sizeof(m));
    enum pipit_status st = base_hparams(&m, g, path, err);
    gguf_free(g);
    return st;
}

/* The base tensor `name` of shape [ne0, ne1] (ne1 = 0: a vector) from `data`, or NULL. */
static struct ggml_tensor *base_tensor(struct ggml_context *data,
                                       const char *path,
                                       const char *name,
                                       int64_t ne0,
                                       int64_t ne1,
                                       struct pipit_error *err) {
    struct ggml_tensor *t = ggml_get_tensor(data, name);
    if (t == NULL || t->ne[0] != ne0 || t->ne[1] != (ne1 > 0 ? ne1 : 1) || t->ne[2] != 1 ||
        t->ne[3] != 1) {
        pipit_error_set(err, PIPIT_ERR_CORRUPT,
                        "train: --base %s: tensor %s is %s (want %lld x %lld)", path, name,
                        t == NULL ? "missing" : "of another shape", (long long)ne0,
                        (long long)(ne1 > 0 ? ne1 : 1));
        return NULL;
    }
    return t;
}

/* A frozen copy of `src` in m->ctx (values set after allocation). */
static struct ggml_tensor *frozen(struct train_model *m, const struct ggml_tensor *src) {
    enum ggml_type t = ggml_n_dims(src) < 2 ? GGML_TYPE_F32 : frozen_type(src->type);
    struct ggml_tensor *dst = ggml_new_tensor(m->ctx, t, 2, src->ne);
    ggml_set_name(dst, ggml_get_name(src));
    return dst;
}

static void add_pair(struct train_model *m, struct train_mat *mat) {
    char name[GGML_MAX_NAME + 16];
    pipit_format(name, sizeof(name), "%s.lora_a", ggml_get_name(mat->w));
    mat->a = new_param(m, name, mat->w->ne[0], m->rank);
    pipit_format(name, sizeof(name), "%s.lora_b", ggml_get_name(mat->w));
    mat->b = new_param(m, name, m->rank, mat->w->ne[1]);
}

/* Copy the values of `src` (any type with a to_float) into the frozen tensor `dst`. */
static bool copy_frozen(struct ggml_tensor *dst, const struct ggml_tensor *src) {
    if (dst->type == src->type) {
        ggml_backend_tensor_set(dst, src->data, 0, ggml_nbytes(dst));
        return true;
    }
    const struct ggml_type_traits *tt = ggml_get_type_traits(src->type);
    if (tt == NULL || tt->to_float == NULL) {
        return false;
    }
    int64_t n = ggml_nelements(src);
    float *f = malloc(sizeof(float) * (size_t)n);
    if (f == NULL) {
        return false;
    }
    tt->to_float(src->data, f, n);
    ggml_backend_tensor_set(dst, f, 0, ggml_nbytes(dst));
    free(f);
    return true;
}

enum pipit_status train_model_from_base(struct train_model *m,
                                        const struct pipit_train_params *p,
                                        ggml_backend_t backend,
                                        struct pipit_error *err) {
    memset(m, 0, sizeof(*m));
    m->lora = true;
    m->rank = p->lora_rank;
    m->alpha = p->lora_alpha;
    m->lora_scale = p->lora_alpha / (float)p->lora_rank;
    bool adapt[TRAIN_N_MATS + 1];
    enum pipit_status st = parse_targets(p->lora_targets, adapt, err);
    if (st != PIPIT_OK) {
        return st;
    }
    struct ggml_context *data = NULL;
    struct gguf_init_params gp = {.no_alloc = false, .ctx = &data};
    struct gguf_context *g = gguf_init_from_file(p->base, gp);
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "train: --base %s: not a readable GGUF file",
                               p->base);
    }
    st = base_hparams(m, g, p->base, err);
    const char *gname = kv_str(g, "general.name");
    const char *slash = strrchr(p->base, '/');
    pipit_format(m->base_name, sizeof(m->base_name), "%s",
                 gname != NULL   ? gname
                 : slash != NULL ? slash + 1
                                 : p->base);
    /* the base's shape and a sample of its weights, as the agent fingerprints a model: an
     * adapter is refused on another model of the same name (a retrained base) */
    struct pipit_model *bm = NULL;
    if (st == PIPIT_OK && pipit_model_load(p->base, NULL, &bm, NULL) == PIPIT_OK) {
        snprintf(m->base_fingerprint, sizeof(m->base_fingerprint), "%016llx",
                 (unsigned long long)pipit_model_fingerprint(bm));
        pipit_model_free(bm);
    }
    const int64_t d = m->n_embd, d_kv = d / m->n_head * m->n_head_kv, ff = m->n_ff;
    struct ggml_tensor *src_embd = NULL, *src_norm = NULL, *src_out = NULL;
    if (st == PIPIT_OK) {
        struct ggml_tensor *e = ggml_get_tensor(data, "token_embd.weight");
        m->n_vocab = e != NULL ? (int32_t)e->ne[1] : 0;
        src_embd = base_tensor(data, p->base, "token_embd.weight", d, m->n_vocab, err);
        src_norm =
            src_embd != NULL ? base_tensor(data, p->base, "output_norm.weight", d, 0, err) : NULL;
        src_out = ggml_get_tensor(data, "output.weight") != NULL && src_norm != NULL
                      ? base_tensor(data, p->base, "output.weight", d, m->n_vocab, err)
                      : NULL;
        if (src_norm == NULL ||
            (ggml_get_tensor(data, "output.weight") != NULL && src_out == NULL)) {
            st = err != NULL ? err->status : PIPIT_ERR_CORRUPT;
        } else if (src_out == NULL && adapt[TRAIN_N_MATS]) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "train: --base %s ties its output to the token embeddings: "
                                 "'output' cannot be a LoRA target",
                                 p->base);
        }
    }
    const size_t n_tensors = 3 + 9 * (size_t)m->n_layer;
    m->params = st == PIPIT_OK
                    ? calloc(2 * (TRAIN_N_MATS * (size_t)m->n_layer + 1), sizeof(*m->params))
                    : NULL;
    struct ggml_init_params ip = {
        .mem_size = (3 * n_tensors + 8) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    m->ctx = m->params != NULL ? ggml_init(ip) : NULL;
    if (st == PIPIT_OK && m->ctx == NULL) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
    }
    /* the frozen base, then the pairs (their order is the order of the random draws) */
    struct ggml_tensor *srcs[3 + 9 * TRAIN_MAX_LAYERS], *dsts[3 + 9 * TRAIN_MAX_LAYERS];
    int n_copy = 0;
    if (st == PIPIT_OK) {
        srcs[n_copy] = src_embd;
        dsts[n_copy++] = m->tok_embd = frozen(m, src_embd);
        srcs[n_copy] = src_norm;
        dsts[n_copy++] = m->out_norm = frozen(m, src_norm);
        m->output.w = m->tok_embd;
        if (src_out != NULL) {
            srcs[n_copy] = src_out;
            dsts[n_copy++] = m->output.w = frozen(m, src_out);
        }
    }
    for (int i = 0; i < m->n_layer && st == PIPIT_OK; i++) {
        struct train_layer *l = &m->l[i];
        char name[64];
        struct ggml_tensor *s;
        pipit_format(name, sizeof(name), "blk.%d.attn_norm.weight", i);
        if ((s = base_tensor(data, p->base, name, d, 0, err)) == NULL) {
            st = err != NULL ? err->status : PIPIT_ERR_CORRUPT;
            break;
        }
        srcs[n_copy] = s;
        dsts[n_copy++] = l->attn_norm = frozen(m, s);
        pipit_format(name, sizeof(name), "blk.%d.ffn_norm.weight", i);
        if ((s = base_tensor(data, p->base, name, d, 0, err)) == NULL) {
            st = err != NULL ? err->status : PIPIT_ERR_CORRUPT;
            break;
        }
        srcs[n_copy] = s;
        dsts[n_copy++] = l->ffn_norm = frozen(m, s);
        for (int k = 0; k < TRAIN_N_MATS; k++) {
            int64_t n_in = k == TRAIN_MAT_DOWN ? ff : d;
            int64_t n_out = k == TRAIN_MAT_K || k == TRAIN_MAT_V       ? d_kv
                            : k == TRAIN_MAT_GATE || k == TRAIN_MAT_UP ? ff
                                                                       : d;
            pipit_format(name, sizeof(name), "blk.%d.%s.weight", i, train_mat_names[k]);
            if ((s = base_tensor(data, p->base, name, n_in, n_out, err)) == NULL) {
                st = err != NULL ? err->status : PIPIT_ERR_CORRUPT;
                break;
            }
            srcs[n_copy] = s;
            dsts[n_copy++] = l->m[k].w = frozen(m, s);
        }
    }
    for (int i = 0; i < m->n_layer && st == PIPIT_OK; i++) {
        for (int k = 0; k < TRAIN_N_MATS; k++) {
            if (adapt[k]) {
                add_pair(m, &m->l[i].m[k]);
            }
        }
    }
    if (st == PIPIT_OK && adapt[TRAIN_N_MATS]) {
        add_pair(m, &m->output);
    }
    if (st == PIPIT_OK && m->n_params == 0) {
        st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "train: no LoRA targets");
    }
    if (st == PIPIT_OK) {
        m->buf = ggml_backend_alloc_ctx_tensors(m->ctx, backend);
        if (m->buf == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_NOMEM,
                                 "train: cannot allocate the base %s (%.0f MiB)", p->base,
                                 (double)ggml_get_mem_size(data) / 1048576.0);
        }
    }
    for (int i = 0; i < n_copy && st == PIPIT_OK; i++) {
        if (!copy_frozen(dsts[i], srcs[i])) {
            st = pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                                 "train: --base %s: tensor %s: type %s cannot be read", p->base,
                                 ggml_get_name(srcs[i]), ggml_type_name(srcs[i]->type));
        }
    }
    gguf_free(g);
    ggml_free(data);
    return st;
}

/* ============================================================================
 * files */

/* The storage type of a parameter in the exported file: matrices in `wt`, vectors in F32. */
static enum ggml_type export_type(const struct ggml_tensor *t, enum pipit_weight_type wt) {
    if (ggml_n_dims(t) < 2 || wt == PIPIT_WEIGHTS_F32) {
        return GGML_TYPE_F32;
    }
    enum ggml_type q = wt == PIPIT_WEIGHTS_F16 ? GGML_TYPE_F16 : GGML_TYPE_Q8_0;
    /* rows shorter than a Q8_0 block (an adapter's B has rank-long rows) are stored F16 */
    return t->ne[0] % ggml_blck_size(q) == 0 ? q : GGML_TYPE_F16;
}

/* Add a tensor named `name` of `shape`'s shape to `g`, its F32 values `f32` stored as `type`
 * (converted with ggml_quantize_chunk unless F32). `host` holds the data until the write. */
static void add_tensor_as(struct ggml_context *host,
                          struct gguf_context *g,
                          const char *name,
                          const struct ggml_tensor *shape,
                          const float *f32,
                          enum ggml_type type) {
    struct ggml_tensor *t = ggml_new_tensor(host, type, ggml_n_dims(shape), shape->ne);
    ggml_set_name(t, name);
    if (type == GGML_TYPE_F32) {
        memcpy(t->data, f32, ggml_nbytes(t));
    } else {
        ggml_quantize_chunk(type, f32, t->data, 0, ggml_nrows(shape), shape->ne[0], NULL);
    }
    gguf_add_tensor(g, t);
}

/* Write `g` to `path` whole or not at all (src/fileio.h). */
static enum pipit_status
gguf_write_atomic(struct gguf_context *g, const char *path, struct pipit_error *err) {
    struct fileio_tmp w;
    bool ok = fileio_begin(&w, path) && gguf_write_to_file_ptr(g, w.f, false);
    if (!fileio_commit(&w, ok, FILEIO_DURABLE)) {
        return pipit_error_set(err, PIPIT_ERR_IO, "train: cannot write %s: %s", path,
                               strerror(errno));
    }
    return PIPIT_OK;
}

/* llama's file type (enum llama_ftype) of a model whose matrices are `t`: 0 all F32, 1 mostly
 * F16, 7 mostly Q8_0 (1-D tensors stay F32 in all of them). */
static uint32_t llama_file_type(enum ggml_type t) {
    return t == GGML_TYPE_Q8_0 ? 7u : t == GGML_TYPE_F16 ? 1u : 0u;
}

/* The type of the matrices of `g` (the first 2-D tensor that is not F32; F32 when all are). */
static enum ggml_type matrix_type(struct ggml_context *host, struct gguf_context *g) {
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        struct ggml_tensor *t = ggml_get_tensor(host, gguf_get_tensor_name(g, i));
        if (t != NULL && ggml_n_dims(t) >= 2 && t->type != GGML_TYPE_F32) {
            return t->type;
        }
    }
    return GGML_TYPE_F32;
}

/* An adapter's header: what llama_adapter_lora_init reads, and which base it was trained on. */
static struct gguf_context *adapter_gguf(const struct train_model *m, const char *name) {
    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_str(g, "general.architecture", "llama");
    gguf_set_val_str(g, "general.type", "adapter");
    gguf_set_val_str(g, "general.name", name);
    gguf_set_val_str(g, "adapter.type", "lora");
    gguf_set_val_f32(g, "adapter.lora.alpha", m->alpha);
    gguf_set_val_u32(g, "pipit.lora.rank", (uint32_t)m->rank);
    gguf_set_val_str(g, "pipit.lora.base", m->base_name);
    if (m->base_fingerprint[0] != '\0') {
        gguf_set_val_str(g, "pipit.lora.base_fingerprint", m->base_fingerprint);
    }
    gguf_set_val_u32(g, "pipit.lora.base_n_vocab", (uint32_t)m->n_vocab);
    return g;
}

enum pipit_status train_model_write(const struct train_model *m,
                                    const struct pipit_train_params *p,
                                    enum pipit_weight_type wt,
                                    bool tracker_role,
                                    int32_t n_ctx_train,
                                    int64_t step,
                                    const char *path,
                                    struct pipit_error *err) {
    char name[300];
    snprintf(name, sizeof(name), "pipit-%s%s",
             p->pack_name != NULL ? p->pack_name
             : p->systems != NULL ? "base"
                                  : "camera",
             m->lora ? "-lora" : "");
    struct gguf_context *g = NULL;
    if (m->lora) { /* the pairs follow `wt` too: measured no change in dev F1 (training.md) */
        g = adapter_gguf(m, name);
    } else {
        g = modelgen_tokenizer_gguf(p->vocab_path, NULL, err);
        if (g == NULL) {
            return err != NULL ? err->status : PIPIT_ERR_CORRUPT;
        }
        struct modelgen_llama h = {
            .name = name,
            .n_ctx_train = n_ctx_train,
            .n_embd = m->n_embd,
            .n_layer = m->n_layer,
            .n_ff = m->n_ff,
            .n_head = m->n_head,
            .n_head_kv = m->n_head_kv,
            .n_vocab = m->n_vocab,
            .rope_base = m->rope_base,
            .rms_eps = m->rms_eps,
        };
        modelgen_set_llama_kv(g, &h);
    }
    gguf_set_val_str(g, "pipit.prompt.system", p->system);
    gguf_set_val_str(g, "pipit.prompt.tools", "none");
    if (p->systems != NULL) {
        gguf_set_val_str(g, "pipit.prompt.systems", p->systems);
    }
    if (p->pack_name != NULL) {
        gguf_set_val_str(g, "pipit.pack.name", p->pack_name);
    }
    if (p->pack_hash != NULL) {
        gguf_set_val_str(g, "pipit.pack.hash", p->pack_hash);
    }
    if (tracker_role) { /* trained on State-Tracker examples too (src/tracker.c) */
        gguf_set_val_str(g, "pipit.prompt.tracker", "role");
    }
    gguf_set_val_u32(g, "pipit.train.step", (uint32_t)step);
    gguf_set_val_u32(g, "pipit.train.seed", (uint32_t)p->seed);
    /* the longest prompt + answer the model was trained on: the agent keeps its prompts within
     * it (docs/training.md) */
    gguf_set_val_i32(g, "pipit.train.n_ctx", p->n_ctx);

    size_t bytes = 0;
    for (int i = 0; i < m->n_params; i++) {
        bytes += ggml_nbytes(m->params[i]);
    }
    struct ggml_init_params ip = {
        .mem_size = bytes + (size_t)m->n_params * (ggml_tensor_overhead() + 64) + 1024,
        .mem_buffer = NULL,
        .no_alloc = false,
    };
    struct ggml_context *host = ggml_init(ip);
    if (host == NULL) {
        gguf_free(g);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
    }
    float *f32 = NULL;
    size_t f32_cap = 0;
    enum pipit_status st = PIPIT_OK;
    for (int i = 0; i < m->n_params && st == PIPIT_OK; i++) {
        struct ggml_tensor *src = m->params[i];
        if (ggml_nbytes(src) > f32_cap) {
            free(f32);
            f32_cap = ggml_nbytes(src);
            f32 = malloc(f32_cap);
        }
        if (f32 == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
            break;
        }
        ggml_backend_tensor_get(src, f32, 0, ggml_nbytes(src));
        add_tensor_as(host, g, ggml_get_name(src), src, f32, export_type(src, wt));
    }
    free(f32);
    if (st == PIPIT_OK) {
        if (!m->lora) {
            gguf_set_val_u32(g, "general.file_type", llama_file_type(matrix_type(host, g)));
        }
        st = gguf_write_atomic(g, path, err);
    }
    gguf_free(g);
    ggml_free(host);
    return st;
}

enum pipit_status pipit_train_convert(const char *in_path,
                                      const char *out_path,
                                      enum pipit_weight_type type,
                                      int32_t n_ctx_trained,
                                      struct pipit_error *err) {
    pipit_error_clear(err);
    if (in_path == NULL || out_path == NULL || type < PIPIT_WEIGHTS_F32 ||
        type > PIPIT_WEIGHTS_Q8_0 || n_ctx_trained < 0) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "train: convert: bad argument");
    }
    struct ggml_context *data = NULL;
    struct gguf_init_params gp = {.no_alloc = false, .ctx = &data};
    struct gguf_context *in = gguf_init_from_file(in_path, gp);
    if (in == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "train: %s: not a readable GGUF file",
                               in_path);
    }
    int64_t n_t = gguf_get_n_tensors(in);
    size_t bytes = 0;
    for (int64_t i = 0; i < n_t; i++) {
        struct ggml_tensor *t = ggml_get_tensor(data, gguf_get_tensor_name(in, i));
        bytes += t != NULL ? ggml_nbytes(t) : 0;
    }
    struct ggml_init_params ip = {
        .mem_size = bytes + (size_t)n_t * (ggml_tensor_overhead() + 64) + 1024,
        .mem_buffer = NULL,
        .no_alloc = false,
    };
    struct ggml_context *host = ggml_init(ip);
    struct gguf_context *out = gguf_init_empty();
    enum pipit_status st = host != NULL && out != NULL
                               ? PIPIT_OK
                               : pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
    if (st == PIPIT_OK) {
        gguf_set_kv(out, in);
        if (n_ctx_trained > 0 && gguf_find_key(in, "pipit.train.n_ctx") < 0) {
            gguf_set_val_i32(out, "pipit.train.n_ctx", n_ctx_trained);
        }
    }
    for (int64_t i = 0; st == PIPIT_OK && i < n_t; i++) {
        const char *name = gguf_get_tensor_name(in, i);
        struct ggml_tensor *src = ggml_get_tensor(data, name);
        if (src == NULL || src->data == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT, "train: %s: tensor %s has no data",
                                 in_path, name);
            break;
        }
        if (src->type == GGML_TYPE_F32) {
            add_tensor_as(host, out, name, src, src->data, export_type(src, type));
        } else { /* already converted: as it is */
            struct ggml_tensor *t = ggml_dup_tensor(host, src);
            ggml_set_name(t, name);
            memcpy(t->data, src->data, ggml_nbytes(src));
            gguf_add_tensor(out, t);
        }
    }
    if (st == PIPIT_OK) {
        int64_t k = gguf_find_key(in, "general.type");
        bool adapter = k >= 0 && gguf_get_kv_type(in, k) == GGUF_TYPE_STRING &&
                       strcmp(gguf_get_val_str(in, k), "adapter") == 0;
        if (!adapter) { /* a model's file type names its matrices; an adapter has none */
            gguf_set_val_u32(out, "general.file_type", llama_file_type(matrix_type(host, out)));
        }
        st = gguf_write_atomic(out, out_path, err);
    }
    if (out != NULL) {
        gguf_free(out);
    }
    ggml_free(host);
    gguf_free(in);
    ggml_free(data);
    return st;
}

enum pipit_status train_model_load_weights(struct train_model *m,
                                           const char *path,
                                           int64_t *step,
                                           struct pipit_error *err) {
    struct ggml_context *data = NULL;
    struct gguf_init_params gp = {.no_alloc = false, .ctx = &data};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (g == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "train: cannot read model: %s", path);
    }
    enum pipit_status st = PIPIT_OK;
    float *tmp = NULL;
    for (int i = 0; i < m->n_params && st == PIPIT_OK; i++) {
        struct ggml_tensor *dst = m->params[i];
        struct ggml_tensor *src = ggml_get_tensor(data, ggml_get_name(dst));
        const struct ggml_type_traits *tt = src != NULL ? ggml_get_type_traits(src->type) : NULL;
        if (src == NULL || !ggml_are_same_shape(src, dst) ||
            (src->type != GGML_TYPE_F32 && (tt == NULL || tt->to_float == NULL))) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                 "train: %s does not match the model: %s (shape or type)", path,
                                 ggml_get_name(dst));
        } else if (src->type == GGML_TYPE_F32) {
            ggml_backend_tensor_set(dst, src->data, 0, ggml_nbytes(dst));
        } else {
            int64_t n = ggml_nelements(dst);
            float *t = realloc(tmp, (size_t)n * sizeof(float));
            if (t == NULL) {
                st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
                break;
            }
            tmp = t;
            tt->to_float(src->data, tmp, n);
            ggml_backend_tensor_set(dst, tmp, 0, ggml_nbytes(dst));
        }
    }
    free(tmp);
    if (step != NULL) {
        int64_t k = gguf_find_key(g, "pipit.train.step");
        *step = k >= 0 ? (int64_t)gguf_get_val_u32(g, k) : 0;
    }
    gguf_free(g);
    ggml_free(data);
    return st;
}

void train_model_free(struct train_model *m) {
    if (m->buf != NULL) {
        ggml_backend_buffer_free(m->buf);
    }
    ggml_free(m->ctx);
    free(m->params);
    m->buf = NULL;
    m->ctx = NULL;
    m->params = NULL;
}
