/*
 * agent_guard.h - the guards that read the person's words into the model's call
 * (agent_guard.c).
 */
#ifndef PIPIT_AGENT_GUARD_H
#define PIPIT_AGENT_GUARD_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

/* The item the person named by its title, contact or number put back when the model took
 * another identifier from the same array of the device's state ("add rope to the ideas note"
 * -> note_id "N-1" becomes the ideas note's "N-3"; docs/agent.md). True when `call` changed. */
bool agent_restore_named_item(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              const json_t *state,
                              struct pipit_call *call);

/* The identifier the person wrote put back when the model wrote another: a string argument
 * whose schema pattern is anchored at both ends ("^CH-[0-9]{1,4}$") and exactly one word of
 * the segment that matches it whole ("reserve CH-5" -> "CH-55" becomes "CH-5"). True when
 * `call` changed. */
bool agent_restore_pattern_id(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              struct pipit_call *call);

/* The text after a colon is said whole: "message mom: landed safely" -> body "safely" becomes
 * "landed safely". When the segment has a colon (not one inside a time or ratio, "7:15",
 * "16:9") with text after it, and a free string argument of the model's call holds some of
 * that text's words, in order, but not all, the argument becomes the whole text after the
 * colon (trailing spaces and full stops cut). One argument at most. True when `call` changed. */
