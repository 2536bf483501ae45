/*
 * tracker.h - the State-Tracker of the paper (seeds/000, section 3.2 and the appendix "KV Cache
 * Management for Dual Adapters"): a second context on the same model, with its own LoRA
 * adapter when one is given, otherwise prompted with the paper's State-Tracker prompt. Its KV
 * cache holds a permanent part (its prompt plus the CSO so far) and an ephemeral part (the
 * newest messages). After each turn it writes only new CSO lines, or "# NO_UPDATE".
 *
 * Its output is grammar-constrained to that shape ("key: value" lines, at most
 * TRACKER_MAX_LINES, or "# NO_UPDATE"), and every line is validated again by the memory
 * (memory_add_tracker_line) before it enters the CSO.
 */
#ifndef PIPIT_TRACKER_H
#define PIPIT_TRACKER_H

#include "pipit.h"

#include <stdint.h>

#define TRACKER_MAX_LINES  3
#define TRACKER_MAX_TOKENS 64

/* Tokens the tracker keeps free past its permanent prefix (its prompt and the CSO): the turn's
 * messages and its answer. A CSO that would leave less is refused (tracker_append_cso) or cut
 * from its oldest lines (tracker_reset_cso). */
#define TRACKER_ROOM (TRACKER_MAX_TOKENS + 128)

struct tracker;

/* A tracker on `model` (borrowed). `adapter` (borrowed, may be NULL) is applied with scale 1.
 * Its window holds its prompt, a CSO of `cso_max` tokens (the agent's prompt limit: its memory
 * never takes more) and TRACKER_ROOM; `flash_attn` as in pipit_context_params. */
enum pipit_status tracker_new(struct pipit_model *model,
                              uint32_t cso_max,
                              int32_t n_threads,
                              bool flash_attn,
                              struct pipit_adapter *adapter,
                              struct tracker **out,
                              struct pipit_error *err);

void tracker_free(struct tracker *t);

/* What one update cost. */
struct tracker_stats {
    double ms;              /* wall time of the update */
    int64_t prefill_tokens; /* tokens prefilled (the new messages and CSO delta) */
    int64_t decode_tokens;  /* tokens generated */
    int32_t n_permanent;    /* the tracker's permanent prefix after the update */
    int64_t kv_bytes;       /* bytes of its KV state (its memory cost) */
    bool skipped;           /* the messages did not fit its context: nothing was read */
};

/* Ask for the new lines after a turn. `messages` is the turn ("user: ...\nassistant: ...\n
 * tool: ...\n"). The generated lines (possibly none) go to `out` as one string with newlines
 * (free with free). The ephemeral part is rewound afterwards. */
enum pipit_status
tracker_update(struct tracker *t, const char *messages, char **out, struct tracker_stats *stats);

/* Append the CSO delta to the tracker's permanent prefix (both contexts hold the same CSO).
 * PIPIT_ERR_CONTEXT_FULL, with nothing appended, when it would leave less than TRACKER_ROOM:
 * the caller then resets the whole CSO. */
enum pipit_status tracker_append_cso(struct tracker *t, const char *delta);

/* Replace the CSO the tracker holds with `cso` (the agent trimmed or rebuilt its memory): its
 * context holds its prompt and the newest lines of `cso` that leave TRACKER_ROOM. */
enum pipit_status tracker_reset_cso(struct tracker *t, const char *cso);

#endif /* PIPIT_TRACKER_H */
