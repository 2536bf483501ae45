/*
 * fg_index.c - the fast decoder's vocabulary index (fg_index.h, docs/fastgrammar.md): every
 * token's text in a byte trie, built from data the engine hands over.
 *
 * Invariant: the trie holds every token with non-empty text that does not end generation; EOG
 * tokens are allowed exactly in accepting states (as in llama.cpp's grammar sampler).
 */
#include "fg_index.h"

#include "fg_grow.h"

#include <stdlib.h>
#include <string.h>

struct piece_ref {
    const char *p;
    int32_t n;
    int32_t tok;
};

static int cmp_piece(const void *x, const void *y) {
    const struct piece_ref *a = x, *b = y;
    int32_t n = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->p, b->p, (size_t)n);
    if (c != 0) {
        return c;
    }
    if (a->n != b->n) {
        return a->n < b->n ? -1 : 1;
    }
    return a->tok < b->tok ? -1 : a->tok > b->tok;
}

void fg_index_free(struct fg_index *ix) {
    if (ix == NULL) {
        return;
    }
    free(ix->blob);
    free(ix->off);
    free(ix->eog);
    free(ix->special);
    free(ix->tok_special);
    free(ix->sub_special);
    free(ix->ascii);
    free(ix->ascii_start);
    free(ix->ascii_len);
    free(ix->first_byte);
    free(ix->sub_end);
    free(ix->node_tok_start);
    free(ix->tok_by_node);
    free(ix->byte);
    free(ix->child);
    free(ix->sibling);
    free(ix->tok);
    free(ix->tok_next);
    free(ix);
}

/* Phase 1: the pieces and EOG tokens of `v` (taken), the plain ASCII and special tokens. */
enum pipit_status fg_index_read(struct fg_vocab *v, struct fg_index **out) {
    *out = NULL;
    size_t nv = v->n_vocab > 0 ? (size_t)v->n_vocab : 0;
    bool valid = v->n_vocab >= 0 && v->off != NULL && v->off[0] == 0 && v->n_eog >= 0 &&
                 (v->n_eog == 0 || v->eog != NULL) && (v->off[nv] == 0 || v->text != NULL);
    for (size_t t = 0; valid && t < nv; t++) {
        valid = v->off[t + 1] >= v->off[t] && v->off[t + 1] - v->off[t] <= FG_MAX_PIECE;
    }
    for (int32_t i = 0; valid && i < v->n_eog; i++) {
        valid =
            v->eog[i] >= 0 && v->eog[i] < v->n_vocab && v->off[v->eog[i] + 1] == v->off[v->eog[i]];
    }
    struct fg_index *ix = valid ? calloc(1, sizeof(*ix)) : NULL;
    if (ix == NULL) {
        free(v->text);
        free(v->off);
        free(v->eog);
        *v = (struct fg_vocab){0};
        return valid ? PIPIT_ERR_NOMEM : PIPIT_ERR_INVALID_ARG;
    }
    ix->n_vocab = v->n_vocab;
    ix->blob = v->text;
    ix->off = v->off;
    ix->eog = v->eog;
    ix->n_eog = v->n_eog;
    *v = (struct fg_vocab){0};
    ix->tok_next = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
    bool ok = ix->tok_next != NULL;
    for (size_t t = 0; ok && t < nv; t++) {
        ix->tok_next[t] = -1;
    }
    if (ok) {
        ix->special = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
        ix->tok_special = calloc(nv > 0 ? nv : 1, 1);
        ok = ix->special != NULL && ix->tok_special != NULL;
    }
    if (ok) {
        ix->ascii = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
        ix->ascii_start = calloc(FG_MAX_PIECE + 2, sizeof(int32_t));
        ix->ascii_len = malloc(sizeof(int16_t) * (nv > 0 ? nv : 1));
        ix->first_byte = calloc(nv > 0 ? nv : 1, 1);
        ok = ix->ascii != NULL && ix->ascii_start != NULL && ix->ascii_len != NULL &&
             ix->first_byte != NULL;
    }
    for (size_t t = 0; ok && t < nv; t++) { /* counting sort of the plain ASCII tokens */
        int64_t len = ix->off[t + 1] - ix->off[t];
        bool plain = len > 0 && len <= FG_MAX_PIECE;
        for (int64_t i = ix->off[t]; plain && i < ix->off[t + 1]; i++) {
            unsigned char c = (unsigned char)ix->blob[i];
            plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
        }
        ix->ascii_len[t] = plain ? (int16_t)len : -1;
        if (plain) {
            ix->ascii_start[len + 1]++;
        }
    }
    for (int32_t l = 1; ok && l <= FG_MAX_PIECE + 1; l++) {
        ix->ascii_start[l] += ix->ascii_start[l - 1];
    }
    if (ok) {
        int32_t *fill = malloc(sizeof(int32_t) * (FG_MAX_PIECE + 1));
        ok = fill != NULL;
        if (ok) {
            memcpy(fill, ix->ascii_start, sizeof(int32_t) * (FG_MAX_PIECE + 1));
            for (size_t t = 0; t < nv; t++) {
                if (ix->ascii_len[t] > 0) {
                    ix->ascii[fill[ix->ascii_len[t]]++] = (int32_t)t;
                }
            }
        }
        free(fill);
    }
    for (size_t t = 0; ok && t < nv; t++) {
        for (int64_t i = ix->off[t]; i < ix->off[t + 1]; i++) {
            unsigned char c = (unsigned char)ix->blob[i];
            if (c == '"' || c == '\\' || c < 0x20) {
                ix->special[ix->n_special++] = (int32_t)t;
                ix->tok_special[t] = c == '"' ? FG_SPECIAL_QUOTE : FG_SPECIAL_HARD;
                break;
            }
        }
        if (ix->tok_special[t] == 0 && ix->off[t + 1] > ix->off[t]) {
            ix->first_byte[t] = (uint8_t)ix->blob[ix->off[t]]; /* >= 0x20: never 0 */
        }
    }
    if (!ok) {
        fg_index_free(ix);
        return PIPIT_ERR_NOMEM;
    }
    *out = ix;
    return PIPIT_OK;
}

