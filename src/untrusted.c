/*
 * untrusted.c - cleaning text from outside the person and the pack (see untrusted.h).
 *
 * Four passes over a private copy: (1) characters: invalid bytes, control and invisible
 * characters, look-alikes of < > |; (2) tag-shaped text, repeated until none is left;
 * (3) whitespace; (4) the length bound. Each pass only shortens the text, so one buffer of the
 * input's size is enough.
 */
#include "untrusted.h"

#include "device.h"
#include "utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG_MAX        80 /* bytes between '<' and '>' that still make a tag */
#define JSON_MAX_DEPTH 32
#define KEY_MAX        64

/* The code point of a valid sequence of `len` bytes. */
static uint32_t code_point(const unsigned char *s, size_t len) {
    if (len == 1) {
        return s[0];
    }
    uint32_t cp = s[0] & (0x7fu >> len);
    for (size_t i = 1; i < len; i++) {
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    return cp;
}

/* Invisible or formatting characters: they show nothing and can hide a tag. */
static bool invisible(uint32_t cp) {
    return cp == 0xad || cp == 0x34f || cp == 0x61c || cp == 0x115f || cp == 0x1160 ||
           cp == 0x17b4 || cp == 0x17b5 || (cp >= 0x180b && cp <= 0x180f) ||
           (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2060 && cp <= 0x206f) || cp == 0x3164 || (cp >= 0xfe00 && cp <= 0xfe0f) ||
           cp == 0xfeff || cp == 0xffa0 || (cp >= 0xfff0 && cp <= 0xfffb) ||
           (cp >= 0xe0000 && cp <= 0xe0fff);
}

/* Pass 1. Returns the new length; *changed when something other than whitespace changed. */
static size_t pass_chars(const char *src, size_t n, char *d, bool one_line, bool *changed) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        const unsigned char *s = (const unsigned char *)src + i;
        size_t len = utf8_seq_len(s, n - i);
        if (len == 0) {
            d[o++] = '?'; /* an invalid byte */
            *changed = true;
            i++;
            continue;
        }
        uint32_t cp = code_point(s, len);
        i += len;
        if (cp == '\n' || cp == 0x2029) {
            d[o++] = one_line ? ' ' : '\n';
        } else if (cp == '\t' || cp == '\r' || cp == '\v' || cp == '\f' || cp == 0x85 ||
                   cp == 0xa0 || cp == 0x2028) {
            d[o++] = ' ';
        } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || invisible(cp)) {
            *changed = true; /* dropped */
        } else if (cp == 0xff1c || cp == 0xfe64) {
            d[o++] = '<'; /* full-width and small forms read as the ASCII ones */
            *changed = true;
        } else if (cp == 0xff1e || cp == 0xfe65) {
            d[o++] = '>';
            *changed = true;
        } else if (cp == 0xff5c) {
            d[o++] = '|';
            *changed = true;
        } else {
            memcpy(d + o, s, len);
            o += len;
        }
    }
    d[o] = '\0';
    return o;
}

static bool upper_or_underscore(char c) {
    return (c >= 'A' && c <= 'Z') || c == '_';
}

/* The end (index of '>' or ']') of a tag-shaped run at s[i], or 0 when there is none. */
static size_t tag_end(const char *s, size_t i) {
    if (s[i] == '<') {
        size_t k = i + 1;
        while (s[k] != '\0' && s[k] != '<' && s[k] != '>' && s[k] != ' ' && s[k] != '\n' &&
               k - i <= TAG_MAX) {
            k++;
        }
        return s[k] == '>' && k > i + 1 ? k : 0;
    }
    if (s[i] == '[') {
        size_t k = i + 1;
        if (s[k] == '/') {
            k++;
        }
        size_t start = k;
        while (upper_or_underscore(s[k]) && k - i <= TAG_MAX) {
            k++;
        }
        return s[k] == ']' && k - start >= 3 ? k : 0;
    }
    return 0;
}

/* Pass 2: tags become a space, "<|" and "|>" lose their bar; repeated until stable. */
static size_t pass_tags(char *s, size_t n, bool *changed) {
    bool again = true;
    while (again) {
        again = false;
        size_t o = 0;
        for (size_t i = 0; i < n;) {
            size_t end = tag_end(s, i);
            if (end > 0) {
                s[o++] = ' ';
                i = end + 1;
                again = true;
                continue;
            }
            if ((s[i] == '<' && s[i + 1] == '|') || (s[i] == '|' && s[i + 1] == '>')) {
                s[o++] = s[i] == '<' ? '<' : '>';
                i += 2;
                again = true;
                continue;
            }
            s[o++] = s[i++];
        }
        s[o] = '\0';
        n = o;
        *changed = *changed || again;
    }
    return n;
}

/* Pass 3: one space between words, at most two newlines in a row, no space at either end or
 * around a newline. */
