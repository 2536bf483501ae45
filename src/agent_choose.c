/*
 * agent_choose.c - which tool the person asked for: the tool the segment's verb, value, number
 * or selector names replaces the model's choice, or makes a call of a plain-text answer
 * (docs/agent.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_choose.h"

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

/* The most settings one segment is read for (heard_settings_said()). */
#define MAX_SAID_SETTINGS 6

/* First words that are no verb of one tool. */
static const char *const NOT_VERBS[] = {
    "i",    "im",   "its",  "it",    "what",  "whats", "how",    "any",    "is",   "are",  "a",
    "an",   "the",  "my",   "no",    "never", "not",   "dont",   "set",    "make", "turn", "put",
    "get",  "give", "let",  "do",    "this",  "that",  "thats",  "there",  "we",   "me",   "lets",
    "want", "need", "show", "start", "stop",  "use",   "change", "switch", "more", "less"};

static bool by_value(const struct pipit_toolset *ts,
                     int32_t tool,
                     const char *segment,
                     const struct words_tok *tok,
                     size_t n,
                     struct pipit_call *call);
static const char *said_place(const struct pipit_toolset *ts,
                              size_t i,
                              size_t j,
                              const struct words_tok *tok,
                              size_t n);
static bool number_call(const struct pipit_toolset *ts,
                        const char *segment,
                        const struct words_tok *tok,
                        size_t n,
                        size_t *found,
                        json_t **made);
static bool bound_call(const struct pipit_toolset *ts,
                       const char *segment,
                       const struct words_tok *tok,
                       size_t n,
                       size_t *found,
                       json_t **made);
static bool switch_call(const struct pipit_toolset *ts,
                        const struct words_tok *tok,
                        size_t n,
                        int32_t not_tool,
                        size_t *found,
                        json_t **args);
static bool arg_description_says(const struct pipit_toolset *ts, const char *w);

bool agent_says_pack_word(const struct pipit_toolset *ts, const char *text) {
    static const char *const COMMON[] = {
        "the",    "and",  "for",    "you",    "your",  "are",   "was",   "were",  "its",  "his",
        "her",    "him",  "she",    "they",   "them",  "this",  "that",  "with",  "from", "have",
        "has",    "had",  "all",    "any",    "our",   "out",   "get",   "got",   "one",  "now",
        "just",   "very", "really", "kinda",  "sort",  "lol",   "haha",  "there", "here", "what",
        "who",    "how",  "when",   "where",  "not",   "but",   "too",   "also",  "some", "more",
        "much",   "bit",  "lot",    "off",    "into",  "onto",  "over",  "about", "like", "going",
        "gonna",  "will", "can",    "should", "would", "could", "been",  "being", "did",  "does",
        "done",   "dont", "than",   "then",   "yet",   "still", "again", "every", "each", "thing",
        "things", "way",  "time",   "today",  "right", "left",  "top",   "bottom"};
    if (ts == NULL || text == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(text, strlen(text), 0, tok, GUARD_MAX_TOKENS);
    for (size_t i = 0; i < n; i++) {
        const char *w = tok[i].w;
        if (strlen(w) < 3 || isdigit((unsigned char)w[0]) ||
            (words_in_list(w, COMMON, N_OF(COMMON)) && !arg_description_says(ts, w))) {
            continue;
        }
        if (heard_pack_names(ts, w) || arg_description_says(ts, w)) {
            return true;
        }
    }
    return false;
}

/* Whether the segment may name another tool than the model's `tool`: a pack tool that is
 * not the cloud, a segment that does not negate ("no daylight", "instead of portrait") and does
 * not thank ("thanks, that's a wrap for the food" closes; it sets no food mode). */
/* A segment of at most GUARD_MAX_TOKENS words that negates nothing and thanks nobody ("no
 * daylight", "instead of portrait", "thanks, that's a wrap for the food"). */
static bool asks_plainly(const struct words_tok *tok, size_t n) {
    static const char *const NOT_THIS[] = {"nor",   "instead of", "rather than", "thanks",
                                           "thank", "cheers",     "ty"};
    return n < GUARD_MAX_TOKENS && !agent_said_negation(tok, n) &&
           !agent_said_any(tok, n, NOT_THIS, N_OF(NOT_THIS));
}

static bool may_rename(const struct pipit_toolset *ts,
                       int32_t tool,
                       const char *segment,
                       struct words_tok *tok,
                       size_t *n) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL) {
        return false;
    }
    *n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    return asks_plainly(tok, *n);
}

/* The call of tool `i` made of the values the segment says for it (heard_settings_said()): every
 * required argument a value said, a place said (said_place()) or the model's argument of the
 * same name and type in `carry`. Two values for one argument make none. */
static json_t *said_call(const struct pipit_toolset *ts,
                         size_t i,
                         const size_t *tools,
                         const size_t *args,
                         const char *const *values,
                         size_t k,
                         const struct words_tok *tok,
                         size_t n,
                         const json_t *carry) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, i);
    json_t *out = json_object();
    for (size_t j = 0; out != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        const char *value = NULL;
        for (size_t m = 0; m < k; m++) {
            if (tools[m] == i && args[m] == j) {
                if (value != NULL && strcmp(value, values[m]) != 0) {
                    json_decref(out);
                    return NULL; /* "a latte or a lungo": which is not said */
                }
                value = values[m];
            }
        }
        if (value != NULL) {
            json_object_set_new(out, p->name, json_string(value));
            continue;
        }
        if (!p->required) {
            continue;
        }
        const char *place = said_place(ts, i, j, tok, n);
        /* the model's argument of the same name and type ("book an xl ride to SFO" ->
         * navigate_to(destination="SFO"): the ride's destination) */
        const json_t *same = json_object_get(carry, p->name);
        bool typed = same != NULL && pipit_schema_free_string(p->schema) && json_is_string(same);
        if (place != NULL) {
            json_object_set_new(out, p->name, json_string(place));
        } else if (typed) {
            json_object_set(out, p->name, (json_t *)same);
        } else {
            json_decref(out);
            return NULL; /* the values alone make no call */
        }
    }
    return out;
}

/* The call of the values the segment says (heard_settings_said()): the one tool, not `not_tool`,
 * whose call they make (said_call()). A value two tools take is the one whose call needs
 * nothing else ("I'd love a flat white right now": a brew now, not a schedule without a time).
 * None when no value is said, when the model's tool takes one of them, or when two tools'
 * calls are made. */
