/*
 * packgen.c - training data for any pack from its spec (packgen.h, docs/training.md "Any pack").
 *
 * Phrasing templates come from two places: the pack's per-tool examples (the values of their
 * arguments found in the sentence become slots, resampled across the schema) and patterns
 * built from the declaration (a state key's names with a verb: "set the {noun} to {value}",
 * "turn the {noun} up by {n}"; the tool's name: "cancel the timer"). Template text holds
 * slots: {a:ARG} a value of ARG, {p:ARG} / {m:ARG} the magnitude of a positive / negative
 * value of ARG, {s:ARG} a free string of ARG, {@} the noun of the template's state key (its
 * placeholder argument, if any, is sampled and decides which key), {o} the noun's opposite
 * value word for a toggle.
 *
 * An example is played on the pack's device: a random state, up to six earlier turns run
 * through the device and recorded by the agent's memory code, then the turn itself. The state
 * line and the memory lines are what the agent would show the model at that point.
 */
#include "packgen.h"

#include "datagen.h"
#include "device.h"
#include "devices/pack.h"
#include "devices/registry.h"
#include "memory.h"
#include "status.h"
#include "strbuf.h"
#include "undosay.h"
#include "verbbank.h"
#include "words.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define N_OF(a)    ((int)(sizeof(a) / sizeof((a)[0])))
#define PICK(g, a) ((a)[train_rng_below(&(g)->rng, (uint32_t)N_OF(a))])

enum pg_cat {
    PG_SINGLE,
    PG_RELATIVE,
    PG_FOLLOWUP,
    PG_RETRY,
    PG_COMPOUND,
    PG_OUT_OF_RANGE,
    PG_CHAT,
    PG_UNSUPPORTED,
    PG_CLOUD,
    PG_UNDO,
    PG_REFER,
};

const char *const packgen_categories[] = {
    "single", "relative",    "followup", "retry", "compound", "out_of_range",
    "chat",   "unsupported", "cloud",    "undo",  "refer",
};
const int packgen_n_categories = N_OF(packgen_categories);

/* ============================================================================
 * templates and intents */

#define PG_TEXT          200
#define PG_MAX_TPL       192 /* per intent */
#define PG_MAX_INT       512
#define PG_HELD_MOD      5
#define PG_UNDO_COMPOSED 60 /* percent of undo examples composed by undosay.c */
#define PG_EXAMPLE_SHARE 33 /* percent of a tool's draws from the pack's examples */

enum tpl_kind {
    TK_CALL = 0,   /* a call: the tool with the slots' values and the fixed args */
    TK_TOGGLE = 1, /* the boolean arg of {@} gets the opposite of the key's current value */
    TK_MAX = 2,    /* the numeric arg gets the highest value the schema and key allow */
    TK_MIN = 3,    /* ... the lowest */
    TK_REL = 4,    /* the numeric arg gets the key's current value + {p:}/-{m:} */
};

struct tpl {
    char text[PG_TEXT];
    int tool;
    json_t *fixed; /* owned: the arguments the text does not vary */
    enum tpl_kind kind;
    const struct pipit_effect_key *noun; /* for {@}: the key the text names */
    const char *arg;                     /* TK_TOGGLE/MAX/MIN/REL: the argument they decide */
    bool numeric;                        /* the text has a number slot (out-of-range candidate) */
    bool example;                        /* made from one of the pack's examples */
    int producer; /* PG_REFER: the single intent whose results give the {r} identifier */
};

struct intent {
    enum pg_cat cat;
    int weight;
    int n_tpl;
    struct tpl tpl[PG_MAX_TPL];
};

/* ============================================================================
 * phrase bank: how people say things (no pack's words here) */

static const char *const PREFIXES[] = {
    "please ",
    "can you ",
    "could you ",
    "could you please ",
    "would you ",
    "hey, ",
    "ok ",
    "okay ",
    "um ",
    "uh ",
    "so ",
    "now ",
    "just ",
    "alright, ",
    "can you please ",
    "yo ",
    "right, ",
    "quick, ",
    "i'd like you to ",
    "i need you to ",
    "i want you to ",
};
static const char *const SUFFIXES[] = {
    " please", " thanks",     " now", " for me", " right now", " thank you",
    " pls",    " if you can", " ok",  " cheers", " thx",       " when you get a sec",
};
static const char *const SITUATION_PRE[] = {
    "guests are arriving, ", "i just got back, ",   "before i forget, ", "while i'm cooking, ",
    "kids are asleep, ",     "it's getting late, ", "real quick, ",      "one thing, ",
};
static const char *const SITUATION_POST[] = {
    ", i'm on my way out", " before the guests come", " while i'm reading", ", it's late",
    " for the afternoon",  ", i just woke up",        " - long day",        " for a while",
};
/* Situations composed: who and how they are ("the kids are" + "asleep"), or a clause of its own.
 * Said around a command they are its reason ("lock the back, the kids are asleep"); said alone they
 * are a remark, not a request (no call). No clause hints at a setting ("it's too dark"): alone that
 * would be one. */
static const char *const WHO[] = {
    "the kids are",
    "the baby is",
    "my wife is",
    "my husband is",
    "my partner is",
    "we're",
    "i'm",
    "the guests are",
    "my parents are",
    "the dog is",
    "my roommate is",
    "grandma is",
    "the neighbours are",
    "my boss is",
    "everyone is",
    "my sister is",
    "the cleaner is",
    "my son is",
    "my daughter is",
    "the in-laws are",
};
static const char *const HOW[] = {
    "asleep",
    "coming over tonight",
    "on the way home",
    "back on sunday",
    "flying out tomorrow",
    "in the garden",
    "working from home today",
    "still at school",
    "on a call",
    "sick",
    "out until late",
    "watching a movie",
    "in the shower",
    "visiting for the weekend",
    "leaving in ten minutes",
    "already in bed",
    "away till monday",
    "napping",
    "home early today",
    "getting ready",
    "running late",
    "starving",
    "in a bad mood",
    "at practice",
    "finally here",
};
static const char *const CLAUSES[] = {
    "don't wanna wake anyone",
    "i forgot earlier",
    "it's been a long day",
    "it's driving me nuts",
    "my hands are full",
    "i'm in a rush",
    "we're heading out soon",
    "i'm about to leave",
    "it's movie night",
    "storm's coming tonight",
    "i can't find my glasses",
    "my phone's almost dead",
    "i'm half asleep",
    "the game starts soon",
    "dinner's almost ready",
    "we just got back",
    "long week",
    "i'm not feeling great",
};
static const char *const CLAUSE_JOIN[] = {", ", " - ", ", because ", " since ", ", cuz ", ", "};

static const char *const CONNECT_PRE[] = {
    "and ", "then ", "also ", "and then ", "after that ", "plus ", "and also ", "next, ",
};
static const char *const CONNECT_POST[] = {" too", " as well", " also"};

struct chat_line {
    const char *say;
    const char *reply;
};

static const struct chat_line CHAT[] = {
    {"hi", "Hi! What would you like me to do?"},
    {"hello", "Hi! What would you like me to do?"},
    {"hey there", "Hi! What would you like me to do?"},
    {"good evening", "Hi! What would you like me to do?"},
    {"hiya", "Hi! What would you like me to do?"},
    {"afternoon!", "Hi! What would you like me to do?"},
    {"thank you", "You're welcome."},
    {"thanks a lot", "You're welcome."},
    {"cheers", "You're welcome."},
    {"thanks so much", "You're welcome."},
    {"much appreciated", "You're welcome."},
    {"that's perfect", "Glad it works."},
    {"nice one", "Glad it works."},
    {"lovely, cheers", "Glad it works."},
    {"great job", "Glad it works."},
    {"awesome", "Glad it works."},
    {"bye", "Bye!"},
    {"see you later", "Bye!"},
    {"goodnight", "Bye!"},
    {"that's everything", "Bye!"},
    {"talk later", "Bye!"},
    {"what are you", "I'm pipit, a small assistant that runs on this device."},
    {"who are you", "I'm pipit, a small assistant that runs on this device."},
    {"are you a robot", "I'm pipit, a small assistant that runs on this device."},
    {"what can you help with", "Tell me what to change and I'll do it."},
    {"what are you able to do", "Tell me what to change and I'll do it."},
    {"help", "Tell me what to change and I'll do it."},
    {"what should i say", "Tell me what to change and I'll do it."},
    {"are you there", "I'm here."},
    {"you awake?", "I'm here."},
    {"hello? anyone?", "I'm here."},
    {"hang on a sec", "Okay, take your time."},
    {"give me a minute", "Okay, take your time."},
    {"let me think", "Okay, take your time."},
    {"wait", "Okay, take your time."},
    {"ok", "Okay."},
    {"cool", "Okay."},
    {"got it", "Okay."},
    {"sure", "Okay."},
    {"fine", "Okay."},
    {"never mind", "Okay."},
    {"nothing, sorry", "Okay."},
    {"i'm bored", "Okay."},
    {"how are you", "I'm good, thanks. What can I do for you?"},
    {"how's it going", "I'm good, thanks. What can I do for you?"},
    {"you ok?", "I'm good, thanks. What can I do for you?"},
    {"haha", "Okay."},
    {"lol", "Okay."},
    {"i love this", "Glad it works."},
    {"you're the best", "Glad it works."},
};
/* Chit-chat about one of the pack's things ("thanks, the lights look great"): a thing named is not
 * a command. */
static const struct chat_line CHAT_KEY[] = {
    {"thanks, love the {@}", "Glad it works."},
    {"i like the {@} like this", "Glad it works."},
    {"the {@} is perfect now", "Glad it works."},
    {"nice, good job with the {@}", "Glad it works."},
    {"thanks for sorting the {@}", "Glad it works."},
    {"that {@} is just right", "Glad it works."},
    {"the {@} is fine as it is", "Okay."},
    {"i was just looking at the {@}", "Okay."},
    {"my friend has the same {@}", "Okay."},
    {"i love my {@}", "Glad it works."},
    {"no need to touch the {@}", "Okay."},
};
static const char *const CHAT_PRE[] = {"oh ", "ah ", "well ", "hmm ", "ok ", "aw ", "so "};
static const char *const CHAT_POST[] = {" then", " for now", " :)", " haha", " buddy", "!"};

/* Requests no pack tool does; a phrase sharing a word with the pack is left out. */
static const char *const UNSUPPORTED[] = {
    "order a pizza",
    "call my mom",
    "send an email to my boss",
    "book a table for two",
    "play some jazz",
    "read me the news",
    "what's on my calendar",
    "buy more coffee",
    "start the washing machine",
    "water the plants",
    "feed the cat",
    "walk the dog",
    "lock the car",
    "vacuum the living area",
    "turn on the tv",
    "record the football",
    "post this on instagram",
    "pay the electricity bill",
    "translate this letter",
    "take out the trash",
    "wash the dishes",
    "make me a sandwich",
    "open the garage",
    "start the car",
    "set my alarm clock for six",
    "text my sister",
    "find my phone",
    "share my location",
    "scan this document",
    "print the boarding pass",
    "download the update",
    "unlock the front door",
    "iron my shirt",
    "charge my laptop",
    "mute my phone",
    "call a taxi",
};
static const char *const UNSUPPORTED_KEY[] = {
    "schedule the {@} for tomorrow morning",
    "show me a history of the {@}",
    "reset the {@} to factory settings",
    "update the firmware of the {@}",
    "email me a report about the {@}",
    "share the {@} with my neighbour",
    "rename the {@}",
};
/* Things people own that a pack may lack, and the requests about them said with the verbs packs
 * use ("turn on the sprinkler", "set the oven to 5"): a pack's verb with a thing it does not name
 * is no call. A thing sharing a word with the pack is left out (build_banks). */
static const char *const THINGS[] = {
    "dishwasher",     "washing machine",
    "dryer",          "oven",
    "microwave",      "fridge",
    "freezer",        "kettle",
    "coffee machine", "toaster",
    "sprinkler",      "garage door",
    "front gate",     "doorbell",
    "alarm system",   "smoke detector",
    "air purifier",   "humidifier",
    "ceiling fan",    "boiler",
    "water heater",   "pool pump",
    "hot tub",        "fireplace",
    "robot mower",    "printer",
    "router",         "tv",
    "radio",          "projector",
    "headlights",     "wipers",
    "seat heater",    "sunroof",
    "trunk",          "engine",
    "garden lights",  "porch light",
    "fairy lights",   "aquarium",
    "pet feeder",     "baby monitor",
    "treadmill",      "shower",
    "sauna",          "laptop",
    "tablet",         "smartwatch",
    "drone",          "stove",
    "grill",          "iron",
    "hair dryer",     "electric blanket",
    "air fryer",      "blender",
    "rice cooker",    "game console",
    "subwoofer",      "doorbell chime",
    "irrigation",     "pool lights",
    "ice maker",      "dehumidifier",
    "space heater",   "towel rail",
    "dash cam",       "garden pump",
    "gate lock",      "mailbox",
};
static const char *const UNSUPPORTED_THING[] = {
    "turn on the {X}",   "switch off the {X}",   "set the {X} to {N}",
    "open the {X}",      "close the {X}",        "start the {X}",
    "stop the {X}",      "turn the {X} up",      "turn the {X} down",
    "check the {X}",     "clean the {X}",        "lock the {X}",
    "reset the {X}",     "put the {X} on",       "the {X} on please",
    "{X} off",           "make the {X} quieter", "turn up the {X} a bit",
    "dim the {X}",       "{X} to {N}",           "empty the {X}",
    "heat up the {X}",   "pause the {X}",        "can you run the {X}",
    "get the {X} going", "kill the {X}",         "{X} on",
    "turn the {X} off",
};
static const char *const UNSUPPORTED_REPLY = "Sorry, I can't do that.";

static const char *const UNDO[] = {
    "undo",
    "undo it",
    "undo please",
    "undo the last action",
    "undo what you just did",
    "revert",
    "revert it",
    "revert the last change",
    "roll that back",
    "roll it back",
    "scrap that",
    "scrap the last change",
    "cancel the last change",
    "forget the last change",
    "drop that change",
    "go back one step",
    "back to how it was before",
    "restore the previous setting",
    "put the old value back",
    "set it back",
    "change that back",
    "reverse that",
    "reverse the last one",
    "oops, undo",
    "oops, revert that",
    "on second thought, undo it",
    "no no, change it back",
    "that was a mistake, revert it",
    "take that back",
    "whoops, go back",
    "i didn't mean that, undo",
    "return it to what it was",
};

static const char *const AGAIN[] = {
    "again",       "once more",     "one more time", "same again",       "do that again",
    "repeat that", "and once more", "again please",  "same thing again", "one more",
};
static const char *const MORE[] = {
    "a bit more",   "a little more", "more",    "keep going",
    "a touch more", "even more",     "further", "some more",
};
static const char *const OTHER_WAY[] = {
    "the other way",         "other way",    "no, the other way",      "opposite direction",
    "wrong way, reverse it", "the opposite", "other direction please", "go the other way",
};
static const char *const MAKE_IT[] = {
    "make it {v}",           "make that {v}", "{v} instead",         "actually {v}",
    "change it to {v}",      "no, {v}",       "let's say {v}",       "rather {v}",
    "set it to {v} instead", "how about {v}", "{v} would be better", "switch that to {v}",
};
static const char *const SAME_FOR[] = {
    "same for the {v}", "and the {v} too", "the {v} as well", "now the {v}",
    "do the {v} too",   "also the {v}",    "same in the {v}", "and for the {v}",
};
static const char *const RETRY[] = {
    "try again",       "try that again",   "retry",      "one more try",
    "have another go", "please try again", "retry that", "again, it didn't work",
    "try once more",   "go again",
};
static const char *const RETRY_CODES[] = {"busy", "timeout", "device_busy", "unavailable",
                                          "no_response"};

/* Questions for the cloud: an opener and words; the words are random, so copying is the only
 * way to learn them. */
static const char *const CLOUD_OPEN[] = {
    "what is",
    "who invented",
    "how do i",
    "why does",
    "can you explain",
    "tell me about",
    "how many",
    "what's the best way to",
    "when was",
    "where is",
    "how long does it take to",
    "is it true that",
    "write a poem about",
    "write a short story about",
    "give me a recipe for",
    "what's a good name for",
    "how far is",
    "what year was",
    "what does",
    "summarize the history of",
};
static const char *const CLOUD_WORDS[] = {
    "the moon",
    "a volcano",
    "bread",
    "the roman empire",
    "penguins",
    "coffee",
    "jazz",
    "the ocean",
    "chess",
    "a lighthouse",
    "rainbows",
    "bees",
    "the pyramids",
    "tea",
    "dinosaurs",
    "a violin",
    "the alps",
    "glaciers",
    "saturn",
    "tomatoes",
    "a marathon",
    "the printing press",
    "vikings",
    "tigers",
    "my garden",
    "spanish",
    "quantum computers",
    "olive oil",
    "thunder",
    "sleep",
    "a birthday",
    "the weekend",
    "my cat",
    "electricity",
    "wool",
    "mushrooms",
    "the tides",
    "a bicycle",
    "fractions",
    "the stars",
    "sourdough",
    "owls",
};
/* Questions for the cloud about one of the pack's things: what people ask an assistant next to a
 * device is about that device's world ("how long do door sensor batteries last"), so the pack's
 * nouns alone must not mean a tool. No shape of a state question ("what's the {@}", "is the {@}
 * on"): the agent answers those from the state. */
static const char *const CLOUD_KEY[] = {
    "how long does the {@} usually last",
    "what's a good {@} for a beginner",
    "how does the {@} actually work",
    "is it normal for the {@} to make a clicking noise",
    "what's the best way to clean the {@}",
    "write a short funny note about the {@}",
    "how much does a new {@} cost",
    "tips for getting the most out of my {@}",
    "explain what the {@} is for",
    "who invented the {@}",
    "what's a fair price for a used {@}",
    "how often should i service the {@}",
    "write a poem about my {@}",
    "why do people set the {@} so high",
    "how much power does the {@} use per year",
    "what do experts recommend for the {@}",
};
static const char *const CLOUD_REASONS[] = {"general knowledge", "creative writing",
                                            "math and reasoning"};

