/*
 * cmd_train.c - `pipit train`: generate the camera data, build the vocabulary, train, export
 * and evaluate pipit's own tiny model (docs/training.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#ifndef PIPIT_TOOLS_DIR
#define PIPIT_TOOLS_DIR "tools"
#endif

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The default training budget of `pipit train --tools` without --steps: with data generation,
 * the vocabulary and the held-out evaluation, the command ends within about 30 minutes on one
 * thread (docs/training.md, "Any pack"). */
enum {
    PACK_DEFAULT_MINUTES = 24
};

static volatile sig_atomic_t train_interrupted;

static void on_train_sigint(int sig) {
    (void)sig;
    train_interrupted = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C quits at once */
}

static bool train_should_stop(void *ud) {
    (void)ud;
    return train_interrupted != 0;
}

static void train_usage(FILE *out) {
    fprintf(out,
            "usage: pipit train [options]\n"
            "  --tools FILE        train for this pack (a tool set with a \"pipit\" block naming\n"
            "                      the pack; a declared state is optional): data generated from\n"
            "                      its spec instead of the camera's (docs/training.md, \"Any\n"
            "                      pack\"); repeated: one model on all the packs' data, each\n"
            "                      example with its pack's system text (a base for their\n"
            "                      adapters; default --out pipit-base.gguf)\n"
            "  --out FILE          model to write (default models/pipit-camera-v1.gguf; with\n"
            "                      --tools X.json, pipit-X.gguf in the current folder; with\n"
            "                      --lora, pipit-X.lora.gguf)\n"
            "  --base MODEL --lora train a LoRA adapter on the frozen llama-architecture\n"
            "                      MODEL (its tokenizer and shape; the size options do not\n"
            "                      apply) and write an adapter GGUF (docs/training.md,\n"
            "                      \"Adapters\"); --eval-only then takes an adapter\n"
            "  --rank N --alpha X  the adapter's rank and alpha (8, 16; scaled by alpha/rank);\n"
            "                      --lr defaults to 2e-3 with --lora\n"
            "  --targets LIST      matrices to adapt: attn_q,attn_k,attn_v,attn_output,\n"
            "                      ffn_gate,ffn_up,ffn_down,output or all (default: the seven\n"
            "                      of every block)\n");
    fprintf(out,
            "  --vocab own|NAME|FILE  'own' (default): build a vocabulary from the data;\n"
            "                      or a llama.cpp vocab name (llama-spm) or a vocab GGUF\n"
            "  --vocab-size N      size of the own vocabulary (default 1024)\n"
            "  --vocab-out FILE    keep the built vocabulary GGUF here\n"
            "  --seed N            data, weights and shuffling seed (default 1)\n"
            "  --examples N        training examples to generate (default 200000)\n"
            "  --valid N           held-out examples to generate (default 1000)\n"
            "  --embd N --layers N --heads N --ff N   model size (192, 3, 4, 512)\n"
            "  --ctx N             tokens per training sequence (default 128)\n"
            "  --answer N          answer tokens per sequence (default 64)\n"
            "  --batch N           sequences per step (default 8)\n"
            "  --steps N           optimizer steps (default 8000)\n"
            "  --minutes X         training time budget: the learning rate decays over it and\n"
            "                      training stops at its end (default: none for the camera\n"
            "                      recipe; with --tools and no --steps, %d minutes, so the whole\n"
            "                      command ends within about 30 on one thread)\n"
            "  --lr X              peak learning rate (default 4e-4; warm-up 200, cosine)\n"
            "  --threads N         CPU threads (default 1; never more than free cores)\n"
            "  --checkpoint FILE   write the model every --checkpoint-every steps (500)\n"
            "  --resume FILE       continue from a checkpoint's weights and step\n"
            "  --init MODEL        fine-tune: start from MODEL's weights (F32/F16/Q8_0) at step 0\n"
            "                      (same shape; use --vocab MODEL for its vocabulary)\n"
            "  --eval N            held-out examples to evaluate after training (default 500,\n"
            "                      0 = none)\n"
            "  --eval-only MODEL   evaluate MODEL on the held-out split, no training\n"
            "  --eval-split S      valid (default: held-out templates) or train (the training\n"
            "                      templates; with another --seed: new examples of them)\n"
            "  --misses N          print up to N wrong held-out answers (default 10)\n"
            "  --dump-data FILE    write the generated data set as TSV (split, category,\n"
            "                      template, memory lines, state, utterance, output; line\n"
            "                      ends inside a field as \\n) and stop\n"
            "  --tracker-percent N State-Tracker examples in the data, 0..100 (default 8)\n"
            "  --type T            the exported matrices: q8_0 (default), f16 or f32 (norms\n"
            "                      stay f32; rows too short for q8_0, as an adapter's B, f16;\n"
            "                      checkpoints are f32)\n"
            "  --convert MODEL     no training: write MODEL with --type matrices to --out\n"
            "                      (with --ctx N: record N as pipit.train.n_ctx when MODEL\n"
            "                      does not say how long its training rows were)\n"
            "  --exclude FILE      never generate what this scenario set says (its turns\n"
            "                      and router segments, verbatim or near; repeatable)\n"
            "  --overlap FILE      no training: report scenario utterances (and router\n"
            "                      segments) that the training data of this --seed holds,\n"
            "                      verbatim or near-verbatim; exit 1 when any (repeatable);\n"
            "                      compounds are split by the router of the scenarios' tool\n"
            "                      set (--tools, else tools/<device>.json), as the agent does\n"
            "Ctrl-C stops training cleanly: the model (and checkpoint) so far are written and\n"
            "evaluated; a second Ctrl-C quits at once.\n",
            PACK_DEFAULT_MINUTES);
}

