/*
 * agent_followup.c - follow-ups of the last action (agent_followup.h).
 *
 * "again", "one more", "a bit more", "the other way", "try again" name no tool and no value:
 * the router says which kind a segment is (router_followup()), and the harness, not the
 * model, makes the call from the last action it ran. A small model reads such a segment
 * without anything to anchor it and calls whatever its weights prefer; the harness has the
 * action itself: it repeats it ("again"), steps it on or back ("a bit more", "the other way",
 * "dimmer still": a relative step by its sign, a setting by the change it made), or gives it
 * another number ("make it 10"; after a question about one key, that key's setter). What it
 * cannot do (a photo "a bit more") is left to the model.
 */
#include "agent_followup.h"

#include "agent_choose.h"
#include "agent_named.h"
#include "agent_number.h"
#include "agent_question.h"
#include "agent_said.h"
#include "memory.h"
#include "render.h"
#include "router.h"
#include "smalltalk.h"
#include "toolspec.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void agent_followup_remember(struct pipit_agent *a,
                             int32_t tool,
                             const json_t *args,
                             bool ok,
                             const char *code) {
    a->last_ok = ok;
    pipit_format(a->last_code, sizeof(a->last_code), "%s", !ok && code != NULL ? code : "");
    a->asked_key[0] = '\0'; /* the action is the newer referent */
    json_decref(a->last_args);
    a->last_args = json_is_object(args) ? json_deep_copy(args) : NULL;
    a->last_tool = a->last_args != NULL ? tool : -1;
    a->last_utt = a->utt_seq;
    if (!ok && a->last_tool >= 0) { /* "ok send it now", a turn later */
        json_decref(a->failed_args);
        a->failed_args = json_deep_copy(a->last_args);
        a->failed_tool = a->failed_args != NULL ? tool : -1;
    } else if (ok && tool == a->failed_tool) {
        json_decref(a->failed_args);
        a->failed_args = NULL;
        a->failed_tool = -1;
    }
}

void agent_followup_asked(struct pipit_agent *a, const char *key) {
    snprintf(a->asked_key, sizeof(a->asked_key), "%s", key != NULL ? key : "");
}

void agent_followup_forget(struct pipit_agent *a) {
    a->asked_key[0] = '\0';
    json_decref(a->last_args);
    a->last_args = NULL;
    a->last_tool = -1;
    json_decref(a->failed_args);
    a->failed_args = NULL;
    a->failed_tool = -1;
}

/* The other key of a two-entry map whose numbers have opposite signs ({"in": 1, "out": -1}),
 * NULL otherwise. */
static const char *other_side(const json_t *map, const char *key) {
    if (!json_is_object(map) || json_object_size(map) != 2 || key == NULL) {
        return NULL;
    }
    const char *k, *other = NULL;
    const json_t *v;
    double product = 1;
    json_object_foreach((json_t *)map, k, v) {
        if (!json_is_number(v)) {
            return NULL;
        }
        product *= json_number_value(v);
        if (strcmp(k, key) != 0) {
            other = k;
        }
    }
    return product < 0 ? other : NULL;
}

/* The last call turned round (`back`) or kept (`!back`) when its step depends on its arguments;
 * false when it does not step by an amount the arguments choose. */
static bool relative(const struct pipit_agent *a, json_t *args, bool back) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    if (tp == NULL || !tp->has_step) {
        return false;
    }
    const struct pipit_effect_value *sign = &tp->step.sign, *by = &tp->step.by;
    if (sign->arg != NULL) {
        const char *now = json_string_value(json_object_get(args, sign->arg));
        const char *other = other_side(sign->map, now);
        if (other == NULL) {
            return false;
        }
        return !back || json_object_set_new(args, sign->arg, json_string(other)) == 0;
    }
    if (by->arg != NULL && by->map == NULL) {
        json_t *v = json_object_get(args, by->arg);
        if (!json_is_number(v) || json_number_value(v) == 0) {
            return false;
        }
        if (!back) {
            return true;
        }
        json_t *neg = json_is_integer(v) ? json_integer(-json_integer_value(v))
                                         : json_real(-json_number_value(v));
        return json_object_set_new(args, by->arg, neg) == 0;
    }
    return false;
}

/* Words around a direction said alone: "dimmer still", "a bit brighter", "brighter please". */
static const char *const AROUND[] = {"still", "even", "a",     "bit",    "touch",    "little",
                                     "tad",   "more", "again", "please", "ok",       "okay",
                                     "and",   "now",  "just",  "hmm",    "slightly", "notch"};

/* "dimmer still" after a brightness step: the segment, without the words around it, is one
 * value of the enum that sets the last step's sign; that value, or NULL. */
static const char *said_direction(const struct pipit_agent *a, const char *segment) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    if (tp == NULL || !tp->has_step || tp->step.sign.arg == NULL ||
        !json_is_object(tp->step.sign.map) || segment == NULL) {
        return NULL;
    }
    struct words_tok t[16];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 16);
    const char *said = NULL;
    for (size_t i = 0; i < n && n < 16; i++) {
        if (words_in_list(t[i].w, AROUND, sizeof(AROUND) / sizeof(AROUND[0]))) {
            continue;
        }
        const char *k;
        const json_t *v;
        const char *hit = NULL;
        json_object_foreach((json_t *)tp->step.sign.map, k, v) {
            hit = strcmp(t[i].w, k) == 0 ? k : hit;
        }
        if (hit == NULL || said != NULL) {
            return NULL; /* another word, or two directions */
        }
        said = hit;
    }
    return said;
}

