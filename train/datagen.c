/*
 * datagen.c - the seeded synthetic data generator for the camera tool pack.
 *
 * Every example is (device state line, utterance, expected answer). An utterance comes from an
 * *intent* (a tool with fixed argument semantics, a state-dependent relative command, a chat
 * reply, a cloud question) and one of the intent's *phrasing templates*, whose slots ({Z} a zoom
 * level, {T} a timer, ...) are filled with values rendered as digits or words; then a surface
 * layer adds politeness, fillers, casing, punctuation and typos. Answers follow docs/prompt.md:
 * `<call>tool(arg=value, ...)` in the schema order of tools/camera.json, JSON values, numbers
 * printed with %g; or a short plain sentence.
 *
 * Invariants:
 * - Deterministic: the same params give the same bytes (one splitmix64 stream, no globals).
 * - The validation split is held out BY TEMPLATE: template t of an intent with at least four
 *   templates is held out when t % 5 == 3; training examples never use a held-out template, so
 *   validation accuracy measures phrasings the model never saw. Slot values and surface fillers
 *   are shared (they are vocabulary, not phrasing).
 * - Cloud questions are copied verbatim into user_query_context and never contain '"' or '\'.
 */
#include "datagen.h"

#include "status.h"
#include "undosay.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_OF(a)    ((int)(sizeof(a) / sizeof((a)[0])))
#define PICK(g, a) ((a)[train_rng_below(&(g)->rng, (uint32_t)N_OF(a))])

/* ============================================================================
 * categories */

enum cat {
    CAT_CAPTURE,
    CAT_ZOOM,
    CAT_FLASH,
    CAT_FOCUS,
    CAT_EXPOSURE,
    CAT_WB,
    CAT_TIMER,
    CAT_FORMAT,
    CAT_SCENE,
    CAT_OVERLAY,
    CAT_CAMERA,
    CAT_RELATIVE,
    CAT_CLOUD,
    CAT_CHAT,
    CAT_UNSUPPORTED,
    CAT_RETRY,
    CAT_TRACKER,
    CAT_UNDO,
};

const char *const datagen_categories[] = {
    "capture", "zoom",   "flash",       "focus",   "exposure", "white_balance",
    "timer",   "format", "scene",       "overlay", "camera",   "relative",
    "cloud",   "chat",   "unsupported", "retry",   "tracker",  "undo",
};
const int datagen_n_categories = N_OF(datagen_categories);

/* ============================================================================
 * device state */

struct cam_state {
    double zoom;
    const char *flash;
    bool front;
    bool recording;
    int timer;
    const char *mode;
};

static const char *const SCENES[] = {"auto",   "portrait", "night", "landscape",
                                     "sports", "macro",    "food"};

struct gen {
    uint64_t rng;
    struct cam_state st;
    char state_line[128];
    char memory[2048];   /* CSO lines of earlier turns, each ending in '\n' */
    char recent[32][96]; /* the last utterances drawn: earlier turns' words for user_goal */
    int n_recent;
    const struct pipit_overlap_index *exclude; /* texts never to draw (params.exclude) */
};

static void new_memory(struct gen *g);

static void new_state(struct gen *g) {
    static const double back_z[] = {0.5, 1, 1, 1, 1, 1.5, 2, 2, 2.5, 3, 4, 5, 8, 10};
    static const double front_z[] = {1, 1, 1, 1.5, 2, 3};
    struct cam_state *s = &g->st;
    s->front = train_rng_below(&g->rng, 4) == 0;
    s->zoom = s->front ? PICK(g, front_z) : PICK(g, back_z);
    static const char *const flashes[] = {"off", "off", "off", "on", "auto", "auto"};
    s->flash = s->front ? (train_rng_below(&g->rng, 6) == 0 ? "auto" : "off") : PICK(g, flashes);
    s->recording = train_rng_below(&g->rng, 5) == 0;
    static const int timers[] = {0, 0, 0, 0, 3, 5, 10};
    s->timer = PICK(g, timers);
    s->mode = train_rng_below(&g->rng, 2) == 0 ? "auto" : PICK(g, SCENES);
    pipit_format(g->state_line, sizeof(g->state_line),
                 "zoom=%g flash=%s facing=%s recording=%s timer=%d mode=%s", s->zoom, s->flash,
                 s->front ? "front" : "back", s->recording ? "yes" : "no", s->timer, s->mode);
    new_memory(g);
}

/* ============================================================================
 * memory lines
 *
 * After the first turn the agent's permanent prefix holds Context State Object lines between
 * the system line and the state line (docs/memory.md), oldest first, as src/memory.c writes
 * them over a session: one fact line per device key that a tool result changed and the state
 * line does not show (a newer value supersedes the older line, so a key appears once and holds
 * the current value), the photo and video counters, "done: tool" for a result without facts,
 * each pinned "tool_error: tool code" once, "user_goal: <the words of a request that failed>",
 * "cloud: answered \"<question>\"" (the harness keeps the question, never the answer), and the
 * State-Tracker's lines (subject, occasion, user name, refusals). 35% of the examples are first
 * turns without memory; the rest carry 1..18 lines, what a long session holds. The trainer drops
 * the oldest lines of an example that does not fit a training row, as the agent trims its memory to
 * the trained length, so long sessions are trained at the length the agent will show the model. */

/* True when `memory` holds `line` as one of its lines. */
static bool memory_has_line(const char *memory, const char *line) {
    size_t len = strlen(line);
    for (const char *p = memory; (p = strstr(p, line)) != NULL; p++) {
        if ((p == memory || p[-1] == '\n') && p[len] == '\n') {
            return true;
        }
    }
    return false;
}

static void memory_add_line(struct gen *g, const char *line) {
    size_t o = strlen(g->memory), len = strlen(line);
    if (o + len + 2 < sizeof(g->memory)) {
        memcpy(g->memory + o, line, len);
        g->memory[o + len] = '\n';
        g->memory[o + len + 1] = '\0';
    }
}

enum mem_kind {
    MEM_WB,
    MEM_EV,
    MEM_FOCUS,
    MEM_ASPECT,
    MEM_GRID,
    MEM_LEVEL,
    MEM_JPEG,
    MEM_LOCK,
    MEM_PRIORITY,
    MEM_SCENE,
    MEM_TIMER,
    MEM_PHOTOS,
    MEM_VIDEOS,
    MEM_N_FACTS, /* kinds below this one appear at most once */
    MEM_DONE = MEM_N_FACTS,
    MEM_ERROR,
    MEM_GOAL,
    MEM_CLOUD,
    MEM_TRACKER,
    MEM_N_KINDS,
};

static void new_memory(struct gen *g) {
    static const char *const WB[] = {"auto", "daylight", "cloudy", "tungsten", "fluorescent"};
    static const char *const AR[] = {"4:3", "16:9", "1:1", "full"};
    static const char *const EV[] = {"-2", "-1.5", "-1", "-0.5", "0", "0.5", "1", "1.5", "2"};
    static const char *const DONE[] = {"take_photo",    "record_video", "adjust_zoom", "set_zoom",
                                       "switch_camera", "set_flash",    "tap_to_focus"};
    static const char *const ERR[] = {
        "set_zoom zoom_out_of_range",
        "set_flash no_flash_on_front_camera",
        "switch_camera busy_recording",
        "record_video already_recording",
        "record_video not_recording",
        "tap_to_focus ae_af_locked",
        "set_flash flash_unavailable_while_recording",
        "process_with_cloud_llm cloud_not_configured",
        "process_with_cloud_llm cloud_timeout",
        "process_with_cloud_llm cloud_unavailable",
        "take_photo permission_denied",
        "record_video storage_full",
        "adjust_zoom zoom_out_of_range",
        "set_exposure exposure_out_of_range",
        "set_timer invalid_argument",
        "set_zoom invalid_argument",
    };
    static const char *const GOALS[] = {
        "zoom to 20x",
        "turn on the flash",
        "switch to the front camera",
        "stop recording",
        "focus on the left",
        "what is the capital of japan",
        "write a poem about the sea",
    };
    /* the runtime keeps the question, never the answer (src/memory.c: text from outside) */
    static const char *const CLOUD[] = {
        "what is the capital of japan",        "which city is the capital of france",
        "write a short poem about the sea",    "what is 12 times 4",
        "what aperture is good for portraits", "how do I shoot fireworks",
        "why is golden hour light so soft",    "how do you say good morning in french",
        "when was the telephone invented",     "write me a haiku about autumn",
        "tips for a landscape composition",    "how tall is mount everest",
    };
    static const char *const TRACKED[] = {
        "subject: my dog rex",
        "subject: the kids",
        "subject: a birthday cake",
        "subject: the skyline",
        "subject: my grandmother",
        "subject: the lake",
        "occasion: a wedding",
        "occasion: my blog",
        "occasion: a school project",
        "occasion: a family trip",
        "user_name: anna",
        "user_name: tom",
        "user_name: priya",
        "agent_refusals: turn on hdr",
        "agent_refusals: set iso to 800",
        "agent_refusals: slow motion",
    };
    g->memory[0] = '\0';
    if (train_rng_below(&g->rng, 20) < 7) {
        return; /* a first turn */
    }
    int n = 1 + (int)train_rng_below(&g->rng, 18);
    bool fact_said[MEM_N_FACTS] = {false};
    bool error_said[N_OF(ERR)] = {false};
    const struct cam_state *st = &g->st;
    for (int i = 0; i < n; i++) {
        char line[160];
        int kind = (int)train_rng_below(&g->rng, MEM_N_KINDS + 3);
        if (kind >= MEM_N_KINDS) {
            kind = kind == MEM_N_KINDS       ? MEM_CLOUD
                   : kind == MEM_N_KINDS + 1 ? MEM_GOAL
                                             : MEM_PHOTOS;
        }
        if (kind < MEM_N_FACTS) {
            if (fact_said[kind]) { /* a newer value supersedes the line: one per key */
                continue;
            }
            fact_said[kind] = true;
        }
        switch ((enum mem_kind)kind) {
            case MEM_WB:
                pipit_format(line, sizeof(line), "white_balance: %s", PICK(g, WB));
                break;
            case MEM_EV:
                pipit_format(line, sizeof(line), "exposure_ev: %s", PICK(g, EV));
                break;
            case MEM_FOCUS:
                pipit_format(line, sizeof(line), "focus_x: %g, focus_y: %g",
                             (double)(1 + train_rng_below(&g->rng, 9)) / 10.0,
                             (double)(1 + train_rng_below(&g->rng, 9)) / 10.0);
                break;
            case MEM_ASPECT:
                pipit_format(line, sizeof(line), "aspect_ratio: %s", PICK(g, AR));
                break;
            case MEM_GRID:
                pipit_format(line, sizeof(line), "grid: %s",
                             train_rng_below(&g->rng, 2) ? "true" : "false");
                break;
            case MEM_LEVEL:
                pipit_format(line, sizeof(line), "horizon_level: %s",
                             train_rng_below(&g->rng, 2) ? "true" : "false");
                break;
            case MEM_JPEG:
                pipit_format(line, sizeof(line), "jpeg_quality: %d",
                             50 + 5 * (int)train_rng_below(&g->rng, 11));
                break;
            case MEM_LOCK:
                pipit_format(line, sizeof(line), "ae_af_locked: %s",
                             train_rng_below(&g->rng, 2) ? "true" : "false");
                break;
            case MEM_PRIORITY:
                pipit_format(line, sizeof(line), "quality_priority: %s",
                             train_rng_below(&g->rng, 2) ? "speed" : "quality");
                break;
            case MEM_SCENE: /* the latest value: the one the state line shows */
                pipit_format(line, sizeof(line), "scene_mode: %s", st->mode);
                break;
            case MEM_TIMER:
                pipit_format(line, sizeof(line), "timer_s: %d", st->timer);
                break;
            case MEM_PHOTOS:
                pipit_format(line, sizeof(line), "photos_taken: %d",
                             1 + (int)train_rng_below(&g->rng, 40));
                break;
            case MEM_VIDEOS:
                pipit_format(line, sizeof(line), "videos_recorded: %d",
                             1 + (int)train_rng_below(&g->rng, 6));
                break;
            case MEM_DONE:
                pipit_format(line, sizeof(line), "done: %s", PICK(g, DONE));
                break;
            case MEM_ERROR: {
                uint32_t e = train_rng_below(&g->rng, (uint32_t)N_OF(ERR));
                if (error_said[e]) { /* the agent pins an error once */
                    continue;
                }
                error_said[e] = true;
                pipit_format(line, sizeof(line), "tool_error: %s", ERR[e]);
                break;
            }
            case MEM_GOAL:
                /* a failed request of an earlier turn: any words at all, often a command */
                if (g->n_recent > 0 && train_rng_below(&g->rng, 4) != 0) {
                    int k = (int)train_rng_below(&g->rng,
                                                 (uint32_t)(g->n_recent < 32 ? g->n_recent : 32));
                    pipit_format(line, sizeof(line), "user_goal: %s", g->recent[k]);
                } else {
                    pipit_format(line, sizeof(line), "user_goal: %s", PICK(g, GOALS));
                }
                break;
            case MEM_CLOUD:
                pipit_format(line, sizeof(line), "cloud: answered \"%s\"", PICK(g, CLOUD));
                break;
            default:
                pipit_format(line, sizeof(line), "%s", PICK(g, TRACKED));
                break;
        }
        if (memory_has_line(g->memory, line)) {
            continue; /* the CSO holds a line once */
        }
        memory_add_line(g, line);
    }
}

/* ============================================================================
 * numbers */

static const char *const WORDS[] = {"zero", "one",   "two",   "three", "four", "five",
                                    "six",  "seven", "eight", "nine",  "ten"};
static const char *const TENS[] = {"",      "",      "twenty",  "thirty", "forty",
                                   "fifty", "sixty", "seventy", "eighty", "ninety"};

/* A level like 2 or 2.5 as digits or words. */
static void render_level(struct gen *g, double v, char *out, size_t size, bool allow_words) {
    int whole = (int)v;
    bool half = v - whole > 0.25;
    uint32_t r = allow_words ? train_rng_below(&g->rng, 3) : 0;
    if (r == 0 || whole > 10) {
        if (whole == 0 && half && train_rng_below(&g->rng, 3) == 0) {
            pipit_format(out, size, ".5");
        } else {
            pipit_format(out, size, "%g", v);
        }
    } else if (!half) {
        pipit_format(out, size, "%s", WORDS[whole]);
    } else if (whole == 0) {
        pipit_format(out, size, "%s", train_rng_below(&g->rng, 2) ? "half" : "point five");
    } else if (r == 1) {
        pipit_format(out, size, "%s and a half", WORDS[whole]);
    } else {
        pipit_format(out, size, "%s point five", WORDS[whole]);
    }
}

