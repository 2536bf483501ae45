/*
 * trainer.c - train a small llama on a generated data set with ggml_opt, and write the GGUF.
 *
 * The model is libllama's "llama" architecture written directly as a ggml graph (libllama's
 * own llama_opt does not update token_embd/attn_k/attn_v in this version: LLAMA_NOTES.md):
 *
 *   x = get_rows(token_embd, tokens)                                   [n_embd, T*B]
 *   per block: x += attn_output(softmax_causal(rope(q) . rope(k)^T / sqrt(hd)) . v)
 *              x += ffn_down(silu(ffn_gate(h)) * ffn_up(h))             h = rms_norm(x) * w
 *   h = rms_norm(x) * output_norm, gathered at the answer positions only   [n_embd, A*B]
 *   logits = output . h, times a 0/1 row mask                           [n_vocab, A*B]
 *
 * Loss only on the answer: each sequence contributes A "answer slots" (its answer tokens and
 * EOS, predicted from the position before each). Unused slots have their logits multiplied by
 * zero and a uniform label, so softmax - label = 0: they add the constant log(n_vocab) to the
 * reported cross-entropy (removed again for the progress numbers) and nothing to the
 * gradients. ggml's cross-entropy backward assumes labels that sum to one, so an all-zero label
 * would not mask anything.
 *
 * Tokenization is libllama's own: a throwaway model with the same tokenizer is loaded
 * vocab-only through pipit's engine, so training sees exactly the tokens inference will see.
 * The prompt "{system}\nState: ...\nUser: ...\nAssistant: " (with BOS) and the answer are
 * tokenized separately, as the agent does when it prefills the prompt and generates the rest.
 *
 * Threads: one CPU backend with exactly params->n_threads threads.
 */
#define _POSIX_C_SOURCE 200809L

#include "datagen.h"
#include "fileio.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-opt.h"
#include "ggml.h"
#include "gguf.h"
#include "modelgen.h"
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RMS_EPS   1e-5f
#define ROPE_BASE 10000.0f
#define TWO_PI    6.283185307179586476925

struct pipit_train_params pipit_train_default_params(void) {
    struct pipit_train_params p = {
        .vocab_path = NULL,
        .system = "camera",
        .n_embd = 192,
        .n_layer = 3,
        .n_head = 4,
        .n_ff = 512,
        .n_ctx = 128,
        .n_answer = 64,
        .n_batch = 8,
        .n_steps = 8000,
        .max_seconds = 0.0,
        .lr = 4e-4f,
        .lr_min = 4e-5f,
        .warmup = 200,
        .weight_decay = 0.01f,
        .seed = 1,
        .n_threads = 1,
        .checkpoint = NULL,
        .checkpoint_every = 500,
        .resume = NULL,
        .init = NULL,
        .progress = NULL,
        .progress_user_data = NULL,
        .progress_every = 50,
        .should_stop = NULL,
        .should_stop_user_data = NULL,
        .pack_name = NULL,
        .pack_hash = NULL,
    };
    return p;
}

/* ============================================================================
 * model */

struct layer {
    struct ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
};

#define MAX_LAYERS 16

struct model {
    int32_t n_vocab, n_embd, n_layer, n_head, n_ff;
    struct ggml_tensor *tok_embd, *out_norm, *output;
    struct layer l[MAX_LAYERS];
    struct ggml_tensor *params[3 + 9 * MAX_LAYERS];
    int n_params;
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
};

static struct ggml_tensor *new_param(struct model *m, const char *name, int64_t ne0, int64_t ne1) {
    struct ggml_tensor *t = ne1 > 0 ? ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, ne0, ne1)
                                    : ggml_new_tensor_1d(m->ctx, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    ggml_set_param(t);
    m->params[m->n_params++] = t;
    return t;
}

static bool model_create(struct model *m, ggml_backend_t backend) {
    struct ggml_init_params ip = {
        .mem_size = (size_t)(3 + 9 * m->n_layer + 4) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    m->ctx = ggml_init(ip);
    if (m->ctx == NULL) {
        return false;
    }
    const int64_t d = m->n_embd;
    m->tok_embd = new_param(m, "token_embd.weight", d, m->n_vocab);
    m->out_norm = new_param(m, "output_norm.weight", d, 0);
    m->output = new_param(m, "output.weight", d, m->n_vocab);
    for (int i = 0; i < m->n_layer; i++) {
        struct layer *l = &m->l[i];
        char name[64];
#define P(field, suffix, a, b)                                       \
    pipit_format(name, sizeof(name), "blk.%d." suffix ".weight", i); \
    l->field = new_param(m, name, a, b)
        P(attn_norm, "attn_norm", d, 0);
        P(wq, "attn_q", d, d);
        P(wk, "attn_k", d, d);
        P(wv, "attn_v", d, d);
        P(wo, "attn_output", d, d);
        P(ffn_norm, "ffn_norm", d, 0);
        P(w_gate, "ffn_gate", d, m->n_ff);
        P(w_up, "ffn_up", d, m->n_ff);
        P(w_down, "ffn_down", m->n_ff, d);
#undef P
    }
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx, backend);
    return m->buf != NULL;
}

