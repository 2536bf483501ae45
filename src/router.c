/*
 * router.c - pre-model decisions: undo detection and compound-utterance
 * segmentation, with word lists only.
 *
 * Both decisions work on the same token stream. The tokenizer walks at most
 * ROUTER_MAX_INPUT bytes and produces at most MAX_TOKENS tokens, each either a
 * word (letters, digits, non-ASCII letters, inner apostrophes, "2.5", "16:9",
 * "auto-focus") with its lowercased form, or a separator punctuation mark
 * ("," ";" "." "!" "?" ":" "..." dashes). Quotes, brackets and other symbols
 * are skipped like spaces. Tokens remember their byte offsets, so segments are
 * copied from the original text with its casing.
 *
 * Undo: drop politeness fillers at both ends; what is left must be exactly one
 * undo phrase. Anything more ("undo the timer") is another intent.
 *
 * Split: a separator run is a maximal run of separator punctuation and
 * conjunctions ("and", "then", "also", "plus", "afterwards", "after that").
 * The utterance is cut at a run when the text since the last cut and the text
 * up to the next run each start with a verb (after lead-ins) or hold a keyword, unless the run is a
 * lone "and" inside a fixed pair ("black and white", "between 3 and 5", ...).
 *
 * Invariants: no allocation except router_new(); every write into a caller's
 * buffer is bounded by ROUTER_MAX_SEGMENT; a cut never splits a UTF-8
 * character.
 */
#include "router.h"

#include "status.h"
#include "toolspec.h"
#include "utf8.h"
#include "words.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOKENS 256 /* tokens looked at; text after them stays in the last segment */
#define MAX_PHRASE (ROUTER_MAX_WORDS * ROUTER_WORD_CAP)

/* ============================================================================
 * word lists (constant: the default lexicon) */

/* Generic command verbs: count at the start of either side (after lead-ins). A tool set adds
 * its own (router_new): the first word of each tool name and description, the pack's verbs,
 * the first word of its examples. No pack's verbs here ("zoom", "call"). */
static const char *const VERBS[] = {
    "turn",       "switch",   "set",      "take",   "start",  "stop",   "enable",   "disable",
    "use",        "put",      "change",   "make",   "lock",   "unlock", "flip",     "toggle",
    "adjust",     "increase", "decrease", "raise",  "lower",  "reduce", "boost",    "activate",
    "deactivate", "apply",    "select",   "choose", "pick",   "open",   "close",    "show",
    "hide",       "send",     "play",     "pause",  "resume", "begin",  "undo",     "revert",
    "add",        "remove",   "clear",    "reset",  "save",   "delete", "brighten", "darken",
    "dim",        "mute",     "unmute",   "rotate", "search", "share",  "restore",
};

/* Words allowed before the verb at the start of a right side ("and please
 * take", "then can you take", "and I want you to take"). */
static const char *const LEAD_INS[] = {
    "please", "also",   "then",  "now",      "just",    "and",   "can",  "could",      "would",
    "will",   "you",    "lets",  "let",      "us",      "me",    "i",    "want",       "wanna",
    "to",     "kindly", "maybe", "quickly",  "finally", "after", "that", "afterwards", "go",
    "ahead",  "oh",     "hey",   "actually", "wait",    "no",    "ok",   "okay",
};

/* A left side that starts with one of these takes something back or negates it
 * ("never mind the flash, take a photo", "don't use the flash, just take a
 * photo"): it is not a command of its own, so the utterance is not cut there
 * and the model sees it whole. */
static const char *const RETRACTIONS[] = {
    "never mind", "nevermind", "forget", "dont", "do not", "not", "without",
};

/* A left side that starts with one of these describes ("it's tungsten lighting in here, fix
 * the white balance"): it is not a command of its own. */
static const char *const STATEMENTS[] = {
    "its",     "it is", "it was", "thats", "that is", "theres", "there is", "there are",
    "this is", "im",    "i am",   "were",  "we are",  "its so", "ive",      "weve",
};

/* A right side with no verb at its start and one of these after its first word describes
 * ("open a ticket, wifi in room 4 is slow"). */
static const char *const COPULAS[] = {"is",    "are",   "was",    "were",  "isnt",
                                      "arent", "wasnt", "werent", "seems", "looks"};

/* Conjunctions that separate commands (besides punctuation and "after that"). */
static const char *const CONJUNCTIONS[] = {"and", "then", "also", "plus", "afterwards"};

/* A lone "and" between these words is part of one phrase, never a cut. */
static const char *const AND_PAIRS[][2] = {
    {"black", "white"}, {"white", "black"}, {"rock", "roll"},  {"salt", "pepper"},
    {"in", "out"},      {"out", "in"},      {"back", "forth"}, {"up", "down"},
    {"down", "up"},     {"on", "off"},      {"off", "on"},     {"front", "back"},
    {"back", "front"},  {"left", "right"},  {"right", "left"}, {"bread", "butter"},
    {"more", "more"},   {"again", "again"}, {"over", "over"},  {"slow", "steady"},
    {"now", "then"},    {"light", "dark"},  {"dark", "light"}, {"near", "far"},
};

/* Undo is a small grammar, not a list of sentences: after the fillers are dropped, the words
 * left must be exactly one of
 *
 *   UNDO_VERB [OBJECT] [TOO]        "undo", "revert that", "undo that too", "roll it back"...
 *   OBJECT_VERB OBJECT [TOO]        "reverse the last change", "scrap that", "forget that"
 *   VERB COUNT                      "undo the last two", "revert both", "undo everything"
 *   a restore phrase                "put it back", "go back", "back to how it was"
 *   a retraction                    "never mind", "scratch that", "take that back"
 *
 * Words as the tokenizer makes them: lowercase, apostrophes dropped. */

/* Verbs that mean undo on their own ("undo", "revert") or with an object. */
static const char *const UNDO_VERBS[] = {"undo", "revert", "roll back", "rollback", "unwind"};

/* Verbs that mean undo only with an object naming the last action ("cancel that", "reverse
 * the last change"): alone, or with another object, they are other commands ("cancel the
 * timer", "reverse camera", "restore defaults"). */
static const char *const OBJECT_VERBS[] = {"reverse", "cancel", "scrap",    "scratch",
                                           "drop",    "forget", "restore",  "take back",
                                           "ditch",   "lose",   "back out", "bring back"};

/* Verbs of OBJECT_VERBS that take "that"/"this" but not "it": "cancel it" may mean the timer
 * or the recording; "forget it" is a retraction of its own (RETRACT_PHRASES). */
static const char *const NO_IT_VERBS[] = {"cancel", "scrap", "scratch", "drop", "forget", "ditch"};

/* Pronouns that point at the last action. */
static const char *const UNDO_PRONOUNS[] = {"that", "this", "it"};

/* Determiners and adjectives of "the last change", "my previous command". */
static const char *const UNDO_DETS[] = {"the", "my", "your", "that", "this"};
static const char *const UNDO_ADJS[] = {"most recent", "last",   "previous",
                                        "latest",      "recent", "old"};

/* Nouns for an action: "the last change", "that one", "the previous settings". */
static const char *const UNDO_NOUNS[] = {
    "one",     "change",   "changes",  "action",     "step",  "thing",  "command",
    "setting", "settings", "edit",     "adjustment", "move",  "ones",   "actions",
    "steps",   "things",   "commands", "edits",      "value", "values",
};

