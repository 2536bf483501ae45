/*
 * testutil.h - shared helpers for pipit's cmocka tests.
 *
 * Model tests use GGUF files made at build time by `pipit make-model` in
 * PIPIT_TEST_MODEL_DIR (see tests/CMakeLists.txt): tiny random llama models
 * with the real llama-spm (32K) and qwen2 (151K) tokenizers, plus two LoRA
 * adapters. They always run with 1 thread so that tests in parallel never
 * oversubscribe the cores.
 */
#ifndef PIPIT_TESTUTIL_H
#define PIPIT_TESTUTIL_H

#include "pipit_tools.h"

// clang-format off
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h> /* needs the four headers above first */
// clang-format on
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_MODEL_SPM  PIPIT_TEST_MODEL_DIR "/tiny-spm.gguf"
#define TEST_MODEL_QWEN PIPIT_TEST_MODEL_DIR "/tiny-qwen2.gguf"
#define TEST_LORA_A     PIPIT_TEST_MODEL_DIR "/tiny-spm-lora-a.gguf"
#define TEST_LORA_B     PIPIT_TEST_MODEL_DIR "/tiny-spm-lora-b.gguf"

static inline struct pipit_model *test_load_model(const char *path) {
    struct pipit_error err;
    struct pipit_model *m = NULL;
    enum pipit_status st = pipit_model_load(path, NULL, &m, &err);
    if (st != PIPIT_OK) {
        fail_msg("cannot load %s: %s", path, err.text);
    }
    return m;
}

/* A model's vocabulary only (no weights: tokenizing, grammars), or the test fails. */
static inline struct pipit_model *test_load_vocab(const char *path) {
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_error err;
    struct pipit_model *m = NULL;
    if (pipit_model_load(path, &mp, &m, &err) != PIPIT_OK) {
        fail_msg("cannot load %s: %s", path, err.text);
    }
    return m;
}

/* A tool set from a file, or the test fails. */
static inline struct pipit_toolset *test_load_tools(const char *path) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

/* A tool set from JSON text (`name` for messages), or the test fails. */
static inline struct pipit_toolset *test_tools_from(const char *json, const char *name) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string(json, strlen(json), name, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

/* A device for an agent (pipit_device_init(); kind "camera", "phone", ...), or the test fails.
 * Free it with pipit_device_free() after the agents that use it. */
static inline struct pipit_device *
test_device(const char *kind, const struct pipit_toolset *ts, const char *init_json) {
    struct pipit_device *d = NULL;
    struct pipit_error err;
    if (pipit_device_init(kind, ts, init_json, &d, &err) != PIPIT_OK || d == NULL) {
        fail_msg("device %s: %s", kind != NULL ? kind : "(chosen)", err.text);
    }
    return d;
}

/* Agents and the devices made for them by test_agent_new(): test_agent_free() frees both. */
#define TEST_MAX_AGENT_DEVICES 64
static struct {
    const struct pipit_agent *agent;
    struct pipit_device *device;
} test_agent_devices[TEST_MAX_AGENT_DEVICES];

static inline void test_agent_keep_device(const struct pipit_agent *a, struct pipit_device *d) {
    for (size_t i = 0; i < TEST_MAX_AGENT_DEVICES; i++) {
        if (test_agent_devices[i].agent == NULL) {
            test_agent_devices[i].agent = a;
            test_agent_devices[i].device = d;
            return;
        }
    }
    fail_msg("more than %d agents with their own device", TEST_MAX_AGENT_DEVICES);
}

/* pipit_agent_free(), and the device test_agent_new() made for the agent. NULL is a no-op. */
static inline void test_agent_free(struct pipit_agent *a) {
    pipit_agent_free(a);
    for (size_t i = 0; a != NULL && i < TEST_MAX_AGENT_DEVICES; i++) {
        if (test_agent_devices[i].agent == a) {
            pipit_device_free(test_agent_devices[i].device);
            test_agent_devices[i].agent = NULL;
            test_agent_devices[i].device = NULL;
        }
    }
}

/* pipit_agent_init() on `params` (NULL: the defaults); without a device in them, on a fresh
 * camera of its own (what agents ran on before devices were handles), freed by
 * test_agent_free(). */
static inline enum pipit_status test_agent_new(struct pipit_model *m,
                                               const struct pipit_toolset *ts,
                                               const struct pipit_agent_params *params,
                                               struct pipit_agent **out,
                                               struct pipit_error *err) {
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    struct pipit_device *d = NULL;
    if (p.device == NULL) {
        d = test_device("camera", ts, NULL);
        p.device = d;
    }
    enum pipit_status st = pipit_agent_init(m, ts, &p, out, err);
    if (st == PIPIT_OK && d != NULL) {
        test_agent_keep_device(*out, d);
    } else {
        pipit_device_free(d);
    }
    return st;
}

#ifdef PIPIT_AGENT_H
/* The same for agent_new_with_backend() (include agent.h before this header). */
static inline enum pipit_status test_agent_new_with_backend(struct pipit_model *m,
                                                            const struct pipit_toolset *ts,
                                                            const struct pipit_agent_params *params,
                                                            struct backend b,
                                                            struct pipit_agent **out,
                                                            struct pipit_error *err) {
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    struct pipit_device *d = NULL;
    if (p.device == NULL) {
        d = test_device("camera", ts, NULL);
        p.device = d;
    }
    enum pipit_status st = agent_new_with_backend(m, ts, &p, b, out, err);
    if (st == PIPIT_OK && d != NULL) {
        test_agent_keep_device(*out, d);
    } else {
        pipit_device_free(d);
    }
    return st;
}
#endif

static inline struct pipit_context *test_new_context(struct pipit_model *m, uint32_t n_ctx) {
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = n_ctx;
    cp.n_threads = 1;
    struct pipit_context *ctx = NULL;
    struct pipit_error err;
    if (pipit_context_init(m, &cp, &ctx, &err) != PIPIT_OK) {
        fail_msg("cannot create context: %s", err.text);
    }
    return ctx;
}

/* Tokenize without BOS; the caller frees with pipit_free. */
static inline int32_t *test_tokens(struct pipit_model *m, const char *text, int32_t *n) {
    int32_t *toks = NULL;
    assert_int_equal(pipit_tokenize_alloc(m, text, false, false, &toks, n), PIPIT_OK);
    assert_true(*n > 0);
    return toks;
}

static inline float test_max_abs_diff(const float *a, const float *b, int32_t n) {
    float d = 0.0f;
    for (int32_t i = 0; i < n; i++) {
        float x = fabsf(a[i] - b[i]);
        if (x > d || isnan(x)) {
            d = isnan(x) ? INFINITY : x;
        }
    }
    return d;
}

/* A copy of the logits (they are borrowed until the next decode). */
static inline float *test_copy_logits(struct pipit_context *ctx, int32_t n_vocab) {
    const float *l = pipit_context_logits(ctx);
    assert_non_null(l);
    float *c = malloc(sizeof(float) * (size_t)n_vocab);
    assert_non_null(c);
    memcpy(c, l, sizeof(float) * (size_t)n_vocab);
    return c;
}

static inline void test_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n > 0) {
        assert_int_equal(fwrite(data, 1, n, f), n);
    }
    assert_int_equal(fclose(f), 0);
}

/* Read a whole file; the caller frees. */
static inline unsigned char *test_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    assert_true(size >= 0);
    rewind(f);
    unsigned char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    *n = (size_t)size;
    return buf;
}

#endif /* PIPIT_TESTUTIL_H */
