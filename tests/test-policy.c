/*
 * test-policy.c - default parameters, the thermal table, the sysfs reader on a
 * fake tree, the wall-clock budget and the identical-failure breaker.
 */
#include "policy.h"
#include "testutil.h"

#include <sys/stat.h>
#include <time.h>

/* ============================================================================
 * defaults and names */

static void test_default_params(void **state) {
    (void)state;
    struct policy_params cpu = policy_default_params(false);
    struct policy_params gpu = policy_default_params(true);
    assert_int_equal(cpu.max_steps, 3);
    assert_int_equal(cpu.max_tokens, 64);
    assert_int_equal(cpu.breaker_threshold, 2);
    assert_true(cpu.turn_budget_ms == 15000.0);
    assert_true(gpu.turn_budget_ms == 5000.0);
    assert_int_equal(gpu.max_steps, 3);
}

static void test_thermal_names(void **state) {
    (void)state;
    assert_string_equal(pipit_thermal_str(PIPIT_THERMAL_NONE), "none");
    assert_string_equal(pipit_thermal_str(PIPIT_THERMAL_LIGHT), "light");
    assert_string_equal(pipit_thermal_str(PIPIT_THERMAL_MODERATE), "moderate");
    assert_string_equal(pipit_thermal_str(PIPIT_THERMAL_SEVERE), "severe");
    assert_string_equal(pipit_thermal_str(PIPIT_THERMAL_CRITICAL), "critical");
    assert_string_equal(pipit_thermal_str((enum pipit_thermal)99), "unknown thermal state");
    /* append-only values */
    assert_int_equal(PIPIT_THERMAL_NONE, 0);
    assert_int_equal(PIPIT_THERMAL_CRITICAL, 4);
}

/* ============================================================================
 * thermal table */

struct limits_case {
    enum pipit_thermal t;
    int32_t base_threads, base_tokens;
    struct policy_limits want;
};

static const struct limits_case LIMITS_CASES[] = {
    /* seed 001's table: base 4 threads, 256 tokens */
    {PIPIT_THERMAL_NONE, 4, 256, {4, 0, 256, false}},
    {PIPIT_THERMAL_LIGHT, 4, 256, {4, 0, 256, false}},
    {PIPIT_THERMAL_MODERATE, 4, 256, {2, 200, 128, false}},
    {PIPIT_THERMAL_SEVERE, 4, 256, {1, 500, 64, false}},
    {PIPIT_THERMAL_CRITICAL, 4, 256, {0, 0, 0, true}},
    /* other bases */
    {PIPIT_THERMAL_MODERATE, 8, 64, {4, 200, 32, false}},
    {PIPIT_THERMAL_SEVERE, 8, 64, {1, 500, 16, false}},
    {PIPIT_THERMAL_MODERATE, 1, 1, {1, 200, 1, false}},
    {PIPIT_THERMAL_MODERATE, 3, 3, {1, 200, 1, false}},
    {PIPIT_THERMAL_SEVERE, 1, 3, {1, 500, 1, false}},
    {PIPIT_THERMAL_NONE, 0, -5, {1, 0, 1, false}},
    {PIPIT_THERMAL_SEVERE, -1, 0, {1, 500, 1, false}},
    /* out of the enum: fail safe */
    {(enum pipit_thermal)7, 4, 256, {0, 0, 0, true}},
    {(enum pipit_thermal) - 1, 4, 256, {0, 0, 0, true}},
};

