/*
 * router_followup.c - follow-ups that name nothing and mean the last action (router.h:
 * router_followup()).
 *
 * "again", "one more", "a bit more", "the other way", "try again": the words name no tool and
 * no value, so the only thing they can mean is the last action, repeated or turned round. The
 * router says which of the three it is; the agent decides whether its last action allows it
 * (agent_followup.c).
 *
 * An utterance is a follow-up when, split at punctuation, one clause or more is exactly a
 * follow-up phrase (fillers dropped at both ends), those clauses agree, and every other clause
 * only comments ("someone's eyes were closed, another"): it starts with no command verb and
 * holds no digit and no word of the tool set.
 *
 * Invariants: no allocation; at most ROUTER_MAX_INPUT bytes are looked at.
 */
#include "router.h"
#include "router_impl.h"
#include "words.h"

#include <string.h>

/* The last action once more, as it was. */
static const char *const AGAIN_PHRASES[] = {
    "again",
    "do it again",
    "do that again",
    "do it once more",
    "do that once more",
    "once more",
    "one more",
    "one more time",
    "one more of those",
    "one more like that",
    "one more like this",
    "another",
    "another one",
    "another one like that",
    "another like that",
    "another like this",
    "another of those",
    "another of these",
    "same again",
    "same thing again",
    "the same again",
    "repeat",
    "repeat that",
    "repeat it",
    "repeat the last one",
    "try again",
    "try it again",
    "try that again",
    "try once more",
    "retry",
    "retry it",
    "retry that",
    "give it another go",
    "give it another try",
    "give it another shot",
    "give that another go",
    "give that another try",
    "give that another shot",
    "another shot",
    "one more shot",
    "have another go",
    "another go",
    "another try",
    "go again",
    "encore",
};

/* The last relative change once more, the same way. */
static const char *const MORE_PHRASES[] = {
    "more",          "a bit more",        "a little more",     "little more",
    "bit more",      "a touch more",      "a tad more",        "slightly more",
    "some more",     "a little bit more", "a lot more",        "much more",
    "even more",     "further",           "a bit further",     "a little further",
    "even further",  "keep going",        "more of that",      "a notch more",
    "one more step", "another step",      "one more notch",    "another notch",
    "same way",      "the same way",      "same direction",    "the same direction",
    "go on",         "a bit more still",  "a bit more please",
};

/* The last relative change the other way. */
static const char *const BACK_PHRASES[] = {
    "the other way",
    "other way",
    "the other way round",
    "the other way around",
    "other way round",
    "other way around",
    "the other direction",
    "other direction",
    "the opposite way",
    "opposite way",
    "the opposite direction",
    "opposite direction",
    "the opposite",
    "less",
    "a bit less",
    "a little less",
    "little less",
    "bit less",
    "a touch less",
    "a tad less",
    "slightly less",
    "a little bit less",
    "too much",
    "way too much",
    "too far",
    "way too far",
    "thats too much",
    "thats too far",
    "that is too much",
    "that is too far",
    "not so much",
    "not that much",
    "overshot",
};

/* "make it 10", "change that to 3", "try 5 instead", "10 then": words around one number. */
static const char *const NUM_LEADS[] = {
    "make it",
    "make that",
    "make it to",
    "set it to",
    "set that to",
    "set it at",
    "change it to",
    "change that to",
    "change to",
    "put it on",
    "put it at",
    "put it to",
    "turn it to",
    "go to",
    "go",
    "try",
    "how about",
    "what about",
    "lets do",
    "do",
    "bump it to",
    "drop it to",
    "take it to",
    "switch to",
    "down to",
    "up to",
    "turn it down to",
    "turn it up to",
    "bring it down to",
    "bring it up to",
    "bring it to",
    "lower it to",
    "raise it to",
};
static const char *const NUM_TAILS[] = {
    "then",    "instead",         "instead then",    "then please",       "is better",
    "is fine", "is plenty",       "is enough",       "is good",           "is ok",
    "is okay", "is perfect",      "would be better", "works better",      "should do",
    "will do", "is more like it", "would be fine",   "is better i think", "is better actually"};
/* A correction before a number makes it a follow-up: "no, 1.5", "actually 3", "sorry, 5". */
static const char *const CORRECTIONS[] = {"no",    "nope",   "nah",     "actually",
                                          "sorry", "oops",   "i meant", "i mean",
                                          "wait",  "rather", "no no",   "whoops"};

/* Whether words [lo, hi) are one number with the words around it that make it a follow-up;
 * `corrected`: a correction came before, so a bare number is one ("no, 1.5"). */
