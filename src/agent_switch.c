/*
 * agent_switch.c - switches and guesses: a switch call that changes nothing, a side, direction,
 * number or value nobody said, a stray call, and a thing the pack does not have
 * (docs/agent.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_switch.h"

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

bool agent_switch_asks_current(const struct pipit_toolset *ts,
                               int32_t tool,
                               const json_t *args,
                               const json_t *state) {
    if (ts == NULL || tool < 0 || (size_t)tool >= ts->n_tools || !json_is_object(args) ||
        !json_is_object(state)) {
        return false;
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
        const struct pipit_effect_set *es = &tp->set[k];
        if (es->key.key_arg != NULL || es->value.arg == NULL) {
            continue;
        }
        const json_t *v = json_object_get(args, es->value.arg);
        if (v != NULL && es->value.map != NULL) {
            v = json_is_string(v) ? json_object_get(es->value.map, json_string_value(v)) : NULL;
        }
        const json_t *now = json_object_get(state, es->key.key);
        if ((json_is_boolean(v) || json_is_string(v)) && now != NULL &&
            json_equal((json_t *)v, (json_t *)now)) {
            return true;
        }
    }
    return false;
}

/* ============================================================================ no-op toggles
 *
 * A tiny model mixes up the two sides of a switch ("get the flash going" -> mode "off", "grid
 * away" -> enabled true), and the state shows it: the call changes nothing. A person rarely
 * asks for what already is, so a switch call that changed nothing is read as the other side,
 * unless the person said this side: a word for off ("off", "drop", "away", "free", "kill",
 * ...) keeps off, and an on-side value is only turned off when such a word is there ("use the
 * flash" when it is on stays on). Negations and values the person named ("turn the flash
 * off") keep the call as it is. Switches: booleans, and enums with an on/off-like pair ("on" and
 * "off", "start" and "stop", ...): the flash's "auto" is neither side, so it is never flipped
 * to or from. */

