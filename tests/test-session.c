/*
 * test-session.c - session files: atomic saves, refusal of damaged files, exact resumption.
 *
 *   test-session          unit: the file format, the damaged-file corpus, SIGKILL during saves
 *   test-session --model  real models: KV state round trip (logits equal), agent resume with 0
 *                         permanent tokens prefilled and the same next answer, another model
 */
#include "agent.h"
#include "fake_backend.h"
#include "fileio.h"
#include "session.h"
#include "testutil.h"

#include <jansson.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

static char dir[] = "/tmp/pipit-session-XXXXXX";

static int setup(void **state) {
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "%s/%s", dir, name);
}

/* ============================================================================ unit */

static void test_round_trip(void **state) {
    (void)state;
    char path[512];
    path_in(path, sizeof(path), "a.session");
    const uint8_t kv[] = {1, 2, 3, 4, 5, 0, 255};
    struct pipit_error err;
    assert_int_equal(session_write(path, 42, "{\"x\":1}", kv, sizeof(kv), &err), PIPIT_OK);
    uint64_t fp = 0;
    char *json = NULL;
    uint8_t *back = NULL;
    size_t n = 0;
    assert_int_equal(session_read(path, &fp, &json, &back, &n, &err), PIPIT_OK);
    assert_int_equal(fp, 42);
    assert_string_equal(json, "{\"x\":1}");
    assert_int_equal(n, sizeof(kv));
    assert_memory_equal(back, kv, sizeof(kv));
    free(json);
    free(back);
    /* no temp file is left behind */
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_int_not_equal(access(tmp, F_OK), 0);
    assert_int_equal(session_read("/nonexistent/x.session", &fp, &json, &back, &n, &err),
                     PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, "/nonexistent/x.session"));
}

static void expect_refused(const char *path, enum pipit_status want, const char *needle) {
    uint64_t fp;
    char *json = (char *)0x1;
    uint8_t *kv = (uint8_t *)0x1;
    size_t n;
    struct pipit_error err;
    enum pipit_status st = session_read(path, &fp, &json, &kv, &n, &err);
    if (st != want || strstr(err.text, needle) == NULL || strstr(err.text, path) == NULL) {
        fail_msg("%s: got %s '%s', want %s with '%s'", path, pipit_status_str(st), err.text,
                 pipit_status_str(want), needle);
    }
    assert_null(json);
    assert_null(kv);
}

static void test_damaged_files_are_refused(void **state) {
    (void)state;
    char good[512], bad[512];
    path_in(good, sizeof(good), "good.session");
    path_in(bad, sizeof(bad), "bad.session");
    uint8_t kv[300];
    for (size_t i = 0; i < sizeof(kv); i++) {
        kv[i] = (uint8_t)(i * 7);
    }
    struct pipit_error err;
    const char *json = "{\"pipit_session\":1,\"memory\":{\"mode\":\"cso\",\"lines\":[]}}";
    assert_int_equal(session_write(good, 7, json, kv, sizeof(kv), &err), PIPIT_OK);
    size_t n = 0;
    unsigned char *bytes = test_read_file(good, &n);

    /* truncated at many points */
    const size_t cuts[] = {0, 3, 8, 39, 40, 60, n / 2, n - 9, n - 1};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        test_write_file(bad, bytes, cuts[i]);
        expect_refused(bad, PIPIT_ERR_CORRUPT, cuts[i] < 48 ? "truncated" : "do not add up");
    }
    /* a flipped bit anywhere is caught */
    for (size_t off = 0; off < n; off += 13) {
        if (off >= 8 && off < 12) {
            continue; /* the version field: below */
        }
        bytes[off] ^= 0x10;
        test_write_file(bad, bytes, n);
        uint64_t fp;
        char *j = NULL;
        uint8_t *k = NULL;
        size_t kn;
        enum pipit_status st = session_read(bad, &fp, &j, &k, &kn, &err);
        if (st == PIPIT_OK) {
            fail_msg("a flipped bit at offset %zu was not noticed", off);
        }
        assert_null(j);
        bytes[off] ^= 0x10;
    }
    /* another format version */
    bytes[8] = 9;
    test_write_file(bad, bytes, n);
    expect_refused(bad, PIPIT_ERR_STATE, "format version 9");
    bytes[8] = SESSION_VERSION;
    /* not a session at all */
    test_write_file(bad, "hello world, this is not a pipit session file at all", 52);
    expect_refused(bad, PIPIT_ERR_CORRUPT, "not a pipit session");
    free(bytes);
}

