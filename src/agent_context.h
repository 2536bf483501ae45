/*
 * agent_context.h - the permanent prefix between turns (agent_context.c).
 */
#ifndef PIPIT_AGENT_CONTEXT_H
#define PIPIT_AGENT_CONTEXT_H

#include "agent_impl.h"

/* Trim the memory until the permanent prefix (system text and tools, then the memory) fits in
 * `budget` tokens, and rebuild the memory part of the prefix from the kept lines. The memory is
 * counted as it will be prefilled, so the prefix fits whatever a line's bytes per token; it is
 * trimmed to about 80% of its room, so the next turns fit too without a rebuild each. When the
 * pinned lines alone do not fit, the oldest are unpinned first (PIPIT_TURN_UNPINNED); when even
 * the system text and tools do not, the memory is emptied (PIPIT_TURN_OVER_BUDGET). */
/* The whole memory as the permanent prefix holds it: in a chat template one system message per
 * run of lines appended together after a turn, so a rebuild gives the same tokens up to the
 * first line that went; "" when empty; NULL when out of memory or the template fails. */
char *agent_memory_prefix_text(struct pipit_agent *a);

enum pipit_status agent_fit_memory(struct pipit_agent *a, struct pipit_turn *t, int32_t budget);

/* Fit the permanent prefix in `budget` tokens when it is longer, or when superseded facts still
 * sit in the KV cache and a rebuild drops them. */
enum pipit_status agent_trim_to_budget(struct pipit_agent *a, struct pipit_turn *t, int32_t budget);

/* After a turn: prefill the system prefix if no step did, append the memory delta to the
 * permanent prefix (only the delta is prefilled), and trim the oldest memory lines when the
 * prefix exceeds the context budget. */
enum pipit_status
agent_remember(struct pipit_agent *a, struct turn_build *tb, const char *utterance);

/* Rebuild the permanent prefix from text: the system prompt (prefilled now, to know its length)
 * and the memory (prefilled on the next step). */
enum pipit_status agent_rebuild_prefix(struct pipit_agent *a);

/* Give the State-Tracker's context the agent's whole memory (after a trim, a rebuild or a
 * session load): the two contexts hold the same CSO, and the tracker's never outgrows its own
 * window. PIPIT_OK without a tracker. */
enum pipit_status agent_sync_tracker(struct pipit_agent *a);

#endif /* PIPIT_AGENT_CONTEXT_H */
