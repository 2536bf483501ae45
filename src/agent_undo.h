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
 * log; a phrase of the pack that names no logged action says there is nothing to undo for it.
 * False (nothing done) when the phrase has no word of the pack. */
bool agent_undo_named(struct pipit_agent *a, struct turn_build *tb, const char *phrase, size_t len);

/* Snapshot the undo keys of `tool` from the device state (NULL when not applicable). */
json_t *agent_undo_snapshot(struct pipit_agent *a, int32_t tool);

/* The model called the built-in undo tool: revert the newest action from the log, exactly as
 * a routed undo does. No tool runs. */
void agent_model_undo(struct pipit_agent *a, struct turn_build *tb, struct pipit_call_record *rec);

#endif /* PIPIT_AGENT_UNDO_H */
