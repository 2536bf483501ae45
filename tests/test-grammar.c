/*
 * test-grammar.c - tool set -> GBNF, and model output -> calls.
 *
 *   test-grammar             unit: compile both packs in both syntaxes, parse calls
 *   test-grammar --model     the grammars on llama.cpp's grammar engine: they parse, they let
 *                            every number of the right type through whatever its range, and
 *                            the validator refuses exactly the out-of-range ones (a sweep)
 *   test-grammar --property  constrained decodes with random tiny models (32K and 151K
 *                            vocabularies), 200 seeds per pack at 32K and 50 at 151K: every call
 *                            parses and has the right shape; it validates or is refused for a
 *                            number out of its range (the Hermes syntax: a quarter of the seeds)
 */
#include "strbuf.h"
#include "testutil.h"
#include "toolspec.h"

#include <dirent.h>

static const char *PACKS[] = {PIPIT_SOURCE_DIR "/tools/camera.json",
                              PIPIT_SOURCE_DIR "/tools/phone.json"};

static struct pipit_toolset *load_pack(const char *path) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

/* ============================================================================ unit */

static void test_compile_packs(void **state) {
    (void)state;
    for (size_t p = 0; p < 2; p++) {
        struct pipit_toolset *ts = load_pack(PACKS[p]);
        for (int syn = 0; syn < 2; syn++) {
            struct pipit_grammar *g = NULL;
            struct pipit_error err;
            assert_int_equal(pipit_grammar_compile(ts,
                                                   &(struct pipit_grammar_params){
                                                       .syntax = (enum pipit_call_syntax)syn,
                                                       .max_string_chars = 128,
                                                       .max_array_items = 8},
                                                   &g, &err),
                             PIPIT_OK);
            const char *call = pipit_grammar_call(g);
            assert_non_null(call);
            assert_non_null(strstr(call, "root ::= "));
            for (size_t i = 0; i < pipit_toolset_n_tools(ts); i++) {
                assert_non_null(strstr(call, pipit_toolset_tool_name(ts, i)));
                assert_non_null(pipit_grammar_args(g, i));
                assert_non_null(strstr(pipit_grammar_names(g), pipit_toolset_tool_name(ts, i)));
            }
            assert_null(pipit_grammar_args(g, pipit_toolset_n_tools(ts)));
            assert_int_equal(pipit_grammar_syntax(g), syn);
            pipit_grammar_free(g);
        }
        pipit_toolset_free(ts);
    }
    pipit_grammar_free(NULL);
    assert_string_equal(pipit_call_syntax_trigger(PIPIT_SYNTAX_PIPIT), "<call>");
    assert_string_equal(pipit_call_syntax_trigger(PIPIT_SYNTAX_HERMES), "<tool_call>");
}

static void
expect_call(enum pipit_call_syntax syn, const char *text, const char *name, const char *args) {
    struct pipit_call c;
    struct pipit_error err;
    enum pipit_status st = pipit_call_parse(syn, text, &c, &err);
    if (st != PIPIT_OK) {
        fail_msg("'%s': %s", text, err.text);
    }
    assert_string_equal(c.name, name);
    assert_string_equal(c.args_json, args);
    pipit_call_clear(&c);
}

static void
expect_parse_error(enum pipit_call_syntax syn, const char *text, const char *needle, int column) {
    struct pipit_call c;
    struct pipit_error err;
    enum pipit_status st = pipit_call_parse(syn, text, &c, &err);
    if (st != PIPIT_ERR_PARSE) {
        fail_msg("'%s' parsed (%s)", text, pipit_status_str(st));
    }
    if (strstr(err.text, needle) == NULL) {
        fail_msg("'%s': message '%s' lacks '%s'", text, err.text, needle);
    }
    if (column > 0 && err.column != column) {
        fail_msg("'%s': column %d, want %d (%s)", text, err.column, column, err.text);
    }
    assert_null(c.args_json);
}

static void test_parse_pipit_syntax(void **state) {
    (void)state;
    enum pipit_call_syntax P = PIPIT_SYNTAX_PIPIT;
    expect_call(P, "<call>take_photo()", "take_photo", "{}");
    expect_call(P, "<call>set_zoom(level=2.5)", "set_zoom", "{\"level\":2.5}");
    expect_call(P, "<call>tap_to_focus(x=0.25, y=1)", "tap_to_focus", "{\"x\":0.25,\"y\":1}");
    expect_call(P, "  <call>set_flash(mode=\"on\")\n", "set_flash", "{\"mode\":\"on\"}");
    expect_call(P, "<call>x(a=[1, 2], b={\"c\": true}, d=null)", "x",
                "{\"a\":[1,2],\"b\":{\"c\":true},\"d\":null}");
    expect_call(P, "sure: <call>set_grid(enabled=true)", "set_grid", "{\"enabled\":true}");
    /* names that are not identifiers are JSON strings */
    expect_call(P, "<call>get(\"Content-Type\"=\"text/csv\", \"a b\"=1, \"\\u00e9\"=2)", "get",
                "{\"Content-Type\":\"text/csv\",\"a b\":1,\"\u00e9\":2}");
    expect_parse_error(P, "<call>get(\"a\"=1, a=2)", "duplicate argument", 18);
    expect_parse_error(P, "<call>get(\"\"=1)", "expected an argument name", 11);
    expect_parse_error(P, "<call>get(x={\"a\": 1, \"a\": 2})", "expected a JSON value", 13);
    assert_true(pipit_call_detect(P, "ok <call>x()"));
    assert_false(pipit_call_detect(P, "I turned on the flash"));

    expect_parse_error(P, "I turned on the flash", "no <call>", 0);
    expect_parse_error(P, "<call>", "expected a tool name", 7);
    expect_parse_error(P, "<call>set_zoom level=2", "expected '('", 15);
    expect_parse_error(P, "<call>set_zoom(level 2)", "expected '='", 22);
    expect_parse_error(P, "<call>set_zoom(level=)", "expected a JSON value", 22);
    expect_parse_error(P, "<call>set_zoom(level=2", "expected ',' or ')'", 23);
    expect_parse_error(P, "<call>set_zoom(level=2) and more", "unexpected text", 25);
    expect_parse_error(P, "<call>set_zoom(level=2, level=3)", "duplicate argument", 25);
    expect_parse_error(P, "<call>set_zoom(=2)", "expected an argument name", 16);
    expect_call(P, "<call>get-weather.v2(city=\"Oslo\")", "get-weather.v2", "{\"city\":\"Oslo\"}");
    expect_parse_error(P, "<call>(x=1)", "expected a tool name", 7);
    expect_parse_error(P, "line one\n<call>set_zoom(", "expected an argument name", 16);

    /* "none of these tools": no arguments, and only when the set has no tool of that name */
    struct pipit_call c;
    struct pipit_error err;
    assert_int_equal(pipit_call_parse(P, "<call>none()", &c, &err), PIPIT_OK);
    assert_true(pipit_call_is_none(NULL, &c));
    struct pipit_toolset *cam = load_pack(PACKS[0]);
    assert_true(pipit_call_is_none(cam, &c));
    const char own[] = "[{\"type\":\"function\",\"function\":{\"name\":\"none\","
                       "\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}}]";
    struct pipit_toolset *mine = test_tools_from(own, "own");
    assert_false(pipit_call_is_none(mine, &c));
    pipit_call_clear(&c);
    assert_int_equal(pipit_call_parse(P, "<call>none(x=1)", &c, &err), PIPIT_OK);
    assert_false(pipit_call_is_none(NULL, &c));
    pipit_call_clear(&c);
    assert_false(pipit_call_is_none(NULL, NULL));
    pipit_toolset_free(mine);
    pipit_toolset_free(cam);
}

