/*
 * agent_choose.h - which tool the person asked for: the tool the segment's verb, value, number
 * or selector names replaces the model's choice, or makes a call of a plain-text answer
 * (agent_choose.c).
 */
#ifndef PIPIT_AGENT_CHOOSE_H
#define PIPIT_AGENT_CHOOSE_H

#include "agent_impl.h"
#include "toolspec.h"
#include "words.h"

/* Whether `text` says a word of the pack's own: a word of three letters or more, no common
 * word ("the", "his", "really", ...), that is (or is one slip from, or a longer form of) a word
 * of a tool's name, description, arguments, their descriptions, enum values or examples, or of
 * a declared key ("it's up in the top right": "top", "right" of tap_to_focus). A remark that
 * says one may hold an argument's value, so it stays the model's to read. */
bool agent_says_pack_word(const struct pipit_toolset *ts, const char *text);

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

#endif /* PIPIT_AGENT_CHOOSE_H */
