/*
 * test-phone.c - the simulated phone: its state contract (keys, defaults), every
 * tool's success data and IDs, IDs that later calls use, every reason code,
 * set_state's all-or-nothing rule, agreement with tools/phone.json, and a
 * fuzz-ish sweep of odd JSON over every tool.
 */
#include "device.h"
#include "devices/phone.h"
#include "testutil.h"
#include "toolspec.h"

#include <jansson.h>

#define PHONE_PACK PIPIT_SOURCE_DIR "/tools/phone.json"

/* ============================================================================
 * helpers */

static json_t *J(const char *text) {
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (v == NULL) {
        fail_msg("bad JSON literal %s: %s", text, e.text);
    }
    return v;
}

static char *dump(const json_t *v) {
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void assert_json_equal(const json_t *got, const json_t *want) {
    if (!json_equal(got, want)) {
        char *g = dump(got);
        char *w = dump(want);
        fail_msg("JSON differs\n  got:  %s\n  want: %s", g ? g : "(null)", w ? w : "(null)");
    }
}

/* A phone for tools/phone.json, or for that spec edited by `edit` (NULL: as shipped). */
static void phone_for_spec(struct device *dev, void (*edit)(json_t *spec)) {
    json_error_t jerr;
    json_t *spec = json_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", 0, &jerr);
    assert_non_null(spec);
    if (edit != NULL) {
        json_t *tool;
        size_t i;
        json_array_foreach(json_object_get(spec, "tools"), i, tool) {
            json_object_del(json_object_get(tool, "pipit"), "examples"); /* for the old limits */
        }
        edit(spec);
    }
    char *text = json_dumps(spec, 0);
    json_decref(spec);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_string(text, strlen(text), "phone-edited.json", &ts, &err) != PIPIT_OK ||
        phone_device_new(ts, dev, &err) != PIPIT_OK) {
        fail_msg("%s", err.text);
    }
    free(text);
    pipit_toolset_free(ts); /* the phone keeps what it needs */
}

static int setup(void **state) {
    struct device *dev = calloc(1, sizeof(*dev));
    assert_non_null(dev);
    phone_for_spec(dev, NULL);
    *state = dev;
    return 0;
}

static int teardown(void **state) {
    struct device *dev = *state;
    device_free(dev);
    free(dev);
    return 0;
}

static json_t *get_state(struct device *dev) {
    json_t *s = dev->ops->get_state(dev->self);
    assert_non_null(s);
    return s;
}

/* One key of the state (new reference). */
static json_t *state_key(struct device *dev, const char *key) {
    json_t *s = get_state(dev);
    json_t *v = json_incref(json_object_get(s, key));
    json_decref(s);
    assert_non_null(v);
    return v;
}

static void assert_state_key(struct device *dev, const char *key, const char *expected) {
    json_t *v = state_key(dev, key);
    json_t *want = J(expected);
    assert_json_equal(v, want);
    json_decref(want);
    json_decref(v);
}

/* Apply overrides that must be accepted. */
static void init_state(struct device *dev, const char *overrides) {
    struct pipit_error err = {0};
    json_t *o = J(overrides);
    enum pipit_status st = dev->ops->set_state(dev->self, o, &err);
    if (st != PIPIT_OK) {
        fail_msg("set_state %s: %s", overrides, err.text);
    }
    json_decref(o);
}

/* Call a tool that must succeed with exactly `expected` data. */
static void call_ok(struct device *dev, const char *tool, const char *args, const char *expected) {
    json_t *a = args != NULL ? J(args) : NULL;
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, a, &r);
    if (st != PIPIT_OK || !r.ok) {
        fail_msg("%s %s: status %d, code %s: %s", tool, args ? args : "NULL", st, r.code,
                 r.message);
    }
    assert_string_equal(r.code, "");
    assert_string_equal(r.message, "");
    json_t *want = J(expected);
    assert_json_equal(r.data, want);
    json_decref(want);
    device_result_clear(&r);
    assert_null(r.data);
    json_decref(a);
}

/* Call a tool that must fail with `code` (and `message` when not NULL) and
 * leave the state unchanged. */
static void call_fails(struct device *dev,
                       const char *tool,
                       const char *args,
                       const char *code,
                       const char *message) {
    json_t *before = get_state(dev);
    json_t *a = args != NULL ? J(args) : NULL;
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, a, &r);
    assert_int_equal(st, PIPIT_OK);
    if (r.ok) {
        char *d = dump(r.data);
        fail_msg("%s %s succeeded with %s, expected %s", tool, args ? args : "NULL", d, code);
    }
    assert_null(r.data);
    if (strcmp(r.code, code) != 0) {
        fail_msg("%s %s: code %s (%s), expected %s", tool, args ? args : "NULL", r.code, r.message,
                 code);
    }
    if (message != NULL) {
        assert_string_equal(r.message, message);
    } else {
        assert_true(strlen(r.message) > 0);
    }
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    device_result_clear(&r);
    json_decref(a);
    json_decref(before);
}

/* set_state that must fail with PIPIT_ERR_JSON, a message containing `needle1`
 * and `needle2`, and no change. */
static void set_state_fails(struct device *dev,
                            const char *overrides,
                            const char *needle1,
                            const char *needle2) {
    json_t *before = get_state(dev);
    json_t *o = J(overrides);
    struct pipit_error err = {0};
    assert_int_equal(dev->ops->set_state(dev->self, o, &err), PIPIT_ERR_JSON);
    assert_int_equal(err.status, PIPIT_ERR_JSON);
    if (strstr(err.text, needle1) == NULL || strstr(err.text, needle2) == NULL) {
        fail_msg("set_state %s: message \"%s\" lacks \"%s\" or \"%s\"", overrides, err.text,
                 needle1, needle2);
    }
    assert_true(strncmp(err.text, "phone: ", 7) == 0);
    json_t *after = get_state(dev);
    assert_json_equal(after, before);
    json_decref(after);
    json_decref(o);
    json_decref(before);
}

static void assert_line(struct device *dev, const char *expected) {
    char line[256];
    device_state_line(dev, line, sizeof(line));
    assert_string_equal(line, expected);
}

static const char *const KEYS[] = {"wifi",       "bluetooth", "airplane_mode", "permissions",
                                   "contacts",   "threads",   "photos",        "notes",
                                   "alarms",     "timers",    "tickets",       "files",
                                   "navigation", "ride",      "next_ids"};

/* Every tool with one valid argument object. */
static const struct {
    const char *tool;
    const char *args;
} VALID_CALLS[] = {
    {"send_message", "{\"recipient\": \"Alice\", \"body\": \"On my way\"}"},
    {"read_messages", "{}"},
    {"search_photos", "{\"query\": \"beach\"}"},
    {"share_photo", "{\"photo_id\": \"P-106\", \"recipient\": \"Mom\"}"},
    {"navigate_to", "{\"destination\": \"Ferry Building\", \"mode\": \"walking\"}"},
    {"request_ride", "{\"destination\": \"SFO\", \"service\": \"standard\"}"},
    {"set_alarm", "{\"time\": \"07:30\", \"label\": \"Gym\"}"},
    {"set_timer", "{\"minutes\": 10}"},
    {"cancel_timer", "{\"timer_id\": \"TM-1\"}"},
    {"create_note", "{\"title\": \"Ideas\", \"body\": \"a\"}"},
    {"append_note", "{\"note_id\": \"N-1\", \"text\": \"bread\"}"},
    {"create_ticket", "{\"summary\": \"Laptop won't boot\", \"priority\": \"high\"}"},
    {"get_ticket_status", "{\"ticket_id\": \"T-1000\"}"},
    {"find_file", "{\"name\": \"report\"}"},
    {"open_file", "{\"file_id\": \"F-201\"}"},
    {"set_wifi", "{\"enabled\": false}"},
    {"set_bluetooth", "{\"enabled\": true}"},
    {"set_airplane_mode", "{\"enabled\": true}"},
};
#define N_VALID_CALLS (sizeof(VALID_CALLS) / sizeof(VALID_CALLS[0]))

/* ============================================================================
 * contract */

static void test_defaults(void **state) {
    struct device *dev = *state;
    assert_string_equal(dev->ops->name, "phone");
    json_t *s = get_state(dev);
    assert_int_equal(json_object_size(s), sizeof(KEYS) / sizeof(KEYS[0]));
    for (size_t i = 0; i < sizeof(KEYS) / sizeof(KEYS[0]); i++) {
        assert_non_null(json_object_get(s, KEYS[i]));
    }
    assert_int_equal(json_array_size(json_object_get(s, "contacts")), 8);
    assert_int_equal(json_array_size(json_object_get(s, "photos")), 12);
    assert_int_equal(json_array_size(json_object_get(s, "files")), 12);
    assert_int_equal(json_array_size(json_object_get(s, "threads")), 3);
    json_decref(s);
    assert_state_key(dev, "wifi", "true");
    assert_state_key(dev, "bluetooth", "false");
    assert_state_key(dev, "airplane_mode", "false");
    assert_state_key(dev, "permissions",
                     "{\"contacts\": true, \"messages\": true, \"photos\": true, \"location\":"
                     " true, \"files\": true, \"settings\": true, \"tickets\": true}");
    assert_state_key(dev, "timers", "[]");
    assert_state_key(dev, "alarms",
                     "[{\"id\": \"A-1\", \"time\": \"06:45\", \"label\": \"Weekdays\","
                     " \"enabled\": true}]");
    assert_state_key(dev, "notes",
                     "[{\"id\": \"N-1\", \"title\": \"Groceries\", \"body\": \"milk, eggs,"
                     " spinach\"}, {\"id\": \"N-2\", \"title\": \"Packing list\", \"body\":"
                     " \"passport, charger\"}]");
    assert_state_key(dev, "tickets",
                     "[{\"id\": \"T-1000\", \"summary\": \"VPN disconnects every hour\","
                     " \"priority\": \"medium\", \"status\": \"in_progress\"}]");
    assert_state_key(dev, "navigation", "null");
    assert_state_key(dev, "ride", "null");
    assert_state_key(dev, "next_ids",
                     "{\"thread\": 4, \"alarm\": 2, \"timer\": 1, \"note\": 3, \"ticket\": 1001,"
                     " \"ride\": 1}");
    json_t *contacts = state_key(dev, "contacts");
    json_t *want = J("{\"name\": \"Alice Chen\", \"number\": \"+1 415 555 0142\"}");
    assert_json_equal(json_array_get(contacts, 0), want);
    json_decref(want);
    json_decref(contacts);
    assert_line(dev, "wifi=on bluetooth=off airplane_mode=off alarms=1 timers=0 unread=2 "
                     "navigating=no ride=no");
}