static void test_parse_hermes_syntax(void **state) {
    (void)state;
    enum pipit_call_syntax H = PIPIT_SYNTAX_HERMES;
    expect_call(
        H, "<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": {\"level\": 2}}\n</tool_call>",
        "set_zoom", "{\"level\":2}");
    expect_call(H, "<tool_call>{\"arguments\": {}, \"name\": \"take_photo\"}</tool_call>",
                "take_photo", "{}");
    expect_call(
        H, "<tool_call>{\"name\": \"set_flash\", \"arguments\": \"{\\\"mode\\\": \\\"on\\\"}\"}",
        "set_flash", "{\"mode\":\"on\"}");
    expect_call(H, "<tool_call>{\"name\": \"set_grid\", \"parameters\": {\"enabled\": false}}",
                "set_grid", "{\"enabled\":false}");
    expect_parse_error(H, "no call here", "no <tool_call>", 0);
    expect_parse_error(H, "<tool_call>{\"name\": 3}</tool_call>", "\"name\" must be", 0);
    expect_parse_error(H, "<tool_call>{\"name\": \"x\", \"arguments\": [1]}</tool_call>",
                       "\"arguments\" must be", 0);
    expect_parse_error(H, "<tool_call>{\"name\": \"x\", </tool_call>", "not a JSON object", 0);
    expect_parse_error(H, "<tool_call>{\"name\": \"x\"}</tool_call> extra", "unexpected text", 0);
    /* a repeated key is an error, not "the last one wins" */
    expect_parse_error(H, "<tool_call>{\"name\": \"x\", \"arguments\": {\"a\": 1, \"a\": 2}}",
                       "not a JSON object", 0);
    /* bytes that are no UTF-8 (a lead byte above F4, as llama.cpp's GBNF sampler lets byte
     * tokens spell) are read as U+FFFD: the call keeps its shape */
    expect_call(H,
                "<tool_call>{\"name\": \"ask\", \"arguments\": {\"q\": \"Z\xf5\x92!\"}}"
                "</tool_call>",
                "ask", "{\"q\":\"Z\xef\xbf\xbd\xef\xbf\xbd!\"}");
    expect_call(PIPIT_SYNTAX_PIPIT, "<call>ask(q=\"\xc0\xaf\")", "ask",
                "{\"q\":\"\xef\xbf\xbd\xef\xbf\xbd\"}");
}

/* ============================================================================ model */

static void test_grammars_load_in_llama(void **state) {
    (void)state;
    struct pipit_model *m = test_load_vocab(TEST_MODEL_SPM);
    struct pipit_error err;
    for (size_t p = 0; p < 2; p++) {
        struct pipit_toolset *ts = load_pack(PACKS[p]);
        for (int syn = 0; syn < 2; syn++) {
            struct pipit_grammar *g = NULL;
            assert_int_equal(pipit_grammar_compile(ts,
                                                   &(struct pipit_grammar_params){
                                                       .syntax = (enum pipit_call_syntax)syn,
                                                       .max_string_chars = 128,
                                                       .max_array_items = 8},
                                                   &g, &err),
                             PIPIT_OK);
            const char *texts[2] = {pipit_grammar_call(g), pipit_grammar_names(g)};
            for (size_t k = 0; k < pipit_toolset_n_tools(ts) + 2; k++) {
                const char *gbnf = k < 2 ? texts[k] : pipit_grammar_args(g, k - 2);
                struct pipit_sampler_params sp = pipit_sampler_default_params();
                sp.grammar = gbnf;
                struct pipit_sampler *s = NULL;
                if (pipit_sampler_init(m, &sp, &s, &err) != PIPIT_OK) {
                    fail_msg("%s syntax %d grammar %zu: %s\n%s", PACKS[p], syn, k, err.text, gbnf);
                }
                pipit_sampler_free(s);
            }
            pipit_grammar_free(g);
        }
        pipit_toolset_free(ts);
    }
    pipit_model_free(m);
}

/* One numeric argument swept through its argument grammar and the validator. The grammar
 * guarantees shape, not range: it accepts every value of the argument's JSON type whatever its
 * range (spelled canonically: no leading zeros, at most 3 fractional digits, an integer without
 * a fraction), and the validator accepts exactly the values in [lo, hi] (and, when `allowed` is
 * not NULL, among the `n_allowed` listed ones). Values are written with `decimals` fractional
 * digits, or with %g when negative. `more` is another argument "name=value" (a leading '<' puts
 * it before this one). Returns how many values the grammar let through that validation refused:
 * the out-of-range requests that reach validation instead of being bent into range. */
static int sweep_numbers(struct pipit_model *m,
                         struct pipit_toolset *ts,
                         struct pipit_grammar *g,
                         const char *tool,
                         const char *arg,
                         bool integer,
                         double lo,
                         double hi,
                         const double *allowed,
                         size_t n_allowed,
                         double from,
                         double to,
                         double step,
                         int decimals,
                         const char *more) {
    int32_t idx = pipit_toolset_find(ts, tool);
    assert_true(idx >= 0);
    const char *gbnf = pipit_grammar_args(g, (size_t)idx);
    int n_accepted = 0, n_refused = 0;
    for (double v = from; v <= to + 1e-9; v += step) {
        char num[64], text[256], args[256];
        if (decimals >= 0) {
            snprintf(num, sizeof(num), "%.*f", decimals, v);
        } else {
            snprintf(num, sizeof(num), "%g", v);
        }
        char more_json[64] = "", text_more[64] = "";
        bool before = more != NULL && more[0] == '<';
        if (more != NULL) {
            const char *kv = before ? more + 1 : more;
            const char *eq = strchr(kv, '=');
            snprintf(more_json, sizeof(more_json), "\"%.*s\": %s", (int)(eq - kv), kv, eq + 1);
            snprintf(text_more, sizeof(text_more), "%s", kv);
        }
        if (before) {
            snprintf(text, sizeof(text), "(%s, %s=%s)", text_more, arg, num);
            snprintf(args, sizeof(args), "{%s, \"%s\": %s}", more_json, arg, num);
        } else if (more != NULL) {
            snprintf(text, sizeof(text), "(%s=%s, %s)", arg, num, text_more);
            snprintf(args, sizeof(args), "{\"%s\": %s, %s}", arg, num, more_json);
        } else {
            snprintf(text, sizeof(text), "(%s=%s)", arg, num);
            snprintf(args, sizeof(args), "{\"%s\": %s}", arg, num);
        }
        /* what each side should say, from the text itself */
        double x = strtod(num, NULL);
        bool has_fraction = strchr(num, '.') != NULL;
        bool want_grammar = !integer || !has_fraction;
        bool want_valid = x >= lo && x <= hi && (!integer || x == floor(x));
        if (allowed != NULL) {
            bool member = false;
            for (size_t i = 0; i < n_allowed; i++) {
                member = member || allowed[i] == x;
            }
            want_valid = want_valid && member;
        }
        bool prefix = false, complete = false;
        assert_int_equal(pipit_gbnf_match(m, gbnf, text, &prefix, &complete), PIPIT_OK);
        size_t n_problems = 0;
        struct pipit_arg_problem pr[4];
        enum pipit_status vst =
            pipit_toolset_validate_args(ts, tool, args, strlen(args), pr, 4, &n_problems);
        bool valid = vst == PIPIT_OK;
        if (complete != want_grammar) {
            fail_msg("%s %s: the grammar says %d, want %d", tool, text, complete, want_grammar);
        }
        if (valid != want_valid) {
            fail_msg("%s %s: the validator says %d, want %d (%s)", tool, text, valid, want_valid,
                     n_problems > 0 ? pr[0].message : "");
        }
        if (!valid && n_problems == 0) {
            fail_msg("%s %s: refused without a problem", tool, text);
        }
        n_accepted += complete;
        n_refused += complete && !valid;
    }
    assert_true(n_accepted > 0 || (integer && decimals == 1));
    return n_refused;
}

/* `text` against the argument grammar of `tool` in `g`: complete or not. */
static bool args_complete(struct pipit_model *m,
                          struct pipit_toolset *ts,
                          struct pipit_grammar *g,
                          const char *tool,
                          const char *text) {
    int32_t idx = pipit_toolset_find(ts, tool);
    assert_true(idx >= 0);
    bool prefix = false, complete = false;
    assert_int_equal(
        pipit_gbnf_match(m, pipit_grammar_args(g, (size_t)idx), text, &prefix, &complete),
        PIPIT_OK);
    return complete;
}

static void test_numbers_are_shape_not_range(void **state) {
    (void)state;
    struct pipit_model *m = test_load_vocab(TEST_MODEL_SPM);
    struct pipit_error err;
    struct pipit_toolset *ts = load_pack(PACKS[0]);
    struct pipit_grammar *g = NULL;
    assert_int_equal(pipit_grammar_compile(ts, NULL, &g, &err), PIPIT_OK);

    /* each sweep crosses its range: values outside reach the validator, which refuses them */
    const double timer[] = {0, 3, 5, 10};
    assert_true(sweep_numbers(m, ts, g, "set_zoom", "level", false, 0.5, 10, NULL, 0, 0.0, 11.0,
                              0.05, 2, NULL) > 0);
    assert_true(sweep_numbers(m, ts, g, "set_zoom", "level", false, 0.5, 10, NULL, 0, -3.0, 60.0,
                              0.5, -1, NULL) > 0);
    assert_true(sweep_numbers(m, ts, g, "set_exposure", "ev", false, -2, 2, NULL, 0, -3.0, 3.0,
                              0.125, 3, NULL) > 0);
    assert_true(sweep_numbers(m, ts, g, "set_exposure", "ev", false, -2, 2, NULL, 0, -3.0, 3.0,
                              0.25, -1, NULL) > 0);
    assert_true(sweep_numbers(m, ts, g, "tap_to_focus", "x", false, 0, 1, NULL, 0, -0.5, 1.5, 0.01,
                              2, "y=0.5") > 0);
    assert_true(sweep_numbers(m, ts, g, "set_jpeg_quality", "quality", true, 50, 100, NULL, 0, 0,
                              120, 1, 0, NULL) > 0);
    /* a numeric enum is not forced: 7 seconds is refused by validation, not bent to 5 */
    assert_true(sweep_numbers(m, ts, g, "set_timer", "seconds", true, 0, 10, timer, 4, -2, 12, 1, 0,
                              NULL) > 0);
    /* integers with a fraction are the wrong JSON type: never in the grammar */
    assert_int_equal(sweep_numbers(m, ts, g, "set_jpeg_quality", "quality", true, 50, 100, NULL, 0,
                                   40, 110, 7, 1, NULL),
                     0);

    /* wider and negative ranges, from a tool set written for the test */
    const char *spec = "[{\"type\":\"function\",\"function\":{\"name\":\"t\",\"description\":\"d\","
                       "\"parameters\":{\"type\":\"object\",\"properties\":{"
                       "\"i\":{\"type\":\"integer\",\"minimum\":-15,\"maximum\":1234},"
                       "\"n\":{\"type\":\"number\",\"minimum\":-0.25,\"maximum\":1000}},"
                       "\"required\":[\"i\"]}}}]";
    struct pipit_toolset *ts2 = NULL;
    assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "test", &ts2, &err), PIPIT_OK);
    struct pipit_grammar *g2 = NULL;
    assert_int_equal(pipit_grammar_compile(ts2, NULL, &g2, &err), PIPIT_OK);
    assert_true(
        sweep_numbers(m, ts2, g2, "t", "i", true, -15, 1234, NULL, 0, -40, 1300, 1, 0, NULL) > 0);
    assert_int_equal(
        sweep_numbers(m, ts2, g2, "t", "i", true, -15, 1234, NULL, 0, -40, 1300, 7, 1, NULL), 0);
    assert_true(sweep_numbers(m, ts2, g2, "t", "n", false, -0.25, 1000, NULL, 0, -1, 1001, 0.37, 2,
                              "<i=3") > 0);
    assert_true(sweep_numbers(m, ts2, g2, "t", "n", false, -0.25, 1000, NULL, 0, -1, 2, 0.001, 3,
                              "<i=3") > 0);
    pipit_grammar_free(g2);
    pipit_toolset_free(ts2);

    /* bounds the old range rules got wrong (issue 18): a tiny minimum rounded to 0, a minimum
     * above the old default maximum; now the grammar takes the number and validation decides */
    const char *spec3 =
        "[{\"type\":\"function\",\"function\":{\"name\":\"t\",\"description\":\"d\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{"
        "\"a\":{\"type\":\"number\",\"minimum\":1e-10},"
        "\"b\":{\"type\":\"integer\",\"minimum\":1500000000}}}}}]";
    struct pipit_toolset *ts3 = NULL;
    assert_int_equal(pipit_toolset_load_string(spec3, strlen(spec3), "test", &ts3, &err), PIPIT_OK);
    struct pipit_grammar *g3 = NULL;
    assert_int_equal(pipit_grammar_compile(ts3, NULL, &g3, &err), PIPIT_OK);
    assert_true(sweep_numbers(m, ts3, g3, "t", "a", false, 1e-10, 1e300, NULL, 0, -0.002, 0.002,
                              0.001, 3, NULL) > 0);
    assert_true(sweep_numbers(m, ts3, g3, "t", "b", true, 1500000000, 1e300, NULL, 0, 999999999,
                              1000000001, 1, 0, NULL) == 3);
    assert_true(sweep_numbers(m, ts3, g3, "t", "b", true, 1500000000, 1e300, NULL, 0, 1499999999,
                              1500000001, 1, 0, NULL) == 1);
    pipit_grammar_free(g3);
    pipit_toolset_free(ts3);

    /* out of range, the length bound, and the type: what the person asked for gets through */
    const char *through[] = {"(level=50)",           "(level=-3)",     "(level=0)",
                             "(level=999999999999)", "(level=-0.5)",   "(level=12.125)",
                             "(level=100000.5)",     "(level=-12345)", "(level=0.001)"};
    for (size_t i = 0; i < sizeof(through) / sizeof(through[0]); i++) {
        if (!args_complete(m, ts, g, "set_zoom", through[i])) {
            fail_msg("the grammar refuses %s", through[i]);
        }
    }
    assert_true(args_complete(m, ts, g, "set_timer", "(seconds=7)"));
    assert_true(args_complete(m, ts, g, "set_timer", "(seconds=-1)"));
    assert_true(args_complete(m, ts, g, "set_jpeg_quality", "(quality=1000)"));
    /* ... but never a different shape */
    const char *bad[] = {"(level=02)",
                         "(level=2.)",
                         "(level=2.1234)",
                         "(level= 2)",
                         "(level=+2)",
                         "(level=2e0)",
                         "(level=-0)",
                         "(level=.5)",
                         "(level=\"2\")",
                         "(level=true)",
                         "(level=null)",
                         "(zoom=2)",
                         "()",
                         "(level=2, level=3)",
                         "(level=--2)",
                         "(level=1234567890123)"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (args_complete(m, ts, g, "set_zoom", bad[i])) {
            fail_msg("the grammar accepts %s", bad[i]);
        }
    }
    assert_false(args_complete(m, ts, g, "set_timer", "(seconds=7.5)"));
    assert_false(args_complete(m, ts, g, "set_timer", "(seconds=\"3\")"));
    assert_false(args_complete(m, ts, g, "set_flash", "(mode=\"sometimes\")"));
    assert_true(args_complete(m, ts, g, "set_flash", "(mode=\"auto\")"));
    /* the whole-call grammar: trigger, then one known tool */
    bool prefix = false, complete = false;
    assert_int_equal(
        pipit_gbnf_match(m, pipit_grammar_call(g), "<call>set_zoom(level=50)", &prefix, &complete),
        PIPIT_OK);
    assert_true(complete);
    assert_int_equal(
        pipit_gbnf_match(m, pipit_grammar_call(g), "<call>set_zoom(level=2", &prefix, &complete),
        PIPIT_OK);
    assert_true(prefix);
    assert_false(complete);
    /* "none of these tools" (docs/grammar.md): none(), with no arguments, and no other name
     * the set does not have; a known tool still needs its arguments */
    static const struct {
        const char *text;
        bool prefix, complete;
    } NONE[] = {
        {"<call>none()", true, true},       {"<call>none(x=1)", false, false},
        {"<call>fly_away()", false, false}, {"<call>set_zoom()", false, false},
        {"<call>take_photo()", true, true}, {"<call>non", true, false},
        {"<call>nonesuch()", false, false},
    };
    for (size_t i = 0; i < sizeof(NONE) / sizeof(NONE[0]); i++) {
        assert_int_equal(
            pipit_gbnf_match(m, pipit_grammar_call(g), NONE[i].text, &prefix, &complete), PIPIT_OK);
        if (prefix != NONE[i].prefix || complete != NONE[i].complete) {
            fail_msg("%s: prefix %d complete %d, want %d %d", NONE[i].text, prefix, complete,
                     NONE[i].prefix, NONE[i].complete);
        }
        /* the names grammar (JIT stage 1) ends at the arguments' opener */
        char head[64];
        snprintf(head, sizeof(head), "%s", NONE[i].text);
        char *open = strchr(head, '(');
        if (open != NULL) {
            open[1] = '\0';
            assert_int_equal(pipit_gbnf_match(m, pipit_grammar_names(g), head, &prefix, &complete),
                             PIPIT_OK);
            bool want = NONE[i].complete || strcmp(head, "<call>set_zoom(") == 0 ||
                        strcmp(head, "<call>none(") == 0;
            if (complete != want) {
                fail_msg("names grammar, %s: complete %d, want %d", head, complete, want);
            }
        }
    }
    pipit_grammar_free(g);

    /* the Hermes syntax has the same numbers */
    struct pipit_grammar_params hp = pipit_grammar_default_params();
    hp.syntax = PIPIT_SYNTAX_HERMES;
    assert_int_equal(pipit_grammar_compile(ts, &hp, &g, &err), PIPIT_OK);
    const char *hermes[][2] = {
        {"<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": {\"level\": 50}}\n</tool_call>",
         "1"},
        {"<tool_call>\n{\"name\": \"set_timer\", \"arguments\": {\"seconds\": 7}}\n</tool_call>",
         "1"},
        {"<tool_call>\n{\"name\": \"set_exposure\", \"arguments\": {\"ev\": 3}}\n</tool_call>",
         "1"},
        {"<tool_call>\n{\"name\": \"set_timer\", \"arguments\": {\"seconds\": 7.5}}\n</tool_call>",
         "0"},
        {"<tool_call>\n{\"name\": \"set_zoom\", \"arguments\": {\"level\": \"50\"}}\n</tool_call>",
         "0"},
    };
    for (size_t i = 0; i < sizeof(hermes) / sizeof(hermes[0]); i++) {
        assert_int_equal(
            pipit_gbnf_match(m, pipit_grammar_call(g), hermes[i][0], &prefix, &complete), PIPIT_OK);
        if (complete != (hermes[i][1][0] == '1')) {
            fail_msg("hermes: the grammar says %d for %s", complete, hermes[i][0]);
        }
    }
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* ============================================================================ exact values */

/* One tool "f" with one required argument "x" of `schema`. */
static struct pipit_toolset *one_arg(const char *schema) {
    char spec[1024];
    snprintf(spec, sizeof(spec),
             "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"description\":\"d\","
             "\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":%s},"
             "\"required\":[\"x\"]}}}]",
             schema);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string(spec, strlen(spec), "test", &ts, &err) != PIPIT_OK) {
        fail_msg("%s: %s", schema, err.text);
    }
    return ts;
}

