/*
 * ask.c - the key lexicon, and state questions answered from the state.
 *
 * One lexicon per agent, built from the pack at creation: for every scalar or array state key,
 * the phrases that name it (aliases) and, for string keys, the values a sentence may claim.
 * Aliases come from these places, ranked: (0) the device's own names and the key's words
 * ("timer_s" -> "timer"); (1) the words of a tool that changes exactly this key, minus generic
 * verbs ("switch_camera" -> "camera"), and the singular of an array key ("alarms" -> "alarm");
 * (2) the quantity a number key's only setter speaks of ("how warm", "how long": DIMENSIONS).
 * A phrase two keys claim at the same rank names neither (both "focus_x" and "focus_y" give
 * "focus"): a question with it goes to the model.
 *
 * A question: after leading and trailing fillers, it starts with a question word ("is", "what",
 * "which", "how", "do", "any", ...) and every other word is a key's alias, a generic question
 * or state word ("the", "am", "at", "set", "on", "currently", ...), a value of a named key, a
 * word of a named key, or a number. Anything else makes it another intent.
 *
 * Claims in the model's plain text are checked in ask_claim.c, on the same lexicon
 * (ask_impl.h).
 */
#include "ask.h"

#include "ask_impl.h"
#include "render.h"
#include "status.h"
#include "words.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ============================================================================
 * generic English (no pack nouns here) */

/* Words a question may start with. */
static const char *const OPENERS[] = {
    "where",  "wheres", "is",   "isnt", "are",  "arent", "am",  "was", "what",
    "whats",  "which",  "how",  "hows", "do",   "does",  "any", "if",  "whether",
    "whatre", "did",    "have", "has",  "when", "whens", "who", "whos"};

/* Dropped at the start of a question. */
static const char *const LEAD_FILLERS[] = {
    "hey",
    "ok",
    "okay",
    "so",
    "um",
    "uh",
    "hmm",
    "and",
    "but",
    "also",
    "then",
    "just",
    "quick question",
    "pipit",
    "sorry",
    "excuse me",
    "can you tell me",
    "could you tell me",
    "would you tell me",
    "tell me",
    "do you know",
    "i wonder",
    "i want to know",
    "id like to know",
    "remind me",
    "please",
    "wait",
    "oh",
    "actually",
    "by the way",
    "btw",
    "let me know",
    "check",
    "can you check",
    "could you check",
    "so tell me",
    "now",
    "and now",
    "and",
    "right",
    "well",
    "roughly",
    "approximately",
    "honestly",
    "seriously",
    "anyway",
    "just curious",
    "curious",
};

/* Dropped at the end of a question. */
static const char *const TRAIL_FILLERS[] = {
    "please", "right now", "now",        "currently", "at the moment", "still",   "again",  "then",
    "thanks", "thank you", "by the way", "pipit",     "exactly",       "anymore", "at all", "today",
    "for me", "or not",    "already",    "yet",       "right",         "atm",
};

/* Tags that make a statement a question: "the flash is off, right?" */
static const char *const TAGS[] = {"right",    "correct", "isnt it", "is it",
                                   "arent we", "are we",  "yeah",    "yes",
                                   "no",       "true",    "or not",  "am i right"};

/* A statement asked as a question ("flash is on or off?") needs one of these. */
static const char *const COPULAS_Q[] = {"is", "isnt", "are", "arent", "am", "s"};

/* Words a question may hold anywhere besides the keys and their values, with the verbs a
 * question about a setting goes through ("what's the exposure looking like", "which white
 * balance did I pick"; "turn" only after "did I", below) and a noun's "'s" ("the grid's on,
 * right?"). */
static const char *const GLUE[] = {
    "a",         "an",       "long",     "and",        "the",      "or",       "my",
    "our",       "your",     "its",      "it",         "this",     "that",     "i",
    "im",        "we",       "were",     "you",        "me",       "is",       "isnt",
    "are",       "arent",    "am",       "was",        "be",       "been",     "being",
    "at",        "in",       "to",       "of",         "for",      "set",      "currently",
    "current",   "now",      "right",    "still",      "used",     "using",    "what",
    "whats",     "which",    "how",      "much",       "many",     "any",      "there",
    "theres",    "have",     "has",      "got",        "if",       "whether",  "status",
    "state",     "setting",  "settings", "value",      "turned",   "switched", "so",
    "far",       "number",   "count",    "up",         "selected", "use",      "left",
    "remaining", "remain",   "remains",  "longs",      "time",     "stay",     "stayed",
    "kept",      "started",  "stopped",  "looking",    "look",     "like",     "sitting",
    "pick",      "picked",   "chose",    "chosen",     "saving",   "shooting", "s",
    "did",       "actually", "really",   "definitely", "honestly", "saved",    "stored",
    "does",      "who",      "whos",     "when",       "whens",    "say",      "says",
    "show",      "shows",    "read",     "reads",      "run",      "runs",
};

/* Phrases a question may hold anywhere: "how many alarms do I have". */
static const char *const GLUE_PHRASES[] = {"do i have",   "do we have", "do you have", "have i got",
                                           "have we got", "is there",   "are there"};

/* What/which questions name the thing asked about with one of these ("what is the zoom" is
 * about the state, "what is exposure" is about photography), or ask about the person ("what
 * zoom am I at"). */
static const char *const DETERMINERS[] = {"the", "my",      "your", "our", "its",
                                          "it",  "current", "am",   "are", "this"};

/* Generic state words: a value of any key in a question ("is the flash on?"). */
static const char *const STATE_WORDS[] = {
    "on",        "off",    "enabled", "disabled", "active",    "inactive", "true",    "false",
    "yes",       "no",     "locked",  "unlocked", "running",   "set",      "unset",   "going",
    "open",      "opened", "closed",  "shut",     "showing",   "shown",    "visible", "hidden",
    "displayed", "lit",    "live",    "playing",  "connected", "muted",    "paused",  "working",
};

/* Quantities people ask about without naming the key ("how warm is it set to?", "how long is
 * left?"): a number key whose only setter's arguments or description say one of the marks
 * gets the phrases as names of lower rank than the pack's own. Two keys of one quantity
 * ("how bright" with three rooms) name neither. */
struct dimension {
    const char *marks[6];
    const char *phrases[7];
};
static const struct dimension DIMENSIONS[] = {
    {{"celsius", "fahrenheit", "temperature", "thermostat", NULL},
     {"temperature", "temp", "how warm", "how hot", "how cold", "heating", NULL}},
    {{"minutes", "seconds", "hours", "duration", NULL},
     {"how long", "time left", "time remaining", "how much time", NULL}},
    {{"volume", "loudness", NULL}, {"volume", "how loud", "how quiet", NULL}},
    {{"brightness", NULL}, {"brightness", "how bright", "how dim", "how dark", NULL}},
    {{"humidity", NULL}, {"humidity", "how humid", "how damp", "how dry", NULL}},
    {{"speed", "kmh", "mph", NULL}, {"how fast", "how slow", NULL}},
    {{"incline", "slope", "gradient", NULL}, {"how steep", NULL}},
    {{"distance", "km", "miles", "kilometers", "kilometres", NULL}, {"how far", NULL}},
    {{"weight", "kg", "kilograms", "pounds", "lbs", NULL}, {"how heavy", NULL}},
};

/* ============================================================================
 * tokens (words.c) */

bool ask_is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* Short forms people type for a long word ("how many pics", "is the cam on"). */
static const char *const SHORT_FORMS[][2] = {
    {"pic", "picture"},  {"pics", "pictures"}, {"vid", "video"},        {"vids", "videos"},
    {"cam", "camera"},   {"cams", "cameras"},  {"temp", "temperature"}, {"mins", "minutes"},
    {"secs", "seconds"}, {"sec", "second"},    {"msg", "message"},      {"msgs", "messages"},
};

/* Words of s[0..len), at most max; a sign before a digit is part of the number ("-1"); a
 * short form is read as its long word. */
