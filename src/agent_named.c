/*
 * agent_named.c - a tool the person named in full (docs/agent.md, "A tool named in full").
 *
 * "cancel the timer" had set a 40-minute timer on the phone pack: the model heard "timer" and
 * took the tool it had seen most with it. When the segment says every word of one tool's name
 * (two words or more: cancel_timer, request_ride) and not every word of the model's, the
 * person named the tool; the call becomes that tool's when its required arguments can be
 * filled from what was said, the model's call and the state. Nothing here knows a pack.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_named.h"

#include "agent_choose.h"
#include "agent_frame.h"
#include "agent_number.h"
#include "agent_question.h"
#include "agent_said.h"
#include "agent_time.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Whether the tokens say `w`, as is or with (or without) a plural "s". */
static bool says_word(const struct words_tok *t, size_t n, const char *w, size_t lw) {
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(t[i].w);
        if ((l == lw && strncmp(t[i].w, w, lw) == 0) ||
            (l == lw + 1 && strncmp(t[i].w, w, lw) == 0 && t[i].w[lw] == 's') ||
            (l + 1 == lw && strncmp(t[i].w, w, l) == 0 && w[l] == 's')) {
            return true;
        }
    }
    return false;
}

/* Verbs a query's name opens with that a question does not say ("get_ticket_status": "what's
 * the status of ticket 1000?"). */
static const char *const QUERY_VERBS[] = {"get",  "read",  "check",  "fetch", "show",
                                          "list", "query", "lookup", "look"};

/* The number of words of a tool's name, and whether the tokens say them all; `query`: a
 * leading query verb need not be said. */
static size_t
name_said(const char *name, const struct words_tok *t, size_t n, bool query, bool *all) {
    size_t words = 0;
    *all = true;
    for (const char *p = name; *p != '\0';) {
        size_t l = strcspn(p, "_-. ");
        char w[WORDS_CAP];
        if (l > 0 && l < sizeof(w)) {
            for (size_t i = 0; i < l; i++) {
                w[i] = (char)tolower((unsigned char)p[i]);
            }
            w[l] = '\0';
            words++;
            bool skip = query && p == name &&
                        words_in_list(w, QUERY_VERBS, sizeof(QUERY_VERBS) / sizeof(QUERY_VERBS[0]));
            *all = *all && (skip || says_word(t, n, w, l));
        }
        p += l;
        p += *p != '\0';
    }
    return words;
}

/* The one query (effect "read") a word of whose name the tokens say, a word no other tool's
 * name has and no query verb ("status" of get_ticket_status), or -1. */
static int32_t query_by_word(const struct pipit_toolset *ts,
                             const struct words_tok *t,
                             size_t n,
                             bool (*is_q)(const struct pipit_toolset *, size_t)) {
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (pipit_toolset_is_cloud(ts, i) || !is_q(ts, i)) {
            continue;
        }
        bool said = false;
        for (const char *p = ts->tools[i].name; *p != '\0' && !said;) {
            size_t l = strcspn(p, "_-. ");
            char w[WORDS_CAP];
            if (l >= 3 && l < sizeof(w)) {
                for (size_t c = 0; c < l; c++) {
                    w[c] = (char)tolower((unsigned char)p[c]);
                }
                w[l] = '\0';
                bool own =
                    !words_in_list(w, QUERY_VERBS, sizeof(QUERY_VERBS) / sizeof(QUERY_VERBS[0]));
                for (size_t o = 0; own && o < ts->n_tools; o++) {
                    own = o == i || !words_name_has(ts->tools[o].name, w, l);
                }
                said = own && says_word(t, n, w, l);
            }
            p += l;
            p += *p != '\0';
        }
        if (said) {
            if (found >= 0) {
                return -1;
            }
            found = (int32_t)i;
        }
    }
    return found;
}

/* The letters (and a dash) before the digits of the examples' values of `arg` ("TM-" of
 * "TM-1"); false when they show no such shape. */
static bool id_prefix(const struct pipit_tool_pack *tp, const char *arg, char *out, size_t size) {
    for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
        const char *x = json_string_value(json_object_get(tp->examples[e].args, arg));
        size_t l = x != NULL ? strcspn(x, "0123456789") : 0;
        if (l > 0 && l < size && x[l] != '\0') {
            memcpy(out, x, l);
            out[l] = '\0';
            return true;
        }
    }
    return false;
}