static void test_round_trip_is_identity(void **state) {
    struct device *dev = *state;
    call_ok(dev, "set_timer", "{\"minutes\": 5}", "{\"timer_id\": \"TM-1\", \"minutes\": 5}");
    call_ok(dev, "send_message", "{\"recipient\": \"Priya\", \"body\": \"Hi\\nthere\"}",
            "{\"thread_id\": \"TH-4\", \"recipient\": \"Priya Natarajan\"}");
    json_t *s = get_state(dev);
    struct device other;
    assert_int_equal(phone_device_new(NULL, &other, NULL), PIPIT_OK);
    struct pipit_error err = {0};
    assert_int_equal(other.ops->set_state(other.self, s, &err), PIPIT_OK);
    json_t *again = get_state(&other);
    assert_json_equal(again, s);
    json_decref(again);
    /* and the same IDs come next on both */
    call_ok(&other, "set_timer", "{\"minutes\": 6}", "{\"timer_id\": \"TM-2\", \"minutes\": 6}");
    call_ok(dev, "set_timer", "{\"minutes\": 6}", "{\"timer_id\": \"TM-2\", \"minutes\": 6}");
    device_free(&other);
    json_decref(s);
}

static void test_misuse(void **state) {
    struct device *dev = *state;
    struct device_result r = {0};
    struct pipit_error err = {0};
    char line[8] = "x";
    assert_int_equal(phone_device_new(NULL, NULL, NULL), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(dev->ops->call(NULL, "set_wifi", NULL, &r), PIPIT_ERR_INVALID_ARG);
    assert_false(r.ok);
    device_result_clear(&r);
    assert_int_equal(dev->ops->call(dev->self, NULL, NULL, &r), PIPIT_ERR_INVALID_ARG);
    device_result_clear(&r);
    assert_int_equal(dev->ops->call(dev->self, "set_wifi", NULL, NULL), PIPIT_ERR_INVALID_ARG);
    assert_null(dev->ops->get_state(NULL));
    json_t *o = J("{}");
    assert_int_equal(dev->ops->set_state(NULL, o, &err), PIPIT_ERR_INVALID_ARG);
    assert_int_equal(dev->ops->set_state(dev->self, o, NULL), PIPIT_OK); /* empty: no-op */
    json_decref(o);
    dev->ops->state_line(NULL, line, sizeof(line));
    assert_string_equal(line, "");
    dev->ops->state_line(dev->self, NULL, 10);
    dev->ops->state_line(dev->self, line, 0);
    dev->ops->state_line(dev->self, line, sizeof(line)); /* cut, still terminated */
    assert_true(strlen(line) < sizeof(line));
    dev->ops->destroy(NULL);
}

/* ============================================================================
 * IDs: deterministic, and usable by later calls */

static void test_ticket_ids(void **state) {
    struct device *dev = *state;
    call_ok(dev, "create_ticket", "{\"summary\": \"VPN is down\", \"priority\": \"high\"}",
            "{\"ticket_id\": \"T-1001\", \"status\": \"open\", \"priority\": \"high\"}");
    call_ok(dev, "create_ticket", "{\"summary\": \"Need a new mouse\", \"priority\": \"low\"}",
            "{\"ticket_id\": \"T-1002\", \"status\": \"open\", \"priority\": \"low\"}");
    /* turn 10 asks about turn 2's ticket */
    call_ok(dev, "get_ticket_status", "{\"ticket_id\": \"T-1001\"}",
            "{\"ticket_id\": \"T-1001\", \"status\": \"open\", \"priority\": \"high\","
            " \"summary\": \"VPN is down\"}");
    call_ok(dev, "get_ticket_status", "{\"ticket_id\": \"t-1002\"}",
            "{\"ticket_id\": \"T-1002\", \"status\": \"open\", \"priority\": \"low\","
            " \"summary\": \"Need a new mouse\"}");
    call_ok(dev, "get_ticket_status", "{\"ticket_id\": \"1000\"}",
            "{\"ticket_id\": \"T-1000\", \"status\": \"in_progress\", \"priority\": \"medium\","
            " \"summary\": \"VPN disconnects every hour\"}");
    call_fails(dev, "get_ticket_status", "{\"ticket_id\": \"T-1003\"}", "not_found",
               "there is no ticket \"T-1003\"");
    assert_state_key(dev, "next_ids",
                     "{\"thread\": 4, \"alarm\": 2, \"timer\": 1, \"note\": 3, \"ticket\": 1003,"
                     " \"ride\": 1}");
    /* the helpdesk moves a ticket on (scenario init), the phone reports it */
    init_state(dev, "{\"tickets\": [{\"id\": \"T-1001\", \"summary\": \"VPN is down\","
                    " \"priority\": \"high\", \"status\": \"resolved\"}]}");
    call_ok(dev, "get_ticket_status", "{\"ticket_id\": \"T-1001\"}",
            "{\"ticket_id\": \"T-1001\", \"status\": \"resolved\", \"priority\": \"high\","
            " \"summary\": \"VPN is down\"}");
    /* a long summary is cut in the answer (bounded data), kept whole in the state */
    char args[700];
    char summary[520];
    memset(summary, 'x', 500);
    summary[500] = '\0';
    snprintf(args, sizeof(args), "{\"summary\": \"%s\", \"priority\": \"urgent\"}", summary);
    call_ok(dev, "create_ticket", args,
            "{\"ticket_id\": \"T-1003\", \"status\": \"open\", \"priority\": \"urgent\"}");
    struct device_result r = {0};
    json_t *a = J("{\"ticket_id\": \"T-1003\"}");
    assert_int_equal(dev->ops->call(dev->self, "get_ticket_status", a, &r), PIPIT_OK);
    assert_true(r.ok);
    assert_int_equal(strlen(json_string_value(json_object_get(r.data, "summary"))), 123);
    device_result_clear(&r);
    json_decref(a);
}

static void test_timer_ids(void **state) {
    struct device *dev = *state;
    call_ok(dev, "set_timer", "{\"minutes\": 10}", "{\"timer_id\": \"TM-1\", \"minutes\": 10}");
    call_ok(dev, "set_timer", "{\"minutes\": 25.0}", "{\"timer_id\": \"TM-2\", \"minutes\": 25}");
    assert_line(dev, "wifi=on bluetooth=off airplane_mode=off alarms=1 timers=2 unread=2 "
                     "navigating=no ride=no");
    call_ok(dev, "cancel_timer", "{\"timer_id\": \"TM-1\"}",
            "{\"timer_id\": \"TM-1\", \"minutes\": 10, \"status\": \"cancelled\"}");
    call_fails(dev, "cancel_timer", "{\"timer_id\": \"TM-1\"}", "not_found",
               "there is no running timer \"TM-1\"");
    assert_state_key(dev, "timers", "[{\"id\": \"TM-2\", \"minutes\": 25}]");
    /* IDs are never reused */
    call_ok(dev, "set_timer", "{\"minutes\": 1}", "{\"timer_id\": \"TM-3\", \"minutes\": 1}");
    call_ok(dev, "cancel_timer", "{\"timer_id\": \"tm-2\"}",
            "{\"timer_id\": \"TM-2\", \"minutes\": 25, \"status\": \"cancelled\"}");
    call_ok(dev, "cancel_timer", "{\"timer_id\": \"TM-3\"}",
            "{\"timer_id\": \"TM-3\", \"minutes\": 1, \"status\": \"cancelled\"}");
    assert_state_key(dev, "timers", "[]");
    call_ok(dev, "set_timer", "{\"minutes\": 1440}", "{\"timer_id\": \"TM-4\", \"minutes\": 1440}");
}

static void test_note_ids(void **state) {
    struct device *dev = *state;
    call_ok(dev, "create_note", "{\"title\": \"Gift ideas\", \"body\": \"book\"}",
            "{\"note_id\": \"N-3\", \"title\": \"Gift ideas\"}");
    call_ok(dev, "append_note", "{\"note_id\": \"N-3\", \"text\": \"scarf\"}",
            "{\"note_id\": \"N-3\", \"title\": \"Gift ideas\", \"length\": 10}");
    call_ok(dev, "create_note", "{\"title\": \"Empty\", \"body\": \"\"}",
            "{\"note_id\": \"N-4\", \"title\": \"Empty\"}");
    call_ok(dev, "append_note", "{\"note_id\": \"n-4\", \"text\": \"first line\"}",
            "{\"note_id\": \"N-4\", \"title\": \"Empty\", \"length\": 10}");
    call_ok(dev, "append_note", "{\"note_id\": \"N-1\", \"text\": \"bread\"}",
            "{\"note_id\": \"N-1\", \"title\": \"Groceries\", \"length\": 25}");
    json_t *notes = state_key(dev, "notes");
    json_t *want = J("[{\"id\": \"N-1\", \"title\": \"Groceries\", \"body\": \"milk, eggs,"
                     " spinach\\nbread\"}, {\"id\": \"N-2\", \"title\": \"Packing list\","
                     " \"body\": \"passport, charger\"}, {\"id\": \"N-3\", \"title\": \"Gift"
                     " ideas\", \"body\": \"book\\nscarf\"}, {\"id\": \"N-4\", \"title\":"
                     " \"Empty\", \"body\": \"first line\"}]");
    assert_json_equal(notes, want);
    json_decref(want);
    json_decref(notes);
    call_fails(dev, "append_note", "{\"note_id\": \"N-9\", \"text\": \"x\"}", "not_found",
               "there is no note \"N-9\"");
}

static void test_alarm_ids(void **state) {
    struct device *dev = *state;
    call_ok(dev, "set_alarm", "{\"time\": \"07:30\", \"label\": \"Gym\"}",
            "{\"alarm_id\": \"A-2\", \"time\": \"07:30\", \"label\": \"Gym\"}");
    call_ok(dev, "set_alarm", "{\"time\": \"6:05\"}",
            "{\"alarm_id\": \"A-3\", \"time\": \"06:05\", \"label\": \"Alarm\"}");
    call_ok(dev, "set_alarm", "{\"time\": \"23:59\"}",
            "{\"alarm_id\": \"A-4\", \"time\": \"23:59\", \"label\": \"Alarm\"}");
    call_ok(dev, "set_alarm", "{\"time\": \"00:00\"}",
            "{\"alarm_id\": \"A-5\", \"time\": \"00:00\", \"label\": \"Alarm\"}");
    json_t *alarms = state_key(dev, "alarms");
    assert_int_equal(json_array_size(alarms), 5);
    json_decref(alarms);
    const char *bad[] = {"\"24:00\"", "\"12:60\"", "\"7pm\"", "\"07-30\"", "\"7:5\"",
                         "\"0730\"",  "\"ab:cd\"", "\"\"",    "7",         "null"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char args[64];
        snprintf(args, sizeof(args), "{\"time\": %s}", bad[i]);
        call_fails(dev, "set_alarm", args, "invalid_argument", NULL);
    }
    call_fails(dev, "set_alarm", "{\"time\": \"25:00\"}", "invalid_argument",
               "argument \"time\" must be a 24-hour time HH:MM, got \"25:00\"");
}

static void test_id_skips_ids_in_use(void **state) {
    struct device *dev = *state;
    /* a scenario put T-1001 and T-1002 in place without moving the counter */
    init_state(dev, "{\"tickets\": [{\"id\": \"T-1001\", \"summary\": \"a\", \"priority\":"
                    " \"low\", \"status\": \"open\"}, {\"id\": \"T-1002\", \"summary\": \"b\","
                    " \"priority\": \"low\", \"status\": \"closed\"}]}");
    call_ok(dev, "create_ticket", "{\"summary\": \"c\", \"priority\": \"medium\"}",
            "{\"ticket_id\": \"T-1003\", \"status\": \"open\", \"priority\": \"medium\"}");
    init_state(dev, "{\"next_ids\": {\"timer\": 41}}");
    call_ok(dev, "set_timer", "{\"minutes\": 3}", "{\"timer_id\": \"TM-41\", \"minutes\": 3}");
    /* the last possible ID, then no more */
    init_state(dev, "{\"next_ids\": {\"note\": 999999999}}");
    call_ok(dev, "create_note", "{\"title\": \"Last\", \"body\": \"x\"}",
            "{\"note_id\": \"N-999999999\", \"title\": \"Last\"}");
    call_fails(dev, "create_note", "{\"title\": \"One more\", \"body\": \"x\"}", "limit_reached",
               "no note IDs are left");
}

/* ============================================================================
 * messages */

static void test_send_message(void **state) {
    struct device *dev = *state;
    /* a full name, a first name, a last name, a contact's number: one thread each */
    call_ok(dev, "send_message", "{\"recipient\": \"Alice Chen\", \"body\": \"Yes, noon\"}",
            "{\"thread_id\": \"TH-3\", \"recipient\": \"Alice Chen\"}");
    call_ok(dev, "send_message", "{\"recipient\": \"alice\", \"body\": \"At Nopa\"}",
            "{\"thread_id\": \"TH-3\", \"recipient\": \"Alice Chen\"}");
    call_ok(dev, "send_message", "{\"recipient\": \"Natarajan\", \"body\": \"Hi Priya\"}",
            "{\"thread_id\": \"TH-4\", \"recipient\": \"Priya Natarajan\"}");
    call_ok(dev, "send_message", "{\"recipient\": \"(415) 555-0142\", \"body\": \"See you\"}",
            "{\"thread_id\": \"TH-3\", \"recipient\": \"Alice Chen\"}");
    /* a number that is no contact starts its own thread, reached again by its number */
    call_ok(dev, "send_message", "{\"recipient\": \"+1 212 555 0100\", \"body\": \"Hello\"}",
            "{\"thread_id\": \"TH-5\", \"recipient\": \"+1 212 555 0100\"}");
    call_ok(dev, "send_message", "{\"recipient\": \"212-555-0100\", \"body\": \"Again\"}",
            "{\"thread_id\": \"TH-5\", \"recipient\": \"+1 212 555 0100\"}");
    json_t *threads = state_key(dev, "threads");
    json_t *want = J("{\"id\": \"TH-3\", \"contact\": \"Alice Chen\", \"messages\": ["
                     "{\"from\": \"them\", \"text\": \"Are we still on for lunch tomorrow?\","
                     " \"unread\": true}, {\"from\": \"me\", \"text\": \"Yes, noon\", \"unread\":"
                     " false}, {\"from\": \"me\", \"text\": \"At Nopa\", \"unread\": false},"
                     " {\"from\": \"me\", \"text\": \"See you\", \"unread\": false}]}");
    assert_json_equal(json_array_get(threads, 2), want);
    assert_int_equal(json_array_size(threads), 5);
    json_decref(want);
    json_decref(threads);
    call_fails(dev, "send_message", "{\"recipient\": \"Bob\", \"body\": \"Hi\"}",
               "unknown_recipient", "no contact or phone number matches \"Bob\"");
    call_fails(dev, "send_message", "{\"recipient\": \"Ali\", \"body\": \"Hi\"}",
               "unknown_recipient", NULL);
    call_fails(dev, "send_message", "{\"recipient\": \"Sam\", \"body\": \"Hi\"}",
               "ambiguous_recipient", "\"Sam\" could be Sam Rivera or Sam Okafor");
    call_ok(dev, "send_message", "{\"recipient\": \"Sam Okafor\", \"body\": \"Hi\"}",
            "{\"thread_id\": \"TH-6\", \"recipient\": \"Sam Okafor\"}");
}

static void test_thread_keeps_the_newest_messages(void **state) {
    struct device *dev = *state;
    for (int i = 0; i < 60; i++) {
        char args[96];
        snprintf(args, sizeof(args), "{\"recipient\": \"Mom\", \"body\": \"message %d\"}", i);
        call_ok(dev, "send_message", args, "{\"thread_id\": \"TH-2\", \"recipient\": \"Mom\"}");
    }
    json_t *threads = state_key(dev, "threads");
    json_t *msgs = json_object_get(json_array_get(threads, 1), "messages");
    assert_int_equal(json_array_size(msgs), 50);
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "text")),
                        "message 10");
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 49), "text")),
                        "message 59");
    json_decref(threads);
}

