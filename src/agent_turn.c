/*
 * agent_turn.c - one turn: route -> decode -> validate -> execute -> render.
 *
 *   1. Route, no model: "undo" and the like revert the last action from the action log;
 *      a compound utterance is split into at most max_steps segments (router.c).
 *   2. Prompt: the permanent prefix (system text, tools) is queued once and stays in the
 *      backend's KV cache; each step prefills only "State: ...\nUser: ...\nAssistant: ".
 *   3. One decode per segment: plain text, or a grammar-locked call (lazy: the grammar starts
 *      at the call's trigger).
 *   4. Parse and re-validate the call against the tool set, then execute it (custom handler,
 *      else the device). Parse errors, unknown tools and bad arguments never reach a handler.
 *   5. The sentence comes from the tool's template and the real result; plain text that claims
 *      an action is replaced by an honest sentence.
 * The harness owns every limit (policy.c): steps, wall clock, tokens per decode, thermal
 * throttling, the identical-failure breaker, cancellation.
 *
 * Invariants: between turns the backend's ephemeral tail is empty; the action log holds at most
 * undo_slots entries, newest last; the breaker persists across turns (the same call failing
 * turn after turn trips it too).
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_choose.h"
#include "agent_context.h"
#include "agent_decode.h"
#include "agent_followup.h"
#include "agent_frame.h"
#include "agent_impl.h"
#include "agent_prompt.h"
#include "agent_question.h"
#include "agent_record.h"
#include "agent_step.h"
#include "agent_undo.h"
#include "ask.h"
#include "device.h"
#include "memory.h"
#include "policy.h"
#include "router.h"
#include "smalltalk.h"
#include "status.h"
#include "strbuf.h"
#include "untrusted.h"
#include "utf8.h"
#include "verbbank.h"
#include "words.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Drops a remark that ends the segment ("end the clip, song's done": the model had set the
 * scene; router_remark_tail()) unless it says a word of the pack's (agent_says_pack_word()):
 * `whole` keeps the segment as said. True when one was dropped. */
static bool drop_remark(const struct pipit_agent *a, char *seg, char whole[ROUTER_MAX_SEGMENT]) {
    size_t len = strlen(seg), cut = router_remark_tail(a->router, seg);
    if (cut == 0 || cut >= len || agent_says_pack_word(a->ts, seg + cut) ||
        router_undo_signal(seg) || agent_frame_message(a->ts, seg)) {
        /* "focus on him, he's in the bottom left": where, for the model; a word of reversal
         * anywhere ("...that was wrong"): the model's undo reads the whole; a message runs on
         * ("message alice hi, are you around": agent_frame.h) */
        return false;
    }
    memcpy(whole, seg, len + 1);
    while (cut > 0 && isspace((unsigned char)seg[cut - 1])) {
        cut--;
    }
    seg[cut] = '\0';
    return true;
}

/* Whether `text` calls a tool (not the cloud's) that takes free text: a remark may be its
 * words ("text mom, I'm running late"). */
static bool calls_for_free_text(const struct pipit_agent *a, const char *text) {
    struct pipit_call call;
    struct pipit_error err;
    if (text == NULL || !pipit_call_detect(a->syntax, text) ||
        pipit_call_parse(a->syntax, text, &call, &err) != PIPIT_OK) {
        return false;
    }
    int32_t i = pipit_toolset_find(a->ts, call.name);
    pipit_call_clear(&call);
    const struct pipit_tool *t = i >= 0 ? pipit_toolset_tool(a->ts, (size_t)i) : NULL;
    for (size_t j = 0; t != NULL && !pipit_toolset_is_cloud(a->ts, (size_t)i) &&
                       t->params != NULL && j < t->params->n_props;
         j++) {
        const struct pipit_schema *sc = t->params->props[j].schema;
        if (sc->type == PIPIT_SCHEMA_STRING && sc->n_enum == 0 && sc->pattern == NULL &&
            sc->format == PIPIT_FORMAT_NONE) {
            return true;
        }
    }
    return false;
}

