/*
 * router_impl.h - what the router's files share, and nothing else includes: the token stream
 * both decisions walk, the word lists more than one of them uses, and the lexicon's queries.
 *
 *   router.c        the lexicon: the default verbs, a tool set's words, the queries below
 *   router_undo.c   undo detection (router_undo_count(), router_undo_followup())
 *   router_split.c  compound segmentation (router_split_with(), router_command_verb())
 *   router_followup.c  follow-ups of the last action (router_followup())
 *
 * The tokenizer walks at most ROUTER_MAX_INPUT bytes and produces at most MAX_TOKENS tokens
 * (words.c), each either a word with its lowercased form or a separator punctuation mark.
 * Tokens remember their byte offsets, so segments are copied from the original text with its
 * casing.
 */
#ifndef PIPIT_ROUTER_IMPL_H
#define PIPIT_ROUTER_IMPL_H

#include "router.h"
#include "words.h"

#include <stdbool.h>
#include <stddef.h>

#define MAX_TOKENS 256 /* tokens looked at; text after them stays in the last segment */
#define MAX_PHRASE (ROUTER_MAX_WORDS * ROUTER_WORD_CAP)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ============================================================================
 * tokens (words.c) */

struct toks {
    struct words_tok t[MAX_TOKENS];
    size_t n;   /* tokens */
    size_t len; /* bytes of the utterance looked at */
};

static inline bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static inline bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

static inline size_t bounded_len(const char *s, bool *too_long) {
    return words_bounded_len(s, ROUTER_MAX_INPUT, too_long);
}

static inline void tokenize(const char *s, size_t len, struct toks *out) {
    out->len = len;
    out->n = words_tokenize(s, len, WORDS_PUNCTUATION, out->t, MAX_TOKENS);
}

static inline bool is_word(const struct toks *ts, size_t i, const char *w) {
    return words_is(ts->t, ts->n, i, w);
}

/* Tokens the phrase ("white balance") matches at token i, all of them words before `end`; 0
 * when it does not match. */
static inline size_t match_phrase(const struct toks *ts, size_t i, size_t end, const char *phrase) {
    return words_match(ts->t, end, i, phrase);
}

static inline size_t
match_any(const struct toks *ts, size_t i, size_t end, const char *const *list, size_t n_list) {
    return words_match_any(ts->t, end, i, list, n_list);
}

/* ============================================================================
 * the default word lists more than one file uses (router.c) */

extern const char *const ROUTER_LEAD_INS[]; /* words before a verb ("please", "can you") */
extern const size_t ROUTER_N_LEAD_INS;
extern const char *const ROUTER_STATEMENTS[]; /* a description, not a command ("it's") */
extern const size_t ROUTER_N_STATEMENTS;
extern const char *const ROUTER_CONJUNCTIONS[]; /* "and", "then", ... */
extern const size_t ROUTER_N_CONJUNCTIONS;

/* ============================================================================
 * the lexicon's queries on a token stream (router.c); `r` may be NULL (the generic lexicon) */

/* A verb (default or extra) at token i before `end`: tokens matched, or 0. */
size_t router_match_verb(const struct router *r, const struct toks *ts, size_t i, size_t end);

size_t router_match_keyword(const struct router *r, const struct toks *ts, size_t i, size_t end);

/* A number of a shape the tool set uses ("2x" when a description says "2x", "16:9" when an
 * enum has "4:3") counts as a keyword. */
bool router_is_numeric_keyword(const struct router *r, const char *w);

/* "X and Y" is one phrase of the tool set (either order). */
bool router_is_pair(const struct router *r, const char *x, const char *y);

#endif /* PIPIT_ROUTER_IMPL_H */
