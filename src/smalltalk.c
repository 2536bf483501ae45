/*
 * smalltalk.c - social turns the harness answers itself (smalltalk.h).
 */
#include "smalltalk.h"

#include "status.h"
#include "words.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define COUNT(a)      (sizeof(a) / sizeof((a)[0]))
#define MAX_TOKENS    24 /* small talk is short: a longer utterance is something else */
#define MAX_LIKING    7  /* words of a clause that likes a thing of the tool set */
#define MAX_HELP_TAIL 4  /* words after "what can you do" that are neither social nor tools */
#define MAX_TOPICS    16

/* Generic English social formulas, by kind (lowercase words, apostrophes dropped). */
static const char *const THANKS[] = {
    "thanks",
    "thank you",
    "thankyou",
    "ty",
    "cheers",
    "ta",
    "many thanks",
    "much appreciated",
    "appreciated",
    "appreciate it",
    "appreciate that",
    "appreciate you",
    "i appreciate it",
    "thanks a lot",
    "thanks a bunch",
    "thanks so much",
    "thank you so much",
};
static const char *const GREETINGS[] = {
    "hi",
    "hello",
    "hey",
    "hiya",
    "howdy",
    "yo",
    "greetings",
    "good morning",
    "good afternoon",
    "good evening",
    "morning",
    "afternoon",
    "evening",
    "hey there",
    "hi there",
    "hello there",
    "whats up",
    "sup",
    "nice to meet you",
};
/* Greetings that ask after the agent: answered "I'm good, thanks." */
static const char *const HOW_ARE_YOU[] = {
    "how are you",        "how are you doing", "how are you today",   "hows it going",
    "how is it going",    "hows your day",     "hows your day going", "how is your day going",
    "hows your day been", "how was your day",  "how are things",      "how are things with you",
    "hows things",        "how have you been", "how you doing",
};
static const char *const FAREWELLS[] = {
    "bye",
    "goodbye",
    "bye bye",
    "see you",
    "see ya",
    "see you later",
    "see you soon",
    "cya",
    "later",
    "good night",
    "night night",
    "talk later",
    "talk soon",
    "thats all",
    "thats it",
    "all done",
    "im done",
    "were done",
    "done for now",
    "done for today",
    "im off",
    "gotta go",
    "have a good one",
    "have a nice day",
    "take care",
    /* the ways people say good night and goodbye in a chat ("nighty night!") */
    "nighty night",
    "night",
    "nite",
    "gnight",
    "sleep well",
    "sweet dreams",
    "catch you later",
    "ttyl",
    "peace out",
    "later gator",
    "laters",
    "bye for now",
};
static const char *const PRAISE[] = {
    "great",      "perfect",        "lovely",      "brilliant",     "awesome",       "nice",
    "cool",       "excellent",      "fantastic",   "wonderful",     "amazing",       "beautiful",
    "sweet",      "superb",         "good",        "good job",      "well done",     "nice one",
    "good stuff", "youre the best", "youre great", "youre awesome", "youre amazing", "love it",
    "i love it",  "looks good",     "looks great", "spot on",       "nailed it",     "works great",
    "the best",   "best",
};
static const char *const ACKS[] = {
    "ok",
    "okay",
    "k",
    "alright",
    "all right",
    "got it",
    "sounds good",
    "fine",
    "sure",
    "no worries",
    "no problem",
    "understood",
    "right",
    "yes",
    "yeah",
    "yep",
    "mhm",
    "roger",
    "noted",
    "whatever",
    "meh",
    "fair enough",
    "makes sense",
    "i see",
    "gotcha",
    "good to know",
    "oh well",
    "if you say so",
    "hold on",
    "hang on",
    "one sec",
    "just a sec",
    "give me a sec",
    "wait a sec",
    "one moment",
    "just a moment",
};
/* Questions about what the agent can do. */
static const char *const HELP[] = {
    "what can you do",
    "what else can you do",
    "what are you able to do",
    "what can you help with",
    "what can you help me with",
    "what are you able to help with",
    "how can you help",
    "how can you help me",
    "what do you do",
    "what can i ask",
    "what can i ask you",
    "what can i say",
    "what are your features",
    "what are your skills",
    "what are you for",
    "help",
    "help me",
    "what things can you do",
};
/* Words that may stand beside the formulas ("thanks so much", "that's all for now, pipit"). */
static const char *const GLUE[] = {
    "that",  "thats",    "its",     "it",      "this",   "is",     "was",   "all",
    "for",   "now",      "today",   "tonight", "so",     "very",   "much",  "really",
    "a",     "lot",      "bunch",   "again",   "anyway", "you",    "your",  "youre",
    "i",     "im",       "me",      "we",      "the",    "just",   "oh",    "wow",
    "well",  "and",      "then",    "there",   "pipit",  "mate",   "buddy", "friend",
    "guys",  "everyone", "folks",   "lol",     "haha",   "ha",     "yay",   "hmm",
    "um",    "uh",       "indeed",  "too",     "as",     "always", "truly", "super",
    "quite", "pretty",   "totally", "loads",   "heaps",  "tons",   "are",   "am",
};

