/*
 * eval.h - internal view of the evaluation harness (the public API is in pipit.h,
 * "evaluation"; the scenario format and the metrics are in docs/eval.md).
 *
 * The pieces are exposed here so that tests can check each rule on hand-made data: call
 * matching, the precision/recall/F1 edge cases, report building from recorded turns, and a
 * run on a scripted fake backend (an agent factory instead of pipit_agent_init()).
 *
 * Invariants of a loaded scenario set: 1..EVAL_MAX_SCENARIOS scenarios with unique ids; every
 * scenario has 1..PIPIT_SCENARIO_MAX_TURNS turns, each with a "user" string and an "expect"
 * array of {"tool", "args"?, "tol"?, "contains"?}; injections name a turn in range. The JSON nodes
 * are owned by the set.
 */
#ifndef PIPIT_EVAL_H
#define PIPIT_EVAL_H

#include "pipit_tools.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVAL_MAX_SCENARIOS  10000
#define EVAL_MAX_LINE       (64 * 1024) /* bytes per scenario line */
#define EVAL_MAX_CATEGORIES 32
#define EVAL_MAX_EXPECT     8   /* expected calls per turn */
#define EVAL_MAX_MISSES     200 /* misses kept per configuration */
#define EVAL_DEFAULT_TOL    1e-6

_Static_assert(EVAL_MAX_EXPECT <= 8, "struct eval_oracle keeps one bit per expectation in a byte");

struct eval_scenario {
    char id[64];
    char category[32];
    char device[16];   /* "camera" when the scenario names none */
    bool device_given; /* the scenario's "device"; without it the tool set decides */
    int32_t line;      /* 1-based line in the file */
    json_t *init;      /* object or NULL */
    json_t *turns;     /* array of turn objects */
    json_t *inject;    /* array or NULL */
};

struct pipit_scenarios {
    char name[256]; /* file name for messages */
    struct eval_scenario *items;
    size_t n;
};

/* ============================================================================ oracle */

/* What the oracle found in one scenario. */
struct eval_oracle {
    uint64_t state_skip;                       /* bit t: turn t had a finding, state unchecked */
    uint8_t refused[PIPIT_SCENARIO_MAX_TURNS]; /* bit k: turn t's expectation k is out of
                                                  range: refused by validation or by the
                                                  device's limit ("*_out_of_range") */
    int32_t n_findings;
};

/* The oracle on scenario `index` (pipit_scenarios_check for one scenario). */
enum pipit_status eval_oracle_scenario(const struct pipit_scenarios *set,
                                       size_t index,
                                       const struct pipit_eval_device *devices,
                                       size_t n_devices,
                                       const struct pipit_scenarios_check_params *params,
                                       struct eval_oracle *out,
                                       struct pipit_error *err);

/* ============================================================================ matching */

/* Does the call `tool(args_json)` satisfy the expectation `exp` ({"tool", "args"?, "tol"?})?
 * Listed keys must be present and equal (numbers within tol, strings ignoring ASCII case,
 * arrays and objects element-wise); unlisted keys are free; no "args" matches any arguments. */
bool eval_call_matches(const json_t *exp, const char *tool, const char *args_json);

/* Maximum one-to-one matching of `expect` (array) against the made calls, whatever their
 * outcome (refused by validation or the device, failed); a call that did not parse
 * (PIPIT_ERR_PARSE) never matches. Returns the number of matched pairs; matched_call[i] (may
 * be NULL, n_calls entries) is set for matched calls. */
int32_t eval_match_calls(const json_t *expect,
                         const struct pipit_call_record *calls,
                         size_t n_calls,
                         bool *matched_call);

/* Are the `want` state keys (object) equal in `got` (object)? Numbers within 1e-6. The first
 * differing key goes to `diff` ("zoom: want 2, got 3"), which may be NULL. */
bool eval_state_matches(const json_t *want, const json_t *got, char *diff, size_t diff_size);

/* Does `sentence` contain every string of `needles` (array), ignoring ASCII case? */
bool eval_reply_matches(const json_t *needles, const char *sentence);

