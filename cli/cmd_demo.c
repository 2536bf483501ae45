/*
 * cmd_demo.c - `pipit demo`: the engine's permanent/ephemeral KV regions at
 * work.
 *
 * The system text is prefilled once into the permanent prefix; each turn
 * prefills only its utterance into the ephemeral tail, generates a few tokens,
 * and rewinds. The counters printed per turn show that the permanent prefix is
 * never prefilled again.
 */
#include "cli.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out, "usage: pipit demo --model FILE [--threads N] [--tokens N]\n");
}

/* Print generated text on one line, with control characters shown as spaces. */
static void print_text(const char *s) {
    for (; *s != '\0'; s++) {
        putchar(iscntrl((unsigned char)*s) ? ' ' : *s);
    }
}

int cmd_demo(int argc, char **argv) {
    const char *model_path = NULL;
    long threads = 0, n_tokens = 12;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &model_path, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 0, 512, &threads, &bad) ||
            cli_opt_int(argc, argv, &i, "--tokens", 1, 512, &n_tokens, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit demo: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (bad || model_path == NULL) {
        if (!bad) {
            fprintf(stderr, "pipit demo: --model is required\n");
        }
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    struct pipit_error err;
    struct pipit_model *model = NULL;
    if (pipit_model_load(model_path, NULL, &model, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit demo: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_threads = (int32_t)threads;
    struct pipit_context *ctx = NULL;
    struct pipit_sampler *smpl = NULL;
    int rc = CLI_EXIT_FAIL;
    if (pipit_context_init(model, &cp, &ctx, &err) != PIPIT_OK ||
        pipit_sampler_init(model, NULL, &smpl, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit demo: %s\n", err.text);
        goto done;
    }
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    printf("model: %s (%s, %d-token vocabulary)\n", model_path, info.desc, info.n_vocab);

    const char *system = "You control a phone camera. Tools: take_photo, set_zoom(level), "
                         "set_flash(mode), set_timer(seconds). Answer with one tool call.";
    int32_t *toks = NULL, n = 0;
    if (pipit_tokenize_alloc(model, system, true, false, &toks, &n) != PIPIT_OK ||
        pipit_context_append(ctx, PIPIT_REGION_PERMANENT, toks, n) != PIPIT_OK) {
        fprintf(stderr, "pipit demo: cannot prefill the system text: %s\n",
                pipit_context_errmsg(ctx));
        pipit_free(toks);
        goto done;
    }
    pipit_free(toks);
    printf("permanent prefix: %d tokens, prefilled once\n\n", pipit_context_n_permanent(ctx));
    printf("(a random test model: the generated text is noise; the token counts "
           "are the point)\n");

    const char *turns[] = {"zoom in to 2x", "turn on the flash", "take a photo"};
    for (size_t t = 0; t < sizeof(turns) / sizeof(turns[0]); t++) {
        char line[256];
        snprintf(line, sizeof(line), "\nUser: %s\nAssistant:", turns[t]);
        pipit_context_reset_perf(ctx);
        if (pipit_tokenize_alloc(model, line, false, false, &toks, &n) != PIPIT_OK ||
            pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, toks, n) != PIPIT_OK) {
            fprintf(stderr, "pipit demo: %s\n", pipit_context_errmsg(ctx));
            pipit_free(toks);
            goto done;
        }
        pipit_free(toks);
        int32_t out[512];
        int32_t n_out = 0;
        struct pipit_generate_params gp = pipit_generate_default_params();
        gp.max_tokens = (int32_t)n_tokens;
        pipit_sampler_reset(smpl);
        if (pipit_generate(ctx, smpl, &gp, out, &n_out) != PIPIT_OK) {
            fprintf(stderr, "pipit demo: %s\n", pipit_context_errmsg(ctx));
            goto done;
        }
        char *text = pipit_detokenize(model, out, n_out, false);
        struct pipit_perf perf;
        pipit_context_get_perf(ctx, &perf);
        printf("turn %zu  user: %s\n        model: ", t + 1, turns[t]);
        print_text(text != NULL ? text : "");
        printf("\n        permanent %d (re-prefilled 0), prefilled %lld, decoded "
               "%lld, "
               "%.1f ms\n",
               pipit_context_n_permanent(ctx), (long long)perf.n_prefill_tokens,
               (long long)perf.n_decode_tokens,
               perf.t_prefill_ms + perf.t_decode_ms + perf.t_sample_ms);
        pipit_free(text);
        pipit_context_rewind(ctx);
    }
    rc = CLI_EXIT_OK;
done:
    pipit_sampler_free(smpl);
    pipit_context_free(ctx);
    pipit_model_free(model);
    return rc;
}
