/*
 * agent_question.c - questions and requests not to act (docs/agent.md, "A question never acts",
 * "To the cloud", "Asked not to"): whether a segment asks rather than requests, whether a
 * question is about the world (the cloud's) or keeps the model's call from acting, and whether
 * the person asked for something not to be done. Above the guards (agent_switch.h: what a
 * segment says of a call), below the step.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_question.h"

#include "agent_said.h"
#include "agent_switch.h"
#include "toolspec.h"
#include "words.h"

#include <jansson.h>
#include <string.h>
#include <strings.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Dropped before the question word. */
static const char *const Q_LEADS[] = {
    "hey",   "so",      "and",           "ok",       "okay", "um",   "uh",
    "oh",    "wait",    "but",           "also",     "then", "well", "hmm",
    "pipit", "roughly", "approximately", "honestly", "quick"};

/* Yes/no questions: a copula or auxiliary first ("do" only before a subject: "do it again"
 * is a command; not "were": the words drop apostrophes, and "we're doing the cake" is not a
 * question). */
static const char *const Q_YES_NO[] = {"is",   "isnt",   "are", "arent", "am",  "was",
                                       "does", "doesnt", "did", "didnt", "has", "hasnt"};

/* Wh-questions ("how" only of a quantity or state: "how do I ..." asks for help, often wanting
 * it done). */
static const char *const Q_WH[] = {"what", "whats", "which", "where", "wheres", "who",
                                   "whos", "when",  "whens", "why",   "whatre", "any"};
static const char *const Q_HOW_OF[] = {"much",  "many",   "long", "bright", "warm", "cold",
                                       "hot",   "loud",   "big",  "far",    "high", "low",
                                       "close", "zoomed", "is",   "are",    "s",    "dark"};

/* Words that make a question a request: "is it possible to ...", "are you able to ...",
 * "is there a way to ...", "would you mind ...", "what about 3x?", "what if ...". */
static const char *const Q_REQUEST[] = {"possible", "able",  "way",   "mind",   "about",
                                        "if",       "can",   "could", "please", "lets",
                                        "want",     "wanna", "need",  "try"};
/* ... and these only before "you" ("will you zoom in?", "should we zoom in?"): "how long will
 * it run?" and "should I water the tomatoes?" ask. */
static const char *const Q_REQUEST_YOU[] = {"would", "will", "shall", "should"};

/* Two sides of one state offered as a choice ("on or off", "open or closed"): only a question
 * offers both. */
static const char *const SIDES[][2] = {
    {"on", "off"},          {"open", "closed"},     {"open", "shut"}, {"enabled", "disabled"},
    {"locked", "unlocked"}, {"running", "stopped"}, {"yes", "no"}};

