/*
 * test-lora.c - LoRA adapters trained by pipit (pipit_train with params.base): the adapter
 * llama.cpp loads is the one that was trained, and it moves the base's answers the way the
 * training asked, on examples it never saw.
 *
 *   test-lora   a random base with grouped-query attention, tied embeddings and Q8_0 matrices
 *               (what llama.cpp's converters write for small models) gets a rank-8 adapter in
 *               120 steps; llama.cpp scores held-out answers before and after; the agent runs
 *               with it; what the trainer's graph cannot compute is refused by name; a base
 *               trained on two packs' data is prompted with each pack's own system text.
 */
#include "../train/datagen.h"
#include "testutil.h"

#include <gguf.h>
#include <math.h>
#include <sys/stat.h>

#define N_LAYER 2

static void path_in_tmp(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "%s/test-lora-%ld-%s", PIPIT_TEST_MODEL_DIR, (long)getpid(), name);
}

struct fixture {
    struct pipit_dataset *ds;
    char vocab[512], base[512], adapter[512];
};

static struct fixture fx;

/* The camera data, a vocabulary of it and a random base on that vocabulary. */
/* The random base: tied embeddings, grouped-query attention, Q8_0 matrices. */
static struct pipit_make_model_params base_params(void) {
    struct pipit_make_model_params mp = pipit_make_model_default_params();
    mp.vocab_path = fx.vocab;
    mp.n_embd = 64;
    mp.n_layer = N_LAYER;
    mp.n_head = 4;
    mp.n_head_kv = 2; /* grouped-query attention */
    mp.n_ff = 128;
    mp.n_ctx_train = 256;
    mp.init_std = 0.2f;                  /* varied features for the adapter to use */
    mp.weight_type = PIPIT_WEIGHTS_Q8_0; /* frozen matrices stay Q8_0 in training */
    return mp;
}

static int setup(void **state) {
    (void)state;
    struct pipit_datagen_params dp = pipit_datagen_default_params();
    dp.seed = 11;
    dp.n_train = 400;
    dp.n_valid = 24;
    struct pipit_error err;
    if (pipit_datagen_camera(&dp, &fx.ds, &err) != PIPIT_OK) {
        fprintf(stderr, "datagen: %s\n", err.text);
        return -1;
    }
    path_in_tmp(fx.vocab, sizeof(fx.vocab), "vocab.gguf");
    path_in_tmp(fx.base, sizeof(fx.base), "base.gguf");
    path_in_tmp(fx.adapter, sizeof(fx.adapter), "adapter.gguf");
    if (pipit_vocab_build(fx.ds, "camera", 400, fx.vocab, &err) != PIPIT_OK) {
        fprintf(stderr, "vocab: %s\n", err.text);
        return -1;
    }
    struct pipit_make_model_params mp = base_params();
    if (pipit_make_model(&mp, fx.base, &err) != PIPIT_OK) { /* tied: no output.weight */
        fprintf(stderr, "base: %s\n", err.text);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    pipit_dataset_free(fx.ds);
    remove(fx.vocab);
    remove(fx.base);
    remove(fx.adapter);
    return 0;
}

static struct pipit_train_params lora_params(void) {
    struct pipit_train_params tp = pipit_train_default_params();
    tp.base = fx.base;
    tp.lora_rank = 8;
    tp.lora_alpha = 16.0f;
    tp.n_steps = 120;
    tp.n_batch = 4;
    tp.lr = 5e-3f;
    tp.lr_min = 5e-4f;
    tp.warmup = 5;
    tp.progress_every = 20;
    tp.weight_type = PIPIT_WEIGHTS_Q8_0; /* pipit train's default --type */
    return tp;
}

/* Mean negative log-likelihood per answer token (answer and end of generation) of the first
 * `n` examples of `split`, as llama.cpp computes it on `model` with `adapter` (NULL = none). */
static double
answer_nll(const char *model_path, const char *adapter_path, enum pipit_split split, int32_t n) {
    struct pipit_error err;
    struct pipit_model *model = NULL;
    if (pipit_model_load(model_path, NULL, &model, &err) != PIPIT_OK) {
        fail_msg("load: %s", err.text);
    }
    struct pipit_context_params cp = pipit_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = 1;
    struct pipit_context *ctx = NULL;
    assert_int_equal(pipit_context_init(model, &cp, &ctx, &err), PIPIT_OK);
    struct pipit_adapter *adapter = NULL;
    if (adapter_path != NULL) {
        const float scale = 1.0f;
        if (pipit_adapter_load(model, adapter_path, &adapter, &err) != PIPIT_OK) {
            fail_msg("adapter: %s", err.text);
        }
        assert_int_equal(pipit_context_set_adapters(ctx, &adapter, &scale, 1), PIPIT_OK);
    }
    struct pipit_model_info info;
    pipit_model_get_info(model, &info);
    double nll = 0.0;
    int64_t n_tok = 0;
    int32_t prompt[512], answer[128];
    for (int32_t i = 0; i < n; i++) {
        struct pipit_example ex;
        assert_true(pipit_dataset_get(fx.ds, split, i, &ex));
        ex.memory = ""; /* short prompts: the rows the trainer fits without trimming */
        char *text = pipit_train_prompt_example("camera", &ex);
        assert_non_null(text);
        int32_t np = pipit_tokenize(model, text, true, false, prompt, 512);
        int32_t na = pipit_tokenize(model, ex.output, false, false, answer, 127);
        free(text);
        assert_true(np > 0 && na > 0);
        answer[na++] = info.token_eos;
        pipit_context_clear(ctx);
        assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, prompt, np), PIPIT_OK);
        for (int32_t k = 0; k < na; k++) {
            const float *logits = pipit_context_logits(ctx);
            assert_non_null(logits);
            float mx = logits[0];
            for (int32_t v = 1; v < info.n_vocab; v++) {
                mx = logits[v] > mx ? logits[v] : mx;
            }
            double sum = 0.0;
            for (int32_t v = 0; v < info.n_vocab; v++) {
                sum += exp((double)(logits[v] - mx));
            }
            nll += log(sum) - (double)(logits[answer[k]] - mx);
            n_tok++;
            if (k + 1 < na) {
                assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, &answer[k], 1),
                                 PIPIT_OK);
            }
        }
    }
    pipit_context_free(ctx);
    pipit_adapter_free(adapter);
    pipit_model_free(model);
    return nll / (double)n_tok;
}

