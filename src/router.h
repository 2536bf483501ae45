/*
 * router.h - pre-model decisions: undo, follow-ups and compound-utterance segmentation.
 *
 * The router looks at the raw utterance before any model call and answers two
 * cheap questions with word lists, never with a model:
 *
 *   1. Is the whole utterance a request to revert the last action ("undo",
 *      "never mind", "put it back")? Then the agent reverts from its action
 *      log and the model is not called at all (seed 003, recommendation 4).
 *   2. Is it several commands joined by conjunctions ("zoom in and turn on the
 *      flash")? Then the agent runs one capped step per segment (seed 003,
 *      recommendation 1). A single command stays one segment.
 *
 *     char seg[3][ROUTER_MAX_SEGMENT];
 *     if (router_is_undo(utt)) {
 *         ... revert from the action log ...
 *     } else {
 *         size_t n = router_split(utt, seg, 3);   // n == 0: empty utterance
 *         for (size_t i = 0; i < n; i++) { ... one step on seg[i] ... }
 *     }
 *
 * The rules, the word lists and the cases the heuristics get wrong on purpose
 * are in docs/router.md.
 *
 * Invariants:
 * - Bounded: only the first ROUTER_MAX_INPUT bytes of an utterance are looked
 *   at (cut back to a UTF-8 character boundary); every segment is a
 *   NUL-terminated string of at most ROUTER_MAX_SEGMENT - 1 bytes, cut on a
 *   character boundary. Nothing is allocated except by router_new().
 * - Matching is ASCII case-insensitive; segments keep the original casing.
 * - No global mutable state: the default word lists are constant; a caller that
 *   needs more words makes a `struct router`.
 *
 * Thread safety: the plain functions are reentrant. A `struct router` may be
 * shared by readers once no more keywords are added.
 */
#ifndef PIPIT_ROUTER_H
#define PIPIT_ROUTER_H

#include "pipit.h"
#include "words.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROUTER_MAX_INPUT    1024      /* bytes of an utterance that are looked at */
#define ROUTER_MAX_SEGMENT  256       /* bytes per segment, NUL included */
#define ROUTER_MAX_KEYWORDS 2048      /* words a `struct router` can hold */
#define ROUTER_MAX_SHAPES   16        /* number shapes ("9x", "9:9") a `struct router` can hold */
#define ROUTER_MAX_WORDS    3         /* words per lexicon phrase ("white balance") */
#define ROUTER_WORD_CAP     WORDS_CAP /* bytes per word, NUL included (longer: never matches) */

struct router;

/* ============================================================================
 * undo */

/* router_undo_count() for "undo everything", "put everything back": every logged action. */
#define ROUTER_UNDO_ALL INT32_MAX

/* How many actions the utterance asks to revert, when its whole intent is undo: 1 for one of
 * the undo forms ("undo", "undo that too", "never mind", "put it back", "go back", "revert
 * that", "reverse the last change", "scrap that", "forget that", "restore the previous
 * settings", "take that back", ...), n for a count ("undo the last two", "undo both", "revert
 * the last 3 changes", "undo twice"), ROUTER_UNDO_ALL for "undo everything". Casing and
 * punctuation are ignored, and politeness or remorse ("please", "actually", "oops", "sorry",
 * "can you", "that was wrong", "my bad", ...) may come before or after. 0 when an undo word is
 * part of another intent ("don't undo anything", "undo the timer and zoom in", "never mind the
 * flash, take a photo", "cancel the timer", "go back camera"): the model handles those. NULL,
 * empty and over-long (> ROUTER_MAX_INPUT bytes) utterances are not undo. The grammar and its
 * word families are in docs/router.md. */
int32_t router_undo_count(const char *utterance);

/* Right after an undo, an utterance that asks for one more ("and that too", "that one too",
 * "the one before", "again", "one more") or any undo request: 1; else 0. The agent asks this
 * only when its previous turn was an undo: elsewhere "one more" takes another photo. */
int32_t router_undo_followup(const char *utterance);

/* "undo the blinds", "revert my zoom change": an undo verb, "the"/"my", and a phrase of at most
 * ROUTER_UNDO_NAMED_WORDS words that is no undo object of its own ("undo the last change" is
 * router_undo_count()'s); "restore the flash to what it was", "put the zoom back": a verb of
 * restoring, "the"/"my", the phrase, then "back" or "to" and an earlier state; "the previous
 * camera", "old quality": an adjective of the earlier state ("previous", "old", "earlier",
 * "original", "former") and the phrase, when that adjective is no word of `r`'s tool set
 * ("previous track" on a music pack; `r` may be NULL: no such check). Fillers before and
 * "please", "thanks", "now" after are not the phrase. True with the phrase's byte offset in
 * `utterance` in *at and its length in *len; false (both 0) when there is none. With `after_undo`
 * (the turn before was an undo) one more thing may be named: "and the alarm too", "and reverse the
 * directions as well" (a conjunction before or "too" / "as well" after, any verb of undo or none).
 */
