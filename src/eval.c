/*
 * eval.c - scenario sets, the ablation configurations, scoring and reports.
 *
 * A scenario is one JSON line (docs/eval.md): a device, its initial state, turns with the
 * user's words and what should happen, and injected tool failures. Running a set means, for
 * every configuration and every scenario, a fresh agent and one pipit_agent_turn() per turn;
 * every turn becomes an `eval_turn_record` and metrics are computed from those records on
 * demand, overall or per category. The oracle (pipit_scenarios_check) runs the expected calls
 * on the simulated device instead of a model, which catches expectations that contradict the
 * device.
 *
 * Invariants: a report's categories are at most EVAL_MAX_CATEGORIES names; records are kept
 * per configuration in run order; misses are capped at EVAL_MAX_MISSES lines per
 * configuration. Nothing here prints; progress goes to a callback.
 */
#define _POSIX_C_SOURCE 200809L

#include "eval.h"

#include "device.h"
#include "status.h"
#include "strbuf.h"
#include "toolspec.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EVAL_MAX_UTTERANCE 4000
#define EVAL_MAX_INJECT    16
#define EVAL_UNDO_SLOTS    8

/* ============================================================================ parsing */

struct parse_ctx {
    const char *name;
    int32_t line;
    struct pipit_error *err;
};

static enum pipit_status bad(const struct parse_ctx *pc, const char *path, const char *fmt, ...)
    PIPIT_PRINTF(3, 4);

static enum pipit_status bad(const struct parse_ctx *pc, const char *path, const char *fmt, ...) {
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    pipit_error_set(pc->err, PIPIT_ERR_JSON, "%s:%d: %s: %s", pc->name, (int)pc->line, path, msg);
    if (pc->err != NULL) {
        pc->err->line = pc->line;
    }
    return PIPIT_ERR_JSON;
}

static const char *json_type_name(const json_t *v) {
    switch (json_typeof(v)) {
        case JSON_OBJECT:
            return "an object";
        case JSON_ARRAY:
            return "an array";
        case JSON_STRING:
            return "a string";
        case JSON_INTEGER:
        case JSON_REAL:
            return "a number";
        case JSON_TRUE:
        case JSON_FALSE:
            return "a boolean";
        default:
            return "null";
    }
}

/* Reject keys outside `allowed` (NULL-terminated). */
static enum pipit_status check_keys(const struct parse_ctx *pc,
                                    const json_t *obj,
                                    const char *path,
                                    const char *const *allowed) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (size_t i = 0; allowed[i] != NULL && !ok; i++) {
            ok = strcmp(key, allowed[i]) == 0;
        }
        if (!ok) {
            struct strbuf b = {0};
            for (size_t i = 0; allowed[i] != NULL; i++) {
                strbuf_printf(&b, "%s\"%s\"", i > 0 ? ", " : "", allowed[i]);
            }
            char *list = strbuf_take(&b);
            enum pipit_status st = bad(pc, path, "unknown key \"%.40s\" (expected %s)", key,
                                       list != NULL ? list : "?");
            free(list);
            return st;
        }
    }
    return PIPIT_OK;
}

/* A string member: required or optional, 1..max_len bytes. */
static enum pipit_status get_string(const struct parse_ctx *pc,
                                    const json_t *obj,
                                    const char *parent,
                                    const char *key,
                                    bool required,
                                    size_t max_len,
                                    const char **out) {
    char path[160];
    pipit_format(path, sizeof(path), "%s.%s", parent, key);
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (v == NULL) {
        return required ? bad(pc, path, "missing") : PIPIT_OK;
    }
    if (!json_is_string(v)) {
        return bad(pc, path, "expected a string, got %s", json_type_name(v));
    }
    size_t n = json_string_length(v);
    if (n == 0 || n > max_len) {
        return bad(pc, path, "expected 1 to %zu bytes, got %zu", max_len, n);
    }
    *out = json_string_value(v);
    return PIPIT_OK;
}

/* "contains": {"arg": ["word", ...], ...}: non-empty strings (the oracle checks the argument
 * names against the tool's schema). NULL is fine. */
static enum pipit_status
parse_contains(const struct parse_ctx *pc, const json_t *c, const char *parent) {
    if (c == NULL) {
        return PIPIT_OK;
    }
    char p[192];
    pipit_format(p, sizeof(p), "%s.contains", parent);
    if (!json_is_object(c) || json_object_size(c) == 0) {
        return bad(pc, p, "expected an object {\"argument\": [\"word\", ...]}, got %s",
                   json_is_object(c) ? "an empty object" : json_type_name(c));
    }
    const char *key;
    json_t *words;
    json_object_foreach((json_t *)c, key, words) {
        char pk[256];
        pipit_format(pk, sizeof(pk), "%s.%s", p, key);
        if (!json_is_array(words) || json_array_size(words) == 0) {
            return bad(pc, pk, "expected a non-empty array of strings, got %s",
                       json_is_array(words) ? "an empty array" : json_type_name(words));
        }
        size_t i;
        json_t *w;
        json_array_foreach(words, i, w) {
            if (!json_is_string(w) || json_string_length(w) == 0) {
                char pi[272];
                pipit_format(pi, sizeof(pi), "%s[%zu]", pk, i);
                return bad(pc, pi, "expected a non-empty string");
            }
        }
    }
    return PIPIT_OK;
}

static enum pipit_status
parse_expect(const struct parse_ctx *pc, const json_t *arr, const char *path) {
    if (!json_is_array(arr)) {
        return bad(pc, path, "expected an array of calls, got %s", json_type_name(arr));
    }
    if (json_array_size(arr) > EVAL_MAX_EXPECT) {
        return bad(pc, path, "at most %d expected calls per turn, got %zu", EVAL_MAX_EXPECT,
                   json_array_size(arr));
    }
    static const char *const keys[] = {"tool", "args", "tol", "contains", NULL};
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        char p[160];
        pipit_format(p, sizeof(p), "%s[%zu]", path, i);
        if (!json_is_object(e)) {
            return bad(pc, p, "expected an object {\"tool\": ..., \"args\": {...}}, got %s",
                       json_type_name(e));
        }
        enum pipit_status st = check_keys(pc, e, p, keys);
        const char *tool = NULL;
        if (st == PIPIT_OK) {
            st = get_string(pc, e, p, "tool", true, 71, &tool);
        }
        if (st != PIPIT_OK) {
            return st;
        }
        json_t *args = json_object_get(e, "args");
        if (args != NULL && !json_is_object(args)) {
            char pa[176];
            pipit_format(pa, sizeof(pa), "%s.args", p);
            return bad(pc, pa, "expected an object, got %s", json_type_name(args));
        }
        json_t *tol = json_object_get(e, "tol");
        if (tol != NULL && (!json_is_number(tol) || !(json_number_value(tol) >= 0))) {
            char pt[176];
            pipit_format(pt, sizeof(pt), "%s.tol", p);
            return bad(pc, pt, "expected a number >= 0");
        }
        st = parse_contains(pc, json_object_get(e, "contains"), p);
        if (st != PIPIT_OK) {
            return st;
        }
    }
    return PIPIT_OK;
}

/* Whether a turn asks to undo: "undo" true, a count of actions or a tool's name. */
static bool eval_undo_marked(const json_t *turn) {
    const json_t *undo = json_object_get(turn, "undo");
    return json_is_true(undo) || json_is_integer(undo) || json_is_string(undo);
}

static enum pipit_status parse_turn(const struct parse_ctx *pc, const json_t *t, size_t index) {
    char path[64];
    pipit_format(path, sizeof(path), "$.turns[%zu]", index);
    if (!json_is_object(t)) {
        return bad(pc, path, "expected an object, got %s", json_type_name(t));
    }
    static const char *const keys[] = {"user", "expect", "state", "reply_contains",
                                       "undo", "notes",  NULL};
    enum pipit_status st = check_keys(pc, t, path, keys);
    const char *user = NULL;
    if (st == PIPIT_OK) {
        st = get_string(pc, t, path, "user", true, EVAL_MAX_UTTERANCE, &user);
    }
    if (st != PIPIT_OK) {
        return st;
    }
    char p[96];
    json_t *expect = json_object_get(t, "expect");
    pipit_format(p, sizeof(p), "%s.expect", path);
    if (expect == NULL) {
        return bad(pc, p, "missing (use [] when no tool call is expected)");
    }
    st = parse_expect(pc, expect, p);
    if (st != PIPIT_OK) {
        return st;
    }
    json_t *undo = json_object_get(t, "undo");
    pipit_format(p, sizeof(p), "%s.undo", path);
    if (undo != NULL && !json_is_boolean(undo) && !json_is_integer(undo) && !json_is_string(undo)) {
        return bad(pc, p, "expected true, false, a count of actions or a tool's name, got %s",
                   json_type_name(undo));
    }
    if (json_is_integer(undo) &&
        (json_integer_value(undo) < 1 || json_integer_value(undo) > EVAL_UNDO_SLOTS)) {
        return bad(pc, p, "a count of actions to undo is 1..%d, got %lld", EVAL_UNDO_SLOTS,
                   (long long)json_integer_value(undo));
    }
    if (json_is_string(undo) && json_string_length(undo) == 0) {
        return bad(pc, p, "expected a tool's name, got \"\"");
    }
    if (eval_undo_marked(t) && json_array_size(expect) > 0) {
        pipit_format(p, sizeof(p), "%s.expect", path);
        return bad(pc, p, "an undo turn makes no call: expected [], got %zu calls",
                   json_array_size(expect));
    }
    json_t *state = json_object_get(t, "state");
    if (state != NULL && !json_is_object(state)) {
        pipit_format(p, sizeof(p), "%s.state", path);
        return bad(pc, p, "expected an object of state keys, got %s", json_type_name(state));
    }
    json_t *rc = json_object_get(t, "reply_contains");
    if (rc != NULL) {
        pipit_format(p, sizeof(p), "%s.reply_contains", path);
        if (!json_is_array(rc)) {
            return bad(pc, p, "expected an array of strings, got %s", json_type_name(rc));
        }
        size_t i;
        json_t *s;
        json_array_foreach(rc, i, s) {
            if (!json_is_string(s) || json_string_length(s) == 0) {
                char pi[112];
                pipit_format(pi, sizeof(pi), "%s[%zu]", p, i);
                return bad(pc, pi, "expected a non-empty string");
            }
        }
    }
    return PIPIT_OK;
}

static enum pipit_status
parse_inject(const struct parse_ctx *pc, const json_t *arr, size_t n_turns) {
    if (!json_is_array(arr)) {
        return bad(pc, "$.inject", "expected an array, got %s", json_type_name(arr));
    }
    if (json_array_size(arr) > EVAL_MAX_INJECT) {
        return bad(pc, "$.inject", "at most %d injections, got %zu", EVAL_MAX_INJECT,
                   json_array_size(arr));
    }
    static const char *const keys[] = {"turn", "tool", "error", "message", NULL};
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        char p[64];
        pipit_format(p, sizeof(p), "$.inject[%zu]", i);
        if (!json_is_object(e)) {
            return bad(pc, p, "expected an object, got %s", json_type_name(e));
        }
        enum pipit_status st = check_keys(pc, e, p, keys);
        const char *s = NULL;
        if (st == PIPIT_OK) {
            st = get_string(pc, e, p, "tool", true, 71, &s);
        }
        if (st == PIPIT_OK) {
            st = get_string(pc, e, p, "error", true, 63, &s);
        }
        if (st == PIPIT_OK) {
            st = get_string(pc, e, p, "message", false, 255, &s);
        }
        if (st != PIPIT_OK) {
            return st;
        }
        json_t *turn = json_object_get(e, "turn");
        char pt[80];
        pipit_format(pt, sizeof(pt), "%s.turn", p);
        if (!json_is_integer(turn)) {
            return bad(pc, pt, turn == NULL ? "missing" : "expected an integer turn index");
        }
        json_int_t k = json_integer_value(turn);
        if (k < 0 || (size_t)k >= n_turns) {
            return bad(pc, pt, "turn %lld is out of range (the scenario has %zu turns)",
                       (long long)k, n_turns);
        }
    }
    return PIPIT_OK;
}

