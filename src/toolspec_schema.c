/*
 * toolspec_schema.c - JSON Schema compiled into pipit's schema tree (see toolspec_schema.h):
 * the recursive part. Each node's own keywords are read by toolspec_keywords.c; this file
 * walks objects, arrays, type lists, "$ref"s and combinations.
 */
#include "toolspec_schema.h"

#include "toolspec_keywords.h"

#include <stdlib.h>
#include <string.h>

static bool parse_object_schema(struct ts_parser *P,
                                struct pipit_schema *s,
                                const json_t *node,
                                const char *path,
                                int depth) {
    const json_t *props = json_object_get(node, "properties");
    char pp[TS_PATH_CAP];
    ts_path_key(pp, sizeof(pp), path, "properties");
    if (props != NULL) {
        if (!json_is_object(props)) {
            ts_fail(P, pp, false, "expected an object, got %s", ts_json_kind(props));
            return false;
        }
        size_t n = json_object_size(props);
        if (n > PIPIT_TOOLSPEC_MAX_PROPERTIES) {
            ts_fail(P, pp, false, "%zu properties, the limit is %d", n,
                    PIPIT_TOOLSPEC_MAX_PROPERTIES);
            return false;
        }
        s->props = calloc(n > 0 ? n : 1, sizeof(*s->props));
        if (s->props == NULL) {
            ts_nomem(P);
            return false;
        }
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)props, key, v) {
            char p[TS_PATH_CAP];
            ts_path_key(p, sizeof(p), pp, key);
            size_t klen = strlen(key);
            if (klen == 0 || klen > PIPIT_TOOLSPEC_MAX_PROP_NAME) {
                ts_fail(P, p, true, "a property name must have 1..%d bytes",
                        PIPIT_TOOLSPEC_MAX_PROP_NAME);
                return false;
            }
            struct pipit_schema_prop *prop = &s->props[s->n_props];
            prop->name = ts_dup_str(key);
            if (prop->name == NULL) {
                ts_nomem(P);
                return false;
            }
            s->n_props++;
            prop->schema = ts_parse_schema(P, v, p, depth + 1);
            if (prop->schema == NULL) {
                return false;
            }
        }
    }
    const json_t *req = json_object_get(node, "required");
    if (req != NULL) {
        char rp[TS_PATH_CAP];
        ts_path_key(rp, sizeof(rp), path, "required");
        if (!json_is_array(req)) {
            ts_fail(P, rp, false, "expected an array, got %s", ts_json_kind(req));
            return false;
        }
        for (size_t i = 0; i < json_array_size(req); i++) {
            const json_t *v = json_array_get(req, i);
            char p[TS_PATH_CAP];
            ts_path_index(p, sizeof(p), rp, i);
            if (!json_is_string(v)) {
                ts_fail(P, p, false, "expected a string, got %s", ts_json_kind(v));
                return false;
            }
            struct pipit_schema_prop *found = NULL;
            for (size_t k = 0; k < s->n_props; k++) {
                if (strcmp(s->props[k].name, json_string_value(v)) == 0) {
                    found = &s->props[k];
                }
            }
            if (found == NULL) {
                ts_fail(P, p, false, "required \"%s\" is not a property", json_string_value(v));
                return false;
            }
            if (found->required) {
                ts_fail(P, p, false, "\"%s\" is listed twice", json_string_value(v));
                return false;
            }
            found->required = true;
        }
    }
    const json_t *ap = json_object_get(node, "additionalProperties");
    if (ap != NULL && !json_is_false(ap)) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "additionalProperties");
        s->additional = ts_parse_schema(P, ap, p, depth + 1);
        if (s->additional == NULL) {
            return false;
        }
    } else if (ap == NULL && props == NULL && depth > 1) {
        /* a nested object that names no property ({"type": "object"}) is free-form; pipit
         * is strict only where properties are listed (and for the arguments themselves) */
        s->additional = ts_schema_alloc(P, PIPIT_SCHEMA_ANY, node);
        if (s->additional == NULL) {
            return false;
        }
    }
    return ts_get_bounds(P, node, path, "minProperties", "maxProperties", "object", &s->min_props,
                         &s->max_props);
}

