/*
 * test-render.c - sentences from templates and real results (src/render.c).
 *
 *   test-render   unit: placeholders and value maps; refusals of calls validation refused,
 *                 with the limit from the argument's schema; the shipped packs' sentences,
 *                 filled from real results of the simulated camera and phone
 */
#include "device.h"
#include "devices/camera.h"
#include "devices/phone.h"
#include "render.h"
#include "testutil.h"
#include "toolspec.h"

#include <jansson.h>

#define CAMERA_PACK PIPIT_SOURCE_DIR "/tools/camera.json"
#define PHONE_PACK  PIPIT_SOURCE_DIR "/tools/phone.json"

static json_t *J(const char *text) {
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
    if (j == NULL) {
        fail_msg("bad test JSON %s: %s", text, e.text);
    }
    return j;
}

/* `tmpl` filled from args and data (JSON text, may be NULL) must read `want`. */
static void expect_render(const char *tmpl, const char *args, const char *data, const char *want) {
    json_t *a = args != NULL ? J(args) : NULL;
    json_t *d = data != NULL ? J(data) : NULL;
    char *got = render_template(tmpl, a, d, "the reason", "the_code");
    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        fail_msg("%s with %s / %s:\n  got:  %s\n  want: %s", tmpl, args ? args : "-",
                 data ? data : "-", got, want);
    }
    free(got);
    json_decref(a);
    json_decref(d);
}

/* ============================================================================ templates */

static void test_placeholders(void **state) {
    (void)state;
    expect_render("Zoomed to {level}x.", "{\"level\": 2}", NULL, "Zoomed to 2x.");
    expect_render("Zoomed to {level}x.", "{\"level\": 2.5}", NULL, "Zoomed to 2.5x.");
    expect_render("The grid is {enabled}.", "{\"enabled\": true}", NULL, "The grid is on.");
    expect_render("The grid is {enabled}.", "{\"enabled\": false}", NULL, "The grid is off.");
    /* args first, then data; unknown names print as is; literal braces */
    expect_render("{a} {b} {c}", "{\"a\": \"x\"}", "{\"a\": \"no\", \"b\": 3}", "x 3 c");
    expect_render("{{not}} {error} ({code})", NULL, NULL, "{not} the reason (the_code)");
    /* a failure's {code} is its reason; a success's is the argument of that name */
    expect_render("failed: {code}", "{\"code\": \"P12\"}", NULL, "failed: the_code");
    json_t *a = J("{\"code\": \"P12\"}");
    char *got = render_template("Recipe program {code} is running.", a, NULL, NULL, NULL);
    assert_string_equal(got, "Recipe program P12 is running.");
    free(got);
    json_decref(a);
    /* arrays read as a list; empty ones as "nothing"; null too */
    expect_render("Sent to {to}.", "{\"to\": [\"Ann\", \"Bob\", \"Cy\"]}", NULL,
                  "Sent to Ann, Bob and Cy.");
    expect_render("Sent to {to}.", "{\"to\": [\"Ann\"]}", NULL, "Sent to Ann.");
    expect_render("Sent to {to}.", "{\"to\": []}", NULL, "Sent to nothing.");
    expect_render("{x}", "{\"x\": null}", NULL, "nothing");
    /* a plural after a lone 1 is singular; 11, 0.1 and words that end in s anyway are not */
    expect_render("I found {n} files.", "{\"n\": 1}", NULL, "I found 1 file.");
    expect_render("I found {n} files.", "{\"n\": 2}", NULL, "I found 2 files.");
    expect_render("{n} entries, {m} matches", "{\"n\": 1, \"m\": 1}", NULL, "1 entry, 1 match");
    expect_render("{n} minutes, 1 class, 0.1 units, 11 boxes", "{\"n\": 1}", NULL,
                  "1 minute, 1 class, 0.1 units, 11 boxes");
    /* "a" before a vowel sound is "an"; "a unit", "a one-off", "a latte" stay */
    expect_render("A {d} will be ready.", "{\"d\": \"americano\"}", NULL,
                  "An americano will be ready.");
    expect_render("Making a {s} {d}.", "{\"s\": \"large\", \"d\": \"espresso\"}", NULL,
                  "Making a large espresso.");
    expect_render("Making a {d}.", "{\"d\": \"espresso\"}", NULL, "Making an espresso.");
    expect_render("a {x}, a {y}, a {z}", "{\"x\": \"unit\", \"y\": \"one-off\", \"z\": \"latte\"}",
                  NULL, "a unit, a one-off, a latte");
    /* a lowercase identifier reads as words; a name, a path or a code keeps its underscores */
    expect_render("Ticket {id} is {status}.", NULL,
                  "{\"id\": \"T-1\", \"status\": \"in_progress\"}", "Ticket T-1 is in progress.");
    expect_render("{a} {b} {c}", "{\"a\": \"Q3_report\", \"b\": \"/x/y_z.pdf\", \"c\": \"_x\"}",
                  NULL, "Q3_report /x/y_z.pdf _x");
}

