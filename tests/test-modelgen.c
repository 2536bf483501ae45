/*
 * test-modelgen.c - tiny random GGUF models and LoRA adapters made by pipit
 * itself.
 */
#include "gguf.h"
#include "testutil.h"

#include <unistd.h>

static char dir[] = "/tmp/pipit-modelgen-XXXXXX";

static int setup(void **state) {
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    const char *names[] = {"a.gguf",  "b.gguf",  "c.gguf",  "l.gguf", "gqa.gguf",
                           "t0.gguf", "t1.gguf", "t2.gguf", "t3.gguf"};
    char path[512];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        remove(path);
    }
    rmdir(dir);
    return 0;
}

static void path_in(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "%s/%s", dir, name);
}

static void test_same_seed_same_bytes(void **state) {
    (void)state;
    char a[512], b[512], c[512];
    path_in(a, sizeof(a), "a.gguf");
    path_in(b, sizeof(b), "b.gguf");
    path_in(c, sizeof(c), "c.gguf");
    struct pipit_make_model_params p = pipit_make_model_default_params();
    p.vocab_path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
    p.n_embd = 32;
    p.n_ff = 64;
    struct pipit_error err;
    assert_int_equal(pipit_make_model(&p, a, &err), PIPIT_OK);
    assert_int_equal(pipit_make_model(&p, b, &err), PIPIT_OK);
    p.seed = 99;
    assert_int_equal(pipit_make_model(&p, c, &err), PIPIT_OK);
    size_t na, nb, nc;
    unsigned char *da = test_read_file(a, &na);
    unsigned char *db = test_read_file(b, &nb);
    unsigned char *dc = test_read_file(c, &nc);
    assert_int_equal(na, nb);
    assert_memory_equal(da, db, na);
    assert_int_equal(na, nc);
    assert_memory_not_equal(da, dc, na);
    free(da);
    free(db);
    free(dc);

    /* it loads, with the tokenizer it was given and the sizes asked for */
    struct pipit_model *m = test_load_model(a);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    assert_int_equal(info.n_vocab, 32000);
    assert_int_equal(info.n_embd, 32);
    assert_int_equal(info.n_layer, 2);
    assert_int_equal(info.n_ctx_train, 2048);
    pipit_model_free(m);
}

static void test_grouped_query_attention_model(void **state) {
    (void)state;
    char out[512];
    path_in(out, sizeof(out), "gqa.gguf");
    struct pipit_make_model_params p = pipit_make_model_default_params();
    p.vocab_path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
    p.n_head = 4;
    p.n_head_kv = 2;
    p.n_layer = 1;
    struct pipit_error err;
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_OK);
    struct pipit_model *m = test_load_model(out);
    struct pipit_context *ctx = test_new_context(m, 64);
    int32_t n;
    int32_t *t = test_tokens(m, "hello there", &n);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, t, n), PIPIT_OK);
    pipit_free(t);
    pipit_context_free(ctx);
    pipit_model_free(m);
}

static void test_bad_parameters(void **state) {
    (void)state;
    char out[512];
    path_in(out, sizeof(out), "c.gguf");
    struct pipit_error err;
    struct pipit_make_model_params p = pipit_make_model_default_params();
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_ERR_INVALID_ARG); /* no vocab */
    p.vocab_path = "/nonexistent/vocab.gguf";
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, "/nonexistent/vocab.gguf"));
    p.vocab_path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
    p.n_embd = 65; /* not divisible by 4 heads */
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "n_embd 65"));
    p.n_embd = 64;
    p.n_head_kv = 3;
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_ERR_INVALID_ARG);
    p.n_head_kv = 4;
    assert_int_equal(pipit_make_model(&p, "/nonexistent-dir/x.gguf", &err), PIPIT_ERR_IO);
}

static void test_lora(void **state) {
    (void)state;
    char l[512];
    path_in(l, sizeof(l), "l.gguf");
    struct pipit_error err;
    struct pipit_make_lora_params p = pipit_make_lora_default_params();
    assert_int_equal(pipit_make_lora(&p, l, &err), PIPIT_ERR_INVALID_ARG);
    p.model_path = TEST_MODEL_SPM;
    p.rank = 0;
    assert_int_equal(pipit_make_lora(&p, l, &err), PIPIT_ERR_INVALID_ARG);
    p.rank = 2;
    assert_int_equal(pipit_make_lora(&p, l, &err), PIPIT_OK);
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_adapter *a = NULL;
    assert_int_equal(pipit_adapter_load(m, l, &a, &err), PIPIT_OK);
    pipit_adapter_free(a);
    pipit_model_free(m);
    /* a tokenizer-only file has nothing to adapt */
    p.model_path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
    assert_int_not_equal(pipit_make_lora(&p, l, &err), PIPIT_OK);
}

/* The named shapes: the smallest copies SmolLM2-135M's config.json, its parameter count is the
 * published one, and applying it sets every size; unknown names are NULL. (No test makes a
 * shape's model: the 135M one takes 15-25 s and 100-340 MB.) */
