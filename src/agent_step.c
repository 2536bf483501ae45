/*
 * agent_step.c - one decoded output, from text to sentence.
 *
 * Plain text is said as it is, unless it claims an action no tool performed (replaced by an
 * honest sentence) or a state the device contradicts (corrected). A call is parsed and
 * re-validated against the tool set, then executed (custom handler, else the device, else the
 * cloud); parse errors, unknown tools and bad arguments never reach a handler. The sentence
 * comes from the tool's template and the real result. The breaker stops a call that failed the
 * same way twice.
 */
#define _POSIX_C_SOURCE 200809L

#include "agent_step.h"

#include "agent_choice.h"
#include "agent_choose.h"
#include "agent_dimension.h"
#include "agent_followup.h"
#include "agent_frame.h"
#include "agent_guard.h"
#include "agent_impl.h"
#include "agent_mode.h"
#include "agent_named.h"
#include "agent_number.h"
#include "agent_question.h"
#include "agent_record.h"
#include "agent_said.h"
#include "agent_switch.h"
#include "agent_time.h"
#include "agent_undo.h"
#include "agent_value.h"
#include "ask.h"
#include "cloud.h"
#include "device.h"
#include "log.h"
#include "memory.h"
#include "policy.h"
#include "render.h"
#include "router.h"
#include "smalltalk.h"
#include "status.h"
#include "strbuf.h"
#include "toolspec.h"
#include "untrusted.h"
#include "words.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Run the handler for a validated call. Fills rec (executed, ok, code, message, data_json). */
static void execute(struct pipit_agent *a,
                    int32_t tool,
                    const json_t *args,
                    const char *segment,
                    const struct policy_clock *clock,
                    struct pipit_turn *turn,
                    struct pipit_call_record *rec,
                    json_t **data) {
    const char *name = a->ts->tools[tool].name;
    *data = NULL;
    for (size_t i = 0; i < a->n_handlers; i++) {
        if (a->handlers[i].tool != tool) {
            continue;
        }
        struct pipit_tool_output out;
        memset(&out, 0, sizeof(out));
        char *args_json =
            json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
        enum pipit_status st = a->handlers[i].fn(name, args_json != NULL ? args_json : "{}", &out,
                                                 a->handlers[i].user_data);
        free(args_json);
        rec->executed = true;
        out.code[sizeof(out.code) - 1] = '\0';
        out.message[sizeof(out.message) - 1] = '\0';
        out.data_json[sizeof(out.data_json) - 1] = '\0';
        if (st != PIPIT_OK) {
            rec->ok = false;
            pipit_format(rec->code, sizeof(rec->code), "handler_error");
            pipit_format(rec->message, sizeof(rec->message), "the %s handler failed: %s", name,
                         pipit_status_str(st));
            return;
        }
        rec->ok = out.ok;
        if (out.ok) {
            const char *text = out.data != NULL ? out.data : out.data_json;
            bool full = out.data == NULL && strlen(out.data_json) == sizeof(out.data_json) - 1;
            json_t *d = text[0] != '\0' ? json_loads(text, 0, NULL) : json_object();
            if (!json_is_object(d) || full) {
                /* cut or malformed data is a failure, never an empty success */
                json_decref(d);
                rec->ok = false;
                pipit_format(rec->code, sizeof(rec->code), "handler_error");
                if (full) {
                    pipit_format(rec->message, sizeof(rec->message),
                                 "the %s handler's data filled data_json (%zu bytes) and may be "
                                 "cut: use pipit_tool_output.data for longer data",
                                 name, sizeof(out.data_json) - 1);
                } else {
                    pipit_format(rec->message, sizeof(rec->message),
                                 "the %s handler's data is not a JSON object", name);
                }
                return;
            }
            *data = d;
        } else {
            pipit_format(rec->code, sizeof(rec->code), "%s",
                         out.code[0] != '\0' ? out.code : "failed");
            pipit_format(rec->message, sizeof(rec->message), "%s", out.message);
        }
        return;
    }
    if (a->dev != NULL) {
        struct device_result r;
        memset(&r, 0, sizeof(r));
        enum pipit_status st = a->dev->ops->call(a->dev->self, name, args, &r);
        if (st == PIPIT_OK || st == PIPIT_ERR_INVALID_ARGS) {
            rec->executed = true;
            rec->ok = st == PIPIT_OK && r.ok;
            if (rec->ok) {
                *data = r.data != NULL ? json_incref(r.data) : json_object();
            } else {
                pipit_format(rec->code, sizeof(rec->code), "%s", r.code);
                pipit_format(rec->message, sizeof(rec->message), "%s", r.message);
            }
            device_result_clear(&r);
            return;
        }
        device_result_clear(&r);
    }
    if (pipit_toolset_is_cloud(a->ts, (size_t)tool)) {
        /* delegation: nothing leaves the device unless an endpoint is configured. A pack's own
         * cloud tool (effect "cloud") need not have process_with_cloud_llm's arguments: the
         * question is then the person's own words */
        struct device_result r;
        memset(&r, 0, sizeof(r));
        if (pipit_cloud_configured(a->cloud)) {
            turn->cloud_requests++;
        }
        json_t *asked = NULL;
        if (json_object_get(args, "user_query_context") == NULL) {
            asked = json_deep_copy(args);
            json_object_set_new(asked, "user_query_context",
                                json_string(segment != NULL ? segment : ""));
        }
        cloud_tool_call(a->cloud, asked != NULL ? asked : args, policy_clock_remaining_ms(clock),
                        &a->cancel, &r, NULL);
        json_decref(asked);
        if (strcmp(r.code, CLOUD_CANCELLED) == 0) {
            turn->flags |= PIPIT_TURN_CANCELLED; /* Ctrl-C while the cloud was thinking */
        }
        rec->executed = true;
        rec->ok = r.ok;
        if (r.ok) {
            *data = r.data != NULL ? json_incref(r.data) : json_object();
        } else {
            pipit_format(rec->code, sizeof(rec->code), "%s", r.code);
            pipit_format(rec->message, sizeof(rec->message), "%s", r.message);
        }
        device_result_clear(&r);
        return;
    }
    /* nobody handles it */
    rec->executed = false;
    rec->ok = false;
    {
        pipit_format(rec->code, sizeof(rec->code), "no_handler");
        pipit_format(rec->message, sizeof(rec->message), "nothing on this device handles %s", name);
    }
}

#define RESULT_MAX_STRING 65536 /* bytes of one string in a tool's result data */

/* A tool's result is text from outside (a handler, a device, the cloud): data, never
 * instructions. Every string of it (data, message, code) is cleaned here, once, before the
 * sentence, the memory, the State-Tracker or the turn's record read it (untrusted.h). */
static void clean_result(struct pipit_call_record *rec, json_t **data) {
    if (*data != NULL) {
        json_t *c = untrusted_clean_json(*data, RESULT_MAX_STRING);
        json_decref(*data);
        *data = json_is_object(c) ? c : json_object();
        if (!json_is_object(c)) {
            json_decref(c);
        }
    }
    char tmp[sizeof(rec->message)];
    untrusted_clean_into(rec->message, tmp, sizeof(tmp), UNTRUSTED_ONE_LINE);
    memcpy(rec->message, tmp, sizeof(tmp));
    /* a code picks a failure template and is remembered: a plain name */
    size_t o = 0;
    for (size_t i = 0; rec->code[i] != '\0'; i++) {
        char ch = rec->code[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            ch == '_' || ch == '.' || ch == '-') {
            rec->code[o++] = ch;
        }
    }
    rec->code[o] = '\0';
    if (!rec->ok && o == 0) {
        pipit_format(rec->code, sizeof(rec->code), "failed");
    }
}

/* The failure code memory keeps: a custom handler's code only when the pack declares it for the
 * tool (a failure template of that name), else "failed": a handler's code is its own text and
 * would stay in the permanent prompt. pipit's devices and the cloud client use fixed codes. */
/* Whether the device's state differs from `snapshot` (the keys a call may change, read before
 * it ran); true when the state cannot be read or the snapshot holds no key. */
static bool state_changed(const struct pipit_agent *a, const json_t *snapshot) {
    json_t *after = a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    bool changed = after == NULL || json_object_size(snapshot) == 0;
    const char *key;
    json_t *was;
    json_object_foreach((json_t *)snapshot, key, was) {
        const json_t *is = json_object_get(after, key);
        changed = changed || is == NULL || !json_equal(was, (json_t *)is);
    }
    json_decref(after);
    return changed;
}

static bool has_handler(const struct pipit_agent *a, int32_t tool) {
    for (size_t i = 0; i < a->n_handlers; i++) {
        if (a->handlers[i].tool == tool) {
            return true;
        }
    }
    return false;
}

static const char *memory_code(const struct pipit_agent *a, int32_t tool, const char *code) {
    if (!has_handler(a, tool)) {
        return code;
    }
    const struct pipit_tool *t = &a->ts->tools[tool];
    for (size_t i = 0; i < t->n_failures; i++) {
        if (strcmp(t->failures[i].code, code) == 0 && strcmp(code, "*") != 0) {
            return code;
        }
    }
    return "failed";
}
/* The sentence for a request none of the tools does, in the harness's words: "I can't take a
 * photo: none of my tools does that, so I did nothing." (docs/agent.md). */
static char *no_tool_sentence(const struct pipit_agent *a, const struct turn_build *tb) {
    const char *seg = tb->segment != NULL ? tb->segment : "";
    size_t at = router_command_verb(a->router, seg);
    return render_no_tool_sentence(seg, at == ROUTER_NO_VERB ? NULL : seg + at);
}

/* The model's built-in undo on a segment that asks for a value to reach ("to" or "at" right
 * before a number: "set it to 20 so they don't overheat" had undone the last change on a new
 * user's hot tub): a value asked for is no reversal. A number that names the thing to undo
 * ("I didn't want the 7 o'clock alarm") is no such value. */
static bool undo_guessed(const char *segment) {
    return segment != NULL && agent_number_said_to(segment);
}

/* A call the harness did not run, for a reason: `code` and `message` say which; no data. */
static void not_run(struct pipit_call_record *rec, const char *code, const char *message) {
    rec->status = PIPIT_OK;
    rec->executed = false;
    rec->ok = false;
    pipit_format(rec->code, sizeof(rec->code), "%s", code);
    pipit_format(rec->message, sizeof(rec->message), "%s", message);
    if (rec->data_json == NULL) {
        rec->data_json = agent_strdup("{}");
    }
}

