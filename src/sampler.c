/*
 * sampler.c - pipit_sampler: picks the next token from a context's logits.
 *
 * Sampling is a chain (greedy, or top-k/top-p/temperature/dist) plus an
 * optional llama.cpp grammar sampler kept outside the chain. Laziness is
 * pipit's own, not llama.cpp's: llama.cpp's lazy grammar throws a C++ exception
 * (and so terminates the process) when the trigger text does not fit the
 * grammar. Here every token is offered to the grammar as a one-candidate array
 * first; only a token the grammar allows is accepted, and a trigger that does
 * not fit is the status PIPIT_ERR_GRAMMAR.
 *
 * The fast decoder (docs/fastgrammar.md) replaces llama.cpp's grammar sampler when asked: its
 * decisions are src/fg_sampler.c's (what a step draws from, whether a draw is taken, what
 * jump-forward forces); pipit_sampler_forced() is the jump-forward. llama.cpp's side (the
 * chain, its grammar sampler, the candidates, the tokenizer) is engine.c's, behind engine.h:
 * no llama.h here.
 */
#define _POSIX_C_SOURCE 200809L

#include "engine.h"
#include "fastgrammar.h"
#include "fg_sampler.h"
#include "pipit.h"
#include "status.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLER_MAX_TRIGGERS 32
#define SAMPLER_MAX_TEXT     (64 * 1024) /* output kept for trigger patterns */

struct pipit_sampler {
    const struct pipit_model *model;
    struct engine_draw *draw; /* llama.cpp's chain, its grammar sampler when the GBNF is
                                 llama.cpp's, the candidates (engine.h) */
    int32_t n_vocab;

    bool lazy;      /* the grammar waits for a trigger */
    bool triggered; /* a trigger fired: the grammar applies */
    int32_t trigger_tokens[SAMPLER_MAX_TRIGGERS];
    size_t n_trigger_tokens;
    regex_t patterns[SAMPLER_MAX_TRIGGERS];
    size_t n_patterns;
    char *text; /* output since the last reset (lazy pattern mode), NUL-terminated
                 */
    size_t text_len;

    /* fast constrained decoding (section below): pipit's automaton instead of `grammar` */
    struct fg_sampler fast; /* fast.a NULL: llama.cpp's grammar sampler (or none) */
    bool shadow;            /* gbnf_draws: llama.cpp's grammar draws, fast.a only jumps forward */
    bool shadow_lost;       /* the automaton refused a token llama.cpp's grammar took: no more jumps
                               until the reset */
};

static bool fast_attach(struct pipit_sampler *s, const struct pipit_sampler_params *p);

/* gbnf_draws: keep the automaton in step with a token llama.cpp's grammar took; one it refuses
 * (the two grammars disagree) ends the jumps until the reset, never the decode. */
static void shadow_follow(struct pipit_sampler *s, int32_t token) {
    if (!s->shadow_lost && !fg_sampler_accept(&s->fast, token)) {
        s->shadow_lost = true;
    }
}

struct pipit_sampler_params pipit_sampler_default_params(void) {
    struct pipit_sampler_params p = {
        .temperature = 0.0f,
        .top_k = 40,
        .top_p = 0.95f,
        .seed = 42,
        .grammar = NULL,
        .grammar_root = NULL,
        .grammar_lazy = false,
        .trigger_patterns = NULL,
        .n_trigger_patterns = 0,
        .trigger_tokens = NULL,
        .n_trigger_tokens = 0,
    };
    return p;
}

