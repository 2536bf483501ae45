/*
 * render.c - sentences from templates and real results; the narration check.
 */
#include "render.h"

#include "status.h"
#include "strbuf.h"
#include "words.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ============================================================================ values */

/* The plain text of a scalar: strings as they are, numbers with %g (integers exactly),
 * booleans "on"/"off", null "nothing". Returns false for arrays and objects. */
static bool scalar_text(const json_t *v, char *buf, size_t size, const char **str) {
    *str = NULL;
    switch (json_typeof(v)) {
        case JSON_STRING:
            *str = json_string_value(v);
            return true;
        case JSON_INTEGER:
            snprintf(buf, size, "%lld", (long long)json_integer_value(v));
            break;
        case JSON_REAL:
            snprintf(buf, size, "%g", json_real_value(v));
            break;
        case JSON_TRUE:
            snprintf(buf, size, "on");
            break;
        case JSON_FALSE:
            snprintf(buf, size, "off");
            break;
        case JSON_NULL:
            snprintf(buf, size, "nothing");
            break;
        default:
            return false;
    }
    *str = buf;
    return true;
}

/* Does value-map key `key` (`klen` bytes) name the scalar `v` (whose text is `text`)? Booleans
 * also answer to "true"/"false". */
static bool map_key_matches(const char *key, size_t klen, const json_t *v, const char *text) {
    if ((klen == 1 && key[0] == '*') || (strlen(text) == klen && memcmp(key, text, klen) == 0)) {
        return true;
    }
    const char *b = json_is_true(v) ? "true" : json_is_false(v) ? "false" : NULL;
    return b != NULL && strlen(b) == klen && memcmp(key, b, klen) == 0;
}

/* Append one scalar, through the value map `map` ("v=text|v=text|*=text", `mlen` bytes, NULL
 * for none): the first entry whose value is the scalar's text prints its text, with "#"
 * standing for the value; no entry: the value itself. */
static void append_scalar(struct strbuf *b, const json_t *v, const char *map, size_t mlen) {
    char num[64];
    const char *text = NULL;
    if (!scalar_text(v, num, sizeof(num), &text)) {
        char *d = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
        if (d != NULL) {
            strbuf_str(b, d);
            free(d);
        }
        return;
    }
    for (size_t i = 0; map != NULL && i < mlen;) {
        size_t e = i;
        while (e < mlen && map[e] != '|') {
            e++;
        }
        const char *eq = memchr(map + i, '=', e - i);
        if (eq != NULL && map_key_matches(map + i, (size_t)(eq - (map + i)), v, text)) {
            for (const char *q = eq + 1; q < map + e; q++) {
                if (*q == '#') {
                    strbuf_str(b, text);
                } else {
                    strbuf_add(b, q, 1);
                }
            }
            return;
        }
        i = e + 1;
    }
    /* a lowercase identifier reads as words: "in_progress" -> "in progress" */
    bool ident = json_is_string(v) && strchr(text, '_') != NULL && text[0] != '_';
    for (const char *q = text; ident && *q != '\0'; q++) {
        ident = (*q >= 'a' && *q <= 'z') || (*q == '_' && q[1] != '_' && q[1] != '\0');
    }
    for (const char *q = text; *q != '\0'; q++) {
        strbuf_add(b, ident && *q == '_' ? " " : q, 1);
    }
}

/* Append a value: a scalar (through `map`), or an array as its items joined "a, b and c"
 * (`conj` is " and " or " or "); an empty array is "nothing". */
static void
append_value(struct strbuf *b, const json_t *v, const char *map, size_t mlen, const char *conj) {
    if (!json_is_array(v)) {
        append_scalar(b, v, map, mlen);
        return;
    }
    size_t n = json_array_size(v);
    if (n == 0) {
        strbuf_str(b, "nothing");
    }
    for (size_t i = 0; i < n; i++) {
        if (i > 0) {
            strbuf_str(b, i + 1 == n ? conj : ", ");
        }
        append_scalar(b, json_array_get(v, i), map, mlen);
    }
}

