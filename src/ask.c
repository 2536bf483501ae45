/*
 * ask.c - state questions answered from the state, and plain-text claims checked against it.
 *
 * One lexicon per agent, built from the pack at creation: for every scalar or array state key,
 * the phrases that name it (aliases) and, for string keys, the values a sentence may claim.
 * Aliases come from three places, ranked: (0) the device's own names and the key's words
 * ("timer_s" -> "timer"); (1) the words of a tool that changes exactly this key, minus generic
 * verbs ("switch_camera" -> "camera"), and the singular of an array key ("alarms" -> "alarm").
 * A phrase two keys claim at the same rank names neither (both "focus_x" and "focus_y" give
 * "focus"): a question with it goes to the model.
 *
 * A question: after leading and trailing fillers, it starts with a question word ("is", "what",
 * "which", "how", "do", "any", ...) and every other word is a key's alias, a generic question
 * or state word ("the", "am", "at", "set", "on", "currently", ...), a value of a named key, a
 * word of a named key, or a number. Anything else makes it another intent.
 *
 * A claim: in one sentence, a key's alias followed by a copula ("is", "are", "'s", "set to")
 * and a value ("The zoom is 1x."), a boolean key as a predicate ("It's recording.", "It isn't
 * recording."), or a value before the alias and "is active/on" after it ("The front camera is
 * active."). A claim whose value differs from the state makes its sentence wrong.
 */
#include "ask.h"

#include "render.h"
#include "status.h"
#include "words.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PHRASE_CAP 64 /* bytes per alias phrase */
#define MAX_VALUES 24 /* values remembered per string key */
#define VALUE_CAP  48

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ============================================================================
 * generic English (no pack nouns here) */

/* Words a question may start with. */
static const char *const OPENERS[] = {"where", "wheres", "is",    "isnt",    "are",   "arent", "am",
                                      "was",   "what",   "whats", "which",   "how",   "hows",  "do",
                                      "does",  "any",    "if",    "whether", "whatre"};

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
    "right",
    "well",
};

/* Dropped at the end of a question. */
static const char *const TRAIL_FILLERS[] = {
    "please", "right now", "now",       "currently",  "at the moment", "still",   "again",
    "then",   "thanks",    "thank you", "by the way", "pipit",         "exactly", "anymore",
    "at all", "today",     "for me",    "or not",     "already",       "yet",     "right",
};

/* Tags that make a statement a question: "the flash is off, right?" */
static const char *const TAGS[] = {"right",    "correct", "isnt it", "is it",
                                   "arent we", "are we",  "yeah",    "yes",
                                   "no",       "true",    "or not",  "am i right"};

/* A statement asked as a question ("flash is on or off?") needs one of these. */
static const char *const COPULAS_Q[] = {"is", "isnt", "are", "arent", "am", "s"};

/* Words a question may hold anywhere besides the keys and their values. */
static const char *const GLUE[] = {
    "a",       "an",     "long",  "and",     "the",      "or",    "my",     "our",       "your",
    "its",     "it",     "this",  "that",    "i",        "im",    "we",     "were",      "you",
    "me",      "is",     "isnt",  "are",     "arent",    "am",    "was",    "be",        "been",
    "being",   "at",     "in",    "to",      "of",       "for",   "set",    "currently", "current",
    "now",     "right",  "still", "used",    "using",    "what",  "whats",  "which",     "how",
    "much",    "many",   "any",   "there",   "theres",   "have",  "has",    "got",       "if",
    "whether", "status", "state", "setting", "settings", "value", "turned", "switched",  "so",
    "far",     "number", "count", "up",      "selected", "use",   "left",   "remaining", "remain",
    "remains", "longs",  "time",
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
    "on",    "off",   "enabled", "disabled", "active",   "inactive", "true",
    "false", "yes",   "no",      "locked",   "unlocked", "running",  "set",
    "unset", "going", "open",    "opened",   "closed",   "shut",
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
};