/* SIGKILL at random moments during saves, 200 times: the file is always the old session or the
 * new one, never a mix or a torn write. */
static void test_kill_during_save(void **state) {
    (void)state;
    char path[512];
    path_in(path, sizeof(path), "kill.session");
    static uint8_t kv_a[64 * 1024], kv_b[96 * 1024];
    memset(kv_a, 'a', sizeof(kv_a));
    memset(kv_b, 'b', sizeof(kv_b));
    struct pipit_error err;
    assert_int_equal(session_write(path, 1, "{\"v\":\"a\"}", kv_a, sizeof(kv_a), &err), PIPIT_OK);
    srand(12345);
    int saw_a = 0, saw_b = 0;
    for (int round = 0; round < 200; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            for (int i = 0;; i++) {
                bool b = i % 2 == 0;
                session_write(path, 1, b ? "{\"v\":\"b\"}" : "{\"v\":\"a\"}", b ? kv_b : kv_a,
                              b ? sizeof(kv_b) : sizeof(kv_a), NULL);
            }
        }
        struct timespec ts = {0, (long)(rand() % 3000) * 1000}; /* 0..3 ms */
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        uint64_t fp;
        char *json = NULL;
        uint8_t *kv = NULL;
        size_t n = 0;
        enum pipit_status st = session_read(path, &fp, &json, &kv, &n, &err);
        if (st != PIPIT_OK) {
            fail_msg("round %d: %s", round, err.text);
        }
        if (strcmp(json, "{\"v\":\"a\"}") == 0) {
            assert_int_equal(n, sizeof(kv_a));
            assert_memory_equal(kv, kv_a, n);
            saw_a++;
        } else {
            assert_string_equal(json, "{\"v\":\"b\"}");
            assert_int_equal(n, sizeof(kv_b));
            assert_memory_equal(kv, kv_b, n);
            saw_b++;
        }
        free(json);
        free(kv);
    }
    print_message("200 kills: old/new session found %d/%d times\n", saw_a, saw_b);
    assert_int_equal(saw_a + saw_b, 200);
}

/* The agent's session on the scripted backend: memory, undo log and device state come back. */
static void test_agent_resume_fake(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err),
                     PIPIT_OK);
    struct fake_backend f1;
    memset(&f1, 0, sizeof(f1));
    f1.script[f1.n_script++] = "<call>set_white_balance(mode=\"cloudy\")";
    f1.script[f1.n_script++] = "<call>set_zoom(level=3)";
    struct pipit_agent *a = NULL;
    assert_int_equal(test_agent_new_with_backend(NULL, ts, NULL, fake_backend_wrap(&f1), &a, &err),
                     PIPIT_OK);
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(a, "cloudy white balance", &t), PIPIT_OK);
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_turn(a, "zoom 3x", &t), PIPIT_OK);
    pipit_turn_free(t);
    char path[512];
    path_in(path, sizeof(path), "agent.session");
    assert_int_equal(pipit_agent_save(a, path, &err), PIPIT_OK);
    test_agent_free(a);

    struct fake_backend f2;
    memset(&f2, 0, sizeof(f2));
    assert_int_equal(test_agent_new_with_backend(NULL, ts, NULL, fake_backend_wrap(&f2), &a, &err),
                     PIPIT_OK);
    struct pipit_session_info info;
    assert_int_equal(pipit_agent_load(a, path, &info, &err), PIPIT_OK);
    assert_true(info.kv_restored);
    assert_int_equal(info.memory_lines, 1); /* white_balance: cloudy */
    assert_non_null(strstr(f2.permanent, "white_balance: cloudy"));
    char *s = pipit_agent_state_json(a);
    assert_non_null(strstr(s, "\"zoom\":3"));
    pipit_free(s);
    /* the undo log came back too, and the next turn prefills no permanent token */
    assert_int_equal(pipit_agent_turn(a, "undo", &t), PIPIT_OK);
    assert_string_equal(t->sentence, "The zoom is 1x again.");
    assert_int_equal(t->permanent_prefill_tokens, 0);
    pipit_turn_free(t);
    /* a damaged file changes nothing */
    char bad[512];
    path_in(bad, sizeof(bad), "agent-bad.session");
    test_write_file(bad, "PIPITSES", 8);
    assert_int_equal(pipit_agent_load(a, bad, &info, &err), PIPIT_ERR_CORRUPT);
    s = pipit_agent_state_json(a);
    assert_non_null(strstr(s, "\"zoom\":1"));
    pipit_free(s);
    /* a session of another memory mode is refused */
    test_agent_free(a);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.memory = PIPIT_MEMORY_FULL;
    struct fake_backend f3;
    memset(&f3, 0, sizeof(f3));
    assert_int_equal(test_agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f3), &a, &err),
                     PIPIT_OK);
    assert_int_equal(pipit_agent_load(a, path, &info, &err), PIPIT_ERR_STATE);
    assert_non_null(strstr(err.text, "memory mode"));
    test_agent_free(a);
    pipit_toolset_free(ts);
}

