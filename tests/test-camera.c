/*
 * test-camera.c - the simulated camera: its state contract (keys, defaults),
 * every tool's success data, every constraint's reason code, set_state's
 * all-or-nothing rule, and a fuzz-ish sweep of odd JSON over every tool.
 */
#include "device.h"
#include "devices/camera.h"
#include "testutil.h"

#include <jansson.h>

/* ============================================================================
 * helpers */

static json_t *J(const char *text) {
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (v == NULL) {
        fail_msg("bad JSON literal %s: %s", text, e.text);
    }
    return v;
}

static void assert_json_equal(const json_t *got, const json_t *want) {
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        fail_msg("JSON differs\n  got:  %s\n  want: %s", g ? g : "(null)", w ? w : "(null)");
    }
}

/* A camera for tools/camera.json: its ranges and enums are the spec's. */
static void camera_for_spec(struct device *dev) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err) != PIPIT_OK ||
        camera_device_new(ts, dev, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    pipit_toolset_free(ts); /* the camera keeps what it needs */
}

static int setup(void **state) {
    struct device *dev = calloc(1, sizeof(*dev));
    assert_non_null(dev);
    camera_for_spec(dev);
    *state = dev;
    return 0;
}

static int teardown(void **state) {
    struct device *dev = *state;
    device_free(dev);
    free(dev);
    return 0;
}

static json_t *get_state(struct device *dev) {
    json_t *s = dev->ops->get_state(dev->self);
    assert_non_null(s);
    return s;
}

/* Apply overrides that must be accepted. */
static void init_state(struct device *dev, const char *overrides) {
    struct pipit_error err = {0};
    json_t *o = J(overrides);
    enum pipit_status st = dev->ops->set_state(dev->self, o, &err);
    if (st != PIPIT_OK) {
        fail_msg("set_state %s: %s", overrides, err.text);
    }
    json_decref(o);
}

/* Call a tool that must succeed with exactly `expected_data`, and check that
 * the state changed in exactly those keys. */
static void call_ok(struct device *dev, const char *tool, const char *args, const char *expected) {
    json_t *before = get_state(dev);
    json_t *a = args != NULL ? J(args) : NULL;
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, a, &r);
    if (st != PIPIT_OK || !r.ok) {
        fail_msg("%s %s: status %d, code %s: %s", tool, args ? args : "NULL", st, r.code,
                 r.message);
    }
    assert_string_equal(r.code, "");
    assert_string_equal(r.message, "");
    json_t *want = J(expected);
    assert_json_equal(r.data, want);

    json_t *after = get_state(dev);
    json_t *want_state = json_deep_copy(before);
    assert_int_equal(json_object_update(want_state, want), 0);
    assert_json_equal(after, want_state);

    json_decref(want_state);
    json_decref(after);
    json_decref(want);
    device_result_clear(&r);
    assert_null(r.data);
    json_decref(a);
    json_decref(before);
}

/* Call a tool that must fail with `code` (and `message` when not NULL) and
 * leave the state unchanged. */
static void call_fails(struct device *dev,
                       const char *tool,
                       const char *args,
                       const char *code,
                       const char *message) {
    json_t *before = get_state(dev);
    json_t *a = args != NULL ? J(args) : NULL;
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, a, &r);
    assert_int_equal(st, PIPIT_OK);
    if (r.ok) {
        fail_msg("%s %s succeeded, expected %s", tool, args ? args : "NULL", code);
    }
    assert_null(r.data);
    assert_string_equal(r.code, code);
    if (message != NULL) {
        assert_string_equal(r.message, message);
    } else {
        assert_true(strlen(r.message) > 0);
    }
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    device_result_clear(&r);
    json_decref(a);
    json_decref(before);
}

/* set_state that must fail with PIPIT_ERR_JSON, a message containing `needle1`
 * and `needle2`, and no change. */
static void set_state_fails(struct device *dev,
                            const char *overrides,
                            const char *needle1,
                            const char *needle2) {
    json_t *before = get_state(dev);
    json_t *o = J(overrides);
    struct pipit_error err = {0};
    assert_int_equal(dev->ops->set_state(dev->self, o, &err), PIPIT_ERR_JSON);
    assert_int_equal(err.status, PIPIT_ERR_JSON);
    if (strstr(err.text, needle1) == NULL || strstr(err.text, needle2) == NULL) {
        fail_msg("set_state %s: message \"%s\" lacks \"%s\" or \"%s\"", overrides, err.text,
                 needle1, needle2);
    }
    assert_true(strncmp(err.text, "camera: ", 8) == 0);
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    json_decref(o);
    json_decref(before);
}

