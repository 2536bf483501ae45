/*
 * fg_sampler.c - one sampler's side of fast constrained decoding (fg_sampler.h,
 * docs/fastgrammar.md): the candidate sets of a step, the checks of draws, the masks a rejected
 * draw allows, and the decisions of jump-forward. Moved out of engine.c, which keeps the draws.
 */
#include "fg_sampler.h"

#include <limits.h>
#include <string.h>

enum {
    PHASE_EXACT,      /* drawing among exactly the allowed tokens */
    PHASE_CANDIDATES, /* a large state that is not a string body: fg_candidates(), checked */
    PHASE_VOCAB,      /* a string body: the whole vocabulary, checked */
};

bool fg_sampler_attach(struct fg_sampler *s,
                       struct pipit_fastgrammar *fg,
                       const char *gbnf,
                       bool transient) {
    struct fg_automaton *a = NULL;
    if (fg_lookup(fg, gbnf, transient, &a, NULL, 0) != PIPIT_OK) {
        return false; /* outside the subset: llama.cpp's sampler */
    }
    memset(s, 0, sizeof(*s));
    fg_scratch(fg, &s->buf, &s->stamp, &s->gen);
    s->a = a;
    s->ix = fg_index_of(fg);
    s->n_vocab = fg_index_n_vocab(s->ix);
    s->state = fg_start(a);
    return true;
}

void fg_sampler_reset(struct fg_sampler *s) {
    s->state = fg_start(s->a);
}

bool fg_sampler_alive(const struct fg_sampler *s) {
    return s->state >= 0;
}

/* Whether the automaton allows `token` now; *next receives the state after it. */
static bool allows(struct fg_sampler *s, int32_t token, int32_t *next) {
    if (fg_index_is_eog(s->ix, token)) {
        *next = s->state;
        return fg_accepting(s->a, s->state);
    }
    *next = fg_step_token(s->a, s->state, token);
    return *next >= 0;
}

bool fg_sampler_accept(struct fg_sampler *s, int32_t token) {
    int32_t next;
    if (!allows(s, token, &next)) {
        return false;
    }
    s->state = next;
    return true;
}

bool fg_sampler_feed_text(struct fg_sampler *s, const char *text, size_t n) {
    int32_t next = fg_step_bytes(s->a, s->state, text, n);
    if (next < 0) {
        return false;
    }
    s->state = next;
    return true;
}

/* The tokens a rejected draw in a large state lets the sampler mask (in buf[0..n)): each rule
 * masks a whole kind once, where that is cheap and exact; the kinds are disjoint. */
