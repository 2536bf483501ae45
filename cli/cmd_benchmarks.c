/*
 * cmd_benchmarks.c - `pipit bench`: the numbers that matter (docs/ARCHITECTURE "Numbers that
 * matter"), printed as markdown tables. Benchmarks, not tests: machines here are shared and
 * noisy, so nothing is asserted. docs/RESULTS.md holds the latest output.
 *
 *   grammar    grammar cost per generated token: pipit's sampler (sample first, check the draw,
 *              mask the vocabulary only on rejection) and the full-vocabulary mask llama.cpp's
 *              GBNF sampler applies to every token, on 32K and 151K tokenizers; and the fast
 *              decoder's compile time for a tool with 40 optional properties
 *   toolcall   decode steps, generated tokens and wall time per tool call
 *   ttft       time to first token: cold, warm permanent prefix, restored session
 *   turn       where a command's time goes: the model's prefill and decode, sampling, the
 *              grammar, and everything else (the harness's fixed per-turn overhead)
 *   context    initial context tokens per tool serialization, context after 5/10/25 turns per
 *              memory mode
 *   memory     peak resident memory (getrusage)
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef PIPIT_DEFAULT_MODEL
#define PIPIT_DEFAULT_MODEL "models/pipit-camera-v1.gguf"
#endif
#ifndef PIPIT_TOOLS_DIR
#define PIPIT_TOOLS_DIR "tools"
#endif

#define BENCH_MAX_TOKENS 4096

struct bench_opts {
    const char *model;   /* agent benchmarks (toolcall, ttft, context) */
    const char *workdir; /* where the random test models are written */
    long threads;
    long reps;
    bool sections[6];
};

enum {
    SEC_GRAMMAR,
    SEC_TOOLCALL,
    SEC_TTFT,
    SEC_CONTEXT,
    SEC_MEMORY,
    SEC_TURN,
    N_SECTIONS
};
static const char *const SECTION_NAMES[] = {"grammar", "toolcall", "ttft",
                                            "context", "memory",   "turn"};

static void usage(FILE *out) {
    fprintf(out,
            "usage: pipit bench [options] [section ...]\n"
            "sections: grammar toolcall ttft turn context memory (default: all)\n"
            "  --model FILE    model for the agent benchmarks (default: the bundled %s,\n"
            "                  else a random 32K test model)\n"
            "  --workdir DIR   where random test models are written (default: $TMPDIR or /tmp)\n"
            "  --threads N     CPU threads (default 1)\n"
            "  --reps N        decodes per grammar measurement (default 20)\n",
            PIPIT_DEFAULT_MODEL);
}

