/*
 * test-packgen.c - training data for any pack from its spec (train/packgen.c).
 *
 *   test-packgen            unit: deterministic for a seed; every call parses and passes the
 *                           pack's schema (out_of_range: only the range fails); every category
 *                           for tools/home.json and for a pack invented here; held out by
 *                           template; the prompt parts are the agent's for the pack
 *   test-packgen --overlap  eval/home.jsonl says nothing the default seed's data says
 */
#include "../train/datagen.h"
#include "../train/undosay.h"
#include "agent.h"
#include "device.h"
#include "devices/pack.h"
#include "fake_backend.h"
#include "status.h"
#include "testutil.h"
#include "toolspec.h"

#include <ctype.h>
#include <jansson.h>
#include <strings.h>

#define HOME_SPEC PIPIT_SOURCE_DIR "/tools/home.json"
#define HOME_EVAL PIPIT_SOURCE_DIR "/eval/home.jsonl"

/* A pack this generator has never seen: a garden watering controller (generality). */
static const char *const GARDEN =
    "{\"pipit\": {\"pack\": \"garden\", \"system\": \"You water a garden with tools.\",\n"
    "  \"state\": {\n"
    "    \"pump\": {\"type\": \"boolean\", \"initial\": false,\n"
    "             \"words\": {\"names\": \"pump|water pump\", \"noun\": \"the pump\"}},\n"
    "    \"flow\": {\"type\": \"integer\", \"initial\": 3, \"minimum\": 0, \"maximum\": 10,\n"
    "             \"words\": {\"names\": \"flow|water flow|pressure\", \"noun\": \"the flow\"}},\n"
    "    \"zone\": {\"type\": \"string\", \"enum\": [\"front\", \"back\", \"side\"], \"initial\": "
    "\"front\", \"show\": \"zone\"},\n"
    "    \"minutes\": {\"type\": \"integer\", \"initial\": 0, \"minimum\": 0, \"maximum\": 120, "
    "\"show\": \"left\", \"words\": {\"names\": \"watering time|sprinkler timer\", \"unit\": \" "
    "minutes\"}}}},\n"
    " \"tools\": [\n"
    "  {\"type\": \"function\", \"function\": {\"name\": \"switch_pump\", \"description\": \"Turn "
    "the pump on or off\", \"parameters\": {\"type\": \"object\", \"properties\": {\"on\": "
    "{\"type\": \"boolean\"}}, \"required\": [\"on\"]}},\n"
    "   \"pipit\": {\"effect\": {\"set\": {\"pump\": \"{on}\"}}, \"examples\": [{\"say\": \"start "
    "the pump\", \"args\": {\"on\": true}}]}},\n"
    "  {\"type\": \"function\", \"function\": {\"name\": \"set_flow\", \"description\": \"Set the "
    "water flow from 0 to 10\", \"parameters\": {\"type\": \"object\", \"properties\": "
    "{\"level\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 10}}, \"required\": "
    "[\"level\"]}},\n"
    "   \"pipit\": {\"effect\": {\"set\": {\"flow\": \"{level}\"}}, \"examples\": [{\"say\": "
    "\"flow at 7 please\", \"args\": {\"level\": 7}}]}},\n"
    "  {\"type\": \"function\", \"function\": {\"name\": \"nudge_flow\", \"description\": \"A "
    "little more or less water\", \"parameters\": {\"type\": \"object\", \"properties\": "
    "{\"way\": {\"type\": \"string\", \"enum\": [\"more\", \"less\"]}}, \"required\": "
    "[\"way\"]}},\n"
    "   \"pipit\": {\"effect\": {\"step\": {\"key\": \"flow\", \"by\": 1, \"sign\": {\"arg\": "
    "\"way\", \"map\": {\"more\": 1, \"less\": -1}}}}}},\n"
    "  {\"type\": \"function\", \"function\": {\"name\": \"water_zone\", \"description\": "
    "\"Water one zone for some minutes\", \"parameters\": {\"type\": \"object\", "
    "\"properties\": {\"zone\": {\"type\": \"string\", \"enum\": [\"front\", \"back\", "
    "\"side\"]}, \"minutes\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 120}}, "
    "\"required\": [\"zone\", \"minutes\"]}},\n"
    "   \"pipit\": {\"effect\": {\"set\": {\"zone\": \"{zone}\", \"minutes\": \"{minutes}\"}}, "
    "\"examples\": [{\"say\": \"water the back for 20 minutes\", \"args\": {\"zone\": "
    "\"back\", \"minutes\": 20}}]}},\n"
    "  {\"type\": \"function\", \"function\": {\"name\": \"stop_watering\", \"description\": "
    "\"Stop watering\", \"parameters\": {\"type\": \"object\", \"properties\": {}}},\n"
    "   \"pipit\": {\"effect\": {\"set\": {\"minutes\": 0}}}},\n"
    "  {\"type\": \"function\", \"function\": {\"name\": \"ask_gardener\", \"description\": "
    "\"Ask a bigger model\", \"parameters\": {\"type\": \"object\", \"properties\": "
    "{\"question\": {\"type\": \"string\", \"maxLength\": 500}}, \"required\": "
    "[\"question\"]}},\n"
    "   \"pipit\": {\"effect\": \"cloud\"}}\n"
    " ]}\n";

static struct pipit_toolset *load_home(void) {
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(HOME_SPEC, &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ts;
}

static struct pipit_toolset *load_garden(void) {
    return test_tools_from(GARDEN, "garden.json");
}

/* Training example `i` of `ds` into *ex, its utterance lowercase into low. */
static void train_example_lower(const struct pipit_dataset *ds,
                                int32_t i,
                                struct pipit_example *ex,
                                char *low,
                                size_t size) {
    assert_true(pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, ex));
    snprintf(low, size, "%s", ex->utterance);
    for (char *p = low; *p; p++) {
        *p = (char)tolower((unsigned char)*p);
    }
}

