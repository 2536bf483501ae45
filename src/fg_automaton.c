/*
 * fg_automaton.c - the fast decoder's automaton (fg_automaton.h, docs/fastgrammar.md): the tree
 * fg_gbnf.c parsed -> byte NFA -> lazy DFA, and the walks of the vocabulary trie (fg_index.h)
 * that turn DFA states into allowed-token lists.
 *
 * Invariants:
 * - NFA state 0 is the final (accepting) state. "Important" states are the byte states and the
 *   final state; a DFA state is the sorted set of important states in an epsilon closure.
 * - Every byte range of the NFA starts and ends on a byte-class boundary, so a DFA row needs one
 *   entry per class, not per byte.
 * - Code-point classes are compiled to well-formed UTF-8 (no surrogates, no overlong forms).
 */
#define _POSIX_C_SOURCE 200809L
#include "fg_automaton.h"

#include "fg_gbnf.h"
#include "fg_grow.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FG_MAX_NFA_STATES (4 * 1024 * 1024)

/* ============================================================================ NFA */

static int32_t nfa_add(struct fg_automaton *a, struct fg_gbnf *p, struct fg_nstate s) {
    if (a->n_nfa >= FG_MAX_NFA_STATES) {
        fg_gbnf_fail(p, "grammar too large for the fast path");
        return -1;
    }
    if (!fg_grow((void **)&a->nfa, &a->cap_nfa, a->n_nfa + 1, sizeof(struct fg_nstate))) {
        fg_gbnf_fail(p, "out of memory");
        return -1;
    }
    a->nfa[a->n_nfa] = s;
    return (int32_t)a->n_nfa++;
}

static int32_t nfa_split(struct fg_automaton *a, struct fg_gbnf *p, int32_t x, int32_t y) {
    return nfa_add(a, p, (struct fg_nstate){x, y, 0, 0, 0});
}

static int32_t nfa_byte(struct fg_automaton *a, struct fg_gbnf *p, int lo, int hi, int32_t next) {
    return nfa_add(a, p, (struct fg_nstate){next, -1, (uint8_t)lo, (uint8_t)hi, 1});
}

/* UTF-8 byte-range sequences for the code points [lo, hi], as alternatives into `next`;
 * *alt accumulates the alternatives (-1 = none yet). */
