/*
 * model.h - the model the trainer trains, as ggml tensors: libllama's "llama" architecture,
 * either a new model whose every tensor is trained, or a frozen base read from a GGUF with a
 * LoRA pair (A, B) beside each adapted matrix, of which only the pairs are trained.
 *
 * This module owns the tensors and the files: creating and initializing them, reading a base's
 * hyperparameters and weights, resuming from a checkpoint, and writing a model or an adapter
 * GGUF (docs/training.md). The graph and the loop are trainer.c's.
 */
#ifndef PIPIT_TRAIN_MODEL_H
#define PIPIT_TRAIN_MODEL_H

#include "ggml-backend.h"
#include "ggml.h"
#include "pipit_tools.h"

#include <stdbool.h>
#include <stdint.h>

/* The matrices of a block, in the order of their GGUF names (train_mat_names). */
enum train_mat_index {
    TRAIN_MAT_Q,
    TRAIN_MAT_K,
    TRAIN_MAT_V,
    TRAIN_MAT_O,
    TRAIN_MAT_GATE,
    TRAIN_MAT_UP,
    TRAIN_MAT_DOWN,
    TRAIN_N_MATS
};

/* "attn_q", ..., "ffn_down" */
extern const char *const train_mat_names[TRAIN_N_MATS];

/* A matrix and its LoRA pair: y = w x + scale * b (a x); a and b are NULL when not adapted. */
struct train_mat {
    struct ggml_tensor *w; /* ne [n_in, n_out] */
    struct ggml_tensor *a; /* ne [n_in, rank] */
    struct ggml_tensor *b; /* ne [rank, n_out] */
};

struct train_layer {
    struct ggml_tensor *attn_norm, *ffn_norm;
    struct train_mat m[TRAIN_N_MATS];
};

#define TRAIN_MAX_LAYERS 128

struct train_model {
    int32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff;
    int32_t n_ctx_train; /* the base's llama.context_length (0 for a new model) */
    float rope_base, rms_eps;
    struct ggml_tensor *tok_embd, *out_norm;
    struct train_mat output; /* output.w is tok_embd when the base ties them */
    struct train_layer l[TRAIN_MAX_LAYERS];
    /* the trained tensors: every tensor of a new model, the LoRA pairs of an adapter */
    struct ggml_tensor **params;
    int n_params;
    bool lora;        /* a frozen base with LoRA pairs */
    int32_t rank;     /* LoRA rank */
    float alpha;      /* adapter.lora.alpha */
    float lora_scale; /* alpha / rank, as llama.cpp applies it (llama_adapter_lora_weight) */
    char base_name[256];
    char base_fingerprint[17]; /* pipit_model_fingerprint of the base, hex ("" if unread) */
    struct ggml_context *ctx;
    ggml_backend_buffer_t buf;
};

/* A new model of p's shape with F32 tensors on `backend`, every one trained. */
bool train_model_create(struct train_model *m,
                        const struct pipit_train_params *p,
                        int32_t n_vocab,
                        ggml_backend_t backend);

/* The frozen base at p->base with LoRA pairs (p->lora_rank, p->lora_alpha) on the matrices
 * p->lora_targets names, on `backend`. The base's matrices stay in their stored type when the
 * CPU backend can train through it, else they are dequantized to F32. Errors name the file
 * and what the trainer's graph does not support. */
enum pipit_status train_model_from_base(struct train_model *m,
                                        const struct pipit_train_params *p,
                                        ggml_backend_t backend,
                                        struct pipit_error *err);

/* Whether the GGUF at `path` is a base the trainer's graph computes (train_model_from_base's
 * checks on the header alone, before anything is tokenized or allocated). */
enum pipit_status train_model_check_base(const char *path, struct pipit_error *err);

/* Random initial values: N(0, 0.02) matrices and unit norms for a new model; for LoRA pairs
 * A ~ N(0, 1/sqrt(n_in)) and B = 0, so training starts from the base's own answers. */
void train_model_init_weights(struct train_model *m, uint64_t seed);

/* Load the trained tensors of `m` by name from the GGUF at `path` (a checkpoint, an exported
 * model or adapter: F32 copied, F16/Q8_0 dequantized). `step`, when not NULL, receives the
 * file's pipit.train.step (0 when absent). */
enum pipit_status train_model_load_weights(struct train_model *m,
                                           const char *path,
                                           int64_t *step,
                                           struct pipit_error *err);

/* Write the model (or, for a LoRA model, the adapter: its pairs in F32) with pipit's metadata
 * to `path`, whole or not at all. */
enum pipit_status train_model_write(const struct train_model *m,
                                    const struct pipit_train_params *p,
                                    enum pipit_weight_type wt,
                                    bool tracker_role,
                                    int32_t n_ctx_train,
                                    int64_t step,
                                    const char *path,
                                    struct pipit_error *err);

void train_model_free(struct train_model *m);

#endif /* PIPIT_TRAIN_MODEL_H */
