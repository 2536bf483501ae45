/*
 * ask.h - questions about the device's state, answered from the state; plain-text claims
 * about the state, checked against it.
 *
 * A small model that answers "is the flash on?" from its own weights says what it saw in
 * training, not what the device is doing. So the harness answers such questions itself, with
 * no model call and no tool call, and checks every plain-text answer the model does write:
 * a sentence that claims a value for a state key that differs from the real state is replaced
 * by the true sentence (docs/agent.md, "State questions").
 *
 * What names a state key comes from the pack, never from this file: the state's own keys
 * ("timer_s" -> "timer"), the tools that change exactly one key ("switch_camera" -> "camera"
 * for "facing"), the string enums of those tools ("front", "night"), and the device's optional
 * words (struct device_key_words: more names, value units, whole sentences). This file holds
 * only generic English: question words, copulas, on/off words.
 *
 *     struct ask *k = NULL;
 *     ask_new(ts, state, dev->ops->words, dev->ops->n_words, &k, &err);
 *     char answer[256];
 *     if (ask_answer(k, "what's the zoom at?", state, answer, sizeof(answer)) > 0) {
 *         ... answer is "The zoom is 2x." ...
 *     }
 *     ask_free(k);
 *
 * Invariants: an answer or a corrected sentence says only values read from the state passed
 * in; an utterance is a state question only when every word in it is a question word, a
 * filler, a name of a state key, or a value word (anything else, e.g. "what's a good zoom for
 * portraits?", goes to the model). Bounded: at most ASK_MAX_TOKENS words of an utterance or a
 * sentence are looked at; answers are cut to the caller's buffer. No global mutable state.
 *
 * Thread safety: a `struct ask` is read-only after ask_new() and may be shared.
 */
#ifndef PIPIT_ASK_H
#define PIPIT_ASK_H

#include "device.h"
#include "pipit.h"
#include "toolspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define ASK_MAX_KEYS    64 /* state keys a question can name */
#define ASK_MAX_ALIASES 384
#define ASK_MAX_TOKENS  64 /* words of an utterance or a sentence looked at */

struct ask;

/* Build the key lexicon from the tool set `ts`, the device's current `state` (an object: its
 * scalar and array keys are the ones questions can name; the value types come from it) and
 * the device's optional `words` (n_words entries; NULL with 0). Errors: PIPIT_ERR_INVALID_ARG
 * (NULL ts, state not an object, NULL out), PIPIT_ERR_NOMEM. */
enum pipit_status ask_new(const struct pipit_toolset *ts,
                          const json_t *state,
                          const struct device_key_words *words,
                          size_t n_words,
                          struct ask **out,
                          struct pipit_error *err);

/* NULL is a no-op. */
void ask_free(struct ask *k);

/* When `utterance` is a question about the state ("is the flash on?", "what zoom am I at",
 * "which camera is on?", "is it recording?", "how many alarms do I have?"), write the answer
 * from `state` into buf ("The flash is on.", one sentence per key asked about) and return the
 * number of keys answered (1..4). 0 when it is not such a question (buf is then ""). */
int ask_answer(const struct ask *k,
               const char *utterance,
               const json_t *state,
               char *buf,
               size_t size);

/* How a sentence says a key's value now or after an undo. */
enum ask_form {
    ASK_NOW = 0,   /* "The zoom is 2x.", "It's recording.", "There are 2 alarms." */
    ASK_AGAIN = 1, /* "The zoom is 1x again.", "Back to no alarms.", "The navigation is back
                      as it was." */
};

/* The sentence that says `key` has `value` (a value of the state). False when the key is not
 * in the lexicon or the value's type does not fit it (buf is then ""). Objects have a sentence
 * only in ASK_AGAIN form. */
bool ask_sentence(const struct ask *k,
                  const char *key,
                  const json_t *value,
                  enum ask_form form,
                  char *buf,
                  size_t size);

/* Whether `text` names state key `key` by one of its names ("is the water running?" names no
 * key of a garden's eco mode). */
bool ask_names_key(const struct ask *k, const char *text, const char *key);

/* Check plain text against `state`. Every sentence that claims a value for a state key ("The
 * flash is off.", "The zoom is 1x.", "It isn't recording.", "The front camera is active.") and
 * gets it wrong is replaced by the true sentences of the keys it names. Returns a new string
 * (free with free()) when at least one sentence was replaced, with *n_fixed the number of
 * sentences replaced; NULL with *n_fixed 0 when nothing was wrong; NULL with *n_fixed -1 when
 * out of memory. */
char *ask_correct(const struct ask *k, const char *text, const json_t *state, int *n_fixed);

/* The state of the one key `text` names by one of its names ("did I leave the kitchen light
 * on" -> "The kitchen light is on."), whatever else it says; of several keys named, the one
 * whose key name's words are all said ("what colour are the kitchen lights": kitchen_colour).
 * Keys said (ask_say_keys()), 0 when it names none or no one key. For a question the model
 * would send to the cloud. */
int ask_say_named_key(const struct ask *k,
                      const char *text,
                      const json_t *state,
                      char *buf,
                      size_t size);

#endif /* PIPIT_ASK_H */