static void sleep_ms(double ms) {
    if (ms <= 0) {
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000.0),
                          .tv_nsec = (long)(fmod(ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
}
/* Refuse an utterance the agent cannot take as one command: empty or blank, longer than
 * PIPIT_MAX_UTTERANCE_BYTES (never cut: its tail would become another command), or not valid
 * UTF-8 (a byte the tokenizer would drop or mangle changes what the person said). */
static enum pipit_status check_utterance(struct pipit_agent *a, const char *utterance) {
    size_t n = strlen(utterance);
    if (n > PIPIT_MAX_UTTERANCE_BYTES) {
        pipit_format(a->errmsg, sizeof(a->errmsg),
                     "agent: the utterance is %zu bytes; the limit is %d bytes", n,
                     PIPIT_MAX_UTTERANCE_BYTES);
        return PIPIT_ERR_INVALID_ARG;
    }
    bool blank = true;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_seq_len((const unsigned char *)utterance + i, n - i);
        if (len == 0) {
            pipit_format(a->errmsg, sizeof(a->errmsg),
                         "agent: the utterance is not valid UTF-8 (byte 0x%02x at offset %zu)",
                         (unsigned)(unsigned char)utterance[i], i);
            return PIPIT_ERR_INVALID_ARG;
        }
        if (len > 1 || !isspace((unsigned char)utterance[i])) {
            blank = false;
        }
        i += len;
    }
    if (blank) {
        pipit_format(a->errmsg, sizeof(a->errmsg),
                     "agent: the utterance is empty: say what the device should do");
        return PIPIT_ERR_INVALID_ARG;
    }
    return PIPIT_OK;
}

#define AGENT_MAX_SEGMENTS 9 /* max_steps (at most 8) plus one for what was left over */

/* "what's it at now?", "where is it now?", "is it on now?" right after a setting: a short
 * question about "it" that names no key asks about the one key the last call sets (its undo keys).
 * The sentence of that key into `answer`; 0 when the question is not so or the last call sets
 * several keys. */
static int
answer_it(struct pipit_agent *a, const char *text, json_t *state, char *answer, size_t size) {
    static const char *const OPEN[] = {"what", "whats", "where", "wheres"};
    struct words_tok t[10];
    size_t n = words_tokenize(text, strlen(text), 0, t, 10);
    bool it = false;
    for (size_t i = 0; i < n; i++) {
        it = it || strcmp(t[i].w, "it") == 0 || strcmp(t[i].w, "its") == 0 ||
             strcmp(t[i].w, "whats") == 0;
    }
    size_t end = strlen(text);
    while (end > 0 && isspace((unsigned char)text[end - 1])) {
        end--;
    }
    static const char *const IS[] = {"is", "isnt", "was"};
    static const char *const STATE_WORDS[] = {"on",       "off",      "open",    "closed",
                                              "locked",   "unlocked", "running", "enabled",
                                              "disabled", "still",    "set",     "paused"};
    static const char *const WHEN[] = {"now", "yet", "again", "already", "currently", "right"};
    bool is_it = n >= 3 && words_in_list(t[0].w, IS, sizeof(IS) / sizeof(IS[0])) &&
                 strcmp(t[1].w, "it") == 0;
    bool stated = false;
    for (size_t i = 2; is_it && i < n; i++) {
        bool state_word =
            words_in_list(t[i].w, STATE_WORDS, sizeof(STATE_WORDS) / sizeof(STATE_WORDS[0]));
        stated = stated || state_word;
        is_it = state_word || words_in_list(t[i].w, WHEN, sizeof(WHEN) / sizeof(WHEN[0]));
    }
    is_it = is_it && stated; /* "is it on now?", not "is it raining?" nor "is it still
                                descaling?" (a value named: ask_answer()'s) */
    if (n == 0 || n > 6 || !it || end == 0 || text[end - 1] != '?' ||
        (!words_in_list(t[0].w, OPEN, sizeof(OPEN) / sizeof(OPEN[0])) && !is_it) ||
        a->last_tool < 0 || (size_t)a->last_tool >= a->ts->n_tools) {
        return 0;
    }
    const char *key;
    json_t *v;
    json_object_foreach(state, key, v) {
        if (!is_it && ask_names_key(a->ask, text, key)) {
            return 0; /* a key named is ask_answer()'s ("on" of "is it on" names the flash's
                         value, no key) */
        }
    }
    const char *const *keys = NULL;
    size_t n_keys = 0;
    if (pipit_toolset_undo(a->ts, (size_t)a->last_tool, &keys, &n_keys) != PIPIT_UNDO_KEYS ||
        n_keys != 1 || json_object_get(state, keys[0]) == NULL) {
        return 0;
    }
    return ask_sentence(a->ask, keys[0], json_object_get(state, keys[0]), ASK_NOW, answer, size)
               ? 1
               : 0;
}

/* A question about the device's state is answered from the state: no model call, no tool
 * call (docs/agent.md, "State questions"). False when `text` is not such a question. */
static bool answer_from_state(struct pipit_agent *a, struct turn_build *tb, const char *text) {
    if (a->ask == NULL || a->dev == NULL) {
        return false;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    char answer[512];
    int n = answer_it(a, text, state, answer, sizeof(answer));
    n = n > 0 ? n : ask_answer(a->ask, text, state, answer, sizeof(answer));
    if (n <= 0) {
        json_decref(state);
        return false;
    }
    tb->turn->flags |= PIPIT_TURN_STATE_ANSWER;
    agent_say(tb, answer);
    /* "what's the zoom at?" ... "make it 2": the one key asked about is what a number means */
    const char *asked = NULL;
    const char *key;
    json_t *v;
    if (n == 1) {
        json_object_foreach(state, key, v) {
            asked = ask_names_key(a->ask, text, key) ? (asked == NULL ? key : "") : asked;
        }
    }
    agent_followup_asked(a, asked != NULL && asked[0] != '\0' ? asked : NULL);
    json_decref(state);
    return true;
}

/* "switch off the kitchen and living room lights": the split's second segment, "living room
 * lights", says what but not what to do, and the first segment's verb is meant for it too.
 * When `seg` starts with no command verb, is no question, has no switch word of its own (on,
 * off, up, down, in, out) and `first` starts with one, `seg` becomes the verb, the switch word
 * right after it or ending `first`, and `seg` ("switch off living room lights"). "the flash on"
 * of "zoom in and the flash on" keeps its own words, and so does a segment that starts by
 * saying where or when ("back to landscape"). Returns true when `seg` changed. */
static bool
share_first_verb(const struct pipit_agent *a, const char *first, char *seg, size_t size) {
    static const char *const SWITCH[] = {"on", "off", "up", "down", "in", "out"};
    size_t at = router_command_verb(a->router, first);
    if (at == ROUTER_NO_VERB || router_command_verb(a->router, seg) != ROUTER_NO_VERB ||
        smalltalk_is_question(seg) || router_undo_count(seg) > 0) {
        return false;
    }
    struct words_tok s[24], f[24];
    size_t ns = words_tokenize(seg, strlen(seg), 0, s, 24);
    size_t nf = words_tokenize(first + at, strlen(first + at), 0, f, 24);
    if (ns == 0 || ns == 24 || nf < 2 || nf == 24) {
        return false;
    }
    /* a "verb" right before a number is a setting's name said with its value ("speed 8 and
     * incline 2" had set the speed to 2 as "speed incline 2") */
    int num = 0;
    if (isdigit((unsigned char)f[1].w[0]) || words_number_value(f[1].w, &num)) {
        return false;
    }
    /* words that say where or when rather than what ("back to landscape": "back" is also a
     * value of the camera's facing, so a word of the tool set) */
    static const char *const WHERE[] = {"back", "to",  "for",  "with",  "at",   "by",
                                        "from", "now", "then", "again", "more", "less"};
    for (size_t k = 0; k < sizeof(WHERE) / sizeof(WHERE[0]); k++) {
        if (strcmp(s[0].w, WHERE[k]) == 0) {
            return false;
        }
    }
    /* it names a thing: starts with a determiner or a word of the tool set ("the grid",
     * "living room lights"), not with some other verb ("run into the shot") */
    static const char *const DET[] = {"the", "my",   "a",   "an",    "this", "that",  "both",
                                      "all", "your", "its", "their", "our",  "those", "these"};
    bool thing = router_tool_word_at(a->router, s, ns, 0) > 0;
    for (size_t k = 0; k < sizeof(DET) / sizeof(DET[0]) && !thing; k++) {
        thing = strcmp(s[0].w, DET[k]) == 0;
    }
    if (!thing) {
        return false;
    }
    const char *sw = NULL;
    for (size_t k = 0; k < sizeof(SWITCH) / sizeof(SWITCH[0]); k++) {
        for (size_t i = 0; i < ns; i++) {
            if (strcmp(s[i].w, SWITCH[k]) == 0) {
                return false;
            }
        }
        sw = strcmp(f[1].w, SWITCH[k]) == 0 || strcmp(f[nf - 1].w, SWITCH[k]) == 0 ? SWITCH[k] : sw;
    }
    char out[ROUTER_MAX_SEGMENT];
    bool after = sw != NULL && strcmp(f[1].w, sw) == 0;
    int w = snprintf(out, sizeof(out), "%.*s%s%s %s%s%s", (int)(f[0].end - f[0].start),
                     first + at + f[0].start, after ? " " : "", after ? sw : "", seg,
                     sw != NULL && !after ? " " : "", sw != NULL && !after ? sw : "");
    if (w < 0 || (size_t)w >= sizeof(out) || (size_t)w >= size) {
        return false;
    }
    memcpy(seg, out, (size_t)w + 1);
    return true;
}

/* Whether bytes [start, end) of example `say` lie inside the text it gives a free-string
 * argument: a message's words ("tell her go back to sleep buddy") are what the person may say
 * to someone, not the pack's words for its command. */
static bool in_free_text(const struct pipit_tool *t,
                         const json_t *args,
                         const char *say,
                         size_t start,
                         size_t end) {
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        const char *v = json_string_value(json_object_get(args, t->params->props[j].name));
        size_t lv = v != NULL ? strlen(v) : 0;
        if (lv == 0 || !pipit_schema_free_string(t->params->props[j].schema)) {
            continue;
        }
        for (const char *p = say; *p != '\0'; p++) {
            size_t at = (size_t)(p - say);
            if (strncasecmp(p, v, lv) == 0 && at <= start && end <= at + lv) {
                return true;
            }
        }
    }
    return false;
}

/* Whether one of the pack's examples says `utt` (its words, two or more, as a phrase inside
 * the example, outside the text it gives a free-string argument): "bring it back" is the
 * mower's return to the dock when its pack says "bring it back to the dock", not undo; "go
 * back" stays undo when only a message says it ("tell her go back to sleep buddy"). */
static bool example_says(const struct pipit_agent *a, const char *utt) {
    char phrase[256];
    size_t n_words = 0;
    if (!words_normalize(utt, 12, phrase, sizeof(phrase), &n_words) || n_words < 2) {
        return false;
    }
    for (size_t i = 0; i < a->ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples; e++) {
            struct words_tok t[32];
            const char *say = tp->examples[e].say;
            size_t n = words_tokenize(say, strlen(say), 0, t, 32);
            for (size_t k = 0; k < n; k++) {
                if (words_match(t, n, k, phrase) == n_words &&
                    !in_free_text(&a->ts->tools[i], tp->examples[e].args, say, t[k].start,
                                  t[k + n_words - 1].end)) {
                    return true;
                }
            }
        }
    }
    return false;
}

