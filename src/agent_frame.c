/*
 * agent_frame.c - the pack's examples as frames (agent_frame.h).
 */
#include "agent_frame.h"

#include "agent_choose.h"
#include "agent_said.h"
#include "status.h"
#include "verbbank.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N_OF(a)         (sizeof(a) / sizeof((a)[0]))
#define FRAME_MAX_ARGS  4
#define FRAME_MAX_VALUE 256

enum frame_kind {
    FRAME_AFTER_VERB,
    FRAME_REST,
    FRAME_BEFORE
};

struct frame_arg {
    const char *arg; /* the argument's name (the tool's, borrowed) */
    enum frame_kind kind;
    /* FRAME_REST: a connector word, ":", or "" (after the verb's word); FRAME_BEFORE: the
     * connector word after the value ("add eggs to the groceries note": "to") */
    char marker[WORDS_CAP];
    bool drop_det; /* the example's value leaves out a determiner after the marker */
    bool to_colon; /* the value ends at a colon ("called gift ideas: scarf for mum") */
};

struct frame {
    char verb[WORDS_CAP];
    size_t n;
    struct frame_arg a[FRAME_MAX_ARGS];
    bool addressed; /* a person right after the verb, no argument: "tell her ..." */
};

/* A person spoken of right after the verb ("tell her ...", "tell him ...", "tell them ..."):
 * one such word in a frame stands for any. */
static bool object_pronoun(const char *w) {
    static const char *const OBJECTS[] = {"her", "him", "them", "me", "us"};
    return words_in_list(w, OBJECTS, N_OF(OBJECTS));
}

static const char *const OPENERS[] = {
    "please", "pls", "can",  "could", "would", "you", "just", "now",   "hey", "ok",    "okay",
    "kindly", "so",  "then", "and",   "also",  "oh",  "well", "quick", "go",  "ahead", "alright"};
/* words that mark where a rest begins */
static const char *const CONNECTORS[] = {"to",     "for",  "from",    "about",  "that",
                                         "saying", "with", "into",    "called", "named",
                                         "titled", "says", "reading", "re"};
/* words that end a rest after a connector word ("to the airport for my flight") */
static const char *const CUTS[] = {"to",   "for", "from",   "with",  "because", "so",    "and",
                                   "then", "at",  "before", "after", "when",    "since", "while"};
static const char *const DETERMINERS[] = {"the", "a", "an", "my", "our", "your", "some"};
/* the word after the verb that names nobody by itself */
static const char *const PRONOUNS[] = {"me",   "him", "her",  "them",     "it",        "that",
                                       "this", "us",  "you",  "the",      "a",         "an",
                                       "my",   "to",  "back", "everyone", "everybody", "all"};
/* words said to the device at the end, not part of a message */
static const char *const POLITE[] = {"please", "pls", "thanks", "thank"};

/* Whether `needle` occurs in `hay`, ASCII case ignored (words_contains() of its lowercase). */
static bool has_nocase(const char *hay, const char *needle) {
    char lower[FRAME_MAX_VALUE];
    size_t l = strlen(needle);
    if (l == 0 || l >= sizeof(lower)) {
        return false;
    }
    for (size_t i = 0; i <= l; i++) {
        lower[i] = (char)tolower((unsigned char)needle[i]);
    }
    return words_contains(hay, lower);
}

/* Whether `a` and the first word of `b` are one letter apart at most ("mum" and "Mom"), ASCII
 * case ignored, both of three letters or more. */
static bool one_apart(const char *a, const char *b) {
    size_t la = strlen(a), lb = strcspn(b, " ");
    if (la < 3 || lb < 3 || (la > lb ? la - lb : lb - la) > 1) {
        return false;
    }
    size_t i = 0;
    while (i < la && i < lb && tolower((unsigned char)a[i]) == tolower((unsigned char)b[i])) {
        i++;
    }
    if (la == lb) { /* one substitution */
        return i == la || strncasecmp(a + i + 1, b + i + 1, la - i - 1) == 0;
    }
    /* one insertion or deletion */
    return la > lb ? strncasecmp(a + i + 1, b + i, lb - i) == 0
                   : strncasecmp(a + i, b + i + 1, la - i) == 0;
}

static bool is_word(const struct words_tok *t) {
    return t->kind != WORDS_PUNCT && t->w[0] != '\0';
}

