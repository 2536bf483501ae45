/*
 * fg_grow.h - the growable arrays of the fast decoder's files (fg_*.c, fastgrammar.c): one
 * inline helper, no object of its own.
 */
#ifndef PIPIT_FG_GROW_H
#define PIPIT_FG_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* Make *p hold at least `need` elements of `elem` bytes (capacity *cap, doubled from 64). */
static inline bool fg_grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) {
        return true;
    }
    size_t n = *cap > 0 ? *cap : 64;
    while (n < need) {
        n *= 2;
    }
    void *q = realloc(*p, n * elem);
    if (q == NULL) {
        return false;
    }
    *p = q;
    *cap = n;
    return true;
}

#endif /* PIPIT_FG_GROW_H */
