/*
 * agent_heard.c - what the person said, read for the guards (agent_guard.c, agent_choice.c,
 * agent_choose.c, agent_switch.c): words and their typos, values, switch sides, negations and
 * the verbs that open a command (docs/agent.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_heard.h"

#include "agent_impl.h"
#include "agent_number.h"
#include "agent_said.h"
#include "pattern.h"
#include "router.h"
#include "toolspec.h"
#include "verbbank.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *const HEARD_SAY_TRUE[HEARD_N_SAY_TRUE] = {"on", "enable", "enabled", "activate",
                                                      "show"};

const char *const HEARD_SAY_FALSE[HEARD_N_SAY_FALSE] = {
    "off", "disable", "disabled", "deactivate", "hide", "lose", "kill", "ditch", "remove", "rid"};

/* parts of a boolean's name that make "on" mean false */
const char *const HEARD_NEGATIVE_NAMES[HEARD_N_NEGATIVE_NAMES] = {
    "mute",  "disable", "hide",    "hidden",    "off", "block",
    "silen", "pause",   "private", "incognito", "dnd"};

/* words for off: a switch call that changed nothing keeps off with one (agent_switch.c) */
const char *const HEARD_OFF_WORDS[HEARD_N_OFF_WORDS] = {
    "off",     "disable", "disabled", "deactivate", "hide",  "drop", "away",  "free",  "kill",
    "remove",  "lose",    "rid",      "cut",        "stop",  "end",  "quit",  "close", "unlock",
    "release", "clear",   "cancel",   "ditch",      "scrap", "lift", "exit",  "leave", "down",
    "pause",   "halt",    "finish",   "done",       "shut",  "less", "lower", "unpin",
};

static const char *const ON_SIDE[] = {"on", "start", "true", "enable", "enabled", "open", "yes"};

static const char *const OFF_SIDE[] = {"off",      "stop",  "false", "disable",
                                       "disabled", "close", "no"};

/* Words that open a request without being its verb. */
const char *const HEARD_OPENERS[HEARD_N_OPENERS] = {
    "please", "pls",  "can",   "could",   "would", "you",     "just", "now",
    "hey",    "ok",   "okay",  "kindly",  "right", "alright", "so",   "then",
    "and",    "also", "quick", "quickly", "go",    "ahead",   "oh",   "well"};

/* Edits between two words, case aside: a letter put in, dropped or changed, or two neighbours
 * swapped (optimal string alignment), so "falsh" is one from "flash", as the training data's
 * typos are (train_add_typo()). */
size_t heard_edit_distance(const char *a, size_t la, const char *b, size_t lb) {
    size_t prev2[GUARD_MAX_COPY + 1], prev[GUARD_MAX_COPY + 1], row[GUARD_MAX_COPY + 1];
    for (size_t j = 0; j <= lb; j++) {
        prev[j] = j;
        prev2[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        row[0] = i;
        int ai = tolower((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            int bj = tolower((unsigned char)b[j - 1]);
            size_t best = prev[j - 1] + (ai == bj ? 0 : 1);
            best = prev[j] + 1 < best ? prev[j] + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && prev2[j - 2] + 1 < best) {
                best = prev2[j - 2] + 1; /* two neighbours swapped: "falsh" */
            }
            row[j] = best;
        }
        memcpy(prev2, prev, (lb + 1) * sizeof(prev[0]));
        memcpy(prev, row, (lb + 1) * sizeof(row[0]));
    }
    return prev[lb];
}

/* The first place `needle` occurs in `hay`, case aside; NULL when nowhere (or empty). */
const char *heard_find_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (const char *p = hay; n > 0 && *p != '\0'; p++) {
        if (strncasecmp(p, needle, n) == 0) {
            return p;
        }
    }
    return NULL;
}

/* Whether `needle` occurs in `hay`, case aside. */
bool heard_contains_nocase(const char *hay, const char *needle) {
    return heard_find_nocase(hay, needle) != NULL;
}

