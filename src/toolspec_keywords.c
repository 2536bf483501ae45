/*
 * toolspec_keywords.c - the JSON Schema keywords of one schema node (see toolspec_keywords.h).
 *
 * What is accepted (docs/toolspec.md, "JSON Schema"): the types object, string, number,
 * integer, boolean, array, null, a list of them, or none (any value); enum/const of any JSON
 * type; the keywords of each type below; annotations (ignored, "default" and "format" recorded);
 * "x-*" extensions (ignored). Everything else is refused with the JSON path and the keyword.
 */
#include "toolspec_keywords.h"

#include "pattern.h"
#include "toolspec_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ts_schema_free(struct pipit_schema *s) {
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->n_props; i++) {
        free(s->props[i].name);
        ts_schema_free(s->props[i].schema);
    }
    free(s->props);
    if (s->enum_str != NULL) {
        for (size_t i = 0; i < s->n_enum; i++) {
            free(s->enum_str[i]);
        }
    }
    free(s->enum_str);
    free(s->enum_num);
    free((void *)s->enum_json);
    ts_schema_free(s->items);
    ts_schema_free(s->additional);
    for (size_t i = 0; i < s->n_alts; i++) {
        ts_schema_free(s->alts[i]);
    }
    free(s->alts);
    free(s);
}

/* Annotations: accepted anywhere, no effect on validation ("default" and "format" are
 * recorded; "definitions"/"$defs" hold the targets of "$ref"). "optional" and "response" are
 * BFCL's (the required list decides). Keys starting with "x-" are extensions, also ignored. */
static const char *const KW_ANNOTATION[] = {
    "$schema",  "$id",      "id",         "title",    "$comment",        "description",
    "examples", "default",  "deprecated", "readOnly", "writeOnly",       "definitions",
    "$defs",    "optional", "response",   "example",  "contentEncoding", "contentMediaType",
    NULL};
/* "nullable": OpenAPI 3.0's way to add null to the type */
static const char *const KW_ANY_TYPE[] = {"type", "enum", "const", "nullable", NULL};
static const char *const KW_OBJECT[] = {"properties",    "required",      "additionalProperties",
                                        "minProperties", "maxProperties", NULL};
static const char *const KW_STRING[] = {"minLength", "maxLength", "pattern", "format", NULL};
static const char *const KW_NUMBER[] = {
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format", NULL};
static const char *const KW_ARRAY[] = {"items", "minItems", "maxItems", "uniqueItems", NULL};
static const char *const KW_NONE[] = {NULL};
static const char *const KW_COMBINE[] = {"$ref", "anyOf", "oneOf", "allOf", NULL};

#define KW_SUPPORTED                                                                         \
    "type, enum, const, $ref, anyOf, oneOf, allOf (one schema), properties, required, "      \
    "additionalProperties, minLength, maxLength, pattern, format, minimum, maximum, items, " \
    "minItems, maxItems, uniqueItems and the annotations"

static bool kw_in(const char *const *list, const char *key) {
    for (; *list != NULL; list++) {
        if (strcmp(*list, key) == 0) {
            return true;
        }
    }
    return false;
}

bool ts_is_annotation(const char *key) {
    return kw_in(KW_ANNOTATION, key) || strncmp(key, "x-", 2) == 0;
}

static const char *const *type_keywords(enum pipit_schema_type type) {
    switch (type) {
        case PIPIT_SCHEMA_OBJECT:
            return KW_OBJECT;
        case PIPIT_SCHEMA_STRING:
            return KW_STRING;
        case PIPIT_SCHEMA_NUMBER:
        case PIPIT_SCHEMA_INTEGER:
            return KW_NUMBER;
        case PIPIT_SCHEMA_ARRAY:
            return KW_ARRAY;
        default:
            return KW_NONE;
    }
}

static bool is_type_keyword(const char *key) {
    return kw_in(KW_OBJECT, key) || kw_in(KW_STRING, key) || kw_in(KW_NUMBER, key) ||
           kw_in(KW_ARRAY, key);
}

/* Refuse every key of `node` that is not an annotation, not in KW_ANY_TYPE and applies to
 * none of the types in `mask` (bit 1 << type). */
bool ts_check_keywords(struct ts_parser *P, const json_t *node, const char *path, unsigned mask) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        if (ts_is_annotation(key) || kw_in(KW_ANY_TYPE, key)) {
            continue;
        }
        bool ok = false;
        for (int t = 0; t <= PIPIT_SCHEMA_NULL && !ok; t++) {
            ok = (mask & (1u << t)) != 0 && kw_in(type_keywords((enum pipit_schema_type)t), key);
        }
        if (ok) {
            continue;
        }
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, key);
        if (kw_in(KW_COMBINE, key)) {
            ts_fail(P, p, true,
                    "keyword \"%s\" together with \"type\" is not supported (put the type "
                    "into each alternative)",
                    key);
        } else if (is_type_keyword(key)) {
            char types[128] = "";
            size_t used = 0;
            for (int t = 0; t <= PIPIT_SCHEMA_NULL; t++) {
                if ((mask & (1u << t)) != 0) {
                    int w =
                        snprintf(types + used, sizeof(types) - used, "%s%s", used > 0 ? "/" : "",
                                 pipit_schema_type_name((enum pipit_schema_type)t));
                    used += w > 0 && (size_t)w < sizeof(types) - used ? (size_t)w : 0;
                }
            }
            ts_fail(P, p, true, "keyword \"%s\" does not apply to type %s", key, types);
        } else {
            ts_fail(P, p, true,
                    "unsupported JSON Schema keyword \"%s\" (supported: " KW_SUPPORTED ")", key);
        }
        return false;
    }
    return true;
}

