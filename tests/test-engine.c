/*
 * test-engine.c - the engine on real llama.cpp and real GGUF files made by
 * pipit.
 *
 * Shows: exact rewind of the ephemeral tail, commit, reuse after a truncate, context-full and
 * misuse statuses, two contexts with different LoRA adapters on one model, lazy and plain grammars,
 * cancellation of a long prefill, bad model files, tokenizer and chat template, thread changes,
 * sampling seeds, flash attention on and off.
 */
#include "gguf.h"
#include "testutil.h"

#include <ctype.h>
#include <stdatomic.h>

static const char *PREFIX = "You control a phone camera. Tools: take_photo, set_zoom(level), "
                            "set_flash(mode). Reply with one call.";
static const char *EPHEMERAL = "\nUser: what a lovely day, tell me a story\nAssistant:";
static const char *NEXT = "\nUser: zoom in to 2x\nAssistant:";

/* ============================================================================
 * KV regions */

/* The model and the three texts' tokens the KV-region tests start from. */
struct texts {
    struct pipit_model *m;
    struct pipit_model_info info;
    int32_t *p, *e, *n;
    int32_t np, ne, nn;
};

static struct texts texts_load(const char *model_path) {
    struct texts t;
    t.m = test_load_model(model_path);
    pipit_model_get_info(t.m, &t.info);
    t.p = test_tokens(t.m, PREFIX, &t.np);
    t.e = test_tokens(t.m, EPHEMERAL, &t.ne);
    t.n = test_tokens(t.m, NEXT, &t.nn);
    return t;
}

static void texts_free(struct texts *t) {
    pipit_free(t->p);
    pipit_free(t->e);
    pipit_free(t->n);
    pipit_model_free(t->m);
}

/* logits after [P, E, rewind, N] == logits of a fresh context after [P, N] */
static void check_rewind_equivalence(const char *model_path, bool token_by_token) {
    struct texts t = texts_load(model_path);

    struct pipit_context *a = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.e, t.ne), PIPIT_OK);
    assert_int_equal(pipit_context_n_ephemeral(a), t.ne);
    assert_int_equal(pipit_context_rewind(a), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(a), t.np);
    assert_int_equal(pipit_context_n_ephemeral(a), 0);
    assert_null(pipit_context_logits(a)); /* no stale logits after a rewind */
    if (token_by_token) {
        for (int32_t i = 0; i < t.nn; i++) {
            assert_int_equal(pipit_context_decode_token(a, t.n[i]), PIPIT_OK);
        }
    } else {
        assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    }
    float *la = test_copy_logits(a, t.info.n_vocab);

    struct pipit_context *b = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    float *lb = test_copy_logits(b, t.info.n_vocab);

    float d = test_max_abs_diff(la, lb, t.info.n_vocab);
    assert_true(d <= 1e-4f);

    /* the cached token lists agree too */
    int32_t ta_n, tb_n;
    const int32_t *ta = pipit_context_tokens(a, &ta_n);
    const int32_t *tb = pipit_context_tokens(b, &tb_n);
    assert_int_equal(ta_n, t.np + t.nn);
    assert_int_equal(tb_n, t.np + t.nn);
    assert_memory_equal(ta, tb, sizeof(int32_t) * (size_t)ta_n);

    free(la);
    free(lb);
    pipit_context_free(a);
    pipit_context_free(b);
    texts_free(&t);
}

static void test_rewind_equivalence_spm(void **state) {
    (void)state;
    check_rewind_equivalence(TEST_MODEL_SPM, false);
    check_rewind_equivalence(TEST_MODEL_SPM, true);
}

static void test_rewind_equivalence_qwen2(void **state) {
    (void)state;
    check_rewind_equivalence(TEST_MODEL_QWEN, false);
}

/* flash attention on and off: both run, rewind exactly, and predict the same next token
 * up to float rounding (F16 against F32 accumulation) */
