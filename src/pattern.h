/*
 * pattern.h - the regular expressions of JSON Schema's "pattern", in the subset pipit compiles
 * into its grammars and checks in validation (docs/toolspec.md, "Patterns").
 *
 * The subset: literal characters; "." (any character but a line break); escapes \d \D \w \W \s
 * \S \t \n \r \f \v \xHH \uHHHH and an escaped punctuation character; classes [a-z_] and
 * [^...] (with the escapes inside); groups (...) and (?:...); alternation |; the quantifiers
 * * + ? {n} {n,} {n,m} (n, m <= PATTERN_MAX_REPEAT; a lazy "?" after one changes nothing for
 * matching); "^" as the first and "$" as the last character. As in JSON Schema, a pattern
 * without "^" or "$" may match anywhere in the string. Everything else (backreferences,
 * lookaround, \b, named groups, \p{...}, flags) is refused with the reason.
 *
 * Matching is a Thompson NFA on code points (linear in the text, no backtracking).
 */
#ifndef PIPIT_PATTERN_H
#define PIPIT_PATTERN_H

#include "strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PATTERN_MAX_REPEAT 256  /* largest count in {n,m} */
#define PATTERN_MAX_STATES 8192 /* NFA states after expanding counted repetitions */

/* Whether `re` lies in the subset; when not, `why` (cap bytes) says what is outside it. */
bool pattern_supported(const char *re, char *why, size_t cap);

/* Whether the UTF-8 text `s` (`len` bytes) matches `re` somewhere (JSON Schema semantics).
 * A pattern outside the subset matches nothing. */
bool pattern_match(const char *re, const char *s, size_t len);

/* Append a GBNF expression for the JSON string bodies (no quotes, escapes or control
 * characters) that match `re`; unbounded repetitions and unanchored ends are bounded by
 * `cap` characters. False when `re` is outside the subset. */
bool pattern_gbnf(const char *re, int64_t cap, struct strbuf *b);

/* The same for strings that also have a length range [min_len, max_len] (max_len -1: none):
 * when the pattern is a concatenation of characters and repetitions of character sets with
 * at most one unbounded repetition, that repetition is bounded so that every string the
 * expression allows has a length in the range (an unanchored pattern is then matched by the
 * whole string). False when the pattern has another shape or no length fits: the caller
 * keeps the lengths for validation. */
bool pattern_gbnf_lengths(const char *re,
                          int64_t cap,
                          int64_t min_len,
                          int64_t max_len,
                          struct strbuf *b);

#endif /* PIPIT_PATTERN_H */
