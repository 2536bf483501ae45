/*
 * ask_impl.h - the key lexicon shared by the two halves of ask: questions and sentences
 * (ask.c) and claims in plain text (ask_claim.c). Internal to them.
 */
#ifndef PIPIT_ASK_IMPL_H
#define PIPIT_ASK_IMPL_H

#include "ask.h"
#include "words.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PHRASE_CAP 64 /* bytes per alias phrase */
#define MAX_VALUES 24 /* values remembered per string key */
#define VALUE_CAP  48

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ============================================================================
 * the lexicon */

enum key_type {
    KEY_BOOL = 0,
    KEY_NUMBER = 1,
    KEY_STRING = 2,
    KEY_ARRAY = 3,
    KEY_OBJECT = 4,
};

struct ask_key {
    char name[PIPIT_TOOLSPEC_MAX_NAME + 1];
    enum key_type type;
    char words[PHRASE_CAP];             /* "white balance", "timer" */
    const struct device_key_words *dev; /* NULL: none */
    size_t n_values;
    char values[MAX_VALUES][VALUE_CAP]; /* string keys: values a sentence may claim, lowercase */
    const char *tmpl;                   /* the setter's success template when it says the state
                                           ("The flash is {mode:auto=on auto}."), else NULL;
                                           borrowed from the tool set */
    char param[PIPIT_TOOLSPEC_MAX_NAME + 1]; /* the setter's one argument */
    bool shown;                              /* the pack's state line shows it ("show": a label) */
    size_t n_shows;
    char show_text[MAX_VALUES][VALUE_CAP];  /* how the template shows a value ("on auto") */
    char show_value[MAX_VALUES][VALUE_CAP]; /* ... that value ("auto", "0") */
};

struct ask_alias {
    char phrase[PHRASE_CAP]; /* lowercase words joined by one space */
    int key;                 /* index into keys; -1: two keys claim it (names neither) */
    uint64_t shared;         /* key == -1: the keys that claim it, one bit each */
    int rank;
    size_t n_words;
};

struct ask {
    struct ask_key keys[ASK_MAX_KEYS];
    size_t n_keys;
    struct ask_alias aliases[ASK_MAX_ALIASES];
    size_t n_aliases;
};

/* Shared helpers (ask.c). */
bool ask_is_digit(unsigned char c);
size_t ask_tokenize(const char *s, size_t len, struct words_tok *out, size_t max);
bool ask_tok_is(const struct words_tok *t, size_t n, size_t i, const char *w);
bool ask_in_list(const char *w, const char *const *list, size_t n_list);
bool ask_parse_number(const char *w, double *out);
bool ask_normalize(const char *phrase, char *out, size_t size, size_t *n_words);
size_t
ask_match_alias(const struct ask *k, const struct words_tok *t, size_t n, size_t i, int *key);
size_t ask_match_value_as(const struct ask_key *key,
                          const struct words_tok *t,
                          size_t n,
                          size_t i,
                          const char **as);
size_t ask_match_value(const struct ask_key *key, const struct words_tok *t, size_t n, size_t i);
int ask_say_keys(const struct ask *k,
                 const int *keys,
                 size_t n_keys,
                 const json_t *state,
                 char *buf,
                 size_t size);

#endif /* PIPIT_ASK_IMPL_H */
