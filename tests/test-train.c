/*
 * test-train.c - the data generator, the vocabulary, the trainer and the shipped model.
 *
 *   test-train            unit: the generator is deterministic, covers every camera tool with
 *                         calls that parse and validate, and holds out whole templates
 *   test-train --model    the built vocabulary round-trips any text through libllama; a tiny
 *                         training run lowers the loss and writes a GGUF libllama runs
 *   test-train --shipped  models/pipit-camera-v1.gguf on every hand-written command the test
 *                         ever had: no more misses than its known-misses list
 *   test-train --overlap  the shipped scenario sets (eval/camera.jsonl, eval/phone.jsonl,
 *                         eval/camera-holdout.jsonl, eval/home.jsonl, eval/camera-long.jsonl,
 *                         eval/camera-long-holdout.jsonl)
 *                         say nothing the default seed's training
 *                         data says, verbatim or near
 */
#include "../train/datagen.h"
#include "router.h"
#include "testutil.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#define SHIPPED_MODEL PIPIT_SOURCE_DIR "/models/pipit-camera-v1.gguf"
#define CAMERA_SPEC   PIPIT_SOURCE_DIR "/tools/camera.json"

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

/* ============================================================================
 * unit: generator */

static bool same_example(const struct pipit_example *a, const struct pipit_example *b) {
    return strcmp(a->state, b->state) == 0 && strcmp(a->utterance, b->utterance) == 0 &&
           strcmp(a->output, b->output) == 0 && strcmp(a->category, b->category) == 0 &&
           a->template_id == b->template_id;
}

static void test_datagen_deterministic(void **state) {
    (void)state;
    struct pipit_dataset *a = make_data(7, 3000, 300);
    struct pipit_dataset *b = make_data(7, 3000, 300);
    struct pipit_dataset *c = make_data(8, 3000, 300);
    int differ = 0;
    for (int split = 0; split < 2; split++) {
        enum pipit_split sp = (enum pipit_split)split;
        assert_int_equal(pipit_dataset_size(a, sp), split == 0 ? 3000 : 300);
        for (int32_t i = 0; i < pipit_dataset_size(a, sp); i++) {
            struct pipit_example x, y, z;
            assert_true(pipit_dataset_get(a, sp, i, &x));
            assert_true(pipit_dataset_get(b, sp, i, &y));
            assert_true(pipit_dataset_get(c, sp, i, &z));
            assert_true(same_example(&x, &y));
            differ += same_example(&x, &z) ? 0 : 1;
        }
    }
    assert_true(differ > 1000); /* another seed, other data */
    struct pipit_example ex;
    assert_false(pipit_dataset_get(a, PIPIT_SPLIT_TRAIN, 3000, &ex));
    assert_false(pipit_dataset_get(a, PIPIT_SPLIT_VALID, -1, &ex));
    assert_false(pipit_dataset_get(NULL, PIPIT_SPLIT_TRAIN, 0, &ex));
    assert_int_equal(pipit_dataset_size(NULL, PIPIT_SPLIT_TRAIN), 0);
    pipit_dataset_free(a);
    pipit_dataset_free(b);
    pipit_dataset_free(c);
    pipit_dataset_free(NULL);
}

static void test_datagen_bad_params(void **state) {
    (void)state;
    struct pipit_datagen_params p = pipit_datagen_default_params();
    p.n_train = 0;
    struct pipit_dataset *ds = (struct pipit_dataset *)&p;
    struct pipit_error err;
    assert_int_equal(pipit_datagen_camera(&p, &ds, &err), PIPIT_ERR_INVALID_ARG);
    assert_null(ds);
    assert_non_null(strstr(err.text, "datagen:"));
}

/* A call validation refuses only for its numbers: below a minimum, above a maximum, or a
 * number outside a numeric enum (the grammar gives calls their shape, not their range; the
 * person asked for that number, docs/grammar.md). */
static bool
only_out_of_range(enum pipit_status st, const struct pipit_arg_problem *prob, size_t n_prob) {
    if (st != PIPIT_ERR_INVALID_ARGS || n_prob == 0) {
        return false;
    }
    for (size_t i = 0; i < n_prob; i++) {
        const char *m = prob[i].message;
        bool number = (m[0] >= '0' && m[0] <= '9') || m[0] == '-';
        if (!number ||
            (strstr(m, " is below the minimum ") == NULL &&
             strstr(m, " is above the maximum ") == NULL && strstr(m, " is not one of ") == NULL)) {
            return false;
        }
    }
    return true;
}

/* Every camera tool appears; every call parses and validates against tools/camera.json, or is
 * the agent's built-in undo, or asks for a number outside its range (the person's request, to
 * be refused); state lines have the device's format; plain answers are short sentences. */
static void test_datagen_covers_tools(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(CAMERA_SPEC, &ts, &err), PIPIT_OK);
    size_t n_tools = pipit_toolset_n_tools(ts);
    int *seen = calloc(n_tools, sizeof(int));
    assert_non_null(seen);
    struct pipit_dataset *ds = make_data(1, 20000, 1000);
    int plain = 0, n_undo = 0, n_refused = 0, n_calls = 0;
    for (int split = 0; split < 2; split++) {
        enum pipit_split sp = (enum pipit_split)split;
        for (int32_t i = 0; i < pipit_dataset_size(ds, sp); i++) {
            struct pipit_example ex;
            pipit_dataset_get(ds, sp, i, &ex);
            if (ex.tracker) {
                continue; /* test_datagen_tracker */
            }
            assert_int_equal(strncmp(ex.state, "zoom=", 5), 0);
            assert_non_null(strstr(ex.state, " flash="));
            assert_non_null(strstr(ex.state, " facing="));
            assert_non_null(strstr(ex.state, " recording="));
            assert_non_null(strstr(ex.state, " timer="));
            assert_non_null(strstr(ex.state, " mode="));
            assert_true(ex.utterance[0] != '\0' && strchr(ex.utterance, '\n') == NULL);
            if (!pipit_call_detect(PIPIT_SYNTAX_PIPIT, ex.output)) {
                assert_true(strlen(ex.output) < 160);
                plain++;
                continue;
            }
            struct pipit_call call;
            if (pipit_call_parse(PIPIT_SYNTAX_PIPIT, ex.output, &call, &err) != PIPIT_OK) {
                fail_msg("%s does not parse: %s", ex.output, err.text);
            }
            n_calls++;
            if (strcmp(call.name, "undo") == 0 && pipit_toolset_find(ts, "undo") < 0) {
                /* the agent's built-in undo (docs/agent.md): no arguments */
                assert_string_equal(ex.output, "<call>undo()");
                n_undo++;
                pipit_call_clear(&call);
                continue;
            }
            struct pipit_arg_problem prob[4];
            size_t n_prob = 0;
            enum pipit_status st = pipit_toolset_validate_args(
                ts, call.name, call.args_json, strlen(call.args_json), prob, 4, &n_prob);
            if (st != PIPIT_OK && !only_out_of_range(st, prob, n_prob)) {
                fail_msg("%s does not validate: %s %s", ex.output, n_prob ? prob[0].path : "",
                         n_prob ? prob[0].message : "");
            }
            n_refused += st != PIPIT_OK;
            int32_t k = pipit_toolset_find(ts, call.name);
            assert_true(k >= 0);
            seen[k] += split == 0;
            if (strcmp(call.name, "process_with_cloud_llm") == 0) {
                /* the question is copied verbatim */
                char want[600];
                snprintf(want, sizeof(want), "{\"user_query_context\": \"%s\"", ex.utterance);
                char got[600];
                snprintf(got, sizeof(got), "%s", call.args_json);
                assert_non_null(strstr(ex.output, ex.utterance));
            }
            pipit_call_clear(&call);
        }
    }
    for (size_t k = 0; k < n_tools; k++) {
        if (seen[k] == 0) {
            fail_msg("no training example calls %s", pipit_toolset_tool_name(ts, k));
        }
    }
    assert_true(plain > 500); /* chat and unsupported requests answer in words */
    print_message("%d calls: %d built-in undo, %d out of range\n", n_calls, n_undo, n_refused);
    assert_true(n_refused < n_calls / 10); /* most calls are what validation accepts */
    free(seen);
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* Relative commands read the state line: "switch cameras" goes to the other camera. */
static void test_datagen_relative(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(3, 20000, 10);
    int checked = 0;
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (strcmp(ex.category, "relative") != 0 || strstr(ex.output, "switch_camera") == NULL) {
            continue;
        }
        bool front = strstr(ex.state, "facing=front") != NULL;
        assert_non_null(strstr(ex.output, front ? "\"back\"" : "\"front\""));
        checked++;
    }
    assert_true(checked > 50);
    pipit_dataset_free(ds);
}

