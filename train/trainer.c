/*
 * trainer.c - train a small llama (or a LoRA adapter on a frozen base) on a generated data set
 *             with ggml's AdamW, and write the GGUF.
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
#include "model.h"
#include "modelgen.h"
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        .systems = NULL,
        .base = NULL,
        .lora_rank = 8,
        .lora_alpha = 16.0f,
        .lora_targets = NULL,
        .reference_backward = false,
    };
    return p;
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

/* w x, plus llama.cpp's LoRA term scale * b (a x) when the matrix has a pair */
static struct ggml_tensor *mm(struct ggml_context *ctx,
                              const struct train_model *m,
                              const struct train_mat *w,
                              struct ggml_tensor *x) {
    struct ggml_tensor *y = ggml_mul_mat(ctx, w->w, x);
    if (w->a == NULL) {
        return y;
    }
    struct ggml_tensor *ab = ggml_mul_mat(ctx, w->b, ggml_mul_mat(ctx, w->a, x));
    return ggml_add(ctx, y, ggml_scale(ctx, ab, m->lora_scale));
}

/* Grouped-query attention: each of the Hkv heads of `t` (contiguous [a, b, Hkv, B]) repeated
 * `g` times in a row, [a, b, Hkv * g, B], so query head j reads kv head j / g as libllama's
 * graph does. (mul_mat's own broadcast over heads has no backward with a batch dimension.) */
static struct ggml_tensor *
repeat_heads(struct ggml_context *ctx, struct ggml_tensor *t, int64_t g) {
    const int64_t a = t->ne[0], b = t->ne[1], h = t->ne[2], n = t->ne[3];
    struct ggml_tensor *r =
        ggml_repeat_4d(ctx, ggml_reshape_4d(ctx, t, a * b, 1, h, n), a * b, g, h, n);
    return ggml_reshape_4d(ctx, r, a, b, h * g, n);
}

static struct ggml_tensor *build_forward(struct ggml_context *ctx,
                                         const struct train_model *m,
                                         const struct inputs *in,
                                         int32_t T,
                                         int32_t B) {
    const int64_t d = m->n_embd, H = m->n_head, H_kv = m->n_head_kv, hd = d / H;
    const float kq_scale = 1.0f / sqrtf((float)hd);
    const int64_t NTOK = (int64_t)T * B;
    const float eps = m->rms_eps, rb = m->rope_base;
    struct ggml_tensor *x = ggml_get_rows(ctx, m->tok_embd, in->tokens);
    for (int i = 0; i < m->n_layer; i++) {
        const struct train_layer *l = &m->l[i];
        struct ggml_tensor *h = ggml_mul(ctx, ggml_rms_norm(ctx, x, eps), l->attn_norm);
        /* rope per token (positions restart with every packed example), then 4D */
        struct ggml_tensor *q =
            ggml_reshape_3d(ctx, mm(ctx, m, &l->m[TRAIN_MAT_Q], h), hd, H, NTOK);
        struct ggml_tensor *k =
            ggml_reshape_3d(ctx, mm(ctx, m, &l->m[TRAIN_MAT_K], h), hd, H_kv, NTOK);
        struct ggml_tensor *v =
            ggml_reshape_4d(ctx, mm(ctx, m, &l->m[TRAIN_MAT_V], h), hd, H_kv, T, B);
        q = ggml_rope_ext(ctx, q, in->pos, NULL, (int)hd, 0, 0, rb, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        k = ggml_rope_ext(ctx, k, in->pos, NULL, (int)hd, 0, 0, rb, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
        q = ggml_permute(ctx, ggml_reshape_4d(ctx, q, hd, H, T, B), 0, 2, 1, 3); /* [hd,T,H,B] */
        k = ggml_permute(ctx, ggml_reshape_4d(ctx, k, hd, H_kv, T, B), 0, 2, 1, 3);
        struct ggml_tensor *vt =
            ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3)); /* [T,hd,Hkv,B] */
        if (H_kv != H) {
            k = repeat_heads(ctx, ggml_cont(ctx, k), H / H_kv);
            vt = repeat_heads(ctx, vt, H / H_kv);
        }
        struct ggml_tensor *kq = ggml_mul_mat(ctx, k, q); /* [T_k, T_q, H, B] */
        kq = ggml_soft_max_ext(ctx, kq, in->kq_mask, kq_scale, 0.0f);
        struct ggml_tensor *kqv = ggml_mul_mat(ctx, vt, kq);      /* [hd, T_q, H, B] */
        kqv = ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3)); /* [hd, H, T, B] */
        kqv = ggml_reshape_2d(ctx, kqv, d, (int64_t)T * B);
        x = ggml_add(ctx, x, mm(ctx, m, &l->m[TRAIN_MAT_O], kqv));
        h = ggml_mul(ctx, ggml_rms_norm(ctx, x, eps), l->ffn_norm);
        struct ggml_tensor *g = ggml_silu(ctx, mm(ctx, m, &l->m[TRAIN_MAT_GATE], h));
        struct ggml_tensor *u = mm(ctx, m, &l->m[TRAIN_MAT_UP], h);
        x = ggml_add(ctx, x, mm(ctx, m, &l->m[TRAIN_MAT_DOWN], ggml_mul(ctx, g, u)));
    }
    x = ggml_mul(ctx, ggml_rms_norm(ctx, x, eps), m->out_norm);
    x = ggml_get_rows(ctx, x, in->gather); /* [d, A*B] */
    struct ggml_tensor *logits = mm(ctx, m, &m->output, x);
    return ggml_mul(ctx, logits, in->mask);
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
    struct pipit_model_params lp = pipit_model_default_params();
    lp.vocab_only = true;
    struct pipit_model *vm = NULL;
    enum pipit_status st = PIPIT_OK;
    if (p->base != NULL) { /* an adapter: the base's own tokenizer */
        st = pipit_model_load(p->base, &lp, &vm, err);
    } else { /* a throwaway model with the vocabulary, loaded vocab-only */
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
        st = pipit_make_model(&mp, tmp, err);
        if (st == PIPIT_OK) {
            st = pipit_model_load(tmp, &lp, &vm, err);
            remove(tmp);
        }
    }
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

