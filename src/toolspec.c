/*
 * toolspec.c - loading a tool set: the file, its form (a plain array of OpenAI/BFCL function
 * tools or MCP tool definitions, or a pack {"tools": [...], "pipit": {...}}), each tool's
 * name, description, parameters and "pipit" block (templates, undo), and the accessors of
 * pipit.h's "tool specifications".
 *
 * Parsing happens in two passes. jansson parses the text (syntax errors come with its
 * line/column); then the document is checked against pipit's format, each part by its own
 * module: JSON Schema (toolspec_schema.c, toolspec_keywords.c), the pack block
 * (toolspec_pack.c) and the tools' effects and examples (toolspec_effects.c). Semantic errors
 * carry file:line:column and the JSON path (toolspec_parser.c). Serialization and argument
 * validation are in toolspec_serialize.c and toolspec_check.c.
 *
 * Everything is bounded: file size, tool count, properties, depth, string lengths (see
 * toolspec.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "toolspec.h"

#include "status.h"
#include "toolspec_effects.h"
#include "toolspec_json.h"
#include "toolspec_keywords.h"
#include "toolspec_pack.h"
#include "toolspec_parser.h"
#include "toolspec_schema.h"
#include "utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *DEFAULT_SUCCESS = "Done.";
static const char *DEFAULT_FAILURE = "I couldn't do that: {error}.";

/* A tool name: letters, digits, '_', '-', '.' (OpenAI's [a-zA-Z0-9_-], plus the dots of
 * MCP and BFCL names). The call syntaxes and the grammars take every such name as is. */
static bool is_tool_name(const char *s) {
    if (s == NULL || s[0] == '\0') {
        return false;
    }
    for (const char *p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.')) {
            return false;
        }
    }
    return true;
}

/* ============================================================================
 * templates */

/* A value map "v=text|v=text|*=text" (`n` bytes) of the placeholder at character `at`: one or
 * more entries, each with a non-empty value before its "=". */
static bool
check_value_map(struct ts_parser *P, const char *map, size_t n, const char *path, size_t at) {
    size_t i = 0;
    do {
        size_t e = i;
        while (e < n && map[e] != '|') {
            e++;
        }
        const char *eq = memchr(map + i, '=', e - i);
        if (eq == NULL || eq == map + i) {
            ts_fail(P, path, false,
                    "template: the value map of the placeholder at character %zu needs "
                    "value=text entries separated by \"|\", got \"%.*s\"",
                    at, (int)(e - i), map + i);
            return false;
        }
        i = e + 1;
    } while (i <= n);
    return true;
}

/* Placeholders are {identifier} or {identifier:value map}; "{{" and "}}" are literal braces. */
static bool check_template(struct ts_parser *P, const char *text, const char *path) {
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '{') {
            if (i + 1 < n && text[i + 1] == '{') {
                i++;
                continue;
            }
            size_t j = i + 1;
            while (j < n && text[j] != '}' && text[j] != '{') {
                j++;
            }
            if (j >= n || text[j] != '}') {
                ts_fail(P, path, false, "template: unbalanced \"{\" at character %zu",
                        utf8_count(text, i) + 1);
                return false;
            }
            char name[PIPIT_TOOLSPEC_MAX_NAME + 1];
            /* {name} or {name:value map}, the map "v=text|v=text|*=text" */
            const char *colon = memchr(text + i + 1, ':', j - i - 1);
            size_t len = colon != NULL ? (size_t)(colon - (text + i + 1)) : j - i - 1;
            if (colon != NULL && !check_value_map(P, colon + 1, (size_t)(text + j - colon - 1),
                                                  path, utf8_count(text, i) + 1)) {
                return false;
            }
            if (len == 0 || len > PIPIT_TOOLSPEC_MAX_NAME) {
                ts_fail(P, path, false,
                        "template: placeholder at character %zu must be {name} with a name of "
                        "1..%d characters",
                        utf8_count(text, i) + 1, PIPIT_TOOLSPEC_MAX_NAME);
                return false;
            }
            memcpy(name, text + i + 1, len);
            name[len] = '\0';
            if (!ts_is_identifier(name)) {
                ts_fail(P, path, false,
                        "template: placeholder {%s} is not an identifier [a-zA-Z_][a-zA-Z0-9_]*",
                        name);
                return false;
            }
            i = j;
        } else if (text[i] == '}') {
            if (i + 1 < n && text[i + 1] == '}') {
                i++;
                continue;
            }
            ts_fail(P, path, false, "template: unbalanced \"}\" at character %zu",
                    utf8_count(text, i) + 1);
            return false;
        }
    }
    return true;
}

