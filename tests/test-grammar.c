/*
 * test-grammar.c - tool set -> GBNF, and model output -> calls.
 *
 *   test-grammar             unit: compile both packs in both syntaxes, parse calls
 *   test-grammar --model     the grammars on llama.cpp's grammar engine: they parse, their
 *                            number and integer ranges are exact (a sweep against the validator)
 *   test-grammar --property  constrained decodes with random tiny models (32K and 151K
 *                            vocabularies), 200 seeds per pack and vocabulary: every call parses
 *                            and validates (the Hermes syntax: a quarter of the seeds)
 */
#include "testutil.h"
#include "toolspec.h"

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
    assert_true(pipit_call_detect(P, "ok <call>x()"));
    assert_false(pipit_call_detect(P, "I turned on the flash"));

    expect_parse_error(P, "I turned on the flash", "no <call>", 0);
    expect_parse_error(P, "<call>", "expected a tool name", 7);
    expect_parse_error(P, "<call>set_zoom level=2", "expected '('", 15);
    expect_parse_error(P, "<call>set_zoom(level 2)", "expected '='", 22);
    expect_parse_error(P, "<call>set_zoom(level=)", "expected a JSON value", 22);
    expect_parse_error(P, "<call>set_zoom(level=2", "expected ',' or ')'", 23);
    expect_parse_error(P, "<call>set_zoom(level=2) and more", "unexpected text", 25);
    expect_parse_error(P, "<call>set_zoom(level=2, level=3)", "duplicate argument", 26);
    expect_parse_error(P, "<call>set_zoom(=2)", "expected an argument name", 16);
    expect_parse_error(P, "<call>9zoom()", "expected a tool name", 7);
    expect_parse_error(P, "line one\n<call>set_zoom(", "expected an argument name", 16);
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
}

/* ============================================================================ model */

static void test_grammars_load_in_llama(void **state) {
    (void)state;
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_model *m = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_model_load(TEST_MODEL_SPM, &mp, &m, &err), PIPIT_OK);
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

/* The argument grammar of `tool` accepts exactly the values the validator accepts. Values are
 * written with `decimals` fractional digits, or with %g when negative. With 1 decimal the check
 * is one-way (grammar => validator): "5.0" is a valid integer the grammar does not spell. */
static void sweep_numbers(struct pipit_model *m,
                          struct pipit_toolset *ts,
                          struct pipit_grammar *g,
                          const char *tool,
                          const char *arg,
                          double from,
                          double to,
                          double step,
                          int decimals,
                          const char *more) {
    int32_t idx = pipit_toolset_find(ts, tool);
    assert_true(idx >= 0);
    const char *gbnf = pipit_grammar_args(g, (size_t)idx);
    int n_accepted = 0;
    for (double v = from; v <= to + 1e-9; v += step) {
        char num[64], text[256], args[256];
        if (decimals >= 0) {
            snprintf(num, sizeof(num), "%.*f", decimals, v);
        } else {
            snprintf(num, sizeof(num), "%g", v);
        }
        /* `more`: another argument "name=value"; a leading '<' puts it before this one */
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
        bool prefix = false, complete = false;
        assert_int_equal(pipit_gbnf_match(m, gbnf, text, &prefix, &complete), PIPIT_OK);
        size_t n_problems = 0;
        struct pipit_arg_problem pr[4];
        enum pipit_status vst =
            pipit_toolset_validate_args(ts, tool, args, strlen(args), pr, 4, &n_problems);
        bool valid = vst == PIPIT_OK;
        /* the grammar never allows an invalid value; where `more` is NULL and the spelling is
         * canonical, it allows every valid one too */
        if (complete != valid && (complete || decimals != 1)) {
            fail_msg("%s %s: grammar says %d, validator says %d (%s)", tool, text, complete, valid,
                     n_problems > 0 ? pr[0].message : "");
        }
        n_accepted += complete;
    }
    assert_true(n_accepted > 0 || decimals == 1);
}

