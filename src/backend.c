/*
 * backend.c - the llama backend: an engine context whose permanent prefix holds the system
 * text, tools and memory, and whose ephemeral tail holds one step (see backend.h).
 *
 * Invariants: between steps the context's ephemeral tail is empty; `pending` holds permanent
 * text not yet prefilled (prefilled at the start of the next step, before its ephemeral text).
 */
#include "backend.h"

#include "status.h"
#include "strbuf.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct llama_backend {
    struct pipit_model *model;
    struct pipit_context *ctx;
    float temperature;
    uint32_t seed;
    uint32_t n_steps;      /* steps run: varies the seed per step */
    struct strbuf pending; /* permanent text waiting to be prefilled */
    bool bos_done;         /* the BOS has been added to the permanent prefix */
    bool parse_special;    /* permanent text holds special-token text (chat templates) */
    atomic_bool cancel;
    /* the grammar sampler is rebuilt only when the grammar text or mode changes */
    struct pipit_sampler *smpl;
    char *smpl_grammar;
    bool smpl_lazy;
    bool smpl_fast;               /* the sampler uses `fg` (pipit's decoder) */
    struct pipit_fastgrammar *fg; /* made on the first step that asks for it */
};

static enum pipit_status lb_add_permanent(void *self, const char *text) {
    struct llama_backend *b = self;
    strbuf_str(&b->pending, text);
    return b->pending.failed ? PIPIT_ERR_NOMEM : PIPIT_OK;
}

static enum pipit_status append_text(struct llama_backend *b,
                                     enum pipit_region region,
                                     const char *text,
                                     bool add_special,
                                     bool parse_special,
                                     int64_t *n);

static enum pipit_status lb_flush(void *self, int64_t *n_tokens) {
    struct llama_backend *b = self;
    int64_t n = 0;
    if (b->pending.len > 0) {
        enum pipit_status st = append_text(b, PIPIT_REGION_PERMANENT, b->pending.data, !b->bos_done,
                                           b->parse_special, &n);
        if (st != PIPIT_OK) {
            return st;
        }
        b->bos_done = true;
        strbuf_free(&b->pending);
    }
    if (n_tokens != NULL) {
        *n_tokens += n;
    }
    return PIPIT_OK;
}

enum pipit_status backend_tokenize(const struct pipit_model *model,
                                   const char *text,
                                   bool add_special,
                                   bool parse_special,
                                   int32_t **out,
                                   int32_t *n_out) {
    *out = NULL;
    *n_out = 0;
    int32_t *all = NULL;
    int32_t n_all = 0;
    bool data = false;
    enum pipit_status st = PIPIT_OK;
    for (const char *p = text;;) {
        /* the next run: up to the next marker */
        size_t len = strcspn(p, BACKEND_DATA_OPEN BACKEND_DATA_CLOSE);
        if (len > 0) {
            struct strbuf run = {0};
            strbuf_add(&run, p, len);
            int32_t *toks = NULL, nt = 0;
            st = run.failed ? PIPIT_ERR_NOMEM
                            : pipit_tokenize_alloc(model, run.data, add_special && n_all == 0,
                                                   parse_special && !data, &toks, &nt);
            strbuf_free(&run);
            int32_t *grown =
                st == PIPIT_OK ? realloc(all, sizeof(*all) * (size_t)(n_all + nt + 1)) : NULL;
            if (st == PIPIT_OK && grown == NULL) {
                st = PIPIT_ERR_NOMEM;
            }
            if (st == PIPIT_OK) {
                all = grown;
                if (nt > 0) {
                    memcpy(all + n_all, toks, sizeof(*toks) * (size_t)nt);
                }
                n_all += nt;
            }
            pipit_free(toks);
            if (st != PIPIT_OK) {
                free(all);
                return st;
            }
        }
        p += len;
        if (*p == '\0') {
            break;
        }
        /* a marker: OPEN starts data, CLOSE ends it; the marker itself is no text */
        data = *p == BACKEND_DATA_OPEN[0];
        p++;
    }
    *out = all;
    *n_out = n_all;
    return PIPIT_OK;
}

