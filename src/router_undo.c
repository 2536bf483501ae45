/*
 * router_undo.c - undo detection, with word lists only (router.h: router_undo_count(),
 * router_undo_followup(), router_is_undo()).
 *
 * Drop politeness fillers at both ends; what is left must be exactly one undo phrase. Anything
 * more ("undo the timer") is another intent.
 *
 * Invariants: no allocation; at most ROUTER_MAX_INPUT bytes are looked at.
 */
#include "router.h"
#include "router_impl.h"
#include "words.h"

#include <stdint.h>
#include <string.h>

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
static const char *const OBJECT_VERBS[] = {
    "reverse", "cancel",    "scrap", "scratch", "drop",      "forget",
    "restore", "take back", "ditch", "lose",    "back out",  "bring back",
    "reset",   "rewind",    "scrub", "nix",     "get rid of"};

/* Verbs of OBJECT_VERBS that take "that"/"this" but not "it": "cancel it" may mean the timer
 * or the recording; "forget it" is a retraction of its own (RETRACT_PHRASES). */
static const char *const NO_IT_VERBS[] = {"cancel", "scrap", "scratch",   "drop",
                                          "forget", "ditch", "reset",     "rewind",
                                          "scrub",  "nix",   "get rid of"};

/* Pronouns that point at the last action. */
static const char *const UNDO_PRONOUNS[] = {"that", "this", "it"};

/* Determiners and adjectives of "the last change", "my previous command". */
static const char *const UNDO_DETS[] = {"the", "my", "your", "that", "this"};
static const char *const UNDO_ADJS[] = {"most recent", "last",    "previous", "latest", "recent",
                                        "old",         "earlier", "original", "prior",  "former"};

/* Nouns for an action: "the last change", "that one", "the previous settings". */
static const char *const UNDO_NOUNS[] = {
    "one",      "change", "changes",    "action", "step", "thing",   "command", "setting",
    "settings", "edit",   "adjustment", "move",   "ones", "actions", "steps",   "things",
    "commands", "edits",  "value",      "values", "bit",  "look",    "version",
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
    "whatever you just did",
    "whatever you did",
    "whatever you just changed",
    "whatever you changed",
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
    "leave it as it was",
    "leave it how it was",
    "keep it as it was",
    "keep it how it was",
    "go back",
    "back to before",
    "return to before",
    "revert to before",
};

/* "go back to ...", "back to ...", "return to ...", "revert to ...": the earlier state. */
static const char *const RESTORE_LEADS[] = {
    "go back to",     "back to",         "return to",       "revert to",   "return it to",
    "return that to", "restore it to",   "restore that to", "reset it to", "reset that to",
    "get it back to", "take it back to", "bring it back to"};
static const char *const EARLIER_STATE[] = {
    "how it was",
    "the way it was",
    "what it was",
    "how it was before",
    "what it was before",
    "the way it was before",
    "before",
    "how things were",
    "the old one",
    "the old settings",
    "the old setting",
    "the settings before",
    "where it was",
    "where we were",
    "what i had",
    "what we had",
    "what i had before",
    "what we had before",
    "how i had it",
    "how we had it",
    "the way i had it",
    "the way we had it",
    "how it was set",
    "what it was set to",
    "as before",
    "like before",
    "as it was",
    "like it was",
    "as it was before",
    "like it was before",
    "how they were",
    "the way they were",
    "as they were",
    "like they were",
    "what they were",
    "how they were before",
    "the way they were before",
    "what it used to be",
    "how it used to be",
    "the way it used to be",
    "like it used to be",
    "what they used to be",
    "how they used to be",
    "like a second ago",
    "like one second ago",
    "like a moment ago",
    "like a minute ago",
    "as it was a second ago",
    "like it was a second ago",
};

