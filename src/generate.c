/*
 * generate.c - pipit_generate(): sample, stop at end of generation, decode, up to max_tokens. The
 * loop over the engine's public calls (pipit.h, "generation"); the model side is engine.c's.
 */
#include "engine.h"
#include "pipit.h"

struct pipit_generate_params pipit_generate_default_params(void) {
    struct pipit_generate_params p = {
        .max_tokens = 64,
        .stop_at_eog = true,
    };
    return p;
}

enum pipit_status pipit_generate(struct pipit_context *ctx,
                                 struct pipit_sampler *smpl,
                                 const struct pipit_generate_params *params,
                                 int32_t *out_tokens,
                                 int32_t *n_out) {
    if (n_out != NULL) {
        *n_out = 0;
    }
    if (ctx == NULL || smpl == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    struct pipit_generate_params p = params != NULL ? *params : pipit_generate_default_params();
    for (int32_t i = 0; i < p.max_tokens; i++) {
        int32_t tok = pipit_sampler_sample(smpl, ctx);
        if (tok < 0) {
            return (enum pipit_status)(-tok);
        }
        if (p.stop_at_eog && pipit_model_token_is_eog(engine_context_model(ctx), tok)) {
            break;
        }
        enum pipit_status st = pipit_context_decode_token(ctx, tok);
        if (st != PIPIT_OK) {
            return st;
        }
        if (out_tokens != NULL) {
            out_tokens[i] = tok;
        }
        if (n_out != NULL) {
            *n_out = i + 1;
        }
    }
    return PIPIT_OK;
}