/* ============================================================================
 * numbers in words */

static const char *const ONES[] = {"zero",    "one",     "two",       "three",    "four",
                                   "five",    "six",     "seven",     "eight",    "nine",
                                   "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                                   "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
static const char *const TENS[] = {"",      "",      "twenty",  "thirty", "forty",
                                   "fifty", "sixty", "seventy", "eighty", "ninety"};

/* 0..999 in words; false otherwise. */
static bool int_words(long v, char *out, size_t size) {
    if (v < 0 || v > 999) {
        return false;
    }
    char hund[32] = "", rest[48] = "";
    if (v >= 100) {
        pipit_format(hund, sizeof(hund), "%s hundred", ONES[v / 100]);
    }
    long r = v % 100;
    if (r >= 20) {
        pipit_format(rest, sizeof(rest), r % 10 ? "%s %s" : "%s", TENS[r / 10], ONES[r % 10]);
    } else if (r > 0 || v < 100) {
        pipit_format(rest, sizeof(rest), "%s", ONES[r]);
    }
    pipit_format(out, size, "%s%s%s", hund, hund[0] && rest[0] ? " and " : "", rest);
    return true;
}

static void fmt_num(double v, char *out, size_t size) {
    if (floor(v) == v && fabs(v) < 1e15) {
        pipit_format(out, size, "%.0f", v);
    } else {
        pipit_format(out, size, "%g", v);
    }
}

/* ============================================================================
 * the generator's state */

struct gen {
    uint64_t rng;
    const struct pipit_toolset *ts;
    const struct pipit_pack *pk;
    struct device dev;
    struct memory mem;
    int cloud_tool; /* -1: none */
    int n_int;
    struct intent *in;                       /* PG_MAX_INT */
    int single_of[PIPIT_TOOLSPEC_MAX_TOOLS]; /* the tool's single intent, -1 when none */
    char reason[96];                         /* the cloud tool's reason, "" = by kind */
    int reason_kind;
    json_t *last_data; /* owned: the data of the last call played, NULL when it failed */
    int refer;         /* the PG_REFER intent, -1 when the pack has no identifiers to refer to */
};

static const struct pipit_tool *tool_at(const struct gen *g, int i) {
    return pipit_toolset_tool(g->ts, (size_t)i);
}

static const struct pipit_schema *prop_schema(const struct pipit_tool *t, const char *name) {
    for (size_t i = 0; i < t->params->n_props; i++) {
        if (strcmp(t->params->props[i].name, name) == 0) {
            return t->params->props[i].schema;
        }
    }
    return NULL;
}

/* "living_room" -> "living room" */
static void words_of(const char *s, char *out, size_t size) {
    pipit_format(out, size, "%s", s);
    for (char *p = out; *p != '\0'; p++) {
        *p = *p == '_' ? ' ' : (char)tolower((unsigned char)*p);
    }
}

/* The entries of the value map of `arg` in template `tpl` ("{mode:driving=by car|walking=on
 * foot}"): up to `max` values and their labels, lowercase; the default entry (*) is left out.
 * Returns how many. */
#define PG_LABEL 64
static int label_map(const char *tpl,
                     const char *arg,
                     char (*vals)[PG_LABEL],
                     char (*labels)[PG_LABEL],
                     int max) {
    char open[96];
    pipit_format(open, sizeof(open), "{%s:", arg);
    const char *p = tpl != NULL ? strstr(tpl, open) : NULL;
    if (p == NULL) {
        return 0;
    }
    p += strlen(open);
    const char *end = strchr(p, '}');
    int n = 0;
    while (end != NULL && p < end && n < max) {
        size_t len = strcspn(p, "|}");
        const char *eq = memchr(p, '=', len);
        if (eq != NULL && !(eq - p == 1 && *p == '*')) {
            pipit_format(vals[n], PG_LABEL, "%.*s", (int)(eq - p), p);
            pipit_format(labels[n], PG_LABEL, "%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
            for (char *q = labels[n]; *q; q++) {
                *q = (char)tolower((unsigned char)*q);
            }
            if (strpbrk(labels[n], "{#") == NULL && labels[n][0] != '\0') {
                n++;
            }
        }
        p += len + (p[len] == '|' ? 1 : 0);
    }
    return n;
}

/* The verb of a gerund ("walking" -> "walk", "driving" -> "drive", "running" -> "run",
 * "cycling" -> "cycle"); false when `v` is not one. */
static bool verb_of_gerund(const char *v, char *out, size_t size) {
    size_t n = strlen(v);
    if (n < 6 || strcmp(v + n - 3, "ing") != 0 || strpbrk(v, " _-") != NULL) {
        return false;
    }
    char st[64];
    pipit_format(st, sizeof(st), "%.*s", (int)(n - 3), v);
    size_t m = strlen(st);
#define PG_VOWEL(c) (strchr("aeiou", (c)) != NULL)
    bool vowel_in = false;
    for (size_t i = 0; i < m; i++) {
        vowel_in = vowel_in || PG_VOWEL(st[i]);
    }
    if (!vowel_in) {
        return false;
    }
    if (m >= 3 && st[m - 1] == st[m - 2] && !PG_VOWEL(st[m - 1]) &&
        strchr("lsz", st[m - 1]) == NULL) {
        st[m - 1] = '\0'; /* runn -> run */
    } else if (m >= 3 && st[m - 1] == 'l' && !PG_VOWEL(st[m - 2])) {
        pipit_format(st + m, sizeof(st) - m, "e"); /* cycl -> cycle */
    } else if (m >= 3 && m <= 4 && !PG_VOWEL(st[m - 1]) && strchr("wxy", st[m - 1]) == NULL &&
               PG_VOWEL(st[m - 2]) && !PG_VOWEL(st[m - 3]) && !PG_VOWEL(st[0])) {
        pipit_format(st + m, sizeof(st) - m, "e"); /* driv -> drive, hik -> hike */
    }
#undef PG_VOWEL
    pipit_format(out, size, "%s", st);
    return true;
}

/* ============================================================================
 * values */

static bool is_num(const struct pipit_schema *s) {
    return s != NULL && (s->type == PIPIT_SCHEMA_INTEGER || s->type == PIPIT_SCHEMA_NUMBER) &&
           s->n_enum == 0;
}

/* A value the person might ask for in [lo, hi]: round numbers often, halves for numbers. */
static double sample_in(struct gen *g, double lo, double hi, bool integer) {
    if (hi < lo) {
        return lo;
    }
    double span = hi - lo;
    double v;
    uint32_t r = train_rng_below(&g->rng, 10);
    if (span >= 200 && train_rng_below(&g->rng, 5) < 2) {
        hi = lo + 60; /* a wide range: people mostly ask for everyday amounts (5, 10, 45) */
        span = 60;
    }
    if (span >= 20 && r < 5) {
        double step = span >= 100 ? 10 : 5;
        double a = ceil(lo / step), b = floor(hi / step);
        v = b >= a ? step * (a + train_rng_below(&g->rng, (uint32_t)(b - a + 1))) : lo;
    } else {
        double a = ceil(lo), b = floor(hi);
        v = b >= a ? a + train_rng_below(&g->rng, (uint32_t)(b - a + 1)) : lo;
        if (!integer && r >= 8 && v + 0.5 <= hi) {
            v += 0.5;
        }
    }
    return v;
}

/* The schema's range, or a plausible one. */
static void range_of(const struct pipit_schema *s, double *lo, double *hi) {
    *lo = s->has_min ? s->min : (s->has_max && s->max < 0 ? s->max - 100 : 0);
    *hi = s->has_max ? s->max : *lo + 100;
}

/* A number outside the schema's range (there must be a bound). */
static bool sample_outside(struct gen *g, const struct pipit_schema *s, int sign, double *v) {
    bool integer = s->type == PIPIT_SCHEMA_INTEGER;
    double lo, hi;
    range_of(s, &lo, &hi);
    double span = hi - lo > 1 ? hi - lo : 10;
    bool above = s->has_max && (!s->has_min || train_rng_below(&g->rng, 3) != 0);
    if (sign > 0 && !(s->has_max && s->max > 0)) {
        return false;
    }
    if (sign < 0) {
        if (!(s->has_min && s->min < 0)) {
            return false;
        }
        above = false;
    }
    if (sign > 0) {
        above = true;
    }
    if (!above && !s->has_min) {
        return false;
    }
    double d = sample_in(g, 1, span > 4 ? span : 4, integer);
    *v = above ? s->max + d : s->min - d;
    if (!above && s->min >= 0 && *v < 0 && sign == 0) {
        *v = s->min > 0 ? floor(s->min / 2) : -d; /* "0" for a 1..100 key; negatives as asked */
        if (*v >= s->min) {
            return false;
        }
    }
    return true;
}

/* Render a number the way people type it: digits mostly, words sometimes. */
static void say_num(struct gen *g, double v, char *out, size_t size) {
    char w[64];
    if (floor(v) == v && v >= 0 && train_rng_below(&g->rng, 4) == 0 &&
        int_words((long)v, w, sizeof(w))) {
        pipit_format(out, size, "%s", w);
    } else if (v < 0) {
        char d[32];
        fmt_num(-v, d, sizeof(d));
        pipit_format(out, size, train_rng_below(&g->rng, 2) ? "-%s" : "minus %s", d);
    } else if (floor(v) != v && floor(v) == v - 0.5 && v < 100 &&
               train_rng_below(&g->rng, 4) == 0 && int_words((long)v, w, sizeof(w))) {
        pipit_format(out, size, "%s and a half", w);
    } else {
        fmt_num(v, out, size);
    }
}

/* ============================================================================
 * calls */

/* "<call>tool(k=v, ...)" in schema order, JSON values, numbers without trailing zeros. */
static void render_call(const struct pipit_tool *t, const json_t *args, char *out, size_t size) {
    struct strbuf b = {0};
    strbuf_printf(&b, "<call>%s(", t->name);
    bool first = true;
    for (size_t i = 0; i < t->params->n_props; i++) {
        const json_t *v = json_object_get(args, t->params->props[i].name);
        if (v == NULL) {
            continue;
        }
        strbuf_printf(&b, "%s%s=", first ? "" : ", ", t->params->props[i].name);
        first = false;
        if (json_is_number(v)) {
            char n[40];
            fmt_num(json_number_value(v), n, sizeof(n));
            strbuf_str(&b, n);
        } else {
            char *j = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            strbuf_str(&b, j != NULL ? j : "null");
            free(j);
        }
    }
    strbuf_str(&b, ")");
    pipit_format(out, size, "%s", b.data != NULL ? b.data : "");
    strbuf_free(&b);
}

static json_t *num_json(const struct pipit_schema *s, double v) {
    return s->type == PIPIT_SCHEMA_INTEGER && floor(v) == v ? json_integer((json_int_t)v)
                                                            : json_real(v);
}

/* ============================================================================
 * state keys and their nouns */

/* The declared key an effect key names when its placeholder argument is `val`. */
static const struct pipit_pack_key *
expand_key(const struct gen *g, const struct pipit_effect_key *ek, const char *val) {
    if (ek->key_arg == NULL) {
        return pipit_pack_find_key(g->pk, ek->key);
    }
    char name[256];
    pipit_format(name, sizeof(name), "%.*s%s%s", (int)ek->prefix_len, ek->key,
                 val != NULL ? val : "", ek->suffix);
    return pipit_pack_find_key(g->pk, name);
}

/* One of the names of key k: its declared names, else its key's words. */
static void key_name(struct gen *g, const struct pipit_pack_key *k, char *out, size_t size) {
    const char *names = k->words.names;
    if (names == NULL || names[0] == '\0') {
        words_of(k->key, out, size);
        return;
    }
    int n = 1;
    for (const char *p = names; *p; p++) {
        n += *p == '|';
    }
    int pick = (int)train_rng_below(&g->rng, (uint32_t)n);
    const char *p = names;
    for (int i = 0; i < pick; i++) {
        p = strchr(p, '|') + 1;
    }
    const char *e = strchr(p, '|');
    pipit_format(out, size, "%.*s", (int)(e != NULL ? e - p : (long)strlen(p)), p);
}

/* How much of the `len` bytes of text before a key's name to keep: all, less a closing "the "
 * when the name has its own determiner ("my window": "raise the my window") or is "it". */
static size_t before_noun(const char *text, size_t len, const char *noun) {
    static const char *const OWN[] = {"my ", "your ", "our ", "the ", "a ", "an "};
    bool own = strcmp(noun, "it") == 0;
    for (int k = 0; k < N_OF(OWN); k++) {
        own = own || strncmp(noun, OWN[k], strlen(OWN[k])) == 0;
    }
    if (own && len >= 4 && strncasecmp(text + len - 4, "the ", 4) == 0 &&
        (len == 4 || text[len - 5] == ' ')) {
        return len - 4;
    }
    return len;
}

/* ============================================================================
 * filling a template */

/* Free strings: what people put in a name, a place, a topic or a message. An argument's kind is
 * guessed from its name and description (a contact, a place) or from the example's own value
 * (an identifier "TM-1", a time "07:15", a topic of one or two words, a message). */
static const char *const PEOPLE[] = {
    "Alice", "Sam",   "Mom",      "Dad",    "Jordan", "Priya", "Elena", "Tom",       "Grandma",
    "Omar",  "Lucia", "Ben",      "Kenji",  "Maria",  "Chris", "Aisha", "Leo",       "Nina",
    "Jamal", "Sofia", "the boss", "Hannah", "Marco",  "Ravi",  "Zoe",   "Uncle Bob",
};
static const char *const PLACES[] = {
    "the airport",    "Union Square", "the office",       "home",        "the train station",
    "Dolores Park",   "the gym",      "Main Street",      "the library", "the hospital",
    "Ferry Building", "the mall",     "city hall",        "the beach",   "Pier 39",
    "the stadium",    "5th Avenue",   "Golden Gate Park", "the museum",  "the hotel",
    "Lisbon",         "the school",   "Mission Street",   "the bakery",
};
static const char *const TOPICS[] = {
    "beach",        "dogs",      "birthday",      "sunset",       "Lisbon",    "wedding",
    "cats",         "snow",      "hiking",        "pizza",        "Q3",        "budget",
    "invoice",      "resume",    "taxes",         "ideas",        "groceries", "recipes",
    "travel",       "garden",    "the kids",      "Paris",        "concert",   "mountains",
    "banana bread", "road trip", "meeting notes", "packing list", "lecture",   "contract",
};
static const char *const MESSAGES[] = {
    "i'm running late",
    "see you at 6",
    "on my way",
    "call me when you can",
    "the meeting moved to 3",
    "happy birthday",
    "dinner is ready",
    "can you pick up milk",
    "i'm boarding now",
    "the printer is jammed",
    "my laptop won't boot",
    "learn to juggle",
    "buy eggs",
    "the vpn is down",
    "thanks for today",
    "i'll be there in 10 minutes",
    "don't forget the keys",
    "see you sunday",
    "the wifi in room 4 is broken",
    "pick up the dry cleaning",
};

static bool name_says(const char *name, const char *desc, const char *const *words, int n) {
    for (int i = 0; i < n; i++) {
        if (strstr(name, words[i]) != NULL || (desc != NULL && strstr(desc, words[i]) != NULL)) {
            return true;
        }
    }
    return false;
}

/* "TM-1", "T-1000", "F201": letters, an optional '-', digits. The letters' length, or -1. */
static int id_shape(const char *v) {
    int n = 0;
    while (isalpha((unsigned char)v[n])) {
        n++;
    }
    if (n == 0 || n > 4) {
        return -1;
    }
    const char *d = v + n + (v[n] == '-');
    if (!isdigit((unsigned char)*d)) {
        return -1;
    }
    while (isdigit((unsigned char)*d)) {
        d++;
    }
    return *d == '\0' ? n : -1;
}

/* A made-up word ("tavori", "Kelmo"): free strings must be copied from the sentence, and a model
 * that saw only a few dozen values learns to pick one of them instead ("play some Miles Davis"
 * -> "mountains"); words nobody wrote in a bank leave copying as the only way. */
static void made_up_word(struct gen *g, bool capital, char *out, size_t size) {
    static const char *const ONSET[] = {"b",  "d",  "f",  "g",  "k", "l", "m",  "n",
                                        "p",  "r",  "s",  "t",  "v", "z", "br", "ch",
                                        "sh", "st", "tr", "gl", "h", "j", "w",  "y"};
    static const char *const NUCLEUS[] = {"a", "e", "i", "o", "u", "ai", "ea", "oo", "ou"};
    static const char *const CODA[] = {"", "", "", "n", "r", "l", "s", "m", "x", "nd", "rt"};
    int n = 2 + (int)train_rng_below(&g->rng, 2);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n && len + 8 < size; i++) {
        pipit_format(out + len, size - len, "%s%s%s", PICK(g, ONSET), PICK(g, NUCLEUS),
                     i == n - 1 ? PICK(g, CODA) : "");
        len = strlen(out);
    }
    if (capital && out[0] != '\0') {
        out[0] = (char)toupper((unsigned char)out[0]);
    }
}

/* Up to `n` words, each from the phrase banks or made up (capitalized like a name when
 * `names`), joined by spaces. */
static void word_run(struct gen *g, int n, bool names, char *out, size_t size) {
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char w[64];
        uint32_t r = train_rng_below(&g->rng, 4);
        if (r == 0 && !names) {
            pipit_format(w, sizeof(w), "%s", PICK(g, CLOUD_WORDS));
        } else if (r == 1 && !names) {
            pipit_format(w, sizeof(w), "%s", PICK(g, TOPICS));
        } else {
            made_up_word(g, names || train_rng_below(&g->rng, 3) == 0, w, sizeof(w));
        }
        size_t len = strlen(out);
        pipit_format(out + len, size - len, "%s%s", i > 0 ? " " : "", w);
    }
}

/* A new value of the kind `orig` (the example's value) has, for argument `name`. *said: how
 * the sentence says it. */