size_t ask_tokenize(const char *s, size_t len, struct words_tok *out, size_t max) {
    size_t n = words_tokenize(s, len, WORDS_SIGNS, out, max);
    /* a noun's "'s" is its "is" ("the grid's on, right?"), kept apart from the noun so the
     * noun names its key; the function words keep theirs ("what's", "it's", "that's") */
    static const char *const OWN_S[] = {"what", "that", "it", "there", "where", "who",  "how",
                                        "here", "let",  "he", "she",   "one",   "whos", "long"};
    for (size_t i = 0; i < n && n < max; i++) {
        size_t l = strlen(out[i].w);
        const char *e = s + out[i].end;
        if (l < 3 || out[i].end < 2 || out[i].w[l - 1] != 's' || e[-1] != 's' ||
            (e[-2] != '\'' && !(out[i].end >= 4 && (unsigned char)e[-4] == 0xe2 &&
                                (unsigned char)e[-3] == 0x80 && (unsigned char)e[-2] == 0x99))) {
            continue;
        }
        char stem[WORDS_CAP];
        pipit_format(stem, sizeof(stem), "%.*s", (int)(l - 1), out[i].w);
        if (ask_in_list(stem, OWN_S, COUNT(OWN_S))) {
            continue;
        }
        memmove(&out[i + 2], &out[i + 1], (n - i - 1) * sizeof(out[0]));
        out[i + 1] = out[i];
        pipit_format(out[i].w, sizeof(out[i].w), "%s", stem);
        pipit_format(out[i + 1].w, sizeof(out[i + 1].w), "s");
        out[i + 1].start = out[i].end - 1;
        out[i].end -= (unsigned char)e[-2] == '\'' ? 2 : 4;
        n++;
        i++;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t f = 0; f < COUNT(SHORT_FORMS); f++) {
            if (strcmp(out[i].w, SHORT_FORMS[f][0]) == 0) {
                pipit_format(out[i].w, sizeof(out[i].w), "%s", SHORT_FORMS[f][1]);
                break;
            }
        }
    }
    return n;
}

bool ask_tok_is(const struct words_tok *t, size_t n, size_t i, const char *w) {
    return words_is(t, n, i, w);
}

/* Tokens the phrase ("white balance") matches at i, or 0. */
static size_t ask_match_phrase(const struct words_tok *t, size_t n, size_t i, const char *phrase) {
    return words_match(t, n, i, phrase);
}

static size_t ask_match_longest(const struct words_tok *t,
                                size_t n,
                                size_t i,
                                const char *const *list,
                                size_t n_list) {
    return words_match_longest(t, n, i, list, n_list);
}

bool ask_in_list(const char *w, const char *const *list, size_t n_list) {
    return words_in_list(w, list, n_list);
}

/* A number word: "2", "2x", "0.5", "-1", "+1.5". */
bool ask_parse_number(const char *w, double *out) {
    int said = 0;
    if (w[0] == '\0') {
        return false;
    }
    if (words_number_value(w, &said)) {
        *out = (double)said;
        return true;
    }
    char *end = NULL;
    double v = strtod(w, &end);
    if (end == w || !(ask_is_digit((unsigned char)w[0]) || w[0] == '-' || w[0] == '+')) {
        return false;
    }
    if (*end == 'x' && end[1] == '\0') {
        end++;
    }
    if (*end != '\0' || !isfinite(v)) {
        return false;
    }
    *out = v;
    return true;
}

/* ============================================================================
 * building the lexicon */

/* Normalize a phrase into lowercase words joined by one space; false when it has no word, too
 * many words or is too long. */
bool ask_normalize(const char *phrase, char *out, size_t size, size_t *n_words) {
    struct words_tok t[8];
    size_t n = ask_tokenize(phrase, strlen(phrase), t, COUNT(t));
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t wl = strlen(t[i].w);
        if (wl == 0 || used + wl + 2 > size) {
            return false;
        }
        if (used > 0) {
            out[used++] = ' ';
        }
        memcpy(out + used, t[i].w, wl + 1);
        used += wl;
    }
    *n_words = n;
    return n > 0 && n <= 6;
}

static void add_alias(struct ask *k, const char *phrase, int key, int rank) {
    char norm[PHRASE_CAP];
    size_t nw = 0;
    if (!ask_normalize(phrase, norm, sizeof(norm), &nw)) {
        return;
    }
    for (size_t i = 0; i < k->n_aliases; i++) {
        struct ask_alias *a = &k->aliases[i];
        if (strcmp(a->phrase, norm) != 0) {
            continue;
        }
        if (a->key == key && key >= 0) {
            a->rank = rank < a->rank ? rank : a->rank;
        } else if (rank < a->rank) {
            a->key = key;
            a->rank = rank;
            a->shared = 0;
        } else if (rank == a->rank) {
            a->shared |= (a->key >= 0 ? UINT64_C(1) << a->key : 0) | UINT64_C(1) << key;
            a->key = -1; /* two keys at the same rank: it names neither */
        }
        return;
    }
    if (k->n_aliases < ASK_MAX_ALIASES) {
        struct ask_alias *a = &k->aliases[k->n_aliases++];
        memcpy(a->phrase, norm, sizeof(norm));
        a->key = key;
        a->shared = 0;
        a->rank = rank;
        a->n_words = nw;
    }
}

/* A switch's name that ends in what is done to the thing ("focus lock", "mute") also names it
 * as its state ("is the focus locked?", "muted?"): the last word + "ed" (a final "e": "d"), at a
 * lower rank. Words of 4 letters or more not already an -ed, -ing or plural form. */
static void add_participle(struct ask *k, const char *phrase, int key) {
    size_t l = strlen(phrase);
    const char *last = strrchr(phrase, ' ');
    last = last != NULL ? last + 1 : phrase;
    size_t lw = strlen(last);
    if (lw < 4 || l + 3 > PHRASE_CAP || last[lw - 1] == 's' || last[lw - 1] == 'y' ||
        (lw > 2 && strcmp(last + lw - 2, "ed") == 0) ||
        (lw > 3 && strcmp(last + lw - 3, "ing") == 0)) {
        return;
    }
    char ed[PHRASE_CAP];
    pipit_format(ed, sizeof(ed), "%s%s", phrase, last[lw - 1] == 'e' ? "d" : "ed");
    add_alias(k, ed, key, 1);
}

static void add_value(struct ask_key *key, const char *value) {
    char norm[VALUE_CAP];
    size_t nw = 0;
    if (!ask_normalize(value, norm, sizeof(norm), &nw)) {
        return;
    }
    for (size_t i = 0; i < key->n_values; i++) {
        if (strcmp(key->values[i], norm) == 0) {
            return;
        }
    }
    if (key->n_values < MAX_VALUES) {
        memcpy(key->values[key->n_values++], norm, sizeof(norm));
    }
}

/* The key's words: "white_balance" -> "white balance"; a short last part that is a unit is
 * dropped ("timer_s" -> "timer", "exposure_ev" -> "exposure"). */
static void key_words(const char *key, char *out, size_t size) {
    pipit_format(out, size, "%s", key);
    for (char *p = out; *p != '\0'; p++) {
        if (*p == '_') {
            *p = ' ';
        }
    }
    char *last = strrchr(out, ' ');
    if (last != NULL && strlen(last + 1) <= 2) {
        *last = '\0';
    }
}

