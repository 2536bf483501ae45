/*
 * test-agent.c - the agent turn.
 *
 *   test-agent          unit: the loop logic on a scripted fake backend (routing, undo,
 *                       compound steps, validation, templates, narration, limits, cancel)
 *   test-agent --model  the same agent on real tiny models: the permanent prefix is prefilled
 *                       once, grammar-forced calls execute, cancellation mid-decode
 */
#include "agent.h"
#include "fake_backend.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#define CAMERA_SPEC PIPIT_SOURCE_DIR "/tools/camera.json"

static struct pipit_toolset *camera_tools(void) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(CAMERA_SPEC, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

struct fixture {
    struct pipit_toolset *ts;
    struct fake_backend fake;
    struct pipit_agent *agent;
};

static void setup_with(struct fixture *fx, const struct pipit_agent_params *params) {
    memset(fx, 0, sizeof(*fx));
    fx->ts = camera_tools();
    struct pipit_error err;
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
}

static void teardown_fx(struct fixture *fx) {
    pipit_agent_free(fx->agent);
    pipit_toolset_free(fx->ts);
}

static void script(struct fixture *fx, int n, const char *const *outputs) {
    for (int i = 0; i < n; i++) {
        fx->fake.script[fx->fake.n_script++] = outputs[i];
    }
}

static struct pipit_turn *turn(struct fixture *fx, const char *utterance) {
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(fx->agent, utterance, &t), PIPIT_OK);
    assert_non_null(t);
    assert_non_null(t->sentence);
    return t;
}

/* A state key as JSON text, from the agent's device. */
static void state_key(struct fixture *fx, const char *key, char *buf, size_t size) {
    char *s = pipit_agent_state_json(fx->agent);
    json_t *j = json_loads(s, 0, NULL);
    char *v = json_dumps(json_object_get(j, key), JSON_ENCODE_ANY);
    snprintf(buf, size, "%s", v != NULL ? v : "?");
    free(v);
    json_decref(j);
    pipit_free(s);
}

static void assert_state(struct fixture *fx, const char *key, const char *want) {
    char got[128];
    state_key(fx, key, got, sizeof(got));
    if (strcmp(got, want) != 0) {
        fail_msg("state %s = %s, want %s", key, got, want);
    }
}

/* ============================================================================ unit */

static void test_single_call_and_template(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>set_zoom(level=2)"};
    script(&fx, 1, out);
    struct pipit_turn *t = turn(&fx, "zoom in to 2x");
    assert_int_equal(t->model_calls, 1);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_zoom");
    assert_true(t->calls[0].executed && t->calls[0].ok);
    assert_string_equal(t->sentence, "Zoom set to 2x.");
    assert_state(&fx, "zoom", "2.0");
    /* the step's prompt: state line, utterance, assistant header */
    assert_string_equal(fx.fake.prompts[0],
                        "State: zoom=1 flash=off facing=back recording=no timer=0 mode=auto\n"
                        "User: zoom in to 2x\nAssistant: ");
    assert_non_null(fx.fake.params[0].grammar);
    assert_true(fx.fake.params[0].lazy);
    assert_string_equal(fx.fake.params[0].trigger, "<call>");
    /* the permanent prefix is prefilled on the first turn only */
    assert_true(t->permanent_prefill_tokens > 0);
    pipit_turn_free(t);
    const char *out2[] = {"<call>take_photo()"};
    script(&fx, 1, out2);
    t = turn(&fx, "take a picture");
    assert_int_equal(t->permanent_prefill_tokens, 0);
    assert_state(&fx, "photos_taken", "1");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_undo_reverts_without_model(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>set_zoom(level=2)", "<call>set_flash(mode=\"on\")"};
    script(&fx, 2, out);
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    pipit_turn_free(turn(&fx, "flash on"));
    assert_state(&fx, "flash", "\"on\"");
    struct pipit_turn *t = turn(&fx, "never mind");
    assert_int_equal(t->model_calls, 0);
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_non_null(strstr(t->sentence, "flash is back to off"));
    assert_state(&fx, "flash", "\"off\"");
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    t = turn(&fx, "undo");
    assert_int_equal(t->model_calls, 0);
    assert_non_null(strstr(t->sentence, "zoom is back to 1"));
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "put it back");
    assert_string_equal(t->sentence, "There's nothing to undo.");
    pipit_turn_free(t);
    /* an action that cannot be undone says so */
    const char *out3[] = {"<call>take_photo()"};
    script(&fx, 1, out3);
    pipit_turn_free(turn(&fx, "take a photo"));
    t = turn(&fx, "undo that");
    assert_non_null(strstr(t->sentence, "can't be undone"));
    assert_state(&fx, "photos_taken", "1");
    pipit_turn_free(t);
    assert_int_equal(fx.fake.n_steps, 3); /* undo never called the model */
    teardown_fx(&fx);
}