/* `v` as a lowercase phrase ("living_room" -> "living room"); false when it is not one. */
bool heard_value_phrase(const char *v, char *out, size_t size) {
    size_t n = 0;
    for (const char *p = v; *p != '\0'; p++) {
        char c = *p == '_' || *p == '-' ? ' ' : (char)tolower((unsigned char)*p);
        if (n + 1 >= size || (c == ' ' && (n == 0 || out[n - 1] == ' '))) {
            return false;
        }
        out[n++] = c;
    }
    out[n] = '\0';
    return n > 0 && out[n - 1] != ' ';
}

/* Whether the tokens say enum value `phrase`: as whole words, or a one-word value of 4 letters
 * or more as the start of a word ("automatic" says "auto", "portraits" says "portrait"), but
 * not as a comparative ("warmer" is no "warm": it asks for a change). */
bool heard_says_value(const struct words_tok *t, size_t n, const char *phrase) {
    size_t lp = strlen(phrase);
    for (size_t i = 0; lp >= 4 && strchr(phrase, ' ') == NULL && i < n; i++) {
        const char *rest = t[i].w + lp;
        if (strncmp(t[i].w, phrase, lp) == 0 && strcmp(rest, "er") != 0 &&
            strcmp(rest, "est") != 0 && strcmp(rest, "r") != 0 && strcmp(rest, "st") != 0) {
            return true;
        }
        /* "descaling", "descaled" for "descale" */
        if (phrase[lp - 1] == 'e' && strncmp(t[i].w, phrase, lp - 1) == 0 &&
            (strcmp(t[i].w + lp - 1, "ing") == 0 || strcmp(t[i].w + lp - 1, "ed") == 0)) {
            return true;
        }
    }
    return agent_said_phrase(t, n, phrase);
}

/* Whether the segment says boolean `name`'s stem ("lock" of "locked", "arm" of "armed") as a
 * word's start: *undone when with "un" or "dis" before it, anywhere ("unlock", "disarm"), *done
 * when without, as the verb that opens the segment ("lock it up"; "release the lock" says the
 * noun). */
void heard_said_stem(const char *name,
                     const struct words_tok *tok,
                     size_t n,
                     bool *done,
                     bool *undone) {
    *done = *undone = false;
    char stems[3][WORDS_CAP];
    size_t ln = strlen(name), n_stems = 0;
    if (ln < 3 || ln >= WORDS_CAP || strpbrk(name, "_- ") != NULL) {
        return;
    }
    for (size_t i = 0; i <= ln; i++) {
        stems[0][i] = (char)tolower((unsigned char)name[i]);
    }
    n_stems = 1;
    if (ln >= 5 &&
        strcmp(stems[0] + ln - 2, "ed") == 0) { /* "locked" -> "lock", "muted" -> "mute" */
        memcpy(stems[1], stems[0], ln - 2);
        stems[1][ln - 2] = '\0';
        memcpy(stems[2], stems[0], ln - 1);
        stems[2][ln - 1] = '\0';
        n_stems = 3;
    }
    size_t verb = heard_skip_openers(tok, n);
    for (size_t i = 0; i < n; i++) {
        const char *w = tok[i].w;
        size_t pre = strncmp(w, "un", 2) == 0 ? 2 : strncmp(w, "dis", 3) == 0 ? 3 : 0;
        for (size_t k = 0; k < n_stems; k++) {
            size_t ls = strlen(stems[k]);
            if (ls < 3) {
                continue;
            }
            if (pre > 0 && strncmp(w + pre, stems[k], ls) == 0) {
                *undone = true;
            } else if (i == verb && strncmp(w, stems[k], ls) == 0) {
                *done = true;
            }
        }
    }
}

/* "turn of the flash": "of" right after a verb of switching is "off" mistyped, and so is "of"
 * that ends a segment with such a verb ("turn the flsh of"); the tokens are rewritten. */
void heard_read_mistyped_off(struct words_tok *tok, size_t n) {
    static const char *const SWITCH_VERBS[] = {"turn", "switch", "shut", "turned", "switched"};
    for (size_t i = 1; i < n; i++) {
        if (strcmp(tok[i].w, "of") == 0 &&
            (agent_said_any(tok + i - 1, 1, SWITCH_VERBS, N_OF(SWITCH_VERBS)) ||
             (i + 1 == n && agent_said_any(tok, i, SWITCH_VERBS, N_OF(SWITCH_VERBS))))) {
            pipit_format(tok[i].w, sizeof(tok[i].w), "off");
        }
    }
}