/* An integer 0..100 in digits or words. */
static void render_int(struct gen *g, int v, char *out, size_t size) {
    if (train_rng_below(&g->rng, 3) != 0 || v > 99 || v < 0) {
        pipit_format(out, size, "%d", v);
    } else if (v <= 10) {
        pipit_format(out, size, "%s", WORDS[v]);
    } else if (v % 10 == 0) {
        pipit_format(out, size, "%s", TENS[v / 10]);
    } else if (v > 20) {
        pipit_format(out, size, "%s %s", TENS[v / 10], WORDS[v % 10]);
    } else {
        pipit_format(out, size, "%d", v);
    }
}

/* A number the person says that the device cannot do (zoom 50x, a 7 second timer): the answer
 * copies it and validation refuses it (DESIGN item 3: refused, never bent). Integers may be
 * words, other numbers are digits. */
static void render_any(struct gen *g, double v, char *out, size_t size) {
    if (v == (int)v && v >= 0 && v <= 99) {
        render_int(g, (int)v, out, size);
    } else {
        pipit_format(out, size, "%g", v);
    }
}

/* One numeric command in OUT_OF_RANGE_PERCENT asks for a value outside the tool's range. The
 * issues' own examples (zoom 50x, exposure +3, a 7 second timer) and the values that made a dev
 * scenario's words training words (20 seconds) are not among the values: the dev sets measure
 * those requests on phrasings the model never saw (`pipit train --overlap`). */
#define OUT_OF_RANGE_PERCENT 12

static bool out_of_range(struct gen *g) {
    return train_rng_below(&g->rng, 100) < OUT_OF_RANGE_PERCENT;
}

/* ============================================================================
 * templates */

#define MAX_SLOTS 4

struct slots {
    char key[MAX_SLOTS];
    char val[MAX_SLOTS][96];
    int n;
};

static void slot_set(struct slots *s, char key, const char *val) {
    for (int i = 0; i < s->n; i++) {
        if (s->key[i] == key) {
            pipit_format(s->val[i], sizeof(s->val[i]), "%s", val);
            return;
        }
    }
    if (s->n < MAX_SLOTS) {
        s->key[s->n] = key;
        pipit_format(s->val[s->n], sizeof(s->val[s->n]), "%s", val);
        s->n++;
    }
}

/* Expand "{Z}" style slots (one capital letter) of `tpl` into `out`. */
static void expand(const char *tpl, const struct slots *s, char *out, size_t size) {
    size_t o = 0;
    for (const char *p = tpl; *p != '\0' && o + 1 < size; p++) {
        if (p[0] == '{' && p[1] != '\0' && p[2] == '}') {
            for (int i = 0; i < s->n; i++) {
                if (s->key[i] == p[1]) {
                    for (const char *v = s->val[i]; *v != '\0' && o + 1 < size; v++) {
                        out[o++] = *v;
                    }
                }
            }
            p += 2;
            continue;
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

static bool has_slot(const char *tpl, char key) {
    char pat[4] = {'{', key, '}', '\0'};
    return strstr(tpl, pat) != NULL;
}

/* Fill slot `key` with a random entry of `list` when template `tpl` has it. */
static void fill_from(struct gen *g,
                      const char *tpl,
                      struct slots *s,
                      char key,
                      const char *const *list,
                      int n) {
    if (has_slot(tpl, key)) {
        slot_set(s, key, list[train_rng_below(&g->rng, (uint32_t)n)]);
    }
}

/* ============================================================================
 * intents
 *
 * Each intent has templates and a fill function that chooses slot values for template `t`
 * and writes the expected answer. Returning false means "this state makes no sense for the
 * intent, draw again". */

struct intent;
typedef bool (*fill_fn)(struct gen *g,
                        const struct intent *in,
                        int t,
                        struct slots *s,
                        char *out,
                        size_t size);

struct intent {
    const char *name;
    enum cat cat;
    int weight; /* relative frequency */
    const char *const *tpl;
    int n_tpl;
    fill_fn fill;
    bool verbatim; /* no surface noise (cloud questions are copied into the call) */
    bool bare;     /* no politeness prefixes or suffixes ("yo", "thanks" are chat themselves) */
    const char *answer; /* fill_fixed: the answer, whatever the template */
};

/* An intent whose answer is always the same: a call without state or slots, or a chat reply. */
static bool
fill_fixed(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)g, (void)t, (void)s;
    pipit_format(out, size, "%s", in->answer);
    return true;
}

#define TPL(a) a, N_OF(a)

/* ---------------------------------------------------------------- capture */

static const char *const T_PHOTO[] = {
    "take a photo",
    "take a picture",
    "snap a pic",
    "take a shot",
    "capture",
    "photo",
    "a photo",
    "shoot",
    "say cheese",
    "take a pic",
    "grab a shot",
    "capture this",
    "snap a photo",
    "get a picture of this",
    "click",
    "take the picture",
    "shutter",
    "take one photo",
    "one picture",
    "snap it",
    "can i get a photo",
    "picture time",
    "take a snapshot",
    "capture the moment",
    "press the shutter",
    "a picture",
    "i want a photo",
    "make a photo",
    "grab a still",
    "take a still",
    "capture a photo",
    "get the shot",
    "take it",
    "shoot it",
    "fire the shutter",
    "take a quick photo",
    "photograph this",
    "get a snap",
    "snap",
    "photo please",
    "take a photograph",
    "quick picture",
    "pic",
};

static const char *const T_REC_START[] = {
    "start recording",
    "record a video",
    "start a video",
    "begin recording",
    "shoot a video",
    "record",
    "start filming",
    "film this",
    "video",
    "start video",
    "roll the camera",
    "record video",
    "begin a video",
    "take a video",
    "start the recording",
    "capture a video",
    "let's record",
    "record this",
    "make a video",
    "start taking a video",
    "a video",
    "video recording on",
    "start shooting video",
    "turn on recording",
    "recording on",
    "film now",
    "begin filming",
};

static const char *const T_REC_STOP[] = {
    "stop recording",
    "stop the video",
    "end recording",
    "stop filming",
    "cut",
    "end the video",
    "finish recording",
    "stop video",
    "stop the recording",
    "that's enough, stop recording",
    "end the clip",
    "video off",
    "wrap up the video",
    "done recording",
    "quit recording",
    "halt the recording",
    "end filming",
    "that's a wrap",
    "stop shooting video",
    "kill the recording",
    "turn off recording",
    "recording off",
    "finish the video",
    "stop the clip",
    "cancel the recording",
    "stop the filming now",
    "cancel the video",
};

/* What a capture is of: any noun phrase. Words chosen as a category (people, animals, places,
 * things, events), none taken from an evaluation set. */
static const char *const SHOT_OF[] = {
    "the sunset",
    "my dog",
    "the cat",
    "the kids",
    "the baby",
    "my friends",
    "the mountains",
    "the lake",
    "the bridge",
    "this flower",
    "my lunch",
    "the building",
    "the street",
    "the crowd",
    "the band",
    "the stage",
    "the garden",
    "the ocean",
    "the trees",
    "the moon",
    "the stars",
    "the city lights",
    "my car",
    "the bike",
    "the church",
    "the statue",
    "the painting",
    "the menu",
    "the sign",
    "the birds",
    "the fountain",
    "the river",
    "the old town",
    "the castle",
    "the market",
    "the bride",
    "the groom",
    "grandma",
    "dad",
    "my sister",
    "the team",
    "the players",
    "the puppy",
    "the horse",
    "the sky",
    "the clouds",
    "the rainbow",
    "this page",
    "the whiteboard",
    "the receipt",
    "the coffee",
    "the dessert",
    "her smile",
    "us",
    "me",
    "them",
    "everyone",
    "the group",
    "this moment",
    "the fireworks",
    "the snow",
    "the waterfall",
    "the tower",
    "the harbor",
    "the boats",
    "the train",
    "the field",
    "the forest",
    "the path",
    "the house",
    "the kitchen",
    "the product",
    "the shoes",
    "the watch",
    "the bottle",
    "the book",
    "that",
    "this",
    "the scene",
    "the door",
};
static const char *const T_PHOTO_OF[] = {
    "snap {O}",
    "take a photo of {O}",
    "take a picture of {O}",
    "get a shot of {O}",
    "capture {O}",
    "shoot {O}",
    "photograph {O}",
    "grab a shot of {O}",
    "get {O}",
    "a picture of {O}",
    "quick shot of {O}",
    "snap a pic of {O}",
    "grab {O}",
    "{O}, take it",
    "{O} - snap it",
    "get a photo of {O} now",
    "one of {O}",
    "a still of {O}",
    "now {O}, shoot",
    "take {O} now",
    "picture {O}",
    "go ahead, snap {O}",
    "click {O}",
    "capture {O} for me",
};
static const char *const T_VIDEO_OF[] = {
    "film {O}",
    "record {O}",
    "start filming {O}",
    "take a video of {O}",
    "shoot a video of {O}",
    "start a clip of {O}",
    "get a video of {O}",
    "roll on {O}",
    "begin recording {O}",
    "a video of {O}",
    "record a clip of {O}",
    "film {O} for me",
};

static bool fill_photo_of(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)in, (void)t;
    slot_set(s, 'O', PICK(g, SHOT_OF));
    pipit_format(out, size, "<call>take_photo()");
    return true;
}

static bool fill_video_of(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)in, (void)t;
    if (g->st.recording) {
        return false;
    }
    slot_set(s, 'O', PICK(g, SHOT_OF));
    pipit_format(out, size, "<call>record_video(action=\"start\")");
    return true;
}

static bool fill_rec_start(struct gen *g,
                           const struct intent *in,
                           int t,
                           struct slots *s,
                           char *out,
                           size_t size) {
    (void)in, (void)t, (void)s;
    if (g->st.recording && train_rng_below(&g->rng, 3) != 0) {
        return false;
    }
    pipit_format(out, size, "<call>record_video(action=\"start\")");
    return true;
}

static bool fill_rec_stop(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)in, (void)t, (void)s;
    if (!g->st.recording && train_rng_below(&g->rng, 3) != 0) {
        return false;
    }
    pipit_format(out, size, "<call>record_video(action=\"stop\")");
    return true;
}

/* ---------------------------------------------------------------- zoom */

static const char *const T_ZOOM_SET[] = {
    "zoom to {Z}",
    "set zoom to {Z}",
    "{Z} zoom",
    "set it to {Z} zoom",
    "make it {Z}",
    "go to {Z}",
    "change the zoom to {Z}",
    "zoom in to {Z}",
    "zoom level {N}",
    "i want {Z} zoom",
    "zoom out to {Z}",
    "set the zoom level to {N}",
    "put the zoom at {Z}",
    "{Z}",
    "magnify {Z}",
    "zoom at {Z}",
    "can you do {Z} zoom",
    "use {Z}",
    "switch to {Z}",
    "jump to {Z} zoom",
    "zoom {N} times",
    "zoom {Z}",
    "{Z} magnification",
    "make the zoom {Z}",
};

static bool fill_zoom_set(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    static const double levels[] = {0.5, 1, 1.5, 2, 2, 2.5, 3, 3, 4, 5, 6, 7, 8, 9, 10};
    static const double beyond[] = {0.1, 0.2, 0.25, 0.3, 11, 12, 15, 16, 20,
                                    25,  30,  40,   45,  60, 75, 80, 99, 100};
    bool oor = out_of_range(g);
    double v = oor ? PICK(g, beyond) : PICK(g, levels);
    const char *tpl = in->tpl[t];
    char num[48], z[64];
    if (oor) {
        render_any(g, v, num, sizeof(num));
    } else {
        render_level(g, v, num, sizeof(num), true);
    }
    if (has_slot(tpl, 'Z')) {
        uint32_t r = train_rng_below(&g->rng, 8);
        if (v == 2 && r == 0) {
            pipit_format(z, sizeof(z), "%s", train_rng_below(&g->rng, 2) ? "double" : "twice");
        } else if (v == 0.5 && r == 0) {
            pipit_format(z, sizeof(z), "%s", train_rng_below(&g->rng, 2) ? "ultra wide" : "half");
        } else if (r < 4) {
            bool digits = isdigit((unsigned char)num[0]) || num[0] == '.';
            pipit_format(z, sizeof(z), "%s%s", num, digits && r < 3 ? "x" : " x");
        } else if (r < 6) {
            pipit_format(z, sizeof(z), "%s times", num);
        } else {
            pipit_format(z, sizeof(z), "%gx", v);
        }
        slot_set(s, 'Z', z);
    }
    slot_set(s, 'N', num);
    pipit_format(out, size, "<call>set_zoom(level=%g)", v);
    return true;
}

static const char *const T_ZOOM_IN[] = {
    "zoom in",          "zoom in a bit",    "zoom in a bit more",
    "zoom in more",     "closer",           "get closer",
    "a little closer",  "zoom closer",      "magnify",
    "enlarge",          "bring it closer",  "zoom in a little",
    "more zoom",        "punch in",         "tighter",
    "zoom in one step", "zoom in slightly", "can you get closer",
    "bigger",           "zoom in again",    "increase the zoom",
    "raise the zoom",   "get in closer",    "more magnification",
    "too far away",     "push in",          "zoom in some",
    "step closer",
};

static const char *const T_ZOOM_OUT[] = {
    "zoom out",
    "zoom out a bit",
    "zoom out a bit more",
    "zoom out more",
    "further",
    "wider",
    "a bit wider",
    "back up a bit",
    "less zoom",
    "pull back",
    "zoom back out",
    "zoom out a little",
    "show more",
    "widen the shot",
    "step back",
    "zoom out one step",
    "too close",
    "smaller",
    "zoom out again",
    "zoom out slightly",
    "reduce the zoom",
    "decrease the zoom",
    "lower the zoom",
    "not so close",
    "pull out",
    "back off a bit",
    "too zoomed in",
    "zoom out some",
    "less magnification",
};

/* ---------------------------------------------------------------- flash */

static const char *const T_FLASH_ON[] = {
    "turn on the flash",
    "flash on",
    "enable flash",
    "use the flash",
    "torch on",
    "i need the flash",
    "switch the flash on",
    "put the flash on",
    "the flash on",
    "force flash",
    "flash please",
    "activate the flash",
    "always flash",
    "it's too dark, use flash",
    "set flash to on",
    "with flash",
    "turn the flash on",
    "enable the flash",
    "switch on the flash",
    "the flash please",
    "flash should be on",
    "we need flash",
    "light it up with the flash",
    "flash on please",
};

