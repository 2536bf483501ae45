/*
 * fg_sampler.h - one sampler's side of fast constrained decoding (docs/fastgrammar.md): which
 * tokens a step draws from, checking a draw, masking what a rejected draw shows, and the
 * decisions of jump-forward. It draws nothing itself and calls nothing in the engine: the
 * engine's sampler (engine.c, which owns llama.cpp's sampling chain and the tokenizer) asks
 * fg_sampler_begin() what to draw from, draws, and offers the draw with fg_sampler_offer(),
 * until a draw is taken:
 *
 *   fg_sampler_begin(s, &d);
 *   for (;;) { tok = draw as d says (or -1: nothing selected); if (fg_sampler_offer(s, tok, &d))
 *   break; }
 *
 * Per step:
 *   - a state with a small allowed set (a cached token list): draw among those tokens only
 *     (plus EOG when the call is complete); one candidate = no draw at all;
 *   - a large state that is not a string body: draw among fg_candidates() and check the draw;
 *   - a string body: draw from the whole vocabulary and check the draw by walking its bytes; a
 *     rejected draw masks its whole kind where that is cheap and exact (every longer plain
 *     ASCII token; every token with an escape or control byte; every token whose first byte
 *     is refused; the refused tokens with a quote, by a walk of their part of the trie);
 *   - after FG_MAX_REJECTS rejected draws, the exact allowed set, which the automaton keeps:
 *     the next visit of that state draws from it directly.
 * Greedy picks exactly the token the masked vocabulary would give; temperature sampling keeps
 * the masked distribution (top-k/top-p act on the candidate set of the step).
 */
#ifndef PIPIT_FG_SAMPLER_H
#define PIPIT_FG_SAMPLER_H

#include "fastgrammar.h"
#include "fg_automaton.h"
#include "fg_index.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FG_MAX_REJECTS 8
#define FG_MAX_FORCED  256 /* bytes of forced text per jump */
#define FG_MAX_CONTEXT 64  /* bytes of the previous token used as left context */

/* What the next draw is made from. */
struct fg_draw {
    bool whole_vocab;    /* every token of the vocabulary, else list + extra */
    const int32_t *list; /* the candidates ... */
    int32_t n_list;
    const int32_t *extra; /* ... and these (the EOG tokens when the state accepts) */
    int32_t n_extra;
    const int32_t *rejected; /* drawn before in this step: never again (logit -inf) */
    int32_t n_rejected;
    const int32_t *masked; /* whole_vocab only: refused without a draw (logit -inf) */
    int32_t n_masked;
    /* whole_vocab only: also refused, every plain ASCII token at least `ascii_from` bytes long
     * (ascii_len[t] >= ascii_from; ascii_len is -1 for the others): a threshold, not a list,
     * because near the end of a bounded string it is most of the vocabulary */
    const int16_t *ascii_len;
    int32_t ascii_from;
    /* whole_vocab only, may be NULL: also refused, every token whose first byte b (first_byte,
     * 0 for the special and empty tokens) has refused_first[b] */
    const uint8_t *first_byte;
    const bool *refused_first;
    /* the candidates are exactly the allowed tokens: a single one is taken without a draw
     * (fg_sampler_offer() it all the same), none or a draw that selects nothing is an error */
    bool exact;
};

struct fg_masks {
    int32_t n;          /* tokens masked, in buf[0..n) */
    int32_t ascii_from; /* plain ASCII tokens this long and longer are masked */
    bool hard, quote, first;
    bool refused_first[256]; /* with `first`: the bytes the state refuses first ([0] false) */
};

/* One sampler's state (inside the engine's struct pipit_sampler; zeroed = not attached). */
struct fg_sampler {
    struct fg_automaton *a; /* NULL: not attached */
    const struct fg_index *ix;
    int32_t n_vocab;
    int32_t state; /* automaton state after the text accepted so far */
    /* scratch of the decoder (fg_scratch; shared by its samplers, one thread at a time) */
    int32_t *buf;    /* n_vocab tokens: candidates, masks, the exact allowed set */
    uint32_t *stamp; /* n_vocab generation stamps: special tokens a state allows */
    uint32_t *gen;   /* the current stamp generation */
    /* the step in progress */
    int phase;
    bool wide;
    int32_t nc; /* candidates in buf (large state, not a string body) */
    int32_t rejected[FG_MAX_REJECTS];
    int32_t n_rej;
    struct fg_masks mk;
};

/* Use the automaton of `gbnf` in `fg` (which must be the decoder of the sampler's model):
 * false when the grammar lies outside the fast subset (the caller then uses llama.cpp's). */
bool fg_sampler_attach(struct fg_sampler *s,
                       struct pipit_fastgrammar *fg,
                       const char *gbnf,
                       bool transient);
/* Back to the start state. */
void fg_sampler_reset(struct fg_sampler *s);
/* Whether the text so far is still a prefix of the grammar. */
bool fg_sampler_alive(const struct fg_sampler *s);

/* Start a step: *d says what to draw from. */
void fg_sampler_begin(struct fg_sampler *s, struct fg_draw *d);
/* Offer the token drawn as *d said (-1: the draw selected nothing, or a masked token). True: the
 * token is taken and the state advanced. False: *d says what to draw from next. */
bool fg_sampler_offer(struct fg_sampler *s, int32_t token, struct fg_draw *d);

/* Feed a token chosen elsewhere (the caller's, or a lazy trigger): false, nothing changed, when
 * the grammar does not allow it. */
bool fg_sampler_accept(struct fg_sampler *s, int32_t token);
/* Feed text (a lazy trigger's, from the trigger on): false, nothing changed, when refused. */
bool fg_sampler_feed_text(struct fg_sampler *s, const char *text, size_t n);

/* Jump-forward. The text the grammar forces from the current state (at most `cap` bytes; 0
 * when none), *ends whether it completes a sentence. */
size_t fg_sampler_forced_text(struct fg_sampler *s, char *text, size_t cap, bool *ends);
/* The text of `token` (borrowed, *n its length; NULL: none). */
const char *fg_sampler_piece(const struct fg_sampler *s, int32_t token, int32_t *n);
/* toks[0..nt) are the tokenizer's cut of buf[0..n): the index of the token where the last `tail`
 * bytes begin, or -1 when no token boundary falls there (or the pieces do not spell the text). */
int32_t fg_sampler_tail(const struct fg_sampler *s,
                        const char *buf,
                        size_t n,
                        size_t tail,
                        const int32_t *toks,
                        int32_t nt);
/* Take toks[0..n) of the forced text (`len` bytes; `ends` as fg_sampler_forced_text()) while no
 * token the grammar allows could run past what is left of it (a token the model could pick there,
 * ", y=0." over ", y=" + "0.", would make the tokenizer's cut of the forced text alone feed
 * tokens the model never sees in its own output). Returns the tokens taken. */
int32_t
fg_sampler_force(struct fg_sampler *s, const int32_t *toks, int32_t n, size_t len, bool ends);

#endif /* PIPIT_FG_SAMPLER_H */
