/*
 * test-router.c - undo detection and compound-utterance segmentation, as
 * tables of utterances with the expected answer.
 */
#include "router.h"
#include "testutil.h"

/* ============================================================================
 * undo */

struct undo_case {
    const char *utterance;
    bool undo;
};

static const struct undo_case UNDO_CASES[] = {
    /* the phrases */
    {"undo", true},
    {"undo that", true},
    {"never mind", true},
    {"nevermind", true},
    {"put it back", true},
    {"change it back", true},
    {"revert", true},
    {"revert that", true},
    {"go back to how it was", true},
    {"cancel that", true},
    {"take that back", true},
    {"i changed my mind", true},
    {"oops didn't mean that", true},
    {"actually leave it as it was", true},
    {"i changed my mind, make it 3x", false},
    {"leave it on", false},
    {"oops undo", true},
    {"undo please", true},
    {"scratch that", true},
    {"undo the last change", true},
    {"put it back the way it was", true},
    /* casing, punctuation, whitespace */
    {"UNDO", true},
    {"Undo That!", true},
    {"  undo.  ", true},
    {"Never mind.", true},
    {"never-mind", false}, /* one hyphenated word, not the phrase */
    {"Never, mind!", true},
    {"\tput it back\n", true},
    {"\"undo\"", true},
    {"undo\xE2\x80\xA6", true},                  /* "undo…" */
    {"\xE2\x80\x9Cundo that\xE2\x80\x9D", true}, /* curly quotes */
    /* fillers at either end */
    {"please undo", true},
    {"actually, undo that", true},
    {"oh wait, never mind", true},
    {"hey, change it back please", true},
    {"oops, sorry, undo that please", true},
    {"no no, put it back", true},
    {"can you undo that", true},
    {"could you please undo that?", true},
    {"undo that, thanks", true},
    {"okay just revert it", true},
    {"hmm... never mind", true},
    /* a retraction said whole, alone or after a filler */
    {"I didn't mean that", true},
    {"no, I didn't mean it", true},
    {"that's not what I meant", true},
    {"forget that, I didn't mean it", true},
    {"oops", false},
    /* other intents that merely contain undo words */
    {"don't undo anything", false},
    {"don\xE2\x80\x99t undo anything", false},
    {"go back camera", false},
    {"put the flash back on", false},
    {"never mind the flash, take a photo", false},
    {"undo the timer and zoom in", false},
    {"undo that and zoom in", false},
    {"cancel the timer", false},
    {"cancel", false},
    {"switch back to the front camera", false},
    {"take a photo", false},
    {"turn the flash back on", false},
    {"what does undo do", false},
    {"can you undo things", false},
    {"oops", false},
    {"oh no", false},
    {"please", false},
    {"", false},
    {"   ", false},
    {"!!!", false},
    {"undo undo", false},
    {"revert the zoom to 1x", false},
    {"how do I put it back", false},
    /* each undo family (docs/router.md), with the phrasings people used in issue 15 */
    {"scrap that", true},
    {"hang on, scrap the heating change", true}, /* the change named by what changed */
    {"drop the last flash setting", true},
    {"nope, back to the colour it was", true},
    {"back to the zoom it was before", true},
    {"cancel the timer setting for tomorrow", false}, /* more words after the change: no */
    {"back to the front camera it was on", false},
    {"scrap the photo", false},
    {"go back", true},
    {"revert that", true},
    {"undo that too", true},
    {"reverse the last change", true},
    {"that was wrong, undo", true},
    {"restore the previous settings", true},
    {"forget that", true},
    {"cancel that", true},
    {"roll it back", true},
    {"roll back the last change", true},
    {"undo what you just did", true},
    {"cancel what you just did", true},
    {"undo the last change you made", true},
    {"undo my previous command", true},
    {"revert it as well", true},
    {"drop that last change", true},
    {"lose the last change", true},
    {"back out that change", true},
    {"unwind the last change", true},
    {"bring back the old setting", true},
    {"restore what it was", true},
    {"set it back to what it was", true},
    {"back to how it was before", true},
    {"return to the previous setting", true},
    {"revert to the previous value", true},
    {"make it like it was before", true},
    {"make it like it was", true},
    {"go back to the previous one", true},
    {"go back one step", true},
    {"never mind, put it back", true},
    {"my bad, undo", true},
    {"i didn't mean that, change it back", true},
    {"undo, that was a mistake", true},
    {"undo please, that was an accident", true},
    {"on second thought, revert it", true},
    {"ctrl z", true},
    {"hit undo", true},
    {"I take that back", true},
    /* near misses: other commands that share an undo word */
    {"go back to the front camera", false},
    {"go back to auto mode", false},
    {"return to the normal scene", false},
    {"restore the automatic scene", false},
    {"restore defaults", false},
    {"reverse camera", false},
    {"reverse the camera", false},
    {"cancel it", false}, /* the timer or the recording? the model decides */
    {"cancel the recording", false},
    {"stop recording", false},
    {"forget the timer", false},
    {"delete the last photo", false},
    {"turn it back on", false},
    {"scrap", false},
    {"undo things", false},
    {"restore", false},
    {"that was wrong", false}, /* a complaint, not a request */
    {"go back to that", false},
    /* a verb of moving, what was done, "back" and at most an earlier state; the earlier state
     * alone; remorse that is whole; restore leads with "it" */
    {"ugh, switch that back", true},
    {"flip it back to what it was", true},
    {"put them all back", false}, /* "all" after "them": not one of the forms */
    {"switch everything back", true},
    {"switch it back to auto", false},
    {"set it back to 2", false},
    {"set it back to what I had", true},
    {"oops wrong thing, return it to what it was", true},
    {"too tight, can we have what we had", true},
    {"on second thought, the way it was before pls", true},
    {"hmm looks grainy. previous setting please", true},
    {"the old look", true},
    {"previous track", false},
    {"before", false},
    {"hmm no, I liked it better before", true},
    {"hmm no, that last one was a mistake", true},
    {"sorry wrong button, reset that", true},
    {"reset it", false}, /* to its default? */
    {"reset the zoom", false},
    {"rewind that last bit", true},
    {"rewind 10 seconds", false},
    {"wait, no, I want the old quality, scratch that change", true},
    {"nah, as you were", true},
    {"Oh dear, that isn't what I wanted at all. Could you make it the way it was before, love?",
     true},
    {"can we just have it the way it was", true},
    {"whoa too close! make it like one second ago", true},
    {"have it on", false},
    {"ach, it's distracting. get rid of whatever you just did", true},
    {"get rid of it", false}, /* the photo? */
    {"hm, the lock was a mistake. cancel just that latest change", true},
    {"kindly restore the earlier setting", true},
    {"The pictures came out grainy. Kindly restore the earlier setting.", true},
    {"too much glare, set them back how they were", true},
    {"wait, I'm still reading! put things as they were", true},
    {"return them to how they were", true},
    {"leave them as they were", true},
    {"keep it", false},
    {"return it to the kitchen", false},
    /* the dev set's session phrasings */
    {"nah go back to the previous one", true},
    {"let's not do that", true},
    {"back out one step", false}, /* zoom out */
    /* an undo and a clause that only says why, in either order */
    {"take that back, portrait was better", true},
    {"ugh, too dark, go back to how it was", true},
    {"wrong one, go back", true},
    {"oops, undo", true},
    {"too dark, make it brighter", false},
    {"it's too dark", false},
    {"the zoom was fine, undo it", true},
    {"undo that, it was better", true},
    {"nah, revert that, the exposure was fine", true}, /* the request between two clauses */
    {"hmm scratch that, food mode looked better", true},
    {"ok, so, the flash was better, take a photo", false},
    {"undo that, the flash was better, take a photo", false},
    {"undo that, portrait was better and take a photo", false},
    {"undo, night mode", false},
    {"never mind, take a photo", false},
};