static bool value_call(const struct pipit_toolset *ts,
                       const struct words_tok *tok,
                       size_t n,
                       int32_t not_tool,
                       const json_t *carry,
                       size_t *found,
                       json_t **args,
                       bool *verb_out) {
    size_t tools[MAX_SAID_SETTINGS], targs[MAX_SAID_SETTINGS];
    const char *values[MAX_SAID_SETTINGS];
    bool verbs[MAX_SAID_SETTINGS];
    size_t k = heard_settings_said(ts, tok, n, tools, targs, values, verbs, MAX_SAID_SETTINGS);
    if (k == 0 || k > MAX_SAID_SETTINGS) {
        return false;
    }
    /* a value said as the segment's verb, of another tool than the model's ("dim the kitchen":
     * dimmer), decides over the values the model's tool takes too (the kitchen) */
    bool by_verb = false;
    for (size_t m = 0; m < k; m++) {
        by_verb = by_verb || (verbs[m] && tools[m] != (size_t)not_tool);
    }
    for (size_t m = 0; m < k; m++) {
        if (tools[m] == (size_t)not_tool && (!by_verb || verbs[m])) {
            return false; /* the model's tool takes a value said: its call may be the one */
        }
    }
    json_t *made = NULL;
    size_t made_tool = 0, n_made = 0;
    for (size_t m = 0; m < k; m++) {
        bool seen = false;
        for (size_t q = 0; q < m; q++) {
            seen = seen || tools[q] == tools[m];
        }
        seen = seen || (by_verb && tools[m] == (size_t)not_tool);
        json_t *c = seen ? NULL : said_call(ts, tools[m], tools, targs, values, k, tok, n, carry);
        if (c == NULL) {
            continue;
        }
        n_made++;
        json_decref(made);
        made = c;
        made_tool = tools[m];
    }
    if (n_made != 1) {
        json_decref(made);
        return false; /* "auto" of the flash and of the scene */
    }
    *found = made_tool;
    *args = made;
    if (verb_out != NULL) {
        *verb_out = by_verb;
    }
    return true;
}

int32_t
agent_example_verb(const struct pipit_toolset *ts, const char *say, char *verb, size_t size) {
    if (ts == NULL || say == NULL || verb == NULL || size == 0) {
        return -1;
    }
    verb[0] = '\0';
    struct words_tok t[8];
    size_t n = words_tokenize(say, strlen(say), 0, t, 8), v = heard_skip_openers(t, n);
    if (v >= n || agent_said_any(t + v, 1, NOT_VERBS, N_OF(NOT_VERBS))) {
        return -1;
    }
    pipit_format(verb, size, "%s", t[v].w);
    return heard_example_verb_tool(ts, t[v].w);
}

bool agent_names_tool(const struct pipit_toolset *ts, size_t tool, const char *segment) {
    if (ts == NULL || segment == NULL || tool >= ts->n_tools) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    size_t v = heard_skip_openers(tok, n);
    return heard_names_switch(ts, tool, tok, n) ||
           (v < n && !agent_said_any(tok + v, 1, NOT_VERBS, N_OF(NOT_VERBS)) &&
            heard_example_verb_tool(ts, tok[v].w) == (int32_t)tool);
}

bool agent_choose_tool_by_verb(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call) {
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = 0;
    if (!may_rename(ts, tool, segment, tok, &n) || strchr(segment, '?') != NULL) {
        return false;
    }
    size_t v = heard_skip_openers(tok, n);
    if (v >= n || agent_said_any(tok + v, 1, NOT_VERBS, N_OF(NOT_VERBS))) {
        return false;
    }
    static const char *const HOW[] = {"in", "at", "with", "on", "using", "as"};
    for (size_t i = v; i < n; i++) {
        int num = 0;
        if (isdigit((unsigned char)tok[i].w[0]) ||
            (words_number_value(tok[i].w, &num) && num != 1)) {
            /* "shoot in sixteen by nine": a tool that takes no number is not it ("snap one" is) */
            return false;
        }
    }
    if (v + 1 < n && agent_said_any(tok + v + 1, 1, HOW, N_OF(HOW))) {
        return false; /* "shoot in portrait", "shoot at night": how, not what */
    }
    int32_t verb = heard_example_verb_tool(ts, tok[v].w);
    if (verb < 0 || verb == tool || pipit_toolset_is_cloud(ts, (size_t)verb)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)verb);
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        if (t->params->props[j].required) {
            return false; /* its arguments would be a guess */
        }
    }
    if (heard_names_call(ts, tool, call, segment, tok, n)) {
        return false; /* "shoot it at 2x": the model's call has what was said */
    }
    return agent_said_replace_call(call, t, json_object());
}

/* "find my lease" -> "Sorry, I can't do that.": the segment starts (after "please", "can you",
 * ...) with the first word of exactly one tool's name ("find" of find_file), and that tool
 * takes one required argument, a free string: the rest of the segment is its value, less
 * "my", "the", ..., a "to" or "for" and the words of the tool's name ("search photos for
 * dogs": "dogs"), less a closing "please". */
