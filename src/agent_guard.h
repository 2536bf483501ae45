/*
 * agent_guard.h - the person's numbers guard (agent_guard.c).
 */
#ifndef PIPIT_AGENT_GUARD_H
#define PIPIT_AGENT_GUARD_H

#include "agent_impl.h"

/* Puts the person's out-of-range number back into `call` when the model bent it (above).
 * Returns true when the arguments were changed. */
bool agent_restore_person_number(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call);

/* Converts a number the model copied without its unit ("5 hours" -> minutes=5 becomes 300;
 * agent_guard.c has the rule). Returns true when the arguments were changed. */
bool agent_convert_person_unit(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* Puts the person's words back into `call` when the model misspelt a copy of them in a free
 * string argument ("Bobo" for "text Bob hi"; agent_guard.c has the rule). Returns true when
 * the arguments were changed. */
bool agent_restore_person_words(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

/* Puts the enum value or the on/off the person said back into `call` when the model chose
 * another ("turn the flash on" -> mode "off"; agent_guard.c has the rule). Returns true when
 * the arguments were changed. */
bool agent_restore_person_choice(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call);

#endif /* PIPIT_AGENT_GUARD_H */
