/*
 * router.c - the router's lexicon: the default word lists (verbs, lead-ins, statements,
 * conjunctions), the words a tool set adds (router_new(), docs/router.md "Words from the tool
 * set"), and the queries the two decisions ask of them (router_impl.h). Undo detection is in
 * router_undo.c, compound segmentation in router_split.c.
 *
 * Invariants: no allocation except router_new(); a phrase is at most ROUTER_MAX_WORDS words of
 * at most ROUTER_WORD_CAP bytes each, normalized (lowercase, one space).
 */
#include "router.h"

#include "router_impl.h"
#include "status.h"
#include "toolspec.h"
#include "words.h"

#include <stdlib.h>
#include <string.h>

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
    "dim",        "mute",     "unmute",   "rotate", "search", "share",  "restore",  "grab",
    "capture",    "record",   "cancel",   "skip",   "find",   "call",   "book",     "drop",
    "kill",       "end",      "bring",    "get",    "give",
};

/* Words allowed before the verb at the start of a right side ("and please
 * take", "then can you take", "and I want you to take"). */
const char *const ROUTER_LEAD_INS[] = {
    "please", "also",   "then",  "now",      "just",    "and",   "can",  "could",      "would",
    "will",   "you",    "lets",  "let",      "us",      "me",    "i",    "want",       "wanna",
    "to",     "kindly", "maybe", "quickly",  "finally", "after", "that", "afterwards", "go",
    "ahead",  "oh",     "hey",   "actually", "wait",    "no",    "ok",   "okay",
};
const size_t ROUTER_N_LEAD_INS = COUNT(ROUTER_LEAD_INS);

/* A left side that starts with one of these describes ("it's tungsten lighting in here, fix
 * the white balance"): it is not a command of its own. */
const char *const ROUTER_STATEMENTS[] = {
    "its",     "it is", "it was", "thats", "that is", "theres", "there is", "there are",
    "this is", "im",    "i am",   "were",  "we are",  "its so", "ive",      "weve",
};
const size_t ROUTER_N_STATEMENTS = COUNT(ROUTER_STATEMENTS);

/* Conjunctions that separate commands (besides punctuation and "after that"). */
const char *const ROUTER_CONJUNCTIONS[] = {"and", "n", "then", "also", "plus", "afterwards"};
const size_t ROUTER_N_CONJUNCTIONS = COUNT(ROUTER_CONJUNCTIONS);

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
    char device[WORDS_CAP]; /* the pack's name as a word ("printer"), "" when none */
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
    /* words of praise and politeness: "Cancel the current print job for good" must not make
       "good morning" a request */
    "good",
    "great",
    "nice",
    "fine",
    "please",
    "thanks",
    "very",
    "really",
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
    /* words of when: "fed_today" names no "today" ("the rummynoses are schooling so nicely
       today" is no request) */
    "today",
    "tonight",
    "tomorrow",
    "yesterday",
    "now",
    "daily",
    "weekly",
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

/* Words a question opens with: never a command verb ("what's the time difference between here
 * and Tokyo", a cloud tool's example, had made "what's my alarm" a command, and the model's
 * set_alarm ran for it). */
static const char *const QUESTION_WORDS[] = {
    "what", "whats", "where",  "wheres", "when",   "whens",  "why",  "who",    "whos", "which",
    "how",  "hows",  "is",     "isnt",   "are",    "arent",  "does", "doesnt", "did",  "didnt",
    "was",  "any",   "should", "shall",  "whatre", "wheres", "was",  "were"};

static bool add_verb_word(struct router *r, const char *w) {
    if (!is_letters(w) || strlen(w) < 2 || words_in_list(w, STOP_WORDS, COUNT(STOP_WORDS)) ||
        words_in_list(w, QUESTION_WORDS, COUNT(QUESTION_WORDS))) {
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
    while (i < n && words_match_any(t, n, i, ROUTER_LEAD_INS, ROUTER_N_LEAD_INS) > 0) {
        i++;
    }
    if (i + 1 >= n || t[i].kind != WORDS_WORD ||
        words_match_any(t, n, i, ROUTER_STATEMENTS, ROUTER_N_STATEMENTS) > 0 ||
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
    struct words_tok name[2];
    if (pk->name != NULL && words_tokenize(pk->name, strlen(pk->name), 0, name, 2) == 1 &&
        is_letters(name[0].w)) {
        pipit_format(r->device, sizeof(r->device), "%s", name[0].w);
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

/* ============================================================================
 * queries */

size_t router_tool_word_at(const struct router *r, const struct words_tok *t, size_t n, size_t i) {
    size_t best = 0;
    for (size_t k = 0; r != NULL && i < n && t[i].kind == WORDS_WORD && k < r->n; k++) {
        size_t m = words_match(t, n, i, r->words[k].phrase);
        best = m > best ? m : best;
    }
    return best;
}

bool router_has_tool_word(const struct router *r, const char *text) {
    if (r == NULL || text == NULL) {
        return false;
    }
    bool too_long = false;
    size_t len = bounded_len(text, &too_long);
    struct toks ts;
    tokenize(text, len, &ts);
    for (size_t i = 0; i < ts.n; i++) {
        if (router_tool_word_at(r, ts.t, ts.n, i) > 0) {
            return true;
        }
    }
    return false;
}

/* A verb (default or extra) at token i before `end`: tokens matched, or 0. */
size_t router_match_verb(const struct router *r, const struct toks *ts, size_t i, size_t end) {
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
bool router_is_numeric_keyword(const struct router *r, const char *w) {
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

size_t router_match_keyword(const struct router *r, const struct toks *ts, size_t i, size_t end) {
    if (i < end && ts->t[i].kind == WORDS_WORD && router_is_numeric_keyword(r, ts->t[i].w)) {
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
bool router_is_pair(const struct router *r, const char *x, const char *y) {
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

bool router_is_device_name(const struct router *r, const char *w) {
    return r != NULL && w != NULL && r->device[0] != '\0' && strcmp(r->device, w) == 0;
}