static int find_key(const struct ask *k, const char *name) {
    for (size_t i = 0; i < k->n_keys; i++) {
        if (strcmp(k->keys[i].name, name) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* A setter's success template says the state when it has a copula and no placeholder but its
 * one argument: "The flash is {mode:auto=on auto}." does, "Zoomed {direction} to {zoom}x." does
 * not. Its value map becomes the key's shown values ("on auto" is "auto"). */
static void add_state_template(struct ask_key *key, const char *tmpl, const char *param) {
    if (key->tmpl != NULL || tmpl == NULL || param == NULL ||
        (strstr(tmpl, " is ") == NULL && strstr(tmpl, " are ") == NULL)) {
        return;
    }
    size_t pl = strlen(param);
    for (const char *p = strchr(tmpl, '{'); p != NULL; p = strchr(p + 1, '{')) {
        if (p[1] == '{') {
            p++; /* "{{" */
            continue;
        }
        if (strncmp(p + 1, param, pl) != 0 || (p[1 + pl] != '}' && p[1 + pl] != ':')) {
            return; /* a placeholder from the result data: not a plain state sentence */
        }
    }
    if (strlen(param) >= sizeof(key->param)) {
        return;
    }
    key->tmpl = tmpl;
    memcpy(key->param, param, pl + 1);
    /* "{mode:auto=on auto|*=# seconds}": entries "value=text", '#' and '*' entries skipped */
    const char *map = strchr(tmpl, '{');
    while (map != NULL && !(strncmp(map + 1, param, pl) == 0 && map[1 + pl] == ':')) {
        map = strchr(map + 1, '{');
    }
    if (map == NULL) {
        return;
    }
    const char *e = map + 2 + pl;
    while (*e != '\0' && *e != '}' && key->n_shows < MAX_VALUES) {
        const char *bar = e;
        while (*bar != '\0' && *bar != '|' && *bar != '}') {
            bar++;
        }
        const char *eq = memchr(e, '=', (size_t)(bar - e));
        if (eq != NULL && eq > e && (size_t)(eq - e) < VALUE_CAP &&
            (size_t)(bar - eq - 1) < VALUE_CAP && !(eq - e == 1 && *e == '*') &&
            memchr(eq + 1, '#', (size_t)(bar - eq - 1)) == NULL) {
            char text[VALUE_CAP];
            char value[VALUE_CAP];
            size_t nw = 0;
            pipit_format(value, sizeof(value), "%.*s", (int)(eq - e), e);
            pipit_format(text, sizeof(text), "%.*s", (int)(bar - eq - 1), eq + 1);
            if (ask_normalize(text, key->show_text[key->n_shows], VALUE_CAP, &nw) &&
                ask_normalize(value, key->show_value[key->n_shows], VALUE_CAP, &nw)) {
                key->n_shows++;
            }
        }
        e = *bar == '|' ? bar + 1 : bar;
    }
}

/* Whole word `w` in `text`, ignoring case and '_' as a space. */
static bool says_word(const char *text, const char *w) {
    size_t wl = strlen(w);
    for (const char *p = text; p != NULL && *p != '\0'; p++) {
        bool start = p == text || !isalnum((unsigned char)p[-1]);
        if (start && strncasecmp(p, w, wl) == 0 && !isalnum((unsigned char)p[wl])) {
            return true;
        }
    }
    return false;
}

/* The quantity names of DIMENSIONS a number key's own names say, at `rank`: a sensor no tool
 * sets ("room_temp" named "room temperature": "how warm is it in there?", "how humid is it"). */
static void add_dimensions_named(struct ask *k, int key, const char *names, int rank) {
    for (size_t d = 0; d < COUNT(DIMENSIONS); d++) {
        bool said = false;
        for (size_t m = 0; DIMENSIONS[d].marks[m] != NULL && !said; m++) {
            said = says_word(names, DIMENSIONS[d].marks[m]);
        }
        for (size_t i = 0; said && DIMENSIONS[d].phrases[i] != NULL; i++) {
            add_alias(k, DIMENSIONS[d].phrases[i], key, rank);
        }
    }
}

/* The quantity names of DIMENSIONS a number key's setter says (rank 2). */
static void add_dimensions(struct ask *k, int key, const struct pipit_tool *tool) {
    for (size_t d = 0; d < COUNT(DIMENSIONS); d++) {
        bool said = false;
        for (size_t m = 0; DIMENSIONS[d].marks[m] != NULL && !said; m++) {
            const char *w = DIMENSIONS[d].marks[m];
            said = says_word(tool->description != NULL ? tool->description : "", w);
            for (size_t i = 0; tool->params != NULL && i < tool->params->n_props && !said; i++) {
                said = says_word(tool->params->props[i].name, w);
            }
        }
        for (size_t i = 0; said && DIMENSIONS[d].phrases[i] != NULL; i++) {
            add_alias(k, DIMENSIONS[d].phrases[i], key, 2);
        }
    }
}

/* Aliases and values from a tool that changes exactly one key. */
static void add_tool(struct ask *k, const struct pipit_toolset *ts, size_t t) {
    const char *const *keys = NULL;
    size_t n_keys = 0;
    if (pipit_toolset_undo(ts, t, &keys, &n_keys) != PIPIT_UNDO_KEYS || n_keys == 0) {
        return;
    }
    if (n_keys > 1) {
        /* a key per place ("{room}_brightness"): the quantity names them all, and the place
         * said picks one ("how bright is the bedroom") */
        for (size_t i = 0; i < n_keys; i++) {
            int q = find_key(k, keys[i]);
            if (q >= 0 && k->keys[q].type == KEY_NUMBER) {
                add_dimensions(k, q, &ts->tools[t]);
            }
        }
        return;
    }
    int key = find_key(k, keys[0]);
    if (key < 0) {
        return;
    }
    /* the tool's name minus its verbs: "switch_camera" -> "camera" */
    char phrase[PHRASE_CAP] = "";
    size_t used = 0;
    const char *name = ts->tools[t].name;
    for (const char *p = name; *p != '\0';) {
        const char *us = strchr(p, '_');
        size_t wl = us != NULL ? (size_t)(us - p) : strlen(p);
        char w[WORDS_CAP];
        if (wl > 0 && wl < sizeof(w)) {
            memcpy(w, p, wl);
            w[wl] = '\0';
            if (!words_is_tool_verb(w) && used + wl + 2 < sizeof(phrase)) {
                if (used > 0) {
                    phrase[used++] = ' ';
                }
                memcpy(phrase + used, w, wl + 1);
                used += wl;
            }
        }
        p += wl;
        if (*p == '_') {
            p++;
        }
    }
    if (used > 0) {
        add_alias(k, phrase, key, 1);
    }
    const struct pipit_schema *params = ts->tools[t].params;
    if (k->keys[key].type == KEY_NUMBER) {
        add_dimensions(k, key, &ts->tools[t]);
    }
    if (params != NULL && params->n_props == 1) {
        add_state_template(&k->keys[key], ts->tools[t].success, params->props[0].name);
    }
    /* the string enums of its parameters are values of a string key */
    if (k->keys[key].type != KEY_STRING || params == NULL) {
        return;
    }
    for (size_t i = 0; i < params->n_props; i++) {
        const struct pipit_schema *ps = params->props[i].schema;
        for (size_t e = 0; ps != NULL && ps->type == PIPIT_SCHEMA_STRING && e < ps->n_enum; e++) {
            add_value(&k->keys[key], ps->enum_str[e]);
            /* and the words its description gives it: "is the heater in eco mode?" of
             * "economy (eco, saver)" */
            char alt[8][PIPIT_SCHEMA_WORD_CAP];
            int n_alt = pipit_schema_value_words(ps, ps->enum_str[e], alt, 8);
            for (int a = 0; a < n_alt; a++) {
                add_value(&k->keys[key], alt[a]);
            }
        }
    }
}

static bool phrase_has_word(const char *phrase, const char *w);

enum pipit_status ask_new(const struct pipit_toolset *ts,
                          const json_t *state,
                          const struct device_key_words *words,
                          size_t n_words,
                          struct ask **out,
                          struct pipit_error *err) {
    if (out != NULL) {
        *out = NULL;
    }
    if (ts == NULL || !json_is_object(state) || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "ask: a tool set, a state object and an output are needed");
    }
    struct ask *k = calloc(1, sizeof(*k));
    if (k == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "ask: out of memory");
    }
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)state, name, v) {
        if (k->n_keys >= ASK_MAX_KEYS || strlen(name) > PIPIT_TOOLSPEC_MAX_NAME) {
            continue;
        }
        struct ask_key *key = &k->keys[k->n_keys];
        if (json_is_boolean(v)) {
            key->type = KEY_BOOL;
        } else if (json_is_number(v)) {
            key->type = KEY_NUMBER;
        } else if (json_is_string(v)) {
            key->type = KEY_STRING;
            add_value(key, json_string_value(v));
        } else if (json_is_array(v)) {
            key->type = KEY_ARRAY;
        } else if (json_is_object(v) || json_is_null(v)) {
            key->type = KEY_OBJECT; /* null: "no navigation yet", an object later */
        } else {
            continue;
        }
        memcpy(key->name, name, strlen(name) + 1);
        key_words(name, key->words, sizeof(key->words));
        k->n_keys++;
    }
    for (size_t i = 0; i < n_words && words != NULL; i++) {
        int key = words[i].key != NULL ? find_key(k, words[i].key) : -1;
        if (key >= 0) {
            k->keys[key].dev = &words[i];
        }
    }
    for (size_t i = 0; i < k->n_keys; i++) {
        struct ask_key *key = &k->keys[i];
        add_alias(k, key->words, (int)i, 0);
        char full[PHRASE_CAP];
        pipit_format(full, sizeof(full), "%s", key->name);
        for (char *p = full; *p != '\0'; p++) {
            *p = *p == '_' ? ' ' : *p;
        }
        add_alias(k, full, (int)i, 0);
        if (key->type == KEY_ARRAY) {
            size_t wl = strlen(key->words);
            if (wl > 1 && key->words[wl - 1] == 's') {
                char one[PHRASE_CAP];
                pipit_format(one, sizeof(one), "%.*s", (int)(wl - 1), key->words);
                add_alias(k, one, (int)i, 1);
            }
        }
        if (key->dev != NULL && key->dev->names != NULL) {
            const char *p = key->dev->names;
            while (*p != '\0') {
                const char *bar = strchr(p, '|');
                size_t l = bar != NULL ? (size_t)(bar - p) : strlen(p);
                char one[PHRASE_CAP];
                if (l > 0 && l < sizeof(one)) {
                    memcpy(one, p, l);
                    one[l] = '\0';
                    add_alias(k, one, (int)i, 0);
                    if (key->type == KEY_BOOL) {
                        add_participle(k, one, (int)i);
                    }
                }
                p += l;
                if (*p == '|') {
                    p++;
                }
            }
        }
    }
    /* the label the state line shows the model ("milk: 65") names its key too, at a lower
     * rank than the pack's names ("what's the milk at now?") */
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t i = 0; pack != NULL && i < k->n_keys; i++) {
        const struct pipit_pack_key *pk = pipit_pack_find_key(pack, k->keys[i].name);
        if (pk != NULL && pk->show != NULL && k->keys[i].type != KEY_OBJECT) {
            k->keys[i].shown = k->keys[i].type != KEY_ARRAY;
            char label[PHRASE_CAP];
            pipit_format(label, sizeof(label), "%s", pk->show);
            for (char *p = label; *p != '\0'; p++) {
                *p = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
            }
            add_alias(k, label, (int)i, 1);
        }
    }
    for (size_t t = 0; t < ts->n_tools; t++) {
        add_tool(k, ts, t);
    }
    /* a number key's own names say its quantity, below what a setter says: "how warm" is the
     * thermostat's when one sets it, the room's sensor's when nothing else claims it */
    for (size_t i = 0; i < k->n_keys; i++) {
        if (k->keys[i].type == KEY_NUMBER) {
            add_dimensions_named(k, (int)i, k->keys[i].name, 3);
            add_dimensions_named(k, (int)i, k->keys[i].words, 3);
            if (k->keys[i].dev != NULL && k->keys[i].dev->names != NULL) {
                add_dimensions_named(k, (int)i, k->keys[i].dev->names, 3);
            }
        }
    }
    /* a key named for a name is what a thing is "called" ("what's it called?"); not a time
     * of day by "what time": "what time is it in Tokyo" asks the clock */
    for (size_t i = 0; i < k->n_keys; i++) {
        if (k->keys[i].type == KEY_STRING && phrase_has_word(k->keys[i].words, "name")) {
            add_alias(k, "called", (int)i, 2);
        }
    }
    /* a string key's declared values ("docked", "mowing", "paused"): "is it docked?" names the
     * key by a value only it takes, whatever tool sets it */
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    for (size_t i = 0; pk != NULL && i < pk->n_keys; i++) {
        int q = find_key(k, pk->keys[i].key);
        for (size_t e = 0; q >= 0 && k->keys[q].type == KEY_STRING && e < pk->keys[i].n_enum; e++) {
            add_value(&k->keys[q], pk->keys[i].enum_str[e]);
        }
    }
    *out = k;
    return PIPIT_OK;
}