/* Words that address the device, first or last beside the formulas ("thanks camera", "morning,
 * house"), even when the tool set has them. */
static const char *const VOCATIVE[] = {"house",  "home",   "camera",  "phone",    "car",
                                       "robot",  "device", "speaker", "computer", "assistant",
                                       "system", "pipit",  "buddy",   "mate",     "friend"};

struct kind_list {
    unsigned kind;
    const char *const *list;
    size_t n;
};

static const struct kind_list KINDS[] = {
    {SMALLTALK_THANKS, THANKS, COUNT(THANKS)},
    {SMALLTALK_GREETING, GREETINGS, COUNT(GREETINGS)},
    {SMALLTALK_GREETING | SMALLTALK_ASKED_AFTER, HOW_ARE_YOU, COUNT(HOW_ARE_YOU)},
    {SMALLTALK_FAREWELL, FAREWELLS, COUNT(FAREWELLS)},
    {SMALLTALK_PRAISE, PRAISE, COUNT(PRAISE)},
    {SMALLTALK_ACK, ACKS, COUNT(ACKS)},
    {SMALLTALK_HELP, HELP, COUNT(HELP)},
    {0, GLUE, COUNT(GLUE)},
};

static unsigned social_kinds(const struct router *r, const char *utterance);

/* What opens a statement about the situation ("we're at the beach", "someone blinked", "this
 * is my dog", "the ceremony is about to start"), after interjections. */
static const char *const OPENERS[] = {
    "were",      "we are",   "im",         "i am",      "its",         "it is",      "thats",
    "that is",   "this is",  "hes",        "he is",     "shes",        "she is",     "theyre",
    "they are",  "someone",  "somebody",   "everyones", "everyone is", "my",         "our",
    "lol",       "haha",     "whoa",       "youre",     "you are",     "he",         "she",
    "they",      "everyone", "everybody",  "nobody",    "we just",     "we finally", "someones",
    "somebodys", "nobodys",  "everybodys",
};
/* Interjections before an opener or a clause of their own. */
static const char *const INTERJECTIONS[] = {"lol", "haha",  "whoa", "wow", "oh",    "aw",
                                            "aww", "omg",   "yay",  "ooh", "so",    "well",
                                            "hmm", "pipit", "oops", "ha",  "yikes", "gosh"};
/* Words that make a statement a request: "it's too dark" wants it brighter. */
static const char *const WANTING[] = {"too",  "enough", "more",   "less", "need",  "needs",
                                      "want", "wants",  "should", "can",  "could", "please",
                                      "id",   "wanna",  "would",  "lets"};

