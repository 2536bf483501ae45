/*
 * agent_guard.c - the person's numbers: a numeric argument the model bent is put back to the
 * number the person wrote, so that validation refuses it with the tool's limit; a name the
 * model misspelt while copying it is put back to the person's words; an enum value or on/off
 * other than the one the person said is put back to theirs (the section comments below have
 * the rules).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_guard.h"

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
#define GUARD_MAX_COPY  64

/* Edits between two words, case aside: a letter put in, dropped or changed, or two neighbours
 * swapped (optimal string alignment), so "falsh" is one from "flash", as the training data's
 * typos are (train_add_typo()). */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb) {
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
static const char *find_nocase(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (const char *p = hay; n > 0 && *p != '\0'; p++) {
        if (strncasecmp(p, needle, n) == 0) {
            return p;
        }
    }
    return NULL;
}

static bool contains_nocase(const char *hay, const char *needle) {
    return find_nocase(hay, needle) != NULL;
}

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
            size_t d = edit_distance(segment + starts[i], lg, v, lv);
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
            (p->schema->description != NULL && contains_nocase(p->schema->description, SAYS[k]))) {
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
                (contains_nocase(rest, o) || find_nocase(segment, o) > at)) {
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

static bool extend_short_name(const struct pipit_tool *t, const char *segment, json_t *args);
static bool verb_copied(const struct pipit_tool *t, const char *segment, json_t *args);
static bool strip_arg_lead(const struct pipit_tool *t, json_t *args);

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

static bool text_named(const char *text, const struct words_tok *tok, size_t n);

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
            if (says_words_nocase(segment, num) && text_named(key, tok, n)) {
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
            s->pattern[lp - 1] != '$') {
            continue;
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
        static const char *const POLITE[] = {"please", "pls", "thanks", "thx"};
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
        if (v == NULL || strpbrk(v, "0123456789") != NULL || contains_nocase(segment, v)) {
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

static const char *const SAY_TRUE[] = {"on", "enable", "enabled", "activate", "show"};
static const char *const SAY_FALSE[] = {"off",  "disable", "disabled", "deactivate", "hide",
                                        "lose", "kill",    "ditch",    "remove",     "rid"};
/* parts of a boolean's name that make "on" mean false */
static const char *const NEGATIVE_NAMES[] = {"mute",    "disable",   "hide",  "hidden",
                                             "off",     "block",     "silen", "pause",
                                             "private", "incognito", "dnd"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* `v` as a lowercase phrase ("living_room" -> "living room"); false when it is not one. */
static bool value_phrase(const char *v, char *out, size_t size) {
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

/* Whether the tokens say `phrase` as whole words anywhere. */
static bool says(const struct words_tok *t, size_t n, const char *phrase) {
    return agent_said_phrase(t, n, phrase);
}

/* Whether the tokens say enum value `phrase`: as whole words, or a one-word value of 4 letters
 * or more as the start of a word ("automatic" says "auto", "portraits" says "portrait"), but
 * not as a comparative ("warmer" is no "warm": it asks for a change). */
static bool says_value(const struct words_tok *t, size_t n, const char *phrase) {
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
    return says(t, n, phrase);
}

static bool says_any(const struct words_tok *t, size_t n, const char *const *list, size_t n_list) {
    return agent_said_any(t, n, list, n_list);
}

/* Whether another string enum argument of `t` than `skip` has the value `phrase`. */
static bool other_arg_has(const struct pipit_tool *t, size_t skip, const char *phrase) {
    for (size_t j = 0; j < t->params->n_props; j++) {
        const struct pipit_schema *s = t->params->props[j].schema;
        for (size_t e = 0; j != skip && s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
            char ph[WORDS_CAP * 2];
            if (value_phrase(s->enum_str[e], ph, sizeof(ph)) && strcmp(ph, phrase) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* The one value of enum argument `i` the segment says, or NULL. */
/* Whether `word` is one of the words of tool name `name` ("quality" of set_quality_priority). */
static bool name_has_word(const char *name, const char *word) {
    return words_name_has(name, word, strlen(word));
}

static const char *
said_enum_value(const struct pipit_tool *t, size_t i, const struct words_tok *tok, size_t n) {
    const struct pipit_schema *s = t->params->props[i].schema;
    const char *said = NULL, *named = NULL;
    for (size_t e = 0; e < s->n_enum; e++) {
        char ph[WORDS_CAP * 2];
        if (!value_phrase(s->enum_str[e], ph, sizeof(ph)) || !says_value(tok, n, ph)) {
            continue;
        }
        bool in_name = false; /* said with the next word of the tool's name: "quality priority" */
        for (size_t k = 0; k + 1 < n && strchr(ph, ' ') == NULL; k++) {
            in_name = in_name || (strcmp(tok[k].w, ph) == 0 && name_has_word(t->name, ph) &&
                                  name_has_word(t->name, tok[k + 1].w));
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
                edit_distance(tok[k].w, lw, v, lv) == 1) {
                if (slipped != NULL && slipped != v) {
                    return NULL; /* two values so said: the model's call */
                }
                slipped = v;
            }
        }
    }
    said = said != NULL ? said : slipped;
    /* "turn macro off": an off word beside another value turns that value off */
    if (said != NULL && !words_in_list(said, SAY_FALSE, N_OF(SAY_FALSE)) &&
        says_any(tok, n, SAY_FALSE, N_OF(SAY_FALSE))) {
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
        bool starts = says_any(tok, n, START_WORDS, N_OF(START_WORDS)),
             stops = says_any(tok, n, STOP_WORDS, N_OF(STOP_WORDS));
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
                said = says(tok, n, SIZES[z][w]) ? s->enum_str[e] : NULL;
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
                if (strlen(s->enum_str[e]) >= 3 && value_phrase(s->enum_str[e], ph, sizeof(ph)) &&
                    says_value(tok, n, ph)) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* The polarity the segment says for boolean argument `name`: 1 true, 0 false, -1 none. */
static size_t skip_openers(const struct words_tok *tok, size_t n);

/* Whether the segment says boolean `name`'s stem ("lock" of "locked", "arm" of "armed") as a
 * word's start: *undone when with "un" or "dis" before it, anywhere ("unlock", "disarm"), *done
 * when without, as the verb that opens the segment ("lock it up"; "release the lock" says the
 * noun). */
static void
said_stem(const char *name, const struct words_tok *tok, size_t n, bool *done, bool *undone) {
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
    size_t verb = skip_openers(tok, n);
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

static int said_polarity(const char *name, const struct words_tok *tok, size_t n) {
    bool done = false, undone = false;
    said_stem(name, tok, n, &done, &undone);
    if (undone && !done) {
        return 0; /* "unlock", "disarm", "unmute": the name's own word undone */
    }
    bool on = says_any(tok, n, SAY_TRUE, N_OF(SAY_TRUE));
    bool off = says_any(tok, n, SAY_FALSE, N_OF(SAY_FALSE));
    if (!on && !off && done && !undone) {
        return 1; /* "lock it up", "arm the alarm", "mute it" */
    }
    for (size_t k = 0; k < N_OF(NEGATIVE_NAMES); k++) {
        if (contains_nocase(name, NEGATIVE_NAMES[k])) {
            return -1;
        }
    }
    return on == off ? -1 : on ? 1 : 0;
}

/* "turn of the flash": "of" right after a verb of switching is "off" mistyped, and so is "of"
 * that ends a segment with such a verb ("turn the flsh of"); the tokens are rewritten. */
static void read_mistyped_off(struct words_tok *tok, size_t n) {
    static const char *const SWITCH_VERBS[] = {"turn", "switch", "shut", "turned", "switched"};
    for (size_t i = 1; i < n; i++) {
        if (strcmp(tok[i].w, "of") == 0 &&
            (says_any(tok + i - 1, 1, SWITCH_VERBS, N_OF(SWITCH_VERBS)) ||
             (i + 1 == n && says_any(tok, i, SWITCH_VERBS, N_OF(SWITCH_VERBS))))) {
            pipit_format(tok[i].w, sizeof(tok[i].w), "off");
        }
    }
}

/* Whether the tokens negate, leaving out negation words inside a name of the pack's: "enable
 * do not disturb" names set_do_not_disturb and negates nothing. The names: each tool's name
 * less its first word ("do not disturb" of set_do_not_disturb), and the state keys' names. */
static bool negates(const struct pipit_toolset *ts, const struct words_tok *tok, size_t n) {
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t m = n < GUARD_MAX_TOKENS ? n : GUARD_MAX_TOKENS;
    memcpy(t, tok, m * sizeof(t[0]));
    for (size_t i = 0; ts != NULL && i < ts->n_tools; i++) {
        char ph[WORDS_CAP * 3];
        const char *name = ts->tools[i].name;
        const char *rest = name + strcspn(name, "_ ");
        rest += strspn(rest, "_ ");
        if (*rest == '\0' || !value_phrase(rest, ph, sizeof(ph)) || strchr(ph, ' ') == NULL) {
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
        if (!value_phrase(pack->keys[k].key, ph, sizeof(ph)) || strchr(ph, ' ') == NULL) {
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
            intro = says_any(tok + k, 1, INTRO, N_OF(INTRO)) ? k : intro;
        }
        if (intro < n) {
            char rest[GUARD_MAX_COPY * 2];
            pipit_format(rest, sizeof(rest), "%s", v + tok[intro + 1].start);
            changed = json_object_set_new(args, p->name, json_string(rest)) == 0 || changed;
            continue;
        }
        while (i < n && says_any(tok + i, 1, OWNERS, N_OF(OWNERS))) {
            i++;
        }
        if (i >= n || !text_named(p->name, tok + i, 1)) {
            continue;
        }
        size_t r = i + 1;
        while (r < n && says_any(tok + r, 1, LINKS, N_OF(LINKS))) {
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
    static const char *const ENDS[] = {"please", "pls", "now", "thanks", "thx"};
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
    while (i < n && says_any(tok + i, 1, LEADS, N_OF(LEADS))) {
        i++;
    }
    /* one word, the verb or a word of the tool's name; or the request from its verb on
     * ("rename it to Mowzart" -> name="rename it to Mowzart") */
    struct words_tok vt[2];
    size_t nv = words_tokenize(v, strlen(v), 0, vt, 2);
    bool verb = i < n && nv >= 1 && strcmp(vt[0].w, tok[i].w) == 0;
    if (i >= n || nv == 0 || !(verb || (nv == 1 && text_named(t->name, vt, 1)))) {
        return false;
    }
    size_t r = i + 1;
    while (r < n && (says_any(tok + r, 1, SKIP, N_OF(SKIP)) || text_named(t->name, tok + r, 1) ||
                     strcmp(tok[r].w, vt[0].w) == 0)) {
        r++;
    }
    size_t e = n;
    while (e > r && says_any(tok + e - 1, 1, ENDS, N_OF(ENDS))) {
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
    while (lo > 0 && hi - lo < 6 && !says_any(tok + lo - 1, 1, LEFT, N_OF(LEFT)) &&
           !isdigit((unsigned char)tok[lo - 1].w[0]) &&
           !(strcmp(tok[lo - 1].w, "of") == 0 && lo >= 2 &&
             says_any(tok + lo - 2, 1, QUANTITY, N_OF(QUANTITY)))) {
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
    if (negates(ts, tok, n)) {
        return false;
    }
    read_mistyped_off(tok, n);
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

static const char *const OFF_WORDS[] = {
    "off",     "disable", "disabled", "deactivate", "hide",  "drop", "away",  "free",  "kill",
    "remove",  "lose",    "rid",      "cut",        "stop",  "end",  "quit",  "close", "unlock",
    "release", "clear",   "cancel",   "ditch",      "scrap", "lift", "exit",  "leave", "down",
    "pause",   "halt",    "finish",   "done",       "shut",  "less", "lower", "unpin",
};
static const char *const ON_SIDE[] = {"on", "start", "true", "enable", "enabled", "open", "yes"};
static const char *const OFF_SIDE[] = {"off",      "stop",  "false", "disable",
                                       "disabled", "close", "no"};

/* For an enum that is a switch: the index of its on-side and off-side values; false if not. */
static bool enum_switch(const struct pipit_schema *s, size_t *on, size_t *off) {
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
static bool word_names(const char *w, const char *name, size_t len) {
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
    return len >= 4 && lw >= 4 && edit_distance(w, lw, name, len) <= 1;
}

/* Whether any word of `text` (split at '_', ' ' and '|') names a token of the segment. */
static bool text_named(const char *text, const struct words_tok *tok, size_t n) {
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
                if (word_names(tok[i].w, word, len)) {
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
static bool
names_switch(const struct pipit_toolset *ts, size_t tool, const struct words_tok *tok, size_t n) {
    if (text_named(ts->tools[tool].name, tok, n)) {
        return true;
    }
    const char *const *keys = NULL;
    size_t n_keys = 0;
    pipit_toolset_undo(ts, tool, &keys, &n_keys);
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t k = 0; k < n_keys; k++) {
        const struct pipit_pack_key *pk = pipit_pack_find_key(pack, keys[k]);
        if (text_named(keys[k], tok, n) ||
            (pk != NULL && pk->words.names != NULL && text_named(pk->words.names, tok, n))) {
            return true;
        }
    }
    return false;
}

/* Whether the segment says one of the call's values: a string value in words, a number. */
static bool
says_a_value_of(const json_t *args, const char *segment, const struct words_tok *tok, size_t n) {
    double nums[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n_nums = agent_numbers_written(segment, 0, nums, raw, GUARD_MAX_NUMBERS);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)args, key, v) {
        char ph[WORDS_CAP * 2];
        if (json_is_string(v) && value_phrase(json_string_value(v), ph, sizeof(ph)) &&
            says_value(tok, n, ph)) {
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

static size_t skip_openers(const struct words_tok *tok, size_t n);

/* Whether the segment is, but for openers and fillers, a verb people use for value `ph` when
 * the value is a verb of the bank (verbbank.h: "ok carry on", "keep going please" for
 * "resume"); "drop the temperature" says no "cancel". */
static bool says_verb_of(const struct words_tok *tok, size_t n, const char *ph) {
    static const char *const FILLERS[] = {"it",    "that", "this", "please", "pls",
                                          "now",   "then", "ok",   "okay",   "thanks",
                                          "again", "for",  "me",   "go",     "ahead"};
    const char *alt[VERBBANK_MAX_ALT];
    int k = strchr(ph, ' ') == NULL ? verbbank_alternatives(ph, alt) : 0;
    size_t v = skip_openers(tok, n);
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

/* The string enum values that name a setting and that the segment says: 4 letters or more
 * ("daylight", "living room", a word's start: "portraits"), no word of a reversal ("back"), no
 * switch side ("start", "stop": "down half a stop"), no cloud tool's. Returns how many; the
 * first `max` go to tools[], args[] and values[] (max 0: only counted). */
#define MAX_SAID_SETTINGS 6
/* Whether the segment's verb is the verb of comparative value `ph` (one word ending in "er",
 * five letters or more): "dim" or "dims" for "dimmer", "brighten" for "brighter", "warm" for
 * "warmer" ("dim the kitchen a little" had switched the kitchen light on). */
static bool says_comparative(const struct words_tok *tok, size_t n, const char *ph) {
    size_t lp = strlen(ph), v = skip_openers(tok, n);
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

static size_t settings_said(const struct pipit_toolset *ts,
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
                char ph[WORDS_CAP * 2];
                if (strlen(s->enum_str[e]) >= 4 && value_phrase(s->enum_str[e], ph, sizeof(ph)) &&
                    !router_undo_signal(ph) && !words_in_list(ph, ON_SIDE, N_OF(ON_SIDE)) &&
                    !words_in_list(ph, OFF_SIDE, N_OF(OFF_SIDE)) &&
                    (says_value(tok, n, ph) || says_verb_of(tok, n, ph) ||
                     says_comparative(tok, n, ph))) {
                    if (found < max) {
                        tools[found] = i;
                        args[found] = j;
                        values[found] = s->enum_str[e];
                        verbs[found] = !says_value(tok, n, ph) && says_comparative(tok, n, ph);
                    }
                    found++;
                }
            }
        }
    }
    return found;
}

static bool pack_names(const struct pipit_toolset *ts, const char *w);
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
        if (pack_names(ts, w) || arg_description_says(ts, w)) {
            return true;
        }
    }
    return false;
}

bool agent_says_setting_value(const struct pipit_toolset *ts, const char *segment) {
    if (ts == NULL || segment == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    return settings_said(ts, tok, n, NULL, NULL, NULL, NULL, 0) > 0;
}

/* Whether the segment may name another tool than the model's `tool`: a pack tool that is
 * not the cloud, a segment that does not negate ("no daylight", "instead of portrait") and does
 * not thank ("thanks, that's a wrap for the food" closes; it sets no food mode). */
/* A segment of at most GUARD_MAX_TOKENS words that negates nothing and thanks nobody ("no
 * daylight", "instead of portrait", "thanks, that's a wrap for the food"). */
static bool asks_plainly(const struct words_tok *tok, size_t n) {
    static const char *const NOT_THIS[] = {"nor",   "instead of", "rather than", "thanks",
                                           "thank", "thx",        "cheers",      "ty"};
    return n < GUARD_MAX_TOKENS && !agent_said_negation(tok, n) &&
           !says_any(tok, n, NOT_THIS, N_OF(NOT_THIS));
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

/* The value of selector argument `j` of tool `i` (a required string enum that picks a key of
 * its effects, "{room}_light") the segment says: one of its values ("kitchen"), a key it picks
 * by the first word of its declared names ("lounge"), or any value when the segment says
 * "all" / "every" / "everywhere" (the agent runs a call for every place then); NULL when none
 * or two. */
static const char *said_place(const struct pipit_toolset *ts,
                              size_t i,
                              size_t j,
                              const struct words_tok *tok,
                              size_t n);

/* The call of tool `i` made of the values the segment says for it (settings_said()): every
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

/* The call of the values the segment says (settings_said()): the one tool, not `not_tool`,
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
    size_t k = settings_said(ts, tok, n, tools, targs, values, verbs, MAX_SAID_SETTINGS);
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

/* The call of the one switch the segment names ("use the flsh": set_flash, "on"): a tool whose
 * one required argument is a boolean or an on/off enum, named by a word of its name or keys,
 * not `not_tool`, with the side the segment's words say (on: "on", "use", "need", "want",
 * "enable", ...; off: "off", "kill", "drop", ...; neither or both: none). */
static bool names_call(const struct pipit_toolset *ts,
                       int32_t tool,
                       const struct pipit_call *call,
                       const char *segment,
                       const struct words_tok *tok,
                       size_t n);

/* Words that open a request without being its verb. */
static const char *const OPENERS[] = {"please", "pls",     "can", "could", "would", "you",
                                      "just",   "now",     "hey", "ok",    "okay",  "kindly",
                                      "right",  "alright", "so",  "then",  "and",   "also",
                                      "quick",  "quickly", "go",  "ahead", "oh",    "well"};
/* First words that are no verb of one tool. */
static const char *const NOT_VERBS[] = {
    "i",    "im",   "its",  "it",    "what",  "whats", "how",    "any",    "is",   "are",  "a",
    "an",   "the",  "my",   "no",    "never", "not",   "dont",   "set",    "make", "turn", "put",
    "get",  "give", "let",  "do",    "this",  "that",  "thats",  "there",  "we",   "me",   "lets",
    "want", "need", "show", "start", "stop",  "use",   "change", "switch", "more", "less"};

static size_t skip_openers(const struct words_tok *tok, size_t n) {
    size_t v = 0;
    while (v < n && says_any(tok + v, 1, OPENERS, N_OF(OPENERS))) {
        v++;
    }
    return v;
}

/* Whether `w` is `lead` or, with `bank`, one of the verbs people use for it (verbbank.h: "grab"
 * for "snap"), one word. */
static bool verb_is(const char *lead, const char *w, bool bank) {
    return bank ? verbbank_says(lead, w) : strcmp(lead, w) == 0;
}

/* The one tool some of whose examples open with `w` (after OPENERS), or -1: none or two. When
 * no example opens with it, the one tool an example of which opens with a verb `w` is said
 * for ("grab him mid-jump": take_photo's "snap one of the dog"). */
static int32_t example_verb_tool(const struct pipit_toolset *ts, const char *w) {
    for (int bank = 0; bank < 2; bank++) {
        int32_t found = -1;
        for (size_t i = 0; i < ts->n_tools; i++) {
            const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
            for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
                struct words_tok t[8];
                const char *say = tp->examples[e].say;
                size_t n = words_tokenize(say, strlen(say), 0, t, 8), v = skip_openers(t, n);
                if (v < n && verb_is(t[v].w, w, bank != 0)) {
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

int32_t
agent_example_verb(const struct pipit_toolset *ts, const char *say, char *verb, size_t size) {
    if (ts == NULL || say == NULL || verb == NULL || size == 0) {
        return -1;
    }
    verb[0] = '\0';
    struct words_tok t[8];
    size_t n = words_tokenize(say, strlen(say), 0, t, 8), v = skip_openers(t, n);
    if (v >= n || says_any(t + v, 1, NOT_VERBS, N_OF(NOT_VERBS))) {
        return -1;
    }
    pipit_format(verb, size, "%s", t[v].w);
    return example_verb_tool(ts, t[v].w);
}

bool agent_names_tool(const struct pipit_toolset *ts, size_t tool, const char *segment) {
    if (ts == NULL || segment == NULL || tool >= ts->n_tools) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    size_t v = skip_openers(tok, n);
    return names_switch(ts, tool, tok, n) ||
           (v < n && !says_any(tok + v, 1, NOT_VERBS, N_OF(NOT_VERBS)) &&
            example_verb_tool(ts, tok[v].w) == (int32_t)tool);
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
    size_t v = skip_openers(tok, n);
    if (v >= n || says_any(tok + v, 1, NOT_VERBS, N_OF(NOT_VERBS))) {
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
    if (v + 1 < n && says_any(tok + v + 1, 1, HOW, N_OF(HOW))) {
        return false; /* "shoot in portrait", "shoot at night": how, not what */
    }
    int32_t verb = example_verb_tool(ts, tok[v].w);
    if (verb < 0 || verb == tool || pipit_toolset_is_cloud(ts, (size_t)verb)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)verb);
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        if (t->params->props[j].required) {
            return false; /* its arguments would be a guess */
        }
    }
    if (names_call(ts, tool, call, segment, tok, n)) {
        return false; /* "shoot it at 2x": the model's call has what was said */
    }
    return agent_said_replace_call(call, t, json_object());
}

static bool switch_call(const struct pipit_toolset *ts,
                        const struct words_tok *tok,
                        size_t n,
                        int32_t not_tool,
                        size_t *found,
                        json_t **args);

/* Whether the segment names the model's call: a word of its tool or keys, or one of its
 * values. */
static bool names_call(const struct pipit_toolset *ts,
                       int32_t tool,
                       const struct pipit_call *call,
                       const char *segment,
                       const struct words_tok *tok,
                       size_t n) {
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool named = !json_is_object(args) || names_switch(ts, (size_t)tool, tok, n) ||
                 says_a_value_of(args, segment, tok, n);
    json_decref(args);
    return named;
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
    while (v < n && says_any(tok + v, 1, LEADS, N_OF(LEADS))) {
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
    while (r < n && (says_any(tok + r, 1, SKIP, N_OF(SKIP)) || text_named(t->name, tok + r, 1))) {
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
    size_t v = skip_openers(tok, n);
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
    while (r < n && says_any(tok + r, 1, SKIP, N_OF(SKIP))) {
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

/* "one last photo of the setlist" -> "Sorry, the camera can't do that.": the segment opens
 * (after "please", "ok", ... and "one", "another", "last", "more", "a", "the", ...) with a noun of
 * the name of the one tool that takes no argument ("photo" of take_photo; a plural or a longer
 * form too), and says nothing of how things are ("the photo is blurry"). That tool's call. */
static bool names_word_of(const char *w, const char *text);

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
    size_t v = skip_openers(tok, n);
    while (v < n && says_any(tok + v, 1, QUANTITY, N_OF(QUANTITY))) {
        v++;
    }
    if (v >= n || says_any(tok, n, IS, N_OF(IS))) {
        return false;
    }
    size_t named = 0, match = 0; /* tools the word names; of them, a noun's with no argument */
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (pipit_toolset_is_cloud(ts, i) || !names_word_of(tok[v].w, t->name)) {
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
        if (!takes && ln >= 3 && noun[ln] == '\0' && word_names(tok[v].w, noun, ln)) {
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
            any = says(tok, n, hw[i].w);
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
    while (w < n && says_any(tok + w, 1, OPENERS, N_OF(OPENERS))) {
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
        if (!json_is_string(v) || !value_phrase(json_string_value(v), ph, sizeof(ph))) {
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
            if (says(tok, n, w)) {
                return true;
            }
        }
        p += l;
        p += *p == '_';
    }
    return false;
}

/* agent_choose_tool_by_value() once the segment's tokens are read and may rename. */
static bool by_value(const struct pipit_toolset *ts,
                     int32_t tool,
                     const char *segment,
                     const struct words_tok *tok,
                     size_t n,
                     struct pipit_call *call);

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
                 (!by_verb && names_switch(ts, (size_t)tool, tok, n)) ||
                 says_a_value_of(model_args, segment, tok, n);
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
            if (says(tok, n, word)) {
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
        if ((value_phrase(v, ph, sizeof(ph)) && says(tok, n, ph)) ||
            names_selected_key(ts, sel, v, tok, n)) {
            if (found != NULL && strcmp(found, v) != 0) {
                return NULL; /* two places */
            }
            found = v;
        }
    }
    if (found == NULL && says_any(tok, n, ALL, N_OF(ALL))) {
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
        if (value_phrase(sel->schema->enum_str[e], ph, sizeof(ph)) && says_value(tok, n, ph)) {
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
           edit_distance(w, lw, v, lv) * 4 <= longer;
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
            (now != NULL && value_phrase(now, ph, sizeof(ph)) && says_mistyped(tok, n, ph))) {
            continue; /* "kitchn light off": the model read the kitchen, and so does the harness */
        }
        /* "bit dimmer" after the lounge light went on: the lounge, not the model's guess */
        changed = json_object_set_new(args, sel->name, json_string(last)) == 0 || changed;
    }
    bool written = changed && agent_said_put_args(call, args, true);
    json_decref(args);
    return written;
}

/* Tool `i`'s one required argument when it is a number and the only required one, else NULL. */
static const struct pipit_schema_prop *one_required_number(const struct pipit_tool *t) {
    const struct pipit_schema_prop *need = pipit_tool_only_required(t, NULL);
    return need != NULL && (need->schema->type == PIPIT_SCHEMA_NUMBER ||
                            need->schema->type == PIPIT_SCHEMA_INTEGER)
               ? need
               : NULL;
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
                if (word_names(tok[k].w, word, len)) {
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
        if (pk != NULL && pk->words.names != NULL && text_named(pk->words.names, tok, n)) {
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

/* The one tool (not the cloud) whose only required argument is a number that the segment
 * names: by a noun of the tool, or (not `ranged`) by a number with the argument's name as its
 * unit; `ranged`: only numbers with both ends. False for none or two. */
static bool named_number_tool(const struct pipit_toolset *ts,
                              const struct words_tok *tok,
                              size_t n,
                              bool ranged,
                              size_t *named) {
    size_t n_named = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_schema_prop *num =
            pipit_toolset_is_cloud(ts, i) ? NULL : one_required_number(&ts->tools[i]);
        if (num != NULL && (!ranged || (num->schema->has_min && num->schema->has_max)) &&
            (names_tool_noun(ts, i, tok, n) || (!ranged && number_of_arg(tok, n, num->name)))) {
            *named = i;
            n_named++;
        }
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
    const struct pipit_schema_prop *need = one_required_number(t);
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n_said =
        agent_numbers_written(segment, agent_number_time_unit(need), said, raw, GUARD_MAX_NUMBERS);
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
    const struct pipit_schema *sc = one_required_number(t)->schema;
    json_t *mid = json_object(); /* neither end: agent_restore_bound_words() moves it to one */
    json_object_set_new(mid, one_required_number(t)->name,
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
    if (named == (size_t)tool || names_call(ts, tool, call, segment, tok, n)) {
        json_decref(made);
        return false; /* the model's */
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
    if (negates(ts, tok, n)) {
        return false;
    }
    bool on = says_any(tok, n, USE_WORDS, N_OF(USE_WORDS)),
         off = says_any(tok, n, OFF_WORDS, N_OF(OFF_WORDS));
    if (on == off) {
        return false;
    }
    size_t n_found = 0, arg = 0, place_arg = 0;
    const char *place = NULL;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (i == (size_t)not_tool || pipit_toolset_is_cloud(ts, i) || t->params == NULL ||
            !names_switch(ts, i, tok, n)) {
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
                (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0 && enum_switch(s, &a, &b))) {
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
        enum_switch(p->schema, &a, &b);
        json_object_set_new(*args, p->name, json_string(p->schema->enum_str[on ? a : b]));
    }
    return true;
}

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
            (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0 && enum_switch(s, &on, &off));
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
    read_mistyped_off(tok, n);
    if (negates(ts, tok, n)) {
        return false;
    }
    if (!names_switch(ts, (size_t)tool, tok, n)) {
        return false; /* "sounds like a plan" -> a lock call: a stray call is not read as meant */
    }
    bool off_said = says_any(tok, n, OFF_WORDS, N_OF(OFF_WORDS));
    json_t *v = json_object_get(args, name);
    if (sw->type == PIPIT_SCHEMA_BOOLEAN) {
        bool done = false, undone = false;
        said_stem(name, tok, n, &done, &undone);
        if (done != undone) {
            return false; /* "disarm" when it is not armed: the side said, already so */
        }
        for (size_t k = 0; k < N_OF(NEGATIVE_NAMES); k++) {
            if (contains_nocase(name, NEGATIVE_NAMES[k])) {
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
    enum_switch(sw, &on_i, &off_i);
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
        if (value_phrase(sw->enum_str[e], ph, sizeof(ph)) && says_value(tok, n, ph) &&
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
            is_switch =
                sc->type == PIPIT_SCHEMA_BOOLEAN ||
                (sc->type == PIPIT_SCHEMA_STRING && sc->n_enum > 0 && enum_switch(sc, &a, &b));
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
    size_t v = skip_openers(tok, n);
    return n < GUARD_MAX_TOKENS && !names_call(ts, tool, call, segment, tok, n) &&
           !agent_says_a_side(tok, n) && !says_any(tok, n, FOLLOW_UP, N_OF(FOLLOW_UP)) &&
           !says_any(tok, n, SIDE_VERBS, N_OF(SIDE_VERBS)) &&
           !(v < n && example_verb_tool(ts, tok[v].w) == tool);
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
    static const char *const BOTTOM[] = {"lowest",  "minimum", "min",    "gentlest",
                                         "weakest", "slowest", "softest"};
    if (ts == NULL || segment == NULL || call == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    int side = says_any(tok, n, TOP, N_OF(TOP))         ? 1
               : says_any(tok, n, BOTTOM, N_OF(BOTTOM)) ? -1
                                                        : 0;
    if (n >= GUARD_MAX_TOKENS || side == 0 || negates(ts, tok, n)) {
        return false;
    }
    size_t found = 0, n_found = 0, arg = 0;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (pipit_toolset_is_cloud(ts, i) || t->params == NULL || !names_switch(ts, i, tok, n)) {
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
    bool guessed = v != NULL && n < GUARD_MAX_TOKENS && !names_switch(ts, (size_t)tool, other, n);
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
    if (one_required_number(t) == NULL || (tp != NULL && tp->has_step)) {
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
    if (says_any(tok, n, MOVES, N_OF(MOVES)) || names_call(ts, tool, call, segment, tok, n)) {
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
            ((i > 0 && says_any(tok + i - 1, 1, ONE_AFTER, N_OF(ONE_AFTER))) ||
             (i + 1 < n && (strcmp(tok[i + 1].w, "else") == 0 || strcmp(tok[i + 1].w, "of") == 0)));
        if ((words_number_value(tok[i].w, &v) && !pronoun) || words_is_comparative(tok[i].w)) {
            return false; /* "ten", "a dozen"; "brighter", "warmest": a comparative */
        }
    }
    size_t v = skip_openers(tok, n);
    return !(v < n && example_verb_tool(ts, tok[v].w) == tool);
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
    if (names_switch(ts, (size_t)tool, tok, n) || says_any(tok, n, FOLLOW_UP, N_OF(FOLLOW_UP))) {
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
            if (contains_nocase(segment, json_string_value(v)) ||
                (value_phrase(json_string_value(v), ph, sizeof(ph)) && says_value(tok, n, ph))) {
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

/* Whether `w` names a word of `text` (split at anything not a letter or digit). */
static bool names_word_of(const char *w, const char *text) {
    for (const char *p = text; p != NULL && *p != '\0';) {
        size_t len = 0;
        while (isalnum((unsigned char)p[len])) {
            len++;
        }
        if (len > 0 && word_names(w, p, len)) {
            return true;
        }
        p += len > 0 ? len : 1;
    }
    return false;
}

/* Whether `w` names anything of the pack (above). */
static bool pack_names(const struct pipit_toolset *ts, const char *w) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        if (pipit_toolset_is_cloud(ts, i)) {
            continue;
        }
        if (names_word_of(w, t->name) ||
            (t->description != NULL && names_word_of(w, t->description))) {
            return true;
        }
        for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
            const struct pipit_schema *s = t->params->props[j].schema;
            if (names_word_of(w, t->params->props[j].name)) {
                return true;
            }
            for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
                if (names_word_of(w, s->enum_str[e])) {
                    return true;
                }
            }
        }
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
            if (tp->examples[e].say != NULL && names_word_of(w, tp->examples[e].say)) {
                return true;
            }
        }
    }
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    for (size_t k = 0; pack != NULL && k < pack->n_keys; k++) {
        const struct pipit_pack_key *pk = &pack->keys[k];
        if (names_word_of(w, pk->key) ||
            (pk->words.names != NULL && names_word_of(w, pk->words.names)) ||
            (pk->words.noun != NULL && names_word_of(w, pk->words.noun))) {
            return true;
        }
        for (size_t e = 0; pk->type == PIPIT_SCHEMA_STRING && e < pk->n_enum; e++) {
            if (names_word_of(w, pk->enum_str[e])) {
                return true;
            }
        }
    }
    for (size_t v = 0; pack != NULL && v < pack->n_nouns; v++) {
        if (names_word_of(w, pack->nouns[v])) {
            return true;
        }
    }
    return false;
}

/* Whether `w` is a word of an argument's description of a tool that is not the cloud's
 * ("Horizontal position, 0 = left, 1 = right": "left"). */
static bool arg_description_says(const struct pipit_toolset *ts, const char *w) {
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        for (size_t j = 0;
             !pipit_toolset_is_cloud(ts, i) && t->params != NULL && j < t->params->n_props; j++) {
            const char *d = t->params->props[j].schema->description;
            if (d != NULL && names_word_of(w, d)) {
                return true;
            }
        }
    }
    return false;
}

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
                        name_has_word(s->enum_str[e], w)) {
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
        while (lead < n && says_any(tok + lead, 1, LEAD, N_OF(LEAD))) {
            lead++;
        }
        size_t end = lead; /* "set the X to V": X of one to three words, V no word of the pack */
        while (end < n && end < lead + 3 && !says_any(tok + end, 1, STOP, N_OF(STOP))) {
            end++;
        }
        /* a number the model's tool takes keeps its call when the thing is a word of its own
         * or words the pack does not know ("set the brightness to 1": exposure); not when the
         * thing says the pack's word for something else ("set the water hardness to 3") */
        int32_t ti = tool != NULL ? pipit_toolset_find(ts, tool) : -1;
        bool names_model =
            ti >= 0 && end > lead && names_switch(ts, (size_t)ti, tok + lead, end - lead);
        bool any_known = false;
        for (size_t k = lead; k < end; k++) {
            any_known = any_known || pack_names(ts, tok[k].w);
        }
        names_model = names_model || !any_known;
        if (says_any(tok + i, 1, SET, N_OF(SET)) && lead > i + 1 && end > lead && end + 1 < n &&
            says_any(tok + end, 1, TO, N_OF(TO)) && !pack_names(ts, tok[end + 1].w) &&
            !(isdigit((unsigned char)tok[end + 1].w[0]) &&
              tool_takes_number(ts, tool, strtod(tok[end + 1].w, NULL)) && names_model)) {
            from = lead;
            to = end;
        } else if (says_any(tok + i, 1, MODE, N_OF(MODE)) && i > 0 &&
                   !says_any(tok + i - 1, 1, LEAD, N_OF(LEAD)) &&
                   !says_any(tok + i - 1, 1, STOP, N_OF(STOP)) &&
                   !says_any(tok + i - 1, 1, PRONOUN, N_OF(PRONOUN)) &&
                   !says_any(tok + i - 1, 1, NOT_A_THING, N_OF(NOT_A_THING))) {
            to = i; /* "burst mode please": X of one or two words before "mode" */
            from = i - 1;
            if (from > 0 && !says_any(tok + from - 1, 1, LEAD, N_OF(LEAD)) &&
                !says_any(tok + from - 1, 1, STOP, N_OF(STOP)) &&
                !says_any(tok + from - 1, 1, PRONOUN, N_OF(PRONOUN)) &&
                !says_any(tok + from - 1, 1, NOT_A_THING, N_OF(NOT_A_THING))) {
                from--;
            }
        } else if (says_any(tok + i, 1, TURN, N_OF(TURN)) && i + 1 < n &&
                   says_any(tok + i + 1, 1, SIDES, N_OF(SIDES))) {
            from = i + 2; /* "turn on X" */
        } else if (says_any(tok + i, 1, ENABLE, N_OF(ENABLE))) {
            from = i + 1; /* "enable X" */
        } else if (says_any(tok + i, 1, TURN, N_OF(TURN))) {
            size_t j = i + 1; /* "turn X on": X of one to three words */
            while (j < n && j <= i + 3 && !says_any(tok + j, 1, SIDES, N_OF(SIDES)) &&
                   !says_any(tok + j, 1, STOP, N_OF(STOP))) {
                j++;
            }
            if (j == i + 1 || j >= n || j > i + 3 || !says_any(tok + j, 1, SIDES, N_OF(SIDES))) {
                continue;
            }
            from = i + 1;
            to = j;
        } else {
            continue;
        }
        while (from < n && says_any(tok + from, 1, LEAD, N_OF(LEAD))) {
            from++;
        }
        if (to == 0) {
            to = from;
            while (to < n && to < from + 3 && !says_any(tok + to, 1, STOP, N_OF(STOP))) {
                to++;
            }
        }
        if (to <= from || says_any(tok + from, 1, PRONOUN, N_OF(PRONOUN))) {
            return false; /* "turn it on": the thing is said elsewhere */
        }
        /* a place the pack has ("bedroom") does not make the thing after it the pack's ("the
         * bedroom fan"); any other word of the pack does ("horizon guide", "wifi back") */
        bool known = false, counted = false;
        for (size_t k = from; k < to && !known; k++) {
            if (tok[k].w[0] == '\0' || says_any(tok + k, 1, GENERIC, N_OF(GENERIC)) ||
                (k + 1 < to && is_place_word(ts, tok[k].w))) {
                continue;
            }
            counted = true;
            known = pack_names(ts, tok[k].w) || isdigit((unsigned char)tok[k].w[0]);
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
    return says_a_value_of(args, segment, tok, n);
}

bool agent_says_a_side(const struct words_tok *tok, size_t n) {
    return says_any(tok, n, SAY_TRUE, N_OF(SAY_TRUE)) ||
           says_any(tok, n, SAY_FALSE, N_OF(SAY_FALSE));
}
