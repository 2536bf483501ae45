/*
 * agent_time.c - a time of day the person said, put into the model's call (docs/agent.md, "A
 * time of day").
 *
 * "set an alarm for 7 pm" had set a 7-minute timer, "alarm for half past six" went to the
 * cloud, "alarm at 7am" shared a photo: a model trained on "wake me at 7:15" copies digits in
 * the HH:MM shape and little else. The harness reads the time the person said (digits, words,
 * am/pm, "in the evening") and puts it, as "HH:MM", into the argument that takes one, or calls
 * the one tool that takes one when the segment names it. Nothing here knows an alarm: the
 * argument is found by its description ("HH:MM") or pattern.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_time.h"

#include "agent_choose.h"
#include "agent_said.h"
#include "status.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The number of token i: digits (at most two) or a number word; -1 otherwise. */
static int token_number(const struct words_tok *t, size_t n, size_t i) {
    if (i >= n) {
        return -1;
    }
    const char *w = t[i].w;
    if (isdigit((unsigned char)w[0])) {
        size_t l = strspn(w, "0123456789");
        return w[l] == '\0' && l <= 2 ? atoi(w) : -1;
    }
    int v = 0;
    return words_number_value(w, &v) ? v : -1;
}

/* Minutes said as words from token i ("thirty", "forty five", "fifteen", "oh five"): the value
 * and the tokens used in *used; -1 when none. */
static int minute_words(const struct words_tok *t, size_t n, size_t i, size_t *used) {
    int a = token_number(t, n, i), b = 0;
    *used = 0;
    if (i < n && strcmp(t[i].w, "oh") == 0 && (b = token_number(t, n, i + 1)) >= 1 && b <= 9) {
        *used = 2;
        return b; /* "seven oh five" */
    }
    if (a < 10 || a > 59 || isdigit((unsigned char)t[i].w[0])) {
        return -1;
    }
    *used = 1;
    if (a >= 20 && a % 10 == 0 && (b = token_number(t, n, i + 1)) >= 1 && b <= 9 &&
        !isdigit((unsigned char)t[i + 1].w[0])) {
        *used = 2;
        return a + b;
    }
    return a;
}

/* Which half of the day the words say: 1 afternoon/evening, -1 morning, 0 neither. */
static int half_of_day(const struct words_tok *t, size_t n) {
    static const char *const PM[] = {"pm", "tonight", "evening", "afternoon", "night"};
    static const char *const AM[] = {"am", "morning"};
    for (size_t i = 0; i + 1 < n; i++) { /* "p.m." and "a.m." are two words */
        if (strcmp(t[i + 1].w, "m") == 0 &&
            (strcmp(t[i].w, "p") == 0 || strcmp(t[i].w, "a") == 0)) {
            return t[i].w[0] == 'p' ? 1 : -1;
        }
    }
    return agent_said_any(t, n, PM, N_OF(PM)) ? 1 : agent_said_any(t, n, AM, N_OF(AM)) ? -1 : 0;
}