bool agent_flip_noop_switch(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            json_t *args) {
    if (ts == NULL || tool < 0 || (size_t)tool >= ts->n_tools || segment == NULL ||
        !json_is_object(args)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const char *name = NULL;
    const struct pipit_schema *sw = NULL;
    for (size_t i = 0; i < t->params->n_props; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        size_t on = 0, off = 0;
        bool is_switch =
            s->type == PIPIT_SCHEMA_BOOLEAN ||
            (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0 && heard_enum_switch(s, &on, &off));
        if (is_switch && json_object_get(args, t->params->props[i].name) != NULL) {
            if (sw != NULL) {
                return false; /* two switches: which one the person meant is not clear */
            }
            sw = s;
            name = t->params->props[i].name;
        }
    }
    if (sw == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    heard_read_mistyped_off(tok, n);
    if (heard_negates(ts, tok, n)) {
        return false;
    }
    if (!heard_names_switch(ts, (size_t)tool, tok, n)) {
        return false; /* "sounds like a plan" -> a lock call: a stray call is not read as meant */
    }
    bool off_said = agent_said_any(tok, n, HEARD_OFF_WORDS, N_OF(HEARD_OFF_WORDS));
    json_t *v = json_object_get(args, name);
    if (sw->type == PIPIT_SCHEMA_BOOLEAN) {
        bool done = false, undone = false;
        heard_said_stem(name, tok, n, &done, &undone);
        if (done != undone) {
            return false; /* "disarm" when it is not armed: the side said, already so */
        }
        for (size_t k = 0; k < N_OF(HEARD_NEGATIVE_NAMES); k++) {
            if (heard_contains_nocase(name, HEARD_NEGATIVE_NAMES[k])) {
                return false; /* "mute": which side is "off" is the other way round */
            }
        }
        bool on = json_is_true(v);
        if (on ? !off_said : off_said) {
            return false;
        }
        return json_object_set_new(args, name, json_boolean(!on)) == 0;
    }
    size_t on_i = 0, off_i = 0;
    heard_enum_switch(sw, &on_i, &off_i);
    const char *cur = json_string_value(v);
    if (cur == NULL) {
        return false;
    }
    bool on = strcmp(cur, sw->enum_str[on_i]) == 0;
    if (!on && strcmp(cur, sw->enum_str[off_i]) != 0) {
        return false; /* a third value ("auto") */
    }
    for (size_t e = 0; e < sw->n_enum; e++) {
        char ph[WORDS_CAP * 2];
        if (heard_value_phrase(sw->enum_str[e], ph, sizeof(ph)) && heard_says_value(tok, n, ph) &&
            ((e != on_i && e != off_i) || strcmp(sw->enum_str[e], cur) == 0)) {
            return false; /* "put the flash on auto", "turn the flash off" when it is off */
        }
    }
    if (on ? !off_said : off_said) {
        return false;
    }
    return json_object_set_new(args, name, json_string(sw->enum_str[on ? off_i : on_i])) == 0;
}

bool agent_switch_guessed(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    size_t n_req = 0;
    bool is_switch = false;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema *sc = t->params->props[j].schema;
        size_t a = 0, b = 0;
        if (t->params->props[j].required) {
            n_req++;
            is_switch = sc->type == PIPIT_SCHEMA_BOOLEAN ||
                        (sc->type == PIPIT_SCHEMA_STRING && sc->n_enum > 0 &&
                         heard_enum_switch(sc, &a, &b));
        }
    }
    if (n_req != 1 || !is_switch) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    static const char *const FOLLOW_UP[] = {"again", "other", "back", "that", "it", "too", "also"};
    /* words that switch something on or off without naming the side ("that's enough, cut") */
    static const char *const SIDE_VERBS[] = {
        "start",    "stop",   "begin",  "end",  "cut",   "finish",   "pause",      "resume",
        "kill",     "drop",   "hide",   "show", "use",   "no",       "without",    "lose",
        "ditch",    "enough", "go",     "want", "need",  "turn",     "switch",     "toggle",
        "flip",     "put",    "get",    "keep", "leave", "activate", "deactivate", "mute",
        "unmute",   "lock",   "unlock", "done", "quit",  "halt",     "unpause",    "continue",
        "commence", "launch", "fire",   "kick", "boot",  "shut",     "silence"};
    size_t v = heard_skip_openers(tok, n);
    return n < GUARD_MAX_TOKENS && !heard_names_call(ts, tool, call, segment, tok, n) &&
           !agent_says_a_side(tok, n) && !agent_said_any(tok, n, FOLLOW_UP, N_OF(FOLLOW_UP)) &&
           !agent_said_any(tok, n, SIDE_VERBS, N_OF(SIDE_VERBS)) &&
           !(v < n && heard_example_verb_tool(ts, tok[v].w) == tool);
}

bool agent_choose_extreme_value(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call) {
    static const char *const LEVELS[] = {"low",  "medium", "high", "min",  "max",  "gentle",
                                         "soft", "strong", "weak", "slow", "fast", "mid"};
    static const char *const TOP[] = {"full power", "full blast",     "full speed", "full strength",
                                      "max",        "maximum",        "highest",    "strongest",
                                      "top speed",  "all the way up", "fastest",    "full whack"};
    static const char *const BOTTOM[] = {"lowest",  "minimum",  "min",        "gentlest",
                                         "weakest", "slowest",  "softest",    "little bit of",
                                         "bit of",  "touch of", "a little of"};
    /* "crank the fan all the way": the top, unless a word of down says which way */
    static const char *const DOWNWARD[] = {"down", "off", "out", "low", "lower"};
    if (ts == NULL || segment == NULL || call == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    bool all_the_way = agent_said_phrase(tok, n, "all the way") &&
                       !agent_said_any(tok, n, DOWNWARD, N_OF(DOWNWARD));
    int side = agent_said_any(tok, n, TOP, N_OF(TOP)) || all_the_way ? 1
               : agent_said_any(tok, n, BOTTOM, N_OF(BOTTOM))        ? -1
                                                                     : 0;
    if (n >= GUARD_MAX_TOKENS || side == 0 || heard_negates(ts, tok, n)) {
        return false;
    }
    size_t found = 0, n_found = 0, arg = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (pipit_toolset_is_cloud(ts, i) || t->params == NULL ||
            !heard_names_switch(ts, i, tok, n)) {
            continue;
        }
        size_t n_req = 0, j_enum = 0, levels = 0;
        for (size_t j = 0; j < t->params->n_props; j++) {
            const struct pipit_schema *s = t->params->props[j].schema;
            if (!t->params->props[j].required) {
                continue;
            }
            n_req++;
            for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
                levels += words_in_list(s->enum_str[e], LEVELS, N_OF(LEVELS)) ? 1 : 0;
            }
            j_enum = j;
        }
        if (n_req == 1 && levels >= 2) {
            found = i;
            arg = j_enum;
            n_found++;
        }
    }
    if (n_found != 1) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, found);
    const struct pipit_schema *s = t->params->props[arg].schema;
    size_t pick = side > 0 ? s->n_enum - 1 : 0;
    while (side < 0 && pick + 1 < s->n_enum &&
           !words_in_list(s->enum_str[pick], LEVELS, N_OF(LEVELS))) {
        pick++; /* "off" is no level: the lowest that runs */
    }
    if (found == (size_t)tool) {
        json_t *had = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
        const char *v = json_string_value(json_object_get(had, t->params->props[arg].name));
        bool same = v != NULL && strcmp(v, s->enum_str[pick]) == 0;
        json_decref(had);
        if (same) {
            return false;
        }
    }
    json_t *args = json_object();
    json_object_set_new(args, t->params->props[arg].name, json_string(s->enum_str[pick]));
    return agent_said_replace_call(call, t, args); /* frees the model's arguments */
}

