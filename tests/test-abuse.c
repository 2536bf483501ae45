/*
 * test-abuse.c - bad input and hostile files: refused whole, never half-done, never an abort.
 *
 *   test-abuse           unit: utterance checks (empty, blank, invalid UTF-8, too long) on the
 *                        scripted backend
 *   test-abuse --cli     the `pipit` command on the bundled model: over-long stdin lines are one
 *                        refused utterance, `run --json` failures are JSON objects with a code,
 *                        a session that cannot be resumed is refused and never overwritten
 */
#include "agent.h"
#include "fake_backend.h"
#include "testutil.h"

#include <jansson.h>
#include <sys/wait.h>

static struct pipit_toolset *camera_tools(void) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

/* ============================================================================ utterances */

static void expect_refused_utterance(struct pipit_agent *a,
                                     struct fake_backend *f,
                                     const char *utterance,
                                     const char *needle) {
    int steps = f->n_steps;
    struct pipit_turn *t = (struct pipit_turn *)0x1;
    enum pipit_status st = pipit_agent_turn(a, utterance, &t);
    if (st != PIPIT_ERR_INVALID_ARG || strstr(pipit_agent_errmsg(a), needle) == NULL) {
        fail_msg("utterance of %zu bytes: got %s '%s', want a refusal with '%s'", strlen(utterance),
                 pipit_status_str(st), pipit_agent_errmsg(a), needle);
    }
    assert_null(t);
    assert_int_equal(f->n_steps, steps); /* the model was not asked */
}

static void test_utterance_checks(void **state) {
    (void)state;
    struct pipit_toolset *ts = camera_tools();
    struct fake_backend f;
    memset(&f, 0, sizeof(f));
    for (int i = 0; i < FAKE_MAX_STEPS; i++) {
        f.script[i] = "<call>take_photo()";
    }
    f.n_script = FAKE_MAX_STEPS;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.syntax = PIPIT_SYNTAX_PIPIT;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_OK);
    expect_refused_utterance(a, &f, "", "empty");
    expect_refused_utterance(a, &f, "   \t \r\n ", "empty");
    /* a stray byte, an overlong '/', a UTF-16 surrogate, a cut 3-byte sequence, above U+10FFFF */
    const char *bad[] = {"zoom in to \xff\xfe"
                         "2x",
                         "zoom \xc0\xaf in", "zoom \xed\xa0\x80 in", "zoom in \xe2\x82",
                         "zoom \xf5\x80\x80\x80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_refused_utterance(a, &f, bad[i], "not valid UTF-8");
    }
    /* the limit, and one byte over it: refused whole, so no tail ever runs as a command */
    char *longest = malloc(PIPIT_MAX_UTTERANCE_BYTES + 2);
    assert_non_null(longest);
    memset(longest, 'x', PIPIT_MAX_UTTERANCE_BYTES + 1);
    memcpy(longest + PIPIT_MAX_UTTERANCE_BYTES + 1 - 12, "take a photo", 12);
    longest[PIPIT_MAX_UTTERANCE_BYTES + 1] = '\0';
    expect_refused_utterance(a, &f, longest, "limit is 4095 bytes");
    assert_int_equal(f.n_steps, 0);
    /* valid text passes: UTF-8 words, and exactly the limit */
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(a, "prends une photo, s'il te pla\xc3\xaet", &t), PIPIT_OK);
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_turn(a, longest + 1, &t), PIPIT_OK);
    pipit_turn_free(t);
    free(longest);
    pipit_agent_free(a);
    pipit_toolset_free(ts);
}

/* ============================================================================ the CLI */

#ifdef PIPIT_CLI_BIN
#define BUNDLED PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf"

static char dir[] = "/tmp/pipit-abuse-XXXXXX";

