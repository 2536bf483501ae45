/*
 * agent_prompt.c - the agent's prompt texts and the prompt limit they must fit.
 *
 * The permanent prefix (system text, tools) is queued once at creation and stays in the
 * backend's KV cache; each step prefills only its ephemeral tail "State: ...\nUser: ...\n
 * Assistant: " (or its chat-template rendering). The prompt limit is the model's trained length,
 * at most n_ctx; the memory may take what the limit leaves after the longest recent tail.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_prompt.h"

#include "agent_impl.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "status.h"
#include "strbuf.h"
#include "toolspec.h"

#include <stdlib.h>
#include <string.h>

static const char *DEFAULT_SYSTEM =
    "You control a device with tools. Reply with one tool call, or briefly in words.";
/* ============================================================================ prompt */

/* Hermes/Qwen system message: the system text and the tools as minified JSON. */
/* A pipit.* metadata value: the Executor adapter's when it has one (it says what it was
 * trained on), else the model's; -1 when neither has it. */
static int32_t
agent_meta_str(const struct pipit_agent *a, const char *key, char *buf, size_t size) {
    if (a->exec_lora != NULL && pipit_adapter_meta_str(a->exec_lora, key, buf, size) >= 0) {
        return (int32_t)strlen(buf);
    }
    return a->model != NULL ? pipit_model_meta_str(a->model, key, buf, size) : -1;
}

/* The system text the model was trained on for this tool set: of a model trained on several
 * packs (pipit.prompt.systems, one line each), the line that is the tool set's pack's system
 * text or name; else pipit.prompt.system. Into buf; NULL when the model records neither. */
