/*
 * agent_guard_impl.h - what the guards' files share (agent_guard.c, agent_number.c); not an
 * interface for anything else.
 */
#ifndef PIPIT_AGENT_GUARD_IMPL_H
#define PIPIT_AGENT_GUARD_IMPL_H

#include "agent_impl.h"
#include "words.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define GUARD_MAX_NUMBERS 8  /* numbers read from one segment */
#define GUARD_MAX_TOKENS  64 /* words read from one segment */

/* Whether the tokens say any phrase of `list` as whole words. */
bool agent_guard_says_any(const struct words_tok *t,
                          size_t n,
                          const char *const *list,
                          size_t n_list);

/* Whether the tokens negate ("not", "don't", "no", "never", "without", ...). */
bool agent_guard_negates(const struct words_tok *t, size_t n);

/* Write `args` back into `call` when `changed`; true when written. Every guard ends here. */
bool agent_guard_put_args(struct pipit_call *call, const json_t *args, bool changed);

#endif