/* A clause [lo, hi) of `t` that opens like a statement, after interjections. */
static bool statement_clause(const struct words_tok *t, size_t lo, size_t hi) {
    size_t i = lo;
    for (size_t m;
         i < hi && (m = words_match_longest(t, hi, i, INTERJECTIONS, COUNT(INTERJECTIONS))) > 0;) {
        i += m;
    }
    if (i < hi && words_match_longest(t, hi, i, OPENERS, COUNT(OPENERS)) > 0) {
        return true;
    }
    /* "the ceremony is about to start", "sun is going down", "dinner was great" */
    static const char *const BE[] = {"is", "are", "was", "were"};
    static const char *const WH[] = {"what", "whats", "who",  "whos",  "where", "when",
                                     "why",  "how",   "hows", "which", "whose"};
    static const char *const DET[] = {"the", "this",  "that", "these", "those", "his",
                                      "her", "their", "my",   "our",   "your"};
    bool det = i < hi && words_in_list(t[i].w, DET, COUNT(DET));
    /* "that was fun" (the pronoun is the subject), "this place is packed" (its determiner) */
    return i + 1 < hi && !words_in_list(t[i].w, WH, COUNT(WH)) &&
           (words_in_list(t[i + 1].w, BE, COUNT(BE)) ||
            (det && i + 2 < hi && words_in_list(t[i + 2].w, BE, COUNT(BE))));
}

/* A clause [lo, hi) that praises a thing in a word or two after interjections ("great day",
 * "lovely shots", "oh beautiful sunset"): a word of PRAISE, then at most two words. */
static bool praise_clause(const struct words_tok *t, size_t lo, size_t hi) {
    size_t i = lo;
    for (size_t m;
         i < hi && (m = words_match_longest(t, hi, i, INTERJECTIONS, COUNT(INTERJECTIONS))) > 0;) {
        i += m;
    }
    return i + 1 < hi && hi - i <= 3 && words_in_list(t[i].w, PRAISE, COUNT(PRAISE));
}

/* A clause [lo, hi) of at most MAX_LIKING words that likes something, even a thing of the tool
 * set ("the lights look great", "I love this song"): a word of liking, and no word that asks for
 * a change (a direction, a comparison, a negation, "but", "again", "now"). */
static bool liking_clause(const struct words_tok *t, size_t lo, size_t hi) {
    static const char *const LIKING[] = {
        "great",     "amazing",   "awesome",    "perfect",  "lovely", "nice",   "beautiful",
        "wonderful", "fantastic", "brilliant",  "gorgeous", "love",   "loving", "excellent",
        "superb",    "stunning",  "incredible", "fabulous", "cosy",   "cozy",   "adorable"};
    static const char *const CHANGE[] = {
        "up",     "down",   "brighter", "dimmer",  "darker", "lighter", "louder", "quieter",
        "softer", "warmer", "cooler",   "colder",  "hotter", "higher",  "lower",  "bit",
        "little", "but",    "than",     "instead", "again",  "now",     "next",   "not",
        "dont",   "no",     "off",      "on",      "stop",   "start",   "turn",   "set",
        "make",   "put",    "get",      "switch",  "too",    "enough",  "more",   "less"};
    if (hi - lo > MAX_LIKING) {
        return false;
    }
    bool liked = false;
    for (size_t k = lo; k < hi; k++) {
        if (words_in_list(t[k].w, CHANGE, COUNT(CHANGE)) ||
            words_in_list(t[k].w, WANTING, COUNT(WANTING))) {
            return false;
        }
        liked = liked || words_in_list(t[k].w, LIKING, COUNT(LIKING));
    }
    return liked;
}

/* An utterance of statements about the situation, with social formulas or interjections
 * beside them ("morning! we're at the top of the trail", "lol someone blinked", "that's
 * adorable"): no question mark, no digit, no word of the tool set, no clause that starts with
 * a command verb, no word of wanting ("it's too dark" asks for light). SMALLTALK_ACK plus the
 * kinds of its social clauses, or 0. */
