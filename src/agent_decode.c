/*
 * agent_decode.c - one segment's decode: one backend step with a grammar-locked call (lazy: the
 * grammar starts at the call's trigger), or two in JIT mode (the tool's name, then its
 * arguments with the tool's compact schema in the ephemeral context).
 *
 * Every step is accounted in the turn (tokens, time, flags); a limit (cancel, wall clock) stops
 * it with the turn's flags and sentence saying so.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_decode.h"

#include "agent_choice.h"
#include "agent_context.h"
#include "agent_impl.h"
#include "agent_prompt.h"
#include "agent_record.h"
#include "grammar.h"
#include "policy.h"
#include "router.h"
#include "status.h"
#include "strbuf.h"
#include "words.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Run one backend step and account for it in the turn. On a limit (cancel, time) the turn's
 * flags and sentence say so and *stop is set. A step that finds the context full while memory
 * is in it runs again on less memory (half, then none): the agent filled that context, so the
 * turn must not fail for it (the budget should make this rare: a tail longer than any recent
 * one, e.g. a JIT schema larger than the last turns'). */
/* "back to the rear one", "back to the main lens": "back to" a thing with its determiner, not
 * to a time or a state before ("back to how it was", "back to the previous look", "back to
 * the way it was", "back to normal"). */
static bool back_to_a_thing(const char *segment) {
    static const char *const DET[] = {"the", "my", "a", "an", "that", "this"};
    static const char *const BEFORE[] = {
        "previous", "original", "old",   "last",  "earlier", "way",    "start", "beginning",
        "first",    "prior",    "usual", "other", "same",    "former", "one",   "ones"};
    struct words_tok t[32];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 32);
    for (size_t i = 0; i + 2 < n; i++) {
        if (strcmp(t[i].w, "back") != 0 || strcmp(t[i + 1].w, "to") != 0 ||
            !words_in_list(t[i + 2].w, DET, sizeof(DET) / sizeof(DET[0]))) {
            continue;
        }
        return i + 3 < n && !words_in_list(t[i + 3].w, BEFORE, sizeof(BEFORE) / sizeof(BEFORE[0]));
    }
    return false;
}

