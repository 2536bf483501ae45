/*
 * tracker.c - the State-Tracker context (see tracker.h).
 *
 * Prompt layout (the paper's, shortened to its rules and two examples):
 *   permanent   <BOS>{rules}{examples}Full Checklist So Far:\n# This is the start...\n{CSO}
 *   ephemeral   New Messages:\n{messages}New Lines to Append:\n
 *   generated   "key: value\n" lines, or "# NO_UPDATE"
 * A model trained for the role (GGUF pipit.prompt.tracker = "role", as `pipit train` writes
 * it) gets only a role prefix instead of the rules and examples:
 *   permanent   <BOS>tracker\n{CSO}
 */
#include "tracker.h"

#include "status.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>

static const char *TRACKER_PROMPT =
    "You analyze new conversation turns and generate a concise, append-only log entry. Output "
    "ONLY the new lines to append to the checklist; never repeat what the checklist already "
    "holds. Use single words for keys (user_goal, completed_steps, tool_error, need_info, "
    "agent_refusals). Log the user's goal if new, completed steps without repeating them, "
    "unresolved tool errors, and details later turns need (names, IDs). If nothing is new, "
    "output exactly: # NO_UPDATE\n\n"
    "Example:\nFull Checklist So Far:\n# This is the start of the conversation.\n"
    "New Messages:\nuser: Predict the stock market prices for Google tomorrow.\n"
    "assistant: I can't predict prices, but I can search for analyst views.\n"
    "New Lines to Append:\nuser_goal: get analyst predictions for google stock\n"
    "agent_refusals: cannot predict stock prices\n\n"
    "Example:\nFull Checklist So Far:\nuser_goal: enable power saving mode\n"
    "New Messages:\nassistant: <call>set_wifi(enabled=false)\n"
    "tool: {\"ok\":true,\"data\":{\"wifi\":false}}\n"
    "New Lines to Append:\ncompleted_steps: wifi disabled\n\n"
    "Full Checklist So Far:\n# This is the start of the conversation.\n";

/* "# NO_UPDATE", or 1..3 lines "key: value". A value cannot hold '<' or '>': the tracker reads
 * tool results (text from outside) and must not copy call syntax or control text into the CSO
 * (memory_add_tracker_line checks every line again, docs/memory.md "Untrusted text"). */
static const char *TRACKER_GRAMMAR = "root ::= \"# NO_UPDATE\" | line line? line?\n"
                                     "line ::= [a-z] [a-z_]{0,23} \": \" [^\\n<>]{1,100} \"\\n\"\n";

struct tracker {
    struct pipit_model *model;
    struct pipit_context *ctx;
    struct pipit_sampler *smpl;
    bool primed; /* the prompt is in the permanent prefix */
    bool role;   /* the model was trained for the role: PIPIT_TRACKER_ROLE prefix only */
};

enum pipit_status tracker_new(struct pipit_model *model,
                              uint32_t cso_max,
                              int32_t n_threads,
                              bool flash_attn,
                              struct pipit_adapter *adapter,
                              struct tracker **out,
                              struct pipit_error *err) {
    pipit_error_clear(err);
    if (model == NULL || out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "tracker: NULL argument");
    }
    *out = NULL;
    struct tracker *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "tracker: out of memory");
    }
    t->model = model;
    char meta[16];
    /* trained for the role: the adapter says so (pipit train --base --lora), else the model */
    t->role = (pipit_adapter_meta_str(adapter, "pipit.prompt.tracker", meta, sizeof(meta)) >= 0 ||
               pipit_model_meta_str(model, "pipit.prompt.tracker", meta, sizeof(meta)) >= 0) &&
              strcmp(meta, "role") == 0;
    /* its window: its prompt, the longest CSO the agent keeps and room for one update */
    int32_t *toks = NULL, n_prompt = 0;
    enum pipit_status tst = pipit_tokenize_alloc(
        model, t->role ? PIPIT_TRACKER_ROLE "\n" : TRACKER_PROMPT, true, false, &toks, &n_prompt);
    pipit_free(toks);
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = cso_max + (uint32_t)(tst == PIPIT_OK ? n_prompt : 512) + TRACKER_ROOM;
    cp.n_threads = n_threads;
    cp.flash_attn = flash_attn;
    enum pipit_status st = pipit_context_init(model, &cp, &t->ctx, err);
    if (st == PIPIT_OK && adapter != NULL) {
        float one = 1.0f;
        st = pipit_context_set_adapters(t->ctx, &adapter, &one, 1);
        if (st != PIPIT_OK) {
            pipit_error_set(err, st, "tracker: %s", pipit_context_errmsg(t->ctx));
        }
    }
    if (st == PIPIT_OK) {
        struct pipit_sampler_params sp = pipit_sampler_default_params();
        sp.grammar = TRACKER_GRAMMAR;
        st = pipit_sampler_init(model, &sp, &t->smpl, err);
    }
    if (st != PIPIT_OK) {
        tracker_free(t);
        return st;
    }
    *out = t;
    return PIPIT_OK;
}

void tracker_free(struct tracker *t) {
    if (t == NULL) {
        return;
    }
    pipit_sampler_free(t->smpl);
    pipit_context_free(t->ctx);
    free(t);
}

static enum pipit_status
append(struct tracker *t, enum pipit_region region, const char *text, bool bos, int64_t *n) {
    int32_t *toks = NULL, nt = 0;
    enum pipit_status st = pipit_tokenize_alloc(t->model, text, bos, false, &toks, &nt);
    if (st == PIPIT_OK) {
        st = pipit_context_append(t->ctx, region, toks, nt);
        *n += nt;
    }
    pipit_free(toks);
    return st;
}