/* Boolean words in claims. */
static const char *const TRUE_WORDS[] = {"on",     "enabled", "true",   "yes",
                                         "active", "locked",  "running"};
static const char *const FALSE_WORDS[] = {"off", "disabled", "false", "no", "inactive", "unlocked"};

/* Copulas between a key and its claimed value: "the zoom is 2x", "the zoom's at 2x", "the
 * timer is set to 3 seconds". */
static const char *const COPULAS[] = {"is", "are", "was", "s", "isnt", "arent", "wasnt"};
static const char *const AFTER_COPULA[] = {"now", "currently", "still",   "set",
                                           "to",  "at",        "already", "also"};

/* Before a boolean key used as a predicate: "it's recording", "we are recording". */
static const char *const PREDICATE_LEADS[] = {"is", "its",       "are", "were",  "am",
                                              "im", "currently", "now", "still", "s"};
static const char *const NEGATIONS[] = {"not", "isnt", "arent", "wasnt", "no"};

/* Words of tool names that say what is done, not to what. */
static const char *const TOOL_VERBS[] = {
    "set",    "get",    "adjust", "switch", "take",   "toggle", "enable", "disable",
    "change", "update", "start",  "stop",   "turn",   "do",     "make",   "process",
    "with",   "to",     "cancel", "create", "append", "add",    "remove", "delete",
    "tap",    "read",   "find",   "open",   "send",   "share",  "search", "request",
    "the",    "a",      "of",     "for",    "and",    "or",     "by",     "from",
};

/* ============================================================================
 * the lexicon */

enum key_type {
    KEY_BOOL = 0,
    KEY_NUMBER = 1,
    KEY_STRING = 2,
    KEY_ARRAY = 3,
    KEY_OBJECT = 4,
};

struct ask_key {
    char name[PIPIT_TOOLSPEC_MAX_NAME + 1];
    enum key_type type;
    char words[PHRASE_CAP];             /* "white balance", "timer" */
    const struct device_key_words *dev; /* NULL: none */
    size_t n_values;
    char values[MAX_VALUES][VALUE_CAP]; /* string keys: values a sentence may claim, lowercase */
    const char *tmpl;                   /* the setter's success template when it says the state
                                           ("The flash is {mode:auto=on auto}."), else NULL;
                                           borrowed from the tool set */
    char param[PIPIT_TOOLSPEC_MAX_NAME + 1]; /* the setter's one argument */
    size_t n_shows;
    char show_text[MAX_VALUES][VALUE_CAP];  /* how the template shows a value ("on auto") */
    char show_value[MAX_VALUES][VALUE_CAP]; /* ... that value ("auto", "0") */
};

struct ask_alias {
    char phrase[PHRASE_CAP]; /* lowercase words joined by one space */
    int key;                 /* index into keys; -1: two keys claim it (names neither) */
    int rank;
    size_t n_words;
};

struct ask {
    struct ask_key keys[ASK_MAX_KEYS];
    size_t n_keys;
    struct ask_alias aliases[ASK_MAX_ALIASES];
    size_t n_aliases;
};

/* ============================================================================
 * tokens (words.c) */

static bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* Words of s[0..len), at most max; a sign before a digit is part of the number ("-1"). */
static size_t tokenize(const char *s, size_t len, struct words_tok *out, size_t max) {
    return words_tokenize(s, len, WORDS_SIGNS, out, max);
}

static bool tok_is(const struct words_tok *t, size_t n, size_t i, const char *w) {
    return words_is(t, n, i, w);
}

/* Tokens the phrase ("white balance") matches at i, or 0. */
static size_t match_phrase(const struct words_tok *t, size_t n, size_t i, const char *phrase) {
    return words_match(t, n, i, phrase);
}

static size_t match_longest(const struct words_tok *t,
                            size_t n,
                            size_t i,
                            const char *const *list,
                            size_t n_list) {
    return words_match_longest(t, n, i, list, n_list);
}