/* ============================================================================ templates */

char *render_template(const char *tmpl,
                      const json_t *args,
                      const json_t *data,
                      const char *error,
                      const char *code) {
    return render_template_limits(tmpl, args, data, NULL, error, code);
}

/* "I found 1 files." -> "I found 1 file.": a plural right after a lone 1 (not 11, 0.1 or 1.5)
 * loses its ending ("files" -> "file", "entries" -> "entry", "matches" -> "match"), in place. */
static void singular_after_one(char *s) {
    for (char *p = s; *p != '\0'; p++) {
        bool lone = p[0] == '1' && p[1] == ' ' &&
                    (p == s || !(isdigit((unsigned char)p[-1]) || p[-1] == '.' || p[-1] == ','));
        if (!lone) {
            continue;
        }
        char *w = p + 2;
        size_t n = 0;
        while (w[n] >= 'a' && w[n] <= 'z') {
            n++;
        }
        if (n < 3 || w[n - 1] != 's' || w[n - 2] == 's' || w[n - 2] == 'u' || w[n - 2] == 'i') {
            continue; /* "1 class", "1 bus", "1 axis": no plural */
        }
        size_t cut = 1;
        if (n > 4 && strncmp(w + n - 3, "ies", 3) == 0) {
            w[n - 3] = 'y'; /* entries -> entry */
            cut = 2;
        } else if (n > 4 &&
                   (strncmp(w + n - 4, "ches", 4) == 0 || strncmp(w + n - 4, "shes", 4) == 0 ||
                    strncmp(w + n - 3, "xes", 3) == 0 || strncmp(w + n - 4, "sses", 4) == 0)) {
            cut = 2; /* matches -> match, boxes -> box */
        }
        memmove(w + n - cut, w + n, strlen(w + n) + 1);
    }
}

/* Whether `p` (in `s`) is the article "a" before a word that opens with a vowel sound
 * (words_vowel_sound). */
static bool a_before_vowel(const char *s, const char *p) {
    bool word_a = (p[0] == 'a' || p[0] == 'A') && p[1] == ' ' &&
                  (p == s || p[-1] == ' ' || p[-1] == '(' || p[-1] == '"');
    return word_a && words_vowel_sound(p + 2);
}

/* "A americano will be ready." -> "An americano ...": every article a_before_vowel() finds
 * becomes "an". Returns a new string (or `s` itself when nothing changed). */
static char *an_before_vowel(char *s) {
    size_t extra = 0;
    for (const char *p = s; *p != '\0'; p++) {
        extra += a_before_vowel(s, p) ? 1 : 0;
    }
    if (extra == 0) {
        return s;
    }
    char *out = malloc(strlen(s) + extra + 1);
    if (out == NULL) {
        return s;
    }
    char *o = out;
    for (const char *p = s; *p != '\0'; p++) {
        *o++ = *p;
        if (a_before_vowel(s, p)) {
            *o++ = 'n';
        }
    }
    *o = '\0';
    free(s);
    return out;
}

