/*
 * toolspec_parser.c - error reporting of a tool-set load: the first failure, with
 * file:line:column found by scanning the text again for the failing JSON path. See
 * toolspec_parser.h.
 */
#include "toolspec_parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static unsigned loc_hex4(struct locator *L) {
    unsigned v = 0;
    for (int i = 0; i < 4 && L->pos < L->len; i++) {
        int h = ts_hexval(L->text[L->pos++]);
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
    char child[TS_PATH_CAP];
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
            char key[TS_PATH_CAP];
            loc_string(L, key, sizeof(key));
            loc_ws(L);
            if (L->pos >= L->len || L->text[L->pos] != ':') {
                return false;
            }
            L->pos++;
            ts_path_key(child, sizeof(child), path, key);
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
            ts_path_index(child, sizeof(child), path, index++);
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

void ts_fail(struct ts_parser *P, const char *path, bool at_key, const char *fmt, ...) {
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

void ts_nomem(struct ts_parser *P) {
    if (P->status == PIPIT_OK) {
        P->status =
            pipit_error_set(P->err, PIPIT_ERR_NOMEM, "toolspec: out of memory: %s", P->name);
    }
}

/* A string member: NULL when absent (if optional) or on error. */
const char *ts_get_string(struct ts_parser *P,
                          const json_t *obj,
                          const char *key,
                          const char *path,
                          bool required,
                          size_t max_bytes,
                          bool non_empty) {
    char p[TS_PATH_CAP];
    ts_path_key(p, sizeof(p), path, key);
    const json_t *v = json_object_get(obj, key);
    if (v == NULL) {
        if (required) {
            ts_fail(P, path, false, "missing \"%s\"", key);
        }
        return NULL;
    }
    if (!json_is_string(v)) {
        ts_fail(P, p, false, "expected a string, got %s", ts_json_kind(v));
        return NULL;
    }
    size_t n = json_string_length(v);
    if (n > max_bytes) {
        ts_fail(P, p, false, "string is %zu bytes long, the limit is %zu", n, max_bytes);
        return NULL;
    }
    if (non_empty && n == 0) {
        ts_fail(P, p, false, "must not be empty");
        return NULL;
    }
    if (strlen(json_string_value(v)) != n) {
        ts_fail(P, p, false, "string contains a NUL character");
        return NULL;
    }
    return json_string_value(v);
}

/* Reject keys of `obj` not in `allowed` (NULL-terminated). */
bool ts_only_keys(struct ts_parser *P,
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
            char p[TS_PATH_CAP];
            ts_path_key(p, sizeof(p), path, key);
            ts_fail(P, p, true, "unknown key \"%s\" in %s", key, what);
            return false;
        }
    }
    return true;
}
