/*
 * test-modelgen.c - tiny random GGUF models and LoRA adapters made by pipit
 * itself.
 */
#include "testutil.h"

#include <unistd.h>

static char dir[] = "/tmp/pipit-modelgen-XXXXXX";

static int setup(void **state) {
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    const char *names[] = {"a.gguf", "b.gguf", "c.gguf", "l.gguf", "gqa.gguf"};
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_grouped_query_attention_model),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_lora),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