static struct pipit_grammar *compile_exact(struct pipit_toolset *ts, bool exact) {
    struct pipit_grammar_params gp = pipit_grammar_default_params();
    gp.exact_values = exact;
    struct pipit_grammar *g = NULL;
    struct pipit_error err;
    if (pipit_grammar_compile(ts, &gp, &g, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return g;
}

struct exact_rig {
    struct pipit_model *m;
    struct pipit_fastgrammar *fg;
    struct pipit_toolset *ts;
    const char *shape, *exact; /* argument grammars */
    bool windowed;             /* a multipleOf with more than 256 multiples: the exact grammar
                                  offers the 256 nearest to 0, so not every valid value */
};

/* The argument text "(x=<num>)" against both grammars (llama.cpp's engine and the automaton
 * agree on each) and the validator. */
static void
check_one(struct exact_rig *r, const char *schema, const char *num, int *n_exact, int *n_valid) {
    char text[256], args[256];
    snprintf(text, sizeof(text), "(x=%s)", num);
    snprintf(args, sizeof(args), "{\"x\": %s}", num);
    bool in[2];
    const char *gs[2] = {r->shape, r->exact};
    for (int k = 0; k < 2; k++) {
        bool p1 = false, c1 = false, p2 = false, c2 = false;
        assert_int_equal(pipit_gbnf_match(r->m, gs[k], text, &p1, &c1), PIPIT_OK);
        assert_int_equal(pipit_fastgrammar_match(r->fg, gs[k], text, &p2, &c2), PIPIT_OK);
        if (c1 != c2) {
            fail_msg("%s %s: GBNF %d, automaton %d (%s)", schema, text, c1, c2,
                     k ? "exact" : "shape");
        }
        in[k] = c1;
    }
    bool valid =
        pipit_toolset_validate_args(r->ts, "f", args, strlen(args), NULL, 0, NULL) == PIPIT_OK;
    /* exact: only valid values; and every valid value of the shape */
    if (in[1] && !valid) {
        fail_msg("%s: the exact grammar accepts %s, the validator refuses it", schema, num);
    }
    /* the one deliberate omission: exact mode never writes a negative zero ("-0.000") */
    bool negative_zero = num[0] == '-' && strtod(num, NULL) == 0.0;
    if (in[0] && valid && !in[1] && !negative_zero && !r->windowed) {
        fail_msg("%s: %s is valid and of the shape, the exact grammar refuses it", schema, num);
    }
    if (in[1] && !in[0]) {
        fail_msg("%s: %s is in the exact grammar but not of the shape", schema, num);
    }
    *n_exact += in[1];
    *n_valid += valid;
}

/* Ranges and enums of every magnitude and precision compiled exactly (exact_values), and the
 * shape grammar's digits follow the bounds: a sweep of texts around and inside each range,
 * plus the regressions of issue 18. */
static void test_exact_values(void **state) {
    (void)state;
    struct exact_rig r = {0};
    struct pipit_error err;
    r.m = test_load_vocab(TEST_MODEL_SPM);
    assert_int_equal(pipit_fastgrammar_init(r.m, &r.fg, &err), PIPIT_OK);
    static const char *schemas[] = {
        "{\"type\":\"number\",\"minimum\":1e-10}",
        "{\"type\":\"number\",\"minimum\":1e-10,\"maximum\":1e-9}",
        "{\"type\":\"integer\",\"minimum\":1500000000}",
        "{\"type\":\"number\",\"minimum\":1500000000}",
        "{\"type\":\"number\",\"minimum\":-2.5,\"maximum\":-0.001}",
        "{\"type\":\"number\",\"minimum\":-1e-7,\"maximum\":3.25}",
        "{\"type\":\"integer\",\"minimum\":-7,\"maximum\":12}",
        "{\"type\":\"integer\",\"minimum\":0.5,\"maximum\":3.5}",
        "{\"type\":\"number\",\"maximum\":1e20}",
        "{\"type\":\"number\",\"minimum\":0.1,\"maximum\":0.30000000000000004}",
        "{\"type\":\"number\",\"minimum\":123456.789,\"maximum\":123456.7891}",
        "{\"type\":\"number\",\"minimum\":0,\"maximum\":1}",
        "{\"type\":\"number\",\"minimum\":-1e15,\"maximum\":-999.5}",
        "{\"type\":\"integer\",\"minimum\":-9007199254740992}",
        "{\"type\":\"integer\",\"maximum\":1e20}",
        "{\"type\":\"number\",\"minimum\":-1e300,\"maximum\":1e300}",
        "{\"type\":\"number\",\"minimum\":1e-30,\"maximum\":3e-30}",
        "{\"type\":\"number\",\"minimum\":99.99,\"maximum\":100.01}",
        "{\"type\":\"number\",\"minimum\":5,\"maximum\":5}",
        "{\"type\":\"number\",\"enum\":[0.1,0.25,-3,1e-7,100]}",
        "{\"type\":\"integer\",\"enum\":[1,5,7],\"maximum\":10}",
        "{\"type\":\"number\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":1}",
        "{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMinimum\":true,\"maximum\":2.5}",
        "{\"type\":\"integer\",\"exclusiveMinimum\":-3,\"exclusiveMaximum\":4}",
        "{\"type\":\"number\",\"multipleOf\":0.1,\"minimum\":0,\"maximum\":2}",
        "{\"type\":\"integer\",\"multipleOf\":5,\"minimum\":-20,\"maximum\":100}",
        "{\"type\":\"number\",\"multipleOf\":0.25,\"exclusiveMinimum\":-1,\"maximum\":3}",
        "{\"type\":\"integer\",\"format\":\"int32\"}",
        "{\"type\":\"integer\",\"multipleOf\":7,\"minimum\":0}",
        "{\"type\":\"number\",\"multipleOf\":0.5}",
        "{\"type\":\"integer\",\"multipleOf\":3,\"maximum\":-1000}",
        "{\"type\":\"number\",\"enum\":[0.3,0.5],\"minimum\":0.2}",
    };
    uint64_t rng = 18;
    int total = 0;
    for (size_t i = 0; i < sizeof(schemas) / sizeof(schemas[0]); i++) {
        r.ts = one_arg(schemas[i]);
        struct pipit_grammar *gs = compile_exact(r.ts, false), *ge = compile_exact(r.ts, true);
        r.shape = pipit_grammar_args(gs, 0);
        r.exact = pipit_grammar_args(ge, 0);
        json_error_t jerr;
        json_t *sj = json_loads(schemas[i], 0, &jerr);
        assert_non_null(sj);
        double lo = json_number_value(json_object_get(sj, "minimum"));
        double hi = json_number_value(json_object_get(sj, "maximum"));
        bool has_lo = json_object_get(sj, "minimum") != NULL;
        bool has_hi = json_object_get(sj, "maximum") != NULL;
        double c = has_lo && has_hi ? (lo + hi) / 2 : has_lo ? lo : has_hi ? hi : 0;
        double mo = json_number_value(json_object_get(sj, "multipleOf"));
        r.windowed = mo > 0 && (!has_lo || !has_hi || (hi - lo) / mo >= 256);
        double w = has_lo && has_hi ? (hi - lo) : fabs(c) + 1;
        w = w > 0 ? w : 1;
        int n_exact = 0, n_valid = 0;
        char num[64];
        /* the bounds and enum values as written, and nearby */
        json_t *e = json_object_get(sj, "enum");
        for (size_t k = 0; k < json_array_size(e) + 2; k++) {
            double v = k < json_array_size(e)    ? json_number_value(json_array_get(e, k))
                       : k == json_array_size(e) ? lo
                                                 : hi;
            for (int d = -1; d <= 1; d++) {
                for (int prec = 1; prec <= 17; prec++) {
                    snprintf(num, sizeof(num), "%.*g", prec, v + d * fabs(v) * 1e-9);
                    if (strchr(num, 'e') == NULL && strchr(num, 'n') == NULL) {
                        check_one(&r, schemas[i], num, &n_exact, &n_valid);
                    }
                }
                for (int decimals = 0; decimals <= 42; decimals += 3) {
                    snprintf(num, sizeof(num), "%.*f", decimals, v + d * fabs(v) * 1e-9);
                    if (strlen(num) < 60 && strchr(num, 'n') == NULL) {
                        check_one(&r, schemas[i], num, &n_exact, &n_valid);
                    }
                }
            }
        }
        /* random values around the range with 0..14 fraction digits */
        for (int t = 0; t < 600; t++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            double u = (double)(rng >> 11) / 9007199254740992.0;
            double v = c + (u * 3.0 - 1.5) * w;
            int decimals = (int)((rng >> 7) % 15);
            snprintf(num, sizeof(num), "%.*f", decimals, v);
            if (strlen(num) < 40) {
                check_one(&r, schemas[i], num, &n_exact, &n_valid);
            }
        }
        for (const char *const *q =
                 (const char *const[]){"0", "1", "-1", "0.5", "-0.5", "10", NULL};
             *q != NULL; q++) {
            check_one(&r, schemas[i], *q, &n_exact, &n_valid);
        }
        print_message("%s: %d texts in the exact grammar, %d valid\n", schemas[i], n_exact,
                      n_valid);
        assert_true(n_exact > 0);
        total += n_exact;
        json_decref(sj);
        pipit_grammar_free(gs);
        pipit_grammar_free(ge);
        pipit_toolset_free(r.ts);
    }
    assert_true(total > 0);

    /* the regressions of issue 18, by name */
    struct {
        const char *schema, *num;
        bool exact, shape, valid;
    } cases[] = {
        /* a tiny minimum was rounded to 0 */
        {"{\"type\":\"number\",\"minimum\":1e-10}", "0", false, true, false},
        {"{\"type\":\"number\",\"minimum\":1e-10}", "0.0000000001", true, true, true},
        {"{\"type\":\"number\",\"minimum\":1e-10}", "0.00000000009", false, false, false},
        /* a minimum without a maximum was clamped to 1e9 */
        {"{\"type\":\"integer\",\"minimum\":1500000000}", "1000000000", false, true, false},
        {"{\"type\":\"integer\",\"minimum\":1500000000}", "1500000000", true, true, true},
        {"{\"type\":\"integer\",\"minimum\":1500000000}", "99999999999", true, true, true},
        /* a number enum is written as its shortest decimal */
        {"{\"type\":\"number\",\"enum\":[0.1,0.2]}", "0.1", true, true, true},
        {"{\"type\":\"number\",\"enum\":[0.1,0.2]}", "0.10000000000000001", false, false, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        r.ts = one_arg(cases[i].schema);
        struct pipit_grammar *gs = compile_exact(r.ts, false), *ge = compile_exact(r.ts, true);
        char text[128], args[128];
        snprintf(text, sizeof(text), "(x=%s)", cases[i].num);
        snprintf(args, sizeof(args), "{\"x\": %s}", cases[i].num);
        bool p = false, ce = false, cs = false;
        assert_int_equal(pipit_gbnf_match(r.m, pipit_grammar_args(ge, 0), text, &p, &ce), PIPIT_OK);
        assert_int_equal(pipit_gbnf_match(r.m, pipit_grammar_args(gs, 0), text, &p, &cs), PIPIT_OK);
        bool valid =
            pipit_toolset_validate_args(r.ts, "f", args, strlen(args), NULL, 0, NULL) == PIPIT_OK;
        if (ce != cases[i].exact || cs != cases[i].shape || valid != cases[i].valid) {
            fail_msg("%s %s: exact %d shape %d valid %d, want %d %d %d", cases[i].schema,
                     cases[i].num, ce, cs, valid, cases[i].exact, cases[i].shape, cases[i].valid);
        }
        pipit_grammar_free(gs);
        pipit_grammar_free(ge);
        pipit_toolset_free(r.ts);
    }
    pipit_fastgrammar_free(r.fg);
    pipit_model_free(r.m);
}

/* ============================================================================ property */

struct property_stats {
    int decodes, parsed, shaped, valid, refused;
};

/* Drop minimum, maximum and enum from every integer and number schema under `j`. */
static void strip_number_limits(json_t *j) {
    if (json_is_array(j)) {
        for (size_t i = 0; i < json_array_size(j); i++) {
            strip_number_limits(json_array_get(j, i));
        }
        return;
    }
    if (!json_is_object(j)) {
        return;
    }
    const char *type = json_string_value(json_object_get(j, "type"));
    if (type != NULL && (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0)) {
        json_object_del(j, "minimum");
        json_object_del(j, "maximum");
        json_object_del(j, "enum");
    }
    const char *key;
    json_t *v;
    json_object_foreach(j, key, v) {
        strip_number_limits(v);
    }
}

/* The pack as the grammar guarantees it: the same tools, arguments, JSON types and string enums,
 * without numeric limits (those are validation's, see docs/grammar.md). */
static struct pipit_toolset *load_shape(const char *path) {
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (j == NULL) {
        fail_msg("%s: %s", path, jerr.text);
    }
    strip_number_limits(j);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_non_null(text);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string(text, strlen(text), "shape", &ts, &err) != PIPIT_OK) {
        fail_msg("%s without number limits: %s", path, err.text);
    }
    free(text);
    return ts;
}

/* Constrained decodes with a random model: every call must parse and have the right shape (it
 * validates against the pack without its numeric limits); against the pack itself it validates
 * or is refused for a number out of its range, which is counted (validation's job, not the
 * grammar's). */
static void property_run(const char *model_path,
                         const char *pack,
                         enum pipit_call_syntax syn,
                         int seeds,
                         struct property_stats *st) {
    struct pipit_model *m = test_load_model(model_path);
    struct pipit_toolset *ts = load_pack(pack);
    struct pipit_toolset *shape = load_shape(pack);
    struct pipit_grammar *g = NULL;
    struct pipit_error err;
    /* short strings: a random model almost never closes a string by itself */
    struct pipit_grammar_params gp0 = pipit_grammar_default_params();
    gp0.syntax = syn;
    gp0.max_string_chars = 12;
    assert_int_equal(pipit_grammar_compile(ts, &gp0, &g, &err), PIPIT_OK);
    struct pipit_context *ctx = test_new_context(m, 1024);
    int32_t np;
    int32_t *p =
        test_tokens(m, "Tools: camera controls.\nUser: please do something\nAssistant:", &np);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_PERMANENT, p, np - 1), PIPIT_OK);
    enum {
        MAX = 256
    };
    int32_t out[MAX];
    for (int seed = 1; seed <= seeds; seed++) {
        struct pipit_sampler_params sp = pipit_sampler_default_params();
        sp.grammar = pipit_grammar_call(g);
        sp.temperature = 1.0f;
        sp.top_k = 0;
        sp.top_p = 1.0f;
        sp.seed = (uint32_t)seed;
        struct pipit_sampler *s = NULL;
        assert_int_equal(pipit_sampler_init(m, &sp, &s, &err), PIPIT_OK);
        /* the prompt's last token is decoded per seed, so each decode starts from logits */
        assert_int_equal(pipit_context_rewind(ctx), PIPIT_OK);
        assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, p + np - 1, 1),
                         PIPIT_OK);
        struct pipit_generate_params gp = pipit_generate_default_params();
        gp.max_tokens = MAX;
        int32_t n = 0;
        assert_int_equal(pipit_generate(ctx, s, &gp, out, &n), PIPIT_OK);
        st->decodes++;
        size_t cap = (size_t)n * 64 + 1, len = 0;
        char *text = malloc(cap);
        for (int32_t i = 0; i < n; i++) {
            int32_t k = pipit_token_piece(m, out[i], text + len, 63);
            assert_true(k >= 0);
            len += (size_t)k;
        }
        text[len] = '\0';
        struct pipit_call c;
        if (n >= MAX) {
            fail_msg("seed %d: no end after %d tokens: %s", seed, n, text);
        }
        if (pipit_call_parse(syn, text, &c, &err) != PIPIT_OK) {
            fail_msg("seed %d: %s\n%s", seed, err.text, text);
        }
        st->parsed++;
        struct pipit_arg_problem pr[4];
        size_t n_pr = 0;
        /* none() is the grammar's "none of these tools" outcome (docs/grammar.md), not a tool */
        bool none = pipit_call_is_none(NULL, &c);
        enum pipit_status vst =
            none ? PIPIT_OK
                 : pipit_toolset_validate_args(shape, c.name, c.args_json, strlen(c.args_json), pr,
                                               4, &n_pr);
        if (vst != PIPIT_OK) {
            fail_msg("seed %d: wrong shape: %s(%s): %s: %s", seed, c.name, c.args_json,
                     pipit_status_str(vst), n_pr > 0 ? pr[0].message : "");
        }
        st->shaped++;
        vst = none ? PIPIT_OK
                   : pipit_toolset_validate_args(ts, c.name, c.args_json, strlen(c.args_json), pr,
                                                 4, &n_pr);
        if (vst == PIPIT_OK) {
            st->valid++;
        } else if (vst == PIPIT_ERR_INVALID_ARGS && n_pr > 0 &&
                   (strstr(pr[0].message, "is below the minimum") != NULL ||
                    strstr(pr[0].message, "is above the maximum") != NULL ||
                    strstr(pr[0].message, "is not one of") != NULL)) {
            st->refused++;
        } else {
            fail_msg("seed %d: %s(%s): %s: %s", seed, c.name, c.args_json, pipit_status_str(vst),
                     n_pr > 0 ? pr[0].message : "");
        }
        pipit_call_clear(&c);
        free(text);
        pipit_sampler_free(s);
    }
    pipit_free(p);
    pipit_context_free(ctx);
    pipit_grammar_free(g);
    pipit_toolset_free(shape);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

