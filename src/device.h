/*
 * device.h - the generic interface between the agent and a (simulated) device.
 *
 * A device owns a typed state (the camera's zoom, flash, ...) and a fixed set of
 * tools. The agent reaches every device the same way: it calls a tool by name
 * with a JSON object of arguments, reads the whole state as a JSON object (for
 * the state line of the prompt and for evaluations), and puts state keys back
 * (scenario `init`, undo).
 *
 * Invariants every device keeps:
 * - Its state is always inside its documented domain: no call sequence and no
 *   JSON, however odd, moves it outside, and a failed call changes nothing.
 * - Tool arguments arrive already validated against the tool's JSON schema, but
 *   a device re-checks every value it uses and never crashes on any JSON
 *   (NULL, non-objects, wrong types, missing keys, huge numbers).
 * - A device never prints, logs or exits; it reports through its return value
 *   and `struct device_result`.
 * - The keys of a success's `data` are state keys with their new values, so
 *   the action log can undo an action by putting the previous values of exactly
 *   those keys back with set_state().
 *
 * Thread safety: a device is used by one thread at a time.
 */
#ifndef PIPIT_DEVICE_H
#define PIPIT_DEVICE_H

#include "pipit.h"
#include "status.h"

#include <jansson.h>
#include <stdbool.h>

/* The outcome of one tool call that the device handled. */
struct device_result {
    bool ok;
    json_t *data;      /* success: owned object of the state keys the call changed, with
                          their new values, e.g. {"zoom": 2.0}; NULL on failure */
    char code[64];     /* failure: stable reason code, e.g. "zoom_out_of_range"; "" on success */
    char message[256]; /* failure: one human sentence naming the limit, e.g. "the back
                          camera zooms from 0.5x to 10x" (valid UTF-8); "" on success */
};

/* Free r->data and zero the whole result (ok = false, empty code and message).
 * NULL is a no-op. */
void device_result_clear(struct device_result *r);

/* Mark `r` failed with a reason code and a formatted message (both truncated to
 * fit). Frees r->data if set. */
void device_result_fail(struct device_result *r, const char *code, const char *fmt, ...)
    PIPIT_PRINTF(3, 4);

/* A short, bounded, valid-UTF-8 description of a JSON value for messages:
 * `2.5`, `"strobe"`, `null`, `true`, `an array`, `an object`, `missing` (NULL).
 * Long strings are cut (on a character boundary) and end with "...". */
void device_describe_json(const json_t *v, char *buf, size_t size);

/* The same for a C string (quoted, cut after 32 characters, invalid UTF-8 and
 * control characters shown as '?'). NULL describes as `missing`. */
void device_describe_string(const char *s, char *buf, size_t size);

/* How people name one state key and how a sentence says its value: optional words a device
 * adds to what the tool set already says (key names, tool names, enum values). The agent
 * answers state questions and checks plain-text claims with them (src/ask.h, docs/agent.md).
 * Every field but `key` may be NULL. */
struct device_key_words {
    const char *key;     /* the state key, e.g. "timer_s" */
    const char *names;   /* more phrases that name it, '|'-separated, lowercase ASCII words
                            ("timer|self timer|countdown") */
    const char *noun;    /* how a sentence names it ("the timer", "Wi-Fi"); NULL: "the" and
                            the key's words ("the white balance") */
    const char *unit;    /* written after a number: "x" ("2x"), " seconds" (1: " second") */
    const char *zero;    /* a number 0 reads as this word ("off"); NULL: the number */
    const char *pattern; /* the whole sentence, {v} the value ("The {v} camera is active.");
                            NULL: "<Noun> is <value>." */
    const char *yes;     /* a boolean's sentence when true ("It's recording."); NULL:
                            "<Noun> is on." */
    const char *no;      /* ... when false ("It isn't recording."); NULL: "<Noun> is off." */
};

struct device_ops;

/* A device instance: its operations and its private state. */
struct device {
    const struct device_ops *ops;
    void *self;
};

struct device_ops {
    const char *name; /* stable device name, e.g. "camera" */

    /* Free the device's state. NULL self is a no-op. */
    void (*destroy)(void *self);

