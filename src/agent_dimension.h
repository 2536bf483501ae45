/*
 * agent_dimension.h - a comparative names its quantity (agent_dimension.c): "a bit warmer"
 * is the temperature's step, not a light's.
 */
#ifndef PIPIT_AGENT_DIMENSION_H
#define PIPIT_AGENT_DIMENSION_H

#include "agent_impl.h"
#include "toolspec.h"

#include <stdbool.h>
#include <stdint.h>

/* The step of the quantity a comparative says ("warmer", "cooler", "hotter", "colder":
 * temperature; "brighter", "dimmer", "darker": brightness; "louder", "quieter": volume;
 * "longer", "shorter": duration), when the model called a tool of no such quantity: the one
 * tool with a `step` effect whose name, description or arguments speak of that quantity
 * ("celsius", "thermostat", "brightness", ...) is called instead, in the words' direction, by
 * the number said or else the smallest step of its examples, with the model's place for a key
 * per place. Not when the segment names a thing of another tool ("make the lights warmer":
 * the light's colour) or says two quantities. True when `call` was replaced. */
bool agent_restore_dimension_step(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call);

/* The same step when the model answered in words ("a bit warmer" -> "Sorry, I can't do
 * that."): `tool` -1 in the rule above; not for a question ("?", or "what", "is", "does", ...
 * first). `call` is set (cleared first) when true, untouched-and-empty otherwise. */
bool agent_dimension_call(const struct pipit_toolset *ts,
                          const char *segment,
                          struct pipit_call *call);

#endif /* PIPIT_AGENT_DIMENSION_H */
