/*
 * agent_said.c - what a segment says (agent_said.h).
 */
#include "agent_said.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A segment with one of these negates what it asks: the guards leave the model's call. */
static const char *const NEGATIONS[] = {"not",  "dont", "no",   "never",    "without", "doesnt",
                                        "isnt", "cant", "wont", "shouldnt", "nothing"};

bool agent_said_phrase(const struct words_tok *t, size_t n, const char *phrase) {
    for (size_t i = 0; i < n; i++) {
        if (words_match(t, n, i, phrase) > 0) {
            return true;
        }
    }
    return false;
}

bool agent_said_any(const struct words_tok *t, size_t n, const char *const *list, size_t n_list) {
    for (size_t k = 0; k < n_list; k++) {
        if (agent_said_phrase(t, n, list[k])) {
            return true;
        }
    }
    return false;
}

bool agent_said_negation(const struct words_tok *t, size_t n) {
    /* a negation in a clause of purpose or reason negates that clause, not the request: "lock
     * the panel so the toddler can't mess with it" */
    static const char *const SUBORDINATE[] = {"so",    "because", "since", "otherwise",
                                              "cause", "coz",     "cos"};
    size_t end = n;
    for (size_t i = 1; i < n && end == n; i++) {
        end = words_in_list(t[i].w, SUBORDINATE, N_OF(SUBORDINATE)) ? i : n;
    }
    return agent_said_any(t, end, NEGATIONS, N_OF(NEGATIONS));
}

bool agent_said_put_args(struct pipit_call *call, const json_t *args, bool changed) {
    char *text =
        changed ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
                : NULL;
    if (text == NULL) {
        return false;
    }
    free(call->args_json);
    call->args_json = text;
    return true;
}

bool agent_said_replace_call(struct pipit_call *call, const struct pipit_tool *t, json_t *args) {
    char *dump = args != NULL ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
    json_decref(args);
    if (dump == NULL || strlen(t->name) >= sizeof(call->name)) {
        free(dump);
        return false;
    }
    free(call->args_json);
    call->args_json = dump;
    memcpy(call->name, t->name, strlen(t->name) + 1);
    return true;
}

json_t *agent_said_number(double v) {
    return fabs(v - floor(v)) < 1e-9 && fabs(v) < 1e12 ? json_integer((json_int_t)v) : json_real(v);
}

bool agent_said_value(const struct words_tok *t, size_t n, const char *v) {
    char ph[WORDS_CAP * 2];
    size_t len = v != NULL ? strlen(v) : 0;
    if (len == 0 || len >= sizeof(ph)) {
        return false;
    }
    for (size_t i = 0; i <= len; i++) {
        ph[i] = v[i] == '_' || v[i] == '-' ? ' ' : (char)tolower((unsigned char)v[i]);
    }
    return agent_said_phrase(t, n, ph);
}