static const char *const DEFAULTS =
    "{\"zoom\": 1.0, \"flash\": \"off\", \"focus_x\": 0.5, \"focus_y\": 0.5,"
    " \"ae_af_locked\": false, \"exposure_ev\": 0.0, \"white_balance\": \"auto\","
    " \"timer_s\": 0, \"aspect_ratio\": \"4:3\", \"quality_priority\": \"quality\","
    " \"scene_mode\": \"auto\", \"jpeg_quality\": 95, \"grid\": false,"
    " \"horizon_level\": false, \"facing\": \"back\", \"recording\": false,"
    " \"photos_taken\": 0, \"videos_recorded\": 0, \"permission\": true}";

/* Every tool with one valid argument object. */
static const struct {
    const char *tool;
    const char *args;
} VALID_CALLS[] = {
    {"take_photo", "{}"},
    {"set_zoom", "{\"level\": 2}"},
    {"adjust_zoom", "{\"direction\": \"in\"}"},
    {"set_flash", "{\"mode\": \"off\"}"},
    {"tap_to_focus", "{\"x\": 0.2, \"y\": 0.3}"},
    {"set_ae_af_lock", "{\"locked\": true}"},
    {"set_exposure", "{\"ev\": 1}"},
    {"set_white_balance", "{\"mode\": \"cloudy\"}"},
    {"set_timer", "{\"seconds\": 3}"},
    {"set_aspect_ratio", "{\"ratio\": \"16:9\"}"},
    {"set_quality_priority", "{\"priority\": \"speed\"}"},
    {"set_scene_mode", "{\"mode\": \"night\"}"},
    {"set_jpeg_quality", "{\"quality\": 80}"},
    {"set_grid", "{\"enabled\": true}"},
    {"set_horizon_level", "{\"enabled\": true}"},
    {"switch_camera", "{\"facing\": \"front\"}"},
    {"record_video", "{\"action\": \"start\"}"}, /* last: recording blocks some tools */
};
#define N_VALID_CALLS (sizeof(VALID_CALLS) / sizeof(VALID_CALLS[0]))

/* ============================================================================
 * contract */

static void test_defaults(void **state) {
    struct device *dev = *state;
    assert_string_equal(dev->ops->name, "camera");
    json_t *s = get_state(dev);
    json_t *want = J(DEFAULTS);
    assert_json_equal(s, want);
    /* types are part of the contract: reals stay reals, counters integers */
    assert_true(json_is_real(json_object_get(s, "zoom")));
    assert_true(json_is_integer(json_object_get(s, "jpeg_quality")));
    json_decref(want);
    json_decref(s);
}

static void test_misuse(void **state) {
    struct device *dev = *state;
    struct device_result r = {0};
    struct pipit_error err = {0};
    assert_int_equal(camera_device_new(NULL, NULL, &err), PIPIT_ERR_INVALID_ARG);
    device_free(NULL);
    device_result_clear(NULL);
    assert_int_equal(dev->ops->call(NULL, "take_photo", NULL, &r), PIPIT_ERR_INVALID_ARG);
    assert_false(r.ok);
    device_result_clear(&r);
    assert_int_equal(dev->ops->call(dev->self, NULL, NULL, &r), PIPIT_ERR_INVALID_ARG);
    device_result_clear(&r);
    assert_int_equal(dev->ops->call(dev->self, "take_photo", NULL, NULL), PIPIT_ERR_INVALID_ARG);
    assert_null(dev->ops->get_state(NULL));
    json_t *o = J("{}");
    assert_int_equal(dev->ops->set_state(NULL, o, &err), PIPIT_ERR_INVALID_ARG);
    json_decref(o);
    dev->ops->destroy(NULL);
    struct device zero = {0};
    device_free(&zero);
}

