/*
 * agent_frame.h - the pack's examples as frames: which words of a command are which argument.
 *
 * A pack example says where its free-text arguments stand in a command: "tell Priya I'm
 * running ten minutes late" puts the recipient right after the verb and the message in the rest;
 * "get me a big car to the airport" puts the destination after "to"; "log an urgent ticket: the
 * printer is on fire" puts the summary after the colon. A tiny model copies the wrong words
 * often ("text priya the budget is in the shared drive" -> recipient "budget"), or answers such
 * a command with text ("text jordan running late sorry" -> "Okay, take your time."). Read from
 * the examples, never from a list of tools, the frames put the person's own words back.
 *
 * A frame is read from one example: its verb (the first word after openers such as "please",
 * "can you") and, for every free-text argument the example gives, where its value stands:
 *   - after the verb: the one word right after it (the value's first word: "Priya" for
 *     "Priya Natarajan", a contact the device resolves);
 *   - the rest: every word to the end, after a marker: a connector word ("to", "for", "from",
 *     "about", "that", "saying", ...), a colon, or the word after the verb;
 *   - before a connector: the words from the verb to the last such connector ("add eggs to the
 *     groceries note": "add 'learn to juggle' to it" is "learn to juggle").
 * An identifier the example gives that its sentence does not say ("N-1" for "the groceries
 * note") is the resolvers' (agent_named.h), not a frame's.
 * An example whose free-text arguments do not all stand so gives no frame. A segment fits a
 * frame when it opens with the frame's verb or a verb people say for it (verbbank.h: "text" for
 * "tell"), says no negation, and holds every marker; the word after the verb is no pronoun
 * ("text her ...": who she is, is the memory's).
 */
#ifndef PIPIT_AGENT_FRAME_H
#define PIPIT_AGENT_FRAME_H

#include "pipit.h"
#include "toolspec.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* The model called `tool` for `segment`, and the segment fits a frame of one of the tool's
 * examples: a free-text argument the model gave that is none of the frame's words is the frame's
 * words ("text priya the budget is in the shared drive": recipient "budget" -> "priya", body
 * "drive" -> "the budget is in the shared drive"; a rest after a connector is cut before the next
 * one: "to the airport for my flight" is "the airport"). A value inside the frame's words stays
 * ("the airport" for "the airport please"). The model chose the tool, so a segment opening
 * with another verb fits the frame's rests after a marker ("order me a shared ride to the ferry
 * building": destination "shared" -> "the ferry building"). True when the call changed. */
bool agent_frame_restore(const struct pipit_toolset *ts,
                         int32_t tool,
                         const char *segment,
                         struct pipit_call *call);

/* The words of `segment` that a frame of `tool`'s examples (its verb said) puts in each of its
 * free-text arguments, set in `args` (an object); false when no frame fits. */
bool agent_frame_values(const struct pipit_toolset *ts,
                        int32_t tool,
                        const char *segment,
                        json_t *args);

/* The model called `tool` for `segment`, which opens with a verb only another tool's examples
 * open with, and a frame of that tool fills its required arguments while none of `tool`'s
 * frames fits: *call becomes that tool ("new note titled standup: ask marcus" -> create_ticket
 * becomes create_note, the pack's "new note called gift ideas: scarf for mum"). */
bool agent_frame_choose_tool(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call);

/* Whether `segment` opens with a verb only one tool's examples open with and fits a frame of
 * that tool whose message runs to the end ("message alice hi": the rest after the name, or
 * after a colon): what follows in the utterance may be more of the message. */
bool agent_frame_message(const struct pipit_toolset *ts, const char *segment);

/* The model answered `segment` with no call: when the segment opens with a verb only one
 * tool's examples open with (agent_example_verb()), no '?' ends it, and a frame of that tool
 * fills every required argument, *call is that tool with those arguments ("text jordan running
 * late sorry" -> send_message(recipient="jordan", body="running late sorry")). */
bool agent_frame_call(const struct pipit_toolset *ts, const char *segment, struct pipit_call *call);

/* The model answered `segment` with no call ("take a pic" -> "You're welcome."): when no '?'
 * ends it and it says no negation, and of its content words (three letters or more, not
 * "the", "this", "her", "please", ...) two or more and at least half are words of the name,
 * description or examples of one tool that takes no required argument, more than of any other
 * such tool ("take" of "take a snapshot", "pic" of "save a pic of this": take_snapshot), *call
 * is that tool. */
bool agent_example_words_call(const struct pipit_toolset *ts,
                              const char *segment,
                              struct pipit_call *call);

#endif /* PIPIT_AGENT_FRAME_H */
