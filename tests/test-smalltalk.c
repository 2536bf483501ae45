/*
 * test-smalltalk.c - social turns the harness answers itself: what counts as small talk, the
 * tool set's words that make it something else, the replies.
 */
#include "router.h"
#include "smalltalk.h"
#include "testutil.h"

static void test_kinds(void **state) {
    (void)state;
    struct {
        const char *said;
        unsigned kinds;
    } cases[] = {
        {"thanks", SMALLTALK_THANKS},
        {"Thank you so much!", SMALLTALK_THANKS},
        {"cheers mate, that's all for now", SMALLTALK_THANKS | SMALLTALK_FAREWELL},
        {"hello there", SMALLTALK_GREETING},
        {"good morning, pipit", SMALLTALK_GREETING},
        {"how are you?", SMALLTALK_GREETING | SMALLTALK_ASKED_AFTER},
        {"bye for now", SMALLTALK_FAREWELL},
        {"nighty night!", SMALLTALK_FAREWELL},
        {"ok sweet dreams", SMALLTALK_ACK | SMALLTALK_FAREWELL},
        {"thanks, ttyl", SMALLTALK_THANKS | SMALLTALK_FAREWELL},
        {"perfect", SMALLTALK_PRAISE},
        {"wow, you are the best", SMALLTALK_PRAISE},
        {"ok", SMALLTALK_ACK},
        {"alright, sounds good", SMALLTALK_ACK},
        {"what can you do?", SMALLTALK_HELP},
        {"hi, what can you do around the house?", SMALLTALK_GREETING | SMALLTALK_HELP},
        {"what can you do about the noise from next door", 0},
        /* something else was said: the model decides */
        {"thanks, now take a photo", 0},
        {"hello, can you call mum", 0},
        {"perfect weather for a picnic", 0},
        {"ok do it again", 0},
        {"what's the weather like", 0},
        {"", 0},
        {"   ", 0},
        {"thanks thanks thanks thanks thanks thanks thanks thanks thanks thanks thanks thanks "
         "thanks thanks thanks thanks thanks thanks thanks thanks thanks thanks thanks thanks "
         "thanks",
         0},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned got = smalltalk_kinds(NULL, cases[i].said);
        if (got != cases[i].kinds) {
            print_error("smalltalk_kinds(\"%s\") = %u, want %u\n", cases[i].said, got,
                        cases[i].kinds);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    assert_int_equal(smalltalk_kinds(NULL, NULL), 0);
}

/* A word of the tool set is never small talk: "good night" is a command for a camera with a
 * night mode, a goodbye for a tool set without one. */
static void test_pack_words_win(void **state) {
    (void)state;
    struct pipit_toolset *camera = test_load_tools(PIPIT_SOURCE_DIR "/tools/camera.json");
    struct pipit_toolset *phone = test_load_tools(PIPIT_SOURCE_DIR "/tools/phone.json");
    struct router *rc = router_new(camera);
    struct router *rp = router_new(phone);
    assert_non_null(rc);
    assert_non_null(rp);
    assert_int_equal(smalltalk_kinds(rc, "good night"), 0);
    assert_int_equal(smalltalk_kinds(rp, "good night"), SMALLTALK_FAREWELL);
    assert_int_equal(smalltalk_kinds(rc, "thanks, flash off"), 0);
    assert_int_equal(smalltalk_kinds(rc, "thanks, that's all"),
                     SMALLTALK_THANKS | SMALLTALK_FAREWELL);
    /* statements about the situation, with the camera's words: acknowledged, nothing runs */
    static const struct {
        const char *said;
        unsigned kinds;
    } statements[] = {
        {"lol someone blinked", SMALLTALK_ACK},
        {"morning! we're at the top of the trail", SMALLTALK_GREETING | SMALLTALK_ACK},
        {"hi pipit, we're at the beach with friends", SMALLTALK_GREETING | SMALLTALK_ACK},
        {"that's adorable", SMALLTALK_ACK},
        {"the bride is here", SMALLTALK_ACK},
        {"the ceremony is about to start", 0}, /* "start": the recording's value */
        {"it's getting dark downtown", SMALLTALK_ACK},
        {"we're at the top of the trail, sun is going down", SMALLTALK_ACK},
        {"great, you're a lifesaver", SMALLTALK_PRAISE | SMALLTALK_ACK},
        /* a subject pronoun, a determiner before the subject, a comment after a statement */
        {"they just cut the ribbon", SMALLTALK_ACK},
        {"she looks amazing in that dress", SMALLTALK_ACK},
        {"this place is packed tonight", SMALLTALK_ACK},
        {"the lions are asleep, typical", SMALLTALK_ACK},
        {"cheers, that was a great day out", SMALLTALK_THANKS | SMALLTALK_ACK},
        {"give me a sec", SMALLTALK_ACK},
        /* "hold" is the camera's verb, "hold on" a formula; "someone's" opens a statement */
        {"hold on, someone's calling", SMALLTALK_ACK},
        {"hold on, zoom in", 0},
        {"she needs more light", 0},                /* wanting */
        {"they're walking in, start recording", 0}, /* a command */
        {"typical, zoom in", 0},
        {"someone blinked, another", 0}, /* a follow-up, not a comment */
        /* praise of a thing in a word or two */
        {"cheers pipit, great day", SMALLTALK_THANKS | SMALLTALK_PRAISE | SMALLTALK_ACK},
        {"oh beautiful sunset", SMALLTALK_PRAISE | SMALLTALK_ACK},
        {"lol nice sky", SMALLTALK_PRAISE | SMALLTALK_ACK}, /* was test_not_asked_noop's */
        {"good game!", SMALLTALK_PRAISE | SMALLTALK_ACK},
        {"nice big family lunch today", 0}, /* more than a word or two after the praise */
        {"great, zoom in", 0},
        /* liking a thing of the tool set, in a clause of its own */
        {"thanks, the flash looks great", SMALLTALK_THANKS | SMALLTALK_PRAISE | SMALLTALK_ACK},
        {"I love this grid", SMALLTALK_PRAISE | SMALLTALK_ACK},
        {"I'd love a flat white", 0}, /* a wish, not a liking */
        {"the flash is great but too bright", 0},
        {"the flash is off", 0},
        {"great grid, now the flash", 0},
        {"lovely, flash on", 0},
        /* acknowledgements */
        {"ok whatever", SMALLTALK_ACK},
        {"fair enough", SMALLTALK_ACK},
        {"makes sense, thanks", SMALLTALK_ACK | SMALLTALK_THANKS},
        /* the device addressed, first or last */
        {"thanks camera", SMALLTALK_THANKS},
        {"camera, goodbye", SMALLTALK_FAREWELL}, /* ("good night": the night mode) */
        {"thanks, front camera", 0},
        {"what is ISO exactly", 0}, /* a question without its mark */
        {"whoa", SMALLTALK_ACK},    /* interjections alone */
        {"lol omg", SMALLTALK_ACK},
        {"...", 0},
        /* a request, a question, the tool set's words, a number: the model's */
        {"it's too dark in here", 0},
        {"its dark in here, use the flsh", 0},
        {"hey, we're doing the cake in a minute, get ready", 0},
        {"that's the front camera, right?", 0},
        {"lol that's a funny photo", 0},
        {"we're 3 people", 0},
        {"I'm going to need more light", 0},
    };
    for (size_t i = 0; i < sizeof(statements) / sizeof(statements[0]); i++) {
        unsigned got = smalltalk_kinds(rc, statements[i].said);
        if (got != statements[i].kinds) {
            fail_msg("smalltalk_kinds(\"%s\") = %u, want %u", statements[i].said, got,
                     statements[i].kinds);
        }
    }
    router_free(rc);
    router_free(rp);
    pipit_toolset_free(camera);
    pipit_toolset_free(phone);
}

/* The pack's name addresses the device like "camera" or "pipit" ("good morning music"), alone
 * a segment is only that; a word of praise in a tool's description is no tool word. */
static void test_device_addressed(void **state) {
    (void)state;
    struct pipit_toolset *music = test_load_tools(PIPIT_SOURCE_DIR "/tests/packs/music.json");
    struct router *r = router_new(music);
    assert_non_null(r);
    assert_true(router_is_device_name(r, "music"));
    assert_false(router_is_device_name(r, "camera"));
    assert_true(smalltalk_is_vocative(r, "music"));
    assert_true(smalltalk_is_vocative(r, "hey pipit"));
    assert_true(smalltalk_is_vocative(NULL, "camera"));
    assert_false(smalltalk_is_vocative(r, "music off"));
    assert_false(smalltalk_is_vocative(r, "play"));
    assert_int_equal(smalltalk_kinds(r, "good morning music"), SMALLTALK_GREETING);
    router_free(r);
    pipit_toolset_free(music);
    static const char TOOLS[] =
        "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"cancel_job\", "
        "\"description\": \"Cancel the current job for good\", \"parameters\": {\"type\": "
        "\"object\", \"properties\": {}}}}]}";
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(TOOLS, sizeof(TOOLS) - 1, "j.json", &ts, &err),
                     PIPIT_OK);
    r = router_new(ts);
    assert_int_equal(smalltalk_kinds(r, "good morning"), SMALLTALK_GREETING);
    router_free(r);
    pipit_toolset_free(ts);
}

static void test_replies(void **state) {
    (void)state;
    char buf[96];
    smalltalk_reply(SMALLTALK_THANKS, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "You're welcome.");
    smalltalk_reply(SMALLTALK_THANKS | SMALLTALK_FAREWELL, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "You're welcome. Goodbye!");
    smalltalk_reply(SMALLTALK_GREETING, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "Hi! What would you like to do?");
    smalltalk_reply(SMALLTALK_GREETING | SMALLTALK_FAREWELL, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "Goodbye!");
    smalltalk_reply(SMALLTALK_PRAISE | SMALLTALK_ACK, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "Glad you like it.");
    smalltalk_reply(SMALLTALK_ACK, NULL, buf, sizeof(buf));
    assert_string_equal(buf, "OK.");
    struct pipit_toolset *home = test_load_tools(PIPIT_SOURCE_DIR "/tools/home.json");
    char help[640];
    smalltalk_reply(SMALLTALK_HELP | SMALLTALK_GREETING, home, help, sizeof(help));
    assert_string_equal(help, "Here's what I can help with: light, brightness, light colour, "
                              "thermostat, blinds, scene and timer.");
    pipit_toolset_free(home);
    /* a first verb goes, the rest stays whole ("do not disturb"); small words at the ends go */
    static const char TOOLS[] = "[{\"type\": \"function\", \"function\": {\"name\": "
                                "\"set_do_not_disturb\", \"description\": \"d\", "
                                "\"parameters\": {\"type\": \"object\", \"properties\": {}}}},"
                                " {\"type\": \"function\", \"function\": {\"name\": "
                                "\"return_to_dock\", \"description\": \"d\", "
                                "\"parameters\": {\"type\": \"object\", \"properties\": {}}}},"
                                " {\"type\": \"function\", \"function\": {\"name\": "
                                "\"tap_to_focus\", \"description\": \"d\", "
                                "\"parameters\": {\"type\": \"object\", \"properties\": {}}}},"
                                " {\"type\": \"function\", \"function\": {\"name\": "
                                "\"navigate_to\", \"description\": \"d\", "
                                "\"parameters\": {\"type\": \"object\", \"properties\": {}}}}]";
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(TOOLS, sizeof(TOOLS) - 1, "t.json", &ts, &err),
                     PIPIT_OK);
    smalltalk_reply(SMALLTALK_HELP, ts, help, sizeof(help));
    assert_string_equal(help, "Here's what I can help with: do not disturb, return to dock, "
                              "focus and navigate.");
    pipit_toolset_free(ts);
    smalltalk_reply(SMALLTALK_HELP, NULL, help, sizeof(help));
    assert_non_null(strstr(help, "no tools"));
    char tiny[4];
    smalltalk_reply(SMALLTALK_THANKS, NULL, tiny, sizeof(tiny));
    assert_true(strlen(tiny) < sizeof(tiny));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_pack_words_win),
        cmocka_unit_test(test_device_addressed),
        cmocka_unit_test(test_replies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
