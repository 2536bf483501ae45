/*
 * agent_value.c - a value the pack does not have, refused instead of replaced (docs/agent.md,
 * "A value the tool does not have").
 *
 * The call grammar only lets the model write a tool's enum values, so "set the white balance to
 * candlelight" came out as daylight and the person read "The white balance is daylight.", a
 * success nobody asked for. Issue 15's rule for numbers holds for words too: the value is
 * generated as asked and refused by validation with what the tool has. Which words the pack
 * knows is read from the pack (names, arguments, values, descriptions, examples): a synonym the
 * pack writes down anywhere ("sunny" in a description of daylight) stays the model's to map.
 */
#include "agent_value.h"

#include "agent_choose.h"
#include "agent_said.h"
#include "toolspec.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_TOK 48

/* Words that stand in a value's place without being one the person wants refused, with words
 * that ask the device to choose or say who for ("set the white balance to match", "turn the
 * camera to face us"). */
static const char *const GENERIC[] = {
    "normal",   "default",  "standard", "regular", "usual",  "auto",     "automatic", "it",
    "that",     "this",     "them",     "one",     "please", "pls",      "now",       "again",
    "mode",     "setting",  "settings", "instead", "then",   "thanks",   "there",     "something",
    "what",     "whatever", "same",     "before",  "back",   "previous", "last",      "other",
    "on",       "off",      "up",       "down",    "max",    "min",      "more",      "less",
    "going",    "running",  "ready",    "here",    "its",    "all",      "every",     "each",
    "match",    "suit",     "fit",      "face",    "fix",    "correct",  "right",     "proper",
    "best",     "better",   "good",     "nice",    "me",     "us",       "anything",  "everyone",
    "everybody"};

/* Whether word `w` (lowercase) is a word of `text` (any case, split at non-letters). */
static bool word_in_text(const char *w, const char *text) {
    size_t lw = strlen(w);
    for (const char *p = text; p != NULL && *p != '\0';) {
        while (*p != '\0' && !isalnum((unsigned char)*p)) {
            p++;
        }
        const char *s = p;
        while (*p != '\0' && isalnum((unsigned char)*p)) {
            p++;
        }
        if ((size_t)(p - s) == lw && strncasecmp(s, w, lw) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether word `w` of schema `s` (and its properties) is known: a property name, an enum
 * value, a description. */
static bool schema_knows(const struct pipit_schema *s, const char *w, int depth) {
    if (s == NULL || depth > 4) {
        return false;
    }
    if (s->description != NULL && word_in_text(w, s->description)) {
        return true;
    }
    for (size_t e = 0; e < s->n_enum; e++) {
        if (s->enum_str != NULL && s->enum_str[e] != NULL && word_in_text(w, s->enum_str[e])) {
            return true;
        }
    }
    for (size_t j = 0; j < s->n_props; j++) {
        if (word_in_text(w, s->props[j].name) || schema_knows(s->props[j].schema, w, depth + 1)) {
            return true;
        }
    }
    return false;
}

/* Whether the pack knows word `w`: any tool's name, description, arguments, values, examples,
 * or a declared state key's name, values, show label, names or nouns and verbs. */
static bool pack_knows(const struct pipit_toolset *ts, const char *w) {
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    for (size_t k = 0; pk != NULL && k < pk->n_keys; k++) {
        const struct pipit_pack_key *key = &pk->keys[k];
        bool known = word_in_text(w, key->key) ||
                     (key->show != NULL && word_in_text(w, key->show)) ||
                     (key->words.names != NULL && word_in_text(w, key->words.names)) ||
                     (key->words.noun != NULL && word_in_text(w, key->words.noun));
        for (size_t e = 0; !known && e < key->n_enum; e++) {
            known = word_in_text(w, key->enum_str[e]);
        }
        if (known) {
            return true;
        }
    }
    for (size_t k = 0; pk != NULL && k < pk->n_verbs + pk->n_nouns; k++) {
        if (word_in_text(w, k < pk->n_verbs ? pk->verbs[k] : pk->nouns[k - pk->n_verbs])) {
            return true;
        }
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (word_in_text(w, t->name) ||
            (t->description != NULL && word_in_text(w, t->description)) ||
            schema_knows(t->params, w, 0)) {
            return true;
        }
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
            if (tp->examples[e].say != NULL && word_in_text(w, tp->examples[e].say)) {
                return true;
            }
        }
    }
    return false;
}

/* Whether every enum value of `s` is a ratio "<digits>:<digits>" or a word; `ratios` counts
 * the ratios. */
static size_t ratio_values(const struct pipit_schema *s) {
    size_t n = 0;
    for (size_t e = 0; e < s->n_enum; e++) {
        int a = 0, b = 0, used = 0;
        n += s->enum_str[e] != NULL && sscanf(s->enum_str[e], "%d:%d%n", &a, &b, &used) == 2 &&
                     s->enum_str[e][used] == '\0'
                 ? 1
                 : 0;
    }
    return n;
}

/* A ratio the segment writes ("21:9") that is none of `s`'s values, into out; false if none. */
static bool
unknown_ratio(const struct pipit_schema *s, const char *segment, char *out, size_t size) {
    for (const char *p = segment; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p) || (p > segment && isalnum((unsigned char)p[-1]))) {
            continue;
        }
        int a = 0, b = 0, used = 0;
        if (sscanf(p, "%d:%d%n", &a, &b, &used) != 2 || isalnum((unsigned char)p[used])) {
            continue;
        }
        snprintf(out, size, "%.*s", used, p);
        for (size_t e = 0; e < s->n_enum; e++) {
            if (s->enum_str[e] != NULL && strcmp(s->enum_str[e], out) == 0) {
                return false;
            }
        }
        return true;
    }
    return false;
}