static json_t *sample_free(struct gen *g,
                           const struct pipit_tool *t,
                           const char *name,
                           const char *orig,
                           char *said,
                           size_t size) {
    const struct pipit_schema *s = prop_schema(t, name);
    char desc[256] = "";
    if (s != NULL && s->description != NULL) {
        words_of(s->description, desc, sizeof(desc));
    }
    char v[160];
    int letters = id_shape(orig);
    static const char *const PERSON[] = {"recipient", "contact",  "person",  "friend",
                                         "attendee",  "assignee", "invitee", "who"};
    static const char *const PLACE[] = {"destination", "location", "address", "place",
                                        "city",        "venue",    "where",   "origin"};
    if (train_rng_below(&g->rng, 8) == 0) {
        pipit_format(v, sizeof(v), "%s", orig); /* the example's own value, now and then */
    } else if (letters > 0) {
        const char *d = orig + letters + (orig[letters] == '-');
        int nd = (int)strlen(d), lo = 1;
        for (int i = 1; i < nd; i++) {
            lo *= 10;
        }
        int x = (int)sample_in(g, nd > 1 ? lo : 1, nd > 1 ? lo * 10 - 1 : 9, true);
        pipit_format(v, sizeof(v), "%.*s%d", (int)(d - orig), orig, x);
    } else if (strlen(orig) == 5 && isdigit((unsigned char)orig[0]) && orig[2] == ':') {
        int h = (int)train_rng_below(&g->rng, 24), m = 5 * (int)train_rng_below(&g->rng, 12);
        pipit_format(v, sizeof(v), "%02d:%02d", h, m);
        json_t *out = json_string(v);
        if (h > 0 && h < 10 && train_rng_below(&g->rng, 2)) {
            pipit_format(said, size, "%d:%02d", h, m); /* "7:15" */
        } else {
            pipit_format(said, size, "%s", v);
        }
        return out;
    } else if (name_says(name, desc, PERSON, N_OF(PERSON))) {
        if (train_rng_below(&g->rng, 2) == 0) {
            pipit_format(v, sizeof(v), "%s", PICK(g, PEOPLE));
        } else {
            word_run(g, 1 + (int)train_rng_below(&g->rng, 2), true, v, sizeof(v));
        }
    } else if (name_says(name, desc, PLACE, N_OF(PLACE))) {
        if (train_rng_below(&g->rng, 2) == 0) {
            pipit_format(v, sizeof(v), "%s", PICK(g, PLACES));
        } else {
            char w[96];
            word_run(g, 1 + (int)train_rng_below(&g->rng, 2), true, w, sizeof(w));
            pipit_format(v, sizeof(v), "%s%s", train_rng_below(&g->rng, 3) == 0 ? "the " : "", w);
        }
    } else if (strchr(orig, ' ') == NULL || strchr(strchr(orig, ' ') + 1, ' ') == NULL) {
        if (train_rng_below(&g->rng, 3) == 0) {
            pipit_format(v, sizeof(v), "%s", PICK(g, TOPICS));
        } else {
            word_run(g, 1 + (int)train_rng_below(&g->rng, 3), false, v, sizeof(v));
        }
    } else {
        if (train_rng_below(&g->rng, 3) == 0) {
            pipit_format(v, sizeof(v), "%s", PICK(g, MESSAGES));
        } else {
            word_run(g, 3 + (int)train_rng_below(&g->rng, 4), false, v, sizeof(v));
        }
    }
    pipit_format(said, size, "%s", v);
    return json_string(v);
}

struct filled {
    char text[PG_TEXT * 2];
    json_t *args; /* owned */
    bool outside; /* a number outside the schema's range */
};

/* Sample a value for arg `name` of tool t (kind: 'a' any, 'p' positive, 'm' negative). */
static json_t *sample_arg(struct gen *g,
                          const struct pipit_tool *t,
                          const char *name,
                          char kind,
                          bool small,
                          bool outside,
                          bool *was_outside,
                          char *said,
                          size_t size) {
    const struct pipit_schema *s = prop_schema(t, name);
    said[0] = '\0';
    if (s == NULL) {
        return NULL;
    }
    if (s->type == PIPIT_SCHEMA_BOOLEAN) {
        bool v = train_rng_below(&g->rng, 2) != 0;
        pipit_format(said, size, "%s", v ? "on" : "off");
        return json_boolean(v);
    }
    if (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0) {
        const char *v = s->enum_str[train_rng_below(&g->rng, (uint32_t)s->n_enum)];
        /* a third of the time a word the description gives for it ("eco" of "economy") */
        char alt[8][PIPIT_SCHEMA_WORD_CAP];
        int n_alt = train_rng_below(&g->rng, 3) == 0 ? pipit_schema_value_words(s, v, alt, 8) : 0;
        if (n_alt > 0) {
            pipit_format(said, size, "%s", alt[train_rng_below(&g->rng, (uint32_t)n_alt)]);
        } else {
            words_of(v, said, size);
        }
        return json_string(v);
    }
    if ((s->type == PIPIT_SCHEMA_INTEGER || s->type == PIPIT_SCHEMA_NUMBER) && s->n_enum > 0) {
        const json_t *v = s->enum_json[train_rng_below(&g->rng, (uint32_t)s->n_enum)];
        say_num(g, json_number_value(v), said, size);
        return json_deep_copy(v);
    }
    if (!is_num(s)) {
        return NULL;
    }
    bool integer = s->type == PIPIT_SCHEMA_INTEGER;
    int sign = kind == 'p' ? 1 : kind == 'm' ? -1 : 0;
    double v;
    if (small) { /* a relative change: a few units of the range */
        double lo, hi;
        range_of(s, &lo, &hi);
        double top = floor((hi - lo) / 5);
        v = sample_in(g, 1, top > 2 ? top : 2, integer);
        v = sign < 0 ? -v : v;
        goto have;
    }
    if (outside && sample_outside(g, s, sign, &v)) {
        *was_outside = true;
    } else {
        double lo, hi;
        range_of(s, &lo, &hi);
        if (sign > 0) {
            lo = lo > 0 ? lo : (integer ? 1 : 0.5);
        } else if (sign < 0) {
            hi = hi < 0 ? hi : (integer ? -1 : -0.5);
            double a = -hi, b = -lo;
            v = -sample_in(g, a, b, integer);
            goto have;
        }
        v = sample_in(g, lo, hi, integer);
    }
have:
    say_num(g, sign < 0 ? -v : v, said, size);
    return num_json(s, v);
}

/* "a"/"an" before a slot's word as the word wants it ("log an {priority} ticket" said with
 * "medium": "a medium"). */
static void fix_articles(char *text, size_t size) {
    for (char *p = text; *p != '\0'; p++) {
        bool start = p == text || p[-1] == ' ';
        if (!start || (p[0] != 'a' && p[0] != 'A')) {
            continue;
        }
        bool is_an = p[1] == 'n' && p[2] == ' ';
        if (!(p[1] == ' ' || is_an)) {
            continue;
        }
        char *w = p + (is_an ? 3 : 2);
        if (!isalpha((unsigned char)w[0])) {
            continue;
        }
        bool want_an = words_vowel_sound(w);
        size_t o = (size_t)(p - text);
        if (want_an && !is_an && strlen(text) + 2 <= size) {
            memmove(p + 2, p + 1, strlen(p + 1) + 1);
            p[1] = 'n';
        } else if (!want_an && is_an) {
            memmove(p + 1, p + 2, strlen(p + 2) + 1);
        }
        p = text + o;
    }
}

/* A value of enum argument `name` said as a word of its own: 'l' the success template's label
 * for it ("by car"), 'g' the verb of a gerund ("walk"). Sets it in `args`; false when the
 * argument has no such value. */
static bool sample_word(struct gen *g,
                        const struct pipit_tool *t,
                        const char *name,
                        char kind,
                        json_t *args,
                        char *said,
                        size_t size) {
    const struct pipit_schema *s = prop_schema(t, name);
    if (s == NULL || s->type != PIPIT_SCHEMA_STRING || s->n_enum == 0) {
        return false;
    }
    char vals[16][PG_LABEL], words[16][PG_LABEL];
    int n = 0;
    if (kind == 'l') {
        char lv[16][PG_LABEL], ll[16][PG_LABEL];
        int nl = label_map(t->success, name, lv, ll, 16);
        for (int i = 0; i < nl; i++) {
            for (size_t e = 0; e < s->n_enum; e++) {
                if (strcmp(s->enum_str[e], lv[i]) == 0) {
                    pipit_format(vals[n], PG_LABEL, "%s", lv[i]);
                    pipit_format(words[n++], PG_LABEL, "%s", ll[i]);
                    break;
                }
            }
        }
    } else {
        for (size_t e = 0; e < s->n_enum && n < 16; e++) {
            if (verb_of_gerund(s->enum_str[e], words[n], PG_LABEL)) {
                pipit_format(vals[n++], PG_LABEL, "%s", s->enum_str[e]);
            }
        }
    }
    if (n == 0) {
        return false;
    }
    int i = (int)train_rng_below(&g->rng, (uint32_t)n);
    json_object_set_new(args, name, json_string(vals[i]));
    pipit_format(said, size, "%s", words[i]);
    return true;
}

/* Fill template `tp`. `noun_val` (may be NULL) forces the noun's placeholder argument;
 * `it` says "it" instead of the noun. False when the template cannot be filled in this state. */
static bool fill(struct gen *g,
                 const struct tpl *tp,
                 bool outside,
                 const char *noun_val,
                 bool it,
                 struct filled *f) {
    const struct pipit_tool *t = tool_at(g, tp->tool);
    f->args = json_deep_copy(tp->fixed);
    f->outside = false;
    f->text[0] = '\0';
    if (f->args == NULL) {
        return false;
    }
    /* the noun: its placeholder argument decides the key */
    const struct pipit_pack_key *key = NULL;
    if (tp->noun != NULL) {
        const char *val = noun_val;
        if (tp->noun->key_arg != NULL) {
            const json_t *fx = json_object_get(f->args, tp->noun->key_arg);
            if (val == NULL && json_is_string(fx)) {
                val = json_string_value(fx);
            }
            if (val == NULL) {
                const struct pipit_schema *s = prop_schema(t, tp->noun->key_arg);
                if (s == NULL || s->n_enum == 0) {
                    return false;
                }
                val = s->enum_str[train_rng_below(&g->rng, (uint32_t)s->n_enum)];
            }
            json_object_set_new(f->args, tp->noun->key_arg, json_string(val));
        }
        key = expand_key(g, tp->noun, val);
        if (key == NULL) {
            return false;
        }
    }
    struct strbuf b = {0};
    for (const char *p = tp->text; *p != '\0';) {
        if (*p != '{') {
            strbuf_add(&b, p, 1);
            p++;
            continue;
        }
        const char *e = strchr(p, '}');
        char said[96] = "";
        if (p[1] == '@') {
            if (it) {
                pipit_format(said, sizeof(said), "it");
            } else {
                key_name(g, key, said, sizeof(said));
            }
            if (b.data != NULL) {
                b.len = before_noun(b.data, b.len, said);
                b.data[b.len] = '\0';
            }
        } else if (p[1] == 'o' && p[2] == '}') {
            said[0] = '\0';
        } else if (p[2] == ':') {
            char name[80];
            pipit_format(name, sizeof(name), "%.*s", (int)(e - p - 3), p + 3);
            if (p[1] == 'f') {
                const json_t *o = json_object_get(f->args, name);
                json_t *v = sample_free(g, t, name, json_is_string(o) ? json_string_value(o) : "",
                                        said, sizeof(said));
                if (v == NULL) {
                    strbuf_free(&b);
                    return false;
                }
                json_object_set_new(f->args, name, v);
            } else if (p[1] == 'l' || p[1] == 'g') {
                if (!sample_word(g, t, name, p[1], f->args, said, sizeof(said))) {
                    strbuf_free(&b);
                    return false;
                }
            } else if (p[1] == 's') {
                const json_t *v = json_object_get(f->args, name);
                pipit_format(said, sizeof(said), "%s",
                             json_is_string(v) ? json_string_value(v) : "");
            } else {
                json_t *v = sample_arg(g, t, name, p[1], tp->kind == TK_REL, outside, &f->outside,
                                       said, sizeof(said));
                if (v == NULL) {
                    strbuf_free(&b);
                    return false;
                }
                json_object_set_new(f->args, name, v);
            }
        }
        strbuf_str(&b, said);
        p = e + 1;
    }
    pipit_format(f->text, sizeof(f->text), "%s", b.data != NULL ? b.data : "");
    strbuf_free(&b);
    fix_articles(f->text, sizeof(f->text));
    /* state-dependent answers */
    if (tp->kind != TK_CALL) {
        const struct pipit_schema *s = prop_schema(t, tp->arg);
        json_t *state = g->dev.ops != NULL ? g->dev.ops->get_state(g->dev.self) : NULL;
        const json_t *cur = key != NULL ? json_object_get(state, key->key) : NULL;
        bool ok = s != NULL && cur != NULL;
        if (ok && tp->kind == TK_TOGGLE) {
            json_object_set_new(f->args, tp->arg, json_boolean(!json_is_true(cur)));
        } else if (ok) {
            double lo, hi;
            range_of(s, &lo, &hi);
            lo = key->has_min && key->min > lo ? key->min : lo;
            hi = key->has_max && key->max < hi ? key->max : hi;
            double v = tp->kind == TK_MAX ? hi : lo;
            if (tp->kind == TK_REL) {
                const json_t *d = json_object_get(f->args, tp->arg);
                v = json_number_value(cur) + json_number_value(d);
                if (!f->outside && (v < lo || v > hi)) {
                    ok = false; /* a relative step past the range: not this state */
                }
            }
            if (ok) {
                json_object_set_new(f->args, tp->arg, num_json(s, v));
            }
        }
        json_decref(state);
        if (!ok) {
            return false;
        }
    }
    if (!f->outside) {
        char *a = json_dumps(f->args, JSON_COMPACT);
        size_t np = 0;
        bool valid = a != NULL && pipit_tool_check_args(t, f->args, NULL, 0, &np) == PIPIT_OK;
        free(a);
        if (!valid) {
            return false;
        }
    }
    return true;
}

static void filled_clear(struct filled *f) {
    json_decref(f->args);
    f->args = NULL;
}

/* ============================================================================
 * building the intents from the spec */

static struct intent *new_intent(struct gen *g, enum pg_cat cat, int weight) {
    if (g->n_int >= PG_MAX_INT) {
        return NULL;
    }
    struct intent *in = &g->in[g->n_int++];
    memset(in, 0, sizeof(*in));
    in->cat = cat;
    in->weight = weight;
    return in;
}

static struct tpl *add_tpl(struct intent *in, int tool, const char *text, const json_t *fixed) {
    if (in == NULL || in->n_tpl >= PG_MAX_TPL) {
        return NULL;
    }
    for (int i = 0; i < in->n_tpl; i++) {
        if (strcmp(in->tpl[i].text, text) == 0 && in->tpl[i].tool == tool &&
            json_equal(in->tpl[i].fixed, (json_t *)fixed)) {
            return NULL; /* once */
        }
    }
    struct tpl *tp = &in->tpl[in->n_tpl++];
    memset(tp, 0, sizeof(*tp));
    pipit_format(tp->text, sizeof(tp->text), "%s", text);
    tp->tool = tool;
    tp->fixed = fixed != NULL ? json_deep_copy(fixed) : json_object();
    tp->numeric =
        strstr(text, "{a:") != NULL || strstr(text, "{p:") != NULL || strstr(text, "{m:") != NULL;
    return tp;
}

/* Replace the whole word `word` in `text` (lowercase) by `slot`; false when absent. */
static bool slot_word(char *text, size_t size, const char *word, const char *slot) {
    size_t n = strlen(word);
    if (n == 0) {
        return false;
    }
    for (char *p = text; (p = strstr(p, word)) != NULL; p++) {
        bool before = p == text || !isalnum((unsigned char)p[-1]);
        bool after =
            !isalnum((unsigned char)p[n]) && !(p[n] == '.' && isdigit((unsigned char)p[n + 1]));
        if (p > text && (p[-1] == '{' || p[-1] == ':')) {
            continue;
        }
        if (before && after) {
            char rest[PG_TEXT];
            pipit_format(rest, sizeof(rest), "%s", p + n);
            size_t o = (size_t)(p - text);
            pipit_format(text + o, size - o, "%s%s", slot, rest);
            return true;
        }
    }
    return false;
}

/* The first string under `v` (depth <= 3) shaped like identifier `like` ("TM-1": the same
 * letters and dash, any digits), NULL when none. */
static const char *find_like(const json_t *v, const char *like, int depth) {
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        int n = id_shape(like);
        return n > 0 && id_shape(s) == n && strncasecmp(s, like, (size_t)n + 1) == 0 ? s : NULL;
    }
    if (depth <= 0) {
        return NULL;
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            const char *r = find_like(json_array_get(v, i), like, depth - 1);
            if (r != NULL) {
                return r;
            }
        }
    } else if (json_is_object(v)) {
        const char *k;
        const json_t *x;
        json_object_foreach((json_t *)v, k, x) {
            const char *r = find_like(x, like, depth - 1);
            if (r != NULL) {
                return r;
            }
        }
    }
    return NULL;
}

/* The thing an identifier argument names: "timer_id" -> "timer", "thread" -> "thread". */
static void id_noun(const char *arg, char *out, size_t size) {
    words_of(arg, out, size);
    char *id = strstr(out, " id");
    if (id != NULL && id[3] == '\0') {
        *id = '\0';
    }
}

/* A reference to an earlier result: "stop timer {f:timer_id}" -> "stop {r}" ("stop that
 * timer", "stop it"), answered with the identifier the last call's result gave. `text` has the
 * identifier as the slot {f:ARG}; the word before it, when it names the argument, goes too. */