static void test_read_messages(void **state) {
    struct device *dev = *state;
    call_ok(dev, "read_messages", "{}",
            "{\"count\": 3, \"unread\": 2, \"threads\": ["
            "{\"thread_id\": \"TH-3\", \"contact\": \"Alice Chen\", \"unread\": 1, \"last\":"
            " \"Are we still on for lunch tomorrow?\"},"
            "{\"thread_id\": \"TH-2\", \"contact\": \"Mom\", \"unread\": 1, \"last\":"
            " \"Call me when you land\"},"
            "{\"thread_id\": \"TH-1\", \"contact\": \"Jordan Lee\", \"unread\": 0, \"last\":"
            " \"No worries, see you soon\"}],"
            " \"summary\": \"3 conversations, 2 unread. Alice Chen (TH-3, unread): \\\"Are we"
            " still on for lunch tomorrow?\\\"; Mom (TH-2, unread): \\\"Call me when you"
            " land\\\"; Jordan Lee (TH-1): \\\"No worries, see you soon\\\"\"}");
    call_ok(dev, "read_messages", NULL,
            "{\"count\": 3, \"unread\": 2, \"threads\": ["
            "{\"thread_id\": \"TH-3\", \"contact\": \"Alice Chen\", \"unread\": 1, \"last\":"
            " \"Are we still on for lunch tomorrow?\"},"
            "{\"thread_id\": \"TH-2\", \"contact\": \"Mom\", \"unread\": 1, \"last\":"
            " \"Call me when you land\"},"
            "{\"thread_id\": \"TH-1\", \"contact\": \"Jordan Lee\", \"unread\": 0, \"last\":"
            " \"No worries, see you soon\"}],"
            " \"summary\": \"3 conversations, 2 unread. Alice Chen (TH-3, unread): \\\"Are we"
            " still on for lunch tomorrow?\\\"; Mom (TH-2, unread): \\\"Call me when you"
            " land\\\"; Jordan Lee (TH-1): \\\"No worries, see you soon\\\"\"}");
    call_ok(dev, "read_messages", "{\"thread_id\": \"TH-1\"}",
            "{\"thread_id\": \"TH-1\", \"contact\": \"Jordan Lee\", \"count\": 2, \"messages\": ["
            "{\"from\": \"me\", \"text\": \"Running 10 minutes late\"},"
            " {\"from\": \"Jordan Lee\", \"text\": \"No worries, see you soon\"}],"
            " \"summary\": \"Jordan Lee: me: \\\"Running 10 minutes late\\\"; Jordan Lee:"
            " \\\"No worries, see you soon\\\"\"}");
    /* reading does not change the state (the pack's read_messages has no undo) */
    assert_line(dev, "wifi=on bluetooth=off airplane_mode=off alarms=1 timers=0 unread=2 "
                     "navigating=no ride=no");
    call_fails(dev, "read_messages", "{\"thread_id\": \"TH-9\"}", "not_found",
               "there is no conversation \"TH-9\"");
    /* bounded: at most 5 threads and 5 messages, texts cut */
    for (int i = 0; i < 7; i++) {
        char args[320];
        snprintf(args, sizeof(args), "{\"recipient\": \"555 010%d\", \"body\": \"%0200d\"}", i, i);
        struct device_result r = {0};
        json_t *a = J(args);
        assert_int_equal(dev->ops->call(dev->self, "send_message", a, &r), PIPIT_OK);
        assert_true(r.ok);
        device_result_clear(&r);
        json_decref(a);
    }
    struct device_result r = {0};
    assert_int_equal(dev->ops->call(dev->self, "read_messages", NULL, &r), PIPIT_OK);
    assert_true(r.ok);
    assert_int_equal(json_integer_value(json_object_get(r.data, "count")), 10);
    assert_int_equal(json_array_size(json_object_get(r.data, "threads")), 5);
    char *text = dump(r.data);
    assert_true(strlen(text) < 2000);
    free(text);
    device_result_clear(&r);
}

