/*
 * evaluate.c - exact-match accuracy of a trained model through the real engine.
 *
 * The model is loaded by libllama (pipit_model_load), every prompt is prefilled with
 * pipit_context_append and the answer greedy-decoded with pipit_generate: the same path the
 * agent takes, so a number here is a number the product gets (minus the grammar, which can only
 * help a call that is already right).
 */
#include "datagen.h"
#include "gguf.h"
#include "status.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define EVAL_MAX_TOKENS 64

/* pipit.prompt.system of the GGUF at `path` into buf ("" when absent) and pipit.train.n_ctx
 * into *n_ctx (0 when absent: a model from before the key). */
static void read_system(const char *path, char *buf, size_t size, int32_t *n_ctx) {
    buf[0] = '\0';
    *n_ctx = 0;
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    if (g == NULL) {
        return;
    }
    int64_t k = gguf_find_key(g, "pipit.prompt.system");
    if (k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_STRING) {
        pipit_format(buf, size, "%s", gguf_get_val_str(g, k));
    }
    k = gguf_find_key(g, "pipit.train.n_ctx");
    if (k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_INT32) {
        *n_ctx = gguf_get_val_i32(g, k);
    }
    gguf_free(g);
}

/* Same tool name ("<call>name(" prefix), or both plain text. */
static bool same_kind(const char *got, const char *want) {
    bool got_call = strncmp(got, "<call>", 6) == 0, want_call = strncmp(want, "<call>", 6) == 0;
    if (got_call != want_call) {
        return false;
    }
    if (!want_call) {
        return true;
    }
    const char *paren = strchr(want, '(');
    size_t n = paren != NULL ? (size_t)(paren - want) + 1 : strlen(want);
    return strncmp(got, want, n) == 0;
}

static void count(struct pipit_train_eval_result *r, const char *cat, bool ok, bool kind) {
    int i = 0;
    while (i < r->n_categories && strcmp(r->categories[i].name, cat) != 0) {
        i++;
    }
    if (i == r->n_categories) {
        if (i == PIPIT_TRAIN_EVAL_MAX_CATEGORIES) {
            return;
        }
        pipit_format(r->categories[i].name, sizeof(r->categories[i].name), "%s", cat);
        r->n_categories++;
    }
    r->categories[i].n++;
    r->categories[i].n_exact += ok ? 1 : 0;
    r->categories[i].n_kind += kind ? 1 : 0;
}

enum pipit_status pipit_train_evaluate(const char *model_path,
                                       const struct pipit_dataset *ds,
                                       enum pipit_split split,
                                       int32_t max_examples,
                                       int32_t n_threads,
                                       pipit_train_eval_miss_fn miss,
                                       void *user_data,
                                       struct pipit_train_eval_result *result,
                                       struct pipit_error *err) {
    return pipit_train_evaluate_adapter(model_path, NULL, ds, split, max_examples, n_threads, miss,
                                        user_data, result, err);
}