/* What may follow an object: "the last change you made", "what you just did". */
static const char *const UNDO_TAILS[] = {
    "you made", "you did",     "you just did",     "you just made",
    "i made",   "i asked for", "i just asked for", "i did",
};

/* After an object: "undo that too", "revert it as well". */
static const char *const UNDO_TOO[] = {"too", "as well", "also"};

/* Objects that are whole phrases. */
static const char *const UNDO_OBJECT_PHRASES[] = {
    "what you just did",
    "what you did",
    "what you just changed",
    "what you changed",
    "what i just said",
    "what i said",
    "what i just asked",
    "what i asked",
    "what it was",
    "how it was",
    "the way it was",
    "the setting from before",
    "the settings from before",
};

/* Restore phrases: the state goes back, whatever the last action was. */
static const char *const RESTORE_PHRASES[] = {
    "put it back",
    "put that back",
    "put it back the way it was",
    "put it back how it was",
    "put things back",
    "change it back",
    "change that back",
    "set it back",
    "switch it back",
    "turn it back",
    "roll it back",
    "roll that back",
    "bring it back",
    "make it like before",
    "make it how it was",
    "make it like it was",
    "make it like it was before",
    "make it how it was before",
    "go back",
    "back to before",
    "return to before",
    "revert to before",
};

/* "go back to ...", "back to ...", "return to ...", "revert to ...": the earlier state. */
static const char *const RESTORE_LEADS[] = {"go back to",    "back to",           "return to",
                                            "revert to",     "change it back to", "put it back to",
                                            "set it back to"};
static const char *const EARLIER_STATE[] = {
    "how it was",         "the way it was",        "what it was",     "how it was before",
    "what it was before", "the way it was before", "before",          "how things were",
    "the old one",        "the old settings",      "the old setting", "the settings before",
    "where it was",       "where we were",
};

/* Retractions: the person takes back what they said. */
static const char *const RETRACT_PHRASES[] = {
    "not do that",        "not do this",      "lets not do that",
    "lets not",           "dont do that",     "do not do that",
    "i dont want that",   "i dont like that", "i dont like it",
    "not like that",      "never mind",       "nevermind",
    "never mind that",    "nevermind that",   "scratch that",
    "take that back",     "take it back",     "forget it",
    "forget i said that", "forget that",      "i take that back",
    "i take it back",     "ctrl z",           "control z",
    "hit undo",           "press undo",
};

/* "undo everything", "revert all of it": every action in the log. */
static const char *const UNDO_ALL_OBJECTS[] = {
    "everything",        "all",         "all of it",
    "all of that",       "all of them", "all of those",
    "all the changes",   "all changes", "all my changes",
    "all of my changes", "all that",
};

/* "both", "the last two", "my last 3 changes". */
static const char *const COUNT_DETS[] = {"the last", "my last",  "the past", "the previous",
                                         "the",      "last",     "those",    "these",
                                         "my",       "your last"};
static const char *const NUMBER_WORDS[] = {"zero", "one",   "two",   "three", "four", "five",
                                           "six",  "seven", "eight", "nine",  "ten"};