/* ============================================================================
 * photos */

/* search_photos: the count and the IDs listed. */
static void search(struct device *dev, const char *query, int count, const char *ids) {
    char args[256];
    snprintf(args, sizeof(args), "{\"query\": \"%s\"}", query);
    json_t *a = J(args);
    struct device_result r = {0};
    assert_int_equal(dev->ops->call(dev->self, "search_photos", a, &r), PIPIT_OK);
    if (!r.ok) {
        fail_msg("search %s: %s %s", query, r.code, r.message);
    }
    char got[256] = "";
    size_t used = 0;
    json_t *photos = json_object_get(r.data, "photos");
    for (size_t i = 0; i < json_array_size(photos); i++) {
        const char *id = json_string_value(json_object_get(json_array_get(photos, i), "photo_id"));
        used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s", i ? " " : "", id);
    }
    if (json_integer_value(json_object_get(r.data, "count")) != count || strcmp(got, ids) != 0) {
        fail_msg("search \"%s\": count %d [%s], expected %d [%s]", query,
                 (int)json_integer_value(json_object_get(r.data, "count")), got, count, ids);
    }
    device_result_clear(&r);
    json_decref(a);
}

static void test_search_photos(void **state) {
    struct device *dev = *state;
    search(dev, "beach", 1, "P-106");
    search(dev, "beaches", 1, "P-106");
    search(dev, "Lisbon", 2, "P-106 P-107");
    search(dev, "photos from my trip to Kyoto", 2, "P-103 P-104");
    search(dev, "food in Kyoto", 1, "P-104");
    search(dev, "June", 2, "P-106 P-107");
    search(dev, "dogs", 2, "P-105 P-112");
    search(dev, "2024-03", 2, "P-103 P-104");
    search(dev, "cherry blossom", 1, "P-103");
    search(dev, "travel", 4, "P-103 P-104 P-106 P-107");
    search(dev, "my photos", 12, "P-101 P-102 P-103 P-104 P-105");
    search(dev, "zebra", 0, "");
    search(dev, "sunset beach Lisbon", 1, "P-106");
    call_ok(dev, "search_photos", "{\"query\": \"mountains\"}",
            "{\"count\": 2, \"photos\": [{\"photo_id\": \"P-101\", \"date\": \"2024-01-14\","
            " \"place\": \"Lake Tahoe\", \"tags\": [\"snow\", \"mountains\", \"skiing\"]},"
            " {\"photo_id\": \"P-109\", \"date\": \"2024-08-20\", \"place\": \"Yosemite\","
            " \"tags\": [\"hiking\", \"waterfall\", \"mountains\"]}]}");
}

static void test_share_photo(void **state) {
    struct device *dev = *state;
    call_ok(dev, "share_photo", "{\"photo_id\": \"P-106\", \"recipient\": \"Mom\"}",
            "{\"thread_id\": \"TH-2\", \"recipient\": \"Mom\", \"photo_id\": \"P-106\"}");
    call_ok(dev, "share_photo", "{\"photo_id\": \"p-101\", \"recipient\": \"Jordan\"}",
            "{\"thread_id\": \"TH-1\", \"recipient\": \"Jordan Lee\", \"photo_id\": \"P-101\"}");
    call_ok(dev, "share_photo", "{\"photo_id\": \"P-102\", \"recipient\": \"Elena\"}",
            "{\"thread_id\": \"TH-4\", \"recipient\": \"Elena Petrova\","
            " \"photo_id\": \"P-102\"}");
    json_t *threads = state_key(dev, "threads");
    json_t *msgs = json_object_get(json_array_get(threads, 1), "messages");
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 1), "text")),
                        "[photo P-106: Lisbon, 2024-06-15]");
    json_decref(threads);
    call_fails(dev, "share_photo", "{\"photo_id\": \"P-999\", \"recipient\": \"Mom\"}", "not_found",
               "there is no photo \"P-999\" in the gallery");
    call_fails(dev, "share_photo", "{\"photo_id\": \"P-101\", \"recipient\": \"Zed\"}",
               "unknown_recipient", NULL);
    call_fails(dev, "share_photo", "{\"photo_id\": \"P-101\", \"recipient\": \"sam\"}",
               "ambiguous_recipient", NULL);
}

/* ============================================================================
 * places */

static void test_navigation(void **state) {
    struct device *dev = *state;
    call_ok(dev, "navigate_to", "{\"destination\": \"the airport\", \"mode\": \"driving\"}",
            "{\"destination\": \"San Francisco International Airport\", \"mode\": \"driving\","
            " \"eta_min\": 42}");
    assert_state_key(dev, "navigation",
                     "{\"destination\": \"San Francisco International Airport\", \"mode\":"
                     " \"driving\", \"eta_min\": 42}");
    assert_line(dev, "wifi=on bluetooth=off airplane_mode=off alarms=1 timers=0 unread=2 "
                     "navigating=yes ride=no");
    call_ok(dev, "navigate_to", "{\"destination\": \"Ferry Building\", \"mode\": \"walking\"}",
            "{\"destination\": \"Ferry Building\", \"mode\": \"walking\", \"eta_min\": 36}");
    call_ok(dev, "navigate_to", "{\"destination\": \"Blue Bottle\", \"mode\": \"cycling\"}",
            "{\"destination\": \"Blue Bottle Coffee\", \"mode\": \"cycling\", \"eta_min\": 4}");
    call_ok(dev, "navigate_to", "{\"destination\": \"1 Market St\", \"mode\": \"transit\"}",
            "{\"destination\": \"1 Market St\", \"mode\": \"transit\", \"eta_min\": 12}");
    call_fails(dev, "navigate_to", "{\"destination\": \"Narnia\", \"mode\": \"walking\"}",
               "not_found", "no place or address matches \"Narnia\"");
    call_fails(dev, "navigate_to", "{\"destination\": \"homeless shelter\", \"mode\": \"walking\"}",
               "not_found", NULL);
    call_fails(dev, "navigate_to", "{\"destination\": \"Work\", \"mode\": \"flying\"}",
               "invalid_argument", NULL);
}

static void test_rides(void **state) {
    struct device *dev = *state;
    call_fails(dev, "request_ride", "{\"destination\": \"Atlantis\", \"service\": \"xl\"}",
               "not_found", NULL);
    call_ok(dev, "request_ride", "{\"destination\": \"SFO\", \"service\": \"xl\"}",
            "{\"ride_id\": \"R-1\", \"destination\": \"San Francisco International Airport\","
            " \"service\": \"xl\", \"pickup_min\": 7, \"fare_usd\": 54.15}");
    assert_state_key(dev, "ride",
                     "{\"id\": \"R-1\", \"destination\": \"San Francisco International Airport\","
                     " \"service\": \"xl\", \"pickup_min\": 7}");
    call_fails(dev, "request_ride", "{\"destination\": \"Home\", \"service\": \"standard\"}",
               "ride_in_progress",
               "ride R-1 to San Francisco International Airport is already on its way");
    init_state(dev, "{\"ride\": null}");
    call_ok(dev, "request_ride", "{\"destination\": \"home\", \"service\": \"shared\"}",
            "{\"ride_id\": \"R-2\", \"destination\": \"Home\", \"service\": \"shared\","
            " \"pickup_min\": 9, \"fare_usd\": 8.47}");
    call_fails(dev, "request_ride", "{\"destination\": \"Home\", \"service\": \"limo\"}",
               "invalid_argument", NULL);
}

