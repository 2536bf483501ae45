/*
 * agent_record.c - the turn's record: the sentence said so far, the call records, the
 * full-history outputs, and the record's JSON and free (pipit.h, "agent").
 *
 * Invariant: a record's strings are owned by it and freed by pipit_turn_free(), whatever
 * point the turn stopped at.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_record.h"

#include "agent_impl.h"
#include "memory.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void agent_say(struct turn_build *tb, const char *text) {
    if (text == NULL || text[0] == '\0') {
        return;
    }
    if (tb->sentence.len > 0) {
        strbuf_str(&tb->sentence, " ");
    }
    strbuf_str(&tb->sentence, text);
}

struct pipit_call_record *agent_new_record(struct turn_build *tb) {
    struct pipit_turn *t = tb->turn;
    if (t->n_calls == tb->cap_calls) {
        size_t cap = tb->cap_calls > 0 ? tb->cap_calls * 2 : 4;
        struct pipit_call_record *c = realloc(t->calls, cap * sizeof(*c));
        if (c == NULL) {
            return NULL;
        }
        t->calls = c;
        tb->cap_calls = cap;
    }
    struct pipit_call_record *r = &t->calls[t->n_calls++];
    memset(r, 0, sizeof(*r));
    return r;
}

char *agent_strdup(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n + 1);
    }
    return d;
}
/* Collect every step's raw output of the turn (for the full-history memory). */
void agent_output_add(struct turn_build *tb, const char *text) {
    if (tb->outputs.len > 0) {
        strbuf_str(&tb->outputs, " | ");
    }
    strbuf_str(&tb->outputs, text);
}
void pipit_turn_free(struct pipit_turn *t) {
    if (t == NULL) {
        return;
    }
    for (size_t i = 0; i < t->n_calls; i++) {
        free(t->calls[i].args_json);
        free(t->calls[i].data_json);
        free(t->calls[i].sentence);
    }
    free(t->calls);
    free(t->sentence);
    free(t->state_json);
    free(t->model_text);
    free(t);
}

/* ============================================================================ JSON */

static const struct {
    uint32_t bit;
    const char *name;
} FLAG_NAMES[] = {
    {PIPIT_TURN_UNDO, "undo"},
    {PIPIT_TURN_COMPOUND, "compound"},
    {PIPIT_TURN_NARRATION_CAUGHT, "narration_caught"},
    {PIPIT_TURN_BREAKER, "breaker"},
    {PIPIT_TURN_BUDGET, "budget"},
    {PIPIT_TURN_STEP_CAP, "step_cap"},
    {PIPIT_TURN_CANCELLED, "cancelled"},
    {PIPIT_TURN_PLAIN_TEXT, "plain_text"},
    {PIPIT_TURN_PAUSED, "paused"},
    {PIPIT_TURN_TOKEN_LIMIT, "token_limit"},
    {PIPIT_TURN_OVER_BUDGET, "over_budget"},
    {PIPIT_TURN_STATE_ANSWER, "state_answer"},
    {PIPIT_TURN_STATE_CORRECTED, "state_corrected"},
    {PIPIT_TURN_NUMBER_RESTORED, "number_restored"},
    {PIPIT_TURN_UNPINNED, "unpinned"},
    {PIPIT_TURN_SMALL_TALK, "small_talk"},
    {PIPIT_TURN_WORDS_RESTORED, "words_restored"},
    {PIPIT_TURN_QUESTION_KEPT, "question_kept"},
    {PIPIT_TURN_NOT_ASKED, "not_asked"},
    {PIPIT_TURN_FOLLOW_UP, "follow_up"},
    {PIPIT_TURN_CARRIED, "carried"},
    {PIPIT_TURN_GARBLED, "garbled"},
    {PIPIT_TURN_OFF_TOPIC, "off_topic"},
    {PIPIT_TURN_UNKNOWN_THING, "unknown_thing"},
    {PIPIT_TURN_TOOL_NAMED, "tool_named"},
    {PIPIT_TURN_OPEN_QUESTION, "open_question"},
    {PIPIT_TURN_NEGATED, "negated"},
    {PIPIT_TURN_SAID_TWICE, "said_twice"},
    {PIPIT_TURN_CUT, "cut"},
};