    /* Execute `tool` with `args` (an object; NULL means no arguments). `r` is
     * overwritten without being freed first: pass a zeroed or cleared result, and
     * clear it after use. Returns
     *   PIPIT_OK                the device handled the call; r->ok says whether the
     *                           action succeeded (data) or failed (code, message)
     *   PIPIT_ERR_UNKNOWN_TOOL  the device has no such tool (r: code "unknown_tool")
     *   PIPIT_ERR_INVALID_ARGS  args is not an object (r: code "invalid_argument")
     *   PIPIT_ERR_INVALID_ARG   self, tool or r is NULL
     *   PIPIT_ERR_NOMEM         an allocation failed (state unchanged)
     * Only a PIPIT_OK with r->ok == true changes the state. */
    enum pipit_status (*call)(void *self,
                              const char *tool,
                              const json_t *args,
                              struct device_result *r);

    /* The whole state as a new object (new reference), NULL on allocation
     * failure or NULL self. */
    json_t *(*get_state)(const void *self);

    /* Apply `overrides`, an object of state keys and values. An unknown key, a
     * value of the wrong type or outside the key's domain, or a combination of
     * values the device cannot be in, returns PIPIT_ERR_JSON with err->text
     * naming the key and the value, and changes NOTHING (all-or-nothing). An
     * empty object is a no-op. Used for scenario `init` and by undo. */
    enum pipit_status (*set_state)(void *self, const json_t *overrides, struct pipit_error *err);

    /* Optional (may be NULL): a compact one-line summary of the state the model needs
     * for relative commands, written NUL-terminated into buf (cut to size), e.g. the
     * camera's "zoom=1 flash=off facing=back recording=no timer=0 mode=auto". It is the
     * prompt's "State:" line (docs/prompt.md). */
    void (*state_line)(const void *self, char *buf, size_t size);

    /* Optional (may be NULL with n_words 0): how people name state keys and how sentences
     * say their values, beyond what the tool set says. Constant data. */
    const struct device_key_words *words;
    size_t n_words;
};

/* The device's state line: ops->state_line, or when a device has none, the state's
 * scalar keys as "key=value" pairs. Always NUL-terminated. */
void device_state_line(const struct device *dev, char *buf, size_t size);

/* The common start of every device's call(): checks its arguments, finds `tool` in `table`
 * (`n` rows of `stride` bytes, each starting with its `const char *` name), and makes *args an
 * object (a new empty one, returned in *owned for the caller to release, when it was NULL).
 * On PIPIT_OK *index is the row; otherwise `r` says why (unknown_tool, invalid_argument) and
 * the status is what call() returns. */
enum pipit_status device_call_begin(const char *device,
                                    const void *self,
                                    const char *tool,
                                    const void *table,
                                    size_t n,
                                    size_t stride,
                                    size_t *index,
                                    const json_t **args,
                                    json_t **owned,
                                    struct device_result *r);

/* Destroy the device behind `dev` and zero `dev`. NULL or zeroed is a no-op. */
void device_free(struct device *dev);

/* ============================================================================
 * the public handle (include/pipit.h, "devices")
 *
 * A struct pipit_device owns one struct device and its name. The agent and the evaluation
 * reach the device through `dev` only; which device it is was decided by whoever made the
 * handle (src/devices/registry.c for pipit's own, pipit_device_from_app() for an app's).
 */

#define DEVICE_MAX_NAME 64

struct pipit_device {
    struct device dev;              /* ops never NULL */
    char name[DEVICE_MAX_NAME + 1]; /* "camera", "phone", the pack's or the app's name */
};

/* Wrap `dev` (taken over: on failure it is freed too) in a new handle named `name`, after
 * applying `init_json` (NULL: none) with set_state. Errors: PIPIT_ERR_JSON (not an object, or
 * the device refuses it; err->text names the key), PIPIT_ERR_NOMEM. */
enum pipit_status device_handle_new(struct device *dev,
                                    const char *name,
                                    const char *init_json,
                                    struct pipit_device **out,
                                    struct pipit_error *err);

#endif /* PIPIT_DEVICE_H */