/* Politeness, hesitation and remorse dropped at both ends of an undo utterance. */
static const char *const FILLERS[] = {
    "nah",
    "naw",
    "meh",
    "please",
    "actually",
    "oh",
    "wait",
    "hey",
    "oops",
    "whoops",
    "no",
    "nope",
    "sorry",
    "um",
    "uh",
    "umm",
    "hmm",
    "ok",
    "okay",
    "just",
    "thanks",
    "thank you",
    "can you",
    "could you",
    "would you",
    "will you",
    "can we",
    "lets",
    "pipit",
    "ah",
    "ugh",
    "go ahead and",
    "i said",
    "i meant",
    "now",
    "quickly",
    "again",
    "right now",
    "for me",
    "kindly",
    "ahh",
    "darn",
    "dang",
    "that was wrong",
    "thats wrong",
    "that was a mistake",
    "that was not right",
    "thats not right",
    "wrong",
    "my bad",
    "my mistake",
    "i didnt mean that",
    "i didnt want that",
    "not what i wanted",
    "not that",
    "hold on",
    "on second thought",
    "that was not it",
    "thats not it",
    "wrong one",
    "the wrong one",
    "i want to",
    "i wanna",
    "id like to",
    "wrong setting",
    "wrong button",
    "i changed my mind",
    "changed my mind",
    "that was an accident",
    "oh no",
    "i didnt want that",
    "not right",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ============================================================================
 * tokens (words.c) */

struct toks {
    struct words_tok t[MAX_TOKENS];
    size_t n;   /* tokens */
    size_t len; /* bytes of the utterance looked at */
};

static bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

static size_t bounded_len(const char *s, bool *too_long) {
    return words_bounded_len(s, ROUTER_MAX_INPUT, too_long);
}

static void tokenize(const char *s, size_t len, struct toks *out) {
    out->len = len;
    out->n = words_tokenize(s, len, WORDS_PUNCTUATION, out->t, MAX_TOKENS);
}

static bool is_word(const struct toks *ts, size_t i, const char *w) {
    return words_is(ts->t, ts->n, i, w);
}

/* Tokens the phrase ("white balance") matches at token i, all of them words before `end`; 0
 * when it does not match. */
static size_t match_phrase(const struct toks *ts, size_t i, size_t end, const char *phrase) {
    return words_match(ts->t, end, i, phrase);
}

static size_t
match_any(const struct toks *ts, size_t i, size_t end, const char *const *list, size_t n_list) {
    return words_match_any(ts->t, end, i, list, n_list);
}

/* ============================================================================
 * undo */

/* The longest phrase of `list` that matches at token i before `end`: tokens matched, or 0. */
static size_t
match_longest(const struct toks *ts, size_t i, size_t end, const char *const *list, size_t n) {
    return words_match_longest(ts->t, end, i, list, n);
}

static size_t phrase_words(const char *phrase) {
    return words_count(phrase);
}

/* A count of actions at token i: "2", "two". *value receives it; tokens matched, or 0. */
static size_t match_number(const struct toks *w, size_t i, size_t end, int32_t *value) {
    if (i >= end) {
        return 0;
    }
    const char *s = w->t[i].w;
    if (is_digit((unsigned char)s[0])) {
        int32_t v = 0;
        for (size_t k = 0; s[k] != '\0'; k++) {
            if (!is_digit((unsigned char)s[k]) || k >= 3) {
                return 0; /* "2.5", "1000" */
            }
            v = v * 10 + (s[k] - '0');
        }
        *value = v;
        return 1;
    }
    for (size_t k = 0; k < COUNT(NUMBER_WORDS); k++) {
        if (strcmp(s, NUMBER_WORDS[k]) == 0) {
            *value = (int32_t)k;
            return 1;
        }
    }
    return 0;
}

/* OBJECT: the last action, named ("that", "the last change", "my previous command", "that
 * last one", "what you just did", "the last change you made"). Tokens matched, or 0. */
static size_t match_undo_object(const struct toks *w, size_t i, size_t end, bool allow_it) {
    size_t m = match_longest(w, i, end, UNDO_OBJECT_PHRASES, COUNT(UNDO_OBJECT_PHRASES));
    if (m > 0) {
        return m;
    }
    size_t j = i;
    size_t det = match_longest(w, j, end, UNDO_DETS, COUNT(UNDO_DETS));
    j += det;
    size_t adj = match_longest(w, j, end, UNDO_ADJS, COUNT(UNDO_ADJS));
    j += adj;
    size_t noun = match_longest(w, j, end, UNDO_NOUNS, COUNT(UNDO_NOUNS));
    if (noun > 0 && strcmp(w->t[j].w, "one") == 0 && det == 0 && adj == 0) {
        noun = 0; /* "undo one" is a count, not an object */
    }
    j += noun;
    if (det == 0 && adj == 0 && noun == 0) {
        /* a bare pronoun: "that", "it" */
        size_t p = match_longest(w, i, end, UNDO_PRONOUNS, COUNT(UNDO_PRONOUNS));
        if (p == 0 || (!allow_it && is_word(w, i, "it"))) {
            return 0;
        }
        j = i + p;
    } else if (adj == 0 && noun == 0) {
        /* a determiner alone: only "that" and "this" are objects by themselves */
        if (!is_word(w, i, "that") && !is_word(w, i, "this")) {
            return 0;
        }
    } else if (adj == 0 && det == 0) {
        return 0; /* "undo things": no determiner, no "last" */
    }
    j += match_longest(w, j, end, UNDO_TAILS, COUNT(UNDO_TAILS));
    return j - i;
}

/* COUNT: several actions ("both", "the last two", "those 3 changes", "twice", "everything").
 * *n receives the count (ROUTER_UNDO_ALL for everything); tokens matched, or 0. */
static size_t
match_undo_count(const struct toks *w, size_t i, size_t end, bool need_det, int32_t *n) {
    size_t m = match_longest(w, i, end, UNDO_ALL_OBJECTS, COUNT(UNDO_ALL_OBJECTS));
    if (m > 0) {
        *n = ROUTER_UNDO_ALL;
        return m;
    }
    if (is_word(w, i, "twice")) {
        *n = 2;
        return 1;
    }
    if (is_word(w, i, "both")) {
        static const char *const BOTH_TAILS[] = {"of them", "of those", "of these",
                                                 "of that", "changes",  "actions",
                                                 "steps",   "things",   "commands"};
        *n = 2;
        return 1 + match_longest(w, i + 1, end, BOTH_TAILS, COUNT(BOTH_TAILS));
    }
    size_t det = match_longest(w, i, end, COUNT_DETS, COUNT(COUNT_DETS));
    size_t j = i + det;
    int32_t v = 0;
    size_t num = match_number(w, j, end, &v);
    if (num == 0 || v < 1 || (need_det && det == 0)) {
        return 0; /* "back out one step" zooms out; "back out the last two" undoes */
    }
    j += num;
    j += match_longest(w, j, end, UNDO_NOUNS, COUNT(UNDO_NOUNS));
    j += match_longest(w, j, end, UNDO_TAILS, COUNT(UNDO_TAILS));
    *n = v;
    return j - i;
}

/* The undo grammar on words [lo, hi) (fillers already dropped): the number of actions to
 * revert, 0 when the words are not exactly one undo request. */
static int32_t undo_words(const struct toks *w, size_t lo, size_t hi) {
    size_t n = hi - lo;
    if (match_longest(w, lo, hi, RESTORE_PHRASES, COUNT(RESTORE_PHRASES)) == n ||
        match_longest(w, lo, hi, RETRACT_PHRASES, COUNT(RETRACT_PHRASES)) == n) {
        return 1;
    }
    if (match_phrase(w, lo, hi, "put everything back") == n ||
        match_phrase(w, lo, hi, "put it all back") == n) {
        return ROUTER_UNDO_ALL;
    }
    /* "never mind, put it back": a retraction before another undo form */
    size_t retract = match_longest(w, lo, hi, RETRACT_PHRASES, COUNT(RETRACT_PHRASES));
    if (retract > 0 && lo + retract < hi) {
        int32_t rest = undo_words(w, lo + retract, hi);
        if (rest > 0) {
            return rest;
        }
    }
    /* "go back one step", "go back two steps" */
    if (match_phrase(w, lo, hi, "go back") == 2) {
        int32_t count = 0;
        size_t c = match_undo_count(w, lo + 2, hi, false, &count);
        if (c > 0 && lo + 2 + c == hi) {
            return count;
        }
    }
    /* "go back to how it was", "back to the previous settings" */
    size_t lead = match_longest(w, lo, hi, RESTORE_LEADS, COUNT(RESTORE_LEADS));
    if (lead > 0) {
        size_t rest = match_longest(w, lo + lead, hi, EARLIER_STATE, COUNT(EARLIER_STATE));
        if (rest == 0) {
            rest = match_undo_object(w, lo + lead, hi, false);
            /* "back to the previous settings", not "back to that" */
            rest = rest > 0 &&
                           match_longest(w, lo + lead, hi, UNDO_PRONOUNS, COUNT(UNDO_PRONOUNS)) == 0
                       ? rest
                       : 0;
        }
        if (rest > 0 && lo + lead + rest == hi) {
            return 1;
        }
    }
    /* VERB [OBJECT | COUNT] [TOO] */
    size_t v = match_longest(w, lo, hi, UNDO_VERBS, COUNT(UNDO_VERBS));
    bool bare_ok = v > 0;
    if (v == 0) {
        v = match_longest(w, lo, hi, OBJECT_VERBS, COUNT(OBJECT_VERBS));
    }
    if (v == 0) {
        return 0;
    }
    size_t j = lo + v;
    if (j == hi) {
        return bare_ok ? 1 : 0;
    }
    int32_t count = 0;
    size_t c = match_undo_count(w, j, hi, !bare_ok, &count);
    if (c > 0 && j + c == hi) {
        return count;
    }
    bool allow_it = true;
    for (size_t k = 0; k < COUNT(NO_IT_VERBS); k++) {
        allow_it = allow_it && match_phrase(w, lo, hi, NO_IT_VERBS[k]) == 0;
    }
    size_t o = match_undo_object(w, j, hi, allow_it);
    if (o == 0) {
        return 0;
    }
    j += o;
    j += match_longest(w, j, hi, UNDO_TOO, COUNT(UNDO_TOO));
    return j == hi ? 1 : 0;
}

/* Words after an undo request that only say why ("take that back, portrait was better"). */
static const char *const COMMENTARY[] = {"was",   "were",   "looked", "seemed",
                                         "looks", "better", "worse",  "fine"};

/* After an undo turn, these ask for one more ("undo that" ... "and that too"). */
static const char *const FOLLOWUPS[] = {
    "that too",
    "that one too",
    "this too",
    "this one too",
    "that as well",
    "that one as well",
    "this as well",
    "also that",
    "that one",
    "the one before",
    "the one before that",
    "before that",
    "before that too",
    "again",
    "once more",
    "one more",
    "one more time",
    "do it again",
    "the previous one too",
    "the one before too",
};

/* The undo grammar (or, with `followup`, a follow-up phrase) on the words of tokens [from, to),
 * fillers dropped at both ends. */
static int32_t undo_tokens(const struct toks *ts, size_t from, size_t to, bool followup) {
    struct toks w; /* words only: punctuation is ignored */
    w.n = 0;
    w.len = ts->len;
    for (size_t i = from; i < to; i++) {
        if (ts->t[i].kind == WORDS_WORD) {
            w.t[w.n++] = ts->t[i];
        }
    }
    size_t lo = 0;
    size_t hi = w.n;
    if (followup && hi > 0 && match_longest(&w, lo, hi, FOLLOWUPS, COUNT(FOLLOWUPS)) == hi) {
        return 1; /* "again" is a filler elsewhere */
    }
    for (;;) { /* leading fillers */
        size_t m = match_longest(&w, lo, hi, FILLERS, COUNT(FILLERS));
        if (m == 0 && followup) { /* "and that too" */
            m = match_any(&w, lo, hi, CONJUNCTIONS, COUNT(CONJUNCTIONS));
        }
        if (m == 0) {
            break;
        }
        lo += m;
    }
    for (bool again = true; again && hi > lo;) { /* trailing fillers */
        again = false;
        for (size_t k = 0; k < COUNT(FILLERS) && !again; k++) {
            size_t nw = phrase_words(FILLERS[k]);
            if (nw <= hi - lo && match_phrase(&w, hi - nw, hi, FILLERS[k]) == nw &&
                !(followup && strcmp(FILLERS[k], "again") == 0)) {
                hi -= nw;
                again = true;
            }
        }
    }
    if (hi <= lo) {
        return 0; /* only fillers ("oops", "oh no") */
    }
    if (followup) {
        return match_longest(&w, lo, hi, FOLLOWUPS, COUNT(FOLLOWUPS)) == hi - lo ? 1 : 0;
    }
    return undo_words(&w, lo, hi);
}

static size_t match_verb(const struct router *r, const struct toks *ts, size_t i, size_t end);

/* Tokens [from, to) only say why: a word of COMMENTARY, and no clause that starts with a
 * command verb ("..., the flash was better, take a photo" has one). */
static bool is_commentary(const struct toks *ts, size_t from, size_t to) {
    bool why = false;
    for (size_t i = from; i < to; i++) {
        if (ts->t[i].kind != WORDS_WORD) {
            continue;
        }
        bool clause_start = i == from || ts->t[i - 1].kind == WORDS_PUNCT ||
                            match_any(ts, i - 1, to, CONJUNCTIONS, COUNT(CONJUNCTIONS)) > 0;
        if (clause_start && match_verb(NULL, ts, i, to) > 0) {
            return false;
        }
        why = why || match_any(ts, i, to, COMMENTARY, COUNT(COMMENTARY)) > 0;
    }
    return why;
}

/* Tokenize a whole (not over-long) utterance; false when it cannot be an undo request. */
static bool undo_tokenize(const char *utterance, struct toks *ts) {
    if (utterance == NULL) {
        return false;
    }
    bool too_long = false;
    size_t len = bounded_len(utterance, &too_long);
    if (too_long) {
        return false;
    }
    tokenize(utterance, len, ts);
    return true;
}

int32_t router_undo_count(const char *utterance) {
    struct toks ts;
    if (!undo_tokenize(utterance, &ts)) {
        return 0;
    }
    int32_t n = undo_tokens(&ts, 0, ts.n, false);
    if (n > 0) {
        return n;
    }
    /* an undo request and a clause that only says why, in either order: "take that back,
     * portrait was better", "the zoom was fine, undo it" */
    size_t first = ts.n;
    size_t last = ts.n;
    for (size_t i = 0; i < ts.n; i++) {
        if (ts.t[i].kind == WORDS_PUNCT) {
            first = first == ts.n ? i : first;
            last = i;
        }
    }
    if (first == ts.n) {
        return 0;
    }
    size_t after = first;
    while (after < ts.n && ts.t[after].kind == WORDS_PUNCT) {
        after++;
    }
    if (is_commentary(&ts, after, ts.n)) {
        n = undo_tokens(&ts, 0, first, false);
    }
    size_t before = last;
    while (before > 0 && ts.t[before - 1].kind == WORDS_PUNCT) {
        before--;
    }
    if (n == 0 && is_commentary(&ts, 0, before)) {
        n = undo_tokens(&ts, last + 1, ts.n, false);
    }
    return n;
}

int32_t router_undo_followup(const char *utterance) {
    struct toks ts;
    if (!undo_tokenize(utterance, &ts)) {
        return 0;
    }
    return undo_tokens(&ts, 0, ts.n, true) > 0 || undo_tokens(&ts, 0, ts.n, false) > 0 ? 1 : 0;
}

bool router_is_undo(const char *utterance) {
    return router_undo_count(utterance) > 0;
}

/* ============================================================================
 * lexicon */

struct router_word {
    enum router_word_kind kind;
    char phrase[MAX_PHRASE]; /* normalized: lowercase words joined by one space */
};

struct router {
    struct router_word *words; /* n used of cap */
    size_t n, cap;
    char shapes[ROUTER_MAX_SHAPES][WORDS_CAP]; /* "9x", "9:9": numbers in a tool set's words */
    size_t n_shapes;
};

void router_free(struct router *r) {
    if (r != NULL) {
        free(r->words);
        free(r);
    }
}

/* Add a normalized phrase; false only when out of memory. Full: ignored (true). */
static bool add_norm(struct router *r, enum router_word_kind kind, const char *norm) {
    for (size_t i = 0; i < r->n; i++) {
        if (r->words[i].kind == kind && strcmp(r->words[i].phrase, norm) == 0) {
            return true;
        }
    }
    if (r->n >= ROUTER_MAX_KEYWORDS) {
        return true;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap == 0 ? 64 : r->cap * 2;
        struct router_word *w = realloc(r->words, cap * sizeof(*w));
        if (w == NULL) {
            return false;
        }
        r->words = w;
        r->cap = cap;
    }
    r->words[r->n].kind = kind;
    memcpy(r->words[r->n].phrase, norm, strlen(norm) + 1);
    r->n++;
    return true;
}

enum pipit_status router_add_keyword(struct router *r,
                                     enum router_word_kind kind,
                                     const char *phrase,
                                     struct pipit_error *err) {
    if (r == NULL || phrase == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "router: add keyword: %s",
                               r == NULL ? "NULL router" : "NULL phrase");
    }
    if (kind != ROUTER_WORD_VERB && kind != ROUTER_WORD_KEYWORD && kind != ROUTER_WORD_PAIR) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "router: unknown word kind: %d",
                               (int)kind);
    }
    char norm[MAX_PHRASE];
    size_t nw = 0;
    bool too_long = false;
    words_bounded_len(phrase, ROUTER_MAX_INPUT, &too_long);
    if (too_long || !words_normalize(phrase, ROUTER_MAX_WORDS, norm, sizeof(norm), &nw) ||
        (kind == ROUTER_WORD_PAIR && nw != 2)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "router: %s must be %s words of letters and digits, "
                               "each under %d bytes: \"%.64s\"",
                               kind == ROUTER_WORD_PAIR ? "a pair" : "a keyword",
                               kind == ROUTER_WORD_PAIR ? "2" : "1 to 3", ROUTER_WORD_CAP, phrase);
    }
    for (size_t i = 0; i < r->n; i++) {
        if (r->words[i].kind == kind && strcmp(r->words[i].phrase, norm) == 0) {
            return PIPIT_OK;
        }
    }
    if (r->n >= ROUTER_MAX_KEYWORDS) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "router: too many keywords (at most %d): \"%.64s\"",
                               ROUTER_MAX_KEYWORDS, phrase);
    }
    if (!add_norm(r, kind, norm)) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "router: out of memory");
    }
    return PIPIT_OK;
}

