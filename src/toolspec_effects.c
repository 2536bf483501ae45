/*
 * toolspec_effects.c - the per-tool part of a pack: effects, examples, the keys a tool
 * changes and its default undo (see toolspec_effects.h).
 */
#include "toolspec_effects.h"

#include "status.h"
#include "toolspec_pack.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ts_tool_pack_clear(struct pipit_tool_pack *tp) {
    free(tp->set);
    free(tp->examples);
    free((void *)tp->changes);
    memset(tp, 0, sizeof(*tp));
}

static const struct pipit_schema_prop *tool_param(const struct pipit_tool *t, const char *name) {
    for (size_t i = 0; i < t->params->n_props; i++) {
        if (strcmp(t->params->props[i].name, name) == 0) {
            return &t->params->props[i];
        }
    }
    return NULL;
}

/* The declared key `prefix value suffix`, NULL when it is not declared. */
static const struct pipit_pack_key *
expand_key(const struct pipit_pack *pk, const struct pipit_effect_key *ek, const char *value) {
    if (ek->key_arg == NULL) {
        return pipit_pack_find_key(pk, ek->key);
    }
    char name[PIPIT_TOOLSPEC_MAX_NAME * 4];
    pipit_format(name, sizeof(name), "%.*s%s%s", (int)ek->prefix_len, ek->key, value, ek->suffix);
    return pipit_pack_find_key(pk, name);
}

/* The concrete keys `ek` can name: one, or one per enum value of its argument. */
static size_t effect_key_count(const struct pipit_tool *t, const struct pipit_effect_key *ek) {
    if (ek->key_arg == NULL) {
        return 1;
    }
    return tool_param(t, ek->key_arg)->schema->n_enum;
}

static const struct pipit_pack_key *effect_key_at(const struct pipit_pack *pk,
                                                  const struct pipit_tool *t,
                                                  const struct pipit_effect_key *ek,
                                                  size_t i) {
    if (ek->key_arg == NULL) {
        return pipit_pack_find_key(pk, ek->key);
    }
    return expand_key(pk, ek, tool_param(t, ek->key_arg)->schema->enum_str[i]);
}

/* "living_light" or "{room}_light" at `path` (the key's position: errors point at it). */
static bool parse_effect_key(struct ts_parser *P,
                             const struct pipit_pack *pk,
                             const struct pipit_tool *t,
                             const char *key,
                             struct pipit_effect_key *ek,
                             const char *path,
                             bool at_key) {
    ek->key = key;
    const char *open = strchr(key, '{');
    if (open != NULL) {
        const char *close = strchr(open, '}');
        size_t len = close != NULL ? (size_t)(close - open - 1) : 0;
        char arg[PIPIT_TOOLSPEC_MAX_NAME + 1];
        if (close == NULL || len == 0 || len > PIPIT_TOOLSPEC_MAX_NAME ||
            strchr(close + 1, '{') != NULL || strchr(close + 1, '}') != NULL) {
            ts_fail(P, path, at_key,
                    "state key \"%s\" may hold one {argument} placeholder, nothing else in "
                    "braces",
                    key);
            return false;
        }
        memcpy(arg, open + 1, len);
        arg[len] = '\0';
        const struct pipit_schema_prop *prop = tool_param(t, arg);
        if (prop == NULL || prop->schema->type != PIPIT_SCHEMA_STRING ||
            prop->schema->n_enum == 0 || !prop->required) {
            ts_fail(P, path, at_key,
                    "placeholder {%s} in \"%s\" must name a required string-enum argument of "
                    "%s",
                    arg, key, t->name);
            return false;
        }
        ek->key_arg = prop->name;
        ek->prefix_len = (size_t)(open - key);
        ek->suffix = close + 1;
        for (size_t i = 0; i < prop->schema->n_enum; i++) {
            if (expand_key(pk, ek, prop->schema->enum_str[i]) == NULL) {
                ts_fail(P, path, at_key,
                        "\"%s\" with %s \"%s\" names \"%.*s%s%s\", which is not a declared "
                        "state key",
                        key, arg, prop->schema->enum_str[i], (int)ek->prefix_len, key,
                        prop->schema->enum_str[i], ek->suffix);
                return false;
            }
        }
        return true;
    }
    if (pipit_pack_find_key(pk, key) == NULL) {
        ts_fail(P, path, at_key, "\"%s\" is not a declared state key (see $.pipit.state)", key);
        return false;
    }
    return true;
}

