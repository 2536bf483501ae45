/*
 * agent_choice.c - the person's choice in the model's call: an enum value or an on/off other
 * than the one the person said is put back to theirs (docs/agent.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_choice.h"

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

/* ============================================================================
 * the person's choice: an enum value or an on/off the person said
 *
 * A small model can pick the wrong value of an enum or the wrong polarity of a switch ("turn
 * the flash on" -> mode "off", "zoom in" -> direction "out"). When the segment says exactly one
 * of a string enum's values as whole words ("living_room" is said as "living room"; a value of
 * 4 letters or more also as the start of a word: "automatic" says "auto"), a value no other
 * enum argument of the tool has, the model chose another value, nothing in the segment negates
 * ("don't", "not", "never", "no", "without"), and no off word ("off", "disable", ...) turns
 * the value said off ("turn macro off"), the value said is the one meant.
 * A boolean argument takes the polarity the segment says when it says one kind only ("on",
 * "enable", "activate", "show" against "off", "disable", "deactivate", "hide"), unless the
 * argument's name says the opposite of on ("muted", "disabled", "hidden", ...), where "on"
 * would mean false, or the segment says another tool's enum value ("put it on auto"). Only a value
 * the model gave is replaced; an argument it left out stays out. */

/* Whether another string enum argument of `t` than `skip` has the value `phrase`. */
static bool other_arg_has(const struct pipit_tool *t, size_t skip, const char *phrase) {
    for (size_t j = 0; j < t->params->n_props; j++) {
        const struct pipit_schema *s = t->params->props[j].schema;
        for (size_t e = 0; j != skip && s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
            char ph[WORDS_CAP * 2];
            if (heard_value_phrase(s->enum_str[e], ph, sizeof(ph)) && strcmp(ph, phrase) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* The one value of enum argument `i` the segment says, or NULL. */
static const char *
said_enum_value(const struct pipit_tool *t, size_t i, const struct words_tok *tok, size_t n) {
    const struct pipit_schema *s = t->params->props[i].schema;
    const char *said = NULL, *named = NULL;
    for (size_t e = 0; e < s->n_enum; e++) {
        char ph[WORDS_CAP * 2];
        if (!heard_value_phrase(s->enum_str[e], ph, sizeof(ph)) || !heard_says_value(tok, n, ph)) {
            continue;
        }
        bool in_name = false; /* said with the next word of the tool's name: "quality priority" */
        for (size_t k = 0; k + 1 < n && strchr(ph, ' ') == NULL; k++) {
            in_name =
                in_name || (strcmp(tok[k].w, ph) == 0 && words_name_has(t->name, ph, strlen(ph)) &&
                            words_name_has(t->name, tok[k + 1].w, strlen(tok[k + 1].w)));
        }
        if (named == NULL && in_name) {
            named = s->enum_str[e]; /* "quality priority to speed": "quality" names the tool */
            continue;
        }
        if (said != NULL || other_arg_has(t, i, ph)) {
            return NULL; /* two values said, or a value of two arguments: the model's call */
        }
        said = s->enum_str[e];
    }
    said = said != NULL ? said : named;
    /* a word the argument's description gives a value ("low (gentle)": "gentle fan is fine"),
     * when the words said so name one value */
    for (size_t e = 0; said == NULL && e < s->n_enum; e++) {
        char alt[8][PIPIT_SCHEMA_WORD_CAP];
        int n_alt = pipit_schema_value_words(s, s->enum_str[e], alt, 8);
        for (int w = 0; w < n_alt; w++) {
            char ph[WORDS_CAP * 2];
            if (strlen(alt[w]) >= 3 && heard_value_phrase(alt[w], ph, sizeof(ph)) &&
                heard_says_value(tok, n, ph)) {
                for (size_t f = e + 1; f < s->n_enum; f++) {
                    char more[8][PIPIT_SCHEMA_WORD_CAP];
                    int n_more = pipit_schema_value_words(s, s->enum_str[f], more, 8);
                    for (int m = 0; m < n_more; m++) {
                        char mph[WORDS_CAP * 2];
                        if (heard_value_phrase(more[m], mph, sizeof(mph)) &&
                            heard_says_value(tok, n, mph)) {
                            return NULL; /* two values so said: the model's call */
                        }
                    }
                }
                said = s->enum_str[e];
                break;
            }
        }
    }
    const char *slipped = NULL;
    for (size_t e = 0; said == NULL && e < s->n_enum; e++) {
        /* "delicats please": a one-word value of five letters or more said with one slip (its
         * first letter kept), when no other value is so said */
        const char *v = s->enum_str[e];
        size_t lv = strlen(v);
        if (lv < 5 || lv > GUARD_MAX_COPY || strpbrk(v, " _-") != NULL || other_arg_has(t, i, v)) {
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            size_t lw = strlen(tok[k].w);
            if (lw >= 4 && tok[k].w[0] == tolower((unsigned char)v[0]) &&
                heard_edit_distance(tok[k].w, lw, v, lv) == 1) {
                if (slipped != NULL && slipped != v) {
                    return NULL; /* two values so said: the model's call */
                }
                slipped = v;
            }
        }
    }
    said = said != NULL ? said : slipped;
    /* "turn macro off": an off word beside another value turns that value off */
    if (said != NULL && !words_in_list(said, HEARD_SAY_FALSE, N_OF(HEARD_SAY_FALSE)) &&
        agent_said_any(tok, n, HEARD_SAY_FALSE, N_OF(HEARD_SAY_FALSE))) {
        return NULL;
    }
    /* "begin recording": of a start/stop switch, the side its other verbs say, when they say
     * one side only */
    static const char *const START_WORDS[] = {"begin", "commence"};
    static const char *const STOP_WORDS[] = {"end", "finish", "halt", "cease"};
    const char *start = NULL, *stop = NULL;
    for (size_t e = 0; said == NULL && e < s->n_enum; e++) {
        start = strcmp(s->enum_str[e], "start") == 0 ? s->enum_str[e] : start;
        stop = strcmp(s->enum_str[e], "stop") == 0 ? s->enum_str[e] : stop;
    }
    if (start != NULL && stop != NULL) {
        bool starts = agent_said_any(tok, n, START_WORDS, N_OF(START_WORDS)),
             stops = agent_said_any(tok, n, STOP_WORDS, N_OF(STOP_WORDS));
        said = starts == stops ? NULL : starts ? start : stop;
    }
    /* sizes in other words ("big americano" -> large), when the enum has exactly that value */
    static const char *const SIZES[][4] = {{"large", "big", "huge", "grande"},
                                           {"small", "little", "tiny", "short"},
                                           {"medium", "regular", "mid", NULL}};
    for (size_t z = 0; said == NULL && z < N_OF(SIZES); z++) {
        for (size_t e = 0; e < s->n_enum; e++) {
            if (strcmp(s->enum_str[e], SIZES[z][0]) != 0) {
                continue;
            }
            for (size_t w = 1; w < 4 && SIZES[z][w] != NULL && said == NULL; w++) {
                said = agent_said_phrase(tok, n, SIZES[z][w]) ? s->enum_str[e] : NULL;
            }
        }
    }
    return said;
}

/* Whether the segment says a value of another tool's string enum ("put it on auto": there
 * "on" comes before another tool's value, not a switch's). */
static bool says_other_tools_value(const struct pipit_toolset *ts,
                                   size_t tool,
                                   const struct words_tok *tok,
                                   size_t n) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t j = 0; i != tool && j < t->params->n_props; j++) {
            const struct pipit_schema *s = t->params->props[j].schema;
            for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
                char ph[WORDS_CAP * 2];
                if (strlen(s->enum_str[e]) >= 3 &&
                    heard_value_phrase(s->enum_str[e], ph, sizeof(ph)) &&
                    heard_says_value(tok, n, ph)) {
                    return true;
                }
            }
        }
    }
    return false;
}