static unsigned statement_kinds(const struct router *r, const char *utterance, size_t len) {
    if (memchr(utterance, '?', len) != NULL || strpbrk(utterance, "0123456789") != NULL) {
        return 0;
    }
    /* with a word of the tool set, only clauses that like something ("thanks, the lights look
     * great"), social formulas and interjections */
    bool tools = router_has_tool_word(r, utterance);
    struct words_tok t[MAX_TOKENS + 1];
    size_t n = words_tokenize(utterance, len, WORDS_PUNCTUATION, t, MAX_TOKENS + 1);
    if (n == 0 || n > MAX_TOKENS) {
        return 0;
    }
    unsigned kinds = 0;
    bool stated = false, words = false;
    for (size_t lo = 0; lo < n;) {
        size_t hi = lo;
        while (hi < n && t[hi].kind == WORDS_WORD) {
            hi++;
        }
        if (hi > lo) {
            words = true;
            char clause[256];
            size_t from = t[lo].start, to = t[hi - 1].end;
            if (to - from >= sizeof(clause)) {
                return 0;
            }
            memcpy(clause, utterance + from, to - from);
            clause[to - from] = '\0';
            unsigned formula = social_kinds(r, clause);
            if (router_command_verb(r, clause) != ROUTER_NO_VERB && formula == 0) {
                return 0; /* "..., get ready": a command; "hold on, ..." is a formula */
            }
            if (tools && formula == 0 && router_has_tool_word(r, clause)) {
                if (!liking_clause(t, lo, hi)) {
                    return 0; /* "the flash is off": maybe a request */
                }
                stated = true;
                kinds |= SMALLTALK_PRAISE;
                lo = hi + 1;
                continue;
            }
            for (size_t k = lo; k < hi; k++) {
                if (words_in_list(t[k].w, WANTING, COUNT(WANTING))) {
                    return 0;
                }
            }
            unsigned social = social_kinds(r, clause);
            bool interjection = true;
            for (size_t k = lo; k < hi && interjection; k++) {
                interjection = words_in_list(t[k].w, INTERJECTIONS, COUNT(INTERJECTIONS));
            }
            if (statement_clause(t, lo, hi)) {
                stated = true;
            } else if (social == 0 && hi - lo <= 2 && !interjection && !praise_clause(t, lo, hi) &&
                       lo > 0 && stated && router_followup(r, clause) == ROUTER_FOLLOWUP_NONE) {
                /* "the lions are asleep, typical": a word or two after a statement comment
                 * on it */
            } else if (social != 0) {
                kinds |= social;
            } else if (praise_clause(t, lo, hi)) {
                stated = true; /* "great day": a statement about the situation */
                kinds |= SMALLTALK_PRAISE;
            } else if (!interjection) {
                return 0; /* something else was said */
            }
        }
        lo = hi + 1;
    }
    /* only interjections ("whoa", "lol", "omg") are an acknowledgement too */
    return words && (stated || kinds == 0) && !(kinds & SMALLTALK_HELP) ? kinds | SMALLTALK_ACK : 0;
}

static unsigned social_kinds(const struct router *r, const char *utterance) {
    if (utterance == NULL) {
        return 0;
    }
    bool too_long = false;
    size_t len = words_bounded_len(utterance, 512, &too_long);
    struct words_tok t[MAX_TOKENS + 1];
    size_t n = words_tokenize(utterance, len, 0, t, MAX_TOKENS + 1);
    if (too_long || n == 0 || n > MAX_TOKENS) {
        return 0;
    }
    unsigned kinds = 0;
    for (size_t i = 0; i < n;) {
        if ((i == 0 || i + 1 == n) && n > 1 &&
            (words_in_list(t[i].w, VOCATIVE, COUNT(VOCATIVE)) ||
             router_is_device_name(r, t[i].w))) {
            i++; /* "thanks camera": the device addressed */
            continue;
        }
        size_t best = 0;
        unsigned best_kind = 0;
        for (size_t k = 0; k < COUNT(KINDS); k++) {
            size_t m = words_match_longest(t, n, i, KINDS[k].list, KINDS[k].n);
            if (m > best) {
                best = m;
                best_kind = KINDS[k].kind;
            }
        }
        /* a word of the tool set is about the tools ("good night" for a night mode), unless
         * it is inside an acknowledgement of two words or more ("hold on", "hang on") */
        bool formula = best >= 2 && best_kind == SMALLTALK_ACK;
        if (!formula && router_tool_word_at(r, t, n, i) > 0) {
            return 0;
        }
        if (best == 0 && (kinds & SMALLTALK_HELP) && n - i <= MAX_HELP_TAIL) {
            i++; /* "what can you do around the house": a few words that are not the tools' */
            continue;
        }
        if (best == 0) {
            return 0; /* a word that is not social: something else was said */
        }
        for (size_t j = i + 1; j < i + best && !formula; j++) {
            if (router_tool_word_at(r, t, n, j) > 0) {
                return 0;
            }
        }
        kinds |= best_kind;
        i += best;
    }
    return kinds;
}