/* Tokenize and append `text` to `region`; *n receives the token count. */
static enum pipit_status append_text(struct llama_backend *b,
                                     enum pipit_region region,
                                     const char *text,
                                     bool add_special,
                                     bool parse_special,
                                     int64_t *n) {
    int32_t *toks = NULL, nt = 0;
    enum pipit_status st = backend_tokenize(b->model, text, add_special, parse_special, &toks, &nt);
    if (st != PIPIT_OK) {
        return st;
    }
    /* counted as prefilled: the tokens the engine decoded, not those it reused after a truncate */
    struct pipit_perf before, after;
    pipit_context_get_perf(b->ctx, &before);
    st = nt > 0 ? pipit_context_append(b->ctx, region, toks, nt) : PIPIT_OK;
    free(toks);
    if (st == PIPIT_OK) {
        pipit_context_get_perf(b->ctx, &after);
        *n += after.n_prefill_tokens - before.n_prefill_tokens;
    }
    return st;
}

static enum pipit_status ensure_sampler(struct llama_backend *b,
                                        const struct backend_step_params *p) {
    const char *g = p->grammar;
    bool same = b->smpl != NULL && b->smpl_lazy == p->lazy && b->smpl_fast == p->fast_grammar &&
                ((g == NULL && b->smpl_grammar == NULL) ||
                 (g != NULL && b->smpl_grammar != NULL && strcmp(g, b->smpl_grammar) == 0));
    if (same) {
        pipit_sampler_reset(b->smpl);
        return PIPIT_OK;
    }
    pipit_sampler_free(b->smpl);
    free(b->smpl_grammar);
    b->smpl = NULL;
    b->smpl_grammar = NULL;
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    sp.temperature = b->temperature;
    sp.seed = b->seed + b->n_steps;
    sp.grammar = g;
    sp.grammar_transient = p->grammar_transient;
    if (g != NULL) { /* fast decoding: one decoder per backend (model) */
        if (b->fg == NULL) {
            enum pipit_status fst = pipit_fastgrammar_init(b->model, &b->fg, NULL);
            if (fst != PIPIT_OK) {
                return fst;
            }
        }
        sp.fast_grammar = b->fg;
        /* llama.cpp's grammar sampler draws; pipit's automaton still jumps forward, so the
         * model reads the forced text in the tokens it was trained on under either decoder */
        sp.gbnf_draws = !p->fast_grammar;
    }
    const char *patterns[1] = {p->trigger};
    if (g != NULL && p->lazy && p->trigger != NULL) {
        sp.grammar_lazy = true;
        sp.trigger_patterns = patterns;
        sp.n_trigger_patterns = 1;
    }
    struct pipit_error err;
    enum pipit_status st = pipit_sampler_init(b->model, &sp, &b->smpl, &err);
    if (st != PIPIT_OK) {
        return st;
    }
    if (g != NULL) {
        b->smpl_grammar = malloc(strlen(g) + 1);
        if (b->smpl_grammar == NULL) {
            pipit_sampler_free(b->smpl);
            b->smpl = NULL;
            return PIPIT_ERR_NOMEM;
        }
        memcpy(b->smpl_grammar, g, strlen(g) + 1);
    }
    b->smpl_lazy = p->lazy;
    b->smpl_fast = p->fast_grammar;
    return PIPIT_OK;
}

/* A complete call ends the step without waiting for the end-of-generation token. */
static bool call_complete(enum pipit_call_syntax syntax, const char *text) {
    if (!pipit_call_detect(syntax, text)) {
        return false;
    }
    size_t n = strlen(text);
    if (syntax == PIPIT_SYNTAX_HERMES) {
        return n >= 12 && strstr(text, "</tool_call>") != NULL;
    }
    if (n == 0 || text[n - 1] != ')') {
        return false;
    }
    struct pipit_call c;
    bool ok = pipit_call_parse(syntax, text, &c, NULL) == PIPIT_OK;
    pipit_call_clear(&c);
    return ok;
}