static bool verb_call(const struct pipit_toolset *ts,
                      const char *segment,
                      const struct words_tok *tok,
                      size_t n,
                      size_t *found,
                      json_t **args) {
    static const char *const LEADS[] = {"please", "pls", "can", "could", "would", "you",
                                        "just",   "now", "hey", "ok",    "okay",  "kindly"};
    static const char *const SKIP[] = {"my", "the", "a",  "an", "your", "some",
                                       "to", "for", "me", "up", "out"};
    size_t v = 0;
    while (v < n && agent_said_any(tok + v, 1, LEADS, N_OF(LEADS))) {
        v++;
    }
    if (v >= n) {
        return false;
    }
    size_t n_found = 0, arg = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        size_t lw = strcspn(t->name, "_ .-");
        if (pipit_toolset_is_cloud(ts, i) || t->params == NULL || lw != strlen(tok[v].w) ||
            strncasecmp(t->name, tok[v].w, lw) != 0) {
            continue;
        }
        const struct pipit_schema_prop *one = pipit_tool_only_required(t, NULL);
        size_t req = one != NULL ? (size_t)(one - t->params->props) : 0, n_req = one != NULL;
        const char *an = one != NULL ? one->name : "";
        size_t la = strlen(an);
        bool id = la >= 2 && strcasecmp(an + la - 2, "id") == 0; /* "file_id": an identifier */
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples && !id; e++) {
            const char *x = json_string_value(json_object_get(tp->examples[e].args, an));
            size_t l = x != NULL ? strspn(x, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
                                 : 0; /* "F-201", "TM1": letters, an optional '-', digits */
            const char *d = x != NULL ? x + l + (x[l] == '-') : NULL;
            id = l >= 1 && l <= 4 && isdigit((unsigned char)*d) &&
                 d[strspn(d, "0123456789")] == '\0';
        }
        if (n_req == 1 && pipit_schema_free_string(t->params->props[req].schema) && !id) {
            *found = i;
            arg = req;
            n_found++;
        } else {
            n_found += 2; /* the verb's tool takes something else: not this rule */
        }
    }
    if (n_found != 1) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, *found);
    size_t r = v + 1;
    while (r < n && (agent_said_any(tok + r, 1, SKIP, N_OF(SKIP)) ||
                     heard_text_named(t->name, tok + r, 1))) {
        r++;
    }
    size_t e = n;
    while (e > r && (strcmp(tok[e - 1].w, "please") == 0 || strcmp(tok[e - 1].w, "pls") == 0)) {
        e--;
    }
    if (r >= e) {
        return false;
    }
    char value[GUARD_MAX_COPY * 2];
    size_t a = tok[r].start, b = tok[e - 1].end;
    if (b - a >= sizeof(value)) {
        return false;
    }
    pipit_format(value, sizeof(value), "%.*s", (int)(b - a), segment + a);
    *args = json_object();
    json_object_set_new(*args, t->params->props[arg].name, json_string(value));
    return true;
}

/* "walk me to the ferry building" -> "Sorry, I can't do that.": the segment opens (after
 * "please", "can you", ...) with a verb people use for the words that open the name of exactly
 * one tool (verbbank.h: "walk me to" for "navigate to", navigate_to; a phrase of two words or
 * more), that tool takes one required free string that is no identifier, and every other required
 * argument is an enum one of whose values a word of the segment opens or is ("walk" of "walking"):
 * the rest of the segment after the verb is the string, less "my", "the", ... */
static bool bank_call(const struct pipit_toolset *ts,
                      const char *segment,
                      const struct words_tok *tok,
                      size_t n,
                      size_t *found,
                      json_t **args) {
    static const char *const SKIP[] = {"my", "the", "a", "an", "your", "some", "our"};
    size_t v = heard_skip_openers(tok, n);
    char norm[256] = "";
    size_t at = 0;
    for (size_t k = v; k < n && at + strlen(tok[k].w) + 2 < sizeof(norm); k++) {
        at += (size_t)snprintf(norm + at, sizeof(norm) - at, "%s%s", k > v ? " " : "", tok[k].w);
    }
    size_t hl = 0;
    const char *head = v < n ? verbbank_lead(norm, &hl) : NULL;
    if (head == NULL) {
        return false;
    }
    const char *alt[VERBBANK_MAX_ALT + 1];
    int n_alt = verbbank_alternatives(head, alt);
    alt[n_alt++] = head;
    size_t n_found = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        char spaced[96];
        pipit_format(spaced, sizeof(spaced), "%s", pipit_toolset_tool(ts, i)->name);
        for (char *p = spaced; *p != '\0'; p++) {
            *p = *p == '_' || *p == '-' ? ' ' : (char)tolower((unsigned char)*p);
        }
        for (int k = 0; k < n_alt && !pipit_toolset_is_cloud(ts, i); k++) {
            size_t l = strlen(alt[k]); /* a phrase ("navigate to"): one verb is verb_call()'s */
            if (words_count(alt[k]) >= 2 && strncmp(spaced, alt[k], l) == 0 &&
                (spaced[l] == '\0' || spaced[l] == ' ')) {
                *found = i;
                n_found++;
                break;
            }
        }
    }
    size_t r = v + words_count(head);
    while (r < n && agent_said_any(tok + r, 1, SKIP, N_OF(SKIP))) {
        r++;
    }
    if (n_found != 1 || r >= n) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, *found);
    json_t *made = json_object();
    size_t n_text = 0;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        if (!p->required) {
            continue;
        }
        size_t ln = strlen(p->name);
        if (pipit_schema_free_string(p->schema) &&
            !(ln >= 2 && strcasecmp(p->name + ln - 2, "id") == 0)) {
            n_text++;
            json_object_set_new(
                made, p->name, json_stringn(segment + tok[r].start, tok[n - 1].end - tok[r].start));
            continue;
        }
        const char *chosen = NULL;
        for (size_t e = 0; p->schema->type == PIPIT_SCHEMA_STRING && e < p->schema->n_enum; e++) {
            const char *ev = p->schema->enum_str[e];
            for (size_t k = 0; k < n && chosen == NULL; k++) {
                size_t lw = strlen(tok[k].w); /* "drive" opens "driving" less its "e" */
                lw -= lw >= 4 && tok[k].w[lw - 1] == 'e' ? 1 : 0;
                chosen = lw >= 3 && strncasecmp(ev, tok[k].w, lw) == 0 ? ev : NULL;
            }
            if (chosen != NULL) {
                break;
            }
        }
        if (chosen == NULL) {
            json_decref(made);
            return false; /* "take me to the airport": by which mode is not said */
        }
        json_object_set_new(made, p->name, json_string(chosen));
    }
    if (n_text != 1) {
        json_decref(made);
        return false;
    }
    *args = made;
    return true;
}

static bool noun_call(const struct pipit_toolset *ts,
                      const struct words_tok *tok,
                      size_t n,
                      size_t *found,
                      json_t **args) {
    static const char *const QUANTITY[] = {"one",   "another", "last",  "more",  "final",
                                           "quick", "a",       "an",    "the",   "new",
                                           "just",  "single",  "other", "extra", "second"};
    static const char *const IS[] = {"is",    "are",  "was",   "were", "looks", "look",
                                     "seems", "isnt", "arent", "its",  "came",  "turned"};
    size_t v = heard_skip_openers(tok, n);
    while (v < n && agent_said_any(tok + v, 1, QUANTITY, N_OF(QUANTITY))) {
        v++;
    }
    if (v >= n || agent_said_any(tok, n, IS, N_OF(IS))) {
        return false;
    }
    size_t named = 0, match = 0; /* tools the word names; of them, a noun's with no argument */
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (pipit_toolset_is_cloud(ts, i) || !heard_names_word_of(tok[v].w, t->name)) {
            continue;
        }
        named++; /* "timer" names set_timer and cancel_timer: neither is meant */
        bool takes = false;
        for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
            takes = takes || t->params->props[j].required;
        }
        const char *noun = t->name + strcspn(t->name, "_");
        noun += *noun == '_';
        size_t ln = strcspn(noun, "_");
        if (!takes && ln >= 3 && noun[ln] == '\0' && heard_word_names(tok[v].w, noun, ln)) {
            *found = i; /* one noun after the verb: take_photo */
            match++;
        }
    }
    if (named != 1 || match != 1) {
        return false;
    }
    *args = json_object();
    return *args != NULL;
}