static const char *const T_FLASH_OFF[] = {
    "turn off the flash",
    "flash off",
    "no flash",
    "disable flash",
    "kill the flash",
    "switch the flash off",
    "the flash off",
    "without flash",
    "deactivate the flash",
    "set flash to off",
    "don't use the flash",
    "stop the flash",
    "flash is too bright, turn it off",
    "never flash",
    "turn the flash off",
    "disable the flash",
    "deactivate flash",
    "shut off the flash",
    "no more flash",
    "lose the flash",
    "flash should be off",
    "get rid of the flash",
    "never use the flash",
    "stop using the flash",
    "flash off please",
    "switch off the flash",
};

static const char *const T_FLASH_AUTO[] = {
    "auto flash",
    "flash auto",
    "set flash to auto",
    "set flash to automatic",
    "automatic flash",
    "flash on auto",
    "let the camera decide the flash",
    "the flash to auto",
    "make the flash automatic",
    "flash automatic",
    "go back to auto flash",
    "restore the automatic flash",
    "return the flash to auto",
};

static bool fill_flash(const char *mode, char *out, size_t size) {
    pipit_format(out, size, "<call>set_flash(mode=\"%s\")", mode);
    return true;
}

static bool fill_flash_on(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_flash("on", out, size);
}

static bool fill_flash_off(struct gen *g,
                           const struct intent *in,
                           int t,
                           struct slots *s,
                           char *out,
                           size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_flash("off", out, size);
}

static bool fill_flash_auto(struct gen *g,
                            const struct intent *in,
                            int t,
                            struct slots *s,
                            char *out,
                            size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_flash("auto", out, size);
}

/* ---------------------------------------------------------------- on/off, composed */

/* A switch named in many words, turned on or off with many verbs: frames with {N} (the
 * switch's noun, drawn per example) so the model learns the verb's polarity apart from the
 * noun. The fixed templates above keep the idioms; these keep the pattern. */
static const char *const F_ON[] = {
    "turn on the {N}",
    "turn the {N} on",
    "switch on the {N}",
    "switch the {N} on",
    "get the {N} going",
    "put the {N} on",
    "{N} on",
    "the {N} on",
    "enable the {N}",
    "activate the {N}",
    "bring the {N} up",
    "i want the {N} on",
    "{N} back on",
    "use the {N}",
    "can we have the {N}",
    "give me the {N}",
    "start the {N}",
    "{N} on again",
    "let's have the {N}",
    "add the {N}",
    "the {N}, on",
    "need the {N} now",
    "put the {N} back",
    "bring back the {N}",
};
static const char *const F_OFF[] = {
    "turn off the {N}",
    "turn the {N} off",
    "switch off the {N}",
    "switch the {N} off",
    "drop the {N}",
    "kill the {N}",
    "{N} off",
    "the {N} off",
    "disable the {N}",
    "deactivate the {N}",
    "take the {N} away",
    "{N} away",
    "no more {N}",
    "lose the {N}",
    "get rid of the {N}",
    "i don't want the {N}",
    "stop the {N}",
    "remove the {N}",
    "without the {N}",
    "cut the {N}",
    "the {N}, off",
    "no {N} please",
    "ditch the {N}",
    "{N} off again",
};
static const char *const N_FLASH[] = {"flash", "camera flash", "flash light"};
static const char *const N_GRID[] = {
    "grid", "grid lines", "gridlines", "composition grid", "thirds grid", "grid overlay",
};
static const char *const N_LEVEL[] = {
    "level", "horizon level", "horizon guide", "level indicator", "horizon line", "tilt guide",
};
static const char *const N_LOCK[] = {
    "focus lock", "exposure lock", "ae/af lock", "af lock", "focus and exposure lock",
};

struct switch_words {
    const char *name; /* the intent's name */
    const char *const *nouns;
    int n;
    const char *on, *off; /* the calls */
};
static const struct switch_words SWITCHES[] = {
    {"flash_sw", N_FLASH, N_OF(N_FLASH), "<call>set_flash(mode=\"on\")",
     "<call>set_flash(mode=\"off\")"},
    {"grid_sw", N_GRID, N_OF(N_GRID), "<call>set_grid(enabled=true)",
     "<call>set_grid(enabled=false)"},
    {"level_sw", N_LEVEL, N_OF(N_LEVEL), "<call>set_horizon_level(enabled=true)",
     "<call>set_horizon_level(enabled=false)"},
    {"lock_sw", N_LOCK, N_OF(N_LOCK), "<call>set_ae_af_lock(locked=true)",
     "<call>set_ae_af_lock(locked=false)"},
};

static bool fill_switch(struct gen *g,
                        const struct intent *in,
                        int t,
                        struct slots *s,
                        char *out,
                        size_t size) {
    bool on = in->tpl == F_ON;
    const struct switch_words *w = &SWITCHES[train_rng_below(&g->rng, N_OF(SWITCHES))];
    slot_set(s, 'N', w->nouns[train_rng_below(&g->rng, (uint32_t)w->n)]);
    (void)t;
    pipit_format(out, size, "%s", on ? w->on : w->off);
    return true;
}

/* ---------------------------------------------------------------- focus */

static const char *const T_FOCUS_AREA[] = {
    "focus on the {P}",
    "tap to focus on the {P}",
    "focus {P}",
    "focus the {P}",
    "focus on the {P} of the frame",
    "set focus to the {P}",
    "tap the {P}",
    "focus at the {P}",
    "autofocus on the {P}",
    "put the focus on the {P}",
    "make the {P} sharp",
    "focus point {P}",
};

static const char *const T_FOCUS_XY[] = {
    "focus at {X}, {Y}",    "tap to focus at {X} {Y}", "focus on x {X} y {Y}",
    "focus point {X} {Y}",  "tap at {X}, {Y}",         "set focus to {X}, {Y}",
    "focus at x={X} y={Y}", "focus on {X} {Y}",        "focus on position {X}, {Y}",
};

static bool fill_focus_area(struct gen *g,
                            const struct intent *in,
                            int t,
                            struct slots *s,
                            char *out,
                            size_t size) {
    static const struct {
        const char *name;
        double x, y;
    } areas[] = {
        {"center", 0.5, 0.5},
        {"middle", 0.5, 0.5},
        {"centre", 0.5, 0.5},
        {"top left", 0.25, 0.25},
        {"upper left", 0.25, 0.25},
        {"top right", 0.75, 0.25},
        {"upper right", 0.75, 0.25},
        {"bottom left", 0.25, 0.75},
        {"lower left", 0.25, 0.75},
        {"bottom right", 0.75, 0.75},
        {"lower right", 0.75, 0.75},
        {"top", 0.5, 0.25},
        {"bottom", 0.5, 0.75},
        {"left", 0.25, 0.5},
        {"right", 0.75, 0.5},
        {"left side", 0.25, 0.5},
        {"right side", 0.75, 0.5},
        {"top left corner", 0.25, 0.25},
        {"bottom right corner", 0.75, 0.75},
    };
    (void)in, (void)t;
    int i = (int)train_rng_below(&g->rng, (uint32_t)N_OF(areas));
    slot_set(s, 'P', areas[i].name);
    pipit_format(out, size, "<call>tap_to_focus(x=%g, y=%g)", areas[i].x, areas[i].y);
    return true;
}

static bool fill_focus_xy(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)in, (void)t;
    double x = (double)(1 + train_rng_below(&g->rng, 9)) / 10.0;
    double y = (double)(1 + train_rng_below(&g->rng, 9)) / 10.0;
    if (train_rng_below(&g->rng, 4) == 0) {
        x = (double)(5 + 10 * train_rng_below(&g->rng, 10)) / 100.0;
    }
    if (out_of_range(g)) { /* off the frame */
        static const double beyond[] = {1.2, 1.5, 2, 3};
        if (train_rng_below(&g->rng, 2) == 0) {
            x = PICK(g, beyond);
        } else {
            y = PICK(g, beyond);
        }
    }
    char xs[16], ys[16];
    pipit_format(xs, sizeof(xs), "%g", x);
    pipit_format(ys, sizeof(ys), "%g", y);
    slot_set(s, 'X', xs);
    slot_set(s, 'Y', ys);
    pipit_format(out, size, "<call>tap_to_focus(x=%g, y=%g)", x, y);
    return true;
}

/* ---------------------------------------------------------------- AE/AF lock */

static const char *const T_LOCK[] = {
    "lock focus",
    "lock the exposure",
    "lock focus and exposure",
    "ae af lock on",
    "ae/af lock",
    "hold the focus",
    "lock it",
    "turn on the ae lock",
    "enable ae/af lock",
    "freeze the focus",
    "keep the focus locked",
    "lock exposure and focus",
    "af lock",
    "lock the focus here",
    "lock exposure",
    "exposure lock",
    "lock the af",
    "lock ae and af",
    "lock the settings",
    "focus lock on",
};

static const char *const T_UNLOCK[] = {
    "unlock focus",
    "release the lock",
    "ae af lock off",
    "turn off the focus lock",
    "unlock the exposure",
    "disable ae/af lock",
    "unlock",
    "free the focus",
    "remove the focus lock",
    "unlock focus and exposure",
    "stop locking the focus",
    "ae lock off",
    "unlock exposure",
    "release the focus",
    "exposure lock off",
    "unlock the settings",
    "let the focus move again",
    "cancel the focus lock",
    "drop the exposure lock",
};

/* ---------------------------------------------------------------- exposure */

static const char *const T_EXPOSURE[] = {
    "set exposure to {E}",
    "exposure {E}",
    "{E} ev",
    "ev {E}",
    "exposure compensation {E}",
    "set ev to {E}",
    "change the exposure to {E}",
    "exposure to {E} ev",
    "make the exposure {E}",
    "set the ev to {E}",
    "exposure at {E}",
    "adjust exposure to {E}",
    "{E} exposure",
    "put exposure on {E}",
};

static bool fill_exposure(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    static const double evs[] = {-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2};
    static const double beyond[] = {-5, -4, -3.5, -2.5, 2.5, 3.5, 4, 4, 5, 6};
    (void)in, (void)t;
    double v = out_of_range(g) ? PICK(g, beyond) : PICK(g, evs);
    char num[48], e[64];
    double a = v < 0 ? -v : v;
    render_level(g, a, num, sizeof(num), true);
    uint32_t r = train_rng_below(&g->rng, 4);
    if (v == 0) {
        pipit_format(e, sizeof(e), "%s", r < 2 ? "0" : "zero");
    } else if (v < 0) {
        static const char *const neg[] = {"-", "minus ", "negative ", "minus "};
        pipit_format(e, sizeof(e), "%s%s", neg[r], num);
    } else {
        static const char *const pos[] = {"+", "plus ", "", "positive "};
        pipit_format(e, sizeof(e), "%s%s", pos[r], num);
    }
    slot_set(s, 'E', e);
    pipit_format(out, size, "<call>set_exposure(ev=%g)", v);
    return true;
}

static const char *const T_BRIGHTER[] = {
    "make it brighter",
    "brighter",
    "brighten the image",
    "increase the exposure",
    "more exposure",
    "it's too dark",
    "raise the exposure",
    "lighten it up",
    "the picture is too dark",
    "boost exposure",
    "increase exposure",
    "raise the brightness",
    "more light",
    "brighten it",
    "too dark",
    "up the exposure",
    "it's too dim",
    "the image is dark",
    "turn up the brightness",
    "one stop brighter",
    "up a stop",
    "brighter by a stop",
    "open up a stop",
};

static const char *const T_DARKER[] = {
    "make it darker",
    "darker",
    "darken the image",
    "decrease the exposure",
    "less exposure",
    "it's too bright",
    "lower the exposure",
    "reduce exposure",
    "the picture is too bright",
    "tone it down",
    "decrease exposure",
    "reduce the brightness",
    "less light",
    "darken it",
    "too bright",
    "lower the brightness",
    "it's washed out",
    "the image is bright",
    "turn down the brightness",
    "one stop darker",
    "down a stop",
    "darker by a stop",
    "stop it down a bit",
};

/* ---------------------------------------------------------------- white balance */

static const char *const T_WB[] = {
    "set white balance to {W}",
    "{W} white balance",
    "white balance {W}",
    "wb {W}",
    "use {W} white balance",
    "change the white balance to {W}",
    "white balance to {W}",
    "set wb to {W}",
    "{W} wb",
    "switch white balance to {W}",
    "make the white balance {W}",
    "i want {W} white balance",
    "white balance on {W}",
    "colour balance {W}",
    "color balance {W}",
};

static bool
fill_wb(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    static const struct {
        const char *word, *mode;
    } wbs[] = {
        {"daylight", "daylight"},
        {"sunny", "daylight"},
        {"sunlight", "daylight"},
        {"day light", "daylight"},
        {"cloudy", "cloudy"},
        {"overcast", "cloudy"},
        {"cloud", "cloudy"},
        {"tungsten", "tungsten"},
        {"incandescent", "tungsten"},
        {"indoor", "tungsten"},
        {"fluorescent", "fluorescent"},
        {"fluorescent light", "fluorescent"},
        {"office light", "fluorescent"},
        {"auto", "auto"},
        {"automatic", "auto"},
    };
    (void)in, (void)t;
    int i = (int)train_rng_below(&g->rng, (uint32_t)N_OF(wbs));
    slot_set(s, 'W', wbs[i].word);
    pipit_format(out, size, "<call>set_white_balance(mode=\"%s\")", wbs[i].mode);
    return true;
}

/* ---------------------------------------------------------------- timer */

static const char *const T_TIMER[] = {
    "set a {T} timer",
    "{T} timer",
    "timer {S}",
    "set the timer to {S}",
    "self timer {S}",
    "a {T} timer",
    "use a {T} timer",
    "countdown {S}",
    "delay the shot by {S}",
    "timer for {S}",
    "give me a {T} countdown",
    "put a {T} timer on",
    "start a {T} self timer",
    "{T} delay",
    "set the self-timer to {S}",
    "wait {S} before the shot",
};

static const char *const T_TIMER_OFF[] = {
    "turn off the timer",
    "no timer",
    "timer off",
    "cancel the timer",
    "disable the self timer",
    "remove the timer",
    "set timer to zero",
    "stop the timer",
    "without a timer",
    "get rid of the timer",
    "cancel the countdown",
    "scrap the self timer",
    "drop the countdown",
    "forget the timer",
    "lose the self-timer",
};