static struct pipit_dataset *
gen(const struct pipit_toolset *ts, uint64_t seed, int32_t n_train, int32_t n_valid) {
    struct pipit_datagen_params p = pipit_datagen_default_params();
    p.seed = seed;
    p.n_train = n_train;
    p.n_valid = n_valid;
    struct pipit_dataset *ds = NULL;
    struct pipit_error err;
    if (pipit_datagen_pack(ts, &p, &ds, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    return ds;
}

/* `pipit tools check`'s notes: an example of a tool that needs no argument whose verb names
 * another key ("machine status" beside a "machine" power) is noted, and so is an action with no
 * effect and no "undo"; the shipped packs have none. */
static void test_pack_notes(void **state) {
    (void)state;
    static const char SPEC[] =
        "{\"pipit\": {\"pack\": \"brewer\", \"state\": {\"power\": {\"type\": \"boolean\", "
        "\"initial\": false, \"words\": {\"names\": \"machine|coffee machine\"}}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_power\", \"description\": \"On or "
        "off\", \"parameters\": {\"type\": \"object\", \"properties\": {\"on\": {\"type\": "
        "\"boolean\"}}, \"required\": [\"on\"]}}, \"pipit\": {\"effect\": {\"set\": {\"power\": "
        "\"{on}\"}}, \"examples\": [{\"say\": \"turn on the machine\", \"args\": {\"on\": "
        "true}}]}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"get_status\", \"description\": "
        "\"Status\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, \"pipit\": "
        "{\"effect\": \"read\", \"examples\": [{\"say\": \"machine status\", \"args\": {}}]}}]}";
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(SPEC, strlen(SPEC), "brewer.json", &ts, &err),
                     PIPIT_OK);
    char *notes = pipit_pack_notes(ts);
    assert_non_null(notes);
    assert_non_null(strstr(notes, "get_status's example \"machine status\""));
    assert_non_null(strstr(notes, "the state key power"));
    free(notes);
    pipit_toolset_free(ts);
    /* an action with no effect and no "undo" is passed over by undo: noted; with "undo": "none"
     * it is not */
    static const char SNAP[] =
        "{\"pipit\": {\"pack\": \"cam\", \"state\": {\"zoom\": {\"type\": \"integer\", "
        "\"initial\": 1, \"minimum\": 1, \"maximum\": 5}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_zoom\", \"description\": "
        "\"Zoom\", \"parameters\": {\"type\": \"object\", \"properties\": {\"level\": "
        "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 5}}, \"required\": [\"level\"]}}, "
        "\"pipit\": {\"effect\": {\"set\": {\"zoom\": \"{level}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"take_snapshot\", "
        "\"description\": \"Snapshot\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {}}}, \"pipit\": {\"effect\": \"none\"%s}}]}";
    for (int undo = 0; undo < 2; undo++) {
        char spec[2048];
        snprintf(spec, sizeof(spec), SNAP, undo ? ", \"undo\": \"none\"" : "");
        assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "cam.json", &ts, &err),
                         PIPIT_OK);
        notes = pipit_pack_notes(ts);
        if (undo) {
            assert_null(notes);
        } else {
            assert_non_null(notes);
            assert_non_null(strstr(notes, "take_snapshot declares no effect and no \"undo\""));
        }
        free(notes);
        pipit_toolset_free(ts);
    }
    /* an example that opens with undo's words makes them the pack's: noted (a new user's hot
     * tub had "go back to standard heating", and "go back" then went to the model); "go to
     * standard heating" is not noted */
    static const char HEAT[] =
        "{\"pipit\": {\"pack\": \"tub\", \"state\": {\"heat\": {\"type\": \"string\", "
        "\"enum\": [\"standard\", \"economy\"], \"initial\": \"standard\"}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_heat_mode\", "
        "\"description\": \"Heater mode\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"mode\": {\"type\": \"string\", \"enum\": [\"standard\", "
        "\"economy\"]}}, \"required\": [\"mode\"]}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"heat\": \"{mode}\"}}, \"examples\": [{\"say\": \"%s to standard heating\", "
        "\"args\": {\"mode\": \"standard\"}}]}}]}";
    for (int back = 0; back < 2; back++) {
        char spec[2048];
        snprintf(spec, sizeof(spec), HEAT, back ? "go back" : "go");
        assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "tub.json", &ts, &err),
                         PIPIT_OK);
        notes = pipit_pack_notes(ts);
        if (back) {
            assert_non_null(notes);
            assert_non_null(strstr(notes, "opens with \"go back\", which is undo"));
        } else {
            assert_null(notes);
        }
        free(notes);
        pipit_toolset_free(ts);
    }
    static const char *const shipped[] = {PIPIT_SOURCE_DIR "/tools/camera.json",
                                          PIPIT_SOURCE_DIR "/tools/phone.json",
                                          PIPIT_SOURCE_DIR "/tools/home.json"};
    for (size_t k = 0; k < sizeof(shipped) / sizeof(shipped[0]); k++) {
        assert_int_equal(pipit_toolset_load_file(shipped[k], &ts, &err), PIPIT_OK);
        notes = pipit_pack_notes(ts);
        if (notes != NULL) {
            fail_msg("%s: %s", shipped[k], notes);
        }
        pipit_toolset_free(ts);
    }
}

