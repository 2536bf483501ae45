/*
 * agent_undo.c - the action log and undo (docs/agent.md, "Undo").
 *
 * Each executed call that changes the device pushes an entry: the undo keys' values before the
 * call, or "impossible" when the tool cannot be undone. A call that changed nothing pushes a
 * mark (PIPIT_UNDO_NO_STATE): an undo right after it reverts nothing older, and says so. An undo,
 * routed ("undo", "never mind") or the model's call of the built-in undo tool, reverts the newest
 * entries through the device. Invariant: the log holds at most undo_slots entries, newest last.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_undo.h"

#include "agent_followup.h"
#include "agent_impl.h"
#include "agent_record.h"
#include "agent_switch.h"
#include "ask.h"
#include "router.h"
#include "status.h"
#include "strbuf.h"
#include "words.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A tool name for sentences: "set_white_balance" -> "set white balance". */
static void human_name(const char *tool, char *buf, size_t size) {
    pipit_format(buf, size, "%s", tool);
    for (char *p = buf; *p != '\0'; p++) {
        if (*p == '_') {
            *p = ' ';
        }
    }
}

void agent_log_push(struct pipit_agent *a,
                    int32_t tool,
                    enum pipit_undo_kind kind,
                    json_t *snapshot) {
    if (kind == PIPIT_UNDO_NO_STATE && a->log_n > 0 &&
        a->log[a->log_n - 1].kind == PIPIT_UNDO_NO_STATE) {
        json_decref(a->log[--a->log_n].snapshot); /* two marks in a row: the newer says it */
    }
    if (a->log_n == a->params.undo_slots) {
        a->log_dropped++; /* undo must say it cannot go back that far */
        json_decref(a->log[0].snapshot);
        memmove(a->log, a->log + 1, sizeof(*a->log) * (size_t)(a->log_n - 1));
        a->log_n--;
    }
    a->log[a->log_n++] = (struct action_entry){tool, kind, snapshot, a->turn_seq, a->utt_seq};
}

/* One sentence that a logged action was reverted: the restored keys' values ("The zoom is 1x
 * again.", "The flash is off again.", "Back to no alarms."), from the state after the undo. */
static void say_restored(struct pipit_agent *a,
                         const struct action_entry *e,
                         const json_t *before,
                         struct strbuf *b,
                         char *key_out,
                         size_t key_size) {
    key_out[0] = '\0';
    json_t *state = a->dev->ops->get_state(a->dev->self);
    const char *key;
    json_t *v;
    char one[256];
    /* a tool whose undo keys are picked by an argument ("{room}_light" keeps every room's):
     * the keys the undo changed, up to three, each by its sentence */
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)e->tool);
    bool placed = tp != NULL && tp->has_step && tp->step.key.key_arg != NULL;
    for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
        placed = placed || tp->set[k].key.key_arg != NULL;
    }
    if (placed && json_object_size(e->snapshot) > 1) {
        struct strbuf said = {0};
        const char *moved = NULL;
        size_t n_moved = 0;
        bool sayable = true;
        json_object_foreach(e->snapshot, key, v) {
            if (sayable && !json_equal(json_object_get(before, key), json_object_get(state, key))) {
                sayable = ++n_moved <= 3 && ask_sentence(a->ask, key, json_object_get(state, key),
                                                         ASK_AGAIN, one, sizeof(one));
                strbuf_printf(&said, "%s%s", said.len > 0 ? " " : "", one);
                moved = key;
            }
        }
        if (sayable && n_moved > 0 && said.data != NULL) {
            strbuf_printf(b, "%s%s", b->len > 0 ? " " : "", said.data);
            if (n_moved == 1) {
                pipit_format(key_out, key_size, "%s", moved);
            }
            strbuf_free(&said);
            json_decref(state);
            return;
        }
        strbuf_free(&said);
    }
    if (json_object_size(e->snapshot) == 1) {
        json_object_foreach(e->snapshot, key, v) {
            if (ask_sentence(a->ask, key, json_object_get(state, key), ASK_AGAIN, one,
                             sizeof(one))) {
                strbuf_printf(b, "%s%s", b->len > 0 ? " " : "", one);
                pipit_format(key_out, key_size, "%s", key);
                json_decref(state);
                return;
            }
        }
    }
    /* several keys (tap_to_focus moves x and y), or a key no sentence knows */
    char name[96];
    human_name(a->ts->tools[e->tool].name, name, sizeof(name));
    strbuf_printf(b, "%sI undid the last change (%s).", b->len > 0 ? " " : "", name);
    json_decref(state);
}

