/*
 * toolspec_json.c - small JSON helpers shared by the tool-specification modules (paths, kinds,
 * numbers, equality, type tests). See toolspec_json.h.
 */
#include "toolspec_json.h"

#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ts_dup_str(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n + 1);
    }
    return d;
}

bool ts_is_identifier(const char *s) {
    if (s == NULL || s[0] == '\0') {
        return false;
    }
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_')) {
        return false;
    }
    for (const char *p = s + 1; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_')) {
            return false;
        }
    }
    return true;
}

/* JSON type name as a user reads it: integers and reals are both "number". */
const char *ts_json_kind(const json_t *v) {
    switch (json_typeof(v)) {
        case JSON_OBJECT:
            return "object";
        case JSON_ARRAY:
            return "array";
        case JSON_STRING:
            return "string";
        case JSON_INTEGER:
        case JSON_REAL:
            return "number";
        case JSON_TRUE:
        case JSON_FALSE:
            return "boolean";
        case JSON_NULL:
            return "null";
    }
    return "value";
}

const char *pipit_schema_type_name(enum pipit_schema_type type) {
    switch (type) {
        case PIPIT_SCHEMA_OBJECT:
            return "object";
        case PIPIT_SCHEMA_STRING:
            return "string";
        case PIPIT_SCHEMA_NUMBER:
            return "number";
        case PIPIT_SCHEMA_INTEGER:
            return "integer";
        case PIPIT_SCHEMA_BOOLEAN:
            return "boolean";
        case PIPIT_SCHEMA_ARRAY:
            return "array";
        case PIPIT_SCHEMA_NULL:
            return "null";
        case PIPIT_SCHEMA_ANY:
            return "any";
        case PIPIT_SCHEMA_UNION:
            return "union";
    }
    return "?";
}

/* Shortest "%g" text that reads back as exactly `v` (integers print without a
 * fraction: 10, 0.5, -2). */
void ts_format_number(char *buf, size_t size, double v) {
    if (isfinite(v) && floor(v) == v && fabs(v) < 1e15) {
        pipit_format(buf, size, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        pipit_format(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

void ts_format_json_number(char *buf, size_t size, const json_t *v) {
    if (json_is_integer(v)) {
        pipit_format(buf, size, "%lld", (long long)json_integer_value(v));
    } else {
        ts_format_number(buf, size, json_number_value(v));
    }
}

/* Append a key to a JSON path: ".key" for identifiers, ["key"] otherwise. The
 * scanner and the checker both build paths with this, so they compare equal. */
void ts_path_key(char *out, size_t cap, const char *base, const char *key) {
    if (ts_is_identifier(key)) {
        pipit_format(out, cap, "%s.%s", base, key);
        return;
    }
    char esc[TS_PATH_CAP];
    size_t j = 0;
    for (const char *p = key; *p != '\0' && j + 3 < sizeof(esc); p++) {
        if (*p == '"' || *p == '\\') {
            esc[j++] = '\\';
        }
        esc[j++] = *p;
    }
    esc[j] = '\0';
    pipit_format(out, cap, "%s[\"%s\"]", base, esc);
}

void ts_path_index(char *out, size_t cap, const char *base, size_t index) {
    pipit_format(out, cap, "%s[%zu]", base, index);
}

bool ts_is_integral(double v) {
    return isfinite(v) && floor(v) == v && fabs(v) <= 9007199254740992.0;
}

/* Whether `v` has the JSON type of schema type `t` (ANY: every value). */
bool ts_value_has_type(enum pipit_schema_type t, const json_t *v) {
    switch (t) {
        case PIPIT_SCHEMA_OBJECT:
            return json_is_object(v);
        case PIPIT_SCHEMA_STRING:
            return json_is_string(v);
        case PIPIT_SCHEMA_NUMBER:
            return json_is_number(v);
        case PIPIT_SCHEMA_INTEGER:
            return json_is_number(v) && ts_is_integral(json_number_value(v));
        case PIPIT_SCHEMA_BOOLEAN:
            return json_is_boolean(v);
        case PIPIT_SCHEMA_ARRAY:
            return json_is_array(v);
        case PIPIT_SCHEMA_NULL:
            return json_is_null(v);
        case PIPIT_SCHEMA_ANY:
        case PIPIT_SCHEMA_UNION:
            return true;
    }
    return false;
}

/* JSON Schema equality: numbers by value (1 == 1.0), the rest structurally. */
bool ts_json_same(const json_t *a, const json_t *b) {
    if (json_is_number(a) && json_is_number(b)) {
        return json_number_value(a) == json_number_value(b);
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b)) {
            return false;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            if (!ts_json_same(json_array_get(a, i), json_array_get(b, i))) {
                return false;
            }
        }
        return true;
    }
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b)) {
            return false;
        }
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)a, k, x) {
            const json_t *y = json_object_get(b, k);
            if (y == NULL || !ts_json_same(x, y)) {
                return false;
            }
        }
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b) != 0;
}

int ts_hexval(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}