/* A non-negative integer limit such as maxLength; -1 on error (reported). */
static int64_t
get_count(struct ts_parser *P, const json_t *node, const char *key, const char *path) {
    const json_t *v = json_object_get(node, key);
    char p[TS_PATH_CAP];
    ts_path_key(p, sizeof(p), path, key);
    double d = json_is_number(v) ? json_number_value(v) : -1;
    if (!json_is_number(v) || floor(d) != d) {
        ts_fail(P, p, false, "expected a non-negative integer, got %s", ts_json_kind(v));
        return -1;
    }
    if (d < 0 || d > (double)PIPIT_TOOLSPEC_MAX_FILE_BYTES) {
        ts_fail(P, p, false, "%.0f is out of range 0..%d", d, PIPIT_TOOLSPEC_MAX_FILE_BYTES);
        return -1;
    }
    return (int64_t)d;
}

bool ts_get_bounds(struct ts_parser *P,
                   const json_t *node,
                   const char *path,
                   const char *min_key,
                   const char *max_key,
                   const char *what,
                   int64_t *min,
                   int64_t *max) {
    const char *const keys[2] = {min_key, max_key};
    for (int k = 0; k < 2; k++) {
        if (json_object_get(node, keys[k]) != NULL) {
            int64_t n = get_count(P, node, keys[k], path);
            if (n < 0) {
                return false;
            }
            *(k == 0 ? min : max) = n;
        }
    }
    if (*max >= 0 && *max < *min) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, max_key);
        ts_fail(P, p, false, "%s %lld is below %s %lld, so no %s can satisfy the schema", max_key,
                (long long)*max, min_key, (long long)*min, what);
        return false;
    }
    return true;
}

bool ts_is_keyword_of(enum pipit_schema_type type, const char *key) {
    return kw_in(type_keywords(type), key);
}

/* The values of "enum" (or the one of "const") that have the schema's type, into `s`. When
 * `filter` (a member of a type list), values of other types are skipped; otherwise they are
 * an error. n_enum may end 0 only when filtering. */
