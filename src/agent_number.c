/*
 * agent_number.c - the person's numbers in the model's call (agent_number.h; docs/agent.md,
 * "Calls the model made"): a number the person wrote or said is the value, in the argument's
 * unit, with the direction the words give it, and the ends of a range said in words. The
 * harness owns the limits: a number the schema refuses is refused with the limit, never bent.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_number.h"

#include "agent_said.h"
#include "status.h"
#include "toolspec.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ============================================================================
 * the person's numbers: the harness owns the limits
 *
 * The grammar lets any number of the right type through, so an out-of-range request is
 * refused by validation with the limit. A small model trained on in-range values can still
 * bend the number itself ("zoom 50x" -> level=5, then "The zoom is 5x."). The guard: when a
 * tool has exactly one numeric argument, the model's value is not a number the person wrote
 * in the segment, and exactly one number the person wrote is one the argument does not allow,
 * that number is the one meant: it replaces the model's value and validation refuses it with
 * the tool's limit. A number said with a unit of time counts in the argument's unit when the
 * argument has one ("2 minutes" for an argument in seconds is 120). Numbers in words,
 * percentages and times of day are left alone; so is a value the person wrote. */

/* Units of time, for a number said with one ("5 hours") and an argument that has one. */
struct time_unit {
    const char *word;
    double seconds;
};
static const struct time_unit UNITS[] = {
    {"seconds", 1},  {"second", 1},  {"secs", 1},       {"sec", 1},
    {"minutes", 60}, {"minute", 60}, {"mins", 60},      {"min", 60},
    {"hours", 3600}, {"hour", 3600}, {"hrs", 3600},     {"hr", 3600},
    {"days", 86400}, {"day", 86400}, {"weeks", 604800}, {"week", 604800},
};

/* The unit of time a word starts with as a whole word (0: none); *len gets its length. */
static double unit_at(const char *p, size_t *len) {
    for (size_t u = 0; u < sizeof(UNITS) / sizeof(UNITS[0]); u++) {
        size_t l = strlen(UNITS[u].word);
        if (strncasecmp(p, UNITS[u].word, l) == 0 && !isalpha((unsigned char)p[l])) {
            *len = l;
            return UNITS[u].seconds;
        }
    }
    return 0;
}

/* The unit of time a text names as a whole word anywhere ("Minutes until it rings"). */
static double unit_in(const char *text) {
    for (const char *p = text; p != NULL && *p != '\0'; p++) {
        size_t l = 0;
        double u = (p == text || !isalpha((unsigned char)p[-1])) ? unit_at(p, &l) : 0;
        if (u > 0) {
            return u;
        }
    }
    return 0;
}

/* Numbers written in digits in `text` (an optional sign right before them counts; "50x" and
 * "50%" are 50; "16:9" and "3.5.1" are skipped), in `arg_unit` when one is said after them ("2
 * minutes" for seconds: 120) into out, as written into raw. Returns how many were stored. */
static size_t
person_numbers(const char *text, double arg_unit, double *out, double *raw, size_t max) {
    size_t n = 0;
    bool is_hour[GUARD_MAX_NUMBERS];
    max = max < GUARD_MAX_NUMBERS ? max : GUARD_MAX_NUMBERS;
    const char *p = text;
    while (*p != '\0' && n < max) {
        if (!(*p >= '0' && *p <= '9') ||
            (p > text && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.' || p[-1] == ':'))) {
            p++;
            continue;
        }
        const char *start = p;
        bool neg = p > text && p[-1] == '-' && (p - 1 == text || p[-2] == ' ');
        double v = 0;
        while (*p >= '0' && *p <= '9' && v < 1e12) {
            v = v * 10 + (*p - '0');
            p++;
        }
        if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
            double scale = 0.1;
            p++;
            while (*p >= '0' && *p <= '9') {
                v += (*p - '0') * scale;
                scale /= 10;
                p++;
            }
        }
        if (*p == ':' || (*p == '.' && p[1] >= '0' && p[1] <= '9') || (*p >= '0' && *p <= '9') ||
            p == start) {
            continue;
        }
        const char *q = p;
        while (*q == ' ' || *q == '-') {
            q++;
        }
        size_t l = 0;
        double said_unit = arg_unit > 0 ? unit_at(q, &l) : 0;
        /* "3am", "11 p.m.": an hour of the day */
        bool hour = (tolower((unsigned char)q[0]) == 'a' || tolower((unsigned char)q[0]) == 'p') &&
                    (tolower((unsigned char)q[1]) == 'm' ||
                     (q[1] == '.' && tolower((unsigned char)q[2]) == 'm')) &&
                    !isalpha((unsigned char)q[q[1] == '.' ? 3 : 2]);
        raw[n] = neg ? -v : v;
        out[n] = (neg ? -v : v) * (said_unit > 0 ? said_unit / arg_unit : 1);
        is_hour[n++] = hour;
    }
    /* an hour of the day beside another number is no value for it: "drop the light to 5
     * percent, it's way too bright for 3am" had set 3% */
    size_t kept = 0;
    bool other = false;
    for (size_t i = 0; i < n; i++) {
        other = other || !is_hour[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (!other || !is_hour[i]) {
            raw[kept] = raw[i];
            out[kept++] = out[i];
        }
    }
    return kept;
}

/* The one number in digits said with a unit of time ("for 35 minutes"), in `arg_unit`; false
 * when the argument has no unit of time or the text says none or two. */
static bool one_timed_number(const char *text, double arg_unit, double *out) {
    size_t found = 0;
    for (const char *p = text; arg_unit > 0 && *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p) ||
            (p > text && (isdigit((unsigned char)p[-1]) || p[-1] == '.' || p[-1] == ':'))) {
            continue;
        }
        char *end = NULL;
        double v = strtod(p, &end);
        const char *q = end;
        while (*q == ' ' || *q == '-') {
            q++;
        }
        size_t l = 0;
        double unit = unit_at(q, &l);
        if (unit > 0) {
            *out = v * unit / arg_unit;
            found++;
        }
        p = end - 1;
    }
    return found == 1;
}

static bool schema_allows(const struct pipit_schema *s, double v) {
    if (s->n_enum > 0) {
        for (size_t i = 0; i < s->n_enum; i++) {
            if (fabs(s->enum_num[i] - v) < 1e-9) {
                return true;
            }
        }
        return false;
    }
    if (s->type == PIPIT_SCHEMA_INTEGER && fabs(v - floor(v)) > 1e-9) {
        return false;
    }
    return (!s->has_min || v >= s->min - 1e-9) && (!s->has_max || v <= s->max + 1e-9);
}

/* The tool's one numeric argument; NULL when it has none or several (which is which is then
 * the model's call). */
static const struct pipit_schema_prop *only_number(const struct pipit_tool *t) {
    const struct pipit_schema_prop *num = NULL;
    for (size_t i = 0; i < t->params->n_props; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        if (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) {
            if (num != NULL) {
                return NULL;
            }
            num = &t->params->props[i];
        }
    }
    return num;
}

/* The argument's unit of time in seconds, from its name or description; 0: none. */
static double arg_time_unit(const struct pipit_schema_prop *num) {
    double u = unit_in(num->name);
    return u == 0 && num->schema->description != NULL ? unit_in(num->schema->description) : u;
}

static size_t word_numbers(const char *text, double arg_unit, double *out, size_t max, bool *half);

size_t agent_person_numbers(const char *segment,
                            const struct pipit_schema_prop *arg,
                            double *out,
                            size_t max) {
    double raw[GUARD_MAX_NUMBERS];
    if (segment == NULL || arg == NULL) {
        return 0;
    }
    size_t cap = max < GUARD_MAX_NUMBERS ? max : GUARD_MAX_NUMBERS;
    if (strpbrk(segment, "0123456789") != NULL) {
        return person_numbers(segment, arg_time_unit(arg), out, raw, cap);
    }
    bool half = false;
    size_t n = word_numbers(segment, arg_time_unit(arg), out, cap, &half);
    return half ? 0 : n;
}

/* Set `name` to `v` in `args` and write them back into `call`; true when done. */
static bool set_number(struct pipit_call *call, json_t *args, const char *name, double v) {
    json_t *nv = agent_said_number(v);
    return nv != NULL && json_object_set_new(args, name, nv) == 0 &&
           agent_said_put_args(call, args, true);
}

static bool says_only_number(const struct pipit_toolset *ts,
                             int32_t tool,
                             const struct pipit_schema_prop *num,
                             const char *segment);
static int said_direction(const struct words_tok *tok, size_t n);
static bool number_word(const char *w, int *v);
static bool
is_step_arg(const struct pipit_toolset *ts, int32_t tool, const struct pipit_schema_prop *num);

/* The sign an unsigned number of `num` takes: a step's from the words' direction ("one more
 * degree" up, "cooler by 2" down), else the model's. */
static double signed_number(const struct pipit_toolset *ts,
                            int32_t tool,
                            const struct pipit_schema_prop *num,
                            const char *segment,
                            double said,
                            double model) {
    int dir = 0;
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    /* not a step whose direction is an argument of its own ("direction": "down", "amount") */
    if (is_step_arg(ts, tool, num) && tp->step.sign.arg == NULL) {
        struct words_tok tok[GUARD_MAX_TOKENS];
        size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
        dir = said_direction(tok, n);
    }
    /* a minus the model wrote where the range has no negatives is no sign the person gave
     * ("a bit more, 40" -> open_percent=-40) */
    bool negatives = !(num->schema->has_min && num->schema->min >= 0);
    return dir != 0 ? dir * fabs(said) : model < 0 && negatives ? -said : said;
}