/* "Nothing to undo: that changed nothing. Bluetooth is on." for a mark (agent_log_push()). */
static void say_unchanged(struct pipit_agent *a, const struct action_entry *e, struct strbuf *b) {
    strbuf_str(b, "There's nothing to undo: that changed nothing.");
    if (json_object_size(e->snapshot) != 1) {
        return; /* "{room}_light" keeps every room: which one was asked is not known here */
    }
    json_t *state = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    const char *key;
    json_t *v;
    char one[256];
    json_object_foreach(e->snapshot, key, v) {
        if (ask_sentence(a->ask, key, json_object_get(state, key), ASK_NOW, one, sizeof(one))) {
            strbuf_printf(b, " %s", one);
            break;
        }
    }
    json_decref(state);
}

/* Revert up to `count` of the newest logged actions, newest first (ROUTER_UNDO_ALL: all of
 * them). Returns the sentence (malloc'd; NULL when out of memory); *reverted receives the
 * number of actions whose state was put back. Never runs a tool. */
static char *undo_actions(struct pipit_agent *a, int32_t count, int32_t *reverted) {
    struct strbuf b = {0};
    *reverted = 0;
    if (a->log_n == 0) {
        if (a->log_dropped > 0) {
            strbuf_printf(&b, "There's nothing more I can undo: I keep the last %d actions.",
                          (int)a->params.undo_slots);
        } else {
            strbuf_str(&b, "There's nothing to undo.");
        }
        return strbuf_take(&b);
    }
    int32_t available = a->log_n;
    /* one sentence per reverted action; a key put back twice ("undo everything" after two
     * start times) is said once, with the value it ends at */
    struct said {
        char key[64];
        char *text;
    };
    struct said *said = calloc((size_t)available, sizeof(*said));
    size_t n_said = 0;
    if (said == NULL) {
        return NULL;
    }
    /* a count is of the person's requests: the actions of one segment ("turn off all the
     * lights": one call a room) are reverted together; "zoom in and flash on" is two requests,
     * and undo reverts the flash; there are at most log_n sentences */
    int32_t turns = 0;
    for (int32_t i = 0; i < available; i++) {
        turns += i == 0 || a->log[i].turn != a->log[i - 1].turn;
    }
    available = turns;
    for (int32_t i = 0; i < count && a->log_n > 0; i++) {
        int64_t turn = a->log[a->log_n - 1].turn;
        struct action_entry mark = {0};
        bool marked = false, acted = false;
        while (a->log_n > 0 && a->log[a->log_n - 1].turn == turn) {
            struct action_entry e = a->log[--a->log_n];
            char name[96];
            human_name(a->ts->tools[e.tool].name, name, sizeof(name));
            struct strbuf one = {0};
            if (e.kind == PIPIT_UNDO_NO_STATE) {
                if (!marked) {
                    mark = e; /* the newest no-op of the turn */
                    marked = true;
                } else {
                    json_decref(e.snapshot);
                }
                continue;
            }
            acted = true;
            if (e.kind == PIPIT_UNDO_IMPOSSIBLE) {
                strbuf_printf(&one, "I can't undo the last action (%s): it can't be undone.", name);
                said[n_said++].text = strbuf_take(&one);
                json_decref(e.snapshot); /* a loaded session may carry one (fuzz: session) */
                continue;
            }
            struct pipit_error err;
            json_t *before = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
            enum pipit_status st = a->dev != NULL
                                       ? a->dev->ops->set_state(a->dev->self, e.snapshot, &err)
                                       : PIPIT_ERR_STATE;
            if (st != PIPIT_OK) {
                strbuf_printf(&one, "I couldn't undo the last action (%s).", name);
                said[n_said++].text = strbuf_take(&one);
            } else {
                say_restored(a, &e, before, &one, said[n_said].key, sizeof(said[n_said].key));
                said[n_said++].text = strbuf_take(&one);
                (*reverted)++;
            }
            json_decref(before);
            json_decref(e.snapshot);
        }
        if (marked && !acted && count == 1 && a->log_n > 0 &&
            a->log[a->log_n - 1].utt == mark.utt &&
            a->log[a->log_n - 1].kind != PIPIT_UNDO_NO_STATE) {
            /* "make the living room purple and switch off the kitchen" (it was off), "undo
             * that": the turn did something, and that is what is undone; "undo both" counts
             * the no-op as one of the two (it had reached the turn before) */
            json_decref(mark.snapshot);
            i--;
            continue;
        }
        if (marked && !acted && i == 0 && count == 1) {
            /* the newest turn changed nothing: said when it is all this undo reaches; it counts
             * as one of "the last two" (the person counts what they asked for) */
            struct strbuf one = {0};
            say_unchanged(a, &mark, &one);
            said[n_said++].text = strbuf_take(&one);
        }
        json_decref(mark.snapshot);
    }
    for (size_t i = 0; i < n_said; i++) {
        bool again = false;
        for (size_t j = i + 1; j < n_said; j++) {
            /* a key put back twice is said once, as it ends; so is a sentence without a key
             * ("I undid the last change (tap to focus)." for two focus points) */
            again = again || (said[i].key[0] != '\0' && strcmp(said[i].key, said[j].key) == 0) ||
                    (said[i].key[0] == '\0' && said[i].text != NULL && said[j].text != NULL &&
                     strcmp(said[i].text, said[j].text) == 0);
        }
        if (!again && said[i].text != NULL && said[i].text[0] != '\0') {
            strbuf_printf(&b, "%s%s", b.len > 0 ? " " : "", said[i].text);
        }
        free(said[i].text);
    }
    free(said);
    if (a->log_n == 0 && a->log_dropped > 0 && (count == ROUTER_UNDO_ALL || count > available)) {
        /* "undo everything" after more actions than the log keeps: the older ones stay */
        strbuf_printf(&b, " Older changes stay: I can undo only the last %d actions.",
                      (int)a->params.undo_slots);
    } else if (count != ROUTER_UNDO_ALL && count > available) {
        if (available == 1) {
            strbuf_str(&b, " There was only one action to undo.");
        } else {
            strbuf_printf(&b, " There were only %d actions to undo.", (int)available);
        }
    }
    return strbuf_take(&b);
}