bool ts_parse_enum(struct ts_parser *P,
                   struct pipit_schema *s,
                   const json_t *node,
                   const char *path,
                   bool filter) {
    const json_t *en = json_object_get(node, "enum");
    const json_t *cn = json_object_get(node, "const");
    char ep[TS_PATH_CAP], cp[TS_PATH_CAP];
    ts_path_key(ep, sizeof(ep), path, "enum");
    ts_path_key(cp, sizeof(cp), path, "const");
    if (en != NULL) {
        if (!json_is_array(en)) {
            ts_fail(P, ep, false, "expected an array, got %s", ts_json_kind(en));
            return false;
        }
        size_t n = json_array_size(en);
        if (n == 0 || n > PIPIT_TOOLSPEC_MAX_ENUM) {
            ts_fail(P, ep, false, "an enum needs 1..%d values, got %zu", PIPIT_TOOLSPEC_MAX_ENUM,
                    n);
            return false;
        }
        if (cn != NULL) {
            bool found = false;
            for (size_t i = 0; i < n && !found; i++) {
                found = ts_json_same(json_array_get(en, i), cn);
            }
            if (!found) {
                ts_fail(P, cp, false,
                        "the const is not one of the enum's values, so no value "
                        "can satisfy the schema");
                return false;
            }
        }
    }
    const json_t *arr = cn != NULL ? NULL : en;
    size_t n = cn != NULL ? 1 : json_array_size(arr);
    s->enum_json = calloc(n, sizeof(*s->enum_json));
    if (s->type == PIPIT_SCHEMA_STRING) {
        s->enum_str = calloc(n, sizeof(char *));
    } else if (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) {
        s->enum_num = calloc(n, sizeof(double));
    }
    if (s->enum_json == NULL || (s->type == PIPIT_SCHEMA_STRING && s->enum_str == NULL) ||
        ((s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) &&
         s->enum_num == NULL)) {
        ts_nomem(P);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *v = cn != NULL ? cn : json_array_get(arr, i);
        char p[TS_PATH_CAP];
        if (cn != NULL) {
            pipit_format(p, sizeof(p), "%s", cp);
        } else {
            ts_path_index(p, sizeof(p), ep, i);
        }
        if (!ts_value_has_type(s->type, v)) {
            if (filter) {
                continue;
            }
            char num[64];
            if (s->type == PIPIT_SCHEMA_INTEGER && json_is_number(v)) {
                ts_format_json_number(num, sizeof(num), v);
                ts_fail(P, p, false, "%s is not an integer", num);
            } else {
                ts_fail(P, p, false, "expected %s, got %s", pipit_schema_type_name(s->type),
                        ts_json_kind(v));
            }
            return false;
        }
        if (json_is_string(v)) {
            size_t len = json_string_length(v);
            if (len > PIPIT_TOOLSPEC_MAX_ENUM_STRING || strlen(json_string_value(v)) != len) {
                ts_fail(P, p, false, "enum strings must be 0..%d bytes without NUL",
                        PIPIT_TOOLSPEC_MAX_ENUM_STRING);
                return false;
            }
        }
        for (size_t k = 0; k < s->n_enum; k++) {
            if (ts_json_same(s->enum_json[k], v)) {
                char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
                ts_fail(P, p, false, "duplicate enum value %s", q != NULL ? q : "");
                free(q);
                return false;
            }
        }
        size_t k = s->n_enum;
        s->enum_json[k] = v;
        if (s->enum_str != NULL) {
            s->enum_str[k] = ts_dup_str(json_string_value(v));
            if (s->enum_str[k] == NULL) {
                ts_nomem(P);
                return false;
            }
        }
        if (s->enum_num != NULL) {
            s->enum_num[k] = json_number_value(v);
        }
        s->n_enum = k + 1;
    }
    return true;
}

static bool
parse_range(struct ts_parser *P, struct pipit_schema *s, const json_t *node, const char *path) {
    static const char *const names[2] = {"minimum", "maximum"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(node, names[k]);
        if (v == NULL) {
            continue;
        }
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, names[k]);
        if (!json_is_number(v)) {
            ts_fail(P, p, false, "expected a number, got %s", ts_json_kind(v));
            return false;
        }
        if (k == 0) {
            s->has_min = true;
            s->min = json_number_value(v);
        } else {
            s->has_max = true;
            s->max = json_number_value(v);
        }
    }
    /* exclusiveMinimum/-Maximum: a number (draft 6 on), or true with minimum/maximum (draft 4) */
    static const char *const xnames[2] = {"exclusiveMinimum", "exclusiveMaximum"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(node, xnames[k]);
        if (v == NULL || json_is_false(v)) {
            continue;
        }
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, xnames[k]);
        bool *has = k == 0 ? &s->has_xmin : &s->has_xmax;
        double *x = k == 0 ? &s->xmin : &s->xmax;
        if (json_is_true(v)) {
            if (!(k == 0 ? s->has_min : s->has_max)) {
                ts_fail(P, p, false, "true needs \"%s\" beside it", names[k]);
                return false;
            }
            *has = true;
            *x = k == 0 ? s->min : s->max;
        } else if (json_is_number(v)) {
            *has = true;
            *x = json_number_value(v);
        } else {
            ts_fail(P, p, false, "expected a number, got %s", ts_json_kind(v));
            return false;
        }
    }
    if (s->has_xmin && s->has_xmax && s->xmin >= s->xmax) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "exclusiveMaximum");
        ts_fail(P, p, false, "no number lies between the exclusive bounds");
        return false;
    }
    const json_t *mo = json_object_get(node, "multipleOf");
    if (mo != NULL) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "multipleOf");
        if (!json_is_number(mo) || !(json_number_value(mo) > 0) ||
            !isfinite(json_number_value(mo))) {
            ts_fail(P, p, false, "expected a number above 0");
            return false;
        }
        s->multiple_of = json_number_value(mo);
    }
    if (s->has_min && s->has_max && s->min > s->max) {
        char p[TS_PATH_CAP], a[64], b[64];
        ts_path_key(p, sizeof(p), path, "maximum");
        ts_format_number(a, sizeof(a), s->max);
        ts_format_number(b, sizeof(b), s->min);
        ts_fail(P, p, false, "maximum %s is below minimum %s", a, b);
        return false;
    }
    return true;
}

