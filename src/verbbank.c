/*
 * verbbank.c - groups of command verbs people use for one another (verbbank.h).
 */
#include "verbbank.h"

#include <stdbool.h>
#include <string.h>

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Each row is a verb and the verbs people use for it, NULL-terminated; a verb opens one row.
 * Only verbs that keep the rest of the sentence grammatical ("find the report" / "look for the
 * report"), and no verb that says the opposite side of a switch. */
static const char *const GROUPS[][VERBBANK_MAX_ALT + 1] = {
    {"take", "grab", "get", NULL},
    {"snap", "take", "grab", "capture", "get", NULL},
    {"shoot", "take", "grab", "capture", "snap", "fire", NULL},
    {"start", "begin", "kick off", "launch", "fire up", "start up", NULL},
    {"stop", "end", "halt", "shut down", "power down", "kill", NULL},
    {"pause", "hold", NULL},
    {"resume", "continue", "unpause", "carry on", "keep going", NULL},
    {"open", "bring up", "pull up", NULL},
    {"show me", "let me see", "pull up", "bring up", NULL},
    {"show", "display", "bring up", NULL},
    {"close", "shut", "dismiss", NULL},
    {"call", "ring", "phone", "dial", NULL},
    {"delete", "remove", "erase", "get rid of", NULL},
    {"cancel", "call off", "drop", NULL},
    {"find", "look for", "search for", "locate", NULL},
    {"look for", "find", "search for", "locate", NULL},
    {"search for", "find", "look for", NULL},
    {"look up", "find", "check", NULL},
    {"mute", "silence", NULL},
    {"create", "make", "start", NULL},
    {"make", "create", NULL},
    {"add", "put", "append", NULL},
    {"play", "put on", NULL},
    {"check", "look at", "check on", NULL},
    {"send", "forward", NULL},
    {"share", "send", "forward", "upload", "post", NULL},
    {"name", "label", "title", "call", NULL},
    {"tell", "text", "message", NULL},
    {"log", "file", "raise", "submit", NULL},
    {"book", "order", "get", NULL},
    {"get me", "book me", "order me", "grab me", NULL},
    {"navigate to", "take me to", "get me to", "directions to", "route to", NULL},
    {"take me to", "navigate to", "get me to", "directions to", NULL},
    {"walk me to", "navigate to", "take me to", "directions to", NULL},
    {"drive me to", "navigate to", "take me to", "directions to", NULL},
    {"drive to", "navigate to", "directions to", NULL},
    {"walk to", "navigate to", "directions to", NULL},
    {"cycle to", "navigate to", "directions to", NULL},
    {"bike to", "navigate to", "directions to", NULL},
    {"turn on", "switch on", NULL},
    {"turn off", "switch off", "shut off", NULL},
    {"kill", "turn off", "switch off", "shut off", NULL},
    {"switch on", "turn on", NULL},
    {"switch off", "turn off", NULL},
    {"raise", "increase", "bump up", NULL},
    {"increase", "raise", "bump up", NULL},
    {"lower", "decrease", "reduce", NULL},
    {"decrease", "lower", "reduce", NULL},
    {"reduce", "lower", "decrease", NULL},
    {"wake me", "get me up", NULL},
    {"read", "read out", "read me", NULL},
    {"lock", "secure", NULL},
    {"clear", "empty", NULL},
    {"set up", "schedule", NULL},
    {"schedule", "set up", "plan", NULL},
    {"remind me", "give me a reminder", NULL},
    {"record", "capture", NULL},
};

/* Whether `member` opens `text` as whole words. */
static bool opens(const char *text, const char *member) {
    size_t n = strlen(member);
    return strncmp(text, member, n) == 0 && (text[n] == ' ' || text[n] == '\0');
}

const char *verbbank_lead(const char *text, size_t *len) {
    const char *best = NULL;
    size_t best_n = 0;
    for (int g = 0; g < N_OF(GROUPS); g++) {
        const char *m = GROUPS[g][0];
        size_t n = strlen(m);
        if (n > best_n && opens(text, m)) {
            best = m;
            best_n = n;
        }
    }
    if (len != NULL) {
        *len = best_n;
    }
    return best;
}

int verbbank_alternatives(const char *verb, const char *alt[VERBBANK_MAX_ALT]) {
    for (int g = 0; g < N_OF(GROUPS); g++) {
        if (strcmp(GROUPS[g][0], verb) == 0) {
            int n = 0;
            for (int j = 1; j <= VERBBANK_MAX_ALT && GROUPS[g][j] != NULL; j++) {
                alt[n++] = GROUPS[g][j];
            }
            return n;
        }
    }
    return 0;
}

bool verbbank_says(const char *verb, const char *w) {
    const char *alt[VERBBANK_MAX_ALT];
    int n = verb != NULL && w != NULL ? verbbank_alternatives(verb, alt) : 0;
    for (int k = 0; k < n; k++) {
        if (strcmp(alt[k], w) == 0) {
            return true;
        }
    }
    return false;
}