/* ----------------------------------------------------------------------------
 * words from a tool set */

/* Words a tool set uses that name nothing: function words, generic adjectives, state words.
 * They never become keywords or verbs. */
static const char *const STOP_WORDS[] = {
    "a",
    "an",
    "the",
    "to",
    "of",
    "for",
    "in",
    "on",
    "off",
    "out",
    "up",
    "down",
    "at",
    "by",
    "with",
    "from",
    "or",
    "and",
    "as",
    "is",
    "are",
    "be",
    "it",
    "its",
    "this",
    "that",
    "these",
    "those",
    "one",
    "all",
    "any",
    "some",
    "no",
    "not",
    "yes",
    "true",
    "false",
    "if",
    "then",
    "than",
    "into",
    "onto",
    "per",
    "eg",
    "e",
    "g",
    "id",
    "ids",
    "number",
    "value",
    "values",
    "new",
    "recent",
    "larger",
    "large",
    "small",
    "more",
    "less",
    "what",
    "which",
    "who",
    "how",
    "when",
    "where",
    "why",
    "your",
    "my",
    "our",
    "their",
    "you",
    "me",
    "we",
    "them",
    "other",
    "else",
    "current",
    "given",
    "used",
    "using",
    "so",
    "only",
    "each",
    "every",
    "both",
    "none",
    "null",
    "enabled",
    "disabled",
    "locked",
    "unlocked",
    "left",
    "right",
    "top",
    "bottom",
    "horizontal",
    "vertical",
    "step",
    "steps",
    "name",
    "omitted",
    "recently",
    "favour",
    "favor",
    "full",
    "high",
    "low",
    "medium",
    "standard",
    "normal",
    "default",
    "whether",
    "by",
    "via",
    "about",
    "over",
    "under",
    "again",
    "before",
    "after",
    "there",
    "here",
    "can",
    "will",
    "should",
    "may",
    "must",
    "do",
    "does",
    "done",
    "has",
    "have",
    "had",
    "was",
    "were",
    "been",
    "just",
    "also",
    "too",
    "very",
    "much",
    "many",
    "own",
    "same",
    "part",
    "way",
    "thing",
    "things",
    "something",
    "person",
    "user",
    "users",
    "request",
    "device",
    "tool",
    "tools",
    "call",
    "calls",
    "first",
    "last",
    "next",
    "previous",
    "between",
    "within",
    "without",
    "while",
    "up",
    "cloud",
    "model",
    "llm",
    "context",
    "reason",
    "escalation",
    "query",
    "hh",
    "mm",
    /* colours and sizes describe ("white background"), they do not name a command */
    "white",
    "black",
    "red",
    "green",
    "blue",
    "yellow",
    "orange",
    "purple",
    "pink",
    "grey",
    "gray",
    "brown",
    "warm",
    "cool",
    "cold",
    "hot",
    "big",
    "little",
    "long",
    "short",
};