static bool parse_array_keywords(struct ts_parser *P,
                                 struct pipit_schema *s,
                                 const json_t *node,
                                 const char *path,
                                 int depth) {
    const json_t *items = json_object_get(node, "items");
    char p[TS_PATH_CAP];
    ts_path_key(p, sizeof(p), path, "items");
    if (json_is_array(items)) {
        ts_fail(P, p, false, "tuple items (an array of schemas) are not supported");
        return false;
    }
    /* no "items": any items */
    s->items = items == NULL ? ts_schema_alloc(P, PIPIT_SCHEMA_ANY, node)
                             : ts_parse_schema(P, items, p, depth + 1);
    if (s->items == NULL) {
        return false;
    }
    if (!ts_get_bounds(P, node, path, "minItems", "maxItems", "array", &s->min_items,
                       &s->max_items)) {
        return false;
    }
    const json_t *u = json_object_get(node, "uniqueItems");
    if (u != NULL) {
        ts_path_key(p, sizeof(p), path, "uniqueItems");
        if (!json_is_boolean(u)) {
            ts_fail(P, p, false, "expected a boolean, got %s", ts_json_kind(u));
            return false;
        }
        s->unique_items = json_is_true(u);
    }
    return true;
}

/* A schema of one known type read from `node` (whose keywords were checked). `filter`: the
 * node lists several types; enum values of other types belong to other members. NULL on
 * error; *empty when filtering left no enum value of this type (the member is dropped). */
static struct pipit_schema *parse_typed(struct ts_parser *P,
                                        const json_t *node,
                                        const char *path,
                                        int depth,
                                        enum pipit_schema_type type,
                                        bool filter,
                                        bool *empty) {
    struct pipit_schema *s = ts_schema_alloc(P, type, node);
    if (s == NULL) {
        return NULL;
    }
    *empty = false;
    bool ok = ts_take_annotations(P, s, node, path);
    if (ok && type == PIPIT_SCHEMA_OBJECT) {
        ok = parse_object_schema(P, s, node, path, depth);
    }
    if (ok && (type == PIPIT_SCHEMA_NUMBER || type == PIPIT_SCHEMA_INTEGER)) {
        ok = ts_parse_number_keywords(P, s, node, path);
    }
    if (ok && type == PIPIT_SCHEMA_STRING) {
        ok = ts_parse_string_keywords(P, s, node, path);
    }
    if (ok && type == PIPIT_SCHEMA_ARRAY) {
        ok = parse_array_keywords(P, s, node, path, depth);
    }
    if (ok && (json_object_get(node, "enum") != NULL || json_object_get(node, "const") != NULL)) {
        ok = ts_parse_enum(P, s, node, path, filter);
        if (ok && s->n_enum == 0) {
            *empty = true;
            ts_schema_free(s);
            return NULL;
        }
        ok = ok && ts_check_enum_values(P, s, path);
    }
    if (ok) {
        ok = ts_check_satisfiable(P, s, path);
    }
    if (!ok) {
        ts_schema_free(s);
        return NULL;
    }
    return s;
}

static const char *const TYPE_NAMES[] = {"object",  "string", "number", "integer",
                                         "boolean", "array",  "null"};

static int type_of_name(const char *name) {
    for (int i = 0; i <= PIPIT_SCHEMA_NULL; i++) {
        if (strcmp(name, TYPE_NAMES[i]) == 0) {
            return i;
        }
    }
    return -1;
}

/* A union of `n` members (taken, NULL entries skipped); a single member is returned as is. */
static struct pipit_schema *make_union(struct ts_parser *P,
                                       const json_t *node,
                                       struct pipit_schema **alts,
                                       size_t n,
                                       bool one_of) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (alts[i] != NULL) {
            alts[k++] = alts[i];
        }
    }
    if (k == 1) {
        return alts[0];
    }
    struct pipit_schema *u = ts_schema_alloc(P, PIPIT_SCHEMA_UNION, node);
    struct pipit_schema **copy = u != NULL ? calloc(k, sizeof(*copy)) : NULL;
    if (copy == NULL) {
        for (size_t i = 0; i < k; i++) {
            ts_schema_free(alts[i]);
        }
        free(u);
        if (u != NULL) {
            ts_nomem(P);
        }
        return NULL;
    }
    memcpy(copy, alts, k * sizeof(*copy));
    u->alts = copy;
    u->n_alts = k;
    u->one_of = one_of;
    return u;
}