/* ============================================================================
 * files */

static void test_files(void **state) {
    struct device *dev = *state;
    call_ok(dev, "find_file", "{\"name\": \"Q3 report\"}",
            "{\"count\": 1, \"files\": [{\"file_id\": \"F-201\", \"name\": \"Q3-report.pdf\","
            " \"path\": \"/Documents/Work/Q3-report.pdf\"}]}");
    call_ok(dev, "find_file", "{\"name\": \"report\"}",
            "{\"count\": 2, \"files\": [{\"file_id\": \"F-201\", \"name\": \"Q3-report.pdf\","
            " \"path\": \"/Documents/Work/Q3-report.pdf\"}, {\"file_id\": \"F-202\", \"name\":"
            " \"Q2-report.pdf\", \"path\": \"/Documents/Work/Q2-report.pdf\"}]}");
    /* folder names match too; at most 5 listed, the count is the total */
    struct device_result r = {0};
    json_t *a = J("{\"name\": \"pdf\"}");
    assert_int_equal(dev->ops->call(dev->self, "find_file", a, &r), PIPIT_OK);
    assert_true(r.ok);
    assert_int_equal(json_integer_value(json_object_get(r.data, "count")), 7);
    assert_int_equal(json_array_size(json_object_get(r.data, "files")), 5);
    device_result_clear(&r);
    json_decref(a);
    /* no path holds the name: the files whose paths hold the most of its words */
    call_ok(dev, "find_file", "{\"name\": \"budget spreadsheet\"}",
            "{\"count\": 1, \"files\": [{\"file_id\": \"F-203\", \"name\": \"budget-2024.xlsx\","
            " \"path\": \"/Documents/Work/budget-2024.xlsx\"}]}");
    call_ok(dev, "find_file", "{\"name\": \"my banana bread recipe\"}",
            "{\"count\": 1, \"files\": [{\"file_id\": \"F-206\", \"name\": \"banana-bread.txt\","
            " \"path\": \"/Documents/Recipes/banana-bread.txt\"}]}");
    call_fails(dev, "find_file", "{\"name\": \"the file\"}", "file_not_found", NULL);
    call_fails(dev, "find_file", "{\"name\": \"vacation video\"}", "file_not_found",
               "no file name or folder matches \"vacation video\"");
    call_fails(dev, "find_file", "{\"name\": \"---\"}", "file_not_found", NULL);
    call_ok(dev, "open_file", "{\"file_id\": \"F-201\"}",
            "{\"file_id\": \"F-201\", \"file_name\": \"Q3-report.pdf\", \"path\":"
            " \"/Documents/Work/Q3-report.pdf\", \"size_kb\": 2310}");
    call_ok(dev, "open_file", "{\"file_id\": \"banana-bread.txt\"}",
            "{\"file_id\": \"F-206\", \"file_name\": \"banana-bread.txt\", \"path\":"
            " \"/Documents/Recipes/banana-bread.txt\", \"size_kb\": 3}");
    call_ok(dev, "open_file", "{\"file_id\": \"/Music/road-trip.m3u\"}",
            "{\"file_id\": \"F-209\", \"file_name\": \"road-trip.m3u\", \"path\":"
            " \"/Music/road-trip.m3u\", \"size_kb\": 2}");
    call_fails(dev, "open_file", "{\"file_id\": \"F-299\"}", "file_not_found",
               "there is no file \"F-299\"");
    call_fails(dev, "open_file", "{\"file_id\": \"F-211\"}", "permission_denied",
               "passport-scan.pdf is in the secure folder");
}

/* ============================================================================
 * radios, connectivity, permissions */

static void test_radios_and_offline(void **state) {
    struct device *dev = *state;
    call_ok(dev, "set_bluetooth", "{\"enabled\": true}", "{\"bluetooth\": true}");
    call_ok(dev, "set_airplane_mode", "{\"enabled\": true}", "{\"airplane_mode\": true}");
    /* airplane mode with Wi-Fi on: still online */
    call_ok(dev, "create_ticket", "{\"summary\": \"x\", \"priority\": \"low\"}",
            "{\"ticket_id\": \"T-1001\", \"status\": \"open\", \"priority\": \"low\"}");
    call_ok(dev, "set_wifi", "{\"enabled\": false}", "{\"wifi\": false}");
    assert_line(dev, "wifi=off bluetooth=on airplane_mode=on alarms=1 timers=0 unread=2 "
                     "navigating=no ride=no");
    const char *msg = "the phone is offline: airplane mode is on and Wi-Fi is off";
    call_fails(dev, "send_message", "{\"recipient\": \"Mom\", \"body\": \"Landed\"}", "offline",
               msg);
    call_fails(dev, "share_photo", "{\"photo_id\": \"P-101\", \"recipient\": \"Mom\"}", "offline",
               msg);
    call_fails(dev, "create_ticket", "{\"summary\": \"x\", \"priority\": \"low\"}", "offline", msg);
    call_fails(dev, "request_ride", "{\"destination\": \"Home\", \"service\": \"xl\"}", "offline",
               msg);
    /* a failure still names the real problem first */
    call_fails(dev, "send_message", "{\"recipient\": \"Bob\", \"body\": \"x\"}",
               "unknown_recipient", NULL);
    /* the rest works offline */
    call_ok(dev, "set_timer", "{\"minutes\": 3}", "{\"timer_id\": \"TM-1\", \"minutes\": 3}");
    call_ok(dev, "navigate_to", "{\"destination\": \"Home\", \"mode\": \"walking\"}",
            "{\"destination\": \"Home\", \"mode\": \"walking\", \"eta_min\": 72}");
    call_ok(dev, "set_airplane_mode", "{\"enabled\": false}", "{\"airplane_mode\": false}");
    call_ok(dev, "send_message", "{\"recipient\": \"Mom\", \"body\": \"Landed\"}",
            "{\"thread_id\": \"TH-2\", \"recipient\": \"Mom\"}");
}

static void test_permissions(void **state) {
    struct device *dev = *state;
    static const struct {
        const char *perm;
        const char *message;
        const char *tools[4];
    } CASES[] = {
        {"messages",
         "the app is not allowed to use messages",
         {"send_message", "read_messages", "share_photo", NULL}},
        {"photos",
         "the app is not allowed to open the photo gallery",
         {"search_photos", "share_photo", NULL, NULL}},
        {"location",
         "the app is not allowed to use your location",
         {"navigate_to", "request_ride", NULL, NULL}},
        {"files", "the app is not allowed to access files", {"find_file", "open_file", NULL, NULL}},
        {"settings",
         "the app is not allowed to change system settings",
         {"set_wifi", "set_bluetooth", "set_airplane_mode", NULL}},
        {"tickets",
         "the app is not allowed to use the IT helpdesk",
         {"create_ticket", "get_ticket_status", NULL, NULL}},
    };
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        char o[96];
        snprintf(o, sizeof(o), "{\"permissions\": {\"%s\": false}}", CASES[i].perm);
        init_state(dev, o);
        for (size_t t = 0; t < 4 && CASES[i].tools[t] != NULL; t++) {
            const char *args = NULL;
            for (size_t v = 0; v < N_VALID_CALLS; v++) {
                if (strcmp(VALID_CALLS[v].tool, CASES[i].tools[t]) == 0) {
                    args = VALID_CALLS[v].args;
                }
            }
            call_fails(dev, CASES[i].tools[t], args, "permission_denied", CASES[i].message);
            /* permission comes before the argument checks */
            call_fails(dev, CASES[i].tools[t], "{}", "permission_denied", CASES[i].message);
        }
        snprintf(o, sizeof(o), "{\"permissions\": {\"%s\": true}}", CASES[i].perm);
        init_state(dev, o);
    }
    /* contacts: names need it, bare numbers do not */
    init_state(dev, "{\"permissions\": {\"contacts\": false}}");
    call_fails(dev, "send_message", "{\"recipient\": \"Alice\", \"body\": \"Hi\"}",
               "permission_denied", "the app is not allowed to read your contacts");
    call_fails(dev, "share_photo", "{\"photo_id\": \"P-101\", \"recipient\": \"Mom\"}",
               "permission_denied", NULL);
    call_ok(dev, "send_message", "{\"recipient\": \"+1 415 555 0142\", \"body\": \"Hi\"}",
            "{\"thread_id\": \"TH-4\", \"recipient\": \"+1 415 555 0142\"}");
    /* merged, not replaced: the other permissions kept their values */
    assert_state_key(dev, "permissions",
                     "{\"contacts\": false, \"messages\": true, \"photos\": true, \"location\":"
                     " true, \"files\": true, \"settings\": true, \"tickets\": true}");
}

/* ============================================================================
 * invalid arguments and limits */

