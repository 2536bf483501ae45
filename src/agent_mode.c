/*
 * agent_mode.c - modes and sides in the person's words (docs/agent.md, "A mode turned off", "A
 * tool's own verb is its on side").
 *
 * "turn off turbo" had set the mower's mode to turbo ("The mower is already in turbo mode."):
 * a small model hears the mode's name and calls the tool that sets it. A mode is one value of
 * a key that holds one of several; turning it off means going back to the value the pack
 * declares the device starts in. The off words are generic English; the key, its values and
 * its initial value are read from the pack.
 */
#include "agent_mode.h"

#include "agent_said.h"
#include "toolspec.h"
#include "verbbank.h"
#include "words.h"

#include <ctype.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* "leave" is not one: "leave it on turbo" keeps it */
static const char *const OFF_WORDS[] = {"off",  "no more", "disable",     "deactivate",
                                        "exit", "quit",    "get out of",  "come out of",
                                        "stop", "cancel",  "drop out of", "switch off"};

/* "don't turn off turbo" keeps it ("no more turbo" is an off word, not a negation) */
static const char *const DONT[] = {"dont", "do not", "never", "not", "wont", "shouldnt"};

bool agent_mode_turned_off(const struct pipit_toolset *ts,
                           int32_t tool,
                           const char *segment,
                           const json_t *state,
                           struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL ||
        !json_is_object(state)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    if (t->params == NULL || tp == NULL || pack == NULL) {
        return false;
    }
    size_t n_req = 0;
    const struct pipit_schema_prop *arg = pipit_tool_only_required(t, &n_req);
    if (n_req > 1) {
        return false; /* one required argument */
    }
    if (arg == NULL || arg->schema->type != PIPIT_SCHEMA_STRING || arg->schema->n_enum < 3) {
        return false;
    }
    for (size_t e = 0; e < arg->schema->n_enum; e++) {
        if (strcmp(arg->schema->enum_str[e], "on") == 0 ||
            strcmp(arg->schema->enum_str[e], "off") == 0) {
            return false; /* a switch with more sides: "flash off" is a value */
        }
    }
    const char *key = NULL;
    for (size_t k = 0; k < tp->n_set && key == NULL; k++) {
        const struct pipit_effect_set *es = &tp->set[k];
        if (es->key.key_arg == NULL && es->value.arg != NULL && es->value.map == NULL &&
            strcmp(es->value.arg, arg->name) == 0) {
            key = es->key.key;
        }
    }
    const struct pipit_pack_key *pk = key != NULL ? pipit_pack_find_key(pack, key) : NULL;
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    const char *v = json_string_value(json_object_get(args, arg->name));
    const char *initial = pk != NULL ? json_string_value(pk->initial) : NULL;
    const char *now = json_string_value(json_object_get(state, key != NULL ? key : ""));
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    bool ok = v != NULL && initial != NULL && now != NULL && strcmp(initial, v) != 0 &&
              n < GUARD_MAX_TOKENS && agent_said_value(tok, n, v) &&
              agent_said_any(tok, n, OFF_WORDS, N_OF(OFF_WORDS)) &&
              !agent_said_any(tok, n, DONT, N_OF(DONT));
    for (size_t e = 0; ok && e < arg->schema->n_enum; e++) {
        const char *other = arg->schema->enum_str[e];
        ok = strcmp(other, v) == 0 || !agent_said_value(tok, n, other); /* "turbo off, eco on" */
    }
    bool changed = false;
    if (ok) {
        const char *to = strcmp(now, v) == 0 ? initial : now;
        changed = json_object_set_new(args, arg->name, json_string(to)) == 0;
    }
    bool put = agent_said_put_args(call, args, changed);
    json_decref(args);
    return put;
}

/* The sides of a switch said as an enum: on side first. */
static const char *const SIDES[][2] = {{"start", "stop"},  {"on", "off"},
                                       {"open", "close"},  {"play", "pause"},
                                       {"lock", "unlock"}, {"enable", "disable"}};
/* Words of stopping: the off side is then what was asked. */
static const char *const STOPPING[] = {"stop",   "end",  "off",    "pause", "halt",
                                       "finish", "quit", "cancel", "close", "enough",
                                       "done",   "kill", "no"};
/* Words before a command's verb. */
static const char *const LEADS[] = {"please", "pls", "ok",    "okay", "now", "just",  "and", "then",
                                    "so",     "can", "could", "you",  "go",  "ahead", "lets"};