/* Phase 2: the trie over the pieces fg_index_read() took. */
bool fg_index_build_trie(struct fg_index *ix) {
    size_t nv = (size_t)ix->n_vocab;
    struct piece_ref *refs = malloc(sizeof(*refs) * (nv > 0 ? nv : 1));
    bool ok = refs != NULL;
    size_t n_refs = 0;
    if (ok) {
        for (size_t t = 0; t < nv; t++) {
            int32_t n = (int32_t)(ix->off[t + 1] - ix->off[t]);
            if (n > 0) {
                refs[n_refs++] = (struct piece_ref){ix->blob + ix->off[t], n, (int32_t)t};
            }
        }
        qsort(refs, n_refs, sizeof(*refs), cmp_piece);
    }
    /* the trie, in one pass over the sorted pieces: a stack of the current path's nodes */
    size_t node_cap = 0;
    int32_t path[1025];
    int32_t depth = 0;
    path[0] = 0;
    int32_t *last_child = NULL;
    size_t last_cap = 0;
    const struct piece_ref *prev = NULL;
    ix->n_nodes = 1;
    ok = ok && fg_grow((void **)&ix->byte, &node_cap, 1, 1);
    size_t c1 = 0, c2 = 0, c3 = 0;
    ok = ok && fg_grow((void **)&ix->child, &c1, 1, sizeof(int32_t)) &&
         fg_grow((void **)&ix->sibling, &c2, 1, sizeof(int32_t)) &&
         fg_grow((void **)&ix->tok, &c3, 1, sizeof(int32_t)) &&
         fg_grow((void **)&last_child, &last_cap, 1, sizeof(int32_t));
    if (ok) {
        ix->byte[0] = 0;
        ix->child[0] = ix->sibling[0] = ix->tok[0] = last_child[0] = -1;
    }
    for (size_t i = 0; ok && i < n_refs; i++) {
        const struct piece_ref *r = &refs[i];
        int32_t lcp = 0;
        if (prev != NULL) {
            while (lcp < r->n && lcp < prev->n && r->p[lcp] == prev->p[lcp]) {
                lcp++;
            }
        }
        depth = lcp;
        for (int32_t k = lcp; ok && k < r->n; k++) {
            int32_t id = ix->n_nodes;
            ok = fg_grow((void **)&ix->byte, &node_cap, (size_t)id + 1, 1) &&
                 fg_grow((void **)&ix->child, &c1, (size_t)id + 1, sizeof(int32_t)) &&
                 fg_grow((void **)&ix->sibling, &c2, (size_t)id + 1, sizeof(int32_t)) &&
                 fg_grow((void **)&ix->tok, &c3, (size_t)id + 1, sizeof(int32_t)) &&
                 fg_grow((void **)&last_child, &last_cap, (size_t)id + 1, sizeof(int32_t));
            if (!ok) {
                break;
            }
            ix->n_nodes++;
            ix->byte[id] = (uint8_t)r->p[k];
            ix->child[id] = ix->sibling[id] = ix->tok[id] = last_child[id] = -1;
            int32_t parent = path[depth];
            if (last_child[parent] < 0) {
                ix->child[parent] = id;
            } else {
                ix->sibling[last_child[parent]] = id;
            }
            last_child[parent] = id;
            path[++depth] = id;
        }
        if (!ok) {
            break;
        }
        /* the node of the whole piece: append the token to its list (sorted by id) */
        int32_t node = path[r->n];
        if (ix->tok[node] < 0) {
            ix->tok[node] = r->tok;
        } else {
            int32_t t = ix->tok[node];
            while (ix->tok_next[t] >= 0) {
                t = ix->tok_next[t];
            }
            ix->tok_next[t] = r->tok;
        }
        prev = r;
    }
    free(last_child);
    free(refs);
    return ok;
}

