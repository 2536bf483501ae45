/*
 * cmd_tools.c - `pipit tools check|show|inspect|sample`: validate a tool specification,
 * print it in one of the four serializations, count its tokens with a model's
 * tokenizer, sample calls from a model under its grammar (docs/toolspec.md).
 */
#include "cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const FORMAT_NAMES[PIPIT_TOOLSPEC_N_FORMATS] = {"openapi", "minified", "compact",
                                                                   "jit"};

static void tools_usage(FILE *out) {
    fprintf(out, "usage: pipit tools check SPEC [--verbose]\n"
                 "       pipit tools show SPEC [--format openapi|minified|compact|jit]\n"
                 "       pipit tools inspect SPEC --model GGUF [--json]\n"
                 "       pipit tools sample SPEC --model GGUF [--n N] [--syntax pipit|hermes]\n"
                 "                          [--seed K] [--strings N]\n"
                 "  check     validate the specification; errors as FILE:LINE:COL: PATH: problem;\n"
                 "            then per tool what each argument accepts and which constraints the\n"
                 "            grammar enforces and which validation checks after generation;\n"
                 "            --verbose also lists the x-* extensions (ignored)\n"
                 "  show      print the tool set as the model sees it (default format: compact)\n"
                 "  inspect   tokens per tool and in total for each format, with the model's\n"
                 "            tokenizer (loaded vocab-only); --json prints\n"
                 "            {\"tools\":[{\"name\",\"tokens\":{...}}],\"total\":{...}}\n"
                 "  sample    N calls (default 10) constrained by the tool set's grammar with\n"
                 "            exact ranges, sampled at temperature 1 with seeds K..K+N-1\n"
                 "            (default 1), each checked against the schema: a line per call,\n"
                 "            \"ok\" or the problems; exit 1 when any call is invalid.\n"
                 "            --strings caps string values (default 32 characters)\n");
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

/* The text of `tokens`, NUL-terminated (malloc'd). */
static char *tokens_text(const struct pipit_model *m, const int32_t *tokens, int32_t n) {
    size_t cap = (size_t)n * 64 + 1, len = 0;
    char *text = malloc(cap);
    if (text == NULL) {
        return NULL;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t k = pipit_token_piece(m, tokens[i], text + len, 63);
        len += k > 0 ? (size_t)k : 0;
    }
    text[len] = '\0';
    return text;
}

/* `tools sample`: calls from a model under the tool set's exact grammar, each validated. */
static int tools_sample(const char *spec,
                        const char *model_path,
                        enum pipit_call_syntax syn,
                        long n,
                        long seed,
                        long strings) {
    enum {
        MAX_TOKENS = 1024
    };
    struct pipit_toolset *ts = load_spec(spec);
    if (ts == NULL) {
        return CLI_EXIT_FAIL;
    }
    struct pipit_error err;
    struct pipit_model *m = NULL;
    struct pipit_grammar *g = NULL;
    struct pipit_context *ctx = NULL;
    struct pipit_fastgrammar *fg = NULL;
    char *tools_text = NULL, *prompt_text = NULL;
    int32_t *prompt = NULL, np = 0;
    int32_t *out = malloc(sizeof(int32_t) * MAX_TOKENS);
    int rc = CLI_EXIT_FAIL;
    struct pipit_grammar_params gp = pipit_grammar_default_params();
    gp.syntax = syn;
    gp.max_string_chars = (uint32_t)strings;
    gp.exact_values = true;
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = 4096;
    cp.n_threads = 1;
    if (out == NULL || pipit_model_load(model_path, NULL, &m, &err) != PIPIT_OK ||
        pipit_grammar_compile(ts, &gp, &g, &err) != PIPIT_OK ||
        pipit_context_init(m, &cp, &ctx, &err) != PIPIT_OK ||
        pipit_fastgrammar_init(m, &fg, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit tools sample: %s\n", out == NULL ? "out of memory" : err.text);
        goto done;
    }
    /* a plain prompt: the tool set as the model sees it; the grammar does the rest */
    if (pipit_toolset_serialize(ts, PIPIT_TOOLSPEC_COMPACT, &tools_text) != PIPIT_OK) {
        goto done;
    }
    size_t plen = strlen(tools_text) + 64;
    prompt_text = malloc(plen);
    if (prompt_text == NULL) {
        goto done;
    }
    snprintf(prompt_text, plen, "Tools:\n%s\nUser: call a tool\nAssistant:", tools_text);
    if (pipit_tokenize_alloc(m, prompt_text, true, false, &prompt, &np) != PIPIT_OK || np < 1 ||
        pipit_context_append(ctx, PIPIT_REGION_PERMANENT, prompt, np - 1) != PIPIT_OK) {
        fprintf(stderr, "pipit tools sample: the prompt does not fit the context\n");
        goto done;
    }
    long n_valid = 0;
    rc = CLI_EXIT_OK;
    for (long k = 0; k < n; k++) {
        struct pipit_sampler_params sp = pipit_sampler_default_params();
        sp.grammar = pipit_grammar_call(g);
        sp.fast_grammar = fg;
        sp.temperature = 1.0f;
        sp.top_k = 0;
        sp.top_p = 1.0f;
        sp.seed = (uint32_t)(seed + k);
        struct pipit_sampler *smpl = NULL;
        struct pipit_generate_params genp = pipit_generate_default_params();
        genp.max_tokens = MAX_TOKENS;
        int32_t nt = 0;
        if (pipit_sampler_init(m, &sp, &smpl, &err) != PIPIT_OK ||
            pipit_context_rewind(ctx) != PIPIT_OK ||
            pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, prompt + np - 1, 1) != PIPIT_OK ||
            pipit_generate(ctx, smpl, &genp, out, &nt) != PIPIT_OK) {
            fprintf(stderr, "pipit tools sample: seed %ld: %s\n", seed + k,
                    err.text[0] != '\0' ? err.text : "generation failed");
            pipit_sampler_free(smpl);
            rc = CLI_EXIT_FAIL;
            break;
        }
        pipit_sampler_free(smpl);
        char *text = tokens_text(m, out, nt);
        if (text == NULL) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        struct pipit_call c;
        struct pipit_arg_problem pr[4];
        size_t n_pr = 0;
        const char *verdict = NULL;
        char why[600];
        if (nt >= MAX_TOKENS) {
            verdict = "INVALID: no end";
        } else if (pipit_call_parse(syn, text, &c, &err) != PIPIT_OK) {
            snprintf(why, sizeof(why), "INVALID: %s", err.text);
            verdict = why;
        } else if (pipit_call_is_none(ts, &c)) {
            /* the grammar's "none of these tools" outcome (docs/grammar.md), not a tool */
            verdict = "ok (none of these tools)";
            n_valid++;
            pipit_call_clear(&c);
        } else {
            enum pipit_status vst = pipit_toolset_validate_args(ts, c.name, c.args_json,
                                                                strlen(c.args_json), pr, 4, &n_pr);
            if (vst == PIPIT_OK) {
                verdict = "ok";
                n_valid++;
            } else {
                snprintf(why, sizeof(why), "INVALID: %s%s%s", n_pr > 0 ? pr[0].path : "",
                         n_pr > 0 ? ": " : "", n_pr > 0 ? pr[0].message : pipit_status_str(vst));
                verdict = why;
            }
            pipit_call_clear(&c);
        }
        /* one line per call: the text as written (newlines shown as \n), then the verdict */
        printf("%ld\t", seed + k);
        for (const char *q = text; *q != '\0'; q++) {
            if (*q == '\n') {
                fputs("\\n", stdout);
            } else {
                putchar(*q);
            }
        }
        printf("\t%s\n", verdict);
        free(text);
    }
    if (rc == CLI_EXIT_OK) {
        printf("%ld of %ld calls valid against %s (%s syntax)\n", n_valid, n, spec,
               pipit_call_syntax_str(syn));
        rc = n_valid == n ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
done:
    pipit_free(prompt);
    free(prompt_text);
    pipit_free(tools_text);
    free(out);
    pipit_fastgrammar_free(fg);
    pipit_context_free(ctx);
    pipit_grammar_free(g);
    pipit_model_free(m);
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
    const char *spec = NULL, *model = NULL, *format = "compact", *syntax = "pipit";
    long n_calls = 10, seed = 1, strings = 32;
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
            cli_opt_str(argc, argv, &i, "--format", &format, &bad) ||
            cli_opt_str(argc, argv, &i, "--syntax", &syntax, &bad) ||
            cli_opt_int(argc, argv, &i, "--n", 1, 100000, &n_calls, &bad) ||
            cli_opt_int(argc, argv, &i, "--seed", 0, 4000000000L, &seed, &bad) ||
            cli_opt_int(argc, argv, &i, "--strings", 1, 4096, &strings, &bad)) {
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
        if (pipit_toolset_pack_name(ts) != NULL) {
            /* a pack: what training reads from it and what it can generate */
            struct pipit_error derr;
            char *d = pipit_datagen_pack_describe(ts, &derr);
            printf("%s", d != NULL ? d : "");
            if (d == NULL) {
                printf("  training data: %s\n", derr.text);
            }
            free(d);
            char *notes = pipit_pack_notes(ts);
            printf("%s", notes != NULL ? notes : "");
            free(notes);
        }
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
    if (strcmp(sub, "sample") == 0) {
        bool hermes = strcmp(syntax, "hermes") == 0;
        if (model == NULL || (!hermes && strcmp(syntax, "pipit") != 0)) {
            fprintf(stderr, "pipit tools sample: --model is required; --syntax pipit|hermes\n");
            tools_usage(stderr);
            return CLI_EXIT_USAGE;
        }
        return tools_sample(spec, model, hermes ? PIPIT_SYNTAX_HERMES : PIPIT_SYNTAX_PIPIT, n_calls,
                            seed, strings);
    }
    fprintf(stderr, "pipit tools: unknown subcommand '%s'\n", sub);
    tools_usage(stderr);
    return CLI_EXIT_USAGE;
}