static bool
fill_timer(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    static const int secs[] = {3, 5, 10};
    static const int beyond[] = {1, 2, 4, 6, 8, 9, 12, 15, 25, 30, 45, 60};
    (void)in, (void)t;
    int v = out_of_range(g) ? PICK(g, beyond) : PICK(g, secs);
    char num[24], tt[48], ss[48];
    render_int(g, v, num, sizeof(num));
    bool digits = isdigit((unsigned char)num[0]);
    uint32_t r = train_rng_below(&g->rng, 4);
    if (digits && r == 0) {
        pipit_format(tt, sizeof(tt), "%ss", num);
        pipit_format(ss, sizeof(ss), "%ss", num);
    } else if (digits && r == 1) {
        pipit_format(tt, sizeof(tt), "%s-second", num);
        pipit_format(ss, sizeof(ss), "%s sec", num);
    } else {
        pipit_format(tt, sizeof(tt), "%s second", num);
        pipit_format(ss, sizeof(ss), r == 3 ? "%s" : "%s seconds", num);
    }
    slot_set(s, 'T', tt);
    slot_set(s, 'S', ss);
    pipit_format(out, size, "<call>set_timer(seconds=%d)", v);
    return true;
}

/* ---------------------------------------------------------------- format */

static const char *const T_ASPECT[] = {
    "set aspect ratio to {A}",
    "{A} aspect ratio",
    "switch to {A}",
    "make it {A}",
    "shoot in {A}",
    "{A} format",
    "aspect {A}",
    "ratio {A}",
    "use {A} frame",
    "change the aspect ratio to {A}",
    "{A} photos",
    "crop to {A}",
    "set the ratio to {A}",
    "i want {A} pictures",
};

static bool fill_aspect(struct gen *g,
                        const struct intent *in,
                        int t,
                        struct slots *s,
                        char *out,
                        size_t size) {
    static const struct {
        const char *word, *ratio;
    } rs[] = {
        {"4:3", "4:3"},           {"4 by 3", "4:3"},
        {"four by three", "4:3"}, {"standard", "4:3"},
        {"16:9", "16:9"},         {"16 by 9", "16:9"},
        {"widescreen", "16:9"},   {"sixteen by nine", "16:9"},
        {"1:1", "1:1"},           {"square", "1:1"},
        {"1 by 1", "1:1"},        {"full", "full"},
        {"full screen", "full"},  {"fullscreen", "full"},
    };
    (void)in, (void)t;
    int i = (int)train_rng_below(&g->rng, (uint32_t)N_OF(rs));
    slot_set(s, 'A', rs[i].word);
    pipit_format(out, size, "<call>set_aspect_ratio(ratio=\"%s\")", rs[i].ratio);
    return true;
}

static const char *const T_SPEED[] = {
    "prioritize speed",   "faster capture",      "favor speed",           "speed priority",
    "speed over quality", "i need fast shots",   "quick capture mode",    "prefer speed",
    "optimize for speed", "make capture faster", "fast shutter response", "speed first",
};

static const char *const T_QUALITY[] = {
    "prioritize quality", "best quality",           "favor image quality",
    "quality priority",   "quality over speed",     "i want the best image quality",
    "prefer quality",     "maximum image quality",  "optimize for quality",
    "quality first",      "best possible pictures", "high quality capture",
};

static const char *const T_JPEG[] = {
    "set jpeg quality to {J}",
    "jpeg quality {J}",
    "jpeg {J}",
    "quality {J}",
    "jpg quality {J}",
    "compress at {J}",
    "set the jpeg quality to {J} percent",
    "jpeg quality {J}%",
    "save jpegs at {J}",
    "change jpeg quality to {J}",
    "image compression quality {J}",
    "jpeg at {J} percent",
};

static bool
fill_jpeg(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)in, (void)t;
    int v = 50 + (int)train_rng_below(&g->rng, 51);
    if (train_rng_below(&g->rng, 2) == 0) {
        v = 50 + 5 * (int)train_rng_below(&g->rng, 11);
    }
    if (out_of_range(g)) {
        v = 5 + 5 * (int)train_rng_below(&g->rng, 9); /* 5..45: below the minimum of 50 */
    }
    char num[32];
    render_int(g, v, num, sizeof(num));
    slot_set(s, 'J', num);
    pipit_format(out, size, "<call>set_jpeg_quality(quality=%d)", v);
    return true;
}

/* ---------------------------------------------------------------- scene */

static const char *const T_SCENE[] = {
    "{S} mode",           "switch to {S} mode",        "set scene to {S}",  "use {S} mode",
    "scene mode {S}",     "turn on {S} mode",          "i'm shooting {S}",  "{S} scene",
    "change to {S} mode", "set the scene mode to {S}", "go to {S} mode",    "enable {S} mode",
    "{S} preset",         "put it in {S} mode",        "activate {S} mode", "scene {S}",
    "{S} please",         "select the {S} scene",
};

static bool
fill_scene(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    static const struct {
        const char *word, *mode;
    } sc[] = {
        {"night", "night"},       {"night time", "night"},   {"low light", "night"},
        {"portrait", "portrait"}, {"people", "portrait"},    {"landscape", "landscape"},
        {"scenery", "landscape"}, {"sports", "sports"},      {"action", "sports"},
        {"sport", "sports"},      {"macro", "macro"},        {"close-up", "macro"},
        {"close up", "macro"},    {"food", "food"},          {"dinner", "food"},
        {"auto", "auto"},         {"automatic", "auto"},     {"normal", "auto"},
        {"nighttime", "night"},   {"portraits", "portrait"},
    };
    (void)in, (void)t;
    int i = (int)train_rng_below(&g->rng, (uint32_t)N_OF(sc));
    slot_set(s, 'S', sc[i].word);
    pipit_format(out, size, "<call>set_scene_mode(mode=\"%s\")", sc[i].mode);
    return true;
}

/* ---------------------------------------------------------------- overlays */

static const char *const T_GRID_ON[] = {
    "show the grid",       "turn on the grid",  "grid on",         "enable grid lines",
    "rule of thirds grid", "display gridlines", "show grid lines", "put the grid on",
    "i want the grid",     "add a grid",        "the grid on",     "switch the grid on",
};

static const char *const T_GRID_OFF[] = {
    "hide the grid",         "turn off the grid", "grid off",
    "remove the grid lines", "disable grid",      "no grid",
    "get rid of the grid",   "hide gridlines",    "the grid off",
    "switch the grid off",
};

static const char *const T_LEVEL_ON[] = {
    "show the horizon level",     "turn on the level",        "level on",
    "enable the horizon guide",   "show the level",           "horizon level on",
    "help me keep it straight",   "turn on the horizon line", "display the spirit level",
    "i want the level indicator",
};

static const char *const T_LEVEL_OFF[] = {
    "hide the horizon level",    "turn off the level", "level off",
    "disable the horizon guide", "hide the level",     "horizon level off",
    "remove the horizon line",   "no level indicator", "turn the spirit level off",
};

static bool fill_bool_call(const char *tool, const char *arg, bool v, char *out, size_t size) {
    pipit_format(out, size, "<call>%s(%s=%s)", tool, arg, v ? "true" : "false");
    return true;
}

static bool fill_grid_on(struct gen *g,
                         const struct intent *in,
                         int t,
                         struct slots *s,
                         char *out,
                         size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_bool_call("set_grid", "enabled", true, out, size);
}

static bool fill_grid_off(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_bool_call("set_grid", "enabled", false, out, size);
}

static bool fill_level_on(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_bool_call("set_horizon_level", "enabled", true, out, size);
}

static bool fill_level_off(struct gen *g,
                           const struct intent *in,
                           int t,
                           struct slots *s,
                           char *out,
                           size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    return fill_bool_call("set_horizon_level", "enabled", false, out, size);
}

/* ---------------------------------------------------------------- camera */

static const char *const T_FRONT[] = {
    "switch to the front camera",
    "use the front camera",
    "selfie camera",
    "front camera",
    "front facing camera",
    "turn on the selfie cam",
    "switch to selfie mode",
    "i want to take a selfie",
    "use the front lens",
    "face me",
    "show me myself",
    "front cam",
};

static const char *const T_BACK[] = {
    "switch to the back camera",
    "use the rear camera",
    "back camera",
    "rear camera",
    "main camera",
    "use the back lens",
    "switch to the rear cam",
    "back cam",
    "point it away from me",
    "go back to the main camera",
    "use the world facing camera",
    "rear facing camera",
    "return to the rear camera",
    "switch back to the main lens",
    "back to the rear facing camera",
    "go back to the rear lens",
    "restore the main camera",
};

static bool
fill_front(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)in, (void)t, (void)s;
    if (g->st.front && train_rng_below(&g->rng, 3) != 0) {
        return false;
    }
    pipit_format(out, size, "<call>switch_camera(facing=\"front\")");
    return true;
}

static bool
fill_back(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)in, (void)t, (void)s;
    if (!g->st.front && train_rng_below(&g->rng, 3) != 0) {
        return false;
    }
    pipit_format(out, size, "<call>switch_camera(facing=\"back\")");
    return true;
}

/* ---------------------------------------------------------------- relative (state-dependent) */

static const char *const T_FLIP[] = {
    "switch cameras",
    "flip the camera",
    "other camera",
    "turn the camera around",
    "switch camera",
    "swap cameras",
    "flip",
    "change camera",
    "use the other camera",
    "flip to the other side",
    "toggle the camera",
    "reverse the camera",
    "switch the lens",
    "flip it around",
};

static bool
fill_flip(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)in, (void)t, (void)s;
    pipit_format(out, size, "<call>switch_camera(facing=\"%s\")", g->st.front ? "back" : "front");
    return true;
}

static const char *const T_FLASH_TOGGLE[] = {
    "toggle the flash",        "flash toggle", "switch the flash", "flip the flash",
    "the other flash setting", "toggle flash", "change the flash", "press the flash button",
};

static bool fill_flash_toggle(struct gen *g,
                              const struct intent *in,
                              int t,
                              struct slots *s,
                              char *out,
                              size_t size) {
    (void)in, (void)t, (void)s;
    return fill_flash(strcmp(g->st.flash, "off") == 0 ? "on" : "off", out, size);
}

static const char *const T_REC_TOGGLE[] = {
    "press record", "hit the record button", "toggle recording", "record button",
    "tap record",   "push the video button", "toggle the video", "hit record",
};

static bool fill_rec_toggle(struct gen *g,
                            const struct intent *in,
                            int t,
                            struct slots *s,
                            char *out,
                            size_t size) {
    (void)in, (void)t, (void)s;
    pipit_format(out, size, "<call>record_video(action=\"%s\")",
                 g->st.recording ? "stop" : "start");
    return true;
}

static const char *const T_ZOOM_MAX[] = {
    "zoom all the way in",        "max zoom",        "maximum zoom",
    "zoom in as far as possible", "full zoom",       "zoom in all the way",
    "as close as you can",        "zoom to the max",
};

static const char *const T_ZOOM_MIN[] = {
    "zoom all the way out", "minimum zoom",         "widest view",  "zoom out as far as possible",
    "as wide as possible",  "zoom out all the way", "widest angle", "zoom to the minimum",
};

static const char *const T_ZOOM_RESET[] = {
    "reset the zoom",          "no zoom",         "back to normal zoom",
    "zoom back to 1x",         "normal zoom",     "undo the zoom, go to 1x",
    "remove the zoom",         "default zoom",    "go back to 1x",
    "restore the normal zoom", "return to one x",
};

static bool fill_zoom_max(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)in, (void)t, (void)s;
    pipit_format(out, size, "<call>set_zoom(level=%g)", g->st.front ? 3.0 : 10.0);
    return true;
}

static bool fill_zoom_min(struct gen *g,
                          const struct intent *in,
                          int t,
                          struct slots *s,
                          char *out,
                          size_t size) {
    (void)in, (void)t, (void)s;
    pipit_format(out, size, "<call>set_zoom(level=%g)", g->st.front ? 1.0 : 0.5);
    return true;
}

static const char *const T_SCENE_RESET[] = {
    "back to auto mode",
    "reset the scene mode",
    "turn off {M} mode",
    "exit {M} mode",
    "leave {M} mode",
    "no more {M} mode",
    "stop {M} mode",
    "disable {M} mode",
    "go back to auto mode",
    "return to the normal scene",
    "restore the automatic scene",
};

static bool fill_scene_reset(struct gen *g,
                             const struct intent *in,
                             int t,
                             struct slots *s,
                             char *out,
                             size_t size) {
    (void)in, (void)t;
    if (strcmp(g->st.mode, "auto") == 0) {
        return false;
    }
    slot_set(s, 'M', g->st.mode);
    pipit_format(out, size, "<call>set_scene_mode(mode=\"auto\")");
    return true;
}

/* ---------------------------------------------------------------- chat (plain text) */

static const char *const T_GREET[] = {
    "hi",
    "hello",
    "hey there",
    "good morning",
    "hi pipit",
    "hello camera",
    "good evening",
    "yo",
    "hiya",
    "greetings",
    "hello there",
    "hi there",
    "good afternoon",
    "hey",
    "howdy",
    "morning",
    "hi camera",
    "hello pipit",
    "hey pipit",
    "sup",
};
static const char *const T_THANKS[] = {
    "thanks",
    "thank you",
    "thanks a lot",
    "great, thanks",
    "cheers",
    "thank you so much",
    "much appreciated",
    "thx",
    "thanks pipit",
    "many thanks",
    "ty",
    "thank you very much",
    "thanks a bunch",
    "appreciate it",
    "nice one, thanks",
};
static const char *const T_HELP[] = {
    "what can you do",           "help",
    "what are your features",    "how do i use you",
    "what commands do you know", "what can i ask you",
    "show me what you can do",   "list your abilities",
};
static const char *const T_WHO[] = {
    "who are you",      "what are you",  "are you a robot",
    "what's your name", "are you an ai", "who made you",
};
static const char *const T_HOW[] = {
    "how are you",       "how's it going", "how are you doing", "are you ok",      "what's up",
    "how have you been", "how's your day", "you good",          "how do you feel",
};
static const char *const T_BYE[] = {
    "bye",
    "goodbye",
    "see you later",
    "that's all",
    "good night",
    "i'm done",
    "see ya",
    "bye bye",
    "later",
    "talk to you later",
    "catch you later",
    "i'm finished",
    "farewell",
    "bye then",
    "goodbye pipit",
    "see you",
    "i'm off",
    "that's it for now",
    "ok bye",
    "we're done here",
    "signing off",
    "cya",
    "until next time",
    "bye now",
    "later then",
};
static const char *const T_ACK[] = {
    "ok",         "cool", "nice",        "great",   "awesome",    "perfect",   "got it",
    "looks good", "wow",  "sounds good", "alright", "fine",       "good",      "excellent",
    "okay then",  "sure", "neat",        "lovely",  "that works", "very nice",
};
static const char *const T_UNSUPPORTED[] = {
    "turn on hdr",
    "set iso to {N}",
    "change the shutter speed",
    "add a vintage filter",
    "enable burst mode",
    "start a timelapse",
    "turn on slow motion",
    "record in 4k",
    "shoot in raw",
    "open the gallery",
    "delete the last photo",
    "share this photo",
    "turn on night vision",
    "apply a black and white filter",
    "enable image stabilization",
    "make a panorama",
    "turn on beauty mode",
    "upload the photo",
    "print this picture",
    "set the iso higher",
    "turn on portrait lighting",
    "add a sticker",
    "send this to my mom",
    "turn on hdr mode",
    "record in slow motion",
    "switch to the wide angle lens",
    "turn on live photo",
    "scan this qr code",
    "make a gif",
    "remove the background",
    "turn on the heater",
    "call my mom",
    "play some music",
    "set an alarm",
    "turn on the tv",
    "order a pizza",
    "edit the photo",
    "crop the last picture",
    "add music to the video",
    "post this on instagram",
    "turn on face detection",
    "enable night vision goggles",
    "change the shutter sound",
    "make the photo black and white",
    "turn on dolby vision",
    "switch to the telephoto lens",
    "use the macro lens",
    "turn on the microphone",
    "mute the video",
    "record audio only",
    "set iso to auto",
};