static double pct(double *v, size_t n, double q) {
    if (n == 0) {
        return NAN;
    }
    qsort(v, n, sizeof(double), cli_cmp_double);
    size_t k = (size_t)ceil(q * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

static bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* A random test model with the named tokenizer in the work directory (made once). */
static bool test_model(const struct bench_opts *o, const char *vocab, char *path, size_t size) {
    snprintf(path, size, "%s/pipit-bench-%s.gguf", o->workdir, vocab);
    if (file_exists(path)) {
        return true;
    }
    char vbuf[4096];
    struct pipit_make_model_params mp = pipit_make_model_default_params();
    mp.vocab_path = cli_vocab_path(vocab, vbuf, sizeof(vbuf));
    mp.seed = 1;
    struct pipit_error err;
    if (pipit_make_model(&mp, path, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: cannot make the %s test model: %s\n", vocab, err.text);
        return false;
    }
    return true;
}

/* ============================================================================ grammar */

struct grammar_run {
    double *sample_us; /* per token */
    bool *fast;        /* constrained: the first draw was allowed */
    size_t n;
    double decode_ms;
    int64_t decode_tokens;
};

/* Decode `reps` times from `prompt` with `smpl`, timing every sample call. */
static bool time_samples(struct pipit_context *ctx,
                         struct pipit_sampler *smpl,
                         struct pipit_model *model,
                         const int32_t *prompt,
                         int32_t n_prompt,
                         const int32_t *forced,
                         int32_t n_forced,
                         long reps,
                         int32_t max_gen,
                         struct grammar_run *run) {
    size_t cap = (size_t)reps * (size_t)max_gen;
    run->sample_us = calloc(cap, sizeof(double));
    run->fast = calloc(cap, sizeof(bool));
    run->n = 0;
    run->decode_ms = 0;
    run->decode_tokens = 0;
    if (run->sample_us == NULL || run->fast == NULL) {
        return false;
    }
    for (long r = 0; r < reps; r++) {
        pipit_context_clear(ctx);
        pipit_context_reset_perf(ctx);
        pipit_sampler_reset(smpl);
        if (pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, prompt, n_prompt) != PIPIT_OK) {
            return false;
        }
        /* forced text (the start of a call) goes through the grammar and the cache as is */
        for (int32_t k = 0; k < n_forced; k++) {
            if (pipit_sampler_accept(smpl, forced[k]) != PIPIT_OK) {
                fprintf(stderr, "pipit bench: the grammar refuses forced token %d of %d\n", (int)k,
                        (int)n_forced);
                return false;
            }
        }
        if (n_forced > 0 && pipit_context_decode_forced(ctx, forced, n_forced) != PIPIT_OK) {
            return false;
        }
        pipit_context_reset_perf(ctx);
        for (int32_t k = 0; k < max_gen; k++) {
            struct pipit_perf before, after;
            pipit_context_get_perf(ctx, &before);
            double t0 = cli_now_ms();
            int32_t tok = pipit_sampler_sample(smpl, ctx);
            double dt = cli_now_ms() - t0;
            pipit_context_get_perf(ctx, &after);
            if (tok < 0) {
                break; /* the grammar is complete: no token allowed but end */
            }
            run->sample_us[run->n] = dt * 1e3;
            run->fast[run->n] = after.n_grammar_fast > before.n_grammar_fast;
            run->n++;
            if (pipit_model_token_is_eog(model, tok) ||
                pipit_context_decode_token(ctx, tok) != PIPIT_OK) {
                break;
            }
        }
        struct pipit_perf p;
        pipit_context_get_perf(ctx, &p);
        run->decode_ms += p.t_decode_ms;
        run->decode_tokens += p.n_decode_tokens;
    }
    return true;
}

static void grammar_run_free(struct grammar_run *r) {
    free(r->sample_us);
    free(r->fast);
}

static int bench_grammar_one(const struct bench_opts *o,
                             const char *vocab,
                             const char *where,
                             const char *forced_text,
                             const struct pipit_toolset *tools) {
    char path[4096];
    if (!test_model(o, vocab, path, sizeof(path))) {
        return CLI_EXIT_FAIL;
    }
    struct pipit_error err;
    struct pipit_model *model = NULL;
    if (pipit_model_load(path, NULL, &model, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    struct pipit_grammar *g = NULL;
    struct pipit_context *ctx = NULL;
    struct pipit_sampler *plain = NULL, *constrained = NULL;
    int32_t *prompt = NULL, n_prompt = 0, *forced = NULL, n_forced = 0;
    struct grammar_run u = {0}, c = {0};
    int rc = CLI_EXIT_FAIL;
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = (int32_t)o->threads;
    if (pipit_grammar_compile(tools, NULL, &g, &err) != PIPIT_OK ||
        pipit_context_init(model, &cp, &ctx, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        goto done;
    }
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    if (pipit_sampler_init(model, &sp, &plain, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        goto done;
    }
    sp.grammar = pipit_grammar_call(g);
    if (pipit_sampler_init(model, &sp, &constrained, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        goto done;
    }
    if (pipit_tokenize_alloc(model,
                             "State: zoom=1 flash=off facing=back recording=no timer=0 "
                             "mode=auto\nUser: zoom in to 2x and turn on the flash\nAssistant: ",
                             true, false, &prompt, &n_prompt) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: cannot tokenize the prompt\n");
        goto done;
    }
    /* the forced text as one-byte tokens: the grammar sees exactly these bytes (a tokenizer
     * may add a space before the first piece) */
    forced = calloc(strlen(forced_text) + 1, sizeof(int32_t));
    for (const char *p = forced_text; forced != NULL && *p != '\0'; p++) {
        int32_t tok = -1;
        for (int32_t t = 0; t < info.n_vocab && tok < 0; t++) {
            char piece[8];
            if (pipit_token_piece(model, t, piece, sizeof(piece)) == 1 && piece[0] == *p) {
                tok = t;
            }
        }
        if (tok < 0) {
            fprintf(stderr, "pipit bench: no one-byte token for '%c'\n", *p);
            goto done;
        }
        forced[n_forced++] = tok;
    }
    if (!time_samples(ctx, plain, model, prompt, n_prompt, forced, n_forced, o->reps, 48, &u) ||
        !time_samples(ctx, constrained, model, prompt, n_prompt, forced, n_forced, o->reps, 48,
                      &c)) {
        fprintf(stderr, "pipit bench: %s\n", pipit_context_errmsg(ctx));
        goto done;
    }
    /* grammar cost = constrained sample time - the mean unconstrained sample time */
    double base = 0;
    for (size_t i = 0; i < u.n; i++) {
        base += u.sample_us[i];
    }
    base = u.n > 0 ? base / (double)u.n : 0;
    double *all = calloc(c.n + 1, sizeof(double));
    double *slow = calloc(c.n + 1, sizeof(double));
    double *fast = calloc(c.n + 1, sizeof(double));
    size_t n_slow = 0, n_fast = 0;
    double sum_all = 0;
    for (size_t i = 0; all != NULL && slow != NULL && fast != NULL && i < c.n; i++) {
        double g_us = c.sample_us[i] - base;
        all[i] = g_us;
        sum_all += g_us;
        if (c.fast[i]) {
            fast[n_fast++] = g_us;
        } else {
            slow[n_slow++] = g_us;
        }
    }
    double slow_mean = 0;
    for (size_t i = 0; i < n_slow; i++) {
        slow_mean += slow[i];
    }
    slow_mean = n_slow > 0 ? slow_mean / (double)n_slow : NAN;
    double decode_us = c.decode_tokens > 0 ? c.decode_ms * 1e3 / (double)c.decode_tokens : NAN;
    double mean_all = c.n > 0 ? sum_all / (double)c.n : NAN;
    printf(
        "| %s (%d) | %s | %zu | %.0f%% | %.1f / %.1f | %.1f / %.1f | %.1f / %.1f | %.1f | %.1f%% | "
        "%.1f%% |\n",
        vocab, info.n_vocab, where, c.n, c.n > 0 ? 100.0 * (double)n_fast / (double)c.n : 0.0,
        pct(all, c.n, 0.5), pct(all, c.n, 0.99), pct(fast, n_fast, 0.5), pct(fast, n_fast, 0.99),
        pct(slow, n_slow, 0.5), pct(slow, n_slow, 0.99), decode_us,
        100.0 * mean_all / (decode_us + base + mean_all),
        100.0 * slow_mean / (decode_us + base + slow_mean));
    free(all);
    free(slow);
    free(fast);
    rc = CLI_EXIT_OK;
done:
    grammar_run_free(&u);
    grammar_run_free(&c);
    pipit_free(prompt);
    free(forced);
    pipit_sampler_free(plain);
    pipit_sampler_free(constrained);
    pipit_context_free(ctx);
    pipit_grammar_free(g);
    pipit_model_free(model);
    return rc;
}

/* The fast decoder's compile of an object with 40 optional members (every subset is a call):
 * linear in the members, so milliseconds (before: "too large for the fast path" from 14
 * optional strings, docs/fastgrammar.md). Model-free: the automaton's NFA, best of 5. */
static void bench_optional_members(void) {
    static const char *const types[3] = {"string", "number", "boolean"};
    printf("## Optional members: fast-path compile of one tool with 40 optional properties\n\n");
    printf("| property type | compile ms (best of 5) | automaton NFA states | fast path |\n");
    printf("|---|---:|---:|---|\n");
    for (int t = 0; t < 3; t++) {
        char *text = cli_wide_tools(types[t], 40);
        struct pipit_toolset *ts = NULL;
        struct pipit_grammar *g = NULL;
        struct pipit_error err;
        if (text == NULL ||
            pipit_toolset_load_string(text, strlen(text), "wide", &ts, &err) != PIPIT_OK ||
            pipit_grammar_compile(ts, NULL, &g, &err) != PIPIT_OK) {
            printf("| %s | - | - | %s |\n", types[t], text == NULL ? "out of memory" : err.text);
            free(text);
            pipit_toolset_free(ts);
            continue;
        }
        double best = INFINITY;
        int32_t states = 0;
        enum pipit_status st = PIPIT_OK;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = cli_now_ms();
            st = pipit_fastgrammar_check(pipit_grammar_call(g), &states, &err);
            best = fmin(best, cli_now_ms() - t0);
        }
        printf("| %s | %.2f | %d | %s |\n", types[t], best, (int)states,
               st == PIPIT_OK ? "yes" : err.text);
        pipit_grammar_free(g);
        pipit_toolset_free(ts);
        free(text);
    }
    printf("\n");
}

static int bench_grammar(const struct bench_opts *o, const struct pipit_toolset *tools) {
    printf("## Grammar cost per generated token (camera call grammar, greedy, %ld decodes of up "
           "to 48 tokens)\n\n",
           o->reps);
    printf("grammar µs = constrained sample time - mean unconstrained sample time. \"fast\": the "
           "unmasked draw was allowed (one grammar check); \"masked\": it was rejected and the "
           "grammar was applied to every candidate, which is what llama.cpp's GBNF sampler does "
           "on every token. A random test model almost never draws an allowed token on its own, so "
           "\"whole call\" (decoding from the trigger on) measures the masked path; \"string "
           "argument\" forces the call's start up to an open string (free text: a cloud query, "
           "a message body), where most draws are allowed, and measures the fast path. A trained "
           "model agrees with the grammar on most tokens of a whole call too.\n\n");
    printf("| tokenizer (vocab) | decoding | tokens | fast path | pipit µs p50 / p99 | fast µs p50 "
           "/ p99 | "
           "masked (llama.cpp) µs p50 / p99 | decode µs/token | pipit %% of token time | "
           "full mask %% of token time |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    static const char *const vocabs[] = {"llama-spm", "qwen2"};
    int rc = CLI_EXIT_OK;
    for (size_t v = 0; v < 2 && rc == CLI_EXIT_OK; v++) {
        rc = bench_grammar_one(o, vocabs[v], "whole call", "<call>", tools);
        if (rc == CLI_EXIT_OK) {
            rc = bench_grammar_one(o, vocabs[v], "string argument",
                                   "<call>process_with_cloud_llm(user_query_context=\"", tools);
        }
    }
    printf("\n");
    if (rc == CLI_EXIT_OK) {
        bench_optional_members();
    }
    return rc;
}

/* ============================================================================ agent helpers */

static const char *const UTTERANCES[] = {
    "zoom in to 2x",
    "turn on the flash",
    "take a photo",
    "set a 3 second timer",
    "night mode",
    "white balance cloudy",
    "show the grid",
    "exposure +1",
    "switch to the front camera",
    "take a photo",
    "back camera",
    "flash off",
    "zoom to 3x",
    "widescreen please",
    "lock the focus",
    "unlock the focus",
    "jpeg quality 80",
    "portrait mode",
    "timer off",
    "take a photo",
    "hide the grid",
    "zoom out",
    "auto scene",
    "4:3 please",
    "take one more",
};
#define N_UTTERANCES (sizeof(UTTERANCES) / sizeof(UTTERANCES[0]))

static struct pipit_agent *new_agent(const struct bench_opts *o,
                                     struct pipit_model *model,
                                     const struct pipit_toolset *tools,
                                     int32_t format,
                                     int32_t memory,
                                     uint32_t n_ctx,
                                     bool force_call,
                                     struct pipit_device **device) {
    struct pipit_error err;
    *device = NULL;
    if (pipit_device_init("camera", tools, NULL, device, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        return NULL;
    }
    struct pipit_agent_params ap = pipit_agent_default_params();
    ap.device = *device;
    ap.n_threads = (int32_t)o->threads;
    ap.tools_format = format;
    ap.memory = memory;
    ap.n_ctx = n_ctx;
    ap.turn_budget_ms = 0;
    ap.lazy_grammar = !force_call;
    struct pipit_agent *a = NULL;
    if (pipit_agent_init(model, tools, &ap, &a, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        pipit_device_free(*device);
        *device = NULL;
        return NULL;
    }
    return a;
}

/* Free an agent of new_agent() and its camera. */
static void free_agent(struct pipit_agent *a, struct pipit_device *device) {
    pipit_agent_free(a);
    pipit_device_free(device);
}

/* ============================================================================ tool calls */

static int bench_toolcall(const struct bench_opts *o,
                          struct pipit_model *model,
                          const struct pipit_toolset *tools) {
    printf("## Decode steps and wall time per tool call (%zu camera utterances, one agent per "
           "format)\n\n",
           N_UTTERANCES);
    printf("| tools format | turns | calls | model calls / call | decoded tokens / call | "
           "turn ms p50 | turn ms p95 | valid calls |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    static const int32_t formats[] = {PIPIT_TOOLSPEC_COMPACT, PIPIT_TOOLSPEC_JIT};
    static const char *const names[] = {"compact", "jit"};
    for (size_t f = 0; f < 2; f++) {
        struct pipit_device *dev = NULL;
        struct pipit_agent *a =
            new_agent(o, model, tools, formats[f], PIPIT_MEMORY_CSO, 4096, false, &dev);
        if (a == NULL) {
            return CLI_EXIT_FAIL;
        }
        double lat[N_UTTERANCES];
        int64_t calls = 0, valid = 0, model_calls = 0, decoded = 0;
        size_t n = 0;
        for (size_t i = 0; i < N_UTTERANCES; i++) {
            struct pipit_turn *t = NULL;
            if (pipit_agent_turn(a, UTTERANCES[i], &t) != PIPIT_OK) {
                fprintf(stderr, "pipit bench: %s\n", pipit_agent_errmsg(a));
                break;
            }
            lat[n++] = t->latency_ms;
            calls += (int64_t)t->n_calls;
            for (size_t k = 0; k < t->n_calls; k++) {
                valid += t->calls[k].status == PIPIT_OK ? 1 : 0;
            }
            model_calls += t->model_calls;
            decoded += t->decode_tokens;
            pipit_turn_free(t);
        }
        double per = calls > 0 ? (double)calls : NAN;
        printf("| %s | %zu | %lld | %.2f | %.1f | %.1f | %.1f | %lld/%lld |\n", names[f], n,
               (long long)calls, (double)model_calls / per, (double)decoded / per, pct(lat, n, 0.5),
               pct(lat, n, 0.95), (long long)valid, (long long)calls);
        free_agent(a, dev);
    }
    printf("\n");
    return CLI_EXIT_OK;
}

/* ============================================================================ TTFT */

static int bench_ttft(const struct bench_opts *o,
                      struct pipit_model *model,
                      const struct pipit_toolset *tools) {
    printf("## Time to first token\n\n");
    printf("| tools format | cold (new agent, prefix prefilled) ms | warm (prefix cached) ms p50 "
           "| restored session ms |\n|---|---:|---:|---:|\n");
    static const int32_t formats[] = {PIPIT_TOOLSPEC_OPENAPI, PIPIT_TOOLSPEC_COMPACT,
                                      PIPIT_TOOLSPEC_JIT};
    static const char *const names[] = {"openapi", "compact", "jit"};
    for (size_t f = 0; f < 3; f++) {
        double cold[5], warm[20], restored[5];
        size_t n_cold = 0, n_warm = 0, n_restored = 0;
        char session[4096];
        snprintf(session, sizeof(session), "%s/bench-ttft.session",
                 o->workdir != NULL ? o->workdir : "/tmp");
        for (int r = 0; r < 5; r++) {
            struct pipit_device *dev = NULL;
            struct pipit_agent *a =
                new_agent(o, model, tools, formats[f], PIPIT_MEMORY_CSO, 8192, false, &dev);
            if (a == NULL) {
                return CLI_EXIT_FAIL;
            }
            for (int k = 0; k < 5; k++) {
                struct pipit_turn *t = NULL;
                if (pipit_agent_turn(a, UTTERANCES[k], &t) != PIPIT_OK) {
                    break;
                }
                if (k == 0) {
                    cold[n_cold++] = t->ttft_ms;
                } else if (n_warm < 20) {
                    warm[n_warm++] = t->ttft_ms;
                }
                pipit_turn_free(t);
            }
            /* restored: a new agent loads the saved session (KV state included) and answers */
            struct pipit_error err;
            bool saved = pipit_agent_save(a, session, &err) == PIPIT_OK;
            free_agent(a, dev);
            dev = NULL;
            a = saved ? new_agent(o, model, tools, formats[f], PIPIT_MEMORY_CSO, 8192, false, &dev)
                      : NULL;
            struct pipit_session_info info;
            if (a != NULL && pipit_agent_load(a, session, &info, &err) == PIPIT_OK &&
                info.kv_restored) {
                struct pipit_turn *t = NULL;
                if (pipit_agent_turn(a, UTTERANCES[5], &t) == PIPIT_OK) {
                    restored[n_restored++] = t->ttft_ms;
                    pipit_turn_free(t);
                }
            }
            free_agent(a, dev);
        }
        remove(session);
        printf("| %s | %.1f | %.1f | %.1f |\n", names[f], pct(cold, n_cold, 0.5),
               pct(warm, n_warm, 0.5), pct(restored, n_restored, 0.5));
    }
    printf("\nrestored session: a new agent loads a saved session (memory, device state, KV "
           "state) and answers its next utterance; the permanent prefix is not prefilled "
           "again.\n\n");
    return CLI_EXIT_OK;
}

/* ============================================================================ turn */

/* Where a command's time goes, per tools format: the model's own work (prefill of the tail and
 * memory, generated tokens), choosing tokens (logits, grammar, sampler) and the rest: router,
 * prompt, parsing, validation, the device, memory and the sentence. Every answer is a call
 * (the grammar is not lazy), so a random model's turn is a command's too. */
static int bench_turn(const struct bench_opts *o,
                      struct pipit_model *model,
                      const struct pipit_toolset *tools) {
    printf("## Where a command's time goes (%zu camera commands after a first turn, every answer "
           "a call)\n\n",
           N_UTTERANCES);
    printf("| tools format | turn ms p50 | model ms p50 | sampling ms p50 | of which grammar | "
           "other ms p50 | prefilled / decoded tokens per turn | model share | sampling / "
           "model | harness overhead share |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
           "\n");
    static const int32_t formats[] = {PIPIT_TOOLSPEC_OPENAPI, PIPIT_TOOLSPEC_COMPACT,
                                      PIPIT_TOOLSPEC_JIT};
    static const char *const names[] = {"openapi", "compact", "jit"};
    for (size_t f = 0; f < 3; f++) {
        struct pipit_device *dev = NULL;
        struct pipit_agent *a =
            new_agent(o, model, tools, formats[f], PIPIT_MEMORY_CSO, 8192, true, &dev);
        if (a == NULL) {
            return CLI_EXIT_FAIL;
        }
        double lat[N_UTTERANCES], mod[N_UTTERANCES], smp[N_UTTERANCES], con[N_UTTERANCES],
            oth[N_UTTERANCES];
        double sum_lat = 0, sum_mod = 0, sum_smp = 0;
        int64_t prefilled = 0, decoded = 0;
        size_t n = 0;
        bool ok = true;
        for (size_t i = 0; i <= N_UTTERANCES && ok; i++) {
            /* turn 0 prefills the permanent prefix: the cold turn, measured by `ttft` */
            struct pipit_turn *t = NULL;
            if (pipit_agent_turn(a, i == 0 ? "take a photo" : UTTERANCES[i - 1], &t) != PIPIT_OK) {
                fprintf(stderr, "pipit bench: %s\n", pipit_agent_errmsg(a));
                ok = false;
                break;
            }
            if (i > 0) {
                lat[n] = t->latency_ms;
                mod[n] = t->model_ms;
                smp[n] = t->sample_ms;
                con[n] = t->constraint_ms;
                oth[n] = t->latency_ms - t->model_ms - t->sample_ms;
                sum_lat += t->latency_ms;
                sum_mod += t->model_ms;
                sum_smp += t->sample_ms;
                prefilled += t->prefill_tokens;
                decoded += t->decode_tokens;
                n++;
            }
            pipit_turn_free(t);
        }
        free_agent(a, dev);
        if (!ok) {
            return CLI_EXIT_FAIL;
        }
        printf("| %s | %.1f | %.1f | %.2f | %.2f | %.2f | %.1f / %.1f | %.1f%% | %.1f%% | %.1f%% "
               "|\n",
               names[f], pct(lat, n, 0.5), pct(mod, n, 0.5), pct(smp, n, 0.5), pct(con, n, 0.5),
               pct(oth, n, 0.5), (double)prefilled / (double)n, (double)decoded / (double)n,
               100.0 * sum_mod / sum_lat, 100.0 * sum_smp / sum_mod,
               100.0 * (sum_lat - sum_mod) / sum_lat);
    }
    printf("\nmodel = llama.cpp's decode of the ephemeral tail, the memory delta and the generated "
           "tokens; sampling = reading the logits, the grammar constraint and the sampler; other = "
           "router, prompt, parsing, validation, device, memory and sentence. Harness overhead = "
           "everything but the model, over all turns (sums, not medians).\n\n");
    return CLI_EXIT_OK;
}

/* ============================================================================ context */

static int bench_context(const struct bench_opts *o,
                         struct pipit_model *model,
                         const char *model_path,
                         const struct pipit_toolset *tools) {
    printf("## Initial context tokens per tool serialization\n\n");
    printf("| tool set | tokenizer | openapi | minified | compact | jit |\n"
           "|---|---|---:|---:|---:|---:|\n");
    static const char *const sets[] = {"camera", "phone"};
    const char *vocabs[] = {"llama-spm", "qwen2", model_path};
    for (size_t v = 0; v < 3; v++) {
        struct pipit_model *vm = NULL;
        char vbuf[4096];
        struct pipit_error err;
        struct pipit_model_params mp = pipit_model_default_params();
        mp.vocab_only = true;
        const char *vpath = v < 2 ? cli_vocab_path(vocabs[v], vbuf, sizeof(vbuf)) : vocabs[v];
        if (pipit_model_load(vpath, &mp, &vm, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit bench: %s\n", err.text);
            continue;
        }
        struct pipit_model_info info;
        pipit_model_get_info(vm, &info);
        for (size_t s = 0; s < 2; s++) {
            char tpath[4096];
            snprintf(tpath, sizeof(tpath), "%s/%s.json", PIPIT_TOOLS_DIR, sets[s]);
            struct pipit_toolset *ts = NULL;
            struct pipit_token_counts total;
            if (pipit_toolset_load_file(tpath, &ts, &err) == PIPIT_OK &&
                pipit_toolset_count_tokens(ts, vm, NULL, &total) == PIPIT_OK) {
                printf("| %s (%zu tools) | %s (%d) | %d | %d | %d | %d |\n", sets[s],
                       pipit_toolset_n_tools(ts), v < 2 ? vocabs[v] : "model", info.n_vocab,
                       total.by_format[PIPIT_TOOLSPEC_OPENAPI],
                       total.by_format[PIPIT_TOOLSPEC_MINIFIED],
                       total.by_format[PIPIT_TOOLSPEC_COMPACT],
                       total.by_format[PIPIT_TOOLSPEC_JIT]);
            }
            pipit_toolset_free(ts);
        }
        pipit_model_free(vm);
    }
    printf("\n## Context tokens after N turns per memory mode (camera, compact tools, model "
           "above)\n\n");
    printf("context = permanent prefix + longest ephemeral tail of the turn.\n\n");
    printf("| memory | turn 1 | after 5 | after 10 | after 25 | growth 1->25 | prefilled "
           "tokens / turn |\n|---|---:|---:|---:|---:|---:|---:|\n");
    static const int32_t modes[] = {PIPIT_MEMORY_NONE, PIPIT_MEMORY_FULL, PIPIT_MEMORY_CSO};
    static const char *const mode_names[] = {"none", "full", "cso"};
    for (size_t m = 0; m < 3; m++) {
        struct pipit_device *dev = NULL;
        struct pipit_agent *a =
            new_agent(o, model, tools, PIPIT_TOOLSPEC_COMPACT, modes[m], 8192, false, &dev);
        if (a == NULL) {
            return CLI_EXIT_FAIL;
        }
        int32_t at[26] = {0};
        int64_t prefill = 0;
        size_t done = 0;
        for (size_t i = 0; i < 25; i++) {
            struct pipit_turn *t = NULL;
            if (pipit_agent_turn(a, UTTERANCES[i % N_UTTERANCES], &t) != PIPIT_OK) {
                fprintf(stderr, "pipit bench: %s\n", pipit_agent_errmsg(a));
                break;
            }
            at[i + 1] = t->n_permanent + t->n_ephemeral_max;
            prefill += i > 0 ? t->prefill_tokens : 0;
            done = i + 1;
            pipit_turn_free(t);
        }
        if (done == 25) {
            printf("| %s | %d | %d | %d | %d | %+d | %.1f |\n", mode_names[m], at[1], at[5], at[10],
                   at[25], at[25] - at[1], (double)prefill / 24.0);
        }
        free_agent(a, dev);
    }
    printf("\n");
    return CLI_EXIT_OK;
}

/* ============================================================================ command */

int cmd_bench(int argc, char **argv) {
    struct bench_opts o;
    memset(&o, 0, sizeof(o));
    o.threads = 1;
    o.reps = 20;
    const char *tmp = getenv("TMPDIR");
    o.workdir = tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp";
    bool bad = false, any = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &o.model, &bad) ||
            cli_opt_str(argc, argv, &i, "--workdir", &o.workdir, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 1, 512, &o.threads, &bad) ||
            cli_opt_int(argc, argv, &i, "--reps", 1, 1000, &o.reps, &bad)) {
            continue;
        }
        bool found = false;
        for (size_t s = 0; s < N_SECTIONS; s++) {
            if (strcmp(argv[i], SECTION_NAMES[s]) == 0) {
                o.sections[s] = true;
                found = any = true;
            }
        }
        if (!found) {
            fprintf(stderr, "pipit bench: unknown option or section '%s'\n", argv[i]);
            bad = true;
        }
    }
    if (bad) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    for (size_t s = 0; s < N_SECTIONS && !any; s++) {
        o.sections[s] = true;
    }
    struct pipit_error err;
    struct pipit_toolset *tools = NULL;
    char tpath[4096];
    snprintf(tpath, sizeof(tpath), "%s/camera.json", PIPIT_TOOLS_DIR);
    if (pipit_toolset_load_file(tpath, &tools, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    printf("# pipit bench\n\nthreads: %ld, cores usable: %d\n\n", o.threads, pipit_cpu_count());
    int rc = CLI_EXIT_OK;
    if (o.sections[SEC_GRAMMAR]) {
        rc = bench_grammar(&o, tools);
    }
    char mpath[4096];
    struct pipit_model *model = NULL;
    bool need_model = o.sections[SEC_TOOLCALL] || o.sections[SEC_TTFT] || o.sections[SEC_TURN] ||
                      o.sections[SEC_CONTEXT];
    if (rc == CLI_EXIT_OK && need_model) {
        if (o.model != NULL) {
            snprintf(mpath, sizeof(mpath), "%s", o.model);
        } else if (file_exists(PIPIT_DEFAULT_MODEL)) {
            snprintf(mpath, sizeof(mpath), "%s", PIPIT_DEFAULT_MODEL);
        } else if (!test_model(&o, "llama-spm", mpath, sizeof(mpath))) {
            rc = CLI_EXIT_FAIL;
        }
        if (rc == CLI_EXIT_OK && pipit_model_load(mpath, NULL, &model, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit bench: %s\n", err.text);
            rc = CLI_EXIT_FAIL;
        }
        if (model != NULL) {
            struct pipit_model_info info;
            pipit_model_get_info(model, &info);
            char facts[128];
            printf("agent model: %s (%s, %d vocab)%s\n\n", cli_base_name(mpath),
                   cli_model_facts(model, facts, sizeof(facts)), info.n_vocab,
                   o.model == NULL && !file_exists(PIPIT_DEFAULT_MODEL)
                       ? " - a random test model: the bundled model is missing"
                       : "");
        }
    }
    if (rc == CLI_EXIT_OK && o.sections[SEC_TOOLCALL]) {
        rc = bench_toolcall(&o, model, tools);
    }
    if (rc == CLI_EXIT_OK && o.sections[SEC_TTFT]) {
        rc = bench_ttft(&o, model, tools);
    }
    if (rc == CLI_EXIT_OK && o.sections[SEC_TURN]) {
        rc = bench_turn(&o, model, tools);
    }
    if (rc == CLI_EXIT_OK && o.sections[SEC_CONTEXT]) {
        rc = bench_context(&o, model, mpath, tools);
    }
    if (o.sections[SEC_MEMORY]) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0) {
            printf("## Peak memory\n\npeak resident set size (ru_maxrss) of this bench process: "
                   "%.1f MiB\n\n",
                   (double)ru.ru_maxrss / 1024.0);
        }
    }
    pipit_model_free(model);
    pipit_toolset_free(tools);
    return rc;
}