/* "type": a name or a list of names; or no type: inferred from enum/const or from keywords of
 * a single type, else any value. */
static struct pipit_schema *
parse_types(struct ts_parser *P, const json_t *node, const char *path, int depth) {
    const json_t *t = json_object_get(node, "type");
    char tp[TS_PATH_CAP];
    ts_path_key(tp, sizeof(tp), path, "type");
    int types[PIPIT_SCHEMA_NULL + 1];
    size_t n = 0;
    if (json_is_string(t)) {
        int k = type_of_name(json_string_value(t));
        if (k < 0) {
            ts_fail(P, tp, false,
                    "unsupported type \"%s\" (supported: object, string, number, integer, "
                    "boolean, array, null)",
                    json_string_value(t));
            return NULL;
        }
        types[n++] = k;
    } else if (json_is_array(t)) {
        if (json_array_size(t) == 0 || json_array_size(t) > PIPIT_SCHEMA_NULL + 1) {
            ts_fail(P, tp, false, "a type list needs 1..7 type names");
            return NULL;
        }
        for (size_t i = 0; i < json_array_size(t); i++) {
            const json_t *e = json_array_get(t, i);
            char p[TS_PATH_CAP];
            ts_path_index(p, sizeof(p), tp, i);
            int k = json_is_string(e) ? type_of_name(json_string_value(e)) : -1;
            if (k < 0) {
                ts_fail(P, p, false,
                        "expected a type name (object, string, number, integer, "
                        "boolean, array, null)");
                return NULL;
            }
            for (size_t j = 0; j < n; j++) {
                if (types[j] == k) {
                    ts_fail(P, p, false, "type \"%s\" is listed twice", TYPE_NAMES[k]);
                    return NULL;
                }
            }
            types[n++] = k;
        }
    } else if (t != NULL) {
        ts_fail(P, tp, false, "expected a type name or a list of them, got %s", ts_json_kind(t));
        return NULL;
    } else {
        /* no type: from the enum's values, or from the keywords present */
        const json_t *en = json_object_get(node, "const");
        bool is_const = en != NULL;
        if (en == NULL) {
            en = json_object_get(node, "enum");
        }
        if (en != NULL) {
            enum pipit_schema_type k = PIPIT_SCHEMA_ANY;
            bool strings = true, numbers = true;
            for (size_t i = 0; i < (is_const ? 1 : json_array_size(en)); i++) {
                const json_t *v = is_const ? en : json_array_get(en, i);
                strings = strings && json_is_string(v);
                numbers = numbers && json_is_number(v);
            }
            if (!is_const && !json_is_array(en)) {
                strings = numbers = false;
            }
            k = strings ? PIPIT_SCHEMA_STRING : numbers ? PIPIT_SCHEMA_NUMBER : PIPIT_SCHEMA_ANY;
            if (k != PIPIT_SCHEMA_ANY) {
                types[n++] = (int)k;
            } else {
                if (!ts_check_keywords(P, node, path, 0)) {
                    return NULL;
                }
                bool empty = false;
                return parse_typed(P, node, path, depth, PIPIT_SCHEMA_ANY, false, &empty);
            }
        } else {
            unsigned found = 0;
            const char *key;
            json_t *v;
            json_object_foreach((json_t *)node, key, v) {
                if (strcmp(key, "format") == 0) {
                    const char *f = json_is_string(v) ? json_string_value(v) : "";
                    bool num = strcmp(f, "float") == 0 || strcmp(f, "double") == 0 ||
                               strcmp(f, "int32") == 0 || strcmp(f, "int64") == 0;
                    found |= 1u << (num ? PIPIT_SCHEMA_NUMBER : PIPIT_SCHEMA_STRING);
                    continue;
                }
                static const enum pipit_schema_type kinds[] = {
                    PIPIT_SCHEMA_OBJECT, PIPIT_SCHEMA_STRING, PIPIT_SCHEMA_NUMBER,
                    PIPIT_SCHEMA_ARRAY};
                for (size_t k = 0; k < 4; k++) {
                    if (ts_is_keyword_of(kinds[k], key)) {
                        found |= 1u << kinds[k];
                    }
                }
            }
            if (found == 0) {
                if (!ts_check_keywords(P, node, path, 0)) {
                    return NULL;
                }
                bool empty = false;
                return parse_typed(P, node, path, depth, PIPIT_SCHEMA_ANY, false, &empty);
            }
            for (int k = 0; k <= PIPIT_SCHEMA_ARRAY; k++) {
                if ((found & (1u << k)) != 0) {
                    types[n++] = k;
                }
            }
            if (n > 1) {
                ts_fail(P, path, false,
                        "missing \"type\" (the keywords belong to different types)");
                return NULL;
            }
        }
    }
    const json_t *nullable = json_object_get(node, "nullable");
    if (nullable != NULL) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "nullable");
        if (!json_is_boolean(nullable)) {
            ts_fail(P, p, false, "expected a boolean, got %s", ts_json_kind(nullable));
            return NULL;
        }
        bool listed = false;
        for (size_t i = 0; i < n; i++) {
            listed = listed || types[i] == PIPIT_SCHEMA_NULL;
        }
        if (json_is_true(nullable) && !listed && n > 0) {
            types[n++] = PIPIT_SCHEMA_NULL;
        }
    }
    unsigned mask = 0;
    for (size_t i = 0; i < n; i++) {
        mask |= 1u << types[i];
        if (types[i] == PIPIT_SCHEMA_INTEGER) {
            mask |= 1u << PIPIT_SCHEMA_NUMBER;
        }
    }
    if (!ts_check_keywords(P, node, path, mask)) {
        return NULL;
    }
    struct pipit_schema *alts[PIPIT_SCHEMA_NULL + 1];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool empty = false;
        alts[k] =
            parse_typed(P, node, path, depth, (enum pipit_schema_type)types[i], n > 1, &empty);
        if (alts[k] == NULL && !empty) {
            for (size_t j = 0; j < k; j++) {
                ts_schema_free(alts[j]);
            }
            return NULL;
        }
        k += alts[k] != NULL;
    }
    if (k == 0) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "enum");
        ts_fail(P, p, false,
                "no enum value has one of the listed types, so no value can "
                "satisfy the schema");
        return NULL;
    }
    return make_union(P, node, alts, k, false);
}