static void progress(const struct pipit_train_progress *p, void *ud) {
    (void)ud;
    int el = (int)p->elapsed_s, eta = (int)(p->eta_s > 0 ? p->eta_s : 0);
    fprintf(stderr,
            "step %6lld/%lld  loss %.4f  lr %.2e  %6.0f tok/s  elapsed %d:%02d  eta %d:%02d%s\n",
            (long long)p->step, (long long)p->n_steps, (double)p->loss, (double)p->lr, p->tok_per_s,
            el / 60, el % 60, eta / 60, eta % 60, p->checkpointed ? "  (checkpoint)" : "");
}

struct miss_state {
    long left;
};

static void on_miss(const struct pipit_example *ex, const char *got, void *ud) {
    struct miss_state *m = ud;
    if (m->left <= 0) {
        return;
    }
    m->left--;
    printf("  miss [%s] %s | %s\n    want %s\n    got  %s\n", ex->category, ex->state,
           ex->utterance, ex->output, got);
}

static void
print_eval(const char *what, const char *model, const struct pipit_train_eval_result *r) {
    printf("%s exact match: %d/%d = %.1f%%, right tool or plain text: %.1f%% (%s, %.1f s)\n", what,
           (int)r->n_exact, (int)r->n, r->n > 0 ? 100.0 * r->n_exact / r->n : 0.0,
           r->n > 0 ? 100.0 * r->n_kind / r->n : 0.0, model, r->seconds);
    printf("  %-14s %9s %6s %6s\n", "category", "n", "exact", "kind");
    for (int i = 0; i < r->n_categories; i++) {
        int n = r->categories[i].n > 0 ? r->categories[i].n : 1;
        printf("  %-14s %9d %5.1f%% %5.1f%%\n", r->categories[i].name, (int)r->categories[i].n,
               100.0 * r->categories[i].n_exact / n, 100.0 * r->categories[i].n_kind / n);
    }
}

/* The model card next to the model (`X.gguf` -> `X.md`): how it was made and what the held-out
 * split says, in markdown. The scenario (dev set) numbers are measured by `pipit eval`; the
 * card says how. Returns false after printing an error. */