/* Whether `model` is the digits of `said` written two or more times over (8 -> 88, 15 -> 1515):
 * a tiny model's stutter, never a sum or a product the words could ask for. */
static bool digits_repeated(double model, double said) {
    if (said < 0 || said >= 1e6 || model <= said || said != floor(said) || model != floor(model) ||
        model >= 1e15) {
        return false;
    }
    char s[32], m[32];
    snprintf(s, sizeof(s), "%.0f", said);
    snprintf(m, sizeof(m), "%.0f", model);
    size_t ls = strlen(s), lm = strlen(m);
    if (lm % ls != 0) {
        return false;
    }
    for (size_t i = 0; i < lm; i++) {
        if (m[i] != s[i % ls]) {
            return false;
        }
    }
    return true;
}

bool agent_number_in_last_place(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                int32_t last_tool,
                                const json_t *last_args,
                                struct pipit_call *call) {
    static const char *const GLUE[] = {"and", "at", "to",   "please", "then", "make", "it",
                                       "set", "by", "like", "about",  "now",  "with", "on"};
    if (ts == NULL || segment == NULL || call == NULL || last_tool < 0 ||
        (size_t)last_tool >= ts->n_tools || !json_is_object(last_args)) {
        return false;
    }
    struct words_tok t[8];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 8);
    double said[2], raw[2];
    bool half = false;
    size_t n_digits = agent_numbers_written(segment, 0, said, raw, 2);
    if (n == 0 || n > 5 || n_digits > 1 ||
        (n_digits == 0 && (word_numbers(segment, 0, said, 2, &half) != 1 || half))) {
        return false; /* one number, in digits or words ("sixty percent") */
    }
    const char *unit = NULL;
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        bool number = isdigit((unsigned char)t[i].w[0]) || words_number_value(t[i].w, &v);
        if (number || words_in_list(t[i].w, GLUE, sizeof(GLUE) / sizeof(GLUE[0]))) {
            continue;
        }
        if (unit != NULL || i == 0) {
            return false; /* a word of its own: the model's */
        }
        unit = t[i].w;
    }
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *ti = pipit_toolset_tool(ts, i);
        const struct pipit_schema_prop *num = NULL;
        size_t places = 0;
        bool fits = !pipit_toolset_is_cloud(ts, i) && ti->params != NULL;
        for (size_t j = 0; fits && j < ti->params->n_props; j++) {
            const struct pipit_schema_prop *p = &ti->params->props[j];
            enum pipit_schema_type ty = p->schema->type;
            const char *had = json_string_value(json_object_get(last_args, p->name));
            bool in_enum = false;
            for (size_t e = 0; had != NULL && e < p->schema->n_enum; e++) {
                in_enum = in_enum || strcmp(p->schema->enum_str[e], had) == 0;
            }
            if ((ty == PIPIT_SCHEMA_NUMBER || ty == PIPIT_SCHEMA_INTEGER) && p->required) {
                fits = num == NULL;
                num = p;
            } else if (in_enum) {
                places++;
            } else if (p->required) {
                fits = false;
            }
        }
        if (!fits || num == NULL || places == 0 ||
            (unit != NULL && !words_text_has(num->name, unit) &&
             (num->schema->description == NULL ||
              !words_text_has(num->schema->description, unit)))) {
            continue;
        }
        if (found >= 0) {
            return false; /* two tools fit */
        }
        found = (int32_t)i;
    }
    if (found < 0) {
        return false;
    }
    const struct pipit_tool *ft = pipit_toolset_tool(ts, (size_t)found);
    json_t *args = json_object();
    for (size_t j = 0; args != NULL && j < ft->params->n_props; j++) {
        const struct pipit_schema_prop *p = &ft->params->props[j];
        enum pipit_schema_type ty = p->schema->type;
        const json_t *had = json_object_get(last_args, p->name);
        if (ty == PIPIT_SCHEMA_NUMBER || ty == PIPIT_SCHEMA_INTEGER) {
            json_object_set_new(args, p->name, agent_said_number(said[0]));
        } else if (json_is_string(had) && p->schema->n_enum > 0) {
            json_object_set(args, p->name, (json_t *)had);
        }
    }
    if (found == tool) {
        bool same = args != NULL && call->args_json != NULL;
        json_t *mine = same ? json_loads(call->args_json, 0, NULL) : NULL;
        same = mine != NULL && json_equal(mine, args);
        json_decref(mine);
        if (same) {
            json_decref(args);
            return false;
        }
    }
    return args != NULL && agent_said_replace_call(call, ft, args);
}

/* Puts the person's out-of-range number back into `call` when the model bent it (above), and
 * the one number the person wrote when the model wrote another. Returns true when the
 * arguments were changed. */
