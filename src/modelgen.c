/*
 * modelgen.c - tiny llama-architecture GGUF models and LoRA adapters with
 * random weights.
 *
 * No model can be downloaded, so tests and benchmarks run real llama.cpp on
 * files pipit makes: the tokenizer is copied from a vocab GGUF of the llama.cpp
 * tree (a real tokenizer), the weights are Gaussian noise from a seeded RNG
 * (deterministic: same params, same bytes).
 *
 * Layout (ggml ne order, as libllama's llama loader expects; output.weight is
 * omitted, so the output projection is tied to token_embd): token_embd.weight
 * [n_embd, n_vocab]   output_norm.weight [n_embd] blk.N.attn_norm [n_embd]
 * attn_q [n_embd, n_embd]  attn_k/attn_v [n_embd, n_embd_kv] attn_output
 * [n_embd, n_embd]  ffn_norm [n_embd]  ffn_gate/ffn_up [n_embd, n_ff] ffn_down
 * [n_ff, n_embd] Files are written through a fresh gguf_init_empty() context to
 * a temp file, then renamed.
 */
#define _POSIX_C_SOURCE 200809L

#include "modelgen.h"

#include "fileio.h"
#include "ggml.h"
#include "gguf.h"
#include "pipit_tools.h"
#include "status.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================
 * RNG */

#define PIPIT_TWO_PI 6.283185307179586476925