static void
refer_template(struct gen *g, int tool, const char *text, const char *arg, const json_t *args) {
    char slot[96], noun[96], out[PG_TEXT];
    pipit_format(slot, sizeof(slot), "{f:%s}", arg);
    const char *at = strstr(text, slot);
    if (at == NULL) {
        return;
    }
    id_noun(arg, noun, sizeof(noun));
    size_t cut = (size_t)(at - text), nn = strlen(noun);
    if (cut >= nn + 1 && strncmp(at - nn - 1, noun, nn) == 0 && at[-1] == ' ') {
        cut -= nn + 1; /* "timer {f:timer_id}" */
    }
    pipit_format(out, sizeof(out), "%.*s{r}%s", (int)cut, text, at + strlen(slot));
    if (strstr(out, "{f:") != NULL || strstr(out, "{s:") != NULL) {
        return; /* one free value at a time */
    }
    struct tpl *tp = add_tpl(&g->in[g->refer], tool, out, args);
    if (tp != NULL) {
        const struct pipit_tool *t = tool_at(g, tool);
        for (size_t i = 0; i < t->params->n_props; i++) {
            if (strcmp(t->params->props[i].name, arg) == 0) {
                tp->arg = t->params->props[i].name; /* lives as long as the tool set */
            }
        }
        tp->producer = -1;
    }
}

/* Whether enum value `v` says a switch's side: "on"/"off", "enabled"/"disabled". */
static int switch_word(const char *v) {
    static const char *const ON[] = {"on", "enabled", "enable", "true", "yes"};
    static const char *const OFF[] = {"off", "disabled", "disable", "false", "no"};
    for (int i = 0; i < N_OF(ON); i++) {
        if (strcasecmp(v, ON[i]) == 0) {
            return 1;
        }
        if (strcasecmp(v, OFF[i]) == 0) {
            return 0;
        }
    }
    return -1;
}

/* More sayings of an example whose text says the value of enum argument `arg` as the slot
 * {a:arg}: the success template's words for the values ("{mode:driving=by car|...}": "... by
 * car", the value's word moved to the end when the label opens with a preposition, in its place
 * otherwise), and, for values that are gerunds and a place after "to", their verbs ("walk to
 * {place}", "drive me to {place}"). */
static void enum_variants(struct gen *g,
                          struct intent *in,
                          int tool,
                          const char *text,
                          const char *arg,
                          const json_t *fixed) {
    const struct pipit_tool *t = tool_at(g, tool);
    const struct pipit_schema *s = prop_schema(t, arg);
    char slot[96], out[PG_TEXT];
    pipit_format(slot, sizeof(slot), "{a:%s}", arg);
    const char *at = strstr(text, slot);
    if (s == NULL || at == NULL) {
        return;
    }
    char vals[16][PG_LABEL], labels[16][PG_LABEL];
    int nl = label_map(t->success, arg, vals, labels, 16);
    if (nl >= 2) {
        static const char *const PREP[] = {"by ", "on ", "in ", "at ", "with ", "for ", "via "};
        bool prep = false;
        for (int i = 0; i < N_OF(PREP); i++) {
            prep = prep || strncmp(labels[0], PREP[i], strlen(PREP[i])) == 0;
        }
        size_t cut = (size_t)(at - text), sl = strlen(slot);
        if (prep) {
            const char *rest = at + sl;
            rest += *rest == ' ' ? 1 : 0;
            cut -= cut > 0 && rest[0] == '\0' && text[cut - 1] == ' ' ? 1 : 0;
            pipit_format(out, sizeof(out), "%.*s%s {l:%s}", (int)cut, text, rest, arg);
        } else {
            pipit_format(out, sizeof(out), "%.*s{l:%s}%s", (int)cut, text, arg, at + sl);
        }
        struct tpl *tp = add_tpl(in, tool, out, fixed);
        if (tp != NULL) {
            tp->example = true;
        }
    }
    int n_ger = 0;
    for (size_t v = 0; v < s->n_enum; v++) {
        char verb[64];
        n_ger += verb_of_gerund(s->enum_str[v], verb, sizeof(verb)) ? 1 : 0;
    }
    const char *to = strstr(text, " to {f:");
    if (n_ger >= 2 && to != NULL) {
        static const char *const FRAMES[] = {" to ", " me to ", " over to "};
        const char *place = to + 4;
        const char *end = strchr(place, '}');
        for (int f = 0; f < N_OF(FRAMES) && end != NULL; f++) {
            pipit_format(out, sizeof(out), "{g:%s}%s%.*s", arg, FRAMES[f], (int)(end + 1 - place),
                         place);
            struct tpl *tp = add_tpl(in, tool, out, fixed);
            if (tp != NULL) {
                tp->example = true;
            }
        }
    }
}

/* Ways to ask for a thing by its name ("i need a flat white" / "i'd love a flat white"): an
 * example that opens with one is said with the others too. Generic English. */
static const char *const WANT_LEADS[] = {"i need",    "i'd love", "i'd like",  "can i get",
                                         "i want",    "give me",  "i'll have", "could i have",
                                         "i'll take", "get me"};

/* More sayings of an example's template `text` by its lead: a verb people use for another
 * ("find my {f:name}" -> "look for my {f:name}", src/verbbank.c) or a way of wanting
 * (WANT_LEADS). */
static void lead_variants(struct intent *in, int tool, const char *text, const json_t *fixed) {
    char out[PG_TEXT];
    for (int w = 0; w < N_OF(WANT_LEADS); w++) {
        size_t l = strlen(WANT_LEADS[w]);
        if (strncmp(text, WANT_LEADS[w], l) != 0 || text[l] != ' ') {
            continue;
        }
        for (int k = 0; k < N_OF(WANT_LEADS); k++) {
            pipit_format(out, sizeof(out), "%s%s", WANT_LEADS[k], text + l);
            struct tpl *tp = add_tpl(in, tool, out, fixed);
            if (tp != NULL) {
                tp->example = true;
            }
        }
        return;
    }
    size_t vl = 0;
    const char *lead = verbbank_lead(text, &vl);
    const char *alt[VERBBANK_MAX_ALT];
    /* only before a thing: "make the coffee" / "create the coffee", not "make it milder" */
    static const char *const THING[] = {" the ", " a ", " an ", " my ", " {"};
    bool thing = false;
    for (int k = 0; lead != NULL && k < N_OF(THING); k++) {
        thing = thing || strncmp(text + vl, THING[k], strlen(THING[k])) == 0;
    }
    int n = thing ? verbbank_alternatives(lead, alt) : 0;
    for (int k = 0; k < n; k++) {
        pipit_format(out, sizeof(out), "%s%s", alt[k], text + vl);
        struct tpl *tp = add_tpl(in, tool, out, fixed);
        if (tp != NULL) {
            tp->example = true;
        }
    }
}

/* A template from one of the tool's examples: the numbers and free strings it says become
 * slots. An enum value said is a slot too ("walking directions to {place}", "i need a
 * {drink}"), with enum_variants' other sayings; an example of enums only is also kept as
 * written, since its other words may carry the value ("it's dark out, night setting"). */
static void
example_template(struct gen *g, struct intent *in, int tool, const struct pipit_pack_example *ex) {
    const struct pipit_tool *t = tool_at(g, tool);
    char text[PG_TEXT];
    pipit_format(text, sizeof(text), "%s", ex->say);
    for (char *p = text; *p; p++) {
        *p = (char)tolower((unsigned char)*p);
        if (*p == '{' || *p == '}' || *p == '"' || *p == '\\') {
            return;
        }
    }
    json_t *fixed = json_deep_copy(ex->args);
    const char *enum_arg = NULL; /* the first enum argument the sentence says */
    int others = 0;              /* arguments of the example that are not string enums */
    for (size_t i = 0; i < t->params->n_props; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        bool is_enum = s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0;
        others += !is_enum && json_object_get(ex->args, t->params->props[i].name) != NULL ? 1 : 0;
    }
    if (others == 0) {
        /* enums only: the sentence as written too, its other words may carry the value */
        struct tpl *tp = add_tpl(in, tool, text, ex->args);
        if (tp != NULL) {
            tp->example = true;
        }
    }
    for (size_t i = 0; i < t->params->n_props; i++) {
        const char *name = t->params->props[i].name;
        const struct pipit_schema *s = t->params->props[i].schema;
        const json_t *v = json_object_get(ex->args, name);
        if (v == NULL) {
            continue;
        }
        char slot[96], w[96];
        bool done = false;
        if (is_num(s) && json_is_number(v)) {
            double x = json_number_value(v);
            double mag = fabs(x);
            bool can_neg = s->has_min ? s->min < 0 : true;
            char kind = !can_neg ? 'a' : x > 0 ? 'p' : 'm';
            if (x == 0) {
                continue;
            }
            pipit_format(slot, sizeof(slot), "{%c:%s}", kind, name);
            fmt_num(kind == 'a' ? x : mag, w, sizeof(w));
            done = slot_word(text, sizeof(text), w, slot);
            if (!done && floor(mag) == mag && int_words((long)mag, w, sizeof(w))) {
                done = slot_word(text, sizeof(text), w, slot);
            }
        } else if (s->type == PIPIT_SCHEMA_BOOLEAN) {
            pipit_format(slot, sizeof(slot), "{a:%s}", name);
            done = slot_word(text, sizeof(text), json_is_true(v) ? "on" : "off", slot);
        } else if (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0 && json_is_string(v)) {
            /* an enum value the sentence says ("walking directions to ..."): every value */
            pipit_format(slot, sizeof(slot), "{a:%s}", name);
            words_of(json_string_value(v), w, sizeof(w));
            done = slot_word(text, sizeof(text), w, slot);
            enum_arg = done && enum_arg == NULL ? name : enum_arg;
        } else if (s->type == PIPIT_SCHEMA_STRING && s->n_enum == 0 && json_is_string(v) &&
                   json_string_length(v) > 0 && json_string_length(v) < 80) {
            /* a free string the sentence says: resampled, its example value kept for its kind */
            pipit_format(slot, sizeof(slot), "{f:%s}", name);
            pipit_format(w, sizeof(w), "%s", json_string_value(v));
            for (char *q = w; *q; q++) {
                *q = (char)tolower((unsigned char)*q);
            }
            bool said = slot_word(text, sizeof(text), w, slot);
            if (!said && strlen(w) == 5 && w[0] == '0' && w[2] == ':') {
                said = slot_word(text, sizeof(text), w + 1, slot); /* "07:15" said "7:15" */
            }
            if (said && id_shape(json_string_value(v)) > 0 && g->refer >= 0) {
                refer_template(g, tool, text, name, ex->args);
            }
            (void)said; /* the value stays in `fixed`: the slot reads its kind from it */
        }
        if (done) {
            json_object_del(fixed, name);
        }
    }
    struct tpl *tp = add_tpl(in, tool, text, fixed);
    if (tp != NULL) {
        tp->example = true;
    }
    if (enum_arg != NULL) {
        enum_variants(g, in, tool, text, enum_arg, fixed);
    }
    lead_variants(in, tool, text, fixed);
    json_decref(fixed);
}

/* Whether the tool's one required argument is a number ("timer 10 minutes" names it). */
static bool is_num_tool(const struct pipit_tool *t) {
    int n = 0, num = 0;
    for (size_t i = 0; i < t->params->n_props; i++) {
        if (t->params->props[i].required) {
            n++;
            num += is_num(t->params->props[i].schema);
        }
    }
    return n == 1 && num == 1;
}

/* Whether every required argument of the tool is in `have` (names joined by '|'). */
static bool covers(const struct pipit_tool *t, const char *const *have, int n) {
    for (size_t i = 0; i < t->params->n_props; i++) {
        if (!t->params->props[i].required) {
            continue;
        }
        bool ok = false;
        for (int k = 0; k < n; k++) {
            ok = ok || (have[k] != NULL && strcmp(have[k], t->params->props[i].name) == 0);
        }
        if (!ok) {
            return false;
        }
    }
    return true;
}

static const struct pipit_pack_key *
any_expansion(const struct gen *g, const struct pipit_tool *t, const struct pipit_effect_key *ek) {
    if (ek->key_arg == NULL) {
        return pipit_pack_find_key(g->pk, ek->key);
    }
    const struct pipit_schema *s = prop_schema(t, ek->key_arg);
    return s != NULL && s->n_enum > 0 ? expand_key(g, ek, s->enum_str[0]) : NULL;
}

/* Whether some tool steps the key `ek` names. */
static bool key_stepped(const struct gen *g, const struct pipit_effect_key *ek) {
    for (size_t i = 0; i < g->ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(g->ts, i);
        if (tp != NULL && tp->has_step && strcmp(tp->step.key.key, ek->key) == 0) {
            return true;
        }
    }
    return false;
}

static void add_patterns(struct intent *in,
                         int tool,
                         const char *const *pats,
                         int n,
                         const struct pipit_effect_key *noun,
                         const char *arg,
                         const char *unit,
                         enum tpl_kind kind) {
    for (int i = 0; i < n; i++) {
        char text[PG_TEXT];
        /* {A} is the argument slot, {U} the unit (on every other pattern) */
        struct strbuf b = {0};
        for (const char *p = pats[i]; *p;) {
            if (strncmp(p, "{A", 2) == 0) {
                char k = p[2] == '+' ? 'p' : p[2] == '-' ? 'm' : 'a';
                strbuf_printf(&b, "{%c:%s}", k, arg);
                p = strchr(p, '}') + 1;
            } else if (strncmp(p, "{U}", 3) == 0) {
                strbuf_str(&b, unit != NULL && i % 2 == 0 ? unit : "");
                p += 3;
            } else {
                strbuf_add(&b, p, 1);
                p++;
            }
        }
        pipit_format(text, sizeof(text), "%s", b.data != NULL ? b.data : "");
        strbuf_free(&b);
        struct tpl *tp = add_tpl(in, tool, text, NULL);
        if (tp != NULL) {
            tp->noun = noun;
            tp->kind = kind;
            tp->arg = arg;
        }
    }
}

static const char *const SET_NUM[] = {
    "set the {@} to {A}{U}",
    "{@} to {A}{U}",
    "put the {@} on {A}{U}",
    "change the {@} to {A}{U}",
    "{@} at {A}{U}",
    "make the {@} {A}{U}",
    "i want the {@} at {A}{U}",
    "{@} {A}{U}",
    "adjust the {@} to {A}{U}",
    "bring the {@} to {A}{U}",
    "{A}{U} {@}",
    "{@} {A}{U} please",
    "go to {A}{U} {@}",
    "the {@} should be {A}{U}",
    "set {@} {A}{U}",
    "can i get {A}{U} {@}",
};
static const char *const SET_ENUM[] = {
    "set the {@} to {A}",
    "{@} {A}",
    "{A} {@}",
    "switch the {@} to {A}",
    "change the {@} to {A}",
    "make the {@} {A}",
    "i'd like the {@} {A}",
    "{@} on {A}",
    "put the {@} on {A}",
    "{@} to {A}",
    "use {A} {@}",
    "i want {A} {@}",
    "{A} {@} please",
    "set {@} {A}",
    "let's try {A}",
};
/* An enum value said alone ("go with cloudy"): only for a value no other tool takes. */
static const char *const SET_BARE[][2] = {{"go with ", ""},
                                          {"switch to ", ""},
                                          {"", " please"},
                                          {"let's try ", ""}};

static const char *const SET_BOOL[] = {
    "turn {A} the {@}",   "turn the {@} {A}", "{@} {A}",          "switch {A} the {@}",
    "switch the {@} {A}", "put the {@} {A}",  "{A} with the {@}", "the {@} {A}",
};
/* A switch said by its verb, whatever the noun: the verb carries the polarity. */
static const char *const SAY_ON[] = {
    "turn on the {@}",        "switch on the {@}", "enable the {@}",
    "activate the {@}",       "start the {@}",     "{@} on",
    "i want the {@} on",      "use the {@}",       "bring up the {@}",
    "get the {@} going",      "give me the {@}",   "put the {@} on",
    "{@} on please",          "fire up the {@}",   "let's have the {@} on",
    "the {@} needs to be on",
};
static const char *const SAY_OFF[] = {
    "turn off the {@}",   "switch off the {@}",   "disable the {@}",
    "deactivate the {@}", "stop the {@}",         "{@} off",
    "kill the {@}",       "lose the {@}",         "no {@}",
    "no more {@}",        "get rid of the {@}",   "cut the {@}",
    "shut off the {@}",   "i don't want the {@}", "drop the {@}",
    "{@} off please",
};
static const char *const TOGGLE[] = {"toggle the {@}", "flip the {@}", "toggle {@}",
                                     "switch the {@} the other way", "flip {@}"};
static const char *const MAXP[] = {"{@} all the way up",     "max out the {@}",
                                   "{@} as high as it goes", "turn the {@} all the way up",
                                   "{@} to the max",         "full {@}"};
static const char *const MINP[] = {"{@} all the way down", "{@} as low as it goes",
                                   "minimum {@}",          "turn the {@} all the way down",
                                   "{@} to the minimum",   "lowest {@}"};
static const char *const STEP_UP[] = {"turn the {@} up {A+}{U}", "raise the {@} by {A+}{U}",
                                      "{@} up {A+}{U}",          "increase the {@} by {A+}{U}",
                                      "{@} {A+}{U} higher",      "push the {@} up by {A+}{U}"};
static const char *const STEP_DOWN[] = {"turn the {@} down {A-}{U}", "lower the {@} by {A-}{U}",
                                        "{@} down {A-}{U}",          "decrease the {@} by {A-}{U}",
                                        "{@} {A-}{U} lower",         "drop the {@} by {A-}{U}"};
static const char *const STEP_UP0[] = {"turn the {@} up",     "raise the {@}",
                                       "{@} up a bit",        "increase the {@}",
                                       "{@} a little higher", "bump up the {@}"};
static const char *const STEP_DOWN0[] = {"turn the {@} down",  "lower the {@}",
                                         "{@} down a bit",     "decrease the {@}",
                                         "{@} a little lower", "bring the {@} down"};