static void model_init_weights(struct model *m, uint64_t seed) {
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 12345;
    for (int i = 0; i < m->n_params; i++) {
        struct ggml_tensor *t = m->params[i];
        int64_t n = ggml_nelements(t);
        float *buf = malloc(sizeof(float) * (size_t)n);
        if (buf == NULL) {
            continue;
        }
        const char *name = ggml_get_name(t);
        bool norm = ggml_n_dims(t) == 1;
        float std = 0.02f;
        if (strstr(name, "attn_output") != NULL || strstr(name, "ffn_down") != NULL) {
            std = 0.02f / sqrtf(2.0f * (float)m->n_layer);
        }
        for (int64_t k = 0; k < n; k += 2) {
            double u1 = train_rng_unit(&rng) + 1e-12;
            double u2 = train_rng_unit(&rng);
            double r = sqrt(-2.0 * log(u1));
            buf[k] = norm ? 1.0f : (float)(r * cos(TWO_PI * u2)) * std;
            if (k + 1 < n) {
                buf[k + 1] = norm ? 1.0f : (float)(r * sin(TWO_PI * u2)) * std;
            }
        }
        ggml_backend_tensor_set(t, buf, 0, ggml_nbytes(t));
        free(buf);
    }
}

/* ============================================================================
 * graph */

struct inputs {
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *tokens;  /* I32 [T*B] */
    struct ggml_tensor *pos;     /* I32 [T*B]: position of each token inside its example */
    struct ggml_tensor *kq_mask; /* F32 [T, T, 1, B]: 0 = may attend, -inf = may not */
    struct ggml_tensor *gather;  /* I32 [A*B]: flat positions of the answer slots */
    struct ggml_tensor *mask;    /* F32 [1, A*B]: 1 used slot, 0 padding */
};

static struct ggml_tensor *build_forward(struct ggml_context *ctx,
                                         const struct model *m,
                                         const struct inputs *in,
                                         int32_t T,
                                         int32_t B) {
    const int64_t d = m->n_embd, H = m->n_head, hd = d / H;
    const float kq_scale = 1.0f / sqrtf((float)hd);
    const int64_t NTOK = (int64_t)T * B;
    struct ggml_tensor *x = ggml_get_rows(ctx, m->tok_embd, in->tokens);
    for (int i = 0; i < m->n_layer; i++) {
        const struct layer *l = &m->l[i];
        struct ggml_tensor *h = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), l->attn_norm);
        /* rope per token (positions restart with every packed example), then 4D */
        struct ggml_tensor *q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, l->wq, h), hd, H, NTOK);
        struct ggml_tensor *k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, l->wk, h), hd, H, NTOK);
        struct ggml_tensor *v = ggml_reshape_4d(ctx, ggml_mul_mat(ctx, l->wv, h), hd, H, T, B);
        q = ggml_rope_ext(ctx, q, in->pos, NULL, (int)hd, 0, 0, ROPE_BASE, 1.0f, 0.0f, 1.0f, 0.0f,
                          0.0f);
        k = ggml_rope_ext(ctx, k, in->pos, NULL, (int)hd, 0, 0, ROPE_BASE, 1.0f, 0.0f, 1.0f, 0.0f,
                          0.0f);
        q = ggml_permute(ctx, ggml_reshape_4d(ctx, q, hd, H, T, B), 0, 2, 1, 3); /* [hd,T,H,B] */
        k = ggml_permute(ctx, ggml_reshape_4d(ctx, k, hd, H, T, B), 0, 2, 1, 3);
        struct ggml_tensor *kq = ggml_mul_mat(ctx, k, q); /* [T_k, T_q, H, B] */
        kq = ggml_soft_max_ext(ctx, kq, in->kq_mask, kq_scale, 0.0f);
        struct ggml_tensor *vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3)); /* [T,hd,H,B] */
        struct ggml_tensor *kqv = ggml_mul_mat(ctx, vt, kq);      /* [hd, T_q, H, B] */
        kqv = ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3)); /* [hd, H, T, B] */
        kqv = ggml_reshape_2d(ctx, kqv, d, (int64_t)T * B);
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, l->wo, kqv));
        h = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), l->ffn_norm);
        struct ggml_tensor *g = ggml_silu(ctx, ggml_mul_mat(ctx, l->w_gate, h));
        struct ggml_tensor *u = ggml_mul_mat(ctx, l->w_up, h);
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, l->w_down, ggml_mul(ctx, g, u)));
    }
    x = ggml_mul(ctx, ggml_rms_norm(ctx, x, RMS_EPS), m->out_norm);
    x = ggml_get_rows(ctx, x, in->gather); /* [d, A*B] */
    struct ggml_tensor *logits = ggml_mul_mat(ctx, m->output, x);
    return ggml_mul(ctx, logits, in->mask);
}

