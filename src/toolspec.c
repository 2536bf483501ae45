/*
 * toolspec.c - tool specifications: parse (jansson), validate, serialize in
 * four formats, count tokens, validate call arguments.
 *
 * Parsing happens in two passes. jansson parses the text (syntax errors come
 * with its line/column); then the document is checked against pipit's format.
 * jansson does not remember where a value came from, so when a semantic check
 * fails, a small scanner walks the original text again, rebuilding JSON paths
 * as it goes, and stops at the value (or key) whose path is the one being
 * reported: errors always carry file:line:column and the JSON path. The scanner
 * only runs on error and only over text jansson has already accepted.
 *
 * Everything is bounded: file size, tool count, properties, depth, string
 * lengths (see toolspec.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "toolspec.h"

#include "pattern.h"
#include "status.h"
#include "strbuf.h"
#include "utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAP        512
#define PARSER_MAX_REFS 32 /* references expanded inside each other */

static const char *DEFAULT_SUCCESS = "Done.";
static const char *DEFAULT_FAILURE = "I couldn't do that: {error}.";

/* ============================================================================
 * small helpers */

static char *dup_str(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n + 1);
    }
    return d;
}

static bool is_identifier(const char *s) {
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

/* JSON type name as a user reads it: integers and reals are both "number". */
static const char *json_kind(const json_t *v) {
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
static void format_number(char *buf, size_t size, double v) {
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

static void format_json_number(char *buf, size_t size, const json_t *v) {
    if (json_is_integer(v)) {
        pipit_format(buf, size, "%lld", (long long)json_integer_value(v));
    } else {
        format_number(buf, size, json_number_value(v));
    }
}

/* Append a key to a JSON path: ".key" for identifiers, ["key"] otherwise. The
 * scanner and the checker both build paths with this, so they compare equal. */
static void path_key(char *out, size_t cap, const char *base, const char *key) {
    if (is_identifier(key)) {
        pipit_format(out, cap, "%s.%s", base, key);
        return;
    }
    char esc[PATH_CAP];
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

static void path_index(char *out, size_t cap, const char *base, size_t index) {
    pipit_format(out, cap, "%s[%zu]", base, index);
}

/* ============================================================================
 * locating a JSON path in the text (only on error) */

struct locator {
    const char *text;
    size_t len;
    size_t pos;
    const char *target;
    bool want_key;
    int64_t found;
};

static void loc_ws(struct locator *L) {
    while (L->pos < L->len && (L->text[L->pos] == ' ' || L->text[L->pos] == '\t' ||
                               L->text[L->pos] == '\n' || L->text[L->pos] == '\r')) {
        L->pos++;
    }
}

static int hexval(char c) {
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

static unsigned loc_hex4(struct locator *L) {
    unsigned v = 0;
    for (int i = 0; i < 4 && L->pos < L->len; i++) {
        int h = hexval(L->text[L->pos++]);
        v = v * 16 + (unsigned)(h < 0 ? 0 : h);
    }
    return v;
}

/* Decode the string at pos (which is at '"') into out (cut at cap). */
static void loc_string(struct locator *L, char *out, size_t cap) {
    size_t j = 0;
    L->pos++; /* opening quote */
    while (L->pos < L->len && L->text[L->pos] != '"') {
        char c = L->text[L->pos++];
        unsigned char tmp[4];
        size_t n = 0;
        if (c != '\\') {
            tmp[n++] = (unsigned char)c;
        } else if (L->pos < L->len) {
            char e = L->text[L->pos++];
            unsigned cp = 0;
            switch (e) {
                case 'n':
                    cp = '\n';
                    break;
                case 't':
                    cp = '\t';
                    break;
                case 'r':
                    cp = '\r';
                    break;
                case 'b':
                    cp = '\b';
                    break;
                case 'f':
                    cp = '\f';
                    break;
                case 'u':
                    cp = loc_hex4(L);
                    if (cp >= 0xD800 && cp < 0xDC00 && L->pos + 1 < L->len &&
                        L->text[L->pos] == '\\' && L->text[L->pos + 1] == 'u') {
                        L->pos += 2;
                        unsigned lo = loc_hex4(L);
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    }
                    break;
                default:
                    cp = (unsigned char)e;
                    break;
            }
            if (cp < 0x80) {
                tmp[n++] = (unsigned char)cp;
            } else if (cp < 0x800) {
                tmp[n++] = (unsigned char)(0xC0 | (cp >> 6));
                tmp[n++] = (unsigned char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                tmp[n++] = (unsigned char)(0xE0 | (cp >> 12));
                tmp[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                tmp[n++] = (unsigned char)(0x80 | (cp & 0x3F));
            } else {
                tmp[n++] = (unsigned char)(0xF0 | (cp >> 18));
                tmp[n++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
                tmp[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                tmp[n++] = (unsigned char)(0x80 | (cp & 0x3F));
            }
        }
        for (size_t k = 0; k < n && j + 1 < cap; k++) {
            out[j++] = (char)tmp[k];
        }
    }
    L->pos++; /* closing quote */
    if (cap > 0) {
        out[j] = '\0';
    }
}

/* Scan one value whose path is `path` (key_off: offset of its key, -1 if
 * none). Returns false to stop (found, or malformed/too deep). */
static bool loc_value(struct locator *L, const char *path, int64_t key_off, int depth) {
    loc_ws(L);
    if (L->pos >= L->len || depth > 64) {
        return false;
    }
    if (strcmp(path, L->target) == 0) {
        L->found = L->want_key && key_off >= 0 ? key_off : (int64_t)L->pos;
        return false;
    }
    char c = L->text[L->pos];
    char child[PATH_CAP];
    if (c == '{') {
        L->pos++;
        for (;;) {
            loc_ws(L);
            if (L->pos >= L->len) {
                return false;
            }
            if (L->text[L->pos] == '}') {
                L->pos++;
                return true;
            }
            if (L->text[L->pos] == ',') {
                L->pos++;
                continue;
            }
            if (L->text[L->pos] != '"') {
                return false;
            }
            int64_t koff = (int64_t)L->pos;
            char key[PATH_CAP];
            loc_string(L, key, sizeof(key));
            loc_ws(L);
            if (L->pos >= L->len || L->text[L->pos] != ':') {
                return false;
            }
            L->pos++;
            path_key(child, sizeof(child), path, key);
            if (!loc_value(L, child, koff, depth + 1)) {
                return false;
            }
        }
    }
    if (c == '[') {
        L->pos++;
        size_t index = 0;
        for (;;) {
            loc_ws(L);
            if (L->pos >= L->len) {
                return false;
            }
            if (L->text[L->pos] == ']') {
                L->pos++;
                return true;
            }
            if (L->text[L->pos] == ',') {
                L->pos++;
                continue;
            }
            path_index(child, sizeof(child), path, index++);
            if (!loc_value(L, child, -1, depth + 1)) {
                return false;
            }
        }
    }
    if (c == '"') {
        char skip[8];
        loc_string(L, skip, sizeof(skip));
        return true;
    }
    /* number, true, false, null */
    while (L->pos < L->len && strchr(",}] \t\r\n", L->text[L->pos]) == NULL) {
        L->pos++;
    }
    return true;
}

/* Byte offset of the value (or its key) at `path`, -1 when not found. */
static int64_t locate_path(const char *text, size_t len, const char *path, bool want_key) {
    struct locator L = {text, len, 0, path, want_key, -1};
    /* skip a UTF-8 byte order mark if any */
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF) {
        L.pos = 3;
    }
    loc_value(&L, "$", -1, 0);
    return L.found;
}

static void
offset_to_line_col(const char *text, size_t len, int64_t off, int32_t *line, int32_t *col) {
    int32_t l = 1, c = 1;
    for (int64_t i = 0; i < off && (size_t)i < len; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ============================================================================
 * parser state and error reporting */

struct parser {
    const char *name; /* file name for messages */
    const char *text;
    size_t len;
    struct pipit_error *err;
    enum pipit_status status; /* first failure, PIPIT_OK while none */
    /* the schema being parsed: "$ref" targets are looked up in doc_root (the tool's
     * parameters), whose path is doc_path; the references being expanded; nodes made */
    const json_t *doc_root;
    char doc_path[PATH_CAP];
    const json_t *ref_stack[PARSER_MAX_REFS];
    const char *ref_name[PARSER_MAX_REFS];
    int ref_depth[PARSER_MAX_REFS];
    int n_refs;
    size_t n_nodes;
    json_t *derived; /* schema objects pipit made (merges), handed to the toolset */
};

/* Report a content error at `path` (the key when at_key, else the value). */
static void spec_fail(struct parser *P, const char *path, bool at_key, const char *fmt, ...)
    PIPIT_PRINTF(4, 5);

static void spec_fail(struct parser *P, const char *path, bool at_key, const char *fmt, ...) {
    if (P->status != PIPIT_OK) {
        return; /* keep the first error */
    }
    P->status = PIPIT_ERR_SPEC;
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(what, sizeof(what), fmt, ap);
    va_end(ap);
    if (P->err == NULL) {
        return;
    }
    int64_t off = locate_path(P->text, P->len, path, at_key);
    P->err->status = PIPIT_ERR_SPEC;
    if (off >= 0) {
        offset_to_line_col(P->text, P->len, off, &P->err->line, &P->err->column);
        P->err->offset = off;
        pipit_format(P->err->text, sizeof(P->err->text), "%s:%d:%d: %s: %s", P->name,
                     (int)P->err->line, (int)P->err->column, path, what);
    } else {
        P->err->line = 0;
        P->err->column = 0;
        P->err->offset = -1;
        pipit_format(P->err->text, sizeof(P->err->text), "%s: %s: %s", P->name, path, what);
    }
}

static void nomem(struct parser *P) {
    if (P->status == PIPIT_OK) {
        P->status =
            pipit_error_set(P->err, PIPIT_ERR_NOMEM, "toolspec: out of memory: %s", P->name);
    }
}

/* A string member: NULL when absent (if optional) or on error. */
static const char *get_string(struct parser *P,
                              const json_t *obj,
                              const char *key,
                              const char *path,
                              bool required,
                              size_t max_bytes,
                              bool non_empty) {
    char p[PATH_CAP];
    path_key(p, sizeof(p), path, key);
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        if (required) {
            spec_fail(P, path, false, "missing \"%s\"", key);
        }
        return NULL;
    }
    if (!json_is_string(v)) {
        spec_fail(P, p, false, "expected a string, got %s", json_kind(v));
        return NULL;
    }
    size_t n = json_string_length(v);
    if (n > max_bytes) {
        spec_fail(P, p, false, "string is %zu bytes long, the limit is %zu", n, max_bytes);
        return NULL;
    }
    if (non_empty && n == 0) {
        spec_fail(P, p, false, "must not be empty");
        return NULL;
    }
    if (strlen(json_string_value(v)) != n) {
        spec_fail(P, p, false, "string contains a NUL character");
        return NULL;
    }
    return json_string_value(v);
}

/* Reject keys of `obj` not in `allowed` (NULL-terminated). */
static bool only_keys(struct parser *P,
                      const json_t *obj,
                      const char *path,
                      const char *const *allowed,
                      const char *what) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (const char *const *a = allowed; *a != NULL; a++) {
            if (strcmp(*a, key) == 0) {
                ok = true;
                break;
            }
        }
        if (!ok) {
            char p[PATH_CAP];
            path_key(p, sizeof(p), path, key);
            spec_fail(P, p, true, "unknown key \"%s\" in %s", key, what);
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
check_value_map(struct parser *P, const char *map, size_t n, const char *path, size_t at) {
    size_t i = 0;
    do {
        size_t e = i;
        while (e < n && map[e] != '|') {
            e++;
        }
        const char *eq = memchr(map + i, '=', e - i);
        if (eq == NULL || eq == map + i) {
            spec_fail(P, path, false,
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
static bool check_template(struct parser *P, const char *text, const char *path) {
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
                spec_fail(P, path, false, "template: unbalanced \"{\" at character %zu",
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
                spec_fail(P, path, false,
                          "template: placeholder at character %zu must be {name} with a name of "
                          "1..%d characters",
                          utf8_count(text, i) + 1, PIPIT_TOOLSPEC_MAX_NAME);
                return false;
            }
            memcpy(name, text + i + 1, len);
            name[len] = '\0';
            if (!is_identifier(name)) {
                spec_fail(P, path, false,
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
            spec_fail(P, path, false, "template: unbalanced \"}\" at character %zu",
                      utf8_count(text, i) + 1);
            return false;
        }
    }
    return true;
}

/* ============================================================================
 * schema
 *
 * What is accepted (docs/toolspec.md, "JSON Schema"): the types object, string, number,
 * integer, boolean, array, null, a list of them, or none (any value); enum/const of any JSON
 * type; local "$ref" (expanded inline), "anyOf"/"oneOf", a one-element "allOf"; the keywords of
 * each type below; annotations (ignored, "default" and "format" recorded); "x-*" extensions
 * (ignored). Everything else is refused with the JSON path and the keyword. */

struct problems {
    struct pipit_arg_problem *list;
    size_t max, n, found;
};

static void check_node(const struct pipit_schema *s,
                       const json_t *v,
                       const char *path,
                       struct problems *pr,
                       bool skip_enum);

static void schema_free(struct pipit_schema *s) {
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; i < s->n_props; i++) {
        free(s->props[i].name);
        schema_free(s->props[i].schema);
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
    schema_free(s->items);
    schema_free(s->additional);
    for (size_t i = 0; i < s->n_alts; i++) {
        schema_free(s->alts[i]);
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

static bool is_annotation(const char *key) {
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
static bool check_keywords(struct parser *P, const json_t *node, const char *path, unsigned mask) {
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        if (is_annotation(key) || kw_in(KW_ANY_TYPE, key)) {
            continue;
        }
        bool ok = false;
        for (int t = 0; t <= PIPIT_SCHEMA_NULL && !ok; t++) {
            ok = (mask & (1u << t)) != 0 && kw_in(type_keywords((enum pipit_schema_type)t), key);
        }
        if (ok) {
            continue;
        }
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, key);
        if (kw_in(KW_COMBINE, key)) {
            spec_fail(P, p, true,
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
            spec_fail(P, p, true, "keyword \"%s\" does not apply to type %s", key, types);
        } else {
            spec_fail(P, p, true,
                      "unsupported JSON Schema keyword \"%s\" (supported: " KW_SUPPORTED ")", key);
        }
        return false;
    }
    return true;
}

/* A non-negative integer limit such as maxLength; -1 on error (reported). */
static int64_t get_count(struct parser *P, const json_t *node, const char *key, const char *path) {
    const json_t *v = json_object_get(node, key);
    char p[PATH_CAP];
    path_key(p, sizeof(p), path, key);
    double d = json_is_number(v) ? json_number_value(v) : -1;
    if (!json_is_number(v) || floor(d) != d) {
        spec_fail(P, p, false, "expected a non-negative integer, got %s", json_kind(v));
        return -1;
    }
    if (d < 0 || d > (double)PIPIT_TOOLSPEC_MAX_FILE_BYTES) {
        spec_fail(P, p, false, "%.0f is out of range 0..%d", d, PIPIT_TOOLSPEC_MAX_FILE_BYTES);
        return -1;
    }
    return (int64_t)d;
}

static bool is_integral(double v) {
    return isfinite(v) && floor(v) == v && fabs(v) <= 9007199254740992.0;
}

/* Whether `v` has the JSON type of schema type `t` (ANY: every value). */
static bool value_has_type(enum pipit_schema_type t, const json_t *v) {
    switch (t) {
        case PIPIT_SCHEMA_OBJECT:
            return json_is_object(v);
        case PIPIT_SCHEMA_STRING:
            return json_is_string(v);
        case PIPIT_SCHEMA_NUMBER:
            return json_is_number(v);
        case PIPIT_SCHEMA_INTEGER:
            return json_is_number(v) && is_integral(json_number_value(v));
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
static bool json_same(const json_t *a, const json_t *b) {
    if (json_is_number(a) && json_is_number(b)) {
        return json_number_value(a) == json_number_value(b);
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b)) {
            return false;
        }
        for (size_t i = 0; i < json_array_size(a); i++) {
            if (!json_same(json_array_get(a, i), json_array_get(b, i))) {
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
            if (y == NULL || !json_same(x, y)) {
                return false;
            }
        }
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b) != 0;
}

/* The values of "enum" (or the one of "const") that have the schema's type, into `s`. When
 * `filter` (a member of a type list), values of other types are skipped; otherwise they are
 * an error. n_enum may end 0 only when filtering. */
static bool parse_enum(struct parser *P,
                       struct pipit_schema *s,
                       const json_t *node,
                       const char *path,
                       bool filter) {
    const json_t *en = json_object_get(node, "enum");
    const json_t *cn = json_object_get(node, "const");
    char ep[PATH_CAP], cp[PATH_CAP];
    path_key(ep, sizeof(ep), path, "enum");
    path_key(cp, sizeof(cp), path, "const");
    if (en != NULL) {
        if (!json_is_array(en)) {
            spec_fail(P, ep, false, "expected an array, got %s", json_kind(en));
            return false;
        }
        size_t n = json_array_size(en);
        if (n == 0 || n > PIPIT_TOOLSPEC_MAX_ENUM) {
            spec_fail(P, ep, false, "an enum needs 1..%d values, got %zu", PIPIT_TOOLSPEC_MAX_ENUM,
                      n);
            return false;
        }
        if (cn != NULL) {
            bool found = false;
            for (size_t i = 0; i < n && !found; i++) {
                found = json_same(json_array_get(en, i), cn);
            }
            if (!found) {
                spec_fail(P, cp, false,
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
        nomem(P);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *v = cn != NULL ? cn : json_array_get(arr, i);
        char p[PATH_CAP];
        if (cn != NULL) {
            pipit_format(p, sizeof(p), "%s", cp);
        } else {
            path_index(p, sizeof(p), ep, i);
        }
        if (!value_has_type(s->type, v)) {
            if (filter) {
                continue;
            }
            char num[64];
            if (s->type == PIPIT_SCHEMA_INTEGER && json_is_number(v)) {
                format_json_number(num, sizeof(num), v);
                spec_fail(P, p, false, "%s is not an integer", num);
            } else {
                spec_fail(P, p, false, "expected %s, got %s", pipit_schema_type_name(s->type),
                          json_kind(v));
            }
            return false;
        }
        if (json_is_string(v)) {
            size_t len = json_string_length(v);
            if (len > PIPIT_TOOLSPEC_MAX_ENUM_STRING || strlen(json_string_value(v)) != len) {
                spec_fail(P, p, false, "enum strings must be 0..%d bytes without NUL",
                          PIPIT_TOOLSPEC_MAX_ENUM_STRING);
                return false;
            }
        }
        for (size_t k = 0; k < s->n_enum; k++) {
            if (json_same(s->enum_json[k], v)) {
                char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
                spec_fail(P, p, false, "duplicate enum value %s", q != NULL ? q : "");
                free(q);
                return false;
            }
        }
        size_t k = s->n_enum;
        s->enum_json[k] = v;
        if (s->enum_str != NULL) {
            s->enum_str[k] = dup_str(json_string_value(v));
            if (s->enum_str[k] == NULL) {
                nomem(P);
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

static struct pipit_schema *
parse_schema(struct parser *P, const json_t *node, const char *path, int depth);
static struct pipit_schema *
schema_alloc(struct parser *P, enum pipit_schema_type type, const json_t *node);

static bool parse_object_schema(struct parser *P,
                                struct pipit_schema *s,
                                const json_t *node,
                                const char *path,
                                int depth) {
    const json_t *props = json_object_get(node, "properties");
    char pp[PATH_CAP];
    path_key(pp, sizeof(pp), path, "properties");
    if (props != NULL) {
        if (!json_is_object(props)) {
            spec_fail(P, pp, false, "expected an object, got %s", json_kind(props));
            return false;
        }
        size_t n = json_object_size(props);
        if (n > PIPIT_TOOLSPEC_MAX_PROPERTIES) {
            spec_fail(P, pp, false, "%zu properties, the limit is %d", n,
                      PIPIT_TOOLSPEC_MAX_PROPERTIES);
            return false;
        }
        s->props = calloc(n > 0 ? n : 1, sizeof(*s->props));
        if (s->props == NULL) {
            nomem(P);
            return false;
        }
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)props, key, v) {
            char p[PATH_CAP];
            path_key(p, sizeof(p), pp, key);
            size_t klen = strlen(key);
            if (klen == 0 || klen > PIPIT_TOOLSPEC_MAX_PROP_NAME) {
                spec_fail(P, p, true, "a property name must have 1..%d bytes",
                          PIPIT_TOOLSPEC_MAX_PROP_NAME);
                return false;
            }
            struct pipit_schema_prop *prop = &s->props[s->n_props];
            prop->name = dup_str(key);
            if (prop->name == NULL) {
                nomem(P);
                return false;
            }
            s->n_props++;
            prop->schema = parse_schema(P, v, p, depth + 1);
            if (prop->schema == NULL) {
                return false;
            }
        }
    }
    const json_t *req = json_object_get(node, "required");
    if (req != NULL) {
        char rp[PATH_CAP];
        path_key(rp, sizeof(rp), path, "required");
        if (!json_is_array(req)) {
            spec_fail(P, rp, false, "expected an array, got %s", json_kind(req));
            return false;
        }
        for (size_t i = 0; i < json_array_size(req); i++) {
            const json_t *v = json_array_get(req, i);
            char p[PATH_CAP];
            path_index(p, sizeof(p), rp, i);
            if (!json_is_string(v)) {
                spec_fail(P, p, false, "expected a string, got %s", json_kind(v));
                return false;
            }
            struct pipit_schema_prop *found = NULL;
            for (size_t k = 0; k < s->n_props; k++) {
                if (strcmp(s->props[k].name, json_string_value(v)) == 0) {
                    found = &s->props[k];
                }
            }
            if (found == NULL) {
                spec_fail(P, p, false, "required \"%s\" is not a property", json_string_value(v));
                return false;
            }
            if (found->required) {
                spec_fail(P, p, false, "\"%s\" is listed twice", json_string_value(v));
                return false;
            }
            found->required = true;
        }
    }
    const json_t *ap = json_object_get(node, "additionalProperties");
    if (ap != NULL && !json_is_false(ap)) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "additionalProperties");
        s->additional = parse_schema(P, ap, p, depth + 1);
        if (s->additional == NULL) {
            return false;
        }
    } else if (ap == NULL && props == NULL && depth > 1) {
        /* a nested object that names no property ({"type": "object"}) is free-form; pipit
         * is strict only where properties are listed (and for the arguments themselves) */
        s->additional = schema_alloc(P, PIPIT_SCHEMA_ANY, node);
        if (s->additional == NULL) {
            return false;
        }
    }
    static const char *const counts[2] = {"minProperties", "maxProperties"};
    for (int k = 0; k < 2; k++) {
        if (json_object_get(node, counts[k]) != NULL) {
            int64_t n = get_count(P, node, counts[k], path);
            if (n < 0) {
                return false;
            }
            *(k == 0 ? &s->min_props : &s->max_props) = n;
        }
    }
    if (s->max_props >= 0 && s->max_props < s->min_props) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "maxProperties");
        spec_fail(P, p, false,
                  "maxProperties is below minProperties, so no object can satisfy "
                  "the schema");
        return false;
    }
    return true;
}

static bool
parse_range(struct parser *P, struct pipit_schema *s, const json_t *node, const char *path) {
    static const char *const names[2] = {"minimum", "maximum"};
    for (int k = 0; k < 2; k++) {
        const json_t *v = json_object_get(node, names[k]);
        if (v == NULL) {
            continue;
        }
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, names[k]);
        if (!json_is_number(v)) {
            spec_fail(P, p, false, "expected a number, got %s", json_kind(v));
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
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, xnames[k]);
        bool *has = k == 0 ? &s->has_xmin : &s->has_xmax;
        double *x = k == 0 ? &s->xmin : &s->xmax;
        if (json_is_true(v)) {
            if (!(k == 0 ? s->has_min : s->has_max)) {
                spec_fail(P, p, false, "true needs \"%s\" beside it", names[k]);
                return false;
            }
            *has = true;
            *x = k == 0 ? s->min : s->max;
        } else if (json_is_number(v)) {
            *has = true;
            *x = json_number_value(v);
        } else {
            spec_fail(P, p, false, "expected a number, got %s", json_kind(v));
            return false;
        }
    }
    if (s->has_xmin && s->has_xmax && s->xmin >= s->xmax) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "exclusiveMaximum");
        spec_fail(P, p, false, "no number lies between the exclusive bounds");
        return false;
    }
    const json_t *mo = json_object_get(node, "multipleOf");
    if (mo != NULL) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "multipleOf");
        if (!json_is_number(mo) || !(json_number_value(mo) > 0) ||
            !isfinite(json_number_value(mo))) {
            spec_fail(P, p, false, "expected a number above 0");
            return false;
        }
        s->multiple_of = json_number_value(mo);
    }
    if (s->has_min && s->has_max && s->min > s->max) {
        char p[PATH_CAP], a[64], b[64];
        path_key(p, sizeof(p), path, "maximum");
        format_number(a, sizeof(a), s->max);
        format_number(b, sizeof(b), s->min);
        spec_fail(P, p, false, "maximum %s is below minimum %s", a, b);
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
parse_format(struct parser *P, struct pipit_schema *s, const json_t *node, const char *path) {
    const json_t *f = json_object_get(node, "format");
    if (f == NULL) {
        return true;
    }
    char p[PATH_CAP];
    path_key(p, sizeof(p), path, "format");
    if (!json_is_string(f)) {
        spec_fail(P, p, false, "expected a string, got %s", json_kind(f));
        return false;
    }
    s->format_name = json_string_value(f);
    s->format = PIPIT_FORMAT_OTHER;
    bool string = s->type == PIPIT_SCHEMA_STRING;
    for (size_t i = 0; i < sizeof(FORMATS) / sizeof(FORMATS[0]); i++) {
        if (strcmp(FORMATS[i].name, s->format_name) == 0) {
            if (FORMATS[i].string != string) {
                spec_fail(P, p, false, "format \"%s\" does not apply to type %s", s->format_name,
                          pipit_schema_type_name(s->type));
                return false;
            }
            s->format = FORMATS[i].format;
        }
    }
    if (s->format == PIPIT_FORMAT_INT32 && s->type != PIPIT_SCHEMA_INTEGER) {
        spec_fail(P, p, false, "format \"int32\" applies to integers");
        return false;
    }
    return true;
}

static bool parse_string_keywords(struct parser *P,
                                  struct pipit_schema *s,
                                  const json_t *node,
                                  const char *path) {
    if (json_object_get(node, "minLength") != NULL) {
        s->min_length = get_count(P, node, "minLength", path);
        if (s->min_length < 0) {
            return false;
        }
    }
    if (json_object_get(node, "maxLength") != NULL) {
        s->max_length = get_count(P, node, "maxLength", path);
        if (s->max_length < 0) {
            return false;
        }
        if (s->max_length < s->min_length) {
            char p[PATH_CAP];
            path_key(p, sizeof(p), path, "maxLength");
            spec_fail(P, p, false,
                      "maxLength %lld is below minLength %lld, so no string can "
                      "satisfy the schema",
                      (long long)s->max_length, (long long)s->min_length);
            return false;
        }
    }
    const json_t *pat = json_object_get(node, "pattern");
    if (pat != NULL) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "pattern");
        if (!json_is_string(pat)) {
            spec_fail(P, p, false, "expected a string, got %s", json_kind(pat));
            return false;
        }
        char why[160];
        if (!pattern_supported(json_string_value(pat), why, sizeof(why))) {
            spec_fail(P, p, false,
                      "pattern \"%s\" is outside the supported regular expression "
                      "subset: %s",
                      json_string_value(pat), why);
            return false;
        }
        s->pattern = json_string_value(pat);
    }
    return parse_format(P, s, node, path);
}

static bool parse_array_keywords(struct parser *P,
                                 struct pipit_schema *s,
                                 const json_t *node,
                                 const char *path,
                                 int depth) {
    const json_t *items = json_object_get(node, "items");
    char p[PATH_CAP];
    path_key(p, sizeof(p), path, "items");
    if (json_is_array(items)) {
        spec_fail(P, p, false, "tuple items (an array of schemas) are not supported");
        return false;
    }
    /* no "items": any items */
    s->items = items == NULL ? schema_alloc(P, PIPIT_SCHEMA_ANY, node)
                             : parse_schema(P, items, p, depth + 1);
    if (s->items == NULL) {
        return false;
    }
    if (json_object_get(node, "minItems") != NULL) {
        s->min_items = get_count(P, node, "minItems", path);
        if (s->min_items < 0) {
            return false;
        }
    }
    if (json_object_get(node, "maxItems") != NULL) {
        s->max_items = get_count(P, node, "maxItems", path);
        if (s->max_items < 0) {
            return false;
        }
        if (s->max_items < s->min_items) {
            path_key(p, sizeof(p), path, "maxItems");
            spec_fail(P, p, false,
                      "maxItems %lld is below minItems %lld, so no array can "
                      "satisfy the schema",
                      (long long)s->max_items, (long long)s->min_items);
            return false;
        }
    }
    const json_t *u = json_object_get(node, "uniqueItems");
    if (u != NULL) {
        path_key(p, sizeof(p), path, "uniqueItems");
        if (!json_is_boolean(u)) {
            spec_fail(P, p, false, "expected a boolean, got %s", json_kind(u));
            return false;
        }
        s->unique_items = json_is_true(u);
    }
    return true;
}

static struct pipit_schema *
schema_alloc(struct parser *P, enum pipit_schema_type type, const json_t *node) {
    struct pipit_schema *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        nomem(P);
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
static bool
take_annotations(struct parser *P, struct pipit_schema *s, const json_t *node, const char *path) {
    if (!json_is_object(node)) {
        return true;
    }
    if (json_object_get(node, "description") != NULL) {
        s->description =
            get_string(P, node, "description", path, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, false);
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
static bool check_enum_values(struct parser *P, const struct pipit_schema *s, const char *path) {
    for (size_t i = 0; i < s->n_enum; i++) {
        struct pipit_arg_problem pb;
        struct problems pr = {&pb, 1, 0, 0};
        check_node(s, s->enum_json[i], "value", &pr, true);
        if (pr.found > 0) {
            char p[PATH_CAP], *q = json_dumps(s->enum_json[i], JSON_ENCODE_ANY | JSON_COMPACT);
            const json_t *en = json_object_get(s->json, "enum");
            path_key(p, sizeof(p), path,
                     json_object_get(s->json, "const") != NULL ? "const" : "enum");
            for (size_t k = 0; json_object_get(s->json, "const") == NULL && k < json_array_size(en);
                 k++) {
                if (json_array_get(en, k) == s->enum_json[i]) {
                    char e[PATH_CAP];
                    path_index(e, sizeof(e), p, k);
                    pipit_format(p, sizeof(p), "%s", e);
                    break;
                }
            }
            spec_fail(P, p, false, "the value %s does not satisfy the schema: %s: %s",
                      q != NULL ? q : "", pb.path, pb.message);
            free(q);
            return false;
        }
    }
    return true;
}

/* Refuse a number or integer schema no value satisfies, or none a call can write (enum values
 * that do not satisfy their schema are refused by check_enum_values): a call could never be
 * valid, so the tool could never run. */
static bool check_satisfiable(struct parser *P, const struct pipit_schema *s, const char *path) {
    char p[PATH_CAP], a[64], b[64];
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
            path_key(p, sizeof(p), path, s->has_min ? "minimum" : "maximum");
            format_number(a, sizeof(a), s->has_min ? s->min : -9007199254740992.0);
            format_number(b, sizeof(b), s->has_max ? s->max : 9007199254740992.0);
            spec_fail(P, p, false, "no integer lies in %s..%s (integers are exact up to 2^53)", a,
                      b);
            return false;
        }
        if (s->multiple_of > 0 && isfinite(lo) && isfinite(hi) &&
            ceil(lo / s->multiple_of) > floor(hi / s->multiple_of)) {
            path_key(p, sizeof(p), path, "multipleOf");
            format_number(a, sizeof(a), s->multiple_of);
            spec_fail(P, p, false, "no multiple of %s lies within the bounds", a);
            return false;
        }
        /* what a call can write: at most 18 integer and 40 fraction digits (docs/grammar.md) */
        if (lo >= 1e18 || hi <= -1e18 ||
            (hi - lo < 1e-40 && floor(lo * 1e40) == floor(hi * 1e40) &&
             floor(lo * 1e40) != lo * 1e40)) {
            path_key(p, sizeof(p), path, s->has_min ? "minimum" : "maximum");
            char range[160];
            format_number(a, sizeof(a), lo);
            format_number(b, sizeof(b), hi);
            if (s->has_min && s->has_max) {
                pipit_format(range, sizeof(range), "lies in %s..%s", a, b);
            } else {
                pipit_format(range, sizeof(range), "is %s %s",
                             s->has_min ? ">=" : "<=", s->has_min ? a : b);
            }
            spec_fail(P, p, false,
                      "no number a call can write (at most 18 integer and 40 fraction digits) %s",
                      range);
            return false;
        }
        return true;
    }
    return true;
}

/* A schema of one known type read from `node` (whose keywords were checked). `filter`: the
 * node lists several types; enum values of other types belong to other members. NULL on
 * error; *empty when filtering left no enum value of this type (the member is dropped). */
static struct pipit_schema *parse_typed(struct parser *P,
                                        const json_t *node,
                                        const char *path,
                                        int depth,
                                        enum pipit_schema_type type,
                                        bool filter,
                                        bool *empty) {
    struct pipit_schema *s = schema_alloc(P, type, node);
    if (s == NULL) {
        return NULL;
    }
    *empty = false;
    bool ok = take_annotations(P, s, node, path);
    if (ok && type == PIPIT_SCHEMA_OBJECT) {
        ok = parse_object_schema(P, s, node, path, depth);
    }
    if (ok && (type == PIPIT_SCHEMA_NUMBER || type == PIPIT_SCHEMA_INTEGER)) {
        ok = parse_range(P, s, node, path) && parse_format(P, s, node, path);
    }
    if (ok && type == PIPIT_SCHEMA_STRING) {
        ok = parse_string_keywords(P, s, node, path);
    }
    if (ok && type == PIPIT_SCHEMA_ARRAY) {
        ok = parse_array_keywords(P, s, node, path, depth);
    }
    if (ok && (json_object_get(node, "enum") != NULL || json_object_get(node, "const") != NULL)) {
        ok = parse_enum(P, s, node, path, filter);
        if (ok && s->n_enum == 0) {
            *empty = true;
            schema_free(s);
            return NULL;
        }
        ok = ok && check_enum_values(P, s, path);
    }
    if (ok) {
        ok = check_satisfiable(P, s, path);
    }
    if (!ok) {
        schema_free(s);
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
static struct pipit_schema *make_union(struct parser *P,
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
    struct pipit_schema *u = schema_alloc(P, PIPIT_SCHEMA_UNION, node);
    struct pipit_schema **copy = u != NULL ? calloc(k, sizeof(*copy)) : NULL;
    if (copy == NULL) {
        for (size_t i = 0; i < k; i++) {
            schema_free(alts[i]);
        }
        free(u);
        if (u != NULL) {
            nomem(P);
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
parse_types(struct parser *P, const json_t *node, const char *path, int depth) {
    const json_t *t = json_object_get(node, "type");
    char tp[PATH_CAP];
    path_key(tp, sizeof(tp), path, "type");
    int types[PIPIT_SCHEMA_NULL + 1];
    size_t n = 0;
    if (json_is_string(t)) {
        int k = type_of_name(json_string_value(t));
        if (k < 0) {
            spec_fail(P, tp, false,
                      "unsupported type \"%s\" (supported: object, string, number, integer, "
                      "boolean, array, null)",
                      json_string_value(t));
            return NULL;
        }
        types[n++] = k;
    } else if (json_is_array(t)) {
        if (json_array_size(t) == 0 || json_array_size(t) > PIPIT_SCHEMA_NULL + 1) {
            spec_fail(P, tp, false, "a type list needs 1..7 type names");
            return NULL;
        }
        for (size_t i = 0; i < json_array_size(t); i++) {
            const json_t *e = json_array_get(t, i);
            char p[PATH_CAP];
            path_index(p, sizeof(p), tp, i);
            int k = json_is_string(e) ? type_of_name(json_string_value(e)) : -1;
            if (k < 0) {
                spec_fail(P, p, false,
                          "expected a type name (object, string, number, integer, "
                          "boolean, array, null)");
                return NULL;
            }
            for (size_t j = 0; j < n; j++) {
                if (types[j] == k) {
                    spec_fail(P, p, false, "type \"%s\" is listed twice", TYPE_NAMES[k]);
                    return NULL;
                }
            }
            types[n++] = k;
        }
    } else if (t != NULL) {
        spec_fail(P, tp, false, "expected a type name or a list of them, got %s", json_kind(t));
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
                if (!check_keywords(P, node, path, 0)) {
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
                    if (kw_in(type_keywords(kinds[k]), key)) {
                        found |= 1u << kinds[k];
                    }
                }
            }
            if (found == 0) {
                if (!check_keywords(P, node, path, 0)) {
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
                spec_fail(P, path, false,
                          "missing \"type\" (the keywords belong to different types)");
                return NULL;
            }
        }
    }
    const json_t *nullable = json_object_get(node, "nullable");
    if (nullable != NULL) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "nullable");
        if (!json_is_boolean(nullable)) {
            spec_fail(P, p, false, "expected a boolean, got %s", json_kind(nullable));
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
    if (!check_keywords(P, node, path, mask)) {
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
                schema_free(alts[j]);
            }
            return NULL;
        }
        k += alts[k] != NULL;
    }
    if (k == 0) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "enum");
        spec_fail(P, p, false,
                  "no enum value has one of the listed types, so no value can "
                  "satisfy the schema");
        return NULL;
    }
    return make_union(P, node, alts, k, false);
}

/* Resolve a local reference "#/a/b" against the tool's schema document. */
static const json_t *resolve_ref(struct parser *P, const char *ref, char *tpath, size_t cap) {
    const json_t *cur = P->doc_root;
    pipit_format(tpath, cap, "%s", P->doc_path);
    const char *p = ref + 1;
    while (*p == '/') {
        p++;
        char tok[PATH_CAP];
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
        char next[PATH_CAP];
        if (json_is_object(cur)) {
            cur = json_object_get(cur, tok);
            path_key(next, sizeof(next), tpath, tok);
        } else if (json_is_array(cur)) {
            char *end = NULL;
            unsigned long i = strtoul(tok, &end, 10);
            cur = end != tok && *end == '\0' ? json_array_get(cur, i) : NULL;
            path_index(next, sizeof(next), tpath, i);
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
static const json_t *keep(struct parser *P, json_t *made) {
    if (made == NULL || (P->derived == NULL && (P->derived = json_array()) == NULL) ||
        json_array_append_new(P->derived, made) != 0) {
        nomem(P);
        return NULL;
    }
    return made;
}

/* The schema `node` stands for with its "$ref"s followed (while it is a reference with only
 * annotations beside it). Broken references come back as they are (parse_ref reports them). */
static const json_t *follow_refs(struct parser *P, const json_t *node) {
    for (int i = 0; i < 16 && json_is_object(node); i++) {
        const json_t *r = json_object_get(node, "$ref");
        if (!json_is_string(r) || json_string_value(r)[0] != '#' || P->doc_root == NULL) {
            break;
        }
        const char *key;
        json_t *v;
        bool plain = true;
        json_object_foreach((json_t *)node, key, v) {
            plain = plain && (strcmp(key, "$ref") == 0 || is_annotation(key));
        }
        char tpath[PATH_CAP];
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
static bool merge_keywords(struct parser *P,
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
        if (json_same(d, v) || is_annotation(key)) {
            continue;
        }
        if (strcmp(key, "required") == 0 && json_is_array(d) && json_is_array(v)) {
            json_t *u = json_copy(d);
            for (size_t i = 0; u != NULL && i < json_array_size(v); i++) {
                bool in = false;
                for (size_t k = 0; k < json_array_size(u) && !in; k++) {
                    in = json_same(json_array_get(u, k), json_array_get(v, i));
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
                if (had != NULL && !json_same(had, sch)) {
                    spec_fail(P, path, false,
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
        spec_fail(P, path, false,
                  "%s: keyword \"%s\" has two different values (pipit merges the parts into one "
                  "schema and cannot combine them)",
                  parts, key);
        return false;
    }
    return true;
}

/* A part that closes its object (additionalProperties false or a schema) refuses the
 * properties the other parts add: merging would accept them, so it is refused. */
static bool check_closed_parts(struct parser *P,
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
            spec_fail(P, path, false,
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
parse_ref(struct parser *P, const json_t *node, const char *path, int depth) {
    char rp[PATH_CAP];
    path_key(rp, sizeof(rp), path, "$ref");
    const json_t *r = json_object_get(node, "$ref");
    if (!json_is_string(r)) {
        spec_fail(P, rp, false, "expected a string, got %s", json_kind(r));
        return NULL;
    }
    const char *ref = json_string_value(r);
    if (ref[0] != '#' || (ref[1] != '\0' && ref[1] != '/')) {
        spec_fail(P, rp, false, "only local references (\"#/...\") are supported, got \"%s\"", ref);
        return NULL;
    }
    char tpath[PATH_CAP];
    const json_t *target = P->doc_root != NULL ? resolve_ref(P, ref, tpath, sizeof(tpath)) : NULL;
    if (target == NULL) {
        spec_fail(P, rp, false, "$ref \"%s\" points to nothing in the tool's schema", ref);
        return NULL;
    }
    for (int i = 0; i < P->n_refs; i++) {
        if (P->ref_stack[i] == target && P->ref_depth[i] == depth) {
            spec_fail(P, rp, false, "$ref \"%s\" refers to itself without nesting", ref);
            return NULL;
        }
    }
    if (P->n_refs >= PARSER_MAX_REFS) {
        spec_fail(P, rp, false, "$ref \"%s\": more than %d references inside each other", ref,
                  PARSER_MAX_REFS);
        return NULL;
    }
    /* keywords beside "$ref" hold together with the target: merged into it */
    bool siblings = false;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        siblings = siblings || (strcmp(key, "$ref") != 0 && !is_annotation(key));
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
    struct pipit_schema *s = parse_schema(P, what, tpath, depth);
    P->n_refs--;
    if (s != NULL && !take_annotations(P, s, node, path)) {
        schema_free(s);
        return NULL;
    }
    return s;
}

static struct pipit_schema *parse_combination(struct parser *P,
                                              const json_t *node,
                                              const char *path,
                                              int depth,
                                              const char *kw) {
    char kp[PATH_CAP];
    path_key(kp, sizeof(kp), path, kw);
    const json_t *list = json_object_get(node, kw);
    if (!json_is_array(list)) {
        spec_fail(P, kp, false, "expected an array of schemas, got %s", json_kind(list));
        return NULL;
    }
    size_t n = json_array_size(list);
    if (n == 0 || n > PIPIT_TOOLSPEC_MAX_ALTS) {
        spec_fail(P, kp, false, "%s needs 1..%d schemas, got %zu", kw, PIPIT_TOOLSPEC_MAX_ALTS, n);
        return NULL;
    }
    /* keywords beside the combination (other than annotations) hold together with it: they
     * are merged into every alternative (anyOf, oneOf) or with every part (allOf) */
    bool siblings = false;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)node, key, v) {
        siblings = siblings || (strcmp(key, kw) != 0 && !is_annotation(key));
    }
    const json_t *rest = siblings ? keep(P, without(node, kw)) : NULL;
    if (siblings && rest == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!json_is_object(json_array_get(list, i)) && !json_is_boolean(json_array_get(list, i))) {
            char p[PATH_CAP];
            path_index(p, sizeof(p), kp, i);
            spec_fail(P, p, false, "expected a schema object, got %s",
                      json_kind(json_array_get(list, i)));
            return NULL;
        }
    }
    if (strcmp(kw, "allOf") == 0) {
        if (n == 1 && !siblings) {
            struct pipit_schema *s = parse_schema(P, json_array_get(list, 0), kp, depth);
            if (s != NULL && !take_annotations(P, s, node, path)) {
                schema_free(s);
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
                    spec_fail(P, kp, false, "allOf: a part is the schema false");
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
        return parse_schema(P, merged, path, depth);
    }
    struct pipit_schema *alts[PIPIT_TOOLSPEC_MAX_ALTS];
    for (size_t i = 0; i < n; i++) {
        char p[PATH_CAP];
        path_index(p, sizeof(p), kp, i);
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
        alts[i] = alt != NULL ? parse_schema(P, alt, p, depth) : NULL;
        if (alts[i] == NULL) {
            for (size_t j = 0; j < i; j++) {
                schema_free(alts[j]);
            }
            return NULL;
        }
    }
    struct pipit_schema *s = make_union(P, node, alts, n, strcmp(kw, "oneOf") == 0);
    if (s != NULL && !take_annotations(P, s, node, path)) {
        schema_free(s);
        return NULL;
    }
    return s;
}

static struct pipit_schema *
parse_schema(struct parser *P, const json_t *node, const char *path, int depth) {
    if (json_is_true(node)) {
        return schema_alloc(P, PIPIT_SCHEMA_ANY, node);
    }
    if (json_is_false(node)) {
        spec_fail(P, path, false, "the schema false allows no value");
        return NULL;
    }
    if (!json_is_object(node)) {
        spec_fail(P, path, false, "expected a schema object, got %s", json_kind(node));
        return NULL;
    }
    if (depth > PIPIT_TOOLSPEC_MAX_DEPTH) {
        if (P->n_refs > 0) {
            spec_fail(P, path, false,
                      "schema nested deeper than %d levels through $ref \"%s\" (references "
                      "are expanded inline; recursion is refused at that depth)",
                      PIPIT_TOOLSPEC_MAX_DEPTH, P->ref_name[P->n_refs - 1]);
        } else {
            spec_fail(P, path, false, "schema nested deeper than %d levels",
                      PIPIT_TOOLSPEC_MAX_DEPTH);
        }
        return NULL;
    }
    if (++P->n_nodes > PIPIT_TOOLSPEC_MAX_NODES) {
        spec_fail(P, path, false, "the tool's schema expands to more than %d nodes",
                  PIPIT_TOOLSPEC_MAX_NODES);
        return NULL;
    }
    if (json_object_get(node, "description") != NULL &&
        get_string(P, node, "description", path, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, false) ==
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

/* ============================================================================
 * tools */

static void tool_clear(struct pipit_tool *t) {
    json_decref(t->own_function);
    free(t->name);
    free(t->description);
    schema_free(t->params);
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

static bool is_code(const char *s) {
    if (strcmp(s, "*") == 0) {
        return true;
    }
    if (s[0] == '\0') {
        return false;
    }
    for (const char *p = s; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-')) {
            return false;
        }
    }
    return true;
}

static bool
parse_undo(struct parser *P, struct pipit_tool *t, const json_t *undo, const char *path) {
    if (json_is_string(undo)) {
        if (strcmp(json_string_value(undo), "none") != 0) {
            spec_fail(P, path, false, "expected \"none\" or {\"keys\": [...]}, got \"%s\"",
                      json_string_value(undo));
            return false;
        }
        t->undo = PIPIT_UNDO_IMPOSSIBLE;
        return true;
    }
    if (!json_is_object(undo)) {
        spec_fail(P, path, false, "expected \"none\" or {\"keys\": [...]}, got %s",
                  json_kind(undo));
        return false;
    }
    static const char *const allowed[] = {"keys", NULL};
    if (!only_keys(P, undo, path, allowed, "undo")) {
        return false;
    }
    const json_t *keys = json_object_get(undo, "keys");
    char kp[PATH_CAP];
    path_key(kp, sizeof(kp), path, "keys");
    if (keys == NULL) {
        spec_fail(P, path, false, "missing \"keys\"");
        return false;
    }
    if (!json_is_array(keys)) {
        spec_fail(P, kp, false, "expected an array, got %s", json_kind(keys));
        return false;
    }
    size_t n = json_array_size(keys);
    if (n == 0 || n > PIPIT_TOOLSPEC_MAX_UNDO_KEYS) {
        spec_fail(P, kp, false, "expected 1..%d state keys, got %zu", PIPIT_TOOLSPEC_MAX_UNDO_KEYS,
                  n);
        return false;
    }
    t->undo_keys = calloc(n, sizeof(char *));
    if (t->undo_keys == NULL) {
        nomem(P);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(keys, i);
        char p[PATH_CAP];
        path_index(p, sizeof(p), kp, i);
        if (!json_is_string(v) || !is_identifier(json_string_value(v)) ||
            json_string_length(v) > PIPIT_TOOLSPEC_MAX_NAME) {
            spec_fail(P, p, false, "a state key must be a string matching [a-zA-Z_][a-zA-Z0-9_]*");
            return false;
        }
        for (size_t k = 0; k < i; k++) {
            if (strcmp(t->undo_keys[k], json_string_value(v)) == 0) {
                spec_fail(P, p, false, "duplicate state key \"%s\"", json_string_value(v));
                return false;
            }
        }
        t->undo_keys[i] = dup_str(json_string_value(v));
        if (t->undo_keys[i] == NULL) {
            nomem(P);
            return false;
        }
        t->n_undo_keys = i + 1;
    }
    t->undo = PIPIT_UNDO_KEYS;
    return true;
}

static bool
parse_pipit(struct parser *P, struct pipit_tool *t, const json_t *pp, const char *path) {
    if (!json_is_object(pp)) {
        spec_fail(P, path, false, "expected an object, got %s", json_kind(pp));
        return false;
    }
    static const char *const allowed[] = {"success", "failure", "undo", "effect", "examples", NULL};
    if (!only_keys(P, pp, path, allowed,
                   "pipit (expected success, failure, undo, effect, examples)")) {
        return false;
    }
    char p[PATH_CAP];
    if (json_object_get(pp, "success") != NULL) {
        const char *s =
            get_string(P, pp, "success", path, false, PIPIT_TOOLSPEC_MAX_TEMPLATE, true);
        path_key(p, sizeof(p), path, "success");
        if (s == NULL || !check_template(P, s, p)) {
            return false;
        }
        t->success = dup_str(s);
        if (t->success == NULL) {
            nomem(P);
            return false;
        }
    }
    const json_t *fail = json_object_get(pp, "failure");
    if (fail != NULL) {
        char fp[PATH_CAP];
        path_key(fp, sizeof(fp), path, "failure");
        if (!json_is_object(fail)) {
            spec_fail(P, fp, false, "expected an object of code: template, got %s",
                      json_kind(fail));
            return false;
        }
        size_t n = json_object_size(fail);
        if (n > PIPIT_TOOLSPEC_MAX_CODES) {
            spec_fail(P, fp, false, "%zu failure templates, the limit is %d", n,
                      PIPIT_TOOLSPEC_MAX_CODES);
            return false;
        }
        if (n > 0 && json_object_get(fail, "*") == NULL) {
            spec_fail(P, fp, false, "missing the catch-all \"*\" template");
            return false;
        }
        t->failures = calloc(n > 0 ? n : 1, sizeof(*t->failures));
        if (t->failures == NULL) {
            nomem(P);
            return false;
        }
        const char *code;
        json_t *v;
        json_object_foreach((json_t *)fail, code, v) {
            path_key(p, sizeof(p), fp, code);
            if (!is_code(code) || strlen(code) > PIPIT_TOOLSPEC_MAX_NAME) {
                spec_fail(P, p, true,
                          "failure code \"%s\" must be \"*\" or 1..%d characters of "
                          "[a-zA-Z0-9_.-]",
                          code, PIPIT_TOOLSPEC_MAX_NAME);
                return false;
            }
            const char *s = get_string(P, fail, code, fp, false, PIPIT_TOOLSPEC_MAX_TEMPLATE, true);
            if (s == NULL || !check_template(P, s, p)) {
                return false;
            }
            struct pipit_tool_template *tt = &t->failures[t->n_failures];
            tt->code = dup_str(code);
            tt->text = dup_str(s);
            if (tt->code == NULL || tt->text == NULL) {
                free(tt->code);
                free(tt->text);
                nomem(P);
                return false;
            }
            t->n_failures++;
        }
    }
    const json_t *undo = json_object_get(pp, "undo");
    t->undo = PIPIT_UNDO_NO_STATE;
    if (undo != NULL) {
        path_key(p, sizeof(p), path, "undo");
        return parse_undo(P, t, undo, p);
    }
    return true;
}

static bool
parse_tool(struct parser *P, struct pipit_tool *t, const json_t *entry, const char *path) {
    if (!json_is_object(entry)) {
        spec_fail(P, path, false, "expected a tool object, got %s", json_kind(entry));
        return false;
    }
    /* an MCP tool definition (tools/list): {name, title?, description?, inputSchema, ...} */
    bool mcp =
        json_object_get(entry, "type") == NULL && json_object_get(entry, "inputSchema") != NULL;
    const json_t *fn = entry;
    char fp[PATH_CAP];
    pipit_format(fp, sizeof(fp), "%s", path);
    if (mcp) {
        static const char *const mcp_allowed[] = {"name",        "title",        "description",
                                                  "inputSchema", "outputSchema", "annotations",
                                                  "_meta",       "pipit",        NULL};
        if (!only_keys(P, entry, path, mcp_allowed,
                       "an MCP tool (expected name, title, description, inputSchema, "
                       "outputSchema, annotations, _meta, pipit)")) {
            return false;
        }
    } else {
        static const char *const allowed[] = {"type", "function", "pipit", NULL};
        if (!only_keys(P, entry, path, allowed, "a tool (expected type, function, pipit)")) {
            return false;
        }
        const char *type = get_string(P, entry, "type", path, true, 64, false);
        if (type == NULL) {
            return false;
        }
        if (strcmp(type, "function") != 0) {
            char p[PATH_CAP];
            path_key(p, sizeof(p), path, "type");
            spec_fail(P, p, false, "expected \"function\", got \"%s\"", type);
            return false;
        }
        fn = json_object_get(entry, "function");
        path_key(fp, sizeof(fp), path, "function");
        if (fn == NULL) {
            spec_fail(P, path, false, "missing \"function\"");
            return false;
        }
        if (!json_is_object(fn)) {
            spec_fail(P, fp, false, "expected an object, got %s", json_kind(fn));
            return false;
        }
        t->function = fn;
        /* "response": BFCL's description of what the function returns (an annotation) */
        static const char *const fn_allowed[] = {"name",   "description", "parameters",
                                                 "strict", "response",    NULL};
        if (!only_keys(P, fn, fp, fn_allowed,
                       "a function (expected name, description, parameters)")) {
            return false;
        }
    }
    const char *name = get_string(P, fn, "name", fp, true, 1024, true);
    if (name == NULL) {
        return false;
    }
    char np[PATH_CAP];
    path_key(np, sizeof(np), fp, "name");
    if (strlen(name) > PIPIT_TOOLSPEC_MAX_NAME) {
        spec_fail(P, np, false, "tool name is %zu characters long, the limit is %d", strlen(name),
                  PIPIT_TOOLSPEC_MAX_NAME);
        return false;
    }
    if (!is_tool_name(name)) {
        spec_fail(P, np, false, "tool name \"%s\" must match [a-zA-Z0-9_.-]+", name);
        return false;
    }
    const char *desc = NULL;
    if (mcp && json_object_get(fn, "description") == NULL) {
        /* MCP makes the description optional: the title, else the name, stands in */
        desc = json_object_get(fn, "title") != NULL
                   ? get_string(P, fn, "title", fp, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, true)
                   : name;
    } else {
        desc = get_string(P, fn, "description", fp, true, PIPIT_TOOLSPEC_MAX_DESCRIPTION, true);
    }
    if (desc == NULL) {
        return false;
    }
    if (mcp) {
        t->own_function = json_pack("{s:s,s:s,s:O}", "name", name, "description", desc,
                                    "parameters", json_object_get(fn, "inputSchema"));
        if (t->own_function == NULL) {
            nomem(P);
            return false;
        }
        t->function = t->own_function;
    }
    const json_t *strict = json_object_get(fn, "strict");
    if (strict != NULL && !json_is_boolean(strict)) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), fp, "strict");
        spec_fail(P, p, false, "expected a boolean, got %s", json_kind(strict));
        return false;
    }
    t->name = dup_str(name);
    t->description = dup_str(desc);
    if (t->name == NULL || t->description == NULL) {
        nomem(P);
        return false;
    }
    const json_t *params = json_object_get(fn, mcp ? "inputSchema" : "parameters");
    char pp[PATH_CAP];
    path_key(pp, sizeof(pp), fp, mcp ? "inputSchema" : "parameters");
    if (params != NULL) {
        P->doc_root = params;
        pipit_format(P->doc_path, sizeof(P->doc_path), "%s", pp);
        P->n_refs = 0;
        P->n_nodes = 0;
        t->params = parse_schema(P, params, pp, 1);
        if (t->params == NULL) {
            return false;
        }
        if (t->params->type != PIPIT_SCHEMA_OBJECT) {
            char p[PATH_CAP];
            path_key(p, sizeof(p), pp, "type");
            spec_fail(P, p, false, "parameters must be of type object, got %s",
                      pipit_schema_type_name(t->params->type));
            return false;
        }
    } else {
        /* omitted parameters: a tool without arguments */
        t->params = calloc(1, sizeof(*t->params));
        if (t->params == NULL) {
            nomem(P);
            return false;
        }
        t->params->type = PIPIT_SCHEMA_OBJECT;
        t->params->max_length = -1;
        t->params->max_items = -1;
        t->params->max_props = -1;
    }
    const json_t *pip = json_object_get(entry, "pipit");
    t->undo = PIPIT_UNDO_NO_STATE;
    if (pip != NULL) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, "pipit");
        return parse_pipit(P, t, pip, p);
    }
    return true;
}

/* ============================================================================
 * packs (docs/toolspec.md, "Packs") */

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

static const char *pack_type_name(enum pipit_schema_type t) {
    return t == PIPIT_SCHEMA_ARRAY ? "array of strings" : pipit_schema_type_name(t);
}

static bool string_in(const char *const *list, size_t n, const char *s) {
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
                pipit_format(why, size, "expected a boolean, got %s", json_kind(v));
                return false;
            }
            return true;
        case PIPIT_SCHEMA_INTEGER:
        case PIPIT_SCHEMA_NUMBER: {
            if (!json_is_number(v)) {
                pipit_format(why, size, "expected %s, got %s",
                             k->type == PIPIT_SCHEMA_INTEGER ? "an integer" : "a number",
                             json_kind(v));
                return false;
            }
            double d = json_number_value(v);
            format_json_number(num, sizeof(num), v);
            if (!isfinite(d) || (k->type == PIPIT_SCHEMA_INTEGER && !is_integral(d))) {
                pipit_format(why, size, "%s is not %s", num,
                             k->type == PIPIT_SCHEMA_INTEGER ? "an integer" : "a finite number");
                return false;
            }
            if ((k->has_min && d < k->min) || (k->has_max && d > k->max)) {
                format_number(a, sizeof(a), k->min);
                format_number(b, sizeof(b), k->max);
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
                pipit_format(why, size, "expected a string, got %s", json_kind(v));
                return false;
            }
            if (k->n_enum > 0 && !string_in(k->enum_str, k->n_enum, json_string_value(v))) {
                enum_text(k->enum_str, k->n_enum, list, sizeof(list));
                pipit_format(why, size, "\"%.64s\" is not one of %s", json_string_value(v), list);
                return false;
            }
            return true;
        case PIPIT_SCHEMA_ARRAY: {
            if (!json_is_array(v)) {
                pipit_format(why, size, "expected an array of strings, got %s", json_kind(v));
                return false;
            }
            for (size_t i = 0; i < json_array_size(v); i++) {
                const json_t *it = json_array_get(v, i);
                if (!json_is_string(it)) {
                    pipit_format(why, size, "item %zu: expected a string, got %s", i,
                                 json_kind(it));
                    return false;
                }
                if (k->n_enum > 0 && !string_in(k->enum_str, k->n_enum, json_string_value(it))) {
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

static void pack_free(struct pipit_pack *pk) {
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

static void tool_pack_clear(struct pipit_tool_pack *tp) {
    free(tp->set);
    free(tp->examples);
    free((void *)tp->changes);
    memset(tp, 0, sizeof(*tp));
}

/* A list of non-empty strings (router words, enums): an owned array of borrowed strings. */
static bool string_list(struct parser *P,
                        const json_t *arr,
                        const char *path,
                        size_t max_n,
                        size_t max_bytes,
                        bool phrases,
                        const char ***out,
                        size_t *n_out) {
    if (!json_is_array(arr)) {
        spec_fail(P, path, false, "expected an array of strings, got %s", json_kind(arr));
        return false;
    }
    size_t n = json_array_size(arr);
    if (n == 0 || n > max_n) {
        spec_fail(P, path, false, "expected 1..%zu strings, got %zu", max_n, n);
        return false;
    }
    const char **list = calloc(n, sizeof(*list));
    if (list == NULL) {
        nomem(P);
        return false;
    }
    *out = list;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        char p[PATH_CAP];
        path_index(p, sizeof(p), path, i);
        if (!json_is_string(v)) {
            spec_fail(P, p, false, "expected a string, got %s", json_kind(v));
            return false;
        }
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        if (len == 0 || len > max_bytes || strlen(s) != len) {
            spec_fail(P, p, false, "expected 1..%zu bytes without NUL", max_bytes);
            return false;
        }
        if (phrases && !is_phrase_list(s)) {
            spec_fail(P, p, false, "\"%s\" must be lowercase ASCII words (a-z, 0-9, space, '-', ')",
                      s);
            return false;
        }
        if (string_in(list, i, s)) {
            spec_fail(P, p, false, "duplicate value \"%s\"", s);
            return false;
        }
        list[i] = s;
        *n_out = i + 1;
    }
    return true;
}

static bool
parse_key_words(struct parser *P, struct pipit_pack_key *k, const json_t *words, const char *path) {
    if (!json_is_object(words)) {
        spec_fail(P, path, false, "expected an object, got %s", json_kind(words));
        return false;
    }
    static const char *const allowed[] = {"names",   "noun", "unit", "zero",
                                          "pattern", "yes",  "no",   NULL};
    if (!only_keys(P, words, path, allowed,
                   "words (expected names, noun, unit, zero, pattern, yes, no)")) {
        return false;
    }
    const char **slots[] = {&k->words.names,   &k->words.noun, &k->words.unit, &k->words.zero,
                            &k->words.pattern, &k->words.yes,  &k->words.no};
    for (size_t i = 0; i < 7; i++) {
        if (json_object_get(words, allowed[i]) == NULL) {
            continue;
        }
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, allowed[i]);
        const char *s = get_string(P, words, allowed[i], path, false, 256, i != 2);
        if (s == NULL) {
            return false;
        }
        bool numeric = k->type == PIPIT_SCHEMA_INTEGER || k->type == PIPIT_SCHEMA_NUMBER;
        if (i == 0 && !is_phrase_list(s)) {
            spec_fail(P, p, false,
                      "names must be '|'-separated phrases of lowercase ASCII words, got \"%s\"",
                      s);
            return false;
        }
        if ((i == 2 || i == 3) && !numeric) {
            spec_fail(P, p, true, "\"%s\" applies only to integer and number keys, not %s",
                      allowed[i], pack_type_name(k->type));
            return false;
        }
        if ((i == 5 || i == 6) && k->type != PIPIT_SCHEMA_BOOLEAN) {
            spec_fail(P, p, true, "\"%s\" applies only to boolean keys, not %s", allowed[i],
                      pack_type_name(k->type));
            return false;
        }
        if (i == 4 && strstr(s, "{v}") == NULL) {
            spec_fail(P, p, false, "a pattern must contain {v} (the value), got \"%s\"", s);
            return false;
        }
        *slots[i] = s;
    }
    return true;
}

static bool parse_state_key(struct parser *P,
                            struct pipit_pack_key *k,
                            const char *key,
                            const json_t *decl,
                            const char *path) {
    if (!is_identifier(key) || strlen(key) > PIPIT_PACK_MAX_KEY_NAME) {
        spec_fail(P, path, true,
                  "state key \"%s\" must match [a-zA-Z_][a-zA-Z0-9_]* and have at most %d "
                  "characters",
                  key, PIPIT_PACK_MAX_KEY_NAME);
        return false;
    }
    k->key = key;
    k->words.key = key;
    k->show = key;
    if (!json_is_object(decl)) {
        spec_fail(P, path, false, "expected a state key object, got %s", json_kind(decl));
        return false;
    }
    static const char *const allowed[] = {"type", "initial", "minimum", "maximum",
                                          "enum", "show",    "words",   NULL};
    if (!only_keys(P, decl, path, allowed,
                   "a state key (expected type, initial, minimum, maximum, enum, show, words)")) {
        return false;
    }
    const char *type = get_string(P, decl, "type", path, true, 64, true);
    if (type == NULL) {
        return false;
    }
    static const char *const types[] = {"boolean", "integer", "number", "string", "array"};
    static const enum pipit_schema_type kinds[] = {PIPIT_SCHEMA_BOOLEAN, PIPIT_SCHEMA_INTEGER,
                                                   PIPIT_SCHEMA_NUMBER, PIPIT_SCHEMA_STRING,
                                                   PIPIT_SCHEMA_ARRAY};
    char p[PATH_CAP];
    int found = -1;
    for (int i = 0; i < 5; i++) {
        found = strcmp(type, types[i]) == 0 ? i : found;
    }
    if (found < 0) {
        path_key(p, sizeof(p), path, "type");
        spec_fail(P, p, false,
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
        path_key(p, sizeof(p), path, bounds[b]);
        if (!numeric) {
            spec_fail(P, p, true, "\"%s\" applies only to integer and number keys, not %s",
                      bounds[b], pack_type_name(k->type));
            return false;
        }
        if (!json_is_number(v)) {
            spec_fail(P, p, false, "expected a number, got %s", json_kind(v));
            return false;
        }
        if (k->type == PIPIT_SCHEMA_INTEGER && !is_integral(json_number_value(v))) {
            char num[64];
            format_json_number(num, sizeof(num), v);
            spec_fail(P, p, false, "%s is not an integer", num);
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
        path_key(p, sizeof(p), path, "maximum");
        format_number(a, sizeof(a), k->max);
        format_number(b, sizeof(b), k->min);
        spec_fail(P, p, false, "maximum %s is below minimum %s", a, b);
        return false;
    }
    const json_t *en = json_object_get(decl, "enum");
    if (en != NULL) {
        path_key(p, sizeof(p), path, "enum");
        if (k->type != PIPIT_SCHEMA_STRING && k->type != PIPIT_SCHEMA_ARRAY) {
            spec_fail(P, p, true, "\"enum\" applies only to string and array keys, not %s",
                      pack_type_name(k->type));
            return false;
        }
        if (!string_list(P, en, p, PIPIT_TOOLSPEC_MAX_ENUM, PIPIT_TOOLSPEC_MAX_ENUM_STRING, false,
                         &k->enum_str, &k->n_enum)) {
            return false;
        }
    }
    const json_t *show = json_object_get(decl, "show");
    if (show != NULL) {
        path_key(p, sizeof(p), path, "show");
        if (json_is_false(show)) {
            k->show = NULL;
        } else {
            const char *s = get_string(P, decl, "show", path, false, 32, true);
            if (s == NULL) {
                return false;
            }
            for (const char *c = s; *c != '\0'; c++) {
                if (*c == ' ' || *c == '=' || (unsigned char)*c < 0x20) {
                    spec_fail(P, p, false,
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
        spec_fail(P, path, false, "missing \"initial\"");
        return false;
    }
    char why[320];
    if (!pipit_pack_key_check(k, init, why, sizeof(why))) {
        path_key(p, sizeof(p), path, "initial");
        spec_fail(P, p, false, "initial value: %s", why);
        return false;
    }
    k->initial = init;
    const json_t *words = json_object_get(decl, "words");
    if (words != NULL) {
        path_key(p, sizeof(p), path, "words");
        return parse_key_words(P, k, words, p);
    }
    return true;
}

/* The set-level "pipit" block at `path` ("$.pipit"). */
static bool
parse_pack(struct parser *P, struct pipit_toolset *ts, const json_t *pip, const char *path) {
    if (!json_is_object(pip)) {
        spec_fail(P, path, false, "expected an object, got %s", json_kind(pip));
        return false;
    }
    static const char *const allowed[] = {"pack", "system", "state", "router", NULL};
    if (!only_keys(P, pip, path, allowed,
                   "the pack block (expected pack, system, state, router)")) {
        return false;
    }
    struct pipit_pack *pk = calloc(1, sizeof(*pk));
    if (pk == NULL) {
        nomem(P);
        return false;
    }
    ts->pack = pk;
    char p[PATH_CAP];
    pk->name = get_string(P, pip, "pack", path, true, 32, true);
    if (pk->name == NULL) {
        return false;
    }
    if (!is_pack_name(pk->name)) {
        path_key(p, sizeof(p), path, "pack");
        spec_fail(P, p, false,
                  "pack name \"%s\" must start with a-z and use only a-z, 0-9, '_' and '-'",
                  pk->name);
        return false;
    }
    if (json_object_get(pip, "system") != NULL) {
        pk->system =
            get_string(P, pip, "system", path, false, PIPIT_TOOLSPEC_MAX_DESCRIPTION, true);
        if (pk->system == NULL) {
            return false;
        }
    }
    const json_t *state = json_object_get(pip, "state");
    if (state != NULL) {
        char sp[PATH_CAP];
        path_key(sp, sizeof(sp), path, "state");
        if (!json_is_object(state)) {
            spec_fail(P, sp, false, "expected an object of state keys, got %s", json_kind(state));
            return false;
        }
        size_t n = json_object_size(state);
        if (n == 0 || n > PIPIT_PACK_MAX_KEYS) {
            spec_fail(P, sp, false, "expected 1..%d state keys, got %zu", PIPIT_PACK_MAX_KEYS, n);
            return false;
        }
        pk->keys = calloc(n, sizeof(*pk->keys));
        if (pk->keys == NULL) {
            nomem(P);
            return false;
        }
        const char *key;
        json_t *decl;
        json_object_foreach((json_t *)state, key, decl) {
            path_key(p, sizeof(p), sp, key);
            pk->n_keys++;
            if (!parse_state_key(P, &pk->keys[pk->n_keys - 1], key, decl, p)) {
                return false;
            }
        }
    }
    const json_t *router = json_object_get(pip, "router");
    if (router != NULL) {
        char rp[PATH_CAP];
        path_key(rp, sizeof(rp), path, "router");
        if (!json_is_object(router)) {
            spec_fail(P, rp, false, "expected an object, got %s", json_kind(router));
            return false;
        }
        static const char *const rk[] = {"verbs", "nouns", NULL};
        if (!only_keys(P, router, rp, rk, "router (expected verbs, nouns)")) {
            return false;
        }
        const json_t *verbs = json_object_get(router, "verbs");
        const json_t *nouns = json_object_get(router, "nouns");
        path_key(p, sizeof(p), rp, "verbs");
        if (verbs != NULL && !string_list(P, verbs, p, PIPIT_PACK_MAX_ROUTER_WORDS, 64, true,
                                          &pk->verbs, &pk->n_verbs)) {
            return false;
        }
        path_key(p, sizeof(p), rp, "nouns");
        if (nouns != NULL && !string_list(P, nouns, p, PIPIT_PACK_MAX_ROUTER_WORDS, 64, true,
                                          &pk->nouns, &pk->n_nouns)) {
            return false;
        }
    }
    return true;
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
static bool parse_effect_key(struct parser *P,
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
            spec_fail(P, path, at_key,
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
            spec_fail(P, path, at_key,
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
                spec_fail(P, path, at_key,
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
        spec_fail(P, path, at_key, "\"%s\" is not a declared state key (see $.pipit.state)", key);
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
                     pack_type_name(k->type), k->key);
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
            if (!string_in(k->enum_str, k->n_enum, strs->enum_str[i])) {
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
static bool parse_effect_value(struct parser *P,
                               const struct pipit_tool *t,
                               const json_t *v,
                               struct pipit_effect_value *ev,
                               const char *path,
                               bool numeric,
                               bool integral) {
    memset(ev, 0, sizeof(*ev));
    char p[PATH_CAP], why[320];
    const char *arg = NULL;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = strlen(s);
        if (n >= 3 && s[0] == '{' && s[n - 1] == '}') {
            char name[PIPIT_TOOLSPEC_MAX_NAME + 1];
            pipit_format(name, sizeof(name), "%.*s", (int)(n - 2), s + 1);
            const struct pipit_schema_prop *prop = tool_param(t, name);
            if (prop == NULL) {
                spec_fail(P, path, false, "%s has no argument \"%s\"", t->name, name);
                return false;
            }
            arg = prop->name;
        }
    } else if (json_is_object(v)) {
        static const char *const allowed[] = {"arg", "map", NULL};
        if (!only_keys(P, v, path, allowed, "a mapped value (expected arg, map)")) {
            return false;
        }
        const char *name = get_string(P, v, "arg", path, true, PIPIT_TOOLSPEC_MAX_NAME, true);
        if (name == NULL) {
            return false;
        }
        const struct pipit_schema_prop *prop = tool_param(t, name);
        path_key(p, sizeof(p), path, "arg");
        if (prop == NULL) {
            spec_fail(P, p, false, "%s has no argument \"%s\"", t->name, name);
            return false;
        }
        const struct pipit_schema *s = prop->schema;
        if (s->type != PIPIT_SCHEMA_STRING || s->n_enum == 0) {
            spec_fail(P, p, false, "a map needs a string-enum argument, \"%s\" is not one", name);
            return false;
        }
        const json_t *map = json_object_get(v, "map");
        char mp[PATH_CAP];
        path_key(mp, sizeof(mp), path, "map");
        if (map == NULL) {
            spec_fail(P, path, false, "missing \"map\"");
            return false;
        }
        if (!json_is_object(map)) {
            spec_fail(P, mp, false, "expected an object of value: value, got %s", json_kind(map));
            return false;
        }
        const char *mk;
        json_t *mv;
        json_object_foreach((json_t *)map, mk, mv) {
            path_key(p, sizeof(p), mp, mk);
            if (!string_in((const char *const *)s->enum_str, s->n_enum, mk)) {
                spec_fail(P, p, true, "\"%s\" is not a value of argument \"%s\"", mk, name);
                return false;
            }
            if (numeric &&
                (!json_is_number(mv) || (integral && !is_integral(json_number_value(mv))))) {
                spec_fail(P, p, false, "expected %s, got %s", integral ? "an integer" : "a number",
                          json_is_number(mv) ? "a fraction" : json_kind(mv));
                return false;
            }
        }
        for (size_t i = 0; i < s->n_enum; i++) {
            if (json_object_get(map, s->enum_str[i]) == NULL) {
                spec_fail(P, mp, false, "the map has no entry for \"%s\"", s->enum_str[i]);
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
            spec_fail(P, path, false, "argument \"%s\" must be a number, it is %s", arg,
                      pipit_schema_type_name(s->type));
            return false;
        }
        if (integral && s->type != PIPIT_SCHEMA_INTEGER) {
            spec_fail(P, path, false,
                      "argument \"%s\" must be an integer to step an integer key, it is %s", arg,
                      pipit_schema_type_name(s->type));
            return false;
        }
        ev->arg = arg;
        return true;
    }
    if (numeric && (!json_is_number(v) || (integral && !is_integral(json_number_value(v))))) {
        spec_fail(
            P, path, false, "expected %s, \"{argument}\" or {\"arg\": ..., \"map\": ...}, got %s",
            integral ? "an integer" : "a number", json_is_number(v) ? "a fraction" : json_kind(v));
        return false;
    }
    (void)why;
    ev->constant = v;
    return true;
}

/* Check a set value against every key `ek` can name. */
static bool check_set_value(struct parser *P,
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
                    char p[PATH_CAP], mp[PATH_CAP];
                    path_key(mp, sizeof(mp), path, "map");
                    path_key(p, sizeof(p), mp, mk);
                    spec_fail(P, p, false, "cannot be written to \"%s\": %s", k->key, why);
                    return false;
                }
            }
        } else if (es->value.arg != NULL) {
            if (!arg_fits_key(tool_param(t, es->value.arg)->schema, k, why, sizeof(why))) {
                spec_fail(P, path, false, "%s", why);
                return false;
            }
        } else if (!pipit_pack_key_check(k, es->value.constant, why, sizeof(why))) {
            spec_fail(P, path, false, "cannot be written to \"%s\": %s", k->key, why);
            return false;
        }
    }
    return true;
}

static bool parse_effect(struct parser *P,
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
            spec_fail(P, path, false,
                      "expected \"read\", \"cloud\", \"none\" or {\"set\": ..., \"step\": ...}, "
                      "got \"%s\"",
                      s);
            return false;
        }
        return true;
    }
    if (!json_is_object(eff)) {
        spec_fail(P, path, false,
                  "expected \"read\", \"cloud\", \"none\" or {\"set\": ..., \"step\": ...}, got %s",
                  json_kind(eff));
        return false;
    }
    static const char *const allowed[] = {"set", "step", NULL};
    if (!only_keys(P, eff, path, allowed, "an effect (expected set, step)")) {
        return false;
    }
    const json_t *set = json_object_get(eff, "set");
    const json_t *step = json_object_get(eff, "step");
    if (set == NULL && step == NULL) {
        tp->effect = PIPIT_EFFECT_NONE; /* {}: an action without state */
        return true;
    }
    if (pk == NULL || pk->n_keys == 0) {
        spec_fail(P, path, false,
                  "an effect that changes state needs a declared state ($.pipit.state)");
        return false;
    }
    tp->effect = PIPIT_EFFECT_CHANGE;
    char p[PATH_CAP], sp[PATH_CAP];
    if (set != NULL) {
        path_key(sp, sizeof(sp), path, "set");
        size_t n = json_is_object(set) ? json_object_size(set) : 0;
        if (!json_is_object(set) || n == 0 || n > PIPIT_PACK_MAX_EFFECT_SETS) {
            spec_fail(P, sp, false, "expected an object of 1..%d state key: value, got %s",
                      PIPIT_PACK_MAX_EFFECT_SETS,
                      json_is_object(set) ? "an empty object" : json_kind(set));
            return false;
        }
        tp->set = calloc(n, sizeof(*tp->set));
        if (tp->set == NULL) {
            nomem(P);
            return false;
        }
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)set, key, v) {
            struct pipit_effect_set *es = &tp->set[tp->n_set];
            path_key(p, sizeof(p), sp, key);
            if (!parse_effect_key(P, pk, t, key, &es->key, p, true) ||
                !parse_effect_value(P, t, v, &es->value, p, false, false) ||
                !check_set_value(P, pk, t, es, p)) {
                return false;
            }
            tp->n_set++;
        }
    }
    if (step != NULL) {
        path_key(sp, sizeof(sp), path, "step");
        if (!json_is_object(step)) {
            spec_fail(P, sp, false, "expected an object {\"key\": ..., \"by\": ...}, got %s",
                      json_kind(step));
            return false;
        }
        static const char *const sk[] = {"key", "by", "sign", NULL};
        if (!only_keys(P, step, sp, sk, "a step (expected key, by, sign)")) {
            return false;
        }
        const char *key = get_string(P, step, "key", sp, true, PIPIT_TOOLSPEC_MAX_NAME * 2, true);
        if (key == NULL) {
            return false;
        }
        path_key(p, sizeof(p), sp, "key");
        if (!parse_effect_key(P, pk, t, key, &tp->step.key, p, false)) {
            return false;
        }
        bool integral = false;
        for (size_t i = 0; i < effect_key_count(t, &tp->step.key); i++) {
            const struct pipit_pack_key *k = effect_key_at(pk, t, &tp->step.key, i);
            if (k->type != PIPIT_SCHEMA_INTEGER && k->type != PIPIT_SCHEMA_NUMBER) {
                spec_fail(P, p, false, "a step needs an integer or number key, \"%s\" is %s",
                          k->key, pack_type_name(k->type));
                return false;
            }
            integral = integral || k->type == PIPIT_SCHEMA_INTEGER;
        }
        for (size_t i = 0; i < tp->n_set; i++) {
            for (size_t a = 0; a < effect_key_count(t, &tp->set[i].key); a++) {
                for (size_t b = 0; b < effect_key_count(t, &tp->step.key); b++) {
                    if (effect_key_at(pk, t, &tp->set[i].key, a) ==
                        effect_key_at(pk, t, &tp->step.key, b)) {
                        spec_fail(P, p, false, "\"%s\" is both set and stepped by this effect",
                                  effect_key_at(pk, t, &tp->step.key, b)->key);
                        return false;
                    }
                }
            }
        }
        const json_t *by = json_object_get(step, "by");
        if (by == NULL) {
            spec_fail(P, sp, false, "missing \"by\"");
            return false;
        }
        path_key(p, sizeof(p), sp, "by");
        if (!parse_effect_value(P, t, by, &tp->step.by, p, true, integral)) {
            return false;
        }
        const json_t *sign = json_object_get(step, "sign");
        if (sign != NULL) {
            path_key(p, sizeof(p), sp, "sign");
            if (!parse_effect_value(P, t, sign, &tp->step.sign, p, true, integral)) {
                return false;
            }
        }
        tp->has_step = true;
    }
    return true;
}

static bool parse_examples(struct parser *P,
                           const struct pipit_tool *t,
                           struct pipit_tool_pack *tp,
                           const json_t *ex,
                           const char *path) {
    size_t n = json_is_array(ex) ? json_array_size(ex) : 0;
    if (!json_is_array(ex) || n == 0 || n > PIPIT_PACK_MAX_EXAMPLES) {
        spec_fail(P, path, false, "expected an array of 1..%d examples, got %s",
                  PIPIT_PACK_MAX_EXAMPLES, json_is_array(ex) ? "an empty array" : json_kind(ex));
        return false;
    }
    tp->examples = calloc(n, sizeof(*tp->examples));
    if (tp->examples == NULL) {
        nomem(P);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(ex, i);
        char p[PATH_CAP], ap[PATH_CAP];
        path_index(p, sizeof(p), path, i);
        if (!json_is_object(e)) {
            spec_fail(P, p, false, "expected {\"say\": ..., \"args\": {...}}, got %s",
                      json_kind(e));
            return false;
        }
        static const char *const allowed[] = {"say", "args", NULL};
        if (!only_keys(P, e, p, allowed, "an example (expected say, args)")) {
            return false;
        }
        const char *say = get_string(P, e, "say", p, true, PIPIT_TOOLSPEC_MAX_TEMPLATE, true);
        if (say == NULL) {
            return false;
        }
        const json_t *args = json_object_get(e, "args");
        path_key(ap, sizeof(ap), p, "args");
        if (args == NULL) {
            spec_fail(P, p, false, "missing \"args\" ({} for a tool without arguments)");
            return false;
        }
        struct pipit_arg_problem prob;
        size_t n_prob = 0;
        if (!json_is_object(args)) {
            spec_fail(P, ap, false, "expected an object of arguments, got %s", json_kind(args));
            return false;
        }
        if (pipit_tool_check_args(t, args, &prob, 1, &n_prob) != PIPIT_OK) {
            spec_fail(P, ap, false, "the example does not fit %s's parameters: %s: %s", t->name,
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
static bool collect_changes(struct parser *P,
                            const struct pipit_pack *pk,
                            const struct pipit_tool *t,
                            struct pipit_tool_pack *tp) {
    if (tp->effect != PIPIT_EFFECT_CHANGE) {
        return true;
    }
    tp->changes = calloc(pk->n_keys, sizeof(*tp->changes));
    if (tp->changes == NULL) {
        nomem(P);
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
static bool parse_tool_packs(struct parser *P,
                             struct pipit_toolset *ts,
                             const json_t *list,
                             const char *tools_path) {
    ts->tool_pk = calloc(ts->n_tools, sizeof(*ts->tool_pk));
    if (ts->tool_pk == NULL) {
        nomem(P);
        return false;
    }
    const struct pipit_pack *pk = ts->pack;
    for (size_t i = 0; i < ts->n_tools; i++) {
        struct pipit_tool *t = &ts->tools[i];
        struct pipit_tool_pack *tp = &ts->tool_pk[i];
        const json_t *pip = json_object_get(json_array_get(list, i), "pipit");
        char tpath[PATH_CAP], pp[PATH_CAP], p[PATH_CAP];
        path_index(tpath, sizeof(tpath), tools_path, i);
        path_key(pp, sizeof(pp), tpath, "pipit");
        const json_t *eff = json_object_get(pip, "effect");
        const json_t *ex = json_object_get(pip, "examples");
        if (eff != NULL) {
            path_key(p, sizeof(p), pp, "effect");
            if (!parse_effect(P, pk, t, tp, eff, p)) {
                return false;
            }
        }
        if (ex != NULL) {
            path_key(p, sizeof(p), pp, "examples");
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
                nomem(P);
                return false;
            }
            for (size_t k = 0; k < tp->n_changes; k++) {
                t->undo_keys[k] = dup_str(tp->changes[k]);
                if (t->undo_keys[k] == NULL) {
                    nomem(P);
                    return false;
                }
                t->n_undo_keys = k + 1;
            }
            t->undo = PIPIT_UNDO_KEYS;
        }
        if (undo != NULL && t->undo == PIPIT_UNDO_KEYS && pk != NULL && pk->n_keys > 0) {
            for (size_t k = 0; k < t->n_undo_keys; k++) {
                if (pipit_pack_find_key(pk, t->undo_keys[k]) == NULL) {
                    char up[PATH_CAP], kp[PATH_CAP];
                    path_key(up, sizeof(up), pp, "undo");
                    path_key(kp, sizeof(kp), up, "keys");
                    path_index(p, sizeof(p), kp, k);
                    spec_fail(P, p, false,
                              "undo key \"%s\" is not a declared state key (see $.pipit.state)",
                              t->undo_keys[k]);
                    return false;
                }
            }
        }
    }
    return true;
}

const struct pipit_pack *pipit_toolset_pack(const struct pipit_toolset *ts) {
    return ts == NULL ? NULL : ts->pack;
}

const struct pipit_tool_pack *pipit_toolset_tool_pack(const struct pipit_toolset *ts,
                                                      size_t index) {
    if (ts == NULL || ts->tool_pk == NULL || index >= ts->n_tools) {
        return NULL;
    }
    return &ts->tool_pk[index];
}

bool pipit_toolset_is_cloud(const struct pipit_toolset *ts, size_t index) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, index);
    if (t == NULL) {
        return false;
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, index);
    return strcmp(t->name, "process_with_cloud_llm") == 0 ||
           (tp != NULL && tp->effect == PIPIT_EFFECT_CLOUD);
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
        tool_pack_clear(&ts->tool_pk[i]);
    }
    free(ts->tool_pk);
    pack_free(ts->pack);
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
    struct parser P = {.name = name, .text = text, .len = len, .err = err, .status = PIPIT_OK};
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
    if (ts == NULL || (ts->name = dup_str(name)) == NULL) {
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
            spec_fail(&P, "$", false,
                      "expected an array of tools or {\"tools\": [...], \"pipit\": {...}}, "
                      "got object");
        } else if (!only_keys(&P, root, "$", allowed, "a tool set (expected tools, pipit)")) {
            list = NULL;
        } else if (list == NULL) {
            spec_fail(&P, "$", false, "missing \"tools\"");
        } else if (json_object_get(root, "pipit") != NULL) {
            parse_pack(&P, ts, json_object_get(root, "pipit"), "$.pipit");
        }
    }
    if (P.status != PIPIT_OK) {
        /* reported */
    } else if (!json_is_array(list)) {
        spec_fail(&P, tools_path, false, "expected an array of tools, got %s", json_kind(list));
    } else if (json_array_size(list) == 0 || json_array_size(list) > PIPIT_TOOLSPEC_MAX_TOOLS) {
        spec_fail(&P, tools_path, false, "expected 1..%d tools, got %zu", PIPIT_TOOLSPEC_MAX_TOOLS,
                  json_array_size(list));
    } else {
        size_t n = json_array_size(list);
        ts->tools = calloc(n, sizeof(*ts->tools));
        if (ts->tools == NULL) {
            nomem(&P);
        }
        for (size_t i = 0; i < n && P.status == PIPIT_OK; i++) {
            char path[PATH_CAP];
            path_index(path, sizeof(path), tools_path, i);
            ts->n_tools = i + 1;
            if (!parse_tool(&P, &ts->tools[i], json_array_get(list, i), path)) {
                break;
            }
            for (size_t k = 0; k < i; k++) {
                if (strcmp(ts->tools[k].name, ts->tools[i].name) == 0) {
                    char np[PATH_CAP];
                    pipit_format(np, sizeof(np), "%s.function.name", path);
                    spec_fail(&P, np, false,
                              "duplicate tool name \"%s\" (first defined at %s[%zu])",
                              ts->tools[i].name, tools_path, k);
                    break;
                }
            }
        }
        if (P.status == PIPIT_OK) {
            parse_tool_packs(&P, ts, list, tools_path);
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

const struct pipit_tool *pipit_toolset_tool(const struct pipit_toolset *ts, size_t index) {
    if (ts == NULL || index >= ts->n_tools) {
        return NULL;
    }
    return &ts->tools[index];
}

size_t pipit_toolset_n_tools(const struct pipit_toolset *ts) {
    return ts == NULL ? 0 : ts->n_tools;
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

/* ============================================================================
 * serialization */

static void compact_type(struct strbuf *b, const struct pipit_schema *s);

/* A property name as the compact form and the pipit call syntax write it: bare when an
 * identifier, else as a JSON string. */
static void compact_name(struct strbuf *b, const char *name) {
    if (is_identifier(name)) {
        strbuf_str(b, name);
        return;
    }
    json_t *j = json_string(name);
    char *q = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    if (q == NULL) {
        b->failed = true;
        return;
    }
    strbuf_str(b, q);
    free(q);
}

static void compact_props(struct strbuf *b, const struct pipit_schema *s) {
    for (size_t i = 0; i < s->n_props; i++) {
        if (i > 0) {
            strbuf_str(b, ", ");
        }
        compact_name(b, s->props[i].name);
        strbuf_str(b, s->props[i].required ? ": " : "?: ");
        compact_type(b, s->props[i].schema);
        const json_t *d = s->props[i].schema->default_value;
        if (!s->props[i].required && d != NULL && !json_is_object(d) && !json_is_array(d)) {
            char *q = json_dumps(d, JSON_ENCODE_ANY | JSON_COMPACT);
            if (q != NULL) {
                strbuf_str(b, " = ");
                strbuf_str(b, q);
                free(q);
            }
        }
    }
    if (s->additional != NULL) {
        strbuf_str(b, s->n_props > 0 ? ", ...: " : "...: ");
        compact_type(b, s->additional);
    }
}

static void compact_type(struct strbuf *b, const struct pipit_schema *s) {
    char num[64], num2[64];
    if (s->n_enum > 0) {
        for (size_t i = 0; i < s->n_enum; i++) {
            if (i > 0) {
                strbuf_str(b, "|");
            }
            if (json_is_number(s->enum_json[i])) {
                format_json_number(num, sizeof(num), s->enum_json[i]);
                strbuf_str(b, num);
            } else {
                char *q = json_dumps(s->enum_json[i], JSON_ENCODE_ANY | JSON_COMPACT);
                if (q == NULL) {
                    b->failed = true;
                    return;
                }
                strbuf_str(b, q);
                free(q);
            }
        }
        return;
    }
    switch (s->type) {
        case PIPIT_SCHEMA_OBJECT:
            strbuf_str(b, "{");
            compact_props(b, s);
            strbuf_str(b, "}");
            break;
        case PIPIT_SCHEMA_STRING:
            strbuf_str(b, "string");
            if (s->format != PIPIT_FORMAT_NONE) {
                strbuf_str(b, " ");
                strbuf_str(b, s->format_name);
            }
            if (s->min_length > 0 && s->max_length >= 0) {
                pipit_format(num, sizeof(num), " %lld..%lld chars", (long long)s->min_length,
                             (long long)s->max_length);
                strbuf_str(b, num);
            } else if (s->min_length > 0) {
                pipit_format(num, sizeof(num), ">=%lld", (long long)s->min_length);
                strbuf_str(b, num);
            } else if (s->max_length >= 0) {
                pipit_format(num, sizeof(num), "<=%lld", (long long)s->max_length);
                strbuf_str(b, num);
            }
            if (s->pattern != NULL) {
                strbuf_str(b, " /");
                strbuf_str(b, s->pattern);
                strbuf_str(b, "/");
            }
            break;
        case PIPIT_SCHEMA_NUMBER:
        case PIPIT_SCHEMA_INTEGER:
            strbuf_str(b, pipit_schema_type_name(s->type));
            if (s->has_min && s->has_max) {
                format_number(num, sizeof(num), s->min);
                format_number(num2, sizeof(num2), s->max);
                strbuf_str(b, " ");
                strbuf_str(b, num);
                strbuf_str(b, "..");
                strbuf_str(b, num2);
            } else if (s->has_min) {
                format_number(num, sizeof(num), s->min);
                strbuf_str(b, " >=");
                strbuf_str(b, num);
            } else if (s->has_max) {
                format_number(num, sizeof(num), s->max);
                strbuf_str(b, " <=");
                strbuf_str(b, num);
            }
            break;
        case PIPIT_SCHEMA_BOOLEAN:
            strbuf_str(b, "boolean");
            break;
        case PIPIT_SCHEMA_NULL:
            strbuf_str(b, "null");
            break;
        case PIPIT_SCHEMA_ANY:
            strbuf_str(b, "any");
            break;
        case PIPIT_SCHEMA_UNION:
            for (size_t i = 0; i < s->n_alts; i++) {
                if (i > 0) {
                    strbuf_str(b, "|");
                }
                compact_type(b, s->alts[i]);
            }
            break;
        case PIPIT_SCHEMA_ARRAY: {
            bool wrap = s->items->type == PIPIT_SCHEMA_UNION;
            if (wrap) {
                strbuf_str(b, "(");
            }
            compact_type(b, s->items);
            if (wrap) {
                strbuf_str(b, ")");
            }
            if (s->min_items > 0 && s->max_items >= 0) {
                pipit_format(num, sizeof(num), "[%lld..%lld]", (long long)s->min_items,
                             (long long)s->max_items);
            } else if (s->min_items > 0) {
                pipit_format(num, sizeof(num), "[>=%lld]", (long long)s->min_items);
            } else if (s->max_items >= 0) {
                pipit_format(num, sizeof(num), "[<=%lld]", (long long)s->max_items);
            } else {
                pipit_format(num, sizeof(num), "[]");
            }
            strbuf_str(b, num);
            if (s->unique_items) {
                strbuf_str(b, " unique");
            }
            break;
        }
    }
}

static void tool_line(struct strbuf *b, const struct pipit_tool *t, enum pipit_toolspec_format f) {
    strbuf_str(b, t->name);
    if (f == PIPIT_TOOLSPEC_COMPACT) {
        strbuf_str(b, "(");
        compact_props(b, t->params);
        strbuf_str(b, ")");
    }
    strbuf_str(b, " - ");
    strbuf_line(b, t->description);
}

/* {"type":"function","function":<the spec's function object>} (new reference). */
static json_t *tool_json(const struct pipit_tool *t) {
    return json_pack("{s:s,s:O}", "type", "function", "function", t->function);
}

static size_t json_flags(enum pipit_toolspec_format f) {
    return (f == PIPIT_TOOLSPEC_OPENAPI ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(15);
}

static enum pipit_status
check_format(const struct pipit_toolset *ts, enum pipit_toolspec_format format, char **out) {
    if (out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    if (ts == NULL || (int)format < 0 || (int)format >= PIPIT_TOOLSPEC_N_FORMATS) {
        return PIPIT_ERR_INVALID_ARG;
    }
    return PIPIT_OK;
}

enum pipit_status pipit_toolset_serialize_tool(const struct pipit_toolset *ts,
                                               size_t index,
                                               enum pipit_toolspec_format format,
                                               char **out) {
    enum pipit_status st = check_format(ts, format, out);
    if (st != PIPIT_OK) {
        return st;
    }
    if (index >= ts->n_tools) {
        return PIPIT_ERR_INVALID_ARG;
    }
    const struct pipit_tool *t = &ts->tools[index];
    if (format == PIPIT_TOOLSPEC_OPENAPI || format == PIPIT_TOOLSPEC_MINIFIED) {
        json_t *j = tool_json(t);
        *out = j != NULL ? json_dumps(j, json_flags(format)) : NULL;
        json_decref(j);
        return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
    }
    struct strbuf b = {0};
    tool_line(&b, t, format);
    *out = strbuf_take(&b);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

enum pipit_status pipit_toolset_serialize(const struct pipit_toolset *ts,
                                          enum pipit_toolspec_format format,
                                          char **out) {
    enum pipit_status st = check_format(ts, format, out);
    if (st != PIPIT_OK) {
        return st;
    }
    if (format == PIPIT_TOOLSPEC_OPENAPI || format == PIPIT_TOOLSPEC_MINIFIED) {
        json_t *arr = json_array();
        bool ok = arr != NULL;
        for (size_t i = 0; i < ts->n_tools && ok; i++) {
            ok = json_array_append_new(arr, tool_json(&ts->tools[i])) == 0;
        }
        *out = ok ? json_dumps(arr, json_flags(format)) : NULL;
        json_decref(arr);
        return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
    }
    struct strbuf b = {0};
    for (size_t i = 0; i < ts->n_tools; i++) {
        tool_line(&b, &ts->tools[i], format);
        strbuf_str(&b, "\n");
    }
    *out = strbuf_take(&b);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

/* ============================================================================
 * token counts */

static enum pipit_status count_text(const struct pipit_model *model, const char *text, int32_t *n) {
    int32_t need = pipit_tokenize(model, text, false, false, NULL, 0);
    if (need == INT32_MIN) {
        return PIPIT_ERR_TOKENIZE;
    }
    *n = need < 0 ? -need : need;
    return PIPIT_OK;
}

enum pipit_status pipit_toolset_count_tokens(const struct pipit_toolset *ts,
                                             const struct pipit_model *model,
                                             struct pipit_token_counts *per_tool,
                                             struct pipit_token_counts *total) {
    if (ts == NULL || model == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    for (int f = 0; f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
        char *text = NULL;
        enum pipit_status st;
        if (total != NULL) {
            st = pipit_toolset_serialize(ts, (enum pipit_toolspec_format)f, &text);
            if (st == PIPIT_OK) {
                st = count_text(model, text, &total->by_format[f]);
            }
            free(text);
            if (st != PIPIT_OK) {
                return st;
            }
        }
        for (size_t i = 0; per_tool != NULL && i < ts->n_tools; i++) {
            st = pipit_toolset_serialize_tool(ts, i, (enum pipit_toolspec_format)f, &text);
            if (st == PIPIT_OK) {
                st = count_text(model, text, &per_tool[i].by_format[f]);
            }
            free(text);
            if (st != PIPIT_OK) {
                return st;
            }
        }
    }
    return PIPIT_OK;
}

/* ============================================================================
 * argument validation */

static void problem(struct problems *pr, const char *path, const char *fmt, ...) PIPIT_PRINTF(3, 4);

static void problem(struct problems *pr, const char *path, const char *fmt, ...) {
    pr->found++;
    if (pr->list == NULL || pr->n >= pr->max) {
        return;
    }
    struct pipit_arg_problem *p = &pr->list[pr->n++];
    pipit_format(p->path, sizeof(p->path), "%s", path);
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(p->message, sizeof(p->message), fmt, ap);
    va_end(ap);
}

static void enum_list(const struct pipit_schema *s, char *buf, size_t size) {
    struct strbuf b = {0};
    compact_type(&b, s);
    pipit_format(buf, size, "%s", b.data != NULL ? b.data : "");
    free(b.data);
}

/* ---------------------------------------------------------------------------- formats */

static bool digits(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
    }
    return true;
}

static int num2(const char *s) {
    return (s[0] - '0') * 10 + (s[1] - '0');
}

/* YYYY-MM-DD, a real calendar date. Returns the bytes read (10) or 0. */
static size_t check_date(const char *s) {
    if (strlen(s) < 10 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2)) {
        return 0;
    }
    int y = num2(s) * 100 + num2(s + 2), m = num2(s + 5), d = num2(s + 8);
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) {
        return 0;
    }
    int max = days[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
    return d <= max ? 10 : 0;
}

/* HH:MM:SS[.frac](Z|+HH:MM|-HH:MM) (RFC 3339 full-time). Returns the bytes read or 0. */
static size_t check_time(const char *s) {
    if (strlen(s) < 9 || !digits(s, 2) || s[2] != ':' || !digits(s + 3, 2) || s[5] != ':' ||
        !digits(s + 6, 2) || num2(s) > 23 || num2(s + 3) > 59 || num2(s + 6) > 60) {
        return 0;
    }
    size_t i = 8;
    if (s[i] == '.') {
        size_t j = i + 1;
        while (s[j] >= '0' && s[j] <= '9') {
            j++;
        }
        if (j == i + 1) {
            return 0;
        }
        i = j;
    }
    if (s[i] == 'Z' || s[i] == 'z') {
        return i + 1;
    }
    if ((s[i] == '+' || s[i] == '-') && strlen(s + i) >= 6 && digits(s + i + 1, 2) &&
        s[i + 3] == ':' && digits(s + i + 4, 2) && num2(s + i + 1) <= 23 && num2(s + i + 4) <= 59) {
        return i + 6;
    }
    return 0;
}

static bool is_alnum_ascii(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool pipit_format_check(enum pipit_schema_format f, const char *s) {
    switch (f) {
        case PIPIT_FORMAT_NONE:
        case PIPIT_FORMAT_OTHER:
        case PIPIT_FORMAT_INT32:
            return true;
        case PIPIT_FORMAT_DATE:
            return check_date(s) == 10 && s[10] == '\0';
        case PIPIT_FORMAT_TIME: {
            size_t n = check_time(s);
            return n > 0 && s[n] == '\0';
        }
        case PIPIT_FORMAT_DATE_TIME: {
            if (check_date(s) != 10 || (s[10] != 'T' && s[10] != 't')) {
                return false;
            }
            size_t n = check_time(s + 11);
            return n > 0 && s[11 + n] == '\0';
        }
        case PIPIT_FORMAT_EMAIL: {
            /* local@domain: a local part of printable ASCII without spaces, '@', '"', '\\';
             * a domain of dot-separated labels of letters, digits and '-' */
            const char *at = strchr(s, '@');
            if (at == NULL || at == s || at - s > 64) {
                return false;
            }
            for (const char *p = s; p < at; p++) {
                if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\' || *p == '(' || *p == ')' ||
                    *p == ',' || *p == ':' || *p == ';' || *p == '<' || *p == '>' || *p == '[' ||
                    *p == ']') {
                    return false;
                }
            }
            size_t label = 0;
            for (const char *p = at + 1;; p++) {
                if (*p == '.' || *p == '\0') {
                    if (label == 0 || label > 63) {
                        return false;
                    }
                    if (*p == '\0') {
                        return p - at - 1 <= 253;
                    }
                    label = 0;
                } else if (is_alnum_ascii(*p) || *p == '-') {
                    label++;
                } else {
                    return false;
                }
            }
        }
        case PIPIT_FORMAT_URI: {
            /* scheme ":" rest: scheme = letter *(letter / digit / "+" / "-" / "."), rest
             * non-empty printable ASCII without spaces, quotes, '\\', '<', '>' */
            if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) {
                return false;
            }
            const char *p = s + 1;
            while (is_alnum_ascii(*p) || *p == '+' || *p == '-' || *p == '.') {
                p++;
            }
            if (*p != ':' || p[1] == '\0') {
                return false;
            }
            for (p++; *p != '\0'; p++) {
                if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\' || *p == '<' || *p == '>' ||
                    *p == '{' || *p == '}' || *p == '|' || *p == '^' || *p == '`') {
                    return false;
                }
            }
            return true;
        }
        case PIPIT_FORMAT_UUID: {
            if (strlen(s) != 36) {
                return false;
            }
            for (size_t i = 0; i < 36; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;
                if (dash ? s[i] != '-' : hexval(s[i]) < 0) {
                    return false;
                }
            }
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------------------- values */

static void check_node(const struct pipit_schema *s,
                       const json_t *v,
                       const char *path,
                       struct problems *pr,
                       bool skip_enum);

static void
check_object(const struct pipit_schema *s, const json_t *v, const char *path, struct problems *pr) {
    size_t nkeys = json_object_size(v);
    if (s->max_props >= 0 && (int64_t)nkeys > s->max_props) {
        problem(pr, path, "has %zu members, above the maximum %lld", nkeys,
                (long long)s->max_props);
    } else if ((int64_t)nkeys < s->min_props) {
        problem(pr, path, "has %zu members, below the minimum %lld", nkeys,
                (long long)s->min_props);
    }
    const char *key;
    json_t *child;
    json_object_foreach((json_t *)v, key, child) {
        bool known = false;
        for (size_t i = 0; i < s->n_props && !known; i++) {
            known = strcmp(s->props[i].name, key) == 0;
        }
        if (!known) {
            char p[PATH_CAP];
            path_key(p, sizeof(p), path, key);
            if (s->additional != NULL) {
                check_node(s->additional, child, p, pr, false);
            } else {
                problem(pr, p, "unknown argument \"%s\"", key);
            }
        }
    }
    for (size_t i = 0; i < s->n_props; i++) {
        char p[PATH_CAP];
        path_key(p, sizeof(p), path, s->props[i].name);
        const json_t *c = json_object_get(v, s->props[i].name);
        if (c == NULL) {
            if (s->props[i].required) {
                problem(pr, p, "required argument is missing");
            }
            continue;
        }
        check_node(s->props[i].schema, c, p, pr, false);
    }
}

static void
check_string(const struct pipit_schema *s, const json_t *v, const char *path, struct problems *pr) {
    const char *text = json_string_value(v);
    size_t len = utf8_count(text, json_string_length(v));
    if (s->max_length >= 0 && (int64_t)len > s->max_length) {
        problem(pr, path, "is %zu characters long, above the maximum %lld", len,
                (long long)s->max_length);
    } else if ((int64_t)len < s->min_length) {
        problem(pr, path, "is %zu characters long, below the minimum %lld", len,
                (long long)s->min_length);
    }
    if (s->format != PIPIT_FORMAT_NONE && !pipit_format_check(s->format, text)) {
        char *q = json_dumps(v, JSON_ENCODE_ANY);
        problem(pr, path, "%s is not a valid %s", q != NULL ? q : "the value", s->format_name);
        free(q);
    }
    if (s->pattern != NULL && !pattern_match(s->pattern, text, json_string_length(v))) {
        char *q = json_dumps(v, JSON_ENCODE_ANY);
        problem(pr, path, "%s does not match the pattern %s", q != NULL ? q : "the value",
                s->pattern);
        free(q);
    }
}

static void
check_number(const struct pipit_schema *s, const json_t *v, const char *path, struct problems *pr) {
    char num[64], lim[64];
    double d = json_number_value(v);
    format_json_number(num, sizeof(num), v);
    if (s->type == PIPIT_SCHEMA_INTEGER && !is_integral(d)) {
        problem(pr, path, "%s is not an integer", num);
        return;
    }
    if (s->has_min && d < s->min) {
        format_number(lim, sizeof(lim), s->min);
        problem(pr, path, "%s is below the minimum %s", num, lim);
    } else if (s->has_max && d > s->max) {
        format_number(lim, sizeof(lim), s->max);
        problem(pr, path, "%s is above the maximum %s", num, lim);
    } else if (s->has_xmin && d <= s->xmin) {
        format_number(lim, sizeof(lim), s->xmin);
        problem(pr, path, "%s is not above %s", num, lim);
    } else if (s->has_xmax && d >= s->xmax) {
        format_number(lim, sizeof(lim), s->xmax);
        problem(pr, path, "%s is not below %s", num, lim);
    } else if (s->format == PIPIT_FORMAT_INT32 && (d < -2147483648.0 || d > 2147483647.0)) {
        problem(pr, path, "%s is outside the int32 range", num);
    } else if (s->multiple_of > 0) {
        double q = d / s->multiple_of;
        if (!isfinite(q) || fabs(q - nearbyint(q)) > 1e-9 * fmax(1.0, fabs(q))) {
            format_number(lim, sizeof(lim), s->multiple_of);
            problem(pr, path, "%s is not a multiple of %s", num, lim);
        }
    }
}

static void
check_array(const struct pipit_schema *s, const json_t *v, const char *path, struct problems *pr) {
    size_t n = json_array_size(v);
    if (s->max_items >= 0 && (int64_t)n > s->max_items) {
        problem(pr, path, "has %zu items, above the maximum %lld", n, (long long)s->max_items);
    } else if ((int64_t)n < s->min_items) {
        problem(pr, path, "has %zu items, below the minimum %lld", n, (long long)s->min_items);
    }
    for (size_t i = 0; s->unique_items && i < n; i++) {
        for (size_t k = 0; k < i; k++) {
            if (json_same(json_array_get(v, i), json_array_get(v, k))) {
                problem(pr, path, "items %zu and %zu are equal (the items must be unique)", k, i);
                i = n;
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        char p[PATH_CAP];
        path_index(p, sizeof(p), path, i);
        check_node(s->items, json_array_get(v, i), p, pr, false);
    }
}

static void
check_union(const struct pipit_schema *s, const json_t *v, const char *path, struct problems *pr) {
    size_t matches = 0, typed = 0, last_typed = 0;
    for (size_t i = 0; i < s->n_alts; i++) {
        struct problems sub = {NULL, 0, 0, 0};
        check_node(s->alts[i], v, path, &sub, false);
        matches += sub.found == 0;
        if (s->alts[i]->type == PIPIT_SCHEMA_UNION || s->alts[i]->type == PIPIT_SCHEMA_ANY ||
            value_has_type(s->alts[i]->type, v) ||
            (s->alts[i]->type == PIPIT_SCHEMA_INTEGER && json_is_number(v))) {
            typed++;
            last_typed = i;
        }
    }
    if (matches == 1 || (matches > 1 && !s->one_of)) {
        return;
    }
    if (matches > 1) {
        problem(pr, path, "matches %zu of the oneOf schemas, exactly one must match", matches);
        return;
    }
    if (typed == 1) {
        check_node(s->alts[last_typed], v, path, pr, false); /* its own problems say why */
        return;
    }
    char list[192];
    enum_list(s, list, sizeof(list));
    char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    problem(pr, path, "%.48s%s matches none of %s", q != NULL ? q : "the value",
            q != NULL && strlen(q) > 48 ? "..." : "", list);
    free(q);
}

static bool enum_has_value(const struct pipit_schema *s, const json_t *v) {
    for (size_t i = 0; i < s->n_enum; i++) {
        if (json_same(s->enum_json[i], v)) {
            return true;
        }
    }
    return false;
}

static void check_node(const struct pipit_schema *s,
                       const json_t *v,
                       const char *path,
                       struct problems *pr,
                       bool skip_enum) {
    if (s->type == PIPIT_SCHEMA_UNION) {
        check_union(s, v, path, pr);
        return;
    }
    if (s->type != PIPIT_SCHEMA_ANY && !value_has_type(s->type, v)) {
        if (s->type == PIPIT_SCHEMA_INTEGER && json_is_number(v)) {
            char num[64];
            format_json_number(num, sizeof(num), v);
            problem(pr, path, "%s is not an integer", num);
        } else {
            problem(pr, path, "expected %s, got %s",
                    s->type == PIPIT_SCHEMA_INTEGER  ? "an integer"
                    : s->type == PIPIT_SCHEMA_NUMBER ? "a number"
                    : s->type == PIPIT_SCHEMA_OBJECT ? "an object"
                    : s->type == PIPIT_SCHEMA_STRING ? "a string"
                    : s->type == PIPIT_SCHEMA_ARRAY  ? "an array"
                    : s->type == PIPIT_SCHEMA_NULL   ? "null"
                                                     : "a boolean",
                    json_kind(v));
        }
        return;
    }
    if (!skip_enum && s->n_enum > 0 && !enum_has_value(s, v)) {
        char list[192];
        enum_list(s, list, sizeof(list));
        char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        char num[64];
        if (json_is_number(v)) {
            format_json_number(num, sizeof(num), v);
        }
        problem(pr, path, "%s is not one of %s",
                json_is_number(v) ? num
                : q != NULL       ? q
                                  : "the value",
                list);
        free(q);
        return;
    }
    switch (s->type) {
        case PIPIT_SCHEMA_OBJECT:
            check_object(s, v, path, pr);
            return;
        case PIPIT_SCHEMA_STRING:
            check_string(s, v, path, pr);
            return;
        case PIPIT_SCHEMA_NUMBER:
        case PIPIT_SCHEMA_INTEGER:
            check_number(s, v, path, pr);
            return;
        case PIPIT_SCHEMA_ARRAY:
            check_array(s, v, path, pr);
            return;
        case PIPIT_SCHEMA_BOOLEAN:
        case PIPIT_SCHEMA_NULL:
        case PIPIT_SCHEMA_ANY:
        case PIPIT_SCHEMA_UNION:
            return;
    }
}

enum pipit_status pipit_schema_check(const struct pipit_schema *s,
                                     const json_t *value,
                                     const char *path,
                                     struct pipit_arg_problem *problems,
                                     size_t max_problems,
                                     size_t *n_problems) {
    struct problems pr = {problems, max_problems, 0, 0};
    if (n_problems != NULL) {
        *n_problems = 0;
    }
    if (s == NULL || value == NULL || path == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    check_node(s, value, path, &pr, false);
    if (n_problems != NULL) {
        *n_problems = pr.n;
    }
    return pr.found == 0 ? PIPIT_OK : PIPIT_ERR_INVALID_ARGS;
}

enum pipit_status pipit_tool_check_args(const struct pipit_tool *tool,
                                        const json_t *args,
                                        struct pipit_arg_problem *problems,
                                        size_t max_problems,
                                        size_t *n_problems) {
    if (n_problems != NULL) {
        *n_problems = 0;
    }
    if (tool == NULL || args == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    return pipit_schema_check(tool->params, args, "args", problems, max_problems, n_problems);
}

json_t *pipit_tool_args_with_defaults(const struct pipit_tool *tool, const json_t *args) {
    if (tool == NULL || !json_is_object(args)) {
        return NULL;
    }
    json_t *out = NULL;
    for (size_t i = 0; i < tool->params->n_props; i++) {
        const struct pipit_schema_prop *p = &tool->params->props[i];
        if (p->schema->default_value == NULL || json_object_get(args, p->name) != NULL) {
            continue;
        }
        if (out == NULL && (out = json_copy((json_t *)args)) == NULL) {
            return NULL;
        }
        json_object_set(out, p->name, (json_t *)p->schema->default_value);
    }
    return out != NULL ? out : json_incref((json_t *)args);
}

enum pipit_status pipit_toolset_validate_args(const struct pipit_toolset *ts,
                                              const char *tool_name,
                                              const char *args_json,
                                              size_t len,
                                              struct pipit_arg_problem *problems,
                                              size_t max_problems,
                                              size_t *n_problems) {
    if (n_problems != NULL) {
        *n_problems = 0;
    }
    if (ts == NULL || tool_name == NULL || args_json == NULL ||
        (problems == NULL && max_problems > 0)) {
        return PIPIT_ERR_INVALID_ARG;
    }
    int32_t idx = pipit_toolset_find(ts, tool_name);
    if (idx < 0) {
        return PIPIT_ERR_UNKNOWN_TOOL;
    }
    json_error_t jerr;
    json_t *args = json_loadb(args_json, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (args == NULL) {
        struct problems pr = {problems, max_problems, 0, 0};
        problem(&pr, "args", "invalid JSON at column %d: %s", jerr.column, jerr.text);
        if (n_problems != NULL) {
            *n_problems = pr.n;
        }
        return PIPIT_ERR_JSON;
    }
    enum pipit_status st =
        pipit_tool_check_args(&ts->tools[idx], args, problems, max_problems, n_problems);
    json_decref(args);
    return st;
}
