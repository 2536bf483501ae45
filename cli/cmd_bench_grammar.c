/*
 * cmd_bench_grammar.c - `pipit bench-grammar`: the cost of grammar-locked calls, llama.cpp's
 * GBNF sampler against pipit's own decoder (docs/fastgrammar.md). Prints a table; never a
 * pass/fail test (the machines are shared and noisy).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *out) {
    fprintf(out, "usage: pipit bench-grammar --model FILE [--tools FILE] [--syntax pipit|hermes]\n"
                 "                           [--calls N] [--strings N] [--threads N]\n"
                 "  --tools FILE    tool pack (default tools/camera.json)\n"
                 "  --syntax S      call syntax (default pipit)\n"
                 "  --calls N       constrained decodes per mode, seeds 1..N, temperature 1 "
                 "(default 20)\n"
                 "  --strings N     max string characters in the grammar (default 12)\n"
                 "  --threads N     CPU threads (default 1)\n"
                 "Modes: gbnf (llama.cpp's grammar sampler), fast (pipit's decoder), fast+jump\n"
                 "(with jump-forward). Columns: constraint us/token p50/p99 (time in the grammar\n"
                 "alone), sample us/token p50/p99 (the whole sampling step), forced share of the\n"
                 "call's tokens, jump us/call (finding and accepting the forced tokens, per\n"
                 "call), llama_decode calls per call, ms per call (decode + sample).\n"
                 "Then the compile time of objects with 14, 40 and 100 optional members.\n"
                 "Then a second start: a new decoder that loads the vocabulary index and the\n"
                 "automata from the on-disk cache ($PIPIT_CACHE/masks) the first one wrote, and\n"
                 "fast+jump on seeds N+1..2N.\n");
}

static double pct(double *v, size_t n, double p) {
    if (n == 0) {
        return 0.0;
    }
    qsort(v, n, sizeof(double), cli_cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

enum {
    MAX_TOKENS = 256,
    MAX_SAMPLES = 1 << 16
};

struct mode_result {
    double con_p50, con_p99, smp_p50, smp_p99;
    double forced_share, decode_calls, ms_per_call;
    double jump_us_per_call; /* time finding and accepting forced tokens (constraint only) */
    int calls, valid;
};

static int run_mode(struct pipit_model *m,
                    struct pipit_context *ctx,
                    const int32_t *last,
                    const char *grammar,
                    struct pipit_fastgrammar *fg,
                    bool jump,
                    enum pipit_call_syntax syn,
                    long seed0,
                    long calls,
                    struct mode_result *res) {
    double *con = malloc(sizeof(double) * MAX_SAMPLES);
    double *smp = malloc(sizeof(double) * MAX_SAMPLES);
    if (con == NULL || smp == NULL) {
        free(con);
        free(smp);
        return -1;
    }
    size_t ns = 0;
    int64_t tokens = 0, forced = 0, dcalls = 0;
    double total_ms = 0.0, jump_ms = 0.0;
    memset(res, 0, sizeof(*res));
    for (long seed = seed0; seed < seed0 + calls; seed++) {
        struct pipit_sampler_params sp = pipit_sampler_default_params();
        sp.grammar = grammar;
        sp.fast_grammar = fg;
        sp.temperature = 1.0f;
        sp.top_k = 0;
        sp.top_p = 1.0f;
        sp.seed = (uint32_t)seed;
        struct pipit_sampler *s = NULL;
        struct pipit_error err;
        if (pipit_sampler_init(m, &sp, &s, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit: %s\n", err.text);
            free(con);
            free(smp);
            return -1;
        }
        pipit_context_rewind(ctx);
        pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, last, 1);
        pipit_context_reset_perf(ctx);
        char text[MAX_TOKENS * 64 + 1];
        size_t len = 0;
        int32_t n = 0;
        double t0 = cli_now_ms();
        while (n < MAX_TOKENS) {
            if (jump) {
                int32_t ft[64];
                struct pipit_perf jb, ja;
                pipit_context_get_perf(ctx, &jb);
                int32_t nf = pipit_sampler_forced(s, ctx, ft, 64);
                pipit_context_get_perf(ctx, &ja);
                jump_ms += ja.t_constraint_ms - jb.t_constraint_ms;
                if (nf > 0) {
                    pipit_context_decode_forced(ctx, ft, nf);
                    for (int32_t i = 0; i < nf; i++) {
                        len += (size_t)pipit_token_piece(m, ft[i], text + len, 63);
                    }
                    n += nf;
                    continue;
                }
            }
            struct pipit_perf before, after;
            pipit_context_get_perf(ctx, &before);
            int32_t tok = pipit_sampler_sample(s, ctx);
            pipit_context_get_perf(ctx, &after);
            if (ns < MAX_SAMPLES) {
                con[ns] = 1000.0 * (after.t_constraint_ms - before.t_constraint_ms);
                smp[ns] = 1000.0 * (after.t_sample_ms - before.t_sample_ms);
                ns++;
            }
            if (tok < 0 || pipit_model_token_is_eog(m, tok)) {
                break;
            }
            len += (size_t)pipit_token_piece(m, tok, text + len, 63);
            n++;
            pipit_context_decode_token(ctx, tok);
        }
        total_ms += cli_now_ms() - t0;
        text[len] = '\0';
        struct pipit_perf pf;
        pipit_context_get_perf(ctx, &pf);
        tokens += n;
        forced += pf.n_forced_tokens;
        dcalls += pf.n_decode_calls;
        struct pipit_call c;
        if (pipit_call_parse(syn, text, &c, NULL) == PIPIT_OK) {
            res->valid++;
        }
        pipit_call_clear(&c);
        res->calls++;
        pipit_sampler_free(s);
    }
    res->con_p50 = pct(con, ns, 0.5);
    res->con_p99 = pct(con, ns, 0.99);
    res->smp_p50 = pct(smp, ns, 0.5);
    res->smp_p99 = pct(smp, ns, 0.99);
    res->forced_share = tokens > 0 ? (double)forced / (double)tokens : 0.0;
    res->jump_us_per_call = 1000.0 * jump_ms / (double)calls;
    res->decode_calls = (double)dcalls / (double)calls;
    res->ms_per_call = total_ms / (double)calls;
    free(con);
    free(smp);
    return 0;
}

