/*
 * ask_claim.c - plain-text claims about the state checked against it (ask.h: ask_correct()).
 *
 * A claim: in one sentence, a key's alias followed by a copula ("is", "are", "'s", "set to")
 * and a value ("The zoom is 1x."), a boolean key as a predicate ("It's recording.", "It isn't
 * recording."), or a value before the alias and "is active/on" after it ("The front camera is
 * active."). A claim whose value differs from the state makes its sentence wrong, and the
 * sentence is replaced by the true one. The lexicon is ask.c's (ask_impl.h).
 */
#include "ask.h"
#include "ask_impl.h"
#include "status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Boolean words in claims. */
static const char *const TRUE_WORDS[] = {"on",     "enabled", "true",   "yes",
                                         "active", "locked",  "running"};

static const char *const FALSE_WORDS[] = {"off", "disabled", "false", "no", "inactive", "unlocked"};

/* Copulas between a key and its claimed value: "the zoom is 2x", "the zoom's at 2x", "the
 * timer is set to 3 seconds". */
static const char *const COPULAS[] = {"is", "are", "was", "s", "isnt", "arent", "wasnt"};

static const char *const AFTER_COPULA[] = {"now", "currently", "still",   "set",
                                           "to",  "at",        "already", "also"};

/* Before a boolean key used as a predicate: "it's recording", "we are recording". */
static const char *const PREDICATE_LEADS[] = {"is", "its",       "are", "were",  "am",
                                              "im", "currently", "now", "still", "s"};

static const char *const NEGATIONS[] = {"not", "isnt", "arent", "wasnt", "no"};

/* ============================================================================
 * claims */

enum claim {
    CLAIM_NONE = 0,
    CLAIM_RIGHT = 1,
    CLAIM_WRONG = 2,
};

static enum claim judge_bool(const json_t *v, bool claimed) {
    return json_is_boolean(v) && json_is_true(v) == claimed ? CLAIM_RIGHT : CLAIM_WRONG;
}

/* A claimed value at token p for `key` (after a copula): right, wrong or none. */
static enum claim judge_value(const struct ask_key *key,
                              const json_t *v,
                              const struct words_tok *t,
                              size_t n,
                              size_t p) {
    bool negated = false;
    if (p < n && ask_in_list(t[p].w, NEGATIONS, COUNT(NEGATIONS))) {
        negated = true;
        p++;
    }
    if (p >= n) {
        return CLAIM_NONE;
    }
    const char *w = t[p].w;
    switch (key->type) {
        case KEY_BOOL:
            if (ask_in_list(w, TRUE_WORDS, COUNT(TRUE_WORDS))) {
                return judge_bool(v, !negated);
            }
            if (ask_in_list(w, FALSE_WORDS, COUNT(FALSE_WORDS))) {
                return judge_bool(v, negated);
            }
            return CLAIM_NONE;
        case KEY_NUMBER: {
            double x;
            bool zero_word =
                key->dev != NULL && key->dev->zero != NULL && strcmp(w, key->dev->zero) == 0;
            const char *as = NULL;
            bool shown = ask_match_value_as(key, t, n, p, &as) > 0 && ask_parse_number(as, &x);
            if (negated || !json_is_number(v) ||
                (!shown && !ask_parse_number(w, &x) && !zero_word)) {
                return CLAIM_NONE;
            }
            if (zero_word && !shown) {
                x = 0;
            }
            double real = json_number_value(v);
            return fabs(real - x) <= 1e-9 * fmax(1.0, fabs(real)) ? CLAIM_RIGHT : CLAIM_WRONG;
        }
        case KEY_STRING: {
            const char *as = NULL;
            size_t m = ask_match_value_as(key, t, n, p, &as);
            if (m == 0 || as == NULL || !json_is_string(v)) {
                return CLAIM_NONE;
            }
            char real[VALUE_CAP];
            size_t nw = 0;
            if (!ask_normalize(json_string_value(v), real, sizeof(real), &nw)) {
                return CLAIM_NONE;
            }
            bool same = strcmp(as, real) == 0;
            /* "the flash isn't on" is wrong exactly when it is on */
            return same != negated ? CLAIM_RIGHT : CLAIM_WRONG;
        }
        case KEY_ARRAY:
        case KEY_OBJECT:
            break;
    }
    return CLAIM_NONE;
}