static enum pipit_status
parse_scenario(const struct parse_ctx *pc, json_t *root, struct eval_scenario *sc) {
    if (!json_is_object(root)) {
        return bad(pc, "$", "expected a scenario object, got %s", json_type_name(root));
    }
    static const char *const keys[] = {"id",    "category", "device", "init",
                                       "turns", "inject",   "notes",  NULL};
    enum pipit_status st = check_keys(pc, root, "$", keys);
    const char *id = NULL, *cat = NULL, *dev = NULL;
    if (st == PIPIT_OK) {
        st = get_string(pc, root, "$", "id", true, sizeof(sc->id) - 1, &id);
    }
    if (st == PIPIT_OK) {
        st = get_string(pc, root, "$", "category", true, sizeof(sc->category) - 1, &cat);
    }
    if (st == PIPIT_OK) {
        st = get_string(pc, root, "$", "device", false, sizeof(sc->device) - 1, &dev);
    }
    if (st != PIPIT_OK) {
        return st;
    }
    json_t *init = json_object_get(root, "init");
    if (init != NULL && !json_is_object(init)) {
        return bad(pc, "$.init", "expected an object of state keys, got %s", json_type_name(init));
    }
    json_t *turns = json_object_get(root, "turns");
    if (turns == NULL) {
        return bad(pc, "$.turns", "missing");
    }
    if (!json_is_array(turns) || json_array_size(turns) == 0 ||
        json_array_size(turns) > PIPIT_SCENARIO_MAX_TURNS) {
        return bad(pc, "$.turns", "expected an array of 1 to %d turns", PIPIT_SCENARIO_MAX_TURNS);
    }
    for (size_t i = 0; i < json_array_size(turns); i++) {
        st = parse_turn(pc, json_array_get(turns, i), i);
        if (st != PIPIT_OK) {
            return st;
        }
    }
    json_t *inject = json_object_get(root, "inject");
    if (inject != NULL) {
        st = parse_inject(pc, inject, json_array_size(turns));
        if (st != PIPIT_OK) {
            return st;
        }
    }
    pipit_format(sc->id, sizeof(sc->id), "%s", id);
    pipit_format(sc->category, sizeof(sc->category), "%s", cat);
    pipit_format(sc->device, sizeof(sc->device), "%s", dev != NULL ? dev : "camera");
    sc->device_given = dev != NULL;
    sc->line = pc->line;
    sc->init = init != NULL ? json_incref(init) : NULL;
    sc->turns = json_incref(turns);
    sc->inject = inject != NULL ? json_incref(inject) : NULL;
    return PIPIT_OK;
}

void pipit_scenarios_free(struct pipit_scenarios *set) {
    if (set == NULL) {
        return;
    }
    for (size_t i = 0; i < set->n; i++) {
        json_decref(set->items[i].init);
        json_decref(set->items[i].turns);
        json_decref(set->items[i].inject);
    }
    free(set->items);
    free(set);
}

enum pipit_status pipit_scenarios_load_string(const char *text,
                                              size_t len,
                                              const char *name,
                                              struct pipit_scenarios **out,
                                              struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL || (text == NULL && len > 0)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "eval: NULL argument");
    }
    *out = NULL;
    struct pipit_scenarios *set = calloc(1, sizeof(*set));
    if (set == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "eval: out of memory");
    }
    pipit_format(set->name, sizeof(set->name), "%s", name != NULL ? name : "<string>");
    struct parse_ctx pc = {set->name, 0, err};
    size_t cap = 0;
    size_t pos = 0;
    enum pipit_status st = PIPIT_OK;
    while (pos < len && st == PIPIT_OK) {
        pc.line++;
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t n = nl != NULL ? (size_t)(nl - line) : len - pos;
        pos += n + (nl != NULL ? 1 : 0);
        size_t k = 0;
        while (k < n && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r')) {
            k++;
        }
        if (k == n || line[k] == '#') {
            continue;
        }
        if (n > EVAL_MAX_LINE) {
            st = bad(&pc, "$", "the line is longer than %d bytes", EVAL_MAX_LINE);
            break;
        }
        if (set->n == EVAL_MAX_SCENARIOS) {
            st = bad(&pc, "$", "more than %d scenarios", EVAL_MAX_SCENARIOS);
            break;
        }
        json_error_t jerr;
        json_t *root = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
        if (root == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_JSON, "%s:%d:%d: $: invalid JSON: %s", set->name,
                                 (int)pc.line, jerr.column, jerr.text);
            if (err != NULL) {
                err->line = pc.line;
                err->column = jerr.column;
            }
            break;
        }
        if (set->n == cap) {
            size_t nc = cap > 0 ? cap * 2 : 64;
            struct eval_scenario *items = realloc(set->items, nc * sizeof(*items));
            if (items == NULL) {
                json_decref(root);
                st = pipit_error_set(err, PIPIT_ERR_NOMEM, "eval: out of memory");
                break;
            }
            set->items = items;
            cap = nc;
        }
        struct eval_scenario *sc = &set->items[set->n];
        memset(sc, 0, sizeof(*sc));
        st = parse_scenario(&pc, root, sc);
        json_decref(root);
        if (st != PIPIT_OK) {
            break;
        }
        for (size_t i = 0; i < set->n; i++) {
            if (strcmp(set->items[i].id, sc->id) == 0) {
                st = bad(&pc, "$.id", "duplicate id \"%s\" (first on line %d)", sc->id,
                         (int)set->items[i].line);
                json_decref(sc->init);
                json_decref(sc->turns);
                json_decref(sc->inject);
                break;
            }
        }
        if (st == PIPIT_OK) {
            set->n++;
        }
    }
    if (st == PIPIT_OK && set->n == 0) {
        pc.line = 0;
        st = pipit_error_set(err, PIPIT_ERR_JSON, "%s: no scenarios", set->name);
    }
    if (st != PIPIT_OK) {
        pipit_scenarios_free(set);
        return st;
    }
    *out = set;
    return PIPIT_OK;
}

enum pipit_status
pipit_scenarios_load_file(const char *path, struct pipit_scenarios **out, struct pipit_error *err) {
    pipit_error_clear(err);
    if (path == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "eval: NULL argument");
    }
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return pipit_error_set(err, PIPIT_ERR_IO, "eval: cannot open %s", path);
    }
    struct strbuf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        strbuf_add(&b, chunk, n);
        if (b.len > (size_t)EVAL_MAX_SCENARIOS * 4096) {
            break;
        }
    }
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error || b.len > (size_t)EVAL_MAX_SCENARIOS * 4096) {
        strbuf_free(&b);
        return pipit_error_set(err, PIPIT_ERR_IO, "eval: cannot read %s%s", path,
                               read_error ? "" : " (file too large)");
    }
    size_t len = b.len;
    char *text = strbuf_take(&b);
    if (text == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "eval: out of memory");
    }
    enum pipit_status st = pipit_scenarios_load_string(text, len, path, out, err);
    free(text);
    return st;
}

size_t pipit_scenarios_count(const struct pipit_scenarios *set) {
    return set != NULL ? set->n : 0;
}

const char *pipit_scenarios_id(const struct pipit_scenarios *set, size_t i) {
    return set != NULL && i < set->n ? set->items[i].id : NULL;
}

const char *pipit_scenarios_category(const struct pipit_scenarios *set, size_t i) {
    return set != NULL && i < set->n ? set->items[i].category : NULL;
}

const char *pipit_scenarios_device(const struct pipit_scenarios *set, size_t i) {
    return set != NULL && i < set->n ? set->items[i].device : NULL;
}

int32_t pipit_scenarios_n_turns(const struct pipit_scenarios *set, size_t i) {
    return set != NULL && i < set->n ? (int32_t)json_array_size(set->items[i].turns) : 0;
}

/* ============================================================================ configurations */

static const struct pipit_eval_config STANDARD_CONFIGS[] = {
    {"baseline", PIPIT_TOOLSPEC_OPENAPI, PIPIT_MEMORY_FULL, false},
    {"compact", PIPIT_TOOLSPEC_COMPACT, PIPIT_MEMORY_FULL, true},
    {"jit", PIPIT_TOOLSPEC_JIT, PIPIT_MEMORY_FULL, true},
    {"cso", PIPIT_TOOLSPEC_COMPACT, PIPIT_MEMORY_CSO, true},
    {"combined", PIPIT_TOOLSPEC_JIT, PIPIT_MEMORY_CSO, true},
    {"baseline-grammar", PIPIT_TOOLSPEC_OPENAPI, PIPIT_MEMORY_FULL, true},
    {"compact-nogrammar", PIPIT_TOOLSPEC_COMPACT, PIPIT_MEMORY_FULL, false},
    {"jit-nogrammar", PIPIT_TOOLSPEC_JIT, PIPIT_MEMORY_FULL, false},
    {"cso-nogrammar", PIPIT_TOOLSPEC_COMPACT, PIPIT_MEMORY_CSO, false},
    {"combined-nogrammar", PIPIT_TOOLSPEC_JIT, PIPIT_MEMORY_CSO, false},
};
#define N_STANDARD_CONFIGS (sizeof(STANDARD_CONFIGS) / sizeof(STANDARD_CONFIGS[0]))

size_t pipit_eval_config_count(void) {
    return N_STANDARD_CONFIGS;
}

bool pipit_eval_config_get(size_t index, struct pipit_eval_config *out) {
    if (out == NULL || index >= N_STANDARD_CONFIGS) {
        return false;
    }
    *out = STANDARD_CONFIGS[index];
    return true;
}

enum pipit_status pipit_eval_config_find(const char *name, struct pipit_eval_config *out) {
    for (size_t i = 0; name != NULL && out != NULL && i < N_STANDARD_CONFIGS; i++) {
        if (strcmp(name, STANDARD_CONFIGS[i].name) == 0) {
            *out = STANDARD_CONFIGS[i];
            return PIPIT_OK;
        }
    }
    return PIPIT_ERR_INVALID_ARG;
}

static const char *format_name(int32_t f) {
    static const char *const names[] = {"openapi", "minified", "compact", "jit"};
    return f >= 0 && f < PIPIT_TOOLSPEC_N_FORMATS ? names[f] : "unknown";
}

static const char *memory_name(int32_t m) {
    static const char *const names[] = {"none", "full", "cso"};
    return m >= 0 && m <= 2 ? names[m] : "unknown";
}

/* ============================================================================ matching */

/* ASCII case-insensitive substring search. */
static bool contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    if (n == 0) {
        return true;
    }
    for (const char *p = hay; *p != '\0'; p++) {
        if (strncasecmp(p, needle, n) == 0) {
            return true;
        }
    }
    return false;
}

/* Equal within `tol` for numbers; strings ignoring ASCII case when `ci`. */
static bool json_near(const json_t *a, const json_t *b, double tol, bool ci) {
    if (a == NULL || b == NULL) {
        return a == b;
    }
    if (json_is_number(a) && json_is_number(b)) {
        return fabs(json_number_value(a) - json_number_value(b)) <= tol;
    }
    if (json_typeof(a) != json_typeof(b)) {
        return false;
    }
    switch (json_typeof(a)) {
        case JSON_STRING:
            return ci ? strcasecmp(json_string_value(a), json_string_value(b)) == 0
                      : strcmp(json_string_value(a), json_string_value(b)) == 0;
        case JSON_ARRAY: {
            if (json_array_size(a) != json_array_size(b)) {
                return false;
            }
            for (size_t i = 0; i < json_array_size(a); i++) {
                if (!json_near(json_array_get(a, i), json_array_get(b, i), tol, ci)) {
                    return false;
                }
            }
            return true;
        }
        case JSON_OBJECT: {
            if (json_object_size(a) != json_object_size(b)) {
                return false;
            }
            const char *key;
            json_t *v;
            json_object_foreach((json_t *)a, key, v) {
                if (!json_near(v, json_object_get(b, key), tol, ci)) {
                    return false;
                }
            }
            return true;
        }
        default:
            return true; /* true, false, null of the same type */
    }
}

static bool args_match(const json_t *exp, const json_t *args) {
    json_t *want = json_object_get(exp, "args");
    json_t *tolj = json_object_get(exp, "tol");
    double tol = json_is_number(tolj) ? json_number_value(tolj) : EVAL_DEFAULT_TOL;
    const char *key;
    json_t *v;
    json_object_foreach(want, key, v) {
        if (!json_near(v, json_object_get(args, key), tol, true)) {
            return false;
        }
    }
    /* "contains": every word inside the string argument, ASCII case ignored */
    json_object_foreach(json_object_get(exp, "contains"), key, v) {
        const char *text = json_string_value(json_object_get(args, key));
        size_t i;
        json_t *w;
        json_array_foreach(v, i, w) {
            if (text == NULL || !contains_ci(text, json_string_value(w))) {
                return false;
            }
        }
    }
    return true;
}

