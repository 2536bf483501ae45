/*
 * cmd_tools.c - `pipit tools check|show|inspect`: validate a tool specification,
 * print it in one of the four serializations, count its tokens with a model's
 * tokenizer (docs/toolspec.md).
 */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

static const char *const FORMAT_NAMES[PIPIT_TOOLSPEC_N_FORMATS] = {"openapi", "minified", "compact",
                                                                   "jit"};

static void tools_usage(FILE *out) {
    fprintf(out, "usage: pipit tools check SPEC [--verbose]\n"
                 "       pipit tools show SPEC [--format openapi|minified|compact|jit]\n"
                 "       pipit tools inspect SPEC --model GGUF [--json]\n"
                 "  check     validate the specification; errors as FILE:LINE:COL: PATH: problem;\n"
                 "            then per tool what each argument accepts and which constraints the\n"
                 "            grammar enforces and which validation checks after generation;\n"
                 "            --verbose also lists the x-* extensions (ignored)\n"
                 "  show      print the tool set as the model sees it (default format: compact)\n"
                 "  inspect   tokens per tool and in total for each format, with the model's\n"
                 "            tokenizer (loaded vocab-only); --json prints\n"
                 "            {\"tools\":[{\"name\",\"tokens\":{...}}],\"total\":{...}}\n");
}

static struct pipit_toolset *load_spec(const char *path) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fprintf(stderr, "%s\n", err.text);
        return NULL;
    }
    return ts;
}

static json_t *counts_json(const struct pipit_token_counts *c) {
    json_t *o = json_object();
    for (int f = 0; o != NULL && f < PIPIT_TOOLSPEC_N_FORMATS; f++) {
        json_object_set_new(o, FORMAT_NAMES[f], json_integer(c->by_format[f]));
    }
    return o;
}

static int print_inspect_json(const struct pipit_toolset *ts,
                              const struct pipit_token_counts *per_tool,
                              const struct pipit_token_counts *total) {
    json_t *root = json_object();
    json_t *tools = json_array();
    if (root == NULL || tools == NULL) {
        json_decref(root);
        json_decref(tools);
        return CLI_EXIT_FAIL;
    }
    for (size_t i = 0; i < pipit_toolset_n_tools(ts); i++) {
        json_t *t = json_object();
        json_object_set_new(t, "name", json_string(pipit_toolset_tool_name(ts, i)));
        json_object_set_new(t, "tokens", counts_json(&per_tool[i]));
        json_array_append_new(tools, t);
    }
    json_object_set_new(root, "tools", tools);
    json_object_set_new(root, "total", counts_json(total));
    char *text = json_dumps(root, JSON_INDENT(2));
    json_decref(root);
    if (text == NULL) {
        return CLI_EXIT_FAIL;
    }
    printf("%s\n", text);
    pipit_free(text);
    return CLI_EXIT_OK;
}

static void print_inspect_table(const struct pipit_toolset *ts,
                                const struct pipit_token_counts *per_tool,
                                const struct pipit_token_counts *total) {
    printf("| tool | openapi | minified | compact | jit |\n");
    printf("|---|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < pipit_toolset_n_tools(ts); i++) {
        const int32_t *n = per_tool[i].by_format;
        printf("| %s | %d | %d | %d | %d |\n", pipit_toolset_tool_name(ts, i), (int)n[0], (int)n[1],
               (int)n[2], (int)n[3]);
    }
    const int32_t *t = total->by_format;
    printf("| **total** | **%d** | **%d** | **%d** | **%d** |\n", (int)t[0], (int)t[1], (int)t[2],
           (int)t[3]);
    if (t[0] > 0) {
        printf("| ratio to openapi | 1 | %.3f | %.3f | %.3f |\n", (double)t[1] / t[0],
               (double)t[2] / t[0], (double)t[3] / t[0]);
    }
}