/* The "id" of the one item of the state's arrays whose id starts with `prefix`, or NULL. */
static const char *one_item(const json_t *state, const char *prefix) {
    const char *found = NULL, *key;
    const json_t *v;
    size_t n_found = 0;
    json_object_foreach((json_t *)state, key, v) {
        size_t i;
        const json_t *item;
        json_array_foreach(v, i, item) {
            const char *id = json_string_value(json_object_get(item, "id"));
            if (id != NULL && strncmp(id, prefix, strlen(prefix)) == 0) {
                found = id;
                n_found++;
            }
        }
    }
    return n_found == 1 ? found : NULL;
}

/* The newest identifier in `text` that starts with `prefix`, goes on with digits and is not
 * `other` (NULL: any) ("T-1001" in "ticket_id: T-1001, priority: high"), copied into out; false
 * when none. */
static bool
newest_id(const char *text, const char *prefix, const char *other, char *out, size_t size) {
    size_t lp = strlen(prefix);
    bool found = false;
    for (const char *p = text; p != NULL && (p = strstr(p, prefix)) != NULL; p += lp) {
        bool start = p == text || !isalnum((unsigned char)p[-1]);
        size_t d = strspn(p + lp, "0123456789");
        if (start && d > 0 && !isalnum((unsigned char)p[lp + d]) && lp + d < size &&
            (other == NULL || strlen(other) != lp + d || strncmp(p, other, lp + d) != 0)) {
            memcpy(out, p, lp + d);
            out[lp + d] = '\0';
            found = true;
        }
    }
    return found;
}

/* The identifier argument `p` of tool `i` names, in the shape of its examples ("T-1000"): the one
 * number the segment says in that shape ("ticket 1000"), else for a query (effect "read") the
 * newest of that shape in `memory` (the session's results: "its status" after "open a
 * ticket"), else the one item of
 * that shape in the state; NULL when the argument shows no shape, the segment says other
 * numbers, or nothing is found (new reference). */
static json_t *id_for(const struct pipit_toolset *ts,
                      size_t i,
                      const struct pipit_schema_prop *p,
                      const char *segment,
                      const char *memory,
                      const json_t *state,
                      bool pointed) {
    char prefix[16], id[64];
    size_t ln = strlen(p->name);
    if (p->schema->type != PIPIT_SCHEMA_STRING || ln < 2 ||
        strcasecmp(p->name + ln - 2, "id") != 0 ||
        !id_prefix(pipit_toolset_tool_pack(ts, i), p->name, prefix, sizeof(prefix))) {
        return NULL;
    }
    double said[2], raw[2];
    size_t n_said = agent_numbers_written(segment, 0, said, raw, 2);
    if (n_said == 1 && raw[0] >= 0 && floor(raw[0]) == raw[0] && raw[0] < 1e9) {
        snprintf(id, sizeof(id), "%s%lld", prefix, (long long)raw[0]); /* "ticket 1000" */
        return json_string(id);
    }
    if (n_said > 0) {
        return NULL;
    }
    /* a query only: reading the wrong ticket is said and harmless, cancelling the wrong
     * timer is not ("cancel the timer" with two running stays a question of which); or an
     * item the person points back at ("add ship the onboarding doc to it": the note just made) */
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
    bool query = tp != NULL && tp->effect == PIPIT_EFFECT_READ;
    if ((query || pointed) && memory != NULL && newest_id(memory, prefix, NULL, id, sizeof(id))) {
        return json_string(id);
    }
    const char *one = one_item(state, prefix);
    return one != NULL ? json_string(one) : NULL;
}