/* "called", "named", "titled", ...: one marker */
static bool name_word(const char *w) {
    static const char *const NAMES[] = {"called", "named", "titled", "labelled", "labeled"};
    return words_in_list(w, NAMES, N_OF(NAMES));
}

static size_t skip_openers(const struct words_tok *t, size_t n) {
    size_t v = 0;
    while (v < n && (!is_word(&t[v]) || words_in_list(t[v].w, OPENERS, N_OF(OPENERS)))) {
        v++;
    }
    return v;
}

/* The tokens of `s` (punctuation kept). */
static size_t tokens(const char *s, struct words_tok *t) {
    return words_tokenize(s, strlen(s), WORDS_PUNCTUATION, t, GUARD_MAX_TOKENS);
}

/* Whether the words of t[from .. n) (punctuation skipped) are exactly `v`'s words. */
static bool words_are(const struct words_tok *t, size_t from, size_t n, const char *v) {
    struct words_tok vt[GUARD_MAX_TOKENS];
    size_t nv = words_tokenize(v, strlen(v), 0, vt, GUARD_MAX_TOKENS), k = 0;
    for (size_t i = from; i < n; i++) {
        if (!is_word(&t[i])) {
            continue;
        }
        if (k >= nv || strcmp(t[i].w, vt[k].w) != 0) {
            return false;
        }
        k++;
    }
    return k == nv && nv > 0;
}

/* The frame of one example of tool `t`; false when its free-text arguments do not all stand in
 * a frame. */
static bool
read_frame(const struct pipit_tool *t, const struct pipit_pack_example *ex, struct frame *f) {
    memset(f, 0, sizeof(*f));
    if (ex->say == NULL || !json_is_object(ex->args) || t->params == NULL) {
        return false;
    }
    struct words_tok s[GUARD_MAX_TOKENS];
    size_t n = tokens(ex->say, s), v = skip_openers(s, n);
    while (n > 0 && !is_word(&s[n - 1])) {
        n--;
    }
    if (v + 2 >= n) {
        return false;
    }
    pipit_format(f->verb, sizeof(f->verb), "%s", s[v].w);
    bool after_verb = false;
    for (size_t i = 0; i < t->params->n_props; i++) {
        const struct pipit_schema_prop *p = &t->params->props[i];
        const char *val = json_string_value(json_object_get(ex->args, p->name));
        if (!pipit_schema_free_string(p->schema) || val == NULL) {
            continue;
        }
        if (f->n == FRAME_MAX_ARGS) {
            return false;
        }
        struct frame_arg *fa = &f->a[f->n];
        fa->arg = p->name;
        if (strpbrk(val, "0123456789") != NULL && !has_nocase(ex->say, val)) {
            continue; /* an identifier ("N-1" for "the groceries note"): the resolvers' */
        }
        struct words_tok vt[2];
        size_t nv = words_tokenize(val, strlen(val), 0, vt, 2);
        size_t c = v + 1; /* the words right after the verb, up to a connector */
        while (c < n && is_word(&s[c]) && !words_in_list(s[c].w, CONNECTORS, N_OF(CONNECTORS))) {
            c++;
        }
        if (c > v + 1 && c + 1 < n && is_word(&s[c]) && words_are(s, v + 1, c, val)) {
            fa->kind = FRAME_BEFORE; /* "add eggs to the groceries note" */
            pipit_format(fa->marker, sizeof(fa->marker), "%s", s[c].w);
            f->n++;
            continue;
        }
        if (nv > 0 && is_word(&s[v + 1]) && strcmp(s[v + 1].w, vt[0].w) == 0 &&
            !(nv > 1 && strcmp(s[v + 2].w, vt[1].w) == 0)) {
            fa->kind = FRAME_AFTER_VERB; /* "tell Priya ...": "Priya Natarajan" */
            after_verb = true;
            f->n++;
            continue;
        }
        bool found = false;
        size_t colon = n; /* the first colon after the verb */
        for (size_t k = v + 1; k < n && colon == n; k++) {
            colon = s[k].kind == WORDS_PUNCT && ex->say[s[k].start] == ':' ? k : n;
        }
        for (size_t j = v + 2; j < n && !found; j++) {
            if (!is_word(&s[j])) {
                continue;
            }
            size_t end = j < colon ? colon : n; /* the value runs to a colon or the end */
            bool det = words_in_list(s[j].w, DETERMINERS, N_OF(DETERMINERS)) && j + 1 < end &&
                       words_are(s, j + 1, end, val);
            bool one_name = j + 1 == end && nv > 1 && strcmp(s[j].w, vt[0].w) == 0;
            if (!det && !one_name && !words_are(s, j, end, val)) {
                continue;
            }
            fa->to_colon = end < n;
            const struct words_tok *m = &s[j - 1];
            if (m->kind == WORDS_PUNCT && ex->say[m->start] == ':') {
                pipit_format(fa->marker, sizeof(fa->marker), ":");
            } else if (is_word(m) && words_in_list(m->w, CONNECTORS, N_OF(CONNECTORS))) {
                pipit_format(fa->marker, sizeof(fa->marker), "%s",
                             name_word(m->w) ? "called" : m->w);
            } else if (j - 1 == v + 1 || (j - 2 == v + 1 && !is_word(m))) {
                fa->marker[0] = '\0'; /* right after the word after the verb */
            } else {
                return false;
            }
            fa->kind = FRAME_REST;
            fa->drop_det = det;
            found = true;
        }
        if (!found) {
            return false;
        }
        f->n++;
    }
    bool rest_after = false; /* the word after the verb, then the rest: "tell Priya I'm late" */
    for (size_t i = 0; i < f->n; i++) {
        rest_after = rest_after || (f->a[i].kind == FRAME_REST && f->a[i].marker[0] == '\0');
    }
    /* one word after the verb alone may be the first of several ("add eggs to the note");
     * a person spoken of ("tell her mummy's coming") is no argument */
    f->addressed = rest_after && !after_verb && object_pronoun(s[v + 1].w);
    return f->n > 0 && (after_verb == rest_after || f->addressed);
}