/* Whether an argument of schema `s` can be written to key `k`. */
static bool
arg_fits_key(const struct pipit_schema *s, const struct pipit_pack_key *k, char *why, size_t size) {
    bool ok;
    switch (k->type) {
        case PIPIT_SCHEMA_BOOLEAN:
            ok = s->type == PIPIT_SCHEMA_BOOLEAN;
            break;
        case PIPIT_SCHEMA_INTEGER:
            ok = s->type == PIPIT_SCHEMA_INTEGER;
            break;
        case PIPIT_SCHEMA_NUMBER:
            ok = s->type == PIPIT_SCHEMA_INTEGER || s->type == PIPIT_SCHEMA_NUMBER;
            break;
        case PIPIT_SCHEMA_STRING:
            ok = s->type == PIPIT_SCHEMA_STRING;
            break;
        case PIPIT_SCHEMA_ARRAY:
            ok = s->type == PIPIT_SCHEMA_ARRAY && s->items->type == PIPIT_SCHEMA_STRING;
            break;
        default:
            ok = false;
            break;
    }
    if (!ok) {
        pipit_format(why, size, "an argument of type %s%s cannot be written to the %s key \"%s\"",
                     pipit_schema_type_name(s->type),
                     s->type == PIPIT_SCHEMA_ARRAY ? " (of non-strings)" : "",
                     ts_pack_type_name(k->type), k->key);
        return false;
    }
    const struct pipit_schema *strs = k->type == PIPIT_SCHEMA_ARRAY ? s->items : s;
    if ((k->type == PIPIT_SCHEMA_STRING || k->type == PIPIT_SCHEMA_ARRAY) && k->n_enum > 0) {
        if (strs->n_enum == 0) {
            pipit_format(why, size,
                         "\"%s\" allows only its enum values, but the argument is any string",
                         k->key);
            return false;
        }
        for (size_t i = 0; i < strs->n_enum; i++) {
            if (!ts_string_in(k->enum_str, k->n_enum, strs->enum_str[i])) {
                pipit_format(why, size,
                             "the argument's value \"%s\" is not one of \"%s\"'s enum values",
                             strs->enum_str[i], k->key);
                return false;
            }
        }
    }
    return true;
}

/* A value spec: "{arg}", {"arg": ..., "map": {...}} or a constant. `k` (may be NULL) is the key
 * the value is written to (checked for every key the effect can name); `numeric` asks for a
 * number (step's "by" and "sign"), `integral` for an integer number. */