/* A value for required argument `p` of tool `i`, or NULL (new reference). */
static json_t *fill(const struct pipit_toolset *ts,
                    size_t i,
                    const struct pipit_schema_prop *p,
                    const json_t *model_args,
                    const char *segment,
                    const struct words_tok *t,
                    size_t n,
                    const char *memory,
                    const json_t *state,
                    bool pointed) {
    const struct pipit_schema *s = p->schema;
    const json_t *had = json_object_get(model_args, p->name);
    bool string = s->type == PIPIT_SCHEMA_STRING;
    bool number = s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER;
    if (s->n_enum > 0 && string) {
        const char *said = NULL;
        for (size_t e = 0; e < s->n_enum; e++) {
            char phrase[WORDS_CAP * 2];
            size_t l = strlen(s->enum_str[e]);
            if (l >= sizeof(phrase)) {
                continue;
            }
            for (size_t c = 0; c <= l; c++) {
                char ch = s->enum_str[e][c];
                phrase[c] = ch == '_' ? ' ' : (char)tolower((unsigned char)ch);
            }
            if (agent_said_phrase(t, n, phrase)) {
                if (said != NULL) {
                    return NULL; /* two values said */
                }
                said = s->enum_str[e];
            }
        }
        if (said != NULL) {
            return json_string(said);
        }
    }
    if (had != NULL && ((string && json_is_string(had)) || (number && json_is_number(had)) ||
                        (s->type == PIPIT_SCHEMA_BOOLEAN && json_is_boolean(had)))) {
        bool in_enum = s->n_enum == 0;
        for (size_t e = 0; !in_enum && e < s->n_enum; e++) {
            in_enum = string && strcmp(s->enum_str[e], json_string_value(had)) == 0;
        }
        if (in_enum) {
            return json_deep_copy(had);
        }
    }
    if (s->default_value != NULL) {
        return json_deep_copy(s->default_value);
    }
    char prefix[16];
    size_t ln = strlen(p->name);
    if (string && ln >= 2 && strcasecmp(p->name + ln - 2, "id") == 0 &&
        id_prefix(pipit_toolset_tool_pack(ts, i), p->name, prefix, sizeof(prefix))) {
        return id_for(ts, i, p, segment, memory, state, pointed);
    }
    int at = string && agent_time_arg(s) ? agent_time_of_day(segment) : -1;
    if (at >= 0) {
        char hhmm[8];
        snprintf(hhmm, sizeof(hhmm), "%02d:%02d", at / 60 % 24, at % 60);
        return json_string(hhmm); /* "set an alarm for 7 pm" */
    }
    double said[2], raw[2];
    if (number && agent_numbers_written(segment, 0, said, raw, 2) == 1) {
        return agent_said_number(said[0]);
    }
    return NULL;
}

/* Whether tool `i` is a query (effect "read"). */
static bool is_query(const struct pipit_toolset *ts, size_t i) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
    return tp != NULL && tp->effect == PIPIT_EFFECT_READ;
}

/* Whether every required argument of tool `t` is a string without an enum: an item's
 * identifier or free text, which a verb and what was said before fill; never a setting
 * ("back out one step" is no switch_camera(facing="back")). */
static bool takes_items_only(const struct pipit_tool *t) {
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema *s = t->params->props[j].schema;
        if (t->params->props[j].required && (s->type != PIPIT_SCHEMA_STRING || s->n_enum > 0)) {
            return false;
        }
    }
    return true;
}

/* Whether the tokens point back at something said before: "it", "that", "this", "them",
 * "those", or "one" that ends a description ("the beach one to Alice"; "one step" counts). */
static bool points_back(const struct words_tok *t, size_t n) {
    static const char *const BACK[] = {"it", "its", "that", "this", "them", "those"};
    static const char *const AFTER[] = {"to", "with", "for", "from", "please", "and", "on", "in"};
    if (agent_said_any(t, n, BACK, sizeof(BACK) / sizeof(BACK[0]))) {
        return true;
    }
    for (size_t i = 1; i < n; i++) {
        if (strcmp(t[i].w, "one") == 0 &&
            (i + 1 == n || words_in_list(t[i + 1].w, AFTER, sizeof(AFTER) / sizeof(AFTER[0])))) {
            return true;
        }
    }
    return false;
}

/* Whether tool `t` takes a number. */
static bool takes_number(const struct pipit_tool *t) {
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        enum pipit_schema_type ty = t->params->props[j].schema->type;
        if (ty == PIPIT_SCHEMA_NUMBER || ty == PIPIT_SCHEMA_INTEGER) {
            return true;
        }
    }
    return false;
}

/* Whether the model's arguments of tool `tool` hold a number the segment says in digits. */
static bool holds_said_number(const struct pipit_toolset *ts,
                              size_t tool,
                              const json_t *args,
                              const char *segment) {
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n = agent_numbers_written(segment, 0, said, raw, GUARD_MAX_NUMBERS);
    const struct pipit_tool *t = pipit_toolset_tool(ts, tool);
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const json_t *v = json_object_get(args, t->params->props[j].name);
        for (size_t k = 0; json_is_number(v) && k < n; k++) {
            if (fabs(json_number_value(v) - raw[k]) < 1e-9) {
                return true;
            }
        }
    }
    return false;
}

