/*
 * agent.h - internal entry points of the agent (the public API is in pipit.h, "agent").
 */
#ifndef PIPIT_AGENT_H
#define PIPIT_AGENT_H

#include "backend.h"
#include "pipit.h"

/* Create an agent on an existing backend, which it takes over (freed with the agent, also on
 * failure). `model` may be NULL (a scripted backend): prompts then use pipit's plain format.
 * Used by pipit_agent_init() and by tests with a scripted fake backend. */
enum pipit_status agent_new_with_backend(struct pipit_model *model,
                                         const struct pipit_toolset *tools,
                                         const struct pipit_agent_params *params,
                                         struct backend backend,
                                         struct pipit_agent **out,
                                         struct pipit_error *err);

/* The permanent prompt text the agent queued (system text, tools), borrowed. */
const char *agent_permanent_text(const struct pipit_agent *agent);

#endif /* PIPIT_AGENT_H */