/* "make it 10" after "timer 7 seconds": the last call with its one numeric argument set to the
 * number said (in the argument's unit of time when one is said), as said: validation refuses
 * what is out of range. False when the last tool has no or several numeric arguments. */
/* Write tool `t` with `args` (consumed) into `out`; false when it does not fit. */
static bool put_call(const struct pipit_tool *t, json_t *args, struct pipit_call *out) {
    char *dump =
        args != NULL
            ? json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
            : NULL;
    json_decref(args);
    if (dump == NULL || strlen(t->name) >= sizeof(out->name)) {
        free(dump);
        return false;
    }
    memcpy(out->name, t->name, strlen(t->name) + 1);
    out->args_json = dump;
    return true;
}

/* Whether number schema `s` takes `v` (its range; an integer schema a whole number). */
static bool number_allowed(const struct pipit_schema *s, double v) {
    return (!s->has_min || v >= s->min) && (!s->has_max || v <= s->max) &&
           (s->type != PIPIT_SCHEMA_INTEGER || fabs(v - floor(v)) < 1e-9);
}

static bool number_call(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    if (a->asked_key[0] != '\0') {
        /* "what's the zoom at?" ... "make it 2": the key asked about, by its setter */
        const struct pipit_schema_prop *arg = NULL;
        int32_t setter = agent_number_setter(a->ts, a->asked_key, &arg);
        double said[2];
        if (setter >= 0 && agent_person_numbers(segment, arg, said, 2) == 1) {
            json_t *args = json_object();
            json_object_set_new(args, arg->name, agent_said_number(said[0]));
            return put_call(&a->ts->tools[setter], args, out);
        }
    }
    if (a->last_tool < 0 || a->last_args == NULL) {
        return false;
    }
    const struct pipit_tool *t = &a->ts->tools[a->last_tool];
    const struct pipit_schema_prop *num = NULL;
    for (size_t i = 0; t->params != NULL && i < t->params->n_props; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        if (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) {
            if (num != NULL) {
                return false; /* which one is the model's to say */
            }
            num = &t->params->props[i];
        }
    }
    double said[2];
    if (num == NULL || agent_person_numbers(segment, num, said, 2) != 1) {
        return false;
    }
    /* "make it 18.5" after "heat up 2": a number no step takes but the key's setter does is the
     * value meant, not a step of 18.5 (a number both take stays a step: "make it 3") */
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    const struct pipit_schema_prop *set_arg = NULL;
    int32_t setter = tp != NULL && tp->has_step && tp->step.key.key_arg == NULL
                         ? agent_number_setter(a->ts, tp->step.key.key, &set_arg)
                         : -1;
    if (setter >= 0 &&
        ((!number_allowed(num->schema, said[0]) && number_allowed(set_arg->schema, said[0])) ||
         agent_number_said_to(segment))) {
        json_t *args = json_object();
        json_object_set_new(args, set_arg->name, agent_said_number(said[0]));
        return put_call(&a->ts->tools[setter], args, out);
    }
    json_t *args = json_deep_copy(a->last_args);
    if (args == NULL || json_object_set_new(args, num->name, agent_said_number(said[0])) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(t, args, out);
}

/* "a little more" after "exposure down a bit" (0 -> -1 EV): the last call set a key from a
 * number, so the change it made (the undo log's value before, the state's after) is the step.
 * More of it goes on the same way, back goes the other way: through a tool that steps that key
 * by a sign it takes from an enum (the zoom's in/out), else the same call with the number moved
 * by the change (-2 EV). False when the last call set no such key or changed nothing. */
static bool absolute_step(const struct pipit_agent *a, bool back, struct pipit_call *out) {
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    const struct action_entry *e = a->log_n > 0 ? &a->log[a->log_n - 1] : NULL;
    if (tp == NULL || e == NULL || e->tool != a->last_tool || e->snapshot == NULL ||
        a->dev == NULL || !a->last_ok) {
        return false;
    }
    const struct pipit_effect_set *set = NULL;
    for (size_t k = 0; k < tp->n_set; k++) {
        const struct pipit_effect_set *s = &tp->set[k];
        if (s->key.key_arg == NULL && s->value.arg != NULL && s->value.map == NULL &&
            json_is_number(json_object_get(a->last_args, s->value.arg))) {
            if (set != NULL) {
                return false; /* two numbers set: which one is meant is not clear */
            }
            set = s;
        }
    }
    json_t *state = set != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    const json_t *was = set != NULL ? json_object_get(e->snapshot, set->key.key) : NULL;
    const json_t *is = json_object_get(state, set != NULL ? set->key.key : "");
    double delta = json_is_number(was) && json_is_number(is)
                       ? json_number_value(is) - json_number_value(was)
                       : 0;
    double now = json_is_number(is) ? json_number_value(is) : 0;
    json_decref(state);
    if (delta == 0) {
        return false;
    }
    double dir = (delta > 0 ? 1 : -1) * (back ? -1 : 1);
    /* a jump is no step: "fan to max" (0 -> 100), then "a bit less" had set 0; a change of
     * more than a quarter of the argument's range steps by a tenth of it (a whole number for
     * an integer, at least 1) */
    const struct pipit_tool *lt = &a->ts->tools[a->last_tool];
    for (size_t j = 0; lt->params != NULL && j < lt->params->n_props; j++) {
        const struct pipit_schema *sc = lt->params->props[j].schema;
        if (strcmp(lt->params->props[j].name, set->value.arg) != 0 || !sc->has_min ||
            !sc->has_max || sc->max <= sc->min || fabs(delta) <= (sc->max - sc->min) / 4) {
            continue;
        }
        double tenth = (sc->max - sc->min) / 10;
        if (sc->type == PIPIT_SCHEMA_INTEGER) {
            tenth = floor(tenth + 0.5) < 1 ? 1 : floor(tenth + 0.5);
        }
        delta = delta > 0 ? tenth : -tenth;
    }
    /* a tool that steps the key by a sign from an enum, needing nothing else */
    for (size_t i = 0; i < a->ts->n_tools; i++) {
        const struct pipit_tool_pack *sp = pipit_toolset_tool_pack(a->ts, i);
        const struct pipit_tool *t = &a->ts->tools[i];
        if (sp == NULL || !sp->has_step || sp->step.key.key_arg != NULL ||
            strcmp(sp->step.key.key, set->key.key) != 0 || sp->step.sign.arg == NULL ||
            !json_is_object(sp->step.sign.map)) {
            continue;
        }
        size_t n_required = 0;
        for (size_t j = 0; j < t->params->n_props; j++) {
            n_required += t->params->props[j].required &&
                                  strcmp(t->params->props[j].name, sp->step.sign.arg) != 0
                              ? 1
                              : 0;
        }
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)sp->step.sign.map, k, v) {
            if (n_required == 0 && json_is_number(v) && json_number_value(v) * dir > 0) {
                json_t *args = json_object();
                json_object_set_new(args, sp->step.sign.arg, json_string(k));
                return put_call(t, args, out);
            }
        }
    }
    json_t *args = json_deep_copy(a->last_args);
    if (args == NULL || json_object_set_new(args, set->value.arg,
                                            agent_said_number(now + dir * fabs(delta))) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(&a->ts->tools[a->last_tool], args, out);
}