static json_t *json_or_string(const char *text) {
    json_t *j = text != NULL && text[0] != '\0' ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    return j != NULL ? j : json_string(text != NULL ? text : "");
}

char *pipit_turn_to_json(const struct pipit_turn *t) {
    if (t == NULL) {
        return NULL;
    }
    json_t *o = json_object();
    json_object_set_new(o, "sentence", json_string(t->sentence != NULL ? t->sentence : ""));
    json_t *calls = json_array();
    for (size_t i = 0; i < t->n_calls; i++) {
        const struct pipit_call_record *c = &t->calls[i];
        json_t *jc = json_object();
        json_object_set_new(jc, "tool", json_string(c->tool));
        json_object_set_new(jc, "args", json_or_string(c->args_json));
        json_object_set_new(jc, "status", json_string(pipit_status_str(c->status)));
        json_object_set_new(jc, "executed", json_boolean(c->executed));
        json_object_set_new(jc, "ok", json_boolean(c->ok));
        if (!c->ok) {
            json_object_set_new(jc, "code", json_string(c->code));
            json_object_set_new(jc, "message", json_string(c->message));
        }
        json_object_set_new(jc, "data", json_or_string(c->data_json));
        json_object_set_new(jc, "sentence", json_string(c->sentence != NULL ? c->sentence : ""));
        json_array_append_new(calls, jc);
    }
    json_object_set_new(o, "calls", calls);
    json_t *flags = json_array();
    for (size_t i = 0; i < sizeof(FLAG_NAMES) / sizeof(FLAG_NAMES[0]); i++) {
        if ((t->flags & FLAG_NAMES[i].bit) != 0) {
            json_array_append_new(flags, json_string(FLAG_NAMES[i].name));
        }
    }
    json_object_set_new(o, "flags", flags);
    json_object_set_new(o, "state",
                        t->state_json != NULL ? json_or_string(t->state_json) : json_null());
    json_t *c = json_object();
    json_object_set_new(c, "steps", json_integer(t->n_steps));
    json_object_set_new(c, "model_calls", json_integer(t->model_calls));
    json_object_set_new(c, "prefill_tokens", json_integer(t->prefill_tokens));
    json_object_set_new(c, "permanent_prefill_tokens", json_integer(t->permanent_prefill_tokens));
    json_object_set_new(c, "decode_tokens", json_integer(t->decode_tokens));
    json_object_set_new(c, "cloud_requests", json_integer(t->cloud_requests));
    json_object_set_new(c, "memory_prefill_tokens", json_integer(t->memory_prefill_tokens));
    json_object_set_new(c, "memory_lines", json_integer(t->memory_lines));
    json_object_set_new(c, "memory_bytes", json_integer(t->memory_bytes));
    json_object_set_new(c, "trimmed_lines", json_integer(t->trimmed_lines));
    json_object_set_new(c, "unpinned_lines", json_integer(t->unpinned_lines));
    json_object_set_new(c, "tracker_ms", json_real(t->tracker_ms));
    json_object_set_new(c, "tracker_lines", json_integer(t->tracker_lines));
    json_object_set_new(c, "tracker_kv_bytes", json_integer(t->tracker_kv_bytes));
    json_object_set_new(c, "tracker_skipped", json_boolean(t->tracker_skipped));
    json_object_set_new(c, "permanent_tokens", json_integer(t->n_permanent));
    json_object_set_new(c, "ephemeral_tokens_max", json_integer(t->n_ephemeral_max));
    json_object_set_new(c, "prompt_tokens_max", json_integer(t->n_prompt_max));
    json_object_set_new(c, "latency_ms", json_real(t->latency_ms));
    json_object_set_new(c, "ttft_ms", json_real(t->ttft_ms));
    json_object_set_new(c, "model_ms", json_real(t->model_ms));
    json_object_set_new(c, "sample_ms", json_real(t->sample_ms));
    json_object_set_new(c, "constraint_ms", json_real(t->constraint_ms));
    json_object_set_new(o, "counters", c);
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}