/* ============================================================================ model */

static void test_kv_state_logits_equal(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    int32_t np, nn;
    int32_t *p = test_tokens(m, "You control a camera. Memory: zoom: 2, flash: on.", &np);
    int32_t *n = test_tokens(m, "\nUser: take a photo\nAssistant:", &nn);
    struct pipit_context *a = test_new_context(m, 512);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_PERMANENT, p, np), PIPIT_OK);
    uint8_t *blob = NULL;
    size_t len = 0;
    assert_int_equal(pipit_context_save_state(a, &blob, &len), PIPIT_OK);
    assert_int_equal(pipit_context_append(a, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    float *la = test_copy_logits(a, info.n_vocab);
    pipit_free(blob);
    assert_int_equal(pipit_context_save_state(a, &blob, &len), PIPIT_ERR_STATE); /* tail */
    assert_null(blob);

    struct pipit_context *b = test_new_context(m, 512);
    uint8_t *blob2 = NULL;
    assert_int_equal(pipit_context_rewind(a), PIPIT_OK);
    assert_int_equal(pipit_context_save_state(a, &blob2, &len), PIPIT_OK);
    assert_int_equal(pipit_context_load_state(b, blob2, len), PIPIT_OK);
    assert_int_equal(pipit_context_n_permanent(b), np);
    assert_int_equal(pipit_context_append(b, PIPIT_REGION_EPHEMERAL, n, nn), PIPIT_OK);
    float *lb = test_copy_logits(b, info.n_vocab);
    assert_true(test_max_abs_diff(la, lb, info.n_vocab) <= 1e-4f);

    /* a damaged blob is refused and leaves the context empty */
    blob2[0] = 'X';
    assert_int_equal(pipit_context_load_state(b, blob2, len), PIPIT_ERR_CORRUPT);
    assert_int_equal(pipit_context_n_permanent(b), 0);
    blob2[0] = 'P';
    assert_int_equal(pipit_context_load_state(b, blob2, len - 5), PIPIT_ERR_CORRUPT);
    /* a blob of another vocabulary is refused */
    struct pipit_model *q = test_load_model(TEST_MODEL_QWEN);
    struct pipit_context *c = test_new_context(q, 512);
    assert_int_equal(pipit_context_load_state(c, blob2, len), PIPIT_ERR_CORRUPT);
    assert_non_null(strstr(pipit_context_errmsg(c), "vocabulary"));
    pipit_context_free(c);
    pipit_model_free(q);

    free(la);
    free(lb);
    pipit_free(blob);
    pipit_free(blob2);
    pipit_free(p);
    pipit_free(n);
    pipit_context_free(a);
    pipit_context_free(b);
    pipit_model_free(m);
}

static struct pipit_agent *model_agent(struct pipit_model *m, struct pipit_toolset *ts) {
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.lazy_grammar = false; /* every answer is a valid call, even from a random model */
    p.syntax = PIPIT_SYNTAX_PIPIT;
    p.turn_budget_ms = 0;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return a;
}

static void test_agent_resume_real_model(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err),
                     PIPIT_OK);
    const char *utts[] = {"white balance cloudy", "grid on", "brighter"};
    struct pipit_agent *a = model_agent(m, ts);
    struct pipit_turn *t = NULL;
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(pipit_agent_turn(a, utts[i], &t), PIPIT_OK);
        pipit_turn_free(t);
    }
    char path[512];
    path_in(path, sizeof(path), "model.session");
    assert_int_equal(pipit_agent_save(a, path, &err), PIPIT_OK);
    /* the uninterrupted session's next turn */
    assert_int_equal(pipit_agent_turn(a, "take a photo", &t), PIPIT_OK);
    char *expected = strdup(t->model_text);
    int32_t expected_perm = t->n_permanent;
    pipit_turn_free(t);
    test_agent_free(a);

    /* a new process would do this: fresh agent, load, next turn */
    a = model_agent(m, ts);
    struct pipit_session_info info;
    if (pipit_agent_load(a, path, &info, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_true(info.kv_restored);
    assert_int_equal(pipit_agent_turn(a, "take a photo", &t), PIPIT_OK);
    assert_int_equal(t->permanent_prefill_tokens, 0);
    assert_string_equal(t->model_text, expected);
    assert_int_equal(t->n_permanent, expected_perm);
    pipit_turn_free(t);
    test_agent_free(a);

    /* another model: the KV state is refused, the memory rebuilds the context */
    struct pipit_model *q = test_load_model(TEST_MODEL_QWEN);
    a = model_agent(q, ts);
    if (pipit_agent_load(a, path, &info, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_false(info.kv_restored);
    assert_non_null(strstr(info.note, "another model"));
    assert_true(info.memory_lines > 0);
    assert_int_equal(pipit_agent_turn(a, "take a photo", &t), PIPIT_OK);
    assert_true(t->permanent_prefill_tokens > 0); /* the memory, prefilled once */
    pipit_turn_free(t);
    test_agent_free(a);
    pipit_model_free(q);

    free(expected);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* SIGKILL at random moments while a real agent runs turns and saves after each: the file left
 * on disk always loads whole (checksum, memory, KV state) and the next turn works; never a
 * half-written or half-loaded session. */
static void test_kill_during_agent_save(void **state) {
    (void)state;
    char path[512];
    path_in(path, sizeof(path), "kill-agent.session");
    const char *model_path = PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf";
    struct pipit_model *m = test_load_model(model_path);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err),
                     PIPIT_OK);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0;
    struct pipit_agent *a = NULL;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(a, "zoom in to 2x", &t), PIPIT_OK);
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_save(a, path, &err), PIPIT_OK);
    test_agent_free(a);
    static const char *const cmds[] = {"turn on the flash", "take a photo", "zoom out",
                                       "timer 3 seconds", "turn off the flash"};
    srand(2026);
    int restored = 0, rounds = 40;
    for (int round = 0; round < rounds; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            /* the child: its own agent, resumed from the file, turns and saves until killed */
            struct pipit_agent *c = NULL;
            if (test_agent_new(m, ts, &p, &c, NULL) != PIPIT_OK ||
                pipit_agent_load(c, path, NULL, NULL) != PIPIT_OK) {
                _exit(3);
            }
            for (int i = 0;; i++) {
                struct pipit_turn *ct = NULL;
                if (pipit_agent_turn(c, cmds[i % 5], &ct) != PIPIT_OK) {
                    _exit(4);
                }
                pipit_turn_free(ct);
                pipit_agent_save(c, path, NULL);
            }
        }
        struct timespec ts0 = {0, (long)(20 + rand() % 200) * 1000000}; /* 20..220 ms */
        nanosleep(&ts0, NULL);
        kill(pid, SIGKILL);
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFSIGNALED(status)) {
            fail_msg("round %d: the child stopped by itself (exit %d)", round,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        }
        struct pipit_agent *b = NULL;
        assert_int_equal(test_agent_new(m, ts, &p, &b, &err), PIPIT_OK);
        struct pipit_session_info info;
        if (pipit_agent_load(b, path, &info, &err) != PIPIT_OK) {
            fail_msg("round %d: the session left on disk does not load: %s", round, err.text);
        }
        restored += info.kv_restored;
        assert_int_equal(pipit_agent_turn(b, "what is the zoom", &t), PIPIT_OK);
        pipit_turn_free(t);
        test_agent_free(b);
    }
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    unlink(tmp); /* a killed save may leave its temp file; the session itself is whole */
    print_message("kill during agent saves: %d rounds, %d loaded whole with their KV state\n",
                  rounds, restored);
    assert_int_equal(restored, rounds);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* A session saved by an agent with more room (a 4,096-token context, full history) resumed by
 * one with a 1,024-token context: its memory is trimmed to fit at load, and the next turns
 * work (before, the rebuilt context overflowed and every later turn failed). */