/* Whether example e fits in `room` tokens and `slots` answer slots of a row. */
static bool fits(const struct tokenized *data, int32_t e, int32_t room, int32_t slots) {
    return data->len[e] - 1 <= room && data->len[e] - data->n_prompt[e] <= slots;
}

/* Pack examples into B rows of T tokens (and A answer slots) each, in shuffled order; an
 * example that does not fit in what is left of a row waits for the next row while one of the
 * next LOOKAHEAD examples of the epoch that does fit fills the gap (rows of 128 tokens were
 * 72% tokens with examples of 68 taken strictly in order). Attention stays
 * inside each example (block-diagonal causal mask) and positions restart at 0, so a packed
 * example sees exactly what it would see alone. */
enum {
    LOOKAHEAD = 64
};

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
            int32_t e = *pending;
            if (!fits(data, e, T - used, A - a_used)) {
                /* a later example of this epoch that fills the rest of the row goes first;
                 * the pending one starts the next row */
                int32_t j = *cursor,
                        end = *cursor + LOOKAHEAD < data->n ? *cursor + LOOKAHEAD : data->n;
                while (j < end && !fits(data, order[j], T - used, A - a_used)) {
                    j++;
                }
                if (j == end) {
                    break; /* never on an empty row: longer examples were dropped */
                }
                e = order[j];
                order[j] = order[*cursor];
                order[(*cursor)++] = e;
            } else {
                *pending = -1;
            }
            const int32_t len = data->len[e], np = data->n_prompt[e];
            const int32_t n_in = len - 1, n_tgt = len - np;
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

/* ============================================================================
 * the step graph: forward, cross-entropy, backward and one AdamW update per trained tensor,
 * built once and allocated once.
 *
 * This is what ggml_opt builds with static graphs, with two differences: ggml_opt gives its
 * static graphs GGML_DEFAULT_GRAPH_SIZE (2,048) nodes for forward, backward and optimizer
 * together, too few for a 30-layer base with LoRA pairs, and its per-step graphs did not
 * train as its static ones do (the second step already differed). Here the size follows the
 * depth. And the backward's out_prods are blocked matrix products (out_products_as_mul_mats)
 * unless `reference_backward` asks for ggml's own, whose arithmetic is ggml_opt's (the same
 * ops in the same order: a new model trains to the same bits as under ggml_opt). */

