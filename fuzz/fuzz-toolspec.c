/*
 * fuzz-toolspec.c - the tool-spec parser: pipit_toolset_load_string() on any bytes, then every
 * accessor and serializer of what it accepted (docs/toolspec.md).
 *
 * Seeds: fuzz/corpus/toolspec/ (the shipped packs, small specs of every parameter kind).
 */
#include "fuzz.h"

static const char *const CODES[] = {"*", "busy", "invalid_argument", "not_supported", ""};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    /* the buffer as it is: the parser must read exactly `size` bytes */
    enum pipit_status st = pipit_toolset_load_string((const char *)data, size, "fuzz", &ts, &err);
    if (st != PIPIT_OK) {
        if (ts != NULL) {
            fuzz_fail("load failed (%s) but returned a tool set", pipit_status_str(st));
        }
        return 0;
    }
    size_t n = pipit_toolset_n_tools(ts);
    for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
        char *text = NULL;
        if (pipit_toolset_serialize(ts, (enum pipit_toolspec_format)f, &text) == PIPIT_OK) {
            (void)strlen(text);
        }
        pipit_free(text);
    }
    for (size_t i = 0; i <= n; i++) { /* one past the end: NULL / defaults, never a crash */
        const char *name = pipit_toolset_tool_name(ts, i);
        (void)pipit_toolset_tool_description(ts, i);
        if (i < n && (name == NULL || pipit_toolset_find(ts, name) != (int32_t)i)) {
            fuzz_fail("tool %zu (%s) is not found by its own name", i, name ? name : "NULL");
        }
        for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
            char *text = NULL;
            if (pipit_toolset_serialize_tool(ts, i, (enum pipit_toolspec_format)f, &text) ==
                PIPIT_OK) {
                (void)strlen(text);
            }
            pipit_free(text);
        }
        (void)pipit_toolset_success_template(ts, i);
        for (size_t c = 0; c < sizeof(CODES) / sizeof(CODES[0]); c++) {
            (void)pipit_toolset_failure_template(ts, i, CODES[c]);
        }
        const char *const *keys = NULL;
        size_t n_keys = 0;
        if (pipit_toolset_undo(ts, i, &keys, &n_keys) == PIPIT_UNDO_KEYS) {
            for (size_t k = 0; k < n_keys; k++) {
                (void)strlen(keys[k]);
            }
        }
        /* the empty call and a call with every kind of value: the validator walks the schema */
        static const char *const ARGS[] = {
            "{}", "{\"a\": 1, \"b\": \"x\", \"c\": [true, null], \"d\": {\"e\": 2.5}}", "[]"};
        for (size_t k = 0; name != NULL && k < 3; k++) {
            struct pipit_arg_problem problems[4];
            size_t np = 0;
            (void)pipit_toolset_validate_args(ts, name, ARGS[k], strlen(ARGS[k]), problems, 4, &np);
            if (np > 4) {
                fuzz_fail("validate_args wrote %zu problems into 4 slots", np);
            }
        }
    }
    pipit_toolset_free(ts);
    return 0;
}