static int property_seeds(void) {
    const char *env = getenv("PIPIT_PROPERTY_SEEDS");
    long v = env != NULL ? strtol(env, NULL, 10) : 200;
    return v > 0 && v < 100000 ? (int)v : 200;
}

static void run_property(const char *model, enum pipit_call_syntax syn, int seeds) {
    for (size_t p = 0; p < 2; p++) {
        struct property_stats st = {0};
        property_run(model, PACKS[p], syn, seeds, &st);
        print_message("%s, %s, %s syntax: %d decodes, %d parsed, %d of the right shape: %d valid, "
                      "%d with a number out of range (refused by validation)\n",
                      model, PACKS[p], pipit_call_syntax_str(syn), st.decodes, st.parsed, st.shaped,
                      st.valid, st.refused);
        assert_int_equal(st.shaped, st.decodes);
        assert_int_equal(st.valid + st.refused, st.decodes);
    }
}

static void test_property_spm(void **state) {
    (void)state;
    run_property(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, property_seeds());
    run_property(TEST_MODEL_SPM, PIPIT_SYNTAX_HERMES, property_seeds() / 4);
}

/* A quarter of the seeds at 151K: llama.cpp's grammar sampler costs ~1 s per decode there (four
 * fifths of this test's time at equal counts); the grammars are the same as at 32K, and
 * test-fastgrammar --property runs every seed at 151K through pipit's decoder. */