static size_t pass_space(char *s, size_t n) {
    size_t o = 0;
    int newlines = 0;
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') {
            space = true;
            continue;
        }
        if (s[i] == '\n') {
            newlines++;
            continue;
        }
        if (o > 0) {
            if (newlines > 0) {
                s[o++] = '\n';
                if (newlines > 1) {
                    s[o++] = '\n';
                }
            } else if (space) {
                s[o++] = ' ';
            }
        }
        newlines = 0;
        space = false;
        s[o++] = s[i];
    }
    s[o] = '\0';
    return o;
}

/* Pass 4: at most `max` (>= 4) bytes: cut at the last space in the second half of the room, or
 * on a character boundary, and end in "...". */
static void pass_cut(char *s, size_t n, size_t max) {
    if (n <= max) {
        return;
    }
    size_t end = utf8_boundary(s, max - 3);
    size_t sp = end;
    while (sp > 0 && s[sp] != ' ' && s[sp] != '\n') {
        sp--;
    }
    if (sp >= (max - 3) / 2) {
        end = sp;
    }
    while (end > 0 && strchr(" \n,;:", s[end - 1]) != NULL) {
        end--;
    }
    memcpy(s + end, "...", 4);
}

static char *clean(const char *text, size_t max_bytes, unsigned flags, bool *changed) {
    if (text == NULL) {
        text = "";
    }
    size_t n = strlen(text);
    char *d = malloc(n + 1);
    if (d == NULL) {
        return NULL;
    }
    bool ch = false;
    n = pass_chars(text, n, d, (flags & UNTRUSTED_ONE_LINE) != 0, &ch);
    n = pass_tags(d, n, &ch);
    n = pass_space(d, n);
    pass_cut(d, n, max_bytes < 4 ? 4 : max_bytes);
    if (changed != NULL) {
        *changed = ch;
    }
    return d;
}

char *untrusted_clean(const char *text, size_t max_bytes, unsigned flags) {
    return clean(text, max_bytes, flags, NULL);
}

void untrusted_clean_into(const char *text, char *buf, size_t size, unsigned flags) {
    if (buf == NULL || size == 0) {
        return;
    }
    buf[0] = '\0';
    if (size < 5) {
        return;
    }
    char *c = clean(text, size - 1, flags, NULL);
    if (c != NULL) {
        memcpy(buf, c, strlen(c) + 1);
        free(c);
    }
}

bool untrusted_has_syntax(const char *text) {
    bool changed = false;
    char *c = clean(text, (size_t)-1, 0, &changed);
    free(c);
    return changed;
}

static json_t *clean_json(const json_t *v, size_t max_string, int depth) {
    if (v == NULL || depth > JSON_MAX_DEPTH) {
        return NULL;
    }
    if (json_is_string(v)) {
        char *c = untrusted_clean(json_string_value(v), max_string, 0);
        json_t *s = c != NULL ? json_string(c) : NULL;
        free(c);
        return s;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        if (a == NULL) {
            return NULL;
        }
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) {
            json_t *cx = clean_json(x, max_string, depth + 1);
            if (cx == NULL || json_array_append_new(a, cx) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        if (o == NULL) {
            return NULL;
        }
        const char *key;
        const json_t *x;
        json_object_foreach((json_t *)v, key, x) {
            char k[KEY_MAX + 1];
            untrusted_clean_into(key, k, sizeof(k), UNTRUSTED_ONE_LINE);
            if (k[0] == '\0' || json_object_get(o, k) != NULL) {
                continue;
            }
            json_t *cx = clean_json(x, max_string, depth + 1);
            if (cx == NULL || json_object_set_new(o, k, cx) != 0) {
                json_decref(o);
                return NULL;
            }
        }
        return o;
    }
    return json_deep_copy(v); /* numbers, booleans, null */
}

json_t *untrusted_clean_json(const json_t *v, size_t max_string) {
    return clean_json(v, max_string, 0);
}

bool untrusted_is_word(const char *text, size_t max_bytes) {
    size_t n = 0;
    for (; text != NULL && text[n] != '\0'; n++) {
        char c = text[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr(".:/@#+-", c) != NULL;
        if (!ok || n >= max_bytes) {
            return false;
        }
    }
    return n > 0;
}

static json_t *words_json(const json_t *v, size_t max_word, int depth) {
    if (v == NULL || depth > JSON_MAX_DEPTH) {
        return NULL;
    }
    if (json_is_string(v)) {
        return untrusted_is_word(json_string_value(v), max_word) ? json_deep_copy(v) : NULL;
    }
    if (json_is_array(v)) {
        json_t *a = json_array();
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x) {
            json_t *cx = words_json(x, max_word, depth + 1);
            if (a != NULL && cx != NULL) {
                json_array_append_new(a, cx);
            }
        }
        return a;
    }
    if (json_is_object(v)) {
        json_t *o = json_object();
        const char *key;
        const json_t *x;
        json_object_foreach((json_t *)v, key, x) {
            json_t *cx = words_json(x, max_word, depth + 1);
            if (o != NULL && cx != NULL) {
                json_object_set_new(o, key, cx);
            }
        }
        return o;
    }
    return json_deep_copy(v);
}

json_t *untrusted_words_json(const json_t *v, size_t max_word) {
    return words_json(v, max_word, 0);
}