/* "max it" after a setting: the last call's one numeric argument at the top (`hi`) or bottom
 * of its schema's range; after a step, the stepped key's setter at the end of its range. */
static bool bound_call(const struct pipit_agent *a, bool hi, struct pipit_call *out) {
    const struct pipit_schema_prop *arg = NULL;
    if (a->asked_key[0] != '\0') {
        /* "what's the zoom at" ... "all the way out": the key asked about, by its setter */
        int32_t setter = agent_number_setter(a->ts, a->asked_key, &arg);
        const struct pipit_schema *s = setter >= 0 ? arg->schema : NULL;
        if (s == NULL || s->n_enum > 0 || !(hi ? s->has_max : s->has_min)) {
            return false;
        }
        json_t *args = json_object();
        json_object_set_new(args, arg->name, agent_said_number(hi ? s->max : s->min));
        return put_call(&a->ts->tools[setter], args, out);
    }
    if (a->last_tool < 0 || (size_t)a->last_tool >= a->ts->n_tools || a->last_args == NULL) {
        return false;
    }
    const struct pipit_tool *t = &a->ts->tools[a->last_tool];
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    int32_t setter = tp != NULL && tp->has_step && tp->step.key.key_arg == NULL
                         ? agent_number_setter(a->ts, tp->step.key.key, &arg)
                         : -1;
    json_t *args = NULL;
    if (setter >= 0) {
        t = &a->ts->tools[setter];
        args = json_object();
    } else {
        for (size_t i = 0; t->params != NULL && i < t->params->n_props; i++) {
            const struct pipit_schema *s = t->params->props[i].schema;
            if (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) {
                if (arg != NULL) {
                    return false; /* which one is not said */
                }
                arg = &t->params->props[i];
            }
        }
        args = json_deep_copy(a->last_args);
    }
    const struct pipit_schema *s = arg != NULL ? arg->schema : NULL;
    if (s == NULL || s->n_enum > 0 || !(hi ? s->has_max : s->has_min) || args == NULL ||
        json_object_set_new(args, arg->name, agent_said_number(hi ? s->max : s->min)) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(t, args, out);
}

/* "do I have the flash on?" ... "put it on, it's pretty dim in here": after a question about
 * one key, a first clause of a verb of switching, "it" / "that" / "them" and a side ("on",
 * "off") is that key's switch: the tool whose effect sets the key from its one required
 * argument, a boolean or an enum with "on" and "off". */
static bool side_call(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const VERBS[] = {"put", "turn", "switch", "set",  "then", "please",
                                        "ok",  "okay", "yes",    "yeah", "just", "can",
                                        "you", "and",  "so",     "now",  "back", "go"};
    static const char *const PRONOUNS[] = {"it", "that", "them", "this"};
    struct words_tok t[16];
    size_t n =
        segment != NULL ? words_tokenize(segment, strlen(segment), WORDS_PUNCTUATION, t, 16) : 0;
    int side = -1; /* 1 on, 0 off */
    bool pronoun = false;
    for (size_t i = 0; i < n && t[i].kind == WORDS_WORD; i++) {
        if (strcmp(t[i].w, "on") == 0 || strcmp(t[i].w, "off") == 0) {
            if (side >= 0) {
                return false;
            }
            side = t[i].w[1] == 'n';
        } else if (words_in_list(t[i].w, PRONOUNS, sizeof(PRONOUNS) / sizeof(PRONOUNS[0]))) {
            pronoun = true;
        } else if (!words_in_list(t[i].w, VERBS, sizeof(VERBS) / sizeof(VERBS[0]))) {
            return false;
        }
    }
    if (side < 0 || !pronoun) {
        return false;
    }
    for (size_t i = 0; i < a->ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, i);
        const struct pipit_tool *tool = &a->ts->tools[i];
        size_t n_req = 0;
        const struct pipit_schema_prop *req = pipit_tool_only_required(tool, &n_req);
        for (size_t k = 0; tp != NULL && n_req == 1 && k < tp->n_set; k++) {
            const struct pipit_effect_set *es = &tp->set[k];
            if (es->key.key_arg != NULL || strcmp(es->key.key, a->asked_key) != 0 ||
                es->value.arg == NULL || es->value.map != NULL ||
                strcmp(es->value.arg, req->name) != 0) {
                continue;
            }
            json_t *v = NULL;
            if (req->schema->type == PIPIT_SCHEMA_BOOLEAN) {
                v = json_boolean(side);
            } else if (req->schema->type == PIPIT_SCHEMA_STRING) {
                for (size_t e = 0; e < req->schema->n_enum; e++) {
                    if (strcmp(req->schema->enum_str[e], side ? "on" : "off") == 0) {
                        v = json_string(req->schema->enum_str[e]);
                    }
                }
            }
            if (v != NULL) {
                json_t *args = json_object();
                json_object_set_new(args, req->name, v);
                return put_call(tool, args, out);
            }
        }
    }
    return false;
}