enum pipit_status pipit_train_evaluate_adapter(const char *model_path,
                                               const char *adapter_path,
                                               const struct pipit_dataset *ds,
                                               enum pipit_split split,
                                               int32_t max_examples,
                                               int32_t n_threads,
                                               pipit_train_eval_miss_fn miss,
                                               void *user_data,
                                               struct pipit_train_eval_result *result,
                                               struct pipit_error *err) {
    pipit_error_clear(err);
    if (model_path == NULL || ds == NULL || result == NULL || n_threads < 1) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "eval: model path, data set, result and n_threads >= 1 required");
    }
    memset(result, 0, sizeof(*result));
    double t0 = pipit_now_ms();
    char system[512];
    int32_t n_ctx_train = 0;
    read_system(model_path, system, sizeof(system), &n_ctx_train);
    if (adapter_path != NULL) { /* an adapter says what it was trained on */
        char a_system[512];
        int32_t a_n_ctx = 0;
        read_system(adapter_path, a_system, sizeof(a_system), &a_n_ctx);
        if (a_system[0] != '\0') {
            pipit_format(system, sizeof(system), "%s", a_system);
        }
        n_ctx_train = a_n_ctx > 0 ? a_n_ctx : n_ctx_train;
    }
    if (system[0] == '\0') {
        pipit_format(system, sizeof(system), "%s", "camera");
    }
    struct pipit_model *model = NULL;
    enum pipit_status st = pipit_model_load(model_path, NULL, &model, err);
    if (st != PIPIT_OK) {
        return st;
    }
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = n_threads;
    struct pipit_context *ctx = NULL;
    struct pipit_adapter *adapter = NULL;
    st = pipit_context_init(model, &cp, &ctx, err);
    if (st == PIPIT_OK && adapter_path != NULL) {
        const float scale = 1.0f;
        st = pipit_adapter_load(model, adapter_path, &adapter, err);
        if (st == PIPIT_OK && pipit_context_set_adapters(ctx, &adapter, &scale, 1) != PIPIT_OK) {
            st = pipit_error_set(err, PIPIT_ERR_ADAPTER, "eval: %s: %s", adapter_path,
                                 pipit_context_errmsg(ctx));
        }
    }
    struct pipit_sampler *smpl = NULL;
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    sp.temperature = 0.0f;
    if (st == PIPIT_OK) {
        st = pipit_sampler_init(model, &sp, &smpl, err);
    }
    int32_t n = pipit_dataset_size(ds, split);
    if (max_examples > 0 && max_examples < n) {
        n = max_examples;
    }
    struct pipit_generate_params gp = pipit_generate_default_params();
    gp.max_tokens = EVAL_MAX_TOKENS;
    int32_t toks[512], out[EVAL_MAX_TOKENS];
    for (int32_t i = 0; i < n && st == PIPIT_OK; i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, split, i, &ex);
        /* the prompt the agent would build: with a trained length, the oldest memory lines go
         * until prompt and answer fit it, as in training (train/trainer.c) */
        const char *memory = ex.memory;
        int32_t np = 0;
        for (int drop = 0;; drop++) {
            ex.memory = datagen_memory_skip(memory, drop);
            char *prompt = pipit_train_prompt_example(system, &ex);
            if (prompt == NULL) {
                st = pipit_error_set(err, PIPIT_ERR_NOMEM, "eval: out of memory");
                break;
            }
            np = pipit_tokenize(model, prompt, true, false, toks, 512);
            free(prompt);
            int32_t na = n_ctx_train > 0 && np > 0
                             ? pipit_tokenize(model, ex.output, false, false, out, EVAL_MAX_TOKENS)
                             : 0;
            if (np <= 0 || n_ctx_train <= 0 || na < 0 || np + na <= n_ctx_train ||
                ex.memory[0] == '\0') {
                break;
            }
        }
        if (st != PIPIT_OK) {
            break;
        }
        if (np <= 0) {
            st = pipit_error_set(err, PIPIT_ERR_TOKENIZE, "eval: cannot tokenize example %d",
                                 (int)i);
            break;
        }
        pipit_context_clear(ctx);
        pipit_sampler_reset(smpl);
        st = pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, toks, np);
        int32_t n_out = 0;
        if (st == PIPIT_OK) {
            st = pipit_generate(ctx, smpl, &gp, out, &n_out);
        }
        if (st != PIPIT_OK) {
            pipit_error_set(err, st, "eval: %s", pipit_context_errmsg(ctx));
            break;
        }
        char *text = pipit_detokenize(model, out, n_out, false);
        const char *got = text != NULL ? text : "";
        while (isspace((unsigned char)*got)) {
            got++; /* a vocabulary with a space prefix starts the answer with one */
        }
        bool ok = strcmp(got, ex.output) == 0;
        bool kind = same_kind(got, ex.output);
        result->n++;
        result->n_exact += ok ? 1 : 0;
        result->n_kind += kind ? 1 : 0;
        count(result, ex.category, ok, kind);
        if (!ok && miss != NULL) {
            miss(&ex, got, user_data);
        }
        pipit_free(text);
    }
    pipit_sampler_free(smpl);
    pipit_context_free(ctx);
    pipit_adapter_free(adapter);
    pipit_model_free(model);
    result->seconds = (pipit_now_ms() - t0) / 1000.0;
    return st;
}