/* The index of the token in the value's place, or n: the word right after the last "to" or
 * "into", or right after the last word of the tool's name or the argument's name, in the same
 * clause (only letters and spaces between; "the" and "a" skipped). */
static size_t value_place(const char *segment,
                          const struct words_tok *tok,
                          size_t n,
                          const struct pipit_tool *t,
                          const char *arg) {
    static const char *const TO[] = {"to", "into"};
    size_t at = n;
    for (size_t i = 0; i + 1 < n; i++) {
        bool named =
            strlen(tok[i].w) >= 3 && (word_in_text(tok[i].w, t->name + strcspn(t->name, "_")) ||
                                      word_in_text(tok[i].w, arg));
        if (!named && !words_in_list(tok[i].w, TO, N_OF(TO))) {
            continue;
        }
        size_t j = i + 1;
        while (j < n && (strcmp(tok[j].w, "the") == 0 || strcmp(tok[j].w, "a") == 0)) {
            j++;
        }
        bool joined = j < n;
        for (size_t b = tok[i].end; joined && b < tok[j].start; b++) {
            joined = segment[b] == ' ' || isalpha((unsigned char)segment[b]);
        }
        at = joined ? j : at;
    }
    static const char *const DET[] = {"the", "a", "an", "my", "that", "this"};
    for (size_t i = 2; at == n && i < n; i++) {
        /* "show the weather screen": the word between a determiner and the name */
        bool named =
            strlen(tok[i].w) >= 3 && (word_in_text(tok[i].w, t->name + strcspn(t->name, "_")) ||
                                      word_in_text(tok[i].w, arg));
        if (named && words_in_list(tok[i - 2].w, DET, N_OF(DET)) &&
            !words_in_list(tok[i - 1].w, DET, N_OF(DET))) {
            at = i - 1;
        }
    }
    return at;
}

/* Whether `s`'s values hold two sides of a switch ("on"/"off", "start"/"stop"): a word after
 * its name is a side or a state ("get the flash going"), not a value. */
static bool switch_values(const struct pipit_schema *s) {
    static const char *const SIDES[] = {"on",     "off",  "start", "stop",    "open",    "close",
                                        "closed", "play", "pause", "enabled", "disabled"};
    size_t sides = 0;
    for (size_t e = 0; e < s->n_enum; e++) {
        sides += s->enum_str[e] != NULL && words_in_list(s->enum_str[e], SIDES, N_OF(SIDES));
    }
    return sides >= 2;
}