/* Whether the tokens negate, leaving out negation words inside a name of the pack's: "enable
 * do not disturb" names set_do_not_disturb and negates nothing. The names: each tool's name
 * less its first word ("do not disturb" of set_do_not_disturb), and the state keys' names. */
bool heard_negates(const struct pipit_toolset *ts, const struct words_tok *tok, size_t n) {
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t m = n < GUARD_MAX_TOKENS ? n : GUARD_MAX_TOKENS;
    memcpy(t, tok, m * sizeof(t[0]));
    for (size_t i = 0; ts != NULL && i < ts->n_tools; i++) {
        char ph[WORDS_CAP * 3];
        const char *name = ts->tools[i].name;
        const char *rest = name + strcspn(name, "_ ");
        rest += strspn(rest, "_ ");
        if (*rest == '\0' || !heard_value_phrase(rest, ph, sizeof(ph)) || strchr(ph, ' ') == NULL) {
            continue;
        }
        for (size_t j = 0; j < m; j++) {
            size_t k = words_match(t, m, j, ph);
            for (size_t x = j; x < j + k; x++) {
                t[x].w[0] = '\0';
            }
        }
    }
    const struct pipit_pack *pack = ts != NULL ? pipit_toolset_pack(ts) : NULL;
    for (size_t k = 0; pack != NULL && k < pack->n_keys; k++) {
        char ph[WORDS_CAP * 3];
        if (!heard_value_phrase(pack->keys[k].key, ph, sizeof(ph)) || strchr(ph, ' ') == NULL) {
            continue;
        }
        for (size_t j = 0; j < m; j++) {
            size_t c = words_match(t, m, j, ph);
            for (size_t x = j; x < j + c; x++) {
                t[x].w[0] = '\0';
            }
        }
    }
    return agent_said_negation(t, m);
}

/* For an enum that is a switch: the index of its on-side and off-side values; false if not. */
bool heard_enum_switch(const struct pipit_schema *s, size_t *on, size_t *off) {
    bool has_on = false, has_off = false;
    for (size_t e = 0; e < s->n_enum; e++) {
        if (!has_on && words_in_list(s->enum_str[e], ON_SIDE, N_OF(ON_SIDE))) {
            *on = e;
            has_on = true;
        } else if (!has_off && words_in_list(s->enum_str[e], OFF_SIDE, N_OF(OFF_SIDE))) {
            *off = e;
            has_off = true;
        }
    }
    return has_on && has_off;
}

/* Whether token `w` is `name` (a word of a tool's or key's name): the same, a longer form
 * ("recording" for "record"), or one slip away ("flsh"). */
bool heard_word_names(const char *w, const char *name, size_t len) {
    size_t lw = strlen(w);
    if (len < 2 || lw == 0 || len > GUARD_MAX_COPY || lw > GUARD_MAX_COPY) {
        return false;
    }
    if (lw == len && strncasecmp(w, name, len) == 0) {
        return true;
    }
    if (len >= 4 && lw > len && strncasecmp(w, name, len) == 0) {
        return true;
    }
    size_t pre = strncmp(w, "un", 2) == 0 ? 2 : strncmp(w, "dis", 3) == 0 ? 3 : 0;
    if (pre > 0 && len >= 3 && lw >= pre + len && strncasecmp(w + pre, name, len) == 0) {
        return true; /* "unlock" names the lock, "disarm" the arm_alarm */
    }
    return len >= 4 && lw >= 4 && heard_edit_distance(w, lw, name, len) <= 1;
}