/* "is wifi on?" ... "ok turn it off": right after a question of one key, "it" (or "that") is
 * that key. `out` receives the segment with its first "it" / "that" as the key's words
 * ("ok turn wifi off"), for the rules that find a switch by name; false when no key was asked
 * about or the segment says no such pronoun. */
static bool
it_is_asked_key(const struct pipit_agent *a, const char *segment, char *out, size_t size) {
    if (a->asked_key[0] == '\0' || segment == NULL) {
        return false;
    }
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    for (size_t i = 0; i < n && n < GUARD_MAX_TOKENS; i++) {
        if (strcmp(t[i].w, "it") == 0 || strcmp(t[i].w, "that") == 0) {
            char key[sizeof(a->asked_key)];
            pipit_format(key, sizeof(key), "%s", a->asked_key);
            for (char *p = key; *p != '\0'; p++) {
                *p = *p == '_' ? ' ' : *p;
            }
            pipit_format(out, size, "%.*s%s%s", (int)t[i].start, segment, key, segment + t[i].end);
            return true;
        }
    }
    return false;
}

/* The model chose the grammar's "none of these tools" outcome (`none()`, docs/grammar.md): no
 * tool runs and the sentence says honestly that this tool set cannot do it. */
static void
model_none(const struct pipit_agent *a, struct turn_build *tb, struct pipit_call_record *rec) {
    char *s = no_tool_sentence(a, tb);
    not_run(rec, RENDER_NO_TOOL, "none of the tools does this");
    rec->args_json = rec->args_json != NULL ? rec->args_json : agent_strdup("{}");
    rec->sentence = s != NULL ? s : agent_strdup(render_no_action_sentence());
    agent_say(tb, rec->sentence);
}
/* A question's call is kept from acting (docs/agent.md, "A question never acts"): nothing runs,
 * and the sentence says so, with what the state says about the key the call would have set
 * when the question names exactly one of its keys ("did I leave the flash on?" -> "The flash
 * is on auto."; "is the passenger seat warm?" of a seat-heating call for either seat). */
static void keep_question(struct pipit_agent *a,
                          struct turn_build *tb,
                          struct pipit_call_record *rec,
                          int32_t tool) {
    tb->turn->flags |= PIPIT_TURN_QUESTION_KEPT;
    not_run(rec, "question", "a question does not act");
    /* and what the state says about the one key that call would have set, when the
     * question names it ("did I leave the flash on?" -> "The flash is on auto.") */
    char said[384] = "That sounded like a question, so I didn't change anything.";
    json_t *now =
        (size_t)tool < a->ts->n_tools && a->ask != NULL ? agent_undo_snapshot(a, tool) : NULL;
    const char *key, *named = NULL;
    json_t *v;
    size_t n_named = 0;
    json_object_foreach(now, key, v) {
        if (ask_names_key(a->ask, tb->segment, key)) {
            named = key; /* of several keys ("{seat}_seat_heat"), the one the question names */
            n_named++;
        }
    }
    char one[256];
    if (n_named == 1 &&
        ask_sentence(a->ask, named, json_object_get(now, named), ASK_NOW, one, sizeof(one))) {
        size_t n = strlen(said);
        pipit_format(said + n, sizeof(said) - n, " %s", one);
    }
    json_decref(now);
    rec->sentence = agent_strdup(said);
    agent_say(tb, rec->sentence);
}

static bool handle_call(struct pipit_agent *a,
                        struct turn_build *tb,
                        struct pipit_call_record *rec,
                        struct pipit_call *callp,
                        bool model,
                        const struct policy_clock *clock);
static bool
said_twice(struct pipit_agent *a, const struct turn_build *tb, const struct pipit_call *call);
static bool
choice_answered(struct pipit_agent *a, struct turn_build *tb, const struct pipit_call *call);
static bool named_key_answered(struct pipit_agent *a, struct turn_build *tb);
static bool said_count(struct pipit_agent *a,
                       struct turn_build *tb,
                       const char *name,
                       const struct policy_clock *clock);
static bool every_place(struct pipit_agent *a,
                        struct turn_build *tb,
                        const char *name,
                        const struct policy_clock *clock);

/* `said` with "already" after its first " is " or " are ", less a closing " now" ("The
 * pressure is 2.5 bar now." -> "The pressure is already 2.5 bar."); NULL when it has neither. */
static char *with_already(const char *said) {
    const char *is = strstr(said, " is ");
    is = is != NULL ? is : strstr(said, " are ");
    if (is == NULL) {
        return NULL;
    }
    size_t cut = (size_t)(is - said) + (is[2] == 's' ? 3 : 4);
    const char *rest = said + cut;
    size_t lr = strlen(rest);
    size_t keep = lr >= 5 && strcmp(rest + lr - 5, " now.") == 0 ? lr - 5 : lr;
    struct strbuf b = {0};
    strbuf_printf(&b, "%.*s already%.*s%s", (int)cut, said, (int)keep, rest, keep < lr ? "." : "");
    return strbuf_take(&b);
}

/* The sentence of a call that ran and changed nothing: the tool's own sentence with "already"
 * ("The flash is already off."), else the state's sentence of its one key with "already"
 * ("Zoomed out to 0.5x." -> "The zoom is already 0.5x."); NULL: keep the sentence. */
static char *already_sentence(struct pipit_agent *a, const char *sentence, const json_t *snap) {
    char *own = with_already(sentence);
    if (own != NULL || json_object_size(snap) != 1 || a->ask == NULL || a->dev == NULL) {
        return own;
    }
    const char *key = json_object_iter_key(json_object_iter((json_t *)snap));
    json_t *now = a->dev->ops->get_state(a->dev->self);
    char said[256];
    char *out = ask_sentence(a->ask, key, json_object_get(now, key), ASK_NOW, said, sizeof(said))
                    ? with_already(said)
                    : NULL;
    json_decref(now);
    return out;
}

/* "turn on HDR for the candles" -> set_grid(enabled=true): the person asked to switch a thing
 * the pack has nothing for (agent_unknown_thing()); the model's call to another tool is not
 * run, and the sentence says so. True when that was the case. */
static bool
unknown_thing(const struct pipit_agent *a, struct turn_build *tb, const struct pipit_call *call) {
    int32_t tool = pipit_toolset_find(a->ts, call->name);
    char thing[128];
    if (tool < 0 || tb->segment == NULL || pipit_toolset_is_cloud(a->ts, (size_t)tool) ||
        !agent_unknown_thing(a->ts, tb->segment, call->name, thing, sizeof(thing))) {
        return false;
    }
    tb->turn->flags |= PIPIT_TURN_UNKNOWN_THING;
    char *s = no_tool_sentence(a, tb);
    agent_say(tb, s != NULL ? s : render_no_action_sentence());
    free(s);
    return true;
}

/* `call` made the pack's first cloud tool with the person's words in its first free string
 * (its other required strings: an enum's first value, else "general knowledge"); false when the
 * pack has none that takes that. */
static bool cloud_call(const struct pipit_agent *a, const char *segment, struct pipit_call *call) {
    for (size_t i = 0; i < a->ts->n_tools; i++) {
        const struct pipit_tool *c = pipit_toolset_tool(a->ts, i);
        if (!pipit_toolset_is_cloud(a->ts, i) || c->params == NULL) {
            continue;
        }
        json_t *args = json_object();
        bool asked = false, whole = true;
        for (size_t j = 0; j < c->params->n_props; j++) {
            const struct pipit_schema_prop *p = &c->params->props[j];
            if (p->schema->type == PIPIT_SCHEMA_STRING && p->schema->n_enum > 0 &&
                p->schema->enum_str != NULL) {
                if (p->required) {
                    json_object_set_new(args, p->name, json_string(p->schema->enum_str[0]));
                }
            } else if (p->schema->type == PIPIT_SCHEMA_STRING && !asked) {
                json_object_set_new(args, p->name, json_string(segment));
                asked = true;
            } else if (p->schema->type == PIPIT_SCHEMA_STRING && p->required) {
                json_object_set_new(args, p->name, json_string("general knowledge"));
            } else if (p->required) {
                whole = false;
            }
        }
        if (asked && whole) {
            return agent_said_replace_call(call, c, args); /* takes args */
        }
        json_decref(args);
    }
    return false;
}

/* "should I use the flash at a wedding?" -> set_flash(on): the model acted on a question about
 * the world (agent_question_for_cloud()); the call becomes the cloud's (cloud_call()). A pack
 * with no cloud tool keeps the call from acting later (keep_question()). */
/* Whether the segment asks about the person's own things of the pack ("what's the status of my
 * ticket?", "what's its status?"): a possessive and a word of the tool set. Such a question is
 * the pack's to answer, not the cloud's. */
static bool asks_about_own(const struct pipit_agent *a, const char *segment) {
    static const char *const OWN[] = {"my", "its", "our", "mine", "ours"};
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n =
        segment != NULL ? words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS) : 0;
    /* "why is my water going cloudy?" asks for a reason: no state holds one */
    return agent_said_any(t, n, OWN, sizeof(OWN) / sizeof(OWN[0])) && !words_is(t, n, 0, "why") &&
           router_has_tool_word(a->router, segment);
}

/* The segment as the question tests read it: with its '?' back when the person asked it so
 * (the model reads the segment without it). */
static const char *asked_text(const struct turn_build *tb, char *buf, size_t size) {
    if (tb->segment == NULL || !tb->asked) {
        return tb->segment;
    }
    pipit_format(buf, size, "%s?", tb->segment);
    return buf;
}

static void open_question(struct pipit_agent *a, struct turn_build *tb, struct pipit_call *call) {
    int32_t tool = pipit_toolset_find(a->ts, call->name);
    bool compose = tool >= 0 && !pipit_toolset_is_cloud(a->ts, (size_t)tool) &&
                   agent_compose_request(a->ts, tb->segment);
    char q[ROUTER_MAX_SEGMENT + 2];
    if (tb->segment != NULL &&
        (compose || (!asks_about_own(a, tb->segment) &&
                     agent_question_for_cloud(a->ts, call, asked_text(tb, q, sizeof(q)),
                                              router_command_verb(a->router, tb->segment) !=
                                                  ROUTER_NO_VERB))) &&
        cloud_call(a, tb->segment, call)) {
        tb->turn->flags |= PIPIT_TURN_OPEN_QUESTION;
    }
}