/* The switch frames of the key `noun` ("kill the {@}"), each a call with `fixed`. */
static void add_polarity(struct intent *in,
                         int tool,
                         const struct pipit_effect_key *noun,
                         bool on,
                         const json_t *fixed) {
    const char *const *pats = on ? SAY_ON : SAY_OFF;
    int n = on ? N_OF(SAY_ON) : N_OF(SAY_OFF);
    for (int i = 0; i < n; i++) {
        struct tpl *tp = add_tpl(in, tool, pats[i], fixed);
        if (tp != NULL) {
            tp->noun = noun;
        }
    }
}

/* Whether only one argument of the pack's tools takes the string `v` (then "go with v" names
 * its tool). */
static bool enum_value_unique(const struct gen *g, const char *v) {
    int n = 0;
    for (size_t i = 0; i < g->ts->n_tools; i++) {
        const struct pipit_tool *t = &g->ts->tools[i];
        for (size_t p = 0; p < t->params->n_props; p++) {
            const struct pipit_schema *s = t->params->props[p].schema;
            for (size_t e = 0; s->type == PIPIT_SCHEMA_STRING && e < s->n_enum; e++) {
                n += strcmp(s->enum_str[e], v) == 0 ? 1 : 0;
            }
        }
    }
    return n == 1 && switch_word(v) < 0;
}

/* A set effect that switches a boolean key through a constant (pause_music: playing=false) or an
 * enum argument's map (record_video: action start -> recording=true): the switch frames with the
 * arguments that make that side. Only for tools with no other required argument. */
static void
polarity_of_set(struct gen *g, struct intent *in, int ti, const struct pipit_effect_set *es) {
    const struct pipit_tool *t = tool_at(g, ti);
    const struct pipit_pack_key *pk = any_expansion(g, t, &es->key);
    if (pk == NULL || pk->type != PIPIT_SCHEMA_BOOLEAN) {
        return;
    }
    if (es->value.arg == NULL) {
        const char *have[1] = {es->key.key_arg};
        if (json_is_boolean(es->value.constant) && covers(t, have, 1)) {
            json_t *none = json_object();
            add_polarity(in, ti, &es->key, json_is_true(es->value.constant), none);
            json_decref(none);
        }
        return;
    }
    const char *have[2] = {es->value.arg, es->key.key_arg};
    const struct pipit_schema *s = prop_schema(t, es->value.arg);
    if (s == NULL || s->type != PIPIT_SCHEMA_STRING || s->n_enum == 0 || !covers(t, have, 2)) {
        return;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)es->value.map, key, v) {
        if (json_is_boolean(v)) {
            json_t *fx = json_pack("{s:s}", es->value.arg, key);
            add_polarity(in, ti, &es->key, json_is_true(v), fx);
            json_decref(fx);
        }
    }
}

static const char *const VERB_FRAMES[] = {
    "{v} the {n}",        "{v} {a}{n}",          "{v} the {n} now", "go ahead and {v} the {n}",
    "can you {v} {a}{n}", "time to {v} the {n}",
};

/* A tool without arguments named verb_noun ("take_photo"): its verb and the verbs people use for
 * it, in a few frames. */
static void verb_frames(struct intent *in,
                        int tool,
                        const char *verb,
                        size_t verb_len,
                        const char *noun,
                        const char *art) {
    const char *verbs[VERBBANK_MAX_ALT + 1];
    char own[64];
    pipit_format(own, sizeof(own), "%.*s", (int)verb_len, verb);
    verbs[0] = own;
    int n_verbs = 1 + verbbank_alternatives(own, verbs + 1);
    for (int j = 0; j < n_verbs; j++) {
        for (int f = 0; f < N_OF(VERB_FRAMES); f++) {
            struct strbuf b = {0};
            for (const char *p = VERB_FRAMES[f]; *p;) {
                if (strncmp(p, "{v}", 3) == 0) {
                    strbuf_str(&b, verbs[j]);
                    p += 3;
                } else if (strncmp(p, "{n}", 3) == 0) {
                    strbuf_str(&b, noun);
                    p += 3;
                } else if (strncmp(p, "{a}", 3) == 0) {
                    strbuf_str(&b, art);
                    p += 3;
                } else {
                    strbuf_add(&b, p, 1);
                    p++;
                }
            }
            add_tpl(in, tool, b.data != NULL ? b.data : "", NULL);
            strbuf_free(&b);
        }
    }
}

/* The numeric argument of `t` that is not the noun's placeholder, for the relative intent. */
static void build_tool(struct gen *g, int ti) {
    const struct pipit_tool *t = tool_at(g, ti);
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(g->ts, (size_t)ti);
    if (pipit_toolset_is_cloud(g->ts, (size_t)ti) || tp == NULL) {
        return;
    }
    struct intent *in = new_intent(g, PG_SINGLE, 6);
    if (in == NULL) {
        return;
    }
    g->single_of[ti] = g->n_int - 1;
    for (size_t e = 0; e < tp->n_examples; e++) {
        example_template(g, in, ti, &tp->examples[e]);
    }
    struct intent *rel = NULL;
    /* set effects: a key's names with a verb */
    for (size_t k = 0; k < tp->n_set; k++) {
        const struct pipit_effect_set *es = &tp->set[k];
        const char *arg = es->value.arg;
        if (arg == NULL || es->value.map != NULL) {
            polarity_of_set(g, in, ti, es);
            continue;
        }
        const char *have[2] = {arg, es->key.key_arg};
        if (!covers(t, have, 2)) {
            continue;
        }
        const struct pipit_schema *s = prop_schema(t, arg);
        const struct pipit_pack_key *pk = any_expansion(g, t, &es->key);
        if (s == NULL || pk == NULL) {
            continue;
        }
        if (s->type == PIPIT_SCHEMA_BOOLEAN) {
            add_patterns(in, ti, SET_BOOL, N_OF(SET_BOOL), &es->key, arg, NULL, TK_CALL);
            for (int side = 0; side < 2; side++) {
                json_t *fx = json_pack("{s:b}", arg, side);
                add_polarity(in, ti, &es->key, side != 0, fx);
                json_decref(fx);
            }
            if (rel == NULL) {
                rel = new_intent(g, PG_RELATIVE, 2);
            }
            add_patterns(rel, ti, TOGGLE, N_OF(TOGGLE), &es->key, arg, NULL, TK_TOGGLE);
        } else if (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0) {
            add_patterns(in, ti, SET_ENUM, N_OF(SET_ENUM), &es->key, arg, NULL, TK_CALL);
            for (size_t v = 0; v < s->n_enum; v++) {
                if (enum_value_unique(g, s->enum_str[v])) {
                    char w[96], text[PG_TEXT];
                    words_of(s->enum_str[v], w, sizeof(w));
                    json_t *fx = json_pack("{s:s}", arg, s->enum_str[v]);
                    for (int f = 0; f < 2; f++) {
                        const char *const *fr = SET_BARE[(v + 2 * (size_t)f) % 4];
                        pipit_format(text, sizeof(text), "%s%s%s", fr[0], w, fr[1]);
                        struct tpl *x = add_tpl(in, ti, text, fx);
                        if (x != NULL) {
                            x->noun = &es->key;
                        }
                    }
                    json_decref(fx);
                }
                int side = switch_word(s->enum_str[v]);
                if (side >= 0) {
                    json_t *fx = json_pack("{s:s}", arg, s->enum_str[v]);
                    add_polarity(in, ti, &es->key, side != 0, fx);
                    json_decref(fx);
                }
            }
        } else if (is_num(s)) {
            add_patterns(in, ti, SET_NUM, N_OF(SET_NUM), &es->key, arg, pk->words.unit, TK_CALL);
            if (rel == NULL) {
                rel = new_intent(g, PG_RELATIVE, 2);
            }
            add_patterns(rel, ti, MAXP, N_OF(MAXP), &es->key, arg, NULL, TK_MAX);
            add_patterns(rel, ti, MINP, N_OF(MINP), &es->key, arg, NULL, TK_MIN);
            if (!key_stepped(g, &es->key)) {
                add_patterns(rel, ti, STEP_UP, N_OF(STEP_UP), &es->key, arg, pk->words.unit,
                             TK_REL);
                add_patterns(rel, ti, STEP_DOWN, N_OF(STEP_DOWN), &es->key, arg, pk->words.unit,
                             TK_REL);
            }
        }
    }
    /* a step effect: up and down */
    if (tp->has_step) {
        const struct pipit_effect_step *st = &tp->step;
        const struct pipit_pack_key *pk = any_expansion(g, t, &st->key);
        if (pk != NULL && st->by.arg != NULL && st->by.map == NULL && st->sign.arg == NULL) {
            const char *have[2] = {st->by.arg, st->key.key_arg};
            if (covers(t, have, 2)) {
                add_patterns(in, ti, STEP_UP, N_OF(STEP_UP), &st->key, st->by.arg, pk->words.unit,
                             TK_CALL);
                add_patterns(in, ti, STEP_DOWN, N_OF(STEP_DOWN), &st->key, st->by.arg,
                             pk->words.unit, TK_CALL);
            }
        } else if (pk != NULL && st->by.arg == NULL && st->sign.arg != NULL &&
                   st->sign.map != NULL) {
            const char *have[2] = {st->sign.arg, st->key.key_arg};
            if (covers(t, have, 2)) {
                const char *key;
                json_t *v;
                json_object_foreach((json_t *)st->sign.map, key, v) {
                    json_t *fx = json_pack("{s:s}", st->sign.arg, key);
                    const char *const *pats = json_number_value(v) > 0 ? STEP_UP0 : STEP_DOWN0;
                    for (int i = 0; i < N_OF(STEP_UP0); i++) {
                        struct tpl *x = add_tpl(in, ti, pats[i], fx);
                        if (x != NULL) {
                            x->noun = &st->key;
                        }
                    }
                    /* the value's own word: "a bit dimmer", "{room} {value}" */
                    char w[64], text[PG_TEXT];
                    words_of(key, w, sizeof(w));
                    pipit_format(text, sizeof(text), "a bit %s", w);
                    if (st->key.key_arg == NULL) {
                        add_tpl(in, ti, text, fx);
                    } else {
                        pipit_format(text, sizeof(text), "a bit %s in the {a:%s}", w,
                                     st->key.key_arg);
                        add_tpl(in, ti, text, fx);
                        pipit_format(text, sizeof(text), "make the {a:%s} %s", st->key.key_arg, w);
                        add_tpl(in, ti, text, fx);
                        pipit_format(text, sizeof(text), "{a:%s} a little %s", st->key.key_arg, w);
                        add_tpl(in, ti, text, fx);
                    }
                    json_decref(fx);
                }
            }
        }
    }
    /* the tool's own name: "cancel timer", "cancel the timer", with its arguments */
    char nw[96];
    words_of(t->name, nw, sizeof(nw));
    const char *sp = strchr(nw, ' ');
    struct strbuf args = {0}, args2 = {0};
    bool ok = true;
    json_t *kinds = json_object(); /* free strings: an example's value tells their kind */
    for (size_t i = 0; i < t->params->n_props && ok; i++) {
        const struct pipit_schema *s = t->params->props[i].schema;
        if (!t->params->props[i].required) {
            continue;
        }
        char an[96];
        words_of(t->params->props[i].name, an, sizeof(an));
        if (s->type == PIPIT_SCHEMA_STRING && s->n_enum == 0) {
            const json_t *v = NULL;
            for (size_t e = 0; tp != NULL && e < tp->n_examples && v == NULL; e++) {
                v = json_object_get(tp->examples[e].args, t->params->props[i].name);
                v = json_is_string(v) ? v : NULL;
            }
            json_object_set_new(kinds, t->params->props[i].name,
                                json_string(v != NULL ? json_string_value(v) : ""));
            strbuf_printf(&args, " {f:%s}", t->params->props[i].name);
            strbuf_printf(&args2, " {f:%s}", t->params->props[i].name);
        } else if (is_num(s) || (s->type == PIPIT_SCHEMA_STRING && s->n_enum > 0) ||
                   s->type == PIPIT_SCHEMA_BOOLEAN) {
            strbuf_printf(&args, " {a:%s}", t->params->props[i].name);
            if (is_num(s)) {
                strbuf_printf(&args2, " {a:%s} %s", t->params->props[i].name, an);
            } else {
                strbuf_printf(&args2, " {a:%s}", t->params->props[i].name);
            }
        } else {
            ok = false;
        }
    }
    if (ok) {
        char text[PG_TEXT];
        const char *a1 = args.data != NULL ? args.data : "",
                   *a2 = args2.data != NULL ? args2.data : "";
        pipit_format(text, sizeof(text), "%s%s", nw, a1);
        add_tpl(in, ti, text, kinds);
        pipit_format(text, sizeof(text), "%s%s", nw, a2);
        add_tpl(in, ti, text, kinds);
        if (sp != NULL) {
            /* a noun that is a word ("timer", not "to" of navigate_to); "an" before a vowel;
             * "the" for a plural ("photos") */
            const char *noun = sp + 1;
            size_t nl = strlen(noun), fw = strcspn(noun, " ");
            static const char *const SMALL[] = {"to",   "for",  "on", "off", "in",   "at",
                                                "with", "from", "by", "up",  "down", "of"};
            bool word = nl > 2;
            for (int k = 0; k < N_OF(SMALL); k++) {
                word = word && !(fw == strlen(SMALL[k]) && strncmp(noun, SMALL[k], fw) == 0);
            }
            if (word) {
                pipit_format(text, sizeof(text), "%.*s the%s%s", (int)(sp - nw), nw, sp, a2);
                add_tpl(in, ti, text, kinds);
            }
            /* how people ask for a thing with a verb and a noun: "set a timer for 10 minutes",
             * "a timer for 10 minutes", "timer 10 minutes" */
            const char *art = noun[nl - 1] == 's'        ? "the "
                              : strchr("aeiou", noun[0]) ? "an "
                                                         : "a ";
            const char *frames[3][2] = {{art, " for"}, {art, ""}, {"my ", ""}};
            for (int f = 0; f < 3 && word && a2[0] != '\0'; f++) {
                pipit_format(text, sizeof(text), "%.*s %s%s%s%s", (int)(sp - nw), nw, frames[f][0],
                             noun, frames[f][1], a2);
                add_tpl(in, ti, text, kinds);
            }
            const char *bare[3][2] = {{"", ""}, {art, " for"}, {"i need ", " for"}};
            for (int f = 0; f < 3 && word && a2[0] != '\0' && is_num_tool(t); f++) {
                pipit_format(text, sizeof(text), "%s%s%s%s%s", bare[f][0], f == 2 ? art : "", noun,
                             bare[f][1], a2);
                add_tpl(in, ti, text, kinds);
            }
            if (t->params->n_props == 0 && word) {
                verb_frames(in, ti, nw, (size_t)(sp - nw), noun, art);
            }
        }
        if (t->params->n_props == 0 && t->description != NULL) {
            char d[PG_TEXT];
            pipit_format(d, sizeof(d), "%s", t->description);
            for (char *p = d; *p; p++) {
                *p = (char)tolower((unsigned char)*p);
            }
            size_t n = strlen(d);
            while (n > 0 && (d[n - 1] == '.' || d[n - 1] == ' ')) {
                d[--n] = '\0';
            }
            if (strpbrk(d, "{}\"\\(") == NULL) {
                add_tpl(in, ti, d, NULL);
            }
        }
    }
    /* the pack's own command verbs ("router": {"verbs": ["text"]}) for the tools whose name or
     * description says the verb ("Send a text message"): "text {recipient} {body}" */
    if (ok) {
        char desc[PG_TEXT];
        words_of(t->description != NULL ? t->description : "", desc, sizeof(desc));
        for (size_t v = 0; v < g->pk->n_verbs; v++) {
            char probe[PG_TEXT], probe2[PG_TEXT], text[PG_TEXT];
            pipit_format(probe, sizeof(probe), "%s", desc);
            pipit_format(probe2, sizeof(probe2), "%s", nw);
            bool named = prop_schema(t, g->pk->verbs[v]) != NULL; /* "text" of append_note */
            if (named || (!slot_word(probe, sizeof(probe), g->pk->verbs[v], "") &&
                          !slot_word(probe2, sizeof(probe2), g->pk->verbs[v], ""))) {
                continue;
            }
            const char *a1 = args.data != NULL ? args.data : "";
            pipit_format(text, sizeof(text), "%s%s", g->pk->verbs[v], a1);
            add_tpl(in, ti, text, kinds);
        }
    }
    json_decref(kinds);
    strbuf_free(&args);
    strbuf_free(&args2);
    if (in->n_tpl == 0) {
        g->n_int--;
        g->single_of[ti] = -1;
    }
}

/* ============================================================================
 * phrase-bank intents */

enum bank {
    BANK_NONE = 0,
    BANK_CHAT,
    BANK_UNSUP,
    BANK_UNDO,
    BANK_CLOUD,
    BANK_RETRY,
    BANK_AGAIN,
    BANK_MORE,
    BANK_OTHER,
    BANK_MAKE,
    BANK_SAME,
    BANK_CONNECT,
    BANK_N,
};

struct banks {
    int at[BANK_N];          /* intent index of each bank, -1 when absent */
    int thing[N_OF(THINGS)]; /* THINGS the pack does not name */
    int n_thing;
};

/* Lowercase words of the pack (names, descriptions, enum values, key words, examples). */
static bool pack_says(const struct gen *g, const char *word) {
    size_t n = strlen(word);
    char buf[1024];
    for (size_t i = 0; i < g->ts->n_tools; i++) {
        const struct pipit_tool *t = tool_at(g, (int)i);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(g->ts, i);
        const char *texts[3] = {t->name, t->description, NULL};
        for (int k = 0; k < 2; k++) {
            words_of(texts[k] != NULL ? texts[k] : "", buf, sizeof(buf));
            if (slot_word(buf, sizeof(buf), word, "")) {
                return true;
            }
        }
        for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
            words_of(tp->examples[e].say, buf, sizeof(buf));
            if (slot_word(buf, sizeof(buf), word, "")) {
                return true;
            }
        }
        for (size_t p = 0; p < t->params->n_props; p++) {
            const struct pipit_schema *s = t->params->props[p].schema;
            for (size_t v = 0; v < s->n_enum && s->enum_str != NULL; v++) {
                words_of(s->enum_str[v], buf, sizeof(buf));
                if (slot_word(buf, sizeof(buf), word, "")) {
                    return true;
                }
            }
        }
    }
    for (size_t k = 0; k < g->pk->n_keys; k++) {
        const struct pipit_pack_key *pk = &g->pk->keys[k];
        words_of(pk->key, buf, sizeof(buf));
        bool hit = slot_word(buf, sizeof(buf), word, "");
        if (!hit && pk->words.names != NULL) {
            words_of(pk->words.names, buf, sizeof(buf));
            for (char *p = buf; *p; p++) {
                *p = *p == '|' ? ' ' : *p;
            }
            hit = slot_word(buf, sizeof(buf), word, "");
        }
        if (hit) {
            return true;
        }
    }
    (void)n;
    return false;
}