bool smalltalk_is_social_reply(const char *reply) {
    static const char *const OPENS[] = {
        "youre welcome",
        "you are welcome",
        "glad",
        "im good",
        "im fine",
        "okay take your time",
        "ok take your time",
        "take your time",
        "no problem",
        "anytime",
        "my pleasure",
        "happy to help",
        "hi",
        "hello",
        "hey",
        "goodbye",
        "bye",
        "see you",
        "you too",
        "thanks",
        "thank you",
        "sure thing",
        "nice",
        "have fun",
        "enjoy",
        "good night",
        "good morning",
        "cheers",
        "same to you",
    };
    struct words_tok t[16];
    size_t n = reply != NULL ? words_tokenize(reply, strlen(reply), 0, t, 16) : 0;
    for (size_t k = 0; k < sizeof(OPENS) / sizeof(OPENS[0]); k++) {
        if (n > 0 && words_match(t, n, 0, OPENS[k]) > 0) {
            return true;
        }
    }
    return false;
}

bool smalltalk_is_question(const char *utterance) {
    static const char *const Q[] = {"what",  "whats", "how",    "hows", "is",   "isnt",  "are",
                                    "arent", "do",    "does",   "did",  "can",  "could", "which",
                                    "when",  "where", "wheres", "who",  "whos", "why",   "will",
                                    "would", "have",  "has",    "any"};
    if (utterance == NULL) {
        return false;
    }
    size_t len = strlen(utterance);
    while (len > 0 && strchr(" \t\n", utterance[len - 1]) != NULL) {
        len--;
    }
    if (len > 0 && utterance[len - 1] == '?') {
        return true;
    }
    struct words_tok t[4];
    size_t n = words_tokenize(utterance, len, 0, t, 4);
    for (size_t k = 0; n > 0 && k < sizeof(Q) / sizeof(Q[0]); k++) {
        if (strcmp(t[0].w, Q[k]) == 0) {
            return true;
        }
    }
    return false;
}

unsigned smalltalk_kinds(const struct router *r, const char *utterance) {
    if (utterance != NULL && router_followup(r, utterance) == ROUTER_FOLLOWUP_NUMBER) {
        return 0; /* "ok seventy then": a number for the last request, in words */
    }
    unsigned kinds = social_kinds(r, utterance);
    if (kinds != 0 || utterance == NULL) {
        return kinds;
    }
    bool too_long = false;
    size_t len = words_bounded_len(utterance, 512, &too_long);
    return too_long ? 0 : statement_kinds(r, utterance, len);
}