int agent_choose_tool_named_in_full(const struct pipit_toolset *ts,
                                    int32_t tool,
                                    const char *segment,
                                    const char *memory,
                                    const json_t *state,
                                    struct pipit_call *call,
                                    int32_t *named_out) {
    *named_out = -1;
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools) {
        return 0;
    }
    bool question = agent_asks_the_world(segment);
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    if (n >= GUARD_MAX_TOKENS || agent_said_negation(t, n)) {
        return 0;
    }
    bool all = false;
    if (name_said(ts->tools[tool].name, t, n, question && is_query(ts, (size_t)tool), &all) > 0 &&
        all) {
        return 0; /* the model's tool is named in full too */
    }
    int32_t named = -1;
    bool by_verb = false;
    for (size_t i = 0; i < ts->n_tools; i++) {
        bool query = is_query(ts, i);
        if (pipit_toolset_is_cloud(ts, i) || (question && !query) ||
            name_said(ts->tools[i].name, t, n, question && query, &all) < 2 || !all) {
            continue; /* a question names only a query */
        }
        if (named >= 0) {
            return 0; /* two tools named */
        }
        named = (int32_t)i;
    }
    int32_t qw =
        named < 0 && question && points_back(t, n) ? query_by_word(ts, t, n, is_query) : -1;
    if (qw >= 0 && qw != tool) {
        /* "what's the status on that one?" -> the cloud: a question about something said
         * before, a word only one query's name has: that query, its item the newest */
        named = qw;
        by_verb = true;
    }
    char verb[WORDS_CAP];
    int32_t vt = named < 0 && !question && points_back(t, n)
                     ? agent_example_verb(ts, segment, verb, sizeof(verb))
                     : -1;
    if (vt >= 0 && vt != tool && !pipit_toolset_is_cloud(ts, (size_t)vt) &&
        takes_items_only(pipit_toolset_tool(ts, (size_t)vt)) &&
        !agent_names_tool(ts, (size_t)tool, segment)) { /* "snap it with the flash": set_flash */
        /* "open that" after a search -> Wi-Fi off: a verb only one tool's examples open with
         * ("open F-201"), about something said before: that tool, when its words fill its
         * free text (agent_frame.h) and memory holds its item */
        named = vt;
        by_verb = true;
    }
    if (named < 0) {
        return 0;
    }
    const struct pipit_tool *nt = pipit_toolset_tool(ts, (size_t)named);
    json_t *model_args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    if (holds_said_number(ts, (size_t)tool, model_args, segment) && !takes_number(nt)) {
        /* "set heater to 26 degrees" -> set_temperature(celsius=26): the number said is the
         * model's tool's, and set_heater takes none */
        json_decref(model_args);
        return 0;
    }
    json_t *args = json_object();
    if (by_verb) {
        agent_frame_values(ts, named, segment, args); /* "add ship the doc to it": the text */
    }
    bool whole = true;
    for (size_t j = 0; whole && nt->params != NULL && j < nt->params->n_props; j++) {
        const struct pipit_schema_prop *p = &nt->params->props[j];
        if (!p->required || json_object_get(args, p->name) != NULL) {
            continue;
        }
        json_t *v = fill(ts, (size_t)named, p, model_args, segment, t, n, memory, state, by_verb);
        whole = v != NULL && json_object_set_new(args, p->name, v) == 0;
    }
    json_decref(model_args);
    *named_out = named;
    if (!whole) {
        json_decref(args);
        return by_verb ? 0 : -1; /* a verb names less than a name in full: the model's call */
    }
    json_t *ordered = json_object(); /* the schema's order */
    for (size_t j = 0; ordered != NULL && nt->params != NULL && j < nt->params->n_props; j++) {
        json_t *v = json_object_get(args, nt->params->props[j].name);
        if (v != NULL) {
            json_object_set(ordered, nt->params->props[j].name, v);
        }
    }
    json_decref(args);
    return agent_said_replace_call(call, nt, ordered) ? 1 : 0;
}

/* `call` (a call, or zeroed) made tool `tool` with `args` (consumed), every required argument
 * it lacks filled as fill() does (no model arguments); false, and `call` unchanged, when one
 * cannot be. */
static bool call_filled(const struct pipit_toolset *ts,
                        int32_t tool,
                        json_t *args,
                        const char *segment,
                        const struct words_tok *t,
                        size_t n,
                        const char *memory,
                        const json_t *state,
                        bool pointed,
                        struct pipit_call *call) {
    const struct pipit_tool *tt = pipit_toolset_tool(ts, (size_t)tool);
    json_t *none = json_object();
    bool whole = none != NULL;
    for (size_t j = 0; whole && tt->params != NULL && j < tt->params->n_props; j++) {
        const struct pipit_schema_prop *p = &tt->params->props[j];
        if (p->required && json_object_get(args, p->name) == NULL) {
            json_t *v = fill(ts, (size_t)tool, p, none, segment, t, n, memory, state, pointed);
            whole = v != NULL && json_object_set_new(args, p->name, v) == 0;
        }
    }
    json_decref(none);
    if (!whole) {
        json_decref(args);
        return false;
    }
    return agent_said_replace_call(call, tt, args);
}

