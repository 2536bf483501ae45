/*
 * fastgrammar.c - GBNF (pipit's subset) -> byte NFA -> lazy DFA, and the token trie that turns
 * DFA states into allowed-token lists (see fastgrammar.h, docs/fastgrammar.md).
 *
 * Invariants:
 * - NFA state 0 is the final (accepting) state. "Important" states are the byte states and the
 *   final state; a DFA state is the sorted set of important states in an epsilon closure.
 * - Every byte range of the NFA starts and ends on a byte-class boundary, so a DFA row needs one
 *   entry per class, not per byte.
 * - Code-point classes are compiled to well-formed UTF-8 (no surrogates, no overlong forms).
 * - The trie holds every token with non-empty text that does not end generation; EOG tokens are
 *   allowed exactly in accepting states (as in llama.cpp's grammar sampler).
 */
#define _POSIX_C_SOURCE 200809L
#include "fastgrammar.h"

#include "fileio.h"
#include "log.h"
#include "status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FG_MAX_NFA_STATES (4 * 1024 * 1024)
#define FG_MAX_DFA_STATES (1024 * 1024)
#define FG_MAX_RULES      65536
#define FG_MAX_DEPTH      1024 /* rule-reference and parenthesis nesting */
#define FG_MAX_REPEAT     65536
#define FG_UNKNOWN        (-2)

/* ============================================================================ growable arrays */