bool eval_call_matches(const json_t *exp, const char *tool, const char *args_json) {
    const char *want = json_string_value(json_object_get(exp, "tool"));
    if (want == NULL || tool == NULL || strcmp(want, tool) != 0) {
        return false;
    }
    if (json_object_get(exp, "args") == NULL && json_object_get(exp, "contains") == NULL) {
        return true;
    }
    json_t *args =
        args_json != NULL && args_json[0] != '\0' ? json_loads(args_json, 0, NULL) : NULL;
    bool ok = json_is_object(args) && args_match(exp, args);
    json_decref(args);
    return ok;
}

/* Kuhn's augmenting path for expectation e. */
static bool
augment(size_t e, size_t n_exp, size_t n_calls, const bool *adj, bool *seen, int32_t *call_owner) {
    for (size_t c = 0; c < n_calls; c++) {
        if (!adj[e * n_calls + c] || seen[c]) {
            continue;
        }
        seen[c] = true;
        if (call_owner[c] < 0 ||
            augment((size_t)call_owner[c], n_exp, n_calls, adj, seen, call_owner)) {
            call_owner[c] = (int32_t)e;
            return true;
        }
    }
    return false;
}

int32_t eval_match_calls(const json_t *expect,
                         const struct pipit_call_record *calls,
                         size_t n_calls,
                         bool *matched_call) {
    size_t n_exp = json_array_size(expect);
    for (size_t c = 0; matched_call != NULL && c < n_calls; c++) {
        matched_call[c] = false;
    }
    if (n_exp == 0 || n_calls == 0) {
        return 0;
    }
    bool *adj = calloc(n_exp * n_calls, sizeof(bool));
    bool *seen = calloc(n_calls, sizeof(bool));
    int32_t *owner = malloc(n_calls * sizeof(int32_t));
    int32_t matched = 0;
    if (adj != NULL && seen != NULL && owner != NULL) {
        for (size_t c = 0; c < n_calls; c++) {
            owner[c] = -1;
            for (size_t e = 0; e < n_exp; e++) {
                /* a call counts whatever its outcome (refused by validation or by the
                 * device, failed): only one that did not parse is never correct */
                adj[e * n_calls + c] =
                    calls[c].status != PIPIT_ERR_PARSE &&
                    eval_call_matches(json_array_get(expect, e), calls[c].tool, calls[c].args_json);
            }
        }
        for (size_t e = 0; e < n_exp; e++) {
            memset(seen, 0, n_calls * sizeof(bool));
            if (augment(e, n_exp, n_calls, adj, seen, owner)) {
                matched++;
            }
        }
        for (size_t c = 0; matched_call != NULL && c < n_calls; c++) {
            matched_call[c] = owner[c] >= 0;
        }
    }
    free(adj);
    free(seen);
    free(owner);
    return matched;
}

static void describe(const json_t *v, char *buf, size_t size) {
    char *s =
        v != NULL ? json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY) : NULL;
    pipit_format(buf, size, "%s", s != NULL ? s : "(missing)");
    free(s);
}

bool eval_state_matches(const json_t *want, const json_t *got, char *diff, size_t diff_size) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)want, key, v) {
        json_t *g = json_object_get(got, key);
        if (!json_near(v, g, EVAL_DEFAULT_TOL, false)) {
            if (diff != NULL) {
                char a[96], b[96];
                describe(v, a, sizeof(a));
                describe(g, b, sizeof(b));
                pipit_format(diff, diff_size, "%s: want %s, got %s", key, a, b);
            }
            return false;
        }
    }
    return true;
}

bool eval_reply_matches(const json_t *needles, const char *sentence) {
    size_t i;
    json_t *s;
    json_array_foreach(needles, i, s) {
        if (sentence == NULL || !contains_ci(sentence, json_string_value(s))) {
            return false;
        }
    }
    return true;
}

void eval_prf(int64_t correct, int64_t made, int64_t expected, double *p, double *r, double *f1) {
    double pp = made > 0 ? (double)correct / (double)made : 1.0;
    double rr = expected > 0 ? (double)correct / (double)expected : 1.0;
    *p = pp;
    *r = rr;
    *f1 = pp + rr > 0 ? 2.0 * pp * rr / (pp + rr) : 0.0;
}

/* ============================================================================ reports */

struct config_data {
    struct pipit_eval_config cfg;
    struct eval_turn_record *t;
    size_t n, cap;
    struct strbuf misses;
    int32_t n_misses;
};

struct pipit_eval_report {
    struct config_data *cfgs;
    size_t n_cfgs;
    char categories[EVAL_MAX_CATEGORIES][32];
    size_t n_categories;
};

struct pipit_eval_report *eval_report_new(const struct pipit_eval_config *configs, size_t n) {
    struct pipit_eval_report *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return NULL;
    }
    r->cfgs = calloc(n > 0 ? n : 1, sizeof(*r->cfgs));
    if (r->cfgs == NULL) {
        free(r);
        return NULL;
    }
    r->n_cfgs = n;
    for (size_t i = 0; i < n; i++) {
        r->cfgs[i].cfg = configs[i];
        r->cfgs[i].cfg.name[sizeof(r->cfgs[i].cfg.name) - 1] = '\0';
    }
    return r;
}

void pipit_eval_report_free(struct pipit_eval_report *r) {
    if (r == NULL) {
        return;
    }
    for (size_t i = 0; i < r->n_cfgs; i++) {
        free(r->cfgs[i].t);
        strbuf_free(&r->cfgs[i].misses);
    }
    free(r->cfgs);
    free(r);
}

int32_t eval_report_category(struct pipit_eval_report *r, const char *category) {
    for (size_t i = 0; i < r->n_categories; i++) {
        if (strcmp(r->categories[i], category) == 0) {
            return (int32_t)i;
        }
    }
    if (r->n_categories == EVAL_MAX_CATEGORIES) {
        return -1;
    }
    pipit_format(r->categories[r->n_categories], sizeof(r->categories[0]), "%s", category);
    return (int32_t)r->n_categories++;
}

bool eval_report_add(struct pipit_eval_report *r, size_t config, const struct eval_turn_record *t) {
    if (r == NULL || config >= r->n_cfgs || t == NULL) {
        return false;
    }
    struct config_data *c = &r->cfgs[config];
    if (c->n == c->cap) {
        size_t nc = c->cap > 0 ? c->cap * 2 : 256;
        struct eval_turn_record *a = realloc(c->t, nc * sizeof(*a));
        if (a == NULL) {
            return false;
        }
        c->t = a;
        c->cap = nc;
    }
    c->t[c->n++] = *t;
    return true;
}

void eval_report_miss(struct pipit_eval_report *r, size_t config, const char *line) {
    if (r == NULL || config >= r->n_cfgs || r->cfgs[config].n_misses >= EVAL_MAX_MISSES) {
        return;
    }
    strbuf_str(&r->cfgs[config].misses, line);
    strbuf_str(&r->cfgs[config].misses, "\n");
    r->cfgs[config].n_misses++;
}

size_t pipit_eval_report_n_configs(const struct pipit_eval_report *r) {
    return r != NULL ? r->n_cfgs : 0;
}

const char *pipit_eval_report_config(const struct pipit_eval_report *r, size_t i) {
    return r != NULL && i < r->n_cfgs ? r->cfgs[i].cfg.name : NULL;
}

size_t pipit_eval_report_n_categories(const struct pipit_eval_report *r) {
    return r != NULL ? r->n_categories : 0;
}

