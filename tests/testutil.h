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

#include "pipit.h"

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
