/*
 * agent_heard.h - what the person said, read for the guards (agent_guard.c, agent_choice.c,
 * agent_choose.c, agent_switch.c): words and their typos, values, switch sides, negations and
 * the verbs that open a command (agent_heard.c).
 */
#ifndef PIPIT_AGENT_HEARD_H
#define PIPIT_AGENT_HEARD_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

#include <jansson.h>

#define GUARD_MAX_COPY 64

/* Words that say a switch's on side and its off side ("on", "enable", ...; "off", "disable",
 * ...), parts of a boolean's name that make "on" mean false ("mute", "hidden", ...), words that
 * keep or turn a switch off ("drop", "away", "kill", ...) and words that open a request without
 * being its verb ("please", "can", "ok", ...). */
#define HEARD_N_SAY_TRUE 5
extern const char *const HEARD_SAY_TRUE[HEARD_N_SAY_TRUE];
#define HEARD_N_SAY_FALSE 10
extern const char *const HEARD_SAY_FALSE[HEARD_N_SAY_FALSE];
#define HEARD_N_NEGATIVE_NAMES 11
extern const char *const HEARD_NEGATIVE_NAMES[HEARD_N_NEGATIVE_NAMES];
#define HEARD_N_OFF_WORDS 35
extern const char *const HEARD_OFF_WORDS[HEARD_N_OFF_WORDS];
#define HEARD_N_OPENERS 24
extern const char *const HEARD_OPENERS[HEARD_N_OPENERS];

/* Edits between two words, case aside: a letter put in, dropped or changed, or two neighbours
 * swapped (optimal string alignment), so "falsh" is one from "flash", as the training data's
 * typos are (train_add_typo()). */
size_t heard_edit_distance(const char *a, size_t la, const char *b, size_t lb);

/* The first place `needle` occurs in `hay`, case aside; NULL when nowhere (or empty). */
const char *heard_find_nocase(const char *hay, const char *needle);

/* Whether `needle` occurs in `hay`, case aside. */
bool heard_contains_nocase(const char *hay, const char *needle);

/* `v` as a lowercase phrase ("living_room" -> "living room"); false when it is not one. */
bool heard_value_phrase(const char *v, char *out, size_t size);

/* Whether the tokens say enum value `phrase`: as whole words, or a one-word value of 4 letters
 * or more as the start of a word ("automatic" says "auto", "portraits" says "portrait"), but
 * not as a comparative ("warmer" is no "warm": it asks for a change). */
bool heard_says_value(const struct words_tok *t, size_t n, const char *phrase);

/* Whether the segment says boolean `name`'s stem ("lock" of "locked", "arm" of "armed") as a
 * word's start: *undone when with "un" or "dis" before it, anywhere ("unlock", "disarm"), *done
 * when without, as the verb that opens the segment ("lock it up"; "release the lock" says the
 * noun). */
void heard_said_stem(const char *name,
                     const struct words_tok *tok,
                     size_t n,
                     bool *done,
                     bool *undone);

/* "turn of the flash": "of" right after a verb of switching is "off" mistyped, and so is "of"
 * that ends a segment with such a verb ("turn the flsh of"); the tokens are rewritten. */
void heard_read_mistyped_off(struct words_tok *tok, size_t n);

/* Whether the tokens negate, leaving out negation words inside a name of the pack's: "enable
 * do not disturb" names set_do_not_disturb and negates nothing. The names: each tool's name
 * less its first word ("do not disturb" of set_do_not_disturb), and the state keys' names. */
bool heard_negates(const struct pipit_toolset *ts, const struct words_tok *tok, size_t n);

/* For an enum that is a switch: the index of its on-side and off-side values; false if not. */
bool heard_enum_switch(const struct pipit_schema *s, size_t *on, size_t *off);

/* Whether token `w` is `name` (a word of a tool's or key's name): the same, a longer form
 * ("recording" for "record"), or one slip away ("flsh"). */
bool heard_word_names(const char *w, const char *name, size_t len);

/* Whether any word of `text` (split at '_', ' ' and '|') names a token of the segment. */
bool heard_text_named(const char *text, const struct words_tok *tok, size_t n);

/* Whether the segment names what `tool` switches: a word of its name, of the keys it changes
 * or of their declared names ("pin the focus": ae_af_locked is also "focus lock"). */
bool heard_names_switch(const struct pipit_toolset *ts,
                        size_t tool,
                        const struct words_tok *tok,
                        size_t n);

/* Whether the segment says one of the call's values: a string value in words, a number. */
bool heard_says_a_value_of(const json_t *args,
                           const char *segment,
                           const struct words_tok *tok,
                           size_t n);

/* Whether the segment is, but for openers and fillers, a verb people use for value `ph` when
 * the value is a verb of the bank (verbbank.h: "ok carry on", "keep going please" for
 * "resume"); "drop the temperature" says no "cancel". */
bool heard_says_verb_of(const struct words_tok *tok, size_t n, const char *ph);

/* Whether the segment's verb is the verb of comparative value `ph` (one word ending in "er",
 * five letters or more): "dim" or "dims" for "dimmer", "brighten" for "brighter", "warm" for
 * "warmer" ("dim the kitchen a little" had switched the kitchen light on). */
bool heard_says_comparative(const struct words_tok *tok, size_t n, const char *ph);

/* The string enum values that name a setting and that the segment says: 4 letters or more
 * ("daylight", "living room", a word's start: "portraits"), no word of a reversal ("back"), no
 * switch side ("start", "stop": "down half a stop"), no cloud tool's. Returns how many; the
 * first `max` go to tools[], args[] and values[] (max 0: only counted). */
size_t heard_settings_said(const struct pipit_toolset *ts,
                           const struct words_tok *tok,
                           size_t n,
                           size_t *tools,
                           size_t *args,
                           const char **values,
                           bool *verbs,
                           size_t max);

/* The index of the first token after the words that open a request (HEARD_OPENERS). */
size_t heard_skip_openers(const struct words_tok *tok, size_t n);

/* Whether `w` is `lead` or, with `bank`, one of the verbs people use for it (verbbank.h: "grab"
 * for "snap"), one word. */
bool heard_verb_is(const char *lead, const char *w, bool bank);

/* The one tool some of whose examples open with `w` (after OPENERS), or -1: none or two. When
 * no example opens with it, the one tool an example of which opens with a verb `w` is said
 * for ("grab him mid-jump": take_photo's "snap one of the dog"). */
int32_t heard_example_verb_tool(const struct pipit_toolset *ts, const char *w);

/* Whether the segment names the model's call: a word of its tool or keys, or one of its
 * values. */
bool heard_names_call(const struct pipit_toolset *ts,
                      int32_t tool,
                      const struct pipit_call *call,
                      const char *segment,
                      const struct words_tok *tok,
                      size_t n);

/* Tool `i`'s one required argument when it is a number and the only required one, else NULL. */
const struct pipit_schema_prop *heard_one_required_number(const struct pipit_tool *t);

/* Whether `w` names a word of `text` (split at anything not a letter or digit). */
bool heard_names_word_of(const char *w, const char *text);

/* Whether `w` names anything of the pack: a tool's name, description, argument or enum value,
 * an example's words, a state key or its declared names; a longer form or one slip away. */
bool heard_pack_names(const struct pipit_toolset *ts, const char *w);

#endif /* PIPIT_AGENT_HEARD_H */