/* Revert `count` actions for the person (the router found an undo request). */
void agent_undo(struct pipit_agent *a, struct turn_build *tb, int32_t count) {
    tb->turn->flags |= PIPIT_TURN_UNDO;
    tb->undid = true;
    int32_t reverted = 0;
    char *s = undo_actions(a, count, &reverted);
    if (reverted > 0) {
        agent_followup_forget(a); /* "again" after an undo undoes again, never redoes */
    }
    agent_say(tb, s != NULL ? s : "I couldn't undo that.");
    free(s);
}
static void revert_at(struct pipit_agent *a, struct turn_build *tb, int32_t at);

/* Whether `phrase` names logged action `e`: a key it put back ("the blinds", "the zoom"), the
 * one-word value it set that the key still has ("the fluorescent"), or a word of its tool's name
 * that is not a verb ("the timer" of set_timer). */
static bool names_action(const struct pipit_agent *a,
                         const struct action_entry *e,
                         const char *phrase,
                         bool by_value) {
    struct words_tok said[16], name[8], value[8];
    size_t n_said = words_tokenize(phrase, strlen(phrase), 0, said, 16);
    json_t *state = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    const char *key;
    json_t *v;
    bool named = false;
    json_object_foreach(e->snapshot, key, v) {
        named = named || (a->ask != NULL && ask_names_key(a->ask, phrase, key));
        /* the value it set, still there: "revert the fluorescent" */
        const char *now = json_string_value(json_object_get(state, key));
        size_t n_value = now != NULL ? words_tokenize(now, strlen(now), 0, value, 8) : 0;
        for (size_t j = 0; by_value && n_value == 1 && j < n_said; j++) {
            named = named || (strlen(value[0].w) >= 3 && strcmp(value[0].w, said[j].w) == 0);
        }
    }
    json_decref(state);
    if (named) {
        return true;
    }
    const char *tool = a->ts->tools[e->tool].name;
    char spaced[96];
    pipit_format(spaced, sizeof(spaced), "%s", tool);
    for (char *p = spaced; *p != '\0'; p++) {
        *p = *p == '_' || *p == '-' ? ' ' : *p;
    }
    size_t n_name = words_tokenize(spaced, strlen(spaced), 0, name, 8);
    for (size_t i = 0; i < n_name; i++) {
        for (size_t j = 0; j < n_said && strlen(name[i].w) >= 3 && !words_is_tool_verb(name[i].w);
             j++) {
            if (strcmp(name[i].w, said[j].w) == 0) {
                return true;
            }
        }
    }
    return false;
}