/* ============================================================================
 * export and resume */

/* The storage type of a parameter in the exported file: matrices in `wt`, vectors in F32. */
static enum ggml_type export_type(const struct ggml_tensor *t, enum pipit_weight_type wt) {
    if (ggml_n_dims(t) < 2 || wt == PIPIT_WEIGHTS_F32) {
        return GGML_TYPE_F32;
    }
    enum ggml_type q = wt == PIPIT_WEIGHTS_F16 ? GGML_TYPE_F16 : GGML_TYPE_Q8_0;
    return t->ne[0] % ggml_blck_size(q) == 0 ? q : GGML_TYPE_F32;
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

static enum pipit_status model_write(const struct model *m,
                                     const struct pipit_train_params *p,
                                     enum pipit_weight_type wt,
                                     bool tracker_role,
                                     int32_t n_ctx_train,
                                     int64_t step,
                                     const char *path,
                                     struct pipit_error *err) {
    struct gguf_context *g = modelgen_tokenizer_gguf(p->vocab_path, NULL, err);
    if (g == NULL) {
        return err != NULL ? err->status : PIPIT_ERR_CORRUPT;
    }
    char name[300];
    snprintf(name, sizeof(name), "pipit-%s", p->pack_name != NULL ? p->pack_name : "camera");
    struct modelgen_llama h = {
        .name = name,
        .n_ctx_train = n_ctx_train,
        .n_embd = m->n_embd,
        .n_layer = m->n_layer,
        .n_ff = m->n_ff,
        .n_head = m->n_head,
        .n_head_kv = m->n_head,
        .n_vocab = m->n_vocab,
        .rope_base = ROPE_BASE,
        .rms_eps = RMS_EPS,
    };
    modelgen_set_llama_kv(g, &h);
    gguf_set_val_str(g, "pipit.prompt.system", p->system);
    gguf_set_val_str(g, "pipit.prompt.tools", "none");
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
        gguf_set_val_u32(g, "general.file_type", llama_file_type(matrix_type(host, g)));
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
        gguf_set_val_u32(out, "general.file_type", llama_file_type(matrix_type(host, out)));
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

/* Load the parameters of `m` from the GGUF at `path` (a checkpoint or an exported model:
 * F32 tensors copied, F16/Q8_0 ones dequantized). `step`, when not NULL, receives the file's
 * pipit.train.step (0 when absent). */
static enum pipit_status
model_load_weights(struct model *m, const char *path, int64_t *step, struct pipit_error *err) {
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

/* ============================================================================
 * data */

struct tokenized {
    int32_t *tok; /* all sequences back to back: BOS prompt answer EOS */
    int64_t n_tok, cap_tok;
    int64_t *start;    /* per example: offset into tok */
    int32_t *len;      /* sequence length */
    int32_t *n_prompt; /* BOS + prompt tokens */
    int32_t n;
};

static void tokenized_free(struct tokenized *t) {
    free(t->tok);
    free(t->start);
    free(t->len);
    free(t->n_prompt);
}

/* Tokenize the training split with the vocabulary's own libllama tokenizer; an example longer
 * than a row loses its oldest memory lines until it fits (counted in *n_trimmed). */
static enum pipit_status tokenize_all(const struct pipit_train_params *p,
                                      const struct pipit_dataset *ds,
                                      struct tokenized *out,
                                      int32_t *n_vocab,
                                      int32_t *n_skipped,
                                      int32_t *n_trimmed,
                                      struct pipit_error *err) {
    char tmp[4096];
    pipit_format(tmp, sizeof(tmp), "%s/pipit-train-vocab-%ld.gguf",
                 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (long)getpid());
    struct pipit_make_model_params mp = pipit_make_model_default_params();
    mp.vocab_path = p->vocab_path;
    mp.n_embd = 8;
    mp.n_layer = 1;
    mp.n_head = 1;
    mp.n_head_kv = 1;
    mp.n_ff = 8;
    enum pipit_status st = pipit_make_model(&mp, tmp, err);
    if (st != PIPIT_OK) {
        return st;
    }
    struct pipit_model_params lp = pipit_model_default_params();
    lp.vocab_only = true;
    struct pipit_model *vm = NULL;
    st = pipit_model_load(tmp, &lp, &vm, err);
    remove(tmp);
    if (st != PIPIT_OK) {
        return st;
    }
    struct pipit_model_info info;
    pipit_model_get_info(vm, &info);
    *n_vocab = info.n_vocab;
    const int32_t eos = info.token_eos;

    int32_t n = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    memset(out, 0, sizeof(*out));
    out->start = malloc(sizeof(int64_t) * (size_t)n);
    out->len = malloc(sizeof(int32_t) * (size_t)n);
    out->n_prompt = malloc(sizeof(int32_t) * (size_t)n);
    if (out->start == NULL || out->len == NULL || out->n_prompt == NULL) {
        pipit_model_free(vm);
        tokenized_free(out);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
    }
    *n_skipped = 0;
    *n_trimmed = 0;
    int32_t buf[1024];
    for (int32_t i = 0; i < n; i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        /* too long for a row: drop the oldest memory lines, as the agent does (DESIGN: the
         * agent never builds a prompt longer than the model was trained on) */
        const char *memory = ex.memory;
        int32_t np = 0, na = 0, len = 0;
        for (int drop = 0;; drop++) {
            ex.memory = datagen_memory_skip(memory, drop);
            char *prompt = pipit_train_prompt_example(p->system, &ex);
            if (prompt == NULL) {
                st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
                break;
            }
            np = pipit_tokenize(vm, prompt, true, false, buf, 1024);
            free(prompt);
            na = np > 0 ? pipit_tokenize(vm, ex.output, false, false, buf + np, 1023 - np) : -1;
            len = np > 0 && na > 0 ? np + na + 1 : 0;
            /* inputs are the first len-1 tokens; targets the answer and EOS */
            if (len == 0 || len - 1 <= p->n_ctx || ex.memory[0] == '\0') {
                *n_trimmed += drop > 0 && len > 0 && len - 1 <= p->n_ctx ? 1 : 0;
                break;
            }
        }
        if (st != PIPIT_OK) {
            break;
        }
        if (len == 0 || len - 1 > p->n_ctx || na + 1 > p->n_answer) {
            (*n_skipped)++;
            continue;
        }
        buf[len - 1] = eos;
        if (out->n_tok + len > out->cap_tok) {
            int64_t cap = out->cap_tok > 0 ? out->cap_tok * 2 : 1 << 20;
            int32_t *t = realloc(out->tok, sizeof(int32_t) * (size_t)cap);
            if (t == NULL) {
                st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
                break;
            }
            out->tok = t;
            out->cap_tok = cap;
        }
        memcpy(out->tok + out->n_tok, buf, sizeof(int32_t) * (size_t)len);
        out->start[out->n] = out->n_tok;
        out->len[out->n] = len;
        out->n_prompt[out->n] = np;
        out->n++;
        out->n_tok += len;
    }
    pipit_model_free(vm);
    if (st == PIPIT_OK && out->n == 0) {
        st = pipit_error_set(err, PIPIT_ERR_TOKENIZE,
                             "train: no training example fits n_ctx %d / n_answer %d",
                             (int)p->n_ctx, (int)p->n_answer);
    }
    if (st != PIPIT_OK) {
        tokenized_free(out);
    }
    return st;
}

/* Host-side buffers of one batch. */
struct batch_bufs {
    int32_t *tok;    /* [T*B] */
    int32_t *pos;    /* [T*B] */
    int32_t *seg;    /* [T*B] example index within its row, unique negatives for padding */
    float *kq;       /* [T*T*B] attention mask */
    int32_t *gather; /* [A*B] */
    float *mask;     /* [A*B] */
    float *labels;   /* [n_vocab*A*B] */
};

/* Pack examples into B rows of T tokens (and A answer slots) each, in shuffled order; an
 * example that does not fit in what is left of a row starts the next row. Attention stays
 * inside each example (block-diagonal causal mask) and positions restart at 0, so a packed
 * example sees exactly what it would see alone. */
static void fill_batch(const struct tokenized *data,
                       int32_t T,
                       int32_t B,
                       int32_t A,
                       int32_t n_vocab,
                       int32_t *order,
                       int32_t *cursor,
                       int32_t *pending,
                       uint64_t *rng,
                       const struct batch_bufs *bb,
                       int32_t *n_used,
                       int64_t *n_tokens) {
    const float uniform = 1.0f / (float)n_vocab;
    for (int32_t b = 0; b < B; b++) {
        int32_t used = 0, a_used = 0, seg = 0;
        for (;;) {
            if (*pending < 0) {
                if (*cursor >= data->n) {
                    for (int32_t i = data->n - 1; i > 0; i--) { /* Fisher-Yates */
                        int32_t j = (int32_t)train_rng_below(rng, (uint32_t)(i + 1));
                        int32_t t = order[i];
                        order[i] = order[j];
                        order[j] = t;
                    }
                    *cursor = 0;
                }
                *pending = order[(*cursor)++];
            }
            const int32_t e = *pending;
            const int32_t len = data->len[e], np = data->n_prompt[e];
            const int32_t n_in = len - 1, n_tgt = len - np;
            if (used + n_in > T || a_used + n_tgt > A) {
                break; /* never on an empty row: longer examples were dropped */
            }
            const int32_t *seq = data->tok + data->start[e];
            for (int32_t i = 0; i < n_in; i++) {
                bb->tok[b * T + used + i] = seq[i];
                bb->pos[b * T + used + i] = i;
                bb->seg[b * T + used + i] = seg;
            }
            for (int32_t a = 0; a < n_tgt; a++) {
                int32_t at = np - 1 + a; /* predicts seq[at + 1] */
                int32_t slot = b * A + a_used + a;
                float *row = bb->labels + (size_t)slot * (size_t)n_vocab;
                bb->gather[slot] = b * T + used + at;
                bb->mask[slot] = 1.0f;
                memset(row, 0, sizeof(float) * (size_t)n_vocab);
                row[seq[at + 1]] = 1.0f;
            }
            used += n_in;
            a_used += n_tgt;
            seg++;
            *n_used += n_tgt;
            *n_tokens += n_in;
            *pending = -1;
        }
        for (int32_t i = used; i < T; i++) {
            bb->tok[b * T + i] = 2;
            bb->pos[b * T + i] = 0;
            bb->seg[b * T + i] = -1 - i;
        }
        for (int32_t a = a_used; a < A; a++) {
            int32_t slot = b * A + a;
            float *row = bb->labels + (size_t)slot * (size_t)n_vocab;
            bb->gather[slot] = b * T;
            bb->mask[slot] = 0.0f;
            for (int32_t k = 0; k < n_vocab; k++) {
                row[k] = uniform;
            }
        }
        for (int32_t q = 0; q < T; q++) {
            float *mrow = bb->kq + ((size_t)b * T + q) * T;
            const int32_t sq = bb->seg[b * T + q];
            for (int32_t k = 0; k < T; k++) {
                mrow[k] = (k <= q && bb->seg[b * T + k] == sq) ? 0.0f : -INFINITY;
            }
        }
    }
}

/* ============================================================================
 * optimizer schedule */

struct schedule {
    const struct pipit_train_params *p;
    int64_t step;
    double time_frac; /* elapsed / max_seconds of the decay part, 0 without a time budget */
    float lr;         /* last value handed out */
};

/* Linear warm-up, then a cosine from lr to lr_min over the rest of the steps, or of the time
 * budget when that ends first: t is the later of the two fractions. */
static float schedule_lr(const struct pipit_train_params *p, int64_t step, double time_frac) {
    if (step < p->warmup) {
        return p->lr * (float)(step + 1) / (float)p->warmup;
    }
    double span = (double)(p->n_steps - p->warmup);
    double t = span > 0 ? (double)(step - p->warmup) / span : 1.0;
    if (time_frac > t) {
        t = time_frac;
    }
    if (t > 1.0) {
        t = 1.0;
    }
    return p->lr_min + (p->lr - p->lr_min) * (float)(0.5 * (1.0 + cos(3.14159265358979 * t)));
}

static struct ggml_opt_optimizer_params get_opt_params(void *ud) {
    struct schedule *s = ud;
    struct ggml_opt_optimizer_params op = ggml_opt_get_default_optimizer_params(NULL);
    s->lr = schedule_lr(s->p, s->step, s->time_frac);
    op.adamw.alpha = s->lr;
    op.adamw.beta1 = 0.9f;
    op.adamw.beta2 = 0.99f;
    op.adamw.eps = 1e-8f;
    op.adamw.wd = s->p->weight_decay;
    return op;
}

/* ============================================================================
 * backend */

static ggml_backend_t cpu_backend(int32_t n_threads) {
    if (pipit_backend_init(NULL) != PIPIT_OK) {
        return NULL;
    }
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (dev == NULL) {
        return NULL;
    }
    ggml_backend_t be = ggml_backend_dev_init(dev, NULL);
    if (be == NULL) {
        return NULL;
    }
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    void *fn = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    if (fn != NULL) {
        ggml_backend_set_n_threads_t set_threads;
        memcpy(&set_threads, &fn, sizeof(set_threads));
        set_threads(be, n_threads);
    }
    return be;
}

/* ============================================================================
 * training */

static bool params_ok(const struct pipit_train_params *p) {
    return p->vocab_path != NULL && p->system != NULL && p->n_embd >= 8 && p->n_embd <= 4096 &&
           p->n_layer >= 1 && p->n_layer <= MAX_LAYERS && p->n_head >= 1 &&
           p->n_embd % p->n_head == 0 && (p->n_embd / p->n_head) % 2 == 0 && p->n_ff >= 1 &&
           p->n_ctx >= 8 && p->n_ctx <= 4096 && p->n_answer >= 2 && p->n_answer <= p->n_ctx &&
           p->n_batch >= 1 && p->n_batch <= 4096 && p->n_steps >= 1 && p->lr > 0.0f &&
           p->lr_min > 0.0f && p->lr_min <= p->lr && p->warmup >= 1 && p->weight_decay >= 0.0f &&
           p->weight_decay <= 1.0f && p->n_threads >= 1 && p->n_threads <= 512 &&
           p->checkpoint_every >= 1 && p->progress_every >= 1;
}

enum pipit_status pipit_train(const struct pipit_train_params *params,
                              const struct pipit_dataset *ds,
                              const char *out_path,
                              struct pipit_train_result *result,
                              struct pipit_error *err) {
    pipit_error_clear(err);
    if (params == NULL || ds == NULL || out_path == NULL || !params_ok(params)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "train: missing vocab/data/output or a size out of range "
                               "(n_embd divisible by n_head with an even head size, n_answer <= "
                               "n_ctx, lr_min <= lr, n_layer <= %d)",
                               MAX_LAYERS);
    }
    const struct pipit_train_params *p = params;
    struct pipit_train_result res;
    memset(&res, 0, sizeof(res));

    struct tokenized data;
    int32_t n_vocab = 0;
    enum pipit_status st =
        tokenize_all(p, ds, &data, &n_vocab, &res.n_skipped, &res.n_trimmed, err);
    if (st != PIPIT_OK) {
        return st;
    }
    res.n_vocab = n_vocab;
    res.tokens_per_ex = (double)data.n_tok / (double)data.n;
    bool tracker_role = false;
    for (int32_t i = 0; i < ds->n[PIPIT_SPLIT_TRAIN] && !tracker_role; i++) {
        tracker_role = ds->ex[PIPIT_SPLIT_TRAIN][i].tracker;
    }

    ggml_backend_t backend = cpu_backend(p->n_threads);
    if (backend == NULL) {
        tokenized_free(&data);
        return pipit_error_set(err, PIPIT_ERR_BACKEND, "train: no ggml CPU backend");
    }
    struct model m;
    memset(&m, 0, sizeof(m));
    m.n_vocab = n_vocab;
    m.n_embd = p->n_embd;
    m.n_layer = p->n_layer;
    m.n_head = p->n_head;
    m.n_ff = p->n_ff;
    const int32_t T = p->n_ctx, B = p->n_batch, A = p->n_answer;
    struct inputs in;
    memset(&in, 0, sizeof(in));
    struct ggml_context *ctx_compute = NULL;
    ggml_backend_sched_t sched = NULL;
    ggml_opt_context_t opt = NULL;
    int32_t *tok_buf = NULL, *gather_buf = NULL, *pos_buf = NULL, *seg_buf = NULL;
    float *mask_buf = NULL, *label_buf = NULL, *kq_buf = NULL;
    int32_t *order = NULL;
    int64_t step = 0;

    if (!model_create(&m, backend)) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: cannot allocate the model");
        goto done;
    }
    model_init_weights(&m, p->seed);
    if (p->resume != NULL) {
        st = model_load_weights(&m, p->resume, &step, err);
    } else if (p->init != NULL) {
        st = model_load_weights(&m, p->init, NULL, err);
    }
    if (st != PIPIT_OK) {
        goto done;
    }
    for (int i = 0; i < m.n_params; i++) {
        res.n_params += (uint64_t)ggml_nelements(m.params[i]);
    }