bool agent_restore_verb_rest(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call) {
    if (ts == NULL || tool < 0 || segment == NULL || call == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    size_t found = 0;
    json_t *made = NULL;
    if (n >= GUARD_MAX_TOKENS || !verb_call(ts, segment, tok, n, &found, &made) ||
        found != (size_t)tool) {
        json_decref(made);
        return false;
    }
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool changed = false;
    const char *name;
    json_t *v;
    json_object_foreach(made, name, v) {
        const char *had = json_string_value(json_object_get(args, name));
        /* the model's words are none of the person's ("find my tax return" -> "tairt") */
        struct words_tok hw[GUARD_MAX_TOKENS];
        size_t nh = had != NULL ? words_tokenize(had, strlen(had), 0, hw, GUARD_MAX_TOKENS) : 0;
        bool any = false;
        for (size_t i = 0; i < nh && !any; i++) {
            any = agent_said_phrase(tok, n, hw[i].w);
        }
        if (had != NULL && nh > 0 && !any && strpbrk(had, "0123456789") == NULL) {
            json_object_set(args, name, v);
            changed = true;
        }
    }
    json_decref(made);
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

bool agent_value_call_for_refusal(const struct pipit_toolset *ts,
                                  const char *segment,
                                  const char *text,
                                  struct pipit_call *call) {
    if (ts == NULL || segment == NULL || text == NULL || call == NULL) {
        return false;
    }
    struct words_tok said[8];
    size_t n_said = words_tokenize(text, strlen(text), 0, said, 8);
    static const char *const CANT[] = {"cant", "cannot"};
    bool refusal = n_said > 1 && words_is(said, n_said, 0, "sorry");
    bool cant = false;
    for (size_t i = 1; i < n_said; i++) {
        cant = cant || words_in_list(said[i].w, CANT, N_OF(CANT)) ||
               (words_is(said, n_said, i, "can") && words_is(said, n_said, i + 1, "not"));
    }
    size_t len = strlen(segment);
    while (len > 0 && (segment[len - 1] == ' ' || segment[len - 1] == '.')) {
        len--;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, len, 0, tok, GUARD_MAX_TOKENS);
    static const char *const ASKS[] = {"what",   "how",   "why",  "which", "who",   "when",
                                       "where",  "does",  "do",   "did",   "is",    "are",
                                       "should", "whats", "hows", "can",   "could", "would"};
    /* a wish is a request whatever the model answered ("i want the flash on" -> "The flash is
     * off.": read as a question) */
    static const char *const WISHES[] = {"i want",       "i wanna", "i need",    "id like",
                                         "i would like", "id love", "id prefer", "give me",
                                         "lets have",    "lets get"};
    size_t w = 0;
    while (w < n && agent_said_any(tok + w, 1, HEARD_OPENERS, N_OF(HEARD_OPENERS))) {
        w++;
    }
    bool wish = false;
    for (size_t k = 0; k < N_OF(WISHES) && w < n; k++) {
        wish = wish || words_match(tok, n, w, WISHES[k]) > 0;
    }
    size_t found = 0;
    json_t *made = NULL;
    if (!((refusal && cant) || wish) || n == 0 || (len > 0 && segment[len - 1] == '?') ||
        words_in_list(tok[0].w, ASKS, N_OF(ASKS)) || !asks_plainly(tok, n) ||
        !(value_call(ts, tok, n, -1, NULL, &found, &made, NULL) ||
          verb_call(ts, segment, tok, n, &found, &made) ||
          bank_call(ts, segment, tok, n, &found, &made) || noun_call(ts, tok, n, &found, &made) ||
          number_call(ts, segment, tok, n, &found, &made) ||
          bound_call(ts, segment, tok, n, &found, &made) ||
          switch_call(ts, tok, n, -1, &found, &made))) {
        return false;
    }
    memset(call, 0, sizeof(*call));
    return agent_said_replace_call(call, pipit_toolset_tool(ts, found), made);
}

/* Whether a string value of `made` is said with a word that calls it a mode ("reading mode in
 * the lounge": the scene, even though "lounge" names the model's light). */
static bool value_with_mode(const json_t *made, const struct words_tok *tok, size_t n) {
    static const char *const MODE[] = {"mode", "scene", "setting", "preset", "profile"};
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)made, name, v) {
        char ph[WORDS_CAP * 2];
        if (!json_is_string(v) || !heard_value_phrase(json_string_value(v), ph, sizeof(ph))) {
            continue;
        }
        size_t words = 1;
        for (const char *p = ph; *p != '\0'; p++) {
            words += *p == ' ';
        }
        for (size_t i = 0; i + words < n; i++) {
            if (words_match(tok, n, i, ph) == words &&
                words_in_list(tok[i + words].w, MODE, N_OF(MODE))) {
                return true;
            }
        }
    }
    return false;
}