static bool parse_effect_value(struct ts_parser *P,
                               const struct pipit_tool *t,
                               const json_t *v,
                               struct pipit_effect_value *ev,
                               const char *path,
                               bool numeric,
                               bool integral) {
    memset(ev, 0, sizeof(*ev));
    char p[TS_PATH_CAP], why[320];
    const char *arg = NULL;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = strlen(s);
        if (n >= 3 && s[0] == '{' && s[n - 1] == '}') {
            char name[PIPIT_TOOLSPEC_MAX_NAME + 1];
            pipit_format(name, sizeof(name), "%.*s", (int)(n - 2), s + 1);
            const struct pipit_schema_prop *prop = tool_param(t, name);
            if (prop == NULL) {
                ts_fail(P, path, false, "%s has no argument \"%s\"", t->name, name);
                return false;
            }
            arg = prop->name;
        }
    } else if (json_is_object(v)) {
        static const char *const allowed[] = {"arg", "map", NULL};
        if (!ts_only_keys(P, v, path, allowed, "a mapped value (expected arg, map)")) {
            return false;
        }
        const char *name = ts_get_string(P, v, "arg", path, true, PIPIT_TOOLSPEC_MAX_NAME, true);
        if (name == NULL) {
            return false;
        }
        const struct pipit_schema_prop *prop = tool_param(t, name);
        ts_path_key(p, sizeof(p), path, "arg");
        if (prop == NULL) {
            ts_fail(P, p, false, "%s has no argument \"%s\"", t->name, name);
            return false;
        }
        const struct pipit_schema *s = prop->schema;
        if (s->type != PIPIT_SCHEMA_STRING || s->n_enum == 0) {
            ts_fail(P, p, false, "a map needs a string-enum argument, \"%s\" is not one", name);
            return false;
        }
        const json_t *map = json_object_get(v, "map");
        char mp[TS_PATH_CAP];
        ts_path_key(mp, sizeof(mp), path, "map");
        if (map == NULL) {
            ts_fail(P, path, false, "missing \"map\"");
            return false;
        }
        if (!json_is_object(map)) {
            ts_fail(P, mp, false, "expected an object of value: value, got %s", ts_json_kind(map));
            return false;
        }
        const char *mk;
        json_t *mv;
        json_object_foreach((json_t *)map, mk, mv) {
            ts_path_key(p, sizeof(p), mp, mk);
            if (!ts_string_in((const char *const *)s->enum_str, s->n_enum, mk)) {
                ts_fail(P, p, true, "\"%s\" is not a value of argument \"%s\"", mk, name);
                return false;
            }
            if (numeric &&
                (!json_is_number(mv) || (integral && !ts_is_integral(json_number_value(mv))))) {
                ts_fail(P, p, false, "expected %s, got %s", integral ? "an integer" : "a number",
                        json_is_number(mv) ? "a fraction" : ts_json_kind(mv));
                return false;
            }
        }
        for (size_t i = 0; i < s->n_enum; i++) {
            if (json_object_get(map, s->enum_str[i]) == NULL) {
                ts_fail(P, mp, false, "the map has no entry for \"%s\"", s->enum_str[i]);
                return false;
            }
        }
        ev->arg = prop->name;
        ev->map = map;
        return true;
    }
    if (arg != NULL) {
        const struct pipit_schema *s = tool_param(t, arg)->schema;
        if (numeric && (s->type != PIPIT_SCHEMA_NUMBER && s->type != PIPIT_SCHEMA_INTEGER)) {
            ts_fail(P, path, false, "argument \"%s\" must be a number, it is %s", arg,
                    pipit_schema_type_name(s->type));
            return false;
        }
        if (integral && s->type != PIPIT_SCHEMA_INTEGER) {
            ts_fail(P, path, false,
                    "argument \"%s\" must be an integer to step an integer key, it is %s", arg,
                    pipit_schema_type_name(s->type));
            return false;
        }
        ev->arg = arg;
        return true;
    }
    if (numeric && (!json_is_number(v) || (integral && !ts_is_integral(json_number_value(v))))) {
        ts_fail(P, path, false,
                "expected %s, \"{argument}\" or {\"arg\": ..., \"map\": ...}, got %s",
                integral ? "an integer" : "a number",
                json_is_number(v) ? "a fraction" : ts_json_kind(v));
        return false;
    }
    (void)why;
    ev->constant = v;
    return true;
}

/* Check a set value against every key `ek` can name. */
static bool check_set_value(struct ts_parser *P,
                            const struct pipit_pack *pk,
                            const struct pipit_tool *t,
                            const struct pipit_effect_set *es,
                            const char *path) {
    char why[320];
    for (size_t i = 0; i < effect_key_count(t, &es->key); i++) {
        const struct pipit_pack_key *k = effect_key_at(pk, t, &es->key, i);
        if (es->value.map != NULL) {
            const char *mk;
            json_t *mv;
            json_object_foreach((json_t *)es->value.map, mk, mv) {
                if (!pipit_pack_key_check(k, mv, why, sizeof(why))) {
                    char p[TS_PATH_CAP], mp[TS_PATH_CAP];
                    ts_path_key(mp, sizeof(mp), path, "map");
                    ts_path_key(p, sizeof(p), mp, mk);
                    ts_fail(P, p, false, "cannot be written to \"%s\": %s", k->key, why);
                    return false;
                }
            }
        } else if (es->value.arg != NULL) {
            if (!arg_fits_key(tool_param(t, es->value.arg)->schema, k, why, sizeof(why))) {
                ts_fail(P, path, false, "%s", why);
                return false;
            }
        } else if (!pipit_pack_key_check(k, es->value.constant, why, sizeof(why))) {
            ts_fail(P, path, false, "cannot be written to \"%s\": %s", k->key, why);
            return false;
        }
    }
    return true;
}

