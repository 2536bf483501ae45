/*
 * agent.c - one turn: route -> decode -> validate -> execute -> render.
 *
 *   1. Route, no model: "undo" and the like revert the last action from the action log;
 *      a compound utterance is split into at most max_steps segments (router.c).
 *   2. Prompt: the permanent prefix (system text, tools) is queued once and stays in the
 *      backend's KV cache; each step prefills only "State: ...\nUser: ...\nAssistant: ".
 *   3. One decode per segment: plain text, or a grammar-locked call (lazy: the grammar starts
 *      at the call's trigger).
 *   4. Parse and re-validate the call against the tool set, then execute it (custom handler,
 *      else the device). Parse errors, unknown tools and bad arguments never reach a handler.
 *   5. The sentence comes from the tool's template and the real result; plain text that claims
 *      an action is replaced by an honest sentence.
 * The harness owns every limit (policy.c): steps, wall clock, tokens per decode, thermal
 * throttling, the identical-failure breaker, cancellation.
 *
 * Invariants: between turns the backend's ephemeral tail is empty; the action log holds at most
 * undo_slots entries, newest last; the breaker persists across turns (the same call failing
 * turn after turn trips it too).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent.h"

#include "ask.h"
#include "cloud.h"
#include "device.h"
#include "fileio.h"
#include "grammar.h"
#include "log.h"
#include "memory.h"
#include "policy.h"
#include "render.h"
#include "router.h"
#include "session.h"
#include "status.h"
#include "strbuf.h"
#include "toolspec.h"
#include "tracker.h"
#include "untrusted.h"
#include "utf8.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AGENT_MAX_HANDLERS  64
#define AGENT_MAX_UTTERANCE (PIPIT_MAX_UTTERANCE_BYTES + 1)

static const char *DEFAULT_SYSTEM =
    "You control a device with tools. Reply with one tool call, or briefly in words.";

struct action_entry {
    int32_t tool;              /* tool index */
    enum pipit_undo_kind kind; /* PIPIT_UNDO_KEYS or PIPIT_UNDO_IMPOSSIBLE */
    json_t *snapshot;          /* KEYS: the keys' values before the call (owned) */
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
    const struct pipit_toolset *calls_ts; /* what calls may name: ts, plus the built-in undo
                                             tool when ts has none (owned_calls_ts) */
    struct pipit_toolset *owned_calls_ts;
    struct ask *ask;       /* state questions and claims; NULL without a device */
    struct router *router; /* undo and compound splits, with the tool set's words */
    bool last_undo;        /* the previous turn was an undo: "and that too" undoes one more */
    struct backend backend;
    struct device *dev;     /* params.device's device (borrowed); NULL: no device */
    char *system_text;      /* the permanent prompt text queued at creation */
    char *chat_system;      /* chat-template mode: the system message */
    size_t chat_prefix_len; /* chat-template mode: bytes of the rendered system message */

    struct policy_breaker breaker;
    enum pipit_thermal thermal;
    struct action_entry *log; /* undo_slots entries, the newest last */
    int32_t log_n;
    struct custom_handler handlers[AGENT_MAX_HANDLERS];
    size_t n_handlers;
    struct pipit_cloud *cloud;    /* borrowed; NULL = not configured */
    struct memory mem;            /* what stays in context between turns */
    int32_t system_tokens;        /* permanent tokens of the system text and tools; -1 unknown */
    size_t superseded_at_rebuild; /* mem.n_superseded when the KV memory was last rebuilt */
    struct tracker *tracker;      /* the State-Tracker context, NULL when off */
    struct pipit_adapter *tracker_lora; /* its adapter, NULL = prompted base model */
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
    bool tools_in_prompt;         /* the prompt lists the tools (not pipit.prompt.tools none) */
    char notice[512];             /* what creation changed to fit the prompt limit, or "" */
    int32_t requested_format;     /* params.tools_format as given (the one used may be smaller) */
};

/* ============================================================================ defaults */

struct pipit_agent_params pipit_agent_default_params(void) {
    struct policy_params pp = policy_default_params(false);
    struct pipit_agent_params p = {
        .device = NULL,
        .syntax = -1,
        .grammar = true,
        .lazy_grammar = true,
        .fast_grammar = true,
        .system_prompt = NULL,
        .n_ctx = 2048,
        .n_threads = 0,
        .temperature = 0.0f,
        .seed = 42,
        .max_steps = pp.max_steps,
        .turn_budget_ms = pp.turn_budget_ms,
        .max_tokens = 96,
        .breaker_threshold = pp.breaker_threshold,
        .undo_slots = 8,
        .tools_format = PIPIT_TOOLSPEC_COMPACT,
        .memory = PIPIT_MEMORY_CSO,
        .context_budget = 0,
        .state_tracker = false,
        .tracker_adapter = NULL,
    };
    return p;
}

/* ============================================================================ prompt */

/* Hermes/Qwen system message: the system text and the tools as minified JSON. */
static char *hermes_system(const struct pipit_toolset *ts, const char *system, int32_t format) {
    struct strbuf b = {0};
    strbuf_str(&b, system);
    strbuf_str(&b, "\n\n# Tools\n\nYou may call one or more functions to assist with the user "
                   "query.\n\nYou are provided with function signatures within <tools></tools> "
                   "XML tags:\n<tools>");
    for (size_t i = 0; i < ts->n_tools; i++) {
        char *line = NULL;
        /* JIT: names and descriptions only; the chosen tool's schema comes in stage 2 */
        enum pipit_toolspec_format f =
            format == PIPIT_TOOLSPEC_JIT ? PIPIT_TOOLSPEC_JIT : PIPIT_TOOLSPEC_MINIFIED;
        if (pipit_toolset_serialize_tool(ts, i, f, &line) == PIPIT_OK) {
            strbuf_str(&b, "\n");
            strbuf_str(&b, line);
        } else {
            b.failed = true;
        }
        pipit_free(line);
    }
    strbuf_str(&b, "\n</tools>\n\nFor each function call, return a json object with function "
                   "name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
                   "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>");
    return strbuf_take(&b);
}

/* Append `text` to `b` as a data span (backend.h): tokenized without special tokens whatever
 * the step's parse_special. C0 control characters other than newline and tab are dropped, so
 * the text can neither hold nor fake a span marker. */
static void data_span(struct strbuf *b, const char *text) {
    strbuf_str(b, BACKEND_DATA_OPEN);
    for (const char *p = text; *p != '\0'; p++) {
        if ((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t') {
            strbuf_add(b, p, 1);
        }
    }
    strbuf_str(b, BACKEND_DATA_CLOSE);
}

/* Memory lines as permanent text: as they are in pipit's plain format (tokenized without
 * special tokens anyway); in a chat template, a system message whose content is one data span,
 * so that only the template's own text can give control tokens. *out: new string or NULL. */
static enum pipit_status memory_message(struct pipit_agent *a, const char *lines, char **out) {
    *out = NULL;
    struct strbuf b = {0};
    if (!a->chat_template) {
        strbuf_str(&b, lines);
        *out = strbuf_take(&b);
        return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
    }
    data_span(&b, lines);
    if (b.failed) {
        strbuf_free(&b);
        return PIPIT_ERR_NOMEM;
    }
    struct pipit_chat_message msg = {"system", b.data};
    enum pipit_status st = pipit_chat_apply_template(a->model, &msg, 1, false, "chatml", out);
    strbuf_free(&b);
    if (st != PIPIT_OK) {
        pipit_free(*out);
        *out = NULL;
        return st;
    }
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

/* Build and queue the permanent prefix. */
static enum pipit_status prepare_prompt(struct pipit_agent *a, struct pipit_error *err) {
    char meta[1024] = {0};
    const char *system = a->params.system_prompt;
    if (system == NULL && a->model != NULL &&
        pipit_model_meta_str(a->model, "pipit.prompt.system", meta, sizeof(meta)) >= 0) {
        system = meta;
    }
    if (system == NULL) {
        system = DEFAULT_SYSTEM;
    }
    a->tools_in_prompt = true;
    if (a->chat_template) {
        /* general instruct models read the tool list: the built-in undo is listed for them;
         * pipit-format prompts are a training contract and keep the pack's list */
        a->chat_system = hermes_system(a->calls_ts, system, a->params.tools_format);
        if (a->chat_system == NULL) {
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "agent: out of memory");
        }
        struct pipit_chat_message sys = {"system", a->chat_system};
        enum pipit_status st =
            pipit_chat_apply_template(a->model, &sys, 1, false, "chatml", &a->system_text);
        if (st != PIPIT_OK) {
            return pipit_error_set(err, st, "agent: the model's chat template failed");
        }
        a->chat_prefix_len = strlen(a->system_text);
    } else {
        bool tools_in_prompt = true;
        char tools_meta[32] = {0};
        if (a->model != NULL &&
            pipit_model_meta_str(a->model, "pipit.prompt.tools", tools_meta, sizeof(tools_meta)) >=
                0 &&
            strcmp(tools_meta, "none") == 0) {
            tools_in_prompt = false;
        }
        a->tools_in_prompt = tools_in_prompt;
        struct strbuf b = {0};
        strbuf_str(&b, system);
        strbuf_str(&b, "\n");
        if (tools_in_prompt) {
            char *compact = NULL;
            if (pipit_toolset_serialize(a->ts, (enum pipit_toolspec_format)a->params.tools_format,
                                        &compact) != PIPIT_OK) {
                strbuf_free(&b);
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "agent: out of memory");
            }
            strbuf_str(&b, "Tools:\n");
            strbuf_str(&b, compact);
            if (b.len > 0 && b.data[b.len - 1] != '\n') {
                strbuf_str(&b, "\n"); /* the JSON formats end without one */
            }
            pipit_free(compact);
        }
        a->system_text = strbuf_take(&b);
        if (a->system_text == NULL) {
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "agent: out of memory");
        }
    }
    return a->backend.ops->add_permanent(a->backend.self, a->system_text);
}

/* The ephemeral text of one step. In chat-template mode it is the rendering of
 * [system, user] minus the rendering of [system]. */
static char *step_prompt(struct pipit_agent *a, const char *segment, const char *tool_line) {
    char state[512] = "";
    if (a->dev != NULL) {
        device_state_line(a->dev, state, sizeof(state));
    }
    struct strbuf b = {0};
    if (!a->chat_template) {
        if (tool_line != NULL) {
            strbuf_printf(&b, "Tool: %s\n", tool_line);
        }
        strbuf_printf(&b, "State: %s\nUser: ", state);
        strbuf_line(&b, segment);
        strbuf_str(&b, "\nAssistant: ");
        return strbuf_take(&b);
    }
    struct strbuf text = {0};
    if (tool_line != NULL) {
        strbuf_printf(&text, "Tool: %s\n", tool_line);
    }
    strbuf_printf(&text, "State: %s\n", state);
    /* a user must not be able to type the template's control text: it is not even shown as
     * such (and the whole message is a data span: never control tokens, backend.h) */
    for (const char *p = segment; *p != '\0'; p++) {
        if (p[0] == '<' && (p[1] == '|' || strncmp(p + 1, "tool_call>", 10) == 0 ||
                            strncmp(p + 1, "/tool_call>", 11) == 0)) {
            strbuf_add(&text, "(", 1);
        } else {
            strbuf_add(&text, p, 1);
        }
    }
    struct strbuf user = {0};
    data_span(&user, text.data != NULL ? text.data : "");
    strbuf_free(&text);
    struct pipit_chat_message msgs[2] = {{"system", a->chat_system},
                                         {"user", user.data != NULL ? user.data : ""}};
    char *full = NULL;
    enum pipit_status st = pipit_chat_apply_template(a->model, msgs, 2, true, "chatml", &full);
    strbuf_free(&user);
    if (st != PIPIT_OK || full == NULL) {
        pipit_free(full);
        return NULL;
    }
    if (strlen(full) >= a->chat_prefix_len &&
        strncmp(full, a->system_text, a->chat_prefix_len) == 0) {
        strbuf_str(&b, full + a->chat_prefix_len);
    } else {
        /* the template re-renders earlier messages differently: fall back to ChatML */
        strbuf_printf(&b, "<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n",
                      msgs[1].content);
    }
    pipit_free(full);
    return strbuf_take(&b);
}

const char *agent_permanent_text(const struct pipit_agent *agent) {
    return agent != NULL ? agent->system_text : NULL;
}

/* ============================================================================ budget */