/* "I can help with the light, brightness, ... and timer." from the tool names. */
static void help_reply(const struct pipit_toolset *ts, char *buf, size_t size) {
    char topics[MAX_TOPICS][48];
    size_t n = 0;
    for (size_t t = 0; ts != NULL && t < ts->n_tools && n < MAX_TOPICS; t++) {
        if (pipit_toolset_is_cloud(ts, t)) {
            continue;
        }
        /* the name's words less a first verb ("set_do_not_disturb": "do not disturb",
         * "return_to_dock": "return to dock"); only small words left ("navigate_to"): the
         * first word */
        static const char *const SMALL[] = {"to", "for", "on", "off", "in", "at", "up", "down"};
        char topic[48] = "";
        size_t used = 0, words = 0, small = 0;
        const char *name = ts->tools[t].name;
        for (const char *p = name; *p != '\0';) {
            size_t wl = strcspn(p, "_-.");
            char w[32];
            if (wl > 0 && wl < sizeof(w)) {
                for (size_t k = 0; k < wl; k++) {
                    w[k] = (char)tolower((unsigned char)p[k]);
                }
                w[wl] = '\0';
                bool first_verb = words == 0 && words_is_tool_verb(w) && p[wl] != '\0';
                words++;
                if (!first_verb && used + wl + 2 < sizeof(topic)) {
                    bool is_small = false;
                    for (size_t k = 0; k < sizeof(SMALL) / sizeof(SMALL[0]); k++) {
                        is_small = is_small || strcmp(w, SMALL[k]) == 0;
                    }
                    small += is_small;
                    used += (size_t)snprintf(topic + used, sizeof(topic) - used, "%s%s",
                                             used > 0 ? " " : "", w);
                }
            }
            p += wl;
            p += *p != '\0';
        }
        /* small words at either end go ("tap_to_focus": "focus", "navigate_to": "navigate") */
        for (bool cut = true; cut && topic[0] != '\0';) {
            cut = false;
            for (size_t k = 0; k < sizeof(SMALL) / sizeof(SMALL[0]) && !cut; k++) {
                size_t l = strlen(SMALL[k]), tl = strlen(topic);
                if (strncmp(topic, SMALL[k], l) == 0 && (topic[l] == ' ' || topic[l] == '\0')) {
                    memmove(topic, topic + l + (topic[l] == ' '), tl - l + (topic[l] != ' '));
                    cut = true;
                } else if (tl > l && strcmp(topic + tl - l, SMALL[k]) == 0 &&
                           topic[tl - l - 1] == ' ') {
                    topic[tl - l - 1] = '\0';
                    cut = true;
                }
            }
        }
        (void)small;
        if (topic[0] == '\0') { /* only a verb and small words: the name's first word */
            size_t wl = strcspn(name, "_-.");
            pipit_format(topic, sizeof(topic), "%.*s", (int)(wl < 40 ? wl : 40), name);
        }
        bool seen = false; /* "message" and "messages" are one topic */
        size_t tl = strlen(topic);
        for (size_t k = 0; k < n && !seen; k++) {
            size_t kl = strlen(topics[k]);
            seen = strcmp(topics[k], topic) == 0 ||
                   (kl + 1 == tl && topic[kl] == 's' && strncmp(topics[k], topic, kl) == 0) ||
                   (tl + 1 == kl && topics[k][tl] == 's' && strncmp(topics[k], topic, tl) == 0);
        }
        if (!seen) {
            memcpy(topics[n++], topic, sizeof(topic));
        }
    }
    if (n == 0) {
        pipit_format(buf, size, "I can answer in words, but this tool set has no tools.");
        return;
    }
    size_t used = (size_t)snprintf(buf, size, "Here's what I can help with: ");
    for (size_t k = 0; k < n && used < size; k++) {
        used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                 k == 0 ? "" : (k + 1 == n ? " and " : ", "), topics[k]);
    }
    if (used < size) {
        snprintf(buf + used, size - used, ".");
    }
}

void smalltalk_reply(unsigned kinds, const struct pipit_toolset *ts, char *buf, size_t size) {
    if (kinds & SMALLTALK_HELP) {
        help_reply(ts, buf, size);
        return;
    }
    const char *first = "";
    if (kinds & SMALLTALK_THANKS) {
        first = "You're welcome.";
    } else if (kinds & SMALLTALK_PRAISE) {
        first = "Glad you like it.";
    } else if ((kinds & SMALLTALK_ASKED_AFTER) && !(kinds & SMALLTALK_FAREWELL)) {
        first = "I'm good, thanks! What would you like to do?";
    } else if ((kinds & SMALLTALK_GREETING) && !(kinds & SMALLTALK_FAREWELL)) {
        first = "Hi! What would you like to do?";
    } else if (!(kinds & SMALLTALK_FAREWELL)) {
        first = "OK.";
    }
    const char *bye = (kinds & SMALLTALK_FAREWELL) ? "Goodbye!" : "";
    pipit_format(buf, size, "%s%s%s", first, first[0] != '\0' && bye[0] != '\0' ? " " : "", bye);
}

bool smalltalk_is_vocative(const struct router *r, const char *segment) {
    static const char *const CALLS[] = {"hey", "hi", "ok", "okay", "oh", "yo"};
    struct words_tok t[4];
    size_t n = segment != NULL ? words_tokenize(segment, strlen(segment), 0, t, 4) : 0;
    size_t i = n == 2 && words_in_list(t[0].w, CALLS, COUNT(CALLS)) ? 1 : 0;
    return n >= 1 && n <= 2 && i + 1 == n &&
           (words_in_list(t[i].w, VOCATIVE, COUNT(VOCATIVE)) || router_is_device_name(r, t[i].w));
}

bool smalltalk_is_aside(const struct router *r, const char *segment) {
    return segment != NULL && social_kinds(r, segment) == SMALLTALK_ACK;
}
