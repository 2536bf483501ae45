/*
 * agent_value.h - a value the pack does not have, refused instead of replaced (agent_value.c):
 * "set the white balance to candlelight" is not daylight.
 */
#ifndef PIPIT_AGENT_VALUE_H
#define PIPIT_AGENT_VALUE_H

#include "toolspec.h"

#include <stdbool.h>
#include <stdint.h>

struct pipit_call;

/* The grammar lets the model write only a tool's enum values, so a value the person asked for
 * that the tool does not have comes out as one it has: "set the white balance to candlelight"
 * -> daylight, "scene mode underwater" -> food, "aspect ratio 21:9" -> 16:9. When the segment
 * names the tool (agent_names_tool()), says none of the words of the values of the tool's one
 * required argument (the call's only one), a string enum of three values or more that is no
 * switch ("on"/"off", "start"/"stop"; "front" and
 * "back" are two: "the rear camera" is the model's to map), and says in that value's place a word
 * the pack does not know (right after "to", "into" or "on", or right after the tool's or the
 * argument's name, or between a determiner and that name: "show the weather screen"; not a word of
 * any tool's name, arguments, enum values, descriptions or examples, nor a word of the argument's
 * other values, nor a generic word such as "normal" or "default"), or a ratio such as "21:9" where
 * the values are ratios, the argument becomes the person's word: validation then refuses the call
 * with the values the tool has ("The white balance can be auto, daylight, ..."). True when `call`
 * was rewritten. */
/* "make the living room turquoise" -> set_brightness(percent=1): a pack example ends with a value
 * of one of its tool's string enums (three values or more, no switch) and opens with the
 * segment's first word after "please", "can you", ... ("make the bedroom light red"), the
 * segment ends with a word of three letters or more the pack does not know (as above), says
 * no value of that argument and no negation, and its tool's other required arguments are
 * enums of which the segment says exactly one value each ("living room"): that tool with the
 * person's word, which validation refuses with the values it has ("The colour can be warm,
 * cool, ..."), instead of a value or tool nobody asked for. The model's tool too when it is
 * that one. Only when one tool and argument fit. True when `call` was rewritten. */
bool agent_choose_tool_by_unknown_value(const struct pipit_toolset *ts,
                                        int32_t tool,
                                        const char *segment,
                                        struct pipit_call *call);

bool agent_restore_unknown_value(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call);

/* Values that are a name and a number ("p1", "p2", "p3"; "preset_1", "zone2"): the one number
 * the segment says for them (digits, a number word, an ordinal, or the value itself: "slot one",
 * "the second preset", "in p2") is the value meant, whatever the model chose ("save this as baby
 * clothes in slot two" -> p3). Only for a tool without a numeric argument, one such number said,
 * and "one" that is no pronoun ("the other one"). True when `call` was rewritten. */
bool agent_restore_numbered_value(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call);

/* A value said by its name and number where some of the argument's values are that name and a
 * number ("switch to hdmi 3" with inputs hdmi1, hdmi2, usb, cast; "HDMI-2", "hdmi2"): the value
 * with that number replaces the model's choice, and with no such value the said one does
 * ("hdmi3"), for validation to refuse with the values there are: never a neighbour the model
 * picked. One such mention in the segment; two values or more share the name. True when `call`
 * was rewritten. */
bool agent_restore_named_number(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

#endif /* PIPIT_AGENT_VALUE_H */
