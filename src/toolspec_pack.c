/*
 * toolspec_pack.c - the set-level "pipit" block of a pack: name, system line, state keys,
 * router words (see toolspec_pack.h).
 */
#include "toolspec_pack.h"

#include "status.h"
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_pack_name(const char *s) {
    if (!(s[0] >= 'a' && s[0] <= 'z')) {
        return false;
    }
    for (const char *p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-')) {
            return false;
        }
    }
    return true;
}

/* '|'-separated phrases of lowercase ASCII words: "thermostat|heating|room temperature". */
static bool is_phrase_list(const char *s) {
    bool empty = true;
    for (const char *p = s;; p++) {
        if (*p == '|' || *p == '\0') {
            if (empty) {
                return false;
            }
            if (*p == '\0') {
                return true;
            }
            empty = true;
            continue;
        }
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == ' ' || *p == '-' ||
              *p == '\'')) {
            return false;
        }
        empty = empty && *p == ' ';
    }
}

const char *ts_pack_type_name(enum pipit_schema_type t) {
    return t == PIPIT_SCHEMA_ARRAY ? "array of strings" : pipit_schema_type_name(t);
}

bool ts_string_in(const char *const *list, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++) {
        if (strcmp(list[i], s) == 0) {
            return true;
        }
    }
    return false;
}

static void enum_text(const char *const *list, size_t n, char *buf, size_t size) {
    struct strbuf b = {0};
    for (size_t i = 0; i < n; i++) {
        strbuf_str(&b, i == 0 ? "\"" : (i + 1 == n ? " or \"" : ", \""));
        strbuf_str(&b, list[i]);
        strbuf_str(&b, "\"");
    }
    pipit_format(buf, size, "%s", b.data != NULL ? b.data : "");
    free(b.data);
}

bool pipit_pack_key_check(const struct pipit_pack_key *k, const json_t *v, char *why, size_t size) {
    char num[64], a[64], b[64], list[256];
    char dummy[8];
    if (why == NULL) {
        why = dummy;
        size = sizeof(dummy);
    }
    if (k == NULL || v == NULL) {
        pipit_format(why, size, "missing");
        return false;
    }
    switch (k->type) {
        case PIPIT_SCHEMA_BOOLEAN:
            if (!json_is_boolean(v)) {
                pipit_format(why, size, "expected a boolean, got %s", ts_json_kind(v));
                return false;
            }
            return true;
        case PIPIT_SCHEMA_INTEGER:
        case PIPIT_SCHEMA_NUMBER: {
            if (!json_is_number(v)) {
                pipit_format(why, size, "expected %s, got %s",
                             k->type == PIPIT_SCHEMA_INTEGER ? "an integer" : "a number",
                             ts_json_kind(v));
                return false;
            }
            double d = json_number_value(v);
            ts_format_json_number(num, sizeof(num), v);
            if (!isfinite(d) || (k->type == PIPIT_SCHEMA_INTEGER && !ts_is_integral(d))) {
                pipit_format(why, size, "%s is not %s", num,
                             k->type == PIPIT_SCHEMA_INTEGER ? "an integer" : "a finite number");
                return false;
            }
            if ((k->has_min && d < k->min) || (k->has_max && d > k->max)) {
                ts_format_number(a, sizeof(a), k->min);
                ts_format_number(b, sizeof(b), k->max);
                if (k->has_min && k->has_max) {
                    pipit_format(why, size, "%s is outside %s..%s", num, a, b);
                } else if (k->has_min) {
                    pipit_format(why, size, "%s is below the minimum %s", num, a);
                } else {
                    pipit_format(why, size, "%s is above the maximum %s", num, b);
                }
                return false;
            }
            return true;
        }
        case PIPIT_SCHEMA_STRING:
            if (!json_is_string(v)) {
                pipit_format(why, size, "expected a string, got %s", ts_json_kind(v));
                return false;
            }
            if (k->n_enum > 0 && !ts_string_in(k->enum_str, k->n_enum, json_string_value(v))) {
                enum_text(k->enum_str, k->n_enum, list, sizeof(list));
                pipit_format(why, size, "\"%.64s\" is not one of %s", json_string_value(v), list);
                return false;
            }
            return true;
        case PIPIT_SCHEMA_ARRAY: {
            if (!json_is_array(v)) {
                pipit_format(why, size, "expected an array of strings, got %s", ts_json_kind(v));
                return false;
            }
            for (size_t i = 0; i < json_array_size(v); i++) {
                const json_t *it = json_array_get(v, i);
                if (!json_is_string(it)) {
                    pipit_format(why, size, "item %zu: expected a string, got %s", i,
                                 ts_json_kind(it));
                    return false;
                }
                if (k->n_enum > 0 && !ts_string_in(k->enum_str, k->n_enum, json_string_value(it))) {
                    enum_text(k->enum_str, k->n_enum, list, sizeof(list));
                    pipit_format(why, size, "item %zu: \"%.64s\" is not one of %s", i,
                                 json_string_value(it), list);
                    return false;
                }
            }
            return true;
        }
        case PIPIT_SCHEMA_OBJECT:
        case PIPIT_SCHEMA_NULL:
        case PIPIT_SCHEMA_ANY:
        case PIPIT_SCHEMA_UNION:
            break;
    }
    pipit_format(why, size, "unsupported key type");
    return false;
}