/* Precision = correct / made, recall = correct / expected, F1 = their harmonic mean. With no
 * call made precision is 1; with none expected recall is 1; F1 is 0 when both are 0. */
void eval_prf(int64_t correct, int64_t made, int64_t expected, double *p, double *r, double *f1);

/* ============================================================================ reports */

/* What one scenario turn produced, in one configuration. */
struct eval_turn_record {
    int32_t category;   /* index into the report's categories */
    int32_t turn_index; /* 0-based turn of the scenario */
    int32_t n_expected; /* expected calls */
    int32_t n_made;     /* calls attempted (every call record, parsed or not) */
    int32_t n_correct;  /* made calls matched to an expectation */
    int32_t n_valid;    /* calls that parsed and validated (status PIPIT_OK) */
    bool state_checked; /* the turn lists "state" and the oracle had no finding on it */
    bool state_skipped; /* the turn lists "state" but the oracle had a finding: unchecked */
    bool state_ok;
    bool reply_checked; /* the turn lists "reply_contains" */
    bool reply_ok;
    bool error;          /* the agent returned an error: nothing else was recorded */
    int32_t model_calls; /* decodes run */
    int64_t prefill_tokens;
    int32_t context_tokens; /* n_permanent + n_ephemeral_max of the turn */
    double latency_ms;
    double ttft_ms; /* < 0: no model call this turn */
    /* the router, measured (not a filter) */
    bool undo_marked;        /* the turn says "undo": true */
    bool routed_undo;        /* the router sent (part of) the turn to undo (PIPIT_TURN_UNDO) */
    int32_t n_steps;         /* steps the router made of the utterance (pipit_turn.n_steps) */
    bool new_action;         /* a call other than the built-in undo executed successfully */
    int32_t oor_expected;    /* expectations the oracle expects refused (out of range) */
    int32_t oor_refused;     /* ... attempted, refused, no call of that tool succeeded */
    int32_t oor_substituted; /* ... a call of that tool with other arguments succeeded */
    bool question;           /* a state question: "expect": [] with reply_contains, not undo */
    bool from_state;         /* ... answered from the device's state (PIPIT_TURN_STATE_ANSWER) */
};

/* Fill rec's call counts (n_made, n_valid: every call but the model's undo() on a turn marked
 * undo), router and refusal fields (undo_marked, routed_undo, n_steps, new_action, oor_*) from
 * the scenario turn, the oracle's refused-expectation bits and what the agent did. */
void eval_score_router_and_refusals(const json_t *turn,
                                    uint8_t refused,
                                    const struct pipit_turn *t,
                                    struct eval_turn_record *rec);

/* An empty report for `n_configs` configurations. */
struct pipit_eval_report *eval_report_new(const struct pipit_eval_config *configs, size_t n);

/* The index of `category`, added when new (-1 when the table is full). */
int32_t eval_report_category(struct pipit_eval_report *r, const char *category);

/* Record a turn; false when out of memory. */
bool eval_report_add(struct pipit_eval_report *r, size_t config, const struct eval_turn_record *t);

/* Append one line to the configuration's misses (at most EVAL_MAX_MISSES are kept). */
void eval_report_miss(struct pipit_eval_report *r, size_t config, const char *line);

/* ============================================================================ running */

/* Makes the agent for one scenario (pipit_agent_init, or a scripted backend in tests). */
typedef enum pipit_status (*eval_agent_factory)(void *user_data,
                                                const struct pipit_toolset *tools,
                                                const struct pipit_agent_params *params,
                                                struct pipit_agent **out,
                                                struct pipit_error *err);

/* pipit_eval_run() with a custom agent factory. */
enum pipit_status eval_run_with(eval_agent_factory factory,
                                void *factory_user_data,
                                const struct pipit_scenarios *set,
                                const struct pipit_eval_config *configs,
                                size_t n_configs,
                                const struct pipit_eval_params *params,
                                struct pipit_eval_report **out,
                                struct pipit_error *err);

#endif /* PIPIT_EVAL_H */
