/*
 * agent_dimension.c - a comparative names its quantity (docs/agent.md, "A comparative names
 * its quantity").
 *
 * "a bit warmer please" had made the kitchen light brighter, and "warmer" had switched a lamp
 * to warm white, while the thermostat stayed: a small model hears "warm" and takes a tool it
 * has seen with it. A comparative of a quantity (temperature, brightness, volume, duration)
 * is the step of the one tool that steps that quantity, unless the person named another
 * tool's thing. The quantities are generic English; which tool has one is read from the
 * tools' names, descriptions and arguments.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_dimension.h"

#include "agent_choose.h"
#include "agent_number.h"
#include "agent_said.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

struct quantity {
    const char *up[4], *down[4]; /* comparatives */
    const char *marks[6];        /* words of a tool that steps it */
};

static const struct quantity QUANTITIES[] = {
    {{"warmer", "hotter", NULL},
     {"cooler", "colder", NULL},
     {"celsius", "fahrenheit", "temperature", "thermostat", "heating", NULL}},
    {{"brighter", NULL}, {"dimmer", "darker", NULL}, {"brightness", NULL}},
    {{"louder", NULL}, {"quieter", "softer", NULL}, {"volume", "loudness", NULL}},
    {{"longer", NULL}, {"shorter", NULL}, {"minutes", "seconds", "duration", NULL}},
};

/* Whether tool `t` speaks of quantity `q`: its name, description, or an argument's name or
 * description. */
static bool speaks_of(const struct pipit_tool *t, const struct quantity *q) {
    for (size_t m = 0; q->marks[m] != NULL; m++) {
        bool said = words_contains(t->name, q->marks[m]) ||
                    (t->description != NULL && words_contains(t->description, q->marks[m]));
        for (size_t j = 0; !said && t->params != NULL && j < t->params->n_props; j++) {
            const struct pipit_schema_prop *p = &t->params->props[j];
            said = words_contains(p->name, q->marks[m]) ||
                   (p->schema->description != NULL &&
                    words_contains(p->schema->description, q->marks[m]));
        }
        if (said) {
            return true;
        }
    }
    return false;
}

/* Whether the tokens say one of the NULL-ended `list`. */
static bool said_one_of(const struct words_tok *t, size_t n, const char *const *list) {
    size_t k = 0;
    while (list[k] != NULL) {
        k++;
    }
    return agent_said_any(t, n, list, k);
}

