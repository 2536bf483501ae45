/*
 * cmd_eval.c - `pipit eval`: run a scenario set in the ablation configurations and report
 * tool-call precision/recall/F1, state and reply accuracy, tokens and latency (docs/eval.md).
 * Everything here goes through the "evaluation" section of pipit.h.
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PIPIT_DEFAULT_MODEL
#define PIPIT_DEFAULT_MODEL "models/pipit-camera-v1.gguf"
#endif
#ifndef PIPIT_TOOLS_DIR
#define PIPIT_TOOLS_DIR "tools"
#endif

#define EVAL_CLI_MAX_CONFIGS 16
#define EVAL_CLI_MAX_DEVICES 8

static void usage(FILE *out) {
    fprintf(out,
            "usage: pipit eval --scenarios FILE [options]\n"
            "  --scenarios FILE  JSON Lines scenario set (eval/camera.jsonl, eval/phone.jsonl)\n"
            "  --model FILE      GGUF model (default: the bundled %s)\n"
            "  --lora FILE       a LoRA adapter for --model (pipit train --base --lora)\n"
            "  --tools FILE      tool specification for every scenario (default: "
            "tools/<device>.json)\n"
            "  --config NAME     a configuration, repeatable (default: baseline compact jit cso\n"
            "                    combined); 'all' adds the grammar/no-grammar twins:\n"
            "                    baseline-grammar compact-nogrammar jit-nogrammar cso-nogrammar\n"
            "                    combined-nogrammar\n"
            "  --json OUT        write the report as JSON\n"
            "  --svg OUT         write context tokens per turn as an SVG chart\n"
            "  --min-f1 X        exit 1 when a configuration's overall F1 is below X\n"
            "  --threads N       CPU threads per agent (default 1)\n"
            "  --ctx N           context window per agent (default: what the model needs,\n"
            "                    as pipit run)\n"
            "  --limit N         only the first N scenarios\n"
            "  --misses N        print the first N misses per configuration to stderr\n"
            "  --fresh-every N   a new agent every N turns of a scenario, on the same device\n"
            "                    state (no memory, no undo log): what a long session costs\n"
            "  --check           only check the scenarios against the devices (no model);\n"
            "                    findings are warnings (exit 0)\n"
            "  --strict          refuse the set on any finding of the check (exit 1)\n"
            "  --gbnf            draw with llama.cpp's GBNF sampler instead of pipit's own\n"
            "                    decoder (--fast-grammar, the default); the text the grammar\n"
            "                    forces is still filled in as pipit's decoder does\n"
            "  --copy MODE       free-text arguments copied from the person's words and the\n"
            "                    memory: on, off or auto (default auto; docs/grammar.md)\n"
            "  --tracker         run the State-Tracker after every turn (memory cso)\n"
            "  --tracker-lora FILE  ... with this LoRA adapter on its context (implies\n"
            "                    --tracker)\n"
            "Exit codes: 0 the run completed (and passed --min-f1), 1 failed, 2 usage.\n",
            PIPIT_DEFAULT_MODEL);
}

struct eval_cli {
    const char *scenarios;
    const char *model;
    const char *lora;
    const char *tracker_lora;
    const char *tools;
    const char *json_out;
    const char *svg_out;
    const char *copy; /* on, off, auto (NULL: auto) */
    const char *configs[EVAL_CLI_MAX_CONFIGS];
    size_t n_configs;
    double min_f1;
    long threads, n_ctx, limit, misses, fresh_every;
    bool check_only;
    bool strict;  /* refuse on any finding of the oracle */
    bool gbnf;    /* llama.cpp's GBNF sampler instead of pipit's decoder */
    bool tracker; /* the State-Tracker after every turn (cso memory configs) */
};