static bool parse_effect(struct ts_parser *P,
                         const struct pipit_pack *pk,
                         const struct pipit_tool *t,
                         struct pipit_tool_pack *tp,
                         const json_t *eff,
                         const char *path) {
    if (json_is_string(eff)) {
        const char *s = json_string_value(eff);
        if (strcmp(s, "read") == 0) {
            tp->effect = PIPIT_EFFECT_READ;
        } else if (strcmp(s, "cloud") == 0) {
            tp->effect = PIPIT_EFFECT_CLOUD;
        } else if (strcmp(s, "none") == 0) {
            tp->effect = PIPIT_EFFECT_NONE;
        } else {
            ts_fail(P, path, false,
                    "expected \"read\", \"cloud\", \"none\" or {\"set\": ..., \"step\": ...}, "
                    "got \"%s\"",
                    s);
            return false;
        }
        return true;
    }
    if (!json_is_object(eff)) {
        ts_fail(P, path, false,
                "expected \"read\", \"cloud\", \"none\" or {\"set\": ..., \"step\": ...}, got %s",
                ts_json_kind(eff));
        return false;
    }
    static const char *const allowed[] = {"set", "step", NULL};
    if (!ts_only_keys(P, eff, path, allowed, "an effect (expected set, step)")) {
        return false;
    }
    const json_t *set = json_object_get(eff, "set");
    const json_t *step = json_object_get(eff, "step");
    if (set == NULL && step == NULL) {
        tp->effect = PIPIT_EFFECT_NONE; /* {}: an action without state */
        return true;
    }
    if (pk == NULL || pk->n_keys == 0) {
        ts_fail(P, path, false,
                "an effect that changes state needs a declared state ($.pipit.state)");
        return false;
    }
    tp->effect = PIPIT_EFFECT_CHANGE;
    char p[TS_PATH_CAP], sp[TS_PATH_CAP];
    if (set != NULL) {
        ts_path_key(sp, sizeof(sp), path, "set");
        size_t n = json_is_object(set) ? json_object_size(set) : 0;
        if (!json_is_object(set) || n == 0 || n > PIPIT_PACK_MAX_EFFECT_SETS) {
            ts_fail(P, sp, false, "expected an object of 1..%d state key: value, got %s",
                    PIPIT_PACK_MAX_EFFECT_SETS,
                    json_is_object(set) ? "an empty object" : ts_json_kind(set));
            return false;
        }
        tp->set = calloc(n, sizeof(*tp->set));
        if (tp->set == NULL) {
            ts_nomem(P);
            return false;
        }
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)set, key, v) {
            struct pipit_effect_set *es = &tp->set[tp->n_set];
            ts_path_key(p, sizeof(p), sp, key);
            if (!parse_effect_key(P, pk, t, key, &es->key, p, true) ||
                !parse_effect_value(P, t, v, &es->value, p, false, false) ||
                !check_set_value(P, pk, t, es, p)) {
                return false;
            }
            tp->n_set++;
        }
    }
    if (step != NULL) {
        ts_path_key(sp, sizeof(sp), path, "step");
        if (!json_is_object(step)) {
            ts_fail(P, sp, false, "expected an object {\"key\": ..., \"by\": ...}, got %s",
                    ts_json_kind(step));
            return false;
        }
        static const char *const sk[] = {"key", "by", "sign", NULL};
        if (!ts_only_keys(P, step, sp, sk, "a step (expected key, by, sign)")) {
            return false;
        }
        const char *key =
            ts_get_string(P, step, "key", sp, true, PIPIT_TOOLSPEC_MAX_NAME * 2, true);
        if (key == NULL) {
            return false;
        }
        ts_path_key(p, sizeof(p), sp, "key");
        if (!parse_effect_key(P, pk, t, key, &tp->step.key, p, false)) {
            return false;
        }
        bool integral = false;
        for (size_t i = 0; i < effect_key_count(t, &tp->step.key); i++) {
            const struct pipit_pack_key *k = effect_key_at(pk, t, &tp->step.key, i);
            if (k->type != PIPIT_SCHEMA_INTEGER && k->type != PIPIT_SCHEMA_NUMBER) {
                ts_fail(P, p, false, "a step needs an integer or number key, \"%s\" is %s", k->key,
                        ts_pack_type_name(k->type));
                return false;
            }
            integral = integral || k->type == PIPIT_SCHEMA_INTEGER;
        }
        for (size_t i = 0; i < tp->n_set; i++) {
            for (size_t a = 0; a < effect_key_count(t, &tp->set[i].key); a++) {
                for (size_t b = 0; b < effect_key_count(t, &tp->step.key); b++) {
                    if (effect_key_at(pk, t, &tp->set[i].key, a) ==
                        effect_key_at(pk, t, &tp->step.key, b)) {
                        ts_fail(P, p, false, "\"%s\" is both set and stepped by this effect",
                                effect_key_at(pk, t, &tp->step.key, b)->key);
                        return false;
                    }
                }
            }
        }
        const json_t *by = json_object_get(step, "by");
        if (by == NULL) {
            ts_fail(P, sp, false, "missing \"by\"");
            return false;
        }
        ts_path_key(p, sizeof(p), sp, "by");
        if (!parse_effect_value(P, t, by, &tp->step.by, p, true, integral)) {
            return false;
        }
        const json_t *sign = json_object_get(step, "sign");
        if (sign != NULL) {
            ts_path_key(p, sizeof(p), sp, "sign");
            if (!parse_effect_value(P, t, sign, &tp->step.sign, p, true, integral)) {
                return false;
            }
        }
        tp->has_step = true;
    }
    return true;
}

