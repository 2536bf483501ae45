/*
 * test-words.c - the tokenizer and phrase matcher shared by the router and the state
 * questions (src/words.c).
 */
#include "testutil.h"
#include "verbbank.h"
#include "words.h"

/* The words of `s` joined by "|", punctuation as itself. */
static void joined(const char *s, unsigned flags, char *out, size_t size) {
    struct words_tok t[32];
    size_t n = words_tokenize(s, strlen(s), flags, t, 32);
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        used += (size_t)snprintf(out + used, size - used, "%s%s", i > 0 ? "|" : "", t[i].w);
    }
}

static void test_word_tokens(void **state) {
    (void)state;
    static const struct {
        const char *in;
        unsigned flags;
        const char *out;
    } CASES[] = {
        {"Don't  STOP", 0, "dont|stop"},
        {"don\xE2\x80\x99t stop", 0, "dont|stop"},   /* curly apostrophe */
        {"\xE2\x80\x9Cundo\xE2\x80\x9D", 0, "undo"}, /* curly quotes are spaces */
        {"zoom 2.5x, 16:9 and 1,000", 0, "zoom|2.5x|16:9|and|1,000"},
        {"zoom 2.5x, then stop", WORDS_PUNCTUATION, "zoom|2.5x|,|then|stop"},
        {"wait\xE2\x80\xA6 no \xE2\x80\x94 yes", WORDS_PUNCTUATION, "wait|.|no|-|yes"},
        {"wi-fi auto-focus", 0, "wi-fi|auto-focus"},
        {"exposure to -1", 0, "exposure|to|1"},
        {"exposure to -1", WORDS_SIGNS, "exposure|to|-1"},
        {"e-1 (x) [y]", WORDS_SIGNS, "e-1|x|y"},
        {"Caf\xC3\xA9 ol\xC3\xA9", 0, "caf\xC3\xA9|ol\xC3\xA9"},
        /* text-speak reads as the word; a word that only starts so stays */
        {"r the doors locked rn?", 0, "are|the|doors|locked|now"},
        {"can U lock it plz, thx", 0, "can|you|lock|it|please|thanks"},
        {"u-turn r2 ur", 0, "u-turn|r2|your"},
        {"", 0, ""},
    };
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        char got[256];
        joined(CASES[i].in, CASES[i].flags, got, sizeof(got));
        if (strcmp(got, CASES[i].out) != 0) {
            print_error("\"%s\": got \"%s\", expected \"%s\"\n", CASES[i].in, got, CASES[i].out);
        }
        assert_string_equal(got, CASES[i].out);
    }
    /* a word over the cap is a token that matches nothing */
    struct words_tok t[4];
    const char *s = "a supercalifragilisticexpialidocious b";
    assert_int_equal(words_tokenize(s, strlen(s), 0, t, 4), 3);
    assert_string_equal(t[1].w, "");
    assert_int_equal(t[1].start, 2);
    /* the span is what was typed: a message keeps "u" */
    const char *ts = "tell him u r late";
    assert_int_equal(words_tokenize(ts, strlen(ts), 0, t, 4), 4);
    assert_string_equal(t[2].w, "you");
    assert_int_equal(t[2].end - t[2].start, 1);
    /* the token cap */
    assert_int_equal(words_tokenize("a b c d e", 9, 0, t, 4), 4);
}