/* Whether a request shares a content word with the pack (then the pack may well do it). */
static bool near_pack(const struct gen *g, const char *text) {
    static const char *const GENERIC[] = {
        "turn",    "make",  "start", "open",   "play",   "call", "send", "take",
        "book",    "order", "find",  "share",  "what",   "read", "with", "from",
        "this",    "that",  "show",  "more",   "about",  "much", "does", "tomorrow",
        "morning", "year",  "power", "report", "history"};
    char w[64];
    for (const char *p = text; *p;) {
        while (*p && !isalpha((unsigned char)*p)) {
            p++;
        }
        size_t n = 0;
        while (isalpha((unsigned char)p[n]) && n + 1 < sizeof(w)) {
            w[n] = p[n];
            n++;
        }
        w[n] = '\0';
        p += n;
        if (n < 4) {
            continue;
        }
        bool generic = false;
        for (int k = 0; k < N_OF(GENERIC); k++) {
            generic = generic || strcmp(GENERIC[k], w) == 0;
        }
        if (!generic && pack_says(g, w)) {
            return true;
        }
    }
    return false;
}

/* Whether a thing shares a word with the pack, singular or plural ("porch light": "lights"). */
static bool near_thing(const struct gen *g, const char *thing) {
    char w[64], v[66];
    for (const char *p = thing; *p;) {
        while (*p == ' ') {
            p++;
        }
        size_t n = strcspn(p, " ");
        pipit_format(w, sizeof(w), "%.*s", (int)n, p);
        p += n;
        if (n < 2) {
            continue;
        }
        pipit_format(v, sizeof(v), "%ss", w);
        if (pack_says(g, w) || pack_says(g, v)) {
            return true;
        }
        if (n > 3 && w[n - 1] == 's') {
            w[n - 1] = '\0';
            if (pack_says(g, w)) {
                return true;
            }
        }
    }
    return false;
}

static int bank_intent(struct gen *g,
                       enum pg_cat cat,
                       int weight,
                       const char *const *texts,
                       int n,
                       bool filter) {
    struct intent *in = new_intent(g, cat, weight);
    if (in == NULL) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (filter && near_pack(g, texts[i])) {
            continue;
        }
        struct tpl *tp = add_tpl(in, -1, texts[i], NULL);
        (void)tp;
    }
    return g->n_int - 1;
}

static void build_banks(struct gen *g, struct banks *bk) {
    for (int i = 0; i < BANK_N; i++) {
        bk->at[i] = -1;
    }
    const char *chat[N_OF(CHAT)];
    for (int i = 0; i < N_OF(CHAT); i++) {
        chat[i] = CHAT[i].say;
    }
    bk->at[BANK_CHAT] = bank_intent(g, PG_CHAT, 1, chat, N_OF(CHAT), false);
    if (bk->at[BANK_CHAT] >= 0 && g->pk->n_keys > 0) {
        for (int i = 0; i < N_OF(CHAT_KEY); i++) {
            add_tpl(&g->in[bk->at[BANK_CHAT]], -1, CHAT_KEY[i].say, NULL);
        }
    }
    bk->at[BANK_UNSUP] = bank_intent(g, PG_UNSUPPORTED, 1, UNSUPPORTED, N_OF(UNSUPPORTED), true);
    if (bk->at[BANK_UNSUP] >= 0 && g->pk->n_keys > 0) {
        struct intent *in = &g->in[bk->at[BANK_UNSUP]];
        for (int i = 0; i < N_OF(UNSUPPORTED_KEY); i++) {
            if (!near_pack(g, UNSUPPORTED_KEY[i])) {
                add_tpl(in, -1, UNSUPPORTED_KEY[i], NULL);
            }
        }
    }
    bk->n_thing = 0;
    for (int i = 0; i < N_OF(THINGS); i++) {
        if (!near_thing(g, THINGS[i])) {
            bk->thing[bk->n_thing++] = i;
        }
    }
    if (bk->at[BANK_UNSUP] >= 0 && bk->n_thing >= PG_HELD_MOD) {
        for (int i = 0; i < N_OF(UNSUPPORTED_THING); i++) {
            add_tpl(&g->in[bk->at[BANK_UNSUP]], -1, UNSUPPORTED_THING[i], NULL);
        }
    }
    bk->at[BANK_UNDO] = bank_intent(g, PG_UNDO, 1, UNDO, N_OF(UNDO), false);
    if (g->cloud_tool >= 0) {
        bk->at[BANK_CLOUD] = bank_intent(g, PG_CLOUD, 1, CLOUD_OPEN, N_OF(CLOUD_OPEN), false);
        for (int i = 0; bk->at[BANK_CLOUD] >= 0 && g->pk->n_keys > 0 && i < N_OF(CLOUD_KEY); i++) {
            add_tpl(&g->in[bk->at[BANK_CLOUD]], -1, CLOUD_KEY[i], NULL);
        }
    }
    bk->at[BANK_RETRY] = bank_intent(g, PG_RETRY, 1, RETRY, N_OF(RETRY), false);
    bk->at[BANK_AGAIN] = bank_intent(g, PG_FOLLOWUP, 1, AGAIN, N_OF(AGAIN), false);
    bk->at[BANK_MORE] = bank_intent(g, PG_FOLLOWUP, 1, MORE, N_OF(MORE), false);
    bk->at[BANK_OTHER] = bank_intent(g, PG_FOLLOWUP, 1, OTHER_WAY, N_OF(OTHER_WAY), false);
    bk->at[BANK_MAKE] = bank_intent(g, PG_FOLLOWUP, 1, MAKE_IT, N_OF(MAKE_IT), false);
    bk->at[BANK_SAME] = bank_intent(g, PG_FOLLOWUP, 1, SAME_FOR, N_OF(SAME_FOR), false);
    bk->at[BANK_CONNECT] = bank_intent(g, PG_COMPOUND, 1, CONNECT_PRE, N_OF(CONNECT_PRE), false);
    if (bk->at[BANK_CONNECT] >= 0) {
        for (int i = 0; i < N_OF(CONNECT_POST); i++) {
            add_tpl(&g->in[bk->at[BANK_CONNECT]], -1, CONNECT_POST[i], NULL);
        }
    }
}

/* ============================================================================
 * drawing */

static bool heldout(const struct intent *in, int t) {
    return in->n_tpl >= 4 && t % PG_HELD_MOD == 3;
}

/* A template of intent `k` in `split` (uniform), -1 when none. `numeric`: only templates
 * with a number slot. */
static int pick_tpl(struct gen *g, int k, enum pipit_split split, bool numeric) {
    const struct intent *in = &g->in[k];
    int cand[PG_MAX_TPL], n = 0, ex[PG_MAX_TPL], n_ex = 0;
    for (int t = 0; t < in->n_tpl; t++) {
        if (heldout(in, t) == (split == PIPIT_SPLIT_VALID) && (!numeric || in->tpl[t].numeric)) {
            cand[n++] = t;
            if (in->tpl[t].example) {
                ex[n_ex++] = t;
            }
        }
    }
    /* the pack's own examples are how its people talk: a third of the draws, however many
     * frames the generator adds */
    if (n_ex > 0 && n_ex < n && train_rng_below(&g->rng, 100) < PG_EXAMPLE_SHARE) {
        return ex[train_rng_below(&g->rng, (uint32_t)n_ex)];
    }
    return n > 0 ? cand[train_rng_below(&g->rng, (uint32_t)n)] : -1;
}

/* A random intent of category `cat`, -1 when the pack has none. */
static int pick_intent(struct gen *g, enum pg_cat cat) {
    int cand[PG_MAX_INT], n = 0;
    for (int k = 0; k < g->n_int; k++) {
        if (g->in[k].cat == cat && g->in[k].tpl[0].tool >= 0) {
            cand[n++] = k;
        }
    }
    return n > 0 ? cand[train_rng_below(&g->rng, (uint32_t)n)] : -1;
}

/* A random value for every state key, inside its domain. A pack without a declared state starts
 * each example on a fresh device (its simulator's own initial state). */
static void new_state(struct gen *g) {
    memory_free(&g->mem);
    memory_init(&g->mem, PIPIT_MEMORY_CSO);
    if (g->pk->n_keys == 0) {
        device_free(&g->dev);
        if (device_for_toolset(g->ts, &g->dev, NULL) != PIPIT_OK) {
            memset(&g->dev, 0, sizeof(g->dev)); /* no device: calls succeed, no state line */
        }
        return;
    }
    json_t *o = json_object();
    for (size_t i = 0; i < g->pk->n_keys; i++) {
        const struct pipit_pack_key *k = &g->pk->keys[i];
        json_t *v = NULL;
        if (train_rng_below(&g->rng, 4) == 0) {
            v = json_deep_copy(k->initial);
        } else if (k->type == PIPIT_SCHEMA_BOOLEAN) {
            v = json_boolean(train_rng_below(&g->rng, 2));
        } else if (k->type == PIPIT_SCHEMA_INTEGER || k->type == PIPIT_SCHEMA_NUMBER) {
            double lo = k->has_min ? k->min : 0, hi = k->has_max ? k->max : lo + 100;
            double x = sample_in(g, lo, hi, k->type == PIPIT_SCHEMA_INTEGER);
            v = k->type == PIPIT_SCHEMA_INTEGER ? json_integer((json_int_t)x) : json_real(x);
        } else if (k->type == PIPIT_SCHEMA_STRING && k->n_enum > 0) {
            v = json_string(k->enum_str[train_rng_below(&g->rng, (uint32_t)k->n_enum)]);
        } else if (k->type == PIPIT_SCHEMA_ARRAY && k->n_enum > 0) {
            /* a list of allowed words (watering days): any subset, in the declared order;
             * always the initial list taught the model that list, not to read the state */
            v = json_array();
            for (size_t e = 0; v != NULL && e < k->n_enum; e++) {
                if (train_rng_below(&g->rng, 2) == 1) {
                    json_array_append_new(v, json_string(k->enum_str[e]));
                }
            }
        } else {
            v = json_deep_copy(k->initial);
        }
        if (v != NULL && pipit_pack_key_check(k, v, NULL, 0)) {
            json_object_set_new(o, k->key, v);
        } else {
            json_decref(v);
        }
    }
    g->dev.ops->set_state(g->dev.self, o, NULL);
    json_decref(o);
}