const char *pipit_eval_report_category(const struct pipit_eval_report *r, size_t i) {
    return r != NULL && i < r->n_categories ? r->categories[i] : NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values; -1 when empty. */
static double percentile(const double *v, size_t n, double q) {
    if (n == 0) {
        return -1;
    }
    size_t k = (size_t)ceil(q * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

/* Category name -> index; -1 = all; -2 = unknown. */
static int32_t find_category(const struct pipit_eval_report *r, const char *category) {
    if (category == NULL) {
        return -1;
    }
    for (size_t i = 0; i < r->n_categories; i++) {
        if (strcmp(r->categories[i], category) == 0) {
            return (int32_t)i;
        }
    }
    return -2;
}

static const struct {
    const char *name;
    int32_t first, last; /* turn numbers from 1; last -1 = no end */
} TURN_BUCKETS[PIPIT_EVAL_N_TURN_BUCKETS] = {{"1-5", 1, 5},
                                             {"6-10", 6, 10},
                                             {"11-20", 11, 20},
                                             {"21+", 21, -1}};

const char *pipit_eval_turn_bucket(size_t index, int32_t *first, int32_t *last) {
    if (index >= PIPIT_EVAL_N_TURN_BUCKETS) {
        return NULL;
    }
    if (first != NULL) {
        *first = TURN_BUCKETS[index].first;
    }
    if (last != NULL) {
        *last = TURN_BUCKETS[index].last;
    }
    return TURN_BUCKETS[index].name;
}

/* Metrics of the turns of category `cat` (-1 = all) in bucket `bucket` (-1 = every turn). */
static void compute_metrics(const struct config_data *c,
                            int32_t cat,
                            int32_t bucket,
                            struct pipit_eval_metrics *m) {
    memset(m, 0, sizeof(*m));
    double *lat = malloc((c->n > 0 ? c->n : 1) * sizeof(double));
    double *ttft = malloc((c->n > 0 ? c->n : 1) * sizeof(double));
    size_t n_lat = 0, n_ttft = 0, n_ok = 0;
    int64_t state_n = 0, state_ok = 0, reply_n = 0, reply_ok = 0, model_calls = 0, prefill = 0,
            context = 0, quiet_n = 0, quiet_ok = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct eval_turn_record *t = &c->t[i];
        if (cat >= 0 && t->category != cat) {
            continue;
        }
        if (bucket >= 0) {
            int32_t number = t->turn_index + 1;
            if (number < TURN_BUCKETS[bucket].first ||
                (TURN_BUCKETS[bucket].last >= 0 && number > TURN_BUCKETS[bucket].last)) {
                continue;
            }
        }
        m->n_turns++;
        m->undo_marked += t->undo_marked ? 1 : 0;
        m->undo_routed += t->undo_marked && t->routed_undo ? 1 : 0;
        m->undo_false_routes += !t->undo_marked && t->routed_undo ? 1 : 0;
        m->split_turns += t->n_expected >= 2 ? 1 : 0;
        m->split_correct += t->n_expected >= 2 && t->n_steps == t->n_expected ? 1 : 0;
        m->undo_checked += t->undo_marked && t->state_checked ? 1 : 0;
        m->undo_reverted +=
            t->undo_marked && t->state_checked && t->state_ok && !t->new_action ? 1 : 0;
        m->undo_new_action += t->undo_marked && t->new_action ? 1 : 0;
        m->oor_expected += t->oor_expected;
        m->oor_refused += t->oor_refused;
        m->oor_substituted += t->oor_substituted;
        m->questions += t->question ? 1 : 0;
        m->questions_from_state += t->question && t->from_state ? 1 : 0;
        m->questions_reply_ok += t->question && t->reply_checked && t->reply_ok ? 1 : 0;
        m->n_scenarios += t->turn_index == 0 ? 1 : 0;
        m->n_errors += t->error ? 1 : 0;
        m->n_state_skipped += t->state_skipped ? 1 : 0;
        m->calls_expected += t->n_expected;
        m->calls_made += t->n_made;
        m->calls_correct += t->n_correct;
        m->calls_valid += t->n_valid;
        state_n += t->state_checked ? 1 : 0;
        state_ok += t->state_checked && t->state_ok ? 1 : 0;
        reply_n += t->reply_checked ? 1 : 0;
        reply_ok += t->reply_checked && t->reply_ok ? 1 : 0;
        quiet_n += t->n_expected == 0 ? 1 : 0;
        quiet_ok += t->n_expected == 0 && t->n_made == 0 ? 1 : 0;
        if (t->error) {
            continue; /* no counters: left out of the token and latency figures */
        }
        n_ok++;
        model_calls += t->model_calls;
        prefill += t->prefill_tokens;
        context += t->context_tokens;
        if (lat != NULL) {
            lat[n_lat++] = t->latency_ms;
        }
        if (ttft != NULL && t->model_calls > 0 && t->ttft_ms >= 0) {
            ttft[n_ttft++] = t->ttft_ms;
        }
    }
    eval_prf(m->calls_correct, m->calls_made, m->calls_expected, &m->precision, &m->recall, &m->f1);
    m->state_accuracy = state_n > 0 ? (double)state_ok / (double)state_n : -1;
    m->reply_accuracy = reply_n > 0 ? (double)reply_ok / (double)reply_n : -1;
    m->valid_call_rate = m->calls_made > 0 ? (double)m->calls_valid / (double)m->calls_made : -1;
    m->no_call_accuracy = quiet_n > 0 ? (double)quiet_ok / (double)quiet_n : -1;
    m->undo_detection = m->undo_marked > 0 ? (double)m->undo_routed / m->undo_marked : -1;
    m->split_accuracy = m->split_turns > 0 ? (double)m->split_correct / m->split_turns : -1;
    m->undo_revert_rate = m->undo_checked > 0 ? (double)m->undo_reverted / m->undo_checked : -1;
    double nt = n_ok > 0 ? (double)n_ok : 1;
    m->model_calls_per_utterance = (double)model_calls / nt;
    m->prefill_tokens_per_turn = (double)prefill / nt;
    m->context_tokens_per_turn = (double)context / nt;
    if (lat != NULL) {
        qsort(lat, n_lat, sizeof(double), cmp_double);
    }
    if (ttft != NULL) {
        qsort(ttft, n_ttft, sizeof(double), cmp_double);
    }
    m->latency_ms_p50 = lat != NULL ? percentile(lat, n_lat, 0.50) : -1;
    m->latency_ms_p95 = lat != NULL ? percentile(lat, n_lat, 0.95) : -1;
    m->ttft_ms_p50 = ttft != NULL ? percentile(ttft, n_ttft, 0.50) : -1;
    m->ttft_ms_p95 = ttft != NULL ? percentile(ttft, n_ttft, 0.95) : -1;
    free(lat);
    free(ttft);
}

enum pipit_status pipit_eval_report_metrics(const struct pipit_eval_report *r,
                                            size_t config,
                                            const char *category,
                                            struct pipit_eval_metrics *out) {
    if (r == NULL || out == NULL || config >= r->n_cfgs) {
        return PIPIT_ERR_INVALID_ARG;
    }
    int32_t cat = find_category(r, category);
    if (cat == -2) {
        return PIPIT_ERR_INVALID_ARG;
    }
    compute_metrics(&r->cfgs[config], cat, -1, out);
    return PIPIT_OK;
}

enum pipit_status pipit_eval_report_bucket_metrics(const struct pipit_eval_report *r,
                                                   size_t config,
                                                   const char *category,
                                                   size_t bucket,
                                                   struct pipit_eval_metrics *out) {
    if (r == NULL || out == NULL || config >= r->n_cfgs || bucket >= PIPIT_EVAL_N_TURN_BUCKETS) {
        return PIPIT_ERR_INVALID_ARG;
    }
    int32_t cat = find_category(r, category);
    if (cat == -2) {
        return PIPIT_ERR_INVALID_ARG;
    }
    compute_metrics(&r->cfgs[config], cat, (int32_t)bucket, out);
    return PIPIT_OK;
}

int32_t pipit_eval_report_context_tokens(const struct pipit_eval_report *r,
                                         size_t config,
                                         const char *category,
                                         double *out,
                                         int32_t max) {
    if (r == NULL || config >= r->n_cfgs || (out == NULL && max > 0) || max < 0) {
        return -1;
    }
    int32_t cat = find_category(r, category);
    if (cat == -2) {
        return -1;
    }
    const struct config_data *c = &r->cfgs[config];
    double sum[PIPIT_SCENARIO_MAX_TURNS] = {0};
    int64_t cnt[PIPIT_SCENARIO_MAX_TURNS] = {0};
    int32_t n = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct eval_turn_record *t = &c->t[i];
        if ((cat >= 0 && t->category != cat) || t->turn_index < 0 ||
            t->turn_index >= PIPIT_SCENARIO_MAX_TURNS || t->error) {
            continue;
        }
        sum[t->turn_index] += t->context_tokens;
        cnt[t->turn_index]++;
        if (t->turn_index + 1 > n) {
            n = t->turn_index + 1;
        }
    }
    for (int32_t i = 0; i < n && i < max; i++) {
        out[i] = cnt[i] > 0 ? sum[i] / (double)cnt[i] : -1.0; /* no data at this turn */
    }
    return n;
}

/* ============================================================================ oracle */

struct oracle_log {
    json_t *snap[EVAL_UNDO_SLOTS]; /* NULL: an action that cannot be undone */
    int32_t tool[EVAL_UNDO_SLOTS]; /* the tool of each action */
    int32_t n;
};

static void oracle_push(struct oracle_log *log, int32_t tool, json_t *snap) {
    if (log->n == EVAL_UNDO_SLOTS) {
        json_decref(log->snap[0]);
        memmove(log->snap, log->snap + 1, sizeof(log->snap[0]) * (EVAL_UNDO_SLOTS - 1));
        memmove(log->tool, log->tool + 1, sizeof(log->tool[0]) * (EVAL_UNDO_SLOTS - 1));
        log->n--;
    }
    log->tool[log->n] = tool;
    log->snap[log->n++] = snap;
}

/* Take entry `at` out of the log and return its snapshot (the caller's). */
static json_t *oracle_take(struct oracle_log *log, int32_t at) {
    json_t *snap = log->snap[at];
    memmove(log->snap + at, log->snap + at + 1, sizeof(log->snap[0]) * (size_t)(log->n - at - 1));
    memmove(log->tool + at, log->tool + at + 1, sizeof(log->tool[0]) * (size_t)(log->n - at - 1));
    log->n--;
    return snap;
}

static const struct pipit_toolset *
find_tools(const struct pipit_eval_device *devices, size_t n, const char *device) {
    for (size_t i = 0; devices != NULL && i < n; i++) {
        if (devices[i].device != NULL && strcmp(devices[i].device, device) == 0) {
            return devices[i].tools;
        }
    }
    return NULL;
}

/* The kind pipit_device_init() gets: the scenario's "device", or NULL when it names none, so
 * the tool set decides (the camera's set runs the camera, a pack its own device: `--tools
 * my-pack.json` and no "device" evaluate the pack). */
static const char *device_kind(const struct eval_scenario *sc) {
    return sc->device_given ? sc->device : NULL;
}

/* The device's name in messages: the scenario's, or the pack's when it names none. */
static const char *device_label(const struct eval_scenario *sc, const struct pipit_toolset *ts) {
    const struct pipit_pack *pk = sc->device_given || ts == NULL ? NULL : pipit_toolset_pack(ts);
    return pk != NULL && pk->name != NULL ? pk->name : sc->device;
}

/* A value for a required argument the scenario leaves free. */
static json_t *placeholder(const struct pipit_schema *s) {
    switch (s->type) {
        case PIPIT_SCHEMA_STRING:
            return json_string(s->n_enum > 0 ? s->enum_str[0] : "placeholder");
        case PIPIT_SCHEMA_NUMBER:
        case PIPIT_SCHEMA_INTEGER:
            if (s->n_enum > 0) {
                return json_deep_copy(s->enum_json[0]);
            }
            return s->type == PIPIT_SCHEMA_INTEGER
                       ? json_integer(s->has_min ? (json_int_t)s->min : 0)
                       : json_real(s->has_min ? s->min : 0.0);
        case PIPIT_SCHEMA_BOOLEAN:
            return json_false();
        case PIPIT_SCHEMA_ARRAY:
            return json_array();
        default:
            return json_object();
    }
}

static bool injected(const json_t *inject, size_t turn, const char *tool) {
    size_t i;
    json_t *e;
    json_array_foreach(inject, i, e) {
        if ((size_t)json_integer_value(json_object_get(e, "turn")) == turn &&
            strcmp(json_string_value(json_object_get(e, "tool")), tool) == 0) {
            return true;
        }
    }
    return false;
}

/* Where the oracle reports. Errors (a scenario that names what the tool set or the device does
 * not have, arguments no grammar-constrained call can be) always stop it; findings (a state
 * the expected calls do not reproduce, an undo the device refuses) stop it only when strict,
 * else they go to the callback and skip that turn's state check. */
struct oracle_ctx {
    struct parse_ctx pc;
    bool strict;
    pipit_scenarios_finding_fn fn;
    void *user_data;
    struct eval_oracle *out;
};

static enum pipit_status
finding(struct oracle_ctx *oc, size_t turn, const char *path, const char *fmt, ...)
    PIPIT_PRINTF(4, 5);

static enum pipit_status
finding(struct oracle_ctx *oc, size_t turn, const char *path, const char *fmt, ...) {
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    oc->out->n_findings++;
    if (turn < PIPIT_SCENARIO_MAX_TURNS) {
        oc->out->state_skip |= (uint64_t)1 << turn;
    }
    if (oc->fn != NULL) {
        char line[800];
        pipit_format(line, sizeof(line), "%s:%d: %s: %s", oc->pc.name, (int)oc->pc.line, path, msg);
        oc->fn(line, oc->user_data);
    }
    return oc->strict ? bad(&oc->pc, path, "%s", msg) : PIPIT_OK;
}

static const char *schema_type_name(enum pipit_schema_type t) {
    switch (t) {
        case PIPIT_SCHEMA_OBJECT:
            return "an object";
        case PIPIT_SCHEMA_STRING:
            return "a string";
        case PIPIT_SCHEMA_NUMBER:
            return "a number";
        case PIPIT_SCHEMA_INTEGER:
            return "an integer";
        case PIPIT_SCHEMA_BOOLEAN:
            return "a boolean";
        case PIPIT_SCHEMA_NULL:
            return "null";
        default:
            return "an array";
    }
}

/* Can `v` be what a grammar-constrained call writes for schema `s`? The grammar guarantees the
 * shape (JSON types, argument names) but not numeric ranges, numeric enums or lengths (DESIGN
 * item 3), and the agent puts back a string value the tool lacks that the person said
 * (agent_value.c: "set the program to silk"): those are left to validation, which refuses them.
 * The first problem goes to `why`, led by its path. */
static bool
shape_ok(const struct pipit_schema *s, const json_t *v, const char *path, char *why, size_t size) {
    bool type_ok = false;
    switch (s->type) {
        case PIPIT_SCHEMA_OBJECT:
            type_ok = json_is_object(v);
            break;
        case PIPIT_SCHEMA_STRING:
            type_ok = json_is_string(v);
            break;
        case PIPIT_SCHEMA_NUMBER:
            type_ok = json_is_number(v);
            break;
        case PIPIT_SCHEMA_INTEGER:
            type_ok = json_is_integer(v) ||
                      (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
            break;
        case PIPIT_SCHEMA_BOOLEAN:
            type_ok = json_is_boolean(v);
            break;
        case PIPIT_SCHEMA_ARRAY:
            type_ok = json_is_array(v);
            break;
        case PIPIT_SCHEMA_NULL:
            type_ok = json_is_null(v);
            break;
        case PIPIT_SCHEMA_ANY:
        case PIPIT_SCHEMA_UNION: /* validation decides */
            type_ok = true;
            break;
    }
    if (!type_ok) {
        pipit_format(why, size, "%s: expected %s, got %s", path, schema_type_name(s->type),
                     json_type_name(v));
        return false;
    }
    char p[192];
    if (s->type == PIPIT_SCHEMA_ARRAY) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            pipit_format(p, sizeof(p), "%s[%zu]", path, i);
            if (!shape_ok(s->items, x, p, why, size)) {
                return false;
            }
        }
    }
    if (s->type == PIPIT_SCHEMA_OBJECT) {
        const char *key;
        json_t *x;
        json_object_foreach((json_t *)v, key, x) {
            const struct pipit_schema_prop *prop = NULL;
            for (size_t i = 0; i < s->n_props && prop == NULL; i++) {
                prop = strcmp(s->props[i].name, key) == 0 ? &s->props[i] : NULL;
            }
            pipit_format(p, sizeof(p), "%s.%s", path, key);
            if (prop == NULL) {
                pipit_format(why, size, "%s: no such argument", p);
                return false;
            }
            if (!shape_ok(prop->schema, x, p, why, size)) {
                return false;
            }
        }
    }
    return true;
}

/* One expected call on the device. *refused: validation (out of range) or the device's own
 * limit (a "*_out_of_range" code) refused it, so the state is unchanged and nothing is logged;
 * an injected failure or another device failure is not a refusal. */
