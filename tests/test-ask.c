/*
 * test-ask.c - state questions answered from the state, and plain-text claims checked against
 * it, on the camera and the phone packs and on a pack with no device words at all.
 */
#include "ask.h"
#include "device.h"
#include "devices/camera.h"
#include "devices/pack.h"
#include "devices/phone.h"
#include "testutil.h"

#include <jansson.h>

struct pack {
    struct pipit_toolset *ts;
    struct device dev;
    json_t *state;
    struct ask *k;
};

static void pack_open(struct pack *p, const char *spec, bool phone, const char *init) {
    memset(p, 0, sizeof(*p));
    struct pipit_error err;
    if (pipit_toolset_load_file(spec, &p->ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(phone ? phone_device_new(p->ts, &p->dev, &err)
                           : camera_device_new(p->ts, &p->dev, &err),
                     PIPIT_OK);
    if (init != NULL) {
        json_t *j = json_loads(init, 0, NULL);
        assert_int_equal(p->dev.ops->set_state(p->dev.self, j, &err), PIPIT_OK);
        json_decref(j);
    }
    p->state = p->dev.ops->get_state(p->dev.self);
    assert_int_equal(ask_new(p->ts, p->state, p->dev.ops->words, p->dev.ops->n_words, &p->k, &err),
                     PIPIT_OK);
}

/* A pack from spec text on its generic device (the pack's declared state), with its lexicon. */
static void pack_from_spec(struct pack *p, const char *spec, size_t len, const char *name) {
    memset(p, 0, sizeof(*p));
    struct pipit_error err;
    if (pipit_toolset_load_string(spec, len, name, &p->ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(pack_device_new(p->ts, &p->dev, &err), PIPIT_OK);
    p->state = p->dev.ops->get_state(p->dev.self);
    assert_int_equal(ask_new(p->ts, p->state, p->dev.ops->words, p->dev.ops->n_words, &p->k, &err),
                     PIPIT_OK);
}

static void pack_close(struct pack *p) {
    ask_free(p->k);
    json_decref(p->state);
    device_free(&p->dev);
    pipit_toolset_free(p->ts);
}

struct qa {
    const char *question;
    const char *answer; /* NULL: not a state question */
};

static int check_answers(const struct pack *p, const struct qa *cases, size_t n) {
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char buf[512];
        int got = ask_answer(p->k, cases[i].question, p->state, buf, sizeof(buf));
        bool ok = cases[i].answer == NULL ? got == 0 && buf[0] == '\0'
                                          : got > 0 && strcmp(buf, cases[i].answer) == 0;
        if (!ok) {
            print_error("ask(\"%s\") = %d \"%s\", want \"%s\"\n", cases[i].question, got, buf,
                        cases[i].answer != NULL ? cases[i].answer : "(not a state question)");
            failures++;
        }
    }
    return failures;
}

static void test_camera_questions(void **state) {
    (void)state;
    struct pack p;
    pack_open(&p, PIPIT_SOURCE_DIR "/tools/camera.json", false,
              "{\"zoom\": 2.5, \"flash\": \"auto\", \"timer_s\": 3, \"facing\": \"back\", "
              "\"exposure_ev\": -1, \"scene_mode\": \"night\", \"aspect_ratio\": \"16:9\"}");
    static const struct qa CASES[] = {
        {"is the flash on?", "The flash is on auto."},
        {"is the flash on right now?", "The flash is on auto."},
        /* text-speak: "are we on flash now?", "are you using the flash now" */
        {"r we on flash rn?", "The flash is on auto."},
        {"r u using the flash rn", "The flash is on auto."},
        /* no key named: a value only one key takes names it; none, or two keys', names none */
        {"is it tungsten?", "The white balance is auto."},
        {"is it raining?", NULL},
        /* a number in words, "did ... stay", a short form of a key's name */
        {"did the timer stay on three?", "The timer is 3 seconds."},
        {"is the timer on ten?", "The timer is 3 seconds."},
        {"is the zoom still at two", "The zoom is 2.5x."},
        {"which cam is active?", "The back camera is active."},
        {"what zoom am i on rn", "The zoom is 2.5x."},
        {"what's the zoom at?", "The zoom is 2.5x."},
        {"what zoom am i at", "The zoom is 2.5x."},
        {"What's the zoom level?", "The zoom is 2.5x."},
        {"how much zoom do I have", "The zoom is 2.5x."},
        {"how zoomed in am I?", "The zoom is 2.5x."},
        {"is it recording?", "It isn't recording."},
        {"are we recording", "It isn't recording."},
        {"which camera is on?", "The back camera is active."},
        {"is the front camera on?", "The back camera is active."},
        {"is the timer set?", "The timer is 3 seconds."},
        {"what's the exposure?", "The exposure is -1 EV."},
        {"is night mode on?", "The scene mode is night."},
        {"what mode am I in", "The scene mode is night."},
        {"what's the aspect ratio", "The aspect ratio is 16:9."},
        {"is the grid on or off", "The grid is off."},
        /* state words that are not a value's ("showing", "visible"), and the key right after
         * the question word with no copula (a new user's phrasings, all of which the model
         * answered by setting the key) */
        {"is the grid showing?", "The grid is off."},
        {"is the horizon level visible?", "The horizon level is off."},
        {"what aspect ratio?", "The aspect ratio is 16:9."},
        {"which white balance?", "The white balance is auto."},
        {"is exposure and focus locked?", "Exposure and focus aren't locked."}, /* its sentence */
        {"what's the colour temp?", "The white balance is auto."},
        {"is the ae af lock on", "Exposure and focus aren't locked."},
        {"tell me, is the horizon level on?", "The horizon level is off."},
        {"what's the JPEG quality", "The JPEG quality is 95%."},
        {"how many photos have I taken?", "You've taken no photos."},
        {"what's the flash and the zoom?", "The flash is on auto. The zoom is 2.5x."},
        /* the dev set's session phrasings */
        {"do I have the flash on?", "The flash is on auto."},
        {"where's the zoom at now", "The zoom is 2.5x."},
        {"what zoom is it now", "The zoom is 2.5x."},
        {"how far am I zoomed in?", "The zoom is 2.5x."},
        {"is there a timer set?", "The timer is 3 seconds."},
        {"how long is the timer now", "The timer is 3 seconds."},
        {"is it rec?", "It isn't recording."},
        {"is it the front camera?", "The back camera is active."},
        /* a statement asked as a question: a tag or a question mark, and a copula */
        {"the flash is off, right?", "The flash is on auto."},
        {"the flash is on, isn't it?", "The flash is on auto."},
        {"the grid's on, right?", "The grid is off."}, /* a noun's 's is its "is" */
        {"grid's on right?", "The grid is off."},
        {"how long's the timer?", "The timer is 3 seconds."},
        /* verbs a question about a setting goes through, "have I", "tell me" */
        {"remind me, did i turn the grid on?", "The grid is off."},
        {"what's the exposure looking like", "The exposure is -1 EV."},
        {"which white balance did i pick", "The white balance is auto."},
        {"have i started recording", "It isn't recording."},
        {"tell me the exposure setting", "The exposure is -1 EV."},
        {"have a look at the flash", NULL},
        /* every key the state line shows */
        {"what's everything set to?", "The zoom is 2.5x. The flash is on auto. The timer is 3 "
                                      "seconds. The scene mode is night. The back camera is "
                                      "active. It isn't recording."},
        {"what are the settings right now", "The zoom is 2.5x. The flash is on auto. The timer is "
                                            "3 seconds. The scene mode is night. The back camera "
                                            "is active. It isn't recording."},
        {"what's the best of the settings for fireworks?", NULL},
        {"when is the timer set", "The timer is 3 seconds."}, /* "when" opens one */
        {"flash is on or off?", "The flash is on auto."},
        {"the flash is on", NULL},
        /* a name asked alone or with a word of its status */
        {"flash status?", "The flash is on auto."},
        {"and the exposure?", "The exposure is -1 EV."},
        {"photo count?", "You've taken no photos."},
        {"grid?", "The grid is off."},
        {"the flash status", NULL},  /* no question mark */
        {"flash brightness?", NULL}, /* no word of a status */
        /* ... or with one of its values: whether it has it */
        {"zoom 2x?", NULL}, /* a number: a command with a question mark */
        {"flash on?", "The flash is on auto."},
        {"grid showing?", "The grid is off."},
        {"focus locked?", "Exposure and focus aren't locked."}, /* "focus lock" said done */
        {"wait is the flash actually on auto now?", "The flash is on auto."}, /* "actually" */
        {"is the focus locked?", "Exposure and focus aren't locked."},
        {"flash brighter?", NULL},
        {"is it going to rain tomorrow?", NULL}, /* "going to": what will be */
        {"is the flash gonna fire", NULL},       /* the agent's kept question says the flash */
        {"what's saved in the timer?", "The timer is 3 seconds."}, /* what a thing holds */
        {"what is a timer", NULL},
        /* other intents */
        {"what's a good zoom for portraits?", NULL},
        {"what is exposure", NULL},
        {"what's white balance?", NULL},
        {"how does the timer work?", NULL},
        {"and how long should the exposure be?", NULL},
        {"what's the best shutter speed for photographing waterfalls?", NULL},
        {"what can you do?", NULL},
        {"is it dark?", NULL},
        {"turn on the flash", NULL},
        {"do it in night mode", NULL}, /* "do" asks only before a subject */
        {"set the timer to 3 seconds", NULL},
        {"is the flash necessary here?", NULL},
        {"where's the focus?", NULL},
        {"is the focus on?", NULL}, /* focus_x and focus_y share "focus" */
        {"", NULL},
        {"?", NULL},
    };
    assert_int_equal(check_answers(&p, CASES, sizeof(CASES) / sizeof(CASES[0])), 0);
    pack_close(&p);
}

static void test_phone_questions(void **state) {
    (void)state;
    struct pack p;
    pack_open(&p, PIPIT_SOURCE_DIR "/tools/phone.json", true,
              "{\"wifi\": false, \"bluetooth\": true}");
    static const struct qa CASES[] = {
        {"is wifi on?", "Wi-Fi is off."},
        {"is the wi-fi on", "Wi-Fi is off."},
        {"is bluetooth on", "Bluetooth is on."},
        {"am I in airplane mode?", "Airplane mode is off."},
        {"any timers running?", "There are no timers."},
        {"how many contacts do I have", "There are 8 contacts."},
        {"what's the status of my ticket?", NULL},
        {"what's the ticket status now?", NULL},
        {"any unread texts?", NULL},
        {"what's a good recipe for banana bread?", NULL},
        {"what's my alarm", NULL}, /* an array answers counting questions only */
    };
    assert_int_equal(check_answers(&p, CASES, sizeof(CASES) / sizeof(CASES[0])), 0);
    pack_close(&p);
}

struct claim_case {
    const char *text;
    const char *fixed; /* NULL: nothing to fix */
};

static int check_claims(const struct pack *p, const struct claim_case *cases, size_t n) {
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        int n_fixed = 7;
        char *got = ask_correct(p->k, cases[i].text, p->state, &n_fixed);
        bool ok = cases[i].fixed == NULL
                      ? got == NULL && n_fixed == 0
                      : got != NULL && n_fixed > 0 && strcmp(got, cases[i].fixed) == 0;
        if (!ok) {
            print_error("correct(\"%s\") = \"%s\" (%d), want \"%s\"\n", cases[i].text,
                        got != NULL ? got : "(nothing)", n_fixed,
                        cases[i].fixed != NULL ? cases[i].fixed : "(nothing)");
            failures++;
        }
        free(got);
    }
    return failures;
}

static void test_camera_claims(void **state) {
    (void)state;
    struct pack p;
    pack_open(&p, PIPIT_SOURCE_DIR "/tools/camera.json", false,
              "{\"flash\": \"on\", \"exposure_ev\": -1, \"facing\": \"front\"}");
    static const struct claim_case CASES[] = {
        {"The flash is off.", "The flash is on."},
        {"The flash is on.", NULL},
        {"The flash isn't on.", "The flash is on."},
        {"The flash is on auto.", "The flash is on."}, /* the template's words for "auto" */
        {"The aspect ratio is full screen.", "The aspect ratio is 4:3."},
        {"Zoom is 3x. Enjoy!", "The zoom is 1x. Enjoy!"},
        {"Sure!  The zoom is at 2x, and that's fine.\nBye.", "Sure!  The zoom is 1x.\nBye."},
        {"The zoom is 1x.", NULL},
        {"The exposure is -1 EV.", NULL},
        {"The exposure is 1 EV.", "The exposure is -1 EV."},
        {"It's recording.", "It isn't recording."},
        {"It is not recording.", NULL},
        {"The back camera is active.", "The front camera is active."},
        {"The camera is set to back.", "The front camera is active."},
        {"The timer is set to 3 seconds.", "The timer is off."},
        {"The timer is off.", NULL},
        /* not claims about the state */
        {"I can't zoom to 50x: the zoom goes from 0.5x to 10x.", NULL},
        {"Is the flash on?", NULL},
        {"The flash is off or on?", NULL},
        {"I can't turn the flash on while recording.", NULL},
        {"The zoom is limited to 10x on this lens.", NULL},
        {"Use a tripod for long exposures.", NULL},
        {"Hello! I can help with photos.", NULL},
        {"", NULL},
    };
    assert_int_equal(check_claims(&p, CASES, sizeof(CASES) / sizeof(CASES[0])), 0);
    pack_close(&p);
}

static void test_sentences(void **state) {
    (void)state;
    struct pack p;
    pack_open(&p, PIPIT_SOURCE_DIR "/tools/phone.json", true, NULL);
    char buf[256];
    json_t *none = json_array();
    json_t *one = json_pack("[{s:s}]", "id", "A-1");
    json_t *yes = json_true();
    assert_true(ask_sentence(p.k, "alarms", none, ASK_AGAIN, buf, sizeof(buf)));
    assert_string_equal(buf, "Back to no alarms.");
    assert_true(ask_sentence(p.k, "alarms", one, ASK_NOW, buf, sizeof(buf)));
    assert_string_equal(buf, "There's 1 alarm.");
    assert_true(ask_sentence(p.k, "wifi", yes, ASK_AGAIN, buf, sizeof(buf)));
    assert_string_equal(buf, "Wi-Fi is on again.");
    /* wrong type, unknown key; an object (null: none) in words of its fields */
    assert_false(ask_sentence(p.k, "wifi", none, ASK_NOW, buf, sizeof(buf)));
    assert_string_equal(buf, "");
    assert_false(ask_sentence(p.k, "no_such_key", yes, ASK_NOW, buf, sizeof(buf)));
    json_t *nav = json_object_get(p.state, "navigation");
    assert_non_null(nav); /* null until the phone navigates */
    {
        assert_true(ask_sentence(p.k, "navigation", nav, ASK_NOW, buf, sizeof(buf)));
        assert_string_equal(buf, "There's no navigation right now.");
        assert_true(ask_sentence(p.k, "navigation", nav, ASK_AGAIN, buf, sizeof(buf)));
        assert_string_equal(buf, "The navigation is back as it was.");
        json_t *to = json_pack("{s:s, s:s, s:i}", "destination", "Dolores Park", "mode", "walking",
                               "eta_min", 24);
        assert_true(ask_sentence(p.k, "navigation", to, ASK_NOW, buf, sizeof(buf)));
        assert_string_equal(buf,
                            "The navigation: destination Dolores Park, mode walking, eta min 24.");
        json_decref(to);
    }
    /* a small buffer cuts, never overflows */
    char tiny[8];
    assert_true(ask_sentence(p.k, "alarms", none, ASK_AGAIN, tiny, sizeof(tiny)));
    assert_true(strlen(tiny) < sizeof(tiny));
    json_decref(none);
    json_decref(one);
    json_decref(yes);
    pack_close(&p);
}

/* A pack with no device words: names come from the keys and the tools alone. */
static void test_generic_pack(void **state) {
    (void)state;
    const char *spec =
        "[{\"type\": \"function\", \"function\": {\"name\": \"set_target_temperature\", "
        "\"description\": \"Set the thermostat\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"celsius\": {\"type\": \"number\"}}, \"required\": [\"celsius\"]}}, "
        "\"pipit\": {\"undo\": {\"keys\": [\"target_c\"]}}},"
        "{\"type\": \"function\", \"function\": {\"name\": \"set_fan_mode\", \"description\": "
        "\"Fan\", \"parameters\": {\"type\": \"object\", \"properties\": {\"mode\": {\"type\": "
        "\"string\", \"enum\": [\"low\", \"high\", \"auto\"]}}, \"required\": [\"mode\"]}}, "
        "\"pipit\": {\"undo\": {\"keys\": [\"fan\"]}}}]";
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(spec, strlen(spec), "thermo.json", &ts, &err),
                     PIPIT_OK);
    json_t *st = json_pack("{s:f,s:s,s:b}", "target_c", 21.5, "fan", "low", "eco", 1);
    struct ask *k = NULL;
    assert_int_equal(ask_new(ts, st, NULL, 0, &k, &err), PIPIT_OK);
    char buf[256];
    assert_int_equal(ask_answer(k, "what's the target temperature?", st, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "The target is 21.5.");
    assert_int_equal(ask_answer(k, "is the fan mode on high?", st, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "The fan is low.");
    assert_int_equal(ask_answer(k, "is eco on", st, buf, sizeof(buf)), 1);
    assert_string_equal(buf, "The eco is on.");
    int n_fixed = 0;
    char *fixed = ask_correct(k, "The fan is high.", st, &n_fixed);
    assert_non_null(fixed);
    assert_string_equal(fixed, "The fan is low.");
    free(fixed);
    ask_free(k);
    /* misuse */
    assert_int_equal(ask_new(NULL, st, NULL, 0, &k, &err), PIPIT_ERR_INVALID_ARG);
    assert_null(k);
    assert_int_equal(ask_new(ts, NULL, NULL, 0, &k, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(ask_answer(NULL, "is eco on", st, buf, sizeof(buf)), 0);
    assert_null(ask_correct(NULL, "The fan is high.", st, &n_fixed));
    ask_free(NULL);
    json_decref(st);
    pipit_toolset_free(ts);
}

/* A pack's declared state (home): questions that name a quantity instead of the key ("how
 * warm", "how long is left"), and open/closed as states, are answered from the state; the
 * same words in a command or with unknown words are not questions. */
static void test_pack_quantities(void **state) {
    (void)state;
    struct pack p;
    memset(&p, 0, sizeof(p));
    struct pipit_error err;
    if (pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/home.json", &p.ts, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    assert_int_equal(pack_device_new(p.ts, &p.dev, &err), PIPIT_OK);
    json_t *j = json_loads("{\"thermostat\": 19.5, \"timer_min\": 35, \"blinds\": 100}", 0, NULL);
    assert_int_equal(p.dev.ops->set_state(p.dev.self, j, &err), PIPIT_OK);
    json_decref(j);
    p.state = p.dev.ops->get_state(p.dev.self);
    assert_int_equal(ask_new(p.ts, p.state, p.dev.ops->words, p.dev.ops->n_words, &p.k, &err),
                     PIPIT_OK);
    char thermo[128], timer[128], blinds[128];
    assert_true(ask_answer(p.k, "what's the thermostat set to?", p.state, thermo, sizeof(thermo)));
    assert_true(ask_answer(p.k, "is the timer on?", p.state, timer, sizeof(timer)));
    assert_true(ask_answer(p.k, "what are the blinds at?", p.state, blinds, sizeof(blinds)));
    char colour[128], lights[256];
    assert_true(ask_answer(p.k, "what's the bedroom colour?", p.state, colour, sizeof(colour)));
    /* a plural that ends the names of several switches asks about each */
    assert_int_equal(ask_answer(p.k, "are the lights on?", p.state, lights, sizeof(lights)), 3);
    assert_non_null(strstr(lights, "kitchen light is off"));
    assert_non_null(strstr(thermo, "19.5"));
    assert_non_null(strstr(timer, "35"));
    /* a quantity of a key per room: the room said picks it */
    char bright[128];
    json_t *eighty = json_integer(80);
    assert_true(ask_sentence(p.k, "bedroom_brightness", eighty, ASK_NOW, bright, sizeof(bright)));
    json_decref(eighty);
    const struct qa cases[] = {
        {"how bright is the bedroom", bright},
        {"how bright is the bedroom light?", bright},
        {"how bright is it", NULL},
        {"how warm is it set to again?", thermo},
        {"what temperature is the heating on", thermo},
        {"how long is left on the timer", timer},
        {"how long's left on the timer?", timer},
        {"how much time is left", timer},
        {"are the blinds open?", blinds},
        {"are the blinds closed", blinds},
        {"open the blinds", NULL},
        /* a key's name in another word order ("bedroom light colour") */
        {"what colour is the bedroom light?", colour},
        {"what color is the bedroom light", colour},
        {"is the porch light on?", NULL}, /* no such key: the model decides */
        {"which lights are on", lights},
        {"any lights still on?", lights},
        {"turn the lights on", NULL},
        {"are the lights too bright?", NULL},
        {"how warm is it in Lisbon today", NULL},
        {"how long does a roast chicken take", NULL},
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    pack_close(&p);
}

/* A pattern written for numbers ("The fan is at {v}.") with a zero word ("off"): "at" is not
 * said before the word. */
static void test_zero_word_in_pattern(void **state) {
    (void)state;
    static const char FAN[] =
        "{\"pipit\": {\"pack\": \"fan\", \"state\": {\"fan\": {\"type\": \"integer\", "
        "\"minimum\": 0, \"maximum\": 7, \"initial\": 0, \"show\": \"fan\", \"words\": "
        "{\"names\": \"fan|fan speed\", \"zero\": \"off\", \"pattern\": \"The fan is at {v}.\"}}}},"
        " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_fan\", "
        "\"description\": \"Set the fan speed\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"speed\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 7}}, "
        "\"required\": [\"speed\"]}}, \"pipit\": {\"effect\": {\"set\": {\"fan\": "
        "\"{speed}\"}}}}]}";
    struct pack p;
    pack_from_spec(&p, FAN, sizeof(FAN) - 1, "fan.json");
    char buf[128];
    json_t *zero = json_integer(0), *three = json_integer(3);
    assert_true(ask_sentence(p.k, "fan", zero, ASK_NOW, buf, sizeof(buf)));
    assert_string_equal(buf, "The fan is off.");
    assert_true(ask_sentence(p.k, "fan", three, ASK_NOW, buf, sizeof(buf)));
    assert_string_equal(buf, "The fan is at 3.");
    json_decref(zero);
    json_decref(three);
    pack_close(&p);
}

/* A quantity two keys share ("how hot" of a nozzle and a bed) is narrowed by the key the
 * question names; alone, or with a key outside the two, it names nothing. */
static void test_shared_quantity(void **state) {
    (void)state;
    static const char HEAT[] =
        "{\"pipit\": {\"pack\": \"heat\", \"state\": {"
        "\"nozzle\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 300, \"initial\": 210, "
        "\"words\": {\"names\": \"nozzle|hotend\", \"unit\": \" degrees\"}}, "
        "\"bed\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 120, \"initial\": 60, "
        "\"words\": {\"names\": \"bed|print bed\", \"unit\": \" degrees\"}}, "
        "\"fan\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 100, \"initial\": 50, "
        "\"words\": {\"names\": \"fan\", \"unit\": \"%\"}}}}, \"tools\": ["
        "{\"type\": \"function\", \"function\": {\"name\": \"set_nozzle\", \"description\": "
        "\"Set the nozzle temperature\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"celsius\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 300}}, \"required\": "
        "[\"celsius\"]}}, \"pipit\": {\"effect\": {\"set\": {\"nozzle\": \"{celsius}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"set_bed\", \"description\": "
        "\"Set the bed temperature\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"celsius\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 120}}, \"required\": "
        "[\"celsius\"]}}, \"pipit\": {\"effect\": {\"set\": {\"bed\": \"{celsius}\"}}}}, "
        "{\"type\": \"function\", \"function\": {\"name\": \"set_fan\", \"description\": "
        "\"Set the fan\", \"parameters\": {\"type\": \"object\", \"properties\": "
        "{\"percent\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 100}}, \"required\": "
        "[\"percent\"]}}, \"pipit\": {\"effect\": {\"set\": {\"fan\": \"{percent}\"}}}}]}";
    struct pack p;
    pack_from_spec(&p, HEAT, sizeof(HEAT) - 1, "heat.json");
    char want_bed[64], want_nozzle[64];
    json_t *sixty = json_integer(60), *hot = json_integer(210);
    assert_true(ask_sentence(p.k, "bed", sixty, ASK_NOW, want_bed, sizeof(want_bed)));
    assert_true(ask_sentence(p.k, "nozzle", hot, ASK_NOW, want_nozzle, sizeof(want_nozzle)));
    json_decref(sixty);
    json_decref(hot);
    const struct qa cases[] = {
        {"how hot is the bed?", want_bed},
        {"how hot is the hotend", want_nozzle},
        {"how hot is it", NULL},
        {"how hot is the fan", NULL},
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    pack_close(&p);
}

/* A sensor no tool sets is named by the quantity its own names say ("how humid is it", "how
 * warm is it in there"), below a setter of the same quantity (the thermostat keeps "how
 * warm"); a quantity is no name to ask_say_named_key() ("how hot is it in tokyo" asks the
 * world). From a new user's baby monitor. */
static void test_sensor_quantity(void **state) {
    (void)state;
    static const char ROOM[] =
        "{\"pipit\": {\"pack\": \"room\", \"state\": {"
        "\"room_temp\": {\"type\": \"number\", \"initial\": 21.5, \"words\": {\"names\": "
        "\"room temperature|temperature\", \"unit\": \" degrees\", \"pattern\": \"It's {v} in "
        "the nursery.\"}}, "
        "\"humidity\": {\"type\": \"integer\", \"initial\": 45, \"words\": {\"names\": "
        "\"humidity\", \"unit\": \"%\"}}, "
        "\"volume\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 10, \"initial\": 3}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_volume\", "
        "\"description\": \"Speaker volume\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"level\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 10}}, "
        "\"required\": [\"level\"]}}, \"pipit\": {\"effect\": {\"set\": {\"volume\": "
        "\"{level}\"}}}}]}";
    struct pack p;
    pack_from_spec(&p, ROOM, sizeof(ROOM) - 1, "room.json");
    const struct qa cases[] = {
        {"how humid is it", "The humidity is 45%."},
        {"how humid is it in there?", "The humidity is 45%."},
        {"how warm is it", "It's 21.5 degrees in the nursery."},
        {"how hot is it in tokyo", NULL},
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    char buf[128];
    assert_int_equal(ask_say_named_key(p.k, "how hot is it in tokyo", p.state, buf, sizeof(buf)),
                     0);
    assert_true(
        ask_say_named_key(p.k, "what's the room temperature like", p.state, buf, sizeof(buf)) > 0);
    pack_close(&p);
}

/* "who" and "when" open questions too, and "do"/"does" are glue: "who has the guest code?",
 * "when does it auto arm?" (a new user's alarm; both had gone to the cloud); a question that
 * names no key stays the model's. */
static void test_who_and_when(void **state) {
    (void)state;
    static const char GUARD[] =
        "{\"pipit\": {\"pack\": \"alarm\", \"state\": {"
        "\"guest\": {\"type\": \"string\", \"initial\": \"Dave\", \"words\": {\"names\": "
        "\"guest code|guest\", \"noun\": \"the guest code\"}}, "
        "\"auto_arm\": {\"type\": \"string\", \"initial\": \"23:00\", \"words\": {\"names\": "
        "\"auto arm\", \"noun\": \"the auto-arm time\"}}}}, \"tools\": [{\"type\": \"function\", "
        "\"function\": {\"name\": \"set_guest_code\", \"description\": \"Give a guest a code\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"guest\": {\"type\": "
        "\"string\"}}, \"required\": [\"guest\"]}}, \"pipit\": {\"effect\": {\"set\": "
        "{\"guest\": \"{guest}\"}}}}]}";
    struct pack p;
    pack_from_spec(&p, GUARD, sizeof(GUARD) - 1, "alarm.json");
    char guest[128], arm[128];
    assert_true(ask_answer(p.k, "what's the guest code?", p.state, guest, sizeof(guest)));
    assert_true(ask_answer(p.k, "what's the auto arm?", p.state, arm, sizeof(arm)));
    const struct qa cases[] = {
        {"who has the guest code?", guest}, {"who's got the guest code at the moment", guest},
        {"when does it auto arm?", arm},    {"who won the game last night", NULL},
        {"when is sunset", NULL},
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    pack_close(&p);
}

/* A switch asked about with a word of its own sentences ("watching" of "The patio sensor is
 * watching."), and a key said first, then asked about as "it" ("patio sensor, is it still
 * watching?", "the volume - what is it at?"); a topic that names no key, or a command after
 * it, is not a question. An empty string reads as empty (a new user's hot tub had "The panel
 * message is ."). */
static void test_topic_and_switch_words(void **state) {
    (void)state;
    static const char ZONE[] =
        "{\"pipit\": {\"pack\": \"zones\", \"state\": {"
        "\"patio\": {\"type\": \"boolean\", \"initial\": true, \"words\": {\"names\": "
        "\"patio sensor|patio\", \"yes\": \"The patio sensor is watching.\", \"no\": \"The "
        "patio sensor is bypassed.\"}}, "
        "\"volume\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 10, \"initial\": "
        "6, \"words\": {\"names\": \"siren volume|volume\", \"pattern\": \"The siren volume "
        "is {v} out of 10.\"}}, "
        "\"message\": {\"type\": \"string\", \"initial\": \"\", \"words\": {\"names\": "
        "\"panel message\", \"noun\": \"the panel message\", \"pattern\": \"The panel shows "
        "\\\"{v}\\\".\"}}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_zone\", "
        "\"description\": \"Watch or bypass the patio sensor\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {\"watch\": {\"type\": \"boolean\"}}, \"required\": "
        "[\"watch\"]}}, \"pipit\": {\"effect\": {\"set\": {\"patio\": \"{watch}\"}}}}]}";
    struct pack p;
    pack_from_spec(&p, ZONE, sizeof(ZONE) - 1, "zones.json");
    const struct qa cases[] = {
        {"is the patio sensor still watching?", "The patio sensor is watching."},
        {"is the patio sensor bypassed?", "The patio sensor is watching."},
        {"patio sensor, is it still watching?", "The patio sensor is watching."},
        {"the volume - what is it at?", "The siren volume is 6 out of 10."},
        {"siren volume: what's it set to?", "The siren volume is 6 out of 10."},
        {"is the patio sensor sleeping?", NULL},
        {"patio sensor, bypass it", NULL},
        {"the weather, is it nice today?", NULL},
        {"volume, turn it up", NULL},
        {"what's the panel message?", "The panel message is empty."}, /* not "shows \"\"" */
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    pack_close(&p);
}

/* The words an argument's description gives a value are that key's values in questions ("is
 * the heater in eco mode?" of "economy (eco, saver)"), and a question may read a key through a
 * verb of showing or running ("what does the display say", "how long does the filter run");
 * both had gone to the model on a new user's hot tub. */
static void test_described_values_and_reading_verbs(void **state) {
    (void)state;
    static const char TUB[] =
        "{\"pipit\": {\"pack\": \"tub\", \"state\": {"
        "\"heat_mode\": {\"type\": \"string\", \"enum\": [\"standard\", \"economy\"], "
        "\"initial\": \"standard\", \"words\": {\"names\": \"heater|heat mode\", \"noun\": "
        "\"the heater\", \"pattern\": \"The heater is in {v} mode.\"}}, "
        "\"message\": {\"type\": \"string\", \"initial\": \"Hi\", \"words\": {\"names\": "
        "\"panel message|display\", \"pattern\": \"The panel shows {v}.\"}}, "
        "\"filter\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 12, \"initial\": "
        "4, \"words\": {\"names\": \"filter|filter hours\", \"pattern\": \"The filter runs {v} "
        "hours a day.\"}}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_heat_mode\", "
        "\"description\": \"Heater mode\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"mode\": {\"type\": \"string\", \"description\": \"standard "
        "(normal), economy (eco, saver)\", \"enum\": [\"standard\", \"economy\"]}}, "
        "\"required\": [\"mode\"]}}, \"pipit\": {\"effect\": {\"set\": {\"heat_mode\": "
        "\"{mode}\"}}}}]}";
    struct pack p;
    pack_from_spec(&p, TUB, sizeof(TUB) - 1, "tub.json");
    const struct qa cases[] = {
        {"hey is the heater in eco mode", "The heater is in standard mode."},
        {"is the heater on saver?", "The heater is in standard mode."},
        {"what does the display say", "The panel shows Hi."},
        {"so how long does the filter run now?", "The filter runs 4 hours a day."},
        {"is the heater in turbo mode?", NULL},
        {"what does the weather say", NULL},
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    pack_close(&p);
}

/* Speed, incline, distance and weight are quantities too: "how fast am I going" and "how steep
 * is it" name a treadmill's speed and incline keys (its author's first confusion), even where
 * the setter changes two keys; a world question with the same words is not a state question. */
static void test_more_quantities(void **state) {
    (void)state;
    static const char BELT[] =
        "{\"pipit\": {\"pack\": \"belt\", \"state\": {"
        "\"running\": {\"type\": \"boolean\", \"initial\": true}, "
        "\"speed\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 20, \"initial\": 8, "
        "\"words\": {\"unit\": \" km/h\"}}, "
        "\"incline\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 15, \"initial\": "
        "2, \"words\": {\"pattern\": \"The incline is {v} percent.\"}}}}, "
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"set_speed\", "
        "\"description\": \"Belt speed\", \"parameters\": {\"type\": \"object\", "
        "\"properties\": {\"kmh\": {\"type\": \"number\", \"minimum\": 1, \"maximum\": 20}}, "
        "\"required\": [\"kmh\"]}}, \"pipit\": {\"effect\": {\"set\": {\"speed\": \"{kmh}\", "
        "\"running\": true}}}}]}";
    struct pack p;
    pack_from_spec(&p, BELT, sizeof(BELT) - 1, "belt.json");
    const struct qa cases[] = {
        {"how fast am i going", "The speed is 8 km/h."},
        {"how steep is it?", "The incline is 2 percent."},
        {"how fast can a cheetah run", NULL},
        {"how steep is mount everest", NULL},
    };
    assert_int_equal(check_answers(&p, cases, sizeof(cases) / sizeof(cases[0])), 0);
    pack_close(&p);
}

/* Long and odd input: bounded, no crash (valgrind runs this too). */
static void test_bounds(void **state) {
    (void)state;
    struct pack p;
    pack_open(&p, PIPIT_SOURCE_DIR "/tools/camera.json", false, NULL);
    char big[8192];
    size_t n = 0;
    while (n + 17 < sizeof(big)) {
        memcpy(big + n, "The zoom is 3x.\n ", 17);
        n += 17;
    }
    big[n] = '\0';
    char buf[64];
    assert_int_equal(ask_answer(p.k, big, p.state, buf, sizeof(buf)), 0);
    int n_fixed = 0;
    char *fixed = ask_correct(p.k, big, p.state, &n_fixed);
    assert_non_null(fixed);
    assert_true(n_fixed > 400);
    assert_non_null(strstr(fixed, "The zoom is 1x.\n The zoom is 1x."));
    free(fixed);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(ask_answer(p.k, big, p.state, buf, sizeof(buf)), 0);
    assert_null(ask_correct(p.k, big, p.state, &n_fixed));
    const char *odd = "is the \xE2\x80\x9C"
                      "flash\xE2\x80\x9D on\xE2\x80\xA6 \xff\xfe?";
    (void)ask_answer(p.k, odd, p.state, buf, sizeof(buf));
    pack_close(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_camera_questions),
        cmocka_unit_test(test_phone_questions),
        cmocka_unit_test(test_pack_quantities),
        cmocka_unit_test(test_zero_word_in_pattern),
        cmocka_unit_test(test_shared_quantity),
        cmocka_unit_test(test_sensor_quantity),
        cmocka_unit_test(test_who_and_when),
        cmocka_unit_test(test_topic_and_switch_words),
        cmocka_unit_test(test_described_values_and_reading_verbs),
        cmocka_unit_test(test_more_quantities),
        cmocka_unit_test(test_camera_claims),
        cmocka_unit_test(test_sentences),
        cmocka_unit_test(test_generic_pack),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
