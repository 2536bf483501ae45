/*
 * agent_guard.c - the person's words in the model's call: a name, a place or a message the
 * model misspelt or cut while copying it is put back to the person's words, and the item the
 * person named by its title, contact or number is the one the call takes (docs/agent.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_guard.h"

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
 * the person's words: a copy the model misspelt
 *
 * A small model copies a name or a place from the request letter by letter and sometimes
 * slips: "text Bob hi" -> recipient "Bobo", "text it to Marcus" -> "Marco". The guard: for a
 * free string argument (no enum, pattern or format) whose value is not in the segment, the
 * segment's run of one to four words closest to it by edit distance replaces it when the two
 * start with the same letter, both have at least three letters, and at most a quarter of the
 * longer one differs ("Mom" for "mum" stays: a contact the model resolved). A value with a digit
 * (an identifier such as "TM-5", from memory) and a value the person wrote are left alone, and so
 * is anything further from the words: a message body the model worded itself is not a slip. */

#define GUARD_MAX_WORDS 48

static bool strip_arg_lead(const struct pipit_tool *t, json_t *args);
static bool verb_copied(const struct pipit_tool *t, const char *segment, json_t *args);
static bool extend_short_name(const struct pipit_tool *t, const char *segment, json_t *args);

/* The first place `phrase` occurs in `text` as whole words, case aside (NULL: nowhere or
 * empty); *count gets how many times it occurs. */
static const char *find_words_nocase(const char *text, const char *phrase, size_t *count) {
    size_t n = strlen(phrase);
    const char *first = NULL;
    *count = 0;
    for (const char *p = text; n > 0 && *p != '\0'; p++) {
        if (strncasecmp(p, phrase, n) == 0 && (p == text || !isalnum((unsigned char)p[-1])) &&
            !isalnum((unsigned char)p[n])) {
            first = first == NULL ? p : first;
            (*count)++;
        }
    }
    return first;
}

/* The segment's closest run of words to `v`, or false when none is close enough. */
static bool closest_words(const char *segment, const char *v, char *out, size_t size) {
    size_t lv = strlen(v);
    if (lv < 3 || lv > GUARD_MAX_COPY) {
        return false;
    }
    size_t starts[GUARD_MAX_WORDS], ends[GUARD_MAX_WORDS], n = 0;
    for (const char *p = segment; *p != '\0' && n < GUARD_MAX_WORDS;) {
        while (*p != '\0' && !isalnum((unsigned char)*p) && (unsigned char)*p < 0x80) {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        starts[n] = (size_t)(p - segment);
        while (*p != '\0' && (isalnum((unsigned char)*p) || *p == '\'' || *p == '-' ||
                              (unsigned char)*p >= 0x80)) {
            p++;
        }
        ends[n++] = (size_t)(p - segment);
    }
    size_t best_d = (size_t)-1, best_s = 0, best_e = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i; j < n && j < i + 4; j++) {
            size_t lg = ends[j] - starts[i];
            if (lg < 3 || lg > GUARD_MAX_COPY ||
                tolower((unsigned char)segment[starts[i]]) != tolower((unsigned char)v[0])) {
                continue;
            }
            size_t d = heard_edit_distance(segment + starts[i], lg, v, lv);
            size_t longer = lg > lv ? lg : lv;
            if (d * 4 <= longer && (d < best_d || (d == best_d && lg > best_e - best_s))) {
                best_d = d;
                best_s = starts[i];
                best_e = ends[j];
            }
        }
    }
    if (best_d == (size_t)-1 || best_e - best_s >= size) {
        return false;
    }
    memcpy(out, segment + best_s, best_e - best_s);
    out[best_e - best_s] = '\0';
    return true;
}

/* Two free strings of one call copied from the same words ("text mom I'm on my way" ->
 * recipient="mom", body="mom"): one thing said is never both a name and a message. When those
 * words occur once in the segment and at least two words follow them, the later argument takes
 * what follows (less a leading "saying", "that", "to say" and outer punctuation): the person
 * said the name, then the rest. Returns true when `args` changed. */