/* ============================================================================
 * tools */

static void tool_clear(struct pipit_tool *t) {
    json_decref(t->own_function);
    free(t->name);
    free(t->description);
    ts_schema_free(t->params);
    free(t->success);
    for (size_t i = 0; i < t->n_failures; i++) {
        free(t->failures[i].code);
        free(t->failures[i].text);
    }
    free(t->failures);
    for (size_t i = 0; i < t->n_undo_keys; i++) {
        free(t->undo_keys[i]);
    }
    free(t->undo_keys);
    memset(t, 0, sizeof(*t));
}

/* A failure reason code: the catch-all "*", or a tool name's characters. */
static bool is_code(const char *s) {
    return strcmp(s, "*") == 0 || is_tool_name(s);
}

static bool
parse_undo(struct ts_parser *P, struct pipit_tool *t, const json_t *undo, const char *path) {
    if (json_is_string(undo)) {
        if (strcmp(json_string_value(undo), "none") != 0) {
            ts_fail(P, path, false, "expected \"none\" or {\"keys\": [...]}, got \"%s\"",
                    json_string_value(undo));
            return false;
        }
        t->undo = PIPIT_UNDO_IMPOSSIBLE;
        return true;
    }
    if (!json_is_object(undo)) {
        ts_fail(P, path, false, "expected \"none\" or {\"keys\": [...]}, got %s",
                ts_json_kind(undo));
        return false;
    }
    static const char *const allowed[] = {"keys", NULL};
    if (!ts_only_keys(P, undo, path, allowed, "undo")) {
        return false;
    }
    const json_t *keys = json_object_get(undo, "keys");
    char kp[TS_PATH_CAP];
    ts_path_key(kp, sizeof(kp), path, "keys");
    if (keys == NULL) {
        ts_fail(P, path, false, "missing \"keys\"");
        return false;
    }
    if (!json_is_array(keys)) {
        ts_fail(P, kp, false, "expected an array, got %s", ts_json_kind(keys));
        return false;
    }
    size_t n = json_array_size(keys);
    if (n == 0 || n > PIPIT_TOOLSPEC_MAX_UNDO_KEYS) {
        ts_fail(P, kp, false, "expected 1..%d state keys, got %zu", PIPIT_TOOLSPEC_MAX_UNDO_KEYS,
                n);
        return false;
    }
    t->undo_keys = calloc(n, sizeof(char *));
    if (t->undo_keys == NULL) {
        ts_nomem(P);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(keys, i);
        char p[TS_PATH_CAP];
        ts_path_index(p, sizeof(p), kp, i);
        if (!json_is_string(v) || !ts_is_identifier(json_string_value(v)) ||
            json_string_length(v) > PIPIT_TOOLSPEC_MAX_NAME) {
            ts_fail(P, p, false, "a state key must be a string matching [a-zA-Z_][a-zA-Z0-9_]*");
            return false;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(t->undo_keys[k], json_string_value(v)) == 0) {
                ts_fail(P, p, false, "duplicate state key \"%s\"", json_string_value(v));
                return false;
            }
        }
        t->undo_keys[i] = ts_dup_str(json_string_value(v));
        if (t->undo_keys[i] == NULL) {
            ts_nomem(P);
            return false;
        }
        t->n_undo_keys = i + 1;
    }
    t->undo = PIPIT_UNDO_KEYS;
    return true;
}