static void test_flash_attention_both_ways(void **state) {
    (void)state;
    struct texts t = texts_load(TEST_MODEL_QWEN);
    float *logits[2];
    uint8_t *blob = NULL; /* the prefix saved with flash attention on */
    size_t blob_len = 0;
    for (int fa = 0; fa < 2; fa++) {
        struct pipit_context_params cp = pipit_context_default_params();
        cp.n_ctx = 512;
        cp.n_threads = 1;
        cp.flash_attn = fa == 1;
        struct pipit_context *c = NULL;
        struct pipit_error err;
        assert_int_equal(pipit_context_init(t.m, &cp, &c, &err), PIPIT_OK);
        assert_int_equal(pipit_context_append(c, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
        assert_int_equal(pipit_context_append(c, PIPIT_REGION_EPHEMERAL, t.e, t.ne), PIPIT_OK);
        assert_int_equal(pipit_context_rewind(c), PIPIT_OK);
        if (fa == 1) {
            assert_int_equal(pipit_context_save_state(c, &blob, &blob_len), PIPIT_OK);
        }
        for (int32_t i = 0; i < t.nn; i++) {
            assert_int_equal(pipit_context_decode_token(c, t.n[i]), PIPIT_OK);
        }
        logits[fa] = test_copy_logits(c, t.info.n_vocab);
        pipit_context_free(c);
    }
    /* a prefix saved under the other setting: loaded (llama.cpp converts the V layout) or
     * refused with the context left empty, never half-loaded */
    struct pipit_context *c = test_new_context(t.m, 512);
    enum pipit_status st = pipit_context_load_state(c, blob, blob_len);
    if (st == PIPIT_OK) {
        assert_int_equal(pipit_context_n_permanent(c), t.np);
    } else {
        assert_int_equal(st, PIPIT_ERR_CORRUPT);
        assert_int_equal(pipit_context_n_permanent(c) + pipit_context_n_ephemeral(c), 0);
    }
    pipit_context_free(c);
    pipit_free(blob);
    int32_t best[2] = {0, 0};
    float scale = 0.0f;
    for (int fa = 0; fa < 2; fa++) {
        for (int32_t v = 1; v < t.info.n_vocab; v++) {
            if (logits[fa][v] > logits[fa][best[fa]]) {
                best[fa] = v;
            }
        }
        scale = fabsf(logits[fa][best[fa]]) > scale ? fabsf(logits[fa][best[fa]]) : scale;
    }
    /* the same prediction up to rounding: each one's best token is within the tolerance of
     * the other's best (a random model has near ties) */
    float tol = 0.01f * scale + 1e-3f;
    assert_true(test_max_abs_diff(logits[0], logits[1], t.info.n_vocab) <= tol);
    assert_true(logits[1][best[0]] >= logits[1][best[1]] - 2.0f * tol);
    free(logits[0]);
    free(logits[1]);
    texts_free(&t);
}

static void test_commit_and_partial_rewind(void **state) {
    (void)state;
    struct texts t = texts_load(TEST_MODEL_SPM);

    /* [P] + eph[E] commit -> permanent [P E]; then eph N; rewind keeps [P E] */
    struct pipit_context *a = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.e, t.ne), PIPIT_OK);
    assert_int_equal(pipit_context_commit(a), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(a), t.np + t.ne);
    assert_int_equal(pipit_context_n_ephemeral(a), 0);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    assert_int_equal(pipit_context_rewind(a), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(a), t.np + t.ne);

    /* partial rewind: keep the first 2 ephemeral tokens */
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    assert_int_equal(pipit_context_rewind_to(a, t.nn + 1), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_context_rewind_to(a, 2), PIPIT_OK);
    assert_int_equal(pipit_context_n_ephemeral(a), 2);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n + 2, t.nn - 2), PIPIT_OK);
    float *la = test_copy_logits(a, t.info.n_vocab);

    struct pipit_context *b = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_PERMANENT, t.e, t.ne), PIPIT_OK);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    float *lb = test_copy_logits(b, t.info.n_vocab);
    assert_true(test_max_abs_diff(la, lb, t.info.n_vocab) <= 1e-4f);

    /* permanent appends are refused while the tail is not empty */
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_PERMANENT, t.p, 1), PIPIT_ERR_STATE);
    assert_non_null(strstr(pipit_context_errmsg(b), "ephemeral"));
    assert_int_equal(pipit_context_append(b, (enum pipit_region)7, t.p, 1), PIPIT_ERR_INVALID_ARG);

    /* clear drops both regions */
    assert_int_equal(pipit_context_clear(b), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(b) + pipit_context_n_ephemeral(b), 0);

    free(la);
    free(lb);
    pipit_context_free(a);
    pipit_context_free(b);
    texts_free(&t);
}

/* A truncate (or rewind) keeps the cut cells for reuse: appending [E N] after cutting [P E] back to
 * [P] prefills only N, and the logits, tokens and saved state equal a fresh context's after [P E
 * N]; an append that differs from the first token on, an ephemeral append and a state save all drop
 * the kept cells first. */