const struct pipit_pack_key *pipit_pack_find_key(const struct pipit_pack *pack, const char *key) {
    if (pack == NULL || key == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < pack->n_keys; i++) {
        if (strcmp(pack->keys[i].key, key) == 0) {
            return &pack->keys[i];
        }
    }
    return NULL;
}

void ts_pack_free(struct pipit_pack *pk) {
    if (pk == NULL) {
        return;
    }
    for (size_t i = 0; i < pk->n_keys; i++) {
        free((void *)pk->keys[i].enum_str);
    }
    free(pk->keys);
    free((void *)pk->verbs);
    free((void *)pk->nouns);
    free(pk);
}

/* A list of non-empty strings (router words, enums): an owned array of borrowed strings. */
static bool string_list(struct ts_parser *P,
                        const json_t *arr,
                        const char *path,
                        size_t max_n,
                        size_t max_bytes,
                        bool phrases,
                        const char ***out,
                        size_t *n_out) {
    if (!json_is_array(arr)) {
        ts_fail(P, path, false, "expected an array of strings, got %s", ts_json_kind(arr));
        return false;
    }
    size_t n = json_array_size(arr);
    if (n == 0 || n > max_n) {
        ts_fail(P, path, false, "expected 1..%zu strings, got %zu", max_n, n);
        return false;
    }
    const char **list = calloc(n, sizeof(*list));
    if (list == NULL) {
        ts_nomem(P);
        return false;
    }
    *out = list;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        char p[TS_PATH_CAP];
        ts_path_index(p, sizeof(p), path, i);
        if (!json_is_string(v)) {
            ts_fail(P, p, false, "expected a string, got %s", ts_json_kind(v));
            return false;
        }
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (len == 0 || len > max_bytes || strlen(s) != len) {
            ts_fail(P, p, false, "expected 1..%zu bytes without NUL", max_bytes);
            return false;
        }
        if (phrases && !is_phrase_list(s)) {
            /* name the first character that is not allowed (an empty phrase: none) */
            const char *bad = s;
            while (*bad != '\0' && ((*bad >= 'a' && *bad <= 'z') || (*bad >= '0' && *bad <= '9') ||
                                    *bad == ' ' || *bad == '-' || *bad == '\'' || *bad == '|')) {
                bad++;
            }
            char what[48];
            if (*bad == '\0') {
                pipit_format(what, sizeof(what), "an empty phrase between '|'");
            } else if ((unsigned char)*bad < 0x20 || (unsigned char)*bad >= 0x7f) {
                pipit_format(what, sizeof(what), "byte 0x%02x", (unsigned char)*bad);
            } else {
                pipit_format(what, sizeof(what), "'%c'", *bad);
            }
            ts_fail(P, p, false,
                    "\"%s\": %s at byte %d; phrases are lowercase ASCII words (letters a-z, "
                    "digits, spaces, hyphens, apostrophes), several joined by '|'",
                    s, what, (int)(bad - s));
            return false;
        }
        if (ts_string_in(list, i, s)) {
            ts_fail(P, p, false, "duplicate value \"%s\"", s);
            return false;
        }
        list[i] = s;
        *n_out = i + 1;
    }
    return true;
}

