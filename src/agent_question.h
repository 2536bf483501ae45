/*
 * agent_question.h - questions and requests not to act (agent_question.c).
 */
#ifndef PIPIT_AGENT_QUESTION_H
#define PIPIT_AGENT_QUESTION_H

#include "agent_impl.h"
#include "toolspec.h"

/* Whether the segment asks for something not to be done: it opens, after fillers, with
 * "don't", "do not" or "never" and a word that is no "forget", "let", "worry", "mind" or
 * "hesitate" ("don't forget to turn off the oven" asks for it). */
bool agent_negated_request(const char *segment);

/* Whether the segment offers both sides of one state as a choice ("kitchen lights on or off?",
 * "open or closed"): only a question does. */
bool agent_offers_both_sides(const char *segment);

/* Whether the segment opens as a question that asks nothing to be done, any "how" included,
 * or as "explain ...", "describe ...", "tell me about ..." (the test of
 * agent_question_for_cloud() without a call). */
bool agent_asks_the_world(const char *segment);

/* Whether the segment asks about the world rather than the device: it opens as a question
 * that asks nothing to be done (as agent_question_must_not_act(); "can" and "could" request
 * only before "you", "we" or "I") and has no command verb (`command_verb`); or any other "how"
 * ("how do I save battery while filming?") that says none of the model's `call`'s values nor a
 * switch's side ("how do I turn on the grid?" wants the grid on). A call of the cloud or of a
 * tool that reads is never one. */
bool agent_question_for_cloud(const struct pipit_toolset *ts,
                              const struct pipit_call *call,
                              const char *segment,
                              bool command_verb);

/* A question never acts (docs/agent.md, "A question never acts"): true when `segment` is asked
 * as a question ("is the porch light on?", "what colour is the bedroom light?") and the call
 * to `tool` (an index into `ts`; past its end: the built-in undo) would change something: a
 * tool with undo keys or with an action that cannot be undone, never a read-only tool or the
 * cloud. Requests phrased as questions ("is it possible to zoom in?", "how do I turn on the
 * grid?", "what about 3x?") and segments that start with a command verb (`command_verb`:
 * router_command_verb() found one) are not questions here. */
bool agent_question_must_not_act(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 bool command_verb);

/* Whether the segment asks how things are, not for advice: it opens as a question of state
 * (a yes/no question, a wh-question, "how" of a quantity; not "how do I ...") and says no word
 * of advice ("good", "best", "should", "why", ...: "what's a good temperature for sleeping"). */
bool agent_asks_about_state(const char *segment);

/* The one tool that takes no required argument and is not the cloud an example of which opens
 * (after "hey", "so", "ok", ...) with the segment's first word, no wh-word ("how", "what",
 * ...), and shares a content word of four letters or more with it ("any unread texts?" and
 * read_messages' "any new texts?"), or -1: none, or two. A question the pack gives as a tool's
 * example is that tool's, not the cloud's. */
int32_t agent_question_like_example(const struct pipit_toolset *ts, const char *segment);

/* Whether the segment asks for words to be written: it opens (after "please", "can you", ...)
 * with "write", "compose", "draft", "summarise", "translate", "rephrase" or "rewrite", and no
 * tool of `ts` has that verb as the first word of its name or of one of its examples ("write
 * down milk" on a notes pack). "write me a short poem about my morning espresso" had brewed an
 * espresso, "draft a polite message to my landlord" had sent one: the cloud's. */
bool agent_compose_request(const struct pipit_toolset *ts, const char *segment);

#endif /* PIPIT_AGENT_QUESTION_H */
