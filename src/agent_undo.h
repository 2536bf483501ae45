/*
 * agent_undo.h - the action log and undo (agent_undo.c).
 */
#ifndef PIPIT_AGENT_UNDO_H
#define PIPIT_AGENT_UNDO_H

#include "agent_impl.h"

void agent_log_push(struct pipit_agent *a,
                    int32_t tool,
                    enum pipit_undo_kind kind,
                    json_t *snapshot);

/* Revert `count` actions for the person (the router found an undo request). */
void agent_undo(struct pipit_agent *a, struct turn_build *tb, int32_t count);

/* "undo the blinds" (router_undo_named(): the `len` bytes at `phrase` are "the blinds"): the
 * newest logged action whose keys or tool the phrase names is reverted, alone, and leaves the
 * log; a phrase of the pack that names no logged action says there is nothing to undo for it,
 * or, with `newest` (the person said an earlier state: "make the shape of the photo what it
 * used to be"), the newest action is undone. False (nothing done) when the phrase has no word
 * of the pack. */
bool agent_undo_named(struct pipit_agent *a,
                      struct turn_build *tb,
                      const char *phrase,
                      size_t len,
                      bool newest);

/* The model's call of `tool` on a segment that asks for the earlier state ("hmm no, I prefer the
 * flash the way I had it" -> set_flash(mode="off"), "gimme the old zoom" -> a zoom step out):
 * when the segment says a word of reversal (undo, revert, before, previous, earlier, "back" of
 * a state: "set it back", "back to ...", "back the way ...", not "zoom back a step";
 * original, restore, mistake, wrong, forget, scrap, cancel, "get rid", "had", prefer(red),
 * liked, changed; not a word of the tool's own name: "cancel the timer"), no number (digits or
 * words) and none of the call's values, the newest logged action of an earlier turn on one of the
 * tool's undo keys is reverted instead, and true is returned (the call does not run). The person
 * asked for what was, not for the value the model guessed. */
bool agent_undo_instead(struct pipit_agent *a,
                        struct turn_build *tb,
                        int32_t tool,
                        const char *segment,
                        const char *args_json);

/* Snapshot the undo keys of `tool` from the device state (NULL when not applicable). */
json_t *agent_undo_snapshot(struct pipit_agent *a, int32_t tool);

/* The model called the built-in undo tool: revert the newest action from the log, exactly as
 * a routed undo does; when the segment names an earlier logged action (its keys or a word of
 * its tool's name; a value word does not name one: "roll that back" is no back camera) and
 * not the newest, that one alone ("put the lights back"
 * after the lights and then the blinds). No tool runs. */
void agent_model_undo(struct pipit_agent *a, struct turn_build *tb, struct pipit_call_record *rec);

#endif /* PIPIT_AGENT_UNDO_H */