bool agent_own_verb_side(const struct pipit_toolset *ts,
                         int32_t tool,
                         const char *segment,
                         struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    size_t n_req = 0;
    const struct pipit_schema_prop *arg = pipit_tool_only_required(t, &n_req);
    if (n_req > 1) {
        return false;
    }
    if (arg == NULL || arg->schema->type != PIPIT_SCHEMA_STRING || arg->schema->n_enum != 2) {
        return false;
    }
    const char *e0 = arg->schema->enum_str[0], *e1 = arg->schema->enum_str[1];
    const char *on = NULL, *off = NULL;
    for (size_t k = 0; k < N_OF(SIDES) && on == NULL; k++) {
        if ((strcmp(e0, SIDES[k][0]) == 0 && strcmp(e1, SIDES[k][1]) == 0) ||
            (strcmp(e1, SIDES[k][0]) == 0 && strcmp(e0, SIDES[k][1]) == 0)) {
            on = SIDES[k][0];
            off = SIDES[k][1];
        }
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS), v = 0;
    while (v < n && agent_said_any(tok + v, 1, LEADS, N_OF(LEADS))) {
        v++;
    }
    size_t lv = strcspn(t->name, "_ .-");
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    const char *now = json_string_value(json_object_get(args, arg->name));
    bool ok = on != NULL && now != NULL && strcmp(now, off) == 0 && n < GUARD_MAX_TOKENS && v < n &&
              lv >= 3 && strlen(tok[v].w) == lv && strncmp(tok[v].w, t->name, lv) == 0 &&
              strcmp(tok[v].w, on) != 0 && !agent_said_any(tok, n, STOPPING, N_OF(STOPPING)) &&
              !agent_said_negation(tok, n);
    bool changed = ok && json_object_set_new(args, arg->name, json_string(on)) == 0;
    bool put = agent_said_put_args(call, args, changed);
    json_decref(args);
    return put;
}

bool agent_stop_what_runs(const struct pipit_toolset *ts,
                          const char *segment,
                          const json_t *state,
                          struct pipit_call *call) {
    static const char *const STOP[] = {"stop", "end", "finish", "enough"};
    static const char *const AROUND[] = {"it",      "that",  "this",  "now",  "ok",     "okay",
                                         "please",  "right", "then",  "just", "so",     "and",
                                         "already", "there", "thats", "now",  "alright"};
    if (ts == NULL || segment == NULL || call == NULL || !json_is_object(state)) {
        return false;
    }
    struct words_tok tok[16];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, 16);
    bool stop = false;
    for (size_t i = 0; i < n; i++) {
        if (agent_said_any(tok + i, 1, STOP, N_OF(STOP))) {
            stop = true;
        } else if (!agent_said_any(tok + i, 1, AROUND, N_OF(AROUND))) {
            return false; /* "stop the timer" names what */
        }
    }
    if (!stop || n >= 16) {
        return false;
    }
    int32_t found = -1;
    const char *arg = NULL;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
            const struct pipit_effect_set *es = &tp->set[k];
            const json_t *off =
                es->value.map != NULL ? json_object_get(es->value.map, "stop") : NULL;
            const json_t *now = json_object_get(state, es->key.key);
            if (es->key.key_arg != NULL || es->value.arg == NULL || off == NULL || now == NULL ||
                json_equal((json_t *)off, (json_t *)now)) {
                continue; /* not a key a stop maps, or not running */
            }
            size_t n_req = 0;
            for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
                n_req += t->params->props[j].required;
            }
            if (n_req != 1) {
                continue;
            }
            if (found >= 0 && found != (int32_t)i) {
                return false; /* two things run: which one is not said */
            }
            found = (int32_t)i;
            arg = es->value.arg;
        }
    }
    /* an argumentless tool named for stopping that puts a key back to its declared initial
     * value while the state holds another ("stop it" during a descaling: stop_cleaning) */
    static const char *const STOP_VERBS[] = {"stop", "end", "finish", "halt", "abort", "cancel"};
    int32_t stopper = -1;
    for (size_t i = 0; found < 0 && i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        char verb[WORDS_CAP];
        size_t lv = strcspn(t->name, "_");
        bool required = false;
        for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
            required = required || t->params->props[j].required;
        }
        if (required || tp == NULL || lv == 0 || lv >= sizeof(verb)) {
            continue;
        }
        for (size_t c = 0; c < lv; c++) {
            verb[c] = (char)tolower((unsigned char)t->name[c]);
        }
        verb[lv] = '\0';
        if (!words_in_list(verb, STOP_VERBS, N_OF(STOP_VERBS))) {
            continue;
        }
        for (size_t k = 0; k < tp->n_set; k++) {
            const struct pipit_effect_set *es = &tp->set[k];
            const struct pipit_pack_key *pk =
                es->key.key_arg == NULL ? pipit_pack_find_key(pipit_toolset_pack(ts), es->key.key)
                                        : NULL;
            const json_t *now = json_object_get(state, es->key.key);
            if (pk == NULL || pk->initial == NULL || es->value.arg != NULL || now == NULL ||
                !json_equal((json_t *)es->value.constant, (json_t *)pk->initial) ||
                json_equal((json_t *)now, (json_t *)pk->initial)) {
                continue;
            }
            if (stopper >= 0 && stopper != (int32_t)i) {
                return false; /* two things run */
            }
            stopper = (int32_t)i;
        }
    }
    if (found < 0 && stopper >= 0) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)stopper);
        if (strcmp(call->name, t->name) == 0) {
            return false; /* the model's own */
        }
        return agent_said_replace_call(call, t, json_object());
    }
    if (found < 0) {
        return false;
    }
    json_t *args = json_object();
    json_object_set_new(args, arg, json_string("stop"));
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)found);
    if (strcmp(call->name, t->name) == 0 && call->args_json != NULL) {
        json_t *had = json_loads(call->args_json, 0, NULL);
        bool same = json_equal(had, args);
        json_decref(had);
        if (same) {
            json_decref(args);
            return false; /* the model's own */
        }
    }
    return agent_said_replace_call(call, t, args);
}

