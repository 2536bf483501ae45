/*
 * agent_switch.h - switches and guesses: a switch call that changes nothing, a side, direction,
 * number or value nobody said, a stray call, and a thing the pack does not have
 * (agent_switch.c).
 */
#ifndef PIPIT_AGENT_SWITCH_H
#define PIPIT_AGENT_SWITCH_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

/* Whether the call asks a switch for the value it has in `state` (a declared set effect on a
 * fixed key, its value a boolean or string: "action": "stop" -> recording false while
 * recording is false); a device refuses such a call ("No video is recording."). */
bool agent_switch_asks_current(const struct pipit_toolset *ts,
                               int32_t tool,
                               const json_t *args,
                               const json_t *state);

/* A switch call that changed nothing is read as the other side ("get the flash going" ->
 * mode "off" while it is off: "on"), unless the person said this side or a negation
 * (agent_switch.c has the rule). Call it after such a call ran and changed nothing; `args` is
 * changed in place. Returns true when it was flipped (run the call again). */
bool agent_flip_noop_switch(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            json_t *args);

/* Whether the model's call of a switch (a tool whose one required argument is a boolean or an
 * on/off enum) is a guess: the segment names neither the tool (its name, keys, their names,
 * its examples' verb) nor a value of the call, says no side ("on", "off", "enable", ...) and
 * no follow-up word ("open my Q3 report" -> Bluetooth off). */
bool agent_switch_guessed(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const struct pipit_call *call);

/* "the jets at full power" -> set_jets(speed="high"), whatever the model called: the segment
 * names exactly one tool (a word of its name or keys) whose one required argument is a string
 * enum of levels (two or more of low, medium, high, min, max, gentle, strong, ...) and says an
 * end of it ("full power", "full blast", "max", "highest", ...: the last value; "lowest",
 * "minimum", "gentlest", ...: the first that is a level, not "off"). Not for a negation. True
 * when `call` was replaced. */
bool agent_choose_extreme_value(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

/* Whether the model's call of a direction (a tool whose one required argument is an enum of
 * directions, "in"/"out", "up"/"down", and no number) is a guess: the segment names neither the
 * tool (as agent_switch_guessed()) nor another value of it, and says the chosen one only as a
 * preposition, before "this", "the", "my", ... ("get the lanterns in this one" ->
 * adjust_zoom(in)). */
bool agent_direction_guessed(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             const struct pipit_call *call);

/* Whether the model's call of a number setting (a tool whose one required argument is a
 * number, with no step effect) is a guess: the segment names neither the tool (as
 * agent_switch_guessed()) nor a value of the call, writes no number in digits or words, and
 * says no word that moves, bounds or repeats a setting ("more", "a bit", "max", "off",
 * "again", "that", a comparative such as "brighter"): "drive to Narnia" -> set_timer(9),
 * "second half's on" -> set_timer(5). */
bool agent_number_guessed(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const struct pipit_call *call);

/* A call that changed nothing is stray when the segment names neither what the tool acts on
 * (its name, its keys or their declared names) nor any of its argument values ("alright snap
 * us" -> set_timer(seconds=5) while the timer is 5): the sentence then says nothing changed
 * (the call's record stays as it ran). */
bool agent_stray_call(const struct pipit_toolset *ts,
                      int32_t tool,
                      const char *segment,
                      const json_t *args);

/* Whether the segment asks to switch a thing the pack has nothing for ("turn on HDR" in the
 * camera pack; agent_switch.c, "unknown things"): a switch phrase whose thing has no word that
 * names a tool, argument, enum value, example word or state key of the pack. The thing as
 * said goes to `thing` ("HDR"). */
bool agent_unknown_thing(const struct pipit_toolset *ts,
                         const char *segment,
                         const char *tool,
                         char *thing,
                         size_t size);

/* Whether the segment says one of `args`'s values (a string value in words, a number). */
bool agent_says_a_value_of(const json_t *args,
                           const char *segment,
                           const struct words_tok *tok,
                           size_t n);

/* Whether the tokens say a switch's side ("on", "enable", ...; "off", "disable", ...). */
bool agent_says_a_side(const struct words_tok *tok, size_t n);

#endif /* PIPIT_AGENT_SWITCH_H */