static bool grow(void **p, size_t *cap, size_t need, size_t elem) {
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

/* ============================================================================ vocabulary index */

struct fg_index {
    const struct pipit_model *model;
    int32_t n_vocab;
    char *blob;   /* every piece, back to back */
    int64_t *off; /* n_vocab + 1 offsets into blob */
    int32_t *eog; /* end-of-generation tokens */
    int32_t n_eog;
    int32_t *special; /* tokens with a byte that ends or escapes a string ('"', '\\', < 0x20) */
    int32_t n_special;
    uint8_t *tok_special; /* per token: 0 not special, FG_SPECIAL_QUOTE or FG_SPECIAL_HARD */
    uint8_t *sub_special; /* per trie node: 1 when a FG_SPECIAL_QUOTE token ends in its subtree */
    int32_t *ascii;       /* plain printable ASCII tokens (no '"', '\\'), by text length */
    int32_t *ascii_start; /* FG_MAX_PIECE + 2 offsets: ascii[ascii_start[L]..] are >= L bytes */
    int16_t *ascii_len;   /* per token: its length when in `ascii`, else -1 */
    int32_t *sub_end;     /* per node: its subtree is nodes [node, sub_end) (preorder) */
    int32_t *node_tok_start; /* n_nodes + 1: tok_by_node[node_tok_start[x]..] end at x.. */
    int32_t *tok_by_node;    /* tokens ordered by the node their text ends at */
    /* trie: node 0 is the root (empty text) */
    int32_t n_nodes;
    uint8_t *byte;     /* the byte that leads into the node */
    int32_t *child;    /* first child (children in increasing byte order), -1 none */
    int32_t *sibling;  /* next sibling, -1 none */
    int32_t *tok;      /* first token whose text ends here, -1 none */
    int32_t *tok_next; /* per token: the next token with the same text, -1 none */
    uint64_t key;      /* index_key(), when the on-disk cache is in use (else 0) */
};

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

/* Phase 1: every token's text (blob, off), the EOG tokens; tok_next all -1. */
static enum pipit_status index_read(const struct pipit_model *model, struct fg_index **out) {
    *out = NULL;
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    struct fg_index *ix = calloc(1, sizeof(*ix));
    if (ix == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    ix->model = model;
    ix->n_vocab = info.n_vocab;
    size_t nv = (size_t)info.n_vocab;
    size_t blob_cap = 0, blob_len = 0;
    ix->off = malloc(sizeof(int64_t) * (nv + 1));
    ix->eog = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
    ix->tok_next = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
    bool ok = ix->off != NULL && ix->eog != NULL && ix->tok_next != NULL;
    char buf[FG_MAX_PIECE];
    for (size_t t = 0; ok && t < nv; t++) {
        ix->off[t] = (int64_t)blob_len;
        ix->tok_next[t] = -1;
        if (pipit_model_token_is_eog(model, (int32_t)t)) {
            ix->eog[ix->n_eog++] = (int32_t)t;
            continue;
        }
        int32_t n = pipit_token_piece(model, (int32_t)t, buf, (int32_t)sizeof(buf));
        if (n <= 0) {
            continue; /* no text (or absurdly long): never matches grammar text */
        }
        ok = grow((void **)&ix->blob, &blob_cap, blob_len + (size_t)n, 1);
        if (ok) {
            memcpy(ix->blob + blob_len, buf, (size_t)n);
            blob_len += (size_t)n;
        }
    }
    if (ok) {
        ix->off[nv] = (int64_t)blob_len;
        ix->special = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
        ix->tok_special = calloc(nv > 0 ? nv : 1, 1);
        ok = ix->special != NULL && ix->tok_special != NULL;
    }
    if (ok) {
        ix->ascii = malloc(sizeof(int32_t) * (nv > 0 ? nv : 1));
        ix->ascii_start = calloc(FG_MAX_PIECE + 2, sizeof(int32_t));
        ix->ascii_len = malloc(sizeof(int16_t) * (nv > 0 ? nv : 1));
        ok = ix->ascii != NULL && ix->ascii_start != NULL && ix->ascii_len != NULL;
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
    }
    if (!ok) {
        fg_index_free(ix);
        return PIPIT_ERR_NOMEM;
    }
    *out = ix;
    return PIPIT_OK;
}

/* Phase 2: the trie over the pieces index_read() collected. */
static bool index_build_trie(struct fg_index *ix) {
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
    ok = ok && grow((void **)&ix->byte, &node_cap, 1, 1);
    size_t c1 = 0, c2 = 0, c3 = 0;
    ok = ok && grow((void **)&ix->child, &c1, 1, sizeof(int32_t)) &&
         grow((void **)&ix->sibling, &c2, 1, sizeof(int32_t)) &&
         grow((void **)&ix->tok, &c3, 1, sizeof(int32_t)) &&
         grow((void **)&last_child, &last_cap, 1, sizeof(int32_t));
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
            ok = grow((void **)&ix->byte, &node_cap, (size_t)id + 1, 1) &&
                 grow((void **)&ix->child, &c1, (size_t)id + 1, sizeof(int32_t)) &&
                 grow((void **)&ix->sibling, &c2, (size_t)id + 1, sizeof(int32_t)) &&
                 grow((void **)&ix->tok, &c3, (size_t)id + 1, sizeof(int32_t)) &&
                 grow((void **)&last_child, &last_cap, (size_t)id + 1, sizeof(int32_t));
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

/* ============================================================================ on-disk cache */

/* The file of one vocabulary's trie: <dir>/vocab-<key>.fgi, key = hash of FG_CACHE_VERSION,
 * n_vocab, every piece (offsets and bytes) and the EOG tokens. Layout (native byte order; the
 * endianness marker rejects a foreign one):
 *   0 magic "PIPITFGI", 8 u32 version, 12 u32 0x01020304, 16 u64 key, 24 i32 n_vocab,
 *   28 i32 n_nodes, 32 u64 payload bytes, 40 u64 payload checksum, 48 u64 header checksum
 *   (bytes 0..47), 56 zero;
 *   payload: child, sibling, tok (i32 x n_nodes each), tok_next (i32 x n_vocab), byte
 *   (u8 x n_nodes).
 * A file is trusted for nothing: any mismatch, and any trie that is not a tree of the right
 * shape (indices in range, children and siblings after their node, depth <= 1024, every node
 * reached once, every token listed at most once), means "rebuild". */
#define FG_CACHE_MAGIC   "PIPITFGI"
#define FG_CACHE_VERSION 1u
#define FG_CACHE_HEAD    64

/* A word-at-a-time 64-bit hash (FNV-1a bytewise is ~8x slower on the 8 MB payload). */
static uint64_t hash_words(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    if (n > i) {
        memcpy(&w, p + i, n - i);
    }
    h = (h ^ w ^ ((uint64_t)n << 56)) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

static uint64_t index_key(const struct fg_index *ix) {
    size_t nv = (size_t)ix->n_vocab;
    uint32_t head[2] = {FG_CACHE_VERSION, (uint32_t)ix->n_vocab};
    uint64_t h = fileio_fnv1a(FILEIO_FNV_OFFSET, head, sizeof(head));
    h = hash_words(h, ix->off, sizeof(int64_t) * (nv + 1));
    if (ix->off[nv] > 0) {
        h = hash_words(h, ix->blob, (size_t)ix->off[nv]);
    }
    return hash_words(h, ix->eog, sizeof(int32_t) * (size_t)ix->n_eog);
}

static uint64_t payload_sum(const struct fg_index *ix) {
    size_t nn = (size_t)ix->n_nodes, nv = (size_t)ix->n_vocab;
    uint64_t h = FILEIO_FNV_OFFSET;
    h = hash_words(h, ix->child, nn * sizeof(int32_t));
    h = hash_words(h, ix->sibling, nn * sizeof(int32_t));
    h = hash_words(h, ix->tok, nn * sizeof(int32_t));
    h = hash_words(h, ix->tok_next, nv * sizeof(int32_t));
    return hash_words(h, ix->byte, nn);
}

static bool cache_path(char *buf, size_t cap, const char *dir, uint64_t key) {
    int n = snprintf(buf, cap, "%s/vocab-%016llx.fgi", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < cap;
}

static bool mkdir_p(char *path) {
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            int r = mkdir(path, 0755);
            int e = errno;
            *p = c;
            if (r != 0 && e != EEXIST) {
                return false;
            }
            if (c == '\0') {
                break;
            }
        }
    }
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && access(path, W_OK | X_OK) == 0;
}

bool fg_cache_dir(char *buf, size_t cap) {
    const char *env = getenv("PIPIT_CACHE");
    int n;
    if (env != NULL) {
        if (env[0] == '\0' || strcmp(env, "off") == 0) {
            return false;
        }
        n = snprintf(buf, cap, "%s/masks", env);
    } else {
        const char *home = getenv("HOME");
        if (home == NULL || home[0] == '\0') {
            pipit_log(PIPIT_LOG_DEBUG, "fastgrammar: no HOME and no PIPIT_CACHE: no mask cache");
            return false;
        }
        n = snprintf(buf, cap, "%s/.cache/pipit/masks", home);
    }
    if (n <= 0 || (size_t)n >= cap) {
        return false;
    }
    if (!mkdir_p(buf)) {
        pipit_log(PIPIT_LOG_DEBUG, "fastgrammar: mask cache %s not writable (%s): disabled", buf,
                  strerror(errno));
        return false;
    }
    return true;
}

/* The trie is a tree of the shape index_build_trie() makes (see above). */
static bool trie_valid(const struct fg_index *ix) {
    int32_t nn = ix->n_nodes, nv = ix->n_vocab;
    int16_t *depth = malloc(sizeof(int16_t) * (size_t)nn);
    uint8_t *listed = calloc((size_t)nv + 1, 1);
    bool ok = depth != NULL && listed != NULL && ix->tok[0] == -1 && ix->sibling[0] == -1;
    for (int32_t i = 0; ok && i < nn; i++) {
        depth[i] = (int16_t)(i == 0 ? 0 : -1);
    }
    for (int32_t i = 0; ok && i < nn; i++) {
        if (depth[i] < 0) {
            ok = false; /* not reached from the root */
            break;
        }
        int32_t c = ix->child[i], s = ix->sibling[i];
        if ((c != -1 && (c <= i || c >= nn)) || (s != -1 && (s <= i || s >= nn))) {
            ok = false;
            break;
        }
        if (c >= 0) {
            if (depth[i] >= 1024 || depth[c] >= 0) {
                ok = false;
                break;
            }
            depth[c] = (int16_t)(depth[i] + 1);
        }
        if (s >= 0) {
            if (depth[s] >= 0) {
                ok = false;
                break;
            }
            depth[s] = depth[i];
        }
        for (int32_t t = ix->tok[i]; ok && t != -1; t = ix->tok_next[t]) {
            ok = t >= 0 && t < nv && !listed[t];
            if (ok) {
                listed[t] = 1;
                int32_t u = ix->tok_next[t];
                ok = u == -1 || (u > t && u < nv);
            }
        }
    }
    for (int32_t t = 0; ok && t < nv; t++) {
        int32_t u = ix->tok_next[t];
        ok = listed[t] || u == -1; /* a token outside every list links nowhere */
    }
    free(depth);
    free(listed);
    return ok;
}

static bool read_exact(FILE *f, void *p, size_t n) {
    return n == 0 || fread(p, 1, n, f) == n;
}

/* Load the trie of `ix` (pieces read, key computed) from `path`; false (ix unchanged) on
 * any problem. */
static bool cache_load(struct fg_index *ix, const char *path, uint64_t key) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    uint8_t head[FG_CACHE_HEAD];
    bool ok = read_exact(f, head, sizeof(head));
    uint32_t version = 0, endian = 0;
    uint64_t fkey = 0, payload = 0, psum = 0, hsum = 0;
    int32_t nv = 0, nn = 0;
    if (ok) {
        memcpy(&version, head + 8, 4);
        memcpy(&endian, head + 12, 4);
        memcpy(&fkey, head + 16, 8);
        memcpy(&nv, head + 24, 4);
        memcpy(&nn, head + 28, 4);
        memcpy(&payload, head + 32, 8);
        memcpy(&psum, head + 40, 8);
        memcpy(&hsum, head + 48, 8);
        uint64_t max_nodes = (uint64_t)ix->off[ix->n_vocab] + 1;
        ok = memcmp(head, FG_CACHE_MAGIC, 8) == 0 && version == FG_CACHE_VERSION &&
             endian == 0x01020304u && fkey == key && nv == ix->n_vocab && nn >= 1 &&
             (uint64_t)nn <= max_nodes && payload == (uint64_t)nn * 13u + (uint64_t)nv * 4u &&
             hsum == hash_words(FILEIO_FNV_OFFSET, head, 48) &&
             memcmp(head + 56, "\0\0\0\0\0\0\0\0", 8) == 0;
    }
    int32_t *child = NULL, *sibling = NULL, *tok = NULL, *tok_next = NULL;
    uint8_t *byte = NULL;
    if (ok) {
        size_t n = (size_t)nn;
        child = malloc(sizeof(int32_t) * n);
        sibling = malloc(sizeof(int32_t) * n);
        tok = malloc(sizeof(int32_t) * n);
        tok_next = malloc(sizeof(int32_t) * (nv > 0 ? (size_t)nv : 1));
        byte = malloc(n);
        ok = child != NULL && sibling != NULL && tok != NULL && tok_next != NULL && byte != NULL &&
             read_exact(f, child, sizeof(int32_t) * n) &&
             read_exact(f, sibling, sizeof(int32_t) * n) &&
             read_exact(f, tok, sizeof(int32_t) * n) &&
             read_exact(f, tok_next, sizeof(int32_t) * (size_t)nv) && read_exact(f, byte, n) &&
             fgetc(f) == EOF;
    }
    fclose(f);
    if (ok) {
        struct fg_index probe = *ix;
        probe.n_nodes = nn;
        probe.child = child;
        probe.sibling = sibling;
        probe.tok = tok;
        probe.tok_next = tok_next;
        probe.byte = byte;
        ok = payload_sum(&probe) == psum && trie_valid(&probe);
    }
    if (!ok) {
        free(child);
        free(sibling);
        free(tok);
        free(tok_next);
        free(byte);
        return false;
    }
    free(ix->tok_next);
    ix->n_nodes = nn;
    ix->child = child;
    ix->sibling = sibling;
    ix->tok = tok;
    ix->tok_next = tok_next;
    ix->byte = byte;
    return true;
}

/* Cache files go through fileio (src/fileio.h) without fsync: the cache is disposable and a
 * torn file fails its checksum. */
static bool write_i32(FILE *f, const int32_t *v, size_t n) {
    return n == 0 || fwrite(v, sizeof(int32_t), n, f) == n;
}

/* Write the trie of `ix` to `path` atomically. */
static bool cache_store(const struct fg_index *ix, const char *path, uint64_t key) {
    size_t nn = (size_t)ix->n_nodes, nv = (size_t)ix->n_vocab;
    uint8_t head[FG_CACHE_HEAD];
    memset(head, 0, sizeof(head));
    uint32_t version = FG_CACHE_VERSION, endian = 0x01020304u;
    uint64_t payload = (uint64_t)nn * 13u + (uint64_t)nv * 4u, psum = payload_sum(ix);
    memcpy(head, FG_CACHE_MAGIC, 8);
    memcpy(head + 8, &version, 4);
    memcpy(head + 12, &endian, 4);
    memcpy(head + 16, &key, 8);
    memcpy(head + 24, &ix->n_vocab, 4);
    memcpy(head + 28, &ix->n_nodes, 4);
    memcpy(head + 32, &payload, 8);
    memcpy(head + 40, &psum, 8);
    uint64_t hsum = hash_words(FILEIO_FNV_OFFSET, head, 48);
    memcpy(head + 48, &hsum, 8);
    struct fileio_tmp w;
    if (!fileio_begin(&w, path)) {
        return false;
    }
    FILE *f = w.f;
    bool ok = fwrite(head, 1, sizeof(head), f) == sizeof(head) && write_i32(f, ix->child, nn) &&
              write_i32(f, ix->sibling, nn) && write_i32(f, ix->tok, nn) &&
              write_i32(f, ix->tok_next, nv) && fwrite(ix->byte, 1, nn, f) == nn;
    return fileio_commit(&w, ok, FILEIO_DISPOSABLE);
}

/* sub_special: children come after their node (trie_valid), so one backward pass suffices. */
static bool index_mark_special(struct fg_index *ix) {
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

enum pipit_status fg_index_new_cached(const struct pipit_model *model,
                                      const char *cache_dir,
                                      bool *from_cache,
                                      struct fg_index **out) {
    if (from_cache != NULL) {
        *from_cache = false;
    }
    struct fg_index *ix = NULL;
    enum pipit_status st = index_read(model, &ix);
    if (st != PIPIT_OK) {
        return st;
    }
    char path[4096];
    uint64_t key = 0;
    bool cached = cache_dir != NULL;
    if (cached) {
        key = index_key(ix);
        ix->key = key;
        cached = cache_path(path, sizeof(path), cache_dir, key);
    }
    if (cached && cache_load(ix, path, key)) {
        if (!index_mark_special(ix)) {
            fg_index_free(ix);
            return PIPIT_ERR_NOMEM;
        }
        if (from_cache != NULL) {
            *from_cache = true;
        }
        *out = ix;
        return PIPIT_OK;
    }
    if (!index_build_trie(ix) || !index_mark_special(ix)) {
        fg_index_free(ix);
        return PIPIT_ERR_NOMEM;
    }
    if (cached && !cache_store(ix, path, key)) {
        pipit_log(PIPIT_LOG_DEBUG, "fastgrammar: cannot write the mask cache %s", path);
    }
    *out = ix;
    return PIPIT_OK;
}

enum pipit_status fg_index_new(const struct pipit_model *model, struct fg_index **out) {
    return fg_index_new_cached(model, NULL, NULL, out);
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

/* ============================================================================ GBNF parser */

enum node_kind {
    N_SEQ,   /* a = first kid index in kids, b = count */
    N_ALT,   /* same */
    N_LIT,   /* a = offset in lit bytes, b = length */
    N_CLASS, /* a = offset in ranges (pairs), b = pairs; already normalized, not negated */
    N_REF,   /* a = rule */
    N_REP,   /* a = node, b = min, c = max (-1 = unbounded) */
};

struct node {
    enum node_kind kind;
    int32_t a, b, c;
};

struct rule {
    char name[128];
    int32_t body;     /* node, -1 until defined */
    bool in_progress; /* being inlined (recursion check) */
    /* the rule's NFA fragments built so far: (continuation, start) pairs. A rule referenced
     * again with the same continuation reuses its fragment, so a chain of rules that each
     * reference the next from several places (optional object members) stays linear */
    int32_t *memo;
    size_t n_memo, cap_memo; /* pairs; int32 slots */
};

struct parser {
    const char *s;
    size_t pos;
    struct node *nodes;
    size_t n_nodes, cap_nodes;
    int32_t *kids;
    size_t n_kids, cap_kids;
    uint8_t *lit;
    size_t n_lit, cap_lit;
    uint32_t *ranges;
    size_t n_ranges, cap_ranges; /* in uint32 units (2 per range) */
    struct rule *rules;
    size_t n_rules, cap_rules;
    char *msg;
    size_t msg_size;
    bool failed;
};

static void perr(struct parser *p, const char *what) {
    if (!p->failed) {
        snprintf(p->msg, p->msg_size, "fastgrammar: %s at offset %zu", what, p->pos);
    }
    p->failed = true;
}

static int32_t new_node(struct parser *p, enum node_kind k, int32_t a, int32_t b, int32_t c) {
    if (!grow((void **)&p->nodes, &p->cap_nodes, p->n_nodes + 1, sizeof(struct node))) {
        perr(p, "out of memory");
        return -1;
    }
    p->nodes[p->n_nodes] = (struct node){k, a, b, c};
    return (int32_t)p->n_nodes++;
}

static void skip_space(struct parser *p, bool newlines) {
    for (;;) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines)) {
            p->pos++;
        } else if (c == '#') {
            while (p->s[p->pos] != '\0' && p->s[p->pos] != '\n') {
                p->pos++;
            }
        } else {
            return;
        }
    }
}

static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

static int32_t rule_index(struct parser *p, const char *name, size_t n) {
    for (size_t i = 0; i < p->n_rules; i++) {
        if (strlen(p->rules[i].name) == n && memcmp(p->rules[i].name, name, n) == 0) {
            return (int32_t)i;
        }
    }
    if (n >= sizeof(p->rules[0].name) || p->n_rules >= FG_MAX_RULES ||
        !grow((void **)&p->rules, &p->cap_rules, p->n_rules + 1, sizeof(struct rule))) {
        perr(p, "rule name too long or too many rules");
        return -1;
    }
    struct rule *r = &p->rules[p->n_rules];
    memcpy(r->name, name, n);
    r->name[n] = '\0';
    r->body = -1;
    r->in_progress = false;
    r->memo = NULL;
    r->n_memo = r->cap_memo = 0;
    return (int32_t)p->n_rules++;
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

/* One (possibly escaped) character of a literal or class as a code point. */
static uint32_t parse_char(struct parser *p) {
    const unsigned char *s = (const unsigned char *)p->s;
    if (s[p->pos] == '\\') {
        p->pos++;
        char e = (char)s[p->pos++];
        int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (digits > 0) {
            uint32_t v = 0;
            for (int i = 0; i < digits; i++) {
                int h = hexval((char)s[p->pos]);
                if (h < 0) {
                    perr(p, "bad hex escape");
                    return 0;
                }
                v = v * 16 + (uint32_t)h;
                p->pos++;
            }
            return v;
        }
        switch (e) {
            case 'n':
                return '\n';
            case 'r':
                return '\r';
            case 't':
                return '\t';
            case '\\':
            case '"':
            case '[':
            case ']':
            case '-':
            case '^':
                return (uint32_t)(unsigned char)e;
            default:
                perr(p, "unknown escape");
                return 0;
        }
    }
    /* a UTF-8 code point */
    unsigned char c = s[p->pos];
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t v = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
    p->pos++;
    for (int i = 1; i < n; i++) {
        if ((s[p->pos] & 0xC0) != 0x80) {
            perr(p, "malformed UTF-8 in the grammar");
            return 0;
        }
        v = (v << 6) | (s[p->pos++] & 0x3Fu);
    }
    return v;
}

static size_t utf8_encode(uint32_t cp, uint8_t out[4]) {
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static int cmp_range(const void *x, const void *y) {
    const uint32_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

static int32_t parse_alt(struct parser *p, int depth);

static int32_t parse_literal(struct parser *p) {
    p->pos++; /* '"' */
    size_t start = p->n_lit;
    while (!p->failed && p->s[p->pos] != '"') {
        if (p->s[p->pos] == '\0') {
            perr(p, "unterminated literal");
            return -1;
        }
        uint8_t enc[4];
        size_t n = utf8_encode(parse_char(p), enc);
        if (!grow((void **)&p->lit, &p->cap_lit, p->n_lit + n, 1)) {
            perr(p, "out of memory");
            return -1;
        }
        memcpy(p->lit + p->n_lit, enc, n);
        p->n_lit += n;
    }
    p->pos++;
    return new_node(p, N_LIT, (int32_t)start, (int32_t)(p->n_lit - start), 0);
}

static int32_t parse_class(struct parser *p) {
    p->pos++; /* '[' */
    bool negated = false;
    if (p->s[p->pos] == '^') {
        negated = true;
        p->pos++;
    }
    uint32_t tmp[2 * 256];
    size_t n = 0;
    while (!p->failed && p->s[p->pos] != ']') {
        if (p->s[p->pos] == '\0' || n >= 256) {
            perr(p, "unterminated or too long character class");
            return -1;
        }
        uint32_t lo = parse_char(p), hi = lo;
        if (p->s[p->pos] == '-' && p->s[p->pos + 1] != ']' && p->s[p->pos + 1] != '\0') {
            p->pos++;
            hi = parse_char(p);
        }
        if (hi > 0x10FFFF) {
            hi = 0x10FFFF;
        }
        if (lo <= hi) {
            tmp[2 * n] = lo;
            tmp[2 * n + 1] = hi;
            n++;
        }
    }
    p->pos++;
    /* normalize: sort, merge, complement when negated, drop surrogates */
    qsort(tmp, n, 2 * sizeof(uint32_t), cmp_range);
    uint32_t merged[2 * 256];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && tmp[2 * i] <= merged[2 * m - 1] + 1) {
            if (tmp[2 * i + 1] > merged[2 * m - 1]) {
                merged[2 * m - 1] = tmp[2 * i + 1];
            }
        } else {
            merged[2 * m] = tmp[2 * i];
            merged[2 * m + 1] = tmp[2 * i + 1];
            m++;
        }
    }
    uint32_t fin[2 * 260];
    size_t f = 0;
    if (negated) {
        uint32_t next = 0;
        for (size_t i = 0; i < m; i++) {
            if (merged[2 * i] > next) {
                fin[2 * f] = next;
                fin[2 * f + 1] = merged[2 * i] - 1;
                f++;
            }
            next = merged[2 * i + 1] + 1;
        }
        if (next <= 0x10FFFF) {
            fin[2 * f] = next;
            fin[2 * f + 1] = 0x10FFFF;
            f++;
        }
    } else {
        memcpy(fin, merged, sizeof(uint32_t) * 2 * m);
        f = m;
    }
    size_t start = p->n_ranges;
    for (size_t i = 0; i < f; i++) {
        uint32_t lo = fin[2 * i], hi = fin[2 * i + 1];
        uint32_t parts[4];
        size_t np = 0;
        if (lo < 0xD800 && hi >= 0xD800) {
            parts[np++] = lo;
            parts[np++] = 0xD7FF;
            lo = 0xE000;
        } else if (lo >= 0xD800 && lo <= 0xDFFF) {
            lo = 0xE000;
        }
        if (lo <= hi) {
            parts[np++] = lo;
            parts[np++] = hi;
        }
        if (!grow((void **)&p->ranges, &p->cap_ranges, p->n_ranges + np, sizeof(uint32_t))) {
            perr(p, "out of memory");
            return -1;
        }
        memcpy(p->ranges + p->n_ranges, parts, np * sizeof(uint32_t));
        p->n_ranges += np;
    }
    return new_node(p, N_CLASS, (int32_t)start, (int32_t)((p->n_ranges - start) / 2), 0);
}

static long parse_uint(struct parser *p) {
    long v = 0;
    if (p->s[p->pos] < '0' || p->s[p->pos] > '9') {
        perr(p, "expected a number");
        return -1;
    }
    while (p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
        v = v * 10 + (p->s[p->pos++] - '0');
        if (v > FG_MAX_REPEAT) {
            perr(p, "repetition count too large");
            return -1;
        }
    }
    return v;
}

static int32_t parse_seq(struct parser *p, int depth) {
    int32_t items[512];
    size_t n = 0;
    for (;;) {
        skip_space(p, depth > 0);
        char c = p->s[p->pos];
        int32_t item = -1;
        if (c == '"') {
            item = parse_literal(p);
        } else if (c == '[') {
            item = parse_class(p);
        } else if (c == '(') {
            p->pos++;
            item = parse_alt(p, depth + 1);
            skip_space(p, true);
            if (p->s[p->pos] != ')') {
                perr(p, "expected ')'");
                return -1;
            }
            p->pos++;
        } else if (is_name_char(c)) {
            size_t s0 = p->pos;
            while (is_name_char(p->s[p->pos])) {
                p->pos++;
            }
            int32_t r = rule_index(p, p->s + s0, p->pos - s0);
            item = r >= 0 ? new_node(p, N_REF, r, 0, 0) : -1;
        } else if (c == '.') {
            perr(p, "'.' is not supported");
            return -1;
        } else {
            break; /* '|', ')', newline, end */
        }
        if (p->failed || item < 0) {
            return -1;
        }
        /* postfix operators */
        for (;;) {
            char o = p->s[p->pos];
            if (o == '?') {
                item = new_node(p, N_REP, item, 0, 1);
                p->pos++;
            } else if (o == '*') {
                item = new_node(p, N_REP, item, 0, -1);
                p->pos++;
            } else if (o == '+') {
                item = new_node(p, N_REP, item, 1, -1);
                p->pos++;
            } else if (o == '{') {
                p->pos++;
                skip_space(p, false);
                long lo = parse_uint(p), hi = lo;
                skip_space(p, false);
                if (p->s[p->pos] == ',') {
                    p->pos++;
                    skip_space(p, false);
                    hi = p->s[p->pos] == '}' ? -1 : parse_uint(p);
                    skip_space(p, false);
                }
                if (p->failed || p->s[p->pos] != '}' || (hi >= 0 && hi < lo)) {
                    perr(p, "bad repetition");
                    return -1;
                }
                p->pos++;
                item = new_node(p, N_REP, item, (int32_t)lo, (int32_t)hi);
            } else {
                break;
            }
            if (item < 0) {
                return -1;
            }
        }
        if (n >= sizeof(items) / sizeof(items[0])) {
            perr(p, "sequence too long");
            return -1;
        }
        items[n++] = item;
    }
    if (!grow((void **)&p->kids, &p->cap_kids, p->n_kids + n, sizeof(int32_t))) {
        perr(p, "out of memory");
        return -1;
    }
    memcpy(p->kids + p->n_kids, items, n * sizeof(int32_t));
    p->n_kids += n;
    return new_node(p, N_SEQ, (int32_t)(p->n_kids - n), (int32_t)n, 0);
}

static int32_t parse_alt(struct parser *p, int depth) {
    if (depth > FG_MAX_DEPTH) {
        perr(p, "nesting too deep");
        return -1;
    }
    int32_t alts[1024];
    size_t n = 0;
    for (;;) {
        int32_t s = parse_seq(p, depth);
        if (s < 0) {
            return -1;
        }
        if (n >= sizeof(alts) / sizeof(alts[0])) {
            perr(p, "too many alternatives");
            return -1;
        }
        alts[n++] = s;
        skip_space(p, depth > 0);
        if (p->s[p->pos] != '|') {
            break;
        }
        p->pos++;
    }
    if (n == 1) {
        return alts[0];
    }
    if (!grow((void **)&p->kids, &p->cap_kids, p->n_kids + n, sizeof(int32_t))) {
        perr(p, "out of memory");
        return -1;
    }
    memcpy(p->kids + p->n_kids, alts, n * sizeof(int32_t));
    p->n_kids += n;
    return new_node(p, N_ALT, (int32_t)(p->n_kids - n), (int32_t)n, 0);
}

static void parse_grammar(struct parser *p) {
    for (;;) {
        skip_space(p, true);
        if (p->s[p->pos] == '\0' || p->failed) {
            return;
        }
        size_t s0 = p->pos;
        while (is_name_char(p->s[p->pos])) {
            p->pos++;
        }
        if (p->pos == s0) {
            perr(p, "expected a rule name");
            return;
        }
        int32_t r = rule_index(p, p->s + s0, p->pos - s0);
        skip_space(p, false);
        if (r < 0 || strncmp(p->s + p->pos, "::=", 3) != 0) {
            perr(p, "expected '::='");
            return;
        }
        p->pos += 3;
        int32_t body = parse_alt(p, 0);
        if (body < 0) {
            return;
        }
        if (p->rules[r].body >= 0) {
            perr(p, "rule defined twice");
            return;
        }
        p->rules[r].body = body;
    }
}

/* ============================================================================ NFA */

struct nstate {
    int32_t out, out2; /* byte state: out = next; epsilon state: up to two successors */
    uint8_t lo, hi;
    uint8_t is_byte;
};

struct dstate {
    int32_t set_off, set_n; /* important NFA states, sorted, in set pool */
    bool accept;
    int16_t forced;    /* FG_UNKNOWN, -1 none, or the one byte that may follow */
    int32_t list_n;    /* FG_UNKNOWN, -1 large, or the number of allowed tokens */
    int64_t list_off;  /* into lists */
    int32_t exact_n;   /* large states: FG_UNKNOWN, or the cached exact allowed set's size */
    int64_t exact_off; /* into exact */
};

struct fg_automaton {
    const struct fg_index *ix;
    struct nstate *nfa;
    size_t n_nfa, cap_nfa;
    uint8_t cls[256];
    int32_t n_cls;
    /* DFA */
    struct dstate *dfa;
    size_t n_dfa, cap_dfa;
    int32_t *trans; /* n_dfa * n_cls */
    size_t cap_trans;
    int32_t *sets;
    size_t n_sets, cap_sets;
    int32_t *hash; /* open addressing: DFA ids, -1 empty */
    size_t hash_cap;
    int32_t *lists;
    size_t n_lists, cap_lists;
    int32_t *exact; /* exact allowed sets of large states met on a rejected draw */
    size_t n_exact, cap_exact;
    int32_t start;
    /* on-disk cache (fg_automaton_load/store): what the file held or was written with */
    size_t disk_dfa, disk_lists, disk_exact;
    /* scratch */
    int32_t *mark; /* per NFA state: generation stamp */
    int32_t gen;
    int32_t *stack, *found;
    int32_t *walk_buf;
    size_t walk_cap;
};

static int32_t nfa_add(struct fg_automaton *a, struct parser *p, struct nstate s) {
    if (a->n_nfa >= FG_MAX_NFA_STATES) {
        perr(p, "grammar too large for the fast path");
        return -1;
    }
    if (!grow((void **)&a->nfa, &a->cap_nfa, a->n_nfa + 1, sizeof(struct nstate))) {
        perr(p, "out of memory");
        return -1;
    }
    a->nfa[a->n_nfa] = s;
    return (int32_t)a->n_nfa++;
}

static int32_t nfa_split(struct fg_automaton *a, struct parser *p, int32_t x, int32_t y) {
    return nfa_add(a, p, (struct nstate){x, y, 0, 0, 0});
}

static int32_t nfa_byte(struct fg_automaton *a, struct parser *p, int lo, int hi, int32_t next) {
    return nfa_add(a, p, (struct nstate){next, -1, (uint8_t)lo, (uint8_t)hi, 1});
}

/* UTF-8 byte-range sequences for the code points [lo, hi], as alternatives into `next`;
 * *alt accumulates the alternatives (-1 = none yet). */
static void utf8_ranges(struct fg_automaton *a,
                        struct parser *p,
                        uint32_t lo,
                        uint32_t hi,
                        int32_t next,
                        int32_t *alt) {
    static const uint32_t limits[3] = {0x7F, 0x7FF, 0xFFFF};
    if (p->failed) {
        return;
    }
    for (int i = 0; i < 3; i++) {
        if (lo <= limits[i] && hi > limits[i]) {
            utf8_ranges(a, p, lo, limits[i], next, alt);
            utf8_ranges(a, p, limits[i] + 1, hi, next, alt);
            return;
        }
    }
    uint8_t el[4], eh[4];
    size_t n = utf8_encode(lo, el);
    utf8_encode(hi, eh);
    for (size_t i = 1; i < n; i++) {
        uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                utf8_ranges(a, p, lo, lo | m, next, alt);
                utf8_ranges(a, p, (lo | m) + 1, hi, next, alt);
                return;
            }
            if ((hi & m) != m) {
                utf8_ranges(a, p, lo, (hi & ~m) - 1, next, alt);
                utf8_ranges(a, p, hi & ~m, hi, next, alt);
                return;
            }
        }
    }
    int32_t s = next;
    for (size_t k = n; k-- > 0;) {
        s = nfa_byte(a, p, el[k], eh[k], s);
    }
    *alt = *alt < 0 ? s : nfa_split(a, p, s, *alt);
}