/* Chat never calls a tool; questions about the camera are answered from the state line;
 * memory lines repeat no pinned error (the agent writes each once). */
static void test_datagen_chat_and_memory(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(5, 30000, 10);
    int chat = 0, status = 0, with_memory = 0;
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (strcmp(ex.category, "chat") == 0) {
            assert_null(strstr(ex.output, "<call>"));
            chat++;
        }
        char want[64];
        if (strncmp(ex.output, "The flash is ", 13) == 0) {
            snprintf(want, sizeof(want), "flash=%.*s", (int)(strlen(ex.output) - 14),
                     ex.output + 13);
            assert_non_null(strstr(ex.state, want));
            status++;
        } else if (strncmp(ex.output, "The zoom is ", 12) == 0) {
            snprintf(want, sizeof(want), "zoom=%.*s ", (int)(strlen(ex.output) - 14),
                     ex.output + 12);
            assert_true(strncmp(ex.state, want, strlen(want)) == 0);
            status++;
        }
        if (ex.memory[0] != '\0') {
            with_memory++;
            for (const char *p = strstr(ex.memory, "tool_error: "); p != NULL;
                 p = strstr(p + 1, "tool_error: ")) {
                size_t len = (size_t)(strchr(p, '\n') - p) + 1;
                char line[160];
                snprintf(line, sizeof(line), "%.*s", (int)len, p);
                assert_null(strstr(p + len, line));
            }
        }
    }
    assert_true(chat > 2000);
    assert_true(status > 80);                                /* flash and zoom of the six keys */
    assert_true(with_memory > 12000 && with_memory < 24000); /* about 60% */
    pipit_dataset_free(ds);
}

/* State-Tracker examples: about tracker_percent of the data; the messages are the agent's
 * (user, assistant, tool lines); the answer is "# NO_UPDATE" or one line the tracker grammar
 * accepts (src/tracker.c); their prompt is the role prompt; tracker_percent 0 turns them off. */
static void test_datagen_tracker(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(7, 20000, 10);
    int n = 0, updates = 0, refusals = 0;
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (!ex.tracker) {
            continue;
        }
        n++;
        assert_string_equal(ex.category, "tracker");
        assert_string_equal(ex.state, "");
        assert_int_equal(strncmp(ex.utterance, "user: ", 6), 0);
        assert_non_null(strstr(ex.utterance, "\nassistant: "));
        if (strstr(ex.utterance, "assistant: <call>") != NULL) {
            assert_non_null(strstr(ex.utterance, "\ntool: {\"ok\":"));
        }
        if (strcmp(ex.output, "# NO_UPDATE") != 0) {
            updates++;
            refusals += strncmp(ex.output, "agent_refusals: ", 16) == 0;
            size_t len = strlen(ex.output);
            assert_true(len >= 4 && ex.output[len - 1] == '\n');
            assert_null(strchr(ex.output, '\n') + 1 < ex.output + len ? ex.output : NULL);
            const char *colon = strstr(ex.output, ": ");
            assert_non_null(colon);
            for (const char *k = ex.output; k < colon; k++) {
                assert_true((*k >= 'a' && *k <= 'z') || *k == '_');
            }
            assert_null(strstr(ex.memory, ex.output)); /* never repeats the checklist */
        }
        char *prompt = pipit_train_prompt_example("camera", &ex);
        assert_non_null(prompt);
        assert_int_equal(strncmp(prompt, "tracker\n", 8), 0);
        assert_non_null(strstr(prompt, "New Messages:\nuser: "));
        size_t pl = strlen(prompt);
        assert_string_equal(prompt + pl - 21, "New Lines to Append:\n");
        pipit_free(prompt);
    }
    assert_true(n > 1200 && n < 2000); /* 8% of 20000 */
    assert_true(updates > n / 4 && refusals > 50);
    pipit_dataset_free(ds);
    struct pipit_datagen_params p = pipit_datagen_default_params();
    p.n_train = 5000;
    p.n_valid = 10;
    p.tracker_percent = 0;
    struct pipit_error err;
    assert_int_equal(pipit_datagen_camera(&p, &ds, &err), PIPIT_OK);
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        assert_false(ex.tracker);
    }
    pipit_dataset_free(ds);
    p.tracker_percent = 101;
    assert_int_equal(pipit_datagen_camera(&p, &ds, &err), PIPIT_ERR_INVALID_ARG);
}

/* The validation split shares no phrasing template with training. */
static void test_heldout_by_template(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(1, 30000, 2000);
    enum {
        MAX_ID = 128 * 64 /* intent * 64 + template: room for 128 intents (65 now) */
    };
    bool *train_ids = calloc(MAX_ID, sizeof(bool));
    assert_non_null(train_ids);
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        assert_true(ex.template_id >= 0 && ex.template_id < MAX_ID);
        train_ids[ex.template_id] = true;
    }
    int cats = 0;
    const char *last = "";
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_VALID); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_VALID, i, &ex);
        assert_true(ex.template_id >= 0 && ex.template_id < MAX_ID);
        assert_false(train_ids[ex.template_id]);
        if (strcmp(ex.category, last) != 0) {
            cats++;
            last = ex.category;
        }
    }
    assert_true(cats > 10); /* many categories are held out, not one */
    free(train_ids);
    pipit_dataset_free(ds);
}

static void test_prompt_format(void **state) {
    (void)state;
    char *p = pipit_train_prompt("camera", NULL, "zoom=1 flash=off", "zoom in");
    assert_string_equal(p, "camera\nState: zoom=1 flash=off\nUser: zoom in\nAssistant: ");
    pipit_free(p);
    p = pipit_train_prompt("camera", "grid: true\ndone: take_photo\n", "zoom=1", "hi");
    assert_string_equal(p, "camera\ngrid: true\ndone: take_photo\nState: zoom=1\nUser: "
                           "hi\nAssistant: ");
    pipit_free(p);
    assert_null(pipit_train_prompt(NULL, NULL, "", ""));
}

static void tmp_path(char *buf, size_t size, const char *name) {
    snprintf(buf, size, "%s/test-train-%ld-%s", PIPIT_TEST_MODEL_DIR, (long)getpid(), name);
}

/* ============================================================================
 * unit: overlap between scenario sets and the training data */

/* The surface noise both generators share: a typo stays inside one word of four letters or
 * more, at the offsets asked for; the case thresholds select each case. */
static void test_surface_noise(void **state) {
    (void)state;
    uint64_t rng = 5;
    char text[32];
    snprintf(text, sizeof(text), "a an the"); /* no word of four letters */
    train_add_typo(&rng, text, 2);
    assert_string_equal(text, "a an the");
    /* offsets 1..2 of "abcdefgh": swap, drop or double b or c */
    static const char *const near[] = {"go acbdefgh", "go abdcefgh",  "go acdefgh",
                                       "go abdefgh",  "go abbcdefgh", "go abccdefgh"};
    int seen[6] = {0}, far = 0;
    for (int i = 0; i < 300; i++) {
        snprintf(text, sizeof(text), "go abcdefgh");
        train_add_typo(&rng, text, 2);
        int k = 0;
        while (k < 6 && strcmp(text, near[k]) != 0) {
            k++;
        }
        assert_true(k < 6);
        seen[k]++;
        snprintf(text, sizeof(text), "go abcdefgh");
        train_add_typo(&rng, text, UINT32_MAX); /* anywhere after the first letter */
        assert_memory_equal(text, "go a", 4);
        assert_string_not_equal(text, "go abcdefgh");
        k = 0;
        while (k < 6 && strcmp(text, near[k]) != 0) {
            k++;
        }
        far += k == 6;
    }
    for (int k = 0; k < 6; k++) {
        assert_true(seen[k] > 0);
    }
    assert_true(far > 0);
    for (int i = 0; i < 50; i++) {
        snprintf(text, sizeof(text), "take a photo");
        train_apply_case(&rng, text, 20, 20, 20);
        assert_string_equal(text, "take a photo");
        train_apply_case(&rng, text, 0, 20, 20);
        assert_string_equal(text, "Take a photo");
        train_apply_case(&rng, text, 0, 0, 20);
        assert_string_equal(text, "TAKE A PHOTO");
        snprintf(text, sizeof(text), "take a photo");
        train_apply_case(&rng, text, 0, 0, 0);
        assert_string_equal(text, "Take A Photo");
    }
}