bool agent_undo_named(struct pipit_agent *a,
                      struct turn_build *tb,
                      const char *said,
                      size_t len,
                      bool newest) {
    char phrase[128]; /* "the blinds", less a closing mark */
    pipit_format(phrase, sizeof(phrase), "%.*s",
                 (int)(len < sizeof(phrase) ? len : sizeof(phrase) - 1), said);
    static const char *const CLOSERS[] = {" please", " pls", " thanks", " now", " for me"};
    for (bool again = true; again;) {
        again = false;
        for (size_t n = strlen(phrase); n > 0 && strchr(" .!?,;:", phrase[n - 1]) != NULL; n--) {
            phrase[n - 1] = '\0';
        }
        for (size_t k = 0; k < sizeof(CLOSERS) / sizeof(CLOSERS[0]); k++) {
            size_t n = strlen(phrase), c = strlen(CLOSERS[k]);
            if (n > c && strcasecmp(phrase + n - c, CLOSERS[k]) == 0) {
                phrase[n - c] = '\0';
                again = true;
            }
        }
    }
    int32_t at = -1;
    for (int32_t i = a->log_n - 1; i >= 0 && at < 0; i--) {
        if (a->log[i].kind == PIPIT_UNDO_KEYS && a->log[i].snapshot != NULL &&
            names_action(a, &a->log[i], phrase, true)) {
            at = i;
        }
    }
    if (at < 0 && !router_has_tool_word(a->router, phrase)) {
        return false; /* "undo the damage": not the pack's; the model's */
    }
    if (at < 0 && newest) {
        agent_undo(a, tb, 1); /* "make the shape of the photo what it used to be" */
        return true;
    }
    if (at < 0) {
        tb->turn->flags |= PIPIT_TURN_UNDO;
        tb->undid = true;
        char s[256];
        pipit_format(s, sizeof(s), "There's nothing to undo for %s: I haven't changed it.", phrase);
        agent_say(tb, s);
        return true;
    }
    revert_at(a, tb, at);
    return true;
}

/* Revert log entry `at` alone (it leaves the log) and say what is back. */
static void revert_at(struct pipit_agent *a, struct turn_build *tb, int32_t at) {
    tb->turn->flags |= PIPIT_TURN_UNDO;
    tb->undid = true;
    struct strbuf b = {0};
    struct action_entry e = a->log[at];
    struct pipit_error err;
    json_t *before = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    char key[64];
    if (a->dev != NULL && a->dev->ops->set_state(a->dev->self, e.snapshot, &err) == PIPIT_OK) {
        say_restored(a, &e, before, &b, key, sizeof(key));
        memmove(a->log + at, a->log + at + 1, sizeof(*a->log) * (size_t)(a->log_n - at - 1));
        a->log_n--;
        json_decref(e.snapshot);
        agent_followup_forget(a);
    } else {
        strbuf_printf(&b, "I couldn't undo that.");
    }
    json_decref(before);
    char *s = strbuf_take(&b);
    agent_say(tb, s != NULL ? s : "I couldn't undo that.");
    free(s);
}

bool agent_undo_instead(struct pipit_agent *a,
                        struct turn_build *tb,
                        int32_t tool,
                        const char *segment,
                        const char *args_json) {
    /* words that ask for the earlier state, not only a change ("no", "too", "again" do not) */
    static const char *const REVERSAL[] = {
        "undo",    "revert",  "reverse", "before",    "previous", "earlier", "original",
        "restore", "mistake", "wrong",   "forget",    "scrap",    "scratch", "cancel",
        "rid",     "had",     "prefer",  "preferred", "liked",    "changed"};
    if (segment == NULL || !pipit_toolset_is_pack_tool(a->ts, tool) ||
        strpbrk(segment, "0123456789") != NULL) {
        return false;
    }
    struct words_tok t[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 48);
    bool reversal = false, number = false;
    for (size_t i = 0; i < n; i++) {
        int v = 0;
        /* "back" of a state ("set it back", "back to how it was", "back the way it was"), not
         * of a direction ("zoom back a step") */
        static const char *const BACK_NEXT[] = {"to", "how", "what", "as", "like"};
        static const char *const BACK_WHAT[] = {"it", "that", "them", "this", "those", "things"};
        bool back =
            strcmp(t[i].w, "back") == 0 &&
            (i + 1 == n || words_in_list(t[i + 1].w, BACK_NEXT, 5) ||
             (i + 2 < n && strcmp(t[i + 1].w, "the") == 0 && strcmp(t[i + 2].w, "way") == 0) ||
             (i > 0 && words_in_list(t[i - 1].w, BACK_WHAT, 6)));
        /* a word of the tool's own name is what the tool does ("cancel the timer" ->
         * cancel_timer) */
        bool own = strlen(t[i].w) >= 4 && strstr(a->ts->tools[tool].name, t[i].w) != NULL;
        reversal =
            reversal || (!own && (back || words_in_list(t[i].w, REVERSAL,
                                                        sizeof(REVERSAL) / sizeof(REVERSAL[0]))));
        /* "zoom back to one x" says a number; "set that one back" does not */
        static const char *const ONE_OF[] = {"that", "this", "the", "which", "last", "other"};
        bool pronoun = strcmp(t[i].w, "one") == 0 && i > 0 && words_in_list(t[i - 1].w, ONE_OF, 6);
        number = number || (!pronoun && words_number_value(t[i].w, &v));
    }
    if (number) {
        return false;
    }
    json_t *args = json_loads(args_json != NULL ? args_json : "{}", 0, NULL);
    bool said = json_object_size(args) > 0 && agent_says_a_value_of(args, segment, t, n);
    json_decref(args);
    json_t *keys = reversal && !said && n < 48 ? agent_undo_snapshot(a, tool) : NULL;
    int32_t at = -1;
    for (int32_t i = a->log_n - 1; keys != NULL && i >= 0 && at < 0; i--) {
        const struct action_entry *e = &a->log[i];
        const char *key;
        json_t *v;
        json_object_foreach(e->snapshot, key, v) {
            if (e->kind == PIPIT_UNDO_KEYS && e->utt != a->utt_seq &&
                json_object_get(keys, key) != NULL) {
                at = i;
            }
        }
    }
    json_decref(keys);
    if (at < 0) {
        return false;
    }
    revert_at(a, tb, at);
    return true;
}