static void test_value_maps(void **state) {
    (void)state;
    const char *timer = "The timer is {seconds:0=off|*=# seconds}.";
    expect_render(timer, "{\"seconds\": 0}", NULL, "The timer is off.");
    expect_render(timer, "{\"seconds\": 3}", NULL, "The timer is 3 seconds.");
    expect_render(timer, "{\"seconds\": 10}", NULL, "The timer is 10 seconds.");
    /* the first matching entry wins; no entry: the value itself */
    expect_render("{n:1=one|1=uno|2=two}", "{\"n\": 1}", NULL, "one");
    expect_render("{n:1=one|2=two}", "{\"n\": 5}", NULL, "5");
    expect_render("Recording {action:start=started|stop=stopped}.", "{\"action\": \"start\"}", NULL,
                  "Recording started.");
    expect_render("Recording {action:start=started|stop=stopped}.", "{\"action\": \"stop\"}", NULL,
                  "Recording stopped.");
    /* booleans answer to their text and to true/false */
    expect_render("{b:true=locked|false=unlocked}", "{\"b\": true}", NULL, "locked");
    expect_render("{b:on=shown|off=hidden}", "{\"b\": false}", NULL, "hidden");
    /* from data too, and over the items of a list */
    expect_render("{t:0=off}", NULL, "{\"t\": 0}", "off");
    expect_render("{l:0=off|*=#s}", "{\"l\": [0, 3, 10]}", NULL, "off, 3s and 10s");
    /* reals compare by their %g text */
    expect_render("{z:0.5=wide|*=#x}", "{\"z\": 0.5}", NULL, "wide");
    expect_render("{z:0.5=wide|*=#x}", "{\"z\": 2.0}", NULL, "2x");
}

/* A value map the loader refuses, and one it accepts. */
static void test_value_map_in_specs(void **state) {
    (void)state;
    char spec[1024];
#define SPEC_FMT                                                                  \
    "[{\"type\":\"function\",\"function\":{\"name\":\"t\",\"description\":\"d\"," \
    "\"parameters\":{\"type\":\"object\",\"properties\":{}}},"                    \
    "\"pipit\":{\"success\":\"%s\"}}]"
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    snprintf(spec, sizeof(spec), SPEC_FMT, "It is {x:0=off|*=# s}.");
    assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "ok", &ts, &err), PIPIT_OK);
    assert_string_equal(pipit_toolset_success_template(ts, 0), "It is {x:0=off|*=# s}.");
    pipit_toolset_free(ts);
    const char *bad[] = {"{x:}", "{x:0}", "{x:=off}", "{x:0=off|}", "{:0=off}", "{x y:0=a}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(spec, sizeof(spec), SPEC_FMT, bad[i]);
        ts = NULL;
        if (pipit_toolset_load_string(spec, strlen(spec), "bad", &ts, &err) != PIPIT_ERR_SPEC) {
            fail_msg("the loader accepts the template %s", bad[i]);
        }
        assert_null(ts);
        assert_non_null(strstr(err.text, "template"));
    }
}

/* ============================================================================ refusals */

/* Validate `args` for `tool` (must fail), render the refusal: its code and sentence. */
static void expect_refusal(const struct pipit_toolset *ts,
                           const char *tool,
                           const char *args,
                           const char *want_code,
                           const char *want) {
    struct pipit_arg_problem pr[4];
    size_t n = 0;
    enum pipit_status st = pipit_toolset_validate_args(ts, tool, args, strlen(args), pr, 4, &n);
    if (st != PIPIT_ERR_INVALID_ARGS || n == 0) {
        fail_msg("%s(%s) validates (%s)", tool, args, pipit_status_str(st));
    }
    int32_t idx = pipit_toolset_find(ts, tool);
    assert_true(idx >= 0);
    json_t *a = J(args);
    char code[64] = "x";
    char *got = render_refusal(ts, (size_t)idx, a, &pr[0], code, sizeof(code));
    assert_non_null(got);
    if (strcmp(code, want_code) != 0 || strcmp(got, want) != 0) {
        fail_msg("%s(%s):\n  got:  [%s] %s\n  want: [%s] %s", tool, args, code, got, want_code,
                 want);
    }
    free(got);
    json_decref(a);
}