static void test_overlap_fold(void **state) {
    (void)state;
    static const struct {
        const char *text, *verbatim, *near;
    } cases[] = {
        {"Zoom in, to 2X!", "zoom in to 2x", "zoom in to 2 x"},
        {"  Don't\tuse   the FLASH...", "dont use the flash", "dont use the flash"},
        {"can u zoom to three x pls", "can u zoom to three x pls", "zoom to 3 x"},
        {"ok can you please set ev to +.5 for me thanks",
         "ok can you please set ev to .5 for me thanks", "set ev to 0.5"},
        {"zoom one and a half", "zoom one and a half", "zoom 1.5"},
        {"zoom 1 and a half", "zoom 1 and a half", "zoom 1.5"},
        {"Zoom 1.50x", "zoom 1.50x", "zoom 1.5 x"},
        {"exposure one point five", "exposure one point five", "exposure 1.5"},
        {"point five zoom", "point five zoom", "0.5 zoom"},
        {"jpeg ninety-five", "jpeg ninety five", "jpeg 95"},
        {"quality one hundred", "quality one hundred", "quality 100"},
        {"16:9 please", "16 9 please", "16 9"},
        {"thanks!", "thanks", "thanks"}, /* only fillers: kept */
        {"ok, thank you", "ok thank you", "ok thank you"},
        {"take it now", "take it now", "take it"},
        {"now take it", "now take it", "take it"},
        {"caf\xc3\xa9 \xe2\x80\x99selfie\xe2\x80\x99", "caf\xc3\xa9 selfie", "caf\xc3\xa9 selfie"},
        {"?!", "", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *v = pipit_overlap_fold(cases[i].text, false);
        char *n = pipit_overlap_fold(cases[i].text, true);
        assert_non_null(v);
        assert_non_null(n);
        if (strcmp(v, cases[i].verbatim) != 0 || strcmp(n, cases[i].near) != 0) {
            fail_msg("fold(\"%s\") = \"%s\" / \"%s\", want \"%s\" / \"%s\"", cases[i].text, v, n,
                     cases[i].verbatim, cases[i].near);
        }
        pipit_free(v);
        pipit_free(n);
    }
    assert_null(pipit_overlap_fold(NULL, false));
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

struct overlap_log {
    int n, n_segments, first_line;
    char first_id[64];
};

static void log_overlap(const struct pipit_overlap *o, void *ud) {
    struct overlap_log *l = ud;
    assert_non_null(o->train);
    assert_true(o->kind == PIPIT_OVERLAP_VERBATIM || o->kind == PIPIT_OVERLAP_NEAR);
    assert_true(o->segment < o->n_segments);
    if (l->n++ == 0) {
        l->first_line = o->line;
        snprintf(l->first_id, sizeof(l->first_id), "%s", o->id);
    }
    l->n_segments += o->segment >= 0;
}

/* The index finds training utterances (and the person's lines of State-Tracker examples) in
 * other casings, punctuation, number spellings and fillers, and nothing else; a scenario file is
 * checked utterance by utterance and segment by segment, with file:line and JSON paths in its
 * errors. */
static void test_overlap_index(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(11, 3000, 10);
    struct pipit_overlap_index *idx = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_overlap_index_init(NULL, &idx, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_overlap_index_init(ds, NULL, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_overlap_index_init(ds, &idx, &err), PIPIT_OK);
    assert_true(pipit_overlap_index_size(idx) > 1000 && pipit_overlap_index_size(idx) <= 3000);

    /* a training utterance that is the second segment of a compound the router splits, and
     * the person's line of a State-Tracker example */
    const char *utt = NULL, *tracker_line = NULL;
    char compound[400], seg[3][ROUTER_MAX_SEGMENT];
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (!ex.tracker && utt == NULL && strcmp(ex.category, "flash") == 0) {
            snprintf(compound, sizeof(compound), "turn qwxz sideways and then %s", ex.utterance);
            if (router_split(compound, seg, 3) == 2) {
                utt = ex.utterance;
            }
        }
        if (ex.tracker && tracker_line == NULL) {
            tracker_line = ex.utterance; /* "user: ...\n..." */
        }
    }
    assert_non_null(utt);
    assert_non_null(tracker_line);
    const char *train = NULL;
    assert_int_equal(pipit_overlap_find(idx, utt, &train), PIPIT_OVERLAP_VERBATIM);
    assert_non_null(train);
    char buf[512];
    snprintf(buf, sizeof(buf), "  %s?!", utt);
    for (char *p = buf; *p != '\0'; p++) {
        *p = (char)toupper((unsigned char)*p);
    }
    assert_int_equal(pipit_overlap_find(idx, buf, NULL), PIPIT_OVERLAP_VERBATIM);
    snprintf(buf, sizeof(buf), "ok hey, can you %s for me, thank you", utt);
    assert_int_not_equal(pipit_overlap_find(idx, buf, &train), PIPIT_OVERLAP_NONE);
    assert_non_null(train);
    snprintf(buf, sizeof(buf), "%.*s", (int)(strchr(tracker_line, '\n') - tracker_line - 6),
             tracker_line + 6);
    assert_int_not_equal(pipit_overlap_find(idx, buf, NULL), PIPIT_OVERLAP_NONE);
    assert_int_equal(pipit_overlap_find(idx, "qwxz the purple elephant sideways", &train),
                     PIPIT_OVERLAP_NONE);
    assert_null(train);
    assert_int_equal(pipit_overlap_find(idx, "...", NULL), PIPIT_OVERLAP_NONE);
    assert_int_equal(pipit_overlap_find(NULL, utt, NULL), PIPIT_OVERLAP_NONE);
    assert_int_equal(pipit_overlap_find(idx, NULL, NULL), PIPIT_OVERLAP_NONE);

    /* a scenario file: line 1 unseen, line 2 blank, line 3 a comment, line 4 the training
     * utterance, line 5 a compound whose second segment is the training utterance */
    char path[512];
    tmp_path(path, sizeof(path), "overlap.jsonl");
    char *text = NULL;
    json_t *j1 = json_pack("{s:s,s:[{s:s,s:[]}]}", "id", "seen", "turns", "user", utt, "expect");
    json_t *j2 = json_pack("{s:s,s:[{s:s},{s:s}]}", "id", "compound", "turns", "user", "qwxz blorp",
                           "user", compound);
    char *l1 = json_dumps(j1, JSON_COMPACT), *l2 = json_dumps(j2, JSON_COMPACT);
    size_t len = strlen(l1) + strlen(l2) + 200;
    text = malloc(len);
    assert_non_null(text);
    snprintf(text, len,
             "{\"id\": \"new\", \"turns\": [{\"user\": \"qwxz the purple elephant\"}]}\n\n# "
             "comment\n%s\n%s\n",
             l1, l2);
    write_text(path, text);
    struct pipit_overlap_counts c = {0};
    struct overlap_log log = {0};
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, log_overlap, &log, &c, &err),
                     PIPIT_OK);
    assert_int_equal(c.n_utterances, 4);
    assert_int_equal(c.n_utterances_overlap, 1);
    assert_int_equal(log.first_line, 4);
    assert_string_equal(log.first_id, "seen");
    assert_int_equal(c.n_segments, 5); /* the compound is two */
    assert_int_equal(c.n_segments_overlap, 2);
    assert_int_equal(log.n_segments, 1);
    assert_int_equal(log.n, 2);
    assert_int_equal(c.n_verbatim + c.n_near, log.n);
    /* counts add up over files */
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, NULL, NULL, &c, &err), PIPIT_OK);
    assert_int_equal(c.n_utterances, 8);
    free(text);
    free(l1);
    free(l2);
    json_decref(j1);
    json_decref(j2);

    /* errors name the file, the line and the JSON path */
    write_text(path, "# x\n{\"id\": \"a\", \"turns\": [{\"user\": 3}]}\n");
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, NULL, NULL, NULL, &err),
                     PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, ":2: $.turns[0].user"));
    write_text(path, "{\"id\": \"a\", \"turns\": []}\n{\"id\": \"b\", \"turns\": [}\n");
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, NULL, NULL, NULL, &err),
                     PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, ":2:"));
    write_text(path, "{\"turns\": []}\n");
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, NULL, NULL, NULL, &err),
                     PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "$.id"));
    remove(path);
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, NULL, NULL, NULL, &err),
                     PIPIT_ERR_IO);
    assert_non_null(strstr(err.text, path));
    assert_int_equal(pipit_overlap_check_file(NULL, path, NULL, 0, NULL, NULL, NULL, &err),
                     PIPIT_ERR_INVALID_ARG);
    pipit_overlap_index_free(idx);
    pipit_overlap_index_free(NULL);
    pipit_dataset_free(ds);
}

