/*
 * test-trainmeta.c - what a trained model says about itself, and the data categories of issue 15.
 *
 *   test-trainmeta          unit: undo paraphrases answer <call>undo() and their near misses
 *                           keep their own calls; out-of-range numbers are copied as said; memory
 *                           lines look like a session's Context State Object
 *   test-trainmeta --model  a tiny training writes pipit.train.n_ctx and a general.file_type that
 *                           matches its matrices; --convert keeps the first and fixes the second;
 *                           an example too long for a row loses its oldest memory lines
 */
#include "gguf.h"
#include "testutil.h"

#include <ctype.h>

static struct pipit_dataset *make_data(uint64_t seed, int32_t n_train, int32_t n_valid) {
    struct pipit_datagen_params p = pipit_datagen_default_params();
    p.seed = seed;
    p.n_train = n_train;
    p.n_valid = n_valid;
    struct pipit_dataset *ds = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_datagen_camera(&p, &ds, &err), PIPIT_OK);
    assert_non_null(ds);
    return ds;
}

static bool contains_word(const char *text, const char *word) {
    size_t n = strlen(word);
    for (const char *p = text; (p = strstr(p, word)) != NULL; p++) {
        bool starts = p == text || !isalpha((unsigned char)p[-1]);
        bool ends = !isalpha((unsigned char)p[n]);
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

/* ============================================================================
 * unit: data */

/* Undo is an outcome: every undo paraphrase answers <call>undo(), nothing else does, and the
 * near misses (go back to the rear camera, cancel the countdown, stop recording) keep their
 * calls. Both splits have undo examples, so held-out undo phrasings are measured. */
static void test_undo_and_near_misses(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(1, 20000, 1000);
    int undo[2] = {0, 0}, near = 0;
    for (int split = 0; split < 2; split++) {
        enum pipit_split sp = (enum pipit_split)split;
        for (int32_t i = 0; i < pipit_dataset_size(ds, sp); i++) {
            struct pipit_example ex;
            pipit_dataset_get(ds, sp, i, &ex);
            if (ex.tracker) {
                continue;
            }
            bool is_undo = strcmp(ex.output, "<call>undo()") == 0;
            assert_int_equal(is_undo, strcmp(ex.category, "undo") == 0);
            undo[split] += is_undo;
            char low[256];
            size_t k = 0;
            for (; ex.utterance[k] != '\0' && k + 1 < sizeof(low); k++) {
                low[k] = (char)tolower((unsigned char)ex.utterance[k]);
            }
            low[k] = '\0';
            if (is_undo) {
                /* an undo names no setting: "undo the zoom, go to 1x" is a zoom command */
                assert_false(contains_word(low, "timer") || contains_word(low, "rear") ||
                             contains_word(low, "recording") || contains_word(low, "zoom"));
            }
            if (strstr(low, "cancel the countdown") != NULL) {
                assert_string_equal(ex.output, "<call>set_timer(seconds=0)");
                near++;
            }
            if (strstr(low, "back to the rear") != NULL) {
                assert_string_equal(ex.output, "<call>switch_camera(facing=\"back\")");
                near++;
            }
            if (strstr(low, "cancel the recording") != NULL) {
                assert_string_equal(ex.output, "<call>record_video(action=\"stop\")");
                near++;
            }
        }
    }
    assert_true(undo[0] > 200); /* about 2% of the examples */
    assert_true(undo[1] > 5);
    assert_true(near > 20);
    pipit_dataset_free(ds);
}

/* 0..99 as the generator may say it: digits or words. */
static bool says_number(const char *utt, int v) {
    static const char *const words[] = {"zero", "one",   "two",   "three", "four", "five",
                                        "six",  "seven", "eight", "nine",  "ten"};
    static const char *const tens[] = {"",      "",      "twenty",  "thirty", "forty",
                                       "fifty", "sixty", "seventy", "eighty", "ninety"};
    char digits[16];
    snprintf(digits, sizeof(digits), "%d", v);
    if (strstr(utt, digits) != NULL) {
        return true;
    }
    if (v >= 0 && v <= 10) {
        return contains_word(utt, words[v]);
    }
    return v < 100 && contains_word(utt, tens[v / 10]);
}

/* Out-of-range numbers are generated as asked (refused later by validation, never bent): a
 * modest share of each numeric tool's commands asks for one, and the call carries the number
 * the person said. */
static void test_out_of_range_copied(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(2, 30000, 10);
    int zoom = 0, zoom_out = 0, timer = 0, timer_out = 0, ev = 0, ev_out = 0, jpeg = 0,
        jpeg_out = 0, said = 0, integral = 0;
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (ex.tracker || strcmp(ex.category, "retry") == 0) {
            continue; /* a retry repeats the memory's words, not the utterance's */
        }
        double v = 0;
        int iv = 0;
        if (sscanf(ex.output, "<call>set_zoom(level=%lf)", &v) == 1 &&
            strcmp(ex.category, "zoom") == 0) {
            zoom++;
            if (v < 0.5 || v > 10) {
                zoom_out++;
                said += v == (int)v && says_number(ex.utterance, (int)v);
                integral += v == (int)v;
            }
        } else if (sscanf(ex.output, "<call>set_timer(seconds=%d)", &iv) == 1 && iv != 0) {
            timer++;
            if (iv != 3 && iv != 5 && iv != 10) {
                timer_out++;
                said += says_number(ex.utterance, iv);
                integral++;
            }
        } else if (sscanf(ex.output, "<call>set_exposure(ev=%lf)", &v) == 1) {
            ev++;
            ev_out += v < -2 || v > 2;
        } else if (sscanf(ex.output, "<call>set_jpeg_quality(quality=%d)", &iv) == 1) {
            jpeg++;
            if (iv < 50) {
                jpeg_out++;
                said += says_number(ex.utterance, iv);
                integral++;
            }
        }
    }
    /* 12% of the numeric commands (a wide band: the share, not the draw, is the point) */
    assert_true(zoom_out * 100 > zoom * 5 && zoom_out * 100 < zoom * 20);
    assert_true(timer_out * 100 > timer * 5 && timer_out * 100 < timer * 20);
    assert_true(ev_out > 0 && ev_out * 100 < ev * 20);
    assert_true(jpeg_out * 100 > jpeg * 5 && jpeg_out * 100 < jpeg * 20);
    /* the person's number is in the words (all but the 10% with a typo in the number word) */
    assert_true(said * 100 > integral * 88);
    pipit_dataset_free(ds);
}

/* Memory lines are a session's CSO: a device key appears at most once, a line at most once,
 * and long sessions (12+ lines) are common; about a third of the examples are first turns. */
static void test_session_memory(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(3, 20000, 10);
    int none = 0, long_ = 0, n = 0;
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (ex.tracker) {
            continue;
        }
        n++;
        int lines = 0;
        const char *keys[64];
        size_t key_len[64];
        for (const char *p = ex.memory; *p != '\0';) {
            const char *nl = strchr(p, '\n');
            assert_non_null(nl);
            const char *colon = strstr(p, ": ");
            assert_true(colon != NULL && colon < nl);
            size_t kl = (size_t)(colon - p);
            bool fact = strncmp(p, "cloud", kl) != 0 && strncmp(p, "user_goal", kl) != 0 &&
                        strncmp(p, "tool_error", kl) != 0 && strncmp(p, "done", kl) != 0 &&
                        strncmp(p, "subject", kl) != 0 && strncmp(p, "occasion", kl) != 0 &&
                        strncmp(p, "user_name", kl) != 0 && strncmp(p, "agent_refusals", kl) != 0;
            for (int k = 0; fact && k < lines && k < 64; k++) {
                if (key_len[k] == kl && strncmp(keys[k], p, kl) == 0) {
                    fail_msg("key %.*s twice in:\n%s", (int)kl, p, ex.memory);
                }
            }
            if (lines < 64) {
                keys[lines] = p;
                key_len[lines] = kl;
            }
            /* the same line never twice */
            size_t ll = (size_t)(nl - p) + 1;
            for (const char *q = nl + 1; *q != '\0'; q = strchr(q, '\n') + 1) {
                if (strncmp(q, p, ll) == 0) {
                    fail_msg("line twice in:\n%s", ex.memory);
                }
            }
            lines++;
            p = nl + 1;
        }
        none += lines == 0;
        long_ += lines >= 12;
    }
    assert_true(none * 100 > n * 25 && none * 100 < n * 45);
    assert_true(long_ * 100 > n * 10);
    pipit_dataset_free(ds);
}