void ask_free(struct ask *k) {
    free(k);
}

/* The longest alias at token i: its key (-1: ambiguous) and *len its tokens; 0 when none. */
/* ask_match_alias(), the keys that share the alias matched (*key == -1) into *shared, and
 * its rank into *rank (may be NULL). */
static size_t match_alias_ranked(const struct ask *k,
                                 const struct words_tok *t,
                                 size_t n,
                                 size_t i,
                                 int *key,
                                 uint64_t *shared,
                                 int *rank) {
    size_t best = 0;
    for (size_t a = 0; a < k->n_aliases; a++) {
        if (k->aliases[a].n_words <= best) {
            continue;
        }
        size_t m = ask_match_phrase(t, n, i, k->aliases[a].phrase);
        if (m > best) {
            best = m;
            *key = k->aliases[a].key;
            *shared = k->aliases[a].shared;
            if (rank != NULL) {
                *rank = k->aliases[a].rank;
            }
        }
    }
    return best;
}

size_t
ask_match_alias(const struct ask *k, const struct words_tok *t, size_t n, size_t i, int *key) {
    uint64_t shared = 0;
    return match_alias_ranked(k, t, n, i, key, &shared, NULL);
}

/* Tokens of a value of `key` at i, as a value ("auto") or as the template shows one ("on
 * auto"), or 0; *as (may be NULL) receives the value it stands for. The longest wins. */
size_t ask_match_value_as(const struct ask_key *key,
                          const struct words_tok *t,
                          size_t n,
                          size_t i,
                          const char **as) {
    size_t best = 0;
    for (size_t v = 0; v < key->n_values; v++) {
        size_t m = ask_match_phrase(t, n, i, key->values[v]);
        if (m > best) {
            best = m;
            if (as != NULL) {
                *as = key->values[v];
            }
        }
    }
    for (size_t v = 0; v < key->n_shows; v++) {
        size_t m = ask_match_phrase(t, n, i, key->show_text[v]);
        if (m > best) {
            best = m;
            if (as != NULL) {
                *as = key->show_value[v];
            }
        }
    }
    return best;
}

size_t ask_match_value(const struct ask_key *key, const struct words_tok *t, size_t n, size_t i) {
    return ask_match_value_as(key, t, n, i, NULL);
}

/* ============================================================================
 * sentences */

static void capitalize(char *s) {
    if (s[0] >= 'a' && s[0] <= 'z') {
        s[0] = (char)(s[0] - 'a' + 'A');
    }
}

/* The value of a number or string key as a sentence says it: "2x", "3 seconds", "off". */
static void ask_format_value(const struct ask_key *key, const json_t *v, char *buf, size_t size) {
    const struct device_key_words *d = key->dev;
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (x == 0 && d != NULL && d->zero != NULL) {
            pipit_format(buf, size, "%s", d->zero);
            return;
        }
        const char *unit = d != NULL && d->unit != NULL ? d->unit : "";
        size_t ul = strlen(unit);
        bool singular = x == 1 && ul > 2 && unit[0] == ' ' && unit[ul - 1] == 's';
        pipit_format(buf, size, "%g%.*s", x, (int)(singular ? ul - 1 : ul), unit);
    } else if (json_is_string(v)) {
        /* an identifier-like value reads as words: "front_lawn" -> "front lawn" */
        pipit_format(buf, size, "%.60s", json_string_value(v));
        bool identifier = strchr(buf, ' ') == NULL;
        for (char *p = buf; identifier && *p != '\0'; p++) {
            *p = *p == '_' ? ' ' : *p;
        }
    } else if (json_is_boolean(v)) {
        pipit_format(buf, size, "%s", json_is_true(v) ? "on" : "off");
    } else {
        buf[0] = '\0';
    }
}

/* Drop "at " right before the word `word` in `buf` (a zero word such as "off" or "closed"
 * put in a pattern written for numbers: "is at {v}"). */
static void drop_at_before(char *buf, const char *word) {
    size_t lw = strlen(word);
    for (char *p = strstr(buf, " at "); p != NULL; p = strstr(p + 1, " at ")) {
        if (strncmp(p + 4, word, lw) == 0 && !isalnum((unsigned char)p[4 + lw])) {
            memmove(p + 1, p + 4, strlen(p + 4) + 1);
            return;
        }
    }
}

/* "<pattern with {v}>" */
static void fill_pattern(const char *pattern, const char *value, char *buf, size_t size) {
    const char *at = strstr(pattern, "{v}");
    if (at == NULL) {
        pipit_format(buf, size, "%s", pattern);
    } else {
        pipit_format(buf, size, "%.*s%s%s", (int)(at - pattern), pattern, value, at + 3);
    }
}

/* The setter's own state sentence for value v ("The flash is on auto."); false without one. */
static bool state_template(const struct ask_key *key, const json_t *v, char *buf, size_t size) {
    if (key->tmpl == NULL) {
        return false;
    }
    json_t *args = json_object();
    if (args == NULL || json_object_set(args, key->param, (json_t *)v) != 0) {
        json_decref(args);
        return false;
    }
    char *text = render_template(key->tmpl, args, NULL, NULL, NULL);
    json_decref(args);
    if (text == NULL) {
        return false;
    }
    pipit_format(buf, size, "%s", text);
    free(text);
    return true;
}

