/*
 * backend.h - the model side of an agent turn, behind a small interface.
 *
 * The agent (agent.c) owns the loop, the limits, the tools and the sentence; a backend owns the
 * KV cache and the decoding: it keeps a permanent prefix, prefills one step's ephemeral text,
 * decodes (constrained by a grammar when asked), and rewinds. Two implementations:
 *   - the llama backend (backend.c): pipit's engine on a real model;
 *   - a scripted fake (tests/fake_backend.h): returns canned outputs, for unit-testing the
 *     loop logic. It is used in addition to, never instead of, tests on real models.
 */
#ifndef PIPIT_BACKEND_H
#define PIPIT_BACKEND_H

#include "pipit.h"
#include "policy.h"

#include <stdbool.h>
#include <stdint.h>

/* Data spans. In text given to add_permanent() and step(), the bytes between
 * BACKEND_DATA_OPEN and BACKEND_DATA_CLOSE are data: they are tokenized with parse_special =
 * false even when the step's parse_special is true, so text written in a chat template's
 * messages (the person's words, memory built from tool and cloud results) can never become a
 * control token such as <|im_start|>; only the template's own text around them can. The
 * markers are not text (they give no tokens). Data must not contain them: the agent drops C0
 * control characters from what it wraps (agent.c, data_span), and untrusted text never holds
 * them (untrusted.h). */
#define BACKEND_DATA_OPEN  "\x0e" /* SO, "shift out" of the template */
#define BACKEND_DATA_CLOSE "\x0f" /* SI, back in */

/* What one decode step is asked to do. */
struct backend_step_params {
    const char *grammar;              /* GBNF of a call, NULL = unconstrained */
    bool lazy;                        /* the grammar waits for `trigger` (plain text allowed) */
    const char *trigger;              /* the call's opening text, e.g. "<call>" */
    enum pipit_call_syntax syntax;    /* to know when a call is complete (stop early) */
    int32_t max_tokens;               /* generated tokens at most */
    int32_t n_threads;                /* threads for this step (thermal state) */
    const struct policy_clock *clock; /* checked between tokens; NULL = none */
    bool parse_special;               /* the ephemeral text holds special-token text (chat
                                         templates), outside its data spans; false for pipit's
                                         plain format, so a user cannot type a control token */
    /* Optional: true when the text generated so far is whole and decoding can stop (NULL: a
     * complete call in `syntax`). */
    bool (*is_complete)(const char *text, void *user_data);
    void *complete_user_data;
    /* pipit's own constrained decoder instead of llama.cpp's grammar sampler
     * (docs/fastgrammar.md); grammars outside its subset still use llama.cpp's. Jump-forward
     * applies under both whenever the grammar fits the fast decoder's automaton */
    bool fast_grammar;
    bool grammar_transient; /* `grammar` is this step's own (pipit_sampler_params) */
};

/* What one decode step produced. */
struct backend_step_output {
    char *text;               /* generated text (owned, free with free) */
    int64_t prefill_tokens;   /* ephemeral tokens prefilled for this step */
    int64_t permanent_tokens; /* permanent tokens prefilled during this step (pending
                                 permanent text is prefilled first) */
    int64_t decode_tokens;    /* tokens generated */
    double ttft_ms;           /* from the step's start to its first generated token */
    bool token_limit;         /* stopped at max_tokens */
    bool out_of_time;         /* stopped because the clock expired */
    bool cancelled;           /* stopped by backend_cancel */
};

struct backend_ops {
    /* Queue text for the end of the permanent prefix; it is prefilled at the start of the
     * next step (so a turn pays for it, and a counter shows it). */
    enum pipit_status (*add_permanent)(void *self, const char *text);
    /* Prefill `ephemeral` and decode. Returns PIPIT_OK when the step ran (even if cut by a
     * limit: see the output flags), or the engine's error. */
    enum pipit_status (*step)(void *self,
                              const char *ephemeral,
                              const struct backend_step_params *params,
                              struct backend_step_output *out);
    /* Prefill the queued permanent text now; *n_tokens (may be NULL) receives its tokens. */
    enum pipit_status (*flush)(void *self, int64_t *n_tokens);
    /* Shorten the permanent prefix to `n_keep` tokens (the ephemeral tail is empty). */
    enum pipit_status (*truncate)(void *self, int32_t n_keep);
    /* The permanent prefix's KV state as a blob (free with free); the tail must be empty. */
    enum pipit_status (*save_kv)(void *self, uint8_t **out, size_t *len);
    /* Restore a blob from save_kv; on failure the prefix is empty. */
    enum pipit_status (*load_kv)(void *self, const uint8_t *data, size_t len);
    /* Drop everything: the prefix is rebuilt from queued text (add_permanent). */
    void (*reset)(void *self);
    /* Drop the step's ephemeral tokens. */
    void (*rewind)(void *self);
    /* Ask a running step to stop (any thread). */
    void (*cancel)(void *self);
    /* Tokens in the permanent prefix and in the ephemeral tail right now. */
    void (*lengths)(const void *self, int32_t *n_permanent, int32_t *n_ephemeral);
    /* The engine's cumulative counters (optional: NULL for a backend without an engine). */
    void (*perf)(const void *self, struct pipit_perf *out);
    void (*destroy)(void *self);
};

struct backend {
    const struct backend_ops *ops;
    void *self;
};

/* Apply `adapter` at scale 1 to the context of a backend made by backend_llama_new (NULL =
 * none). PIPIT_ERR_INVALID_ARG for any other backend. */
enum pipit_status backend_llama_set_adapter(struct backend *b, struct pipit_adapter *adapter);

/* The llama backend on `model` (borrowed; must outlive it), its context made with `cp`;
 * `temperature` <= 0 decodes greedily. */
enum pipit_status backend_llama_new(struct pipit_model *model,
                                    const struct pipit_context_params *cp,
                                    float temperature,
                                    uint32_t seed,
                                    struct backend *out,
                                    struct pipit_error *err);

void backend_free(struct backend *b);

/* Tokenize `text` as the llama backend does: data spans (above) without special tokens, the
 * rest with `parse_special`; the BOS (add_special) once, before the first run. *out is a new
 * array (free with free; NULL when *n_out is 0). */
enum pipit_status backend_tokenize(const struct pipit_model *model,
                                   const char *text,
                                   bool add_special,
                                   bool parse_special,
                                   int32_t **out,
                                   int32_t *n_out);

#endif /* PIPIT_BACKEND_H */