char *render_template_limits(const char *tmpl,
                             const json_t *args,
                             const json_t *data,
                             const json_t *limits,
                             const char *error,
                             const char *code) {
    struct strbuf b = {0};
    if (tmpl == NULL) {
        tmpl = "";
    }
    for (const char *p = tmpl; *p != '\0';) {
        if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
            strbuf_add(&b, p, 1);
            p += 2;
            continue;
        }
        if (p[0] != '{') {
            strbuf_add(&b, p, 1);
            p++;
            continue;
        }
        const char *end = strchr(p + 1, '}');
        const char *open = strchr(p + 1, '{');
        if (end == NULL || (open != NULL && open < end)) {
            strbuf_str(&b, p); /* unbalanced (the spec loader refuses these): print as is */
            break;
        }
        /* {name} or {name:value map} */
        const char *colon = memchr(p + 1, ':', (size_t)(end - p - 1));
        const char *name_end = colon != NULL ? colon : end;
        size_t n = (size_t)(name_end - p - 1);
        const char *map = colon != NULL ? colon + 1 : NULL;
        size_t mlen = colon != NULL ? (size_t)(end - colon - 1) : 0;
        char name[PIPIT_TOOLSPEC_MAX_NAME + 1];
        if (n > PIPIT_TOOLSPEC_MAX_NAME) {
            strbuf_add(&b, p, (size_t)(end - p + 1)); /* refused by the loader: as is */
            p = end + 1;
            continue;
        }
        memcpy(name, p + 1, n);
        name[n] = '\0';
        const json_t *v = NULL;
        /* {error} and {code} are a failure's; a success's are the call's argument or result
         * of that name when it has one ("Recipe program {code} is running.") */
        bool own = json_object_get(args, name) != NULL || json_object_get(data, name) != NULL;
        if (strcmp(name, "error") == 0 && ((error != NULL && error[0] != '\0') || !own)) {
            strbuf_str(&b, error != NULL ? error : "");
        } else if (strcmp(name, "code") == 0 && ((code != NULL && code[0] != '\0') || !own)) {
            strbuf_str(&b, code != NULL ? code : "");
        } else if ((v = json_object_get(args, name)) != NULL ||
                   (v = json_object_get(data, name)) != NULL) {
            append_value(&b, v, map, mlen, " and ");
        } else if ((v = json_object_get(limits, name)) != NULL) {
            append_value(&b, v, map, mlen, " or ");
        } else {
            strbuf_str(&b, name);
        }
        p = end + 1;
    }
    char *out = strbuf_take(&b);
    if (out != NULL) {
        singular_after_one(out);
        out = an_before_vowel(out);
    }
    return out;
}

/* ============================================================================ refusals */

/* The schema and the value at a validation problem's path ("args", "args.level",
 * "args.items[2].x"); *schema is NULL when the path leaves the schema (an unknown argument). */
static void resolve_path(const struct pipit_schema *root,
                         const json_t *args,
                         const char *path,
                         const struct pipit_schema **schema,
                         const json_t **value,
                         char *last,
                         size_t last_size) {
    const struct pipit_schema *s = root;
    const json_t *v = args;
    last[0] = '\0';
    const char *p = strncmp(path, "args", 4) == 0 ? path + 4 : "";
    while (*p != '\0' && s != NULL) {
        if (*p == '.') {
            const char *e = p + 1;
            while (*e != '\0' && *e != '.' && *e != '[') {
                e++;
            }
            size_t n = (size_t)(e - p - 1);
            const struct pipit_schema *next = NULL;
            for (size_t i = 0; s->type == PIPIT_SCHEMA_OBJECT && i < s->n_props; i++) {
                if (strlen(s->props[i].name) == n && memcmp(s->props[i].name, p + 1, n) == 0) {
                    next = s->props[i].schema;
                    v = json_object_get(v, s->props[i].name);
                    snprintf(last, last_size, "%s", s->props[i].name);
                }
            }
            s = next;
            p = e;
        } else if (*p == '[') {
            char *e = NULL;
            unsigned long long i = strtoull(p + 1, &e, 10);
            s = s->type == PIPIT_SCHEMA_ARRAY ? s->items : NULL;
            v = json_array_get(v, (size_t)i);
            p = e != NULL && *e == ']' ? e + 1 : "";
        } else {
            s = NULL;
        }
    }
    *schema = s;
    *value = v;
}

/* The enum values of `s` as a new array (borrowed nodes increfed). */
static json_t *enum_values(const struct pipit_schema *s) {
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < s->n_enum; i++) {
        json_array_append(a, (json_t *)s->enum_json[i]);
    }
    return a;
}