static bool
parse_pipit(struct ts_parser *P, struct pipit_tool *t, const json_t *pp, const char *path) {
    if (!json_is_object(pp)) {
        ts_fail(P, path, false, "expected an object, got %s", ts_json_kind(pp));
        return false;
    }
    static const char *const allowed[] = {"success", "failure", "undo", "effect", "examples", NULL};
    if (!ts_only_keys(P, pp, path, allowed,
                      "pipit (expected success, failure, undo, effect, examples)")) {
        return false;
    }
    char p[TS_PATH_CAP];
    if (json_object_get(pp, "success") != NULL) {
        const char *s =
            ts_get_string(P, pp, "success", path, false, PIPIT_TOOLSPEC_MAX_TEMPLATE, true);
        ts_path_key(p, sizeof(p), path, "success");
        if (s == NULL || !check_template(P, s, p)) {
            return false;
        }
        t->success = ts_dup_str(s);
        if (t->success == NULL) {
            ts_nomem(P);
            return false;
        }
    }
    const json_t *fail = json_object_get(pp, "failure");
    if (fail != NULL) {
        char fp[TS_PATH_CAP];
        ts_path_key(fp, sizeof(fp), path, "failure");
        if (!json_is_object(fail)) {
            ts_fail(P, fp, false, "expected an object of code: template, got %s",
                    ts_json_kind(fail));
            return false;
        }
        size_t n = json_object_size(fail);
        if (n > PIPIT_TOOLSPEC_MAX_CODES) {
            ts_fail(P, fp, false, "%zu failure templates, the limit is %d", n,
                    PIPIT_TOOLSPEC_MAX_CODES);
            return false;
        }
        if (n > 0 && json_object_get(fail, "*") == NULL) {
            ts_fail(P, fp, false, "missing the catch-all \"*\" template");
            return false;
        }
        t->failures = calloc(n > 0 ? n : 1, sizeof(*t->failures));
        if (t->failures == NULL) {
            ts_nomem(P);
            return false;
        }
        const char *code;
        json_t *v;
        json_object_foreach((json_t *)fail, code, v) {
            ts_path_key(p, sizeof(p), fp, code);
            if (!is_code(code) || strlen(code) > PIPIT_TOOLSPEC_MAX_NAME) {
                ts_fail(P, p, true,
                        "failure code \"%s\" must be \"*\" or 1..%d characters of "
                        "[a-zA-Z0-9_.-]",
                        code, PIPIT_TOOLSPEC_MAX_NAME);
                return false;
            }
            const char *s =
                ts_get_string(P, fail, code, fp, false, PIPIT_TOOLSPEC_MAX_TEMPLATE, true);
            if (s == NULL || !check_template(P, s, p)) {
                return false;
            }
            struct pipit_tool_template *tt = &t->failures[t->n_failures];
            tt->code = ts_dup_str(code);
            tt->text = ts_dup_str(s);
            if (tt->code == NULL || tt->text == NULL) {
                free(tt->code);
                free(tt->text);
                ts_nomem(P);
                return false;
            }
            t->n_failures++;
        }
    }
    const json_t *undo = json_object_get(pp, "undo");
    t->undo = PIPIT_UNDO_NO_STATE;
    if (undo != NULL) {
        ts_path_key(p, sizeof(p), path, "undo");
        return parse_undo(P, t, undo, p);
    }
    return true;
}

