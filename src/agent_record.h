/*
 * agent_record.h - building the turn's record (agent_record.c).
 */
#ifndef PIPIT_AGENT_RECORD_H
#define PIPIT_AGENT_RECORD_H

#include "agent_impl.h"

void agent_say(struct turn_build *tb, const char *text);

struct pipit_call_record *agent_new_record(struct turn_build *tb);

char *agent_strdup(const char *s);

/* Collect every step's raw output of the turn (for the full-history memory). */
void agent_output_add(struct turn_build *tb, const char *text);

#endif /* PIPIT_AGENT_RECORD_H */
