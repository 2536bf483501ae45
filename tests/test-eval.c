/*
 * test-eval.c - scenario sets, matching, scoring, reports, the oracle.
 *
 *   test-eval          unit: parsing (good files, bad files named by line and JSON path), the
 *                      matching rules, precision/recall/F1 edge cases, metrics from hand-made
 *                      records, an end-to-end run on the scripted fake backend with known
 *                      numbers, the JSON and SVG shapes, and the eval/ sets against the devices
 *   test-eval --model  a short run of real scenarios on the tiny random 32K model (1 thread)
 */
#include "agent.h"
#include "eval.h"
#include "fake_backend.h"
#include "testutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAMERA_SPEC PIPIT_SOURCE_DIR "/tools/camera.json"
#define PHONE_SPEC  PIPIT_SOURCE_DIR "/tools/phone.json"

static struct pipit_toolset *load_tools(const char *path) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

static struct pipit_scenarios *load(const char *text) {
    struct pipit_scenarios *set = NULL;
    struct pipit_error err;
    if (pipit_scenarios_load_string(text, strlen(text), "t.jsonl", &set, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return set;
}

/* ============================================================================ parsing */

static void test_parse_good(void **state) {
    (void)state;
    const char *text =
        "# a comment\n"
        "\n"
        "{\"id\": \"a\", \"category\": \"single\", \"turns\": [{\"user\": \"zoom in\", "
        "\"expect\": [{\"tool\": \"adjust_zoom\", \"args\": {\"direction\": \"in\"}}], "
        "\"state\": {\"zoom\": 2}}]}\n"
        "  {\"id\": \"b\", \"category\": \"undo\", \"device\": \"phone\", \"init\": {\"wifi\": "
        "false}, \"turns\": [{\"user\": \"x\", \"expect\": []}, {\"user\": \"y\", \"expect\": "
        "[{\"tool\": \"set_wifi\", \"tol\": 0.5}], \"reply_contains\": [\"wifi\"]}], "
        "\"inject\": [{\"turn\": 1, \"tool\": \"set_wifi\", \"error\": \"busy\"}], \"notes\": "
        "\"n\"}";
    struct pipit_scenarios *set = load(text);
    assert_int_equal(pipit_scenarios_count(set), 2);
    assert_string_equal(pipit_scenarios_id(set, 0), "a");
    assert_string_equal(pipit_scenarios_device(set, 0), "camera");
    assert_string_equal(pipit_scenarios_category(set, 1), "undo");
    assert_string_equal(pipit_scenarios_device(set, 1), "phone");
    assert_int_equal(pipit_scenarios_n_turns(set, 1), 2);
    assert_null(pipit_scenarios_id(set, 2));
    assert_int_equal(set->items[1].line, 4);
    pipit_scenarios_free(set);
    pipit_scenarios_free(NULL);
}

static void test_parse_errors(void **state) {
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *want;
    } cases[] = {
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": []}]}\n"
         "{\"id\": \"b\",",
         2, "t.jsonl:2:"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\"}]}", 1,
         "t.jsonl:1: $.turns[0].expect: missing"},
        {"\n{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": []}, "
         "{\"user\": \"v\", \"expect\": [{\"tool\": \"t\", \"args\": [1]}]}]}",
         2, "t.jsonl:2: $.turns[1].expect[0].args: expected an object, got an array"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expcet\": []}]}", 1,
         "$.turns[0]: unknown key \"expcet\""},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": []}], "
         "\"inject\": [{\"turn\": 3, \"tool\": \"t\", \"error\": \"e\"}]}",
         1, "$.inject[0].turn: turn 3 is out of range"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": []}]}\n"
         "{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": []}]}",
         2, "$.id: duplicate id \"a\" (first on line 1)"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": []}", 1, "$.turns: expected an array"},
        {"{\"id\": 7, \"category\": \"c\", \"turns\": []}", 1, "$.id: expected a string"},
        {"[1, 2]", 1, "$: expected a scenario object, got an array"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": "
         "[{\"tool\": \"t\", \"tol\": -1}]}]}",
         1, "$.turns[0].expect[0].tol: expected a number >= 0"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": [], "
         "\"reply_contains\": [\"\"]}]}",
         1, "$.turns[0].reply_contains[0]: expected a non-empty string"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": "
         "[{\"tool\": \"t\", \"contains\": {\"q\": \"peru\"}}]}]}",
         1, "$.turns[0].expect[0].contains.q: expected a non-empty array of strings, got a string"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": "
         "[{\"tool\": \"t\", \"contains\": {\"q\": [\"a\", 3]}}]}]}",
         1, "$.turns[0].expect[0].contains.q[1]: expected a non-empty string"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"expect\": "
         "[{\"tool\": \"t\", \"contains\": {}}]}]}",
         1, "$.turns[0].expect[0].contains: expected an object"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"undo\": true, "
         "\"expect\": [{\"tool\": \"t\"}]}]}",
         1, "$.turns[0].expect: an undo turn makes no call"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"undo\": 0, "
         "\"expect\": []}]}",
         1, "$.turns[0].undo: a count of actions to undo is 1..8, got 0"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"undo\": [1], "
         "\"expect\": []}]}",
         1,
         "$.turns[0].undo: expected true, false, a count of actions or a tool's name, got an "
         "array"},
        {"{\"id\": \"a\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", \"undo\": 2, "
         "\"expect\": [{\"tool\": \"t\"}]}]}",
         1, "$.turns[0].expect: an undo turn makes no call"},
        {"# only a comment\n\n", 0, "t.jsonl: no scenarios"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct pipit_scenarios *set = NULL;
        struct pipit_error err;
        enum pipit_status st = pipit_scenarios_load_string(cases[i].text, strlen(cases[i].text),
                                                           "t.jsonl", &set, &err);
        assert_int_equal(st, PIPIT_ERR_JSON);
        assert_null(set);
        if (strstr(err.text, cases[i].want) == NULL) {
            fail_msg("case %zu: '%s' does not contain '%s'", i, err.text, cases[i].want);
        }
        assert_int_equal(err.line, cases[i].line);
    }
    struct pipit_scenarios *set = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_scenarios_load_file("/nonexistent/x.jsonl", &set, &err), PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, "/nonexistent/x.jsonl"));
}

/* ============================================================================ matching */

static json_t *J(const char *text) {
    json_error_t e;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
    if (j == NULL) {
        fail_msg("bad test JSON %s: %s", text, e.text);
    }
    return j;
}

static bool matches(const char *exp, const char *tool, const char *args) {
    json_t *e = J(exp);
    bool ok = eval_call_matches(e, tool, args);
    json_decref(e);
    return ok;
}

static void test_call_matching(void **state) {
    (void)state;
    const char *zoom2 = "{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}";
    assert_true(matches(zoom2, "set_zoom", "{\"level\":2}"));
    assert_true(matches(zoom2, "set_zoom", "{\"level\":2.0000001}")); /* within 1e-6 */
    assert_false(matches(zoom2, "set_zoom", "{\"level\":2.01}"));
    assert_false(matches(zoom2, "adjust_zoom", "{\"level\":2}"));
    assert_false(matches(zoom2, "set_zoom", "{}"));
    assert_false(matches(zoom2, "set_zoom", ""));
    /* the call's own tolerance */
    assert_true(matches("{\"tool\": \"tap_to_focus\", \"args\": {\"x\": 0.1, \"y\": 0.1}, "
                        "\"tol\": 0.1}",
                        "tap_to_focus", "{\"x\":0.18,\"y\":0.02}"));
    assert_false(matches("{\"tool\": \"tap_to_focus\", \"args\": {\"x\": 0.1}, \"tol\": 0.1}",
                         "tap_to_focus", "{\"x\":0.25,\"y\":0.02}"));
    /* unlisted keys are free; no args matches anything */
    assert_true(matches("{\"tool\": \"send_message\", \"args\": {\"recipient\": \"Mom\"}}",
                        "send_message", "{\"recipient\":\"mom\",\"body\":\"hi\"}"));
    assert_true(matches("{\"tool\": \"take_photo\"}", "take_photo", "{}"));
    assert_true(matches("{\"tool\": \"process_with_cloud_llm\"}", "process_with_cloud_llm",
                        "{\"user_query_context\":\"x\"}"));
    /* contains: every word in the string argument, ASCII case ignored */
    const char *peru = "{\"tool\": \"process_with_cloud_llm\", \"contains\": "
                       "{\"user_query_context\": [\"peru\", \"WHAT to shoot\"]}}";
    assert_true(matches(peru, "process_with_cloud_llm",
                        "{\"user_query_context\":\"What to shoot in Peru?\"}"));
    assert_false(matches(peru, "process_with_cloud_llm",
                         "{\"user_query_context\":\"What to shoot in Chile?\"}"));
    assert_false(matches(peru, "process_with_cloud_llm", "{\"reason_for_escalation\":\"peru\"}"));
    assert_false(matches(peru, "process_with_cloud_llm", "{\"user_query_context\":7}"));
    assert_false(matches(peru, "process_with_cloud_llm", ""));
    /* together with args both must hold */
    assert_false(matches("{\"tool\": \"send_message\", \"args\": {\"recipient\": \"Mom\"}, "
                         "\"contains\": {\"body\": [\"late\"]}}",
                         "send_message", "{\"recipient\":\"Dad\",\"body\":\"running late\"}"));
    assert_true(matches("{\"tool\": \"send_message\", \"args\": {\"recipient\": \"Mom\"}, "
                        "\"contains\": {\"body\": [\"late\"]}}",
                        "send_message", "{\"recipient\":\"mom\",\"body\":\"running LATE\"}"));
    /* types must agree except integer vs real */
    assert_false(matches("{\"tool\": \"set_grid\", \"args\": {\"enabled\": true}}", "set_grid",
                         "{\"enabled\":\"true\"}"));
    assert_true(matches("{\"tool\": \"set_timer\", \"args\": {\"seconds\": 3}}", "set_timer",
                        "{\"seconds\":3.0}"));
}