struct step_graph {
    struct ggml_context *ctx;        /* the graph's tensors, allocated by galloc */
    struct ggml_context *ctx_static; /* labels, AdamW moments and parameters, the loss's grad */
    ggml_backend_buffer_t buf_static;
    ggml_gallocr_t galloc;
    struct ggml_cgraph *gb;
    struct ggml_tensor *labels; /* F32 [n_vocab, A*B] */
    struct ggml_tensor *loss;   /* F32 scalar: mean cross-entropy over the A*B slots */
    struct ggml_tensor *adamw;  /* F32 [7]: alpha beta1 beta2 eps wd beta1h beta2h */
    int64_t iter;               /* AdamW steps taken, from 1 */
};

static void step_graph_free(struct step_graph *sg) {
    if (sg->galloc != NULL) {
        ggml_gallocr_free(sg->galloc);
    }
    if (sg->buf_static != NULL) {
        ggml_backend_buffer_free(sg->buf_static);
    }
    ggml_free(sg->ctx);
    ggml_free(sg->ctx_static);
    memset(sg, 0, sizeof(*sg));
}

/* dst (contiguous) = a (any strides), F32, in 32 x 32 tiles: ggml_cont of a transposed view
 * copies 4 bytes per memcpy call, a fifth of a training step once out_prod is gone. Rows of
 * tiles are split among the threads. */
static void copy_strided_f32(struct ggml_tensor *dst,
                             const struct ggml_tensor *a,
                             int ith,
                             int nth,
                             void *userdata) {
    (void)userdata;
    enum {
        TILE = 32
    };
    const int64_t n0 = a->ne[0], n1 = a->ne[1], n2 = a->ne[2], n3 = a->ne[3];
    const int64_t tiles1 = (n1 + TILE - 1) / TILE, n_jobs = tiles1 * n2 * n3;
    for (int64_t job = ith; job < n_jobs; job += nth) {
        const int64_t t1 = job % tiles1, i2 = (job / tiles1) % n2, i3 = job / (tiles1 * n2);
        const char *src = (const char *)a->data + i2 * a->nb[2] + i3 * a->nb[3];
        float *out = (float *)((char *)dst->data + i2 * dst->nb[2] + i3 * dst->nb[3]);
        const int64_t e1 = t1 * TILE + TILE < n1 ? t1 * TILE + TILE : n1;
        const size_t nb0 = a->nb[0], nb1 = a->nb[1];
        for (int64_t b0 = 0; b0 < n0; b0 += TILE) {
            const int64_t e0 = b0 + TILE < n0 ? b0 + TILE : n0;
            for (int64_t i1 = t1 * TILE; i1 < e1; i1++) { /* writes run along a row */
                const char *s1 = src + (size_t)i1 * nb1;
                float *o = out + i1 * n0;
                for (int64_t i0 = b0; i0 < e0; i0++) {
                    o[i0] = *(const float *)(s1 + (size_t)i0 * nb0);
                }
            }
        }
    }
}

/* `t` transposed and contiguous: a transpose view's source itself when that is contiguous,
 * else one tiled copy per source tensor (q, k and v's gradients share their input's). */
struct transposes {
    struct ggml_tensor *src[256];
    struct ggml_tensor *dst[256];
    int n;
};

static struct ggml_tensor *
transposed(struct ggml_context *ctx, struct transposes *memo, struct ggml_tensor *t) {
    if (t->op == GGML_OP_TRANSPOSE && ggml_is_contiguous(t->src[0])) {
        return t->src[0];
    }
    for (int i = 0; i < memo->n; i++) {
        if (memo->src[i] == t) {
            return memo->dst[i];
        }
    }
    struct ggml_tensor *r =
        ggml_map_custom1(ctx, ggml_transpose(ctx, t), copy_strided_f32, 1, NULL);
    if (memo->n < (int)(sizeof(memo->src) / sizeof(memo->src[0]))) {
        memo->src[memo->n] = t;
        memo->dst[memo->n++] = r;
    }
    return r;
}