static const char *const FORMAT_NAMES[] = {"openapi", "minified", "compact", "jit"};

/* The name of the format the prompt really shows the tools in: the Hermes prompt lists them
 * minified in every format but JIT. */
static const char *shown_format(const struct pipit_agent *a, int32_t format) {
    if (a->chat_template && format != PIPIT_TOOLSPEC_JIT) {
        return FORMAT_NAMES[PIPIT_TOOLSPEC_MINIFIED];
    }
    return FORMAT_NAMES[format];
}

/* Tokens of `text` as the backend would prefill it; -1 without a model. */
static int32_t count_tokens(const struct pipit_agent *a, const char *text, bool add_special) {
    if (a->model == NULL || text == NULL) {
        return -1;
    }
    int32_t *toks = NULL, n = 0;
    enum pipit_status st = backend_tokenize(a->model, text, add_special, true, &toks, &n);
    free(toks);
    return st == PIPIT_OK ? n : -1;
}

/* The refusal of a prompt that leaves no room for a short command: what takes the room (the
 * system text, the tools, the state line, the rest of a turn) and, when the model was trained
 * for another pack (its pipit.prompt.system is neither the tool set's pack name nor its system
 * text), that cause first: a model learns one pack's prompt and length. */
static enum pipit_status prompt_too_long(struct pipit_agent *a,
                                         int32_t n_system,
                                         const char *tried,
                                         struct pipit_error *err) {
    char meta[1024] = "";
    bool has_meta = pipit_model_meta_str(a->model, "pipit.prompt.system", meta, sizeof(meta)) >= 0;
    const char *system = a->params.system_prompt != NULL ? a->params.system_prompt
                         : has_meta                      ? meta
                                                         : DEFAULT_SYSTEM;
    struct strbuf sb = {0};
    strbuf_printf(&sb, "%s\n", system); /* as prepare_prompt() writes it */
    int32_t n_text = sb.failed ? -1 : count_tokens(a, sb.data, true);
    strbuf_free(&sb);
    int32_t n_tools = n_text >= 0 && n_system > n_text ? n_system - n_text : 0;
    char state[512] = "";
    if (a->dev != NULL) {
        device_state_line(a->dev, state, sizeof(state));
    }
    char line[560];
    pipit_format(line, sizeof(line), "State: %s\n", state);
    int32_t n_state = count_tokens(a, line, false);
    n_state = n_state > 0 ? n_state : 0;
    const struct pipit_pack *pack = pipit_toolset_pack(a->ts);
    char other[1200] = "";
    if (has_meta && a->params.system_prompt == NULL && pack != NULL &&
        strcmp(meta, pack->name) != 0 &&
        (pack->system == NULL || strcmp(meta, pack->system) != 0)) {
        pipit_format(other, sizeof(other),
                     "; the model was trained for another pack (its pipit.prompt.system is "
                     "\"%.64s\", the tool set's pack is \"%s\"): train a model for \"%s\" "
                     "(docs/training.md) or run a general instruct model",
                     meta, pack->name, pack->name);
    }
    /* the smaller formats already tried (set_prompt_limit), and what is left to try */
    char also[320] = "";
    if (tried[0] != '\0') {
        pipit_format(also, sizeof(also),
                     " in the %s format, also too long in the larger tools format%s tried first "
                     "(%s tokens with the system text)",
                     shown_format(a, a->params.tools_format), strchr(tried, ',') ? "s" : "", tried);
    }
    const char *advice = other[0] != '\0' ? ""
                         : a->params.tools_format < PIPIT_TOOLSPEC_JIT
                             ? "; use a shorter tools format (compact or JIT), fewer tools, a "
                               "shorter state line, the pipit syntax, or a model trained on "
                               "longer prompts"
                             : "; use fewer tools, a shorter state line, the pipit syntax, or a "
                               "model trained on longer prompts";
    return pipit_error_set(
        err, PIPIT_ERR_CONTEXT_FULL,
        "agent: the prompt does not fit the model's trained length: system text %d tokens, "
        "tools %d, state line %d, a short command and its call about %d more: %d tokens, more "
        "than the prompt limit of %d (%s)%s%s%s",
        n_system - n_tools, n_tools, n_state, a->eph_floor - n_state, n_system + a->eph_floor,
        a->prompt_limit, a->limit_source, also, other, advice);
}

/* Tokens `text` takes in the permanent prefix: counted with the tokenizer, or its bytes on the
 * scripted backend (which counts bytes). */
static int32_t prefix_tokens(const struct pipit_agent *a, const char *text) {
    if (a->model == NULL) {
        return (int32_t)strlen(text);
    }
    return count_tokens(a, text, false);
}

/* A short command's tail before any turn: the state line, the words, the header, and a call. */
static void set_eph_floor(struct pipit_agent *a) {
    char *tail = step_prompt(a, "zoom in to 2x and turn on the flash", NULL);
    int32_t n_tail = count_tokens(a, tail, false);
    free(tail);
    int32_t gen = a->params.max_tokens < 32 ? a->params.max_tokens : 32;
    a->eph_floor = (n_tail > 0 ? n_tail : 32) + gen;
}

/* The longest prompt the agent may build (DESIGN.md item 5): the length the model was trained
 * on, at most the context window. A system prompt and tools that leave no room for a short
 * command are refused here, with the numbers, instead of failing every turn. */
static enum pipit_status set_prompt_limit(struct pipit_agent *a, struct pipit_error *err) {
    a->prompt_limit = (int32_t)a->params.n_ctx;
    a->limit_source = "the context window n_ctx";
    if (a->model == NULL) {
        return PIPIT_OK; /* the scripted backend counts bytes: n_ctx is the limit */
    }
    char meta[32] = {0};
    long trained = 0;
    if (pipit_model_meta_str(a->model, "pipit.train.n_ctx", meta, sizeof(meta)) >= 0) {
        char *end = NULL;
        trained = strtol(meta, &end, 10);
        if (end == meta || *end != '\0' || trained < 1) {
            trained = 0;
        }
    }
    const char *source = "pipit.train.n_ctx";
    if (trained == 0) {
        struct pipit_model_info info;
        pipit_model_get_info(a->model, &info);
        trained = info.n_ctx_train;
        source = "the model's trained context_length";
    }
    if (trained > 0 && trained < a->prompt_limit) {
        a->prompt_limit = (int32_t)trained;
        a->limit_source = source;
    }
    /* the system text and tools must leave room for a short command; when they do not, the
     * tools are served in a smaller format (compact, then JIT) and the notice says so */
    struct strbuf tried = {0};
    int32_t n_system = -1;
    enum pipit_status st = PIPIT_OK;
    for (;;) {
        set_eph_floor(a);
        n_system = count_tokens(a, a->system_text, true);
        if (n_system < 0 || n_system + a->eph_floor <= a->prompt_limit || !a->tools_in_prompt ||
            a->params.tools_format >= PIPIT_TOOLSPEC_JIT) {
            break;
        }
        strbuf_printf(&tried, "%s%s %d", tried.len > 0 ? ", " : "",
                      shown_format(a, a->params.tools_format), n_system);
        a->backend.ops->reset(a->backend.self);
        free(a->system_text);
        free(a->chat_system);
        a->system_text = NULL;
        a->chat_system = NULL;
        /* the Hermes prompt lists every tool minified whatever the format, except JIT */
        a->params.tools_format =
            a->params.tools_format < PIPIT_TOOLSPEC_COMPACT && !a->chat_template
                ? PIPIT_TOOLSPEC_COMPACT
                : PIPIT_TOOLSPEC_JIT;
        st = prepare_prompt(a, err);
        if (st != PIPIT_OK) {
            strbuf_free(&tried);
            return st;
        }
    }
    if (n_system >= 0 && n_system + a->eph_floor > a->prompt_limit) {
        st = prompt_too_long(a, n_system, tried.len > 0 ? tried.data : "", err);
    } else if (tried.len > 0) {
        pipit_format(a->notice, sizeof(a->notice),
                     "agent: the tools did not fit the prompt limit of %d tokens (%s) beside a "
                     "short command of about %d tokens in the %s format (%s tokens with the "
                     "system text); using the %s format: %d tokens",
                     a->prompt_limit, a->limit_source, a->eph_floor,
                     shown_format(a, a->requested_format), tried.data,
                     shown_format(a, a->params.tools_format), n_system);
        pipit_log(PIPIT_LOG_WARN, "%s", a->notice);
    }
    strbuf_free(&tried);
    return st;
}

/* The permanent prefix may reach this many tokens: the prompt limit minus the longest tail
 * of the recent turns (or the estimate before any), and at most an explicit context_budget. */
static int32_t memory_budget(const struct pipit_agent *a) {
    int32_t tail = a->eph_floor;
    for (int32_t i = 0; i < a->eph_filled; i++) {
        tail = a->eph_recent[i] > tail ? a->eph_recent[i] : tail;
    }
    int32_t budget = a->prompt_limit - tail;
    /* the context window is a hard limit: a decode may run to max_tokens past the tail's
     * estimate (the tail counts the generated tokens of recent turns, not the most a decode may
     * write); on the scripted backend n_ctx is bytes and the estimate is the limit */
    int32_t hard = (int32_t)a->params.n_ctx - tail - a->params.max_tokens;
    if (a->model != NULL && hard < budget) {
        budget = hard;
    }
    if (a->params.context_budget > 0 && a->params.context_budget < budget) {
        budget = a->params.context_budget;
    }
    return budget;
}

/* ============================================================================ creation */

/* The built-in undo tool (docs/agent.md, "Undo"): no arguments; the agent reverts its action
 * log when the model calls it and never runs a tool for it. */
static const char *const UNDO_TOOL_NAME = "undo";
static const char *const UNDO_TOOL_JSON =
    "{\"type\": \"function\", \"function\": {\"name\": \"undo\", \"description\": \"Undo "
    "the last action: put the device back as it was before it\", \"parameters\": {\"type\": "
    "\"object\", \"properties\": {}, \"required\": []}}}";

/* What calls may name: the pack's tools, plus the built-in undo tool when the pack has no
 * tool of that name and room for one more. */
static enum pipit_status make_calls_toolset(struct pipit_agent *a, struct pipit_error *err) {
    a->calls_ts = a->ts;
    if (pipit_toolset_find(a->ts, UNDO_TOOL_NAME) >= 0 ||
        a->ts->n_tools >= PIPIT_TOOLSPEC_MAX_TOOLS || a->ts->root == NULL) {
        return PIPIT_OK; /* the pack's own undo tool (a handler of its own), or no room */
    }
    json_t *root = json_deep_copy(a->ts->root);
    json_t *list = json_is_array(root) ? root : json_object_get(root, "tools");
    json_t *undo = json_loads(UNDO_TOOL_JSON, 0, NULL);
    char *text = NULL;
    if (json_is_array(list) && undo != NULL && json_array_append(list, undo) == 0) {
        text = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    }
    json_decref(undo);
    bool shaped = json_is_array(list);
    json_decref(root);
    if (!shaped) {
        return PIPIT_OK; /* a document shape this agent does not extend */
    }
    if (text == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "agent: out of memory");
    }
    enum pipit_status st =
        pipit_toolset_load_string(text, strlen(text), a->ts->name, &a->owned_calls_ts, err);
    free(text);
    if (st == PIPIT_OK) {
        a->calls_ts = a->owned_calls_ts;
    }
    return st;
}

/* The state-question lexicon, from the tools and the device's state and words. */
static enum pipit_status make_ask(struct pipit_agent *a, struct pipit_error *err) {
    if (a->dev == NULL) {
        return PIPIT_OK;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    if (state == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "agent: out of memory");
    }
    enum pipit_status st =
        ask_new(a->ts, state, a->dev->ops->words, a->dev->ops->n_words, &a->ask, err);
    json_decref(state);
    return st;
}