static void progress(const char *config,
                     size_t config_index,
                     size_t n_configs,
                     size_t done,
                     size_t total,
                     void *user_data) {
    (void)user_data;
    /* a terminal sees the count move; a file or pipe (with --misses) gets one line per
     * configuration, not a run of carriage returns */
    bool tty = isatty(fileno(stderr)) == 1;
    if (!tty && done != total) {
        return;
    }
    fprintf(stderr, "%spipit eval: [%zu/%zu %s] %zu/%zu scenarios", tty ? "\r" : "",
            config_index + 1, n_configs, config, done, total);
    if (done == total) {
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

static void print_finding(const char *message, void *user_data) {
    (void)user_data;
    fprintf(stderr, "pipit eval: warning: %s; that turn's state is not checked\n", message);
}

static bool write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        fprintf(stderr, "pipit eval: cannot write %s\n", path);
        return false;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = fclose(f) == 0 && ok;
    if (!ok) {
        fprintf(stderr, "pipit eval: cannot write %s\n", path);
    }
    return ok;
}

static int parse(int argc, char **argv, struct eval_cli *o) {
    memset(o, 0, sizeof(*o));
    o->model = PIPIT_DEFAULT_MODEL;
    o->min_f1 = -1;
    o->threads = 1;
    o->n_ctx = 0; /* the agent sizes it */
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            exit(CLI_EXIT_OK);
        }
        if (strcmp(argv[i], "--check") == 0) {
            o->check_only = true;
            continue;
        }
        if (strcmp(argv[i], "--strict") == 0) {
            o->strict = true;
            continue;
        }
        if (strcmp(argv[i], "--fast-grammar") == 0 || strcmp(argv[i], "--gbnf") == 0) {
            o->gbnf = strcmp(argv[i], "--gbnf") == 0; /* the last one counts */
            continue;
        }
        if (strcmp(argv[i], "--tracker") == 0) {
            o->tracker = true;
            continue;
        }
        const char *cfg = NULL;
        if (cli_opt_str(argc, argv, &i, "--config", &cfg, &bad)) {
            if (cfg != NULL && o->n_configs < EVAL_CLI_MAX_CONFIGS) {
                o->configs[o->n_configs++] = cfg;
            }
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--scenarios", &o->scenarios, &bad) ||
            cli_opt_str(argc, argv, &i, "--model", &o->model, &bad) ||
            cli_opt_str(argc, argv, &i, "--lora", &o->lora, &bad) ||
            cli_opt_str(argc, argv, &i, "--tracker-lora", &o->tracker_lora, &bad) ||
            cli_opt_str(argc, argv, &i, "--tools", &o->tools, &bad) ||
            cli_opt_str(argc, argv, &i, "--json", &o->json_out, &bad) ||
            cli_opt_str(argc, argv, &i, "--svg", &o->svg_out, &bad) ||
            cli_opt_str(argc, argv, &i, "--copy", &o->copy, &bad) ||
            cli_opt_float(argc, argv, &i, "--min-f1", 0, 1, &o->min_f1, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 1, 512, &o->threads, &bad) ||
            cli_opt_int(argc, argv, &i, "--ctx", 256, 131072, &o->n_ctx, &bad) ||
            cli_opt_int(argc, argv, &i, "--limit", 1, 1000000, &o->limit, &bad) ||
            cli_opt_int(argc, argv, &i, "--misses", 0, 100000, &o->misses, &bad) ||
            cli_opt_int(argc, argv, &i, "--fresh-every", 1, 1000, &o->fresh_every, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit eval: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (!bad && o->copy != NULL && strcmp(o->copy, "on") != 0 && strcmp(o->copy, "off") != 0 &&
        strcmp(o->copy, "auto") != 0) {
        fprintf(stderr, "pipit eval: --copy must be on, off or auto, not '%s'\n", o->copy);
        bad = true;
    }
    if (!bad && o->scenarios == NULL) {
        fprintf(stderr, "pipit eval: --scenarios is required\n");
        bad = true;
    }
    if (!bad && o->lora != NULL && o->model == NULL) {
        fprintf(stderr, "pipit eval: --lora needs --model BASE (the model it was trained on)\n");
        bad = true;
    }
    if (bad) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* Resolve --config names (and "all") into configurations. */
static int
resolve_configs(const struct eval_cli *o, struct pipit_eval_config *cfgs, size_t *n_cfgs) {
    *n_cfgs = 0;
    if (o->n_configs == 0) {
        for (size_t i = 0; i < 5; i++) {
            pipit_eval_config_get(i, &cfgs[(*n_cfgs)++]);
        }
        return CLI_EXIT_OK;
    }
    for (size_t k = 0; k < o->n_configs; k++) {
        if (strcmp(o->configs[k], "all") == 0) {
            for (size_t i = 0; i < pipit_eval_config_count() && *n_cfgs < EVAL_CLI_MAX_CONFIGS;
                 i++) {
                pipit_eval_config_get(i, &cfgs[(*n_cfgs)++]);
            }
            continue;
        }
        if (pipit_eval_config_find(o->configs[k], &cfgs[*n_cfgs]) != PIPIT_OK) {
            fprintf(stderr, "pipit eval: unknown configuration '%s' (known:", o->configs[k]);
            struct pipit_eval_config c;
            for (size_t i = 0; pipit_eval_config_get(i, &c); i++) {
                fprintf(stderr, " %s", c.name);
            }
            fprintf(stderr, ", all)\n");
            return CLI_EXIT_USAGE;
        }
        (*n_cfgs)++;
    }
    return CLI_EXIT_OK;
}

int cmd_eval(int argc, char **argv) {
    struct eval_cli o;
    int rc = parse(argc, argv, &o);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    struct pipit_eval_config cfgs[EVAL_CLI_MAX_CONFIGS];
    size_t n_cfgs = 0;
    rc = resolve_configs(&o, cfgs, &n_cfgs);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    struct pipit_error err;
    struct pipit_scenarios *set = NULL;
    if (pipit_scenarios_load_file(o.scenarios, &set, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit eval: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    if (o.limit > 0 && (size_t)o.limit < pipit_scenarios_count(set)) {
        /* re-load the first N scenarios: a set is read-only */
        fprintf(stderr, "pipit eval: only the first %ld of %zu scenarios\n", o.limit,
                pipit_scenarios_count(set));
    }

    /* one tool set per device named by the scenarios */
    struct pipit_eval_device devs[EVAL_CLI_MAX_DEVICES];
    struct pipit_toolset *owned[EVAL_CLI_MAX_DEVICES];
    size_t n_devs = 0;
    rc = CLI_EXIT_OK;
    for (size_t i = 0; i < pipit_scenarios_count(set) && rc == CLI_EXIT_OK; i++) {
        const char *dev = pipit_scenarios_device(set, i);
        bool known = false;
        for (size_t k = 0; k < n_devs && !known; k++) {
            known = strcmp(devs[k].device, dev) == 0;
        }
        if (known) {
            continue;
        }
        if (n_devs == EVAL_CLI_MAX_DEVICES) {
            fprintf(stderr, "pipit eval: more than %d devices\n", EVAL_CLI_MAX_DEVICES);
            rc = CLI_EXIT_FAIL;
            break;
        }
        char path[4096];
        if (o.tools != NULL) {
            snprintf(path, sizeof(path), "%s", o.tools);
        } else {
            snprintf(path, sizeof(path), "%s/%s.json", PIPIT_TOOLS_DIR, dev);
        }
        if (pipit_toolset_load_file(path, &owned[n_devs], &err) != PIPIT_OK) {
            fprintf(stderr, "pipit eval: %s%s%s%s\n", err.text,
                    o.tools == NULL ? " (the scenarios' device \"" : "", o.tools == NULL ? dev : "",
                    o.tools == NULL ? "\" has no tool set there: pass --tools FILE)" : "");
            rc = CLI_EXIT_FAIL;
            break;
        }
        devs[n_devs].device = dev;
        devs[n_devs].tools = owned[n_devs];
        n_devs++;
    }
    size_t n_findings = 0;
    if (rc == CLI_EXIT_OK) {
        struct pipit_scenarios_check_params cp = pipit_scenarios_check_default_params();
        /* every finding is printed, strict or not; --strict then refuses the set (a new user
         * fixing a set wants all of them at once, not one per run) */
        cp.strict = false;
        cp.on_finding = print_finding;
        if (pipit_scenarios_check(set, devs, n_devs, &cp, &n_findings, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit eval: %s\n", err.text);
            rc = CLI_EXIT_FAIL;
        } else if (o.strict && n_findings > 0) {
            fprintf(stderr, "pipit eval: %s: %zu finding%s (--strict)\n", o.scenarios, n_findings,
                    n_findings == 1 ? "" : "s");
            rc = CLI_EXIT_FAIL;
        }
    }
    if (rc == CLI_EXIT_OK && o.check_only) {
        if (n_findings == 0) {
            printf("%s: %zu scenarios consistent with the devices\n", o.scenarios,
                   pipit_scenarios_count(set));
        } else {
            printf("%s: %zu scenarios, %zu finding%s (those turns' states are not checked)\n",
                   o.scenarios, pipit_scenarios_count(set), n_findings, n_findings == 1 ? "" : "s");
        }
    }
    struct pipit_model *model = NULL;
    struct pipit_eval_report *rep = NULL;
    struct pipit_scenarios *subset = NULL;
    if (rc == CLI_EXIT_OK && !o.check_only) {
        struct stat st;
        if (stat(o.model, &st) != 0 && strcmp(o.model, PIPIT_DEFAULT_MODEL) == 0) {
            fprintf(stderr, "pipit eval: the bundled model %s is missing; pass --model FILE\n",
                    o.model);
            rc = CLI_EXIT_FAIL;
        } else if (pipit_model_load(o.model, NULL, &model, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit eval: %s\n", err.text);
            rc = CLI_EXIT_FAIL;
        }
    }
    if (rc == CLI_EXIT_OK && !o.check_only && o.limit > 0 &&
        (size_t)o.limit < pipit_scenarios_count(set)) {
        /* the first N lines that hold scenarios, loaded as their own set */
        FILE *f = fopen(o.scenarios, "rb");
        char *buf = NULL;
        size_t len = 0, cap = 0;
        long found = 0;
        char line[65536];
        while (f != NULL && found < o.limit && fgets(line, sizeof(line), f) != NULL) {
            size_t n = strlen(line);
            const char *p = line;
            while (*p == ' ' || *p == '\t') {
                p++;
            }
            if (*p != '\n' && *p != '\r' && *p != '#' && *p != '\0') {
                found++;
            }
            if (len + n + 1 > cap) {
                cap = (len + n + 1) * 2;
                char *nb = realloc(buf, cap);
                if (nb == NULL) {
                    break;
                }
                buf = nb;
            }
            memcpy(buf + len, line, n);
            len += n;
        }
        if (f != NULL) {
            fclose(f);
        }
        if (pipit_scenarios_load_string(buf, len, o.scenarios, &subset, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit eval: %s\n", err.text);
            rc = CLI_EXIT_FAIL;
        }
        free(buf);
    }
    if (rc == CLI_EXIT_OK && !o.check_only) {
        struct pipit_eval_params ep = pipit_eval_default_params();
        ep.agent.n_threads = (int32_t)o.threads;
        ep.agent.fast_grammar = !o.gbnf;
        if (o.copy != NULL) {
            ep.agent.copy_strings = strcmp(o.copy, "on") == 0    ? PIPIT_COPY_ON
                                    : strcmp(o.copy, "off") == 0 ? PIPIT_COPY_OFF
                                                                 : PIPIT_COPY_AUTO;
        }
        ep.agent.state_tracker = o.tracker || o.tracker_lora != NULL;
        ep.agent.tracker_adapter = o.tracker_lora;
        ep.agent.adapter = o.lora;
        ep.agent.n_ctx = (uint32_t)o.n_ctx;
        ep.devices = devs;
        ep.n_devices = n_devs;
        ep.fresh_every = (int32_t)o.fresh_every;
        ep.progress = progress;
        if (pipit_eval_run(model, subset != NULL ? subset : set, cfgs, n_cfgs, &ep, &rep, &err) !=
            PIPIT_OK) {
            fprintf(stderr, "pipit eval: %s\n", err.text);
            rc = CLI_EXIT_FAIL;
        }
    }
    if (rep != NULL) {
        struct pipit_model_info info;
        pipit_model_get_info(model, &info);
        /* file names, not paths (no temporary directories in published reports), and facts
         * rather than llama.cpp's description ("?B all F32" for a small Q8_0 model) */
        printf("model: %s (%s, %.2fM parameters, %.1f MB of tensors), scenarios: %s (%zu)\n\n",
               cli_base_name(o.model), info.arch, (double)info.n_params / 1e6,
               (double)info.size_bytes / 1e6, cli_base_name(o.scenarios),
               pipit_scenarios_count(subset != NULL ? subset : set));
        char *md = pipit_eval_report_markdown(rep);
        printf("%s", md != NULL ? md : "(out of memory)\n");
        pipit_free(md);
        for (size_t c = 0; o.misses > 0 && c < n_cfgs; c++) {
            char *m = pipit_eval_report_misses(rep, c, (size_t)o.misses);
            if (m != NULL && m[0] != '\0') {
                fprintf(stderr, "\nmisses (%s):\n%s", pipit_eval_report_config(rep, c), m);
            }
            pipit_free(m);
        }
        if (o.json_out != NULL) {
            char *j = pipit_eval_report_json(rep);
            if (j == NULL || !write_text(o.json_out, j)) {
                rc = CLI_EXIT_FAIL;
            }
            pipit_free(j);
        }
        if (o.svg_out != NULL) {
            char *s = pipit_eval_report_svg(rep, NULL);
            if (s == NULL || !write_text(o.svg_out, s)) {
                rc = CLI_EXIT_FAIL;
            }
            pipit_free(s);
        }
        for (size_t c = 0; o.min_f1 >= 0 && c < n_cfgs; c++) {
            struct pipit_eval_metrics m;
            pipit_eval_report_metrics(rep, c, NULL, &m);
            if (m.f1 < o.min_f1) {
                fprintf(stderr, "pipit eval: %s: F1 %.3f is below --min-f1 %.3f\n",
                        pipit_eval_report_config(rep, c), m.f1, o.min_f1);
                rc = CLI_EXIT_FAIL;
            }
        }
    }
    pipit_eval_report_free(rep);
    pipit_model_free(model);
    for (size_t k = 0; k < n_devs; k++) {
        pipit_toolset_free(owned[k]);
    }
    pipit_scenarios_free(subset);
    pipit_scenarios_free(set);
    return rc;
}