/* Retractions: the person takes back what they said. */
static const char *const RETRACT_PHRASES[] = {
    "not do that",
    "not do this",
    "lets not do that",
    "lets not",
    "dont do that",
    "do not do that",
    "i dont want that",
    "i dont like that",
    "i dont like it",
    "not like that",
    "never mind",
    "nevermind",
    "never mind that",
    "nevermind that",
    "scratch that",
    "take that back",
    "take it back",
    "forget it",
    "forget i said that",
    "forget that",
    "i take that back",
    "i take it back",
    "ctrl z",
    "control z",
    "hit undo",
    "press undo",
    "i didnt mean that",
    "i didnt mean it",
    "i didnt mean to",
    "didnt mean that",
    "didnt mean to",
    "did not mean that",
    "i changed my mind",
    "ive changed my mind",
    "changed my mind",
    "not what i meant",
    "thats not what i meant",
    "that is not what i meant",
    "i didnt ask for that",
    "i never asked for that",
    "thats not what i asked",
    "thats not what i wanted",
    "that was a mistake",
    "that one was a mistake",
    "that last one was a mistake",
    "that was an accident",
    "as you were",
    "as we were",
    "forget i asked",
    "forget i asked that",
    "forget i asked for that",
    "forget i said it",
    "i didnt mean that one",
    "didnt mean that one",
    "i liked it better before",
    "i liked it better",
    "liked it better before",
    "i liked it how it was",
    "i liked it the way it was",
    "i preferred it before",
    "i preferred it how it was",
    "i preferred it the way it was",
    "it was better before",
    "that was better before",
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
    "hm",
    "gimme",
    "so",
    "id rather",
    "i would rather",
    "rather",
    "love",
    "dear",
    "mate",
    "buddy",
    "pal",
    "honey",
    "darling",
    "sweetie",
    "dude",
    "bro",
    "ach",
    "argh",
    "gah",
    "bah",
    "hmmm",
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
    "hang on",
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
    "pls",
    "a second ago",
    "a moment ago",
    "a minute ago",
    "just now",
    "on second thoughts",
    "erm",
    "er",
    "eh",
    "can we have",
    "can i have",
    "can i get",
    "can we get",
    "give me",
    "id like",
    "i want",
};

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
    int said = 0;
    if (words_number_value(s, &said) && said <= 10) { /* one to ten in words */
        *value = (int32_t)said;
        return 1;
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
    if (noun == 0 && det > 0) {
        /* "the heating change", "that colour change", "the last zoom setting": one or two
         * words naming what changed, then a word for a change (not "one": "the timer one") */
        static const char *const CHANGE_NOUNS[] = {"change",     "changes",    "setting",
                                                   "settings",   "edit",       "edits",
                                                   "adjustment", "adjustments"};
        for (size_t skip = 1; skip <= 2 && noun == 0 && j + skip < end; skip++) {
            if (match_longest(w, j + skip, end, CHANGE_NOUNS, COUNT(CHANGE_NOUNS)) == 1 &&
                j + skip + 1 == end) {
                noun = skip + 1;
            }
        }
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

/* Adjectives of the state before the last action: "the previous setting", "the old look". */
static const char *const FORMER[] = {"previous", "old", "earlier", "original", "former"};

/* "switch that back", "flip it back to what it was", "put them back the way they were",
 * "return them to how they were", "put things as they were": a verb of moving, what was done,
 * then "back" or an earlier state (after "to" or not), and at most "too" after it ("turn it back
 * on", "set it back to 2" ask for a value). The number of actions, or 0. */
static int32_t back_phrase(const struct toks *w, size_t lo, size_t hi) {
    static const char *const VERBS[] = {
        "switch", "set",  "turn",   "change", "put",     "flip",  "move",  "bring", "get", "roll",
        "swap",   "make", "toggle", "return", "restore", "reset", "leave", "keep",  "have"};
    static const char *const WHAT[] = {"it", "that", "this", "them", "those", "these"};
    static const char *const ALL[] = {"everything", "it all", "all of it", "things", "all"};
    size_t v = match_longest(w, lo, hi, VERBS, COUNT(VERBS));
    if (v == 0) {
        return 0;
    }
    size_t at = lo + v;
    size_t all = match_longest(w, at, hi, ALL, COUNT(ALL));
    size_t what = all > 0 ? all : match_longest(w, at, hi, WHAT, COUNT(WHAT));
    at += what;
    size_t back = is_word(w, at, "back") ? 1 : 0;
    if (what == 0) {
        return 0;
    }
    at += back;
    size_t earlier =
        match_longest(w, at + is_word(w, at, "to"), hi, EARLIER_STATE, COUNT(EARLIER_STATE));
    if (back == 0 && (earlier < 2 || is_word(w, at + is_word(w, at, "to"), "before"))) {
        return 0; /* "keep it", "return it to before" (a restore lead's) */
    }
    at += earlier > 0 ? earlier + is_word(w, at, "to") : 0;
    at += match_longest(w, at, hi, UNDO_TOO, COUNT(UNDO_TOO));
    return at != hi ? 0 : all > 0 ? ROUTER_UNDO_ALL : 1;
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
    int32_t back = back_phrase(w, lo, hi);
    if (back > 0) {
        return back;
    }
    /* the earlier state alone: "the way it was before", "what we had", "previous setting",
     * "the old look" (not "before" alone) */
    if (n >= 2 && match_longest(w, lo, hi, EARLIER_STATE, COUNT(EARLIER_STATE)) == n) {
        return 1;
    }
    size_t det = match_longest(w, lo, hi, UNDO_DETS, COUNT(UNDO_DETS));
    if (lo + det < hi && match_any(w, lo + det, hi, FORMER, COUNT(FORMER)) == 1 &&
        lo + det + 1 + match_longest(w, lo + det + 1, hi, UNDO_NOUNS, COUNT(UNDO_NOUNS)) == hi &&
        lo + det + 1 < hi) {
        return 1;
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
        if (rest == 0 && is_word(w, lo + lead, "the")) {
            /* "back to the colour it was", "back to the zoom it was before": one or two words
             * naming what, then "it was" [before] and nothing else */
            for (size_t k = 2; k <= 3 && rest == 0; k++) {
                size_t at = lo + lead + k;
                if (at + 1 < hi + 0 && is_word(w, at, "it") && is_word(w, at + 1, "was") &&
                    (at + 2 == hi || (at + 3 == hi && is_word(w, at + 2, "before")))) {
                    rest = hi - (lo + lead);
                }
            }
        }
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
    if (j + 1 < hi && (is_word(w, j, "just") || is_word(w, j, "only"))) {
        j++; /* "cancel just that latest change" */
    }
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

/* Words of a clause beside an undo request that only says why ("take that back, portrait was
 * better", "ugh, too dark, go back"). */
static const char *const COMMENTARY[] = {
    "was",    "were",   "looked",    "seemed", "looks",    "better",    "worse", "fine",
    "too",    "wrong",  "ugh",       "oops",   "mistake",  "terrible",  "awful", "ugly",
    "hate",   "nope",   "like",      "liked",  "prefer",   "preferred", "old",   "previous",
    "missed", "bad",    "hmm",       "meh",    "need",     "needed",    "still", "yet",
    "wanted", "meant",  "after all", "dont",   "shouldnt", "thats",     "its",   "came",
    "went",   "turned", "ended",     "weird",  "strange",  "odd",       "is",    "are",
    "isnt",   "arent",  "feels",     "got",
};

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
    "the one before it",
    "the one before this",
    "the one before that one",
    "the change before that",
    "the change before it",
    "the previous one",
    "that one before it",
    "that one before that",
    "the first one",
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
    for (;;) { /* leading fillers; a retraction left whole stays ("no, I didn't mean that") */
        if (!followup &&
            match_longest(&w, lo, hi, RETRACT_PHRASES, COUNT(RETRACT_PHRASES)) == hi - lo) {
            break;
        }
        size_t m = match_longest(&w, lo, hi, FILLERS, COUNT(FILLERS));
        if (m == 0 && followup) { /* "and that too" */
            m = match_any(&w, lo, hi, ROUTER_CONJUNCTIONS, ROUTER_N_CONJUNCTIONS);
        }
        if (m == 0) {
            break;
        }
        lo += m;
    }
    for (bool again = true; again && hi > lo;) { /* trailing fillers */
        again = false;
        if (!followup &&
            match_longest(&w, lo, hi, RETRACT_PHRASES, COUNT(RETRACT_PHRASES)) == hi - lo) {
            break;
        }
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
    if (followup) { /* "the one before it as well" */
        for (size_t k = 0; match_longest(&w, lo, hi, FOLLOWUPS, COUNT(FOLLOWUPS)) != hi - lo &&
                           k < COUNT(UNDO_TOO);
             k++) {
            size_t nw = phrase_words(UNDO_TOO[k]);
            if (hi - lo > nw && match_phrase(&w, hi - nw, hi, UNDO_TOO[k]) == nw) {
                hi -= nw;
                break;
            }
        }
        /* "and reverse the one before that": a verb of undo before it */
        size_t verb = match_longest(&w, lo, hi, UNDO_VERBS, COUNT(UNDO_VERBS));
        verb = verb > 0 ? verb : match_longest(&w, lo, hi, OBJECT_VERBS, COUNT(OBJECT_VERBS));
        return hi - lo > verb && (match_longest(&w, lo + verb, hi, FOLLOWUPS, COUNT(FOLLOWUPS)) ==
                                  hi - lo - verb)
                   ? 1
                   : 0;
    }
    return undo_words(&w, lo, hi);
}

/* Tokens [from, to) only say why: a word of COMMENTARY, and no clause that starts with a
 * command verb ("..., the flash was better, take a photo" has one). */
static bool is_commentary(const struct toks *ts, size_t from, size_t to) {
    bool why = false;
    for (size_t i = from; i < to; i++) {
        if (ts->t[i].kind != WORDS_WORD) {
            continue;
        }
        bool clause_start =
            i == from || ts->t[i - 1].kind == WORDS_PUNCT ||
            match_any(ts, i - 1, to, ROUTER_CONJUNCTIONS, ROUTER_N_CONJUNCTIONS) > 0;
        if (clause_start && router_match_verb(NULL, ts, i, to) > 0) {
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
    /* an undo request and a clause that only says why, in either order, at any separator:
     * "take that back, portrait was better", "the zoom was fine, undo it", "nah, revert that,
     * the exposure was fine" */
    for (size_t i = 0; i < ts.n && n == 0; i++) {
        if (ts.t[i].kind != WORDS_PUNCT || (i > 0 && ts.t[i - 1].kind == WORDS_PUNCT)) {
            continue;
        }
        size_t after = i;
        while (after < ts.n && ts.t[after].kind == WORDS_PUNCT) {
            after++;
        }
        if (is_commentary(&ts, after, ts.n)) {
            n = undo_tokens(&ts, 0, i, false);
        }
        if (n == 0 && is_commentary(&ts, 0, i)) {
            n = undo_tokens(&ts, after, ts.n, false);
        }
    }
    return n;
}

/* A phrase of 1 .. ROUTER_UNDO_NAMED_WORDS words at token i, up to `end` or to `stop` (a word
 * that ends it: "back", "to"); its last token + 1, or 0. */
static size_t named_phrase(const struct toks *ts, size_t i, size_t end, bool stop_back) {
    size_t words = 0, k = i;
    for (; k < end && ts->t[k].kind == WORDS_WORD; k++) {
        if (stop_back &&
            (is_word(ts, k, "back") || is_word(ts, k, "to") ||
             match_longest(ts, k, end, EARLIER_STATE, COUNT(EARLIER_STATE)) == end - k)) {
            break; /* "have the exposure as it was" */
        }
        words++;
    }
    return words >= 1 && words <= ROUTER_UNDO_NAMED_WORDS ? k : 0;
}

bool router_undo_named(const struct router *r,
                       const char *utterance,
                       bool after_undo,
                       size_t *at,
                       size_t *len) {
    struct toks ts;
    *at = 0;
    *len = 0;
    if (!undo_tokenize(utterance, &ts) || router_undo_count(utterance) > 0) {
        return false;
    }
    size_t i = 0;
    /* a clause before that only says why: "eh ugly, previous colour please" */
    for (size_t k = ts.n; k-- > 1;) {
        if (ts.t[k].kind == WORDS_PUNCT && ts.t[k - 1].kind == WORDS_WORD &&
            is_commentary(&ts, 0, k)) {
            i = k;
            break;
        }
    }
    for (size_t m; i < ts.n; i += m) { /* leading fillers and punctuation */
        m = ts.t[i].kind == WORDS_PUNCT ? 1 : match_longest(&ts, i, ts.n, FILLERS, COUNT(FILLERS));
        if (m == 0) {
            break;
        }
    }
    size_t n = ts.n; /* trailing closers and punctuation: "..., please", "pls" */
    static const char *const CLOSERS[] = {
        "please",       "pls",          "thanks",       "now",      "for me",
        "a second ago", "a minute ago", "a moment ago", "just now", "earlier"};
    for (size_t m = 1; m > 0 && n > i;) {
        m = ts.t[n - 1].kind == WORDS_PUNCT ? 1 : 0;
        for (size_t k = 0; m == 0 && k < COUNT(CLOSERS); k++) {
            size_t nw = phrase_words(CLOSERS[k]);
            m = n - i > nw && match_phrase(&ts, n - nw, n, CLOSERS[k]) == nw ? nw : 0;
        }
        n -= m;
    }
    /* right after an undo: "and the alarm too", "and reverse the directions as well" */
    bool more = false;
    if (after_undo && i < n && match_any(&ts, i, n, ROUTER_CONJUNCTIONS, ROUTER_N_CONJUNCTIONS)) {
        i++;
        more = true;
    }
    for (size_t k = 0; after_undo && k < COUNT(UNDO_TOO); k++) {
        size_t nw = phrase_words(UNDO_TOO[k]);
        if (n - i > nw && match_phrase(&ts, n - nw, n, UNDO_TOO[k]) == nw) {
            n -= nw;
            more = true;
            break;
        }
    }
    if (more && match_longest(&ts, i, n, FOLLOWUPS, COUNT(FOLLOWUPS)) == n - i) {
        return false; /* "and the one before it": one more, router_undo_followup()'s */
    }
    size_t verb = i < n ? match_longest(&ts, i, n, UNDO_VERBS, COUNT(UNDO_VERBS)) : 0;
    if (verb == 0 && more) {
        verb = match_longest(&ts, i, n, OBJECT_VERBS, COUNT(OBJECT_VERBS));
    }
    size_t from = 0, to = 0;
    /* "the blinds were better before": the thing, then how it was better before */
    static const char *const BETTER[] = {
        "was better before",    "were better before", "was fine before",
        "were fine before",     "was better earlier", "were better earlier",
        "looked better before", "was nicer before",   "were nicer before"};
    size_t dets = match_longest(&ts, i, n, UNDO_DETS, COUNT(UNDO_DETS));
    for (size_t k = i + dets + 1; verb == 0 && dets > 0 && k < n && to == 0; k++) {
        if (match_longest(&ts, k, n, BETTER, COUNT(BETTER)) == n - k &&
            named_phrase(&ts, i + dets, k, false) == k) {
            from = i;
            to = k;
        }
    }
    if (to > 0) {
        /* found */
    } else if (verb == 0 && more && dets > 0) {
        from = i; /* "and the alarm too": no verb, the phrase */
        to = named_phrase(&ts, i + match_longest(&ts, i, n, UNDO_DETS, COUNT(UNDO_DETS)), n,
                          false) == n
                 ? n
                 : 0;
    } else if (verb > 0) { /* "undo the blinds": the phrase as said, with its "the", to the end */
        i += verb;
        from = i;
        i += match_longest(&ts, i, n, UNDO_DETS, COUNT(UNDO_DETS));
        to = i < n ? named_phrase(&ts, i, n, false) == n ? n : 0 : 0;
    } else {
        /* "restore the flash to what it was", "put the zoom back": a verb of restoring, the
         * phrase, then "back" or "to" and an earlier state; "the previous camera", "old
         * quality": an adjective of the earlier state and the phrase, when the tool set has no
         * such word of its own ("previous track") */
        static const char *const RESTORE[] = {"restore", "reset", "put",   "set",    "switch",
                                              "change",  "turn",  "bring", "return", "flip",
                                              "have",    "make",  "keep",  "leave",  "get"};
        size_t rv = match_longest(&ts, i, n, RESTORE, COUNT(RESTORE));
        size_t det = match_longest(&ts, i + rv, n, UNDO_DETS, COUNT(UNDO_DETS));
        size_t np = i + rv + det;
        if (rv > 0 && (det > 0 || is_word(&ts, i, "restore"))) {
            size_t k = named_phrase(&ts, np, n, true);
            size_t rest = k > 0 && is_word(&ts, k, "back") ? 1 : 0;
            size_t lead = k > 0 && is_word(&ts, k + rest, "to") ? 1 : 0;
            size_t earlier =
                k > 0 ? match_longest(&ts, k + rest + lead, n, EARLIER_STATE, COUNT(EARLIER_STATE))
                      : 0;
            if (k > 0 && (rest > 0 || earlier > 0) && (lead == 0 || earlier > 0) &&
                k + rest + lead + earlier == n) {
                from = i + rv;
                to = k;
            }
        } else if (rv == 0 && i + det < n &&
                   match_any(&ts, i + det, n, FORMER, COUNT(FORMER)) == 1 &&
                   (r == NULL || !router_has_tool_word(r, ts.t[i + det].w))) {
            if (named_phrase(&ts, i + det + 1, n, false) == n) {
                from = i + det + 1;
                to = n;
            }
        }
    }
    if (to == 0 || from >= to) {
        return false;
    }
    *at = ts.t[from].start;
    *len = ts.t[to - 1].end - ts.t[from].start;
    return true;
}

int32_t router_undo_followup(const char *utterance) {
    struct toks ts;
    if (!undo_tokenize(utterance, &ts)) {
        return 0;
    }
    return undo_tokens(&ts, 0, ts.n, true) > 0 || undo_tokens(&ts, 0, ts.n, false) > 0 ? 1 : 0;
}

bool router_undo_says_earlier(const char *text) {
    struct toks ts;
    if (!undo_tokenize(text, &ts)) {
        return false;
    }
    for (size_t i = 0; i < ts.n; i++) {
        size_t m = match_longest(&ts, i, ts.n, EARLIER_STATE, COUNT(EARLIER_STATE));
        if (m >= 2) {
            return true;
        }
    }
    return false;
}

bool router_undo_retraction(const char *utterance) {
    struct toks ts;
    if (!undo_tokenize(utterance, &ts)) {
        return false;
    }
    struct toks w; /* words only */
    w.n = 0;
    w.len = ts.len;
    for (size_t i = 0; i < ts.n; i++) {
        if (ts.t[i].kind == WORDS_WORD) {
            w.t[w.n++] = ts.t[i];
        }
    }
    static const char *const POLITE[] = {"please", "ok", "okay", "oh", "ah", "um", "hmm", "pipit"};
    size_t lo = 0, hi = w.n;
    while (lo < hi && match_any(&w, lo, hi, POLITE, COUNT(POLITE)) == 1) {
        lo++;
    }
    while (hi > lo && match_any(&w, hi - 1, hi, POLITE, COUNT(POLITE)) == 1) {
        hi--;
    }
    return hi > lo && match_longest(&w, lo, hi, RETRACT_PHRASES, COUNT(RETRACT_PHRASES)) == hi - lo;
}

bool router_is_undo(const char *utterance) {
    return router_undo_count(utterance) > 0;
}

/* Words without which no phrasing asks for a reversal (router_undo_signal()). */
static const char *const SIGNALS[] = {
    "undo",     "undid",   "revert", "reverse", "back",     "before",  "previous", "earlier",
    "original", "restore", "was",    "were",    "wrong",    "mistake", "oops",     "no",
    "nope",     "nah",     "not",    "dont",    "didnt",    "never",   "forget",   "scrap",
    "scratch",  "ditch",   "drop",   "cancel",  "rollback", "roll",    "last",     "ctrl",
    "return",   "ugh",     "hate",   "instead", "other",    "again",   "too",      "unwind",
};

/* Words that point back at something done ("lose that one", "get rid of it"). */
static const char *const ANAPHORS[] = {"that", "this", "it", "those", "these", "one", "thing"};

/* Whether `text` has a word (or phrase) of `list`. */
static bool has_word_of(const char *text, const char *const *list, size_t n) {
    struct toks ts;
    if (!undo_tokenize(text, &ts)) {
        return false;
    }
    for (size_t i = 0; i < ts.n; i++) {
        if (ts.t[i].kind == WORDS_WORD && match_any(&ts, i, ts.n, list, n) > 0) {
            return true;
        }
    }
    return false;
}

bool router_undo_verb(const char *text) {
    return has_word_of(text, UNDO_VERBS, COUNT(UNDO_VERBS)) ||
           has_word_of(text, OBJECT_VERBS, COUNT(OBJECT_VERBS));
}

bool router_undo_anaphor(const char *text) {
    return has_word_of(text, ANAPHORS, COUNT(ANAPHORS));
}

bool router_undo_signal(const char *text) {
    static const char *const OWNERS[] = {"my", "the", "your", "his", "her", "our", "their", "a"};
    struct toks ts;
    if (!undo_tokenize(text, &ts)) {
        return false;
    }
    for (size_t i = 0; i < ts.n; i++) {
        if (ts.t[i].kind != WORDS_WORD || match_any(&ts, i, ts.n, SIGNALS, COUNT(SIGNALS)) == 0) {
            continue;
        }
        if (strcmp(ts.t[i].w, "back") == 0 && i > 0 && ts.t[i - 1].kind == WORDS_WORD &&
            match_any(&ts, i - 1, i, OWNERS, COUNT(OWNERS)) > 0) {
            continue; /* "massage my back", "the back camera": a thing, not a reversal */
        }
        /* "the wifi's back", "i'm back", "they came back": something returned, not a reversal */
        static const char *const RETURNED[] = {"is",   "are", "im", "were", "was", "came",
                                               "come", "got", "be", "been", "its"};
        const char *prev = i > 0 ? text + ts.t[i - 1].end : NULL;
        bool apostrophe_s = prev != NULL && ts.t[i - 1].end >= 2 && prev[-1] == 's' &&
                            (prev[-2] == '\'' ||
                             (ts.t[i - 1].end >= 4 && (unsigned char)prev[-2] == 0x99 &&
                              (unsigned char)prev[-3] == 0x80 && (unsigned char)prev[-4] == 0xe2));
        if (strcmp(ts.t[i].w, "back") == 0 && i > 0 && ts.t[i - 1].kind == WORDS_WORD &&
            (apostrophe_s || match_any(&ts, i - 1, i, RETURNED, COUNT(RETURNED)) > 0)) {
            continue;
        }
        return true;
    }
    return false;
}
