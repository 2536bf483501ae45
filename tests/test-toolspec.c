/*
 * test-toolspec.c - tool specifications: the camera and phone packs, the bad
 * spec corpus (file:line:column, JSON path, message), argument validation,
 * the four serializations, templates and undo.
 *
 * `test-toolspec` runs the unit cases; `test-toolspec --tokens` runs the cases
 * that need the test models (token counts with the llama-spm and qwen2
 * tokenizers, `pipit tools inspect --json`).
 */
#include "pattern.h"
#include "testutil.h"
#include "toolspec.h"

#include <dirent.h>
#include <jansson.h>

#define CAMERA_PACK PIPIT_SOURCE_DIR "/tools/camera.json"
#define PHONE_PACK  PIPIT_SOURCE_DIR "/tools/phone.json"
#define BAD_DIR     PIPIT_SOURCE_DIR "/tests/specs/bad"
#define AQUARIUM    PIPIT_SOURCE_DIR "/tests/specs/packs/aquarium.json"

static struct pipit_toolset *load_pack(const char *path) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    enum pipit_status st = pipit_toolset_load_file(path, &ts, &err);
    if (st != PIPIT_OK) {
        fail_msg("cannot load %s: %s", path, err.text);
    }
    return ts;
}

static struct pipit_toolset *load_text(const char *text) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string(text, strlen(text), "inline.json", &ts, &err) != PIPIT_OK) {
        fail_msg("cannot load inline spec: %s", err.text);
    }
    return ts;
}

/* ============================================================================
 * the packs */

static const char *const CAMERA_TOOLS[] = {
    "take_photo",        "record_video",     "set_zoom",
    "adjust_zoom",       "set_flash",        "tap_to_focus",
    "set_ae_af_lock",    "set_exposure",     "set_white_balance",
    "set_timer",         "set_aspect_ratio", "set_quality_priority",
    "set_scene_mode",    "set_jpeg_quality", "set_grid",
    "set_horizon_level", "switch_camera",    "process_with_cloud_llm"};

static const struct pipit_schema *param(const struct pipit_tool *t, const char *name) {
    for (size_t i = 0; i < t->params->n_props; i++) {
        if (strcmp(t->params->props[i].name, name) == 0) {
            return t->params->props[i].schema;
        }
    }
    fail_msg("%s has no argument %s", t->name, name);
    return NULL;
}

static void expect_string_enum(const struct pipit_schema *s, const char *const *values, size_t n) {
    assert_int_equal(s->type, PIPIT_SCHEMA_STRING);
    assert_int_equal(s->n_enum, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(s->enum_str[i], values[i]);
    }
}

static void
expect_range(const struct pipit_schema *s, enum pipit_schema_type type, double min, double max) {
    assert_int_equal(s->type, type);
    assert_true(s->has_min && s->has_max);
    assert_true(s->min == min && s->max == max);
}

static void test_camera_pack_contract(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_pack(CAMERA_PACK);
    size_t n = sizeof(CAMERA_TOOLS) / sizeof(CAMERA_TOOLS[0]);
    assert_int_equal(pipit_toolset_n_tools(ts), n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(pipit_toolset_tool_name(ts, i), CAMERA_TOOLS[i]);
        assert_int_equal(pipit_toolset_find(ts, CAMERA_TOOLS[i]), (int32_t)i);
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t k = 0; k < t->params->n_props; k++) {
            assert_true(t->params->props[k].required); /* all camera arguments are required */
        }
        assert_non_null(strstr(pipit_toolset_failure_template(ts, i, "no_such_code"), "{error}"));
    }
    assert_null(pipit_toolset_tool_name(ts, n));
    assert_int_equal(pipit_toolset_find(ts, "set_zoom_level"), -1);

    const struct pipit_tool *t = pipit_toolset_tool(ts, 0);
    assert_int_equal(t->params->n_props, 0);
    static const char *const start_stop[] = {"start", "stop"};
    expect_string_enum(param(pipit_toolset_tool(ts, 1), "action"), start_stop, 2);
    expect_range(param(pipit_toolset_tool(ts, 2), "level"), PIPIT_SCHEMA_NUMBER, 0.5, 10);
    static const char *const in_out[] = {"in", "out"};
    expect_string_enum(param(pipit_toolset_tool(ts, 3), "direction"), in_out, 2);
    static const char *const flash[] = {"off", "on", "auto"};
    expect_string_enum(param(pipit_toolset_tool(ts, 4), "mode"), flash, 3);
    expect_range(param(pipit_toolset_tool(ts, 5), "x"), PIPIT_SCHEMA_NUMBER, 0, 1);
    expect_range(param(pipit_toolset_tool(ts, 5), "y"), PIPIT_SCHEMA_NUMBER, 0, 1);
    assert_int_equal(param(pipit_toolset_tool(ts, 6), "locked")->type, PIPIT_SCHEMA_BOOLEAN);
    expect_range(param(pipit_toolset_tool(ts, 7), "ev"), PIPIT_SCHEMA_NUMBER, -2, 2);
    static const char *const wb[] = {"auto", "daylight", "cloudy", "tungsten", "fluorescent"};
    expect_string_enum(param(pipit_toolset_tool(ts, 8), "mode"), wb, 5);
    const struct pipit_schema *timer = param(pipit_toolset_tool(ts, 9), "seconds");
    assert_int_equal(timer->type, PIPIT_SCHEMA_INTEGER);
    assert_int_equal(timer->n_enum, 4);
    assert_true(timer->enum_num[0] == 0 && timer->enum_num[1] == 3 && timer->enum_num[2] == 5 &&
                timer->enum_num[3] == 10);
    static const char *const ratio[] = {"4:3", "16:9", "1:1", "full"};
    expect_string_enum(param(pipit_toolset_tool(ts, 10), "ratio"), ratio, 4);
    static const char *const prio[] = {"speed", "quality"};
    expect_string_enum(param(pipit_toolset_tool(ts, 11), "priority"), prio, 2);
    static const char *const scene[] = {"auto",   "portrait", "night", "landscape",
                                        "sports", "macro",    "food"};
    expect_string_enum(param(pipit_toolset_tool(ts, 12), "mode"), scene, 7);
    expect_range(param(pipit_toolset_tool(ts, 13), "quality"), PIPIT_SCHEMA_INTEGER, 50, 100);
    assert_int_equal(param(pipit_toolset_tool(ts, 14), "enabled")->type, PIPIT_SCHEMA_BOOLEAN);
    assert_int_equal(param(pipit_toolset_tool(ts, 15), "enabled")->type, PIPIT_SCHEMA_BOOLEAN);
    static const char *const facing[] = {"front", "back"};
    expect_string_enum(param(pipit_toolset_tool(ts, 16), "facing"), facing, 2);
    assert_int_equal(param(pipit_toolset_tool(ts, 17), "user_query_context")->type,
                     PIPIT_SCHEMA_STRING);
    assert_int_equal(param(pipit_toolset_tool(ts, 17), "reason_for_escalation")->type,
                     PIPIT_SCHEMA_STRING);

    /* templates */
    assert_string_equal(pipit_toolset_success_template(ts, 2), "The zoom is {level}x.");
    assert_string_equal(pipit_toolset_failure_template(ts, 2, "zoom_out_of_range"),
                        "I can't zoom to {level}x: {error}.");
    assert_string_equal(pipit_toolset_failure_template(ts, 2, "something_else"),
                        "I couldn't change the zoom: {error}.");
    assert_string_equal(pipit_toolset_failure_template(ts, 4, "no_flash_on_front_camera"),
                        "The front camera has no flash.");
    assert_string_equal(pipit_toolset_failure_template(ts, 17, "cloud_timeout"),
                        "The cloud assistant took too long to answer. Please try again.");
    assert_null(pipit_toolset_success_template(ts, 99));

    /* undo */
    const char *const *keys = NULL;
    size_t nk = 99;
    assert_int_equal(pipit_toolset_undo(ts, 0, &keys, &nk), PIPIT_UNDO_IMPOSSIBLE);
    assert_null(keys);
    assert_int_equal(nk, 0);
    assert_int_equal(pipit_toolset_undo(ts, 1, NULL, NULL), PIPIT_UNDO_IMPOSSIBLE);
    assert_int_equal(pipit_toolset_undo(ts, 5, &keys, &nk), PIPIT_UNDO_KEYS);
    assert_int_equal(nk, 2);
    assert_string_equal(keys[0], "focus_x");
    assert_string_equal(keys[1], "focus_y");
    assert_int_equal(pipit_toolset_undo(ts, 9, &keys, &nk), PIPIT_UNDO_KEYS);
    assert_string_equal(keys[0], "timer_s");
    assert_int_equal(pipit_toolset_undo(ts, 17, &keys, &nk), PIPIT_UNDO_NO_STATE);
    pipit_toolset_free(ts);
}