/* The times of day in digits: "6:30", "6.45", "7am", "7 pm", "9 o'clock". */
static int digit_times(const char *text, int *out, int max) {
    int k = 0;
    for (const char *p = text; *p != '\0' && k < max; p++) {
        if (!isdigit((unsigned char)*p) ||
            (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == ':' || p[-1] == '.'))) {
            continue;
        }
        const char *q = p;
        int h = 0, digits = 0;
        while (isdigit((unsigned char)*q) && digits < 3) {
            h = h * 10 + (*q - '0');
            q++;
            digits++;
        }
        if (digits == 3 && isdigit((unsigned char)*q) && !isdigit((unsigned char)q[1]) &&
            p[0] == '0' && !isalnum((unsigned char)q[1]) && (p[1] - '0') * 10 + (p[2] - '0') >= 0) {
            int hh = (p[0] - '0') * 10 + (p[1] - '0'), mm = (p[2] - '0') * 10 + (q[0] - '0');
            if (hh <= 23 && mm <= 59) {
                out[k++] = hh * 60 + mm + 10000; /* "0630": a 24-hour clock's */
            }
            p = q;
            continue;
        }
        if (digits > 2 || h > 24) {
            while (isdigit((unsigned char)*q)) {
                q++;
            }
            p = q - 1;
            continue;
        }
        int m = -1;
        if ((*q == ':' || *q == '.') && isdigit((unsigned char)q[1]) &&
            isdigit((unsigned char)q[2]) && !isdigit((unsigned char)q[3])) {
            m = (q[1] - '0') * 10 + (q[2] - '0');
            q += 3;
            if (m > 59) {
                p = q - 1;
                continue;
            }
        }
        const char *r = q;
        while (*r == ' ') {
            r++;
        }
        bool ampm = (strncasecmp(r, "am", 2) == 0 || strncasecmp(r, "pm", 2) == 0 ||
                     strncasecmp(r, "a.m", 3) == 0 || strncasecmp(r, "p.m", 3) == 0) &&
                    !isalpha((unsigned char)r[r[1] == '.' ? 3 : 2]);
        bool oclock = strncasecmp(r, "o'clock", 7) == 0 || strncasecmp(r, "oclock", 6) == 0;
        if (m >= 0 || ampm || oclock) {
            if (ampm && (h < 1 || h > 12)) {
                p = q - 1;
                continue;
            }
            int hour = h;
            if (ampm) {
                bool pm = tolower((unsigned char)r[0]) == 'p';
                hour = h % 12 + (pm ? 12 : 0);
            }
            out[k++] = (hour % 24) * 60 + (m >= 0 ? m : 0) + (ampm ? 10000 : 0);
        }
        p = q - 1;
    }
    return k;
}