/* True when no router segment of `utt` starts with a command verb: a question may then be
 * answered whole ("what's the flash and the zoom?"); "is the flash on, zoom in" may not. */
static bool no_command_inside(const struct pipit_agent *a, const char *utt) {
    char segs[AGENT_MAX_SEGMENTS][ROUTER_MAX_SEGMENT];
    size_t n = router_split_with(a->router, utt, segs, AGENT_MAX_SEGMENTS);
    for (size_t i = 0; i < n; i++) {
        if (router_command_verb(a->router, segs[i]) != ROUTER_NO_VERB) {
            return false;
        }
    }
    return true;
}

/* Tokens the turn's tail needs for `utterance` with a short answer (the state line, words,
 * header), or -1. */
static int32_t utterance_need(struct pipit_agent *a, const char *utterance) {
    char *tail = agent_step_prompt(a, utterance, NULL);
    int32_t n_tail = agent_count_tokens(a, tail, false);
    free(tail);
    return n_tail < 0 ? -1 : n_tail + (a->params.max_tokens < 32 ? a->params.max_tokens : 32);
}

/* Whether `segment` stands in `utt` just before a '?' (spaces between): the router trims the
 * mark from a segment's edge, and the question tests read it ("do fish actually sleep?"). */
static bool closed_by_question_mark(const char *utt, const char *segment) {
    const char *p = segment[0] != '\0' ? strstr(utt, segment) : NULL;
    if (p == NULL) {
        return false;
    }
    p += strlen(segment);
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    return *p == '?';
}

