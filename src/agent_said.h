/*
 * agent_said.h - what a segment says, for the guards (agent_guard.c, agent_choice.c,
 * agent_choose.c, agent_switch.c, agent_number.c): phrases as whole words, a negation, and a call's
 * arguments written back. Below both guards.
 */
#ifndef PIPIT_AGENT_SAID_H
#define PIPIT_AGENT_SAID_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GUARD_MAX_NUMBERS 8  /* numbers read from one segment */
#define GUARD_MAX_TOKENS  64 /* words read from one segment */

/* Whether the tokens say `phrase` (lowercase words) as whole words anywhere. */
bool agent_said_phrase(const struct words_tok *t, size_t n, const char *phrase);

/* Whether the tokens say enum value `v` as whole words ('_' and '-' as spaces, any case:
 * "milk_clean" as "milk clean"). */
bool agent_said_value(const struct words_tok *t, size_t n, const char *v);

/* Whether the tokens say any phrase of `list` as whole words. */
bool agent_said_any(const struct words_tok *t, size_t n, const char *const *list, size_t n_list);

/* Whether the tokens negate ("not", "don't", "no", "never", "without", "nothing", ...). */
bool agent_said_negation(const struct words_tok *t, size_t n);

/* Write `args` back into `call` when `changed`; true when written. Every guard ends here. */
bool agent_said_put_args(struct pipit_call *call, const json_t *args, bool changed);

/* Make `call` tool `t` with `args` (consumed); true when done. */
bool agent_said_replace_call(struct pipit_call *call, const struct pipit_tool *t, json_t *args);

/* A number as JSON: an integer when it is whole, else a real. New reference. */
json_t *agent_said_number(double v);

#endif