static bool fill_chat_text(const char *text, char *out, size_t size) {
    pipit_format(out, size, "%s", text);
    return true;
}

static bool fill_unsupported(struct gen *g,
                             const struct intent *in,
                             int t,
                             struct slots *s,
                             char *out,
                             size_t size) {
    static const int isos[] = {100, 200, 400, 800, 1600, 3200};
    char num[16];
    (void)in, (void)t;
    pipit_format(num, sizeof(num), "%d", PICK(g, isos));
    slot_set(s, 'N', num);
    return fill_chat_text("Sorry, the camera can't do that.", out, size);
}

/* Reactions to the picture or the scene: compliments, laughter, surprise. {A} an adjective,
 * {N} what is liked. */
static const char *const T_REACT[] = {
    "{A} {N}",
    "that's a {A} {N}",
    "what a {A} {N}",
    "{A}",
    "so {A}",
    "that looks {A}",
    "this looks {A}",
    "that came out {A}",
    "i love this {N}",
    "love it",
    "haha",
    "lol",
    "omg",
    "oh wow",
    "ha, {A}",
    "that's funny",
    "really {A}",
    "that's a keeper",
    "not bad",
    "pretty {A}",
    "look at that",
    "the {N} is {A}",
    "such a {A} {N}",
    "{A}, i like it",
    "hahaha that's silly",
    "oh that's {A}",
    "i like that {N}",
    "it turned out {A}",
    "that's the one",
    "you did great",
};
static const char *const ADJECTIVES[] = {
    "nice",     "great",     "lovely", "beautiful", "cool",      "awesome", "fun",
    "funny",    "cute",      "pretty", "gorgeous",  "amazing",   "good",    "perfect",
    "stunning", "fantastic", "sweet",  "wonderful", "brilliant", "epic",    "charming",
};
static const char *const NOUNS[] = {
    "shot",  "photo",  "picture", "pic",   "one",   "view",  "smile",  "sunset",
    "light", "colors", "colours", "angle", "frame", "scene", "moment", "sky",
};

/* Waiting, thinking, looking around: nothing to do yet. */
static const char *const T_WAIT[] = {
    "hold on",
    "wait",
    "one moment",
    "just a moment",
    "give me a sec",
    "hang on",
    "let me think",
    "hmm",
    "let me see",
    "one sec",
    "wait a minute",
    "not yet",
    "give me a minute",
    "let me check something",
    "i'm thinking",
    "hmm not sure",
    "just looking",
    "still deciding",
    "let me get ready",
    "i'm getting ready",
    "nothing yet",
    "wait for it",
    "hmm let me see",
    "i'm just browsing",
    "we're not ready yet",
    "let's wait a bit",
    "don't do anything yet",
    "just a second",
    "i'm looking for a good spot",
    "let me frame it first",
    "give me a moment",
    "uh let me think",
    "i'm just checking things out",
    "patience",
    "ok wait",
};

/* The person says where they are or what is happening: a situation, not a command. */
static const char *const T_SITUATION[] = {
    "we're at {P}",
    "i'm at {P} with {W}",
    "{E} is about to start",
    "{E} starts in a minute",
    "i'm taking pictures of {O} today",
    "i'm shooting {O} for {U}",
    "this is all for {U}",
    "we're doing {E} now",
    "{W} just arrived",
    "it's so {A} out here",
    "what a {A} day",
    "hi, we're at {P}",
    "ok so we're at {P} now",
    "{W} are getting ready for {E}",
    "today is about {O}",
    "i need pictures for {U}",
    "it's {A} at {P}",
    "{E} is next",
};
static const char *const SIT_PLACE[] = {
    "the beach",   "the park",   "a wedding",    "the zoo",       "the museum",
    "a concert",   "the office", "my house",     "the lake",      "a birthday party",
    "the stadium", "the market", "a restaurant", "the mountains", "the airport",
    "the station", "the harbor", "a festival",   "the garden",    "school",
};
static const char *const SIT_EVENT[] = {
    "the show",  "the game",        "the speech",  "the party",       "the race",
    "dinner",    "the performance", "the match",   "the parade",      "the toast",
    "the dance", "the graduation",  "the meeting", "the first dance", "the gig",
};
static const char *const SIT_WHO[] = {
    "my friends", "my family", "the kids",   "the guests",
    "my team",    "everyone",  "my parents", "the band",
};
static const char *const SIT_USE[] = {
    "my blog",  "instagram",         "my portfolio",   "a school project", "the family album",
    "a client", "an online listing", "the newsletter", "my website",       "a contest",
};
static const char *const SIT_ADJ[] = {
    "sunny", "cold", "windy", "bright", "dark", "busy", "quiet", "beautiful", "foggy", "hot",
};

static bool fill_situation(struct gen *g,
                           const struct intent *in,
                           int t,
                           struct slots *s,
                           char *out,
                           size_t size) {
    const char *tpl = in->tpl[t];
    fill_from(g, tpl, s, 'P', SIT_PLACE, N_OF(SIT_PLACE));
    fill_from(g, tpl, s, 'E', SIT_EVENT, N_OF(SIT_EVENT));
    fill_from(g, tpl, s, 'W', SIT_WHO, N_OF(SIT_WHO));
    fill_from(g, tpl, s, 'U', SIT_USE, N_OF(SIT_USE));
    fill_from(g, tpl, s, 'A', SIT_ADJ, N_OF(SIT_ADJ));
    fill_from(g, tpl, s, 'O', SHOT_OF, N_OF(SHOT_OF));
    pipit_format(out, size, "Okay, I'm ready when you are.");
    return true;
}

/* Is anybody there? */
static const char *const T_PRESENCE[] = {
    "are you there",     "do you copy",
    "are you listening", "hello?",
    "anyone there",      "is this working",
    "testing",           "test test",
    "are you awake",     "you there",
    "do you hear me",    "is this thing on",
    "are you still on",  "can you understand me",
    "mic check",         "are you alive",
};

/* Questions about the camera's state: answered from the state line, no call. {K} the key. */
static const char *const T_STATUS[] = {
    "is the {K} on",        "what is the {K} set to",  "what's the {K}",      "{K} status",
    "is the {K} on or off", "tell me the {K} setting", "what {K} am i using", "check the {K}",
    "how is the {K} set",   "what's the current {K}",  "which {K} is it",     "is {K} enabled",
};

/* "again", "one more": the last capture once more (the memory says photos were taken). */
static const char *const T_AGAIN[] = {
    "again",         "one more",     "another one",  "once more",     "do it again",
    "another photo", "take another", "same again",   "repeat",        "one more time",
    "another shot",  "more",         "again please", "take one more", "another please",
    "one more pic",  "and another",  "go again",     "encore",        "another one please",
};

/* "try again" after a failed request: the memory's pinned user_goal and tool_error say what
 * failed; the answer is that request's call again. */
static const char *const T_RETRY[] = {
    "try again",     "retry",           "try that again",     "give it another go",
    "try it again",  "let's try again", "retry that",         "have another go",
    "please retry",  "try once more",   "go ahead and retry", "give it another try",
    "again, try it", "retry it",        "one more try",       "try again now",
};

/* A selfie: with the front camera a photo, else the front camera first. */
static const char *const T_SELFIE[] = {
    "take a selfie",   "selfie",        "snap a selfie",     "selfie time",
    "get a selfie",    "a selfie",      "let's do a selfie", "selfie now",
    "take the selfie", "grab a selfie",
};

static bool
fill_react(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)in, (void)t;
    slot_set(s, 'A', PICK(g, ADJECTIVES));
    slot_set(s, 'N', PICK(g, NOUNS));
    pipit_format(out, size, "Glad you like it.");
    return true;
}

static bool fill_status(struct gen *g,
                        const struct intent *in,
                        int t,
                        struct slots *s,
                        char *out,
                        size_t size) {
    (void)in, (void)t;
    const struct cam_state *st = &g->st;
    switch (train_rng_below(&g->rng, 6)) {
        case 0:
            slot_set(s, 'K', "flash");
            pipit_format(out, size, "The flash is %s.", st->flash);
            break;
        case 1:
            slot_set(s, 'K', "zoom");
            pipit_format(out, size, "The zoom is %gx.", st->zoom);
            break;
        case 2:
            slot_set(s, 'K', train_rng_below(&g->rng, 2) ? "camera" : "lens");
            pipit_format(out, size, "The %s camera is on.", st->front ? "front" : "back");
            break;
        case 3:
            slot_set(s, 'K', train_rng_below(&g->rng, 2) ? "recording" : "video");
            pipit_format(out, size, "%s",
                         st->recording ? "The camera is recording."
                                       : "The camera is not recording.");
            break;
        case 4:
            slot_set(s, 'K', train_rng_below(&g->rng, 2) ? "timer" : "self timer");
            if (st->timer == 0) {
                pipit_format(out, size, "The timer is off.");
            } else {
                pipit_format(out, size, "The timer is %d seconds.", st->timer);
            }
            break;
        default:
            slot_set(s, 'K', train_rng_below(&g->rng, 2) ? "mode" : "scene mode");
            pipit_format(out, size, "The scene mode is %s.", st->mode);
            break;
    }
    return true;
}

static bool
fill_again(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)in, (void)t, (void)s;
    bool counted = strncmp(g->memory, "photos_taken: ", 14) == 0 ||
                   strstr(g->memory, "\nphotos_taken: ") != NULL;
    if (!counted && train_rng_below(&g->rng, 5) != 0) { /* the counter is one line */
        char line[48];
        pipit_format(line, sizeof(line), "photos_taken: %d", 1 + (int)train_rng_below(&g->rng, 9));
        memory_add_line(g, line);
    }
    pipit_format(out, size, "<call>take_photo()");
    return true;
}

/* The answer comes from another intent: draw() fills it (retry_goal). */
static bool
fill_retry(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    (void)g, (void)in, (void)t, (void)s;
    pipit_format(out, size, "%s", "");
    return true;
}

static bool fill_selfie(struct gen *g,
                        const struct intent *in,
                        int t,
                        struct slots *s,
                        char *out,
                        size_t size) {
    (void)in, (void)t, (void)s;
    if (g->st.front) {
        pipit_format(out, size, "<call>take_photo()");
    } else {
        pipit_format(out, size, "<call>switch_camera(facing=\"front\")");
    }
    return true;
}

/* ---------------------------------------------------------------- cloud questions */

static const char *const COUNTRIES[] = {
    "france",    "japan",  "brazil", "canada",  "kenya", "norway",  "peru",  "india", "egypt",
    "australia", "mexico", "italy",  "germany", "chile", "vietnam", "spain", "ghana", "iceland",
};
static const char *const THINGS[] = {
    "telephone", "light bulb", "airplane",  "printing press", "camera",
    "radio",     "bicycle",    "internet",  "television",     "steam engine",
    "compass",   "microscope", "telescope", "piano",
};
static const char *const PLACES[] = {
    "mount everest",    "the eiffel tower",
    "the moon",         "the pacific ocean",
    "the amazon river", "the great wall of china",
    "the sahara",       "mars",
    "the sun",          "lake baikal",
    "big ben",
};
static const char *const TOPICS[] = {
    "the sea",  "autumn",          "a lost cat",       "my grandmother", "the city at night",
    "a dragon", "coffee",          "friendship",       "the mountains",  "a rainy day",
    "robots",   "summer holidays", "a birthday party", "the stars",      "my dog",
    "a sunset", "the ocean",       "winter",
};
static const char *const SUBJECTS[] = {
    "portrait", "landscape", "night",  "food",    "wildlife", "sports",
    "street",   "macro",     "sunset", "wedding", "product",  "astro",
};
static const char *const CONCEPTS[] = {
    "photosynthesis",    "gravity",          "a black hole", "inflation",
    "the stock market",  "vaccines",         "a rainbow",    "electricity",
    "the immune system", "a neural network", "tides",        "jet lag",
};

struct cloud_tpl {
    const char *tpl;
    const char *reason;
};