static struct pipit_call_record rec(const char *tool, const char *args, enum pipit_status st) {
    struct pipit_call_record r;
    memset(&r, 0, sizeof(r));
    snprintf(r.tool, sizeof(r.tool), "%s", tool);
    r.args_json = (char *)args;
    r.status = st;
    return r;
}

static void test_multiset_matching(void **state) {
    (void)state;
    struct pipit_call_record calls[3] = {rec("take_photo", "{}", PIPIT_OK),
                                         rec("take_photo", "{}", PIPIT_OK),
                                         rec("take_photo", "{}", PIPIT_OK)};
    json_t *two = J("[{\"tool\": \"take_photo\"}, {\"tool\": \"take_photo\"}]");
    bool used[3];
    assert_int_equal(eval_match_calls(two, calls, 3, used), 2);
    assert_int_equal(used[0] + used[1] + used[2], 2);
    assert_int_equal(eval_match_calls(two, calls, 1, NULL), 1);
    json_decref(two);

    /* an args-less expectation must not steal the call a specific one needs */
    json_t *e = J("[{\"tool\": \"set_zoom\"}, {\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]");
    struct pipit_call_record z[2] = {rec("set_zoom", "{\"level\":2}", PIPIT_OK),
                                     rec("set_zoom", "{\"level\":3}", PIPIT_OK)};
    assert_int_equal(eval_match_calls(e, z, 2, NULL), 2);
    /* a call counts whatever its outcome: refused by validation, failed on the device ... */
    z[0].status = PIPIT_ERR_INVALID_ARGS;
    assert_int_equal(eval_match_calls(e, z, 2, NULL), 2);
    z[0].status = PIPIT_OK;
    z[0].executed = true;
    z[0].ok = false;
    assert_int_equal(eval_match_calls(e, z, 2, NULL), 2);
    /* ... only one that did not parse is never correct, even for an args-less expectation */
    z[0].status = PIPIT_ERR_PARSE;
    z[1].status = PIPIT_ERR_PARSE;
    assert_int_equal(eval_match_calls(e, z, 2, NULL), 0);
    json_decref(e);

    json_t *none = J("[]");
    assert_int_equal(eval_match_calls(none, calls, 3, used), 0);
    assert_false(used[0]);
    assert_int_equal(eval_match_calls(none, NULL, 0, NULL), 0);
    json_decref(none);
}

static void test_state_and_reply(void **state) {
    (void)state;
    json_t *want = J("{\"zoom\": 2, \"flash\": \"on\"}");
    json_t *got = J("{\"zoom\": 2.0, \"flash\": \"on\", \"grid\": false}");
    char diff[128];
    assert_true(eval_state_matches(want, got, diff, sizeof(diff)));
    json_object_set_new(got, "flash", json_string("ON"));
    assert_false(eval_state_matches(want, got, diff, sizeof(diff)));
    assert_string_equal(diff, "flash: want \"on\", got \"ON\"");
    json_t *missing = J("{\"zoom\": 2}");
    json_t *w2 = J("{\"timer_s\": 0}");
    assert_false(eval_state_matches(w2, missing, diff, sizeof(diff)));
    assert_string_equal(diff, "timer_s: want 0, got (missing)");
    json_decref(want);
    json_decref(got);
    json_decref(missing);
    json_decref(w2);

    json_t *needles = J("[\"zoom\", \"BACK TO 1\"]");
    assert_true(eval_reply_matches(needles, "Undone: zoom is back to 1."));
    assert_false(eval_reply_matches(needles, "Undone: flash is back to off."));
    assert_false(eval_reply_matches(needles, NULL));
    json_decref(needles);
}

/* ============================================================================ scoring */

static void test_prf(void **state) {
    (void)state;
    double p, r, f;
    eval_prf(0, 0, 0, &p, &r, &f); /* nothing expected, nothing made: perfect */
    assert_true(p == 1.0 && r == 1.0 && f == 1.0);
    eval_prf(0, 0, 2, &p, &r, &f); /* no calls made */
    assert_true(p == 1.0 && r == 0.0 && f == 0.0);
    eval_prf(0, 2, 0, &p, &r, &f); /* none expected, two made */
    assert_true(p == 0.0 && r == 1.0 && f == 0.0);
    eval_prf(0, 3, 3, &p, &r, &f); /* all wrong */
    assert_true(p == 0.0 && r == 0.0 && f == 0.0);
    eval_prf(2, 3, 4, &p, &r, &f);
    assert_true(fabs(p - 2.0 / 3.0) < 1e-12 && fabs(r - 0.5) < 1e-12);
    assert_true(fabs(f - 4.0 / 7.0) < 1e-12);
}

static void test_report_metrics(void **state) {
    (void)state;
    struct pipit_eval_config cfg[2];
    assert_int_equal(pipit_eval_config_find("cso", &cfg[0]), PIPIT_OK);
    assert_int_equal(pipit_eval_config_find("baseline", &cfg[1]), PIPIT_OK);
    struct pipit_eval_report *r = eval_report_new(cfg, 2);
    assert_non_null(r);
    int32_t single = eval_report_category(r, "single");
    int32_t undo = eval_report_category(r, "undo");
    assert_int_equal(eval_report_category(r, "single"), single);
    /* scenario 1 (single): one turn; scenario 2 (undo): two turns */
    struct eval_turn_record t[3] = {
        {.category = single,
         .turn_index = 0,
         .n_expected = 2,
         .n_made = 3,
         .n_correct = 2,
         .n_valid = 2,
         .state_checked = true,
         .state_ok = true,
         .model_calls = 2,
         .prefill_tokens = 100,
         .context_tokens = 300,
         .latency_ms = 10,
         .ttft_ms = 4},
        {.category = undo,
         .turn_index = 0,
         .n_expected = 1,
         .n_made = 1,
         .n_correct = 0,
         .n_valid = 1,
         .state_checked = true,
         .state_ok = false,
         .model_calls = 1,
         .prefill_tokens = 50,
         .context_tokens = 200,
         .latency_ms = 30,
         .ttft_ms = 8},
        {.category = undo,
         .turn_index = 1,
         .n_expected = 0,
         .n_made = 0,
         .n_correct = 0,
         .reply_checked = true,
         .reply_ok = true,
         .model_calls = 0,
         .prefill_tokens = 0,
         .context_tokens = 250,
         .latency_ms = 20,
         .ttft_ms = -1},
    };
    for (int i = 0; i < 3; i++) {
        assert_true(eval_report_add(r, 0, &t[i]));
    }
    struct pipit_eval_metrics m;
    assert_int_equal(pipit_eval_report_metrics(r, 0, NULL, &m), PIPIT_OK);
    assert_int_equal(m.n_scenarios, 2);
    assert_int_equal(m.n_turns, 3);
    assert_int_equal(m.calls_expected, 3);
    assert_int_equal(m.calls_made, 4);
    assert_int_equal(m.calls_correct, 2);
    assert_true(fabs(m.precision - 0.5) < 1e-12);
    assert_true(fabs(m.recall - 2.0 / 3.0) < 1e-12);
    assert_true(fabs(m.state_accuracy - 0.5) < 1e-12);
    assert_true(fabs(m.reply_accuracy - 1.0) < 1e-12);
    assert_true(fabs(m.valid_call_rate - 0.75) < 1e-12);
    assert_true(m.no_call_accuracy == 1.0); /* the one turn that expects none made none */
    assert_true(fabs(m.model_calls_per_utterance - 1.0) < 1e-12);
    assert_true(fabs(m.prefill_tokens_per_turn - 50.0) < 1e-12);
    assert_true(fabs(m.context_tokens_per_turn - 250.0) < 1e-12);
    assert_true(m.latency_ms_p50 == 20 && m.latency_ms_p95 == 30);
    assert_true(m.ttft_ms_p50 == 4 && m.ttft_ms_p95 == 8);

    assert_int_equal(pipit_eval_report_metrics(r, 0, "undo", &m), PIPIT_OK);
    assert_int_equal(m.n_scenarios, 1);
    assert_true(m.precision == 0.0 && m.recall == 0.0 && m.f1 == 0.0);
    assert_true(m.valid_call_rate == 1.0);
    assert_int_equal(pipit_eval_report_metrics(r, 0, "nope", &m), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_eval_report_metrics(r, 2, NULL, &m), PIPIT_ERR_INVALID_ARG);

    /* an empty configuration: ratios without cases are -1, P/R/F1 are 1 */
    assert_int_equal(pipit_eval_report_metrics(r, 1, NULL, &m), PIPIT_OK);
    assert_int_equal(m.n_turns, 0);
    assert_true(m.state_accuracy == -1 && m.valid_call_rate == -1 && m.latency_ms_p50 == -1);
    assert_true(m.no_call_accuracy == -1);
    assert_true(m.f1 == 1.0);

    double ctx[4];
    assert_int_equal(pipit_eval_report_context_tokens(r, 0, NULL, ctx, 4), 2);
    assert_true(ctx[0] == 250.0 && ctx[1] == 250.0);
    assert_int_equal(pipit_eval_report_context_tokens(r, 0, "single", ctx, 4), 1);
    assert_true(ctx[0] == 300.0);
    assert_int_equal(pipit_eval_report_context_tokens(r, 1, NULL, ctx, 4), 0);
    pipit_eval_report_free(r);
}