static void test_phone_pack_loads(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_pack(PHONE_PACK);
    assert_int_equal(pipit_toolset_n_tools(ts), 19);
    int32_t i = pipit_toolset_find(ts, "read_messages");
    assert_true(i >= 0);
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)i);
    assert_false(t->params->props[0].required); /* thread_id? */
    i = pipit_toolset_find(ts, "send_message");
    assert_string_equal(pipit_toolset_failure_template(ts, (size_t)i, "unknown_recipient"),
                        "I couldn't find {recipient} in your contacts.");
    assert_true(pipit_toolset_find(ts, "process_with_cloud_llm") >= 0);
    pipit_toolset_free(ts);
}

/* ============================================================================
 * bad specs */

static char *trimmed_file(const char *path) {
    size_t n;
    char *s = (char *)test_read_file(path, &n);
    s[n] = '\0';
    while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) {
        s[--n] = '\0';
    }
    return s;
}

static void test_bad_spec_corpus(void **state) {
    (void)state;
    DIR *dir = opendir(BAD_DIR);
    assert_non_null(dir);
    int checked = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) {
            continue;
        }
        char spec[1024], expected[1024];
        snprintf(spec, sizeof(spec), "%s/%s", BAD_DIR, de->d_name);
        snprintf(expected, sizeof(expected), "%s/%.*s.expected", BAD_DIR, (int)(len - 5),
                 de->d_name);
        char *want = trimmed_file(expected);
        struct pipit_toolset *ts = (struct pipit_toolset *)(uintptr_t)1;
        struct pipit_error err;
        enum pipit_status st = pipit_toolset_load_file(spec, &ts, &err);
        if (st != PIPIT_ERR_SPEC || strstr(err.text, want) == NULL || err.line <= 0 ||
            err.column <= 0 || err.offset < 0) {
            fail_msg("%s: status %d, line %d, column %d\n  got:      %s\n  expected: %s",
                     de->d_name, (int)st, (int)err.line, (int)err.column, err.text, want);
        }
        assert_null(ts);
        assert_int_equal(err.status, PIPIT_ERR_SPEC);
        /* the message starts with the file name as given */
        assert_memory_equal(err.text, spec, strlen(spec));
        free(want);
        checked++;
    }
    closedir(dir);
    assert_true(checked >= 20);
}

static void test_load_errors(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file("/nonexistent/tools.json", &ts, &err), PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, "/nonexistent/tools.json"));
    assert_null(ts);
    assert_int_equal(pipit_toolset_load_file(NULL, &ts, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_toolset_load_string("[]", 2, NULL, NULL, &err), PIPIT_ERR_INVALID_ARG);
    pipit_toolset_free(NULL);

    /* the caller's name appears in messages; NULL err is fine */
    const char *bad = "[\n  {\"type\": \"function\", \"function\": {\"name\": \"a b\", "
                      "\"description\": \"x\"}}\n]";
    assert_int_equal(pipit_toolset_load_string(bad, strlen(bad), "my-tools", &ts, &err),
                     PIPIT_ERR_SPEC);
    assert_string_equal(err.text, "my-tools:2:45: $[0].function.name: tool name \"a b\" must "
                                  "match [a-zA-Z0-9_.-]+");
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 45);
    assert_int_equal(err.offset, 2 + 44);
    assert_int_equal(pipit_toolset_load_string(bad, strlen(bad), NULL, &ts, NULL), PIPIT_ERR_SPEC);

    /* columns count characters, not bytes */
    const char *utf8 = "[{\"type\": \"function\", \"function\": {\"name\": \"t\", \"description\": "
                       "\"caf\xc3\xa9\", \"parameters\": {\"type\": \"integer\"}}}]";
    assert_int_equal(pipit_toolset_load_string(utf8, strlen(utf8), "u.json", &ts, &err),
                     PIPIT_ERR_SPEC);
    assert_non_null(strstr(err.text, "u.json:1:95: $[0].function.parameters.type: parameters "
                                     "must be of type object, got integer"));

    /* size limits: more than 1 MiB, more than 64 tools */
    size_t big = PIPIT_TOOLSPEC_MAX_FILE_BYTES + 1;
    char *huge = malloc(big + 1);
    assert_non_null(huge);
    memset(huge, ' ', big);
    huge[0] = '[';
    huge[big - 1] = ']';
    huge[big] = '\0';
    assert_int_equal(pipit_toolset_load_string(huge, big, "huge.json", &ts, &err), PIPIT_ERR_SPEC);
    assert_non_null(strstr(err.text, "huge.json: specification is 1048577 bytes"));
    free(huge);

    char *many = malloc(65 * 128 + 16);
    assert_non_null(many);
    size_t off = 0;
    many[off++] = '[';
    for (int i = 0; i < 65; i++) {
        off += (size_t)snprintf(many + off, 128,
                                "%s{\"type\":\"function\",\"function\":{\"name\":"
                                "\"t%d\",\"description\":\"d\"}}",
                                i > 0 ? "," : "", i);
    }
    many[off++] = ']';
    many[off] = '\0';
    assert_int_equal(pipit_toolset_load_string(many, off, "many.json", &ts, &err), PIPIT_ERR_SPEC);
    assert_string_equal(err.text, "many.json:1:1: $: expected 1..64 tools, got 65");
    free(many);
}

/* ============================================================================
 * argument validation */

static const char *NESTED_SPEC =
    "[{\"type\": \"function\", \"function\": {\"name\": \"post\", \"description\": \"Post\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {"
    "  \"title\": {\"type\": \"string\", \"maxLength\": 5},"
    "  \"tags\": {\"type\": \"array\", \"maxItems\": 2, \"items\": {\"type\": \"string\","
    "             \"enum\": [\"a\", \"b\"]}},"
    "  \"opts\": {\"type\": \"object\", \"properties\": {"
    "      \"mode\": {\"type\": \"string\", \"enum\": [\"x\", \"y\"]},"
    "      \"level\": {\"type\": \"integer\", \"minimum\": 1}},"
    "     \"required\": [\"mode\"], \"additionalProperties\": false},"
    "  \"count\": {\"type\": \"integer\"}},"
    " \"required\": [\"title\"]}}}]";

struct args_case {
    const char *tool;
    const char *args;
    enum pipit_status status;
    const char *path;    /* first problem */
    const char *message; /* first problem */
};

static void check_args(const struct pipit_toolset *ts, const struct args_case *c) {
    struct pipit_arg_problem problems[4];
    size_t n = 99;
    enum pipit_status st =
        pipit_toolset_validate_args(ts, c->tool, c->args, strlen(c->args), problems, 4, &n);
    if (st != c->status) {
        fail_msg("%s(%s): status %d, expected %d (%s: %s)", c->tool, c->args, (int)st,
                 (int)c->status, n > 0 ? problems[0].path : "", n > 0 ? problems[0].message : "");
    }
    if (c->path == NULL) {
        assert_int_equal(n, 0);
        return;
    }
    assert_true(n >= 1);
    if (strcmp(problems[0].path, c->path) != 0 || strcmp(problems[0].message, c->message) != 0) {
        fail_msg("%s(%s):\n  got      %s: %s\n  expected %s: %s", c->tool, c->args,
                 problems[0].path, problems[0].message, c->path, c->message);
    }
}

