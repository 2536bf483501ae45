/*
 * agent_mode.h - modes and sides in the person's words (agent_mode.c): a mode turned off is the
 * mode the device starts in ("turn off turbo" leaves turbo), and a tool's own verb is its on
 * side ("record the first song" starts a recording).
 */
#ifndef PIPIT_AGENT_MODE_H
#define PIPIT_AGENT_MODE_H

#include "toolspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct pipit_call;

/* When the model's call of `tool` sets a state key (a `set` effect of a fixed key from the
 * tool's one required argument, a string enum of three values or more with no "on"/"off"
 * pair) to the value V the segment names with an off word ("turn off turbo", "turbo off", "no
 * more night mode", "get out of eco", "disable sport mode"), and the segment names no other of
 * the argument's values: the argument becomes the key's declared initial value when `state`
 * holds V (the mode is left), else the key's current value (it was not on: nothing changes).
 * Not when the initial value is V itself. True when `call` was rewritten. */
bool agent_mode_turned_off(const struct pipit_toolset *ts,
                           int32_t tool,
                           const char *segment,
                           const json_t *state,
                           struct pipit_call *call);

/* When the model's call of `tool` (its one required argument an enum with an on side and an
 * off side: "start"/"stop", "on"/"off", "open"/"close", "play"/"pause") took the off side while
 * the segment opens (after "please", "ok", "now", ...) with the first word of the tool's name
 * ("record the first song" -> record_video(action="stop")) and says no word of stopping: the
 * argument becomes the on side. True when `call` was rewritten. */
bool agent_own_verb_side(const struct pipit_toolset *ts,
                         int32_t tool,
                         const char *segment,
                         struct pipit_call *call);

/* "enough, stop it" while a recording runs: a segment of a word of stopping ("stop", "end",
 * "finish", "enough") and nothing but "it", "that", "now", "ok", "please", ... is the stop side
 * of the one tool whose one required argument is an enum with "stop" that an effect maps onto a
 * key `state` holds as running (record_video's "action": "start" -> recording true), whatever
 * the model called (it had raised the exposure); with no such tool, the one tool without
 * arguments named for stopping ("stop_", "end_", "cancel_", ...) that puts a key the state
 * holds at another value back to its declared initial ("stop it" during a descaling:
 * stop_cleaning). True when `call` was replaced. */
bool agent_stop_what_runs(const struct pipit_toolset *ts,
                          const char *segment,
                          const json_t *state,
                          struct pipit_call *call);

/* "turn the timer off" -> switch_light(on=false): when the segment says a word of clearing
 * ("off", "cancel", "clear", "kill", "stop", "end", "reset"), no number and no negation, names
 * state key `key` (the caller's lexicon: exactly one key named), the model's tool does not write
 * that key (`tool` -1: the model called none), and exactly one tool with no required argument sets
 * it to 0 or false (a home's cancel_timer: timer_min 0), the call becomes that tool's. True when
 * `call` was replaced. */
bool agent_key_turned_off(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const char *key,
                          struct pipit_call *call);

/* "stop the rinse" -> start_cleaning(program="rinse"): when the model called a tool named
 * <verb>_<rest> and the segment opens (after "please", "ok", ...) not with that verb but with
 * the verb of another tool named <other>_<rest> ("stop_cleaning"), or a verb people use for it
 * (verbbank.h: "end" for "stop", "begin" for "start"), and negates nothing, the call becomes
 * that tool's, with the model's arguments it takes by name (not when it needs one the model's
 * call lacks). True when `call` was replaced. */
bool agent_verb_pair_tool(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          struct pipit_call *call);

#endif /* PIPIT_AGENT_MODE_H */
