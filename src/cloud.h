/*
 * cloud.h - delegation to a larger model behind an OpenAI-compatible chat-completions API
 * (libcurl). The public half (struct pipit_cloud, pipit_cloud_*) is declared in pipit.h; this
 * header adds what the agent and the tests use inside the library.
 *
 *     struct pipit_cloud_params cp = pipit_cloud_default_params();
 *     pipit_cloud_params_from_env(&cp);                 // PIPIT_CLOUD_URL, _KEY, _MODEL
 *     struct pipit_cloud *cloud = NULL;
 *     pipit_cloud_init(&cp, &cloud, &err);              // no URL: every call answers
 *                                                       // cloud_not_configured, offline
 *     struct device_result r = {0};
 *     cloud_tool_call(cloud, args, policy_clock_remaining_ms(&clock), &r, NULL);
 *     ... render r through process_with_cloud_llm's templates ...
 *     device_result_clear(&r);
 *     pipit_cloud_free(cloud);
 *
 * Invariants:
 * - Nothing leaves the device unless a URL is configured; without one no socket is opened and
 *   libcurl is not even initialised.
 * - A call never outlives its budget: every attempt's connect and total timeouts are cut to the
 *   time left, backoff sleeps only when another attempt still fits, and the whole call
 *   (attempts, backoff, parsing) ends before `budget_ms` has passed.
 * - Retries happen on timeouts and HTTP 5xx only; never on 4xx, refused connections, bad JSON,
 *   truncated or oversized bodies.
 * - A response body is never held beyond max_response_bytes; the answer and its distilled line
 *   are bounded and valid UTF-8.
 *
 * Thread safety: a `pipit_cloud` is used by one thread at a time; different handles may be used
 * on different threads (libcurl's global initialisation runs once, under pthread_once).
 */
#ifndef PIPIT_CLOUD_H
#define PIPIT_CLOUD_H

#include "device.h"
#include "pipit.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

/* Reason codes of a failed delegation (process_with_cloud_llm's failure templates). */
#define CLOUD_NOT_CONFIGURED "cloud_not_configured"
#define CLOUD_TIMEOUT        "cloud_timeout"
#define CLOUD_ERROR          "cloud_error"
#define CLOUD_CANCELLED      "cloud_cancelled" /* the cancel flag was set (Ctrl-C) */

/* The tool the agent routes to the cloud, and its two arguments. */
#define CLOUD_TOOL_NAME  "process_with_cloud_llm"
#define CLOUD_ARG_QUERY  "user_query_context"
#define CLOUD_ARG_REASON "reason_for_escalation"

/* Run `process_with_cloud_llm` for the agent. `args` is the call's argument object
 * ({"user_query_context": string, "reason_for_escalation": string}); `cloud` may be NULL (not
 * configured); `budget_ms` as in pipit_cloud_ask(). `r` is overwritten (pass it zeroed or
 * cleared) and receives, on success, data {"answer": <bounded answer>, "summary": <distilled
 * line>}, on failure code cloud_not_configured / cloud_timeout / cloud_error and a message for
 * the template's {error} (cloud_cancelled when `cancel`, which may be NULL, was set during the
 * call: see cloud_ask()). Answer, summary and message are cleaned (untrusted.h). When `detail` is
 * not NULL it receives the whole result (attempts, latency, HTTP status; clear it with
 * pipit_cloud_result_clear()). Returns PIPIT_OK                the call was handled; r->ok says how
 * it went PIPIT_ERR_INVALID_ARGS  args is not an object or the query is missing / not a string /
 *                           too long (r: code "invalid_argument")
 *   PIPIT_ERR_INVALID_ARG   r is NULL
 *   PIPIT_ERR_NOMEM         an allocation failed (r: code "cloud_error") */
enum pipit_status cloud_tool_call(struct pipit_cloud *cloud,
                                  const json_t *args,
                                  double budget_ms,
                                  const atomic_bool *cancel,
                                  struct device_result *r,
                                  struct pipit_cloud_result *detail);

/* pipit_cloud_ask() with a cancel flag (may be NULL): once another thread (or a signal handler)
 * sets it, the call ends within about CLOUD_POLL_MS (20 ms) with code cloud_cancelled, nothing
 * retried. The flag is only read. */
enum pipit_status cloud_ask(struct pipit_cloud *cloud,
                            const char *query,
                            const char *reason,
                            double budget_ms,
                            const atomic_bool *cancel,
                            struct pipit_cloud_result *out);

/* The distilled-memory rule: the first sentence of `answer`, on one line (whitespace runs and
 * newlines collapsed, control characters dropped), cut on a word or character boundary to at
 * most PIPIT_CLOUD_SUMMARY_MAX bytes (ending in "..." when cut). Written NUL-terminated into
 * `buf` (also cut to `size`); always valid UTF-8 when `answer` is. NULL answer: "". */
void cloud_distill(const char *answer, char *buf, size_t size);

#endif /* PIPIT_CLOUD_H */