static void test_validate_args(void **state) {
    (void)state;
    struct pipit_toolset *cam = load_pack(CAMERA_PACK);
    static const struct args_case cases[] = {
        {"set_zoom", "{\"level\": 2}", PIPIT_OK, NULL, NULL},
        {"set_zoom", "{\"level\": 0.5}", PIPIT_OK, NULL, NULL},
        {"set_zoom", "{\"level\": 20}", PIPIT_ERR_INVALID_ARGS, "args.level",
         "20 is above the maximum 10"},
        {"set_zoom", "{\"level\": 0.25}", PIPIT_ERR_INVALID_ARGS, "args.level",
         "0.25 is below the minimum 0.5"},
        {"set_zoom", "{\"level\": \"2x\"}", PIPIT_ERR_INVALID_ARGS, "args.level",
         "expected a number, got string"},
        {"set_zoom", "{}", PIPIT_ERR_INVALID_ARGS, "args.level", "required argument is missing"},
        {"set_zoom", "{\"level\": 2, \"speed\": 1}", PIPIT_ERR_INVALID_ARGS, "args.speed",
         "unknown argument \"speed\""},
        {"set_zoom", "[2]", PIPIT_ERR_INVALID_ARGS, "args", "expected an object, got array"},
        {"set_flash", "{\"mode\": \"auto\"}", PIPIT_OK, NULL, NULL},
        {"set_flash", "{\"mode\": \"strobe\"}", PIPIT_ERR_INVALID_ARGS, "args.mode",
         "\"strobe\" is not one of \"off\"|\"on\"|\"auto\""},
        {"set_flash", "{\"mode\": true}", PIPIT_ERR_INVALID_ARGS, "args.mode",
         "expected a string, got boolean"},
        {"set_grid", "{\"enabled\": \"yes\"}", PIPIT_ERR_INVALID_ARGS, "args.enabled",
         "expected a boolean, got string"},
        {"set_timer", "{\"seconds\": 3}", PIPIT_OK, NULL, NULL},
        {"set_timer", "{\"seconds\": 3.0}", PIPIT_OK, NULL, NULL}, /* integral number: accepted */
        {"set_timer", "{\"seconds\": 4}", PIPIT_ERR_INVALID_ARGS, "args.seconds",
         "4 is not one of 0|3|5|10"},
        {"set_timer", "{\"seconds\": 2.5}", PIPIT_ERR_INVALID_ARGS, "args.seconds",
         "2.5 is not an integer"},
        {"set_jpeg_quality", "{\"quality\": 90}", PIPIT_OK, NULL, NULL},
        {"set_jpeg_quality", "{\"quality\": 49}", PIPIT_ERR_INVALID_ARGS, "args.quality",
         "49 is below the minimum 50"},
        {"set_jpeg_quality", "{\"quality\": 80.5}", PIPIT_ERR_INVALID_ARGS, "args.quality",
         "80.5 is not an integer"},
        {"set_jpeg_quality", "{\"quality\": null}", PIPIT_ERR_INVALID_ARGS, "args.quality",
         "expected an integer, got null"},
        {"take_photo", "{}", PIPIT_OK, NULL, NULL},
        {"take_photo", "{\"now\": true}", PIPIT_ERR_INVALID_ARGS, "args.now",
         "unknown argument \"now\""},
        {"set_zoom", "{\"level\": ", PIPIT_ERR_JSON, "args", NULL},
        {"zoom", "{}", PIPIT_ERR_UNKNOWN_TOOL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (cases[i].status == PIPIT_ERR_JSON) {
            struct pipit_arg_problem p[1];
            size_t n = 0;
            assert_int_equal(pipit_toolset_validate_args(cam, cases[i].tool, cases[i].args,
                                                         strlen(cases[i].args), p, 1, &n),
                             PIPIT_ERR_JSON);
            assert_int_equal(n, 1);
            assert_string_equal(p[0].path, "args");
            assert_non_null(strstr(p[0].message, "invalid JSON"));
            continue;
        }
        check_args(cam, &cases[i]);
    }
    /* problems == NULL with max 0: only the verdict */
    assert_int_equal(pipit_toolset_validate_args(cam, "set_zoom", "{}", 2, NULL, 0, NULL),
                     PIPIT_ERR_INVALID_ARGS);
    pipit_toolset_free(cam);

    struct pipit_toolset *ts = load_text(NESTED_SPEC);
    static const struct args_case nested[] = {
        {"post",
         "{\"title\": \"hi\", \"tags\": [\"a\", \"b\"], \"opts\": {\"mode\": \"x\", "
         "\"level\": 2}, \"count\": 1}",
         PIPIT_OK, NULL, NULL},
        {"post", "{\"title\": \"h\\u00e9llo\"}", PIPIT_OK, NULL, NULL}, /* 5 characters */
        {"post", "{\"title\": \"hello!\"}", PIPIT_ERR_INVALID_ARGS, "args.title",
         "is 6 characters long, above the maximum 5"},
        {"post", "{\"title\": \"t\", \"tags\": [\"a\", \"b\", \"a\"]}", PIPIT_ERR_INVALID_ARGS,
         "args.tags", "has 3 items, above the maximum 2"},
        {"post", "{\"title\": \"t\", \"tags\": [\"a\", \"c\"]}", PIPIT_ERR_INVALID_ARGS,
         "args.tags[1]", "\"c\" is not one of \"a\"|\"b\""},
        {"post", "{\"title\": \"t\", \"tags\": \"a\"}", PIPIT_ERR_INVALID_ARGS, "args.tags",
         "expected an array, got string"},
        {"post", "{\"title\": \"t\", \"opts\": {\"level\": 0}}", PIPIT_ERR_INVALID_ARGS,
         "args.opts.mode", "required argument is missing"},
        {"post", "{\"title\": \"t\", \"opts\": {\"mode\": \"x\", \"level\": 0}}",
         PIPIT_ERR_INVALID_ARGS, "args.opts.level", "0 is below the minimum 1"},
        {"post", "{\"title\": \"t\", \"opts\": {\"mode\": \"x\", \"x y\": 0}}",
         PIPIT_ERR_INVALID_ARGS, "args.opts[\"x y\"]", "unknown argument \"x y\""},
        {"post", "{\"title\": \"t\", \"opts\": 3}", PIPIT_ERR_INVALID_ARGS, "args.opts",
         "expected an object, got number"},
        {"post", "{\"title\": \"t\", \"count\": 9007199254740993.5}", PIPIT_ERR_INVALID_ARGS,
         "args.count", "9007199254740994 is not an integer"},
    };
    for (size_t i = 0; i < sizeof(nested) / sizeof(nested[0]); i++) {
        check_args(ts, &nested[i]);
    }
    /* several problems are all reported, in order; the list is capped */
    struct pipit_arg_problem p[8];
    size_t n = 0;
    const char *many = "{\"tags\": [\"z\"], \"opts\": {}, \"extra\": 1}";
    assert_int_equal(pipit_toolset_validate_args(ts, "post", many, strlen(many), p, 8, &n),
                     PIPIT_ERR_INVALID_ARGS);
    assert_int_equal(n, 4);
    assert_string_equal(p[0].path, "args.extra");
    assert_string_equal(p[1].path, "args.title");
    assert_string_equal(p[2].path, "args.tags[0]");
    assert_string_equal(p[3].path, "args.opts.mode");
    assert_int_equal(pipit_toolset_validate_args(ts, "post", many, strlen(many), p, 2, &n),
                     PIPIT_ERR_INVALID_ARGS);
    assert_int_equal(n, 2);

    /* the internal entry point works on parsed JSON */
    json_t *args = json_pack("{s:s}", "title", "ok");
    assert_int_equal(pipit_tool_check_args(pipit_toolset_tool(ts, 0), args, NULL, 0, NULL),
                     PIPIT_OK);
    json_decref(args);
    pipit_toolset_free(ts);
}

/* ============================================================================
 * the JSON Schema of real tool specifications (docs/toolspec.md, "JSON Schema") */

static const char *KEYWORDS_SPEC =
    "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"d\", "
    "\"response\": {\"type\": \"dict\"}, \"parameters\": {"
    "\"$schema\": \"http://json-schema.org/draft-07/schema#\", \"$id\": \"urn:f\", "
    "\"title\": \"F\", \"$comment\": \"c\", \"type\": \"object\", \"x-origin\": \"test\", "
    "\"$defs\": {\"Unit\": {\"type\": \"string\", \"enum\": [\"c\", \"f\"], \"title\": \"U\"}}, "
    "\"definitions\": {\"Old\": {\"type\": \"integer\", \"minimum\": 1}}, "
    "\"properties\": {"
    "\"day\": {\"type\": \"string\", \"format\": \"date\", \"examples\": [\"2024-01-31\"]}, "
    "\"unit\": {\"$ref\": \"#/$defs/Unit\", \"default\": \"c\", \"description\": \"unit\"}, "
    "\"note\": {\"anyOf\": [{\"type\": \"string\", \"maxLength\": 5}, {\"type\": \"null\"}], "
    "\"default\": null, \"title\": \"Note\"}, "
    "\"code\": {\"type\": \"string\", \"pattern\": \"^[A-Z]{3}-[0-9]+$\", \"minLength\": 6}, "
    "\"tags\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"minItems\": 1, "
    "\"maxItems\": 3, \"uniqueItems\": true}, "
    "\"Content-Type\": {\"type\": [\"string\", \"null\"], \"optional\": true}, "
    "\"mode\": {\"enum\": [1, \"auto\", null, true]}, "
    "\"kind\": {\"const\": \"fixed\"}, "
    "\"meta\": {\"type\": \"object\", \"additionalProperties\": {\"type\": \"integer\"}}, "
    "\"id\": {\"type\": \"string\", \"format\": \"uuid\"}, "
    "\"one\": {\"oneOf\": [{\"type\": \"integer\"}, {\"type\": \"number\", \"minimum\": 0}]}, "
    "\"old\": {\"allOf\": [{\"$ref\": \"#/definitions/Old\"}], \"description\": \"v1\"}, "
    "\"when\": {\"type\": \"string\", \"format\": \"date-time\"}, "
    "\"mail\": {\"type\": \"string\", \"format\": \"email\"}, "
    "\"site\": {\"type\": \"string\", \"format\": \"uri\"}, "
    "\"at\": {\"type\": \"string\", \"format\": \"time\"}, "
    "\"rate\": {\"type\": \"number\", \"format\": \"float\"}, "
    "\"anything\": {\"description\": \"any value\"}"
    "}, \"required\": [\"day\"]}}}]";

static void test_schema_keywords(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_text(KEYWORDS_SPEC);
    const struct pipit_tool *t = pipit_toolset_tool(ts, 0);
    assert_int_equal(param(t, "unit")->type, PIPIT_SCHEMA_STRING);
    assert_string_equal(json_string_value(param(t, "unit")->default_value), "c");
    assert_string_equal(param(t, "unit")->description, "unit");
    assert_int_equal(param(t, "note")->type, PIPIT_SCHEMA_UNION);
    assert_true(json_is_null(param(t, "note")->default_value));
    assert_int_equal(param(t, "Content-Type")->type, PIPIT_SCHEMA_UNION);
    assert_int_equal(param(t, "mode")->type, PIPIT_SCHEMA_ANY);
    assert_int_equal(param(t, "mode")->n_enum, 4);
    assert_int_equal(param(t, "kind")->type, PIPIT_SCHEMA_STRING);
    assert_int_equal(param(t, "old")->type, PIPIT_SCHEMA_INTEGER);
    assert_string_equal(param(t, "old")->description, "v1");
    assert_int_equal(param(t, "anything")->type, PIPIT_SCHEMA_ANY);
    assert_int_equal(param(t, "rate")->format, PIPIT_FORMAT_OTHER);
    assert_int_equal(param(t, "day")->format, PIPIT_FORMAT_DATE);
    static const struct args_case cases[] = {
        {"f", "{\"day\": \"2024-02-29\"}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2023-02-29\"}", PIPIT_ERR_INVALID_ARGS, "args.day",
         "\"2023-02-29\" is not a valid date"},
        {"f", "{\"day\": \"2024-1-5\"}", PIPIT_ERR_INVALID_ARGS, "args.day",
         "\"2024-1-5\" is not a valid date"},
        {"f", "{}", PIPIT_ERR_INVALID_ARGS, "args.day", "required argument is missing"},
        {"f", "{\"day\": \"2024-01-01\", \"unit\": \"k\"}", PIPIT_ERR_INVALID_ARGS, "args.unit",
         "\"k\" is not one of \"c\"|\"f\""},
        {"f", "{\"day\": \"2024-01-01\", \"note\": null}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"note\": \"short\"}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"note\": \"too long\"}", PIPIT_ERR_INVALID_ARGS,
         "args.note", "is 8 characters long, above the maximum 5"},
        {"f", "{\"day\": \"2024-01-01\", \"note\": 3}", PIPIT_ERR_INVALID_ARGS, "args.note",
         "3 matches none of string<=5|null"},
        {"f", "{\"day\": \"2024-01-01\", \"code\": \"ABC-12\"}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"code\": \"ABC-1\"}", PIPIT_ERR_INVALID_ARGS, "args.code",
         "is 5 characters long, below the minimum 6"},
        {"f", "{\"day\": \"2024-01-01\", \"code\": \"abc-123\"}", PIPIT_ERR_INVALID_ARGS,
         "args.code", "\"abc-123\" does not match the pattern ^[A-Z]{3}-[0-9]+$"},
        {"f", "{\"day\": \"2024-01-01\", \"tags\": []}", PIPIT_ERR_INVALID_ARGS, "args.tags",
         "has 0 items, below the minimum 1"},
        {"f", "{\"day\": \"2024-01-01\", \"tags\": [\"a\", \"a\"]}", PIPIT_ERR_INVALID_ARGS,
         "args.tags", "items 0 and 1 are equal (the items must be unique)"},
        {"f", "{\"day\": \"2024-01-01\", \"Content-Type\": null}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"Content-Type\": 1}", PIPIT_ERR_INVALID_ARGS,
         "args[\"Content-Type\"]", "1 matches none of string|null"},
        {"f", "{\"day\": \"2024-01-01\", \"mode\": null}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"mode\": 1.0}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"mode\": false}", PIPIT_ERR_INVALID_ARGS, "args.mode",
         "false is not one of 1|\"auto\"|null|true"},
        {"f", "{\"day\": \"2024-01-01\", \"kind\": \"fixed\"}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"kind\": \"free\"}", PIPIT_ERR_INVALID_ARGS, "args.kind",
         "\"free\" is not one of \"fixed\""},
        {"f", "{\"day\": \"2024-01-01\", \"meta\": {\"a b\": 1, \"c\": 2}}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"meta\": {\"a\": \"x\"}}", PIPIT_ERR_INVALID_ARGS,
         "args.meta.a", "expected an integer, got string"},
        {"f", "{\"day\": \"2024-01-01\", \"id\": \"123e4567-e89b-12d3-a456-426614174000\"}",
         PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"id\": \"123e4567-e89b-12d3-a456\"}",
         PIPIT_ERR_INVALID_ARGS, "args.id", "\"123e4567-e89b-12d3-a456\" is not a valid uuid"},
        {"f", "{\"day\": \"2024-01-01\", \"one\": -1}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"one\": 2.5}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"one\": 2}", PIPIT_ERR_INVALID_ARGS, "args.one",
         "matches 2 of the oneOf schemas, exactly one must match"},
        {"f", "{\"day\": \"2024-01-01\", \"old\": 0}", PIPIT_ERR_INVALID_ARGS, "args.old",
         "0 is below the minimum 1"},
        {"f", "{\"day\": \"2024-01-01\", \"when\": \"2024-01-01T10:00:00Z\"}", PIPIT_OK, NULL,
         NULL},
        {"f", "{\"day\": \"2024-01-01\", \"when\": \"2024-01-01 10:00\"}", PIPIT_ERR_INVALID_ARGS,
         "args.when", "\"2024-01-01 10:00\" is not a valid date-time"},
        {"f", "{\"day\": \"2024-01-01\", \"at\": \"23:59:60.5+01:00\"}", PIPIT_OK, NULL, NULL},
        {"f", "{\"day\": \"2024-01-01\", \"at\": \"24:00:00Z\"}", PIPIT_ERR_INVALID_ARGS, "args.at",
         "\"24:00:00Z\" is not a valid time"},
        {"f", "{\"day\": \"2024-01-01\", \"mail\": \"ann.lee+x@mail.example.org\"}", PIPIT_OK, NULL,
         NULL},
        {"f", "{\"day\": \"2024-01-01\", \"mail\": \"ann lee@example\"}", PIPIT_ERR_INVALID_ARGS,
         "args.mail", "\"ann lee@example\" is not a valid email"},
        {"f", "{\"day\": \"2024-01-01\", \"site\": \"https://example.org/a?b=c\"}", PIPIT_OK, NULL,
         NULL},
        {"f", "{\"day\": \"2024-01-01\", \"site\": \"example.org/a b\"}", PIPIT_ERR_INVALID_ARGS,
         "args.site", "\"example.org/a b\" is not a valid uri"},
        {"f", "{\"day\": \"2024-01-01\", \"rate\": 0.5, \"anything\": [1, {\"a\": null}]}",
         PIPIT_OK, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_args(ts, &cases[i]);
    }
    /* what an omitted optional argument means */
    json_t *args = json_pack("{s:s}", "day", "2024-01-01");
    json_t *full = pipit_tool_args_with_defaults(t, args);
    assert_string_equal(json_string_value(json_object_get(full, "unit")), "c");
    assert_true(json_is_null(json_object_get(full, "note")));
    assert_null(json_object_get(args, "unit"));
    json_decref(full);
    json_decref(args);
    /* the compact form writes non-identifier names as JSON strings, unions with "|" */
    char *text = NULL;
    assert_int_equal(pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_COMPACT, &text), PIPIT_OK);
    assert_non_null(strstr(text, "unit?: \"c\"|\"f\" = \"c\""));
    assert_non_null(strstr(text, "\"Content-Type\"?: string|null"));
    assert_non_null(strstr(text, "meta?: {...: integer}"));
    assert_non_null(strstr(text, "tags?: string[1..3] unique"));
    pipit_free(text);
    pipit_toolset_free(ts);

    /* OpenAPI's nullable and example, exclusive bounds (draft 6 numbers, draft 4 booleans),
     * multipleOf, property counts, arrays without items and free-form nested objects */
    ts = load_text(
        "[{\"type\": \"function\", \"function\": {\"name\": \"g\", \"description\": \"d\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {"
        "\"n\": {\"type\": \"string\", \"nullable\": true, \"example\": \"x\"}, "
        "\"p\": {\"type\": \"number\", \"exclusiveMinimum\": 0, \"exclusiveMaximum\": 1}, "
        "\"q\": {\"type\": \"integer\", \"minimum\": 0, \"exclusiveMinimum\": true}, "
        "\"step\": {\"type\": \"number\", \"multipleOf\": 0.25}, "
        "\"opts\": {\"type\": \"object\", \"minProperties\": 1, \"maxProperties\": 2}, "
        "\"list\": {\"type\": \"array\"}}}}}]");
    static const struct args_case more[] = {
        {"g",
         "{\"n\": null, \"p\": 0.5, \"q\": 1, \"step\": 1.75, \"opts\": {\"a\": [1]}, "
         "\"list\": [1, \"x\", null]}",
         PIPIT_OK, NULL, NULL},
        {"g", "{\"n\": 1}", PIPIT_ERR_INVALID_ARGS, "args.n", "1 matches none of string|null"},
        {"g", "{\"p\": 0}", PIPIT_ERR_INVALID_ARGS, "args.p", "0 is not above 0"},
        {"g", "{\"p\": 1}", PIPIT_ERR_INVALID_ARGS, "args.p", "1 is not below 1"},
        {"g", "{\"q\": 0}", PIPIT_ERR_INVALID_ARGS, "args.q", "0 is not above 0"},
        {"g", "{\"step\": 0.3}", PIPIT_ERR_INVALID_ARGS, "args.step",
         "0.3 is not a multiple of 0.25"},
        {"g", "{\"opts\": {}}", PIPIT_ERR_INVALID_ARGS, "args.opts",
         "has 0 members, below the minimum 1"},
        {"g", "{\"opts\": {\"a\": 1, \"b\": 2, \"c\": 3}}", PIPIT_ERR_INVALID_ARGS, "args.opts",
         "has 3 members, above the maximum 2"},
    };
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
        check_args(ts, &more[i]);
    }
    pipit_toolset_free(ts);

    /* keywords beside anyOf/oneOf/$ref and the parts of allOf are merged: all of them hold */
    ts = load_text(
        "[{\"type\": \"function\", \"function\": {\"name\": \"h\", \"description\": \"d\", "
        "\"parameters\": {\"type\": \"object\", \"$defs\": {\"Base\": {\"type\": \"object\", "
        "\"properties\": {\"id\": {\"type\": \"integer\"}}, \"required\": [\"id\"]}, "
        "\"Name\": {\"type\": \"string\", \"minLength\": 1}}, \"properties\": {"
        "\"item\": {\"allOf\": [{\"$ref\": \"#/$defs/Base\"}, {\"properties\": {\"tag\": "
        "{\"type\": \"string\"}}, \"required\": [\"tag\"]}]}, "
        "\"who\": {\"type\": \"object\", \"properties\": {\"email\": {\"type\": \"string\"}, "
        "\"phone\": {\"type\": \"string\"}}, \"additionalProperties\": false, "
        "\"oneOf\": [{\"required\": [\"email\"]}, {\"required\": [\"phone\"]}]}, "
        "\"name\": {\"$ref\": \"#/$defs/Name\", \"maxLength\": 3}}}}}]");
    static const struct args_case merged[] = {
        {"h",
         "{\"item\": {\"id\": 1, \"tag\": \"a\"}, \"who\": {\"email\": \"e\"}, \"name\": \"abc\"}",
         PIPIT_OK, NULL, NULL},
        {"h", "{\"item\": {\"id\": 1}}", PIPIT_ERR_INVALID_ARGS, "args.item.tag",
         "required argument is missing"},
        {"h", "{\"item\": {\"tag\": \"a\"}}", PIPIT_ERR_INVALID_ARGS, "args.item.id",
         "required argument is missing"},
        {"h", "{\"who\": {\"email\": \"e\", \"phone\": \"p\"}}", PIPIT_ERR_INVALID_ARGS, "args.who",
         "matches 2 of the oneOf schemas, exactly one must match"},
        {"h", "{\"who\": {\"fax\": \"f\"}}", PIPIT_ERR_INVALID_ARGS, "args.who",
         "{\"fax\":\"f\"} matches none of {email: string, phone?: string}|{email?: string, phone: "
         "string}"},
        {"h", "{\"name\": \"abcd\"}", PIPIT_ERR_INVALID_ARGS, "args.name",
         "is 4 characters long, above the maximum 3"},
        {"h", "{\"name\": \"\"}", PIPIT_ERR_INVALID_ARGS, "args.name",
         "is 0 characters long, below the minimum 1"},
    };
    for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++) {
        check_args(ts, &merged[i]);
    }
    pipit_toolset_free(ts);

    /* an MCP tool definition is a tool too: inputSchema for parameters, title for a missing
     * description */
    ts = load_text("[{\"name\": \"read_file\", \"title\": \"Read a file\", \"inputSchema\": "
                   "{\"type\": \"object\", \"properties\": {\"path\": {\"type\": \"string\"}}, "
                   "\"required\": [\"path\"], \"additionalProperties\": false}, "
                   "\"annotations\": {\"readOnlyHint\": true}}]");
    assert_string_equal(pipit_toolset_tool_description(ts, 0), "Read a file");
    assert_int_equal(pipit_toolset_validate_args(ts, "read_file", "{}", 2, NULL, 0, NULL),
                     PIPIT_ERR_INVALID_ARGS);
    assert_int_equal(pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_MINIFIED, &text), PIPIT_OK);
    assert_non_null(strstr(text, "\"parameters\":{"));
    pipit_free(text);
    pipit_toolset_free(ts);
}