static void test_successes_change_exactly_their_keys(void **state) {
    struct device *dev = *state;
    call_ok(dev, "take_photo", NULL, "{\"photos_taken\": 1}");
    call_ok(dev, "take_photo", "{}", "{\"photos_taken\": 2}");
    call_ok(dev, "set_zoom", "{\"level\": 2}", "{\"zoom\": 2.0}");
    call_ok(dev, "set_zoom", "{\"level\": 2.5}", "{\"zoom\": 2.5}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"in\"}", "{\"zoom\": 3.5}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"out\"}", "{\"zoom\": 2.5}");
    call_ok(dev, "set_flash", "{\"mode\": \"on\"}", "{\"flash\": \"on\"}");
    call_ok(dev, "set_flash", "{\"mode\": \"auto\"}", "{\"flash\": \"auto\"}");
    call_ok(dev, "tap_to_focus", "{\"x\": 0.25, \"y\": 1}",
            "{\"focus_x\": 0.25, \"focus_y\": 1.0}");
    call_ok(dev, "tap_to_focus", "{\"x\": 0, \"y\": 0.75}",
            "{\"focus_x\": 0.0, \"focus_y\": 0.75}");
    call_ok(dev, "set_ae_af_lock", "{\"locked\": true}", "{\"ae_af_locked\": true}");
    call_ok(dev, "set_ae_af_lock", "{\"locked\": false}", "{\"ae_af_locked\": false}");
    call_ok(dev, "set_exposure", "{\"ev\": -1.5}", "{\"exposure_ev\": -1.5}");
    call_ok(dev, "set_exposure", "{\"ev\": 2}", "{\"exposure_ev\": 2.0}");
    call_ok(dev, "set_white_balance", "{\"mode\": \"tungsten\"}",
            "{\"white_balance\": \"tungsten\"}");
    call_ok(dev, "set_timer", "{\"seconds\": 10}", "{\"timer_s\": 10}");
    call_ok(dev, "set_timer", "{\"seconds\": 5.0}", "{\"timer_s\": 5}");
    call_ok(dev, "set_aspect_ratio", "{\"ratio\": \"1:1\"}", "{\"aspect_ratio\": \"1:1\"}");
    call_ok(dev, "set_aspect_ratio", "{\"ratio\": \"full\"}", "{\"aspect_ratio\": \"full\"}");
    call_ok(dev, "set_quality_priority", "{\"priority\": \"speed\"}",
            "{\"quality_priority\": \"speed\"}");
    call_ok(dev, "set_scene_mode", "{\"mode\": \"macro\"}", "{\"scene_mode\": \"macro\"}");
    call_ok(dev, "set_jpeg_quality", "{\"quality\": 50}", "{\"jpeg_quality\": 50}");
    call_ok(dev, "set_jpeg_quality", "{\"quality\": 100}", "{\"jpeg_quality\": 100}");
    call_ok(dev, "set_grid", "{\"enabled\": true}", "{\"grid\": true}");
    call_ok(dev, "set_horizon_level", "{\"enabled\": true}", "{\"horizon_level\": true}");
    call_ok(dev, "set_flash", "{\"mode\": \"off\"}", "{\"flash\": \"off\"}");
    call_ok(dev, "switch_camera", "{\"facing\": \"front\"}", "{\"facing\": \"front\"}");
    call_ok(dev, "switch_camera", "{\"facing\": \"back\"}", "{\"facing\": \"back\"}");
    call_ok(dev, "record_video", "{\"action\": \"start\"}", "{\"recording\": true}");
    call_ok(dev, "take_photo", NULL, "{\"photos_taken\": 3}"); /* works while recording */
    call_ok(dev, "record_video", "{\"action\": \"stop\"}",
            "{\"recording\": false, \"videos_recorded\": 1}");
    /* extra arguments are ignored (the schema validator is the place to reject them) */
    call_ok(dev, "set_grid", "{\"enabled\": false, \"extra\": 1}", "{\"grid\": false}");
}

/* ============================================================================
 * constraints */

static void test_zoom_range_per_lens(void **state) {
    struct device *dev = *state;
    const char *back = "the back camera zooms from 0.5x to 10x";
    const char *front = "the front camera zooms from 1x to 3x";
    call_fails(dev, "set_zoom", "{\"level\": 0.4}", "zoom_out_of_range", back);
    call_fails(dev, "set_zoom", "{\"level\": 10.01}", "zoom_out_of_range", back);
    call_fails(dev, "set_zoom", "{\"level\": 1e300}", "zoom_out_of_range", back);
    call_fails(dev, "set_zoom", "{\"level\": -9223372036854775808}", "zoom_out_of_range", back);
    call_ok(dev, "set_zoom", "{\"level\": 0.5}", "{\"zoom\": 0.5}");
    call_ok(dev, "set_zoom", "{\"level\": 10}", "{\"zoom\": 10.0}");
    init_state(dev, "{\"facing\": \"front\", \"zoom\": 2.0}");
    call_fails(dev, "set_zoom", "{\"level\": 0.5}", "zoom_out_of_range", front);
    call_fails(dev, "set_zoom", "{\"level\": 3.5}", "zoom_out_of_range", front);
    call_ok(dev, "set_zoom", "{\"level\": 1}", "{\"zoom\": 1.0}");
    call_ok(dev, "set_zoom", "{\"level\": 3}", "{\"zoom\": 3.0}");
}