static void test_deterministic(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_home();
    struct pipit_dataset *a = gen(ts, 3, 2000, 200), *b = gen(ts, 3, 2000, 200),
                         *c = gen(ts, 4, 2000, 200);
    int differ = 0;
    for (int split = 0; split < 2; split++) {
        assert_int_equal(pipit_dataset_size(a, split), pipit_dataset_size(b, split));
        for (int32_t i = 0; i < pipit_dataset_size(a, split); i++) {
            struct pipit_example x, y, z;
            assert_true(pipit_dataset_get(a, split, i, &x));
            assert_true(pipit_dataset_get(b, split, i, &y));
            assert_true(pipit_dataset_get(c, split, i, &z));
            assert_string_equal(x.memory, y.memory);
            assert_string_equal(x.state, y.state);
            assert_string_equal(x.utterance, y.utterance);
            assert_string_equal(x.output, y.output);
            assert_string_equal(x.category, y.category);
            assert_int_equal(x.template_id, y.template_id);
            differ += strcmp(x.utterance, z.utterance) != 0;
        }
    }
    assert_true(differ > 1000); /* another seed, other data */
    pipit_dataset_free(a);
    pipit_dataset_free(b);
    pipit_dataset_free(c);
    pipit_toolset_free(ts);
}

/* Undo said the ways people say it: composed from parts, filled, its frames split like
 * templates (train/undosay.h), and most of a pack's undo examples not from a fixed list. */
static void test_undo_composed(void **state) {
    (void)state;
    int n_frames = train_undo_frames();
    assert_true(n_frames >= 20);
    static char seen_text[2][2000][160];
    for (int held = 0; held < 2; held++) {
        uint64_t rng = train_split_seed(7, held), again = rng;
        int n_held_remarks = 0;
        int used[64] = {0}, distinct = 0;
        for (int i = 0; i < 2000; i++) {
            char said[160], twice[160];
            int f = train_undo_say(&rng, held, said, sizeof(said));
            assert_int_equal(train_undo_say(&again, held, twice, sizeof(twice)), f);
            assert_string_equal(said, twice); /* the seed decides */
            assert_true(f >= 0 && f < n_frames && f < 64);
            assert_int_equal(f % 5 == 3, held); /* a held-out frame only in the held-out split */
            if (!held && train_undo_has_held_remark(said)) {
                fail_msg("a held-out remark in the training split: '%s'", said);
            }
            n_held_remarks += held && train_undo_has_held_remark(said);
            assert_true(said[0] != '\0');
            if (strchr(said, '{') != NULL || strchr(said, '}') != NULL || strstr(said, "  ")) {
                fail_msg("not filled: '%s'", said);
            }
            used[f]++;
            int k = 0;
            while (k < distinct && strcmp(seen_text[held][k], said) != 0) {
                k++;
            }
            if (k == distinct) {
                pipit_format(seen_text[held][distinct++], sizeof(seen_text[0][0]), "%s", said);
            }
        }
        int n_used = 0;
        for (int f = 0; f < n_frames; f++) {
            n_used += used[f] > 0;
        }
        assert_int_equal(n_used, held ? (n_frames + 1) / 5 : n_frames - (n_frames + 1) / 5);
        assert_true(distinct > (held ? 400 : 800)); /* composed, not a list of 32 */
    }
    /* in a pack's data: far more undo phrasings than the fixed list has */
    struct pipit_toolset *ts = load_home();
    struct pipit_dataset *ds = gen(ts, 1, 8000, 10);
    int n_undo = 0, distinct = 0;
    static char texts[1000][160];
    for (int32_t i = 0; i < pipit_dataset_size(ds, 0); i++) {
        struct pipit_example ex;
        assert_true(pipit_dataset_get(ds, 0, i, &ex));
        if (strcmp(ex.category, "undo") != 0) {
            continue;
        }
        assert_string_equal(ex.output, "<call>undo()");
        n_undo++;
        int k = 0;
        while (k < distinct && strcasecmp(texts[k], ex.utterance) != 0) {
            k++;
        }
        if (k == distinct && distinct < 1000) {
            pipit_format(texts[distinct++], sizeof(texts[0]), "%s", ex.utterance);
        }
    }
    assert_true(n_undo > 150);
    assert_true(distinct > 100);
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* What the agent needs for any pack (docs/training.md, "Any pack"). */
static const char *const CATEGORIES[] = {
    "single", "relative",    "followup", "retry", "compound", "out_of_range",
    "chat",   "unsupported", "cloud",    "undo",  "refer",
};
#define N_CATEGORIES ((int)(sizeof(CATEGORIES) / sizeof(CATEGORIES[0])))

static int category_index(const char *name) {
    for (int i = 0; i < N_CATEGORIES; i++) {
        if (strcmp(CATEGORIES[i], name) == 0) {
            return i;
        }
    }
    return -1;
}

/* Every call parses and passes the schema (out_of_range: fails on the range only); every
 * category is present in the training split, the held-out split has commands too, and the two
 * splits share no template. */
static void check_pack(const struct pipit_toolset *ts, const char *may_lack, int32_t n) {
    struct pipit_dataset *ds = gen(ts, 1, n, n / 10);
    int seen[2][16] = {{0}};
    for (int split = 0; split < 2; split++) {
        for (int32_t i = 0; i < pipit_dataset_size(ds, split); i++) {
            struct pipit_example ex;
            assert_true(pipit_dataset_get(ds, split, i, &ex));
            int c = category_index(ex.category);
            assert_true(c >= 0);
            seen[split][c]++;
            assert_false(ex.tracker);
            assert_null(strchr(ex.utterance, '\n'));
            assert_true(ex.memory[0] == '\0' || ex.memory[strlen(ex.memory) - 1] == '\n');
            if (strncmp(ex.output, "<call>", 6) != 0) {
                assert_true(strcmp(ex.category, "chat") == 0 ||
                            strcmp(ex.category, "unsupported") == 0);
                continue;
            }
            struct pipit_call call;
            struct pipit_error err;
            if (pipit_call_parse(PIPIT_SYNTAX_PIPIT, ex.output, &call, &err) != PIPIT_OK) {
                fail_msg("%s: %s", ex.output, err.text);
            }
            if (strcmp(call.name, "undo") == 0) {
                assert_string_equal(ex.category, "undo");
                pipit_call_clear(&call);
                continue;
            }
            struct pipit_arg_problem pr[4];
            size_t np = 0;
            enum pipit_status st = pipit_toolset_validate_args(ts, call.name, call.args_json,
                                                               strlen(call.args_json), pr, 4, &np);
            if (strcmp(ex.category, "out_of_range") == 0) {
                assert_int_equal(st, PIPIT_ERR_INVALID_ARGS);
                for (size_t k = 0; k < np; k++) {
                    if (strstr(pr[k].message, "minimum") == NULL &&
                        strstr(pr[k].message, "maximum") == NULL) {
                        fail_msg("%s: %s: %s", ex.output, pr[k].path, pr[k].message);
                    }
                }
            } else if (st != PIPIT_OK) {
                fail_msg("[%s] %s -> %s: %s", ex.category, ex.utterance, ex.output,
                         np > 0 ? pr[0].message : "?");
            }
            if (strcmp(ex.category, "refer") == 0) { /* the identifier an earlier result gave */
                json_t *a = json_loads(call.args_json, 0, NULL);
                const char *k;
                json_t *v;
                bool from_memory = false;
                json_object_foreach(a, k, v) {
                    from_memory =
                        from_memory ||
                        (json_is_string(v) && strstr(ex.memory, json_string_value(v)) != NULL &&
                         strstr(ex.utterance, json_string_value(v)) == NULL);
                }
                if (!from_memory) {
                    fail_msg("refer: %s -> %s: no argument from the memory lines %s", ex.utterance,
                             ex.output, ex.memory);
                }
                json_decref(a);
            }
            if (strcmp(ex.category, "cloud") == 0) { /* the question, verbatim */
                json_t *a = json_loads(call.args_json, 0, NULL);
                const char *k;
                json_t *v;
                bool copied = false;
                json_object_foreach(a, k, v) {
                    copied = copied ||
                             (json_is_string(v) && strcmp(json_string_value(v), ex.utterance) == 0);
                }
                assert_true(copied);
                json_decref(a);
            }
            pipit_call_clear(&call);
        }
    }
    for (int c = 0; c < N_CATEGORIES; c++) {
        if (seen[0][c] == 0 && strstr(may_lack, CATEGORIES[c]) == NULL) {
            fail_msg("%s: no training example of category %s", ts->name, CATEGORIES[c]);
        }
    }
    assert_true(seen[1][category_index("single")] > 0);
    assert_true(seen[1][category_index("followup")] > 0);
    /* held out by template: no template id in both splits */
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_VALID); i++) {
        struct pipit_example v;
        pipit_dataset_get(ds, PIPIT_SPLIT_VALID, i, &v);
        for (int32_t j = 0; j < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); j++) {
            struct pipit_example t;
            pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, j, &t);
            if (t.template_id == v.template_id) {
                fail_msg("template %d in both splits: %s / %s", (int)t.template_id, t.utterance,
                         v.utterance);
            }
        }
    }
    pipit_dataset_free(ds);
}