static void test_property_qwen2(void **state) {
    (void)state;
    run_property(TEST_MODEL_QWEN, PIPIT_SYNTAX_PIPIT, property_seeds() / 4);
    run_property(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES, property_seeds() / 16);
}

/* ============================================================================ real corpus */

#define REAL_DIR PIPIT_SOURCE_DIR "/tests/specs/real"

/* `v` as the grammars write JSON: ", " between members and items, ": " after keys. */
static void render_value(struct strbuf *b, const json_t *v) {
    if (json_is_object(v)) {
        strbuf_str(b, "{");
        const char *key;
        json_t *x;
        bool first = true;
        json_object_foreach((json_t *)v, key, x) {
            json_t *k = json_string(key);
            char *q = json_dumps(k, JSON_ENCODE_ANY);
            strbuf_printf(b, "%s%s: ", first ? "" : ", ", q);
            free(q);
            json_decref(k);
            render_value(b, x);
            first = false;
        }
        strbuf_str(b, "}");
    } else if (json_is_array(v)) {
        strbuf_str(b, "[");
        for (size_t i = 0; i < json_array_size(v); i++) {
            strbuf_str(b, i > 0 ? ", " : "");
            render_value(b, json_array_get(v, i));
        }
        strbuf_str(b, "]");
    } else if (json_is_real(v)) {
        char num[64];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(num, sizeof(num), "%.*g", prec, json_real_value(v));
            if (strtod(num, NULL) == json_real_value(v)) {
                break;
            }
        }
        strbuf_str(b, num);
    } else {
        char *q = json_dumps(v, JSON_ENCODE_ANY);
        strbuf_str(b, q);
        free(q);
    }
}