static void test_adjust_zoom_clamps(void **state) {
    struct device *dev = *state;
    call_ok(dev, "adjust_zoom", "{\"direction\": \"out\"}", "{\"zoom\": 0.5}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"out\"}", "{\"zoom\": 0.5}");
    init_state(dev, "{\"zoom\": 9.5}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"in\"}", "{\"zoom\": 10.0}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"in\"}", "{\"zoom\": 10.0}");
    init_state(dev, "{\"facing\": \"front\", \"zoom\": 1.5}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"out\"}", "{\"zoom\": 1.0}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"in\"}", "{\"zoom\": 2.0}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"in\"}", "{\"zoom\": 3.0}");
    call_ok(dev, "adjust_zoom", "{\"direction\": \"in\"}", "{\"zoom\": 3.0}");
    call_fails(dev, "adjust_zoom", "{\"direction\": \"up\"}", "invalid_argument", NULL);
}

static void test_switch_to_front_clamps_zoom(void **state) {
    struct device *dev = *state;
    init_state(dev, "{\"zoom\": 5.0}");
    call_ok(dev, "switch_camera", "{\"facing\": \"front\"}",
            "{\"facing\": \"front\", \"zoom\": 3.0}");
    /* switching back keeps the zoom: 3x is inside the back lens's range */
    call_ok(dev, "switch_camera", "{\"facing\": \"back\"}", "{\"facing\": \"back\"}");
    init_state(dev, "{\"zoom\": 0.5}");
    call_ok(dev, "switch_camera", "{\"facing\": \"front\"}",
            "{\"facing\": \"front\", \"zoom\": 1.0}");
    call_ok(dev, "switch_camera", "{\"facing\": \"front\"}", "{\"facing\": \"front\"}");
    init_state(dev, "{\"facing\": \"back\", \"zoom\": 2.0}");
    call_ok(dev, "switch_camera", "{\"facing\": \"front\"}", "{\"facing\": \"front\"}");
}

static void test_undo_puts_data_keys_back(void **state) {
    struct device *dev = *state;
    init_state(dev, "{\"zoom\": 7.0}");
    json_t *before = get_state(dev);
    struct device_result r = {0};
    json_t *args = J("{\"facing\": \"front\"}");
    assert_int_equal(dev->ops->call(dev->self, "switch_camera", args, &r), PIPIT_OK);
    assert_true(r.ok);
    /* what undo does: put back the previous values of exactly the data's keys */
    json_t *undo = json_object();
    const char *key;
    json_t *v;
    json_object_foreach(r.data, key, v) {
        json_object_set(undo, key, json_object_get(before, key));
    }
    struct pipit_error err = {0};
    assert_int_equal(dev->ops->set_state(dev->self, undo, &err), PIPIT_OK);
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    json_decref(undo);
    json_decref(args);
    device_result_clear(&r);
    json_decref(before);
}

static void test_flash_constraints(void **state) {
    struct device *dev = *state;
    init_state(dev, "{\"facing\": \"front\", \"flash\": \"off\"}");
    call_fails(dev, "set_flash", "{\"mode\": \"on\"}", "no_flash_on_front_camera",
               "the front camera has no flash");
    call_fails(dev, "set_flash", "{\"mode\": \"auto\"}", "no_flash_on_front_camera", NULL);
    call_ok(dev, "set_flash", "{\"mode\": \"off\"}", "{\"flash\": \"off\"}");

    init_state(dev, "{\"facing\": \"back\", \"recording\": true, \"flash\": \"auto\"}");
    call_fails(dev, "set_flash", "{\"mode\": \"on\"}", "flash_unavailable_while_recording",
               "the flash can't be changed while recording");
    call_fails(dev, "set_flash", "{\"mode\": \"off\"}", "flash_unavailable_while_recording", NULL);
    /* asking for the mode it already has changes nothing: allowed */
    call_ok(dev, "set_flash", "{\"mode\": \"auto\"}", "{\"flash\": \"auto\"}");
}

