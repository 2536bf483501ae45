/*
 * agent_decode.h - one segment's decode (agent_decode.c).
 */
#ifndef PIPIT_AGENT_DECODE_H
#define PIPIT_AGENT_DECODE_H

#include "agent_impl.h"

/* Decode one segment: one constrained decode, or two in JIT mode (the tool's name, then its
 * arguments with its compact schema in the ephemeral context). *text receives the model's
 * output (in JIT mode the whole call); NULL with PIPIT_OK when a limit stopped the step. */
enum pipit_status agent_decode_segment(struct pipit_agent *a,
                                       struct turn_build *tb,
                                       const char *segment,
                                       const struct policy_clock *clock,
                                       const struct policy_limits *lim,
                                       bool first,
                                       char **text);

#endif /* PIPIT_AGENT_DECODE_H */