/* ggml's backward of mul_mat computes both gradients with out_prod, whose CPU kernel is a
 * loop of axpys: 70% of a training step here, four times the forward's matrix products.
 * out_prod(a, b) = a b^T is mul_mat(a^T, b^T) with both transposes made contiguous, which the
 * CPU backend computes with its blocked matrix kernel; each out_prod node of the backward
 * graph becomes that mul_mat in place (the same tensor, so gradients and views that point at
 * it stay valid), and the transposes are new nodes that a graph built again from its outputs
 * puts before it. The sums run in another order, so results differ in the last bits. */
static void out_products_as_mul_mats(struct ggml_context *ctx, struct ggml_cgraph *gb) {
    struct transposes memo = {.n = 0};
    const int n = ggml_graph_n_nodes(gb);
    for (int i = 0; i < n; i++) {
        struct ggml_tensor *t = ggml_graph_node(gb, i);
        if (t->op != GGML_OP_OUT_PROD || t->type != GGML_TYPE_F32 ||
            t->src[0]->type != GGML_TYPE_F32 || t->src[1]->type != GGML_TYPE_F32) {
            continue;
        }
        struct ggml_tensor *a = transposed(ctx, &memo, t->src[0]);
        struct ggml_tensor *b = transposed(ctx, &memo, t->src[1]);
        t->op = GGML_OP_MUL_MAT;
        t->src[0] = a;
        t->src[1] = b;
    }
}

