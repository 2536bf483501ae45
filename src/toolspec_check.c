/*
 * toolspec_check.c - validation of arguments against a tool's compiled schema: types, enums,
 * ranges, lengths, patterns, formats, unions. Problems carry the JSON path ("args.level") and
 * a message; validation never stops at the first problem unless the caller's list is full.
 */
#include "toolspec_check.h"

#include "pattern.h"
#include "status.h"
#include "strbuf.h"
#include "toolspec_json.h"
#include "toolspec_serialize.h"
#include "utf8.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct problems {
    struct pipit_arg_problem *list;
    size_t max, n, found;
};

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
    ts_compact_type(&b, s);
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
                if (dash ? s[i] != '-' : ts_hexval(s[i]) < 0) {
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
            char p[TS_PATH_CAP];
            ts_path_key(p, sizeof(p), path, key);
            if (s->additional != NULL) {
                check_node(s->additional, child, p, pr, false);
            } else {
                problem(pr, p, "unknown argument \"%s\"", key);
            }
        }
    }
    for (size_t i = 0; i < s->n_props; i++) {
        char p[TS_PATH_CAP];
        ts_path_key(p, sizeof(p), path, s->props[i].name);
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
    ts_format_json_number(num, sizeof(num), v);
    if (s->type == PIPIT_SCHEMA_INTEGER && !ts_is_integral(d)) {
        problem(pr, path, "%s is not an integer", num);
        return;
    }
    if (s->has_min && d < s->min) {
        ts_format_number(lim, sizeof(lim), s->min);
        problem(pr, path, "%s is below the minimum %s", num, lim);
    } else if (s->has_max && d > s->max) {
        ts_format_number(lim, sizeof(lim), s->max);
        problem(pr, path, "%s is above the maximum %s", num, lim);
    } else if (s->has_xmin && d <= s->xmin) {
        ts_format_number(lim, sizeof(lim), s->xmin);
        problem(pr, path, "%s is not above %s", num, lim);
    } else if (s->has_xmax && d >= s->xmax) {
        ts_format_number(lim, sizeof(lim), s->xmax);
        problem(pr, path, "%s is not below %s", num, lim);
    } else if (s->format == PIPIT_FORMAT_INT32 && (d < -2147483648.0 || d > 2147483647.0)) {
        problem(pr, path, "%s is outside the int32 range", num);
    } else if (s->multiple_of > 0) {
        double q = d / s->multiple_of;
        if (!isfinite(q) || fabs(q - nearbyint(q)) > 1e-9 * fmax(1.0, fabs(q))) {
            ts_format_number(lim, sizeof(lim), s->multiple_of);
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
            if (ts_json_same(json_array_get(v, i), json_array_get(v, k))) {
                problem(pr, path, "items %zu and %zu are equal (the items must be unique)", k, i);
                i = n;
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        char p[TS_PATH_CAP];
        ts_path_index(p, sizeof(p), path, i);
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
            ts_value_has_type(s->alts[i]->type, v) ||
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
        if (ts_json_same(s->enum_json[i], v)) {
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
    if (s->type != PIPIT_SCHEMA_ANY && !ts_value_has_type(s->type, v)) {
        if (s->type == PIPIT_SCHEMA_INTEGER && json_is_number(v)) {
            char num[64];
            ts_format_json_number(num, sizeof(num), v);
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
                    ts_json_kind(v));
        }
        return;
    }
    if (!skip_enum && s->n_enum > 0 && !enum_has_value(s, v)) {
        char list[192];
        enum_list(s, list, sizeof(list));
        char *q = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        char num[64];
        if (json_is_number(v)) {
            ts_format_json_number(num, sizeof(num), v);
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

size_t ts_check_except_enum(const struct pipit_schema *s,
                            const json_t *v,
                            const char *path,
                            struct pipit_arg_problem *first) {
    struct problems pr = {first, 1, 0, 0};
    check_node(s, v, path, &pr, true);
    return pr.found;
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
    const struct pipit_tool *tool = NULL;
    for (size_t i = 0; i < ts->n_tools && tool == NULL; i++) {
        tool = strcmp(ts->tools[i].name, tool_name) == 0 ? &ts->tools[i] : NULL;
    }
    if (tool == NULL) {
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
    enum pipit_status st = pipit_tool_check_args(tool, args, problems, max_problems, n_problems);
    json_decref(args);
    return st;
}

bool pipit_schema_time_of_day(const struct pipit_schema *s) {
    if (s == NULL || s->type != PIPIT_SCHEMA_STRING || s->n_enum > 0) {
        return false;
    }
    if (s->description != NULL) {
        for (const char *p = s->description; *p != '\0'; p++) {
            if (strncasecmp(p, "hh:mm", 5) == 0) {
                return true;
            }
        }
    }
    /* "^\d{2}:\d{2}$", "^([01]\d|2[0-3]):[0-5]\d$", "[0-9]{2}:[0-9]{2}" */
    const char *c = s->pattern != NULL ? strchr(s->pattern, ':') : NULL;
    return c != NULL && strchr(c + 1, ':') == NULL &&
           (strstr(s->pattern, "\\d") != NULL || strstr(s->pattern, "[0-9]") != NULL ||
            strstr(s->pattern, "[0-5]") != NULL);
}

bool pipit_schema_free_string(const struct pipit_schema *s) {
    return s != NULL && s->type == PIPIT_SCHEMA_STRING && s->n_enum == 0 && s->pattern == NULL &&
           s->format == PIPIT_FORMAT_NONE && !pipit_schema_time_of_day(s);
}

int pipit_schema_value_words(const struct pipit_schema *s,
                             const char *value,
                             char (*out)[PIPIT_SCHEMA_WORD_CAP],
                             int max) {
    const char *desc = s != NULL ? s->description : NULL;
    size_t lv = value != NULL ? strlen(value) : 0;
    if (desc == NULL || lv == 0 || out == NULL || max <= 0) {
        return 0;
    }
    for (const char *p = strstr(desc, value); p != NULL; p = strstr(p + 1, value)) {
        bool start = p == desc || !isalnum((unsigned char)p[-1]);
        const char *q = p + lv;
        while (*q == ' ') {
            q++;
        }
        const char *close = *q == '(' ? strchr(q, ')') : NULL;
        if (!start || isalnum((unsigned char)p[lv]) || close == NULL) {
            continue;
        }
        int n = 0;
        for (const char *w = q + 1; w < close && n < max;) {
            while (w < close && (*w == ' ' || *w == ',' || *w == '/')) {
                w++;
            }
            size_t l = strcspn(w, ",/)");
            if (w + l > close) {
                l = (size_t)(close - w);
            }
            const char *from = w;
            w += l;
            while (l > 0 && from[l - 1] == ' ') {
                l--;
            }
            if (l > 3 && strncmp(from, "or ", 3) == 0) {
                from += 3;
                l -= 3;
            }
            if (l > 0 && l < PIPIT_SCHEMA_WORD_CAP) {
                memcpy(out[n], from, l);
                out[n][l] = '\0';
                n++;
            }
        }
        return n;
    }
    return 0;
}
