/*
 * words.c - the shared word tokenizer and phrase matcher (words.h).
 *
 * One walk over the bytes: spaces and symbols are skipped, typographic marks (UTF-8
 * "E2 80 xx": curly quotes, dashes, the ellipsis, special spaces) never start or continue a
 * word, and a word runs over letters, digits and non-ASCII characters, through inner
 * apostrophes (dropped), through "." ":" "," between digits and "-" between letters or digits.
 */
#include "words.h"

#include "utf8.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

static bool is_alnum(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char to_lower(unsigned char c) {
    return (char)((c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c);
}

/* A typographic mark "E2 80 xx" at s[i]: xx, else 0. */
static unsigned char typo_mark(const char *s, size_t i, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    if (i + 2 < len && u[i] == 0xE2 && u[i + 1] == 0x80 && u[i + 2] >= 0x80 && u[i + 2] <= 0xBF) {
        return u[i + 2];
    }
    return 0;
}

/* An apostrophe at s[i] ("'" or a curly single quote): true with *width its bytes. */
static bool apostrophe_at(const char *s, size_t i, size_t len, size_t *width) {
    unsigned char m = typo_mark(s, i, len);
    if (s[i] == '\'') {
        *width = 1;
        return true;
    }
    if (m == 0x98 || m == 0x99) {
        *width = 3;
        return true;
    }
    return false;
}

/* A byte that starts or continues a word: an ASCII letter or digit, or a non-ASCII byte that
 * does not start a typographic mark. */
static bool word_byte(const char *s, size_t i, size_t len) {
    unsigned char c = (unsigned char)s[i];
    if (is_alnum(c)) {
        return true;
    }
    return c >= 0x80 && typo_mark(s, i, len) == 0;
}

static void put(struct words_tok *t, size_t *n, bool *too_long, char c) {
    if (*n + 1 < sizeof(t->w)) {
        t->w[(*n)++] = c;
    } else {
        *too_long = true;
    }
}

/* Text-speak a person types for a common word ("r we armed rn?", "can u lock it"): the
 * token reads as the word, its span stays what was typed (a message keeps "u"). */
static void spell_out(struct words_tok *t) {
    static const char *const SHORT[][2] = {
        {"r", "are"},      {"u", "you"},      {"ur", "your"},   {"rn", "now"},
        {"plz", "please"}, {"thx", "thanks"}, {"abt", "about"}, {"cuz", "because"},
    };
    for (size_t i = 0; i < sizeof(SHORT) / sizeof(SHORT[0]); i++) {
        if (strcmp(t->w, SHORT[i][0]) == 0) {
            strcpy(t->w, SHORT[i][1]);
            return;
        }
    }
}

/* Scan the word that starts at s[i] into t; returns the byte after it. */
static size_t scan_word(const char *s, size_t i, size_t len, struct words_tok *t) {
    size_t n = 0;
    bool too_long = false;
    if (s[i] == '-' || s[i] == '+') { /* a sign (WORDS_SIGNS, checked by the caller) */
        put(t, &n, &too_long, s[i]);
        i++;
    }
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t w = 0;
        if (word_byte(s, i, len)) {
            size_t clen = 1; /* a multi-byte character is taken whole */
            if (c >= 0xC0) {
                while (i + clen < len && ((unsigned char)s[i + clen] & 0xC0) == 0x80 && clen < 4) {
                    clen++;
                }
            }
            for (size_t k = 0; k < clen; k++) {
                put(t, &n, &too_long, to_lower((unsigned char)s[i + k]));
            }
            i += clen;
        } else if (apostrophe_at(s, i, len, &w) && i + w < len && word_byte(s, i + w, len) &&
                   !is_digit((unsigned char)s[i + w])) {
            i += w; /* "don't" -> "dont" */
        } else if ((c == '.' || c == ':' || c == ',') && i > 0 &&
                   is_digit((unsigned char)s[i - 1]) && i + 1 < len &&
                   is_digit((unsigned char)s[i + 1])) {
            put(t, &n, &too_long, (char)c); /* "2.5", "16:9", "1,000" */
            i++;
        } else if (c == '-' && i > 0 && is_alnum((unsigned char)s[i - 1]) && i + 1 < len &&
                   is_alnum((unsigned char)s[i + 1])) {
            put(t, &n, &too_long, '-'); /* "auto-focus", "wi-fi" */
            i++;
        } else {
            break;
        }
    }
    t->w[too_long ? 0 : n] = '\0';
    return i;
}

size_t
words_tokenize(const char *s, size_t len, unsigned flags, struct words_tok *out, size_t max) {
    size_t n = 0;
    size_t i = 0;
    bool punct = (flags & WORDS_PUNCTUATION) != 0;
    while (s != NULL && i < len && n < max) {
        unsigned char c = (unsigned char)s[i];
        unsigned char m = typo_mark(s, i, len);
        struct words_tok *t = &out[n];
        bool sign = (flags & WORDS_SIGNS) != 0 && (c == '-' || c == '+') && i + 1 < len &&
                    is_digit((unsigned char)s[i + 1]) &&
                    (i == 0 || !is_alnum((unsigned char)s[i - 1]));
        if (is_space(c)) {
            i++;
        } else if (m == 0xA6 || m == 0x93 || m == 0x94) { /* ellipsis, en and em dash */
            if (punct) {
                t->start = i;
                t->end = i + 3;
                t->kind = WORDS_PUNCT;
                t->w[0] = m == 0xA6 ? '.' : '-';
                t->w[1] = '\0';
                n++;
            }
            i += 3;
        } else if (m != 0) { /* quotes and other marks outside words */
            i += 3;
        } else if (sign || word_byte(s, i, len)) {
            t->start = i;
            t->kind = WORDS_WORD;
            i = scan_word(s, i, len, t);
            t->end = i;
            spell_out(t);
            n++;
        } else if (c == ',' || c == ';' || c == '.' || c == '!' || c == '?' || c == ':') {
            if (punct) {
                t->start = i;
                t->end = i + 1;
                t->kind = WORDS_PUNCT;
                t->w[0] = (char)c;
                t->w[1] = '\0';
                n++;
            }
            i++;
        } else {
            i++; /* quotes, brackets, other symbols */
        }
    }
    return n;
}

size_t words_bounded_len(const char *s, size_t max, bool *too_long) {
    size_t n = 0;
    while (n < max && s[n] != '\0') {
        n++;
    }
    bool cut = s[n] != '\0';
    if (cut) {
        n = utf8_boundary(s, n);
    }
    if (too_long != NULL) {
        *too_long = cut;
    }
    return n;
}

bool words_is(const struct words_tok *t, size_t n, size_t i, const char *w) {
    return i < n && t[i].kind == WORDS_WORD && strcmp(t[i].w, w) == 0;
}

size_t words_match(const struct words_tok *t, size_t n, size_t i, const char *phrase) {
    size_t k = 0;
    const char *p = phrase;
    while (*p != '\0') {
        const char *sp = strchr(p, ' ');
        size_t wl = sp != NULL ? (size_t)(sp - p) : strlen(p);
        if (i + k >= n || t[i + k].kind != WORDS_WORD) {
            return 0;
        }
        const char *w = t[i + k].w;
        if (strlen(w) != wl || memcmp(w, p, wl) != 0) {
            return 0;
        }
        k++;
        p += wl;
        if (*p == ' ') {
            p++;
        }
    }
    return k;
}

size_t words_match_any(const struct words_tok *t,
                       size_t n,
                       size_t i,
                       const char *const *list,
                       size_t n_list) {
    for (size_t k = 0; k < n_list; k++) {
        size_t m = words_match(t, n, i, list[k]);
        if (m > 0) {
            return m;
        }
    }
    return 0;
}

size_t words_match_longest(const struct words_tok *t,
                           size_t n,
                           size_t i,
                           const char *const *list,
                           size_t n_list) {
    size_t best = 0;
    for (size_t k = 0; k < n_list; k++) {
        size_t m = words_match(t, n, i, list[k]);
        if (m > best) {
            best = m;
        }
    }
    return best;
}

bool words_in_list(const char *w, const char *const *list, size_t n_list) {
    for (size_t k = 0; k < n_list; k++) {
        if (strcmp(w, list[k]) == 0) {
            return true;
        }
    }
    return false;
}

size_t words_count(const char *phrase) {
    size_t n = 1;
    for (const char *p = phrase; *p != '\0'; p++) {
        n += *p == ' ';
    }
    return n;
}

bool words_normalize(const char *text, size_t max_words, char *out, size_t size, size_t *n_words) {
    struct words_tok t[8];
    size_t cap = max_words < 8 ? max_words + 1 : 8;
    size_t n = words_tokenize(text, text != NULL ? strlen(text) : 0, WORDS_PUNCTUATION, t, cap);
    size_t used = 0;
    if (size == 0) {
        return false;
    }
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t wl = strlen(t[i].w);
        if (t[i].kind != WORDS_WORD || wl == 0 || used + wl + 2 > size) {
            out[0] = '\0';
            return false;
        }
        if (used > 0) {
            out[used++] = ' ';
        }
        memcpy(out + used, t[i].w, wl + 1);
        used += wl;
    }
    if (n_words != NULL) {
        *n_words = n;
    }
    return n > 0 && n <= max_words;
}