static bool write_card(const char *out,
                       int argc,
                       char **argv,
                       const char *tools_path,
                       const char *system,
                       const struct pipit_train_params *tp,
                       const struct pipit_train_result *res,
                       const struct pipit_train_eval_result *ev) {
    char path[4096];
    size_t n = strlen(out);
    if (n > 5 && strcmp(out + n - 5, ".gguf") == 0) {
        n -= 5;
    }
    if (n + 4 >= sizeof(path)) {
        fprintf(stderr, "pipit train: %s: path too long for its model card\n", out);
        return false;
    }
    snprintf(path, sizeof(path), "%.*s.md", (int)n, out);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "pipit train: %s: cannot write the model card: %s\n", path,
                strerror(errno));
        return false;
    }
    const char *base = strrchr(out, '/') != NULL ? strrchr(out, '/') + 1 : out;
    long size = -1;
    FILE *m = fopen(out, "rb");
    if (m != NULL && fseek(m, 0, SEEK_END) == 0) {
        size = ftell(m);
    }
    if (m != NULL) {
        fclose(m);
    }
    fprintf(f, "# %s\n\n", base);
    fprintf(f, "A%s trained by `pipit train` for %s%s%s (system text \"%s\").\n\n",
            tp->base != NULL ? " LoRA adapter" : " model",
            tools_path != NULL ? "the pack `" : "the camera", tools_path != NULL ? tools_path : "",
            tools_path != NULL ? "`" : "", system);
    fprintf(f, "```\n");
    for (int i = 0; i < argc; i++) {
        fprintf(f, "%s%s", i > 0 ? " " : "pipit ", argv[i]);
    }
    fprintf(f, "\n```\n\n");
    fprintf(f, "| | |\n|---|---|\n");
    fprintf(f, "| file | %s, %.2f MB |\n", base, size >= 0 ? (double)size / 1e6 : 0.0);
    if (tp->base != NULL) {
        fprintf(f, "| base | %s (frozen; vocabulary %d) |\n", tp->base, (int)res->n_vocab);
        fprintf(f, "| adapter | LoRA rank %d, alpha %g, on %s |\n", (int)tp->lora_rank,
                (double)tp->lora_alpha,
                tp->lora_targets != NULL ? tp->lora_targets : "the seven matrices of every block");
    } else {
        fprintf(f, "| shape | llama, %d wide, %d layers, %d heads, SwiGLU %d, vocabulary %d |\n",
                (int)tp->n_embd, (int)tp->n_layer, (int)tp->n_head, (int)tp->n_ff,
                (int)res->n_vocab);
    }
    if (tp->pack_name != NULL) {
        fprintf(f, "| pack | %s, content hash %s (pipit.pack.name, pipit.pack.hash) |\n",
                tp->pack_name, tp->pack_hash != NULL ? tp->pack_hash : "?");
    }
    fprintf(f, "| parameters | %llu |\n", (unsigned long long)res->n_params);
    fprintf(f, "| trained prompt length | %d tokens per row |\n", (int)tp->n_ctx);
    fprintf(f, "| training | %lld steps of %d rows, %.0f s on %d thread%s, %.0f tokens/s%s |\n",
            (long long)res->steps, (int)tp->n_batch, res->seconds, (int)tp->n_threads,
            tp->n_threads == 1 ? "" : "s", res->tok_per_s,
            res->stopped == 1   ? " (the time budget ended it)"
            : res->stopped == 2 ? " (interrupted)"
                                : "");
    fprintf(f, "| answer-token loss | %.4f -> %.4f |\n", (double)res->loss_first,
            (double)res->loss_last);
    fprintf(f, "| examples | %.1f tokens each; %d skipped (too long), %d trimmed to fit |\n\n",
            res->tokens_per_ex, (int)res->n_skipped, (int)res->n_trimmed);
    if (ev != NULL && ev->n > 0) {
        fprintf(f,
                "## Held-out templates (%d generated examples of phrasings never trained on)\n\n",
                (int)ev->n);
        fprintf(f, "Exact answer %.1f%%, right tool or plain text %.1f%%.\n\n",
                100.0 * ev->n_exact / ev->n, 100.0 * ev->n_kind / ev->n);
        fprintf(f, "| category | n | exact | right kind |\n|---|---:|---:|---:|\n");
        for (int i = 0; i < ev->n_categories; i++) {
            int c = ev->categories[i].n > 0 ? ev->categories[i].n : 1;
            fprintf(f, "| %s | %d | %.1f%% | %.1f%% |\n", ev->categories[i].name,
                    (int)ev->categories[i].n, 100.0 * ev->categories[i].n_exact / c,
                    100.0 * ev->categories[i].n_kind / c);
        }
        fprintf(f, "\nExact means the whole answer, token for token. A cloud answer is exact "
                   "only when the model copies the whole question into the query; the agent "
                   "sends the cloud the person's own words instead of the model's copy "
                   "(docs/agent.md), so for `cloud` the right kind is what a person meets. The "
                   "same holds for free strings (a message, a name): the agent puts back the "
                   "person's words where the model misspelt them.\n\n");
    }
    fprintf(f,
            "## On scenarios a person wrote\n\nThe table above scores whole answers, "
            "exactly, on generated phrasings of templates held out of training; it is not the "
            "F1 of calls that `pipit eval` prints, and generated text is easier than a "
            "person's. Measure the model on a scenario set that a person wrote and that shares "
            "no utterance with its training data (train with `--exclude SET`, which drops "
            "the set's utterances from the data; `pipit train ... --overlap SET` must then "
            "report none: the pack's own examples and common follow-ups such as \"a bit more\" "
            "are trained on otherwise), in the agent's default configuration (`cso`: compact "
            "tools, the Context "
            "State Object memory, the grammar; what `pipit run` and `pipit chat` use), "
            "with\n\n```\npipit eval --model %s%s%s%s%s --scenarios SET --config cso\n```\n\n"
            "Without `--config` the eval prints all five ablation rows; `jit` and `combined` "
            "show the tools in a form this model was not trained on and score low.\n",
            tp->base != NULL ? tp->base : out, tp->base != NULL ? " --lora " : "",
            tp->base != NULL ? out : "", tools_path != NULL ? " --tools " : "",
            tools_path != NULL ? tools_path : "");
    if (fclose(f) != 0) {
        fprintf(stderr, "pipit train: %s: cannot write the model card: %s\n", path,
                strerror(errno));
        return false;
    }
    printf("wrote %s (model card)\n", path);
    return true;
}

/* A field with its line ends written as the two characters "\n" (tracker messages, outputs). */
static void put_field(FILE *f, const char *s) {
    for (; *s != '\0'; s++) {
        if (*s == '\n') {
            fputs("\\n", f);
        } else {
            fputc(*s, f);
        }
    }
}

static void on_overlap(const struct pipit_overlap *o, void *ud) {
    (void)ud;
    char where[32] = "";
    if (o->segment >= 0) {
        snprintf(where, sizeof(where), " segment %d/%d", (int)o->segment + 1, (int)o->n_segments);
    }
    printf("%s:%d: %s turn %d%s: %s: \"%s\" (training: \"%s\")\n", o->file, (int)o->line, o->id,
           (int)o->turn, where, o->kind == PIPIT_OVERLAP_VERBATIM ? "verbatim" : "near", o->text,
           o->train);
}

#define OVERLAP_MAX_DEVICES 16

/* The tool sets of a scenario file's devices, split by the router the agent would use: --tools
 * when given (the pack trained on), else tools/<device>.json as `pipit eval` reads them.
 * Returns how many were loaded into devs/owned, -1 after printing an error. */
