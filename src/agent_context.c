/*
 * agent_context.c - the permanent prefix between turns: after a turn the memory's new lines are
 * appended (only the delta is prefilled), and the oldest lines are trimmed when the prefix
 * passes the memory budget (agent_prompt.c); a rebuild prefills the prefix again from text.
 *
 * Invariant: between turns the backend's ephemeral tail is empty, and the permanent prefix is
 * the system text and tools followed by the memory's kept lines.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_context.h"

#include "agent_impl.h"
#include "agent_prompt.h"
#include "cloud.h"
#include "memory.h"
#include "strbuf.h"
#include "tracker.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* Each run of lines wrapped as agent_remember() appended it, so the engine reuses the cache up to
 * the first line that went (pipit_context_truncate). */
char *agent_memory_prefix_text(struct pipit_agent *a) {
    if (!a->chat_template) {
        return memory_text(&a->mem);
    }
    struct strbuf b = {0};
    strbuf_str(&b, "");
    for (size_t from = 0, to; from < a->mem.n; from = to) {
        to = memory_group_end(&a->mem, from);
        char *lines = memory_text_range(&a->mem, from, to);
        char *wrapped = NULL;
        enum pipit_status st =
            lines != NULL ? agent_memory_message(a, lines, &wrapped) : PIPIT_ERR_NOMEM;
        free(lines);
        if (st != PIPIT_OK) {
            pipit_free(wrapped);
            strbuf_free(&b);
            return NULL;
        }
        strbuf_str(&b, wrapped);
        pipit_free(wrapped);
    }
    return strbuf_take(&b);
}

/* Trim the memory until the permanent prefix (system text and tools, then the memory) fits in
 * `budget` tokens, and rebuild the memory part of the prefix from the kept lines. The memory is
 * counted as it will be prefilled, so the prefix fits whatever a line's bytes per token; it is
 * trimmed to about 80% of its room, so the next turns fit too without a rebuild each. When the
 * pinned lines alone do not fit, the oldest are unpinned first (PIPIT_TURN_UNPINNED); when even
 * the system text and tools do not, the memory is emptied (PIPIT_TURN_OVER_BUDGET). */
enum pipit_status agent_fit_memory(struct pipit_agent *a, struct pipit_turn *t, int32_t budget) {
    int32_t room = budget - a->system_tokens;
    if (room <= 0) {
        t->flags |= PIPIT_TURN_OVER_BUDGET; /* the system text and tools are never dropped */
    }
    int32_t keep = room > 0 ? (int32_t)(0.8 * room) : 0;
    char *all = NULL;
    for (int guard = 0; guard < 4096; guard++) {
        free(all);
        all = agent_memory_prefix_text(a);
        if (all == NULL) {
            return PIPIT_ERR_NOMEM;
        }
        int32_t n = all[0] != '\0' ? agent_prefix_tokens(a, all) : 0;
        if (n >= 0 && n <= keep) {
            break;
        }
        size_t bytes = memory_bytes(&a->mem);
        size_t target = n > 0 && keep > 0 ? (size_t)((double)bytes * keep / n) : 0;
        if (target >= bytes && bytes > 0) {
            target = bytes - 1; /* the ratio rounds up: drop at least one line */
        }
        size_t dropped = memory_trim(&a->mem, target);
        t->trimmed_lines += (int32_t)dropped;
        if (dropped == 0) {
            if (!memory_unpin_oldest(&a->mem)) {
                break; /* nothing left to drop (n < 0: the tokenizer failed) */
            }
            t->flags |= PIPIT_TURN_UNPINNED;
            t->unpinned_lines++;
        }
    }
    char *none = memory_take_delta(&a->mem); /* everything is in `all` */
    free(none);
    a->superseded_at_rebuild = a->mem.n_superseded;
    int64_t n = 0;
    enum pipit_status st = a->backend.ops->truncate(a->backend.self, a->system_tokens);
    if (st == PIPIT_OK && all[0] != '\0') {
        st = a->backend.ops->add_permanent(a->backend.self, all);
        if (st == PIPIT_OK) {
            st = a->backend.ops->flush(a->backend.self, &n);
        }
    }
    free(all);
    t->memory_prefill_tokens += n;
    t->prefill_tokens += n;
    return st == PIPIT_OK ? agent_sync_tracker(a) : st;
}

