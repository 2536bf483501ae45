/*
 * agent_followup.h - follow-ups of the last action: "again", "a bit more", "the other way"
 * (agent_followup.c).
 */
#ifndef PIPIT_AGENT_FOLLOWUP_H
#define PIPIT_AGENT_FOLLOWUP_H

#include "agent_impl.h"

/* Remember `tool` (a pack tool, not the cloud) with `args` as the last action that ran, and
 * whether it succeeded. */
void agent_followup_remember(struct pipit_agent *a, int32_t tool, const json_t *args, bool ok);

/* A question about the state named one key, `key`, after the last action: "make it 2" now
 * means that key (NULL or "": forget it). */
void agent_followup_asked(struct pipit_agent *a, const char *key);

/* Forget the last action (it was undone, or the session was replaced). */
void agent_followup_forget(struct pipit_agent *a);

/* The call a segment that only follows up asks for, built from the last action: the same call
 * for "again" / "one more" / "try again" (unless it succeeded and only sets keys: the same
 * setting again would change nothing, so the words mean something else); for "a bit more" and "the
 * other way" only when the last tool's declared effect steps a key by an amount its arguments set
 * (a sign mapped from an enum such as in/out, or a number), the same call or the call turned round
 * (the enum's other value, the number negated). False when the segment is no follow-up, nothing ran
 * yet, or the last action cannot be turned round: the model reads the segment then. `out` is
 * cleared with pipit_call_clear(). */
bool agent_followup_call(const struct pipit_agent *a, const char *segment, struct pipit_call *out);

#endif /* PIPIT_AGENT_FOLLOWUP_H */