static int overlap_tools(const char *file,
                         const char *tools_path,
                         struct pipit_eval_device *devs,
                         struct pipit_toolset **owned) {
    struct pipit_error err;
    struct pipit_scenarios *set = NULL;
    if (pipit_scenarios_load_file(file, &set, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit train: %s\n", err.text);
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < pipit_scenarios_count(set); i++) {
        const char *dev = pipit_scenarios_device(set, i);
        bool known = false;
        for (int k = 0; k < n && !known; k++) {
            known = strcmp(devs[k].device, dev) == 0;
        }
        if (known) {
            continue;
        }
        char path[4096];
        snprintf(path, sizeof(path), tools_path != NULL ? "%s" : "%s/%s.json",
                 tools_path != NULL ? tools_path : PIPIT_TOOLS_DIR, dev);
        char *name = strdup(dev);
        if (n == OVERLAP_MAX_DEVICES || name == NULL ||
            pipit_toolset_load_file(path, &owned[n], &err) != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s: %s\n", file,
                    n == OVERLAP_MAX_DEVICES ? "too many devices"
                    : name == NULL           ? "out of memory"
                                             : err.text);
            free(name);
            for (int k = 0; k < n; k++) {
                free((char *)devs[k].device);
                pipit_toolset_free(owned[k]);
            }
            pipit_scenarios_free(set);
            return -1;
        }
        devs[n].device = name;
        devs[n].tools = owned[n];
        n++;
    }
    pipit_scenarios_free(set);
    return n;
}