static void test_invalid_arguments(void **state) {
    struct device *dev = *state;
    static const struct {
        const char *tool;
        const char *args;
        const char *message; /* NULL: any */
    } CASES[] = {
        {"send_message", "{\"body\": \"Hi\"}", "argument \"recipient\" is missing"},
        {"send_message", "{\"recipient\": \"Mom\"}", "argument \"body\" is missing"},
        {"send_message", "{\"recipient\": \"Mom\", \"body\": \"  \"}", NULL},
        {"send_message", "{\"recipient\": 42, \"body\": \"Hi\"}",
         "argument \"recipient\" must be a non-empty string of at most 100 characters on one "
         "line, got 42"},
        {"send_message", "{\"recipient\": \"Mom\\nDad\", \"body\": \"Hi\"}", NULL},
        {"read_messages", "{\"thread_id\": 3}", NULL},
        {"read_messages", "{\"thread_id\": \"\"}", NULL},
        {"search_photos", "{}", NULL},
        {"search_photos", "{\"query\": \"\"}", NULL},
        {"share_photo", "{\"photo_id\": \"P-101\"}", NULL},
        {"navigate_to", "{\"destination\": \"Home\"}", NULL},
        {"navigate_to", "{\"mode\": \"driving\"}", NULL},
        {"request_ride", "{\"destination\": \"Home\", \"service\": \"XL\"}",
         "argument \"service\" must be \"standard\", \"xl\", \"premium\" or \"shared\", got "
         "\"XL\""},
        {"set_alarm", "{}", NULL},
        {"set_alarm", "{\"time\": \"07:00\", \"label\": 3}", NULL},
        {"set_timer", "{}", "argument \"minutes\" is missing"},
        {"set_timer", "{\"minutes\": 0}",
         "argument \"minutes\" must be an integer from 1 to 1440, got 0"},
        {"set_timer", "{\"minutes\": 1441}", NULL},
        {"set_timer", "{\"minutes\": 2.5}", NULL},
        {"set_timer", "{\"minutes\": \"10\"}", NULL},
        {"set_timer", "{\"minutes\": 1e300}", NULL},
        {"cancel_timer", "{}", NULL},
        {"create_note", "{\"title\": \"x\"}", "argument \"body\" is missing"},
        {"create_note", "{\"body\": \"x\"}", NULL},
        {"append_note", "{\"note_id\": \"N-1\", \"text\": \"\"}", NULL},
        {"create_ticket", "{\"summary\": \"x\", \"priority\": \"critical\"}", NULL},
        {"create_ticket", "{\"priority\": \"low\"}", NULL},
        {"get_ticket_status", "{\"ticket_id\": null}", NULL},
        {"find_file", "{\"name\": []}", NULL},
        {"open_file", "{}", NULL},
        {"set_wifi", "{\"enabled\": \"on\"}",
         "argument \"enabled\" must be true or false, got \"on\""},
        {"set_bluetooth", "{\"enabled\": 1}", NULL},
        {"set_airplane_mode", "{}", "argument \"enabled\" is missing"},
    };
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++) {
        call_fails(dev, CASES[i].tool, CASES[i].args, "invalid_argument", CASES[i].message);
    }
    /* too long, and invalid UTF-8 (the schema validator would catch both first) */
    char body[1100];
    memset(body, 'b', 1001);
    body[1001] = '\0';
    json_t *a = json_pack("{s:s,s:s}", "recipient", "Mom", "body", body);
    struct device_result r = {0};
    assert_int_equal(dev->ops->call(dev->self, "send_message", a, &r), PIPIT_OK);
    assert_string_equal(r.code, "invalid_argument");
    device_result_clear(&r);
    json_decref(a);
    a = json_object();
    json_object_set_new(a, "title", json_stringn_nocheck("a\0b", 3));
    json_object_set_new(a, "body", json_string("x"));
    assert_int_equal(dev->ops->call(dev->self, "create_note", a, &r), PIPIT_OK);
    assert_string_equal(r.code, "invalid_argument");
    device_result_clear(&r);
    json_decref(a);
    /* unknown arguments are ignored: rejecting them is the schema validator's job */
    call_ok(dev, "set_wifi", "{\"enabled\": true, \"ssid\": \"x\"}", "{\"wifi\": true}");
}

static void test_limits(void **state) {
    struct device *dev = *state;
    for (int i = 0; i < 10; i++) {
        struct device_result r = {0};
        json_t *a = J("{\"minutes\": 5}");
        assert_int_equal(dev->ops->call(dev->self, "set_timer", a, &r), PIPIT_OK);
        assert_true(r.ok);
        device_result_clear(&r);
        json_decref(a);
    }
    call_fails(dev, "set_timer", "{\"minutes\": 5}", "limit_reached",
               "the phone runs at most 10 timers");
    for (int i = 1; i < 20; i++) {
        struct device_result r = {0};
        json_t *a = J("{\"time\": \"08:00\"}");
        assert_int_equal(dev->ops->call(dev->self, "set_alarm", a, &r), PIPIT_OK);
        assert_true(r.ok);
        device_result_clear(&r);
        json_decref(a);
    }
    call_fails(dev, "set_alarm", "{\"time\": \"08:00\"}", "limit_reached",
               "the phone holds at most 20 alarms");
    /* a note grows to 8000 characters, not beyond */
    char text[4100];
    memset(text, 'x', 3990);
    text[3990] = '\0'; /* 17 + 1 + 3990 + 1 + 3990 = 7999 */
    json_t *a = json_pack("{s:s,s:s}", "note_id", "N-2", "text", text);
    for (int i = 0; i < 2; i++) {
        struct device_result r = {0};
        assert_int_equal(dev->ops->call(dev->self, "append_note", a, &r), PIPIT_OK);
        assert_true(r.ok);
        device_result_clear(&r);
    }
    json_decref(a);
    call_fails(dev, "append_note", "{\"note_id\": \"N-2\", \"text\": \"more\"}", "limit_reached",
               "a note holds at most 8000 characters");
}

/* ============================================================================
 * set_state */

static void test_set_state_all_or_nothing(void **state) {
    struct device *dev = *state;
    set_state_fails(dev, "{\"wifi\": false, \"wify\": true}", "unknown state key", "\"wify\"");
    set_state_fails(dev, "{\"wifi\": \"on\"}", "wifi: \"on\"", "true or false");
    set_state_fails(dev, "[]", "not an object", "an array");
    set_state_fails(dev, "{\"permissions\": {\"camera\": true}}", "unknown key \"camera\"",
                    "\"contacts\"");
    set_state_fails(dev, "{\"permissions\": {\"files\": 1}}", "permissions.files: 1",
                    "true or false");
    set_state_fails(dev, "{\"next_ids\": {\"ticket\": 0}}", "next_ids.ticket: 0", "1 to 999999999");
    set_state_fails(dev, "{\"contacts\": [{\"name\": \"A\"}]}", "contacts[0].number: missing",
                    "expected a string");
    set_state_fails(dev, "{\"contacts\": [{\"name\": \"A\", \"number\": \"call me\"}]}",
                    "contacts[0].number: \"call me\"", "phone number");
    set_state_fails(dev,
                    "{\"contacts\": [{\"name\": \"Al\", \"number\": \"123\"}, {\"name\": \"al\","
                    " \"number\": \"456\"}]}",
                    "contacts[1].name: \"al\"", "duplicate name");
    set_state_fails(dev, "{\"contacts\": [{\"name\": \"A\", \"number\": \"1234\", \"x\": 1}]}",
                    "contacts[0]: unknown key", "\"x\"");
    set_state_fails(dev, "{\"timers\": [{\"id\": \"TM-1\", \"minutes\": 0}]}",
                    "timers[0].minutes: 0", "1 to 1440");
    set_state_fails(dev,
                    "{\"timers\": [{\"id\": \"TM-1\", \"minutes\": 1}, {\"id\": \"tm-1\","
                    " \"minutes\": 2}]}",
                    "timers[1].id", "duplicate ID");
    set_state_fails(dev, "{\"alarms\": [{\"id\": \"A-1\", \"time\": \"7:00\", \"label\": \"x\"}]}",
                    "alarms[0].time", "5 to 5 characters");
    set_state_fails(dev, "{\"alarms\": [{\"id\": \"A-1\", \"time\": \"24:00\", \"label\": \"x\"}]}",
                    "alarms[0].time: \"24:00\"", "HH:MM");
    set_state_fails(dev,
                    "{\"threads\": [{\"id\": \"TH-1\", \"contact\": \"Mom\", \"messages\":"
                    " [{\"from\": \"me\", \"text\": \"x\", \"unread\": true}]}]}",
                    "threads[0].messages[0]", "can't be unread");
    set_state_fails(dev,
                    "{\"threads\": [{\"id\": \"TH-1\", \"contact\": \"Mom\", \"messages\":"
                    " [{\"from\": \"dad\", \"text\": \"x\"}]}]}",
                    "threads[0].messages[0].from: \"dad\"", "\"them\" or \"me\"");
    set_state_fails(dev,
                    "{\"photos\": [{\"id\": \"P-1\", \"date\": \"2024-02-30\", \"place\": \"x\","
                    " \"tags\": []}]}",
                    "photos[0].date: \"2024-02-30\"", "YYYY-MM-DD");
    set_state_fails(dev,
                    "{\"photos\": [{\"id\": \"P-1\", \"date\": \"2024-02-29\", \"place\": \"x\","
                    " \"tags\": [\"\"]}]}",
                    "photos[0].tags[0]", "1 to 32 characters");
    set_state_fails(dev,
                    "{\"files\": [{\"id\": \"F-1\", \"path\": \"Documents/x\", \"size_kb\": 1}]}",
                    "files[0].path", "absolute path");
    set_state_fails(dev,
                    "{\"tickets\": [{\"id\": \"T-1\", \"summary\": \"x\", \"priority\": \"low\","
                    " \"status\": \"pending\"}]}",
                    "tickets[0].status: \"pending\"", "\"in_progress\"");
    set_state_fails(dev, "{\"notes\": [{\"id\": \"N-1\", \"title\": \"a\\nb\", \"body\": \"\"}]}",
                    "notes[0].title", "single line");
    set_state_fails(dev, "{\"navigation\": {\"destination\": \"Home\", \"mode\": \"driving\"}}",
                    "navigation.eta_min: missing", "integer");
    set_state_fails(dev, "{\"ride\": 5}", "ride: 5", "an object");
    set_state_fails(dev, "{\"timers\": {}}", "timers: an object", "an array of at most 10");
    /* a good key next to a bad one: nothing applied */
    set_state_fails(dev,
                    "{\"wifi\": false, \"timers\": [{\"id\": \"TM-1\", \"minutes\": 5}], \"notes\":"
                    " [{\"id\": \"N-1\", \"title\": \"t\", \"body\": 7}]}",
                    "notes[0].body: 7", "0 to 8000 characters");
    /* defaults for the optional fields */
    init_state(dev, "{\"alarms\": [{\"id\": \"A-7\", \"time\": \"09:15\", \"label\": \"x\"}],"
                    " \"files\": [{\"id\": \"F-1\", \"path\": \"/a.txt\", \"size_kb\": 0}],"
                    " \"threads\": [{\"id\": \"TH-9\", \"contact\": \"Mom\", \"messages\":"
                    " [{\"from\": \"them\", \"text\": \"hi\"}]}],"
                    " \"navigation\": {\"destination\": \"Home\", \"mode\": \"driving\","
                    " \"eta_min\": 12}}");
    assert_state_key(
        dev, "alarms",
        "[{\"id\": \"A-7\", \"time\": \"09:15\", \"label\": \"x\", \"enabled\": true}]");
    assert_state_key(
        dev, "files",
        "[{\"id\": \"F-1\", \"path\": \"/a.txt\", \"size_kb\": 0, \"locked\": false}]");
    assert_line(dev, "wifi=on bluetooth=off airplane_mode=off alarms=1 timers=0 unread=0 "
                     "navigating=yes ride=no");
}

