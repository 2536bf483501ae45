/*
 * cmd_bench_packs.c - `pipit bench-packs`: several packs served at once, either by one model
 * each or by one base with an Executor adapter each (issue 22's ablation, docs/training.md,
 * "Adapters"). Prints a table: bytes on disk, resident memory, load time, turn latency.
 *
 *   pipit bench-packs --pack tools/phone.json phone.gguf --pack tools/home.json home.gguf
 *   pipit bench-packs --base base.gguf --pack tools/phone.json phone.lora.gguf ...
 *
 * Every pack gets its own agent (its own context and KV cache); turns go round the packs, so
 * each turn runs on another context (and, with a base, another adapter) than the last.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_PACKS 8

static const char *const UTTERANCES[] = {
    "what can you do?", "thanks", "turn it on", "undo that", "set it to 5", "try again",
};
#define N_UTT  (sizeof(UTTERANCES) / sizeof(UTTERANCES[0]))
#define ROUNDS 4

/* Resident set size of this process now, MiB (/proc/self/statm). */
static double rss_mib(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f == NULL) {
        return NAN;
    }
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0 : NAN;
}

static double file_mb(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0.0;
}

static void usage(FILE *out) {
    fprintf(out, "usage: pipit bench-packs [--base MODEL] --pack TOOLS FILE [--pack TOOLS FILE]... "
                 "[--threads N] [--ctx N]\n"
                 "  --pack TOOLS FILE  a pack and its model (without --base) or its adapter\n"
                 "                     (with --base), up to 8\n"
                 "  --base MODEL       the one model every adapter is applied to\n"
                 "  --threads N        CPU threads per agent (default 1)\n"
                 "  --ctx N            context window per agent (default: the agent's)\n");
}

int cmd_bench_packs(int argc, char **argv) {
    const char *base = NULL, *tools[MAX_PACKS], *files[MAX_PACKS];
    int n = 0;
    long threads = 1, n_ctx = pipit_agent_default_params().n_ctx;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--pack") == 0) {
            if (i + 2 >= argc || n == MAX_PACKS) {
                fprintf(stderr, "pipit bench-packs: --pack takes TOOLS FILE (at most %d)\n",
                        MAX_PACKS);
                bad = true;
                break;
            }
            tools[n] = argv[i + 1];
            files[n++] = argv[i + 2];
            i += 2;
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--base", &base, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 1, 512, &threads, &bad) ||
            cli_opt_int(argc, argv, &i, "--ctx", 64, 1 << 20, &n_ctx, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit bench-packs: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (!bad && n == 0) {
        fprintf(stderr, "pipit bench-packs: at least one --pack\n");
        bad = true;
    }
    if (bad) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    struct pipit_error err;
    struct pipit_model *models[MAX_PACKS] = {0};
    struct pipit_toolset *ts[MAX_PACKS] = {0};
    struct pipit_device *dev[MAX_PACKS] = {0};
    struct pipit_agent *agents[MAX_PACKS] = {0};
    double lat[MAX_PACKS * N_UTT * ROUNDS];
    size_t n_lat = 0;
    int rc = CLI_EXIT_OK;
    /* the ggml backends are loaded once per process whichever the setup: not the packs' */
    pipit_backend_init(NULL);
    double rss0 = rss_mib(), t0 = cli_now_ms(), disk = base != NULL ? file_mb(base) : 0.0;
    for (int k = 0; k < n && rc == CLI_EXIT_OK; k++) {
        disk += file_mb(files[k]);
        const char *model_path = base != NULL ? base : files[k];
        if (k == 0 || base == NULL) {
            if (pipit_model_load(model_path, NULL, &models[k], &err) != PIPIT_OK) {
                rc = CLI_EXIT_FAIL;
                break;
            }
        }
        struct pipit_model *m = base != NULL ? models[0] : models[k];
        if (pipit_toolset_load_file(tools[k], &ts[k], &err) != PIPIT_OK ||
            pipit_device_init(NULL, ts[k], NULL, &dev[k], &err) != PIPIT_OK) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        struct pipit_agent_params ap = pipit_agent_default_params();
        ap.device = dev[k];
        ap.n_threads = (int32_t)threads;
        ap.n_ctx = (uint32_t)n_ctx;
        ap.adapter = base != NULL ? files[k] : NULL;
        if (pipit_agent_init(m, ts[k], &ap, &agents[k], &err) != PIPIT_OK) {
            rc = CLI_EXIT_FAIL;
        }
    }
    double t_load = cli_now_ms() - t0;
    for (size_t r = 0; r < ROUNDS && rc == CLI_EXIT_OK; r++) {
        for (size_t u = 0; u < N_UTT && rc == CLI_EXIT_OK; u++) {
            for (int k = 0; k < n; k++) { /* round the packs: another context every turn */
                struct pipit_turn *t = NULL;
                double t1 = cli_now_ms();
                if (pipit_agent_turn(agents[k], UTTERANCES[u], &t) != PIPIT_OK) {
                    snprintf(err.text, sizeof(err.text), "%s", pipit_agent_errmsg(agents[k]));
                    rc = CLI_EXIT_FAIL;
                    break;
                }
                lat[n_lat++] = cli_now_ms() - t1;
                pipit_turn_free(t);
            }
        }
    }
    double rss = rss_mib() - rss0;
    if (rc == CLI_EXIT_OK) {
        qsort(lat, n_lat, sizeof(double), cli_cmp_double);
        printf("| setup | packs | on disk MB | resident MiB | load + agents ms | turns | turn ms "
               "p50 | turn ms p95 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
        printf("| %s | %d | %.2f | %.1f | %.0f | %zu | %.1f | %.1f |\n",
               base != NULL ? "one base + an adapter each" : "a model each", n, disk, rss, t_load,
               n_lat, lat[n_lat / 2], lat[(n_lat * 95) / 100 < n_lat ? (n_lat * 95) / 100 : 0]);
    } else {
        fprintf(stderr, "pipit bench-packs: %s\n", err.text);
    }
    for (int k = 0; k < n; k++) { /* the agents (and their adapters) before the models */
        pipit_agent_free(agents[k]);
        pipit_device_free(dev[k]);
        pipit_toolset_free(ts[k]);
    }
    for (int k = 0; k < n; k++) {
        pipit_model_free(models[k]);
    }
    return rc;
}