bool agent_restore_person_number(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_schema_prop *num = only_number(pipit_toolset_tool(ts, (size_t)tool));
    if (num == NULL) {
        return false;
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *v = json_object_get(args, num->name);
    if (!json_is_number(v)) {
        json_decref(args);
        return false;
    }
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    size_t n_said = person_numbers(segment, arg_time_unit(num), said, raw, GUARD_MAX_NUMBERS);
    double model = json_number_value(v);
    double timed = 0;
    if (n_said >= 2 && one_timed_number(segment, arg_time_unit(num), &timed) &&
        fabs(timed - model) > 1e-9) {
        /* "bake at 180 for 35 minutes" -> minutes=180: of two numbers, the one said with a
         * unit of time is the time */
        bool changed = set_number(call, args, num->name, timed);
        json_decref(args);
        return changed;
    }
    size_t n_refused = 0;
    double refused = 0;
    for (size_t i = 0; i < n_said; i++) {
        /* "heat down 15 degrees" -> degrees=-15: the person's number with the direction their
         * words gave it; a number written without a sign takes the model's */
        double sv = raw[i] >= 0 ? signed_number(ts, tool, num, segment, said[i], model) : said[i];
        if (fabs(sv - model) < 1e-9) {
            json_decref(args);
            return false; /* the model kept a number the person wrote */
        }
        if (!schema_allows(num->schema, sv)) {
            n_refused++;
            refused = sv;
        }
    }
    bool changed = n_refused == 1 && set_number(call, args, num->name, refused);

    bool unsigned_range = num->schema->has_min && num->schema->min >= 0;
    for (size_t i = 0; !changed && unsigned_range && model < 0 && i < n_said; i++) {
        /* "a bit more, 40" -> open_percent=-40: a minus where the range has none is the
         * model's, whatever words of change are around the number */
        changed = raw[i] >= 0 && fabs(said[i] + model) < 1e-9 &&
                  set_number(call, args, num->name, said[i]);
    }
    if (!changed && n_said == 1 && n_refused == 0 && says_only_number(ts, tool, num, segment)) {
        /* "set a timer for 8 minutes" -> minutes=888: the one number the person wrote is the
         * value, unless words of a relative change make the model's sum the value */
        changed = set_number(call, args, num->name,
                             raw[0] >= 0 ? signed_number(ts, tool, num, segment, said[0], model)
                                         : said[0]);
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    bool writes_no_key = tp == NULL || tp->n_changes == 0;
    if (!changed && n_said == 1 && n_refused == 0 && writes_no_key &&
        digits_repeated(fabs(model), fabs(said[0]))) {
        /* "and another one for 8 minutes" -> minutes=88: words of change ("another") let the
         * model's number stand as a sum, but a tool that writes no declared key has nothing to
         * add to, and the person's digits written twice are a stutter (a setter's 88 from 80
         * "and 8 more" is left alone) */
        changed = set_number(call, args, num->name, model < 0 ? -fabs(said[0]) : fabs(said[0]));
    }
    json_decref(args);
    return changed;
}

/* ============================================================================
 * the person's unit: a number copied without its conversion
 *
 * "timer for 5 hours" with an argument in minutes came back as minutes=5: a timer of five
 * minutes, said as done. When a tool has exactly one numeric argument whose name or
 * description is in a unit of time, the segment holds exactly one number in digits followed by
 * another unit of time, and the model's value is that bare number, the value becomes the
 * number in the argument's unit (300), so that the tool runs what was asked or validation
 * refuses it with the limit. A model that converted already is left alone. */

/* Whether `word` occurs in `text`, case aside, not inside a longer word ("temp_celsius"). */
static bool contains_word_nocase(const char *text, const char *word) {
    size_t l = strlen(word);
    for (const char *p = text; *p != '\0'; p++) {
        if (strncasecmp(p, word, l) == 0 && (p == text || !isalpha((unsigned char)p[-1])) &&
            !isalpha((unsigned char)p[l])) {
            return true;
        }
    }
    return false;
}

/* Which temperature scale a text names: 'C' (celsius, centigrade), 'F' (fahrenheit), 0. */
static char scale_in(const char *text) {
    if (text == NULL) {
        return 0;
    }
    bool c = contains_word_nocase(text, "celsius") || contains_word_nocase(text, "centigrade"),
         f = contains_word_nocase(text, "fahrenheit");
    return c == f ? 0 : c ? 'C' : 'F';
}

/* "set the oven to 350 fahrenheit" with an argument in celsius: the one number in digits in the
 * segment, said with the other scale ("fahrenheit", "F", "°F"; "celsius", "C", "°C"), is
 * converted to the argument's (rounded for an integer) when the model copied it as it was. */
static bool convert_temperature(const struct pipit_schema_prop *num,
                                const char *segment,
                                struct pipit_call *call) {
    char arg = scale_in(num->name);
    arg = arg != 0 ? arg : scale_in(num->schema->description);
    double said[2], raw[2];
    if (arg == 0 || person_numbers(segment, 0, said, raw, 2) != 1) {
        return false;
    }
    const char *at = NULL; /* right after the one number */
    for (const char *p = segment; *p != '\0'; p++) {
        if (isdigit((unsigned char)*p)) {
            at = p;
        }
    }
    while (at != NULL && (isdigit((unsigned char)*at) || *at == '.')) {
        at++;
    }
    while (at != NULL && (*at == ' ' || strncmp(at, "\xc2\xb0", 2) == 0)) {
        at += *at == ' ' ? 1 : 2; /* "350 °F" */
    }
    if (at != NULL && strncasecmp(at, "degrees ", 8) == 0) {
        at += 8;
    }
    char said_scale = 0;
    if (at != NULL &&
        (toupper((unsigned char)at[0]) == 'F' || toupper((unsigned char)at[0]) == 'C') &&
        !isalpha((unsigned char)at[1])) {
        said_scale = (char)toupper((unsigned char)at[0]);
    } else if (at != NULL) {
        said_scale = strncasecmp(at, "fahrenheit", 10) == 0 ? 'F'
                     : strncasecmp(at, "celsius", 7) == 0 || strncasecmp(at, "centigrade", 10) == 0
                         ? 'C'
                         : 0;
    }
    if (said_scale == 0 || said_scale == arg) {
        return false;
    }
    double v = said_scale == 'F' ? (raw[0] - 32) * 5 / 9 : raw[0] * 9 / 5 + 32;
    v = num->schema->type == PIPIT_SCHEMA_INTEGER ? floor(v + 0.5) : floor(v * 10 + 0.5) / 10;
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *x = json_object_get(args, num->name);
    bool changed = json_is_number(x) && fabs(json_number_value(x) - raw[0]) < 1e-9 &&
                   set_number(call, args, num->name, v);
    json_decref(args);
    return changed;
}

bool agent_convert_person_unit(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_schema_prop *num = only_number(pipit_toolset_tool(ts, (size_t)tool));
    double arg_unit = num != NULL ? arg_time_unit(num) : 0;
    if (num != NULL && arg_unit == 0) {
        return convert_temperature(num, segment, call);
    }
    if (arg_unit == 0) {
        return false;
    }
    /* exactly one number in digits in the segment, said with another unit of time */
    double said[2], raw[2];
    if (person_numbers(segment, arg_unit, said, raw, 2) != 1 || fabs(said[0] - raw[0]) < 1e-9) {
        return false;
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *v = json_object_get(args, num->name);
    bool changed = json_is_number(v) && fabs(json_number_value(v) - raw[0]) < 1e-9 &&
                   set_number(call, args, num->name, said[0]);
    json_decref(args);
    return changed;
}

/* ============================================================================
 * the person's number in words
 *
 * "remind me in twenty five minutes" -> minutes=205, "lights to fifty percent" -> 40: a model
 * trained on digits copies the pieces of a number said in words, or guesses near it. When the
 * tool has one numeric argument, the segment has no digit and says exactly one number in words
 * (a tens word and a ones word are one number, "two hundred" is 200; a lone "one" is no number
 * but a pronoun, "take one", unless a unit of time follows it; "half" anywhere makes it no
 * number said plainly), converted to the argument's unit of time as digits are, and the
 * model's value is another, the person's number replaces it, with the model's sign when the
 * person said none ("heat down five" -> -5). Words of a relative change ("more", "up", "by",
 * "longer", "warmer", ...) leave it to the model unless the number is a step's own argument
 * ("turn the heat down five": by how much). Validation then refuses what is out of range. */

static const char *const RELATIVE_WORDS[] = {
    "more",   "less",    "up",       "down",     "higher",   "lower",   "longer",  "shorter",
    "extra",  "another", "by",       "increase", "decrease", "raise",   "reduce",  "bump",
    "add",    "plus",    "minus",    "further",  "bigger",   "smaller", "warmer",  "cooler",
    "colder", "hotter",  "brighter", "dimmer",   "louder",   "quieter", "softer",  "times",
    "double", "triple",  "twice",    "faster",   "slower",   "quicker", "steeper", "flatter",
};
static const size_t N_RELATIVE_WORDS = sizeof(RELATIVE_WORDS) / sizeof(RELATIVE_WORDS[0]);

static const char *const DOWN_WORDS[] = {"down",   "lower",   "less",    "cooler",   "colder",
                                         "dimmer", "darker",  "quieter", "softer",   "decrease",
                                         "reduce", "minus",   "drop",    "smaller",  "shorter",
                                         "slower", "flatter", "weaker",  "shallower"};
static const char *const UP_WORDS[] = {"up",     "more",    "higher",   "raise",   "increase",
                                       "warmer", "hotter",  "brighter", "louder",  "bigger",
                                       "longer", "plus",    "extra",    "add",     "further",
                                       "faster", "quicker", "steeper",  "stronger"};
/* Phrases that say down with an up word in them ("ease up by 2": slower). */
static const char *const DOWN_PHRASES[] = {"ease up", "ease off",  "let up",   "back off",
                                           "ease it", "slow down", "calm down"};

/* The direction the words give a step: +1 up, -1 down, 0 when they say neither or both. */
static int said_direction(const struct words_tok *tok, size_t n) {
    for (size_t k = 0; k < N_OF(DOWN_PHRASES); k++) {
        if (agent_said_phrase(tok, n, DOWN_PHRASES[k])) {
            return -1;
        }
    }
    bool up = agent_said_any(tok, n, UP_WORDS, N_OF(UP_WORDS)),
         down = agent_said_any(tok, n, DOWN_WORDS, N_OF(DOWN_WORDS));
    return up == down ? 0 : up ? 1 : -1;
}

/* Whether `num` is the number a step effect of `tool` moves its key by. */
static bool
is_step_arg(const struct pipit_toolset *ts, int32_t tool, const struct pipit_schema_prop *num) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    return tp != NULL && tp->has_step && tp->step.by.arg != NULL &&
           strcmp(tp->step.by.arg, num->name) == 0;
}

/* Whether the segment's one number is the value of `num` as it stands: no words of a relative
 * change ("longer", "by", "more") unless `num` is a step's own number, and no "half". */
static bool says_only_number(const struct pipit_toolset *ts,
                             int32_t tool,
                             const struct pipit_schema_prop *num,
                             const char *segment) {
    bool step = is_step_arg(ts, tool, num);
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    static const char *const HALF[] = {"half", "quarter", "third"};
    /* a number led as the value to reach is one whatever else moves ("no, lower, like 600", "up
     * to a hundred and three") */
    static const char *const TARGET[] = {"like", "to", "around", "about", "maybe", "say"};
    bool target = false;
    for (size_t i = 1; i < n && !target; i++) {
        int v = 0;
        bool hundred = i + 1 < n && strcmp(tok[i + 1].w, "hundred") == 0;
        bool number = isdigit((unsigned char)tok[i].w[0]) ||
                      (number_word(tok[i].w, &v) && (strcmp(tok[i].w, "one") != 0 || hundred)) ||
                      (strcmp(tok[i].w, "a") == 0 && hundred);
        target = number && words_in_list(tok[i - 1].w, TARGET, N_OF(TARGET));
    }
    /* "and" beside a number is a half ("one and a half") or a second number ("3 and 5"), not
     * the hundreds' "and" ("a hundred and three") */
    bool and_other = false;
    for (size_t i = 0; i < n && !and_other; i++) {
        and_other =
            strcmp(tok[i].w, "and") == 0 && !(i > 0 && strcmp(tok[i - 1].w, "hundred") == 0);
    }
    return (step || target || !agent_said_any(tok, n, RELATIVE_WORDS, N_RELATIVE_WORDS)) &&
           !and_other && !agent_said_any(tok, n, HALF, sizeof(HALF) / sizeof(HALF[0]));
}

/* The numbers said in words in `text`, as person_numbers() does for digits; *half is set when
 * the text says "half". */
/* A span of time said in words, in `arg_unit`: "an hour" 1 hour, "half an hour" 0.5, "an hour
 * and a half" and "one and a half hours" 1.5, "a quarter of an hour" 0.25. The span's value
 * into *out; false when the text says none or two. */
static bool time_words(const char *text, double arg_unit, double *out) {
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(text, strlen(text), 0, t, GUARD_MAX_TOKENS), found = 0;
    size_t l = 0;
    for (size_t i = 0; arg_unit > 0 && i < n; i++) {
        int v = 0;
        bool one = strcmp(t[i].w, "a") == 0 || strcmp(t[i].w, "an") == 0;
        double half_unit = 0;
        if (strcmp(t[i].w, "half") == 0 && i + 1 < n &&
            (i == 0 || (strcmp(t[i - 1].w, "and") != 0 && strcmp(t[i - 1].w, "a") != 0)) &&
            (half_unit = unit_at(text + t[i + 1].start, &l)) > 0) {
            *out = 0.5 * half_unit / arg_unit; /* "half hour soak timer" */
            found++;
            i++;
            continue;
        }
        if (!one && !words_number_value(t[i].w, &v)) {
            continue;
        }
        double count = one ? 1 : v, unit = 0;
        size_t j = i + 1;
        if (j + 3 < n && strcmp(t[j].w, "and") == 0 && strcmp(t[j + 1].w, "a") == 0 &&
            strcmp(t[j + 2].w, "half") == 0) {
            count += 0.5; /* "one and a half hours" */
            j += 3;
        }
        if (j < n && (unit = unit_at(text + t[j].start, &l)) > 0) {
            j++;
            if (j + 2 < n && strcmp(t[j].w, "and") == 0 && strcmp(t[j + 1].w, "a") == 0 &&
                strcmp(t[j + 2].w, "half") == 0) {
                count += 0.5; /* "an hour and a half" */
                j += 3;
            }
            if (i > 0 && strcmp(t[i - 1].w, "half") == 0 && one) {
                count = 0.5; /* "half an hour" */
            }
            if (i > 1 && strcmp(t[i - 1].w, "of") == 0 && strcmp(t[i - 2].w, "quarter") == 0 &&
                one) {
                count = 0.25; /* "a quarter of an hour" */
            }
            if (one || count != (double)v) {
                *out = count * unit / arg_unit;
                found++;
            }
            i = j - 1;
        }
    }
    return found == 1;
}

/* A number word, or a tens word and a ones word written with a hyphen ("ninety-six"): its
 * value into *v. */
static bool number_word(const char *w, int *v) {
    if (words_number_value(w, v)) {
        return true;
    }
    const char *h = strchr(w, '-');
    char tens[WORDS_CAP];
    int a = 0, b = 0;
    if (h == NULL || (size_t)(h - w) >= sizeof(tens)) {
        return false;
    }
    memcpy(tens, w, (size_t)(h - w));
    tens[h - w] = '\0';
    if (words_number_value(tens, &a) && a >= 20 && a <= 90 && a % 10 == 0 &&
        words_number_value(h + 1, &b) && b >= 1 && b <= 9) {
        *v = a + b;
        return true;
    }
    return false;
}

/* Whether the number word at token i is a number: any but "one", which is one only as the
 * value to reach ("zoom out to one", "set it at one"; not "switch to one of them"). */
static bool number_word_at(const struct words_tok *t, size_t n, size_t i) {
    static const char *const NOT_AFTER[] = {"of",   "that",    "with", "which", "more", "else",
                                            "side", "another", "too",  "where", "who",  "i"};
    int v = 0;
    if (!words_number_value(t[i].w, &v)) {
        return false;
    }
    return strcmp(t[i].w, "one") != 0 ||
           (i > 0 && (strcmp(t[i - 1].w, "to") == 0 || strcmp(t[i - 1].w, "at") == 0) &&
            (i + 1 == n || !words_in_list(t[i + 1].w, NOT_AFTER, N_OF(NOT_AFTER))));
}

static size_t word_numbers(const char *text, double arg_unit, double *out, size_t max, bool *half) {
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(text, strlen(text), 0, t, GUARD_MAX_TOKENS), k = 0;
    *half = false;
    if (max > 0 && time_words(text, arg_unit, out)) {
        return 1; /* "an hour and a half": a span, halves and all */
    }
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        bool and_a_half = i >= 3 && strcmp(t[i - 1].w, "a") == 0 &&
                          strcmp(t[i - 2].w, "and") == 0 && words_number_value(t[i - 3].w, &v);
        *half = *half || (strcmp(t[i].w, "half") == 0 && !and_a_half); /* "one and a half": 1.5 */
    }
    for (size_t i = 0; i < n && k < max;) {
        int v = 0;
        size_t j = i + 1;
        bool hundred_first = strcmp(t[i].w, "hundred") == 0 ||
                             ((strcmp(t[i].w, "a") == 0 || strcmp(t[i].w, "an") == 0) &&
                              i + 1 < n && strcmp(t[i + 1].w, "hundred") == 0);
        if (i > 0 && strcmp(t[i - 1].w, "a") == 0 && strcmp(t[i].w, "couple") == 0) {
            v = 2; /* "a couple of degrees" */
        } else if (hundred_first) {
            v = 1; /* "a hundred and three", "hundred and two": one hundred */
            j = strcmp(t[i].w, "hundred") == 0 ? i : i + 1;
        } else if (!number_word(t[i].w, &v)) {
            i++;
            continue;
        }
        int w = 0;
        if (!hundred_first && v >= 20 && v % 10 == 0 && j < n && words_number_value(t[j].w, &w) &&
            w >= 1 && w <= 9) {
            v += w; /* "twenty five" */
            j++;
        }
        if (j < n && strcmp(t[j].w, "hundred") == 0 && v >= 1 && v <= 99) {
            v *= 100; /* "two hundred", "twelve hundred" */
            j++;
            /* "... and three", "... and twenty five", "one hundred five": the rest of it */
            size_t r = j + (j < n && strcmp(t[j].w, "and") == 0 ? 1 : 0);
            int rest = 0, ones = 0;
            if (r < n && words_number_value(t[r].w, &rest) && rest >= 1 && rest <= 90) {
                r++;
                if (rest >= 20 && rest % 10 == 0 && r < n && words_number_value(t[r].w, &ones) &&
                    ones >= 1 && ones <= 9) {
                    rest += ones;
                    r++;
                }
                v += rest;
                j = r;
            }
        }
        double dv = v;
        if (j + 2 < n && strcmp(t[j].w, "and") == 0 && strcmp(t[j + 1].w, "a") == 0 &&
            strcmp(t[j + 2].w, "half") == 0) {
            dv += 0.5; /* "heat up by one and a half" */
            j += 3;
        }
        size_t l = 0;
        double said_unit = j < n && arg_unit > 0 ? unit_at(text + t[j].start, &l) : 0;
        bool unit = j < n && unit_at(text + t[j].start, &l) > 0;
        if (!(v == 1 && dv == 1 && j == i + 1 && !unit && !number_word_at(t, n, i))) {
            out[k++] = dv * (said_unit > 0 ? said_unit / arg_unit : 1);
        }
        i = j;
    }
    return k;
}

/* Whether tokens [b, e) say a word of `name` (an identifier, words split at '_') of three
 * letters or more that is not a verb ("zoom" of set_zoom; "photos" says "photo" of take_photo). */
static bool name_word_said(const char *name, const struct words_tok *tok, size_t b, size_t e) {
    for (const char *p = name; *p != '\0';) {
        size_t l = strcspn(p, "_");
        char w[WORDS_CAP];
        if (l >= 3 && l < sizeof(w)) {
            memcpy(w, p, l);
            w[l] = '\0';
            for (size_t i = b; i < e && !words_is_tool_verb(w); i++) {
                size_t tl = strlen(tok[i].w);
                if (strncmp(tok[i].w, w, l) == 0 &&
                    (tl == l || (tl == l + 1 && tok[i].w[l] == 's'))) {
                    return true;
                }
            }
        }
        p += l + (p[l] == '_');
    }
    return false;
}

/* Whether the clause of tokens [b, e) names tool `t` or its argument `num`. */
static bool clause_names(const struct words_tok *tok,
                         size_t b,
                         size_t e,
                         const struct pipit_tool *t,
                         const struct pipit_schema_prop *num) {
    return name_word_said(t->name, tok, b, e) || name_word_said(num->name, tok, b, e);
}

/* The clause of `segment` its number in words belongs to ("zoom to three x, she's in lane
 * four": "zoom to three x"; "set a seven second timer, i need to hold the bike up": the first):
 * the only clause that says a number, or else the only one of those that names the tool or its
 * argument. The whole segment when there is one clause or no such choice. */
static void number_clause(const struct pipit_tool *t,
                          const struct pipit_schema_prop *num,
                          const char *segment,
                          char *out,
                          size_t size) {
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), WORDS_PUNCTUATION, tok, GUARD_MAX_TOKENS);
    size_t pick_b = 0, pick_e = 0, n_num = 0, n_named = 0, named_b = 0, named_e = 0;
    for (size_t b = 0; b < n;) {
        size_t e = b;
        bool has_num = false;
        while (e < n && tok[e].kind == WORDS_WORD) {
            int v = 0;
            has_num = has_num || (number_word(tok[e].w, &v) && v != 1);
            e++;
        }
        if (has_num) {
            n_num++;
            pick_b = b;
            pick_e = e;
            if (clause_names(tok, b, e, t, num)) {
                n_named++;
                named_b = b;
                named_e = e;
            }
        }
        b = e + 1;
    }
    if (n_num > 1 && n_named == 1) {
        pick_b = named_b;
        pick_e = named_e;
    }
    if ((n_num == 1 || (n_num > 1 && n_named == 1)) && pick_e > pick_b) {
        pipit_format(out, size, "%.*s", (int)(tok[pick_e - 1].end - tok[pick_b].start),
                     segment + tok[pick_b].start);
    } else {
        pipit_format(out, size, "%s", segment);
    }
}