static bool offers_both_sides(const struct words_tok *t, size_t n) {
    for (size_t k = 1; k + 1 < n; k++) {
        for (size_t s = 0; strcmp(t[k].w, "or") == 0 && s < N_OF(SIDES); s++) {
            for (int a = 0; a < 2; a++) {
                if (strcmp(t[k - 1].w, SIDES[s][a]) == 0 && strcmp(t[k + 1].w, SIDES[s][!a]) == 0) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* Whether tokens `t` open as a question and ask nothing to be done (the lists above), or offer
 * both sides of a state ("kitchen lights on or off?"); `any_how`: every "how" asks ("how do I
 * keep the players sharp"), not only "how" of a quantity. */
static bool asks(const char *segment, const struct words_tok *t, size_t n, bool any_how) {
    if (offers_both_sides(t, n)) {
        return true;
    }
    size_t i = 0;
    while (i < n && words_in_list(t[i].w, Q_LEADS, N_OF(Q_LEADS))) {
        i++;
    }
    if (i + 1 >= n) {
        return false;
    }
    /* words of request count in the question's own clause: "is it going to rain tomorrow?
     * wondering if I can hang the washing out" asks */
    size_t cut = strcspn(segment, "?,;"), scan = i + 2;
    while (scan < n && t[scan].start < cut) {
        scan++;
    }
    static const char *const IF_SO[] = {"so", "yes", "not", "it", "its", "that", "thats"};
    for (size_t k = scan; k + 1 < n; k++) {
        if (strcmp(t[k].w, "if") == 0 && words_in_list(t[k + 1].w, IF_SO, N_OF(IF_SO))) {
            return false; /* "is the flash on? if so turn it off": a request on a condition */
        }
    }
    for (size_t k = i; k < scan && k < n; k++) {
        /* "do I need ...", "would it want ...": asked, not wanted */
        static const char *const AUX[] = {"do", "does", "did", "would"};
        bool asked_need = (strcmp(t[k].w, "need") == 0 || strcmp(t[k].w, "want") == 0) &&
                          ((k >= 2 && words_in_list(t[k - 2].w, AUX, N_OF(AUX))) ||
                           (k >= i + 2 && words_in_list(t[i].w, AUX, N_OF(AUX)))); /* "do the
                           lights need to be on?" */
        if (asked_need) {
            continue;
        }
        /* "the best way to breathe uphill" asks for advice; "is there a way to dim it" asks */
        static const char *const ADVICE_WAY[] = {"best",     "right",    "good",      "easiest",
                                                 "proper",   "correct",  "safest",    "fastest",
                                                 "quickest", "simplest", "healthiest"};
        if (strcmp(t[k].w, "way") == 0 && k > 0 &&
            words_in_list(t[k - 1].w, ADVICE_WAY, N_OF(ADVICE_WAY))) {
            continue;
        }
        bool you = k + 1 < n && (strcmp(t[k + 1].w, "you") == 0 || strcmp(t[k + 1].w, "we") == 0);
        bool modal = strcmp(t[k].w, "can") == 0 || strcmp(t[k].w, "could") == 0;
        if (words_in_list(t[k].w, Q_REQUEST, N_OF(Q_REQUEST)) &&
            (!modal || you || (k + 1 < n && strcmp(t[k + 1].w, "i") == 0))) {
            return false; /* "how long can a phone record" asks; "can I have" requests */
        }
        if (you && words_in_list(t[k].w, Q_REQUEST_YOU, N_OF(Q_REQUEST_YOU))) {
            return false;
        }
    }
    const char *w0 = t[i].w, *w1 = t[i + 1].w;
    if (words_in_list(w0, Q_YES_NO, N_OF(Q_YES_NO)) || words_in_list(w0, Q_WH, N_OF(Q_WH))) {
        return true;
    }
    if (strcmp(w0, "should") == 0) { /* "should I use the grid?" asks for advice */
        return strcmp(w1, "i") == 0;
    }
    if (strcmp(w0, "will") == 0 || strcmp(w0, "would") == 0) { /* "will it fit?" */
        return strcmp(w1, "it") == 0 || strcmp(w1, "that") == 0 || strcmp(w1, "this") == 0;
    }
    if (strcmp(w0, "have") == 0) { /* "have I started recording", not "have a look" */
        return strcmp(w1, "i") == 0 || strcmp(w1, "we") == 0 || strcmp(w1, "you") == 0;
    }
    if (strcmp(w0, "do") == 0) { /* "do I have the flash on?", not "do it again" */
        /* asked with its mark, any subject asks: "do fish actually sleep?", "do the lights
         * need to be on?"; not what is done: "do a water change?", "do it again?" */
        static const char *const DONE[] = {"a",       "an",   "it",   "this", "that",
                                           "me",      "some", "one",  "them", "us",
                                           "another", "what", "both", "all",  "whatever"};
        size_t len = strlen(segment);
        bool marked = len > 0 && segment[len - 1] == '?';
        return strcmp(w1, "i") == 0 || strcmp(w1, "we") == 0 || strcmp(w1, "you") == 0 ||
               strcmp(w1, "they") == 0 || (marked && !words_in_list(w1, DONE, N_OF(DONE)));
    }
    if (strcmp(w0, "how") == 0 || strcmp(w0, "hows") == 0) {
        return any_how || strcmp(w0, "hows") == 0 || words_in_list(w1, Q_HOW_OF, N_OF(Q_HOW_OF));
    }
    /* "explain the exposure triangle", "tell me about night shots": asked as a request */
    static const char *const EXPLAIN[] = {"explain", "describe", "teach"};
    static const char *const TELL_ME[] = {"about", "how", "why", "what", "whether", "if"};
    return any_how && (words_in_list(w0, EXPLAIN, N_OF(EXPLAIN)) ||
                       (strcmp(w0, "tell") == 0 && strcmp(w1, "me") == 0 && i + 2 < n &&
                        words_in_list(t[i + 2].w, TELL_ME, N_OF(TELL_ME))));
}

bool agent_negated_request(const char *segment) {
    static const char *const FILL[] = {"please", "pls",  "ok",    "okay",    "oh",
                                       "hey",    "and",  "but",   "so",      "just",
                                       "no",     "wait", "pipit", "actually"};
    static const char *const ASKS_IT[] = {"forget", "let", "worry", "mind", "hesitate",
                                          "you",    "i",   "we",    "it",   "that"};
    if (segment == NULL) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    size_t i = 0;
    while (i < n && words_in_list(t[i].w, FILL, N_OF(FILL))) {
        i++;
    }
    size_t not = i < n && (strcmp(t[i].w, "dont") == 0 || strcmp(t[i].w, "never") == 0)     ? 1
                 : i + 1 < n && strcmp(t[i].w, "do") == 0 && strcmp(t[i + 1].w, "not") == 0 ? 2
                                                                                            : 0;
    return not > 0 && i + not < n && !words_in_list(t[i + not ].w, ASKS_IT, N_OF(ASKS_IT));
}

bool agent_offers_both_sides(const char *segment) {
    if (segment == NULL) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    return offers_both_sides(t, n);
}

bool agent_asks_the_world(const char *segment) {
    if (segment == NULL) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    return n < GUARD_MAX_TOKENS && asks(segment, t, n, true);
}

bool agent_question_must_not_act(const struct pipit_toolset *ts,
                                 int32_t tool,
                                 const char *segment,
                                 bool command_verb) {
    if (ts == NULL || segment == NULL || tool < 0 || command_verb) {
        return false;
    }
    if ((size_t)tool < ts->n_tools &&
        (pipit_toolset_is_cloud(ts, (size_t)tool) ||
         pipit_toolset_undo(ts, (size_t)tool, NULL, NULL) == PIPIT_UNDO_NO_STATE)) {
        return false; /* it changes nothing: a question may well want it */
    }
    struct words_tok t[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, N_OF(t));
    return n < N_OF(t) && asks(segment, t, n, false); /* a question is short */
}

/* Whether the segment says what the call does: one of its values, or a switch's side ("how do I
 * turn on the grid?"); naming its thing is not enough ("how do I clean the oven?"). */
static bool says_the_call(const struct pipit_call *call,
                          const char *segment,
                          const struct words_tok *t,
                          size_t n) {
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    bool said = json_object_size(args) > 0 && agent_says_a_value_of(args, segment, t, n);
    json_decref(args);
    return said || agent_says_a_side(t, n);
}

bool agent_question_for_cloud(const struct pipit_toolset *ts,
                              const struct pipit_call *call,
                              const char *segment,
                              bool command_verb) {
    int32_t tool = ts != NULL && call != NULL ? pipit_toolset_find(ts, call->name) : -1;
    const struct pipit_tool_pack *tp = tool >= 0 ? pipit_toolset_tool_pack(ts, (size_t)tool) : NULL;
    if (tool < 0 || segment == NULL || command_verb || pipit_toolset_is_cloud(ts, (size_t)tool) ||
        (tp != NULL && tp->effect == PIPIT_EFFECT_READ)) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    /* any "how" asks unless it names the call: "how do I turn on the grid?" wants it on */
    return n < GUARD_MAX_TOKENS &&
           (asks(segment, t, n, false) ||
            (asks(segment, t, n, true) && !says_the_call(call, segment, t, n)));
}

bool agent_asks_about_state(const char *segment) {
    static const char *const ADVICE[] = {
        "good",    "best",    "ideal", "better", "recommend", "should", "normal", "usual",
        "usually", "typical", "safe",  "why",    "explain",   "tips",   "idea",   "too",
        "enough",  "okay",    "ok",    "fine",   "help",      "helps",  "work",   "works",
        "worth",   "will",    "would", "might",  "could",     "take"};
    if (segment == NULL) {
        return false;
    }
    static const char *const HOW_STATE[] = {"bright", "warm",  "hot", "cold", "loud",
                                            "high",   "many",  "low", "dark", "long",
                                            "open",   "close", "far"};
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    if (n >= GUARD_MAX_TOKENS || !asks(segment, t, n, false) ||
        agent_said_any(t, n, ADVICE, N_OF(ADVICE))) {
        return false;
    }
    size_t i = 0;
    while (i < n && words_in_list(t[i].w, Q_LEADS, N_OF(Q_LEADS))) {
        i++;
    }
    if (i + 1 >= n) {
        return false;
    }
    static const char *const STATE_YES_NO[] = {"is", "isnt", "are", "arent", "was", "did", "didnt"};
    if (words_in_list(t[i].w, STATE_YES_NO, N_OF(STATE_YES_NO)) ||
        (strcmp(t[i].w, "do") == 0 && strcmp(t[i + 1].w, "i") == 0)) {
        return true; /* "did I leave the kitchen light on", "are the blinds down?" */
    }
    if (strcmp(t[i].w, "how") == 0) {
        return words_in_list(t[i + 1].w, HOW_STATE, N_OF(HOW_STATE)); /* not "how much money" */
    }
    /* "what colour are ...", "what's the temperature ...": not "what's the difference ...",
     * "who came up with ..." (the caller checks that the word names a key) */
    static const char *const COPULAS[] = {"is",    "are",    "s",  "was",  "were", "am",
                                          "whats", "whatre", "do", "does", "did"};
    return (strcmp(t[i].w, "what") == 0 || strcmp(t[i].w, "whats") == 0 ||
            strcmp(t[i].w, "which") == 0) &&
           agent_said_any(t, n, COPULAS, N_OF(COPULAS)); /* not "what lens for birds" */
}

/* Words too common to tie a question to an example ("any new texts?" and "any unread texts?"
 * share "texts", not "have"). */
static const char *const Q_GLUE[] = {"have", "there", "that", "this", "with", "what", "your",
                                     "from", "some",  "much", "many", "does", "left", "right"};

int32_t agent_question_like_example(const struct pipit_toolset *ts, const char *segment) {
    if (ts == NULL || segment == NULL) {
        return -1;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS), s = 0;
    while (s < n && agent_said_any(t + s, 1, Q_LEADS, N_OF(Q_LEADS))) {
        s++;
    }
    static const char *const WH[] = {"how",  "hows",  "why",   "what", "whats",
                                     "when", "where", "which", "who",  "whose"};
    if (n >= GUARD_MAX_TOKENS || s >= n || agent_said_any(t + s, 1, WH, N_OF(WH))) {
        return -1; /* "how long does a battery last?" asks the world, whatever an example says */
    }
    int32_t found = -1;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *tool = pipit_toolset_tool(ts, i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        bool required = false;
        for (size_t j = 0; tool->params != NULL && j < tool->params->n_props; j++) {
            required = required || tool->params->props[j].required;
        }
        if (tp == NULL || required || pipit_toolset_is_cloud(ts, i)) {
            continue;
        }
        for (size_t e = 0; e < tp->n_examples; e++) {
            const char *say = tp->examples[e].say;
            struct words_tok x[24];
            size_t nx = say != NULL ? words_tokenize(say, strlen(say), 0, x, 24) : 0, xs = 0;
            while (xs < nx && agent_said_any(x + xs, 1, Q_LEADS, N_OF(Q_LEADS))) {
                xs++;
            }
            if (xs >= nx || strcmp(x[xs].w, t[s].w) != 0) {
                continue; /* another opener */
            }
            bool shared = false;
            for (size_t k = xs + 1; k < nx && !shared; k++) {
                if (strlen(x[k].w) >= 4 && !words_in_list(x[k].w, Q_GLUE, N_OF(Q_GLUE))) {
                    shared = agent_said_phrase(t + s + 1, n - s - 1, x[k].w);
                }
            }
            if (shared) {
                if (found >= 0 && found != (int32_t)i) {
                    return -1;
                }
                found = (int32_t)i;
            }
        }
    }
    return found;
}

bool agent_compose_request(const struct pipit_toolset *ts, const char *segment) {
    static const char *const COMPOSE[] = {"write",     "compose",   "draft",    "summarise",
                                          "summarize", "translate", "rephrase", "rewrite"};
    static const char *const LEADS[] = {"please", "pls", "can",  "could", "would", "you",
                                        "just",   "ok",  "okay", "hey",   "now",   "quickly"};
    if (ts == NULL || segment == NULL) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS), v = 0;
    while (v < n && words_in_list(t[v].w, LEADS, sizeof(LEADS) / sizeof(LEADS[0]))) {
        v++;
    }
    if (n >= GUARD_MAX_TOKENS || v >= n ||
        !words_in_list(t[v].w, COMPOSE, sizeof(COMPOSE) / sizeof(COMPOSE[0]))) {
        return false;
    }
    /* a pack whose own examples open with the verb ("write down milk" for a note) owns it */
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        const struct pipit_tool *tool = pipit_toolset_tool(ts, i);
        if (strncasecmp(tool->name, t[v].w, strlen(t[v].w)) == 0 &&
            !pipit_toolset_is_cloud(ts, i)) {
            return false;
        }
        for (size_t e = 0; tp != NULL && e < tp->n_examples && !pipit_toolset_is_cloud(ts, i);
             e++) {
            const char *say = tp->examples[e].say;
            struct words_tok x[8];
            size_t nx = say != NULL ? words_tokenize(say, strlen(say), 0, x, 8) : 0, xv = 0;
            while (xv < nx && words_in_list(x[xv].w, LEADS, sizeof(LEADS) / sizeof(LEADS[0]))) {
                xv++;
            }
            if (xv < nx && strcmp(x[xv].w, t[v].w) == 0) {
                return false;
            }
        }
    }
    return true;
}
