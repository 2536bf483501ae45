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

#endif /* PIPIT_AGENT_STEP_H */