/* Snapshot the undo keys of `tool` from the device state (NULL when not applicable). */
json_t *agent_undo_snapshot(struct pipit_agent *a, int32_t tool) {
    const char *const *keys = NULL;
    size_t n = 0;
    if (pipit_toolset_undo(a->ts, (size_t)tool, &keys, &n) != PIPIT_UNDO_KEYS || a->dev == NULL) {
        return NULL;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    if (state == NULL) {
        return NULL; /* an app's get_state() failed: nothing to put back */
    }
    json_t *snap = json_object();
    for (size_t i = 0; i < n && snap != NULL; i++) {
        json_t *v = json_object_get(state, keys[i]);
        if (v != NULL) {
            json_object_set(snap, keys[i], v);
        }
    }
    json_decref(state);
    return snap;
}

/* The model called the built-in undo tool: revert the newest action from the log, exactly as
 * a routed undo does, or the earlier one the segment names (agent_undo.h). No tool runs. */
void agent_model_undo(struct pipit_agent *a, struct turn_build *tb, struct pipit_call_record *rec) {
    /* "put the lights back" after the lights and then the blinds: the segment names an earlier
     * action and not the newest, so that one is what was asked for. By its keys or its tool's
     * name only: a value word in a whole sentence is too often a word of undoing ("roll that
     * back" is no "back" camera) */
    int32_t named = -1;
    if (tb->segment != NULL && a->log_n > 1 && a->log[a->log_n - 1].snapshot != NULL &&
        !names_action(a, &a->log[a->log_n - 1], tb->segment, true)) {
        for (int32_t i = a->log_n - 2; i >= 0 && named < 0; i--) {
            if (a->log[i].kind == PIPIT_UNDO_KEYS && a->log[i].snapshot != NULL &&
                names_action(a, &a->log[i], tb->segment, false)) {
                named = i;
            }
        }
    }
    if (named >= 0) {
        size_t before = tb->sentence.len;
        bool routed = (tb->turn->flags & PIPIT_TURN_UNDO) != 0;
        revert_at(a, tb, named);
        if (!routed) {
            tb->turn->flags &= ~(uint32_t)PIPIT_TURN_UNDO; /* the model's undo, not the router's */
        }
        const char *said = tb->sentence.data != NULL ? tb->sentence.data + before : "";
        rec->status = PIPIT_OK;
        rec->executed = true;
        rec->ok = true;
        rec->data_json = agent_strdup("{}");
        rec->sentence = agent_strdup(said[0] == ' ' ? said + 1 : said);
        return;
    }
    int32_t reverted = 0;
    bool had = a->log_n > 0;
    tb->undid = true;
    char *s = undo_actions(a, 1, &reverted);
    if (reverted > 0) {
        agent_followup_forget(a);
    }
    rec->status = PIPIT_OK;
    rec->executed = true;
    rec->ok = reverted > 0;
    if (!rec->ok) {
        pipit_format(rec->code, sizeof(rec->code), "%s", had ? "cannot_undo" : "nothing_to_undo");
        pipit_format(rec->message, sizeof(rec->message), "%s", s != NULL ? s : "");
    }
    rec->data_json = agent_strdup("{}");
    rec->sentence = s != NULL ? s : agent_strdup("I couldn't undo that.");
    agent_say(tb, rec->sentence);
}
