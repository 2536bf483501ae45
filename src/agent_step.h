/*
 * agent_step.h - one decoded output: validate, execute, say (agent_step.c).
 */
#ifndef PIPIT_AGENT_STEP_H
#define PIPIT_AGENT_STEP_H

#include "agent_impl.h"

/* Handle one decoded step output. Returns false when the turn must stop (breaker). */
bool agent_handle_output(struct pipit_agent *a,
                         struct turn_build *tb,
                         const char *text,
                         const struct policy_clock *clock);

/* Handle a call the harness made (a follow-up of the last action, agent_followup.c): validated,
 * executed, said and remembered as a model's call is, without the guards that read the
 * person's words into the model's arguments. `call` is copied. Returns false when the turn must
 * stop (breaker, out of memory). */
bool agent_handle_call(struct pipit_agent *a,
                       struct turn_build *tb,
                       const struct pipit_call *call,
                       const struct policy_clock *clock);

#endif /* PIPIT_AGENT_STEP_H */