enum pipit_status pipit_sampler_init(const struct pipit_model *model,
                                     const struct pipit_sampler_params *params,
                                     struct pipit_sampler **out,
                                     struct pipit_error *err) {
    pipit_error_clear(err);
    if (model == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "engine: sampler: NULL argument");
    }
    *out = NULL;
    struct pipit_sampler_params p = params != NULL ? *params : pipit_sampler_default_params();
    if ((p.n_trigger_tokens > 0 && p.trigger_tokens == NULL) ||
        (p.n_trigger_patterns > 0 && p.trigger_patterns == NULL) ||
        p.n_trigger_tokens > SAMPLER_MAX_TRIGGERS || p.n_trigger_patterns > SAMPLER_MAX_TRIGGERS) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "engine: sampler: triggers NULL or more than %d",
                               SAMPLER_MAX_TRIGGERS);
    }
    struct pipit_sampler *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }
    s->model = model;
    s->n_vocab = engine_model_n_vocab(model);
    s->draw = engine_draw_new(model);
    if (s->draw == NULL) {
        pipit_sampler_free(s);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
    }

    if (p.grammar != NULL) {
        const char *root = p.grammar_root != NULL ? p.grammar_root : "root";
        char why[256] = "";
        bool fast = fast_attach(s, &p); /* fast decoder when asked and the grammar fits it */
        s->shadow = fast && p.gbnf_draws;
        if (!fast || s->shadow) {
            engine_draw_set_grammar(s->draw, p.grammar, root, why, sizeof(why));
        }
        if (!engine_draw_has_grammar(s->draw) && (s->fast.a == NULL || s->shadow)) {
            pipit_sampler_free(s);
            return pipit_error_set(err, PIPIT_ERR_GRAMMAR, "engine: grammar rejected: %s",
                                   why[0] != '\0' ? why : "parse error");
        }
        s->lazy = p.grammar_lazy && (p.n_trigger_patterns > 0 || p.n_trigger_tokens > 0);
        for (size_t i = 0; s->lazy && i < p.n_trigger_tokens; i++) {
            if (p.trigger_tokens[i] < 0 || p.trigger_tokens[i] >= s->n_vocab) {
                pipit_sampler_free(s);
                return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                       "engine: sampler: trigger token %d outside the vocabulary",
                                       (int)p.trigger_tokens[i]);
            }
            s->trigger_tokens[s->n_trigger_tokens++] = p.trigger_tokens[i];
        }
        for (size_t i = 0; s->lazy && i < p.n_trigger_patterns; i++) {
            const char *pat = p.trigger_patterns[i] != NULL ? p.trigger_patterns[i] : "";
            if (regcomp(&s->patterns[s->n_patterns], pat, REG_EXTENDED) != 0) {
                pipit_sampler_free(s);
                return pipit_error_set(err, PIPIT_ERR_GRAMMAR,
                                       "engine: trigger pattern is not a POSIX extended regular "
                                       "expression: %s",
                                       pat);
            }
            s->n_patterns++;
        }
        if (s->n_patterns > 0) {
            s->text = malloc(SAMPLER_MAX_TEXT + 1);
            if (s->text == NULL) {
                pipit_sampler_free(s);
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "engine: out of memory");
            }
            s->text[0] = '\0';
        }
    }
    engine_draw_set_chain(s->draw, &p);
    *out = s;
    return PIPIT_OK;
}

void pipit_sampler_free(struct pipit_sampler *smpl) {
    if (smpl == NULL) {
        return;
    }
    engine_draw_free(smpl->draw);
    for (size_t i = 0; i < smpl->n_patterns; i++) {
        regfree(&smpl->patterns[i]);
    }
    free(smpl->text);
    free(smpl);
}

/* ============================================================================
 * fast constrained decoding (docs/fastgrammar.md)
 *
 * With pipit_sampler_params.fast_grammar the grammar is pipit's own automaton instead of
 * llama.cpp's grammar sampler. The decisions are the fast decoder's (src/fg_sampler.c: what a
 * step draws from, whether a draw is taken, what jump-forward forces); the draws, with
 * llama.cpp's sampling chain, and the tokenizer are here. pipit_sampler_forced() is the
 * jump-forward.
 */