static void test_thermal_limits(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof(LIMITS_CASES) / sizeof(LIMITS_CASES[0]); i++) {
        const struct limits_case *c = &LIMITS_CASES[i];
        struct policy_limits got;
        memset(&got, 0x5A, sizeof(got));
        policy_thermal_limits(c->t, c->base_threads, c->base_tokens, &got);
        if (got.n_threads != c->want.n_threads || got.step_delay_ms != c->want.step_delay_ms ||
            got.max_tokens != c->want.max_tokens || got.paused != c->want.paused) {
            fail_msg("case %zu (%d, %d, %d): got {%d, %d, %d, %d}", i, (int)c->t,
                     (int)c->base_threads, (int)c->base_tokens, (int)got.n_threads,
                     (int)got.step_delay_ms, (int)got.max_tokens, (int)got.paused);
        }
    }
    policy_thermal_limits(PIPIT_THERMAL_NONE, 4, 256, NULL); /* no-op */
}

static void test_thermal_thresholds(void **state) {
    (void)state;
    assert_int_equal(policy_thermal_from_mc(-20000), PIPIT_THERMAL_NONE);
    assert_int_equal(policy_thermal_from_mc(44999), PIPIT_THERMAL_NONE);
    assert_int_equal(policy_thermal_from_mc(45000), PIPIT_THERMAL_LIGHT);
    assert_int_equal(policy_thermal_from_mc(54999), PIPIT_THERMAL_LIGHT);
    assert_int_equal(policy_thermal_from_mc(55000), PIPIT_THERMAL_MODERATE);
    assert_int_equal(policy_thermal_from_mc(64999), PIPIT_THERMAL_MODERATE);
    assert_int_equal(policy_thermal_from_mc(65000), PIPIT_THERMAL_SEVERE);
    assert_int_equal(policy_thermal_from_mc(74999), PIPIT_THERMAL_SEVERE);
    assert_int_equal(policy_thermal_from_mc(75000), PIPIT_THERMAL_CRITICAL);
    assert_int_equal(policy_thermal_from_mc(INT32_MAX), PIPIT_THERMAL_CRITICAL);
}

/* ============================================================================
 * sysfs reader on a fake tree */

struct fake_sysfs {
    char root[256];
    char paths[16][512]; /* files and directories made, removed in reverse */
    int n;
};

/* f->paths[f->n] = root/rel (built in a local buffer: root and paths share f) */
static void fake_path(struct fake_sysfs *f, const char *rel) {
    char path[sizeof(f->paths[0])];
    int w = snprintf(path, sizeof(path), "%s/%s", f->root, rel);
    assert_true(w > 0 && (size_t)w < sizeof(path));
    memcpy(f->paths[f->n], path, sizeof(path));
}

static void fake_mkdir(struct fake_sysfs *f, const char *rel) {
    assert_true(f->n < 16);
    fake_path(f, rel);
    assert_int_equal(mkdir(f->paths[f->n], 0700), 0);
    f->n++;
}

static void fake_file(struct fake_sysfs *f, const char *rel, const char *content) {
    assert_true(f->n < 16);
    fake_path(f, rel);
    test_write_file(f->paths[f->n], content, strlen(content));
    f->n++;
}

static void fake_zone(struct fake_sysfs *f, const char *name, const char *content) {
    char rel[128];
    snprintf(rel, sizeof(rel), "class/thermal/%s", name);
    fake_mkdir(f, rel);
    if (content != NULL) {
        snprintf(rel, sizeof(rel), "class/thermal/%s/temp", name);
        fake_file(f, rel, content);
    }
}

