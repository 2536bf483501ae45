/*
 * kvstate.c - a context's permanent prefix as a blob (pipit_context_save_state(),
 * pipit_context_load_state(); docs/engine.md): its tokens and llama.cpp's sequence state.
 *
 * Format: "PKV1", u32 n_vocab, i32 n_perm, n_perm tokens (i32), u64 kv bytes, kv bytes (host
 * byte order). A blob is checked here before llama.cpp sees its KV bytes (magic, vocabulary
 * size, token count and range, the announced length); engine.c restores it
 * (engine_context_kv_restore()) and checks the positions llama.cpp then holds.
 */
#include "engine.h"
#include "pipit.h"

#include <stdlib.h>
#include <string.h>

#define STATE_MAGIC "PKV1"

enum pipit_status pipit_context_save_state(struct pipit_context *ctx, uint8_t **out, size_t *len) {
    if (ctx == NULL || out == NULL || len == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    *len = 0;
    if (pipit_context_n_ephemeral(ctx) > 0) {
        return engine_context_fail(
            ctx, PIPIT_ERR_STATE,
            "engine: save state: the ephemeral tail holds %d tokens (rewind first)",
            (int)pipit_context_n_ephemeral(ctx));
    }
    size_t kv = engine_context_kv_size(ctx);
    size_t head = 4 + 4 + 4 + sizeof(int32_t) * (size_t)pipit_context_n_permanent(ctx) + 8;
    uint8_t *buf = malloc(head + kv);
    if (buf == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    uint32_t n_vocab = (uint32_t)engine_model_n_vocab(engine_context_model(ctx));
    int32_t n_perm = pipit_context_n_permanent(ctx);
    uint64_t kv64 = kv;
    size_t o = 0;
    memcpy(buf + o, STATE_MAGIC, 4);
    o += 4;
    memcpy(buf + o, &n_vocab, 4);
    o += 4;
    memcpy(buf + o, &n_perm, 4);
    o += 4;
    memcpy(buf + o, pipit_context_tokens(ctx, NULL), sizeof(int32_t) * (size_t)n_perm);
    o += sizeof(int32_t) * (size_t)n_perm;
    memcpy(buf + o, &kv64, 8);
    o += 8;
    size_t got = engine_context_kv_read(ctx, buf + o, kv);
    if (got != kv) {
        free(buf);
        return engine_context_fail(ctx, PIPIT_ERR_DECODE,
                                   "engine: save state: llama.cpp wrote %zu of %zu", got, kv);
    }
    *out = buf;
    *len = o + kv;
    return PIPIT_OK;
}

enum pipit_status
pipit_context_load_state(struct pipit_context *ctx, const uint8_t *data, size_t len) {
    if (ctx == NULL || (data == NULL && len > 0)) {
        return PIPIT_ERR_INVALID_ARG;
    }
    pipit_context_clear(ctx);
    uint32_t n_vocab = 0;
    int32_t n_perm = 0;
    uint64_t kv = 0;
    if (len < 12 || memcmp(data, STATE_MAGIC, 4) != 0) {
        return engine_context_fail(ctx, PIPIT_ERR_CORRUPT,
                                   "engine: load state: not a pipit KV state");
    }
    memcpy(&n_vocab, data + 4, 4);
    memcpy(&n_perm, data + 8, 4);
    int32_t model_vocab = engine_model_n_vocab(engine_context_model(ctx));
    if (n_vocab != (uint32_t)model_vocab) {
        return engine_context_fail(
            ctx, PIPIT_ERR_CORRUPT,
            "engine: load state: made for a %u-token vocabulary, this model has %d", n_vocab,
            (int)model_vocab);
    }
    if (n_perm < 0 || (uint32_t)n_perm > (uint32_t)pipit_context_n_ctx(ctx) ||
        len < 12 + sizeof(int32_t) * (size_t)n_perm + 8) {
        return engine_context_fail(ctx, PIPIT_ERR_CORRUPT,
                                   "engine: load state: %d tokens do not fit", (int)n_perm);
    }
    size_t o = 12;
    const uint8_t *toks = data + o;
    o += sizeof(int32_t) * (size_t)n_perm;
    memcpy(&kv, data + o, 8);
    o += 8;
    if (kv != len - o) {
        return engine_context_fail(ctx, PIPIT_ERR_CORRUPT,
                                   "engine: load state: %llu KV bytes announced, %zu present",
                                   (unsigned long long)kv, len - o);
    }
    for (int32_t i = 0; i < n_perm; i++) {
        int32_t t;
        memcpy(&t, toks + sizeof(int32_t) * (size_t)i, sizeof(t));
        if (t < 0 || t >= model_vocab) {
            return engine_context_fail(ctx, PIPIT_ERR_CORRUPT,
                                       "engine: load state: token %d invalid", (int)t);
        }
    }
    return engine_context_kv_restore(ctx, toks, n_perm, data + o, (size_t)kv);
}