static void test_recording_constraints(void **state) {
    struct device *dev = *state;
    call_fails(dev, "record_video", "{\"action\": \"stop\"}", "not_recording",
               "no video is recording");
    call_ok(dev, "record_video", "{\"action\": \"start\"}", "{\"recording\": true}");
    call_fails(dev, "record_video", "{\"action\": \"start\"}", "already_recording",
               "a video is already recording");
    call_fails(dev, "set_aspect_ratio", "{\"ratio\": \"16:9\"}", "busy_recording",
               "the aspect ratio can't be changed while recording");
    call_fails(dev, "switch_camera", "{\"facing\": \"front\"}", "busy_recording",
               "the camera can't be switched while recording");
    call_fails(dev, "set_jpeg_quality", "{\"quality\": 80}", "busy_recording",
               "the JPEG quality can't be changed while recording");
    /* no change, no conflict */
    call_ok(dev, "set_aspect_ratio", "{\"ratio\": \"4:3\"}", "{\"aspect_ratio\": \"4:3\"}");
    call_ok(dev, "switch_camera", "{\"facing\": \"back\"}", "{\"facing\": \"back\"}");
    call_ok(dev, "set_jpeg_quality", "{\"quality\": 95}", "{\"jpeg_quality\": 95}");
    /* everything else still works */
    call_ok(dev, "take_photo", NULL, "{\"photos_taken\": 1}");
    call_ok(dev, "set_zoom", "{\"level\": 4}", "{\"zoom\": 4.0}");
    call_ok(dev, "set_grid", "{\"enabled\": true}", "{\"grid\": true}");
    call_ok(dev, "record_video", "{\"action\": \"stop\"}",
            "{\"recording\": false, \"videos_recorded\": 1}");
    call_ok(dev, "record_video", "{\"action\": \"start\"}", "{\"recording\": true}");
    call_ok(dev, "record_video", "{\"action\": \"stop\"}",
            "{\"recording\": false, \"videos_recorded\": 2}");
}

static void test_focus_and_exposure_constraints(void **state) {
    struct device *dev = *state;
    init_state(dev, "{\"ae_af_locked\": true}");
    call_fails(dev, "tap_to_focus", "{\"x\": 0.2, \"y\": 0.2}", "ae_af_locked", NULL);
    /* bad arguments are reported before the lock */
    call_fails(dev, "tap_to_focus", "{\"x\": 2, \"y\": 0.2}", "invalid_argument", NULL);
    call_fails(dev, "set_exposure", "{\"ev\": 2.5}", "exposure_out_of_range",
               "exposure goes from -2 EV to +2 EV");
    call_fails(dev, "set_exposure", "{\"ev\": -2.01}", "exposure_out_of_range", NULL);
    call_fails(dev, "set_exposure", "{\"ev\": 1e308}", "exposure_out_of_range", NULL);
    call_ok(dev, "set_exposure", "{\"ev\": -2}", "{\"exposure_ev\": -2.0}");
}

static void test_storage_full(void **state) {
    struct device *dev = *state;
    init_state(dev, "{\"photos_taken\": 1000000000, \"videos_recorded\": 1000000000}");
    call_fails(dev, "take_photo", NULL, "storage_full", NULL);
    call_fails(dev, "record_video", "{\"action\": \"start\"}", "storage_full", NULL);
    /* a recording already running still stops; the counter stays at its limit */
    init_state(dev, "{\"recording\": true}");
    call_ok(dev, "record_video", "{\"action\": \"stop\"}",
            "{\"recording\": false, \"videos_recorded\": 1000000000}");
}

