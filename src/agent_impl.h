/*
 * agent_impl.h - the agent's state, shared by the files of the agent (agent*.c) and by nothing
 * else: the public handle is opaque (pipit.h, "agent").
 *
 * The agent is split by concept (docs/design.md, "Layout"), each file below the ones that call it:
 *   agent.c          defaults, creation, setters, free
 *   agent_turn.c     pipit_agent_turn(): route, then decode, execute and render each segment
 *   agent_decode.c   one backend step, one segment's decode (two in JIT mode)
 *   agent_step.c     one decoded output: parse, validate, execute, the sentence
 *   agent_guard.c    the person's words: a copy the model misspelt or cut, the item named
 *   agent_choice.c   the person's choice: an enum value or an on/off said
 *   agent_choose.c   which tool the segment's verb, value, number or selector names
 *   agent_switch.c   switches and guesses nobody asked for; things the pack lacks
 *   agent_heard.c    what the person said, read for the four above
 *   agent_question.c questions (the cloud's, or kept from acting) and "don't ...": above
 *                    the guards
 *   agent_number.c   the person's numbers (written, said, in units, the ends of a range)
 *   agent_said.c     what a segment says (phrases, negation) and a call written back: below
 *                    the guards and the follow-ups
 *   agent_undo.c     the action log and undo
 *   agent_context.c  the permanent prefix between turns: memory delta, trimming to budget
 *   agent_prompt.c   the prompt texts and the prompt limit (token budget)
 *   agent_record.c   the turn's record: sentence, call records, its JSON, its free
 *   agent_session.c  pipit_agent_save() / pipit_agent_load()
 *
 * Invariants: between turns the backend's ephemeral tail is empty; the action log holds at most
 * undo_slots entries, newest last; the breaker persists across turns (the same call failing
 * turn after turn trips it too).
 */
#ifndef PIPIT_AGENT_IMPL_H
#define PIPIT_AGENT_IMPL_H

#include "agent.h"
#include "memory.h"
#include "policy.h"
#include "status.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdatomic.h>

#define AGENT_MAX_HANDLERS  64
#define AGENT_MAX_UTTERANCE (PIPIT_MAX_UTTERANCE_BYTES + 1)

struct action_entry {
    int32_t tool;              /* tool index */
    enum pipit_undo_kind kind; /* PIPIT_UNDO_KEYS, PIPIT_UNDO_IMPOSSIBLE, or PIPIT_UNDO_NO_STATE:
                                  a call that changed nothing ("bluetooth on" while it was on),
                                  so that "never mind" after it reverts nothing older */
    json_t *snapshot;          /* KEYS, NO_STATE: the keys' values before the call (owned) */
    int64_t turn;              /* the request that made it (pipit_agent.turn_seq: a segment
                                  of a turn): undo reverts a request's actions together ("all
                                  the lights"), one segment's at a time */
    int64_t utt;               /* the turn (utterance) that made it (pipit_agent.utt_seq) */
};

struct custom_handler {
    int32_t tool;
    pipit_tool_fn fn;
    void *user_data;
};

struct pipit_agent {
    struct pipit_model *model; /* NULL with a scripted backend */
    const struct pipit_toolset *ts;
    struct pipit_agent_params params;
    enum pipit_call_syntax syntax;
    bool chat_template; /* prompts through the model's chat template (Hermes) */
    struct pipit_grammar *grammar;
    struct pipit_grammar *grammar_no_undo; /* the pack's tools without the built-in undo: a
                                              step that chose undo with no word of undo in
                                              the request decodes again on it; NULL: none */
    const struct pipit_toolset *calls_ts;  /* what calls may name: ts, plus the built-in undo
                                              tool when ts has none (owned_calls_ts) */
    struct pipit_toolset *owned_calls_ts;
    struct ask *ask;       /* state questions and claims; NULL without a device */
    struct router *router; /* undo and compound splits, with the tool set's words */
    bool last_undo;        /* the previous turn was an undo: "and that too" undoes one more */
    bool last_answered;    /* the previous turn was answered from the state: "what about X?" */
    int32_t last_tool;     /* the last pack call that ran (ok or not), -1: none or undone */
    json_t *last_args;     /* its arguments (owned): "again", "the other way" start from them */
    bool last_ok;          /* it succeeded */
    char last_code[48];    /* its failure code when it failed ("ambiguous_recipient"), or "" */
    int64_t last_utt;      /* the turn it ran in (utt_seq) */
    size_t n_segments;     /* the current turn's segments ("Sam Rivera" answers as a whole) */
    int32_t failed_tool;   /* the last pack call that failed, -1: none (or it ran since) */
    json_t *failed_args;   /* its arguments (owned): "ok send it now" sends them again */
    char asked_key[64];    /* the one state key a question asked about since then, or "": "make
                              it 2" after "what's the zoom at?" sets the zoom */
    struct backend backend;
    struct device *dev;     /* params.device's device (borrowed); NULL: no device */
    char *system_text;      /* the permanent prompt text queued at creation */
    char *chat_system;      /* chat-template mode: the system message */
    size_t chat_prefix_len; /* chat-template mode: bytes of the rendered system message */