/* Whether the tokens say a word of `tool`'s name after its verb ("zoom" of adjust_zoom). */
static bool says_tool_name(const struct pipit_toolset *ts,
                           int32_t tool,
                           const struct words_tok *tok,
                           size_t n) {
    if (tool < 0 || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const char *name = pipit_toolset_tool(ts, (size_t)tool)->name;
    const char *p = strchr(name, '_');
    for (p = p != NULL ? p + 1 : name; *p != '\0';) {
        size_t l = strcspn(p, "_");
        char w[WORDS_CAP];
        if (l >= 3 && l < sizeof(w)) {
            for (size_t i = 0; i < l; i++) {
                w[i] = (char)tolower((unsigned char)p[i]);
            }
            w[l] = '\0';
            if (agent_said_phrase(tok, n, w)) {
                return true;
            }
        }
        p += l;
        p += *p == '_';
    }
    return false;
}

bool agent_choose_tool_by_value(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call) {
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = 0;
    return may_rename(ts, tool, segment, tok, &n) && by_value(ts, tool, segment, tok, n, call);
}

bool agent_choose_tool_by_value_over_cloud(const struct pipit_toolset *ts,
                                           int32_t tool,
                                           const char *segment,
                                           struct pipit_call *call) {
    if (ts == NULL || tool < 0 || (size_t)tool >= ts->n_tools ||
        !pipit_toolset_is_cloud(ts, (size_t)tool) || segment == NULL ||
        strchr(segment, '?') != NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    return asks_plainly(tok, n) && by_value(ts, tool, segment, tok, n, call);
}

static bool by_value(const struct pipit_toolset *ts,
                     int32_t tool,
                     const char *segment,
                     const struct words_tok *tok,
                     size_t n,
                     struct pipit_call *call) {
    size_t found = 0;
    json_t *made = NULL;
    json_t *model_args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool by_verb = false;
    if (!value_call(ts, tok, n, tool, model_args, &found, &made, &by_verb) &&
        !switch_call(ts, tok, n, tool, &found, &made)) {
        json_decref(model_args);
        return false;
    }
    /* what the new call carries over from the model's names neither ("SFO") */
    const char *name;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(model_args, tmp, name, v) {
        const json_t *m = json_object_get(made, name);
        if (m != NULL && json_equal(m, v)) {
            json_object_del(model_args, name);
        }
    }
    /* a value said as the verb ("dim the kitchen") outweighs the place the model's tool names
     * too; a value of its own call said does not */
    bool named = !json_is_object(model_args) ||
                 (!by_verb && heard_names_switch(ts, (size_t)tool, tok, n)) ||
                 heard_says_a_value_of(model_args, segment, tok, n);
    json_decref(model_args);
    if (named && !(value_with_mode(made, tok, n) && !says_tool_name(ts, tool, tok, n))) {
        json_decref(made);
        return false; /* the segment names the model's tool or one of its values */
    }
    return agent_said_replace_call(call, pipit_toolset_tool(ts, found), made);
}

/* Whether the segment names a key that value `v` of selector `ek` picks, by the first word of
 * one of its declared names ("lounge" of "lounge light" for living_room_light). */
static bool names_selected_key(const struct pipit_toolset *ts,
                               const struct pipit_effect_key *ek,
                               const char *v,
                               const struct words_tok *tok,
                               size_t n) {
    char key[PIPIT_TOOLSPEC_MAX_NAME * 4];
    snprintf(key, sizeof(key), "%.*s%s%s", (int)ek->prefix_len, ek->key, v, ek->suffix);
    const struct pipit_pack_key *pk = pipit_pack_find_key(pipit_toolset_pack(ts), key);
    for (const char *p = pk != NULL ? pk->words.names : NULL; p != NULL && *p != '\0';) {
        size_t len = strcspn(p, " |");
        char word[WORDS_CAP];
        if (len > 0 && len < sizeof(word)) {
            memcpy(word, p, len);
            word[len] = '\0';
            if (agent_said_phrase(tok, n, word)) {
                return true;
            }
        }
        p = strchr(p, '|');
        p = p != NULL ? p + 1 : NULL;
    }
    return false;
}

static const char *said_place(const struct pipit_toolset *ts,
                              size_t i,
                              size_t j,
                              const struct words_tok *tok,
                              size_t n) {
    static const char *const ALL[] = {"all", "every", "everywhere", "each"};
    const struct pipit_tool *t = pipit_toolset_tool(ts, i);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
    const struct pipit_schema_prop *p = &t->params->props[j];
    if (tp == NULL || p->schema->type != PIPIT_SCHEMA_STRING || p->schema->n_enum == 0) {
        return NULL;
    }
    const struct pipit_effect_key *sel = NULL;
    for (size_t k = 0; k < tp->n_set && sel == NULL; k++) {
        sel = tp->set[k].key.key_arg != NULL && strcmp(tp->set[k].key.key_arg, p->name) == 0
                  ? &tp->set[k].key
                  : NULL;
    }
    if (sel == NULL && tp->has_step && tp->step.key.key_arg != NULL &&
        strcmp(tp->step.key.key_arg, p->name) == 0) {
        sel = &tp->step.key;
    }
    if (sel == NULL) {
        return NULL; /* no place: an argument this rule cannot fill */
    }
    const char *found = NULL;
    for (size_t e = 0; e < p->schema->n_enum; e++) {
        char ph[WORDS_CAP * 2];
        const char *v = p->schema->enum_str[e];
        if ((heard_value_phrase(v, ph, sizeof(ph)) && agent_said_phrase(tok, n, ph)) ||
            names_selected_key(ts, sel, v, tok, n)) {
            if (found != NULL && strcmp(found, v) != 0) {
                return NULL; /* two places */
            }
            found = v;
        }
    }
    if (found == NULL && agent_said_any(tok, n, ALL, N_OF(ALL))) {
        found = p->schema->enum_str[0]; /* every place: the agent runs the call for each */
    }
    return found;
}

/* The effect key `k` of `tp` (its sets, then its step), NULL past them. */
static const struct pipit_effect_key *effect_key(const struct pipit_tool_pack *tp, size_t k) {
    return k < tp->n_set ? &tp->set[k].key : k == tp->n_set && tp->has_step ? &tp->step.key : NULL;
}

/* Whether the segment says a value of selector argument `sel` or names a key one of its values
 * picks through any of the tool's effect keys. */
static bool says_selector(const struct pipit_toolset *ts,
                          const struct pipit_tool_pack *tp,
                          const struct pipit_schema_prop *sel,
                          const struct words_tok *tok,
                          size_t n) {
    for (size_t e = 0; e < sel->schema->n_enum; e++) {
        char ph[WORDS_CAP * 2];
        if (heard_value_phrase(sel->schema->enum_str[e], ph, sizeof(ph)) &&
            heard_says_value(tok, n, ph)) {
            return true;
        }
        const struct pipit_effect_key *ek;
        for (size_t k = 0; (ek = effect_key(tp, k)) != NULL; k++) {
            if (ek->key_arg != NULL && strcmp(ek->key_arg, sel->name) == 0 &&
                names_selected_key(ts, ek, sel->schema->enum_str[e], tok, n)) {
                return true;
            }
        }
    }
    return false;
}

/* Whether one word is the other mistyped: the same first letter, four letters or more, and at
 * most a quarter of the longer one differs ("kitchn" for "kitchen"). */
static bool typo_of(const char *w, const char *v, size_t lv) {
    size_t lw = strlen(w), longer = lw > lv ? lw : lv;
    return lw >= 4 && lv >= 4 && lw <= GUARD_MAX_COPY && lv <= GUARD_MAX_COPY && w[0] == v[0] &&
           heard_edit_distance(w, lw, v, lv) * 4 <= longer;
}

/* Whether the tokens say `phrase` with a typo or two ("kitchn" says "kitchen"). */
static bool says_mistyped(const struct words_tok *t, size_t n, const char *phrase) {
    for (size_t i = 0; i < n; i++) {
        const char *p = phrase;
        size_t j = i;
        while (*p != '\0' && j < n) {
            size_t l = strcspn(p, " ");
            if (!typo_of(t[j].w, p, l)) {
                break;
            }
            j++;
            p += l;
            p += *p == ' ';
        }
        if (*p == '\0') {
            return true;
        }
    }
    return false;
}

bool agent_carry_selector(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *segment,
                          const json_t *last_args,
                          struct pipit_call *call) {
    const struct pipit_tool_pack *tp =
        ts != NULL && tool >= 0 ? pipit_toolset_tool_pack(ts, (size_t)tool) : NULL;
    if (tp == NULL || segment == NULL || !json_is_object(last_args)) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    bool changed = false;
    for (size_t j = 0; json_is_object(args) && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *sel = &t->params->props[j];
        bool selects = false;
        const struct pipit_effect_key *ek;
        for (size_t k = 0; (ek = effect_key(tp, k)) != NULL; k++) {
            selects = selects || (ek->key_arg != NULL && strcmp(ek->key_arg, sel->name) == 0);
        }
        const char *last = json_string_value(json_object_get(last_args, sel->name));
        const char *now = json_string_value(json_object_get(args, sel->name));
        bool known = false;
        for (size_t e = 0; selects && last != NULL && e < sel->schema->n_enum; e++) {
            known = known || strcmp(sel->schema->enum_str[e], last) == 0;
        }
        char ph[WORDS_CAP * 2];
        if (!known || (now != NULL && strcmp(now, last) == 0) ||
            says_selector(ts, tp, sel, tok, n) ||
            (now != NULL && heard_value_phrase(now, ph, sizeof(ph)) && says_mistyped(tok, n, ph))) {
            continue; /* "kitchn light off": the model read the kitchen, and so does the harness */
        }
        /* "bit dimmer" after the lounge light went on: the lounge, not the model's guess */
        changed = json_object_set_new(args, sel->name, json_string(last)) == 0 || changed;
    }
    bool written = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return written;
}

/* Whether the segment names tool `i` by a noun of its name (the words after its first, of 3
 * letters or more: set_timer's "timer") or by a declared name of a key it changes ("self
 * timer", "countdown"). */
static bool
names_tool_noun(const struct pipit_toolset *ts, size_t i, const struct words_tok *tok, size_t n) {
    const char *name = ts->tools[i].name;
    const char *p = name + strcspn(name, "_ ");
    while (*p != '\0') {
        p += strspn(p, "_ ");
        size_t len = strcspn(p, "_ ");
        char word[WORDS_CAP];
        if (len >= 3 && len < sizeof(word)) {
            memcpy(word, p, len);
            word[len] = '\0';
            for (size_t k = 0; k < n; k++) {
                if (heard_word_names(tok[k].w, word, len)) {
                    return true;
                }
            }
        }
        p += len;
    }
    const char *const *keys = NULL;
    size_t n_keys = 0;
    pipit_toolset_undo(ts, i, &keys, &n_keys);
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t k = 0; k < n_keys; k++) {
        const struct pipit_pack_key *pk = pipit_pack_find_key(pack, keys[k]);
        if (pk != NULL && pk->words.names != NULL && heard_text_named(pk->words.names, tok, n)) {
            return true;
        }
    }
    return false;
}

/* Words that take a step down ("cooler by 3 degrees"). */
/* Whether the tokens say a number right before the argument's name as a unit ("3 degrees" for
 * `degrees`, "21 celsius" for `celsius`; a plural or singular of it too). */
static bool number_of_arg(const struct words_tok *tok, size_t n, const char *arg) {
    size_t la = strlen(arg);
    for (size_t i = 0; i + 1 < n && la >= 3; i++) {
        int w = 0;
        bool num = strspn(tok[i].w, "0123456789.") == strlen(tok[i].w) && tok[i].w[0] != '\0';
        if (!num && !words_number_value(tok[i].w, &w)) {
            continue;
        }
        const char *u = tok[i + 1].w;
        size_t lu = strlen(u);
        if ((lu == la && strcmp(u, arg) == 0) ||
            (lu + 1 == la && arg[la - 1] == 's' && strncmp(u, arg, lu) == 0) ||
            (lu == la + 1 && u[lu - 1] == 's' && strncmp(u, arg, la) == 0)) {
            return true;
        }
    }
    return false;
}

/* Whether a number at token i is a value to reach ("to 3", "at 9", "be a 7") or a step of that
 * size ("3 notches", "two clicks louder"): 1, -1, or 0 when the words say neither. */
static int number_kind(const struct words_tok *tok, size_t n, size_t i) {
    static const char *const STEPS[] = {"notch", "notches", "click",  "clicks",  "step",
                                        "steps", "more",    "louder", "quieter", "higher",
                                        "lower", "up",      "down",   "less",    "times"};
    size_t b =
        i > 0 && (strcmp(tok[i - 1].w, "a") == 0 || strcmp(tok[i - 1].w, "like") == 0) ? i - 1 : i;
    if (b > 0 && (strcmp(tok[b - 1].w, "to") == 0 || strcmp(tok[b - 1].w, "at") == 0 ||
                  strcmp(tok[b - 1].w, "be") == 0)) {
        return 1;
    }
    return i + 1 < n && words_in_list(tok[i + 1].w, STEPS, N_OF(STEPS)) ? -1 : 0;
}

/* The one tool (not the cloud) whose only required argument is a number that the segment
 * names: by a noun of the tool, or (not `ranged`) by a number with the argument's name as its
 * unit; `ranged`: only numbers with both ends. Of a setter and a step both named ("siren" of
 * set_siren_volume and change_siren_volume), a number said as a value to reach picks the
 * setter, one said as a step the step. False for none or two. */
static bool named_number_tool(const struct pipit_toolset *ts,
                              const struct words_tok *tok,
                              size_t n,
                              bool ranged,
                              size_t *named) {
    size_t n_named = 0, setter = 0, stepper = 0, n_setters = 0, n_steppers = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_schema_prop *num =
            pipit_toolset_is_cloud(ts, i) ? NULL : heard_one_required_number(&ts->tools[i]);
        if (num != NULL && (!ranged || (num->schema->has_min && num->schema->has_max)) &&
            (names_tool_noun(ts, i, tok, n) || (!ranged && number_of_arg(tok, n, num->name)))) {
            const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
            bool step = tp != NULL && tp->has_step;
            setter = step ? setter : i;
            n_setters += !step && tp != NULL && tp->n_set > 0;
            stepper = step ? i : stepper;
            n_steppers += step;
            *named = i;
            n_named++;
        }
    }
    int kind = 0;
    for (size_t i = 0; i < n && kind == 0; i++) {
        int w = 0;
        if (isdigit((unsigned char)tok[i].w[0]) || words_number_value(tok[i].w, &w)) {
            kind = number_kind(tok, n, i);
        }
    }
    if (n_named == 2 && n_setters == 1 && n_steppers == 1 && kind != 0) {
        *named = kind > 0 ? setter : stepper; /* "siren down to 3", "three notches louder" */
        return true;
    }
    return n_named == 1;
}

