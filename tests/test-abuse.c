/*
 * test-abuse.c - bad input and hostile files: refused whole, never half-done, never an abort.
 *
 *   test-abuse           unit: utterance checks (empty, blank, invalid UTF-8, too long) on the
 *                        scripted backend
 *   test-abuse --cli     the `pipit` command on the bundled model: over-long stdin lines are one
 *                        refused utterance, `run --json` failures are JSON objects with a code,
 *                        a session that cannot be resumed is refused and never overwritten
 */
#include "agent.h"
#include "fake_backend.h"
#include "gguf.h"
#include "testutil.h"

#include <jansson.h>
#include <sys/wait.h>

static struct pipit_toolset *camera_tools(void) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

/* ============================================================================ utterances */

static void expect_refused_utterance(struct pipit_agent *a,
                                     struct fake_backend *f,
                                     const char *utterance,
                                     const char *needle) {
    int steps = f->n_steps;
    struct pipit_turn *t = (struct pipit_turn *)0x1;
    enum pipit_status st = pipit_agent_turn(a, utterance, &t);
    if (st != PIPIT_ERR_INVALID_ARG || strstr(pipit_agent_errmsg(a), needle) == NULL) {
        fail_msg("utterance of %zu bytes: got %s '%s', want a refusal with '%s'", strlen(utterance),
                 pipit_status_str(st), pipit_agent_errmsg(a), needle);
    }
    assert_null(t);
    assert_int_equal(f->n_steps, steps); /* the model was not asked */
}

static void test_utterance_checks(void **state) {
    (void)state;
    struct pipit_toolset *ts = camera_tools();
    struct fake_backend f;
    memset(&f, 0, sizeof(f));
    for (int i = 0; i < FAKE_MAX_STEPS; i++) {
        f.script[i] = "<call>take_photo()";
    }
    f.n_script = FAKE_MAX_STEPS;
    struct pipit_agent_params p = pipit_agent_default_params();
    p.syntax = PIPIT_SYNTAX_PIPIT;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&f), &a, &err),
                     PIPIT_OK);
    expect_refused_utterance(a, &f, "", "empty");
    expect_refused_utterance(a, &f, "   \t \r\n ", "empty");
    /* a stray byte, an overlong '/', a UTF-16 surrogate, a cut 3-byte sequence, above U+10FFFF */
    const char *bad[] = {"zoom in to \xff\xfe"
                         "2x",
                         "zoom \xc0\xaf in", "zoom \xed\xa0\x80 in", "zoom in \xe2\x82",
                         "zoom \xf5\x80\x80\x80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        expect_refused_utterance(a, &f, bad[i], "not valid UTF-8");
    }
    /* the limit, and one byte over it: refused whole, so no tail ever runs as a command */
    char *longest = malloc(PIPIT_MAX_UTTERANCE_BYTES + 2);
    assert_non_null(longest);
    memset(longest, 'x', PIPIT_MAX_UTTERANCE_BYTES + 1);
    memcpy(longest + PIPIT_MAX_UTTERANCE_BYTES + 1 - 12, "take a photo", 12);
    longest[PIPIT_MAX_UTTERANCE_BYTES + 1] = '\0';
    expect_refused_utterance(a, &f, longest, "limit is 4095 bytes");
    assert_int_equal(f.n_steps, 0);
    /* valid text passes: UTF-8 words, and exactly the limit */
    struct pipit_turn *t = NULL;
    assert_int_equal(pipit_agent_turn(a, "prends une photo, s'il te pla\xc3\xaet", &t), PIPIT_OK);
    assert_int_equal(t->n_calls, 1);
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_turn(a, longest + 1, &t), PIPIT_OK);
    pipit_turn_free(t);
    free(longest);
    test_agent_free(a);
    pipit_toolset_free(ts);
}

/* ============================================================================ GGUF corpus */

/* The corpus is made from the bundled model (pipit's own, trained by pipit): truncations, byte
 * flips in the header and metadata, and hyperparameter edits written through gguf's API with
 * the original tensor data. Every file is loaded in this process: an abort fails the test.
 * PIPIT_GGUF_FORK=1 loads each in a child instead and lists the ones that die (diagnosis). */
#define GGUF_BASE PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf"

struct gguf_tally {
    int files, loaded, refused, decoded;
    int by_status[32];
};

static char gguf_dir[] = "/tmp/pipit-gguf-XXXXXX";

/* Load `path`; when it loads, a context and a short prefill must return a status too. */
static void gguf_try(const char *path, const char *what, struct gguf_tally *tally) {
    tally->files++;
    if (getenv("PIPIT_GGUF_FORK") != NULL) {
        fflush(stdout);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid != 0) {
            int status = 0;
            waitpid(pid, &status, 0);
            if (WIFSIGNALED(status)) {
                print_message("ABORT: %s (signal %d)\n", what, WTERMSIG(status));
            }
            return;
        }
    }
    struct pipit_model *m = NULL;
    struct pipit_error err;
    enum pipit_status st = pipit_model_load(path, NULL, &m, &err);
    if (st != PIPIT_OK) {
        tally->refused++;
        tally->by_status[st < 32 ? st : 31]++;
        if (strstr(err.text, path) == NULL && strstr(err.text, "engine:") == NULL) {
            fail_msg("%s: the message names neither the file nor the module: %s", what, err.text);
        }
        if (getenv("PIPIT_GGUF_VERBOSE") != NULL) {
            print_message("%-48s %s\n", what, err.text);
        }
    } else {
        tally->loaded++;
        struct pipit_context_params cp = pipit_context_default_params();
        cp.n_ctx = 64;
        cp.n_threads = 1;
        struct pipit_context *ctx = NULL;
        if (pipit_context_init(m, &cp, &ctx, &err) == PIPIT_OK) {
            int32_t toks[4] = {1, 2, 3, 4};
            struct pipit_model_info info;
            pipit_model_get_info(m, &info);
            for (int i = 0; i < 4; i++) {
                toks[i] = info.n_vocab > 0 ? toks[i] % info.n_vocab : 0;
            }
            if (pipit_context_append(ctx, PIPIT_REGION_PERMANENT, toks, 4) == PIPIT_OK) {
                tally->decoded++;
            }
            pipit_context_free(ctx);
        }
        pipit_model_free(m);
    }
    if (getenv("PIPIT_GGUF_FORK") != NULL) {
        _exit(0);
    }
}

/* Rewrite the base with its metadata edited by `edit`, keeping the tensor data. */
typedef void (*gguf_edit_fn)(struct gguf_context *g, const void *arg);

static void gguf_write_edited(const char *out,
                              const unsigned char *base,
                              size_t base_len,
                              gguf_edit_fn edit,
                              const void *arg) {
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g = gguf_init_from_file(GGUF_BASE, gp);
    assert_non_null(g);
    size_t data_off = gguf_get_data_offset(g);
    edit(g, arg);
    size_t meta = gguf_get_meta_size(g);
    unsigned char *buf = malloc(meta + (base_len - data_off));
    assert_non_null(buf);
    gguf_get_meta_data(g, buf);
    memcpy(buf + meta, base + data_off, base_len - data_off);
    test_write_file(out, buf, meta + (base_len - data_off));
    free(buf);
    gguf_free(g);
}

struct kv_edit {
    const char *key;
    enum gguf_type type; /* GGUF_TYPE_COUNT: remove the key */
    double value;
    const char *str;
};