/* splitmix64: tiny, seedable, good enough for weights. */
static uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *state) {
    return ((double)(rng_next(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static void fill_normal(float *dst, int64_t n, float std, uint64_t *state) {
    for (int64_t i = 0; i < n; i += 2) {
        double u1 = rng_uniform(state);
        double u2 = rng_uniform(state);
        double r = sqrt(-2.0 * log(u1));
        dst[i] = (float)(r * cos(PIPIT_TWO_PI * u2)) * std;
        if (i + 1 < n) {
            dst[i + 1] = (float)(r * sin(PIPIT_TWO_PI * u2)) * std;
        }
    }
}

/* ============================================================================
 * writing */

/* Write `g` to `out_path` whole or not at all (src/fileio.h). */
static enum pipit_status
write_atomic(struct gguf_context *g, const char *out_path, struct pipit_error *err) {
    struct fileio_tmp w;
    bool ok = fileio_begin(&w, out_path) && gguf_write_to_file_ptr(g, w.f, false);
    if (!fileio_commit(&w, ok, FILEIO_DURABLE)) {
        return pipit_error_set(err, PIPIT_ERR_IO, "modelgen: cannot write %s: %s", out_path,
                               strerror(errno));
    }
    return PIPIT_OK;
}

/* A ggml context large enough for `bytes` of tensor data plus `n_tensors`
 * headers. */
static struct ggml_context *tensor_arena(size_t bytes, size_t n_tensors) {
    struct ggml_init_params ip = {
        .mem_size = bytes + n_tensors * (ggml_tensor_overhead() + 64) + 1024,
        .mem_buffer = NULL,
        .no_alloc = false,
    };
    return ggml_init(ip);
}

static struct ggml_tensor *
new_f32(struct ggml_context *tctx, const char *name, int64_t ne0, int64_t ne1) {
    struct ggml_tensor *t = ne1 > 0 ? ggml_new_tensor_2d(tctx, GGML_TYPE_F32, ne0, ne1)
                                    : ggml_new_tensor_1d(tctx, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    return t;
}

/* ============================================================================ GGUF headers */

struct gguf_context *
modelgen_tokenizer_gguf(const char *vocab_path, int64_t *n_vocab, struct pipit_error *err) {
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *vocab = gguf_init_from_file(vocab_path, gp);
    if (vocab == NULL) {
        pipit_error_set(err, PIPIT_ERR_IO, "modelgen: cannot read vocab GGUF: %s", vocab_path);
        return NULL;
    }
    int64_t tok_key = gguf_find_key(vocab, "tokenizer.ggml.tokens");
    if (tok_key < 0) {
        gguf_free(vocab);
        pipit_error_set(err, PIPIT_ERR_CORRUPT, "modelgen: no tokenizer.ggml.tokens in %s",
                        vocab_path);
        return NULL;
    }
    if (n_vocab != NULL) {
        *n_vocab = (int64_t)gguf_get_arr_n(vocab, tok_key);
    }
    struct gguf_context *g = gguf_init_empty();
    gguf_set_kv(g, vocab);
    gguf_free(vocab);
    for (int64_t i = gguf_get_n_kv(g) - 1; i >= 0; i--) {
        const char *key = gguf_get_key(g, i);
        if (strncmp(key, "tokenizer.", 10) != 0) {
            char name[256];
            pipit_format(name, sizeof(name), "%s", key);
            gguf_remove_key(g, name);
        }
    }
    return g;
}

void modelgen_set_llama_kv(struct gguf_context *g, const struct modelgen_llama *h) {
    gguf_set_val_str(g, "general.architecture", "llama");
    gguf_set_val_str(g, "general.name", h->name);
    gguf_set_val_u32(g, "general.file_type", 0); /* all F32 */
    gguf_set_val_u32(g, "llama.context_length", (uint32_t)h->n_ctx_train);
    gguf_set_val_u32(g, "llama.embedding_length", (uint32_t)h->n_embd);
    gguf_set_val_u32(g, "llama.block_count", (uint32_t)h->n_layer);
    gguf_set_val_u32(g, "llama.feed_forward_length", (uint32_t)h->n_ff);
    gguf_set_val_u32(g, "llama.attention.head_count", (uint32_t)h->n_head);
    gguf_set_val_u32(g, "llama.attention.head_count_kv", (uint32_t)h->n_head_kv);
    gguf_set_val_u32(g, "llama.rope.dimension_count", (uint32_t)(h->n_embd / h->n_head));
    gguf_set_val_f32(g, "llama.rope.freq_base", h->rope_base);
    gguf_set_val_f32(g, "llama.attention.layer_norm_rms_epsilon", h->rms_eps);
    gguf_set_val_u32(g, "llama.vocab_size", (uint32_t)h->n_vocab);
}

/* ============================================================================
 * models */

struct pipit_make_model_params pipit_make_model_default_params(void) {
    struct pipit_make_model_params p = {
        .vocab_path = NULL,
        .n_embd = 64,
        .n_layer = 2,
        .n_head = 4,
        .n_head_kv = 4,
        .n_ff = 128,
        .n_ctx_train = 2048,
        .seed = 1,
        .init_std = 0.5f,
        .weight_type = PIPIT_WEIGHTS_F32,
        .rope_base = 10000.0f,
    };
    return p;
}

/* ============================================================================
 * named shapes */

/* Parameters of a llama graph with tied embeddings: embeddings, final norm, and per block two
 * norms, q and o, k and v (GQA), gate, up and down. */
#define SHAPE_PARAMS(embd, layer, head, head_kv, ff, vocab)     \
    ((int64_t)(vocab) * (embd) + (embd) +                       \
     (int64_t)(layer) * (2LL * (embd) + 2LL * (embd) * (embd) + \
                         2LL * (embd) * ((embd) / (head) * (head_kv)) + 3LL * (embd) * (ff)))
#define SHAPE(name, like, vocab_name, embd, layer, head, head_kv, ff, ctx, vocab, rope) \
    {                                                                                   \
        name, like, vocab_name, embd, layer, head, head_kv, ff, ctx, vocab, rope,       \
            SHAPE_PARAMS(embd, layer, head, head_kv, ff, vocab)                         \
    }

/* Hyperparameters from each model's published config.json. Tokenizers: the originals' where
 * llama.cpp's models/ has them (qwen2, llama-bpe), else one of the same size class: StarCoder's
 * 49,152-token BPE for SmolLM2 (its own is a 49,152-token BPE too), Gemma 4's 262,144-token
 * SentencePiece for Gemma 3 (the same size). Gemma 3 270M's head_dim is 256 (4 x 256 > 640);
 * on the llama graph it is 640 / 4 = 160. */
static const struct pipit_model_shape SHAPES[] = {
    SHAPE("smollm2-135m", "SmolLM2-135M", "starcoder", 576, 30, 9, 3, 1536, 8192, 49152, 100000.0f),
    SHAPE("gemma3-270m",
          "Gemma-3-270M (llama graph, head_dim 160)",
          "gemma-4",
          640,
          18,
          4,
          1,
          2048,
          32768,
          262144,
          1000000.0f),
    SHAPE("qwen2.5-0.5b",
          "Qwen2.5-0.5B (no q/k/v biases)",
          "qwen2",
          896,
          24,
          14,
          2,
          4864,
          32768,
          151936,
          1000000.0f),
    SHAPE("llama3.2-1b",
          "Llama-3.2-1B (no rope scaling)",
          "llama-bpe",
          2048,
          16,
          32,
          8,
          8192,
          131072,
          128256,
          500000.0f),
};

const struct pipit_model_shape *pipit_model_shapes(size_t *n) {
    if (n != NULL) {
        *n = sizeof(SHAPES) / sizeof(SHAPES[0]);
    }
    return SHAPES;
}

const struct pipit_model_shape *pipit_model_shape_find(const char *name) {
    for (size_t i = 0; name != NULL && i < sizeof(SHAPES) / sizeof(SHAPES[0]); i++) {
        if (strcmp(SHAPES[i].name, name) == 0) {
            return &SHAPES[i];
        }
    }
    return NULL;
}

void pipit_make_model_apply_shape(struct pipit_make_model_params *p,
                                  const struct pipit_model_shape *shape) {
    if (p == NULL || shape == NULL) {
        return;
    }
    p->n_embd = shape->n_embd;
    p->n_layer = shape->n_layer;
    p->n_head = shape->n_head;
    p->n_head_kv = shape->n_head_kv;
    p->n_ff = shape->n_ff;
    p->n_ctx_train = shape->n_ctx_train;
    p->rope_base = shape->rope_base;
    /* the published initializer_range of these models: activations, attention scores and logits
     * of the scale a trained model has, so its costs are the real model's (with 0.5, attention
     * scores in the hundreds send expf into its slow underflow path: a random 135M shape's
     * warm first token took 1.8x as long) */
    p->init_std = 0.02f;
}

/* The ggml type and the GGUF general.file_type (llama_ftype) of a weight type. */
static bool weight_type_info(int32_t type, enum ggml_type *gt, uint32_t *ftype) {
    switch (type) {
        case PIPIT_WEIGHTS_F32:
            *gt = GGML_TYPE_F32;
            *ftype = 0; /* LLAMA_FTYPE_ALL_F32 */
            return true;
        case PIPIT_WEIGHTS_F16:
            *gt = GGML_TYPE_F16;
            *ftype = 1; /* LLAMA_FTYPE_MOSTLY_F16 */
            return true;
        case PIPIT_WEIGHTS_Q8_0:
            *gt = GGML_TYPE_Q8_0;
            *ftype = 7; /* LLAMA_FTYPE_MOSTLY_Q8_0 */
            return true;
        case PIPIT_WEIGHTS_Q4_0:
            *gt = GGML_TYPE_Q4_0;
            *ftype = 2; /* LLAMA_FTYPE_MOSTLY_Q4_0 */
            return true;
        default:
            return false;
    }
}

/* Fill a [ne0, ne1] weight matrix of type `gt` with N(0, std) values: drawn in F32 rows (the
 * same draws as an F32 tensor: chunks hold an even count, and fill_normal draws pairs), then
 * rounded or quantized row block by row block, so a large matrix never needs an F32 copy. */
static bool
fill_weights(struct ggml_tensor *t, float std, uint64_t *rng, float *buf, int64_t buf_rows) {
    const int64_t ne0 = t->ne[0], ne1 = t->ne[1];
    if (t->type == GGML_TYPE_F32) {
        fill_normal(t->data, ne0 * ne1, std, rng);
        return true;
    }
    const size_t row_size = ggml_row_size(t->type, ne0);
    for (int64_t r = 0; r < ne1; r += buf_rows) {
        int64_t nr = ne1 - r < buf_rows ? ne1 - r : buf_rows;
        fill_normal(buf, nr * ne0, std, rng);
        char *dst = (char *)t->data + (size_t)r * row_size;
        if (t->type == GGML_TYPE_F16) {
            ggml_fp32_to_fp16_row(buf, (ggml_fp16_t *)dst, nr * ne0);
        } else if (ggml_quantize_chunk(t->type, buf, dst, 0, nr, ne0, NULL) !=
                   (size_t)nr * row_size) {
            return false;
        }
    }
    return true;
}

enum pipit_status pipit_make_model(const struct pipit_make_model_params *params,
                                   const char *out_path,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    if (params == NULL || params->vocab_path == NULL || out_path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "modelgen: vocab path and output path are required");
    }
    const struct pipit_make_model_params *p = params;
    enum ggml_type wtype = GGML_TYPE_F32;
    uint32_t ftype = 0;
    if (!weight_type_info(p->weight_type, &wtype, &ftype)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "modelgen: weight_type %d is not F32, F16, Q8_0 or Q4_0 (0..3)",
                               (int)p->weight_type);
    }
    if (p->n_embd < 8 || p->n_embd > 4096 || p->n_layer < 1 || p->n_layer > 64 || p->n_head < 1 ||
        p->n_head_kv < 1 || p->n_embd % p->n_head != 0 || p->n_head % p->n_head_kv != 0 ||
        p->n_ff < 1 || p->n_ff > 65536 || p->n_ctx_train < 16 || !(p->init_std > 0.0f) ||
        !(p->rope_base > 0.0f)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "modelgen: inconsistent size: n_embd %d, n_layer %d, n_head %d, "
                               "n_head_kv %d, n_ff %d, n_ctx %d (n_embd must divide by n_head, "
                               "n_head by n_head_kv)",
                               p->n_embd, p->n_layer, p->n_head, p->n_head_kv, p->n_ff,
                               p->n_ctx_train);
    }

    int64_t n_vocab = 0;
    struct gguf_context *g = modelgen_tokenizer_gguf(p->vocab_path, &n_vocab, err);
    if (g == NULL) {
        return err != NULL ? err->status : PIPIT_ERR_IO;
    }
    const int32_t head_dim = p->n_embd / p->n_head;
    const int32_t n_embd_kv = head_dim * p->n_head_kv;
    const int64_t blck = ggml_blck_size(wtype);
    if (p->n_embd % blck != 0 || p->n_ff % blck != 0) {
        gguf_free(g);
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "modelgen: %s weights need n_embd (%d) and n_ff (%d) that divide "
                               "by %d",
                               ggml_type_name(wtype), p->n_embd, p->n_ff, (int)blck);
    }
    struct modelgen_llama h = {
        .name = "pipit-random",
        .n_ctx_train = p->n_ctx_train,
        .n_embd = p->n_embd,
        .n_layer = p->n_layer,
        .n_ff = p->n_ff,
        .n_head = p->n_head,
        .n_head_kv = p->n_head_kv,
        .n_vocab = n_vocab,
        .rope_base = p->rope_base,
        .rms_eps = 1e-5f,
    };
    modelgen_set_llama_kv(g, &h);
    if (ftype != 0) {
        gguf_set_val_u32(g, "general.file_type", ftype);
    }

    /* the matrices in the weight type (padded per tensor for alignment), the norms in F32 */
    size_t per_layer = 2 * sizeof(float) * (size_t)p->n_embd +
                       2 * ggml_row_size(wtype, p->n_embd) * (size_t)p->n_embd +
                       2 * ggml_row_size(wtype, p->n_embd) * (size_t)n_embd_kv +
                       2 * ggml_row_size(wtype, p->n_embd) * (size_t)p->n_ff +
                       ggml_row_size(wtype, p->n_ff) * (size_t)p->n_embd;
    size_t bytes = ggml_row_size(wtype, p->n_embd) * (size_t)n_vocab +
                   sizeof(float) * (size_t)p->n_embd + per_layer * (size_t)p->n_layer;
    size_t n_tensors = 2 + 9 * (size_t)p->n_layer;
    struct ggml_context *tctx = tensor_arena(bytes + n_tensors * 64, n_tensors);
    /* F32 rows drawn before rounding or quantizing: 64 rows of the widest input, even */
    const int64_t buf_rows = 64;
    int64_t widest = p->n_embd > p->n_ff ? p->n_embd : p->n_ff;
    float *buf =
        wtype != GGML_TYPE_F32 ? malloc(sizeof(float) * (size_t)(buf_rows * widest)) : NULL;
    if (tctx == NULL || (wtype != GGML_TYPE_F32 && buf == NULL)) {
        gguf_free(g);
        ggml_free(tctx);
        free(buf);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "modelgen: cannot allocate %zu bytes", bytes);
    }
    uint64_t rng = p->seed;
    bool filled = true;
    struct ggml_tensor *t = ggml_new_tensor_2d(tctx, wtype, p->n_embd, n_vocab);
    ggml_set_name(t, "token_embd.weight");
    filled = filled && fill_weights(t, p->init_std, &rng, buf, buf_rows);
    gguf_add_tensor(g, t);
    t = new_f32(tctx, "output_norm.weight", p->n_embd, 0);
    for (int64_t i = 0; i < p->n_embd; i++) {
        ((float *)t->data)[i] = 1.0f;
    }
    gguf_add_tensor(g, t);

    struct {
        const char *name;
        int64_t ne0, ne1;
    } blk[] = {
        {"attn_norm", p->n_embd, 0},           {"attn_q", p->n_embd, p->n_embd},
        {"attn_k", p->n_embd, n_embd_kv},      {"attn_v", p->n_embd, n_embd_kv},
        {"attn_output", p->n_embd, p->n_embd}, {"ffn_norm", p->n_embd, 0},
        {"ffn_gate", p->n_embd, p->n_ff},      {"ffn_up", p->n_embd, p->n_ff},
        {"ffn_down", p->n_ff, p->n_embd},
    };
    for (int32_t l = 0; l < p->n_layer; l++) {
        for (size_t k = 0; k < sizeof(blk) / sizeof(blk[0]); k++) {
            char name[128];
            pipit_format(name, sizeof(name), "blk.%d.%s.weight", (int)l, blk[k].name);
            if (blk[k].ne1 == 0) {
                t = new_f32(tctx, name, blk[k].ne0, 0);
                for (int64_t i = 0; i < blk[k].ne0; i++) {
                    ((float *)t->data)[i] = 1.0f;
                }
            } else {
                t = ggml_new_tensor_2d(tctx, wtype, blk[k].ne0, blk[k].ne1);
                ggml_set_name(t, name);
                filled = filled && fill_weights(t, p->init_std, &rng, buf, buf_rows);
            }
            gguf_add_tensor(g, t);
        }
    }
    free(buf);
    enum pipit_status st =
        filled ? write_atomic(g, out_path, err)
               : pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "modelgen: %s quantization failed",
                                 ggml_type_name(wtype));
    gguf_free(g);
    ggml_free(tctx);
    return st;
}