static bool parse_examples(struct ts_parser *P,
                           const struct pipit_tool *t,
                           struct pipit_tool_pack *tp,
                           const json_t *ex,
                           const char *path) {
    size_t n = json_is_array(ex) ? json_array_size(ex) : 0;
    if (!json_is_array(ex) || n == 0 || n > PIPIT_PACK_MAX_EXAMPLES) {
        ts_fail(P, path, false, "expected an array of 1..%d examples, got %s",
                PIPIT_PACK_MAX_EXAMPLES, json_is_array(ex) ? "an empty array" : ts_json_kind(ex));
        return false;
    }
    tp->examples = calloc(n, sizeof(*tp->examples));
    if (tp->examples == NULL) {
        ts_nomem(P);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(ex, i);
        char p[TS_PATH_CAP], ap[TS_PATH_CAP];
        ts_path_index(p, sizeof(p), path, i);
        if (!json_is_object(e)) {
            ts_fail(P, p, false, "expected {\"say\": ..., \"args\": {...}}, got %s",
                    ts_json_kind(e));
            return false;
        }
        static const char *const allowed[] = {"say", "args", NULL};
        if (!ts_only_keys(P, e, p, allowed, "an example (expected say, args)")) {
            return false;
        }
        const char *say = ts_get_string(P, e, "say", p, true, PIPIT_TOOLSPEC_MAX_TEMPLATE, true);
        if (say == NULL) {
            return false;
        }
        const json_t *args = json_object_get(e, "args");
        ts_path_key(ap, sizeof(ap), p, "args");
        if (args == NULL) {
            ts_fail(P, p, false, "missing \"args\" ({} for a tool without arguments)");
            return false;
        }
        struct pipit_arg_problem prob;
        size_t n_prob = 0;
        if (!json_is_object(args)) {
            ts_fail(P, ap, false, "expected an object of arguments, got %s", ts_json_kind(args));
            return false;
        }
        if (pipit_tool_check_args(t, args, &prob, 1, &n_prob) != PIPIT_OK) {
            ts_fail(P, ap, false, "the example does not fit %s's parameters: %s: %s", t->name,
                    n_prob > 0 ? prob.path : "args", n_prob > 0 ? prob.message : "invalid");
            return false;
        }
        tp->examples[i].say = say;
        tp->examples[i].args = args;
        tp->n_examples = i + 1;
    }
    return true;
}

/* The keys an effect can write, in declared order. */
static bool collect_changes(struct ts_parser *P,
                            const struct pipit_pack *pk,
                            const struct pipit_tool *t,
                            struct pipit_tool_pack *tp) {
    if (tp->effect != PIPIT_EFFECT_CHANGE) {
        return true;
    }
    tp->changes = calloc(pk->n_keys, sizeof(*tp->changes));
    if (tp->changes == NULL) {
        ts_nomem(P);
        return false;
    }
    for (size_t k = 0; k < pk->n_keys; k++) {
        const struct pipit_pack_key *want = &pk->keys[k];
        bool hit = false;
        for (size_t i = 0; i < tp->n_set && !hit; i++) {
            for (size_t a = 0; a < effect_key_count(t, &tp->set[i].key) && !hit; a++) {
                hit = effect_key_at(pk, t, &tp->set[i].key, a) == want;
            }
        }
        for (size_t b = 0; tp->has_step && b < effect_key_count(t, &tp->step.key) && !hit; b++) {
            hit = effect_key_at(pk, t, &tp->step.key, b) == want;
        }
        if (hit) {
            tp->changes[tp->n_changes++] = want->key;
        }
    }
    return true;
}