char *cli_wide_tools(const char *type, int n) {
    size_t cap = 256 + (size_t)n * 48;
    char *t = malloc(cap);
    if (t == NULL) {
        return NULL;
    }
    size_t len = (size_t)snprintf(t, cap,
                                  "[{\"type\": \"function\", \"function\": {\"name\": \"wide\", "
                                  "\"description\": \"many optional members\", \"parameters\": "
                                  "{\"type\": \"object\", \"properties\": {");
    for (int i = 0; i < n; i++) {
        len += (size_t)snprintf(t + len, cap - len, "%s\"p%d\": {\"type\": \"%s\"}",
                                i > 0 ? ", " : "", i, type);
    }
    snprintf(t + len, cap - len, "}}}}]");
    return t;
}

/* Compile time of objects with many optional members (every subset of them is a valid call):
 * the call grammar of one tool with `n` optional strings, numbers or booleans, into the fast
 * decoder `fg`. */
static void bench_optional(struct pipit_fastgrammar *fg, enum pipit_call_syntax syn, long strings) {
    static const char *types[3] = {"string", "number", "boolean"};
    static const int counts[3] = {14, 40, 100};
    printf("\noptional members (one tool, N optional properties, nothing required): fast-path "
           "compile of the call grammar\n\n| type | N | compile ms | automaton states after one "
           "match | fast path |\n|---|---|---|---|---|\n");
    for (int t = 0; t < 3; t++) {
        for (int c = 0; c < 3; c++) {
            char *text = cli_wide_tools(types[t], counts[c]);
            struct pipit_toolset *ts = NULL;
            struct pipit_grammar *g = NULL;
            struct pipit_error err;
            struct pipit_grammar_params gp = pipit_grammar_default_params();
            gp.syntax = syn;
            gp.max_string_chars = (uint32_t)strings;
            if (text == NULL ||
                pipit_toolset_load_string(text, strlen(text), "wide", &ts, &err) != PIPIT_OK ||
                pipit_grammar_compile(ts, &gp, &g, &err) != PIPIT_OK) {
                printf("| %s | %d | - | - | %s |\n", types[t], counts[c],
                       text == NULL ? "out of memory" : err.text);
                free(text);
                pipit_toolset_free(ts);
                continue;
            }
            struct pipit_fastgrammar_info before, after;
            pipit_fastgrammar_get_info(fg, &before);
            double t0 = cli_now_ms();
            enum pipit_status st = pipit_fastgrammar_add(fg, pipit_grammar_call(g), &err);
            double ms = cli_now_ms() - t0;
            bool prefix = false, complete = false;
            if (st == PIPIT_OK) {
                /* the last member alone: every optional member before it skipped */
                char call[160];
                const char *val = t == 0 ? "\"x\"" : t == 1 ? "1.5" : "true";
                if (syn == PIPIT_SYNTAX_HERMES) {
                    snprintf(call, sizeof(call),
                             "<tool_call>\n{\"name\": \"wide\", \"arguments\": {\"p%d\": %s}}"
                             "\n</tool_call>",
                             counts[c] - 1, val);
                } else {
                    snprintf(call, sizeof(call), "<call>wide(p%d=%s)", counts[c] - 1, val);
                }
                pipit_fastgrammar_match(fg, pipit_grammar_call(g), call, &prefix, &complete);
            }
            pipit_fastgrammar_get_info(fg, &after);
            printf("| %s | %d | %.2f | %d | %s |\n", types[t], counts[c], ms,
                   after.dfa_states - before.dfa_states,
                   st != PIPIT_OK ? err.text
                   : complete     ? "yes"
                                  : "yes, but a call was refused");
            fflush(stdout);
            pipit_grammar_free(g);
            pipit_toolset_free(ts);
            free(text);
        }
    }
}