/* ============================================================================
 * adapters */

struct pipit_make_lora_params pipit_make_lora_default_params(void) {
    struct pipit_make_lora_params p = {
        .model_path = NULL,
        .rank = 4,
        .alpha = 4.0f,
        .seed = 7,
        .init_std = 0.1f,
    };
    return p;
}

enum pipit_status pipit_make_lora(const struct pipit_make_lora_params *params,
                                  const char *out_path,
                                  struct pipit_error *err) {
    pipit_error_clear(err);
    if (params == NULL || params->model_path == NULL || out_path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "modelgen: model path and output path are required");
    }
    if (params->rank < 1 || params->rank > 256 || !(params->init_std > 0.0f)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "modelgen: LoRA rank %d outside 1..256 or init_std <= 0",
                               params->rank);
    }
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *base = gguf_init_from_file(params->model_path, gp);
    if (base == NULL) {
        return pipit_error_set(err, PIPIT_ERR_IO, "modelgen: cannot read model GGUF: %s",
                               params->model_path);
    }
    int64_t arch_key = gguf_find_key(base, "general.architecture");
    if (arch_key < 0 || strcmp(gguf_get_val_str(base, arch_key), "llama") != 0) {
        gguf_free(base);
        return pipit_error_set(err, PIPIT_ERR_UNSUPPORTED_ARCH,
                               "modelgen: LoRA adapters are made for llama models only: %s",
                               params->model_path);
    }

    /* Adapt attn_q, attn_v and ffn_up of every block: W ne [n_in, n_out] gets
     * A ne [n_in, r] and B ne [r, n_out]. */
    static const char *targets[] = {"attn_q", "attn_v", "ffn_up"};
    const int64_t r = params->rank;
    size_t bytes = 0;
    size_t n_tensors = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && n_tensors == 0) {
            break;
        }
        struct ggml_context *tctx = NULL;
        struct gguf_context *g = NULL;
        uint64_t rng = params->seed;
        if (pass == 1) {
            tctx = tensor_arena(bytes, n_tensors);
            if (tctx == NULL) {
                gguf_free(base);
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "modelgen: out of memory");
            }
            g = gguf_init_empty();
            gguf_set_val_str(g, "general.architecture", "llama");
            gguf_set_val_str(g, "general.type", "adapter");
            gguf_set_val_str(g, "general.name", "pipit-random-lora");
            gguf_set_val_str(g, "adapter.type", "lora");
            gguf_set_val_f32(g, "adapter.lora.alpha", params->alpha);
        }
        for (int64_t i = 0; i < gguf_get_n_tensors(base); i++) {
            const char *name = gguf_get_tensor_name(base, i);
            const char *dot = strchr(name + 4, '.');
            if (strncmp(name, "blk.", 4) != 0 || dot == NULL) {
                continue;
            }
            bool hit = false;
            for (size_t k = 0; k < sizeof(targets) / sizeof(targets[0]); k++) {
                size_t len = strlen(targets[k]);
                if (strncmp(dot + 1, targets[k], len) == 0 &&
                    strcmp(dot + 1 + len, ".weight") == 0) {
                    hit = true;
                }
            }
            if (!hit) {
                continue;
            }
            const int64_t *ne = gguf_get_tensor_ne(base, i);
            if (pass == 0) {
                bytes += sizeof(float) * (size_t)(ne[0] * r + r * ne[1]);
                n_tensors += 2;
                continue;
            }
            char an[160], bn[160];
            pipit_format(an, sizeof(an), "%s.lora_a", name);
            pipit_format(bn, sizeof(bn), "%s.lora_b", name);
            struct ggml_tensor *a = new_f32(tctx, an, ne[0], r);
            struct ggml_tensor *b = new_f32(tctx, bn, r, ne[1]);
            fill_normal(a->data, ggml_nelements(a), params->init_std, &rng);
            fill_normal(b->data, ggml_nelements(b), params->init_std, &rng);
            gguf_add_tensor(g, a);
            gguf_add_tensor(g, b);
        }
        if (pass == 1) {
            enum pipit_status st = write_atomic(g, out_path, err);
            gguf_free(g);
            ggml_free(tctx);
            gguf_free(base);
            return st;
        }
    }
    gguf_free(base);
    return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                           "modelgen: no attn_q/attn_v/ffn_up weights to adapt in %s",
                           params->model_path);
}