/* Use the fast decoder for p->grammar when asked and the grammar fits it. */
static bool fast_attach(struct pipit_sampler *s, const struct pipit_sampler_params *p) {
    if (p->fast_grammar == NULL || p->grammar == NULL ||
        (p->grammar_root != NULL && strcmp(p->grammar_root, "root") != 0) ||
        fg_owner_of(p->fast_grammar) != (const void *)s->model) {
        return false;
    }
    return fg_sampler_attach(&s->fast, p->fast_grammar, p->grammar, p->grammar_transient);
}

/* Feed one token to whichever grammar the sampler has; false (nothing changed) when the grammar
 * does not allow it. */
static bool grammar_feed_token(struct pipit_sampler *s, int32_t token) {
    if (s->fast.a == NULL) {
        return engine_draw_grammar_accept(s->draw, token);
    }
    if (!s->shadow) {
        return fg_sampler_accept(&s->fast, token);
    }
    if (!engine_draw_grammar_accept(s->draw, token)) {
        return false;
    }
    shadow_follow(s, token);
    return true;
}

static int32_t
fast_sample(struct pipit_sampler *s, struct pipit_context *ctx, const float *logits) {
    struct pipit_perf *perf = engine_context_perf(ctx);
    double t0 = pipit_now_ms();
    struct fg_draw d;
    fg_sampler_begin(&s->fast, &d);
    double t_con = pipit_now_ms() - t0;
    int32_t result;
    bool drawn;
    for (;;) {
        result = engine_draw_fast(s->draw, logits, &d, &drawn);
        if (d.exact && result < 0) {
            perf->t_sample_ms += pipit_now_ms() - t0;
            if (result == -2) {
                engine_context_fail(ctx, PIPIT_ERR_NO_CANDIDATES,
                                    "engine: sample: the grammar allows no token");
            } else {
                engine_context_fail(ctx, PIPIT_ERR_NO_CANDIDATES,
                                    "engine: sample: nothing selected");
            }
            return -PIPIT_ERR_NO_CANDIDATES;
        }
        double tc = pipit_now_ms();
        bool taken = fg_sampler_offer(&s->fast, result, &d);
        t_con += pipit_now_ms() - tc;
        if (taken) {
            break;
        }
    }
    engine_draw_accept(s->draw, result);
    if (drawn) {
        perf->n_draws++;
    } else {
        perf->n_forced_tokens++;
    }
    perf->t_constraint_ms += t_con;
    perf->t_sample_ms += pipit_now_ms() - t0;
    perf->n_sample_calls++;
    return result;
}

/* Tokenize buf[0..n) and find the token where its last `tail` bytes begin: *first receives
 * that index. Returns the token count, or -1 when no token boundary falls there (or the pieces
 * do not spell the text). */
static int32_t fast_tokenize_tail(const struct pipit_sampler *s,
                                  const char *buf,
                                  size_t n,
                                  size_t tail,
                                  int32_t *toks,
                                  int32_t cap,
                                  int32_t *first) {
    int32_t nt = engine_tokenize(s->model, buf, (int32_t)n, toks, cap, false, true);
    *first = fg_sampler_tail(&s->fast, buf, n, tail, toks, nt);
    return *first >= 0 ? nt : -1;
}