/* ============================================================================
 * model: metadata of a trained and a converted model */

static void tmp_path(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "%s/test-trainmeta-%ld-%s", PIPIT_TEST_MODEL_DIR, (long)getpid(), name);
}

struct meta {
    int32_t n_ctx; /* pipit.train.n_ctx, -1 when absent */
    int64_t file_type;
    int n_q8, n_f16;
};

static struct meta read_meta(const char *path) {
    struct meta m = {.n_ctx = -1, .file_type = -1};
    struct ggml_context *data = NULL;
    struct gguf_init_params gp = {.no_alloc = true, .ctx = &data};
    struct gguf_context *g = gguf_init_from_file(path, gp);
    assert_non_null(g);
    int64_t k = gguf_find_key(g, "pipit.train.n_ctx");
    if (k >= 0) {
        assert_int_equal(gguf_get_kv_type(g, k), GGUF_TYPE_INT32);
        m.n_ctx = gguf_get_val_i32(g, k);
    }
    k = gguf_find_key(g, "general.file_type");
    if (k >= 0) {
        assert_int_equal(gguf_get_kv_type(g, k), GGUF_TYPE_UINT32);
        m.file_type = gguf_get_val_u32(g, k);
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        enum ggml_type t = gguf_get_tensor_type(g, i);
        m.n_q8 += t == GGML_TYPE_Q8_0;
        m.n_f16 += t == GGML_TYPE_F16;
    }
    gguf_free(g);
    ggml_free(data);
    return m;
}