static void test_truncate_reuses_the_same_tokens(void **state) {
    (void)state;
    struct texts t = texts_load(TEST_MODEL_QWEN);
    int32_t *en = malloc(sizeof(int32_t) * (size_t)(t.ne + t.nn));
    assert_non_null(en);
    memcpy(en, t.e, sizeof(int32_t) * (size_t)t.ne);
    memcpy(en + t.ne, t.n, sizeof(int32_t) * (size_t)t.nn);

    struct pipit_context *b = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_PERMANENT, en, t.ne + t.nn), PIPIT_OK);
    float *lb = test_copy_logits(b, t.info.n_vocab);

    struct pipit_context *a = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.p, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.e, t.ne), PIPIT_OK);
    assert_int_equal(pipit_context_truncate(a, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(a), t.np);
    assert_null(pipit_context_logits(a));
    struct pipit_perf before, after;
    pipit_context_get_perf(a, &before);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, en, t.ne + t.nn), PIPIT_OK);
    pipit_context_get_perf(a, &after);
    assert_int_equal(after.n_reused_tokens - before.n_reused_tokens, t.ne);
    assert_int_equal(after.n_prefill_tokens - before.n_prefill_tokens, t.nn);
    assert_int_equal(pipit_context_n_permanent(a), t.np + t.ne + t.nn);
    float *la = test_copy_logits(a, t.info.n_vocab);
    assert_true(test_max_abs_diff(la, lb, t.info.n_vocab) <= 1e-4f);
    int32_t ta_n, tb_n;
    const int32_t *ta = pipit_context_tokens(a, &ta_n);
    const int32_t *tb = pipit_context_tokens(b, &tb_n);
    assert_int_equal(ta_n, tb_n);
    assert_memory_equal(ta, tb, sizeof(int32_t) * (size_t)ta_n);
    free(la);

    /* the same tokens again in full: all but the last reused (its logits are decoded again) */
    assert_int_equal(pipit_context_truncate(a, t.np), PIPIT_OK);
    pipit_context_get_perf(a, &before);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, en, t.ne + t.nn), PIPIT_OK);
    pipit_context_get_perf(a, &after);
    assert_int_equal(after.n_reused_tokens - before.n_reused_tokens, t.ne + t.nn - 1);
    assert_int_equal(after.n_prefill_tokens - before.n_prefill_tokens, 1);
    la = test_copy_logits(a, t.info.n_vocab);
    assert_true(test_max_abs_diff(la, lb, t.info.n_vocab) <= 1e-4f);
    free(la);

    /* a rewound tail appended again: all but its last token reused, same logits */
    assert_int_equal(pipit_context_truncate(a, t.np), PIPIT_OK);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    float *l1 = test_copy_logits(a, t.info.n_vocab);
    assert_int_equal(pipit_context_rewind(a), PIPIT_OK);
    pipit_context_get_perf(a, &before);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    pipit_context_get_perf(a, &after);
    assert_int_equal(after.n_reused_tokens - before.n_reused_tokens, t.nn - 1);
    assert_int_equal(pipit_context_n_ephemeral(a), t.nn);
    la = test_copy_logits(a, t.info.n_vocab);
    assert_true(test_max_abs_diff(la, l1, t.info.n_vocab) <= 1e-4f);
    free(la);
    free(l1);
    /* a partial rewind, then other tokens: reuse stops at the first difference */
    assert_int_equal(pipit_context_rewind_to(a, 2), PIPIT_OK);
    assert_int_equal(pipit_context_decode_token(a, t.n[2] == 0 ? 1 : 0), PIPIT_OK);
    assert_int_equal(pipit_context_n_ephemeral(a), 3);
    assert_int_equal(pipit_context_rewind(a), PIPIT_OK);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.e, t.ne), PIPIT_OK);

    /* a save after a truncate holds the prefix only: it loads into a context equal to [P] + N */
    assert_int_equal(pipit_context_truncate(a, t.np), PIPIT_OK);
    uint8_t *blob = NULL;
    size_t len = 0;
    assert_int_equal(pipit_context_save_state(a, &blob, &len), PIPIT_OK);
    struct pipit_context *c = test_new_context(t.m, 512);
    assert_int_equal(pipit_context_load_state(c, blob, len), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(c), t.np);
    pipit_free(blob);
    /* an ephemeral append drops the kept cells: positions continue from the prefix */
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    assert_int_equal(pipit_context_append(c, PIPIT_REGION_EPHEMERAL, t.n, t.nn), PIPIT_OK);
    la = test_copy_logits(a, t.info.n_vocab);
    float *lc = test_copy_logits(c, t.info.n_vocab);
    assert_true(test_max_abs_diff(la, lc, t.info.n_vocab) <= 1e-4f);
    free(la);
    free(lc);
    assert_int_equal(pipit_context_rewind(a), PIPIT_OK);

    /* other tokens (E and N both start "\nUser:"): reused up to the first difference only, and
     * the rest of the cut cells are gone (same KV size as a context that never held E) */
    int32_t same = 0;
    while (same < t.ne && same < t.nn && t.e[same] == t.n[same]) {
        same++;
    }
    assert_true(same > 0 && same < t.nn);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.e, t.ne), PIPIT_OK);
    assert_int_equal(pipit_context_truncate(a, t.np), PIPIT_OK);
    pipit_context_get_perf(a, &before);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, t.n, t.nn), PIPIT_OK);
    pipit_context_get_perf(a, &after);
    assert_int_equal(after.n_reused_tokens - before.n_reused_tokens, same);
    assert_int_equal(after.n_prefill_tokens - before.n_prefill_tokens, t.nn - same);
    la = test_copy_logits(a, t.info.n_vocab);
    lc = test_copy_logits(c, t.info.n_vocab);
    assert_true(test_max_abs_diff(la, lc, t.info.n_vocab) <= 1e-4f);
    free(la);
    free(lc);
    assert_int_equal(pipit_context_commit(c), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(a), pipit_context_n_permanent(c));
    assert_int_equal(pipit_context_kv_bytes(a), pipit_context_kv_bytes(c));

    free(lb);
    free(en);
    pipit_context_free(a);
    pipit_context_free(b);
    pipit_context_free(c);
    texts_free(&t);
}