/* The call of the one tool with one required number that the segment names (its noun, or a
 * number with the argument's name as its unit), with the one number written, signed by the
 * words for a step ("cooler by 3 degrees"); as said: validation refuses what is out of range. */
static bool number_call(const struct pipit_toolset *ts,
                        const char *segment,
                        const struct words_tok *tok,
                        size_t n,
                        size_t *found,
                        json_t **made) {
    size_t named = 0;
    if (!named_number_tool(ts, tok, n, false, &named)) {
        return false; /* none, or two ("zoom": set_zoom and its keys' names) */
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, named);
    const struct pipit_schema_prop *need = heard_one_required_number(t);
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n_said =
        agent_numbers_written(segment, agent_number_time_unit(need), said, raw, GUARD_MAX_NUMBERS);
    if (n_said == 0) {
        /* a number word said as a value to reach or counting steps ("put the siren at nine",
         * "two clicks louder"); others are no value here ("shoot in sixteen by nine", "try it
         * one more time") */
        static const char *const COUNTED[] = {"notch", "notches", "click", "clicks",
                                              "step",  "steps",   "level", "levels"};
        for (size_t i = 0; i < n; i++) {
            int w = 0;
            if (!isdigit((unsigned char)tok[i].w[0]) && words_number_value(tok[i].w, &w) &&
                (number_kind(tok, n, i) > 0 ||
                 (i + 1 < n && words_in_list(tok[i + 1].w, COUNTED, N_OF(COUNTED))))) {
                if (n_said++ > 0) {
                    return false;
                }
                said[0] = raw[0] = (double)w;
            }
        }
    }
    if (n_said != 1) {
        return false;
    }
    /* "cooler by 3 degrees": a step's number said without a sign goes the way the words say */
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, named);
    if (tp != NULL && tp->has_step && tp->step.by.arg != NULL &&
        strcmp(tp->step.by.arg, need->name) == 0 && raw[0] > 0 && agent_number_says_down(tok, n)) {
        said[0] = -said[0];
    }
    *made = json_object();
    if (json_object_set_new(*made, need->name, agent_said_number(said[0])) != 0) {
        json_decref(*made);
        *made = NULL;
        return false;
    }
    *found = named;
    return true;
}