static bool in_list(const char *w, const char *const *list, size_t n_list) {
    return words_in_list(w, list, n_list);
}

/* A number word: "2", "2x", "0.5", "-1", "+1.5". */
static bool parse_number(const char *w, double *out) {
    if (w[0] == '\0') {
        return false;
    }
    char *end = NULL;
    double v = strtod(w, &end);
    if (end == w || !(is_digit((unsigned char)w[0]) || w[0] == '-' || w[0] == '+')) {
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
static bool normalize(const char *phrase, char *out, size_t size, size_t *n_words) {
    struct words_tok t[8];
    size_t n = tokenize(phrase, strlen(phrase), t, COUNT(t));
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
    if (!normalize(phrase, norm, sizeof(norm), &nw)) {
        return;
    }
    for (size_t i = 0; i < k->n_aliases; i++) {
        struct ask_alias *a = &k->aliases[i];
        if (strcmp(a->phrase, norm) != 0) {
            continue;
        }
        if (a->key == key) {
            a->rank = rank < a->rank ? rank : a->rank;
        } else if (rank < a->rank) {
            a->key = key;
            a->rank = rank;
        } else if (rank == a->rank) {
            a->key = -1; /* two keys at the same rank: it names neither */
        }
        return;
    }
    if (k->n_aliases < ASK_MAX_ALIASES) {
        struct ask_alias *a = &k->aliases[k->n_aliases++];
        memcpy(a->phrase, norm, sizeof(norm));
        a->key = key;
        a->rank = rank;
        a->n_words = nw;
    }
}

static void add_value(struct ask_key *key, const char *value) {
    char norm[VALUE_CAP];
    size_t nw = 0;
    if (!normalize(value, norm, sizeof(norm), &nw)) {
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
 * one argument: "The flash is {mode:auto=on auto}." does, "Zoom set to {level}x." does not.
 * Its value map becomes the key's shown values ("on auto" is "auto"). */
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
            if (normalize(text, key->show_text[key->n_shows], VALUE_CAP, &nw) &&
                normalize(value, key->show_value[key->n_shows], VALUE_CAP, &nw)) {
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
    if (pipit_toolset_undo(ts, t, &keys, &n_keys) != PIPIT_UNDO_KEYS || n_keys != 1) {
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
            if (!in_list(w, TOOL_VERBS, COUNT(TOOL_VERBS)) && used + wl + 2 < sizeof(phrase)) {
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
        }
    }
}

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
        if (key->type == KEY_OBJECT) {
            continue; /* no generic sentence says an object's value */
        }
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
                }
                p += l;
                if (*p == '|') {
                    p++;
                }
            }
        }
    }
    for (size_t t = 0; t < ts->n_tools; t++) {
        add_tool(k, ts, t);
    }
    *out = k;
    return PIPIT_OK;
}

void ask_free(struct ask *k) {
    free(k);
}

/* The longest alias at token i: its key (-1: ambiguous) and *len its tokens; 0 when none. */
static size_t
match_alias(const struct ask *k, const struct words_tok *t, size_t n, size_t i, int *key) {
    size_t best = 0;
    for (size_t a = 0; a < k->n_aliases; a++) {
        if (k->aliases[a].n_words <= best) {
            continue;
        }
        size_t m = match_phrase(t, n, i, k->aliases[a].phrase);
        if (m > best) {
            best = m;
            *key = k->aliases[a].key;
        }
    }
    return best;
}

/* Tokens of a value of `key` at i, as a value ("auto") or as the template shows one ("on
 * auto"), or 0; *as (may be NULL) receives the value it stands for. The longest wins. */