static void test_home_calls_and_categories(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_home();
    check_pack(ts, "refer", 6000);
    pipit_toolset_free(ts);
}

/* `pipit tools check` notes a state line of more than ten shown keys (they do not fit the
 * trained prompt), not one of ten or a hidden eleventh. */
static void test_describe_many_keys(void **state) {
    (void)state;
    for (int hidden = 0; hidden <= 1; hidden++) {
        char spec[4096] = "{\"pipit\": {\"pack\": \"many\", \"state\": {";
        for (int k = 0; k < 11; k++) {
            size_t at = strlen(spec);
            snprintf(spec + at, sizeof(spec) - at,
                     "%s\"key%d\": {\"type\": \"boolean\", \"initial\": false%s}",
                     k > 0 ? ", " : "", k, k == 10 && hidden ? ", \"show\": false" : "");
        }
        size_t at = strlen(spec);
        snprintf(spec + at, sizeof(spec) - at,
                 "}}, \"tools\": [{\"type\": \"function\", \"function\": {\"name\": "
                 "\"set_key0\", \"description\": \"Switch key 0\", \"parameters\": "
                 "{\"type\": \"object\", \"properties\": {\"on\": {\"type\": \"boolean\"}}, "
                 "\"required\": [\"on\"]}}, \"pipit\": {\"effect\": {\"set\": {\"key0\": "
                 "\"{on}\"}}}}]}");
        struct pipit_toolset *ts = NULL;
        struct pipit_error err;
        if (pipit_toolset_load_string(spec, strlen(spec), "many.json", &ts, &err) != PIPIT_OK) {
            fail_msg("%s", err.text);
        }
        char *d = pipit_datagen_pack_describe(ts, &err);
        assert_non_null(d);
        if ((strstr(d, "note: 11 keys are shown in the state line") != NULL) == (hidden != 0)) {
            fail_msg("hidden %d: %s", hidden, d);
        }
        free(d);
        pipit_toolset_free(ts);
    }
}

/* A pack without a declared state plays on the device the agent would run it on: the phone
 * pack on the phone simulator (its state line, its identifiers in the memory lines, so "cancel
 * that timer" is answered with the TM-1 an earlier call gave); a pack no device runs on none
 * (an empty state line, every call a success). Neither has relative commands (no state). */
