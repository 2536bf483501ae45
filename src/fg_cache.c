/*
 * fg_cache.c - the fast decoder's on-disk cache (fg_cache.h, docs/fastgrammar.md): the
 * vocabulary index's trie and each automaton's materialized states, written whole through
 * fileio and trusted for nothing when read back.
 */
#define _POSIX_C_SOURCE 200809L
#include "fg_cache.h"

#include "fg_automaton.h"
#include "fg_index.h"
#include "fileio.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
uint64_t fg_hash_words(uint64_t h, const void *data, size_t n) {
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
    h = fg_hash_words(h, ix->off, sizeof(int64_t) * (nv + 1));
    if (ix->off[nv] > 0) {
        h = fg_hash_words(h, ix->blob, (size_t)ix->off[nv]);
    }
    return fg_hash_words(h, ix->eog, sizeof(int32_t) * (size_t)ix->n_eog);
}

static uint64_t payload_sum(const struct fg_index *ix) {
    size_t nn = (size_t)ix->n_nodes, nv = (size_t)ix->n_vocab;
    uint64_t h = FILEIO_FNV_OFFSET;
    h = fg_hash_words(h, ix->child, nn * sizeof(int32_t));
    h = fg_hash_words(h, ix->sibling, nn * sizeof(int32_t));
    h = fg_hash_words(h, ix->tok, nn * sizeof(int32_t));
    h = fg_hash_words(h, ix->tok_next, nv * sizeof(int32_t));
    return fg_hash_words(h, ix->byte, nn);
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
             hsum == fg_hash_words(FILEIO_FNV_OFFSET, head, 48) &&
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
    uint64_t hsum = fg_hash_words(FILEIO_FNV_OFFSET, head, 48);
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

enum pipit_status fg_index_new_cached(struct fg_vocab *v,
                                      const char *cache_dir,
                                      bool *from_cache,
                                      struct fg_index **out) {
    if (from_cache != NULL) {
        *from_cache = false;
    }
    struct fg_index *ix = NULL;
    enum pipit_status st = fg_index_read(v, &ix);
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
        if (!fg_index_finish(ix)) {
            fg_index_free(ix);
            return PIPIT_ERR_NOMEM;
        }
        if (from_cache != NULL) {
            *from_cache = true;
        }
        *out = ix;
        return PIPIT_OK;
    }
    if (!fg_index_build_trie(ix) || !fg_index_finish(ix)) {
        fg_index_free(ix);
        return PIPIT_ERR_NOMEM;
    }
    if (cached && !cache_store(ix, path, key)) {
        pipit_log(PIPIT_LOG_DEBUG, "fastgrammar: cannot write the mask cache %s", path);
    }
    *out = ix;
    return PIPIT_OK;
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

uint64_t fg_automaton_key(const struct fg_automaton *a, const char *gbnf) {
    if (a->ix->key == 0) {
        return 0;
    }
    uint64_t head[4] = {FGA_VERSION, a->ix->key, (uint64_t)a->n_nfa, (uint64_t)a->n_cls};
    uint64_t h = fg_hash_words(FILEIO_FNV_OFFSET, head, sizeof(head));
    h = fg_hash_words(h, gbnf, strlen(gbnf));
    return h != 0 ? h : 1;
}

bool fg_automaton_cache_path(char *buf, size_t cap, const char *dir, uint64_t key) {
    int n = snprintf(buf, cap, "%s/auto-%016llx.fga", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < cap;
}

static void state_words(const struct fg_dstate *d, int64_t w[FGA_WORDS]) {
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
    h = fg_hash_words(h, p->words, sizeof(int64_t) * p->n_dfa * FGA_WORDS);
    h = fg_hash_words(h, p->trans, sizeof(int32_t) * p->n_dfa * p->n_cls);
    h = fg_hash_words(h, p->sets, sizeof(int32_t) * p->n_sets);
    h = fg_hash_words(h, p->lists, sizeof(int32_t) * p->n_lists);
    return fg_hash_words(h, p->exact, sizeof(int32_t) * p->n_exact);
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
    const struct fg_dstate *s0 = &a->dfa[a->start];
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
            size_t i = (size_t)fg_hash_set(set, (int32_t)w[1]) & (hcap - 1);
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
             hsum == fg_hash_words(FILEIO_FNV_OFFSET, head, 72) &&
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
    struct fg_dstate *dfa = NULL;
    ok = ok && fga_valid(a, &p, &hash, &hash_cap) &&
         (dfa = malloc(sizeof(struct fg_dstate) * p.n_dfa)) != NULL;
    if (!ok) {
        free(hash);
        fga_free(&p);
        return false;
    }
    for (size_t d = 0; d < p.n_dfa; d++) {
        const int64_t *w = p.words + d * FGA_WORDS;
        dfa[d] = (struct fg_dstate){
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
    uint64_t hsum = fg_hash_words(FILEIO_FNV_OFFSET, head, 72);
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