/* "zoom?", "grid on?", "flash status?": a question mark after at most three words, none of
 * them a request's opener ("can", "please"): asked about the state though a word of it is a
 * command verb ("zoom"), so the state answers first when it can (ask_answer decides). */
static bool short_question(const char *utt) {
    static const char *const ASKING[] = {"can", "could", "would", "will", "please", "pls"};
    size_t end = strlen(utt);
    while (end > 0 && isspace((unsigned char)utt[end - 1])) {
        end--;
    }
    if (end == 0 || utt[end - 1] != '?') {
        return false;
    }
    struct words_tok w[8];
    size_t n = words_tokenize(utt, end, 0, w, 8);
    return n >= 1 && n <= 3 && !words_in_list(w[0].w, ASKING, sizeof(ASKING) / sizeof(ASKING[0]));
}

/* Right after a question the state answered, "what about airplane mode?" and "and the
 * bluetooth?" ask the same of another thing: "what about" and at most four words, or "and" and
 * at most four words closed by a "?", no digit and no switch word ("what about 3x?", "and the
 * flash on?" ask for something). Answered from the state as "how is X" when X names a key. */
static bool answer_what_about(struct pipit_agent *a, struct turn_build *tb, const char *utt) {
    static const char *const LEADS[] = {"ok", "okay", "so", "hmm", "oh", "and", "right"};
    static const char *const SIDES[] = {"on", "off", "up", "down", "in", "out", "please"};
    struct words_tok w[12];
    size_t n = words_tokenize(utt, strlen(utt), 0, w, 12);
    if (n == 0 || n == 12) {
        return false;
    }
    size_t i = 0;
    while (i < n && words_in_list(w[i].w, LEADS, sizeof(LEADS) / sizeof(LEADS[0]))) {
        i++;
    }
    bool about = i + 1 < n && strcmp(w[i].w, "what") == 0 && strcmp(w[i + 1].w, "about") == 0;
    const char *q = strrchr(utt, '?');
    bool and_asked = !about && i > 0 && strcmp(w[0].w, "and") == 0 && q != NULL &&
                     strspn(q + 1, " \t") == strlen(q + 1);
    size_t from = about ? i + 2 : i;
    if (!(about || and_asked) || from >= n || n - from > 4) {
        return false;
    }
    for (size_t k = from; k < n; k++) {
        if (strpbrk(w[k].w, "0123456789") != NULL ||
            words_in_list(w[k].w, SIDES, sizeof(SIDES) / sizeof(SIDES[0]))) {
            return false;
        }
    }
    char asked[ROUTER_MAX_SEGMENT];
    size_t end = w[n - 1].end;
    pipit_format(asked, sizeof(asked), "how is %.*s", (int)(end - w[from].start),
                 utt + w[from].start);
    return answer_from_state(a, tb, asked);
}

/* "back camera now, right?", "wifi's off now yeah?": a statement and a tag that asks whether it
 * holds ("right", "yeah", "yes", "correct", "no", "innit", "isn't it", "is it", "aren't they"),
 * closed by a "?", with no command verb at its start: answered from the state as "is <the
 * statement>" when the statement names a key ("back camera now?" alone may be a request). */