bool agent_query_asked(const struct pipit_toolset *ts,
                       const char *segment,
                       const char *memory,
                       const json_t *state,
                       struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || !agent_asks_the_world(segment)) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    int32_t q = n < GUARD_MAX_TOKENS && !agent_said_negation(t, n) && points_back(t, n)
                    ? query_by_word(ts, t, n, is_query)
                    : -1;
    if (q < 0) {
        return false;
    }
    json_t *args = json_object();
    memset(call, 0, sizeof(*call));
    return args != NULL && call_filled(ts, q, args, segment, t, n, memory, state, true, call);
}

bool agent_fill_missing_id(const struct pipit_toolset *ts,
                           int32_t tool,
                           const char *segment,
                           const char *memory,
                           const json_t *state,
                           struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool changed = false;
    for (size_t j = 0; json_is_object(args) && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        json_t *id = p->required && json_object_get(args, p->name) == NULL
                         ? id_for(ts, (size_t)tool, p, segment, memory, state, false)
                         : NULL;
        if (id != NULL) {
            json_object_set_new(args, p->name, id);
            changed = true;
        }
    }
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

/* Whether string field `text` says word `w`, its words split at '/', '-', '_' and '.' too
 * ("/Secure/passport-scan.pdf" says "passport"). */
static bool field_says(const char *text, const char *w) {
    char buf[256];
    if (text == NULL) {
        return false;
    }
    pipit_format(buf, sizeof(buf), "%s", text);
    for (char *p = buf; *p != '\0'; p++) {
        *p = *p == '/' || *p == '-' || *p == '_' || *p == '.' ? ' ' : *p;
    }
    struct words_tok f[24];
    size_t nf = words_tokenize(buf, strlen(buf), 0, f, 24);
    return says_word(f, nf, w, strlen(w));
}

/* How many of the segment's content words (three letters or more, no glue) item `item`'s string
 * fields say, and its numbers the segment writes ("the 5 minute one": minutes 5). */
static int item_score(const json_t *item,
                      const struct words_tok *t,
                      size_t n,
                      const double *nums,
                      size_t n_nums) {
    static const char *const GLUE[] = {
        "the",   "and",   "from",   "with", "that",    "this", "one", "send",   "open", "show",
        "share", "photo", "photos", "pic",  "picture", "for",  "my",  "please", "me",   "to"};
    int score = 0;
    for (size_t i = 0; i < n; i++) {
        if (strlen(t[i].w) < 3 || words_in_list(t[i].w, GLUE, sizeof(GLUE) / sizeof(GLUE[0]))) {
            continue;
        }
        bool hit = false;
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)item, k, v) {
            if (strcmp(k, "id") == 0) {
                continue;
            }
            hit = hit || field_says(json_string_value(v), t[i].w);
            size_t a;
            const json_t *e;
            json_array_foreach(v, a, e) {
                hit = hit || field_says(json_string_value(e), t[i].w);
            }
        }
        score += hit ? 1 : 0;
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)item, k, v) {
        for (size_t q = 0; json_is_number(v) && q < n_nums; q++) {
            score += json_number_value(v) == nums[q] ? 1 : 0;
        }
    }
    return score;
}

/* The one item of the state's arrays whose "id" starts with `prefix` ("" for any) that scores
 * best (item_score()), or NULL when none scores or two tie; its score into *best_score, and the
 * score of item `had` (when not NULL) into *had_score (-1: not found). */
static const char *best_item(const json_t *state,
                             const char *prefix,
                             const struct words_tok *t,
                             size_t n,
                             const double *nums,
                             size_t n_nums,
                             const char *had,
                             int *had_score,
                             int *best_score) {
    const char *best = NULL, *key;
    bool tie = false;
    const json_t *arr;
    *best_score = 0;
    if (had_score != NULL) {
        *had_score = -1;
    }
    json_object_foreach((json_t *)state, key, arr) {
        size_t a;
        const json_t *item;
        json_array_foreach(arr, a, item) {
            const char *id = json_string_value(json_object_get(item, "id"));
            if (id == NULL || strncmp(id, prefix, strlen(prefix)) != 0) {
                continue;
            }
            int sc = item_score(item, t, n, nums, n_nums);
            if (had != NULL && strcmp(id, had) == 0) {
                *had_score = sc;
            }
            if (sc > *best_score) {
                best = id;
                *best_score = sc;
                tie = false;
            } else if (sc == *best_score && sc > 0) {
                tie = true;
            }
        }
    }
    return tie ? NULL : best;
}