/* Resolve a local reference "#/a/b" against the tool's schema document. */
static const json_t *resolve_ref(struct ts_parser *P, const char *ref, char *tpath, size_t cap) {
    const json_t *cur = P->doc_root;
    pipit_format(tpath, cap, "%s", P->doc_path);
    const char *p = ref + 1;
    while (*p == '/') {
        p++;
        char tok[TS_PATH_CAP];
        size_t j = 0;
        while (*p != '\0' && *p != '/' && j + 1 < sizeof(tok)) {
            if (p[0] == '~' && p[1] == '0') {
                tok[j++] = '~';
                p += 2;
            } else if (p[0] == '~' && p[1] == '1') {
                tok[j++] = '/';
                p += 2;
            } else {
                tok[j++] = *p++;
            }
        }
        tok[j] = '\0';
        char next[TS_PATH_CAP];
        if (json_is_object(cur)) {
            cur = json_object_get(cur, tok);
            ts_path_key(next, sizeof(next), tpath, tok);
        } else if (json_is_array(cur)) {
            char *end = NULL;
            unsigned long i = strtoul(tok, &end, 10);
            cur = end != tok && *end == '\0' ? json_array_get(cur, i) : NULL;
            ts_path_index(next, sizeof(next), tpath, i);
        } else {
            cur = NULL;
        }
        if (cur == NULL) {
            return NULL;
        }
        pipit_format(tpath, cap, "%s", next);
    }
    return *p == '\0' ? cur : NULL;
}

/* Keep a schema object pipit made (a merge) alive as long as the toolset. */
static const json_t *keep(struct ts_parser *P, json_t *made) {
    if (made == NULL || (P->derived == NULL && (P->derived = json_array()) == NULL) ||
        json_array_append_new(P->derived, made) != 0) {
        ts_nomem(P);
        return NULL;
    }
    return made;
}

/* The schema `node` stands for with its "$ref"s followed (while it is a reference with only
 * annotations beside it). Broken references come back as they are (parse_ref reports them). */