/* Whether any word of `text` (split at '_', ' ' and '|') names a token of the segment. */
bool heard_text_named(const char *text, const struct words_tok *tok, size_t n) {
    static const char *const SKIP[] = {"set",    "get",    "toggle", "turn", "switch", "change",
                                       "adjust", "update", "and",    "the",  "of",     "my",
                                       "to",     "for",    "with",   "by",   "from",   "at"};
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, "_ |");
        char word[WORDS_CAP];
        if (len > 0 && len < sizeof(word)) {
            memcpy(word, p, len);
            word[len] = '\0';
            for (size_t i = 0; i < n && !words_in_list(word, SKIP, N_OF(SKIP)); i++) {
                if (heard_word_names(tok[i].w, word, len)) {
                    return true;
                }
            }
        }
        p += len;
        p += *p != '\0';
    }
    return false;
}

/* Whether the segment names what `tool` switches: a word of its name, of the keys it changes
 * or of their declared names ("pin the focus": ae_af_locked is also "focus lock"). */
bool heard_names_switch(const struct pipit_toolset *ts,
                        size_t tool,
                        const struct words_tok *tok,
                        size_t n) {
    if (heard_text_named(ts->tools[tool].name, tok, n)) {
        return true;
    }
    const char *const *keys = NULL;
    size_t n_keys = 0;
    pipit_toolset_undo(ts, tool, &keys, &n_keys);
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t k = 0; k < n_keys; k++) {
        const struct pipit_pack_key *pk = pipit_pack_find_key(pack, keys[k]);
        if (heard_text_named(keys[k], tok, n) ||
            (pk != NULL && pk->words.names != NULL && heard_text_named(pk->words.names, tok, n))) {
            return true;
        }
    }
    return false;
}

/* Whether the segment says one of the call's values: a string value in words, a number. */
bool heard_says_a_value_of(const json_t *args,
                           const char *segment,
                           const struct words_tok *tok,
                           size_t n) {
    double nums[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n_nums = agent_numbers_written(segment, 0, nums, raw, GUARD_MAX_NUMBERS);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)args, key, v) {
        char ph[WORDS_CAP * 2];
        if (json_is_string(v) && heard_value_phrase(json_string_value(v), ph, sizeof(ph)) &&
            heard_says_value(tok, n, ph)) {
            return true;
        }
        for (size_t k = 0; json_is_number(v) && k < n_nums; k++) {
            if (raw[k] == json_number_value(v)) {
                return true;
            }
        }
    }
    return false;
}

/* Whether the segment is, but for openers and fillers, a verb people use for value `ph` when
 * the value is a verb of the bank (verbbank.h: "ok carry on", "keep going please" for
 * "resume"); "drop the temperature" says no "cancel". */
bool heard_says_verb_of(const struct words_tok *tok, size_t n, const char *ph) {
    static const char *const FILLERS[] = {"it",    "that", "this", "please", "pls",
                                          "now",   "then", "ok",   "okay",   "thanks",
                                          "again", "for",  "me",   "go",     "ahead"};
    const char *alt[VERBBANK_MAX_ALT];
    int k = strchr(ph, ' ') == NULL ? verbbank_alternatives(ph, alt) : 0;
    size_t v = heard_skip_openers(tok, n);
    for (int i = 0; i < k && v < n; i++) {
        size_t m = words_count(alt[i]);
        if (words_match(tok, n, v, alt[i]) != m) {
            continue;
        }
        bool rest = true;
        for (size_t j = v + m; j < n && rest; j++) {
            rest = words_in_list(tok[j].w, FILLERS, N_OF(FILLERS));
        }
        if (rest) {
            return true;
        }
    }
    return false;
}

/* Whether the segment's verb is the verb of comparative value `ph` (one word ending in "er",
 * five letters or more): "dim" or "dims" for "dimmer", "brighten" for "brighter", "warm" for
 * "warmer" ("dim the kitchen a little" had switched the kitchen light on). */