static void test_refusals_name_the_limit(void **state) {
    (void)state;
    struct pipit_toolset *cam = test_load_tools(CAMERA_PACK);
    expect_refusal(cam, "set_zoom", "{\"level\": 50}", RENDER_OUT_OF_RANGE,
                   "I can't zoom to 50x: the zoom goes from 0.5x to 10x on the back camera.");
    expect_refusal(cam, "set_zoom", "{\"level\": 0.1}", RENDER_OUT_OF_RANGE,
                   "I can't zoom to 0.1x: the zoom goes from 0.5x to 10x on the back camera.");
    expect_refusal(cam, "set_zoom", "{\"level\": -3}", RENDER_OUT_OF_RANGE,
                   "I can't zoom to -3x: the zoom goes from 0.5x to 10x on the back camera.");
    expect_refusal(cam, "set_timer", "{\"seconds\": 7}", RENDER_NOT_ALLOWED,
                   "I can't set a 7-second timer: the timer can be off, 3, 5 or 10 seconds.");
    expect_refusal(cam, "set_exposure", "{\"ev\": 3}", RENDER_OUT_OF_RANGE,
                   "I can't set the exposure to 3 EV: it goes from -2 to +2 EV.");
    expect_refusal(cam, "set_jpeg_quality", "{\"quality\": 1000}", RENDER_OUT_OF_RANGE,
                   "I can't set the JPEG quality to 1000%: it goes from 50% to 100%.");
    expect_refusal(cam, "tap_to_focus", "{\"x\": 0.5, \"y\": 2}", RENDER_OUT_OF_RANGE,
                   "I can't focus there: a point goes from 0 to 1 across and down.");
    /* a string outside its enum (only an unconstrained model writes one) */
    expect_refusal(cam, "set_flash", "{\"mode\": \"sometimes\"}", RENDER_NOT_ALLOWED,
                   "The flash can be off, on or auto.");
    /* not a limit: the catch-all with the problem */
    expect_refusal(cam, "set_zoom", "{}", RENDER_INVALID_ARGUMENTS,
                   "I couldn't change the zoom: level: required argument is missing.");
    expect_refusal(cam, "set_zoom", "{\"level\": \"50\"}", RENDER_INVALID_ARGUMENTS,
                   "I couldn't change the zoom: level: expected a number, got string.");
    expect_refusal(cam, "set_timer", "{\"seconds\": 3.5}", RENDER_INVALID_ARGUMENTS,
                   "I couldn't set the timer: seconds: 3.5 is not an integer.");
    expect_refusal(cam, "set_zoom", "{\"level\": 2, \"speed\": 1}", RENDER_INVALID_ARGUMENTS,
                   "I couldn't change the zoom: speed: unknown argument \"speed\".");
    /* a tool without a refusal template: its catch-all, with the limit in {error} */
    expect_refusal(cam, "set_white_balance", "{\"mode\": \"pink\"}", RENDER_NOT_ALLOWED,
                   "I couldn't set the white balance: mode must be one of auto, daylight, "
                   "cloudy, tungsten or fluorescent.");
    pipit_toolset_free(cam);

    struct pipit_toolset *ph = test_load_tools(PHONE_PACK);
    expect_refusal(ph, "set_timer", "{\"minutes\": 5000}", RENDER_OUT_OF_RANGE,
                   "I can't set a timer for 5000 minutes: a timer can be 1 to 1440 minutes.");
    expect_refusal(ph, "set_timer", "{\"minutes\": 0}", RENDER_OUT_OF_RANGE,
                   "I can't set a timer for 0 minutes: a timer can be 1 to 1440 minutes.");
    pipit_toolset_free(ph);

    /* any pack: {min} {max} {allowed} {argument}, nested paths, a one-sided range, the
     * default failure template */
    const char *spec =
        "[{\"type\":\"function\",\"function\":{\"name\":\"t\",\"description\":\"d\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{"
        "\"n\":{\"type\":\"integer\",\"minimum\":1},"
        "\"speed\":{\"type\":\"number\",\"enum\":[0.5,1,2]},"
        "\"o\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"number\",\"minimum\":-1,"
        "\"maximum\":1}}},"
        "\"l\":{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"maximum\":9}}}}},"
        "\"pipit\":{\"failure\":{\"out_of_range\":\"{argument} from {min} to {max}\","
        "\"not_allowed\":\"{argument}: {allowed:1=normal|*=#x}\",\"*\":\"no: {error}\"}}},"
        "{\"type\":\"function\",\"function\":{\"name\":\"u\",\"description\":\"d\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{"
        "\"n\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":3},"
        "\"light_level\":{\"type\":\"number\",\"minimum\":0.5},"
        "\"k\":{\"type\":\"string\",\"enum\":[\"living_room\",\"hall\"]},"
        "\"s\":{\"type\":\"string\",\"maxLength\":2}}}}}]";
    struct pipit_toolset *ts = test_tools_from(spec, "test");
    expect_refusal(ts, "t", "{\"n\": 0}", RENDER_OUT_OF_RANGE, "n from 1 to max");
    expect_refusal(ts, "t", "{\"speed\": 3}", RENDER_NOT_ALLOWED, "speed: 0.5x, normal or 2x");
    expect_refusal(ts, "t", "{\"o\": {\"v\": 1.5}}", RENDER_OUT_OF_RANGE, "v from -1 to 1");
    expect_refusal(ts, "t", "{\"l\": [1, 20]}", RENDER_OUT_OF_RANGE, "l from min to 9");
    /* without a template for the code, {error} names the limit in words */
    expect_refusal(ts, "u", "{\"n\": 4}", RENDER_OUT_OF_RANGE,
                   "I couldn't do that: n must be between 1 and 3.");
    expect_refusal(ts, "u", "{\"light_level\": 0.25}", RENDER_OUT_OF_RANGE,
                   "I couldn't do that: light level must be at least 0.5.");
    expect_refusal(ts, "u", "{\"k\": \"attic\"}", RENDER_NOT_ALLOWED,
                   "I couldn't do that: k must be one of living room or hall.");
    /* any other problem: validation's own words */
    expect_refusal(ts, "u", "{\"s\": \"abc\"}", RENDER_INVALID_ARGUMENTS,
                   "I couldn't do that: s: is 3 characters long, above the maximum 2.");
    /* no problem, no tool: still a sentence, never a crash */
    char code[32];
    char *s = render_refusal(ts, 0, NULL, NULL, code, sizeof(code));
    assert_non_null(s);
    assert_string_equal(code, RENDER_INVALID_ARGUMENTS);
    free(s);
    s = render_refusal(ts, 99, NULL, NULL, NULL, 0);
    assert_non_null(s);
    free(s);
    pipit_toolset_free(ts);
}