/* ============================================================================
 * the corpus of real-world shapes (tests/specs/real): every spec loads, every valid call
 * validates, every invalid one is refused with the expected problem */

#define REAL_DIR PIPIT_SOURCE_DIR "/tests/specs/real"

static void test_real_corpus_validation(void **state) {
    (void)state;
    DIR *dir = opendir(REAL_DIR);
    assert_non_null(dir);
    int specs = 0, valid = 0, invalid = 0;
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
        json_t *cases = json_load_file(cases_path, JSON_REJECT_DUPLICATES, &jerr);
        if (cases == NULL) {
            fail_msg("%s: %s", cases_path, jerr.text);
        }
        const char *kinds[2] = {"valid", "invalid"};
        for (int k = 0; k < 2; k++) {
            const json_t *list = json_object_get(cases, kinds[k]);
            assert_true(json_array_size(list) > 0);
            for (size_t i = 0; i < json_array_size(list); i++) {
                const json_t *c = json_array_get(list, i);
                const char *tool = json_string_value(json_array_get(c, 0));
                char *args = json_dumps(json_array_get(c, 1), JSON_COMPACT);
                struct pipit_arg_problem p[4];
                size_t n = 0;
                enum pipit_status st =
                    pipit_toolset_validate_args(ts, tool, args, strlen(args), p, 4, &n);
                if (k == 0 && st != PIPIT_OK) {
                    fail_msg("%s: valid %s(%s) refused: %s: %s", de->d_name, tool, args,
                             n > 0 ? p[0].path : "", n > 0 ? p[0].message : "");
                }
                if (k == 1) {
                    const char *want = json_string_value(json_array_get(c, 3));
                    bool found = false;
                    for (size_t j = 0; j < n && !found; j++) {
                        found = strstr(p[j].message, want) != NULL;
                    }
                    if (st != PIPIT_ERR_INVALID_ARGS || !found) {
                        fail_msg("%s: invalid %s(%s): status %s, problem %s: %s (want \"%s\")",
                                 de->d_name, tool, args, pipit_status_str(st),
                                 n > 0 ? p[0].path : "", n > 0 ? p[0].message : "", want);
                    }
                }
                free(args);
                k == 0 ? valid++ : invalid++;
            }
        }
        json_decref(cases);
        pipit_toolset_free(ts);
        specs++;
    }
    closedir(dir);
    print_message("real corpus: %d specs, %d valid and %d invalid calls\n", specs, valid, invalid);
    assert_true(specs >= 6);
}