static void edit_kv(struct gguf_context *g, const void *arg) {
    const struct kv_edit *e = arg;
    switch (e->type) {
        case GGUF_TYPE_UINT32:
            gguf_set_val_u32(g, e->key, (uint32_t)(int64_t)e->value);
            break;
        case GGUF_TYPE_INT32:
            gguf_set_val_i32(g, e->key, (int32_t)e->value);
            break;
        case GGUF_TYPE_UINT64:
            gguf_set_val_u64(g, e->key, (uint64_t)e->value);
            break;
        case GGUF_TYPE_FLOAT32:
            gguf_set_val_f32(g, e->key, (float)e->value);
            break;
        case GGUF_TYPE_STRING:
            gguf_set_val_str(g, e->key, e->str);
            break;
        case GGUF_TYPE_ARRAY: {
            int32_t vals[3] = {(int32_t)e->value, (int32_t)e->value, (int32_t)e->value};
            gguf_set_arr_data(g, e->key, GGUF_TYPE_INT32, vals, 3);
            break;
        }
        default:
            gguf_remove_key(g, e->key);
            break;
    }
}

static void edit_none(struct gguf_context *g, const void *arg) {
    (void)g;
    (void)arg;
}

/* Keep only the first `*n` tokenizer tokens (scores and types too). */
static void edit_vocab(struct gguf_context *g, const void *arg) {
    size_t keep = *(const size_t *)arg;
    int64_t k = gguf_find_key(g, "tokenizer.ggml.tokens");
    assert_true(k >= 0);
    size_t n = gguf_get_arr_n(g, k);
    keep = keep < n ? keep : n;
    const char **strs = calloc(keep + 1, sizeof(*strs));
    char **copies = calloc(keep + 1, sizeof(*copies));
    for (size_t i = 0; i < keep; i++) {
        copies[i] = strdup(gguf_get_arr_str(g, k, i));
        strs[i] = copies[i];
    }
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", strs, keep);
    const char *arrs[] = {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"};
    for (size_t a = 0; a < 2; a++) {
        int64_t ka = gguf_find_key(g, arrs[a]);
        if (ka >= 0) {
            enum gguf_type t = gguf_get_arr_type(g, ka);
            size_t esz = t == GGUF_TYPE_FLOAT32 || t == GGUF_TYPE_INT32 ? 4 : 0;
            if (esz > 0) {
                void *copy = malloc(keep * esz + 1);
                memcpy(copy, gguf_get_arr_data(g, ka), keep * esz);
                gguf_set_arr_data(g, arrs[a], t, copy, keep);
                free(copy);
            }
        }
    }
    for (size_t i = 0; i < keep; i++) {
        free(copies[i]);
    }
    free(copies);
    free(strs);
}

static void test_gguf_corpus(void **state) {
    (void)state;
    assert_non_null(mkdtemp(gguf_dir));
    size_t n = 0;
    unsigned char *base = test_read_file(GGUF_BASE, &n);
    char path[600];
    snprintf(path, sizeof(path), "%s/m.gguf", gguf_dir);
    struct gguf_tally tally = {0};
    char what[160];

    /* the rewrite itself must load: the edits below change only what they say */
    gguf_write_edited(path, base, n, edit_none, NULL);
    gguf_try(path, "unedited rewrite", &tally);
    assert_true(tally.loaded == 1 || getenv("PIPIT_GGUF_FORK") != NULL);

    /* hyperparameter edits */
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context *g0 = gguf_init_from_file(GGUF_BASE, gp);
    assert_non_null(g0);
    size_t meta_end = gguf_get_data_offset(g0);
    gguf_free(g0);
    const double U32MAX = 4294967295.0;
    const struct kv_edit edits[] = {
        {"llama.block_count", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.block_count", GGUF_TYPE_UINT32, 1, NULL},
        {"llama.block_count", GGUF_TYPE_UINT32, 3, NULL},
        {"llama.block_count", GGUF_TYPE_UINT32, 513, NULL},
        {"llama.block_count", GGUF_TYPE_UINT32, 1000, NULL},
        {"llama.block_count", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.block_count", GGUF_TYPE_INT32, -1, NULL},
        {"llama.block_count", GGUF_TYPE_UINT64, 1e12, NULL},
        {"llama.block_count", GGUF_TYPE_STRING, 0, "two"},
        {"llama.block_count", GGUF_TYPE_COUNT, 0, NULL},
        {"llama.embedding_length", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.embedding_length", GGUF_TYPE_UINT32, 1, NULL},
        {"llama.embedding_length", GGUF_TYPE_UINT32, 7, NULL},
        {"llama.embedding_length", GGUF_TYPE_UINT32, 1 << 20, NULL},
        {"llama.embedding_length", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.embedding_length", GGUF_TYPE_COUNT, 0, NULL},
        {"llama.feed_forward_length", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.feed_forward_length", GGUF_TYPE_UINT32, 1, NULL},
        {"llama.feed_forward_length", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.feed_forward_length", GGUF_TYPE_ARRAY, 0, NULL},
        {"llama.attention.head_count", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.attention.head_count", GGUF_TYPE_UINT32, 3, NULL},
        {"llama.attention.head_count", GGUF_TYPE_UINT32, 1000, NULL},
        {"llama.attention.head_count", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.attention.head_count", GGUF_TYPE_ARRAY, 0, NULL},
        {"llama.attention.head_count", GGUF_TYPE_ARRAY, 3, NULL},
        {"llama.attention.head_count", GGUF_TYPE_COUNT, 0, NULL},
        {"llama.attention.head_count_kv", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.attention.head_count_kv", GGUF_TYPE_UINT32, 3, NULL},
        {"llama.attention.head_count_kv", GGUF_TYPE_UINT32, 1000, NULL},
        {"llama.attention.head_count_kv", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.attention.head_count_kv", GGUF_TYPE_ARRAY, 0, NULL},
        {"llama.attention.key_length", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.attention.key_length", GGUF_TYPE_UINT32, 7, NULL},
        {"llama.attention.key_length", GGUF_TYPE_UINT32, 100000, NULL},
        {"llama.attention.value_length", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.attention.value_length", GGUF_TYPE_UINT32, 100000, NULL},
        {"llama.rope.dimension_count", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.rope.dimension_count", GGUF_TYPE_UINT32, 7, NULL},
        {"llama.rope.dimension_count", GGUF_TYPE_UINT32, 100000, NULL},
        {"llama.rope.freq_base", GGUF_TYPE_FLOAT32, 0, NULL},
        {"llama.rope.freq_base", GGUF_TYPE_FLOAT32, -1, NULL},
        {"llama.attention.layer_norm_rms_epsilon", GGUF_TYPE_FLOAT32, -1, NULL},
        {"llama.context_length", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.context_length", GGUF_TYPE_UINT32, 1, NULL},
        {"llama.context_length", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.vocab_size", GGUF_TYPE_UINT32, 0, NULL},
        {"llama.vocab_size", GGUF_TYPE_UINT32, 5, NULL},
        {"llama.vocab_size", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"llama.expert_count", GGUF_TYPE_UINT32, 4, NULL},
        {"llama.expert_used_count", GGUF_TYPE_UINT32, 9, NULL},
        {"llama.expert_count", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"tokenizer.ggml.bos_token_id", GGUF_TYPE_UINT32, 1e9, NULL},
        {"tokenizer.ggml.eos_token_id", GGUF_TYPE_UINT32, U32MAX, NULL},
        {"tokenizer.ggml.unknown_token_id", GGUF_TYPE_UINT32, 1e9, NULL},
        {"tokenizer.ggml.padding_token_id", GGUF_TYPE_INT32, -7, NULL},
        {"tokenizer.ggml.model", GGUF_TYPE_STRING, 0, "nonsense"},
        {"tokenizer.ggml.model", GGUF_TYPE_STRING, 0, "gpt2"},
        {"tokenizer.ggml.model", GGUF_TYPE_COUNT, 0, NULL},
        {"tokenizer.ggml.tokens", GGUF_TYPE_COUNT, 0, NULL},
        {"tokenizer.ggml.scores", GGUF_TYPE_COUNT, 0, NULL},
        {"general.architecture", GGUF_TYPE_STRING, 0, "gemma3"},
        {"general.architecture", GGUF_TYPE_STRING, 0, "qwen2"},
        {"general.architecture", GGUF_TYPE_STRING, 0, "mamba"},
        {"general.architecture", GGUF_TYPE_STRING, 0, "bert"},
        {"general.architecture", GGUF_TYPE_STRING, 0, "t5"},
        {"general.architecture", GGUF_TYPE_STRING, 0, "rwkv6"},
        {"general.architecture", GGUF_TYPE_STRING, 0, "llama4"},
        {"general.architecture", GGUF_TYPE_STRING, 0, ""},
    };
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        gguf_write_edited(path, base, n, edit_kv, &edits[i]);
        if (edits[i].type == GGUF_TYPE_STRING) {
            snprintf(what, sizeof(what), "%s = \"%s\"", edits[i].key, edits[i].str);
        } else if (edits[i].type == GGUF_TYPE_COUNT) {
            snprintf(what, sizeof(what), "%s removed", edits[i].key);
        } else {
            snprintf(what, sizeof(what), "%s = %.0f%s", edits[i].key, edits[i].value,
                     edits[i].type == GGUF_TYPE_ARRAY ? " (array of 3)" : "");
        }
        gguf_try(path, what, &tally);
    }
    size_t keeps[] = {0, 1, 10, 300};
    for (size_t i = 0; i < sizeof(keeps) / sizeof(keeps[0]); i++) {
        gguf_write_edited(path, base, n, edit_vocab, &keeps[i]);
        snprintf(what, sizeof(what), "vocabulary cut to %zu tokens", keeps[i]);
        gguf_try(path, what, &tally);
    }
    int edited = tally.files;

    /* truncations: dense through the header and metadata, then spread over the data */
    for (size_t cut = 0; cut < meta_end; cut += meta_end / 60 + 1) {
        test_write_file(path, base, cut);
        snprintf(what, sizeof(what), "truncated at %zu", cut);
        gguf_try(path, what, &tally);
    }
    for (int k = 0; k < 20; k++) {
        size_t cut = meta_end + (n - meta_end) * (size_t)k / 20;
        test_write_file(path, base, cut);
        snprintf(what, sizeof(what), "truncated at %zu", cut);
        gguf_try(path, what, &tally);
    }
    /* byte flips in the header and metadata (and a few in the data), seeded */
    unsigned char *copy = malloc(n);
    assert_non_null(copy);
    /* PIPIT_GGUF_FLIPS=N PIPIT_GGUF_SEED=S run a longer corpus (the suite runs 300 with seed 16) */
    const char *flips_env = getenv("PIPIT_GGUF_FLIPS"), *seed_env = getenv("PIPIT_GGUF_SEED");
    int n_flips = flips_env != NULL ? (int)strtol(flips_env, NULL, 10) : 300;
    srand(seed_env != NULL ? (unsigned)strtoul(seed_env, NULL, 10) : 16u);
    for (int k = 0; k < n_flips; k++) {
        memcpy(copy, base, n);
        int flips = 1 + rand() % 3;
        size_t at = 0;
        for (int f = 0; f < flips; f++) {
            at = k % 15 != 14 ? (size_t)rand() % meta_end
                              : meta_end + (size_t)rand() % (n - meta_end);
            copy[at] ^= (unsigned char)(1 + rand() % 255);
        }
        test_write_file(path, copy, n);
        snprintf(what, sizeof(what), "flip %d (%d bytes, last at %zu)", k, flips, at);
        gguf_try(path, what, &tally);
    }
    free(copy);
    free(base);
    unlink(path);
    rmdir(gguf_dir);
    print_message("GGUF corpus: %d files (%d hyperparameter edits), %d loaded (%d decoded a "
                  "prefill), %d refused with a status (io %d, not_gguf %d, corrupt %d, "
                  "unsupported_arch %d, model %d); 0 aborts\n",
                  tally.files, edited, tally.loaded, tally.decoded, tally.refused,
                  tally.by_status[PIPIT_ERR_IO], tally.by_status[PIPIT_ERR_NOT_GGUF],
                  tally.by_status[PIPIT_ERR_CORRUPT], tally.by_status[PIPIT_ERR_UNSUPPORTED_ARCH],
                  tally.by_status[PIPIT_ERR_MODEL]);
}

/* ============================================================================ the soak */

/* The prompt limit the agent must respect: pipit.train.n_ctx, else the trained context length,
 * at most n_ctx (DESIGN.md item 5). */
static int32_t soak_limit(struct pipit_model *m, uint32_t n_ctx) {
    char meta[32] = {0};
    long trained = 0;
    if (pipit_model_meta_str(m, "pipit.train.n_ctx", meta, sizeof(meta)) >= 0) {
        trained = strtol(meta, NULL, 10);
    }
    if (n_ctx == 0) {
        /* the agent's own window (docs/agent.md): past the trained prompt length when the
         * model records one, else its trained context, at most 2,048 */
        n_ctx = trained > 0 ? (uint32_t)trained : 2048;
    }
    if (trained <= 0) {
        struct pipit_model_info info;
        pipit_model_get_info(m, &info);
        trained = info.n_ctx_train;
    }
    return trained < (long)n_ctx ? (int32_t)trained : (int32_t)n_ctx;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 1,000 turns of the bundled model in one agent: the prompt never exceeds the trained length,
 * the calls made in the last 100 turns are within 10% of the first 100, and the turn latency
 * p95 of each 100 turns is printed (never asserted). PIPIT_SOAK_TURNS=N runs another length. */
static void test_soak(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf");
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0; /* no wall-clock cut: the count of calls must not depend on load */
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    int32_t limit = soak_limit(m, p.n_ctx);
    /* commands a person gives a camera over a long session, each asking for an action */
    static const char *const cmds[] = {
        "zoom in to 2x",
        "turn on the flash",
        "take a photo",
        "set the timer to 3 seconds",
        "zoom out",
        "turn off the flash",
        "start recording",
        "stop recording",
        "switch to the front camera",
        "switch to the back camera",
        "zoom to 5x",
        "flash auto",
        "take a picture",
        "turn the grid on",
        "timer off",
        "zoom in to 1x",
        "turn on hdr",
        "turn off hdr",
        "white balance cloudy",
        "set exposure to plus one",
    };
    const char *turns_env = getenv("PIPIT_SOAK_TURNS");
    int n_turns = turns_env != NULL ? (int)strtol(turns_env, NULL, 10) : 1000;
    assert_true(n_turns >= 200);
    size_t n_cmds = sizeof(cmds) / sizeof(cmds[0]);
    int calls_first = 0, calls_last = 0, calls_block = 0, max_prompt = 0, max_perm = 0;
    int prev_perm = 0;
    double lat[100];
    print_message("soak: %d turns, prompt limit %d tokens\n", n_turns, limit);
    for (int i = 0; i < n_turns; i++) {
        struct pipit_turn *t = NULL;
        enum pipit_status st = pipit_agent_turn(a, cmds[(size_t)i % n_cmds], &t);
        if (st != PIPIT_OK) {
            fail_msg("turn %d ('%s') failed: %s", i, cmds[(size_t)i % n_cmds],
                     pipit_agent_errmsg(a));
        }
        /* the prompt the turn ran: the prefix the last turn left plus this turn's longest tail
         * (its memory delta is added after the model ran) */
        int prompt = (i == 0 ? t->n_permanent : prev_perm) + t->n_ephemeral_max;
        prompt = t->n_prompt_max > prompt ? t->n_prompt_max : prompt;
        if (prompt > limit || t->n_permanent > limit) {
            fail_msg("turn %d: a prompt of %d tokens (tail %d, permanent %d after) exceeds the "
                     "limit %d",
                     i, prompt, t->n_ephemeral_max, t->n_permanent, limit);
        }
        prev_perm = t->n_permanent;
        max_prompt = prompt > max_prompt ? prompt : max_prompt;
        max_perm = t->n_permanent > max_perm ? t->n_permanent : max_perm;
        int executed = 0;
        for (size_t c = 0; c < t->n_calls; c++) {
            executed += t->calls[c].status == PIPIT_OK && t->calls[c].ok;
        }
        calls_block += executed;
        if (i < 100) {
            calls_first += executed;
        }
        if (i >= n_turns - 100) {
            calls_last += executed;
        }
        lat[i % 100] = t->latency_ms;
        if (i % 100 == 99) {
            qsort(lat, 100, sizeof(double), cmp_double);
            print_message("soak: turns %4d-%4d: %3d calls executed, latency p50 %.1f ms, p95 "
                          "%.1f ms, permanent %d tokens\n",
                          i - 99, i, calls_block, lat[49], lat[94], t->n_permanent);
            calls_block = 0;
        }
        pipit_turn_free(t);
    }
    print_message("soak: calls executed in the first 100 turns %d, in the last 100 %d; longest "
                  "permanent prefix %d, longest prompt %d of %d\n",
                  calls_first, calls_last, max_perm, max_prompt, limit);
    assert_true(calls_first > 50);
    if (fabs((double)(calls_last - calls_first)) > 0.10 * calls_first) {
        fail_msg("decay: %d calls in the last 100 turns against %d in the first 100", calls_last,
                 calls_first);
    }
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* A tool prompt that alone leaves no room for a command is refused at creation, with the
 * numbers: the bundled model (trained on short prompts) with the Hermes syntax used to fail
 * every turn with only "context full". */
static void test_prompt_too_long_refused_at_creation(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf");
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.syntax = PIPIT_SYNTAX_HERMES;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_ERR_CONTEXT_FULL);
    assert_null(a);
    int n_text = 0, n_tools = 0, n_state = 0, n_cmd = 0, total = 0, limit = 0;
    if (sscanf(err.text,
               "agent: the prompt does not fit the model's trained length: system text %d tokens, "
               "tools %d, state line %d, a short command and its call about %d more: %d tokens, "
               "more than the prompt limit of %d",
               &n_text, &n_tools, &n_state, &n_cmd, &total, &limit) != 6) {
        fail_msg("the refusal does not give the numbers: %s", err.text);
    }
    assert_int_equal(limit, soak_limit(m, p.n_ctx));
    assert_true(n_text + n_tools > limit);
    assert_true(n_tools > n_text); /* the Hermes tool list is what takes the room */
    assert_true(n_state > 0);
    assert_int_equal(total, n_text + n_tools + n_state + n_cmd);
    assert_null(strstr(err.text, "another pack")); /* the camera model, the camera pack */
    /* the Hermes list was tried minified, then as JIT (whose numbers these are) */
    assert_non_null(strstr(err.text, "also too long in the larger tools format tried first "
                                     "(minified "));
    /* the pipit syntax fits, and a tiny context window is the limit too */
    p.syntax = PIPIT_SYNTAX_PIPIT;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    test_agent_free(a);
    p.n_ctx = 16;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_ERR_CONTEXT_FULL);
    assert_non_null(strstr(err.text, "context window"));
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* A model trained for one pack, run with another pack's tools: the home pack's state line
 * alone does not fit the camera model's trained length (128). Such a model is never asked
 * (docs/agent.md, "a model for another pack"), so its trained length limits nothing and the
 * agent starts with the context window as its limit; in a window of 128 tokens the prefix does
 * not fit that either, and the refusal names what takes the room and the cause, the pack the
 * model was trained for, not "a short command". */
static void test_prompt_of_another_pack_refused(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf");
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/home.json", &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    struct pipit_device *home = NULL;
    if (pipit_device_init(NULL, ts, NULL, &home, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.device = home;
    struct pipit_agent *a = NULL;
    assert_int_equal(pipit_agent_init(m, ts, &p, &a, &err), PIPIT_OK); /* the window fits */
    assert_non_null(strstr(pipit_agent_model_notice(a), "runs none of its answers"));
    pipit_agent_free(a);
    a = NULL;
    p.n_ctx = 128;
    assert_int_equal(pipit_agent_init(m, ts, &p, &a, &err), PIPIT_ERR_CONTEXT_FULL);
    assert_null(a);
    int n_text = 0, n_tools = 0, n_state = 0, n_cmd = 0, total = 0, limit = 0;
    if (sscanf(err.text,
               "agent: the prompt does not fit the model's trained length: system text %d tokens, "
               "tools %d, state line %d, a short command and its call about %d more: %d tokens, "
               "more than the prompt limit of %d",
               &n_text, &n_tools, &n_state, &n_cmd, &total, &limit) != 6) {
        fail_msg("the refusal does not give the numbers: %s", err.text);
    }
    assert_int_equal(limit, soak_limit(m, p.n_ctx));
    assert_true(n_state > n_text + n_tools + n_cmd); /* the state line takes the room */
    assert_int_equal(total, n_text + n_tools + n_state + n_cmd);
    assert_non_null(strstr(err.text, "trained for another pack"));
    assert_non_null(strstr(err.text, "pipit.prompt.system is \"camera\""));
    assert_non_null(strstr(err.text, "pack is \"home\""));
    pipit_device_free(home);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* Issue 21's failing case: the Hermes syntax with the 18 camera tools (about 1,200 tokens of
 * qwen2 in the minified format) in a 2,048-token context. The old budget (n_ctx / 2) was below
 * the tool prompt, so memory was never trimmed: with full history every turn from the 10th
 * failed with "context full", and the CSO grew without bound. Now, over 60 turns in each memory
 * mode, with every answer a forced call of a random model (errors pile up pinned), no turn
 * fails and no prompt exceeds the limit. */
static int run_hermes_2048(struct pipit_model *m,
                           const struct pipit_toolset *ts,
                           enum pipit_memory_mode mode,
                           int n_turns) {
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0;
    p.syntax = PIPIT_SYNTAX_HERMES;
    p.memory = mode;
    p.tools_format = PIPIT_TOOLSPEC_MINIFIED;
    p.lazy_grammar = false; /* every answer a call: a random model's calls fail and pin errors */
    p.temperature = 1.0f;
    p.seed = 5;
    p.n_ctx = 2048;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    int32_t limit = soak_limit(m, p.n_ctx);
    static const char *const cmds[] = {
        "zoom in to 2x",        "turn on the flash",
        "take a photo",         "set the timer to 3 seconds",
        "white balance cloudy", "switch to the front camera",
        "turn the grid on",     "set exposure to plus one and turn on hdr",
    };
    int prev = 0, trimmed = 0, longest = 0, over = 0, lines = 0;
    for (int i = 0; i < n_turns; i++) {
        struct pipit_turn *t = NULL;
        enum pipit_status st = pipit_agent_turn(a, cmds[i % 8], &t);
        if (st != PIPIT_OK) {
            fail_msg("memory %d, turn %d failed: %s '%s'", (int)mode, i, pipit_status_str(st),
                     pipit_agent_errmsg(a));
        }
        int prompt = (i == 0 ? t->n_permanent : prev) + t->n_ephemeral_max;
        if (prompt > limit || t->n_prompt_max > limit) {
            fail_msg("memory %d, turn %d: a prompt of %d tokens, the limit is %d", (int)mode, i,
                     prompt > t->n_prompt_max ? prompt : t->n_prompt_max, limit);
        }
        struct pipit_agent_budget b;
        pipit_agent_get_budget(a, &b);
        if (t->n_permanent > b.memory_budget) {
            fail_msg("memory %d, turn %d: a permanent prefix of %d tokens, the budget is %d",
                     (int)mode, i, t->n_permanent, b.memory_budget);
        }
        longest = t->n_prompt_max > longest ? t->n_prompt_max : longest;
        over += (t->flags & PIPIT_TURN_OVER_BUDGET) != 0;
        prev = t->n_permanent;
        trimmed += t->trimmed_lines;
        lines = t->memory_lines;
        pipit_turn_free(t);
    }
    print_message("hermes, 2048 context, memory %d: %d turns, 0 failed, longest prompt %d of %d, "
                  "%d lines trimmed, %d turns over budget, %d lines at the end\n",
                  (int)mode, n_turns, longest, limit, trimmed, over, lines);
    test_agent_free(a);
    return trimmed;
}

static void test_hermes_2048_full_and_cso(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN);
    struct pipit_toolset *ts = camera_tools();
    /* full history reaches the budget within 60 turns and is trimmed */
    assert_true(run_hermes_2048(m, ts, PIPIT_MEMORY_FULL, 60) > 0);
    run_hermes_2048(m, ts, PIPIT_MEMORY_CSO, 60);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* Tools that do not fit beside a short command are served in a smaller format, and the agent
 * says so with the numbers: the OpenAPI format of the 18 camera tools (about 2,070 tokens of
 * qwen2) in pipit's syntax at 2,048 becomes compact; the Hermes prompt (minified, about 1,200)
 * at 1,024 becomes JIT. Their turns run within the limit. */
static void expect_fallback(struct pipit_model *m,
                            const struct pipit_toolset *ts,
                            int32_t syntax,
                            int32_t format,
                            uint32_t n_ctx,
                            const char *from,
                            int32_t want) {
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0;
    p.syntax = syntax;
    p.tools_format = format;
    p.n_ctx = n_ctx;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    if (test_agent_new(m, ts, &p, &a, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    struct pipit_agent_budget b;
    pipit_agent_get_budget(a, &b);
    assert_int_equal(b.tools_format, want);
    assert_int_equal(b.prompt_limit, soak_limit(m, p.n_ctx));
    int limit = 0, floor = 0, before = 0, after = 0;
    char f1[16] = "", f2[16] = "", f3[16] = "";
    if (sscanf(b.notice,
               "agent: the tools did not fit the prompt limit of %d tokens (%*[^)]) beside a "
               "short command of about %d tokens in the %15s format (%15s %d tokens with the "
               "system text); using the %15s format: %d tokens",
               &limit, &floor, f1, f2, &before, f3, &after) != 7) {
        fail_msg("the notice does not give the numbers: '%s'", b.notice);
    }
    assert_string_equal(f1, from);
    assert_string_equal(f2, from);
    assert_string_equal(f3, want == PIPIT_TOOLSPEC_JIT ? "jit" : "compact");
    assert_int_equal(limit, b.prompt_limit);
    assert_true(before + floor > limit);
    assert_int_equal(after, b.system_tokens);
    assert_true(after + floor <= limit);
    for (int i = 0; i < 3; i++) {
        struct pipit_turn *t = NULL;
        assert_int_equal(pipit_agent_turn(a, "zoom in to 2x", &t), PIPIT_OK);
        assert_true(t->n_prompt_max <= limit);
        pipit_turn_free(t);
    }
    print_message("%s\n", b.notice);
    test_agent_free(a);
}

static void test_tools_fall_back_to_a_smaller_format(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(TEST_MODEL_QWEN);
    struct pipit_toolset *ts = camera_tools();
    expect_fallback(m, ts, PIPIT_SYNTAX_PIPIT, PIPIT_TOOLSPEC_OPENAPI, 2048, "openapi",
                    PIPIT_TOOLSPEC_COMPACT);
    expect_fallback(m, ts, PIPIT_SYNTAX_HERMES, PIPIT_TOOLSPEC_MINIFIED, 1024, "minified",
                    PIPIT_TOOLSPEC_JIT);
    /* a format that fits is kept, and nothing is said */
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.syntax = PIPIT_SYNTAX_HERMES;
    p.tools_format = PIPIT_TOOLSPEC_MINIFIED;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    struct pipit_agent_budget b;
    pipit_agent_get_budget(a, &b);
    assert_int_equal(b.tools_format, PIPIT_TOOLSPEC_MINIFIED);
    assert_string_equal(b.notice, "");
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* pipit.train.n_ctx, when the trainer wrote it, is the limit: the bundled model with the key set
 * to 128 (its training rows) keeps every prompt of 150 turns within 128 tokens. */
static void test_train_n_ctx_is_the_limit(void **state) {
    (void)state;
    char dir128[] = "/tmp/pipit-n128-XXXXXX";
    assert_non_null(mkdtemp(dir128));
    char path[600];
    snprintf(path, sizeof(path), "%s/m.gguf", dir128);
    size_t n = 0;
    unsigned char *base = test_read_file(GGUF_BASE, &n);
    const struct kv_edit e = {"pipit.train.n_ctx", GGUF_TYPE_UINT32, 128, NULL};
    gguf_write_edited(path, base, n, edit_kv, &e);
    free(base);
    struct pipit_model *m = test_load_model(path);
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0;
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    assert_int_equal(soak_limit(m, p.n_ctx), 128);
    /* the window the agent chose: the 128 tokens, the longest answer and a JIT tool line, far
     * under the 2,048 a fixed default would spend on KV cache nobody uses */
    struct pipit_agent_budget b;
    pipit_agent_get_budget(a, &b);
    assert_int_equal(b.prompt_limit, 128);
    assert_true(b.n_ctx >= 128 + p.max_tokens && b.n_ctx < 512);
    int prev = 0, longest = 0, trimmed = 0, fitted = 0;
    for (int i = 0; i < 150; i++) {
        struct pipit_turn *t = NULL;
        static const char *const cmds[] = {"zoom in to 2x", "turn on the flash", "take a photo",
                                           "set the timer to 3 seconds", "turn off the flash"};
        assert_int_equal(pipit_agent_turn(a, cmds[i % 5], &t), PIPIT_OK);
        int prompt = (i == 0 ? t->n_permanent : prev) + t->n_ephemeral_max;
        if (prompt > 128) {
            fail_msg("turn %d: a prompt of %d tokens, pipit.train.n_ctx is 128", i, prompt);
        }
        longest = prompt > longest ? prompt : longest;
        /* the prefix shrank: it reached the budget and was rebuilt (its superseded facts
         * dropped, or its oldest lines trimmed) */
        fitted += i > 0 && t->n_permanent < prev;
        prev = t->n_permanent;
        trimmed += t->trimmed_lines;
        pipit_turn_free(t);
    }
    assert_true(fitted > 0);
    print_message("pipit.train.n_ctx 128: 150 turns, longest prompt %d, fitted %d times, %d lines "
                  "trimmed\n",
                  longest, fitted, trimmed);
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
    unlink(path);
    rmdir(dir128);
}

/* A long utterance: memory makes room for it before the model runs, so the turn's prompt stays
 * within the limit; one that cannot fit even beside the tools alone is followed from its last
 * clauses that fit, or, when none fits, not run (the sentence asks for fewer words). */
static void test_long_utterance_within_limit(void **state) {
    (void)state;
    struct pipit_model *m = test_load_model(PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf");
    struct pipit_toolset *ts = camera_tools();
    struct pipit_agent_params p = pipit_agent_default_params();
    p.n_threads = 1;
    p.turn_budget_ms = 0;
    p.memory = PIPIT_MEMORY_FULL; /* the prefix fills up to the limit */
    struct pipit_agent *a = NULL;
    struct pipit_error err;
    assert_int_equal(test_agent_new(m, ts, &p, &a, &err), PIPIT_OK);
    int32_t limit = soak_limit(m, p.n_ctx);
    static const char *const cmds[] = {
        "zoom in to 2x",
        "turn on the flash",
        "take a photo",
        "start recording",
        "stop recording",
        "switch to the front camera",
        "turn the grid on",
        "turn on hdr",
        "white balance cloudy",
        "set exposure to plus one",
        "set the timer to 3 seconds",
        "switch to the back camera",
    };
    struct pipit_turn *t = NULL;
    int32_t perm = 0;
    for (int i = 0; i < 80; i++) {
        assert_int_equal(pipit_agent_turn(a, cmds[i % 12], &t), PIPIT_OK);
        perm = t->n_permanent;
        pipit_turn_free(t);
    }
    /* words until the utterance with a short answer (32 tokens) no longer fits beside the
     * memory the session built, though it fits alone */
    char utt[PIPIT_MAX_UTTERANCE_BYTES + 1] = "";
    size_t len = 0;
    while (perm + abs(pipit_tokenize(m, utt, false, false, NULL, 0)) + 32 <= limit) {
        len += (size_t)snprintf(utt + len, sizeof(utt) - len, "%szoom in a little", len ? " " : "");
        assert_true(len < sizeof(utt) - 32);
    }
    if (perm + abs(pipit_tokenize(m, utt, false, false, NULL, 0)) + 32 <= limit) {
        fail_msg("setup: permanent %d + utterance %d + 32 tokens fit the limit %d", perm,
                 abs(pipit_tokenize(m, utt, false, false, NULL, 0)), limit);
    }
    assert_int_equal(pipit_agent_turn(a, utt, &t), PIPIT_OK);
    if (t->trimmed_lines == 0 || t->n_prompt_max > limit) {
        fail_msg("the long turn trimmed %d lines and ran a prompt of %d tokens; the limit is %d",
                 t->trimmed_lines, t->n_prompt_max, limit);
    }
    pipit_turn_free(t);
    /* too long for the limit even with no memory, and no clause of it fits: nothing runs, the
     * sentence asks for fewer words (flag cut) */
    while (abs(pipit_tokenize(m, utt, false, false, NULL, 0)) < limit) {
        len += (size_t)snprintf(utt + len, sizeof(utt) - len, " zoom in a little");
    }
    t = NULL;
    assert_int_equal(pipit_agent_turn(a, utt, &t), PIPIT_OK);
    assert_true(t->flags & PIPIT_TURN_CUT);
    assert_int_equal(t->n_calls, 0);
    assert_non_null(strstr(t->sentence, "fewer words"));
    pipit_turn_free(t);
    /* the same ramble with a request after its last comma: that request is followed */
    len += (size_t)snprintf(utt + len, sizeof(utt) - len, ", so please take a photo");
    assert_int_equal(pipit_agent_turn(a, utt, &t), PIPIT_OK);
    assert_true(t->flags & PIPIT_TURN_CUT);
    assert_int_equal(t->n_calls, 1);
    assert_string_equal(t->calls[0].tool, "take_photo");
    if (t->n_prompt_max > limit) {
        fail_msg("the cut turn ran a prompt of %d tokens; the limit is %d", t->n_prompt_max, limit);
    }
    pipit_turn_free(t);
    assert_int_equal(pipit_agent_turn(a, "take a photo", &t), PIPIT_OK);
    pipit_turn_free(t);
    test_agent_free(a);
    pipit_toolset_free(ts);
    pipit_model_free(m);
}

/* ============================================================================ the CLI */

#ifdef PIPIT_CLI_BIN
#define BUNDLED PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf"

static char dir[] = "/tmp/pipit-abuse-XXXXXX";

static int setup_dir(void **state) {
    (void)state;
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown_dir(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Run `pipit <args>` with `input` on stdin; returns the exit code, *out the stdout (freed by
 * the caller), *err_out the stderr. */
static int run_cli(const char *args, const void *input, size_t input_len, char **out, char **eout) {
    char in[600], o[600], e[600], cmd[4096];
    snprintf(in, sizeof(in), "%s/stdin", dir);
    snprintf(o, sizeof(o), "%s/stdout", dir);
    snprintf(e, sizeof(e), "%s/stderr", dir);
    test_write_file(in, input, input_len);
    snprintf(cmd, sizeof(cmd), "'%s' %s < '%s' > '%s' 2> '%s'", PIPIT_CLI_BIN, args, in, o, e);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    size_t n = 0;
    *out = (char *)test_read_file(o, &n);
    (*out)[n] = '\0';
    *eout = (char *)test_read_file(e, &n);
    (*eout)[n] = '\0';
    return WEXITSTATUS(status);
}

/* Each stdout line must be a JSON object; returns how many, and checks failures have a code. */
static int json_lines(const char *out, int *failures, const char **last_code) {
    static char code[64];
    int n = 0;
    *failures = 0;
    code[0] = '\0';
    *last_code = code;
    const char *p = out;
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        json_error_t jerr;
        json_t *j = json_loadb(p, len, 0, &jerr);
        if (!json_is_object(j)) {
            fail_msg("stdout line %d is not a JSON object: %.*s", n, (int)len, p);
        }
        json_t *e = json_object_get(j, "error");
        if (e != NULL) {
            const char *c = json_string_value(json_object_get(e, "code"));
            const char *m = json_string_value(json_object_get(e, "message"));
            if (c == NULL || m == NULL || json_object_get(j, "ok") != json_false()) {
                fail_msg("a failure without ok=false, a code or a message: %.*s", (int)len, p);
            }
            snprintf(code, sizeof(code), "%s", c);
            (*failures)++;
        }
        json_decref(j);
        n++;
        p += len;
        if (*p == '\n') {
            p++;
        }
    }
    return n;
}

#define CLI_RUN "run --threads 1 --model '" BUNDLED "' "

static void test_cli_long_lines(void **state) {
    (void)state;
    char *out = NULL, *eout = NULL;
    /* 4,095 x then "take a photo": one refused utterance, no photo */
    size_t n = PIPIT_MAX_UTTERANCE_BYTES + 64;
    char *in = malloc(n + 32);
    assert_non_null(in);
    memset(in, 'x', PIPIT_MAX_UTTERANCE_BYTES);
    int len = snprintf(in + PIPIT_MAX_UTTERANCE_BYTES, 64, " take a photo\n");
    int rc = run_cli(CLI_RUN "--json", in, PIPIT_MAX_UTTERANCE_BYTES + (size_t)len, &out, &eout);
    assert_int_equal(rc, 1);
    int failures = 0;
    const char *code = NULL;
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_int_equal(failures, 1);
    assert_string_equal(code, "invalid_arg");
    assert_non_null(strstr(out, "limit is 4095 bytes"));
    assert_null(strstr(out, "Photo"));
    free(out);
    free(eout);
    free(in);
    /* a 1 MB line is one refusal too, and chat goes on after it */
    size_t big = 1 << 20;
    in = malloc(big + 64);
    assert_non_null(in);
    memset(in, 'y', big);
    len = snprintf(in + big, 64, "\ntake a photo\n");
    rc = run_cli(CLI_RUN "--json", in, big + (size_t)len, &out, &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_int_equal(failures, 1);
    free(out);
    free(eout);
    rc = run_cli("chat --threads 1 --model '" BUNDLED "'", in, big + (size_t)len, &out, &eout);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(eout, "the utterance is 1048576 bytes"));
    assert_non_null(strstr(out, "Photo taken"));
    free(out);
    free(eout);
    free(in);
}

static void test_cli_json_failures(void **state) {
    (void)state;
    char *out = NULL, *eout = NULL;
    /* blank lines on stdin are skipped; a blank argument and invalid UTF-8 are refused */
    const char lines[] = "\n   \nturn on the flash\n";
    int rc = run_cli(CLI_RUN "--json", lines, sizeof(lines) - 1, &out, &eout);
    int failures = 0;
    const char *code = NULL;
    assert_int_equal(rc, 0);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_int_equal(failures, 0);
    free(out);
    free(eout);
    rc = run_cli(CLI_RUN "--json 'turn on the flash' '  '", "", 0, &out, &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 2);
    assert_int_equal(failures, 1);
    assert_string_equal(code, "invalid_arg");
    assert_non_null(strstr(out, "empty"));
    free(out);
    free(eout);
    const char utf[] = "zoom in to \xff\xfe"
                       "2x\n";
    rc = run_cli(CLI_RUN "--json", utf, sizeof(utf) - 1, &out, &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_non_null(strstr(out, "not valid UTF-8"));
    free(out);
    free(eout);
    /* a failure before the first turn (a model that is not a GGUF) is a JSON object too */
    rc = run_cli("run --threads 1 --json --model '" PIPIT_SOURCE_DIR "/README.md' hi", "", 0, &out,
                 &eout);
    assert_int_equal(rc, 1);
    assert_int_equal(json_lines(out, &failures, &code), 1);
    assert_string_equal(code, "not_gguf");
    free(out);
    free(eout);
}

/* The options bench/side-by-side.sh runs pipit with (docs/cli.md): --force-call makes an answer
 * the bundled model gives in words a call, --memory none keeps no memory line where CSO keeps
 * two, --ctx sets the window (64 tokens do not hold this prompt: over_budget), --keep-going
 * runs the turns after a failed one and still exits 1. */
/* Without --model, a pack with a shipped model (models/pipit-<pack>.gguf) runs on it, says so
 * with -v, and draws no "trained for another pack" warning; the camera keeps the bundled one;
 * a model next to the pack file is taken and said. */
/* A prompt too small for a pack's state line: `pipit train` says so, with what to do. */
static void test_cli_train_crowded(void **state) {
    (void)state;
    char args[900];
    snprintf(args, sizeof(args),
             "train --tools '" PIPIT_SOURCE_DIR "/tools/home.json' --examples 400 --valid 20 "
             "--steps 2 --ctx 64 --answer 32 --embd 32 --layers 1 --heads 2 --ff 64 --eval 0 "
             "--threads 1 --out '%s/crowded.gguf'",
             dir);
    char *out = NULL, *eout = NULL;
    assert_int_equal(run_cli(args, "", 0, &out, &eout), 0);
    if (strstr(eout, "warning:") == NULL || strstr(eout, "did not fit 64 tokens") == NULL ||
        strstr(eout, "\"show\": false") == NULL) {
        fail_msg("stderr: %s", eout);
    }
    free(out);
    free(eout);
}

static void test_cli_pack_model(void **state) {
    (void)state;
    static const char *const PACKS[] = {"phone", "home"};
    for (size_t i = 0; i < sizeof(PACKS) / sizeof(PACKS[0]); i++) {
        char args[512];
        snprintf(args, sizeof(args),
                 "run --threads 1 -v --tools '" PIPIT_SOURCE_DIR "/tools/%s.json' 'hello there'",
                 PACKS[i]);
        char *out = NULL, *eout = NULL;
        assert_int_equal(run_cli(args, "", 0, &out, &eout), 0);
        char want[128];
        snprintf(want, sizeof(want), "the pack \"%s\" has its own model", PACKS[i]);
        if (strstr(eout, want) == NULL || strstr(eout, "trained for") != NULL) {
            fail_msg("%s: stderr: %s", PACKS[i], eout);
        }
        free(out);
        free(eout);
    }
    char *out = NULL, *eout = NULL;
    assert_int_equal(run_cli("run --threads 1 -v 'hello there'", "", 0, &out, &eout), 0);
    assert_null(strstr(eout, "has its own model"));
    assert_null(strstr(eout, "does not know these tools")); /* the camera's own model */
    free(out);
    free(eout);
    /* a pack no model was trained for: the bundled camera model is loaded, says so, and none
     * of its answers is run */
    static const char PACK[] =
        "{\"pipit\": {\"pack\": \"coffee\"}, \"tools\": [{\"type\": \"function\", "
        "\"function\": {\"name\": \"brew\", \"description\": \"Brew a coffee\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {}}}}]}";
    char path[600], args[800];
    snprintf(path, sizeof(path), "%s/coffee.json", dir);
    test_write_file(path, PACK, sizeof(PACK) - 1);
    snprintf(args, sizeof(args), "run --threads 1 --tools '%s' 'make me a coffee'", path);
    assert_int_equal(run_cli(args, "", 0, &out, &eout), 0);
    if (strstr(eout, "no model was trained for the pack \"coffee\"") == NULL ||
        strstr(eout, "does not know these tools") == NULL ||
        strstr(eout, "trained for another pack") != NULL) { /* said once, not twice */
        fail_msg("stderr: %s", eout);
    }
    if (strstr(out, "no model for these tools") == NULL) {
        fail_msg("stdout: %s", out);
    }
    free(out);
    free(eout);
    /* a model next to the pack file, named as the file (coffee.json: coffee.gguf), is the
     * pack's own (this one was trained for the phone pack: the agent says so itself) */
    size_t n = 0;
    unsigned char *gguf = test_read_file(PIPIT_SOURCE_DIR "/models/pipit-phone.gguf", &n);
    assert_non_null(gguf);
    snprintf(path, sizeof(path), "%s/coffee.gguf", dir);
    test_write_file(path, gguf, n);
    free(gguf);
    assert_int_equal(run_cli(args, "", 0, &out, &eout), 0);
    if (strstr(eout, "the pack \"coffee\" has its own model next to it") == NULL ||
        strstr(eout, "no model was trained") != NULL) {
        fail_msg("stderr: %s", eout);
    }
    free(out);
    free(eout);
    remove(path);
}

static void test_cli_bench_options(void **state) {
    (void)state;
    char *out = NULL, *eout = NULL;
    assert_int_equal(run_cli(CLI_RUN "--json 'hello there'", "", 0, &out, &eout), 0);
    assert_non_null(strstr(out, "\"plain_text\""));
    assert_non_null(strstr(out, "\"calls\":[]"));
    free(out);
    free(eout);
    assert_int_equal(run_cli(CLI_RUN "--force-call --json 'hello there'", "", 0, &out, &eout), 0);
    assert_null(strstr(out, "plain_text"));
    assert_null(strstr(out, "\"calls\":[]"));
    assert_non_null(strstr(out, "\"calls\":[{\"tool\":\""));
    free(out);
    free(eout);
    assert_int_equal(run_cli(CLI_RUN "--json 'what is the weather like'", "", 0, &out, &eout), 0);
    assert_non_null(strstr(out, "\"memory_lines\":2"));
    free(out);
    free(eout);
    assert_int_equal(
        run_cli(CLI_RUN "--memory none --json 'what is the weather like'", "", 0, &out, &eout), 0);
    assert_non_null(strstr(out, "\"memory_lines\":0"));
    free(out);
    free(eout);
    assert_int_equal(run_cli(CLI_RUN "--json 'turn on the flash'", "", 0, &out, &eout), 0);
    assert_null(strstr(out, "over_budget"));
    free(out);
    free(eout);
    assert_int_equal(run_cli(CLI_RUN "--ctx 64 --json 'turn on the flash'", "", 0, &out, &eout), 0);
    assert_non_null(strstr(out, "over_budget"));
    free(out);
    free(eout);
    const char lines[] = "turn on the flash\nzoom in to \xff\n"
                         "take a photo\n";
    int failures = 0;
    const char *code = NULL;
    assert_int_equal(run_cli(CLI_RUN "--json", lines, sizeof(lines) - 1, &out, &eout), 1);
    assert_int_equal(json_lines(out, &failures, &code), 2); /* stops at the failed turn */
    free(out);
    free(eout);
    assert_int_equal(run_cli(CLI_RUN "--keep-going --json", lines, sizeof(lines) - 1, &out, &eout),
                     1);
    assert_int_equal(json_lines(out, &failures, &code), 3);
    assert_int_equal(failures, 1);
    assert_string_equal(code, "invalid_arg");
    assert_non_null(strstr(out, "Photo taken"));
    free(out);
    free(eout);
    /* usage errors: exit 2 */
    assert_int_equal(run_cli(CLI_RUN "--memory all 'hi'", "", 0, &out, &eout), 2);
    assert_non_null(strstr(eout, "--memory must be none, full or cso"));
    free(out);
    free(eout);
    assert_int_equal(run_cli(CLI_RUN "--force-call --no-grammar 'hi'", "", 0, &out, &eout), 2);
    assert_non_null(strstr(eout, "--force-call needs the grammar"));
    free(out);
    free(eout);
    assert_int_equal(run_cli("chat --keep-going --model '" BUNDLED "'", "", 0, &out, &eout), 2);
    free(out);
    free(eout);
}

/* A session that cannot be resumed is refused (exit 1) and the file is left byte for byte. */
static void expect_session_kept(const char *args, const char *path, const char *needle) {
    size_t n0 = 0, n1 = 0;
    unsigned char *before = test_read_file(path, &n0);
    char *out = NULL, *eout = NULL;
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "%s --session '%s' 'take a photo'", args, path);
    int rc = run_cli(cmd, "", 0, &out, &eout);
    if (rc != 1 || strstr(eout, needle) == NULL || strstr(eout, "left unchanged") == NULL) {
        fail_msg("%s: exit %d, stderr '%s' (want exit 1 naming '%s')", cmd, rc, eout, needle);
    }
    assert_null(strstr(out, "Photo"));
    unsigned char *after = test_read_file(path, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    free(out);
    free(eout);
}

static void test_cli_session_never_overwritten(void **state) {
    (void)state;
    char path[600];
    snprintf(path, sizeof(path), "%s/s.session", dir);
    char *out = NULL, *eout = NULL;
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), CLI_RUN "--session '%s' 'zoom in to 2x'", path);
    assert_int_equal(run_cli(cmd, "", 0, &out, &eout), 0);
    free(out);
    free(eout);
    size_t n = 0;
    unsigned char *good = test_read_file(path, &n);
    /* another tool set: the phone pack and device */
    expect_session_kept(CLI_RUN "--device phone", path, "made for the device 'camera'");
    /* the phone tool set alone: its device is chosen from the tool set (the phone), so the
     * device differs before the undo log's tools are compared */
    expect_session_kept(CLI_RUN "--tools '" PIPIT_SOURCE_DIR "/tools/phone.json'", path,
                        "this agent runs 'phone'");
    /* a newer format version, a damaged file, a truncated one */
    good[8] = 9;
    test_write_file(path, good, n);
    expect_session_kept(CLI_RUN, path, "format version 9");
    good[8] = 1;
    good[n / 2] ^= 0x40;
    test_write_file(path, good, n);
    expect_session_kept(CLI_RUN, path, "damaged");
    good[n / 2] ^= 0x40;
    test_write_file(path, good, n - 100);
    expect_session_kept(CLI_RUN, path, "truncated");
    /* the intact file resumes, and is saved again */
    test_write_file(path, good, n);
    snprintf(cmd, sizeof(cmd), CLI_RUN "--session '%s' 'what is the zoom'", path);
    assert_int_equal(run_cli(cmd, "", 0, &out, &eout), 0);
    assert_non_null(strstr(eout, "resumed"));
    free(out);
    free(eout);
    free(good);
}
#endif

int main(int argc, char **argv) {
    const struct CMUnitTest unit[] = {
        cmocka_unit_test(test_utterance_checks),
    };
#ifdef PIPIT_CLI_BIN
    const struct CMUnitTest cli[] = {
        cmocka_unit_test(test_cli_long_lines),
        cmocka_unit_test(test_cli_json_failures),
        cmocka_unit_test(test_cli_bench_options),
        cmocka_unit_test(test_cli_pack_model),
        cmocka_unit_test(test_cli_train_crowded),
        cmocka_unit_test(test_cli_session_never_overwritten),
    };
    const struct CMUnitTest gguf[] = {
        cmocka_unit_test(test_gguf_corpus),
    };
    const struct CMUnitTest soak[] = {
        cmocka_unit_test(test_soak),
    };
    const struct CMUnitTest budget[] = {
        cmocka_unit_test(test_prompt_too_long_refused_at_creation),
        cmocka_unit_test(test_prompt_of_another_pack_refused),
        cmocka_unit_test(test_hermes_2048_full_and_cso),
        cmocka_unit_test(test_tools_fall_back_to_a_smaller_format),
        cmocka_unit_test(test_train_n_ctx_is_the_limit),
        cmocka_unit_test(test_long_utterance_within_limit),
    };
    if (argc > 1 && strcmp(argv[1], "--budget") == 0) {
        return cmocka_run_group_tests(budget, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--soak") == 0) {
        return cmocka_run_group_tests(soak, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--gguf") == 0) {
        return cmocka_run_group_tests(gguf, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--cli") == 0) {
        return cmocka_run_group_tests(cli, setup_dir, teardown_dir);
    }
#endif
    (void)argc;
    (void)argv;
    return cmocka_run_group_tests(unit, NULL, NULL);
}