/* A compound is split by the router of the scenario's tool set, as the agent splits it: a
 * segment that only the pack's words make a command ("flash qwxz" holds the camera's keyword
 * "flash", not a generic word) is found with the tool set and not with the generic lexicon; a
 * scenario whose device has no tool set given is an error naming the line. */
static void test_overlap_pack_router(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(11, 3000, 10);
    struct pipit_overlap_index *idx = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_overlap_index_init(ds, &idx, &err), PIPIT_OK);
    struct pipit_toolset *ts = NULL;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    struct router *r = router_new(ts);
    assert_non_null(r);
    char compound[400], seg[3][ROUTER_MAX_SEGMENT];
    const char *utt = NULL;
    for (int32_t i = 0; utt == NULL && i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        if (ex.tracker || strchr(ex.utterance, '"') != NULL) {
            continue;
        }
        snprintf(compound, sizeof(compound), "flash qwxz and %s", ex.utterance);
        if (router_split(compound, seg, 3) == 1 && router_split_with(r, compound, seg, 3) == 2) {
            utt = ex.utterance;
        }
    }
    router_free(r);
    assert_non_null(utt);
    char path[512], text[600];
    tmp_path(path, sizeof(path), "overlap-pack.jsonl");
    snprintf(text, sizeof(text),
             "{\"id\": \"c\", \"device\": \"camera\", \"turns\": [{\"user\": \"%s\"}]}\n",
             compound);
    write_text(path, text);
    struct pipit_eval_device cam = {"camera", ts};
    struct pipit_overlap_counts c = {0};
    struct overlap_log log = {0};
    assert_int_equal(pipit_overlap_check_file(idx, path, &cam, 1, log_overlap, &log, &c, &err),
                     PIPIT_OK);
    assert_int_equal(c.n_segments, 2);
    assert_int_equal(c.n_segments_overlap, 1);
    assert_int_equal(log.n_segments, 1);
    memset(&c, 0, sizeof(c));
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 0, NULL, NULL, &c, &err), PIPIT_OK);
    assert_int_equal(c.n_segments, 1); /* the generic lexicon keeps it whole: nothing found */
    assert_int_equal(c.n_segments_overlap, 0);
    /* the scenario's device must have a tool set */
    struct pipit_eval_device phone = {"phone", ts};
    assert_int_equal(pipit_overlap_check_file(idx, path, &phone, 1, NULL, NULL, NULL, &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, ":1: $.device"));
    assert_non_null(strstr(err.text, "camera"));
    /* no device: the one tool set given (as pipit eval runs it); with two, which is not said */
    write_text(path, "{\"id\": \"c\", \"turns\": []}\n");
    assert_int_equal(pipit_overlap_check_file(idx, path, &cam, 1, NULL, NULL, NULL, &err),
                     PIPIT_OK);
    struct pipit_eval_device both[2] = {{"camera", ts}, {"phone", ts}};
    assert_int_equal(pipit_overlap_check_file(idx, path, both, 2, NULL, NULL, NULL, &err),
                     PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, ":1: $.device"));
    assert_int_equal(pipit_overlap_check_file(idx, path, NULL, 1, NULL, NULL, NULL, &err),
                     PIPIT_ERR_INVALID_ARG);
    remove(path);
    pipit_toolset_free(ts);
    pipit_overlap_index_free(idx);
    pipit_dataset_free(ds);
}

/* --exclude: an index of a scenario file's turns and segments; a data set drawn with it never
 * says them, while the same seed without it does. */
static void test_overlap_exclude(void **state) {
    (void)state;
    struct pipit_error err;
    char path[512];
    tmp_path(path, sizeof(path), "exclude.jsonl");
    write_text(path, "{\"id\": \"a\", \"turns\": [{\"user\": \"take a photo\"}, {\"user\": "
                     "\"turn on the grid and then turn the flash on\"}]}\n");
    struct pipit_overlap_index *ex = NULL;
    assert_int_equal(pipit_overlap_index_empty(NULL, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_overlap_index_empty(&ex, &err), PIPIT_OK);
    assert_int_equal(pipit_overlap_index_size(ex), 0);
    assert_int_equal(pipit_overlap_index_add_file(ex, path, NULL, 0, &err), PIPIT_OK);
    /* the two turns and the compound's two segments */
    assert_int_equal(pipit_overlap_index_size(ex), 4);
    assert_int_equal(pipit_overlap_find(ex, "Please take a photo!", NULL), PIPIT_OVERLAP_NEAR);
    assert_int_equal(pipit_overlap_find(ex, "turn the flash on", NULL), PIPIT_OVERLAP_VERBATIM);
    assert_int_equal(pipit_overlap_index_add_file(NULL, path, NULL, 0, &err),
                     PIPIT_ERR_INVALID_ARG);
    write_text(path, "{\"id\": \"a\", \"turns\": [{\"user\": 1}]}\n");
    assert_int_equal(pipit_overlap_index_add_file(ex, path, NULL, 0, &err), PIPIT_ERR_JSON);
    assert_non_null(strstr(err.text, "$.turns[0].user"));
    remove(path);
    assert_int_equal(pipit_overlap_index_add_file(ex, path, NULL, 0, &err), PIPIT_ERR_IO);

    int said[2] = {0, 0};
    for (int with = 0; with < 2; with++) {
        struct pipit_datagen_params p = pipit_datagen_default_params();
        p.n_train = 20000;
        p.n_valid = 200;
        p.exclude = with ? ex : NULL;
        struct pipit_dataset *ds = NULL;
        assert_int_equal(pipit_datagen_camera(&p, &ds, &err), PIPIT_OK);
        for (int sp = 0; sp < 2; sp++) {
            for (int32_t i = 0; i < pipit_dataset_size(ds, (enum pipit_split)sp); i++) {
                struct pipit_example e;
                pipit_dataset_get(ds, (enum pipit_split)sp, i, &e);
                said[with] += !e.tracker && pipit_overlap_find(ex, e.utterance, NULL) != 0;
            }
        }
        assert_int_equal(pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN), 20000);
        pipit_dataset_free(ds);
    }
    assert_true(said[0] > 0);
    assert_int_equal(said[1], 0);
    pipit_overlap_index_free(ex);
}

static void print_overlap(const struct pipit_overlap *o, void *ud) {
    (void)ud;
    print_message("%s:%d: %s turn %d segment %d/%d: %s \"%s\" (training: \"%s\")\n", o->file,
                  (int)o->line, o->id, (int)o->turn, (int)o->segment + 1, (int)o->n_segments,
                  o->kind == PIPIT_OVERLAP_VERBATIM ? "verbatim" : "near", o->text, o->train);
}

/* The shipped scenario sets - both development sets and the blind held-out set - say nothing
 * the training data of the shipped recipe says (the default seed, the camera's sets excluded:
 * `pipit train --exclude eval/camera.jsonl --exclude eval/camera-holdout.jsonl`): no utterance
 * and no router segment, verbatim or near (docs/training.md, "Overlap"). Without the exclusion
 * the same data says some of them: the check can fail. */