/* The item of shape `prefix` an ordinal after "the" picks among the state's items of that shape
 * in their order ("the first one" the first, "the second timer", "the last one", "the newest",
 * "the oldest"), or NULL when none is said or there are fewer items. */
static const char *
ordinal_item(const json_t *state, const char *prefix, const struct words_tok *t, size_t n) {
    static const struct {
        const char *w;
        int at; /* from the start, or -1: the last */
    } ORD[] = {{"first", 0},    {"second", 1}, {"third", 2},   {"fourth", 3}, {"oldest", 0},
               {"earliest", 0}, {"last", -1},  {"latest", -1}, {"newest", -1}};
    int at = -2;
    for (size_t i = 1; i < n && at == -2; i++) {
        for (size_t k = 0; k < sizeof(ORD) / sizeof(ORD[0]) && strcmp(t[i - 1].w, "the") == 0;
             k++) {
            at = strcmp(t[i].w, ORD[k].w) == 0 ? ORD[k].at : at;
        }
    }
    if (at == -2) {
        return NULL;
    }
    const char *ids[64], *key;
    size_t n_ids = 0;
    const json_t *arr;
    json_object_foreach((json_t *)state, key, arr) {
        size_t a;
        const json_t *item;
        json_array_foreach(arr, a, item) {
            const char *id = json_string_value(json_object_get(item, "id"));
            if (id != NULL && strncmp(id, prefix, strlen(prefix)) == 0 && n_ids < 64) {
                ids[n_ids++] = id;
            }
        }
    }
    if (at == -1) {
        return n_ids > 0 ? ids[n_ids - 1] : NULL;
    }
    return (size_t)at < n_ids ? ids[at] : NULL;
}