#define ROUTER_UNDO_NAMED_WORDS 4
bool router_undo_named(const struct router *r,
                       const char *utterance,
                       bool after_undo,
                       size_t *at,
                       size_t *len);

/* Whether `text` says an earlier state in two words or more ("what it used to be", "the way it
 * was", "as before"): a named restore that names no logged action still asks for the earlier
 * state. */
bool router_undo_says_earlier(const char *text);

/* Whether the whole utterance is a retraction ("never mind", "forget it", "scratch that", "I
 * changed my mind"; "please", "ok", "oh" aside): an undo even where a pack's example has the
 * same words with more after them ("never mind the countdown"). */
bool router_undo_retraction(const char *utterance);

/* router_undo_count(utterance) > 0. */
bool router_is_undo(const char *utterance);

/* True when `text` has a word that can ask for a reversal ("back", "undo", "revert",
 * "previous", "before", "was", "wrong", "no", "never mind", ...). A request that names the
 * tools' things without one ("kitchen lights on") is no undo, whatever a model makes of it. */
bool router_undo_signal(const char *text);

/* True when `text` has a verb of undo ("undo", "revert", "roll back", "reverse", "cancel",
 * "scrap", "restore", "take back", ...): "undo the daylight" asks to revert whatever it also
 * names. */
bool router_undo_verb(const char *text);

/* True when `text` points back at something ("that", "this", "it", "one", ...): "lose that
 * one" may mean the last action; "fertilise the roses" cannot. */
bool router_undo_anaphor(const char *text);

/* ============================================================================
 * follow-ups */

struct router;

/* What a follow-up that names nothing asks of the last action (router_followup()). */
enum router_followup {
    ROUTER_FOLLOWUP_NONE = 0, /* not a follow-up: the model reads it */
    ROUTER_FOLLOWUP_AGAIN,    /* "again", "one more", "another like that", "try again" */
    ROUTER_FOLLOWUP_MORE,     /* "a bit more", "further", "keep going": the same change again */
    ROUTER_FOLLOWUP_BACK,     /* "the other way", "a bit less", "too much": the change reversed */
    ROUTER_FOLLOWUP_NUMBER,   /* "make it 10", "10 then", "try 5 instead", "change that to 3":
                                 the last call with another number */
    ROUTER_FOLLOWUP_MAX,      /* "max it", "to the max", "as high as it goes": the last call's
                                 number (or its key's setter) at the top of its range */
    ROUTER_FOLLOWUP_MIN,      /* "min it", "as low as it goes": ... at the bottom */
};

/* Whether the utterance, split at punctuation, is one follow-up phrase (fillers such as "ok",
 * "and", "please" dropped at both ends of a clause) beside clauses that only comment
 * ("someone's eyes were closed, another", "too much, the other way"): a commenting clause
 * starts with no command verb and holds no digit and no word of `r`'s tool set (`r` may be
 * NULL: the generic lexicon). NONE for everything else ("zoom a bit more", "no more", "take
 * another photo"), for NULL and over-long utterances. The agent decides whether its last
 * action can be repeated or turned round (docs/router.md, "Follow-ups"). */
enum router_followup router_followup(const struct router *r, const char *utterance);
/* NUMBER: a clause that is one number in digits (with an optional unit word after it or stuck
 * to it, "3x") and at most a verb and a pronoun before it ("make it", "set that to", "change
 * it to", "try", "go"), or "then" / "instead" after it ("10 then"), or a correction before it
 * ("no, 1.5", "actually 3x"); a bare number alone is not one ("5" may answer a question). */

/* ============================================================================
 * compound segmentation */

/* Split `utterance` into at most `max_segments` commands, written to
 * `segments[0 .. n-1]`; returns n. Splits happen at a separator (",", ";",
 * ".", "!", "?", "and", "then", "also", "plus", "afterwards", "after that",
 * or a run of them such as ", and then") only when both sides look like
 * commands: the left side starts with a command verb or holds a keyword, and the
 * right side starts with a verb or holds a keyword (docs/router.md has the
 * lexicon). router_split() knows the generic verbs only; an agent splits with
 * the router of its tool set (router_split_with()). Fixed pairs are never split: "black and white",
 * "in and out", "on and off", "between 3 and 5", "one and a half", ...
 *
 * - A single command gives one segment: the trimmed utterance.
 * - Segment edges are trimmed of whitespace and punctuation; casing is kept.
 * - When there are more commands than `max_segments`, the tail from the last
 *   segment's start to the end of the utterance (separators included) becomes
 *   the last segment, so nothing the person said is dropped.
 * - Returns 0 for NULL, an empty or punctuation-only utterance, NULL
 *   `segments` or `max_segments` == 0. */
size_t
router_split(const char *utterance, char segments[][ROUTER_MAX_SEGMENT], size_t max_segments);

/* ============================================================================
 * the lexicon of a tool set */