int agent_time_of_day(const char *text) {
    if (text == NULL) {
        return -1;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(text, strlen(text), 0, t, GUARD_MAX_TOKENS);
    int found[4];
    int k = digit_times(text, found, 4);
    bool fixed = k == 1 && found[0] >= 10000; /* am/pm said with the digits */
    if (k == 1 && fixed) {
        found[0] -= 10000;
    }
    for (size_t i = 0; i < n && k <= 1; i++) {
        int h = -1, m = 0;
        size_t used = 0;
        if (strcmp(t[i].w, "noon") == 0 || strcmp(t[i].w, "midday") == 0) {
            found[k++] = 12 * 60;
            fixed = true;
            continue;
        }
        if (strcmp(t[i].w, "midnight") == 0) {
            found[k++] = 0;
            fixed = true;
            continue;
        }
        /* "half past six", "quarter to eight", "ten past nine", "20 to 7" */
        bool half = strcmp(t[i].w, "half") == 0, quarter = strcmp(t[i].w, "quarter") == 0;
        int mins = half ? 30 : quarter ? 15 : token_number(t, n, i);
        size_t j = i + 1;
        if (j < n && (strcmp(t[j].w, "minutes") == 0 || strcmp(t[j].w, "mins") == 0)) {
            j++;
        }
        if (mins >= 1 && mins <= 30 && j + 1 < n &&
            (strcmp(t[j].w, "past") == 0 || strcmp(t[j].w, "after") == 0 ||
             strcmp(t[j].w, "to") == 0 || strcmp(t[j].w, "before") == 0) &&
            (h = token_number(t, n, j + 1)) >= 1 && h <= 12) {
            bool to = t[j].w[0] == 't' || t[j].w[0] == 'b';
            int at = h * 60 + (to ? -mins : mins);
            found[k++] = (at + 24 * 60) % (24 * 60);
            i = j + 1;
            continue;
        }
        /* "half six": half past six, as said in Britain (not "half an hour", "half 6 minutes") */
        if (half && i > 0 &&
            (strcmp(t[i - 1].w, "at") == 0 || strcmp(t[i - 1].w, "for") == 0 ||
             strcmp(t[i - 1].w, "by") == 0) &&
            (h = token_number(t, n, i + 1)) >= 1 && h <= 12 &&
            !(i + 2 < n && (strcmp(t[i + 2].w, "minutes") == 0 ||
                            strcmp(t[i + 2].w, "hours") == 0 || strcmp(t[i + 2].w, "mins") == 0))) {
            found[k++] = h * 60 + 30;
            i++;
            continue;
        }
        /* "seven thirty", "six forty five", "nine o'clock", "at 7", "at seven" */
        h = token_number(t, n, i);
        bool word = i < n && !isdigit((unsigned char)t[i].w[0]);
        bool after_at = i > 0 && (strcmp(t[i - 1].w, "at") == 0 ||
                                  (strcmp(t[i - 1].w, "for") == 0 && half_of_day(t, n) != 0));
        if (h < 1 || h > 12 || (!word && !after_at)) {
            continue;
        }
        bool digits_here = !word; /* "at 7": digit_times() saw no shape of a time in it */
        if (word && i + 1 < n && (m = minute_words(t, n, i + 1, &used)) >= 0) {
            found[k++] = h * 60 + m;
            i += used;
        } else if (word && i + 1 < n && strcmp(t[i + 1].w, "oclock") == 0) {
            found[k++] = h * 60;
            i++;
        } else if (i > 0 &&
                   (strcmp(t[i - 1].w, "at") == 0 ||
                    (strcmp(t[i - 1].w, "for") == 0 && half_of_day(t, n) != 0)) &&
                   (i + 1 >= n || token_number(t, n, i + 1) < 0) &&
                   !(digits_here && i + 1 < n &&
                     (strcmp(t[i + 1].w, "am") == 0 || strcmp(t[i + 1].w, "pm") == 0 ||
                      strcmp(t[i + 1].w, "a") == 0 || strcmp(t[i + 1].w, "p") == 0 ||
                      strcmp(t[i + 1].w, "oclock") == 0))) {
            found[k++] = h * 60; /* "at 7", "at seven": an hour */
        }
    }
    if (k != 1) {
        return -1;
    }
    int at = found[0];
    int half = half_of_day(t, n);
    if (!fixed && half > 0 && at < 12 * 60) {
        at += 12 * 60; /* "half past six in the evening" */
    } else if (!fixed && half < 0 && at >= 12 * 60 && at < 13 * 60) {
        at -= 12 * 60; /* "twelve thirty in the morning" */
    }
    return at;
}

bool agent_time_arg(const struct pipit_schema *s) {
    return pipit_schema_time_of_day(s);
}

/* The argument of `t` that takes a time of day, or NULL; *only_required: it is the only
 * required argument. */
static const struct pipit_schema_prop *time_prop(const struct pipit_tool *t, bool *only_required) {
    const struct pipit_schema_prop *found = NULL;
    size_t n_required = 0;
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        n_required += p->required ? 1 : 0;
        if (agent_time_arg(p->schema)) {
            found = found == NULL ? p : found;
        }
    }
    *only_required = found != NULL && found->required && n_required == 1;
    return found;
}

/* The one "H:MM" or "HH:MM" the segment writes that is no time of day ("99:99"): kept as
 * written, so that validation refuses what the person said, not a value the model bent it
 * into ("99:95"). False when it writes none or two. */
static bool clock_shape(const char *text, char *out, size_t size) {
    size_t found = 0;
    for (const char *p = text; *p != '\0'; p++) {
        size_t d = strspn(p, "0123456789");
        if ((p > text && isalnum((unsigned char)p[-1])) || d < 1 || d > 2 || p[d] != ':' ||
            strspn(p + d + 1, "0123456789") != 2 || isalnum((unsigned char)p[d + 3])) {
            p += d > 0 ? d - 1 : 0;
            continue;
        }
        if (found++ == 0) {
            pipit_format(out, size, "%.*s", (int)(d + 3), p);
        }
        p += d + 2;
    }
    return found == 1;
}

/* `call` becomes the one tool whose only required argument is a time of day, with `hhmm`,
 * when the segment names that tool. */