enum pipit_status agent_new_with_backend(struct pipit_model *model,
                                         const struct pipit_toolset *tools,
                                         const struct pipit_agent_params *params,
                                         struct backend backend,
                                         struct pipit_agent **out,
                                         struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL || tools == NULL || backend.ops == NULL) {
        backend_free(&backend);
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: NULL argument");
    }
    *out = NULL;
    struct pipit_agent *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        backend_free(&backend);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "agent: out of memory");
    }
    a->model = model;
    a->ts = tools;
    a->backend = backend;
    a->params = params != NULL ? *params : pipit_agent_default_params();
    struct pipit_agent_params *p = &a->params;
    a->requested_format = p->tools_format;
    a->dev = p->device != NULL ? &p->device->dev : NULL;
    if (p->max_steps < 1 || p->max_steps > 8 || p->max_tokens < 1 || p->max_tokens > 4096 ||
        p->undo_slots < 1 || p->undo_slots > 256) {
        pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                        "agent: max_steps %d (1..8), max_tokens %d (1..4096) or undo_slots %d "
                        "(1..256) out of range",
                        (int)p->max_steps, (int)p->max_tokens, (int)p->undo_slots);
        pipit_agent_free(a);
        return PIPIT_ERR_INVALID_ARG;
    }
    if (p->tools_format < PIPIT_TOOLSPEC_OPENAPI || p->tools_format > PIPIT_TOOLSPEC_JIT ||
        p->memory < PIPIT_MEMORY_NONE || p->memory > PIPIT_MEMORY_CSO || p->context_budget < 0) {
        pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                        "agent: tools_format %d (0..3), memory %d (0..2) or context_budget %d "
                        "out of range",
                        (int)p->tools_format, (int)p->memory, (int)p->context_budget);
        pipit_agent_free(a);
        return PIPIT_ERR_INVALID_ARG;
    }
    memory_init(&a->mem, (enum pipit_memory_mode)p->memory);
    a->system_tokens = -1;
    bool has_template = false;
    if (model != NULL) {
        struct pipit_model_info info;
        pipit_model_get_info(model, &info);
        has_template = info.has_chat_template;
    }
    if (p->syntax < 0) {
        a->syntax = has_template ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
    } else if (p->syntax == PIPIT_SYNTAX_PIPIT || p->syntax == PIPIT_SYNTAX_HERMES) {
        a->syntax = (enum pipit_call_syntax)p->syntax;
    } else {
        pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: unknown syntax %d", (int)p->syntax);
        pipit_agent_free(a);
        return PIPIT_ERR_INVALID_ARG;
    }
    a->chat_template = model != NULL && a->syntax == PIPIT_SYNTAX_HERMES;
    policy_breaker_init(&a->breaker, p->breaker_threshold);
    atomic_init(&a->cancel, false);
    atomic_init(&a->in_step, false);
    a->log = calloc((size_t)p->undo_slots, sizeof(*a->log));
    a->router = router_new(tools);
    struct pipit_grammar_params gp = pipit_grammar_default_params();
    gp.syntax = a->syntax;
    enum pipit_status st = a->log == NULL || a->router == NULL ? PIPIT_ERR_NOMEM : PIPIT_OK;
    if (st == PIPIT_OK) {
        st = make_calls_toolset(a, err);
    }
    if (st == PIPIT_OK) {
        st = pipit_grammar_compile(a->calls_ts, &gp, &a->grammar, err);
    }
    if (st == PIPIT_OK) {
        st = make_ask(a, err);
    }
    if (st == PIPIT_OK) {
        st = prepare_prompt(a, err);
    }
    if (st == PIPIT_OK) {
        st = set_prompt_limit(a, err);
    }
    if (st == PIPIT_OK && p->state_tracker && p->memory == PIPIT_MEMORY_CSO) {
        if (model == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "agent: the State-Tracker needs a model");
        } else {
            if (p->tracker_adapter != NULL) {
                st = pipit_adapter_load(model, p->tracker_adapter, &a->tracker_lora, err);
            }
            if (st == PIPIT_OK) {
                st = tracker_new(model, p->n_ctx, p->n_threads, a->tracker_lora, &a->tracker, err);
            }
        }
    }
    if (st != PIPIT_OK) {
        if (err != NULL && err->text[0] == '\0') {
            pipit_error_set(err, st, "agent: cannot be created: %s", pipit_status_str(st));
        }
        pipit_agent_free(a);
        return st;
    }
    *out = a;
    return PIPIT_OK;
}

enum pipit_status pipit_agent_new(struct pipit_model *model,
                                  const struct pipit_toolset *tools,
                                  const struct pipit_agent_params *params,
                                  struct pipit_agent **out,
                                  struct pipit_error *err) {
    if (model == NULL || tools == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: NULL argument");
    }
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    struct backend b;
    enum pipit_status st =
        backend_llama_new(model, p.n_ctx, p.n_threads, p.temperature, p.seed, &b, err);
    if (st != PIPIT_OK) {
        return st;
    }
    return agent_new_with_backend(model, tools, &p, b, out, err);
}

void pipit_agent_free(struct pipit_agent *a) {
    if (a == NULL) {
        return;
    }
    for (int32_t i = 0; a->log != NULL && i < a->log_n; i++) {
        json_decref(a->log[i].snapshot);
    }
    free(a->log);
    memory_free(&a->mem);
    tracker_free(a->tracker);
    pipit_adapter_free(a->tracker_lora);
    ask_free(a->ask);
    router_free(a->router);
    backend_free(&a->backend);
    pipit_grammar_free(a->grammar);
    pipit_toolset_free(a->owned_calls_ts);
    free(a->system_text);
    free(a->chat_system);
    free(a);
}

void pipit_agent_get_budget(const struct pipit_agent *a, struct pipit_agent_budget *out) {
    if (a == NULL || out == NULL) {
        return;
    }
    memset(out, 0, sizeof(*out));
    out->prompt_limit = a->prompt_limit;
    out->n_ctx = (int32_t)a->params.n_ctx;
    out->system_tokens =
        a->system_tokens >= 0 ? a->system_tokens : count_tokens(a, a->system_text, true);
    out->memory_budget = memory_budget(a);
    out->tools_format = a->params.tools_format;
    pipit_format(out->notice, sizeof(out->notice), "%s", a->notice);
}

const char *pipit_agent_errmsg(const struct pipit_agent *agent) {
    return agent != NULL ? agent->errmsg : "agent: NULL";
}

enum pipit_status pipit_agent_register_tool(struct pipit_agent *a,
                                            const char *tool,
                                            pipit_tool_fn fn,
                                            void *user_data) {
    if (a == NULL || tool == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    int32_t idx = pipit_toolset_find(a->ts, tool);
    if (idx < 0) {
        pipit_format(a->errmsg, sizeof(a->errmsg), "agent: no tool '%s' in the tool set", tool);
        return PIPIT_ERR_UNKNOWN_TOOL;
    }
    for (size_t i = 0; i < a->n_handlers; i++) {
        if (a->handlers[i].tool == idx) {
            if (fn == NULL) { /* unregister: the device handles the tool again */
                a->handlers[i] = a->handlers[--a->n_handlers];
                return PIPIT_OK;
            }
            a->handlers[i].fn = fn;
            a->handlers[i].user_data = user_data;
            return PIPIT_OK;
        }
    }
    if (fn == NULL) {
        return PIPIT_OK;
    }
    if (a->n_handlers >= AGENT_MAX_HANDLERS) {
        return PIPIT_ERR_NOMEM;
    }
    a->handlers[a->n_handlers++] = (struct custom_handler){idx, fn, user_data};
    return PIPIT_OK;
}

void pipit_agent_set_cloud(struct pipit_agent *a, struct pipit_cloud *cloud) {
    if (a != NULL) {
        a->cloud = cloud;
    }
}

void pipit_agent_set_thermal(struct pipit_agent *a, enum pipit_thermal state) {
    if (a != NULL) {
        a->thermal = state;
    }
}

enum pipit_status pipit_agent_update_thermal(struct pipit_agent *a, struct pipit_error *err) {
    if (a == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    enum pipit_thermal t = PIPIT_THERMAL_NONE;
    enum pipit_status st = policy_thermal_read(NULL, &t, err);
    if (st == PIPIT_OK) {
        a->thermal = t;
    }
    return st;
}

void pipit_agent_cancel(struct pipit_agent *a) {
    if (a != NULL) {
        atomic_store(&a->cancel, true);
        /* only into a running step: the engine's abort flag stays set until a decode reads it,
         * so a cancel while the turn waits on the cloud or a handler would abort the next
         * turn's first decode instead */
        if (atomic_load(&a->in_step)) {
            a->backend.ops->cancel(a->backend.self);
        }
    }
}

char *pipit_agent_state_json(const struct pipit_agent *a) {
    if (a == NULL || a->dev == NULL) {
        return NULL;
    }
    json_t *s = a->dev->ops->get_state(a->dev->self);
    char *out = s != NULL ? json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(s);
    return out;
}

/* ============================================================================ the turn */

struct turn_build {
    struct pipit_turn *turn;
    struct strbuf sentence;
    struct strbuf outputs; /* the steps' raw outputs (full-history memory) */
    struct strbuf prompts; /* the first step's prompt (full-history memory) */
    size_t cap_calls;
    const char *segment; /* what the person said for the current step */
    bool undid;          /* an undo ran this turn (routed or the model's) */
};

static void say(struct turn_build *tb, const char *text) {
    if (text == NULL || text[0] == '\0') {
        return;
    }
    if (tb->sentence.len > 0) {
        strbuf_str(&tb->sentence, " ");
    }
    strbuf_str(&tb->sentence, text);
}

static struct pipit_call_record *new_record(struct turn_build *tb) {
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

static char *dup_cstr(const char *s) {
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n + 1);
    }
    return d;
}

/* A tool name for sentences: "set_white_balance" -> "set white balance". */
static void human_name(const char *tool, char *buf, size_t size) {
    pipit_format(buf, size, "%s", tool);
    for (char *p = buf; *p != '\0'; p++) {
        if (*p == '_') {
            *p = ' ';
        }
    }
}

static void
log_push(struct pipit_agent *a, int32_t tool, enum pipit_undo_kind kind, json_t *snapshot) {
    if (a->log_n == a->params.undo_slots) {
        json_decref(a->log[0].snapshot);
        memmove(a->log, a->log + 1, sizeof(*a->log) * (size_t)(a->log_n - 1));
        a->log_n--;
    }
    a->log[a->log_n++] = (struct action_entry){tool, kind, snapshot};
}

/* One sentence that a logged action was reverted: the restored keys' values ("The zoom is 1x
 * again.", "The flash is off again.", "Back to no alarms."), from the state after the undo. */
static void say_restored(struct pipit_agent *a, const struct action_entry *e, struct strbuf *b) {
    json_t *state = a->dev->ops->get_state(a->dev->self);
    const char *key;
    json_t *v;
    char one[256];
    if (json_object_size(e->snapshot) == 1) {
        json_object_foreach(e->snapshot, key, v) {
            if (ask_sentence(a->ask, key, json_object_get(state, key), ASK_AGAIN, one,
                             sizeof(one))) {
                strbuf_printf(b, "%s%s", b->len > 0 ? " " : "", one);
                json_decref(state);
                return;
            }
        }
    }
    /* several keys (tap_to_focus moves x and y), or a key no sentence knows */
    char name[96];
    human_name(a->ts->tools[e->tool].name, name, sizeof(name));
    strbuf_printf(b, "%sI undid the last change (%s).", b->len > 0 ? " " : "", name);
    json_decref(state);
}

/* Revert up to `count` of the newest logged actions, newest first (ROUTER_UNDO_ALL: all of
 * them). Returns the sentence (malloc'd; NULL when out of memory); *reverted receives the
 * number of actions whose state was put back. Never runs a tool. */
static char *undo_actions(struct pipit_agent *a, int32_t count, int32_t *reverted) {
    struct strbuf b = {0};
    *reverted = 0;
    if (a->log_n == 0) {
        strbuf_str(&b, "There's nothing to undo.");
        return strbuf_take(&b);
    }
    int32_t available = a->log_n;
    for (int32_t i = 0; i < count && a->log_n > 0; i++) {
        struct action_entry e = a->log[--a->log_n];
        char name[96];
        human_name(a->ts->tools[e.tool].name, name, sizeof(name));
        const char *sep = b.len > 0 ? " " : "";
        if (e.kind == PIPIT_UNDO_IMPOSSIBLE) {
            strbuf_printf(&b, "%sI can't undo the last action (%s): it can't be undone.", sep,
                          name);
            json_decref(e.snapshot); /* a loaded session may carry one (fuzz: session) */
            continue;
        }
        struct pipit_error err;
        enum pipit_status st = a->dev != NULL
                                   ? a->dev->ops->set_state(a->dev->self, e.snapshot, &err)
                                   : PIPIT_ERR_STATE;
        if (st != PIPIT_OK) {
            strbuf_printf(&b, "%sI couldn't undo the last action (%s).", sep, name);
        } else {
            say_restored(a, &e, &b);
            (*reverted)++;
        }
        json_decref(e.snapshot);
    }
    if (count != ROUTER_UNDO_ALL && count > available) {
        if (available == 1) {
            strbuf_str(&b, " There was only one action to undo.");
        } else {
            strbuf_printf(&b, " There were only %d actions to undo.", (int)available);
        }
    }
    return strbuf_take(&b);
}

/* Revert `count` actions for the person (the router found an undo request). */
static void do_undo(struct pipit_agent *a, struct turn_build *tb, int32_t count) {
    tb->turn->flags |= PIPIT_TURN_UNDO;
    tb->undid = true;
    int32_t reverted = 0;
    char *s = undo_actions(a, count, &reverted);
    say(tb, s != NULL ? s : "I couldn't undo that.");
    free(s);
}

/* Run the handler for a validated call. Fills rec (executed, ok, code, message, data_json). */
static void execute(struct pipit_agent *a,
                    int32_t tool,
                    const json_t *args,
                    const char *segment,
                    const struct policy_clock *clock,
                    struct pipit_turn *turn,
                    struct pipit_call_record *rec,
                    json_t **data) {
    const char *name = a->ts->tools[tool].name;
    *data = NULL;
    for (size_t i = 0; i < a->n_handlers; i++) {
        if (a->handlers[i].tool != tool) {
            continue;
        }
        struct pipit_tool_output out;
        memset(&out, 0, sizeof(out));
        char *args_json = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER);
        enum pipit_status st = a->handlers[i].fn(name, args_json != NULL ? args_json : "{}", &out,
                                                 a->handlers[i].user_data);
        free(args_json);
        rec->executed = true;
        out.code[sizeof(out.code) - 1] = '\0';
        out.message[sizeof(out.message) - 1] = '\0';
        out.data_json[sizeof(out.data_json) - 1] = '\0';
        if (st != PIPIT_OK) {
            rec->ok = false;
            pipit_format(rec->code, sizeof(rec->code), "handler_error");
            pipit_format(rec->message, sizeof(rec->message), "the %s handler failed: %s", name,
                         pipit_status_str(st));
            return;
        }
        rec->ok = out.ok;
        if (out.ok) {
            json_t *d = out.data_json[0] != '\0' ? json_loads(out.data_json, 0, NULL) : NULL;
            *data = json_is_object(d) ? d : json_object();
            if (!json_is_object(d)) {
                json_decref(d);
            }
        } else {
            pipit_format(rec->code, sizeof(rec->code), "%s",
                         out.code[0] != '\0' ? out.code : "failed");
            pipit_format(rec->message, sizeof(rec->message), "%s", out.message);
        }
        return;
    }
    if (a->dev != NULL) {
        struct device_result r;
        memset(&r, 0, sizeof(r));
        enum pipit_status st = a->dev->ops->call(a->dev->self, name, args, &r);
        if (st == PIPIT_OK || st == PIPIT_ERR_INVALID_ARGS) {
            rec->executed = true;
            rec->ok = st == PIPIT_OK && r.ok;
            if (rec->ok) {
                *data = r.data != NULL ? json_incref(r.data) : json_object();
            } else {
                pipit_format(rec->code, sizeof(rec->code), "%s", r.code);
                pipit_format(rec->message, sizeof(rec->message), "%s", r.message);
            }
            device_result_clear(&r);
            return;
        }
        device_result_clear(&r);
    }
    if (pipit_toolset_is_cloud(a->ts, (size_t)tool)) {
        /* delegation: nothing leaves the device unless an endpoint is configured. A pack's own
         * cloud tool (effect "cloud") need not have process_with_cloud_llm's arguments: the
         * question is then the person's own words */
        struct device_result r;
        memset(&r, 0, sizeof(r));
        if (pipit_cloud_configured(a->cloud)) {
            turn->cloud_requests++;
        }
        json_t *asked = NULL;
        if (json_object_get(args, "user_query_context") == NULL) {
            asked = json_deep_copy(args);
            json_object_set_new(asked, "user_query_context",
                                json_string(segment != NULL ? segment : ""));
        }
        cloud_tool_call(a->cloud, asked != NULL ? asked : args, policy_clock_remaining_ms(clock),
                        &a->cancel, &r, NULL);
        json_decref(asked);
        if (strcmp(r.code, CLOUD_CANCELLED) == 0) {
            turn->flags |= PIPIT_TURN_CANCELLED; /* Ctrl-C while the cloud was thinking */
        }
        rec->executed = true;
        rec->ok = r.ok;
        if (r.ok) {
            *data = r.data != NULL ? json_incref(r.data) : json_object();
        } else {
            pipit_format(rec->code, sizeof(rec->code), "%s", r.code);
            pipit_format(rec->message, sizeof(rec->message), "%s", r.message);
        }
        device_result_clear(&r);
        return;
    }
    /* nobody handles it */
    rec->executed = false;
    rec->ok = false;
    {
        pipit_format(rec->code, sizeof(rec->code), "no_handler");
        pipit_format(rec->message, sizeof(rec->message), "nothing on this device handles %s", name);
    }
}