struct losses {
    float v[16];
    int n;
};

static void record(const struct pipit_train_progress *p, void *ud) {
    struct losses *l = ud;
    if (l->n < 16) {
        l->v[l->n++] = p->loss;
    }
}

/* The adapter GGUF holds what llama.cpp's loader wants: general.type adapter, alpha, and an
 * A/B pair of the right shapes for each adapted matrix. */
static void check_adapter_file(const char *path) {
    struct ggml_context *meta = NULL;
    struct gguf_init_params gp = {.no_alloc = true, .ctx = &meta};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    assert_non_null(g);
    assert_string_equal(gguf_get_val_str(g, gguf_find_key(g, "general.type")), "adapter");
    assert_string_equal(gguf_get_val_str(g, gguf_find_key(g, "adapter.type")), "lora");
    assert_true(gguf_get_val_f32(g, gguf_find_key(g, "adapter.lora.alpha")) == 16.0f);
    assert_string_equal(gguf_get_val_str(g, gguf_find_key(g, "pipit.prompt.system")), "camera");
    assert_int_equal(gguf_get_n_tensors(g), 2 * 7 * N_LAYER); /* tied: no output pair */
    struct ggml_tensor *kb = ggml_get_tensor(meta, "blk.1.attn_k.weight.lora_b");
    assert_non_null(kb);
    assert_int_equal(kb->ne[0], 8);            /* rank */
    assert_int_equal(kb->type, GGML_TYPE_F16); /* rank-long rows: too short for Q8_0 */
    assert_int_equal(kb->ne[1], 32);           /* 2 kv heads of 16 */
    struct ggml_tensor *da = ggml_get_tensor(meta, "blk.0.ffn_down.weight.lora_a");
    assert_non_null(da);
    assert_int_equal(da->ne[0], 128);
    assert_int_equal(da->ne[1], 8);
    assert_int_equal(da->type, GGML_TYPE_Q8_0); /* --type q8_0 */
    gguf_free(g);
    ggml_free(meta);
}