/* ============================================================================
 * patterns (src/pattern.c) */

static void test_patterns(void **state) {
    (void)state;
    static const struct {
        const char *re, *text;
        bool match;
    } cases[] = {
        {"^[0-9]{5}$", "69001", true},
        {"^[0-9]{5}$", "6900", false},
        {"^[0-9]{5}$", "690011", false},
        {"[0-9]", "abc7", true}, /* unanchored: anywhere */
        {"[0-9]", "abc", false},
        {"^ab", "abc", true},
        {"bc$", "abc", true},
        {"^a(b|cd)*e$", "acdbbe", true},
        {"^a(b|cd)*e$", "acde", true},
        {"^a(b|cd)*e$", "ace", false},
        {"^(?:x|y)+?$", "xyx", true},
        {"^\\d{3}-\\w+\\s?$", "123-ab_c ", true},
        {"^\\D\\W\\S$", "a-b", true},
        {"^\\D$", "1", false},
        {"^[^a-c]$", "d", true},
        {"^[^a-c]$", "b", false},
        {"^[\\d.-]+$", "1.5-2", true},
        {"^.{2,3}$", "\xc3\xa9t\xc3\xa9", true}, /* "été": 3 code points */
        {"^.{2,3}$", "\xc3\xa9t\xc3\xa9s", false},
        {"^\\u00e9$", "\xc3\xa9", true},
        {"^a{2,}$", "aaaa", true},
        {"^a{2,}$", "a", false},
        {"^\\$\\.\\($", "$.(", true},
        {"^$", "", true},
        {"^$", "x", false},
        {"", "anything", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char why[160];
        if (!pattern_supported(cases[i].re, why, sizeof(why))) {
            fail_msg("/%s/ refused: %s", cases[i].re, why);
        }
        if (pattern_match(cases[i].re, cases[i].text, strlen(cases[i].text)) != cases[i].match) {
            fail_msg("/%s/ on \"%s\": want %s", cases[i].re, cases[i].text,
                     cases[i].match ? "a match" : "no match");
        }
    }
    static const struct {
        const char *re, *why;
    } refused[] = {
        {"^(a)\\1$", "backreferences"},
        {"^(?=a)", "lookaround"},
        {"(?<n>a)", "lookaround and named groups"},
        {"\\bword", "word boundaries"},
        {"\\p{L}", "Unicode property"},
        {"a^b", "only at the start and the end"},
        {"a$b", "only at the start and the end"},
        {"(ab", "unbalanced"},
        {"ab)", "unbalanced"},
        {"[ab", "unterminated"},
        {"*a", "nothing to repeat"},
        {"a{3,2}", "m below n"},
        {"a{1000}", "above the limit"},
        {"[z-a]", "out of order"},
        {"a++", "possessive"},
        {"^\"$", "cannot hold"},
        {"\\q", "unknown escape"},
        {"[[:alpha:]]", "POSIX"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char why[160] = "";
        if (pattern_supported(refused[i].re, why, sizeof(why))) {
            fail_msg("/%s/ accepted", refused[i].re);
        }
        if (strstr(why, refused[i].why) == NULL) {
            fail_msg("/%s/: \"%s\" lacks \"%s\"", refused[i].re, why, refused[i].why);
        }
    }
    /* the grammar form: anchored, bounded, without what a grammar string cannot hold */
    struct strbuf b = {0};
    assert_true(pattern_gbnf("^[0-9]+$", 16, &b));
    assert_string_equal(b.data, "(([0-9]){1,16})");
    strbuf_free(&b);
    assert_true(pattern_gbnf("a.", 4, &b));
    assert_non_null(strstr(b.data, "{0,4}"));
    strbuf_free(&b);
    /* a length range folds into the one unbounded repetition */
    assert_true(pattern_gbnf_lengths("^[a-z][a-z0-9_]*$", 128, 3, 20, &b));
    assert_string_equal(b.data, "([a-z] [0-9\\x5Fa-z]{2,19})");
    strbuf_free(&b);
    assert_false(pattern_gbnf_lengths("^(ab)+$", 128, 3, 20, &b));
    assert_false(pattern_gbnf_lengths("^[a-z]{1,2}$", 128, 3, 20, &b));
    strbuf_free(&b);
}

/* ============================================================================
 * serializations */

static void test_serializations(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_pack(CAMERA_PACK);
    char *text[PIPIT_TOOLSPEC_N_FORMATS];
    for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
        assert_int_equal(pipit_toolset_serialize(ts, (enum pipit_toolspec_format)f, &text[f]),
                         PIPIT_OK);
        /* deterministic */
        char *again = NULL;
        assert_int_equal(pipit_toolset_serialize(ts, (enum pipit_toolspec_format)f, &again),
                         PIPIT_OK);
        assert_string_equal(text[f], again);
        pipit_free(again);
    }
    /* openapi is indented, minified has no whitespace outside strings */
    assert_non_null(strstr(text[PIPIT_TOOLSPEC_OPENAPI], "\n  {\n    \"type\": \"function\""));
    assert_null(strstr(text[PIPIT_TOOLSPEC_MINIFIED], "\n"));
    assert_null(strstr(text[PIPIT_TOOLSPEC_MINIFIED], "\": "));
    assert_null(strstr(text[PIPIT_TOOLSPEC_OPENAPI], "pipit"));

    /* both JSON formats parse back to the spec's function objects */
    json_error_t jerr;
    json_t *root = json_load_file(CAMERA_PACK, 0, &jerr);
    assert_non_null(root);
    json_t *spec = json_is_array(root) ? root : json_object_get(root, "tools"); /* a pack */
    assert_true(json_array_size(spec) > 0);
    for (int f = PIPIT_TOOLSPEC_OPENAPI; f <= PIPIT_TOOLSPEC_MINIFIED; f++) {
        json_t *back = json_loads(text[f], 0, &jerr);
        assert_non_null(back);
        assert_int_equal(json_array_size(back), json_array_size(spec));
        for (size_t i = 0; i < json_array_size(spec); i++) {
            json_t *e = json_array_get(back, i);
            assert_int_equal(json_object_size(e), 2);
            assert_string_equal(json_string_value(json_object_get(e, "type")), "function");
            assert_true(json_equal(json_object_get(e, "function"),
                                   json_object_get(json_array_get(spec, i), "function")));
        }
        json_decref(back);
    }
    json_decref(root);

    /* compact signatures */
    const char *compact = text[PIPIT_TOOLSPEC_COMPACT];
    assert_non_null(strstr(compact, "take_photo() - Take a photo\n"));
    assert_non_null(strstr(compact, "\nset_zoom(level: number 0.5..10) - Set the zoom level\n"));
    assert_non_null(strstr(compact, "\nset_flash(mode: \"off\"|\"on\"|\"auto\") - "));
    assert_non_null(strstr(compact, "\ntap_to_focus(x: number 0..1, y: number 0..1) - "));
    assert_non_null(strstr(compact, "\nset_exposure(ev: number -2..2) - "));
    assert_non_null(strstr(compact, "\nset_timer(seconds: 0|3|5|10) - "));
    assert_non_null(strstr(compact, "\nset_jpeg_quality(quality: integer 50..100) - "));
    assert_non_null(strstr(compact, "\nset_grid(enabled: boolean) - "));
    int lines = 0;
    for (const char *p = compact; *p != '\0'; p++) {
        lines += *p == '\n';
    }
    assert_int_equal(lines, 18);

    /* jit: name and description only */
    assert_non_null(strstr(text[PIPIT_TOOLSPEC_JIT], "take_photo - Take a photo\nrecord_video - "));
    assert_null(strstr(text[PIPIT_TOOLSPEC_JIT], "number"));

    /* one tool alone */
    char *one = NULL;
    assert_int_equal(pipit_toolset_serialize_tool(ts, 2, PIPIT_TOOLSPEC_COMPACT, &one), PIPIT_OK);
    assert_string_equal(one, "set_zoom(level: number 0.5..10) - Set the zoom level");
    pipit_free(one);
    assert_int_equal(pipit_toolset_serialize_tool(ts, 2, PIPIT_TOOLSPEC_JIT, &one), PIPIT_OK);
    assert_string_equal(one, "set_zoom - Set the zoom level");
    pipit_free(one);
    assert_int_equal(pipit_toolset_serialize_tool(ts, 2, PIPIT_TOOLSPEC_MINIFIED, &one), PIPIT_OK);
    assert_non_null(strstr(one, "{\"type\":\"function\",\"function\":{\"name\":\"set_zoom\""));
    pipit_free(one);
    assert_int_equal(pipit_toolset_serialize_tool(ts, 18, PIPIT_TOOLSPEC_JIT, &one),
                     PIPIT_ERR_INVALID_ARG);
    assert_null(one);
    assert_int_equal(pipit_toolset_serialize(ts, (enum pipit_toolspec_format)7, &one),
                     PIPIT_ERR_INVALID_ARG);

    for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
        pipit_free(text[f]);
    }
    pipit_toolset_free(ts);

    /* optional arguments, arrays, nested objects, maxLength in compact form */
    ts = load_text(NESTED_SPEC);
    assert_int_equal(pipit_toolset_serialize_tool(ts, 0, PIPIT_TOOLSPEC_COMPACT, &one), PIPIT_OK);
    assert_string_equal(one, "post(title: string<=5, tags?: \"a\"|\"b\"[<=2], opts?: {mode: "
                             "\"x\"|\"y\", level?: integer >=1}, count?: integer) - Post");
    pipit_free(one);
    pipit_toolset_free(ts);
}

