/*
 * cmd_model.c - `pipit make-model` and `pipit make-lora`: tiny random GGUF
 * files for tests.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void make_model_usage(FILE *out) {
    fprintf(out, "usage: pipit make-model --vocab NAME|FILE --out FILE [size options]\n"
                 "       pipit make-model --shape NAME --out FILE [--type T] [--vocab ...]\n"
                 "       pipit make-model --shapes\n"
                 "  --shape NAME     the sizes of a common small model (see --shapes): width,\n"
                 "                   blocks, heads, KV heads, feed-forward, trained context,\n"
                 "                   rope base and tokenizer; size options after it override\n"
                 "  --shapes         list the named shapes\n"
                 "  --type T         weight matrices: f32 (default), f16, q8_0 or q4_0\n"
                 "  --vocab NAME     tokenizer: a vocab name from llama.cpp's models/ "
                 "(llama-spm,\n"
                 "                   qwen2, llama-bpe, phi-3, ...) or a path to a GGUF "
                 "with one\n"
                 "  --out FILE       output GGUF (written atomically)\n"
                 "  --embd N         embedding width (default 64)\n"
                 "  --layers N       transformer blocks (default 2)\n"
                 "  --heads N        attention heads (default 4)\n"
                 "  --heads-kv N     key/value heads (default = heads)\n"
                 "  --ff N           feed-forward width (default 128)\n"
                 "  --ctx N          training context length (default 2048)\n"
                 "  --seed N         weight seed (default 1)\n"
                 "  --std X          weights ~ N(0, X) (default 0.5; 0.02 with --shape)\n");
}

int cmd_make_model(int argc, char **argv) {
    struct pipit_make_model_params p = pipit_make_model_default_params();
    const char *vocab = NULL, *out = NULL;
    long embd = p.n_embd, layers = p.n_layer, heads = p.n_head, heads_kv = -1, ff = p.n_ff;
    long ctx = p.n_ctx_train, seed = (long)p.seed;
    double std = p.init_std;
    const char *type = NULL;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            make_model_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--shapes") == 0) {
            size_t n = 0;
            const struct pipit_model_shape *shapes = pipit_model_shapes(&n);
            printf("| shape | copies | embd | layers | heads | kv heads | ff | vocab (tokenizer) "
                   "| ctx | params |\n|---|---|---:|---:|---:|---:|---:|---|---:|---:|\n");
            for (size_t k = 0; k < n; k++) {
                const struct pipit_model_shape *sh = &shapes[k];
                printf("| %s | %s | %d | %d | %d | %d | %d | %lld (%s) | %d | %.0fM |\n", sh->name,
                       sh->like, sh->n_embd, sh->n_layer, sh->n_head, sh->n_head_kv, sh->n_ff,
                       (long long)sh->n_vocab, sh->vocab, sh->n_ctx_train,
                       (double)sh->n_params / 1e6);
            }
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--shape") == 0) {
            /* sizes from the shape; options after it override them */
            const struct pipit_model_shape *sh =
                i + 1 < argc ? pipit_model_shape_find(argv[i + 1]) : NULL;
            if (sh == NULL) {
                fprintf(stderr, "pipit make-model: unknown shape '%s' (see --shapes)\n",
                        i + 1 < argc ? argv[i + 1] : "");
                bad = true;
                continue;
            }
            i++;
            pipit_make_model_apply_shape(&p, sh);
            embd = p.n_embd;
            layers = p.n_layer;
            heads = p.n_head;
            heads_kv = p.n_head_kv;
            ff = p.n_ff;
            ctx = p.n_ctx_train;
            std = p.init_std;
            if (vocab == NULL) {
                vocab = sh->vocab;
            }
            continue;
        }
        if (cli_opt_str(argc, argv, &i, "--vocab", &vocab, &bad) ||
            cli_opt_str(argc, argv, &i, "--type", &type, &bad) ||
            cli_opt_str(argc, argv, &i, "--out", &out, &bad) ||
            cli_opt_int(argc, argv, &i, "--embd", 8, 4096, &embd, &bad) ||
            cli_opt_int(argc, argv, &i, "--layers", 1, 64, &layers, &bad) ||
            cli_opt_int(argc, argv, &i, "--heads", 1, 128, &heads, &bad) ||
            cli_opt_int(argc, argv, &i, "--heads-kv", 1, 128, &heads_kv, &bad) ||
            cli_opt_int(argc, argv, &i, "--ff", 1, 65536, &ff, &bad) ||
            cli_opt_int(argc, argv, &i, "--ctx", 16, 1 << 20, &ctx, &bad) ||
            cli_opt_int(argc, argv, &i, "--seed", 0, 0x7fffffffL, &seed, &bad) ||
            cli_opt_float(argc, argv, &i, "--std", 1e-6, 10.0, &std, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit make-model: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (bad || vocab == NULL || out == NULL) {
        if (!bad) {
            fprintf(stderr, "pipit make-model: --vocab and --out are required\n");
        }
        make_model_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    static const char *const TYPES[] = {"f32", "f16", "q8_0", "q4_0"};
    p.weight_type = -1;
    for (int32_t k = 0; k < 4; k++) {
        if (strcmp(type != NULL ? type : "f32", TYPES[k]) == 0) {
            p.weight_type = k;
        }
    }
    if (p.weight_type < 0) {
        fprintf(stderr, "pipit make-model: --type %s: f32, f16, q8_0 or q4_0\n", type);
        make_model_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    char path[4096];
    p.vocab_path = cli_vocab_path(vocab, path, sizeof(path));
    p.n_embd = (int32_t)embd;
    p.n_layer = (int32_t)layers;
    p.n_head = (int32_t)heads;
    p.n_head_kv = (int32_t)(heads_kv > 0 ? heads_kv : heads);
    p.n_ff = (int32_t)ff;
    p.n_ctx_train = (int32_t)ctx;
    p.seed = (uint64_t)seed;
    p.init_std = (float)std;
    struct pipit_error err;
    if (pipit_make_model(&p, out, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit make-model: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

static void make_lora_usage(FILE *out) {
    fprintf(out, "usage: pipit make-lora --model FILE --out FILE [--rank N] [--alpha X] "
                 "[--seed N]\n"
                 "  writes a LoRA adapter with random A and B for attn_q, attn_v and "
                 "ffn_up\n");
}

int cmd_make_lora(int argc, char **argv) {
    struct pipit_make_lora_params p = pipit_make_lora_default_params();
    const char *model = NULL, *out = NULL;
    long rank = p.rank, seed = (long)p.seed;
    double alpha = p.alpha;
    bool bad = false;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            make_lora_usage(stdout);
            return CLI_EXIT_OK;
        }
        if (cli_opt_str(argc, argv, &i, "--model", &model, &bad) ||
            cli_opt_str(argc, argv, &i, "--out", &out, &bad) ||
            cli_opt_int(argc, argv, &i, "--rank", 1, 256, &rank, &bad) ||
            cli_opt_float(argc, argv, &i, "--alpha", 1e-6, 1e6, &alpha, &bad) ||
            cli_opt_int(argc, argv, &i, "--seed", 0, 0x7fffffffL, &seed, &bad)) {
            continue;
        }
        fprintf(stderr, "pipit make-lora: unknown option '%s'\n", argv[i]);
        bad = true;
    }
    if (bad || model == NULL || out == NULL) {
        if (!bad) {
            fprintf(stderr, "pipit make-lora: --model and --out are required\n");
        }
        make_lora_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    p.model_path = model;
    p.rank = (int32_t)rank;
    p.alpha = (float)alpha;
    p.seed = (uint64_t)seed;
    struct pipit_error err;
    if (pipit_make_lora(&p, out, &err) != PIPIT_OK) {
        fprintf(stderr, "pipit make-lora: %s\n", err.text);
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
