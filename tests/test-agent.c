/*
 * test-agent.c - the agent turn.
 *
 *   test-agent          unit: the loop logic on a scripted fake backend (routing, undo,
 *                       compound steps, validation, templates, narration, limits, cancel)
 *   test-agent --model  the same agent on real tiny models: the permanent prefix is prefilled
 *                       once, grammar-forced calls execute, cancellation mid-decode
 */
#include "agent.h"
#include "agent_time.h"
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
    struct pipit_device *device; /* the agent's (NULL: none) */
    struct fake_backend fake;
    struct pipit_agent *agent;
    char calls[FAKE_MAX_STEPS][128]; /* outputs script_call() made */
};

/* An agent on the camera tools and a camera starting from `init` (NULL: defaults). */
static void
setup_dev(struct fixture *fx, const struct pipit_agent_params *params, const char *init) {
    memset(fx, 0, sizeof(*fx));
    fx->ts = camera_tools();
    fx->device = test_device("camera", fx->ts, init);
    struct pipit_error err;
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    p.device = fx->device;
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
}

static void setup_with(struct fixture *fx, const struct pipit_agent_params *params) {
    setup_dev(fx, params, NULL);
}

static void teardown_fx(struct fixture *fx) {
    test_agent_free(fx->agent);
    pipit_device_free(fx->device);
    pipit_toolset_free(fx->ts);
}

static void script(struct fixture *fx, int n, const char *const *outputs) {
    for (int i = 0; i < n; i++) {
        assert_true(fx->fake.n_script < FAKE_MAX_STEPS);
        fx->fake.script[fx->fake.n_script++] = outputs[i];
    }
}

/* Script the model's next output as the call `call` ("set_grid(enabled=true)"). */
static void script_call(struct fixture *fx, const char *call) {
    int i = fx->fake.n_script;
    assert_true(i < FAKE_MAX_STEPS);
    snprintf(fx->calls[i], sizeof(fx->calls[i]), "<call>%s", call);
    fx->fake.script[fx->fake.n_script++] = fx->calls[i];
}

static struct pipit_turn *turn(struct fixture *fx, const char *utterance) {
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(fx->agent, utterance, &t), PIPIT_OK);
    assert_non_null(t);
    assert_non_null(t->sentence);
    return t;
}

/* A turn whose model answers `model` (a call without "<call>"): its one call's arguments are
 * exactly `args`, and the turn has `flag` exactly when `flagged`. */
struct args_case {
    const char *say, *model, *args;
    bool flagged;
};

/* Run `cases` in order on `fx`, checking each against `flag` (left open for the caller). */
static void run_args_cases(struct fixture *fx,
                           const struct args_case *cases,
                           size_t n,
                           enum pipit_turn_flag flag) {
    for (size_t k = 0; k < n; k++) {
        script_call(fx, cases[k].model);
    }
    for (size_t k = 0; k < n; k++) {
        struct pipit_turn *t = turn(fx, cases[k].say);
        if (t->n_calls != 1 || strcmp(t->calls[0].args_json, cases[k].args) != 0 ||
            ((t->flags & flag) != 0) != cases[k].flagged) {
            fail_msg("\"%s\": %s, want %s", cases[k].say,
                     t->n_calls > 0 ? t->calls[0].args_json : "no call", cases[k].args);
        }
        pipit_turn_free(t);
    }
}

/* A segment, the model's call (without "<call>") and the one call the turn must make. */
struct tool_case {
    const char *say, *model, *tool, *args;
};

