/*
 * cmd_bench.c - `pipit bench-engine`: prefill and decode throughput of a model
 * on this machine. A benchmark that prints a table, never a pass/fail test:
 * machines here are shared and noisy.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out, "usage: pipit bench-engine --model FILE [--threads N] [--prompt N] "
                 "[--gen N] "
                 "[--reps N]\n"
                 "  --threads N   CPU threads (default: all cores this process may use)\n"
                 "  --prompt N    prefill length in tokens (default 256)\n"
                 "  --gen N       tokens decoded one by one (default 64)\n"
                 "  --reps N      repetitions; the median is reported (default 3)\n");
}

int cmd_bench_engine(int argc, char **argv) {
    const char *model_path = NULL;
    long threads = 0, n_prompt = 256, n_gen = 64, reps = 3;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &model_path, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 0, 512, &threads, &bad) ||
            cli_opt_int(argc, argv, &i, "--prompt", 1, 8192, &n_prompt, &bad) ||
            cli_opt_int(argc, argv, &i, "--gen", 1, 4096, &n_gen, &bad) ||
            cli_opt_int(argc, argv, &i, "--reps", 1, 100, &reps, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit bench-engine: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (bad || model_path == NULL) {
        if (!bad) {
            fprintf(stderr, "pipit bench-engine: --model is required\n");
        }
        usage(stderr);
        return CLI_EXIT_USAGE;
    }

    struct pipit_error err;
    struct pipit_model *model = NULL;
    if (pipit_model_load(model_path, NULL, &model, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench-engine: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = (uint32_t)(n_prompt + n_gen + 16);
    cp.n_threads = (int32_t)threads;
    struct pipit_context *ctx = NULL;
    if (pipit_context_init(model, &cp, &ctx, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit bench-engine: %s\n", err.text);
        pipit_model_free(model);
        return CLI_EXIT_FAIL;
    }
    struct pipit_sampler *smpl = NULL;
    pipit_sampler_init(model, NULL, &smpl, &err);

    /* A prompt of exactly n_prompt tokens: a sentence tokenized and repeated. */
    int32_t *prompt = malloc(sizeof(int32_t) * (size_t)n_prompt);
    int32_t *sentence = NULL, n_sentence = 0;
    int rc = CLI_EXIT_OK;
    if (prompt == NULL ||
        pipit_tokenize_alloc(model, "Set the zoom to two times and turn the flash on, please. ",
                             false, false, &sentence, &n_sentence) != PIPIT_OK ||
        n_sentence == 0) {
        fprintf(stderr, "pipit bench-engine: cannot build the prompt\n");
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    for (long i = 0; i < n_prompt; i++) {
        prompt[i] = sentence[i % n_sentence];
    }

    double *pre = calloc((size_t)reps, sizeof(double));
    double *dec = calloc((size_t)reps, sizeof(double));
    for (long r = 0; r < reps && pre != NULL && dec != NULL; r++) {
        pipit_context_clear(ctx);
        pipit_context_reset_perf(ctx);
        if (pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, prompt, (int32_t)n_prompt) !=
            PIPIT_OK) {
            fprintf(stderr, "pipit bench-engine: %s\n", pipit_context_errmsg(ctx));
            rc = CLI_EXIT_FAIL;
            break;
        }
        struct pipit_generate_params gp = pipit_generate_default_params();
        gp.max_tokens = (int32_t)n_gen;
        gp.stop_at_eog = false;
        int32_t n_out = 0;
        pipit_sampler_reset(smpl);
        if (pipit_generate(ctx, smpl, &gp, NULL, &n_out) != PIPIT_OK) {
            fprintf(stderr, "pipit bench-engine: %s\n", pipit_context_errmsg(ctx));
            rc = CLI_EXIT_FAIL;
            break;
        }
        struct pipit_perf perf;
        pipit_context_get_perf(ctx, &perf);
        pre[r] = (double)perf.n_prefill_tokens / (perf.t_prefill_ms / 1e3);
        dec[r] = (double)perf.n_decode_tokens / ((perf.t_decode_ms + perf.t_sample_ms) / 1e3);
    }
    if (rc == CLI_EXIT_OK && pre != NULL && dec != NULL) {
        qsort(pre, (size_t)reps, sizeof(double), cli_cmp_double);
        qsort(dec, (size_t)reps, sizeof(double), cli_cmp_double);
        struct pipit_model_info info;
        pipit_model_get_info(model, &info);
        char facts[128];
        printf("model: %s (%s, %d vocab), threads: %d\n\n", cli_base_name(model_path),
               cli_model_facts(model, facts, sizeof(facts)), info.n_vocab,
               threads > 0 ? (int)threads : pipit_cpu_count());
        printf("| metric | median | min | max |\n|---|---:|---:|---:|\n");
        printf("| prefill tokens/s (%ld-token prompt) | %.1f | %.1f | %.1f |\n", n_prompt,
               pre[reps / 2], pre[0], pre[reps - 1]);
        printf("| decode tokens/s (greedy, incl. sampling) | %.1f | %.1f | %.1f |\n", dec[reps / 2],
               dec[0], dec[reps - 1]);
    }
    free(pre);
    free(dec);
done:
    free(prompt);
    pipit_free(sentence);
    pipit_sampler_free(smpl);
    pipit_context_free(ctx);
    pipit_model_free(model);
    return rc;
}