/* Letters only (a verb must be a word, not "2x"). */
static bool is_letters(const char *w) {
    for (const char *p = w; *p != '\0'; p++) {
        if (!((*p >= 'a' && *p <= 'z') || (unsigned char)*p >= 0x80)) {
            return false;
        }
    }
    return w[0] != '\0';
}

/* A word's shape when it is a number with more ("2x" -> "9x", "0.5x" -> "9x", "16:9" ->
 * "9:9"); false for plain numbers and words that do not start with a digit. */
static bool number_shape(const char *w, char *out, size_t size) {
    if (!is_digit((unsigned char)w[0])) {
        return false;
    }
    size_t n = 0;
    bool more = false;
    for (size_t i = 0; w[i] != '\0' && n + 1 < size;) {
        if (is_digit((unsigned char)w[i])) {
            while (is_digit((unsigned char)w[i]) ||
                   (w[i] == '.' && is_digit((unsigned char)w[i + 1]))) {
                i++;
            }
            out[n++] = '9';
        } else {
            more = true;
            out[n++] = w[i++];
        }
    }
    out[n] = '\0';
    return more;
}

static void add_shape(struct router *r, const char *w) {
    char shape[WORDS_CAP];
    if (!number_shape(w, shape, sizeof(shape))) {
        return;
    }
    for (size_t i = 0; i < r->n_shapes; i++) {
        if (strcmp(r->shapes[i], shape) == 0) {
            return;
        }
    }
    if (r->n_shapes < ROUTER_MAX_SHAPES) {
        memcpy(r->shapes[r->n_shapes++], shape, strlen(shape) + 1);
    }
}

/* One word of a tool set as a keyword (and its plural or singular); stop words are skipped.
 */
static bool add_noun_word(struct router *r, const char *w) {
    size_t n = strlen(w);
    if (n < 2 || n + 2 > WORDS_CAP || words_in_list(w, STOP_WORDS, COUNT(STOP_WORDS))) {
        return true;
    }
    if (is_digit((unsigned char)w[0])) {
        add_shape(r, w);
        return true;
    }
    char other[WORDS_CAP];
    const char *end = w + n - 2;
    if (n >= 4 && w[n - 1] == 's' && strchr("suiy", w[n - 2]) == NULL) {
        pipit_format(other, sizeof(other), "%.*s", (int)(n - 1), w); /* "photos" -> "photo" */
    } else if (w[n - 1] == 's' || w[n - 1] == 'x' || strcmp(end, "ch") == 0 ||
               strcmp(end, "sh") == 0) {
        pipit_format(other, sizeof(other), "%ses", w); /* "flash" -> "flashes" */
    } else if (w[n - 1] == 'y' && strchr("aeiou", w[n - 2]) == NULL) {
        pipit_format(other, sizeof(other), "%.*sies", (int)(n - 1), w); /* "battery" */
    } else {
        pipit_format(other, sizeof(other), "%ss", w); /* "photo" -> "photos" */
    }
    return add_norm(r, ROUTER_WORD_KEYWORD, w) && add_norm(r, ROUTER_WORD_KEYWORD, other);
}

static bool add_verb_word(struct router *r, const char *w) {
    if (!is_letters(w) || strlen(w) < 2 || words_in_list(w, STOP_WORDS, COUNT(STOP_WORDS))) {
        return true;
    }
    return add_norm(r, ROUTER_WORD_VERB, w);
}

/* A phrase from the tool set ("white balance", "living room light") as a keyword: a word
 * phrase of up to ROUTER_MAX_WORDS words; a one-word phrase is a noun word. */