static enum pipit_status lb_step(void *self,
                                 const char *ephemeral,
                                 const struct backend_step_params *p,
                                 struct backend_step_output *out) {
    struct llama_backend *b = self;
    memset(out, 0, sizeof(*out));
    double t0 = pipit_now_ms();
    atomic_store(&b->cancel, false);
    if (p->n_threads > 0) {
        pipit_context_set_threads(b->ctx, p->n_threads);
    }
    b->parse_special = p->parse_special;
    enum pipit_status st = lb_flush(b, &out->permanent_tokens);
    if (st != PIPIT_OK) {
        return st;
    }
    st = append_text(b, PIPIT_REGION_EPHEMERAL, ephemeral, !b->bos_done, p->parse_special,
                     &out->prefill_tokens);
    b->bos_done = true;
    if (st == PIPIT_ERR_ABORTED) {
        out->cancelled = true;
        return PIPIT_OK;
    }
    if (st != PIPIT_OK) {
        return st;
    }
    st = ensure_sampler(b, p);
    if (st != PIPIT_OK) {
        return st;
    }
    b->n_steps++;
    struct strbuf text = {0};
    strbuf_str(&text, "");
    for (int32_t i = 0; i < p->max_tokens; i++) {
        if (atomic_load(&b->cancel)) {
            out->cancelled = true;
            break;
        }
        if (p->clock != NULL && policy_clock_expired(p->clock)) {
            out->out_of_time = true;
            break;
        }
        if (p->grammar != NULL) {
            /* jump-forward: text the grammar forces is appended in one batch, never sampled */
            int32_t forced[64];
            int32_t nf = pipit_sampler_forced(b->smpl, b->ctx, forced, 64);
            if (nf > 0 && i + nf > p->max_tokens) {
                /* the text the grammar forces does not fit in the tokens left: the call is cut
                 * here by the limit (sampling on would only end it early, unflagged) */
                out->token_limit = true;
                break;
            }
            if (nf > 0) {
                for (int32_t k = 0; k < nf; k++) {
                    char fp[256];
                    int32_t fn = pipit_token_piece(b->model, forced[k], fp, sizeof(fp));
                    if (fn > 0) {
                        strbuf_add(&text, fp, (size_t)fn);
                    }
                }
                out->decode_tokens += nf;
                if (i == 0) {
                    out->ttft_ms = pipit_now_ms() - t0;
                }
                i += nf - 1;
                bool whole = p->is_complete != NULL
                                 ? p->is_complete(text.data, p->complete_user_data)
                                 : call_complete(p->syntax, text.data);
                if (whole) {
                    break; /* the call is whole: nothing to decode */
                }
                st = pipit_context_decode_forced(b->ctx, forced, nf);
                if (st == PIPIT_ERR_ABORTED) {
                    out->cancelled = true;
                    st = PIPIT_OK;
                    break;
                }
                if (st != PIPIT_OK) {
                    break;
                }
                if (i + 1 == p->max_tokens) {
                    out->token_limit = true;
                }
                continue;
            }
        }
        int32_t tok = pipit_sampler_sample(b->smpl, b->ctx);
        if (i == 0) {
            out->ttft_ms = pipit_now_ms() - t0;
        }
        if (tok < 0) {
            st = (enum pipit_status)(-tok);
            break;
        }
        if (pipit_model_token_is_eog(b->model, tok)) {
            break;
        }
        char piece[256];
        int32_t n = pipit_token_piece(b->model, tok, piece, sizeof(piece));
        if (n > 0) {
            strbuf_add(&text, piece, (size_t)n);
        }
        out->decode_tokens++;
        bool complete = p->is_complete != NULL
                            ? p->is_complete(text.data, p->complete_user_data)
                            : p->grammar != NULL && call_complete(p->syntax, text.data);
        if (complete) {
            break; /* the call is whole: the next token could only end generation */
        }
        st = pipit_context_decode_token(b->ctx, tok);
        if (st == PIPIT_ERR_ABORTED) {
            out->cancelled = true;
            st = PIPIT_OK;
            break;
        }
        if (st != PIPIT_OK) {
            break;
        }
        if (i + 1 == p->max_tokens) {
            out->token_limit = true;
        }
    }
    out->text = strbuf_take(&text);
    if (out->text == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    return st;
}

static enum pipit_status lb_truncate(void *self, int32_t n_keep) {
    struct llama_backend *b = self;
    return pipit_context_truncate(b->ctx, n_keep);
}

static enum pipit_status lb_save_kv(void *self, uint8_t **out, size_t *len) {
    struct llama_backend *b = self;
    return pipit_context_save_state(b->ctx, out, len);
}

static enum pipit_status lb_load_kv(void *self, const uint8_t *data, size_t len) {
    struct llama_backend *b = self;
    strbuf_free(&b->pending);
    enum pipit_status st = pipit_context_load_state(b->ctx, data, len);
    b->bos_done = st == PIPIT_OK && pipit_context_n_permanent(b->ctx) > 0;
    return st;
}

static void lb_reset(void *self) {
    struct llama_backend *b = self;
    strbuf_free(&b->pending);
    pipit_context_clear(b->ctx);
    b->bos_done = false;
}

static void lb_rewind(void *self) {
    struct llama_backend *b = self;
    pipit_context_rewind(b->ctx);
}

static void lb_cancel(void *self) {
    struct llama_backend *b = self;
    atomic_store(&b->cancel, true);
    pipit_context_cancel(b->ctx);
}

static void lb_lengths(const void *self, int32_t *n_permanent, int32_t *n_ephemeral) {
    const struct llama_backend *b = self;
    *n_permanent = pipit_context_n_permanent(b->ctx);
    *n_ephemeral = pipit_context_n_ephemeral(b->ctx);
}

static void lb_perf(const void *self, struct pipit_perf *out) {
    const struct llama_backend *b = self;
    pipit_context_get_perf(b->ctx, out);
}

static void lb_destroy(void *self) {
    struct llama_backend *b = self;
    if (b == NULL) {
        return;
    }
    pipit_sampler_free(b->smpl);
    pipit_fastgrammar_free(b->fg); /* after its sampler */
    free(b->smpl_grammar);
    pipit_context_free(b->ctx);
    strbuf_free(&b->pending);
    free(b);
}

static const struct backend_ops LLAMA_BACKEND_OPS = {
    .add_permanent = lb_add_permanent,
    .step = lb_step,
    .flush = lb_flush,
    .truncate = lb_truncate,
    .save_kv = lb_save_kv,
    .load_kv = lb_load_kv,
    .reset = lb_reset,
    .rewind = lb_rewind,
    .cancel = lb_cancel,
    .lengths = lb_lengths,
    .perf = lb_perf,
    .destroy = lb_destroy,
};

enum pipit_status backend_llama_new(struct pipit_model *model,
                                    const struct pipit_context_params *cp,
                                    float temperature,
                                    uint32_t seed,
                                    struct backend *out,
                                    struct pipit_error *err) {
    if (model == NULL || cp == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "backend: NULL argument");
    }
    memset(out, 0, sizeof(*out));
    struct llama_backend *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "backend: out of memory");
    }
    enum pipit_status st = pipit_context_init(model, cp, &b->ctx, err);
    if (st != PIPIT_OK) {
        free(b);
        return st;
    }
    b->model = model;
    b->temperature = temperature;
    b->seed = seed;
    atomic_init(&b->cancel, false);
    out->ops = &LLAMA_BACKEND_OPS;
    out->self = b;
    return PIPIT_OK;
}

enum pipit_status backend_llama_set_adapter(struct backend *b, struct pipit_adapter *adapter) {
    if (b == NULL || b->ops != &LLAMA_BACKEND_OPS) {
        return PIPIT_ERR_INVALID_ARG;
    }
    struct llama_backend *lb = b->self;
    const float scale = 1.0f;
    return pipit_context_set_adapters(lb->ctx, adapter != NULL ? &adapter : NULL,
                                      adapter != NULL ? &scale : NULL, adapter != NULL ? 1 : 0);
}

void backend_free(struct backend *b) {
    if (b == NULL || b->ops == NULL) {
        return;
    }
    b->ops->destroy(b->self);
    b->ops = NULL;
    b->self = NULL;
}