/* --overlap: every file against the training data; 1 when anything overlaps. */
static int check_overlap(const struct pipit_dataset *ds,
                         const char *tools_path,
                         const char *const *files,
                         int n_files) {
    struct pipit_error err;
    struct pipit_overlap_index *idx = NULL;
    if (pipit_overlap_index_init(ds, &idx, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit train: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < n_files; i++) {
        struct pipit_eval_device devs[OVERLAP_MAX_DEVICES];
        struct pipit_toolset *owned[OVERLAP_MAX_DEVICES];
        int n_devs = overlap_tools(files[i], tools_path, devs, owned);
        if (n_devs < 0) {
            rc = CLI_EXIT_FAIL;
            continue;
        }
        struct pipit_overlap_counts c = {0};
        enum pipit_status st = pipit_overlap_check_file(idx, files[i], devs, (size_t)n_devs,
                                                        on_overlap, NULL, &c, &err);
        for (int k = 0; k < n_devs; k++) {
            free((char *)devs[k].device);
            pipit_toolset_free(owned[k]);
        }
        if (st != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        printf("%s: %d/%d utterances and %d/%d segments in the training data (%d verbatim, %d "
               "near; %d distinct training utterances)\n",
               files[i], (int)c.n_utterances_overlap, (int)c.n_utterances,
               (int)c.n_segments_overlap, (int)c.n_segments, (int)c.n_verbatim, (int)c.n_near,
               (int)pipit_overlap_index_size(idx));
        if (c.n_verbatim + c.n_near > 0) {
            rc = CLI_EXIT_FAIL;
        }
    }
    pipit_overlap_index_free(idx);
    return rc;
}

static int dump_data(const struct pipit_dataset *ds, const char *path) {
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "pipit train: cannot write %s\n", path);
        return CLI_EXIT_FAIL;
    }
    for (int split = 0; split < 2; split++) {
        for (int32_t i = 0; i < pipit_dataset_size(ds, (enum pipit_split)split); i++) {
            struct pipit_example ex;
            pipit_dataset_get(ds, (enum pipit_split)split, i, &ex);
            fprintf(f, "%s\t%s\t%d\t", split == 0 ? "train" : "valid", ex.category,
                    (int)ex.template_id);
            for (const char *m = ex.memory; *m != '\0'; m++) { /* lines joined by " | " */
                if (*m != '\n') {
                    fputc(*m, f);
                } else if (m[1] != '\0') {
                    fputs(" | ", f);
                }
            }
            fprintf(f, "\t%s\t", ex.state);
            put_field(f, ex.utterance);
            fputc('\t', f);
            put_field(f, ex.output);
            fputc('\n', f);
        }
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "pipit train: cannot write %s\n", path);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* The data set of the pack at `path` (every example with the pack's system text), its system
 * text, name and content hash. CLI_EXIT_OK or CLI_EXIT_FAIL (said on stderr). */
static int pack_data(const char *path,
                     const struct pipit_datagen_params *dp,
                     struct pipit_dataset **out,
                     char *system,
                     size_t system_size,
                     char *name,
                     size_t name_size,
                     char hash[17]) {
    struct pipit_error err;
    struct pipit_toolset *ts = NULL;
    *out = NULL;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit train: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    const char *sys = pipit_datagen_pack_system(ts);
    if (sys == NULL) {
        fprintf(stderr,
                "pipit train: %s is a plain tool set: --tools needs a pack (\"pipit\": "
                "{\"pack\": NAME}, docs/toolspec.md)\n",
                path);
        pipit_toolset_free(ts);
        return CLI_EXIT_FAIL;
    }
    snprintf(system, system_size, "%s", sys);
    snprintf(name, name_size, "%s", pipit_toolset_pack_name(ts));
    pipit_toolset_content_hash(ts, hash);
    enum pipit_status st = pipit_datagen_pack(ts, dp, out, &err);
    pipit_toolset_free(ts); /* the data set is a copy */
    if (st == PIPIT_OK) {
        st = pipit_dataset_set_system(*out, system, &err);
    }
    if (st != PIPIT_OK) {
        fprintf(stderr, "pipit train: %s: %s\n", path, err.text);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

int cmd_train(int argc, char **argv) {
    struct pipit_train_params tp = pipit_train_default_params();
    struct pipit_datagen_params dp = pipit_datagen_default_params();
    const char *out = "models/pipit-camera-v1.gguf", *vocab = "own", *vocab_out = NULL;
    const char *eval_only = NULL, *dump = NULL, *checkpoint = NULL, *resume = NULL, *init = NULL;
    const char *convert = NULL, *tools_path = NULL, *base = NULL, *targets = NULL;
    bool out_given = false, length_given = false, lora = false, shape_given = false;
    bool lr_given = false;
    long rank = tp.lora_rank;
    double alpha = tp.lora_alpha;
    enum {
        MAX_OVERLAP = 16
    };
    const char *overlap[MAX_OVERLAP], *exclude[MAX_OVERLAP], *tools_paths[MAX_OVERLAP];
    int n_overlap = 0, n_exclude = 0, n_tools = 0;
    const char *eval_split = "valid", *wtype = "q8_0";
    long vocab_size = 1024, seed = 1, examples = dp.n_train, valid = dp.n_valid;
    long embd = tp.n_embd, layers = tp.n_layer, heads = tp.n_head, ff = tp.n_ff;
    long ctx = tp.n_ctx, answer = tp.n_answer, batch = tp.n_batch, steps = (long)tp.n_steps;
    long tracker_percent = dp.tracker_percent;
    long threads = 1, ckpt_every = (long)tp.checkpoint_every, n_eval = 500, misses = 10;
    double minutes = 0.0, lr = tp.lr;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            train_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--out") == 0) {
            out_given = true;
        }
        if (strcmp(argv[i], "--steps") == 0 || strcmp(argv[i], "--minutes") == 0) {
            length_given = true;
        }
        if (strcmp(argv[i], "--lora") == 0) {
            lora = true;
            continue;
        }
        lr_given = lr_given || strcmp(argv[i], "--lr") == 0;
        if (strcmp(argv[i], "--embd") == 0 || strcmp(argv[i], "--layers") == 0 ||
            strcmp(argv[i], "--heads") == 0 || strcmp(argv[i], "--ff") == 0 ||
            strcmp(argv[i], "--vocab") == 0 || strcmp(argv[i], "--vocab-size") == 0) {
            shape_given = true;
        }
        if (cli_opt_str(argc, argv, &i, "--out", &out, &bad) ||
            cli_opt_str(argc, argv, &i, "--vocab", &vocab, &bad) ||
            cli_opt_int(argc, argv, &i, "--vocab-size", 300, 32000, &vocab_size, &bad) ||
            cli_opt_str(argc, argv, &i, "--vocab-out", &vocab_out, &bad) ||
            cli_opt_int(argc, argv, &i, "--seed", 0, 0x7fffffffL, &seed, &bad) ||
            cli_opt_int(argc, argv, &i, "--examples", 1, 10000000, &examples, &bad) ||
            cli_opt_int(argc, argv, &i, "--valid", 1, 10000000, &valid, &bad) ||
            cli_opt_int(argc, argv, &i, "--embd", 8, 4096, &embd, &bad) ||
            cli_opt_int(argc, argv, &i, "--layers", 1, 16, &layers, &bad) ||
            cli_opt_int(argc, argv, &i, "--heads", 1, 128, &heads, &bad) ||
            cli_opt_int(argc, argv, &i, "--ff", 1, 65536, &ff, &bad) ||
            cli_opt_int(argc, argv, &i, "--ctx", 8, 4096, &ctx, &bad) ||
            cli_opt_int(argc, argv, &i, "--answer", 2, 4096, &answer, &bad) ||
            cli_opt_int(argc, argv, &i, "--batch", 1, 4096, &batch, &bad) ||
            cli_opt_int(argc, argv, &i, "--steps", 1, 100000000, &steps, &bad) ||
            cli_opt_float(argc, argv, &i, "--minutes", 0.0, 1e6, &minutes, &bad) ||
            cli_opt_float(argc, argv, &i, "--lr", 1e-7, 1.0, &lr, &bad) ||
            cli_opt_int(argc, argv, &i, "--threads", 1, 512, &threads, &bad) ||
            cli_opt_str(argc, argv, &i, "--checkpoint", &checkpoint, &bad) ||
            cli_opt_int(argc, argv, &i, "--checkpoint-every", 1, 100000000, &ckpt_every, &bad) ||
            cli_opt_str(argc, argv, &i, "--resume", &resume, &bad) ||
            cli_opt_str(argc, argv, &i, "--init", &init, &bad) ||
            cli_opt_int(argc, argv, &i, "--eval", 0, 10000000, &n_eval, &bad) ||
            cli_opt_str(argc, argv, &i, "--eval-only", &eval_only, &bad) ||
            cli_opt_str(argc, argv, &i, "--eval-split", &eval_split, &bad) ||
            cli_opt_int(argc, argv, &i, "--misses", 0, 1000000, &misses, &bad) ||
            cli_opt_str(argc, argv, &i, "--dump-data", &dump, &bad) ||
            cli_opt_int(argc, argv, &i, "--tracker-percent", 0, 100, &tracker_percent, &bad) ||
            cli_opt_str(argc, argv, &i, "--type", &wtype, &bad) ||
            cli_opt_str(argc, argv, &i, "--convert", &convert, &bad) ||
            cli_opt_str(argc, argv, &i, "--base", &base, &bad) ||
            cli_opt_int(argc, argv, &i, "--rank", 1, 1024, &rank, &bad) ||
            cli_opt_float(argc, argv, &i, "--alpha", 1e-3, 1e4, &alpha, &bad) ||
            cli_opt_str(argc, argv, &i, "--targets", &targets, &bad)) {
            continue;
        }
        const char *ov = NULL;
        if (cli_opt_str(argc, argv, &i, "--tools", &ov, &bad)) {
            if (!bad && n_tools == MAX_OVERLAP) {
                fprintf(stderr, "pipit train: at most %d --tools files\n", MAX_OVERLAP);
                bad = true;
            } else if (!bad) {
                tools_paths[n_tools++] = ov;
                tools_path = tools_paths[0];
            }
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--overlap", &ov, &bad)) {
            if (!bad && n_overlap == MAX_OVERLAP) {
                fprintf(stderr, "pipit train: at most %d --overlap files\n", MAX_OVERLAP);
                bad = true;
            } else if (!bad) {
                overlap[n_overlap++] = ov;
            }
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--exclude", &ov, &bad)) {
            if (!bad && n_exclude == MAX_OVERLAP) {
                fprintf(stderr, "pipit train: at most %d --exclude files\n", MAX_OVERLAP);
                bad = true;
            } else if (!bad) {
                exclude[n_exclude++] = ov;
            }
            continue;
        }
        fprintf(stderr, "pipit train: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (!bad && strcmp(eval_split, "valid") != 0 && strcmp(eval_split, "train") != 0) {
        fprintf(stderr, "pipit train: --eval-split must be valid or train, got '%s'\n", eval_split);
        bad = true;
    }
    if (!bad && strcmp(wtype, "f32") != 0 && strcmp(wtype, "f16") != 0 &&
        strcmp(wtype, "q8_0") != 0) {
        fprintf(stderr, "pipit train: --type must be f32, f16 or q8_0, got '%s'\n", wtype);
        bad = true;
    }
    if (!bad && (base != NULL) != lora) {
        fprintf(stderr, "pipit train: %s\n",
                lora ? "--lora needs --base MODEL (the frozen model the adapter is for)"
                     : "--base trains an adapter: add --lora (to fine-tune a whole model of "
                       "pipit's own shape, use --init)");
        bad = true;
    }
    if (!bad && lora && shape_given) {
        fprintf(stderr, "pipit train: with --base the vocabulary and shape are the base's: "
                        "drop --embd/--layers/--heads/--ff/--vocab/--vocab-size\n");
        bad = true;
    }
    if (!bad && lora && (resume != NULL || convert != NULL)) {
        fprintf(stderr, "pipit train: --lora with --resume or --convert is not supported; "
                        "--init ADAPTER continues from an adapter's pairs\n");
        bad = true;
    }
    if (bad) {
        train_usage(stderr);
        return CLI_EXIT_USAGE;
    }

    struct pipit_error err;
    enum pipit_weight_type wt = strcmp(wtype, "f16") == 0    ? PIPIT_WEIGHTS_F16
                                : strcmp(wtype, "q8_0") == 0 ? PIPIT_WEIGHTS_Q8_0
                                                             : PIPIT_WEIGHTS_F32;
    if (convert != NULL) {
        bool ctx_given = false;
        for (int k = 1; k < argc; k++) {
            ctx_given = ctx_given || strcmp(argv[k], "--ctx") == 0;
        }
        /* --ctx with --convert: the row length an older model was trained on, recorded when
         * the model does not say (never overrides what it says) */
        if (pipit_train_convert(convert, out, wt, ctx_given ? (int32_t)ctx : 0, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            return CLI_EXIT_FAIL;
        }
        fprintf(stderr, "pipit train: wrote %s (its F32 matrices as %s)\n", out, wtype);
        return CLI_EXIT_OK;
    }
    dp.seed = (uint64_t)seed;
    dp.n_train = (int32_t)examples;
    dp.n_valid = (int32_t)valid;
    dp.tracker_percent = (int32_t)tracker_percent;
    /* --exclude: what evaluation sets say is never drawn (their turns and router segments) */
    struct pipit_overlap_index *ex_idx = NULL;
    if (n_exclude > 0 && pipit_overlap_index_empty(&ex_idx, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit train: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    for (int k = 0; k < n_exclude; k++) {
        /* split as the agent splits: by the router of each scenario's tool set */
        struct pipit_eval_device devs[OVERLAP_MAX_DEVICES];
        struct pipit_toolset *owned[OVERLAP_MAX_DEVICES];
        int n_devs = overlap_tools(exclude[k], n_tools == 1 ? tools_path : NULL, devs, owned);
        enum pipit_status st = n_devs < 0 ? PIPIT_ERR_INVALID_ARG
                                          : pipit_overlap_index_add_file(ex_idx, exclude[k], devs,
                                                                         (size_t)n_devs, &err);
        for (int d = 0; d < n_devs; d++) {
            free((char *)devs[d].device);
            pipit_toolset_free(owned[d]);
        }
        if (st != PIPIT_OK) {
            if (n_devs >= 0) {
                fprintf(stderr, "pipit train: --exclude: %s\n", err.text);
            }
            pipit_overlap_index_free(ex_idx);
            return CLI_EXIT_FAIL;
        }
    }
    dp.exclude = ex_idx;
    if (ex_idx != NULL) {
        /* the person sees what --exclude holds: these texts (and their router segments) are
         * never drawn */
        fprintf(stderr, "pipit train: --exclude: %d texts (turns and their segments) never drawn\n",
                (int)pipit_overlap_index_size(ex_idx));
    }
    struct pipit_dataset *ds = NULL;
    char pack_out[4096], system_buf[2048], pack_name[256], pack_hash[17];
    char first_system[2048], systems[4096];
    if (tools_path != NULL) {
        /* any pack: data from its spec, the pack's system text in the prompt; several packs:
         * their data together, each example with its pack's system text (a base for their
         * adapters, docs/training.md "Adapters") */
        systems[0] = '\0';
        for (int k = 0; k < n_tools; k++) {
            struct pipit_dataset *one = NULL;
            int rc = pack_data(tools_paths[k], &dp, &one, system_buf, sizeof(system_buf), pack_name,
                               sizeof(pack_name), pack_hash);
            if (rc == CLI_EXIT_OK && k > 0 &&
                pipit_dataset_append(ds, one, system_buf, &err) != PIPIT_OK) {
                fprintf(stderr, "pipit train: %s\n", err.text);
                rc = CLI_EXIT_FAIL;
            }
            if (rc != CLI_EXIT_OK) {
                pipit_dataset_free(one);
                pipit_dataset_free(ds);
                pipit_overlap_index_free(ex_idx);
                return rc;
            }
            if (k == 0) {
                ds = one;
                snprintf(first_system, sizeof(first_system), "%s", system_buf);
            } else {
                pipit_dataset_free(one);
            }
            size_t used = strlen(systems);
            snprintf(systems + used, sizeof(systems) - used, "%s%s", k > 0 ? "\n" : "", system_buf);
        }
        pipit_overlap_index_free(ex_idx);
        tp.system = first_system;
        if (n_tools == 1) {
            tp.pack_name = pack_name;
            tp.pack_hash = pack_hash;
        } else { /* a base for several packs: no one pack's name or hash */
            tp.systems = systems;
        }
        if (!out_given && n_tools > 1) {
            out = "pipit-base.gguf";
        } else if (!out_given) {
            /* tools/home.json -> pipit-home.gguf */
            const char *name =
                strrchr(tools_path, '/') != NULL ? strrchr(tools_path, '/') + 1 : tools_path;
            const char *dot = strrchr(name, '.');
            snprintf(pack_out, sizeof(pack_out), "pipit-%.*s%s.gguf",
                     (int)(dot != NULL ? dot - name : (long)strlen(name)), name,
                     lora ? ".lora" : "");
            out = pack_out;
        }
    } else {
        enum pipit_status gst = pipit_datagen_camera(&dp, &ds, &err);
        pipit_overlap_index_free(ex_idx);
        if (gst != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            return CLI_EXIT_FAIL;
        }
    }
    if (n_overlap > 0) {
        int rc = check_overlap(ds, tools_path, overlap, n_overlap);
        pipit_dataset_free(ds);
        return rc;
    }
    if (dump != NULL) {
        int rc = dump_data(ds, dump);
        pipit_dataset_free(ds);
        return rc;
    }
    struct miss_state ms = {.left = misses};
    struct pipit_train_eval_result ev;
    if (eval_only != NULL) {
        int32_t n = n_eval > 0 ? (int32_t)n_eval : 0;
        enum pipit_split sp =
            strcmp(eval_split, "train") == 0 ? PIPIT_SPLIT_TRAIN : PIPIT_SPLIT_VALID;
        /* with --lora, MODEL is an adapter for the --base */
        enum pipit_status st =
            pipit_train_evaluate_adapter(lora ? base : eval_only, lora ? eval_only : NULL, ds, sp,
                                         n, (int32_t)threads, on_miss, &ms, &ev, &err);
        pipit_dataset_free(ds);
        if (st != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            return CLI_EXIT_FAIL;
        }
        print_eval(sp == PIPIT_SPLIT_TRAIN ? "training templates" : "held-out", eval_only, &ev);
        return CLI_EXIT_OK;
    }

    /* the vocabulary: built from the data, or an existing one */
    char vocab_path[4096], tmp_vocab[4096] = "";
    if (lora) {
        snprintf(vocab_path, sizeof(vocab_path), "%s", base); /* the base's own */
    } else if (strcmp(vocab, "own") == 0) {
        if (vocab_out != NULL) {
            snprintf(vocab_path, sizeof(vocab_path), "%s", vocab_out);
        } else {
            snprintf(tmp_vocab, sizeof(tmp_vocab), "%s/pipit-vocab-%ld.gguf",
                     getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", (long)getpid());
            snprintf(vocab_path, sizeof(vocab_path), "%s", tmp_vocab);
        }
        if (pipit_vocab_build(ds, tp.system, (int32_t)vocab_size, vocab_path, &err) != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            pipit_dataset_free(ds);
            return CLI_EXIT_FAIL;
        }
    } else {
        cli_vocab_path(vocab, vocab_path, sizeof(vocab_path));
    }

    tp.vocab_path = vocab_path;
    tp.n_embd = (int32_t)embd;
    tp.n_layer = (int32_t)layers;
    tp.n_head = (int32_t)heads;
    tp.n_ff = (int32_t)ff;
    tp.n_ctx = (int32_t)ctx;
    tp.n_answer = (int32_t)answer;
    tp.n_batch = (int32_t)batch;
    tp.n_steps = steps;
    if (tools_path != NULL && !length_given) {
        minutes = PACK_DEFAULT_MINUTES;
    }
    tp.max_seconds = minutes * 60.0;
    if (lora && !lr_given) {
        lr = 2e-3; /* the pairs start from B = 0 and are few: a larger step (docs/training.md) */
    }
    tp.lr = (float)lr;
    if (tp.lr_min > tp.lr) {
        tp.lr_min = tp.lr / 10.0f;
    }
    tp.seed = (uint64_t)seed;
    tp.n_threads = (int32_t)threads;
    tp.checkpoint = checkpoint;
    tp.checkpoint_every = ckpt_every;
    tp.resume = resume;
    tp.init = init;
    tp.weight_type = wt;
    tp.progress = progress;
    tp.should_stop = train_should_stop;
    tp.base = base;
    tp.lora_rank = (int32_t)rank;
    tp.lora_alpha = (float)alpha;
    tp.lora_targets = targets;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_train_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    if (minutes > 0) {
        fprintf(stderr,
                "pipit train: training for %.1f minutes or %ld steps, whichever ends first (on "
                "one thread the minutes usually do)%s\n",
                minutes, steps, tools_path != NULL && !length_given ? "; --minutes to change" : "");
    }
    struct pipit_train_result res;
    enum pipit_status st = pipit_train(&tp, ds, out, &res, &err);
    signal(SIGINT, SIG_DFL);
    if (tmp_vocab[0] != '\0') {
        remove(tmp_vocab);
    }
    if (st != PIPIT_OK) {
        fprintf(stderr, "pipit train: %s\n", err.text);
        pipit_dataset_free(ds);
        return CLI_EXIT_FAIL;
    }
    int32_t n_ex = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    const double pct = n_ex > 0 ? 100.0 / n_ex : 0.0;
    printf("wrote %s: vocab %d, %llu parameters, %lld steps in %.1f s, %.0f tok/s, "
           "%.1f tokens/example, loss %.4f -> %.4f; of %d examples, %d (%.1f%%) skipped (too "
           "long) and %d (%.1f%%) with their oldest memory lines trimmed to fit (a warning "
           "follows from 1%% skipped or 20%% trimmed)\n",
           out, (int)res.n_vocab, (unsigned long long)res.n_params, (long long)res.steps,
           res.seconds, res.tok_per_s, res.tokens_per_ex, (double)res.loss_first,
           (double)res.loss_last, (int)n_ex, (int)res.n_skipped, pct * (double)res.n_skipped,
           (int)res.n_trimmed, pct * (double)res.n_trimmed);
    if (n_ex > 0 && (res.n_skipped * 100 >= n_ex || res.n_trimmed * 5 >= n_ex)) {
        /* a state line that fills the prompt: the model learns less of what matters */
        fprintf(stderr,
                "pipit train: warning: %d of %d examples (%.1f%%) did not fit %d tokens even "
                "without memory lines and %d (%.1f%%) lost memory lines to fit: the prompt is "
                "crowded (a long state line?). Show fewer keys (\"show\": false on keys people "
                "rarely ask about, docs/pack.md) or train with a longer --ctx (slower)\n",
                (int)res.n_skipped, (int)n_ex, 100.0 * res.n_skipped / n_ex, (int)tp.n_ctx,
                (int)res.n_trimmed, 100.0 * res.n_trimmed / n_ex);
    }
    if (res.stopped != 0) {
        printf("stopped after %lld of %ld steps: %s\n", (long long)res.steps, steps,
               res.stopped == 2 ? "interrupted (Ctrl-C)" : "the --minutes budget ended");
    }
    if (n_eval > 0 && lora) { /* before: the base alone, on the same examples */
        struct miss_state quiet = {.left = 0};
        struct pipit_train_eval_result before;
        st = pipit_train_evaluate_adapter(base, NULL, ds, PIPIT_SPLIT_VALID, (int32_t)n_eval,
                                          (int32_t)threads, on_miss, &quiet, &before, &err);
        if (st != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            pipit_dataset_free(ds);
            return CLI_EXIT_FAIL;
        }
        print_eval("held-out, the base alone", base, &before);
    }
    if (n_eval > 0) {
        st = pipit_train_evaluate_adapter(lora ? base : out, lora ? out : NULL, ds,
                                          PIPIT_SPLIT_VALID, (int32_t)n_eval, (int32_t)threads,
                                          on_miss, &ms, &ev, &err);
        if (st != PIPIT_OK) {
            fprintf(stderr, "pipit train: %s\n", err.text);
            pipit_dataset_free(ds);
            return CLI_EXIT_FAIL;
        }
        print_eval(lora ? "held-out, base + adapter" : "held-out", out, &ev);
    }
    pipit_dataset_free(ds);
    char packs[4096] = ""; /* several packs: the card names them all */
    for (int k = 0; k < n_tools; k++) {
        size_t used = strlen(packs);
        snprintf(packs + used, sizeof(packs) - used, "%s%s", k > 0 ? "`, `" : "", tools_paths[k]);
    }
    if (!write_card(out, argc, argv, n_tools > 1 ? packs : tools_path,
                    n_tools > 1 ? "one per pack" : tp.system, &tp, &res, n_eval > 0 ? &ev : NULL)) {
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