int cmd_bench_grammar(int argc, char **argv) {
    const char *model_path = NULL, *tools = "tools/camera.json", *syntax = "pipit";
    long calls = 20, strings = 12, threads = 1;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &model_path, &bad) ||
            cli_opt_str(argc, argv, &i, "--tools", &tools, &bad) ||
            cli_opt_str(argc, argv, &i, "--syntax", &syntax, &bad) ||
            cli_opt_int(argc, argv, &i, "--calls", 1, 10000, &calls, &bad) ||
            cli_opt_int(argc, argv, &i, "--strings", 1, 4096, &strings, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 1, 512, &threads, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit bench-grammar: unknown option %s\n", argv[i]);
        bad = true;
    }
    enum pipit_call_syntax syn =
        strcmp(syntax, "hermes") == 0 ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT;
    if (bad || model_path == NULL || (strcmp(syntax, "pipit") != 0 && syn != PIPIT_SYNTAX_HERMES)) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    struct pipit_error err;
    struct pipit_model *m = NULL;
    struct pipit_toolset *ts = NULL;
    struct pipit_grammar *g = NULL;
    struct pipit_context *ctx = NULL;
    struct pipit_fastgrammar *fg = NULL, *fg2 = NULL;
    int rc = CLI_EXIT_FAIL;
    if (pipit_model_load(model_path, NULL, &m, &err) != PIPIT_OK ||
        pipit_toolset_load_file(tools, &ts, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit: %s\n", err.text);
        goto done;
    }
    struct pipit_grammar_params gp = pipit_grammar_default_params();
    gp.syntax = syn;
    gp.max_string_chars = (uint32_t)strings;
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = 1024;
    cp.n_threads = (int32_t)threads;
    if (pipit_grammar_compile(ts, &gp, &g, &err) != PIPIT_OK ||
        pipit_context_init(m, &cp, &ctx, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit: %s\n", err.text);
        goto done;
    }
    /* compile: the vocabulary index, then every grammar of the tool set (call, names, args) */
    double t0 = cli_now_ms();
    if (pipit_fastgrammar_init(m, &fg, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit: %s\n", err.text);
        goto done;
    }
    double t_index = cli_now_ms() - t0;
    t0 = cli_now_ms();
    size_t n_tools = pipit_toolset_n_tools(ts);
    bool ok = pipit_fastgrammar_add(fg, pipit_grammar_call(g), &err) == PIPIT_OK &&
              pipit_fastgrammar_add(fg, pipit_grammar_names(g), &err) == PIPIT_OK;
    for (size_t i = 0; ok && i < n_tools; i++) {
        ok = pipit_fastgrammar_add(fg, pipit_grammar_args(g, i), &err) == PIPIT_OK;
    }
    double t_compile = cli_now_ms() - t0;
    if (!ok) {
        fprintf(stderr, "pipit: %s\n", err.text);
        goto done;
    }
    t0 = cli_now_ms();
    ok = pipit_fastgrammar_add(fg, pipit_grammar_call(g), &err) == PIPIT_OK;
    double t_cached = cli_now_ms() - t0;
    struct pipit_fastgrammar_info info;
    pipit_fastgrammar_get_info(fg, &info);
    struct pipit_model_info mi;
    pipit_model_get_info(m, &mi);
    printf("model %s (%d tokens), tools %s (%zu tools), syntax %s, strings <= %ld chars\n",
           model_path, mi.n_vocab, tools, n_tools, syntax, strings);
    printf("vocabulary index: %.1f ms%s, %.1f MB\n", t_index,
           info.index_cached ? " (from the disk cache)" : "", (double)info.index_bytes / 1e6);
    printf("compile %zu grammars: %.2f ms (%d from the disk cache), %.3f ms cached (in process); "
           "%.2f MB\n",
           n_tools + 2, t_compile, info.n_grammars_cached, t_cached,
           (double)info.automaton_bytes / 1e6);

    bench_optional(fg, syn, strings);

    int32_t *prompt = NULL, np = 0;
    if (pipit_tokenize_alloc(m, "Tools: camera controls.\nUser: please do something\nAssistant:",
                             true, false, &prompt, &np) != PIPIT_OK ||
        pipit_context_append(ctx, PIPIT_REGION_PERMANENT, prompt, np - 1) != PIPIT_OK) {
        pipit_free(prompt);
        goto done;
    }
    printf("\n| mode | constraint us/token p50 | p99 | sample us/token p50 | p99 | forced | "
           "jump us/call | decode calls/call | ms/call | valid |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    static const char *names[3] = {"gbnf", "fast", "fast+jump"};
    for (int mode = 0; mode < 3; mode++) {
        struct mode_result r;
        if (run_mode(m, ctx, prompt + np - 1, pipit_grammar_call(g), mode > 0 ? fg : NULL,
                     mode == 2, syn, 1, calls, &r) != 0) {
            pipit_free(prompt);
            goto done;
        }
        printf("| %s | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.1f | %.1f | %.1f | %d/%d |\n",
               names[mode], r.con_p50, r.con_p99, r.smp_p50, r.smp_p99, 100.0 * r.forced_share,
               r.jump_us_per_call, r.decode_calls, r.ms_per_call, r.valid, r.calls);
        fflush(stdout);
    }
    pipit_fastgrammar_get_info(fg, &info);
    printf("\nafter the decodes: %d automaton states, %d with token lists, %.2f MB\n",
           info.dfa_states, info.listed_states, (double)info.automaton_bytes / 1e6);

    /* a second start: what the first one materialized comes from the on-disk cache */
    int32_t n_saved = pipit_fastgrammar_save(fg);
    t0 = cli_now_ms();
    if (pipit_fastgrammar_init(m, &fg2, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit: %s\n", err.text);
        pipit_free(prompt);
        goto done;
    }
    double t_index2 = cli_now_ms() - t0;
    t0 = cli_now_ms();
    ok = pipit_fastgrammar_add(fg2, pipit_grammar_call(g), &err) == PIPIT_OK &&
         pipit_fastgrammar_add(fg2, pipit_grammar_names(g), &err) == PIPIT_OK;
    for (size_t i = 0; ok && i < n_tools; i++) {
        ok = pipit_fastgrammar_add(fg2, pipit_grammar_args(g, i), &err) == PIPIT_OK;
    }
    double t_compile2 = cli_now_ms() - t0;
    struct mode_result r2;
    if (!ok || run_mode(m, ctx, prompt + np - 1, pipit_grammar_call(g), fg2, true, syn, calls + 1,
                        calls, &r2) != 0) {
        fprintf(stderr, "pipit: %s\n", ok ? "second start failed" : err.text);
        pipit_free(prompt);
        goto done;
    }
    pipit_fastgrammar_get_info(fg2, &info);
    printf("\nsecond start (%d automata written by the first): vocabulary index %.1f ms%s, "
           "%zu grammars %.2f ms (%d from the disk cache, %d states)\n\n",
           n_saved, t_index2, info.index_cached ? " (from the disk cache)" : "", n_tools + 2,
           t_compile2, info.n_grammars_cached, info.dfa_states);
    printf("| mode | constraint us/token p50 | p99 | sample us/token p50 | p99 | forced | "
           "jump us/call | decode calls/call | ms/call | valid |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    printf("| fast+jump, second start, seeds %ld-%ld | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.1f | "
           "%.1f | %.1f | %d/%d |\n",
           calls + 1, 2 * calls, r2.con_p50, r2.con_p99, r2.smp_p50, r2.smp_p99,
           100.0 * r2.forced_share, r2.jump_us_per_call, r2.decode_calls, r2.ms_per_call, r2.valid,
           r2.calls);
    pipit_free(prompt);
    rc = CLI_EXIT_OK;
done:
    pipit_fastgrammar_free(fg2);
    pipit_fastgrammar_free(fg);
    pipit_context_free(ctx);
    pipit_grammar_free(g);
    pipit_toolset_free(ts);
    pipit_model_free(m);
    return rc;
}