bool agent_restore_unknown_value(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL ||
        !agent_names_tool(ts, (size_t)tool, segment)) {
        return false;
    }
    struct words_tok tok[MAX_TOK];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, MAX_TOK);
    if (n == 0 || n >= MAX_TOK || agent_said_negation(tok, n)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    size_t n_required = 0;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        n_required += t->params->props[j].required ? 1 : 0;
    }
    if (n_required != 1) {
        return false; /* "navigate to Mission Dolores": the words after "to" are another
                         argument's */
    }
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    if (json_object_size(args) != 1) {
        json_decref(args);
        return false;
    }
    bool changed = false;
    for (size_t j = 0; json_is_object(args) && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        const struct pipit_schema *s = p->schema;
        const char *v = json_string_value(json_object_get(args, p->name));
        if (s->type != PIPIT_SCHEMA_STRING || s->n_enum < 3 || v == NULL || switch_values(s)) {
            continue;
        }
        bool said = false;
        for (size_t e = 0; e < s->n_enum && !said; e++) {
            said = s->enum_str[e] != NULL && agent_said_value(tok, n, s->enum_str[e]);
        }
        if (said) {
            continue; /* a value of the argument is said: the model's choice stands */
        }
        char word[WORDS_CAP * 2];
        if (ratio_values(s) * 2 > s->n_enum) {
            if (!unknown_ratio(s, segment, word, sizeof(word))) {
                continue; /* "widescreen": a word for a ratio, the model's to map */
            }
        } else {
            size_t at = value_place(segment, tok, n, t, p->name);
            int number = 0; /* "put the siren at nine": a number, no value of a mode */
            if (at >= n || strlen(tok[at].w) < 3 || isdigit((unsigned char)tok[at].w[0]) ||
                words_number_value(tok[at].w, &number) ||
                words_in_list(tok[at].w, GENERIC, N_OF(GENERIC)) || pack_knows(ts, tok[at].w)) {
                continue;
            }
            snprintf(word, sizeof(word), "%.*s", (int)(tok[at].end - tok[at].start),
                     segment + tok[at].start);
        }
        json_object_set_new(args, p->name, json_string(word));
        changed = true;
    }
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

/* Whether the pack knows `w` or the word it is a form of: "warmer", "warmest", "warmish" of
 * "warm", "hotter" of "hot", "cosier" of "cosy", "blues" of "blue". */
static bool knows_form(const struct pipit_toolset *ts, const char *w) {
    static const char *const ENDS[] = {"er", "est", "ish", "s", "ly", "ier", "iest"};
    if (pack_knows(ts, w)) {
        return true;
    }
    size_t l = strlen(w);
    for (size_t e = 0; e < N_OF(ENDS); e++) {
        size_t le = strlen(ENDS[e]);
        char stem[WORDS_CAP + 2];
        if (l <= le + 2 || l - le >= WORDS_CAP || strcmp(w + l - le, ENDS[e]) != 0) {
            continue;
        }
        memcpy(stem, w, l - le);
        stem[l - le] = '\0';
        if (ENDS[e][0] == 'i' && le >= 3) {
            strcat(stem, "y"); /* "cosier" */
        }
        size_t ls = strlen(stem);
        if (pack_knows(ts, stem)) {
            return true;
        }
        if (ls >= 4 && stem[ls - 1] == stem[ls - 2]) {
            stem[ls - 1] = '\0'; /* "hotter" */
            if (pack_knows(ts, stem)) {
                return true;
            }
        }
    }
    return false;
}

/* The first token after words that only ask ("please", "can you"), or n. */
static size_t first_word(const struct words_tok *t, size_t n) {
    static const char *const ASK[] = {"please", "pls", "can", "could", "would",
                                      "will",   "you", "ok",  "okay",  "hey"};
    size_t i = 0;
    while (i < n && words_in_list(t[i].w, ASK, N_OF(ASK))) {
        i++;
    }
    return i;
}

/* A value said in the segment of enum `s`, the only one; NULL when none or two. */
static const char *
one_value_said(const struct pipit_schema *s, const struct words_tok *t, size_t n) {
    const char *said = NULL;
    for (size_t e = 0; e < s->n_enum; e++) {
        if (s->enum_str[e] != NULL && agent_said_value(t, n, s->enum_str[e])) {
            if (said != NULL) {
                return NULL;
            }
            said = s->enum_str[e];
        }
    }
    return said;
}