/* Whether the segment's word `w` is the frame's verb or a verb people say for it. */
static bool verb_fits(const char *verb, const char *w) {
    return strcmp(verb, w) == 0 || verbbank_says(verb, w);
}

/* seg[from .. n) less leading connectors and punctuation, a closing polite word and outer
 * punctuation; with `cut`, up to the next CUTS word. False when empty. */
static bool rest_from(const char *seg,
                      const struct words_tok *t,
                      size_t n,
                      size_t from,
                      bool cut,
                      bool drop_det,
                      char *out,
                      size_t size) {
    static const char *const LEAD[] = {"that", "saying", "say", "to", "says"};
    while (from < n &&
           (!is_word(&t[from]) || (words_in_list(t[from].w, LEAD, N_OF(LEAD)) && from + 1 < n))) {
        from++;
    }
    if (drop_det && from + 1 < n && words_in_list(t[from].w, DETERMINERS, N_OF(DETERMINERS))) {
        from++;
    }
    static const char *const WHEN[] = {"am", "pm", "oclock", "today", "tonight", "noon"};
    size_t end = n;
    for (size_t i = from + 1; cut && i < end; i++) {
        /* "at 200 Bishopsgate" is more of the place; "at 5pm", "at 5" its time */
        bool address = strcmp(t[i].w, "at") == 0 && i + 2 < n &&
                       isdigit((unsigned char)t[i + 1].w[0]) && strchr(t[i + 1].w, ':') == NULL &&
                       is_word(&t[i + 2]) && !words_in_list(t[i + 2].w, WHEN, N_OF(WHEN));
        if (is_word(&t[i]) && words_in_list(t[i].w, CUTS, N_OF(CUTS)) && !address) {
            end = i;
        }
    }
    while (end > from && !is_word(&t[end - 1])) {
        end--;
    }
    if (end > from + 1 && words_in_list(t[end - 1].w, POLITE, N_OF(POLITE))) {
        end--;
        while (end > from && !is_word(&t[end - 1])) {
            end--;
        }
    }
    if (from >= end || t[end - 1].end - t[from].start >= size ||
        (end == from + 1 && words_in_list(t[from].w, PRONOUNS, N_OF(PRONOUNS)))) {
        return false; /* "add ship the onboarding doc to it": "it" names no place */
    }
    pipit_format(out, size, "%.*s", (int)(t[end - 1].end - t[from].start), seg + t[from].start);
    return true;
}

/* A rest after a place's connector ends at the next one ("to the airport for my flight"); a
 * message after "that", "saying" or a colon runs to the end. */