#define RESULT_MAX_STRING 65536 /* bytes of one string in a tool's result data */

/* A tool's result is text from outside (a handler, a device, the cloud): data, never
 * instructions. Every string of it (data, message, code) is cleaned here, once, before the
 * sentence, the memory, the State-Tracker or the turn's record read it (untrusted.h). */
static void clean_result(struct pipit_call_record *rec, json_t **data) {
    if (*data != NULL) {
        json_t *c = untrusted_clean_json(*data, RESULT_MAX_STRING);
        json_decref(*data);
        *data = json_is_object(c) ? c : json_object();
        if (!json_is_object(c)) {
            json_decref(c);
        }
    }
    char tmp[sizeof(rec->message)];
    untrusted_clean_into(rec->message, tmp, sizeof(tmp), UNTRUSTED_ONE_LINE);
    memcpy(rec->message, tmp, sizeof(tmp));
    /* a code picks a failure template and is remembered: a plain name */
    size_t o = 0;
    for (size_t i = 0; rec->code[i] != '\0'; i++) {
        char ch = rec->code[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '_' || ch == '.' || ch == '-') {
            rec->code[o++] = ch;
        }
    }
    rec->code[o] = '\0';
    if (!rec->ok && o == 0) {
        pipit_format(rec->code, sizeof(rec->code), "failed");
    }
}

/* The failure code memory keeps: a custom handler's code only when the pack declares it for the
 * tool (a failure template of that name), else "failed": a handler's code is its own text and
 * would stay in the permanent prompt. pipit's devices and the cloud client use fixed codes. */
static bool has_handler(const struct pipit_agent *a, int32_t tool) {
    for (size_t i = 0; i < a->n_handlers; i++) {
        if (a->handlers[i].tool == tool) {
            return true;
        }
    }
    return false;
}

static const char *memory_code(const struct pipit_agent *a, int32_t tool, const char *code) {
    if (!has_handler(a, tool)) {
        return code;
    }
    const struct pipit_tool *t = &a->ts->tools[tool];
    for (size_t i = 0; i < t->n_failures; i++) {
        if (strcmp(t->failures[i].code, code) == 0 && strcmp(code, "*") != 0) {
            return code;
        }
    }
    return "failed";
}