static enum pipit_status oracle_call(struct oracle_ctx *oc,
                                     const struct pipit_toolset *ts,
                                     struct device *dev,
                                     struct oracle_log *log,
                                     const json_t *exp,
                                     const char *path,
                                     bool fail_injected,
                                     bool *refused) {
    const struct parse_ctx *pc = &oc->pc;
    *refused = false;
    const char *tool = json_string_value(json_object_get(exp, "tool"));
    int32_t idx = pipit_toolset_find(ts, tool);
    char p[256];
    pipit_format(p, sizeof(p), "%s.tool", path);
    if (idx < 0) {
        return bad(pc, p, "no tool \"%s\" in %s", tool, ts->name);
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)idx);
    json_t *listed = json_object_get(exp, "args");
    char why[256];
    if (listed != NULL && !shape_ok(t->params, listed, "args", why, sizeof(why))) {
        pipit_format(p, sizeof(p), "%s.args", path);
        return bad(pc, p, "%s (a grammar-constrained call can never be this)", why);
    }
    const char *key;
    json_t *words;
    json_object_foreach(json_object_get(exp, "contains"), key, words) {
        const struct pipit_schema_prop *prop = NULL;
        for (size_t i = 0; i < t->params->n_props && prop == NULL; i++) {
            prop = strcmp(t->params->props[i].name, key) == 0 ? &t->params->props[i] : NULL;
        }
        if (prop == NULL || prop->schema->type != PIPIT_SCHEMA_STRING) {
            pipit_format(p, sizeof(p), "%s.contains.%s", path, key);
            return bad(pc, p, "%s has no string argument \"%s\"", tool, key);
        }
    }
    json_t *args = listed != NULL ? json_deep_copy(listed) : json_object();
    for (size_t i = 0; args != NULL && i < t->params->n_props; i++) {
        const struct pipit_schema_prop *prop = &t->params->props[i];
        if (prop->required && json_object_get(args, prop->name) == NULL) {
            json_object_set_new(args, prop->name, placeholder(prop->schema));
        }
    }
    char *text = args != NULL ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    if (text == NULL) {
        json_decref(args);
        return pipit_error_set(pc->err, PIPIT_ERR_NOMEM, "eval: out of memory");
    }
    struct pipit_arg_problem prob[1];
    size_t n_prob = 0;
    enum pipit_status vst =
        pipit_toolset_validate_args(ts, tool, text, strlen(text), prob, 1, &n_prob);
    free(text);
    if (vst != PIPIT_OK || fail_injected) {
        /* out of range: the agent should try it and validation refuses it, before any
         * handler (an injected failure) runs; or the injected failure: nothing changes */
        *refused = vst != PIPIT_OK;
        json_decref(args);
        return PIPIT_OK;
    }
    const char *const *keys = NULL;
    size_t n_keys = 0;
    enum pipit_undo_kind kind = pipit_toolset_undo(ts, (size_t)idx, &keys, &n_keys);
    json_t *snap = NULL;
    if (kind == PIPIT_UNDO_KEYS) {
        json_t *state = dev->ops->get_state(dev->self);
        snap = json_object();
        for (size_t i = 0; i < n_keys && state != NULL && snap != NULL; i++) {
            json_t *v = json_object_get(state, keys[i]);
            if (v != NULL) {
                json_object_set(snap, keys[i], v);
            }
        }
        json_decref(state);
    }
    struct device_result r;
    memset(&r, 0, sizeof(r));
    enum pipit_status st = dev->ops->call(dev->self, tool, args, &r);
    bool ok = st == PIPIT_OK && r.ok;
    /* the device's own limit ("zoom_out_of_range": 5x on the front camera) is a refusal
     * too; a tool the device does not run (the cloud) or another failure is not */
    size_t n_code = strlen(r.code);
    *refused = st == PIPIT_OK && !r.ok && n_code > 13 &&
               strcmp(r.code + n_code - 13, "_out_of_range") == 0;
    device_result_clear(&r);
    json_decref(args);
    if (ok && kind == PIPIT_UNDO_KEYS && snap != NULL) {
        oracle_push(log, idx, snap);
        snap = NULL;
    } else if (ok && kind == PIPIT_UNDO_IMPOSSIBLE) {
        oracle_push(log, idx, NULL);
    }
    json_decref(snap);
    return PIPIT_OK;
}

static enum pipit_status check_scenario(struct oracle_ctx *oc,
                                        const struct eval_scenario *sc,
                                        const struct pipit_eval_device *devices,
                                        size_t n_devices) {
    const struct parse_ctx *pc = &oc->pc;
    const struct pipit_toolset *ts = find_tools(devices, n_devices, sc->device);
    if (ts == NULL) {
        return bad(pc, "$.device", "no tool set for device \"%s\"", sc->device);
    }
    struct pipit_device *handle = NULL;
    struct pipit_error nerr;
    if (pipit_device_init(device_kind(sc), ts, NULL, &handle, &nerr) != PIPIT_OK) {
        return bad(pc, "$.device", "%s", nerr.text);
    }
    if (handle == NULL) {
        return bad(pc, "$.device", "no device runs \"%s\"", device_label(sc, ts));
    }
    struct device dev = handle->dev;
    struct oracle_log log = {{0}, {0}, 0};
    enum pipit_status st = PIPIT_OK;
    if (sc->init != NULL) {
        struct pipit_error derr;
        pipit_error_clear(&derr);
        if (dev.ops->set_state(dev.self, sc->init, &derr) != PIPIT_OK) {
            st = bad(pc, "$.init", "%s", derr.text);
        }
    }
    size_t i;
    json_t *e;
    json_array_foreach(sc->inject, i, e) {
        if (st != PIPIT_OK) {
            break;
        }
        const char *tool = json_string_value(json_object_get(e, "tool"));
        if (pipit_toolset_find(ts, tool) < 0) {
            char p[64];
            pipit_format(p, sizeof(p), "$.inject[%zu].tool", i);
            st = bad(pc, p, "no tool \"%s\" in %s", tool, ts->name);
        }
    }
    for (size_t t = 0; st == PIPIT_OK && t < json_array_size(sc->turns); t++) {
        const json_t *turn = json_array_get(sc->turns, t);
        const json_t *expect = json_object_get(turn, "expect");
        size_t n_exp = json_array_size(expect);
        char path[64];
        pipit_format(path, sizeof(path), "$.turns[%zu]", t);
        char p[96];
        bool undid_nothing = false; /* the newest action cannot be undone */
        const json_t *undo = json_object_get(turn, "undo");
        int32_t n_undo = json_is_true(undo)      ? 1
                         : json_is_integer(undo) ? (int32_t)json_integer_value(undo)
                                                 : 0;
        int32_t named = -1; /* "undo the zoom": the newest action of that tool, alone */
        if (json_is_string(undo)) {
            char up[96];
            pipit_format(up, sizeof(up), "%s.undo", path);
            int32_t tool = pipit_toolset_find(ts, json_string_value(undo));
            if (tool < 0) {
                st = bad(pc, up, "no tool \"%s\" in %s", json_string_value(undo), ts->name);
            }
            for (int32_t k = log.n - 1; tool >= 0 && k >= 0 && named < 0; k--) {
                named = log.tool[k] == tool && log.snap[k] != NULL ? k : -1;
            }
            if (st == PIPIT_OK && named < 0) {
                st = finding(oc, t, up,
                             "no action of %s to undo: the expected calls before this turn made "
                             "none that can be undone",
                             json_string_value(undo));
            }
        }
        /* the scenario's own intent: revert the oracle's newest logged actions, or the named
         * one */
        for (int32_t k = 0; st == PIPIT_OK && (k < n_undo || named >= 0) && log.n > 0; k++) {
            json_t *snap = oracle_take(&log, named >= 0 ? named : log.n - 1);
            named = -1;
            undid_nothing = snap == NULL;
            struct pipit_error derr;
            pipit_error_clear(&derr);
            if (snap != NULL && dev.ops->set_state(dev.self, snap, &derr) != PIPIT_OK) {
                st = finding(oc, t, path, "undo failed on the simulated %s: %s",
                             device_label(sc, ts), derr.text);
            }
            json_decref(snap);
        }
        for (size_t k = 0; st == PIPIT_OK && k < n_exp; k++) {
            const json_t *x = json_array_get(expect, k);
            pipit_format(p, sizeof(p), "%s.expect[%zu]", path, k);
            const char *tool = json_string_value(json_object_get(x, "tool"));
            bool refused = false;
            st = oracle_call(oc, ts, &dev, &log, x, p, injected(sc->inject, t, tool), &refused);
            if (refused && t < PIPIT_SCENARIO_MAX_TURNS) {
                oc->out->refused[t] |= (uint8_t)(1u << k);
            }
        }
        const json_t *want = json_object_get(turn, "state");
        bool skipped = t < PIPIT_SCENARIO_MAX_TURNS && (oc->out->state_skip >> t & 1) != 0;
        if (st == PIPIT_OK && want != NULL && !skipped) {
            json_t *got = dev.ops->get_state(dev.self);
            char diff[256];
            const char *wk;
            json_t *wv;
            const char *unknown = NULL;
            json_object_foreach((json_t *)want, wk, wv) {
                if (unknown == NULL && json_object_get(got, wk) == NULL) {
                    unknown = wk;
                }
            }
            if (unknown != NULL) {
                /* a key the device does not have is a spelling to fix, not a state to reach */
                char keys[256] = "";
                const char *gk;
                json_t *gv;
                json_object_foreach(got, gk, gv) {
                    size_t used = strlen(keys);
                    pipit_format(keys + used, sizeof(keys) - used, "%s%s", used > 0 ? ", " : "",
                                 gk);
                }
                pipit_format(p, sizeof(p), "%s.state.%s", path, unknown);
                st = finding(oc, t, p, "the simulated %s has no state key \"%s\" (its keys: %s)",
                             device_label(sc, ts), unknown, keys);
            } else if (!eval_state_matches(want, got, diff, sizeof(diff))) {
                pipit_format(p, sizeof(p), "%s.state", path);
                /* a turn that expects no call and a changed state is most often an undo turn
                 * without its mark (docs/eval.md) */
                bool unmarked_undo = n_exp == 0 && log.n > 0 && !eval_undo_marked(turn);
                st = finding(oc, t, p, "%s (after the expected calls on the simulated %s)%s", diff,
                             device_label(sc, ts),
                             unmarked_undo ? "; if this turn takes back the last action, mark it "
                                             "\"undo\": true"
                             : undid_nothing
                                 ? "; the undo reverted nothing: the newest action is one that "
                                   "cannot be undone (its tool's \"undo\" is \"none\"), and "
                                   "undo never skips back past it, as the agent does"
                             : strstr(diff, "got \"placeholder\"") != NULL
                                 ? "; the expected call leaves that string free (\"contains\" or "
                                   "not listed), so the simulated device holds a placeholder: "
                                   "give the argument in \"args\" to check this key, or leave "
                                   "the key out of \"state\""
                                 : "");
                /* go on from the state the scenario states, so one finding stays one */
                struct pipit_error derr;
                (void)dev.ops->set_state(dev.self, want, &derr);
            }
            json_decref(got);
        }
    }
    for (int32_t k = 0; k < log.n; k++) {
        json_decref(log.snap[k]);
    }
    pipit_device_free(handle);
    return st;
}

enum pipit_status eval_oracle_scenario(const struct pipit_scenarios *set,
                                       size_t index,
                                       const struct pipit_eval_device *devices,
                                       size_t n_devices,
                                       const struct pipit_scenarios_check_params *params,
                                       struct eval_oracle *out,
                                       struct pipit_error *err) {
    memset(out, 0, sizeof(*out));
    const struct eval_scenario *sc = &set->items[index];
    struct oracle_ctx oc = {{set->name, sc->line, err}, true, NULL, NULL, out};
    if (params != NULL) {
        oc.strict = params->strict;
        oc.fn = params->on_finding;
        oc.user_data = params->user_data;
    }
    return check_scenario(&oc, sc, devices, n_devices);
}

struct pipit_scenarios_check_params pipit_scenarios_check_default_params(void) {
    struct pipit_scenarios_check_params p;
    memset(&p, 0, sizeof(p));
    return p;
}

enum pipit_status pipit_scenarios_check(const struct pipit_scenarios *set,
                                        const struct pipit_eval_device *devices,
                                        size_t n_devices,
                                        const struct pipit_scenarios_check_params *params,
                                        size_t *n_findings,
                                        struct pipit_error *err) {
    pipit_error_clear(err);
    if (n_findings != NULL) {
        *n_findings = 0;
    }
    if (set == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "eval: NULL scenario set");
    }
    for (size_t i = 0; i < set->n; i++) {
        struct eval_oracle o;
        enum pipit_status st = eval_oracle_scenario(set, i, devices, n_devices, params, &o, err);
        if (n_findings != NULL) {
            *n_findings += (size_t)o.n_findings;
        }
        if (st != PIPIT_OK) {
            return st;
        }
    }
    return PIPIT_OK;
}

/* ============================================================================ running */

struct pipit_eval_params pipit_eval_default_params(void) {
    struct pipit_eval_params p;
    memset(&p, 0, sizeof(p));
    p.agent = pipit_agent_default_params();
    return p;
}

struct inject_data {
    char code[64];
    char message[256];
};