static bool parse_key_words(struct ts_parser *P,
                            struct pipit_pack_key *k,
                            const json_t *words,
                            const char *path) {
    if (!json_is_object(words)) {
        ts_fail(P, path, false, "expected an object, got %s", ts_json_kind(words));
        return false;
    }
    static const char *const allowed[] = {"names",   "noun", "unit", "zero",
                                          "pattern", "yes",  "no",   NULL};
    if (!ts_only_keys(P, words, path, allowed,
                      "words (expected names, noun, unit, zero, pattern, yes, no)")) {
        return false;
    }
    const char **slots[] = {&k->words.names,   &k->words.noun, &k->words.unit, &k->words.zero,
                            &k->words.pattern, &k->words.yes,  &k->words.no};
    for (size_t i = 0; i < 7; i++) {
        if (json_object_get(words, allowed[i]) == NULL) {
            continue;
        }
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, allowed[i]);
        const char *s = ts_get_string(P, words, allowed[i], path, false, 256, i != 2);
        if (s == NULL) {
            return false;
        }
        bool numeric = k->type == PIPIT_SCHEMA_INTEGER || k->type == PIPIT_SCHEMA_NUMBER;
        if (i == 0 && !is_phrase_list(s)) {
            ts_fail(P, p, false,
                    "names must be '|'-separated phrases of lowercase letters a-z, digits, "
                    "spaces, '-' and apostrophes (\"heating|thermostat\", \"driver's seat\"; "
                    "\"a/c\" would be \"ac\"), got \"%s\"",
                    s);
            return false;
        }
        if ((i == 2 || i == 3) && !numeric) {
            ts_fail(P, p, true, "\"%s\" applies only to integer and number keys, not %s",
                    allowed[i], ts_pack_type_name(k->type));
            return false;
        }
        if ((i == 5 || i == 6) && k->type != PIPIT_SCHEMA_BOOLEAN) {
            ts_fail(P, p, true, "\"%s\" applies only to boolean keys, not %s", allowed[i],
                    ts_pack_type_name(k->type));
            return false;
        }
        if (i == 4 && strstr(s, "{v}") == NULL) {
            ts_fail(P, p, false,
                    "a pattern must contain {v} (the value) as is; it takes no value map such as "
                    "{v:off=...} (the setter's success template may hold one: docs/pack.md), "
                    "got \"%s\"",
                    s);
            return false;
        }
        *slots[i] = s;
    }
    return true;
}