static bool
parse_tool(struct ts_parser *P, struct pipit_tool *t, const json_t *entry, const char *path) {
    if (!json_is_object(entry)) {
        ts_fail(P, path, false, "expected a tool object, got %s", ts_json_kind(entry));
        return false;
    }
    /* an MCP tool definition (tools/list): {name, title?, description?, inputSchema, ...} */
    bool mcp =
        json_object_get(entry, "type") == NULL && json_object_get(entry, "inputSchema") != NULL;
    const json_t *fn = entry;
    char fp[TS_PATH_CAP];
    pipit_format(fp, sizeof(fp), "%s", path);
    if (mcp) {
        static const char *const mcp_allowed[] = {"name",        "title",        "description",
                                                  "inputSchema", "outputSchema", "annotations",
                                                  "_meta",       "pipit",        NULL};
        if (!ts_only_keys(P, entry, path, mcp_allowed,
                          "an MCP tool (expected name, title, description, inputSchema, "
                          "outputSchema, annotations, _meta, pipit)")) {
            return false;
        }
    } else {
        static const char *const allowed[] = {"type", "function", "pipit", NULL};
        if (!ts_only_keys(P, entry, path, allowed, "a tool (expected type, function, pipit)")) {
            return false;
        }
        const char *type = ts_get_string(P, entry, "type", path, true, 64, false);
        if (type == NULL) {
            return false;
        }
        if (strcmp(type, "function") != 0) {
            char p[TS_PATH_CAP];
            ts_path_key(p, sizeof(p), path, "type");
            ts_fail(P, p, false, "expected \"function\", got \"%s\"", type);
            return false;
        }
        fn = json_object_get(entry, "function");
        ts_path_key(fp, sizeof(fp), path, "function");
        if (fn == NULL) {
            ts_fail(P, path, false, "missing \"function\"");
            return false;
        }
        if (!json_is_object(fn)) {
            ts_fail(P, fp, false, "expected an object, got %s", ts_json_kind(fn));
            return false;
        }
        t->function = fn;
        /* "response": BFCL's description of what the function returns (an annotation) */
        static const char *const fn_allowed[] = {"name",   "description", "parameters",
                                                 "strict", "response",    NULL};
        if (!ts_only_keys(P, fn, fp, fn_allowed,
                          "a function (expected name, description, parameters)")) {
            return false;
        }
    }
    const char *name = ts_get_string(P, fn, "name", fp, true, 1024, true);
    if (name == NULL) {
        return false;
    }
    char np[TS_PATH_CAP];
    ts_path_key(np, sizeof(np), fp, "name");
    if (strlen(name) > PIPIT_TOOLSPEC_MAX_NAME) {
        ts_fail(P, np, false, "tool name is %zu characters long, the limit is %d", strlen(name),
                PIPIT_TOOLSPEC_MAX_NAME);
        return false;
    }
    if (!is_tool_name(name)) {
        ts_fail(P, np, false, "tool name \"%s\" must match [a-zA-Z0-9_.-]+", name);
        return false;
    }
    const char *desc = NULL;
    if (mcp && json_object_get(fn, "description") == NULL) {
        /* MCP makes the description optional: the title, else the name, stands in */
        desc = json_object_get(fn, "title") != NULL
                   ? ts_get_string(P, fn, "title", fp, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, true)
                   : name;
    } else {
        desc = ts_get_string(P, fn, "description", fp, true, PIPIT_TOOLSPEC_MAX_DESCRIPTION, true);
    }
    if (desc == NULL) {
        return false;
    }
    if (mcp) {
        t->own_function = json_pack("{s:s,s:s,s:O}", "name", name, "description", desc,
                                    "parameters", json_object_get(fn, "inputSchema"));
        if (t->own_function == NULL) {
            ts_nomem(P);
            return false;
        }
        t->function = t->own_function;
    }
    const json_t *strict = json_object_get(fn, "strict");
    if (strict != NULL && !json_is_boolean(strict)) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), fp, "strict");
        ts_fail(P, p, false, "expected a boolean, got %s", ts_json_kind(strict));
        return false;
    }
    t->name = ts_dup_str(name);
    t->description = ts_dup_str(desc);
    if (t->name == NULL || t->description == NULL) {
        ts_nomem(P);
        return false;
    }
    const json_t *params = json_object_get(fn, mcp ? "inputSchema" : "parameters");
    char pp[TS_PATH_CAP];
    ts_path_key(pp, sizeof(pp), fp, mcp ? "inputSchema" : "parameters");
    if (params != NULL) {
        P->doc_root = params;
        pipit_format(P->doc_path, sizeof(P->doc_path), "%s", pp);
        P->n_refs = 0;
        P->n_nodes = 0;
        t->params = ts_parse_schema(P, params, pp, 1);
        if (t->params == NULL) {
            return false;
        }
        if (t->params->type != PIPIT_SCHEMA_OBJECT) {
            char p[TS_PATH_CAP];
            ts_path_key(p, sizeof(p), pp, "type");
            ts_fail(P, p, false, "parameters must be of type object, got %s",
                    pipit_schema_type_name(t->params->type));
            return false;
        }
    } else {
        /* omitted parameters: a tool without arguments */
        t->params = ts_schema_alloc(P, PIPIT_SCHEMA_OBJECT, NULL);
        if (t->params == NULL) {
            return false;
        }
    }
    const json_t *pip = json_object_get(entry, "pipit");
    t->undo = PIPIT_UNDO_NO_STATE;
    if (pip != NULL) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "pipit");
        return parse_pipit(P, t, pip, p);
    }
    return true;
}

/* ============================================================================
 * loading */

void pipit_toolset_free(struct pipit_toolset *ts) {
    if (ts == NULL) {
        return;
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        tool_clear(&ts->tools[i]);
    }
    free(ts->tools);
    for (size_t i = 0; ts->tool_pk != NULL && i < ts->n_tools; i++) {
        ts_tool_pack_clear(&ts->tool_pk[i]);
    }
    free(ts->tool_pk);
    ts_pack_free(ts->pack);
    json_decref(ts->root);
    json_decref(ts->derived);
    free(ts->name);
    free(ts);
}