/* Router and refusal fields from a hand-made turn: a false undo route, the model's built-in
 * undo (not the router's, no new action), a parse failure never counts as an attempt. */
static void test_score_router_fields(void **state) {
    (void)state;
    json_t *turn =
        J("{\"user\": \"u\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": "
          "50}}, {\"tool\": \"take_photo\"}]}");
    struct pipit_call_record calls[3] = {rec("set_zoom", "", PIPIT_ERR_PARSE),
                                         rec("set_zoom", "{\"level\":50}", PIPIT_ERR_INVALID_ARGS),
                                         rec("take_photo", "{}", PIPIT_OK)};
    calls[2].executed = true;
    calls[2].ok = true;
    struct pipit_turn t;
    memset(&t, 0, sizeof(t));
    t.calls = calls;
    t.n_calls = 3;
    t.flags = PIPIT_TURN_UNDO | PIPIT_TURN_COMPOUND;
    t.n_steps = 2;
    struct eval_turn_record r;
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(turn, 0x1, &t, &r); /* expectation 0 is out of range */
    assert_false(r.undo_marked);
    assert_true(r.routed_undo); /* a false route when it is not marked */
    assert_int_equal(r.n_steps, 2);
    assert_true(r.new_action);
    assert_int_equal(r.oor_expected, 1);
    assert_int_equal(r.oor_refused, 1);
    assert_int_equal(r.oor_substituted, 0);
    /* valid: the asked zoom 50x refused by validation and the photo; not the unparsed call */
    assert_int_equal(r.n_made, 3);
    assert_int_equal(r.n_valid, 2);
    /* a value out of range that nobody asked for is no valid call */
    calls[1] = rec("set_zoom", "{\"level\":60}", PIPIT_ERR_INVALID_ARGS);
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(turn, 0x1, &t, &r);
    assert_int_equal(r.n_valid, 1);
    assert_int_equal(r.oor_refused, 0);
    calls[1] = rec("set_zoom", "{\"level\":50}", PIPIT_ERR_INVALID_ARGS);
    /* only the unparsed attempt: not refused, not substituted */
    t.n_calls = 1;
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(turn, 0x1, &t, &r);
    assert_int_equal(r.oor_refused, 0);
    assert_int_equal(r.oor_substituted, 0);
    assert_false(r.new_action);
    json_decref(turn);

    /* the model's built-in undo: marked, not routed, no new action */
    json_t *undo = J("{\"user\": \"scrap that\", \"undo\": true, \"expect\": []}");
    struct pipit_call_record u = rec("undo", "{}", PIPIT_OK);
    u.executed = true;
    u.ok = true;
    t.calls = &u;
    t.n_calls = 1;
    t.flags = PIPIT_TURN_UNDO;
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(undo, 0, &t, &r);
    assert_true(r.undo_marked);
    assert_false(r.routed_undo);
    assert_false(r.new_action);
    assert_int_equal(r.n_made, 0); /* the outcome asked for, not a call made */
    json_decref(undo);
    /* the same undo() on a turn that is not an undo: a call made (and a wrong one) */
    json_t *not_undo = J("{\"user\": \"thanks\", \"expect\": []}");
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(not_undo, 0, &t, &r);
    assert_int_equal(r.n_made, 1);
    assert_int_equal(r.n_valid, 1);
    assert_false(r.question); /* no reply_contains: not a state question */
    json_decref(not_undo);
    /* a state question (no call expected, the value in reply_contains): from the state only
     * when the harness answered it from the device */
    json_t *q = J("{\"user\": \"is the flash on?\", \"expect\": [], \"reply_contains\": "
                  "[\"flash is off\"]}");
    t.n_calls = 0;
    t.flags = PIPIT_TURN_STATE_ANSWER;
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(q, 0, &t, &r);
    assert_true(r.question && r.from_state);
    t.flags = PIPIT_TURN_PLAIN_TEXT; /* the model's words */
    memset(&r, 0, sizeof(r));
    eval_score_router_and_refusals(q, 0, &t, &r);
    assert_true(r.question && !r.from_state);
    json_decref(q);

    /* a false route counts in the metrics */
    struct pipit_eval_config cfg;
    assert_int_equal(pipit_eval_config_find("cso", &cfg), PIPIT_OK);
    struct pipit_eval_report *rep = eval_report_new(&cfg, 1);
    int32_t cat = eval_report_category(rep, "single");
    struct eval_turn_record recs[2] = {
        {.category = cat, .turn_index = 0, .routed_undo = true, .ttft_ms = -1},
        {.category = cat, .turn_index = 1, .undo_marked = true, .ttft_ms = -1},
    };
    assert_true(eval_report_add(rep, 0, &recs[0]));
    assert_true(eval_report_add(rep, 0, &recs[1]));
    struct pipit_eval_metrics m;
    assert_int_equal(pipit_eval_report_metrics(rep, 0, NULL, &m), PIPIT_OK);
    assert_int_equal(m.undo_false_routes, 1);
    assert_int_equal(m.undo_marked, 1);
    assert_int_equal(m.undo_routed, 0);
    assert_true(m.undo_detection == 0.0);
    assert_true(m.split_accuracy == -1 && m.undo_revert_rate == -1);
    pipit_eval_report_free(rep);
}

static void test_configs(void **state) {
    (void)state;
    assert_int_equal(pipit_eval_config_count(), 10);
    struct pipit_eval_config c;
    assert_int_equal(pipit_eval_config_find("baseline", &c), PIPIT_OK);
    assert_int_equal(c.tools_format, PIPIT_TOOLSPEC_OPENAPI);
    assert_int_equal(c.memory, PIPIT_MEMORY_FULL);
    assert_false(c.grammar);
    assert_int_equal(pipit_eval_config_find("combined", &c), PIPIT_OK);
    assert_int_equal(c.tools_format, PIPIT_TOOLSPEC_JIT);
    assert_int_equal(c.memory, PIPIT_MEMORY_CSO);
    assert_true(c.grammar);
    assert_int_equal(pipit_eval_config_find("cso-nogrammar", &c), PIPIT_OK);
    assert_int_equal(c.tools_format, PIPIT_TOOLSPEC_COMPACT);
    assert_false(c.grammar);
    assert_int_equal(pipit_eval_config_find("bogus", &c), PIPIT_ERR_INVALID_ARG);
    assert_false(pipit_eval_config_get(10, &c));
    for (size_t i = 0; pipit_eval_config_get(i, &c); i++) {
        struct pipit_eval_config d;
        assert_int_equal(pipit_eval_config_find(c.name, &d), PIPIT_OK);
    }
}

/* ============================================================================ end to end (fake) */

#define E2E_MAX 16

struct fake_factory {
    struct fake_backend fakes[E2E_MAX];
    const char *const *scripts[E2E_MAX]; /* per scenario, NULL-terminated */
    int n_scenarios;
    int next;
    struct pipit_agent_params seen[E2E_MAX];
};

static enum pipit_status fake_factory(void *user_data,
                                      const struct pipit_toolset *tools,
                                      const struct pipit_agent_params *params,
                                      struct pipit_agent **out,
                                      struct pipit_error *err) {
    struct fake_factory *ff = user_data;
    int k = ff->next++;
    assert_true(k < E2E_MAX);
    struct fake_backend *f = &ff->fakes[k];
    memset(f, 0, sizeof(*f));
    const char *const *s = ff->scripts[k % ff->n_scenarios];
    for (int i = 0; s != NULL && s[i] != NULL && i < FAKE_MAX_STEPS; i++) {
        f->script[f->n_script++] = s[i];
    }
    ff->seen[k] = *params;
    return agent_new_with_backend(NULL, tools, params, fake_backend_wrap(f), out, err);
}

