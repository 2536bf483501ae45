/*
 * router_split.c - compound-utterance segmentation, with word lists only (router.h:
 * router_split_with(), router_split(), router_command_verb()).
 *
 * Split: a separator run is a maximal run of separator punctuation and
 * conjunctions ("and", "then", "also", "plus", "afterwards", "after that").
 * The utterance is cut at a run when the text since the last cut and the text
 * up to the next run each start with a verb (after lead-ins) or hold a keyword, unless the run is a
 * lone "and" inside a fixed pair ("black and white", "between 3 and 5", ...) or the right side
 * switches what a left side without a verb named ("the grid, switch it on").
 *
 * Invariants: no allocation; every write into a caller's buffer is bounded by
 * ROUTER_MAX_SEGMENT; a cut never splits a UTF-8 character.
 */
#include "router.h"
#include "router_impl.h"
#include "utf8.h"
#include "words.h"

#include <string.h>

/* ============================================================================
 * word lists */

/* A left side that starts with one of these takes something back or negates it
 * ("never mind the flash, take a photo", "don't use the flash, just take a
 * photo"): it is not a command of its own, so the utterance is not cut there
 * and the model sees it whole. */
static const char *const RETRACTIONS[] = {
    "never mind", "nevermind", "forget", "dont", "do not", "not", "without",
};

/* A right side with no verb at its start and one of these after its first word describes
 * ("open a ticket, wifi in room 4 is slow"). */
static const char *const COPULAS[] = {"is",    "are",   "was",    "were",  "isnt",
                                      "arent", "wasnt", "werent", "seems", "looks"};

/* A situation (situation_at()): words before the subject, the subjects as the
 * tokenizer writes them (apostrophes dropped: "i'll" -> "ill"), and what follows a subject in a
 * request or a correction. */
static const char *const SITUATION_LEADS[] = {"and",   "so", "because", "cause", "cos",
                                              "since", "as", "but",     "while", "then",
                                              "oh",    "ok", "okay",    "well"};
static const char *const SUBJECTS[] = {"i",      "im",     "ill",   "ive",      "id",       "we",
                                       "weve",   "he",     "she",   "hes",      "shes",     "they",
                                       "theyre", "theyve", "youre", "everyone", "everybody"};
static const char *const ASKS[] = {"want",   "wanna", "need", "needs", "like",   "would",
                                   "prefer", "meant", "mean", "said",  "asked",  "wish",
                                   "hope",   "gotta", "have", "must",  "should", "rather",
                                   "can",    "could", "dont", "do"};

/* A lone "and" between these words is part of one phrase, never a cut. */
static const char *const AND_PAIRS[][2] = {
    {"black", "white"}, {"white", "black"}, {"rock", "roll"},  {"salt", "pepper"},
    {"in", "out"},      {"out", "in"},      {"back", "forth"}, {"up", "down"},
    {"down", "up"},     {"on", "off"},      {"off", "on"},     {"front", "back"},
    {"back", "front"},  {"left", "right"},  {"right", "left"}, {"bread", "butter"},
    {"more", "more"},   {"again", "again"}, {"over", "over"},  {"slow", "steady"},
    {"now", "then"},    {"light", "dark"},  {"dark", "light"}, {"near", "far"},
};

/* ============================================================================
 * segmentation */