static bool split_copied_twice(const struct pipit_tool *t, const char *segment, json_t *args) {
    static const char *const LEADS[] = {"saying ", "that ", "to say ", "and say ", "say "};
    for (size_t i = 0; i < t->params->n_props; i++) {
        const char *v = json_string_value(json_object_get(args, t->params->props[i].name));
        size_t lv = v != NULL ? strlen(v) : 0;
        if (lv == 0 || !pipit_schema_free_string(t->params->props[i].schema)) {
            continue;
        }
        for (size_t j = i + 1; j < t->params->n_props; j++) {
            const char *w = json_string_value(json_object_get(args, t->params->props[j].name));
            if (w == NULL || strcmp(w, v) != 0 ||
                !pipit_schema_free_string(t->params->props[j].schema)) {
                continue;
            }
            size_t seen = 0;
            const char *at = find_words_nocase(segment, v, &seen);
            if (seen != 1) {
                return false;
            }
            const char *r = at + lv;
            r += strspn(r, " ,:;-\"'");
            for (size_t k = 0; k < sizeof(LEADS) / sizeof(LEADS[0]); k++) {
                if (strncasecmp(r, LEADS[k], strlen(LEADS[k])) == 0) {
                    r += strlen(LEADS[k]);
                    r += strspn(r, " :\"'");
                    break;
                }
            }
            size_t lr = strlen(r);
            while (lr > 0 && strchr(" .!\"'", r[lr - 1]) != NULL) {
                lr--;
            }
            size_t words = lr > 0;
            for (size_t k = 0; k < lr; k++) {
                words += r[k] == ' ' && k + 1 < lr && r[k + 1] != ' ';
            }
            if (words < 2 || lr > GUARD_MAX_COPY * 4) {
                return false;
            }
            char *rest = strndup(r, lr);
            bool ok = rest != NULL &&
                      json_object_set_new(args, t->params->props[j].name, json_string(rest)) == 0;
            free(rest);
            return ok;
        }
    }
    return false;
}

/* Whether an argument holds a message: its name or description says so ("body", "text",
 * "message", "content", "note"). */
static bool message_arg(const struct pipit_schema_prop *p) {
    static const char *const SAYS[] = {"body", "text", "message", "content", "note", "words"};
    for (size_t k = 0; k < sizeof(SAYS) / sizeof(SAYS[0]); k++) {
        if (strstr(p->name, SAYS[k]) != NULL ||
            (p->schema->description != NULL &&
             heard_contains_nocase(p->schema->description, SAYS[k]))) {
            return true;
        }
    }
    return false;
}

/* A message copied short ("make a note called ideas: build a treehouse" -> body "build"): a
 * small model stops a copy early. When a message argument's value occurs once in the segment,
 * after every other argument's copied value, and what follows it has no digit, none of the
 * call's other values and does not start with a word of where ("to", "for", "in", ...: "add
 * rope to the ideas note"), the message runs to the end of the segment (less outer punctuation and
 * a closing "please" or "thanks"). Returns true when `args` changed. */