/* Build `node` so that it continues into `next`; returns its start state. */
static int32_t build(struct fg_automaton *a, struct parser *p, int32_t node, int32_t next, int d) {
    if (p->failed || node < 0) {
        return -1;
    }
    if (d > FG_MAX_DEPTH) {
        perr(p, "rules nested too deep");
        return -1;
    }
    const struct node nd = p->nodes[node];
    switch (nd.kind) {
        case N_LIT: {
            int32_t s = next;
            for (int32_t i = nd.b; i-- > 0;) {
                uint8_t c = p->lit[nd.a + i];
                s = nfa_byte(a, p, c, c, s);
            }
            return s;
        }
        case N_CLASS: {
            int32_t alt = -1;
            for (int32_t i = 0; i < nd.b; i++) {
                utf8_ranges(a, p, p->ranges[nd.a + 2 * i], p->ranges[nd.a + 2 * i + 1], next, &alt);
            }
            return alt >= 0 ? alt : nfa_split(a, p, -1, -1); /* empty class: a dead end */
        }
        case N_SEQ: {
            int32_t s = next;
            for (int32_t i = nd.b; i-- > 0 && !p->failed;) {
                s = build(a, p, p->kids[nd.a + i], s, d + 1);
            }
            return s;
        }
        case N_ALT: {
            int32_t s = build(a, p, p->kids[nd.a + nd.b - 1], next, d + 1);
            for (int32_t i = nd.b - 1; i-- > 0 && !p->failed;) {
                s = nfa_split(a, p, build(a, p, p->kids[nd.a + i], next, d + 1), s);
            }
            return s;
        }
        case N_REF: {
            struct rule *r = &p->rules[nd.a];
            if (r->body < 0) {
                perr(p, "undefined rule");
                return -1;
            }
            for (size_t i = 0; i < r->n_memo; i++) {
                if (r->memo[2 * i] == next) {
                    return r->memo[2 * i + 1];
                }
            }
            if (r->in_progress) {
                perr(p, "recursive rules are outside the fast path");
                return -1;
            }
            r->in_progress = true;
            int32_t s = build(a, p, r->body, next, d + 1);
            r = &p->rules[nd.a];
            r->in_progress = false;
            if (s >= 0 && !p->failed) {
                if (!grow((void **)&r->memo, &r->cap_memo, 2 * (r->n_memo + 1), sizeof(int32_t))) {
                    perr(p, "out of memory");
                    return -1;
                }
                r->memo[2 * r->n_memo] = next;
                r->memo[2 * r->n_memo + 1] = s;
                r->n_memo++;
            }
            return s;
        }
        case N_REP: {
            int32_t s;
            if (nd.c < 0) {
                /* loop: L -> x -> L | next */
                int32_t loop = nfa_split(a, p, -1, next);
                int32_t body = build(a, p, nd.a, loop, d + 1);
                if (loop >= 0) {
                    a->nfa[loop].out = body;
                }
                s = loop;
            } else {
                /* up to (max - min) optional copies, nested: x (x (x)?)? */
                s = next;
                for (int32_t k = 0; k < nd.c - nd.b && !p->failed; k++) {
                    s = nfa_split(a, p, build(a, p, nd.a, s, d + 1), next);
                }
            }
            for (int32_t k = 0; k < nd.b && !p->failed; k++) {
                s = build(a, p, nd.a, s, d + 1);
            }
            return s;
        }
    }
    return -1;
}