static void test_templates_and_defaults(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_text(
        "[{\"type\": \"function\", \"function\": {\"name\": \"ping\", \"description\": \"Ping\"}},"
        " {\"type\": \"function\", \"function\": {\"name\": \"wipe\", \"description\": \"Wipe\","
        "  \"parameters\": {\"type\": \"object\", \"properties\": {}}},"
        "  \"pipit\": {\"success\": \"Wiped {{all}} {n}.\", \"failure\": {}, \"undo\": "
        "\"none\"}}]");
    assert_int_equal(pipit_toolset_n_tools(ts), 2);
    assert_string_equal(pipit_toolset_success_template(ts, 0), "Done.");
    assert_string_equal(pipit_toolset_failure_template(ts, 0, "x"), "I couldn't do that: {error}.");
    assert_string_equal(pipit_toolset_failure_template(ts, 1, NULL),
                        "I couldn't do that: {error}.");
    assert_string_equal(pipit_toolset_success_template(ts, 1), "Wiped {{all}} {n}.");
    assert_int_equal(pipit_toolset_undo(ts, 0, NULL, NULL), PIPIT_UNDO_NO_STATE);
    assert_int_equal(pipit_toolset_undo(ts, 1, NULL, NULL), PIPIT_UNDO_IMPOSSIBLE);
    assert_string_equal(pipit_toolset_tool_description(ts, 1), "Wipe");
    char *jit = NULL;
    assert_int_equal(pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_COMPACT, &jit), PIPIT_OK);
    assert_string_equal(jit, "ping() - Ping\nwipe() - Wipe\n");
    pipit_free(jit);
    pipit_toolset_free(ts);
}