/* The call in `syn` as a constrained decode writes it (arguments in the order given). */
static char *render_call(enum pipit_call_syntax syn, const char *tool, const json_t *args) {
    struct strbuf b = {0};
    if (syn == PIPIT_SYNTAX_HERMES) {
        strbuf_printf(&b, "<tool_call>\n{\"name\": \"%s\", \"arguments\": ", tool);
        render_value(&b, args);
        strbuf_str(&b, "}\n</tool_call>");
        return strbuf_take(&b);
    }
    strbuf_printf(&b, "<call>%s(", tool);
    const char *key;
    json_t *x;
    bool first = true;
    json_object_foreach((json_t *)args, key, x) {
        bool ident = (key[0] < '0' || key[0] > '9') && key[0] != '\0';
        for (const char *p = key; *p != '\0' && ident; p++) {
            ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                    (*p >= '0' && *p <= '9') || *p == '_';
        }
        strbuf_str(&b, first ? "" : ", ");
        if (ident) {
            strbuf_str(&b, key);
        } else {
            json_t *k = json_string(key);
            char *q = json_dumps(k, JSON_ENCODE_ANY);
            strbuf_str(&b, q);
            free(q);
            json_decref(k);
        }
        strbuf_str(&b, "=");
        render_value(&b, x);
        first = false;
    }
    strbuf_str(&b, ")");
    return strbuf_take(&b);
}

