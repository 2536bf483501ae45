/*
 * strbuf.h - a growable NUL-terminated string for building prompts, grammars and JSON.
 *
 * Invariant: `data` is NUL-terminated whenever it is not NULL. After the first allocation
 * failure `failed` sticks and every later append is a no-op, so builders check once at the end.
 */
#ifndef PIPIT_STRBUF_H
#define PIPIT_STRBUF_H

#include "status.h"

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
    char *data;  /* NULL until the first append */
    size_t len;  /* bytes, without the NUL */
    size_t cap;  /* bytes allocated */
    bool failed; /* an allocation failed */
};

void strbuf_add(struct strbuf *b, const char *s, size_t n);
void strbuf_str(struct strbuf *b, const char *s);
void strbuf_printf(struct strbuf *b, const char *fmt, ...) PIPIT_PRINTF(2, 3);
/* Append `s` with newlines and tabs turned into spaces. */
void strbuf_line(struct strbuf *b, const char *s);

/* Hand the string over (caller frees with free/pipit_free); NULL after a failure. The buffer
 * is left empty. An empty, never-appended buffer yields "". */
char *strbuf_take(struct strbuf *b);

void strbuf_free(struct strbuf *b);

#endif /* PIPIT_STRBUF_H */
