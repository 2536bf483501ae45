/*
 * agent.c - the agent's life: default parameters, creation (the permanent prompt, the prompt
 * limit, the call tool set with the built-in undo tool, the state-question lexicon), custom
 * handlers, cloud and thermal settings, cancel, free. The turn is in agent_turn.c; the files
 * of the agent are listed in agent_impl.h.
 *
 * Invariants: between turns the backend's ephemeral tail is empty; the action log holds at most
 * undo_slots entries, newest last; the breaker persists across turns (the same call failing
 * turn after turn trips it too).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent.h"

#include "agent_impl.h"
#include "agent_prompt.h"
#include "ask.h"
#include "device.h"
#include "memory.h"
#include "policy.h"
#include "router.h"
#include "status.h"
#include "toolspec.h"
#include "tracker.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================ defaults */

/* The window an agent without a model (the scripted backend, which counts bytes) gets for
 * n_ctx 0, and a model that records no trained length. */
enum {
    FALLBACK_WINDOW = 2048
};

struct pipit_agent_params pipit_agent_default_params(void) {
    struct policy_params pp = policy_default_params(false);
    struct pipit_agent_params p = {
        .device = NULL,
        .syntax = PIPIT_SYNTAX_AUTO,
        .grammar = true,
        .lazy_grammar = true,
        .small_talk = true,
        .fast_grammar = true,
        .system_prompt = NULL,
        .n_ctx = 0,
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
        .adapter = NULL,
        .flash_attn = false,
        .copy_strings = PIPIT_COPY_AUTO,
    };
    return p;
}
/* ============================================================================ creation */

/* The built-in undo tool (docs/agent.md, "Undo"): no arguments; the agent reverts its action
 * log when the model calls it and never runs a tool for it. */
static const char *const UNDO_TOOL_NAME = "undo";
static const char *const UNDO_TOOL_JSON =
    "{\"type\": \"function\", \"function\": {\"name\": \"undo\", \"description\": \"Undo "
    "the last action: put the device back as it was before it\", \"parameters\": {\"type\": "
    "\"object\", \"properties\": {}, \"required\": []}}}";

/* An adapter trained by pipit names its base (pipit.lora.base, its general.name) and
 * fingerprints it (pipit.lora.base_fingerprint, pipit_model_fingerprint in hex): on another
 * model of the same shapes its answers would be noise, so it is refused. An adapter without
 * these keys (made elsewhere) is taken as it is. */