/* Whether tool `i` writes `key` (any effect of it, fixed or per place). */
static bool writes_key(const struct pipit_toolset *ts, size_t i, const char *key) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
    for (size_t k = 0; tp != NULL && k < tp->n_changes; k++) {
        if (strcmp(tp->changes[k], key) == 0) {
            return true;
        }
    }
    return false;
}

bool agent_key_turned_off(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const char *key,
                          struct pipit_call *call) {
    static const char *const CLEARS[] = {"off", "cancel", "clear", "kill", "stop", "end", "reset"};
    if (ts == NULL || segment == NULL || key == NULL || call == NULL ||
        (tool >= 0 && ((size_t)tool >= ts->n_tools || writes_key(ts, (size_t)tool, key))) ||
        strpbrk(segment, "0123456789") != NULL) {
        return false; /* the model's tool writes the key: its call, however wrong */
    }
    struct words_tok tok[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, 48);
    if (n == 0 || n >= 48 || !agent_said_any(tok, n, CLEARS, N_OF(CLEARS)) ||
        agent_said_any(tok, n, DONT, N_OF(DONT))) {
        return false;
    }
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        bool required = false;
        for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
            required = required || t->params->props[j].required;
        }
        bool clears = false;
        for (size_t k = 0; tp != NULL && !required && k < tp->n_set; k++) {
            const struct pipit_effect_set *e = &tp->set[k];
            const json_t *c = e->value.constant;
            const struct pipit_pack_key *pk = pipit_pack_find_key(pipit_toolset_pack(ts), key);
            bool initial = pk != NULL && pk->initial != NULL && c != NULL &&
                           json_equal((json_t *)c, (json_t *)pk->initial);
            clears =
                clears ||
                (e->key.key_arg == NULL && strcmp(e->key.key, key) == 0 && e->value.arg == NULL &&
                 (json_is_false(c) || initial || (json_is_number(c) && json_number_value(c) == 0)));
        }
        if (clears) {
            if (found >= 0) {
                return false; /* two tools clear it: not this rule's to choose */
            }
            found = (int32_t)i;
        }
    }
    return found >= 0 &&
           agent_said_replace_call(call, pipit_toolset_tool(ts, (size_t)found), json_object());
}

/* Whether the segment's verb (its first word after lead words) is `verb` or a verb people use
 * for it (verbbank.h: "end" for "stop", "run" is no member: "run" stays the model's). */