/* What a word means to the splitter. */
enum router_word_kind {
    ROUTER_WORD_VERB = 0,    /* a command verb: counts at the start of either side
                                ("dim the screen"), after lead-ins */
    ROUTER_WORD_KEYWORD = 1, /* a domain keyword: counts anywhere on either side
                                ("thermostat", "slow motion") */
    ROUTER_WORD_PAIR = 2,    /* two words a lone "and" joins into one phrase, in either order
                                ("exposure focus": "lock exposure and focus" is one command) */
};

/* The generic lexicon (verbs, conjunctions, lead-ins, fixed pairs) plus the words of a tool
 * set: the router of one agent. */
struct router;

/* A router for the tool set `ts` (NULL: the generic lexicon only). Its words come from the
 * tool set (docs/router.md, "Words from the tool set"): each tool's name split at "_" (the
 * first word a verb, the others keywords), its description (the first word a verb, the other
 * content words keywords, "X and Y" / "X or Y" pairs, number shapes such as "2x"), its
 * parameter names and string enum values, its undo keys; and, for a pack, the declared router
 * verbs and nouns, state keys with their names and nouns, and the first verb of each example
 * utterance. The cloud tool adds nothing. NULL when out of memory. Free with router_free(). */
struct router *router_new(const struct pipit_toolset *ts);

/* NULL is a no-op. */
void router_free(struct router *r);

/* Add a verb or keyword phrase of 1 to ROUTER_MAX_WORDS words, or a pair of 2 words (letters,
 * digits and apostrophes; each word shorter than ROUTER_WORD_CAP bytes; matched
 * case-insensitively, whole words only). Adding a phrase twice is harmless.
 * Errors (err may be NULL): PIPIT_ERR_INVALID_ARG for a NULL router, an empty
 * phrase, too many or too long words, or a full lexicon; PIPIT_ERR_NOMEM; the router is
 * unchanged. */
enum pipit_status router_add_keyword(struct router *r,
                                     enum router_word_kind kind,
                                     const char *phrase,
                                     struct pipit_error *err);

/* The router's phrases of one kind (borrowed, valid until the router changes): the first
 * `max` written to `out` (may be NULL with 0); returns how many there are. */
size_t
router_words(const struct router *r, enum router_word_kind kind, const char **out, size_t max);

/* True when `text` holds a word or phrase of `r`'s tool set (any kind): it names something
 * the tools act on ("kitchen lights on"). False for NULL. */
bool router_has_tool_word(const struct router *r, const char *text);

/* Tokens of `t` (n tokens) that a word or phrase of `r`'s tool set matches at token i, the
 * longest; 0 when none or `r` is NULL. */
struct words_tok;
size_t router_tool_word_at(const struct router *r, const struct words_tok *t, size_t n, size_t i);

/* router_split() with the generic lexicon plus `r`'s words. `r` NULL means the
 * generic lexicon only (exactly router_split()). */
size_t router_split_with(const struct router *r,
                         const char *utterance,
                         char segments[][ROUTER_MAX_SEGMENT],
                         size_t max_segments);

/* router_command_verb(): the segment does not start with a command verb. */
#define ROUTER_NO_VERB ((size_t)-1)

/* Byte offset of the command verb a segment starts with, after lead-ins ("please take a
 * photo" -> 7, at "take"), with the generic verbs plus `r`'s verbs (`r` may be NULL);
 * ROUTER_NO_VERB when it starts otherwise ("a 3 second timer") or is NULL. The agent uses it
 * to say what it did not do ("I didn't take a photo"). */
size_t router_command_verb(const struct router *r, const char *segment);

/* Byte offset of a remark that ends a command ("end the clip, song's done", "push exposure up
 * by one stop, his grill is kinda dim"): the comma, semicolon or dash after a command (a verb
 * first, or a word of `r`'s tool set) from which every clause is a remark (two words or more,
 * no command, no word of the tool set, no number, no word of wanting or negation, no
 * question). The segment's length when there is none. */
size_t router_remark_tail(const struct router *r, const char *segment);

/* Byte offset of the command after a remark that opens the text ("there's a tiny lizard on the
 * rock! macro mode and zoom in a step"): a first sentence, up to "." or "!", of two words or
 * more with no command (no verb first, no word of `r`'s tool set), no word of wanting or
 * negation and no question, followed by a sentence that is a command; or a greeting of one word
 * ("morning.", "hi!") before a command. 0 when there is none. */
size_t router_remark_head(const struct router *r, const char *text);

/* Byte offset of what the person asks after correcting themselves ("lights out, co2 off and
 * moonlight... no wait just lights off and co2 off"): the command after the last "no wait",
 * "wait no", "scratch that", "i mean", "make that", "or rather" or "actually" that follows a
 * command, when it names a thing of `r`'s tool set. 0 when there is none. */
size_t router_correction(const struct router *r, const char *text);

/* Whether `w` (a lowercase word) is the tool pack's name ("printer" of pack "printer"): a word
 * that addresses the device ("good morning printer"). */
bool router_is_device_name(const struct router *r, const char *w);

#endif /* PIPIT_ROUTER_H */