/* Whether the segment says an off side itself ("don't turn off the wifi": the off call is
 * what it asks not to do). */
static bool says_off(const char *segment) {
    static const char *const OFF[] = {"off",  "disable", "deactivate", "stop",  "kill",
                                      "mute", "close",   "end",        "cancel"};
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n =
        segment != NULL ? words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS) : 0;
    return agent_said_any(t, n, OFF, sizeof(OFF) / sizeof(OFF[0]));
}

/* Whether every argument of `call` is a switch's off side (false, "off", "stop", "none",
 * "disabled", 0): "don't use the flash" -> set_flash(mode="off") is what was asked. */
static bool switches_off(const struct pipit_call *call) {
    static const char *const OFF[] = {"off", "stop", "none", "disabled", "disable", "no"};
    json_t *args = json_loads(call->args_json != NULL ? call->args_json : "{}", 0, NULL);
    const char *key;
    json_t *v;
    bool off = json_object_size(args) > 0;
    json_object_foreach(args, key, v) {
        bool this_off = json_is_false(v) || (json_is_number(v) && json_number_value(v) == 0);
        for (size_t k = 0; json_is_string(v) && k < sizeof(OFF) / sizeof(OFF[0]); k++) {
            this_off = this_off || strcasecmp(json_string_value(v), OFF[k]) == 0;
        }
        off = off && this_off;
    }
    json_decref(args);
    return off;
}

/* Whether the segment's "it" stands for what follows, not for something said before: "is it
 * bad to run every day", "is it normal for the fan to rattle", "is it true that ...": "is",
 * "was" or "isn't", "it", one or two words, then "to", "for", "that" or "if". */
static bool it_is_what_follows(const char *segment) {
    struct words_tok t[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, GUARD_MAX_TOKENS);
    static const char *const IS[] = {"is", "was", "isnt", "wasnt"};
    static const char *const THEN[] = {"to", "for", "that", "if"};
    for (size_t i = 0; i + 3 < n; i++) {
        if (strcmp(t[i + 1].w, "it") != 0 ||
            !words_in_list(t[i].w, IS, sizeof(IS) / sizeof(IS[0]))) {
            continue;
        }
        for (size_t k = i + 3; k <= i + 4 && k < n; k++) {
            if (words_in_list(t[k].w, THEN, sizeof(THEN) / sizeof(THEN[0]))) {
                return true;
            }
        }
    }
    return false;
}

/* Whether a social answer answers the segment: it asks after the agent ("how are things with
 * you?" -> "I'm good, thanks."). */
static bool asks_after_me(const char *segment, const char *text) {
    struct words_tok t[48];
    size_t n = words_tokenize(segment, strlen(segment), 0, t, 48);
    bool you = false;
    for (size_t i = 0; i < n; i++) {
        you = you || strcmp(t[i].w, "you") == 0 || strcmp(t[i].w, "your") == 0;
    }
    return you && smalltalk_is_social_reply(text);
}

/* The one state key of `state` the segment names (by the state questions' lexicon), or NULL
 * (none or several). Borrowed from `state`. */
static const char *one_named_key(struct pipit_agent *a, const char *segment, const json_t *state) {
    const char *named = NULL, *key;
    json_t *v;
    size_t n_named = 0;
    json_object_foreach((json_t *)state, key, v) {
        if (a->ask != NULL && ask_names_key(a->ask, segment, key)) {
            named = key;
            n_named++;
        }
    }
    return n_named == 1 ? named : NULL;
}

/* A refusal to a segment that turns off a key one argumentless tool clears ("kill the wake-up
 * coffee" -> "Sorry, I can't do that.": cancel_schedule). */