bool agent_restore_said_sign(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call) {
    static const char *const UP[] = {"plus", "up", "+"};
    static const char *const DOWN[] = {"minus", "down", "-"};
    if (ts == NULL || segment == NULL || call == NULL || tool < 0 || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *num = t->params != NULL ? only_number(t) : NULL;
    if (num == NULL || (num->schema->has_min && num->schema->min >= 0)) {
        return false;
    }
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    json_t *v = json_object_get(args, num->name);
    double model = json_is_number(v) ? json_number_value(v) : 0;
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    int sign = 0;
    for (size_t i = 0; model != 0 && i < n && n < GUARD_MAX_TOKENS; i++) {
        int w = 0;
        double said = isdigit((unsigned char)tok[i].w[0]) ? atof(tok[i].w)
                      : words_number_value(tok[i].w, &w)  ? w
                                                          : -1;
        if (said <= 0 || fabs(said - fabs(model)) > 1e-9) {
            continue;
        }
        bool up = (i > 0 && words_in_list(tok[i - 1].w, UP, N_OF(UP))) ||
                  (i + 1 < n && strcmp(tok[i + 1].w, "up") == 0);
        bool down = (i > 0 && words_in_list(tok[i - 1].w, DOWN, N_OF(DOWN))) ||
                    (i + 1 < n && strcmp(tok[i + 1].w, "down") == 0);
        int s = up && !down ? 1 : down && !up ? -1 : 0;
        if (s != 0) {
            sign = sign == 0 || sign == s ? s : 2;
        }
    }
    bool changed = (sign == 1 && model < 0) || (sign == -1 && model > 0);
    changed = changed && set_number(call, args, num->name, -model);
    json_decref(args);
    return changed;
}

bool agent_restore_number_words(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *whole,
                                struct pipit_call *call) {
    if (tool < 0 || whole == NULL || (size_t)tool >= ts->n_tools ||
        strpbrk(whole, "0123456789") != NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *num = only_number(t);
    if (num == NULL) {
        return false;
    }
    char segment[512];
    number_clause(t, num, whole, segment, sizeof(segment));
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    bool step = tp != NULL && tp->has_step && tp->step.by.arg != NULL &&
                strcmp(tp->step.by.arg, num->name) == 0;
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    /* a number led as the value to reach is one whatever else moves ("crank it up to a hundred
     * and three") */
    static const char *const TARGET[] = {"to", "at", "like", "around", "about"};
    bool target = false;
    for (size_t i = 1; i < n && !target; i++) {
        int v = 0;
        bool hundred = i + 1 < n && strcmp(tok[i + 1].w, "hundred") == 0;
        target = words_in_list(tok[i - 1].w, TARGET, N_OF(TARGET)) &&
                 ((number_word(tok[i].w, &v) && (strcmp(tok[i].w, "one") != 0 || hundred)) ||
                  (strcmp(tok[i].w, "a") == 0 && hundred));
    }
    if (!step && !target && agent_said_any(tok, n, RELATIVE_WORDS, N_OF(RELATIVE_WORDS))) {
        return false;
    }
    double said[2];
    bool half = false;
    if (word_numbers(segment, arg_time_unit(num), said, 2, &half) != 1 || half) {
        return false;
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *v = json_object_get(args, num->name);
    double model = json_is_number(v) ? json_number_value(v) : 0;
    double sv = signed_number(ts, tool, num, segment, said[0], model);
    bool changed =
        json_is_number(v) && fabs(sv - model) > 1e-9 && set_number(call, args, num->name, sv);
    json_decref(args);
    return changed;
}

/* ============================================================================
 * the ends of a range said in words ("jpeg at max", "open the blinds") */

/* Words of a range's end said with a direction ("zoom out all the way", "as wide as it goes"). */
static const char *const ALL_THE_WAY[] = {"all the way", "as far as", "as it goes", "as it gets",
                                          "as possible", "widest",    "furthest"};

bool agent_restore_bound_words(const struct pipit_toolset *ts,
                               int32_t tool,
                               const char *segment,
                               struct pipit_call *call) {
    static const char *const MAX_WORDS[] = {"max", "maximum", "highest", "maxed"};
    static const char *const MIN_WORDS[] = {"min", "minimum", "lowest"};
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools ||
        strpbrk(segment, "0123456789") != NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *num = only_number(t);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    if (num == NULL || num->schema->n_enum > 0 ||
        (tp != NULL && tp->has_step && tp->step.by.arg != NULL &&
         strcmp(tp->step.by.arg, num->name) == 0)) {
        return false; /* a step's "max" is no value of the step */
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    bool hi = agent_said_any(tok, n, MAX_WORDS, N_OF(MAX_WORDS)), lo = false;
    for (size_t i = 0; i < n && !lo; i++) {
        int v = 0;
        /* "twenty min timer": after a number, "min" is minutes */
        lo = words_in_list(tok[i].w, MIN_WORDS, N_OF(MIN_WORDS)) &&
             !(strcmp(tok[i].w, "min") == 0 && i > 0 && number_word(tok[i - 1].w, &v));
    }
    /* "zoom out all the way", "go all the way wide": the end the words' direction points at */
    static const char *const WAY_UP[] = {"in", "tight", "tighter", "closer"};
    static const char *const WAY_DOWN[] = {"out", "wide", "wider", "back"};
    if (agent_said_any(tok, n, ALL_THE_WAY, N_OF(ALL_THE_WAY))) {
        int dir = said_direction(tok, n);
        bool up = dir > 0 || (dir == 0 && agent_said_any(tok, n, WAY_UP, N_OF(WAY_UP))),
             down = dir < 0 || (dir == 0 && agent_said_any(tok, n, WAY_DOWN, N_OF(WAY_DOWN)));
        /* both said ("zoom out all the way, need everyone in"): the word next to "all the
         * way" is its direction */
        for (size_t i = 0; i < n && up && down; i++) {
            size_t l = words_match_any(tok, n, i, ALL_THE_WAY, N_OF(ALL_THE_WAY));
            const char *near[2] = {i > 0 ? tok[i - 1].w : "", i + l < n ? tok[i + l].w : ""};
            for (size_t k = 0; l > 0 && k < 2; k++) {
                bool u = words_in_list(near[k], WAY_UP, N_OF(WAY_UP)) ||
                         words_in_list(near[k], UP_WORDS, N_OF(UP_WORDS)),
                     d = words_in_list(near[k], WAY_DOWN, N_OF(WAY_DOWN)) ||
                         words_in_list(near[k], DOWN_WORDS, N_OF(DOWN_WORDS));
                if (u != d) {
                    up = u;
                    down = d;
                    break;
                }
            }
        }
        hi = hi || (up && !down);
        lo = lo || (down && !up);
    }
    /* an argument named for opening ("open_percent"): "open" is its top, "close" its bottom,
     * unless the words say a part ("halfway", "a quarter", "a bit") */
    static const char *const OPEN_WORDS[] = {"open", "opened"};
    static const char *const CLOSE_WORDS[] = {"close", "closed", "shut"};
    static const char *const PART_WORDS[] = {
        "half",  "halfway", "quarter",  "third",    "bit",  "little", "partly", "partially",
        "notch", "touch",   "slightly", "somewhat", "more", "less",   "crack",  "some"};
    char an[WORDS_CAP * 2];
    pipit_format(an, sizeof(an), "%s", num->name);
    for (char *p = an; *p; p++) {
        *p = *p == '_' || *p == '-' ? ' ' : (char)tolower((unsigned char)*p);
    }
    struct words_tok at[8];
    size_t na = words_tokenize(an, strlen(an), 0, at, 8);
    bool open_arg = agent_said_any(at, na, OPEN_WORDS, N_OF(OPEN_WORDS)),
         close_arg = agent_said_any(at, na, CLOSE_WORDS, N_OF(CLOSE_WORDS));
    if (open_arg != close_arg && !agent_said_any(tok, n, PART_WORDS, N_OF(PART_WORDS))) {
        bool opens = agent_said_any(tok, n, OPEN_WORDS, N_OF(OPEN_WORDS)),
             closes = agent_said_any(tok, n, CLOSE_WORDS, N_OF(CLOSE_WORDS));
        hi = hi || (open_arg ? opens && !closes : closes && !opens);
        lo = lo || (open_arg ? closes && !opens : opens && !closes);
    }
    /* "no water please", "no timer for the next ones": "no" right before a word of the tool's
     * name (after its first) is the bottom of a range that starts at 0 */
    bool none = false;
    for (size_t i = 0; i + 1 < n && !none; i++) {
        if (strcmp(tok[i].w, "no") != 0) {
            continue;
        }
        const char *p = t->name + strcspn(t->name, "_");
        while (*p != '\0' && !none) {
            p += strspn(p, "_");
            size_t l = strcspn(p, "_");
            size_t lw = strlen(tok[i + 1].w);
            none = l >= 3 && (lw == l || (lw == l + 1 && tok[i + 1].w[l] == 's')) &&
                   strncasecmp(tok[i + 1].w, p, l) == 0;
            p += l;
        }
    }
    none = none && num->schema->has_min && num->schema->min == 0;
    lo = lo || none;
    if (hi == lo || (!none && agent_said_negation(tok, n)) ||
        !(hi ? num->schema->has_max : num->schema->has_min)) {
        return false;
    }
    double bound = hi ? num->schema->max : num->schema->min;
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *v = json_object_get(args, num->name);
    bool changed = json_is_number(v) && fabs(json_number_value(v) - bound) > 1e-9 &&
                   set_number(call, args, num->name, bound);
    json_decref(args);
    return changed;
}

int32_t agent_number_setter(const struct pipit_toolset *ts,
                            const char *key,
                            const struct pipit_schema_prop **arg) {
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        const struct pipit_tool *t = &ts->tools[i];
        for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
            const struct pipit_effect_set *e = &tp->set[k];
            if (e->key.key_arg != NULL || strcmp(e->key.key, key) != 0 || e->value.arg == NULL ||
                e->value.map != NULL) {
                continue;
            }
            const struct pipit_schema_prop *p = NULL;
            size_t n_required = 0;
            for (size_t j = 0; j < t->params->n_props; j++) {
                n_required += t->params->props[j].required ? 1 : 0;
                if (strcmp(t->params->props[j].name, e->value.arg) == 0) {
                    p = &t->params->props[j];
                }
            }
            if (p == NULL || !p->required || n_required != 1 ||
                (p->schema->type != PIPIT_SCHEMA_NUMBER &&
                 p->schema->type != PIPIT_SCHEMA_INTEGER)) {
                continue;
            }
            if (found >= 0 && found != (int32_t)i) {
                return -1;
            }
            found = (int32_t)i;
            *arg = p;
        }
    }
    return found;
}

bool agent_number_call(const struct pipit_toolset *ts,
                       int32_t tool,
                       const struct pipit_schema_prop *arg,
                       double v,
                       struct pipit_call *call) {
    json_t *made = json_object();
    json_t *nv = agent_said_number(v);
    if (made == NULL || nv == NULL || json_object_set_new(made, arg->name, nv) != 0) {
        json_decref(made);
        json_decref(nv);
        return false;
    }
    return agent_said_replace_call(call, pipit_toolset_tool(ts, (size_t)tool), made);
}

bool agent_number_said_to(const char *segment) {
    /* words between "to" and its number that keep it the value: "to level three", "to like 3" */
    static const char *const BETWEEN[] = {"level", "setting", "number", "position", "gear",
                                          "stage", "like",    "about",  "around",   "roughly",
                                          "maybe", "mode",    "speed",  "power",    "volume"};
    struct words_tok t[32];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 32);
    for (size_t i = 1; i < n; i++) {
        bool num = isdigit((unsigned char)t[i].w[0]) || number_word_at(t, n, i);
        size_t b = i - 1;
        if (num && b > 0 && words_in_list(t[b].w, BETWEEN, N_OF(BETWEEN))) {
            b--;
        }
        if (num && (strcmp(t[b].w, "to") == 0 || strcmp(t[b].w, "at") == 0)) {
            return true;
        }
    }
    return false;
}

/* ============================================================================
 * a value to reach, said to a step ("turn the voice down to 25 percent" -> a step of -25) */

/* Whether the segment says nothing of a change: no word of a direction ("warmer", "less"),
 * none of the step's own values ("up" of {"up": 1, "down": -1}), no sign, no word of a step
 * ("by", "notch", "again", "another", ...): "sixty degrees, heavy soil" is a value to reach. */
static bool says_no_change(const char *segment, const struct pipit_tool_pack *tp) {
    static const char *const STEP[] = {"by",      "step",  "steps", "notch", "notches", "again",
                                       "another", "times", "each",  "per",   "change",  "adjust",
                                       "bump",    "nudge", "turn",  "push",  "pull",    "knock"};
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    if (n >= GUARD_MAX_TOKENS || strpbrk(segment, "+-") != NULL || said_direction(tok, n) != 0 ||
        agent_said_any(tok, n, UP_WORDS, N_OF(UP_WORDS)) ||
        agent_said_any(tok, n, DOWN_WORDS, N_OF(DOWN_WORDS)) ||
        agent_said_any(tok, n, STEP, N_OF(STEP))) {
        return false;
    }
    const char *value;
    json_t *v;
    json_object_foreach((json_t *)tp->step.sign.map, value, v) {
        if (agent_said_phrase(tok, n, value)) {
            return false;
        }
    }
    return true;
}

bool agent_restore_step_setting(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    if (tp == NULL || !tp->has_step || tp->step.key.key_arg != NULL ||
        !(agent_number_said_to(segment) || says_no_change(segment, tp))) {
        return false;
    }
    const struct pipit_schema_prop *arg = NULL;
    int32_t setter = agent_number_setter(ts, tp->step.key.key, &arg);
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    bool half = false;
    if (setter < 0 || setter == tool) {
        return false;
    }
    size_t n_digits = person_numbers(segment, arg_time_unit(arg), said, raw, GUARD_MAX_NUMBERS);
    if (n_digits != 1 &&
        (n_digits != 0 ||
         word_numbers(segment, arg_time_unit(arg), said, GUARD_MAX_NUMBERS, &half) != 1 || half)) {
        return false; /* "zoom in to five times": five */
    }
    return agent_number_call(ts, setter, arg, said[0], call);
}

/* The value of a step's sign map (`{"up": 1, "down": -1}`) the words pick: the one value said
 * (*said = true), else the one value whose sign is `dir` (0: none); NULL when none or two. */
static const char *
sign_value(const json_t *map, const struct words_tok *tok, size_t n, int dir, bool *said) {
    const char *value, *named = NULL, *signed_as = NULL;
    json_t *v;
    size_t n_named = 0, n_signed = 0;
    json_object_foreach((json_t *)map, value, v) {
        if (agent_said_phrase(tok, n, value)) {
            named = value;
            n_named++;
        }
        if (dir != 0 && json_is_number(v) && json_number_value(v) * dir > 0) {
            signed_as = value;
            n_signed++;
        }
    }
    *said = n_named > 0;
    return n_named > 0 ? (n_named == 1 ? named : NULL) : n_signed == 1 ? signed_as : NULL;
}

/* ============================================================================
 * a step's direction said in words ("louder by thirty" -> direction "down") */

bool agent_restore_step_direction(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call) {
    const struct pipit_tool_pack *tp = tool >= 0 && segment != NULL && (size_t)tool < ts->n_tools
                                           ? pipit_toolset_tool_pack(ts, (size_t)tool)
                                           : NULL;
    if (tp == NULL || !tp->has_step) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    int dir = said_direction(tok, n);
    json_t *args = json_loads(call->args_json, 0, NULL);
    if (tp->step.sign.arg == NULL && tp->step.by.arg != NULL && tp->step.by.map == NULL) {
        /* a step by a signed number: "hmm, one more degree" -> degrees=-1 */
        json_t *by = json_object_get(args, tp->step.by.arg);
        double v = json_is_number(by) ? json_number_value(by) : 0;
        bool flip = dir != 0 && !agent_said_negation(tok, n) && v * dir < 0;
        /* no number said ("oven down a bit" -> degrees=-41): the smallest step of the pack's
         * examples, when the model's is none of theirs */
        double said[2], raw[2], least = 0;
        bool half = false, seen = false;
        for (size_t e = 0; e < tp->n_examples; e++) {
            json_t *x = json_object_get(tp->examples[e].args, tp->step.by.arg);
            double ax = json_is_number(x) ? fabs(json_number_value(x)) : 0;
            seen = seen || fabs(ax - fabs(v)) < 1e-9;
            least = ax > 0 && (least == 0 || ax < least) ? ax : least;
        }
        bool unsaid = json_is_number(by) && least > 0 && !seen &&
                      person_numbers(segment, 0, said, raw, 2) == 0 &&
                      word_numbers(segment, 0, said, 2, &half) == 0 && !half;
        double want = unsaid ? (flip ? -1 : 1) * (v < 0 ? -least : least) : -v;
        bool changed = (flip || unsaid) && set_number(call, args, tp->step.by.arg, want);
        json_decref(args);
        return changed;
    }
    if (tp->step.sign.arg == NULL || !json_is_object(tp->step.sign.map)) {
        json_decref(args);
        return false;
    }
    const char *had = json_string_value(json_object_get(args, tp->step.sign.arg));
    json_t *sign = had != NULL ? json_object_get(tp->step.sign.map, had) : NULL;
    if (dir == 0 || agent_said_negation(tok, n) || !json_is_number(sign) ||
        json_number_value(sign) * dir >= 0) {
        json_decref(args);
        return false; /* no direction said, or the model's value goes that way */
    }
    bool said = false;
    const char *want = sign_value(tp->step.sign.map, tok, n, dir, &said);
    /* "a bit more out": a value said is agent_restore_person_choice()'s */
    bool changed = !said && want != NULL &&
                   json_object_set_new(args, tp->step.sign.arg, json_string(want)) == 0 &&
                   agent_said_put_args(call, args, true);
    json_decref(args);
    return changed;
}

/* ============================================================================
 * a direction said to a setter ("zoom in a notch" -> set_zoom(level=1)) */

bool agent_restore_setting_step(const struct pipit_toolset *ts,
                                int32_t tool,
                                const char *segment,
                                struct pipit_call *call) {
    const struct pipit_tool_pack *sp = tool >= 0 && segment != NULL && (size_t)tool < ts->n_tools
                                           ? pipit_toolset_tool_pack(ts, (size_t)tool)
                                           : NULL;
    const struct pipit_effect_key *key = NULL; /* the one key a number argument sets */
    for (size_t k = 0; sp != NULL && k < sp->n_set; k++) {
        if (sp->set[k].value.arg != NULL && sp->set[k].value.map == NULL) {
            if (key != NULL) {
                return false;
            }
            key = &sp->set[k].key;
        }
    }
    if (key == NULL) {
        return false;
    }
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    bool half = false;
    if (person_numbers(segment, 0, said, raw, GUARD_MAX_NUMBERS) != 0 ||
        word_numbers(segment, 0, said, GUARD_MAX_NUMBERS, &half) != 0) {
        return false; /* a number said ("zoom in to five times"): the setter's */
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    static const char *const ENDS[] = {"max",    "maximum", "min",     "minimum", "highest",
                                       "lowest", "reset",   "default", "normal"};
    if (agent_said_negation(tok, n) || agent_said_any(tok, n, ENDS, N_OF(ENDS)) ||
        agent_said_any(tok, n, ALL_THE_WAY, N_OF(ALL_THE_WAY))) {
        return false;
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        if (i == (size_t)tool || tp == NULL || !tp->has_step || tp->step.sign.arg == NULL ||
            !json_is_object(tp->step.sign.map) || strcmp(tp->step.key.key, key->key) != 0 ||
            (tp->step.key.key_arg == NULL) != (key->key_arg == NULL)) {
            continue;
        }
        /* the direction: a value of the sign's map said ("in"), else the words' */
        bool named = false;
        const char *want = sign_value(tp->step.sign.map, tok, n, said_direction(tok, n), &named);
        const struct pipit_tool *t = pipit_toolset_tool(ts, i);
        json_t *had = json_loads(call->args_json, 0, NULL), *args = json_object();
        bool whole = want != NULL;
        json_object_set_new(args, tp->step.sign.arg, json_string(want != NULL ? want : ""));
        if (tp->step.key.key_arg != NULL) { /* "{room}_brightness": the setter's room */
            json_t *place = json_object_get(had, key->key_arg);
            whole =
                whole && place != NULL && json_object_set(args, tp->step.key.key_arg, place) == 0;
        }
        for (size_t j = 0; whole && j < t->params->n_props; j++) {
            whole = !t->params->props[j].required ||
                    json_object_get(args, t->params->props[j].name) != NULL;
        }
        json_decref(had);
        if (whole) {
            return agent_said_replace_call(call, t, args);
        }
        json_decref(args);
    }
    return false;
}

/* ============================================================================
 * a change by a number, said to a setter ("bump the jpeg quality up by ten" -> quality=10) */

/* Words after a number that make it a change ("ten more", "2 degrees warmer"). */
static const char *const CHANGE_AFTER[] = {
    "more",   "less",     "higher", "lower",   "warmer", "cooler",  "colder",
    "hotter", "brighter", "dimmer", "darker",  "louder", "quieter", "softer",
    "longer", "shorter",  "bigger", "smaller", "extra",  "up",      "down"};
/* Words right before a number that make it a change ("up 2", "another 5", "by ten"). */
static const char *const CHANGE_BEFORE[] = {"by",    "up",   "down", "another",
                                            "extra", "plus", "minus"};

/* The index of the segment's one number token (digits or a number word), or n when it has
 * none or two apart. */
static size_t number_token(const struct words_tok *tok, size_t n) {
    size_t at = n;
    for (size_t i = 0; i < n; i++) {
        bool num = isdigit((unsigned char)tok[i].w[0]) || number_word_at(tok, n, i) ||
                   (i > 0 && strcmp(tok[i - 1].w, "a") == 0 && strcmp(tok[i].w, "couple") == 0);
        if (!num) {
            continue;
        }
        if (at != n && at + 1 != i) {
            return n; /* two numbers ("twenty five" is one) */
        }
        if (at == n) {
            at = i;
        }
    }
    return at;
}

bool agent_restore_setting_by(const struct pipit_toolset *ts,
                              int32_t tool,
                              const char *segment,
                              const json_t *state,
                              struct pipit_call *call) {
    const struct pipit_tool_pack *sp = tool >= 0 && segment != NULL && (size_t)tool < ts->n_tools
                                           ? pipit_toolset_tool_pack(ts, (size_t)tool)
                                           : NULL;
    if (sp == NULL || sp->has_step || !json_is_object(state)) {
        return false; /* a step tool moves by its own number */
    }
    const struct pipit_effect_set *set = NULL; /* the one key a number argument sets */
    for (size_t k = 0; k < sp->n_set; k++) {
        if (sp->set[k].value.arg != NULL && sp->set[k].value.map == NULL) {
            if (set != NULL) {
                return false;
            }
            set = &sp->set[k];
        }
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *num = NULL;
    for (size_t j = 0; set != NULL && j < t->params->n_props; j++) {
        if (strcmp(t->params->props[j].name, set->value.arg) == 0) {
            num = &t->params->props[j];
        }
    }
    if (num == NULL ||
        (num->schema->type != PIPIT_SCHEMA_NUMBER && num->schema->type != PIPIT_SCHEMA_INTEGER)) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    int dir = said_direction(tok, n);
    size_t at = number_token(tok, n);
    if (dir == 0 || at == n || agent_said_negation(tok, n)) {
        return false;
    }
    /* verbs of a change ("raise the blades 3mm", "reduce brightness 20 percent") */
    static const char *const CHANGE_VERBS[] = {"raise",  "lower", "increase", "decrease",
                                               "reduce", "bump",  "boost",    "drop"};
    bool change = (at > 0 && words_in_list(tok[at - 1].w, CHANGE_BEFORE, N_OF(CHANGE_BEFORE))) ||
                  agent_said_any(tok, at, CHANGE_VERBS, N_OF(CHANGE_VERBS));
    for (size_t j = at + 1; !change && j < n && j <= at + 3; j++) {
        change = words_in_list(tok[j].w, CHANGE_AFTER, N_OF(CHANGE_AFTER));
    }
    double said[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    bool half = false;
    size_t n_digits = person_numbers(segment, arg_time_unit(num), said, raw, GUARD_MAX_NUMBERS);
    size_t n_words = n_digits == 0
                         ? word_numbers(segment, arg_time_unit(num), said, GUARD_MAX_NUMBERS, &half)
                         : 0;
    if (!change || n_digits + n_words != 1 || half || agent_number_said_to(segment) ||
        (at > 0 && (strcmp(tok[at - 1].w, "to") == 0 || strcmp(tok[at - 1].w, "at") == 0))) {
        return false; /* "turn it up to 50": the value itself */
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    char key[128];
    const struct pipit_effect_key *ek = &set->key;
    if (ek->key_arg != NULL) { /* "{room}_brightness": the call's room */
        const char *place = json_string_value(json_object_get(args, ek->key_arg));
        if (place == NULL) {
            json_decref(args);
            return false;
        }
        pipit_format(key, sizeof(key), "%.*s%s%s", (int)ek->prefix_len, ek->key, place, ek->suffix);
    } else {
        pipit_format(key, sizeof(key), "%s", ek->key);
    }
    /* the pack's own step of that key by a number ("adjust_thermostat(degrees)"), when it needs
     * nothing else but the place: the change as asked, run or refused by that tool */
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool_pack *xp = pipit_toolset_tool_pack(ts, i);
        const struct pipit_tool *x = pipit_toolset_tool(ts, i);
        if (xp == NULL || !xp->has_step || xp->step.by.arg == NULL || xp->step.by.map != NULL ||
            xp->step.sign.arg != NULL || strcmp(xp->step.key.key, ek->key) != 0 ||
            x->params == NULL) {
            continue;
        }
        json_t *step = json_object();
        bool whole = step != NULL;
        for (size_t j = 0; whole && j < x->params->n_props; j++) {
            const struct pipit_schema_prop *p = &x->params->props[j];
            const json_t *place = ek->key_arg != NULL && strcmp(p->name, ek->key_arg) == 0 &&
                                          xp->step.key.key_arg != NULL
                                      ? json_object_get(args, ek->key_arg)
                                      : NULL;
            if (strcmp(p->name, xp->step.by.arg) == 0 &&
                (p->schema->type == PIPIT_SCHEMA_NUMBER ||
                 p->schema->type == PIPIT_SCHEMA_INTEGER)) {
                json_object_set_new(step, p->name, agent_said_number(dir * fabs(said[0])));
            } else if (place != NULL) {
                json_object_set(step, p->name, (json_t *)place);
            } else if (p->required) {
                whole = false;
            }
        }
        json_decref(args);
        if (whole && json_object_get(step, xp->step.by.arg) != NULL) {
            return agent_said_replace_call(call, x, step);
        }
        json_decref(step);
        return false;
    }
    json_t *now = json_object_get(state, key), *v = json_object_get(args, num->name);
    double want = json_is_number(now) ? json_number_value(now) + dir * fabs(said[0]) : 0;
    bool changed = json_is_number(now) && json_is_number(v) &&
                   fabs(json_number_value(v) - want) > 1e-9 &&
                   set_number(call, args, num->name, want);
    json_decref(args);
    return changed;
}

/* ============================================================================
 * for the other guards */

size_t
agent_numbers_written(const char *text, double arg_unit, double *out, double *raw, size_t max) {
    return person_numbers(text, arg_unit, out, raw, max);
}

double agent_number_time_unit(const struct pipit_schema_prop *num) {
    return arg_time_unit(num);
}

bool agent_number_says_down(const struct words_tok *tok, size_t n) {
    return agent_said_any(tok, n, DOWN_WORDS, N_OF(DOWN_WORDS));
}

bool agent_key_number_named(const struct pipit_toolset *ts,
                            int32_t tool,
                            const char *segment,
                            const char *key,
                            struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || key == NULL) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    for (size_t i = 0; tp != NULL && i < tp->n_changes; i++) {
        if (strcmp(tp->changes[i], key) == 0) {
            return false; /* the model's tool writes the key named: which number is the model's */
        }
    }
    const struct pipit_schema_prop *arg = NULL;
    int32_t setter = agent_number_setter(ts, key, &arg);
    if (setter < 0 || setter == tool || arg == NULL) {
        return false;
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    static const char *const CHANGE[] = {
        "more",     "less",  "up",     "down", "higher",  "lower", "by",    "increase",
        "decrease", "raise", "reduce", "bump", "another", "extra", "times", "again"};
    if (n >= GUARD_MAX_TOKENS || agent_said_any(tok, n, CHANGE, N_OF(CHANGE)) ||
        name_word_said(t->name, tok, 0, n)) {
        return false; /* a step, or the model's own tool said ("a photo at 2x") */
    }
    double unit = arg_time_unit(arg);
    double nums[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS], v = 0;
    size_t nd = person_numbers(segment, unit, nums, raw, GUARD_MAX_NUMBERS);
    bool half = false;
    if (nd == 1) {
        v = nums[0];
    } else if (nd == 0 && strpbrk(segment, "0123456789") == NULL &&
               word_numbers(segment, unit, nums, 2, &half) == 1 && !half) {
        v = nums[0];
    } else {
        return false;
    }
    static const char *const MINUS[] = {"minus", "negative"};
    if (v > 0 && agent_said_any(tok, n, MINUS, N_OF(MINUS))) {
        v = -v;
    }
    return agent_number_call(ts, setter, arg, v, call);
}

/* ============================================================================
 * a number with a unit put in a number that takes another ("mow for 5 hours" -> a cutting
 * height of 5; "set heater to 26 degrees" -> the heater's switch) */

/* Whether argument `p` takes degrees: its name or description says "celsius", "fahrenheit",
 * "degree" or "temperature". */
static bool degree_arg(const struct pipit_schema_prop *p) {
    static const char *const MARKS[] = {"celsius", "fahrenheit", "degree", "temperature"};
    for (size_t k = 0; k < N_OF(MARKS); k++) {
        if (words_contains(p->name, MARKS[k]) || words_contains(p->schema->description, MARKS[k])) {
            return true;
        }
    }
    return false;
}

/* The one number the segment says with "degrees" (or "degree", "°") right after it; false
 * when it says none, or two numbers. */
static bool degrees_said(const char *segment, double *out) {
    double v[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    if (person_numbers(segment, 0, v, raw, GUARD_MAX_NUMBERS) != 1) {
        return false;
    }
    for (const char *p = segment; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p)) {
            continue;
        }
        while (isdigit((unsigned char)*p) || *p == '.') {
            p++;
        }
        while (*p == ' ') {
            p++;
        }
        if (strncasecmp(p, "degree", 6) == 0 || strncmp(p, "\xC2\xB0", 2) == 0) {
            *out = raw[0];
            return true;
        }
        if (*p == '\0') {
            break;
        }
    }
    return false;
}

/* The one tool, not `tool` nor the cloud's, whose only required argument is a number that
 * `of_unit` takes; -1 when none or two. */
static int32_t unit_tool(const struct pipit_toolset *ts,
                         int32_t tool,
                         bool (*of_unit)(const struct pipit_schema_prop *),
                         const struct pipit_schema_prop **arg) {
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *o = pipit_toolset_tool(ts, i);
        size_t n_req = 0;
        const struct pipit_schema_prop *req = pipit_tool_only_required(o, &n_req);
        if (i == (size_t)tool || pipit_toolset_is_cloud(ts, i) || n_req != 1 ||
            (req->schema->type != PIPIT_SCHEMA_NUMBER &&
             req->schema->type != PIPIT_SCHEMA_INTEGER) ||
            !of_unit(req)) {
            continue;
        }
        if (found >= 0) {
            return -1; /* two tools of the unit: which one is not said */
        }
        found = (int32_t)i;
        *arg = req;
    }
    return found;
}

static bool time_arg(const struct pipit_schema_prop *p) {
    return arg_time_unit(p) > 0;
}

/* 1 when the model's call of `tool` put a number in an argument that `of_unit` does not take or
 * misses a required argument (the call fails anyway), 2 when it is a setting that takes no
 * number at all, 0 otherwise and when an argument of the call takes the unit (then the number
 * is the model's to read). */
static int misplaced(const struct pipit_toolset *ts,
                     int32_t tool,
                     const struct pipit_call *call,
                     bool (*of_unit)(const struct pipit_schema_prop *)) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool wrong = false, takes_number = false;
    for (size_t j = 0; args != NULL && t->params != NULL && j < t->params->n_props; j++) {
        const struct pipit_schema_prop *p = &t->params->props[j];
        const json_t *v = json_object_get(args, p->name);
        bool number =
            p->schema->type == PIPIT_SCHEMA_NUMBER || p->schema->type == PIPIT_SCHEMA_INTEGER;
        if (number && of_unit(p)) {
            json_decref(args);
            return 0;
        }
        takes_number = takes_number || number;
        wrong = wrong || (number && json_is_number(v)) || (p->required && v == NULL);
    }
    json_decref(args);
    /* a setting that takes no number at all ("have the sound stop by itself after 20 mins" ->
     * stop_sound): the span said has nowhere to go; an action ("take a photo in 5 seconds")
     * stays the model's */
    return wrong ? 1 : !takes_number && tp != NULL && tp->effect == PIPIT_EFFECT_CHANGE ? 2 : 0;
}

/* Whether the segment says a word of four letters or more of tool `t`'s name or description
 * ("stop", "sound" of "Stop the sound after some minutes"), not a word as common as "turn",
 * "make", "after". */
static bool says_tool_word(const struct pipit_tool *t, const char *segment) {
    static const char *const COMMON[] = {"turn",  "make", "please", "with",  "that",  "this",
                                         "after", "some", "from",   "until", "then",  "just",
                                         "have",  "want", "them",   "they",  "there", "will"};
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, tok, GUARD_MAX_TOKENS);
    for (size_t i = 0; i < n; i++) {
        if (strlen(tok[i].w) >= 4 && !words_in_list(tok[i].w, COMMON, N_OF(COMMON)) &&
            (words_text_has(t->name, tok[i].w) ||
             (t->description != NULL && words_text_has(t->description, tok[i].w)))) {
            return true;
        }
    }
    return false;
}