static bool extend_short_message(const struct pipit_tool *t, const char *segment, json_t *args) {
    for (size_t i = 0; i < t->params->n_props; i++) {
        const struct pipit_schema_prop *p = &t->params->props[i];
        const char *v = json_string_value(json_object_get(args, p->name));
        size_t lv = v != NULL ? strlen(v) : 0;
        if (lv == 0 || !pipit_schema_free_string(p->schema) || !message_arg(p)) {
            continue;
        }
        size_t seen = 0;
        const char *at = find_words_nocase(segment, v, &seen);
        if (seen != 1) {
            continue;
        }
        const char *r = at + lv;
        size_t lr = strlen(r);
        while (lr > 0 && strchr(" .!\"'", r[lr - 1]) != NULL) {
            lr--;
        }
        static const char *const CLOSERS[] = {" please", " thanks", " thank you", " pls"};
        for (size_t k = 0; k < sizeof(CLOSERS) / sizeof(CLOSERS[0]); k++) {
            size_t lc = strlen(CLOSERS[k]);
            if (lr >= lc && strncasecmp(r + lr - lc, CLOSERS[k], lc) == 0) {
                lr -= lc;
                while (lr > 0 && strchr(" ,.!", r[lr - 1]) != NULL) {
                    lr--;
                }
            }
        }
        /* "add rope to the ideas note": what follows says where it goes, not more of it */
        static const char *const WHERE[] = {"to",   "for",  "in",   "on", "at",    "into",
                                            "onto", "from", "with", "by", "about", "under"};
        bool where = false;
        for (size_t k = 0; k < sizeof(WHERE) / sizeof(WHERE[0]) && lr > 0; k++) {
            size_t lw = strlen(WHERE[k]);
            where = where || (lr > lw + 1 && strncasecmp(r + 1, WHERE[k], lw) == 0 &&
                              !isalnum((unsigned char)r[1 + lw]));
        }
        if (where) {
            continue;
        }
        bool words = false, digit = false;
        for (size_t k = 0; k < lr; k++) {
            words = words || isalpha((unsigned char)r[k]);
            digit = digit || isdigit((unsigned char)r[k]);
        }
        if (digit || !words || lr == 0 || !isspace((unsigned char)r[0]) ||
            lv + lr > GUARD_MAX_COPY * 4) {
            continue;
        }
        char rest[GUARD_MAX_COPY * 4 + 1];
        pipit_format(rest, sizeof(rest), "%.*s", (int)lr, r);
        bool later = false;
        for (size_t j = 0; j < t->params->n_props && !later; j++) {
            const char *o =
                j == i ? NULL : json_string_value(json_object_get(args, t->params->props[j].name));
            if (o != NULL && o[0] != '\0' &&
                (heard_contains_nocase(rest, o) || heard_find_nocase(segment, o) > at)) {
                later = true; /* another value follows: the message ends before it */
            }
        }
        if (later) {
            continue;
        }
        char whole[GUARD_MAX_COPY * 8 + 1];
        pipit_format(whole, sizeof(whole), "%s%s", v, rest);
        return json_object_set_new(args, p->name, json_string(whole)) == 0;
    }
    return false;
}

/* ============================================================================
 * the item the person named
 *
 * "add rope to the ideas note" -> append_note(note_id="N-1"), the groceries: a small model
 * takes an identifier it has seen, not the one of the thing named. When a string argument's
 * value is the "id" of an object in an array of the device's state, and the segment names
 * exactly one object of that array (a string field of it other than "id", 3 to 40 characters,
 * as whole words: its title "ideas", its contact "Mom"; or its identifier, or the identifier's
 * number of three or more digits: "ticket 1000" for "T-1000"), and that is another object,
 * its identifier replaces the model's. */

/* Whether `phrase` occurs in `text` as whole words, case aside. */
static bool says_words_nocase(const char *text, const char *phrase) {
    size_t count = 0;
    return find_words_nocase(text, phrase, &count) != NULL;
}

/* Whether the segment names object `e` (above), or says one of its numbers with the word of
 * its key ("the 5 minute one": {"minutes": 5}). */
static bool names_item(const char *segment, const json_t *e) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)e, key, v) {
        const char *s = json_string_value(v);
        size_t l = s != NULL ? strlen(s) : 0;
        if (json_is_number(v) && strcmp(key, "id") != 0) {
            double d = json_number_value(v);
            char num[32];
            if (fabs(d) < 1e9 && fabs(d - floor(d)) < 1e-9) {
                pipit_format(num, sizeof(num), "%lld", (long long)d);
            } else {
                pipit_format(num, sizeof(num), "%g", d);
            }
            struct words_tok tok[GUARD_MAX_TOKENS];
            size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
            if (says_words_nocase(segment, num) && heard_text_named(key, tok, n)) {
                return true;
            }
        } else if (strcmp(key, "id") == 0 && l > 0) {
            const char *d = s + strcspn(s, "0123456789");
            if (says_words_nocase(segment, s) ||
                (strlen(d) >= 3 && strspn(d, "0123456789") == strlen(d) &&
                 says_words_nocase(segment, d))) {
                return true;
            }
        } else if (l >= 3 && l <= 40 && says_words_nocase(segment, s)) {
            return true;
        }
    }
    return false;
}