/* ============================================================================
 * token counts (model) */

static void check_ratios(const char *model_path) {
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_model *m = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_model_load(model_path, &mp, &m, &err), PIPIT_OK);
    struct pipit_toolset *ts = load_pack(CAMERA_PACK);
    size_t n = pipit_toolset_n_tools(ts);
    struct pipit_token_counts per[32], total;
    assert_true(n <= 32);
    assert_int_equal(pipit_toolset_count_tokens(ts, m, per, &total), PIPIT_OK);
    const int32_t *t = total.by_format;
    print_message("%s: openapi %d, minified %d, compact %d, jit %d\n", model_path, (int)t[0],
                  (int)t[1], (int)t[2], (int)t[3]);
    assert_true(t[PIPIT_TOOLSPEC_MINIFIED] < t[PIPIT_TOOLSPEC_OPENAPI]);
    assert_true(t[PIPIT_TOOLSPEC_COMPACT] * 4 <= t[PIPIT_TOOLSPEC_OPENAPI]);
    assert_true(t[PIPIT_TOOLSPEC_JIT] * 8 <= t[PIPIT_TOOLSPEC_OPENAPI]);
    for (size_t i = 0; i < n; i++) {
        for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
            assert_true(per[i].by_format[f] > 0);
        }
        assert_true(per[i].by_format[PIPIT_TOOLSPEC_COMPACT] <
                    per[i].by_format[PIPIT_TOOLSPEC_MINIFIED]);
    }
    /* the counts are the tokenizer's own (no BOS) */
    char *jit = NULL;
    assert_int_equal(pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_JIT, &jit), PIPIT_OK);
    int32_t *toks = NULL, nt = 0;
    assert_int_equal(pipit_tokenize_alloc(m, jit, false, false, &toks, &nt), PIPIT_OK);
    assert_int_equal(nt, t[PIPIT_TOOLSPEC_JIT]);
    pipit_free(toks);
    pipit_free(jit);
    assert_int_equal(pipit_toolset_count_tokens(ts, NULL, per, &total), PIPIT_ERR_INVALID_ARG);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

static void test_token_ratios_spm(void **state) {
    (void)state;
    check_ratios(TEST_MODEL_SPM);
}

static void test_token_ratios_qwen(void **state) {
    (void)state;
    check_ratios(TEST_MODEL_QWEN);
}

#ifdef PIPIT_CLI_BIN
static char *run_cli(const char *args, int *status) {
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' %s", PIPIT_CLI_BIN, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    size_t got;
    while ((got = fread(out + n, 1, cap - 1 - n, p)) > 0) {
        n += got;
        assert_true(n < cap - 1);
    }
    out[n] = '\0';
    *status = pclose(p);
    return out;
}

static void test_cli_inspect_json(void **state) {
    (void)state;
    int status = -1;
    char *out =
        run_cli("tools inspect '" CAMERA_PACK "' --model '" TEST_MODEL_SPM "' --json", &status);
    assert_int_equal(status, 0);
    json_error_t jerr;
    json_t *root = json_loads(out, 0, &jerr);
    if (root == NULL) {
        fail_msg("inspect --json does not parse: %s\n%s", jerr.text, out);
    }
    json_t *tools = json_object_get(root, "tools");
    assert_int_equal(json_array_size(tools), 18);
    static const char *const formats[] = {"openapi", "minified", "compact", "jit"};
    for (size_t i = 0; i < json_array_size(tools); i++) {
        json_t *t = json_array_get(tools, i);
        assert_string_equal(json_string_value(json_object_get(t, "name")), CAMERA_TOOLS[i]);
        for (int f = 0; f < 4; f++) {
            assert_true(
                json_integer_value(json_object_get(json_object_get(t, "tokens"), formats[f])) > 0);
        }
    }
    json_t *total = json_object_get(root, "total");
    assert_int_equal(json_object_size(total), 4);
    json_int_t openapi = json_integer_value(json_object_get(total, "openapi"));
    assert_true(json_integer_value(json_object_get(total, "compact")) * 4 <= openapi);
    assert_true(json_integer_value(json_object_get(total, "jit")) * 8 <= openapi);
    json_decref(root);
    free(out);

    /* the markdown table, check and show */
    out = run_cli("tools inspect '" CAMERA_PACK "' --model '" TEST_MODEL_QWEN "'", &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "| tool | openapi | minified | compact | jit |"));
    assert_non_null(strstr(out, "| set_zoom | "));
    assert_non_null(strstr(out, "| **total** |"));
    free(out);
    out = run_cli("tools check '" PHONE_PACK "'", &status);
    assert_int_equal(status, 0);
    /* whether the calls take the fast decoder is said, per syntax */
    assert_non_null(strstr(out, "pipit syntax: fast decoder ("));
    assert_non_null(strstr(out, "hermes syntax: fast decoder ("));
    free(out);
    out = run_cli("tools check '" BAD_DIR "/minimum_is_string.json' 2>&1", &status);
    assert_int_not_equal(status, 0);
    assert_non_null(strstr(out, "minimum_is_string.json:37:24: "
                                "$[3].function.parameters.properties.level.minimum: expected a "
                                "number, got string"));
    free(out);
    /* calls sampled under the grammar, each validated against the schema, in both syntaxes */
    out = run_cli("tools sample '" PHONE_PACK "' --model '" TEST_MODEL_SPM "' --n 6", &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "6 of 6 calls valid against"));
    assert_non_null(strstr(out, "\t<call>"));
    free(out);
    out = run_cli("tools sample '" CAMERA_PACK "' --model '" TEST_MODEL_QWEN
                  "' --n 4 --syntax hermes --seed 9",
                  &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "4 of 4 calls valid against"));
    assert_non_null(strstr(out, "9\t<tool_call>\\n{\"name\": "));
    free(out);
    out = run_cli("tools sample '" CAMERA_PACK "' 2>&1", &status);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2); /* usage: --model missing */
    free(out);
    out = run_cli("tools show '" CAMERA_PACK "' --format compact", &status);
    assert_int_equal(status, 0);
    assert_non_null(strstr(out, "set_zoom(level: number 0.5..10) - Set the zoom level\n"));
    free(out);
}
#endif

/* ============================================================================
 * packs: the object form with a declared state, effects and examples */