static enum pipit_status prime(struct tracker *t, int64_t *n) {
    if (t->primed) {
        return PIPIT_OK;
    }
    enum pipit_status st = append(t, PIPIT_REGION_PERMANENT,
                                  t->role ? PIPIT_TRACKER_ROLE "\n" : TRACKER_PROMPT, true, n);
    t->primed = st == PIPIT_OK;
    return st;
}

/* Tokens of `text` (no BOS), or -1. */
static int32_t count(struct tracker *t, const char *text) {
    int32_t *toks = NULL, nt = 0;
    enum pipit_status st = pipit_tokenize_alloc(t->model, text, false, false, &toks, &nt);
    pipit_free(toks);
    return st == PIPIT_OK ? nt : -1;
}

/* Whether `n` more permanent tokens leave room for an update (TRACKER_ROOM). */
static bool fits(const struct tracker *t, int32_t n) {
    return n >= 0 &&
           pipit_context_n_permanent(t->ctx) + n + TRACKER_ROOM <= pipit_context_n_ctx(t->ctx);
}

enum pipit_status tracker_append_cso(struct tracker *t, const char *delta) {
    if (t == NULL || delta == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    int64_t n = 0;
    enum pipit_status st = prime(t, &n);
    if (st == PIPIT_OK && delta[0] != '\0') {
        if (!fits(t, count(t, delta))) {
            return PIPIT_ERR_CONTEXT_FULL; /* nothing appended: the caller resets the CSO */
        }
        st = append(t, PIPIT_REGION_PERMANENT, delta, false, &n);
    }
    return st;
}

enum pipit_status tracker_reset_cso(struct tracker *t, const char *cso) {
    if (t == NULL || cso == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    enum pipit_status st = pipit_context_clear(t->ctx);
    t->primed = false;
    int64_t n = 0;
    if (st == PIPIT_OK) {
        st = prime(t, &n);
    }
    /* the newest lines that fit: the oldest go first, as in the agent's own trim */
    const char *from = cso;
    while (st == PIPIT_OK && *from != '\0' && !fits(t, count(t, from))) {
        const char *nl = strchr(from, '\n');
        from = nl != NULL ? nl + 1 : from + strlen(from);
    }
    if (st == PIPIT_OK && *from != '\0') {
        st = append(t, PIPIT_REGION_PERMANENT, from, false, &n);
    }
    return st;
}

enum pipit_status
tracker_update(struct tracker *t, const char *messages, char **out, struct tracker_stats *stats) {
    if (t == NULL || messages == NULL || out == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    *out = NULL;
    struct tracker_stats s;
    memset(&s, 0, sizeof(s));
    double t0 = pipit_now_ms();
    enum pipit_status st = prime(t, &s.prefill_tokens);
    struct strbuf prompt = {0};
    strbuf_str(&prompt, "New Messages:\n");
    strbuf_str(&prompt, messages);
    strbuf_str(&prompt, "New Lines to Append:\n");
    if (st == PIPIT_OK && prompt.failed) {
        st = PIPIT_ERR_NOMEM;
    }
    if (st == PIPIT_OK) {
        /* a turn too long for what the context has left past the CSO is not read: the
         * tracker adds nothing rather than fail the person's turn */
        int32_t n_prompt = count(t, prompt.data);
        s.skipped =
            n_prompt < 0 || pipit_context_n_permanent(t->ctx) + n_prompt + TRACKER_MAX_TOKENS >
                                pipit_context_n_ctx(t->ctx);
    }
    if (st == PIPIT_OK && !s.skipped) {
        st = append(t, PIPIT_REGION_EPHEMERAL, prompt.data, false, &s.prefill_tokens);
    }
    strbuf_free(&prompt);
    struct strbuf text = {0};
    strbuf_str(&text, "");
    if (st == PIPIT_OK && !s.skipped) {
        pipit_sampler_reset(t->smpl);
        int32_t toks[TRACKER_MAX_TOKENS];
        int32_t n = 0;
        struct pipit_generate_params gp = pipit_generate_default_params();
        gp.max_tokens = TRACKER_MAX_TOKENS;
        st = pipit_generate(t->ctx, t->smpl, &gp, toks, &n);
        s.decode_tokens = n;
        for (int32_t i = 0; i < n; i++) {
            char piece[128];
            int32_t k = pipit_token_piece(t->model, toks[i], piece, sizeof(piece));
            if (k > 0) {
                strbuf_add(&text, piece, (size_t)k);
            }
        }
    }
    pipit_context_rewind(t->ctx);
    s.n_permanent = pipit_context_n_permanent(t->ctx);
    s.kv_bytes = (int64_t)pipit_context_kv_bytes(t->ctx);
    s.ms = pipit_now_ms() - t0;
    if (stats != NULL) {
        *stats = s;
    }
    if (st != PIPIT_OK) {
        strbuf_free(&text);
        return st;
    }
    /* "# NO_UPDATE" (or nothing whole) appends nothing */
    if (text.data == NULL || strncmp(text.data, "# NO_UPDATE", 11) == 0) {
        strbuf_free(&text);
        *out = malloc(1);
        if (*out == NULL) {
            return PIPIT_ERR_NOMEM;
        }
        (*out)[0] = '\0';
        return PIPIT_OK;
    }
    *out = strbuf_take(&text);
    return *out != NULL ? PIPIT_OK : PIPIT_ERR_NOMEM;
}