bool agent_choose_tool_by_unknown_value(const struct pipit_toolset *ts,
                                        int32_t tool,
                                        const char *segment,
                                        struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || strchr(segment, '?') != NULL) {
        return false;
    }
    struct words_tok tok[MAX_TOK];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, MAX_TOK);
    size_t v = first_word(tok, n);
    if (n < 3 || n >= MAX_TOK || v + 2 >= n || agent_said_negation(tok, n)) {
        return false;
    }
    static const char *const TAIL[] = {"please", "pls", "now", "thanks", "thank", "you"};
    while (n > v + 3 && words_in_list(tok[n - 1].w, TAIL, N_OF(TAIL))) {
        n--; /* "... teal please" */
    }
    const char *last = tok[n - 1].w;
    int number = 0; /* "put the siren at nine": a number, no value */
    if (strlen(last) < 3 || !isalpha((unsigned char)last[0]) || words_number_value(last, &number) ||
        words_in_list(last, GENERIC, N_OF(GENERIC)) || knows_form(ts, last)) {
        return false;
    }
    int32_t found = -1;
    const char *found_arg = NULL;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t x = 0; tp != NULL && !pipit_toolset_is_cloud(ts, i) && x < tp->n_examples;
             x++) {
            struct words_tok et[MAX_TOK];
            const char *say = tp->examples[x].say;
            size_t en = say != NULL ? words_tokenize(say, strlen(say), 0, et, MAX_TOK) : 0;
            size_t ev = first_word(et, en);
            if (en == 0 || en >= MAX_TOK || ev >= en || strcmp(et[ev].w, tok[v].w) != 0) {
                continue;
            }
            for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
                const struct pipit_schema_prop *p = &t->params->props[j];
                const char *ev_val =
                    json_string_value(json_object_get(tp->examples[x].args, p->name));
                if (p->schema->type != PIPIT_SCHEMA_STRING || p->schema->n_enum < 3 ||
                    switch_values(p->schema) || ev_val == NULL ||
                    strcasecmp(et[en - 1].w, ev_val) != 0 ||
                    (found == (int32_t)i && found_arg == p->name)) {
                    continue;
                }
                if (found >= 0) {
                    return false; /* two tools or arguments fit */
                }
                found = (int32_t)i;
                found_arg = p->name;
            }
        }
    }
    if (found < 0) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)found);
    json_t *args = json_object();
    for (size_t j = 0; args != NULL && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        if (p->name == found_arg) {
            if (one_value_said(p->schema, tok, n) != NULL) {
                json_decref(args);
                return false; /* a value of it is said: the model's to map */
            }
            json_object_set_new(
                args, p->name,
                json_stringn(segment + tok[n - 1].start, tok[n - 1].end - tok[n - 1].start));
        } else if (p->required) {
            const char *said = p->schema->type == PIPIT_SCHEMA_STRING && p->schema->n_enum > 0
                                   ? one_value_said(p->schema, tok, n)
                                   : NULL;
            if (said == NULL) {
                json_decref(args);
                return false;
            }
            json_object_set_new(args, p->name, json_string(said));
        }
    }
    (void)tool;
    return args != NULL && agent_said_replace_call(call, t, args);
}

/* The number at the end of `v` after a prefix of letters and "_" or "-" ("p2" -> 2, prefix
 * length 1); -1 when `v` is not so made. */
static int value_number(const char *v, size_t *prefix) {
    size_t l = strlen(v), d = l;
    while (d > 0 && isdigit((unsigned char)v[d - 1])) {
        d--;
    }
    size_t p = d;
    while (p > 0 && (v[p - 1] == '_' || v[p - 1] == '-')) {
        p--;
    }
    if (d == l || p == 0 || l - d > 2) {
        return -1;
    }
    for (size_t i = 0; i < p; i++) {
        if (!isalpha((unsigned char)v[i])) {
            return -1;
        }
    }
    *prefix = p;
    return atoi(v + d);
}

