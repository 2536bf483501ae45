/*
 * test-status.c - status names, error formatting, pipit_free and the log
 * callback.
 */
#include "log.h"
#include "status.h"
#include "testutil.h"

static void test_every_status_has_a_name(void **state) {
    (void)state;
    for (int s = PIPIT_OK; s <= PIPIT_ERR_JSON; s++) {
        const char *name = pipit_status_str((enum pipit_status)s);
        assert_non_null(name);
        assert_string_not_equal(name, "unknown status");
    }
    assert_string_equal(pipit_status_str((enum pipit_status)9999), "unknown status");
    assert_string_equal(pipit_status_str(PIPIT_ERR_CONTEXT_FULL), "context full");
}

static void test_codes_are_stable(void **state) {
    (void)state;
    /* append-only: a renumbering breaks every embedder */
    assert_int_equal(PIPIT_OK, 0);
    assert_int_equal(PIPIT_ERR_NOT_GGUF, 4);
    assert_int_equal(PIPIT_ERR_CONTEXT_FULL, 9);
    assert_int_equal(PIPIT_ERR_ABORTED, 10);
    assert_int_equal(PIPIT_ERR_NO_CANDIDATES, 17);
}

static void test_error_set_truncates_safely(void **state) {
    (void)state;
    struct pipit_error err;
    char big[2000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(pipit_error_set(&err, PIPIT_ERR_IO, "engine: %s", big), PIPIT_ERR_IO);
    assert_int_equal(err.status, PIPIT_ERR_IO);
    assert_int_equal(strlen(err.text), sizeof(err.text) - 1);
    assert_string_equal(err.text + sizeof(err.text) - 4, "...");
    assert_int_equal(err.offset, -1);
    assert_int_equal(pipit_error_set(NULL, PIPIT_ERR_NOMEM, "x"), PIPIT_ERR_NOMEM);
    pipit_error_clear(&err);
    assert_string_equal(err.text, "");
    /* a cut never leaves half a character before the mark: "é" is 2 bytes, at every offset */
    for (size_t pad = 0; pad < 4; pad++) {
        char buf[16];
        char text[64] = "";
        memset(text, 'a', pad);
        for (size_t i = pad; i + 2 < sizeof(text); i += 2) {
            memcpy(text + i, "\xc3\xa9", 2);
        }
        pipit_format(buf, sizeof(buf), "%s", text);
        size_t n = strlen(buf);
        assert_true(n >= 4 && strcmp(buf + n - 3, "...") == 0);
        for (size_t i = 0; i < n - 3;) { /* whole sequences up to the mark */
            size_t len = ((unsigned char)buf[i] & 0x80) == 0 ? 1 : 2;
            assert_true(i + len <= n - 3);
            if (len == 2) {
                assert_true(((unsigned char)buf[i + 1] & 0xC0) == 0x80);
            }
            i += len;
        }
    }
}

static void test_free_null_is_noop(void **state) {
    (void)state;
    pipit_free(NULL);
    pipit_model_free(NULL);
    pipit_context_free(NULL);
    pipit_sampler_free(NULL);
    pipit_adapter_free(NULL);
}

struct log_capture {
    int n;
    enum pipit_log_level last_level;
    char last[256];
};

static void capture(enum pipit_log_level level, const char *text, void *user_data) {
    struct log_capture *c = user_data;
    c->n++;
    c->last_level = level;
    snprintf(c->last, sizeof(c->last), "%s", text);
}

static void test_log_callback_and_level(void **state) {
    (void)state;
    struct log_capture c = {0};
    pipit_log_set(capture, &c, PIPIT_LOG_WARN);
    pipit_log(PIPIT_LOG_INFO, "dropped %d", 1);
    assert_int_equal(c.n, 0);
    pipit_log(PIPIT_LOG_ERROR, "kept %d", 2);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.last, "kept 2");
    assert_int_equal(c.last_level, PIPIT_LOG_ERROR);
    pipit_log_set(NULL, NULL, PIPIT_LOG_DEBUG);
    pipit_log(PIPIT_LOG_ERROR, "nowhere");
    assert_int_equal(c.n, 1);
}

static void test_misuse_returns_errors(void **state) {
    (void)state;
    struct pipit_error err;
    struct pipit_model *m = (struct pipit_model *)0x1;
    assert_int_equal(pipit_model_load(NULL, NULL, &m, &err), PIPIT_ERR_INVALID_ARG);
    assert_null(m);
    assert_int_equal(pipit_model_load("x", NULL, NULL, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_context_append(NULL, PIPIT_REGION_EPHEMERAL, NULL, 0),
                     PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_context_rewind(NULL), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_context_n_permanent(NULL), 0);
    assert_null(pipit_context_logits(NULL));
    assert_int_equal(pipit_tokenize(NULL, "x", false, false, NULL, 0), INT32_MIN);
    assert_null(pipit_detokenize(NULL, NULL, 0, false));
    assert_true(pipit_cpu_count() >= 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_status_has_a_name),
        cmocka_unit_test(test_codes_are_stable),
        cmocka_unit_test(test_error_set_truncates_safely),
        cmocka_unit_test(test_free_null_is_noop),
        cmocka_unit_test(test_log_callback_and_level),
        cmocka_unit_test(test_misuse_returns_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