static bool call_time_tool(const struct pipit_toolset *ts,
                           const char *segment,
                           const char *hhmm,
                           struct pipit_call *call) {
    int32_t found = -1;
    bool only = false;
    for (size_t i = 0; i < ts->n_tools; i++) {
        if (time_prop(pipit_toolset_tool(ts, i), &only) != NULL && only) {
            if (found >= 0) {
                return false;
            }
            found = (int32_t)i;
        }
    }
    if (found < 0 || !agent_names_tool(ts, (size_t)found, segment)) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)found);
    const struct pipit_schema_prop *p = time_prop(t, &only);
    json_t *args = json_object();
    json_object_set_new(args, p->name, json_string(hhmm));
    /* an optional choice the segment says goes with it ("schedule a cappuccino at 6:30") */
    struct words_tok tok[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, 48);
    for (size_t j = 0; n < 48 && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema *s = t->params->props[j].schema;
        const char *said = NULL;
        size_t n_said = 0;
        for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
            char ph[WORDS_CAP * 2];
            size_t l = strlen(s->enum_str[e]);
            if (l == 0 || l >= sizeof(ph)) {
                continue;
            }
            for (size_t c = 0; c <= l; c++) {
                char ch = s->enum_str[e][c];
                ph[c] = ch == '_' || ch == '-' ? ' ' : (char)tolower((unsigned char)ch);
            }
            if (agent_said_phrase(tok, n, ph)) {
                said = s->enum_str[e];
                n_said++;
            }
        }
        if (n_said == 1) {
            json_object_set_new(args, t->params->props[j].name, json_string(said));
        }
    }
    return agent_said_replace_call(call, t, args);
}

bool agent_restore_time_of_day(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call,
                               bool *renamed) {
    *renamed = false;
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools) {
        return false;
    }
    int at = agent_time_of_day(segment);
    char hhmm[8];
    if (at < 0 && !clock_shape(segment, hhmm, sizeof(hhmm))) {
        return false;
    }
    if (at >= 0) {
        pipit_format(hhmm, sizeof(hhmm), "%02d:%02d", at / 60, at % 60);
    }
    bool only = false;
    const struct pipit_schema_prop *p = time_prop(pipit_toolset_tool(ts, (size_t)tool), &only);
    if (p != NULL) {
        json_t *args = json_loads(call->args_json, 0, NULL);
        const char *had = json_string_value(json_object_get(args, p->name));
        bool changed = json_is_object(args) && (had == NULL || strcmp(had, hhmm) != 0) &&
                       json_object_set_new(args, p->name, json_string(hhmm)) == 0 &&
                       agent_said_put_args(call, args, true);
        json_decref(args);
        return changed;
    }
    *renamed = call_time_tool(ts, segment, hhmm, call);
    return *renamed;
}

bool agent_time_call(const struct pipit_toolset *ts, const char *segment, struct pipit_call *call) {
    int at = ts != NULL && segment != NULL && call != NULL ? agent_time_of_day(segment) : -1;
    if (at < 0) {
        return false;
    }
    char hhmm[8];
    pipit_format(hhmm, sizeof(hhmm), "%02d:%02d", at / 60, at % 60);
    memset(call, 0, sizeof(*call));
    return call_time_tool(ts, segment, hhmm, call);
}

bool agent_time_guessed(const struct pipit_toolset *ts,
                        int32_t tool,
                        const char *segment,
                        const struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL) {
        return false;
    }
    bool only = false;
    const struct pipit_schema_prop *p = time_prop(pipit_toolset_tool(ts, (size_t)tool), &only);
    char hhmm[8];
    if (p == NULL || !p->required || agent_time_of_day(segment) >= 0 ||
        clock_shape(segment, hhmm, sizeof(hhmm)) || strpbrk(segment, "0123456789") != NULL ||
        agent_names_tool(ts, (size_t)tool, segment)) {
        return false;
    }
    struct words_tok tok[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, 48);
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        if (words_number_value(tok[i].w, &v) || strcmp(tok[i].w, "noon") == 0 ||
            strcmp(tok[i].w, "midnight") == 0) {
            return false; /* a number said in words: the model's to read */
        }
    }
    return n < 48;
}