int32_t pipit_sampler_forced(struct pipit_sampler *smpl,
                             struct pipit_context *ctx,
                             int32_t *tokens,
                             int32_t n_max) {
    if (smpl == NULL || ctx == NULL || tokens == NULL || n_max <= 0 || smpl->fast.a == NULL ||
        smpl->shadow_lost || (smpl->lazy && !smpl->triggered) || !fg_sampler_alive(&smpl->fast)) {
        return 0;
    }
    struct pipit_perf *perf = engine_context_perf(ctx);
    double t0 = pipit_now_ms();
    char buf[FG_MAX_CONTEXT + FG_MAX_FORCED];
    char *text = buf + FG_MAX_CONTEXT;
    bool ends = false;
    size_t len = fg_sampler_forced_text(&smpl->fast, text, FG_MAX_FORCED, &ends);
    int32_t used = 0;
    if (len > 0) {
        /* the previous token as left context, so the forced tokens are the ones the tokenizer
         * would cut from the whole text; without it when that fails */
        size_t pre = 0;
        int32_t n_cached = 0;
        const int32_t *cached = pipit_context_tokens(ctx, &n_cached);
        if (n_cached > 0) {
            int32_t pn;
            const char *pp = fg_sampler_piece(&smpl->fast, cached[n_cached - 1], &pn);
            if (pp != NULL && pn <= FG_MAX_CONTEXT) {
                pre = (size_t)pn;
                memcpy(text - pre, pp, pre);
            }
        }
        int32_t toks[FG_MAX_FORCED + FG_MAX_CONTEXT + 8];
        int32_t cap = (int32_t)(sizeof(toks) / sizeof(toks[0]));
        int32_t first = -1;
        int32_t nt = fast_tokenize_tail(smpl, text - pre, pre + len, len, toks, cap, &first);
        if (nt < 0 && pre > 0) {
            nt = fast_tokenize_tail(smpl, text, len, len, toks, cap, &first);
        }
        if (nt > 0) {
            int32_t use = nt - first;
            if (use > n_max) {
                use = n_max;
            }
            used = fg_sampler_force(&smpl->fast, toks + first, use, len, ends);
            for (int32_t i = 0; smpl->shadow && i < used; i++) {
                /* llama.cpp's grammar takes the forced tokens too, or they are not forced */
                if (!engine_draw_grammar_accept(smpl->draw, toks[first + i])) {
                    smpl->shadow_lost = true;
                    used = i;
                }
            }
            for (int32_t i = 0; i < used; i++) {
                engine_draw_accept(smpl->draw, toks[first + i]);
                tokens[i] = toks[first + i];
            }
        }
    }
    perf->n_forced_tokens += used;
    double dt = pipit_now_ms() - t0;
    perf->t_constraint_ms += dt;
    perf->t_forced_ms += dt;
    return used;
}

/* Lazy mode, not yet triggered: record `token` and fire the grammar when a
 * trigger matches. */
static enum pipit_status lazy_observe(struct pipit_sampler *s, int32_t token) {
    for (size_t i = 0; i < s->n_trigger_tokens; i++) {
        if (s->trigger_tokens[i] == token) {
            s->triggered = true;
            return grammar_feed_token(s, token) ? PIPIT_OK : PIPIT_ERR_GRAMMAR;
        }
    }
    if (s->n_patterns == 0) {
        return PIPIT_OK;
    }
    char piece[256];
    int32_t n = engine_token_to_piece(s->model, token, piece, (int32_t)sizeof(piece));
    if (n < 0 || s->text_len + (size_t)n > SAMPLER_MAX_TEXT) {
        return PIPIT_OK; /* beyond the window: such output never triggers */
    }
    memcpy(s->text + s->text_len, piece, (size_t)n);
    s->text_len += (size_t)n;
    s->text[s->text_len] = '\0';
    for (size_t i = 0; i < s->n_patterns; i++) {
        regmatch_t m[2];
        if (regexec(&s->patterns[i], s->text, 2, m, 0) != 0) {
            continue;
        }
        regoff_t start = m[1].rm_so >= 0 ? m[1].rm_so : m[0].rm_so;
        s->triggered = true;
        /* Feed the grammar the text from the trigger on, re-tokenized: the grammar
         * works on text, so any tokenization of it leads to the same grammar state.
         */
        const char *from = s->text + start;
        if (s->fast.a != NULL && !s->shadow) { /* the automaton reads the text itself */
            return fg_sampler_feed_text(&s->fast, from, strlen(from)) ? PIPIT_OK
                                                                      : PIPIT_ERR_GRAMMAR;
        }
        if (s->shadow && !fg_sampler_feed_text(&s->fast, from, strlen(from))) {
            s->shadow_lost = true;
        }
        int32_t cap = (int32_t)strlen(from) + 8;
        int32_t *toks = malloc(sizeof(int32_t) * (size_t)cap);
        if (toks == NULL) {
            return PIPIT_ERR_NOMEM;
        }
        int32_t nt = engine_tokenize(s->model, from, (int32_t)strlen(from), toks, cap, false, true);
        enum pipit_status st = nt >= 0 ? PIPIT_OK : PIPIT_ERR_TOKENIZE;
        for (int32_t k = 0; k < nt && st == PIPIT_OK; k++) {
            if (!engine_draw_grammar_accept(s->draw, toks[k])) {
                st = PIPIT_ERR_GRAMMAR;
            }
        }
        free(toks);
        return st;
    }
    return PIPIT_OK;
}