static void test_adapter_trains_and_loads(void **state) {
    (void)state;
    struct pipit_error err;
    double before = answer_nll(fx.base, NULL, PIPIT_SPLIT_VALID, 12);

    struct pipit_train_params tp = lora_params();
    struct losses l = {.n = 0};
    tp.progress = record;
    tp.progress_user_data = &l;
    struct pipit_train_result res;
    if (pipit_train(&tp, fx.ds, fx.adapter, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    assert_int_equal(res.steps, 120);
    /* per block: q 64x8+8x64, k and v 64x8+8x32, o like q, gate and up 64x8+8x128, down
     * 128x8+8x64 */
    assert_int_equal(res.n_params, (uint64_t)N_LAYER * (1024 + 768 + 768 + 1024 + 1536 * 3));
    assert_true(l.n == 6 && l.v[5] < l.v[0] * 0.75f);
    check_adapter_file(fx.adapter);

    /* llama.cpp, on held-out templates: the adapter moves the answers as trained */
    double after = answer_nll(fx.base, fx.adapter, PIPIT_SPLIT_VALID, 12);
    fprintf(stderr,
            "held-out answer NLL per token: base %.3f, base + adapter %.3f (trainer's "
            "last %.3f)\n",
            before, after, (double)res.loss_last);
    assert_true(after < before * 0.75);
    /* and what llama.cpp computes is what the trainer computed, within the held-out gap */
    assert_true(after < (double)res.loss_last * 1.5 + 0.5);

    /* the evaluator reads the adapter's prompt and runs it */
    struct pipit_train_eval_result ev;
    if (pipit_train_evaluate_adapter(fx.base, fx.adapter, fx.ds, PIPIT_SPLIT_VALID, 4, 1, NULL,
                                     NULL, &ev, &err) != PIPIT_OK) {
        fail_msg("eval: %s", err.text);
    }
    assert_int_equal(ev.n, 4);

    /* continuing from the adapter's pairs: it starts where it ended */
    struct pipit_train_params fp = lora_params();
    char more[512];
    path_in_tmp(more, sizeof(more), "more.gguf");
    fp.init = fx.adapter;
    fp.n_steps = 10;
    struct pipit_train_result fres;
    assert_int_equal(pipit_train(&fp, fx.ds, more, &fres, &err), PIPIT_OK);
    assert_true(fres.loss_first < res.loss_first * 0.8f);
    remove(more);
}

/* The agent answers with the adapter on its Executor context, and refuses an adapter that was
 * trained on another model. */
static void test_agent_with_adapter(void **state) {
    (void)state;
    struct pipit_error err;
    struct stat sb;
    if (stat(fx.adapter, &sb) != 0) {
        struct pipit_train_params tp = lora_params();
        tp.n_steps = 5;
        assert_int_equal(pipit_train(&tp, fx.ds, fx.adapter, NULL, &err), PIPIT_OK);
    }
    struct pipit_model *model = NULL;
    assert_int_equal(pipit_model_load(fx.base, NULL, &model, &err), PIPIT_OK);
    struct pipit_toolset *ts = NULL;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err),
                     PIPIT_OK);
    struct pipit_agent_params ap = pipit_agent_default_params();
    ap.adapter = fx.adapter;
    ap.n_threads = 1;
    struct pipit_agent *agent = NULL;
    if (pipit_agent_init(model, ts, &ap, &agent, &err) != PIPIT_OK) {
        fail_msg("agent: %s", err.text);
    }
    struct pipit_turn *turn = NULL;
    assert_int_equal(pipit_agent_turn(agent, "what's the zoom?", &turn), PIPIT_OK);
    assert_non_null(turn);
    pipit_turn_free(turn);
    pipit_agent_free(agent);

    /* an adapter for another model: llama.cpp refuses its shapes, the agent says so */
    struct pipit_model *other = NULL;
    assert_int_equal(
        pipit_model_load(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf", NULL, &other, &err),
        PIPIT_OK);
    assert_int_equal(pipit_agent_init(other, ts, &ap, &agent, &err), PIPIT_ERR_ADAPTER);
    assert_non_null(strstr(err.text, fx.adapter));
    pipit_model_free(other);

    /* a twin of the base: the same name and shapes, other weights (a retrained base) */
    char twin[512];
    path_in_tmp(twin, sizeof(twin), "twin.gguf");
    struct pipit_make_model_params mp = base_params();
    mp.seed = 7;
    assert_int_equal(pipit_make_model(&mp, twin, &err), PIPIT_OK);
    assert_int_equal(pipit_model_load(twin, NULL, &other, &err), PIPIT_OK);
    assert_int_equal(pipit_agent_init(other, ts, &ap, &agent, &err), PIPIT_ERR_ADAPTER);
    assert_non_null(strstr(err.text, "weights differ"));
    pipit_model_free(other);
    remove(twin);
    pipit_toolset_free(ts);
    pipit_model_free(model);
}

/* A deep base (30 blocks, as SmolLM2-135M): forward, backward and 210 AdamW updates need more
 * than ggml_opt's 2,048 graph nodes; the trainer sizes its graph by depth. */
static void test_deep_base(void **state) {
    (void)state;
    struct pipit_error err;
    char deep[512], out[512];
    path_in_tmp(deep, sizeof(deep), "deep.gguf");
    path_in_tmp(out, sizeof(out), "deep-lora.gguf");
    struct pipit_make_model_params mp = pipit_make_model_default_params();
    mp.vocab_path = fx.vocab;
    mp.n_embd = 32;
    mp.n_layer = 30;
    mp.n_head = 4;
    mp.n_head_kv = 1;
    mp.n_ff = 64;
    mp.init_std = 0.2f;
    assert_int_equal(pipit_make_model(&mp, deep, &err), PIPIT_OK);
    struct pipit_train_params tp = lora_params();
    tp.base = deep;
    tp.n_steps = 2;
    struct pipit_train_result res;
    if (pipit_train(&tp, fx.ds, out, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    assert_int_equal(res.steps, 2);
    assert_int_equal(res.n_params, (uint64_t)30 * (512 + 320 + 320 + 512 + 768 * 3));
    struct pipit_model *model = NULL;
    assert_int_equal(pipit_model_load(deep, NULL, &model, &err), PIPIT_OK);
    struct pipit_adapter *a = NULL;
    assert_int_equal(pipit_adapter_load(model, out, &a, &err), PIPIT_OK);
    pipit_adapter_free(a);
    pipit_model_free(model);
    remove(deep);
    remove(out);
}

/* What the trainer's graph does not compute, or a base that is not one, is refused by name. */
static void test_bad_bases(void **state) {
    (void)state;
    struct pipit_error err;
    struct pipit_train_result res;
    char out[512];
    path_in_tmp(out, sizeof(out), "bad.gguf");
    struct pipit_train_params tp = lora_params();
    tp.n_steps = 1;

    tp.lora_targets = "attn_q,attn_x";
    assert_int_equal(pipit_train(&tp, fx.ds, out, &res, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "attn_x"));
    tp.lora_targets = "output"; /* tied to the embeddings */
    assert_int_equal(pipit_train(&tp, fx.ds, out, &res, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "output"));
    tp.lora_targets = "attn_q,ffn_up"; /* two pairs a block */
    assert_int_equal(pipit_train(&tp, fx.ds, out, &res, &err), PIPIT_OK);
    assert_int_equal(res.n_params, (uint64_t)N_LAYER * (1024 + 1536));
    tp.lora_targets = NULL;

    tp.lora_rank = 0;
    assert_int_equal(pipit_train(&tp, fx.ds, out, &res, &err), PIPIT_ERR_INVALID_ARG);
    tp.lora_rank = 8;

    /* an adapter is not a base */
    tp.base = out;
    assert_int_equal(pipit_train(&tp, fx.ds, out, &res, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, out));
    /* no file */
    char none[512];
    path_in_tmp(none, sizeof(none), "none.gguf");
    tp.base = none;
    assert_int_not_equal(pipit_train(&tp, fx.ds, out, &res, &err), PIPIT_OK);
    assert_non_null(strstr(err.text, none));
    remove(out);
}

/* The permanent prefix of the agent on `model` with the pack at `tools_path` after one turn. */
static int32_t prefix_tokens(struct pipit_model *model, const char *tools_path) {
    struct pipit_error err;
    struct pipit_toolset *ts = NULL;
    assert_int_equal(pipit_toolset_load_file(tools_path, &ts, &err), PIPIT_OK);
    struct pipit_agent_params ap = pipit_agent_default_params();
    ap.n_threads = 1;
    struct pipit_agent *agent = NULL;
    if (pipit_agent_init(model, ts, &ap, &agent, &err) != PIPIT_OK) {
        fail_msg("agent: %s", err.text);
    }
    struct pipit_turn *turn = NULL;
    assert_int_equal(pipit_agent_turn(agent, "thanks", &turn), PIPIT_OK);
    int32_t n = turn->n_permanent;
    pipit_turn_free(turn);
    pipit_agent_free(agent);
    pipit_toolset_free(ts);
    return n;
}

/* One data set for several packs (a base for their adapters): each example keeps its pack's
 * system text, the model records them all, and the agent prompts it with its tool set's. */
static void test_union_base(void **state) {
    (void)state;
    struct pipit_error err;
    const char *paths[2] = {PIPIT_SOURCE_DIR "/tools/phone.json",
                            PIPIT_SOURCE_DIR "/tools/home.json"};
    char systems[2][512];
    struct pipit_dataset *all = NULL;
    int32_t n_train = 0;
    for (int k = 0; k < 2; k++) {
        struct pipit_toolset *ts = NULL;
        assert_int_equal(pipit_toolset_load_file(paths[k], &ts, &err), PIPIT_OK);
        snprintf(systems[k], sizeof(systems[k]), "%s", pipit_datagen_pack_system(ts));
        struct pipit_datagen_params dp = pipit_datagen_default_params();
        dp.n_train = 300;
        dp.n_valid = 10;
        struct pipit_dataset *one = NULL;
        assert_int_equal(pipit_datagen_pack(ts, &dp, &one, &err), PIPIT_OK);
        pipit_toolset_free(ts);
        n_train += pipit_dataset_size(one, PIPIT_SPLIT_TRAIN);
        if (k == 0) {
            all = one;
            continue;
        }
        assert_int_equal(pipit_dataset_append(all, one, systems[1], &err), PIPIT_OK);
        assert_int_equal(pipit_dataset_append(all, all, systems[1], &err), PIPIT_ERR_INVALID_ARG);
        assert_int_equal(pipit_dataset_append(all, fx.ds, systems[1], &err),
                         PIPIT_ERR_INVALID_ARG); /* the camera generator's categories */
        pipit_dataset_free(one);
    }
    assert_int_equal(pipit_dataset_set_system(all, systems[0], &err), PIPIT_OK);
    assert_int_equal(pipit_dataset_size(all, PIPIT_SPLIT_TRAIN), n_train);
    struct pipit_example first, last;
    assert_true(pipit_dataset_get(all, PIPIT_SPLIT_TRAIN, 0, &first));
    assert_true(pipit_dataset_get(all, PIPIT_SPLIT_TRAIN, n_train - 1, &last));
    assert_string_equal(first.system, systems[0]);
    assert_string_equal(last.system, systems[1]);
    int n_second = 0; /* interleaved: the first examples hold both packs */
    for (int32_t i = 0; i < 20; i++) {
        struct pipit_example ex;
        assert_true(pipit_dataset_get(all, PIPIT_SPLIT_TRAIN, i, &ex));
        n_second += strcmp(ex.system, systems[1]) == 0;
    }
    assert_true(n_second >= 7 && n_second <= 13);
    char *prompt = pipit_train_prompt_example("ignored", &last);
    assert_non_null(prompt);
    assert_true(strncmp(prompt, systems[1], strlen(systems[1])) == 0);
    free(prompt);

    char vocab[512], model_path[512], list[1100];
    path_in_tmp(vocab, sizeof(vocab), "union-vocab.gguf");
    path_in_tmp(model_path, sizeof(model_path), "union.gguf");
    assert_int_equal(pipit_vocab_build(all, systems[0], 400, vocab, &err), PIPIT_OK);
    snprintf(list, sizeof(list), "%s\n%s", systems[0], systems[1]);
    struct pipit_train_params tp = pipit_train_default_params();
    tp.vocab_path = vocab;
    tp.system = systems[0];
    tp.systems = list;
    tp.n_embd = 32;
    tp.n_layer = 1;
    tp.n_head = 2;
    tp.n_ff = 64;
    tp.n_batch = 2;
    tp.n_steps = 2;
    tp.n_ctx = 256; /* room for the home pack's system sentence in a 400-token vocabulary */
    if (pipit_train(&tp, all, model_path, NULL, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    struct pipit_model *model = NULL;
    assert_int_equal(pipit_model_load(model_path, NULL, &model, &err), PIPIT_OK);
    char meta[1100];
    assert_true(pipit_model_meta_str(model, "pipit.prompt.systems", meta, sizeof(meta)) > 0);
    assert_string_equal(meta, list);
    /* the home tools get the home system text (a sentence), the phone tools "phone" */
    int32_t home_sys[256];
    int32_t n_home_sys = pipit_tokenize(model, systems[1], false, false, home_sys, 256);
    int32_t n_home = prefix_tokens(model, paths[1]);
    int32_t n_phone = prefix_tokens(model, paths[0]);
    assert_true(n_home_sys > 8);
    assert_true(n_home >= n_home_sys);
    assert_true(n_phone < n_home - n_home_sys / 2);
    pipit_model_free(model);
    remove(vocab);
    remove(model_path);
    pipit_dataset_free(all);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adapter_trains_and_loads),
        cmocka_unit_test(test_agent_with_adapter),
        cmocka_unit_test(test_deep_base),
        cmocka_unit_test(test_bad_bases),
        cmocka_unit_test(test_union_base),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
