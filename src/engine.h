/*
 * engine.h - internal entry points of the engine (engine.c; the public ones are in pipit.h).
 */
#ifndef PIPIT_ENGINE_H
#define PIPIT_ENGINE_H

#include "fg_sampler.h"
#include "pipit.h"
#include "status.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ============================================================================ contexts */

/* The model `ctx` was created on (borrowed; the model outlives its contexts). */
const struct pipit_model *engine_context_model(const struct pipit_context *ctx);

/* The context's perf counters, which the sampler adds to (borrowed). */
struct pipit_perf *engine_context_perf(struct pipit_context *ctx);

/* Set the context's error message (pipit_context_errmsg()) and return `st`. */
enum pipit_status
engine_context_fail(struct pipit_context *ctx, enum pipit_status st, const char *fmt, ...)
    PIPIT_PRINTF(3, 4);

/* The size of the context's llama.cpp sequence state (the permanent prefix's KV cells). */
size_t engine_context_kv_size(struct pipit_context *ctx);

/* Copy the sequence state into dst (size bytes); returns the bytes written. */
size_t engine_context_kv_read(struct pipit_context *ctx, uint8_t *dst, size_t size);

/* Restore a permanent prefix of n_perm tokens (`toks`: n_perm int32 in host order, checked by
 * the caller to be in the vocabulary) and its sequence state `kv`, into a cleared context.
 * PIPIT_ERR_CORRUPT (the context cleared, the message set) when llama.cpp refuses the state or
 * its cells are not at positions 0..n_perm-1. */
enum pipit_status engine_context_kv_restore(struct pipit_context *ctx,
                                            const uint8_t *toks,
                                            int32_t n_perm,
                                            const uint8_t *kv,
                                            size_t kv_len);

/* ============================================================================ models */

/* Tokens in the model's vocabulary. */
int32_t engine_model_n_vocab(const struct pipit_model *model);

/* llama_tokenize() on the model's vocabulary: `len` bytes of `text` (no NUL needed). Returns the
 * token count, or minus the count needed when more than n_max. */
int32_t engine_tokenize(const struct pipit_model *model,
                        const char *text,
                        int32_t len,
                        int32_t *tokens,
                        int32_t n_max,
                        bool add_special,
                        bool parse_special);

/* llama_token_to_piece() with special tokens rendered, no leading space stripped. */
int32_t
engine_token_to_piece(const struct pipit_model *model, int32_t token, char *buf, int32_t size);

/* ============================================================================ draws
 *
 * llama.cpp's side of one pipit_sampler (sampler.c): the selection chain (greedy, or
 * top-k/top-p/temperature/dist), llama.cpp's grammar sampler when the sampler does not use the
 * fast decoder, and n_vocab candidates reused at every step. Every token is offered to the
 * grammar as a one-candidate array before it is accepted (llama.cpp must never throw). */
struct engine_draw;

/* A draw with an empty chain and no grammar; NULL when out of memory. */
struct engine_draw *engine_draw_new(const struct pipit_model *model);

/* Give the draw llama.cpp's grammar sampler for `gbnf` (rule `root`); false when llama.cpp
 * rejects it, with its logged reason in `why` ("" when it gave none). */
bool engine_draw_set_grammar(struct engine_draw *d,
                             const char *gbnf,
                             const char *root,
                             char *why,
                             size_t why_size);

/* Fill the chain: greedy at temperature <= 0, else top-k, top-p, temperature, dist(seed). */
void engine_draw_set_chain(struct engine_draw *d, const struct pipit_sampler_params *p);

/* Free the draw; NULL is a no-op. */
void engine_draw_free(struct engine_draw *d);

/* True when the draw has llama.cpp's grammar sampler. */
bool engine_draw_has_grammar(const struct engine_draw *d);

/* Accept `token` into the chain (its history: dist's state, repetition). */
void engine_draw_accept(struct engine_draw *d, int32_t token);

/* Accept `token` into the grammar only if the grammar allows it; false (nothing changed) when
 * it does not. */
bool engine_draw_grammar_accept(struct engine_draw *d, int32_t token);

/* Reset the chain and the grammar. */
void engine_draw_reset(struct engine_draw *d);

/* Draw as the fast decoder says (`fd`, fg_sampler.h); *drawn false when the one candidate is
 * taken without a draw. Returns the token, -1 when the draw selected nothing (or a masked
 * token), -2 when there was no candidate at all. The chain does not accept it. */
int32_t
engine_draw_fast(struct engine_draw *d, const float *logits, const struct fg_draw *fd, bool *drawn);

/* One draw from `logits` with the chain; `constrained`: the grammar's mask applies (the draw is
 * first made without it and kept when the grammar allows it). The token is accepted into the
 * chain (and the grammar); constraint time and counts go to `perf`. -1 when every token is
 * masked. */
int32_t engine_draw_sample(struct engine_draw *d,
                           const float *logits,
                           bool constrained,
                           struct pipit_perf *perf);

#endif /* PIPIT_ENGINE_H */