static const char *E2E_SET =
    "{\"id\": \"s1\", \"category\": \"single\", \"turns\": ["
    "{\"user\": \"zoom in to 2x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": "
    "2}}],"
    " \"state\": {\"zoom\": 2}},"
    "{\"user\": \"never mind\", \"undo\": true, \"expect\": [], \"state\": {\"zoom\": 1}, "
    "\"reply_contains\": [\"zoom\"]}]}\n"
    "{\"id\": \"s2\", \"category\": \"error-recovery\", \"turns\": ["
    "{\"user\": \"take a photo\", \"expect\": [{\"tool\": \"take_photo\"}], \"state\": "
    "{\"photos_taken\": 0}},"
    "{\"user\": \"again with the flash on\", \"expect\": [{\"tool\": \"take_photo\"}], "
    "\"state\": "
    "{\"photos_taken\": 1}}],"
    " \"inject\": [{\"turn\": 0, \"tool\": \"take_photo\", \"error\": \"camera_busy\"}]}\n"
    "{\"id\": \"s3\", \"category\": \"error-recovery\", \"init\": {\"zoom\": 3.0}, \"turns\": ["
    "{\"user\": \"flash on\", \"expect\": [{\"tool\": \"set_flash\", \"args\": {\"mode\": "
    "\"on\"}}], \"state\": {\"flash\": \"off\", \"zoom\": 3}},"
    "{\"user\": \"flash on again\", \"expect\": [{\"tool\": \"set_flash\", \"args\": {\"mode\": "
    "\"on\"}}], \"state\": {\"flash\": \"on\"}}],"
    " \"inject\": [{\"turn\": 0, \"tool\": \"set_flash\", \"error\": \"hardware_error\"}]}\n";

static const char *const SCRIPT_S1[] = {"<call>set_zoom(level=2)", NULL};
static const char *const SCRIPT_S2[] = {"<call>take_photo()", "<call>set_flash(mode=\"on\")", NULL};
static const char *const SCRIPT_S3[] = {"<call>set_flash(mode=\"on\")",
                                        "<call>set_flash(mode=\"on\")", NULL};