static int setup_dir(void **state) {
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown_dir(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Run `pipit <args>` with `input` on stdin; returns the exit code, *out the stdout (freed by
 * the caller), *err_out the stderr. */
static int run_cli(const char *args, const void *input, size_t input_len, char **out, char **eout) {
    char in[600], o[600], e[600], cmd[4096];
    snprintf(in, sizeof(in), "%s/stdin", dir);
    snprintf(o, sizeof(o), "%s/stdout", dir);
    snprintf(e, sizeof(e), "%s/stderr", dir);
    test_write_file(in, input, input_len);
    snprintf(cmd, sizeof(cmd), "'%s' %s < '%s' > '%s' 2> '%s'", PIPIT_CLI_BIN, args, in, o, e);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    size_t n = 0;
    *out = (char *)test_read_file(o, &n);
    (*out)[n] = '\0';
    *eout = (char *)test_read_file(e, &n);
    (*eout)[n] = '\0';
    return WEXITSTATUS(status);
}

/* Each stdout line must be a JSON object; returns how many, and checks failures have a code. */
static int json_lines(const char *out, int *failures, const char **last_code) {
    static char code[64];
    int n = 0;
    *failures = 0;
    code[0] = '\0';
    *last_code = code;
    const char *p = out;
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        json_error_t jerr;
        json_t *j = json_loadb(p, len, 0, &jerr);
        if (!json_is_object(j)) {
            fail_msg("stdout line %d is not a JSON object: %.*s", n, (int)len, p);
        }
        json_t *e = json_object_get(j, "error");
        if (e != NULL) {
            const char *c = json_string_value(json_object_get(e, "code"));
            const char *m = json_string_value(json_object_get(e, "message"));
            if (c == NULL || m == NULL || json_object_get(j, "ok") != json_false()) {
                fail_msg("a failure without ok=false, a code or a message: %.*s", (int)len, p);
            }
            snprintf(code, sizeof(code), "%s", c);
            (*failures)++;
        }
        json_decref(j);
        n++;
        p += len;
        if (*p == '\n') {
            p++;
        }
    }
    return n;
}

#define CLI_RUN "run --threads 1 --model '" BUNDLED "' "

static void test_cli_long_lines(void **state) {
    (void)state;
    char *out = NULL, *eout = NULL;
    /* 4,095 x then "take a photo": one refused utterance, no photo */
    size_t n = PIPIT_MAX_UTTERANCE_BYTES + 64;
    char *in = malloc(n + 32);
    assert_non_null(in);
    memset(in, 'x', PIPIT_MAX_UTTERANCE_BYTES);
    int len = snprintf(in + PIPIT_MAX_UTTERANCE_BYTES, 64, " take a photo\n");
    int rc = run_cli(CLI_RUN "--json", in, PIPIT_MAX_UTTERANCE_BYTES + (size_t)len, &out, &eout);
    assert_int_equal(rc, 1);
    int failures = 0;
    const char *code = NULL;
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_int_equal(failures, 1);
    assert_string_equal(code, "invalid_arg");
    assert_non_null(strstr(out, "limit is 4095 bytes"));
    assert_null(strstr(out, "Photo"));
    free(out);
    free(eout);
    free(in);
    /* a 1 MB line is one refusal too, and chat goes on after it */
    size_t big = 1 << 20;
    in = malloc(big + 64);
    assert_non_null(in);
    memset(in, 'y', big);
    len = snprintf(in + big, 64, "\ntake a photo\n");
    rc = run_cli(CLI_RUN "--json", in, big + (size_t)len, &out, &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_int_equal(failures, 1);
    free(out);
    free(eout);
    rc = run_cli("chat --threads 1 --model '" BUNDLED "'", in, big + (size_t)len, &out, &eout);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(eout, "the utterance is 1048576 bytes"));
    assert_non_null(strstr(out, "Photo taken"));
    free(out);
    free(eout);
    free(in);
}

static void test_cli_json_failures(void **state) {
    (void)state;
    char *out = NULL, *eout = NULL;
    /* blank lines on stdin are skipped; a blank argument and invalid UTF-8 are refused */
    const char lines[] = "\n   \nturn on the flash\n";
    int rc = run_cli(CLI_RUN "--json", lines, sizeof(lines) - 1, &out, &eout);
    int failures = 0;
    const char *code = NULL;
    assert_int_equal(rc, 0);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_int_equal(failures, 0);
    free(out);
    free(eout);
    rc = run_cli(CLI_RUN "--json 'turn on the flash' '  '", "", 0, &out, &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 2);
    assert_int_equal(failures, 1);
    assert_string_equal(code, "invalid_arg");
    assert_non_null(strstr(out, "empty"));
    free(out);
    free(eout);
    const char utf[] = "zoom in to \xff\xfe"
                       "2x\n";
    rc = run_cli(CLI_RUN "--json", utf, sizeof(utf) - 1, &out, &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_non_null(strstr(out, "not valid UTF-8"));
    free(out);
    free(eout);
    /* a failure before the first turn (a model that is not a GGUF) is a JSON object too */
    rc = run_cli("run --threads 1 --json --model '" PIPIT_SOURCE_DIR "/README.md' hi", "", 0, &out,
                 &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_string_equal(code, "not_gguf");
    free(out);
    free(eout);
}

/* A session that cannot be resumed is refused (exit 1) and the file is left byte for byte. */
static void expect_session_kept(const char *args, const char *path, const char *needle) {
    size_t n0 = 0, n1 = 0;
    unsigned char *before = test_read_file(path, &n0);
    char *out = NULL, *eout = NULL;
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "%s --session '%s' 'take a photo'", args, path);
    int rc = run_cli(cmd, "", 0, &out, &eout);
    if (rc != 1 || strstr(eout, needle) == NULL || strstr(eout, "left unchanged") == NULL) {
        fail_msg("%s: exit %d, stderr '%s' (want exit 1 naming '%s')", cmd, rc, eout, needle);
    }
    assert_null(strstr(out, "Photo"));
    unsigned char *after = test_read_file(path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    free(out);
    free(eout);
}

static void test_cli_session_never_overwritten(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof(path), "%s/s.session", dir);
    char *out = NULL, *eout = NULL;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), CLI_RUN "--session '%s' 'zoom in to 2x'", path);
    assert_int_equal(run_cli(cmd, "", 0, &out, &eout), 0);
    free(out);
    free(eout);
    size_t n = 0;
    unsigned char *good = test_read_file(path, &n);
    /* another tool set: the phone pack and device */
    expect_session_kept(CLI_RUN "--device phone", path, "made for the device 'camera'");
    expect_session_kept(CLI_RUN "--tools '" PIPIT_SOURCE_DIR "/tools/phone.json'", path,
                        "another tool set");
    /* another syntax */
    expect_session_kept(CLI_RUN "--syntax hermes", path, "syntax");
    /* a newer format version, a damaged file, a truncated one */
    good[8] = 9;
    test_write_file(path, good, n);
    expect_session_kept(CLI_RUN, path, "format version 9");
    good[8] = 1;
    good[n / 2] ^= 0x40;
    test_write_file(path, good, n);
    expect_session_kept(CLI_RUN, path, "damaged");
    good[n / 2] ^= 0x40;
    test_write_file(path, good, n - 100);
    expect_session_kept(CLI_RUN, path, "truncated");
    /* the intact file resumes, and is saved again */
    test_write_file(path, good, n);
    snprintf(cmd, sizeof(cmd), CLI_RUN "--session '%s' 'what is the zoom'", path);
    assert_int_equal(run_cli(cmd, "", 0, &out, &eout), 0);
    assert_non_null(strstr(eout, "resumed"));
    free(out);
    free(eout);
    free(good);
}
#endif

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_utterance_checks),
    };
#ifdef PIPIT_CLI_BIN
    const struct CMUnitTest cli[] = {
        cmocka_unit_test(test_cli_long_lines),
        cmocka_unit_test(test_cli_json_failures),
        cmocka_unit_test(test_cli_session_never_overwritten),
    };
    if (argc > 1 && strcmp(argv[1], "--cli") == 0) {
        return cmocka_run_group_tests(cli, setup_dir, teardown_dir);
    }
#endif
    (void)argc;
    (void)argv;
    return cmocka_run_group_tests(unit, NULL, NULL);
}