static bool enum_has(const struct pipit_schema *s, const json_t *v) {
    for (size_t i = 0; i < s->n_enum; i++) {
        if (s->type == PIPIT_SCHEMA_STRING
                ? json_is_string(v) && strcmp(s->enum_str[i], json_string_value(v)) == 0
                : json_is_number(v) && s->enum_num[i] == json_number_value(v)) {
            return true;
        }
    }
    return false;
}

/* The argument's name as words ("timer_seconds" -> "timer seconds"). */
static void append_words(struct strbuf *b, const char *name) {
    for (const char *c = name; *c != '\0'; c++) {
        strbuf_add(b, *c == '_' || *c == '-' ? " " : c, 1);
    }
}

/* `{error}` of a refusal for a limit, as a person reads it: "percent must be between 1 and
 * 100", "mode must be auto, day or night" (instead of validation's "percent: 150 is above the
 * maximum 100"). NULL when `why` is no limit or the schema has none to name. */
static char *limit_error(const char *why, const char *arg, const json_t *limits) {
    const json_t *lo = json_object_get(limits, "min"), *hi = json_object_get(limits, "max");
    const json_t *allowed = json_object_get(limits, "allowed");
    bool range = strcmp(why, RENDER_OUT_OF_RANGE) == 0 && (lo != NULL || hi != NULL);
    bool listed = strcmp(why, RENDER_NOT_ALLOWED) == 0 && json_array_size(allowed) > 0 &&
                  json_array_size(allowed) <= 12;
    bool whole = json_is_true(json_object_get(limits, "whole"));
    if (arg[0] == '\0' || (!range && !listed && !whole)) {
        return NULL;
    }
    struct strbuf b = {0};
    append_words(&b, arg);
    if (whole) {
        strbuf_str(&b, " takes whole numbers only");
    } else if (listed) {
        size_t n = json_array_size(allowed);
        strbuf_str(&b, n == 1 ? " must be " : " must be one of ");
        for (size_t i = 0; i < n; i++) {
            const json_t *v = json_array_get(allowed, i);
            strbuf_str(&b, i == 0 ? "" : i + 1 == n ? " or " : ", ");
            if (json_is_string(v)) {
                append_words(&b, json_string_value(v));
            } else {
                append_scalar(&b, v, NULL, 0);
            }
        }
    } else if (lo != NULL && hi != NULL) {
        strbuf_str(&b, " must be between ");
        append_scalar(&b, lo, NULL, 0);
        strbuf_str(&b, " and ");
        append_scalar(&b, hi, NULL, 0);
    } else {
        strbuf_str(&b, lo != NULL ? " must be at least " : " must be at most ");
        append_scalar(&b, lo != NULL ? lo : hi, NULL, 0);
    }
    return strbuf_take(&b);
}