static bool cut_rest(const struct frame_arg *fa) {
    static const char *const PLACE[] = {"to", "for", "from", "into", "with"};
    return words_in_list(fa->marker, PLACE, N_OF(PLACE));
}

/* The values frame `f` reads from `seg`: vals[i] for f->a[i]; false when the segment does not
 * fit the frame. With `any_verb`, a segment opening with another verb fits the frame's marked
 * rests ("order me a ride to the ferry building" for "get me a big car to the airport"); the
 * word after the verb and the rest after it stay empty. */
static bool
fit(const struct frame *f, const char *seg, bool any_verb, char vals[][FRAME_MAX_VALUE]) {
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = tokens(seg, t), v = skip_openers(t, n);
    if (v + 2 >= n || n >= GUARD_MAX_TOKENS || agent_said_negation(t, n)) {
        return false;
    }
    bool verb = verb_fits(f->verb, t[v].w), any = false;
    if (!verb && !any_verb) {
        return false;
    }
    if (f->addressed && !(is_word(&t[v + 1]) && object_pronoun(t[v + 1].w))) {
        return false; /* "tell her ..." fits "tell him ...", not "tell daddy loves him" */
    }
    for (size_t i = 0; i < f->n; i++) {
        const struct frame_arg *fa = &f->a[i];
        vals[i][0] = '\0';
        if (!verb && (fa->kind != FRAME_REST || fa->marker[0] == '\0')) {
            continue;
        }
        any = true;
        if (fa->kind == FRAME_BEFORE) {
            size_t last = n; /* the last marker: "add 'learn to juggle' to it" */
            for (size_t j = v + 2; j < n; j++) {
                last = is_word(&t[j]) && strcmp(t[j].w, fa->marker) == 0 ? j : last;
            }
            if (last == n ||
                !rest_from(seg, t, last, v + 1, false, false, vals[i], FRAME_MAX_VALUE)) {
                return false;
            }
            continue;
        }
        if (fa->kind == FRAME_AFTER_VERB) {
            if (!is_word(&t[v + 1]) || words_in_list(t[v + 1].w, PRONOUNS, N_OF(PRONOUNS))) {
                continue; /* "text her: see you sunday": the memory's to say who */
            }
            pipit_format(vals[i], FRAME_MAX_VALUE, "%.*s", (int)(t[v + 1].end - t[v + 1].start),
                         seg + t[v + 1].start);
            continue;
        }
        size_t from = n;
        if (fa->marker[0] == '\0') {
            from = v + 2;
        } else {
            for (size_t j = v + 1; j < n && from == n; j++) {
                bool colon = t[j].kind == WORDS_PUNCT && seg[t[j].start] == ':';
                bool word = strcmp(t[j].w, fa->marker) == 0 ||
                            (strcmp(fa->marker, "called") == 0 && name_word(t[j].w));
                from = (fa->marker[0] == ':' ? colon : word) ? j + 1 : n;
            }
        }
        size_t end = n;
        for (size_t k = from; fa->to_colon && k < n && end == n; k++) {
            end = t[k].kind == WORDS_PUNCT && seg[t[k].start] == ':' ? k : n;
        }
        if (from >= n || (fa->to_colon && end == n) ||
            !rest_from(seg, t, end, from, cut_rest(fa), fa->drop_det, vals[i], FRAME_MAX_VALUE)) {
            return false;
        }
    }
    return any;
}

/* The first frame of `tool`'s examples that `seg` fits, its values in vals. */
static bool fitting_frame(const struct pipit_toolset *ts,
                          int32_t tool,
                          const char *seg,
                          bool any_verb,
                          struct frame *f,
                          char vals[][FRAME_MAX_VALUE]) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    for (int pass = 0; pass < 1 + any_verb; pass++) { /* the verb's frame first */
        for (size_t e = 0; tp != NULL && t != NULL && e < tp->n_examples; e++) {
            if (read_frame(t, &tp->examples[e], f) && fit(f, seg, pass == 1, vals)) {
                return true;
            }
        }
    }
    return false;
}

/* Whether `mv` is the frame's words `fv` less their leading determiner ("Royal Infirmary" of
 * "the Royal Infirmary"): the pack's example keeps it, so the frame's form is the one. */