static bool answer_tag_question(struct pipit_agent *a, struct turn_build *tb, const char *utt) {
    static const char *const TAGS[] = {"right", "yeah", "yes",     "correct", "no",
                                       "innit", "yep",  "isnt it", "is it",   "arent they"};
    const char *q = strrchr(utt, '?');
    if (q == NULL || strspn(q + 1, " \t") != strlen(q + 1)) {
        return false;
    }
    struct words_tok w[16];
    size_t n = words_tokenize(utt, (size_t)(q - utt), 0, w, 16);
    if (n < 2 || n == 16) {
        return false;
    }
    size_t tag = 0;
    for (size_t k = 0; k < sizeof(TAGS) / sizeof(TAGS[0]) && tag == 0; k++) {
        size_t nw = words_count(TAGS[k]);
        if (nw < n && words_match(w, n, n - nw, TAGS[k]) == nw) {
            tag = nw;
        }
    }
    if (tag == 0) {
        return false;
    }
    char rest[ROUTER_MAX_SEGMENT];
    pipit_format(rest, sizeof(rest), "%.*s", (int)(w[n - tag - 1].end - w[0].start),
                 utt + w[0].start);
    if (router_command_verb(a->router, rest) != ROUTER_NO_VERB || router_undo_count(rest) > 0) {
        return false;
    }
    char asked[ROUTER_MAX_SEGMENT + 8];
    pipit_format(asked, sizeof(asked), "is %s", rest);
    return answer_from_state(a, tb, asked);
}

/* True when `utt` says a word of a pack example that is itself a statement ("I'm freezing"
 * for a heating tool: no command verb): the pack says such statements ask for something, so
 * they are no small talk ("it's freezing in here"). Words of four letters or more that are
 * not glue ("this", "that", "with", "just", "really", ...). */