/* A scalar as words: a string as it is, a number as printed, true / false as on / off. */
static bool scalar_text(const json_t *v, char *out, size_t size) {
    if (json_is_string(v)) {
        pipit_format(out, size, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        pipit_format(out, size, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        pipit_format(out, size, "%g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        pipit_format(out, size, "%s", json_is_true(v) ? "on" : "off");
    } else {
        return false;
    }
    return out[0] != '\0';
}

static bool ask_key_sentence(const struct ask_key *key,
                             const json_t *v,
                             enum ask_form form,
                             char *buf,
                             size_t size) {
    const struct device_key_words *d = key->dev;
    char noun[PHRASE_CAP + 8];
    if (d != NULL && d->noun != NULL) {
        pipit_format(noun, sizeof(noun), "%s", d->noun);
    } else {
        pipit_format(noun, sizeof(noun), "the %s", key->words);
    }
    char value[96];
    switch (key->type) {
        case KEY_BOOL:
            if (!json_is_boolean(v)) {
                return false;
            }
            if (json_is_true(v) && d != NULL && d->yes != NULL) {
                pipit_format(buf, size, "%s", d->yes);
            } else if (!json_is_true(v) && d != NULL && d->no != NULL) {
                pipit_format(buf, size, "%s", d->no);
            } else if (!state_template(key, v, buf, size)) {
                pipit_format(buf, size, "%s is %s.", noun, json_is_true(v) ? "on" : "off");
            }
            break;
        case KEY_NUMBER:
        case KEY_STRING:
            if (key->type == KEY_NUMBER ? !json_is_number(v) : !json_is_string(v)) {
                return false;
            }
            ask_format_value(key, v, value, sizeof(value));
            if (key->type == KEY_STRING && value[0] == '\0') {
                /* "" reads as empty, never "The panel message is ." (a new user's hot tub) */
                pipit_format(buf, size, "%s is empty.", noun);
            } else if (d != NULL && d->pattern != NULL) {
                fill_pattern(d->pattern, value, buf, size);
                if (d->zero != NULL && strcmp(value, d->zero) == 0) {
                    drop_at_before(buf, value); /* "The fan is at off." -> "The fan is off." */
                }
            } else if (!state_template(key, v, buf, size)) {
                pipit_format(buf, size, "%s is %s.", noun, value);
            }
            break;
        case KEY_ARRAY: {
            if (!json_is_array(v)) {
                return false;
            }
            size_t n = json_array_size(v);
            size_t wl = strlen(key->words);
            int one = wl > 1 && key->words[wl - 1] == 's' ? (int)(wl - 1) : (int)wl;
            if (form == ASK_AGAIN) {
                if (n == 1) {
                    pipit_format(buf, size, "Back to 1 %.*s.", one, key->words);
                } else if (n == 0) {
                    pipit_format(buf, size, "Back to no %s.", key->words);
                } else {
                    pipit_format(buf, size, "Back to %zu %s.", n, key->words);
                }
            } else if (n == 1) {
                pipit_format(buf, size, "There's 1 %.*s.", one, key->words);
            } else if (n == 0) {
                pipit_format(buf, size, "There are no %s.", key->words);
            } else {
                pipit_format(buf, size, "There are %zu %s.", n, key->words);
            }
            capitalize(buf);
            return true;
        }
        case KEY_OBJECT:
            if (!(json_is_object(v) || json_is_null(v))) {
                return false;
            }
            if (form == ASK_AGAIN) {
                pipit_format(buf, size, "%s is back as it was.", noun);
            } else if (json_object_size(v) == 0) {
                pipit_format(buf, size, "There's no %s right now.", key->words);
            } else {
                /* "The navigation: destination Dolores Park, mode walking, eta min 24." */
                size_t used = (size_t)snprintf(buf, size, "%s:", noun);
                const char *f;
                json_t *fv;
                size_t shown = 0;
                json_object_foreach((json_t *)v, f, fv) {
                    char fw[PHRASE_CAP], val[96];
                    key_words(f, fw, sizeof(fw));
                    if (shown == 4 || used >= size || !scalar_text(fv, val, sizeof(val))) {
                        continue;
                    }
                    used += (size_t)snprintf(buf + used, size - used, "%s %s %s",
                                             shown > 0 ? "," : "", fw, val);
                    shown++;
                }
                if (shown == 0 || used + 2 > size) {
                    return false;
                }
                pipit_format(buf + used, size - used, ".");
            }
            capitalize(buf);
            return true;
    }
    if (form == ASK_AGAIN) {
        size_t l = strlen(buf);
        if (l > 0 && buf[l - 1] == '.') {
            buf[l - 1] = '\0';
        }
        size_t used = strlen(buf);
        pipit_format(buf + used, size - used, " again.");
    }
    capitalize(buf);
    return true;
}

bool ask_sentence(const struct ask *k,
                  const char *key,
                  const json_t *value,
                  enum ask_form form,
                  char *buf,
                  size_t size) {
    if (buf == NULL || size == 0) {
        return false;
    }
    buf[0] = '\0';
    int i = k != NULL && key != NULL ? find_key(k, key) : -1;
    if (i < 0 || value == NULL) {
        return false;
    }
    if (!ask_key_sentence(&k->keys[i], value, form, buf, size)) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

/* Append the true sentences of `keys` to buf (space-separated). */
int ask_say_keys(const struct ask *k,
                 const int *keys,
                 size_t n_keys,
                 const json_t *state,
                 char *buf,
                 size_t size) {
    int said = 0;
    for (size_t i = 0; i < n_keys; i++) {
        char one[256];
        const json_t *v = json_object_get(state, k->keys[keys[i]].name);
        if (!ask_key_sentence(&k->keys[keys[i]], v, ASK_NOW, one, sizeof(one))) {
            continue;
        }
        size_t used = strlen(buf);
        pipit_format(buf + used, size - used, "%s%s", used > 0 ? " " : "", one);
        said++;
    }
    return said;
}

/* ============================================================================
 * questions */

/* Whether word `w` is one of the space-separated words of `phrase`. */
static bool phrase_has_word(const char *phrase, const char *w) {
    size_t n = strlen(w);
    for (const char *p = phrase; n > 0 && *p != '\0';) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, w, n) == 0) {
            return true;
        }
        p += len + (p[len] == ' ' ? 1 : 0);
    }
    return false;
}

/* A question that names a key in another word order than its name ("what colour is the
 * bedroom light" for "bedroom light colour"): its words past the opener, the glue, the
 * determiners and the state words are exactly the words of one key's name (as a set). The
 * key, or -1 when no key's name or two keys' names fit. */
static int key_by_word_set(const struct ask *k, const struct words_tok *t, size_t lo, size_t hi) {
    int found = -1;
    for (size_t a = 0; a < k->n_aliases; a++) {
        const struct ask_alias *al = &k->aliases[a];
        if (al->key < 0 || al->n_words < 2) {
            continue; /* one word is the main path's; a shared name names neither */
        }
        size_t hit = 0;
        bool fits = true;
        for (size_t i = lo; i < hi && fits; i++) {
            if (i == lo && ask_in_list(t[i].w, OPENERS, COUNT(OPENERS))) {
                continue;
            }
            if (phrase_has_word(al->phrase, t[i].w)) {
                hit++;
                continue;
            }
            fits = ask_in_list(t[i].w, GLUE, COUNT(GLUE)) ||
                   ask_in_list(t[i].w, DETERMINERS, COUNT(DETERMINERS)) ||
                   ask_in_list(t[i].w, STATE_WORDS, COUNT(STATE_WORDS));
        }
        if (!fits || hit != al->n_words) {
            continue;
        }
        if (found >= 0 && found != al->key) {
            return -1;
        }
        found = al->key;
    }
    return found;
}

bool ask_names_key(const struct ask *k, const char *text, const char *key) {
    if (k == NULL || text == NULL || key == NULL) {
        return false;
    }
    int want = find_key(k, key);
    struct words_tok t[ASK_MAX_TOKENS];
    size_t n = ask_tokenize(text, strlen(text), t, ASK_MAX_TOKENS);
    for (size_t i = 0; want >= 0 && i < n; i++) {
        int found = -1;
        if (ask_match_alias(k, t, n, i, &found) > 0 && found == want) {
            return true;
        }
    }
    return false;
}

/* "are the lights on?", "which lights are on?", "any lights on?": a question whose one word
 * of content, a plural ("lights"), is the last word of the names of two to eight switches
 * (true/false keys: "kitchen light", "bedroom light") asks about each of them; the rest of
 * its words are openers, glue, determiners and state words. Said one sentence a key, from the
 * state. 0 when it is no such question. */
static int ask_plural(const struct ask *k,
                      const struct words_tok *t,
                      size_t lo,
                      size_t hi,
                      const json_t *state,
                      char *buf,
                      size_t size) {
    size_t content = hi;
    for (size_t i = lo; i < hi; i++) {
        if ((i == lo && ask_in_list(t[i].w, OPENERS, COUNT(OPENERS))) ||
            ask_in_list(t[i].w, GLUE, COUNT(GLUE)) ||
            ask_in_list(t[i].w, DETERMINERS, COUNT(DETERMINERS)) ||
            ask_in_list(t[i].w, STATE_WORDS, COUNT(STATE_WORDS)) || ask_tok_is(t, hi, i, "any") ||
            ask_tok_is(t, hi, i, "all") || ask_tok_is(t, hi, i, "which") ||
            ask_tok_is(t, hi, i, "still")) {
            continue;
        }
        if (content != hi) {
            return 0;
        }
        content = i;
    }
    size_t wl = content < hi ? strlen(t[content].w) : 0;
    if (wl < 4 || t[content].w[wl - 1] != 's') {
        return 0;
    }
    char one[WORDS_CAP];
    pipit_format(one, sizeof(one), "%.*s", (int)(wl - 1), t[content].w);
    int keys[8];
    size_t n_keys = 0;
    for (size_t j = 0; j < k->n_keys; j++) {
        const char *w = k->keys[j].words;
        const char *last = strrchr(w, ' ');
        last = last != NULL ? last + 1 : w;
        if (k->keys[j].type != KEY_BOOL || strcmp(last, one) != 0 || last == w) {
            continue;
        }
        if (n_keys == COUNT(keys)) {
            return 0;
        }
        keys[n_keys++] = (int)j;
    }
    if (n_keys < 2) {
        return 0;
    }
    int said = ask_say_keys(k, keys, n_keys, state, buf, size);
    if (said == 0) {
        buf[0] = '\0';
    }
    return said;
}

static int
answer(const struct ask *k, const char *utterance, const json_t *state, char *buf, size_t size);

/* A key said first and then asked about as "it" ("patio sensor, is it still watching?", "the
 * grid - is it on?"): the question with the key's words in place of its "it" (written to out),
 * or false. The topic is one key's alias and nothing else; the question starts with an opener. */
static bool topic_first(const struct ask *k, const char *utterance, char *out, size_t size) {
    size_t cut = strcspn(utterance, ",:-");
    if (utterance[cut] == '\0' || cut == 0) {
        return false;
    }
    struct words_tok t[ASK_MAX_TOKENS];
    size_t n = ask_tokenize(utterance, cut, t, ASK_MAX_TOKENS);
    size_t p = 0;
    while (p < n &&
           (ask_tok_is(t, n, p, "the") || ask_tok_is(t, n, p, "my") || ask_tok_is(t, n, p, "and") ||
            ask_tok_is(t, n, p, "so") || ask_tok_is(t, n, p, "ok") || ask_tok_is(t, n, p, "hey"))) {
        p++;
    }
    int key = -1;
    size_t m = p < n ? ask_match_alias(k, t, n, p, &key) : 0;
    if (m == 0 || key < 0 || p + m != n) {
        return false;
    }
    const char *rest = utterance + cut + 1;
    while (*rest == ' ' || *rest == '-' || *rest == ',' || *rest == ':') {
        rest++;
    }
    struct words_tok q[ASK_MAX_TOKENS];
    size_t nq = ask_tokenize(rest, strlen(rest), q, ASK_MAX_TOKENS);
    if (nq < 2 || nq == ASK_MAX_TOKENS || !ask_in_list(q[0].w, OPENERS, COUNT(OPENERS))) {
        return false;
    }
    for (size_t i = 1; i < nq; i++) {
        if (ask_tok_is(q, nq, i, "it")) {
            size_t a = t[p].start, b = t[p + m - 1].end;
            pipit_format(out, size, "%.*sthe %.*s%s", (int)q[i].start, rest, (int)(b - a),
                         utterance + a, rest + q[i].end);
            return true;
        }
    }
    return false;
}

int ask_answer(const struct ask *k,
               const char *utterance,
               const json_t *state,
               char *buf,
               size_t size) {
    if (buf != NULL && size > 0) {
        buf[0] = '\0';
    }
    if (k == NULL || utterance == NULL || !json_is_object(state) || buf == NULL || size == 0) {
        return 0;
    }
    char asked[512];
    if (strlen(utterance) < sizeof(asked) && topic_first(k, utterance, asked, sizeof(asked))) {
        int n = answer(k, asked, state, buf, size);
        if (n > 0) {
            return n;
        }
        buf[0] = '\0';
    }
    return answer(k, utterance, state, buf, size);
}

static int
answer(const struct ask *k, const char *utterance, const json_t *state, char *buf, size_t size) {
    struct words_tok t[ASK_MAX_TOKENS];
    size_t len = strlen(utterance);
    size_t n = ask_tokenize(utterance, len, t, ASK_MAX_TOKENS);
    if (n == ASK_MAX_TOKENS) {
        return 0; /* a question about the state is short */
    }
    size_t lo = 0;
    size_t hi = n;
    for (size_t m; (m = ask_match_longest(t, hi, lo, LEAD_FILLERS, COUNT(LEAD_FILLERS))) > 0;) {
        lo += m;
    }
    bool tagged = false; /* "..., right?" */
    /* tags only end a statement: "what zoom is it" keeps its "is it" */
    bool opener = lo < hi && ask_in_list(t[lo].w, OPENERS, COUNT(OPENERS));
    size_t n_trail = COUNT(TRAIL_FILLERS) + (opener ? 0 : COUNT(TAGS));
    for (bool again = true; again && hi > lo;) {
        again = false;
        for (size_t f = 0; f < n_trail && !again; f++) {
            bool tag = f >= COUNT(TRAIL_FILLERS);
            const char *phrase = tag ? TAGS[f - COUNT(TRAIL_FILLERS)] : TRAIL_FILLERS[f];
            size_t nw = 1;
            for (const char *p = phrase; *p != '\0'; p++) {
                nw += *p == ' ';
            }
            if (nw < hi - lo && ask_match_phrase(t, hi, hi - nw, phrase) == nw) {
                hi -= nw;
                again = true;
                tagged = tagged || tag;
            }
        }
    }
    if (hi <= lo) {
        return 0;
    }
    /* "is it going to rain tomorrow?" asks what will be, not what is, unless its clause names
     * a key ("is the flash gonna fire?") */
    size_t q_end = strcspn(utterance, "?,;");
    bool future = false, named = false;
    for (size_t i = lo; i < hi && t[i].start < q_end; i++) {
        int key = -1;
        future = future || ask_tok_is(t, hi, i, "gonna") ||
                 (ask_tok_is(t, hi, i, "going") && ask_tok_is(t, hi, i + 1, "to"));
        named = named || (ask_match_alias(k, t, hi, i, &key) > 0 && key >= 0);
    }
    if (future && !named) {
        return 0;
    }
    if (ask_tok_is(t, hi, lo, "do") && !ask_tok_is(t, hi, lo + 1, "i") &&
        !ask_tok_is(t, hi, lo + 1, "we") && !ask_tok_is(t, hi, lo + 1, "you") &&
        !ask_tok_is(t, hi, lo + 1, "they")) {
        return 0; /* "do it in night mode" is a command; "do I have the flash on?" asks */
    }
    if ((ask_tok_is(t, hi, lo, "have") || ask_tok_is(t, hi, lo, "has")) &&
        !ask_tok_is(t, hi, lo + 1, "i") && !ask_tok_is(t, hi, lo + 1, "we") &&
        !ask_tok_is(t, hi, lo + 1, "you") && !ask_tok_is(t, hi, lo + 1, "it") &&
        !ask_tok_is(t, hi, lo + 1, "the")) {
        return 0; /* "have a look" is no question; "have I started recording" is */
    }
    if (!ask_in_list(t[lo].w, OPENERS, COUNT(OPENERS))) {
        /* a statement asked as a question: "flash is on or off?", "the flash is off, right?" */
        size_t end = len;
        while (end > 0 && (utterance[end - 1] == ' ' || utterance[end - 1] == '\n')) {
            end--;
        }
        /* "tell me the exposure setting", "remind me the zoom": asked by their lead */
        bool told = false;
        for (size_t i = 0; i < lo; i++) {
            told = told || ask_tok_is(t, hi, i, "tell") || ask_tok_is(t, hi, i, "remind");
        }
        bool asked = tagged || told || (end > 0 && utterance[end - 1] == '?');
        /* it must start "[the] <key> is ...": "zoom in, is the flash on?" is a command first */
        size_t p = lo;
        while (p < hi && (ask_tok_is(t, hi, p, "the") || ask_tok_is(t, hi, p, "my") ||
                          ask_tok_is(t, hi, p, "your") || ask_tok_is(t, hi, p, "our"))) {
            p++;
        }
        int key = -1;
        size_t m = ask_match_alias(k, t, hi, p, &key);
        /* "the flash is on?", "kitchen light still on?", "blinds open or closed?" */
        static const char *const STILL[] = {"still", "already", "currently"};
        bool either = false;
        for (size_t i = p + m + 1; i + 1 < hi; i++) {
            either = either || ask_tok_is(t, hi, i, "or");
        }
        /* a name asked alone, or with a word of its status: "zoom?", "flash status?",
         * "and the exposure?", "photo count?" */
        static const char *const STATUS[] = {"status", "count", "setting", "settings",
                                             "level",  "value", "state",   "situation"};
        /* ... or with one of its values, a question whether it has it: "grid on?", "flash
         * auto?", "grid showing?" */
        static const char *const SHOWN[] = {"on",      "off",      "showing", "shown",
                                            "visible", "enabled",  "active",  "open",
                                            "closed",  "disabled", "hidden"};
        bool value_asked =
            asked && m > 0 && key >= 0 && p + m + 1 == hi &&
            (ask_match_value(&k->keys[key], t, hi, p + m) == 1 ||
             (k->keys[key].type == KEY_BOOL && ask_in_list(t[p + m].w, SHOWN, COUNT(SHOWN))));
        if (asked && m > 0 && key >= 0 && k->keys[key].type != KEY_ARRAY &&
            (p + m == hi || value_asked ||
             (p + m + 1 == hi && ask_in_list(t[p + m].w, STATUS, COUNT(STATUS))))) {
            int said = ask_say_keys(k, &key, 1, state, buf, size);
            if (said > 0) {
                return said;
            }
            buf[0] = '\0';
            return 0;
        }
        if (!asked || m == 0 || key < 0 || p + m >= hi ||
            !(ask_in_list(t[p + m].w, COPULAS_Q, COUNT(COPULAS_Q)) ||
              ask_in_list(t[p + m].w, STILL, COUNT(STILL)) || either)) {
            return 0;
        }
    }
    if (ask_in_list(t[lo].w, OPENERS, COUNT(OPENERS))) {
        /* the name in another order: "what colour is the bedroom light" */
        int key = key_by_word_set(k, t, lo, hi);
        if (key >= 0) {
            bool what = ask_tok_is(t, hi, lo, "what") || ask_tok_is(t, hi, lo, "whats") ||
                        ask_tok_is(t, hi, lo, "whatre");
            bool determined = !what;
            for (size_t i = lo; i < hi && !determined; i++) {
                determined = ask_in_list(t[i].w, DETERMINERS, COUNT(DETERMINERS));
            }
            bool array = k->keys[key].type == KEY_ARRAY;
            if (determined && !array) {
                int said = ask_say_keys(k, &key, 1, state, buf, size);
                if (said > 0) {
                    return said;
                }
                buf[0] = '\0';
            }
        }
    }
    int keys[4];
    size_t n_keys = 0;
    bool unknown[ASK_MAX_TOKENS] = {false};
    bool counting = false;   /* "how many", "any", "number of" */
    bool determined = false; /* "the", "my", "am I": see DETERMINERS */
    uint64_t sharers = 0;    /* "how hot" of the nozzle and the bed: which one, the rest says */
    for (size_t i = lo; i < hi;) {
        int key = -1;
        uint64_t shared = 0;
        size_t m = match_alias_ranked(k, t, hi, i, &key, &shared, NULL);
        if (m > 0 && key < 0 && shared != 0) {
            sharers |= shared;
            i += m;
            continue;
        }
        if (m > 0 && key >= 0) {
            bool seen = false;
            for (size_t j = 0; j < n_keys; j++) {
                seen = seen || keys[j] == key;
            }
            if (!seen) {
                if (n_keys == COUNT(keys)) {
                    return 0;
                }
                keys[n_keys++] = key;
            }
            i += m;
            continue;
        }
        if (m > 0) {
            return 0; /* a name two keys share: the model decides */
        }
        /* "did I turn the grid on": a verb right after "did I" asks; "if so turn it off" does
         * not */
        static const char *const DID_VERBS[] = {"turn", "put", "leave", "switch", "set", "keep"};
        if (i >= lo + 2 && ask_in_list(t[i].w, DID_VERBS, COUNT(DID_VERBS)) &&
            (ask_tok_is(t, hi, i - 2, "did") || ask_tok_is(t, hi, i - 2, "have") ||
             ask_tok_is(t, hi, i - 2, "do")) &&
            (ask_tok_is(t, hi, i - 1, "i") || ask_tok_is(t, hi, i - 1, "we") ||
             ask_tok_is(t, hi, i - 1, "you"))) {
            i++;
            continue;
        }
        size_t g = ask_match_longest(t, hi, i, GLUE_PHRASES, COUNT(GLUE_PHRASES));
        if (g > 0) {
            i += g;
            continue;
        }
        double num;
        if (ask_tok_is(t, hi, i, "many") || ask_tok_is(t, hi, i, "any") ||
            ask_tok_is(t, hi, i, "number")) {
            counting = true;
        }
        if (ask_in_list(t[i].w, DETERMINERS, COUNT(DETERMINERS))) {
            determined = true;
        }
        if (!ask_in_list(t[i].w, GLUE, COUNT(GLUE)) &&
            !ask_in_list(t[i].w, STATE_WORDS, COUNT(STATE_WORDS)) &&
            !ask_parse_number(t[i].w, &num) &&
            !(i == lo && ask_in_list(t[i].w, OPENERS, COUNT(OPENERS)))) {
            unknown[i] = true;
        }
        i++;
    }
    bool outside = false; /* a key named that the quantity does not name */
    for (size_t j = 0; sharers != 0 && j < n_keys; j++) {
        outside = outside || (sharers & UINT64_C(1) << keys[j]) == 0;
    }
    if (sharers != 0 && (n_keys == 0 || outside)) {
        /* "how bright is the bedroom", "how bright is the kitchen light": a word of one
         * sharer's key name and no other's; none ("how hot is the fan"): not a state question */
        int picked = -1;
        for (size_t i = lo; i < hi && picked != -2; i++) {
            for (int q = 0; q < (int)k->n_keys && q < 64; q++) {
                char kw[PHRASE_CAP];
                key_words(k->keys[q].name, kw, sizeof(kw));
                if ((sharers & UINT64_C(1) << q) != 0 && phrase_has_word(kw, t[i].w)) {
                    picked = picked == -1 || picked == q ? q : -2;
                }
            }
        }
        if (picked < 0) {
            return 0; /* "how hot is it": which one, the model decides */
        }
        return ask_say_keys(k, &picked, 1, state, buf, size);
    }
    if (n_keys == 0 && hi - lo <= 4 && ask_in_list(t[lo].w, COPULAS_Q, COUNT(COPULAS_Q))) {
        /* "is it docked?": no key named, one value said that only one string key takes */
        int by_value = -1;
        size_t n_by_value = 0;
        for (size_t i = lo + 1; i < hi; i++) {
            for (size_t q = 0; q < k->n_keys; q++) {
                for (size_t v = 0; k->keys[q].type == KEY_STRING && v < k->keys[q].n_values; v++) {
                    if (strcmp(k->keys[q].values[v], t[i].w) == 0 && (int)q != by_value) {
                        by_value = (int)q;
                        n_by_value++;
                    }
                }
            }
        }
        if (n_by_value == 1) {
            return ask_say_keys(k, &by_value, 1, state, buf, size);
        }
    }
    if (n_keys == 0 && ask_in_list(t[lo].w, OPENERS, COUNT(OPENERS))) {
        /* "what's everything set to?", "what are the settings right now?": every key the
         * state line shows, one sentence each (at most twelve) */
        bool all = false, other = false;
        for (size_t i = lo + 1; i < hi; i++) {
            bool word = ask_tok_is(t, hi, i, "everything") || ask_tok_is(t, hi, i, "settings");
            all = all || word;
            other = other || (unknown[i] && !word);
        }
        int every[12];
        size_t n_every = 0;
        for (size_t q = 0; all && !other && q < k->n_keys && n_every < 12; q++) {
            if (k->keys[q].shown) {
                every[n_every++] = (int)q;
            }
        }
        if (n_every > 0) {
            int said = ask_say_keys(k, every, n_every, state, buf, size);
            if (said > 0) {
                return said;
            }
            buf[0] = '\0';
        }
    }
    if (n_keys == 0) {
        return ask_in_list(t[lo].w, OPENERS, COUNT(OPENERS)) || ask_tok_is(t, hi, lo, "any")
                   ? ask_plural(k, t, lo, hi, state, buf, size)
                   : 0;
    }
    if (!determined && (ask_tok_is(t, hi, lo, "what") || ask_tok_is(t, hi, lo, "which"))) {
        /* "what aspect ratio?", "which white balance?": the key right after the question
         * word, no copula, asks for its value */
        int key = -1;
        determined = ask_match_alias(k, t, hi, lo + 1, &key) > 0 && key >= 0;
    }
    /* "what's in slot two?", "what's saved in slot two?": what a thing holds */
    for (size_t i = lo + 1; i + 1 < hi && !determined; i++) {
        int key = -1;
        determined = (ask_tok_is(t, hi, i, "in") || ask_tok_is(t, hi, i, "on")) &&
                     ask_match_alias(k, t, hi, i + 1, &key) > 0 && key >= 0;
    }
    if (!determined && (ask_tok_is(t, hi, lo, "what") || ask_tok_is(t, hi, lo, "whats") ||
                        ask_tok_is(t, hi, lo, "whatre"))) {
        return 0; /* "what is exposure?" asks what exposure is */
    }
    /* the words left must be values or words of the keys asked about ("front camera",
     * "photos taken") */
    for (size_t i = lo; i < hi; i++) {
        if (!unknown[i]) {
            continue;
        }
        bool known = false;
        for (size_t j = 0; j < n_keys && !known; j++) {
            const struct ask_key *key = &k->keys[keys[j]];
            size_t m = ask_match_value(key, t, hi, i);
            if (m > 0) {
                for (size_t q = i; q < i + m; q++) {
                    unknown[q] = false;
                }
                known = true;
            }
            known = known || ask_match_phrase(t, hi, i, key->words) > 0;
            char w[PHRASE_CAP + 2];
            pipit_format(w, sizeof(w), " %s ", key->words);
            char needle[WORDS_CAP + 2];
            pipit_format(needle, sizeof(needle), " %s ", t[i].w);
            known = known || (t[i].w[0] != '\0' && strstr(w, needle) != NULL);
            /* a word of a switch's own sentences: "is the patio sensor still watching?" of
             * "The patio sensor is watching." / "... is bypassed." */
            known = known || (key->dev != NULL && t[i].w[0] != '\0' &&
                              ((key->dev->yes != NULL && says_word(key->dev->yes, t[i].w)) ||
                               (key->dev->no != NULL && says_word(key->dev->no, t[i].w))));
        }
        if (!known) {
            return 0;
        }
    }
    for (size_t j = 0; j < n_keys; j++) {
        if (k->keys[keys[j]].type == KEY_ARRAY && !counting) {
            return 0; /* "what's the status of my ticket" is not "how many tickets" */
        }
    }
    int said = ask_say_keys(k, keys, n_keys, state, buf, size);
    if (said == 0) {
        buf[0] = '\0';
    }
    return said;
}

/* Whether `w` is among tokens t[0..n), as is or with a plural "s". */
static bool said_word(const struct words_tok *t, size_t n, const char *w) {
    size_t l = strlen(w);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].w, w) == 0 ||
            (strncmp(t[i].w, w, l) == 0 && t[i].w[l] == 's' && t[i].w[l + 1] == '\0')) {
            return true;
        }
    }
    return false;
}