    struct policy_breaker breaker;
    enum pipit_thermal thermal;
    struct action_entry *log; /* undo_slots entries, the newest last */
    int32_t log_n;
    int32_t log_dropped; /* actions pushed out of the full log: undo cannot reach them */
    int64_t turn_seq;    /* the current request's number (a segment of a turn), for the log */
    int64_t utt_seq;     /* the current turn's number, for the log */
    struct custom_handler handlers[AGENT_MAX_HANDLERS];
    size_t n_handlers;
    struct pipit_cloud *cloud;    /* borrowed; NULL = not configured */
    struct memory mem;            /* what stays in context between turns */
    int32_t system_tokens;        /* permanent tokens of the system text and tools; -1 unknown */
    size_t superseded_at_rebuild; /* mem.n_superseded when the KV memory was last rebuilt */
    struct tracker *tracker;      /* the State-Tracker context, NULL when off */
    struct pipit_adapter *tracker_lora; /* its adapter, NULL = prompted base model */
    struct pipit_adapter *exec_lora;    /* the Executor context's adapter, NULL = none */
    atomic_bool cancel;
    atomic_bool in_step; /* a backend step runs: a cancel goes to the backend too */
    char errmsg[512];
    /* the prompt limit: the model's trained length (pipit.train.n_ctx, else its n_ctx_train),
     * at most n_ctx; the permanent prefix plus the ephemeral tail stays within it */
    int32_t prompt_limit;
    const char *limit_source;     /* where prompt_limit came from, for messages */
    int32_t eph_floor;            /* estimated tail of a short command, before any turn */
    int32_t eph_recent[16];       /* the longest tail of each of the last 16 turns */
    int32_t eph_next, eph_filled; /* the ring's next slot, and slots filled (<= 16) */
    int32_t eph_turn;             /* this turn's longest tail with at most a short answer's
                                     tokens of its output: what eph_recent keeps */
    bool tools_in_prompt;         /* the prompt lists the tools (not pipit.prompt.tools none) */
    char notice[512];             /* what creation changed to fit the prompt limit, or "" */
    char model_notice[640];       /* the model was trained for another pack (version), or "" */
    bool foreign_model;           /* ... for another pack: none of its answers is run */
    int32_t requested_format;     /* params.tools_format as given (the one used may be smaller) */
};

/* What one turn builds while it runs; the turn record is its result. */
struct turn_build {
    struct pipit_turn *turn;
    struct strbuf sentence;
    struct strbuf outputs; /* the steps' raw outputs (full-history memory) */
    struct strbuf prompts; /* the first step's prompt (full-history memory) */
    size_t cap_calls;
    const char *segment;   /* what the person said for the current step */
    const char *utterance; /* the whole utterance (copied strings come from it) */
    bool asked;            /* the segment stood before a '?' in the utterance */
    bool undid;            /* an undo ran this turn (routed or the model's) */
};

/* Every failing public call of the agent says why in pipit_agent_errmsg(): set it from `fmt`
 * and return `status`. */
enum pipit_status agent_fail(struct pipit_agent *a, enum pipit_status status, const char *fmt, ...)
    PIPIT_PRINTF(3, 4);

/* The same from a pipit_error filled by a callee (its text, or the status's name). */
enum pipit_status
agent_fail_err(struct pipit_agent *a, enum pipit_status status, const struct pipit_error *err);

#endif /* PIPIT_AGENT_IMPL_H */