enum pipit_status pipit_toolset_load_string(const char *text,
                                            size_t len,
                                            const char *name,
                                            struct pipit_toolset **out,
                                            struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "toolspec: out is NULL");
    }
    *out = NULL;
    if (text == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "toolspec: text is NULL");
    }
    if (name == NULL) {
        name = "<string>";
    }
    if (len > PIPIT_TOOLSPEC_MAX_FILE_BYTES) {
        return pipit_error_set(err, PIPIT_ERR_SPEC,
                               "%s: specification is %zu bytes, the limit is %d bytes", name, len,
                               PIPIT_TOOLSPEC_MAX_FILE_BYTES);
    }
    struct ts_parser P = {.name = name, .text = text, .len = len, .err = err, .status = PIPIT_OK};
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        if (err != NULL) {
            err->status = PIPIT_ERR_SPEC;
            err->line = jerr.line > 0 ? jerr.line : 0;
            err->column = jerr.column > 0 ? jerr.column : 0;
            err->offset = jerr.position >= 0 ? jerr.position : -1;
            pipit_format(err->text, sizeof(err->text), "%s:%d:%d: $: invalid JSON: %s", name,
                         (int)err->line, (int)err->column, jerr.text);
        }
        return PIPIT_ERR_SPEC;
    }
    struct pipit_toolset *ts = calloc(1, sizeof(*ts));
    if (ts == NULL || (ts->name = ts_dup_str(name)) == NULL) {
        free(ts);
        json_decref(root);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "toolspec: out of memory: %s", name);
    }
    ts->root = root;
    /* a plain array of tools, or {"tools": [...], "pipit": {...}} (a pack) */
    const json_t *list = root;
    const char *tools_path = "$";
    if (json_is_object(root)) {
        static const char *const allowed[] = {"tools", "pipit", NULL};
        list = json_object_get(root, "tools");
        tools_path = "$.tools";
        if (list == NULL && json_object_get(root, "pipit") == NULL) {
            ts_fail(&P, "$", false,
                    "expected an array of tools or {\"tools\": [...], \"pipit\": {...}}, "
                    "got object");
        } else if (!ts_only_keys(&P, root, "$", allowed, "a tool set (expected tools, pipit)")) {
            list = NULL;
        } else if (list == NULL) {
            ts_fail(&P, "$", false, "missing \"tools\"");
        } else if (json_object_get(root, "pipit") != NULL) {
            ts_parse_pack(&P, ts, json_object_get(root, "pipit"), "$.pipit");
        }
    }
    if (P.status != PIPIT_OK) {
        /* reported */
    } else if (!json_is_array(list)) {
        ts_fail(&P, tools_path, false, "expected an array of tools, got %s", ts_json_kind(list));
    } else if (json_array_size(list) == 0 || json_array_size(list) > PIPIT_TOOLSPEC_MAX_TOOLS) {
        ts_fail(&P, tools_path, false, "expected 1..%d tools, got %zu", PIPIT_TOOLSPEC_MAX_TOOLS,
                json_array_size(list));
    } else {
        size_t n = json_array_size(list);
        ts->tools = calloc(n, sizeof(*ts->tools));
        if (ts->tools == NULL) {
            ts_nomem(&P);
        }
        for (size_t i = 0; i < n && P.status == PIPIT_OK; i++) {
            char path[TS_PATH_CAP];
            ts_path_index(path, sizeof(path), tools_path, i);
            ts->n_tools = i + 1;
            if (!parse_tool(&P, &ts->tools[i], json_array_get(list, i), path)) {
                break;
            }
            for (size_t k = 0; k < i; k++) {
                if (strcmp(ts->tools[k].name, ts->tools[i].name) == 0) {
                    char np[TS_PATH_CAP];
                    pipit_format(np, sizeof(np), "%s.function.name", path);
                    ts_fail(&P, np, false, "duplicate tool name \"%s\" (first defined at %s[%zu])",
                            ts->tools[i].name, tools_path, k);
                    break;
                }
            }
        }
        if (P.status == PIPIT_OK) {
            ts_parse_tool_packs(&P, ts, list, tools_path);
        }
    }
    ts->derived = P.derived;
    if (P.status != PIPIT_OK) {
        pipit_toolset_free(ts);
        return P.status;
    }
    *out = ts;
    return PIPIT_OK;
}