bool agent_direction_guessed(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             const struct pipit_call *call) {
    static const char *const DIRECTIONS[] = {"in", "out", "up", "down"};
    static const char *const DETERMINERS[] = {"this",  "that", "the",   "my",   "his",
                                              "her",   "our",  "their", "your", "these",
                                              "those", "its",  "every"};
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *dir = NULL;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema *sc = t->params->props[j].schema;
        if (sc->type == PIPIT_SCHEMA_NUMBER || sc->type == PIPIT_SCHEMA_INTEGER) {
            return false;
        }
        if (t->params->props[j].required) {
            if (dir != NULL || sc->type != PIPIT_SCHEMA_STRING || sc->n_enum < 2) {
                return false;
            }
            dir = &t->params->props[j];
        }
    }
    for (size_t e = 0; dir != NULL && e < dir->schema->n_enum; e++) {
        if (!words_in_list(dir->schema->enum_str[e], DIRECTIONS, N_OF(DIRECTIONS))) {
            return false; /* an enum of directions only */
        }
    }
    json_t *args = dir != NULL ? json_loads(call->args_json, 0, NULL) : NULL;
    const char *v = json_string_value(json_object_get(args, dir != NULL ? dir->name : ""));
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    struct words_tok other[GUARD_MAX_TOKENS]; /* "zoomed in" names the zoom; "in" alone not */
    memcpy(other, tok, n * sizeof(tok[0]));
    for (size_t i = 0; i < n; i++) {
        if (words_in_list(other[i].w, DIRECTIONS, N_OF(DIRECTIONS))) {
            other[i].w[0] = '\0';
        }
    }
    bool guessed =
        v != NULL && n < GUARD_MAX_TOKENS && !heard_names_switch(ts, (size_t)tool, other, n);
    bool said = false; /* the chosen value said, each time before a determiner */
    for (size_t e = 0; guessed && e < dir->schema->n_enum; e++) {
        const char *o = dir->schema->enum_str[e];
        for (size_t i = 0; guessed && i < n; i++) {
            if (strcmp(tok[i].w, o) != 0) {
                continue;
            }
            /* another value said, or this one not before a determiner */
            guessed = strcmp(o, v) == 0 && i + 1 < n &&
                      words_in_list(tok[i + 1].w, DETERMINERS, N_OF(DETERMINERS));
            said = true;
        }
    }
    json_decref(args);
    return guessed && said; /* "get a little closer": a word for it, the model's to read */
}