static void test_resume_into_smaller_context(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err),
                     PIPIT_OK);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.lazy_grammar = false;
    p.syntax = PIPIT_SYNTAX_PIPIT;
    p.turn_budget_ms = 0;
    p.memory = PIPIT_MEMORY_FULL;
    p.n_ctx = 4096;
    struct pipit_agent *a = NULL;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    struct pipit_turn *t = NULL;
    int32_t perm = 0;
    for (int i = 0; i < 60 && perm < 1300; i++) {
        assert_int_equal(pipit_agent_turn(a, i % 2 ? "grid on" : "white balance cloudy", &t),
                         PIPIT_OK);
        perm = t->n_permanent;
        pipit_turn_free(t);
    }
    assert_true(perm >= 1300);
    char path[512];
    path_in(path, sizeof(path), "roomy.session");
    assert_int_equal(pipit_agent_save(a, path, &err), PIPIT_OK);
    test_agent_free(a);

    p.n_ctx = 1024;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    struct pipit_session_info info;
    if (pipit_agent_load(a, path, &info, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_false(info.kv_restored);
    assert_non_null(strstr(info.note, "trimmed"));
    for (int i = 0; i < 3; i++) {
        if (pipit_agent_turn(a, "take a photo", &t) != PIPIT_OK) {
            fail_msg("turn %d after the load failed: %s", i, pipit_agent_errmsg(a));
        }
        assert_true(t->n_permanent + t->n_ephemeral_max <= 1024);
        pipit_turn_free(t);
    }
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* ---------------------------------------------------------------------------- the corpus */

/* Write `bytes` as a session file with a freshly computed checksum: a forgery the checksum does
 * not catch. `version` replaces the header's format version. */
static void write_forged(const char *path, unsigned char *bytes, size_t n, uint32_t version) {
    for (int i = 0; i < 4; i++) {
        bytes[8 + i] = (unsigned char)(version >> (8 * i));
    }
    uint64_t sum = fileio_fnv1a(FILEIO_FNV_OFFSET, bytes, n - 8);
    for (int i = 0; i < 8; i++) {
        bytes[n - 8 + i] = (unsigned char)(sum >> (8 * i));
    }
    test_write_file(path, bytes, n);
}

/* A session with its JSON and KV parts replaced, written with a valid checksum. */
static void
write_parts(const char *path, uint64_t fp, const char *json, const uint8_t *kv, size_t kv_len) {
    struct pipit_error err;
    assert_int_equal(session_write(path, fp, json, kv, kv_len, &err), PIPIT_OK);
}

/* The JSON part with one integer field replaced. */
static char *json_with_int(const char *json, const char *key, json_int_t v) {
    json_t *root = json_loads(json, 0, NULL);
    assert_non_null(root);
    json_object_set_new(root, key, json_integer(v));
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(root);
    return s;
}

struct corpus_tally {
    int files, refused, rebuilt, restored;
};

/* Load `path` into an agent that has already run one turn. Either the load is refused and the
 * agent is exactly as before (state, memory), or it is loaded and the next three turns all
 * succeed. `trust_kv` false: the file's KV state must not be trusted (forged counts). */
static void check_corpus_file(struct pipit_model *m,
                              struct pipit_toolset *ts,
                              const char *path,
                              const char *what,
                              bool trust_kv,
                              struct corpus_tally *tally) {
    struct pipit_agent *b = model_agent(m, ts);
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(b, "flash on", &t), PIPIT_OK);
    int32_t lines = t->memory_lines;
    int32_t perm = t->n_permanent;
    pipit_turn_free(t);
    char *before = pipit_agent_state_json(b);
    struct pipit_session_info info;
    struct pipit_error err;
    tally->files++;
    enum pipit_status st = pipit_agent_load(b, path, &info, &err);
    if (st != PIPIT_OK) {
        tally->refused++;
        if (strstr(err.text, path) == NULL && strstr(err.text, "load state") == NULL) {
            fail_msg("%s: the refusal does not name the file: %s", what, err.text);
        }
        char *after = pipit_agent_state_json(b);
        if (strcmp(before, after) != 0) {
            fail_msg("%s: refused (%s) but the device state changed: %s -> %s", what, err.text,
                     before, after);
        }
        pipit_free(after);
        assert_int_equal(pipit_agent_turn(b, "grid on", &t), PIPIT_OK);
        if (t->memory_lines < lines || t->n_permanent < perm) {
            fail_msg("%s: refused (%s) but the memory or context was lost", what, err.text);
        }
        pipit_turn_free(t);
    } else {
        if (info.kv_restored) {
            tally->restored++;
            if (!trust_kv) {
                fail_msg("%s: a forged KV state was restored (%s)", what, info.note);
            }
        } else {
            tally->rebuilt++;
        }
        const char *next[] = {"zoom in to 2x", "take a photo", "grid off"};
        for (size_t i = 0; i < 3; i++) {
            st = pipit_agent_turn(b, next[i], &t);
            if (st != PIPIT_OK) {
                fail_msg("%s: loaded (%s) but turn %zu then fails: %s", what, info.note, i,
                         pipit_agent_errmsg(b));
            }
            pipit_turn_free(t);
        }
    }
    pipit_free(before);
    test_agent_free(b);
}

/* Find the cell metadata of llama.cpp's sequence state in a KV blob: n consecutive
 * (pos = i, n_seq_id = 1, seq_id = 0) triples; returns the offset of the first, or -1. */
static long find_cells(const uint8_t *kv, size_t len, int32_t n) {
    for (size_t o = 0; o + 12 * (size_t)n <= len; o += 4) {
        bool all = true;
        for (int32_t i = 0; i < n && all; i++) {
            int32_t cell[3];
            memcpy(cell, kv + o + 12 * (size_t)i, sizeof(cell));
            all = cell[0] == i && cell[1] == 1 && cell[2] == 0;
        }
        if (all) {
            return (long)o;
        }
    }
    return -1;
}

/* A corpus of sessions that must never be half-loaded: forged token counts and positions under
 * a valid checksum, forged JSON counts, other format versions, another pack, truncations. */
static void test_session_corpus_real_model(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = NULL, *phone = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err),
                     PIPIT_OK);
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", &phone, &err),
                     PIPIT_OK);
    struct pipit_agent *a = model_agent(m, ts);
    struct pipit_turn *t = NULL;
    const char *utts[] = {"white balance cloudy", "grid on", "brighter"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(pipit_agent_turn(a, utts[i], &t), PIPIT_OK);
        pipit_turn_free(t);
    }
    char good[512], bad[512];
    path_in(good, sizeof(good), "corpus-good.session");
    path_in(bad, sizeof(bad), "corpus-bad.session");
    assert_int_equal(pipit_agent_save(a, good, &err), PIPIT_OK);
    test_agent_free(a);
    uint64_t fp = 0;
    char *json = NULL;
    uint8_t *kv = NULL;
    size_t kv_len = 0;
    assert_int_equal(session_read(good, &fp, &json, &kv, &kv_len, &err), PIPIT_OK);
    /* the KV part: "PKV1", u32 n_vocab, i32 n_perm, n_perm tokens, u64 bytes, llama's data */
    int32_t n_perm = 0;
    memcpy(&n_perm, kv + 8, 4);
    assert_true(n_perm > 4);
    size_t toks_end = 12 + 4 * (size_t)n_perm;
    struct corpus_tally tally = {0};

    check_corpus_file(m, ts, good, "the intact session", true, &tally);
    assert_int_equal(tally.restored, 1);

    /* forged token counts: one fewer, one more, none, far more than the context */
    int32_t counts[] = {n_perm - 1, n_perm + 1, 1, 0};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        int32_t want = counts[c];
        size_t len = 12 + 4 * (size_t)want + (kv_len - toks_end);
        uint8_t *f = calloc(1, len);
        assert_non_null(f);
        memcpy(f, kv, 12);
        memcpy(f + 8, &want, 4);
        memcpy(f + 12, kv + 12, 4 * (size_t)(want < n_perm ? want : n_perm));
        if (want > n_perm) {
            memcpy(f + 12 + 4 * (size_t)n_perm, kv + 12, 4); /* a repeated first token */
        }
        memcpy(f + 12 + 4 * (size_t)want, kv + toks_end, kv_len - toks_end);
        write_parts(bad, fp, json, f, len);
        char what[64];
        snprintf(what, sizeof(what), "KV token count %d of %d", want, n_perm);
        check_corpus_file(m, ts, bad, what, false, &tally);
        free(f);
    }
    /* forged positions: the cells shifted by 3, or one cell moved */
    long cells = find_cells(kv + toks_end + 8, kv_len - toks_end - 8, n_perm);
    if (cells < 0) {
        fail_msg("llama.cpp's cell layout changed: update find_cells()");
    }
    for (int variant = 0; variant < 2; variant++) {
        uint8_t *f = malloc(kv_len);
        assert_non_null(f);
        memcpy(f, kv, kv_len);
        uint8_t *meta = f + toks_end + 8 + cells;
        for (int32_t i = 0; i < n_perm; i++) {
            int32_t pos = variant == 0 ? i + 3 : (i == n_perm - 1 ? n_perm + 5 : i);
            memcpy(meta + 12 * (size_t)i, &pos, 4);
        }
        write_parts(bad, fp, json, f, kv_len);
        check_corpus_file(m, ts, bad, variant == 0 ? "positions shifted" : "last position moved",
                          false, &tally);
        free(f);
    }
    /* forged JSON counts */
    const struct {
        const char *key;
        json_int_t value;
    } fields[] = {{"system_tokens", 0},
                  {"system_tokens", -5},
                  {"system_tokens", 100000},
                  {"superseded_at_rebuild", 99999},
                  {"superseded_at_rebuild", -1}};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        char *j = json_with_int(json, fields[i].key, fields[i].value);
        write_parts(bad, fp, j, kv, kv_len);
        char what[80];
        snprintf(what, sizeof(what), "%s = %lld", fields[i].key, (long long)fields[i].value);
        check_corpus_file(m, ts, bad, what, false, &tally);
        free(j);
    }
    /* malformed parts under a valid checksum */
    const char *jsons[] = {"{}", "[]", "{\"syntax\":\"pipit\",\"log\":[],\"memory\":5}",
                           "{\"syntax\":\"pipit\",\"log\":[{\"tool\":\"set_zoom\",\"kind\":9}]}"};
    for (size_t i = 0; i < sizeof(jsons) / sizeof(jsons[0]); i++) {
        write_parts(bad, fp, jsons[i], kv, kv_len);
        check_corpus_file(m, ts, bad, jsons[i], false, &tally);
    }
    write_parts(bad, fp, json, (const uint8_t *)"PKV1", 4);
    check_corpus_file(m, ts, bad, "a 4-byte KV part", false, &tally);
    /* other format versions, checksum valid */
    size_t n = 0;
    unsigned char *bytes = test_read_file(good, &n);
    uint32_t versions[] = {0, SESSION_VERSION + 1, 0xffffffffu};
    for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        write_forged(bad, bytes, n, versions[i]);
        check_corpus_file(m, ts, bad, "another format version", false, &tally);
    }
    /* truncations */
    for (size_t k = 0; k < 24; k++) {
        size_t cut = k < 4 ? k * 13 : n * (k - 3) / 21;
        test_write_file(bad, bytes, cut < n ? cut : n - 1);
        check_corpus_file(m, ts, bad, "a truncated session", false, &tally);
    }
    free(bytes);
    /* another pack: a phone session into the camera agent */
    struct pipit_agent_params pp = pipit_agent_default_params();
    pp.n_threads = 1;
    pp.syntax = PIPIT_SYNTAX_PIPIT;
    pp.lazy_grammar = false;
    pp.device = test_device("phone", phone, NULL);
    struct pipit_agent *ph = NULL;
    assert_int_equal(test_agent_new(m, phone, &pp, &ph, &err), PIPIT_OK);
    assert_int_equal(pipit_agent_turn(ph, "call mom", &t), PIPIT_OK);
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_save(ph, bad, &err), PIPIT_OK);
    test_agent_free(ph);
    pipit_device_free(pp.device);
    int refused = tally.refused;
    check_corpus_file(m, ts, bad, "a phone session", false, &tally);
    assert_int_equal(tally.refused, refused + 1);

    print_message("session corpus: %d files, %d refused (agent unchanged), %d rebuilt from the "
                  "memory, %d KV restored; 0 half-loaded\n",
                  tally.files, tally.refused, tally.rebuilt, tally.restored);
    free(json);
    free(kv);
    pipit_toolset_free(phone);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_damaged_files_are_refused),
        cmocka_unit_test(test_kill_during_save),
        cmocka_unit_test(test_agent_resume_fake),
    };
    const struct CMUnitTest model[] = {
        cmocka_unit_test(test_kv_state_logits_equal),
        cmocka_unit_test(test_agent_resume_real_model),
        cmocka_unit_test(test_session_corpus_real_model),
        cmocka_unit_test(test_kill_during_agent_save),
        cmocka_unit_test(test_resume_into_smaller_context),
    };
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        return cmocka_run_group_tests(model, setup, teardown);
    }
    return cmocka_run_group_tests(unit, setup, teardown);
}