static bool parse_state_key(struct ts_parser *P,
                            struct pipit_pack_key *k,
                            const char *key,
                            const json_t *decl,
                            const char *path) {
    if (!ts_is_identifier(key) || strlen(key) > PIPIT_PACK_MAX_KEY_NAME) {
        ts_fail(P, path, true,
                "state key \"%s\" must match [a-zA-Z_][a-zA-Z0-9_]* and have at most %d "
                "characters",
                key, PIPIT_PACK_MAX_KEY_NAME);
        return false;
    }
    k->key = key;
    k->words.key = key;
    k->show = key;
    if (!json_is_object(decl)) {
        ts_fail(P, path, false, "expected a state key object, got %s", ts_json_kind(decl));
        return false;
    }
    static const char *const allowed[] = {"type", "initial", "minimum", "maximum",
                                          "enum", "show",    "words",   NULL};
    if (!ts_only_keys(
            P, decl, path, allowed,
            "a state key (expected type, initial, minimum, maximum, enum, show, words)")) {
        return false;
    }
    const char *type = ts_get_string(P, decl, "type", path, true, 64, true);
    if (type == NULL) {
        return false;
    }
    static const char *const types[] = {"boolean", "integer", "number", "string", "array"};
    static const enum pipit_schema_type kinds[] = {PIPIT_SCHEMA_BOOLEAN, PIPIT_SCHEMA_INTEGER,
                                                   PIPIT_SCHEMA_NUMBER, PIPIT_SCHEMA_STRING,
                                                   PIPIT_SCHEMA_ARRAY};
    char p[TS_PATH_CAP];
    int found = -1;
    for (int i = 0; i < 5; i++) {
        found = strcmp(type, types[i]) == 0 ? i : found;
    }
    if (found < 0) {
        ts_path_key(p, sizeof(p), path, "type");
        ts_fail(P, p, false,
                "unsupported state type \"%s\" (supported: boolean, integer, number, string, "
                "array)",
                type);
        return false;
    }
    k->type = kinds[found];
    bool numeric = k->type == PIPIT_SCHEMA_INTEGER || k->type == PIPIT_SCHEMA_NUMBER;
    static const char *const bounds[2] = {"minimum", "maximum"};
    for (int b = 0; b < 2; b++) {
        const json_t *v = json_object_get(decl, bounds[b]);
        if (v == NULL) {
            continue;
        }
        ts_path_key(p, sizeof(p), path, bounds[b]);
        if (!numeric) {
            ts_fail(P, p, true, "\"%s\" applies only to integer and number keys, not %s", bounds[b],
                    ts_pack_type_name(k->type));
            return false;
        }
        if (!json_is_number(v)) {
            ts_fail(P, p, false, "expected a number, got %s", ts_json_kind(v));
            return false;
        }
        if (k->type == PIPIT_SCHEMA_INTEGER && !ts_is_integral(json_number_value(v))) {
            char num[64];
            ts_format_json_number(num, sizeof(num), v);
            ts_fail(P, p, false, "%s is not an integer", num);
            return false;
        }
        if (b == 0) {
            k->has_min = true;
            k->min = json_number_value(v);
        } else {
            k->has_max = true;
            k->max = json_number_value(v);
        }
    }
    if (k->has_min && k->has_max && k->min > k->max) {
        char a[64], b[64];
        ts_path_key(p, sizeof(p), path, "maximum");
        ts_format_number(a, sizeof(a), k->max);
        ts_format_number(b, sizeof(b), k->min);
        ts_fail(P, p, false, "maximum %s is below minimum %s", a, b);
        return false;
    }
    const json_t *en = json_object_get(decl, "enum");
    if (en != NULL) {
        ts_path_key(p, sizeof(p), path, "enum");
        if (k->type != PIPIT_SCHEMA_STRING && k->type != PIPIT_SCHEMA_ARRAY) {
            ts_fail(P, p, true, "\"enum\" applies only to string and array keys, not %s",
                    ts_pack_type_name(k->type));
            return false;
        }
        if (!string_list(P, en, p, PIPIT_TOOLSPEC_MAX_ENUM, PIPIT_TOOLSPEC_MAX_ENUM_STRING, false,
                         &k->enum_str, &k->n_enum)) {
            return false;
        }
    }
    const json_t *show = json_object_get(decl, "show");
    if (show != NULL) {
        ts_path_key(p, sizeof(p), path, "show");
        if (json_is_false(show)) {
            k->show = NULL;
        } else {
            const char *s = ts_get_string(P, decl, "show", path, false, 32, true);
            if (s == NULL) {
                return false;
            }
            for (const char *c = s; *c != '\0'; c++) {
                if (*c == ' ' || *c == '=' || (unsigned char)*c < 0x20) {
                    ts_fail(P, p, false,
                            "a state line label has no spaces or '=', got \"%s\" (false hides "
                            "the key)",
                            s);
                    return false;
                }
            }
            k->show = s;
        }
    }
    const json_t *init = json_object_get(decl, "initial");
    if (init == NULL) {
        ts_fail(P, path, false, "missing \"initial\"");
        return false;
    }
    char why[320];
    if (!pipit_pack_key_check(k, init, why, sizeof(why))) {
        ts_path_key(p, sizeof(p), path, "initial");
        ts_fail(P, p, false, "initial value: %s", why);
        return false;
    }
    k->initial = init;
    const json_t *words = json_object_get(decl, "words");
    if (words != NULL) {
        ts_path_key(p, sizeof(p), path, "words");
        return parse_key_words(P, k, words, p);
    }
    return true;
}