static bool det_left_out(const char *fv, const char *mv) {
    for (size_t d = 0; d < N_OF(DETERMINERS); d++) {
        size_t l = strlen(DETERMINERS[d]);
        if (strncasecmp(fv, DETERMINERS[d], l) == 0 && fv[l] == ' ' &&
            strcasecmp(fv + l + 1, mv) == 0) {
            return true;
        }
    }
    return false;
}

bool agent_frame_restore(const struct pipit_toolset *ts,
                         int32_t tool,
                         const char *segment,
                         struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools ||
        pipit_toolset_is_cloud(ts, (size_t)tool)) {
        return false;
    }
    struct frame f;
    char vals[FRAME_MAX_ARGS][FRAME_MAX_VALUE];
    if (!fitting_frame(ts, tool, segment, true, &f, vals)) {
        return false;
    }
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool changed = false;
    for (size_t i = 0; json_is_object(args) && i < f.n; i++) {
        const char *mv = json_string_value(json_object_get(args, f.a[i].arg));
        if (mv == NULL || vals[i][0] == '\0' || strcasecmp(mv, vals[i]) == 0) {
            continue; /* an argument the model left out stays out */
        }
        size_t lm = strlen(mv), lf = strlen(vals[i]);
        bool inside = has_nocase(vals[i], mv);
        /* a name the device resolved from the word or one letter from it ("Mom" for "mum"), or
         * most of the frame's words; never a scrap of them ("drive" of "... the shared drive",
         * "ferry" of "the ferry building") */
        bool keep =
            f.a[i].kind == FRAME_AFTER_VERB
                ? (strncasecmp(mv, vals[i], lf) == 0 && (mv[lf] == ' ' || mv[lf] == '\0')) ||
                      one_apart(vals[i], mv)
                : inside && 3 * lm >= 2 * lf && !det_left_out(vals[i], mv);
        if (!keep) {
            changed = json_object_set_new(args, f.a[i].arg, json_string(vals[i])) == 0 || changed;
        }
    }
    bool written = agent_said_put_args(call, args, changed);
    json_decref(args);
    return written;
}

bool agent_frame_values(const struct pipit_toolset *ts,
                        int32_t tool,
                        const char *segment,
                        json_t *args) {
    struct frame f;
    char vals[FRAME_MAX_ARGS][FRAME_MAX_VALUE];
    if (ts == NULL || segment == NULL || !json_is_object(args) || tool < 0 ||
        (size_t)tool >= ts->n_tools || !fitting_frame(ts, tool, segment, false, &f, vals)) {
        return false;
    }
    for (size_t i = 0; i < f.n; i++) {
        if (vals[i][0] != '\0') {
            json_object_set_new(args, f.a[i].arg, json_string(vals[i]));
        }
    }
    return true;
}

bool agent_frame_message(const struct pipit_toolset *ts, const char *segment) {
    char verb[WORDS_CAP];
    int32_t tool =
        ts != NULL && segment != NULL ? agent_example_verb(ts, segment, verb, sizeof(verb)) : -1;
    struct frame f;
    char vals[FRAME_MAX_ARGS][FRAME_MAX_VALUE];
    if (tool < 0 || pipit_toolset_is_cloud(ts, (size_t)tool) ||
        !fitting_frame(ts, tool, segment, false, &f, vals)) {
        return false;
    }
    for (size_t i = 0; i < f.n; i++) {
        if (f.a[i].kind == FRAME_REST && !f.a[i].to_colon &&
            (f.a[i].marker[0] == '\0' || f.a[i].marker[0] == ':')) {
            return true;
        }
    }
    return false;
}

bool agent_frame_choose_tool(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools) {
        return false;
    }
    struct pipit_call framed;
    struct frame f;
    char vals[FRAME_MAX_ARGS][FRAME_MAX_VALUE];
    if (!agent_frame_call(ts, segment, &framed)) {
        return false;
    }
    bool other = strcmp(framed.name, pipit_toolset_tool(ts, (size_t)tool)->name) != 0 &&
                 !fitting_frame(ts, tool, segment, false, &f, vals);
    if (other) {
        free(call->args_json);
        *call = framed;
        return true;
    }
    pipit_call_clear(&framed);
    return false;
}

/* Nouns people use for one another for what a device makes ("grab a photo" for "snap a
 * picture"). Generic English. */