/* "the other side too" after a call on one of two places (the driver's seat): the same call on
 * the other place; with no place, the other of the tool's one two-valued argument ("nah, the
 * other one" after the front camera: the back). The segment is "other" with "side" or "one" and the
 * words around a follow-up ("the", "too", "as well", "and", "now", ...); the last tool's effect
 * picks its key by an argument of exactly two values. */
static bool other_place(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const WORDS[] = {
        "the",  "too",  "as",   "well",  "also", "and", "now",  "please",   "ok", "okay",
        "same", "for",  "do",   "on",    "nah",  "no",  "nope", "actually", "i",  "meant",
        "mean", "wait", "oops", "sorry", "use",  "try", "want", "wanted"};
    struct words_tok t[12];
    size_t n = segment != NULL ? words_tokenize(segment, strlen(segment), 0, t, 12) : 0;
    bool other = false, side = false;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].w, "other") == 0) {
            other = true;
        } else if (strcmp(t[i].w, "side") == 0 || strcmp(t[i].w, "one") == 0) {
            side = true;
        } else if (!words_in_list(t[i].w, WORDS, sizeof(WORDS) / sizeof(WORDS[0]))) {
            return false;
        }
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    if (n == 0 || n >= 12 || !other || !side || tp == NULL) {
        return false;
    }
    const char *place = NULL;
    for (size_t k = 0; k < tp->n_set && place == NULL; k++) {
        place = tp->set[k].key.key_arg;
    }
    place = place == NULL && tp->has_step ? tp->step.key.key_arg : place;
    const struct pipit_tool *t_last = &a->ts->tools[a->last_tool];
    const struct pipit_schema *sel = NULL;
    for (size_t j = 0; place != NULL && j < t_last->params->n_props; j++) {
        sel = strcmp(t_last->params->props[j].name, place) == 0 ? t_last->params->props[j].schema
                                                                : sel;
    }
    for (size_t j = 0; place == NULL && t_last->params != NULL && j < t_last->params->n_props;
         j++) {
        /* no place: the tool's one value of two ("nah, the other one" after the front camera) */
        const struct pipit_schema *s2 = t_last->params->props[j].schema;
        if (s2->type == PIPIT_SCHEMA_STRING && s2->n_enum == 2) {
            if (sel != NULL) {
                return false;
            }
            sel = s2;
        }
    }
    for (size_t j = 0; place == NULL && sel != NULL && j < t_last->params->n_props; j++) {
        place = t_last->params->props[j].schema == sel ? t_last->params->props[j].name : NULL;
    }
    const char *now =
        place != NULL ? json_string_value(json_object_get(a->last_args, place)) : NULL;
    if (sel == NULL || sel->n_enum != 2 || now == NULL) {
        return false;
    }
    const char *to = strcmp(sel->enum_str[0], now) == 0 ? sel->enum_str[1] : sel->enum_str[0];
    json_t *args = json_deep_copy(a->last_args);
    if (args == NULL || json_object_set_new(args, place, json_string(to)) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(t_last, args, out);
}

/* "and the bedroom too" after "living room lights purple": the segment is a value of the enum
 * argument that picks the last call's place (its effect's key argument), with "and", "the",
 * "too", "also", "as well", "same for" around it and at least one of "and", "too", "also",
 * "as well", and no "?"; the last call with that place. Two places or a third word: the
 * model's. */