static int tools_inspect(const char *spec, const char *model_path, bool as_json) {
    struct pipit_toolset *ts = load_spec(spec);
    if (ts == NULL) {
        return CLI_EXIT_FAIL;
    }
    struct pipit_model_params mp = pipit_model_default_params();
    mp.vocab_only = true;
    struct pipit_model *model = NULL;
    struct pipit_error err;
    if (pipit_model_load(model_path, &mp, &model, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit tools inspect: %s\n", err.text);
        pipit_toolset_free(ts);
        return CLI_EXIT_FAIL;
    }
    size_t n = pipit_toolset_n_tools(ts);
    struct pipit_token_counts *per_tool = calloc(n, sizeof(*per_tool));
    struct pipit_token_counts total;
    int rc = CLI_EXIT_FAIL;
    enum pipit_status st = per_tool == NULL
                               ? PIPIT_ERR_NOMEM
                               : pipit_toolset_count_tokens(ts, model, per_tool, &total);
    if (st != PIPIT_OK) {
        fprintf(stderr, "pipit tools inspect: counting tokens failed: %s\n", pipit_status_str(st));
    } else if (as_json) {
        rc = print_inspect_json(ts, per_tool, &total);
    } else {
        print_inspect_table(ts, per_tool, &total);
        rc = CLI_EXIT_OK;
    }
    free(per_tool);
    pipit_model_free(model);
    pipit_toolset_free(ts);
    return rc;
}

/* `tools check`: the call grammars compile, and whether they fit the fast decoder (a grammar
 * that does not is decoded by llama.cpp's slower GBNF sampler: said here, never silently). */
static int check_grammars(const char *spec, const struct pipit_toolset *ts) {
    static const enum pipit_call_syntax syntaxes[2] = {PIPIT_SYNTAX_PIPIT, PIPIT_SYNTAX_HERMES};
    int rc = CLI_EXIT_OK;
    for (int k = 0; k < 2; k++) {
        struct pipit_grammar_params gp = pipit_grammar_default_params();
        gp.syntax = syntaxes[k];
        struct pipit_grammar *g = NULL;
        struct pipit_error err;
        if (pipit_grammar_compile(ts, &gp, &g, &err) != PIPIT_OK) {
            fprintf(stderr, "%s: %s\n", spec, err.text);
            return CLI_EXIT_FAIL;
        }
        int32_t states = 0;
        if (pipit_fastgrammar_check(pipit_grammar_call(g), &states, &err) == PIPIT_OK) {
            printf("%s syntax: fast decoder (%d automaton states)\n",
                   pipit_call_syntax_str(syntaxes[k]), (int)states);
        } else {
            printf("%s syntax: not in the fast decoder (%s): llama.cpp's GBNF sampler decodes "
                   "these calls, slower\n",
                   pipit_call_syntax_str(syntaxes[k]), err.text);
        }
        pipit_grammar_free(g);
    }
    return rc;
}

/* Per tool, what each argument accepts and where each constraint is enforced. */
static int print_enforcement(const struct pipit_toolset *ts) {
    for (size_t i = 0; i < pipit_toolset_n_tools(ts); i++) {
        char *text = NULL;
        if (pipit_grammar_describe_tool(ts, i, &text) != PIPIT_OK) {
            fprintf(stderr, "pipit tools check: out of memory\n");
            return CLI_EXIT_FAIL;
        }
        printf("%s\n%s", pipit_toolset_tool_name(ts, i), text);
        pipit_free(text);
    }
    return CLI_EXIT_OK;
}

/* Print the path of every "x-*" keyword (extensions: ignored by pipit). Keys directly under
 * "properties", "$defs" and "definitions" are names, not keywords. */
static void list_extensions(const json_t *v, const char *path, bool names, size_t *n) {
    char child[1024];
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(child, sizeof(child), "%s[%zu]", path, i);
            list_extensions(json_array_get(v, i), child, false, n);
        }
        return;
    }
    const char *key;
    json_t *c;
    json_object_foreach((json_t *)v, key, c) {
        snprintf(child, sizeof(child), "%s[\"%s\"]", path, key);
        if (!names && strncmp(key, "x-", 2) == 0) {
            printf("  extension (ignored): %s\n", child);
            (*n)++;
            continue;
        }
        bool holds_names = !names && (strcmp(key, "properties") == 0 || strcmp(key, "$defs") == 0 ||
                                      strcmp(key, "definitions") == 0);
        list_extensions(c, child, holds_names, n);
    }
}

int cmd_tools(int argc, char **argv) {
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        tools_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    const char *sub = argv[1];
    const char *spec = NULL, *model = NULL, *format = "compact";
    bool as_json = false, verbose = false, bad = false;
    for (int i = 2; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            tools_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--json") == 0) {
            as_json = true;
            continue;
        }
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = true;
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &model, &bad) ||
            cli_opt_str(argc, argv, &i, "--format", &format, &bad)) {
            continue;
        }
        if (argv[i][0] != '-' && spec == NULL) {
            spec = argv[i];
            continue;
        }
        fprintf(stderr, "pipit tools: unexpected argument '%s'\n", argv[i]);
        bad = true;
    }
    if (bad || spec == NULL) {
        if (!bad) {
            fprintf(stderr, "pipit tools %s: a SPEC file is required\n", sub);
        }
        tools_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(sub, "check") == 0) {
        struct pipit_toolset *ts = load_spec(spec);
        if (ts == NULL) {
            return CLI_EXIT_FAIL;
        }
        printf("%s: ok, %zu tools\n", spec, pipit_toolset_n_tools(ts));
        int rc = check_grammars(spec, ts);
        if (rc == CLI_EXIT_OK) {
            rc = print_enforcement(ts);
        }
        if (rc == CLI_EXIT_OK && verbose) {
            json_error_t jerr;
            json_t *doc = json_load_file(spec, 0, &jerr);
            size_t n = 0;
            list_extensions(doc, "$", false, &n);
            printf("%zu x-* extension%s (ignored)\n", n, n == 1 ? "" : "s");
            json_decref(doc);
        }
        pipit_toolset_free(ts);
        return rc;
    }
    if (strcmp(sub, "show") == 0) {
        int f = -1;
        for (int k = 0; k < PIPIT_TOOLSPEC_N_FORMATS; k++) {
            if (strcmp(format, FORMAT_NAMES[k]) == 0) {
                f = k;
            }
        }
        if (f < 0) {
            fprintf(stderr, "pipit tools show: unknown format '%s'\n", format);
            tools_usage(stderr);
            return CLI_EXIT_USAGE;
        }
        struct pipit_toolset *ts = load_spec(spec);
        if (ts == NULL) {
            return CLI_EXIT_FAIL;
        }
        char *text = NULL;
        enum pipit_status st = pipit_toolset_serialize(ts, (enum pipit_toolspec_format)f, &text);
        if (st == PIPIT_OK) {
            size_t len = strlen(text);
            fputs(text, stdout);
            if (len == 0 || text[len - 1] != '\n') {
                fputc('\n', stdout);
            }
        } else {
            fprintf(stderr, "pipit tools show: %s\n", pipit_status_str(st));
        }
        pipit_free(text);
        pipit_toolset_free(ts);
        return st == PIPIT_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (strcmp(sub, "inspect") == 0) {
        if (model == NULL) {
            fprintf(stderr, "pipit tools inspect: --model is required\n");
            tools_usage(stderr);
            return CLI_EXIT_USAGE;
        }
        return tools_inspect(spec, model, as_json);
    }
    fprintf(stderr, "pipit tools: unknown subcommand '%s'\n", sub);
    tools_usage(stderr);
    return CLI_EXIT_USAGE;
}