static enum pipit_status
inject_fn(const char *tool, const char *args_json, struct pipit_tool_output *out, void *user_data) {
    (void)tool;
    (void)args_json;
    const struct inject_data *d = user_data;
    out->ok = false;
    pipit_format(out->code, sizeof(out->code), "%s", d->code);
    pipit_format(out->message, sizeof(out->message), "%s", d->message);
    return PIPIT_OK;
}

static void call_list(struct strbuf *b, const struct pipit_turn *t) {
    strbuf_str(b, "[");
    for (size_t i = 0; t != NULL && i < t->n_calls; i++) {
        const struct pipit_call_record *c = &t->calls[i];
        strbuf_printf(b, "%s%s%s%s", i > 0 ? ", " : "", c->tool[0] != '\0' ? c->tool : "?",
                      c->args_json != NULL ? c->args_json : "",
                      c->status != PIPIT_OK ? " (refused)"
                      : c->ok               ? ""
                                            : " (failed)");
    }
    strbuf_str(b, "]");
}

/* Did the call run and succeed? */
static bool call_succeeded(const struct pipit_call_record *c) {
    return c->status == PIPIT_OK && c->executed && c->ok;
}

/* A valid call parsed and passed validation, or is one the person asked for word for word: a
 * value outside its range that validation refuses as the turn expects (issue 15: generated as
 * asked, refused, never bent). A call the device refuses passed validation. */
static bool call_valid(const json_t *expect, const struct pipit_call_record *c) {
    if (c->status == PIPIT_OK) {
        return true;
    }
    if (c->status != PIPIT_ERR_INVALID_ARGS) {
        return false;
    }
    size_t i;
    const json_t *x;
    json_array_foreach(expect, i, x) {
        const char *tool = json_string_value(json_object_get(x, "tool"));
        if (tool != NULL && strcmp(tool, c->tool) == 0 &&
            eval_call_matches(x, c->tool, c->args_json)) {
            return true;
        }
    }
    return false;
}

/* A state question as the sets write one: no call expected, the value in reply_contains. */
static bool is_question(const json_t *turn) {
    const json_t *expect = json_object_get(turn, "expect");
    return json_is_array(expect) && json_array_size(expect) == 0 &&
           json_object_get(turn, "reply_contains") != NULL && !eval_undo_marked(turn);
}

void eval_score_router_and_refusals(const json_t *turn,
                                    uint8_t refused,
                                    const struct pipit_turn *t,
                                    struct eval_turn_record *rec) {
    const json_t *expect = json_object_get(turn, "expect");
    rec->undo_marked = eval_undo_marked(turn);
    rec->n_steps = t->n_steps;
    rec->question = is_question(turn);
    rec->from_state = rec->question && (t->flags & PIPIT_TURN_STATE_ANSWER) != 0;
    /* the built-in undo (a call named "undo", DESIGN item 4) is the model's undo, not the
     * router's, and no new action */
    bool model_undo = false;
    for (size_t k = 0; k < t->n_calls; k++) {
        /* the model's undo: its call of the built-in undo, or a call the harness turned into
         * an undo of the earlier state (code "undo_instead", never executed) */
        bool is_undo =
            strcmp(t->calls[k].tool, "undo") == 0 || strcmp(t->calls[k].code, "undo_instead") == 0;
        model_undo = model_undo || is_undo;
        rec->new_action = rec->new_action || (!is_undo && call_succeeded(&t->calls[k]));
        /* on a turn marked undo, undo() is the outcome the turn asks for (judged by the state),
         * not a call made; on any other turn it counts like any call (a wrong one) */
        if (!(is_undo && rec->undo_marked)) {
            rec->n_made++;
            rec->n_valid += call_valid(expect, &t->calls[k]) ? 1 : 0;
        }
    }
    rec->routed_undo = (t->flags & PIPIT_TURN_UNDO) != 0 && !model_undo;
    for (size_t e = 0; e < json_array_size(expect) && e < 8; e++) {
        if ((refused >> e & 1) == 0) {
            continue;
        }
        const json_t *x = json_array_get(expect, e);
        const char *tool = json_string_value(json_object_get(x, "tool"));
        rec->oor_expected++;
        bool attempted = false, tool_succeeded = false, substituted = false;
        for (size_t k = 0; k < t->n_calls; k++) {
            const struct pipit_call_record *c = &t->calls[k];
            if (c->status == PIPIT_ERR_PARSE || strcmp(c->tool, tool) != 0) {
                continue;
            }
            bool same = eval_call_matches(x, c->tool, c->args_json);
            if (call_succeeded(c)) {
                tool_succeeded = true;
                substituted = substituted || !same;
            } else if (same) {
                attempted = true;
            }
        }
        rec->oor_refused += attempted && !tool_succeeded ? 1 : 0;
        rec->oor_substituted += substituted ? 1 : 0;
    }
}

/* The fields of a turn record the scenario decides alone (for turns that errored). */
static void record_intent(const json_t *turn, uint8_t refused, struct eval_turn_record *rec) {
    rec->undo_marked = eval_undo_marked(turn);
    rec->question = is_question(turn);
    size_t n = json_array_size(json_object_get(turn, "expect"));
    for (size_t e = 0; e < n && e < 8; e++) {
        rec->oor_expected += (refused >> e) & 1;
    }
}

/* Run one scenario turn and record it. */
static enum pipit_status run_turn(struct pipit_agent *agent,
                                  const struct eval_scenario *sc,
                                  const struct eval_oracle *oracle,
                                  size_t t_index,
                                  int32_t category,
                                  struct pipit_eval_report *rep,
                                  size_t config) {
    const json_t *turn = json_array_get(sc->turns, t_index);
    const char *user = json_string_value(json_object_get(turn, "user"));
    const json_t *expect = json_object_get(turn, "expect");
    const json_t *want_state = json_object_get(turn, "state");
    const json_t *want_reply = json_object_get(turn, "reply_contains");

    struct inject_data inj[EVAL_MAX_INJECT];
    const char *inj_tool[EVAL_MAX_INJECT];
    size_t n_inj = 0;
    size_t i;
    json_t *e;
    json_array_foreach(sc->inject, i, e) {
        if ((size_t)json_integer_value(json_object_get(e, "turn")) != t_index ||
            n_inj == EVAL_MAX_INJECT) {
            continue;
        }
        const char *code = json_string_value(json_object_get(e, "error"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        pipit_format(inj[n_inj].code, sizeof(inj[n_inj].code), "%s", code);
        if (msg != NULL) {
            pipit_format(inj[n_inj].message, sizeof(inj[n_inj].message), "%s", msg);
        } else {
            pipit_format(inj[n_inj].message, sizeof(inj[n_inj].message), "injected failure (%s)",
                         code);
        }
        inj_tool[n_inj] = json_string_value(json_object_get(e, "tool"));
        pipit_agent_register_tool(agent, inj_tool[n_inj], inject_fn, &inj[n_inj]);
        n_inj++;
    }
    struct pipit_turn *t = NULL;
    enum pipit_status st = pipit_agent_turn(agent, user, &t);
    for (size_t k = 0; k < n_inj; k++) {
        pipit_agent_register_tool(agent, inj_tool[k], NULL, NULL);
    }

    struct eval_turn_record rec;
    memset(&rec, 0, sizeof(rec));
    rec.category = category;
    rec.turn_index = (int32_t)t_index;
    rec.n_expected = (int32_t)json_array_size(expect);
    rec.state_skipped = want_state != NULL && (oracle->state_skip >> t_index & 1) != 0;
    rec.state_checked = want_state != NULL && !rec.state_skipped;
    rec.reply_checked = want_reply != NULL;
    rec.ttft_ms = -1;
    char diff[256] = "";
    if (st != PIPIT_OK || t == NULL) {
        rec.error = true;
        record_intent(turn, oracle->refused[t_index], &rec);
    } else {
        rec.n_correct = eval_match_calls(expect, t->calls, t->n_calls, NULL);
        eval_score_router_and_refusals(turn, oracle->refused[t_index], t, &rec);
        if (rec.state_checked) {
            json_t *got = t->state_json != NULL ? json_loads(t->state_json, 0, NULL) : NULL;
            rec.state_ok = eval_state_matches(want_state, got, diff, sizeof(diff));
            json_decref(got);
        }
        if (want_reply != NULL) {
            rec.reply_ok = eval_reply_matches(want_reply, t->sentence);
        }
        rec.model_calls = t->model_calls;
        rec.prefill_tokens = t->prefill_tokens;
        rec.context_tokens = t->n_permanent + t->n_ephemeral_max;
        rec.latency_ms = t->latency_ms;
        rec.ttft_ms = t->model_calls > 0 ? t->ttft_ms : -1;
    }
    bool calls_ok = rec.n_correct == rec.n_expected && rec.n_made == rec.n_expected;
    if (rec.error || !calls_ok || (rec.state_checked && !rec.state_ok) ||
        (rec.reply_checked && !rec.reply_ok)) {
        struct strbuf b = {0};
        strbuf_printf(&b, "%s turn %zu \"%.80s\": ", sc->id, t_index, user);
        if (rec.error) {
            strbuf_printf(&b, "agent error: %s", pipit_agent_errmsg(agent));
        } else {
            char *exp_text = json_dumps(expect, JSON_COMPACT | JSON_REAL_PRECISION(15));
            strbuf_printf(&b, "expected %s, made ", exp_text != NULL ? exp_text : "?");
            free(exp_text);
            call_list(&b, t);
            if (rec.state_checked && !rec.state_ok) {
                strbuf_printf(&b, "; state %s", diff);
            }
            if (rec.reply_checked && !rec.reply_ok) {
                strbuf_printf(&b, "; reply \"%.120s\" lacks a reply_contains word", t->sentence);
            }
        }
        char *line = strbuf_take(&b);
        if (line != NULL) {
            for (char *p = line; *p != '\0'; p++) {
                if (*p == '\n') {
                    *p = ' ';
                }
            }
            eval_report_miss(rep, config, line);
        }
        free(line);
    }
    pipit_turn_free(t);
    return eval_report_add(rep, config, &rec) ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

/* Records turns from..end of a scenario whose agent could not be created as errors. */
static enum pipit_status record_error_turns(struct pipit_eval_report *rep,
                                            size_t c,
                                            const struct eval_scenario *sc,
                                            const struct eval_oracle *oracle,
                                            size_t from,
                                            int32_t cat) {
    size_t n_turns = json_array_size(sc->turns);
    for (size_t t = from; t < n_turns; t++) {
        const json_t *turn = json_array_get(sc->turns, t);
        struct eval_turn_record rec;
        memset(&rec, 0, sizeof(rec));
        rec.category = cat;
        rec.turn_index = (int32_t)t;
        rec.n_expected = (int32_t)json_array_size(json_object_get(turn, "expect"));
        rec.state_skipped =
            json_object_get(turn, "state") != NULL && (oracle->state_skip >> t & 1) != 0;
        rec.state_checked = json_object_get(turn, "state") != NULL && !rec.state_skipped;
        rec.reply_checked = json_object_get(turn, "reply_contains") != NULL;
        rec.error = true;
        rec.ttft_ms = -1;
        record_intent(turn, oracle->refused[t], &rec);
        if (!eval_report_add(rep, c, &rec)) {
            return PIPIT_ERR_NOMEM;
        }
    }
    return PIPIT_OK;
}

enum pipit_status eval_run_with(eval_agent_factory factory,
                                void *factory_user_data,
                                const struct pipit_scenarios *set,
                                const struct pipit_eval_config *configs,
                                size_t n_configs,
                                const struct pipit_eval_params *params,
                                struct pipit_eval_report **out,
                                struct pipit_error *err) {
    pipit_error_clear(err);
    if (factory == NULL || set == NULL || configs == NULL || n_configs == 0 || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "eval: NULL argument or no configurations");
    }
    *out = NULL;
    struct pipit_eval_params ep = params != NULL ? *params : pipit_eval_default_params();
    for (size_t s = 0; s < set->n; s++) {
        if (find_tools(ep.devices, ep.n_devices, set->items[s].device) == NULL) {
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "eval: %s:%d: no tool set for device \"%s\"", set->name,
                                   (int)set->items[s].line, set->items[s].device);
        }
    }
    /* the oracle, without findings stopping it: which state checks are skipped, which
     * expectations are refusals */
    struct eval_oracle *oracle = calloc(set->n, sizeof(*oracle));
    if (oracle == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "eval: out of memory");
    }
    struct pipit_scenarios_check_params cp = pipit_scenarios_check_default_params();
    for (size_t s = 0; s < set->n; s++) {
        enum pipit_status ost =
            eval_oracle_scenario(set, s, ep.devices, ep.n_devices, &cp, &oracle[s], err);
        if (ost != PIPIT_OK) {
            free(oracle);
            return ost;
        }
    }
    struct pipit_eval_report *rep = eval_report_new(configs, n_configs);
    if (rep == NULL) {
        free(oracle);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "eval: out of memory");
    }
    enum pipit_status st = PIPIT_OK;
    for (size_t c = 0; c < n_configs && st == PIPIT_OK; c++) {
        for (size_t s = 0; s < set->n && st == PIPIT_OK; s++) {
            const struct eval_scenario *sc = &set->items[s];
            int32_t cat = eval_report_category(rep, sc->category);
            if (cat < 0) {
                st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "eval: more than %d categories",
                                     EVAL_MAX_CATEGORIES);
                break;
            }
            struct pipit_agent_params ap = ep.agent;
            const struct pipit_toolset *ts = find_tools(ep.devices, ep.n_devices, sc->device);
            char *init = sc->init != NULL
                             ? json_dumps(sc->init, JSON_COMPACT | JSON_REAL_PRECISION(15))
                             : NULL;
            struct pipit_device *device = NULL;
            struct pipit_agent *agent = NULL;
            struct pipit_error aerr;
            pipit_error_clear(&aerr);
            /* the scenario's device by name, from its tool set (src/devices/registry.c) */
            enum pipit_status ast = pipit_device_init(device_kind(sc), ts, init, &device, &aerr);
            free(init);
            if (ast == PIPIT_OK) {
                ap.device = device;
                ap.tools_format = configs[c].tools_format;
                ap.memory = configs[c].memory;
                ap.grammar = configs[c].grammar;
                ast = factory(factory_user_data, ts, &ap, &agent, &aerr);
            }
            size_t n_turns = json_array_size(sc->turns);
            size_t t = 0;
            while (st == PIPIT_OK && t < n_turns) {
                if (ast != PIPIT_OK || agent == NULL) {
                    /* every turn left of the scenario is an error; the run goes on */
                    char line[700];
                    pipit_format(line, sizeof(line), "%s: the agent could not be created: %s",
                                 sc->id, aerr.text);
                    eval_report_miss(rep, c, line);
                    st = record_error_turns(rep, c, sc, &oracle[s], t, cat);
                    break;
                }
                if (t == 0 || (ep.fresh_every > 0 && t % (size_t)ep.fresh_every == 0)) {
                    pipit_agent_set_cloud(agent, ep.cloud);
                }
                st = run_turn(agent, sc, &oracle[s], t, cat, rep, c);
                t++;
                if (ep.fresh_every > 0 && t < n_turns && t % (size_t)ep.fresh_every == 0) {
                    /* a new agent on the same device: what a long session costs */
                    pipit_agent_free(agent);
                    agent = NULL;
                    pipit_error_clear(&aerr);
                    ast = factory(factory_user_data, ts, &ap, &agent, &aerr);
                }
            }
            pipit_agent_free(agent);
            pipit_device_free(device);
            if (ep.progress != NULL) {
                ep.progress(configs[c].name, c, n_configs, s + 1, set->n, ep.progress_user_data);
            }
        }
    }
    free(oracle);
    if (st != PIPIT_OK) {
        if (err != NULL && err->text[0] == '\0') {
            pipit_error_set(err, st, "eval: %s", pipit_status_str(st));
        }
        pipit_eval_report_free(rep);
        return st;
    }
    *out = rep;
    return PIPIT_OK;
}