static void test_stateless_packs(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", &ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    check_pack(ts, "relative", 2000);                /* a simulator per example: slower */
    char *d = pipit_datagen_pack_describe(ts, &err); /* what `pipit tools check` prints */
    assert_non_null(d);
    assert_non_null(strstr(d, "the examples play on phone"));
    assert_non_null(strstr(d, " refer\n"));
    assert_non_null(strstr(d, "no relative examples: no declared state"));
    free(d);
    struct pipit_dataset *ds = gen(ts, 2, 400, 50);
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        assert_true(pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex));
        assert_int_equal(strncmp(ex.state, "wifi=", 5), 0); /* the simulator's own line */
    }
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
    static const char *const TODO =
        "{\"pipit\": {\"pack\": \"todo\"}, \"tools\": [\n"
        " {\"type\": \"function\", \"function\": {\"name\": \"add_task\", \"description\": \"Add "
        "a task\", \"parameters\": {\"type\": \"object\", \"properties\": {\"title\": {\"type\": "
        "\"string\"}, \"days\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 30}}, "
        "\"required\": [\"title\", \"days\"]}},\n"
        "  \"pipit\": {\"examples\": [{\"say\": \"remind me to water the plants in 3 days\", "
        "\"args\": {\"title\": \"water the plants\", \"days\": 3}}]}},\n"
        " {\"type\": \"function\", \"function\": {\"name\": \"finish_task\", \"description\": "
        "\"Mark a task done\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"task_id\": {\"type\": \"string\"}}, \"required\": [\"task_id\"]}},\n"
        "  \"pipit\": {\"examples\": [{\"say\": \"task K-12 is done\", \"args\": {\"task_id\": "
        "\"K-12\"}}]}}\n"
        "]}\n";
    assert_int_equal(pipit_toolset_load_string(TODO, strlen(TODO), "todo.json", &ts, &err),
                     PIPIT_OK);
    check_pack(ts, "relative|refer|cloud", 2000);
    d = pipit_datagen_pack_describe(ts, &err);
    assert_non_null(d);
    assert_non_null(strstr(d, "no device (an empty state line)"));
    assert_non_null(strstr(d, "no cloud examples: no cloud tool"));
    free(d);
    ds = gen(ts, 2, 400, 50);
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        assert_true(pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex));
        assert_string_equal(ex.state, "");
    }
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* Every start state is drawn from the keys' domains, lists of allowed words too: a list that
 * always started as its initial value taught a model that list, not to read the state line. */
static void test_start_states_vary(void **state) {
    (void)state;
    static const char *const DAYS =
        "{\"pipit\": {\"pack\": \"sprinkler\", \"state\": {\"days\": {\"type\": \"array\", "
        "\"enum\": [\"mon\", \"tue\", \"wed\", \"thu\", \"fri\", \"sat\", \"sun\"], \"initial\": "
        "[\"mon\", \"thu\"], \"show\": \"days\"}}},\n"
        " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_days\", "
        "\"description\": \"Choose the watering days\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"days\": {\"type\": \"array\", \"minItems\": 1, \"uniqueItems\": true, "
        "\"items\": {\"type\": \"string\", \"enum\": [\"mon\", \"tue\", \"wed\", \"thu\", \"fri\", "
        "\"sat\", \"sun\"]}}}, \"required\": [\"days\"]}},\n"
        "  \"pipit\": {\"effect\": {\"set\": {\"days\": \"{days}\"}}, \"examples\": [{\"say\": "
        "\"water on weekends\", \"args\": {\"days\": [\"sat\", \"sun\"]}}]}}]}\n";
    struct pipit_toolset *ts = test_tools_from(DAYS, "sprinkler.json");
    struct pipit_dataset *ds = gen(ts, 3, 400, 50);
    char seen[64][64];
    int n_seen = 0, initial = 0, n = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    for (int32_t i = 0; i < n; i++) {
        struct pipit_example ex;
        assert_true(pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex));
        const char *at = strstr(ex.state, "days=");
        if (at == NULL) {
            continue;
        }
        char v[64];
        size_t len = strcspn(at, " \n");
        snprintf(v, sizeof(v), "%.*s", (int)len, at);
        initial += strcmp(v, "days=mon,thu") == 0;
        bool known = false;
        for (int k = 0; k < n_seen && !known; k++) {
            known = strcmp(seen[k], v) == 0;
        }
        if (!known && n_seen < 64) {
            snprintf(seen[n_seen++], sizeof(seen[0]), "%s", v);
        }
    }
    print_message("%d of %d start states hold the initial list; %d different lists\n", initial, n,
                  n_seen);
    assert_true(n_seen >= 20);
    assert_true(initial < n / 2);
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* A key's name with its own determiner ("my window") is said without "the" before it: "raise
 * the my window" was in a new user's car data. */