bool heard_says_comparative(const struct words_tok *tok, size_t n, const char *ph) {
    size_t lp = strlen(ph), v = heard_skip_openers(tok, n);
    if (lp < 5 || lp >= WORDS_CAP || strchr(ph, ' ') != NULL || strcmp(ph + lp - 2, "er") != 0 ||
        v >= n) {
        return false;
    }
    char base[WORDS_CAP], forms[5][WORDS_CAP + 4];
    pipit_format(base, sizeof(base), "%.*s", (int)(lp - 2), ph);
    size_t lb = lp - 2;
    bool doubled = lb >= 3 && base[lb - 1] == base[lb - 2] && strchr("aeiou", base[lb - 1]) == NULL;
    pipit_format(forms[0], sizeof(forms[0]), "%s", base);
    pipit_format(forms[1], sizeof(forms[1]), "%ss", base);
    pipit_format(forms[2], sizeof(forms[2]), "%sen", base);
    pipit_format(forms[3], sizeof(forms[3]), "%.*s", (int)(doubled ? lb - 1 : lb), base);
    pipit_format(forms[4], sizeof(forms[4]), "%.*ss", (int)(doubled ? lb - 1 : lb), base);
    for (size_t f = 0; f < 5; f++) {
        if (strlen(forms[f]) >= 3 && strcmp(tok[v].w, forms[f]) == 0) {
            return true;
        }
    }
    return false;
}

/* The string enum values that name a setting and that the segment says: 4 letters or more
 * ("daylight", "living room", a word's start: "portraits"), no word of a reversal ("back"), no
 * switch side ("start", "stop": "down half a stop"), no cloud tool's. Returns how many; the
 * first `max` go to tools[], args[] and values[] (max 0: only counted). */
size_t heard_settings_said(const struct pipit_toolset *ts,
                           const struct words_tok *tok,
                           size_t n,
                           size_t *tools,
                           size_t *args,
                           const char **values,
                           bool *verbs,
                           size_t max) {
    size_t found = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t j = 0;
             t->params != NULL && !pipit_toolset_is_cloud(ts, i) && j < t->params->n_props; j++) {
            const struct pipit_schema *s = t->params->props[j].schema;
            for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
                /* the value, or a word its description gives it ("low (gentle)": "gentle fan is
                 * fine" says low) */
                char alt[9][PIPIT_SCHEMA_WORD_CAP];
                pipit_format(alt[0], sizeof(alt[0]), "%s", s->enum_str[e]);
                int n_alt = 1 + pipit_schema_value_words(s, s->enum_str[e], alt + 1, 8);
                for (int w = 0; w < n_alt; w++) {
                    char ph[WORDS_CAP * 2];
                    if (strlen(alt[w]) >= (w == 0 ? 4u : 3u) &&
                        heard_value_phrase(alt[w], ph, sizeof(ph)) && !router_undo_signal(ph) &&
                        !words_in_list(ph, ON_SIDE, N_OF(ON_SIDE)) &&
                        !words_in_list(ph, OFF_SIDE, N_OF(OFF_SIDE)) &&
                        (heard_says_value(tok, n, ph) || heard_says_verb_of(tok, n, ph) ||
                         heard_says_comparative(tok, n, ph))) {
                        if (found < max) {
                            tools[found] = i;
                            args[found] = j;
                            values[found] = s->enum_str[e];
                            verbs[found] =
                                !heard_says_value(tok, n, ph) && heard_says_comparative(tok, n, ph);
                        }
                        found++;
                        break;
                    }
                }
            }
        }
    }
    return found;
}

/* The index of the first token after the words that open a request (HEARD_OPENERS). */
size_t heard_skip_openers(const struct words_tok *tok, size_t n) {
    size_t v = 0;
    while (v < n && agent_said_any(tok + v, 1, HEARD_OPENERS, N_OF(HEARD_OPENERS))) {
        v++;
    }
    return v;
}

/* Whether `w` is `lead` or, with `bank`, one of the verbs people use for it (verbbank.h: "grab"
 * for "snap"), one word. */
bool heard_verb_is(const char *lead, const char *w, bool bank) {
    return bank ? verbbank_says(lead, w) : strcmp(lead, w) == 0;
}

/* The one tool some of whose examples open with `w` (after HEARD_OPENERS), or -1: none or two. When
 * no example opens with it, the one tool an example of which opens with a verb `w` is said
 * for ("grab him mid-jump": take_photo's "snap one of the dog"). */