static bool says_statement_example(const struct pipit_agent *a, const char *utt) {
    static const char *const GLUE[] = {
        "this", "that", "with", "just",  "really", "very",  "there", "here",  "what",
        "have", "from", "your", "they",  "them",   "then",  "some",  "like",  "about",
        "been", "were", "its",  "thats", "theres", "today", "now",   "please"};
    struct words_tok u[48];
    size_t nu = words_tokenize(utt, strlen(utt), 0, u, 48);
    for (size_t i = 0; i < a->ts->n_tools; i++) {
        const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, i);
        for (size_t e = 0; tp != NULL && e < tp->n_examples && !pipit_toolset_is_cloud(a->ts, i);
             e++) {
            const char *say = tp->examples[e].say;
            if (say == NULL || router_command_verb(a->router, say) != ROUTER_NO_VERB) {
                continue;
            }
            struct words_tok x[24];
            size_t nx = words_tokenize(say, strlen(say), 0, x, 24);
            /* a first word that is a verb people give commands with ("hold the focus ...") is
             * no statement's; a subject is ("clothes are filthy") */
            size_t vl = 0;
            char low[64];
            pipit_format(low, sizeof(low), "%s", say);
            for (char *q = low; *q != '\0'; q++) {
                *q = (char)tolower((unsigned char)*q);
            }
            size_t first = verbbank_lead(low, &vl) != NULL ? 1 : 0;
            for (size_t k = first; k < nx; k++) {
                if (strlen(x[k].w) < 4 ||
                    words_in_list(x[k].w, GLUE, sizeof(GLUE) / sizeof(GLUE[0]))) {
                    continue;
                }
                for (size_t j = 0; j < nu; j++) {
                    if (strcmp(u[j].w, x[k].w) == 0) {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

/* True when `text` asks for nothing: no word of the tool set, no command verb at any word, no
 * undo ("don't want to distract the ref", "the stall guy is waving"). */
static bool only_chatter(const struct pipit_agent *a, const char *text) {
    if (router_has_tool_word(a->router, text) || router_undo_count(text) > 0) {
        return false;
    }
    struct words_tok t[48];
    size_t len = strlen(text);
    size_t n = words_tokenize(text, len, 0, t, 48);
    if (n == 48) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (router_command_verb(a->router, text + t[i].start) != ROUTER_NO_VERB) {
            return false;
        }
    }
    return true;
}

/* "the stall guy is waving, is the flash off? dont wanna blind him": one question about the
 * state (the clause that ends with the only '?'), said among words that ask for nothing, is
 * answered as the question alone. */
static bool
answer_question_in_chatter(struct pipit_agent *a, struct turn_build *tb, const char *utt) {
    const char *q = strchr(utt, '?');
    if (q == NULL || strchr(q + 1, '?') != NULL) {
        return false;
    }
    const char *s = q;
    while (s > utt && strchr(".!,;:", s[-1]) == NULL &&
           !(s[-1] == '-' && s - 1 > utt && s[-2] == ' ')) {
        s--;
    }
    char question[AGENT_MAX_UTTERANCE], rest[AGENT_MAX_UTTERANCE];
    pipit_format(question, sizeof(question), "%.*s", (int)(q + 1 - s), s);
    pipit_format(rest, sizeof(rest), "%.*s %s", (int)(s - utt), utt, q + 1);
    bool blank = true;
    for (const char *p = rest; *p != '\0' && blank; p++) {
        blank = strchr(" .,!;:-", *p) != NULL;
    }
    if (blank || !only_chatter(a, rest)) {
        return false; /* nothing around it (the whole was tried), or a request beside it */
    }
    return answer_from_state(a, tb, question);
}

/* "I didn't take a photo or set the timer: two steps per command is the limit." The
 * segments past the step limit, in the person's words. */
static void say_not_done(struct pipit_agent *a,
                         struct turn_build *tb,
                         char (*rest)[ROUTER_MAX_SEGMENT],
                         size_t n_rest) {
    static const char *const NUMBERS[] = {"zero", "one", "two",   "three", "four",
                                          "five", "six", "seven", "eight"};
    struct strbuf b = {0};
    strbuf_str(&b, "I didn't ");
    for (size_t i = 0; i < n_rest; i++) {
        if (i > 0) {
            strbuf_str(&b, i + 1 == n_rest ? " or " : ", ");
        }
        size_t at = router_command_verb(a->router, rest[i]);
        if (at == ROUTER_NO_VERB) {
            strbuf_printf(&b, "do \"%s\"", rest[i]);
            continue;
        }
        const char *verb = rest[i] + at;
        if (verb[0] >= 'A' && verb[0] <= 'Z' && verb[1] >= 'a' && verb[1] <= 'z') {
            char first = (char)(verb[0] - 'A' + 'a'); /* "Take a photo" -> "take a photo" */
            strbuf_add(&b, &first, 1);
            verb++;
        }
        strbuf_str(&b, verb);
    }
    int32_t m = a->params.max_steps;
    strbuf_printf(&b, ": %s step%s per command is the limit.",
                  m >= 0 && m < (int32_t)(sizeof(NUMBERS) / sizeof(NUMBERS[0])) ? NUMBERS[m] : "8",
                  m == 1 ? "" : "s");
    char *s = strbuf_take(&b);
    agent_say(tb, s != NULL ? s : "I didn't do the rest: it was more than I do in one go.");
    free(s);
}

enum pipit_status
pipit_agent_turn(struct pipit_agent *a, const char *utterance, struct pipit_turn **out) {
    if (a == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    if (utterance == NULL || out == NULL) {
        return agent_fail(a, PIPIT_ERR_INVALID_ARG, "agent: turn: %s is NULL",
                          utterance == NULL ? "the utterance" : "the result pointer");
    }
    *out = NULL;
    a->errmsg[0] = '\0'; /* what this turn fails with, if it fails */
    enum pipit_status checked = check_utterance(a, utterance);
    if (checked != PIPIT_OK) {
        return checked;
    }
    /* the turn's tail (state line, words, header, a short answer) must fit the prompt limit
     * beside the system prompt and tools; memory makes room for it before the model runs. A
     * longer utterance is followed from its last clauses that fit ("..., can we just have it
     * the way it was"): people ramble first and ask last. */
    int32_t need = 0;
    const char *said_whole = utterance;
    bool cut = false, none_fits = false;
    if (a->model != NULL) {
        int32_t n_sys =
            a->system_tokens >= 0 ? a->system_tokens : agent_count_tokens(a, a->system_text, true);
        need = utterance_need(a, utterance);
        for (const char *p = utterance;
             n_sys >= 0 && need >= 0 && n_sys + need > a->prompt_limit;) {
            p += strcspn(p, ",.;!?");
            p += strspn(p, ",.;!? \t\n");
            if (*p == '\0') {
                none_fits = true;
                break;
            }
            utterance = p;
            cut = true;
            need = utterance_need(a, utterance);
        }
        if (none_fits) {
            utterance = said_whole;
            need = 0;
        }
    }
    a->turn_seq++; /* the action log groups one request's actions */
    a->utt_seq++;
    struct turn_build tb = {0};
    tb.utterance = utterance;
    tb.turn = calloc(1, sizeof(*tb.turn));
    if (tb.turn == NULL) {
        return agent_fail(a, PIPIT_ERR_NOMEM, "agent: turn: out of memory for the turn record");
    }
    struct pipit_turn *t = tb.turn;
    a->eph_turn = 0;
    atomic_store(&a->cancel, false);
    double t0 = pipit_now_ms();
    struct pipit_perf perf0 = {0};
    if (a->backend.ops->perf != NULL) {
        a->backend.ops->perf(a->backend.self, &perf0);
    }
    struct policy_clock clock;
    policy_clock_start(&clock, a->params.turn_budget_ms);
    int32_t half = (pipit_cpu_count() + 1) / 2;
    int32_t base_threads = a->params.n_threads > 0 ? a->params.n_threads : (half > 4 ? 4 : half);
    struct policy_limits lim;
    policy_thermal_limits(a->thermal, base_threads, a->params.max_tokens, &lim);
    enum pipit_status status = PIPIT_OK;

    int32_t np0 = 0, ne0 = 0;
    a->backend.ops->lengths(a->backend.self, &np0, &ne0);
    if (need > 0 && a->system_tokens >= 0) {
        /* this utterance's tail must fit beside the memory: within the prompt limit with a short
         * answer, and within the context window with the longest answer a decode may write */
        int32_t gen = a->params.max_tokens < 32 ? a->params.max_tokens : 32;
        int32_t fit = a->prompt_limit - need;
        int32_t hard = (int32_t)a->params.n_ctx - (need - gen) - a->params.max_tokens;
        fit = hard < fit ? hard : fit;
        if (np0 > fit && agent_trim_to_budget(a, t, fit) != PIPIT_OK) {
            t->flags |= PIPIT_TURN_OVER_BUDGET;
        }
    }
    char utt[AGENT_MAX_UTTERANCE];
    pipit_format(utt, sizeof(utt), "%s", utterance);
    if (!lim.paused && memory_begin_turn(&a->mem, utt) != PIPIT_OK) {
        status = PIPIT_ERR_NOMEM;
    }
    int32_t undo_n = 0;
    size_t named = 0, named_len = 0;
    unsigned talk = 0;
    if (cut || none_fits) {
        t->flags |= PIPIT_TURN_CUT;
    }
    if (lim.paused) {
        t->flags |= PIPIT_TURN_PAUSED;
        agent_say(&tb, "The device is too hot, so I'm pausing. Please try again in a moment.");
    } else if (none_fits) {
        agent_say(&tb, "That's more than I can follow at once. Could you say it in fewer words?");
    } else if ((!example_says(a, utt) || router_undo_retraction(utt)) &&
               ((undo_n = router_undo_count(utt)) > 0 ||
                (a->last_undo && (undo_n = router_undo_followup(utt)) > 0))) {
        agent_undo(a, &tb, undo_n); /* "undo that" ... "and that too" */
    } else if (router_undo_named(a->router, utt, a->last_undo, &named, &named_len) &&
               agent_undo_named(a, &tb, utt + named, named_len, router_undo_says_earlier(utt))) {
        t->n_steps = 1; /* "undo the blinds": the newest action on them */
    } else if ((a->last_answered && answer_what_about(a, &tb, utt)) ||
               answer_tag_question(a, &tb, utt)) {
        t->n_steps = 1; /* "is wifi on?" ... "what about airplane mode?" */
    } else if ((no_command_inside(a, utt) || short_question(utt)) &&
               answer_from_state(a, &tb, utt)) {
        t->n_steps = 1; /* "is the flash on and the grid off?": one question, however split */
    } else if (answer_question_in_chatter(a, &tb, utt)) {
        t->n_steps = 1;
    } else if (a->params.small_talk && a->params.lazy_grammar &&
               (talk = smalltalk_kinds(a->router, utt)) != 0 && !says_statement_example(a, utt)) {
        char reply[640];
        smalltalk_reply(talk, a->ts, reply, sizeof(reply));
        agent_say(&tb, reply); /* "thanks, that's all for now": nothing to run */
        t->flags |= PIPIT_TURN_SMALL_TALK | PIPIT_TURN_PLAIN_TEXT;
        t->n_steps = 1;
    } else {
        /* every segment up to the array's size: those past max_steps are not run, and the
         * sentence says so */
        char segs[AGENT_MAX_SEGMENTS][ROUTER_MAX_SEGMENT];
        /* "there's a tiny lizard on the rock! macro mode and zoom in a step": the opening
         * remark is no request, and it kept the two requests after it from being split */
        const char *asked = utt + router_remark_head(a->router, utt);
        /* "lights out, co2 off and moonlight... no wait just lights off and co2 off": what the
         * person settled on */
        asked += router_correction(a->router, asked);
        size_t n_all = router_split_with(a->router, asked, segs, AGENT_MAX_SEGMENTS);
        for (size_t i = 0; n_all > 1 && i < n_all;) {
            if (smalltalk_is_vocative(a->router, segs[i]) ||
                smalltalk_is_aside(a->router, segs[i])) {
                /* "printer, fan off": the device addressed is no request; nor is "hold on" of
                 * "hold on, zoom in" */
                memmove(segs[i], segs[i + 1], (n_all - i - 1) * sizeof(segs[0]));
                n_all--;
            } else {
                i++;
            }
        }
        bool choice = n_all > 1 && agent_offers_both_sides(utt) && strlen(utt) < sizeof(segs[0]);
        for (size_t i = 0; choice && i < n_all; i++) {
            choice = router_command_verb(a->router, segs[i]) == ROUTER_NO_VERB ||
                     agent_offers_both_sides(segs[i]); /* "open or closed" opens with a verb */
        }
        if (choice) {
            /* "the blinds, open or closed?" asks about the blinds: one segment, or "the
             * blinds" alone would go to the model as a request */
            pipit_format(segs[0], sizeof(segs[0]), "%s", utt);
            n_all = 1;
        }
        size_t n = n_all;
        a->n_segments = n_all;
        if (n > (size_t)a->params.max_steps) {
            t->flags |= PIPIT_TURN_STEP_CAP;
            n = (size_t)a->params.max_steps;
        }
        if (n > 1) {
            t->flags |= PIPIT_TURN_COMPOUND;
        }
        for (size_t i = 1; i < n; i++) {
            share_first_verb(a, segs[0], segs[i], sizeof(segs[i]));
        }
        for (size_t i = 0; i < n; i++) {
            if (atomic_load(&a->cancel)) {
                t->flags |= PIPIT_TURN_CANCELLED;
                break;
            }
            if (i > 0) {
                sleep_ms(fmin(lim.step_delay_ms, policy_clock_remaining_ms(&clock)));
            }
            if (policy_clock_expired(&clock)) {
                t->flags |= PIPIT_TURN_BUDGET;
                char buf[400];
                pipit_format(buf, sizeof(buf), "I ran out of time before \"%s\".", segs[i]);
                agent_say(&tb, buf);
                break;
            }
            t->n_steps++;
            a->turn_seq += i > 0; /* each segment is a request of its own for undo */
            if ((!example_says(a, segs[i]) || router_undo_retraction(segs[i])) &&
                (undo_n = router_undo_count(segs[i])) > 0) {
                agent_undo(a, &tb, undo_n);
                continue;
            }
            if (answer_from_state(a, &tb, segs[i])) {
                continue;
            }
            tb.segment = segs[i];
            tb.asked = closed_by_question_mark(utt, segs[i]);
            struct pipit_call again;
            if (agent_followup_call(a, segs[i], &again)) {
                /* "a bit more", "the other way": the last action, not the model's guess */
                t->flags |= PIPIT_TURN_FOLLOW_UP;
                bool go = agent_handle_call(a, &tb, &again, &clock);
                pipit_call_clear(&again);
                if (!go) {
                    break;
                }
                continue;
            }
            if (a->foreign_model) {
                /* a model trained for other tools answers with them at random ("r we armed
                 * rn?" set a guest code): the harness's own answers above still run */
                t->flags |= PIPIT_TURN_FOREIGN_MODEL;
                agent_say(&tb, "I have no model for these tools yet, so I can't do that. "
                               "(This model was trained for other tools.)");
                break;
            }
            char *text = NULL, whole[ROUTER_MAX_SEGMENT];
            bool remark = drop_remark(a, segs[i], whole);
            status = agent_decode_segment(a, &tb, segs[i], &clock, &lim, i == 0, &text);
            if (status == PIPIT_OK && remark && calls_for_free_text(a, text)) {
                /* the remark may be the message: the segment as said */
                free(text);
                text = NULL;
                memcpy(segs[i], whole, sizeof(whole));
                status = agent_decode_segment(a, &tb, segs[i], &clock, &lim, false, &text);
            }
            if (status != PIPIT_OK || text == NULL) {
                free(text);
                break;
            }
            free(t->model_text);
            t->model_text = text;
            agent_output_add(&tb, text);
            if (!agent_handle_output(a, &tb, text, &clock)) {
                break;
            }
        }
        if ((t->flags & PIPIT_TURN_STEP_CAP) != 0 && (t->flags & PIPIT_TURN_BREAKER) == 0) {
            say_not_done(a, &tb, segs + n, n_all - n);
        }
    }
    a->last_undo = tb.undid;
    a->last_answered = (t->flags & PIPIT_TURN_STATE_ANSWER) != 0;
    if (status == PIPIT_OK && !lim.paused && (t->flags & PIPIT_TURN_CANCELLED) == 0) {
        status = agent_remember(a, &tb, utt);
    }
    strbuf_free(&tb.outputs);
    strbuf_free(&tb.prompts);
    int32_t np = 0, ne = 0;
    a->backend.ops->lengths(a->backend.self, &np, &ne);
    t->n_permanent = np;
    t->memory_lines = (int32_t)a->mem.n;
    t->memory_bytes = (int32_t)memory_bytes(&a->mem);
    /* what the person reads may quote a cloud answer or a handler's text: never call syntax
     * or control text (untrusted.h); the length is bounded where that text came in */
    char *sentence = strbuf_take(&tb.sentence);
    t->sentence = sentence != NULL ? untrusted_clean(sentence, (size_t)-1, 0) : NULL;
    free(sentence);
    if (t->sentence == NULL) {
        status = PIPIT_ERR_NOMEM;
    }
    t->state_json = pipit_agent_state_json(a);
    if (a->backend.ops->perf != NULL) {
        struct pipit_perf perf1;
        a->backend.ops->perf(a->backend.self, &perf1);
        t->model_ms =
            (perf1.t_prefill_ms - perf0.t_prefill_ms) + (perf1.t_decode_ms - perf0.t_decode_ms);
        t->sample_ms =
            (perf1.t_sample_ms - perf0.t_sample_ms) + (perf1.t_forced_ms - perf0.t_forced_ms);
        t->constraint_ms = perf1.t_constraint_ms - perf0.t_constraint_ms;
    }
    t->latency_ms = pipit_now_ms() - t0;
    if (status != PIPIT_OK && status != PIPIT_ERR_ABORTED) {
        pipit_turn_free(t);
        if (a->errmsg[0] == '\0') { /* a path that did not say more */
            agent_fail(a, status, "agent: the turn failed: %s", pipit_status_str(status));
        }
        return status;
    }
    *out = t;
    return PIPIT_OK;
}
