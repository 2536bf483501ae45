/*
 * agent_choice.h - the person's choice in the model's call: an enum value or an on/off other
 * than the one the person said is put back to theirs (agent_choice.c).
 */
#ifndef PIPIT_AGENT_CHOICE_H
#define PIPIT_AGENT_CHOICE_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

/* Puts the enum value or the on/off the person said back into `call` when the model chose
 * another ("turn the flash on" -> mode "off"; agent_choice.c has the rule). Returns true when
 * the arguments were changed. */
bool agent_restore_person_choice(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call);

/* Whether the segment asks for a setting by its value: it says a string enum value of some
 * tool of 4 letters or more that is no word of a reversal and no switch side ("daylight",
 * "fluorescent", "living room"; not "back", not "stop"). The model's undo for "hmm too blue,
 * try daylight" is no undo. */
bool agent_says_setting_value(const struct pipit_toolset *ts, const char *segment);

#endif /* PIPIT_AGENT_CHOICE_H */
