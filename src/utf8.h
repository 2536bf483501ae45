/*
 * utf8.h - the one place pipit reads UTF-8: character lengths, validity, and cutting text
 * without splitting a character. Every module that checks or cuts text uses these.
 */
#ifndef PIPIT_UTF8_H
#define PIPIT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s[0..n), 0 when it is not one (stray continuation
 * byte, overlong or truncated sequence, surrogate, above U+10FFFF). ASCII, control characters
 * included, is 1. */
size_t utf8_seq_len(const unsigned char *s, size_t n);

/* The same for text a person reads: 0 also for a control character other than newline and tab
 * in `multiline` text (and for those two in one-line text). */
size_t utf8_char_len(const unsigned char *s, size_t n, bool multiline);

/* True when s[0..n) is valid UTF-8. */
bool utf8_valid(const char *s, size_t n);

/* The largest character boundary <= n in `s` (which holds at least n bytes, and s[n] is read
 * when it is part of the text): where to cut so that no character is split. */
size_t utf8_boundary(const char *s, size_t n);

/* Cut the NUL-terminated `s` to at most `max` bytes on a character boundary. */
void utf8_cut(char *s, size_t max);

/* Number of characters (code points) in s[0..n) of valid UTF-8. */
size_t utf8_count(const char *s, size_t n);

/* Replace every byte of the NUL-terminated `s` that does not start a valid one-line character
 * with '?' (text cut by truncation may end inside a character). */
void utf8_sanitize(char *s);

/* Encode the code point `cp` (<= 0x10FFFF) as UTF-8 into out; returns its length (1-4). */
size_t utf8_encode(uint32_t cp, unsigned char out[4]);

#endif /* PIPIT_UTF8_H */