static bool number_clause(const struct toks *w, size_t lo, size_t hi, bool corrected) {
    size_t i = lo;
    for (size_t m;
         i < hi && (m = words_match_longest(w->t, hi, i, CORRECTIONS, COUNT(CORRECTIONS))) > 0;) {
        i += m;
        corrected = true;
    }
    size_t led = words_match_longest(w->t, hi, i, NUM_LEADS, COUNT(NUM_LEADS));
    bool lead = led > 0 || corrected;
    i += led;
    /* digits, a decimal point, and a unit stuck to them ("3x", "10s") */
    const char *tok = i < hi ? w->t[i].w : "";
    size_t digits = strspn(tok, "0123456789.");
    static const char *const STUCK[] = {"", "x", "s", "sec", "secs", "min", "mins", "m", "ev"};
    bool stuck = false;
    for (size_t k = 0; k < COUNT(STUCK) && !stuck; k++) {
        stuck = strcmp(tok + digits, STUCK[k]) == 0;
    }
    int said = 0;
    if (digits == 0 || strchr("0123456789", tok[0]) == NULL || !stuck) {
        /* a number in words: "seventy then", "make it twenty five"; "one" only after a lead
         * that sets ("make it one", "change that to one"): "try one" may mean a photo */
        const char *led_last = led > 0 ? w->t[i - 1].w : "";
        bool set_lead = strcmp(led_last, "to") == 0 || strcmp(led_last, "it") == 0 ||
                        strcmp(led_last, "that") == 0 || strcmp(led_last, "at") == 0;
        if (!words_number_value(tok, &said) || strcmp(tok, "hundred") == 0 ||
            (said == 1 && !set_lead)) {
            return false;
        }
        int ones = 0;
        if (said >= 20 && said % 10 == 0 && i + 1 < hi &&
            words_number_value(w->t[i + 1].w, &ones) && ones >= 1 && ones <= 9) {
            i++; /* "twenty five" */
        }
        if (i + 1 < hi && is_word(w, i + 1, "hundred")) {
            i++; /* "twelve hundred" */
        }
    }
    i++;
    static const char *const UNITS[] = {"seconds", "second", "secs", "sec", "s",       "minutes",
                                        "minute",  "mins",   "min",  "x",   "percent", "degrees",
                                        "degree",  "hours",  "hour", "ev",  "stops",   "stop"};
    i += words_match_longest(w->t, hi, i, UNITS, COUNT(UNITS));
    size_t tail = words_match_longest(w->t, hi, i, NUM_TAILS, COUNT(NUM_TAILS));
    if (lead && i < hi && is_word(w, i, "please")) {
        tail = 1; /* "make it 10 please"; "18 please" alone may answer a question */
    }
    return i + tail == hi && (lead || tail > 0);
}

/* Dropped at both ends of a clause. */
static const char *const FU_FILLERS[] = {
    "ok",         "okay",      "hmm",       "um",           "uh",         "oh",
    "and",        "now",       "yeah",      "yes",          "yep",        "ugh",
    "eh",         "nah",       "please",    "pipit",        "alright",    "right",
    "cool",       "great",     "nice",      "so",           "then",       "just",
    "ah",         "wow",       "lol",       "haha",         "hey",        "whoa",
    "oops",       "sorry",     "thanks",    "good",         "perfect",    "lovely",
    "can you",    "could you", "would you", "will you",     "lets",       "for me",
    "quick",      "quickly",   "actually",  "still",        "maybe",      "uhh",
    "hmmm",       "wait",      "for luck",  "just in case", "to be safe", "for good measure",
    "to be sure",
};

/* A clause's words [lo, hi) without fillers at either end; the last word always stays. ("no"
 * is no filler: "no more" stops.) */
static void drop_fillers(const struct toks *w, size_t *lo, size_t *hi) {
    size_t a = *lo, b = *hi;
    for (size_t m;
         a < b && (m = match_any(w, a, b, FU_FILLERS, COUNT(FU_FILLERS))) > 0 && a + m < b;) {
        a += m;
    }
    for (bool again = true; again && b > a;) {
        again = false;
        for (size_t k = 0; k < COUNT(FU_FILLERS) && !again; k++) {
            size_t nw = words_count(FU_FILLERS[k]);
            if (nw < b - a && match_phrase(w, b - nw, b, FU_FILLERS[k]) == nw) {
                b -= nw;
                again = true;
            }
        }
    }
    *lo = a;
    *hi = b;
}

/* The end of the range: "max it" after a setting. */
static const char *const MAX_PHRASES[] = {
    "max it",
    "max it out",
    "max",
    "maximum",
    "the max",
    "to the max",
    "the maximum",
    "to the maximum",
    "max that",
    "max that out",
    "as high as it goes",
    "as high as possible",
    "highest",
    "the highest",
    "full blast",
    "all the way up",
    "all the way in",
    "all the way back up",
    "all the way back in",
};
static const char *const MIN_PHRASES[] = {
    "min it",
    "min",
    "minimum",
    "the min",
    "to the min",
    "the minimum",
    "to the minimum",
    "as low as it goes",
    "as low as possible",
    "lowest",
    "the lowest",
    "all the way down",
    "all the way out",
    "all the way back down",
    "all the way back out",
};

