/*
 * main.c - `pipit` command dispatch, shared option parsing and logging.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef PIPIT_VOCAB_DIR
#define PIPIT_VOCAB_DIR "third_party/llama.cpp/models"
#endif

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"chat", cmd_chat, "talk to the agent: each line is an utterance"},
    {"run", cmd_run, "run utterances through the agent (arguments or stdin), --json for apps"},
    {"make-model", cmd_make_model, "write a tiny random llama GGUF with a real tokenizer"},
    {"make-lora", cmd_make_lora, "write a tiny random LoRA adapter GGUF for such a model"},
    {"bench-engine", cmd_bench_engine, "print prefill and decode tokens/s for a model"},
    {"eval", cmd_eval, "run scenario sets in the ablation configurations: F1, tokens, latency"},
    {"bench", cmd_bench, "benchmark tables: grammar cost, TTFT, context per format and memory"},
    {"bench-grammar", cmd_bench_grammar, "cost of grammar-locked calls: GBNF vs pipit's decoder"},
    {"bench-packs", cmd_bench_packs, "several packs at once: a model each or one base + adapters"},
    {"demo", cmd_demo, "engine demo: permanent prefix kept in KV, ephemeral turns rewound"},
    {"tools", cmd_tools, "check, show and count the tokens of a tool specification"},
    {"train", cmd_train, "generate data, build a vocabulary, train and export pipit's own model"},
};

static void usage(FILE *out) {
    fprintf(out, "usage: pipit <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        fprintf(out, "  %-14s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(out, "  %-14s %s\n", "version", "print the version");
    fprintf(out, "\n`pipit <command> --help` describes each command. Exit codes: "
                 "0 ok, 1 failed, "
                 "2 usage.\n");
}

int main(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        printf("pipit %s\n", PIPIT_VERSION);
        return CLI_EXIT_OK;
    }
    cli_log_to_stderr(getenv("PIPIT_VERBOSE") != NULL ? PIPIT_LOG_DEBUG : PIPIT_LOG_ERROR);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            return commands[i].fn(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "pipit: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}

/* ============================================================================
 * options */

const char *cli_base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

const char *cli_model_facts(const struct pipit_model *model, char *buf, size_t size) {
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    snprintf(buf, size, "%s, %.2fM parameters, %.1f MB of tensors", info.arch,
             (double)info.n_params / 1e6, (double)info.size_bytes / 1e6);
    return buf;
}

double cli_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cli_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool cli_opt_str(int argc, char **argv, int *i, const char *name, const char **out, bool *bad) {
    if (strcmp(argv[*i], name) != 0) {
        return false;
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "pipit: option %s needs a value\n", name);
        *bad = true;
        return true;
    }
    *out = argv[++*i];
    return true;
}

bool cli_opt_int(int argc,
                 char **argv,
                 int *i,
                 const char *name,
                 long min,
                 long max,
                 long *out,
                 bool *bad) {
    const char *s = NULL;
    if (!cli_opt_str(argc, argv, i, name, &s, bad)) {
        return false;
    }
    if (*bad) {
        return true;
    }
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "pipit: option %s: '%s' is not an integer in %ld..%ld\n", name, s, min,
                max);
        *bad = true;
        return true;
    }
    *out = v;
    return true;
}

bool cli_opt_float(int argc,
                   char **argv,
                   int *i,
                   const char *name,
                   double min,
                   double max,
                   double *out,
                   bool *bad) {
    const char *s = NULL;
    if (!cli_opt_str(argc, argv, i, name, &s, bad)) {
        return false;
    }
    if (*bad) {
        return true;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max)) {
        fprintf(stderr, "pipit: option %s: '%s' is not a number in %g..%g\n", name, s, min, max);
        *bad = true;
        return true;
    }
    *out = v;
    return true;
}

const char *cli_vocab_path(const char *name, char *buf, size_t size) {
    struct stat st;
    if (stat(name, &st) == 0 && S_ISREG(st.st_mode)) {
        snprintf(buf, size, "%s", name);
        return buf;
    }
    const char *dir = getenv("PIPIT_VOCAB_DIR");
    if (dir == NULL || dir[0] == '\0') {
        dir = PIPIT_VOCAB_DIR;
    }
    int n = snprintf(buf, size, "%s/ggml-vocab-%s.gguf", dir, name);
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
    }
    return buf;
}

/* ============================================================================
 * logging */

static void log_stderr(enum pipit_log_level level, const char *text, void *user_data) {
    (void)user_data;
    static const char *names[] = {"debug", "info", "warn", "error"};
    size_t len = strlen(text);
    fprintf(stderr, "[%s] %s%s", names[level], text, len > 0 && text[len - 1] == '\n' ? "" : "\n");
}

void cli_log_to_stderr(enum pipit_log_level level) {
    pipit_log_set(log_stderr, NULL, level);
}