/* Every call of the corpus, in both syntaxes, through the call grammar (llama.cpp's engine),
 * the parser and the validator: valid calls pass all three; an invalid call is refused by
 * the grammar when its case says "grammar", else the grammar takes it and validation refuses
 * it. */
static void test_real_corpus_grammar(void **state) {
    (void)state;
    struct pipit_model *m = test_load_vocab(TEST_MODEL_SPM);
    struct pipit_error err;
    DIR *dir = opendir(REAL_DIR);
    assert_non_null(dir);
    int checked = 0, by_grammar = 0, by_validation = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0 ||
            (len > 11 && strcmp(de->d_name + len - 11, ".cases.json") == 0)) {
            continue;
        }
        char spec[1024], cases_path[1024];
        snprintf(spec, sizeof(spec), "%s/%s", REAL_DIR, de->d_name);
        snprintf(cases_path, sizeof(cases_path), "%s/%.*s.cases.json", REAL_DIR, (int)(len - 5),
                 de->d_name);
        struct pipit_toolset *ts = load_pack(spec);
        json_error_t jerr;
        json_t *cases = json_load_file(cases_path, 0, &jerr);
        assert_non_null(cases);
        for (int syn = 0; syn < 2; syn++) {
            struct pipit_grammar *g = NULL;
            struct pipit_grammar_params gp = pipit_grammar_default_params();
            gp.syntax = (enum pipit_call_syntax)syn;
            assert_int_equal(pipit_grammar_compile(ts, &gp, &g, &err), PIPIT_OK);
            for (int k = 0; k < 2; k++) {
                const json_t *list = json_object_get(cases, k == 0 ? "valid" : "invalid");
                for (size_t i = 0; i < json_array_size(list); i++) {
                    const json_t *c = json_array_get(list, i);
                    const char *tool = json_string_value(json_array_get(c, 0));
                    bool grammar_refuses =
                        k == 1 && strcmp(json_string_value(json_array_get(c, 2)), "grammar") == 0;
                    char *text = render_call(gp.syntax, tool, json_array_get(c, 1));
                    bool prefix = false, complete = false;
                    assert_int_equal(
                        pipit_gbnf_match(m, pipit_grammar_call(g), text, &prefix, &complete),
                        PIPIT_OK);
                    if (complete == grammar_refuses) {
                        fail_msg("%s, %s syntax: the grammar %s\n%s", de->d_name,
                                 pipit_call_syntax_str(gp.syntax),
                                 complete ? "accepts a call it should refuse"
                                          : "refuses a call it should take",
                                 text);
                    }
                    /* what the grammar takes parses back to the same arguments and validates
                     * exactly when the case is valid */
                    if (complete) {
                        struct pipit_call call;
                        assert_int_equal(pipit_call_parse(gp.syntax, text, &call, &err), PIPIT_OK);
                        assert_string_equal(call.name, tool);
                        json_t *back = json_loads(call.args_json, 0, &jerr);
                        assert_true(json_equal(back, json_array_get(c, 1)));
                        json_decref(back);
                        enum pipit_status st = pipit_toolset_validate_args(
                            ts, tool, call.args_json, strlen(call.args_json), NULL, 0, NULL);
                        assert_int_equal(st, k == 0 ? PIPIT_OK : PIPIT_ERR_INVALID_ARGS);
                        pipit_call_clear(&call);
                    }
                    by_grammar += grammar_refuses;
                    by_validation += k == 1 && !grammar_refuses;
                    checked++;
                    free(text);
                }
            }
            pipit_grammar_free(g);
        }
        json_decref(cases);
        pipit_toolset_free(ts);
    }
    closedir(dir);
    print_message("real corpus: %d calls in both syntaxes; invalid ones refused by the grammar: "
                  "%d, by validation: %d\n",
                  checked, by_grammar, by_validation);
    assert_true(checked > 100);
    pipit_model_free(m);
}

/* ============================================================================ copied strings */

/* A pack with free strings: `to` and `body` are copied, `time` is composed (its example's
 * "06:00" shares no word with "wake me at 6am"), `mode` is an enum, the cloud tool's
 * strings stay free, and a name of words joined ("Q3-report" for "the Q3 report") or an
 * identifier said whole ("F-201") is copied. */
static const char COPY_PACK[] =
    "{\"pipit\": {\"pack\": \"copytest\"}, \"tools\": ["
    "{\"type\": \"function\", \"function\": {\"name\": \"send\", \"description\": \"Send a text\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {"
    "\"to\": {\"type\": \"string\"}, \"body\": {\"type\": \"string\"},"
    " \"mode\": {\"type\": \"string\", \"enum\": [\"sms\", \"chat\"]}},"
    " \"required\": [\"to\"]}}},"
    "{\"type\": \"function\", \"function\": {\"name\": \"alarm\", \"description\": \"Set an "
    "alarm\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"time\": {\"type\": \"string\"}},"
    " \"required\": [\"time\"]}}, \"pipit\": {\"examples\": [{\"say\": \"wake me at 6am\","
    " \"args\": {\"time\": \"06:00\"}}]}},"
    "{\"type\": \"function\", \"function\": {\"name\": \"process_with_cloud_llm\","
    " \"description\": \"Ask the cloud\", \"parameters\": {\"type\": \"object\", \"properties\": {"
    "\"user_query_context\": {\"type\": \"string\"}, \"reason_for_escalation\": {\"type\": "
    "\"string\"}}, \"required\": [\"user_query_context\"]}}},"
    "{\"type\": \"function\", \"function\": {\"name\": \"find\", \"description\": \"Find a "
    "file\", \"parameters\": {\"type\": \"object\", \"properties\": {\"name\": {\"type\": "
    "\"string\"}}, \"required\": [\"name\"]}}, \"pipit\": {\"examples\": [{\"say\": \"look for "
    "the Q3 report\", \"args\": {\"name\": \"Q3-report\"}}, {\"say\": \"find F-201\", "
    "\"args\": {\"name\": \"F-201\"}}]}}]}";