static bool step_graph_build(struct step_graph *sg,
                             const struct train_model *m,
                             const struct inputs *in,
                             int32_t T,
                             int32_t B,
                             ggml_backend_t backend,
                             bool reference_backward) {
    memset(sg, 0, sizeof(*sg));
    const size_t n_nodes = (size_t)512 * (size_t)(m->n_layer + 4) > GGML_DEFAULT_GRAPH_SIZE
                               ? (size_t)512 * (size_t)(m->n_layer + 4)
                               : GGML_DEFAULT_GRAPH_SIZE;
    struct ggml_init_params ip = {
        .mem_size = 6 * n_nodes * ggml_tensor_overhead() +
                    2 * ggml_graph_overhead_custom(n_nodes, true) +
                    ggml_graph_overhead_custom(2 * n_nodes, false),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_init_params ips = {
        .mem_size = (3 * (size_t)m->n_params + 8) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    sg->ctx = ggml_init(ip);
    sg->ctx_static = ggml_init(ips);
    if (sg->ctx == NULL || sg->ctx_static == NULL) {
        return false;
    }
    struct ggml_tensor *logits = build_forward(sg->ctx, m, in, T, B);
    sg->labels = ggml_new_tensor_2d(sg->ctx_static, GGML_TYPE_F32, logits->ne[0], logits->ne[1]);
    ggml_set_input(sg->labels);
    sg->loss = ggml_cross_entropy_loss(sg->ctx, logits, sg->labels);
    ggml_set_output(sg->loss);
    ggml_set_loss(sg->loss);
    struct ggml_cgraph *gf = ggml_new_graph_custom(sg->ctx, n_nodes, true);
    ggml_build_forward_expand(gf, sg->loss);
    /* the loss's gradient is a constant 1 */
    struct ggml_tensor *one = ggml_new_tensor(sg->ctx_static, GGML_TYPE_F32, 1, sg->loss->ne);
    struct ggml_tensor **accs = calloc((size_t)ggml_graph_n_nodes(gf), sizeof(*accs));
    if (accs == NULL) {
        return false;
    }
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        accs[i] = ggml_graph_node(gf, i) == sg->loss ? one : NULL;
    }
    struct ggml_cgraph *gb = ggml_graph_dup(sg->ctx, gf, true);
    ggml_build_backward_expand(sg->ctx, gb, accs);
    free(accs);
    /* the gradients, before out_products_as_mul_mats changes the nodes they are */
    struct ggml_tensor **grads = calloc((size_t)m->n_params + 1, sizeof(*grads));
    if (grads == NULL) {
        return false;
    }
    for (int i = 0; i < m->n_params; i++) {
        grads[i] = ggml_graph_get_grad(gb, m->params[i]);
    }
    if (!reference_backward) {
        out_products_as_mul_mats(sg->ctx, gb);
    }
    sg->gb = ggml_new_graph_custom(sg->ctx, 2 * n_nodes, false);
    ggml_build_forward_expand(sg->gb, sg->loss);
    sg->adamw = ggml_new_tensor_1d(sg->ctx_static, GGML_TYPE_F32, 7);
    ggml_set_input(sg->adamw);
    for (int i = m->n_params - 1; i >= 0; i--) {
        struct ggml_tensor *w = m->params[i];
        struct ggml_tensor *g = grads[i];
        if (g == NULL) {
            continue; /* nothing depends on it */
        }
        struct ggml_tensor *mom =
            ggml_new_tensor(sg->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, w->ne);
        struct ggml_tensor *vel =
            ggml_new_tensor(sg->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, w->ne);
        ggml_build_forward_expand(sg->gb, ggml_opt_step_adamw(sg->ctx, w, g, mom, vel, sg->adamw));
    }
    free(grads);
    sg->buf_static = ggml_backend_alloc_ctx_tensors(sg->ctx_static, backend);
    if (sg->buf_static == NULL) {
        return false;
    }
    ggml_backend_buffer_clear(sg->buf_static, 0);
    const float f1 = 1.0f;
    ggml_backend_tensor_set(one, &f1, 0, sizeof(f1));
    sg->galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
    sg->iter = 1;
    return sg->galloc != NULL && ggml_gallocr_alloc_graph(sg->galloc, sg->gb);
}

/* One optimizer step at learning rate `lr` on the inputs already set; the batch's loss. */
static float step_graph_run(struct step_graph *sg, ggml_backend_t backend, float lr, float wd) {
    const float beta1 = 0.9f, beta2 = 0.99f;
    const float par[7] = {
        lr,
        beta1,
        beta2,
        1e-8f,
        wd,
        1.0f / (1.0f - powf(beta1, (float)sg->iter)),
        1.0f / (1.0f - powf(beta2, (float)sg->iter)),
    };
    ggml_backend_tensor_set(sg->adamw, par, 0, sizeof(par));
    ggml_backend_graph_compute(backend, sg->gb);
    sg->iter++;
    float loss = 0.0f;
    ggml_backend_tensor_get(sg->loss, &loss, 0, sizeof(loss));
    return loss;
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
    return (p->vocab_path != NULL || p->base != NULL) && p->system != NULL && p->n_embd >= 8 &&
           p->n_embd <= 4096 && p->n_layer >= 1 && p->n_layer <= TRAIN_MAX_LAYERS &&
           p->n_head >= 1 &&
           (p->base == NULL ||
            (p->lora_rank >= 1 && p->lora_rank <= 1024 && p->lora_alpha > 0.0f)) &&
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
                               "n_ctx, lr_min <= lr, n_layer <= %d, LoRA rank 1..1024 and "
                               "alpha > 0)",
                               TRAIN_MAX_LAYERS);
    }
    const struct pipit_train_params *p = params;
    struct pipit_train_result res;
    memset(&res, 0, sizeof(res));

    struct tokenized data;
    int32_t n_vocab = 0;
    enum pipit_status st = p->base != NULL ? train_model_check_base(p->base, err) : PIPIT_OK;
    if (st != PIPIT_OK) {
        return st;
    }
    st = tokenize_all(p, ds, &data, &n_vocab, &res.n_skipped, &res.n_trimmed, err);
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
    struct train_model m;
    memset(&m, 0, sizeof(m));
    const int32_t T = p->n_ctx, B = p->n_batch, A = p->n_answer;
    struct inputs in;
    memset(&in, 0, sizeof(in));
    struct step_graph sg;
    memset(&sg, 0, sizeof(sg));
    int32_t *tok_buf = NULL, *gather_buf = NULL, *pos_buf = NULL, *seg_buf = NULL;
    float *mask_buf = NULL, *label_buf = NULL, *kq_buf = NULL;
    int32_t *order = NULL;
    int64_t step = 0;

    if (p->base != NULL) {
        st = train_model_from_base(&m, p, backend, err);
        if (st == PIPIT_OK && m.n_vocab != n_vocab) {
            st = pipit_error_set(err, PIPIT_ERR_CORRUPT,
                                 "train: --base %s: %d token embeddings for a vocabulary of %d",
                                 p->base, m.n_vocab, n_vocab);
        }
        if (st != PIPIT_OK) {
            goto done;
        }
    } else if (!train_model_create(&m, p, n_vocab, backend)) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: cannot allocate the model");
        goto done;
    }
    train_model_init_weights(&m, p->seed);
    if (p->resume != NULL) {
        st = train_model_load_weights(&m, p->resume, &step, err);
    } else if (p->init != NULL) {
        st = train_model_load_weights(&m, p->init, NULL, err);
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
    if (in.buf == NULL || !step_graph_build(&sg, &m, &in, T, B, backend, p->reference_backward)) {
        st = pipit_error_set(err, PIPIT_ERR_NOMEM, "train: out of memory");
        goto done;
    }
    double time_frac = 0.0; /* elapsed / max_seconds of the decay part, 0 without a budget */
    float lr = 0.0f;

    tok_buf = malloc(sizeof(int32_t) * (size_t)T * (size_t)B);
    pos_buf = malloc(sizeof(int32_t) * (size_t)T * (size_t)B);
    seg_buf = malloc(sizeof(int32_t) * (size_t)T * (size_t)B);
    kq_buf = malloc(sizeof(float) * (size_t)T * (size_t)T * (size_t)B);
    gather_buf = malloc(sizeof(int32_t) * (size_t)A * (size_t)B);
    mask_buf = malloc(sizeof(float) * (size_t)A * (size_t)B);
    label_buf = malloc(sizeof(float) * (size_t)n_vocab * (size_t)A * (size_t)B);
    order = malloc(sizeof(int32_t) * (size_t)data.n);
    if (tok_buf == NULL || pos_buf == NULL || gather_buf == NULL || mask_buf == NULL ||
        label_buf == NULL || order == NULL || seg_buf == NULL || kq_buf == NULL) {
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
    while (step < p->n_steps) {
        int32_t n_used = 0;
        fill_batch(&data, T, B, A, n_vocab, order, &cursor, &pending, &rng, &bufs, &n_used,
                   &res.tokens);
        ggml_backend_tensor_set(in.tokens, tok_buf, 0, ggml_nbytes(in.tokens));
        ggml_backend_tensor_set(in.pos, pos_buf, 0, ggml_nbytes(in.pos));
        ggml_backend_tensor_set(in.kq_mask, kq_buf, 0, ggml_nbytes(in.kq_mask));
        ggml_backend_tensor_set(in.gather, gather_buf, 0, ggml_nbytes(in.gather));
        ggml_backend_tensor_set(in.mask, mask_buf, 0, ggml_nbytes(in.mask));
        if (p->max_seconds > 0) {
            double now = (pipit_now_ms() - t0) / 1000.0;
            if (step >= p->warmup && t_warm < 0) {
                t_warm = now;
            }
            double left = p->max_seconds - (t_warm < 0 ? 0.0 : t_warm);
            time_frac = t_warm < 0 ? 0.0 : left > 0 ? (now - t_warm) / left : 1.0;
        }
        ggml_backend_tensor_set(sg.labels, label_buf, 0, ggml_nbytes(sg.labels));
        lr = schedule_lr(p, step, time_frac);
        float loss = step_graph_run(&sg, backend, lr, p->weight_decay);
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
            st = train_model_write(&m, p, PIPIT_WEIGHTS_F32, tracker_role, T < 256 ? 256 : T, step,
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
                    .lr = lr,
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
    st = train_model_write(&m, p, p->weight_type, tracker_role, T < 256 ? 256 : T, step, out_path,
                           err);

done:
    free(tok_buf);
    free(pos_buf);
    free(seg_buf);
    free(kq_buf);
    free(gather_buf);
    free(mask_buf);
    free(label_buf);
    free(order);
    step_graph_free(&sg);
    if (in.buf != NULL) {
        ggml_backend_buffer_free(in.buf);
    }
    ggml_free(in.ctx);
    train_model_free(&m);
    ggml_backend_free(backend);
    tokenized_free(&data);
    if (result != NULL) {
        *result = res;
    }
    return st;
}