bool agent_resolve_item_id(const struct pipit_toolset *ts,
                           int32_t tool,
                           const char *segment,
                           const json_t *state,
                           struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || !json_is_object(state) || tool < 0 ||
        (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    double nums[4], raw[4];
    size_t n_nums = agent_numbers_written(segment, 0, nums, raw, 4);
    bool changed = false;
    for (size_t j = 0; json_is_object(args) && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        const char *had = json_string_value(json_object_get(args, p->name));
        char prefix[16];
        size_t ln = strlen(p->name);
        if (had == NULL || ln < 2 || strcasecmp(p->name + ln - 2, "id") != 0 ||
            !id_prefix(pipit_toolset_tool_pack(ts, (size_t)tool), p->name, prefix,
                       sizeof(prefix)) ||
            strstr(segment, had) != NULL) {
            continue; /* no identifier, or one the person wrote */
        }
        const char *by_order = ordinal_item(state, prefix, tok, n);
        if (by_order != NULL) {
            if (strcmp(by_order, had) != 0) { /* "cancel the first one": TM-1 */
                json_object_set_new(args, p->name, json_string(by_order));
                changed = true;
            }
            continue;
        }
        int best_score = 0, had_score = -1;
        const char *best =
            best_item(state, prefix, tok, n, nums, n_nums, had, &had_score, &best_score);
        if (best != NULL && best_score > had_score && strcmp(best, had) != 0) {
            json_object_set_new(args, p->name, json_string(best));
            changed = true;
        }
    }
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

bool agent_query_other_item(const struct pipit_toolset *ts,
                            int32_t last_tool,
                            const json_t *last_args,
                            const char *segment,
                            const char *memory,
                            const json_t *state,
                            struct pipit_call *call) {
    static const char *const OPEN[] = {"and",  "what about",     "how about",    "same for",
                                       "also", "and what about", "and how about"};
    static const char *const NEW[] = {"new", "newest", "latest", "just", "recent", "last"};
    if (ts == NULL || segment == NULL || call == NULL || last_tool < 0 ||
        (size_t)last_tool >= ts->n_tools || !is_query(ts, (size_t)last_tool) ||
        pipit_toolset_is_cloud(ts, (size_t)last_tool) || !json_is_object(last_args)) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS), lo = 0;
    while (lo < n && (strcmp(t[lo].w, "ok") == 0 || strcmp(t[lo].w, "okay") == 0 ||
                      strcmp(t[lo].w, "hmm") == 0 || strcmp(t[lo].w, "oh") == 0)) {
        lo++;
    }
    bool opens = false;
    for (size_t k = 0; k < sizeof(OPEN) / sizeof(OPEN[0]) && !opens; k++) {
        opens = words_match(t, n, lo, OPEN[k]) == words_count(OPEN[k]);
    }
    if (!opens || n - lo > 8 || agent_said_negation(t, n)) {
        return false;
    }
    char verb[WORDS_CAP];
    int32_t vt = agent_example_verb(ts, segment, verb, sizeof(verb));
    if (vt >= 0 && vt != last_tool) {
        return false; /* "and open it" */
    }
    for (size_t k = lo; k < n; k++) {
        size_t l = strlen(t[k].w);
        for (size_t i = 0; l >= 3 && i < ts->n_tools; i++) {
            if ((int32_t)i != last_tool && !pipit_toolset_is_cloud(ts, i) &&
                words_name_has(ts->tools[i].name, t[k].w, l) &&
                !words_name_has(ts->tools[last_tool].name, t[k].w, l)) {
                return false; /* "and the wifi?" */
            }
        }
    }
    const struct pipit_tool *lt = pipit_toolset_tool(ts, (size_t)last_tool);
    for (size_t j = 0; lt->params != NULL && j < lt->params->n_props; j++) {
        const struct pipit_schema_prop *p = &lt->params->props[j];
        const char *cur = json_string_value(json_object_get(last_args, p->name));
        char prefix[16], id[64];
        size_t ln = strlen(p->name);
        if (cur == NULL || ln < 2 || strcasecmp(p->name + ln - 2, "id") != 0 ||
            !id_prefix(pipit_toolset_tool_pack(ts, (size_t)last_tool), p->name, prefix,
                       sizeof(prefix))) {
            continue;
        }
        double said[2], raw[2];
        size_t n_said = agent_numbers_written(segment, 0, said, raw, 2);
        bool found = false;
        if (n_said == 1 && raw[0] >= 0 && floor(raw[0]) == raw[0] && raw[0] < 1e9) {
            snprintf(id, sizeof(id), "%s%lld", prefix, (long long)raw[0]); /* "and 1002?" */
            found = true;
        } else if (n_said == 0 && agent_said_any(t, n, NEW, sizeof(NEW) / sizeof(NEW[0])) &&
                   memory != NULL) {
            found = newest_id(memory, prefix, cur, id, sizeof(id));
        } else if (n_said == 0 && json_is_object(state)) {
            int best_score = 0;
            const char *b = best_item(state, prefix, t, n, said, 0, NULL, NULL, &best_score);
            found = b != NULL;
            if (found) {
                pipit_format(id, sizeof(id), "%s", b);
            }
        }
        if (!found || strcmp(id, cur) == 0) {
            return false;
        }
        json_t *args = json_deep_copy(last_args);
        if (args == NULL || json_object_set_new(args, p->name, json_string(id)) != 0) {
            json_decref(args);
            return false;
        }
        memset(call, 0, sizeof(*call));
        return agent_said_replace_call(call, lt, args);
    }
    return false;
}

/* Whether the segment names tool `i` by a word of its name no other tool's name has, or by the
 * verb only its examples open with (`verb_tool`). */
static bool names_alone(const struct pipit_toolset *ts,
                        size_t i,
                        const struct words_tok *t,
                        size_t n,
                        int32_t verb_tool) {
    if (verb_tool == (int32_t)i) {
        return true;
    }
    for (size_t k = 0; k < n; k++) {
        size_t l = strlen(t[k].w);
        if (l < 3 || !words_name_has(ts->tools[i].name, t[k].w, l)) {
            continue;
        }
        bool own = true;
        for (size_t o = 0; o < ts->n_tools && own; o++) {
            own = o == i || !words_name_has(ts->tools[o].name, t[k].w, l);
        }
        if (own) {
            return true;
        }
    }
    return false;
}

bool agent_item_call(const struct pipit_toolset *ts,
                     const char *segment,
                     const json_t *state,
                     bool named_only,
                     struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || !json_is_object(state) ||
        strchr(segment, '?') != NULL || agent_asks_the_world(segment)) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    if (n == 0 || n >= GUARD_MAX_TOKENS || agent_said_negation(t, n)) {
        return false;
    }
    double nums[4], raw[4];
    size_t n_nums = agent_numbers_written(segment, 0, nums, raw, 4);
    int best_score = 0;
    const char *best = best_item(state, "", t, n, nums, n_nums, NULL, NULL, &best_score);
    if (best == NULL) {
        return false;
    }
    char verb[WORDS_CAP];
    int32_t vt = agent_example_verb(ts, segment, verb, sizeof(verb));
    int32_t named = -1, query = -1;
    const char *named_arg = NULL, *query_arg = NULL;
    size_t n_named = 0, n_query = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *ti = pipit_toolset_tool(ts, i);
        const char *arg = NULL;
        for (size_t j = 0; ti->params != NULL && j < ti->params->n_props && arg == NULL; j++) {
            const struct pipit_schema_prop *p = &ti->params->props[j];
            char prefix[16];
            size_t ln = strlen(p->name);
            if (p->schema->type == PIPIT_SCHEMA_STRING && ln >= 2 &&
                strcasecmp(p->name + ln - 2, "id") == 0 &&
                id_prefix(pipit_toolset_tool_pack(ts, i), p->name, prefix, sizeof(prefix)) &&
                strncmp(best, prefix, strlen(prefix)) == 0 &&
                isdigit((unsigned char)best[strlen(prefix)])) {
                arg = p->name;
            }
        }
        if (arg == NULL || pipit_toolset_is_cloud(ts, i)) {
            continue;
        }
        if (names_alone(ts, i, t, n, vt)) {
            named = (int32_t)i;
            named_arg = arg;
            n_named++;
        }
        if (is_query(ts, i)) {
            query = (int32_t)i;
            query_arg = arg;
            n_query++;
        }
    }
    int32_t tool = n_named == 1 ? named : n_named == 0 && n_query == 1 && !named_only ? query : -1;
    const char *arg = n_named == 1 ? named_arg : query_arg;
    if (tool < 0) {
        return false;
    }
    json_t *args = json_object();
    if (args == NULL || json_object_set_new(args, arg, json_string(best)) != 0) {
        json_decref(args);
        return false;
    }
    return call_filled(ts, tool, args, segment, t, n, NULL, state, false, call);
}