bool agent_restore_named_item(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              const json_t *state,
                              struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools || !json_is_object(state)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool changed = false;
    for (size_t i = 0; json_is_object(args) && i < t->params->n_props; i++) {
        const char *v = json_string_value(json_object_get(args, t->params->props[i].name));
        if (v == NULL || t->params->props[i].schema->type != PIPIT_SCHEMA_STRING) {
            continue;
        }
        const char *key;
        const json_t *arr;
        json_object_foreach((json_t *)state, key, arr) {
            size_t k;
            const json_t *e;
            bool has = false;
            json_array_foreach(arr, k, e) {
                const char *id = json_string_value(json_object_get(e, "id"));
                has = has || (id != NULL && strcmp(id, v) == 0);
            }
            if (!has) {
                continue;
            }
            const char *named = NULL;
            size_t n_named = 0;
            json_array_foreach(arr, k, e) {
                const char *id = json_string_value(json_object_get(e, "id"));
                if (id != NULL && names_item(segment, e)) {
                    named = id;
                    n_named++;
                }
            }
            if (n_named == 1 && strcmp(named, v) != 0) {
                char *copy = strdup(named);
                changed = copy != NULL && json_object_set_new(args, t->params->props[i].name,
                                                              json_string(copy)) == 0;
                free(copy);
            }
            break;
        }
    }
    bool written = agent_said_put_args(call, args, changed);
    json_decref(args);
    return written;
}

bool agent_restore_pattern_id(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool changed = false;
    for (size_t i = 0; json_is_object(args) && i < t->params->n_props; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        const char *v = json_string_value(json_object_get(args, t->params->props[i].name));
        size_t lp = s->pattern != NULL ? strlen(s->pattern) : 0;
        if (v == NULL || s->type != PIPIT_SCHEMA_STRING || lp < 2 || s->pattern[0] != '^' ||
            s->pattern[lp - 1] != '$' || pipit_schema_time_of_day(s)) {
            continue; /* a time of day is agent_time.c's: "11:30 pm" is 23:30, not "11:30" */
        }
        /* the words that match whole, as written or with their letters in capitals ("z-9"
         * for "^Z-[0-9]{1,2}$"); else the words shaped like the model's value (its letters and
         * mark, then a digit: "Z-100" beside "Z-10"), which validation then refuses */
        char found[GUARD_MAX_COPY] = "", like[GUARD_MAX_COPY] = "";
        size_t n_found = 0, n_like = 0, lead = strcspn(v, "0123456789");
        for (const char *p = segment; *p != '\0';) {
            p += strspn(p, " \t\n");
            size_t len = strcspn(p, " \t\n");
            size_t b = 0, e = len; /* the word less the punctuation around it */
            while (b < e && strchr(",.;:!?\"'()[]", p[b]) != NULL) {
                b++;
            }
            while (e > b && strchr(",.;:!?\"'()[]", p[e - 1]) != NULL) {
                e--;
            }
            char w[GUARD_MAX_COPY], up[GUARD_MAX_COPY];
            if (e > b && e - b < sizeof(w)) {
                memcpy(w, p + b, e - b);
                w[e - b] = '\0';
                for (size_t k = 0; k <= e - b; k++) {
                    up[k] = (char)toupper((unsigned char)w[k]);
                }
                const char *m = pattern_match(s->pattern, w, e - b)    ? w
                                : pattern_match(s->pattern, up, e - b) ? up
                                                                       : NULL;
                if (m != NULL && (n_found == 0 || strcmp(found, m) != 0)) {
                    pipit_format(found, sizeof(found), "%s", m);
                    n_found++;
                } else if (m == NULL && lead > 0 && e - b > lead && strncasecmp(w, v, lead) == 0 &&
                           isdigit((unsigned char)w[lead]) &&
                           (n_like == 0 || strcmp(like, up) != 0)) {
                    pipit_format(like, sizeof(like), "%s", up);
                    n_like++;
                }
            }
            p += len;
        }
        if (n_found == 0 && n_like == 1) {
            pipit_format(found, sizeof(found), "%s", like);
            n_found = 1;
        }
        if (n_found == 1 && strcmp(found, v) != 0 &&
            json_object_set_new(args, t->params->props[i].name, json_string(found)) == 0) {
            changed = true;
        }
    }
    bool written = agent_said_put_args(call, args, changed);
    json_decref(args);
    return written;
}