static enum pipit_status check_adapter_base(const struct pipit_model *model,
                                            const struct pipit_adapter *adapter,
                                            const char *path,
                                            struct pipit_error *err) {
    char want[256] = "", have[256] = "";
    if (pipit_adapter_meta_str(adapter, "pipit.lora.base", want, sizeof(want)) >= 0 &&
        pipit_model_meta_str(model, "general.name", have, sizeof(have)) >= 0 &&
        strcmp(want, have) != 0) {
        return pipit_error_set(err, PIPIT_ERR_ADAPTER,
                               "agent: the adapter %s was trained on the base \"%s\", not on "
                               "this model (\"%s\")",
                               path, want, have);
    }
    char fp[32], own[32];
    snprintf(own, sizeof(own), "%016llx", (unsigned long long)pipit_model_fingerprint(model));
    if (pipit_adapter_meta_str(adapter, "pipit.lora.base_fingerprint", fp, sizeof(fp)) >= 0 &&
        strcmp(fp, own) != 0) {
        return pipit_error_set(err, PIPIT_ERR_ADAPTER,
                               "agent: the adapter %s was trained on another model named \"%s\" "
                               "(its weights differ: fingerprint %s, this model %s); train the "
                               "adapter again on this model",
                               path, have[0] != '\0' ? have : want, fp, own);
    }
    return PIPIT_OK;
}

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
        text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
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
    a->last_tool = -1;
    a->failed_tool = -1;
    a->backend = backend;
    a->params = params != NULL ? *params : pipit_agent_default_params();
    struct pipit_agent_params *p = &a->params;
    if (p->n_ctx == 0) {
        p->n_ctx = FALLBACK_WINDOW; /* pipit_agent_init sized it for a model */
    }
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
    if (p->syntax == PIPIT_SYNTAX_AUTO) {
        a->syntax = has_template ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
    } else if (p->syntax == PIPIT_SYNTAX_PIPIT || p->syntax == PIPIT_SYNTAX_HERMES) {
        a->syntax = (enum pipit_call_syntax)p->syntax;
    } else {
        pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: unknown syntax %d", (int)p->syntax);
        pipit_agent_free(a);
        return PIPIT_ERR_INVALID_ARG;
    }
    if (p->copy_strings != PIPIT_COPY_AUTO && p->copy_strings != PIPIT_COPY_ON &&
        p->copy_strings != PIPIT_COPY_OFF) {
        pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: unknown copy_strings mode %d",
                        (int)p->copy_strings);
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
    gp.copy_strings =
        a->params.copy_strings == PIPIT_COPY_ON ||
        (a->params.copy_strings == PIPIT_COPY_AUTO && a->syntax == PIPIT_SYNTAX_PIPIT);
    enum pipit_status st = a->log == NULL || a->router == NULL ? PIPIT_ERR_NOMEM : PIPIT_OK;
    if (st == PIPIT_OK && p->adapter != NULL) { /* before the prompt: it reads its metadata */
        if (model == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: an adapter needs a model");
        } else {
            st = pipit_adapter_load(model, p->adapter, &a->exec_lora, err);
        }
        if (st == PIPIT_OK) {
            st = check_adapter_base(model, a->exec_lora, p->adapter, err);
        }
        if (st == PIPIT_OK && backend_llama_set_adapter(&a->backend, a->exec_lora) != PIPIT_OK) {
            st = pipit_error_set(err, PIPIT_ERR_ADAPTER,
                                 "agent: the adapter %s could not be applied", p->adapter);
        }
    }
    if (st == PIPIT_OK) {
        st = make_calls_toolset(a, err);
    }
    if (st == PIPIT_OK) {
        st = pipit_grammar_compile(a->calls_ts, &gp, &a->grammar, err);
    }
    if (st == PIPIT_OK && a->owned_calls_ts != NULL) {
        st = pipit_grammar_compile(a->ts, &gp, &a->grammar_no_undo, err);
    }
    if (st == PIPIT_OK) {
        st = make_ask(a, err);
    }
    if (st == PIPIT_OK) {
        agent_check_pack(a);
        st = agent_prepare_prompt(a, err);
    }
    if (st == PIPIT_OK) {
        st = agent_set_prompt_limit(a, err);
    }
    if (st == PIPIT_OK && p->state_tracker && p->memory == PIPIT_MEMORY_CSO) {
        if (model == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "agent: the State-Tracker needs a model");
        } else {
            if (p->tracker_adapter != NULL) {
                st = pipit_adapter_load(model, p->tracker_adapter, &a->tracker_lora, err);
                if (st == PIPIT_OK) {
                    st = check_adapter_base(model, a->tracker_lora, p->tracker_adapter, err);
                }
            }
            if (st == PIPIT_OK) {
                st = tracker_new(model, (uint32_t)a->prompt_limit, p->n_threads, p->flash_attn,
                                 a->tracker_lora, &a->tracker, err);
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

/* The prompt length the model (or the adapter at `adapter`, which speaks for it) was trained
 * on: pipit.train.n_ctx, or 0 when neither records it. */
static long trained_prompt_length(struct pipit_model *model, const char *adapter) {
    char meta[32] = {0};
    int32_t got = -1;
    if (adapter != NULL) {
        struct pipit_adapter *ad = NULL;
        if (pipit_adapter_load(model, adapter, &ad, NULL) == PIPIT_OK) {
            got = pipit_adapter_meta_str(ad, "pipit.train.n_ctx", meta, sizeof(meta));
        }
        pipit_adapter_free(ad); /* agent_new_with_backend loads it for good, or says why not */
    }
    if (got < 0) {
        got = pipit_model_meta_str(model, "pipit.train.n_ctx", meta, sizeof(meta));
    }
    char *end = NULL;
    long n = got >= 0 ? strtol(meta, &end, 10) : 0;
    return got >= 0 && end != meta && *end == '\0' && n > 0 && n <= (1L << 20) ? n : 0;
}

/* The context window for n_ctx 0 (docs/agent.md, "Context window"). A model that records the
 * prompt length it was trained on never sees a longer prompt (agent_set_prompt_limit), so its
 * window holds that, the longest answer (max_tokens) and the longest tool line a JIT step adds;
 * a window of 2,048 there would be KV cache and compute buffer nobody uses, per agent. Any other
 * model gets its trained context, at most 2,048 tokens. */
static uint32_t auto_window(struct pipit_model *model,
                            const struct pipit_toolset *tools,
                            const struct pipit_agent_params *p) {
    long trained = trained_prompt_length(model, p->adapter);
    if (trained > 0) {
        size_t line = 0; /* bytes: a token is at least one */
        for (size_t i = 0; i < pipit_toolset_n_tools(tools); i++) {
            char *text = NULL;
            if (pipit_toolset_serialize_tool(tools, i, PIPIT_TOOLSPEC_COMPACT, &text) == PIPIT_OK) {
                size_t n = strlen(text);
                line = n > line ? n : line;
            }
            pipit_free(text);
        }
        long window = trained + p->max_tokens + (long)(line < 1024 ? line : 1024) + 16;
        return (uint32_t)(window < 64 ? 64 : window);
    }
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    return info.n_ctx_train > 0 && info.n_ctx_train < FALLBACK_WINDOW ? (uint32_t)info.n_ctx_train
                                                                      : FALLBACK_WINDOW;
}

enum pipit_status pipit_agent_init(struct pipit_model *model,
                                   const struct pipit_toolset *tools,
                                   const struct pipit_agent_params *params,
                                   struct pipit_agent **out,
                                   struct pipit_error *err) {
    if (model == NULL || tools == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "agent: NULL argument");
    }
    struct pipit_agent_params p = params != NULL ? *params : pipit_agent_default_params();
    if (p.n_ctx == 0 && p.max_tokens >= 1 && p.max_tokens <= 4096) {
        p.n_ctx = auto_window(model, tools, &p); /* out-of-range max_tokens: refused below */
    }
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = p.n_ctx;
    cp.n_threads = p.n_threads;
    cp.flash_attn = p.flash_attn;
    struct backend b;
    enum pipit_status st = backend_llama_new(model, &cp, p.temperature, p.seed, &b, err);
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
    json_decref(a->last_args);
    json_decref(a->failed_args);
    memory_free(&a->mem);
    tracker_free(a->tracker);
    pipit_adapter_free(a->tracker_lora);
    ask_free(a->ask);
    router_free(a->router);
    backend_free(&a->backend);
    pipit_adapter_free(a->exec_lora); /* after the context it was applied to */
    pipit_grammar_free(a->grammar);
    pipit_grammar_free(a->grammar_no_undo);
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
        a->system_tokens >= 0 ? a->system_tokens : agent_count_tokens(a, a->system_text, true);
    out->memory_budget = agent_memory_budget(a);
    out->tools_format = a->params.tools_format;
    pipit_format(out->notice, sizeof(out->notice), "%s", a->notice);
}

const char *pipit_agent_model_notice(const struct pipit_agent *agent) {
    return agent != NULL ? agent->model_notice : "";
}

const char *pipit_agent_errmsg(const struct pipit_agent *agent) {
    return agent != NULL ? agent->errmsg : "agent: NULL";
}

enum pipit_status
agent_fail(struct pipit_agent *a, enum pipit_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(a->errmsg, sizeof(a->errmsg), fmt, ap);
    va_end(ap);
    return status;
}

enum pipit_status
agent_fail_err(struct pipit_agent *a, enum pipit_status status, const struct pipit_error *err) {
    if (err->text[0] != '\0') {
        return agent_fail(a, status, "%s", err->text);
    }
    return agent_fail(a, status, "agent: %s", pipit_status_str(status));
}

enum pipit_status pipit_agent_register_tool(struct pipit_agent *a,
                                            const char *tool,
                                            pipit_tool_fn fn,
                                            void *user_data) {
    if (a == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    if (tool == NULL) {
        return agent_fail(a, PIPIT_ERR_INVALID_ARG, "agent: register_tool: the tool name is NULL");
    }
    int32_t idx = pipit_toolset_find(a->ts, tool);
    if (idx < 0) {
        return agent_fail(a, PIPIT_ERR_UNKNOWN_TOOL, "agent: no tool '%s' in the tool set", tool);
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
        return agent_fail(a, PIPIT_ERR_NOMEM,
                          "agent: register_tool: '%s' would be handler %d; the limit is %d", tool,
                          AGENT_MAX_HANDLERS + 1, AGENT_MAX_HANDLERS);
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
    struct pipit_error local;
    err = err != NULL ? err : &local;
    enum pipit_status st = policy_thermal_read(NULL, &t, err);
    if (st != PIPIT_OK) {
        return agent_fail_err(a, st, err);
    }
    a->thermal = t;
    return PIPIT_OK;
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
    /* 15 significant digits: "pressure":3.8 after 3.3 + 0.5, not 3.8000000000000003 (a
     * session keeps the exact state: agent_session.c) */
    char *out = s != NULL
                    ? json_dumps(s, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
                    : NULL;
    json_decref(s);
    return out;
}
const char *agent_permanent_text(const struct pipit_agent *agent) {
    return agent != NULL ? agent->system_text : NULL;
}