int32_t pipit_sampler_sample(struct pipit_sampler *smpl, struct pipit_context *ctx) {
    if (smpl == NULL || ctx == NULL || engine_context_model(ctx) != smpl->model) {
        return -PIPIT_ERR_INVALID_ARG;
    }
    const float *logits = pipit_context_logits(ctx);
    if (logits == NULL) {
        engine_context_fail(ctx, PIPIT_ERR_STATE,
                            "engine: sample: no logits (append or decode first)");
        return -PIPIT_ERR_STATE;
    }
    if (smpl->fast.a != NULL && !smpl->shadow && (!smpl->lazy || smpl->triggered)) {
        return fast_sample(smpl, ctx, logits);
    }
    struct pipit_perf *perf = engine_context_perf(ctx);
    double t0 = pipit_now_ms();
    bool constrained = engine_draw_has_grammar(smpl->draw) && (!smpl->lazy || smpl->triggered);
    int32_t result = engine_draw_sample(smpl->draw, logits, constrained, perf);
    if (result < 0) {
        engine_context_fail(ctx, PIPIT_ERR_NO_CANDIDATES, "engine: sample: every token is masked");
        result = -PIPIT_ERR_NO_CANDIDATES;
    } else if (constrained && smpl->shadow) {
        shadow_follow(smpl, result);
    } else {
        enum pipit_status st = PIPIT_OK;
        if (!constrained && (engine_draw_has_grammar(smpl->draw) || smpl->fast.a != NULL)) {
            st = lazy_observe(smpl, result);
        }
        if (st != PIPIT_OK) {
            engine_context_fail(ctx, st,
                                "engine: sample: the trigger text does not start the grammar");
            result = -(int32_t)st;
        }
    }
    perf->t_sample_ms += pipit_now_ms() - t0;
    perf->n_sample_calls++;
    return result;
}

enum pipit_status pipit_sampler_accept(struct pipit_sampler *smpl, int32_t token) {
    if (smpl == NULL || token < 0 || token >= smpl->n_vocab) {
        return PIPIT_ERR_INVALID_ARG;
    }
    engine_draw_accept(smpl->draw, token);
    if (!engine_draw_has_grammar(smpl->draw) && smpl->fast.a == NULL) {
        return PIPIT_OK;
    }
    if (smpl->lazy && !smpl->triggered) {
        return lazy_observe(smpl, token);
    }
    return grammar_feed_token(smpl, token) ? PIPIT_OK : PIPIT_ERR_GRAMMAR;
}

void pipit_sampler_reset(struct pipit_sampler *smpl) {
    if (smpl == NULL) {
        return;
    }
    engine_draw_reset(smpl->draw);
    if (smpl->fast.a != NULL) {
        fg_sampler_reset(&smpl->fast);
    }
    smpl->triggered = false;
    smpl->shadow_lost = false;
    smpl->text_len = 0;
    if (smpl->text != NULL) {
        smpl->text[0] = '\0';
    }
}