static void test_pack_accessors(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_pack(AQUARIUM);
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    assert_non_null(pk);
    assert_string_equal(pk->name, "aquarium");
    assert_non_null(strstr(pk->system, "reef aquarium"));
    /* the state in declared order, with types, ranges, labels and words */
    static const char *const keys[] = {"water_temp", "pump", "feedings", "lit_tanks",
                                       "maintenance"};
    assert_int_equal(pk->n_keys, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(pk->keys[i].key, keys[i]);
        assert_string_equal(pk->keys[i].words.key, keys[i]);
    }
    const struct pipit_pack_key *t = pipit_pack_find_key(pk, "water_temp");
    assert_int_equal(t->type, PIPIT_SCHEMA_NUMBER);
    assert_true(t->has_min && t->has_max);
    assert_true(t->min == 22 && t->max == 30);
    assert_true(json_number_value(t->initial) == 25);
    assert_string_equal(t->show, "temp");
    assert_string_equal(t->words.unit, " degrees");
    assert_string_equal(t->words.noun, "the water");
    const struct pipit_pack_key *pump = pipit_pack_find_key(pk, "pump");
    assert_int_equal(pump->n_enum, 3);
    assert_string_equal(pump->show, "pump"); /* default label: the key */
    assert_string_equal(pump->words.pattern, "The pump runs {v}.");
    assert_null(pipit_pack_find_key(pk, "lit_tanks")->show); /* "show": false */
    assert_int_equal(pipit_pack_find_key(pk, "lit_tanks")->type, PIPIT_SCHEMA_ARRAY);
    assert_null(pipit_pack_find_key(pk, "nope"));
    assert_int_equal(pk->n_verbs, 2);
    assert_string_equal(pk->verbs[0], "feed");
    assert_int_equal(pk->n_nouns, 2);
    assert_string_equal(pk->nouns[1], "fish");

    /* effects, the keys they change, and the default undo */
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, 0);
    assert_int_equal(tp->effect, PIPIT_EFFECT_CHANGE);
    assert_int_equal(tp->n_set, 1);
    assert_string_equal(tp->set[0].value.arg, "celsius");
    assert_int_equal(tp->n_examples, 2);
    assert_string_equal(tp->examples[0].say, "warm the tank to 26");
    const char *const *undo = NULL;
    size_t n_undo = 0;
    assert_int_equal(pipit_toolset_undo(ts, 0, &undo, &n_undo), PIPIT_UNDO_KEYS);
    assert_int_equal(n_undo, 1);
    assert_string_equal(undo[0], "water_temp");

    tp = pipit_toolset_tool_pack(ts, 1); /* nudge_temp: a step with a mapped sign */
    assert_true(tp->has_step);
    assert_string_equal(tp->step.sign.arg, "direction");
    assert_non_null(tp->step.sign.map);
    assert_true(json_number_value(tp->step.by.constant) == 1);

    /* set_pump writes two keys: undo restores both, in declared order */
    assert_int_equal(pipit_toolset_undo(ts, 2, &undo, &n_undo), PIPIT_UNDO_KEYS);
    assert_int_equal(n_undo, 2);
    assert_string_equal(undo[0], "pump");
    assert_string_equal(undo[1], "maintenance");

    assert_int_equal(pipit_toolset_tool_pack(ts, 5)->effect, PIPIT_EFFECT_READ);
    assert_int_equal(pipit_toolset_undo(ts, 5, NULL, NULL), PIPIT_UNDO_NO_STATE);
    assert_int_equal(pipit_toolset_tool_pack(ts, 6)->effect, PIPIT_EFFECT_CLOUD);
    assert_true(pipit_toolset_is_cloud(ts, 6));
    assert_false(pipit_toolset_is_cloud(ts, 5));
    /* a pack tool: in range, not the cloud's */
    assert_true(pipit_toolset_is_pack_tool(ts, 5));
    assert_false(pipit_toolset_is_pack_tool(ts, 6));
    assert_false(pipit_toolset_is_pack_tool(ts, -1));
    assert_false(pipit_toolset_is_pack_tool(ts, (int32_t)ts->n_tools));
    assert_false(pipit_toolset_is_pack_tool(NULL, 0));
    /* the one required argument of a tool, and how many there are */
    size_t n_req = 9;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_schema_prop *one = pipit_tool_only_required(&ts->tools[i], &n_req);
        assert_true((one != NULL) == (n_req == 1));
        assert_true(one == NULL || one->required);
    }
    assert_null(pipit_tool_only_required(NULL, &n_req));
    assert_int_equal(n_req, 0);
    assert_int_equal(pipit_toolset_tool_pack(ts, 7)->effect, PIPIT_EFFECT_NONE);
    assert_int_equal(pipit_toolset_undo(ts, 7, NULL, NULL), PIPIT_UNDO_IMPOSSIBLE);
    assert_null(pipit_toolset_tool_pack(ts, 8));

    /* the tools serialize exactly as a plain array of the same tools would */
    char *packed = NULL;
    assert_int_equal(pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_MINIFIED, &packed), PIPIT_OK);
    json_t *arr = json_deep_copy(json_object_get(ts->root, "tools"));
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_object_del(json_object_get(json_array_get(arr, i), "pipit"), "effect");
    }
    char *plain_text = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    struct pipit_toolset *plain = load_text(plain_text);
    char *plain_out = NULL;
    assert_int_equal(pipit_toolset_serialize(plain, PIPIT_TOOLSPEC_MINIFIED, &plain_out), PIPIT_OK);
    assert_string_equal(packed, plain_out);
    assert_null(pipit_toolset_pack(plain));
    assert_false(pipit_toolset_is_cloud(plain, 6)); /* without its "cloud" effect */
    assert_int_equal(pipit_toolset_tool_pack(plain, 0)->n_examples, 2); /* examples stay */
    free(packed);
    free(plain_out);
    free(plain_text);
    pipit_toolset_free(plain);
    pipit_toolset_free(ts);

    /* a templated key "{room}_light" and the key check */
    struct pipit_toolset *rooms =
        load_text("{\"pipit\": {\"pack\": \"rooms\", \"state\": {"
                  "\"hall_light\": {\"type\": \"boolean\", \"initial\": false},"
                  "\"attic_light\": {\"type\": \"boolean\", \"initial\": true}}},"
                  "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"light\", "
                  "\"description\": \"Switch a light\", \"parameters\": {\"type\": \"object\", "
                  "\"properties\": {\"room\": {\"type\": \"string\", \"enum\": [\"attic\", "
                  "\"hall\"]}, \"on\": {\"type\": \"boolean\"}}, \"required\": [\"room\", "
                  "\"on\"]}}, \"pipit\": {\"effect\": {\"set\": {\"{room}_light\": \"{on}\"}}}}]}");
    tp = pipit_toolset_tool_pack(rooms, 0);
    assert_string_equal(tp->set[0].key.key_arg, "room");
    assert_string_equal(tp->set[0].key.suffix, "_light");
    assert_int_equal(tp->n_changes, 2);
    assert_string_equal(tp->changes[0], "hall_light"); /* declared order, not enum order */
    assert_string_equal(tp->changes[1], "attic_light");
    char why[128];
    const struct pipit_pack_key *hall =
        pipit_pack_find_key(pipit_toolset_pack(rooms), "hall_light");
    json_t *num = json_integer(3);
    assert_false(pipit_pack_key_check(hall, num, why, sizeof(why)));
    assert_string_equal(why, "expected a boolean, got number");
    assert_true(pipit_pack_key_check(hall, json_true(), why, sizeof(why)));
    json_decref(num);
    pipit_toolset_free(rooms);
}

/* The content hash: the same document in other whitespace and key order keeps it; any change
 * of content changes it; the pack name is NULL for a plain array. */
static void test_content_hash(void **state) {
    (void)state;
    static const char *a =
        "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"beep\", "
        "\"description\": \"Beep.\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {}}}}], \"pipit\": {\"pack\": \"buzzer\"}}";
    static const char *b = "{\"pipit\":{\"pack\":\"buzzer\"},\n  \"tools\":[{\"function\":{"
                           "\"parameters\":{\"properties\":{},\"type\":\"object\"},"
                           "\"description\":\"Beep.\",\"name\":\"beep\"},\"type\":\"function\"}]}";
    static const char *c =
        "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"beep\", "
        "\"description\": \"Beep twice.\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {}}}}], \"pipit\": {\"pack\": \"buzzer\"}}";
    static const char *plain =
        "[{\"type\": \"function\", \"function\": {\"name\": \"beep\", \"description\": \"B.\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {}}}}]";
    struct pipit_toolset *ta = load_text(a), *tb = load_text(b), *tc = load_text(c);
    struct pipit_toolset *tp = load_text(plain);
    char ha[17], hb[17], hc[17], hp[17];
    pipit_toolset_content_hash(ta, ha);
    pipit_toolset_content_hash(tb, hb);
    pipit_toolset_content_hash(tc, hc);
    pipit_toolset_content_hash(tp, hp);
    assert_int_equal(strlen(ha), 16);
    assert_string_equal(ha, hb);
    assert_string_not_equal(ha, hc);
    assert_string_not_equal(ha, hp);
    assert_string_equal(pipit_toolset_pack_name(ta), "buzzer");
    assert_null(pipit_toolset_pack_name(tp));
    assert_null(pipit_toolset_pack_name(NULL));
    pipit_toolset_free(ta);
    pipit_toolset_free(tb);
    pipit_toolset_free(tc);
    pipit_toolset_free(tp);
}

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_content_hash),
        cmocka_unit_test(test_camera_pack_contract),
        cmocka_unit_test(test_phone_pack_loads),
        cmocka_unit_test(test_bad_spec_corpus),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_validate_args),
        cmocka_unit_test(test_serializations),
        cmocka_unit_test(test_templates_and_defaults),
        cmocka_unit_test(test_pack_accessors),
        cmocka_unit_test(test_schema_keywords),
        cmocka_unit_test(test_real_corpus_validation),
        cmocka_unit_test(test_patterns),
    };
    const struct CMUnitTest tokens[] = {
        cmocka_unit_test(test_token_ratios_spm),
        cmocka_unit_test(test_token_ratios_qwen),
#ifdef PIPIT_CLI_BIN
        cmocka_unit_test(test_cli_inspect_json),
#endif
    };
    if (argc > 1 && strcmp(argv[1], "--tokens") == 0) {
        return cmocka_run_group_tests_name("toolspec-tokens", tokens, NULL, NULL);
    }
    return cmocka_run_group_tests_name("toolspec", unit, NULL, NULL);
}