/* A fresh tree with an empty <root>/class/thermal. */
static void fake_init(struct fake_sysfs *f) {
    memset(f, 0, sizeof(*f));
    snprintf(f->root, sizeof(f->root), "/tmp/pipit-policy-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    fake_mkdir(f, "class");
    fake_mkdir(f, "class/thermal");
}

static void fake_free(struct fake_sysfs *f) {
    for (int i = f->n - 1; i >= 0; i--) {
        assert_int_equal(remove(f->paths[i]), 0);
    }
    assert_int_equal(rmdir(f->root), 0);
}

static void test_sysfs_hottest_wins(void **state) {
    (void)state;
    struct fake_sysfs f;
    fake_init(&f);
    fake_zone(&f, "thermal_zone0", "38000\n");
    fake_zone(&f, "thermal_zone1", "61500\n");
    fake_zone(&f, "thermal_zone2", "47000");
    fake_file(&f, "class/thermal/cooling_device0", "99999\n"); /* not a zone */

    struct pipit_error err;
    int32_t mc = 0;
    assert_int_equal(policy_thermal_read_mc(f.root, &mc, &err), PIPIT_OK);
    assert_int_equal(mc, 61500);
    enum pipit_thermal t = PIPIT_THERMAL_CRITICAL;
    assert_int_equal(policy_thermal_read(f.root, &t, &err), PIPIT_OK);
    assert_int_equal(t, PIPIT_THERMAL_MODERATE);
    fake_free(&f);
}

static void test_sysfs_garbage_is_skipped(void **state) {
    (void)state;
    struct fake_sysfs f;
    fake_init(&f);
    fake_zone(&f, "thermal_zone0", "hot\n");
    fake_zone(&f, "thermal_zone1", "80000 degrees\n");
    fake_zone(&f, "thermal_zone2", "");
    fake_zone(&f, "thermal_zone3", "-274000\n"); /* disabled sensor */
    fake_zone(&f, "thermal_zone4", "99999999999999999999\n");
    fake_zone(&f, "thermal_zone5", NULL); /* no temp file */
    fake_zone(&f, "thermal_zone6", " 52000 \n");

    struct pipit_error err;
    enum pipit_thermal t = PIPIT_THERMAL_CRITICAL;
    assert_int_equal(policy_thermal_read(f.root, &t, &err), PIPIT_OK);
    assert_int_equal(t, PIPIT_THERMAL_LIGHT);
    fake_free(&f);
}

static void test_sysfs_no_valid_zone(void **state) {
    (void)state;
    struct fake_sysfs f;
    fake_init(&f);
    fake_zone(&f, "thermal_zone0", "garbage");
    fake_zone(&f, "thermal_zone1", "1e5\n");

    struct pipit_error err;
    enum pipit_thermal t = PIPIT_THERMAL_SEVERE;
    assert_int_equal(policy_thermal_read(f.root, &t, &err), PIPIT_ERR_IO);
    assert_int_equal(err.status, PIPIT_ERR_IO);
    assert_int_equal(t, PIPIT_THERMAL_SEVERE); /* unchanged */
    assert_non_null(strstr(err.text, "policy: no valid temperature in 2 thermal zones: "));
    assert_non_null(strstr(err.text, f.root));
    fake_free(&f);
}

static void test_sysfs_missing(void **state) {
    (void)state;
    struct fake_sysfs f;
    fake_init(&f);
    struct pipit_error err;
    enum pipit_thermal t = PIPIT_THERMAL_NONE;

    /* the thermal directory exists but has no zones */
    assert_int_equal(policy_thermal_read(f.root, &t, &err), PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, "policy: no thermal zones: "));

    /* no thermal directory at all */
    char missing[300];
    snprintf(missing, sizeof(missing), "%s/nowhere", f.root);
    assert_int_equal(policy_thermal_read(missing, &t, &err), PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, "policy: cannot open thermal directory: "));
    assert_non_null(strstr(err.text, "/nowhere/class/thermal"));

    /* misuse */
    assert_int_equal(policy_thermal_read(f.root, NULL, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(policy_thermal_read_mc(f.root, NULL, NULL), PIPIT_ERR_INVALID_ARG);
    char longroot[2000];
    memset(longroot, 'a', sizeof(longroot) - 1);
    longroot[sizeof(longroot) - 1] = '\0';
    assert_int_equal(policy_thermal_read(longroot, &t, &err), PIPIT_ERR_INVALID_ARG);
    assert_true(strlen(err.text) < sizeof(err.text));
    fake_free(&f);
}

/* The real /sys may or may not have zones (containers often do not): either
 * answer is fine, but it must be one of the two and never crash. */
static void test_sysfs_default_root(void **state) {
    (void)state;
    enum pipit_thermal t = PIPIT_THERMAL_NONE;
    struct pipit_error err;
    enum pipit_status st = policy_thermal_read(NULL, &t, &err);
    assert_true(st == PIPIT_OK || st == PIPIT_ERR_IO);
    if (st == PIPIT_OK) {
        assert_true(t >= PIPIT_THERMAL_NONE && t <= PIPIT_THERMAL_CRITICAL);
    }
}

/* ============================================================================
 * wall-clock budget */

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void test_clock_unlimited(void **state) {
    (void)state;
    const double budgets[] = {0.0, -1.0, NAN};
    for (size_t i = 0; i < 3; i++) {
        struct policy_clock c;
        policy_clock_start(&c, budgets[i]);
        assert_true(c.budget_ms == 0.0);
        assert_false(policy_clock_expired(&c));
        assert_true(isinf(policy_clock_remaining_ms(&c)));
    }
    struct policy_clock c;
    policy_clock_start(&c, 0.0);
    sleep_ms(20);
    assert_false(policy_clock_expired(&c));
    assert_true(policy_clock_elapsed_ms(&c) >= 15.0);
}

static void test_clock_expires(void **state) {
    (void)state;
    struct policy_clock c;
    policy_clock_start(&c, 5.0);
    sleep_ms(50);
    assert_true(policy_clock_expired(&c));
    assert_true(policy_clock_remaining_ms(&c) == 0.0);

    /* a large budget is not expired right away (generous margin) */
    policy_clock_start(&c, 60000.0);
    assert_false(policy_clock_expired(&c));
    double r = policy_clock_remaining_ms(&c);
    assert_true(r > 50000.0 && r <= 60000.0);

    /* NULL: fail safe */
    policy_clock_start(NULL, 10.0);
    assert_true(policy_clock_expired(NULL));
    assert_true(policy_clock_remaining_ms(NULL) == 0.0);
    assert_true(policy_clock_elapsed_ms(NULL) == 0.0);
}

/* ============================================================================
 * identical-failure breaker */

static void test_breaker_trips_at_two(void **state) {
    (void)state;
    struct policy_breaker b;
    policy_breaker_init(&b, 0); /* default */
    assert_int_equal(b.threshold, 2);
    const char *args = "{\"mode\":\"on\"}";
    assert_false(policy_breaker_record(&b, "set_flash", args, false, "flash_unavailable"));
    assert_false(policy_breaker_tripped(&b));
    assert_true(policy_breaker_record(&b, "set_flash", args, false, "flash_unavailable"));
    assert_true(policy_breaker_tripped(&b));
    assert_string_equal(b.tool, "set_flash");
    assert_string_equal(b.code, "flash_unavailable");
    assert_string_equal(b.args, args);
    assert_int_equal(b.count, 2);
    /* keeps answering true while it repeats */
    assert_true(policy_breaker_record(&b, "set_flash", args, false, "flash_unavailable"));
    assert_int_equal(b.count, 3);

    /* a zeroed struct is a default breaker */
    struct policy_breaker z;
    memset(&z, 0, sizeof(z));
    assert_false(policy_breaker_record(&z, "take_photo", "{}", false, "busy"));
    assert_true(policy_breaker_record(&z, "take_photo", "{}", false, "busy"));
}

static void test_breaker_resets(void **state) {
    (void)state;
    struct policy_breaker b;
    policy_breaker_init(&b, 2);
    const char *a1 = "{\"level\":20}";
    const char *a2 = "{\"level\":2}";

    /* success in between */
    assert_false(policy_breaker_record(&b, "set_zoom", a1, false, "zoom_out_of_range"));
    assert_false(policy_breaker_record(&b, "set_zoom", a1, true, NULL));
    assert_int_equal(b.count, 0);
    assert_false(policy_breaker_record(&b, "set_zoom", a1, false, "zoom_out_of_range"));

    /* different args */
    assert_false(policy_breaker_record(&b, "set_zoom", a2, false, "zoom_out_of_range"));
    /* different tool */
    assert_false(policy_breaker_record(&b, "adjust_zoom", a2, false, "zoom_out_of_range"));
    /* different code */
    assert_false(policy_breaker_record(&b, "adjust_zoom", a2, false, "busy"));
    /* same again: trips */
    assert_true(policy_breaker_record(&b, "adjust_zoom", a2, false, "busy"));

    /* explicit reset keeps the threshold */
    policy_breaker_reset(&b);
    assert_int_equal(b.count, 0);
    assert_int_equal(b.threshold, 2);
    assert_false(policy_breaker_tripped(&b));
    assert_false(policy_breaker_record(&b, "adjust_zoom", a2, false, "busy"));

    /* NULL strings count as "" */
    policy_breaker_reset(&b);
    assert_false(policy_breaker_record(&b, NULL, NULL, false, NULL));
    assert_true(policy_breaker_record(&b, "", "", false, ""));

    /* NULL breaker */
    assert_false(policy_breaker_record(NULL, "x", "{}", false, "y"));
    assert_false(policy_breaker_tripped(NULL));
    policy_breaker_reset(NULL);
    policy_breaker_init(NULL, 3);
}

static void test_breaker_threshold_and_long_args(void **state) {
    (void)state;
    struct policy_breaker b;
    policy_breaker_init(&b, 3);
    assert_false(policy_breaker_record(&b, "t", "{}", false, "c"));
    assert_false(policy_breaker_record(&b, "t", "{}", false, "c"));
    assert_true(policy_breaker_record(&b, "t", "{}", false, "c"));

    policy_breaker_init(&b, 1);
    assert_true(policy_breaker_record(&b, "t", "{}", false, "c"));

    /* arguments longer than the kept copy: identity is still exact */
    char long1[1000];
    char long2[1000];
    memset(long1, 'a', sizeof(long1) - 1);
    long1[sizeof(long1) - 1] = '\0';
    memcpy(long2, long1, sizeof(long1));
    long2[900] = 'b'; /* differs after the kept prefix */
    policy_breaker_init(&b, 2);
    assert_false(policy_breaker_record(&b, "t", long1, false, "c"));
    assert_false(policy_breaker_record(&b, "t", long2, false, "c"));
    assert_true(policy_breaker_record(&b, "t", long2, false, "c"));
    assert_int_equal(strlen(b.args), POLICY_BREAKER_ARGS_CAP - 1);

    /* multi-byte characters cut on a boundary still compare equal */
    char utf[600];
    size_t n = 0;
    utf[n++] = 'x';
    while (n + 2 < sizeof(utf)) {
        utf[n++] = (char)0xC3;
        utf[n++] = (char)0xA9;
    }
    utf[n] = '\0';
    policy_breaker_init(&b, 2);
    assert_false(policy_breaker_record(&b, "t", utf, false, "c"));
    assert_true(policy_breaker_record(&b, "t", utf, false, "c"));
    assert_true(strlen(b.args) < POLICY_BREAKER_ARGS_CAP);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_params),
        cmocka_unit_test(test_thermal_names),
        cmocka_unit_test(test_thermal_limits),
        cmocka_unit_test(test_thermal_thresholds),
        cmocka_unit_test(test_sysfs_hottest_wins),
        cmocka_unit_test(test_sysfs_garbage_is_skipped),
        cmocka_unit_test(test_sysfs_no_valid_zone),
        cmocka_unit_test(test_sysfs_missing),
        cmocka_unit_test(test_sysfs_default_root),
        cmocka_unit_test(test_clock_unlimited),
        cmocka_unit_test(test_clock_expires),
        cmocka_unit_test(test_breaker_trips_at_two),
        cmocka_unit_test(test_breaker_resets),
        cmocka_unit_test(test_breaker_threshold_and_long_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