static bool key_off_for_refusal(struct pipit_agent *a,
                                const char *segment,
                                const char *text,
                                struct pipit_call *out) {
    if (a->dev == NULL || a->ask == NULL) {
        return false;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    const char *key = one_named_key(a, segment, state);
    memset(out, 0, sizeof(*out));
    bool made = key != NULL && strncasecmp(text, "sorry", 5) == 0 &&
                agent_key_turned_off(a->ts, -1, segment, key, out);
    /* "stop it" while something runs, answered in words: what runs stops */
    made = made || agent_stop_what_runs(a->ts, segment, state, out);
    json_decref(state);
    return made;
}

/* "cancel the 5 minute one" answered in words: the item described, by the tool that takes it
 * (agent_item_call()). */
static bool item_call_for_text(struct pipit_agent *a, const char *segment, struct pipit_call *out) {
    if (a->dev == NULL) {
        return false;
    }
    json_t *state = a->dev->ops->get_state(a->dev->self);
    memset(out, 0, sizeof(*out));
    bool made = agent_item_call(a->ts, segment, state, false, out);
    json_decref(state);
    return made;
}

/* Handle one decoded step output. Returns false when the turn must stop (breaker). */
bool agent_handle_output(struct pipit_agent *a,
                         struct turn_build *tb,
                         const char *text,
                         const struct policy_clock *clock) {
    struct pipit_call named;
    if (!pipit_call_detect(a->syntax, text) && tb->segment != NULL &&
        (agent_value_call_for_refusal(a->ts, tb->segment, text, &named) ||
         key_off_for_refusal(a, tb->segment, text, &named) ||
         agent_time_call(a->ts, tb->segment, &named) ||
         agent_dimension_call(a->ts, tb->segment, &named) ||
         agent_frame_call(a->ts, tb->segment, &named) ||
         item_call_for_text(a, tb->segment, &named) ||
         (!tb->asked && agent_example_words_call(a->ts, tb->segment, &named)))) {
        /* "Sorry, I can't do that." to "sports mode - the game is starting": the person said a
         * value only one tool takes, and nothing else; that tool is called. "alarm for six in
         * the evening" -> "Sorry, I can't do that.": the time said, in the tool the segment
         * names that takes one */
        tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
        struct pipit_call_record *rec = agent_new_record(tb);
        if (rec == NULL) {
            pipit_call_clear(&named);
            return false;
        }
        char name[sizeof(named.name)];
        memcpy(name, named.name, sizeof(name));
        if (!handle_call(a, tb, rec, &named, true, clock)) {
            return false;
        }
        return every_place(a, tb, name, clock); /* "all the lights off" */
    }
    if (!pipit_call_detect(a->syntax, text) && tb->segment != NULL && a->dev != NULL) {
        /* "what's its status?" -> "I'm good, thanks.": a question about an item said before,
         * in a word only one query's name has, is that query's (agent_named.h) */
        json_t *state = a->dev->ops->get_state(a->dev->self);
        char *mem = state != NULL ? memory_text(&a->mem) : NULL;
        bool query = mem != NULL && agent_query_asked(a->ts, tb->segment, mem, state, &named);
        free(mem);
        json_decref(state);
        if (query) {
            tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
            struct pipit_call_record *rec = agent_new_record(tb);
            if (rec == NULL) {
                pipit_call_clear(&named);
                return false;
            }
            return handle_call(a, tb, rec, &named, false, clock);
        }
    }
    struct pipit_call asked;
    char q[ROUTER_MAX_SEGMENT + 2];
    memset(&asked, 0, sizeof(asked));
    bool empty_answer = !pipit_call_detect(a->syntax, text) && tb->segment != NULL &&
                        (render_is_acknowledgement(text) || smalltalk_is_social_reply(text) ||
                         strncasecmp(text, "sorry", 5) == 0 || strncasecmp(text, "okay", 4) == 0);
    if (empty_answer && named_key_answered(a, tb)) {
        return true; /* "did I leave the kitchen light on" -> "Okay.": the light as it is */
    }
    if (empty_answer && router_command_verb(a->router, tb->segment) == ROUTER_NO_VERB &&
        (!router_undo_anaphor(tb->segment) || it_is_what_follows(tb->segment)) &&
        !asks_after_me(tb->segment, text) && !asks_about_own(a, tb->segment) &&
        agent_asks_the_world(asked_text(tb, q, sizeof(q))) && cloud_call(a, tb->segment, &asked)) {
        /* "what's the best way to shoot fireworks?" -> "Okay, I'm ready when you are.": no
         * answer; a question about the world is the cloud tool's (not one that points back at
         * something said: "how's the new one doing?" asks about an item, a tool's question) */
        tb->turn->flags |= PIPIT_TURN_OPEN_QUESTION;
        struct pipit_call_record *rec = agent_new_record(tb);
        if (rec == NULL) {
            pipit_call_clear(&asked);
            return false;
        }
        return handle_call(a, tb, rec, &asked, false, clock);
    }
    if (!pipit_call_detect(a->syntax, text)) {
        /* plain text: never let it narrate an action no tool performed */
        tb->turn->flags |= PIPIT_TURN_PLAIN_TEXT;
        if (render_claims_action(text, a->ts) ||
            (render_is_acknowledgement(text) && tb->segment != NULL &&
             router_command_verb(a->router, tb->segment) != ROUTER_NO_VERB &&
             !smalltalk_is_question(tb->segment))) {
            /* "start vacuuming" -> "Okay.": no tool ran, so nothing was done */
            tb->turn->flags |= PIPIT_TURN_NARRATION_CAUGHT;
            agent_say(tb, render_no_action_sentence());
        } else if (render_is_garbled(text, a->ts)) {
            /* pieces of a call in words: never shown, never claimed as an answer */
            tb->turn->flags |= PIPIT_TURN_GARBLED;
            agent_say(tb, "Sorry, I didn't understand that, so I did nothing.");
        } else if (tb->segment != NULL && smalltalk_kinds(a->router, tb->segment) == 0 &&
                   ((smalltalk_is_social_reply(text) &&
                     (smalltalk_is_question(tb->segment) ||
                      router_command_verb(a->router, tb->segment) != ROUTER_NO_VERB)) ||
                    (render_is_acknowledgement(text) && smalltalk_is_question(tb->segment)))) {
            /* "what's the volume?" -> "Glad it works.", "take a selfie" -> "Glad it works.", "is
             * it on now?" -> "Okay.": a formula is no answer to a question, nor to a request */
            tb->turn->flags |= PIPIT_TURN_OFF_TOPIC;
            agent_say(tb, smalltalk_is_question(tb->segment) ? "Sorry, I can't answer that here."
                                                             : "Sorry, I can't do that.");
        } else {
            /* trim surrounding whitespace */
            while (*text == ' ' || *text == '\n') {
                text++;
            }
            /* a claim about the state that the state contradicts is replaced by the truth */
            json_t *state = a->ask != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
            int n_fixed = 0;
            char *fixed = state != NULL ? ask_correct(a->ask, text, state, &n_fixed) : NULL;
            json_decref(state);
            if (fixed != NULL) {
                tb->turn->flags |= PIPIT_TURN_STATE_CORRECTED;
                agent_say(tb, fixed);
                free(fixed);
            } else {
                agent_say(tb, text[0] != '\0' ? text : "Sorry, I didn't get that.");
            }
        }
        return true;
    }
    struct pipit_call call;
    struct pipit_error err;
    bool parsed = pipit_call_parse(a->syntax, text, &call, &err) == PIPIT_OK;
    if (parsed && unknown_thing(a, tb, &call)) {
        pipit_call_clear(&call);
        return true;
    }
    if (parsed && agent_negated_request(tb->segment) &&
        (!switches_off(&call) || says_off(tb->segment)) &&
        (size_t)pipit_toolset_find(a->calls_ts, call.name) < a->ts->n_tools) {
        /* "don't take a photo yet" -> take_photo(): asked not to, nothing runs */
        tb->turn->flags |= PIPIT_TURN_NEGATED;
        agent_say(tb, "Okay, I won't.");
        pipit_call_clear(&call);
        return true;
    }
    if (parsed && said_twice(a, tb, &call)) {
        /* "selfie time, flip it around" -> front, then back: the first segment did it */
        tb->turn->flags |= PIPIT_TURN_SAID_TWICE;
        pipit_call_clear(&call);
        return true;
    }
    int32_t called = parsed ? pipit_toolset_find(a->ts, call.name) : -1;
    if (called >= 0 && pipit_toolset_is_cloud(a->ts, (size_t)called) && named_key_answered(a, tb)) {
        pipit_call_clear(&call); /* "did I leave the kitchen light on" -> not the cloud's */
        return true;
    }
    if (parsed && choice_answered(a, tb, &call)) {
        pipit_call_clear(&call); /* "kitchen lights on or off?" -> the light as it is */
        return true;
    }
    if (parsed && tb->segment != NULL && !asks_about_own(a, tb->segment) &&
        agent_question_for_cloud(a->ts, &call, tb->segment,
                                 router_command_verb(a->router, tb->segment) != ROUTER_NO_VERB) &&
        named_key_answered(a, tb)) {
        pipit_call_clear(&call); /* "did I leave the kitchen light on" -> switch_light(on) */
        return true;
    }
    if (parsed) {
        open_question(a, tb, &call);
    }
    struct pipit_call_record *rec = agent_new_record(tb);
    if (rec == NULL) {
        if (parsed) {
            pipit_call_clear(&call);
        }
        return false;
    }
    if (!parsed) {
        rec->status = PIPIT_ERR_PARSE;
        rec->args_json = agent_strdup("");
        rec->data_json = agent_strdup("{}");
        pipit_format(rec->code, sizeof(rec->code), "parse_error");
        pipit_format(rec->message, sizeof(rec->message), "%s", err.text);
        rec->sentence = agent_strdup("I couldn't understand that as a command, so I did nothing.");
        agent_say(tb, rec->sentence);
        return true;
    }
    char name[sizeof(call.name)];
    memcpy(name, call.name, sizeof(name));
    if (!handle_call(a, tb, rec, &call, true, clock)) {
        return false;
    }
    return every_place(a, tb, name, clock) && said_count(a, tb, name, clock);
}

/* "turn off all the lights": the model's call acts on one place (the bedroom); the person
 * asked for every one. When the segment says "all", "every", "each" or "both" and, at most
 * four words on, a plural that is the word after a pack effect's place in its key ("lights"
 * for "{room}_light"), says
 * none of the place argument's values, and the model's call of that tool ran, the same call
 * runs for every other value of the place argument, one sentence each. Returns false when the
 * turn must stop (breaker). */
/* Whether `w` is the plural of the last word of a declared name of a key effect key `e` picks
 * ("burners" of "front left burner" for "{zone}_zone"). */
static bool
names_plural(const struct pipit_toolset *ts, const struct pipit_effect_key *e, const char *w) {
    const struct pipit_pack *pack = pipit_toolset_pack(ts);
    size_t lw = strlen(w), ls = e->suffix != NULL ? strlen(e->suffix) : 0;
    if (pack == NULL || e->key_arg == NULL || lw < 4 || w[lw - 1] != 's') {
        return false;
    }
    for (size_t k = 0; k < pack->n_keys; k++) {
        const char *key = pack->keys[k].key, *names = pack->keys[k].words.names;
        size_t lk = strlen(key);
        if (names == NULL || lk <= e->prefix_len + ls || strncmp(key, e->key, e->prefix_len) != 0 ||
            strcmp(key + lk - ls, e->suffix) != 0) {
            continue;
        }
        for (const char *p = names; *p != '\0';) {
            size_t ln = strcspn(p, "|");
            const char *last = p + ln;
            while (last > p && last[-1] != ' ') {
                last--;
            }
            if ((size_t)(p + ln - last) + 1 == lw && strncmp(last, w, lw - 1) == 0) {
                return true;
            }
            p += ln + (p[ln] == '|');
        }
    }
    return false;
}

/* Whether `rec` (the turn's newest record, not run yet) sets what an earlier call of this turn
 * already set: the same tool with the same arguments, run and succeeded, a setting (its undo
 * restores keys) rather than an action ("take a photo and another photo" runs twice). */
static bool repeats_this_turn(const struct pipit_agent *a,
                              const struct turn_build *tb,
                              int32_t tool,
                              const struct pipit_call_record *rec) {
    if (tool < 0 || (size_t)tool >= a->ts->n_tools || rec->args_json == NULL ||
        pipit_toolset_undo(a->ts, (size_t)tool, NULL, NULL) != PIPIT_UNDO_KEYS) {
        return false;
    }
    json_t *mine = json_loads(rec->args_json, 0, NULL);
    bool same = false;
    for (size_t i = 0; mine != NULL && i + 1 < tb->turn->n_calls && !same; i++) {
        const struct pipit_call_record *c = &tb->turn->calls[i];
        if (!c->executed || !c->ok || strcmp(c->tool, rec->tool) != 0 || c->args_json == NULL) {
            continue;
        }
        json_t *theirs = json_loads(c->args_json, 0, NULL);
        same = theirs != NULL && json_equal(mine, theirs);
        json_decref(theirs);
    }
    json_decref(mine);
    return same;
}

/* "take two shots", "two espressos please": a count of 2 to 5 said right before a plural
 * (not a unit: "two minutes" is a number's), for a tool that takes no number, runs the model's
 * call that many times in all, one sentence each. True unless the turn must stop. */
static bool said_count(struct pipit_agent *a,
                       struct turn_build *tb,
                       const char *name,
                       const struct policy_clock *clock) {
    static const char *const UNITS[] = {
        "seconds", "secs",  "minutes", "mins",    "hours",  "days",   "degrees", "percent",
        "times",   "steps", "stops",   "notches", "levels", "points", "things",  "ones"};
    static const char *const COUNTS[] = {"two", "three", "four", "five"};
    /* words that end in s and are no plural ("plus three, it's so shady": "its"), and words
     * before a number that make it a value, not a count ("exposure plus three") */
    static const char *const NOT_PLURAL[] = {
        "its",   "is",    "was",  "has",   "does",   "this",   "yes",   "us",
        "plus",  "thus",  "as",   "his",   "hers",   "ours",   "yours", "theirs",
        "whats", "thats", "lets", "heres", "theres", "wheres", "less",  "always"};
    static const char *const VALUE_BEFORE[] = {"plus",  "minus",  "to",   "at",   "by",    "of",
                                               "level", "number", "lane", "page", "track", "step"};
    int32_t tool = pipit_toolset_find(a->ts, name);
    const struct pipit_call_record *made =
        tb->turn->n_calls > 0 ? &tb->turn->calls[tb->turn->n_calls - 1] : NULL;
    if (tool < 0 || (size_t)tool >= a->ts->n_tools || tb->segment == NULL || made == NULL ||
        !made->executed || !made->ok || strcmp(made->tool, name) != 0 ||
        pipit_toolset_is_cloud(a->ts, (size_t)tool)) {
        return true;
    }
    const struct pipit_tool *t = pipit_toolset_tool(a->ts, (size_t)tool);
    for (size_t j = 0; t->params != NULL && j < t->params->n_props; j++) {
        enum pipit_schema_type ty = t->params->props[j].schema->type;
        if (ty == PIPIT_SCHEMA_NUMBER || ty == PIPIT_SCHEMA_INTEGER) {
            return true; /* "two minutes": the number's */
        }
    }
    struct words_tok tok[48];
    size_t n = words_tokenize(tb->segment, strlen(tb->segment), 0, tok, 48);
    int count = 0;
    for (size_t i = 0; i + 1 < n && count == 0; i++) {
        int c = 0;
        for (size_t k = 0; k < sizeof(COUNTS) / sizeof(COUNTS[0]); k++) {
            c = strcmp(tok[i].w, COUNTS[k]) == 0 ? (int)k + 2 : c;
        }
        if (c == 0 && tok[i].w[0] >= '2' && tok[i].w[0] <= '5' && tok[i].w[1] == '\0') {
            c = tok[i].w[0] - '0';
        }
        size_t l = strlen(tok[i + 1].w);
        bool value = i > 0 && words_in_list(tok[i - 1].w, VALUE_BEFORE,
                                            sizeof(VALUE_BEFORE) / sizeof(VALUE_BEFORE[0]));
        if (c >= 2 && strcmp(tok[i + 1].w, "times") == 0) {
            count = c; /* "ring the bell three times" */
        } else if (c >= 2 && !value && l >= 3 && tok[i + 1].w[l - 1] == 's' &&
                   tok[i + 1].w[l - 2] != 's' &&
                   !words_in_list(tok[i + 1].w, UNITS, sizeof(UNITS) / sizeof(UNITS[0])) &&
                   !words_in_list(tok[i + 1].w, NOT_PLURAL,
                                  sizeof(NOT_PLURAL) / sizeof(NOT_PLURAL[0]))) {
            count = c;
        }
    }
    for (size_t i = 0; i < n && count == 0; i++) {
        count = strcmp(tok[i].w, "twice") == 0 ? 2 : strcmp(tok[i].w, "thrice") == 0 ? 3 : 0;
    }
    bool go = true;
    char *args = count > 1 && made->args_json != NULL ? agent_strdup(made->args_json) : NULL;
    for (int k = 1; args != NULL && go && k < count; k++) {
        struct pipit_call next = {0};
        pipit_format(next.name, sizeof(next.name), "%s", name);
        next.args_json = agent_strdup(args);
        if (next.args_json != NULL) {
            go = agent_handle_call(a, tb, &next, clock);
        }
        pipit_call_clear(&next);
    }
    free(args);
    return go;
}

static bool every_place(struct pipit_agent *a,
                        struct turn_build *tb,
                        const char *name,
                        const struct policy_clock *clock) {
    int32_t tool = pipit_toolset_find(a->ts, name);
    const struct pipit_tool_pack *tp =
        tool >= 0 ? pipit_toolset_tool_pack(a->ts, (size_t)tool) : NULL;
    const struct pipit_call_record *made =
        tb->turn->n_calls > 0 ? &tb->turn->calls[tb->turn->n_calls - 1] : NULL;
    if (tp == NULL || tb->segment == NULL || made == NULL || !made->executed ||
        strcmp(made->tool, name) != 0) {
        return true;
    }
    struct words_tok tok[48];
    size_t n = words_tokenize(tb->segment, strlen(tb->segment), 0, tok, 48);
    /* "all", "every", "each" or "both" among the four words before token i ("all of the
     * lights"; "roll the windows down all the way" says no "all" of the windows) */
    bool all = false, quantified[48] = {false};
    for (size_t i = 0; i < n; i++) {
        for (size_t k = i > 4 ? i - 4 : 0; k < i; k++) {
            quantified[i] = quantified[i] || strcmp(tok[k].w, "all") == 0 ||
                            strcmp(tok[k].w, "every") == 0 || strcmp(tok[k].w, "each") == 0 ||
                            strcmp(tok[k].w, "both") == 0;
        }
        all = all || quantified[i];
    }
    const struct pipit_effect_key *ek = NULL;
    for (size_t k = 0; all && ek == NULL && k < tp->n_set + (tp->has_step ? 1 : 0); k++) {
        const struct pipit_effect_key *e = k < tp->n_set ? &tp->set[k].key : &tp->step.key;
        const char *sfx = e->key_arg != NULL && e->suffix != NULL ? e->suffix : "";
        sfx += strspn(sfx, "_ ");
        size_t ls = strlen(sfx);
        for (size_t i = 0; ls >= 3 && i < n && ek == NULL; i++) {
            size_t lw = strlen(tok[i].w);
            if (!quantified[i]) {
                continue;
            }
            if ((lw == ls + 1 && strncmp(tok[i].w, sfx, ls) == 0 && tok[i].w[ls] == 's') ||
                (strcmp(tok[i].w, "every") != 0 && lw == ls && strcmp(tok[i].w, sfx) == 0 &&
                 i > 0 &&
                 (strcmp(tok[i - 1].w, "every") == 0 || strcmp(tok[i - 1].w, "each") == 0)) ||
                names_plural(a->ts, e, tok[i].w)) {
                ek = e; /* "lights", or "every light", or a declared name's "burners" */
            }
        }
    }
    /* "turn everything off": every place of the tool's one per-place key, no noun needed */
    bool everything = false;
    for (size_t i = 0; i < n; i++) {
        everything = everything || strcmp(tok[i].w, "everything") == 0;
    }
    for (size_t k = 0; everything && ek == NULL && k < tp->n_set + (tp->has_step ? 1 : 0); k++) {
        const struct pipit_effect_key *e = k < tp->n_set ? &tp->set[k].key : &tp->step.key;
        ek = e->key_arg != NULL ? e : NULL;
    }
    const struct pipit_tool *t = pipit_toolset_tool(a->ts, (size_t)tool);
    const struct pipit_schema *sel = NULL;
    for (size_t j = 0; ek != NULL && j < t->params->n_props; j++) {
        sel = strcmp(t->params->props[j].name, ek->key_arg) == 0 ? t->params->props[j].schema : sel;
    }
    json_t *args = sel != NULL && sel->n_enum > 1 ? json_loads(made->args_json, 0, NULL) : NULL;
    const char *done = json_string_value(json_object_get(args, ek != NULL ? ek->key_arg : ""));
    for (size_t v = 0; done != NULL && v < sel->n_enum; v++) {
        char said[WORDS_CAP * 2];
        pipit_format(said, sizeof(said), "%s", sel->enum_str[v]);
        for (char *p = said; *p != '\0'; p++) {
            *p = *p == '_' ? ' ' : *p;
        }
        for (size_t i = 0; i < n; i++) {
            if (words_match(tok, n, i, said) > 0) {
                done = NULL; /* "all the lights in the kitchen": a place is said */
            }
        }
    }
    char first[WORDS_CAP * 2] = "";
    if (done != NULL) {
        pipit_format(first, sizeof(first), "%s", done); /* args changes below */
    }
    bool go = true;
    for (size_t v = 0; done != NULL && go && v < sel->n_enum; v++) {
        if (strcmp(sel->enum_str[v], first) == 0) {
            continue;
        }
        json_object_set_new(args, ek->key_arg, json_string(sel->enum_str[v]));
        struct pipit_call next = {0};
        pipit_format(next.name, sizeof(next.name), "%s", name);
        next.args_json =
            json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
        if (next.args_json != NULL) {
            go = agent_handle_call(a, tb, &next, clock);
        }
        pipit_call_clear(&next);
    }
    json_decref(args);
    return go;
}

bool agent_handle_call(struct pipit_agent *a,
                       struct turn_build *tb,
                       const struct pipit_call *made,
                       const struct policy_clock *clock) {
    struct pipit_call_record *rec = agent_new_record(tb);
    if (rec == NULL) {
        return false;
    }
    struct pipit_call call;
    memcpy(call.name, made->name, sizeof(call.name));
    call.args_json = agent_strdup(made->args_json != NULL ? made->args_json : "{}");
    if (call.args_json == NULL) {
        rec->status = PIPIT_ERR_NOMEM;
        rec->args_json = agent_strdup("");
        rec->data_json = agent_strdup("{}");
        return false;
    }
    return handle_call(a, tb, rec, &call, false, clock);
}

/* The last action's arguments for agent_carry_selector(), with the place it changed when it
 * took none ("switch to the relax scene" changed the living room's keys: "a touch brighter in
 * there" is about the living room). For each argument of `tool` that picks its keys
 * ("{room}_brightness"), the one value whose keys the newest logged action changed, when it
 * changed keys of one value only. A new reference, or NULL. */
static json_t *last_place(struct pipit_agent *a, int32_t tool) {
    const struct pipit_tool_pack *tp = tool >= 0 && (size_t)tool < a->ts->n_tools
                                           ? pipit_toolset_tool_pack(a->ts, (size_t)tool)
                                           : NULL;
    /* "is the kitchen light on?" ... "turn it on then": the key asked about since the last
     * action is the newer referent; its place when this tool's key per place is of its kind */
    for (size_t k = 0; tp != NULL && a->asked_key[0] != '\0' && k <= tp->n_set; k++) {
        const struct pipit_effect_key *ek = k < tp->n_set  ? &tp->set[k].key
                                            : tp->has_step ? &tp->step.key
                                                           : NULL;
        if (ek == NULL || ek->key_arg == NULL || ek->suffix == NULL) {
            continue;
        }
        size_t lk = strlen(a->asked_key), ls = strlen(ek->suffix);
        if (lk <= ek->prefix_len + ls || strncmp(a->asked_key, ek->key, ek->prefix_len) != 0 ||
            strcmp(a->asked_key + lk - ls, ek->suffix) != 0) {
            continue;
        }
        char place[64];
        pipit_format(place, sizeof(place), "%.*s", (int)(lk - ek->prefix_len - ls),
                     a->asked_key + ek->prefix_len);
        json_t *asked = json_object();
        json_object_set_new(asked, ek->key_arg, json_string(place));
        return asked;
    }
    json_t *out = a->last_args != NULL ? json_deep_copy(a->last_args) : json_object();
    const struct action_entry *e = a->log_n > 0 ? &a->log[a->log_n - 1] : NULL;
    bool placed = false; /* only a tool whose keys a place picks reads the state */
    for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
        placed = placed || tp->set[k].key.key_arg != NULL;
    }
    placed = placed || (tp != NULL && tp->has_step && tp->step.key.key_arg != NULL);
    if (!placed || e == NULL || e->kind != PIPIT_UNDO_KEYS || a->dev == NULL ||
        (a->last_tool >= 0 && e->tool != a->last_tool)) {
        return out;
    }
    json_t *now = a->dev->ops->get_state(a->dev->self);
    for (size_t k = 0; k <= tp->n_set; k++) {
        const struct pipit_effect_key *ek = k < tp->n_set  ? &tp->set[k].key
                                            : tp->has_step ? &tp->step.key
                                                           : NULL;
        if (ek == NULL || ek->key_arg == NULL || json_object_get(out, ek->key_arg) != NULL) {
            continue;
        }
        const char *key, *place = NULL;
        json_t *before;
        bool one = true;
        size_t ls = strlen(ek->suffix);
        json_object_foreach(e->snapshot, key, before) {
            size_t lk = strlen(key);
            if (json_equal(before, json_object_get(now, key)) || lk <= ek->prefix_len + ls ||
                strncmp(key, ek->key, ek->prefix_len) != 0 ||
                strcmp(key + lk - ls, ek->suffix) != 0) {
                continue;
            }
            char value[64];
            pipit_format(value, sizeof(value), "%.*s", (int)(lk - ek->prefix_len - ls),
                         key + ek->prefix_len);
            one = one && (place == NULL || strcmp(place, value) == 0);
            if (place == NULL) {
                json_object_set_new(out, ek->key_arg, json_string(value));
                place = json_string_value(json_object_get(out, ek->key_arg));
            }
        }
        if (!one) {
            json_object_del(out, ek->key_arg); /* the scene changed two rooms: no place */
        }
    }
    json_decref(now);
    return out;
}