static void test_context_full_is_a_status(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_context *ctx = test_new_context(m, 64);
    int32_t n_ctx = pipit_context_n_ctx(ctx);
    assert_true(n_ctx >= 64);
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)(n_ctx + 8));
    for (int32_t i = 0; i < n_ctx + 8; i++) {
        toks[i] = 100 + i % 50;
    }
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, toks, n_ctx + 1),
                     PIPIT_ERR_CONTEXT_FULL);
    assert_non_null(strstr(pipit_context_errmsg(ctx), "context full"));
    assert_int_equal(pipit_context_n_ephemeral(ctx), 0);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_PERMANENT, toks, n_ctx - 4), PIPIT_OK);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, toks, 4), PIPIT_OK);
    assert_int_equal(pipit_context_decode_token(ctx, 5), PIPIT_ERR_CONTEXT_FULL);
    assert_int_equal(pipit_context_n_ephemeral(ctx), 4);
    /* still usable: rewind and decode again */
    assert_int_equal(pipit_context_rewind(ctx), PIPIT_OK);
    assert_int_equal(pipit_context_decode_token(ctx, 5), PIPIT_OK);
    /* tokens outside the vocabulary are refused, not passed to llama.cpp */
    assert_int_equal(pipit_context_decode_token(ctx, 1 << 30), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_context_decode_token(ctx, -1), PIPIT_ERR_INVALID_ARG);
    free(toks);
    pipit_context_free(ctx);
    pipit_model_free(m);
}

/* ============================================================================
 * adapters */