static void utf8_ranges(struct fg_automaton *a,
                        struct fg_gbnf *p,
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
static int32_t build(struct fg_automaton *a, struct fg_gbnf *p, int32_t node, int32_t next, int d) {
    if (p->failed || node < 0) {
        return -1;
    }
    if (d > FG_MAX_DEPTH) {
        fg_gbnf_fail(p, "rules nested too deep");
        return -1;
    }
    const struct fg_node nd = p->nodes[node];
    switch (nd.kind) {
        case FG_N_LIT: {
            int32_t s = next;
            for (int32_t i = nd.b; i-- > 0;) {
                uint8_t c = p->lit[nd.a + i];
                s = nfa_byte(a, p, c, c, s);
            }
            return s;
        }
        case FG_N_CLASS: {
            int32_t alt = -1;
            for (int32_t i = 0; i < nd.b; i++) {
                utf8_ranges(a, p, p->ranges[nd.a + 2 * i], p->ranges[nd.a + 2 * i + 1], next, &alt);
            }
            return alt >= 0 ? alt : nfa_split(a, p, -1, -1); /* empty class: a dead end */
        }
        case FG_N_SEQ: {
            int32_t s = next;
            for (int32_t i = nd.b; i-- > 0 && !p->failed;) {
                s = build(a, p, p->kids[nd.a + i], s, d + 1);
            }
            return s;
        }
        case FG_N_ALT: {
            int32_t s = build(a, p, p->kids[nd.a + nd.b - 1], next, d + 1);
            for (int32_t i = nd.b - 1; i-- > 0 && !p->failed;) {
                s = nfa_split(a, p, build(a, p, p->kids[nd.a + i], next, d + 1), s);
            }
            return s;
        }
        case FG_N_REF: {
            struct fg_rule *r = &p->rules[nd.a];
            if (r->body < 0) {
                fg_gbnf_fail(p, "undefined rule");
                return -1;
            }
            for (size_t i = 0; i < r->n_memo; i++) {
                if (r->memo[2 * i] == next) {
                    return r->memo[2 * i + 1];
                }
            }
            if (r->in_progress) {
                fg_gbnf_fail(p, "recursive rules are outside the fast path");
                return -1;
            }
            r->in_progress = true;
            int32_t s = build(a, p, r->body, next, d + 1);
            r = &p->rules[nd.a];
            r->in_progress = false;
            if (s >= 0 && !p->failed) {
                if (!fg_grow((void **)&r->memo, &r->cap_memo, 2 * (r->n_memo + 1),
                             sizeof(int32_t))) {
                    fg_gbnf_fail(p, "out of memory");
                    return -1;
                }
                r->memo[2 * r->n_memo] = next;
                r->memo[2 * r->n_memo + 1] = s;
                r->n_memo++;
            }
            return s;
        }
        case FG_N_REP: {
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

uint64_t fg_hash_set(const int32_t *s, int32_t n) {
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
        const struct fg_nstate *st = &a->nfa[s];
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
        uint64_t k = fg_hash_set(a->sets + a->dfa[d].set_off, a->dfa[d].set_n);
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
    uint64_t k = fg_hash_set(a->found, n);
    size_t i = (size_t)k & (a->hash_cap - 1);
    while (a->hash[i] >= 0) {
        const struct fg_dstate *d = &a->dfa[a->hash[i]];
        if (d->set_n == n && memcmp(a->sets + d->set_off, a->found, sizeof(int32_t) * n) == 0) {
            return a->hash[i];
        }
        i = (i + 1) & (a->hash_cap - 1);
    }
    if (a->n_dfa >= FG_MAX_DFA_STATES ||
        !fg_grow((void **)&a->dfa, &a->cap_dfa, a->n_dfa + 1, sizeof(struct fg_dstate)) ||
        !fg_grow((void **)&a->sets, &a->cap_sets, a->n_sets + (size_t)n, sizeof(int32_t)) ||
        !fg_grow((void **)&a->trans, &a->cap_trans, (a->n_dfa + 1) * (size_t)a->n_cls,
                 sizeof(int32_t))) {
        return FG_DEAD;
    }
    int32_t id = (int32_t)a->n_dfa++;
    memcpy(a->sets + a->n_sets, a->found, sizeof(int32_t) * n);
    bool accept = a->found[0] == 0;
    a->dfa[id] =
        (struct fg_dstate){(int32_t)a->n_sets, n, accept, FG_UNKNOWN, FG_UNKNOWN, 0, FG_UNKNOWN, 0};
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
    const struct fg_dstate *d = &a->dfa[s];
    int32_t n = 0;
    for (int32_t i = 0; i < d->set_n; i++) {
        const struct fg_nstate *st = &a->nfa[a->sets[d->set_off + i]];
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
    struct fg_gbnf p = {.s = gbnf, .msg = msg, .msg_size = msg_size};
    struct fg_automaton *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    a->ix = ix;
    fg_gbnf_parse(&p);
    int32_t root = -1;
    for (size_t i = 0; !p.failed && i < p.n_rules; i++) {
        if (strcmp(p.rules[i].name, "root") == 0) {
            root = (int32_t)i;
        }
    }
    if (!p.failed && root < 0) {
        fg_gbnf_fail(&p, "no root rule");
    }
    if (!p.failed) {
        nfa_split(a, &p, -1, -1); /* state 0: final */
        int32_t body = fg_gbnf_node(&p, FG_N_REF, root, 0, 0);
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
    fg_gbnf_free(&p);
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
            if (!fg_grow((void **)&a->walk_buf, &a->walk_cap, *n + 1, sizeof(int32_t))) {
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
            if (!fg_grow((void **)&a->walk_buf, &a->walk_cap, *n + (size_t)(to - from),
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
        if (!fg_grow((void **)&a->walk_buf, &a->walk_cap, n + (size_t)(to - from),
                     sizeof(int32_t))) {
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
            if (!fg_grow((void **)&a->walk_buf, &a->walk_cap, *n + 1, sizeof(int32_t))) {
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
                if (!fg_grow((void **)&a->walk_buf, &a->walk_cap, n + 1, sizeof(int32_t))) {
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
    const struct fg_dstate *d = &a->dfa[state];
    for (int32_t i = 0; i < d->set_n; i++) {
        const struct fg_nstate *st = &a->nfa[a->sets[d->set_off + i]];
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
        } else if (fg_grow((void **)&a->lists, &a->cap_lists, a->n_lists + n, sizeof(int32_t))) {
            memcpy(a->lists + a->n_lists, a->walk_buf, sizeof(int32_t) * n);
            a->dfa[state].list_off = (int64_t)a->n_lists;
            a->dfa[state].list_n = (int32_t)n;
            a->n_lists += n;
        } else {
            return -1; /* out of memory: treat as large (draw and check) */
        }
    }
    const struct fg_dstate *d = &a->dfa[state];
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
    struct fg_dstate *d = &a->dfa[state];
    if (d->exact_n == FG_UNKNOWN) {
        size_t m = 0;
        if (!walk(a, 0, state, &m, (size_t)a->ix->n_vocab + 1)) {
            return -1; /* out of memory mid-walk */
        }
        if (a->n_exact + m > FG_EXACT_POOL ||
            !fg_grow((void **)&a->exact, &a->cap_exact, a->n_exact + m, sizeof(int32_t))) {
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
    struct fg_dstate *d = &a->dfa[state];
    if (d->forced != FG_UNKNOWN) {
        return d->forced;
    }
    int b = -1;
    if (!d->accept) {
        for (int32_t i = 0; i < d->set_n; i++) {
            const struct fg_nstate *st = &a->nfa[a->sets[d->set_off + i]];
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
    st->bytes = sizeof(*a) + a->cap_nfa * sizeof(struct fg_nstate) +
                a->cap_dfa * sizeof(struct fg_dstate) + a->cap_trans * sizeof(int32_t) +
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
