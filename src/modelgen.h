/*
 * modelgen.h - writing llama-architecture GGUF files from C, shared by the random test models
 * (modelgen.c) and the trainer's export (train/trainer.c).
 */
#ifndef PIPIT_MODELGEN_H
#define PIPIT_MODELGEN_H

#include "gguf.h"
#include "pipit_tools.h"

#include <stdint.h>

/* The shape of a llama model, as its GGUF metadata states it. */
struct modelgen_llama {
    const char *name;    /* general.name */
    int32_t n_ctx_train; /* llama.context_length */
    int32_t n_embd;      /* llama.embedding_length */
    int32_t n_layer;     /* llama.block_count */
    int32_t n_ff;        /* llama.feed_forward_length */
    int32_t n_head;      /* llama.attention.head_count */
    int32_t n_head_kv;   /* llama.attention.head_count_kv */
    int64_t n_vocab;     /* llama.vocab_size */
    float rope_base;     /* llama.rope.freq_base */
    float rms_eps;       /* llama.attention.layer_norm_rms_epsilon */
};

/* A fresh GGUF context holding only the tokenizer.* keys of the vocab GGUF at `vocab_path`
 * (its general.* and architecture keys must not leak into a new model). *n_vocab (may be NULL)
 * receives the number of tokens. NULL on failure: PIPIT_ERR_IO (unreadable) or
 * PIPIT_ERR_CORRUPT (no tokenizer.ggml.tokens), named in err. */
struct gguf_context *
modelgen_tokenizer_gguf(const char *vocab_path, int64_t *n_vocab, struct pipit_error *err);

/* Set general.architecture = llama, general.file_type = 0 (F32) and every llama.* key. */
void modelgen_set_llama_kv(struct gguf_context *g, const struct modelgen_llama *h);

#endif /* PIPIT_MODELGEN_H */