/* Whether a value of `v` is in the segment's words: a string said, a number written, a
 * boolean's on/off word. */
static bool
value_said(const json_t *v, const char *segment, const struct words_tok *tok, size_t n) {
    static const char *const SWITCH_WORDS[] = {"on",      "off",      "enable", "disable",
                                               "enabled", "disabled", "yes",    "no"};
    if (json_is_string(v)) {
        return agent_said_phrase(tok, n, json_string_value(v));
    }
    if (json_is_boolean(v)) {
        return agent_said_any(tok, n, SWITCH_WORDS, sizeof(SWITCH_WORDS) / sizeof(SWITCH_WORDS[0]));
    }
    double out[2], raw[2];
    for (size_t i = 0; i < n; i++) {
        int w = 0;
        if (words_number_value(tok[i].w, &w)) {
            return true;
        }
    }
    return agent_numbers_written(segment, 0, out, raw, 2) > 0;
}

/* Whether the model's call for a later segment goes back on what an earlier segment of this
 * turn did, naming none of its values: it asks a switch of that tool for the value the earlier
 * call changed it from (the action log's snapshot), and the segment says none of this call's
 * values ("selfie time, flip it around" -> switch_camera(front), then switch_camera(back)). A
 * value said ("front camera, then flip back") keeps it; so does a call that moves on ("focus on
 * the egg, lower left"). */