bool fg_index_finish(struct fg_index *ix) {
    size_t nn = (size_t)ix->n_nodes;
    ix->sub_special = calloc(nn > 0 ? nn : 1, 1);
    if (ix->sub_special == NULL) {
        return false;
    }
    for (size_t i = nn; i-- > 0;) {
        uint8_t f = ix->tok[i] >= 0 && ix->tok_special[ix->tok[i]] == FG_SPECIAL_QUOTE;
        for (int32_t c = ix->child[i]; c >= 0 && !f; c = ix->sibling[c]) {
            f = ix->sub_special[c];
        }
        ix->sub_special[i] = f;
    }
    /* subtree ranges: the trie is built in preorder (sorted pieces, nodes appended), which is
     * checked here; a trie that is not leaves the ranges off (fg_candidates then says -1) */
    ix->sub_end = malloc(sizeof(int32_t) * (nn > 0 ? nn : 1));
    ix->node_tok_start = calloc(nn + 1, sizeof(int32_t));
    ix->tok_by_node = malloc(sizeof(int32_t) * (ix->n_vocab > 0 ? (size_t)ix->n_vocab : 1));
    if (ix->sub_end == NULL || ix->node_tok_start == NULL || ix->tok_by_node == NULL) {
        return false;
    }
    bool preorder = true;
    for (size_t i = nn; i-- > 0 && preorder;) {
        int32_t end = (int32_t)i + 1;
        for (int32_t c = ix->child[i]; c >= 0; c = ix->sibling[c]) {
            preorder = preorder && c == end;
            end = ix->sub_end[c];
        }
        ix->sub_end[i] = end;
    }
    for (size_t i = 0; i < nn && preorder; i++) {
        int32_t k = 0;
        for (int32_t tok = ix->tok[i]; tok >= 0; tok = ix->tok_next[tok]) {
            ix->tok_by_node[ix->node_tok_start[i] + k++] = tok;
        }
        ix->node_tok_start[i + 1] = ix->node_tok_start[i] + k;
    }
    if (!preorder) {
        free(ix->sub_end);
        ix->sub_end = NULL;
    }
    return true;
}

enum pipit_status fg_index_new(struct fg_vocab *v, struct fg_index **out) {
    struct fg_index *ix = NULL;
    enum pipit_status st = fg_index_read(v, &ix);
    if (st != PIPIT_OK) {
        return st;
    }
    if (!fg_index_build_trie(ix) || !fg_index_finish(ix)) {
        fg_index_free(ix);
        return PIPIT_ERR_NOMEM;
    }
    *out = ix;
    return PIPIT_OK;
}

bool fg_index_is_eog(const struct fg_index *ix, int32_t token) {
    for (int32_t i = 0; i < ix->n_eog; i++) {
        if (ix->eog[i] == token) {
            return true;
        }
    }
    return false;
}

int32_t fg_index_n_vocab(const struct fg_index *ix) {
    return ix->n_vocab;
}

const char *fg_index_piece(const struct fg_index *ix, int32_t token, int32_t *n) {
    if (token < 0 || token >= ix->n_vocab) {
        *n = 0;
        return NULL;
    }
    *n = (int32_t)(ix->off[token + 1] - ix->off[token]);
    return *n > 0 ? ix->blob + ix->off[token] : NULL;
}

const int32_t *fg_index_eog(const struct fg_index *ix, int32_t *n) {
    *n = ix->n_eog;
    return ix->eog;
}

int32_t fg_index_ascii_len(const struct fg_index *ix, int32_t token) {
    return token >= 0 && token < ix->n_vocab ? ix->ascii_len[token] : -1;
}

const int32_t *fg_index_ascii_from(const struct fg_index *ix, int32_t len, int32_t *n) {
    len = len < 1 ? 1 : len > FG_MAX_PIECE + 1 ? FG_MAX_PIECE + 1 : len;
    int32_t end = ix->ascii_start[FG_MAX_PIECE + 1];
    *n = end - ix->ascii_start[len];
    return ix->ascii + ix->ascii_start[len];
}

int fg_index_special_kind(const struct fg_index *ix, int32_t token) {
    return token >= 0 && token < ix->n_vocab ? ix->tok_special[token] : 0;
}

const int32_t *fg_index_special(const struct fg_index *ix, int32_t *n) {
    *n = ix->n_special;
    return ix->special;
}

size_t fg_index_bytes(const struct fg_index *ix) {
    size_t nv = (size_t)ix->n_vocab, nn = (size_t)ix->n_nodes;
    return sizeof(*ix) + (size_t)ix->off[nv] + (nv + 1) * sizeof(int64_t) +
           nv * (5 * sizeof(int32_t) + 3) + nn * 2 * sizeof(int32_t) +
           (FG_MAX_PIECE + 2) * sizeof(int32_t) + nn * (2 + 3 * sizeof(int32_t));
}