#define KIN_MAX 16
static const char *const KIN[][KIN_MAX] = {
    {"photo", "photos", "picture", "pictures", "pic", "pics", "snapshot", "snapshots", "shot",
     "shots", "image", "images", "snap", NULL},
    {"video", "videos", "clip", "clips", "recording", "film", NULL},
    {"song", "songs", "track", "tracks", "tune", "tunes", "music", NULL},
};

/* Whether word `w` is said by `say`: as is, as a noun of its kin (KIN), or, for the example's
 * opening verb, as one of the verbs people use for it ("grab" for "snap": verbbank.h). */
static bool example_has(const char *say, const char *w) {
    if (words_text_has(say, w)) {
        return true;
    }
    for (size_t g = 0; g < N_OF(KIN); g++) {
        bool in = false;
        for (size_t m = 0; KIN[g][m] != NULL && !in; m++) {
            in = strcmp(KIN[g][m], w) == 0;
        }
        for (size_t m = 0; in && KIN[g][m] != NULL; m++) {
            if (words_text_has(say, KIN[g][m])) {
                return true;
            }
        }
    }
    struct words_tok t[8];
    size_t n = words_tokenize(say, strlen(say), 0, t, 8);
    return n > 0 && verbbank_says(t[0].w, w);
}

bool agent_example_words_call(const struct pipit_toolset *ts,
                              const char *segment,
                              struct pipit_call *call) {
    static const char *const GLUE[] = {
        "the",   "this",  "that", "these", "those", "her",    "his",    "him", "them",
        "its",   "for",   "and",  "with",  "from",  "please", "pls",    "can", "you",
        "could", "would", "just", "now",   "some",  "quick",  "little", "bit", "our",
        "your",  "all",   "one",  "two",   "three", "more",   "again",  "too"};
    if (ts == NULL || segment == NULL || call == NULL || strchr(segment, '?') != NULL) {
        return false;
    }
    struct words_tok t[24];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 24), content = 0;
    if (n == 0 || n >= 24 || agent_said_negation(t, n)) {
        return false;
    }
    int32_t best = -1;
    size_t best_hits = 0;
    bool tie = false;
    for (size_t k = 0; k < n; k++) {
        content += strlen(t[k].w) >= 3 && !words_in_list(t[k].w, GLUE, N_OF(GLUE));
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *ti = pipit_toolset_tool(ts, i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        bool required = false;
        for (size_t j = 0; ti->params != NULL && j < ti->params->n_props; j++) {
            required = required || ti->params->props[j].required;
        }
        if (required || pipit_toolset_is_cloud(ts, i) || tp == NULL) {
            continue;
        }
        size_t hits = 0;
        for (size_t k = 0; k < n; k++) {
            if (strlen(t[k].w) < 3 || words_in_list(t[k].w, GLUE, N_OF(GLUE))) {
                continue;
            }
            bool hit = words_name_has(ti->name, t[k].w, strlen(t[k].w)) ||
                       words_text_has(ti->description, t[k].w);
            for (size_t e = 0; !hit && e < tp->n_examples; e++) {
                hit = example_has(tp->examples[e].say, t[k].w);
            }
            hits += hit;
        }
        if (hits > best_hits) {
            best = (int32_t)i;
            best_hits = hits;
            tie = false;
        } else if (hits == best_hits && hits > 0) {
            tie = true;
        }
    }
    if (best < 0 || tie || best_hits < 2 || best_hits * 2 < content) {
        return false;
    }
    memset(call, 0, sizeof(*call));
    return agent_said_replace_call(call, pipit_toolset_tool(ts, (size_t)best), json_object());
}

bool agent_frame_call(const struct pipit_toolset *ts,
                      const char *segment,
                      struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || strchr(segment, '?') != NULL) {
        return false;
    }
    char verb[WORDS_CAP];
    int32_t tool = agent_example_verb(ts, segment, verb, sizeof(verb));
    if (tool < 0 || pipit_toolset_is_cloud(ts, (size_t)tool)) {
        return false;
    }
    json_t *args = json_object();
    if (args == NULL || !agent_frame_values(ts, tool, segment, args)) {
        json_decref(args);
        return false;
    }
    memset(call, 0, sizeof(*call));
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        if (t->params->props[j].required &&
            json_object_get(args, t->params->props[j].name) == NULL) {
            json_decref(args); /* a required argument no frame fills: not this way */
            return false;
        }
    }
    return agent_said_replace_call(call, t, args);
}