enum pipit_status
pipit_toolset_load_file(const char *path, struct pipit_toolset **out, struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL || path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "toolspec: path or out is NULL");
    }
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return pipit_error_set(err, PIPIT_ERR_IO, "toolspec: cannot open: %s: %s", path,
                               strerror(errno));
    }
    char *buf = malloc(PIPIT_TOOLSPEC_MAX_FILE_BYTES + 1);
    if (buf == NULL) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "toolspec: out of memory: %s", path);
    }
    size_t n = fread(buf, 1, PIPIT_TOOLSPEC_MAX_FILE_BYTES + 1, f);
    bool failed = ferror(f) != 0;
    fclose(f);
    if (failed) {
        free(buf);
        return pipit_error_set(err, PIPIT_ERR_IO, "toolspec: cannot read: %s", path);
    }
    if (n > PIPIT_TOOLSPEC_MAX_FILE_BYTES) {
        free(buf);
        return pipit_error_set(err, PIPIT_ERR_SPEC,
                               "%s: specification is larger than the limit of %d bytes", path,
                               PIPIT_TOOLSPEC_MAX_FILE_BYTES);
    }
    enum pipit_status st = pipit_toolset_load_string(buf, n, path, out, err);
    free(buf);
    return st;
}

/* ============================================================================
 * accessors */

const struct pipit_schema_prop *pipit_tool_only_required(const struct pipit_tool *t,
                                                         size_t *n_required) {
    const struct pipit_schema_prop *one = NULL;
    size_t n = 0;
    for (size_t j = 0; t != NULL && t->params != NULL && j < t->params->n_props; j++) {
        if (t->params->props[j].required) {
            one = &t->params->props[j];
            n++;
        }
    }
    if (n_required != NULL) {
        *n_required = n;
    }
    return n == 1 ? one : NULL;
}

const struct pipit_tool *pipit_toolset_tool(const struct pipit_toolset *ts, size_t index) {
    if (ts == NULL || index >= ts->n_tools) {
        return NULL;
    }
    return &ts->tools[index];
}

size_t pipit_toolset_n_tools(const struct pipit_toolset *ts) {
    return ts == NULL ? 0 : ts->n_tools;
}

const char *pipit_toolset_pack_name(const struct pipit_toolset *ts) {
    return ts == NULL || ts->pack == NULL ? NULL : ts->pack->name;
}

void pipit_toolset_content_hash(const struct pipit_toolset *ts, char out[17]) {
    uint64_t h = 0xcbf29ce484222325ull;
    char *text = ts == NULL || ts->root == NULL
                     ? NULL
                     : json_dumps(ts->root, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
    for (const char *c = text != NULL ? text : ""; *c != '\0'; c++) {
        h = (h ^ (uint8_t)*c) * 0x100000001b3ull;
    }
    free(text);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

const char *pipit_toolset_tool_name(const struct pipit_toolset *ts, size_t index) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, index);
    return t == NULL ? NULL : t->name;
}

const char *pipit_toolset_tool_description(const struct pipit_toolset *ts, size_t index) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, index);
    return t == NULL ? NULL : t->description;
}

int32_t pipit_toolset_find(const struct pipit_toolset *ts, const char *name) {
    if (ts == NULL || name == NULL) {
        return -1;
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (strcmp(ts->tools[i].name, name) == 0) {
            return (int32_t)i;
        }
    }
    return -1;
}

const char *pipit_toolset_success_template(const struct pipit_toolset *ts, size_t index) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, index);
    if (t == NULL) {
        return NULL;
    }
    return t->success != NULL ? t->success : DEFAULT_SUCCESS;
}

const char *
pipit_toolset_failure_template(const struct pipit_toolset *ts, size_t index, const char *code) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, index);
    if (t == NULL) {
        return NULL;
    }
    const char *star = NULL;
    for (size_t i = 0; i < t->n_failures; i++) {
        if (code != NULL && strcmp(t->failures[i].code, code) == 0) {
            return t->failures[i].text;
        }
        if (strcmp(t->failures[i].code, "*") == 0) {
            star = t->failures[i].text;
        }
    }
    return star != NULL ? star : DEFAULT_FAILURE;
}

enum pipit_undo_kind pipit_toolset_undo(const struct pipit_toolset *ts,
                                        size_t index,
                                        const char *const **keys,
                                        size_t *n_keys) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, index);
    if (keys != NULL) {
        *keys = NULL;
    }
    if (n_keys != NULL) {
        *n_keys = 0;
    }
    if (t == NULL) {
        return PIPIT_UNDO_NO_STATE;
    }
    if (t->undo == PIPIT_UNDO_KEYS) {
        if (keys != NULL) {
            *keys = (const char *const *)t->undo_keys;
        }
        if (n_keys != NULL) {
            *n_keys = t->n_undo_keys;
        }
    }
    return t->undo;
}