static const char *const TOOL_VERBS[] = {
    "set",     "get",    "adjust", "switch", "take",   "toggle", "enable", "disable",
    "change",  "update", "start",  "stop",   "turn",   "do",     "make",   "process",
    "with",    "to",     "cancel", "create", "append", "add",    "remove", "delete",
    "tap",     "read",   "find",   "open",   "close",  "send",   "share",  "search",
    "request", "show",   "list",   "play",   "pause",  "resume", "skip",   "activate",
    "record",  "check",  "query",  "lookup", "fetch",  "run",    "use",    "is",
    "the",     "a",      "of",     "for",    "and",    "or",     "by",     "from",
};

bool words_is_tool_verb(const char *w) {
    return words_in_list(w, TOOL_VERBS, sizeof(TOOL_VERBS) / sizeof(TOOL_VERBS[0]));
}

bool words_number_value(const char *w, int *value) {
    static const char *const SMALL[] = {
        "zero",     "one",     "two",     "three",     "four",     "five",     "six",
        "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen",
        "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"};
    static const char *const TENS[] = {"thirty",  "forty",  "fifty",  "sixty",
                                       "seventy", "eighty", "ninety", "hundred"};
    for (size_t i = 0; w != NULL && i < sizeof(SMALL) / sizeof(SMALL[0]); i++) {
        if (strcmp(w, SMALL[i]) == 0) {
            *value = (int)i;
            return true;
        }
    }
    for (size_t i = 0; w != NULL && i < sizeof(TENS) / sizeof(TENS[0]); i++) {
        if (strcmp(w, TENS[i]) == 0) {
            *value = 30 + 10 * (int)i;
            return true;
        }
    }
    return false;
}