static void test_invalid_arguments(void **state) {
    struct device *dev = *state;
    call_fails(dev, "set_timer", "{\"seconds\": 7}", "invalid_argument",
               "argument \"seconds\" must be 0, 3, 5 or 10, got 7");
    call_fails(dev, "set_timer", "{\"seconds\": 3.5}", "invalid_argument", NULL);
    call_fails(dev, "set_timer", "{\"seconds\": \"3\"}", "invalid_argument", NULL);
    call_fails(dev, "set_jpeg_quality", "{\"quality\": 49}", "invalid_argument",
               "argument \"quality\" must be an integer from 50 to 100, got 49");
    call_fails(dev, "set_jpeg_quality", "{\"quality\": 101}", "invalid_argument", NULL);
    call_fails(dev, "set_jpeg_quality", "{\"quality\": 1e300}", "invalid_argument", NULL);
    call_fails(dev, "tap_to_focus", "{\"x\": 0.5, \"y\": -0.1}", "invalid_argument",
               "argument \"y\" must be a number from 0 to 1, got -0.1");
    call_fails(dev, "set_zoom", "{}", "invalid_argument", "argument \"level\" is missing");
    call_fails(dev, "set_zoom", "{\"level\": \"2x\"}", "invalid_argument",
               "argument \"level\" must be a number, got \"2x\"");
    call_fails(dev, "set_flash", "{\"mode\": \"strobe\"}", "invalid_argument",
               "argument \"mode\" must be \"off\", \"on\" or \"auto\", got \"strobe\"");
    call_fails(dev, "set_grid", "{\"enabled\": 1}", "invalid_argument",
               "argument \"enabled\" must be true or false, got 1");
    call_fails(dev, "set_ae_af_lock", "{\"locked\": null}", "invalid_argument", NULL);
    call_fails(dev, "record_video", "{\"action\": [\"start\"]}", "invalid_argument", NULL);
    call_fails(dev, "switch_camera", "{\"facing\": \"FRONT\"}", "invalid_argument", NULL);
    call_fails(dev, "set_scene_mode", "{\"mode\": {}}", "invalid_argument", NULL);
    call_fails(dev, "set_white_balance", NULL, "invalid_argument", NULL);
}

static void test_permission_denied_fails_every_tool(void **state) {
    struct device *dev = *state;
    init_state(dev, "{\"permission\": false}");
    for (size_t i = 0; i < N_VALID_CALLS; i++) {
        call_fails(dev, VALID_CALLS[i].tool, VALID_CALLS[i].args, "permission_denied",
                   "the app is not allowed to use the camera");
    }
    init_state(dev, "{\"permission\": true}");
    for (size_t i = 0; i < N_VALID_CALLS; i++) {
        struct device_result r = {0};
        json_t *a = J(VALID_CALLS[i].args);
        assert_int_equal(dev->ops->call(dev->self, VALID_CALLS[i].tool, a, &r), PIPIT_OK);
        if (!r.ok) {
            fail_msg("%s %s: %s", VALID_CALLS[i].tool, VALID_CALLS[i].args, r.code);
        }
        device_result_clear(&r);
        json_decref(a);
    }
}

static void test_unknown_tool_and_bad_args(void **state) {
    struct device *dev = *state;
    const char *unknown[] = {"process_with_cloud_llm", "", "TAKE_PHOTO", "take_photo ", "zoom"};
    json_t *before = get_state(dev);
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        struct device_result r = {0};
        assert_int_equal(dev->ops->call(dev->self, unknown[i], NULL, &r), PIPIT_ERR_UNKNOWN_TOOL);
        assert_false(r.ok);
        assert_null(r.data);
        assert_string_equal(r.code, "unknown_tool");
        device_result_clear(&r);
    }
    const char *not_objects[] = {"null", "[]", "[{\"level\": 2}]", "\"level\"", "2", "true"};
    for (size_t i = 0; i < sizeof(not_objects) / sizeof(not_objects[0]); i++) {
        struct device_result r = {0};
        json_t *a = J(not_objects[i]);
        assert_int_equal(dev->ops->call(dev->self, "set_zoom", a, &r), PIPIT_ERR_INVALID_ARGS);
        assert_false(r.ok);
        assert_string_equal(r.code, "invalid_argument");
        device_result_clear(&r);
        json_decref(a);
    }
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    json_decref(before);
}

/* ============================================================================
 * set_state */