static bool add_noun_phrase(struct router *r, const char *text) {
    char norm[MAX_PHRASE];
    size_t nw = 0;
    if (text == NULL || !words_normalize(text, ROUTER_MAX_WORDS, norm, sizeof(norm), &nw)) {
        return true;
    }
    if (nw == 1) {
        return add_noun_word(r, norm);
    }
    /* "the thermostat": determiners off the front */
    const char *p = norm;
    while (strncmp(p, "the ", 4) == 0 || strncmp(p, "a ", 2) == 0 || strncmp(p, "my ", 3) == 0) {
        p = strchr(p, ' ') + 1;
    }
    if (strchr(p, ' ') == NULL) {
        return add_noun_word(r, p);
    }
    return add_norm(r, ROUTER_WORD_KEYWORD, p);
}

/* Words of an identifier ("set_white_balance", "timer_s"): the first one a verb when
 * `first_is_verb`, the others keywords; a last part of 1 or 2 letters is a unit and dropped
 * ("timer_s", "exposure_ev"). Adjacent words are pairs ("ae_af" joins "ae and af"). */
static bool add_identifier(struct router *r, const char *name, bool first_is_verb) {
    char parts[8][WORDS_CAP];
    size_t n = 0;
    for (const char *p = name; *p != '\0' && n < 8;) {
        const char *us = strchr(p, '_');
        size_t wl = us != NULL ? (size_t)(us - p) : strlen(p);
        if (wl > 0 && wl < WORDS_CAP) {
            for (size_t k = 0; k < wl; k++) {
                char c = p[k];
                parts[n][k] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
            }
            parts[n][wl] = '\0';
            n++;
        }
        p += wl;
        p += *p == '_';
    }
    if (n > 1 && strlen(parts[n - 1]) <= 2 && !first_is_verb) {
        n--;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        ok = i == 0 && first_is_verb && n > 1 ? add_verb_word(r, parts[i])
                                              : add_noun_word(r, parts[i]);
        if (ok && i > 0 && !(i == 1 && first_is_verb) &&
            !words_in_list(parts[i - 1], STOP_WORDS, COUNT(STOP_WORDS)) &&
            !words_in_list(parts[i], STOP_WORDS, COUNT(STOP_WORDS))) {
            char pair[MAX_PHRASE];
            pipit_format(pair, sizeof(pair), "%s %s", parts[i - 1], parts[i]);
            ok = add_norm(r, ROUTER_WORD_PAIR, pair);
        }
    }
    return ok;
}

/* A description ("Lock or unlock exposure and focus"): its first word a verb, its other
 * words keywords, "X and Y" / "X or Y" pairs, number shapes ("2x"). With `first_is_verb`
 * false (parameter descriptions) only the shapes. */
static bool add_description(struct router *r, const char *text, bool nouns) {
    if (text == NULL) {
        return true;
    }
    struct words_tok t[64];
    size_t n = words_tokenize(text, strlen(text), WORDS_PUNCTUATION, t, COUNT(t));
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (t[i].kind != WORDS_WORD || t[i].w[0] == '\0') {
            continue;
        }
        add_shape(r, t[i].w);
        if (!nouns) {
            continue;
        }
        if (i == 0) {
            ok = add_verb_word(r, t[i].w);
            continue;
        }
        if (strlen(t[i].w) >= 3 && !words_in_list(t[i].w, VERBS, COUNT(VERBS))) {
            ok = add_noun_word(r, t[i].w); /* "Lock or unlock": verbs, not things */
        }
        if (ok && i + 1 < n && (words_is(t, n, i, "and") || words_is(t, n, i, "or")) &&
            t[i - 1].kind == WORDS_WORD && t[i + 1].kind == WORDS_WORD) {
            char pair[MAX_PHRASE];
            pipit_format(pair, sizeof(pair), "%s %s", t[i - 1].w, t[i + 1].w);
            ok = add_norm(r, ROUTER_WORD_PAIR, pair);
        }
    }
    return ok;
}

/* Words that follow a verb: "push in", "free the lock", "brighten it". An example's first word
 * is taken as a verb only before one of these ("overcast today", "ten second timer" and "I'm
 * shooting" do not start with a verb). */
static const char *const VERB_FOLLOWERS[] = {
    "it",   "the",        "a",    "an",  "me",  "my",  "this", "that", "these", "those",
    "them", "up",         "down", "in",  "out", "on",  "off",  "to",   "back",  "some",
    "all",  "everything", "your", "our", "its", "him", "her",  "us",
};

/* An example utterance ("warm it up to 22"): the verb it starts with, after lead-ins, when it
 * is a word of letters that is no keyword or stop word and a verb's follower comes next. */
static bool add_example(struct router *r, const char *say) {
    struct words_tok t[16];
    size_t n = say != NULL ? words_tokenize(say, strlen(say), WORDS_PUNCTUATION, t, COUNT(t)) : 0;
    size_t i = 0;
    while (i < n && words_match_any(t, n, i, LEAD_INS, COUNT(LEAD_INS)) > 0) {
        i++;
    }
    if (i + 1 >= n || t[i].kind != WORDS_WORD ||
        words_match_any(t, n, i, STATEMENTS, COUNT(STATEMENTS)) > 0 ||
        words_match_any(t, n, i + 1, VERB_FOLLOWERS, COUNT(VERB_FOLLOWERS)) == 0) {
        return true;
    }
    for (size_t k = 0; k < r->n; k++) {
        if (r->words[k].kind == ROUTER_WORD_KEYWORD && strcmp(r->words[k].phrase, t[i].w) == 0) {
            return true; /* "flash on": a thing, not a verb */
        }
    }
    return add_verb_word(r, t[i].w);
}

/* A parameter schema: number shapes from descriptions and enum values ("2x", "16:9"); with
 * `names`, its property names as keywords and its string enum values as keyword phrases.
 * Nested objects and array items too. */
static bool add_schema(struct router *r, const struct pipit_schema *s, bool names, size_t depth) {
    if (s == NULL || depth > PIPIT_TOOLSPEC_MAX_DEPTH) {
        return true;
    }
    bool ok = add_description(r, s->description, false);
    for (size_t e = 0; ok && s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
        add_shape(r, s->enum_str[e]);
        ok = !names || words_in_list(s->enum_str[e], VERBS, COUNT(VERBS)) ||
             add_noun_phrase(r, s->enum_str[e]); /* "start" of record_video is a verb */
    }
    for (size_t i = 0; ok && i < s->n_props; i++) {
        ok = (!names || add_identifier(r, s->props[i].name, false)) &&
             add_schema(r, s->props[i].schema, names, depth + 1);
    }
    if (ok && s->type == PIPIT_SCHEMA_ARRAY) {
        ok = add_schema(r, s->items, names, depth + 1);
    }
    return ok;
}

/* The pack's words (docs/toolspec.md, "Packs"): router verbs and nouns, state keys and their
 * words, example utterances. */
