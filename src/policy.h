/*
 * policy.h - limits owned by the harness, never by the model: steps per turn,
 * a wall-clock budget, tokens per decode, thermal throttling and the
 * identical-failure breaker.
 *
 *     struct policy_params pp = policy_default_params(false);        // CPU
 *     struct policy_clock clock;
 *     policy_clock_start(&clock, pp.turn_budget_ms);
 *     struct policy_breaker br;
 *     policy_breaker_init(&br, pp.breaker_threshold);
 *     for (int32_t step = 0; step < pp.max_steps && !policy_clock_expired(&clock); step++) {
 *         enum pipit_thermal t = PIPIT_THERMAL_NONE;
 *         policy_thermal_read(NULL, &t, NULL);     // or the platform's own reading
 *         struct policy_limits lim;
 *         policy_thermal_limits(t, 4, pp.max_tokens, &lim);
 *         if (lim.paused) break;
 *         ... decode with lim.n_threads and lim.max_tokens, execute the call ...
 *         if (policy_breaker_record(&br, tool, args_json, ok, code)) break;  // say br.code
 *     }
 *
 * Everything here is plain data on the caller's stack: no allocation, no global
 * state. The tables and the reasons for the numbers are in docs/policy.md.
 *
 * Thread safety: the objects are used by one thread at a time; the functions
 * keep no state of their own.
 */
#ifndef PIPIT_POLICY_H
#define PIPIT_POLICY_H

#include "pipit.h"

#include <stdbool.h>
#include <stdint.h>

/* ============================================================================
 * defaults for one agent turn */

struct policy_params {
    int32_t max_steps;         /* model steps per turn, one per compound segment
                                  (default 3) */
    double turn_budget_ms;     /* wall-clock budget per turn in ms; <= 0 = unlimited
                                  (default CPU 15000, GPU 5000) */
    int32_t max_tokens;        /* tokens generated per decode before the thermal
                                  scaling (default 64) */
    int32_t breaker_threshold; /* identical consecutive failures that stop the turn
                                  (default 2) */
};

/* The defaults for a CPU (`gpu` false) or GPU backend. The budget is sized so
 * that max_steps steps fit at the backend's expected step latency (CPU about
 * 4-5 s per prefill-bound step, GPU about 1 s) with some margin; a slower run
 * (thermal decay) is cut by the clock, not by the step count. */
struct policy_params policy_default_params(bool gpu);

/* ============================================================================
 * thermal throttling */

/* What one step may use at a thermal state. */
struct policy_limits {
    int32_t n_threads;     /* CPU threads for prefill and decode (>= 1; 0 when paused) */
    int32_t step_delay_ms; /* sleep before each model step, in ms */
    int32_t max_tokens;    /* tokens generated per decode (>= 1; 0 when paused) */
    bool paused;           /* CRITICAL: run no model step at all */
};

/* Scale `base_threads` and `base_max_tokens` (values < 1 count as 1) by the
 * thermal state, after seed 001's table (base 4 threads, 256 tokens):
 *
 *   state         threads          delay    tokens
 *   NONE, LIGHT   base             0 ms     base
 *   MODERATE      base / 2 (>= 1)  200 ms   base / 2 (>= 1)
 *   SEVERE        1                500 ms   base / 4 (>= 1)
 *   CRITICAL      paused (0)       0 ms     0
 *
 * A value outside the enum is treated as CRITICAL (fail safe). NULL `out` is a
 * no-op. */
void policy_thermal_limits(enum pipit_thermal t,
                           int32_t base_threads,
                           int32_t base_max_tokens,
                           struct policy_limits *out);

/* Thresholds on the hottest zone, in millidegrees Celsius. */
#define POLICY_THERMAL_LIGHT_MC    45000 /* below: NONE */
#define POLICY_THERMAL_MODERATE_MC 55000 /* below: LIGHT */
#define POLICY_THERMAL_SEVERE_MC   65000 /* below: MODERATE */
#define POLICY_THERMAL_CRITICAL_MC 75000 /* below: SEVERE; at or above: CRITICAL */

/* Readings outside this range are a broken or disabled sensor and are skipped. */
#define POLICY_THERMAL_MIN_MC    (-50000)
#define POLICY_THERMAL_MAX_MC    200000
#define POLICY_THERMAL_MAX_ZONES 128 /* zones looked at; more are ignored */

/* The thermal state of a temperature in millidegrees Celsius (thresholds
 * above). */
