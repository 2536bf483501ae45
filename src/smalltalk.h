/*
 * smalltalk.h - social turns the harness answers itself: thanks, greetings, goodbyes, praise
 * and acknowledgements, said with nothing else.
 *
 * A tiny model answers "thanks, that's all for now" with a call as often as not (half of the
 * no-call turns of the home and phone dev sets went to a tool). These turns need no model: an
 * utterance every word of which is a social formula or glue ("that's", "so", "much", "for
 * now"), with at least one formula, and no word of the tool set (a pack's verb, keyword, enum
 * value or state name: "good night" is not small talk for a camera with a night mode), is
 * answered by the harness in fixed words and runs nothing. So is a statement about the
 * situation ("lol someone blinked", "hi pipit, we're at the beach"): clauses that open like a
 * statement or are social, no question, digit, tool word, command verb or word of wanting.
 * Generic English only; no pack nouns (docs/agent.md, "Small talk").
 */
#ifndef PIPIT_SMALLTALK_H
#define PIPIT_SMALLTALK_H

#include "router.h"
#include "toolspec.h"

#include <stddef.h>

/* What a social utterance holds (a set of these bits); 0: not small talk. */
enum smalltalk_kind {
    SMALLTALK_THANKS = 1 << 0,      /* "thanks", "cheers", "appreciate it" */
    SMALLTALK_GREETING = 1 << 1,    /* "hi", "good morning", "hey there" */
    SMALLTALK_FAREWELL = 1 << 2,    /* "bye", "see you", "that's all for now" */
    SMALLTALK_PRAISE = 1 << 3,      /* "great", "perfect", "you're the best" */
    SMALLTALK_ACK = 1 << 4,         /* "ok", "alright", "got it", "sounds good" */
    SMALLTALK_HELP = 1 << 5,        /* "what can you do?", "help": answered from the tool set */
    SMALLTALK_ASKED_AFTER = 1 << 6, /* "how are you?", "how's your day going?" (a greeting) */
};

/* The kinds in `utterance` when it is small talk and nothing else (a statement about the
 * situation counts as SMALLTALK_ACK), else 0. `r` (may be NULL)
 * holds the tool set's words; any of them makes the utterance something else. A question
 * about what the agent can do may end in a few more words that are not the tool set's ("what
 * can you do around the house?"). */
unsigned smalltalk_kinds(const struct router *r, const char *utterance);

/* Whether `reply` (a model's words) is a social reply and nothing of substance: it opens with
 * a formula that answers small talk ("You're welcome.", "Glad it works.", "I'm good, thanks.",
 * "Okay, take your time.", "Hi!"). */
bool smalltalk_is_social_reply(const char *reply);

/* Whether `utterance` asks a question: it ends with "?" or opens with a question word ("what",
 * "how", "is", "are", "do", "can", ...). */
bool smalltalk_is_question(const char *utterance);

/* The harness's answer to `kinds` (non-zero) in `buf` (NUL-terminated): "You're welcome.",
 * "Hi! What would you like to do?", "Goodbye!", "Glad you like it.", "OK."; thanks with a
 * goodbye gets both. SMALLTALK_HELP lists what the tool set `ts` (may be NULL) is about, from
 * its tool names without their verbs: "Here's what I can help with: light, brightness, light
 * colour, thermostat, blinds, scene and timer." */
void smalltalk_reply(unsigned kinds, const struct pipit_toolset *ts, char *buf, size_t size);

/* Whether `segment` only addresses the device ("printer", "hey camera", "pipit"): a word that
 * calls it (smalltalk.c's list, or the pack's name), after at most a "hey". */
bool smalltalk_is_vocative(const struct router *r, const char *segment);

/* Whether `segment` is only an acknowledgement or a "wait" ("hold on", "one sec", "ok then"):
 * a part of a request that asks for nothing ("hold on, zoom in"). */
bool smalltalk_is_aside(const struct router *r, const char *segment);

#endif /* PIPIT_SMALLTALK_H */