static const json_t *follow_refs(struct ts_parser *P, const json_t *node) {
    for (int i = 0; i < 16 && json_is_object(node); i++) {
        const json_t *r = json_object_get(node, "$ref");
        if (!json_is_string(r) || json_string_value(r)[0] != '#' || P->doc_root == NULL) {
            break;
        }
        const char *key;
        json_t *v;
        bool plain = true;
        json_object_foreach((json_t *)node, key, v) {
            plain = plain && (strcmp(key, "$ref") == 0 || ts_is_annotation(key));
        }
        char tpath[TS_PATH_CAP];
        const json_t *target = resolve_ref(P, json_string_value(r), tpath, sizeof(tpath));
        if (!plain || target == NULL) {
            break;
        }
        node = target;
    }
    return node;
}

/* Add the keywords of `src` to `dst` (a new object): both must hold, so a keyword in both
 * must have the same value, except "required" (united), "properties" (united, a name in both
 * with the same schema) and annotations (the first wins). `parts` names what is merged for
 * messages. False (reported at `path`) when the two cannot be combined. */
static bool merge_keywords(struct ts_parser *P,
                           json_t *dst,
                           const json_t *src,
                           const char *path,
                           const char *parts) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)src, key, v) {
        json_t *d = json_object_get(dst, key);
        if (d == NULL) {
            json_object_set(dst, key, v);
            continue;
        }
        if (ts_json_same(d, v) || ts_is_annotation(key)) {
            continue;
        }
        if (strcmp(key, "required") == 0 && json_is_array(d) && json_is_array(v)) {
            json_t *u = json_copy(d);
            for (size_t i = 0; u != NULL && i < json_array_size(v); i++) {
                bool in = false;
                for (size_t k = 0; k < json_array_size(u) && !in; k++) {
                    in = ts_json_same(json_array_get(u, k), json_array_get(v, i));
                }
                if (!in) {
                    json_array_append(u, json_array_get(v, i));
                }
            }
            json_object_set_new(dst, key, u);
            continue;
        }
        if (strcmp(key, "properties") == 0 && json_is_object(d) && json_is_object(v)) {
            json_t *u = json_copy(d);
            const char *name;
            json_t *sch;
            json_object_foreach(v, name, sch) {
                const json_t *had = json_object_get(u, name);
                if (had != NULL && !ts_json_same(had, sch)) {
                    ts_fail(P, path, false,
                            "%s: property \"%s\" has two different schemas (pipit merges the "
                            "parts into one schema)",
                            parts, name);
                    json_decref(u);
                    return false;
                }
                json_object_set(u, name, sch);
            }
            json_object_set_new(dst, key, u);
            continue;
        }
        ts_fail(P, path, false,
                "%s: keyword \"%s\" has two different values (pipit merges the parts into one "
                "schema and cannot combine them)",
                parts, key);
        return false;
    }
    return true;
}

/* A part that closes its object (additionalProperties false or a schema) refuses the
 * properties the other parts add: merging would accept them, so it is refused. */
static bool check_closed_parts(struct ts_parser *P,
                               const json_t *merged,
                               const json_t *part,
                               const char *path,
                               const char *parts) {
    const json_t *ap = json_object_get(part, "additionalProperties");
    if (ap == NULL || json_is_true(ap)) {
        return true;
    }
    const json_t *own = json_object_get(part, "properties");
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(merged, "properties"), name, v) {
        if (json_object_get(own, name) == NULL) {
            ts_fail(P, path, false,
                    "%s: one part's additionalProperties refuses the property \"%s\" another "
                    "part adds, so the parts cannot be merged",
                    parts, name);
            return false;
        }
    }
    return true;
}

/* `node` without the keyword `kw` (a new object). */
static json_t *without(const json_t *node, const char *kw) {
    json_t *c = json_copy((json_t *)node);
    if (c != NULL) {
        json_object_del(c, kw);
    }
    return c;
}