static bool both_match(struct pipit_model *m,
                       struct pipit_fastgrammar *fg,
                       const char *gbnf,
                       const char *text) {
    bool prefix = false, complete = false, fprefix = false, fcomplete = false;
    assert_int_equal(pipit_gbnf_match(m, gbnf, text, &prefix, &complete), PIPIT_OK);
    assert_int_equal(pipit_fastgrammar_match(fg, gbnf, text, &fprefix, &fcomplete), PIPIT_OK);
    assert_int_equal(complete, fcomplete); /* both decoders read the grammar alike */
    return complete;
}

static void test_copy_strings(void **state) {
    (void)state;
    struct pipit_model *m = test_load_vocab(TEST_MODEL_SPM);
    struct pipit_error err;
    struct pipit_fastgrammar *fg = NULL;
    assert_int_equal(pipit_fastgrammar_init(m, &fg, &err), PIPIT_OK);
    struct pipit_toolset *ts = test_tools_from(COPY_PACK, "copy");
    for (int syn = 0; syn < 2; syn++) {
        struct pipit_grammar_params gp = pipit_grammar_default_params();
        gp.syntax = syn == 0 ? PIPIT_SYNTAX_PIPIT : PIPIT_SYNTAX_HERMES;
        struct pipit_grammar *plain = NULL, *g = NULL;
        assert_int_equal(pipit_grammar_compile(ts, &gp, &plain, &err), PIPIT_OK);
        gp.copy_strings = true;
        assert_int_equal(pipit_grammar_compile(ts, &gp, &g, &err), PIPIT_OK);
        /* off: no rule to replace */
        const char *texts[] = {"text Alice Chen: running \"late\" a\"b, sorry",
                               "\nT-1001\nanswered \"how\"\n"};
        char *out = (char *)1;
        assert_int_equal(pipit_grammar_with_copy(pipit_grammar_args(plain, 0), texts, 2, &out),
                         PIPIT_OK);
        assert_null(out);
        /* on: until a turn's text comes, `copy` is any string */
        const char *send = pipit_grammar_args(g, 0);
        assert_non_null(strstr(send, "\ncopy ::= "));
        bool hermes = syn == 1;
        char call[256];
        snprintf(call, sizeof(call), hermes ? "{\"to\": \"%s\"}}\n</tool_call>" : "(to=\"%s\")",
                 "Zorblax");
        assert_true(both_match(m, fg, send, call));
        char *turn = NULL;
        assert_int_equal(pipit_grammar_with_copy(send, texts, 2, &turn), PIPIT_OK);
        assert_non_null(turn);
        int32_t states = 0;
        assert_int_equal(pipit_fastgrammar_check(turn, &states, &err), PIPIT_OK);
        struct {
            const char *value; /* as JSON string content */
            bool ok;
        } cases[] = {
            {"Alice Chen", true},
            {"Alice", false}, /* a span neither starts nor ends inside a name */
            {"Chen: running", false},
            {"Alice Chen: running", true}, /* the text between words is copied as written */
            {"running \\\"late", true},    /* a quote inside a span, JSON-escaped */
            {"late", true},                /* outer quotes never start or end a span */
            {"a\\\"b", true},              /* a quote inside a word */
            {"T-1001", true},              /* the memory's values */
            {"how", true},
            {"Zorblax", false},       /* not in the text: never written */
            {"Alice Chen ", false},   /* spans end at a word */
            {"sorry, T-1001", false}, /* nor cross texts or lines */
            {"text", false},          /* a function word neither starts nor ends one */
            {"text Alice", false},
            {"Alice Chen: running \\\"late\\\" a\\\"b, sorry", true},
            {"", false},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            snprintf(call, sizeof(call), hermes ? "{\"to\": \"%s\"}}\n</tool_call>" : "(to=\"%s\")",
                     cases[i].value);
            if (both_match(m, fg, turn, call) != cases[i].ok) {
                fail_msg("%s: %s should be %s", hermes ? "hermes" : "pipit", call,
                         cases[i].ok ? "accepted" : "refused");
            }
        }
        pipit_free(turn);
        /* a composed argument stays free, so does the cloud tool's reason; its question is
         * copied (bounded: the agent hands the cloud the person's words anyway) */
        const char *alarm = pipit_grammar_args(g, 1);
        assert_null(strstr(alarm, "copy"));
        assert_non_null(strstr(pipit_grammar_args(g, 3), "copy"));
        const char *cloud = pipit_grammar_args(g, 2);
        for (int k = 0; k < 2; k++) { /* the rest of each argument's line */
            const char *at = strstr(cloud, k == 0 ? "user_query_context" : "reason_for_escal");
            assert_non_null(at);
            const char *nl = strchr(at, '\n');
            const char *c = strstr(at, " copy");
            assert_true((c != NULL && (nl == NULL || c < nl)) == (k == 0));
        }
        /* only function words: every span is allowed rather than none */
        const char *few[] = {"to the"};
        assert_int_equal(pipit_grammar_with_copy(send, few, 1, &turn), PIPIT_OK);
        snprintf(call, sizeof(call), hermes ? "{\"to\": \"%s\"}}\n</tool_call>" : "(to=\"%s\")",
                 "the");
        assert_true(both_match(m, fg, turn, call));
        pipit_free(turn);
        /* no word at all: the grammar as it is */
        const char *none[] = {" , ", NULL};
        assert_int_equal(pipit_grammar_with_copy(send, none, 2, &turn), PIPIT_OK);
        assert_null(turn);
        /* the call grammar gets the same rule */
        assert_int_equal(pipit_grammar_with_copy(pipit_grammar_call(g), texts, 2, &turn), PIPIT_OK);
        assert_non_null(turn);
        pipit_free(turn);
        pipit_grammar_free(plain);
        pipit_grammar_free(g);
    }
    /* bad arguments */
    char *out = NULL;
    assert_int_equal(pipit_grammar_with_copy(NULL, NULL, 0, &out), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_grammar_with_copy("root ::= \"a\"\n", NULL, 1, &out),
                     PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_grammar_with_copy("root ::= \"a\"\n", NULL, 0, NULL),
                     PIPIT_ERR_INVALID_ARG);
    pipit_toolset_free(ts);
    pipit_fastgrammar_free(fg);
    pipit_model_free(m);
}

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_compile_packs),
        cmocka_unit_test(test_parse_pipit_syntax),
        cmocka_unit_test(test_parse_hermes_syntax),
    };
    const struct CMUnitTest model[] = {
        cmocka_unit_test(test_grammars_load_in_llama),
        cmocka_unit_test(test_numbers_are_shape_not_range),
        cmocka_unit_test(test_real_corpus_grammar),
        cmocka_unit_test(test_exact_values),
        cmocka_unit_test(test_copy_strings),
    };
    const struct CMUnitTest property[] = {
        cmocka_unit_test(test_property_spm),
        cmocka_unit_test(test_property_qwen2),
    };
    if (getenv("PIPIT_TEST_FILTER") != NULL) { /* one case while working on it */
        cmocka_set_test_filter(getenv("PIPIT_TEST_FILTER"));
    }
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        return cmocka_run_group_tests(model, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--property") == 0) {
        return cmocka_run_group_tests(property, NULL, NULL);
    }
    return cmocka_run_group_tests(unit, NULL, NULL);
}