/* ============================================================================
 * agreement with tools/phone.json */

static void test_pack_agrees_with_the_device(void **state) {
    struct device *dev = *state;
    struct pipit_toolset *ts = NULL;
    struct pipit_error err = {0};
    assert_int_equal(pipit_toolset_load_file(PHONE_PACK, &ts, &err), PIPIT_OK);
    json_t *keys = get_state(dev);
    size_t n = pipit_toolset_n_tools(ts);
    size_t handled = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = pipit_toolset_tool_name(ts, i);
        if (strcmp(name, "process_with_cloud_llm") == 0) {
            struct device_result r = {0};
            assert_int_equal(dev->ops->call(dev->self, name, NULL, &r), PIPIT_ERR_UNKNOWN_TOOL);
            assert_string_equal(r.code, "unknown_tool");
            device_result_clear(&r);
            continue;
        }
        const char *args = NULL;
        for (size_t v = 0; v < N_VALID_CALLS; v++) {
            if (strcmp(VALID_CALLS[v].tool, name) == 0) {
                args = VALID_CALLS[v].args;
            }
        }
        if (args == NULL) {
            fail_msg("the pack's %s has no valid call in this test", name);
        }
        /* the valid call passes the pack's own schema */
        struct pipit_arg_problem problems[4];
        size_t n_problems = 0;
        assert_int_equal(
            pipit_toolset_validate_args(ts, name, args, strlen(args), problems, 4, &n_problems),
            PIPIT_OK);
        /* every code the pack has a template for is one the phone reports, or one of the
         * agent's validation refusals (src/render.h) */
        static const char *const CODES[] = {"permission_denied",
                                            "invalid_argument",
                                            "unknown_recipient",
                                            "ambiguous_recipient",
                                            "not_found",
                                            "file_not_found",
                                            "offline",
                                            "limit_reached",
                                            "ride_in_progress",
                                            "out_of_range",
                                            "not_allowed",
                                            "invalid_arguments",
                                            "*"};
        const struct pipit_tool *tool = pipit_toolset_tool(ts, i);
        for (size_t f = 0; f < tool->n_failures; f++) {
            bool known = false;
            for (size_t k = 0; k < sizeof(CODES) / sizeof(CODES[0]); k++) {
                known = known || strcmp(CODES[k], tool->failures[f].code) == 0;
            }
            if (!known) {
                fail_msg("%s: the pack's code %s is not one the phone reports", name,
                         tool->failures[f].code);
            }
        }
        const char *const *undo = NULL;
        size_t n_undo = 0;
        enum pipit_undo_kind kind = pipit_toolset_undo(ts, i, &undo, &n_undo);
        for (size_t k = 0; k < n_undo; k++) {
            if (json_object_get(keys, undo[k]) == NULL) {
                fail_msg("%s: undo key %s is not a state key", name, undo[k]);
            }
        }
        /* undo: putting the undo keys back restores the whole state but the
         * counters; a tool without undo changes nothing */
        struct device fresh;
        assert_int_equal(phone_device_new(NULL, &fresh, NULL), PIPIT_OK);
        init_state(&fresh, "{\"timers\": [{\"id\": \"TM-1\", \"minutes\": 5}]}");
        json_t *before = get_state(&fresh);
        json_t *a = J(args);
        struct device_result r = {0};
        assert_int_equal(fresh.ops->call(fresh.self, name, a, &r), PIPIT_OK);
        if (!r.ok) {
            fail_msg("%s %s: %s %s", name, args, r.code, r.message);
        }
        device_result_clear(&r);
        json_t *after = get_state(&fresh);
        if (kind == PIPIT_UNDO_KEYS) {
            json_t *restore = json_object();
            for (size_t k = 0; k < n_undo; k++) {
                json_object_set(restore, undo[k], json_object_get(before, undo[k]));
            }
            assert_int_equal(fresh.ops->set_state(fresh.self, restore, &err), PIPIT_OK);
            json_decref(restore);
            json_decref(after);
            after = get_state(&fresh);
            json_object_del(after, "next_ids");
            json_object_del(before, "next_ids");
            assert_json_equal(after, before);
        } else if (kind == PIPIT_UNDO_NO_STATE) {
            assert_json_equal(after, before);
        } else {
            assert_false(json_equal(after, before)); /* "none": it did change something */
        }
        json_decref(after);
        json_decref(before);
        json_decref(a);
        device_free(&fresh);
        handled++;
    }
    assert_int_equal(handled, N_VALID_CALLS);
    json_decref(keys);
    pipit_toolset_free(ts);
}

static void test_unknown_tool_and_bad_args(void **state) {
    struct device *dev = *state;
    struct device_result r = {0};
    assert_int_equal(dev->ops->call(dev->self, "take_photo", NULL, &r), PIPIT_ERR_UNKNOWN_TOOL);
    assert_string_equal(r.code, "unknown_tool");
    assert_string_equal(r.message, "the phone has no tool \"take_photo\"");
    device_result_clear(&r);
    json_t *arr = J("[1]");
    assert_int_equal(dev->ops->call(dev->self, "set_wifi", arr, &r), PIPIT_ERR_INVALID_ARGS);
    assert_string_equal(r.code, "invalid_argument");
    assert_string_equal(r.message, "the arguments must be an object, got an array");
    device_result_clear(&r);
    json_decref(arr);
}

/* ============================================================================
 * fuzz-ish: odd JSON everywhere never crashes and always yields a code */

static bool utf8_ok(const char *s) {
    json_t *j = json_string(s); /* NULL when not valid UTF-8 */
    json_decref(j);
    return j != NULL;
}

static void call_odd(struct device *dev, const char *tool, json_t *args) {
    struct device_result r = {0};
    enum pipit_status st = dev->ops->call(dev->self, tool, args, &r);
    assert_true(st == PIPIT_OK || st == PIPIT_ERR_INVALID_ARGS);
    if (r.ok) {
        assert_int_equal(st, PIPIT_OK);
        assert_true(json_is_object(r.data));
        char *text = dump(r.data);
        assert_non_null(text); /* valid UTF-8 all the way down */
        assert_true(strlen(text) < 4096);
        free(text);
    } else {
        assert_null(r.data);
        assert_true(strlen(r.code) > 0);
        assert_true(strlen(r.message) > 0);
        if (!utf8_ok(r.message)) {
            fail_msg("%s: message is not valid UTF-8", tool);
        }
    }
    device_result_clear(&r);
}

/* The state stays inside its domain: it always reads back through set_state. */
static void check_domain(struct device *dev) {
    json_t *s = get_state(dev);
    struct pipit_error err = {0};
    if (dev->ops->set_state(dev->self, s, &err) != PIPIT_OK) {
        fail_msg("a call left a state set_state refuses: %s", err.text);
    }
    char line[256];
    device_state_line(dev, line, sizeof(line));
    assert_true(utf8_ok(line));
    json_decref(s);
}