static struct pipit_schema *
parse_ref(struct ts_parser *P, const json_t *node, const char *path, int depth) {
    char rp[TS_PATH_CAP];
    ts_path_key(rp, sizeof(rp), path, "$ref");
    const json_t *r = json_object_get(node, "$ref");
    if (!json_is_string(r)) {
        ts_fail(P, rp, false, "expected a string, got %s", ts_json_kind(r));
        return NULL;
    }
    const char *ref = json_string_value(r);
    if (ref[0] != '#' || (ref[1] != '\0' && ref[1] != '/')) {
        ts_fail(P, rp, false, "only local references (\"#/...\") are supported, got \"%s\"", ref);
        return NULL;
    }
    char tpath[TS_PATH_CAP];
    const json_t *target = P->doc_root != NULL ? resolve_ref(P, ref, tpath, sizeof(tpath)) : NULL;
    if (target == NULL) {
        ts_fail(P, rp, false, "$ref \"%s\" points to nothing in the tool's schema", ref);
        return NULL;
    }
    for (int i = 0; i < P->n_refs; i++) {
        if (P->ref_stack[i] == target && P->ref_depth[i] == depth) {
            ts_fail(P, rp, false, "$ref \"%s\" refers to itself without nesting", ref);
            return NULL;
        }
    }
    if (P->n_refs >= TS_PARSER_MAX_REFS) {
        ts_fail(P, rp, false, "$ref \"%s\": more than %d references inside each other", ref,
                TS_PARSER_MAX_REFS);
        return NULL;
    }
    /* keywords beside "$ref" hold together with the target: merged into it */
    bool siblings = false;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        siblings = siblings || (strcmp(key, "$ref") != 0 && !ts_is_annotation(key));
    }
    const json_t *what = target;
    if (siblings) {
        json_t *merged = json_is_object(target) ? json_copy((json_t *)target) : json_object();
        const json_t *rest = keep(P, without(node, "$ref"));
        if (keep(P, merged) == NULL || rest == NULL ||
            !merge_keywords(P, merged, rest, path, "$ref and the keywords beside it") ||
            (json_is_object(target) &&
             !check_closed_parts(P, merged, target, path, "$ref and the keywords beside it")) ||
            !check_closed_parts(P, merged, rest, path, "$ref and the keywords beside it")) {
            return NULL;
        }
        what = merged;
        pipit_format(tpath, sizeof(tpath), "%s", path);
    }
    P->ref_stack[P->n_refs] = target;
    P->ref_depth[P->n_refs] = depth;
    P->ref_name[P->n_refs] = ref;
    P->n_refs++;
    struct pipit_schema *s = ts_parse_schema(P, what, tpath, depth);
    P->n_refs--;
    if (s != NULL && !ts_take_annotations(P, s, node, path)) {
        ts_schema_free(s);
        return NULL;
    }
    return s;
}