bool agent_number_guessed(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    if (heard_one_required_number(t) == NULL || (tp != NULL && tp->has_step)) {
        return false; /* a step is said by its direction, without naming a number */
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    double nums[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    if (n >= GUARD_MAX_TOKENS ||
        agent_numbers_written(segment, 0, nums, raw, GUARD_MAX_NUMBERS) > 0) {
        return false;
    }
    /* words that move or bound a setting without naming it ("a bit more", "max it", "all the
     * way", "brighter") or mean the last one ("again", "do it"); "that" does not
     * ("look at that view") */
    static const char *const MOVES[] = {
        "more",  "less",   "bit",      "little",   "again", "other",   "back",    "too",
        "it",    "also",   "same",     "way",      "much",  "lot",     "further", "undo",
        "up",    "down",   "max",      "maximum",  "min",   "minimum", "highest", "lowest",
        "half",  "double", "quarter",  "off",      "none",  "zero",    "reset",   "default",
        "raise", "lower",  "increase", "decrease", "boost", "drop",    "dim",     "fewer"};
    if (agent_said_any(tok, n, MOVES, N_OF(MOVES)) ||
        heard_names_call(ts, tool, call, segment, tok, n)) {
        return false;
    }
    /* "one" as a pronoun ("no one else around", "the other one", "one of them") says no
     * number */
    static const char *const ONE_AFTER[] = {"no",   "some", "any",   "every",   "each",
                                            "the",  "this", "that",  "which",   "other",
                                            "last", "a",    "first", "another", "next"};
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        bool pronoun =
            strcmp(tok[i].w, "one") == 0 &&
            ((i > 0 && agent_said_any(tok + i - 1, 1, ONE_AFTER, N_OF(ONE_AFTER))) ||
             (i + 1 < n && (strcmp(tok[i + 1].w, "else") == 0 || strcmp(tok[i + 1].w, "of") == 0)));
        if ((words_number_value(tok[i].w, &v) && !pronoun) || words_is_comparative(tok[i].w)) {
            return false; /* "ten", "a dozen"; "brighter", "warmest": a comparative */
        }
    }
    size_t v = heard_skip_openers(tok, n);
    return !(v < n && heard_example_verb_tool(ts, tok[v].w) == tool);
}

bool agent_stray_call(const struct pipit_toolset *ts,
                      int32_t tool,
                      const char *segment,
                      const json_t *args) {
    if (ts == NULL || tool < 0 || (size_t)tool >= ts->n_tools || segment == NULL ||
        !json_is_object(args)) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    /* follow-ups name nothing and mean the last thing: "a bit more" at the top of the zoom */
    static const char *const FOLLOW_UP[] = {
        "more", "less", "again", "another", "other", "further", "bit", "little",
        "same", "back", "way",   "too",     "also",  "much",    "lot", "that"};
    if (heard_names_switch(ts, (size_t)tool, tok, n) ||
        agent_said_any(tok, n, FOLLOW_UP, N_OF(FOLLOW_UP))) {
        return false; /* "drop the timer" -> timer 5: about the timer, however wrong */
    }
    double nums[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n_nums = agent_numbers_written(segment, 0, nums, raw, GUARD_MAX_NUMBERS);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)args, key, v) {
        if (json_is_number(v)) {
            for (size_t k = 0; k < n_nums; k++) {
                if (raw[k] == json_number_value(v)) {
                    return false; /* "set it to 5" */
                }
            }
        } else if (json_is_string(v)) {
            char ph[WORDS_CAP * 2];
            if (heard_contains_nocase(segment, json_string_value(v)) ||
                (heard_value_phrase(json_string_value(v), ph, sizeof(ph)) &&
                 heard_says_value(tok, n, ph))) {
                return false; /* "landscape" */
            }
        }
    }
    return true;
}

/* ============================================================================ unknown things
 *
 * "turn on HDR for the candles" in the camera pack: the thing to switch is none of the pack's,
 * and a tiny model picks the nearest switch it knows (the grid). A switch phrase names its
 * thing ("turn on X", "turn X off", "switch on X", "enable X", "activate X", ...); when no word
 * of X names anything of the pack (a tool's name, description, argument or enum value, an
 * example's words, a state key or its declared names; a longer form or one slip away), the
 * request is for something the pack does not have. */

/* Whether a number argument of tool `name` takes `v` ("set the heating to 18" with a
 * temperature tool: the model found the thing by another word; its number comes back later). */
static bool tool_takes_number(const struct pipit_toolset *ts, const char *name, double v) {
    int32_t i = name != NULL ? pipit_toolset_find(ts, name) : -1;
    const struct pipit_tool *t = i >= 0 ? pipit_toolset_tool(ts, (size_t)i) : NULL;
    for (size_t j = 0; t != NULL && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema *sc = t->params->props[j].schema;
        if ((sc->type == PIPIT_SCHEMA_NUMBER || sc->type == PIPIT_SCHEMA_INTEGER) &&
            (!sc->has_min || v >= sc->min) && (!sc->has_max || v <= sc->max)) {
            return true;
        }
    }
    return false;
}