enum pipit_thermal policy_thermal_from_mc(int32_t millicelsius);

/* Read `<sysfs_root>/class/thermal/thermal_zoneN/temp` (millidegrees Celsius,
 * as Linux and Android kernels report them; `sysfs_root` NULL means "/sys")
 * and put the hottest valid reading in *out_mc. A zone whose file cannot be
 * read, does not hold one integer, or lies outside [POLICY_THERMAL_MIN_MC,
 * POLICY_THERMAL_MAX_MC] is skipped. Errors (err may be NULL, *out_mc is then
 * unchanged):
 *   PIPIT_ERR_INVALID_ARG  out_mc is NULL, or the root path is too long
 *   PIPIT_ERR_IO           the thermal directory cannot be opened, has no
 *                          thermal_zone* entries, or none of them has a valid
 *                          reading (the message names the directory) */
enum pipit_status
policy_thermal_read_mc(const char *sysfs_root, int32_t *out_mc, struct pipit_error *err);

/* policy_thermal_read_mc() mapped through policy_thermal_from_mc(). */
enum pipit_status
policy_thermal_read(const char *sysfs_root, enum pipit_thermal *out, struct pipit_error *err);

/* ============================================================================
 * wall-clock budget */

struct policy_clock {
    double start_ms;  /* pipit_now_ms() when started */
    double budget_ms; /* the budget in ms; 0 = unlimited */
};

/* Start the clock now. A budget <= 0 (or NaN) means unlimited. NULL is a
 * no-op. */
void policy_clock_start(struct policy_clock *c, double budget_ms);

/* Milliseconds since the start (>= 0). 0 for NULL. */
double policy_clock_elapsed_ms(const struct policy_clock *c);

/* Milliseconds left: never negative; HUGE_VAL when the budget is unlimited; 0
 * for NULL. */
double policy_clock_remaining_ms(const struct policy_clock *c);

/* True once the elapsed time reaches the budget; never for an unlimited
 * budget; true for NULL (fail safe: a missing clock stops the loop). */
bool policy_clock_expired(const struct policy_clock *c);

/* ============================================================================
 * identical-failure breaker */

#define POLICY_BREAKER_DEFAULT  2
#define POLICY_BREAKER_TOOL_CAP 64
#define POLICY_BREAKER_ARGS_CAP 256
#define POLICY_BREAKER_CODE_CAP 64

/*
 * Counts consecutive failures of the same call: same tool name, same canonical
 * arguments (the caller serializes them with sorted keys, e.g. jansson's
 * JSON_COMPACT | JSON_SORT_KEYS) and the same reason code. Identity is exact:
 * the strings are compared by their full length and a 64-bit hash, not only by
 * the copies kept here (which are cut to fit, for messages). A zeroed struct is
 * a valid breaker with the default threshold.
 */
struct policy_breaker {
    int32_t threshold; /* failures in a row that trip it; <= 0 means the default (2) */
    int32_t count;     /* consecutive identical failures of the call below; 0 = none */
    uint64_t hash;     /* hash of (tool, args, code) of the last failure */
    size_t tool_len;   /* full lengths of the last failure's strings */
    size_t args_len;
    size_t code_len;
    char tool[POLICY_BREAKER_TOOL_CAP]; /* the last failing tool (cut to fit) */
    char args[POLICY_BREAKER_ARGS_CAP]; /* its canonical arguments (cut to fit) */
    char code[POLICY_BREAKER_CODE_CAP]; /* its reason code, e.g. "flash_unavailable" */
};

/* Zero `b` and set its threshold (<= 0: the default). NULL is a no-op. */
void policy_breaker_init(struct policy_breaker *b, int32_t threshold);

/* Forget the recorded failure; the threshold stays. NULL is a no-op. */
void policy_breaker_reset(struct policy_breaker *b);

/* Record one call's outcome (NULL strings count as ""). A success, or a
 * failure of a different call (tool, args or code), starts over; a failure of
 * the same call counts up. Returns true when the same call has now failed
 * `threshold` times in a row (and keeps returning true while it repeats):
 * the caller stops calling tools and says why, from b->code. NULL `b`: false. */
bool policy_breaker_record(struct policy_breaker *b,
                           const char *tool,
                           const char *args_canonical,
                           bool ok,
                           const char *code);

/* True when the last recorded outcome tripped the breaker. */
bool policy_breaker_tripped(const struct policy_breaker *b);

#endif /* PIPIT_POLICY_H */