static void mask_refused(struct fg_sampler *s, struct fg_masks *m, int32_t tok, bool wide) {
    int32_t alen = fg_index_ascii_len(s->ix, tok);
    if (wide && alen > 0 && alen < m->ascii_from) {
        /* too long for what is left of the string: so is every longer one (a threshold the
         * draw applies, fg_draw.ascii_from) */
        m->ascii_from = alen;
    }
    int32_t pn = 0;
    const char *pp = fg_index_piece(s->ix, tok, &pn);
    unsigned char b0 = pp != NULL ? (unsigned char)pp[0] : 0;
    if (wide && !m->first && pp != NULL &&
        fg_step_bytes(s->a, s->state, (const char *)&b0, 1) < 0) {
        /* its first byte is refused (a UTF-8 continuation byte, a control byte): so is every
         * token that starts with a refused byte (a table the draw applies, fg_draw) */
        m->refused_first[0] = false;
        for (int b = 1; b < 256; b++) {
            char c = (char)b;
            m->refused_first[b] = fg_step_bytes(s->a, s->state, &c, 1) < 0;
        }
        m->first = true;
    }
    int kind = fg_index_special_kind(s->ix, tok);
    if (kind == FG_SPECIAL_HARD && !m->hard && !m->quote && fg_refuses_hard(s->a, s->state)) {
        /* an escape or control byte in a string body: every such token is
         * refused, no walk needed */
        int32_t n_sp = 0;
        const int32_t *sp = fg_index_special(s->ix, &n_sp);
        for (int32_t k = 0; k < n_sp; k++) {
            if (fg_index_special_kind(s->ix, sp[k]) == FG_SPECIAL_HARD) {
                s->buf[m->n++] = sp[k];
            }
        }
        m->hard = true;
    } else if (kind != 0 && !m->quote) {
        /* a quote (or an escape where escapes may follow): mask every special
         * token the state refuses, found by a walk of their part of the trie */
        const int32_t *ok = NULL;
        int32_t n_ok = fg_allowed_special(s->a, s->state, &ok);
        int32_t n_sp = 0;
        const int32_t *sp = fg_index_special(s->ix, &n_sp);
        if (++*s->gen == 0) { /* wrapped: clear the stamps */
            memset(s->stamp, 0, sizeof(uint32_t) * (size_t)s->n_vocab);
            *s->gen = 1;
        }
        for (int32_t k = 0; k < n_ok; k++) {
            s->stamp[ok[k]] = *s->gen;
        }
        for (int32_t k = 0; n_ok >= 0 && k < n_sp; k++) {
            if (s->stamp[sp[k]] != *s->gen &&
                !(m->hard && fg_index_special_kind(s->ix, sp[k]) == FG_SPECIAL_HARD)) {
                s->buf[m->n++] = sp[k];
            }
        }
        m->quote = true;
    }
}

/* Draw among `toks` (+ EOG when the state accepts): exactly the allowed tokens. */
static void draw_exact(struct fg_sampler *s, const int32_t *toks, int32_t n, struct fg_draw *d) {
    s->phase = PHASE_EXACT;
    int32_t n_eog = 0;
    const int32_t *eog = fg_index_eog(s->ix, &n_eog);
    *d = (struct fg_draw){
        .list = toks,
        .n_list = n,
        .extra = eog,
        .n_extra = fg_accepting(s->a, s->state) ? n_eog : 0,
        .exact = true,
    };
}

/* The exact allowed set of a large state, after repeated rejections: kept by the automaton. */
static void draw_exact_set(struct fg_sampler *s, struct fg_draw *d) {
    const int32_t *toks = NULL;
    int32_t n = fg_allowed_exact(s->a, s->state, &toks);
    if (n < 0) {
        n = fg_allowed_all(s->a, s->state, s->buf);
        toks = s->buf;
    }
    draw_exact(s, toks, n, d);
}

void fg_sampler_begin(struct fg_sampler *s, struct fg_draw *d) {
    const int32_t *toks = NULL;
    int32_t n = fg_allowed(s->a, s->state, &toks);
    if (n < 0 && fg_exact_cached(s->a, s->state)) {
        n = fg_allowed_exact(s->a, s->state, &toks); /* met before: its exact set is kept */
    }
    if (n >= 0) {
        draw_exact(s, toks, n, d);
        return;
    }
    /* a large state: draw first, check the draw */
    s->wide = fg_wide(s->a, s->state);
    s->n_rej = 0;
    s->mk = (struct fg_masks){.ascii_from = INT32_MAX};
    if (!s->wide) {
        /* not a string body: draw among the trie candidates, not the whole vocabulary */
        const int32_t *cands = NULL;
        s->nc = fg_candidates(s->a, s->state, &cands);
        if (s->nc > 0) {
            memcpy(s->buf, cands, sizeof(int32_t) * (size_t)s->nc);
            s->phase = PHASE_CANDIDATES;
            *d = (struct fg_draw){.list = s->buf, .n_list = s->nc, .rejected = s->rejected};
            return;
        }
        draw_exact_set(s, d);
        return;
    }
    s->phase = PHASE_VOCAB;
    *d = (struct fg_draw){.whole_vocab = true,
                          .rejected = s->rejected,
                          .masked = s->buf,
                          .ascii_len = s->ix->ascii_len,
                          .ascii_from = INT32_MAX,
                          .first_byte = s->ix->first_byte};
}