    {
        struct ggml_init_params ip = {
            .mem_size = 8 * ggml_tensor_overhead(),
            .mem_buffer = NULL,
            .no_alloc = true,
        };
        in.ctx = ggml_init(ip);
        in.tokens = ggml_new_tensor_1d(in.ctx, GGML_TYPE_I32, (int64_t)T * B);
        in.pos = ggml_new_tensor_1d(in.ctx, GGML_TYPE_I32, (int64_t)T * B);
        in.kq_mask = ggml_new_tensor_4d(in.ctx, GGML_TYPE_F32, T, T, 1, B);
        ggml_set_input(in.kq_mask);
        in.gather = ggml_new_tensor_1d(in.ctx, GGML_TYPE_I32, (int64_t)A * B);
        in.mask = ggml_new_tensor_2d(in.ctx, GGML_TYPE_F32, 1, (int64_t)A * B);
        ggml_set_name(in.tokens, "tokens");
        ggml_set_input(in.tokens);
        ggml_set_input(in.pos);
        ggml_set_input(in.gather);
        ggml_set_input(in.mask);
        in.buf = ggml_backend_alloc_ctx_tensors(in.ctx, backend);
    }
    {
        size_t n_nodes = GGML_DEFAULT_GRAPH_SIZE;
        struct ggml_init_params ip = {
            .mem_size = 4 * n_nodes * ggml_tensor_overhead() +
                        4 * ggml_graph_overhead_custom(n_nodes, true),
            .mem_buffer = NULL,
            .no_alloc = true,
        };
        ctx_compute = ggml_init(ip);
    }
    if (in.buf == NULL || ctx_compute == NULL) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    struct ggml_tensor *logits = build_forward(ctx_compute, &m, &in, T, B);
    sched = ggml_backend_sched_new(&backend, NULL, 1, GGML_DEFAULT_GRAPH_SIZE * 4, false, false);
    struct schedule sch = {.p = p, .step = step, .time_frac = 0.0, .lr = 0.0f};
    struct ggml_opt_params op = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    op.ctx_compute = ctx_compute;
    op.inputs = in.tokens;
    op.outputs = logits;
    op.opt_period = 1;
    op.get_opt_pars = get_opt_params;
    op.get_opt_pars_ud = &sch;
    op.optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    opt = ggml_opt_init(op);