static void test_named_shapes(void **state) {
    (void)state;
    size_t n = 0;
    const struct pipit_model_shape *shapes = pipit_model_shapes(&n);
    assert_true(n >= 4);
    for (size_t i = 1; i < n; i++) {
        assert_true(shapes[i].n_params > shapes[i - 1].n_params); /* smallest first */
        assert_int_equal(shapes[i].n_embd % shapes[i].n_head, 0);
        assert_int_equal(shapes[i].n_head % shapes[i].n_head_kv, 0);
    }
    const struct pipit_model_shape *s = pipit_model_shape_find("smollm2-135m");
    assert_ptr_equal(s, &shapes[0]);
    assert_int_equal(s->n_embd, 576);
    assert_int_equal(s->n_layer, 30);
    assert_int_equal(s->n_head, 9);
    assert_int_equal(s->n_head_kv, 3);
    assert_int_equal(s->n_ff, 1536);
    assert_int_equal(s->n_vocab, 49152);
    assert_int_equal(s->n_ctx_train, 8192);
    assert_true(s->n_params > 134000000 && s->n_params < 135000000); /* 134.5M */
    char vocab[512];
    snprintf(vocab, sizeof(vocab), "%s/ggml-vocab-%s.gguf", PIPIT_VOCAB_DIR, s->vocab);
    assert_int_equal(access(vocab, R_OK), 0);
    struct pipit_make_model_params p = pipit_make_model_default_params();
    pipit_make_model_apply_shape(&p, s);
    assert_int_equal(p.n_embd, 576);
    assert_int_equal(p.n_layer, 30);
    assert_int_equal(p.n_head, 9);
    assert_int_equal(p.n_head_kv, 3);
    assert_int_equal(p.n_ff, 1536);
    assert_int_equal(p.n_ctx_train, 8192);
    assert_true(p.rope_base == 100000.0f);
    assert_true(p.init_std == 0.02f); /* a trained model's scale, not the tiny models' 0.5 */
    assert_null(pipit_model_shape_find("smollm2"));
    assert_null(pipit_model_shape_find(NULL));
    for (size_t i = 0; i < n; i++) { /* every shape's tokenizer is in the tree */
        snprintf(vocab, sizeof(vocab), "%s/ggml-vocab-%s.gguf", PIPIT_VOCAB_DIR, shapes[i].vocab);
        if (access(vocab, R_OK) != 0) {
            fail_msg("shape %s: no %s", shapes[i].name, vocab);
        }
    }
}

/* The weight types: matrices in F32, F16, Q8_0 or Q4_0 (norms F32), the file type said in
 * general.file_type, files smaller in that order, and each loads and runs. */
static void test_weight_types(void **state) {
    (void)state;
    static const enum ggml_type want[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0,
                                          GGML_TYPE_Q4_0};
    static const uint32_t ftype[] = {0, 1, 7, 2};
    size_t prev = 0;
    for (int32_t k = 0; k < 4; k++) {
        char out[512], name[16];
        snprintf(name, sizeof(name), "t%d.gguf", (int)k);
        path_in(out, sizeof(out), name);
        struct pipit_make_model_params p = pipit_make_model_default_params();
        p.vocab_path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
        p.n_layer = 1;
        p.weight_type = k;
        struct pipit_error err;
        if (pipit_make_model(&p, out, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
        struct gguf_context *g = gguf_init_from_file(out, gp);
        assert_non_null(g);
        int64_t e = gguf_find_tensor(g, "token_embd.weight");
        int64_t q = gguf_find_tensor(g, "blk.0.ffn_down.weight");
        int64_t nrm = gguf_find_tensor(g, "blk.0.attn_norm.weight");
        assert_true(e >= 0 && q >= 0 && nrm >= 0);
        assert_int_equal(gguf_get_tensor_type(g, e), want[k]);
        assert_int_equal(gguf_get_tensor_type(g, q), want[k]);
        assert_int_equal(gguf_get_tensor_type(g, nrm), GGML_TYPE_F32);
        assert_int_equal(gguf_get_val_u32(g, gguf_find_key(g, "general.file_type")), ftype[k]);
        gguf_free(g);
        size_t size = 0;
        free(test_read_file(out, &size));
        assert_true(k == 0 || size < prev);
        prev = size;
        struct pipit_model *m = test_load_model(out);
        struct pipit_context *ctx = test_new_context(m, 64);
        int32_t nt;
        int32_t *t = test_tokens(m, "hello there", &nt);
        assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, t, nt), PIPIT_OK);
        pipit_free(t);
        pipit_context_free(ctx);
        pipit_model_free(m);
    }
    /* a width the blocks do not divide, and a type that is none */
    struct pipit_make_model_params p = pipit_make_model_default_params();
    p.vocab_path = PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf";
    p.n_embd = 48;
    p.weight_type = PIPIT_WEIGHTS_Q8_0;
    char out[512];
    path_in(out, sizeof(out), "t0.gguf");
    struct pipit_error err;
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "divide by 32"));
    p.n_embd = 64;
    p.weight_type = 4;
    assert_int_equal(pipit_make_model(&p, out, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "weight_type 4"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_grouped_query_attention_model),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_lora),
        cmocka_unit_test(test_named_shapes),
        cmocka_unit_test(test_weight_types),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