bool agent_restore_after_colon(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* What a thing is "called" is its name as said: when the pack's own examples of `tool` say
 * "called X" (or "named", "titled", "labelled") for a free string argument whose value is X
 * ("alarm at 14:00 called dentist": label), the segment's words after its "called", up to a
 * colon, comma or the end, become that argument ("... 7 tomorrow morning called gym" had set
 * the label "tomorrow"). True when `call` changed. */
bool agent_restore_called_name(const struct pipit_toolset *ts,
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

/* Whether the call asks a switch for the value it has in `state` (a declared set effect on a
 * fixed key, its value a boolean or string: "action": "stop" -> recording false while
 * recording is false); a device refuses such a call ("No video is recording."). */
bool agent_switch_asks_current(const struct pipit_toolset *ts,
                               int32_t tool,
                               const json_t *args,
                               const json_t *state);

/* Whether the segment asks to switch a thing the pack has nothing for ("turn on HDR" in the
 * camera pack; agent_guard.c, "unknown things"): a switch phrase whose thing has no word that
 * names a tool, argument, enum value, example word or state key of the pack. The thing as
 * said goes to `thing` ("HDR"). */
bool agent_unknown_thing(const struct pipit_toolset *ts,
                         const char *segment,
                         const char *tool,
                         char *thing,
                         size_t size);

/* A switch call that changed nothing is read as the other side ("get the flash going" ->
 * mode "off" while it is off: "on"), unless the person said this side or a negation
 * (agent_guard.c has the rule). Call it after such a call ran and changed nothing; `args` is
 * changed in place. Returns true when it was flipped (run the call again). */
bool agent_flip_noop_switch(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            json_t *args);

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

/* Whether the model's call of a switch (a tool whose one required argument is a boolean or an
 * on/off enum) is a guess: the segment names neither the tool (its name, keys, their names,
 * its examples' verb) nor a value of the call, says no side ("on", "off", "enable", ...) and
 * no follow-up word ("open my Q3 report" -> Bluetooth off). */
bool agent_switch_guessed(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const struct pipit_call *call);

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

/* Whether the segment asks for a setting by its value: it says a string enum value of some
 * tool of 4 letters or more that is no word of a reversal and no switch side ("daylight",
 * "fluorescent", "living room"; not "back", not "stop"). The model's undo for "hmm too blue,
 * try daylight" is no undo. */
bool agent_says_setting_value(const struct pipit_toolset *ts, const char *segment);

/* Whether `text` says a word of the pack's own: a word of three letters or more, no common
 * word ("the", "his", "really", ...), that is (or is one slip from, or a longer form of) a word
 * of a tool's name, description, arguments, their descriptions, enum values or examples, or of
 * a declared key ("it's up in the top right": "top", "right" of tap_to_focus). A remark that
 * says one may hold an argument's value, so it stays the model's to read. */
bool agent_says_pack_word(const struct pipit_toolset *ts, const char *text);

/* The tool the segment asks for by a value only one tool's argument has, when the model called
 * another that the segment neither names nor gives a value of: "hmm too blue, try daylight"
 * -> set_white_balance(mode="daylight") for the model's set_grid(enabled=false). The value
 * is a string enum value of 4 letters or more (whole words, or a word's start: "portraits"),
 * said once and by no other argument of the set ("auto" of the flash and of the scene is
 * nobody's); the tool needs no other argument; nothing happens when the segment negates ("no
 * daylight", "instead of portrait"). True when `call` was replaced. */
/* A search's words are the person's: when the segment opens (after "please", "can you", ...)
 * with the first word of `tool`'s name and the tool takes one free string (as the refusal rule
 * below: "find my tax return"), and the model's value for it is no part of the segment and has
 * no digit ("tairt"), the value becomes the rest of the segment ("tax return"). True when
 * `call` changed. */
bool agent_restore_verb_rest(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call);

/* The call a refusal should have been: when the model answered `text` ("Sorry, I can't do
 * that.": "sorry" first and "can't", "cannot" or "can not") to a segment that is no question
 * (no "?" at its end, no question word first), negates nothing, thanks nobody and says a
 * string enum value only one tool's argument has (as agent_choose_tool_by_value()) with no
 * other required argument, `call` is set to that tool with that value ("sports mode - my
 * kid's game is starting" -> set_scene_mode(mode="sports")); so does a segment that names the
 * one tool with one required number and writes one number ("exposure +3, i want the rocks lit
 * up" -> set_exposure(ev=3), refused by validation with the limit). A wish ("i want", "i'd
 * like", "i need", "give me", "let's have" first) is such a request whatever plain text the
 * model answered, and also names a switch with its side ("i want the flash on" -> "The flash
 * is off." -> set_flash(mode="on")). False otherwise (`call` untouched). */
bool agent_value_call_for_refusal(const struct pipit_toolset *ts,
                                  const char *segment,
                                  const char *text,
                                  struct pipit_call *call);

bool agent_choose_tool_by_value(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call);

/* agent_choose_tool_by_value() over a call of the cloud tool, for a segment that is no question:
 * "turn it on then" after "is bluetooth on?" (read as "turn bluetooth on then") had gone to
 * the cloud. */
bool agent_choose_tool_by_value_over_cloud(const struct pipit_toolset *ts,
                                           int32_t tool,
                                           const char *segment,
                                           struct pipit_call *call);

/* The place the person did not say is the last action's: when the model's call has an argument
 * that picks which state key it writes (a pack effect's "{room}_light"), the segment says none
 * of its values nor the first word of a declared name of a key they pick ("lounge"), and the
 * last call (`last_args`) gave an argument of that name another value of the same enum, that
 * value is put back ("bit dimmer" after "lounge light on": the living room, not the model's
 * bedroom). True when `call` was changed. */
bool agent_carry_selector(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const json_t *last_args,
                          struct pipit_call *call);

/* The verb an example opens with as the agent reads it (after "please", "ok", ...; not a
 * function word such as "I", "the", "set", "turn"), into `verb` ("" when none), and the one
 * tool whose examples alone open with it (the agent's verb rule), or -1 (none or several). For
 * `pipit tools check`'s notes (src/packlint.c). */
int32_t
agent_example_verb(const struct pipit_toolset *ts, const char *say, char *verb, size_t size);

/* Whether the segment names `tool`: a word of its name, of the keys it changes or of their
 * declared names, or the verb (after lead words) that opens its examples and no other tool's
 * ("wake me at half six" names set_alarm, whose example is "wake me at 7:15"). */
bool agent_names_tool(const struct pipit_toolset *ts, size_t tool, const char *segment);

/* The tool whose examples alone open with the segment's verb ("snap biscuit" -> take_photo,
 * whose example is "snap one of the dog", not the model's adjust_zoom): after lead words
 * ("please", "ok", "just", ...), the segment's first word opens (after the same lead words) an
 * example of exactly one tool, that tool needs no argument, it is not the model's, the word is
 * no function word ("I", "the", "what", "make", "turn", ...), the segment asks no question and
 * names neither the model's tool nor a value of its call. Same exceptions as
 * agent_choose_tool_by_value(). True when `call` was replaced by that tool's call. */
bool agent_choose_tool_by_verb(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call);

/* The tool the segment names with the one number it says: a tool whose only required argument
 * is a number, named by a noun of its name or a declared name of its keys ("timer 7 seconds
 * actually, I need to run around the table" -> set_timer(seconds=7), not the model's
 * tap_to_focus), when it is the only such tool named, the segment says exactly one number
 * (converted to the argument's unit of time) and the model called another tool that the
 * segment neither names nor gives a value of. The number is kept as said: validation refuses
 * what is out of range. Same exceptions as agent_choose_tool_by_value(). True when `call` was
 * replaced. */
bool agent_choose_tool_by_number(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call);

/* Whether the segment says one of `args`'s values (a string value in words, a number). */
bool agent_says_a_value_of(const json_t *args,
                           const char *segment,
                           const struct words_tok *tok,
                           size_t n);

/* Whether the tokens say a switch's side ("on", "enable", ...; "off", "disable", ...). */
bool agent_says_a_side(const struct words_tok *tok, size_t n);

#endif /* PIPIT_AGENT_GUARD_H */