char *render_refusal(const struct pipit_toolset *ts,
                     size_t tool,
                     const json_t *args,
                     const struct pipit_arg_problem *problem,
                     char *code,
                     size_t code_size) {
    const struct pipit_tool *t = pipit_toolset_tool(ts, tool);
    const char *why = RENDER_INVALID_ARGUMENTS;
    json_t *limits = json_object();
    char arg[PIPIT_TOOLSPEC_MAX_NAME + 1] = "";
    char error[sizeof(problem->path) + sizeof(problem->message) + 4] = "";
    if (t != NULL && problem != NULL) {
        const struct pipit_schema *s = NULL;
        const json_t *v = NULL;
        resolve_path(t->params, args, problem->path, &s, &v, arg, sizeof(arg));
        bool number =
            s != NULL && (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER);
        if (s != NULL && s->n_enum > 0 && (number || s->type == PIPIT_SCHEMA_STRING)) {
            json_object_set_new(limits, "allowed", enum_values(s));
            bool typed =
                number ? json_is_number(v) && (s->type == PIPIT_SCHEMA_NUMBER ||
                                               json_number_value(v) == floor(json_number_value(v)))
                       : json_is_string(v);
            if (typed && !enum_has(s, v)) {
                why = RENDER_NOT_ALLOWED;
            }
        }
        if (number && s->n_enum == 0) {
            if (s->has_min) {
                json_object_set_new(limits, "min", json_real(s->min));
            }
            if (s->has_max) {
                json_object_set_new(limits, "max", json_real(s->max));
            }
            double d = json_is_number(v) ? json_number_value(v) : 0;
            if (json_is_number(v) && s->type == PIPIT_SCHEMA_INTEGER && d != floor(d)) {
                json_object_set_new(limits, "whole", json_true()); /* "two and a half minutes" */
            }
            if (json_is_number(v) && (s->type == PIPIT_SCHEMA_NUMBER || d == floor(d)) &&
                ((s->has_min && d < s->min) || (s->has_max && d > s->max))) {
                why = RENDER_OUT_OF_RANGE;
            }
        }
        if (arg[0] != '\0') {
            json_object_set_new(limits, "argument", json_string(arg));
        }
        const char *where = strncmp(problem->path, "args.", 5) == 0 ? problem->path + 5 : "";
        snprintf(error, sizeof(error), "%s%s%s", where, where[0] != '\0' ? ": " : "",
                 problem->message);
    }
    if (code != NULL && code_size > 0) {
        snprintf(code, code_size, "%s", why);
    }
    const char *tmpl = pipit_toolset_failure_template(ts, tool, why);
    char *human = limit_error(why, arg, limits);
    char *sentence =
        render_template_limits(tmpl, args, NULL, limits, human != NULL ? human : error, why);
    free(human);
    json_decref(limits);
    return sentence;
}

/* ============================================================================ narration */

/* Phrases that claim something was done. Matched on lower-cased text at word starts. */
static const char *const CLAIMS[] = {
    "i've ",       "i have ",     "i just ",     "i turned ",  "i set ",
    "i switched ", "i took ",     "i started ",  "i stopped ", "i enabled ",
    "i disabled ", "i changed ",  "i zoomed ",   "i locked ",  "i unlocked ",
    "i adjusted ", "i sent ",     "i created ",  "i opened ",  "is now ",
    "are now ",    "has been ",   "have been ",  "now on",     "now off",
    "turned on",   "turned off",  "switched to", "set to ",    "zoomed in",
    "zoomed out",  "photo taken", "done",        "all set",    "recording started",
    "it's on",     "it's off",
};

/* Words of tool names too generic to say which thing was changed. */
static const char *const GENERIC[] = {"set",  "get",    "take",    "adjust", "switch", "with",
                                      "read", "create", "find",    "open",   "cancel", "process",
                                      "send", "append", "request", "search", "share",  "status"};

static bool word_at(const char *text, const char *pos) {
    return pos == text || !isalpha((unsigned char)pos[-1]);
}

static bool contains_word_start(const char *hay, const char *needle) {
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
        if (word_at(hay, p)) {
            return true;
        }
    }
    return false;
}

bool render_is_garbled(const char *text, const struct pipit_toolset *ts) {
    if (text == NULL) {
        return false;
    }
    size_t quotes = 0;
    for (const char *p = text; *p != '\0'; p++) {
        if (strchr("<>=(){}", *p) != NULL) {
            return true;
        }
        quotes += *p == '"';
    }
    if (quotes % 2 != 0) {
        return true;
    }
    for (size_t t = 0; ts != NULL && t < ts->n_tools; t++) {
        const struct pipit_tool *tool = &ts->tools[t];
        if (strchr(tool->name, '_') != NULL && strstr(text, tool->name) != NULL) {
            return true;
        }
        for (size_t i = 0; tool->params != NULL && i < tool->params->n_props; i++) {
            const char *arg = tool->params->props[i].name;
            if (strchr(arg, '_') != NULL && strstr(text, arg) != NULL) {
                return true;
            }
        }
    }
    return false;
}