bool fg_sampler_offer(struct fg_sampler *s, int32_t token, struct fg_draw *d) {
    int32_t next = FG_DEAD;
    if (s->phase == PHASE_EXACT) {
        allows(s, token, &next); /* one of the allowed tokens */
        s->state = next;
        return true;
    }
    if (token < 0) {
        draw_exact_set(s, d); /* nothing left to draw: take the exact set */
        return false;
    }
    if (allows(s, token, &next)) {
        s->state = next;
        return true;
    }
    s->rejected[s->n_rej++] = token;
    if (s->phase == PHASE_VOCAB) {
        mask_refused(s, &s->mk, token, s->wide);
    }
    if (s->n_rej >= FG_MAX_REJECTS) {
        draw_exact_set(s, d);
        return false;
    }
    d->n_rejected = s->n_rej;
    d->n_masked = s->phase == PHASE_VOCAB ? s->mk.n : 0;
    d->ascii_from = s->phase == PHASE_VOCAB ? s->mk.ascii_from : INT32_MAX;
    d->refused_first = s->phase == PHASE_VOCAB && s->mk.first ? s->mk.refused_first : NULL;
    return false;
}

size_t fg_sampler_forced_text(struct fg_sampler *s, char *text, size_t cap, bool *ends) {
    *ends = false;
    if (s->state < 0) {
        return 0;
    }
    size_t len = fg_forced_text(s->a, s->state, text, cap);
    if (len > 0) {
        *ends = fg_accepting(s->a, fg_step_bytes(s->a, s->state, text, len));
    }
    return len;
}

const char *fg_sampler_piece(const struct fg_sampler *s, int32_t token, int32_t *n) {
    return fg_index_piece(s->ix, token, n);
}

int32_t fg_sampler_tail(const struct fg_sampler *s,
                        const char *buf,
                        size_t n,
                        size_t tail,
                        const int32_t *toks,
                        int32_t nt) {
    if (nt <= 0) {
        return -1;
    }
    size_t total = 0;
    for (int32_t i = 0; i < nt; i++) {
        int32_t pn;
        const char *pp = fg_index_piece(s->ix, toks[i], &pn);
        if (pp == NULL) {
            return -1;
        }
        total += (size_t)pn;
    }
    if (total < tail) {
        return -1;
    }
    size_t boundary = total - tail, at = 0;
    int32_t first = -1;
    for (int32_t i = 0; i < nt; i++) {
        int32_t pn;
        const char *pp = fg_index_piece(s->ix, toks[i], &pn);
        if (at == boundary) {
            first = i;
        }
        if (at >= boundary && memcmp(pp, buf + n - tail + (at - boundary), (size_t)pn) != 0) {
            return -1;
        }
        at += (size_t)pn;
    }
    return first;
}

/* Whether some token the grammar allows in `state` is longer than the `rest` forced bytes. A
 * large state counts as crossing. */
static bool may_cross(struct fg_sampler *s, int32_t state, size_t rest) {
    const int32_t *toks = NULL;
    int32_t n = fg_allowed(s->a, state, &toks);
    if (n < 0) {
        return true;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t pn = 0;
        fg_index_piece(s->ix, toks[i], &pn);
        if ((size_t)pn > rest) {
            return true;
        }
    }
    return false;
}

int32_t
fg_sampler_force(struct fg_sampler *s, const int32_t *toks, int32_t n, size_t len, bool ends) {
    size_t at = 0; /* bytes of the forced text taken so far */
    int32_t used = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!ends && may_cross(s, s->state, len - at)) {
            break; /* the model's tokenizer could cut differently here: let it choose */
        }
        int32_t next = fg_step_token(s->a, s->state, toks[i]);
        if (next < 0) {
            break; /* cannot happen: the pieces spell the forced text */
        }
        int32_t pn = 0;
        fg_index_piece(s->ix, toks[i], &pn);
        at += (size_t)pn;
        s->state = next;
        used++;
    }
    return used;
}