static bool add_pack(struct router *r, const struct pipit_toolset *ts) {
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    if (pk == NULL) {
        return true;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < pk->n_verbs; i++) {
        char norm[MAX_PHRASE];
        if (words_normalize(pk->verbs[i], ROUTER_MAX_WORDS, norm, sizeof(norm), NULL)) {
            ok = add_norm(r, ROUTER_WORD_VERB, norm);
        }
    }
    for (size_t i = 0; ok && i < pk->n_nouns; i++) {
        char norm[MAX_PHRASE];
        if (words_normalize(pk->nouns[i], ROUTER_MAX_WORDS, norm, sizeof(norm), NULL)) {
            ok = add_norm(r, ROUTER_WORD_KEYWORD, norm);
        }
    }
    for (size_t i = 0; ok && i < pk->n_keys; i++) {
        const struct pipit_pack_key *k = &pk->keys[i];
        ok = add_identifier(r, k->key, false) && add_noun_phrase(r, k->show) &&
             add_noun_phrase(r, k->words.noun);
        for (const char *p = k->words.names; ok && p != NULL && *p != '\0';) {
            const char *bar = strchr(p, '|');
            size_t l = bar != NULL ? (size_t)(bar - p) : strlen(p);
            char one[MAX_PHRASE];
            if (l < sizeof(one)) {
                memcpy(one, p, l);
                one[l] = '\0';
                ok = add_noun_phrase(r, one);
            }
            p += l;
            p += *p == '|';
        }
        for (size_t e = 0; ok && e < k->n_enum; e++) {
            ok = add_noun_phrase(r, k->enum_str[e]);
        }
    }
    for (size_t t = 0; ok && t < ts->n_tools; t++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, t);
        for (size_t e = 0; ok && tp != NULL && e < tp->n_examples; e++) {
            ok = add_example(r, tp->examples[e].say);
        }
    }
    return ok;
}

static bool add_toolset(struct router *r, const struct pipit_toolset *ts) {
    bool ok = true;
    for (size_t t = 0; ok && t < ts->n_tools; t++) {
        const struct pipit_tool *tool = &ts->tools[t];
        if (pipit_toolset_is_cloud(ts, t)) {
            continue; /* "Hand the request to a larger cloud model": no domain words */
        }
        /* a tool's one argument names the command ("portrait" is set_scene_mode, "level" is
         * set_zoom); of several, each is a detail of it ("high priority" of a ticket) */
        bool one_arg = tool->params != NULL && tool->params->n_props == 1;
        ok = add_identifier(r, tool->name, true) && add_description(r, tool->description, true) &&
             add_schema(r, tool->params, one_arg, 1);
        const char *const *keys = NULL;
        size_t n_keys = 0;
        if (ok && pipit_toolset_undo(ts, t, &keys, &n_keys) == PIPIT_UNDO_KEYS) {
            for (size_t k = 0; ok && k < n_keys; k++) {
                ok = add_identifier(r, keys[k], false);
            }
        }
    }
    return ok && add_pack(r, ts);
}

struct router *router_new(const struct pipit_toolset *ts) {
    struct router *r = calloc(1, sizeof(*r));
    if (r != NULL && ts != NULL && !add_toolset(r, ts)) {
        router_free(r);
        r = NULL;
    }
    return r;
}

size_t
router_words(const struct router *r, enum router_word_kind kind, const char **out, size_t max) {
    size_t n = 0;
    for (size_t i = 0; r != NULL && i < r->n; i++) {
        if (r->words[i].kind == kind) {
            if (n < max && out != NULL) {
                out[n] = r->words[i].phrase;
            }
            n++;
        }
    }
    return n;
}

/* A verb (default or extra) at token i before `end`: tokens matched, or 0. */
static size_t match_verb(const struct router *r, const struct toks *ts, size_t i, size_t end) {
    size_t m = match_any(ts, i, end, VERBS, COUNT(VERBS));
    for (size_t k = 0; m == 0 && r != NULL && k < r->n; k++) {
        if (r->words[k].kind == ROUTER_WORD_VERB) {
            m = match_phrase(ts, i, end, r->words[k].phrase);
        }
    }
    return m;
}

/* A number of a shape the tool set uses ("2x" when a description says "2x", "16:9" when an
 * enum has "4:3") counts as a keyword. */
static bool is_numeric_keyword(const struct router *r, const char *w) {
    char shape[WORDS_CAP];
    if (r == NULL || !number_shape(w, shape, sizeof(shape))) {
        return false;
    }
    for (size_t i = 0; i < r->n_shapes; i++) {
        if (strcmp(r->shapes[i], shape) == 0) {
            return true;
        }
    }
    return false;
}

static size_t match_keyword(const struct router *r, const struct toks *ts, size_t i, size_t end) {
    if (i < end && ts->t[i].kind == WORDS_WORD && is_numeric_keyword(r, ts->t[i].w)) {
        return 1;
    }
    size_t m = 0;
    for (size_t k = 0; m == 0 && r != NULL && k < r->n; k++) {
        if (r->words[k].kind == ROUTER_WORD_KEYWORD) {
            m = match_phrase(ts, i, end, r->words[k].phrase);
        }
    }
    return m;
}

/* "X and Y" is one phrase of the tool set (either order). */
static bool is_pair(const struct router *r, const char *x, const char *y) {
    char a[MAX_PHRASE];
    char b[MAX_PHRASE];
    pipit_format(a, sizeof(a), "%s %s", x, y);
    pipit_format(b, sizeof(b), "%s %s", y, x);
    for (size_t k = 0; r != NULL && k < r->n; k++) {
        if (r->words[k].kind == ROUTER_WORD_PAIR &&
            (strcmp(r->words[k].phrase, a) == 0 || strcmp(r->words[k].phrase, b) == 0)) {
            return true;
        }
    }
    return false;
}

/* Length of the separator run starting at token i (0: no run there). */
static size_t separator_run(const struct toks *ts, size_t i) {
    size_t j = i;
    while (j < ts->n) {
        if (ts->t[j].kind == WORDS_PUNCT) {
            j++;
        } else if (match_any(ts, j, ts->n, CONJUNCTIONS, COUNT(CONJUNCTIONS)) > 0) {
            j++;
        } else if (match_phrase(ts, j, ts->n, "after that") == 2) {
            j += 2;
        } else {
            break;
        }
    }
    return j - i;
}

static bool is_number_word(const char *w) {
    static const char *const NUMBERS[] = {"one",   "two",   "three", "four", "five", "six",
                                          "seven", "eight", "nine",  "ten",  "half"};
    if (is_digit((unsigned char)w[0])) {
        return true;
    }
    for (size_t k = 0; k < COUNT(NUMBERS); k++) {
        if (strcmp(w, NUMBERS[k]) == 0) {
            return true;
        }
    }
    return false;
}

/* A keyword at token i that counts on a side: not the unit of the number before it ("4
 * minutes", "like 20 percent", "21 degrees" are an argument's value, not a thing to act on). */
static size_t side_keyword(const struct router *r, const struct toks *ts, size_t i, size_t end) {
    size_t m = match_keyword(r, ts, i, end);
    if (m == 1 && i > 0 && ts->t[i - 1].kind == WORDS_WORD && is_number_word(ts->t[i - 1].w) &&
        !is_numeric_keyword(r, ts->t[i].w)) {
        return 0;
    }
    return m;
}