/* The kind a clause's words [lo, hi) are exactly, or NONE. */
static enum router_followup clause_kind(const struct toks *w, size_t lo, size_t hi) {
    static const struct {
        const char *const *list;
        size_t n;
        enum router_followup kind;
    } KINDS[] = {
        {AGAIN_PHRASES, COUNT(AGAIN_PHRASES), ROUTER_FOLLOWUP_AGAIN},
        {MORE_PHRASES, COUNT(MORE_PHRASES), ROUTER_FOLLOWUP_MORE},
        {BACK_PHRASES, COUNT(BACK_PHRASES), ROUTER_FOLLOWUP_BACK},
        {MAX_PHRASES, COUNT(MAX_PHRASES), ROUTER_FOLLOWUP_MAX},
        {MIN_PHRASES, COUNT(MIN_PHRASES), ROUTER_FOLLOWUP_MIN},
    };
    for (size_t k = 0; k < COUNT(KINDS); k++) {
        if (words_match_longest(w->t, hi, lo, KINDS[k].list, KINDS[k].n) == hi - lo) {
            return KINDS[k].kind;
        }
    }
    return ROUTER_FOLLOWUP_NONE;
}

/* A clause that only comments: no command verb at its start (after lead-ins), no digit, no
 * word of the tool set. */
static bool only_comments(const struct router *r, const struct toks *w, size_t lo, size_t hi) {
    size_t i = lo;
    for (size_t m; i < hi && (m = match_any(w, i, hi, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS)) > 0;) {
        i += m;
    }
    if (i < hi && router_match_verb(r, w, i, hi) > 0) {
        return false;
    }
    for (size_t k = lo; k < hi; k++) {
        if (strpbrk(w->t[k].w, "0123456789") != NULL || router_tool_word_at(r, w->t, hi, k) > 0) {
            return false;
        }
    }
    return true;
}

enum router_followup router_followup(const struct router *r, const char *utterance) {
    if (utterance == NULL) {
        return ROUTER_FOLLOWUP_NONE;
    }
    bool too_long = false;
    size_t len = bounded_len(utterance, &too_long);
    if (too_long) {
        return ROUTER_FOLLOWUP_NONE;
    }
    struct toks ts, w;
    tokenize(utterance, len, &ts);
    enum router_followup kind = ROUTER_FOLLOWUP_NONE;
    bool corrected = false; /* a clause that only corrects came before ("no, 1.5") */
    size_t start = 0;
    for (size_t i = 0; i <= ts.n; i++) {
        if (i < ts.n && ts.t[i].kind == WORDS_WORD) {
            continue;
        }
        /* a clause: the words of tokens [start, i) */
        w.n = 0;
        w.len = ts.len;
        for (size_t k = start; k < i; k++) {
            w.t[w.n++] = ts.t[k];
        }
        start = i + 1;
        size_t lo = 0, hi = w.n;
        drop_fillers(&w, &lo, &hi);
        if (lo == hi) {
            continue; /* "ok", "hmm" */
        }
        enum router_followup c = clause_kind(&w, lo, hi);
        if (c == ROUTER_FOLLOWUP_NONE &&
            (number_clause(&w, lo, hi, corrected) || number_clause(&w, 0, w.n, corrected) ||
             number_clause(&w, lo, w.n, corrected))) { /* "ok seventy then": "then" a tail */
            c = ROUTER_FOLLOWUP_NUMBER;
        }
        corrected =
            corrected || words_match_longest(w.t, w.n, 0, CORRECTIONS, COUNT(CORRECTIONS)) == w.n;
        if (c == ROUTER_FOLLOWUP_NONE) {
            if (!only_comments(r, &w, lo, hi)) {
                return ROUTER_FOLLOWUP_NONE;
            }
        } else if ((kind == ROUTER_FOLLOWUP_BACK && c == ROUTER_FOLLOWUP_NUMBER) ||
                   (kind == ROUTER_FOLLOWUP_NUMBER && c == ROUTER_FOLLOWUP_BACK)) {
            kind = ROUTER_FOLLOWUP_NUMBER; /* "too much, down to 3": the number says how far */
        } else if (kind != ROUTER_FOLLOWUP_NONE && kind != c) {
            return ROUTER_FOLLOWUP_NONE; /* "too much, a bit more" */
        } else {
            kind = c;
        }
    }
    return kind;
}