bool words_vowel_sound(const char *w) {
    static const char *const SAID_YOU[] = {"uni", "use", "usu",  "uti", "ura", "uro",
                                           "eu",  "one", "once", "ubi", "uk"};
    char c = (char)tolower((unsigned char)w[0]);
    bool vowel = c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u';
    for (size_t k = 0; vowel && k < sizeof(SAID_YOU) / sizeof(SAID_YOU[0]); k++) {
        vowel = strncasecmp(w, SAID_YOU[k], strlen(SAID_YOU[k])) != 0;
    }
    return vowel;
}

bool words_contains(const char *text, const char *mark) {
    size_t lm = mark != NULL ? strlen(mark) : 0;
    for (const char *p = text; p != NULL && lm > 0 && *p != '\0'; p++) {
        size_t i = 0;
        while (i < lm && p[i] != '\0' && tolower((unsigned char)p[i]) == mark[i]) {
            i++;
        }
        if (i == lm) {
            return true;
        }
    }
    return false;
}

bool words_is_comparative(const char *w) {
    static const char *const ADJ[] = {
        "bright", "dark",  "dim",   "warm",  "cool",  "cold",   "hot",    "loud",  "quiet",
        "soft",   "fast",  "slow",  "quick", "high",  "low",    "big",    "small", "wide",
        "close",  "near",  "far",   "long",  "short", "strong", "weak",   "light", "heavy",
        "sharp",  "deep",  "tight", "loose", "thick", "thin",   "clear",  "large", "tiny",
        "early",  "late",  "easy",  "busy",  "noisy", "hard",   "gentle", "rich",  "mild",
        "fine",   "nice",  "safe",  "calm",  "dry",   "wet",    "full",   "old",   "new",
        "young",  "fresh", "clean", "dirty", "cheap", "soon",   "great",  "good",  "bad"};
    size_t l = w != NULL ? strlen(w) : 0;
    size_t cut = l > 4 && strcmp(w + l - 2, "er") == 0    ? 2
                 : l > 5 && strcmp(w + l - 3, "est") == 0 ? 3
                                                          : 0;
    if (cut == 0 || l - cut >= 32) {
        return false;
    }
    char stem[40];
    size_t s = l - cut;
    memcpy(stem, w, s);
    stem[s] = '\0';
    for (int form = 0; form < 4; form++) {
        char c[40];
        memcpy(c, stem, s + 1);
        if (form == 1 && s >= 2 && stem[s - 1] == stem[s - 2]) {
            c[s - 1] = '\0'; /* "dimmer" -> "dim", "bigger" -> "big" */
        } else if (form == 2 && s + 1 < sizeof(c)) {
            c[s] = 'e'; /* "closer" -> "close" */
            c[s + 1] = '\0';
        } else if (form == 3 && s >= 1 && stem[s - 1] == 'i') {
            c[s - 1] = 'y'; /* "easier" -> "easy" */
        } else if (form != 0) {
            continue;
        }
        for (size_t k = 0; k < sizeof(ADJ) / sizeof(ADJ[0]); k++) {
            if (strcmp(c, ADJ[k]) == 0) {
                return true;
            }
        }
    }
    return false;
}

bool words_text_has(const char *text, const char *w) {
    size_t lw = strlen(w);
    for (const char *p = text; p != NULL && *p != '\0';) {
        while (*p != '\0' && !isalpha((unsigned char)*p)) {
            p++;
        }
        const char *s = p;
        while (isalpha((unsigned char)*p)) {
            p++;
        }
        size_t l = (size_t)(p - s);
        if (l > 0 &&
            (l == lw || (lw > 3 && l + 1 == lw && w[lw - 1] == 's') ||
             (lw > 3 && lw + 1 == l && s[l - 1] == 's')) &&
            strncasecmp(s, w, l < lw ? l : lw) == 0) {
            return true;
        }
    }
    return false;
}

bool words_name_has(const char *name, const char *w, size_t len) {
    for (const char *p = name; p != NULL && w != NULL && *p != '\0';) {
        size_t l = strcspn(p, "_-. ");
        if (l == len && strncasecmp(p, w, len) == 0) {
            return true;
        }
        p += l;
        p += *p != '\0';
    }
    return false;
}
