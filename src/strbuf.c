/*
 * strbuf.c - a growable NUL-terminated string (see strbuf.h).
 */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_add(struct strbuf *b, const char *s, size_t n) {
    if (b->failed) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap > 0 ? b->cap : 256;
        while (b->len + n + 1 > cap) {
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->failed = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    if (n > 0) {
        memcpy(b->data + b->len, s, n);
    }
    b->len += n;
    b->data[b->len] = '\0';
}

void strbuf_str(struct strbuf *b, const char *s) {
    strbuf_add(b, s, strlen(s));
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...) {
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof(small)) {
        strbuf_add(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    strbuf_add(b, big, (size_t)n);
    free(big);
}

void strbuf_line(struct strbuf *b, const char *s) {
    for (const char *p = s; *p != '\0'; p++) {
        char c = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
        strbuf_add(b, &c, 1);
    }
}

char *strbuf_take(struct strbuf *b) {
    if (b->failed) {
        strbuf_free(b);
        return NULL;
    }
    char *s = b->data;
    if (s == NULL) {
        s = calloc(1, 1);
    }
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

void strbuf_free(struct strbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