/* Judge every claim of one sentence (tokens t[0..n)); the keys it names go into keys[]. */
static enum claim judge_sentence(const struct ask *k,
                                 const json_t *state,
                                 const struct words_tok *t,
                                 size_t n,
                                 int *keys,
                                 size_t *n_keys,
                                 size_t max_keys) {
    enum claim worst = CLAIM_NONE;
    for (size_t i = 0; i < n;) {
        int key = -1;
        size_t m = ask_match_alias(k, t, n, i, &key);
        if (m == 0 || key < 0) {
            i += m > 0 ? m : 1;
            continue;
        }
        const struct ask_key *kk = &k->keys[key];
        const json_t *v = json_object_get(state, kk->name);
        enum claim c = CLAIM_NONE;
        /* "the zoom is 1x", "the timer is set to 3 seconds", "the flash isn't on" */
        size_t p = i + m;
        if (p < n && ask_in_list(t[p].w, COPULAS, COUNT(COPULAS))) {
            bool neg = strcmp(t[p].w, "isnt") == 0 || strcmp(t[p].w, "arent") == 0 ||
                       strcmp(t[p].w, "wasnt") == 0;
            p++;
            for (size_t s = 0;
                 s < 3 && p < n && ask_in_list(t[p].w, AFTER_COPULA, COUNT(AFTER_COPULA)); s++) {
                p++;
            }
            if (neg) {
                /* "isn't on": judge "not on" */
                struct words_tok nt[ASK_MAX_TOKENS];
                size_t nn = 0;
                nt[nn].kind = WORDS_WORD;
                pipit_format(nt[nn++].w, WORDS_CAP, "not");
                for (size_t q = p; q < n && nn < ASK_MAX_TOKENS; q++) {
                    nt[nn++] = t[q];
                }
                c = judge_value(kk, v, nt, nn, 0);
            } else {
                c = judge_value(kk, v, t, n, p);
                /* "the front camera is active": the value before the name */
                if (c == CLAIM_NONE && kk->type == KEY_STRING && i > 0 && p < n &&
                    (ask_tok_is(t, n, p, "active") || ask_tok_is(t, n, p, "on") ||
                     ask_tok_is(t, n, p, "selected") || ask_tok_is(t, n, p, "in"))) {
                    size_t b = i;
                    while (b > 0 && ask_match_value(kk, t, i, b - 1) == 0 && i - b < 3) {
                        b--;
                    }
                    if (b > 0 && ask_match_value(kk, t, i, b - 1) > 0) {
                        c = judge_value(kk, v, t, i, b - 1);
                    }
                }
            }
        }
        /* "it's recording", "we aren't recording", "not recording" */
        if (c == CLAIM_NONE && kk->type == KEY_BOOL && i > 0) {
            if (ask_in_list(t[i - 1].w, NEGATIONS, COUNT(NEGATIONS))) {
                c = judge_bool(v, false);
            } else if (ask_in_list(t[i - 1].w, PREDICATE_LEADS, COUNT(PREDICATE_LEADS))) {
                c = judge_bool(v, true);
            }
        }
        if (c != CLAIM_NONE) {
            bool seen = false;
            for (size_t j = 0; j < *n_keys; j++) {
                seen = seen || keys[j] == key;
            }
            if (!seen && *n_keys < max_keys) {
                keys[(*n_keys)++] = key;
            }
            worst = c > worst ? c : worst;
        }
        i += m;
    }
    return worst;
}

/* End of the sentence starting at s[b]: one past its terminator (".", "!", "?" not between
 * digits, or a newline), or len. */
static size_t sentence_end(const char *s, size_t b, size_t len) {
    for (size_t i = b; i < len; i++) {
        char c = s[i];
        if (c == '\n') {
            return i + 1;
        }
        if (c == '!' || c == '?' ||
            (c == '.' && !(i > 0 && i + 1 < len && ask_is_digit((unsigned char)s[i - 1]) &&
                           ask_is_digit((unsigned char)s[i + 1])))) {
            size_t e = i + 1;
            while (e < len && (s[e] == '.' || s[e] == '!' || s[e] == '?')) {
                e++;
            }
            return e;
        }
    }
    return len;
}

char *ask_correct(const struct ask *k, const char *text, const json_t *state, int *n_fixed) {
    int dummy = 0;
    if (n_fixed == NULL) {
        n_fixed = &dummy;
    }
    *n_fixed = 0;
    if (k == NULL || text == NULL || !json_is_object(state)) {
        return NULL;
    }
    size_t len = strlen(text);
    size_t cap = len + 1;
    char *out = NULL;
    size_t used = 0;
    size_t b = 0;
    while (b < len) {
        size_t e = sentence_end(text, b, len);
        struct words_tok t[ASK_MAX_TOKENS];
        size_t n = ask_tokenize(text + b, e - b, t, ASK_MAX_TOKENS);
        int keys[8];
        size_t n_keys = 0;
        char truth[1024] = "";
        size_t last = e;
        while (last > b && (text[last - 1] == ' ' || text[last - 1] == '\n')) {
            last--;
        }
        bool question = last > b && text[last - 1] == '?'; /* a question claims nothing */
        bool wrong = !question &&
                     judge_sentence(k, state, t, n, keys, &n_keys, COUNT(keys)) == CLAIM_WRONG &&
                     ask_say_keys(k, keys, n_keys, state, truth, sizeof(truth)) > 0;
        /* the text, with this sentence replaced when it was wrong (the whitespace around it
         * stays) */
        size_t lead = 0;
        size_t trail = 0;
        if (wrong) {
            while (b + lead < e && (text[b + lead] == ' ' || text[b + lead] == '\n')) {
                lead++;
            }
            while (e - trail > b + lead &&
                   (text[e - trail - 1] == ' ' || text[e - trail - 1] == '\n')) {
                trail++;
            }
        }
        size_t piece_len = wrong ? lead + strlen(truth) + trail : e - b;
        if (out == NULL || used + piece_len + 1 > cap) {
            size_t want = used + piece_len + 1;
            cap = want > cap * 2 ? want : cap * 2;
            char *grown = realloc(out, cap);
            if (grown == NULL) {
                free(out);
                *n_fixed = -1;
                return NULL;
            }
            out = grown;
        }
        if (wrong) {
            memcpy(out + used, text + b, lead);
            memcpy(out + used + lead, truth, strlen(truth));
            memcpy(out + used + lead + strlen(truth), text + e - trail, trail);
            (*n_fixed)++;
        } else {
            memcpy(out + used, text + b, e - b);
        }
        used += piece_len;
        out[used] = '\0';
        b = e;
    }
    if (*n_fixed == 0) {
        free(out);
        return NULL;
    }
    return out;
}