/* Fit the permanent prefix in `budget` tokens when it is longer, or when superseded facts still
 * sit in the KV cache and a rebuild drops them. */
enum pipit_status
agent_trim_to_budget(struct pipit_agent *a, struct pipit_turn *t, int32_t budget) {
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    if (np <= budget) {
        return PIPIT_OK;
    }
    if (np - a->system_tokens <= 0) {
        t->flags |= PIPIT_TURN_OVER_BUDGET; /* the system text and tools are never dropped */
        return PIPIT_OK;
    }
    return agent_fit_memory(a, t, budget);
}

/* After a turn: prefill the system prefix if no step did, append the memory delta to the
 * permanent prefix (only the delta is prefilled), and trim the oldest memory lines when the
 * prefix exceeds the context budget. */
enum pipit_status
agent_remember(struct pipit_agent *a, struct turn_build *tb, const char *utterance) {
    struct pipit_turn *t = tb->turn;
    enum pipit_status st = PIPIT_OK;
    /* the tool results as JSON: the conventional transcript and the State-Tracker read them */
    struct strbuf results = {0};
    for (size_t i = 0; i < t->n_calls; i++) {
        const struct pipit_call_record *c = &t->calls[i];
        if (i > 0) {
            strbuf_str(&results, " ");
        }
        if (c->ok && a->mem.mode != PIPIT_MEMORY_FULL && strcmp(c->tool, CLOUD_TOOL_NAME) == 0) {
            /* the State-Tracker writes the CSO: it reads that the cloud answered, not the
             * answer (text from outside; docs/memory.md) */
            strbuf_str(&results, "{\"ok\":true,\"data\":{\"answered\":true}}");
        } else if (c->ok) {
            strbuf_printf(&results, "{\"ok\":true,\"data\":%s}",
                          c->data_json != NULL ? c->data_json : "{}");
        } else {
            json_t *e = json_pack("{s:b,s:{s:s,s:s}}", "ok", 0, "error", "code", c->code, "message",
                                  c->message);
            char *d =
                e != NULL
                    ? json_dumps(e, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
                    : NULL;
            strbuf_str(&results, d != NULL ? d : "{\"ok\":false}");
            free(d);
            json_decref(e);
        }
    }
    if (a->mem.mode == PIPIT_MEMORY_FULL) {
        if (tb->prompts.len == 0) { /* no model step (undo): the user line still counts */
            strbuf_printf(&tb->prompts, "User: %s\n", utterance);
        }
        st = memory_record_exchange(&a->mem, tb->prompts.data != NULL ? tb->prompts.data : "",
                                    tb->outputs.data != NULL ? tb->outputs.data : "",
                                    results.data != NULL ? results.data : "",
                                    tb->sentence.data != NULL ? tb->sentence.data : "");
    }
    if (st == PIPIT_OK && a->tracker != NULL) {
        /* the State-Tracker writes what the harness facts do not capture */
        struct strbuf msgs = {0};
        strbuf_printf(&msgs, "user: %s\n", utterance);
        if (tb->outputs.len > 0) {
            strbuf_printf(&msgs, "assistant: %s\n", tb->outputs.data);
        }
        if (results.len > 0) {
            strbuf_printf(&msgs, "tool: %s\n", results.data);
        }
        char *lines = NULL;
        struct tracker_stats ts;
        st = msgs.failed ? PIPIT_ERR_NOMEM : tracker_update(a->tracker, msgs.data, &lines, &ts);
        strbuf_free(&msgs);
        t->tracker_ms = ts.ms;
        t->tracker_kv_bytes = ts.kv_bytes;
        t->tracker_skipped = ts.skipped;
        for (char *line = lines; st == PIPIT_OK && line != NULL && *line != '\0';) {
            char *nl = strchr(line, '\n');
            if (nl != NULL) {
                *nl = '\0';
            }
            t->tracker_lines += memory_add_tracker_line(&a->mem, line) ? 1 : 0;
            line = nl != NULL ? nl + 1 : NULL;
        }
        free(lines);
    }
    strbuf_free(&results);
    if (st != PIPIT_OK) {
        return st;
    }
    st = memory_end_turn(&a->mem);
    if (st != PIPIT_OK) {
        return st;
    }
    int64_t n = 0;
    st = a->backend.ops->flush(a->backend.self, &n);
    t->permanent_prefill_tokens += n;
    t->prefill_tokens += n;
    if (st != PIPIT_OK) {
        return st;
    }
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    if (a->system_tokens < 0) {
        a->system_tokens = np; /* the system text and tools, before any memory */
    }
    char *delta = memory_take_delta(&a->mem);
    if (delta == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    if (a->tracker != NULL && delta[0] != '\0') {
        st = tracker_append_cso(a->tracker, delta); /* both contexts hold the same CSO */
        if (st == PIPIT_ERR_CONTEXT_FULL) {
            st = agent_sync_tracker(a); /* its newest lines, as the agent's own trim keeps */
        }
        if (st != PIPIT_OK) {
            free(delta);
            return st;
        }
    }
    a->eph_recent[a->eph_next] = a->eph_turn;
    a->eph_next = (a->eph_next + 1) % 16;
    a->eph_filled = a->eph_filled < 16 ? a->eph_filled + 1 : 16;
    int32_t budget = agent_memory_budget(a);
    if (delta[0] != '\0' && a->chat_template) {
        /* in a chat template, memory lines travel as a system message (a data span) */
        char *wrapped = NULL;
        st = agent_memory_message(a, delta, &wrapped);
        free(delta);
        delta = wrapped;
        if (st != PIPIT_OK) {
            return st;
        }
    }
    if (a->mem.n_superseded != a->superseded_at_rebuild) {
        /* lines went this turn (a fact set again, a goal met, an error resolved): the model
         * must not keep reading them, so the memory part of the prefix is prefilled again */
        free(delta);
        return agent_fit_memory(a, t, budget);
    }
    if (delta[0] != '\0' && np + agent_prefix_tokens(a, delta) > budget) {
        /* the new lines would not fit (they could overflow the context itself): trim the
         * memory with them in it and rebuild, instead of appending */
        free(delta);
        return agent_fit_memory(a, t, budget);
    }
    if (delta[0] != '\0') {
        n = 0;
        st = a->backend.ops->add_permanent(a->backend.self, delta);
        if (st == PIPIT_OK) {
            st = a->backend.ops->flush(a->backend.self, &n);
        }
        t->memory_prefill_tokens += n;
        t->prefill_tokens += n;
    }
    free(delta);
    if (st != PIPIT_OK) {
        return st;
    }
    return agent_trim_to_budget(a, t, budget);
}
/* Rebuild the permanent prefix from text: the system prompt (prefilled now, to know its length)
 * and the memory (prefilled on the next step). */
enum pipit_status agent_rebuild_prefix(struct pipit_agent *a) {
    a->backend.ops->reset(a->backend.self);
    enum pipit_status st = a->backend.ops->add_permanent(a->backend.self, a->system_text);
    int64_t n = 0;
    if (st == PIPIT_OK) {
        st = a->backend.ops->flush(a->backend.self, &n);
    }
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    a->system_tokens = np;
    char *text = agent_memory_prefix_text(a);
    if (st == PIPIT_OK && text == NULL) {
        st = PIPIT_ERR_NOMEM;
    }
    if (st == PIPIT_OK && text[0] != '\0') {
        st = a->backend.ops->add_permanent(a->backend.self, text);
    }
    free(text);
    a->superseded_at_rebuild = a->mem.n_superseded;
    return st == PIPIT_OK ? agent_sync_tracker(a) : st;
}

enum pipit_status agent_sync_tracker(struct pipit_agent *a) {
    if (a->tracker == NULL) {
        return PIPIT_OK;
    }
    char *text = memory_text(&a->mem);
    if (text == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    enum pipit_status st = tracker_reset_cso(a->tracker, text);
    free(text);
    return st;
}