/* ============================================================================ shipped sentences */

/* Call `tool` on `dev` with `args` (it must succeed) and render the pack's success template
 * from the real result: it must read `want`. */
static void expect_success(struct device *dev,
                           const struct pipit_toolset *ts,
                           const char *tool,
                           const char *args,
                           const char *want) {
    json_t *a = J(args);
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, a, &r);
    if (st != PIPIT_OK || !r.ok) {
        fail_msg("%s %s: %s: %s", tool, args, r.code, r.message);
    }
    int32_t idx = pipit_toolset_find(ts, tool);
    assert_true(idx >= 0);
    char *got =
        render_template(pipit_toolset_success_template(ts, (size_t)idx), a, r.data, NULL, NULL);
    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        fail_msg("%s %s:\n  got:  %s\n  want: %s", tool, args, got, want);
    }
    free(got);
    device_result_clear(&r);
    json_decref(a);
}

/* Call `tool` (it must fail) and render the pack's failure template for the device's reason. */
static void expect_failure(struct device *dev,
                           const struct pipit_toolset *ts,
                           const char *tool,
                           const char *args,
                           const char *want) {
    json_t *a = J(args);
    struct device_result r = {0};
    dev->ops->call(dev->self, tool, a, &r);
    if (r.ok) {
        fail_msg("%s %s succeeded", tool, args);
    }
    int32_t idx = pipit_toolset_find(ts, tool);
    assert_true(idx >= 0);
    char *got = render_template(pipit_toolset_failure_template(ts, (size_t)idx, r.code), a, NULL,
                                r.message, r.code);
    assert_non_null(got);
    if (strcmp(got, want) != 0) {
        fail_msg("%s %s [%s]:\n  got:  %s\n  want: %s", tool, args, r.code, got, want);
    }
    free(got);
    device_result_clear(&r);
    json_decref(a);
}