static const struct {
    const char *name;
    enum pipit_schema_format format;
    bool string; /* a string format (else a number format) */
} FORMATS[] = {
    {"date", PIPIT_FORMAT_DATE, true},
    {"time", PIPIT_FORMAT_TIME, true},
    {"date-time", PIPIT_FORMAT_DATE_TIME, true},
    {"email", PIPIT_FORMAT_EMAIL, true},
    {"uri", PIPIT_FORMAT_URI, true},
    {"uuid", PIPIT_FORMAT_UUID, true},
    {"int32", PIPIT_FORMAT_INT32, false},
};

static bool
parse_format(struct ts_parser *P, struct pipit_schema *s, const json_t *node, const char *path) {
    const json_t *f = json_object_get(node, "format");
    if (f == NULL) {
        return true;
    }
    char p[TS_PATH_CAP];
    ts_path_key(p, sizeof(p), path, "format");
    if (!json_is_string(f)) {
        ts_fail(P, p, false, "expected a string, got %s", ts_json_kind(f));
        return false;
    }
    s->format_name = json_string_value(f);
    s->format = PIPIT_FORMAT_OTHER;
    bool string = s->type == PIPIT_SCHEMA_STRING;
    for (size_t i = 0; i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++) {
        if (strcmp(FORMATS[i].name, s->format_name) == 0) {
            if (FORMATS[i].string != string) {
                ts_fail(P, p, false, "format \"%s\" does not apply to type %s", s->format_name,
                        pipit_schema_type_name(s->type));
                return false;
            }
            s->format = FORMATS[i].format;
        }
    }
    if (s->format == PIPIT_FORMAT_INT32 && s->type != PIPIT_SCHEMA_INTEGER) {
        ts_fail(P, p, false, "format \"int32\" applies to integers");
        return false;
    }
    return true;
}

bool ts_parse_number_keywords(struct ts_parser *P,
                              struct pipit_schema *s,
                              const json_t *node,
                              const char *path) {
    return parse_range(P, s, node, path) && parse_format(P, s, node, path);
}

bool ts_parse_string_keywords(struct ts_parser *P,
                              struct pipit_schema *s,
                              const json_t *node,
                              const char *path) {
    if (!ts_get_bounds(P, node, path, "minLength", "maxLength", "string", &s->min_length,
                       &s->max_length)) {
        return false;
    }
    const json_t *pat = json_object_get(node, "pattern");
    if (pat != NULL) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, "pattern");
        if (!json_is_string(pat)) {
            ts_fail(P, p, false, "expected a string, got %s", ts_json_kind(pat));
            return false;
        }
        char why[160];
        if (!pattern_supported(json_string_value(pat), why, sizeof(why))) {
            ts_fail(P, p, false,
                    "pattern \"%s\" is outside the supported regular expression "
                    "subset: %s",
                    json_string_value(pat), why);
            return false;
        }
        s->pattern = json_string_value(pat);
    }
    return parse_format(P, s, node, path);
}

struct pipit_schema *
ts_schema_alloc(struct ts_parser *P, enum pipit_schema_type type, const json_t *node) {
    struct pipit_schema *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        ts_nomem(P);
        return NULL;
    }
    s->type = type;
    s->json = node;
    s->max_length = -1;
    s->max_items = -1;
    s->max_props = -1;
    return s;
}

/* Annotations of `node` that travel with the schema it names (for "$ref", "allOf", a type
 * list's members): the description and the default. */
bool ts_take_annotations(struct ts_parser *P,
                         struct pipit_schema *s,
                         const json_t *node,
                         const char *path) {
    if (!json_is_object(node)) {
        return true;
    }
    if (json_object_get(node, "description") != NULL) {
        s->description = ts_get_string(P, node, "description", path, false,
                                       PIPIT_TOOLSPEC_MAX_DESCRIPTION, false);
        if (s->description == NULL) {
            return false;
        }
    }
    const json_t *d = json_object_get(node, "default");
    if (d != NULL) {
        s->default_value = d;
    }
    return true;
}