static void test_set_state_all_or_nothing(void **state) {
    struct device *dev = *state;
    set_state_fails(dev, "{\"zoom\": 2.0, \"flash\": \"strobe\"}", "flash", "\"strobe\"");
    set_state_fails(dev, "{\"zoom\": 2.0, \"zomm\": 3.0}", "unknown state key", "\"zomm\"");
    set_state_fails(dev, "{\"grid\": true, \"zoom\": \"2\"}", "zoom", "\"2\"");
    set_state_fails(dev, "{\"zoom\": 11}", "zoom", "11");
    set_state_fails(dev, "{\"grid\": 1}", "grid", "1");
    set_state_fails(dev, "{\"timer_s\": 4}", "timer_s", "4");
    set_state_fails(dev, "{\"timer_s\": 3.5}", "timer_s", "3.5");
    set_state_fails(dev, "{\"jpeg_quality\": 101}", "jpeg_quality", "101");
    set_state_fails(dev, "{\"focus_x\": 1.5}", "focus_x", "1.5");
    set_state_fails(dev, "{\"exposure_ev\": -3}", "exposure_ev", "-3");
    set_state_fails(dev, "{\"photos_taken\": -1}", "photos_taken", "-1");
    set_state_fails(dev, "{\"videos_recorded\": 1e20}", "videos_recorded", "1e+20");
    set_state_fails(dev, "{\"facing\": null}", "facing", "null");
    set_state_fails(dev, "{\"scene_mode\": [\"night\"]}", "scene_mode", "an array");
    set_state_fails(dev, "{\"permission\": \"yes\"}", "permission", "\"yes\"");
    /* a combination the camera cannot be in: 5x on the front lens */
    set_state_fails(dev, "{\"grid\": true, \"facing\": \"front\", \"zoom\": 5}", "zoom", "front");
    init_state(dev, "{\"zoom\": 5.0}");
    set_state_fails(dev, "{\"facing\": \"front\"}", "zoom", "front");

    json_t *before = get_state(dev);
    struct pipit_error err = {0};
    json_t *not_object = J("[1]");
    assert_int_equal(dev->ops->set_state(dev->self, not_object, &err), PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "not an object"));
    assert_int_equal(dev->ops->set_state(dev->self, NULL, &err), PIPIT_ERR_JSON);
    assert_int_equal(dev->ops->set_state(dev->self, NULL, NULL), PIPIT_ERR_JSON);
    json_decref(not_object);
    init_state(dev, "{}");
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    json_decref(before);
}

static void test_set_state_accepts_every_key(void **state) {
    struct device *dev = *state;
    const char *all = "{\"zoom\": 2, \"flash\": \"auto\", \"focus_x\": 0, \"focus_y\": 1,"
                      " \"ae_af_locked\": true, \"exposure_ev\": -2, \"white_balance\":"
                      " \"fluorescent\", \"timer_s\": 10, \"aspect_ratio\": \"16:9\","
                      " \"quality_priority\": \"speed\", \"scene_mode\": \"food\","
                      " \"jpeg_quality\": 50, \"grid\": true, \"horizon_level\": true,"
                      " \"facing\": \"front\", \"recording\": true, \"photos_taken\": 7,"
                      " \"videos_recorded\": 3, \"permission\": false}";
    init_state(dev, all);
    json_t *s = get_state(dev);
    /* integers are accepted for real-valued keys, and read back as reals */
    json_t *want = J("{\"zoom\": 2.0, \"flash\": \"auto\", \"focus_x\": 0.0, \"focus_y\": 1.0,"
                     " \"ae_af_locked\": true, \"exposure_ev\": -2.0, \"white_balance\":"
                     " \"fluorescent\", \"timer_s\": 10, \"aspect_ratio\": \"16:9\","
                     " \"quality_priority\": \"speed\", \"scene_mode\": \"food\","
                     " \"jpeg_quality\": 50, \"grid\": true, \"horizon_level\": true,"
                     " \"facing\": \"front\", \"recording\": true, \"photos_taken\": 7,"
                     " \"videos_recorded\": 3, \"permission\": false}");
    assert_json_equal(s, want);
    /* get_state feeds set_state unchanged: the round trip is the identity */
    struct pipit_error err = {0};
    init_state(dev, DEFAULTS);
    assert_int_equal(dev->ops->set_state(dev->self, s, &err), PIPIT_OK);
    json_t *again = get_state(dev);
    assert_json_equal(again, want);
    json_decref(again);
    json_decref(want);
    json_decref(s);
}

/* ============================================================================
 * fuzz-ish: odd JSON everywhere never crashes and always yields a code */

static bool utf8_ok(const char *s) {
    json_t *j = json_string(s); /* NULL when not valid UTF-8 */
    json_decref(j);
    return j != NULL;
}

static void call_odd(struct device *dev, const char *tool, json_t *args) {
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, args, &r);
    assert_true(st == PIPIT_OK || st == PIPIT_ERR_INVALID_ARGS);
    if (r.ok) {
        assert_int_equal(st, PIPIT_OK);
        assert_true(json_is_object(r.data));
    } else {
        assert_null(r.data);
        assert_true(strlen(r.code) > 0);
        assert_true(strlen(r.message) > 0);
        if (!utf8_ok(r.message)) {
            fail_msg("%s: message is not valid UTF-8", tool);
        }
    }
    device_result_clear(&r);
    /* the state stays inside its domain: it always reads back through set_state */
    json_t *s = get_state(dev);
    struct pipit_error err = {0};
    if (dev->ops->set_state(dev->self, s, &err) != PIPIT_OK) {
        fail_msg("%s left a state set_state refuses: %s", tool, err.text);
    }
    json_decref(s);
}

