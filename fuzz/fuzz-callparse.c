/*
 * fuzz-callparse.c - the call parser with validation: model output as the agent sees it,
 * through pipit_call_detect() and pipit_call_parse() in both syntaxes, then the parsed call
 * against a shipped tool set with pipit_toolset_validate_args() (docs/grammar.md).
 *
 * Input: one mode byte, then the text.
 *   bit 0  syntax: 0 pipit `<call>name(k=v, ...)`, 1 Hermes `<tool_call>{...}</tool_call>`
 *   bit 1  tool set: 0 tools/camera.json, 1 tools/phone.json
 *   bit 2  1: skip the parser; the next byte picks a tool, the rest is its arguments' JSON,
 *          given to validate_args with its length (not NUL-terminated)
 * Seeds: fuzz/corpus/callparse/ (valid and broken calls of both syntaxes, argument objects).
 */
#include "fuzz.h"

static struct pipit_toolset *g_packs[2];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    g_packs[0] = fuzz_load_pack("camera");
    g_packs[1] = fuzz_load_pack("phone");
    return 0;
}

static void
validate(const struct pipit_toolset *ts, const char *name, const char *args, size_t len) {
    struct pipit_arg_problem problems[8];
    size_t np = 0;
    enum pipit_status st = pipit_toolset_validate_args(ts, name, args, len, problems, 8, &np);
    if (np > 8) {
        fuzz_fail("validate_args wrote %zu problems into 8 slots", np);
    }
    if (st == PIPIT_OK && np != 0) {
        fuzz_fail("validate_args said OK with %zu problems", np);
    }
    for (size_t i = 0; i < np; i++) {
        if (memchr(problems[i].path, '\0', sizeof(problems[i].path)) == NULL ||
            memchr(problems[i].message, '\0', sizeof(problems[i].message)) == NULL) {
            fuzz_fail("problem %zu is not NUL-terminated", i);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    uint8_t mode = data[0];
    enum pipit_call_syntax syntax = (mode & 1) ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
    const struct pipit_toolset *ts = g_packs[(mode >> 1) & 1];
    data++;
    size--;
    if (mode & 4) {
        if (size < 1) {
            return 0;
        }
        const char *name = pipit_toolset_tool_name(ts, data[0] % pipit_toolset_n_tools(ts));
        /* an exact-size heap copy, so a read past `len` is caught */
        char *args = malloc(size);
        if (args == NULL) {
            return 0;
        }
        memcpy(args, data + 1, size - 1);
        validate(ts, name, args, size - 1);
        free(args);
        return 0;
    }
    char *text = fuzz_strndup(data, size);
    bool detected = pipit_call_detect(syntax, text);
    struct pipit_call call;
    memset(&call, 0, sizeof(call));
    struct pipit_error err;
    enum pipit_status st = pipit_call_parse(syntax, text, &call, &err);
    if (st == PIPIT_OK) {
        if (!detected) {
            fuzz_fail("a call parsed from text without the %s trigger",
                      pipit_call_syntax_trigger(syntax));
        }
        if (call.args_json == NULL || memchr(call.name, '\0', sizeof(call.name)) == NULL) {
            fuzz_fail("a parsed call without arguments or with an unterminated name");
        }
        validate(ts, call.name, call.args_json, strlen(call.args_json));
    } else if (memchr(err.text, '\0', sizeof(err.text)) == NULL) {
        fuzz_fail("parse error text is not NUL-terminated");
    }
    pipit_call_clear(&call);
    if (call.args_json != NULL) {
        fuzz_fail("pipit_call_clear left args_json set");
    }
    free(text);
    return 0;
}