static void test_camera_sentences(void **state) {
    (void)state;
    struct pipit_toolset *ts = test_load_tools(CAMERA_PACK);
    struct device dev;
    assert_int_equal(camera_device_new(ts, &dev, NULL), PIPIT_OK);
    expect_success(&dev, ts, "set_flash", "{\"mode\": \"on\"}", "The flash is on.");
    expect_success(&dev, ts, "set_flash", "{\"mode\": \"auto\"}", "The flash is on auto.");
    expect_success(&dev, ts, "set_flash", "{\"mode\": \"off\"}", "The flash is off.");
    expect_success(&dev, ts, "record_video", "{\"action\": \"start\"}", "Recording started.");
    expect_success(&dev, ts, "record_video", "{\"action\": \"stop\"}", "Recording stopped.");
    expect_success(&dev, ts, "set_timer", "{\"seconds\": 0}", "The timer is off.");
    expect_success(&dev, ts, "set_timer", "{\"seconds\": 3}", "The timer is 3 seconds.");
    expect_success(&dev, ts, "set_grid", "{\"enabled\": true}", "The grid is on.");
    expect_success(&dev, ts, "set_grid", "{\"enabled\": false}", "The grid is off.");
    expect_success(&dev, ts, "set_horizon_level", "{\"enabled\": true}",
                   "The horizon level is on.");
    expect_success(&dev, ts, "set_zoom", "{\"level\": 2}", "The zoom is 2x.");
    expect_success(&dev, ts, "adjust_zoom", "{\"direction\": \"in\"}", "Zoomed in to 3x.");
    expect_success(&dev, ts, "set_exposure", "{\"ev\": -1}", "The exposure is -1 EV.");
    expect_success(&dev, ts, "set_ae_af_lock", "{\"locked\": true}",
                   "Exposure and focus are locked.");
    expect_success(&dev, ts, "set_ae_af_lock", "{\"locked\": false}",
                   "Exposure and focus are unlocked.");
    expect_success(&dev, ts, "set_white_balance", "{\"mode\": \"cloudy\"}",
                   "The white balance is cloudy.");
    expect_success(&dev, ts, "set_aspect_ratio", "{\"ratio\": \"full\"}",
                   "The aspect ratio is full screen.");
    expect_success(&dev, ts, "set_aspect_ratio", "{\"ratio\": \"16:9\"}",
                   "The aspect ratio is 16:9.");
    expect_success(&dev, ts, "set_scene_mode", "{\"mode\": \"night\"}", "The scene mode is night.");
    expect_success(&dev, ts, "set_jpeg_quality", "{\"quality\": 90}", "The JPEG quality is 90%.");
    expect_success(&dev, ts, "take_photo", "{}", "Photo taken.");
    /* the device's own range reasons still name their limit */
    expect_success(&dev, ts, "switch_camera", "{\"facing\": \"front\"}",
                   "Switched to the front camera.");
    expect_failure(&dev, ts, "set_zoom", "{\"level\": 5}",
                   "I can't zoom to 5x: the front camera zooms from 1x to 3x.");
    expect_failure(&dev, ts, "set_flash", "{\"mode\": \"on\"}", "The front camera has no flash.");
    device_free(&dev);
    pipit_toolset_free(ts);
}

static void test_phone_sentences(void **state) {
    (void)state;
    struct pipit_toolset *ts = test_load_tools(PHONE_PACK);
    struct device dev;
    assert_int_equal(phone_device_new(ts, &dev, NULL), PIPIT_OK);
    expect_success(&dev, ts, "set_wifi", "{\"enabled\": false}", "Wi-Fi is off.");
    expect_success(&dev, ts, "set_bluetooth", "{\"enabled\": true}", "Bluetooth is on.");
    expect_success(&dev, ts, "set_airplane_mode", "{\"enabled\": true}", "Airplane mode is on.");
    expect_success(&dev, ts, "set_timer", "{\"minutes\": 10}", "Timer TM-1 is set for 10 minutes.");
    expect_success(&dev, ts, "set_timer", "{\"minutes\": 1}", "Timer TM-2 is set for 1 minute.");
    expect_success(&dev, ts, "navigate_to",
                   "{\"destination\": \"the airport\", \"mode\": \"transit\"}",
                   "Navigating to the airport by public transport.");
    device_free(&dev);
    pipit_toolset_free(ts);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placeholders),       cmocka_unit_test(test_value_maps),
        cmocka_unit_test(test_value_map_in_specs), cmocka_unit_test(test_refusals_name_the_limit),
        cmocka_unit_test(test_camera_sentences),   cmocka_unit_test(test_phone_sentences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