/* One earlier turn, recorded as the agent records it. fail_code != NULL: the call failed. */
static void
play(struct gen *g, const char *utt, int tool, const json_t *args, const char *fail_code) {
    const struct pipit_tool *t = tool_at(g, tool);
    char *aj = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char line[512] = "";
    memory_begin_turn(&g->mem, utt);
    if (pipit_toolset_is_cloud(g->ts, (size_t)tool)) {
        memory_record_call(&g->mem, t->name, aj, true, "", "{}", NULL, false);
    } else if (fail_code != NULL) {
        memory_record_call(&g->mem, t->name, aj, false, fail_code, "{}", NULL, false);
    } else if (g->dev.ops == NULL) {
        /* no device: the app's handler runs it; what it returns is the app's */
        memory_record_call(&g->mem, t->name, aj, true, "", "{}", NULL, false);
    } else {
        struct device_result r = {0};
        enum pipit_status st = g->dev.ops->call(g->dev.self, t->name, args, &r);
        bool read_only = pipit_toolset_undo(g->ts, (size_t)tool, NULL, NULL) == PIPIT_UNDO_NO_STATE;
        json_decref(g->last_data);
        g->last_data = NULL;
        if (st == PIPIT_OK && r.ok) {
            g->last_data = r.data != NULL ? json_incref(r.data) : NULL;
            char *dj =
                r.data != NULL ? json_dumps(r.data, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            device_state_line(&g->dev, line, sizeof(line));
            memory_record_call(&g->mem, t->name, aj, true, "", dj != NULL ? dj : "{}", line,
                               read_only);
            free(dj);
        } else {
            memory_record_call(&g->mem, t->name, aj, false, r.code[0] ? r.code : "failed", "{}",
                               NULL, false);
        }
        device_result_clear(&r);
    }
    memory_end_turn(&g->mem);
    free(aj);
}

/* Draw a command of a single intent (and template) of `split`; *tool and f filled. */
static bool draw_command(struct gen *g,
                         enum pipit_split split,
                         int k,
                         bool outside,
                         struct filled *f,
                         int *tid) {
    for (int tries = 0; tries < 16; tries++) {
        int kk = k >= 0 ? k : pick_intent(g, PG_SINGLE);
        if (kk < 0) {
            return false;
        }
        int t = pick_tpl(g, kk, split, outside);
        if (t < 0) {
            continue;
        }
        if (fill(g, &g->in[kk].tpl[t], outside, NULL, false, f)) {
            if (outside && !f->outside) {
                filled_clear(f);
                continue;
            }
            *tid = kk * 1000 + t;
            return true;
        }
        filled_clear(f);
    }
    return false;
}

static int tool_of_tid(const struct gen *g, int tid) {
    return g->in[tid / 1000].tpl[tid % 1000].tool;
}

/* For every reference template, the single intent whose call returns an identifier of its
 * kind (set_timer's result holds "TM-1" for "cancel that timer"), found by playing each tool's
 * commands on a fresh device. Templates without one are never drawn. */
static void find_producers(struct gen *g) {
    if (g->refer < 0) {
        return;
    }
    struct intent *rin = &g->in[g->refer];
    uint64_t keep = g->rng;
    g->rng = train_split_seed(0x5EED, 0);
    int found = 0;
    for (int r = 0; r < rin->n_tpl; r++) {
        struct tpl *rt = &rin->tpl[r];
        const json_t *like = json_object_get(rt->fixed, rt->arg != NULL ? rt->arg : "");
        rt->producer = -1;
        for (size_t ti = 0; like != NULL && ti < g->ts->n_tools && rt->producer < 0; ti++) {
            for (int tries = 0; g->single_of[ti] >= 0 && tries < 4 && rt->producer < 0; tries++) {
                struct filled f;
                int tid;
                new_state(g);
                if (!draw_command(g, PIPIT_SPLIT_TRAIN, g->single_of[ti], false, &f, &tid)) {
                    continue;
                }
                play(g, f.text, (int)ti, f.args, NULL);
                filled_clear(&f);
                if (g->last_data != NULL &&
                    find_like(g->last_data, json_string_value(like), 3) != NULL) {
                    rt->producer = g->single_of[ti];
                    found++;
                }
            }
        }
    }
    g->rng = keep;
    if (found == 0) {
        g->refer = -1;
    }
}

/* A reference to an earlier result: the command that gave the identifier, played, then "cancel
 * that timer" answered with it. */
static const char *const REFER[] = {"that ",     "the ",     "it",    "my ",
                                    "the last ", "the new ", "this ", "that one"};

static bool draw_refer(struct gen *g,
                       enum pipit_split split,
                       char *utt,
                       size_t usize,
                       char *out,
                       size_t osize,
                       int *tid_out) {
    if (g->refer < 0) {
        return false;
    }
    struct intent *rin = &g->in[g->refer];
    int r = pick_tpl(g, g->refer, split, false);
    if (r < 0 || rin->tpl[r].producer < 0) {
        return false;
    }
    const struct tpl *rt = &rin->tpl[r];
    const json_t *like = json_object_get(rt->fixed, rt->arg);
    struct filled f;
    int tid;
    if (!draw_command(g, split, rt->producer, false, &f, &tid)) {
        return false;
    }
    play(g, f.text, tool_of_tid(g, tid), f.args, NULL);
    filled_clear(&f);
    const char *id =
        g->last_data != NULL ? find_like(g->last_data, json_string_value(like), 3) : NULL;
    if (id == NULL) {
        return false;
    }
    char noun[96], phrase[128];
    id_noun(rt->arg, noun, sizeof(noun));
    const char *form = PICK(g, REFER);
    size_t fl = strlen(form);
    pipit_format(phrase, sizeof(phrase), "%s%s", form, form[fl - 1] == ' ' ? noun : "");
    struct tpl tmp = *rt;
    const char *at = strstr(rt->text, "{r}");
    pipit_format(tmp.text, sizeof(tmp.text), "%.*s%s%s", (int)(at - rt->text), rt->text, phrase,
                 at + 3);
    if (!fill(g, &tmp, false, NULL, false, &f)) {
        return false;
    }
    json_object_set_new(f.args, rt->arg, json_string(id));
    size_t np = 0;
    bool ok = pipit_tool_check_args(tool_at(g, rt->tool), f.args, NULL, 0, &np) == PIPIT_OK;
    if (ok) {
        pipit_format(utt, usize, "%s", f.text);
        render_call(tool_at(g, rt->tool), f.args, out, osize);
        *tid_out = g->refer * 1000 + r;
    }
    filled_clear(&f);
    return ok;
}

/* Earlier turns: commands (most succeed), failures, cloud questions, chat. */
static void history(struct gen *g, enum pipit_split split) {
    if (train_rng_below(&g->rng, 20) < 7) {
        return; /* a first turn */
    }
    int n = 1 + (int)train_rng_below(&g->rng, 6);
    for (int i = 0; i < n; i++) {
        uint32_t r = train_rng_below(&g->rng, 20);
        if (r < 2 && g->cloud_tool >= 0) {
            char q[160];
            pipit_format(q, sizeof(q), "%s %s", PICK(g, CLOUD_OPEN), PICK(g, CLOUD_WORDS));
            const struct pipit_tool *t = tool_at(g, g->cloud_tool);
            json_t *a = json_object();
            for (size_t p = 0; p < t->params->n_props; p++) {
                json_object_set_new(a, t->params->props[p].name, json_string(q));
                break;
            }
            play(g, q, g->cloud_tool, a, NULL);
            json_decref(a);
            continue;
        }
        if (r < 4) {
            memory_begin_turn(&g->mem, PICK(g, CHAT).say);
            memory_end_turn(&g->mem);
            continue;
        }
        struct filled f;
        int tid;
        if (!draw_command(g, split, -1, r < 5, &f, &tid)) {
            continue;
        }
        play(g, f.text, tool_of_tid(g, tid), f.args, r == 5 ? PICK(g, RETRY_CODES) : NULL);
        filled_clear(&f);
    }
}

/* ---------------------------------------------------------------- surface */

enum surf {
    SURF_COMMAND,
    SURF_CHAT,
    SURF_PLAIN,
    SURF_VERBATIM
};

/* A situation composed (WHO + HOW, or a clause); when `split` is not -1, from the split's part
 * of HOW and CLAUSES (one in PG_HELD_MOD is held out, as templates are). Returns which: the HOW's
 * index, or 50 + the clause's. */
static int situation(struct gen *g, int split, char *out, size_t size) {
    bool clause = train_rng_below(&g->rng, 100) < 30;
    int n_of = clause ? N_OF(CLAUSES) : N_OF(HOW);
    int cand[N_OF(HOW) + N_OF(CLAUSES)], n = 0;
    for (int i = 0; i < n_of; i++) {
        if (split < 0 || (i % PG_HELD_MOD == 3) == (split == PIPIT_SPLIT_VALID)) {
            cand[n++] = i;
        }
    }
    int i = cand[train_rng_below(&g->rng, (uint32_t)n)];
    if (clause) {
        pipit_format(out, size, "%s", CLAUSES[i]);
        return 50 + i;
    }
    pipit_format(out, size, "%s %s", PICK(g, WHO), HOW[i]);
    return i;
}

static void surface(struct gen *g, enum surf kind, const char *core, char *out, size_t size) {
    const char *pre = "", *suf = "", *punct = "";
    char sit_pre[96], sit_post[112];
    uint32_t r;
    if (kind == SURF_COMMAND) {
        r = train_rng_below(&g->rng, 100);
        pre = r < 30 ? PICK(g, PREFIXES) : r < 35 ? PICK(g, SITUATION_PRE) : "";
        if (r >= 35 && r < 40) { /* "the kids are asleep, lock the back" */
            situation(g, -1, sit_pre, sizeof(sit_pre) - 2);
            pipit_format(sit_pre + strlen(sit_pre), 3, ", ");
            pre = sit_pre;
        }
        /* no "can you can i get ...": an asking lead-in before a core that asks already */
        static const char *const ASKS[] = {"can ",  "could ", "would ", "will ", "please ",
                                           "i ",    "i'd ",   "i'm ",   "i'll ", "let's ",
                                           "what ", "how ",   "is ",    "are ",  "do "};
        bool asks = false;
        for (int i = 0; i < N_OF(ASKS); i++) {
            asks = asks || strncasecmp(core, ASKS[i], strlen(ASKS[i])) == 0;
        }
        size_t pl = strlen(pre);
        if (asks && pl > 0 && (strstr(pre, "you") != NULL || strcmp(pre, "please ") == 0)) {
            pre = "";
        }
        r = train_rng_below(&g->rng, 100);
        suf = r < 18 ? PICK(g, SUFFIXES) : r < 22 ? PICK(g, SITUATION_POST) : "";
        if (r >= 22 && r < 32) { /* "lock the back, the kids are asleep" */
            char sit[96];
            situation(g, -1, sit, sizeof(sit));
            pipit_format(sit_post, sizeof(sit_post), "%s%s", PICK(g, CLAUSE_JOIN), sit);
            suf = sit_post;
        }
    } else if (kind == SURF_CHAT) {
        pre = train_rng_below(&g->rng, 100) < 15 ? PICK(g, CHAT_PRE) : "";
        suf = train_rng_below(&g->rng, 100) < 12 ? PICK(g, CHAT_POST) : "";
    }
    r = train_rng_below(&g->rng, 10);
    punct = kind == SURF_VERBATIM ? (r < 5 ? "?" : "") : r < 2 ? "." : r < 3 ? "!" : "";
    pipit_format(out, size - 2, "%s%s%s%s", pre, core, suf, punct);
    if (kind != SURF_VERBATIM && train_rng_below(&g->rng, 100) < 8) {
        train_add_typo(&g->rng, out, 2);
    }
    train_apply_case(&g->rng, out, 14, 19, 20);
}

/* ---------------------------------------------------------------- one example */

struct example {
    char utt[512];
    char out[768];
    int cat;
    int tid;
};

/* A follow-up: a prior command of the right kind, played; the answer derived from it. */
static bool
draw_followup(struct gen *g, enum pipit_split split, const struct banks *bk, struct example *ex) {
    int which = BANK_AGAIN + (int)train_rng_below(&g->rng, 5);
    int bi = bk->at[which];
    int t = bi >= 0 ? pick_tpl(g, bi, split, false) : -1;
    if (t < 0) {
        return false;
    }
    for (int tries = 0; tries < 24; tries++) {
        struct filled f;
        int tid;
        if (!draw_command(g, split, -1, false, &f, &tid)) {
            return false;
        }
        int tool = tool_of_tid(g, tid);
        const struct pipit_tool *tl = tool_at(g, tool);
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(g->ts, (size_t)tool);
        json_t *ans = json_deep_copy(f.args);
        bool ok = false;
        char v[96] = "";
        if (which == BANK_AGAIN) {
            ok = tp->has_step || tp->effect == PIPIT_EFFECT_NONE;
        } else if (which == BANK_MORE) {
            ok = tp->has_step;
        } else if (which == BANK_OTHER && tp->has_step) {
            const struct pipit_effect_step *st = &tp->step;
            if (st->sign.arg != NULL && st->sign.map != NULL) {
                const json_t *cur = json_object_get(ans, st->sign.arg);
                double cs =
                    json_number_value(json_object_get(st->sign.map, json_string_value(cur)));
                const char *key;
                json_t *m;
                json_object_foreach((json_t *)st->sign.map, key, m) {
                    if (!ok && json_number_value(m) * cs < 0) {
                        json_object_set_new(ans, st->sign.arg, json_string(key));
                        ok = true;
                    }
                }
            } else if (st->by.arg != NULL) {
                const json_t *cur = json_object_get(ans, st->by.arg);
                const struct pipit_schema *s = prop_schema(tl, st->by.arg);
                if (json_is_number(cur) && s != NULL) {
                    json_object_set_new(ans, st->by.arg, num_json(s, -json_number_value(cur)));
                    ok = true;
                }
            }
        } else if (which == BANK_MAKE) {
            for (size_t k = 0; k < tp->n_set && !ok; k++) {
                const char *a = tp->set[k].value.arg;
                const struct pipit_schema *s = a != NULL ? prop_schema(tl, a) : NULL;
                if (tp->set[k].value.map == NULL && is_num(s)) {
                    double lo, hi;
                    range_of(s, &lo, &hi);
                    double x = sample_in(g, lo, hi, s->type == PIPIT_SCHEMA_INTEGER);
                    if (x != json_number_value(json_object_get(ans, a))) {
                        json_object_set_new(ans, a, num_json(s, x));
                        say_num(g, x, v, sizeof(v));
                        ok = true;
                    }
                }
            }
        } else if (which == BANK_SAME) {
            const char *ka = NULL;
            for (size_t k = 0; k < tp->n_set && ka == NULL; k++) {
                ka = tp->set[k].key.key_arg;
            }
            if (ka == NULL && tp->has_step) {
                ka = tp->step.key.key_arg;
            }
            const struct pipit_schema *s = ka != NULL ? prop_schema(tl, ka) : NULL;
            const json_t *cur = ka != NULL ? json_object_get(ans, ka) : NULL;
            if (s != NULL && s->n_enum > 1 && json_is_string(cur)) {
                const char *nv = s->enum_str[train_rng_below(&g->rng, (uint32_t)s->n_enum)];
                if (strcmp(nv, json_string_value(cur)) != 0) {
                    json_object_set_new(ans, ka, json_string(nv));
                    words_of(nv, v, sizeof(v));
                    ok = true;
                }
            }
        }
        if (ok) {
            size_t np = 0;
            ok = pipit_tool_check_args(tl, ans, NULL, 0, &np) == PIPIT_OK;
        }
        if (ok) {
            play(g, f.text, tool, f.args, NULL);
            char core[PG_TEXT * 2];
            const char *tx = g->in[bi].tpl[t].text;
            const char *at = strstr(tx, "{v}");
            if (at != NULL) {
                pipit_format(core, sizeof(core), "%.*s%s%s", (int)(at - tx), tx, v, at + 3);
            } else {
                pipit_format(core, sizeof(core), "%s", tx);
            }
            surface(g, SURF_PLAIN, core, ex->utt, sizeof(ex->utt));
            render_call(tl, ans, ex->out, sizeof(ex->out));
            ex->cat = PG_FOLLOWUP;
            ex->tid = bi * 1000 + t;
        }
        json_decref(ans);
        filled_clear(&f);
        if (ok) {
            return true;
        }
    }
    return false;
}

/* A composed utterance (undosay.h) as typed: a typo in 8%, the letter case of the surface layer. */
static void said_as_typed(struct gen *g, const char *said, char *out, size_t size) {
    pipit_format(out, size, "%s", said);
    if (train_rng_below(&g->rng, 100) < 8) {
        train_add_typo(&g->rng, out, 2);
    }
    train_apply_case(&g->rng, out, 14, 19, 20);
}

/* A compound's later segment: with a connector, or naming the earlier segment's thing as "it". */
static bool
draw_compound(struct gen *g, enum pipit_split split, const struct banks *bk, struct example *ex) {
    struct filled f;
    int tid;
    if (train_rng_below(&g->rng, 3) == 0) {
        /* "... and dim it to 20%": the earlier segment's key argument, said as "it" */
        if (!draw_command(g, split, -1, false, &f, &tid)) {
            return false;
        }
        const struct tpl *prev = &g->in[tid / 1000].tpl[tid % 1000];
        const char *ka = prev->noun != NULL ? prev->noun->key_arg : NULL;
        const json_t *kv = ka != NULL ? json_object_get(f.args, ka) : NULL;
        for (int tries = 0; tries < 16 && json_is_string(kv); tries++) {
            int k = pick_intent(g, PG_SINGLE);
            int t = k >= 0 ? pick_tpl(g, k, split, false) : -1;
            const struct tpl *tp = t >= 0 ? &g->in[k].tpl[t] : NULL;
            if (tp == NULL || tp->noun == NULL || tp->noun->key_arg == NULL ||
                strcmp(tp->noun->key_arg, ka) != 0 || strstr(tp->text, "{@}") == NULL ||
                tp == prev) {
                continue;
            }
            struct filled f2;
            if (!fill(g, tp, false, json_string_value(kv), true, &f2)) {
                filled_clear(&f2);
                continue;
            }
            play(g, f.text, tool_of_tid(g, tid), f.args, NULL);
            surface(g, SURF_PLAIN, f2.text, ex->utt, sizeof(ex->utt));
            render_call(tool_at(g, tp->tool), f2.args, ex->out, sizeof(ex->out));
            ex->cat = PG_COMPOUND;
            ex->tid = k * 1000 + t;
            filled_clear(&f2);
            filled_clear(&f);
            return true;
        }
        filled_clear(&f);
        return false;
    }
    int bi = bk->at[BANK_CONNECT];
    int t = bi >= 0 ? pick_tpl(g, bi, split, false) : -1;
    if (t < 0 || !draw_command(g, split, -1, false, &f, &tid)) {
        return false;
    }
    const char *c = g->in[bi].tpl[t].text;
    if (c[0] == ' ') {
        pipit_format(ex->utt, sizeof(ex->utt), "%s%s", f.text, c);
    } else {
        pipit_format(ex->utt, sizeof(ex->utt), "%s%s", c, f.text);
    }
    if (train_rng_below(&g->rng, 10) == 0) {
        train_add_typo(&g->rng, ex->utt, 2);
    }
    render_call(tool_at(g, tool_of_tid(g, tid)), f.args, ex->out, sizeof(ex->out));
    ex->cat = PG_COMPOUND;
    ex->tid = tid; /* the command's template decides the split */
    filled_clear(&f);
    return true;
}

static bool
draw_cloud(struct gen *g, enum pipit_split split, const struct banks *bk, struct example *ex) {
    int bi = bk->at[BANK_CLOUD];
    int t = bi >= 0 ? pick_tpl(g, bi, split, false) : -1;
    if (t < 0) {
        return false;
    }
    char q[256];
    const char *tx = g->in[bi].tpl[t].text;
    const char *at = strstr(tx, "{@}");
    if (at != NULL) { /* about one of the pack's things */
        char noun[96];
        key_name(g, &g->pk->keys[train_rng_below(&g->rng, (uint32_t)g->pk->n_keys)], noun,
                 sizeof(noun));
        pipit_format(q, sizeof(q), "%.*s%s%s", (int)before_noun(tx, (size_t)(at - tx), noun), tx,
                     noun, at + 3);
    } else {
        int nw = 1 + (int)train_rng_below(&g->rng, 3);
        pipit_format(q, sizeof(q), "%s", tx);
        for (int i = 0; i < nw; i++) {
            size_t o = strlen(q);
            pipit_format(q + o, sizeof(q) - o, " %s", PICK(g, CLOUD_WORDS));
        }
    }
    surface(g, SURF_VERBATIM, q, ex->utt, sizeof(ex->utt));
    const struct pipit_tool *tl = tool_at(g, g->cloud_tool);
    json_t *a = json_object();
    bool first = true;
    const char *reason =
        g->reason[0] != '\0'                                                     ? g->reason
        : strncmp(q, "write", 5) == 0 || strncmp(q, "give me a recipe", 16) == 0 ? CLOUD_REASONS[1]
        : strncmp(q, "how many", 8) == 0 || strncmp(q, "how far", 7) == 0        ? CLOUD_REASONS[2]
                                                                                 : CLOUD_REASONS[0];
    for (size_t p = 0; p < tl->params->n_props; p++) {
        const struct pipit_schema *s = tl->params->props[p].schema;
        const char *name = tl->params->props[p].name;
        if (s->type != PIPIT_SCHEMA_STRING) {
            continue;
        }
        if (s->n_enum > 0) {
            json_object_set_new(a, name, json_string(s->enum_str[0]));
        } else if (first) {
            json_object_set_new(a, name, json_string(ex->utt));
            first = false;
        } else if (tl->params->props[p].required || g->reason[0] != '\0') {
            json_object_set_new(a, name, json_string(reason));
        }
    }
    size_t np = 0;
    bool ok = pipit_tool_check_args(tl, a, NULL, 0, &np) == PIPIT_OK;
    if (ok) {
        render_call(tl, a, ex->out, sizeof(ex->out));
        ex->cat = PG_CLOUD;
        ex->tid = bi * 1000 + t;
    }
    json_decref(a);
    return ok;
}

static bool
draw_bank_text(struct gen *g, enum pipit_split split, int bi, struct example *ex, int *t_out) {
    int t = bi >= 0 ? pick_tpl(g, bi, split, false) : -1;
    if (t < 0) {
        return false;
    }
    *t_out = t;
    ex->tid = bi * 1000 + t;
    ex->cat = (int)g->in[bi].cat;
    return true;
}

/* A frame of UNSUPPORTED_THING filled: a thing of the split (one in PG_HELD_MOD is held out, as
 * templates are) and a number. */
static void unsupported_thing(struct gen *g,
                              enum pipit_split split,
                              const struct banks *bk,
                              const char *frame,
                              char *out,
                              size_t size) {
    int cand[N_OF(THINGS)], n = 0;
    for (int i = 0; i < bk->n_thing; i++) {
        if ((i % PG_HELD_MOD == 3) == (split == PIPIT_SPLIT_VALID)) {
            cand[n++] = bk->thing[i];
        }
    }
    const char *thing = THINGS[cand[train_rng_below(&g->rng, (uint32_t)n)]];
    char num[16];
    pipit_format(num, sizeof(num), "%u", 1 + train_rng_below(&g->rng, 30));
    const char *x = strstr(frame, "{X}"), *nm = strstr(frame, "{N}");
    if (nm == NULL) {
        pipit_format(out, size, "%.*s%s%s", (int)(x - frame), frame, thing, x + 3);
    } else if (nm > x) {
        pipit_format(out, size, "%.*s%s%.*s%s%s", (int)(x - frame), frame, thing, (int)(nm - x - 3),
                     x + 3, num, nm + 3);
    } else {
        pipit_format(out, size, "%.*s%s%.*s%s%s", (int)(nm - frame), frame, num, (int)(x - nm - 3),
                     nm + 3, thing, x + 3);
    }
}

static bool
draw_example(struct gen *g, enum pipit_split split, const struct banks *bk, struct example *ex) {
    static const struct {
        enum pg_cat cat;
        int weight;
    } MIX[] = {
        {PG_SINGLE, 36},   {PG_RELATIVE, 7},     {PG_FOLLOWUP, 11}, {PG_RETRY, 4},
        {PG_COMPOUND, 10}, {PG_OUT_OF_RANGE, 6}, {PG_CHAT, 9},      {PG_UNSUPPORTED, 6},
        {PG_CLOUD, 8},     {PG_UNDO, 4},         {PG_REFER, 6},
    };
    int total = 0;
    for (int i = 0; i < N_OF(MIX); i++) {
        total += MIX[i].weight;
    }
    int w = (int)train_rng_below(&g->rng, (uint32_t)total), i = 0;
    while (w >= MIX[i].weight) {
        w -= MIX[i].weight;
        i++;
    }
    enum pg_cat cat = MIX[i].cat;
    char core_text[PG_TEXT * 2];
    new_state(g);
    history(g, split);
    struct filled f;
    int tid, t;
    switch (cat) {
        case PG_SINGLE:
        case PG_OUT_OF_RANGE:
            if (!draw_command(g, split, -1, cat == PG_OUT_OF_RANGE, &f, &tid)) {
                return false;
            }
            surface(g, SURF_COMMAND, f.text, ex->utt, sizeof(ex->utt));
            render_call(tool_at(g, tool_of_tid(g, tid)), f.args, ex->out, sizeof(ex->out));
            ex->cat = (int)cat;
            ex->tid = tid;
            filled_clear(&f);
            return true;
        case PG_RELATIVE: {
            int k = pick_intent(g, PG_RELATIVE);
            if (k < 0 || !draw_command(g, split, k, false, &f, &tid)) {
                return false;
            }
            surface(g, SURF_COMMAND, f.text, ex->utt, sizeof(ex->utt));
            render_call(tool_at(g, tool_of_tid(g, tid)), f.args, ex->out, sizeof(ex->out));
            ex->cat = PG_RELATIVE;
            ex->tid = tid;
            filled_clear(&f);
            return true;
        }
        case PG_FOLLOWUP:
            return draw_followup(g, split, bk, ex);
        case PG_RETRY: {
            if (!draw_bank_text(g, split, bk->at[BANK_RETRY], ex, &t) ||
                !draw_command(g, split, -1, false, &f, &tid)) {
                return false;
            }
            int tool = tool_of_tid(g, tid);
            char said[512];
            surface(g, SURF_COMMAND, f.text, said, sizeof(said));
            play(g, said, tool, f.args, PICK(g, RETRY_CODES));
            surface(g, SURF_PLAIN, g->in[bk->at[BANK_RETRY]].tpl[t].text, ex->utt, sizeof(ex->utt));
            render_call(tool_at(g, tool), f.args, ex->out, sizeof(ex->out));
            filled_clear(&f);
            return true;
        }
        case PG_COMPOUND:
            return draw_compound(g, split, bk, ex);
        case PG_CHAT: {
            if (train_rng_below(&g->rng, 100) < 35) { /* a remark: "the in-laws are back on
                                                          sunday" is no request */
                char said[PG_TEXT];
                for (int tries = 0; tries < 8; tries++) {
                    int which = situation(g, (int)split, said, sizeof(said));
                    if (!near_pack(g, said)) {
                        surface(g, SURF_CHAT, said, ex->utt, sizeof(ex->utt));
                        pipit_format(ex->out, sizeof(ex->out), "%s", "Okay.");
                        ex->cat = PG_CHAT;
                        ex->tid = bk->at[BANK_CHAT] * 1000 + PG_MAX_TPL + which;
                        return true;
                    }
                }
            }
            if (!draw_bank_text(g, split, bk->at[BANK_CHAT], ex, &t)) {
                return false;
            }
            if (t < N_OF(CHAT)) {
                surface(g, SURF_CHAT, CHAT[t].say, ex->utt, sizeof(ex->utt));
                pipit_format(ex->out, sizeof(ex->out), "%s", CHAT[t].reply);
                return true;
            }
            const struct chat_line *cl = &CHAT_KEY[t - N_OF(CHAT)];
            char noun[96], said[PG_TEXT * 2];
            const char *at = strstr(cl->say, "{@}");
            key_name(g, &g->pk->keys[train_rng_below(&g->rng, (uint32_t)g->pk->n_keys)], noun,
                     sizeof(noun));
            pipit_format(said, sizeof(said), "%.*s%s%s",
                         (int)before_noun(cl->say, (size_t)(at - cl->say), noun), cl->say, noun,
                         at + 3);
            surface(g, SURF_CHAT, said, ex->utt, sizeof(ex->utt));
            pipit_format(ex->out, sizeof(ex->out), "%s", cl->reply);
            return true;
        }
        case PG_UNSUPPORTED: {
            int bi = bk->at[BANK_UNSUP];
            if (!draw_bank_text(g, split, bi, ex, &t)) {
                return false;
            }
            const char *tx = g->in[bi].tpl[t].text;
            const char *at = strstr(tx, "{@}");
            char core[PG_TEXT * 2];
            if (strstr(tx, "{X}") != NULL) {
                unsupported_thing(g, split, bk, tx, core, sizeof(core));
            } else if (at != NULL) {
                char noun[96];
                key_name(g, &g->pk->keys[train_rng_below(&g->rng, (uint32_t)g->pk->n_keys)], noun,
                         sizeof(noun));
                pipit_format(core, sizeof(core), "%.*s%s%s",
                             (int)before_noun(tx, (size_t)(at - tx), noun), tx, noun, at + 3);
            } else {
                pipit_format(core, sizeof(core), "%s", tx);
            }
            surface(g, SURF_PLAIN, core, ex->utt, sizeof(ex->utt));
            pipit_format(ex->out, sizeof(ex->out), "%s", UNSUPPORTED_REPLY);
            return true;
        }
        case PG_CLOUD:
            return g->cloud_tool >= 0 && draw_cloud(g, split, bk, ex);
        case PG_REFER:
            ex->cat = PG_REFER;
            if (!draw_refer(g, split, core_text, sizeof(core_text), ex->out, sizeof(ex->out),
                            &ex->tid)) {
                return false;
            }
            surface(g, SURF_COMMAND, core_text, ex->utt, sizeof(ex->utt));
            return true;
        case PG_UNDO:
            if (!draw_bank_text(g, split, bk->at[BANK_UNDO], ex, &t)) {
                return false;
            }
            if (train_rng_below(&g->rng, 100) < PG_UNDO_COMPOSED) {
                /* composed from parts (undosay.h); its frame decides the split */
                char said[PG_TEXT];
                int frame = train_undo_say(&g->rng, split == PIPIT_SPLIT_VALID, said, sizeof(said));
                ex->tid = bk->at[BANK_UNDO] * 1000 + PG_MAX_TPL + frame;
                said_as_typed(g, said, ex->utt, sizeof(ex->utt));
            } else {
                surface(g, SURF_PLAIN, g->in[bk->at[BANK_UNDO]].tpl[t].text, ex->utt,
                        sizeof(ex->utt));
            }
            pipit_format(ex->out, sizeof(ex->out), "<call>undo()");
            return true;
    }
    return false;
}

/* ============================================================================
 * API */

const char *packgen_system(const struct pipit_toolset *ts) {
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    if (pk == NULL) {
        return NULL;
    }
    return pk->system != NULL ? pk->system : pk->name;
}

static void gen_free(struct gen *g) {
    for (int k = 0; k < g->n_int; k++) {
        for (int t = 0; t < g->in[k].n_tpl; t++) {
            json_decref(g->in[k].tpl[t].fixed);
        }
    }
    free(g->in);
    json_decref(g->last_data);
    memory_free(&g->mem);
    device_free(&g->dev);
}

/* The generator for `ts`: its device, memory and every intent built from the spec. On failure
 * everything is freed and `err` says why. */
static enum pipit_status
gen_setup(const struct pipit_toolset *ts, struct gen *out, struct pipit_error *err) {
    const struct pipit_pack *pk = pipit_toolset_pack(ts);
    if (pk == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "%s: training data needs a pack (\"pipit\": {\"pack\": ...}, "
                               "docs/toolspec.md): a plain tool set has no name for its prompt",
                               ts->name);
    }
    struct gen g;
    memset(&g, 0, sizeof(g));
    g.ts = ts;
    g.pk = pk;
    g.cloud_tool = -1;
    memory_init(&g.mem, PIPIT_MEMORY_CSO);
    /* a declared state plays on the generic device of the declaration; a pack without one on
     * the device the agent would run it on (a simulator that runs its tools, else none), so
     * the state line and the results in the memory lines are the ones the agent shows */
    enum pipit_status st =
        pk->n_keys > 0 ? pack_device_new(ts, &g.dev, err) : device_for_toolset(ts, &g.dev, err);
    if (st != PIPIT_OK) {
        memory_free(&g.mem);
        return st;
    }
    g.in = calloc(PG_MAX_INT, sizeof(*g.in));
    if (g.in == NULL) {
        gen_free(&g);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "packgen: out of memory");
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        g.single_of[i] = -1;
        if (pipit_toolset_is_cloud(ts, i) && g.cloud_tool < 0) {
            g.cloud_tool = (int)i;
            /* the reason the pack's own example gives, when it gives one */
            const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(ts, i);
            const struct pipit_tool *t = pipit_toolset_tool(ts, i);
            for (size_t e = 0; tp != NULL && e < tp->n_examples && g.reason[0] == '\0'; e++) {
                for (size_t q = 1; q < t->params->n_props; q++) {
                    const json_t *v =
                        json_object_get(tp->examples[e].args, t->params->props[q].name);
                    if (json_is_string(v) && t->params->props[q].schema->n_enum == 0) {
                        pipit_format(g.reason, sizeof(g.reason), "%s", json_string_value(v));
                        break;
                    }
                }
            }
        }
    }
    g.refer = -1;
    if (new_intent(&g, PG_REFER, 1) != NULL) {
        g.refer = g.n_int - 1;
    }
    for (size_t i = 0; i < ts->n_tools; i++) {
        build_tool(&g, (int)i);
    }
    find_producers(&g);
    if (pick_intent(&g, PG_SINGLE) < 0) {
        gen_free(&g);
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "%s: no tool the generator can phrase (give the tools examples, "
                               "docs/training.md)",
                               ts->name);
    }
    *out = g;
    return PIPIT_OK;
}