static const char *const T_CLOUD_KNOW[] = {
    "what is the capital of {C}",
    "who invented the {I}",
    "how tall is {P}",
    "when was the {I} invented",
    "what is the population of {C}",
    "how far away is {P}",
    "what language do they speak in {C}",
    "explain how {K} works",
    "what is {K}",
    "tell me about {P}",
    "how old is {P}",
    "why is the sky blue",
    "what currency does {C} use",
    "who discovered {K}",
    "what is the weather like in {C} in winter",
    "how does the {I} work",
    "translate {H} into {L}",
    "how do you say {H} in {L}",
    "what does {V} mean",
    "define {V}",
    "how do you spell {V}",
    "how many {Y}",
    "how do i make {F}",
    "what is a good recipe for {F}",
    "who was {N}",
    "what did {N} do",
    "what year did {N} die",
    "where is {P}",
    "how big is {P}",
    "what time zone is {C} in",
};
static const char *const T_CLOUD_CREATIVE[] = {
    "write a poem about {T}",
    "tell me a story about {T}",
    "write a haiku about {T}",
    "give me a caption for a photo of {T}",
    "write a short song about {T}",
    "make up a joke about {T}",
    "describe {T} in three words",
    "write a limerick about {T}",
    "invent a name for a photo of {T}",
    "write a birthday message for my friend",
    "write an instagram caption about {T}",
    "compose a short rhyme about {T}",
};
static const char *const T_CLOUD_REASON[] = {
    "what is {A} times {B}",
    "what is {A} plus {B}",
    "if i have {A} apples and eat {B} how many are left",
    "which is bigger {A} or {B}",
    "is {A} a prime number",
    "what is {A} divided by {B}",
    "how many minutes are in {A} hours",
    "what is {A} percent of {B}",
    "solve {A} minus {B}",
    "how many days are in {A} weeks",
    "if a train goes {A} km per hour how far does it go in {B} hours",
    "what comes next in {A}, {B}, and so on",
};
static const char *const T_CLOUD_ADVICE[] = {
    "how do i take better {U} photos",
    "what settings should i use for {U} photos",
    "what is the best time of day for {U} photography",
    "how do i get a blurry background",
    "any tips for {U} photography",
    "what lens is best for {U} shots",
    "how should i compose a {U} shot",
    "what does white balance do",
    "why are my {U} photos blurry",
    "what is the rule of thirds",
    "how do i avoid red eye",
    "should i use hdr for {U} photos",
    "what is {C}",
    "how does {C} work",
    "can you explain {C}",
    "why does {C} matter",
    "how should i set {C} for {U} photos",
    "what {C} is best for {U} shots",
    "how long should the exposure be for {U} photos",
    "should i use the flash for {U} photos",
    "what zoom is best for {U} shots",
    "how do i focus on a moving subject",
    "what's the best angle for {U} photos",
    "is it better to zoom or walk closer",
    "how bright should a {U} photo be",
    "when should i use a timer",
    "tips for a better {U} shot",
    "how do pros light {U} photos",
    "recommend settings for {W}",
    "suggest camera settings for {W}",
    "give me tips for {U} photos",
    "give me advice on shooting {W}",
    "tell me how to photograph {W}",
    "help me plan a shoot at {W}",
    "i need tips for {U} lighting",
    "explain how to shoot {W}",
    "what should i do to shoot {W}",
    "teach me {U} photography",
    "share some tips for {W}",
    "advise me on {U} composition",
    "best settings for {W}",
    "how do i shoot {W} without blur",
};
static const char *const SITUATIONS[] = {
    "a stage show",   "a dim hallway",      "a sunny beach",    "a birthday party indoors",
    "a moving car",   "fresh snow",         "a football match", "fireworks",
    "an aquarium",    "a candlelit dinner", "a museum",         "the northern lights",
    "a rainy street", "a school play",      "a waterfall",      "a night market",
};
static const char *const PHOTO_CONCEPTS[] = {
    "the exposure triangle",
    "shutter speed",
    "depth of field",
    "iso",
    "aperture",
    "focal length",
    "white balance",
    "dynamic range",
    "bokeh",
    "exposure compensation",
    "the golden hour",
    "motion blur",
    "the histogram",
    "metering",
    "image stabilization",
    "the inverse square law",
};

/* Free-form questions: a question opener and 2..7 random words. Nothing to memorize, so the
 * model has to learn to copy the utterance into user_query_context. No camera command words. */
static const char *const T_CLOUD_FREE[] = {
    "what is {R}",
    "why {R}",
    "how do {R}",
    "who {R}",
    "tell me {R}",
    "explain {R}",
    "where {R}",
    "when did {R}",
    "can you explain {R}",
    "what do you know about {R}",
    "is it true that {R}",
    "how many {R}",
    "what happens when {R}",
    "do you know {R}",
    "which {R}",
    "how much {R}",
    "why do {R}",
    "what are {R}",
    "could you tell me {R}",
    "i wonder {R}",
};

static const char *const FREE_WORDS[] = {
    "apple",    "river",     "king",      "queen",     "music",    "history",     "planet",
    "ocean",    "forest",    "city",      "bird",      "fish",     "horse",       "tree",
    "mountain", "language",  "money",     "bank",      "school",   "doctor",      "teacher",
    "computer", "phone",     "car",       "train",     "bus",      "bridge",      "war",
    "peace",    "science",   "math",      "chemistry", "physics",  "biology",     "art",
    "painting", "book",      "novel",     "poem",      "movie",    "song",        "guitar",
    "piano",    "football",  "tennis",    "coffee",    "tea",      "bread",       "cheese",
    "wine",     "pizza",     "rice",      "sugar",     "salt",     "water",       "fire",
    "earth",    "wind",      "rain",      "snow",      "storm",    "island",      "desert",
    "village",  "country",   "president", "election",  "law",      "court",       "police",
    "hospital", "medicine",  "virus",     "cancer",    "heart",    "brain",       "blood",
    "bone",     "muscle",    "dream",     "sleep",     "memory",   "time",        "space",
    "star",     "galaxy",    "atom",      "energy",    "oil",      "gold",        "silver",
    "iron",     "glass",     "paper",     "plastic",   "wood",     "stone",       "sand",
    "salmon",   "tiger",     "lion",      "elephant",  "whale",    "shark",       "spider",
    "bee",      "ant",       "dinosaur",  "robot",     "rocket",   "satellite",   "engine",
    "battery",  "solar",     "nuclear",   "climate",   "weather",  "temperature", "people",
    "children", "family",    "mother",    "father",    "brother",  "sister",      "friend",
    "neighbor", "job",       "work",      "office",    "company",  "market",      "price",
    "tax",      "economy",   "bitcoin",   "stock",     "old",      "new",         "big",
    "small",    "fast",      "slow",      "hot",       "cold",     "happy",       "sad",
    "red",      "blue",      "green",     "yellow",    "ancient",  "modern",      "famous",
    "strange",  "dangerous", "healthy",   "rich",      "poor",     "true",        "false",
    "first",    "last",      "best",      "worst",     "long",     "short",       "heavy",
    "light",    "eat",       "drink",     "run",       "swim",     "fly",         "grow",
    "build",    "write",     "read",      "learn",     "teach",    "win",         "lose",
    "buy",      "sell",      "travel",    "live",      "die",      "sing",        "dance",
    "cook",     "paint",     "invent",    "discover",  "explain",  "believe",     "remember",
    "forget",   "think",     "know",      "love",      "the",      "a",           "of",
    "in",       "on",        "for",       "with",      "about",    "from",        "to",
    "and",      "or",        "is",        "are",       "was",      "were",        "do",
    "does",     "did",       "can",       "will",      "my",       "your",        "their",
    "this",     "that",      "rome",      "paris",     "london",   "tokyo",       "africa",
    "europe",   "asia",      "america",   "moon",      "sun",      "mars",        "jupiter",
    "egypt",    "china",     "india",     "napoleon",  "einstein", "shakespeare", "darwin",
    "1066",     "1969",      "2000",      "42",        "100",      "three",       "seven",
    "twelve",   "million",   "billion",
};

static bool fill_cloud_free(struct gen *g,
                            const struct intent *in,
                            int t,
                            struct slots *s,
                            char *out,
                            size_t size) {
    (void)in, (void)t;
    char words[96];
    size_t o = 0;
    int n = 2 + (int)train_rng_below(&g->rng, 6);
    words[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *w = PICK(g, FREE_WORDS);
        size_t len = strlen(w);
        if (o + len + 2 >= sizeof(words)) {
            break;
        }
        if (i > 0) {
            words[o++] = ' ';
        }
        memcpy(words + o, w, len);
        o += len;
        words[o] = '\0';
    }
    slot_set(s, 'R', words);
    pipit_format(out, size, "general knowledge");
    return true;
}

static bool fill_cloud_common(struct gen *g, struct slots *s) {
    char a[16], b[16];
    pipit_format(a, sizeof(a), "%d", 2 + (int)train_rng_below(&g->rng, 98));
    pipit_format(b, sizeof(b), "%d", 2 + (int)train_rng_below(&g->rng, 98));
    slot_set(s, 'A', a);
    slot_set(s, 'B', b);
    return true;
}

static bool fill_cloud_know(struct gen *g,
                            const struct intent *in,
                            int t,
                            struct slots *s,
                            char *out,
                            size_t size) {
    const char *tpl = in->tpl[t];
    fill_from(g, tpl, s, 'C', COUNTRIES, N_OF(COUNTRIES));
    fill_from(g, tpl, s, 'I', THINGS, N_OF(THINGS));
    fill_from(g, tpl, s, 'P', PLACES, N_OF(PLACES));
    fill_from(g, tpl, s, 'K', CONCEPTS, N_OF(CONCEPTS));
    static const char *const phrases[] = {
        "'good morning'",     "'thank you'",  "'where is the station'", "hello",
        "'how much is it'",   "'i love you'", "'happy birthday'",       "cheers",
        "'see you tomorrow'", "'good night'", "'the bill please'",      "welcome",
    };
    static const char *const languages[] = {"french",   "spanish", "german", "italian",
                                            "japanese", "chinese", "korean", "portuguese",
                                            "arabic",   "hindi",   "dutch",  "swedish"};
    static const char *const words[] = {"serendipity", "ephemeral", "bokeh",    "ubiquitous",
                                        "nostalgia",   "paradigm",  "entropy",  "resilience",
                                        "aperture",    "metaphor",  "quixotic", "algorithm"};
    static const char *const units[] = {
        "grams are in a pound", "inches are in a meter", "cups are in a liter",
        "seconds are in a day", "feet are in a mile",    "ounces are in a kilo",
    };
    static const char *const foods[] = {"pancakes", "lasagna", "sushi",   "bread",
                                        "a curry",  "pizza",   "cookies", "soup"};
    static const char *const people[] = {"marie curie", "julius caesar", "ada lovelace",
                                         "mozart",      "cleopatra",     "galileo",
                                         "frida kahlo", "nelson mandela"};
    fill_from(g, tpl, s, 'H', phrases, N_OF(phrases));
    fill_from(g, tpl, s, 'L', languages, N_OF(languages));
    fill_from(g, tpl, s, 'V', words, N_OF(words));
    fill_from(g, tpl, s, 'Y', units, N_OF(units));
    fill_from(g, tpl, s, 'F', foods, N_OF(foods));
    fill_from(g, tpl, s, 'N', people, N_OF(people));
    pipit_format(out, size, "general knowledge");
    return true;
}

static bool fill_cloud_creative(struct gen *g,
                                const struct intent *in,
                                int t,
                                struct slots *s,
                                char *out,
                                size_t size) {
    (void)in, (void)t;
    slot_set(s, 'T', PICK(g, TOPICS));
    pipit_format(out, size, "creative writing");
    return true;
}

static bool fill_cloud_reason(struct gen *g,
                              const struct intent *in,
                              int t,
                              struct slots *s,
                              char *out,
                              size_t size) {
    (void)in, (void)t;
    fill_cloud_common(g, s);
    pipit_format(out, size, "math and reasoning");
    return true;
}

static bool fill_cloud_advice(struct gen *g,
                              const struct intent *in,
                              int t,
                              struct slots *s,
                              char *out,
                              size_t size) {
    (void)in, (void)t;
    slot_set(s, 'U', PICK(g, SUBJECTS));
    slot_set(s, 'C', PICK(g, PHOTO_CONCEPTS));
    slot_set(s, 'W', PICK(g, SITUATIONS));
    pipit_format(out, size, "photography advice");
    return true;
}

/* ---------------------------------------------------------------- things worth remembering */

/* The person says who or what the pictures are of, what they are for, or their name: the
 * executor acknowledges it; the State-Tracker writes it down ({K} picks which). */
static const char *const T_MENTION[] = {
    "i'm photographing {X}", "this is {X}",           "i'm taking pictures of {X}",
    "we're shooting {X}",    "the photos are of {X}", "say hi to {X}",
    "this is for {O}",       "these are for {O}",     "the pictures are for {O}",
    "my name is {N}",        "call me {N}",           "it's {X} today",
    "we're here for {O}",    "today it's {X}",        "the subject is {X}",
};
static const char *const MENTION_X[] = {
    "my dog rex",      "my daughter emma", "the sunset",  "my friends",
    "a birthday cake", "the city skyline", "my cat luna", "the mountains",
    "our new car",     "my grandparents",  "the garden",  "my son leo",
    "the old bridge",  "a red fox",        "my team",     "the harbour",
};
static const char *const MENTION_O[] = {
    "my sister's wedding", "a school project", "my blog",          "the family album",
    "a job application",   "instagram",        "a travel journal", "my portfolio",
};
static const char *const MENTION_N[] = {"anna", "tom",   "priya", "lucas", "mei",
                                        "omar", "sofia", "jack",  "nina",  "ravi"};

static bool fill_mention(struct gen *g,
                         const struct intent *in,
                         int t,
                         struct slots *s,
                         char *out,
                         size_t size) {
    const char *tpl = in->tpl[t];
    fill_from(g, tpl, s, 'X', MENTION_X, N_OF(MENTION_X));
    fill_from(g, tpl, s, 'O', MENTION_O, N_OF(MENTION_O));
    fill_from(g, tpl, s, 'N', MENTION_N, N_OF(MENTION_N));
    pipit_format(out, size, "Okay.");
    return true;
}

/* What the State-Tracker writes for a mention: "subject: ...", "occasion: ..." or
 * "user_name: ...". */
static void mention_line(const char *tpl, const struct slots *s, char *out, size_t size) {
    char key = has_slot(tpl, 'X') ? 'X' : has_slot(tpl, 'O') ? 'O' : 'N';
    const char *name = key == 'X' ? "subject" : key == 'O' ? "occasion" : "user_name";
    for (int i = 0; i < s->n; i++) {
        if (s->key[i] == key) {
            pipit_format(out, size, "%s: %s", name, s->val[i]);
            return;
        }
    }
    out[0] = '\0';
}

/* ---------------------------------------------------------------- undo */

/* "Undo the last action" in the person's words (DESIGN item 4): the agent adds a built-in tool
 * `undo` (no arguments) to the call grammar and executes it from its action log, so the answer
 * is `<call>undo()` whatever the words. The router catches the common phrasings first; these
 * are the ones it may miss. {R} is how the person leads in ("oops, ", "no wait, ", ...). The
 * near misses that are NOT undo (go back to the rear camera, cancel the timer, stop recording,
 * delete the last photo) are templates of their own intents. */
static const char *const T_UNDO[] = {
    "{R}revert the last change",
    "{R}revert what you just did",
    "{R}put it back the way it was",
    "{R}cancel the last change",
    "{R}scrap the last change",
    "{R}drop that last change",
    "{R}forget the last change",
    "{R}lose the last change",
    "{R}restore the old setting",
    "{R}take it back",
    "{R}reverse what you did",
    "{R}change that setting back",
    "{R}set it back to what it was",
    "{R}back to how it was before",
    "{R}return to the previous setting",
    "{R}roll back the last change",
    "{R}roll that back",
    "{R}undo the last step",
    "{R}undo your last action",
    "{R}revert the previous action",
    "{R}cancel what you just did",
    "{R}put the old value back",
    "{R}switch it back",
    "{R}make it like it was before",
    "{R}revert to the previous value",
    "{R}undo what you just changed",
    "{R}restore the setting from before",
    "{R}bring back the old setting",
    "{R}reverse the previous step",
    "{R}go back one step",
    "{R}undo the last one",
    "{R}cancel that last action",
    "{R}forget that last one",
    "{R}restore what it was",
    "{R}back out that change",
    "{R}unwind the last change",
    "that was a mistake, {U}",
    "i didn't mean that, {U}",
    "not what i wanted, {U}",
    "that's not right, {U}",
    "wrong setting, {U}",
    "my mistake, {U}",
    "i changed my mind, {U}",
    "oops wrong one, {U}",
    "{U}, that was a mistake",
    "{U}, i didn't want that",
    "{U} - wrong button",
    "{U} please, that was an accident",
    "ctrl z",
    "hit undo",
};