static struct pipit_eval_report *run_fake(struct fake_factory *ff,
                                          const struct pipit_toolset *cam,
                                          const char *const *config_names,
                                          size_t n_configs) {
    struct pipit_scenarios *set = load(E2E_SET);
    memset(ff, 0, sizeof(*ff));
    ff->scripts[0] = SCRIPT_S1;
    ff->scripts[1] = SCRIPT_S2;
    ff->scripts[2] = SCRIPT_S3;
    ff->n_scenarios = 3;
    struct pipit_eval_device dev = {"camera", cam};
    struct pipit_error err;
    assert_int_equal(pipit_scenarios_check(set, &dev, 1, NULL, NULL, &err), PIPIT_OK);
    struct pipit_eval_config cfg[4];
    for (size_t i = 0; i < n_configs; i++) {
        assert_int_equal(pipit_eval_config_find(config_names[i], &cfg[i]), PIPIT_OK);
    }
    struct pipit_eval_params ep = pipit_eval_default_params();
    ep.agent.n_threads = 1;
    ep.devices = &dev;
    ep.n_devices = 1;
    struct pipit_eval_report *rep = NULL;
    if (eval_run_with(fake_factory, ff, set, cfg, n_configs, &ep, &rep, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    pipit_scenarios_free(set);
    return rep;
}

static void test_end_to_end_fake(void **state) {
    (void)state;
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct fake_factory ff;
    const char *names[] = {"cso"};
    struct pipit_eval_report *rep = run_fake(&ff, cam, names, 1);
    /* the configuration reached the agent */
    assert_int_equal(ff.next, 3);
    assert_int_equal(ff.seen[0].tools_format, PIPIT_TOOLSPEC_COMPACT);
    assert_int_equal(ff.seen[0].memory, PIPIT_MEMORY_CSO);
    assert_true(ff.seen[0].grammar);
    assert_int_equal(ff.seen[0].n_threads, 1);

    struct pipit_eval_metrics m;
    assert_int_equal(pipit_eval_report_metrics(rep, 0, NULL, &m), PIPIT_OK);
    if (getenv("EVAL_DEBUG") != NULL) {
        char *dbg = pipit_eval_report_misses(rep, 0, 10);
        fprintf(stderr, "%s", dbg);
        pipit_free(dbg);
    }
    assert_int_equal(m.n_scenarios, 3);
    assert_int_equal(m.n_turns, 6);
    assert_int_equal(m.n_errors, 0);
    assert_int_equal(m.calls_expected, 5);
    assert_int_equal(m.calls_made, 5);
    assert_int_equal(m.calls_correct,
                     4); /* s2's retry called set_flash (it names the flash: the model's) */
    assert_true(fabs(m.precision - 0.8) < 1e-12 && fabs(m.recall - 0.8) < 1e-12);
    assert_true(fabs(m.f1 - 0.8) < 1e-12);
    /* injected failures left the state alone and were removed after their turn */
    assert_true(fabs(m.state_accuracy - 5.0 / 6.0) < 1e-12);
    assert_true(m.reply_accuracy == 1.0);
    assert_true(m.valid_call_rate == 1.0);
    assert_true(fabs(m.model_calls_per_utterance - 5.0 / 6.0) < 1e-12); /* undo: no model */

    assert_int_equal(pipit_eval_report_metrics(rep, 0, "error-recovery", &m), PIPIT_OK);
    assert_int_equal(m.n_scenarios, 2);
    assert_int_equal(m.calls_correct, 3);

    char *misses = pipit_eval_report_misses(rep, 0, 10);
    assert_non_null(misses);
    assert_non_null(strstr(misses, "s2 turn 1 \"again with the flash on\""));
    assert_non_null(strstr(misses, "photos_taken: want 1, got 0"));
    assert_null(strstr(misses, "s1 turn"));
    pipit_free(misses);

    /* the JSON report's shape */
    char *js = pipit_eval_report_json(rep);
    assert_non_null(js);
    json_t *root = J(js);
    json_t *c = json_object_get(json_object_get(root, "configs"), "cso");
    assert_non_null(c);
    json_t *overall = json_object_get(c, "overall");
    static const char *const keys[] = {"precision",
                                       "recall",
                                       "f1",
                                       "state_accuracy",
                                       "valid_call_rate",
                                       "no_call_accuracy",
                                       "model_calls_per_utterance",
                                       "prefill_tokens_per_turn",
                                       "context_tokens",
                                       "latency_ms_p50",
                                       "latency_ms_p95"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (json_object_get(overall, keys[i]) == NULL) {
            fail_msg("overall lacks %s", keys[i]);
        }
    }
    assert_true(fabs(json_real_value(json_object_get(overall, "f1")) - 0.8) < 1e-9);
    assert_int_equal(json_array_size(json_object_get(overall, "context_tokens")), 2);
    json_t *bc = json_object_get(c, "by_category");
    assert_int_equal(json_object_size(bc), 2);
    assert_non_null(json_object_get(json_object_get(bc, "single"), "f1"));
    assert_non_null(json_object_get(json_object_get(bc, "error-recovery"), "recall"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(c, "params"), "memory")),
                        "cso");
    json_decref(root);
    pipit_free(js);

    char *md = pipit_eval_report_markdown(rep);
    assert_non_null(strstr(md, "| cso | compact | cso | yes | 0.800 | 0.800 | 0.800 |"));
    pipit_free(md);
    pipit_eval_report_free(rep);
    pipit_toolset_free(cam);
}

/* The router is measured, never a filter: a compound it cannot split and an undo paraphrase it
 * does not know run and score as misses; out-of-range requests are tried and refused (or
 * silently substituted); cloud queries are checked with "contains"; an oracle finding skips a
 * state check; F1, state and reply accuracy per turn bucket. */
static const char *MEASURED_SET =
    /* s1: the router cannot split a compound without a conjunction (an assumption of this
     * test: if it learns to, the fake's second step answers "" and split_correct becomes 1) */
    "{\"id\": \"s1\", \"category\": \"compound\", \"turns\": [{\"user\": \"zoom to 2x snap a "
    "picture\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}, {\"tool\": "
    "\"take_photo\"}], \"state\": {\"zoom\": 2, \"photos_taken\": 1}}]}\n"
    /* s2: a routed undo, and a paraphrase the router does not know (the model acts instead) */
    "{\"id\": \"s2\", \"category\": \"undo\", \"turns\": ["
    "{\"user\": \"zoom to 3x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 3}}]},"
    "{\"user\": \"undo\", \"undo\": true, \"expect\": [], \"state\": {\"zoom\": 1}},"
    "{\"user\": \"flash on\", \"expect\": [{\"tool\": \"set_flash\", \"args\": {\"mode\": "
    "\"on\"}}]},"
    "{\"user\": \"I liked it more a minute back\", \"undo\": true, \"expect\": [], "
    "\"state\": "
    "{\"flash\": \"off\"}}]}\n"
    /* s3: out of range: zoom 50x tried and refused; a focus point off the frame (two numbers:
     * which is which is the model's, so no guard puts the person's back) bent into the frame */
    "{\"id\": \"s3\", \"category\": \"single\", \"turns\": ["
    "{\"user\": \"zoom 50x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 50}}], "
    "\"state\": {\"zoom\": 1}},"
    "{\"user\": \"focus at 1.5 0.5\", \"expect\": [{\"tool\": \"tap_to_focus\", "
    "\"args\": {\"x\": 1.5, \"y\": 0.5}}], \"state\": {\"focus_x\": 0.5}}]}\n"
    /* s4: the cloud query holds the person's words */
    "{\"id\": \"s4\", \"category\": \"cloud\", \"turns\": [{\"user\": \"what should I shoot in "
    "Peru\", \"expect\": [{\"tool\": \"process_with_cloud_llm\", \"contains\": "
    "{\"user_query_context\": [\"peru\"]}}]}, {\"user\": \"and what lens for birds\", \"expect\": "
    "[{\"tool\": \"process_with_cloud_llm\", \"contains\": {\"user_query_context\": "
    "[\"telephoto\"]}}]}]}\n"
    /* s5: a 22-turn session, wrong in turns 6-10 and 22 */
    "{\"id\": \"s5\", \"category\": \"session\", \"turns\": ["
    "{\"user\": \"take a photo\", \"expect\": [{\"tool\": \"take_photo\"}], \"state\": "
    "{\"photos_taken\": 1}}, "
    "{\"user\": \"p2\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p3\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p4\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p5\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p6\", \"expect\": [{\"tool\": \"take_photo\"}], \"state\": {\"photos_taken\": "
    "6}}, "
    "{\"user\": \"p7\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p8\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p9\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p10\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p11\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p12\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p13\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p14\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p15\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p16\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p17\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p18\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p19\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p20\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p21\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
    "{\"user\": \"p22\", \"expect\": [{\"tool\": \"take_photo\"}]}]}\n"
    /* s6: an unmarked undo: the oracle's finding skips that state check */
    "{\"id\": \"s6\", \"category\": \"single\", \"turns\": ["
    "{\"user\": \"zoom 2x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]},"
    "{\"user\": \"I prefer the old zoom\", \"expect\": [], \"state\": {\"zoom\": 1}}]}\n";

static const char *const M_S1[] = {"<call>set_zoom(level=2)", NULL};
static const char *const M_S2[] = {"<call>set_zoom(level=3)", "<call>set_flash(mode=\"on\")",
                                   "<call>take_photo()", NULL};
static const char *const M_S3[] = {"<call>set_zoom(level=50)", "<call>tap_to_focus(x=1, y=0.5)",
                                   NULL};
static const char *const M_S4[] = {
    "<call>process_with_cloud_llm(user_query_context=\"x\", reason_for_escalation=\"travel\")",
    "<call>process_with_cloud_llm(user_query_context=\"x\", reason_for_escalation=\"advice\")",
    NULL};
#define PHOTO "<call>take_photo()"
#define GRID  "<call>set_grid(enabled=true)"
static const char *const M_S5[] = {PHOTO, PHOTO, PHOTO, PHOTO, PHOTO, GRID,  GRID,  GRID,
                                   GRID,  GRID,  PHOTO, PHOTO, PHOTO, PHOTO, PHOTO, PHOTO,
                                   PHOTO, PHOTO, PHOTO, PHOTO, PHOTO, GRID,  NULL};
static const char *const M_S6[] = {"<call>set_zoom(level=2)", "I like it like this.", NULL};

/* --fresh-every: a new agent every N turns on the same device; the undo log does not carry */
static void test_fresh_every(void **state) {
    (void)state;
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct pipit_eval_device dev = {"camera", cam};
    static const char *const set_text =
        "{\"id\": \"f1\", \"category\": \"session\", \"turns\": ["
        "{\"user\": \"zoom in to 2x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": "
        "{\"level\": 2}}], \"state\": {\"zoom\": 2}},"
        "{\"user\": \"never mind\", \"undo\": true, \"expect\": [], \"state\": {\"zoom\": "
        "1}}]}\n";
    struct pipit_eval_config cfg;
    assert_int_equal(pipit_eval_config_find("cso", &cfg), PIPIT_OK);
    for (int32_t every = 0; every <= 1; every++) {
        struct pipit_scenarios *set = load(set_text);
        struct fake_factory ff;
        memset(&ff, 0, sizeof(ff));
        ff.scripts[0] = SCRIPT_S1;
        ff.n_scenarios = 1;
        struct pipit_eval_params ep = pipit_eval_default_params();
        ep.agent.n_threads = 1;
        ep.devices = &dev;
        ep.n_devices = 1;
        ep.fresh_every = every;
        struct pipit_eval_report *rep = NULL;
        struct pipit_error err;
        if (eval_run_with(fake_factory, &ff, set, &cfg, 1, &ep, &rep, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        struct pipit_eval_metrics m;
        assert_int_equal(pipit_eval_report_metrics(rep, 0, NULL, &m), PIPIT_OK);
        assert_int_equal(m.n_turns, 2);
        assert_int_equal(m.n_errors, 0);
        /* one agent per scenario; or one per turn, the device's zoom carried to the second */
        assert_int_equal(ff.next, every == 0 ? 1 : 2);
        /* the fresh agent has nothing to undo: the zoom stays at 2 */
        assert_true(m.state_accuracy == (every == 0 ? 1.0 : 0.5));
        pipit_eval_report_free(rep);
        pipit_scenarios_free(set);
    }
    pipit_toolset_free(cam);
}

static void test_router_measured(void **state) {
    (void)state;
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct pipit_eval_device dev = {"camera", cam};
    struct pipit_scenarios *set = load(MEASURED_SET);
    struct pipit_error err;
    size_t n_findings = 0;
    struct pipit_scenarios_check_params cp = pipit_scenarios_check_default_params();
    /* not strict: one finding (s6), the set is accepted; strict refuses it */
    assert_int_equal(pipit_scenarios_check(set, &dev, 1, &cp, &n_findings, &err), PIPIT_OK);
    assert_int_equal(n_findings, 1);
    cp.strict = true;
    assert_int_equal(pipit_scenarios_check(set, &dev, 1, &cp, &n_findings, &err), PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "t.jsonl:6: $.turns[1].state: zoom: want 1, got 2"));

    struct fake_factory ff;
    memset(&ff, 0, sizeof(ff));
    const char *const *scripts[] = {M_S1, M_S2, M_S3, M_S4, M_S5, M_S6};
    for (int i = 0; i < 6; i++) {
        ff.scripts[i] = scripts[i];
    }
    ff.n_scenarios = 6;
    struct pipit_eval_config cfg;
    assert_int_equal(pipit_eval_config_find("cso", &cfg), PIPIT_OK);
    struct pipit_eval_params ep = pipit_eval_default_params();
    ep.agent.n_threads = 1;
    ep.devices = &dev;
    ep.n_devices = 1;
    struct pipit_eval_report *rep = NULL;
    if (eval_run_with(fake_factory, &ff, set, &cfg, 1, &ep, &rep, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    if (getenv("EVAL_DEBUG") != NULL) {
        char *dbg = pipit_eval_report_misses(rep, 0, 40);
        fprintf(stderr, "%s", dbg);
        pipit_free(dbg);
    }
    struct pipit_eval_metrics m;
    assert_int_equal(pipit_eval_report_metrics(rep, 0, NULL, &m), PIPIT_OK);
    assert_int_equal(m.n_turns, 1 + 4 + 2 + 2 + 22 + 2);
    assert_int_equal(m.n_errors, 0);
    /* the router: 1 of 2 undo turns routed, no false route, the compound not split */
    assert_int_equal(m.undo_marked, 2);
    assert_int_equal(m.undo_routed, 1);
    assert_true(m.undo_detection == 0.5);
    assert_int_equal(m.undo_false_routes, 0);
    assert_int_equal(m.split_turns, 1);
    assert_int_equal(m.split_correct, 0);
    assert_true(m.split_accuracy == 0.0);
    /* undo outcomes: the routed one reverted, the paraphrase took a photo */
    assert_int_equal(m.undo_checked, 2);
    assert_int_equal(m.undo_reverted, 1);
    assert_int_equal(m.undo_new_action, 1);
    assert_true(m.undo_revert_rate == 0.5);
    /* out of range: zoom 50x tried and refused (and correct), the focus point substituted */
    assert_int_equal(m.oor_expected, 2);
    assert_int_equal(m.oor_refused, 1);
    assert_int_equal(m.oor_substituted, 1);
    /* the oracle's finding: one state check skipped, not failed */
    assert_int_equal(m.n_state_skipped, 1);

    /* scored as misses, not refused: the compound's recall is 1/2 */
    assert_int_equal(pipit_eval_report_metrics(rep, 0, "compound", &m), PIPIT_OK);
    assert_int_equal(m.calls_expected, 2);
    assert_int_equal(m.calls_correct, 1);
    assert_true(m.state_accuracy == 0.0);
    /* the undo paraphrase's photo is a wrong call: 2 correct of 3 made */
    assert_int_equal(pipit_eval_report_metrics(rep, 0, "undo", &m), PIPIT_OK);
    assert_int_equal(m.calls_made, 3);
    assert_int_equal(m.calls_correct, 2);
    assert_true(m.no_call_accuracy == 0.5);
    /* the refused zoom 50x counts as correct, the bent timer does not */
    assert_int_equal(pipit_eval_report_metrics(rep, 0, "single", &m), PIPIT_OK);
    assert_int_equal(m.calls_made, 3);
    assert_int_equal(m.calls_correct, 2); /* zoom 50x, s6's zoom 2x */
    assert_int_equal(m.calls_valid, 3);   /* zoom 50x: refused as asked, a valid call */
    /* zoom still 1 after the refusal; timer 3 instead of 0; s6's unmarked undo not checked */
    assert_true(m.state_accuracy == 0.5);
    assert_int_equal(m.n_state_skipped, 1);
    /* contains: the person's words are the query; "telephoto" is not in them */
    assert_int_equal(pipit_eval_report_metrics(rep, 0, "cloud", &m), PIPIT_OK);
    assert_int_equal(m.calls_made, 2);
    assert_int_equal(m.calls_correct, 1);

    /* turn buckets of the session: wrong in 6-10 and in turn 22 */
    static const double f1[4] = {1.0, 0.0, 1.0, 0.5};
    static const double st[4] = {1.0, 0.0, -1, -1};
    static const int32_t nt[4] = {5, 5, 10, 2};
    for (size_t b = 0; b < PIPIT_EVAL_N_TURN_BUCKETS; b++) {
        assert_int_equal(pipit_eval_report_bucket_metrics(rep, 0, "session", b, &m), PIPIT_OK);
        assert_int_equal(m.n_turns, nt[b]);
        assert_true(fabs(m.f1 - f1[b]) < 1e-12);
        assert_true(m.state_accuracy == st[b]);
        assert_true(m.reply_accuracy == -1);
    }
    /* overall, bucket 1-5 holds every scenario's first turns */
    assert_int_equal(pipit_eval_report_bucket_metrics(rep, 0, NULL, 0, &m), PIPIT_OK);
    assert_int_equal(m.n_turns, 1 + 4 + 2 + 2 + 5 + 2);
    assert_int_equal(pipit_eval_report_bucket_metrics(rep, 0, NULL, 3, &m), PIPIT_OK);
    assert_int_equal(m.n_turns, 2);
    assert_int_equal(pipit_eval_report_bucket_metrics(rep, 0, NULL, 4, &m), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_eval_report_bucket_metrics(rep, 0, "nope", 0, &m),
                     PIPIT_ERR_INVALID_ARG);
    int32_t first = 0, last = 0;
    assert_string_equal(pipit_eval_turn_bucket(2, &first, &last), "11-20");
    assert_true(first == 11 && last == 20);
    assert_string_equal(pipit_eval_turn_bucket(3, &first, &last), "21+");
    assert_true(first == 21 && last == -1);
    assert_null(pipit_eval_turn_bucket(4, NULL, NULL));

    /* the markdown: the router's own line, the outcomes, the buckets */
    char *md = pipit_eval_report_markdown(rep);
    assert_non_null(md);
    if (getenv("EVAL_DEBUG") != NULL) {
        fprintf(stderr, "%s", md);
    }
    assert_non_null(strstr(md, "| config | undo detected | false undo | splits |"));
    assert_non_null(strstr(md, "| cso | 1/2 (0.500) | 0 | 0/1 (0.000) |"));
    assert_non_null(strstr(md, "| cso | 1/2 (0.500) | 1 | 1/2 | 1 |"));
    assert_non_null(strstr(md, "| cso | session | 1.000 / 1.000 / n/a (5) | 0.000 / 0.000 / n/a "
                               "(5) | 1.000 / n/a / n/a (10) | 0.500 / n/a / n/a (2) |"));
    pipit_free(md);

    /* the JSON */
    char *js = pipit_eval_report_json(rep);
    json_t *root = J(js);
    json_t *c = json_object_get(json_object_get(root, "configs"), "cso");
    json_t *overall = json_object_get(c, "overall");
    json_t *router = json_object_get(overall, "router");
    assert_int_equal(json_integer_value(json_object_get(router, "undo_marked")), 2);
    assert_int_equal(json_integer_value(json_object_get(router, "undo_routed")), 1);
    assert_int_equal(json_integer_value(json_object_get(router, "undo_false_routes")), 0);
    assert_int_equal(json_integer_value(json_object_get(router, "split_turns")), 1);
    assert_true(json_real_value(json_object_get(router, "split_accuracy")) == 0.0);
    json_t *undo = json_object_get(overall, "undo");
    assert_int_equal(json_integer_value(json_object_get(undo, "reverted")), 1);
    assert_int_equal(json_integer_value(json_object_get(undo, "new_action")), 1);
    json_t *oor = json_object_get(overall, "out_of_range");
    assert_int_equal(json_integer_value(json_object_get(oor, "expected")), 2);
    assert_int_equal(json_integer_value(json_object_get(oor, "refused")), 1);
    assert_int_equal(json_integer_value(json_object_get(oor, "substituted")), 1);
    assert_int_equal(json_integer_value(json_object_get(overall, "n_state_skipped")), 1);
    json_t *sb = json_object_get(
        json_object_get(json_object_get(json_object_get(c, "by_category"), "session"),
                        "by_turn_bucket"),
        "21+");
    assert_int_equal(json_integer_value(json_object_get(sb, "n_turns")), 2);
    assert_true(fabs(json_real_value(json_object_get(sb, "f1")) - 0.5) < 1e-9);
    assert_true(json_is_null(json_object_get(sb, "state_accuracy")));
    json_decref(root);
    pipit_free(js);

    pipit_eval_report_free(rep);
    pipit_scenarios_free(set);
    pipit_toolset_free(cam);
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

static void test_svg(void **state) {
    (void)state;
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct fake_factory ff;
    const char *names[] = {"baseline", "compact", "cso"};
    struct pipit_eval_report *rep = run_fake(&ff, cam, names, 3);
    char *svg = pipit_eval_report_svg(rep, NULL);
    assert_non_null(svg);
    assert_int_equal(strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39), 0);
    assert_non_null(strstr(svg, "</svg>\n"));
    assert_int_equal(count(svg, "<polyline"), 3);
    assert_int_equal(count(svg, "<polyline"), count(svg, "\"/>\n<line x1=\"585.0\"")); /* closed */
    assert_int_equal(count(svg, "<text"), count(svg, "</text>"));
    assert_non_null(strstr(svg, ">baseline</text>"));
    assert_non_null(strstr(svg, "assistant turn"));
    pipit_free(svg);
    char *one = pipit_eval_report_svg(rep, "single");
    assert_non_null(one);
    pipit_free(one);
    assert_null(pipit_eval_report_svg(rep, "no-such-category"));
    pipit_eval_report_free(rep);
    pipit_toolset_free(cam);
}

/* ============================================================================ oracle */

/* The oracle refuses `text` with a message containing `want`: an error when `finding` is false
 * (refused in both modes), a finding when true (refused only when strict). */
struct findings {
    int n;
    char last[800];
};

static void on_finding(const char *message, void *user_data) {
    struct findings *f = user_data;
    f->n++;
    snprintf(f->last, sizeof(f->last), "%s", message);
}

static void check_refuses(const char *text, const char *want, bool finding) {
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct pipit_eval_device dev = {"camera", cam};
    struct pipit_scenarios *set = load(text);
    struct pipit_error err;
    size_t n = 99;
    /* strict */
    assert_int_equal(pipit_scenarios_check(set, &dev, 1, NULL, &n, &err), PIPIT_ERR_JSON);
    if (strstr(err.text, want) == NULL) {
        fail_msg("'%s' does not contain '%s'", err.text, want);
    }
    assert_int_equal(n, finding ? 1 : 0);
    /* not strict: a finding is a warning with file, line and JSON path */
    struct findings f = {0, ""};
    struct pipit_scenarios_check_params cp = pipit_scenarios_check_default_params();
    assert_false(cp.strict);
    cp.on_finding = on_finding;
    cp.user_data = &f;
    enum pipit_status st = pipit_scenarios_check(set, &dev, 1, &cp, &n, &err);
    if (finding) {
        assert_int_equal(st, PIPIT_OK);
        assert_int_equal(n, 1);
        assert_int_equal(f.n, 1);
        if (strstr(f.last, want) == NULL || strncmp(f.last, "t.jsonl:1: $.", 13) != 0) {
            fail_msg("warning '%s' does not contain '%s'", f.last, want);
        }
    } else {
        assert_int_equal(st, PIPIT_ERR_JSON);
        assert_int_equal(f.n, 0);
        if (strstr(err.text, want) == NULL) {
            fail_msg("'%s' does not contain '%s'", err.text, want);
        }
    }
    pipit_scenarios_free(set);
    pipit_toolset_free(cam);
}

static void check_passes(const char *text) {
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct pipit_eval_device dev = {"camera", cam};
    struct pipit_scenarios *set = load(text);
    struct pipit_error err;
    size_t n = 99;
    if (pipit_scenarios_check(set, &dev, 1, NULL, &n, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(n, 0);
    pipit_scenarios_free(set);
    pipit_toolset_free(cam);
}

static void test_oracle_catches(void **state) {
    (void)state;
    /* the front camera cannot zoom to 5x: the expected state is wrong (a finding) */
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"init\": {\"facing\": \"front\"}, "
                  "\"turns\": [{\"user\": \"zoom to 5x\", \"expect\": [{\"tool\": \"set_zoom\", "
                  "\"args\": {\"level\": 5}}], \"state\": {\"zoom\": 5}}]}",
                  "t.jsonl:1: $.turns[0].state: zoom: want 5, got 1.0", true);
    /* an undo after an action that cannot be undone reverts nothing, and says why */
    check_refuses(
        "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom to 2x\", "
        "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]}, "
        "{\"user\": \"take a photo\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
        "{\"user\": \"undo\", \"undo\": true, \"expect\": [], \"state\": {\"zoom\": 1}}]}",
        "the undo reverted nothing: the newest action is one that cannot be undone", true);
    /* a misspelt state key: named, with the keys there are */
    check_refuses(
        "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom to 2x\", "
        "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}], "
        "\"state\": {\"zomm\": 2}}]}",
        "t.jsonl:1: $.turns[0].state.zomm: the simulated camera has no state key \"zomm\" "
        "(its keys: zoom, flash,",
        true);
    /* an injected failure changes nothing */
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"flash on\", "
                  "\"expect\": [{\"tool\": \"set_flash\", \"args\": {\"mode\": \"on\"}}], "
                  "\"state\": {\"flash\": \"on\"}}], \"inject\": [{\"turn\": 0, \"tool\": "
                  "\"set_flash\", \"error\": \"e\"}]}",
                  "flash: want \"on\", got \"off\"", true);
    /* an undo the scenario does not mark: the state says it did not happen */
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom to 2x\", "
                  "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]}, "
                  "{\"user\": \"scrap that\", \"expect\": [], \"state\": {\"zoom\": 1}}]}",
                  "t.jsonl:1: $.turns[1].state: zoom: want 1, got 2", true);
    /* unknown tools, arguments and values no grammar can produce: errors in both modes */
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", "
                  "\"expect\": [{\"tool\": \"make_coffee\"}]}]}",
                  "$.turns[0].expect[0].tool: no tool \"make_coffee\"", false);
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", "
                  "\"expect\": [{\"tool\": \"set_timer\", \"args\": {\"secs\": 3}}]}]}",
                  "$.turns[0].expect[0].args: args.secs: no such argument", false);
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", "
                  "\"expect\": [{\"tool\": \"set_timer\", \"args\": {\"seconds\": \"3\"}}]}]}",
                  "$.turns[0].expect[0].args: args.seconds: expected an integer, got a string",
                  false);
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", "
                  "\"expect\": [{\"tool\": \"set_zoom\", \"contains\": {\"level\": [\"2\"]}}]}]}",
                  "$.turns[0].expect[0].contains.level: set_zoom has no string argument", false);
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"init\": {\"zomm\": 2}, \"turns\": "
                  "[{\"user\": \"u\", \"expect\": []}]}",
                  "$.init: camera: unknown state key: \"zomm\"", false);
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"device\": \"toaster\", \"turns\": "
                  "[{\"user\": \"u\", \"expect\": []}]}",
                  "$.device: no tool set for device \"toaster\"", false);
    /* an undo by a tool's name or a count: a tool the set lacks and a count out of the log's
     * slots are errors; a named tool with no action to undo is a finding */
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"undo the "
                  "coffee\", \"undo\": \"make_coffee\", \"expect\": []}]}",
                  "$.turns[0].undo: no tool \"make_coffee\"", false);
    check_refuses("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom to 2x\", "
                  "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]}, "
                  "{\"user\": \"undo the timer\", \"undo\": \"set_timer\", \"expect\": []}]}",
                  "$.turns[1].undo: no action of set_timer to undo", true);
}