static bool
said_twice(struct pipit_agent *a, const struct turn_build *tb, const struct pipit_call *call) {
    int32_t tool = pipit_toolset_find(a->calls_ts, call->name);
    if (tb->segment == NULL || tool < 0 || (size_t)tool >= a->ts->n_tools) {
        return false;
    }
    json_t *args = json_loads(call->args_json, 0, NULL);
    bool other = false;
    for (int32_t i = 0; args != NULL && i < a->log_n && !other; i++) {
        const struct action_entry *e = &a->log[i];
        other = e->utt == a->utt_seq && e->tool == tool && e->kind == PIPIT_UNDO_KEYS &&
                agent_switch_asks_current(a->ts, tool, args, e->snapshot);
    }
    struct words_tok tok[GUARD_MAX_TOKENS];
    size_t n = words_tokenize(tb->segment, strlen(tb->segment), 0, tok, GUARD_MAX_TOKENS);
    const char *name;
    json_t *v;
    json_object_foreach(other ? args : NULL, name, v) {
        if (value_said(v, tb->segment, tok, n)) {
            other = false;
            break;
        }
    }
    json_decref(args);
    return other;
}

/* A question about the world by its words that names one state key by one of its names ("did
 * I leave the kitchen light on", "what colour are the kitchen lights"): the key's state is said
 * (flag state_answer) instead of the cloud's call. False when it names none or several. */
static bool named_key_answered(struct pipit_agent *a, struct turn_build *tb) {
    if (a->ask == NULL || a->dev == NULL || tb->segment == NULL ||
        !agent_asks_about_state(tb->segment) ||
        router_command_verb(a->router, tb->segment) != ROUTER_NO_VERB) {
        return false;
    }
    /* the key the question's own clause names: "is it going to rain tomorrow? wondering if I
     * can hang the washing out" names none ("washing" is in the clause after it) */
    char clause[ROUTER_MAX_SEGMENT];
    size_t q = strcspn(tb->segment, "?");
    pipit_format(clause, sizeof(clause), "%.*s", (int)q, tb->segment);
    json_t *state = a->dev->ops->get_state(a->dev->self);
    char said[512];
    bool answered = ask_say_named_key(a->ask, clause, state, said, sizeof(said)) > 0;
    json_decref(state);
    if (answered) {
        tb->turn->flags |= PIPIT_TURN_STATE_ANSWER;
        agent_say(tb, said);
    }
    return answered;
}

/* A question that offers both sides of a state ("kitchen lights on or off?") answered by the
 * model with a call: the keys that call would set (a per-place key at the call's place) are
 * said as they are, and nothing runs. False when the segment offers no choice or no key of the
 * call has a sentence. */
static bool
choice_answered(struct pipit_agent *a, struct turn_build *tb, const struct pipit_call *call) {
    int32_t tool = pipit_toolset_find(a->calls_ts, call->name);
    if (a->ask == NULL || a->dev == NULL || tool < 0 || (size_t)tool >= a->ts->n_tools ||
        !agent_offers_both_sides(tb->segment)) {
        return false;
    }
    const struct pipit_tool_pack *tp = pipit_toolset_tool_pack(a->ts, (size_t)tool);
    json_t *args = json_loads(call->args_json, 0, NULL);
    json_t *state = a->dev->ops->get_state(a->dev->self);
    struct strbuf out = {0};
    for (size_t k = 0; tp != NULL && k < tp->n_set; k++) {
        const struct pipit_effect_key *ek = &tp->set[k].key;
        char key[128], said[256];
        const char *place =
            ek->key_arg != NULL ? json_string_value(json_object_get(args, ek->key_arg)) : NULL;
        if (ek->key_arg != NULL && place == NULL) {
            continue;
        }
        if (ek->key_arg != NULL) {
            pipit_format(key, sizeof(key), "%.*s%s%s", (int)ek->prefix_len, ek->key, place,
                         ek->suffix);
        } else {
            pipit_format(key, sizeof(key), "%s", ek->key);
        }
        json_t *v = json_object_get(state, key);
        if (v != NULL && ask_sentence(a->ask, key, v, ASK_NOW, said, sizeof(said))) {
            strbuf_printf(&out, "%s%s", out.len > 0 ? " " : "", said);
        }
    }
    json_decref(state);
    json_decref(args);
    bool answered = out.len > 0 && !out.failed;
    if (answered) {
        tb->turn->flags |= PIPIT_TURN_STATE_ANSWER;
        agent_say(tb, out.data);
    }
    strbuf_free(&out);
    return answered;
}

/* A parsed call, from the model (`model`: the person's words guard its arguments) or from the
 * harness (a follow-up of the last action). Validated, executed, said and remembered; `call`
 * is cleared. Returns false when the turn must stop (breaker). */