static size_t match_value_as(const struct ask_key *key,
                             const struct words_tok *t,
                             size_t n,
                             size_t i,
                             const char **as) {
    size_t best = 0;
    for (size_t v = 0; v < key->n_values; v++) {
        size_t m = match_phrase(t, n, i, key->values[v]);
        if (m > best) {
            best = m;
            if (as != NULL) {
                *as = key->values[v];
            }
        }
    }
    for (size_t v = 0; v < key->n_shows; v++) {
        size_t m = match_phrase(t, n, i, key->show_text[v]);
        if (m > best) {
            best = m;
            if (as != NULL) {
                *as = key->show_value[v];
            }
        }
    }
    return best;
}

static size_t
match_value(const struct ask_key *key, const struct words_tok *t, size_t n, size_t i) {
    return match_value_as(key, t, n, i, NULL);
}

/* ============================================================================
 * sentences */

static void capitalize(char *s) {
    if (s[0] >= 'a' && s[0] <= 'z') {
        s[0] = (char)(s[0] - 'a' + 'A');
    }
}

/* The value of a number or string key as a sentence says it: "2x", "3 seconds", "off". */
static void format_value(const struct ask_key *key, const json_t *v, char *buf, size_t size) {
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
        pipit_format(buf, size, "%.60s", json_string_value(v));
    } else if (json_is_boolean(v)) {
        pipit_format(buf, size, "%s", json_is_true(v) ? "on" : "off");
    } else {
        buf[0] = '\0';
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

static bool key_sentence(const struct ask_key *key,
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
            format_value(key, v, value, sizeof(value));
            if (d != NULL && d->pattern != NULL) {
                fill_pattern(d->pattern, value, buf, size);
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
            if (form != ASK_AGAIN || !(json_is_object(v) || json_is_null(v))) {
                return false;
            }
            pipit_format(buf, size, "%s is back as it was.", noun);
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
    if (!key_sentence(&k->keys[i], value, form, buf, size)) {
        buf[0] = '\0';
        return false;
    }
    return true;
}

/* Append the true sentences of `keys` to buf (space-separated). */
static int say_keys(const struct ask *k,
                    const int *keys,
                    size_t n_keys,
                    const json_t *state,
                    char *buf,
                    size_t size) {
    int said = 0;
    for (size_t i = 0; i < n_keys; i++) {
        char one[256];
        const json_t *v = json_object_get(state, k->keys[keys[i]].name);
        if (!key_sentence(&k->keys[keys[i]], v, ASK_NOW, one, sizeof(one))) {
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
    struct words_tok t[ASK_MAX_TOKENS];
    size_t len = strlen(utterance);
    size_t n = tokenize(utterance, len, t, ASK_MAX_TOKENS);
    if (n == ASK_MAX_TOKENS) {
        return 0; /* a question about the state is short */
    }
    size_t lo = 0;
    size_t hi = n;
    for (size_t m; (m = match_longest(t, hi, lo, LEAD_FILLERS, COUNT(LEAD_FILLERS))) > 0;) {
        lo += m;
    }
    bool tagged = false; /* "..., right?" */
    /* tags only end a statement: "what zoom is it" keeps its "is it" */
    bool opener = lo < hi && in_list(t[lo].w, OPENERS, COUNT(OPENERS));
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
            if (nw < hi - lo && match_phrase(t, hi, hi - nw, phrase) == nw) {
                hi -= nw;
                again = true;
                tagged = tagged || tag;
            }
        }
    }
    if (hi <= lo) {
        return 0;
    }
    if (!in_list(t[lo].w, OPENERS, COUNT(OPENERS))) {
        /* a statement asked as a question: "flash is on or off?", "the flash is off, right?" */
        size_t end = len;
        while (end > 0 && (utterance[end - 1] == ' ' || utterance[end - 1] == '\n')) {
            end--;
        }
        bool asked = tagged || (end > 0 && utterance[end - 1] == '?');
        /* it must start "[the] <key> is ...": "zoom in, is the flash on?" is a command first */
        size_t p = lo;
        while (p < hi && (tok_is(t, hi, p, "the") || tok_is(t, hi, p, "my") ||
                          tok_is(t, hi, p, "your") || tok_is(t, hi, p, "our"))) {
            p++;
        }
        int key = -1;
        size_t m = match_alias(k, t, hi, p, &key);
        if (!asked || m == 0 || key < 0 || p + m >= hi ||
            !in_list(t[p + m].w, COPULAS_Q, COUNT(COPULAS_Q))) {
            return 0;
        }
    }
    int keys[4];
    size_t n_keys = 0;
    bool unknown[ASK_MAX_TOKENS] = {false};
    bool counting = false;   /* "how many", "any", "number of" */
    bool determined = false; /* "the", "my", "am I": see DETERMINERS */
    for (size_t i = lo; i < hi;) {
        int key = -1;
        size_t m = match_alias(k, t, hi, i, &key);
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
        size_t g = match_longest(t, hi, i, GLUE_PHRASES, COUNT(GLUE_PHRASES));
        if (g > 0) {
            i += g;
            continue;
        }
        double num;
        if (tok_is(t, hi, i, "many") || tok_is(t, hi, i, "any") || tok_is(t, hi, i, "number")) {
            counting = true;
        }
        if (in_list(t[i].w, DETERMINERS, COUNT(DETERMINERS))) {
            determined = true;
        }
        if (!in_list(t[i].w, GLUE, COUNT(GLUE)) &&
            !in_list(t[i].w, STATE_WORDS, COUNT(STATE_WORDS)) && !parse_number(t[i].w, &num) &&
            !(i == lo && in_list(t[i].w, OPENERS, COUNT(OPENERS)))) {
            unknown[i] = true;
        }
        i++;
    }
    if (n_keys == 0) {
        return 0;
    }
    if (!determined &&
        (tok_is(t, hi, lo, "what") || tok_is(t, hi, lo, "whats") || tok_is(t, hi, lo, "whatre"))) {
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
            size_t m = match_value(key, t, hi, i);
            if (m > 0) {
                for (size_t q = i; q < i + m; q++) {
                    unknown[q] = false;
                }
                known = true;
            }
            known = known || match_phrase(t, hi, i, key->words) > 0;
            char w[PHRASE_CAP + 2];
            pipit_format(w, sizeof(w), " %s ", key->words);
            char needle[WORDS_CAP + 2];
            pipit_format(needle, sizeof(needle), " %s ", t[i].w);
            known = known || (t[i].w[0] != '\0' && strstr(w, needle) != NULL);
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
    int said = say_keys(k, keys, n_keys, state, buf, size);
    if (said == 0) {
        buf[0] = '\0';
    }
    return said;
}

/* ============================================================================
 * claims */

enum claim {
    CLAIM_NONE = 0,
    CLAIM_RIGHT = 1,
    CLAIM_WRONG = 2,
};

static enum claim judge_bool(const json_t *v, bool claimed) {
    return json_is_boolean(v) && json_is_true(v) == claimed ? CLAIM_RIGHT : CLAIM_WRONG;
}

/* A claimed value at token p for `key` (after a copula): right, wrong or none. */
static enum claim judge_value(const struct ask_key *key,
                              const json_t *v,
                              const struct words_tok *t,
                              size_t n,
                              size_t p) {
    bool negated = false;
    if (p < n && in_list(t[p].w, NEGATIONS, COUNT(NEGATIONS))) {
        negated = true;
        p++;
    }
    if (p >= n) {
        return CLAIM_NONE;
    }
    const char *w = t[p].w;
    switch (key->type) {
        case KEY_BOOL:
            if (in_list(w, TRUE_WORDS, COUNT(TRUE_WORDS))) {
                return judge_bool(v, !negated);
            }
            if (in_list(w, FALSE_WORDS, COUNT(FALSE_WORDS))) {
                return judge_bool(v, negated);
            }
            return CLAIM_NONE;
        case KEY_NUMBER: {
            double x;
            bool zero_word =
                key->dev != NULL && key->dev->zero != NULL && strcmp(w, key->dev->zero) == 0;
            const char *as = NULL;
            bool shown = match_value_as(key, t, n, p, &as) > 0 && parse_number(as, &x);
            if (negated || !json_is_number(v) || (!shown && !parse_number(w, &x) && !zero_word)) {
                return CLAIM_NONE;
            }
            if (zero_word && !shown) {
                x = 0;
            }
            double real = json_number_value(v);
            return fabs(real - x) <= 1e-9 * fmax(1.0, fabs(real)) ? CLAIM_RIGHT : CLAIM_WRONG;
        }
        case KEY_STRING: {
            const char *as = NULL;
            size_t m = match_value_as(key, t, n, p, &as);
            if (m == 0 || as == NULL || !json_is_string(v)) {
                return CLAIM_NONE;
            }
            char real[VALUE_CAP];
            size_t nw = 0;
            if (!normalize(json_string_value(v), real, sizeof(real), &nw)) {
                return CLAIM_NONE;
            }
            bool same = strcmp(as, real) == 0;
            /* "the flash isn't on" is wrong exactly when it is on */
            return same != negated ? CLAIM_RIGHT : CLAIM_WRONG;
        }
        case KEY_ARRAY:
        case KEY_OBJECT:
            break;
    }
    return CLAIM_NONE;
}

/* Judge every claim of one sentence (tokens t[0..n)); the keys it names go into keys[]. */
static enum claim judge_sentence(const struct ask *k,
                                 const json_t *state,
                                 const struct words_tok *t,
                                 size_t n,
                                 int *keys,
                                 size_t *n_keys,
                                 size_t max_keys) {
    enum claim worst = CLAIM_NONE;
    for (size_t i = 0; i < n;) {
        int key = -1;
        size_t m = match_alias(k, t, n, i, &key);
        if (m == 0 || key < 0) {
            i += m > 0 ? m : 1;
            continue;
        }
        const struct ask_key *kk = &k->keys[key];
        const json_t *v = json_object_get(state, kk->name);
        enum claim c = CLAIM_NONE;
        /* "the zoom is 1x", "the timer is set to 3 seconds", "the flash isn't on" */
        size_t p = i + m;
        if (p < n && in_list(t[p].w, COPULAS, COUNT(COPULAS))) {
            bool neg = strcmp(t[p].w, "isnt") == 0 || strcmp(t[p].w, "arent") == 0 ||
                       strcmp(t[p].w, "wasnt") == 0;
            p++;
            for (size_t s = 0; s < 3 && p < n && in_list(t[p].w, AFTER_COPULA, COUNT(AFTER_COPULA));
                 s++) {
                p++;
            }
            if (neg) {
                /* "isn't on": judge "not on" */
                struct words_tok nt[ASK_MAX_TOKENS];
                size_t nn = 0;
                nt[nn].kind = WORDS_WORD;
                pipit_format(nt[nn++].w, WORDS_CAP, "not");
                for (size_t q = p; q < n && nn < ASK_MAX_TOKENS; q++) {
                    nt[nn++] = t[q];
                }
                c = judge_value(kk, v, nt, nn, 0);
            } else {
                c = judge_value(kk, v, t, n, p);
                /* "the front camera is active": the value before the name */
                if (c == CLAIM_NONE && kk->type == KEY_STRING && i > 0 && p < n &&
                    (tok_is(t, n, p, "active") || tok_is(t, n, p, "on") ||
                     tok_is(t, n, p, "selected") || tok_is(t, n, p, "in"))) {
                    size_t b = i;
                    while (b > 0 && match_value(kk, t, i, b - 1) == 0 && i - b < 3) {
                        b--;
                    }
                    if (b > 0 && match_value(kk, t, i, b - 1) > 0) {
                        c = judge_value(kk, v, t, i, b - 1);
                    }
                }
            }
        }
        /* "it's recording", "we aren't recording", "not recording" */
        if (c == CLAIM_NONE && kk->type == KEY_BOOL && i > 0) {
            if (in_list(t[i - 1].w, NEGATIONS, COUNT(NEGATIONS))) {
                c = judge_bool(v, false);
            } else if (in_list(t[i - 1].w, PREDICATE_LEADS, COUNT(PREDICATE_LEADS))) {
                c = judge_bool(v, true);
            }
        }
        if (c != CLAIM_NONE) {
            bool seen = false;
            for (size_t j = 0; j < *n_keys; j++) {
                seen = seen || keys[j] == key;
            }
            if (!seen && *n_keys < max_keys) {
                keys[(*n_keys)++] = key;
            }
            worst = c > worst ? c : worst;
        }
        i += m;
    }
    return worst;
}

/* End of the sentence starting at s[b]: one past its terminator (".", "!", "?" not between
 * digits, or a newline), or len. */
static size_t sentence_end(const char *s, size_t b, size_t len) {
    for (size_t i = b; i < len; i++) {
        char c = s[i];
        if (c == '\n') {
            return i + 1;
        }
        if (c == '!' || c == '?' ||
            (c == '.' && !(i > 0 && i + 1 < len && is_digit((unsigned char)s[i - 1]) &&
                           is_digit((unsigned char)s[i + 1])))) {
            size_t e = i + 1;
            while (e < len && (s[e] == '.' || s[e] == '!' || s[e] == '?')) {
                e++;
            }
            return e;
        }
    }
    return len;
}

char *ask_correct(const struct ask *k, const char *text, const json_t *state, int *n_fixed) {
    int dummy = 0;
    if (n_fixed == NULL) {
        n_fixed = &dummy;
    }
    *n_fixed = 0;
    if (k == NULL || text == NULL || !json_is_object(state)) {
        return NULL;
    }
    size_t len = strlen(text);
    size_t cap = len + 1;
    char *out = NULL;
    size_t used = 0;
    size_t b = 0;
    while (b < len) {
        size_t e = sentence_end(text, b, len);
        struct words_tok t[ASK_MAX_TOKENS];
        size_t n = tokenize(text + b, e - b, t, ASK_MAX_TOKENS);
        int keys[8];
        size_t n_keys = 0;
        char truth[1024] = "";
        size_t last = e;
        while (last > b && (text[last - 1] == ' ' || text[last - 1] == '\n')) {
            last--;
        }
        bool question = last > b && text[last - 1] == '?'; /* a question claims nothing */
        bool wrong = !question &&
                     judge_sentence(k, state, t, n, keys, &n_keys, COUNT(keys)) == CLAIM_WRONG &&
                     say_keys(k, keys, n_keys, state, truth, sizeof(truth)) > 0;
        /* the text, with this sentence replaced when it was wrong (the whitespace around it
         * stays) */
        size_t lead = 0;
        size_t trail = 0;
        if (wrong) {
            while (b + lead < e && (text[b + lead] == ' ' || text[b + lead] == '\n')) {
                lead++;
            }
            while (e - trail > b + lead &&
                   (text[e - trail - 1] == ' ' || text[e - trail - 1] == '\n')) {
                trail++;
            }
        }
        size_t piece_len = wrong ? lead + strlen(truth) + trail : e - b;
        if (out == NULL || used + piece_len + 1 > cap) {
            size_t want = used + piece_len + 1;
            cap = want > cap * 2 ? want : cap * 2;
            char *grown = realloc(out, cap);
            if (grown == NULL) {
                free(out);
                *n_fixed = -1;
                return NULL;
            }
            out = grown;
        }
        if (wrong) {
            memcpy(out + used, text + b, lead);
            memcpy(out + used + lead, truth, strlen(truth));
            memcpy(out + used + lead + strlen(truth), text + e - trail, trail);
            (*n_fixed)++;
        } else {
            memcpy(out + used, text + b, e - b);
        }
        used += piece_len;
        out[used] = '\0';
        b = e;
    }
    if (*n_fixed == 0) {
        free(out);
        return NULL;
    }
    return out;
}