/* Whether a call of this turn ran and succeeded before the current segment. */
static bool acted_this_turn(const struct turn_build *tb) {
    for (size_t i = 0; tb->turn != NULL && i < tb->turn->n_calls; i++) {
        if (tb->turn->calls[i].executed && tb->turn->calls[i].ok) {
            return true;
        }
    }
    return false;
}

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
            agent_fit_memory(a, t, a->system_tokens + (retry == 0 ? mem / 2 : 1)) != PIPIT_OK) {
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
    /* the memory budget plans for the prompt tail and a short answer: one runaway decode (a
     * call cut at the token limit) must not empty the memory for the next 16 turns; a long
     * answer that does not fit gives memory back for its own step (above) */
    int32_t gen = a->params.max_tokens < 32 ? a->params.max_tokens : 32;
    int32_t past = (int32_t)so->decode_tokens - gen;
    int32_t tail = ne - (past > 0 ? past : 0);
    if (tail > a->eph_turn) {
        a->eph_turn = tail;
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
        agent_say(tb, "Cancelled.");
        *stop = true;
    } else if (so->out_of_time) {
        t->flags |= PIPIT_TURN_BUDGET;
        char buf[400];
        pipit_format(buf, sizeof(buf), "I ran out of time on \"%s\", so I did nothing.", segment);
        agent_say(tb, buf);
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

/* The output is a call to the built-in undo tool (not a pack's own undo tool). */
static bool chose_builtin_undo(const struct pipit_agent *a, const char *text) {
    if (text == NULL || a->owned_calls_ts == NULL) {
        return false;
    }
    struct strbuf head = {0};
    grammar_call_head(a->syntax, "undo", &head);
    const char *at = head.data != NULL ? strstr(text, head.data) : NULL;
    bool is = at != NULL && (a->syntax == PIPIT_SYNTAX_HERMES || at[head.len] == '(');
    strbuf_free(&head);
    return is;
}

/* The length of the key `p` starts with ("ticket_id: "), else 0. */
static size_t memory_key(const char *p) {
    size_t k = 0;
    while ((p[k] >= 'a' && p[k] <= 'z') || (p[k] >= 'A' && p[k] <= 'Z') ||
           (p[k] >= '0' && p[k] <= '9') || p[k] == '_') {
        k++;
    }
    return k > 0 && p[k] == ':' && p[k + 1] == ' ' ? k + 2 : 0;
}

/* The values of memory lines ("ticket_id: T-1, status: open"), each on a line of its own,
 * without their keys, and without the lines of failures and data-less calls (a tool's name and
 * a code): those are the harness's words, not something to copy. NULL when out of memory. */
static char *memory_values(const char *text) {
    struct strbuf b = {0};
    for (const char *p = text; *p != '\0';) {
        bool line_start = p == text || p[-1] == '\n';
        if (line_start && (strncmp(p, "tool_error: ", 12) == 0 || strncmp(p, "done: ", 6) == 0)) {
            p += strcspn(p, "\n"); /* a tool's name and a code: the harness's words */
            p += *p == '\n';
            continue;
        }
        size_t k = line_start ? memory_key(p) : 0;
        if (k == 0 && p[0] == ',' && p[1] == ' ' && memory_key(p + 2) > 0) {
            k = 2 + memory_key(p + 2); /* ", status: ": the next fact */
        }
        if (k > 0) {
            strbuf_str(&b, "\n");
            p += k;
            continue;
        }
        strbuf_add(&b, p, 1);
        p++;
    }
    strbuf_str(&b, "");
    return strbuf_take(&b);
}

/* This step's grammar: `g` with its copied strings (pipit_grammar_with_copy) turned into the
 * spans of the whole utterance and the memory's values (the IDs and names the turns so far
 * brought). Not the state line: its values are the device's settings ("off", "2"), never a
 * name to copy. *own receives the text to free (NULL: `g` has no copied strings). */
static enum pipit_status
step_grammar(struct pipit_agent *a, const struct turn_build *tb, const char *g, char **own) {
    *own = NULL;
    if (g == NULL || strstr(g, "\ncopy ::= ") == NULL) {
        return PIPIT_OK;
    }
    char *mem = memory_text(&a->mem);
    char *values = memory_values(mem != NULL ? mem : "");
    free(mem);
    if (values == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    const char *texts[2] = {tb->utterance != NULL ? tb->utterance : tb->segment, values};
    enum pipit_status st = pipit_grammar_with_copy(g, texts, 2, own);
    free(values);
    return st;
}

/* Decode one segment: one constrained decode, or two in JIT mode (the tool's name, then its
 * arguments with its compact schema in the ephemeral context). *text receives the model's
 * output (in JIT mode the whole call); NULL with PIPIT_OK when a limit stopped the step. */
enum pipit_status agent_decode_segment(struct pipit_agent *a,
                                       struct turn_build *tb,
                                       const char *segment,
                                       const struct policy_clock *clock,
                                       const struct policy_limits *lim,
                                       bool first,
                                       char **text) {
    *text = NULL;
    bool jit = a->params.tools_format == PIPIT_TOOLSPEC_JIT;
    char *prompt = agent_step_prompt(a, segment, NULL);
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
    struct backend_step_output so = {0};
    bool stop = false;
    char *own = NULL;
    enum pipit_status st = step_grammar(a, tb, sp.grammar, &own);
    if (own != NULL) {
        sp.grammar = own;
        sp.grammar_transient = true;
    }
    if (st == PIPIT_OK) {
        st = run_step(a, tb, prompt, &sp, first, segment, &so, &stop);
    }
    if (st == PIPIT_OK && !stop && !jit && sp.grammar != NULL && a->grammar_no_undo != NULL &&
        chose_builtin_undo(a, so.text) &&
        ((!router_undo_signal(segment) &&
          (a->log_n == 0 || router_has_tool_word(a->router, segment) ||
           !router_undo_anaphor(segment) || acted_this_turn(tb))) ||
         (!router_undo_verb(segment) &&
          (agent_says_setting_value(a->ts, segment) || back_to_a_thing(segment))))) {
        /* "kitchen lights on for the snacks" names what the tools act on and no reversal, and
         * "fertilise the roses" neither a reversal nor anything done: whatever the model chose,
         * it is no undo, and with an action in the log undo would revert one nobody asked
         * about; decode again without it. "lose that one" (no tool word, pointing back) stays
         * the model's undo: the second line of defence behind the router, unless nothing was
         * done yet ("open it" as a first command: an undo could only say there is nothing to
         * undo), or when this turn did something already ("go macro, i wanna get right up close
         * to it": the undo would take back what the same turn asked for). "hmm too blue, try
         * daylight" has a word of reversal ("too") but names a setting's value and no verb of undo:
         * it asks for that setting. */
        free(so.text);
        so.text = NULL;
        free(own);
        sp.grammar = pipit_grammar_call(a->grammar_no_undo);
        sp.grammar_transient = false;
        st = step_grammar(a, tb, sp.grammar, &own);
        if (own != NULL) {
            sp.grammar = own;
            sp.grammar_transient = true;
        }
        if (st == PIPIT_OK) {
            st = run_step(a, tb, prompt, &sp, false, segment, &so, &stop);
        }
    }
    free(own);
    own = NULL;
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
    so.text = NULL;
    char *line = NULL;
    st = pipit_toolset_serialize_tool(a->calls_ts, (size_t)tool, PIPIT_TOOLSPEC_COMPACT, &line);
    if (st != PIPIT_OK) {
        return st;
    }
    struct strbuf head = {0};
    grammar_call_head(a->syntax, a->calls_ts->tools[tool].name, &head);
    char *prompt2 = agent_step_prompt(a, segment, line);
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
    sp2.grammar_transient = false;
    sp2.lazy = false;
    sp2.is_complete = jit_args_complete;
    sp2.complete_user_data = &jc;
    st = step_grammar(a, tb, sp2.grammar, &own);
    if (own != NULL) {
        sp2.grammar = own;
        sp2.grammar_transient = true;
    }
    if (st == PIPIT_OK) {
        st = run_step(a, tb, full.data, &sp2, false, segment, &so, &stop);
    }
    free(own);
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