static void test_fuzz_odd_json(void **state) {
    struct device *dev = *state;
    static const char *const arg_names[] = {"action",   "level",   "direction", "mode",    "x",
                                            "y",        "locked",  "ev",        "seconds", "ratio",
                                            "priority", "quality", "enabled",   "facing",  "extra"};
    char long_string[5000];
    memset(long_string, 'a', sizeof(long_string) - 1);
    long_string[sizeof(long_string) - 1] = '\0';
    json_t *odd[] = {
        json_null(),
        json_true(),
        json_false(),
        json_integer(0),
        json_integer(-1),
        json_integer(3),
        json_integer(50),
        json_integer(INT64_MAX),
        json_integer(INT64_MIN),
        json_real(0.5),
        json_real(-0.0),
        json_real(5.0),
        json_real(1e308),
        json_real(-1e308),
        json_real(4.9e-324),
        json_real(9.3e18),
        json_string(""),
        json_string("on"),
        json_string("start"),
        json_string("front"),
        json_string("in"),
        json_string(long_string),
        json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"
                    "\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7\xf0\x9f\x93\xb7"),
        json_stringn_nocheck("\xff\xfe\x00\xc3", 4), /* invalid UTF-8 with a NUL */
        json_array(),
        json_pack("[i,s]", 1, "on"),
        json_object(),
        json_pack("{s:s}", "mode", "on"),
    };
    const size_t n_odd = sizeof(odd) / sizeof(odd[0]);
    for (size_t i = 0; i < n_odd; i++) {
        assert_non_null(odd[i]);
    }
    const char *starts[] = {
        "{}",
        "{\"recording\": true, \"facing\": \"front\", \"ae_af_locked\": true}",
        "{\"permission\": false}",
        "{\"permission\": true, \"recording\": false, \"facing\": \"back\", \"zoom\": 10}",
    };
    size_t calls = 0;
    for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
        init_state(dev, starts[s]);
        for (size_t t = 0; t < N_VALID_CALLS; t++) {
            const char *tool = VALID_CALLS[t].tool;
            /* whole-argument oddities: NULL, and every non-object value */
            call_odd(dev, tool, NULL);
            calls++;
            for (size_t i = 0; i < n_odd; i++) {
                call_odd(dev, tool, odd[i]);
                calls++;
            }
            /* every argument name set to every odd value, alone and in pairs */
            for (size_t a = 0; a < sizeof(arg_names) / sizeof(arg_names[0]); a++) {
                for (size_t i = 0; i < n_odd; i++) {
                    json_t *args = json_object();
                    json_object_set(args, arg_names[a], odd[i]);
                    call_odd(dev, tool, args);
                    json_object_set(args, arg_names[(a + 1) % 15], odd[(i * 7 + 3) % n_odd]);
                    call_odd(dev, tool, args);
                    json_decref(args);
                    calls += 2;
                }
            }
        }
    }
    /* set_state with odd values for every key never crashes either */
    json_t *keys = J(DEFAULTS);
    const char *key;
    json_t *v;
    json_object_foreach(keys, key, v) {
        for (size_t i = 0; i < n_odd; i++) {
            json_t *o = json_object();
            json_object_set(o, key, odd[i]);
            struct pipit_error err = {0};
            enum pipit_status st = dev->ops->set_state(dev->self, o, &err);
            assert_true(st == PIPIT_OK || st == PIPIT_ERR_JSON);
            assert_true(utf8_ok(err.text));
            json_decref(o);
        }
    }
    json_t *weird_key = json_object();
    json_object_set_new_nocheck(weird_key, "\xff\xfe\xfd", json_true());
    struct pipit_error err = {0};
    assert_int_equal(dev->ops->set_state(dev->self, weird_key, &err), PIPIT_ERR_JSON);
    assert_true(utf8_ok(err.text));
    json_decref(weird_key);
    json_decref(keys);
    for (size_t i = 0; i < n_odd; i++) {
        json_decref(odd[i]);
    }
    assert_true(calls > 10000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_successes_change_exactly_their_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zoom_range_per_lens, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adjust_zoom_clamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_switch_to_front_clamps_zoom, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undo_puts_data_keys_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flash_constraints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recording_constraints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_focus_and_exposure_constraints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_storage_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permission_denied_fails_every_tool, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_tool_and_bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_state_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_state_accepts_every_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fuzz_odd_json, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