bool agent_restore_after_colon(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call) {
    if (ts == NULL || tool < 0 || segment == NULL || call == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    /* the text after the first colon that is no time or ratio ("7:15", "16:9") */
    const char *colon = segment;
    while ((colon = strchr(colon, ':')) != NULL &&
           (colon > segment && isdigit((unsigned char)colon[-1]) &&
            isdigit((unsigned char)colon[1]))) {
        colon++;
    }
    if (colon == NULL) {
        return false;
    }
    const char *after = colon + 1;
    while (*after == ' ') {
        after++;
    }
    size_t la = strlen(after);
    while (la > 0 && (after[la - 1] == ' ' || after[la - 1] == '.')) {
        la--;
    }
    if (la == 0 || la > GUARD_MAX_COPY * 4) {
        return false;
    }
    struct words_tok aw[GUARD_MAX_TOKENS];
    size_t na = words_tokenize(after, la, 0, aw, GUARD_MAX_TOKENS);
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool changed = false;
    for (size_t i = 0; json_is_object(args) && i < t->params->n_props && !changed; i++) {
        const char *v = json_string_value(json_object_get(args, t->params->props[i].name));
        if (!pipit_schema_free_string(t->params->props[i].schema) || v == NULL) {
            continue;
        }
        struct words_tok vw[GUARD_MAX_TOKENS];
        size_t nv = words_tokenize(v, strlen(v), 0, vw, GUARD_MAX_TOKENS);
        /* the model's value is a part of the text after the colon, its words in order */
        size_t k = 0;
        for (size_t j = 0; j < na && k < nv; j++) {
            k += strcmp(aw[j].w, vw[k].w) == 0 ? 1 : 0;
        }
        /* a closing "please" or "thanks" is said to the device, not part of the text */
        static const char *const POLITE[] = {"please", "pls", "thanks"};
        size_t end = na, len = la;
        while (end > 1 &&
               agent_said_any(aw + end - 1, 1, POLITE, sizeof(POLITE) / sizeof(POLITE[0])) &&
               !(nv > 0 && strcmp(vw[nv - 1].w, aw[end - 1].w) == 0)) {
            end--;
            len = aw[end - 1].end;
        }
        while (len > 0 && strchr(" ,.!", after[len - 1]) != NULL) {
            len--;
        }
        if (nv > 0 && k == nv && nv < end) {
            char whole[GUARD_MAX_COPY * 4 + 1];
            pipit_format(whole, sizeof(whole), "%.*s", (int)len, after);
            changed = json_object_set_new(args, t->params->props[i].name, json_string(whole)) == 0;
        }
    }
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

/* The text after the first "called" / "named" / "titled" / "labelled" / "as" in `text`, up to a
 * colon, a comma, a word that places it ("in", "to", "for", "at", "on", "into": "save it as
 * evening in preset 2") or the end (a closing "please" cut), into out; false when none. Which
 * argument it names is read from the pack's examples (agent_restore_called_name()). */
static bool called_text(const char *text, char *out, size_t size) {
    static const char *const CALLED[] = {" called ",   " named ",   " titled ",
                                         " labelled ", " labeled ", " as "};
    static const char *const PLACES[] = {" in ", " to ", " for ", " at ", " on ", " into "};
    const char *at = NULL;
    size_t lk = 0;
    for (size_t k = 0; k < sizeof(CALLED) / sizeof(CALLED[0]); k++) {
        const char *p = strstr(text, CALLED[k]);
        if (p != NULL && (at == NULL || p < at)) {
            at = p;
            lk = strlen(CALLED[k]);
        }
    }
    if (at == NULL) {
        return false;
    }
    at += lk;
    size_t len = strcspn(at, ":,;");
    for (size_t k = 0; k < sizeof(PLACES) / sizeof(PLACES[0]); k++) {
        const char *p = strstr(at, PLACES[k]);
        if (p != NULL && (size_t)(p - at) < len) {
            len = (size_t)(p - at);
        }
    }
    while (len > 0 && strchr(" .!", at[len - 1]) != NULL) {
        len--;
    }
    if (len >= 7 && strncasecmp(at + len - 7, " please", 7) == 0) {
        len -= 7;
    }
    if (len == 0 || len >= size) {
        return false;
    }
    memcpy(out, at, len);
    out[len] = '\0';
    return true;
}

bool agent_restore_called_name(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call) {
    if (ts == NULL || tool < 0 || segment == NULL || call == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    char said[GUARD_MAX_COPY * 2];
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    if (tp == NULL || !called_text(segment, said, sizeof(said))) {
        return false;
    }
    /* the argument the pack's own examples name so ("alarm at 14:00 called dentist": label) */
    const char *arg = NULL;
    for (size_t e = 0; e < tp->n_examples && arg == NULL; e++) {
        char x[GUARD_MAX_COPY * 2];
        const char *name;
        const json_t *v;
        if (tp->examples[e].say == NULL || !called_text(tp->examples[e].say, x, sizeof(x))) {
            continue;
        }
        json_object_foreach((json_t *)tp->examples[e].args, name, v) {
            if (json_is_string(v) && strcasecmp(json_string_value(v), x) == 0) {
                arg = name;
            }
        }
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *p = NULL;
    for (size_t j = 0; arg != NULL && j < t->params->n_props; j++) {
        p = strcmp(t->params->props[j].name, arg) == 0 ? &t->params->props[j] : p;
    }
    if (p == NULL || !pipit_schema_free_string(p->schema)) {
        return false;
    }
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    const char *had = json_string_value(json_object_get(args, p->name));
    bool changed = json_is_object(args) && (had == NULL || strcmp(had, said) != 0) &&
                   json_object_set_new(args, p->name, json_string(said)) == 0;
    changed = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

bool agent_restore_person_words(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool changed = false;
    for (size_t i = 0; args != NULL && i < t->params->n_props; i++) {
        if (!pipit_schema_free_string(t->params->props[i].schema)) {
            continue;
        }
        const char *v = json_string_value(json_object_get(args, t->params->props[i].name));
        if (v == NULL || strpbrk(v, "0123456789") != NULL || heard_contains_nocase(segment, v)) {
            continue;
        }
        char words[GUARD_MAX_COPY + 1];
        if (closest_words(segment, v, words, sizeof(words)) &&
            json_object_set_new(args, t->params->props[i].name, json_string(words)) == 0) {
            changed = true;
        }
    }
    changed = (args != NULL && split_copied_twice(t, segment, args)) || changed;
    changed = (args != NULL && extend_short_message(t, segment, args)) || changed;
    changed = (args != NULL && extend_short_name(t, segment, args)) || changed;
    changed = (args != NULL && verb_copied(t, segment, args)) || changed;
    changed = (args != NULL && strip_arg_lead(t, args)) || changed;
    bool written = agent_said_put_args(call, args, changed);
    json_decref(args);
    return written;
}

/* "from now on its name is Bertha" -> name="its name is Bertha": a free string that opens with
 * the argument's own name and "is", "to", "as" or "will be" (after "its", "the", "my", "your")
 * is what follows. True when `args` changed. */
static bool strip_arg_lead(const struct pipit_tool *t, json_t *args) {
    static const char *const OWNERS[] = {"its", "the", "my", "your", "his", "her", "new"};
    static const char *const LINKS[] = {"is", "to", "as", "be", "should", "will", "shall"};
    bool changed = false;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        const char *v = pipit_schema_free_string(p->schema)
                            ? json_string_value(json_object_get(args, p->name))
                            : NULL;
        struct words_tok tok[16];
        size_t n = v != NULL ? words_tokenize(v, strlen(v), 0, tok, 16) : 0, i = 0;
        /* "save this as baby clothes" -> name="as baby clothes", "save the current settings as
         * towels" -> name="current settings as towels": the words that introduced a name, label
         * or title, and what it names, are not the name ("as soon as possible" in a message
         * stays) */
        static const char *const INTRO[] = {"as", "called", "named", "titled"};
        bool naming = strstr(p->name, "name") != NULL || strstr(p->name, "label") != NULL ||
                      strstr(p->name, "title") != NULL || strstr(p->name, "tag") != NULL;
        size_t intro = n;
        for (size_t k = 0; naming && n < 16 && k + 1 < n; k++) {
            intro = agent_said_any(tok + k, 1, INTRO, N_OF(INTRO)) ? k : intro;
        }
        if (intro < n) {
            char rest[GUARD_MAX_COPY * 2];
            pipit_format(rest, sizeof(rest), "%s", v + tok[intro + 1].start);
            changed = json_object_set_new(args, p->name, json_string(rest)) == 0 || changed;
            continue;
        }
        while (i < n && agent_said_any(tok + i, 1, OWNERS, N_OF(OWNERS))) {
            i++;
        }
        if (i >= n || !heard_text_named(p->name, tok + i, 1)) {
            continue;
        }
        size_t r = i + 1;
        while (r < n && agent_said_any(tok + r, 1, LINKS, N_OF(LINKS))) {
            r++;
        }
        if (r == i + 1 || r >= n || n >= 16) {
            continue; /* no "is": "name tag" stays */
        }
        char rest[GUARD_MAX_COPY * 2];
        pipit_format(rest, sizeof(rest), "%s", v + tok[r].start);
        changed = json_object_set_new(args, p->name, json_string(rest)) == 0 || changed;
    }
    return changed;
}

/* "print my keychain" -> start_print(file="print"): the model copied the request's verb as the
 * thing. When the tool's only required argument is a free string whose value is the segment's
 * first word (after lead words) or a word of the tool's name, and words follow the verb, the
 * value becomes those words less "my", "the", "a", ..., words of the tool's name ("printing")
 * and a closing "please" or "now". True when `args` changed. */
static bool verb_copied(const struct pipit_tool *t, const char *segment, json_t *args) {
    static const char *const LEADS[] = {"please", "pls", "can", "could", "would", "you",  "just",
                                        "now",    "hey", "ok",  "okay",  "go",    "ahead"};
    static const char *const SKIP[] = {"my", "the", "a",   "an",  "your", "some", "this", "that",
                                       "me", "up",  "out", "off", "on",   "for",  "to",   "it"};
    static const char *const ENDS[] = {"please", "pls", "now", "thanks"};
    size_t req = 0, n_req = 0;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        if (t->params->props[j].required) {
            req = j;
            n_req++;
        }
    }
    const char *v = n_req == 1 && pipit_schema_free_string(t->params->props[req].schema)
                        ? json_string_value(json_object_get(args, t->params->props[req].name))
                        : NULL;
    if (v == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS), i = 0;
    while (i < n && agent_said_any(tok + i, 1, LEADS, N_OF(LEADS))) {
        i++;
    }
    /* one word, the verb or a word of the tool's name; or the request from its verb on
     * ("rename it to Mowzart" -> name="rename it to Mowzart") */
    struct words_tok vt[2];
    size_t nv = words_tokenize(v, strlen(v), 0, vt, 2);
    bool verb = i < n && nv >= 1 && strcmp(vt[0].w, tok[i].w) == 0;
    if (i >= n || nv == 0 || !(verb || (nv == 1 && heard_text_named(t->name, vt, 1)))) {
        return false;
    }
    size_t r = i + 1;
    while (r < n && (agent_said_any(tok + r, 1, SKIP, N_OF(SKIP)) ||
                     heard_text_named(t->name, tok + r, 1) || strcmp(tok[r].w, vt[0].w) == 0)) {
        r++;
    }
    size_t e = n;
    while (e > r && agent_said_any(tok + e - 1, 1, ENDS, N_OF(ENDS))) {
        e--;
    }
    char value[GUARD_MAX_COPY * 2];
    size_t a = r < e ? tok[r].start : 0, b = r < e ? tok[e - 1].end : 0;
    if (r >= e || b - a >= sizeof(value) || e - r > 6) {
        return false;
    }
    pipit_format(value, sizeof(value), "%.*s", (int)(b - a), segment + a);
    return strcasecmp(value, v) != 0 &&
           json_object_set_new(args, t->params->props[req].name, json_string(value)) == 0;
}

/* A name copied short of its start ("play Kind of Blue" -> query "Blue", "throw on a bit of
 * lo-fi hip hop" -> "hip hop"): of a tool with one free string (not a message, not an
 * identifier: no digit, a name not ending in "id"), whose value is said once as whole words,
 * the words said right before it that are no verb, determiner, particle or filler are the start
 * of the name (six words in all; "of" after "a bit", "a lot", ... ends it). Only the start: a
 * longer search ("banana bread recipe" for "banana bread") finds less. True when `args`
 * changed. */
static bool extend_short_name(const struct pipit_tool *t, const char *segment, json_t *args) {
    static const char *const LEFT[] = {
        "the",   "a",        "an",    "my",     "your",  "our",    "his",    "her",     "their",
        "some",  "any",      "this",  "that",   "these", "those",  "me",     "us",      "him",
        "them",  "it",       "on",    "up",     "to",    "for",    "in",     "at",      "from",
        "with",  "by",       "about", "called", "named", "titled", "please", "pls",     "can",
        "could", "would",    "you",   "just",   "hey",   "ok",     "okay",   "so",      "now",
        "and",   "then",     "also",  "i",      "id",    "want",   "wanna",  "like",    "lets",
        "let",   "play",     "put",   "throw",  "find",  "search", "show",   "open",    "look",
        "get",   "navigate", "take",  "call",   "text",  "start",  "queue",  "listen",  "hear",
        "give",  "drive",    "walk",  "bike",   "ride",  "book",   "send",   "message", "tell",
        "add",   "go",       "head",  "need",   "some",  "more",   "new",    "another"};
    static const char *const QUANTITY[] = {"bit", "lot", "little", "couple", "lots", "some"};
    const struct pipit_schema_prop *only = NULL;
    for (size_t i = 0; i < t->params->n_props; i++) {
        if (pipit_schema_free_string(t->params->props[i].schema)) {
            if (only != NULL) {
                return false; /* "text Mary Jane hi": two strings, the words between are theirs */
            }
            only = &t->params->props[i];
        }
    }
    if (only == NULL) {
        return false;
    }
    const char *v = json_string_value(json_object_get(args, only->name));
    size_t ln = strlen(only->name);
    if (v == NULL || message_arg(only) || strpbrk(v, "0123456789") != NULL ||
        (ln >= 2 && strcasecmp(only->name + ln - 2, "id") == 0)) {
        return false; /* a message runs on (extend_short_message()); an identifier is whole */
    }
    struct words_tok tok[GUARD_MAX_TOKENS], vt[8];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    size_t m = words_tokenize(v, strlen(v), 0, vt, 8);
    if (m == 0 || m >= 6) {
        return false;
    }
    size_t at = 0, found = 0;
    for (size_t p = 0; p + m <= n; p++) {
        size_t k = 0;
        while (k < m && strcmp(tok[p + k].w, vt[k].w) == 0) {
            k++;
        }
        if (k == m) {
            at = p;
            found++;
        }
    }
    if (found != 1) {
        return false;
    }
    size_t lo = at, hi = at + m;
    while (lo > 0 && hi - lo < 6 && !agent_said_any(tok + lo - 1, 1, LEFT, N_OF(LEFT)) &&
           !isdigit((unsigned char)tok[lo - 1].w[0]) &&
           !(strcmp(tok[lo - 1].w, "of") == 0 && lo >= 2 &&
             agent_said_any(tok + lo - 2, 1, QUANTITY, N_OF(QUANTITY)))) {
        lo--;
    }
    if (lo == at) {
        return false;
    }
    char whole[GUARD_MAX_COPY * 4 + 1];
    pipit_format(whole, sizeof(whole), "%.*s", (int)(tok[hi - 1].end - tok[lo].start),
                 segment + tok[lo].start);
    return json_object_set_new(args, only->name, json_string(whole)) == 0;
}