/* Every enum value must satisfy the rest of its schema: otherwise the value could be
 * generated and then refused, or no value at all could satisfy the schema. */
bool ts_check_enum_values(struct ts_parser *P, const struct pipit_schema *s, const char *path) {
    for (size_t i = 0; i < s->n_enum; i++) {
        struct pipit_arg_problem pb;
        if (ts_check_except_enum(s, s->enum_json[i], "value", &pb) > 0) {
            char p[TS_PATH_CAP], *q = json_dumps(s->enum_json[i], JSON_ENCODE_ANY | JSON_COMPACT);
            const json_t *en = json_object_get(s->json, "enum");
            ts_path_key(p, sizeof(p), path,
                        json_object_get(s->json, "const") != NULL ? "const" : "enum");
            for (size_t k = 0; json_object_get(s->json, "const") == NULL && k < json_array_size(en);
                 k++) {
                if (json_array_get(en, k) == s->enum_json[i]) {
                    char e[TS_PATH_CAP];
                    ts_path_index(e, sizeof(e), p, k);
                    pipit_format(p, sizeof(p), "%s", e);
                    break;
                }
            }
            ts_fail(P, p, false, "the value %s does not satisfy the schema: %s: %s",
                    q != NULL ? q : "", pb.path, pb.message);
            free(q);
            return false;
        }
    }
    return true;
}

/* Refuse a number or integer schema no value satisfies, or none a call can write (enum values
 * that do not satisfy their schema are refused by ts_check_enum_values): a call could never be
 * valid, so the tool could never run. */
bool ts_check_satisfiable(struct ts_parser *P, const struct pipit_schema *s, const char *path) {
    char p[TS_PATH_CAP], a[64], b[64];
    if (s->type == PIPIT_SCHEMA_INTEGER || s->type == PIPIT_SCHEMA_NUMBER) {
        bool integer = s->type == PIPIT_SCHEMA_INTEGER;
        /* the validator's integers are exact doubles: |v| <= 2^53 */
        double lo = s->has_min ? s->min : -INFINITY, hi = s->has_max ? s->max : INFINITY;
        if (s->has_xmin) {
            lo = fmax(lo, nextafter(s->xmin, INFINITY));
        }
        if (s->has_xmax) {
            hi = fmin(hi, nextafter(s->xmax, -INFINITY));
        }
        if (integer) {
            lo = fmax(ceil(lo), -9007199254740992.0);
            hi = fmin(floor(hi), 9007199254740992.0);
        }
        if (lo > hi) {
            ts_path_key(p, sizeof(p), path, s->has_min ? "minimum" : "maximum");
            ts_format_number(a, sizeof(a), s->has_min ? s->min : -9007199254740992.0);
            ts_format_number(b, sizeof(b), s->has_max ? s->max : 9007199254740992.0);
            ts_fail(P, p, false, "no integer lies in %s..%s (integers are exact up to 2^53)", a, b);
            return false;
        }
        if (s->multiple_of > 0 && isfinite(lo) && isfinite(hi) &&
            ceil(lo / s->multiple_of) > floor(hi / s->multiple_of)) {
            ts_path_key(p, sizeof(p), path, "multipleOf");
            ts_format_number(a, sizeof(a), s->multiple_of);
            ts_fail(P, p, false, "no multiple of %s lies within the bounds", a);
            return false;
        }
        /* what a call can write: at most 18 integer and 40 fraction digits (docs/grammar.md) */
        if (lo >= 1e18 || hi <= -1e18 ||
            (hi - lo < 1e-40 && floor(lo * 1e40) == floor(hi * 1e40) &&
             floor(lo * 1e40) != lo * 1e40)) {
            ts_path_key(p, sizeof(p), path, s->has_min ? "minimum" : "maximum");
            char range[160];
            ts_format_number(a, sizeof(a), lo);
            ts_format_number(b, sizeof(b), hi);
            if (s->has_min && s->has_max) {
                pipit_format(range, sizeof(range), "lies in %s..%s", a, b);
            } else {
                pipit_format(range, sizeof(range), "is %s %s",
                             s->has_min ? ">=" : "<=", s->has_min ? a : b);
            }
            ts_fail(P, p, false,
                    "no number a call can write (at most 18 integer and 40 fraction digits) %s",
                    range);
            return false;
        }
        return true;
    }
    return true;
}