enum pipit_status packgen_generate(const struct pipit_toolset *ts,
                                   const struct pipit_datagen_params *params,
                                   struct pipit_dataset **out,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL || ts == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "packgen: no tool set or no output");
    }
    *out = NULL;
    struct pipit_datagen_params p = params != NULL ? *params : pipit_datagen_default_params();
    if (p.n_train < 1 || p.n_train > 10000000 || p.n_valid < 1 || p.n_valid > 10000000) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "packgen: sizes must be 1..10000000: n_train %d, n_valid %d",
                               (int)p.n_train, (int)p.n_valid);
    }
    struct gen g;
    enum pipit_status st = gen_setup(ts, &g, err);
    if (st != PIPIT_OK) {
        return st;
    }
    struct banks bk;
    build_banks(&g, &bk);
    struct pipit_dataset *ds = calloc(1, sizeof(*ds));
    if (ds == NULL) {
        gen_free(&g);
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "packgen: out of memory");
    }
    ds->categories = packgen_categories;
    ds->n_categories = packgen_n_categories;
    const int32_t sizes[2] = {p.n_train, p.n_valid};
    for (int split = 0; split < 2; split++) {
        g.rng = train_split_seed(p.seed, split);
        ds->ex[split] = calloc((size_t)sizes[split], sizeof(struct ds_example));
        if (ds->ex[split] == NULL) {
            pipit_dataset_free(ds);
            gen_free(&g);
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "packgen: out of memory");
        }
        int fails = 0;
        while (ds->n[split] < sizes[split]) {
            struct example ex;
            memset(&ex, 0, sizeof(ex));
            if (!draw_example(&g, (enum pipit_split)split, &bk, &ex) ||
                (p.exclude != NULL &&
                 pipit_overlap_find(p.exclude, ex.utt, NULL) != PIPIT_OVERLAP_NONE)) {
                if (++fails > 1000000) {
                    break;
                }
                continue; /* nothing drawn, or an evaluation set says it */
            }
            char state[512];
            device_state_line(&g.dev, state, sizeof(state));
            char *mem = memory_text(&g.mem);
            bool ok = mem != NULL && datagen_append(ds, (enum pipit_split)split, mem, state, ex.utt,
                                                    ex.out, ex.cat, ex.tid, false);
            free(mem);
            if (!ok) {
                pipit_dataset_free(ds);
                gen_free(&g);
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "packgen: out of memory");
            }
        }
        if (ds->n[split] < sizes[split]) {
            pipit_dataset_free(ds);
            gen_free(&g);
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "%s: the generator could not draw examples for this pack",
                                   ts->name);
        }
    }
    gen_free(&g);
    *out = ds;
    return PIPIT_OK;
}

/* What the generator reads from a pack and which categories it can write for it. */
char *pipit_datagen_pack_describe(const struct pipit_toolset *tools, struct pipit_error *err) {
    pipit_error_clear(err);
    if (tools == NULL) {
        pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "packgen: no tool set");
        return NULL;
    }
    struct gen g;
    if (gen_setup(tools, &g, err) != PIPIT_OK) {
        return NULL;
    }
    struct banks bk;
    build_banks(&g, &bk);
    struct strbuf b = {0};
    const struct pipit_pack *pk = g.pk;
    strbuf_printf(&b, "pack %s: %zu state key%s", pk->name, pk->n_keys, pk->n_keys == 1 ? "" : "s");
    for (size_t i = 0; i < pk->n_keys; i++) {
        const struct pipit_pack_key *k = &pk->keys[i];
        strbuf_printf(&b, "%s%s %s", i == 0 ? " (" : ", ", k->key, pipit_schema_type_name(k->type));
        if (k->has_min || k->has_max) {
            char lo[32] = "", hi[32] = "";
            fmt_num(k->min, lo, sizeof(lo));
            fmt_num(k->max, hi, sizeof(hi));
            strbuf_printf(&b, " %s..%s", k->has_min ? lo : "", k->has_max ? hi : "");
        }
        for (size_t e = 0; e < k->n_enum; e++) {
            strbuf_printf(&b, "%s%s", e == 0 ? " " : "|", k->enum_str[e]);
        }
    }
    strbuf_str(&b, pk->n_keys > 0 ? ")\n" : ": the examples play on ");
    size_t shown = 0;
    for (size_t i = 0; i < pk->n_keys; i++) {
        shown += pk->keys[i].show != NULL;
    }
    if (shown > 10) {
        strbuf_printf(&b,
                      "  note: %zu keys are shown in the state line; about ten fit a 128-token "
                      "prompt beside the request and the memory (docs/pack.md, \"state\"): give "
                      "the others \"show\": false (pipit train says how many examples do not "
                      "fit)\n",
                      shown);
    }
    if (pk->n_keys == 0) {
        strbuf_printf(&b, "%s\n",
                      g.dev.ops != NULL ? g.dev.ops->name : "no device (an empty state line)");
    }
    int n_kind[4] = {0}, n_ex = 0;
    struct strbuf bare = {0};
    for (size_t i = 0; i < tools->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(tools, i);
        bool cloud = pipit_toolset_is_cloud(tools, i);
        n_kind[cloud ? PIPIT_EFFECT_CLOUD : tp != NULL ? (int)tp->effect : PIPIT_EFFECT_NONE]++;
        n_ex += tp != NULL ? (int)tp->n_examples : 0;
        if (!cloud && (tp == NULL || tp->n_examples == 0)) {
            strbuf_printf(&bare, "%s%s", bare.len > 0 ? ", " : "", tools->tools[i].name);
        }
    }
    strbuf_printf(&b, "  effects: %d change state, %d read, %d cloud, %d none\n",
                  n_kind[PIPIT_EFFECT_CHANGE], n_kind[PIPIT_EFFECT_READ],
                  n_kind[PIPIT_EFFECT_CLOUD], n_kind[PIPIT_EFFECT_NONE]);
    strbuf_printf(&b, "  examples: %d%s%s%s\n", n_ex, bare.len > 0 ? "; tools without any: " : "",
                  bare.len > 0 ? bare.data : "",
                  bare.len > 0 ? " (phrased from their name only, poorly)" : "");
    free(bare.data);
    strbuf_printf(&b, "  router: %zu verbs, %zu nouns\n", pk->n_verbs, pk->n_nouns);
    /* the categories the generator has material for */
    bool has[PG_REFER + 1] = {false};
    for (int k = 0; k < g.n_int; k++) {
        if (g.in[k].n_tpl > 0 && (g.in[k].cat != PG_REFER || g.refer >= 0)) {
            has[g.in[k].cat] = true;
        }
    }
    has[PG_CLOUD] = has[PG_CLOUD] && g.cloud_tool >= 0;
    has[PG_OUT_OF_RANGE] = false;
    for (int k = 0; k < g.n_int; k++) {
        for (int t = 0; g.in[k].cat == PG_SINGLE && t < g.in[k].n_tpl; t++) {
            has[PG_OUT_OF_RANGE] = has[PG_OUT_OF_RANGE] || g.in[k].tpl[t].numeric;
        }
    }
    static const char *const WHY[] = {
        [PG_RELATIVE] = "no declared state",
        [PG_CLOUD] = "no cloud tool",
        [PG_OUT_OF_RANGE] = "no numeric argument said in a phrasing",
        [PG_REFER] = "no tool returns an identifier that another tool's example says",
        [PG_SINGLE] = "no tool the generator can phrase",
    };
    strbuf_str(&b, "  training data (pipit train --tools):");
    for (int c = 0; c <= PG_REFER; c++) {
        strbuf_printf(&b, "%s%s", has[c] ? " " : "", has[c] ? packgen_categories[c] : "");
    }
    strbuf_str(&b, "\n");
    for (int c = 0; c <= PG_REFER; c++) {
        if (!has[c]) {
            strbuf_printf(&b, "  no %s examples: %s\n", packgen_categories[c],
                          c < N_OF(WHY) && WHY[c] != NULL ? WHY[c] : "nothing to draw them from");
        }
    }
    gen_free(&g);
    if (b.failed) {
        free(b.data);
        pipit_error_set(err, PIPIT_ERR_NOMEM, "packgen: out of memory");
        return NULL;
    }
    return strbuf_take(&b);
}

enum pipit_status pipit_datagen_pack(const struct pipit_toolset *tools,
                                     const struct pipit_datagen_params *params,
                                     struct pipit_dataset **out,
                                     struct pipit_error *err) {
    return packgen_generate(tools, params, out, err);
}

const char *pipit_datagen_pack_system(const struct pipit_toolset *tools) {
    return packgen_system(tools);
}