static void test_fuzz_odd_json(void **state) {
    struct device *dev = *state;
    static const char *const arg_names[] = {
        "recipient", "body",    "thread_id", "query",     "photo_id", "destination", "mode",
        "service",   "time",    "label",     "minutes",   "timer_id", "title",       "note_id",
        "text",      "summary", "priority",  "ticket_id", "name",     "file_id",     "enabled"};
    const size_t n_names = sizeof(arg_names) / sizeof(arg_names[0]);
    char long_string[5000];
    memset(long_string, 'a', sizeof(long_string) - 1);
    long_string[sizeof(long_string) - 1] = '\0';
    json_t *odd[] = {
        json_null(),
        json_true(),
        json_false(),
        json_integer(0),
        json_integer(-1),
        json_integer(10),
        json_integer(INT64_MAX),
        json_integer(INT64_MIN),
        json_real(-0.0),
        json_real(5.0),
        json_real(1e308),
        json_real(9.3e18),
        json_string(""),
        json_string(" "),
        json_string("Mom"),
        json_string("Sam"),
        json_string("+1 415 555 0142"),
        json_string("TM-1"),
        json_string("N-1"),
        json_string("T-1000"),
        json_string("P-106"),
        json_string("F-211"),
        json_string("07:30"),
        json_string("driving"),
        json_string("xl"),
        json_string("high"),
        json_string("SFO"),
        json_string("1 Market St"),
        json_string(long_string),
        json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x93\xb7 caf\xc3\xa9 \xe2\x80\x94 \\n \"q\""),
        json_string("line\nbreak\ttab"),
        json_stringn_nocheck("\xff\xfe\x00\xc3", 4), /* invalid UTF-8 with a NUL */
        json_stringn_nocheck("TM-1\0x", 6),
        json_array(),
        json_pack("[i,s]", 1, "on"),
        json_object(),
        json_pack("{s:s}", "mode", "on"),
    };
    const size_t n_odd = sizeof(odd) / sizeof(odd[0]);
    for (size_t i = 0; i < n_odd; i++) {
        assert_non_null(odd[i]);
    }
    const char *starts[] = {
        "{}",
        "{\"airplane_mode\": true, \"wifi\": false}",
        "{\"permissions\": {\"contacts\": false, \"messages\": false, \"photos\": false,"
        " \"location\": false, \"files\": false, \"settings\": false, \"tickets\": false}}",
        "{\"permissions\": {\"contacts\": true, \"messages\": true, \"photos\": true,"
        " \"location\": true, \"files\": true, \"settings\": true, \"tickets\": true},"
        " \"airplane_mode\": false, \"ride\": null, \"contacts\": [], \"threads\": [],"
        " \"photos\": [], \"files\": [], \"notes\": [], \"tickets\": [],"
        " \"next_ids\": {\"timer\": 999999998, \"note\": 999999999}}",
    };
    size_t calls = 0;
    for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
        init_state(dev, starts[s]);
        for (size_t t = 0; t < N_VALID_CALLS; t++) {
            const char *tool = VALID_CALLS[t].tool;
            /* whole-argument oddities: NULL, and every non-object value */
            call_odd(dev, tool, NULL);
            calls++;
            for (size_t i = 0; i < n_odd; i++) {
                call_odd(dev, tool, odd[i]);
                calls++;
            }
            /* every argument name set to every odd value, alone and in pairs */
            for (size_t a = 0; a < n_names; a++) {
                for (size_t i = 0; i < n_odd; i++) {
                    json_t *args = json_object();
                    json_object_set(args, arg_names[a], odd[i]);
                    call_odd(dev, tool, args);
                    json_object_set(args, arg_names[(a + 1) % n_names], odd[(i * 7 + 3) % n_odd]);
                    call_odd(dev, tool, args);
                    json_decref(args);
                    calls += 2;
                }
            }
            check_domain(dev);
        }
    }
    /* set_state with odd values for every key, and inside every item, never crashes */
    json_t *keys = get_state(dev);
    const char *key;
    json_t *v;
    json_object_foreach(keys, key, v) {
        for (size_t i = 0; i < n_odd; i++) {
            json_t *o = json_object();
            json_object_set(o, key, odd[i]);
            struct pipit_error err = {0};
            enum pipit_status st = dev->ops->set_state(dev->self, o, &err);
            assert_true(st == PIPIT_OK || st == PIPIT_ERR_JSON);
            assert_true(utf8_ok(err.text));
            json_decref(o);
        }
    }
    json_decref(keys);
    struct device fresh;
    assert_int_equal(phone_device_new(NULL, &fresh, NULL), PIPIT_OK);
    keys = get_state(&fresh);
    json_object_foreach(keys, key, v) {
        json_t *item = json_is_array(v) ? json_array_get(v, 0) : v;
        if (!json_is_object(item)) {
            continue;
        }
        const char *field;
        json_t *fv;
        json_object_foreach(item, field, fv) {
            for (size_t i = 0; i < n_odd; i++) {
                json_t *copy = json_deep_copy(v);
                json_t *target = json_is_array(copy) ? json_array_get(copy, 0) : copy;
                json_object_set(target, field, odd[i]);
                json_t *o = json_pack("{s:o}", key, copy);
                struct pipit_error err = {0};
                enum pipit_status st = fresh.ops->set_state(fresh.self, o, &err);
                assert_true(st == PIPIT_OK || st == PIPIT_ERR_JSON);
                assert_true(utf8_ok(err.text));
                json_decref(o);
                check_domain(&fresh);
            }
        }
    }
    json_decref(keys);
    device_free(&fresh);
    json_t *weird_key = json_object();
    json_object_set_new_nocheck(weird_key, "\xff\xfe\xfd", json_true());
    struct pipit_error err = {0};
    assert_int_equal(dev->ops->set_state(dev->self, weird_key, &err), PIPIT_ERR_JSON);
    assert_true(utf8_ok(err.text));
    json_decref(weird_key);
    for (size_t i = 0; i < n_odd; i++) {
        json_decref(odd[i]);
    }
    assert_true(calls > 10000);
}

static json_t *phone_param(json_t *spec, const char *tool, const char *arg) {
    json_t *t;
    size_t i;
    json_array_foreach(json_object_get(spec, "tools"), i, t) {
        json_t *fn = json_object_get(t, "function");
        if (strcmp(json_string_value(json_object_get(fn, "name")), tool) == 0) {
            return json_object_get(json_object_get(json_object_get(fn, "parameters"), "properties"),
                                   arg);
        }
    }
    fail_msg("no %s.%s", tool, arg);
    return NULL;
}

static void other_limits(json_t *spec) {
    json_object_set_new(phone_param(spec, "set_timer", "minutes"), "maximum", json_integer(90));
    json_object_set_new(phone_param(spec, "navigate_to", "mode"), "enum",
                        json_pack("[s,s]", "walking", "transit"));
    json_object_set_new(phone_param(spec, "send_message", "body"), "maxLength", json_integer(10));
    /* a maxLength above the phone's capacity does not lift it */
    json_object_set_new(phone_param(spec, "create_note", "title"), "maxLength", json_integer(4000));
}

static void teleport(json_t *spec) {
    json_object_set_new(phone_param(spec, "navigate_to", "mode"), "enum",
                        json_pack("[s,s]", "walking", "teleport"));
}

/* The phone takes its limits from the tool set it is made for: another spec's timer range,
 * travel modes and message length are refused with the spec's numbers; a mode the phone cannot
 * simulate is refused at creation, naming the tool and the value. */
static void test_limits_come_from_the_spec(void **state) {
    (void)state;
    struct device dev;
    phone_for_spec(&dev, other_limits);
    call_fails(&dev, "set_timer", "{\"minutes\": 120}", "invalid_argument",
               "argument \"minutes\" must be an integer from 1 to 90, got 120");
    call_ok(&dev, "set_timer", "{\"minutes\": 90}", "{\"timer_id\": \"TM-1\", \"minutes\": 90}");
    call_fails(&dev, "navigate_to", "{\"destination\": \"Kyoto\", \"mode\": \"driving\"}",
               "invalid_argument",
               "argument \"mode\" must be \"walking\" or \"transit\", got \"driving\"");
    call_fails(&dev, "send_message", "{\"recipient\": \"Mom\", \"body\": \"landed safely, love\"}",
               "invalid_argument", NULL);
    char title[400];
    memset(title, 'a', 300);
    title[300] = '\0';
    char args[512];
    snprintf(args, sizeof(args), "{\"title\": \"%s\", \"body\": \"x\"}", title);
    call_fails(&dev, "create_note", args, "invalid_argument", NULL); /* the phone's 200 */
    device_free(&dev);

    /* the shipped spec: the shipped limits */
    phone_for_spec(&dev, NULL);
    call_ok(&dev, "set_timer", "{\"minutes\": 120}", "{\"timer_id\": \"TM-1\", \"minutes\": 120}");
    device_free(&dev);

    json_t *spec = json_load_file(PIPIT_SOURCE_DIR "/tools/phone.json", 0, NULL);
    json_t *tool;
    size_t i;
    json_array_foreach(json_object_get(spec, "tools"), i, tool) {
        json_object_del(json_object_get(tool, "pipit"), "examples");
    }
    teleport(spec);
    char *text = json_dumps(spec, 0);
    json_decref(spec);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    assert_int_equal(pipit_toolset_load_string(text, strlen(text), "tp.json", &ts, &err), PIPIT_OK);
    free(text);
    assert_int_equal(phone_device_new(ts, &dev, &err), PIPIT_ERR_INVALID_ARG);
    assert_non_null(strstr(err.text, "tp.json: navigate_to.mode: \"teleport\""));
    pipit_toolset_free(ts);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_is_identity, setup, teardown),
        cmocka_unit_test_setup_teardown(test_misuse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ticket_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timer_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_note_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alarm_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_id_skips_ids_in_use, setup, teardown),
        cmocka_unit_test_setup_teardown(test_send_message, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thread_keeps_the_newest_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_search_photos, setup, teardown),
        cmocka_unit_test_setup_teardown(test_share_photo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_navigation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_radios_and_offline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_permissions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_state_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pack_agrees_with_the_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_tool_and_bad_args, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fuzz_odd_json, setup, teardown),
        cmocka_unit_test(test_limits_come_from_the_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