/* Whether token `w` and name word `nw` (of `len` letters) are one word: a common start of four
 * letters or more ("navigating", "navigation"), or `w` an abbreviation of three letters or more
 * ("nav"). */
static bool same_stem(const char *w, const char *nw, size_t len) {
    static const char *const GLUE[] = {"the", "and", "for", "off",    "all", "now", "that", "this",
                                       "you", "can", "get", "set",    "put", "out", "one",  "two",
                                       "its", "now", "not", "please", "pls", "too", "way"};
    if (words_in_list(w, GLUE, sizeof(GLUE) / sizeof(GLUE[0]))) {
        return false;
    }
    size_t lw = strlen(w), c = 0;
    while (c < lw && c < len && w[c] == tolower((unsigned char)nw[c])) {
        c++;
    }
    return (c >= 4 && c + 3 >= lw && c + 4 >= len) || (lw >= 3 && c == lw && lw < len);
}

bool agent_choose_stop_tool(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            struct pipit_call *call) {
    static const char *const STOP[] = {"stop", "end",  "cancel", "off",   "quit",
                                       "exit", "kill", "finish", "clear", "cut"};
    static const char *const STOP_NAMES[] = {"stop", "end",  "cancel", "clear",
                                             "exit", "quit", "finish"};
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    if (n >= GUARD_MAX_TOKENS || agent_said_negation(t, n) ||
        !agent_said_any(t, n, STOP, sizeof(STOP) / sizeof(STOP[0]))) {
        return false;
    }
    char first[WORDS_CAP];
    size_t lf = strcspn(ts->tools[tool].name, "_-. ");
    pipit_format(first, sizeof(first), "%.*s", (int)lf, ts->tools[tool].name);
    if (words_in_list(first, STOP_NAMES, sizeof(STOP_NAMES) / sizeof(STOP_NAMES[0]))) {
        return false; /* the model's tool stops something already */
    }
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *x = &ts->tools[i];
        size_t l0 = strcspn(x->name, "_-. ");
        pipit_format(first, sizeof(first), "%.*s", (int)l0, x->name);
        if (i == (size_t)tool || pipit_toolset_is_cloud(ts, i) || x->name[l0] == '\0' ||
            !words_in_list(first, STOP_NAMES, sizeof(STOP_NAMES) / sizeof(STOP_NAMES[0]))) {
            continue;
        }
        bool named = false;
        for (const char *p = x->name + l0 + 1; *p != '\0' && !named;) {
            size_t l = strcspn(p, "_-. ");
            for (size_t k = 0; k < n && l >= 3 && !named; k++) {
                named = same_stem(t[k].w, p, l);
            }
            p += l;
            p += *p != '\0';
        }
        size_t n_req = 0;
        for (size_t j = 0; x->params != NULL && j < x->params->n_props; j++) {
            n_req += x->params->props[j].required ? 1 : 0;
        }
        if (named && n_req == 0) {
            if (found >= 0) {
                return false;
            }
            found = (int32_t)i;
        }
    }
    return found >= 0 && agent_said_replace_call(call, &ts->tools[found], json_object());
}
