/*
 * cli.h - the `pipit` command: a thin layer over include/pipit.h.
 *
 * Exit codes (documented in docs/cli.md):
 *   0 success, 1 the operation failed (bad input, model error, ...), 2 usage
 * error.
 */
#ifndef PIPIT_CLI_H
#define PIPIT_CLI_H

#include "pipit_tools.h"

#include <stdbool.h>

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,
    CLI_EXIT_USAGE = 2,
};

int cmd_make_model(int argc, char **argv);
int cmd_make_lora(int argc, char **argv);
int cmd_bench_engine(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_tools(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_bench_grammar(int argc, char **argv); /* cmd_bench_grammar.c */
int cmd_bench_packs(int argc, char **argv);   /* cmd_bench_packs.c */
/* The text of a tool set of one tool "wide" whose parameters are `n` optional properties of
 * `type` (malloc'd; NULL when out of memory): the optional-member benchmarks. */
char *cli_wide_tools(const char *type, int n);

/* Milliseconds of CLOCK_MONOTONIC (the benchmarks' clock). */
double cli_now_ms(void);
/* qsort comparison of doubles, ascending. */
int cli_cmp_double(const void *a, const void *b);

/* Option parsing shared by the commands: `--name value` pairs and flags. Each
 * returns true when argv[*i] is the option, consuming its value; on a missing
 * or bad value prints the problem and sets *bad. */
bool cli_opt_str(int argc, char **argv, int *i, const char *name, const char **out, bool *bad);
bool cli_opt_int(int argc,
                 char **argv,
                 int *i,
                 const char *name,
                 long min,
                 long max,
                 long *out,
                 bool *bad);
bool cli_opt_float(int argc,
                   char **argv,
                   int *i,
                   const char *name,
                   double min,
                   double max,
                   double *out,
                   bool *bad);

/* Resolve a vocabulary name ("llama-spm", "qwen2") to the vocab GGUF in the
 * llama.cpp tree, or return `name` itself when it is a path to an existing
 * file. Writes into buf. */
const char *cli_vocab_path(const char *name, char *buf, size_t size);

/* The file name of `path` (borrowed from it): reports name files, not temporary paths. */
const char *cli_base_name(const char *path);

/* "llama, 1.72M parameters, 1.8 MB of tensors" into buf: facts about `model`, not
 * llama.cpp's description (which says "?B" for a model under 1B parameters). */
const char *cli_model_facts(const struct pipit_model *model, char *buf, size_t size);

/* Route library logs to stderr at `level` and above (quiet by default: warnings
 * and errors). */
void cli_log_to_stderr(enum pipit_log_level level);

#endif /* PIPIT_CLI_H */