static void test_word_match(void **state) {
    (void)state;
    struct words_tok t[16];
    const char *s = "Set the White Balance, please";
    size_t n = words_tokenize(s, strlen(s), WORDS_PUNCTUATION, t, 16);
    assert_int_equal(n, 6);
    assert_int_equal(words_match(t, n, 2, "white balance"), 2);
    assert_int_equal(words_match(t, n, 3, "balance please"), 0); /* across a comma */
    assert_int_equal(words_match(t, 3, 2, "white balance"), 0);  /* past the end */
    static const char *const LIST[] = {"the", "the white", "the white balance"};
    assert_int_equal(words_match_any(t, n, 1, LIST, 3), 1);
    assert_int_equal(words_match_longest(t, n, 1, LIST, 3), 3);
    assert_true(words_is(t, n, 0, "set"));
    assert_false(words_is(t, n, 9, "set"));
    assert_true(words_in_list("the", LIST, 3));
    assert_int_equal(words_count("white balance"), 2);

    char out[32];
    size_t nw = 0;
    assert_true(words_normalize("  Slow  Motion ", 3, out, sizeof(out), &nw));
    assert_string_equal(out, "slow motion");
    assert_int_equal(nw, 2);
    assert_false(words_normalize("slow, motion", 3, out, sizeof(out), &nw));
    assert_false(words_normalize("a b c d", 3, out, sizeof(out), &nw));
    assert_false(words_normalize("", 3, out, sizeof(out), &nw));
    assert_false(words_normalize("a much longer phrase", 3, out, 8, &nw));

    assert_true(words_contains("Target water Temperature", "temperature"));
    assert_false(words_contains("Target water", "temperature"));
    assert_false(words_contains(NULL, "temperature"));
    assert_false(words_contains("temperature", ""));

    bool cut = false;
    assert_int_equal(words_bounded_len("abc", 8, &cut), 3);
    assert_false(cut);
    assert_int_equal(words_bounded_len("ab\xC3\xA9", 3, &cut), 2); /* never half a character */
    assert_true(cut);
}

/* Comparatives of setting adjectives, and nouns that only end like one. */
static void test_comparative(void **state) {
    (void)state;
    static const char *const YES[] = {"brighter", "dimmer",  "closer", "easier",
                                      "warmest",  "quieter", "bigger", "lower"};
    static const char *const NO[] = {"filter", "water", "timer", "shutter", "printer",
                                     "never",  "after", "other", "er",      "best"};
    for (size_t i = 0; i < sizeof(YES) / sizeof(YES[0]); i++) {
        if (!words_is_comparative(YES[i])) {
            fail_msg("%s should be a comparative", YES[i]);
        }
    }
    for (size_t i = 0; i < sizeof(NO) / sizeof(NO[0]); i++) {
        if (words_is_comparative(NO[i])) {
            fail_msg("%s should not be a comparative", NO[i]);
        }
    }
    assert_false(words_is_comparative(NULL));
}

/* The verbs people say for a verb (verbbank.h): "text" for "tell", never the verb for itself
 * or a word outside the bank. */
static void test_verbbank_says(void **state) {
    (void)state;
    assert_true(verbbank_says("tell", "text"));
    assert_true(verbbank_says("tell", "message"));
    assert_true(verbbank_says("snap", "grab"));
    /* phrasal verbs of starting and stopping (a treadmill's "fire it up", "shut it down" had
     * gone to its incline's up and down) */
    assert_true(verbbank_says("start", "fire up"));
    assert_true(verbbank_says("stop", "shut down"));
    assert_true(verbbank_says("stop", "kill"));
    /* uploading is sharing, labelling is naming (a treadmill's "upload the workout" had started
     * the belt) */
    assert_true(verbbank_says("share", "upload"));
    assert_true(verbbank_says("name", "label"));
    assert_false(verbbank_says("tell", "tell"));
    assert_false(verbbank_says("tell", "navigate"));
    assert_false(verbbank_says("xyzzy", "text"));
    assert_false(verbbank_says(NULL, "text"));
}

/* A word of a tool's or key's name, split at '_', '-', '.' and ' ', case aside. */
static void test_name_has(void **state) {
    (void)state;
    /* a word of a text, or the plural of the other (four letters or more) */
    assert_true(words_text_has("Save a pic of this", "pic"));
    assert_true(words_text_has("save a pic of this", "pics"));
    assert_true(words_text_has("Minutes until it stops", "minute"));
    assert_false(words_text_has("save a pic", "pi"));
    assert_false(words_text_has("a bus stop", "bu"));
    assert_false(words_text_has(NULL, "pic"));
    assert_true(words_name_has("set_quality_priority", "quality", 7));
    assert_true(words_name_has("get_ticket_status", "STATUS", 6));
    assert_true(words_name_has("end-navigation", "navigation", 10));
    assert_false(words_name_has("set_quality_priority", "qual", 4));
    assert_false(words_name_has("set_zoom", "zoom_in", 7));
    assert_false(words_name_has(NULL, "zoom", 4));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_has),    cmocka_unit_test(test_verbbank_says),
        cmocka_unit_test(test_word_tokens), cmocka_unit_test(test_word_match),
        cmocka_unit_test(test_comparative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
