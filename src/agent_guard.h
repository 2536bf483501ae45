/*
 * agent_guard.h - the person's words in the model's call: a name, a place or a message the
 * model misspelt or cut while copying it is put back to the person's words, and the item the
 * person named by its title, contact or number is the one the call takes (agent_guard.c).
 */
#ifndef PIPIT_AGENT_GUARD_H
#define PIPIT_AGENT_GUARD_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

/* The item the person named by its title, contact or number put back when the model took
 * another identifier from the same array of the device's state ("add rope to the ideas note"
 * -> note_id "N-1" becomes the ideas note's "N-3"; docs/agent.md). True when `call` changed. */
bool agent_restore_named_item(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              const json_t *state,
                              struct pipit_call *call);

/* The identifier the person wrote put back when the model wrote another: a string argument
 * whose schema pattern is anchored at both ends ("^CH-[0-9]{1,4}$") and exactly one word of
 * the segment that matches it whole ("reserve CH-5" -> "CH-55" becomes "CH-5"). True when
 * `call` changed. */
bool agent_restore_pattern_id(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              struct pipit_call *call);

/* The text after a colon is said whole: "message mom: landed safely" -> body "safely" becomes
 * "landed safely". When the segment has a colon (not one inside a time or ratio, "7:15",
 * "16:9") with text after it, and a free string argument of the model's call holds some of
 * that text's words, in order, but not all, the argument becomes the whole text after the
 * colon (trailing spaces and full stops cut). One argument at most. True when `call` changed. */
bool agent_restore_after_colon(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* What a thing is "called" is its name as said: when the pack's own examples of `tool` say
 * "called X" (or "named", "titled", "labelled") for a free string argument whose value is X
 * ("alarm at 14:00 called dentist": label), the segment's words after its "called", up to a
 * colon, comma or the end, become that argument ("... 7 tomorrow morning called gym" had set
 * the label "tomorrow"). True when `call` changed. */
bool agent_restore_called_name(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* Puts the person's words back into `call` when the model misspelt a copy of them in a free
 * string argument ("Bobo" for "text Bob hi"; agent_guard.c has the rule). Returns true when
 * the arguments were changed. */
bool agent_restore_person_words(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

#endif /* PIPIT_AGENT_GUARD_H */