static void test_adapters_per_context(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    struct pipit_error err;
    struct pipit_adapter *la = NULL, *lb = NULL;
    assert_int_equal(pipit_adapter_load(m, TEST_LORA_A, &la, &err), PIPIT_OK);
    assert_int_equal(pipit_adapter_load(m, TEST_LORA_B, &lb, &err), PIPIT_OK);

    int32_t np, nn;
    int32_t *p = test_tokens(m, PREFIX, &np);
    int32_t *n = test_tokens(m, NEXT, &nn);

    struct pipit_context *base = test_new_context(m, 256);
    struct pipit_context *ca = test_new_context(m, 256);
    struct pipit_context *cb = test_new_context(m, 256);
    struct pipit_context *c0 = test_new_context(m, 256);
    float one = 1.0f, zero = 0.0f;
    assert_int_equal(pipit_context_set_adapters(ca, &la, &one, 1), PIPIT_OK);
    assert_int_equal(pipit_context_set_adapters(cb, &lb, &one, 1), PIPIT_OK);
    assert_int_equal(pipit_context_set_adapters(c0, &la, &zero, 1), PIPIT_OK);

    /* interleave the contexts: each keeps its own KV cache */
    assert_int_equal(pipit_context_append(ca, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(cb, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(base, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(c0, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(cb, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    assert_int_equal(pipit_context_append(ca, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    assert_int_equal(pipit_context_append(base, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    assert_int_equal(pipit_context_append(c0, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    float *fa = test_copy_logits(ca, info.n_vocab);
    float *fb = test_copy_logits(cb, info.n_vocab);
    float *f0 = test_copy_logits(c0, info.n_vocab);
    float *fbase = test_copy_logits(base, info.n_vocab);

    assert_true(test_max_abs_diff(fa, fb, info.n_vocab) > 1e-3f);
    assert_true(test_max_abs_diff(fa, fbase, info.n_vocab) > 1e-3f);
    assert_true(test_max_abs_diff(f0, fbase, info.n_vocab) <= 1e-6f); /* scale 0 == none */

    /* a fresh context with adapter A alone reproduces ca: the KV caches were
     * independent */
    struct pipit_context *fresh = test_new_context(m, 256);
    assert_int_equal(pipit_context_set_adapters(fresh, &la, &one, 1), PIPIT_OK);
    assert_int_equal(pipit_context_append(fresh, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(fresh, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    float *ff = test_copy_logits(fresh, info.n_vocab);
    assert_true(test_max_abs_diff(fa, ff, info.n_vocab) <= 1e-4f);

    /* removing adapters restores the base model */
    assert_int_equal(pipit_context_set_adapters(fresh, NULL, NULL, 0), PIPIT_OK);
    assert_int_equal(pipit_context_clear(fresh), PIPIT_OK);
    assert_int_equal(pipit_context_append(fresh, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(fresh, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    free(ff);
    ff = test_copy_logits(fresh, info.n_vocab);
    assert_true(test_max_abs_diff(fbase, ff, info.n_vocab) <= 1e-4f);

    float nan_scale = NAN;
    assert_int_equal(pipit_context_set_adapters(fresh, &la, &nan_scale, 1), PIPIT_ERR_INVALID_ARG);

    free(fa);
    free(fb);
    free(f0);
    free(fbase);
    free(ff);
    pipit_free(p);
    pipit_free(n);
    pipit_context_free(fresh);
    pipit_context_free(base);
    pipit_context_free(ca);
    pipit_context_free(cb);
    pipit_context_free(c0);
    pipit_adapter_free(la);
    pipit_adapter_free(lb);
    pipit_model_free(m);
}

static void test_adapter_for_another_model_is_refused(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN); /* other n_head_kv, vocab */
    struct pipit_error err;
    struct pipit_adapter *a = NULL;
    enum pipit_status st = pipit_adapter_load(m, TEST_LORA_A, &a, &err);
    assert_int_equal(st, PIPIT_ERR_ADAPTER);
    assert_null(a);
    assert_non_null(strstr(err.text, "tiny-spm-lora-a.gguf"));
    assert_int_equal(pipit_adapter_load(m, "/nonexistent/lora.gguf", &a, &err), PIPIT_ERR_IO);
    pipit_model_free(m);
}

/* ============================================================================
 * sampling, grammar */

/* Greedy generation of up to `max` tokens after the NEXT prompt. */
static int32_t
generate(struct pipit_model *m, const struct pipit_sampler_params *sp, int32_t *out, int32_t max) {
    struct pipit_context *ctx = test_new_context(m, 512);
    int32_t nn;
    int32_t *n = test_tokens(m, NEXT, &nn);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    struct pipit_sampler *s = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_sampler_init(m, sp, &s, &err), PIPIT_OK);
    struct pipit_generate_params gp = pipit_generate_default_params();
    gp.max_tokens = max;
    int32_t n_out = 0;
    assert_int_equal(pipit_generate(ctx, s, &gp, out, &n_out), PIPIT_OK);
    pipit_sampler_free(s);
    pipit_free(n);
    pipit_context_free(ctx);
    return n_out;
}

/* Escape `s` as the body of a GBNF string literal. */
static void gbnf_escape(const char *s, char *out, size_t size) {
    size_t o = 0;
    for (; *s != '\0' && o + 5 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 0x20 || c == 0x7f) {
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}

/* The exact text of tokens: their pieces concatenated (no leading space
 * stripped). */
static char *pieces_text(struct pipit_model *m, const int32_t *toks, int32_t n) {
    size_t cap = 64 * (size_t)n + 1, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (int32_t i = 0; i < n; i++) {
        int32_t k = pipit_token_piece(m, toks[i], out + len, 63);
        assert_true(k >= 0);
        len += (size_t)k;
    }
    out[len] = '\0';
    return out;
}

static bool printable_ascii(const char *s) {
    if (*s == '\0') {
        return false;
    }
    for (; *s != '\0'; s++) {
        if (!isprint((unsigned char)*s)) {
            return false;
        }
    }
    return true;
}

static void check_lazy_grammar(const char *model_path) {
    struct pipit_model *m = test_load_model(model_path);
    enum {
        MAX = 24
    };
    int32_t free_out[MAX];
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    int32_t n_free = generate(m, &sp, free_out, MAX);
    assert_true(n_free >= 8);

    /* trigger: the first printable token at index >= 2 not seen earlier in the
     * output */
    int32_t k = -1;
    char piece[64] = {0};
    for (int32_t i = 2; i < n_free && k < 0; i++) {
        bool seen = false;
        for (int32_t j = 0; j < i; j++) {
            seen = seen || free_out[j] == free_out[i];
        }
        char text[64];
        int32_t len = pipit_token_piece(m, free_out[i], text, sizeof(text) - 1);
        if (len > 0) {
            text[len] = '\0';
            if (!seen && printable_ascii(text) && strlen(text) < 32) {
                k = i;
                snprintf(piece, sizeof(piece), "%s", text);
            }
        }
    }
    assert_true(k >= 2);

    char esc[256], grammar[512];
    gbnf_escape(piece, esc, sizeof(esc));
    snprintf(grammar, sizeof(grammar), "root ::= \"%s\" \" ok\" [0-9] [0-9] [0-9]?\n", esc);

    int32_t lazy_out[MAX];
    struct pipit_sampler_params lp = pipit_sampler_default_params();
    lp.grammar = grammar;
    lp.grammar_lazy = true;
    lp.trigger_tokens = &free_out[k];
    lp.n_trigger_tokens = 1;
    int32_t n_lazy = generate(m, &lp, lazy_out, MAX);

    /* before and at the trigger: identical to unconstrained output */
    assert_true(n_lazy > k);
    assert_memory_equal(lazy_out, free_out, sizeof(int32_t) * (size_t)(k + 1));
    /* from the trigger on: exactly the grammar's language (then EOG ends
     * generation) */
    char *rest = pieces_text(m, lazy_out + k, n_lazy - k);
    size_t pl = strlen(piece);
    assert_memory_equal(rest, piece, pl);
    assert_memory_equal(rest + pl, " ok", 3);
    size_t digits = strlen(rest + pl + 3);
    assert_true(digits == 2 || digits == 3);
    for (size_t i = 0; i < digits; i++) {
        assert_true(isdigit((unsigned char)rest[pl + 3 + i]));
    }
    free(rest);

    /* a trigger whose text cannot start the grammar is a status, not a crash */
    lp.grammar = strcmp(piece, "~") == 0 ? "root ::= \"!\"\n" : "root ::= \"~\"\n";
    struct pipit_context *ctx = test_new_context(m, 512);
    int32_t nn;
    int32_t *n = test_tokens(m, NEXT, &nn);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    struct pipit_sampler *s = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_sampler_init(m, &lp, &s, &err), PIPIT_OK);
    struct pipit_generate_params gp = pipit_generate_default_params();
    gp.max_tokens = MAX;
    int32_t n_out = 0;
    assert_int_equal(pipit_generate(ctx, s, &gp, NULL, &n_out), PIPIT_ERR_GRAMMAR);
    assert_int_equal(n_out, k); /* the tokens before the trigger were generated */
    pipit_sampler_free(s);
    pipit_context_free(ctx);
    pipit_free(n);
    lp.grammar = grammar;

    /* the same grammar, not lazy: constrained from the first token */
    lp.grammar_lazy = false;
    int32_t n_strict = generate(m, &lp, lazy_out, MAX);
    char *all = pieces_text(m, lazy_out, n_strict);
    assert_memory_equal(all, piece, pl);
    free(all);
    pipit_model_free(m);
}

static void test_lazy_grammar_spm(void **state) {
    (void)state;
    check_lazy_grammar(TEST_MODEL_SPM);
}

static void test_lazy_grammar_qwen2(void **state) {
    (void)state;
    check_lazy_grammar(TEST_MODEL_QWEN);
}

static void test_lazy_grammar_pattern_trigger(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    /* A pattern that never matches leaves the output unconstrained. */
    enum {
        MAX = 16
    };
    int32_t free_out[MAX], lazy_out[MAX];
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    int32_t n_free = generate(m, &sp, free_out, MAX);
    const char *patterns[] = {"[\\s\\S]*?(<tool_call>)"};
    struct pipit_sampler_params lp = pipit_sampler_default_params();
    lp.grammar = "root ::= \"<tool_call>\" [a-z]+ \"</tool_call>\"\n";
    lp.grammar_lazy = true;
    lp.trigger_patterns = patterns;
    lp.n_trigger_patterns = 1;
    int32_t n_lazy = generate(m, &lp, lazy_out, MAX);
    assert_int_equal(n_lazy, n_free);
    assert_memory_equal(lazy_out, free_out, sizeof(int32_t) * (size_t)n_free);
    pipit_model_free(m);
}

static void test_grammar_errors_and_choice(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_error err;
    struct pipit_sampler *s = NULL;
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    sp.grammar = "root ::= \"unterminated\n";
    assert_int_equal(pipit_sampler_init(m, &sp, &s, &err), PIPIT_ERR_GRAMMAR);
    assert_null(s);
    assert_non_null(strstr(err.text, "grammar"));
    sp.grammar = "root ::= missing_rule\n";
    assert_int_equal(pipit_sampler_init(m, &sp, &s, &err), PIPIT_ERR_GRAMMAR);

    sp.grammar = "root ::= \"yes\" | \"no\"\n";
    int32_t out[16];
    int32_t n = generate(m, &sp, out, 16);
    char *text = pipit_detokenize(m, out, n, false);
    assert_true(strcmp(text, "yes") == 0 || strcmp(text, "no") == 0);
    pipit_free(text);
    pipit_model_free(m);
}

static void test_sampling_seeds(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    enum {
        MAX = 12
    };
    int32_t a[MAX], b[MAX];
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    sp.temperature = 1.0f;
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.seed = 1234;
    int32_t na = generate(m, &sp, a, MAX);
    int32_t nb = generate(m, &sp, b, MAX);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, sizeof(int32_t) * (size_t)na); /* same seed, same tokens */
    bool differs = false;
    for (uint32_t seed = 1; seed <= 5 && !differs; seed++) {
        sp.seed = seed;
        nb = generate(m, &sp, b, MAX);
        differs = nb != na || memcmp(a, b, sizeof(int32_t) * (size_t)na) != 0;
    }
    assert_true(differs);
    pipit_model_free(m);
}

/* ============================================================================
 * cancellation */

struct abort_state {
    atomic_int calls;
    int fire_at;
    atomic_int fired;
};

static bool abort_after(void *user_data) {
    struct abort_state *s = user_data;
    int c = atomic_fetch_add(&s->calls, 1) + 1;
    if (c >= s->fire_at) {
        atomic_fetch_add(&s->fired, 1);
        return true;
    }
    return false;
}

static void test_abort_stops_long_prefill(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    struct abort_state ab = {.fire_at = 1 << 30};
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = 2048;
    cp.n_batch = 32;
    cp.n_threads = 1;
    cp.abort_fn = abort_after;
    cp.abort_user_data = &ab;
    struct pipit_context *ctx = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_context_init(m, &cp, &ctx, &err), PIPIT_OK);

    int32_t np;
    int32_t *p = test_tokens(m, PREFIX, &np);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    ab.fire_at = atomic_load(&ab.calls) + 3; /* abort 3 polls into the next call */

    enum {
        LONG = 1900
    };
    int32_t *longp = malloc(sizeof(int32_t) * LONG);
    for (int i = 0; i < LONG; i++) {
        longp[i] = 200 + (i * 7) % 1000;
    }
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, longp, LONG),
                     PIPIT_ERR_ABORTED);
    /* promptly: the first poll that said "stop" was the last one */
    assert_int_equal(atomic_load(&ab.fired), 1);
    assert_int_equal(atomic_load(&ab.calls), ab.fire_at);
    assert_non_null(strstr(pipit_context_errmsg(ctx), "aborted"));
    /* the regions are as before the call, and the context is still usable and
     * exact */
    assert_int_equal(pipit_context_n_permanent(ctx), np);
    assert_int_equal(pipit_context_n_ephemeral(ctx), 0);
    ab.fire_at = 1 << 30;
    int32_t nn;
    int32_t *n = test_tokens(m, NEXT, &nn);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    float *la = test_copy_logits(ctx, info.n_vocab);
    struct pipit_context *fresh = test_new_context(m, 2048);
    assert_int_equal(pipit_context_append(fresh, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    assert_int_equal(pipit_context_append(fresh, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    float *lb = test_copy_logits(fresh, info.n_vocab);
    assert_true(test_max_abs_diff(la, lb, info.n_vocab) <= 1e-4f);

    /* pipit_context_cancel() before a call aborts it; the flag then clears */
    pipit_context_cancel(ctx);
    assert_int_equal(pipit_context_decode_token(ctx, 5), PIPIT_ERR_ABORTED);
    assert_int_equal(pipit_context_n_ephemeral(ctx), nn);
    assert_int_equal(pipit_context_decode_token(ctx, 5), PIPIT_OK);

    free(la);
    free(lb);
    free(longp);
    pipit_free(p);
    pipit_free(n);
    pipit_context_free(fresh);
    pipit_context_free(ctx);
    pipit_model_free(m);
}

/* ============================================================================
 * bad model files */

static void expect_load_error(const char *path, enum pipit_status want, const char *needle) {
    struct pipit_error err;
    struct pipit_model *m = (struct pipit_model *)0x1;
    enum pipit_status st = pipit_model_load(path, NULL, &m, &err);
    if (st != want) {
        fail_msg("%s: got %s (%s), want %s", path, pipit_status_str(st), err.text,
                 pipit_status_str(want));
    }
    assert_null(m);
    assert_int_equal(err.status, want);
    assert_non_null(strstr(err.text, path));
    if (needle != NULL && strstr(err.text, needle) == NULL) {
        fail_msg("message '%s' lacks '%s'", err.text, needle);
    }
}

static void test_bad_model_files(void **state) {
    (void)state;
    char dir[] = "/tmp/pipit-badmodels-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[512];
    size_t n_good = 0;
    unsigned char *good = test_read_file(TEST_MODEL_SPM, &n_good);

    snprintf(path, sizeof(path), "%s/missing.gguf", dir);
    expect_load_error(path, PIPIT_ERR_IO, "cannot open");

    expect_load_error(dir, PIPIT_ERR_IO, "not a regular file");

    snprintf(path, sizeof(path), "%s/empty.gguf", dir);
    test_write_file(path, "", 0);
    expect_load_error(path, PIPIT_ERR_NOT_GGUF, "empty");

    snprintf(path, sizeof(path), "%s/random.gguf", dir);
    unsigned char rnd[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof(rnd); i++) {
        x = x * 1103515245u + 12345u;
        rnd[i] = (unsigned char)(x >> 16);
    }
    test_write_file(path, rnd, sizeof(rnd));
    expect_load_error(path, PIPIT_ERR_NOT_GGUF, "not a GGUF");

    snprintf(path, sizeof(path), "%s/magic.gguf", dir);
    good[0] = 'X';
    test_write_file(path, good, n_good);
    good[0] = 'G';
    expect_load_error(path, PIPIT_ERR_NOT_GGUF, "magic");

    snprintf(path, sizeof(path), "%s/short.gguf", dir);
    test_write_file(path, good, 3);
    expect_load_error(path, PIPIT_ERR_NOT_GGUF, NULL);

    snprintf(path, sizeof(path), "%s/header.gguf", dir);
    test_write_file(path, good, 200); /* cut inside the metadata */
    expect_load_error(path, PIPIT_ERR_CORRUPT, "truncated");

    snprintf(path, sizeof(path), "%s/data.gguf", dir);
    test_write_file(path, good, n_good - 1000); /* cut inside the tensor data */
    expect_load_error(path, PIPIT_ERR_CORRUPT, "tensor data");

    /* a well-formed GGUF of an architecture llama.cpp does not know */
    snprintf(path, sizeof(path), "%s/arch.gguf", dir);
    struct gguf_context *g = gguf_init_empty();
    gguf_set_val_str(g, "general.architecture", "foonet");
    assert_true(gguf_write_to_file(g, path, false));
    gguf_free(g);
    expect_load_error(path, PIPIT_ERR_UNSUPPORTED_ARCH, "foonet");

    /* no architecture at all */
    snprintf(path, sizeof(path), "%s/noarch.gguf", dir);
    g = gguf_init_empty();
    gguf_set_val_str(g, "general.name", "nothing");
    assert_true(gguf_write_to_file(g, path, false));
    gguf_free(g);
    expect_load_error(path, PIPIT_ERR_UNSUPPORTED_ARCH, "general.architecture");

    /* a tokenizer-only file has no weights: llama.cpp's reason is quoted */
    expect_load_error(PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf", PIPIT_ERR_MODEL,
                      "llama.cpp refused");

    /* ...but loads as vocab_only */
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_model *m = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_model_load(PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf", &mp, &m, &err),
                     PIPIT_OK);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    assert_int_equal(info.n_vocab, 32000);
    pipit_model_free(m);

    free(good);
    const char *names[] = {"empty", "random", "magic", "short", "header", "data", "arch", "noarch"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s.gguf", dir, names[i]);
        remove(path);
    }
    rmdir(dir);
}

/* ============================================================================
 * tokenizer etc. */

static void test_tokenizer_and_template(void **state) {
    (void)state;
    const char *paths[] = {TEST_MODEL_SPM, TEST_MODEL_QWEN};
    const int32_t vocab[] = {32000, 151936};
    for (size_t i = 0; i < 2; i++) {
        struct pipit_model *m = test_load_model(paths[i]);
        struct pipit_model_info info;
        pipit_model_get_info(m, &info);
        assert_int_equal(info.n_vocab, vocab[i]);
        assert_string_equal(info.arch, "llama");
        assert_true(info.n_params > 0);

        const char *text = "Zoom in to 2x, then take a photo!";
        int32_t toks[64];
        int32_t n = pipit_tokenize(m, text, false, false, toks, 64);
        assert_true(n > 0 && n < 64);
        assert_true(pipit_tokenize(m, text, false, false, toks, 2) == -n); /* too small */
        char *back = pipit_detokenize(m, toks, n, false);
        assert_non_null(back);
        assert_non_null(strstr(back, "Zoom in to 2x, then take a photo!"));
        pipit_free(back);

        struct pipit_chat_message msgs[] = {{"system", "be brief"}, {"user", "hello"}};
        char *prompt = NULL;
        assert_int_equal(pipit_chat_apply_template(m, msgs, 2, true, NULL, &prompt), PIPIT_OK);
        assert_non_null(strstr(prompt, "<|im_start|>user\nhello<|im_end|>"));
        size_t len = strlen(prompt);
        const char *tail = "<|im_start|>assistant\n";
        assert_true(len > strlen(tail));
        assert_string_equal(prompt + len - strlen(tail), tail);
        pipit_free(prompt);
        pipit_model_free(m);
    }
}

static void test_threads_and_perf(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    struct pipit_context *ctx = test_new_context(m, 256);
    int32_t np;
    int32_t *p = test_tokens(m, PREFIX, &np);
    assert_int_equal(pipit_context_set_threads(ctx, 0), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_context_set_threads(ctx, 2), PIPIT_OK);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, p, np), PIPIT_OK);
    float *l2 = test_copy_logits(ctx, info.n_vocab);
    assert_int_equal(pipit_context_clear(ctx), PIPIT_OK); /* a rewind would reuse the cells */
    assert_int_equal(pipit_context_set_threads(ctx, 1), PIPIT_OK);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, p, np), PIPIT_OK);
    float *l1 = test_copy_logits(ctx, info.n_vocab);
    assert_true(test_max_abs_diff(l1, l2, info.n_vocab) <= 1e-4f);

    struct pipit_sampler *s = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_sampler_init(m, NULL, &s, &err), PIPIT_OK);
    struct pipit_generate_params gp = pipit_generate_default_params();
    gp.max_tokens = 5;
    gp.stop_at_eog = false;
    int32_t n_out = 0;
    assert_int_equal(pipit_generate(ctx, s, &gp, NULL, &n_out), PIPIT_OK);
    assert_int_equal(n_out, 5);
    struct pipit_perf perf;
    pipit_context_get_perf(ctx, &perf);
    assert_int_equal(perf.n_prefill_tokens, 2 * np);
    assert_int_equal(perf.n_decode_tokens, 5);
    assert_int_equal(perf.n_sample_calls, 5);
    assert_true(perf.t_prefill_ms > 0.0 && perf.t_decode_ms > 0.0 && perf.t_sample_ms > 0.0);
    assert_int_equal(pipit_context_n_ephemeral(ctx), np + 5);
    pipit_context_reset_perf(ctx);
    pipit_context_get_perf(ctx, &perf);
    assert_int_equal(perf.n_prefill_tokens, 0);

    /* sampling without logits is a state error, not a crash */
    assert_int_equal(pipit_context_rewind(ctx), PIPIT_OK);
    assert_int_equal(pipit_sampler_sample(s, ctx), -PIPIT_ERR_STATE);

    free(l1);
    free(l2);
    pipit_free(p);
    pipit_sampler_free(s);
    pipit_context_free(ctx);
    pipit_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rewind_equivalence_spm),
        cmocka_unit_test(test_rewind_equivalence_qwen2),
        cmocka_unit_test(test_flash_attention_both_ways),
        cmocka_unit_test(test_commit_and_partial_rewind),
        cmocka_unit_test(test_truncate_reuses_the_same_tokens),
        cmocka_unit_test(test_context_full_is_a_status),
        cmocka_unit_test(test_adapters_per_context),
        cmocka_unit_test(test_adapter_for_another_model_is_refused),
        cmocka_unit_test(test_lazy_grammar_spm),
        cmocka_unit_test(test_lazy_grammar_qwen2),
        cmocka_unit_test(test_lazy_grammar_pattern_trigger),
        cmocka_unit_test(test_grammar_errors_and_choice),
        cmocka_unit_test(test_sampling_seeds),
        cmocka_unit_test(test_abort_stops_long_prefill),
        cmocka_unit_test(test_bad_model_files),
        cmocka_unit_test(test_tokenizer_and_template),
        cmocka_unit_test(test_threads_and_perf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
