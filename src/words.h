/*
 * words.h - the word tokenizer and phrase matcher the router (router.c) and the state
 * questions (ask.c) share.
 *
 * An utterance becomes a list of tokens: words (ASCII letters and digits, any non-ASCII
 * character that is not a typographic mark; lowercased, apostrophes dropped so "don't" and
 * "don’t" are "dont"; "2.5", "16:9", "1,000" between digits and "auto-focus" between letters
 * join one word; text-speak reads as its word: "r" "are", "u" "you", "ur" "your", "rn" "now",
 * "plz" "please", "thx" "thanks", "abt" "about", "cuz" "because", the span staying what was
 * typed) and, when asked for, separator marks ("," ";" "." "!" "?" ":", the ellipsis,
 * the en and em dash). Quotes, brackets and other symbols count as spaces. Phrases are
 * lowercase words joined by one space ("white balance") and match whole words.
 *
 *     struct words_tok t[64];
 *     size_t n = words_tokenize(s, strlen(s), 0, t, 64);
 *     if (words_match(t, n, 0, "white balance") == 2) { ... }
 *
 * Invariants: bounded by the caller's `max` tokens and `len` bytes; a word longer than
 * WORDS_CAP - 1 bytes is kept as a token with an empty text (it matches nothing); offsets are
 * bytes of the input, so callers copy spans with the original casing. No allocation, no global
 * state; every function is reentrant.
 */
#ifndef PIPIT_WORDS_H
#define PIPIT_WORDS_H

#include <stdbool.h>
#include <stddef.h>

#define WORDS_CAP 32 /* bytes per word, NUL included */

enum words_kind {
    WORDS_WORD = 0,
    WORDS_PUNCT = 1, /* text: "," ";" "." "!" "?" ":" ("." for the ellipsis, "-" for dashes) */
};

struct words_tok {
    size_t start; /* byte offset of the first byte */
    size_t end;   /* byte offset one past the last byte */
    enum words_kind kind;
    char w[WORDS_CAP]; /* lowercase, apostrophes dropped; "" when too long */
};

/* Flags of words_tokenize(). */
#define WORDS_PUNCTUATION 1u /* emit separator marks as WORDS_PUNCT tokens */
#define WORDS_SIGNS       2u /* a '-' or '+' before a digit starts a word ("-1", "+0.5") */

/* Tokens of s[0 .. len), at most `max` written to `out`; returns how many. */
size_t words_tokenize(const char *s, size_t len, unsigned flags, struct words_tok *out, size_t max);

/* Length of `s` up to `max` bytes, cut back so that no UTF-8 character is split; *too_long
 * (may be NULL) tells whether text was left out. */
size_t words_bounded_len(const char *s, size_t max, bool *too_long);

/* Whether token i (< n) is the word `w`. */
bool words_is(const struct words_tok *t, size_t n, size_t i, const char *w);

/* Tokens the phrase matches at token i, all of them words before `n`; 0 when it does not. */
size_t words_match(const struct words_tok *t, size_t n, size_t i, const char *phrase);

/* The first phrase of `list` that matches at i: tokens matched, or 0. */
size_t words_match_any(const struct words_tok *t,
                       size_t n,
                       size_t i,
                       const char *const *list,
                       size_t n_list);

/* The longest phrase of `list` that matches at i: tokens matched, or 0. */
size_t words_match_longest(const struct words_tok *t,
                           size_t n,
                           size_t i,
                           const char *const *list,
                           size_t n_list);

/* Whether `w` is one of `list`. */
bool words_in_list(const char *w, const char *const *list, size_t n_list);

/* Words in a phrase (spaces + 1). */
size_t words_count(const char *phrase);

/* `text` as a phrase: its words joined by one space into out[size]; *n_words (may be NULL)
 * receives their number. False when it has no word, more than `max_words`, a punctuation
 * mark, a too-long word, or does not fit. */
bool words_normalize(const char *text, size_t max_words, char *out, size_t size, size_t *n_words);

/* Whether lowercase `w` is the comparative or superlative of a common adjective of settings
 * ("brighter", "dimmer", "closer", "easier", "warmest"): its stem, less "er"/"est" (a doubled
 * consonant once, a final "e" or "y" put back), is one of them. "filter", "water" and "timer"
 * are not. */
bool words_is_comparative(const char *w);

/* A word of a tool's name that says what is done, not to what ("set", "switch", "take",
 * "record", "the"): "switch_camera" is about the camera. Lowercase. Used by the state
 * questions (ask.c) and the "what can you do?" answer (smalltalk.c). */
bool words_is_tool_verb(const char *w);

/* A number said in one word ("zero" .. "twenty", "thirty" .. "ninety", "hundred"): true with
 * *value set. The one list of number words the router and the state questions share. */
bool words_number_value(const char *w, int *value);

/* Whether word `w` opens with a vowel sound, so takes "an": a, e, i, o, and "u" unless said
 * "you" ("an hour" is not seen: "h" is a consonant; "a unit", "a user", "a one-off", "a
 * euro"). Any case. */
bool words_vowel_sound(const char *w);

/* Whether lowercase `mark` occurs in `text` (NULL: no), case aside, anywhere ("Target water
 * temperature" holds "temperature"). */
bool words_contains(const char *text, const char *mark);

/* Whether `text` has word `w` (words split at anything but letters, case aside), or the one's
 * plural ("s") is the other ("pics" of "pic", "degree" of "degrees") when `w` has four letters
 * or more. */
bool words_text_has(const char *text, const char *w);

/* Whether `w` (its first `len` bytes) is one of the words of a tool's or key's `name`, split at
 * '_', '-', '.' and ' ' ("quality" of set_quality_priority), case aside. */
bool words_name_has(const char *name, const char *w, size_t len);

#endif /* PIPIT_WORDS_H */