bool agent_restore_time_span(const struct pipit_toolset *ts,
                             int32_t tool,
                             const char *segment,
                             struct pipit_call *call) {
    if (!pipit_toolset_is_pack_tool(ts, tool) || segment == NULL || call == NULL) {
        return false;
    }
    const struct pipit_schema_prop *arg = NULL;
    double deg = 0;
    if (degrees_said(segment, &deg)) {
        int32_t found =
            misplaced(ts, tool, call, degree_arg) == 1 ? unit_tool(ts, tool, degree_arg, &arg) : -1;
        return found >= 0 && agent_number_call(ts, found, arg, deg, call);
    }
    double in_s[GUARD_MAX_NUMBERS], in_min[GUARD_MAX_NUMBERS], raw[GUARD_MAX_NUMBERS];
    bool digits = strpbrk(segment, "0123456789") != NULL, half = false;
    size_t n = digits ? person_numbers(segment, 1, in_s, raw, GUARD_MAX_NUMBERS)
                      : word_numbers(segment, 1, in_s, GUARD_MAX_NUMBERS, &half);
    size_t m = digits ? person_numbers(segment, 60, in_min, raw, GUARD_MAX_NUMBERS)
                      : word_numbers(segment, 60, in_min, GUARD_MAX_NUMBERS, &half);
    if (n != 1 || m != 1 || fabs(in_s[0] - in_min[0]) < 1e-9) {
        return false; /* one number, with a unit of time after it */
    }
    int how = misplaced(ts, tool, call, time_arg);
    int32_t found = how > 0 ? unit_tool(ts, tool, time_arg, &arg) : -1;
    if (found >= 0 && how == 2 && !says_tool_word(pipit_toolset_tool(ts, (size_t)found), segment)) {
        return false; /* "ceremony starts in 5 min. flash off": the span is the remark's */
    }
    double v[GUARD_MAX_NUMBERS];
    if (found < 0 ||
        (digits ? person_numbers(segment, arg_time_unit(arg), v, raw, GUARD_MAX_NUMBERS)
                : word_numbers(segment, arg_time_unit(arg), v, GUARD_MAX_NUMBERS, &half)) != 1) {
        return false;
    }
    return agent_number_call(ts, found, arg, v[0], call);
}