/* The set-level "pipit" block at `path` ("$.pipit"). */
bool ts_parse_pack(struct ts_parser *P,
                   struct pipit_toolset *ts,
                   const json_t *pip,
                   const char *path) {
    if (!json_is_object(pip)) {
        ts_fail(P, path, false, "expected an object, got %s", ts_json_kind(pip));
        return false;
    }
    static const char *const allowed[] = {"pack", "system", "state", "router", NULL};
    if (!ts_only_keys(P, pip, path, allowed,
                      "the pack block (expected pack, system, state, router)")) {
        return false;
    }
    struct pipit_pack *pk = calloc(1, sizeof(*pk));
    if (pk == NULL) {
        ts_nomem(P);
        return false;
    }
    ts->pack = pk;
    char p[TS_PATH_CAP];
    pk->name = ts_get_string(P, pip, "pack", path, true, 32, true);
    if (pk->name == NULL) {
        return false;
    }
    if (!is_pack_name(pk->name)) {
        ts_path_key(p, sizeof(p), path, "pack");
        ts_fail(P, p, false,
                "pack name \"%s\" must start with a-z and use only a-z, 0-9, '_' and '-'",
                pk->name);
        return false;
    }
    if (json_object_get(pip, "system") != NULL) {
        pk->system =
            ts_get_string(P, pip, "system", path, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, true);
        if (pk->system == NULL) {
            return false;
        }
    }
    const json_t *state = json_object_get(pip, "state");
    if (state != NULL) {
        char sp[TS_PATH_CAP];
        ts_path_key(sp, sizeof(sp), path, "state");
        if (!json_is_object(state)) {
            ts_fail(P, sp, false, "expected an object of state keys, got %s", ts_json_kind(state));
            return false;
        }
        size_t n = json_object_size(state);
        if (n == 0 || n > PIPIT_PACK_MAX_KEYS) {
            ts_fail(P, sp, false, "expected 1..%d state keys, got %zu", PIPIT_PACK_MAX_KEYS, n);
            return false;
        }
        pk->keys = calloc(n, sizeof(*pk->keys));
        if (pk->keys == NULL) {
            ts_nomem(P);
            return false;
        }
        const char *key;
        json_t *decl;
        json_object_foreach((json_t *)state, key, decl) {
            ts_path_key(p, sizeof(p), sp, key);
            pk->n_keys++;
            if (!parse_state_key(P, &pk->keys[pk->n_keys - 1], key, decl, p)) {
                return false;
            }
            /* the state line says "label=value": two keys with one label are one to a model */
            const char *label = pk->keys[pk->n_keys - 1].show;
            for (size_t i = 0; label != NULL && i + 1 < pk->n_keys; i++) {
                if (pk->keys[i].show != NULL && strcmp(pk->keys[i].show, label) == 0) {
                    char lp[TS_PATH_CAP];
                    ts_path_key(lp, sizeof(lp), p, "show");
                    ts_fail(P, lp, false,
                            "the state line label \"%s\" is already \"%s\"'s: each key needs "
                            "its own (or false to hide it)",
                            label, pk->keys[i].key);
                    return false;
                }
            }
        }
    }
    const json_t *router = json_object_get(pip, "router");
    if (router != NULL) {
        char rp[TS_PATH_CAP];
        ts_path_key(rp, sizeof(rp), path, "router");
        if (!json_is_object(router)) {
            ts_fail(P, rp, false, "expected an object, got %s", ts_json_kind(router));
            return false;
        }
        static const char *const rk[] = {"verbs", "nouns", NULL};
        if (!ts_only_keys(P, router, rp, rk, "router (expected verbs, nouns)")) {
            return false;
        }
        const json_t *verbs = json_object_get(router, "verbs");
        const json_t *nouns = json_object_get(router, "nouns");
        ts_path_key(p, sizeof(p), rp, "verbs");
        if (verbs != NULL && !string_list(P, verbs, p, PIPIT_PACK_MAX_ROUTER_WORDS, 64, true,
                                          &pk->verbs, &pk->n_verbs)) {
            return false;
        }
        ts_path_key(p, sizeof(p), rp, "nouns");
        if (nouns != NULL && !string_list(P, nouns, p, PIPIT_PACK_MAX_ROUTER_WORDS, 64, true,
                                          &pk->nouns, &pk->n_nouns)) {
            return false;
        }
    }
    return true;
}

const struct pipit_pack *pipit_toolset_pack(const struct pipit_toolset *ts) {
    return ts == NULL ? NULL : ts->pack;
}