static bool handle_call(struct pipit_agent *a,
                        struct turn_build *tb,
                        struct pipit_call_record *rec,
                        struct pipit_call *callp,
                        bool model,
                        const struct policy_clock *clock) {
    struct pipit_call call = *callp;
    memset(callp, 0, sizeof(*callp));
    pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
    /* the pack's tools keep their indices in calls_ts; the built-in undo comes after them */
    int32_t tool = pipit_toolset_find(a->calls_ts, call.name);
    int32_t like = model && tool >= 0 && (size_t)tool < a->ts->n_tools &&
                           pipit_toolset_is_cloud(a->ts, (size_t)tool)
                       ? agent_question_like_example(a->ts, tb->segment)
                       : -1;
    if (like >= 0 &&
        agent_said_replace_call(&call, pipit_toolset_tool(a->ts, (size_t)like), json_object())) {
        /* "any unread texts?" -> the cloud: the pack's "any new texts?" is read_messages' */
        tool = like;
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
        tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
    }
    char named_it[ROUTER_MAX_SEGMENT + 64];
    if (model && (agent_verb_pair_tool(a->ts, tool, tb->segment, &call) ||
                  (it_is_asked_key(a, tb->segment, named_it, sizeof(named_it)) &&
                   (agent_choose_tool_by_value(a->ts, tool, named_it, &call) ||
                    agent_choose_tool_by_value_over_cloud(a->ts, tool, named_it, &call))) ||
                  agent_choose_tool_by_value(a->ts, tool, tb->segment, &call) ||
                  agent_choose_extreme_value(a->ts, tool, tb->segment, &call) ||
                  agent_choose_tool_by_number(a->ts, tool, tb->segment, &call) ||
                  agent_restore_time_span(a->ts, tool, tb->segment, &call) ||
                  agent_choose_tool_by_verb(a->ts, tool, tb->segment, &call) ||
                  agent_choose_tool_by_unknown_value(a->ts, tool, tb->segment, &call) ||
                  agent_frame_choose_tool(a->ts, tool, tb->segment, &call) ||
                  agent_choose_stop_tool(a->ts, tool, tb->segment, &call) ||
                  agent_restore_dimension_step(a->ts, tool, tb->segment, &call) ||
                  agent_restore_step_setting(a->ts, tool, tb->segment, &call) ||
                  agent_restore_setting_step(a->ts, tool, tb->segment, &call))) {
        tool = pipit_toolset_find(a->calls_ts, call.name); /* "try daylight": the white balance */
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
        tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
    }
    if (model && a->last_tool >= 0 && a->last_utt == a->utt_seq &&
        agent_number_in_last_place(a->ts, tool, tb->segment, a->last_tool, a->last_args, &call)) {
        /* "living room light cool white and sixty percent" -> the blinds: the number in the
         * place the segment before acted on */
        tool = pipit_toolset_find(a->calls_ts, call.name);
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
        tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
    }
    bool renamed = false;
    if (model && agent_restore_time_of_day(a->ts, tool, tb->segment, &call, &renamed)) {
        /* "alarm for half past six" -> the cloud: the time said, in the tool that takes one */
        tool = pipit_toolset_find(a->calls_ts, call.name);
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
        tb->turn->flags |= renamed ? PIPIT_TURN_TOOL_NAMED : PIPIT_TURN_WORDS_RESTORED;
    }
    /* the device's state, read once for the guards below (the call has not run yet) */
    json_t *before = model && a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    /* ... and the memory's text once, for the identifiers this session made ("its status") */
    char *mem = before != NULL ? memory_text(&a->mem) : NULL;
    bool to_cloud =
        tool >= 0 && (size_t)tool < a->ts->n_tools && pipit_toolset_is_cloud(a->ts, (size_t)tool);
    if (model && before != NULL && tool >= 0 && (size_t)tool < a->ts->n_tools &&
        (to_cloud || !agent_names_tool(a->ts, (size_t)tool, tb->segment)) &&
        agent_item_call(a->ts, tb->segment, before, !to_cloud, &call)) {
        /* "open the one from mom" -> the cloud, "open my passport scan" -> Bluetooth on: no
         * question, an item of the state described, a tool of that item's (agent_named.h);
         * over a pack tool the segment does not name, only one the segment names */
        tool = pipit_toolset_find(a->calls_ts, call.name);
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
        tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
    }
    if (model && before != NULL && agent_stop_what_runs(a->ts, tb->segment, before, &call)) {
        /* "enough, stop it" -> the exposure: what runs is what stops */
        tool = pipit_toolset_find(a->calls_ts, call.name);
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
        tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
    }
    if (model && before != NULL && a->ask != NULL && tool >= 0) {
        /* "turn the timer off" -> a light off: the one tool that clears the key named;
         * "exposure plus three, it's so shady" -> a photo: the key named, its number said */
        const char *named_key = one_named_key(a, tb->segment, before);
        if (named_key != NULL &&
            (agent_key_turned_off(a->ts, tool, tb->segment, named_key, &call) ||
             agent_key_number_named(a->ts, tool, tb->segment, named_key, &call))) {
            tool = pipit_toolset_find(a->calls_ts, call.name);
            pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
            tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
        }
    }
    if (before != NULL && tool >= 0 && (size_t)tool < a->ts->n_tools) {
        int32_t named = -1;
        int in_full =
            agent_choose_tool_named_in_full(a->ts, tool, tb->segment, mem, before, &call, &named);
        if (in_full > 0) {
            /* "cancel the timer" -> set_timer(minutes=40): the tool the person named */
            tool = pipit_toolset_find(a->calls_ts, call.name);
            pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
            tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
        } else if (in_full < 0) {
            /* named, but which item is not clear (no timer, or two): neither runs; the named
             * tool's own words for an item not found, else the harness's */
            tb->turn->flags |= PIPIT_TURN_TOOL_NAMED;
            const char *nf = pipit_toolset_failure_template(a->ts, (size_t)named, "not_found");
            pipit_format(rec->tool, sizeof(rec->tool), "%s", a->ts->tools[named].name);
            not_run(rec, "not_found", "no one item to act on");
            rec->args_json = agent_strdup("{}");
            rec->sentence =
                agent_strdup(nf != NULL && strchr(nf, '{') == NULL
                                 ? nf
                                 : "I'm not sure which one you mean, so nothing changed.");
            agent_say(tb, rec->sentence);
            pipit_call_clear(&call);
            json_decref(before);
            free(mem);
            return true;
        }
    }
    if (model && (agent_restore_said_sign(a->ts, tool, tb->segment, &call) ||
                  agent_convert_person_unit(a->ts, tool, tb->segment, &call) ||
                  agent_restore_person_number(a->ts, tool, tb->segment, &call) ||
                  agent_restore_number_words(a->ts, tool, tb->segment, &call) ||
                  agent_restore_bound_words(a->ts, tool, tb->segment, &call))) {
        tb->turn->flags |= PIPIT_TURN_NUMBER_RESTORED;
    }
    if (before != NULL && tool >= 0 && (size_t)tool < a->ts->n_tools &&
        agent_restore_setting_by(a->ts, tool, tb->segment, before, &call)) {
        tb->turn->flags |= PIPIT_TURN_NUMBER_RESTORED;     /* "up by ten": from the state */
        tool = pipit_toolset_find(a->calls_ts, call.name); /* or the key's own step tool */
        pipit_format(rec->tool, sizeof(rec->tool), "%s", call.name);
    }
    if (model && (a->last_tool >= 0 || a->log_n > 0 || a->asked_key[0] != '\0')) {
        json_t *last = last_place(a, tool);
        if (agent_carry_selector(a->ts, tool, tb->segment, last, &call)) {
            tb->turn->flags |= PIPIT_TURN_CARRIED; /* "bit dimmer": where the last action was */
        }
        json_decref(last);
    }
    if (model && before != NULL && agent_resolve_item_id(a->ts, tool, tb->segment, before, &call)) {
        tb->turn->flags |= PIPIT_TURN_WORDS_RESTORED; /* "the Kyoto temple photo": P-103 */
    }
    if (model && before != NULL &&
        agent_fill_missing_id(a->ts, tool, tb->segment, mem, before, &call)) {
        tb->turn->flags |= PIPIT_TURN_WORDS_RESTORED; /* "its status": the ticket opened */
    }
    free(mem);
    bool mode_off = false; /* "turn off turbo" when it was not on says "already", below */
    bool restored = model && agent_restore_person_words(a->ts, tool, tb->segment, &call);
    restored = (model && agent_restore_after_colon(a->ts, tool, tb->segment, &call)) || restored;
    restored = (model && agent_restore_called_name(a->ts, tool, tb->segment, &call)) || restored;
    restored = (model && agent_restore_verb_rest(a->ts, tool, tb->segment, &call)) || restored;
    /* "text priya the budget is in the shared drive" -> recipient "budget": where the pack's
     * examples put each free text (agent_frame.h) */
    restored = (model && agent_frame_restore(a->ts, tool, tb->segment, &call)) || restored;
    restored = (model && agent_restore_pattern_id(a->ts, tool, tb->segment, &call)) || restored;
    if (before != NULL && tool >= 0 && (size_t)tool < a->ts->n_tools) {
        restored = agent_restore_named_item(a->ts, tool, tb->segment, before, &call) || restored;
        /* "turn off turbo" -> set_mode(turbo): the mode the device starts in */
        mode_off = model && agent_mode_turned_off(a->ts, tool, tb->segment, before, &call);
        restored = mode_off || restored;
        /* "record the first song" -> record_video(stop): the tool's own verb starts it */
        restored = (model && agent_own_verb_side(a->ts, tool, tb->segment, &call)) || restored;
    }
    json_decref(before);
    restored = (model && agent_restore_person_choice(a->ts, tool, tb->segment, &call)) || restored;
    /* "set the white balance to candlelight" -> daylight: the person's word, refused below */
    restored = (model && agent_restore_unknown_value(a->ts, tool, tb->segment, &call)) || restored;
    /* "save this in slot two" -> p3: the numbered value said */
    restored = (model && agent_restore_numbered_value(a->ts, tool, tb->segment, &call)) || restored;
    /* "switch to hdmi 3" -> hdmi2: the name and number said, or refused */
    restored = (model && agent_restore_named_number(a->ts, tool, tb->segment, &call)) || restored;
    restored = (model && agent_restore_step_direction(a->ts, tool, tb->segment, &call)) || restored;
    if (restored) {
        tb->turn->flags |= PIPIT_TURN_WORDS_RESTORED;
    }
    rec->args_json = agent_strdup(call.args_json);
    if (tool < 0 && pipit_call_is_none(a->calls_ts, &call)) {
        model_none(a, tb, rec); /* the grammar's "none of these tools" */
        pipit_call_clear(&call);
        return true;
    }
    struct pipit_arg_problem problems[4];
    size_t n_problems = 0;
    enum pipit_status vst =
        tool < 0 ? PIPIT_ERR_UNKNOWN_TOOL
                 : pipit_toolset_validate_args(a->calls_ts, call.name, call.args_json,
                                               strlen(call.args_json), problems, 4, &n_problems);
    char asked_q[ROUTER_MAX_SEGMENT + 2];
    if (model && tool >= 0 && tb->segment != NULL &&
        agent_question_must_not_act(a->ts, tool, asked_text(tb, asked_q, sizeof(asked_q)),
                                    router_command_verb(a->router, tb->segment) !=
                                        ROUTER_NO_VERB)) {
        /* "is the porch light on?" must not switch a light on; checked before validation, so
         * a question never hears a refusal of a value nobody asked for either */
        keep_question(a, tb, rec, tool);
        pipit_call_clear(&call);
        return true;
    }
    if (model && tool >= 0 && !tb->undid &&
        agent_undo_instead(a, tb, tool, tb->segment, call.args_json)) {
        /* "I prefer the flash the way I had it" -> set_flash(off): the earlier state, from the
         * log, not the value the model guessed */
        not_run(rec, "undo_instead", "the earlier state was asked for");
        pipit_call_clear(&call);
        return true;
    }
    bool number_guess = false, undo_guess = false;
    if (model && tool >= 0 &&
        ((undo_guess = (size_t)tool >= a->ts->n_tools && undo_guessed(tb->segment)) ||
         agent_switch_guessed(a->ts, tool, tb->segment, &call) ||
         agent_direction_guessed(a->ts, tool, tb->segment, &call) ||
         agent_time_guessed(a->ts, tool, tb->segment, &call) ||
         (number_guess = agent_number_guessed(a->ts, tool, tb->segment, &call)))) {
        /* "open my Q3 report" -> Bluetooth off: a switch nobody named, on no side said;
         * "drive to Narnia" -> a 9-minute timer: a number nobody said for a setting nobody
         * named */
        tb->turn->flags |= PIPIT_TURN_NOT_ASKED;
        not_run(rec, "not_asked",
                undo_guess     ? "an undo nobody asked for"
                : number_guess ? "a number nobody said for a setting nobody named"
                               : "a switch nobody named");
        char said[320];
        pipit_format(said, sizeof(said),
                     "I'm not sure what you meant by \"%s\", so nothing changed.", tb->segment);
        rec->sentence = agent_strdup(said);
        agent_say(tb, rec->sentence);
        pipit_call_clear(&call);
        return true;
    }
    char buf[512];
    if (vst != PIPIT_OK) {
        rec->status = vst == PIPIT_ERR_JSON ? PIPIT_ERR_INVALID_ARGS : vst;
        rec->data_json = agent_strdup("{}");
        if (vst == PIPIT_ERR_UNKNOWN_TOOL) {
            /* a tool this set does not have (an unconstrained decode): said in the harness's
             * words, from the person's */
            pipit_format(rec->code, sizeof(rec->code), "unknown_tool");
            pipit_format(rec->message, sizeof(rec->message), "there is no tool named %s",
                         call.name);
            char *s = no_tool_sentence(a, tb);
            pipit_format(buf, sizeof(buf), "%s", s != NULL ? s : render_no_action_sentence());
            free(s);
        } else {
            /* the tool's refusal template names the limit ("I can't zoom to 50x: the zoom
             * goes from 0.5x to 10x on the back camera."); never a substitute value */
            pipit_format(rec->message, sizeof(rec->message), "%s: %s",
                         n_problems > 0 ? problems[0].path : "args",
                         n_problems > 0 ? problems[0].message : "invalid");
            json_t *bad = json_loads(call.args_json, 0, NULL);
            char code[sizeof(rec->code)] = RENDER_INVALID_ARGUMENTS;
            char *refusal =
                render_refusal(a->calls_ts, (size_t)tool, bad, n_problems > 0 ? &problems[0] : NULL,
                               code, sizeof(code));
            pipit_format(rec->code, sizeof(rec->code), "%s", code);
            pipit_format(buf, sizeof(buf), "%s",
                         refusal != NULL ? refusal : "That value doesn't work, so I did nothing.");
            free(refusal);
            if ((size_t)tool < a->ts->n_tools && json_is_object(bad) &&
                !pipit_toolset_is_cloud(a->ts, (size_t)tool)) {
                /* "try again": the same refusal */
                agent_followup_remember(a, tool, bad, false, code);
            }
            json_decref(bad);
        }
        rec->sentence = agent_strdup(buf);
        agent_say(tb, rec->sentence);
        memory_record_call(&a->mem, rec->tool, rec->args_json, false, rec->code, "{}", NULL,
                           MEMORY_CALL_WRITE);
        pipit_call_clear(&call);
        return true;
    }
    if ((size_t)tool >= a->ts->n_tools) {
        agent_model_undo(a, tb, rec);
        pipit_call_clear(&call);
        return true;
    }
    json_t *args = json_loads(call.args_json, 0, NULL);
    bool cloud = pipit_toolset_is_cloud(a->ts, (size_t)tool);
    if (model && cloud && tb->segment != NULL &&
        json_object_get(args, "user_query_context") != NULL) {
        /* the cloud gets the person's own words: a small model's copy of a question can drift,
         * the harness has the original (the model chose to delegate, and says why); a call the
         * harness made keeps its question ("try again" asks the failed one again) */
        json_object_set_new(args, "user_query_context", json_string(tb->segment));
        char *fixed =
            json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
        if (fixed != NULL) {
            free(rec->args_json);
            rec->args_json = fixed;
        }
    }
    if (model && repeats_this_turn(a, tb, tool, rec)) {
        /* "flash stays off for sure, no flash at the pool": two segments, one setting, one
         * value: set once, said once; the second is no call */
        free(rec->args_json);
        tb->turn->n_calls--;
        json_decref(args);
        pipit_call_clear(&call);
        return true;
    }
    json_t *snapshot = agent_undo_snapshot(a, tool);
    json_t *data = NULL;
    execute(a, tool, args, tb->segment, clock, tb->turn, rec, &data);
    clean_result(rec, &data);
    enum pipit_undo_kind kind = pipit_toolset_undo(a->ts, (size_t)tool, NULL, NULL);
    /* the state is read once after the call (and once more after a flip) */
    bool keyed = rec->ok && kind == PIPIT_UNDO_KEYS && snapshot != NULL;
    bool changed = keyed && state_changed(a, snapshot);
    /* "record him" -> stop while nothing records: the device refuses what already is */
    bool refused_noop = false;
    if (model && !rec->ok && rec->executed && a->dev != NULL) {
        json_t *now = a->dev->ops->get_state(a->dev->self);
        refused_noop = agent_switch_asks_current(a->ts, tool, args, now);
        json_decref(now);
    }
    if (model && ((keyed && !changed) || refused_noop) &&
        agent_flip_noop_switch(a->ts, tool, tb->segment, args)) {
        /* "get the flash going" -> off while it was off: nobody asks for what already is, the
         * other side is meant (agent_switch.c); the first call changed nothing */
        json_decref(data);
        data = NULL;
        rec->ok = false;
        rec->code[0] = '\0';
        rec->message[0] = '\0';
        execute(a, tool, args, tb->segment, clock, tb->turn, rec, &data);
        clean_result(rec, &data);
        char *flipped =
            json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER);
        if (flipped != NULL) {
            free(rec->args_json);
            rec->args_json = flipped;
        }
        tb->turn->flags |= PIPIT_TURN_WORDS_RESTORED;
        keyed = rec->ok && kind == PIPIT_UNDO_KEYS && snapshot != NULL;
        changed = keyed && state_changed(a, snapshot);
    }
    /* "add a filter" -> set_timer(5) while it was 5: nothing changed and the person named
     * neither the timer nor a value; the sentence does not pretend the call was asked for */
    bool not_asked =
        model && !mode_off && keyed && !changed && agent_stray_call(a->ts, tool, tb->segment, args);
    rec->status = PIPIT_OK;
    char *data_json =
        data != NULL
            ? json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
            : NULL;
    rec->data_json = data_json != NULL ? data_json : agent_strdup("{}");
    const char *tmpl = rec->ok ? pipit_toolset_success_template(a->ts, (size_t)tool)
                               : pipit_toolset_failure_template(a->ts, (size_t)tool, rec->code);
    /* an omitted optional argument reads as its schema "default" in the sentence */
    json_t *full = pipit_tool_args_with_defaults(pipit_toolset_tool(a->ts, (size_t)tool), args);
    /* a placeholder neither the arguments nor the result fill reads from the device's state
     * after the call ("The pressure is {pressure} bar now." after a step of 0 that wrote
     * nothing), never as its own name */
    json_t *known = rec->ok && a->dev != NULL ? a->dev->ops->get_state(a->dev->self) : NULL;
    if (known != NULL && json_is_object(data)) {
        json_object_update(known, data); /* the result's own values win */
    }
    rec->sentence = render_template(tmpl, full != NULL ? full : args, known != NULL ? known : data,
                                    rec->message, rec->code);
    json_decref(known);
    json_decref(full);
    if (!not_asked && keyed && !changed && rec->sentence != NULL) {
        /* "zoom out even more" at 0.5x: "Zoomed out to 0.5x." says a move that did not happen */
        char *already = already_sentence(a, rec->sentence, snapshot);
        if (already != NULL) {
            free(rec->sentence);
            rec->sentence = already;
        }
    }
    if (not_asked) {
        char honest[ROUTER_MAX_SEGMENT + 96];
        pipit_format(honest, sizeof(honest),
                     "I'm not sure what you meant by \"%s\", so nothing changed.", tb->segment);
        free(rec->sentence);
        rec->sentence = agent_strdup(honest);
        tb->turn->flags |= PIPIT_TURN_NOT_ASKED;
    }
    /* the same failure twice in a turn is said once */
    const struct pipit_call_record *prev =
        tb->turn->n_calls >= 2 ? &tb->turn->calls[tb->turn->n_calls - 2] : NULL;
    if (rec->ok || prev == NULL || prev->ok || prev->sentence == NULL || rec->sentence == NULL ||
        strcmp(prev->sentence, rec->sentence) != 0) {
        agent_say(tb, rec->sentence);
    }

    if (rec->ok && kind == PIPIT_UNDO_KEYS && snapshot != NULL) {
        /* a call that changed nothing ("eco on" when it was on) is no action to undo, and no
         * reason to reach past it either: "never mind" right after it says that nothing
         * changed, and reverts nothing older (agent_undo.c) */
        agent_log_push(a, tool, changed ? kind : PIPIT_UNDO_NO_STATE, snapshot);
        snapshot = NULL;
    } else if (rec->ok && kind == PIPIT_UNDO_KEYS && a->dev != NULL) {
        /* the state could not be read before the call: undo must not revert an older action
         * in its place, nor claim to have put this one back */
        agent_log_push(a, tool, PIPIT_UNDO_IMPOSSIBLE, NULL);
    } else if (rec->ok && kind == PIPIT_UNDO_IMPOSSIBLE) {
        agent_log_push(a, tool, kind, NULL);
    }
    json_decref(snapshot);
    char state_line[512] = "";
    if (a->dev != NULL) {
        device_state_line(a->dev, state_line, sizeof(state_line));
    }
    enum memory_call kind_of_call =
        cloud ? MEMORY_CALL_CLOUD
        : pipit_toolset_undo(a->ts, (size_t)tool, NULL, NULL) == PIPIT_UNDO_NO_STATE
            ? MEMORY_CALL_READ
            : MEMORY_CALL_WRITE;
    /* a custom handler's data reaches memory as plain words only (IDs, numbers, enum values):
     * its sentences are the outside's text (docs/memory.md) */
    char *mem_data = NULL;
    if (has_handler(a, tool) && data != NULL) {
        json_t *words = untrusted_words_json(data, 40);
        mem_data =
            words != NULL
                ? json_dumps(words, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_PRESERVE_ORDER)
                : NULL;
        json_decref(words);
    }
    /* a pack's own cloud tool: memory's line names the question the cloud got, the person's */
    char *cloud_args = NULL;
    if (cloud && json_object_get(args, "user_query_context") == NULL) {
        json_t *q =
            json_pack("{s:s}", "user_query_context", tb->segment != NULL ? tb->segment : "");
        cloud_args = q != NULL ? json_dumps(q, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
        json_decref(q);
    }
    if (!cloud && rec->executed) {
        /* what "again", "the other way" mean; "Sam Rivera" answers a failure's question */
        agent_followup_remember(a, tool, args, rec->ok, rec->code);
    } else if (cloud && rec->executed && !rec->ok && strcmp(rec->code, CLOUD_CANCELLED) != 0) {
        /* a question the cloud failed to answer: "try again" asks it again (an answered one is
         * never what "again" or "more" mean) */
        json_t *asked = cloud_args != NULL ? json_loads(cloud_args, 0, NULL) : NULL;
        agent_followup_remember(a, tool, asked != NULL ? asked : args, false, rec->code);
        json_decref(asked);
    }
    bool cancelled = strcmp(rec->code, CLOUD_CANCELLED) == 0; /* nothing to remember */
    if (!cancelled &&
        memory_record_call(&a->mem, rec->tool, cloud_args != NULL ? cloud_args : rec->args_json,
                           rec->ok, memory_code(a, tool, rec->code),
                           mem_data != NULL ? mem_data : rec->data_json, state_line,
                           kind_of_call) != PIPIT_OK) {
        pipit_log(PIPIT_LOG_WARN, "agent: memory: out of memory");
    }
    free(mem_data);
    free(cloud_args);
    char *canon = json_dumps(args, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_SORT_KEYS);
    bool tripped = policy_breaker_record(&a->breaker, call.name, canon != NULL ? canon : "",
                                         rec->ok, rec->code);
    free(canon);
    json_decref(args);
    json_decref(data);
    pipit_call_clear(&call);
    if (tripped) {
        tb->turn->flags |= PIPIT_TURN_BREAKER;
        /* the failure's own sentence, just said, names the reason */
        agent_say(tb, "I'll stop trying: it failed the same way twice.");
        return false;
    }
    return true;
}