/* ============================================================================ DFA */

static uint64_t hash_set(const int32_t *s, int32_t n) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
    for (int32_t i = 0; i < n; i++) {
        h = (h ^ (uint32_t)s[i]) * 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static int cmp_i32(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Epsilon closure of a->stack[0..n) into a->found (sorted important states); returns count. */
static int32_t closure(struct fg_automaton *a, int32_t n) {
    a->gen++;
    int32_t nf = 0;
    while (n > 0) {
        int32_t s = a->stack[--n];
        if (s < 0 || a->mark[s] == a->gen) {
            continue;
        }
        a->mark[s] = a->gen;
        const struct nstate *st = &a->nfa[s];
        if (st->is_byte || s == 0) {
            a->found[nf++] = s;
        } else {
            a->stack[n++] = st->out;
            a->stack[n++] = st->out2;
        }
    }
    qsort(a->found, (size_t)nf, sizeof(int32_t), cmp_i32);
    return nf;
}

static bool hash_grow(struct fg_automaton *a) {
    size_t cap = a->hash_cap > 0 ? a->hash_cap * 2 : 1024;
    int32_t *h = malloc(sizeof(int32_t) * cap);
    if (h == NULL) {
        return false;
    }
    for (size_t i = 0; i < cap; i++) {
        h[i] = -1;
    }
    for (size_t d = 0; d < a->n_dfa; d++) {
        uint64_t k = hash_set(a->sets + a->dfa[d].set_off, a->dfa[d].set_n);
        size_t i = (size_t)k & (cap - 1);
        while (h[i] >= 0) {
            i = (i + 1) & (cap - 1);
        }
        h[i] = (int32_t)d;
    }
    free(a->hash);
    a->hash = h;
    a->hash_cap = cap;
    return true;
}

/* The DFA state of the set a->found[0..n): found or created. FG_DEAD for the empty set or when
 * out of memory / states. */
static int32_t intern(struct fg_automaton *a, int32_t n) {
    if (n == 0) {
        return FG_DEAD;
    }
    if ((a->n_dfa + 1) * 2 > a->hash_cap && !hash_grow(a)) {
        return FG_DEAD;
    }
    uint64_t k = hash_set(a->found, n);
    size_t i = (size_t)k & (a->hash_cap - 1);
    while (a->hash[i] >= 0) {
        const struct dstate *d = &a->dfa[a->hash[i]];
        if (d->set_n == n && memcmp(a->sets + d->set_off, a->found, sizeof(int32_t) * n) == 0) {
            return a->hash[i];
        }
        i = (i + 1) & (a->hash_cap - 1);
    }
    if (a->n_dfa >= FG_MAX_DFA_STATES ||
        !grow((void **)&a->dfa, &a->cap_dfa, a->n_dfa + 1, sizeof(struct dstate)) ||
        !grow((void **)&a->sets, &a->cap_sets, a->n_sets + (size_t)n, sizeof(int32_t)) ||
        !grow((void **)&a->trans, &a->cap_trans, (a->n_dfa + 1) * (size_t)a->n_cls,
              sizeof(int32_t))) {
        return FG_DEAD;
    }
    int32_t id = (int32_t)a->n_dfa++;
    memcpy(a->sets + a->n_sets, a->found, sizeof(int32_t) * n);
    bool accept = a->found[0] == 0;
    a->dfa[id] =
        (struct dstate){(int32_t)a->n_sets, n, accept, FG_UNKNOWN, FG_UNKNOWN, 0, FG_UNKNOWN, 0};
    a->n_sets += (size_t)n;
    for (int32_t c = 0; c < a->n_cls; c++) {
        a->trans[(size_t)id * (size_t)a->n_cls + (size_t)c] = FG_UNKNOWN;
    }
    a->hash[i] = id;
    return id;
}

static inline int32_t delta(struct fg_automaton *a, int32_t s, uint8_t b) {
    size_t at = (size_t)s * (size_t)a->n_cls + a->cls[b];
    int32_t v = a->trans[at];
    if (v != FG_UNKNOWN) {
        return v;
    }
    const struct dstate *d = &a->dfa[s];
    int32_t n = 0;
    for (int32_t i = 0; i < d->set_n; i++) {
        const struct nstate *st = &a->nfa[a->sets[d->set_off + i]];
        if (st->is_byte && st->lo <= b && b <= st->hi) {
            a->stack[n++] = st->out;
        }
    }
    v = intern(a, closure(a, n));
    a->trans[at] = v; /* trans may have moved: index again */
    return v;
}

/* ============================================================================ compile */

void fg_automaton_free(struct fg_automaton *a) {
    if (a == NULL) {
        return;
    }
    free(a->nfa);
    free(a->dfa);
    free(a->trans);
    free(a->sets);
    free(a->hash);
    free(a->lists);
    free(a->exact);
    free(a->mark);
    free(a->stack);
    free(a->found);
    free(a->walk_buf);
    free(a);
}

static void parser_free(struct parser *p) {
    for (size_t i = 0; p->rules != NULL && i < p->n_rules; i++) {
        free(p->rules[i].memo);
    }
    free(p->nodes);
    free(p->kids);
    free(p->lit);
    free(p->ranges);
    free(p->rules);
}

enum pipit_status fg_automaton_new(const struct fg_index *ix,
                                   const char *gbnf,
                                   struct fg_automaton **out,
                                   char *msg,
                                   size_t msg_size) {
    char dummy[8];
    if (msg == NULL || msg_size == 0) {
        msg = dummy;
        msg_size = sizeof(dummy);
    }
    msg[0] = '\0';
    *out = NULL;
    if (gbnf == NULL) { /* ix NULL: an automaton for pipit_fastgrammar_check() only */
        return PIPIT_ERR_INVALID_ARG;
    }
    struct parser p = {.s = gbnf, .msg = msg, .msg_size = msg_size};
    struct fg_automaton *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    a->ix = ix;
    parse_grammar(&p);
    int32_t root = -1;
    for (size_t i = 0; !p.failed && i < p.n_rules; i++) {
        if (strcmp(p.rules[i].name, "root") == 0) {
            root = (int32_t)i;
        }
    }
    if (!p.failed && root < 0) {
        perr(&p, "no root rule");
    }
    if (!p.failed) {
        nfa_split(a, &p, -1, -1); /* state 0: final */
        int32_t body = new_node(&p, N_REF, root, 0, 0);
        int32_t start = build(a, &p, body, 0, 0);
        /* the start state is an epsilon into `start` (state 0 must stay final) */
        if (!p.failed) {
            a->start = start;
        }
    }
    enum pipit_status st = p.failed ? PIPIT_ERR_GRAMMAR : PIPIT_OK;
    if (st == PIPIT_OK &&
        (st = (a->mark = calloc(a->n_nfa, sizeof(int32_t))) != NULL &&
                      (a->stack = malloc(sizeof(int32_t) * (3 * a->n_nfa + 4))) != NULL &&
                      (a->found = malloc(sizeof(int32_t) * a->n_nfa)) != NULL
                  ? PIPIT_OK
                  : PIPIT_ERR_NOMEM) == PIPIT_OK) {
        /* byte classes: every range edge is a class boundary */
        bool cut[257] = {false};
        cut[0] = true;
        for (size_t i = 0; i < a->n_nfa; i++) {
            if (a->nfa[i].is_byte) {
                cut[a->nfa[i].lo] = true;
                cut[a->nfa[i].hi + 1] = true;
            }
        }
        int32_t c = -1;
        for (int b = 0; b < 256; b++) {
            c += cut[b] ? 1 : 0;
            a->cls[b] = (uint8_t)c;
        }
        a->n_cls = c + 1;
        a->stack[0] = a->start;
        a->start = intern(a, closure(a, 1));
        if (a->start < 0) {
            snprintf(msg, msg_size, "fastgrammar: the grammar accepts nothing");
            st = PIPIT_ERR_GRAMMAR;
        }
    }
    parser_free(&p);
    if (st != PIPIT_OK) {
        fg_automaton_free(a);
        return st;
    }
    *out = a;
    return PIPIT_OK;
}

/* ============================================================================ queries */

int32_t fg_start(const struct fg_automaton *a) {
    return a->start;
}

bool fg_accepting(const struct fg_automaton *a, int32_t state) {
    return state >= 0 && a->dfa[state].accept;
}

int32_t fg_step_bytes(struct fg_automaton *a, int32_t state, const char *bytes, size_t n) {
    for (size_t i = 0; i < n && state >= 0; i++) {
        state = delta(a, state, (uint8_t)bytes[i]);
    }
    return state;
}

int32_t fg_step_token(struct fg_automaton *a, int32_t state, int32_t token) {
    int32_t n;
    const char *p = fg_index_piece(a->ix, token, &n);
    if (p == NULL) {
        return FG_DEAD;
    }
    return fg_step_bytes(a, state, p, (size_t)n);
}

/* Depth-first walk of the trie below `node` in lockstep with the DFA from `state`; tokens go to
 * a->walk_buf. Returns false when more than `limit` tokens were found. */
static bool walk(struct fg_automaton *a, int32_t node, int32_t state, size_t *n, size_t limit) {
    const struct fg_index *ix = a->ix;
    for (int32_t c = ix->child[node]; c >= 0; c = ix->sibling[c]) {
        int32_t t = delta(a, state, ix->byte[c]);
        if (t < 0) {
            continue;
        }
        for (int32_t tok = ix->tok[c]; tok >= 0; tok = ix->tok_next[tok]) {
            if (*n >= limit) {
                return false;
            }
            if (!grow((void **)&a->walk_buf, &a->walk_cap, *n + 1, sizeof(int32_t))) {
                return false;
            }
            a->walk_buf[(*n)++] = tok;
        }
        if (ix->child[c] >= 0 && !walk(a, c, t, n, limit)) {
            return false;
        }
    }
    return true;
}

static bool wide_state(const struct fg_automaton *a, int32_t state);

/* fg_candidates' walk: narrow states are followed byte by byte; at a string body the whole
 * subtree is taken unchecked. */
static bool walk_candidates(struct fg_automaton *a, int32_t node, int32_t state, size_t *n) {
    const struct fg_index *ix = a->ix;
    for (int32_t c = ix->child[node]; c >= 0; c = ix->sibling[c]) {
        int32_t t = delta(a, state, ix->byte[c]);
        if (t < 0) {
            continue;
        }
        bool whole = wide_state(a, t);
        int32_t from = ix->node_tok_start[c];
        int32_t to = whole ? ix->node_tok_start[ix->sub_end[c]] : ix->node_tok_start[c + 1];
        if (to > from) {
            if (!grow((void **)&a->walk_buf, &a->walk_cap, *n + (size_t)(to - from),
                      sizeof(int32_t))) {
                return false;
            }
            memcpy(a->walk_buf + *n, ix->tok_by_node + from, sizeof(int32_t) * (size_t)(to - from));
            *n += (size_t)(to - from);
        }
        if (!whole && ix->child[c] >= 0 && !walk_candidates(a, c, t, n)) {
            return false;
        }
    }
    return true;
}

int32_t fg_refused_first(struct fg_automaton *a, int32_t state, const int32_t **tokens) {
    *tokens = NULL;
    const struct fg_index *ix = a->ix;
    if (state < 0 || ix->sub_end == NULL || ix->n_nodes == 0) {
        return -1;
    }
    size_t n = 0;
    for (int32_t c = ix->child[0]; c >= 0; c = ix->sibling[c]) {
        if (delta(a, state, ix->byte[c]) >= 0) {
            continue;
        }
        int32_t from = ix->node_tok_start[c], to = ix->node_tok_start[ix->sub_end[c]];
        if (!grow((void **)&a->walk_buf, &a->walk_cap, n + (size_t)(to - from), sizeof(int32_t))) {
            return -1;
        }
        memcpy(a->walk_buf + n, ix->tok_by_node + from, sizeof(int32_t) * (size_t)(to - from));
        n += (size_t)(to - from);
    }
    *tokens = a->walk_buf;
    return (int32_t)n;
}

int32_t fg_candidates(struct fg_automaton *a, int32_t state, const int32_t **tokens) {
    *tokens = NULL;
    if (state < 0 || a->ix->sub_end == NULL || a->ix->n_nodes == 0) {
        return -1;
    }
    size_t n = 0;
    if (!walk_candidates(a, 0, state, &n)) {
        return -1;
    }
    *tokens = a->walk_buf;
    return (int32_t)n;
}

/* walk() restricted to the subtrees that hold FG_SPECIAL_QUOTE tokens, collecting those only. */
static bool walk_special(struct fg_automaton *a, int32_t node, int32_t state, size_t *n) {
    const struct fg_index *ix = a->ix;
    for (int32_t c = ix->child[node]; c >= 0; c = ix->sibling[c]) {
        if (!ix->sub_special[c]) {
            continue;
        }
        int32_t t = delta(a, state, ix->byte[c]);
        if (t < 0) {
            continue;
        }
        for (int32_t tok = ix->tok[c]; tok >= 0 && ix->tok_special[tok] == FG_SPECIAL_QUOTE;
             tok = ix->tok_next[tok]) {
            if (!grow((void **)&a->walk_buf, &a->walk_cap, *n + 1, sizeof(int32_t))) {
                return false;
            }
            a->walk_buf[(*n)++] = tok;
        }
        if (ix->child[c] >= 0 && !walk_special(a, c, t, n)) {
            return false;
        }
    }
    return true;
}

bool fg_refuses_hard(struct fg_automaton *a, int32_t state) {
    bool refused =
        state >= 0 && (size_t)state < a->n_dfa && wide_state(a, state) && delta(a, state, '\\') < 0;
    for (int b = 0; b < 0x20 && refused; b++) {
        refused = delta(a, state, (uint8_t)b) < 0;
    }
    return refused;
}

int32_t fg_allowed_special(struct fg_automaton *a, int32_t state, const int32_t **tokens) {
    *tokens = NULL;
    if (state < 0 || a->ix->n_nodes == 0) {
        return 0;
    }
    size_t n = 0;
    bool hard_refused = fg_refuses_hard(a, state);
    if (hard_refused && !walk_special(a, 0, state, &n)) {
        return -1;
    }
    if (!hard_refused) {
        /* escapes or control bytes may follow: check every special token */
        for (int32_t k = 0; k < a->ix->n_special; k++) {
            if (fg_step_token(a, state, a->ix->special[k]) >= 0) {
                if (!grow((void **)&a->walk_buf, &a->walk_cap, n + 1, sizeof(int32_t))) {
                    return -1;
                }
                a->walk_buf[n++] = a->ix->special[k];
            }
        }
    }
    *tokens = a->walk_buf;
    return (int32_t)n;
}

/* Whether `state` lets at least FG_WIDE_BYTES distinct bytes follow (read off its NFA set, no
 * determinization): a string body, where nearly every token fits, so a token list would be
 * long and its walk slow. */
static bool wide_state(const struct fg_automaton *a, int32_t state) {
    uint64_t bits[4] = {0, 0, 0, 0};
    const struct dstate *d = &a->dfa[state];
    for (int32_t i = 0; i < d->set_n; i++) {
        const struct nstate *st = &a->nfa[a->sets[d->set_off + i]];
        if (!st->is_byte) {
            continue;
        }
        for (int b = st->lo; b <= st->hi; b++) {
            bits[b >> 6] |= 1ull << (b & 63);
        }
    }
    int n = 0;
    for (int k = 0; k < 4; k++) {
        n += __builtin_popcountll(bits[k]);
    }
    return n >= FG_WIDE_BYTES;
}

bool fg_wide(const struct fg_automaton *a, int32_t state) {
    return state >= 0 && (size_t)state < a->n_dfa && wide_state(a, state);
}

int32_t fg_allowed(struct fg_automaton *a, int32_t state, const int32_t **tokens) {
    *tokens = NULL;
    if (state < 0) {
        return 0;
    }
    if (a->dfa[state].list_n == FG_UNKNOWN && wide_state(a, state)) {
        a->dfa[state].list_n = -1; /* a string body: large, known without a walk */
    }
    if (a->dfa[state].list_n == FG_UNKNOWN) {
        size_t n = 0;
        bool small = walk(a, 0, state, &n, FG_LARGE_LIMIT);
        if (!small) {
            a->dfa[state].list_n = -1;
        } else if (grow((void **)&a->lists, &a->cap_lists, a->n_lists + n, sizeof(int32_t))) {
            memcpy(a->lists + a->n_lists, a->walk_buf, sizeof(int32_t) * n);
            a->dfa[state].list_off = (int64_t)a->n_lists;
            a->dfa[state].list_n = (int32_t)n;
            a->n_lists += n;
        } else {
            return -1; /* out of memory: treat as large (draw and check) */
        }
    }
    const struct dstate *d = &a->dfa[state];
    if (d->list_n >= 0) {
        *tokens = a->lists + d->list_off;
    }
    return d->list_n;
}

int32_t fg_allowed_exact(struct fg_automaton *a, int32_t state, const int32_t **tokens) {
    *tokens = NULL;
    if (state < 0) {
        return 0;
    }
    int32_t n = fg_allowed(a, state, tokens);
    if (n >= 0) {
        return n;
    }
    struct dstate *d = &a->dfa[state];
    if (d->exact_n == FG_UNKNOWN) {
        size_t m = 0;
        if (!walk(a, 0, state, &m, (size_t)a->ix->n_vocab + 1)) {
            return -1; /* out of memory mid-walk */
        }
        if (a->n_exact + m > FG_EXACT_POOL ||
            !grow((void **)&a->exact, &a->cap_exact, a->n_exact + m, sizeof(int32_t))) {
            *tokens = a->walk_buf; /* the pool is full: this set is not kept */
            return (int32_t)m;
        }
        memcpy(a->exact + a->n_exact, a->walk_buf, sizeof(int32_t) * m);
        d->exact_off = (int64_t)a->n_exact;
        d->exact_n = (int32_t)m;
        a->n_exact += m;
    }
    *tokens = a->exact + d->exact_off;
    return d->exact_n;
}

bool fg_exact_cached(const struct fg_automaton *a, int32_t state) {
    return state >= 0 && (size_t)state < a->n_dfa && a->dfa[state].exact_n >= 0;
}

int32_t fg_allowed_all(struct fg_automaton *a, int32_t state, int32_t *out) {
    if (state < 0) {
        return 0;
    }
    size_t n = 0;
    if (!walk(a, 0, state, &n, (size_t)a->ix->n_vocab + 1)) {
        /* out of memory mid-walk: fall back to checking token by token */
        n = 0;
        for (int32_t t = 0; t < a->ix->n_vocab; t++) {
            if (fg_step_token(a, state, t) >= 0) {
                out[n++] = t;
            }
        }
        return (int32_t)n;
    }
    memcpy(out, a->walk_buf, sizeof(int32_t) * n);
    return (int32_t)n;
}

/* The one byte that may follow `state`, or -1. */
static int forced_byte(struct fg_automaton *a, int32_t state) {
    struct dstate *d = &a->dfa[state];
    if (d->forced != FG_UNKNOWN) {
        return d->forced;
    }
    int b = -1;
    if (!d->accept) {
        for (int32_t i = 0; i < d->set_n; i++) {
            const struct nstate *st = &a->nfa[a->sets[d->set_off + i]];
            if (st->lo != st->hi || (b >= 0 && st->lo != b)) {
                b = -1;
                break;
            }
            b = st->lo;
        }
    }
    d->forced = (int16_t)b;
    return b;
}

size_t fg_forced_text(struct fg_automaton *a, int32_t state, char *buf, size_t cap) {
    size_t n = 0;
    while (state >= 0 && n < cap) {
        int b = forced_byte(a, state);
        if (b < 0) {
            break;
        }
        buf[n++] = (char)b;
        state = delta(a, state, (uint8_t)b);
    }
    return n;
}

void fg_automaton_stats(const struct fg_automaton *a, struct fg_stats *st) {
    memset(st, 0, sizeof(*st));
    st->nfa_states = (int32_t)a->n_nfa;
    st->dfa_states = (int32_t)a->n_dfa;
    st->byte_classes = a->n_cls;
    for (size_t i = 0; i < a->n_dfa; i++) {
        if (a->dfa[i].list_n >= 0) {
            st->listed_states++;
            st->listed_tokens += a->dfa[i].list_n;
        }
    }
    st->bytes = sizeof(*a) + a->cap_nfa * sizeof(struct nstate) +
                a->cap_dfa * sizeof(struct dstate) + a->cap_trans * sizeof(int32_t) +
                a->cap_sets * sizeof(int32_t) + a->hash_cap * sizeof(int32_t) +
                a->cap_lists * sizeof(int32_t) + a->cap_exact * sizeof(int32_t) +
                a->n_nfa * 4 * sizeof(int32_t) + a->walk_cap * sizeof(int32_t);
}

int32_t fg_automaton_precompute(struct fg_automaton *a, int32_t max_states) {
    /* breadth-first over the DFA through every byte: states are materialized in id order */
    int32_t done = 0;
    for (size_t s = (size_t)a->start; s < a->n_dfa && done < max_states; s++, done++) {
        for (int b = 0; b < 256; b++) {
            delta(a, (int32_t)s, (uint8_t)b);
        }
        const int32_t *toks;
        fg_allowed(a, (int32_t)s, &toks);
    }
    return done;
}

/* ============================================================================ automaton cache */

/* A compiled grammar's materialized DFA (states, transitions, token lists, exact sets) on disk,
 * next to the vocabulary index: "auto-<key>.fga", the key hashing a format version, the
 * vocabulary's key, the NFA's shape and the GBNF text. The NFA is rebuilt from the text on
 * every start (deterministic, well under a millisecond); the file restores what the lazy
 * walks found, so a second start samples from token lists at once. */

#define FGA_MAGIC   "PIPITFGA"
#define FGA_VERSION 1u
#define FGA_HEAD    96
#define FGA_WORDS   6 /* int64 fields per DFA state in the file */

uint64_t fg_hash_words(uint64_t h, const void *data, size_t n) {
    return hash_words(h, data, n);
}

uint64_t fg_automaton_key(const struct fg_automaton *a, const char *gbnf) {
    if (a->ix->key == 0) {
        return 0;
    }
    uint64_t head[4] = {FGA_VERSION, a->ix->key, (uint64_t)a->n_nfa, (uint64_t)a->n_cls};
    uint64_t h = hash_words(FILEIO_FNV_OFFSET, head, sizeof(head));
    h = hash_words(h, gbnf, strlen(gbnf));
    return h != 0 ? h : 1;
}

bool fg_automaton_cache_path(char *buf, size_t cap, const char *dir, uint64_t key) {
    int n = snprintf(buf, cap, "%s/auto-%016llx.fga", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < cap;
}

static void state_words(const struct dstate *d, int64_t w[FGA_WORDS]) {
    w[0] = d->set_off;
    w[1] = d->set_n;
    w[2] = d->list_n;
    w[3] = d->list_off;
    w[4] = d->exact_n;
    w[5] = d->exact_off;
}

struct fga_payload {
    int64_t *words; /* n_dfa * FGA_WORDS */
    int32_t *trans; /* n_dfa * n_cls */
    int32_t *sets, *lists, *exact;
    size_t n_dfa, n_cls, n_sets, n_lists, n_exact;
};

static uint64_t fga_sum(const struct fga_payload *p) {
    uint64_t h = FILEIO_FNV_OFFSET;
    h = hash_words(h, p->words, sizeof(int64_t) * p->n_dfa * FGA_WORDS);
    h = hash_words(h, p->trans, sizeof(int32_t) * p->n_dfa * p->n_cls);
    h = hash_words(h, p->sets, sizeof(int32_t) * p->n_sets);
    h = hash_words(h, p->lists, sizeof(int32_t) * p->n_lists);
    return hash_words(h, p->exact, sizeof(int32_t) * p->n_exact);
}

static void fga_free(struct fga_payload *p) {
    free(p->words);
    free(p->trans);
    free(p->sets);
    free(p->lists);
    free(p->exact);
}

static bool span_ok(int64_t off, int64_t n, size_t total) {
    return off >= 0 && n >= 0 && (uint64_t)off + (uint64_t)n <= (uint64_t)total;
}

static bool tokens_ok(const int32_t *t, size_t n, int32_t n_vocab) {
    for (size_t i = 0; i < n; i++) {
        if (t[i] < 0 || t[i] >= n_vocab) {
            return false;
        }
    }
    return true;
}

/* Every state of `p` well-formed for `a`: sets of important NFA states, sorted, distinct from
 * each other (a fresh hash table is built on the way, into *hash_out), the start state's set
 * first, spans inside their pools, tokens and transitions in range. */
static bool fga_valid(const struct fg_automaton *a,
                      const struct fga_payload *p,
                      int32_t **hash_out,
                      size_t *hash_cap_out) {
    const struct dstate *s0 = &a->dfa[a->start];
    size_t hcap = 1024;
    while (hcap < 2 * (p->n_dfa + 1)) {
        hcap *= 2;
    }
    int32_t *h = malloc(sizeof(int32_t) * hcap);
    bool ok = h != NULL && tokens_ok(p->lists, p->n_lists, a->ix->n_vocab) &&
              tokens_ok(p->exact, p->n_exact, a->ix->n_vocab);
    for (size_t i = 0; ok && i < hcap; i++) {
        h[i] = -1;
    }
    for (size_t d = 0; ok && d < p->n_dfa; d++) {
        const int64_t *w = p->words + d * FGA_WORDS;
        ok = w[1] >= 1 && span_ok(w[0], w[1], p->n_sets) &&
             (w[2] == FG_UNKNOWN || w[2] == -1 ||
              (w[2] <= FG_LARGE_LIMIT && span_ok(w[3], w[2], p->n_lists))) &&
             (w[4] == FG_UNKNOWN || (w[4] <= a->ix->n_vocab && span_ok(w[5], w[4], p->n_exact)));
        const int32_t *set = ok ? p->sets + w[0] : NULL;
        for (int64_t i = 0; ok && i < w[1]; i++) {
            ok = set[i] >= 0 && (size_t)set[i] < a->n_nfa && (i == 0 || set[i] > set[i - 1]) &&
                 (set[i] == 0 || a->nfa[set[i]].is_byte);
        }
        if (ok && d == 0) {
            ok = w[1] == s0->set_n &&
                 memcmp(set, a->sets + s0->set_off, sizeof(int32_t) * (size_t)w[1]) == 0;
        }
        if (ok) {
            size_t i = (size_t)hash_set(set, (int32_t)w[1]) & (hcap - 1);
            for (; ok && h[i] >= 0; i = (i + 1) & (hcap - 1)) {
                const int64_t *o = p->words + (size_t)h[i] * FGA_WORDS;
                ok = !(o[1] == w[1] &&
                       memcmp(p->sets + o[0], set, sizeof(int32_t) * (size_t)w[1]) == 0);
            }
            if (ok) {
                h[i] = (int32_t)d;
            }
        }
    }
    for (size_t i = 0; ok && i < p->n_dfa * p->n_cls; i++) {
        int32_t t = p->trans[i];
        ok = t == FG_UNKNOWN || t == FG_DEAD || (t >= 0 && (size_t)t < p->n_dfa);
    }
    if (!ok) {
        free(h);
        return false;
    }
    *hash_out = h;
    *hash_cap_out = hcap;
    return true;
}

bool fg_automaton_load(struct fg_automaton *a, const char *path, uint64_t key) {
    if (a->n_dfa != 1 || a->start != 0 || key == 0) {
        return false; /* only into a freshly compiled automaton */
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    uint8_t head[FGA_HEAD];
    struct fga_payload p = {0};
    uint32_t version = 0, endian = 0;
    uint64_t fkey = 0, n_dfa = 0, n_cls = 0, psum = 0, hsum = 0;
    bool ok = read_exact(f, head, sizeof(head));
    if (ok) {
        memcpy(&version, head + 8, 4);
        memcpy(&endian, head + 12, 4);
        memcpy(&fkey, head + 16, 8);
        memcpy(&n_dfa, head + 24, 8);
        memcpy(&n_cls, head + 32, 8);
        memcpy(&p.n_sets, head + 40, 8);
        memcpy(&p.n_lists, head + 48, 8);
        memcpy(&p.n_exact, head + 56, 8);
        memcpy(&psum, head + 64, 8);
        memcpy(&hsum, head + 72, 8);
        ok = memcmp(head, FGA_MAGIC, 8) == 0 && version == FGA_VERSION && endian == 0x01020304u &&
             fkey == key && n_dfa >= 1 && n_dfa <= FG_MAX_DFA_STATES &&
             n_cls == (uint64_t)a->n_cls && p.n_sets <= n_dfa * (uint64_t)a->n_nfa &&
             p.n_lists <= n_dfa * (uint64_t)FG_LARGE_LIMIT && p.n_exact <= FG_EXACT_POOL &&
             hsum == hash_words(FILEIO_FNV_OFFSET, head, 72) &&
             memcmp(head + 80, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16) == 0;
    }
    if (ok) {
        p.n_dfa = (size_t)n_dfa;
        p.n_cls = (size_t)n_cls;
        p.words = malloc(sizeof(int64_t) * p.n_dfa * FGA_WORDS);
        p.trans = malloc(sizeof(int32_t) * p.n_dfa * p.n_cls);
        p.sets = malloc(sizeof(int32_t) * (p.n_sets > 0 ? p.n_sets : 1));
        p.lists = malloc(sizeof(int32_t) * (p.n_lists > 0 ? p.n_lists : 1));
        p.exact = malloc(sizeof(int32_t) * (p.n_exact > 0 ? p.n_exact : 1));
        ok = p.words != NULL && p.trans != NULL && p.sets != NULL && p.lists != NULL &&
             p.exact != NULL && read_exact(f, p.words, sizeof(int64_t) * p.n_dfa * FGA_WORDS) &&
             read_exact(f, p.trans, sizeof(int32_t) * p.n_dfa * p.n_cls) &&
             read_exact(f, p.sets, sizeof(int32_t) * p.n_sets) &&
             read_exact(f, p.lists, sizeof(int32_t) * p.n_lists) &&
             read_exact(f, p.exact, sizeof(int32_t) * p.n_exact) && fgetc(f) == EOF &&
             fga_sum(&p) == psum;
    }
    fclose(f);
    int32_t *hash = NULL;
    size_t hash_cap = 0;
    struct dstate *dfa = NULL;
    ok = ok && fga_valid(a, &p, &hash, &hash_cap) &&
         (dfa = malloc(sizeof(struct dstate) * p.n_dfa)) != NULL;
    if (!ok) {
        free(hash);
        fga_free(&p);
        return false;
    }
    for (size_t d = 0; d < p.n_dfa; d++) {
        const int64_t *w = p.words + d * FGA_WORDS;
        dfa[d] = (struct dstate){
            .set_off = (int32_t)w[0],
            .set_n = (int32_t)w[1],
            .accept = p.sets[w[0]] == 0,
            .forced = FG_UNKNOWN, /* recomputed on demand */
            .list_n = (int32_t)w[2],
            .list_off = w[3],
            .exact_n = (int32_t)w[4],
            .exact_off = w[5],
        };
    }
    free(a->dfa);
    free(a->trans);
    free(a->sets);
    free(a->hash);
    free(a->lists);
    free(a->exact);
    free(p.words);
    a->dfa = dfa;
    a->n_dfa = a->cap_dfa = p.n_dfa;
    a->trans = p.trans;
    a->cap_trans = p.n_dfa * p.n_cls;
    a->sets = p.sets;
    a->n_sets = p.n_sets;
    a->cap_sets = p.n_sets > 0 ? p.n_sets : 1;
    a->hash = hash;
    a->hash_cap = hash_cap;
    a->lists = p.lists;
    a->n_lists = p.n_lists;
    a->cap_lists = p.n_lists > 0 ? p.n_lists : 1;
    a->exact = p.exact;
    a->n_exact = p.n_exact;
    a->cap_exact = p.n_exact > 0 ? p.n_exact : 1;
    a->disk_dfa = a->n_dfa;
    a->disk_lists = a->n_lists;
    a->disk_exact = a->n_exact;
    return true;
}

bool fg_automaton_dirty(const struct fg_automaton *a) {
    return a->n_dfa > a->disk_dfa || a->n_lists > a->disk_lists || a->n_exact > a->disk_exact;
}

bool fg_automaton_store(struct fg_automaton *a, const char *path, uint64_t key) {
    if (key == 0) {
        return false;
    }
    struct fga_payload p = {.trans = a->trans,
                            .sets = a->sets,
                            .lists = a->lists,
                            .exact = a->exact,
                            .n_dfa = a->n_dfa,
                            .n_cls = (size_t)a->n_cls,
                            .n_sets = a->n_sets,
                            .n_lists = a->n_lists,
                            .n_exact = a->n_exact};
    p.words = malloc(sizeof(int64_t) * p.n_dfa * FGA_WORDS);
    if (p.words == NULL) {
        return false;
    }
    for (size_t d = 0; d < p.n_dfa; d++) {
        state_words(&a->dfa[d], p.words + d * FGA_WORDS);
    }
    uint8_t head[FGA_HEAD];
    memset(head, 0, sizeof(head));
    uint32_t version = FGA_VERSION, endian = 0x01020304u;
    uint64_t n_dfa = p.n_dfa, n_cls = p.n_cls, psum = fga_sum(&p);
    memcpy(head, FGA_MAGIC, 8);
    memcpy(head + 8, &version, 4);
    memcpy(head + 12, &endian, 4);
    memcpy(head + 16, &key, 8);
    memcpy(head + 24, &n_dfa, 8);
    memcpy(head + 32, &n_cls, 8);
    memcpy(head + 40, &p.n_sets, 8);
    memcpy(head + 48, &p.n_lists, 8);
    memcpy(head + 56, &p.n_exact, 8);
    memcpy(head + 64, &psum, 8);
    uint64_t hsum = hash_words(FILEIO_FNV_OFFSET, head, 72);
    memcpy(head + 72, &hsum, 8);
    struct fileio_tmp w;
    FILE *f = fileio_begin(&w, path) ? w.f : NULL;
    bool ok = f != NULL && fwrite(head, 1, sizeof(head), f) == sizeof(head) &&
              fwrite(p.words, sizeof(int64_t) * FGA_WORDS, p.n_dfa, f) == p.n_dfa &&
              write_i32(f, p.trans, p.n_dfa * p.n_cls) && write_i32(f, p.sets, p.n_sets) &&
              write_i32(f, p.lists, p.n_lists) && write_i32(f, p.exact, p.n_exact);
    free(p.words);
    if (f == NULL || !fileio_commit(&w, ok, FILEIO_DISPOSABLE)) {
        return false;
    }
    a->disk_dfa = a->n_dfa;
    a->disk_lists = a->n_lists;
    a->disk_exact = a->n_exact;
    return true;
}

/* ============================================================================ public handle */

#define FG_MAX_GRAMMARS 512

struct fg_entry {
    uint64_t hash;
    char *gbnf;
    struct fg_automaton *a; /* NULL: outside the subset */
    uint64_t disk_key;      /* fg_automaton_key(), 0 when the on-disk cache is off */
    bool from_disk;         /* its states came from the on-disk cache */
};

struct pipit_fastgrammar {
    const struct pipit_model *model;
    struct fg_index *ix;
    struct fg_entry *entries;
    size_t n_entries, cap_entries;
    double t_index_ms, t_compile_ms;
    bool index_cached; /* the trie came from the on-disk cache */
    char *cache_dir;   /* the on-disk cache directory, NULL when off */
    int32_t *scratch;  /* fg_scratch() */
    uint32_t *stamp;
    uint32_t stamp_gen;
};

static uint64_t hash_text(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return h;
}

enum pipit_status pipit_fastgrammar_init(const struct pipit_model *model,
                                         struct pipit_fastgrammar **out,
                                         struct pipit_error *err) {
    pipit_error_clear(err);
    if (model == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "fastgrammar: NULL argument");
    }
    *out = NULL;
    struct pipit_fastgrammar *fg = calloc(1, sizeof(*fg));
    if (fg == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "fastgrammar: out of memory");
    }
    fg->model = model;
    double t0 = pipit_now_ms();
    char dir[4096];
    bool use_cache = fg_cache_dir(dir, sizeof(dir));
    enum pipit_status st =
        fg_index_new_cached(model, use_cache ? dir : NULL, &fg->index_cached, &fg->ix);
    fg->t_index_ms = pipit_now_ms() - t0;
    size_t nv = st == PIPIT_OK ? (size_t)fg->ix->n_vocab + 1 : 0;
    if (st == PIPIT_OK && ((use_cache && (fg->cache_dir = strdup(dir)) == NULL) ||
                           (fg->scratch = malloc(sizeof(int32_t) * nv)) == NULL ||
                           (fg->stamp = malloc(sizeof(uint32_t) * nv)) == NULL)) {
        free(fg->cache_dir);
        free(fg->scratch);
        fg_index_free(fg->ix);
        st = PIPIT_ERR_NOMEM;
    }
    if (st == PIPIT_OK) { /* touch every page now, not in a sampler's first steps */
        memset(fg->scratch, 0, sizeof(int32_t) * nv);
        memset(fg->stamp, 0, sizeof(uint32_t) * nv);
    }
    if (st != PIPIT_OK) {
        free(fg);
        return pipit_error_set(err, st, "fastgrammar: cannot index the vocabulary: %s",
                               pipit_status_str(st));
    }
    *out = fg;
    return PIPIT_OK;
}

int32_t pipit_fastgrammar_save(struct pipit_fastgrammar *fg) {
    int32_t n = 0;
    for (size_t i = 0; fg != NULL && fg->cache_dir != NULL && i < fg->n_entries; i++) {
        struct fg_entry *e = &fg->entries[i];
        char path[4200];
        if (e->a == NULL || e->disk_key == 0 || !fg_automaton_dirty(e->a) ||
            !fg_automaton_cache_path(path, sizeof(path), fg->cache_dir, e->disk_key)) {
            continue;
        }
        if (fg_automaton_store(e->a, path, e->disk_key)) {
            n++;
        } else {
            pipit_log(PIPIT_LOG_DEBUG, "fastgrammar: cannot write the mask cache %s", path);
        }
    }
    return n;
}

void pipit_fastgrammar_free(struct pipit_fastgrammar *fg) {
    if (fg == NULL) {
        return;
    }
    pipit_fastgrammar_save(fg);
    free(fg->cache_dir);
    free(fg->scratch);
    free(fg->stamp);
    for (size_t i = 0; i < fg->n_entries; i++) {
        free(fg->entries[i].gbnf);
        fg_automaton_free(fg->entries[i].a);
    }
    free(fg->entries);
    fg_index_free(fg->ix);
    free(fg);
}

enum pipit_status fg_lookup(struct pipit_fastgrammar *fg,
                            const char *gbnf,
                            struct fg_automaton **out,
                            char *msg,
                            size_t msg_size) {
    char local[200];
    if (msg == NULL || msg_size == 0) {
        msg = local;
        msg_size = sizeof(local);
    }
    *out = NULL;
    msg[0] = '\0';
    uint64_t h = hash_text(gbnf);
    for (size_t i = 0; i < fg->n_entries; i++) {
        if (fg->entries[i].hash == h && strcmp(fg->entries[i].gbnf, gbnf) == 0) {
            *out = fg->entries[i].a;
            if (*out == NULL) {
                snprintf(msg, msg_size, "fastgrammar: grammar outside the fast subset");
            }
            return *out != NULL ? PIPIT_OK : PIPIT_ERR_GRAMMAR;
        }
    }
    if (fg->n_entries >= FG_MAX_GRAMMARS) {
        /* bounded: forget the oldest grammar that no sampler can be using right now is not
         * knowable here, so refuse instead (the caller falls back to llama.cpp's sampler) */
        snprintf(msg, msg_size, "fastgrammar: more than %d grammars", FG_MAX_GRAMMARS);
        return PIPIT_ERR_GRAMMAR;
    }
    if (!grow((void **)&fg->entries, &fg->cap_entries, fg->n_entries + 1,
              sizeof(struct fg_entry))) {
        return PIPIT_ERR_NOMEM;
    }
    size_t len = strlen(gbnf);
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    memcpy(copy, gbnf, len + 1);
    double t0 = pipit_now_ms();
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_automaton_new(fg->ix, gbnf, &a, msg, msg_size);
    if (st == PIPIT_ERR_NOMEM) {
        fg->t_compile_ms += pipit_now_ms() - t0;
        free(copy);
        return st;
    }
    uint64_t key = 0;
    bool from_disk = false;
    char path[4200];
    if (a != NULL && fg->cache_dir != NULL && (key = fg_automaton_key(a, gbnf)) != 0 &&
        fg_automaton_cache_path(path, sizeof(path), fg->cache_dir, key)) {
        /* a missing or damaged file leaves the fresh automaton as it is */
        from_disk = fg_automaton_load(a, path, key);
    }
    fg->t_compile_ms += pipit_now_ms() - t0;
    if (a == NULL) {
        /* never silent: a sampler given this grammar uses llama.cpp's (slower) GBNF sampler */
        pipit_log(PIPIT_LOG_WARN, "%s; this grammar falls back to llama.cpp's GBNF sampler",
                  msg[0] != '\0' ? msg : "fastgrammar: grammar outside the subset");
    }
    fg->entries[fg->n_entries++] = (struct fg_entry){h, copy, a, key, from_disk};
    *out = a;
    return a != NULL ? PIPIT_OK : PIPIT_ERR_GRAMMAR;
}

enum pipit_status
pipit_fastgrammar_check(const char *gbnf, int32_t *nfa_states, struct pipit_error *err) {
    pipit_error_clear(err);
    if (nfa_states != NULL) {
        *nfa_states = 0;
    }
    if (gbnf == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "fastgrammar: NULL argument");
    }
    char msg[200];
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_automaton_new(NULL, gbnf, &a, msg, sizeof(msg));
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "%s", msg[0] != '\0' ? msg : pipit_status_str(st));
    }
    if (nfa_states != NULL) {
        *nfa_states = (int32_t)a->n_nfa;
    }
    fg_automaton_free(a);
    return PIPIT_OK;
}

