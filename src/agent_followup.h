/*
 * agent_followup.h - follow-ups of the last action: "again", "a bit more", "the other way"
 * (agent_followup.c).
 */
#ifndef PIPIT_AGENT_FOLLOWUP_H
#define PIPIT_AGENT_FOLLOWUP_H

#include "agent_impl.h"

/* Remember `tool` (a pack tool, not the cloud) with `args` as the last action that ran,
 * whether it succeeded and, when it did not, its failure code (`code`, NULL: none). */
void agent_followup_remember(struct pipit_agent *a,
                             int32_t tool,
                             const json_t *args,
                             bool ok,
                             const char *code);

/* A question about the state named one key, `key`, after the last action: "make it 2" now
 * means that key (NULL or "": forget it). */
void agent_followup_asked(struct pipit_agent *a, const char *key);

/* Forget the last action (it was undone, or the session was replaced). */
void agent_followup_forget(struct pipit_agent *a);

/* The call a segment that only follows up asks for (router_followup(), docs/agent.md), built
 * from the last action: the same call for "again" / "one more" / "try again" (unless it
 * succeeded and only sets keys: the same setting again would change nothing); for "a bit
 * more" / "the other way" the last relative step (a sign mapped from an enum such as in/out,
 * or a number) kept or turned round, or after a setting made from a number, the change it made
 * again either way (through the key's stepping tool when there is one); "dimmer still": the
 * last step with that enum value; "make it 10", "no, 1.5": the last call with its one number
 * replaced, or after a question about one key, that key's setter. After a call that failed:
 * "ok send it now" (a word of its tool's name and words pointing back) is the same call again;
 * "Sam Rivera", a whole utterance right after a failure whose code names a free-text argument
 * ("ambiguous_recipient"), a short answer with no verb, is the same call with that argument.
 * False when the segment is
 * no follow-up or the last action cannot do what it asks: the model reads the segment then.
 * `out` is cleared with pipit_call_clear(). */
bool agent_followup_call(const struct pipit_agent *a, const char *segment, struct pipit_call *out);

#endif /* PIPIT_AGENT_FOLLOWUP_H */