static void test_compound_runs_two_steps(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>adjust_zoom(direction=\"in\")", "<call>set_flash(mode=\"on\")"};
    script(&fx, 2, out);
    struct pipit_turn *t = turn(&fx, "zoom in and turn on the flash");
    assert_true(t->flags & PIPIT_TURN_COMPOUND);
    assert_int_equal(t->model_calls, 2);
    assert_int_equal(t->n_calls, 2);
    assert_true(t->calls[0].ok && t->calls[1].ok);
    assert_state(&fx, "zoom", "2.0");
    assert_state(&fx, "flash", "\"on\"");
    assert_non_null(strstr(fx.fake.prompts[0], "User: zoom in\n"));
    assert_non_null(strstr(fx.fake.prompts[1], "User: turn on the flash\n"));
    /* the second step sees the state the first one left */
    assert_non_null(strstr(fx.fake.prompts[1], "State: zoom=2 "));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_breaker_stops_at_two(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device_init_json = "{\"recording\": true}";
    struct fixture fx;
    setup_with(&fx, &p);
    const char *out[] = {"<call>set_flash(mode=\"on\")", "<call>set_flash(mode=\"on\")",
                         "<call>set_flash(mode=\"on\")"};
    script(&fx, 3, out);
    struct pipit_turn *t =
        turn(&fx, "turn on the flash and turn on the flash and turn on the flash");
    assert_true(t->flags & PIPIT_TURN_BREAKER);
    assert_int_equal(t->model_calls, 2);
    assert_int_equal(t->n_calls, 2);
    assert_string_equal(t->calls[1].code, "flash_unavailable_while_recording");
    assert_non_null(strstr(t->sentence, "I'll stop trying"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_step_cap_and_budget(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.max_steps = 2;
    struct fixture fx;
    setup_with(&fx, &p);
    const char *out[] = {"<call>set_grid(enabled=true)", "<call>set_timer(seconds=10)",
                         "<call>take_photo()"};
    script(&fx, 3, out);
    struct pipit_turn *t =
        turn(&fx, "turn on the grid and set the timer to 10 seconds and take a picture");
    assert_true(t->flags & PIPIT_TURN_STEP_CAP);
    assert_int_equal(t->model_calls, 2);
    assert_state(&fx, "photos_taken", "0");
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* a 60 ms budget and 40 ms steps: the second step runs out of time, the third never runs */
    p = pipit_agent_default_params();
    p.turn_budget_ms = 60;
    setup_with(&fx, &p);
    fx.fake.delay_ms = 40;
    script(&fx, 3, out);
    t = turn(&fx, "turn on the grid and set the timer to 10 seconds and take a picture");
    assert_true(t->flags & PIPIT_TURN_BUDGET);
    assert_true(t->model_calls <= 2);
    assert_state(&fx, "photos_taken", "0");
    assert_non_null(strstr(t->sentence, "ran out of time"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static int handler_calls = 0;

static enum pipit_status count_handler(const char *tool,
                                       const char *args_json,
                                       struct pipit_tool_output *out,
                                       void *user_data) {
    (void)tool;
    (void)args_json;
    (void)user_data;
    handler_calls++;
    out->ok = true;
    snprintf(out->data_json, sizeof(out->data_json), "{\"zoom\": 3}");
    return PIPIT_OK;
}

static void test_unknown_tool_and_bad_args_never_reach_handlers(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.grammar = false; /* unconstrained: the dispatcher is the last line */
    struct fixture fx;
    setup_with(&fx, &p);
    handler_calls = 0;
    assert_int_equal(pipit_agent_register_tool(fx.agent, "set_zoom", count_handler, NULL),
                     PIPIT_OK);
    assert_int_equal(pipit_agent_register_tool(fx.agent, "fly", count_handler, NULL),
                     PIPIT_ERR_UNKNOWN_TOOL);
    const char *out[] = {"<call>fly_to_the_moon(speed=3)", "<call>set_zoom(level=50)",
                         "<call>set_zoom(lvl=2)", "<call>set_zoom(level",
                         "<call>set_zoom(level=4)"};
    script(&fx, 5, out);
    struct pipit_turn *t = turn(&fx, "fly me to the moon");
    assert_int_equal(t->calls[0].status, PIPIT_ERR_UNKNOWN_TOOL);
    assert_false(t->calls[0].executed);
    assert_non_null(strstr(t->sentence, "no tool named fly_to_the_moon"));
    pipit_turn_free(t);
    t = turn(&fx, "zoom to 50");
    assert_int_equal(t->calls[0].status, PIPIT_ERR_INVALID_ARGS);
    assert_false(t->calls[0].executed);
    assert_non_null(strstr(t->calls[0].message, "maximum"));
    pipit_turn_free(t);
    t = turn(&fx, "zoom to 2");
    assert_int_equal(t->calls[0].status, PIPIT_ERR_INVALID_ARGS);
    pipit_turn_free(t);
    t = turn(&fx, "zoom to");
    assert_int_equal(t->calls[0].status, PIPIT_ERR_PARSE);
    assert_false(t->calls[0].executed);
    pipit_turn_free(t);
    assert_int_equal(handler_calls, 0);
    assert_state(&fx, "zoom", "1.0");
    /* a valid call goes to the custom handler, not the device */
    t = turn(&fx, "zoom to 4");
    assert_int_equal(handler_calls, 1);
    assert_true(t->calls[0].ok);
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_failure_sentences_name_the_reason(void **state) {
    (void)state;
    /* every camera constraint, through the whole turn: call, init, expected code */
    const struct {
        const char *init, *call, *code;
    } cases[] = {
        {"{}", "<call>set_zoom(level=0.5)", NULL},
        {"{\"facing\": \"front\"}", "<call>set_zoom(level=5)", "zoom_out_of_range"},
        {"{\"facing\": \"front\"}", "<call>set_flash(mode=\"on\")", "no_flash_on_front_camera"},
        {"{\"recording\": true}", "<call>set_flash(mode=\"on\")",
         "flash_unavailable_while_recording"},
        {"{\"recording\": true}", "<call>set_aspect_ratio(ratio=\"16:9\")", "busy_recording"},
        {"{\"recording\": true}", "<call>switch_camera(facing=\"front\")", "busy_recording"},
        {"{\"recording\": true}", "<call>set_jpeg_quality(quality=80)", "busy_recording"},
        {"{\"recording\": true}", "<call>record_video(action=\"start\")", "already_recording"},
        {"{}", "<call>record_video(action=\"stop\")", "not_recording"},
        {"{\"ae_af_locked\": true}", "<call>tap_to_focus(x=0.2, y=0.3)", "ae_af_locked"},
        {"{\"permission\": false}", "<call>take_photo()", "permission_denied"},
        {"{\"recording\": true}", "<call>take_photo()", NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pipit_agent_params p = pipit_agent_default_params();
        p.device_init_json = cases[i].init;
        struct fixture fx;
        setup_with(&fx, &p);
        script(&fx, 1, &cases[i].call);
        struct pipit_turn *t = turn(&fx, "do it");
        assert_int_equal(t->n_calls, 1);
        if (cases[i].code == NULL) {
            assert_true(t->calls[0].ok);
        } else {
            if (t->calls[0].ok || strcmp(t->calls[0].code, cases[i].code) != 0) {
                fail_msg("case %zu: code '%s', want %s", i, t->calls[0].code, cases[i].code);
            }
            /* the sentence is the template of that very reason, not the catch-all */
            int32_t idx = pipit_toolset_find(fx.ts, t->calls[0].tool);
            const char *tmpl = pipit_toolset_failure_template(fx.ts, (size_t)idx, cases[i].code);
            const char *brace = strchr(tmpl, '{');
            size_t fixed = brace != NULL ? (size_t)(brace - tmpl) : strlen(tmpl);
            assert_true(fixed > 0);
            assert_memory_equal(t->sentence, tmpl, fixed);
            assert_string_not_equal(
                tmpl, pipit_toolset_failure_template(fx.ts, (size_t)idx, "no_such_code_here"));
        }
        pipit_turn_free(t);
        teardown_fx(&fx);
    }
}

static void test_narration_is_caught(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"I've turned on the flash for you!", "Hello! I can help with photos.",
                         "Zoom set to 2x."};
    script(&fx, 3, out);
    struct pipit_turn *t = turn(&fx, "turn on the flash");
    assert_true(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    assert_int_equal(t->n_calls, 0);
    assert_non_null(strstr(t->sentence, "haven't changed anything"));
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    t = turn(&fx, "hi there");
    assert_false(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    assert_true(t->flags & PIPIT_TURN_PLAIN_TEXT);
    assert_string_equal(t->sentence, "Hello! I can help with photos.");
    pipit_turn_free(t);
    t = turn(&fx, "zoom to 2x");
    assert_true(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void *cancel_later(void *arg) {
    struct timespec ts = {0, 50 * 1000000};
    nanosleep(&ts, NULL);
    pipit_agent_cancel(arg);
    return NULL;
}

static void test_cancel_and_thermal(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    fx.fake.block_until_cancel = true;
    const char *out[] = {"<call>take_photo()", "<call>take_photo()"};
    script(&fx, 2, out);
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, fx.agent);
    struct pipit_turn *t = turn(&fx, "take a photo");
    pthread_join(th, NULL);
    assert_true(t->flags & PIPIT_TURN_CANCELLED);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "photos_taken", "0");
    pipit_turn_free(t);
    /* the agent stays usable */
    fx.fake.block_until_cancel = false;
    t = turn(&fx, "take a photo");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);

    /* thermal: critical pauses without a model call; severe shrinks the step */
    pipit_agent_set_thermal(fx.agent, PIPIT_THERMAL_CRITICAL);
    t = turn(&fx, "take a photo");
    assert_true(t->flags & PIPIT_TURN_PAUSED);
    assert_int_equal(t->model_calls, 0);
    pipit_turn_free(t);
    pipit_agent_set_thermal(fx.agent, PIPIT_THERMAL_SEVERE);
    const char *out2[] = {"<call>take_photo()"};
    script(&fx, 1, out2);
    int before = fx.fake.n_steps;
    pipit_turn_free(turn(&fx, "take a photo"));
    assert_int_equal(fx.fake.params[before].n_threads, 1);
    assert_int_equal(fx.fake.params[before].max_tokens, 96 / 4);
    teardown_fx(&fx);
}

static void test_cloud_unconfigured_and_json(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>process_with_cloud_llm(user_query_context=\"capital of France\", "
                         "reason_for_escalation=\"knowledge\")"};
    script(&fx, 1, out);
    struct pipit_turn *t = turn(&fx, "what's the capital of France?");
    assert_int_equal(t->cloud_requests, 0); /* nothing left the device */
    assert_false(t->calls[0].ok);
    assert_string_equal(t->calls[0].code, "cloud_not_configured");
    assert_non_null(strstr(t->sentence, "isn't configured"));
    char *j = pipit_turn_to_json(t);
    json_error_t jerr;
    json_t *o = json_loads(j, 0, &jerr);
    assert_non_null(o);
    assert_true(json_is_string(json_object_get(o, "sentence")));
    assert_true(json_is_array(json_object_get(o, "calls")));
    assert_true(json_is_object(json_object_get(o, "state")));
    assert_true(json_is_integer(
        json_object_get(json_object_get(o, "counters"), "permanent_prefill_tokens")));
    json_t *call = json_array_get(json_object_get(o, "calls"), 0);
    assert_string_equal(json_string_value(json_object_get(call, "tool")), "process_with_cloud_llm");
    assert_true(json_is_object(json_object_get(call, "args")));
    json_decref(o);
    pipit_free(j);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_cloud_configured_but_refused(void **state) {
    (void)state;
    /* a port that is bound but not listening: connections are refused, no race */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", (int)ntohs(addr.sin_port));
    struct pipit_cloud_params cp = pipit_cloud_default_params();
    cp.url = url;
    cp.retries = 0;
    struct pipit_cloud *cloud = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_cloud_init(&cp, &cloud, &err), PIPIT_OK);

    struct fixture fx;
    setup_with(&fx, NULL);
    pipit_agent_set_cloud(fx.agent, cloud);
    const char *out[] = {"<call>process_with_cloud_llm(user_query_context=\"write a poem\", "
                         "reason_for_escalation=\"creative\")"};
    script(&fx, 1, out);
    struct pipit_turn *t = turn(&fx, "write me a poem about cats");
    assert_int_equal(t->cloud_requests, 1);
    assert_false(t->calls[0].ok);
    assert_string_equal(t->calls[0].code, "cloud_error");
    assert_non_null(strstr(t->sentence, t->calls[0].message)); /* the real reason, via {error} */
    pipit_turn_free(t);
    teardown_fx(&fx);
    pipit_cloud_free(cloud);
    close(fd);
}

static void test_bad_params(void **state) {
    (void)state;
    struct pipit_toolset *ts = camera_tools();
    struct fake_backend f;
    memset(&f, 0, sizeof(f));
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = "toaster";
    assert_int_equal(agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "toaster"));
    p = pipit_agent_default_params();
    p.device_init_json = "{\"zoom\": \"big\"}";
    assert_int_equal(agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "zoom"));
    p.device_init_json = "{not json";
    assert_int_equal(agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_ERR_JSON);
    p = pipit_agent_default_params();
    p.max_steps = 0;
    assert_int_equal(agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_null(a);
    pipit_agent_free(NULL);
    pipit_turn_free(NULL);
    pipit_toolset_free(ts);
}

/* ============================================================================ model */

static struct pipit_agent *
real_agent(struct pipit_model *m, struct pipit_toolset *ts, int syntax, bool lazy) {
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.syntax = syntax;
    p.lazy_grammar = lazy;
    p.turn_budget_ms = 0; /* no wall clock: machines here are shared */
    p.max_tokens = 128;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    if (pipit_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return a;
}

static void test_real_model_prefix_cached(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = camera_tools();
    /* grammar forced (not lazy): a random model still makes only valid calls */
    struct pipit_agent *a = real_agent(m, ts, PIPIT_SYNTAX_PIPIT, false);
    const char *utts[] = {"zoom in to 2x", "turn on the flash", "take a photo", "grid on",
                          "switch to the front camera"};
    int32_t n_perm = 0;
    for (size_t i = 0; i < sizeof(utts) / sizeof(utts[0]); i++) {
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(a, utts[i], &t), PIPIT_OK);
        assert_int_equal(t->model_calls, 1);
        assert_int_equal(t->n_calls, 1);
        if (t->calls[0].status != PIPIT_OK) {
            fail_msg("turn %zu: %s: %s (%s)", i, pipit_status_str(t->calls[0].status),
                     t->calls[0].message, t->model_text);
        }
        assert_true(t->calls[0].executed);
        if (i == 0) {
            assert_true(t->permanent_prefill_tokens > 100);
            n_perm = t->n_permanent;
        } else {
            assert_int_equal(t->permanent_prefill_tokens, 0); /* turns 2..N */
            assert_int_equal(t->n_permanent, n_perm);
        }
        assert_true(t->prefill_tokens - t->permanent_prefill_tokens < 64);
        pipit_turn_free(t);
    }
    pipit_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

static void test_real_model_hermes(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN);
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent *a = real_agent(m, ts, PIPIT_SYNTAX_HERMES, false);
    for (int i = 0; i < 3; i++) {
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(a, "set the white balance", &t), PIPIT_OK);
        assert_int_equal(t->n_calls, 1);
        if (t->calls[0].status != PIPIT_OK) {
            fail_msg("%s: %s (%s)", pipit_status_str(t->calls[0].status), t->calls[0].message,
                     t->model_text);
        }
        assert_non_null(strstr(t->model_text, "<tool_call>"));
        if (i > 0) {
            assert_int_equal(t->permanent_prefill_tokens, 0);
        }
        pipit_turn_free(t);
    }
    pipit_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

struct turn_thread {
    struct pipit_agent *agent;
    struct pipit_turn *turn;
    enum pipit_status status;
};

static void *run_turn(void *arg) {
    struct turn_thread *tt = arg;
    tt->status = pipit_agent_turn(tt->agent, "tell me a very long story", &tt->turn);
    return NULL;
}

static void test_real_model_cancel_mid_decode(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.grammar = false;
    p.turn_budget_ms = 0;
    p.max_tokens = 1500;
    p.n_ctx = 4096;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    bool cancelled = false;
    /* a random model may end its text early by chance: try a few times */
    for (int attempt = 0; attempt < 3 && !cancelled; attempt++) {
        struct turn_thread tt = {.agent = a};
        pthread_t th;
        pthread_create(&th, NULL, run_turn, &tt);
        struct timespec ts0 = {0, 150 * 1000000};
        nanosleep(&ts0, NULL);
        pipit_agent_cancel(a);
        pthread_join(th, NULL);
        assert_int_equal(tt.status, PIPIT_OK);
        cancelled = (tt.turn->flags & PIPIT_TURN_CANCELLED) != 0;
        if (cancelled) {
            assert_true(tt.turn->decode_tokens < 1500);
        }
        pipit_turn_free(tt.turn);
    }
    assert_true(cancelled);
    /* still usable afterwards, with the prefix intact */
    struct pipit_turn *t = NULL;
    p.max_tokens = 4;
    assert_int_equal(pipit_agent_turn(a, "hello", &t), PIPIT_OK);
    assert_false(t->flags & PIPIT_TURN_CANCELLED);
    assert_int_equal(t->permanent_prefill_tokens, 0);
    pipit_turn_free(t);
    pipit_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_single_call_and_template),
        cmocka_unit_test(test_undo_reverts_without_model),
        cmocka_unit_test(test_compound_runs_two_steps),
        cmocka_unit_test(test_breaker_stops_at_two),
        cmocka_unit_test(test_step_cap_and_budget),
        cmocka_unit_test(test_unknown_tool_and_bad_args_never_reach_handlers),
        cmocka_unit_test(test_failure_sentences_name_the_reason),
        cmocka_unit_test(test_narration_is_caught),
        cmocka_unit_test(test_cancel_and_thermal),
        cmocka_unit_test(test_cloud_unconfigured_and_json),
        cmocka_unit_test(test_cloud_configured_but_refused),
        cmocka_unit_test(test_bad_params),
    };
    const struct CMUnitTest model[] = {
        cmocka_unit_test(test_real_model_prefix_cached),
        cmocka_unit_test(test_real_model_hermes),
        cmocka_unit_test(test_real_model_cancel_mid_decode),
    };
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        return cmocka_run_group_tests(model, NULL, NULL);
    }
    return cmocka_run_group_tests(unit, NULL, NULL);
}