bool render_is_acknowledgement(const char *text) {
    static const char *const ACKS[] = {"okay",       "ok",
                                       "sure",       "done",
                                       "alright",    "all right",
                                       "got it",     "will do",
                                       "on it",      "right away",
                                       "certainly",  "of course",
                                       "sure thing", "consider it done",
                                       "no problem"};
    if (text == NULL) {
        return false;
    }
    char low[64];
    size_t n = 0;
    for (const char *p = text; *p != '\0'; p++) {
        if (n + 1 >= sizeof(low)) {
            return false; /* longer than any acknowledgement */
        }
        if (!strchr(".!,", *p)) {
            low[n++] = (char)tolower((unsigned char)*p);
        }
    }
    while (n > 0 && low[n - 1] == ' ') {
        n--;
    }
    low[n] = '\0';
    const char *l = low + strspn(low, " ");
    for (size_t i = 0; i < sizeof(ACKS) / sizeof(ACKS[0]); i++) {
        if (strcmp(l, ACKS[i]) == 0) {
            return true;
        }
    }
    return false;
}

bool render_claims_action(const char *text, const struct pipit_toolset *ts) {
    if (text == NULL || ts == NULL) {
        return false;
    }
    char low[1024];
    size_t n = 0;
    for (; text[n] != '\0' && n + 1 < sizeof(low); n++) {
        low[n] = (char)tolower((unsigned char)text[n]);
    }
    low[n] = '\0';
    bool claim = false;
    for (size_t i = 0; i < sizeof(CLAIMS) / sizeof(CLAIMS[0]) && !claim; i++) {
        claim = contains_word_start(low, CLAIMS[i]);
    }
    if (!claim) {
        return false;
    }
    /* ...about something a tool controls: a distinctive word of a tool's name */
    for (size_t t = 0; t < ts->n_tools; t++) {
        const char *name = ts->tools[t].name;
        char word[72];
        size_t w = 0;
        for (const char *p = name;; p++) {
            if (*p == '_' || *p == '\0') {
                word[w] = '\0';
                bool generic = w < 3;
                for (size_t g = 0; g < sizeof(GENERIC) / sizeof(GENERIC[0]) && !generic; g++) {
                    generic = strcmp(word, GENERIC[g]) == 0;
                }
                if (!generic && contains_word_start(low, word)) {
                    return true;
                }
                w = 0;
                if (*p == '\0') {
                    break;
                }
            } else if (w + 1 < sizeof(word)) {
                word[w++] = (char)tolower((unsigned char)*p);
            }
        }
    }
    return false;
}

char *render_no_tool_sentence(const char *segment, const char *verb) {
    static const char *const TAIL = ": none of my tools does that, so I did nothing.";
    const char *words = verb != NULL ? verb : segment != NULL ? segment : "";
    size_t n = strlen(words);
    while (n > 0 && strchr(" .!?,;:", words[n - 1]) != NULL) {
        n--; /* "take a photo!" */
    }
    if (n > 200) {
        n = 200;
        while (n > 0 && ((unsigned char)words[n] & 0xC0) == 0x80) {
            n--; /* a whole character */
        }
    }
    size_t size = n + strlen(TAIL) + 32;
    char *out = malloc(size);
    if (out == NULL) {
        return NULL;
    }
    if (n == 0) {
        pipit_format(out, size, "None of my tools does that, so I did nothing.");
    } else if (verb != NULL) {
        char first = words[0];
        if (first >= 'A' && first <= 'Z' && n > 1 && words[1] >= 'a' && words[1] <= 'z') {
            first = (char)(first - 'A' + 'a'); /* "Take a photo" -> "take a photo" */
        }
        pipit_format(out, size, "I can't %c%.*s%s", first, (int)(n - 1), words + 1, TAIL);
    } else {
        pipit_format(out, size, "I can't do \"%.*s\"%s", (int)n, words, TAIL);
    }
    return out;
}

const char *render_no_action_sentence(void) {
    return "I haven't changed anything: no action was taken. Please say it again as a command.";
}