static enum pipit_status llama_factory(void *user_data,
                                       const struct pipit_toolset *tools,
                                       const struct pipit_agent_params *params,
                                       struct pipit_agent **out,
                                       struct pipit_error *err) {
    return pipit_agent_init(user_data, tools, params, out, err);
}

enum pipit_status pipit_eval_run(struct pipit_model *model,
                                 const struct pipit_scenarios *set,
                                 const struct pipit_eval_config *configs,
                                 size_t n_configs,
                                 const struct pipit_eval_params *params,
                                 struct pipit_eval_report **out,
                                 struct pipit_error *err) {
    if (model == NULL) {
        pipit_error_clear(err);
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "eval: NULL model");
    }
    return eval_run_with(llama_factory, model, set, configs, n_configs, params, out, err);
}

/* ============================================================================ JSON */

static json_t *ratio(double v) {
    return v < 0 ? json_null() : json_real(v);
}

static json_t *metrics_json(const struct pipit_eval_report *r, size_t c, int32_t cat) {
    struct pipit_eval_metrics m;
    compute_metrics(&r->cfgs[c], cat, -1, &m);
    json_t *o = json_object();
    json_object_set_new(o, "n_scenarios", json_integer(m.n_scenarios));
    json_object_set_new(o, "n_turns", json_integer(m.n_turns));
    json_object_set_new(o, "n_errors", json_integer(m.n_errors));
    json_object_set_new(o, "calls_expected", json_integer(m.calls_expected));
    json_object_set_new(o, "calls_made", json_integer(m.calls_made));
    json_object_set_new(o, "calls_correct", json_integer(m.calls_correct));
    json_object_set_new(o, "calls_valid", json_integer(m.calls_valid));
    json_object_set_new(o, "precision", json_real(m.precision));
    json_object_set_new(o, "recall", json_real(m.recall));
    json_object_set_new(o, "f1", json_real(m.f1));
    json_object_set_new(o, "state_accuracy", ratio(m.state_accuracy));
    json_object_set_new(o, "reply_accuracy", ratio(m.reply_accuracy));
    json_object_set_new(o, "valid_call_rate", ratio(m.valid_call_rate));
    json_object_set_new(o, "no_call_accuracy", ratio(m.no_call_accuracy));
    json_object_set_new(o, "n_state_skipped", json_integer(m.n_state_skipped));
    json_t *router = json_object();
    json_object_set_new(router, "undo_marked", json_integer(m.undo_marked));
    json_object_set_new(router, "undo_routed", json_integer(m.undo_routed));
    json_object_set_new(router, "undo_detection", ratio(m.undo_detection));
    json_object_set_new(router, "undo_false_routes", json_integer(m.undo_false_routes));
    json_object_set_new(router, "split_turns", json_integer(m.split_turns));
    json_object_set_new(router, "split_correct", json_integer(m.split_correct));
    json_object_set_new(router, "split_accuracy", ratio(m.split_accuracy));
    json_object_set_new(o, "router", router);
    json_t *undo = json_object();
    json_object_set_new(undo, "checked", json_integer(m.undo_checked));
    json_object_set_new(undo, "reverted", json_integer(m.undo_reverted));
    json_object_set_new(undo, "revert_rate", ratio(m.undo_revert_rate));
    json_object_set_new(undo, "new_action", json_integer(m.undo_new_action));
    json_object_set_new(o, "undo", undo);
    json_t *oor = json_object();
    json_object_set_new(oor, "expected", json_integer(m.oor_expected));
    json_object_set_new(oor, "refused", json_integer(m.oor_refused));
    json_object_set_new(oor, "substituted", json_integer(m.oor_substituted));
    json_object_set_new(o, "out_of_range", oor);
    json_t *q = json_object();
    json_object_set_new(q, "turns", json_integer(m.questions));
    json_object_set_new(q, "from_state", json_integer(m.questions_from_state));
    json_object_set_new(q, "reply_ok", json_integer(m.questions_reply_ok));
    json_object_set_new(o, "state_questions", q);
    json_t *buckets = json_object();
    for (int32_t b = 0; b < PIPIT_EVAL_N_TURN_BUCKETS; b++) {
        struct pipit_eval_metrics bm;
        compute_metrics(&r->cfgs[c], cat, b, &bm);
        json_t *bo = json_object();
        json_object_set_new(bo, "n_turns", json_integer(bm.n_turns));
        json_object_set_new(bo, "f1", bm.n_turns > 0 ? json_real(bm.f1) : json_null());
        json_object_set_new(bo, "state_accuracy", ratio(bm.state_accuracy));
        json_object_set_new(bo, "reply_accuracy", ratio(bm.reply_accuracy));
        json_object_set_new(buckets, TURN_BUCKETS[b].name, bo);
    }
    json_object_set_new(o, "by_turn_bucket", buckets);
    json_object_set_new(o, "model_calls_per_utterance", json_real(m.model_calls_per_utterance));
    json_object_set_new(o, "prefill_tokens_per_turn", json_real(m.prefill_tokens_per_turn));
    double ctx[PIPIT_SCENARIO_MAX_TURNS];
    int32_t n = pipit_eval_report_context_tokens(r, c, cat >= 0 ? r->categories[cat] : NULL, ctx,
                                                 PIPIT_SCENARIO_MAX_TURNS);
    json_t *a = json_array();
    for (int32_t i = 0; i < n && i < PIPIT_SCENARIO_MAX_TURNS; i++) {
        json_array_append_new(a, ctx[i] < 0 ? json_null() : json_real(ctx[i]));
    }
    json_object_set_new(o, "context_tokens", a);
    json_object_set_new(o, "context_tokens_per_turn", json_real(m.context_tokens_per_turn));
    json_object_set_new(o, "latency_ms_p50", ratio(m.latency_ms_p50));
    json_object_set_new(o, "latency_ms_p95", ratio(m.latency_ms_p95));
    json_object_set_new(o, "ttft_ms_p50", ratio(m.ttft_ms_p50));
    json_object_set_new(o, "ttft_ms_p95", ratio(m.ttft_ms_p95));
    return o;
}

char *pipit_eval_report_json(const struct pipit_eval_report *r) {
    if (r == NULL) {
        return NULL;
    }
    json_t *root = json_object();
    json_t *cfgs = json_object();
    for (size_t c = 0; c < r->n_cfgs; c++) {
        const struct config_data *cd = &r->cfgs[c];
        json_t *o = json_object();
        json_t *params = json_object();
        json_object_set_new(params, "tools_format", json_string(format_name(cd->cfg.tools_format)));
        json_object_set_new(params, "memory", json_string(memory_name(cd->cfg.memory)));
        json_object_set_new(params, "grammar", json_boolean(cd->cfg.grammar));
        json_object_set_new(o, "params", params);
        json_object_set_new(o, "overall", metrics_json(r, c, -1));
        json_t *bc = json_object();
        for (size_t k = 0; k < r->n_categories; k++) {
            json_object_set_new(bc, r->categories[k], metrics_json(r, c, (int32_t)k));
        }
        json_object_set_new(o, "by_category", bc);
        json_t *misses = json_array();
        const char *p = cd->misses.data;
        while (p != NULL && *p != '\0') {
            const char *nl = strchr(p, '\n');
            size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
            json_array_append_new(misses, json_stringn(p, n));
            p += n + (nl != NULL ? 1 : 0);
        }
        json_object_set_new(o, "misses", misses);
        json_object_set_new(cfgs, cd->cfg.name, o);
    }
    json_object_set_new(root, "configs", cfgs);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(root);
    return s;
}

char *pipit_eval_report_misses(const struct pipit_eval_report *r, size_t config, size_t max) {
    if (r == NULL || config >= r->n_cfgs) {
        return NULL;
    }
    struct strbuf b = {0};
    const char *p = r->cfgs[config].misses.data;
    for (size_t k = 0; p != NULL && *p != '\0' && k < max; k++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) + 1 : strlen(p);
        strbuf_add(&b, p, n);
        p += n;
    }
    return strbuf_take(&b);
}

/* ============================================================================ markdown */

static void md_value(struct strbuf *b, double v) {
    if (v < 0) {
        strbuf_str(b, " n/a");
    } else {
        strbuf_printf(b, " %.3f", v);
    }
}

static void md_ratio(struct strbuf *b, double v) {
    md_value(b, v);
    strbuf_str(b, " |");
}

/* " (0.750)", or nothing when there is no case */
static void md_paren_ratio(struct strbuf *b, double v) {
    if (v >= 0) {
        strbuf_printf(b, " (%.3f)", v);
    }
}

static void md_ms(struct strbuf *b, double v) {
    if (v < 0) {
        strbuf_str(b, " n/a |");
    } else {
        strbuf_printf(b, " %.1f |", v);
    }
}