int32_t heard_example_verb_tool(const struct pipit_toolset *ts, const char *w) {
    for (int bank = 0; bank < 2; bank++) {
        int32_t found = -1;
        for (size_t i = 0; i < ts->n_tools; i++) {
            const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
            for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
                struct words_tok t[8];
                const char *say = tp->examples[e].say;
                size_t n = words_tokenize(say, strlen(say), 0, t, 8), v = heard_skip_openers(t, n);
                if (v < n && heard_verb_is(t[v].w, w, bank != 0)) {
                    if (found >= 0 && found != (int32_t)i) {
                        return -1;
                    }
                    found = (int32_t)i;
                }
            }
        }
        if (found >= 0) {
            return found;
        }
    }
    return -1;
}

/* Whether the segment names the model's call: a word of its tool or keys, or one of its
 * values. */
bool heard_names_call(const struct pipit_toolset *ts,
                      int32_t tool,
                      const struct pipit_call *call,
                      const char *segment,
                      const struct words_tok *tok,
                      size_t n) {
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool named = !json_is_object(args) || heard_names_switch(ts, (size_t)tool, tok, n) ||
                 heard_says_a_value_of(args, segment, tok, n);
    json_decref(args);
    return named;
}

/* Tool `i`'s one required argument when it is a number and the only required one, else NULL. */
const struct pipit_schema_prop *heard_one_required_number(const struct pipit_tool *t) {
    const struct pipit_schema_prop *need = pipit_tool_only_required(t, NULL);
    return need != NULL && (need->schema->type == PIPIT_SCHEMA_NUMBER ||
                            need->schema->type == PIPIT_SCHEMA_INTEGER)
               ? need
               : NULL;
}

/* Whether `w` names a word of `text` (split at anything not a letter or digit). */
bool heard_names_word_of(const char *w, const char *text) {
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = 0;
        while (isalnum((unsigned char)p[len])) {
            len++;
        }
        if (len > 0 && heard_word_names(w, p, len)) {
            return true;
        }
        p += len > 0 ? len : 1;
    }
    return false;
}

/* Whether `w` names anything of the pack: a tool's name, description, argument or enum value,
 * an example's words, a state key or its declared names; a longer form or one slip away. */
bool heard_pack_names(const struct pipit_toolset *ts, const char *w) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (pipit_toolset_is_cloud(ts, i)) {
            continue;
        }
        if (heard_names_word_of(w, t->name) ||
            (t->description != NULL && heard_names_word_of(w, t->description))) {
            return true;
        }
        for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
            const struct pipit_schema *s = t->params->props[j].schema;
            if (heard_names_word_of(w, t->params->props[j].name)) {
                return true;
            }
            /* the words its description gives a value ("economy (eco, saver)") */
            for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
                char alt[8][PIPIT_SCHEMA_WORD_CAP];
                int n_alt = pipit_schema_value_words(s, s->enum_str[e], alt, 8);
                if (heard_names_word_of(w, s->enum_str[e])) {
                    return true;
                }
                for (int a = 0; a < n_alt; a++) {
                    if (heard_names_word_of(w, alt[a])) {
                        return true;
                    }
                }
            }
        }
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
            if (tp->examples[e].say != NULL && heard_names_word_of(w, tp->examples[e].say)) {
                return true;
            }
        }
    }
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t k = 0; pack != NULL && k < pack->n_keys; k++) {
        const struct pipit_pack_key *pk = &pack->keys[k];
        if (heard_names_word_of(w, pk->key) ||
            (pk->words.names != NULL && heard_names_word_of(w, pk->words.names)) ||
            (pk->words.noun != NULL && heard_names_word_of(w, pk->words.noun))) {
            return true;
        }
        for (size_t e = 0; pk->type == PIPIT_SCHEMA_STRING && e < pk->n_enum; e++) {
            if (heard_names_word_of(w, pk->enum_str[e])) {
                return true;
            }
        }
    }
    for (size_t v = 0; pack != NULL && v < pack->n_nouns; v++) {
        if (heard_names_word_of(w, pack->nouns[v])) {
            return true;
        }
    }
    return false;
}