/* Per tool: effect, examples, the default undo, and undo keys against the declared state.
 * `tools_path` is "$" (plain array) or "$.tools". */
bool ts_parse_tool_packs(struct ts_parser *P,
                         struct pipit_toolset *ts,
                         const json_t *list,
                         const char *tools_path) {
    ts->tool_pk = calloc(ts->n_tools, sizeof(*ts->tool_pk));
    if (ts->tool_pk == NULL) {
        ts_nomem(P);
        return false;
    }
    const struct pipit_pack *pk = ts->pack;
    for (size_t i = 0; i < ts->n_tools; i++) {
        struct pipit_tool *t = &ts->tools[i];
        struct pipit_tool_pack *tp = &ts->tool_pk[i];
        const json_t *pip = json_object_get(json_array_get(list, i), "pipit");
        char tpath[TS_PATH_CAP], pp[TS_PATH_CAP], p[TS_PATH_CAP];
        ts_path_index(tpath, sizeof(tpath), tools_path, i);
        ts_path_key(pp, sizeof(pp), tpath, "pipit");
        const json_t *eff = json_object_get(pip, "effect");
        const json_t *ex = json_object_get(pip, "examples");
        if (eff != NULL) {
            ts_path_key(p, sizeof(p), pp, "effect");
            if (!parse_effect(P, pk, t, tp, eff, p)) {
                return false;
            }
        }
        if (ex != NULL) {
            ts_path_key(p, sizeof(p), pp, "examples");
            if (!parse_examples(P, t, tp, ex, p)) {
                return false;
            }
        }
        if (!collect_changes(P, pk, t, tp)) {
            return false;
        }
        const json_t *undo = json_object_get(pip, "undo");
        if (undo == NULL && tp->n_changes > 0) {
            /* undo defaults to the keys the effect can change */
            t->undo_keys = calloc(tp->n_changes, sizeof(char *));
            if (t->undo_keys == NULL) {
                ts_nomem(P);
                return false;
            }
            for (size_t k = 0; k < tp->n_changes; k++) {
                t->undo_keys[k] = ts_dup_str(tp->changes[k]);
                if (t->undo_keys[k] == NULL) {
                    ts_nomem(P);
                    return false;
                }
                t->n_undo_keys = k + 1;
            }
            t->undo = PIPIT_UNDO_KEYS;
        }
        if (undo != NULL && t->undo == PIPIT_UNDO_KEYS && pk != NULL && pk->n_keys > 0) {
            for (size_t k = 0; k < t->n_undo_keys; k++) {
                if (pipit_pack_find_key(pk, t->undo_keys[k]) == NULL) {
                    char up[TS_PATH_CAP], kp[TS_PATH_CAP];
                    ts_path_key(up, sizeof(up), pp, "undo");
                    ts_path_key(kp, sizeof(kp), up, "keys");
                    ts_path_index(p, sizeof(p), kp, k);
                    ts_fail(P, p, false,
                            "undo key \"%s\" is not a declared state key (see $.pipit.state)",
                            t->undo_keys[k]);
                    return false;
                }
            }
        }
    }
    return true;
}

const struct pipit_tool_pack *pipit_toolset_tool_pack(const struct pipit_toolset *ts,
                                                      size_t index) {
    if (ts == NULL || ts->tool_pk == NULL || index >= ts->n_tools) {
        return NULL;
    }
    return &ts->tool_pk[index];
}

bool pipit_toolset_is_pack_tool(const struct pipit_toolset *ts, int32_t tool) {
    return ts != NULL && tool >= 0 && (size_t)tool < ts->n_tools &&
           !pipit_toolset_is_cloud(ts, (size_t)tool);
}

bool pipit_toolset_is_cloud(const struct pipit_toolset *ts, size_t index) {
    if (ts == NULL || index >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, index);
    return strcmp(ts->tools[index].name, "process_with_cloud_llm") == 0 ||
           (tp != NULL && tp->effect == PIPIT_EFFECT_CLOUD);
}
