/*
 * agent_named.h - a tool the person named in full (agent_named.c): "cancel the timer" names
 * cancel_timer, whatever the model called.
 */
#ifndef PIPIT_AGENT_NAMED_H
#define PIPIT_AGENT_NAMED_H

#include "agent_impl.h"
#include "toolspec.h"

#include <stdbool.h>
#include <stdint.h>

/* The one tool every word of whose name the segment says ("cancel the timer": cancel_timer;
 * "request a ride"), when the model called another whose name it does not say in full
 * ("cancel the timer" -> set_timer(minutes=40)): the call becomes that tool's, its required
 * arguments filled from the one enum value the segment says, the model's arguments of the same
 * name and type, the schema's default, for an identifier the one item of the state's arrays
 * whose "id" has the shape of the tool's examples ("TM-1": the one running timer), or the one
 * number the segment says. Not for the cloud tool, a question or a negation. Returns 1 when
 * `call` was replaced, -1 when the tool is named but an argument cannot be filled (no timer,
 * or two: *named_out is that tool; the model's call must not run either), 0 otherwise. */
int agent_choose_tool_named_in_full(const struct pipit_toolset *ts,
                                    int32_t tool,
                                    const char *segment,
                                    const json_t *state,
                                    struct pipit_call *call,
                                    int32_t *named_out);

#endif /* PIPIT_AGENT_NAMED_H */