/* What the oracle no longer refuses: the router is the system under test, not a filter. */
static void test_oracle_legal(void **state) {
    (void)state;
    /* a compound the router cannot split, and an undo paraphrase it does not know */
    check_passes("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom 2x, "
                 "photo\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}, "
                 "{\"tool\": \"take_photo\"}], \"state\": {\"zoom\": 2, \"photos_taken\": 1}}, "
                 "{\"user\": \"take a photo\", \"expect\": [{\"tool\": \"take_photo\"}]}, "
                 "{\"user\": \"that was wrong, reverse it\", \"undo\": true, \"expect\": [], "
                 "\"state\": {\"zoom\": 2, \"photos_taken\": 2}}, "
                 "{\"user\": \"flash on\", \"expect\": [{\"tool\": \"set_flash\", \"args\": "
                 "{\"mode\": \"on\"}}]}, "
                 "{\"user\": \"go back\", \"undo\": true, \"expect\": [], \"state\": "
                 "{\"flash\": \"off\"}}]}");
    /* "undo the zoom" (a tool's name: its newest action, alone, though not the newest) and
     * "undo the last two" (a count) */
    check_passes("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom 2x\", "
                 "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]}, "
                 "{\"user\": \"flash on\", \"expect\": [{\"tool\": \"set_flash\", \"args\": "
                 "{\"mode\": \"on\"}}]}, "
                 "{\"user\": \"undo the zoom\", \"undo\": \"set_zoom\", \"expect\": [], "
                 "\"state\": {\"zoom\": 1, \"flash\": \"on\"}}, "
                 "{\"user\": \"zoom 3x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": "
                 "{\"level\": 3}}]}, "
                 "{\"user\": \"undo the last two\", \"undo\": 2, \"expect\": [], \"state\": "
                 "{\"zoom\": 1, \"flash\": \"off\"}}]}");
    /* a router undo phrase with a call expected: the scenario says what it means */
    check_passes("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"never mind, "
                 "zoom to 3x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": "
                 "3}}], \"state\": {\"zoom\": 3}}]}");
    /* out of range: validation refuses, the state is unchanged and nothing is logged */
    check_passes("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom 2x\", "
                 "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]}, "
                 "{\"user\": \"zoom 50x\", \"expect\": [{\"tool\": \"set_zoom\", \"args\": "
                 "{\"level\": 50}}], \"state\": {\"zoom\": 2}}, "
                 "{\"user\": \"timer 7 seconds\", \"expect\": [{\"tool\": \"set_timer\", "
                 "\"args\": {\"seconds\": 7}}], \"state\": {\"timer_s\": 0}}, "
                 "{\"user\": \"undo\", \"undo\": true, \"expect\": [], \"state\": {\"zoom\": "
                 "1}}]}");
    /* a value the tool lacks, said by the person: the agent puts it back, validation refuses */
    check_passes("{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"flash "
                 "strobe\", \"expect\": [{\"tool\": \"set_flash\", \"args\": {\"mode\": "
                 "\"strobe\"}}], \"state\": {\"flash\": \"off\"}}]}");
    /* the device refuses too (front camera zoom): same */
    check_passes("{\"id\": \"x\", \"category\": \"c\", \"init\": {\"facing\": \"front\"}, "
                 "\"turns\": [{\"user\": \"zoom to 5x\", \"expect\": [{\"tool\": \"set_zoom\", "
                 "\"args\": {\"level\": 5}}], \"state\": {\"zoom\": 1}}]}");
    /* contains on a string argument */
    check_passes("{\"id\": \"x\", \"category\": \"cloud\", \"turns\": [{\"user\": \"what "
                 "should I shoot in Peru\", \"expect\": [{\"tool\": \"process_with_cloud_llm\", "
                 "\"contains\": {\"user_query_context\": [\"peru\"]}}]}]}");
}