/* Each case in its own turn, its model output scripted right before it. */
static void run_tool_cases(struct fixture *fx, const struct tool_case *cases, size_t n) {
    for (size_t k = 0; k < n; k++) {
        fx->fake.next = fx->fake.n_script;
        script_call(fx, cases[k].model);
        struct pipit_turn *t = turn(fx, cases[k].say);
        if (t->n_calls != 1 || strcmp(t->calls[0].tool, cases[k].tool) != 0 ||
            strcmp(t->calls[0].args_json, cases[k].args) != 0) {
            fail_msg("\"%s\": %s %s", cases[k].say, t->n_calls > 0 ? t->calls[0].tool : "-",
                     t->n_calls > 0 ? t->calls[0].args_json : "");
        }
        pipit_turn_free(t);
    }
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
    assert_string_equal(t->sentence, "The zoom is 2x.");
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
    assert_true(t->model_ms == 0.0 && t->sample_ms == 0.0); /* a backend without an engine */
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
    assert_string_equal(t->sentence, "The flash is off again.");
    assert_state(&fx, "flash", "\"off\"");
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    t = turn(&fx, "undo");
    assert_int_equal(t->model_calls, 0);
    assert_string_equal(t->sentence, "The zoom is 1x again.");
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
    struct fixture fx;
    setup_dev(&fx, &p, "{\"recording\": true}");
    const char *out[] = {"<call>set_flash(mode=\"on\")", "<call>set_flash(mode=\"on\")",
                         "<call>set_flash(mode=\"on\")"};
    script(&fx, 3, out);
    struct pipit_turn *t =
        turn(&fx, "turn on the flash and turn on the flash and turn on the flash");
    assert_true(t->flags & PIPIT_TURN_BREAKER);
    assert_int_equal(t->model_calls, 2);
    assert_int_equal(t->n_calls, 2);
    assert_string_equal(t->calls[1].code, "flash_unavailable_while_recording");
    /* the failure's own sentence says why; the breaker says it stopped */
    assert_string_equal(t->sentence, "I can't change the flash while recording. I'll stop trying: "
                                     "it failed the same way twice.");
    assert_string_equal(t->calls[1].sentence, "I can't change the flash while recording.");
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

static char long_data[4096];

/* user_data: 0 = a 3 KB object through `data`, 1 = data_json filled to its last byte, 2 = not
 * JSON */
static enum pipit_status data_handler(const char *tool,
                                      const char *args_json,
                                      struct pipit_tool_output *out,
                                      void *user_data) {
    (void)tool;
    (void)args_json;
    int kind = *(const int *)user_data;
    out->ok = true;
    if (kind == 0) {
        int n = snprintf(long_data, sizeof(long_data), "{\"note\": \"");
        memset(long_data + n, 'x', 3000);
        snprintf(long_data + n + 3000, sizeof(long_data) - (size_t)n - 3000, "\", \"zoom\": 3}");
        out->data = long_data;
    } else if (kind == 1) {
        int n = snprintf(out->data_json, sizeof(out->data_json), "{\"note\": \"");
        memset(out->data_json + n, 'y', sizeof(out->data_json) - 1 - (size_t)n);
        out->data_json[sizeof(out->data_json) - 1] = '\0';
    } else {
        snprintf(out->data_json, sizeof(out->data_json), "zoom is 3");
    }
    return PIPIT_OK;
}

/* A handler's data is never cut into an empty success: long data goes through `data` whole;
 * data_json filled to its end, or data that is not an object, is a handler_error failure. */
static void test_handler_data_whole_or_failed(void **state) {
    (void)state;
    for (int kind = 0; kind < 3; kind++) {
        struct fixture fx;
        setup_with(&fx, NULL);
        assert_int_equal(pipit_agent_register_tool(fx.agent, "take_photo", data_handler, &kind),
                         PIPIT_OK);
        const char *out[] = {"<call>take_photo()"};
        script(&fx, 1, out);
        struct pipit_turn *t = turn(&fx, "take a photo");
        assert_int_equal(t->n_calls, 1);
        assert_true(t->calls[0].executed);
        if (kind == 0) {
            assert_true(t->calls[0].ok);
            json_t *d = json_loads(t->calls[0].data_json, 0, NULL);
            assert_non_null(d);
            assert_int_equal(strlen(json_string_value(json_object_get(d, "note"))), 3000);
            json_decref(d);
        } else {
            assert_false(t->calls[0].ok);
            assert_string_equal(t->calls[0].code, "handler_error");
            assert_non_null(strstr(t->calls[0].message, kind == 1 ? "may be cut" : "not a JSON"));
        }
        pipit_turn_free(t);
        teardown_fx(&fx);
    }
}

/* "None of these tools" (docs/grammar.md, docs/agent.md): the grammar's none() runs nothing
 * and the sentence says, in the harness's words, that this tool set cannot do it. */
static void test_none_of_these_tools(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    handler_calls = 0;
    assert_int_equal(pipit_agent_register_tool(fx.agent, "take_photo", count_handler, NULL),
                     PIPIT_OK);
    const char *out[] = {"<call>none()", "<call>none()"};
    script(&fx, 2, out);
    struct pipit_turn *t = turn(&fx, "the weather in Oslo");
    assert_int_equal(t->n_calls, 1);
    assert_int_equal(t->calls[0].status, PIPIT_OK);
    assert_false(t->calls[0].executed);
    assert_false(t->calls[0].ok);
    assert_string_equal(t->calls[0].code, "no_tool");
    assert_string_equal(
        t->sentence,
        "I can't do \"the weather in Oslo\": none of my tools does that, so I did nothing.");
    pipit_turn_free(t);
    /* a command verb: the sentence quotes the request from it on */
    t = turn(&fx, "please Take a drone photo!");
    assert_string_equal(
        t->sentence, "I can't take a drone photo: none of my tools does that, so I did nothing.");
    pipit_turn_free(t);
    assert_int_equal(handler_calls, 0);
    /* nothing was done, so there is nothing to undo */
    t = turn(&fx, "undo");
    assert_null(strstr(t->sentence, "again"));
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* just-in-time: stage 1 chose none( and no stage 2 runs */
    struct pipit_agent_params p = pipit_agent_default_params();
    p.tools_format = PIPIT_TOOLSPEC_JIT;
    setup_with(&fx, &p);
    const char *jit[] = {"<call>none("};
    script(&fx, 1, jit);
    t = turn(&fx, "order a pizza");
    assert_int_equal(fx.fake.n_steps, 1);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].code, "no_tool");
    assert_non_null(strstr(t->sentence, "none of my tools does that"));
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* an unconstrained decode naming a tool the set does not have: the same honest sentence */
    p = pipit_agent_default_params();
    p.grammar = false;
    setup_with(&fx, &p);
    const char *other[] = {"<call>call_contact(name=\"mom\")"};
    script(&fx, 1, other);
    t = turn(&fx, "call mom");
    assert_int_equal(t->calls[0].status, PIPIT_ERR_UNKNOWN_TOOL);
    assert_string_equal(t->calls[0].code, "unknown_tool");
    assert_false(t->calls[0].executed);
    assert_string_equal(t->sentence,
                        "I can't call mom: none of my tools does that, so I did nothing.");
    pipit_turn_free(t);
    teardown_fx(&fx);
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
    /* the harness's sentence, from the person's words */
    assert_string_equal(t->calls[0].code, "unknown_tool");
    assert_non_null(strstr(t->calls[0].message, "no tool named fly_to_the_moon"));
    assert_string_equal(t->sentence,
                        "I can't do \"fly me to the moon\": none of my tools does that, so I did "
                        "nothing.");
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
        struct fixture fx;
        setup_dev(&fx, &p, cases[i].init);
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
    struct pipit_agent_params p = pipit_agent_default_params();
    p.small_talk = false; /* the model's own words on a greeting are what is checked */
    setup_with(&fx, &p);
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
    /* a bare acknowledgement to a command claims what no tool did; to a question or a
     * statement it is only words. (An argumentless tool whose examples' words the command says
     * is called instead, agent_example_words_call(): "take a photo" -> "Okay." takes it.) */
    script(&fx, 4, (const char *const[]){"Okay.", "Okay.", "Sure!", "Okay."});
    t = turn(&fx, "take a photo");
    assert_false(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "take_photo");
    pipit_turn_free(t);
    t = turn(&fx, "set the zoom level for me");
    assert_true(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    assert_non_null(strstr(t->sentence, "haven't changed anything"));
    pipit_turn_free(t);
    t = turn(&fx, "can you take a photo?");
    assert_false(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    pipit_turn_free(t);
    t = turn(&fx, "the light is lovely today");
    assert_false(t->flags & PIPIT_TURN_NARRATION_CAUGHT);
    assert_string_equal(t->sentence, "Okay.");
    pipit_turn_free(t);
    /* pieces of a call in words are never shown: syntax, an argument's name, a stray quote */
    static const char *const garbled[] = {
        "The back camera is on hano\", reason_for_escalation=\"photography advice\")",
        "try set_zoom maybe", "It is \"fine"};
    script(&fx, 4,
           (const char *const[]){garbled[0], garbled[1], garbled[2], "It's a \"nice\" one."});
    for (size_t k = 0; k < 3; k++) {
        t = turn(&fx, "does the camera have HDR");
        assert_true(t->flags & PIPIT_TURN_GARBLED);
        assert_string_equal(t->sentence, "Sorry, I didn't understand that, so I did nothing.");
        pipit_turn_free(t);
    }
    t = turn(&fx, "does the camera have HDR"); /* balanced quotes are words */
    assert_false(t->flags & PIPIT_TURN_GARBLED);
    assert_string_equal(t->sentence, "It's a \"nice\" one.");
    pipit_turn_free(t);
    /* a social formula is no answer to a question or a request; to small talk it is */
    script(&fx, 3, (const char *const[]){"Glad it works.", "You're welcome.", "Glad it works!"});
    t = turn(&fx, "how do I hold it steady?");
    assert_true(t->flags & PIPIT_TURN_OFF_TOPIC);
    assert_string_equal(t->sentence, "Sorry, I can't answer that here.");
    pipit_turn_free(t);
    t = turn(&fx, "make a panorama");
    assert_true(t->flags & PIPIT_TURN_OFF_TOPIC);
    assert_string_equal(t->sentence, "Sorry, I can't do that.");
    pipit_turn_free(t);
    t = turn(&fx, "that worked great");
    assert_false(t->flags & PIPIT_TURN_OFF_TOPIC);
    assert_string_equal(t->sentence, "Glad it works!");
    pipit_turn_free(t);
    /* nor is a bare "Okay." */
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "is it ready yet?");
    assert_true(t->flags & PIPIT_TURN_OFF_TOPIC);
    assert_string_equal(t->sentence, "Sorry, I can't answer that here.");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* ============================================================================ truth */

/* State questions are answered from the state: no model call, no tool call. */
static void test_state_questions_answered_from_state(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    struct fixture fx;
    setup_dev(&fx, &p, "{\"flash\": \"on\", \"zoom\": 4}");
    static const char *const QA[][2] = {
        {"is the flash on?", "The flash is on."},
        {"what's the zoom at?", "The zoom is 4x."},
        {"what zoom am I at", "The zoom is 4x."},
        {"is it recording?", "It isn't recording."},
        {"which camera is on?", "The back camera is active."},
        {"is the timer set?", "The timer is off."},
        {"Is the flash on right now?", "The flash is on."},
        {"hey, what's the white balance set to?", "The white balance is auto."},
        {"is the flash on and is the grid off?", "The flash is on. The grid is off."},
        {"what's the flash and the zoom?", "The flash is on. The zoom is 4x."},
        {"how many photos have I taken", "You've taken no photos."},
        /* one question among words that ask for nothing */
        {"is the flash off? don't want to blind anyone", "The flash is on."},
        {"the kids are asleep, is the flash on? it's so dark", "The flash is on."},
        /* a few words and a question mark, a command verb among them ("zoom") */
        {"zoom?", "The zoom is 4x."},
        {"grid on?", "The grid is off."},
    };
    for (size_t i = 0; i < sizeof(QA) / sizeof(QA[0]); i++) {
        struct pipit_turn *t = turn(&fx, QA[i][0]);
        if (strcmp(t->sentence, QA[i][1]) != 0) {
            fail_msg("\"%s\" -> \"%s\", want \"%s\"", QA[i][0], t->sentence, QA[i][1]);
        }
        assert_int_equal(t->model_calls, 0);
        assert_int_equal(t->n_calls, 0);
        assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
        char *j = pipit_turn_to_json(t);
        assert_non_null(strstr(j, "\"state_answer\""));
        pipit_free(j);
        pipit_turn_free(t);
    }
    assert_int_equal(fx.fake.n_steps, 0);
    /* the answer follows the state, never a model's memory of it */
    const char *out[] = {"<call>set_zoom(level=2)", "<call>set_timer(seconds=3)"};
    script(&fx, 2, out);
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    pipit_turn_free(turn(&fx, "3 second timer"));
    struct pipit_turn *t = turn(&fx, "what's the zoom?");
    assert_string_equal(t->sentence, "The zoom is 2x.");
    pipit_turn_free(t);
    t = turn(&fx, "is the timer set?");
    assert_string_equal(t->sentence, "The timer is 3 seconds.");
    pipit_turn_free(t);
    /* a command and a question: the question's step needs no model */
    const char *out2[] = {"<call>adjust_zoom(direction=\"in\")"};
    script(&fx, 1, out2);
    t = turn(&fx, "zoom in, is the flash on?");
    assert_int_equal(t->model_calls, 1);
    assert_int_equal(t->n_steps, 2);
    assert_state(&fx, "zoom", "3.0");
    assert_non_null(strstr(t->sentence, "The flash is on."));
    pipit_turn_free(t);
    /* ... in either order */
    script(&fx, 1, out2);
    t = turn(&fx, "is the flash on? zoom in");
    assert_int_equal(t->model_calls, 1);
    assert_state(&fx, "zoom", "4.0");
    assert_non_null(strstr(t->sentence, "The flash is on."));
    pipit_turn_free(t);
    /* ... but not beside a request: "turn it off" names the tools' things */
    const char *out3[] = {"<call>set_flash(mode=\"off\")"};
    script(&fx, 1, out3);
    t = turn(&fx, "is the flash on? if so turn it off");
    assert_int_equal(t->model_calls, 1);
    assert_false(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    /* questions that are not about the state go to the model */
    static const char *const NOT_STATE[] = {
        "what's a good zoom for portraits?",
        "what is exposure",
        "how does the timer work?",
        "what's the best shutter speed for waterfalls?",
        "and how long should the exposure be?",
    };
    for (size_t i = 0; i < sizeof(NOT_STATE) / sizeof(NOT_STATE[0]); i++) {
        const char *o[] = {"Sure."};
        script(&fx, 1, o);
        t = turn(&fx, NOT_STATE[i]);
        if (t->model_calls != 1 || (t->flags & PIPIT_TURN_STATE_ANSWER) != 0) {
            fail_msg("\"%s\" was answered from the state", NOT_STATE[i]);
        }
        pipit_turn_free(t);
    }
    /* "what can you do?" is about the tools, not the state: the harness lists them */
    t = turn(&fx, "what can you do?");
    assert_false(t->flags & PIPIT_TURN_STATE_ANSWER);
    assert_true(t->flags & PIPIT_TURN_SMALL_TALK);
    assert_int_equal(t->model_calls, 0);
    assert_non_null(strstr(t->sentence, "zoom"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The second line: a plain-text claim the state contradicts is replaced by the truth. */
static void test_state_claims_are_corrected(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    struct fixture fx;
    setup_dev(&fx, &p, "{\"flash\": \"on\"}");
    const char *out[] = {"The flash is off.", "The flash is on.", "Sure thing. The zoom is 3x.",
                         "It's recording.", "The front camera is active."};
    script(&fx, 5, out);
    /* not question forms the router answers: the model speaks, the harness checks */
    struct pipit_turn *t = turn(&fx, "flash status, tell me");
    assert_int_equal(t->model_calls, 1);
    assert_string_equal(t->sentence, "The flash is on.");
    assert_true(t->flags & PIPIT_TURN_STATE_CORRECTED);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "flash", "\"on\"");
    pipit_turn_free(t);
    t = turn(&fx, "flash status, tell me");
    assert_string_equal(t->sentence, "The flash is on."); /* true: untouched */
    assert_false(t->flags & PIPIT_TURN_STATE_CORRECTED);
    pipit_turn_free(t);
    t = turn(&fx, "tell me about the zoom");
    assert_string_equal(t->sentence, "Sure thing. The zoom is 1x.");
    pipit_turn_free(t);
    t = turn(&fx, "tell me about the video");
    assert_string_equal(t->sentence, "It isn't recording.");
    pipit_turn_free(t);
    t = turn(&fx, "tell me about the lens");
    assert_string_equal(t->sentence, "The back camera is active.");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The same guarantees on the phone pack, with whatever its state holds. */
/* An agent on the phone tools (params NULL: the defaults) and a phone starting from `init`
 * (NULL: its defaults). */
static void
setup_phone(struct fixture *fx, const struct pipit_agent_params *params, const char *init) {
    memset(fx, 0, sizeof(*fx));
    fx->ts = test_load_tools(PIPIT_SOURCE_DIR "/tools/phone.json");
    fx->device = test_device("phone", fx->ts, init);
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    p.device = fx->device;
    struct pipit_error err;
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
}

static void test_state_truth_on_phone(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, "{\"wifi\": true, \"bluetooth\": false}");
    struct pipit_turn *t = turn(&fx, "is wifi on?");
    assert_string_equal(t->sentence, "Wi-Fi is on.");
    assert_int_equal(t->model_calls, 0);
    pipit_turn_free(t);
    t = turn(&fx, "am I in airplane mode?");
    assert_string_equal(t->sentence, "Airplane mode is off.");
    pipit_turn_free(t);
    t = turn(&fx, "how many timers do I have?");
    assert_string_equal(t->sentence, "There are no timers.");
    pipit_turn_free(t);
    /* a ticket's status is a tool's job (get_ticket_status), not a state answer */
    const char *out[] = {"Bluetooth is on.", "<call>get_ticket_status(ticket_id=\"T-1\")"};
    script(&fx, 2, out);
    t = turn(&fx, "bluetooth, tell me");
    assert_string_equal(t->sentence, "Bluetooth is off.");
    assert_true(t->flags & PIPIT_TURN_STATE_CORRECTED);
    pipit_turn_free(t);
    t = turn(&fx, "what's the status of my ticket?");
    assert_int_equal(t->model_calls, 1);
    assert_false(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The model's own way to undo: the built-in undo tool reverts the log, never acts. */
static void test_model_undo_tool(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    /* the grammar offers it; the pipit-format prompt (a training contract) does not list it */
    const char *out[] = {"<call>set_flash(mode=\"on\")", "<call>undo()", "<call>undo()",
                         "<call>set_grid(enabled=true)", "<call>undo(steps=2)"};
    script(&fx, 5, out);
    pipit_turn_free(turn(&fx, "flash on"));
    assert_non_null(strstr(fx.fake.params[0].grammar, "undo"));
    assert_null(strstr(fx.fake.permanent, "undo"));
    struct pipit_turn *t = turn(&fx, "lose that one, friend"); /* words the router lacks */
    assert_false(t->flags & PIPIT_TURN_UNDO);                  /* the model, not the router */
    assert_int_equal(t->model_calls, 1);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "undo");
    assert_true(t->calls[0].executed && t->calls[0].ok);
    assert_string_equal(t->sentence, "The flash is off again.");
    assert_state(&fx, "flash", "\"off\"");
    assert_state(&fx, "photos_taken", "0");
    pipit_turn_free(t);
    t = turn(&fx, "lose that one too, friend");
    assert_string_equal(t->sentence, "There's nothing to undo.");
    assert_false(t->calls[0].ok);
    assert_string_equal(t->calls[0].code, "nothing_to_undo");
    pipit_turn_free(t);
    /* arguments it does not take: refused by validation like any call */
    pipit_turn_free(turn(&fx, "grid on"));
    t = turn(&fx, "lose those two, friend");
    assert_int_equal(t->calls[0].status, PIPIT_ERR_INVALID_ARGS);
    assert_false(t->calls[0].executed);
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* nothing done yet and no word of undoing: an undo could only say there is nothing to
     * undo, so the step is decoded again without it ("open it" as a first command) */
    setup_with(&fx, NULL);
    const char *first[] = {"<call>undo()", "<call>take_photo()"};
    script(&fx, 2, first);
    t = turn(&fx, "snap it");
    assert_int_equal(t->model_calls, 2);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "take_photo");
    assert_null(strstr(fx.fake.params[1].grammar, "undo"));
    pipit_turn_free(t);
    /* "back" of something that returned is no word of undoing: "the wifi's back, have another
     * go" (a treadmill's retry had undone the fan); the step is decoded again without undo */
    const char *returned[] = {"<call>set_flash(mode=\"on\")", "<call>undo()", "<call>take_photo()"};
    script(&fx, 3, returned);
    pipit_turn_free(turn(&fx, "flash on"));
    t = turn(&fx, "ok the wifi's back, have another go");
    assert_string_equal(t->calls[0].tool, "take_photo");
    pipit_turn_free(t);
    assert_state(&fx, "flash", "\"on\"");
    teardown_fx(&fx);

    /* the segment names an earlier action and not the newest: that one is reverted, alone;
     * naming the newest or nothing takes the newest */
    setup_with(&fx, NULL);
    const char *named[] = {"<call>set_flash(mode=\"on\")", "<call>set_zoom(level=3)",
                           "<call>undo()", "<call>undo()"};
    script(&fx, 4, named);
    pipit_turn_free(turn(&fx, "flash on"));
    pipit_turn_free(turn(&fx, "zoom to 3x"));
    t = turn(&fx, "ugh, lose the flash one, friend");
    assert_false(t->flags & PIPIT_TURN_UNDO); /* the model, not the router */
    assert_int_equal(t->model_calls, 1);
    assert_string_equal(t->calls[0].tool, "undo");
    assert_true(t->calls[0].ok);
    assert_string_equal(t->sentence, "The flash is off again.");
    assert_string_equal(t->calls[0].sentence, "The flash is off again.");
    assert_state(&fx, "flash", "\"off\"");
    assert_state(&fx, "zoom", "3.0");
    pipit_turn_free(t);
    t = turn(&fx, "ugh, lose that one, friend");
    assert_string_equal(t->sentence, "The zoom is 1x again.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
    /* a value word of an earlier action is no name of it in a whole sentence: "roll that back"
     * after the back camera and then the quality (camera long session 104) */
    setup_with(&fx, NULL);
    const char *back[] = {"<call>switch_camera(facing=\"front\")",
                          "<call>switch_camera(facing=\"back\")",
                          "<call>set_jpeg_quality(quality=70)", "<call>undo()"};
    script(&fx, 4, back);
    pipit_turn_free(turn(&fx, "front camera"));
    pipit_turn_free(turn(&fx, "rear camera"));
    pipit_turn_free(turn(&fx, "jpeg quality 70"));
    t = turn(&fx, "nah, roll that back, i want them crisp");
    assert_state(&fx, "jpeg_quality", "95");
    assert_state(&fx, "facing", "\"back\"");
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* Hermes syntax */
    struct pipit_agent_params p = pipit_agent_default_params();
    p.syntax = PIPIT_SYNTAX_HERMES;
    setup_with(&fx, &p);
    const char *h[] = {"<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": {\"level\": 3}}\n"
                       "</tool_call>",
                       "<tool_call>\n{\"name\": \"undo\", \"arguments\": {}}\n</tool_call>"};
    script(&fx, 2, h);
    pipit_turn_free(turn(&fx, "zoom to 3x"));
    assert_state(&fx, "zoom", "3.0");
    t = turn(&fx, "lose that one, friend");
    assert_string_equal(t->sentence, "The zoom is 1x again.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static int own_undo_calls = 0;

static enum pipit_status
own_undo(const char *tool, const char *args_json, struct pipit_tool_output *out, void *user_data) {
    (void)tool;
    (void)args_json;
    (void)user_data;
    own_undo_calls++;
    out->ok = true;
    snprintf(out->data_json, sizeof(out->data_json), "{}");
    return PIPIT_OK;
}

/* A pack with its own tool named undo keeps it: no built-in is added. */
static void test_pack_undo_tool_wins(void **state) {
    (void)state;
    const char *spec =
        "[{\"type\": \"function\", \"function\": {\"name\": \"undo\", \"description\": \"Undo "
        "in the app\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}},"
        "{\"type\": \"function\", \"function\": {\"name\": \"set_zoom\", \"description\": "
        "\"Zoom\", \"parameters\": {\"type\": \"object\", \"properties\": {\"level\": "
        "{\"type\": \"number\"}}, \"required\": [\"level\"]}}, \"pipit\": {\"undo\": "
        "{\"keys\": [\"zoom\"]}}}]";
    struct fixture fx;
    memset(&fx, 0, sizeof(fx));
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "own.json", &fx.ts, &err),
                     PIPIT_OK);
    assert_int_equal(test_agent_new_with_backend(NULL, fx.ts, NULL, fake_backend_wrap(&fx.fake),
                                                 &fx.agent, &err),
                     PIPIT_OK);
    assert_int_equal(pipit_agent_register_tool(fx.agent, "undo", own_undo, NULL), PIPIT_OK);
    const char *out[] = {"<call>set_zoom(level=2)", "<call>undo()"};
    script(&fx, 2, out);
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    own_undo_calls = 0;
    struct pipit_turn *t = turn(&fx, "app undo please, friend");
    assert_int_equal(own_undo_calls, 1);
    assert_state(&fx, "zoom", "2.0"); /* the agent's log was not touched */
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* More actions than the undo log keeps: "undo everything" reverts what it holds and says the
 * older changes stay; undo after that says it cannot go further back. */
static void test_undo_beyond_the_log(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.undo_slots = 2;
    struct fixture fx;
    setup_with(&fx, &p);
    const char *out[] = {"<call>set_zoom(level=2)", "<call>set_flash(mode=\"on\")",
                         "<call>set_timer(seconds=3)"};
    script(&fx, 3, out);
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    pipit_turn_free(turn(&fx, "flash on"));
    pipit_turn_free(turn(&fx, "3 second timer"));
    struct pipit_turn *t = turn(&fx, "undo everything");
    assert_string_equal(t->sentence, "The timer is off again. The flash is off again. Older "
                                     "changes stay: I can undo only the last 2 actions.");
    assert_state(&fx, "zoom", "2.0"); /* the oldest, out of reach: said, not reverted */
    pipit_turn_free(t);
    t = turn(&fx, "undo");
    assert_string_equal(t->sentence, "There's nothing more I can undo: I keep the last 2 actions.");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "undo the last two" reverts two; more than the log holds says so. */
static void test_multi_step_undo(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>set_zoom(level=2)", "<call>set_flash(mode=\"on\")",
                         "<call>set_timer(seconds=3)"};
    script(&fx, 3, out);
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    pipit_turn_free(turn(&fx, "flash on"));
    pipit_turn_free(turn(&fx, "3 second timer"));
    struct pipit_turn *t = turn(&fx, "undo the last two");
    assert_int_equal(t->model_calls, 0);
    assert_string_equal(t->sentence, "The timer is off again. The flash is off again.");
    assert_state(&fx, "timer_s", "0");
    assert_state(&fx, "flash", "\"off\"");
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    t = turn(&fx, "undo both");
    assert_string_equal(t->sentence, "The zoom is 1x again. There was only one action to undo.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "undo everything");
    assert_string_equal(t->sentence, "There's nothing to undo.");
    pipit_turn_free(t);
    /* everything: every logged action, and never a new one */
    const char *out2[] = {"<call>set_grid(enabled=true)", "<call>switch_camera(facing=\"front\")"};
    script(&fx, 2, out2);
    pipit_turn_free(turn(&fx, "grid on"));
    pipit_turn_free(turn(&fx, "selfie camera"));
    t = turn(&fx, "put everything back");
    assert_string_equal(t->sentence, "The back camera is active again. The grid is off again.");
    assert_int_equal(t->model_calls, 0);
    pipit_turn_free(t);
    assert_int_equal(fx.fake.n_steps, 5);
    /* "and that too" right after an undo undoes one more; elsewhere it goes to the model */
    const char *out3[] = {"<call>set_zoom(level=3)", "<call>set_flash(mode=\"on\")", "Okay."};
    script(&fx, 3, out3);
    pipit_turn_free(turn(&fx, "zoom to 3x"));
    pipit_turn_free(turn(&fx, "flash on"));
    t = turn(&fx, "revert that");
    assert_string_equal(t->sentence, "The flash is off again.");
    pipit_turn_free(t);
    t = turn(&fx, "and that too");
    assert_string_equal(t->sentence, "The zoom is 1x again.");
    assert_int_equal(t->model_calls, 0);
    pipit_turn_free(t);
    t = turn(&fx, "what's next");
    pipit_turn_free(t);
    t = turn(&fx, "and that too");
    assert_int_equal(t->model_calls, 1); /* no undo right before it */
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Out-of-range values are refused with the limit in the sentence, never bent into legal ones:
 * the call is tried as the model wrote it, validation refuses it, the state stays. */
static void test_out_of_range_is_refused_not_substituted(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>set_zoom(level=50)", "<call>set_timer(seconds=7)",
                         "<call>set_exposure(ev=3)"};
    script(&fx, 3, out);
    struct pipit_turn *t = turn(&fx, "zoom 50x");
    assert_int_equal(t->n_calls, 1);
    assert_int_equal(t->calls[0].status, PIPIT_ERR_INVALID_ARGS);
    assert_false(t->calls[0].executed);
    assert_string_equal(t->calls[0].args_json, "{\"level\":50}");
    assert_string_equal(t->calls[0].code, "out_of_range");
    assert_string_equal(t->sentence,
                        "I can't zoom to 50x: the zoom goes from 0.5x to 10x on the back camera.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "timer 7 seconds");
    assert_string_equal(t->calls[0].code, "not_allowed");
    assert_non_null(strstr(t->sentence, "I can't set a 7-second timer"));
    assert_state(&fx, "timer_s", "0");
    pipit_turn_free(t);
    t = turn(&fx, "exposure +3");
    assert_string_equal(t->calls[0].code, "out_of_range");
    assert_state(&fx, "exposure_ev", "0.0");
    pipit_turn_free(t);
    /* nothing was logged: undo has nothing to revert */
    t = turn(&fx, "undo");
    assert_string_equal(t->sentence, "There's nothing to undo.");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A model that bends the person's number into a legal one ("zoom 50x" -> level=5) does not get
 * its way: the harness puts the person's number back and refuses it with the limit. A value the
 * person did write, a conversion the person's number allows, and a tool with two numbers are
 * left as the model wrote them. */
static void test_bent_number_is_restored_and_refused(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>set_zoom(level=5)",          "<call>set_exposure(ev=1)",
                         "<call>set_timer(seconds=3)",       "<call>set_zoom(level=2)",
                         "<call>tap_to_focus(x=0.5, y=0.5)", "<call>set_exposure(ev=-3)",
                         "<call>set_exposure(ev=-2)"};
    script(&fx, 7, out);
    struct pipit_turn *t = turn(&fx, "zoom 50x");
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_int_equal(t->calls[0].status, PIPIT_ERR_INVALID_ARGS);
    assert_string_equal(t->calls[0].args_json, "{\"level\":50}");
    assert_string_equal(t->sentence,
                        "I can't zoom to 50x: the zoom goes from 0.5x to 10x on the back camera.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "exposure +3 please");
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_string_equal(t->calls[0].code, "out_of_range");
    assert_state(&fx, "exposure_ev", "0.0");
    pipit_turn_free(t);
    /* the person's own number in range: nothing to restore */
    t = turn(&fx, "a 3 second timer");
    assert_false(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_int_equal(t->calls[0].status, PIPIT_OK);
    assert_state(&fx, "timer_s", "3");
    pipit_turn_free(t);
    /* a relative request with no number: the model's value stands */
    t = turn(&fx, "zoom in a bit");
    assert_false(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_int_equal(t->calls[0].status, PIPIT_OK);
    pipit_turn_free(t);
    /* two numeric arguments: which number is which is the model's call */
    t = turn(&fx, "focus at 150 150");
    assert_false(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    pipit_turn_free(t);
    /* "down 3": the model's sign is the person's direction, kept, and refused as -3 */
    t = turn(&fx, "exposure down 3");
    assert_false(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_string_equal(t->calls[0].args_json, "{\"ev\":-3}");
    assert_string_equal(t->calls[0].code, "out_of_range");
    pipit_turn_free(t);
    t = turn(&fx, "exposure down 3"); /* bent to -2: the person's 3 comes back as -3 */
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_string_equal(t->calls[0].args_json, "{\"ev\":-3}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Over the step limit, the sentence says what was not done, in the person's words. */
static void test_step_limit_says_what_was_not_done(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.max_steps = 2;
    struct fixture fx;
    setup_with(&fx, &p);
    const char *out[] = {"<call>set_flash(mode=\"on\")", "<call>set_timer(seconds=3)",
                         "<call>take_photo()"};
    script(&fx, 3, out);
    struct pipit_turn *t = turn(&fx, "turn on the flash, set a 3 second timer and take a photo");
    assert_true(t->flags & PIPIT_TURN_STEP_CAP);
    assert_int_equal(t->model_calls, 2);
    const char *tail = "I didn't take a photo: two steps per command is the limit.";
    assert_non_null(strstr(t->sentence, tail));
    assert_string_equal(t->sentence + strlen(t->sentence) - strlen(tail), tail);
    assert_state(&fx, "photos_taken", "0");
    pipit_turn_free(t);
    teardown_fx(&fx);

    p.max_steps = 1;
    setup_with(&fx, &p);
    script(&fx, 3, out);
    t = turn(&fx, "turn on the flash, then Set the timer to 3 seconds and please take a photo");
    assert_int_equal(t->model_calls, 1);
    assert_non_null(strstr(t->sentence, "I didn't set the timer to 3 seconds or take a photo: "
                                        "one step per command is the limit."));
    assert_state(&fx, "timer_s", "0");
    pipit_turn_free(t);
    t = turn(&fx, "night mode and a 3 second timer");
    assert_non_null(strstr(t->sentence,
                           "I didn't do \"a 3 second timer\": one step per command is the limit."));
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
    /* the query is the person's own words, not the model's copy of them */
    assert_non_null(strstr(t->calls[0].args_json, "what's the capital of France"));
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

/* ============================================================================ an app's state */

/* A thermostat-and-lights app: its own state, handlers and restore (pipit_device_from_app). */
static const char *const HOME_SPEC =
    "[{\"type\": \"function\", \"function\": {\"name\": \"set_temperature\", \"description\": "
    "\"Set the thermostat\", \"parameters\": {\"type\": \"object\", \"properties\": "
    "{\"celsius\": {\"type\": \"integer\", \"minimum\": 10, \"maximum\": 30}}, \"required\": "
    "[\"celsius\"]}}, \"pipit\": {\"success\": \"Thermostat set to {celsius} degrees.\", "
    "\"undo\": {\"keys\": [\"celsius\"]}}},"
    "{\"type\": \"function\", \"function\": {\"name\": \"set_light\", \"description\": \"Turn "
    "a light on or off\", \"parameters\": {\"type\": \"object\", \"properties\": {\"room\": "
    "{\"type\": \"string\", \"enum\": [\"living\", \"kitchen\"]}, \"on\": {\"type\": "
    "\"boolean\"}}, \"required\": [\"room\", \"on\"]}}, \"pipit\": {\"undo\": {\"keys\": "
    "[\"living_light\", \"kitchen_light\"]}}}]";

struct home {
    int celsius;
    bool living, kitchen;
    bool refuse_restore;    /* restore() answers PIPIT_ERR_JSON */
    bool broken_state;      /* get_state() writes an array */
    int restores;           /* restore() calls */
    char last_restore[256]; /* its last keys_json */
};

static enum pipit_status home_get_state(char *buf, size_t size, void *user_data) {
    const struct home *h = user_data;
    if (h->broken_state) {
        snprintf(buf, size, "[1, 2]");
        return PIPIT_OK;
    }
    snprintf(buf, size, "{\"celsius\": %d, \"living_light\": %s, \"kitchen_light\": %s}",
             h->celsius, h->living ? "true" : "false", h->kitchen ? "true" : "false");
    return PIPIT_OK;
}

static enum pipit_status home_restore(const char *keys_json, void *user_data) {
    struct home *h = user_data;
    h->restores++;
    snprintf(h->last_restore, sizeof(h->last_restore), "%s", keys_json);
    json_t *k = json_loads(keys_json, 0, NULL);
    json_t *c = json_object_get(k, "celsius");
    json_t *l = json_object_get(k, "living_light");
    json_t *kl = json_object_get(k, "kitchen_light");
    bool ok = !h->refuse_restore && json_is_object(k) && (c == NULL || json_is_integer(c)) &&
              (l == NULL || json_is_boolean(l)) && (kl == NULL || json_is_boolean(kl));
    if (ok) { /* all or nothing */
        h->celsius = c != NULL ? (int)json_integer_value(c) : h->celsius;
        h->living = l != NULL ? json_is_true(l) : h->living;
        h->kitchen = kl != NULL ? json_is_true(kl) : h->kitchen;
    }
    json_decref(k);
    return ok ? PIPIT_OK : PIPIT_ERR_JSON;
}

static enum pipit_status
home_tool(const char *tool, const char *args_json, struct pipit_tool_output *out, void *user_data) {
    struct home *h = user_data;
    json_t *a = json_loads(args_json, 0, NULL);
    out->ok = true;
    if (strcmp(tool, "set_temperature") == 0) {
        h->celsius = (int)json_integer_value(json_object_get(a, "celsius"));
        snprintf(out->data_json, sizeof(out->data_json), "{\"celsius\": %d}", h->celsius);
    } else {
        bool on = json_is_true(json_object_get(a, "on"));
        bool living = strcmp(json_string_value(json_object_get(a, "room")), "living") == 0;
        *(living ? &h->living : &h->kitchen) = on;
        snprintf(out->data_json, sizeof(out->data_json), "{\"%s_light\": %s}",
                 living ? "living" : "kitchen", on ? "true" : "false");
    }
    json_decref(a);
    return PIPIT_OK;
}

/* An agent on the home tools; with the app's state as its device when `with_state`. */
static void setup_home(struct fixture *fx, struct home *h, bool with_state) {
    memset(fx, 0, sizeof(*fx));
    memset(h, 0, sizeof(*h));
    h->celsius = 20;
    struct pipit_error err;
    assert_int_equal(
        pipit_toolset_load_string(HOME_SPEC, strlen(HOME_SPEC), "home.json", &fx->ts, &err),
        PIPIT_OK);
    struct pipit_app_state app = {"home", home_get_state, home_restore, h};
    if (with_state && pipit_device_from_app(&app, &fx->device, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx->device;
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(pipit_agent_register_tool(fx->agent, "set_temperature", home_tool, h),
                     PIPIT_OK);
    assert_int_equal(pipit_agent_register_tool(fx->agent, "set_light", home_tool, h), PIPIT_OK);
}

/* Issue 17: an embedder's own tools and state. The state line and the undo snapshots come from
 * get_state(); undo hands the saved keys to restore(); without a device there is nothing to
 * undo, as before. */
static void test_app_state_and_undo(void **state) {
    (void)state;
    struct fixture fx;
    struct home h;
    setup_home(&fx, &h, true);
    assert_string_equal(pipit_device_name(fx.device), "home");
    const char *out[] = {"<call>set_temperature(celsius=22)",
                         "<call>set_light(room=\"kitchen\", on=true)"};
    script(&fx, 2, out);
    struct pipit_turn *t = turn(&fx, "warm it up to 22");
    assert_true(t->calls[0].ok);
    assert_string_equal(t->sentence, "Thermostat set to 22 degrees.");
    assert_int_equal(h.celsius, 22);
    /* the app's state is the prompt's state line, and the turn's state */
    assert_string_equal(fx.fake.prompts[0], "State: celsius=20 living_light=no kitchen_light=no\n"
                                            "User: warm it up to 22\nAssistant: ");
    assert_non_null(strstr(t->state_json, "\"celsius\":22"));
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "kitchen light on"));
    assert_true(h.kitchen);
    char *s = pipit_agent_state_json(fx.agent);
    assert_string_equal(s, "{\"celsius\":22,\"living_light\":false,\"kitchen_light\":true}");
    pipit_free(s);
    /* undo: no model call, the keys the tool's undo block names go back through restore() */
    t = turn(&fx, "undo");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->model_calls, 0);
    assert_int_equal(h.restores, 1);
    assert_string_equal(h.last_restore, "{\"living_light\":false,\"kitchen_light\":false}");
    assert_false(h.kitchen);
    assert_int_equal(h.celsius, 22);
    pipit_turn_free(t);
    t = turn(&fx, "never mind");
    assert_int_equal(h.restores, 2);
    assert_string_equal(h.last_restore, "{\"celsius\":20}");
    assert_int_equal(h.celsius, 20);
    assert_null(strstr(t->sentence, "nothing to undo"));
    pipit_turn_free(t);
    t = turn(&fx, "undo");
    assert_string_equal(t->sentence, "There's nothing to undo.");
    pipit_turn_free(t);
    /* the app refuses: undo says so and the state stays */
    const char *out2[] = {"<call>set_temperature(celsius=25)"};
    script(&fx, 1, out2);
    pipit_turn_free(turn(&fx, "25 degrees"));
    h.refuse_restore = true;
    t = turn(&fx, "undo");
    assert_string_equal(t->sentence, "I couldn't undo the last action (set temperature).");
    assert_int_equal(h.celsius, 25);
    pipit_turn_free(t);
    /* a state get_state() cannot give: empty state line, the turn still runs */
    h.broken_state = true;
    const char *out3[] = {"<call>set_temperature(celsius=18)"};
    script(&fx, 1, out3);
    t = turn(&fx, "18 please");
    assert_true(t->calls[0].ok);
    assert_int_equal(h.celsius, 18);
    assert_non_null(strstr(fx.fake.prompts[fx.fake.n_steps - 1], "State: \nUser: 18 please"));
    pipit_turn_free(t);
    /* ... nothing was saved before the call: undo says so, and reverts no older action */
    t = turn(&fx, "undo");
    assert_non_null(strstr(t->sentence, "can't undo the last action (set temperature)"));
    assert_int_equal(h.celsius, 18);
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* the same app without a device: handlers run, nothing can be undone */
    setup_home(&fx, &h, false);
    script(&fx, 1, out);
    pipit_turn_free(turn(&fx, "warm it up to 22"));
    assert_int_equal(h.celsius, 22);
    assert_string_equal(fx.fake.prompts[0], "State: \nUser: warm it up to 22\nAssistant: ");
    t = turn(&fx, "undo");
    assert_string_equal(t->sentence, "There's nothing to undo.");
    assert_int_equal(h.celsius, 22);
    assert_int_equal(h.restores, 0);
    pipit_turn_free(t);
    assert_null(pipit_agent_state_json(fx.agent));
    teardown_fx(&fx);
}

/* pipit_device_from_app() refuses what it cannot use, naming why. */
static void test_app_state_refused(void **state) {
    (void)state;
    struct home h;
    memset(&h, 0, sizeof(h));
    struct pipit_device *d = NULL;
    struct pipit_error err;
    struct pipit_app_state app = {NULL, home_get_state, NULL, &h};
    h.broken_state = true;
    assert_int_equal(pipit_device_from_app(&app, &d, &err), PIPIT_ERR_JSON);
    assert_null(d);
    assert_non_null(strstr(err.text, "not an object"));
    assert_non_null(strstr(err.text, "app"));
    app.get_state = NULL;
    assert_int_equal(pipit_device_from_app(&app, &d, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_device_from_app(NULL, &d, &err), PIPIT_ERR_INVALID_ARG);
    /* without restore(), undo cannot put anything back */
    h.broken_state = false;
    app.get_state = home_get_state;
    assert_int_equal(pipit_device_from_app(&app, &d, &err), PIPIT_OK);
    assert_string_equal(pipit_device_name(d), "app");
    char *s = pipit_device_state_json(d);
    assert_string_equal(s, "{\"celsius\":0,\"living_light\":false,\"kitchen_light\":false}");
    pipit_free(s);
    pipit_device_free(d);
    pipit_device_free(NULL);
    assert_null(pipit_device_state_json(NULL));
    assert_string_equal(pipit_device_name(NULL), "");
}

/* The registry: a kind by name, or the device chosen from the tool set. */
static void test_device_registry(void **state) {
    (void)state;
    struct pipit_error err;
    struct pipit_toolset *camera = camera_tools();
    struct pipit_toolset *phone = NULL;
    struct pipit_toolset *home = NULL;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", &phone, &err),
                     PIPIT_OK);
    assert_int_equal(
        pipit_toolset_load_string(HOME_SPEC, strlen(HOME_SPEC), "home.json", &home, &err),
        PIPIT_OK);
    struct pipit_device *d = NULL;
    /* chosen: the simulator that runs every tool; none for tools no device knows */
    assert_int_equal(pipit_device_init(NULL, camera, NULL, &d, &err), PIPIT_OK);
    assert_string_equal(pipit_device_name(d), "camera");
    pipit_device_free(d);
    assert_int_equal(pipit_device_init(NULL, phone, "{\"wifi\": false}", &d, &err), PIPIT_OK);
    assert_string_equal(pipit_device_name(d), "phone");
    char *s = pipit_device_state_json(d);
    assert_non_null(strstr(s, "\"wifi\":false"));
    pipit_free(s);
    pipit_device_free(d);
    d = (struct pipit_device *)&err; /* overwritten */
    assert_int_equal(pipit_device_init(NULL, home, NULL, &d, &err), PIPIT_OK);
    assert_null(d);
    /* ... and then an initial state has nowhere to go */
    assert_int_equal(pipit_device_init(NULL, home, "{\"celsius\": 20}", &d, &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "home.json declares no state"));
    /* by name: the camera even for another tool set; init all-or-nothing, named */
    assert_int_equal(pipit_device_init("camera", NULL, "{\"flash\": \"on\"}", &d, &err), PIPIT_OK);
    s = pipit_device_state_json(d);
    assert_non_null(strstr(s, "\"flash\":\"on\""));
    pipit_free(s);
    pipit_device_free(d);
    assert_int_equal(pipit_device_init("camera", camera, "{\"zoom\": \"big\"}", &d, &err),
                     PIPIT_ERR_JSON);
    assert_null(d);
    assert_non_null(strstr(err.text, "zoom"));
    assert_int_equal(pipit_device_init("camera", camera, "{not json", &d, &err), PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "not JSON"));
    assert_int_equal(pipit_device_init("camera", camera, "[1]", &d, &err), PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "not a JSON object"));
    assert_int_equal(pipit_device_init("toaster", camera, NULL, &d, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "unknown device 'toaster'"));
    /* the generic device needs a declared state; tools/home.json declares one */
    assert_int_equal(pipit_device_init("pack", home, NULL, &d, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "no declared state"));
    struct pipit_toolset *pack = NULL;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/home.json", &pack, &err),
                     PIPIT_OK);
    static const char *const kinds[] = {NULL, "pack", "home"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(pipit_device_init(kinds[i], pack, "{\"thermostat\": 22}", &d, &err),
                         PIPIT_OK);
        assert_string_equal(pipit_device_name(d), "home");
        s = pipit_device_state_json(d);
        assert_non_null(strstr(s, "\"thermostat\":22"));
        pipit_free(s);
        pipit_device_free(d);
    }
    assert_int_equal(pipit_device_init("home", pack, "{\"thermostat\": 99}", &d, &err),
                     PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "thermostat"));
    assert_int_equal(pipit_device_init("garden", pack, NULL, &d, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "known: camera, phone, pack, home"));
    pipit_toolset_free(pack);
    assert_int_equal(pipit_device_init("camera", camera, NULL, NULL, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_device_init(NULL, NULL, NULL, &d, &err), PIPIT_ERR_INVALID_ARG);
    pipit_toolset_free(home);
    pipit_toolset_free(phone);
    pipit_toolset_free(camera);
}

/* A pack's own cloud tool (effect "cloud", tests/specs/packs/aquarium.json's ask_expert with a
 * "question" argument) is delegated like process_with_cloud_llm: never "no_handler", the cloud
 * gets the person's own words, and memory keeps the harness's line, not the answer. */
static void test_pack_cloud_tool(void **state) {
    (void)state;
    struct fixture fx;
    memset(&fx, 0, sizeof(fx));
    struct pipit_error err;
    assert_int_equal(
        pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tests/specs/packs/aquarium.json", &fx.ts, &err),
        PIPIT_OK);
    fx.device = test_device(NULL, fx.ts, NULL); /* its declared state: the generic device */
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx.device;
    assert_int_equal(
        agent_new_with_backend(NULL, fx.ts, &p, fake_backend_wrap(&fx.fake), &fx.agent, &err),
        PIPIT_OK);
    const char *out[] = {"<call>ask_expert(question=\"clownfish hiding\")",
                         "<call>ask_expert(question=\"clownfish hiding\")"};
    script(&fx, 2, out);
    struct pipit_turn *t = turn(&fx, "why is my clownfish hiding");
    assert_int_equal(t->cloud_requests, 0); /* nothing left the device */
    assert_true(t->calls[0].executed);
    assert_string_equal(t->calls[0].code, "cloud_not_configured");
    pipit_turn_free(t);
    /* configured (a port that refuses): the request goes out with the person's words */
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
    assert_int_equal(pipit_cloud_init(&cp, &cloud, &err), PIPIT_OK);
    pipit_agent_set_cloud(fx.agent, cloud);
    t = turn(&fx, "why is my clownfish hiding all day");
    assert_int_equal(t->cloud_requests, 1);
    assert_string_equal(t->calls[0].code, "cloud_error"); /* not invalid_argument: it was asked */
    assert_string_equal(t->calls[0].args_json, "{\"question\":\"clownfish hiding\"}");
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
    p.max_steps = 0;
    assert_int_equal(test_agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_null(a);
    p = pipit_agent_default_params();
    p.copy_strings = (enum pipit_copy_mode)7;
    assert_int_equal(test_agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "copy_strings"));
    assert_null(a);
    test_agent_free(NULL);
    pipit_turn_free(NULL);
    pipit_toolset_free(ts);
}

/* Every failing call on an agent says why in pipit_agent_errmsg(), and a turn that succeeds
 * after a failure starts from a clean message. */
static void expect_errmsg(struct pipit_agent *a, const char *needle) {
    const char *m = pipit_agent_errmsg(a);
    if (m == NULL || strstr(m, needle) == NULL) {
        fail_msg("errmsg \"%s\" does not say \"%s\"", m != NULL ? m : "(null)", needle);
    }
}

static void test_every_failure_says_why(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    struct pipit_turn *t = NULL;

    assert_int_equal(pipit_agent_register_tool(fx.agent, "no_such_tool", NULL, NULL),
                     PIPIT_ERR_UNKNOWN_TOOL);
    expect_errmsg(fx.agent, "no_such_tool");
    assert_int_equal(pipit_agent_register_tool(fx.agent, NULL, NULL, NULL), PIPIT_ERR_INVALID_ARG);
    expect_errmsg(fx.agent, "NULL");

    assert_int_equal(pipit_agent_turn(fx.agent, NULL, &t), PIPIT_ERR_INVALID_ARG);
    expect_errmsg(fx.agent, "utterance is NULL");
    assert_int_equal(pipit_agent_turn(fx.agent, "zoom in", NULL), PIPIT_ERR_INVALID_ARG);
    expect_errmsg(fx.agent, "result pointer");
    assert_int_equal(pipit_agent_turn(fx.agent, "   ", &t), PIPIT_ERR_INVALID_ARG);
    expect_errmsg(fx.agent, "empty");

    /* an engine failure in the model step: the turn fails and says so */
    fx.fake.fail = PIPIT_ERR_DECODE;
    assert_int_equal(pipit_agent_turn(fx.agent, "make it look like a painting", &t),
                     PIPIT_ERR_DECODE);
    assert_null(t);
    expect_errmsg(fx.agent, "model step failed");
    fx.fake.fail = PIPIT_OK;

    /* a session file that cannot be written or read: in err and in errmsg, err or not */
    struct pipit_error err;
    assert_int_not_equal(pipit_agent_save(fx.agent, "/nonexistent-dir/s.pipit", &err), PIPIT_OK);
    expect_errmsg(fx.agent, "/nonexistent-dir/s.pipit");
    assert_string_equal(err.text, pipit_agent_errmsg(fx.agent));
    assert_int_not_equal(pipit_agent_load(fx.agent, "/nonexistent-dir/s.pipit", NULL, NULL),
                         PIPIT_OK);
    expect_errmsg(fx.agent, "/nonexistent-dir/s.pipit");

    /* a turn that works clears the message */
    const char *const out[] = {"<call>set_zoom(level=2)"};
    script(&fx, 1, out);
    t = turn(&fx, "zoom in to 2x");
    assert_string_equal(pipit_agent_errmsg(fx.agent), "");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Small talk is answered by the harness with no model step; never when every answer must be
 * a call, nor when the app turned it off. */
static void test_small_talk(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    struct pipit_turn *t = turn(&fx, "thanks so much, that's all for now");
    assert_int_equal(fx.fake.n_steps, 0);
    assert_true(t->flags & PIPIT_TURN_SMALL_TALK);
    assert_int_equal(t->n_calls, 0);
    assert_string_equal(t->sentence, "You're welcome. Goodbye!");
    pipit_turn_free(t);
    /* a tool set word makes it a command: the model decides */
    const char *const out[] = {"<call>set_flash(mode=\"off\")"};
    script(&fx, 1, out);
    t = turn(&fx, "thanks, flash off");
    assert_int_equal(fx.fake.n_steps, 1);
    assert_false(t->flags & PIPIT_TURN_SMALL_TALK);
    pipit_turn_free(t);
    teardown_fx(&fx);

    struct pipit_agent_params p = pipit_agent_default_params();
    for (int variant = 0; variant < 2; variant++) {
        p.small_talk = variant != 0 ? false : true;
        p.lazy_grammar = variant != 0 ? true : false;
        setup_with(&fx, &p);
        const char *const call[] = {"<call>take_photo()"};
        script(&fx, 1, call);
        t = turn(&fx, "thanks");
        assert_int_equal(fx.fake.n_steps, 1);
        assert_false(t->flags & PIPIT_TURN_SMALL_TALK);
        pipit_turn_free(t);
        teardown_fx(&fx);
    }
}

/* The model's undo() for a request with no word of reversal would revert an action nobody
 * asked about: the step decodes again without undo. With such a word, undo() runs. */
static void test_model_undo_needs_a_reason(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *const out[] = {"<call>set_zoom(level=2)",
                               "<call>undo()",
                               "<call>set_flash(mode=\"on\")",
                               "<call>undo()",
                               "<call>undo()",
                               "I can't do that.",
                               "<call>undo()"};
    script(&fx, 7, out);
    struct pipit_turn *t = turn(&fx, "zoom in to 2x");
    pipit_turn_free(t);
    t = turn(&fx, "flash on for the party");
    assert_int_equal(fx.fake.n_steps, 3); /* undo(), then again without it */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_flash");
    assert_state(&fx, "zoom", "2.0");
    assert_state(&fx, "flash", "\"on\"");
    pipit_turn_free(t);
    t = turn(&fx, "hmm the previous look was nicer");
    assert_int_equal(fx.fake.n_steps, 4);
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    /* no tool word, no reversal and nothing pointed at: no undo either */
    t = turn(&fx, "fertilise the roses");
    assert_int_equal(fx.fake.n_steps, 6);
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    /* "bin that one" points back: the model's undo stands */
    t = turn(&fx, "bin that one");
    assert_int_equal(fx.fake.n_steps, 7);
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    /* "back" after "my", "the", ... is a thing ("massage my back", "the back camera") */
    script(&fx, 2, (const char *const[]){"<call>undo()", "Sorry, I can't do that."});
    t = turn(&fx, "massage my back please");
    assert_int_equal(fx.fake.n_steps, 9); /* undo(), then again without it */
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    /* pointing back, but after this turn's own action: no undo of what it just asked for
     * ("go macro, i wanna get right up close to it" had set macro and taken it back) */
    script(&fx, 3, (const char *const[]){"<call>set_flash(mode=\"on\")", "<call>undo()", "Okay."});
    t = turn(&fx, "flash on, i wanna get right up close to it");
    assert_int_equal(fx.fake.n_steps, 12); /* the flash; undo(), then again without it */
    assert_state(&fx, "flash", "\"on\"");
    pipit_turn_free(t);
    /* "back to" a thing is no undo ("back to the rear one" had undone); "back to the way it
     * was" is */
    script(&fx, 2, (const char *const[]){"<call>undo()", "<call>switch_camera(facing=\"back\")"});
    t = turn(&fx, "back to the rear one");
    assert_int_equal(fx.fake.n_steps, 14);
    assert_string_equal(t->calls[0].tool, "switch_camera");
    assert_state(&fx, "flash", "\"on\"");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A segment the model answered in words (`words`), and the one call the harness makes of it
 * (`tool` NULL: none), flagged `flag` when not 0. */
struct words_case {
    const char *say, *tool, *args;
};

static void run_words_cases(struct fixture *fx,
                            const char *words,
                            const struct words_case *cases,
                            size_t n,
                            unsigned flag) {
    for (size_t k = 0; k < n; k++) {
        script(fx, 1, (const char *const[]){words});
        struct pipit_turn *t = turn(fx, cases[k].say);
        bool ok = cases[k].tool == NULL
                      ? t->n_calls == 0
                      : t->n_calls == 1 && strcmp(t->calls[0].tool, cases[k].tool) == 0 &&
                            strcmp(t->calls[0].args_json, cases[k].args) == 0 &&
                            t->calls[0].executed && (flag == 0 || (t->flags & flag) != 0);
        if (!ok) {
            fail_msg("\"%s\": %zu calls: %s %s", cases[k].say, t->n_calls,
                     t->n_calls > 0 ? t->calls[0].tool : "",
                     t->n_calls > 0 ? t->calls[0].args_json : "");
        }
        pipit_turn_free(t);
    }
}

/* A refusal to a segment that starts with a tool's own verb ("find my lease" -> "Sorry, I can't
 * do that.") is that tool's call with the rest of the segment, when the tool takes one free
 * string that is no identifier; not for a question word first, an identifier or a verb with
 * nothing after it. */
static void test_refusal_verb_names_tool(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct words_case cases[] = {
        /* tool NULL: no call */
        {"find my lease", "find_file", "{\"name\":\"lease\"}"},
        {"pls find my boarding pass please", "find_file", "{\"name\":\"boarding pass\"}"},
        {"search photos for dogs", "search_photos", "{\"query\":\"dogs\"}"},
        {"open the door", NULL, NULL},     /* open_file takes an identifier */
        {"find", NULL, NULL},              /* nothing to find */
        {"what can you find", NULL, NULL}, /* a question word first */
        /* a verb people use for the words opening a tool's name ("walk me to": "navigate to"),
         * the mode a word of the segment opens ("drive" of "driving"); the destination with its
         * "the", as the pack's example keeps it ("... to the train station", agent_frame.h) */
        {"walk me to the ferry building", "navigate_to",
         "{\"destination\":\"the ferry building\",\"mode\":\"walking\"}"},
        {"drive me to work", "navigate_to", "{\"destination\":\"work\",\"mode\":\"driving\"}"},
        {"take me to the airport", NULL, NULL}, /* by which mode is not said */
    };
    run_words_cases(&fx, "Sorry, I can't do that.", cases, sizeof(cases) / sizeof(cases[0]),
                    PIPIT_TURN_TOOL_NAMED);
    teardown_fx(&fx);
}

/* A question the pack gives as a tool's example is that tool's, not the cloud's: "any unread
 * texts?" is read_messages ("any new texts?"); "any idea how far Tokyo is?" stays the cloud's. */
static void test_question_like_example(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct {
        const char *say, *tool;
    } cases[] = {
        {"any unread texts?", "read_messages"},
        {"any idea how far Tokyo is?", "process_with_cloud_llm"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        char call[120];
        snprintf(call, sizeof(call),
                 "process_with_cloud_llm(user_query_context=\"%.30s\", "
                 "reason_for_escalation=\"general knowledge\")",
                 cases[k].say);
        script_call(&fx, call);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (t->n_calls != 1 || strcmp(t->calls[0].tool, cases[k].tool) != 0) {
            fail_msg("\"%s\": %zu calls, %s", cases[k].say, t->n_calls,
                     t->n_calls > 0 ? t->calls[0].tool : "-");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* A wish is a request whatever plain text the model answered: "i want the flash on" ->
 * "The flash is off." (read as a question) switches the flash on; a question, a negation or
 * plain text to a statement do not. */
static void test_wish_is_a_request(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct words_case cases[] = {
        /* tool NULL: no call */
        {"i want the flash on", "set_flash", "{\"mode\":\"on\"}"},
        {"ok i need the grid", "set_grid", "{\"enabled\":true}"},
        {"i'd like the grid off", "set_grid", "{\"enabled\":false}"},
        {"do i want the flash on", NULL, NULL},
        {"i don't want the flash on", NULL, NULL},
        {"the flash on my old phone was better", NULL, NULL},
    };
    run_words_cases(&fx, "The flash is off.", cases, sizeof(cases) / sizeof(cases[0]), 0);
    teardown_fx(&fx);
}

static void setup_spec(struct fixture *fx, const char *spec, size_t len);

static void setup_home_pack(struct fixture *fx);

/* A value that is a verb of the bank is said by the verbs people use for it, when the segment
 * is that verb alone ("ok carry on" for "resume"); "drop the heat" says no "cancel". */
static void test_value_said_by_its_verbs(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"oven\", \"state\": {\"cycle\": {\"type\": \"string\", "
        "\"enum\": [\"idle\", \"running\", \"paused\"], \"initial\": \"paused\"}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"control_cycle\", "
        "\"description\": \"Control the cycle\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"action\": {\"type\": \"string\", \"enum\": [\"start\", "
        "\"pause\", \"resume\", \"cancel\"]}}, \"required\": [\"action\"]}}, \"pipit\": "
        "{\"effect\": {\"set\": {\"cycle\": {\"arg\": \"action\", \"map\": {\"start\": "
        "\"running\", \"pause\": \"paused\", \"resume\": \"running\", \"cancel\": "
        "\"idle\"}}}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    static const struct words_case cases[] = {
        {"ok carry on", "control_cycle", "{\"action\":\"resume\"}"},
        {"keep going please", "control_cycle", "{\"action\":\"resume\"}"},
        {"drop the heat", NULL, NULL},
    };
    run_words_cases(&fx, "Sorry, I can't do that.", cases, sizeof(cases) / sizeof(cases[0]),
                    PIPIT_TURN_TOOL_NAMED);
    teardown_fx(&fx);
}

/* A refusal to the noun of the one tool that takes nothing ("one last photo of the setlist" ->
 * "Sorry, the camera can't do that.") is that tool's call; not a statement about it, another
 * verb's request, nor a noun another tool's name has too. */
static void test_refusal_names_a_noun(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct words_case cases[] = {
        {"and one last photo of the setlist", "take_photo", "{}"},
        {"another photo of the band please", "take_photo", "{}"},
        {"the photo is blurry", NULL, NULL},
        {"delete the last photo", NULL, NULL},
    };
    run_words_cases(&fx, "Sorry, the camera can't do that.", cases,
                    sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_TOOL_NAMED);
    teardown_fx(&fx);
    /* a noun two tools' names have ("timer": set_timer, cancel_timer) names neither */
    setup_home_pack(&fx);
    static const struct words_case home[] = {{"timer for my eggs", NULL, NULL}};
    run_words_cases(&fx, "Sorry, I can't do that.", home, 1, 0);
    teardown_fx(&fx);
}

/* A comparative value said as the verb ("dim" for "dimmer", "brighten" for "brighter") is that
 * tool's, over the place the model's tool takes too: "dim the kitchen a little" had switched
 * the kitchen light on; "turn on the kitchen light" stays the model's. */
static void test_comparative_verb(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "switch_light(room=\"kitchen\", on=true)");
    struct pipit_turn *t = turn(&fx, "dim the kitchen a little");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "adjust_brightness");
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"kitchen\",\"direction\":\"dimmer\"}");
    pipit_turn_free(t);
    script_call(&fx, "switch_light(room=\"kitchen\", on=true)");
    t = turn(&fx, "turn on the kitchen light");
    assert_string_equal(t->calls[0].tool, "switch_light");
    pipit_turn_free(t);
    script_call(&fx, "switch_light(room=\"bedroom\", on=true)");
    t = turn(&fx, "brighten the bedroom");
    assert_string_equal(t->calls[0].tool, "adjust_brightness");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A value two tools take is the call of the one that needs nothing else: "i'd love a flat
 * white right now" is a brew, not a schedule without its time; the values said for one tool
 * make one call ("a large latte"); two values for one argument, none. */
static void test_wish_value_of_two_tools(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"cafe\", \"state\": {\"last_drink\": {\"type\": \"string\", "
        "\"initial\": \"none\"}}}, \"tools\": [{\"type\": \"function\", \"function\": "
        "{\"name\": \"brew_drink\", "
        "\"description\": \"Brew a drink\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"drink\": {\"type\": \"string\", \"enum\": [\"latte\", "
        "\"lungo\", \"flat_white\"]}, \"size\": {\"type\": \"string\", \"enum\": "
        "[\"small\", \"large\"]}}, \"required\": [\"drink\"]}}, \"pipit\": {\"effect\": "
        "{\"set\": {\"last_drink\": \"{drink}\"}}}}, {\"type\": \"function\", "
        "\"function\": {\"name\": \"schedule_brew\", \"description\": \"Brew a drink later\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"drink\": {\"type\": "
        "\"string\", \"enum\": [\"latte\", \"lungo\", \"flat_white\"]}, \"time\": {\"type\": "
        "\"string\", \"format\": \"time\"}}, \"required\": [\"drink\", \"time\"]}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    static const struct words_case cases[] = {
        {"i'd love a flat white right now", "brew_drink", "{\"drink\":\"flat_white\"}"},
        {"i'd love a large latte", "brew_drink", "{\"drink\":\"latte\",\"size\":\"large\"}"},
        {"i'd love a latte or a lungo", NULL, NULL},
        {"would i love a flat white?", NULL, NULL},
    };
    run_words_cases(&fx, "Glad it works.", cases, sizeof(cases) / sizeof(cases[0]), 0);
    teardown_fx(&fx);
}

/* An identifier the person wrote that matches the argument's anchored pattern is the value
 * ("reserve CH-5" -> "CH-55"); two such words, or an unanchored pattern, leave the model's. */
static void test_pattern_id_restored(void **state) {
    (void)state;
    static const char PACK[] =
        "{\"pipit\": {\"pack\": \"ev\"}, \"tools\": [{\"type\": \"function\", \"function\": "
        "{\"name\": \"reserve_charger\", \"description\": \"Reserve a charging station\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"station_id\": {\"type\": "
        "\"string\", \"pattern\": \"^CH-[0-9]{1,4}$\"}, \"note\": {\"type\": \"string\", "
        "\"pattern\": \"[a-z]\"}}, \"required\": [\"station_id\"]}}}]}";
    struct fixture fx;
    memset(&fx, 0, sizeof(fx));
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(PACK, strlen(PACK), "ev.json", &fx.ts, &err),
                     PIPIT_OK);
    struct pipit_agent_params p = pipit_agent_default_params();
    if (agent_new_with_backend(NULL, fx.ts, &p, fake_backend_wrap(&fx.fake), &fx.agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    static const struct args_case cases[] = {
        {"reserve CH-5", "reserve_charger(station_id=\"CH-55\")", "{\"station_id\":\"CH-5\"}",
         true},
        {"hold charger CH-88, please.", "reserve_charger(station_id=\"CH-8\")",
         "{\"station_id\":\"CH-88\"}", true},
        /* typed in small letters; shaped like the model's but outside the pattern: the
         * person's, which validation refuses (never a substitute) */
        {"reserve ch-5", "reserve_charger(station_id=\"CH-55\")", "{\"station_id\":\"CH-5\"}",
         true},
        {"reserve CH-12345", "reserve_charger(station_id=\"CH-1234\")",
         "{\"station_id\":\"CH-12345\"}", true},
        {"reserve CH-5 or CH-6", "reserve_charger(station_id=\"CH-56\")",
         "{\"station_id\":\"CH-56\"}", false},
        {"reserve the usual one", "reserve_charger(station_id=\"CH-7\")",
         "{\"station_id\":\"CH-7\"}", false},
        {"reserve CH-9 quickly", "reserve_charger(station_id=\"CH-9\", note=\"fast\")",
         "{\"station_id\":\"CH-9\",\"note\":\"fast\"}", false}, /* "note" is unanchored */
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    /* the person's identifier outside the pattern is refused with it, never run */
    script_call(&fx, "reserve_charger(station_id=\"CH-1234\")");
    struct pipit_turn *t = turn(&fx, "reserve CH-12345");
    if (t->calls[0].ok || strstr(t->sentence, "pattern") == NULL) {
        fail_msg("ran: %s", t->sentence);
    }
    pipit_turn_free(t);
    test_agent_free(fx.agent);
    pipit_toolset_free(fx.ts);
}

/* An item named by one of its numbers and its key's word ("the 5 minute one": the timer of 5
 * minutes) wins over the identifier the model took; a number alone names nothing. */
static void test_item_named_by_number(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    const char *const out[] = {
        "<call>set_timer(minutes=5)",
        "<call>set_timer(minutes=20)",
        "<call>cancel_timer(timer_id=\"TM-2\")",
        "<call>set_timer(minutes=20)",
        "<call>cancel_timer(timer_id=\"TM-2\")",
    };
    script(&fx, 5, out);
    pipit_turn_free(turn(&fx, "timer 5 min"));
    pipit_turn_free(turn(&fx, "and another one for 20 minutes"));
    struct pipit_turn *t = turn(&fx, "cancel the 5 minute one");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_string_equal(t->calls[0].args_json, "{\"timer_id\":\"TM-1\"}");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "one more for 20 minutes"));
    t = turn(&fx, "cancel number 20"); /* no key word: the model's */
    assert_false(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_string_equal(t->calls[0].args_json, "{\"timer_id\":\"TM-2\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A copy the model misspelt is put back to the person's words; a contact the model resolved,
 * an identifier and a body the model worded itself are left alone. */
static void test_person_words_restored(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    const char *const out[] = {
        "<call>send_message(recipient=\"Bobo\", body=\"hi there\")",
        "<call>send_message(recipient=\"Mom\", body=\"I am on the train\")",
        "<call>navigate_to(destination=\"Oaklend\", mode=\"driving\")",
        "<call>cancel_timer(timer_id=\"TM-5\")",
        "<call>send_message(recipient=\"mom\", body=\"mom\")",
        "<call>send_message(recipient=\"Sam\", body=\"Sam\")",
        "<call>create_note(title=\"ideas\", body=\"build\")",
        "<call>send_message(recipient=\"Sam\", body=\"see you\")",
        "<call>append_note(note_id=\"N-2\", text=\"rope\")",
        "<call>append_note(note_id=\"N-2\", text=\"tape\")",
        "<call>read_messages(thread_id=\"TH-1\")",
    };
    script(&fx, 11, out);
    struct pipit_turn *t = turn(&fx, "text Bob hi there");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "\"recipient\":\"Bob\""));
    pipit_turn_free(t);
    t = turn(&fx, "tell mum I'm on the train"); /* "Mom" is the contact: kept */
    assert_non_null(strstr(t->calls[0].args_json, "\"recipient\":\"Mom\""));
    /* "I am on the train" is a quarter away from the person's own words: theirs */
    assert_non_null(strstr(t->calls[0].args_json, "\"body\":\"I'm on the train\""));
    pipit_turn_free(t);
    t = turn(&fx, "drive to Oakland");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "\"destination\":\"Oakland\""));
    pipit_turn_free(t);
    t = turn(&fx, "cancel timer TM-1"); /* an identifier is never respelt */
    assert_false(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "TM-5"));
    pipit_turn_free(t);
    /* one copy for two arguments: the message is what follows the name */
    t = turn(&fx, "text mom saying I'm on my way!");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_string_equal(t->calls[0].args_json,
                        "{\"recipient\":\"mom\",\"body\":\"I'm on my way\"}");
    pipit_turn_free(t);
    t = turn(&fx, "text Sam"); /* nothing follows the name: left to the model */
    assert_false(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "\"body\":\"Sam\""));
    pipit_turn_free(t);
    /* a message copied short runs to the end of the segment, less a closing "please" */
    t = turn(&fx, "make a note called ideas: build a treehouse please");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_string_equal(t->calls[0].args_json,
                        "{\"title\":\"ideas\",\"body\":\"build a treehouse\"}");
    pipit_turn_free(t);
    /* the message is the rest after the name (the pack's example frame, agent_frame.h): the
     * tool takes no number, so the "5" is the message's */
    t = turn(&fx, "text Sam see you at 5");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "\"body\":\"see you at 5\""));
    pipit_turn_free(t);
    /* the item named by its title or contact, not the identifier the model took; "rope" is
     * not run on into "to the groceries note" */
    t = turn(&fx, "add rope to the groceries note");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_string_equal(t->calls[0].args_json, "{\"note_id\":\"N-1\",\"text\":\"rope\"}");
    pipit_turn_free(t);
    t = turn(&fx, "add tape to that note"); /* nothing named: the model's */
    assert_false(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "N-2"));
    pipit_turn_free(t);
    t = turn(&fx, "show me my chat with Mom");
    assert_string_equal(t->calls[0].args_json, "{\"thread_id\":\"TH-2\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A camera turn whose model answers `model` (a call without "<call>"): its arguments hold
 * `want`, PIPIT_TURN_WORDS_RESTORED is set exactly when `changed`, the call ran, and the
 * state holds key = value when key is given. */
struct choice_case {
    const char *say, *model, *want;
    bool changed;
    const char *key, *value;
};

/* Run `cases` in order on `fx` (a camera fixture, left open for the caller's own checks). */
static void run_choice_cases(struct fixture *fx, const struct choice_case *cases, size_t n) {
    for (size_t k = 0; k < n; k++) {
        script_call(fx, cases[k].model);
    }
    for (size_t k = 0; k < n; k++) {
        struct pipit_turn *t = turn(fx, cases[k].say);
        if (((t->flags & PIPIT_TURN_WORDS_RESTORED) != 0) != cases[k].changed || t->n_calls != 1 ||
            strstr(t->calls[0].args_json, cases[k].want) == NULL) {
            fail_msg("\"%s\": %s, want %s", cases[k].say, t->calls[0].args_json, cases[k].want);
        }
        assert_true(t->calls[0].executed && t->calls[0].ok); /* a legal value either way */
        if (cases[k].key != NULL) {
            assert_state(fx, cases[k].key, cases[k].value);
        }
        pipit_turn_free(t);
    }
}

/* The enum value or the on/off the person said (a value of five letters or more also with one
 * slip: "potrait") wins over the model's other choice; never when the segment negates, says two
 * values, or says none. */
static void test_person_choice_restored(void **state) {
    (void)state;
    static const struct choice_case cases[] = {
        {"turn the flash on please", "set_flash(mode=\"off\")", "\"mode\":\"on\"", true, "flash",
         "\"on\""},
        /* "of" after a verb of switching is "off" mistyped */
        {"turn of the flash", "set_flash(mode=\"on\")", "\"mode\":\"off\"", true, "flash",
         "\"off\""},
        /* ... and "of" that ends a segment with such a verb */
        {"turn the flsh of", "set_flash(mode=\"on\")", "\"mode\":\"off\"", true, "flash",
         "\"off\""},
        {"zoom in a little", "adjust_zoom(direction=\"out\")", "\"direction\":\"in\"", true, NULL,
         NULL},
        {"ditch the grid lines", "set_grid(enabled=true)", "\"enabled\":false", true, "grid",
         "false"}, /* off: "lose", "kill", "ditch", "remove", "get rid of" */
        {"show the grid lines", "set_grid(enabled=false)", "\"enabled\":true", true, "grid",
         "true"}, /* on */
        {"portrait mode", "set_scene_mode(mode=\"night\")", "\"mode\":\"portrait\"", true, NULL,
         NULL},
        /* the model's: negated, two values said, none said, "automatic" says "auto" beside
         * "on", the value said turned off, "on" before another tool's value */
        {"don't leave the flash on", "set_flash(mode=\"off\")", "\"mode\":\"off\"", false, NULL,
         NULL},
        {"put the flash on auto", "set_flash(mode=\"off\")", "\"mode\":\"off\"", false, NULL, NULL},
        {"make it look good in the dark", "set_scene_mode(mode=\"night\")", "\"mode\":\"night\"",
         false, NULL, NULL},
        {"flash on automatic", "set_flash(mode=\"off\")", "\"mode\":\"off\"", false, NULL, NULL},
        {"turn macro off", "set_scene_mode(mode=\"auto\")", "\"mode\":\"auto\"", false, NULL, NULL},
        {"put it on auto instead", "set_grid(enabled=false)", "\"enabled\":false", false, NULL,
         NULL},
        /* a start/stop switch's other verbs: "begin", "end" */
        {"begin recording a clip", "record_video(action=\"stop\")", "\"action\":\"start\"", true,
         "recording", "true"},
        {"end the clip now", "record_video(action=\"start\")", "\"action\":\"stop\"", true,
         "recording", "false"},
        /* a value that is a word of the tool's name names the tool: the other one is said */
        {"quality priority to speed", "set_quality_priority(priority=\"quality\")",
         "\"priority\":\"speed\"", true, "quality_priority", "\"speed\""},
        {"favor quality over speed", "set_quality_priority(priority=\"speed\")",
         "\"priority\":\"speed\"", false, NULL, NULL},
        /* a value of five letters or more said with one slip */
        {"potrait please", "set_scene_mode(mode=\"night\")", "\"mode\":\"portrait\"", true,
         "scene_mode", "\"portrait\""},
        {"nigth or macor", "set_scene_mode(mode=\"auto\")", "\"mode\":\"auto\"", false, NULL,
         NULL}, /* two values so said: the model's */
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    run_choice_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]));
    assert_state(&fx, "grid", "false"); /* the last call: the model's, not flipped */
    /* "begin" while recording: the model's "stop" would have ended the video */
    script(&fx, 2,
           (const char *const[]){"<call>record_video(action=\"start\")",
                                 "<call>record_video(action=\"stop\")"});
    pipit_turn_free(turn(&fx, "start recording"));
    struct pipit_turn *t = turn(&fx, "commence filming, please");
    assert_string_equal(t->calls[0].args_json, "{\"action\":\"start\"}");
    assert_string_equal(t->sentence, "A video is already recording.");
    assert_state(&fx, "recording", "true");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A switch call that changed nothing is read as the other side when the segment names the
 * switch and does not say this side (agent_guard.c, "no-op toggles"); the flipped call is what
 * runs, what the sentence says and what undo reverts. */
static void test_noop_switch_flipped(void **state) {
    (void)state;
    static const struct choice_case cases[] = {
        {"get the flash going", "set_flash(mode=\"off\")", "\"mode\":\"on\"", true, "flash",
         "\"on\""},
        {"use the flash", "set_flash(mode=\"on\")", "\"mode\":\"on\"", false, "flash", "\"on\""},
        {"drop the flash", "set_flash(mode=\"on\")", "\"mode\":\"off\"", true, "flash", "\"off\""},
        {"flash off", "set_flash(mode=\"off\")", "\"mode\":\"off\"", false, "flash", "\"off\""},
        {"don't use the flash", "set_flash(mode=\"off\")", "\"mode\":\"off\"", false, "flash",
         "\"off\""},
        {"put the flash on auto", "set_flash(mode=\"off\")", "\"mode\":\"off\"", false, "flash",
         "\"off\""},
        {"pin the focus", "set_ae_af_lock(locked=false)", "\"locked\":true", true, "ae_af_locked",
         "true"},
        {"grid away", "set_grid(enabled=false)", "\"enabled\":false", false, "grid", "false"},
        {"could I get the grid", "set_grid(enabled=false)", "\"enabled\":true", true, "grid",
         "true"},
        {"lose the grid", "set_grid(enabled=true)", "\"enabled\":false", true, "grid", "false"},
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    run_choice_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]));
    /* the flipped call is the action undo reverts */
    struct pipit_turn *t = turn(&fx, "undo");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "grid", "true");
    pipit_turn_free(t);
    /* the sentence says the flipped value */
    const char *again[] = {"<call>set_flash(mode=\"off\")"};
    script(&fx, 1, again);
    t = turn(&fx, "get the flash going");
    assert_string_equal(t->sentence, "The flash is on.");
    pipit_turn_free(t);
    /* a switch the device refused because it already is that side ("No video is recording.")
     * is read as the other side too; "stop" said keeps the refusal */
    const char *rec[] = {"<call>record_video(action=\"stop\")",
                         "<call>record_video(action=\"start\")",
                         "<call>record_video(action=\"stop\")"};
    script(&fx, 3, rec);
    t = turn(&fx, "record him chasing the ball");
    assert_int_equal(t->n_calls, 1);
    assert_true(t->calls[0].ok);
    assert_string_equal(t->calls[0].args_json, "{\"action\":\"start\"}");
    assert_string_equal(t->sentence, "Recording started.");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_state(&fx, "recording", "true");
    pipit_turn_free(t);
    t = turn(&fx, "film the next bit too"); /* start while recording, no off word: kept */
    assert_false(t->calls[0].ok);
    assert_string_equal(t->sentence, "A video is already recording.");
    pipit_turn_free(t);
    t = turn(&fx, "stop the recording");
    assert_true(t->calls[0].ok);
    assert_state(&fx, "recording", "false");
    pipit_turn_free(t);
    script(&fx, 1, rec);
    t = turn(&fx, "stop the recording"); /* nothing records and "stop" was said: refused */
    assert_false(t->calls[0].ok);
    assert_string_equal(t->sentence, "No video is recording.");
    assert_state(&fx, "recording", "false");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "max" and "min" said without a number: the numeric argument's schema bound, whatever the
 * model wrote; never for a step, a negation, both words, or a number said. */
static void test_bound_words_restored(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct args_case cases[] = {
        {"jpeg at max", "set_jpeg_quality(quality=60)", "{\"quality\":100}", true},
        {"set the exposure to the minimum", "set_exposure(ev=-1)", "{\"ev\":-2}", true},
        {"highest jpeg quality", "set_jpeg_quality(quality=100)", "{\"quality\":100}", false},
        {"not the max jpeg please", "set_jpeg_quality(quality=70)", "{\"quality\":70}", false},
        {"max jpeg, well 90", "set_jpeg_quality(quality=90)", "{\"quality\":90}", false},
        {"max or min exposure", "set_exposure(ev=1)", "{\"ev\":1}", false},
        /* "all the way" and a direction */
        {"zoom out all the way", "set_zoom(level=9)", "{\"level\":0.5}", true},
        {"go all the way wide", "set_zoom(level=1)", "{\"level\":0.5}", true},
        {"all the way in on the zoom", "set_zoom(level=3)", "{\"level\":10}", true},
        /* both directions said: the one next to "all the way" */
        {"zoom out all the way, need everyone in", "set_zoom(level=9)", "{\"level\":0.5}", true},
        {"zoom all the way in, out of the crowd", "set_zoom(level=1)", "{\"level\":10}", true},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_NUMBER_RESTORED);
    teardown_fx(&fx);
}

/* A call that changed nothing, for a segment that names neither what the tool acts on nor a
 * value of the call and is no follow-up, is not presented as asked for: the sentence says
 * nothing changed (flag not_asked); the call's record stays as it ran. */
static void test_not_asked_noop(void **state) {
    (void)state;
    static const struct {
        const char *say;
        bool not_asked;
    } cases[] = {
        {"alright everyone squeeze in", true}, /* ("alright snap us": the verb of take_photo) */
        {"turn the timer off", false},         /* names the timer */
        {"a bit more", false},                 /* a follow-up */
        {"make it 0", false},                  /* says the value */
        {"sky looks weird huh", true},         /* ("lol nice sky" is praise: small talk) */
    };
    enum {
        N = sizeof(cases) / sizeof(cases[0])
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[N];
    for (size_t k = 0; k < N; k++) {
        out[k] = "<call>set_timer(seconds=0)";
    }
    script(&fx, N, out);
    for (size_t k = 0; k < N; k++) {
        struct pipit_turn *t = turn(&fx, cases[k].say);
        assert_int_equal(t->n_calls, 1);
        /* a number nobody said for a setting nobody named does not even run
         * (test_number_guessed); the others ran */
        assert_true(cases[k].not_asked || (t->calls[0].executed && t->calls[0].ok));
        if (((t->flags & PIPIT_TURN_NOT_ASKED) != 0) != cases[k].not_asked) {
            fail_msg("\"%s\": %s", cases[k].say, t->sentence);
        }
        if (cases[k].not_asked) {
            char want[160];
            snprintf(want, sizeof(want),
                     "I'm not sure what you meant by \"%s\", so nothing changed.", cases[k].say);
            assert_string_equal(t->sentence, want);
        } else {
            assert_null(strstr(t->sentence, "not sure"));
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

static void setup_home_pack(struct fixture *fx);

/* A switch phrase whose thing the pack has nothing for ("turn on HDR") does not run the model's
 * call to another tool: no call, flag unknown_thing, the sentence says no tool does it. A thing
 * the pack names (one slip away, a longer form, beside "mode"), a pronoun and a segment with no
 * switch phrase keep the call. */
static void test_unknown_thing_not_run(void **state) {
    (void)state;
    static const struct {
        const char *say, *model;
        bool unknown;
    } cases[] = {
        {"turn on HDR for the candles", "set_grid(enabled=true)", true},
        {"turn on HDR, the shade is bright", "set_scene_mode(mode=\"landscape\")", true},
        /* "set the X to V": X and V both named by no word of the pack */
        {"set the iso to 800", "set_exposure(ev=1)", true},
        {"please change the shutter sound to quiet", "set_grid(enabled=true)", true},
        {"set the flash to off", "set_flash(mode=\"off\")", false},
        {"set it to 3", "set_zoom(level=3)", false},
        /* "X mode", "X setting": X of one or two words before it */
        {"burst mode please", "set_scene_mode(mode=\"auto\")", true},
        {"go for the hyperlapse setting", "set_timer(seconds=10)", true},
        {"portrait mode please", "set_scene_mode(mode=\"portrait\")", false},
        {"normal setting please", "set_scene_mode(mode=\"auto\")", false},
        /* a number the model's tool takes: the thing said by another word ("brightness") */
        {"set the brightness to 1", "set_exposure(ev=1)", false},

        {"enable burst mode", "set_scene_mode(mode=\"sports\")", true},
        {"switch the lights on", "set_flash(mode=\"on\")", true},
        {"turn on the grid", "set_grid(enabled=true)", false},
        {"turn on the flsh", "set_flash(mode=\"on\")", false},
        {"switch the falsh off", "set_flash(mode=\"off\")", false}, /* two letters swapped */
        {"switch the heater off", "set_flash(mode=\"off\")", true},
        {"turn on night mode", "set_scene_mode(mode=\"night\")", false},
        {"turn it off", "set_grid(enabled=false)", false},
        {"activate the level", "set_horizon_level(enabled=true)", false},
        {"use the flash", "set_flash(mode=\"off\")", false},
    };
    enum {
        N = sizeof(cases) / sizeof(cases[0])
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    for (size_t k = 0; k < N; k++) {
        script_call(&fx, cases[k].model);
    }
    for (size_t k = 0; k < N; k++) {
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (((t->flags & PIPIT_TURN_UNKNOWN_THING) != 0) != cases[k].unknown ||
            t->n_calls != (cases[k].unknown ? 0 : 1)) {
            fail_msg("\"%s\": %zu calls, \"%s\"", cases[k].say, t->n_calls, t->sentence);
        }
        if (cases[k].unknown) {
            assert_non_null(strstr(t->sentence, "none of my tools does that, so I did nothing."));
            assert_state(&fx, "scene_mode", "\"auto\""); /* nothing ran */
            assert_state(&fx, "flash", "\"off\"");
        }
        pipit_turn_free(t);
    }
    assert_state(&fx, "grid", "false"); /* "turn on the grid", then "turn it off" */
    teardown_fx(&fx);
    /* a place the pack has does not make the thing after it the pack's (home pack) */
    setup_home_pack(&fx);
    script_call(&fx, "switch_light(room=\"bedroom\", on=true)");
    struct pipit_turn *t = turn(&fx, "turn on the bedroom fan");
    assert_true(t->flags & PIPIT_TURN_UNKNOWN_THING);
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    assert_state(&fx, "bedroom_light", "false");
    script_call(&fx, "switch_light(room=\"bedroom\", on=true)");
    t = turn(&fx, "turn on the bedroom light");
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A question that asks rather than requests ("should I use the flash at a wedding?") does not
 * run the model's call of a tool that changes things: the pack's cloud tool gets the person's
 * words (flag open_question); a request said as a question ("can you ...", "do a ...") runs. */
static void test_open_question_not_acted(void **state) {
    (void)state;
    static const struct {
        const char *say, *model;
        bool question;
    } cases[] = {
        {"should I use the flash at a wedding?", "set_flash(mode=\"on\")", true},
        {"how long can a phone record video before it overheats", "record_video(action=\"start\")",
         true},
        {"so what settings do pros use for fireworks", "set_scene_mode(mode=\"night\")", true},
        {"do you think the grid helps beginners", "set_grid(enabled=true)", true},
        {"any tips for night shots without flash?", "set_flash(mode=\"off\")", true},
        {"how do I clean the flash", "set_flash(mode=\"on\")", true}, /* names it, says no side */
        /* a request word after the question's clause; "do I need"; a leading "roughly";
         * "going to" is what will be, not the state */
        {"is it going to rain tomorrow? wondering if i can shoot the parade",
         "set_scene_mode(mode=\"night\")", true},
        {"roughly how much light do I need for a portrait?", "set_flash(mode=\"on\")", true},
        /* "the best way to" asks for advice (a treadmill's "whats the best way to breathe when
         * running uphill" had raised its incline) */
        {"whats the best way to hold the camera when running", "set_zoom(level=3)", true},
        /* "do" before any subject asks when the person closed it with a "?" (the router trims
         * the mark; the question tests get it back); what is done after "do" is a request */
        {"do birds actually sleep?", "set_flash(mode=\"on\")", true},
        {"do the lights need to be on?", "set_flash(mode=\"on\")", true},
        {"is the flash on? if so turn it off", "set_flash(mode=\"off\")", false},
        {"can you turn the flash on", "set_flash(mode=\"on\")", false},
        {"could I get the grid on", "set_grid(enabled=true)", false},
        {"do it with the grid off", "set_grid(enabled=false)", false},
        {"is there a way to zoom to 3x", "set_zoom(level=3)", false},

        {"we're at the beach, zoom to 2", "set_zoom(level=2)", false},
        /* "do" before any subject asks without a "?" only before I/we/you/they */
        {"do birds actually sleep", "set_flash(mode=\"on\")", false},
        {"do a quick test with the grid on?", "set_grid(enabled=true)", false},
        {"do it again with the flash?", "set_flash(mode=\"on\")", false},
    };
    enum {
        N = sizeof(cases) / sizeof(cases[0])
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    for (size_t k = 0; k < N; k++) {
        script_call(&fx, cases[k].model);
    }
    for (size_t k = 0; k < N; k++) {
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool flagged = (t->flags & PIPIT_TURN_OPEN_QUESTION) != 0;
        if (flagged != cases[k].question || t->n_calls != 1) {
            fail_msg("\"%s\": flag %d, %zu calls, \"%s\"", cases[k].say, flagged, t->n_calls,
                     t->sentence);
        }
        bool cloud = strcmp(t->calls[0].tool, "process_with_cloud_llm") == 0;
        if (cloud != cases[k].question) {
            fail_msg("\"%s\": called %s", cases[k].say, t->calls[0].tool);
        }
        if (cloud) {
            json_t *args = json_loads(t->calls[0].args_json, 0, NULL);
            const char *asked = json_string_value(json_object_get(args, "user_query_context"));
            assert_non_null(asked); /* the person's words (the segment: no closing "?") */
            assert_int_equal(strncmp(asked, cases[k].say, strlen(asked)), 0);
            assert_true(strlen(asked) + 1 >= strlen(cases[k].say));
            json_decref(args);
            assert_state(&fx, "flash", "\"off\""); /* nothing of the camera ran */
            assert_state(&fx, "recording", "false");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* "is it bad to ..." asks about what follows its "it", not about an earlier action: answered in
 * plain text by the model, it goes to the cloud (a treadmill's "is it bad to run every single
 * day" had been "Sorry, I can't answer that here."); "is it on?" still points back. A leading
 * "roughly" is a filler: "roughly whats the battery drain of an hour of zoom" asks about the
 * drain, not the zoom (it had been "The zoom is 1x."). */
static void test_question_of_what_follows(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script(&fx, 1, (const char *const[]){"Okay."});
    struct pipit_turn *t = turn(&fx, "is it bad to skip breakfast every day");
    assert_true((t->flags & PIPIT_TURN_OPEN_QUESTION) != 0);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "process_with_cloud_llm");
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "is it on?");
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    script_call(&fx, "process_with_cloud_llm(user_query_context=\"battery drain\", "
                     "reason_for_escalation=\"general knowledge\")");
    t = turn(&fx, "roughly whats the battery drain of an hour of zoom use");
    assert_true((t->flags & PIPIT_TURN_STATE_ANSWER) == 0);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "process_with_cloud_llm");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A call of the model on a segment that asks for the earlier state, with none of its values
 * said, reverts the newest logged action on the tool's keys instead of running: "I prefer the
 * flash the way I had it" -> set_flash(mode="auto") would have been a guess. A value said
 * ("back to auto") or a direction ("zoom back a step") runs. */
static void test_undo_instead_of_a_guess(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_flash(mode=\"on\")");
    script_call(&fx, "set_flash(mode=\"auto\")");
    script_call(&fx, "set_flash(mode=\"on\")");
    script_call(&fx, "set_flash(mode=\"auto\")");
    script_call(&fx, "set_flash(mode=\"auto\")");
    script_call(&fx, "set_zoom(level=3)");
    script_call(&fx, "adjust_zoom(direction=\"out\")");
    pipit_turn_free(turn(&fx, "flash on"));
    struct pipit_turn *t = turn(&fx, "hmm, I prefer the flash the way I had it");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].code, "undo_instead");
    assert_false(t->calls[0].executed);
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "flash on"));
    t = turn(&fx, "only the flash - set that one back to what it was"); /* "one": no number */
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    t = turn(&fx, "set the flash back to auto");
    assert_false(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "flash", "\"auto\"");
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "zoom to 3"));
    t = turn(&fx, "zoom back a step");
    assert_false(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The model's undo() on a segment that asks for a value to reach ("set it to 5 ...") does not
 * run; a number that names the thing to undo does not stop it. */
static void test_model_undo_for_a_value(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *out[] = {"<call>set_zoom(level=2)", "<call>undo()", "<call>undo()"};
    script(&fx, 3, out);
    pipit_turn_free(turn(&fx, "zoom to 2"));
    struct pipit_turn *t = turn(&fx, "put it at 5 for the kids");
    assert_true(t->flags & PIPIT_TURN_NOT_ASKED);
    assert_false(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    t = turn(&fx, "ugh, all 3 of us hate it"); /* a number, not a value to reach */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "undo");
    assert_true(t->calls[0].executed);
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Right after a question the state answered, "what about the grid?" and "and the timer?" ask
 * the same of another key; "what about 3x?" asks for something (the model's); without a
 * question before, "what about the grid?" is the model's too. */
static void test_what_about_after_question(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_zoom(level=3)");
    script_call(&fx, "set_grid(enabled=true)");
    struct pipit_turn *t = turn(&fx, "is the flash on?");
    assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    t = turn(&fx, "what about the grid?");
    assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
    assert_int_equal(t->n_calls, 0);
    assert_non_null(strstr(t->sentence, "grid"));
    pipit_turn_free(t);
    t = turn(&fx, "and the timer?");
    assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
    assert_int_equal(t->n_calls, 0);
    assert_non_null(strstr(t->sentence, "timer"));
    pipit_turn_free(t);
    t = turn(&fx, "what about 3x?");
    assert_false(t->flags & PIPIT_TURN_STATE_ANSWER);
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    t = turn(&fx, "what about the grid?"); /* the turn before asked nothing */
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A statement and a tag that asks whether it holds ("back camera now, right?") is answered
 * from the state; a command with a tag ("take a photo yeah?") is still a command. */
static void test_tag_question(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "switch_camera(facing=\"back\")");
    script_call(&fx, "take_photo()");
    static const char *const ASKED[] = {"back camera now, right?", "the flash is off, right?",
                                        "grid's on now, isn't it?", "flash on yeah?"};
    for (size_t i = 0; i < sizeof(ASKED) / sizeof(ASKED[0]); i++) {
        struct pipit_turn *t = turn(&fx, ASKED[i]);
        if (!(t->flags & PIPIT_TURN_STATE_ANSWER) || t->n_calls != 0) {
            fail_msg("\"%s\": %zu calls, \"%s\"", ASKED[i], t->n_calls, t->sentence);
        }
        pipit_turn_free(t);
    }
    struct pipit_turn *t = turn(&fx, "back camera now?"); /* no tag: may be a request */
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    t = turn(&fx, "take a photo yeah?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "take_photo");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Right after "is the grid on?", "ok turn it off" switches the grid, whatever other switch
 * the model chose; after an action, "it" is the model's to read. */
static void test_it_is_the_asked_key(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_grid(enabled=true)");
    script_call(&fx, "set_flash(mode=\"on\")"); /* the model's "it" after "is the grid on?" */
    pipit_turn_free(turn(&fx, "grid on"));
    struct pipit_turn *t = turn(&fx, "is the grid on?");
    assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    t = turn(&fx, "ok turn it off");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_grid");
    assert_state(&fx, "grid", "false");
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "restore the zoom to what it was" names the zoom; right after an undo, "and the flash too"
 * reverts the flash as well; "the previous zoom" names it by an adjective of the earlier state;
 * no tool runs. */
static void test_undo_restore_named(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_zoom(level=3)");
    script_call(&fx, "set_flash(mode=\"on\")");
    script_call(&fx, "set_zoom(level=2)");
    pipit_turn_free(turn(&fx, "zoom to 3"));
    pipit_turn_free(turn(&fx, "flash on"));
    struct pipit_turn *t = turn(&fx, "hmm on second thoughts restore the zoom to what it was");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "zoom", "1.0");
    assert_state(&fx, "flash", "\"on\"");
    pipit_turn_free(t);
    t = turn(&fx, "and the flash too");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "zoom to 2"));
    /* a restore of something no logged action names, with an earlier state said: the newest */
    pipit_turn_free(turn(&fx, "flash on"));
    t = turn(&fx, "make the light of the shot what it used to be");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "flash", "\"off\"");
    pipit_turn_free(t);
    t = turn(&fx, "eh no, the previous zoom please");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "undo the zoom" reverts the newest action on the zoom alone, not the flash set after it, and
 * no tool runs; a thing of the pack with no action to undo says so; a phrase with no word of
 * the pack goes to the model. */
static void test_undo_named(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_zoom(level=3)");
    script_call(&fx, "set_flash(mode=\"on\")");
    script_call(&fx, "set_grid(enabled=true)"); /* the model's, for "undo the damage" */
    pipit_turn_free(turn(&fx, "zoom to 3"));
    pipit_turn_free(turn(&fx, "flash on"));
    struct pipit_turn *t = turn(&fx, "undo the zoom");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "zoom", "1.0");
    assert_state(&fx, "flash", "\"on\"");
    assert_null(strstr(t->sentence, "flash"));
    pipit_turn_free(t);
    t = turn(&fx, "undo the timer please");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_string_equal(t->sentence,
                        "There's nothing to undo for the timer: I haven't changed it.");
    pipit_turn_free(t);
    t = turn(&fx, "undo"); /* the zoom's entry is gone: the flash is next */
    assert_state(&fx, "flash", "\"off\"");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "undo the damage");
    assert_false(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Follow-ups that name nothing are the harness's, from the last action: "a bit more" repeats a
 * zoom step and "the other way" turns it round without a model call; "another" repeats a photo;
 * "try again" retries a failed call; "again" after a setting that succeeded (it would change
 * nothing) and a follow-up after an undo go to the model. */
/* "all the way" after a setting goes to the end of the range it moved toward; a value of the
 * last tool said alone ("actually cloudy", "make it night", "wait no, daylight") is the last
 * call with it; "no daylight" is no such value. No model call for either. */
static void test_followup_all_the_way_and_value(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_zoom(level=3)");
    script_call(&fx, "set_white_balance(mode=\"daylight\")");
    script_call(&fx, "set_grid(enabled=true)"); /* the model's for "no cloudy please" */
    pipit_turn_free(turn(&fx, "zoom to 3"));
    struct pipit_turn *t = turn(&fx, "all the way");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_null(t->model_text);
    assert_state(&fx, "zoom", "10.0");
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "white balance daylight"));
    t = turn(&fx, "hmm actually cloudy");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_null(t->model_text);
    assert_state(&fx, "white_balance", "\"cloudy\"");
    pipit_turn_free(t);
    t = turn(&fx, "wait no, daylight"); /* "no," corrects: the value after it */
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_state(&fx, "white_balance", "\"daylight\"");
    pipit_turn_free(t);
    t = turn(&fx, "no cloudy please");
    assert_false(t->flags & PIPIT_TURN_FOLLOW_UP);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_followup_last_action(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const char *const out[] = {
        "<call>adjust_zoom(direction=\"in\")", /* zoom in */
        "<call>take_photo()",                  /* snap it */
        "<call>set_flash(mode=\"on\")",        /* flash on */
        "<call>set_grid(enabled=true)",        /* again: the model's */
        "<call>set_zoom(level=50)",            /* zoom 50x: refused */
    };
    script(&fx, 5, out);
    char v[64];
    struct pipit_turn *t = turn(&fx, "zoom in");
    pipit_turn_free(t);
    state_key(&fx, "zoom", v, sizeof(v));
    assert_string_equal(v, "2.0");
    static const struct {
        const char *say, *zoom;
    } STEPS[] = {{"a bit more", "3.0"}, {"too much, the other way", "2.0"}, {"again", "1.0"}};
    for (size_t k = 0; k < 3; k++) {
        t = turn(&fx, STEPS[k].say);
        assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
        assert_int_equal(t->n_calls, 1);
        assert_string_equal(t->calls[0].tool, "adjust_zoom");
        assert_true(t->calls[0].ok);
        assert_null(t->model_text); /* no model call */
        state_key(&fx, "zoom", v, sizeof(v));
        if (strcmp(v, STEPS[k].zoom) != 0) {
            fail_msg("\"%s\": zoom %s, want %s (%s)", STEPS[k].say, v, STEPS[k].zoom, t->sentence);
        }
        pipit_turn_free(t);
    }
    assert_int_equal(fx.fake.next, 1);
    pipit_turn_free(turn(&fx, "snap it"));
    t = turn(&fx, "someone blinked, another");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_string_equal(t->calls[0].tool, "take_photo");
    pipit_turn_free(t);
    state_key(&fx, "photos_taken", v, sizeof(v));
    assert_string_equal(v, "2");
    /* a setting that succeeded: "again" would change nothing, so the model reads it */
    pipit_turn_free(turn(&fx, "flash on"));
    t = turn(&fx, "again");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) == 0);
    assert_string_equal(t->calls[0].tool, "set_grid");
    pipit_turn_free(t);
    /* a refused call is retried as it was, and refused the same way: never bent */
    t = turn(&fx, "zoom 50x");
    assert_false(t->calls[0].ok);
    pipit_turn_free(t);
    t = turn(&fx, "try again");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_string_equal(t->calls[0].tool, "set_zoom");
    assert_false(t->calls[0].ok);
    pipit_turn_free(t);
    /* after an undo, "the other way" has no action to turn round */
    pipit_turn_free(turn(&fx, "undo"));
    assert_int_equal(fx.fake.next, 5);
    script(&fx, 1, (const char *const[]){"<call>adjust_zoom(direction=\"out\")"});
    t = turn(&fx, "undo");
    pipit_turn_free(t);
    t = turn(&fx, "the other way");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) == 0);
    assert_int_equal(fx.fake.next, 6);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A fixture on tools/home.json (the shipped pack) and its generic device. */
/* A pack less its cloud tool, on `device` ("camera", "pack"): a question is then kept from
 * acting, not delegated. */
static void setup_no_cloud(struct fixture *fx, const char *path, const char *device) {
    memset(fx, 0, sizeof(*fx));
    json_error_t jerr;
    json_t *spec = json_load_file(path, 0, &jerr);
    assert_non_null(spec);
    json_t *tools = json_object_get(spec, "tools");
    for (size_t i = json_array_size(tools); i-- > 0;) {
        json_t *fn = json_object_get(json_array_get(tools, i), "function");
        if (strcmp(json_string_value(json_object_get(fn, "name")), "process_with_cloud_llm") == 0) {
            json_array_remove(tools, i);
        }
    }
    char *text = json_dumps(spec, 0);
    json_decref(spec);
    fx->ts = test_tools_from(text, strcmp(device, "pack") == 0 ? "home" : device);
    free(text);
    fx->device = test_device(device, fx->ts, NULL);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx->device;
    struct pipit_error err;
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
}

/* An agent on the home pack, its state from `init` (NULL: the pack's initial values). */
static void setup_home_with(struct fixture *fx, const char *init) {
    memset(fx, 0, sizeof(*fx));
    fx->ts = test_load_tools(PIPIT_SOURCE_DIR "/tools/home.json");
    fx->device = test_device("pack", fx->ts, init);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx->device;
    struct pipit_error err;
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
}

static void setup_home_pack(struct fixture *fx) {
    setup_home_with(fx, NULL);
}

/* On tools/home.json: the room the person did not say is the last action's ("bit dimmer" after
 * the lounge light went on), a room said or named by its key's words ("lounge light") is the
 * model's; "dimmer still" repeats the last step the way it names. */
static void test_carried_room_and_direction(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    static const char *const out[] = {
        "<call>switch_light(room=\"living_room\", on=true)",
        "<call>adjust_brightness(room=\"bedroom\", direction=\"dimmer\")",
        "<call>set_light_colour(room=\"kitchen\", colour=\"purple\")",
        "<call>set_light_colour(room=\"bedroom\", colour=\"red\")",
        "<call>switch_light(room=\"kitchen\", on=false)",
    };
    script(&fx, 5, out);
    pipit_turn_free(turn(&fx, "lounge light on, it's dark"));
    struct pipit_turn *t = turn(&fx, "bit dimmer");
    assert_true((t->flags & PIPIT_TURN_CARRIED) != 0);
    assert_string_equal(t->calls[0].args_json,
                        "{\"room\":\"living_room\",\"direction\":\"dimmer\"}");
    pipit_turn_free(t);
    assert_state(&fx, "living_room_brightness", "70");
    t = turn(&fx, "dimmer still"); /* the harness's: no model call */
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_int_equal(t->model_calls, 0);
    pipit_turn_free(t);
    assert_state(&fx, "living_room_brightness", "60");
    t = turn(&fx, "purple for fun"); /* no room said: the last action's, not the kitchen */
    assert_true((t->flags & PIPIT_TURN_CARRIED) != 0);
    assert_state(&fx, "living_room_colour", "\"purple\"");
    pipit_turn_free(t);
    t = turn(&fx, "bedside lamp red please"); /* named by its key's words: the model's room */
    assert_true((t->flags & PIPIT_TURN_CARRIED) == 0);
    assert_state(&fx, "bedroom_colour", "\"red\"");
    pipit_turn_free(t);
    t = turn(&fx, "kitchn lihgt off"); /* the model's room, said with a typo: the kitchen */
    assert_true((t->flags & PIPIT_TURN_CARRIED) == 0);
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"kitchen\",\"on\":false}");
    pipit_turn_free(t);
    /* an action that took no place but changed one room's keys (a scene of the living room):
     * that room */
    script_call(&fx, "activate_scene(scene=\"relax\")");
    script_call(&fx, "adjust_brightness(room=\"bedroom\", direction=\"brighter\")");
    pipit_turn_free(turn(&fx, "switch to the relax scene"));
    t = turn(&fx, "a touch brighter in there");
    assert_true((t->flags & PIPIT_TURN_CARRIED) != 0);
    assert_string_equal(t->calls[0].args_json,
                        "{\"room\":\"living_room\",\"direction\":\"brighter\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "switch off the kitchen and living room lights": the second segment says what, the first's
 * verb says what to do ("switch off living room lights"), so the model's "on" for it is the
 * person's "off"; a segment with its own switch word or its own verb keeps its words. Then
 * "make it 18.5" after a step of 2 degrees is the key's setter, not a step of 18.5. */
static void test_first_verb_shared(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    static const char *const out[] = {
        "<call>switch_light(room=\"living_room\", on=true)",
        "<call>switch_light(room=\"kitchen\", on=false)",
        "<call>switch_light(room=\"living_room\", on=true)",
        "<call>switch_light(room=\"kitchen\", on=false)",
        "<call>switch_light(room=\"bedroom\", on=true)",
    };
    script(&fx, 5, out);
    pipit_turn_free(turn(&fx, "turn on the living room light"));
    struct pipit_turn *t = turn(&fx, "switch off the kitchen and living room lights");
    assert_int_equal(t->n_calls, 2);
    assert_string_equal(t->calls[1].args_json, "{\"room\":\"living_room\",\"on\":false}");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_state(&fx, "living_room_light", "false");
    pipit_turn_free(t);
    t = turn(&fx, "kitchen light off and the bedroom on"); /* its own "on": kept */
    assert_int_equal(t->n_calls, 2);
    assert_state(&fx, "bedroom_light", "true");
    pipit_turn_free(t);
    /* "make it 18.5" after a step: no step of 18.5 degrees, the heating at 18.5 */
    script_call(&fx, "adjust_thermostat(degrees=2)");
    pipit_turn_free(turn(&fx, "turn the heat up 2"));
    t = turn(&fx, "make it 18.5");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_int_equal(t->model_calls, 0);
    assert_string_equal(t->calls[0].tool, "set_thermostat");
    assert_state(&fx, "thermostat", "18.5");
    pipit_turn_free(t);
    t = turn(&fx, "make it 3"); /* the last call is the setter now: its number */
    assert_string_equal(t->calls[0].tool, "set_thermostat");
    pipit_turn_free(t);
    /* ... in words too ("ok seventy then" after a refusal had been small talk) */
    t = turn(&fx, "ok twenty one then");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_int_equal(t->model_calls, 0);
    assert_state(&fx, "thermostat", "21.0");
    pipit_turn_free(t);
    /* "down to 19" after a step: a value to reach ("to"), the setter, even for a number a
     * step takes; "too much, down to 19" says how far too */
    script_call(&fx, "adjust_thermostat(degrees=2)");
    pipit_turn_free(turn(&fx, "turn the heat up 2"));
    t = turn(&fx, "too much, down to 19 please");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_string_equal(t->calls[0].tool, "set_thermostat");
    assert_state(&fx, "thermostat", "19.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "turn off all the lights": the model's call for one room runs for every room, and undo puts
 * them all back; a room said ("all the lights in the kitchen") and a call without a place keep
 * the one call. */
static void test_every_place(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    static const char *const out[] = {
        "<call>switch_light(room=\"bedroom\", on=true)",
        "<call>switch_light(room=\"bedroom\", on=true)",
        "<call>switch_light(room=\"kitchen\", on=false)",
        "<call>set_timer(minutes=5)",
    };
    script(&fx, 4, out);
    struct pipit_turn *t = turn(&fx, "turn on all the lights");
    assert_int_equal(t->n_calls, 3);
    assert_int_equal(t->model_calls, 1);
    assert_state(&fx, "living_room_light", "true");
    assert_state(&fx, "kitchen_light", "true");
    assert_state(&fx, "bedroom_light", "true");
    pipit_turn_free(t);
    t = turn(&fx, "undo"); /* one request: every room back, each said by its own key */
    assert_string_equal(t->sentence, "The kitchen light is off again. The living room light is "
                                     "off again. The bedroom light is off again.");
    assert_state(&fx, "living_room_light", "false");
    assert_state(&fx, "bedroom_light", "false");
    pipit_turn_free(t);
    pipit_turn_free(turn(&fx, "turn on all the lights"));
    t = turn(&fx, "all the lights off in the kitchen"); /* a room said: that one */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "switch_light");
    assert_state(&fx, "kitchen_light", "false");
    assert_state(&fx, "bedroom_light", "true");
    pipit_turn_free(t);
    t = turn(&fx, "timer for all of us, 5 minutes"); /* no place to go round */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_timer");
    pipit_turn_free(t);
    assert_int_equal(fx.fake.next, 4);
    /* "all" that is no quantifier of the lights: one call */
    script(&fx, 1, (const char *const[]){"<call>switch_light(room=\"bedroom\", on=false)"});
    t = turn(&fx, "lights off, all the way in here");
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    /* half a turn changed nothing (the kitchen was off): "undo that" undoes the other half,
     * and says the keys it put back, not "nothing changed" */
    script(&fx, 2,
           (const char *const[]){"<call>set_light_colour(room=\"living_room\", colour=\"purple\")",
                                 "<call>switch_light(room=\"kitchen\", on=false)"});
    pipit_turn_free(turn(&fx, "make the living room lights purple and switch off the kitchen"));
    assert_state(&fx, "living_room_colour", "\"purple\"");
    t = turn(&fx, "undo that");
    assert_null(strstr(t->sentence, "nothing"));
    assert_non_null(strstr(t->sentence, "The living room colour is warm again."));
    assert_state(&fx, "living_room_colour", "\"warm\"");
    pipit_turn_free(t);
    /* the plural of a declared name's last word ("bedside lamp": "lamps") quantifies too */
    script(&fx, 1, (const char *const[]){"<call>switch_light(room=\"kitchen\", on=true)"});
    t = turn(&fx, "switch on all the lamps");
    assert_int_equal(t->n_calls, 3);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A number said in words that the model copied in pieces or guessed near is the person's
 * ("twenty five minutes" -> 205 becomes 25); a step's own number takes the model's sign; a
 * setter said with words of a relative change moves the state (test_setting_changed_by), and a
 * lone "one" stays the model's. A number
 * with an argument's name as its unit ("3 degrees") names that argument's tool. */
static void test_number_words_restored(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    static const struct args_case cases[] = {
        {"remind me in twenty five minutes", "set_timer(minutes=205)", "{\"minutes\":25}", true},
        {"lights to fifty percent in the kitchen", "set_brightness(room=\"kitchen\", percent=40)",
         "{\"room\":\"kitchen\",\"percent\":50}", true},
        {"turn the heat down three", "adjust_thermostat(degrees=-2)", "{\"degrees\":-3}", true},
        /* a change said to a setter: the state's 25 minutes moved by it */
        {"make the timer five minutes longer", "set_timer(minutes=15)", "{\"minutes\":30}", true},
        /* a span of time in words: halves and all, refused when the argument is whole */
        {"timer for two and a half minutes", "set_timer(minutes=3)", "{\"minutes\":2.5}", true},
        {"timer for an hour and a half", "set_timer(minutes=1)", "{\"minutes\":90}", true},
        {"set a timer for half an hour", "set_timer(minutes=3)", "{\"minutes\":30}", true},
        {"timer for a quarter of an hour", "set_timer(minutes=4)", "{\"minutes\":15}", true},
        /* hundreds with their "and", a hyphen, "half" before a unit, "min" after a number (a new
         * user's hot tub: "hundred and three degrees" had been refused as 3, "ninety-six" and
         * "half hour" guessed, "twenty min" read as the minimum) */
        {"timer for a hundred and five minutes", "set_timer(minutes=5)", "{\"minutes\":105}", true},
        {"timer for ninety-six minutes", "set_timer(minutes=99)", "{\"minutes\":96}", true},
        {"half hour timer", "set_timer(minutes=40)", "{\"minutes\":30}", true},
        {"twenty min timer", "set_timer(minutes=2)", "{\"minutes\":20}", true},
        {"turn the timer up to one hundred and ten minutes", "set_timer(minutes=100)",
         "{\"minutes\":110}", true},
        /* of two numbers, the one said with a unit of time is the time */
        {"timer 25 minutes for the 2 pizzas", "set_timer(minutes=2)", "{\"minutes\":25}", true},
        /* the other temperature scale, converted (rounded for an integer) */
        {"heating to 68 fahrenheit", "set_thermostat(celsius=68)", "{\"celsius\":20}", true},
        {"heating to 21 celsius", "set_thermostat(celsius=21)", "{\"celsius\":21}", false},
        {"set one timer please", "set_timer(minutes=10)", "{\"minutes\":10}", false},
        /* the clause that says the number, or the one of two that names the tool: "up" in
         * another clause is no relative change of it */
        {"set a seven minute timer, i need to hold the door up", "set_timer(minutes=9)",
         "{\"minutes\":7}", true},
        {"timer to three minutes, table four is waiting", "set_timer(minutes=34)",
         "{\"minutes\":3}", true},
        /* a number led as the value to reach, beside words of change */
        {"no, shorter, like 20 minutes", "set_timer(minutes=5)", "{\"minutes\":20}", true},
        {"timer for 7 minutes", "set_timer(minutes=7)", "{\"minutes\":7}", false},
        /* a number with the argument's name as its unit names that tool; "warmer" is no
         * "warm" colour, and "cooler" steps down */
        {"warmer by 3 degrees", "set_light_colour(room=\"kitchen\", colour=\"warm\")",
         "{\"degrees\":3}", false},
        {"cooler by 2 degrees", "set_light_colour(room=\"kitchen\", colour=\"warm\")",
         "{\"degrees\":-2}", false},
        /* "a couple" is two; a step's number takes the direction the words give it */
        {"nudge the heat up a couple of degrees", "adjust_thermostat(degrees=6)", "{\"degrees\":2}",
         true},
        {"two more degrees", "adjust_thermostat(degrees=-2)", "{\"degrees\":2}", true},
        /* "N and a half" is N.5 (a new user's "heat up by one and a half" had read 11) */
        {"heat up by one and a half", "adjust_thermostat(degrees=11)", "{\"degrees\":1.5}", true},
        {"heat down 2", "adjust_thermostat(degrees=2)", "{\"degrees\":-2}", true},
        /* the one number written is the value, unless words of a relative change say more */
        {"set a timer for 8 minutes", "set_timer(minutes=888)", "{\"minutes\":8}", true},
        {"timer 25 minutes", "set_timer(minutes=20)", "{\"minutes\":25}", true},
        {"make the timer 5 minutes longer", "set_timer(minutes=15)", "{\"minutes\":30}", true},
        /* a setter's number beside words of change may be a sum (80 + 8) */
        {"and another one for 8 minutes", "set_timer(minutes=88)", "{\"minutes\":88}", false},
        /* an argument named for opening: "open" is its top, "shut" its bottom, a part is not */
        {"open the blinds", "set_blinds(open_percent=0)", "{\"open_percent\":100}", true},
        {"shut the shades", "set_blinds(open_percent=-70)", "{\"open_percent\":0}", true},
        {"close the blinds halfway", "set_blinds(open_percent=0)", "{\"open_percent\":0}", false},
        {"open the curtains a quarter", "set_blinds(open_percent=0)", "{\"open_percent\":0}",
         false},
        /* an hour of the day beside the number is no value ("too bright for 3am" had set 3%);
         * alone it is left to the model */
        {"blinds to 40 percent, the sun is in my eyes at 7am", "set_blinds(open_percent=7)",
         "{\"open_percent\":40}", true},
        {"blinds up at 7 a.m.", "set_blinds(open_percent=7)", "{\"open_percent\":7}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_NUMBER_RESTORED);
    teardown_fx(&fx);
    /* the person's digits written twice are no sum in a tool that writes no declared key (the
     * phone's timers: a fine-tuned phone model wrote 88) */
    setup_phone(&fx, NULL, NULL);
    static const struct args_case phone[] = {
        {"and another one for 8 minutes", "set_timer(minutes=88)", "{\"minutes\":8}", true},
        {"and another one for 12 minutes", "set_timer(minutes=121212)", "{\"minutes\":12}", true},
        {"and another one for 8 minutes", "set_timer(minutes=8)", "{\"minutes\":8}", false},
        {"and another one for 8 minutes", "set_timer(minutes=18)", "{\"minutes\":18}", false},
    };
    run_args_cases(&fx, phone, sizeof(phone) / sizeof(phone[0]), PIPIT_TURN_NUMBER_RESTORED);
    teardown_fx(&fx);
}

/* A negation word inside a tool's name ("do not disturb") negates nothing: "enable do not
 * disturb" is on; "don't enable do not disturb" still negates. "no water" is a range's 0. */
static void test_negation_inside_a_name(void **state) {
    (void)state;
    static const char PACK[] =
        "{\"pipit\": {\"pack\": \"vac\", \"state\": {\"dnd\": {\"type\": \"boolean\", "
        "\"initial\": false, \"show\": \"dnd\"}}}, \"tools\": [{\"type\": \"function\", "
        "\"function\": {\"name\": \"set_do_not_disturb\", \"description\": \"Turn "
        "do-not-disturb on or off\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"on\": {\"type\": \"boolean\"}}, \"required\": [\"on\"]}}, \"pipit\": {\"effect\": "
        "{\"set\": {\"dnd\": \"{on}\"}}}}, {\"type\": \"function\", \"function\": {\"name\": "
        "\"set_mop_water\", \"description\": \"Set the mop water\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {\"level\": {\"type\": \"integer\", \"minimum\": 0, "
        "\"maximum\": 3}}, \"required\": [\"level\"]}}}]}";
    struct fixture fx;
    memset(&fx, 0, sizeof(fx));
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(PACK, strlen(PACK), "vac.json", &fx.ts, &err),
                     PIPIT_OK);
    fx.device = test_device("pack", fx.ts, NULL);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx.device;
    if (agent_new_with_backend(NULL, fx.ts, &p, fake_backend_wrap(&fx.fake), &fx.agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    script(&fx, 2,
           (const char *const[]){"<call>set_do_not_disturb(on=false)",
                                 "<call>set_do_not_disturb(on=false)"});
    struct pipit_turn *t = turn(&fx, "enable do not disturb");
    assert_string_equal(t->calls[0].args_json, "{\"on\":true}");
    assert_state(&fx, "dnd", "true");
    pipit_turn_free(t);
    t = turn(&fx, "don't enable do not disturb");
    assert_string_equal(t->calls[0].args_json, "{\"on\":false}"); /* negated: the model's */
    pipit_turn_free(t);
    /* "no" before a word of a tool's name: the bottom of a range from 0 */
    script(&fx, 2,
           (const char *const[]){"<call>set_mop_water(level=2)", "<call>set_mop_water(level=2)"});
    t = turn(&fx, "no water please");
    assert_string_equal(t->calls[0].args_json, "{\"level\":0}");
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    pipit_turn_free(t);
    t = turn(&fx, "no, more water"); /* "no" before no word of the name */
    assert_string_equal(t->calls[0].args_json, "{\"level\":2}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A step called with a value to reach ("down to 18", "twenty one degrees") is the stepped
 * key's setter with that value; a step said as a step ("down 2", "another 2") stays. */
static void test_step_to_a_value(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script(&fx, 2,
           (const char *const[]){"<call>adjust_thermostat(degrees=-18)",
                                 "<call>adjust_thermostat(degrees=-2)"});
    struct pipit_turn *t = turn(&fx, "turn the heat down to 18");
    assert_string_equal(t->calls[0].tool, "set_thermostat");
    assert_string_equal(t->calls[0].args_json, "{\"celsius\":18}");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    assert_state(&fx, "thermostat", "18.0");
    pipit_turn_free(t);
    t = turn(&fx, "turn the heat down 2");
    assert_string_equal(t->calls[0].tool, "adjust_thermostat");
    assert_state(&fx, "thermostat", "16.0");
    pipit_turn_free(t);
    /* a number with nothing said of a change is a value to reach; "another 2" a step */
    script(&fx, 2,
           (const char *const[]){"<call>adjust_thermostat(degrees=21)",
                                 "<call>adjust_thermostat(degrees=2)"});
    t = turn(&fx, "twenty one degrees please");
    assert_string_equal(t->calls[0].tool, "set_thermostat");
    assert_state(&fx, "thermostat", "21.0");
    pipit_turn_free(t);
    t = turn(&fx, "another 2 degrees");
    assert_string_equal(t->calls[0].tool, "adjust_thermostat");
    assert_state(&fx, "thermostat", "23.0");
    pipit_turn_free(t);
    /* a word between "to" and the number keeps it a value: "up to about 25", "to level 3" */
    script(&fx, 1, (const char *const[]){"<call>adjust_thermostat(degrees=25)"});
    t = turn(&fx, "turn the heat up to about 25");
    assert_string_equal(t->calls[0].tool, "set_thermostat");
    assert_state(&fx, "thermostat", "25.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A span of time in a number that is no time is the one tool of time ("let it mow for 5 hours
 * straight" had asked for a cutting height of 5 mm), and so is one said to a setting that takes
 * no number (a baby monitor's "stop after 20 mins" had stopped the sound); a number without a
 * unit of time stays, and so does an action's. */
static void test_time_span_tool(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"mower\", \"state\": {\"mm\": {\"type\": \"integer\", "
        "\"initial\": 40, \"minimum\": 20, \"maximum\": 60}, \"minutes\": {\"type\": "
        "\"integer\", \"initial\": 60, \"minimum\": 15, \"maximum\": 240}}}, \"tools\": "
        "[{\"type\": "
        "\"function\", \"function\": {\"name\": \"set_cut_height\", \"description\": \"Set "
        "the cutting height\", \"parameters\": {\"type\": \"object\", \"properties\": {\"mm\": "
        "{\"type\": \"integer\", \"minimum\": 20, \"maximum\": 60}}, \"required\": [\"mm\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"mm\": \"{mm}\"}}}}, {\"type\": \"function\", "
        "\"function\": {\"name\": \"set_duration\", \"description\": \"Set how long a session "
        "lasts\", \"parameters\": {\"type\": \"object\", \"properties\": {\"minutes\": "
        "{\"type\": \"integer\", \"minimum\": 15, \"maximum\": 240}}, \"required\": "
        "[\"minutes\"]}}, \"pipit\": {\"effect\": {\"set\": {\"minutes\": \"{minutes}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"lowest_cut\", \"description\": "
        "\"Cut as low as it goes\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{}}}, \"pipit\": {\"effect\": {\"set\": {\"mm\": 20}}}}, {\"type\": \"function\", "
        "\"function\": {\"name\": \"beep\", \"description\": \"Beep\", \"parameters\": "
        "{\"type\": \"object\", \"properties\": {}}}, \"pipit\": {\"undo\": \"none\"}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script(&fx, 3,
           (const char *const[]){"<call>set_cut_height(mm=5)", "<call>set_cut_height(mm=3)",
                                 "<call>set_cut_height(mm=45)"});
    struct pipit_turn *t = turn(&fx, "let it mow for 5 hours straight");
    assert_string_equal(t->calls[0].tool, "set_duration");
    assert_string_equal(t->calls[0].args_json, "{\"minutes\":300}");
    assert_false(t->calls[0].ok); /* refused with the limit */
    pipit_turn_free(t);
    t = turn(&fx, "mow for an hour and a half");
    assert_string_equal(t->calls[0].tool, "set_duration");
    assert_state(&fx, "minutes", "90");
    pipit_turn_free(t);
    t = turn(&fx, "cut height 45");
    assert_string_equal(t->calls[0].tool, "set_cut_height");
    pipit_turn_free(t);
    /* a setting that takes no number has nowhere for the span; an action keeps it */
    script(&fx, 2, (const char *const[]){"<call>lowest_cut()", "<call>lowest_cut()"});
    t = turn(&fx, "end the session after 30 mins"); /* "session" of set_duration */
    assert_string_equal(t->calls[0].tool, "set_duration");
    assert_state(&fx, "minutes", "30");
    pipit_turn_free(t);
    t = turn(&fx, "cut low we leave in 5 minutes"); /* no word of it: the remark's span */
    assert_string_equal(t->calls[0].tool, "lowest_cut");
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"<call>beep()"});
    t = turn(&fx, "beep in 5 minutes, it's the session's end");
    assert_string_equal(t->calls[0].tool, "beep");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Degrees are a temperature's: "set heater to 26 degrees" keeps the model's set_temperature
 * (set_heater, named in full, takes no number), and a switch without its side becomes the one
 * tool of degrees. */
static void test_degrees_tool(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"tank\", \"state\": {\"heater\": {\"type\": \"boolean\", "
        "\"initial\": true}, \"temp\": {\"type\": \"number\", \"initial\": 25, \"minimum\": "
        "18, \"maximum\": 32}}}, \"tools\": [{\"type\": \"function\", \"function\": {\"name\": "
        "\"set_heater\", \"description\": \"Switch the heater\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {\"on\": {\"type\": \"boolean\"}}, \"required\": "
        "[\"on\"]}}, \"pipit\": {\"effect\": {\"set\": {\"heater\": \"{on}\"}}}}, {\"type\": "
        "\"function\", \"function\": {\"name\": \"set_temperature\", \"description\": \"Set "
        "the target\", \"parameters\": {\"type\": \"object\", \"properties\": {\"celsius\": "
        "{\"type\": \"number\", \"minimum\": 18, \"maximum\": 32}}, \"required\": "
        "[\"celsius\"]}}, \"pipit\": {\"effect\": {\"set\": {\"temp\": \"{celsius}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script(&fx, 2,
           (const char *const[]){"<call>set_temperature(celsius=26)", "<call>set_heater()"});
    struct pipit_turn *t = turn(&fx, "set heater to 26 degrees");
    assert_string_equal(t->calls[0].tool, "set_temperature");
    assert_state(&fx, "temp", "26.0");
    pipit_turn_free(t);
    t = turn(&fx, "heater to 27 degrees please");
    assert_string_equal(t->calls[0].tool, "set_temperature");
    assert_state(&fx, "temp", "27.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "one" after "to" or "at" is the value to reach ("zoom out to one" had stepped the zoom out
 * once); "switch to one of them" says no number. */
static void test_to_one(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script(&fx, 3,
           (const char *const[]){"<call>set_zoom(level=3)", "<call>adjust_zoom(direction=\"out\")",
                                 "<call>adjust_zoom(direction=\"out\")"});
    pipit_turn_free(turn(&fx, "zoom to 3"));
    struct pipit_turn *t = turn(&fx, "zoom out to one");
    assert_string_equal(t->calls[0].tool, "set_zoom");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "zoom out to one of the wider ones");
    assert_string_equal(t->calls[0].tool, "adjust_zoom");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "a little more" after a setting made from a number: the change it made again, through the
 * tool that steps the key by a sign (the zoom) or by the same call moved by that change; "max
 * it" the end of the range. */
static void test_followup_after_a_setting(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script(&fx, 2, (const char *const[]){"<call>set_exposure(ev=-1)", "<call>set_zoom(level=8)"});
    pipit_turn_free(turn(&fx, "exposure down a bit"));
    static const struct {
        const char *say, *tool, *key, *value;
    } STEPS[] = {
        {"a little more", "set_exposure", "exposure_ev", "-2.0"},
        {"the other way", "set_exposure", "exposure_ev", "-1.0"},
        {"zoom 8x", "set_zoom", "zoom", "8.0"}, /* the model's */
        {"a bit less", "adjust_zoom", "zoom", "7.0"},
        /* the end of the range: after a step, the stepped key's setter */
        {"max it then", "set_zoom", "zoom", "10.0"},
        {"ok, as low as it goes", "set_zoom", "zoom", "0.5"},
    };
    for (size_t k = 0; k < sizeof(STEPS) / sizeof(STEPS[0]); k++) {
        struct pipit_turn *t = turn(&fx, STEPS[k].say);
        assert_int_equal(t->n_calls, 1);
        assert_string_equal(t->calls[0].tool, STEPS[k].tool);
        assert_state(&fx, STEPS[k].key, STEPS[k].value);
        pipit_turn_free(t);
    }
    assert_int_equal(fx.fake.next, 2);
    teardown_fx(&fx);
}

/* A tool whose one required argument is a number, named with one number, is that tool with
 * that number as said ("timer 7 seconds actually, ..." -> set_timer(7), refused with the
 * limit, not the model's focus); "fine, make it 10" then sets the last call's number. */
/* A siren with a switch, a volume setter and a volume step (a new user's alarm pack): a number
 * said to reach picks the setter, one said as steps the step, even over the model's switch of
 * the same name ("siren down to 3" -> siren(on=false)); a number word is no value of a mode
 * ("put the siren at nine" had become set_mode("nine")); a number word said to reach or as
 * steps counts as a digit does ("at nine", "three notches quieter"). */
static void test_setter_or_step_by_number(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"alarm\", \"state\": {\"siren\": {\"type\": \"boolean\", "
        "\"initial\": false}, \"siren_volume\": {\"type\": \"integer\", \"minimum\": 1, "
        "\"maximum\": 10, \"initial\": 6}, \"mode\": {\"type\": \"string\", \"enum\": "
        "[\"disarmed\", \"home\", \"away\", \"night\"], \"initial\": \"disarmed\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"siren\", \"description\": \"Sound "
        "or silence the siren\", \"parameters\": {\"type\": \"object\", \"properties\": {\"on\": "
        "{\"type\": \"boolean\"}}, \"required\": [\"on\"]}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"siren\": \"{on}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"set_siren_volume\", "
        "\"description\": \"Siren volume\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"level\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10}}, "
        "\"required\": [\"level\"]}}, \"pipit\": {\"effect\": {\"set\": {\"siren_volume\": "
        "\"{level}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"change_siren_volume\", "
        "\"description\": \"Siren louder or quieter by steps\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {\"steps\": {\"type\": \"integer\", \"minimum\": -9, "
        "\"maximum\": 9}}, \"required\": [\"steps\"]}}, \"pipit\": {\"effect\": {\"step\": "
        "{\"key\": \"siren_volume\", \"by\": \"{steps}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"set_mode\", \"description\": "
        "\"Arm or disarm\", \"parameters\": {\"type\": \"object\", \"properties\": {\"mode\": "
        "{\"type\": \"string\", \"enum\": [\"disarmed\", \"home\", \"away\", \"night\"]}}, "
        "\"required\": [\"mode\"]}}, \"pipit\": {\"effect\": {\"set\": {\"mode\": \"{mode}\"}}, "
        "\"examples\": [{\"say\": \"put it on away\", \"args\": {\"mode\": \"away\"}}]}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script(&fx, 4,
           (const char *const[]){"<call>siren(on=false)", "<call>siren(on=true)",
                                 "<call>siren(on=true)", "<call>siren(on=true)"});
    struct pipit_turn *t = turn(&fx, "siren down to 3");
    assert_string_equal(t->calls[0].tool, "set_siren_volume");
    assert_state(&fx, "siren_volume", "3");
    pipit_turn_free(t);
    t = turn(&fx, "can the siren be a 7");
    assert_string_equal(t->calls[0].tool, "set_siren_volume");
    assert_state(&fx, "siren_volume", "7");
    pipit_turn_free(t);
    t = turn(&fx, "2 clicks louder on the siren");
    assert_string_equal(t->calls[0].tool, "change_siren_volume");
    assert_state(&fx, "siren_volume", "9");
    pipit_turn_free(t);
    t = turn(&fx, "put the siren at nine");
    assert_string_equal(t->calls[0].tool, "set_siren_volume"); /* a number word to reach */
    assert_state(&fx, "siren_volume", "9");
    pipit_turn_free(t);
    script(&fx, 2, (const char *const[]){"<call>siren(on=true)", "<call>siren(on=true)"});
    t = turn(&fx, "three notches quieter on the siren"); /* a number word as steps */
    assert_string_equal(t->calls[0].tool, "change_siren_volume");
    assert_state(&fx, "siren_volume", "6");
    pipit_turn_free(t);
    t = turn(&fx, "siren on, one more time"); /* a number word that is neither: the model's */
    assert_string_equal(t->calls[0].tool, "siren");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void test_tool_by_number_and_make_it(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script(
        &fx, 2,
        (const char *const[]){"<call>tap_to_focus(x=0.5, y=0.5)", "<call>set_grid(enabled=true)"});
    struct pipit_turn *t = turn(&fx, "timer 7 seconds actually, I need to run around the table");
    assert_true((t->flags & PIPIT_TURN_TOOL_NAMED) != 0);
    assert_string_equal(t->calls[0].tool, "set_timer");
    assert_string_equal(t->calls[0].args_json, "{\"seconds\":7}");
    assert_false(t->calls[0].ok); /* refused as said, never bent to 5 */
    pipit_turn_free(t);
    assert_state(&fx, "focus_x", "0.5");
    t = turn(&fx, "fine, make it 10");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_int_equal(t->model_calls, 0);
    assert_string_equal(t->calls[0].args_json, "{\"seconds\":10}");
    pipit_turn_free(t);
    assert_state(&fx, "timer_s", "10");
    /* after a question about one key, a number sets that key (its setter), not the last call */
    pipit_turn_free(turn(&fx, "what's the zoom at?"));
    t = turn(&fx, "make it 3");
    assert_true((t->flags & PIPIT_TURN_FOLLOW_UP) != 0);
    assert_string_equal(t->calls[0].tool, "set_zoom");
    pipit_turn_free(t);
    assert_state(&fx, "zoom", "3.0");
    assert_state(&fx, "timer_s", "10");
    t = turn(&fx, "change that to 4"); /* the zoom is now the last action */
    assert_string_equal(t->calls[0].tool, "set_zoom");
    pipit_turn_free(t);
    assert_state(&fx, "zoom", "4.0");
    assert_int_equal(fx.fake.next, 1); /* none of these asked the model */
    teardown_fx(&fx);
}

/* A value only one tool has names that tool: the model's call of another tool that the segment
 * neither names nor gives a value of is replaced (agent_choose_tool_by_value()); so does one
 * switch the segment names with a word of one side ("use the flsh"); nothing changes for
 * negations, thanks, values of several tools, switch words ("a half stop" is no recording's
 * stop) and calls the segment names. */
static void test_tool_by_value(void **state) {
    (void)state;
    static const struct {
        const char *say, *model, *tool, *args; /* tool, args: the call that ran */
    } cases[] = {
        {"hmm too blue, try daylight", "set_grid(enabled=false)", "set_white_balance",
         "{\"mode\":\"daylight\"}"},
        {"go into the night setting", "set_white_balance(mode=\"tungsten\")", "set_scene_mode",
         "{\"mode\":\"night\"}"},
        {"tungsten for these lamps", "set_ae_af_lock(locked=true)", "set_white_balance",
         "{\"mode\":\"tungsten\"}"},
        {"no daylight please", "set_grid(enabled=true)", "set_grid", "{\"enabled\":true}"},
        {"thanks, that's a wrap for the food", "set_white_balance(mode=\"tungsten\")",
         "set_white_balance", "{\"mode\":\"tungsten\"}"},
        {"automatic please", "set_aspect_ratio(ratio=\"16:9\")", "set_aspect_ratio",
         "{\"ratio\":\"16:9\"}"},
        {"down half a stop", "set_grid(enabled=false)", "set_grid", "{\"enabled\":false}"},
        {"grid on for the night shot", "set_grid(enabled=true)", "set_grid", "{\"enabled\":true}"},
        {"landscape at 2x", "set_zoom(level=2)", "set_zoom", "{\"level\":2}"},
        /* a switch named with a word of its side ("use the flsh") is that switch; not when
         * the segment names the model's call, says both sides, or negates */
        {"its dark in here, use the flsh", "set_exposure(ev=-1)", "set_flash", "{\"mode\":\"on\"}"},
        {"kill the grid", "set_exposure(ev=1)", "set_grid", "{\"enabled\":false}"},
        {"use the grid at 1 EV exposure", "set_exposure(ev=1)", "set_exposure", "{\"ev\":1}"},
        /* (no flash for a negation; the model's exposure nobody asked for does not run) */
        {"don't use the flash", "set_exposure(ev=0)", NULL, NULL},
    };
    enum {
        N = sizeof(cases) / sizeof(cases[0])
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    for (size_t k = 0; k < N; k++) {
        script_call(&fx, cases[k].model);
    }
    for (size_t k = 0; k < N; k++) {
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (cases[k].tool == NULL) {
            assert_true(t->n_calls == 0 || !t->calls[0].executed);
            pipit_turn_free(t);
            continue;
        }
        bool replaced = strncmp(cases[k].model, cases[k].tool, strlen(cases[k].tool)) != 0;
        if (t->n_calls != 1 || strcmp(t->calls[0].tool, cases[k].tool) != 0 ||
            strcmp(t->calls[0].args_json, cases[k].args) != 0 || !t->calls[0].executed ||
            ((t->flags & PIPIT_TURN_TOOL_NAMED) != 0) != replaced) {
            fail_msg("\"%s\": %s%s, flags %x (%s)", cases[k].say,
                     t->n_calls > 0 ? t->calls[0].tool : "-",
                     t->n_calls > 0 ? t->calls[0].args_json : "", (unsigned)t->flags, t->sentence);
        }
        pipit_turn_free(t);
    }
    assert_state(&fx, "white_balance", "\"tungsten\"");
    assert_state(&fx, "scene_mode", "\"night\"");
    /* the model's undo for a segment that names a setting's value and no verb of undo is
     * decoded again without undo ("too" alone is no undo) */
    script(&fx, 2,
           (const char *const[]){"<call>undo()", "<call>set_white_balance(mode=\"fluorescent\")"});
    struct pipit_turn *t = turn(&fx, "hmm, too orange. try fluorescent");
    assert_int_equal(t->model_calls, 2);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_white_balance");
    pipit_turn_free(t);
    assert_state(&fx, "white_balance", "\"fluorescent\"");
    /* with a verb of undo it is an undo: of the action that set the value named */
    script(&fx, 1, (const char *const[]){"<call>undo()"});
    t = turn(&fx, "revert the fluorescent");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    fx.fake.next = fx.fake.n_script; /* the named undo asked no model */
    pipit_turn_free(t);
    assert_state(&fx, "white_balance", "\"tungsten\"");
    /* a refusal to a segment that says such a value is that tool's call
     * (agent_value_call_for_refusal()); not for questions, negations or another reply */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "sports mode - my kid's game is starting");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_scene_mode");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    pipit_turn_free(t);
    assert_state(&fx, "scene_mode", "\"sports\"");
    /* ... and for a tool with one number that the segment names, with its one number: out of
     * range, refused with the limit, never "Sorry, I can't do that." */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "exposure +3, i want the rocks lit up");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_exposure");
    assert_false(t->calls[0].executed && t->calls[0].ok);
    assert_non_null(strstr(t->sentence, "from -2 to +2"));
    pipit_turn_free(t);
    assert_state(&fx, "exposure_ev", "1.0"); /* as the table left it */
    /* ... and with no number, the end of its range the words say */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "jpeg at the max, it's for print");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_jpeg_quality");
    assert_string_equal(t->calls[0].args_json, "{\"quality\":100}");
    pipit_turn_free(t);
    /* a question after the agent is small talk the harness answers */
    t = turn(&fx, "how are things with you?");
    assert_int_equal(t->n_calls, 0);
    assert_int_equal(t->model_calls, 0);
    assert_string_equal(t->sentence, "I'm good, thanks! What would you like to do?");
    pipit_turn_free(t);
    /* a question refused: a question about the world, the cloud's (not the scene's call) */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "what does sports mode do?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "process_with_cloud_llm");
    assert_true(t->flags & PIPIT_TURN_OPEN_QUESTION);
    pipit_turn_free(t);
    static const char *const KEEP[][2] = {
        {"not daylight, it looks awful", "Sorry, I can't do that."},
        {"daylight is pretty", "Glad you like it."},
    };
    for (size_t k = 0; k < sizeof(KEEP) / sizeof(KEEP[0]); k++) {
        script(&fx, 1, (const char *const[]){KEEP[k][1]});
        t = turn(&fx, KEEP[k][0]);
        if (t->n_calls != 0) {
            fail_msg("\"%s\" made a call: %s", KEEP[k][0], t->calls[0].tool);
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* A step's sign said in words ("a touch brighter", "louder"): the model's opposite value of the
 * sign's enum is turned round; not when a value of the map is said ("a bit more out"), when the
 * words negate or say no direction. */
static void test_step_direction_said(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    static const struct args_case cases[] = {
        {"a touch brighter in the kitchen",
         "adjust_brightness(room=\"kitchen\", direction=\"dimmer\")",
         "{\"room\":\"kitchen\",\"direction\":\"brighter\"}", true},
        {"lower the kitchen lights a bit",
         "adjust_brightness(room=\"kitchen\", direction=\"brighter\")",
         "{\"room\":\"kitchen\",\"direction\":\"dimmer\"}", true},
        {"change the kitchen light", "adjust_brightness(room=\"kitchen\", direction=\"dimmer\")",
         "{\"room\":\"kitchen\",\"direction\":\"dimmer\"}", false},
        /* a step by a signed number: its sign */
        {"hmm, one more degree", "adjust_thermostat(degrees=-1)", "{\"degrees\":1}", true},
        {"not warmer, one degree", "adjust_thermostat(degrees=-1)", "{\"degrees\":-1}", false},
        /* no number said: the smallest step of the pack's examples (2 and -1 degrees) */
        {"a bit warmer please", "adjust_thermostat(degrees=7)", "{\"degrees\":1}", true},
        {"warmer by 3", "adjust_thermostat(degrees=3)", "{\"degrees\":3}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    /* "ease up" and "ease off" say down though "up" is an up word (a treadmill's "and ease up by
     * 2 km" had sped it up): the number's sign is put right */
    static const struct args_case ease[] = {
        {"ease up on the heat by 2", "adjust_thermostat(degrees=2)", "{\"degrees\":-2}", true},
    };
    run_args_cases(&fx, ease, 1, PIPIT_TURN_NUMBER_RESTORED);
    static const struct args_case ease_bit[] = {
        {"ease off the heat a bit", "adjust_thermostat(degrees=1)", "{\"degrees\":-1}", true},
    };
    run_args_cases(&fx, ease_bit, 1, PIPIT_TURN_WORDS_RESTORED);
    /* a minus where the range has none is not the person's */
    static const struct args_case blinds[] = {
        {"blinds to 40 please", "set_blinds(open_percent=-40)", "{\"open_percent\":40}", true},
    };
    run_args_cases(&fx, blinds, 1, PIPIT_TURN_NUMBER_RESTORED);
    teardown_fx(&fx);
    setup_with(&fx, NULL);
    static const struct args_case zoom[] = {
        {"a bit more out", "adjust_zoom(direction=\"out\")", "{\"direction\":\"out\"}", false},
    };
    run_args_cases(&fx, zoom, 1, PIPIT_TURN_WORDS_RESTORED);
    teardown_fx(&fx);
}

/* "don't take a photo yet": asked not to, the model's call does not run (flag negated), unless
 * it is the off side of a switch ("don't use the flash" -> flash off); "don't forget to ..."
 * asks for it. */
static void test_negated_request(void **state) {
    (void)state;
    static const struct {
        const char *say, *model;
        bool negated;
    } cases[] = {
        {"don't take a photo yet", "take_photo()", true},
        {"please do not turn on the flash", "set_flash(mode=\"on\")", true},
        {"never zoom in on faces", "adjust_zoom(direction=\"in\")", true},
        {"don't use the flash", "set_flash(mode=\"off\")", false},
        {"don't turn off the flash", "set_flash(mode=\"off\")", true}, /* the off it names */
        {"don't forget to turn on the grid", "set_grid(enabled=true)", false},
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool negated = (t->flags & PIPIT_TURN_NEGATED) != 0;
        if (negated != cases[k].negated || t->n_calls != (cases[k].negated ? 0 : 1)) {
            fail_msg("\"%s\": negated %d, %zu calls, \"%s\"", cases[k].say, negated, t->n_calls,
                     t->sentence);
        }
        pipit_turn_free(t);
    }
    assert_state(&fx, "photos_taken", "0");
    assert_state(&fx, "zoom", "1.0");
    assert_state(&fx, "grid", "true");
    teardown_fx(&fx);
}

/* A setter called for a direction with no number ("zoom in a notch" -> set_zoom(level=1)) is
 * the tool that steps that key, in that direction, at the setter's place; a number said, an
 * end said ("as wide as it goes") or no direction keep the setter. */
static void test_setting_said_as_step(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct tool_case cases[] = {
        {"zoom in a notch", "set_zoom(level=1)", "adjust_zoom", "{\"direction\":\"in\"}"},
        {"pull out a bit", "set_zoom(level=4)", "adjust_zoom", "{\"direction\":\"out\"}"},
        {"zoom to 3", "set_zoom(level=3)", "set_zoom", "{\"level\":3}"},
        {"zoom out as wide as it goes", "set_zoom(level=1)", "set_zoom", "{\"level\":0.5}"},
        {"zoom please", "set_zoom(level=2)", "set_zoom", "{\"level\":2}"},
        /* a number in words is a number said; a value to reach said to a step by a sign */
        {"zoom in to five times", "set_zoom(level=5)", "set_zoom", "{\"level\":5}"},
        {"zoom out to three", "adjust_zoom(direction=\"out\")", "set_zoom", "{\"level\":3}"},
    };
    run_tool_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]));
    teardown_fx(&fx);
    setup_home_pack(&fx); /* a key per room: the setter's room */
    script_call(&fx, "set_brightness(room=\"kitchen\", percent=30)");
    struct pipit_turn *t = turn(&fx, "a bit brighter in the kitchen");
    assert_string_equal(t->calls[0].tool, "adjust_brightness");
    assert_string_equal(t->calls[0].args_json, "{\"direction\":\"brighter\",\"room\":\"kitchen\"}");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A setter given a change's number as its value ("bump the jpeg quality down by ten" ->
 * quality=10) sets the state's value moved by it; out of range it stays so for validation to
 * refuse; "up to N" and a plain value are the value. */
static void test_setting_changed_by(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL); /* jpeg_quality 95 */
    static const struct args_case cases[] = {
        {"bump the jpeg quality down by ten", "set_jpeg_quality(quality=10)", "{\"quality\":85}",
         true},
        {"jpeg quality five lower", "set_jpeg_quality(quality=5)", "{\"quality\":80}", true},
        {"jpeg quality up to 90", "set_jpeg_quality(quality=90)", "{\"quality\":90}", false},
        {"set the jpeg quality to 70", "set_jpeg_quality(quality=70)", "{\"quality\":70}", false},
        {"quality up by 40", "set_jpeg_quality(quality=40)", "{\"quality\":110}", true},
        {"lower the jpeg quality 5", "set_jpeg_quality(quality=5)", "{\"quality\":65}", true},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_NUMBER_RESTORED);
    assert_state(&fx, "jpeg_quality", "65"); /* 110 refused, then 5 lower */
    teardown_fx(&fx);
    setup_home_pack(&fx); /* a key per room: the call's room (living room 80) */
    static const struct args_case rooms[] = {
        {"living room lights up by 15 percent", "set_brightness(room=\"living_room\", percent=15)",
         "{\"room\":\"living_room\",\"percent\":95}", true},
    };
    run_args_cases(&fx, rooms, 1, PIPIT_TURN_NUMBER_RESTORED);
    /* the pack steps the key by a number of its own: that step, with the change as said */
    script_call(&fx, "set_thermostat(celsius=3)");
    struct pipit_turn *t = turn(&fx, "raise the temperature by 3");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "adjust_thermostat");
    assert_string_equal(t->calls[0].args_json, "{\"degrees\":3}");
    pipit_turn_free(t);
    script_call(&fx, "set_thermostat(celsius=2)");
    t = turn(&fx, "lower the heat by 2 degrees");
    assert_string_equal(t->calls[0].args_json, "{\"degrees\":-2}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A later segment whose call switches back what an earlier segment of the turn switched, with
 * none of its values said ("selfie time, flip it around" -> front, then back), is not run
 * (flag said_twice); a value said ("then flip back") runs it; so does the next turn. */
static void test_said_twice(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "switch_camera(facing=\"front\")");
    script_call(&fx, "switch_camera(facing=\"back\")");
    struct pipit_turn *t = turn(&fx, "selfie time, flip it around");
    assert_int_equal(t->n_calls, 1);
    assert_true(t->flags & PIPIT_TURN_SAID_TWICE);
    assert_state(&fx, "facing", "\"front\"");
    pipit_turn_free(t);
    script_call(&fx, "switch_camera(facing=\"back\")");
    t = turn(&fx, "flip it around");
    assert_int_equal(t->n_calls, 1);
    assert_false(t->flags & PIPIT_TURN_SAID_TWICE);
    assert_state(&fx, "facing", "\"back\"");
    pipit_turn_free(t);
    script_call(&fx, "switch_camera(facing=\"front\")");
    script_call(&fx, "switch_camera(facing=\"back\")");
    t = turn(&fx, "switch to the front camera, then flip back");
    assert_int_equal(t->n_calls, 2);
    assert_false(t->flags & PIPIT_TURN_SAID_TWICE);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The verb that opens only one tool's examples names that tool when it takes no argument
 * ("snap biscuit" -> take_photo, whose example is "snap one of the dog"); not with a number,
 * a "how" ("shoot in ..."), a question, or words of the model's call. */
static void test_tool_by_verb(void **state) {
    (void)state;
    static const struct {
        const char *say, *model, *tool;
        bool named;
    } cases[] = {
        {"snap biscuit", "adjust_zoom(direction=\"out\")", "take_photo", true},
        {"ok snap one more of the hallway", "set_timer(seconds=0)", "take_photo", true},
        {"alright snap us", "set_timer(seconds=0)", "take_photo", true}, /* was "not asked" */
        {"shoot in sixteen by nine", "set_aspect_ratio(ratio=\"16:9\")", "set_aspect_ratio", false},
        {"snap it at 2x", "set_zoom(level=2)", "set_zoom", false},
        {"what should I snap", "set_flash(mode=\"on\")", "process_with_cloud_llm", false},
        {"snap it with the flash", "set_flash(mode=\"on\")", "set_flash", false},
        /* a verb people use for an example's ("grab" / "capture" for "snap", verbbank.h) */
        {"grab him mid-jump", "set_jpeg_quality(quality=0)", "take_photo", true},
        {"capture the valley", "record_video(action=\"start\")", "take_photo", true},
        {"grab it at 3x", "set_zoom(level=3)", "set_zoom", false},
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool named = (t->flags & PIPIT_TURN_TOOL_NAMED) != 0;
        if (named != cases[k].named ||
            (t->n_calls > 0 && strcmp(t->calls[0].tool, cases[k].tool) != 0)) {
            fail_msg("\"%s\": %s, named %d", cases[k].say, t->n_calls > 0 ? t->calls[0].tool : "-",
                     named);
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* Both sides of a state offered ("kitchen lights on or off?") is a question: the keys the
 * model's call would set are said as they are and nothing runs; the same through the state
 * questions ("the blinds, open or closed?" is one segment, "kitchen light still on?"). */
static void test_choice_is_a_question(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_with(&fx, "{\"kitchen_light\":true,\"blinds\":50}");
    script_call(&fx, "switch_light(room=\"kitchen\", on=false)");
    struct pipit_turn *t = turn(&fx, "lights in the kitchen on or off?");
    assert_int_equal(t->n_calls, 0);
    assert_string_equal(t->sentence, "The kitchen light is on.");
    assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    script_call(&fx, "set_blinds(open_percent=0)");
    t = turn(&fx, "the blinds, open or closed?");
    assert_int_equal(t->n_calls, 0);
    assert_non_null(strstr(t->sentence, "50%"));
    pipit_turn_free(t);
    t = turn(&fx, "kitchen light still on?");
    assert_int_equal(t->n_calls, 0);
    assert_string_equal(t->sentence, "The kitchen light is on.");
    pipit_turn_free(t);
    assert_state(&fx, "kitchen_light", "true");
    assert_state(&fx, "blinds", "50");
    teardown_fx(&fx);
}

/* A question about the person's own things of the pack ("what's my alarm", "what's the status
 * of my ticket?") never acts and is not sent to the cloud: the model's call is kept. */
static void test_own_question_kept(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct {
        const char *say, *model;
    } cases[] = {
        {"what's my alarm", "set_alarm(time=\"02:05\")"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (!(t->flags & PIPIT_TURN_QUESTION_KEPT) || (t->flags & PIPIT_TURN_OPEN_QUESTION) ||
            (t->n_calls > 0 && t->calls[0].ok)) {
            fail_msg("\"%s\": flags %#x, \"%s\"", cases[k].say, (unsigned)t->flags, t->sentence);
        }
        pipit_turn_free(t);
    }
    /* a query named in full, its identifier the one ticket ("what's the status of my
     * ticket?" had created a ticket): the query runs, nothing is created */
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "create_ticket(summary=\"status\", priority=\"low\")");
    struct pipit_turn *t = turn(&fx, "what's the status of my ticket?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "get_ticket_status");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    pipit_turn_free(t);
    /* "why" asks for a reason no state holds, even of one's own things: the cloud's */
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "set_wifi(enabled=false)");
    t = turn(&fx, "why is my wifi so slow");
    assert_true(t->flags & PIPIT_TURN_OPEN_QUESTION);
    assert_string_equal(t->calls[0].tool, "process_with_cloud_llm");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A time of day in digits or words, with its half of the day; none or two is -1. */
static void test_time_of_day(void **state) {
    (void)state;
    static const struct {
        const char *say;
        int at;
    } cases[] = {
        {"set an alarm for 6:30", 6 * 60 + 30},
        {"alarm at 7am", 7 * 60},
        {"set an alarm for 7 pm", 19 * 60},
        {"alarm at 7 p.m. please", 19 * 60},
        {"alarm for half past six", 6 * 60 + 30},
        {"a cappuccino at half six", 6 * 60 + 30}, /* British "half six" */
        {"timer for half an hour", -1},
        {"wake me at quarter to eight", 7 * 60 + 45},
        {"ten past nine tonight", 21 * 60 + 10},
        {"alarm at seven thirty", 7 * 60 + 30},
        {"six forty five in the morning", 6 * 60 + 45},
        {"wake me up at 7", 7 * 60},
        {"alarm for six in the evening", 18 * 60},
        {"alarm 0630", 6 * 60 + 30},
        {"lunch at noon", 12 * 60},
        {"12:30 am", 30},
        {"set an alarm for 6.45", 6 * 60 + 45},
        {"nine o'clock", 9 * 60},
        {"remind me in 10 minutes", -1},
        {"take 3 photos", -1},
        {"alarm at 7 and at 8", -1},
        {"25:00", -1},
        {"zoom to 2.5", -1},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        int at = agent_time_of_day(cases[k].say);
        if (at != cases[k].at) {
            fail_msg("\"%s\": %d, want %d", cases[k].say, at, cases[k].at);
        }
    }
}

/* A time of day under a pattern ("^([01]\\d|2[0-3]):[0-5]\\d$") is the time said, am/pm read:
 * "11:30 pm" is 23:30, not the "11:30" written (a new user's alarm had armed at 11:30). */
static void test_patterned_time_of_day(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"alarm\", \"state\": {\"auto_arm\": {\"type\": \"string\", "
        "\"initial\": \"23:00\"}}}, \"tools\": [{\"type\": \"function\", \"function\": {\"name\": "
        "\"set_auto_arm\", \"description\": \"Arm every day at HH:MM\", \"parameters\": "
        "{\"type\": \"object\", \"properties\": {\"time\": {\"type\": \"string\", \"pattern\": "
        "\"^([01]\\\\d|2[0-3]):[0-5]\\\\d$\"}}, \"required\": [\"time\"]}}, \"pipit\": "
        "{\"effect\": "
        "{\"set\": {\"auto_arm\": \"{time}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script(&fx, 2,
           (const char *const[]){"<call>set_auto_arm(time=\"11:30\")",
                                 "<call>set_auto_arm(time=\"21:15\")"});
    struct pipit_turn *t = turn(&fx, "set auto arm for 11:30 pm");
    assert_string_equal(t->calls[0].args_json, "{\"time\":\"23:30\"}");
    pipit_turn_free(t);
    t = turn(&fx, "auto arm at 21:15");
    assert_string_equal(t->calls[0].args_json, "{\"time\":\"21:15\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The time said goes into the tool that takes one: the model's other tool, its cloud call or
 * its refusal becomes that tool when the segment names it ("alarm", "wake"); an argument that
 * takes "HH:MM" gets the time said. */
static void test_time_said(void **state) {
    (void)state;
    static const struct {
        const char *say, *model, *tool, *args;
    } cases[] = {
        {"set an alarm for 7 pm", "<call>set_timer(minutes=7)", "set_alarm",
         "{\"time\":\"19:00\"}"},
        {"alarm for half past six",
         "<call>process_with_cloud_llm(user_query_context=\"alarm\", "
         "reason_for_escalation=\"general knowledge\")",
         "set_alarm", "{\"time\":\"06:30\"}"},
        {"wake me at quarter to eight", "<call>set_alarm(time=\"02:15\")", "set_alarm",
         "{\"time\":\"07:45\"}"},
        {"alarm for six in the evening", "Sorry, I can't do that.", "set_alarm",
         "{\"time\":\"18:00\"}"},
        {"remind me in 10 minutes", "<call>set_timer(minutes=10)", "set_timer", "{\"minutes\":10}"},
        /* no time of day, but the clock's shape as written: refused as said, never bent */
        {"alarm at 99:99", "<call>set_alarm(time=\"09:59\")", "set_alarm", "{\"time\":\"99:99\"}"},
        /* an optional choice said goes with the renamed call */
        {"alarm for half past six called gym", "<call>set_timer(minutes=6)", "set_alarm",
         "{\"time\":\"06:30\",\"label\":\"gym\"}"},
    };
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        fx.fake.script[fx.fake.n_script++] = cases[k].model;
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (t->n_calls != 1 || strcmp(t->calls[0].tool, cases[k].tool) != 0 ||
            strcmp(t->calls[0].args_json, cases[k].args) != 0) {
            fail_msg("\"%s\": %s %s", cases[k].say, t->n_calls > 0 ? t->calls[0].tool : "-",
                     t->n_calls > 0 ? t->calls[0].args_json : "");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* The request's verb copied as the thing ("print my keychain" -> file="print") becomes the
 * words after it, less "my", "the", words of the tool's name and a closing "please". */
static void test_verb_copied_as_thing(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct args_case cases[] = {
        {"find my passport scan please", "find_file(name=\"find\")", "{\"name\":\"passport scan\"}",
         true},
        {"search photos for dogs", "search_photos(query=\"photos\")", "{\"query\":\"dogs\"}", true},
        {"find the banana bread recipe", "find_file(name=\"banana bread\")",
         "{\"name\":\"banana bread\"}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    teardown_fx(&fx);
}

/* "undo both" after a turn of two requests, one of which changed nothing, counts that one:
 * the turn before stays as it is. */
static void test_undo_both_counts_a_noop(void **state) {
    (void)state;
    struct fixture fx;
    setup_dev(&fx, NULL, "{\"grid\": true, \"zoom\": 1, \"timer_s\": 0}");
    script_call(&fx, "set_zoom(level=2)");
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    script_call(&fx, "set_timer(seconds=3)");
    script_call(&fx, "set_grid(enabled=true)");
    pipit_turn_free(turn(&fx, "a 3 second timer and the grid on"));
    assert_state(&fx, "timer_s", "3");
    struct pipit_turn *t = turn(&fx, "undo both");
    assert_state(&fx, "timer_s", "0");
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "a bit less" after a jump ("blinds fully open" from 0) steps by a tenth of the range, not
 * by the jump (which had closed them again). */
static void test_bit_after_a_jump(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_with(&fx, "{\"blinds\":0}");
    script_call(&fx, "set_blinds(open_percent=100)");
    pipit_turn_free(turn(&fx, "open the blinds all the way"));
    assert_state(&fx, "blinds", "100");
    struct pipit_turn *t = turn(&fx, "a bit less");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_state(&fx, "blinds", "90");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A question of state that names one key by its names goes to the state, not to the cloud nor
 * to a switch ("did I leave the kitchen light on", "what colour are the kitchen lights"); one
 * that asks for advice or names no key right after "what" still goes to the cloud. */
static void test_named_key_from_state(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_with(&fx, "{\"kitchen_light\":true,\"kitchen_colour\":\"red\"}");
    static const struct {
        const char *say, *model, *has;
        size_t n_calls;
    } cases[] = {
        {"did I leave the kitchen light on", "switch_light(room=\"kitchen\", on=true)", "is on", 0},
        {"what colour are the kitchen lights",
         "process_with_cloud_llm(user_query_context=\"kitchen lights\", "
         "reason_for_escalation=\"general knowledge\")",
         "red", 0},
        {"what's a good temperature for sleeping",
         "process_with_cloud_llm(user_query_context=\"a good temperature for sleeping\", "
         "reason_for_escalation=\"general knowledge\")",
         "cloud", 1},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (t->n_calls != cases[k].n_calls || strstr(t->sentence, cases[k].has) == NULL) {
            fail_msg("\"%s\": %zu calls, \"%s\"", cases[k].say, t->n_calls, t->sentence);
        }
        pipit_turn_free(t);
    }
    assert_state(&fx, "kitchen_light", "true");
    teardown_fx(&fx);
    /* "am" is a copula and "how many" counts (the camera: both had gone to the cloud) */
    setup_dev(&fx, NULL, "{\"aspect_ratio\":\"16:9\",\"videos_recorded\":2}");
    static const char *const cam[][2] = {{"what aspect ratio am i shooting", "16:9"},
                                         {"how many videos have i made", "2 videos"},
                                         {"have i started recording", "isn't recording"},
                                         {"the grid's on, right?", "grid is off"}};
    for (size_t k = 0; k < sizeof(cam) / sizeof(cam[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, "process_with_cloud_llm(user_query_context=\"x\", "
                         "reason_for_escalation=\"general knowledge\")");
        struct pipit_turn *t = turn(&fx, cam[k][0]);
        if (t->n_calls != 0 || strstr(t->sentence, cam[k][1]) == NULL) {
            fail_msg("\"%s\": %zu calls, \"%s\"", cam[k][0], t->n_calls, t->sentence);
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* A tool named in full ("cancel the timer") is the call, whatever the model called; its
 * identifier is the one item the state holds; with none, neither tool runs and the named
 * tool's "not found" sentence says so. */
static void test_tool_named_in_full(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "set_timer(minutes=40)");
    struct pipit_turn *t = turn(&fx, "cancel the timer");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "cancel_timer");
    assert_false(t->calls[0].executed);
    assert_string_equal(t->sentence, "I couldn't find that timer.");
    assert_state(&fx, "timers", "[]");
    pipit_turn_free(t);
    script_call(&fx, "set_timer(minutes=5)");
    pipit_turn_free(turn(&fx, "start a 5 minute timer"));
    script_call(&fx, "set_timer(minutes=40)");
    t = turn(&fx, "cancel the timer");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "cancel_timer");
    assert_true(t->calls[0].executed && t->calls[0].ok);
    assert_state(&fx, "timers", "[]");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A query's identifier the model left out is the newest of its shape the session made ("what's
 * the status of my ticket?" after opening one, with an older ticket in the state); a write
 * tool's is not guessed so (two timers: which one stays a question). */
static void test_missing_id_from_session(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "create_ticket(summary=\"VPN is down\", priority=\"high\")");
    pipit_turn_free(turn(&fx, "open a ticket: the VPN is down, high priority"));
    script_call(&fx, "get_ticket_status()");
    struct pipit_turn *t = turn(&fx, "what's the status of my ticket?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "get_ticket_status");
    assert_string_equal(t->calls[0].args_json, "{\"ticket_id\":\"T-1001\"}");
    assert_true(t->calls[0].executed && t->calls[0].ok);
    pipit_turn_free(t);
    /* a number said is the identifier in the examples' shape */
    script_call(&fx, "get_ticket_status()");
    t = turn(&fx, "and ticket 1000?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"ticket_id\":\"T-1000\"}");
    pipit_turn_free(t);
    script(&fx, 2,
           (const char *const[]){"<call>set_timer(minutes=5)", "<call>set_timer(minutes=20)"});
    pipit_turn_free(turn(&fx, "start a 5 minute timer"));
    pipit_turn_free(turn(&fx, "and a 20 minute timer"));
    script_call(&fx, "cancel_timer()");
    t = turn(&fx, "cancel the timer");
    assert_int_equal(t->n_calls, 1);
    assert_false(t->calls[0].executed);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A remark after a command is not the model's to read ("end the clip, song's done" had set the
 * scene), unless it says a word of the pack's ("he's in the bottom left"); a call that takes free
 * text is decoded again on the segment as said, as the remark may be its words ("text mom, grandpa
 * is napping"). */
static void test_remark_dropped(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "record_video(action=\"start\")");
    struct pipit_turn *t = turn(&fx, "start the clip, my cousins are here");
    int k = fx.fake.n_steps - 1;
    assert_non_null(strstr(fx.fake.prompts[k], "User: start the clip\n"));
    assert_null(strstr(fx.fake.prompts[k], "cousins"));
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    /* a remark that opens the utterance: the two requests after it are split and decoded */
    script(&fx, 2,
           (const char *const[]){"<call>set_scene_mode(mode=\"macro\")",
                                 "<call>adjust_zoom(direction=\"in\")"});
    t = turn(&fx, "there's a tiny lizard on the rock! macro mode and zoom in a step");
    assert_int_equal(t->n_calls, 2);
    k = fx.fake.n_steps - 2;
    assert_non_null(strstr(fx.fake.prompts[k], "User: macro mode\n"));
    assert_null(strstr(fx.fake.prompts[k + 1], "lizard"));
    pipit_turn_free(t);
    /* a word of reversal in the segment keeps it whole: the model's undo reads it all */
    script(&fx, 1, (const char *const[]){"<call>undo()"});
    int before = fx.fake.n_steps;
    t = turn(&fx, "switch to the previous look, my cousins hate it");
    assert_int_equal(fx.fake.n_steps, before + 1);
    assert_non_null(strstr(fx.fake.prompts[before], "cousins"));
    pipit_turn_free(t);
    /* a word of the pack's in the remark ("bottom", "left" of tap_to_focus) keeps it */
    script_call(&fx, "tap_to_focus(x=0.25, y=0.75)");
    t = turn(&fx, "focus on him, he's in the bottom left bit");
    k = fx.fake.n_steps - 1;
    assert_non_null(strstr(fx.fake.prompts[k], "bottom left bit"));
    pipit_turn_free(t);
    teardown_fx(&fx);
    setup_phone(&fx, NULL, NULL);
    /* a message's remark is never dropped when the pack's example frame ("tell Priya I'm
     * running ten minutes late") reads the message to the end: one decode of the whole */
    script(&fx, 1, (const char *const[]){"<call>send_message(recipient=\"Mom\", body=\"hi\")"});
    t = turn(&fx, "text mom, grandpa is napping");
    assert_int_equal(fx.fake.n_steps, 1);
    assert_non_null(strstr(fx.fake.prompts[0], "grandpa is napping"));
    assert_int_equal(t->n_calls, 1);
    assert_non_null(strstr(t->calls[0].args_json, "grandpa is napping"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A model's call that is a guess: flag not_asked, one call recorded, not run. */
struct guess_case {
    const char *say, *model;
    bool guessed;
};

static void run_guess_cases(struct fixture *fx, const struct guess_case *cases, size_t n) {
    for (size_t k = 0; k < n; k++) {
        fx->fake.next = fx->fake.n_script;
        script_call(fx, cases[k].model);
        struct pipit_turn *t = turn(fx, cases[k].say);
        bool guessed =
            (t->flags & PIPIT_TURN_NOT_ASKED) != 0 && t->n_calls == 1 && !t->calls[0].executed;
        if (guessed != cases[k].guessed) {
            fail_msg("\"%s\": guessed %d, \"%s\"", cases[k].say, guessed, t->sentence);
        }
        pipit_turn_free(t);
    }
}

/* A direction said only as a preposition ("in this one") is a guess and does not run; the
 * tool named, the direction said as one ("push in", "in a bit") run. */
static void test_direction_guessed(void **state) {
    (void)state;
    static const struct guess_case cases[] = {
        {"get the lanterns in this one", "adjust_zoom(direction=\"in\")", true},
        {"get him in the shot", "adjust_zoom(direction=\"in\")", true},
        {"zoom in on the dog", "adjust_zoom(direction=\"in\")", false},
        {"push in", "adjust_zoom(direction=\"in\")", false},
        {"in a bit", "adjust_zoom(direction=\"in\")", false},
        {"get a little closer", "adjust_zoom(direction=\"in\")", false}, /* a word for it */
    };
    struct fixture fx;
    setup_with(&fx, NULL);
    run_guess_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]));
    teardown_fx(&fx);
}

/* A required time of day nobody said, for a tool nobody named, is a guess and does not run
 * ("reply to her: see you sunday" -> an alarm at 02:00); the tool named, or a time said, runs. */
static void test_time_guessed(void **state) {
    (void)state;
    static const struct guess_case cases[] = {
        {"reply to her: see you sunday", "set_alarm(time=\"02:00\", label=\"see you sunday\")",
         true},
        {"wake me at seven", "set_alarm(time=\"07:00\")", false},
        {"alarm for the flight please", "set_alarm(time=\"06:00\")", false},
    };
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    run_guess_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]));
    teardown_fx(&fx);
}

/* A switch nobody named, on no side said, is a guess and does not run ("open my Q3 report" ->
 * Bluetooth off); a side, a value, the tool's words or a switching verb run it. */
static void test_switch_guessed(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, "{\"bluetooth\": true}");
    static const struct {
        const char *say, *model;
        bool guessed;
    } cases[] = {
        {"open my Q3 report", "set_bluetooth(enabled=false)", true},
        {"bluetooth please", "set_bluetooth(enabled=false)", false},
        {"kill it", "set_bluetooth(enabled=false)", false},
        {"switch it on", "set_bluetooth(enabled=true)", false},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool guessed =
            (t->flags & PIPIT_TURN_NOT_ASKED) != 0 && t->n_calls == 1 && !t->calls[0].executed;
        if (guessed != cases[k].guessed) {
            fail_msg("\"%s\": guessed %d, \"%s\"", cases[k].say, guessed, t->sentence);
        }
        if (k == 0) {
            assert_state(&fx, "bluetooth", "true");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
    setup_with(&fx, NULL); /* a lock nobody named (it was "no-op, not flipped" before) */
    script_call(&fx, "set_ae_af_lock(locked=false)");
    struct pipit_turn *t = turn(&fx, "sounds like a plan");
    assert_true(t->flags & PIPIT_TURN_NOT_ASKED);
    assert_false(t->calls[0].executed);
    pipit_turn_free(t);
    /* the grid for "that's a wrap" (test_tool_by_value kept it running before) */
    script_call(&fx, "set_grid(enabled=false)");
    t = turn(&fx, "thanks, that's a wrap for the food");
    assert_int_equal(t->n_calls, 1);
    assert_false(t->calls[0].executed);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A number setting nobody named, with no number said, is a guess and does not run ("drive to
 * Narnia" -> a 9-minute timer); a number, the tool's name, a move or a repeat says it is not. */
static void test_number_guessed(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct {
        const char *say, *model;
        bool guessed;
    } cases[] = {
        {"second half's on", "set_timer(seconds=5)", true},
        {"frame the cake table", "set_jpeg_quality(quality=80)", true},
        {"wow look at that view", "set_zoom(level=1)", true}, /* "that" is no follow-up */
        {"so peaceful, no one else around", "set_timer(seconds=0)", true}, /* "one": a pronoun */
        {"can you add a sepia filter?", "set_timer(seconds=35)", true},    /* "filter": no "-er" */
        {"do it", "set_zoom(level=2)", false},
        {"timer please", "set_timer(seconds=3)", false},        /* names the timer */
        {"make it ten", "set_timer(seconds=10)", false},        /* a number in words */
        {"3 seconds", "set_timer(seconds=3)", false},           /* a number */
        {"a bit more", "set_zoom(level=3)", false},             /* a follow-up */
        {"max detail", "set_jpeg_quality(quality=100)", false}, /* a bound */
        {"go wider", "set_zoom(level=1)", false},               /* a comparative */
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool guessed =
            (t->flags & PIPIT_TURN_NOT_ASKED) != 0 && t->n_calls >= 1 && !t->calls[0].executed;
        if (guessed != cases[k].guessed) {
            fail_msg("\"%s\": guessed %d, \"%s\"", cases[k].say, guessed, t->sentence);
        }
        if (k == 0) {
            assert_state(&fx, "timer_s", "0");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* A comparative names its quantity: "a bit warmer please" is the thermostat's step, whatever
 * light the model took; not when the segment names another tool's thing. */
static void test_comparative_names_quantity(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    static const struct tool_case cases[] = {
        {"a bit warmer please", "adjust_brightness(room=\"kitchen\", direction=\"brighter\")",
         "adjust_thermostat", "{\"degrees\":1}"},
        {"a touch cooler in here", "set_light_colour(room=\"kitchen\", colour=\"cool\")",
         "adjust_thermostat", "{\"degrees\":-1}"},
        {"make the kitchen lights warmer", "set_light_colour(room=\"kitchen\", colour=\"warm\")",
         "set_light_colour", "{\"room\":\"kitchen\",\"colour\":\"warm\"}"},
        {"two degrees warmer", "adjust_thermostat(degrees=2)", "adjust_thermostat",
         "{\"degrees\":2}"},
    };
    run_tool_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]));
    /* the model answered in words: the same step; a question does not step */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    struct pipit_turn *t = turn(&fx, "a bit warmer please");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "adjust_thermostat");
    assert_string_equal(t->calls[0].args_json, "{\"degrees\":1}");
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "is it warmer in the kitchen");
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

static void setup_spec(struct fixture *fx, const char *spec, size_t len);

/* A comparative with a value to reach, where no tool steps its quantity: the one setter of it
 * ("a bit brighter, like 75" had set the pump's flow to 75). */
static void test_comparative_to_a_value(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"tank\", \"state\": {\"brightness\": {\"type\": "
        "\"integer\", \"initial\": 60, \"minimum\": 0, \"maximum\": 100}, \"flow\": {\"type\": "
        "\"integer\", \"initial\": 50, \"minimum\": 0, \"maximum\": 100}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_brightness\", \"description\": "
        "\"Set the light's brightness\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"percent\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 100}}, "
        "\"required\": [\"percent\"]}}, \"pipit\": {\"effect\": {\"set\": {\"brightness\": "
        "\"{percent}\"}}}}, {\"type\": \"function\", \"function\": {\"name\": \"set_flow\", "
        "\"description\": \"Set the pump's flow\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"percent\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": "
        "100}}, \"required\": [\"percent\"]}}, \"pipit\": {\"effect\": {\"set\": {\"flow\": "
        "\"{percent}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script(&fx, 2,
           (const char *const[]){"<call>set_flow(percent=75)", "<call>set_flow(percent=30)"});
    struct pipit_turn *t = turn(&fx, "a bit brighter, like 75");
    assert_string_equal(t->calls[0].tool, "set_brightness");
    assert_state(&fx, "brightness", "75");
    assert_state(&fx, "flow", "50");
    pipit_turn_free(t);
    t = turn(&fx, "flow to 30"); /* no comparative: the model's */
    assert_string_equal(t->calls[0].tool, "set_flow");
    pipit_turn_free(t);
    /* a number written with "%" is the person's number too */
    script_call(&fx, "set_brightness(percent=10)");
    t = turn(&fx, "the fish look stressed, dim the light to 30%");
    assert_string_equal(t->calls[0].args_json, "{\"percent\":30}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A statement the pack gives as an example ("I'm freezing" for the heating) asks for
 * something: a statement that shares its words is the model's, not small talk; others still
 * are. */
static void test_statement_example_is_no_small_talk(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"cabin\", \"state\": {\"temp\": {\"type\": \"integer\", "
        "\"initial\": 21, \"minimum\": 16, \"maximum\": 28}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"adjust_temperature\", "
        "\"description\": \"Warmer or cooler\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"degrees\": {\"type\": \"integer\", \"minimum\": -5, "
        "\"maximum\": 5}}, \"required\": [\"degrees\"]}}, "
        "\"pipit\": {\"effect\": {\"step\": {\"key\": \"temp\", \"by\": \"{degrees}\"}}, "
        "\"examples\": [{\"say\": \"I'm freezing\", \"args\": {\"degrees\": 2}}]}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "adjust_temperature(degrees=2)");
    struct pipit_turn *t = turn(&fx, "it's freezing in here");
    assert_false(t->flags & PIPIT_TURN_SMALL_TALK);
    assert_int_equal(t->n_calls, 1);
    assert_true(t->calls[0].executed);
    pipit_turn_free(t);
    t = turn(&fx, "it's lovely out here");
    assert_true(t->flags & PIPIT_TURN_SMALL_TALK);
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A minus the model wrote where the range has no negatives is the model's, even beside words of
 * change: "a bit more, 40" opens the blinds to 40, not -40 (refused). */
static void test_model_minus_dropped(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "set_blinds(open_percent=-40)");
    struct pipit_turn *t = turn(&fx, "a bit more, 40");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"open_percent\":40}");
    assert_true(t->calls[0].executed && t->calls[0].ok);
    pipit_turn_free(t);
    assert_state(&fx, "blinds", "40");
    teardown_fx(&fx);
}

static void setup_spec_in(struct fixture *fx, const char *spec, size_t len, const char *init);

/* A key turned off is cleared by the one tool that clears it, whatever the model called: "turn
 * the timer off" -> a light off had left the timer running (home pack). */
static void test_key_turned_off(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "set_timer(minutes=40)");
    pipit_turn_free(turn(&fx, "40 minute timer"));
    script_call(&fx, "switch_light(room=\"bedroom\", on=false)");
    struct pipit_turn *t = turn(&fx, "turn the timer off");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "cancel_timer");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    pipit_turn_free(t);
    assert_state(&fx, "timer_min", "0");
    /* the model's tool writes the key: its call stands */
    script_call(&fx, "switch_light(room=\"kitchen\", on=false)");
    t = turn(&fx, "kitchen light off");
    assert_string_equal(t->calls[0].tool, "switch_light");
    pipit_turn_free(t);
    /* ... and a refusal is that tool's call too */
    script_call(&fx, "set_timer(minutes=40)");
    pipit_turn_free(turn(&fx, "40 minute timer"));
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "kill the timer");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "cancel_timer");
    pipit_turn_free(t);
    assert_state(&fx, "timer_min", "0");
    teardown_fx(&fx);
    /* a switch named by one word of its name ("coffee" of "coffee machine") is not the switch
     * when another key is named in full ("wake-up coffee"), which its clearing tool turns off */
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"brewer\", \"state\": {"
        "\"power\": {\"type\": \"boolean\", \"initial\": true, \"words\": {\"names\": "
        "\"coffee machine|machine\"}}, "
        "\"wake_time\": {\"type\": \"string\", \"initial\": \"off\", \"words\": {\"names\": "
        "\"wake-up coffee|morning brew\"}}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_power\", \"description\": "
        "\"Machine on or off\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"on\": {\"type\": \"boolean\"}}, \"required\": [\"on\"]}}, \"pipit\": {\"effect\": "
        "{\"set\": {\"power\": \"{on}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"schedule_brew\", \"description\": "
        "\"Brew at a time\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"time\": {\"type\": \"string\", \"description\": \"HH:MM\"}}, \"required\": "
        "[\"time\"]}}, \"pipit\": {\"effect\": {\"set\": {\"wake_time\": \"{time}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"cancel_schedule\", "
        "\"description\": \"Cancel the brew\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {}}}, \"pipit\": {\"effect\": {\"set\": {\"wake_time\": "
        "\"off\"}}}}]}";
    setup_spec_in(&fx, SPEC, sizeof(SPEC) - 1, "{\"wake_time\": \"06:30\"}");
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "kill the wake-up coffee");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "cancel_schedule");
    pipit_turn_free(t);
    assert_state(&fx, "power", "true");
    assert_state(&fx, "wake_time", "\"off\"");
    teardown_fx(&fx);
}

/* A value said as a mode names its tool even when the segment names the model's place too:
 * "reading mode in the lounge" is the reading scene, not the lounge light (home pack). */
static void test_value_named_as_mode(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "switch_light(room=\"living_room\", on=true)");
    struct pipit_turn *t = turn(&fx, "reading mode in the lounge");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "activate_scene");
    assert_string_equal(t->calls[0].args_json, "{\"scene\":\"reading\"}");
    pipit_turn_free(t);
    /* without the word of a mode the named light stays the model's */
    script_call(&fx, "switch_light(room=\"living_room\", on=true)");
    t = turn(&fx, "lounge light on for some reading");
    assert_string_equal(t->calls[0].tool, "switch_light");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A refusal to a segment that names one switch with one side is that switch's call, its place
 * from the words ("kitchen"), every place for "all" (home pack: "all the lights off" had read
 * "Sorry, I can't do that."). */
static void test_refusal_names_a_switch(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "switch_light(room=\"kitchen\", on=true)");
    pipit_turn_free(turn(&fx, "kitchen light on"));
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    struct pipit_turn *t = turn(&fx, "all the lights off");
    assert_int_equal(t->n_calls, 3);
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    pipit_turn_free(t);
    assert_state(&fx, "kitchen_light", "false");
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "bedroom light on");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"bedroom\",\"on\":true}");
    pipit_turn_free(t);
    /* no place said: which light is not the harness's to guess */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "light off");
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    /* "everything" is every place of the model's call, with no noun ("lights") said */
    script_call(&fx, "switch_light(room=\"bedroom\", on=false)");
    t = turn(&fx, "good night, turn everything off");
    assert_int_equal(t->n_calls, 3);
    pipit_turn_free(t);
    assert_state(&fx, "bedroom_light", "false");
    teardown_fx(&fx);
}

/* A switch's side said by the verb of its argument: "lock all the doors" (lock_door's "locked")
 * after the model refused runs lock_door for every door, "unlock the back door" the other side;
 * a new user's alarm had answered "Sorry, I can't do that." to "lock all the doors pls" (its
 * door_chime, also named by "doors", is no candidate: its argument's verb is not said). */
static void test_refusal_argument_verb(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"locks\", \"state\": {"
        "\"front_door\": {\"type\": \"boolean\", \"initial\": false}, "
        "\"back_door\": {\"type\": \"boolean\", \"initial\": true}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"lock_door\", \"description\": "
        "\"Lock or unlock a door\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"door\": {\"type\": \"string\", \"enum\": [\"front\", \"back\"]}, \"locked\": "
        "{\"type\": \"boolean\"}}, \"required\": [\"door\", \"locked\"]}}, \"pipit\": "
        "{\"effect\": {\"set\": {\"{door}_door\": \"{locked}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"door_chime\", \"description\": "
        "\"The chime when a door opens\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"on\": {\"type\": \"boolean\"}}, \"required\": [\"on\"]}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    struct pipit_turn *t = turn(&fx, "lock all the doors pls");
    assert_int_equal(t->n_calls, 2);
    pipit_turn_free(t);
    assert_state(&fx, "front_door", "true");
    assert_state(&fx, "back_door", "true");
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "unlock the back door");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"door\":\"back\",\"locked\":false}");
    pipit_turn_free(t);
    /* no side said: not the harness's to guess */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "the front door please");
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The person's choice (agent_restore_person_choice()) reads a word the argument's description
 * gives a value too ("low (gentle)"): the value the person says
 * replaces another value of the same tool's argument that the model wrote: "gentle fan is fine"
 * had left a treadmill's fan off ("The fan is already off."); two values said, or the model's
 * own said, leave the call. */
static void test_said_value_restored(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"belt\", \"state\": {\"fan\": {\"type\": \"string\", "
        "\"enum\": [\"off\", \"low\", \"high\"], \"initial\": \"off\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_fan\", \"description\": "
        "\"Cooling fan\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"setting\": {\"type\": \"string\", \"enum\": [\"off\", \"low\", \"high\"], "
        "\"description\": \"off, low (gentle), high (full blast)\"}}, \"required\": "
        "[\"setting\"]}}, \"pipit\": {\"effect\": {\"set\": {\"fan\": \"{setting}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "set_fan(setting=\"off\")");
    struct pipit_turn *t = turn(&fx, "gentle fan is fine");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"setting\":\"low\"}");
    pipit_turn_free(t);
    assert_state(&fx, "fan", "\"low\"");
    script_call(&fx, "set_fan(setting=\"off\")");
    t = turn(&fx, "the fan on high");
    assert_string_equal(t->calls[0].args_json, "{\"setting\":\"high\"}");
    pipit_turn_free(t);
    script_call(&fx, "set_fan(setting=\"low\")");
    t = turn(&fx, "switch the fan from high to low");
    assert_string_equal(t->calls[0].args_json, "{\"setting\":\"low\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "speed 8 and incline 2" on the treadmill pack (tests/specs/packs): the first segment's "speed"
 * is a setting's name said with its value, not a verb to share with the second ("speed incline
 * 2" had set the speed to 2; the pack's "speed up by 2" makes "speed" one of its verbs). */
static void test_setting_name_not_shared(void **state) {
    (void)state;
    size_t len = 0;
    unsigned char *spec =
        test_read_file(PIPIT_SOURCE_DIR "/tests/specs/packs/treadmill.json", &len);
    assert_non_null(spec);
    struct fixture fx;
    setup_spec(&fx, (const char *)spec, len);
    free(spec);
    script_call(&fx, "set_speed(kmh=8)");
    script_call(&fx, "set_incline(percent=2)");
    struct pipit_turn *t = turn(&fx, "speed 8 and incline 2");
    assert_int_equal(t->n_calls, 2);
    pipit_turn_free(t);
    assert_int_equal(fx.fake.n_steps, 2);
    if (strstr(fx.fake.prompts[1], "User: incline 2\n") == NULL) {
        fail_msg("the second segment was not said as typed: %s", fx.fake.prompts[1]);
    }
    assert_state(&fx, "incline", "2");
    /* "incline 3" -> set_speed(kmh=3): the segment names the incline's setter */
    script_call(&fx, "set_speed(kmh=3)");
    t = turn(&fx, "incline 3");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_incline");
    pipit_turn_free(t);
    assert_state(&fx, "incline", "3");
    teardown_fx(&fx);
}

/* A word the argument's description gives a value is the pack's: "eco mode for the week" is no
 * thing the pack lacks (a new user's hot tub had refused it, "none of my tools does that"),
 * while "turbo mode" still is. */
static void test_described_word_is_the_packs(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"tub\", \"state\": {\"heat_mode\": {\"type\": \"string\", "
        "\"enum\": [\"standard\", \"economy\"], \"initial\": \"standard\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_heat_mode\", \"description\": "
        "\"Heater mode\", \"parameters\": {\"type\": \"object\", \"properties\": {\"mode\": "
        "{\"type\": \"string\", \"enum\": [\"standard\", \"economy\"], \"description\": "
        "\"standard (normal), economy (eco, saver)\"}}, \"required\": [\"mode\"]}}, \"pipit\": "
        "{\"effect\": {\"set\": {\"heat_mode\": \"{mode}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "set_heat_mode(mode=\"economy\")");
    script_call(&fx, "set_heat_mode(mode=\"economy\")");
    struct pipit_turn *t = turn(&fx, "eco mode for the week");
    assert_false(t->flags & PIPIT_TURN_UNKNOWN_THING);
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    assert_state(&fx, "heat_mode", "\"economy\"");
    t = turn(&fx, "turbo mode for the week");
    assert_true(t->flags & PIPIT_TURN_UNKNOWN_THING);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* The text after a colon is said whole: "message mom: landed safely" -> body "safely" had sent
 * half the message; a time's colon is no such colon, and a value of other words is the
 * model's. */
static void test_after_colon_whole(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct {
        const char *say, *model, *args;
    } cases[] = {
        {"message mom: landed safely", "send_message(recipient=\"Mom\", body=\"safely\")",
         "{\"recipient\":\"Mom\",\"body\":\"landed safely\"}"},
        {"text Alice: see you at 7:30 tonight.",
         "send_message(recipient=\"Alice Chen\", body=\"see you\")",
         "{\"recipient\":\"Alice Chen\",\"body\":\"see you at 7:30 tonight\"}"},
        /* words none of the person's: the pack's example frame ("tell Priya I'm running ten
         * minutes late") reads the message after the name (agent_frame.h) */
        {"text Alice: see you soon", "send_message(recipient=\"Alice Chen\", body=\"bye\")",
         "{\"recipient\":\"Alice Chen\",\"body\":\"see you soon\"}"},
        /* what a thing is "called", by the argument the pack's examples call so */
        {"set an alarm for 7 tomorrow morning called gym",
         "set_alarm(time=\"07:00\", label=\"tomorrow\")", "{\"time\":\"07:00\",\"label\":\"gym\"}"},
        {"alarm at 6 called wake up please", "set_alarm(time=\"06:00\")",
         "{\"time\":\"06:00\",\"label\":\"wake up\"}"},
        /* a search's words are the person's when the model's are none of theirs */
        {"find my tax return", "find_file(name=\"tairt\")", "{\"name\":\"tax return\"}"},
        {"find my Q3 report", "find_file(name=\"Q3-report\")", "{\"name\":\"Q3-report\"}"},
        /* a value only one tool has, with the model's argument of the same name and type */
        {"book a standard ride to Union Square",
         "navigate_to(destination=\"Union Square\", mode=\"transit\")",
         "{\"destination\":\"Union Square\",\"service\":\"standard\"}"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (t->n_calls != 1 || strcmp(t->calls[0].args_json, cases[k].args) != 0) {
            fail_msg("\"%s\": %s", cases[k].say, t->n_calls > 0 ? t->calls[0].args_json : "-");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* The pack's examples as frames (agent_frame.h): "tell Priya I'm running ten minutes late" puts
 * the recipient after the verb and the message in the rest, "get me a big car to the airport"
 * the destination after "to", "new note called gift ideas: scarf for mum" the title and the
 * body about the colon. The model's free text that is none of those words is those words; a
 * command the model answered with text is the frame's call; a pronoun names nobody. */
static void test_example_frames(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct {
        const char *say, *model, *tool, *args;
    } cases[] = {
        {"text priya the budget is in the shared drive",
         "<call>send_message(recipient=\"budget\", body=\"drive\")", "send_message",
         "{\"recipient\":\"priya\",\"body\":\"the budget is in the shared drive\"}"},
        {"text mom that i landed", "<call>send_message(recipient=\"home\", body=\"that\")",
         "send_message", "{\"recipient\":\"mom\",\"body\":\"i landed\"}"},
        /* the model's own words, when they are the frame's */
        {"text alice see you at noon please",
         "<call>send_message(recipient=\"Alice Chen\", body=\"see you at noon\")", "send_message",
         "{\"recipient\":\"Alice Chen\",\"body\":\"see you at noon\"}"},
        /* a text answer to a command its frame fills */
        {"text jordan running late sorry", "Okay, take your time.", "send_message",
         "{\"recipient\":\"jordan\",\"body\":\"running late sorry\"}"},
        /* a place after "to", up to the next connector; a scrap of it is not it */
        {"get me an xl ride to the ferry building for my meeting",
         "<call>request_ride(destination=\"ferry\", service=\"xl\")", "request_ride",
         "{\"destination\":\"the ferry building\",\"service\":\"xl\"}"},
        /* a verb only another tool's examples open with, its frame filled: that tool */
        {"new note titled standup: ask marcus about q3 numbers",
         "<call>create_ticket(summary=\"standup\", priority=\"high\")", "create_note",
         "{\"title\":\"standup\",\"body\":\"ask marcus about q3 numbers\"}"},
        /* a remark after a message's comma is more of the message */
        {"message alice hi, are you around", "<call>send_message(recipient=\"alice\", body=\"hi\")",
         "send_message", "{\"recipient\":\"alice\",\"body\":\"hi, are you around\"}"},
        /* "at" and an address is more of the place; the example's "the" is kept */
        {"get me an xl ride to the office at 200 Bishopsgate",
         "<call>request_ride(destination=\"Bishopsgate\", service=\"xl\")", "request_ride",
         "{\"destination\":\"the office at 200 Bishopsgate\",\"service\":\"xl\"}"},
        {"get me an xl ride to the ferry building",
         "<call>request_ride(destination=\"ferry building\", service=\"xl\")", "request_ride",
         "{\"destination\":\"the ferry building\",\"service\":\"xl\"}"},
        /* a negation, a pronoun: no frame's words */
        {"don't text bob", "Okay.", NULL, NULL},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script(&fx, 1, (const char *const[]){cases[k].model});
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (cases[k].tool == NULL) {
            if (t->n_calls != 0) {
                fail_msg("\"%s\": %s", cases[k].say, t->calls[0].args_json);
            }
        } else if (t->n_calls != 1 || strcmp(t->calls[0].tool, cases[k].tool) != 0 ||
                   strcmp(t->calls[0].args_json, cases[k].args) != 0) {
            fail_msg("\"%s\": %s %s", cases[k].say, t->n_calls > 0 ? t->calls[0].tool : "-",
                     t->n_calls > 0 ? t->calls[0].args_json : "-");
        }
        pipit_turn_free(t);
    }
    /* "her" is the memory's to say: the model's recipient stays */
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "send_message(recipient=\"Mom\", body=\"see\")");
    struct pipit_turn *t = turn(&fx, "text her see you sunday");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json,
                        "{\"recipient\":\"Mom\",\"body\":\"see you sunday\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "open that" after a search -> Wi-Fi off: a segment that points back and opens with a verb
 * only one query's examples open with ("open F-201") names that query, its identifier the
 * newest of that shape in memory; without one, the model's call stands. */
static void test_query_by_verb(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "find_file(name=\"budget\")");
    struct pipit_turn *t = turn(&fx, "find the budget");
    assert_int_equal(t->n_calls, 1);
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    script_call(&fx, "set_wifi(enabled=false)");
    t = turn(&fx, "open that");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "open_file");
    assert_string_equal(t->calls[0].args_json, "{\"file_id\":\"F-203\"}");
    assert_true(t->flags & PIPIT_TURN_TOOL_NAMED);
    pipit_turn_free(t);
    teardown_fx(&fx);
    setup_phone(&fx, NULL, NULL); /* nothing found before: the model's call */
    script_call(&fx, "set_wifi(enabled=false)");
    t = turn(&fx, "open that");
    assert_string_equal(t->calls[0].tool, "set_wifi");
    pipit_turn_free(t);
    /* a tool that changes something: its item the one just made, its text the frame's words
     * ("add eggs to the groceries note": the words before the last "to") */
    script_call(&fx, "create_note(title=\"standup\", body=\"ask marcus\")");
    pipit_turn_free(turn(&fx, "new note called standup: ask marcus"));
    script_call(&fx, "navigate_to(destination=\"ship\", mode=\"driving\")");
    t = turn(&fx, "add ship the onboarding doc to it");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "append_note");
    assert_string_equal(t->calls[0].args_json,
                        "{\"note_id\":\"N-3\",\"text\":\"ship the onboarding doc\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
    /* a question about something said before, a word only one query's name has */
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "create_ticket(summary=\"vpn drops\", priority=\"high\")");
    pipit_turn_free(turn(&fx, "open a ticket: vpn drops, high priority"));
    script_call(&fx, "process_with_cloud_llm(user_query_context=\"what's the status on that one\", "
                     "reason_for_escalation=\"general knowledge\")");
    t = turn(&fx, "what's the status on that one?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "get_ticket_status");
    assert_string_equal(t->calls[0].args_json, "{\"ticket_id\":\"T-1001\"}");
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"I'm good, thanks. What can I do for you?"});
    t = turn(&fx, "what's its status?"); /* answered with text: the query all the same */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "get_ticket_status");
    assert_string_equal(t->calls[0].args_json, "{\"ticket_id\":\"T-1001\"}");
    assert_null(strstr(t->sentence, "good"));
    pipit_turn_free(t);
    teardown_fx(&fx);
    /* a verb never names a setting: "back out one step" is no switch_camera(facing="back") */
    setup_with(&fx, NULL);
    script_call(&fx, "adjust_zoom(direction=\"out\")");
    t = turn(&fx, "back out one step");
    assert_string_equal(t->calls[0].tool, "adjust_zoom");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "actually I'll bike there" after walking directions: a word of correction and a word of one
 * other enum value's phrase in the success template ("by bike") is the last call with that
 * value; naming another tool, it is the model's. */
static void test_value_by_template_word(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "navigate_to(destination=\"Dolores Park\", mode=\"walking\")");
    pipit_turn_free(turn(&fx, "walk me to Dolores Park"));
    struct pipit_turn *t = turn(&fx, "actually I'll bike there"); /* nothing scripted */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json,
                        "{\"destination\":\"Dolores Park\",\"mode\":\"cycling\"}");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    pipit_turn_free(t);
    t = turn(&fx, "nah, by car");
    assert_string_equal(t->calls[0].args_json,
                        "{\"destination\":\"Dolores Park\",\"mode\":\"driving\"}");
    pipit_turn_free(t);
    script_call(&fx, "set_bluetooth(enabled=true)");
    t = turn(&fx, "actually, bluetooth on for the walk");
    assert_string_equal(t->calls[0].tool, "set_bluetooth");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "and the one i just made?" after a ticket's status: the same query of another item, the
 * newest other one in the memory; "and 1000?" the one whose number is said; a word of another
 * tool's name is the model's. */
static void test_query_other_item(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "create_ticket(summary=\"vpn drops\", priority=\"high\")");
    pipit_turn_free(turn(&fx, "open a ticket: vpn drops, high priority"));
    script_call(&fx, "get_ticket_status(ticket_id=\"T-1000\")");
    pipit_turn_free(turn(&fx, "whats the status of T-1000"));
    struct pipit_turn *t = turn(&fx, "and the one i just made?"); /* nothing scripted */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "get_ticket_status");
    assert_string_equal(t->calls[0].args_json, "{\"ticket_id\":\"T-1001\"}");
    pipit_turn_free(t);
    t = turn(&fx, "what about 1000?");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"ticket_id\":\"T-1000\"}");
    pipit_turn_free(t);
    script_call(&fx, "set_wifi(enabled=true)");
    t = turn(&fx, "and the wifi on");
    assert_string_equal(t->calls[0].tool, "set_wifi");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* An item the person describes by its fields, answered in words or sent to the cloud: the tool
 * of that item's shape the segment names, else its one query; never for a question or a
 * negation (agent_item_call()). */
static void test_item_described(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "set_timer(minutes=5)");
    pipit_turn_free(turn(&fx, "timer 5 min"));
    script_call(&fx, "set_timer(minutes=20)");
    pipit_turn_free(turn(&fx, "and another one for 20 minutes"));
    script(&fx, 1, (const char *const[]){"Okay."});
    struct pipit_turn *t = turn(&fx, "how long is the 20 minute one?");
    assert_int_equal(t->n_calls, 0); /* a question: no call */
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "don't cancel the 20 minute one");
    assert_int_equal(t->n_calls, 0); /* a negation */
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "cancel the 5 minute one");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "cancel_timer");
    assert_string_equal(t->calls[0].args_json, "{\"timer_id\":\"TM-1\"}");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    /* sent to the cloud: the segment names no tool of threads, the one query of them reads */
    script_call(&fx, "process_with_cloud_llm(user_query_context=\"open the one from mom\", "
                     "reason_for_escalation=\"needs world knowledge\")");
    t = turn(&fx, "open the one from mom");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "read_messages");
    assert_string_equal(t->calls[0].args_json, "{\"thread_id\":\"TH-2\"}");
    pipit_turn_free(t);
    /* a pack tool the segment does not name: the tool it names ("open"), the file described
     * by the words of its path */
    script_call(&fx, "set_bluetooth(enabled=true)");
    t = turn(&fx, "open my passport scan");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "open_file");
    assert_string_equal(t->calls[0].args_json, "{\"file_id\":\"F-211\"}");
    pipit_turn_free(t);
    /* a tool the segment names stays the model's */
    script_call(&fx, "set_bluetooth(enabled=true)");
    t = turn(&fx, "bluetooth on, then the passport scan");
    assert_string_equal(t->calls[0].tool, "set_bluetooth");
    pipit_turn_free(t);
    teardown_fx(&fx);
    /* an ordinal picks by the state's order: "the first one" is the older timer */
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "set_timer(minutes=10)");
    pipit_turn_free(turn(&fx, "timer 10 min"));
    script_call(&fx, "set_timer(minutes=45)");
    pipit_turn_free(turn(&fx, "another for 45 minutes"));
    script_call(&fx, "cancel_timer(timer_id=\"TM-2\")");
    t = turn(&fx, "cancel the first one");
    assert_string_equal(t->calls[0].args_json, "{\"timer_id\":\"TM-1\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A call that failed, taken up again: "ok send it now" (a word of its tool's name and words
 * pointing back) runs it again, turns later; "Sam Rivera" right after a failure whose code names
 * an argument runs it with that argument; "never mind" runs nothing, nor a name a turn later. */
static void test_failed_call_taken_up(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, "{\"airplane_mode\": true, \"wifi\": false}");
    script_call(&fx, "send_message(recipient=\"Mom\", body=\"I'm boarding now\")");
    struct pipit_turn *t = turn(&fx, "text mom I'm boarding now");
    assert_false(t->calls[0].ok); /* offline */
    pipit_turn_free(t);
    script_call(&fx, "set_wifi(enabled=true)");
    pipit_turn_free(turn(&fx, "turn wifi back on"));
    t = turn(&fx, "ok send it now"); /* nothing scripted: the harness's call */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "send_message");
    assert_string_equal(t->calls[0].args_json,
                        "{\"recipient\":\"Mom\",\"body\":\"I'm boarding now\"}");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "ok send it now"); /* it went: nothing failed to send again */
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    script_call(&fx, "set_airplane_mode(enabled=true)");
    pipit_turn_free(turn(&fx, "airplane mode on"));
    script_call(&fx, "set_wifi(enabled=false)");
    pipit_turn_free(turn(&fx, "wifi off"));
    script_call(&fx, "send_message(recipient=\"Mom\", body=\"landed\")");
    pipit_turn_free(turn(&fx, "text mom landed"));
    script_call(&fx, "set_wifi(enabled=true)");
    pipit_turn_free(turn(&fx, "wifi on"));
    t = turn(&fx, "and resend it"); /* "resend": "re" and a word of its name */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"recipient\":\"Mom\",\"body\":\"landed\"}");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    script_call(&fx, "send_message(recipient=\"Sam\", body=\"I'm running late\")");
    t = turn(&fx, "text Sam that I'm running late");
    assert_false(t->calls[0].ok);
    assert_non_null(strstr(t->sentence, "Sam Rivera"));
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "never mind");
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "Sam Rivera"); /* the failure was two turns ago: the model's */
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    script_call(&fx, "send_message(recipient=\"Sam\", body=\"I'm running late\")");
    pipit_turn_free(turn(&fx, "text Sam that I'm running late"));
    t = turn(&fx, "I meant Sam Rivera");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json,
                        "{\"recipient\":\"Sam Rivera\",\"body\":\"I'm running late\"}");
    assert_true(t->calls[0].ok);
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A boolean's side said with its name's own word: "unlock" and "disarm" undo "locked" and
 * "armed" (a new user's e-bike had locked on "unlock and disarm"), "lock it up" opening the
 * segment does it; "release the lock" says the noun, not the side (agent_flip_noop_switch() reads
 * it). */
static void test_polarity_by_stem(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"bike\", \"state\": {\"locked\": {\"type\": \"boolean\", "
        "\"initial\": false}, \"armed\": {\"type\": \"boolean\", \"initial\": true}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"lock_bike\", "
        "\"description\": \"Lock or unlock the bike\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"locked\": {\"type\": \"boolean\"}}, \"required\": [\"locked\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"locked\": \"{locked}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"arm_alarm\", "
        "\"description\": \"Arm or disarm the alarm\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"armed\": {\"type\": \"boolean\"}}, \"required\": [\"armed\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"armed\": \"{armed}\"}}}}]}";
    static const struct {
        const char *say, *model, *args;
    } cases[] = {
        {"unlock it", "lock_bike(locked=true)", "{\"locked\":false}"},
        {"disarm", "arm_alarm(armed=true)", "{\"armed\":false}"},
        {"lock it up", "lock_bike(locked=false)", "{\"locked\":true}"},
        {"please arm the alarm", "arm_alarm(armed=false)", "{\"armed\":true}"},
        /* the noun: no side said, and the lock is on; what already is was not asked for */
        {"release the lock", "lock_bike(locked=true)", "{\"locked\":false}"},
    };
    struct fixture fx;
    setup_spec_in(&fx, SPEC, sizeof(SPEC) - 1, "{\"locked\": true, \"armed\": false}");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (t->n_calls != 1 || strcmp(t->calls[0].args_json, cases[k].args) != 0) {
            fail_msg("\"%s\": %s", cases[k].say, t->n_calls > 0 ? t->calls[0].args_json : "-");
        }
        pipit_turn_free(t);
    }
    /* the side said when it already is: said so, never flipped */
    script_call(&fx, "arm_alarm(armed=false)");
    pipit_turn_free(turn(&fx, "disarm it"));
    assert_state(&fx, "armed", "false");
    script_call(&fx, "arm_alarm(armed=false)");
    struct pipit_turn *t = turn(&fx, "disarm it");
    assert_string_equal(t->calls[0].args_json, "{\"armed\":false}");
    assert_non_null(strstr(t->sentence, "already"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "stop navigating please" -> navigate_to(destination="navigating"): a word of stopping and a
 * word of a stopping tool's name (a common start, or an abbreviation: "nav off") ask for that
 * tool; a destination said stays the model's. */
static void test_stop_tool(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"nav\", \"state\": {\"destination\": {\"type\": "
        "\"string\", \"initial\": \"\"}}}, \"tools\": [{\"type\": \"function\", "
        "\"function\": {\"name\": \"navigate_to\", \"description\": \"Start navigation\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"destination\": {\"type\": "
        "\"string\"}}, \"required\": [\"destination\"]}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"destination\": \"{destination}\"}}}}, {\"type\": \"function\", \"function\": "
        "{\"name\": \"end_navigation\", \"description\": \"Stop navigation\", \"parameters\": "
        "{\"type\": \"object\", \"properties\": {}}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"destination\": \"\"}}}}]}";
    static const struct {
        const char *say, *model, *tool;
    } cases[] = {
        {"stop navigating please", "navigate_to(destination=\"navigating\")", "end_navigation"},
        {"almost home now, nav off", "navigate_to(destination=\"home\")", "end_navigation"},
        {"navigate to the park", "navigate_to(destination=\"the park\")", "navigate_to"},
        /* negated: never the stopping tool (the harness keeps a negated request from acting) */
        {"don't stop navigating", "navigate_to(destination=\"navigating\")", NULL},
    };
    struct fixture fx;
    setup_spec_in(&fx, SPEC, sizeof(SPEC) - 1, "{\"destination\": \"the station\"}");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool ok =
            cases[k].tool == NULL
                ? t->n_calls == 0 || strcmp(t->calls[0].tool, "end_navigation") != 0
                : t->n_calls >= 1 && strcmp(t->calls[t->n_calls - 1].tool, cases[k].tool) == 0;
        if (!ok) {
            fail_msg("\"%s\": %s", cases[k].say, t->n_calls > 0 ? t->calls[0].tool : "-");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* "try again" after a question the cloud failed to answer asks that question again, from the
 * harness, without the model ("try again" itself had gone to the cloud as the question); an
 * answered question is never what "again" means. */
static void test_cloud_retry(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "process_with_cloud_llm(user_query_context=\"capital of peru\", "
                     "reason_for_escalation=\"general knowledge\")");
    struct pipit_turn *t = turn(&fx, "what's the capital of peru");
    assert_int_equal(t->n_calls, 1);
    assert_false(t->calls[0].ok);
    pipit_turn_free(t);
    int steps = fx.fake.n_steps;
    t = turn(&fx, "try again");
    assert_int_equal(fx.fake.n_steps, steps); /* no model step */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "process_with_cloud_llm");
    assert_non_null(strstr(t->calls[0].args_json, "capital of peru"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Of two tools named <verb>_<rest>, the one whose verb opens the segment: "stop the rinse" had
 * started a rinse; its required enum from the value said in an -ing form ("start descaling"). */
static void test_verb_pair(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"cleaner\", \"state\": {\"cycle\": {\"type\": \"string\", "
        "\"enum\": [\"off\", \"descale\", \"rinse\"], \"initial\": \"off\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"start_cleaning\", "
        "\"description\": \"Start a cycle\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"program\": {\"type\": \"string\", \"enum\": [\"descale\", "
        "\"rinse\"]}}, \"required\": [\"program\"]}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"cycle\": \"{program}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"stop_cleaning\", "
        "\"description\": \"Stop the cycle\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {}}}, \"pipit\": {\"effect\": {\"set\": {\"cycle\": \"off\"}}}}]}";
    struct fixture fx;
    setup_spec_in(&fx, SPEC, sizeof(SPEC) - 1, "{\"cycle\": \"rinse\"}");
    script_call(&fx, "start_cleaning(program=\"rinse\")");
    struct pipit_turn *t = turn(&fx, "stop the rinse");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "stop_cleaning");
    pipit_turn_free(t);
    assert_state(&fx, "cycle", "\"off\"");
    script_call(&fx, "stop_cleaning()");
    t = turn(&fx, "start descaling");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"program\":\"descale\"}");
    pipit_turn_free(t);
    assert_state(&fx, "cycle", "\"descale\"");
    /* the model's verb said: its call stands */
    script_call(&fx, "stop_cleaning()");
    t = turn(&fx, "stop it, start a rinse later");
    assert_string_equal(t->calls[0].tool, "stop_cleaning");
    pipit_turn_free(t);
    /* "stop it" while a cycle runs, answered in words: the tool named for stopping it */
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "start_cleaning(program=\"rinse\")");
    pipit_turn_free(turn(&fx, "run a rinse"));
    script(&fx, 1, (const char *const[]){"I've stopped it."});
    t = turn(&fx, "stop it");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "stop_cleaning");
    pipit_turn_free(t);
    assert_state(&fx, "cycle", "\"off\"");
    script(&fx, 1, (const char *const[]){"Okay."});
    t = turn(&fx, "stop it"); /* nothing runs: nothing to stop */
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A time said renames the call to the tool that takes one, with the optional choice said
 * ("schedule a cappuccino at half six" had cancelled the schedule; renamed, it had brewed the
 * default drink). */
static void test_time_tool_takes_the_choice(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"brewer\", \"state\": {"
        "\"wake_time\": {\"type\": \"string\", \"initial\": \"off\"}, "
        "\"wake_drink\": {\"type\": \"string\", \"initial\": \"latte\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"schedule_brew\", "
        "\"description\": \"Brew at a time\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"time\": {\"type\": \"string\", \"description\": \"HH:MM\"}, "
        "\"drink\": {\"type\": \"string\", \"enum\": [\"latte\", \"cappuccino\"], "
        "\"default\": \"latte\"}}, \"required\": [\"time\"]}}, \"pipit\": {\"effect\": "
        "{\"set\": {\"wake_time\": \"{time}\", \"wake_drink\": \"{drink}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"cancel_schedule\", "
        "\"description\": \"Cancel the brew\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {}}}, \"pipit\": {\"effect\": {\"set\": {\"wake_time\": "
        "\"off\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "cancel_schedule()");
    struct pipit_turn *t = turn(&fx, "schedule a cappuccino at half six tomorrow morning");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "schedule_brew");
    assert_string_equal(t->calls[0].args_json, "{\"time\":\"06:30\",\"drink\":\"cappuccino\"}");
    pipit_turn_free(t);
    assert_state(&fx, "wake_drink", "\"cappuccino\"");
    teardown_fx(&fx);
}

/* A request to write words is the cloud's, whatever tool the model took ("draft a polite
 * message to my landlord" had sent one); a verb the pack's examples open with stays the pack's. */
static void test_compose_is_the_clouds(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    script_call(&fx, "send_message(recipient=\"Mom\", body=\"draft a polite\")");
    struct pipit_turn *t = turn(&fx, "draft a polite message to my landlord about the heater");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "process_with_cloud_llm");
    assert_true(t->flags & PIPIT_TURN_OPEN_QUESTION);
    pipit_turn_free(t);
    script_call(&fx, "send_message(recipient=\"Mom\", body=\"hi\")");
    t = turn(&fx, "text mom hi");
    assert_string_equal(t->calls[0].tool, "send_message");
    pipit_turn_free(t);
    teardown_fx(&fx);
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"notes\", \"state\": {\"count\": {\"type\": \"integer\", "
        "\"initial\": 0}}}, \"tools\": [{\"type\": \"function\", "
        "\"function\": {\"name\": \"add_note\", \"description\": \"Add a note\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"text\": {\"type\": "
        "\"string\"}}, \"required\": [\"text\"]}}, \"pipit\": {\"examples\": [{\"say\": "
        "\"write down milk\", \"args\": {\"text\": \"milk\"}}]}}, {\"type\": \"function\", "
        "\"function\": {\"name\": \"process_with_cloud_llm\", \"description\": \"Ask the "
        "cloud\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"user_query_context\": {\"type\": \"string\"}, \"reason_for_escalation\": "
        "{\"type\": \"string\"}}, \"required\": [\"user_query_context\", "
        "\"reason_for_escalation\"]}}, \"pipit\": {\"effect\": \"cloud\"}}]}";
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "add_note(text=\"eggs\")");
    t = turn(&fx, "write down eggs");
    assert_string_equal(t->calls[0].tool, "add_note");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A count said before a plural runs the call that many times ("take two shots", "two
 * espressos please" had made one); a number a tool takes is the number's. */
static void test_said_count(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "take_photo()");
    struct pipit_turn *t = turn(&fx, "take two shots");
    assert_int_equal(t->n_calls, 2);
    pipit_turn_free(t);
    assert_state(&fx, "photos_taken", "2");
    script_call(&fx, "take_photo()");
    t = turn(&fx, "3 photos of the cake please");
    assert_int_equal(t->n_calls, 3);
    pipit_turn_free(t);
    assert_state(&fx, "photos_taken", "5");
    script_call(&fx, "set_timer(seconds=3)");
    t = turn(&fx, "a 3 second timer");
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    script_call(&fx, "take_photo()");
    t = turn(&fx, "take one, we have two minutes");
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    /* a number after "plus" is a value, "it's" no plural ("exposure plus three, it's so shady"
     * had taken three photos) */
    script_call(&fx, "take_photo()");
    t = turn(&fx, "exposure plus three its so shady");
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    /* "twice", "three times": a count too (a new user's "ring the bell twice" rang once) */
    script_call(&fx, "take_photo()");
    t = turn(&fx, "snap it twice");
    assert_int_equal(t->n_calls, 2);
    pipit_turn_free(t);
    script_call(&fx, "take_photo()");
    t = turn(&fx, "take it three times");
    assert_int_equal(t->n_calls, 3);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A key named with its number is that key's setter, whatever action the model took
 * ("exposure plus three, it's so shady under here" had taken a photo; "zoom to like fifty x"
 * had set the exposure): refused here, with the limit; not when the segment names the model's
 * tool ("a photo at 2x"). */
static void test_key_number_named(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "take_photo()");
    struct pipit_turn *t = turn(&fx, "exposure plus three, its so shady under here");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_exposure");
    assert_false(t->calls[0].ok);
    assert_state(&fx, "photos_taken", "0");
    pipit_turn_free(t);
    script_call(&fx, "take_photo()");
    t = turn(&fx, "zoom two, the birds are far");
    assert_string_equal(t->calls[0].tool, "set_zoom");
    assert_state(&fx, "zoom", "2.0");
    pipit_turn_free(t);
    script_call(&fx, "take_photo()");
    t = turn(&fx, "a photo at zoom three");
    assert_string_equal(t->calls[0].tool, "take_photo");
    pipit_turn_free(t);
    /* a tool of numbers that writes another key: the number is the named key's */
    script_call(&fx, "set_exposure(ev=-0.5)");
    t = turn(&fx, "can you zoom to like fifty x so i can read the menu board");
    assert_string_equal(t->calls[0].tool, "set_zoom");
    assert_false(t->calls[0].ok);
    assert_non_null(strstr(t->sentence, "10x"));
    assert_state(&fx, "exposure_ev", "0.0");
    pipit_turn_free(t);
    /* ... not when it writes the key named: which number is the model's */
    script_call(&fx, "set_zoom(level=3)");
    t = turn(&fx, "zoom in to 3 for the two birds");
    assert_string_equal(t->calls[0].args_json, "{\"level\":3}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Values made of a name and a number ("p1".."p3"): the number said is the value ("slot two"
 * had saved to p3); "one" after "the other" is a pronoun; a name's "as" is not the name. */
static void test_numbered_value(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"favs\", \"state\": {\"p1_name\": {\"type\": \"string\", "
        "\"initial\": \"empty\"}, \"p2_name\": {\"type\": \"string\", \"initial\": \"empty\"}, "
        "\"p3_name\": {\"type\": \"string\", \"initial\": \"empty\"}}}, \"tools\": [{\"type\": "
        "\"function\", \"function\": {\"name\": \"save_favourite\", \"description\": \"Save the "
        "settings in a slot\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"slot\": {\"type\": \"string\", \"enum\": [\"p1\", \"p2\", \"p3\"]}, \"name\": "
        "{\"type\": \"string\", \"maxLength\": 24}}, \"required\": [\"slot\", \"name\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"{slot}_name\": \"{name}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "save_favourite(slot=\"p1\", name=\"sunday\")");
    struct pipit_turn *t = turn(&fx, "save it as sunday, no one else uses it");
    assert_string_equal(t->calls[0].args_json, "{\"slot\":\"p1\",\"name\":\"sunday\"}");
    pipit_turn_free(t);
    script_call(&fx, "save_favourite(slot=\"p3\", name=\"as movie night\")");
    t = turn(&fx, "save this as movie night in slot two");
    assert_string_equal(t->calls[0].args_json, "{\"slot\":\"p2\",\"name\":\"movie night\"}");
    assert_state(&fx, "p2_name", "\"movie night\"");
    pipit_turn_free(t);
    /* what is named, then "as": the name is what follows */
    script_call(&fx, "save_favourite(slot=\"p1\", name=\"current settings as towels\")");
    t = turn(&fx, "save the current settings as towels in slot one");
    assert_string_equal(t->calls[0].args_json, "{\"slot\":\"p1\",\"name\":\"towels\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A value said by its name and number where some values are that name and a number: that
 * value, or, with none, the said one, refused with the list ("switch to hdmi 3" had switched a
 * new user's projector to hdmi2). */
static void test_named_number_value(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"beamer\", \"state\": {\"input\": {\"type\": \"string\", "
        "\"enum\": [\"hdmi1\", \"hdmi2\", \"usb\", \"cast\"], \"initial\": \"hdmi1\"}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_input\", "
        "\"description\": \"Choose the input\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"source\": {\"type\": \"string\", \"enum\": [\"hdmi1\", \"hdmi2\", "
        "\"usb\", \"cast\"]}}, \"required\": [\"source\"]}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"input\": \"{source}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    static const struct args_case cases[] = {
        {"switch to hdmi 3", "set_input(source=\"hdmi2\")", "{\"source\":\"hdmi3\"}", true},
        {"hdmi 2 please", "set_input(source=\"hdmi1\")", "{\"source\":\"hdmi2\"}", true},
        {"go to HDMI-2", "set_input(source=\"usb\")", "{\"source\":\"hdmi2\"}", true},
        {"use hdmi2", "set_input(source=\"hdmi2\")", "{\"source\":\"hdmi2\"}", false},
        {"hdmi 1 or hdmi 2, whichever", "set_input(source=\"usb\")", "{\"source\":\"usb\"}", false},
        {"the usb stick", "set_input(source=\"usb\")", "{\"source\":\"usb\"}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    assert_state(&fx, "input", "\"usb\""); /* the last case ran; hdmi3 was refused */
    teardown_fx(&fx);
}

/* A name said after "as", as the pack's examples say it, is the name, up to a word that places
 * it ("save it as evening in preset 2": "evening", where the model had copied "brightness"). */
static void test_name_after_as(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"favs\", \"state\": {\"p1_name\": {\"type\": \"string\", "
        "\"initial\": \"empty\"}, \"p2_name\": {\"type\": \"string\", \"initial\": \"empty\"}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"save_preset\", "
        "\"description\": \"Save the settings in a slot\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"slot\": {\"type\": \"string\", \"enum\": [\"p1\", \"p2\"]}, "
        "\"name\": {\"type\": \"string\", \"maxLength\": 24}}, \"required\": [\"slot\", "
        "\"name\"]}}, \"pipit\": {\"effect\": {\"set\": {\"{slot}_name\": \"{name}\"}}, "
        "\"examples\": [{\"say\": \"save this as movie night in slot 2\", \"args\": {\"slot\": "
        "\"p2\", \"name\": \"movie night\"}}]}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "save_preset(slot=\"p2\", name=\"brightness\")");
    struct pipit_turn *t = turn(&fx, "save it as evening in slot 2");
    assert_string_equal(t->calls[0].args_json, "{\"slot\":\"p2\",\"name\":\"evening\"}");
    assert_state(&fx, "p2_name", "\"evening\"");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "what's it at now?" right after a setting asks about the key that setting sets ("what's it
 * at now?" after a temperature had been "Sorry, I can't answer that here."), and so does "is it
 * on now?" (a state word after "is it"); not another yes/no question about "it" ("is it too
 * bright in here?", "is it raining?"). */
static void test_it_is_the_last_key(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_zoom(level=3)");
    pipit_turn_free(turn(&fx, "zoom to 3x"));
    struct pipit_turn *t = turn(&fx, "what's it at now?");
    assert_string_equal(t->sentence, "The zoom is 3x.");
    assert_int_equal(t->model_calls, 0);
    assert_true(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    /* a yes/no question of its state: "is it on now?" after the grid went on */
    script_call(&fx, "set_grid(enabled=true)");
    pipit_turn_free(turn(&fx, "grid on"));
    t = turn(&fx, "is it on now?");
    assert_string_equal(t->sentence, "The grid is on.");
    assert_int_equal(t->model_calls, 0);
    pipit_turn_free(t);
    /* ... not a question that names a state of its own ("is it still recording?") */
    t = turn(&fx, "is it still recording?");
    assert_null(strstr(t->sentence, "grid"));
    pipit_turn_free(t);
    /* ... not a question of the world ("is it raining?") */
    script(&fx, 1, (const char *const[]){"No idea."});
    t = turn(&fx, "is it raining?");
    assert_false(t->flags & PIPIT_TURN_STATE_ANSWER);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "hold on" beside a request is no request of its own ("hold on, zoom in" had also taken a
 * photo: "hold" is the camera's verb). */
static void test_aside_segment(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "adjust_zoom(direction=\"in\")");
    struct pipit_turn *t = turn(&fx, "hold on, zoom in");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "adjust_zoom");
    assert_int_equal(t->model_calls, 1);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* One setting set to one value twice in a turn is one call and one sentence ("flash stays off
 * for sure, no flash at the pool" had made two); an action twice is two. */
static void test_repeated_setting_once(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "set_flash(mode=\"on\")");
    script_call(&fx, "set_flash(mode=\"on\")");
    struct pipit_turn *t = turn(&fx, "flash on, and the flash on");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->sentence, "The flash is on.");
    pipit_turn_free(t);
    script_call(&fx, "take_photo()");
    script_call(&fx, "take_photo()");
    t = turn(&fx, "take a photo and take a photo");
    assert_int_equal(t->n_calls, 2);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* An optional choice the model left out is the person's when they say it, sizes in other words
 * too ("big americano please" had made a medium). */
static void test_optional_choice_said(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"cafe\", \"state\": {\"cups\": {\"type\": \"integer\", "
        "\"initial\": 0}}}, \"tools\": [{\"type\": \"function\", \"function\": {\"name\": "
        "\"brew_drink\", \"description\": \"Brew a drink\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {\"drink\": {\"type\": \"string\", \"enum\": [\"americano\", "
        "\"latte\"]}, \"size\": {\"type\": \"string\", \"enum\": [\"small\", \"medium\", "
        "\"large\"], \"default\": \"medium\"}}, \"required\": [\"drink\"]}}, \"pipit\": "
        "{\"effect\": {\"step\": {\"key\": \"cups\", \"by\": 1}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    static const char *const cases[][2] = {
        {"big americano please", "{\"drink\":\"americano\",\"size\":\"large\"}"},
        {"a small latte", "{\"drink\":\"latte\",\"size\":\"small\"}"},
        {"an americano", "{\"drink\":\"americano\"}"},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        char call[96];
        snprintf(call, sizeof(call), "brew_drink(drink=\"%s\")", k == 1 ? "latte" : "americano");
        script_call(&fx, call);
        struct pipit_turn *t = turn(&fx, cases[k][0]);
        if (t->n_calls != 1 || strcmp(t->calls[0].args_json, cases[k][1]) != 0) {
            fail_msg("\"%s\": %s", cases[k][0], t->n_calls > 0 ? t->calls[0].args_json : "-");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* The item the person describes by its fields, not the one the model copied from an example:
 * "send the Kyoto temple photo to Elena" is P-103 (Kyoto, temple), not the example's P-106; an
 * identifier the person wrote, or a description that fits two items alike, stays the model's. */
static void test_item_by_its_fields(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const char *const cases[][3] = {
        {"send the Kyoto temple photo to Elena",
         "share_photo(photo_id=\"P-106\", recipient=\"Elena Petrova\")", "P-103"},
        {"send P-106 to Elena", "share_photo(photo_id=\"P-106\", recipient=\"Elena Petrova\")",
         "P-106"},
        {"send the Kyoto photo to Elena",
         "share_photo(photo_id=\"P-106\", recipient=\"Elena Petrova\")",
         "P-106"}, /* two Kyoto photos: which one is not said */
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k][1]);
        struct pipit_turn *t = turn(&fx, cases[k][0]);
        if (t->n_calls != 1 || strstr(t->calls[0].args_json, cases[k][2]) == NULL) {
            fail_msg("\"%s\": %s", cases[k][0], t->n_calls > 0 ? t->calls[0].args_json : "-");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* "and the bedroom too" after a colour in the living room: the last call in the place said (the
 * home model had made the bedroom blue); a question or a word of its own is not one. */
static void test_place_too(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "set_light_colour(room=\"living_room\", colour=\"purple\")");
    pipit_turn_free(turn(&fx, "living room lights purple"));
    struct pipit_turn *t = turn(&fx, "and the bedroom too"); /* nothing scripted */
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"bedroom\",\"colour\":\"purple\"}");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    pipit_turn_free(t);
    t = turn(&fx, "kitchen as well");
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"kitchen\",\"colour\":\"purple\"}");
    pipit_turn_free(t);
    script_call(&fx, "set_blinds(open_percent=100)");
    t = turn(&fx, "and the blinds too");
    assert_string_equal(t->calls[0].tool, "set_blinds");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A time of day is no free text: "06:15 then" had become time "then" (the person's words put
 * back over the model's copy of the time). */
static void test_time_is_no_free_text(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, NULL);
    static const struct args_case cases[] = {
        {"06:15 then", "set_alarm(time=\"06:15\")", "{\"time\":\"06:15\"}", false},
        {"alarm at 14:00 called dentist", "set_alarm(time=\"14:00\", label=\"dentist\")",
         "{\"time\":\"14:00\",\"label\":\"dentist\"}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    teardown_fx(&fx);
}

/* "turn it on then" after "is bluetooth on?", sent to the cloud by the model: the key asked
 * about, switched (it had gone to the cloud on a new user's phone); a question stays. */
static void test_asked_key_over_cloud(void **state) {
    (void)state;
    struct fixture fx;
    setup_phone(&fx, NULL, "{\"bluetooth\": false}");
    pipit_turn_free(turn(&fx, "is bluetooth on?"));
    script_call(&fx, "process_with_cloud_llm(user_query_context=\"turn it on then\", "
                     "reason_for_escalation=\"needs world knowledge\")");
    struct pipit_turn *t = turn(&fx, "turn it on then");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_bluetooth");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* What "instead of" sets aside is not the value said: "make the flash on instead of auto" had
 * kept the model's auto. */
static void test_set_aside_value(void **state) {
    (void)state;
    static const struct args_case cases[] = {
        {"can u make the flash on instead of auto", "set_flash(mode=\"auto\")", "{\"mode\":\"on\"}",
         true},
        {"instead of on, flash auto", "set_flash(mode=\"on\")", "{\"mode\":\"auto\"}", true},
        {"flash on rather than auto", "set_flash(mode=\"on\")", "{\"mode\":\"on\"}", false},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct fixture fx; /* each from the flash off */
        setup_with(&fx, NULL);
        run_args_cases(&fx, &cases[k], 1, PIPIT_TURN_WORDS_RESTORED);
        teardown_fx(&fx);
    }
}

/* "take a pic" answered with "You're welcome.": two or more of its content words, and at least
 * half, are words of one argumentless tool's examples ("take a snapshot", "save a pic of
 * this"), as is, a noun of their kin or a verb people use for their first: that tool; one
 * word, a negation or a question is no such call. */
static void test_example_words_call(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"monitor\", \"state\": {\"volume\": {\"type\": \"integer\", "
        "\"initial\": 2, \"minimum\": 0, \"maximum\": 5}}}, \"tools\": [{\"type\": \"function\", "
        "\"function\": {\"name\": \"take_snapshot\", \"description\": \"Save a photo from the "
        "camera\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, \"pipit\": "
        "{\"undo\": \"none\", \"examples\": [{\"say\": \"take a snapshot\", \"args\": {}}, "
        "{\"say\": \"save a pic of this\", \"args\": {}}]}}, {\"type\": \"function\", "
        "\"function\": {\"name\": \"set_volume\", \"description\": \"Set the volume\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"level\": {\"type\": "
        "\"integer\", \"minimum\": 0, \"maximum\": 5}}, \"required\": [\"level\"]}}, \"pipit\": "
        "{\"effect\": {\"set\": {\"volume\": \"{level}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    static const struct {
        const char *say;
        size_t calls;
    } CASES[] = {{"take a pic", 1},
                 {"take a quick photo for grandma", 1},
                 /* a verb people use for an example's verb ("grab" for "take") and a noun of
                  * the same kin ("picture", "shot" for "pic") count (a new user's baby
                  * monitor: "grab a photo of the two of them asleep" -> "Sorry, I can't") */
                 {"grab a picture of the two of them asleep", 1},
                 {"get a shot of her yawning", 1},
                 {"what a lovely picture", 0},
                 {"what a pic", 0},
                 {"don't take a pic", 0},
                 {"take a pic?", 0}};
    for (size_t k = 0; k < sizeof(CASES) / sizeof(CASES[0]); k++) {
        script(&fx, 1, (const char *const[]){"You're welcome."});
        struct pipit_turn *t = turn(&fx, CASES[k].say);
        if (t->n_calls != CASES[k].calls ||
            (t->n_calls == 1 && strcmp(t->calls[0].tool, "take_snapshot") != 0)) {
            fail_msg("\"%s\": %zu calls (%s)", CASES[k].say, t->n_calls, t->sentence);
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

/* The sign said wins over a remark's mood: "exposure plus one" with "gloomy" or "dark" around
 * it had set -1 EV on a new user's camera; "minus" and "down" the other way; a number said
 * without a sign stays the model's. */
static void test_said_sign(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct args_case cases[] = {
        {"too bright, exposure minus 2", "set_exposure(ev=2)", "{\"ev\":-2}", true},
        {"its kinda gloomy, exposure plus one", "set_exposure(ev=-1)", "{\"ev\":1}", true},
        {"exposure one up, it's super dark", "set_exposure(ev=-1)", "{\"ev\":1}", true},
        {"exposure -1", "set_exposure(ev=-1)", "{\"ev\":-1}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_NUMBER_RESTORED);
    teardown_fx(&fx);
}

/* "living room light cool white and sixty percent": a segment that is one number and its unit,
 * after a call of the same turn on a place, is the number of the tool that takes that place
 * and a number with that unit (the home model had opened the blinds 66%); a number with a word
 * of its own stays the model's. */
static void test_number_in_last_place(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script(&fx, 2,
           (const char *const[]){"<call>set_light_colour(room=\"living_room\", colour=\"cool\")",
                                 "<call>set_blinds(open_percent=66)"});
    struct pipit_turn *t = turn(&fx, "living room light cool white and sixty percent");
    assert_int_equal(t->n_calls, 2);
    assert_string_equal(t->calls[1].tool, "set_brightness");
    assert_string_equal(t->calls[1].args_json, "{\"room\":\"living_room\",\"percent\":60}");
    pipit_turn_free(t);
    script(&fx, 2,
           (const char *const[]){"<call>set_light_colour(room=\"kitchen\", colour=\"red\")",
                                 "<call>set_blinds(open_percent=40)"});
    t = turn(&fx, "kitchen light red and blinds 40");
    assert_int_equal(t->n_calls, 2);
    assert_string_equal(t->calls[1].tool, "set_blinds");
    pipit_turn_free(t);
    script_call(&fx, "set_light_colour(room=\"kitchen\", colour=\"blue\")");
    pipit_turn_free(turn(&fx, "kitchen light blue"));
    script_call(&fx, "set_blinds(open_percent=30)"); /* a new turn: the model's */
    t = turn(&fx, "thirty percent");
    assert_string_equal(t->calls[0].tool, "set_blinds");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "make the living room turquoise" -> set_brightness(percent=1): a word the pack does not know,
 * at the end where a pack example ("make the bedroom light red") has a colour, is that tool's
 * colour, refused with the colours it has; a colour it has, or a word the pack knows, stays
 * the model's. */
static void test_unknown_value_other_tool(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    script_call(&fx, "set_brightness(room=\"living_room\", percent=1)");
    struct pipit_turn *t = turn(&fx, "make the living room turquoise");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_light_colour");
    assert_string_equal(t->calls[0].args_json,
                        "{\"room\":\"living_room\",\"colour\":\"turquoise\"}");
    assert_false(t->calls[0].executed);
    assert_non_null(strstr(t->sentence, "must be one of"));
    pipit_turn_free(t);
    script_call(&fx, "set_light_colour(room=\"bedroom\", colour=\"blue\")");
    t = turn(&fx, "make the bedroom light teal please");
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"bedroom\",\"colour\":\"teal\"}");
    pipit_turn_free(t);
    script_call(&fx, "set_light_colour(room=\"kitchen\", colour=\"blue\")");
    t = turn(&fx, "make the kitchen light blue");
    assert_true(t->calls[0].ok);
    pipit_turn_free(t);
    script_call(&fx, "set_brightness(room=\"kitchen\", percent=40)");
    t = turn(&fx, "make the kitchen 40"); /* a number: the model's */
    assert_string_equal(t->calls[0].tool, "set_brightness");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A value the tool does not have is the person's, refused with the values it has, never
 * replaced by one it has ("set the white balance to candlelight" -> daylight); a value said, a
 * word the pack knows (a description's synonym) or a word for a ratio stays the model's. */
static void test_unknown_value_refused(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    static const struct {
        const char *say, *model, *args;
        bool refused;
    } cases[] = {
        {"set the white balance to candlelight", "set_white_balance(mode=\"daylight\")",
         "{\"mode\":\"candlelight\"}", true},
        {"scene mode underwater", "set_scene_mode(mode=\"food\")", "{\"mode\":\"underwater\"}",
         true},
        {"aspect ratio 21:9", "set_aspect_ratio(ratio=\"16:9\")", "{\"ratio\":\"21:9\"}", true},
        /* between a determiner and the tool's name ("show the weather screen" on an e-bike) */
        {"use the underwater scene", "set_scene_mode(mode=\"food\")", "{\"mode\":\"underwater\"}",
         true},
        {"white balance to daylight please", "set_white_balance(mode=\"daylight\")",
         "{\"mode\":\"daylight\"}", false},
        {"widescreen please", "set_aspect_ratio(ratio=\"16:9\")", "{\"ratio\":\"16:9\"}", false},
        {"scene mode normal", "set_scene_mode(mode=\"auto\")", "{\"mode\":\"auto\"}", false},
        {"sunny out, set the white balance to match", "set_white_balance(mode=\"daylight\")",
         "{\"mode\":\"daylight\"}", false},
        {"flip to the rear camera", "switch_camera(facing=\"back\")", "{\"facing\":\"back\"}",
         false}, /* two values: the model's to map */
        {"don't set the scene to fireworks", "set_scene_mode(mode=\"auto\")", "{\"mode\":\"auto\"}",
         false},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        if (cases[k].refused) {
            if (t->n_calls != 1 || t->calls[0].executed ||
                strcmp(t->calls[0].args_json, cases[k].args) != 0 ||
                strstr(t->sentence, "must be one of") == NULL) {
                fail_msg("\"%s\": %zu calls, %s, \"%s\"", cases[k].say, t->n_calls,
                         t->n_calls > 0 ? t->calls[0].args_json : "-", t->sentence);
            }
        } else if (t->n_calls == 1 && strcmp(t->calls[0].args_json, cases[k].args) != 0) {
            fail_msg("\"%s\": %s", cases[k].say, t->calls[0].args_json);
        }
        pipit_turn_free(t);
    }
    assert_state(&fx, "white_balance", "\"daylight\"");
    teardown_fx(&fx);
    /* a synonym the pack writes down is the model's to map */
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"lamp\", \"state\": {\"colour\": {\"type\": \"string\", "
        "\"enum\": [\"warm\", \"cool\", \"neutral\"], \"initial\": \"warm\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_colour\", "
        "\"description\": \"Set the lamp colour\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"colour\": {\"type\": \"string\", \"enum\": [\"warm\", \"cool\", "
        "\"neutral\"], "
        "\"description\": \"warm (cosy, candlelight) or cool (daylight)\"}}, "
        "\"required\": [\"colour\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"colour\": \"{colour}\"}}}}]}";
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "set_colour(colour=\"warm\")");
    struct pipit_turn *t = turn(&fx, "set the colour to candlelight");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"colour\":\"warm\"}");
    pipit_turn_free(t);
    script_call(&fx, "set_colour(colour=\"cool\")");
    t = turn(&fx, "set the colour to purple");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"colour\":\"purple\"}");
    assert_false(t->calls[0].executed);
    pipit_turn_free(t);
    assert_state(&fx, "colour", "\"warm\"");
    teardown_fx(&fx);
}

/* "it" after a question is the key asked about: "is the kitchen light on?" ... "turn it on
 * then" switches the kitchen light, whatever room the model took; "do I have the flash on?" ...
 * "put it on" switches the flash, whatever tool the model took. */
static void test_it_is_the_key_asked(void **state) {
    (void)state;
    struct fixture fx;
    setup_home_pack(&fx);
    pipit_turn_free(turn(&fx, "is the kitchen light on?"));
    script_call(&fx, "switch_light(room=\"living_room\", on=true)");
    struct pipit_turn *t = turn(&fx, "turn it on then");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"room\":\"kitchen\",\"on\":true}");
    assert_true(t->flags & PIPIT_TURN_CARRIED);
    assert_state(&fx, "kitchen_light", "true");
    assert_state(&fx, "living_room_light", "false");
    pipit_turn_free(t);
    teardown_fx(&fx);
    /* a key of its own: "put it on" is its switch, by the harness, whatever the model says */
    setup_with(&fx, NULL);
    pipit_turn_free(turn(&fx, "do I have the flash on?"));
    script_call(&fx, "set_exposure(ev=1)");
    t = turn(&fx, "put it on, it's pretty dim in here");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_flash");
    assert_state(&fx, "flash", "\"on\"");
    assert_state(&fx, "exposure_ev", "0.0");
    pipit_turn_free(t);
    /* the end of the range asked about, with no last action of that key */
    pipit_turn_free(turn(&fx, "what's the zoom at"));
    t = turn(&fx, "all the way out");
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "set_zoom");
    assert_state(&fx, "zoom", "0.5");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* An agent on the pack `spec` (a tool file's text), its device the pack's simulator started
 * in `init` (JSON, NULL: the declared initial state). */
static void setup_spec_in(struct fixture *fx, const char *spec, size_t len, const char *init) {
    memset(fx, 0, sizeof(*fx));
    struct pipit_error err;
    if (pipit_toolset_load_string(spec, len, "spec.json", &fx->ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    fx->device = test_device("pack", fx->ts, init);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx->device;
    if (agent_new_with_backend(NULL, fx->ts, &p, fake_backend_wrap(&fx->fake), &fx->agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
}

static void setup_spec(struct fixture *fx, const char *spec, size_t len) {
    setup_spec_in(fx, spec, len, NULL);
}

/* A mode turned off is the mode the device starts in: "turn off turbo" -> set_mode(turbo)
 * leaves turbo; when it was not on, nothing changes and the sentence says so; another mode
 * said, a negation or a switch's enum leave the model's call. */
static void test_mode_turned_off(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"mower\", \"state\": {"
        "\"mode\": {\"type\": \"string\", \"enum\": [\"eco\", \"normal\", \"turbo\"], "
        "\"initial\": \"normal\", \"words\": {\"names\": \"mode\"}}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_mode\", \"description\": "
        "\"Set the mowing mode\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"mode\": {\"type\": \"string\", \"enum\": [\"eco\", \"normal\", \"turbo\"]}}, "
        "\"required\": [\"mode\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"mode\": \"{mode}\"}}}}]}";
    static const struct {
        const char *before, *say, *model, *after;
    } cases[] = {
        {"turbo", "turn off turbo", "set_mode(mode=\"turbo\")", "\"normal\""},
        {"turbo", "no more turbo mode please", "set_mode(mode=\"turbo\")", "\"normal\""},
        {"eco", "turbo off", "set_mode(mode=\"turbo\")", "\"eco\""},
        {"turbo", "get out of turbo into eco", "set_mode(mode=\"turbo\")", "\"turbo\""},
        {"eco", "turbo please", "set_mode(mode=\"turbo\")", "\"turbo\""},
        {"turbo", "don't turn off turbo", "set_mode(mode=\"turbo\")", "\"turbo\""},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char init[64];
        snprintf(init, sizeof(init), "{\"mode\": \"%s\"}", cases[k].before);
        struct fixture fx;
        setup_spec_in(&fx, SPEC, sizeof(SPEC) - 1, init);
        script_call(&fx, cases[k].model);
        struct pipit_turn *t = turn(&fx, cases[k].say);
        char got[64];
        state_key(&fx, "mode", got, sizeof(got));
        if (strcmp(got, cases[k].after) != 0) {
            fail_msg("\"%s\" from %s: %s (%s)", cases[k].say, cases[k].before, got, t->sentence);
        }
        if (k == 2) {
            assert_non_null(strstr(t->sentence, "already"));
        }
        pipit_turn_free(t);
        teardown_fx(&fx);
    }
}

/* A tool's own verb is its on side: "record the first song" -> record_video(action="stop")
 * starts the recording; a word of stopping keeps the model's stop; "stop it" stops what runs. */
static void test_own_verb_side(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    script_call(&fx, "record_video(action=\"stop\")");
    struct pipit_turn *t = turn(&fx, "record the first song");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"action\":\"start\"}");
    assert_true(t->flags & PIPIT_TURN_WORDS_RESTORED);
    assert_state(&fx, "recording", "true");
    pipit_turn_free(t);
    script_call(&fx, "record_video(action=\"stop\")");
    t = turn(&fx, "ok recording done, stop it");
    assert_string_equal(t->calls[0].args_json, "{\"action\":\"stop\"}");
    assert_state(&fx, "recording", "false");
    pipit_turn_free(t);
    /* "enough, stop it" while a recording runs stops it, whatever the model called */
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "record_video(action=\"start\")");
    pipit_turn_free(turn(&fx, "start recording"));
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "set_exposure(ev=1)");
    t = turn(&fx, "enough, stop it");
    if (t->n_calls != 1 || strcmp(t->calls[0].tool, "record_video") != 0) {
        fail_msg("%zu calls: %s (%s)", t->n_calls, t->n_calls > 0 ? t->calls[0].tool : "-",
                 t->sentence);
    }
    assert_state(&fx, "recording", "false");
    assert_state(&fx, "exposure_ev", "0.0");
    pipit_turn_free(t);
    /* a negation in a clause of purpose negates that clause ("lock the panel so the toddler
     * can't mess with it" had unlocked a new user's washer) */
    fx.fake.next = fx.fake.n_script;
    script_call(&fx, "record_video(action=\"stop\")");
    t = turn(&fx, "record the speech so we don't miss it");
    assert_string_equal(t->calls[0].args_json, "{\"action\":\"start\"}");
    assert_state(&fx, "recording", "true");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* "the other side too" after a call on one of two places is the same call on the other one,
 * by the harness; with three places, or other words, the model reads it. */
static void test_other_place(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"car\", \"state\": {"
        "\"driver_seat_heat\": {\"type\": \"integer\", \"initial\": 0, \"minimum\": 0, "
        "\"maximum\": 3}, \"passenger_seat_heat\": {\"type\": \"integer\", \"initial\": 0, "
        "\"minimum\": 0, \"maximum\": 3}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_seat_heat\", \"description\": "
        "\"Seat heating\", \"parameters\": {\"type\": \"object\", \"properties\": {\"seat\": "
        "{\"type\": \"string\", \"enum\": [\"driver\", \"passenger\"]}, \"level\": {\"type\": "
        "\"integer\", \"minimum\": 0, \"maximum\": 3}}, \"required\": [\"seat\", \"level\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"{seat}_seat_heat\": \"{level}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "set_seat_heat(seat=\"driver\", level=2)");
    struct pipit_turn *t = turn(&fx, "heat my seat to 2");
    pipit_turn_free(t);
    t = turn(&fx, "the other side too"); /* nothing scripted: the harness's call */
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"seat\":\"passenger\",\"level\":2}");
    pipit_turn_free(t);
    char got[32];
    state_key(&fx, "passenger_seat_heat", got, sizeof(got));
    assert_string_equal(got, "2");
    script_call(&fx, "set_seat_heat(seat=\"driver\", level=1)");
    t = turn(&fx, "the other side of the road"); /* more than a follow-up: the model's */
    assert_false(t->flags & PIPIT_TURN_FOLLOW_UP);
    pipit_turn_free(t);
    teardown_fx(&fx);
    /* no place: the tool's one value of two, said as a correction */
    setup_with(&fx, NULL);
    script_call(&fx, "switch_camera(facing=\"front\")");
    pipit_turn_free(turn(&fx, "switch to the front camera"));
    t = turn(&fx, "nah, the other one"); /* nothing scripted: the harness's call */
    assert_true(t->flags & PIPIT_TURN_FOLLOW_UP);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].args_json, "{\"facing\":\"back\"}");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A name said with its argument's name ("its name is Bertha") or from the request's verb on
 * ("rename it to Mowzart") is the name alone; a state key's declared values name it ("is it
 * docked?"). */
static void test_name_and_declared_values(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"mower\", \"state\": {"
        "\"status\": {\"type\": \"string\", \"enum\": [\"docked\", \"mowing\"], "
        "\"initial\": \"docked\", \"words\": {\"names\": \"mower|status\", \"pattern\": "
        "\"The mower is {v}.\"}}, "
        "\"mower_name\": {\"type\": \"string\", \"initial\": \"Mower\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"start_mowing\", \"description\": "
        "\"Start mowing\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"status\": \"mowing\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"rename_mower\", \"description\": "
        "\"Rename the mower\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"name\": {\"type\": \"string\", \"maxLength\": 40}}, \"required\": [\"name\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"mower_name\": \"{name}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    struct pipit_turn *t = turn(&fx, "is it docked?");
    assert_int_equal(t->n_calls, 0);
    assert_string_equal(t->sentence, "The mower is docked.");
    pipit_turn_free(t);
    static const struct args_case cases[] = {
        {"from now on its name is Bertha", "rename_mower(name=\"its name is Bertha\")",
         "{\"name\":\"Bertha\"}", true},
        {"rename it to Mowzart", "rename_mower(name=\"rename it to Mowzart\")",
         "{\"name\":\"Mowzart\"}", true},
        {"rename it Grass Hopper", "rename_mower(name=\"Grass Hopper\")",
         "{\"name\":\"Grass Hopper\"}", false},
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    t = turn(&fx, "what's it called?"); /* a key named for a name is what a thing is called */
    assert_int_equal(t->n_calls, 0);
    assert_non_null(strstr(t->sentence, "Grass Hopper"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A phrase the router reads as undo is the pack's when one of its examples says it: "go
 * back" returns a mower whose pack says "go back to the dock"; on the camera it undoes. */
static void test_example_says_undo_phrase(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"mower\", \"state\": {\"status\": {\"type\": \"string\", "
        "\"enum\": [\"docked\", \"mowing\"], \"initial\": \"mowing\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"return_to_dock\", \"description\": "
        "\"Send the mower home\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"status\": \"docked\"}}, \"examples\": [{\"say\": "
        "\"go back to the dock\", \"args\": {}}, {\"say\": \"never mind the mowing\", "
        "\"args\": {}}]}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "return_to_dock()");
    struct pipit_turn *t = turn(&fx, "go back");
    assert_false(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "return_to_dock");
    assert_state(&fx, "status", "\"docked\"");
    pipit_turn_free(t);
    /* a retraction said whole is an undo, whatever example has its words with more after
     * them ("never mind" in "never mind the mowing") */
    t = turn(&fx, "never mind");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "status", "\"mowing\"");
    pipit_turn_free(t);
    teardown_fx(&fx);
    setup_with(&fx, NULL);
    script_call(&fx, "set_zoom(level=2)");
    pipit_turn_free(turn(&fx, "zoom to 2x"));
    t = turn(&fx, "go back");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A message an example gives a free-string argument is no word of the pack's: "go back"
 * undoes on a baby monitor whose talk-back example says "tell her go back to sleep buddy" (a
 * new user's pack had lost undo to it silently). And the example's frame takes "tell him". */
static void test_example_message_keeps_undo(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"monitor\", \"state\": {\"volume\": {\"type\": \"number\", "
        "\"minimum\": 0, \"maximum\": 10, \"initial\": 3}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_volume\", \"description\": "
        "\"Speaker volume\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"level\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 10}}, "
        "\"required\": [\"level\"]}}, \"pipit\": {\"effect\": {\"set\": {\"volume\": "
        "\"{level}\"}}, \"examples\": [{\"say\": \"volume to 6\", \"args\": {\"level\": 6}}]}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"talk_to_baby\", \"description\": "
        "\"Say words to the baby\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"message\": {\"type\": \"string\", \"description\": \"The words to say\"}}, "
        "\"required\": [\"message\"]}}, \"pipit\": {\"undo\": \"none\", \"examples\": [{\"say\": "
        "\"tell her go back to sleep buddy\", \"args\": {\"message\": \"go back to sleep "
        "buddy\"}}]}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    script_call(&fx, "set_volume(level=7)");
    pipit_turn_free(turn(&fx, "volume to seven"));
    assert_state(&fx, "volume", "7.0");
    struct pipit_turn *t = turn(&fx, "go back");
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_int_equal(t->n_calls, 0);
    assert_state(&fx, "volume", "3.0");
    pipit_turn_free(t);
    /* the example's "her" is the person spoken to, no argument: "tell him ..." fits its frame
     * ("tell him daddy loves him" had been refused); "tell daddy ..." does not */
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "tell him daddy loves him");
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "talk_to_baby");
    assert_string_equal(t->calls[0].args_json, "{\"message\":\"daddy loves him\"}");
    pipit_turn_free(t);
    script(&fx, 1, (const char *const[]){"Sorry, I can't do that."});
    t = turn(&fx, "tell daddy i love him");
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* An end of a tool's levels ("full blast", "lowest") names its value, whatever the model
 * called; "off" is no level. */
static void test_extreme_level(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"fan\", \"state\": {\"speed\": {\"type\": \"string\", "
        "\"enum\": [\"off\", \"low\", \"medium\", \"high\"], \"initial\": \"off\"}, \"lamp\": "
        "{\"type\": \"number\", \"initial\": 0}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_fan\", \"description\": "
        "\"Fan speed\", \"parameters\": {\"type\": \"object\", \"properties\": {\"speed\": "
        "{\"type\": \"string\", \"enum\": [\"off\", \"low\", \"medium\", \"high\"]}}, "
        "\"required\": [\"speed\"]}}, \"pipit\": {\"effect\": {\"set\": {\"speed\": "
        "\"{speed}\"}}}},"
        "{\"type\": \"function\", \"function\": {\"name\": \"set_lamp\", \"description\": "
        "\"Lamp level\", \"parameters\": {\"type\": \"object\", \"properties\": {\"level\": "
        "{\"type\": \"number\", \"minimum\": 0, \"maximum\": 10}}, \"required\": "
        "[\"level\"]}}, \"pipit\": {\"effect\": {\"set\": {\"lamp\": \"{level}\"}}}}]}";
    struct fixture fx;
    setup_spec(&fx, SPEC, sizeof(SPEC) - 1);
    static const struct {
        const char *say, *model, *speed;
    } cases[] = {
        {"fan on full blast", "set_lamp(level=10)", "\"high\""},
        {"the fan at the lowest please", "set_lamp(level=0)", "\"low\""},
        {"don't run the fan at full power", "set_fan(speed=\"high\")", "\"low\""},
        /* "all the way" with no word of down is the top, "a little bit of" the lowest level (a
         * treadmill's "crank the fan all the way" and "little bit of fan please" had left it
         * off); with a word of down it is not the top */
        {"crank the fan all the way", "set_fan(speed=\"off\")", "\"high\""},
        {"little bit of fan please", "set_fan(speed=\"off\")", "\"low\""},
        {"fan all the way down", "set_fan(speed=\"medium\")", "\"medium\""},
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        fx.fake.next = fx.fake.n_script;
        script_call(&fx, cases[k].model);
        pipit_turn_free(turn(&fx, cases[k].say));
        assert_state(&fx, "speed", cases[k].speed);
    }
    assert_state(&fx, "lamp", "0.0"); /* the model's lamp calls did not run */
    teardown_fx(&fx);
}

/* A name copied short of its start ("play Kind of Blue" -> "Blue") takes the words said before
 * it; not past a verb, determiner or "a bit of", not an identifier, not the end of a phrase. */
static void test_name_copied_short(void **state) {
    (void)state;
    struct fixture fx;
    memset(&fx, 0, sizeof(fx));
    fx.ts = test_load_tools(PIPIT_SOURCE_DIR "/tests/packs/music.json");
    fx.device = test_device("pack", fx.ts, NULL);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx.device;
    struct pipit_error err;
    if (agent_new_with_backend(NULL, fx.ts, &p, fake_backend_wrap(&fx.fake), &fx.agent, &err) !=
        PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    static const struct args_case cases[] = {
        {"play Kind of Blue", "play_music(query=\"Blue\")", "{\"query\":\"Kind of Blue\"}", true},
        {"could you throw on a bit of lo-fi hip hop for studying", "play_music(query=\"hip hop\")",
         "{\"query\":\"lo-fi hip hop\"}", true},
        {"play some jazz", "play_music(query=\"jazz\")", "{\"query\":\"jazz\"}", false},
        {"play the banana bread song", "play_music(query=\"banana bread\")",
         "{\"query\":\"banana bread\"}", false}, /* the end stays the model's */
    };
    run_args_cases(&fx, cases, sizeof(cases) / sizeof(cases[0]), PIPIT_TURN_WORDS_RESTORED);
    teardown_fx(&fx);
}

/* A question never acts: a call the model makes for a question ("is the picture too dark?"
 * -> exposure up) does not run when it would change something: with the pack's cloud tool the
 * question goes there (flag open_question); without one the call is kept and the sentence says
 * so; requests phrased as questions ("is it possible to zoom in?", "what about 3x?", "how do I
 * turn on the grid?") and commands that start with "do" still act. */
static void question_never_acts(bool with_cloud) {
    static const struct {
        const char *say, *model;
        bool kept;
    } cases[] = {
        {"is the picture too dark?", "set_exposure(ev=1)", true},
        {"does night mode help here?", "set_scene_mode(mode=\"night\")", true},
        {"how bright is the picture", "set_exposure(ev=2)", true},
        {"so which zoom is best for portraits", "set_zoom(level=2)", true},
        {"is it possible to zoom in?", "set_zoom(level=2)", false},
        {"what about 3x?", "set_zoom(level=3)", false},
        {"how do I turn on the grid?", "set_grid(enabled=true)", false},
        {"do it in night mode", "set_scene_mode(mode=\"night\")", false},
        /* a question whose call validation would refuse: kept, never a refusal of a value
         * nobody asked for */
        {"is the zoom too high?", "set_zoom(level=50)", true},
        /* "will"/"should" ask unless "you"/"we" follow */
        {"how long will it take?", "set_timer(seconds=3)", true},
        {"should I use the grid?", "set_grid(enabled=true)", true},
        {"will you zoom in?", "set_zoom(level=2)", false},
        /* the state sentence only for a key the question names: "flash" is not said here */
        {"is it too bright in here?", "set_flash(mode=\"off\")", true},
    };
    enum {
        N = sizeof(cases) / sizeof(cases[0])
    };
    struct fixture fx;
    if (with_cloud) {
        setup_with(&fx, NULL);
    } else {
        setup_no_cloud(&fx, PIPIT_SOURCE_DIR "/tools/camera.json", "camera");
    }
    for (size_t k = 0; k < N; k++) {
        script_call(&fx, cases[k].model);
    }
    for (size_t k = 0; k < N; k++) {
        fx.fake.next = (int)k; /* case k's output, whether the turn before asked the model or not */
        struct pipit_turn *t = turn(&fx, cases[k].say);
        bool kept = (t->flags & PIPIT_TURN_QUESTION_KEPT) != 0;
        bool asked = t->n_calls == 1 && (t->flags & PIPIT_TURN_OPEN_QUESTION) != 0 &&
                     strcmp(t->calls[0].tool, "process_with_cloud_llm") == 0;
        if ((with_cloud ? asked : kept) != cases[k].kept || (with_cloud ? kept : asked) ||
            t->n_calls != 1 || (!asked && t->calls[0].executed == kept)) {
            fail_msg("\"%s\": kept %d, asked the cloud %d, %zu calls, sentence \"%s\"",
                     cases[k].say, kept, asked, t->n_calls, t->sentence);
        }
        if (kept) {
            assert_string_equal(t->calls[0].code, "question");
            assert_non_null(strstr(t->sentence, "didn't change anything"));
            assert_null(strstr(t->sentence, "can't"));
            assert_null(strstr(t->sentence, "flash"));
        }
        if (k == 3) { /* nothing the questions asked changed the camera */
            assert_state(&fx, "exposure_ev", "0.0");
            assert_state(&fx, "scene_mode", "\"auto\"");
            assert_state(&fx, "zoom", "1.0");
        }
        pipit_turn_free(t);
    }
    teardown_fx(&fx);
}

static void test_question_never_acts(void **state) {
    (void)state;
    question_never_acts(true);
    question_never_acts(false);
}

/* A kept question's call with a key per place ("{room}_brightness") says the state of the one
 * key the question names. */
static void test_question_kept_names_its_key(void **state) {
    (void)state;
    struct fixture fx;
    setup_no_cloud(&fx, PIPIT_SOURCE_DIR "/tools/home.json", "pack");
    script_call(&fx, "set_brightness(room=\"kitchen\", percent=100)");
    struct pipit_turn *t = turn(&fx, "is the kitchen brightness too low for cooking?");
    assert_true(t->flags & PIPIT_TURN_QUESTION_KEPT);
    assert_false(t->calls[0].executed);
    if (strstr(t->sentence, "kitchen brightness") == NULL) {
        fail_msg("sentence \"%s\"", t->sentence);
    }
    assert_null(strstr(t->sentence, "living room"));
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* Sentences from real state: a call that changed nothing is no action for undo, and an undo
 * right after it reverts nothing older (it says that nothing changed); "undo everything" says a key
 * put back twice once, with the value it ends at, and a tool's sentence without a key's once; a
 * success template's placeholder that neither the arguments nor the result fill reads from the
 * state. */
static void test_sentences_from_state(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *const out[] = {"<call>set_zoom(level=3)", "<call>set_flash(mode=\"off\")",
                               "<call>set_zoom(level=5)", "<call>set_zoom(level=7)"};
    script(&fx, 4, out);
    struct pipit_turn *t = turn(&fx, "zoom to 3");
    pipit_turn_free(t);
    t = turn(&fx, "flash off"); /* it was off: nothing changed, and the sentence says so */
    assert_true(t->calls[0].executed && t->calls[0].ok);
    assert_string_equal(t->sentence, "The flash is already off.");
    pipit_turn_free(t);
    t = turn(&fx, "undo"); /* not "The flash is off again.", and not the zoom either */
    assert_true(t->flags & PIPIT_TURN_UNDO);
    assert_string_equal(t->sentence,
                        "There's nothing to undo: that changed nothing. The flash is off.");
    assert_state(&fx, "zoom", "3.0");
    pipit_turn_free(t);
    t = turn(&fx, "undo"); /* the one before it: the zoom */
    assert_string_equal(t->sentence, "The zoom is 1x again.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    t = turn(&fx, "zoom to 5");
    pipit_turn_free(t);
    t = turn(&fx, "zoom to 7");
    pipit_turn_free(t);
    t = turn(&fx, "undo everything");
    assert_string_equal(t->sentence, "The zoom is 1x again.");
    assert_state(&fx, "zoom", "1.0");
    pipit_turn_free(t);
    /* two calls of a tool that moves several keys: the sentence without a key's, once */
    script(&fx, 2,
           (const char *const[]){"<call>tap_to_focus(x=0.2, y=0.2)",
                                 "<call>tap_to_focus(x=0.8, y=0.8)"});
    pipit_turn_free(turn(&fx, "focus top left"));
    pipit_turn_free(turn(&fx, "focus bottom right"));
    t = turn(&fx, "undo everything");
    const char *once = strstr(t->sentence, "I undid the last change (");
    assert_non_null(once);
    assert_null(strstr(once + 1, "I undid the last change ("));
    assert_state(&fx, "focus_x", "0.5");
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* {pressure} after a step of 0 (which writes nothing): the state's value */
    static const char spec[] =
        "{\"pipit\":{\"pack\":\"garden\",\"state\":{\"pressure\":{\"type\":\"number\","
        "\"initial\":2.5,\"minimum\":1,\"maximum\":4}}},\"tools\":[{\"type\":\"function\","
        "\"function\":{\"name\":\"adjust_pressure\",\"description\":\"Change the pressure\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"bar\":{\"type\":\"number\","
        "\"minimum\":-1,\"maximum\":1}},\"required\":[\"bar\"]}},\"pipit\":{\"success\":"
        "\"The pressure is {pressure} bar now.\",\"effect\":{\"step\":{\"key\":\"pressure\","
        "\"by\":\"{bar}\"}}}}]}";
    struct pipit_toolset *ts = test_tools_from(spec, "garden");
    struct pipit_error err;
    struct fake_backend fb;
    memset(&fb, 0, sizeof(fb));
    fb.script[0] = "<call>adjust_pressure(bar=0)";
    fb.n_script = 1;
    struct pipit_device *dev = test_device("pack", ts, NULL);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = dev;
    struct pipit_agent *a = NULL;
    assert_int_equal(test_agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&fb), &a, &err),
                     PIPIT_OK);
    assert_int_equal(pipit_agent_turn(a, "hold the pressure where it is", &t), PIPIT_OK);
    assert_string_equal(t->sentence, "The pressure is already 2.5 bar.");
    pipit_turn_free(t);
    pipit_agent_free(a);
    pipit_device_free(dev);
    pipit_toolset_free(ts);
}

/* A number copied without its unit is converted to the argument's unit ("timer 2 minutes"
 * -> seconds=2 becomes 120, refused with the limit); a bent one is restored in that unit. */
static void test_person_unit_converted(void **state) {
    (void)state;
    struct fixture fx;
    setup_with(&fx, NULL);
    const char *const out[] = {"<call>set_timer(seconds=2)", "<call>set_timer(seconds=10)",
                               "<call>set_timer(seconds=10)", "<call>set_timer(seconds=2)"};
    script(&fx, 4, out);
    struct pipit_turn *t = turn(&fx, "timer 2 minutes");
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "120"));
    assert_false(t->calls[0].executed);
    assert_state(&fx, "timer_s", "0");
    pipit_turn_free(t);
    t = turn(&fx, "set a 5 min timer"); /* bent to 10: the person's 300 s comes back */
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "300"));
    assert_state(&fx, "timer_s", "0");
    pipit_turn_free(t);
    t = turn(&fx, "10 second timer"); /* the same unit: nothing to convert */
    assert_false(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_state(&fx, "timer_s", "10");
    pipit_turn_free(t);
    t = turn(&fx, "timer for 2 days"); /* days too: 172800 s, refused with the limit */
    assert_true(t->flags & PIPIT_TURN_NUMBER_RESTORED);
    assert_non_null(strstr(t->calls[0].args_json, "172800"));
    assert_false(t->calls[0].executed);
    assert_state(&fx, "timer_s", "10");
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* ============================================================================ memory, JIT */

/* 25 scripted camera turns; returns the permanent prefix growth from turn 1 to turn 25. */
static const char *const CAMERA_SESSION[][2] = {
    {"zoom in to 2x", "<call>set_zoom(level=2)"},
    {"turn on the flash", "<call>set_flash(mode=\"on\")"},
    {"take a photo", "<call>take_photo()"},
    {"night mode please", "<call>set_scene_mode(mode=\"night\")"},
    {"3 second timer", "<call>set_timer(seconds=3)"},
    {"grid on", "<call>set_grid(enabled=true)"},
    {"thanks, that looks great", "Glad it helps!"},
    {"zoom out a bit", "<call>adjust_zoom(direction=\"out\")"},
    {"white balance cloudy", "<call>set_white_balance(mode=\"cloudy\")"},
    {"focus on the top left", "<call>tap_to_focus(x=0.2, y=0.2)"},
    {"lock the focus", "<call>set_ae_af_lock(locked=true)"},
    {"unlock it", "<call>set_ae_af_lock(locked=false)"},
    {"brighter", "<call>set_exposure(ev=1)"},
    {"16 by 9", "<call>set_aspect_ratio(ratio=\"16:9\")"},
    {"start recording", "<call>record_video(action=\"start\")"},
    {"flash off", "<call>set_flash(mode=\"off\")"},
    {"snap one", "<call>take_photo()"},
    {"stop the video", "<call>record_video(action=\"stop\")"},
    {"level the horizon", "<call>set_horizon_level(enabled=true)"},
    {"faster shots", "<call>set_quality_priority(priority=\"speed\")"},
    {"jpeg quality 80", "<call>set_jpeg_quality(quality=80)"},
    {"portrait mode", "<call>set_scene_mode(mode=\"portrait\")"},
    {"selfie camera", "<call>switch_camera(facing=\"front\")"},
    {"zoom 2x", "<call>set_zoom(level=2)"},
    {"take the picture", "<call>take_photo()"},
};

static const char *const PHONE_SESSION[][2] = {
    {"text mom that I'll be late", "<call>send_message(recipient=\"Mom\", body=\"I'll be late\")"},
    {"my laptop won't boot, open a ticket",
     "<call>create_ticket(summary=\"laptop won't boot\", priority=\"high\")"},
    {"set an alarm for 6:45", "<call>set_alarm(time=\"06:45\", label=\"gym\")"},
    {"start a 15 minute timer", "<call>set_timer(minutes=15)"},
    {"find my photos from the beach", "<call>search_photos(query=\"beach\")"},
    {"turn on bluetooth", "<call>set_bluetooth(enabled=true)"},
    {"note that the wifi password is on the fridge",
     "<call>create_note(title=\"wifi\", body=\"password on the fridge\")"},
    {"thanks!", "You're welcome!"},
    {"what's the status of my ticket", "<call>get_ticket_status(ticket_id=\"T-1001\")"},
    {"cancel that timer", "<call>cancel_timer(timer_id=\"TM-1\")"},
    {"read my messages", "<call>read_messages()"},
    {"navigate to the office", "<call>navigate_to(destination=\"office\", mode=\"driving\")"},
    {"airplane mode on", "<call>set_airplane_mode(enabled=true)"},
    {"airplane mode off", "<call>set_airplane_mode(enabled=false)"},
    {"find the budget spreadsheet", "<call>find_file(name=\"budget\")"},
    {"add buy milk to that note", "<call>append_note(note_id=\"N-1\", text=\"buy milk\")"},
    {"start another timer for 5 minutes", "<call>set_timer(minutes=5)"},
    {"wifi off", "<call>set_wifi(enabled=false)"},
    {"wifi on again", "<call>set_wifi(enabled=true)"},
    {"open a low priority ticket for the printer",
     "<call>create_ticket(summary=\"printer jams\", priority=\"low\")"},
    {"alarm at 7", "<call>set_alarm(time=\"07:00\", label=\"work\")"},
    {"tell Sam I'm on my way", "<call>send_message(recipient=\"Sam Lee\", body=\"on my way\")"},
    {"how are you?", "I'm doing well, thanks for asking."},
    {"bluetooth off", "<call>set_bluetooth(enabled=false)"},
    {"note: call the bank", "<call>create_note(title=\"todo\", body=\"call the bank\")"},
};

/* 25 scripted turns; the permanent prefix's growth from turn 1 to the last turn. */
static int32_t session_growth(const char *device,
                              const char *const (*turns)[2],
                              size_t n_turns,
                              int memory,
                              const struct pipit_model *vocab) {
    struct pipit_agent_params p = pipit_agent_default_params();
    p.memory = memory;
    p.n_ctx = 65536;      /* no trimming in this comparison */
    p.small_talk = false; /* every scripted turn reaches the model */
    struct fixture fx;
    memset(&fx, 0, sizeof(fx));
    struct pipit_error err;
    char spec[512];
    snprintf(spec, sizeof(spec), "%s/tools/%s.json", PIPIT_SOURCE_DIR, device);
    assert_int_equal(pipit_toolset_load_file(spec, &fx.ts, &err), PIPIT_OK);
    fx.device = test_device(device, fx.ts, NULL);
    p.device = fx.device;
    assert_int_equal(
        test_agent_new_with_backend(NULL, fx.ts, &p, fake_backend_wrap(&fx.fake), &fx.agent, &err),
        PIPIT_OK);
    fx.fake.vocab = vocab;
    int32_t first = 0, last = 0;
    for (size_t i = 0; i < n_turns; i++) {
        script(&fx, 1, &turns[i][1]);
        struct pipit_turn *t = turn(&fx, turns[i][0]);
        if (turns[i][1][0] == '<' && t->n_calls != 1) {
            fail_msg("%s turn %zu: %s", device, i, t->sentence);
        }
        if (getenv("PIPIT_TEST_DUMP") != NULL) {
            print_message("turn %zu: %zu calls, flags %u: %s\n", i, t->n_calls, t->flags,
                          t->sentence);
        }
        if (i > 0) {
            /* only memory is prefilled, never the system prefix again: the new lines, or all of
             * them when lines went this turn (a rebuild, which never grows the prefix more) */
            assert_int_equal(t->permanent_prefill_tokens, 0);
            assert_true(t->n_permanent <= last + t->memory_prefill_tokens);
        }
        if (i == 0) {
            first = t->n_permanent;
        }
        last = t->n_permanent;
        pipit_turn_free(t);
    }
    if (getenv("PIPIT_TEST_DUMP") != NULL) { /* the whole prefix, for a look */
        FILE *f = fopen(getenv("PIPIT_TEST_DUMP"), "a");
        if (f != NULL) {
            fprintf(f, "=== memory mode %d\n%s\n", memory, fx.fake.permanent);
            fclose(f);
        }
    }
    teardown_fx(&fx);
    return last - first;
}

static void test_context_growth_cso_vs_full(void **state) {
    (void)state;
    /* tokens as the 32K llama-spm tokenizer counts them (a vocab-only model) */
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_model *vocab = NULL;
    struct pipit_error err;
    assert_int_equal(
        pipit_model_load(PIPIT_VOCAB_DIR "/ggml-vocab-llama-spm.gguf", &mp, &vocab, &err),
        PIPIT_OK);
    const struct {
        const char *device;
        const char *const (*turns)[2];
        size_t n;
    } sessions[] = {
        {"camera", CAMERA_SESSION, sizeof(CAMERA_SESSION) / sizeof(CAMERA_SESSION[0])},
        {"phone", PHONE_SESSION, sizeof(PHONE_SESSION) / sizeof(PHONE_SESSION[0])},
    };
    for (size_t k = 0; k < 2; k++) {
        assert_int_equal(sessions[k].n, 25);
        int32_t full = session_growth(sessions[k].device, sessions[k].turns, sessions[k].n,
                                      PIPIT_MEMORY_FULL, vocab);
        int32_t cso = session_growth(sessions[k].device, sessions[k].turns, sessions[k].n,
                                     PIPIT_MEMORY_CSO, vocab);
        int32_t none = session_growth(sessions[k].device, sessions[k].turns, sessions[k].n,
                                      PIPIT_MEMORY_NONE, vocab);
        print_message("%s, 25 turns: context growth full %d, cso %d, none %d tokens (%.1fx)\n",
                      sessions[k].device, full, cso, none, (double)full / (cso > 0 ? cso : 1));
        assert_int_equal(none, 0);
        assert_true(cso > 0);
        assert_true(cso * 10 <= full);
    }
    pipit_model_free(vocab);
}

/* The phone: an ID made on turn 2 is what the memory keeps for turn 10. */
static void test_id_from_turn_2_used_on_turn_10(void **state) {
    (void)state;
    static const char *const turns[][2] = {
        {"hi there", "Hello! What can I do?"},
        {"my laptop won't boot, open a high priority ticket",
         "<call>create_ticket(summary=\"laptop won't boot\", priority=\"high\")"},
        {"turn on bluetooth", "<call>set_bluetooth(enabled=true)"},
        {"set an alarm for 7:30", "<call>set_alarm(time=\"07:30\")"},
        {"start a 10 minute timer", "<call>set_timer(minutes=10)"},
        {"wifi off", "<call>set_wifi(enabled=false)"},
        {"wifi back on", "<call>set_wifi(enabled=true)"},
        {"note: buy milk", "<call>create_note(title=\"shopping\", body=\"buy milk\")"},
        {"thanks", "You're welcome!"},
    };
    for (int mode = PIPIT_MEMORY_NONE; mode <= PIPIT_MEMORY_CSO; mode += 2) {
        struct pipit_agent_params p = pipit_agent_default_params();
        p.small_talk = false; /* every scripted turn reaches the model */
        p.memory = mode;
        struct fixture fx;
        memset(&fx, 0, sizeof(fx));
        struct pipit_error err;
        assert_int_equal(
            pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", &fx.ts, &err), PIPIT_OK);
        fx.device = test_device("phone", fx.ts, NULL);
        p.device = fx.device;
        assert_int_equal(test_agent_new_with_backend(NULL, fx.ts, &p, fake_backend_wrap(&fx.fake),
                                                     &fx.agent, &err),
                         PIPIT_OK);
        char made[32] = "";
        for (size_t i = 0; i < sizeof(turns) / sizeof(turns[0]); i++) {
            script(&fx, 1, &turns[i][1]);
            struct pipit_turn *t = turn(&fx, turns[i][0]);
            if (i == 1) {
                json_t *d = json_loads(t->calls[0].data_json, 0, NULL);
                snprintf(made, sizeof(made), "%s",
                         json_string_value(json_object_get(d, "ticket_id")));
                json_decref(d);
            }
            pipit_turn_free(t);
        }
        assert_true(made[0] != '\0');
        /* turn 10: a model can only name the ticket if the context holds its ID */
        const char *at = strstr(fx.fake.permanent, "ticket_id: T-");
        char out[128];
        if (at != NULL) {
            char id[32] = "";
            sscanf(at + strlen("ticket_id: "), "%31[^,\n]", id);
            snprintf(out, sizeof(out), "<call>get_ticket_status(ticket_id=\"%s\")", id);
        } else {
            snprintf(out, sizeof(out), "Which ticket do you mean?");
        }
        const char *o = out;
        script(&fx, 1, &o);
        struct pipit_turn *t = turn(&fx, "what's the status of that ticket?");
        if (mode == PIPIT_MEMORY_CSO) {
            assert_int_equal(t->n_calls, 1);
            assert_true(t->calls[0].ok);
            assert_non_null(strstr(t->calls[0].args_json, made));
        } else {
            assert_int_equal(t->n_calls, 0); /* without memory the ID is gone */
        }
        pipit_turn_free(t);
        teardown_fx(&fx);
    }
}

static void test_context_budget_trims_memory(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    struct fixture fx;
    setup_phone(&fx, &p, NULL);
    const char *hi[] = {"Hello!"};
    script(&fx, 1, hi);
    struct pipit_turn *t = turn(&fx, "hi");
    int32_t system = t->n_permanent - t->memory_prefill_tokens;
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* every note gets an ID line, which is never superseded: memory grows until trimmed */
    p.context_budget = system + 150;
    setup_phone(&fx, &p, NULL);
    int32_t trimmed = 0;
    for (int i = 0; i < 20; i++) {
        char call[96];
        snprintf(call, sizeof(call), "<call>create_note(title=\"note %d\", body=\"remember %d\")",
                 i, i);
        const char *c = call;
        script(&fx, 1, &c);
        t = turn(&fx, "take a note");
        assert_int_equal(t->n_calls, 1);
        assert_true(t->calls[0].ok);
        assert_true(t->n_permanent <= p.context_budget);
        trimmed += t->trimmed_lines;
        pipit_turn_free(t);
    }
    assert_true(trimmed > 0);
    /* the system text is never dropped, the newest facts stay */
    assert_non_null(strstr(fx.fake.permanent, "Tools:\n"));
    assert_non_null(strstr(fx.fake.permanent, "note_id: N-"));
    teardown_fx(&fx);

    /* failures of different tools each pin a line until the tool succeeds: when the pinned
     * lines alone pass the budget, the oldest are unpinned and trimmed, and the turn says so */
    p.context_budget = system + 90;
    setup_phone(&fx, &p, NULL);
    static const char *const failing[] = {
        "<call>send_message()",  "<call>share_photo()",  "<call>navigate_to()",
        "<call>request_ride()",  "<call>set_alarm()",    "<call>append_note()",
        "<call>create_ticket()", "<call>cancel_timer()",
    };
    int32_t unpinned = 0, flagged = 0;
    for (int i = 0; i < 8; i++) {
        script(&fx, 1, &failing[i]);
        t = turn(&fx, "do it");
        assert_int_equal(t->n_calls, 1);
        assert_false(t->calls[0].ok);
        assert_true(t->n_permanent <= p.context_budget);
        unpinned += t->unpinned_lines;
        flagged += (t->flags & PIPIT_TURN_UNPINNED) != 0;
        assert_true((t->unpinned_lines > 0) == ((t->flags & PIPIT_TURN_UNPINNED) != 0));
        pipit_turn_free(t);
    }
    assert_true(unpinned > 0 && flagged > 0);
    /* the newest error stays, the oldest went first */
    assert_non_null(strstr(fx.fake.permanent, "tool_error: cancel_timer"));
    assert_null(strstr(fx.fake.permanent, "tool_error: send_message"));
    teardown_fx(&fx);

    /* a budget below the system text: nothing is dropped silently, the turn says so */
    p.context_budget = 10;
    setup_phone(&fx, &p, NULL);
    script(&fx, 1, hi);
    t = turn(&fx, "hi");
    assert_true(t->flags & PIPIT_TURN_OVER_BUDGET);
    pipit_turn_free(t);
    teardown_fx(&fx);
}

/* A step that finds the context full while memory is in it (a tail longer than the budget
 * allowed for) runs again on less memory: the turn does not fail for a context the agent
 * filled. With no memory to give back, the engine's error stands. */
static void test_context_full_step_gives_back_memory(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    struct fixture fx;
    setup_phone(&fx, &p, NULL);
    struct pipit_turn *t = NULL;
    for (int i = 0; i < 6; i++) {
        char call[96];
        snprintf(call, sizeof(call), "<call>create_note(title=\"note %d\", body=\"remember %d\")",
                 i, i);
        const char *c = call;
        script(&fx, 1, &c);
        t = turn(&fx, "take a note");
        assert_true(t->calls[0].ok);
        pipit_turn_free(t);
    }
    int64_t before = fx.fake.permanent_len;
    const char *call = "<call>set_wifi(enabled=true)";
    script(&fx, 1, &call);
    /* room for the system text, the prompt, the call and most of the memory, not all of it */
    const char *last = fx.fake.prompts[fx.fake.n_steps - 1];
    fx.fake.ctx_limit = before + (int64_t)strlen(last) + (int64_t)strlen(call) - 30;
    t = turn(&fx, "wifi on");
    assert_int_equal(t->n_calls, 1);
    assert_true(t->calls[0].ok);
    assert_true(t->trimmed_lines > 0);
    assert_true(t->n_permanent < before);
    pipit_turn_free(t);
    teardown_fx(&fx);

    /* no memory at all: the error is the engine's */
    setup_phone(&fx, &p, NULL);
    script(&fx, 1, &call);
    fx.fake.ctx_limit = 10;
    struct pipit_turn *none = NULL;
    assert_int_equal(pipit_agent_turn(fx.agent, "wifi on", &none), PIPIT_ERR_CONTEXT_FULL);
    pipit_turn_free(none);
    teardown_fx(&fx);
}

static void test_jit_two_stages(void **state) {
    (void)state;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.tools_format = PIPIT_TOOLSPEC_JIT;
    p.small_talk = false; /* the greeting's plain answer comes from the model here */
    struct fixture fx;
    setup_with(&fx, &p);
    const char *out[] = {"<call>set_zoom(", "(level=2)", "Hi!"};
    script(&fx, 3, out);
    struct pipit_turn *t = turn(&fx, "zoom in to 2x");
    assert_int_equal(t->model_calls, 2);
    assert_int_equal(t->n_calls, 1);
    assert_true(t->calls[0].ok);
    assert_state(&fx, "zoom", "2.0");
    /* the prompt lists names only; stage 2 carries the one schema and the forced head */
    assert_null(strstr(fx.fake.permanent, "0.5..10"));
    assert_non_null(strstr(fx.fake.permanent, "set_zoom - "));
    assert_non_null(strstr(fx.fake.prompts[1], "Tool: set_zoom(level: number 0.5..10)"));
    const char *p1 = fx.fake.prompts[1];
    assert_string_equal(p1 + strlen(p1) - strlen("Assistant: <call>set_zoom"),
                        "Assistant: <call>set_zoom");
    assert_false(fx.fake.params[1].lazy);
    pipit_turn_free(t);
    /* plain text needs one stage */
    t = turn(&fx, "hello");
    assert_int_equal(t->model_calls, 1);
    pipit_turn_free(t);
    teardown_fx(&fx);
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
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
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
        /* one decode; two when a random model chose undo() for a request with no reversal in
         * it (docs/agent.md, "A reason to undo"): the second is never undo */
        assert_true(t->model_calls == 1 ||
                    (t->model_calls == 2 && strcmp(t->calls[0].tool, "undo") != 0));
        assert_int_equal(t->n_calls, 1);
        if (t->calls[0].status != PIPIT_OK) {
            fail_msg("turn %zu: %s: %s (%s)", i, pipit_status_str(t->calls[0].status),
                     t->calls[0].message, t->model_text);
        }
        /* a random model may pick the grammar's none() (docs/grammar.md): nothing runs */
        assert_true(t->calls[0].executed || strcmp(t->calls[0].tool, "none") == 0);
        if (i == 0) {
            assert_true(t->permanent_prefill_tokens > 100);
        } else {
            assert_int_equal(t->permanent_prefill_tokens, 0); /* turns 2..N */
            /* the prefix grows by exactly the memory delta prefilled */
            assert_int_equal(t->n_permanent, n_perm + t->memory_prefill_tokens);
        }
        n_perm = t->n_permanent;
        assert_true(t->prefill_tokens - t->permanent_prefill_tokens < 64 * t->model_calls);
        /* where the time went: the model ran, and the parts never exceed the whole */
        assert_true(t->model_ms > 0.0);
        assert_true(t->sample_ms > 0.0);
        assert_true(t->constraint_ms >= 0.0);
        assert_true(t->model_ms + t->sample_ms <= t->latency_ms);
        pipit_turn_free(t);
    }
    test_agent_free(a);
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
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* A forced call cut by the token limit comes back as a parse error (or as no call, when even
 * the trigger was cut) with the token_limit flag, in both syntaxes and both decoders (issue 21:
 * jump-forward text longer than the tokens left ended the decode early, unflagged). */
static void test_real_model_token_limit(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN);
    struct pipit_toolset *ts = camera_tools();
    static const int32_t limits[] = {2, 5, 8, 12, 16};
    for (int k = 0; k < 4; k++) {
        struct pipit_agent_params p = pipit_agent_default_params();
        p.n_threads = 1;
        p.syntax = k % 2 == 0 ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
        p.fast_grammar = k < 2;
        p.lazy_grammar = false;
        p.turn_budget_ms = 0;
        int cut = 0;
        for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
            p.max_tokens = limits[l];
            struct pipit_agent *a = NULL;
            struct pipit_error err;
            if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
                fail_msg("%s", err.text);
            }
            struct pipit_turn *t = NULL;
            assert_int_equal(pipit_agent_turn(a, "set the white balance to cloudy", &t), PIPIT_OK);
            bool whole = t->n_calls == 1 && t->calls[0].status != PIPIT_ERR_PARSE;
            bool flagged = (t->flags & PIPIT_TURN_TOKEN_LIMIT) != 0;
            if (whole == flagged) {
                fail_msg("syntax %d, fast %d, max_tokens %d: %zu calls (%s), flags 0x%x, "
                         "decoded %lld tokens: '%s'",
                         (int)p.syntax, (int)p.fast_grammar, (int)p.max_tokens, t->n_calls,
                         t->n_calls > 0 ? pipit_status_str(t->calls[0].status) : "-",
                         (unsigned)t->flags, (long long)t->decode_tokens, t->model_text);
            }
            if (flagged) {
                char *j = pipit_turn_to_json(t);
                assert_non_null(strstr(j, "\"token_limit\""));
                pipit_free(j);
                cut++;
            }
            pipit_turn_free(t);
            test_agent_free(a);
        }
        assert_true(cut > 0);
    }
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
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
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
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

static void test_real_model_state_tracker(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = camera_tools();
    for (int with_adapter = 0; with_adapter < 2; with_adapter++) {
        struct pipit_agent_params p = pipit_agent_default_params();
        p.n_threads = 1;
        p.syntax = PIPIT_SYNTAX_PIPIT;
        p.lazy_grammar = false;
        p.turn_budget_ms = 0;
        p.state_tracker = true;
        p.tracker_adapter = with_adapter ? TEST_LORA_A : NULL;
        struct pipit_agent *a = NULL;
        struct pipit_error err;
        if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        int64_t kv_before = 0;
        for (int i = 0; i < 3; i++) {
            struct pipit_turn *t = NULL;
            assert_int_equal(pipit_agent_turn(a, "white balance cloudy", &t), PIPIT_OK);
            /* measured every turn; its context grows only by the CSO delta and its lines */
            assert_true(t->tracker_ms > 0.0);
            assert_true(t->tracker_kv_bytes > kv_before || i == 0);
            kv_before = t->tracker_kv_bytes;
            char *j = pipit_turn_to_json(t);
            assert_non_null(strstr(j, "\"tracker_ms\""));
            pipit_free(j);
            pipit_turn_free(t);
        }
        test_agent_free(a);
    }
    /* an adapter made for another model is a clear error */
    struct pipit_model *q = test_load_model(TEST_MODEL_QWEN);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.state_tracker = true;
    p.tracker_adapter = TEST_LORA_A;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new(q, ts, &p, &a, &err), PIPIT_ERR_ADAPTER);
    assert_null(a);
    pipit_model_free(q);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* Flash attention is the agent's to switch on (Executor and tracker contexts): the bundled
 * model answers the same commands with it as without. */
static void test_real_model_flash_attn(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf");
    struct pipit_toolset *ts = camera_tools();
    static const char *const SAID[] = {"take a photo", "zoom in to 2x", "turn on the flash"};
    char tools[2][3][80];
    for (int fa = 0; fa < 2; fa++) {
        struct pipit_agent_params p = pipit_agent_default_params();
        p.n_threads = 1;
        p.turn_budget_ms = 0;
        p.flash_attn = fa == 1;
        p.state_tracker = true;
        struct pipit_agent *a = NULL;
        struct pipit_error err;
        if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        for (int i = 0; i < 3; i++) {
            struct pipit_turn *t = NULL;
            assert_int_equal(pipit_agent_turn(a, SAID[i], &t), PIPIT_OK);
            assert_true(t->n_calls >= 1 && t->calls[0].ok);
            snprintf(tools[fa][i], sizeof(tools[fa][i]), "%s", t->calls[0].tool);
            pipit_turn_free(t);
        }
        test_agent_free(a);
    }
    for (int i = 0; i < 3; i++) {
        assert_string_equal(tools[0][i], tools[1][i]);
    }
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* The bundled camera model on another pack's tools (a new user's pack before it has a model of
 * its own): it would call them at random, so the agent runs none of its answers and says there
 * is no model for these tools; what the harness answers itself (a state question, small talk)
 * still works. A general model (no pipit keys) on the same tools is not judged. */
static void test_real_model_foreign_pack(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf");
    struct pipit_toolset *ts = NULL;
    struct pipit_device *dev = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tests/specs/packs/homeguard.json", &ts, &err) !=
            PIPIT_OK ||
        pipit_device_from_pack(ts, NULL, &dev, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    char *before = pipit_device_state_json(dev);
    assert_non_null(before);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0;
    p.device = dev;
    struct pipit_agent *a = NULL;
    if (pipit_agent_init(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    const char *notice = pipit_agent_model_notice(a);
    assert_non_null(strstr(notice, "pipit.prompt.system is \"camera\""));
    assert_non_null(strstr(notice, "runs none of its answers"));
    static const char *const ASKED[] = {"lock the back door", "r we armed rn?",
                                        "arm it for the night and lock the garage"};
    for (size_t i = 0; i < sizeof(ASKED) / sizeof(ASKED[0]); i++) {
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(a, ASKED[i], &t), PIPIT_OK);
        assert_true((t->flags & PIPIT_TURN_FOREIGN_MODEL) != 0);
        assert_int_equal(t->n_calls, 0);
        assert_int_equal(t->model_calls, 0);
        assert_non_null(strstr(t->sentence, "no model for these tools"));
        pipit_turn_free(t);
    }
    char *after = pipit_device_state_json(dev);
    assert_string_equal(before, after); /* nothing ran */
    free(after);
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(a, "thanks!", &t), PIPIT_OK);
    assert_true((t->flags & PIPIT_TURN_FOREIGN_MODEL) == 0);
    assert_true((t->flags & PIPIT_TURN_SMALL_TALK) != 0);
    pipit_turn_free(t);
    pipit_agent_free(a);

    /* a pack whose state line is longer than the camera model's trained prompt: the model is
     * never asked, so that limits nothing, and state questions are answered */
    struct pipit_toolset *home = NULL;
    struct pipit_device *home_dev = NULL;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/home.json", &home, &err) != PIPIT_OK ||
        pipit_device_from_pack(home, NULL, &home_dev, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    p.device = home_dev;
    if (pipit_agent_init(m, home, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(pipit_agent_turn(a, "is the kitchen light on?", &t), PIPIT_OK);
    assert_true((t->flags & PIPIT_TURN_STATE_ANSWER) != 0);
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_turn(a, "turn on the kitchen light", &t), PIPIT_OK);
    assert_true((t->flags & PIPIT_TURN_FOREIGN_MODEL) != 0);
    assert_int_equal(t->n_calls, 0);
    pipit_turn_free(t);
    pipit_agent_free(a);
    pipit_device_free(home_dev);
    pipit_toolset_free(home);
    p.device = dev;

    /* a general model (no pipit keys) on the same tools is asked */
    struct pipit_model *q = test_load_model(TEST_MODEL_QWEN);
    p.max_tokens = 8;
    if (pipit_agent_init(q, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_string_equal(pipit_agent_model_notice(a), "");
    assert_int_equal(pipit_agent_turn(a, "lock the back door", &t), PIPIT_OK);
    assert_true((t->flags & PIPIT_TURN_FOREIGN_MODEL) == 0);
    assert_true(t->model_calls >= 1);
    pipit_turn_free(t);
    pipit_agent_free(a);
    pipit_model_free(q);
    free(before);
    pipit_device_free(dev);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* A long session in a small window: the tracker's context holds the agent's CSO, trimmed when
 * the agent trims its own and cut from its oldest lines when a delta would not fit, so no turn
 * fails for a context the agent filled (it did, at turn 361 of a 512-token window). */
static void test_real_model_state_tracker_long_session(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.syntax = PIPIT_SYNTAX_PIPIT;
    p.turn_budget_ms = 0;
    p.max_tokens = 16;
    p.n_ctx = 512;
    p.state_tracker = true;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    static const char *const SAID[] = {"white balance cloudy", "zoom in to 2x",
                                       "my name is Ada and I film birds", "take a photo"};
    int32_t lines = 0;
    int64_t kv_max = 0, kv_first = 0, kv_last = 0;
    int resets = 0;
    for (int i = 0; i < 30; i++) {
        struct pipit_turn *t = NULL;
        if (pipit_agent_turn(a, SAID[i % 4], &t) != PIPIT_OK) {
            fail_msg("turn %d: %s", i, pipit_agent_errmsg(a));
        }
        lines += t->tracker_lines;
        kv_first = i == 0 ? t->tracker_kv_bytes : kv_first;
        kv_max = t->tracker_kv_bytes > kv_max ? t->tracker_kv_bytes : kv_max;
        if (i > 0 && t->tracker_kv_bytes < kv_last) {
            resets++; /* its CSO was replaced by the agent's (a trim, or a delta too long) */
        }
        kv_last = t->tracker_kv_bytes;
        pipit_turn_free(t);
    }
    assert_true(lines > 0); /* it wrote: the random model's lines fill the window */
    assert_true(resets > 0);
    /* bounded by its window: at most the prompt's KV times the window over the prompt */
    assert_true(kv_max > kv_first);
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* The app's state on a real (random) model: every call is grammar-forced, so each turn runs one
 * of the app's handlers or is refused by validation; after each, undo puts back exactly the
 * state the app had before the call, through restore(). */
static void test_real_model_app_state(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN);
    struct fixture fx;
    struct home h;
    memset(&fx, 0, sizeof(fx));
    memset(&h, 0, sizeof(h));
    h.celsius = 20;
    h.living = true;
    struct pipit_error err;
    /* a random model's numbers are anything: here the thermostat takes any integer */
    char spec[2048];
    snprintf(spec, sizeof(spec), "%s", HOME_SPEC);
    static const char RANGE[] = ", \"minimum\": 10, \"maximum\": 30";
    char *range = strstr(spec, RANGE);
    assert_non_null(range);
    memmove(range, range + sizeof(RANGE) - 1, strlen(range + sizeof(RANGE) - 1) + 1);
    assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "home.json", &fx.ts, &err),
                     PIPIT_OK);
    struct pipit_app_state app = {"home", home_get_state, home_restore, &h};
    assert_int_equal(pipit_device_from_app(&app, &fx.device, &err), PIPIT_OK);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = fx.device;
    p.n_threads = 1;
    p.syntax = PIPIT_SYNTAX_PIPIT;
    p.lazy_grammar = false;
    p.turn_budget_ms = 0;
    p.temperature = 1.0f; /* sampled (seeded): greedy, the random model keeps calling undo */
    p.seed = 7;
    if (pipit_agent_init(m, fx.ts, &p, &fx.agent, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(pipit_agent_register_tool(fx.agent, "set_temperature", home_tool, &h),
                     PIPIT_OK);
    assert_int_equal(pipit_agent_register_tool(fx.agent, "set_light", home_tool, &h), PIPIT_OK);
    const char *utts[] = {"warm it up to 22",      "kitchen light on", "living room lights off",
                          "set the heating to 18", "lights on please", "make it cooler",
                          "kitchen light off",     "21 degrees"};
    int executed = 0;
    for (size_t i = 0; i < sizeof(utts) / sizeof(utts[0]); i++) {
        struct home before = h;
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(fx.agent, utts[i], &t), PIPIT_OK);
        /* "set the heating to 18": the spec names no heating, so a random call of another tool
         * is refused as an unknown thing (no call) */
        assert_int_equal(t->n_calls, (t->flags & PIPIT_TURN_UNKNOWN_THING) != 0 ? 0 : 1);
        assert_true(t->n_calls == 0 || t->calls[0].status == PIPIT_OK ||
                    t->calls[0].status == PIPIT_ERR_INVALID_ARGS);
        bool ran = t->n_calls > 0 && t->calls[0].executed && t->calls[0].ok;
        executed += ran;
        /* a call that changed nothing is no action to undo */
        bool changed =
            h.celsius != before.celsius || h.living != before.living || h.kitchen != before.kitchen;
        if (getenv("PIPIT_TEST_DUMP") != NULL && t->n_calls > 0) {
            print_message("%s -> %s(%s): %s %s\n", utts[i], t->calls[0].tool, t->calls[0].args_json,
                          pipit_status_str(t->calls[0].status), t->calls[0].message);
        }
        pipit_turn_free(t);
        int restores = h.restores;
        assert_int_equal(pipit_agent_turn(fx.agent, "undo", &t), PIPIT_OK);
        assert_true(t->flags & PIPIT_TURN_UNDO);
        assert_int_equal(h.restores, restores + (ran && changed ? 1 : 0));
        assert_int_equal(h.celsius, before.celsius);
        assert_int_equal(h.living, before.living);
        assert_int_equal(h.kitchen, before.kitchen);
        pipit_turn_free(t);
    }
    print_message("app state on a random model: %d of %zu calls ran, each undone\n", executed,
                  sizeof(utts) / sizeof(utts[0]));
    assert_true(executed > 0); /* else this test would check nothing */
    test_agent_free(fx.agent);
    pipit_device_free(fx.device);
    pipit_toolset_free(fx.ts);
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
        cmocka_unit_test(test_none_of_these_tools),
        cmocka_unit_test(test_handler_data_whole_or_failed),
        cmocka_unit_test(test_failure_sentences_name_the_reason),
        cmocka_unit_test(test_narration_is_caught),
        cmocka_unit_test(test_state_questions_answered_from_state),
        cmocka_unit_test(test_state_claims_are_corrected),
        cmocka_unit_test(test_state_truth_on_phone),
        cmocka_unit_test(test_model_undo_tool),
        cmocka_unit_test(test_pack_undo_tool_wins),
        cmocka_unit_test(test_multi_step_undo),
        cmocka_unit_test(test_undo_beyond_the_log),
        cmocka_unit_test(test_out_of_range_is_refused_not_substituted),
        cmocka_unit_test(test_bent_number_is_restored_and_refused),
        cmocka_unit_test(test_step_limit_says_what_was_not_done),
        cmocka_unit_test(test_cancel_and_thermal),
        cmocka_unit_test(test_cloud_unconfigured_and_json),
        cmocka_unit_test(test_cloud_configured_but_refused),
        cmocka_unit_test(test_pack_cloud_tool),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_every_failure_says_why),
        cmocka_unit_test(test_small_talk),
        cmocka_unit_test(test_model_undo_needs_a_reason),
        cmocka_unit_test(test_person_words_restored),
        cmocka_unit_test(test_person_unit_converted),
        cmocka_unit_test(test_person_choice_restored),
        cmocka_unit_test(test_noop_switch_flipped),
        cmocka_unit_test(test_bound_words_restored),
        cmocka_unit_test(test_unknown_thing_not_run),
        cmocka_unit_test(test_open_question_not_acted),
        cmocka_unit_test(test_question_of_what_follows),
        cmocka_unit_test(test_undo_named),
        cmocka_unit_test(test_undo_restore_named),
        cmocka_unit_test(test_what_about_after_question),
        cmocka_unit_test(test_model_undo_for_a_value),
        cmocka_unit_test(test_it_is_the_asked_key),
        cmocka_unit_test(test_undo_instead_of_a_guess),
        cmocka_unit_test(test_tag_question),
        cmocka_unit_test(test_step_direction_said),
        cmocka_unit_test(test_name_copied_short),
        cmocka_unit_test(test_setting_said_as_step),
        cmocka_unit_test(test_setting_changed_by),
        cmocka_unit_test(test_said_twice),
        cmocka_unit_test(test_tool_by_verb),
        cmocka_unit_test(test_choice_is_a_question),
        cmocka_unit_test(test_own_question_kept),
        cmocka_unit_test(test_time_of_day),
        cmocka_unit_test(test_time_said),
        cmocka_unit_test(test_patterned_time_of_day),
        cmocka_unit_test(test_verb_copied_as_thing),
        cmocka_unit_test(test_undo_both_counts_a_noop),
        cmocka_unit_test(test_bit_after_a_jump),
        cmocka_unit_test(test_named_key_from_state),
        cmocka_unit_test(test_tool_named_in_full),
        cmocka_unit_test(test_switch_guessed),
        cmocka_unit_test(test_number_guessed),
        cmocka_unit_test(test_missing_id_from_session),
        cmocka_unit_test(test_remark_dropped),
        cmocka_unit_test(test_direction_guessed),
        cmocka_unit_test(test_time_guessed),
        cmocka_unit_test(test_unknown_value_refused),
        cmocka_unit_test(test_unknown_value_other_tool),
        cmocka_unit_test(test_number_in_last_place),
        cmocka_unit_test(test_said_sign),
        cmocka_unit_test(test_example_words_call),
        cmocka_unit_test(test_set_aside_value),
        cmocka_unit_test(test_asked_key_over_cloud),
        cmocka_unit_test(test_time_is_no_free_text),
        cmocka_unit_test(test_place_too),
        cmocka_unit_test(test_model_minus_dropped),
        cmocka_unit_test(test_key_turned_off),
        cmocka_unit_test(test_value_named_as_mode),
        cmocka_unit_test(test_refusal_names_a_switch),
        cmocka_unit_test(test_refusal_argument_verb),
        cmocka_unit_test(test_said_value_restored),
        cmocka_unit_test(test_setting_name_not_shared),
        cmocka_unit_test(test_described_word_is_the_packs),
        cmocka_unit_test(test_after_colon_whole),
        cmocka_unit_test(test_example_frames),
        cmocka_unit_test(test_query_by_verb),
        cmocka_unit_test(test_item_described),
        cmocka_unit_test(test_query_other_item),
        cmocka_unit_test(test_value_by_template_word),
        cmocka_unit_test(test_failed_call_taken_up),
        cmocka_unit_test(test_polarity_by_stem),
        cmocka_unit_test(test_stop_tool),
        cmocka_unit_test(test_cloud_retry),
        cmocka_unit_test(test_comparative_verb),
        cmocka_unit_test(test_verb_pair),
        cmocka_unit_test(test_time_tool_takes_the_choice),
        cmocka_unit_test(test_compose_is_the_clouds),
        cmocka_unit_test(test_said_count),
        cmocka_unit_test(test_repeated_setting_once),
        cmocka_unit_test(test_key_number_named),
        cmocka_unit_test(test_aside_segment),
        cmocka_unit_test(test_numbered_value),
        cmocka_unit_test(test_named_number_value),
        cmocka_unit_test(test_name_after_as),
        cmocka_unit_test(test_it_is_the_last_key),
        cmocka_unit_test(test_optional_choice_said),
        cmocka_unit_test(test_item_by_its_fields),
        cmocka_unit_test(test_comparative_names_quantity),
        cmocka_unit_test(test_comparative_to_a_value),
        cmocka_unit_test(test_statement_example_is_no_small_talk),
        cmocka_unit_test(test_it_is_the_key_asked),
        cmocka_unit_test(test_name_and_declared_values),
        cmocka_unit_test(test_mode_turned_off),
        cmocka_unit_test(test_other_place),
        cmocka_unit_test(test_own_verb_side),
        cmocka_unit_test(test_example_says_undo_phrase),
        cmocka_unit_test(test_example_message_keeps_undo),
        cmocka_unit_test(test_extreme_level),
        cmocka_unit_test(test_negated_request),
        cmocka_unit_test(test_item_named_by_number),
        cmocka_unit_test(test_pattern_id_restored),
        cmocka_unit_test(test_refusal_verb_names_tool),
        cmocka_unit_test(test_wish_is_a_request),
        cmocka_unit_test(test_wish_value_of_two_tools),
        cmocka_unit_test(test_refusal_names_a_noun),
        cmocka_unit_test(test_value_said_by_its_verbs),
        cmocka_unit_test(test_question_like_example),
        cmocka_unit_test(test_step_to_a_value),
        cmocka_unit_test(test_to_one),
        cmocka_unit_test(test_time_span_tool),
        cmocka_unit_test(test_degrees_tool),
        cmocka_unit_test(test_negation_inside_a_name),
        cmocka_unit_test(test_question_kept_names_its_key),
        cmocka_unit_test(test_not_asked_noop),
        cmocka_unit_test(test_followup_last_action),
        cmocka_unit_test(test_followup_all_the_way_and_value),
        cmocka_unit_test(test_tool_by_value),
        cmocka_unit_test(test_followup_after_a_setting),
        cmocka_unit_test(test_tool_by_number_and_make_it),
        cmocka_unit_test(test_setter_or_step_by_number),
        cmocka_unit_test(test_carried_room_and_direction),
        cmocka_unit_test(test_first_verb_shared),
        cmocka_unit_test(test_number_words_restored),
        cmocka_unit_test(test_every_place),
        cmocka_unit_test(test_question_never_acts),
        cmocka_unit_test(test_sentences_from_state),
        cmocka_unit_test(test_app_state_and_undo),
        cmocka_unit_test(test_app_state_refused),
        cmocka_unit_test(test_device_registry),
        cmocka_unit_test(test_context_growth_cso_vs_full),
        cmocka_unit_test(test_id_from_turn_2_used_on_turn_10),
        cmocka_unit_test(test_context_budget_trims_memory),
        cmocka_unit_test(test_context_full_step_gives_back_memory),
        cmocka_unit_test(test_jit_two_stages),
    };
    const struct CMUnitTest model[] = {
        cmocka_unit_test(test_real_model_prefix_cached),
        cmocka_unit_test(test_real_model_hermes),
        cmocka_unit_test(test_real_model_token_limit),
        cmocka_unit_test(test_real_model_cancel_mid_decode),
        cmocka_unit_test(test_real_model_state_tracker),
        cmocka_unit_test(test_real_model_state_tracker_long_session),
        cmocka_unit_test(test_real_model_flash_attn),
        cmocka_unit_test(test_real_model_foreign_pack),
        cmocka_unit_test(test_real_model_app_state),
    };
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        return cmocka_run_group_tests(model, NULL, NULL);
    }
    return cmocka_run_group_tests(unit, NULL, NULL);
}