static bool place_too(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const AROUND_PLACE[] = {"and",  "the", "too",    "also", "as", "well",
                                               "same", "for", "please", "now",  "ok", "okay",
                                               "in",   "do",  "then",   "my"};
    static const char *const JOIN[] = {"and", "too", "also", "well"};
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
    const char *place = NULL;
    for (size_t k = 0; tp != NULL && k < tp->n_set && place == NULL; k++) {
        place = tp->set[k].key.key_arg;
    }
    place = place == NULL && tp != NULL && tp->has_step ? tp->step.key.key_arg : place;
    const struct pipit_tool *last = &a->ts->tools[a->last_tool];
    const struct pipit_schema *sel = NULL;
    for (size_t j = 0; place != NULL && last->params != NULL && j < last->params->n_props; j++) {
        sel = strcmp(last->params->props[j].name, place) == 0 ? last->params->props[j].schema : sel;
    }
    const char *now =
        place != NULL ? json_string_value(json_object_get(a->last_args, place)) : NULL;
    if (sel == NULL || sel->n_enum < 2 || now == NULL) {
        return false;
    }
    struct words_tok t[12];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 12);
    if (n == 0 || n >= 12 || strchr(segment, '?') != NULL ||
        !agent_said_any(t, n, JOIN, sizeof(JOIN) / sizeof(JOIN[0]))) {
        return false; /* "and the bedroom?" asks */
    }
    const char *to = NULL;
    size_t i = 0;
    while (i < n) {
        if (words_in_list(t[i].w, AROUND_PLACE, sizeof(AROUND_PLACE) / sizeof(AROUND_PLACE[0]))) {
            i++;
            continue;
        }
        size_t m = 0;
        const char *v = NULL;
        for (size_t e = 0; e < sel->n_enum; e++) {
            char phrase[128];
            pipit_format(phrase, sizeof(phrase), "%s", sel->enum_str[e]);
            for (char *q = phrase; *q != '\0'; q++) {
                *q = *q == '_' || *q == '-' ? ' ' : (char)tolower((unsigned char)*q);
            }
            size_t mm = words_match(t, n, i, phrase);
            if (mm == words_count(phrase) && mm > m) {
                m = mm;
                v = sel->enum_str[e];
            }
        }
        if (v == NULL || to != NULL) {
            return false; /* a word of its own, or two places */
        }
        to = v;
        i += m;
    }
    json_t *args = to != NULL && strcmp(to, now) != 0 ? json_deep_copy(a->last_args) : NULL;
    if (args == NULL || json_object_set_new(args, place, json_string(to)) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(last, args, out);
}

/* The segment's words less fillers at both ends, as tokens [*lo, *hi). */
static size_t core_words(const char *segment, struct words_tok *t, size_t cap, size_t *lo) {
    /* not "no": "no daylight please" asks for none of it */
    static const char *const FILL[] = {"ok",    "okay",   "and",  "now",    "actually", "well",
                                       "right", "please", "pls",  "just",   "then",     "go",
                                       "oh",    "hmm",    "um",   "rather", "instead",  "wait",
                                       "sorry", "thanks", "yeah", "yes",    "so",       "maybe"};
    size_t n = words_tokenize(segment, strlen(segment), 0, t, cap);
    if (n == cap) {
        return 0;
    }
    size_t i = 0;
    while (i < n && words_in_list(t[i].w, FILL, sizeof(FILL) / sizeof(FILL[0]))) {
        i++;
    }
    while (n > i && words_in_list(t[n - 1].w, FILL, sizeof(FILL) / sizeof(FILL[0]))) {
        n--;
    }
    *lo = i;
    return n;
}

/* "all the way" after "open the blinds halfway": to the end of the range the last action moved
 * toward (the log's value before it against the state now). */
static bool all_the_way(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const ALL[] = {"all the way", "the whole way",     "fully",    "completely",
                                      "to the end",  "as far as it goes", "all of it"};
    struct words_tok t[16];
    size_t lo = 0, hi = core_words(segment, t, 16, &lo);
    bool said = false;
    for (size_t k = 0; k < sizeof(ALL) / sizeof(ALL[0]) && !said; k++) {
        said =
            hi > lo && words_match(t, hi, lo, ALL[k]) == hi - lo && words_count(ALL[k]) == hi - lo;
    }
    const struct action_entry *e = NULL;
    for (int32_t i = a->log_n - 1; said && i >= 0 && e == NULL; i--) {
        e = a->log[i].tool == a->last_tool && a->log[i].snapshot != NULL ? &a->log[i] : NULL;
    }
    if (e == NULL || a->dev == NULL || !a->last_ok) {
        return false;
    }
    json_t *now = a->dev->ops->get_state(a->dev->self);
    int dir = 0;
    const char *key;
    json_t *v;
    json_object_foreach(e->snapshot, key, v) {
        json_t *w = json_object_get(now, key);
        if (json_is_number(v) && json_is_number(w) &&
            json_number_value(w) != json_number_value(v)) {
            int d = json_number_value(w) > json_number_value(v) ? 1 : -1;
            dir = dir == 0 || dir == d ? d : 2; /* two keys two ways: not clear */
        }
    }
    json_decref(now);
    return (dir == 1 || dir == -1) && bound_call(a, dir == 1, out);
}

/* "actually purple" after "make the bedroom light blue": one string value of the last tool's
 * enum arguments, said alone (fillers and "make it", "how about", "try", "change it to" aside),
 * is the last call with that value. */