/* Whether `w` is a value of a place argument (a string enum that picks the key an effect
 * writes, "{room}_light": "bedroom", "kitchen"), or a word of one ("living" of living_room). */
static bool is_place_word(const struct pipit_toolset *ts, const char *w) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
            const char *arg = tp->set[k].key.key_arg;
            for (size_t j = 0; arg != NULL && t->params != NULL && j < t->params->n_props; j++) {
                const struct pipit_schema *s = t->params->props[j].schema;
                if (strcmp(t->params->props[j].name, arg) != 0) {
                    continue;
                }
                for (size_t e = 0; e < s->n_enum; e++) {
                    if (s->enum_str != NULL && s->enum_str[e] != NULL &&
                        words_name_has(s->enum_str[e], w, strlen(w))) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

bool agent_unknown_thing(const struct pipit_toolset *ts,
                         const char *segment,
                         const char *tool,
                         char *thing,
                         size_t size) {
    if (ts == NULL || segment == NULL) {
        return false;
    }
    static const char *const TURN[] = {"turn", "switch", "flip"};
    static const char *const SIDES[] = {"on", "off"};
    static const char *const ENABLE[] = {"enable", "disable", "activate", "deactivate"};
    static const char *const LEAD[] = {"the", "a", "an", "my", "your", "our", "some"};
    static const char *const STOP[] = {
        "for",  "so",      "in",    "on",   "off",   "at",     "to",     "and",   "please",
        "now",  "too",     "as",    "then", "while", "when",   "if",     "but",   "or",
        "with", "because", "again", "also", "pls",   "thanks", "before", "after", "during",
        "from", "of",      "by",    "up",   "down",  "punct"};
    static const char *const PRONOUN[] = {"it",        "that",       "this", "them", "those",
                                          "these",     "everything", "all",  "both", "one",
                                          "something", "anything",   "back", "me",   "us"};
    /* a word that names no thing by itself: "HDR mode" is about HDR */
    static const char *const GENERIC[] = {"mode",     "setting", "settings", "feature",
                                          "features", "option",  "options",  "function"};
    static const char *const SET[] = {"set", "put", "change", "adjust", "turn"};
    static const char *const MODE[] = {"mode", "setting"};
    /* words before "mode" that name no thing: verbs and question words */
    static const char *const NOT_A_THING[] = {
        "what",  "which",   "whats",  "any",   "use",    "set",     "go",    "switch", "into",
        "put",   "turn",    "enable", "start", "change", "same",    "other", "best",   "good",
        "right", "current", "that",   "this",  "normal", "default", "usual", "old",    "new"};
    static const char *const TO[] = {"to", "at"};
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), WORDS_PUNCTUATION, tok, GUARD_MAX_TOKENS);
    for (size_t k = 0; k < n; k++) {
        if (tok[k].kind == WORDS_PUNCT) { /* "turn on HDR, the shade ...": a thing ends there */
            tok[k].kind = WORDS_WORD;
            pipit_format(tok[k].w, sizeof(tok[k].w), "%s", "punct");
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t from = 0, to = 0; /* the thing: tokens [from, to) */
        size_t lead = i + 1;
        while (lead < n && agent_said_any(tok + lead, 1, LEAD, N_OF(LEAD))) {
            lead++;
        }
        size_t end = lead; /* "set the X to V": X of one to three words, V no word of the pack */
        while (end < n && end < lead + 3 && !agent_said_any(tok + end, 1, STOP, N_OF(STOP))) {
            end++;
        }
        /* a number the model's tool takes keeps its call when the thing is a word of its own
         * or words the pack does not know ("set the brightness to 1": exposure); not when the
         * thing says the pack's word for something else ("set the water hardness to 3") */
        int32_t ti = tool != NULL ? pipit_toolset_find(ts, tool) : -1;
        bool names_model =
            ti >= 0 && end > lead && heard_names_switch(ts, (size_t)ti, tok + lead, end - lead);
        bool any_known = false;
        for (size_t k = lead; k < end; k++) {
            any_known = any_known || heard_pack_names(ts, tok[k].w);
        }
        names_model = names_model || !any_known;
        if (agent_said_any(tok + i, 1, SET, N_OF(SET)) && lead > i + 1 && end > lead &&
            end + 1 < n && agent_said_any(tok + end, 1, TO, N_OF(TO)) &&
            !heard_pack_names(ts, tok[end + 1].w) &&
            !(isdigit((unsigned char)tok[end + 1].w[0]) &&
              tool_takes_number(ts, tool, strtod(tok[end + 1].w, NULL)) && names_model)) {
            from = lead;
            to = end;
        } else if (agent_said_any(tok + i, 1, MODE, N_OF(MODE)) && i > 0 &&
                   !agent_said_any(tok + i - 1, 1, LEAD, N_OF(LEAD)) &&
                   !agent_said_any(tok + i - 1, 1, STOP, N_OF(STOP)) &&
                   !agent_said_any(tok + i - 1, 1, PRONOUN, N_OF(PRONOUN)) &&
                   !agent_said_any(tok + i - 1, 1, NOT_A_THING, N_OF(NOT_A_THING))) {
            to = i; /* "burst mode please": X of one or two words before "mode" */
            from = i - 1;
            if (from > 0 && !agent_said_any(tok + from - 1, 1, LEAD, N_OF(LEAD)) &&
                !agent_said_any(tok + from - 1, 1, STOP, N_OF(STOP)) &&
                !agent_said_any(tok + from - 1, 1, PRONOUN, N_OF(PRONOUN)) &&
                !agent_said_any(tok + from - 1, 1, NOT_A_THING, N_OF(NOT_A_THING))) {
                from--;
            }
        } else if (agent_said_any(tok + i, 1, TURN, N_OF(TURN)) && i + 1 < n &&
                   agent_said_any(tok + i + 1, 1, SIDES, N_OF(SIDES))) {
            from = i + 2; /* "turn on X" */
        } else if (agent_said_any(tok + i, 1, ENABLE, N_OF(ENABLE))) {
            from = i + 1; /* "enable X" */
        } else if (agent_said_any(tok + i, 1, TURN, N_OF(TURN))) {
            size_t j = i + 1; /* "turn X on": X of one to three words */
            while (j < n && j <= i + 3 && !agent_said_any(tok + j, 1, SIDES, N_OF(SIDES)) &&
                   !agent_said_any(tok + j, 1, STOP, N_OF(STOP))) {
                j++;
            }
            if (j == i + 1 || j >= n || j > i + 3 ||
                !agent_said_any(tok + j, 1, SIDES, N_OF(SIDES))) {
                continue;
            }
            from = i + 1;
            to = j;
        } else {
            continue;
        }
        while (from < n && agent_said_any(tok + from, 1, LEAD, N_OF(LEAD))) {
            from++;
        }
        if (to == 0) {
            to = from;
            while (to < n && to < from + 3 && !agent_said_any(tok + to, 1, STOP, N_OF(STOP))) {
                to++;
            }
        }
        if (to <= from || agent_said_any(tok + from, 1, PRONOUN, N_OF(PRONOUN))) {
            return false; /* "turn it on": the thing is said elsewhere */
        }
        /* a place the pack has ("bedroom") does not make the thing after it the pack's ("the
         * bedroom fan"); any other word of the pack does ("horizon guide", "wifi back") */
        bool known = false, counted = false;
        for (size_t k = from; k < to && !known; k++) {
            if (tok[k].w[0] == '\0' || agent_said_any(tok + k, 1, GENERIC, N_OF(GENERIC)) ||
                (k + 1 < to && is_place_word(ts, tok[k].w))) {
                continue;
            }
            counted = true;
            known = heard_pack_names(ts, tok[k].w) || isdigit((unsigned char)tok[k].w[0]);
        }
        if (!counted || known) {
            return false;
        }
        if (thing != NULL && size > 0) {
            size_t a = tok[from].start, b = tok[to - 1].end; /* the person's spelling */
            pipit_format(thing, size, "%.*s", (int)(b - a), segment + a);
        }
        return true;
    }
    return false;
}

bool agent_says_a_value_of(const json_t *args,
                           const char *segment,
                           const struct words_tok *tok,
                           size_t n) {
    return heard_says_a_value_of(args, segment, tok, n);
}

bool agent_says_a_side(const struct words_tok *tok, size_t n) {
    return agent_said_any(tok, n, HEARD_SAY_TRUE, N_OF(HEARD_SAY_TRUE)) ||
           agent_said_any(tok, n, HEARD_SAY_FALSE, N_OF(HEARD_SAY_FALSE));
}