/* A lone "and" at token a that joins one phrase rather than two commands. */
static bool
and_is_protected(const struct router *r, const struct toks *ts, size_t seg_start, size_t a) {
    if (a == 0 || a + 1 >= ts->n || ts->t[a - 1].kind != WORDS_WORD ||
        ts->t[a + 1].kind != WORDS_WORD) {
        return false;
    }
    const char *prev = ts->t[a - 1].w;
    const char *next = ts->t[a + 1].w;
    for (size_t k = 0; k < COUNT(AND_PAIRS); k++) {
        if (strcmp(prev, AND_PAIRS[k][0]) == 0 && strcmp(next, AND_PAIRS[k][1]) == 0) {
            return true;
        }
    }
    if (is_pair(r, prev, next)) {
        return true; /* "exposure and focus": one phrase of the tool set */
    }
    if (strcmp(next, "a") == 0 && is_word(ts, a + 2, "half")) {
        return true; /* "one and a half" */
    }
    if (is_number_word(prev) && is_number_word(next)) {
        return true; /* "3 and 5" */
    }
    /* "between 3 and 5 seconds", "between the front and the back camera"; but
     * "switch between cameras and take a photo" is two commands */
    if (match_verb(r, ts, a + 1, ts->n) > 0) {
        return false;
    }
    for (size_t k = a; k > seg_start && a - k < 4; k--) {
        if (is_word(ts, k - 1, "between")) {
            return true;
        }
    }
    return false;
}

static bool left_is_command(const struct router *r, const struct toks *ts, size_t b, size_t e) {
    size_t s = b;
    while (s < e && match_any(ts, s, e, LEAD_INS, COUNT(LEAD_INS)) > 0) {
        s++;
    }
    if (match_any(ts, s, e, RETRACTIONS, COUNT(RETRACTIONS)) > 0 ||
        match_any(ts, s, e, STATEMENTS, COUNT(STATEMENTS)) > 0) {
        return false;
    }
    if (s < e && match_verb(r, ts, s, e) > 0) {
        return true;
    }
    for (size_t i = b; i < e; i++) {
        if (side_keyword(r, ts, i, e) > 0) {
            return true;
        }
    }
    return false;
}

static bool right_is_command(const struct router *r, const struct toks *ts, size_t b, size_t e) {
    size_t i = b;
    while (i < e && match_any(ts, i, e, LEAD_INS, COUNT(LEAD_INS)) > 0) {
        i++;
    }
    if (match_any(ts, i, e, STATEMENTS, COUNT(STATEMENTS)) > 0) {
        return false; /* "zoom out, I'm too close" */
    }
    if (i < e && match_verb(r, ts, i, e) > 0) {
        return true;
    }
    bool keyword = false;
    for (size_t k = b; k < e; k++) {
        if (k > i && match_any(ts, k, e, COPULAS, COUNT(COPULAS)) > 0) {
            return false; /* "..., wifi in room 4 is slow": it says how things are ("is the
                             flash on" asks, and stays a step of its own) */
        }
        keyword = keyword || side_keyword(r, ts, k, e) > 0;
    }
    return keyword;
}

/* A typographic mark a segment's edge loses (UTF-8 "E2 80 xx": dashes, curly quotes, the
 * ellipsis): nonzero when s[i..] is one. */
static unsigned char typo_mark(const char *s, size_t i, size_t len) {
    if (i + 2 < len && (unsigned char)s[i] == 0xE2 && (unsigned char)s[i + 1] == 0x80) {
        unsigned char x = (unsigned char)s[i + 2];
        if (x == 0x93 || x == 0x94 || x == 0x98 || x == 0x99 || x == 0x9C || x == 0x9D ||
            x == 0xA6) {
            return x;
        }
    }
    return 0;
}

/* Byte that may be trimmed at a segment's edge (ASCII only; '-' and '+' stay:
 * "-1", "+2"). */
static bool is_trim_byte(unsigned char c) {
    return is_space(c) || (c != '\0' && strchr(",.;:!?\"'()[]{}", c) != NULL);
}

/* Copy [b, e) of `s` into `out` with edges trimmed; cut at a character boundary
 * when too long. Returns the length written. */
static size_t copy_segment(const char *s, size_t b, size_t e, char out[ROUTER_MAX_SEGMENT]) {
    for (;;) {
        if (b < e && is_trim_byte((unsigned char)s[b])) {
            b++;
        } else if (b < e && typo_mark(s, b, e) != 0) {
            b += 3;
        } else {
            break;
        }
    }
    for (;;) {
        if (e > b && is_trim_byte((unsigned char)s[e - 1])) {
            e--;
        } else if (e >= b + 3 && typo_mark(s, e - 3, e) != 0) {
            e -= 3;
        } else {
            break;
        }
    }
    size_t n = e - b;
    if (n > ROUTER_MAX_SEGMENT - 1) {
        n = ROUTER_MAX_SEGMENT - 1;
        n = utf8_boundary(s + b, n);
        while (n > 0 && is_space((unsigned char)s[b + n - 1])) {
            n--;
        }
    }
    memcpy(out, s + b, n);
    out[n] = '\0';
    return n;
}

size_t router_split_with(const struct router *r,
                         const char *utterance,
                         char segments[][ROUTER_MAX_SEGMENT],
                         size_t max_segments) {
    if (utterance == NULL || segments == NULL || max_segments == 0) {
        return 0;
    }
    bool too_long = false;
    size_t len = bounded_len(utterance, &too_long);
    struct toks ts;
    tokenize(utterance, len, &ts);

    size_t n_seg = 0;
    size_t seg_tok = 0;  /* first token of the current segment */
    size_t seg_byte = 0; /* first byte of the current segment */
    size_t i = 0;
    while (i < ts.n && n_seg + 1 < max_segments) {
        size_t run = separator_run(&ts, i);
        if (run == 0) {
            i++;
            continue;
        }
        size_t a = i;       /* first separator token */
        size_t b = i + run; /* first token after the run */
        size_t e = b;       /* end of the right side: the next run or the end */
        while (e < ts.n && separator_run(&ts, e) == 0) {
            e++;
        }
        bool cut = a > seg_tok && b < ts.n && left_is_command(r, &ts, seg_tok, a) &&
                   right_is_command(r, &ts, b, e);
        if (cut && run == 1 && is_word(&ts, a, "and") && and_is_protected(r, &ts, seg_tok, a)) {
            cut = false;
        }
        if (cut) {
            if (copy_segment(utterance, seg_byte, ts.t[a].start, segments[n_seg]) > 0) {
                n_seg++;
            }
            seg_tok = b;
            seg_byte = ts.t[b].start;
        }
        i = b;
    }
    if (copy_segment(utterance, seg_byte, len, segments[n_seg]) > 0) {
        n_seg++;
    }
    return n_seg;
}

size_t router_command_verb(const struct router *r, const char *segment) {
    if (segment == NULL) {
        return ROUTER_NO_VERB;
    }
    bool too_long = false;
    size_t len = bounded_len(segment, &too_long);
    struct toks ts;
    tokenize(segment, len, &ts);
    size_t i = 0;
    while (i < ts.n && ts.t[i].kind == WORDS_WORD &&
           match_any(&ts, i, ts.n, LEAD_INS, COUNT(LEAD_INS)) > 0 &&
           match_verb(r, &ts, i, ts.n) == 0) {
        i++;
    }
    if (i < ts.n && ts.t[i].kind == WORDS_WORD && match_verb(r, &ts, i, ts.n) > 0) {
        return ts.t[i].start;
    }
    return ROUTER_NO_VERB;
}

size_t
router_split(const char *utterance, char segments[][ROUTER_MAX_SEGMENT], size_t max_segments) {
    return router_split_with(NULL, utterance, segments, max_segments);
}