/* Snapshot the undo keys of `tool` from the device state (NULL when not applicable). */
static json_t *undo_snapshot(struct pipit_agent *a, int32_t tool) {
    const char *const *keys = NULL;
    size_t n = 0;
    if (pipit_toolset_undo(a->ts, (size_t)tool, &keys, &n) != PIPIT_UNDO_KEYS || a->dev == NULL) {
        return NULL;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    if (state == NULL) {
        return NULL; /* an app's get_state() failed: nothing to put back */
    }
    json_t *snap = json_object();
    for (size_t i = 0; i < n && snap != NULL; i++) {
        json_t *v = json_object_get(state, keys[i]);
        if (v != NULL) {
            json_object_set(snap, keys[i], v);
        }
    }
    json_decref(state);
    return snap;
}

/* The model called the built-in undo tool: revert the newest action from the log, exactly as
 * a routed undo does. No tool runs. */
static void
model_undo(struct pipit_agent *a, struct turn_build *tb, struct pipit_call_record *rec) {
    int32_t reverted = 0;
    bool had = a->log_n > 0;
    tb->undid = true;
    char *s = undo_actions(a, 1, &reverted);
    rec->status = PIPIT_OK;
    rec->executed = true;
    rec->ok = reverted > 0;
    if (!rec->ok) {
        pipit_format(rec->code, sizeof(rec->code), "%s", had ? "cannot_undo" : "nothing_to_undo");
        pipit_format(rec->message, sizeof(rec->message), "%s", s != NULL ? s : "");
    }
    rec->data_json = dup_cstr("{}");
    rec->sentence = s != NULL ? s : dup_cstr("I couldn't undo that.");
    say(tb, rec->sentence);
}

/* The sentence for a request none of the tools does, in the harness's words: "I can't take a
 * photo: none of my tools does that, so I did nothing." (docs/agent.md). */
static char *no_tool_sentence(const struct pipit_agent *a, const struct turn_build *tb) {
    const char *seg = tb->segment != NULL ? tb->segment : "";
    size_t at = router_command_verb(a->router, seg);
    return render_no_tool_sentence(seg, at == ROUTER_NO_VERB ? NULL : seg + at);
}

/* The model chose the grammar's "none of these tools" outcome (`none()`, docs/grammar.md): no
 * tool runs and the sentence says honestly that this tool set cannot do it. */
static void
model_none(const struct pipit_agent *a, struct turn_build *tb, struct pipit_call_record *rec) {
    char *s = no_tool_sentence(a, tb);
    rec->status = PIPIT_OK;
    rec->executed = false;
    rec->ok = false;
    pipit_format(rec->code, sizeof(rec->code), "%s", RENDER_NO_TOOL);
    pipit_format(rec->message, sizeof(rec->message), "none of the tools does this");
    rec->args_json = rec->args_json != NULL ? rec->args_json : dup_cstr("{}");
    rec->data_json = dup_cstr("{}");
    rec->sentence = s != NULL ? s : dup_cstr(render_no_action_sentence());
    say(tb, rec->sentence);
}

/* ============================================================================
 * the person's numbers: the harness owns the limits
 *
 * The grammar lets any number of the right type through, so an out-of-range request is
 * refused by validation with the limit. A small model trained on in-range values can still
 * bend the number itself ("zoom 50x" -> level=5, then "Zoom set to 5x."). The guard: when a
 * tool has exactly one numeric argument, the model's value is not a number the person wrote
 * in the segment, and exactly one number the person wrote is one the argument does not allow,
 * that number is the one meant: it replaces the model's value and validation refuses it with
 * the tool's limit. Numbers in words, percentages and times are left alone; so is a value the
 * person wrote, and a conversion the person's number allows ("2 minutes" -> 120). */

#define GUARD_MAX_NUMBERS 8

/* Numbers written in digits in `text` (an optional sign right before them counts; "50x" is
 * 50; "16:9", "3.5.1" and "50%" are skipped). Returns how many were stored in out. */
static size_t person_numbers(const char *text, double *out, size_t max) {
    size_t n = 0;
    const char *p = text;
    while (*p != '\0' && n < max) {
        if (!(*p >= '0' && *p <= '9') ||
            (p > text && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.' || p[-1] == ':'))) {
            p++;
            continue;
        }
        const char *start = p;
        bool neg = p > text && p[-1] == '-' && (p - 1 == text || p[-2] == ' ');
        double v = 0;
        while (*p >= '0' && *p <= '9' && v < 1e12) {
            v = v * 10 + (*p - '0');
            p++;
        }
        if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
            double scale = 0.1;
            p++;
            while (*p >= '0' && *p <= '9') {
                v += (*p - '0') * scale;
                scale /= 10;
                p++;
            }
        }
        if (*p == ':' || *p == '%' || (*p == '.' && p[1] >= '0' && p[1] <= '9') ||
            (*p >= '0' && *p <= '9') || p == start) {
            continue;
        }
        out[n++] = neg ? -v : v;
    }
    return n;
}

static bool schema_allows(const struct pipit_schema *s, double v) {
    if (s->n_enum > 0) {
        for (size_t i = 0; i < s->n_enum; i++) {
            if (fabs(s->enum_num[i] - v) < 1e-9) {
                return true;
            }
        }
        return false;
    }
    if (s->type == PIPIT_SCHEMA_INTEGER && fabs(v - floor(v)) > 1e-9) {
        return false;
    }
    return (!s->has_min || v >= s->min - 1e-9) && (!s->has_max || v <= s->max + 1e-9);
}

/* Puts the person's out-of-range number back into `call` when the model bent it (above).
 * Returns true when the arguments were changed. */
static bool restore_person_number(const struct pipit_toolset *ts,
                                  int32_t tool,
                                  const char *segment,
                                  struct pipit_call *call) {
    if (tool < 0 || segment == NULL || (size_t)tool >= ts->n_tools) {
        return false;
    }
    const struct pipit_tool *t = pipit_toolset_tool(ts, (size_t)tool);
    const struct pipit_schema_prop *num = NULL;
    for (size_t i = 0; i < t->params->n_props; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        if (s->type == PIPIT_SCHEMA_NUMBER || s->type == PIPIT_SCHEMA_INTEGER) {
            if (num != NULL) {
                return false; /* several numbers: which is which is the model's call */
            }
            num = &t->params->props[i];
        }
    }
    if (num == NULL) {
        return false;
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *v = json_object_get(args, num->name);
    if (!json_is_number(v)) {
        json_decref(args);
        return false;
    }
    double said[GUARD_MAX_NUMBERS];
    size_t n_said = person_numbers(segment, said, GUARD_MAX_NUMBERS);
    double model = json_number_value(v);
    size_t n_refused = 0;
    double refused = 0;
    for (size_t i = 0; i < n_said; i++) {
        if (fabs(said[i] - model) < 1e-9) {
            json_decref(args);
            return false; /* the model kept a number the person wrote */
        }
        if (!schema_allows(num->schema, said[i])) {
            n_refused++;
            refused = said[i];
        }
    }
    bool changed = false;
    if (n_refused == 1) {
        json_t *nv = fabs(refused) < 1e12 && fabs(refused - floor(refused)) < 1e-9
                         ? json_integer((json_int_t)refused)
                         : json_real(refused);
        char *text = NULL;
        if (nv != NULL && json_object_set_new(args, num->name, nv) == 0 &&
            (text = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER)) != NULL) {
            free(call->args_json);
            call->args_json = text;
            changed = true;
        }
    }
    json_decref(args);
    return changed;
}

/* Handle one decoded step output. Returns false when the turn must stop (breaker). */
static bool handle_output(struct pipit_agent *a,
                          struct turn_build *tb,
                          const char *text,
                          const struct policy_clock *clock) {
    if (!pipit_call_detect(a->syntax, text)) {
        /* plain text: never let it narrate an action no tool performed */
        tb->turn->flags |= PIPIT_TURN_PLAIN_TEXT;
        if (render_claims_action(text, a->ts)) {
            tb->turn->flags |= PIPIT_TURN_NARRATION_CAUGHT;
            say(tb, render_no_action_sentence());
        } else {
            /* trim surrounding whitespace */
            while (*text == ' ' || *text == '\n') {
                text++;
            }
            /* a claim about the state that the state contradicts is replaced by the truth */
            json_t *state = a->ask != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
            int n_fixed = 0;
            char *fixed = state != NULL ? ask_correct(a->ask, text, state, &n_fixed) : NULL;
            json_decref(state);
            if (fixed != NULL) {
                tb->turn->flags |= PIPIT_TURN_STATE_CORRECTED;
                say(tb, fixed);
                free(fixed);
            } else {
                say(tb, text[0] != '\0' ? text : "Sorry, I didn't get that.");
            }
        }
        return true;
    }
    struct pipit_call_record *rec = new_record(tb);
    if (rec == NULL) {
        return false;
    }
    struct pipit_call call;
    struct pipit_error err;
    if (pipit_call_parse(a->syntax, text, &call, &err) != PIPIT_OK) {
        rec->status = PIPIT_ERR_PARSE;
        rec->args_json = dup_cstr("");
        rec->data_json = dup_cstr("{}");
        pipit_format(rec->code, sizeof(rec->code), "parse_error");
        pipit_format(rec->message, sizeof(rec->message), "%s", err.text);
        rec->sentence = dup_cstr("I couldn't understand that as a command, so I did nothing.");
        say(tb, rec->sentence);
        return true;
    }
    pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
    /* the pack's tools keep their indices in calls_ts; the built-in undo comes after them */
    int32_t tool = pipit_toolset_find(a->calls_ts, call.name);
    if (restore_person_number(a->ts, tool, tb->segment, &call)) {
        tb->turn->flags |= PIPIT_TURN_NUMBER_RESTORED;
    }
    rec->args_json = dup_cstr(call.args_json);
    if (tool < 0 && strcmp(call.name, "none") == 0 && strcmp(call.args_json, "{}") == 0) {
        model_none(a, tb, rec); /* the grammar's "none of these tools" */
        pipit_call_clear(&call);
        return true;
    }
    struct pipit_arg_problem problems[4];
    size_t n_problems = 0;
    enum pipit_status vst =
        tool < 0 ? PIPIT_ERR_UNKNOWN_TOOL
                 : pipit_toolset_validate_args(a->calls_ts, call.name, call.args_json,
                                               strlen(call.args_json), problems, 4, &n_problems);
    char buf[512];
    if (vst != PIPIT_OK) {
        rec->status = vst == PIPIT_ERR_JSON ? PIPIT_ERR_INVALID_ARGS : vst;
        rec->data_json = dup_cstr("{}");
        if (vst == PIPIT_ERR_UNKNOWN_TOOL) {
            /* a tool this set does not have (an unconstrained decode): said in the harness's
             * words, from the person's */
            pipit_format(rec->code, sizeof(rec->code), "unknown_tool");
            pipit_format(rec->message, sizeof(rec->message), "there is no tool named %s",
                         call.name);
            char *s = no_tool_sentence(a, tb);
            pipit_format(buf, sizeof(buf), "%s", s != NULL ? s : render_no_action_sentence());
            free(s);
        } else {
            /* the tool's refusal template names the limit ("I can't zoom to 50x: the zoom
             * goes from 0.5x to 10x on the back camera."); never a substitute value */
            pipit_format(rec->message, sizeof(rec->message), "%s: %s",
                         n_problems > 0 ? problems[0].path : "args",
                         n_problems > 0 ? problems[0].message : "invalid");
            json_t *bad = json_loads(call.args_json, 0, NULL);
            char code[sizeof(rec->code)] = RENDER_INVALID_ARGUMENTS;
            char *refusal =
                render_refusal(a->calls_ts, (size_t)tool, bad, n_problems > 0 ? &problems[0] : NULL,
                               code, sizeof(code));
            json_decref(bad);
            pipit_format(rec->code, sizeof(rec->code), "%s", code);
            pipit_format(buf, sizeof(buf), "%s",
                         refusal != NULL ? refusal : "That value doesn't work, so I did nothing.");
            free(refusal);
        }
        rec->sentence = dup_cstr(buf);
        say(tb, rec->sentence);
        memory_record_call(&a->mem, rec->tool, rec->args_json, false, rec->code, "{}", NULL,
                           MEMORY_CALL_WRITE);
        pipit_call_clear(&call);
        return true;
    }
    if ((size_t)tool >= a->ts->n_tools) {
        model_undo(a, tb, rec);
        pipit_call_clear(&call);
        return true;
    }
    json_t *args = json_loads(call.args_json, 0, NULL);
    bool cloud = pipit_toolset_is_cloud(a->ts, (size_t)tool);
    if (cloud && tb->segment != NULL && json_object_get(args, "user_query_context") != NULL) {
        /* the cloud gets the person's own words: a small model's copy of a question can drift,
         * the harness has the original (the model chose to delegate, and says why) */
        json_object_set_new(args, "user_query_context", json_string(tb->segment));
        char *fixed = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (fixed != NULL) {
            free(rec->args_json);
            rec->args_json = fixed;
        }
    }
    json_t *snapshot = undo_snapshot(a, tool);
    json_t *data = NULL;
    execute(a, tool, args, tb->segment, clock, tb->turn, rec, &data);
    clean_result(rec, &data);
    rec->status = PIPIT_OK;
    char *data_json = data != NULL ? json_dumps(data, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    rec->data_json = data_json != NULL ? data_json : dup_cstr("{}");
    const char *tmpl = rec->ok ? pipit_toolset_success_template(a->ts, (size_t)tool)
                               : pipit_toolset_failure_template(a->ts, (size_t)tool, rec->code);
    /* an omitted optional argument reads as its schema "default" in the sentence */
    json_t *full = pipit_tool_args_with_defaults(pipit_toolset_tool(a->ts, (size_t)tool), args);
    rec->sentence =
        render_template(tmpl, full != NULL ? full : args, data, rec->message, rec->code);
    json_decref(full);
    /* the same failure twice in a turn is said once */
    const struct pipit_call_record *prev =
        tb->turn->n_calls >= 2 ? &tb->turn->calls[tb->turn->n_calls - 2] : NULL;
    if (rec->ok || prev == NULL || prev->ok || prev->sentence == NULL || rec->sentence == NULL ||
        strcmp(prev->sentence, rec->sentence) != 0) {
        say(tb, rec->sentence);
    }

    enum pipit_undo_kind kind = pipit_toolset_undo(a->ts, (size_t)tool, NULL, NULL);
    if (rec->ok && kind == PIPIT_UNDO_KEYS && snapshot != NULL) {
        log_push(a, tool, kind, snapshot);
        snapshot = NULL;
    } else if (rec->ok && kind == PIPIT_UNDO_KEYS && a->dev != NULL) {
        /* the state could not be read before the call: undo must not revert an older action
         * in its place, nor claim to have put this one back */
        log_push(a, tool, PIPIT_UNDO_IMPOSSIBLE, NULL);
    } else if (rec->ok && kind == PIPIT_UNDO_IMPOSSIBLE) {
        log_push(a, tool, kind, NULL);
    }
    json_decref(snapshot);
    char state_line[512] = "";
    if (a->dev != NULL) {
        device_state_line(a->dev, state_line, sizeof(state_line));
    }
    enum memory_call kind_of_call =
        cloud ? MEMORY_CALL_CLOUD
        : pipit_toolset_undo(a->ts, (size_t)tool, NULL, NULL) == PIPIT_UNDO_NO_STATE
            ? MEMORY_CALL_READ
            : MEMORY_CALL_WRITE;
    /* a custom handler's data reaches memory as plain words only (IDs, numbers, enum values):
     * its sentences are the outside's text (docs/memory.md) */
    char *mem_data = NULL;
    if (has_handler(a, tool) && data != NULL) {
        json_t *words = untrusted_words_json(data, 40);
        mem_data = words != NULL ? json_dumps(words, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(words);
    }
    /* a pack's own cloud tool: memory's line names the question the cloud got, the person's */
    char *cloud_args = NULL;
    if (cloud && json_object_get(args, "user_query_context") == NULL) {
        json_t *q =
            json_pack("{s:s}", "user_query_context", tb->segment != NULL ? tb->segment : "");
        cloud_args = q != NULL ? json_dumps(q, JSON_COMPACT) : NULL;
        json_decref(q);
    }
    bool cancelled = strcmp(rec->code, CLOUD_CANCELLED) == 0; /* nothing to remember */
    if (!cancelled &&
        memory_record_call(&a->mem, rec->tool, cloud_args != NULL ? cloud_args : rec->args_json,
                           rec->ok, memory_code(a, tool, rec->code),
                           mem_data != NULL ? mem_data : rec->data_json, state_line,
                           kind_of_call) != PIPIT_OK) {
        pipit_log(PIPIT_LOG_WARN, "agent: memory: out of memory");
    }
    free(mem_data);
    free(cloud_args);
    char *canon = json_dumps(args, JSON_COMPACT | JSON_SORT_KEYS);
    bool tripped = policy_breaker_record(&a->breaker, call.name, canon != NULL ? canon : "",
                                         rec->ok, rec->code);
    free(canon);
    json_decref(args);
    json_decref(data);
    pipit_call_clear(&call);
    if (tripped) {
        tb->turn->flags |= PIPIT_TURN_BREAKER;
        /* the failure's own sentence, just said, names the reason */
        say(tb, "I'll stop trying: it failed the same way twice.");
        return false;
    }
    return true;
}

static void sleep_ms(double ms) {
    if (ms <= 0) {
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000.0),
                          .tv_nsec = (long)(fmod(ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
}

static enum pipit_status fit_memory(struct pipit_agent *a, struct pipit_turn *t, int32_t budget);

/* Run one backend step and account for it in the turn. On a limit (cancel, time) the turn's
 * flags and sentence say so and *stop is set. A step that finds the context full while memory
 * is in it runs again on less memory (half, then none): the agent filled that context, so the
 * turn must not fail for it (the budget should make this rare: a tail longer than any recent
 * one, e.g. a JIT schema larger than the last turns'). */
static enum pipit_status run_step(struct pipit_agent *a,
                                  struct turn_build *tb,
                                  const char *prompt,
                                  const struct backend_step_params *sp,
                                  bool first,
                                  const char *segment,
                                  struct backend_step_output *so,
                                  bool *stop) {
    struct pipit_turn *t = tb->turn;
    *stop = false;
    atomic_store(&a->in_step, true);
    enum pipit_status st = a->backend.ops->step(a->backend.self, prompt, sp, so);
    int32_t np = 0, ne = 0;
    for (int retry = 0; st == PIPIT_ERR_CONTEXT_FULL && retry < 2 && a->system_tokens >= 0;
         retry++) {
        a->backend.ops->rewind(a->backend.self);
        a->backend.ops->lengths(a->backend.self, &np, &ne);
        int32_t mem = np - a->system_tokens;
        if (mem <= 0 ||
            fit_memory(a, t, a->system_tokens + (retry == 0 ? mem / 2 : 1)) != PIPIT_OK) {
            break;
        }
        free(so->text);
        so->text = NULL;
        st = a->backend.ops->step(a->backend.self, prompt, sp, so);
    }
    atomic_store(&a->in_step, false);
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    if (np + ne > t->n_prompt_max) {
        t->n_prompt_max = np + ne;
    }
    if (ne > t->n_ephemeral_max) {
        t->n_ephemeral_max = ne;
    }
    a->backend.ops->rewind(a->backend.self);
    t->model_calls++;
    t->prefill_tokens += so->prefill_tokens + so->permanent_tokens;
    t->permanent_prefill_tokens += so->permanent_tokens;
    t->decode_tokens += so->decode_tokens;
    if (first && t->model_calls == 1) {
        t->ttft_ms = so->ttft_ms;
    }
    if (st != PIPIT_OK) {
        pipit_format(a->errmsg, sizeof(a->errmsg), "agent: the model step failed: %s",
                     pipit_status_str(st));
        *stop = true;
        return st;
    }
    if (so->cancelled || atomic_load(&a->cancel)) {
        t->flags |= PIPIT_TURN_CANCELLED;
        say(tb, "Cancelled.");
        *stop = true;
    } else if (so->out_of_time) {
        t->flags |= PIPIT_TURN_BUDGET;
        char buf[400];
        pipit_format(buf, sizeof(buf), "I ran out of time on \"%s\", so I did nothing.", segment);
        say(tb, buf);
        *stop = true;
    } else if (so->token_limit) {
        t->flags |= PIPIT_TURN_TOKEN_LIMIT;
    }
    return PIPIT_OK;
}

/* JIT stage 1 is whole once the trigger, a tool name and the arguments' opener are written. */
static bool jit_name_complete(const char *text, void *user_data) {
    const struct pipit_agent *a = user_data;
    if (!pipit_call_detect(a->syntax, text)) {
        return false;
    }
    size_t n = strlen(text);
    return n > 0 && text[n - 1] == (a->syntax == PIPIT_SYNTAX_HERMES ? '{' : '(');
}

/* JIT stage 2 is whole once head + arguments form a call. */
struct jit_args_ctx {
    const struct pipit_agent *agent;
    const char *head;
};

static bool jit_args_complete(const char *text, void *user_data) {
    const struct jit_args_ctx *c = user_data;
    size_t n = strlen(text);
    if (n == 0) {
        return false;
    }
    if (c->agent->syntax == PIPIT_SYNTAX_HERMES) {
        return strstr(text, "</tool_call>") != NULL;
    }
    if (text[n - 1] != ')') {
        return false;
    }
    struct strbuf b = {0};
    strbuf_str(&b, c->head);
    strbuf_str(&b, text);
    struct pipit_call call;
    bool ok = !b.failed && pipit_call_parse(c->agent->syntax, b.data, &call, NULL) == PIPIT_OK;
    pipit_call_clear(&call);
    strbuf_free(&b);
    return ok;
}

/* The tool a JIT stage-1 output chose, or -1. */
static int32_t jit_chosen_tool(const struct pipit_agent *a, const char *text) {
    const char *at = strstr(text, pipit_call_syntax_trigger(a->syntax));
    if (at == NULL) {
        return -1;
    }
    for (size_t i = 0; i < a->calls_ts->n_tools; i++) {
        struct strbuf head = {0};
        grammar_call_head(a->syntax, a->calls_ts->tools[i].name, &head);
        bool hit = !head.failed && strncmp(at, head.data, head.len) == 0 &&
                   (at[head.len] == '(' || at[head.len] == '{');
        strbuf_free(&head);
        if (hit) {
            return (int32_t)i;
        }
    }
    return -1;
}

/* Decode one segment: one constrained decode, or two in JIT mode (the tool's name, then its
 * arguments with its compact schema in the ephemeral context). *text receives the model's
 * output (in JIT mode the whole call); NULL with PIPIT_OK when a limit stopped the step. */
static enum pipit_status decode_segment(struct pipit_agent *a,
                                        struct turn_build *tb,
                                        const char *segment,
                                        const struct policy_clock *clock,
                                        const struct policy_limits *lim,
                                        bool first,
                                        char **text) {
    *text = NULL;
    bool jit = a->params.tools_format == PIPIT_TOOLSPEC_JIT;
    char *prompt = step_prompt(a, segment, NULL);
    if (prompt == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    struct backend_step_params sp = {
        .grammar = !a->params.grammar ? NULL
                   : jit              ? pipit_grammar_names(a->grammar)
                                      : pipit_grammar_call(a->grammar),
        .lazy = a->params.lazy_grammar,
        .trigger = pipit_call_syntax_trigger(a->syntax),
        .syntax = a->syntax,
        .max_tokens = lim->max_tokens,
        .n_threads = lim->n_threads,
        .clock = clock,
        .parse_special = a->chat_template,
        .is_complete = jit && a->params.grammar ? jit_name_complete : NULL,
        .complete_user_data = a,
        .fast_grammar = a->params.fast_grammar, /* docs/fastgrammar.md */
    };
    struct backend_step_output so;
    bool stop = false;
    enum pipit_status st = run_step(a, tb, prompt, &sp, first, segment, &so, &stop);
    if (tb->prompts.len == 0) {
        strbuf_str(&tb->prompts, prompt); /* the conventional history keeps what was asked */
    }
    free(prompt);
    if (stop || st != PIPIT_OK) {
        free(so.text);
        return st;
    }
    int32_t tool = jit ? jit_chosen_tool(a, so.text) : -1;
    if (tool < 0 && jit && so.text != NULL) {
        /* stage 1 chose "none of these tools": the call is whole without a stage 2 */
        struct strbuf none = {0};
        grammar_call_head(a->syntax, "none", &none);
        strbuf_str(&none, a->syntax == PIPIT_SYNTAX_HERMES ? "{" : "(");
        const char *at = none.data != NULL ? strstr(so.text, none.data) : NULL;
        if (at != NULL && at[none.len] == '\0') {
            strbuf_str(&none, a->syntax == PIPIT_SYNTAX_HERMES ? "}" : ")");
            strbuf_str(&none, grammar_call_tail(a->syntax));
            char *whole = strbuf_take(&none);
            if (whole == NULL) {
                free(so.text);
                return PIPIT_ERR_NOMEM;
            }
            free(so.text);
            so.text = whole;
        }
        strbuf_free(&none);
    }
    if (tool < 0) {
        *text = so.text; /* plain text, a whole call (not JIT), or a malformed choice */
        return PIPIT_OK;
    }
    /* stage 2: the chosen tool's compact schema joins the ephemeral context */
    free(so.text);
    char *line = NULL;
    st = pipit_toolset_serialize_tool(a->calls_ts, (size_t)tool, PIPIT_TOOLSPEC_COMPACT, &line);
    if (st != PIPIT_OK) {
        return st;
    }
    struct strbuf head = {0};
    grammar_call_head(a->syntax, a->calls_ts->tools[tool].name, &head);
    char *prompt2 = step_prompt(a, segment, line);
    pipit_free(line);
    struct strbuf full = {0};
    strbuf_str(&full, prompt2 != NULL ? prompt2 : "");
    strbuf_str(&full, head.data != NULL ? head.data : "");
    bool failed = full.failed || head.failed || prompt2 == NULL;
    free(prompt2);
    if (failed) {
        strbuf_free(&full);
        strbuf_free(&head);
        return PIPIT_ERR_NOMEM;
    }
    struct jit_args_ctx jc = {a, head.data};
    struct backend_step_params sp2 = sp;
    sp2.grammar = a->params.grammar ? pipit_grammar_args(a->grammar, (size_t)tool) : NULL;
    sp2.lazy = false;
    sp2.is_complete = jit_args_complete;
    sp2.complete_user_data = &jc;
    st = run_step(a, tb, full.data, &sp2, false, segment, &so, &stop);
    strbuf_free(&full);
    if (stop || st != PIPIT_OK) {
        free(so.text);
        strbuf_free(&head);
        return st;
    }
    strbuf_str(&head, so.text != NULL ? so.text : "");
    free(so.text);
    *text = strbuf_take(&head);
    return *text != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}

/* Collect every step's raw output of the turn (for the full-history memory). */
static void all_output_add(struct turn_build *tb, const char *text) {
    if (tb->outputs.len > 0) {
        strbuf_str(&tb->outputs, " | ");
    }
    strbuf_str(&tb->outputs, text);
}

/* The whole memory as the permanent prefix holds it after a rebuild (one system message in a
 * chat template), or "" when empty; NULL when out of memory or the template fails. */
static char *memory_prefix_text(struct pipit_agent *a) {
    char *all = memory_text(&a->mem);
    if (all == NULL || all[0] == '\0' || !a->chat_template) {
        return all;
    }
    char *wrapped = NULL;
    enum pipit_status st = memory_message(a, all, &wrapped);
    free(all);
    if (st != PIPIT_OK) {
        pipit_free(wrapped);
        return NULL;
    }
    return wrapped;
}

/* Trim the memory until the permanent prefix (system text and tools, then the memory) fits in
 * `budget` tokens, and rebuild the memory part of the prefix from the kept lines. The memory is
 * counted as it will be prefilled, so the prefix fits whatever a line's bytes per token; it is
 * trimmed to about 80% of its room, so the next turns fit too without a rebuild each. When the
 * pinned lines alone do not fit, the oldest are unpinned first (PIPIT_TURN_UNPINNED); when even
 * the system text and tools do not, the memory is emptied (PIPIT_TURN_OVER_BUDGET). */
static enum pipit_status fit_memory(struct pipit_agent *a, struct pipit_turn *t, int32_t budget) {
    int32_t room = budget - a->system_tokens;
    if (room <= 0) {
        t->flags |= PIPIT_TURN_OVER_BUDGET; /* the system text and tools are never dropped */
    }
    int32_t keep = room > 0 ? (int32_t)(0.8 * room) : 0;
    char *all = NULL;
    for (int guard = 0; guard < 4096; guard++) {
        free(all);
        all = memory_prefix_text(a);
        if (all == NULL) {
            return PIPIT_ERR_NOMEM;
        }
        int32_t n = all[0] != '\0' ? prefix_tokens(a, all) : 0;
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
    return st;
}

/* Fit the permanent prefix in `budget` tokens when it is longer, or when superseded facts still
 * sit in the KV cache and a rebuild drops them. */
static enum pipit_status
trim_to_budget(struct pipit_agent *a, struct pipit_turn *t, int32_t budget) {
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    if (np <= budget) {
        return PIPIT_OK;
    }
    if (np - a->system_tokens <= 0) {
        t->flags |= PIPIT_TURN_OVER_BUDGET; /* the system text and tools are never dropped */
        return PIPIT_OK;
    }
    return fit_memory(a, t, budget);
}

/* After a turn: prefill the system prefix if no step did, append the memory delta to the
 * permanent prefix (only the delta is prefilled), and trim the oldest memory lines when the
 * prefix exceeds the context budget. */
static enum pipit_status
remember(struct pipit_agent *a, struct turn_build *tb, const char *utterance) {
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
            char *d = e != NULL ? json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
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
        if (st != PIPIT_OK) {
            free(delta);
            return st;
        }
    }
    a->eph_recent[a->eph_next] = t->n_ephemeral_max;
    a->eph_next = (a->eph_next + 1) % 16;
    a->eph_filled = a->eph_filled < 16 ? a->eph_filled + 1 : 16;
    int32_t budget = memory_budget(a);
    if (delta[0] != '\0' && a->chat_template) {
        /* in a chat template, memory lines travel as a system message (a data span) */
        char *wrapped = NULL;
        st = memory_message(a, delta, &wrapped);
        free(delta);
        delta = wrapped;
        if (st != PIPIT_OK) {
            return st;
        }
    }
    if (delta[0] != '\0' && np + prefix_tokens(a, delta) > budget) {
        /* the new lines would not fit (they could overflow the context itself): trim the
         * memory with them in it and rebuild, instead of appending */
        free(delta);
        return fit_memory(a, t, budget);
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
    return trim_to_budget(a, t, budget);
}

/* Refuse an utterance the agent cannot take as one command: empty or blank, longer than
 * PIPIT_MAX_UTTERANCE_BYTES (never cut: its tail would become another command), or not valid
 * UTF-8 (a byte the tokenizer would drop or mangle changes what the person said). */
static enum pipit_status check_utterance(struct pipit_agent *a, const char *utterance) {
    size_t n = strlen(utterance);
    if (n > PIPIT_MAX_UTTERANCE_BYTES) {
        pipit_format(a->errmsg, sizeof(a->errmsg),
                     "agent: the utterance is %zu bytes; the limit is %d bytes", n,
                     PIPIT_MAX_UTTERANCE_BYTES);
        return PIPIT_ERR_INVALID_ARG;
    }
    bool blank = true;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len((const unsigned char *)utterance + i, n - i);
        if (len == 0) {
            pipit_format(a->errmsg, sizeof(a->errmsg),
                         "agent: the utterance is not valid UTF-8 (byte 0x%02x at offset %zu)",
                         (unsigned)(unsigned char)utterance[i], i);
            return PIPIT_ERR_INVALID_ARG;
        }
        if (len > 1 || !isspace((unsigned char)utterance[i])) {
            blank = false;
        }
        i += len;
    }
    if (blank) {
        pipit_format(a->errmsg, sizeof(a->errmsg),
                     "agent: the utterance is empty: say what the device should do");
        return PIPIT_ERR_INVALID_ARG;
    }
    return PIPIT_OK;
}

#define AGENT_MAX_SEGMENTS 9 /* max_steps (at most 8) plus one for what was left over */

/* A question about the device's state is answered from the state: no model call, no tool
 * call (docs/agent.md, "State questions"). False when `text` is not such a question. */
static bool answer_from_state(struct pipit_agent *a, struct turn_build *tb, const char *text) {
    if (a->ask == NULL || a->dev == NULL) {
        return false;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    char answer[512];
    int n = ask_answer(a->ask, text, state, answer, sizeof(answer));
    json_decref(state);
    if (n <= 0) {
        return false;
    }
    tb->turn->flags |= PIPIT_TURN_STATE_ANSWER;
    say(tb, answer);
    return true;
}

/* True when no router segment of `utt` starts with a command verb: a question may then be
 * answered whole ("what's the flash and the zoom?"); "is the flash on, zoom in" may not. */
static bool no_command_inside(const struct pipit_agent *a, const char *utt) {
    char segs[AGENT_MAX_SEGMENTS][ROUTER_MAX_SEGMENT];
    size_t n = router_split_with(a->router, utt, segs, AGENT_MAX_SEGMENTS);
    for (size_t i = 0; i < n; i++) {
        if (router_command_verb(a->router, segs[i]) != ROUTER_NO_VERB) {
            return false;
        }
    }
    return true;
}

/* "I didn't take a photo or set the timer: two steps per command is the limit." The
 * segments past the step limit, in the person's words. */
static void say_not_done(struct pipit_agent *a,
                         struct turn_build *tb,
                         char (*rest)[ROUTER_MAX_SEGMENT],
                         size_t n_rest) {
    static const char *const NUMBERS[] = {"zero", "one", "two",   "three", "four",
                                          "five", "six", "seven", "eight"};
    struct strbuf b = {0};
    strbuf_str(&b, "I didn't ");
    for (size_t i = 0; i < n_rest; i++) {
        if (i > 0) {
            strbuf_str(&b, i + 1 == n_rest ? " or " : ", ");
        }
        size_t at = router_command_verb(a->router, rest[i]);
        if (at == ROUTER_NO_VERB) {
            strbuf_printf(&b, "do \"%s\"", rest[i]);
            continue;
        }
        const char *verb = rest[i] + at;
        if (verb[0] >= 'A' && verb[0] <= 'Z' && verb[1] >= 'a' && verb[1] <= 'z') {
            char first = (char)(verb[0] - 'A' + 'a'); /* "Take a photo" -> "take a photo" */
            strbuf_add(&b, &first, 1);
            verb++;
        }
        strbuf_str(&b, verb);
    }
    int32_t m = a->params.max_steps;
    strbuf_printf(&b, ": %s step%s per command is the limit.",
                  m >= 0 && m < (int32_t)(sizeof(NUMBERS) / sizeof(NUMBERS[0])) ? NUMBERS[m] : "8",
                  m == 1 ? "" : "s");
    char *s = strbuf_take(&b);
    say(tb, s != NULL ? s : "I didn't do the rest: it was more than I do in one go.");
    free(s);
}

enum pipit_status
pipit_agent_turn(struct pipit_agent *a, const char *utterance, struct pipit_turn **out) {
    if (a == NULL || utterance == NULL || out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    enum pipit_status checked = check_utterance(a, utterance);
    if (checked != PIPIT_OK) {
        return checked;
    }
    /* the turn's tail (state line, words, header, a short answer) must fit the prompt limit
     * beside the system prompt and tools; memory makes room for it before the model runs */
    int32_t need = 0;
    if (a->model != NULL) {
        char *tail = step_prompt(a, utterance, NULL);
        int32_t n_tail = count_tokens(a, tail, false);
        free(tail);
        int32_t n_sys =
            a->system_tokens >= 0 ? a->system_tokens : count_tokens(a, a->system_text, true);
        need = n_tail + (a->params.max_tokens < 32 ? a->params.max_tokens : 32);
        if (n_tail >= 0 && n_sys >= 0 && n_sys + need > a->prompt_limit) {
            pipit_format(a->errmsg, sizeof(a->errmsg),
                         "agent: the utterance needs %d tokens with its answer; beside the %d of "
                         "the system prompt and tools that is more than the prompt limit of %d "
                         "(%s)",
                         need, n_sys, a->prompt_limit, a->limit_source);
            return PIPIT_ERR_INVALID_ARG;
        }
    }
    struct turn_build tb = {0};
    tb.turn = calloc(1, sizeof(*tb.turn));
    if (tb.turn == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    struct pipit_turn *t = tb.turn;
    atomic_store(&a->cancel, false);
    double t0 = pipit_now_ms();
    struct policy_clock clock;
    policy_clock_start(&clock, a->params.turn_budget_ms);
    int32_t half = (pipit_cpu_count() + 1) / 2;
    int32_t base_threads = a->params.n_threads > 0 ? a->params.n_threads : (half > 4 ? 4 : half);
    struct policy_limits lim;
    policy_thermal_limits(a->thermal, base_threads, a->params.max_tokens, &lim);
    enum pipit_status status = PIPIT_OK;

    int32_t np0 = 0, ne0 = 0;
    a->backend.ops->lengths(a->backend.self, &np0, &ne0);
    if (need > 0 && a->system_tokens >= 0) {
        /* this utterance's tail must fit beside the memory: within the prompt limit with a short
         * answer, and within the context window with the longest answer a decode may write */
        int32_t gen = a->params.max_tokens < 32 ? a->params.max_tokens : 32;
        int32_t fit = a->prompt_limit - need;
        int32_t hard = (int32_t)a->params.n_ctx - (need - gen) - a->params.max_tokens;
        fit = hard < fit ? hard : fit;
        if (np0 > fit && trim_to_budget(a, t, fit) != PIPIT_OK) {
            t->flags |= PIPIT_TURN_OVER_BUDGET;
        }
    }
    char utt[AGENT_MAX_UTTERANCE];
    pipit_format(utt, sizeof(utt), "%s", utterance);
    if (!lim.paused && memory_begin_turn(&a->mem, utt) != PIPIT_OK) {
        status = PIPIT_ERR_NOMEM;
    }
    int32_t undo_n = 0;
    if (lim.paused) {
        t->flags |= PIPIT_TURN_PAUSED;
        say(&tb, "The device is too hot, so I'm pausing. Please try again in a moment.");
    } else if ((undo_n = router_undo_count(utt)) > 0 ||
               (a->last_undo && (undo_n = router_undo_followup(utt)) > 0)) {
        do_undo(a, &tb, undo_n); /* "undo that" ... "and that too" */
    } else if (no_command_inside(a, utt) && answer_from_state(a, &tb, utt)) {
        t->n_steps = 1; /* "is the flash on and the grid off?": one question, however split */
    } else {
        /* every segment up to the array's size: those past max_steps are not run, and the
         * sentence says so */
        char segs[AGENT_MAX_SEGMENTS][ROUTER_MAX_SEGMENT];
        size_t n_all = router_split_with(a->router, utt, segs, AGENT_MAX_SEGMENTS);
        size_t n = n_all;
        if (n > (size_t)a->params.max_steps) {
            t->flags |= PIPIT_TURN_STEP_CAP;
            n = (size_t)a->params.max_steps;
        }
        if (n > 1) {
            t->flags |= PIPIT_TURN_COMPOUND;
        }
        for (size_t i = 0; i < n; i++) {
            if (atomic_load(&a->cancel)) {
                t->flags |= PIPIT_TURN_CANCELLED;
                break;
            }
            if (i > 0) {
                sleep_ms(fmin(lim.step_delay_ms, policy_clock_remaining_ms(&clock)));
            }
            if (policy_clock_expired(&clock)) {
                t->flags |= PIPIT_TURN_BUDGET;
                char buf[400];
                pipit_format(buf, sizeof(buf), "I ran out of time before \"%s\".", segs[i]);
                say(&tb, buf);
                break;
            }
            t->n_steps++;
            if ((undo_n = router_undo_count(segs[i])) > 0) {
                do_undo(a, &tb, undo_n);
                continue;
            }
            if (answer_from_state(a, &tb, segs[i])) {
                continue;
            }
            char *text = NULL;
            tb.segment = segs[i];
            status = decode_segment(a, &tb, segs[i], &clock, &lim, i == 0, &text);
            if (status != PIPIT_OK || text == NULL) {
                free(text);
                break;
            }
            free(t->model_text);
            t->model_text = text;
            all_output_add(&tb, text);
            if (!handle_output(a, &tb, text, &clock)) {
                break;
            }
        }
        if ((t->flags & PIPIT_TURN_STEP_CAP) != 0 && (t->flags & PIPIT_TURN_BREAKER) == 0) {
            say_not_done(a, &tb, segs + n, n_all - n);
        }
    }
    a->last_undo = tb.undid;
    if (status == PIPIT_OK && !lim.paused && (t->flags & PIPIT_TURN_CANCELLED) == 0) {
        status = remember(a, &tb, utt);
    }
    strbuf_free(&tb.outputs);
    strbuf_free(&tb.prompts);
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    t->n_permanent = np;
    t->memory_lines = (int32_t)a->mem.n;
    t->memory_bytes = (int32_t)memory_bytes(&a->mem);
    /* what the person reads may quote a cloud answer or a handler's text: never call syntax
     * or control text (untrusted.h); the length is bounded where that text came in */
    char *sentence = strbuf_take(&tb.sentence);
    t->sentence = sentence != NULL ? untrusted_clean(sentence, (size_t)-1, 0) : NULL;
    free(sentence);
    if (t->sentence == NULL) {
        status = PIPIT_ERR_NOMEM;
    }
    t->state_json = pipit_agent_state_json(a);
    t->latency_ms = pipit_now_ms() - t0;
    if (status != PIPIT_OK && status != PIPIT_ERR_ABORTED) {
        pipit_turn_free(t);
        return status;
    }
    *out = t;
    return PIPIT_OK;
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
    json_object_set_new(c, "permanent_tokens", json_integer(t->n_permanent));
    json_object_set_new(c, "ephemeral_tokens_max", json_integer(t->n_ephemeral_max));
    json_object_set_new(c, "prompt_tokens_max", json_integer(t->n_prompt_max));
    json_object_set_new(c, "latency_ms", json_real(t->latency_ms));
    json_object_set_new(c, "ttft_ms", json_real(t->ttft_ms));
    json_object_set_new(o, "counters", c);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

/* ============================================================================ sessions */

/* The JSON part of a session: everything but the KV state. */
static char *session_json(const struct pipit_agent *a) {
    json_t *log = json_array();
    for (int32_t i = 0; i < a->log_n; i++) {
        const struct action_entry *e = &a->log[i];
        json_array_append_new(log, json_pack("{s:s,s:i,s:O?}", "tool", a->ts->tools[e->tool].name,
                                             "kind", (int)e->kind, "snapshot", e->snapshot));
    }
    json_t *device = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    json_t *root = json_pack(
        "{s:i,s:s,s:s?,s:i,s:i,s:I,s:I,s:I,s:o,s:o,s:o}", "pipit_session", SESSION_VERSION,
        "syntax", pipit_call_syntax_str(a->syntax), "device_name",
        pipit_device_name(a->params.device), "tools_format", (int)a->params.tools_format,
        "memory_mode", (int)a->params.memory, "prompt_hash",
        (json_int_t)(fileio_fnv1a(FILEIO_FNV_OFFSET, a->system_text, strlen(a->system_text)) >> 1),
        "system_tokens", (json_int_t)a->system_tokens, "superseded_at_rebuild",
        (json_int_t)a->superseded_at_rebuild, "memory", memory_to_json(&a->mem), "log", log,
        "device", device != NULL ? device : json_null());
    char *s = root != NULL ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return s;
}

enum pipit_status
pipit_agent_save(struct pipit_agent *a, const char *path, struct pipit_error *err) {
    pipit_error_clear(err);
    if (a == NULL || path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: save: NULL argument");
    }
    /* the system prefix must be in the KV cache before its state is saved */
    int64_t n = 0;
    enum pipit_status st = a->backend.ops->flush(a->backend.self, &n);
    if (st != PIPIT_OK) {
        return pipit_error_set(err, st, "agent: save: cannot prefill the prompt");
    }
    if (a->system_tokens < 0) {
        int32_t np = 0, ne = 0;
        a->backend.ops->lengths(a->backend.self, &np, &ne);
        a->system_tokens = np;
    }
    char *json = session_json(a);
    uint8_t *kv = NULL;
    size_t kv_len = 0;
    st = json == NULL ? PIPIT_ERR_NOMEM : a->backend.ops->save_kv(a->backend.self, &kv, &kv_len);
    if (st == PIPIT_OK) {
        st = session_write(path, a->model != NULL ? pipit_model_fingerprint(a->model) : 0, json, kv,
                           kv_len, err);
    } else {
        pipit_error_set(err, st, "agent: save: cannot capture the KV state");
    }
    free(json);
    free(kv);
    return st;
}

/* Rebuild the permanent prefix from text: the system prompt (prefilled now, to know its length)
 * and the memory (prefilled on the next step). */
static enum pipit_status rebuild_prefix(struct pipit_agent *a) {
    a->backend.ops->reset(a->backend.self);
    enum pipit_status st = a->backend.ops->add_permanent(a->backend.self, a->system_text);
    int64_t n = 0;
    if (st == PIPIT_OK) {
        st = a->backend.ops->flush(a->backend.self, &n);
    }
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    a->system_tokens = np;
    char *text = memory_text(&a->mem);
    if (st == PIPIT_OK && text != NULL && text[0] != '\0') {
        if (a->chat_template) {
            char *wrapped = NULL;
            st = memory_message(a, text, &wrapped);
            free(text);
            text = wrapped;
        }
        if (st == PIPIT_OK) {
            st = a->backend.ops->add_permanent(a->backend.self, text);
        }
    }
    free(text);
    a->superseded_at_rebuild = a->mem.n_superseded;
    return text == NULL && st == PIPIT_OK ? PIPIT_OK : st;
}

enum pipit_status pipit_agent_load(struct pipit_agent *a,
                                   const char *path,
                                   struct pipit_session_info *info,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    struct pipit_session_info dummy;
    if (info == NULL) {
        info = &dummy;
    }
    memset(info, 0, sizeof(*info));
    if (a == NULL || path == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: load: NULL argument");
    }
    uint64_t fp = 0;
    char *json_text = NULL;
    uint8_t *kv = NULL;
    size_t kv_len = 0;
    enum pipit_status st = session_read(path, &fp, &json_text, &kv, &kv_len, err);
    if (st != PIPIT_OK) {
        return st;
    }
    json_error_t jerr;
    json_t *root = json_loads(json_text, 0, &jerr);
    free(json_text);
    const json_t *log = json_object_get(root, "log");
    const json_t *device = json_object_get(root, "device");
    const char *syntax = json_string_value(json_object_get(root, "syntax"));
    json_int_t tools_format = json_integer_value(json_object_get(root, "tools_format"));
    if (!json_is_object(root) || !json_is_array(log) || syntax == NULL) {
        json_decref(root);
        free(kv);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "agent: load: %s: malformed session JSON",
                               path);
    }
    if (strcmp(syntax, pipit_call_syntax_str(a->syntax)) != 0 ||
        tools_format != a->params.tools_format) {
        pipit_error_set(err, PIPIT_ERR_STATE,
                        "agent: load: %s was made with the %s syntax and tools format %d; "
                        "this agent uses %s and %d",
                        path, syntax, (int)tools_format, pipit_call_syntax_str(a->syntax),
                        (int)a->params.tools_format);
        json_decref(root);
        free(kv);
        return PIPIT_ERR_STATE;
    }
    /* a session of another tool set is refused, not restored: its memory, undo log and device
     * state speak of tools and a device this agent does not have */
    const char *device_name = json_string_value(json_object_get(root, "device_name"));
    const char *my_device = pipit_device_name(a->params.device);
    device_name = device_name != NULL && device_name[0] != '\0' ? device_name : "";
    my_device = my_device != NULL && my_device[0] != '\0' ? my_device : "";
    if (strcmp(device_name, my_device) != 0) {
        pipit_error_set(err, PIPIT_ERR_STATE,
                        "agent: load: %s was made for the device '%s'; this agent runs '%s'", path,
                        device_name, my_device);
        json_decref(root);
        free(kv);
        return PIPIT_ERR_STATE;
    }
    {
        size_t k;
        json_t *le;
        json_array_foreach(log, k, le) {
            const char *tool = json_string_value(json_object_get(le, "tool"));
            if (tool != NULL && pipit_toolset_find(a->ts, tool) < 0) {
                pipit_error_set(err, PIPIT_ERR_STATE,
                                "agent: load: %s was made with another tool set: its undo log "
                                "names the tool '%s', which this tool set does not have",
                                path, tool);
                json_decref(root);
                free(kv);
                return PIPIT_ERR_STATE;
            }
        }
    }
    /* everything is checked before anything changes: the action log... */
    struct action_entry *entries = calloc((size_t)a->params.undo_slots, sizeof(*entries));
    int32_t n_entries = 0;
    size_t i;
    json_t *e;
    bool ok = entries != NULL;
    json_array_foreach(log, i, e) {
        if (!ok) {
            break;
        }
        int32_t tool = pipit_toolset_find(a->ts, json_string_value(json_object_get(e, "tool")));
        json_int_t kind = json_integer_value(json_object_get(e, "kind"));
        json_t *snap = json_object_get(e, "snapshot");
        ok = tool >= 0 && (kind == PIPIT_UNDO_KEYS || kind == PIPIT_UNDO_IMPOSSIBLE);
        if (ok && n_entries < a->params.undo_slots) {
            entries[n_entries++] = (struct action_entry){
                tool, (enum pipit_undo_kind)kind, json_is_object(snap) ? json_incref(snap) : NULL};
        }
    }
    /* ...the memory, on a copy... */
    struct memory mem;
    memory_init(&mem, a->mem.mode);
    if (ok) {
        st = memory_from_json(&mem, json_object_get(root, "memory"), err);
    } else {
        st = pipit_error_set(err, PIPIT_ERR_CORRUPT, "agent: load: %s: $.log is malformed", path);
    }
    /* ...and the device state (all-or-nothing by contract) last */
    if (st == PIPIT_OK && a->dev != NULL && json_is_object(device)) {
        st = a->dev->ops->set_state(a->dev->self, device, err);
    }
    if (st != PIPIT_OK) {
        for (int32_t k = 0; k < n_entries; k++) {
            json_decref(entries[k].snapshot);
        }
        free(entries);
        memory_free(&mem);
        json_decref(root);
        free(kv);
        return st;
    }
    for (int32_t k = 0; k < a->log_n; k++) {
        json_decref(a->log[k].snapshot);
    }
    free(a->log);
    a->log = entries;
    a->log_n = n_entries;
    memory_free(&a->mem);
    a->mem = mem;
    policy_breaker_reset(&a->breaker);

    /* the KV state: only from the same model and the same prompt; else rebuilt from the CSO */
    json_int_t prompt_hash = json_integer_value(json_object_get(root, "prompt_hash"));
    json_int_t mine =
        (json_int_t)(fileio_fnv1a(FILEIO_FNV_OFFSET, a->system_text, strlen(a->system_text)) >> 1);
    uint64_t my_fp = a->model != NULL ? pipit_model_fingerprint(a->model) : 0;
    const char *why = NULL;
    if (fp != my_fp) {
        why = "the session was made with another model";
    } else if (prompt_hash != mine) {
        why = "the system prompt or tools changed";
    } else if (a->mem.n_cleaned > 0) {
        why = "the memory held text from outside (docs/memory.md)"; /* the KV holds it too */
    } else if (a->backend.ops->load_kv(a->backend.self, kv, kv_len) != PIPIT_OK) {
        why = "the KV state does not fit this context";
    }
    free(kv);
    /* the counts the session states must agree with the KV state it brought */
    json_int_t sys_tokens = json_integer_value(json_object_get(root, "system_tokens"));
    json_int_t superseded = json_integer_value(json_object_get(root, "superseded_at_rebuild"));
    if (why == NULL) {
        int32_t kv_np = 0, kv_ne = 0;
        a->backend.ops->lengths(a->backend.self, &kv_np, &kv_ne);
        if (sys_tokens <= 0 || sys_tokens > kv_np || superseded < 0 ||
            (size_t)superseded > a->mem.n_superseded) {
            why = "the session's token counts do not match its KV state";
        }
    }
    /* a session from an agent with more room (a longer context, a model trained on longer
     * prompts) may hold more memory than this agent's prompt limit allows: trim it now, or
     * every later turn would fail with a full context */
    size_t trimmed_at_load = 0;
    if (a->model != NULL) {
        char *text = memory_text(&a->mem);
        int32_t n_sys = count_tokens(a, a->system_text, true);
        int32_t n_mem = text != NULL && text[0] != '\0' ? count_tokens(a, text, false) : 0;
        free(text);
        int32_t budget = memory_budget(a);
        if (n_sys >= 0 && n_mem > 0 && n_sys + n_mem > budget) {
            int32_t room = budget - n_sys;
            size_t target =
                room > 0 ? (size_t)((double)memory_bytes(&a->mem) * 0.8 * room / n_mem) : 0;
            trimmed_at_load = memory_trim(&a->mem, target);
            if (why == NULL) {
                why = "its memory is longer than this agent's prompt limit";
            }
        }
    }
    if (why == NULL) {
        info->kv_restored = true;
        a->system_tokens = (int32_t)sys_tokens;
        a->superseded_at_rebuild = (size_t)superseded;
        pipit_format(info->note, sizeof(info->note), "restored the KV state");
    } else {
        st = rebuild_prefix(a);
        pipit_format(info->note, sizeof(info->note), "%s: rebuilt the context from the memory%s",
                     why, trimmed_at_load > 0 ? " (its oldest lines trimmed to fit)" : "");
    }
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    info->n_permanent = np;
    info->memory_lines = (int32_t)a->mem.n;
    json_decref(root);
    return st;
}