/* Length of the separator run starting at token i (0: no run there). */
static size_t separator_run(const struct toks *ts, size_t i) {
    size_t j = i;
    while (j < ts->n) {
        if (ts->t[j].kind == WORDS_PUNCT) {
            j++;
        } else if (match_any(ts, j, ts->n, ROUTER_CONJUNCTIONS, ROUTER_N_CONJUNCTIONS) > 0) {
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
    int said = 0;
    return is_digit((unsigned char)w[0]) || strcmp(w, "half") == 0 ||
           (words_number_value(w, &said) && said >= 1 && said <= 10);
}

/* A keyword at token i that counts on a side: not the unit of the number before it ("4
 * minutes", "like 20 percent", "21 degrees" are an argument's value, not a thing to act on). */
static size_t side_keyword(const struct router *r, const struct toks *ts, size_t i, size_t end) {
    size_t m = router_match_keyword(r, ts, i, end);
    if (m == 1 && i > 0 && ts->t[i - 1].kind == WORDS_WORD && is_number_word(ts->t[i - 1].w) &&
        !router_is_numeric_keyword(r, ts->t[i].w)) {
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
    if (router_is_pair(r, prev, next)) {
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
    if (router_match_verb(r, ts, a + 1, ts->n) > 0) {
        return false;
    }
    for (size_t k = a; k > seg_start && a - k < 4; k--) {
        if (is_word(ts, k - 1, "between")) {
            return true;
        }
    }
    return false;
}

/* Whether tokens [b, e) tell the person's situation rather than ask: after "and", "so",
 * "because", ... a subject pronoun ("i'll prop the phone on my pack", "we're heading out",
 * "she's asleep") with no request word within three words ("i want", "i'd like", "we need",
 * "i meant"). */
static bool situation_at(const struct toks *ts, size_t b, size_t e) {
    size_t s = b;
    while (s < e && match_any(ts, s, e, SITUATION_LEADS, COUNT(SITUATION_LEADS)) > 0) {
        s++;
    }
    if (s + 1 >= e || match_any(ts, s, e, SUBJECTS, COUNT(SUBJECTS)) != 1) {
        return false;
    }
    for (size_t i = s + 1; i < e && i <= s + 3; i++) {
        if (ts->t[i].kind == WORDS_WORD && match_any(ts, i, e, ASKS, COUNT(ASKS)) > 0) {
            return false;
        }
    }
    return true;
}

static bool left_is_command(const struct router *r, const struct toks *ts, size_t b, size_t e) {
    size_t s = b;
    while (s < e && match_any(ts, s, e, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS) > 0) {
        s++;
    }
    if (match_any(ts, s, e, RETRACTIONS, COUNT(RETRACTIONS)) > 0 ||
        match_any(ts, s, e, ROUTER_STATEMENTS, ROUTER_N_STATEMENTS) > 0 || situation_at(ts, b, e)) {
        return false; /* "i'll hold the camera steady, take the photo": one step */
    }
    if (s < e && router_match_verb(r, ts, s, e) > 0) {
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
    while (i < e && match_any(ts, i, e, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS) > 0) {
        i++;
    }
    if (match_any(ts, i, e, ROUTER_STATEMENTS, ROUTER_N_STATEMENTS) > 0 || situation_at(ts, b, e)) {
        return false; /* "zoom out, I'm too close", "grid on, i frame with thirds" */
    }
    if (i < e && router_match_verb(r, ts, i, e) > 0) {
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

/* Whether token i is a number: digits, "five", "half", or a number shape of the tool set ("2x"). */
static bool number_at(const struct router *r, const struct toks *ts, size_t i) {
    return ts->t[i].kind == WORDS_WORD &&
           (is_number_word(ts->t[i].w) || router_is_numeric_keyword(r, ts->t[i].w));
}

/* Whether tokens [b, e) are only a value: a number (digits, "2.5x", "five") with at most one
 * word after it (its unit: "percent", "degrees"), and "to", "at", "like", "about", "around" or
 * "please" around it ("zoom in on her face, 2.5x": the zoom's level, not a second request). */
static bool value_only(const struct router *r, const struct toks *ts, size_t b, size_t e) {
    static const char *const AROUND[] = {"to", "at", "like", "about", "around", "maybe", "please"};
    bool number = false;
    for (size_t i = b; i < e; i++) {
        if (ts->t[i].kind != WORDS_WORD) {
            continue;
        }
        if (number_at(r, ts, i)) {
            number = true;
        } else if (match_any(ts, i, e, AROUND, COUNT(AROUND)) > 0) {
            continue;
        } else if (!(i > b && number_at(r, ts, i - 1) && router_match_verb(r, ts, i, e) == 0)) {
            return false; /* one word right after the number may be its unit */
        }
    }
    return number;
}

/* Whether tokens [b, e) hold a number. */
static bool has_number(const struct router *r, const struct toks *ts, size_t b, size_t e) {
    for (size_t i = b; i < e; i++) {
        if (number_at(r, ts, i)) {
            return true;
        }
    }
    return false;
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

/* A right side that switches what the left side named ("actually I miss the grid, switch it
 * on again"): a verb, a pronoun, then "on" or "off", after a left side that starts with no
 * verb. Cut there, the pronoun would name nothing and the model would guess. */
static bool switches_left_thing(const struct router *r,
                                const struct toks *ts,
                                size_t lb,
                                size_t le,
                                size_t b,
                                size_t e) {
    static const char *const PRONOUNS[] = {"it", "that", "them", "this", "those", "these"};
    static const char *const SIDES[] = {"on", "off"};
    size_t i = b;
    while (i < e && match_any(ts, i, e, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS) > 0) {
        i++;
    }
    size_t m = i < e ? router_match_verb(r, ts, i, e) : 0;
    if (m == 0 || i + m + 1 >= e || match_any(ts, i + m, e, PRONOUNS, COUNT(PRONOUNS)) != 1 ||
        match_any(ts, i + m + 1, e, SIDES, COUNT(SIDES)) != 1) {
        return false;
    }
    size_t l = lb;
    while (l < le && match_any(ts, l, le, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS) > 0) {
        l++;
    }
    return l < le && router_match_verb(r, ts, l, le) == 0;
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
    size_t seg_tok = 0;    /* first token of the current segment */
    size_t seg_byte = 0;   /* first byte of the current segment */
    size_t clause_tok = 0; /* first token after the last separator run, cut or not */
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
        if (cut && switches_left_thing(r, &ts, seg_tok, a, b, e)) {
            cut = false;
        }
        bool punct_only = true;
        for (size_t k = a; k < b; k++) {
            punct_only = punct_only && ts.t[k].kind == WORDS_PUNCT;
        }
        if (cut && punct_only && value_only(r, &ts, b, e) && !has_number(r, &ts, seg_tok, a)) {
            cut = false; /* "zoom in on her face, 2.5x": the value of the command before it */
        }
        if (cut && run == 1 && is_word(&ts, a, "and") && situation_at(&ts, clause_tok, a)) {
            cut = false; /* "i'll prop the phone on my pack and run into the shot": one clause */
        }
        clause_tok = b;
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

/* Whether tokens [b, e) are a remark about the situation: two words or more, no command (a
 * verb first, a word of the tool set), no number, no word of wanting or negation ("i wanna get
 * closer", "no flash") and no question. */
/* Words of wanting or negation: a clause with one asks for something ("i wanna get closer",
 * "no flash", "it's too dark, can you ...") and is no remark. */
static const char *const REMARK_WANTS[] = {"want",  "wanna",   "need", "like",  "would",  "please",
                                           "pls",   "lets",    "dont", "do",    "not",    "no",
                                           "never", "without", "can",  "could", "should", "gotta"};

/* The whole of `text` tokenized into `ts` (its length in *len): false when it is NULL, longer
 * than the router reads, or of more tokens than it holds. */
static bool tokenize_whole(const char *text, struct toks *ts, size_t *len) {
    if (text == NULL) {
        *len = 0;
        return false;
    }
    bool too_long = false;
    *len = bounded_len(text, &too_long);
    tokenize(text, *len, ts);
    return !too_long && ts->n < MAX_TOKENS;
}

static bool remark_at(const struct router *r, const struct toks *ts, size_t b, size_t e) {
    size_t words = 0;
    for (size_t i = b; i < e; i++) {
        if (ts->t[i].kind != WORDS_WORD) {
            if (ts->t[i].w[0] == '?') {
                return false;
            }
            continue;
        }
        words++;
        if (is_number_word(ts->t[i].w) ||
            match_any(ts, i, e, REMARK_WANTS, COUNT(REMARK_WANTS)) > 0 ||
            router_tool_word_at(r, ts->t, e, i) > 0) {
            return false;
        }
    }
    return words >= 2 && !right_is_command(r, ts, b, e);
}

size_t router_remark_tail(const struct router *r, const char *segment) {
    struct toks ts;
    size_t len = 0;
    if (!tokenize_whole(segment, &ts, &len)) {
        return len;
    }
    for (size_t a = 1; a < ts.n; a++) {
        if (ts.t[a].kind == WORDS_PUNCT && ts.t[a].w[0] == ':') {
            break; /* "open a ticket: the VPN is down, ...": words given, not remarks */
        }
        if (ts.t[a].kind != WORDS_PUNCT || ts.t[a - 1].kind != WORDS_WORD ||
            strchr(",;-", ts.t[a].w[0]) == NULL || !left_is_command(r, &ts, 0, a) ||
            memchr(segment + ts.t[a].start, '?', len - ts.t[a].start) != NULL) {
            continue; /* a comma, semicolon or dash after a command; no question after it */
        }
        bool remarks = true;
        size_t b = a;
        while (remarks && b < ts.n) {
            while (b < ts.n && ts.t[b].kind == WORDS_PUNCT) {
                b++;
            }
            size_t e = b;
            while (e < ts.n && ts.t[e].kind != WORDS_PUNCT) {
                e++;
            }
            remarks = b < e && remark_at(r, &ts, b, e);
            b = e;
        }
        if (remarks) {
            return ts.t[a].start;
        }
    }
    return len;
}

size_t router_remark_head(const struct router *r, const char *text) {
    struct toks ts;
    size_t len = 0;
    if (!tokenize_whole(text, &ts, &len)) {
        return 0;
    }
    size_t a = 0, words = 0;
    while (a < ts.n && !(ts.t[a].kind == WORDS_PUNCT && strchr(".!", ts.t[a].w[0]) != NULL)) {
        if (ts.t[a].kind == WORDS_PUNCT && ts.t[a].w[0] == '?') {
            return 0; /* a question first */
        }
        words += ts.t[a].kind == WORDS_WORD;
        a++;
    }
    size_t b = a;
    while (b < ts.n && ts.t[b].kind == WORDS_PUNCT) {
        b++;
    }
    static const char *const GREETINGS[] = {"morning", "evening", "afternoon", "hi", "hello",
                                            "hey",     "hiya",    "howdy",     "yo", "heya"};
    if (words == 1 && a == 1 && b < ts.n && match_any(&ts, 0, 1, GREETINGS, COUNT(GREETINGS)) > 0 &&
        left_is_command(r, &ts, b, ts.n)) {
        return ts.t[b].start; /* "morning. any unread texts?": a greeting */
    }
    if (a >= ts.n || b >= ts.n || words < 2 || left_is_command(r, &ts, 0, a) ||
        !left_is_command(r, &ts, b, ts.n)) {
        return 0; /* a sentence with no command, then one that is a command */
    }
    for (size_t i = 0; i < a; i++) {
        if (ts.t[i].kind == WORDS_WORD &&
            (match_any(&ts, i, a, REMARK_WANTS, COUNT(REMARK_WANTS)) > 0 ||
             router_tool_word_at(r, ts.t, a, i) > 0)) {
            return 0; /* "it's too dark!" may ask; a word of the tool set is the model's */
        }
    }
    return ts.t[b].start;
}

size_t router_correction(const struct router *r, const char *text) {
    static const char *const MARKS[] = {"no wait",     "wait no",     "scratch that",
                                        "i mean",      "make that",   "or rather",
                                        "no actually", "actually no", "actually"};
    struct toks ts;
    size_t len = 0;
    if (!tokenize_whole(text, &ts, &len)) {
        return 0;
    }
    size_t at = 0;
    for (size_t i = 1; i < ts.n; i++) {
        size_t m = ts.t[i].kind == WORDS_WORD ? match_any(&ts, i, ts.n, MARKS, COUNT(MARKS)) : 0;
        size_t b = i + m;
        while (b < ts.n && ts.t[b].kind == WORDS_PUNCT) {
            b++;
        }
        /* a command before it and one after it that names a thing of the tool set ("... no
         * wait just lights off and co2 off"); "turn it off at lunch... actually just turn it off
         * now" names none, and its "it" is said before the mark */
        if (m == 0 || b >= ts.n || !left_is_command(r, &ts, 0, i) ||
            !left_is_command(r, &ts, b, ts.n)) {
            continue;
        }
        static const char *const NO_THING[] = {
            "on",  "off", "up",   "down", "in",    "out",  "now",  "just",   "turn", "switch",
            "set", "it",  "that", "this", "again", "more", "less", "please", "make", "put"};
        bool named = false;
        for (size_t k = b; k < ts.n && !named; k++) {
            named = ts.t[k].kind == WORDS_WORD && router_tool_word_at(r, ts.t, ts.n, k) > 0 &&
                    !words_in_list(ts.t[k].w, NO_THING, COUNT(NO_THING));
        }
        if (named) {
            at = ts.t[b].start;
            i = b;
        }
    }
    return at;
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
           match_any(&ts, i, ts.n, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS) > 0 &&
           router_match_verb(r, &ts, i, ts.n) == 0) {
        i++;
    }
    if (i < ts.n && ts.t[i].kind == WORDS_WORD && router_match_verb(r, &ts, i, ts.n) > 0) {
        return ts.t[i].start;
    }
    return ROUTER_NO_VERB;
}

size_t
router_split(const char *utterance, char segments[][ROUTER_MAX_SEGMENT], size_t max_segments) {
    return router_split_with(NULL, utterance, segments, max_segments);
}