struct undo_count_case {
    const char *utterance;
    int32_t count;
};

static const struct undo_count_case UNDO_COUNT_CASES[] = {
    {"undo", 1},
    {"undo that too", 1},
    {"undo the last one", 1},
    {"undo the last two", 2},
    {"undo the last 2", 2},
    {"undo both", 2},
    {"undo both of them", 2},
    {"undo twice", 2},
    {"revert the last three changes", 3},
    {"please undo those two", 2},
    {"undo my last 3 changes", 3},
    {"go back two steps", 2},
    {"oops, undo the last two things you did", 2},
    {"undo everything", ROUTER_UNDO_ALL},
    {"undo all of that", ROUTER_UNDO_ALL},
    {"revert all the changes", ROUTER_UNDO_ALL},
    {"put everything back", ROUTER_UNDO_ALL},
    {"back out the last two", 2},
    {"back out two", 0},
    {"undo the last 0", 0},
    {"undo the last two and zoom in", 0},
    {"undo 2.5", 0},
    {"undo the last 1000", 0},
    {"undo two photos", 0},
    {NULL, 0},
};

static void test_undo_count_table(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; UNDO_COUNT_CASES[i].utterance != NULL; i++) {
        int32_t got = router_undo_count(UNDO_COUNT_CASES[i].utterance);
        if (got != UNDO_COUNT_CASES[i].count) {
            print_error("undo_count(\"%s\") = %d, expected %d\n", UNDO_COUNT_CASES[i].utterance,
                        (int)got, (int)UNDO_COUNT_CASES[i].count);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    assert_int_equal(router_undo_count(NULL), 0);
}

static void test_undo_table(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof(UNDO_CASES) / sizeof(UNDO_CASES[0]); i++) {
        bool got = router_is_undo(UNDO_CASES[i].utterance);
        if (got != UNDO_CASES[i].undo) {
            print_error("undo(\"%s\") = %d, expected %d\n", UNDO_CASES[i].utterance, got,
                        UNDO_CASES[i].undo);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* After an undo turn only: "and that too" asks for one more. */
static void test_undo_followup(void **state) {
    (void)state;
    static const char *const YES[] = {"and that too",
                                      "that one too",
                                      "and the one before",
                                      "one more",
                                      "again",
                                      "undo",
                                      "revert that too please",
                                      "and the one before it as well",
                                      "and reverse the one before that too"};
    static const char *const NO[] = {"take a photo", "and the grid too", "one more photo", "",
                                     NULL};
    for (size_t i = 0; i < sizeof(YES) / sizeof(YES[0]); i++) {
        if (router_undo_followup(YES[i]) != 1) {
            fail_msg("followup(\"%s\") should be 1", YES[i]);
        }
    }
    for (size_t i = 0; i < sizeof(NO) / sizeof(NO[0]); i++) {
        if (router_undo_followup(NO[i]) != 0) {
            fail_msg("followup(\"%s\") should be 0", NO[i] != NULL ? NO[i] : "NULL");
        }
    }
    assert_true(router_undo_says_earlier("make the shape of the photo what it used to be"));
    assert_false(router_undo_says_earlier("make it brighter than before"));
    assert_true(router_undo_retraction("never mind"));
    assert_true(router_undo_retraction("oh, forget it please"));
    assert_false(router_undo_retraction("go back"));
    assert_false(router_undo_retraction("never mind the timer"));
    assert_false(router_undo_retraction(NULL));
    /* without an undo before it, "and that too" is no undo */
    assert_int_equal(router_undo_count("and that too"), 0);
    assert_int_equal(router_undo_count("one more"), 0);
}

/* "undo the blinds": an undo verb and a phrase naming what; the offset of the phrase. */
static void test_undo_named(void **state) {
    (void)state;
    static const struct {
        const char *said, *phrase; /* NULL: not a named undo */
    } cases[] = {
        {"undo the blinds", "the blinds"},
        {"oops, revert the zoom please", "the zoom"},
        {"please undo my timer.", "my timer"},
        /* a verb of restoring, the phrase, "back" or "to" an earlier state */
        {"hmm on second thoughts restore the flash to what it was", "the flash"},
        {"put the zoom back please", "the zoom"},
        {"set my timer back to how it was", "my timer"},
        {"set the timer back to 5", NULL}, /* a value, not an earlier state */
        {"turn the flash back on", NULL},
        {"put the kettle on", NULL},
        /* an adjective of the earlier state and the phrase */
        {"no wait, the previous camera please", "camera"},
        {"erm nope, previous format", "format"},
        {"the old white balance", "white balance"},
        {"previous", NULL},
        {"the previous one", NULL},                    /* router_undo_count()'s */
        {"eh ugly, previous colour please", "colour"}, /* after a clause that says why */
        {"hmm no, not green. the earlier colour", "colour"},
        /* the thing, then how it was better before */
        {"hmm, the blinds were better before", "the blinds"},
        {"the blinds were better", NULL},
        /* the phrase, then an earlier state right after it */
        {"The sky is completely blown out now, so I'd rather have the exposure as it was a minute "
         "ago",
         "the exposure"},
        {"ugh wrong one, gimme my old zoom", "zoom"},
        {"make the shape of the photo what it used to be", "the shape of the photo"},
        {"undo the kitchen light", "the kitchen light"},
        {"undo", NULL},                 /* router_undo_count()'s */
        {"undo the last change", NULL}, /* an undo object */
        {"undo the last two", NULL},    /* a count */
        {"undo the blinds, then lights on", NULL},
        {"undo all of the things I said today please", NULL}, /* too long a phrase */
        {"close the blinds", NULL},
        {NULL, NULL},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t len = 0, at = 0;
        const char *got =
            router_undo_named(NULL, cases[i].said, false, &at, &len) ? cases[i].said + at : NULL;
        if ((got == NULL) != (cases[i].phrase == NULL) ||
            (got != NULL &&
             (strncmp(got, cases[i].phrase, len) != 0 || len != strlen(cases[i].phrase)))) {
            fail_msg("router_undo_named(\"%s\") -> \"%.*s\"",
                     cases[i].said != NULL ? cases[i].said : "NULL", got != NULL ? (int)len : 6,
                     got != NULL ? got : "(none)");
        }
    }
    /* right after an undo, one more thing named: a conjunction before or "too" after */
    static const char *const MORE[][2] = {{"and the alarm too", "the alarm"},
                                          {"and reverse the directions too", "the directions"},
                                          {"the zoom as well please", "the zoom"},
                                          {"and the one before it", NULL},
                                          {"the alarm", NULL}};
    for (size_t i = 0; i < sizeof(MORE) / sizeof(MORE[0]); i++) {
        size_t len = 0, at = 0;
        bool found = router_undo_named(NULL, MORE[i][0], true, &at, &len);
        bool ok = MORE[i][1] == NULL ? !found
                                     : found && len == strlen(MORE[i][1]) &&
                                           strncmp(MORE[i][0] + at, MORE[i][1], len) == 0;
        if (!ok || router_undo_named(NULL, MORE[i][0], false, &at, &len)) {
            fail_msg("after an undo, router_undo_named(\"%s\") -> %zu", MORE[i][0], at);
        }
    }
}

static void test_undo_bounds(void **state) {
    (void)state;
    assert_false(router_is_undo(NULL));
    /* too long to be an undo, even if it starts like one */
    char big[ROUTER_MAX_INPUT + 100];
    memset(big, ' ', sizeof(big) - 1);
    memcpy(big, "undo", 4);
    big[sizeof(big) - 1] = '\0';
    assert_false(router_is_undo(big));
    /* a very long single word never matches and never overflows */
    memset(big, 'u', sizeof(big) - 1);
    assert_false(router_is_undo(big));
    /* many fillers are fine */
    assert_true(router_is_undo("please please please please please undo please please"));
}

/* ============================================================================
 * split */

struct split_case {
    const char *utterance;
    size_t max;
    size_t n;
    const char *seg[3];
};

static const struct split_case SPLIT_CASES[] = {
    /* must split */
    {"zoom in and turn on the flash", 3, 2, {"zoom in", "turn on the flash"}},
    {"night mode and a 3 second timer", 3, 2, {"night mode", "a 3 second timer"}},
    {"switch to the front camera, then take a photo",
     3,
     2,
     {"switch to the front camera", "take a photo"}},
    {"turn on the grid and set the timer to 10 seconds and take a picture",
     3,
     3,
     {"turn on the grid", "set the timer to 10 seconds", "take a picture"}},
    {"Zoom in, and turn on the flash.", 3, 2, {"Zoom in", "turn on the flash"}},
    {"Zoom in. Turn on the flash.", 3, 2, {"Zoom in", "Turn on the flash"}},
    {"zoom to 2x and then take a selfie", 3, 2, {"zoom to 2x", "take a selfie"}},
    {"turn off hdr; switch to portrait mode", 3, 2, {"turn off hdr", "switch to portrait mode"}},
    {"set aspect ratio to 16:9 plus turn on the grid",
     3,
     2,
     {"set aspect ratio to 16:9", "turn on the grid"}},
    {"make it brighter also lock focus", 3, 2, {"make it brighter", "lock focus"}},
    /* generic verbs any tool set uses */
    {"hide the grid and grab another one", 3, 2, {"hide the grid", "grab another one"}},
    {"pause the music and call mom", 3, 2, {"pause the music", "call mom"}},
    {"drop the timer and capture the waves", 3, 2, {"drop the timer", "capture the waves"}},
    {"take a picture of the sunset and make it brighter",
     3,
     2,
     {"take a picture of the sunset", "make it brighter"}},
    {"set white balance to daylight and exposure to +1",
     3,
     2,
     {"set white balance to daylight", "exposure to +1"}},
    {"zoom in and out and take a photo", 3, 2, {"zoom in and out", "take a photo"}},
    {"Turn on the flash and please take a photo",
     3,
     2,
     {"Turn on the flash", "please take a photo"}},
    {"zoom in and I want you to take a photo", 3, 2, {"zoom in", "I want you to take a photo"}},
    {"switch between cameras and take a photo", 3, 2, {"switch between cameras", "take a photo"}},
    {"undo that and zoom in", 3, 2, {"undo that", "zoom in"}},
    {"set exposure to 2.5 and after that take a photo",
     3,
     2,
     {"set exposure to 2.5", "take a photo"}},
    {"Zoom in \xE2\x80\x94 turn on the flash", 3, 2, {"Zoom in", "turn on the flash"}},
    /* more commands than segments: the tail stays in the last one */
    {"turn on the grid and set the timer to 10 seconds and take a picture",
     2,
     2,
     {"turn on the grid", "set the timer to 10 seconds and take a picture"}},
    {"zoom in and turn on the flash", 1, 1, {"zoom in and turn on the flash"}},
    {"zoom in, turn on the flash, set a timer, and take a photo",
     3,
     3,
     {"zoom in", "turn on the flash", "set a timer, and take a photo"}},
    /* must not split */
    {"take a photo", 3, 1, {"take a photo"}},
    /* a clause about the situation stays with its command (the model alone would guess) */
    {"turn on the grid lines, i frame with thirds",
     3,
     1,
     {"turn on the grid lines, i frame with thirds"}},
    {"set a 10 sec timer, i'll prop the phone on my pack and run into the shot",
     3,
     1,
     {"set a 10 sec timer, i'll prop the phone on my pack and run into the shot"}},
    {"i'll hold the camera steady, take the photo",
     3,
     1,
     {"i'll hold the camera steady, take the photo"}},
    /* ... but a wish is a request */
    {"zoom in and i want the flash on", 3, 2, {"zoom in", "i want the flash on"}},
    {"flash off and we need the grid", 3, 2, {"flash off", "we need the grid"}},
    {"  Take a photo, please!  ", 3, 1, {"Take a photo, please"}},
    {"set the filter to black and white", 3, 1, {"set the filter to black and white"}},
    {"switch to black and white mode", 3, 1, {"switch to black and white mode"}},
    {"too close, pull back", 3, 1, {"too close, pull back"}},
    {"lock exposure and focus", 3, 1, {"lock exposure and focus"}},
    {"lock focus and exposure, then take a photo",
     3,
     2,
     {"lock focus and exposure", "take a photo"}},
    {"ae and af lock", 3, 1, {"ae and af lock"}},
    {"zoom in and out", 3, 1, {"zoom in and out"}},
    {"play some rock and roll", 3, 1, {"play some rock and roll"}},
    {"take a photo of the salt and pepper", 3, 1, {"take a photo of the salt and pepper"}},
    {"set a timer between 3 and 5 seconds", 3, 1, {"set a timer between 3 and 5 seconds"}},
    {"zoom to one and a half x", 3, 1, {"zoom to one and a half x"}},
    {"turn the flash on and off", 3, 1, {"turn the flash on and off"}},
    {"record a video of me and my dog", 3, 1, {"record a video of me and my dog"}},
    {"call Tom and Jerry", 3, 1, {"call Tom and Jerry"}},
    {"hey, take a photo", 3, 1, {"hey, take a photo"}},
    {"okay and take a photo", 3, 1, {"okay and take a photo"}},
    {"if it's dark then turn on the flash", 3, 1, {"if it's dark then turn on the flash"}},
    {"what's the weather and the time", 3, 1, {"what's the weather and the time"}},
    {"take a photo and", 3, 1, {"take a photo and"}},
    {"and take a photo", 3, 1, {"and take a photo"}},
    {"set zoom to 2.5", 3, 1, {"set zoom to 2.5"}},
    {"set exposure to -1", 3, 1, {"set exposure to -1"}},
    {"zoom in...", 3, 1, {"zoom in"}},
    {"Café photo, s'il vous plaît", 3, 1, {"Café photo, s'il vous plaît"}},
    {"never mind the flash, take a photo", 3, 1, {"never mind the flash, take a photo"}},
    {"actually don't use the flash, just take a photo",
     3,
     1,
     {"actually don't use the flash, just take a photo"}},
    {"forget the timer and take a photo", 3, 1, {"forget the timer and take a photo"}},
    {"what's the weather, and take a photo", 3, 1, {"what's the weather, and take a photo"}},
    {"send a text to mom and dad", 3, 1, {"send a text to mom and dad"}},
    {"go ahead and take a photo", 3, 1, {"go ahead and take a photo"}},
    {"put it back and take a photo", 3, 2, {"put it back", "take a photo"}},
    /* a right side that switches what a left side without a verb named stays with it */
    {"actually I miss the grid, switch it on again",
     3,
     1,
     {"actually I miss the grid, switch it on again"}},
    {"the flash, turn it off", 3, 1, {"the flash, turn it off"}},
    {"zoom in, then turn it off", 3, 2, {"zoom in", "turn it off"}},
    /* a right side that is only a value (after a comma) is the value of a command that said
     * none: "zoom in on her face, 2.5x" is one request; "zoom to 2x, 3 second timer" two */
    {"zoom in on her face, 2.5x", 3, 1, {"zoom in on her face, 2.5x"}},
    {"zoom in, to 3x please", 3, 1, {"zoom in, to 3x please"}},
    {"zoom to 2x, 3 second timer", 3, 2, {"zoom to 2x", "3 second timer"}},
    {"zoom in and 2x", 3, 2, {"zoom in", "2x"}},
    {"the grid, and take a photo", 3, 2, {"the grid", "take a photo"}},
    /* "n" is "and" as people type it */
    {"turn off the flash n the timer", 3, 2, {"turn off the flash", "the timer"}},
    {"can you turn on the grid and then level the horizon?",
     3,
     2,
     {"can you turn on the grid", "level the horizon"}},
    /* nothing to say */
    {"", 3, 0, {NULL}},
    {"   ", 3, 0, {NULL}},
    {" ,;. ! ", 3, 0, {NULL}},
};

/* The router of tools/camera.json (the table's words come from it, not from router.c). */
static struct router *camera_router(struct pipit_toolset **ts) {
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/camera.json", ts, &err),
                     PIPIT_OK);
    struct router *r = router_new(*ts);
    assert_non_null(r);
    return r;
}

/* Follow-ups that name nothing (router_followup()): one follow-up phrase, fillers and commenting
 * clauses around it; nothing that names a tool, a verb's command or a number. */
static void test_followup_table(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct router *r = camera_router(&ts);
    static const struct {
        const char *say;
        enum router_followup kind;
    } CASES[] = {
        {"again", ROUTER_FOLLOWUP_AGAIN},
        {"one more please", ROUTER_FOLLOWUP_AGAIN},
        {"ok, another one", ROUTER_FOLLOWUP_AGAIN},
        {"someone's eyes were closed, another", ROUTER_FOLLOWUP_AGAIN},
        {"that failed too, retry it", ROUTER_FOLLOWUP_AGAIN},
        {"and another like that!", ROUTER_FOLLOWUP_AGAIN},
        {"can you do it again", ROUTER_FOLLOWUP_AGAIN},
        {"a bit more", ROUTER_FOLLOWUP_MORE},
        {"hmm, a little further please", ROUTER_FOLLOWUP_MORE},
        {"keep going", ROUTER_FOLLOWUP_MORE},
        {"the other way", ROUTER_FOLLOWUP_BACK},
        {"too much, the other way", ROUTER_FOLLOWUP_BACK},
        {"no, the other way", ROUTER_FOLLOWUP_BACK},
        {"a bit less", ROUTER_FOLLOWUP_BACK},
        {"that's too far", ROUTER_FOLLOWUP_BACK},
        {"fine, make it 10", ROUTER_FOLLOWUP_NUMBER},
        {"10 then", ROUTER_FOLLOWUP_NUMBER},
        /* a number with a word of preference after it (a new user's alarm: "eh 50 is better"
         * had gone to the cloud) */
        {"eh 50 is better", ROUTER_FOLLOWUP_NUMBER},
        {"nah, 45 is plenty", ROUTER_FOLLOWUP_NUMBER},
        {"50 is my lucky number", ROUTER_FOLLOWUP_NONE},
        {"ok try 5 instead", ROUTER_FOLLOWUP_NUMBER},
        {"change that to 3", ROUTER_FOLLOWUP_NUMBER},
        {"make it 2 seconds please", ROUTER_FOLLOWUP_NUMBER},
        {"no, 1.5", ROUTER_FOLLOWUP_NUMBER}, /* a correction before a bare number */
        {"actually 3x", ROUTER_FOLLOWUP_NUMBER},
        {"sorry, I meant 4", ROUTER_FOLLOWUP_NUMBER},
        /* a number in words */
        {"make it two", ROUTER_FOLLOWUP_NUMBER},
        {"ok seventy then", ROUTER_FOLLOWUP_NUMBER},
        {"make it twenty five", ROUTER_FOLLOWUP_NUMBER},
        {"make it one", ROUTER_FOLLOWUP_NUMBER},
        {"hmm, make it twelve hundred", ROUTER_FOLLOWUP_NUMBER},
        /* not follow-ups */
        {"5", ROUTER_FOLLOWUP_NONE},                    /* may answer a question */
        {"make it 3x and zoom", ROUTER_FOLLOWUP_NONE},  /* names the zoom */
        {"try one", ROUTER_FOLLOWUP_NONE},              /* "one" unled: a photo, maybe */
        {"no more", ROUTER_FOLLOWUP_NONE},              /* stops */
        {"zoom a bit more", ROUTER_FOLLOWUP_NONE},      /* names the zoom: the model reads it */
        {"take another photo", ROUTER_FOLLOWUP_NONE},   /* a command */
        {"flash on, again", ROUTER_FOLLOWUP_NONE},      /* a clause names the flash */
        {"make it 3, again", ROUTER_FOLLOWUP_NONE},     /* a number */
        {"too much, a bit more", ROUTER_FOLLOWUP_NONE}, /* they disagree */
        {"too much, down to 3 please", ROUTER_FOLLOWUP_NUMBER}, /* the number says how far */
        {"up to 22", ROUTER_FOLLOWUP_NUMBER},
        {"max it then", ROUTER_FOLLOWUP_MAX},
        {"ok, as low as it goes", ROUTER_FOLLOWUP_MIN},
        {"all the way out", ROUTER_FOLLOWUP_MIN},
        {"all the way back out", ROUTER_FOLLOWUP_MIN},
        {"one more for luck", ROUTER_FOLLOWUP_AGAIN},
        {"again just in case", ROUTER_FOLLOWUP_AGAIN},
        {"now all the way up", ROUTER_FOLLOWUP_MAX},
        {"zoom all the way out", ROUTER_FOLLOWUP_NONE}, /* names the zoom */
        {"max the zoom", ROUTER_FOLLOWUP_NONE},         /* names a tool */
        {"thanks", ROUTER_FOLLOWUP_NONE},               /* fillers only */
        {"more light please", ROUTER_FOLLOWUP_NONE},    /* more of something */
        {"take a photo, then again", ROUTER_FOLLOWUP_NONE},
        {"", ROUTER_FOLLOWUP_NONE},
        {NULL, ROUTER_FOLLOWUP_NONE},
    };
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        enum router_followup got = router_followup(r, CASES[i].say);
        if (got != CASES[i].kind) {
            fail_msg("router_followup(\"%s\") = %d, want %d",
                     CASES[i].say != NULL ? CASES[i].say : "NULL", (int)got, (int)CASES[i].kind);
        }
    }
    /* the generic lexicon: "turn" is a verb, so "turn it up, again" is no follow-up */
    assert_int_equal(router_followup(NULL, "turn it up, again"), ROUTER_FOLLOWUP_NONE);
    assert_int_equal(router_followup(NULL, "again please"), ROUTER_FOLLOWUP_AGAIN);
    char big[ROUTER_MAX_INPUT + 10];
    memset(big, ' ', sizeof(big) - 1);
    memcpy(big, "again", 5);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(router_followup(r, big), ROUTER_FOLLOWUP_NONE); /* over-long */
    router_free(r);
    pipit_toolset_free(ts);
}

static void test_split_table(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct router *r = camera_router(&ts);
    int failures = 0;
    for (size_t i = 0; i < sizeof(SPLIT_CASES) / sizeof(SPLIT_CASES[0]); i++) {
        const struct split_case *c = &SPLIT_CASES[i];
        char seg[3][ROUTER_MAX_SEGMENT];
        memset(seg, 0x55, sizeof(seg));
        size_t n = router_split_with(r, c->utterance, seg, c->max);
        bool ok = n == c->n;
        for (size_t k = 0; ok && k < n; k++) {
            ok = strcmp(seg[k], c->seg[k]) == 0;
        }
        if (!ok) {
            print_error("split(\"%s\", %zu) gave %zu:", c->utterance, c->max, n);
            for (size_t k = 0; k < n && k < 3; k++) {
                print_error(" [%s]", seg[k]);
            }
            print_error(", expected %zu\n", c->n);
            failures++;
        }
    }
    router_free(r);
    pipit_toolset_free(ts);
    assert_int_equal(failures, 0);
}

/* A remark after a command (router_remark_tail()): where it starts, or the length when the
 * words after the comma ask, name the tool set, say a number or ask a question. */
static void test_remark_tail(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct router *r = camera_router(&ts);
    static const struct {
        const char *say;
        const char *command; /* the segment less its remark */
    } CASES[] = {
        {"end the clip, song's done", "end the clip"},
        {"push exposure up by one stop, his grill is kinda dim", "push exposure up by one stop"},
        {"take a photo \xE2\x80\x94 the sun is perfect, so pretty", "take a photo"},
        {"flip to the front cam; i'll get us all in", "flip to the front cam"},
        /* kept whole */
        {"go macro, i wanna get right up close to it", NULL}, /* a wish */
        {"set the white balance, it's cloudy", NULL},         /* a value of the tool set */
        {"zoom in, like two and a half x", NULL},             /* a number */
        {"take the photo, don't use the flash", NULL},        /* a negation */
        {"take a photo, how does it look?", NULL},            /* a question */
        {"the dog is asleep, so cute", NULL},                 /* no command before it */
        {"take a photo, ok", NULL},                           /* one word */
        {"note this: take a photo, the sun is out", NULL},    /* words after a colon */
        {"take a photo", NULL},
    };
    for (size_t k = 0; k < sizeof(CASES) / sizeof(CASES[0]); k++) {
        size_t len = strlen(CASES[k].say), at = router_remark_tail(r, CASES[k].say);
        size_t want = CASES[k].command != NULL ? strlen(CASES[k].command) : len;
        while (at < len && at > want && CASES[k].say[at - 1] == ' ') {
            at--; /* the remark's mark may follow a space */
        }
        if (at != want) {
            fail_msg("\"%s\": remark at %zu, want %zu", CASES[k].say, at, want);
        }
    }
    assert_int_equal(router_remark_tail(r, NULL), 0);
    router_free(r);
    pipit_toolset_free(ts);
}

/* A remark that opens the text (router_remark_head()): where the command after it starts, or 0
 * when the first sentence asks, names the tool set, or no command follows. */
static void test_remark_head(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct router *r = camera_router(&ts);
    static const struct {
        const char *say, *command; /* NULL: none dropped */
    } CASES[] = {
        {"there's a tiny lizard on the rock! macro mode and zoom in a step",
         "macro mode and zoom in a step"},
        {"we're at the pitch, the game starts in 5 min. sports mode", "sports mode"},
        {"wow. take a photo", NULL},               /* one word */
        {"morning. take a photo", "take a photo"}, /* one word: a greeting */
        {"hi! zoom in", "zoom in"},
        {"it's too dark in here. fix it", NULL},        /* no command after it */
        {"the flash is too bright. turn it off", NULL}, /* a word of the tool set */
        {"i want it brighter! exposure up", NULL},      /* wanting */
        {"is the flash on? take a photo", NULL},        /* a question */
        {"take a photo. the light is great", NULL},     /* a command first */
    };
    for (size_t k = 0; k < sizeof(CASES) / sizeof(CASES[0]); k++) {
        size_t at = router_remark_head(r, CASES[k].say);
        const char *want = CASES[k].command;
        if (want == NULL ? at != 0 : strcmp(CASES[k].say + at, want) != 0) {
            fail_msg("\"%s\": command at %zu (\"%s\")", CASES[k].say, at, CASES[k].say + at);
        }
    }
    assert_int_equal(router_remark_head(r, NULL), 0);
    router_free(r);
    pipit_toolset_free(ts);
}

/* A correction (router_correction()): where what the person settled on starts, or 0. */
static void test_correction(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct router *r = camera_router(&ts);
    static const struct {
        const char *say, *settled; /* NULL: none */
    } CASES[] = {
        {"zoom in, no wait, zoom out", "zoom out"},
        {"flash on and grid on... no wait just the flash", "just the flash"},
        {"take a photo, actually make that a video", "make that a video"},
        {"flash on, i mean the grid", "the grid"},
        {"turn it on at noon... actually just turn it on now", NULL}, /* names nothing */
        {"actually zoom in", NULL},                                   /* nothing before it */
        {"no wait", NULL},
        {"the party was great, actually take a photo", NULL}, /* no command before it */
    };
    for (size_t k = 0; k < sizeof(CASES) / sizeof(CASES[0]); k++) {
        size_t at = router_correction(r, CASES[k].say);
        const char *want = CASES[k].settled;
        if (want == NULL ? at != 0 : strcmp(CASES[k].say + at, want) != 0) {
            fail_msg("\"%s\": settled at %zu (\"%s\")", CASES[k].say, at, CASES[k].say + at);
        }
    }
    assert_int_equal(router_correction(r, NULL), 0);
    router_free(r);
    pipit_toolset_free(ts);
}

static void test_split_misuse(void **state) {
    (void)state;
    char seg[3][ROUTER_MAX_SEGMENT];
    assert_int_equal(router_split(NULL, seg, 3), 0);
    assert_int_equal(router_split("zoom in", NULL, 3), 0);
    assert_int_equal(router_split("zoom in", seg, 0), 0);
}

/* Over-long input: only the first ROUTER_MAX_INPUT bytes count, segments are
 * cut to fit on a character boundary, nothing overflows (ASan/valgrind run
 * this too). */
static void test_split_bounds(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct router *r = camera_router(&ts);
    char seg[3][ROUTER_MAX_SEGMENT];

    /* one long command of multi-byte characters */
    char big[4096];
    size_t n = 0;
    memcpy(big, "take a photo of ", 16);
    n = 16;
    while (n + 2 < sizeof(big) - 1) {
        big[n++] = (char)0xC3; /* "é" */
        big[n++] = (char)0xA9;
    }
    big[n] = '\0';
    assert_int_equal(router_split_with(r, big, seg, 3), 1);
    size_t len = strlen(seg[0]);
    assert_true(len <= ROUTER_MAX_SEGMENT - 1);
    assert_true(len >= ROUTER_MAX_SEGMENT - 3);
    assert_int_equal((unsigned char)seg[0][len - 1], 0xA9); /* whole characters only */
    assert_memory_equal(seg[0], "take a photo of ", 16);

    /* a split whose second command starts after ROUTER_MAX_INPUT: ignored */
    memset(big, 'x', sizeof(big));
    memcpy(big, "zoom in ", 8);
    memcpy(big + 2000, " and turn on the flash", 22);
    big[2022] = '\0';
    for (size_t i = 8; i < 2000; i += 8) {
        big[i] = ' ';
    }
    assert_int_equal(router_split_with(r, big, seg, 3), 1);
    assert_true(strlen(seg[0]) <= ROUTER_MAX_SEGMENT - 1);
    assert_memory_equal(seg[0], "zoom in", 7);

    /* many separators: token cap reached, still bounded */
    n = 0;
    while (n + 25 < sizeof(big)) {
        memcpy(big + n, "zoom in and take a photo ", 25);
        n += 25;
    }
    big[n] = '\0';
    assert_int_equal(router_split_with(r, big, seg, 3), 3);
    assert_string_equal(seg[0], "zoom in");
    assert_string_equal(seg[1], "take a photo zoom in"); /* no separator between repeats */
    assert_true(strlen(seg[2]) <= ROUTER_MAX_SEGMENT - 1);

    /* a comma storm */
    memset(big, ',', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(router_split_with(r, big, seg, 3), 0);
    router_free(r);
    pipit_toolset_free(ts);
}

/* ============================================================================
 * configurable lexicon */

static void test_extra_lexicon(void **state) {
    (void)state;
    char seg[3][ROUTER_MAX_SEGMENT];
    const char *utt = "turn it up and dim the screen";
    /* "turn" and "dim" are generic verbs; "slow motion" is no generic keyword */
    assert_int_equal(router_split(utt, seg, 3), 2);
    assert_int_equal(router_split("zoom in and slow motion", seg, 3), 1);

    struct router *r = router_new(NULL);
    assert_non_null(r);
    struct pipit_error err;
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "Slow Motion", &err), PIPIT_OK);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "slow motion", &err), PIPIT_OK);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_VERB, "wave", &err), PIPIT_OK);
    assert_int_equal(router_split_with(r, "turn it up and slow motion", seg, 3), 2);
    assert_string_equal(seg[1], "slow motion");
    assert_int_equal(router_split_with(r, "turn it up and wave at me", seg, 3), 2);
    assert_int_equal(router_split("turn it up and wave at me", seg, 3), 1);
    /* "slow" alone is not the phrase */
    assert_int_equal(router_split_with(r, "turn it up and slow down", seg, 3), 1);
    /* NULL router: the generic lexicon */
    assert_int_equal(router_split_with(NULL, "turn it up and slow motion", seg, 3), 1);
    /* a pair: a lone "and" between its words joins them */
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "bass", &err), PIPIT_OK);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "treble", &err), PIPIT_OK);
    assert_int_equal(router_split_with(r, "turn up the bass and treble", seg, 3), 2);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_PAIR, "treble bass", &err), PIPIT_OK);
    assert_int_equal(router_split_with(r, "turn up the bass and treble", seg, 3), 1);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_PAIR, "bass", &err),
                     PIPIT_ERR_INVALID_ARG); /* a pair is two words */

    /* bad phrases */
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "", &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "router: "));
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "a b c d", &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "slow, motion", &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_int_equal(
        router_add_keyword(r, ROUTER_WORD_KEYWORD, "supercalifragilisticexpialidocious", &err),
        PIPIT_ERR_INVALID_ARG);
    assert_int_equal(router_add_keyword(r, (enum router_word_kind)7, "x", &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_int_equal(router_add_keyword(NULL, ROUTER_WORD_VERB, "x", &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_VERB, NULL, NULL), PIPIT_ERR_INVALID_ARG);

    /* capacity */
    int added = 5;
    for (int i = 0; added < ROUTER_MAX_KEYWORDS; i++, added++) {
        char w[16];
        snprintf(w, sizeof(w), "word%d", i);
        assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, w, &err), PIPIT_OK);
    }
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_KEYWORD, "one more", &err),
                     PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "too many keywords"));
    /* a duplicate is still fine when full */
    assert_int_equal(router_add_keyword(r, ROUTER_WORD_VERB, "wave", &err), PIPIT_OK);

    router_free(r);
    router_free(NULL);
}

