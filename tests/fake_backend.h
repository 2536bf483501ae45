/*
 * fake_backend.h - a scripted backend for unit-testing the agent's loop logic.
 *
 * Each step returns the next scripted output (the model's text) instead of decoding, and
 * records what the agent asked for (the ephemeral prompt, the step parameters). It is used in
 * addition to the tests on real models, never instead of them.
 */
#ifndef PIPIT_FAKE_BACKEND_H
#define PIPIT_FAKE_BACKEND_H

#include "backend.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_MAX_STEPS 64

struct fake_backend {
    const char *script[FAKE_MAX_STEPS]; /* outputs, in order; NULL = "" */
    int n_script;
    int next;                                          /* index of the next output */
    char prompts[FAKE_MAX_STEPS][1024];                /* ephemeral prompts seen */
    struct backend_step_params params[FAKE_MAX_STEPS]; /* .grammar points at grammar_copy */
    char *grammar_copy[FAKE_MAX_STEPS]; /* a step's grammar may be freed after it (transient) */
    int n_steps;
    int64_t permanent_pending; /* bytes of permanent text queued, not yet "prefilled" */
    int64_t permanent_len;
    char permanent[32768];           /* the permanent text (queued and prefilled), for assertions */
    const struct pipit_model *vocab; /* when set, tokens are counted with its tokenizer */
    double delay_ms;                 /* each step takes this long (checking the clock) */
    bool block_until_cancel;         /* a step runs until cancelled */
    int64_t ctx_limit;      /* > 0: a step whose prefix, prompt and output pass it fails with
                               PIPIT_ERR_CONTEXT_FULL (as llama's KV cache does), output unconsumed */
    enum pipit_status fail; /* != PIPIT_OK: every step fails with it (an engine failure) */
    atomic_bool cancel;
};

/* Tokens of `text`: the vocabulary's count when one is set, else one per byte. */
static inline int64_t fake_tokens(const struct fake_backend *f, const char *text) {
    if (f->vocab != NULL) {
        int32_t n = pipit_tokenize(f->vocab, text, false, false, NULL, 0);
        return n < 0 ? -(int64_t)n : n;
    }
    return (int64_t)strlen(text);
}

static inline enum pipit_status fake_add_permanent(void *self, const char *text) {
    struct fake_backend *f = self;
    f->permanent_pending += fake_tokens(f, text);
    size_t used = strlen(f->permanent);
    snprintf(f->permanent + used, sizeof(f->permanent) - used, "%s", text);
    return PIPIT_OK;
}