static const char *agent_system_meta(const struct pipit_agent *a, char *buf, size_t size) {
    char list[2048];
    const struct pipit_pack *pack = pipit_toolset_pack(a->ts);
    if (pack != NULL && agent_meta_str(a, "pipit.prompt.systems", list, sizeof(list)) >= 0) {
        const char *want[2] = {pack->system, pack->name};
        for (int w = 0; w < 2; w++) {
            size_t n = want[w] != NULL ? strlen(want[w]) : 0;
            for (const char *l = list; n > 0 && *l != '\0';) {
                size_t len = strcspn(l, "\n");
                if (len == n && strncmp(l, want[w], n) == 0 && n < size) {
                    pipit_format(buf, size, "%s", want[w]);
                    return buf;
                }
                l += len + (l[len] == '\n' ? 1 : 0);
            }
        }
    }
    return agent_meta_str(a, "pipit.prompt.system", buf, size) >= 0 ? buf : NULL;
}

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
enum pipit_status agent_memory_message(struct pipit_agent *a, const char *lines, char **out) {
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
enum pipit_status agent_prepare_prompt(struct pipit_agent *a, struct pipit_error *err) {
    char meta[1024] = {0};
    const char *system = a->params.system_prompt;
    if (system == NULL && a->model != NULL) {
        system = agent_system_meta(a, meta, sizeof(meta));
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
            agent_meta_str(a, "pipit.prompt.tools", tools_meta, sizeof(tools_meta)) >= 0 &&
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
char *agent_step_prompt(struct pipit_agent *a, const char *segment, const char *tool_line) {
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
int32_t agent_count_tokens(const struct pipit_agent *a, const char *text, bool add_special) {
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
    bool has_meta = agent_system_meta(a, meta, sizeof(meta)) != NULL;
    const char *system = a->params.system_prompt != NULL ? a->params.system_prompt
                         : has_meta                      ? meta
                                                         : DEFAULT_SYSTEM;
    struct strbuf sb = {0};
    strbuf_printf(&sb, "%s\n", system); /* as agent_prepare_prompt() writes it */
    int32_t n_text = sb.failed ? -1 : agent_count_tokens(a, sb.data, true);
    strbuf_free(&sb);
    int32_t n_tools = n_text >= 0 && n_system > n_text ? n_system - n_text : 0;
    char state[512] = "";
    if (a->dev != NULL) {
        device_state_line(a->dev, state, sizeof(state));
    }
    char line[560];
    pipit_format(line, sizeof(line), "State: %s\n", state);
    int32_t n_state = agent_count_tokens(a, line, false);
    n_state = n_state > 0 ? n_state : 0;
    const struct pipit_pack *pack = pipit_toolset_pack(a->ts);
    char other[1200] = "";
    if (a->model_notice[0] != '\0') {
        /* the model records its pack (agent_check_pack): say what it says, once */
        pipit_format(other, sizeof(other), "; %s", a->model_notice);
    } else if (has_meta && a->params.system_prompt == NULL && pack != NULL &&
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
int32_t agent_prefix_tokens(const struct pipit_agent *a, const char *text) {
    if (a->model == NULL) {
        return (int32_t)strlen(text);
    }
    return agent_count_tokens(a, text, false);
}

/* A short command's tail before any turn: the state line, the words, the header, and a call. */
static void set_eph_floor(struct pipit_agent *a) {
    char *tail = agent_step_prompt(a, "zoom in to 2x and turn on the flash", NULL);
    int32_t n_tail = agent_count_tokens(a, tail, false);
    free(tail);
    int32_t gen = a->params.max_tokens < 32 ? a->params.max_tokens : 32;
    a->eph_floor = (n_tail > 0 ? n_tail : 32) + gen;
}

/* The longest prompt the agent may build (DESIGN.md item 5): the length the model was trained
 * on, at most the context window. A system prompt and tools that leave no room for a short
 * command are refused here, with the numbers, instead of failing every turn. */
enum pipit_status agent_set_prompt_limit(struct pipit_agent *a, struct pipit_error *err) {
    a->prompt_limit = (int32_t)a->params.n_ctx;
    a->limit_source = "the context window n_ctx";
    if (a->model == NULL) {
        return PIPIT_OK; /* the scripted backend counts bytes: n_ctx is the limit */
    }
    char meta[32] = {0};
    long trained = 0;
    if (agent_meta_str(a, "pipit.train.n_ctx", meta, sizeof(meta)) >= 0) {
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
        n_system = agent_count_tokens(a, a->system_text, true);
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
        st = agent_prepare_prompt(a, err);
        if (st != PIPIT_OK) {
            strbuf_free(&tried);
            return st;
        }
    }
    if (n_system >= 0 && n_system + a->eph_floor > a->prompt_limit) {
        if (a->foreign_model && n_system + a->eph_floor <= (int32_t)a->params.n_ctx) {
            /* a model for another pack is never asked (agent_check_pack): its trained length
             * limits nothing; the harness's own answers still run */
            a->prompt_limit = (int32_t)a->params.n_ctx;
            a->limit_source = "the context window n_ctx (the model, trained for another pack, "
                              "is not asked)";
        } else {
            st = prompt_too_long(a, n_system, tried.len > 0 ? tried.data : "", err);
        }
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
int32_t agent_memory_budget(const struct pipit_agent *a) {
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

/* A model pipit trained for one pack without recording which (a recipe's model, as the
 * bundled camera model), given another pack's tools or a plain tool set: its system text names
 * neither the pack nor the pack's system text. A model trained on several packs, or prompted
 * with the application's own system text, is not judged here. */
static bool recipe_model_for_another_pack(struct pipit_agent *a, char *system, size_t size) {
    char list[64];
    if (a->params.system_prompt != NULL ||
        agent_meta_str(a, "pipit.prompt.systems", list, sizeof(list)) >= 0 ||
        agent_meta_str(a, "pipit.prompt.system", system, size) < 0) {
        return false;
    }
    const struct pipit_pack *pack = pipit_toolset_pack(a->ts);
    return pack == NULL || (strcmp(system, pack->name) != 0 &&
                            (pack->system == NULL || strcmp(system, pack->system) != 0));
}

void agent_check_pack(struct pipit_agent *a) {
    a->model_notice[0] = '\0';
    a->foreign_model = false;
    char name[256] = "", hash[40] = "";
    if (a->model == NULL) {
        return;
    }
    if (agent_meta_str(a, "pipit.pack.hash", hash, sizeof(hash)) < 0) {
        char system[256];
        if (recipe_model_for_another_pack(a, system, sizeof(system))) {
            const char *ts_name = pipit_toolset_pack_name(a->ts);
            a->foreign_model = true;
            pipit_format(a->model_notice, sizeof(a->model_notice),
                         "the model was trained for another pack (its pipit.prompt.system is "
                         "\"%.64s\", the tool set%s%s%s): it does not know these tools, so the "
                         "agent runs none of its answers; train a model for this tool set (pipit "
                         "train --tools FILE, docs/training.md) or run a general instruct model",
                         system, ts_name != NULL ? "'s pack is \"" : " is a plain tool set",
                         ts_name != NULL ? ts_name : "", ts_name != NULL ? "\"" : "");
            pipit_log(PIPIT_LOG_WARN, "agent: %s", a->model_notice);
        }
        return;
    }
    if (agent_meta_str(a, "pipit.pack.name", name, sizeof(name)) < 0) {
        pipit_format(name, sizeof(name), "?");
    }
    const char *ts_name = pipit_toolset_pack_name(a->ts);
    char ts_hash[17];
    pipit_toolset_content_hash(a->ts, ts_hash);
    if (ts_name == NULL || strcmp(ts_name, name) != 0) {
        a->foreign_model = true;
        pipit_format(a->model_notice, sizeof(a->model_notice),
                     "the model was trained for the pack \"%s\", but the tool set is %s%s%s: its "
                     "answers are for other tools, so the agent runs none of them; train a model "
                     "for this tool set (pipit train --tools FILE, docs/training.md)",
                     name, ts_name != NULL ? "the pack \"" : "a plain tool set",
                     ts_name != NULL ? ts_name : "", ts_name != NULL ? "\"" : "");
    } else if (strcmp(ts_hash, hash) != 0) {
        pipit_format(a->model_notice, sizeof(a->model_notice),
                     "the model was trained for another version of the pack \"%s\" (content "
                     "hash %.16s; this tool set's is %s): tools, arguments, state or examples "
                     "changed since; retrain it (pipit train --tools FILE) for answers that match",
                     name, hash, ts_hash);
    }
    if (a->model_notice[0] != '\0') {
        pipit_log(PIPIT_LOG_WARN, "agent: %s", a->model_notice);
    }
}