/* The call of the one tool with one required number that the segment names, at the end of its
 * range the words say ("close the blinds, the neighbours can see in": open_percent 0; as
 * agent_restore_bound_words()), when no number is written. */
static bool bound_call(const struct pipit_toolset *ts,
                       const char *segment,
                       const struct words_tok *tok,
                       size_t n,
                       size_t *found,
                       json_t **made) {
    size_t named = 0;
    if (strpbrk(segment, "0123456789") != NULL || !named_number_tool(ts, tok, n, true, &named)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, named);
    const struct pipit_schema *sc = heard_one_required_number(t)->schema;
    json_t *mid = json_object(); /* neither end: agent_restore_bound_words() moves it to one */
    json_object_set_new(mid, heard_one_required_number(t)->name,
                        json_real((sc->min + sc->max) / 2 + 0.25));
    struct pipit_call c;
    memset(&c, 0, sizeof(c));
    if (!agent_said_replace_call(&c, t, mid) ||
        !agent_restore_bound_words(ts, (int32_t)named, segment, &c)) {
        pipit_call_clear(&c);
        return false;
    }
    *made = json_loads(c.args_json, 0, NULL);
    pipit_call_clear(&c);
    *found = named;
    return *made != NULL;
}

bool agent_choose_tool_by_number(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call) {
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = 0, named = 0;
    json_t *made = NULL;
    if (!may_rename(ts, tool, segment, tok, &n) ||
        !number_call(ts, segment, tok, n, &named, &made)) {
        return false;
    }
    /* the model's call has what was said, unless it is a switch (a boolean, no number) whose
     * name the number's tool shares: "siren down to 3" -> siren(on=false) is the siren's
     * volume */
    const struct pipit_tool *mt = pipit_toolset_tool(ts, (size_t)tool);
    bool number = false, boolean = false;
    for (size_t j = 0; mt->params != NULL && j < mt->params->n_props; j++) {
        enum pipit_schema_type ty = mt->params->props[j].schema->type;
        number = number || ty == PIPIT_SCHEMA_NUMBER || ty == PIPIT_SCHEMA_INTEGER;
        boolean = boolean || ty == PIPIT_SCHEMA_BOOLEAN;
    }
    bool shared = false;
    for (const char *p = mt->name; !number && boolean && *p != '\0';) {
        size_t len = strcspn(p, "_");
        char w[WORDS_CAP];
        pipit_format(w, sizeof(w), "%.*s", (int)(len < sizeof(w) ? len : sizeof(w) - 1), p);
        shared = shared || (len >= 3 && words_name_has(ts->tools[named].name, w, strlen(w)) &&
                            !words_is_tool_verb(w));
        p += len;
        p += *p == '_';
    }
    if (named == (size_t)tool || (!shared && heard_names_call(ts, tool, call, segment, tok, n))) {
        json_decref(made);
        return false;
    }
    return agent_said_replace_call(call, pipit_toolset_tool(ts, named), made);
}