static void test_ranges_are_exact(void **state) {
    (void)state;
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_model *m = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_model_load(TEST_MODEL_SPM, &mp, &m, &err), PIPIT_OK);
    struct pipit_toolset *ts = load_pack(PACKS[0]);
    struct pipit_grammar *g = NULL;
    assert_int_equal(pipit_grammar_compile(ts, NULL, &g, &err), PIPIT_OK);

    sweep_numbers(m, ts, g, "set_zoom", "level", 0.0, 11.0, 0.05, 2, NULL);
    sweep_numbers(m, ts, g, "set_zoom", "level", 0.0, 11.0, 0.5, -1, NULL);
    sweep_numbers(m, ts, g, "set_exposure", "ev", -3.0, 3.0, 0.125, 3, NULL);
    sweep_numbers(m, ts, g, "set_exposure", "ev", -3.0, 3.0, 0.25, -1, NULL);
    sweep_numbers(m, ts, g, "tap_to_focus", "x", -0.5, 1.5, 0.01, 2, "y=0.5");
    sweep_numbers(m, ts, g, "set_jpeg_quality", "quality", 0, 120, 1, 0, NULL);
    sweep_numbers(m, ts, g, "set_timer", "seconds", 0, 12, 1, 0, NULL);

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
    sweep_numbers(m, ts2, g2, "t", "i", -40, 1300, 1, 0, NULL);
    /* "5.0" validates as an integer but is not the grammar's spelling: one-way check */
    sweep_numbers(m, ts2, g2, "t", "i", -40, 1300, 7, 1, NULL);
    sweep_numbers(m, ts2, g2, "t", "n", -1, 1001, 0.37, 2, "<i=3");
    sweep_numbers(m, ts2, g2, "t", "n", -1, 2, 0.001, 3, "<i=3");
    pipit_grammar_free(g2);
    pipit_toolset_free(ts2);

    /* spellings the grammar refuses even though the value would be in range */
    int32_t zoom = pipit_toolset_find(ts, "set_zoom");
    const char *bad[] = {"(level=02)", "(level=2.)",  "(level=2.1234)", "(level= 2)",
                         "(level=+2)", "(level=2e0)", "(level=-0)",     "(level=.5)"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        bool prefix = false, complete = false;
        assert_int_equal(
            pipit_gbnf_match(m, pipit_grammar_args(g, (size_t)zoom), bad[i], &prefix, &complete),
            PIPIT_OK);
        if (complete) {
            fail_msg("grammar accepts %s", bad[i]);
        }
    }
    /* the whole-call grammar: trigger, then one known tool */
    bool prefix = false, complete = false;
    assert_int_equal(
        pipit_gbnf_match(m, pipit_grammar_call(g), "<call>set_zoom(level=2)", &prefix, &complete),
        PIPIT_OK);
    assert_true(complete);
    assert_int_equal(
        pipit_gbnf_match(m, pipit_grammar_call(g), "<call>set_zoom(level=2", &prefix, &complete),
        PIPIT_OK);
    assert_true(prefix);
    assert_false(complete);
    assert_int_equal(
        pipit_gbnf_match(m, pipit_grammar_call(g), "<call>fly_away()", &prefix, &complete),
        PIPIT_OK);
    assert_false(prefix);
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* ============================================================================ property */

struct property_stats {
    int decodes, parsed, valid;
};

/* Constrained decodes with a random model: every call must parse and validate. */
static void property_run(const char *model_path,
                         const char *pack,
                         enum pipit_call_syntax syn,
                         int seeds,
                         struct property_stats *st) {
    struct pipit_model *m = test_load_model(model_path);
    struct pipit_toolset *ts = load_pack(pack);
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
        enum pipit_status vst =
            pipit_toolset_validate_args(ts, c.name, c.args_json, strlen(c.args_json), pr, 4, &n_pr);
        if (vst != PIPIT_OK) {
            fail_msg("seed %d: %s(%s): %s: %s", seed, c.name, c.args_json, pipit_status_str(vst),
                     n_pr > 0 ? pr[0].message : "");
        }
        st->valid++;
        pipit_call_clear(&c);
        free(text);
        pipit_sampler_free(s);
    }
    pipit_free(p);
    pipit_context_free(ctx);
    pipit_grammar_free(g);
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
        print_message("%s, %s, %s syntax: %d decodes, %d parsed, %d valid\n", model, PACKS[p],
                      pipit_call_syntax_str(syn), st.decodes, st.parsed, st.valid);
        assert_int_equal(st.valid, st.decodes);
    }
}

static void test_property_spm(void **state) {
    (void)state;
    run_property(TEST_MODEL_SPM, PIPIT_SYNTAX_PIPIT, property_seeds());
    run_property(TEST_MODEL_SPM, PIPIT_SYNTAX_HERMES, property_seeds() / 4);
}

static void test_property_qwen2(void **state) {
    (void)state;
    run_property(TEST_MODEL_QWEN, PIPIT_SYNTAX_PIPIT, property_seeds());
    run_property(TEST_MODEL_QWEN, PIPIT_SYNTAX_HERMES, property_seeds() / 4);
}

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_compile_packs),
        cmocka_unit_test(test_parse_pipit_syntax),
        cmocka_unit_test(test_parse_hermes_syntax),
    };
    const struct CMUnitTest model[] = {
        cmocka_unit_test(test_grammars_load_in_llama),
        cmocka_unit_test(test_ranges_are_exact),
    };
    const struct CMUnitTest property[] = {
        cmocka_unit_test(test_property_spm),
        cmocka_unit_test(test_property_qwen2),
    };
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        return cmocka_run_group_tests(model, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--property") == 0) {
        return cmocka_run_group_tests(property, NULL, NULL);
    }
    return cmocka_run_group_tests(unit, NULL, NULL);
}