static void test_train_metadata(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(7, 400, 8);
    char vocab[512], model[512], q8[512], conv[512];
    tmp_path(vocab, sizeof(vocab), "vocab.gguf");
    tmp_path(model, sizeof(model), "f32.gguf");
    tmp_path(q8, sizeof(q8), "q8.gguf");
    tmp_path(conv, sizeof(conv), "conv.gguf");
    struct pipit_error err;
    assert_int_equal(pipit_vocab_build(ds, "camera", 400, vocab, &err), PIPIT_OK);

    struct pipit_train_params tp = pipit_train_default_params();
    tp.vocab_path = vocab;
    tp.n_embd = 32;
    tp.n_layer = 1;
    tp.n_head = 2;
    tp.n_ff = 64;
    tp.n_batch = 2;
    tp.n_steps = 4;
    tp.warmup = 2;
    tp.n_threads = 1;
    tp.n_ctx = 72; /* not the default: the key must say what was trained */
    tp.weight_type = PIPIT_WEIGHTS_F32;
    struct pipit_train_result res;
    if (pipit_train(&tp, ds, model, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    /* rows of 72 tokens are too short for the longest sessions: they lose old memory lines
     * instead of being skipped */
    assert_true(res.n_trimmed > 0);
    struct meta m = read_meta(model);
    assert_int_equal(m.n_ctx, 72);
    assert_int_equal(m.file_type, 0); /* LLAMA_FTYPE_ALL_F32 */
    assert_int_equal(m.n_q8 + m.n_f16, 0);

    tp.weight_type = PIPIT_WEIGHTS_Q8_0;
    if (pipit_train(&tp, ds, q8, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    m = read_meta(q8);
    assert_int_equal(m.n_ctx, 72);
    assert_int_equal(m.file_type, 7); /* LLAMA_FTYPE_MOSTLY_Q8_0 */
    assert_true(m.n_q8 > 0);

    /* --convert keeps the trained length and says what it wrote */
    assert_int_equal(pipit_train_convert(model, conv, PIPIT_WEIGHTS_F16, 0, &err), PIPIT_OK);
    m = read_meta(conv);
    assert_int_equal(m.n_ctx, 72);
    assert_int_equal(m.file_type, 1); /* LLAMA_FTYPE_MOSTLY_F16 */
    assert_true(m.n_f16 > 0);
    assert_int_equal(pipit_train_convert(model, conv, PIPIT_WEIGHTS_Q8_0, 0, &err), PIPIT_OK);
    m = read_meta(conv);
    assert_int_equal(m.n_ctx, 72);
    assert_int_equal(m.file_type, 7);
    /* a length given for the convert never overrides what the model says... */
    assert_int_equal(pipit_train_convert(model, conv, PIPIT_WEIGHTS_Q8_0, 128, &err), PIPIT_OK);
    assert_int_equal(read_meta(conv).n_ctx, 72);
    /* ...and is recorded for a model that does not say (a pipit-made random model) */
    char bare[512], bare_conv[512];
    snprintf(bare, sizeof(bare), "%s/tiny-spm.gguf", PIPIT_TEST_MODEL_DIR);
    tmp_path(bare_conv, sizeof(bare_conv), "bare.gguf");
    assert_int_equal(read_meta(bare).n_ctx, -1);
    assert_int_equal(pipit_train_convert(bare, bare_conv, PIPIT_WEIGHTS_F32, 0, &err), PIPIT_OK);
    assert_int_equal(read_meta(bare_conv).n_ctx, -1);
    assert_int_equal(pipit_train_convert(bare, bare_conv, PIPIT_WEIGHTS_F32, 128, &err), PIPIT_OK);
    assert_int_equal(read_meta(bare_conv).n_ctx, 128);
    remove(bare_conv);

    /* libllama reads the file type the same way */
    struct pipit_model *lm = test_load_model(conv);
    struct pipit_model_info info;
    pipit_model_get_info(lm, &info);
    assert_non_null(strstr(info.desc, "Q8_0"));
    pipit_model_free(lm);

    /* the held-out evaluation trims as training does and runs */
    struct pipit_train_eval_result ev;
    assert_int_equal(pipit_train_evaluate(conv, ds, PIPIT_SPLIT_VALID, 8, 1, NULL, NULL, &ev, &err),
                     PIPIT_OK);
    assert_int_equal(ev.n, 8);

    remove(vocab);
    remove(model);
    remove(q8);
    remove(conv);
    pipit_dataset_free(ds);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_train_metadata),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_undo_and_near_misses),
        cmocka_unit_test(test_out_of_range_copied),
        cmocka_unit_test(test_session_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