/* What {U} says in a framing: a short undo request. */
static const char *const UNDO_SHORT[] = {
    "put it back",       "change it back", "revert it",        "undo it",
    "reverse it",        "set it back",    "restore it",       "take that back",
    "cancel the change", "roll it back",   "scrap the change", "undo the change",
};
/* How the person leads in. */
static const char *const UNDO_LEAD[] = {
    "",
    "",
    "",
    "",
    "",
    "oops, ",
    "oh no, ",
    "no, ",
    "wait, ",
    "ugh, ",
    "hmm no, ",
    "nope, ",
    "whoops, ",
    "actually, ",
    "sorry, ",
    "no no, ",
    "on second thought, ",
    "ah, ",
    "hold on, ",
    "never mind, ",
};

static bool
fill_undo(struct gen *g, const struct intent *in, int t, struct slots *s, char *out, size_t size) {
    const char *tpl = in->tpl[t];
    fill_from(g, tpl, s, 'R', UNDO_LEAD, N_OF(UNDO_LEAD));
    fill_from(g, tpl, s, 'U', UNDO_SHORT, N_OF(UNDO_SHORT));
    pipit_format(out, size, "<call>undo()");
    return true;
}

/* Undo composed from parts (undosay.h), the whole utterance in {D}: five templates so that one
 * is held out, and its held-out draws take the frames undosay holds out. */
static const char *const T_UNDO_SAID[] = {"{D}", "{D}", "{D}", "{D}", "{D}"};

static bool template_heldout(const struct intent *in, int t);

static bool fill_undo_said(struct gen *g,
                           const struct intent *in,
                           int t,
                           struct slots *s,
                           char *out,
                           size_t size) {
    char said[160];
    train_undo_say(&g->rng, template_heldout(in, t), said, sizeof(said));
    slot_set(s, 'D', said);
    pipit_format(out, size, "<call>undo()");
    return true;
}

/* ---------------------------------------------------------------- the intent table */

static const struct intent INTENTS[] = {
    {"take_photo", CAT_CAPTURE, 6, TPL(T_PHOTO), fill_fixed, false, false, "<call>take_photo()"},
    {"record_start", CAT_CAPTURE, 4, TPL(T_REC_START), fill_rec_start, false, false, NULL},
    {"record_stop", CAT_CAPTURE, 3, TPL(T_REC_STOP), fill_rec_stop, false, false, NULL},
    {"set_zoom", CAT_ZOOM, 8, TPL(T_ZOOM_SET), fill_zoom_set, false, false, NULL},
    {"zoom_in", CAT_ZOOM, 4, TPL(T_ZOOM_IN), fill_fixed, false, false,
     "<call>adjust_zoom(direction=\"in\")"},
    {"zoom_out", CAT_ZOOM, 4, TPL(T_ZOOM_OUT), fill_fixed, false, false,
     "<call>adjust_zoom(direction=\"out\")"},
    {"flash_on", CAT_FLASH, 3, TPL(T_FLASH_ON), fill_flash_on, false, false, NULL},
    {"flash_off", CAT_FLASH, 3, TPL(T_FLASH_OFF), fill_flash_off, false, false, NULL},
    {"flash_auto", CAT_FLASH, 2, TPL(T_FLASH_AUTO), fill_flash_auto, false, false, NULL},
    {"focus_area", CAT_FOCUS, 4, TPL(T_FOCUS_AREA), fill_focus_area, false, false, NULL},
    {"focus_xy", CAT_FOCUS, 3, TPL(T_FOCUS_XY), fill_focus_xy, false, false, NULL},
    {"lock", CAT_FOCUS, 2, TPL(T_LOCK), fill_fixed, false, false,
     "<call>set_ae_af_lock(locked=true)"},
    {"unlock", CAT_FOCUS, 2, TPL(T_UNLOCK), fill_fixed, false, false,
     "<call>set_ae_af_lock(locked=false)"},
    {"exposure", CAT_EXPOSURE, 5, TPL(T_EXPOSURE), fill_exposure, false, false, NULL},
    {"brighter", CAT_EXPOSURE, 2, TPL(T_BRIGHTER), fill_fixed, false, false,
     "<call>set_exposure(ev=1)"},
    {"darker", CAT_EXPOSURE, 2, TPL(T_DARKER), fill_fixed, false, false,
     "<call>set_exposure(ev=-1)"},
    {"white_balance", CAT_WB, 5, TPL(T_WB), fill_wb, false, false, NULL},
    {"timer", CAT_TIMER, 5, TPL(T_TIMER), fill_timer, false, false, NULL},
    {"timer_off", CAT_TIMER, 2, TPL(T_TIMER_OFF), fill_fixed, false, false,
     "<call>set_timer(seconds=0)"},
    {"aspect", CAT_FORMAT, 4, TPL(T_ASPECT), fill_aspect, false, false, NULL},
    {"speed", CAT_FORMAT, 2, TPL(T_SPEED), fill_fixed, false, false,
     "<call>set_quality_priority(priority=\"speed\")"},
    {"quality", CAT_FORMAT, 2, TPL(T_QUALITY), fill_fixed, false, false,
     "<call>set_quality_priority(priority=\"quality\")"},
    {"jpeg", CAT_FORMAT, 3, TPL(T_JPEG), fill_jpeg, false, false, NULL},
    {"scene", CAT_SCENE, 6, TPL(T_SCENE), fill_scene, false, false, NULL},
    {"grid_on", CAT_OVERLAY, 2, TPL(T_GRID_ON), fill_grid_on, false, false, NULL},
    {"grid_off", CAT_OVERLAY, 2, TPL(T_GRID_OFF), fill_grid_off, false, false, NULL},
    {"level_on", CAT_OVERLAY, 2, TPL(T_LEVEL_ON), fill_level_on, false, false, NULL},
    {"level_off", CAT_OVERLAY, 2, TPL(T_LEVEL_OFF), fill_level_off, false, false, NULL},
    {"front", CAT_CAMERA, 2, TPL(T_FRONT), fill_front, false, false, NULL},
    {"back", CAT_CAMERA, 2, TPL(T_BACK), fill_back, false, false, NULL},
    {"flip", CAT_RELATIVE, 3, TPL(T_FLIP), fill_flip, false, false, NULL},
    {"flash_toggle", CAT_RELATIVE, 2, TPL(T_FLASH_TOGGLE), fill_flash_toggle, false, false, NULL},
    {"record_toggle", CAT_RELATIVE, 2, TPL(T_REC_TOGGLE), fill_rec_toggle, false, false, NULL},
    {"zoom_max", CAT_RELATIVE, 2, TPL(T_ZOOM_MAX), fill_zoom_max, false, false, NULL},
    {"zoom_min", CAT_RELATIVE, 2, TPL(T_ZOOM_MIN), fill_zoom_min, false, false, NULL},
    {"zoom_reset", CAT_RELATIVE, 2, TPL(T_ZOOM_RESET), fill_fixed, false, false,
     "<call>set_zoom(level=1)"},
    {"scene_reset", CAT_RELATIVE, 2, TPL(T_SCENE_RESET), fill_scene_reset, false, false, NULL},
    {"greet", CAT_CHAT, 2, TPL(T_GREET), fill_fixed, false, true,
     "Hello! What should the camera do?"},
    {"thanks", CAT_CHAT, 2, TPL(T_THANKS), fill_fixed, false, true, "You're welcome."},
    {"help", CAT_CHAT, 1, TPL(T_HELP), fill_fixed, false, true,
     "I can take photos and videos, zoom, and set the flash, focus, "
     "exposure, white balance, timer and other camera settings."},
    {"who", CAT_CHAT, 1, TPL(T_WHO), fill_fixed, false, true, "I'm pipit, the camera assistant."},
    {"how", CAT_CHAT, 1, TPL(T_HOW), fill_fixed, false, true,
     "I'm good and ready to take pictures."},
    {"bye", CAT_CHAT, 1, TPL(T_BYE), fill_fixed, false, true, "Goodbye!"},
    {"ack", CAT_CHAT, 2, TPL(T_ACK), fill_fixed, false, true, "Okay."},
    {"react", CAT_CHAT, 4, TPL(T_REACT), fill_react, false, true, NULL},
    {"wait", CAT_CHAT, 3, TPL(T_WAIT), fill_fixed, false, true, "Okay, I'm ready when you are."},
    {"presence", CAT_CHAT, 2, TPL(T_PRESENCE), fill_fixed, false, true, "Yes, I'm here."},
    {"status", CAT_CHAT, 3, TPL(T_STATUS), fill_status, false, true, NULL},
    {"again", CAT_CAPTURE, 3, TPL(T_AGAIN), fill_again, false, false, NULL},
    {"selfie", CAT_CAPTURE, 2, TPL(T_SELFIE), fill_selfie, false, false, NULL},
    {"retry", CAT_RETRY, 3, TPL(T_RETRY), fill_retry, false, false, NULL},
    {"mention", CAT_CHAT, 2, TPL(T_MENTION), fill_mention, false, true, NULL},
    {"unsupported", CAT_UNSUPPORTED, 4, TPL(T_UNSUPPORTED), fill_unsupported, false, false, NULL},
    {"cloud_know", CAT_CLOUD, 6, TPL(T_CLOUD_KNOW), fill_cloud_know, true, false, NULL},
    {"cloud_creative", CAT_CLOUD, 5, TPL(T_CLOUD_CREATIVE), fill_cloud_creative, true, false, NULL},
    {"cloud_reason", CAT_CLOUD, 4, TPL(T_CLOUD_REASON), fill_cloud_reason, true, false, NULL},
    {"cloud_free", CAT_CLOUD, 6, TPL(T_CLOUD_FREE), fill_cloud_free, true, false, NULL},
    {"cloud_advice", CAT_CLOUD, 4, TPL(T_CLOUD_ADVICE), fill_cloud_advice, true, false, NULL},
    {"undo", CAT_UNDO, 4, TPL(T_UNDO), fill_undo, false, false, NULL},
    {"undo_said", CAT_UNDO, 3, TPL(T_UNDO_SAID), fill_undo_said, false, false, NULL},
    {"photo_of", CAT_CAPTURE, 4, TPL(T_PHOTO_OF), fill_photo_of, false, false, NULL},
    {"video_of", CAT_CAPTURE, 2, TPL(T_VIDEO_OF), fill_video_of, false, false, NULL},
    {"switch_on", CAT_OVERLAY, 3, TPL(F_ON), fill_switch, false, false, NULL},
    {"switch_off", CAT_OVERLAY, 3, TPL(F_OFF), fill_switch, false, false, NULL},
    {"situation", CAT_CHAT, 3, TPL(T_SITUATION), fill_situation, false, true, NULL},
};

#define N_INTENTS N_OF(INTENTS)

static bool template_heldout(const struct intent *in, int t) {
    return in->n_tpl >= 4 && t % 5 == 3;
}

/* ============================================================================
 * surface noise */

static const char *const PREFIXES[] = {
    "please ",
    "can you ",
    "could you ",
    "could you please ",
    "would you ",
    "hey camera, ",
    "hey ",
    "ok ",
    "okay ",
    "um ",
    "uh ",
    "so ",
    "now ",
    "pipit, ",
    "hey pipit ",
    "quickly ",
    "just ",
    "then ",
    "and ",
    "also ",
    "alright, ",
    "camera, ",
    "can you please ",
    "yo ",
};
static const char *const SUFFIXES[] = {
    " please",  " thanks", " now",  " for me",     " right now",  " thank you",
    " quickly", " pls",    " asap", " real quick", " if you can", " ok",
};

void train_add_typo(uint64_t *rng, char *text, uint32_t max_offset) {
    size_t len = strlen(text);
    size_t starts[64];
    int n = 0;
    for (size_t i = 0; i < len && n < 64;) {
        size_t j = i;
        while (j < len && isalpha((unsigned char)text[j])) {
            j++;
        }
        if (j - i >= 4) {
            starts[n++] = i;
        }
        i = j + 1;
    }
    if (n == 0) {
        return;
    }
    size_t w = starts[train_rng_below(rng, (uint32_t)n)];
    size_t wl = 0;
    while (isalpha((unsigned char)text[w + wl])) {
        wl++;
    }
    /* a letter after the first with one after it: offsets 1..wl-2 */
    uint32_t span = wl - 2 < max_offset ? (uint32_t)(wl - 2) : max_offset;
    size_t p = w + 1 + train_rng_below(rng, span);
    switch (train_rng_below(rng, 3)) {
        case 0: { /* swap p and p+1 */
            char c = text[p];
            text[p] = text[p + 1];
            text[p + 1] = c;
            break;
        }
        case 1: /* drop p */
            memmove(text + p, text + p + 1, len - p);
            break;
        default: /* double p (if room) */
            memmove(text + p + 1, text + p, len - p + 1);
            break;
    }
}

void train_apply_case(uint64_t *rng, char *text, uint32_t lower, uint32_t first, uint32_t upper) {
    uint32_t r = train_rng_below(rng, 20);
    if (r < lower) {
        return; /* as written: lowercase */
    }
    if (r < first) {
        text[0] = (char)toupper((unsigned char)text[0]);
        return;
    }
    if (r < upper) {
        for (char *p = text; *p; p++) {
            *p = (char)toupper((unsigned char)*p);
        }
        return;
    }
    bool start = true; /* Title Case */
    for (char *p = text; *p; p++) {
        if (start && isalpha((unsigned char)*p)) {
            *p = (char)toupper((unsigned char)*p);
        }
        start = *p == ' ';
    }
}

/* Chat is said with interjections and tails of its own ("oh", "haha", "for now"). */
static const char *const CHAT_PREFIXES[] = {
    "oh ", "ah ", "well ", "hmm ", "haha ", "lol ", "ok ", "wow ", "aw ", "hey ", "oh, ", "so ",
};
static const char *const CHAT_SUFFIXES[] = {
    " then", " for now", " pipit", " camera", " :)", " haha", " lol", " buddy", " guys",
};

