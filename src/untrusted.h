/*
 * untrusted.h - text from outside the person and the pack (cloud answers, tool results,
 * handler messages) made fit to show and to remember: data, never instructions.
 *
 *     char *shown = untrusted_clean(answer, 1024, 0);         // the reply: several lines
 *     char *fact = untrusted_clean(value, 40, UNTRUSTED_ONE_LINE);
 *     json_t *data = untrusted_clean_json(handler_data, 4096); // every string of a result
 *
 * What a cleaned text never holds (docs/memory.md, "Untrusted text"):
 * - call syntax or control-token text: anything shaped like a tag (`<call>`, `<tool_call>`,
 *   `</tool_call>`, `<|im_start|>`, `<end_of_turn>`, `<s>`, `<｜...｜>`), bracketed upper-case
 *   markers (`[INST]`, `[TOOL_CALLS]`), and a left-over `<|` or `|>`; removal repeats until
 *   nothing tag-shaped is left, so `<ca<call>ll>` does not become `<call>`;
 * - control characters (C0, C1, DEL), invisible format characters (zero-width spaces and
 *   joiners, bidirectional overrides, the byte-order mark, variation selectors, the Unicode tag
 *   block), which could hide a tag from this very rule; full-width and small forms of `<`, `>`
 *   and `|` count as the ASCII ones;
 * - invalid UTF-8 (each bad byte becomes '?');
 * - more than `max_bytes` bytes: it is cut on a word or character boundary and ends in "...".
 * Whitespace runs collapse to one space (with UNTRUSTED_ONE_LINE newlines too, else at most one
 * blank line survives) and the ends are trimmed. Cleaning is idempotent.
 *
 * It contains no marker byte of backend.h (BACKEND_DATA_OPEN/CLOSE: they are C0 characters).
 */
#ifndef PIPIT_UNTRUSTED_H
#define PIPIT_UNTRUSTED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define UNTRUSTED_ONE_LINE 1u /* newlines become spaces */

/* A cleaned copy of `text` (NULL: ""), at most `max_bytes` bytes (>= 4), as a new string (free
 * with free); NULL when out of memory. */
char *untrusted_clean(const char *text, size_t max_bytes, unsigned flags);

/* The same into `buf` (cut to `size` - 1 bytes as well); "" when out of memory. */
void untrusted_clean_into(const char *text, char *buf, size_t size, unsigned flags);

/* A deep copy of `v` (new reference) in which every string, and every object key, is cleaned
 * (keys on one line, at most 64 bytes; strings at most `max_string` bytes). A key that cleans
 * to "" or to a key already present is dropped. NULL when `v` is NULL or out of memory. */
json_t *untrusted_clean_json(const json_t *v, size_t max_string);

/* True when `text` is one plain word that can be remembered as a value: 1..max_bytes bytes of
 * ASCII letters, digits and . : / @ # + - (an ID, a number, an enum value, a time), never
 * spaces (no sentence, no command) nor '_' (no tool name). */
bool untrusted_is_word(const char *text, size_t max_bytes);

/* A copy of a result's data (new reference) with only what a later turn may need by name:
 * numbers, booleans, null, and strings that are one plain word (untrusted_is_word, at most
 * `max_word` bytes), inside objects and arrays; every other string is left out. */
json_t *untrusted_words_json(const json_t *v, size_t max_word);

/* True when `text` holds something untrusted_clean would remove or change (ignoring length and
 * whitespace): tag-shaped text, control or invisible characters, invalid UTF-8. */
bool untrusted_has_syntax(const char *text);

#endif /* PIPIT_UNTRUSTED_H */