bool agent_restore_dimension_step(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call) {
    if (ts == NULL || segment == NULL || call == NULL || tool < -1 ||
        (tool >= 0 && (size_t)tool >= ts->n_tools)) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    if (n >= GUARD_MAX_TOKENS || agent_said_negation(t, n)) {
        return false;
    }
    const struct quantity *q = NULL;
    int dir = 0;
    for (size_t k = 0; k < N_OF(QUANTITIES); k++) {
        int d = said_one_of(t, n, QUANTITIES[k].up)     ? 1
                : said_one_of(t, n, QUANTITIES[k].down) ? -1
                                                        : 0;
        if (d != 0) {
            if (q != NULL) {
                return false; /* two quantities */
            }
            q = &QUANTITIES[k];
            dir = d;
        }
    }
    if (q == NULL || (tool >= 0 && speaks_of(pipit_toolset_tool(ts, (size_t)tool), q))) {
        return false; /* no comparative, or the model's tool has that quantity */
    }
    int32_t step = -1, setter = -1;
    size_t n_setters = 0;
    const struct pipit_schema_prop *num = NULL;
    for (size_t i = 0; i < ts->n_tools; i++) {
        const struct pipit_tool *ti = pipit_toolset_tool(ts, i);
        bool of_q = speaks_of(ti, q);
        if (!of_q && !pipit_toolset_is_cloud(ts, i) && agent_names_tool(ts, i, segment)) {
            return false; /* "make the lights warmer": the light's */
        }
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
        if (of_q && tp != NULL && tp->has_step) {
            if (step >= 0) {
                return false;
            }
            step = (int32_t)i;
        }
        /* a tool of that quantity whose only required argument is a number, that sets it */
        size_t n_req = 0;
        const struct pipit_schema_prop *req = pipit_tool_only_required(ti, &n_req);
        if (of_q && tp != NULL && !tp->has_step && tp->n_set > 0 && n_req == 1 &&
            (req->schema->type == PIPIT_SCHEMA_NUMBER ||
             req->schema->type == PIPIT_SCHEMA_INTEGER)) {
            setter = (int32_t)i;
            num = req;
            n_setters++;
        }
    }
    if (step < 0) {
        /* "a bit brighter, like 75" -> set_flow(75): no step of it, but one setter and the one
         * number said, the value to reach */
        double v[GUARD_MAX_NUMBERS];
        if (n_setters != 1 || tool < 0 ||
            agent_person_numbers(segment, num, v, GUARD_MAX_NUMBERS) != 1) {
            return false;
        }
        return agent_number_call(ts, setter, num, v[0], call);
    }
    const struct pipit_tool *st = pipit_toolset_tool(ts, (size_t)step);
    const struct pipit_tool_pack *sp = pipit_toolset_tool_pack(ts, (size_t)step);
    json_t *had = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    json_t *args = json_object();
    if (sp->step.sign.arg != NULL && json_is_object(sp->step.sign.map)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)sp->step.sign.map, k, v) {
            if (json_is_number(v) && json_number_value(v) * dir > 0 &&
                json_object_get(args, sp->step.sign.arg) == NULL) {
                json_object_set_new(args, sp->step.sign.arg, json_string(k));
            }
        }
    }
    if (sp->step.by.arg != NULL && sp->step.by.map == NULL) {
        double said[2], raw[2], least = 0;
        for (size_t e = 0; e < sp->n_examples; e++) {
            json_t *x = json_object_get(sp->examples[e].args, sp->step.by.arg);
            double ax = json_is_number(x) ? fabs(json_number_value(x)) : 0;
            least = ax > 0 && (least == 0 || ax < least) ? ax : least;
        }
        double by = agent_numbers_written(segment, 0, said, raw, 2) == 1 ? fabs(said[0])
                    : least > 0                                          ? least
                                                                         : 1;
        bool signed_by = sp->step.sign.arg == NULL;
        json_object_set_new(args, sp->step.by.arg, agent_said_number(signed_by ? dir * by : by));
    }
    if (sp->step.key.key_arg != NULL) { /* a key per place: the model's place */
        json_t *place = json_object_get(had, sp->step.key.key_arg);
        if (place != NULL) {
            json_object_set(args, sp->step.key.key_arg, place);
        }
    }
    json_decref(had);
    bool whole = true;
    for (size_t j = 0; whole && st->params != NULL && j < st->params->n_props; j++) {
        whole = !st->params->props[j].required ||
                json_object_get(args, st->params->props[j].name) != NULL;
    }
    if (!whole) {
        json_decref(args);
        return false;
    }
    return agent_said_replace_call(call, st, args);
}

bool agent_dimension_call(const struct pipit_toolset *ts,
                          const char *segment,
                          struct pipit_call *call) {
    if (segment == NULL || call == NULL || strchr(segment, '?') != NULL) {
        return false;
    }
    struct words_tok t[2];
    static const char *const ASKS[] = {"what", "whats", "how", "hows", "is",  "are",   "was",
                                       "does", "do",    "did", "why",  "can", "could", "should"};
    if (words_tokenize(segment, strlen(segment), 0, t, 2) > 0 &&
        agent_said_any(t, 1, ASKS, N_OF(ASKS))) {
        return false; /* "is it warmer outside" asks */
    }
    memset(call, 0, sizeof(*call));
    if (agent_restore_dimension_step(ts, -1, segment, call)) {
        return true;
    }
    pipit_call_clear(call);
    return false;
}