    tok_buf = malloc(sizeof(int32_t) * (size_t)T * (size_t)B);
    pos_buf = malloc(sizeof(int32_t) * (size_t)T * (size_t)B);
    seg_buf = malloc(sizeof(int32_t) * (size_t)T * (size_t)B);
    kq_buf = malloc(sizeof(float) * (size_t)T * (size_t)T * (size_t)B);
    gather_buf = malloc(sizeof(int32_t) * (size_t)A * (size_t)B);
    mask_buf = malloc(sizeof(float) * (size_t)A * (size_t)B);
    label_buf = malloc(sizeof(float) * (size_t)n_vocab * (size_t)A * (size_t)B);
    order = malloc(sizeof(int32_t) * (size_t)data.n);
    if (opt == NULL || tok_buf == NULL || pos_buf == NULL || gather_buf == NULL ||
        mask_buf == NULL || label_buf == NULL || order == NULL || seg_buf == NULL ||
        kq_buf == NULL) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < data.n; i++) {
        order[i] = i;
    }

    uint64_t rng = p->seed * 0xD1B54A32D192ED03ull + 99;
    int32_t cursor = data.n; /* forces a shuffle first */
    int32_t pending = -1;
    const float log_v = logf((float)n_vocab);
    struct batch_bufs bufs = {tok_buf, pos_buf, seg_buf, kq_buf, gather_buf, mask_buf, label_buf};
    double t0 = pipit_now_ms();
    double period_loss = 0.0;
    int64_t period_tokens_ans = 0;
    bool first_report = true;
    const int64_t step0 = step;
    double t_warm = -1.0; /* seconds into the run when the warm-up ended */
    struct ggml_tensor *labels = ggml_opt_labels(opt);
    struct ggml_tensor *loss_t = ggml_opt_loss(opt);