/* ============================================================================
 * words from a tool set the tests invent */

/* A thermostat-and-music tool set: none of its words is in router.c. */
static const char *const THERMO_SPEC =
    "[{\"type\": \"function\", \"function\": {\"name\": \"set_temperature\", \"description\": "
    "\"Set the thermostat target\", \"parameters\": {\"type\": \"object\", \"properties\": "
    "{\"celsius\": {\"type\": \"number\", \"minimum\": 10, \"maximum\": 30}}, \"required\": "
    "[\"celsius\"]}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"set_fan\", \"description\": \"Set the "
    "fan speed\", \"parameters\": {\"type\": \"object\", \"properties\": {\"speed\": {\"type\": "
    "\"string\", \"enum\": [\"low\", \"medium\", \"high\", \"turbo\"]}}, \"required\": "
    "[\"speed\"]}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"skip_track\", \"description\": "
    "\"Skip to the next song\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"queue_playlist\", \"description\": "
    "\"Queue a playlist on the speaker\", \"parameters\": {\"type\": \"object\", \"properties\": "
    "{\"name\": {\"type\": \"string\"}, \"shuffle\": {\"type\": \"boolean\"}}, \"required\": "
    "[\"name\"]}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"set_eq\", \"description\": \"Set bass "
    "and treble, e.g. 3db\", \"parameters\": {\"type\": \"object\", \"properties\": {\"bass\": "
    "{\"type\": \"integer\"}, \"treble\": {\"type\": \"integer\"}}}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"process_with_cloud_llm\", "
    "\"description\": \"Hand the request to a larger cloud model\", \"parameters\": {\"type\": "
    "\"object\", \"properties\": {\"query\": {\"type\": \"string\"}}, \"required\": "
    "[\"query\"]}}}]";