static void test_shipped_sets_no_overlap(void **state) {
    (void)state;
    struct pipit_datagen_params p = pipit_datagen_default_params();
    struct pipit_dataset *ds = NULL;
    struct pipit_error err;
    struct pipit_overlap_index *ex = NULL;
    struct pipit_toolset *cam = NULL;
    if (pipit_toolset_load_file(CAMERA_SPEC, &cam, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    struct pipit_eval_device cam_dev = {"camera", cam};
    assert_int_equal(pipit_overlap_index_empty(&ex, &err), PIPIT_OK);
    assert_int_equal(
        pipit_overlap_index_add_file(ex, PIPIT_SOURCE_DIR "/eval/camera.jsonl", &cam_dev, 1, &err),
        PIPIT_OK);
    assert_int_equal(pipit_overlap_index_add_file(ex, PIPIT_SOURCE_DIR "/eval/camera-holdout.jsonl",
                                                  &cam_dev, 1, &err),
                     PIPIT_OK);
    pipit_toolset_free(cam);
    p.exclude = ex;
    assert_int_equal(pipit_datagen_camera(&p, &ds, &err), PIPIT_OK);
    pipit_overlap_index_free(ex);
    struct pipit_overlap_index *idx = NULL;
    assert_int_equal(pipit_overlap_index_init(ds, &idx, &err), PIPIT_OK);
    pipit_dataset_free(ds);
    assert_true(pipit_overlap_index_size(idx) > 50000);
    /* each set split by its own tool set's router, as the agent splits it */
    static const char *const sets[][3] = {
        {PIPIT_SOURCE_DIR "/eval/camera.jsonl", "camera", PIPIT_SOURCE_DIR "/tools/camera.json"},
        {PIPIT_SOURCE_DIR "/eval/phone.jsonl", "phone", PIPIT_SOURCE_DIR "/tools/phone.json"},
        {PIPIT_SOURCE_DIR "/eval/camera-holdout.jsonl", "camera",
         PIPIT_SOURCE_DIR "/tools/camera.json"},
        {PIPIT_SOURCE_DIR "/eval/home.jsonl", "home", PIPIT_SOURCE_DIR "/tools/home.json"},
        {PIPIT_SOURCE_DIR "/eval/camera-long.jsonl", "camera",
         PIPIT_SOURCE_DIR "/tools/camera.json"},
        {PIPIT_SOURCE_DIR "/eval/camera-long-holdout.jsonl", "camera",
         PIPIT_SOURCE_DIR "/tools/camera.json"}};
    int found = 0;
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        struct pipit_overlap_counts c = {0};
        struct pipit_toolset *ts = NULL;
        if (sets[i][2] != NULL && pipit_toolset_load_file(sets[i][2], &ts, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        struct pipit_eval_device dev = {sets[i][1], ts};
        if (pipit_overlap_check_file(idx, sets[i][0], ts != NULL ? &dev : NULL, ts != NULL ? 1 : 0,
                                     print_overlap, NULL, &c, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        pipit_toolset_free(ts);
        print_message("%s: %d/%d utterances, %d/%d segments in the training data\n", sets[i][0],
                      (int)c.n_utterances_overlap, (int)c.n_utterances, (int)c.n_segments_overlap,
                      (int)c.n_segments);
        assert_true(c.n_utterances >= 80); /* the sets were read */
        found += c.n_verbatim + c.n_near;
    }
    assert_int_equal(found, 0);
    pipit_overlap_index_free(idx);
}

/* ============================================================================
 * model: vocabulary and training */

static void test_vocab_roundtrip(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(1, 3000, 10);
    char vocab[512], model[512];
    tmp_path(vocab, sizeof(vocab), "vocab.gguf");
    tmp_path(model, sizeof(model), "vocab-model.gguf");
    struct pipit_error err;
    assert_int_equal(pipit_vocab_build(ds, "camera", 200, vocab, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(pipit_vocab_build(ds, "camera", 600, vocab, &err), PIPIT_OK);
    struct pipit_make_model_params mp = pipit_make_model_default_params();
    mp.vocab_path = vocab;
    mp.n_embd = 16;
    mp.n_ff = 16;
    assert_int_equal(pipit_make_model(&mp, model, &err), PIPIT_OK);
    struct pipit_model *m = test_load_model(model);
    struct pipit_model_info info;
    pipit_model_get_info(m, &info);
    assert_int_equal(info.n_vocab, 600);
    assert_int_equal(info.token_bos, 1);
    assert_int_equal(info.token_eos, 2);

    static const char *const texts[] = {
        "camera\nState: zoom=1 flash=off facing=back recording=no timer=0 mode=auto\n"
        "User: zoom in to 2x\nAssistant: ",
        "<call>set_zoom(level=2)",
        "Zoom  in\twith  TWO spaces and a tab",
        "\xc3\xbcn\xc3\xaf"
        "c\xc3\xb6"
        "d\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"
        " ~`|{}",
        " leading and trailing spaces ",
        "\n\nnewlines\n",
        "qwxz zzz 0123456789 !@#$%^&*()_+-=[];',./<>?",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        int32_t *toks = NULL, n = 0;
        assert_int_equal(pipit_tokenize_alloc(m, texts[i], false, false, &toks, &n), PIPIT_OK);
        char *back = pipit_detokenize(m, toks, n, false);
        assert_non_null(back);
        assert_string_equal(back, texts[i]);
        pipit_free(back);
        pipit_free(toks);
    }
    /* "<call>" is one user-defined token, also without parse_special */
    int32_t toks[8];
    assert_int_equal(pipit_tokenize(m, "<call>", false, false, toks, 8), 1);
    assert_int_equal(toks[0], 259);
    /* the state line is short in this vocabulary */
    int32_t big[128];
    int32_t n = pipit_tokenize(m, "zoom=1 flash=off facing=back recording=no timer=0 mode=auto",
                               false, false, big, 128);
    assert_true(n > 0 && n < 30);
    /* tokenizing line by line gives the same tokens as the whole */
    int32_t a[128], b1[128];
    int32_t na = pipit_tokenize(m, "camera\nState: zoom=1", false, false, a, 128);
    int32_t nb1 = pipit_tokenize(m, "camera\n", false, false, b1, 128);
    int32_t nb2 = pipit_tokenize(m, "State: zoom=1", false, false, b1 + nb1, 128 - nb1);
    assert_int_equal(na, nb1 + nb2);
    assert_memory_equal(a, b1, sizeof(int32_t) * (size_t)na);

    pipit_model_free(m);
    remove(vocab);
    remove(model);
    pipit_dataset_free(ds);
}

struct losses {
    float v[64];
    int n;
};

static void record_loss(const struct pipit_train_progress *p, void *ud) {
    struct losses *l = ud;
    if (l->n < 64) {
        l->v[l->n++] = p->loss;
    }
    assert_true(p->step >= 1 && p->step <= p->n_steps);
}

/* A 32-wide, one-layer model on `vocab`: seconds to train. */
static struct pipit_train_params tiny_params(const char *vocab) {
    struct pipit_train_params tp = pipit_train_default_params();
    tp.vocab_path = vocab;
    tp.n_embd = 32;
    tp.n_layer = 1;
    tp.n_head = 2;
    tp.n_ff = 64;
    tp.n_batch = 2;
    return tp;
}

static void test_tiny_training(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(5, 64, 8);
    char vocab[512], model[512], ckpt[512];
    tmp_path(vocab, sizeof(vocab), "tiny-vocab.gguf");
    tmp_path(model, sizeof(model), "tiny-trained.gguf");
    tmp_path(ckpt, sizeof(ckpt), "tiny-ckpt.gguf");
    struct pipit_error err;
    assert_int_equal(pipit_vocab_build(ds, "camera", 400, vocab, &err), PIPIT_OK);

    struct pipit_train_params tp = tiny_params(vocab);
    tp.n_steps = 30;
    tp.lr = 3e-3f;
    tp.lr_min = 3e-4f;
    tp.warmup = 3;
    tp.n_threads = 1;
    tp.progress_every = 5;
    tp.checkpoint = ckpt;
    tp.checkpoint_every = 10;
    struct losses l = {.n = 0};
    tp.progress = record_loss;
    tp.progress_user_data = &l;
    struct pipit_train_result res;
    if (pipit_train(&tp, ds, model, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    assert_int_equal(res.steps, 30);
    assert_int_equal(l.n, 6);
    assert_true(res.loss_last < res.loss_first);
    assert_true(l.v[5] < l.v[0] * 0.8f);
    assert_true(res.tokens > 0 && res.n_params > 0);

    /* libllama loads it and generates through the real engine */
    struct pipit_train_eval_result ev;
    if (pipit_train_evaluate(model, ds, PIPIT_SPLIT_VALID, 4, 1, NULL, NULL, &ev, &err) !=
        PIPIT_OK) {
        fail_msg("eval: %s", err.text);
    }
    assert_int_equal(ev.n, 4);

    /* F16 and Q8_0 exports of it: smaller, and libllama runs them */
    char conv[512], junk[512];
    tmp_path(conv, sizeof(conv), "tiny-converted.gguf");
    tmp_path(junk, sizeof(junk), "tiny-junk.gguf");
    struct stat sb32, sbq;
    assert_int_equal(stat(model, &sb32), 0);
    const enum pipit_weight_type types[] = {PIPIT_WEIGHTS_F16, PIPIT_WEIGHTS_Q8_0};
    off_t last = sb32.st_size;
    for (int k = 0; k < 2; k++) {
        if (pipit_train_convert(model, conv, types[k], 0, &err) != PIPIT_OK) {
            fail_msg("convert: %s", err.text);
        }
        assert_int_equal(stat(conv, &sbq), 0);
        assert_true(sbq.st_size < last); /* F32 > F16 > Q8_0 */
        last = sbq.st_size;
        if (pipit_train_evaluate(conv, ds, PIPIT_SPLIT_VALID, 4, 1, NULL, NULL, &ev, &err) !=
            PIPIT_OK) {
            fail_msg("eval of the converted model: %s", err.text);
        }
        assert_int_equal(ev.n, 4);
    }

    /* fine-tune from the Q8_0 export: its weights, dequantized, at step 0 of a new schedule */
    char tuned[512];
    tmp_path(tuned, sizeof(tuned), "tiny-tuned.gguf");
    struct pipit_train_params fp = tp;
    fp.init = conv;
    fp.n_steps = 5;
    fp.checkpoint = NULL;
    fp.progress = NULL;
    struct pipit_train_result fres;
    if (pipit_train(&fp, ds, tuned, &fres, &err) != PIPIT_OK) {
        fail_msg("fine-tune: %s", err.text);
    }
    assert_int_equal(fres.steps, 5);
    assert_true(fres.loss_first < res.loss_first * 0.8f); /* it starts where training ended */
    fp.n_embd = 64; /* another shape: refused, naming the file */
    fp.n_head = 2;
    assert_int_equal(pipit_train(&fp, ds, tuned, &fres, &err), PIPIT_ERR_CORRUPT);
    assert_non_null(strstr(err.text, conv));
    remove(tuned);

    FILE *jf = fopen(junk, "wb");
    assert_non_null(jf);
    fputs("not a model\n", jf);
    fclose(jf);
    assert_int_equal(pipit_train_convert(junk, conv, PIPIT_WEIGHTS_F16, 0, &err),
                     PIPIT_ERR_CORRUPT);
    assert_non_null(strstr(err.text, junk));
    assert_int_equal(pipit_train_convert(model, conv, (enum pipit_weight_type)7, 0, &err),
                     PIPIT_ERR_INVALID_ARG);
    remove(conv);
    remove(junk);

    /* resume from the checkpoint: the step count continues */
    tp.resume = ckpt;
    tp.n_steps = 32;
    tp.checkpoint = NULL;
    tp.progress = NULL;
    assert_int_equal(pipit_train(&tp, ds, model, &res, &err), PIPIT_OK);
    assert_int_equal(res.steps, 32);

    /* misuse */
    tp.n_embd = 30; /* not divisible into 2 heads of even size */
    assert_int_equal(pipit_train(&tp, ds, model, &res, &err), PIPIT_ERR_INVALID_ARG);
    remove(vocab);
    remove(model);
    remove(ckpt);
    pipit_dataset_free(ds);
}

/* The trainer's backward (blocked matrix products for ggml's out_prod) follows ggml's own step
 * for step: the same losses within rounding over steps whose updates depend on every gradient
 * of the step before. */
static void test_fast_backward_matches_ggml(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(5, 64, 8);
    char vocab[512], model[512];
    tmp_path(vocab, sizeof(vocab), "fastbw-vocab.gguf");
    tmp_path(model, sizeof(model), "fastbw-model.gguf");
    struct pipit_error err;
    assert_int_equal(pipit_vocab_build(ds, "camera", 400, vocab, &err), PIPIT_OK);
    struct losses l[2] = {{.n = 0}, {.n = 0}};
    struct pipit_train_result res[2];
    for (int k = 0; k < 2; k++) {
        struct pipit_train_params tp = tiny_params(vocab);
        tp.n_layer = 2;
        tp.n_steps = 8;
        tp.lr = 3e-3f;
        tp.lr_min = 3e-4f;
        tp.warmup = 1;
        tp.progress_every = 1;
        tp.progress = record_loss;
        tp.progress_user_data = &l[k];
        tp.reference_backward = k == 1;
        if (pipit_train(&tp, ds, model, &res[k], &err) != PIPIT_OK) {
            fail_msg("train: %s", err.text);
        }
    }
    assert_int_equal(l[0].n, 8);
    assert_int_equal(l[1].n, 8);
    assert_int_equal(res[0].tokens, res[1].tokens);
    for (int i = 0; i < 8; i++) {
        if (fabsf(l[0].v[i] - l[1].v[i]) > 1e-3f * l[1].v[i]) {
            fail_msg("step %d: loss %.6f, ggml's backward %.6f", i + 1, l[0].v[i], l[1].v[i]);
        }
    }
    assert_true(l[0].v[7] < l[0].v[0]); /* and it learns */
    remove(vocab);
    remove(model);
    pipit_dataset_free(ds);
}

static bool stop_after(void *ud) {
    int *left = ud;
    return --*left < 0;
}

static void record_lr(const struct pipit_train_progress *p, void *ud) {
    float *lr = ud;
    *lr = p->lr;
}

/* A run stops cleanly when asked (Ctrl-C in the CLI) or when its time budget ends, and writes a
 * model libllama runs; a time budget decays the learning rate to its floor by the end. */
static void test_training_stops(void **state) {
    (void)state;
    struct pipit_dataset *ds = make_data(5, 64, 8);
    char vocab[512], model[512];
    tmp_path(vocab, sizeof(vocab), "stop-vocab.gguf");
    tmp_path(model, sizeof(model), "stop-trained.gguf");
    struct pipit_error err;
    assert_int_equal(pipit_vocab_build(ds, "camera", 400, vocab, &err), PIPIT_OK);
    struct pipit_train_params tp = tiny_params(vocab);
    tp.n_steps = 1000000;
    tp.warmup = 2;
    tp.progress_every = 1;
    int left = 6;
    tp.should_stop = stop_after;
    tp.should_stop_user_data = &left;
    struct pipit_train_result res;
    if (pipit_train(&tp, ds, model, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    assert_int_equal(res.steps, 7); /* polled after each step: the 7th poll says stop */
    assert_int_equal(res.stopped, 2);
    struct pipit_train_eval_result ev;
    if (pipit_train_evaluate(model, ds, PIPIT_SPLIT_VALID, 2, 1, NULL, NULL, &ev, &err) !=
        PIPIT_OK) {
        fail_msg("eval of the interrupted model: %s", err.text);
    }
    assert_int_equal(ev.n, 2);

    /* a 2-second budget: stops by time, far before its steps, on the floor learning rate */
    tp.should_stop = NULL;
    tp.max_seconds = 2.0;
    float lr = 0.0f;
    tp.progress = record_lr;
    tp.progress_user_data = &lr;
    if (pipit_train(&tp, ds, model, &res, &err) != PIPIT_OK) {
        fail_msg("train: %s", err.text);
    }
    assert_int_equal(res.stopped, 1);
    assert_true(res.steps > 2 && res.steps < tp.n_steps);
    assert_true(res.seconds >= 2.0);
    /* the last step ran at t >= (its start - warm-up end) / budget: close to the floor */
    assert_true(lr < tp.lr_min + 0.25f * (tp.lr - tp.lr_min));

    /* a model trained for a pack records it, and an agent on another tool set says so */
    struct pipit_toolset *home = NULL, *camera = NULL;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/home.json", &home, &err) != PIPIT_OK ||
        pipit_toolset_load_file(CAMERA_SPEC, &camera, &err) != PIPIT_OK) {
        fail_msg("tools: %s", err.text);
    }
    char home_hash[17];
    pipit_toolset_content_hash(home, home_hash);
    tp.pack_name = pipit_toolset_pack_name(home);
    tp.pack_hash = home_hash;
    tp.max_seconds = 0.0;
    tp.n_steps = 2;
    tp.progress = NULL;
    assert_int_equal(pipit_train(&tp, ds, model, &res, &err), PIPIT_OK);
    struct pipit_model *m = NULL;
    assert_int_equal(pipit_model_load(model, NULL, &m, &err), PIPIT_OK);
    char meta[64];
    assert_true(pipit_model_meta_str(m, "pipit.pack.name", meta, sizeof(meta)) >= 0);
    assert_string_equal(meta, "home");
    struct pipit_agent_params ap = pipit_agent_default_params();
    ap.n_ctx = 512;
    struct pipit_agent *ag = NULL;
    assert_int_equal(pipit_agent_init(m, home, &ap, &ag, &err), PIPIT_OK);
    assert_string_equal(pipit_agent_model_notice(ag), ""); /* the pack it was trained for */
    pipit_agent_free(ag);
    assert_int_equal(pipit_agent_init(m, camera, &ap, &ag, &err), PIPIT_OK);
    assert_non_null(strstr(pipit_agent_model_notice(ag), "trained for the pack \"home\""));
    assert_non_null(strstr(pipit_agent_model_notice(ag), "\"camera\""));
    pipit_agent_free(ag);
    tp.pack_hash = "0123456789abcdef"; /* the same pack, another version */
    pipit_model_free(m);
    assert_int_equal(pipit_train(&tp, ds, model, &res, &err), PIPIT_OK);
    assert_int_equal(pipit_model_load(model, NULL, &m, &err), PIPIT_OK);
    assert_int_equal(pipit_agent_init(m, home, &ap, &ag, &err), PIPIT_OK);
    assert_non_null(strstr(pipit_agent_model_notice(ag), "another version of the pack \"home\""));
    pipit_agent_free(ag);
    pipit_model_free(m);
    pipit_toolset_free(home);
    pipit_toolset_free(camera);
    tp.pack_name = NULL;
    tp.pack_hash = NULL;

    /* all steps done: not stopped */
    tp.max_seconds = 0.0;
    tp.n_steps = 3;
    tp.progress = NULL;
    assert_int_equal(pipit_train(&tp, ds, model, &res, &err), PIPIT_OK);
    assert_int_equal(res.stopped, 0);
    assert_int_equal(res.steps, 3);
    remove(vocab);
    remove(model);
    pipit_dataset_free(ds);
}

/* ============================================================================
 * shipped model */

#define ST_DEFAULT "zoom=1 flash=off facing=back recording=no timer=0 mode=auto"

/* Every hand-written command this test ever had, with the state line (and memory) it is asked
 * in and the one right answer. Never delete one: a command the current model gets wrong goes
 * into KNOWN_MISSES below.
 * - 39 commands written for the first v1 in phrasings of held-out templates (216344c). 27 of
 *   them were kept in the test then; the other 12 were named in models/README.md only, so their
 *   state lines here are reconstructed (the state that makes the command change something).
 * - the segments of `make run` and a cloud question: training phrasings, the product's
 *   headline commands. */
static const struct {
    const char *state, *memory, *utterance, *want;
} SHIPPED_CASES[] = {
    {ST_DEFAULT, NULL, "zoom level 3", "<call>set_zoom(level=3)"},
    {"zoom=2 flash=off facing=back recording=no timer=0 mode=auto", NULL, "set it to 4x zoom",
     "<call>set_zoom(level=4)"},
    {ST_DEFAULT, NULL, "make the zoom 5x", "<call>set_zoom(level=5)"},
    {ST_DEFAULT, NULL, "magnify", "<call>adjust_zoom(direction=\"in\")"},
    {ST_DEFAULT, NULL, "use the flash", "<call>set_flash(mode=\"on\")"},
    {ST_DEFAULT, NULL, "set flash to automatic", "<call>set_flash(mode=\"auto\")"},
    {ST_DEFAULT, NULL, "take a shot", "<call>take_photo()"},
    {ST_DEFAULT, NULL, "begin recording", "<call>record_video(action=\"start\")"},
    {ST_DEFAULT, NULL, "take a video", "<call>record_video(action=\"start\")"},
    {ST_DEFAULT, NULL, "set the timer to 5 seconds", "<call>set_timer(seconds=5)"},
    {ST_DEFAULT, NULL, "delay the shot by 10 seconds", "<call>set_timer(seconds=10)"},
    {"zoom=1 flash=off facing=back recording=no timer=3 mode=auto", NULL, "cancel the timer",
     "<call>set_timer(seconds=0)"},
    {ST_DEFAULT, NULL, "use night mode", "<call>set_scene_mode(mode=\"night\")"},
    {ST_DEFAULT, NULL, "change to portrait mode", "<call>set_scene_mode(mode=\"portrait\")"},
    {ST_DEFAULT, NULL, "wb cloudy", "<call>set_white_balance(mode=\"cloudy\")"},
    {ST_DEFAULT, NULL, "use widescreen frame", "<call>set_aspect_ratio(ratio=\"16:9\")"},
    {ST_DEFAULT, NULL, "speed priority", "<call>set_quality_priority(priority=\"speed\")"},
    {ST_DEFAULT, NULL, "ev +1", "<call>set_exposure(ev=1)"},
    {ST_DEFAULT, NULL, "focus the center", "<call>tap_to_focus(x=0.5, y=0.5)"},
    {ST_DEFAULT, NULL, "ae af lock on", "<call>set_ae_af_lock(locked=true)"},
    {ST_DEFAULT, NULL, "enable grid lines", "<call>set_grid(enabled=true)"},
    {ST_DEFAULT, NULL, "i want the grid", "<call>set_grid(enabled=true)"},
    {ST_DEFAULT, NULL, "front camera", "<call>switch_camera(facing=\"front\")"},
    {"zoom=2 flash=off facing=front recording=no timer=0 mode=auto", NULL, "use the other camera",
     "<call>switch_camera(facing=\"back\")"},
    {"zoom=4 flash=off facing=back recording=no timer=0 mode=auto", NULL, "zoom back to 1x",
     "<call>set_zoom(level=1)"},
    {ST_DEFAULT, NULL, "appreciate it", "You're welcome."},
    {ST_DEFAULT, NULL, "good morning", "Hello! What should the camera do?"},
    /* the 12 the first v1 got wrong (models/README.md of 216344c) */
    {ST_DEFAULT, NULL, "punch in", "<call>adjust_zoom(direction=\"in\")"},
    {"zoom=3 flash=off facing=back recording=no timer=0 mode=auto", NULL, "less zoom",
     "<call>adjust_zoom(direction=\"out\")"},
    {"zoom=3 flash=off facing=back recording=no timer=0 mode=auto", NULL, "widen the shot",
     "<call>adjust_zoom(direction=\"out\")"},
    {"zoom=1 flash=on facing=back recording=no timer=0 mode=auto", NULL, "disable flash",
     "<call>set_flash(mode=\"off\")"},
    {ST_DEFAULT, NULL, "say cheese", "<call>take_photo()"},
    {"zoom=1 flash=off facing=back recording=yes timer=0 mode=auto", NULL, "stop filming",
     "<call>record_video(action=\"stop\")"},
    {ST_DEFAULT, NULL, "increase the exposure", "<call>set_exposure(ev=1)"},
    {ST_DEFAULT, NULL, "turn the camera around", "<call>switch_camera(facing=\"front\")"},
    {"zoom=1 flash=off facing=back recording=no timer=0 mode=night", NULL, "exit night mode",
     "<call>set_scene_mode(mode=\"auto\")"},
    {ST_DEFAULT, NULL, "shoot in raw", "Sorry, the camera can't do that."},
    {ST_DEFAULT, NULL, "when was the radio invented",
     "<call>process_with_cloud_llm(user_query_context=\"when was the radio invented\", "
     "reason_for_escalation=\"general knowledge\")"},
    {ST_DEFAULT, NULL, "what is gravity",
     "<call>process_with_cloud_llm(user_query_context=\"what is gravity\", "
     "reason_for_escalation=\"general knowledge\")"},
    /* the segments of `make run` and a cloud question */
    {ST_DEFAULT, NULL, "zoom in to 2x", "<call>set_zoom(level=2)"},
    {"zoom=2 flash=off facing=back recording=no timer=0 mode=auto", NULL, "night mode",
     "<call>set_scene_mode(mode=\"night\")"},
    {"zoom=2 flash=off facing=back recording=no timer=0 mode=night", NULL, "a 3 second timer",
     "<call>set_timer(seconds=3)"},
    {"zoom=2 flash=off facing=back recording=no timer=3 mode=night",
     "scene_mode: night\ntimer_s: 3\n", "take a photo", "<call>take_photo()"},
    {ST_DEFAULT, NULL, "switch to the front camera", "<call>switch_camera(facing=\"front\")"},
    {"zoom=1 flash=off facing=front recording=no timer=0 mode=auto", NULL, "turn on the flash",
     "<call>set_flash(mode=\"on\")"},
    {ST_DEFAULT, NULL, "what is the capital of peru",
     "<call>process_with_cloud_llm(user_query_context=\"what is the capital of peru\", "
     "reason_for_escalation=\"general knowledge\")"},
};

/* The commands of SHIPPED_CASES that models/pipit-camera-v1.gguf answers wrong, by utterance.
 * The test fails when more commands miss than this list is long, and prints every miss, so a
 * model that fixes one shrinks the list and one that breaks another fails. After retraining,
 * run `ctest -R train-shipped --output-on-failure` and paste the list it prints. */
static const char *const KNOWN_MISSES[] = {
    /* models/pipit-camera-v1.gguf fine-tuned on issue 15's data (2026-12-05): 10 of 46, down
     * from 11 ("delay the shot by 10 seconds" and "punch in" fixed; "what is gravity" is new:
     * the question is copied as "what is gr", which the agent replaces with the person's
     * words) */
    "magnify",         "use the flash", "less zoom",
    "widen the shot",  "say cheese",    "turn the camera around",
    "exit night mode", "shoot in raw",  "when was the radio invented",
    "what is gravity",
};

/* Greedy-decode one case through the real engine; the answer is written to got (NULL-safe). */
static bool run_case(struct pipit_model *m,
                     struct pipit_context *ctx,
                     struct pipit_sampler *smpl,
                     size_t i,
                     char *got,
                     size_t got_size) {
    struct pipit_generate_params gp = pipit_generate_default_params();
    gp.max_tokens = 64;
    char *prompt = pipit_train_prompt("camera", SHIPPED_CASES[i].memory, SHIPPED_CASES[i].state,
                                      SHIPPED_CASES[i].utterance);
    int32_t toks[256], out[64], n_out = 0;
    int32_t n = pipit_tokenize(m, prompt, true, false, toks, 256);
    pipit_free(prompt);
    assert_true(n > 0);
    assert_int_equal(pipit_context_clear(ctx), PIPIT_OK);
    pipit_sampler_reset(smpl);
    assert_int_equal(pipit_context_append(ctx, PIPIT_REGION_EPHEMERAL, toks, n), PIPIT_OK);
    assert_int_equal(pipit_generate(ctx, smpl, &gp, out, &n_out), PIPIT_OK);
    char *text = pipit_detokenize(m, out, n_out, false);
    assert_non_null(text);
    snprintf(got, got_size, "%s", text);
    bool right = strcmp(text, SHIPPED_CASES[i].want) == 0;
    pipit_free(text);
    return right;
}

static bool known_miss(const char *utterance) {
    for (size_t k = 0; k < sizeof(KNOWN_MISSES) / sizeof(KNOWN_MISSES[0]); k++) {
        if (strcmp(KNOWN_MISSES[k], utterance) == 0) {
            return true;
        }
    }
    return false;
}

static void test_shipped_model(void **state) {
    (void)state;
    if (access(SHIPPED_MODEL, R_OK) != 0) {
        fail_msg("%s is missing", SHIPPED_MODEL);
    }
    size_t n_cases = sizeof(SHIPPED_CASES) / sizeof(SHIPPED_CASES[0]);
    size_t n_known = 0;
    for (size_t k = 0; k < sizeof(KNOWN_MISSES) / sizeof(KNOWN_MISSES[0]); k++) {
        bool listed = false; /* every known miss names a case */
        for (size_t i = 0; i < n_cases && !listed; i++) {
            listed = strcmp(SHIPPED_CASES[i].utterance, KNOWN_MISSES[k]) == 0;
        }
        if (!listed) {
            fail_msg("known miss \"%s\" is not a case", KNOWN_MISSES[k]);
        }
        n_known++;
    }
    struct pipit_model *m = test_load_model(SHIPPED_MODEL);
    struct pipit_context *ctx = test_new_context(m, 256);
    struct pipit_sampler_params sp = pipit_sampler_default_params();
    sp.temperature = 0.0f;
    struct pipit_sampler *smpl = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_sampler_init(m, &sp, &smpl, &err), PIPIT_OK);
    size_t n_wrong = 0, n_new = 0, n_fixed = 0;
    char got[512];
    bool *wrong = calloc(n_cases, sizeof(bool));
    assert_non_null(wrong);
    for (size_t i = 0; i < n_cases; i++) {
        bool known = known_miss(SHIPPED_CASES[i].utterance);
        wrong[i] = !run_case(m, ctx, smpl, i, got, sizeof(got));
        if (wrong[i]) {
            n_wrong++;
            n_new += !known;
            print_message("%s: \"%s\" -> %s (want %s)\n", known ? "known miss" : "NEW MISS",
                          SHIPPED_CASES[i].utterance, got, SHIPPED_CASES[i].want);
        } else if (known) {
            n_fixed++;
            print_message("fixed: \"%s\" (remove it from KNOWN_MISSES)\n",
                          SHIPPED_CASES[i].utterance);
        }
    }
    print_message("%zu of %zu commands wrong, %zu known misses listed (%zu new, %zu fixed)\n",
                  n_wrong, n_cases, n_known, n_new, n_fixed);
    if (n_new > 0 || n_fixed > 0) {
        print_message("the list for this model:\n");
        for (size_t i = 0; i < n_cases; i++) {
            if (wrong[i]) {
                print_message("    \"%s\",\n", SHIPPED_CASES[i].utterance);
            }
        }
    }
    free(wrong);
    assert_true(n_wrong <= n_known);
    pipit_sampler_free(smpl);
    pipit_context_free(ctx);
    pipit_model_free(m);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--model") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_vocab_roundtrip),
            cmocka_unit_test(test_tiny_training),
            cmocka_unit_test(test_fast_backward_matches_ggml),
            cmocka_unit_test(test_training_stops),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--overlap") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_shipped_sets_no_overlap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    if (argc > 1 && strcmp(argv[1], "--shipped") == 0) {
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_shipped_model),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datagen_deterministic),   cmocka_unit_test(test_datagen_bad_params),
        cmocka_unit_test(test_datagen_covers_tools),    cmocka_unit_test(test_datagen_relative),
        cmocka_unit_test(test_heldout_by_template),     cmocka_unit_test(test_prompt_format),
        cmocka_unit_test(test_datagen_chat_and_memory), cmocka_unit_test(test_datagen_tracker),
        cmocka_unit_test(test_surface_noise),           cmocka_unit_test(test_overlap_fold),
        cmocka_unit_test(test_overlap_index),           cmocka_unit_test(test_overlap_pack_router),
        cmocka_unit_test(test_overlap_exclude),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