    while (step < p->n_steps) {
        int32_t n_used = 0;
        fill_batch(&data, T, B, A, n_vocab, order, &cursor, &pending, &rng, &bufs, &n_used,
                   &res.tokens);
        ggml_backend_tensor_set(in.tokens, tok_buf, 0, ggml_nbytes(in.tokens));
        ggml_backend_tensor_set(in.pos, pos_buf, 0, ggml_nbytes(in.pos));
        ggml_backend_tensor_set(in.kq_mask, kq_buf, 0, ggml_nbytes(in.kq_mask));
        ggml_backend_tensor_set(in.gather, gather_buf, 0, ggml_nbytes(in.gather));
        ggml_backend_tensor_set(in.mask, mask_buf, 0, ggml_nbytes(in.mask));
        ggml_backend_tensor_set(labels, label_buf, 0, ggml_nbytes(labels));
        sch.step = step;
        if (p->max_seconds > 0) {
            double now = (pipit_now_ms() - t0) / 1000.0;
            if (step >= p->warmup && t_warm < 0) {
                t_warm = now;
            }
            double left = p->max_seconds - (t_warm < 0 ? 0.0 : t_warm);
            sch.time_frac = t_warm < 0 ? 0.0 : left > 0 ? (now - t_warm) / left : 1.0;
        }
        ggml_opt_alloc(opt, true);
        ggml_opt_eval(opt, NULL);
        float loss = 0.0f;
        ggml_backend_tensor_get(loss_t, &loss, 0, sizeof(loss));
        /* back to the mean over used slots */
        double rows = (double)A * B;
        period_loss += (double)loss * rows - (double)(rows - n_used) * log_v;
        period_tokens_ans += n_used;
        step++;

        double elapsed = (pipit_now_ms() - t0) / 1000.0;
        bool timed_out = p->max_seconds > 0 && elapsed >= p->max_seconds;
        bool asked = p->should_stop != NULL && p->should_stop(p->should_stop_user_data);
        bool last = step >= p->n_steps || timed_out || asked;
        if (last && step < p->n_steps) {
            res.stopped = asked ? 2 : 1;
        }
        bool ckpt = p->checkpoint != NULL && (step % p->checkpoint_every == 0 || last);
        if (ckpt) {
            st = model_write(&m, p, PIPIT_WEIGHTS_F32, tracker_role, T < 256 ? 256 : T, step,
                             p->checkpoint, err);
            if (st != PIPIT_OK) {
                goto done;
            }
        }
        if (step % p->progress_every == 0 || last) {
            float mean = period_tokens_ans > 0 ? (float)(period_loss / period_tokens_ans) : 0.0f;
            if (first_report) {
                res.loss_first = mean;
                first_report = false;
            }
            res.loss_last = mean;
            if (p->progress != NULL) {
                struct pipit_train_progress pr = {
                    .step = step,
                    .n_steps = p->n_steps,
                    .loss = mean,
                    .lr = sch.lr,
                    .tok_per_s = elapsed > 0 ? (double)res.tokens / elapsed : 0.0,
                    .elapsed_s = elapsed,
                    .eta_s = elapsed / (double)(step - step0) * (double)(p->n_steps - step),
                    .checkpointed = ckpt,
                };
                if (p->max_seconds > 0 && pr.eta_s > p->max_seconds - elapsed) {
                    pr.eta_s = p->max_seconds - elapsed;
                }
                p->progress(&pr, p->progress_user_data);
            }
            period_loss = 0.0;
            period_tokens_ans = 0;
        }
        if (last) {
            break;
        }
    }
    res.steps = step;
    res.seconds = (pipit_now_ms() - t0) / 1000.0;
    res.tok_per_s = res.seconds > 0 ? (double)res.tokens / res.seconds : 0.0;
    st = model_write(&m, p, p->weight_type, tracker_role, T < 256 ? 256 : T, step, out_path, err);

done:
    free(tok_buf);
    free(pos_buf);
    free(seg_buf);
    free(kq_buf);
    free(gather_buf);
    free(mask_buf);
    free(label_buf);
    free(order);
    ggml_opt_free(opt);
    if (sched != NULL) {
        ggml_backend_sched_free(sched);
    }
    ggml_free(ctx_compute);
    if (in.buf != NULL) {
        ggml_backend_buffer_free(in.buf);
    }
    ggml_free(in.ctx);
    if (m.buf != NULL) {
        ggml_backend_buffer_free(m.buf);
    }
    ggml_free(m.ctx);
    ggml_backend_free(backend);
    tokenized_free(&data);
    if (result != NULL) {
        *result = res;
    }
    return st;
}