/* Whether every word of key q's name is among tokens t[0..n) (a plural counts). */
static bool key_all_said(const struct ask *k, int q, const struct words_tok *t, size_t n) {
    char kw[PHRASE_CAP];
    key_words(k->keys[q].name, kw, sizeof(kw));
    bool all = kw[0] != '\0';
    for (char *w = kw; all && *w != '\0';) {
        char *sp = strchr(w, ' ');
        if (sp != NULL) {
            *sp = '\0';
        }
        all = said_word(t, n, w);
        w = sp != NULL ? sp + 1 : w + strlen(w);
    }
    return all;
}

int ask_say_named_key(const struct ask *k,
                      const char *text,
                      const json_t *state,
                      char *buf,
                      size_t size) {
    if (buf != NULL && size > 0) {
        buf[0] = '\0';
    }
    if (k == NULL || text == NULL || !json_is_object(state) || buf == NULL || size == 0) {
        return 0;
    }
    struct words_tok t[ASK_MAX_TOKENS];
    size_t n = ask_tokenize(text, strlen(text), t, ASK_MAX_TOKENS);
    int named[8];
    size_t n_named = 0;
    bool by_name = false; /* a key named by a name, not only by a quantity */
    for (size_t i = 0; i < n && n < ASK_MAX_TOKENS;) {
        int key = -1, rank = 0;
        uint64_t shared = 0;
        size_t m = match_alias_ranked(k, t, n, i, &key, &shared, &rank);
        bool seen = key < 0;
        for (size_t j = 0; j < n_named && !seen; j++) {
            seen = named[j] == key;
        }
        if (m > 0 && !seen && n_named < 8) {
            named[n_named++] = key;
        }
        by_name = by_name || (m > 0 && key >= 0 && rank < 2);
        i += m > 0 ? m : 1;
    }
    /* keys whose name's words are all said ("what colour are the kitchen lights":
     * kitchen_colour), beside those named by a name */
    for (int q = 0; q < (int)k->n_keys && n_named < 8; q++) {
        bool all = key_all_said(k, q, t, n), seen = false;
        for (size_t j = 0; j < n_named && !seen; j++) {
            seen = named[j] == q;
        }
        if (all && !seen) {
            named[n_named++] = q;
        }
        by_name = by_name || all;
    }
    /* "what colour ...": the word after "what" or "which" picks the key it is a word of */
    size_t lo = 0;
    while (lo < n && ask_in_list(t[lo].w, LEAD_FILLERS, COUNT(LEAD_FILLERS))) {
        lo++;
    }
    if (n_named > 1 && lo + 1 < n &&
        (ask_tok_is(t, n, lo, "what") || ask_tok_is(t, n, lo, "which"))) {
        int head = -1;
        for (size_t j = 0; j < n_named && head != -2; j++) {
            char kw[PHRASE_CAP];
            key_words(k->keys[named[j]].name, kw, sizeof(kw));
            if (phrase_has_word(kw, t[lo + 1].w)) {
                head = head == -1 ? named[j] : -2;
            }
        }
        if (head >= 0) {
            return ask_say_keys(k, &head, 1, state, buf, size);
        }
    }
    /* a quantity alone ("how hot") is no name: "how hot is it in tokyo" asks the world, and
     * only a question the lexicon reads whole (ask_answer()) takes it for the thermostat; it
     * still counts as a second key ("how long can a phone record video": not the recording) */
    int pick = n_named == 1 && by_name ? named[0] : -1;
    if (pick >= 0 && lo + 1 < n &&
        (ask_tok_is(t, n, lo, "what") || ask_tok_is(t, n, lo, "whats") ||
         ask_tok_is(t, n, lo, "which"))) {
        /* "what's the difference between RAW and JPEG": the thing asked about, right after
         * the question word, must be the key */
        static const char *const COPULA[] = {"is", "s", "are"};
        static const char *const OWNER[] = {"the", "my", "our", "your", "its", "this", "current"};
        size_t h = lo + 1;
        bool copula = ask_tok_is(t, n, lo, "whats");
        while (h < n && ask_in_list(t[h].w, COPULA, COUNT(COPULA))) {
            copula = true;
            h++;
        }
        if (copula && !(h < n && ask_in_list(t[h].w, OWNER, COUNT(OWNER)))) {
            h = n; /* "what is exposure" asks what it is; "what is the exposure" asks its value */
        }
        while (h < n && ask_in_list(t[h].w, OWNER, COUNT(OWNER))) {
            h++;
        }
        int at = -1;
        char kw[PHRASE_CAP];
        key_words(k->keys[pick].name, kw, sizeof(kw));
        if (h >= n || !(phrase_has_word(kw, t[h].w) ||
                        (ask_match_alias(k, t, n, h, &at) > 0 && at == pick))) {
            pick = -1;
        }
    }
    for (size_t j = 0; n_named > 1 && j < n_named && pick != -2; j++) {
        /* "what colour are the kitchen lights": the key whose name's words are all said */
        bool all = key_all_said(k, named[j], t, n);
        if (all) {
            pick = pick == -1 ? named[j] : -2;
        }
    }
    return pick >= 0 ? ask_say_keys(k, &pick, 1, state, buf, size) : 0;
}
