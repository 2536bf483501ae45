/*
 * memory.h - what the agent keeps in context between turns (the permanent prefix after the
 * system text and tools), in one of three modes (enum pipit_memory_mode):
 *
 *   NONE  nothing;
 *   FULL  the conventional history: every turn's user line, model output and result sentence;
 *   CSO   the Context State Object of the paper (seeds/000, section 3.2): an append-only log of
 *         short "key: value" lines written deterministically from tool results
 *         (user_goal:, done:, tool_error:, cloud:, ids), plus the State-Tracker's lines.
 *
 * The memory is text; the agent appends each turn's delta to the KV cache's permanent prefix
 * (only the delta is prefilled). When the prefix would exceed the context budget, the oldest
 * unpinned lines are trimmed (pinned: the latest user goal and unresolved tool errors) and the
 * agent rebuilds the memory part of the prefix; every trim is counted.
 *
 * Invariant: `lines` are in insertion order; `delta_from` indexes the first line not yet handed
 * out by memory_take_delta().
 */
#ifndef PIPIT_MEMORY_H
#define PIPIT_MEMORY_H

#include "pipit.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEMORY_MAX_LINE 240 /* bytes of one CSO line (cut on a character boundary) */

struct memory_line {
    char *text;     /* without its newline; owned */
    bool pinned;    /* kept by trimming */
    int8_t kind;    /* enum memory_kind */
    char tool[72];  /* tool of a tool_error line (to resolve it), else "" */
    uint32_t batch; /* the memory_take_delta() that handed it out (0: not yet): lines appended
                       together, which a rebuild keeps together (memory_group_end) */
};

struct memory {
    enum pipit_memory_mode mode;
    struct memory_line *lines;
    size_t n, cap;
    size_t delta_from;    /* first line not yet taken as a delta */
    uint32_t n_batches;   /* deltas taken, ever (the last line's batch) */
    size_t n_trimmed;     /* lines dropped by trimming, ever */
    size_t n_superseded;  /* "done:" lines made obsolete by newer facts, ever */
    char utterance[512];  /* the current turn's utterance */
    bool turn_done;       /* a call succeeded in the current turn */
    bool turn_failed;     /* a call failed in the current turn */
    char failed_tool[72]; /* the first tool that failed in the current turn (its goal's tool) */
    size_t n_trims;       /* trimming events, ever */
    size_t n_cleaned;     /* lines memory_from_json rewrote or dropped as text from outside */
};

void memory_init(struct memory *m, enum pipit_memory_mode mode);
void memory_free(struct memory *m);

/* A turn starts (the utterance is kept for memory_end_turn). */
enum pipit_status memory_begin_turn(struct memory *m, const char *utterance);

/* What kind of tool a call was, for its memory line. */
enum memory_call {
    MEMORY_CALL_WRITE = 0, /* it may change state (or its effects are unknown) */
    MEMORY_CALL_READ = 1,  /* read-only: it changed nothing */
    MEMORY_CALL_CLOUD = 2, /* cloud delegation (pipit_toolset_is_cloud()): the question is the
                              args' user_query_context, the answer is text from outside */
};

/* A tool call's outcome: harness facts, written deterministically. CSO lines:
 *   success  "key: value, key: value"  the result data: what changed, and IDs later turns
 *                                      refer to; keys the device's state line shows
 *                                      (`state_line`, may be NULL) are left out, since every
 *                                      prompt carries their current value; an older line whose
 *                                      keys are all set again is dropped (never one with an ID)
 *            a read-only tool (MEMORY_CALL_READ) changed nothing: only the IDs it showed are
 *            kept
 *   no data  "done: tool"
 *   cloud    "cloud: <summary>"        (MEMORY_CALL_CLOUD) the distilled line of the cloud's
 *                                      answer, not the answer
 *   failure  "tool_error: tool code"   pinned until the same tool succeeds
 * `args_json`/`data_json` are compact JSON objects. */
enum pipit_status memory_record_call(struct memory *m,
                                     const char *tool,
                                     const char *args_json,
                                     bool ok,
                                     const char *code,
                                     const char *data_json,
                                     const char *state_line,
                                     enum memory_call kind);

/* A turn ends. CSO: when a call failed and none succeeded, the user's goal stays open:
 * "user_goal: <utterance>" (the latest goal is pinned). */
enum pipit_status memory_end_turn(struct memory *m);

/* FULL mode: the conventional transcript of the turn, kept whole: the prompt the model saw
 * (state line and user line), its raw output, the tool results as JSON and the sentence the
 * person read (a cloud's whole answer included). In CSO mode only memory_record_call's lines
 * remain. */
enum pipit_status memory_record_exchange(struct memory *m,
                                         const char *prompt,
                                         const char *model_text,
                                         const char *results,
                                         const char *sentence);

/* A line from the State-Tracker ("key: value"); refused (false) unless well-formed. */
bool memory_add_tracker_line(struct memory *m, const char *line);

/* The lines added since the last call, one per line with newlines, as a new string (free with
 * free); "" when none; NULL when out of memory. */
char *memory_take_delta(struct memory *m);

/* All lines, one per line (free with free). */
char *memory_text(const struct memory *m);

/* Lines [from, to), one per line (free with free). */
char *memory_text_range(const struct memory *m, size_t from, size_t to);

/* The end of the run of lines from `from` on that were handed out by one memory_take_delta()
 * (or are all not yet handed out): the agent wraps each run as it appended it, so a rebuild of
 * the prefix gives the same tokens up to the first line that went. */
size_t memory_group_end(const struct memory *m, size_t from);

/* Drop the oldest unpinned lines until the text is at most `max_bytes` long or only pinned
 * lines are left. Returns the number of lines dropped (counted in n_trimmed/n_trims). */
size_t memory_trim(struct memory *m, size_t max_bytes);

/* Unpin the oldest pinned line (it becomes the first trimmed): for when the pinned lines alone
 * no longer fit the budget. Returns false when no line is pinned. */
bool memory_unpin_oldest(struct memory *m);

/* Bytes of memory_text(). */
size_t memory_bytes(const struct memory *m);

/* The memory as JSON (new reference) for session files, and back. memory_from_json replaces
 * `m` (whose mode must match: PIPIT_ERR_STATE) only when the whole object is valid
 * (PIPIT_ERR_CORRUPT otherwise); the restored lines count as already in the context. A session
 * is data too: a "cloud:" line that holds an answer (sessions written before the answer was
 * kept out) becomes "cloud: answered", and a fact, error or tracker line with call syntax or
 * control text (untrusted.h) is dropped; `n_cleaned` counts them (the context must then be
 * rebuilt from the lines, not restored from the session's KV state). */
json_t *memory_to_json(const struct memory *m);
enum pipit_status memory_from_json(struct memory *m, const json_t *j, struct pipit_error *err);

#endif /* PIPIT_MEMORY_H */