void fg_scratch(struct pipit_fastgrammar *fg, int32_t **buf, uint32_t **stamp, uint32_t **gen) {
    *buf = fg->scratch;
    *stamp = fg->stamp;
    *gen = &fg->stamp_gen;
}

const struct fg_index *fg_index_of(const struct pipit_fastgrammar *fg) {
    return fg->ix;
}

const struct pipit_model *fg_model_of(const struct pipit_fastgrammar *fg) {
    return fg->model;
}

enum pipit_status
pipit_fastgrammar_add(struct pipit_fastgrammar *fg, const char *gbnf, struct pipit_error *err) {
    pipit_error_clear(err);
    if (fg == NULL || gbnf == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "fastgrammar: NULL argument");
    }
    char msg[200];
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_lookup(fg, gbnf, &a, msg, sizeof(msg));
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "%s", msg[0] != '\0' ? msg : pipit_status_str(st));
    }
    return PIPIT_OK;
}

enum pipit_status pipit_fastgrammar_match(struct pipit_fastgrammar *fg,
                                          const char *gbnf,
                                          const char *text,
                                          bool *prefix_ok,
                                          bool *complete) {
    if (fg == NULL || gbnf == NULL || text == NULL || prefix_ok == NULL || complete == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *prefix_ok = false;
    *complete = false;
    struct fg_automaton *a = NULL;
    enum pipit_status st = fg_lookup(fg, gbnf, &a, NULL, 0);
    if (st != PIPIT_OK) {
        return st;
    }
    int32_t s = fg_step_bytes(a, fg_start(a), text, strlen(text));
    *prefix_ok = s >= 0;
    *complete = fg_accepting(a, s);
    return PIPIT_OK;
}

void pipit_fastgrammar_get_info(const struct pipit_fastgrammar *fg,
                                struct pipit_fastgrammar_info *info) {
    memset(info, 0, sizeof(*info));
    if (fg == NULL) {
        return;
    }
    info->n_vocab = fg->ix->n_vocab;
    info->index_bytes = fg_index_bytes(fg->ix);
    info->t_index_ms = fg->t_index_ms;
    info->t_compile_ms = fg->t_compile_ms;
    info->index_cached = fg->index_cached;
    for (size_t i = 0; i < fg->n_entries; i++) {
        if (fg->entries[i].a == NULL) {
            info->n_unsupported++;
            continue;
        }
        struct fg_stats st;
        fg_automaton_stats(fg->entries[i].a, &st);
        info->n_grammars++;
        info->n_grammars_cached += fg->entries[i].from_disk ? 1 : 0;
        info->dfa_states += st.dfa_states;
        info->listed_states += st.listed_states;
        info->automaton_bytes += st.bytes;
    }
}