static bool
value_instead(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const LEADS[] = {"make it", "make that",    "how about",    "what about",
                                        "try",     "change it to", "switch it to", "set it to",
                                        "go with", "lets do",      "i meant",      "i mean"};
    if (a->last_tool < 0 || (size_t)a->last_tool >= a->ts->n_tools || a->last_args == NULL) {
        return false;
    }
    struct words_tok t[16];
    size_t lo = 0, hi = core_words(segment, t, 16, &lo);
    while (lo < hi &&
           (strcmp(t[lo].w, "no") == 0 || strcmp(t[lo].w, "nope") == 0 ||
            strcmp(t[lo].w, "nah") == 0) &&
           segment[t[lo].end] == ',') {
        lo++; /* "wait no, auto": a correction, not "no auto" */
    }
    for (size_t k = 0; k < sizeof(LEADS) / sizeof(LEADS[0]) && hi > lo; k++) {
        size_t m = words_match(t, hi, lo, LEADS[k]);
        if (m == words_count(LEADS[k]) && lo + m < hi) {
            lo += m;
            break;
        }
    }
    if (hi <= lo) {
        return false;
    }
    char said[128];
    pipit_format(said, sizeof(said), "%.*s", (int)(t[hi - 1].end - t[lo].start),
                 segment + t[lo].start);
    const struct pipit_tool *last = &a->ts->tools[a->last_tool];
    for (size_t i = 0; last->params != NULL && i < last->params->n_props; i++) {
        const struct pipit_schema *s = last->params->props[i].schema;
        for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
            char v[128];
            pipit_format(v, sizeof(v), "%s", s->enum_str[e]);
            for (char *p = v; *p != '\0'; p++) {
                *p = *p == '_' || *p == '-' ? ' ' : *p;
            }
            if (strcasecmp(v, said) == 0 &&
                json_is_string(json_object_get(a->last_args, last->params->props[i].name))) {
                json_t *args = json_deep_copy(a->last_args);
                json_object_set_new(args, last->params->props[i].name, json_string(s->enum_str[e]));
                return put_call(last, args, out);
            }
        }
    }
    return false;
}

/* The text tool `t`'s success template gives value `value` of argument `arg`
 * ("{mode:driving=by car|cycling=by bike}": "by bike" for cycling), into out, rendered by
 * render.c's value map; false when the template has no map for `arg` or says the value as it is. */
static bool value_phrase(const struct pipit_tool *t,
                         const char *arg,
                         const char *value,
                         char *out,
                         size_t size) {
    char open[80];
    pipit_format(open, sizeof(open), "{%s:", arg);
    const char *p = t->success != NULL ? strstr(t->success, open) : NULL;
    const char *end = p != NULL ? strchr(p, '}') : NULL;
    if (end == NULL) {
        return false;
    }
    char tmpl[256];
    pipit_format(tmpl, sizeof(tmpl), "%.*s", (int)(end + 1 - p), p);
    json_t *args = json_object();
    json_object_set_new(args, arg, json_string(value));
    char *said = render_template(tmpl, args, NULL, NULL, NULL);
    json_decref(args);
    char plain[128];
    pipit_format(plain, sizeof(plain), "%s", value);
    for (char *q = plain; *q != '\0'; q++) {
        *q = *q == '_' ? ' ' : *q;
    }
    bool mapped = said != NULL && strcmp(said, value) != 0 && strcmp(said, plain) != 0;
    if (mapped) {
        pipit_format(out, size, "%s", said);
    }
    free(said);
    return mapped;
}

/* Whether token `w` names enum value `value` of argument `arg` of tool `t`: the value's own word
 * or one that shares its first four letters ("bike" is no stem of "cycling", "walk" is of
 * "walking"), or a word of three letters or more of the value's phrase in the success template
 * ("bike" of "by bike"). */
static bool
names_value(const struct pipit_tool *t, const char *arg, const char *value, const char *w) {
    static const char *const GLUE[] = {"by",   "on",   "the", "and", "for",
                                       "with", "from", "via", "in"};
    size_t lw = strlen(w);
    char text[128];
    pipit_format(text, sizeof(text), "%s", value);
    for (int pass = 0; pass < 2; pass++) {
        for (char *q = text; *q != '\0'; q++) {
            *q = *q == '_' || *q == '-' ? ' ' : (char)tolower((unsigned char)*q);
        }
        struct words_tok f[8];
        size_t nf = words_tokenize(text, strlen(text), 0, f, 8);
        for (size_t k = 0; k < nf; k++) {
            size_t lf = strlen(f[k].w);
            if (lf < 3 || words_in_list(f[k].w, GLUE, sizeof(GLUE) / sizeof(GLUE[0]))) {
                continue;
            }
            if (strcmp(f[k].w, w) == 0 ||
                (pass == 0 && lw >= 4 && lf >= 4 && strncmp(f[k].w, w, 4) == 0)) {
                return true;
            }
        }
        if (pass == 0 && !value_phrase(t, arg, value, text, sizeof(text))) {
            return false;
        }
    }
    return false;
}

/* "actually I'll bike there" after "walk me to Dolores Park": a word of correction
 * ("actually", "instead", "rather", "nah") and a word that names exactly one other value of one
 * of the last tool's enum arguments (names_value(): "bike" of the template's "by bike"), no
 * number, and no other tool named: the last call with that value. */