char *pipit_eval_report_markdown(const struct pipit_eval_report *r) {
    if (r == NULL) {
        return NULL;
    }
    struct strbuf b = {0};
    strbuf_str(&b, "| config | tools | memory | grammar | P | R | F1 | state acc | reply acc | "
                   "valid calls | model calls/utt | prefill/turn | context/turn | p50 ms | p95 ms "
                   "| TTFT p50 ms | errors |\n");
    strbuf_str(&b, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                   "---:|\n");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        struct pipit_eval_metrics m;
        compute_metrics(&r->cfgs[c], -1, -1, &m);
        const struct pipit_eval_config *cfg = &r->cfgs[c].cfg;
        strbuf_printf(&b, "| %s | %s | %s | %s |", cfg->name, format_name(cfg->tools_format),
                      memory_name(cfg->memory), cfg->grammar ? "yes" : "no");
        md_ratio(&b, m.precision);
        md_ratio(&b, m.recall);
        md_ratio(&b, m.f1);
        md_ratio(&b, m.state_accuracy);
        md_ratio(&b, m.reply_accuracy);
        md_ratio(&b, m.valid_call_rate);
        strbuf_printf(&b, " %.2f | %.1f | %.1f |", m.model_calls_per_utterance,
                      m.prefill_tokens_per_turn, m.context_tokens_per_turn);
        md_ms(&b, m.latency_ms_p50);
        md_ms(&b, m.latency_ms_p95);
        md_ms(&b, m.ttft_ms_p50);
        strbuf_printf(&b, " %d |\n", (int)m.n_errors);
    }
    /* the router, measured */
    strbuf_str(&b, "\nRouter (measured, it filters nothing): undo detected = turns marked undo "
                   "that the router sent to undo; false undo = unmarked turns it sent to undo; "
                   "splits = turns expecting k >= 2 calls where it made k steps:\n\n"
                   "| config | undo detected | false undo | splits |\n|---|---:|---:|---:|\n");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        struct pipit_eval_metrics m;
        compute_metrics(&r->cfgs[c], -1, -1, &m);
        strbuf_printf(&b, "| %s | %d/%d", r->cfgs[c].cfg.name, (int)m.undo_routed,
                      (int)m.undo_marked);
        md_paren_ratio(&b, m.undo_detection);
        strbuf_printf(&b, " | %d | %d/%d", (int)m.undo_false_routes, (int)m.split_correct,
                      (int)m.split_turns);
        md_paren_ratio(&b, m.split_accuracy);
        strbuf_str(&b, " |\n");
    }
    /* undo and out-of-range outcomes */
    strbuf_str(&b, "\nUndo turns: reverted = state matches and no new action succeeded (of the "
                   "undo turns listing a state); new action = a call other than undo succeeded. "
                   "Out-of-range expectations: refused = tried and refused, no call of that tool "
                   "succeeded; substituted = that tool succeeded with other arguments. State "
                   "questions (no call expected, the value in reply_contains): from the state = "
                   "answered from the device's state without model text (its true value); "
                   "expected reply = the reply holds the set's words:\n\n"
                   "| config | undo reverted | undo with a new action | out of range refused | "
                   "substituted | state questions from the state | ... expected reply |\n"
                   "|---|---:|---:|---:|---:|---:|---:|\n");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        struct pipit_eval_metrics m;
        compute_metrics(&r->cfgs[c], -1, -1, &m);
        strbuf_printf(&b, "| %s | %d/%d", r->cfgs[c].cfg.name, (int)m.undo_reverted,
                      (int)m.undo_checked);
        md_paren_ratio(&b, m.undo_revert_rate);
        strbuf_printf(&b, " | %d | %d/%d | %d | %d/%d | %d/%d |\n", (int)m.undo_new_action,
                      (int)m.oor_refused, (int)m.oor_expected, (int)m.oor_substituted,
                      (int)m.questions_from_state, (int)m.questions, (int)m.questions_reply_ok,
                      (int)m.questions);
    }
    /* decay over a session */
    int32_t session = find_category(r, "session");
    strbuf_str(&b, "\nF1 / state accuracy / reply accuracy by turn number within a scenario "
                   "(turns):\n\n| config | turns of |");
    for (size_t k = 0; k < PIPIT_EVAL_N_TURN_BUCKETS; k++) {
        strbuf_printf(&b, " %s |", TURN_BUCKETS[k].name);
    }
    strbuf_str(&b, "\n|---|---|");
    for (size_t k = 0; k < PIPIT_EVAL_N_TURN_BUCKETS; k++) {
        strbuf_str(&b, "---:|");
    }
    strbuf_str(&b, "\n");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        for (int32_t pass = 0; pass < (session >= 0 ? 2 : 1); pass++) {
            strbuf_printf(&b, "| %s | %s |", r->cfgs[c].cfg.name, pass == 0 ? "all" : "session");
            for (int32_t k = 0; k < PIPIT_EVAL_N_TURN_BUCKETS; k++) {
                struct pipit_eval_metrics m;
                compute_metrics(&r->cfgs[c], pass == 0 ? -1 : session, k, &m);
                if (m.n_turns == 0) {
                    strbuf_str(&b, " n/a |");
                    continue;
                }
                strbuf_printf(&b, " %.3f /", m.f1);
                md_value(&b, m.state_accuracy);
                strbuf_str(&b, " /");
                md_value(&b, m.reply_accuracy);
                strbuf_printf(&b, " (%d) |", (int)m.n_turns);
            }
            strbuf_str(&b, "\n");
        }
    }
    /* F1 per category */
    strbuf_str(&b,
               "\nF1 (precision / recall) by category; \"no call\": of the turns that expect no "
               "call, the share that made none:\n\n| category | scenarios |");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        strbuf_printf(&b, " %s |", r->cfgs[c].cfg.name);
    }
    strbuf_str(&b, "\n|---|---:|");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        strbuf_str(&b, "---:|");
    }
    strbuf_str(&b, "\n");
    for (size_t k = 0; k < r->n_categories; k++) {
        struct pipit_eval_metrics m0;
        compute_metrics(&r->cfgs[0], (int32_t)k, -1, &m0);
        strbuf_printf(&b, "| %s | %d |", r->categories[k], (int)m0.n_scenarios);
        for (size_t c = 0; c < r->n_cfgs; c++) {
            struct pipit_eval_metrics m;
            compute_metrics(&r->cfgs[c], (int32_t)k, -1, &m);
            strbuf_printf(&b, " %.2f (%.2f / %.2f)", m.f1, m.precision, m.recall);
            if (m.no_call_accuracy >= 0) {
                strbuf_printf(&b, ", no call %.2f", m.no_call_accuracy);
            }
            strbuf_str(&b, " |");
        }
        strbuf_str(&b, "\n");
    }
    /* context per turn */
    strbuf_str(&b,
               "\nContext tokens per turn (mean of n_permanent + n_ephemeral_max):\n\n| turn |");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        strbuf_printf(&b, " %s |", r->cfgs[c].cfg.name);
    }
    strbuf_str(&b, "\n|---:|");
    for (size_t c = 0; c < r->n_cfgs; c++) {
        strbuf_str(&b, "---:|");
    }
    strbuf_str(&b, "\n");
    double ctx[16][PIPIT_SCENARIO_MAX_TURNS];
    int32_t n_max = 0;
    size_t n_cfg_shown = r->n_cfgs < 16 ? r->n_cfgs : 16;
    for (size_t c = 0; c < n_cfg_shown; c++) {
        int32_t n = pipit_eval_report_context_tokens(r, c, NULL, ctx[c], PIPIT_SCENARIO_MAX_TURNS);
        n_max = n > n_max ? n : n_max;
    }
    for (int32_t i = 0; i < n_max && i < PIPIT_SCENARIO_MAX_TURNS; i++) {
        strbuf_printf(&b, "| %d |", (int)i);
        for (size_t c = 0; c < n_cfg_shown; c++) {
            if (ctx[c][i] < 0) {
                strbuf_str(&b, " n/a |");
            } else {
                strbuf_printf(&b, " %.0f |", ctx[c][i]);
            }
        }
        strbuf_str(&b, "\n");
    }
    return strbuf_take(&b);
}

/* ============================================================================ SVG */

/* A "nice" tick step for a range: 1, 2 or 5 times a power of ten. */
static double nice_step(double range, int target) {
    double raw = range / (double)target;
    double mag = pow(10.0, floor(log10(raw > 0 ? raw : 1)));
    double f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void xml_text(struct strbuf *b, const char *s) {
    for (; *s != '\0'; s++) {
        switch (*s) {
            case '<':
                strbuf_str(b, "&lt;");
                break;
            case '>':
                strbuf_str(b, "&gt;");
                break;
            case '&':
                strbuf_str(b, "&amp;");
                break;
            case '"':
                strbuf_str(b, "&quot;");
                break;
            default:
                strbuf_add(b, s, 1);
        }
    }
}

char *pipit_eval_report_svg(const struct pipit_eval_report *r, const char *category) {
    if (r == NULL || find_category(r, category) == -2) {
        return NULL;
    }
    static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                         "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
    const double W = 760, H = 440, ml = 70, mr = 190, mt = 40, mb = 55;
    const double pw = W - ml - mr, ph = H - mt - mb;
    size_t n_cfg = r->n_cfgs;
    double(*ctx)[PIPIT_SCENARIO_MAX_TURNS] = calloc(n_cfg > 0 ? n_cfg : 1, sizeof(*ctx));
    int32_t *nt = calloc(n_cfg > 0 ? n_cfg : 1, sizeof(int32_t));
    if (ctx == NULL || nt == NULL) {
        free(ctx);
        free(nt);
        return NULL;
    }
    int32_t n_max = 1;
    double y_max = 1;
    for (size_t c = 0; c < n_cfg; c++) {
        nt[c] = pipit_eval_report_context_tokens(r, c, category, ctx[c], PIPIT_SCENARIO_MAX_TURNS);
        if (nt[c] > PIPIT_SCENARIO_MAX_TURNS) {
            nt[c] = PIPIT_SCENARIO_MAX_TURNS;
        }
        n_max = nt[c] > n_max ? nt[c] : n_max;
        for (int32_t i = 0; i < nt[c]; i++) {
            y_max = ctx[c][i] > y_max ? ctx[c][i] : y_max;
        }
    }
    double ystep = nice_step(y_max, 5);
    double ytop = ceil(y_max / ystep) * ystep;
    double xspan = n_max > 1 ? (double)(n_max - 1) : 1;
    struct strbuf b = {0};
    strbuf_printf(&b,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                  "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
                  W, H, W, H);
    strbuf_printf(&b, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W,
                  H);
    strbuf_printf(&b,
                  "<text x=\"%.0f\" y=\"22\" font-size=\"15\" text-anchor=\"middle\">Context "
                  "tokens per assistant turn",
                  ml + pw / 2);
    if (category != NULL) {
        strbuf_str(&b, " (");
        xml_text(&b, category);
        strbuf_str(&b, ")");
    }
    strbuf_str(&b, "</text>\n");
    /* grid and y ticks */
    for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
        double y = mt + ph - v / ytop * ph;
        strbuf_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n",
                      ml, y, ml + pw, y, ml - 6, y + 4, v);
    }
    /* x ticks */
    double xstep = n_max > 12 ? nice_step(xspan, 10) : 1;
    for (double v = 0; v <= xspan + 1e-9; v += xstep) {
        double x = ml + v / xspan * pw;
        strbuf_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n"
                      "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.0f</text>\n",
                      x, mt + ph, x, mt + ph + 5, x, mt + ph + 19, v);
    }
    /* axes */
    strbuf_printf(&b,
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n"
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
                  ml, mt, ml, mt + ph, ml, mt + ph, ml + pw, mt + ph);
    strbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">assistant turn</text>\n",
                  ml + pw / 2, H - 14);
    strbuf_printf(&b,
                  "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 "
                  "%.1f)\">context tokens</text>\n",
                  mt + ph / 2, mt + ph / 2);
    /* series and legend */
    for (size_t c = 0; c < n_cfg; c++) {
        const char *color = colors[c % (sizeof(colors) / sizeof(colors[0]))];
        const char *dash = c >= 10 ? " stroke-dasharray=\"5,3\"" : "";
        strbuf_printf(&b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                      color, dash);
        bool first = true;
        for (int32_t i = 0; i < nt[c]; i++) {
            if (ctx[c][i] < 0) {
                continue; /* no scenario reached this turn without an error */
            }
            strbuf_printf(&b, "%s%.1f,%.1f", first ? "" : " ", ml + (double)i / xspan * pw,
                          mt + ph - ctx[c][i] / ytop * ph);
            first = false;
        }
        strbuf_str(&b, "\"/>\n");
        double ly = mt + 10 + (double)c * 20;
        strbuf_printf(&b,
                      "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                      "stroke-width=\"3\"/>\n<text x=\"%.1f\" y=\"%.1f\">",
                      W - mr + 15, ly, W - mr + 40, ly, color, W - mr + 46, ly + 4);
        xml_text(&b, r->cfgs[c].cfg.name);
        strbuf_str(&b, "</text>\n");
    }
    strbuf_str(&b, "</svg>\n");
    free(ctx);
    free(nt);
    return strbuf_take(&b);
}