bool agent_restore_numbered_value(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call) {
    if (ts == NULL || tool < 0 || (size_t)tool >= ts->n_tools || segment == NULL || call == NULL ||
        call->args_json == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *arg = NULL;
    for (size_t j = 0; j < t->params->n_props; j++) {
        const struct pipit_schema *s = t->params->props[j].schema;
        if (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) {
            return false; /* a number may be the number's */
        }
        size_t p0 = 0, p = 0;
        bool numbered = s->type == PIPIT_SCHEMA_STRING && s->n_enum >= 2;
        for (size_t e = 0; numbered && e < s->n_enum; e++) {
            numbered = value_number(s->enum_str[e], &p) >= 0 && (e == 0 || p == p0) &&
                       strncmp(s->enum_str[e], s->enum_str[0], p) == 0;
            p0 = p;
        }
        arg = numbered && arg == NULL ? &t->params->props[j] : arg;
    }
    if (arg == NULL) {
        return false;
    }
    static const char *const ORDINALS[] = {"first", "second",  "third",  "fourth", "fifth",
                                           "sixth", "seventh", "eighth", "ninth",  "tenth"};
    static const char *const ONE_AFTER[] = {"the", "this", "that",  "other", "next",  "last",
                                            "a",   "any",  "which", "each",  "every", "no"};
    struct words_tok tok[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, 48);
    int said = -1;
    for (size_t i = 0; i < n; i++) {
        int v = -1, w = 0;
        size_t p = 0;
        if (isdigit((unsigned char)tok[i].w[0]) && strlen(tok[i].w) <= 2 &&
            strspn(tok[i].w, "0123456789") == strlen(tok[i].w)) {
            v = atoi(tok[i].w);
        } else if (words_number_value(tok[i].w, &w) && w >= 1) {
            bool pronoun = w == 1 && ((i > 0 && words_in_list(tok[i - 1].w, ONE_AFTER, 12)) ||
                                      (i + 1 < n && (strcmp(tok[i + 1].w, "of") == 0 ||
                                                     strcmp(tok[i + 1].w, "else") == 0)));
            v = pronoun ? -1 : w;
        } else if (words_in_list(tok[i].w, ORDINALS, 10)) {
            for (int k = 0; k < 10; k++) {
                v = strcmp(tok[i].w, ORDINALS[k]) == 0 ? k + 1 : v;
            }
        } else {
            for (size_t e = 0; e < arg->schema->n_enum && v < 0; e++) {
                if (strcasecmp(tok[i].w, arg->schema->enum_str[e]) == 0) {
                    v = value_number(arg->schema->enum_str[e], &p);
                }
            }
        }
        if (v < 0) {
            continue;
        }
        if (said >= 0 && said != v) {
            return false; /* two numbers: which is the slot's is the model's */
        }
        said = v;
    }
    const char *meant = NULL;
    for (size_t e = 0; said >= 0 && e < arg->schema->n_enum; e++) {
        size_t p = 0;
        meant =
            value_number(arg->schema->enum_str[e], &p) == said ? arg->schema->enum_str[e] : meant;
    }
    if (meant == NULL) {
        return false;
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    const char *had = json_string_value(json_object_get(args, arg->name));
    bool changed = json_is_object(args) && had != NULL && strcmp(had, meant) != 0 &&
                   json_object_set_new(args, arg->name, json_string(meant)) == 0;
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

/* The letters every numbered value of `s` opens with ("hdmi" of hdmi1, hdmi2), when two values
 * or more are those letters and a number, into `prefix`; false when none or two names. */
static bool numbered_name(const struct pipit_schema *s, char *prefix, size_t size) {
    size_t n_numbered = 0;
    prefix[0] = '\0';
    for (size_t e = 0; e < s->n_enum; e++) {
        size_t p = 0;
        if (s->enum_str[e] == NULL || value_number(s->enum_str[e], &p) < 0 || p < 2) {
            continue;
        }
        if (prefix[0] != '\0' &&
            (strlen(prefix) != p || strncasecmp(prefix, s->enum_str[e], p) != 0)) {
            return false; /* "zone1", "slot2": two names */
        }
        snprintf(prefix, size, "%.*s", (int)p, s->enum_str[e]);
        n_numbered++;
    }
    return n_numbered >= 2;
}

bool agent_restore_named_number(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL ||
        call->args_json == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool changed = false;
    for (size_t j = 0; json_is_object(args) && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *arg = &t->params->props[j];
        const char *had = json_string_value(json_object_get(args, arg->name));
        char name[32];
        if (had == NULL || arg->schema->type != PIPIT_SCHEMA_STRING ||
            !numbered_name(arg->schema, name, sizeof(name))) {
            continue;
        }
        /* "hdmi 3", "hdmi3", "HDMI-3": the name, then at most three digits */
        size_t nl = strlen(name), n_said = 0;
        long said = -1;
        for (const char *p = segment; *p != '\0'; p++) {
            if ((p > segment && isalnum((unsigned char)p[-1])) || strncasecmp(p, name, nl) != 0) {
                continue;
            }
            const char *d = p + nl;
            d += *d == ' ' || *d == '-' || *d == '_';
            size_t digits = strspn(d, "0123456789");
            if (digits == 0 || digits > 3 || isalpha((unsigned char)d[digits])) {
                continue;
            }
            long v = strtol(d, NULL, 10);
            n_said += said != v;
            said = v;
        }
        if (n_said != 1) {
            continue; /* none, or "hdmi 1 or hdmi 2": the model's */
        }
        const char *meant = NULL;
        for (size_t e = 0; e < arg->schema->n_enum; e++) {
            size_t p = 0;
            if (value_number(arg->schema->enum_str[e], &p) == said && p == nl &&
                strncasecmp(arg->schema->enum_str[e], name, nl) == 0) {
                meant = arg->schema->enum_str[e];
            }
        }
        char person[48];
        if (meant == NULL) {
            snprintf(person, sizeof(person), "%s%ld", name, said); /* refused with the list */
            meant = person;
        }
        if (strcmp(had, meant) != 0) {
            json_object_set_new(args, arg->name, json_string(meant));
            changed = true;
        }
    }
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}
