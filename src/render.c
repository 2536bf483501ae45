/*
 * render.c - sentences from templates and real results; the narration check.
 */
#include "render.h"

#include "status.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void append_value(struct strbuf *b, const json_t *v) {
    char num[64];
    switch (json_typeof(v)) {
        case JSON_STRING:
            strbuf_str(b, json_string_value(v));
            break;
        case JSON_INTEGER:
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            strbuf_str(b, num);
            break;
        case JSON_REAL:
            snprintf(num, sizeof(num), "%g", json_real_value(v));
            strbuf_str(b, num);
            break;
        case JSON_TRUE:
            strbuf_str(b, "on");
            break;
        case JSON_FALSE:
            strbuf_str(b, "off");
            break;
        case JSON_NULL:
            strbuf_str(b, "nothing");
            break;
        default: {
            char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            if (d != NULL) {
                strbuf_str(b, d);
                free(d);
            }
            break;
        }
    }
}

char *render_template(const char *tmpl,
                      const json_t *args,
                      const json_t *data,
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
        if (end == NULL || end - p - 1 > 64) {
            strbuf_str(&b, p); /* unbalanced (the spec loader refuses these): print as is */
            break;
        }
        char name[72];
        size_t n = (size_t)(end - p - 1);
        memcpy(name, p + 1, n);
        name[n] = '\0';
        const json_t *v = NULL;
        if (strcmp(name, "error") == 0) {
            strbuf_str(&b, error != NULL ? error : "");
        } else if (strcmp(name, "code") == 0) {
            strbuf_str(&b, code != NULL ? code : "");
        } else if ((v = json_object_get(args, name)) != NULL ||
                   (v = json_object_get(data, name)) != NULL) {
            append_value(&b, v);
        } else {
            strbuf_str(&b, name);
        }
        p = end + 1;
    }
    return strbuf_take(&b);
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

const char *render_no_action_sentence(void) {
    return "I haven't changed anything: no action was taken. Please say it again as a command.";
}