/* Whether the segment says in full a name of two words or more that the pack declares for a
 * key tool `i` changes ("wake-up coffee"). */
static bool
names_by_phrase(const struct pipit_toolset *ts, size_t i, const struct words_tok *tok, size_t n) {
    const char *const *keys = NULL;
    size_t n_keys = 0;
    pipit_toolset_undo(ts, i, &keys, &n_keys);
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t k = 0; k < n_keys; k++) {
        const struct pipit_pack_key *pk = pipit_pack_find_key(pack, keys[k]);
        for (const char *p = pk != NULL ? pk->words.names : NULL; p != NULL && *p != '\0';) {
            size_t l = strcspn(p, "|");
            char ph[WORDS_CAP * 2];
            if (l < sizeof(ph) && memchr(p, ' ', l) != NULL) {
                for (int dash = 0; dash < 2; dash++) { /* "wake-up coffee", "wake up coffee" */
                    for (size_t c = 0; c < l; c++) {
                        ph[c] = dash && p[c] == '-' ? ' ' : (char)tolower((unsigned char)p[c]);
                    }
                    ph[l] = '\0';
                    if (agent_said_phrase(tok, n, ph)) {
                        return true;
                    }
                }
            }
            p += l;
            p += *p == '|';
        }
    }
    return false;
}

/* Whether no other tool is named more fully than tool `i`: a name of two words or more said
 * for another tool's key while `i` is named by one word only ("kill the wake-up coffee" names
 * the wake-up brew, not the machine of "coffee machine"). */
static bool
names_only(const struct pipit_toolset *ts, size_t i, const struct words_tok *tok, size_t n) {
    if (names_by_phrase(ts, i, tok, n)) {
        return true;
    }
    for (size_t j = 0; j < ts->n_tools; j++) {
        if (j != i && !pipit_toolset_is_cloud(ts, j) && names_by_phrase(ts, j, tok, n)) {
            return false;
        }
    }
    return true;
}

static bool switch_call(const struct pipit_toolset *ts,
                        const struct words_tok *tok,
                        size_t n,
                        int32_t not_tool,
                        size_t *found,
                        json_t **args) {
    static const char *const USE_WORDS[] = {"on",     "use",      "need", "want",
                                            "enable", "activate", "show", "with"};
    if (heard_negates(ts, tok, n)) {
        return false;
    }
    bool on = agent_said_any(tok, n, USE_WORDS, N_OF(USE_WORDS)),
         off = agent_said_any(tok, n, HEARD_OFF_WORDS, N_OF(HEARD_OFF_WORDS));
    /* the verb of a switch's argument ("lock" of lock_door's "locked", "unlock" the other
     * side) says the side when no side word does ("lock all the doors"), and picks the
     * switches it names: door_chime is named by "doors" too */
    bool by_verb[PIPIT_TOOLSPEC_MAX_TOOLS] = {false};
    int sides = 0; /* bit 1: the verb said, bit 2: its "un"/"dis" form said */
    for (size_t i = 0; i < ts->n_tools && i < PIPIT_TOOLSPEC_MAX_TOOLS; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t j = 0; t->params != NULL && !pipit_toolset_is_cloud(ts, i) &&
                           i != (size_t)not_tool && j < t->params->n_props;
             j++) {
            bool done = false, undone = false;
            if (t->params->props[j].required &&
                t->params->props[j].schema->type == PIPIT_SCHEMA_BOOLEAN) {
                heard_said_stem(t->params->props[j].name, tok, n, &done, &undone);
            }
            if (done != undone) {
                sides |= done ? 1 : 2;
                by_verb[i] = true;
            }
        }
    }
    if (on == off) {
        if (sides != 1 && sides != 2) {
            return false;
        }
        on = sides == 1;
        off = !on;
    }
    bool verb_side = (sides == 1 && on) || (sides == 2 && !on);
    size_t n_found = 0, arg = 0, place_arg = 0;
    const char *place = NULL;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (i == (size_t)not_tool || pipit_toolset_is_cloud(ts, i) || t->params == NULL ||
            !heard_names_switch(ts, i, tok, n) ||
            (verb_side && (i >= PIPIT_TOOLSPEC_MAX_TOOLS || !by_verb[i]))) {
            continue;
        }
        size_t n_req = 0, sw = 0, n_sw = 0, pl = 0;
        const char *at = NULL;
        for (size_t j = 0; j < t->params->n_props; j++) {
            const struct pipit_schema *s = t->params->props[j].schema;
            if (!t->params->props[j].required) {
                continue;
            }
            n_req++;
            size_t a = 0, b = 0;
            if (s->type == PIPIT_SCHEMA_BOOLEAN ||
                (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0 && heard_enum_switch(s, &a, &b))) {
                sw = j;
                n_sw++;
            } else if (at == NULL) {
                at = said_place(ts, i, j, tok, n); /* "all the lights off": which light */
                pl = j;
            }
        }
        if (n_sw == 1 && (n_req == 1 || (n_req == 2 && at != NULL))) {
            *found = i;
            arg = sw;
            place = n_req == 2 ? at : NULL;
            place_arg = pl;
            n_found++;
        }
    }
    if (n_found != 1 || !names_only(ts, *found, tok, n)) {
        return false;
    }
    const struct pipit_schema_prop *p = &pipit_toolset_tool(ts, *found)->params->props[arg];
    *args = json_object();
    if (place != NULL) {
        json_object_set_new(*args, pipit_toolset_tool(ts, *found)->params->props[place_arg].name,
                            json_string(place));
    }
    if (p->schema->type == PIPIT_SCHEMA_BOOLEAN) {
        json_object_set_new(*args, p->name, json_boolean(on));
    } else {
        size_t a = 0, b = 0;
        heard_enum_switch(p->schema, &a, &b);
        json_object_set_new(*args, p->name, json_string(p->schema->enum_str[on ? a : b]));
    }
    return true;
}

/* Whether `w` is a word of an argument's description of a tool that is not the cloud's
 * ("Horizontal position, 0 = left, 1 = right": "left"). */
static bool arg_description_says(const struct pipit_toolset *ts, const char *w) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t j = 0;
             !pipit_toolset_is_cloud(ts, i) && t->params != NULL && j < t->params->n_props; j++) {
            const char *d = t->params->props[j].schema->description;
            if (d != NULL && heard_names_word_of(w, d)) {
                return true;
            }
        }
    }
    return false;
}