static bool
value_by_word(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const CUE[] = {"actually", "instead", "rather", "nah", "prefer", "better"};
    const struct pipit_tool *last = &a->ts->tools[a->last_tool];
    struct words_tok t[16];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 16);
    if (n == 0 || n >= 16 || !agent_said_any(t, n, CUE, sizeof(CUE) / sizeof(CUE[0])) ||
        agent_said_negation(t, n) || strpbrk(segment, "0123456789") != NULL) {
        return false;
    }
    const char *arg = NULL, *to = NULL;
    for (size_t j = 0; last->params != NULL && j < last->params->n_props; j++) {
        const struct pipit_schema_prop *p = &last->params->props[j];
        const char *now = json_string_value(json_object_get(a->last_args, p->name));
        for (size_t e = 0;
             now != NULL && p->schema->type == PIPIT_SCHEMA_STRING && e < p->schema->n_enum; e++) {
            bool said = false;
            for (size_t k = 0; k < n && !said; k++) {
                said = names_value(last, p->name, p->schema->enum_str[e], t[k].w);
            }
            if (said && strcmp(p->schema->enum_str[e], now) != 0) {
                if (to != NULL) {
                    return false; /* two values said */
                }
                arg = p->name;
                to = p->schema->enum_str[e];
            }
        }
    }
    for (size_t i = 0; to != NULL && i < a->ts->n_tools; i++) {
        if ((int32_t)i != a->last_tool && !pipit_toolset_is_cloud(a->ts, i) &&
            agent_names_tool(a->ts, i, segment)) {
            return false; /* "actually, bike lights on" */
        }
    }
    json_t *args = to != NULL ? json_deep_copy(a->last_args) : NULL;
    if (args == NULL || json_object_set_new(args, arg, json_string(to)) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(last, args, out);
}

/* Whether `w` is a word of tool name `name`, or shares its first four letters or more with one
 * ("sending" of send_message). */
static bool name_word(const char *name, const char *w) {
    size_t lw = strlen(w);
    if (lw > 5 && strncmp(w, "re", 2) == 0 && name_word(name, w + 2)) {
        return true; /* "resend" */
    }
    for (const char *p = name; *p != '\0';) {
        size_t l = strcspn(p, "_-. ");
        if ((l == lw && strncasecmp(p, w, l) == 0) ||
            (l >= 4 && lw > l && strncasecmp(p, w, l) == 0)) {
            return true;
        }
        p += l;
        p += *p != '\0';
    }
    return false;
}

/* "ok send it now" after "text mom I'm boarding" failed (offline) and the Wi-Fi came back on:
 * the segment is a word of the name of the tool whose call failed last (and has not run well
 * since) with words that point back at it ("it", "now", "again") and fillers, nothing else:
 * that call again. */
static bool retry_named(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const BACK[] = {"it",    "that",    "this", "them",   "him",  "her",
                                       "again", "now",     "then", "anyway", "over", "through",
                                       "the",   "message", "try",  "retry",  "one",  "out"};
    if (a->failed_tool < 0 || (size_t)a->failed_tool >= a->ts->n_tools) {
        return false;
    }
    const struct pipit_tool *last = &a->ts->tools[a->failed_tool];
    struct words_tok t[12];
    size_t lo = 0, hi = core_words(segment, t, 12, &lo);
    bool named = false;
    for (size_t i = lo; i < hi; i++) {
        if (name_word(last->name, t[i].w)) {
            named = true;
        } else if (!words_in_list(t[i].w, BACK, sizeof(BACK) / sizeof(BACK[0]))) {
            return false;
        }
    }
    json_t *args = named ? json_deep_copy(a->failed_args) : NULL;
    return args != NULL && put_call(last, args, out);
}

/* The free-text argument of the last tool its failure code names ("recipient" of
 * "ambiguous_recipient", "unknown_recipient"), or NULL. */
static const char *code_names_arg(const struct pipit_agent *a) {
    const struct pipit_tool *last = &a->ts->tools[a->last_tool];
    size_t lc = strlen(a->last_code);
    for (size_t j = 0; last->params != NULL && j < last->params->n_props; j++) {
        const struct pipit_schema_prop *p = &last->params->props[j];
        size_t ln = strlen(p->name);
        if (p->schema->type == PIPIT_SCHEMA_STRING && p->schema->n_enum == 0 && lc > ln &&
            a->last_code[lc - ln - 1] == '_' && strcmp(a->last_code + lc - ln, p->name) == 0 &&
            json_is_string(json_object_get(a->last_args, p->name))) {
            return p->name;
        }
    }
    return NULL;
}

/* "Sam Rivera" after "I'm not sure who you mean: Sam Rivera or Sam Okafor" (send_message failed
 * with "ambiguous_recipient"): the last call, in the turn before, failed with a code naming one
 * of its free-text arguments, and the whole utterance is a short answer (five words at most after
 * "I meant", "it's", "to") with no command verb, no question, no negation, no small talk and no
 * word of calling it off: the same call with that argument as said. */