static void test_toolset_words(void **state) {
    (void)state;
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(
        pipit_toolset_load_string(THERMO_SPEC, strlen(THERMO_SPEC), "thermo", &ts, &err), PIPIT_OK);
    struct router *r = router_new(ts);
    assert_non_null(r);
    struct pipit_toolset *cam_ts = NULL;
    struct router *cam = camera_router(&cam_ts);
    static const struct {
        const char *utterance;
        size_t n_thermo; /* segments with the thermostat's router */
        size_t n_plain;  /* with the generic lexicon only */
        size_t n_camera; /* with the camera's */
    } CASES[] = {
        /* nouns from tool names, descriptions, a one-argument enum */
        {"thermostat to 21 and the fan on turbo", 2, 1, 1},
        {"fan on high, then the thermostat to 19", 2, 1, 1},
        {"turbo and thermostat at 22", 2, 1, 1},
        {"the speaker, then the playlist", 2, 1, 1},
        /* verbs from tool names and descriptions ("skip", "queue") */
        {"skip this track and queue my jazz playlist", 2, 1, 1},
        {"please queue it and then play something calm", 2, 1, 1},
        /* a pair from a description: "bass and treble" is one phrase */
        {"set bass and treble to 4", 1, 1, 1},
        /* a number shape from a description ("3db") */
        {"the eq at +2db and 4db", 1, 1, 1},
        {"treble 2db, 5db", 2, 1, 1},
        /* camera words mean nothing here, and the reverse */
        {"night mode and a 3 second timer", 1, 1, 2},
        {"flash on, then portrait", 1, 1, 2},
        /* the cloud tool adds no words ("model", "request") */
        {"the model and the request", 1, 1, 1},
        /* a keyword right after a number is that number's unit, an argument's value: no
         * command of its own; the same word elsewhere still is one */
        {"thermostat up, 21 celsius", 1, 1, 1},
        {"the fan on turbo, like 22 celsius", 1, 1, 1},
        {"fan on turbo, celsius 21", 2, 1, 1},
        /* a description after a keyword stays whole */
        {"queue the playlist, the speaker is too quiet", 1, 1, 1},
        {"queue the playlist, I'm in the kitchen", 1, 1, 1}, /* a statement */
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        char seg[3][ROUTER_MAX_SEGMENT];
        size_t a = router_split_with(r, CASES[i].utterance, seg, 3);
        size_t b = router_split(CASES[i].utterance, seg, 3);
        size_t c = router_split_with(cam, CASES[i].utterance, seg, 3);
        if (a != CASES[i].n_thermo || b != CASES[i].n_plain || c != CASES[i].n_camera) {
            print_error("\"%s\": thermostat %zu, generic %zu, camera %zu; expected %zu %zu %zu\n",
                        CASES[i].utterance, a, b, c, CASES[i].n_thermo, CASES[i].n_plain,
                        CASES[i].n_camera);
            failures++;
        }
    }
    assert_int_equal(failures, 0);

    /* the words themselves */
    const char *words[256];
    size_t n_verbs = router_words(r, ROUTER_WORD_VERB, words, 256);
    bool skip = false;
    for (size_t i = 0; i < n_verbs && i < 256; i++) {
        skip = skip || strcmp(words[i], "skip") == 0;
        assert_true(strcmp(words[i], "hand") != 0); /* the cloud tool */
    }
    assert_true(skip);
    size_t n_keys = router_words(r, ROUTER_WORD_KEYWORD, words, 256);
    bool fan = false, fans = false, playlist = false, low = false, name = false;
    for (size_t i = 0; i < n_keys && i < 256; i++) {
        fan = fan || strcmp(words[i], "fan") == 0;
        fans = fans || strcmp(words[i], "fans") == 0;
        playlist = playlist || strcmp(words[i], "playlist") == 0;
        low = low || strcmp(words[i], "low") == 0;
        name = name || strcmp(words[i], "name") == 0;
        assert_true(strcmp(words[i], "cloud") != 0 && strcmp(words[i], "model") != 0);
    }
    assert_true(fan && fans && playlist);
    assert_false(low);  /* a generic adjective */
    assert_false(name); /* a parameter of a tool with several: a detail, not a command */
    assert_int_equal(router_words(NULL, ROUTER_WORD_VERB, NULL, 0), 0);

    /* the verb the agent quotes back ("I didn't queue my playlist"): the tool set's, and a
     * generic one */
    assert_int_equal(router_command_verb(r, "please queue my playlist"), 7);
    assert_int_equal(router_command_verb(NULL, "please queue my playlist"), ROUTER_NO_VERB);
    assert_int_equal(router_command_verb(NULL, "please skip this track"), 7);
    /* a question word is never a verb, even when an example opens with it (the phone's cloud
     * example "what's the time difference ...") */
    struct pipit_toolset *phone_ts = NULL;
    struct pipit_error perr;
    assert_int_equal(
        pipit_toolset_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", &phone_ts, &perr), PIPIT_OK);
    struct router *phone = router_new(phone_ts);
    assert_non_null(phone);
    assert_int_equal(router_command_verb(phone, "what's my alarm"), ROUTER_NO_VERB);
    assert_int_equal(router_command_verb(phone, "text Alice hi"), 0);
    router_free(phone);
    pipit_toolset_free(phone_ts);

    router_free(cam);
    pipit_toolset_free(cam_ts);
    router_free(r);
    pipit_toolset_free(ts);
}

/* A pack: its declared words add to the words of its tools. */
#define HIFI_FN0                                                                            \
    "{\"type\": \"function\", \"function\": {\"name\": \"set_level\", \"description\": "    \
    "\"Set how loud it plays\", \"parameters\": {\"type\": \"object\", \"properties\": "    \
    "{\"value\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 50}}, \"required\": " \
    "[\"value\"]}}"
#define HIFI_PK0                                                                                \
    ", \"pipit\": {\"effect\": {\"set\": {\"volume\": \"{value}\"}}, \"examples\": [{\"say\": " \
    "\"blast it at 40\", \"args\": {\"value\": 40}}, {\"say\": \"please hush it to 5\", "       \
    "\"args\": {\"value\": 5}}, {\"say\": \"louder today\", \"args\": {\"value\": 30}}]}"
#define HIFI_FN1                                                                                 \
    "{\"type\": \"function\", \"function\": {\"name\": \"tune\", \"description\": \"Tune in\", " \
    "\"parameters\": {\"type\": \"object\", \"properties\": {\"to\": {\"type\": \"string\", "    \
    "\"enum\": [\"jazz fm\", \"news\"]}}, \"required\": [\"to\"]}}"
#define HIFI_PK1 ", \"pipit\": {\"effect\": {\"set\": {\"station\": \"{to}\"}}}"

static const char *const HIFI_PACK =
    "{\"pipit\": {\"pack\": \"hifi\", \"state\": {"
    "\"volume\": {\"type\": \"integer\", \"initial\": 10, \"minimum\": 0, \"maximum\": 50, "
    "\"words\": {\"names\": \"loudness|sound level\", \"noun\": \"the volume\"}},"
    " \"station\": {\"type\": \"string\", \"initial\": \"news\"}},"
    " \"router\": {\"verbs\": [\"crank\"], \"nouns\": [\"radio\", \"wireless set\"]}},"
    " \"tools\": [" HIFI_FN0 HIFI_PK0 "}, " HIFI_FN1 HIFI_PK1 "}]}";

static const char *const HIFI_PLAIN = "[" HIFI_FN0 "}, " HIFI_FN1 "}]";

static void test_pack_words(void **state) {
    (void)state;
    struct pipit_toolset *pack = NULL;
    struct pipit_toolset *plain = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(HIFI_PACK, strlen(HIFI_PACK), "hifi", &pack, &err),
                     PIPIT_OK);
    assert_int_equal(
        pipit_toolset_load_string(HIFI_PLAIN, strlen(HIFI_PLAIN), "hifi-plain", &plain, &err),
        PIPIT_OK);
    struct router *rp = router_new(pack);
    struct router *rt = router_new(plain);
    assert_non_null(rp);
    assert_non_null(rt);
    static const struct {
        const char *utterance;
        size_t n_pack;  /* segments with the pack's words */
        size_t n_tools; /* with the words of its tools only */
    } CASES[] = {
        {"crank it and then tune in", 2, 1},     /* a declared verb */
        {"tune in, then the radio", 2, 1},       /* a declared noun */
        {"tune in and the wireless set", 2, 1},  /* a declared phrase */
        {"loudness at 30, then the news", 2, 1}, /* a state key's names, an enum value */
        {"loudness and the radio", 2, 1},        /* ... with no verb at all */
        {"the volume and the station", 2, 1},    /* the declared state keys */
        {"tune in and blast it", 2, 1},          /* the first verb of an example */
        {"tune in and hush", 2, 1},
        {"tune in and louder", 1, 1},
        /* "louder today": no verb's follower, no verb */ /* after its lead-in ("please") */
        {"the sound and the level", 1, 1},                /* a phrase's words are not keywords */
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        char seg[3][ROUTER_MAX_SEGMENT];
        size_t a = router_split_with(rp, CASES[i].utterance, seg, 3);
        size_t b = router_split_with(rt, CASES[i].utterance, seg, 3);
        if (a != CASES[i].n_pack || b != CASES[i].n_tools) {
            print_error("\"%s\": pack %zu, tools %zu; expected %zu %zu\n", CASES[i].utterance, a, b,
                        CASES[i].n_pack, CASES[i].n_tools);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    router_free(rp);
    router_free(rt);
    pipit_toolset_free(pack);
    pipit_toolset_free(plain);
    /* a word of when in a key's name ("fed_today") is no word of the tool set */
    static const char FEED[] =
        "{\"pipit\": {\"pack\": \"tank\", \"state\": {\"fed_today\": {\"type\": "
        "\"integer\", \"initial\": 0}}}, \"tools\": [{\"type\": \"function\", \"function\": "
        "{\"name\": \"feed_now\", \"description\": \"Feed the fish\", \"parameters\": "
        "{\"type\": \"object\", \"properties\": {}}}, \"pipit\": {\"effect\": {\"step\": "
        "{\"key\": \"fed_today\", \"by\": 1}}}}]}";
    struct pipit_toolset *feed = NULL;
    assert_int_equal(pipit_toolset_load_string(FEED, strlen(FEED), "tank", &feed, &err), PIPIT_OK);
    struct router *rf = router_new(feed);
    assert_non_null(rf);
    assert_false(router_has_tool_word(rf, "the rummynoses are schooling so nicely today"));
    assert_true(router_has_tool_word(rf, "have they been fed"));
    router_free(rf);
    pipit_toolset_free(feed);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_undo_table),     cmocka_unit_test(test_undo_count_table),
        cmocka_unit_test(test_undo_followup),  cmocka_unit_test(test_undo_named),
        cmocka_unit_test(test_undo_bounds),    cmocka_unit_test(test_split_table),
        cmocka_unit_test(test_remark_tail),    cmocka_unit_test(test_remark_head),
        cmocka_unit_test(test_correction),     cmocka_unit_test(test_split_misuse),
        cmocka_unit_test(test_followup_table), cmocka_unit_test(test_split_bounds),
        cmocka_unit_test(test_extra_lexicon),  cmocka_unit_test(test_toolset_words),
        cmocka_unit_test(test_pack_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