static void test_names_own_determiner(void **state) {
    (void)state;
    static const char *const CAR =
        "{\"pipit\": {\"pack\": \"car\", \"state\": {\"window\": {\"type\": \"integer\", "
        "\"minimum\": 0, \"maximum\": 100, \"initial\": 0, \"show\": \"window\", \"words\": "
        "{\"names\": \"my window|driver window\", \"unit\": \"% open\"}}}},\n"
        " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_window\", "
        "\"description\": \"Open the window to a percentage\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {\"open_percent\": {\"type\": \"integer\", \"minimum\": 0, "
        "\"maximum\": 100}}, \"required\": [\"open_percent\"]}},\n"
        "  \"pipit\": {\"effect\": {\"set\": {\"window\": \"{open_percent}\"}}, \"examples\": "
        "[{\"say\": \"window half open\", \"args\": {\"open_percent\": 50}}]}}]}\n";
    struct pipit_toolset *ts = test_tools_from(CAR, "car.json");
    struct pipit_dataset *ds = gen(ts, 3, 2000, 50);
    int mine = 0, n = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    for (int32_t i = 0; i < n; i++) {
        struct pipit_example ex;
        char low[512];
        train_example_lower(ds, i, &ex, low, sizeof(low));
        if (strstr(low, "the my ") != NULL || strstr(low, "the it ") != NULL) {
            fail_msg("\"%s\"", ex.utterance);
        }
        mine += strstr(low, "my window") != NULL;
    }
    assert_true(mine > 0); /* the name is said, without "the" */
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* An enum value an example says is a slot, beside another argument or alone (the example as
 * written kept too); the success template's words for a value ("by car") and a gerund's verb
 * ("drive to ...") say it too; "a"/"an" follow the word after them; "i need a ..." is said
 * with other ways of wanting ("i'd love a ..."). */
static void test_enum_values_said(void **state) {
    (void)state;
    static const char *const TRIP =
        "{\"pipit\": {\"pack\": \"trip\", \"state\": {\"mode\": {\"type\": \"string\", "
        "\"enum\": [\"none\", \"driving\", \"walking\", \"cycling\"], \"initial\": \"none\"}, "
        "\"drink\": {\"type\": \"string\", \"enum\": [\"none\", \"latte\", \"flat_white\", "
        "\"espresso\"], \"initial\": \"none\"}}},\n"
        " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"navigate_to\", "
        "\"description\": \"Start navigation\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"destination\": {\"type\": \"string\", \"maxLength\": 80}, "
        "\"mode\": {\"type\": \"string\", \"enum\": [\"driving\", \"walking\", "
        "\"cycling\"]}}, \"required\": [\"destination\", \"mode\"]}},\n"
        "  \"pipit\": {\"success\": \"Navigating to {destination} {mode:driving=by "
        "car|walking=on foot|cycling=by bike}.\", \"effect\": {\"set\": {\"mode\": "
        "\"{mode}\"}}, \"examples\": [{\"say\": \"walking directions to the station\", "
        "\"args\": {\"destination\": \"the station\", \"mode\": \"walking\"}}]}},\n"
        "  {\"type\": \"function\", \"function\": {\"name\": \"brew\", \"description\": "
        "\"Brew a drink\", \"parameters\": {\"type\": \"object\", \"properties\": {\"drink\": "
        "{\"type\": \"string\", \"enum\": [\"latte\", \"flat_white\", \"espresso\"]}}, "
        "\"required\": [\"drink\"]}},\n"
        "  \"pipit\": {\"effect\": {\"set\": {\"drink\": \"{drink}\"}}, \"examples\": "
        "[{\"say\": \"i need a flat white\", \"args\": {\"drink\": \"flat_white\"}}]}}]}\n";
    struct pipit_toolset *ts = test_tools_from(TRIP, "trip.json");
    struct pipit_dataset *ds = gen(ts, 5, 6000, 50);
    int slotted = 0, label = 0, verb = 0, other_drink = 0, as_written = 0, wanting = 0;
    int n = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    for (int32_t i = 0; i < n; i++) {
        struct pipit_example ex;
        char low[512];
        train_example_lower(ds, i, &ex, low, sizeof(low));
        if (strstr(low, " an latte") != NULL || strstr(low, " a espresso") != NULL) {
            fail_msg("article: \"%s\"", ex.utterance);
        }
        bool drive = strstr(ex.output, "mode=\"driving\"") != NULL;
        bool cycle = strstr(ex.output, "mode=\"cycling\"") != NULL;
        slotted += drive && strstr(low, "driving directions to") != NULL;
        label += cycle && strstr(low, "directions to") != NULL && strstr(low, "by bike") != NULL;
        verb += (drive && (strstr(low, "drive to") != NULL || strstr(low, "drive me to") != NULL ||
                           strstr(low, "drive over to") != NULL)) ||
                (cycle && (strstr(low, "cycle to") != NULL || strstr(low, "cycle me to") != NULL));
        other_drink += strstr(low, "i need an espresso") != NULL &&
                       strstr(ex.output, "drink=\"espresso\"") != NULL;
        as_written += strstr(low, "i need a flat white") != NULL;
        wanting += (strstr(low, "i'd love a") != NULL || strstr(low, "i'll have a") != NULL) &&
                   strstr(ex.output, "brew(") != NULL;
    }
    if (slotted == 0 || label == 0 || verb == 0 || other_drink == 0 || as_written == 0 ||
        wanting == 0) {
        fail_msg("slotted %d, label %d, verb %d, other drink %d, as written %d, wanting %d",
                 slotted, label, verb, other_drink, as_written, wanting);
    }
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* The words an argument's description gives a value ("economy (eco, saver)", docs/pack.md) are
 * said for it in commands, as well as the value itself (a new user's hot tub had written them and
 * no part of training read them). */
static void test_described_synonyms(void **state) {
    (void)state;
    static const char *const TUB =
        "{\"pipit\": {\"pack\": \"tub\", \"state\": {\"heat\": {\"type\": \"string\", "
        "\"enum\": [\"standard\", \"economy\", \"sleep\"], \"initial\": \"standard\"}}},\n"
        " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_heat_mode\", "
        "\"description\": \"Heater mode\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"mode\": {\"type\": \"string\", \"description\": \"standard "
        "(normal), economy (eco, saver), sleep\", \"enum\": [\"standard\", \"economy\", "
        "\"sleep\"]}}, \"required\": [\"mode\"]}},\n"
        "  \"pipit\": {\"effect\": {\"set\": {\"heat\": \"{mode}\"}}, \"examples\": "
        "[{\"say\": \"put the heater on sleep\", \"args\": {\"mode\": \"sleep\"}}]}}]}\n";
    struct pipit_toolset *ts = test_tools_from(TUB, "tub.json");
    struct pipit_dataset *ds = gen(ts, 5, 4000, 50);
    int eco = 0, saver = 0, economy = 0, normal = 0;
    int n = pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN);
    for (int32_t i = 0; i < n; i++) {
        struct pipit_example ex;
        char low[512];
        train_example_lower(ds, i, &ex, low, sizeof(low));
        bool eco_call = strstr(ex.output, "mode=\"economy\"") != NULL;
        eco += eco_call && strstr(low, "eco") != NULL && strstr(low, "economy") == NULL;
        saver += eco_call && strstr(low, "saver") != NULL;
        economy += eco_call && strstr(low, "economy") != NULL;
        normal += strstr(ex.output, "mode=\"standard\"") != NULL && strstr(low, "normal") != NULL;
    }
    if (eco == 0 || saver == 0 || economy == 0 || normal == 0 || economy < eco) {
        fail_msg("eco %d, saver %d, economy %d, normal %d", eco, saver, economy, normal);
    }
    print_message("economy said as eco %d, saver %d, economy %d times\n", eco, saver, economy);
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

/* Requests about things the pack lacks, said with its kinds of verbs ("turn on the sprinkler"),
 * never name a thing the pack has ("porch light" for a pack with lights); a thing of the
 * held-out split is none of the training split's; chat names the pack's own things. */
static void test_unsupported_things(void **state) {
    (void)state;
    static const char *const BANK[] = {
        "dishwasher", "sprinkler",   "garage door",   "oven",        "kettle", "boiler",
        "router",     "projector",   "aquarium",      "treadmill",   "drone",  "blender",
        "mailbox",    "porch light", "garden lights", "fairy lights"};
    struct pipit_toolset *ts = load_home();
    struct pipit_dataset *ds = gen(ts, 5, 6000, 600);
    int things[2][sizeof(BANK) / sizeof(BANK[0])] = {{0}};
    int about_keys = 0;
    for (int split = 0; split < 2; split++) {
        for (int32_t i = 0; i < pipit_dataset_size(ds, split); i++) {
            struct pipit_example ex;
            assert_true(pipit_dataset_get(ds, split, i, &ex));
            char low[512];
            snprintf(low, sizeof(low), "%s", ex.utterance);
            for (char *p = low; *p; p++) {
                *p = (char)tolower((unsigned char)*p);
            }
            if (strcmp(ex.category, "chat") == 0) {
                about_keys += strstr(low, "blind") != NULL || strstr(low, "thermostat") != NULL;
            }
            if (strcmp(ex.category, "unsupported") != 0) {
                continue;
            }
            assert_string_equal(ex.output, "Sorry, I can't do that.");
            for (size_t k = 0; k < sizeof(BANK) / sizeof(BANK[0]); k++) {
                things[split][k] += strstr(low, BANK[k]) != NULL;
            }
        }
    }
    int n_train = 0; /* which of these are held out depends on the pack's filter */
    for (size_t k = 0; k < sizeof(BANK) / sizeof(BANK[0]); k++) {
        if (strstr(BANK[k], "light") != NULL && (things[0][k] > 0 || things[1][k] > 0)) {
            fail_msg("\"%s\": the home pack has lights", BANK[k]);
        }
        if (things[0][k] > 0 && things[1][k] > 0) {
            fail_msg("\"%s\" in both splits", BANK[k]);
        }
        n_train += things[0][k] > 0;
    }
    assert_true(n_train >= 5);
    assert_true(about_keys > 0);
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

static void test_invented_pack(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_garden();
    check_pack(ts, "refer", 6000);
    assert_string_equal(pipit_datagen_pack_system(ts), "You water a garden with tools.");
    pipit_toolset_free(ts);
}

static void test_refuses_plain_sets(void **state) {
    (void)state;
    static const char *const PLAIN =
        "[{\"type\": \"function\", \"function\": {\"name\": \"ping\", \"description\": \"Ping\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {}}}}]";
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(PLAIN, strlen(PLAIN), "plain.json", &ts, &err),
                     PIPIT_OK);
    struct pipit_dataset *ds = NULL;
    assert_int_equal(pipit_datagen_pack(ts, NULL, &ds, &err), PIPIT_ERR_INVALID_ARG);
    assert_null(ds);
    assert_non_null(strstr(err.text, "plain.json"));
    assert_null(pipit_datagen_pack_system(ts));
    pipit_toolset_free(ts);
}

/* The state line of every example has the pack's labels in declared order (the device's own
 * rendering), and the agent's prompt for the pack is pipit_train_prompt's: the ephemeral part
 * "State: <the device's line>\nUser: ...\nAssistant: " after the system text. */
static void test_prompt_is_the_agents(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_home();
    struct device dev;
    struct pipit_error err;
    assert_int_equal(pack_device_new(ts, &dev, &err), PIPIT_OK);
    char fresh[512];
    device_state_line(&dev, fresh, sizeof(fresh));
    device_free(&dev);
    /* the labels, in order */
    char labels[512] = "";
    for (const char *p = fresh; *p;) {
        const char *eq = strchr(p, '=');
        size_t o = strlen(labels);
        snprintf(labels + o, sizeof(labels) - o, "%.*s ", (int)(eq - p), p);
        p = strchr(eq, ' ') != NULL ? strchr(eq, ' ') + 1 : eq + strlen(eq);
    }
    struct pipit_dataset *ds = gen(ts, 5, 500, 50);
    for (int32_t i = 0; i < pipit_dataset_size(ds, PIPIT_SPLIT_TRAIN); i++) {
        struct pipit_example ex;
        pipit_dataset_get(ds, PIPIT_SPLIT_TRAIN, i, &ex);
        char got[512] = "";
        for (const char *p = ex.state; *p;) {
            const char *eq = strchr(p, '=');
            assert_non_null(eq);
            size_t o = strlen(got);
            snprintf(got + o, sizeof(got) - o, "%.*s ", (int)(eq - p), p);
            p = strchr(eq, ' ') != NULL ? strchr(eq, ' ') + 1 : eq + strlen(eq);
        }
        assert_string_equal(got, labels);
    }
    pipit_dataset_free(ds);

    struct fake_backend fake;
    memset(&fake, 0, sizeof(fake));
    fake.script[fake.n_script++] = "Hi! What would you like me to do?";
    struct pipit_device *home = NULL;
    assert_int_equal(pipit_device_init(NULL, ts, NULL, &home, &err), PIPIT_OK);
    struct pipit_agent_params p = pipit_agent_default_params();
    p.device = home;
    p.system_prompt = pipit_datagen_pack_system(ts);
    p.small_talk = false; /* "morning all" must reach the model: its prompt is compared */
    struct pipit_agent *agent = NULL;
    assert_int_equal(agent_new_with_backend(NULL, ts, &p, fake_backend_wrap(&fake), &agent, &err),
                     PIPIT_OK);
    struct pipit_turn *turn = NULL;
    assert_int_equal(pipit_agent_turn(agent, "morning all", &turn), PIPIT_OK);
    char *want = pipit_train_prompt(pipit_datagen_pack_system(ts), "", fresh, "morning all");
    const char *eph = strstr(want, "State: ");
    assert_non_null(eph);
    assert_string_equal(fake.prompts[0], eph);
    assert_memory_equal(fake.permanent, want, (size_t)(eph - want) - 0);
    pipit_free(want);
    pipit_turn_free(turn);
    pipit_agent_free(agent);
    pipit_device_free(home);
    pipit_toolset_free(ts);
}

/* The shipped home model's data: `pipit train --tools tools/home.json --exclude
 * eval/home.jsonl` (models/pipit-home.md). The shipped pack models are all trained with their
 * dev set excluded: the generic phrasings say some short dev turns on their own ("kill the
 * kitchen light", "timer 20 minutes"), so the default data holds some (the check can fail),
 * and the data made with the exclusion must hold none of the dev set's turns or router
 * segments. */
static void test_home_no_overlap(void **state) {
    (void)state;
    struct pipit_toolset *ts = load_home();
    struct pipit_error err;
    /* split by the home pack's router, as the agent splits (and as `pipit train --tools
     * tools/home.json --overlap eval/home.jsonl` checks) */
    struct pipit_eval_device home = {"home", ts};
    /* the default data: the generic frames say some of the home set on their own */
    struct pipit_datagen_params d = pipit_datagen_default_params();
    struct pipit_dataset *plain = gen(ts, d.seed, d.n_train, d.n_valid);
    struct pipit_overlap_index *pidx = NULL;
    assert_int_equal(pipit_overlap_index_init(plain, &pidx, &err), PIPIT_OK);
    struct pipit_overlap_counts pc;
    memset(&pc, 0, sizeof(pc));
    assert_int_equal(pipit_overlap_check_file(pidx, HOME_EVAL, &home, 1, NULL, NULL, &pc, &err),
                     PIPIT_OK);
    print_message("%s: %d utterances and %d segments in the default training data (`pipit "
                  "train --tools tools/home.json --overlap eval/home.jsonl` names them)\n",
                  HOME_EVAL, (int)pc.n_utterances_overlap, (int)pc.n_segments_overlap);
    assert_true(pc.n_verbatim + pc.n_near > 0);
    pipit_overlap_index_free(pidx);
    pipit_dataset_free(plain);
    struct pipit_overlap_index *ex = NULL;
    assert_int_equal(pipit_overlap_index_empty(&ex, &err), PIPIT_OK);
    assert_int_equal(pipit_overlap_index_add_file(ex, HOME_EVAL, &home, 1, &err), PIPIT_OK);
    struct pipit_datagen_params p = pipit_datagen_default_params();
    p.exclude = ex;
    struct pipit_dataset *ds = NULL;
    if (pipit_datagen_pack(ts, &p, &ds, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    pipit_overlap_index_free(ex);
    struct pipit_overlap_index *idx = NULL;
    assert_int_equal(pipit_overlap_index_init(ds, &idx, &err), PIPIT_OK);
    struct pipit_overlap_counts c;
    memset(&c, 0, sizeof(c));
    assert_int_equal(pipit_overlap_check_file(idx, HOME_EVAL, &home, 1, NULL, NULL, &c, &err),
                     PIPIT_OK);
    if (c.n_verbatim + c.n_near > 0) {
        fail_msg("%s: %d utterances and %d segments in the training data (`pipit train --tools "
                 "tools/home.json --exclude eval/home.jsonl --overlap eval/home.jsonl` names "
                 "them)",
                 HOME_EVAL, (int)c.n_utterances_overlap, (int)c.n_segments_overlap);
    }
    pipit_overlap_index_free(idx);
    pipit_dataset_free(ds);
    pipit_toolset_free(ts);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--overlap") == 0) {
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_home_no_overlap)};
        return cmocka_run_group_tests(tests, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_undo_composed),
        cmocka_unit_test(test_home_calls_and_categories),
        cmocka_unit_test(test_names_own_determiner),
        cmocka_unit_test(test_enum_values_said),
        cmocka_unit_test(test_described_synonyms),
        cmocka_unit_test(test_unsupported_things),
        cmocka_unit_test(test_invented_pack),
        cmocka_unit_test(test_stateless_packs),
        cmocka_unit_test(test_describe_many_keys),
        cmocka_unit_test(test_start_states_vary),
        cmocka_unit_test(test_refuses_plain_sets),
        cmocka_unit_test(test_prompt_is_the_agents),
        cmocka_unit_test(test_pack_notes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