static int said_polarity(const char *name, const struct words_tok *tok, size_t n) {
    bool done = false, undone = false;
    heard_said_stem(name, tok, n, &done, &undone);
    if (undone && !done) {
        return 0; /* "unlock", "disarm", "unmute": the name's own word undone */
    }
    bool on = agent_said_any(tok, n, HEARD_SAY_TRUE, N_OF(HEARD_SAY_TRUE));
    bool off = agent_said_any(tok, n, HEARD_SAY_FALSE, N_OF(HEARD_SAY_FALSE));
    if (!on && !off && done && !undone) {
        return 1; /* "lock it up", "arm the alarm", "mute it" */
    }
    for (size_t k = 0; k < N_OF(HEARD_NEGATIVE_NAMES); k++) {
        if (heard_contains_nocase(name, HEARD_NEGATIVE_NAMES[k])) {
            return -1;
        }
    }
    return on == off ? -1 : on ? 1 : 0;
}

/* `segment` less what "instead of" or "rather than" sets aside (up to three words, to a comma
 * or "and"): "make the flash on instead of auto" -> "make the flash on". */
static void without_set_aside(const char *segment, char *out, size_t size) {
    static const char *const ASIDE[] = {"instead of", "rather than"};
    pipit_format(out, size, "%s", segment);
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(out, strlen(out), WORDS_PUNCTUATION, t, GUARD_MAX_TOKENS);
    for (size_t i = 0; i < n; i++) {
        size_t m = 0;
        for (size_t k = 0; k < N_OF(ASIDE) && m == 0; k++) {
            m = words_match(t, n, i, ASIDE[k]) == 2 ? 2 : 0;
        }
        if (m == 0) {
            continue;
        }
        size_t e = i + m;
        while (e < n && e < i + m + 3 && t[e].kind == WORDS_WORD && strcmp(t[e].w, "and") != 0) {
            e++;
        }
        size_t from = t[i].start, to = e < n ? t[e].start : strlen(out);
        memmove(out + from, out + to, strlen(out + to) + 1);
        return;
    }
}