static inline double fake_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline enum pipit_status fake_step(void *self,
                                          const char *ephemeral,
                                          const struct backend_step_params *p,
                                          struct backend_step_output *out) {
    struct fake_backend *f = self;
    memset(out, 0, sizeof(*out));
    atomic_store(&f->cancel, false);
    if (f->n_steps < FAKE_MAX_STEPS) {
        snprintf(f->prompts[f->n_steps], sizeof(f->prompts[0]), "%s", ephemeral);
        f->params[f->n_steps] = *p;
        free(f->grammar_copy[f->n_steps]);
        f->grammar_copy[f->n_steps] = p->grammar != NULL ? malloc(strlen(p->grammar) + 1) : NULL;
        if (f->grammar_copy[f->n_steps] != NULL) {
            memcpy(f->grammar_copy[f->n_steps], p->grammar, strlen(p->grammar) + 1);
        }
        f->params[f->n_steps].grammar = f->grammar_copy[f->n_steps];
    }
    f->n_steps++;
    out->permanent_tokens = f->permanent_pending;
    f->permanent_len += f->permanent_pending;
    f->permanent_pending = 0;
    out->prefill_tokens = fake_tokens(f, ephemeral);
    const char *next =
        f->next < f->n_script && f->script[f->next] != NULL ? f->script[f->next] : "";
    if (f->fail != PIPIT_OK) {
        return f->fail;
    }
    if (f->ctx_limit > 0 &&
        f->permanent_len + out->prefill_tokens + (int64_t)strlen(next) > f->ctx_limit) {
        return PIPIT_ERR_CONTEXT_FULL;
    }
    double t0 = fake_now_ms();
    while (f->block_until_cancel || fake_now_ms() - t0 < f->delay_ms) {
        if (atomic_load(&f->cancel)) {
            out->cancelled = true;
            break;
        }
        if (p->clock != NULL && policy_clock_expired(p->clock)) {
            out->out_of_time = true;
            break;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    const char *text =
        f->next < f->n_script && f->script[f->next] != NULL ? f->script[f->next] : "";
    f->next++;
    out->text = malloc(strlen(text) + 1);
    if (out->text == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    memcpy(out->text, text, strlen(text) + 1);
    out->decode_tokens = (int64_t)strlen(text);
    out->ttft_ms = 1.0;
    return PIPIT_OK;
}

static inline enum pipit_status fake_flush(void *self, int64_t *n_tokens) {
    struct fake_backend *f = self;
    if (n_tokens != NULL) {
        *n_tokens += f->permanent_pending;
    }
    f->permanent_len += f->permanent_pending;
    f->permanent_pending = 0;
    return PIPIT_OK;
}

static inline enum pipit_status fake_truncate(void *self, int32_t n_keep) {
    struct fake_backend *f = self;
    if (n_keep < 0 || n_keep > f->permanent_len) {
        return PIPIT_ERR_INVALID_ARG;
    }
    f->permanent_len = n_keep;
    if ((size_t)n_keep < sizeof(f->permanent)) {
        f->permanent[n_keep] = '\0'; /* a "token" is a byte */
    }
    return PIPIT_OK;
}

static inline enum pipit_status fake_save_kv(void *self, uint8_t **out, size_t *len) {
    struct fake_backend *f = self;
    /* the "KV state" of the fake is its permanent text */
    size_t n = strlen(f->permanent) + 1;
    *out = malloc(n + sizeof(int64_t));
    if (*out == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    memcpy(*out, &f->permanent_len, sizeof(int64_t));
    memcpy(*out + sizeof(int64_t), f->permanent, n);
    *len = n + sizeof(int64_t);
    return PIPIT_OK;
}

static inline enum pipit_status fake_load_kv(void *self, const uint8_t *data, size_t len) {
    struct fake_backend *f = self;
    if (len < sizeof(int64_t) + 1 || data[len - 1] != '\0' ||
        len - sizeof(int64_t) > sizeof(f->permanent)) {
        f->permanent[0] = '\0';
        f->permanent_len = 0;
        return PIPIT_ERR_CORRUPT;
    }
    memcpy(&f->permanent_len, data, sizeof(int64_t));
    memcpy(f->permanent, data + sizeof(int64_t), len - sizeof(int64_t));
    f->permanent_pending = 0;
    return PIPIT_OK;
}

static inline void fake_reset(void *self) {
    struct fake_backend *f = self;
    f->permanent[0] = '\0';
    f->permanent_len = 0;
    f->permanent_pending = 0;
}

static inline void fake_rewind(void *self) {
    (void)self;
}

static inline void fake_cancel(void *self) {
    struct fake_backend *f = self;
    atomic_store(&f->cancel, true);
}

static inline void fake_lengths(const void *self, int32_t *n_permanent, int32_t *n_ephemeral) {
    const struct fake_backend *f = self;
    *n_permanent = (int32_t)f->permanent_len;
    *n_ephemeral = 0;
}

static inline void fake_destroy(void *self) {
    struct fake_backend *f = self; /* owned by the test; the grammars it copied are freed */
    for (int i = 0; i < FAKE_MAX_STEPS; i++) {
        free(f->grammar_copy[i]);
        f->grammar_copy[i] = NULL;
        f->params[i].grammar = NULL;
    }
}

static const struct backend_ops FAKE_BACKEND_OPS = {
    .add_permanent = fake_add_permanent,
    .step = fake_step,
    .flush = fake_flush,
    .truncate = fake_truncate,
    .save_kv = fake_save_kv,
    .load_kv = fake_load_kv,
    .reset = fake_reset,
    .rewind = fake_rewind,
    .cancel = fake_cancel,
    .lengths = fake_lengths,
    .destroy = fake_destroy,
};

static inline struct backend fake_backend_wrap(struct fake_backend *f) {
    struct backend b = {.ops = &FAKE_BACKEND_OPS, .self = f};
    return b;
}

#endif /* PIPIT_FAKE_BACKEND_H */