static struct pipit_schema *parse_combination(struct ts_parser *P,
                                              const json_t *node,
                                              const char *path,
                                              int depth,
                                              const char *kw) {
    char kp[TS_PATH_CAP];
    ts_path_key(kp, sizeof(kp), path, kw);
    const json_t *list = json_object_get(node, kw);
    if (!json_is_array(list)) {
        ts_fail(P, kp, false, "expected an array of schemas, got %s", ts_json_kind(list));
        return NULL;
    }
    size_t n = json_array_size(list);
    if (n == 0 || n > PIPIT_TOOLSPEC_MAX_ALTS) {
        ts_fail(P, kp, false, "%s needs 1..%d schemas, got %zu", kw, PIPIT_TOOLSPEC_MAX_ALTS, n);
        return NULL;
    }
    /* keywords beside the combination (other than annotations) hold together with it: they
     * are merged into every alternative (anyOf, oneOf) or with every part (allOf) */
    bool siblings = false;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        siblings = siblings || (strcmp(key, kw) != 0 && !ts_is_annotation(key));
    }
    const json_t *rest = siblings ? keep(P, without(node, kw)) : NULL;
    if (siblings && rest == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!json_is_object(json_array_get(list, i)) && !json_is_boolean(json_array_get(list, i))) {
            char p[TS_PATH_CAP];
            ts_path_index(p, sizeof(p), kp, i);
            ts_fail(P, p, false, "expected a schema object, got %s",
                    ts_json_kind(json_array_get(list, i)));
            return NULL;
        }
    }
    if (strcmp(kw, "allOf") == 0) {
        if (n == 1 && !siblings) {
            struct pipit_schema *s = ts_parse_schema(P, json_array_get(list, 0), kp, depth);
            if (s != NULL && !ts_take_annotations(P, s, node, path)) {
                ts_schema_free(s);
                return NULL;
            }
            return s;
        }
        json_t *merged = rest != NULL ? json_copy((json_t *)rest) : json_object();
        if (keep(P, merged) == NULL) {
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            const json_t *part = follow_refs(P, json_array_get(list, i));
            if (json_is_true(part)) {
                continue;
            }
            if (!json_is_object(part) || !merge_keywords(P, merged, part, kp, "allOf")) {
                if (!json_is_object(part)) {
                    ts_fail(P, kp, false, "allOf: a part is the schema false");
                }
                return NULL;
            }
        }
        for (size_t i = 0; i < n; i++) {
            const json_t *part = follow_refs(P, json_array_get(list, i));
            if (json_is_object(part) && !check_closed_parts(P, merged, part, kp, "allOf")) {
                return NULL;
            }
        }
        if (rest != NULL && !check_closed_parts(P, merged, rest, kp, "allOf")) {
            return NULL;
        }
        return ts_parse_schema(P, merged, path, depth);
    }
    struct pipit_schema *alts[PIPIT_TOOLSPEC_MAX_ALTS];
    for (size_t i = 0; i < n; i++) {
        char p[TS_PATH_CAP];
        ts_path_index(p, sizeof(p), kp, i);
        const json_t *alt = json_array_get(list, i);
        if (rest != NULL) {
            const json_t *target = follow_refs(P, alt);
            json_t *merged = json_is_object(target) ? json_copy((json_t *)target) : json_object();
            if (keep(P, merged) == NULL || !merge_keywords(P, merged, rest, p, kw) ||
                !check_closed_parts(P, merged, rest, p, kw)) {
                alt = NULL;
            } else {
                alt = merged;
            }
        }
        alts[i] = alt != NULL ? ts_parse_schema(P, alt, p, depth) : NULL;
        if (alts[i] == NULL) {
            for (size_t j = 0; j < i; j++) {
                ts_schema_free(alts[j]);
            }
            return NULL;
        }
    }
    struct pipit_schema *s = make_union(P, node, alts, n, strcmp(kw, "oneOf") == 0);
    if (s != NULL && !ts_take_annotations(P, s, node, path)) {
        ts_schema_free(s);
        return NULL;
    }
    return s;
}

struct pipit_schema *
ts_parse_schema(struct ts_parser *P, const json_t *node, const char *path, int depth) {
    if (json_is_true(node)) {
        return ts_schema_alloc(P, PIPIT_SCHEMA_ANY, node);
    }
    if (json_is_false(node)) {
        ts_fail(P, path, false, "the schema false allows no value");
        return NULL;
    }
    if (!json_is_object(node)) {
        ts_fail(P, path, false, "expected a schema object, got %s", ts_json_kind(node));
        return NULL;
    }
    if (depth > PIPIT_TOOLSPEC_MAX_DEPTH) {
        if (P->n_refs > 0) {
            ts_fail(P, path, false,
                    "schema nested deeper than %d levels through $ref \"%s\" (references "
                    "are expanded inline; recursion is refused at that depth)",
                    PIPIT_TOOLSPEC_MAX_DEPTH, P->ref_name[P->n_refs - 1]);
        } else {
            ts_fail(P, path, false, "schema nested deeper than %d levels",
                    PIPIT_TOOLSPEC_MAX_DEPTH);
        }
        return NULL;
    }
    if (++P->n_nodes > PIPIT_TOOLSPEC_MAX_NODES) {
        ts_fail(P, path, false, "the tool's schema expands to more than %d nodes",
                PIPIT_TOOLSPEC_MAX_NODES);
        return NULL;
    }
    if (json_object_get(node, "description") != NULL &&
        ts_get_string(P, node, "description", path, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, false) ==
            NULL) {
        return NULL;
    }
    if (json_object_get(node, "$ref") != NULL) {
        return parse_ref(P, node, path, depth);
    }
    static const char *const combos[] = {"anyOf", "oneOf", "allOf"};
    for (size_t i = 0; i < 3; i++) {
        if (json_object_get(node, combos[i]) != NULL) {
            return parse_combination(P, node, path, depth, combos[i]);
        }
    }
    return parse_types(P, node, path, depth);
}