/* What the person says around a command: the situation, not another command. */
static const char *const CONTEXT_PRE[] = {
    "we're at the beach, ",  "my friends are here, ",      "ok everyone is ready, ",
    "this is for my blog, ", "the party is starting, ",    "we're on a hike, ",
    "real quick, ",          "before they leave, ",        "ok here we go, ",
    "alright everybody, ",   "the dog is sitting still, ", "my mom is here, ",
};
static const char *const CONTEXT_POST[] = {
    " - we're at the beach",
    ", my friends are here",
    " before they move",
    " - this is for my blog",
    ", the cake is coming out",
    " while they're still smiling",
    " - the bus is leaving",
    ", we're on a hike",
    " for the family album",
    " - my sister is posing",
    ", the race is about to start",
    " while the light lasts",
};

static void
surface(struct gen *g, const struct intent *in, const char *core, char *out, size_t size) {
    const char *pre = "", *suf = "", *punct = "";
    /* a situation goes with a command, not with chat, a refusal or an undo */
    bool situated = in->cat != CAT_CHAT && in->cat != CAT_UNSUPPORTED && in->cat != CAT_UNDO;
    if (!in->verbatim && !in->bare) {
        uint32_t r = train_rng_below(&g->rng, 100);
        if (r < 33) {
            pre = PICK(g, PREFIXES);
        } else if (r < 40 && situated) {
            pre = PICK(g, CONTEXT_PRE);
        }
        r = train_rng_below(&g->rng, 100);
        if (r < 20) {
            suf = PICK(g, SUFFIXES);
        } else if (r < 26 && situated) {
            suf = PICK(g, CONTEXT_POST);
        }
    } else if (in->bare) {
        if (train_rng_below(&g->rng, 100) < 20) {
            pre = PICK(g, CHAT_PREFIXES);
        }
        if (train_rng_below(&g->rng, 100) < 15) {
            suf = PICK(g, CHAT_SUFFIXES);
        }
    }
    uint32_t r = train_rng_below(&g->rng, 10);
    if (in->verbatim) {
        punct = r < 5 ? "?" : "";
    } else {
        punct = r < 2 ? "." : r < 3 ? "!" : r < 4 ? "?" : "";
    }
    pipit_format(out, size - 2, "%s%s%s%s", pre, core, suf, punct);
    if (!in->verbatim && in->cat != CAT_CLOUD && train_rng_below(&g->rng, 100) < 10) {
        train_add_typo(&g->rng, out, UINT32_MAX);
    }
    train_apply_case(&g->rng, out, 13, 18, 19);
}

/* ============================================================================
 * data set */

/* Draw one example of `split` into the three buffers. */
/* For "try again": draw a command of `split` that failed earlier; its words become the memory's
 * user_goal (after the tool_error the agent pins), its call the answer. */
static bool retry_goal(struct gen *g, enum pipit_split split, char *answer, size_t size) {
    static const char *const CODES[] = {"busy",        "timeout",           "storage_full",
                                        "device_busy", "permission_denied", "hardware_error"};
    const struct intent *in = NULL;
    for (int tries = 0; tries < 64 && in == NULL; tries++) {
        const struct intent *c = &INTENTS[train_rng_below(&g->rng, (uint32_t)N_OF(INTENTS))];
        if (c->cat <= CAT_CAMERA && c->fill != fill_again && c->fill != fill_selfie) {
            in = c;
        }
    }
    if (in == NULL) {
        return false;
    }
    int cand[64], nc = 0;
    for (int t = 0; t < in->n_tpl && nc < 64; t++) {
        if (template_heldout(in, t) == (split == PIPIT_SPLIT_VALID)) {
            cand[nc++] = t;
        }
    }
    if (nc == 0) {
        return false;
    }
    int t = cand[train_rng_below(&g->rng, (uint32_t)nc)];
    struct slots s = {.n = 0};
    if (!in->fill(g, in, t, &s, answer, size) || strncmp(answer, "<call>", 6) != 0) {
        return false;
    }
    char core[200], goal[256], line[320];
    expand(in->tpl[t], &s, core, sizeof(core));
    surface(g, in, core, goal, sizeof(goal));
    const char *open = strchr(answer, '(');
    pipit_format(line, sizeof(line), "tool_error: %.*s %s", (int)(open - answer - 6), answer + 6,
                 PICK(g, CODES));
    memory_add_line(g, line);
    pipit_format(line, sizeof(line), "user_goal: %s", goal);
    memory_add_line(g, line);
    return true;
}

static int intent_index(const char *name) {
    for (int k = 0; k < N_OF(INTENTS); k++) {
        if (strcmp(INTENTS[k].name, name) == 0) {
            return k;
        }
    }
    return -1;
}

/* Draw one example of `split` into the buffers: an intent by weight (or `want` when >= 0), a
 * template, slot values, surface noise. *note receives the line a State-Tracker should write
 * for it ("" when the harness facts say it all). */
static void draw(struct gen *g,
                 enum pipit_split split,
                 int total_weight,
                 int want,
                 char *utt,
                 size_t usize,
                 char *output,
                 size_t osize,
                 char *note,
                 size_t nsize,
                 int *cat,
                 int *template_id) {
    for (int rejected = 0;;) {
        int k = rejected < 10000 ? want : -1; /* an intent the exclusions empty: any other */
        if (k < 0) {
            int w = (int)train_rng_below(&g->rng, (uint32_t)total_weight);
            k = 0;
            while (w >= INTENTS[k].weight) {
                w -= INTENTS[k].weight;
                k++;
            }
        }
        const struct intent *in = &INTENTS[k];
        int cand[64], nc = 0;
        for (int t = 0; t < in->n_tpl && nc < 64; t++) {
            if (template_heldout(in, t) == (split == PIPIT_SPLIT_VALID)) {
                cand[nc++] = t;
            }
        }
        if (nc == 0) {
            continue;
        }
        int t = cand[train_rng_below(&g->rng, (uint32_t)nc)];
        new_state(g);
        struct slots s = {.n = 0};
        char answer[160];
        if (!in->fill(g, in, t, &s, answer, sizeof(answer))) {
            continue;
        }
        if (in->fill == fill_retry && !retry_goal(g, split, answer, sizeof(answer))) {
            continue;
        }
        char core[200];
        expand(in->tpl[t], &s, core, sizeof(core));
        surface(g, in, core, utt, usize);
        if (g->exclude != NULL && pipit_overlap_find(g->exclude, utt, NULL) != PIPIT_OVERLAP_NONE) {
            rejected++;
            continue; /* an evaluation set says it: never train on it */
        }
        pipit_format(g->recent[g->n_recent % 32], sizeof(g->recent[0]), "%s", utt);
        g->n_recent++;
        if (in->cat == CAT_CLOUD) {
            pipit_format(output, osize,
                         "<call>process_with_cloud_llm(user_query_context=\"%s\", "
                         "reason_for_escalation=\"%s\")",
                         utt, answer);
        } else {
            pipit_format(output, osize, "%s", answer);
        }
        note[0] = '\0';
        if (in->fill == fill_mention) {
            mention_line(in->tpl[t], &s, note, nsize);
        } else if (in->cat == CAT_UNSUPPORTED) {
            pipit_format(note, nsize, "agent_refusals: %s", core);
        }
        *cat = (int)in->cat;
        *template_id = k * 64 + t;
        return;
    }
}

/* The tool result the agent shows the State-Tracker for `call` ("<call>tool(k=v, ...)"): ok with
 * the first argument echoed as data, or (one in five) an error. */
static void tool_result(struct gen *g, const char *call, char *out, size_t size) {
    static const char *const CODES[] = {"zoom_out_of_range",    "busy_recording",
                                        "flash_unavailable",    "permission_denied",
                                        "cloud_not_configured", "storage_full"};
    if (train_rng_below(&g->rng, 5) == 0) {
        pipit_format(out, size,
                     "{\"ok\":false,\"error\":{\"code\":\"%s\",\"message\":\"the device "
                     "refused\"}}",
                     PICK(g, CODES));
        return;
    }
    const char *open = strchr(call, '(');
    const char *eq = open != NULL ? strchr(open, '=') : NULL;
    if (eq == NULL) {
        pipit_format(out, size, "{\"ok\":true,\"data\":{}}");
        return;
    }
    const char *end = eq + 1;
    while (*end != '\0' && *end != ',' && *end != ')') {
        end++;
    }
    pipit_format(out, size, "{\"ok\":true,\"data\":{\"%.*s\":%.*s}}", (int)(eq - open - 1),
                 open + 1, (int)(end - eq - 1), eq + 1);
}

/* Turn a drawn executor example into a State-Tracker example (docs/memory.md): the messages the
 * agent passes (user line, the executor's raw output, the tool result) after the CSO; the
 * answer is the line the harness facts cannot write, or "# NO_UPDATE". */
static void make_tracker_example(struct gen *g,
                                 char *utt,
                                 size_t usize,
                                 char *output,
                                 size_t osize,
                                 const char *note) {
    char msgs[768], result[256];
    pipit_format(msgs, sizeof(msgs), "user: %s\nassistant: %s\n", utt, output);
    size_t o = strlen(msgs);
    if (strncmp(output, "<call>", 6) == 0) {
        tool_result(g, output, result, sizeof(result));
        pipit_format(msgs + o, sizeof(msgs) - o, "tool: %s\n", result);
    }
    /* the checklist may hold the line already (from an earlier turn of the session) */
    bool held = note[0] != '\0' && memory_has_line(g->memory, note);
    bool known = held || (note[0] != '\0' && train_rng_below(&g->rng, 6) == 0);
    if (known && !held) {
        /* the checklist already holds it: nothing to append */
        char line[200];
        pipit_format(line, sizeof(line), "%s", note);
        memory_add_line(g, line);
    }
    pipit_format(utt, usize, "%s", msgs);
    if (note[0] != '\0' && !known) {
        pipit_format(output, osize, "%s\n", note);
    } else {
        pipit_format(output, osize, "# NO_UPDATE");
    }
}

struct pipit_datagen_params pipit_datagen_default_params(void) {
    struct pipit_datagen_params p = {
        .seed = 1, .n_train = 200000, .n_valid = 1000, .tracker_percent = 8};
    return p;
}

enum pipit_status pipit_datagen_camera(const struct pipit_datagen_params *params,
                                       struct pipit_dataset **out,
                                       struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "datagen: out is NULL");
    }
    *out = NULL;
    struct pipit_datagen_params p = params != NULL ? *params : pipit_datagen_default_params();
    if (p.n_train < 1 || p.n_train > 10000000 || p.n_valid < 1 || p.n_valid > 10000000 ||
        p.tracker_percent < 0 || p.tracker_percent > 100) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "datagen: sizes must be 1..10000000 and tracker_percent 0..100: "
                               "n_train %d, n_valid %d, tracker_percent %d",
                               (int)p.n_train, (int)p.n_valid, (int)p.tracker_percent);
    }
    struct pipit_dataset *ds = calloc(1, sizeof(*ds));
    if (ds == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "datagen: out of memory");
    }
    ds->categories = datagen_categories;
    ds->n_categories = datagen_n_categories;
    int total_weight = 0;
    for (int k = 0; k < N_INTENTS; k++) {
        total_weight += INTENTS[k].weight;
    }
    const int32_t sizes[2] = {p.n_train, p.n_valid};
    const int k_mention = intent_index("mention"), k_unsupported = intent_index("unsupported");
    for (int split = 0; split < 2; split++) {
        struct gen g = {.rng = train_split_seed(p.seed, split), .exclude = p.exclude};
        ds->ex[split] = calloc((size_t)sizes[split], sizeof(struct ds_example));
        if (ds->ex[split] == NULL) {
            pipit_dataset_free(ds);
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "datagen: out of memory");
        }
        for (int32_t i = 0; i < sizes[split]; i++) {
            char utt[768], output[512], note[200];
            int cat = 0, tid = 0;
            bool tracker = train_rng_below(&g.rng, 100) < (uint32_t)p.tracker_percent;
            int want = -1;
            if (tracker) {
                /* things to remember and refusals often; the rest is "# NO_UPDATE" */
                uint32_t r = train_rng_below(&g.rng, 20);
                want = r < 7 ? k_mention : r < 10 ? k_unsupported : -1;
            }
            draw(&g, (enum pipit_split)split, total_weight, want, utt, 256, output, sizeof(output),
                 note, sizeof(note), &cat, &tid);
            if (tracker) {
                make_tracker_example(&g, utt, sizeof(utt), output, sizeof(output), note);
                cat = CAT_TRACKER;
            }
            if (!datagen_append(ds, (enum pipit_split)split, g.memory, tracker ? "" : g.state_line,
                                utt, output, cat, tid, tracker)) {
                pipit_dataset_free(ds);
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "datagen: out of memory");
            }
        }
    }
    *out = ds;
    return PIPIT_OK;
}

const char *datagen_memory_skip(const char *memory, int drop) {
    if (memory == NULL) {
        return "";
    }
    for (int i = 0; i < drop && *memory != '\0'; i++) {
        const char *nl = strchr(memory, '\n');
        memory = nl != NULL ? nl + 1 : memory + strlen(memory);
    }
    return memory;
}

int datagen_memory_lines(const char *memory) {
    int n = 0;
    for (const char *p = memory; p != NULL && *p != '\0'; p++) {
        n += *p == '\n';
    }
    return n;
}

char *pipit_train_prompt(const char *system,
                         const char *memory,
                         const char *state,
                         const char *utterance) {
    if (system == NULL || state == NULL || utterance == NULL) {
        return NULL;
    }
    if (memory == NULL) {
        memory = "";
    }
    size_t n = strlen(system) + strlen(memory) + strlen(state) + strlen(utterance) + 40;
    char *p = malloc(n);
    if (p == NULL) {
        return NULL;
    }
    snprintf(p, n, "%s\n%sState: %s\nUser: %s\nAssistant: ", system, memory, state, utterance);
    return p;
}

char *pipit_train_prompt_example(const char *system, const struct pipit_example *ex) {
    if (ex == NULL) {
        return NULL;
    }
    if (!ex->tracker) {
        return pipit_train_prompt(ex->system != NULL ? ex->system : system, ex->memory, ex->state,
                                  ex->utterance);
    }
    const char *memory = ex->memory != NULL ? ex->memory : "";
    size_t n = strlen(PIPIT_TRACKER_ROLE) + strlen(memory) + strlen(ex->utterance) + 64;
    char *p = malloc(n);
    if (p == NULL) {
        return NULL;
    }
    snprintf(p, n, "%s\n%sNew Messages:\n%sNew Lines to Append:\n", PIPIT_TRACKER_ROLE, memory,
             ex->utterance);
    return p;
}