#ifdef PIPIT_CLI_BIN
/* `pipit eval --check`: findings are warnings (exit 0), --strict refuses them (exit 1), an error
 * refuses the file either way. */
static int run_check(const char *scenarios, const char *flags, char *out, size_t size) {
    char path[] = "/tmp/pipit-test-eval-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(scenarios, f);
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "'%s' eval --scenarios %s --tools '%s' --check %s 2>&1",
             PIPIT_CLI_BIN, path, CAMERA_SPEC, flags);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    unlink(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_cli_check_strict(void **state) {
    (void)state;
    const char *finding =
        "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom 2x\", "
        "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}]}, "
        "{\"user\": \"scrap that\", \"expect\": [], \"state\": {\"zoom\": 1}}]}\n";
    char out[4096];
    assert_int_equal(run_check(finding, "", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "warning: "));
    assert_non_null(strstr(out, ":1: $.turns[1].state: zoom: want 1, got 2"));
    assert_non_null(strstr(out, "1 finding"));
    assert_int_equal(run_check(finding, "--strict", out, sizeof(out)), 1);
    assert_non_null(strstr(out, ":1: $.turns[1].state: zoom: want 1, got 2"));
    assert_non_null(strstr(out, "(--strict)"));
    /* --strict lists every finding before it refuses, not the first one only */
    char two[1024];
    snprintf(two, sizeof(two), "%s%s", finding, finding);
    two[strlen(finding) + 8] = 'y'; /* the second scenario's id: "y" */
    assert_int_equal(run_check(two, "--strict", out, sizeof(out)), 1);
    assert_non_null(strstr(out, ":1: $.turns[1].state: zoom: want 1, got 2"));
    assert_non_null(strstr(out, ":2: $.turns[1].state: zoom: want 1, got 2"));
    assert_non_null(strstr(out, "2 findings (--strict)"));
    const char *wrong = "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"u\", "
                        "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"lvl\": 2}}]}]}\n";
    assert_int_equal(run_check(wrong, "", out, sizeof(out)), 1);
    assert_non_null(strstr(out, "$.turns[0].expect[0].args: args.lvl: no such argument"));
    const char *good = "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"zoom 50x\", "
                       "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 50}}], "
                       "\"state\": {\"zoom\": 1}}]}\n";
    assert_int_equal(run_check(good, "--strict", out, sizeof(out)), 0);
    assert_non_null(strstr(out, "1 scenarios consistent with the devices"));
}
#endif

/* Check `set` against `dev` with the findings collected in *f: the number of findings. */
static size_t check_findings(struct pipit_scenarios *set,
                             const struct pipit_eval_device *dev,
                             struct findings *f) {
    struct pipit_error err;
    size_t n = 0;
    struct pipit_scenarios_check_params cp = pipit_scenarios_check_default_params();
    cp.on_finding = on_finding;
    cp.user_data = f;
    assert_int_equal(pipit_scenarios_check(set, dev, 1, &cp, &n, &err), PIPIT_OK);
    return n;
}

/* A scenario that names no device runs on the device of the tool set it is given (`pipit eval
 * --tools my-pack.json`): the pack's own device, not the camera. */
static void test_device_from_tools(void **state) {
    (void)state;
    struct pipit_toolset *home = load_tools(PIPIT_SOURCE_DIR "/tools/home.json");
    struct pipit_eval_device dev = {"camera", home}; /* as the CLI passes --tools */
    struct pipit_scenarios *set = load("{\"id\": \"x\", \"category\": \"c\", \"turns\": "
                                       "[{\"user\": \"u\", \"expect\": [], \"state\": "
                                       "{\"zoom\": 1}}]}");
    struct findings f = {0, ""};
    assert_int_equal(check_findings(set, &dev, &f), 1);
    if (strstr(f.last, "the simulated home has no state key \"zoom\"") == NULL) {
        fail_msg("%s", f.last);
    }
    pipit_scenarios_free(set);
    pipit_toolset_free(home);
}

/* `contains` leaves a string free, so the oracle's device holds a placeholder: a `state` check
 * of the key it sets is a finding that says so (a new user's hot tub had "want \"Welcome\", got
 * \"placeholder\"" and no hint); with the argument in `args` the same check passes. */
static void test_contains_and_state(void **state) {
    (void)state;
    struct pipit_toolset *guard = load_tools(PIPIT_SOURCE_DIR "/tests/specs/packs/homeguard.json");
    struct pipit_eval_device dev = {"camera", guard};
    static const char *const SETS[2] = {
        "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"dave needs a code\", "
        "\"expect\": [{\"tool\": \"set_guest_code\", \"contains\": {\"guest\": [\"dave\"]}}], "
        "\"state\": {\"guest\": \"Dave\"}}]}",
        "{\"id\": \"x\", \"category\": \"c\", \"turns\": [{\"user\": \"dave needs a code\", "
        "\"expect\": [{\"tool\": \"set_guest_code\", \"args\": {\"guest\": \"Dave\"}}], "
        "\"state\": {\"guest\": \"Dave\"}}]}"};
    for (int k = 0; k < 2; k++) {
        struct pipit_scenarios *set = load(SETS[k]);
        struct findings f = {0, ""};
        assert_int_equal(check_findings(set, &dev, &f), k == 0 ? 1 : 0);
        if (k == 0 && strstr(f.last, "got \"placeholder\"") == NULL) {
            fail_msg("%s", f.last);
        }
        if (k == 0 && strstr(f.last, "give the argument in \"args\" to check this key") == NULL) {
            fail_msg("%s", f.last);
        }
        pipit_scenarios_free(set);
    }
    pipit_toolset_free(guard);
}

/* The shipped scenario sets are valid and agree with the simulated devices. */
static void test_shipped_sets(void **state) {
    (void)state;
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct pipit_toolset *phone = load_tools(PHONE_SPEC);
    struct pipit_toolset *home = load_tools(PIPIT_SOURCE_DIR "/tools/home.json");
    struct pipit_eval_device devs[3] = {{"camera", cam}, {"phone", phone}, {"home", home}};
    static const struct {
        const char *path;
        size_t min;
        size_t min_sessions; /* the pack has a model: whole conversations of 15-25 turns */
    } sets[] = {{PIPIT_SOURCE_DIR "/eval/camera.jsonl", 150, 12},
                {PIPIT_SOURCE_DIR "/eval/phone.jsonl", 40, 0},
                /* the home pack runs on the generic device built from its declaration */
                {PIPIT_SOURCE_DIR "/eval/home.jsonl", 60, 3}};
    for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
        struct pipit_scenarios *set = NULL;
        struct pipit_error err;
        if (pipit_scenarios_load_file(sets[k].path, &set, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        assert_true(pipit_scenarios_count(set) >= sets[k].min);
        size_t n_findings = 0; /* strict: any finding refuses the set */
        if (pipit_scenarios_check(set, devs, 3, NULL, &n_findings, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        static const char *const cats[] = {"single", "compound",       "conversational", "cloud",
                                           "undo",   "error-recovery", "multi-turn"};
        for (size_t c = 0; c < sizeof(cats) / sizeof(cats[0]); c++) {
            bool found = false;
            for (size_t i = 0; i < pipit_scenarios_count(set) && !found; i++) {
                found = strcmp(pipit_scenarios_category(set, i), cats[c]) == 0;
            }
            if (!found) {
                fail_msg("%s has no %s scenario", sets[k].path, cats[c]);
            }
        }
        size_t sessions = 0;
        for (size_t i = 0; i < pipit_scenarios_count(set); i++) {
            if (strcmp(pipit_scenarios_category(set, i), "session") != 0) {
                continue;
            }
            int32_t n = pipit_scenarios_n_turns(set, i);
            if (n < 15 || n > 25) {
                fail_msg("%s: session %s has %d turns (15-25)", sets[k].path,
                         pipit_scenarios_id(set, i), (int)n);
            }
            sessions++;
        }
        if (sessions < sets[k].min_sessions) {
            fail_msg("%s has %zu session scenarios, at least %zu wanted", sets[k].path, sessions,
                     sets[k].min_sessions);
        }
        pipit_scenarios_free(set);
    }
    pipit_toolset_free(cam);
    pipit_toolset_free(phone);
    pipit_toolset_free(home);
}

/* ============================================================================ real model */

static void test_model_short_run(void **state) {
    (void)state;
    struct pipit_model *model = test_load_model(TEST_MODEL_SPM);
    struct pipit_toolset *cam = load_tools(CAMERA_SPEC);
    struct pipit_scenarios *set =
        load("{\"id\": \"a\", \"category\": \"single\", \"turns\": [{\"user\": \"zoom in to 2x\", "
             "\"expect\": [{\"tool\": \"set_zoom\", \"args\": {\"level\": 2}}], \"state\": "
             "{\"zoom\": 2}}, {\"user\": \"never mind\", \"undo\": true, \"expect\": [], "
             "\"state\": {\"zoom\": 1}}]}\n"
             "{\"id\": \"b\", \"category\": \"compound\", \"turns\": [{\"user\": \"turn on the "
             "grid and take a photo\", \"expect\": [{\"tool\": \"set_grid\", \"args\": "
             "{\"enabled\": true}}, {\"tool\": \"take_photo\"}]}]}\n");
    struct pipit_eval_device dev = {"camera", cam};
    struct pipit_eval_config cfg[2];
    assert_int_equal(pipit_eval_config_find("compact", &cfg[0]), PIPIT_OK);
    assert_int_equal(pipit_eval_config_find("compact-nogrammar", &cfg[1]), PIPIT_OK);
    struct pipit_eval_params ep = pipit_eval_default_params();
    ep.agent.n_threads = 1;
    ep.agent.max_tokens = 24;
    ep.agent.lazy_grammar = false; /* with the grammar, every answer is a call */
    ep.devices = &dev;
    ep.n_devices = 1;
    struct pipit_eval_report *rep = NULL;
    struct pipit_error err;
    if (pipit_eval_run(model, set, cfg, 2, &ep, &rep, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    for (size_t c = 0; c < 2; c++) {
        struct pipit_eval_metrics m;
        assert_int_equal(pipit_eval_report_metrics(rep, c, NULL, &m), PIPIT_OK);
        assert_int_equal(m.n_turns, 3);
        assert_int_equal(m.n_errors, 0);
        assert_true(m.context_tokens_per_turn > 0);
        assert_true(m.latency_ms_p50 > 0);
        if (c == 0) {
            /* the grammar is forced (lazy_grammar false): every decode of the two routed-to-
             * the-model turns is a call, so calls are made and recorded one per decode */
            assert_true(m.calls_made >= 2);
            assert_true(fabs(m.model_calls_per_utterance * m.n_turns - (double)m.calls_made) <
                        1e-9);
        }
    }
    pipit_eval_report_free(rep);
    pipit_scenarios_free(set);
    pipit_toolset_free(cam);
    pipit_model_free(model);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_model_short_run),
        };
        return cmocka_run_group_tests_name("eval-model", tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_call_matching),
        cmocka_unit_test(test_multiset_matching),
        cmocka_unit_test(test_state_and_reply),
        cmocka_unit_test(test_prf),
        cmocka_unit_test(test_report_metrics),
        cmocka_unit_test(test_score_router_fields),
        cmocka_unit_test(test_configs),
        cmocka_unit_test(test_end_to_end_fake),
        cmocka_unit_test(test_router_measured),
        cmocka_unit_test(test_fresh_every),
        cmocka_unit_test(test_svg),
        cmocka_unit_test(test_oracle_catches),
        cmocka_unit_test(test_oracle_legal),
        cmocka_unit_test(test_shipped_sets),
        cmocka_unit_test(test_device_from_tools),
        cmocka_unit_test(test_contains_and_state),
#ifdef PIPIT_CLI_BIN
        cmocka_unit_test(test_cli_check_strict),
#endif
    };
    return cmocka_run_group_tests_name("eval", tests, NULL, NULL);
}