static bool opens_with_verb(const struct words_tok *tok, size_t n, const char *verb) {
    static const char *const VERB_LEADS[] = {"please", "pls", "ok",    "okay", "now",  "just",
                                             "can",    "you", "could", "hey",  "then", "and"};
    size_t v = 0;
    while (v < n && words_in_list(tok[v].w, VERB_LEADS, N_OF(VERB_LEADS))) {
        v++;
    }
    if (v >= n) {
        return false;
    }
    if (strcmp(tok[v].w, verb) == 0) {
        return true;
    }
    const char *alt[VERBBANK_MAX_ALT];
    int k = verbbank_alternatives(verb, alt);
    for (int i = 0; i < k; i++) {
        if (strchr(alt[i], ' ') == NULL && strcmp(alt[i], tok[v].w) == 0) {
            return true;
        }
    }
    return false;
}

/* Whether token `w` says enum value `v` (one word): the word itself, a longer form
 * ("rinses"), or its -ing / -ed form ("descaling", "descaled" for "descale"). */
static bool word_says(const char *w, const char *v) {
    size_t lw = strlen(w), lv = strlen(v);
    if (lv < 3) {
        return strcmp(w, v) == 0;
    }
    if (strncmp(w, v, lv) == 0) {
        return true;
    }
    size_t stem = v[lv - 1] == 'e' ? lv - 1 : lv;
    return lw > stem && strncmp(w, v, stem) == 0 &&
           (strcmp(w + stem, "ing") == 0 || strcmp(w + stem, "ed") == 0);
}

/* The one value of string enum `s` the tokens say (see word_says(); "milk_clean" as "milk
 * clean"), or NULL (none or two). */
static const char *
enum_value_said(const struct pipit_schema *s, const struct words_tok *tok, size_t n) {
    const char *found = NULL;
    for (size_t e = 0; s != NULL && s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
        const char *v = s->enum_str[e];
        bool said =
            strchr(v, '_') != NULL || strchr(v, ' ') != NULL ? agent_said_value(tok, n, v) : false;
        for (size_t i = 0; !said && strchr(v, '_') == NULL && i < n; i++) {
            char low[WORDS_CAP];
            size_t l = strlen(v);
            if (l >= sizeof(low)) {
                break;
            }
            for (size_t c = 0; c <= l; c++) {
                low[c] = (char)tolower((unsigned char)v[c]);
            }
            said = word_says(tok[i].w, low);
        }
        if (said) {
            if (found != NULL) {
                return NULL;
            }
            found = v;
        }
    }
    return found;
}

bool agent_verb_pair_tool(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const char *name = pipit_toolset_tool(ts, (size_t)tool)->name;
    const char *rest = strchr(name, '_');
    if (rest == NULL || rest == name) {
        return false;
    }
    char own[WORDS_CAP];
    size_t lv = (size_t)(rest - name);
    if (lv >= sizeof(own)) {
        return false;
    }
    for (size_t i = 0; i < lv; i++) {
        own[i] = (char)tolower((unsigned char)name[i]);
    }
    own[lv] = '\0';
    struct words_tok tok[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, 48);
    if (n == 0 || n >= 48 || opens_with_verb(tok, n, own) ||
        agent_said_any(tok, n, DONT, N_OF(DONT))) {
        return false;
    }
    /* the other tool of the pair: another verb, the same rest ("stop_cleaning") */
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        const char *r = strchr(t->name, '_');
        char verb[WORDS_CAP];
        size_t l = r != NULL ? (size_t)(r - t->name) : 0;
        if (i == (size_t)tool || r == NULL || l == 0 || l >= sizeof(verb) || strcmp(r, rest) != 0) {
            continue;
        }
        for (size_t c = 0; c < l; c++) {
            verb[c] = (char)tolower((unsigned char)t->name[c]);
        }
        verb[l] = '\0';
        if (!opens_with_verb(tok, n, verb)) {
            continue;
        }
        /* its required arguments from the model's call, by name, or the one enum value said
         * ("start descaling": program "descale") */
        json_t *had = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
        json_t *args = json_object();
        bool filled = json_is_object(had);
        for (size_t j = 0; filled && t->params != NULL && j < t->params->n_props; j++) {
            const struct pipit_schema_prop *p = &t->params->props[j];
            json_t *v = json_object_get(had, p->name);
            const char *said = v == NULL ? enum_value_said(p->schema, tok, n) : NULL;
            if (v != NULL) {
                json_object_set(args, p->name, v);
            } else if (said != NULL) {
                json_object_set_new(args, p->name, json_string(said));
            } else {
                filled = !p->required;
            }
        }
        json_decref(had);
        if (!filled) {
            json_decref(args);
            return false;
        }
        return agent_said_replace_call(call, t, args);
    }
    return false;
}