bool agent_restore_person_choice(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *whole,
                                 struct pipit_call *call) {
    if (tool < 0 || whole == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    char segment[GUARD_MAX_COPY * 8];
    without_set_aside(whole, segment, sizeof(segment));
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    if (heard_negates(ts, tok, n)) {
        return false;
    }
    heard_read_mistyped_off(tok, n);
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool changed = false;
    for (size_t i = 0; args != NULL && i < t->params->n_props; i++) {
        const char *name = t->params->props[i].name;
        const struct pipit_schema *s = t->params->props[i].schema;
        json_t *v = json_object_get(args, name);
        if (v == NULL) {
            /* an optional choice the model left out, said by the person ("big americano":
             * size large) */
            const char *said =
                !t->params->props[i].required && s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0
                    ? said_enum_value(t, i, tok, n)
                    : NULL;
            if (said != NULL && json_object_set_new(args, name, json_string(said)) == 0) {
                changed = true;
            }
            continue;
        }
        if (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0 && json_is_string(v)) {
            const char *said = said_enum_value(t, i, tok, n);
            if (said != NULL && strcmp(said, json_string_value(v)) != 0 &&
                json_object_set_new(args, name, json_string(said)) == 0) {
                changed = true;
            }
        } else if (s->type == PIPIT_SCHEMA_BOOLEAN && json_is_boolean(v)) {
            int said =
                says_other_tools_value(ts, (size_t)tool, tok, n) ? -1 : said_polarity(name, tok, n);
            if (said >= 0 && (said == 1) != json_is_true(v) &&
                json_object_set_new(args, name, json_boolean(said == 1)) == 0) {
                changed = true;
            }
        }
    }
    bool written = agent_said_put_args(call, args, changed);
    json_decref(args);
    return written;
}

bool agent_says_setting_value(const struct pipit_toolset *ts, const char *segment) {
    if (ts == NULL || segment == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    return heard_settings_said(ts, tok, n, NULL, NULL, NULL, NULL, 0) > 0;
}