static bool
clarified_value(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    static const char *const LEAD[] = {"i",  "meant", "mean",  "its", "it", "s",    "is",
                                       "to", "that",  "thats", "oh",  "ah", "sorry"};
    static const char *const OFF[] = {"no",     "nope", "cancel", "stop",    "never", "nevermind",
                                      "forget", "none", "nobody", "nothing", "don",   "dont"};
    const char *arg = a->last_code[0] != '\0' && a->last_utt + 1 == a->utt_seq && a->n_segments == 1
                          ? code_names_arg(a)
                          : NULL;
    if (arg == NULL || strchr(segment, '?') != NULL || agent_asks_the_world(segment) ||
        router_command_verb(a->router, segment) != ROUTER_NO_VERB ||
        smalltalk_kinds(a->router, segment) != 0) {
        return false;
    }
    struct words_tok t[12];
    size_t lo = 0, hi = core_words(segment, t, 12, &lo);
    while (lo < hi && words_in_list(t[lo].w, LEAD, sizeof(LEAD) / sizeof(LEAD[0]))) {
        lo++;
    }
    if (hi <= lo || hi - lo > 5 || agent_said_negation(t + lo, hi - lo) ||
        agent_said_any(t + lo, hi - lo, OFF, sizeof(OFF) / sizeof(OFF[0]))) {
        return false;
    }
    char said[160];
    pipit_format(said, sizeof(said), "%.*s", (int)(t[hi - 1].end - t[lo].start),
                 segment + t[lo].start);
    const char *had = json_string_value(json_object_get(a->last_args, arg));
    json_t *args = had != NULL && strcmp(had, said) != 0 ? json_deep_copy(a->last_args) : NULL;
    if (args == NULL || json_object_set_new(args, arg, json_string(said)) != 0) {
        json_decref(args);
        return false;
    }
    return put_call(&a->ts->tools[a->last_tool], args, out);
}

bool agent_followup_call(const struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    memset(out, 0, sizeof(*out));
    enum router_followup kind = router_followup(a->router, segment);
    if (kind == ROUTER_FOLLOWUP_NUMBER && a->asked_key[0] != '\0') {
        return number_call(a, segment, out);
    }
    if (a->asked_key[0] != '\0' && side_call(a, segment, out)) {
        return true; /* "is the flash on?" ... "put it on" */
    }
    if ((kind == ROUTER_FOLLOWUP_MAX || kind == ROUTER_FOLLOWUP_MIN) && a->asked_key[0] != '\0') {
        return bound_call(a, kind == ROUTER_FOLLOWUP_MAX, out); /* the key asked about */
    }
    if (a->last_tool < 0 || (size_t)a->last_tool >= a->ts->n_tools || a->last_args == NULL) {
        return false;
    }
    if ((kind == ROUTER_FOLLOWUP_NONE || kind == ROUTER_FOLLOWUP_NUMBER) && a->dev != NULL) {
        /* "and the one i just made?", "what about 1000?" after a ticket's status: the same
         * query, another item */
        json_t *state = a->dev->ops->get_state(a->dev->self);
        char *mem = state != NULL ? memory_text(&a->mem) : NULL;
        bool made = mem != NULL && agent_query_other_item(a->ts, a->last_tool, a->last_args,
                                                          segment, mem, state, out);
        free(mem);
        json_decref(state);
        if (made) {
            return true;
        }
    }
    const char *direction = kind == ROUTER_FOLLOWUP_NONE ? said_direction(a, segment) : NULL;
    const struct pipit_tool *last = &a->ts->tools[a->last_tool];
    if (direction != NULL) {
        /* "dimmer still": the last step that way */
        json_t *args = json_deep_copy(a->last_args);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
        if (args == NULL ||
            json_object_set_new(args, tp->step.sign.arg, json_string(direction)) != 0) {
            json_decref(args);
            return false;
        }
        return put_call(last, args, out);
    }
    if (kind == ROUTER_FOLLOWUP_NONE &&
        (retry_named(a, segment, out) || (!a->last_ok && clarified_value(a, segment, out)))) {
        return true; /* "ok send it now", "Sam Rivera": the failed call, again or answered */
    }
    if (kind == ROUTER_FOLLOWUP_NONE) {
        return other_place(a, segment, out) || /* "the other side too" */
               place_too(a, segment, out) ||   /* "and the bedroom too" */
               all_the_way(a, segment, out) || value_instead(a, segment, out) ||
               value_by_word(a, segment, out); /* "actually I'll bike there" */
    }
    if (kind == ROUTER_FOLLOWUP_NUMBER) {
        return number_call(a, segment, out);
    }
    if (kind == ROUTER_FOLLOWUP_MAX || kind == ROUTER_FOLLOWUP_MIN) {
        return bound_call(a, kind == ROUTER_FOLLOWUP_MAX, out);
    }
    if (kind == ROUTER_FOLLOWUP_AGAIN && a->last_ok) {
        /* "another" after "flash on" would change nothing: it means something else */
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)a->last_tool);
        if (tp != NULL && tp->effect == PIPIT_EFFECT_CHANGE && !tp->has_step) {
            return false;
        }
    }
    json_t *args = json_deep_copy(a->last_args);
    bool ok = args != NULL &&
              (kind == ROUTER_FOLLOWUP_AGAIN || relative(a, args, kind == ROUTER_FOLLOWUP_BACK));
    if (!ok && args != NULL && kind != ROUTER_FOLLOWUP_AGAIN) {
        json_decref(args);
        return absolute_step(a, kind == ROUTER_FOLLOWUP_BACK, out);
    }
    if (!ok) {
        json_decref(args);
        return false;
    }
    return put_call(last, args, out);
}
