/*
 * phone.c - a simulated smartphone behind the generic device interface.
 *
 * The state is typed C (enums for every closed set of strings, fixed buffers
 * for short text, heap strings only for long text); JSON exists only at the
 * boundary: tool arguments in, `data` and get_state() out, set_state()
 * overrides in. The default state is itself a set_state() of DEFAULT_STATE, so
 * the defaults pass exactly the checks any override passes. The contract
 * (keys, defaults, tools, IDs, reason codes) is docs/phone.md.
 *
 * Invariants:
 * - Every string in the state is valid UTF-8 inside its length limit, every
 *   collection inside its capacity, IDs unique per collection, counters in
 *   1..PHONE_COUNTER_MAX. A failed call, and a rejected set_state, change
 *   nothing.
 * - A tool runs in three steps: check (arguments, permissions, lookups; no
 *   change), prepare (every allocation, including the result `data`), commit
 *   (plain stores that cannot fail). So an allocation failure, like any other
 *   failure, leaves the state as it was.
 * - set_state parses every override into a staging state first and swaps the
 *   parts in only when all of them parsed (all-or-nothing).
 * - Checks run in one order for every tool: unknown tool, arguments not an
 *   object, the tool's permission, argument values (invalid_argument), then
 *   the phone's own conditions (lookups, contacts permission for names,
 *   capacity, connectivity).
 */
#include "phone.h"

#include "strbuf.h"
#include "toolspec.h"
#include "utf8.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ============================================================================
 * limits */

#define TEXT_BYTES(chars) ((chars)*4 + 1) /* a buffer for `chars` UTF-8 characters */

#define ID_CHARS         32   /* an identifier in the state ("T-1001") */
#define ARG_ID_CHARS     64   /* an identifier argument (the pack's maxLength) */
#define NAME_CHARS       64   /* a contact name, a thread's contact */
#define NUMBER_CHARS     32   /* a phone number, ASCII */
#define PLACE_CHARS      64   /* a photo's place */
#define TAG_CHARS        32   /* one photo tag */
#define PATH_CHARS       255  /* a file path */
#define LABEL_CHARS      100  /* an alarm label */
#define DEST_CHARS       200  /* a navigation or ride destination */
#define MESSAGE_CHARS    1000 /* one message */
#define TITLE_CHARS      200  /* a note title */
#define BODY_ARG_CHARS   4000 /* create_note body, append_note text */
#define NOTE_CHARS       8000 /* a whole note body: append_note refuses to grow it beyond */
#define SUMMARY_CHARS    500  /* a ticket summary */
#define QUERY_CHARS      200  /* search_photos query */
#define FILE_QUERY_CHARS 255  /* find_file name */
#define RECIPIENT_CHARS  100  /* send_message / share_photo recipient */

#define MAX_CONTACTS      32
#define MAX_THREADS       32
#define MAX_MESSAGES      50 /* per thread; the oldest message goes when a new one arrives */
#define MAX_PHOTOS        64
#define MAX_TAGS          8
#define MAX_NOTES         100
#define MAX_ALARMS        20
#define MAX_TIMERS        10
#define MAX_TICKETS       100
#define MAX_FILES         64
#define MAX_RESULTS       5 /* search_photos, find_file, read_messages list at most this many */
#define TIMER_MAX_MINUTES 1440
#define MAX_FILE_KB       (INT64_C(1) << 30) /* 1 TiB */
#define MAX_ETA_MIN       10000
#define PHONE_COUNTER_MAX 999999999

/* ============================================================================
 * enums and their JSON spellings */

enum perm {
    PERM_CONTACTS,
    PERM_MESSAGES,
    PERM_PHOTOS,
    PERM_LOCATION,
    PERM_FILES,
    PERM_SETTINGS,
    PERM_TICKETS,
    PERM_COUNT,
};
static const char *const PERM_NAMES[PERM_COUNT] = {"contacts", "messages", "photos", "location",
                                                   "files",    "settings", "tickets"};
/* What each permission lets the app do, for permission_denied messages. */
static const char *const PERM_WHAT[PERM_COUNT] = {
    "read your contacts", "use messages",           "open the photo gallery", "use your location",
    "access files",       "change system settings", "use the IT helpdesk"};

enum idkind {
    IDK_THREAD,
    IDK_ALARM,
    IDK_TIMER,
    IDK_NOTE,
    IDK_TICKET,
    IDK_RIDE,
    IDK_COUNT,
};
static const char *const IDK_NAMES[IDK_COUNT] = {"thread", "alarm",  "timer",
                                                 "note",   "ticket", "ride"};
static const char *const IDK_PREFIX[IDK_COUNT] = {"TH-", "A-", "TM-", "N-", "T-", "R-"};

enum priority {
    PRIORITY_LOW,
    PRIORITY_MEDIUM,
    PRIORITY_HIGH,
    PRIORITY_URGENT,
    PRIORITY_COUNT,
};
static const char *const PRIORITY_NAMES[PRIORITY_COUNT] = {"low", "medium", "high", "urgent"};

enum ticket_status {
    TICKET_OPEN,
    TICKET_IN_PROGRESS,
    TICKET_RESOLVED,
    TICKET_CLOSED,
    TICKET_STATUS_COUNT,
};
static const char *const TICKET_STATUS_NAMES[TICKET_STATUS_COUNT] = {"open", "in_progress",
                                                                     "resolved", "closed"};

enum travel_mode {
    MODE_DRIVING,
    MODE_WALKING,
    MODE_CYCLING,
    MODE_TRANSIT,
    MODE_COUNT,
};
static const char *const MODE_NAMES[MODE_COUNT] = {"driving", "walking", "cycling", "transit"};
static const int32_t MODE_KMH[MODE_COUNT] = {30, 5, 15, 20}; /* average city speeds */

enum ride_service {
    SERVICE_STANDARD,
    SERVICE_XL,
    SERVICE_PREMIUM,
    SERVICE_SHARED,
    SERVICE_COUNT,
};
static const char *const SERVICE_NAMES[SERVICE_COUNT] = {"standard", "xl", "premium", "shared"};
static const int32_t SERVICE_PICKUP_MIN[SERVICE_COUNT] = {4, 7, 6, 9};
static const int32_t SERVICE_FARE_PERCENT[SERVICE_COUNT] = {100, 150, 220, 70};

/* ============================================================================
 * typed state */

struct phone_contact {
    char name[TEXT_BYTES(NAME_CHARS)]; /* unique, case-insensitively */
    char number[NUMBER_CHARS + 1];     /* digits, spaces and + - ( ) . */
};

struct phone_message {
    bool outgoing; /* "from": "me" (true) or "them" */
    bool unread;   /* only incoming messages can be unread */
    char *text;    /* owned, 1..MESSAGE_CHARS characters, newlines allowed */
};

struct phone_thread {
    char id[TEXT_BYTES(ID_CHARS)];
    char contact[TEXT_BYTES(NAME_CHARS)]; /* a contact's name or a phone number */
    struct phone_message *messages;       /* owned, n_messages <= MAX_MESSAGES */
    size_t n_messages;
};

struct phone_photo {
    char id[TEXT_BYTES(ID_CHARS)];
    char date[11]; /* YYYY-MM-DD */
    char place[TEXT_BYTES(PLACE_CHARS)];
    char tags[MAX_TAGS][TEXT_BYTES(TAG_CHARS)];
    size_t n_tags;
};

struct phone_note {
    char id[TEXT_BYTES(ID_CHARS)];
    char *title; /* owned, 1..TITLE_CHARS characters */
    char *body;  /* owned, 0..NOTE_CHARS characters, newlines allowed */
};

struct phone_alarm {
    char id[TEXT_BYTES(ID_CHARS)];
    char time[6]; /* HH:MM, 24-hour */
    char label[TEXT_BYTES(LABEL_CHARS)];
    bool enabled;
};

struct phone_timer {
    char id[TEXT_BYTES(ID_CHARS)];
    int32_t minutes; /* 1..TIMER_MAX_MINUTES */
};

struct phone_ticket {
    char id[TEXT_BYTES(ID_CHARS)];
    char *summary; /* owned, 1..SUMMARY_CHARS characters */
    enum priority priority;
    enum ticket_status status;
};

struct phone_file {
    char id[TEXT_BYTES(ID_CHARS)];
    char path[TEXT_BYTES(PATH_CHARS)]; /* absolute, "/Documents/Work/Q3-report.pdf" */
    int64_t size_kb;                   /* 0..MAX_FILE_KB */
    bool locked;                       /* in the secure folder: open_file is refused */
};

struct phone_navigation {
    bool active; /* false: JSON null */
    char destination[TEXT_BYTES(DEST_CHARS)];
    enum travel_mode mode;
    int32_t eta_min; /* 1..MAX_ETA_MIN */
};

struct phone_ride {
    bool active; /* false: JSON null */
    char id[TEXT_BYTES(ID_CHARS)];
    char destination[TEXT_BYTES(DEST_CHARS)];
    enum ride_service service;
    int32_t pickup_min; /* 1..MAX_ETA_MIN */
};

struct phone_state {
    bool wifi;
    bool bluetooth;
    bool airplane_mode; /* with Wi-Fi off too, the phone is offline */
    bool permissions[PERM_COUNT];
    struct phone_contact *contacts;
    size_t n_contacts;
    struct phone_thread *threads;
    size_t n_threads;
    struct phone_photo *photos;
    size_t n_photos;
    struct phone_note *notes;
    size_t n_notes;
    struct phone_alarm *alarms;
    size_t n_alarms;
    struct phone_timer *timers;
    size_t n_timers;
    struct phone_ticket *tickets;
    size_t n_tickets;
    struct phone_file *files;
    size_t n_files;
    struct phone_navigation navigation;
    struct phone_ride ride;
    int64_t next_ids[IDK_COUNT]; /* the number of the next new ID of each kind */
};

/* What the phone takes from the tool set it is made for (phone_spec_init()): the travel
 * modes, ride services and ticket priorities it allows (a subset of the ones it simulates), the
 * timer's range, and each string argument's maxLength where the spec is stricter than the
 * phone's own capacity (the *_CHARS above, which size its buffers). */
#define PHONE_MAX_LENGTHS 48

struct phone_spec {
    uint32_t mode_ok, service_ok, priority_ok; /* bit i: MODE_NAMES[i], ... */
    int64_t timer_min, timer_max;
    size_t n_lengths;
    struct {
        char tool[PIPIT_TOOLSPEC_MAX_NAME + 1];
        char arg[PIPIT_TOOLSPEC_MAX_NAME + 1];
        size_t max_chars;
    } lengths[PHONE_MAX_LENGTHS];
};

struct phone {
    struct phone_state state;
    struct phone_spec spec;
};

/* ============================================================================
 * state keys */

enum phone_key {
    KEY_WIFI,
    KEY_BLUETOOTH,
    KEY_AIRPLANE_MODE,
    KEY_PERMISSIONS,
    KEY_CONTACTS,
    KEY_THREADS,
    KEY_PHOTOS,
    KEY_NOTES,
    KEY_ALARMS,
    KEY_TIMERS,
    KEY_TICKETS,
    KEY_FILES,
    KEY_NAVIGATION,
    KEY_RIDE,
    KEY_NEXT_IDS,
    KEY_COUNT,
};

static const char *const KEY_NAMES[KEY_COUNT] = {
    [KEY_WIFI] = "wifi",
    [KEY_BLUETOOTH] = "bluetooth",
    [KEY_AIRPLANE_MODE] = "airplane_mode",
    [KEY_PERMISSIONS] = "permissions",
    [KEY_CONTACTS] = "contacts",
    [KEY_THREADS] = "threads",
    [KEY_PHOTOS] = "photos",
    [KEY_NOTES] = "notes",
    [KEY_ALARMS] = "alarms",
    [KEY_TIMERS] = "timers",
    [KEY_TICKETS] = "tickets",
    [KEY_FILES] = "files",
    [KEY_NAVIGATION] = "navigation",
    [KEY_RIDE] = "ride",
    [KEY_NEXT_IDS] = "next_ids",
};

/* The default state (docs/phone.md), applied part by part with set_state's own
 * parser (C11 promises string literals of 4095 bytes only). */
static const char *const DEFAULT_STATE[] = {
    "{\"wifi\": true, \"bluetooth\": false, \"airplane_mode\": false,"
    " \"permissions\": {\"contacts\": true, \"messages\": true, \"photos\": true,"
    "   \"location\": true, \"files\": true, \"settings\": true, \"tickets\": true},"
    " \"contacts\": ["
    "   {\"name\": \"Alice Chen\", \"number\": \"+1 415 555 0142\"},"
    "   {\"name\": \"Marcus Webb\", \"number\": \"+1 415 555 0178\"},"
    "   {\"name\": \"Priya Natarajan\", \"number\": \"+1 650 555 0113\"},"
    "   {\"name\": \"Sam Rivera\", \"number\": \"+1 510 555 0166\"},"
    "   {\"name\": \"Sam Okafor\", \"number\": \"+1 628 555 0190\"},"
    "   {\"name\": \"Jordan Lee\", \"number\": \"+1 415 555 0127\"},"
    "   {\"name\": \"Elena Petrova\", \"number\": \"+44 20 7946 0321\"},"
    "   {\"name\": \"Mom\", \"number\": \"+1 408 555 0199\"}]}",
    "{\"threads\": ["
    "   {\"id\": \"TH-1\", \"contact\": \"Jordan Lee\", \"messages\": ["
    "     {\"from\": \"me\", \"text\": \"Running 10 minutes late\", \"unread\": false},"
    "     {\"from\": \"them\", \"text\": \"No worries, see you soon\", \"unread\": false}]},"
    "   {\"id\": \"TH-2\", \"contact\": \"Mom\", \"messages\": ["
    "     {\"from\": \"them\", \"text\": \"Call me when you land\", \"unread\": true}]},"
    "   {\"id\": \"TH-3\", \"contact\": \"Alice Chen\", \"messages\": ["
    "     {\"from\": \"them\", \"text\": \"Are we still on for lunch tomorrow?\","
    "      \"unread\": true}]}]}",
    "{\"photos\": ["
    "   {\"id\": \"P-101\", \"date\": \"2024-01-14\", \"place\": \"Lake Tahoe\","
    "    \"tags\": [\"snow\", \"mountains\", \"skiing\"]},"
    "   {\"id\": \"P-102\", \"date\": \"2024-02-10\", \"place\": \"San Francisco\","
    "    \"tags\": [\"birthday\", \"cake\", \"party\"]},"
    "   {\"id\": \"P-103\", \"date\": \"2024-03-22\", \"place\": \"Kyoto\","
    "    \"tags\": [\"temple\", \"cherry blossom\", \"travel\"]},"
    "   {\"id\": \"P-104\", \"date\": \"2024-03-23\", \"place\": \"Kyoto\","
    "    \"tags\": [\"food\", \"ramen\", \"travel\"]},"
    "   {\"id\": \"P-105\", \"date\": \"2024-05-04\", \"place\": \"Golden Gate Park\","
    "    \"tags\": [\"dog\", \"park\"]},"
    "   {\"id\": \"P-106\", \"date\": \"2024-06-15\", \"place\": \"Lisbon\","
    "    \"tags\": [\"beach\", \"sunset\", \"travel\"]},"
    "   {\"id\": \"P-107\", \"date\": \"2024-06-16\", \"place\": \"Lisbon\","
    "    \"tags\": [\"tram\", \"city\", \"travel\"]},"
    "   {\"id\": \"P-108\", \"date\": \"2024-07-04\", \"place\": \"Berkeley\","
    "    \"tags\": [\"fireworks\", \"night\"]},"
    "   {\"id\": \"P-109\", \"date\": \"2024-08-20\", \"place\": \"Yosemite\","
    "    \"tags\": [\"hiking\", \"waterfall\", \"mountains\"]},"
    "   {\"id\": \"P-110\", \"date\": \"2024-09-02\", \"place\": \"Office\","
    "    \"tags\": [\"whiteboard\", \"work\"]},"
    "   {\"id\": \"P-111\", \"date\": \"2024-10-31\", \"place\": \"San Francisco\","
    "    \"tags\": [\"halloween\", \"costume\", \"party\"]},"
    "   {\"id\": \"P-112\", \"date\": \"2024-12-25\", \"place\": \"Portland\","
    "    \"tags\": [\"family\", \"christmas\", \"dog\"]}]}",
    "{\"notes\": ["
    "   {\"id\": \"N-1\", \"title\": \"Groceries\", \"body\": \"milk, eggs, spinach\"},"
    "   {\"id\": \"N-2\", \"title\": \"Packing list\", \"body\": \"passport, charger\"}],"
    " \"alarms\": ["
    "   {\"id\": \"A-1\", \"time\": \"06:45\", \"label\": \"Weekdays\", \"enabled\": true}],"
    " \"timers\": [],"
    " \"tickets\": ["
    "   {\"id\": \"T-1000\", \"summary\": \"VPN disconnects every hour\","
    "    \"priority\": \"medium\", \"status\": \"in_progress\"}]}",
    "{\"files\": ["
    "   {\"id\": \"F-201\", \"path\": \"/Documents/Work/Q3-report.pdf\", \"size_kb\": 2310,"
    "    \"locked\": false},"
    "   {\"id\": \"F-202\", \"path\": \"/Documents/Work/Q2-report.pdf\", \"size_kb\": 1984,"
    "    \"locked\": false},"
    "   {\"id\": \"F-203\", \"path\": \"/Documents/Work/budget-2024.xlsx\", \"size_kb\": 412,"
    "    \"locked\": false},"
    "   {\"id\": \"F-204\", \"path\": \"/Documents/Work/onboarding-checklist.docx\","
    "    \"size_kb\": 88, \"locked\": false},"
    "   {\"id\": \"F-205\", \"path\": \"/Documents/Personal/lease-agreement.pdf\","
    "    \"size_kb\": 1250, \"locked\": false},"
    "   {\"id\": \"F-206\", \"path\": \"/Documents/Recipes/banana-bread.txt\", \"size_kb\": 3,"
    "    \"locked\": false},"
    "   {\"id\": \"F-207\", \"path\": \"/Downloads/boarding-pass-LIS.pdf\", \"size_kb\": 164,"
    "    \"locked\": false},"
    "   {\"id\": \"F-208\", \"path\": \"/Downloads/receipt-2024-06-15.pdf\", \"size_kb\": 56,"
    "    \"locked\": false},"
    "   {\"id\": \"F-209\", \"path\": \"/Music/road-trip.m3u\", \"size_kb\": 2,"
    "    \"locked\": false},"
    "   {\"id\": \"F-210\", \"path\": \"/Pictures/Screenshots/screenshot-2024-09-02.png\","
    "    \"size_kb\": 730, \"locked\": false},"
    "   {\"id\": \"F-211\", \"path\": \"/Secure/passport-scan.pdf\", \"size_kb\": 980,"
    "    \"locked\": true},"
    "   {\"id\": \"F-212\", \"path\": \"/Secure/tax-return-2023.pdf\", \"size_kb\": 1675,"
    "    \"locked\": true}],"
    " \"navigation\": null, \"ride\": null,"
    " \"next_ids\": {\"thread\": 4, \"alarm\": 2, \"timer\": 1, \"note\": 3,"
    "   \"ticket\": 1001, \"ride\": 1}}",
};

/* ============================================================================
 * text: UTF-8 checks, ASCII case folding, cutting */

/* Whether `v` is a string of valid UTF-8 (no NUL, no control characters but
 * newline and tab when `multiline`) of min_chars..max_chars characters that
 * is not all blanks when min_chars > 0. */
static bool json_text_ok(const json_t *v, size_t min_chars, size_t max_chars, bool multiline) {
    if (!json_is_string(v)) {
        return false;
    }
    const unsigned char *s = (const unsigned char *)json_string_value(v);
    size_t n = json_string_length(v);
    size_t chars = 0;
    bool blank = true;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_char_len(s + i, n - i, multiline);
        if (len == 0 || ++chars > max_chars) {
            return false;
        }
        if (!(len == 1 && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t'))) {
            blank = false;
        }
        i += len;
    }
    return chars >= min_chars && !(min_chars > 0 && blank);
}

/* Copy the checked string `v` into buf (which has room for it). */
static void copy_text(char *buf, size_t size, const json_t *v) {
    size_t n = json_string_length(v);
    if (n >= size) {
        n = size - 1; /* unreachable for checked text; keeps the copy in bounds anyway */
    }
    memcpy(buf, json_string_value(v), n);
    buf[n] = '\0';
}

/* A heap copy of `s[0..n)`, NULL on allocation failure. */
static char *dup_text(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ascii_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool eq_nocase(const char *a, const char *b) {
    while (*a != '\0' && ascii_lower(*a) == ascii_lower(*b)) {
        a++;
        b++;
    }
    return ascii_lower(*a) == ascii_lower(*b);
}

/* Fold text for matching: ASCII letters lowercased, every other ASCII byte that
 * is not a letter or digit a separator, runs of separators one space, no
 * leading or trailing space; non-ASCII bytes kept. "Q3-Report.PDF" -> "q3 report pdf". */
static void fold(const char *s, char *out, size_t size) {
    size_t o = 0;
    bool space = false;
    for (; *s != '\0' && o + 2 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x80 && !ascii_alnum((char)c)) {
            space = o > 0;
            continue;
        }
        if (space) {
            out[o++] = ' ';
            space = false;
        }
        out[o++] = ascii_lower((char)c);
    }
    out[o] = '\0';
}

/* Whether the folded text `hay` contains the folded `word` (which may hold
 * spaces) on word boundaries. */
static bool has_word(const char *hay, const char *word) {
    size_t n = strlen(word);
    if (n == 0) {
        return false;
    }
    for (const char *p = strstr(hay, word); p != NULL; p = strstr(p + 1, word)) {
        if ((p == hay || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) {
            return true;
        }
    }
    return false;
}

/* Copy at most `max_chars` characters of the valid text `s` into buf, ending in
 * "..." when cut; newlines and tabs become spaces. Always valid UTF-8. */
static void cut_text(const char *s, size_t max_chars, char *buf, size_t size) {
    size_t n = strlen(s);
    size_t o = 0;
    size_t chars = 0;
    size_t i = 0;
    while (i < n && chars < max_chars) {
        size_t len = utf8_char_len((const unsigned char *)s + i, n - i, true);
        if (len == 0) {
            len = 1; /* unreachable for checked text */
        }
        if (o + len + 4 > size) {
            break;
        }
        for (size_t k = 0; k < len; k++) {
            char c = s[i + k];
            buf[o++] = c == '\n' || c == '\t' ? ' ' : c;
        }
        i += len;
        chars++;
    }
    if (i < n) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
}

static size_t utf8_chars(const char *s) {
    size_t chars = 0;
    for (; *s != '\0'; s++) {
        if (((unsigned char)*s & 0xc0) != 0x80) {
            chars++;
        }
    }
    return chars;
}

/* "\"low\", \"medium\", \"high\" or \"urgent\"" */
static void join_names(const char *const *names, int n, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used + 1 < size; i++) {
        const char *sep = i == 0 ? "" : (i == n - 1 ? " or " : ", ");
        pipit_format(buf + used, size - used, "%s\"%s\"", sep, names[i]);
        used += strlen(buf + used);
    }
}

/* join_names() of the names whose bit is set in `ok`. */
static void join_allowed(const char *const *names, int n, uint32_t ok, char *buf, size_t size) {
    const char *allowed[32];
    int k = 0;
    for (int i = 0; i < n && i < 32; i++) {
        if ((ok & (UINT32_C(1) << i)) != 0) {
            allowed[k++] = names[i];
        }
    }
    join_names(allowed, k, buf, size);
}

static int enum_find(const json_t *v, const char *const *names, int n) {
    if (!json_is_string(v)) {
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (strlen(names[i]) == json_string_length(v) &&
            strcmp(names[i], json_string_value(v)) == 0) {
            return i;
        }
    }
    return -1;
}

/* An integer in min..max: a JSON integer, or a real with an integral value. */
static bool json_int_in(const json_t *v, int64_t min, int64_t max, int64_t *out) {
    int64_t x;
    if (json_is_integer(v)) {
        x = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0) {
            return false;
        }
        x = (int64_t)d;
    } else {
        return false;
    }
    if (x < min || x > max) {
        return false;
    }
    *out = x;
    return true;
}

/* HH:MM (or H:MM) with HH 0..23 and MM 0..59; normalized to "HH:MM". */
static bool parse_time(const char *s, char out[6]) {
    size_t n = strlen(s);
    if (n != 4 && n != 5) {
        return false;
    }
    const char *m = s + n - 3;
    if (m[0] != ':') {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s + i != m && (s[i] < '0' || s[i] > '9')) {
            return false;
        }
    }
    int hh = n == 5 ? (s[0] - '0') * 10 + (s[1] - '0') : s[0] - '0';
    int mm = (m[1] - '0') * 10 + (m[2] - '0');
    if (hh > 23 || mm > 59) {
        return false;
    }
    out[0] = (char)('0' + hh / 10);
    out[1] = (char)('0' + hh % 10);
    out[2] = ':';
    out[3] = (char)('0' + mm / 10);
    out[4] = (char)('0' + mm % 10);
    out[5] = '\0';
    return true;
}

/* YYYY-MM-DD, a real calendar date from 1900 to 2100. */
static bool date_ok(const char *s) {
    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-') {
        return false;
    }
    int d[8];
    int k = 0;
    for (int i = 0; i < 10; i++) {
        if (i == 4 || i == 7) {
            continue;
        }
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        d[k++] = s[i] - '0';
    }
    int year = d[0] * 1000 + d[1] * 100 + d[2] * 10 + d[3];
    int month = d[4] * 10 + d[5];
    int day = d[6] * 10 + d[7];
    static const int DAYS[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (year < 1900 || year > 2100 || month < 1 || month > 12 || day < 1) {
        return false;
    }
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return day <= DAYS[month - 1] && !(month == 2 && day == 29 && !leap);
}

/* The digits of a phone number into out (at most 15); false when `s` is not
 * one: only digits, spaces and + - ( ) ., 3..15 digits, at most
 * NUMBER_CHARS bytes. */
static bool number_digits(const char *s, char out[16]) {
    size_t nd = 0;
    size_t n = 0;
    for (; s[n] != '\0'; n++) {
        char c = s[n];
        if (c >= '0' && c <= '9') {
            if (nd == 15) {
                return false;
            }
            out[nd++] = c;
        } else if (strchr(" +-().", c) == NULL) {
            return false;
        }
    }
    out[nd] = '\0';
    return n <= NUMBER_CHARS && nd >= 3;
}

/* Same number: equal digits, or one ends with the other's (at least 7) digits
 * (a country code written or not). */
static bool same_number(const char *a, const char *b) {
    char da[16], db[16];
    if (!number_digits(a, da) || !number_digits(b, db)) {
        return false;
    }
    size_t na = strlen(da), nb = strlen(db);
    if (na == nb) {
        return strcmp(da, db) == 0;
    }
    const char *longer = na > nb ? da : db;
    const char *shorter = na > nb ? db : da;
    size_t ns = na > nb ? nb : na;
    return ns >= 7 && strcmp(longer + strlen(longer) - ns, shorter) == 0;
}

/* ============================================================================
 * freeing */

static void free_threads(struct phone_thread *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        for (size_t m = 0; m < t[i].n_messages; m++) {
            free(t[i].messages[m].text);
        }
        free(t[i].messages);
    }
    free(t);
}

static void free_notes(struct phone_note *notes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(notes[i].title);
        free(notes[i].body);
    }
    free(notes);
}

static void free_tickets(struct phone_ticket *t, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(t[i].summary);
    }
    free(t);
}

/* Free the heap parts of key `k` of `s` and empty them. */
static void free_part(struct phone_state *s, enum phone_key k) {
    switch (k) {
        case KEY_CONTACTS:
            free(s->contacts);
            s->contacts = NULL;
            s->n_contacts = 0;
            break;
        case KEY_THREADS:
            free_threads(s->threads, s->n_threads);
            s->threads = NULL;
            s->n_threads = 0;
            break;
        case KEY_PHOTOS:
            free(s->photos);
            s->photos = NULL;
            s->n_photos = 0;
            break;
        case KEY_NOTES:
            free_notes(s->notes, s->n_notes);
            s->notes = NULL;
            s->n_notes = 0;
            break;
        case KEY_ALARMS:
            free(s->alarms);
            s->alarms = NULL;
            s->n_alarms = 0;
            break;
        case KEY_TIMERS:
            free(s->timers);
            s->timers = NULL;
            s->n_timers = 0;
            break;
        case KEY_TICKETS:
            free_tickets(s->tickets, s->n_tickets);
            s->tickets = NULL;
            s->n_tickets = 0;
            break;
        case KEY_FILES:
            free(s->files);
            s->files = NULL;
            s->n_files = 0;
            break;
        case KEY_WIFI:
        case KEY_BLUETOOTH:
        case KEY_AIRPLANE_MODE:
        case KEY_PERMISSIONS:
        case KEY_NAVIGATION:
        case KEY_RIDE:
        case KEY_NEXT_IDS:
        case KEY_COUNT:
            break;
    }
}

static void state_free(struct phone_state *s) {
    for (int k = 0; k < KEY_COUNT; k++) {
        free_part(s, (enum phone_key)k);
    }
}

/* Move key `k` from `src` to `dst` (dst's old part must be freed already). */
static void move_part(struct phone_state *dst, struct phone_state *src, enum phone_key k) {
    switch (k) {
        case KEY_WIFI:
            dst->wifi = src->wifi;
            break;
        case KEY_BLUETOOTH:
            dst->bluetooth = src->bluetooth;
            break;
        case KEY_AIRPLANE_MODE:
            dst->airplane_mode = src->airplane_mode;
            break;
        case KEY_PERMISSIONS:
            memcpy(dst->permissions, src->permissions, sizeof(dst->permissions));
            break;
        case KEY_CONTACTS:
            dst->contacts = src->contacts;
            dst->n_contacts = src->n_contacts;
            src->contacts = NULL;
            src->n_contacts = 0;
            break;
        case KEY_THREADS:
            dst->threads = src->threads;
            dst->n_threads = src->n_threads;
            src->threads = NULL;
            src->n_threads = 0;
            break;
        case KEY_PHOTOS:
            dst->photos = src->photos;
            dst->n_photos = src->n_photos;
            src->photos = NULL;
            src->n_photos = 0;
            break;
        case KEY_NOTES:
            dst->notes = src->notes;
            dst->n_notes = src->n_notes;
            src->notes = NULL;
            src->n_notes = 0;
            break;
        case KEY_ALARMS:
            dst->alarms = src->alarms;
            dst->n_alarms = src->n_alarms;
            src->alarms = NULL;
            src->n_alarms = 0;
            break;
        case KEY_TIMERS:
            dst->timers = src->timers;
            dst->n_timers = src->n_timers;
            src->timers = NULL;
            src->n_timers = 0;
            break;
        case KEY_TICKETS:
            dst->tickets = src->tickets;
            dst->n_tickets = src->n_tickets;
            src->tickets = NULL;
            src->n_tickets = 0;
            break;
        case KEY_FILES:
            dst->files = src->files;
            dst->n_files = src->n_files;
            src->files = NULL;
            src->n_files = 0;
            break;
        case KEY_NAVIGATION:
            dst->navigation = src->navigation;
            break;
        case KEY_RIDE:
            dst->ride = src->ride;
            break;
        case KEY_NEXT_IDS:
            memcpy(dst->next_ids, src->next_ids, sizeof(dst->next_ids));
            break;
        case KEY_COUNT:
            break;
    }
}

/* ============================================================================
 * state to JSON */

/* Add `v` (stolen) to `obj`; false when either is NULL or the add fails. */
static bool put(json_t *obj, const char *key, json_t *v) {
    if (obj == NULL) {
        json_decref(v);
        return false;
    }
    return json_object_set_new(obj, key, v) == 0; /* set_new takes v even when it fails */
}

static json_t *message_to_json(const struct phone_message *m) {
    return json_pack("{s:s,s:s,s:b}", "from", m->outgoing ? "me" : "them", "text", m->text,
                     "unread", m->unread);
}

static json_t *thread_to_json(const struct phone_thread *t) {
    json_t *msgs = json_array();
    for (size_t i = 0; msgs != NULL && i < t->n_messages; i++) {
        if (json_array_append_new(msgs, message_to_json(&t->messages[i])) != 0) {
            json_decref(msgs);
            msgs = NULL;
        }
    }
    return json_pack("{s:s,s:s,s:o}", "id", t->id, "contact", t->contact, "messages", msgs);
}

static json_t *photo_to_json(const struct phone_photo *p) {
    json_t *tags = json_array();
    for (size_t i = 0; tags != NULL && i < p->n_tags; i++) {
        if (json_array_append_new(tags, json_string(p->tags[i])) != 0) {
            json_decref(tags);
            tags = NULL;
        }
    }
    return json_pack("{s:s,s:s,s:s,s:o}", "id", p->id, "date", p->date, "place", p->place, "tags",
                     tags);
}

static json_t *navigation_to_json(const struct phone_navigation *n) {
    if (!n->active) {
        return json_null();
    }
    return json_pack("{s:s,s:s,s:i}", "destination", n->destination, "mode", MODE_NAMES[n->mode],
                     "eta_min", (int)n->eta_min);
}

static json_t *ride_to_json(const struct phone_ride *r) {
    if (!r->active) {
        return json_null();
    }
    return json_pack("{s:s,s:s,s:s,s:i}", "id", r->id, "destination", r->destination, "service",
                     SERVICE_NAMES[r->service], "pickup_min", (int)r->pickup_min);
}

/* The JSON array of a collection: `item(i)` for each element. */
#define ARRAY_TO_JSON(n, expr)                           \
    do {                                                 \
        v = json_array();                                \
        for (size_t i = 0; v != NULL && i < (n); i++) {  \
            if (json_array_append_new(v, (expr)) != 0) { \
                json_decref(v);                          \
                v = NULL;                                \
            }                                            \
        }                                                \
    } while (0)

/* The value of one key as a new reference (NULL on allocation failure). */
static json_t *key_to_json(const struct phone_state *s, enum phone_key k) {
    json_t *v = NULL;
    switch (k) {
        case KEY_WIFI:
            return json_boolean(s->wifi);
        case KEY_BLUETOOTH:
            return json_boolean(s->bluetooth);
        case KEY_AIRPLANE_MODE:
            return json_boolean(s->airplane_mode);
        case KEY_PERMISSIONS:
            v = json_object();
            for (int p = 0; v != NULL && p < PERM_COUNT; p++) {
                if (!put(v, PERM_NAMES[p], json_boolean(s->permissions[p]))) {
                    json_decref(v);
                    v = NULL;
                }
            }
            return v;
        case KEY_CONTACTS:
            ARRAY_TO_JSON(s->n_contacts, json_pack("{s:s,s:s}", "name", s->contacts[i].name,
                                                   "number", s->contacts[i].number));
            return v;
        case KEY_THREADS:
            ARRAY_TO_JSON(s->n_threads, thread_to_json(&s->threads[i]));
            return v;
        case KEY_PHOTOS:
            ARRAY_TO_JSON(s->n_photos, photo_to_json(&s->photos[i]));
            return v;
        case KEY_NOTES:
            ARRAY_TO_JSON(s->n_notes, json_pack("{s:s,s:s,s:s}", "id", s->notes[i].id, "title",
                                                s->notes[i].title, "body", s->notes[i].body));
            return v;
        case KEY_ALARMS:
            ARRAY_TO_JSON(s->n_alarms, json_pack("{s:s,s:s,s:s,s:b}", "id", s->alarms[i].id, "time",
                                                 s->alarms[i].time, "label", s->alarms[i].label,
                                                 "enabled", s->alarms[i].enabled));
            return v;
        case KEY_TIMERS:
            ARRAY_TO_JSON(s->n_timers, json_pack("{s:s,s:i}", "id", s->timers[i].id, "minutes",
                                                 (int)s->timers[i].minutes));
            return v;
        case KEY_TICKETS:
            ARRAY_TO_JSON(s->n_tickets, json_pack("{s:s,s:s,s:s,s:s}", "id", s->tickets[i].id,
                                                  "summary", s->tickets[i].summary, "priority",
                                                  PRIORITY_NAMES[s->tickets[i].priority], "status",
                                                  TICKET_STATUS_NAMES[s->tickets[i].status]));
            return v;
        case KEY_FILES:
            ARRAY_TO_JSON(s->n_files,
                          json_pack("{s:s,s:s,s:I,s:b}", "id", s->files[i].id, "path",
                                    s->files[i].path, "size_kb", (json_int_t)s->files[i].size_kb,
                                    "locked", s->files[i].locked));
            return v;
        case KEY_NAVIGATION:
            return navigation_to_json(&s->navigation);
        case KEY_RIDE:
            return ride_to_json(&s->ride);
        case KEY_NEXT_IDS:
            v = json_object();
            for (int i = 0; v != NULL && i < IDK_COUNT; i++) {
                if (!put(v, IDK_NAMES[i], json_integer((json_int_t)s->next_ids[i]))) {
                    json_decref(v);
                    v = NULL;
                }
            }
            return v;
        case KEY_COUNT:
            break;
    }
    return NULL;
}

static json_t *state_to_json(const struct phone_state *s) {
    json_t *obj = json_object();
    for (int k = 0; obj != NULL && k < KEY_COUNT; k++) {
        if (!put(obj, KEY_NAMES[k], key_to_json(s, (enum phone_key)k))) {
            json_decref(obj);
            return NULL;
        }
    }
    return obj;
}

/* ============================================================================
 * state from JSON (set_state): every parser writes into a staging state and,
 * on a bad value, a "path: value (expected ...)" into `why`. */

#define WHY_SIZE 320

struct parse {
    char why[WHY_SIZE];
    bool nomem; /* an allocation failed (reported as PIPIT_ERR_NOMEM) */
};

static bool bad_value(struct parse *p, const char *path, const json_t *v, const char *expect) {
    char value[96];
    device_describe_json(v, value, sizeof(value));
    pipit_format(p->why, sizeof(p->why), "%s: %s (expected %s)", path, value, expect);
    return false;
}

/* `v` is an object whose keys are all in `fields`. */
static bool
item_object(struct parse *p, const char *path, const json_t *v, const char *const *fields) {
    if (!json_is_object(v)) {
        return bad_value(p, path, v, "an object");
    }
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)v, key, value) {
        bool known = false;
        for (size_t i = 0; fields[i] != NULL && !known; i++) {
            known = strcmp(fields[i], key) == 0;
        }
        if (!known) {
            char name[96];
            device_describe_string(key, name, sizeof(name));
            pipit_format(p->why, sizeof(p->why), "%s: unknown key %s", path, name);
            return false;
        }
    }
    return true;
}

/* Field `field` of `obj` as text of min..max characters into buf; path is the
 * item's path, e.g. "contacts[2]". */
static bool field_text(struct parse *p,
                       const char *path,
                       const json_t *obj,
                       const char *field,
                       size_t min_chars,
                       size_t max_chars,
                       char *buf,
                       size_t size) {
    const json_t *v = json_object_get(obj, field);
    if (!json_text_ok(v, min_chars, max_chars, false) || json_string_length(v) >= size) {
        char where[96], expect[96];
        pipit_format(where, sizeof(where), "%s.%s", path, field);
        pipit_format(expect, sizeof(expect), "a string of %zu to %zu characters", min_chars,
                     max_chars);
        return bad_value(p, where, v, expect);
    }
    copy_text(buf, size, v);
    return true;
}

/* The same, into a new heap string (*out; NULL on failure). */
static bool field_dup(struct parse *p,
                      const char *path,
                      const json_t *obj,
                      const char *field,
                      size_t min_chars,
                      size_t max_chars,
                      char **out) {
    const json_t *v = json_object_get(obj, field);
    *out = NULL;
    if (!json_text_ok(v, min_chars, max_chars, true)) {
        char where[96], expect[96];
        pipit_format(where, sizeof(where), "%s.%s", path, field);
        pipit_format(expect, sizeof(expect), "a string of %zu to %zu characters", min_chars,
                     max_chars);
        return bad_value(p, where, v, expect);
    }
    *out = dup_text(json_string_value(v), json_string_length(v));
    if (*out == NULL) {
        p->nomem = true;
        pipit_format(p->why, sizeof(p->why), "out of memory");
        return false;
    }
    return true;
}

static bool field_bool(struct parse *p,
                       const char *path,
                       const json_t *obj,
                       const char *field,
                       bool dflt,
                       bool *out) {
    const json_t *v = json_object_get(obj, field);
    if (v == NULL) {
        *out = dflt;
        return true;
    }
    if (!json_is_boolean(v)) {
        char where[96];
        pipit_format(where, sizeof(where), "%s.%s", path, field);
        return bad_value(p, where, v, "true or false");
    }
    *out = json_is_true(v);
    return true;
}

static bool field_enum(struct parse *p,
                       const char *path,
                       const json_t *obj,
                       const char *field,
                       const char *const *names,
                       int n,
                       int *out) {
    const json_t *v = json_object_get(obj, field);
    *out = enum_find(v, names, n);
    if (*out < 0) {
        char where[96], expect[160];
        pipit_format(where, sizeof(where), "%s.%s", path, field);
        join_names(names, n, expect, sizeof(expect));
        return bad_value(p, where, v, expect);
    }
    return true;
}

static bool field_int(struct parse *p,
                      const char *path,
                      const json_t *obj,
                      const char *field,
                      int64_t min,
                      int64_t max,
                      int64_t *out) {
    const json_t *v = json_object_get(obj, field);
    if (!json_int_in(v, min, max, out)) {
        char where[96], expect[96];
        pipit_format(where, sizeof(where), "%s.%s", path, field);
        pipit_format(expect, sizeof(expect), "an integer from %" PRId64 " to %" PRId64, min, max);
        return bad_value(p, where, v, expect);
    }
    return true;
}

/* An array of at most `max` items, allocated as `*items` with `elem` bytes
 * each (zeroed). */
static bool parse_array(struct parse *p,
                        const char *key,
                        const json_t *v,
                        size_t max,
                        size_t elem,
                        void **items) {
    *items = NULL;
    if (!json_is_array(v) || json_array_size(v) > max) {
        char expect[64];
        pipit_format(expect, sizeof(expect), "an array of at most %zu items", max);
        return bad_value(p, key, v, expect);
    }
    if (json_array_size(v) > 0) {
        *items = calloc(json_array_size(v), elem);
        if (*items == NULL) {
            p->nomem = true;
            pipit_format(p->why, sizeof(p->why), "out of memory");
            return false;
        }
    }
    return true;
}

/* IDs: unique (case-insensitively) in their collection; `ids` is the i-th ID at
 * stride `stride`. */
static bool id_unique(struct parse *p, const char *key, const char *ids, size_t stride, size_t i) {
    const char *id = ids + i * stride;
    for (size_t j = 0; j < i; j++) {
        if (eq_nocase(ids + j * stride, id)) {
            char value[96];
            device_describe_string(id, value, sizeof(value));
            pipit_format(p->why, sizeof(p->why), "%s[%zu].id: %s (duplicate ID)", key, i, value);
            return false;
        }
    }
    return true;
}

static const char *const CONTACT_FIELDS[] = {"name", "number", NULL};
static const char *const THREAD_FIELDS[] = {"id", "contact", "messages", NULL};
static const char *const MESSAGE_FIELDS[] = {"from", "text", "unread", NULL};
static const char *const PHOTO_FIELDS[] = {"id", "date", "place", "tags", NULL};
static const char *const NOTE_FIELDS[] = {"id", "title", "body", NULL};
static const char *const ALARM_FIELDS[] = {"id", "time", "label", "enabled", NULL};
static const char *const TIMER_FIELDS[] = {"id", "minutes", NULL};
static const char *const TICKET_FIELDS[] = {"id", "summary", "priority", "status", NULL};
static const char *const FILE_FIELDS[] = {"id", "path", "size_kb", "locked", NULL};
static const char *const NAVIGATION_FIELDS[] = {"destination", "mode", "eta_min", NULL};
static const char *const RIDE_FIELDS[] = {"id", "destination", "service", "pickup_min", NULL};
static const char *const FROM_NAMES[2] = {"them", "me"};

static bool parse_contacts(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "contacts", v, MAX_CONTACTS, sizeof(*s->contacts), &items)) {
        return false;
    }
    s->contacts = items;
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_contact *c = &s->contacts[i];
        const json_t *item = json_array_get(v, i);
        char path[48], digits[16];
        pipit_format(path, sizeof(path), "contacts[%zu]", i);
        if (!item_object(p, path, item, CONTACT_FIELDS) ||
            !field_text(p, path, item, "name", 1, NAME_CHARS, c->name, sizeof(c->name)) ||
            !field_text(p, path, item, "number", 1, NUMBER_CHARS, c->number, sizeof(c->number))) {
            return false;
        }
        if (!number_digits(c->number, digits)) {
            pipit_format(path, sizeof(path), "contacts[%zu].number", i);
            return bad_value(p, path, json_object_get(item, "number"),
                             "a phone number: digits, spaces and + - ( ) .");
        }
        for (size_t j = 0; j < i; j++) {
            if (eq_nocase(s->contacts[j].name, c->name)) {
                char value[96];
                device_describe_string(c->name, value, sizeof(value));
                pipit_format(p->why, sizeof(p->why), "contacts[%zu].name: %s (duplicate name)", i,
                             value);
                return false;
            }
        }
        s->n_contacts = i + 1;
    }
    return true;
}

static bool parse_thread(struct parse *p, const json_t *item, size_t i, struct phone_thread *t) {
    char path[48];
    pipit_format(path, sizeof(path), "threads[%zu]", i);
    if (!item_object(p, path, item, THREAD_FIELDS) ||
        !field_text(p, path, item, "id", 1, ID_CHARS, t->id, sizeof(t->id)) ||
        !field_text(p, path, item, "contact", 1, NAME_CHARS, t->contact, sizeof(t->contact))) {
        return false;
    }
    const json_t *msgs = json_object_get(item, "messages");
    pipit_format(path, sizeof(path), "threads[%zu].messages", i);
    void *items;
    if (!parse_array(p, path, msgs, MAX_MESSAGES, sizeof(*t->messages), &items)) {
        return false;
    }
    t->messages = items;
    for (size_t m = 0; m < json_array_size(msgs); m++) {
        struct phone_message *msg = &t->messages[m];
        const json_t *mv = json_array_get(msgs, m);
        int from;
        pipit_format(path, sizeof(path), "threads[%zu].messages[%zu]", i, m);
        if (!item_object(p, path, mv, MESSAGE_FIELDS) ||
            !field_enum(p, path, mv, "from", FROM_NAMES, 2, &from) ||
            !field_bool(p, path, mv, "unread", false, &msg->unread) ||
            !field_dup(p, path, mv, "text", 1, MESSAGE_CHARS, &msg->text)) {
            return false;
        }
        t->n_messages = m + 1;
        msg->outgoing = from == 1;
        if (msg->outgoing && msg->unread) {
            pipit_format(p->why, sizeof(p->why), "%s: a message from \"me\" can't be unread", path);
            return false;
        }
    }
    return true;
}

static bool parse_threads(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "threads", v, MAX_THREADS, sizeof(*s->threads), &items)) {
        return false;
    }
    s->threads = items;
    for (size_t i = 0; i < json_array_size(v); i++) {
        s->n_threads = i + 1; /* counted before parsing so a failure frees its messages */
        if (!parse_thread(p, json_array_get(v, i), i, &s->threads[i]) ||
            !id_unique(p, "threads", s->threads[0].id, sizeof(*s->threads), i)) {
            return false;
        }
    }
    return true;
}

static bool parse_photos(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "photos", v, MAX_PHOTOS, sizeof(*s->photos), &items)) {
        return false;
    }
    s->photos = items; /* no heap inside an item: count them all at once */
    s->n_photos = json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_photo *ph = &s->photos[i];
        const json_t *item = json_array_get(v, i);
        char path[48];
        pipit_format(path, sizeof(path), "photos[%zu]", i);
        if (!item_object(p, path, item, PHOTO_FIELDS) ||
            !field_text(p, path, item, "id", 1, ID_CHARS, ph->id, sizeof(ph->id)) ||
            !field_text(p, path, item, "date", 10, 10, ph->date, sizeof(ph->date)) ||
            !field_text(p, path, item, "place", 1, PLACE_CHARS, ph->place, sizeof(ph->place))) {
            return false;
        }
        if (!date_ok(ph->date)) {
            pipit_format(path, sizeof(path), "photos[%zu].date", i);
            return bad_value(p, path, json_object_get(item, "date"), "a date YYYY-MM-DD");
        }
        const json_t *tags = json_object_get(item, "tags");
        pipit_format(path, sizeof(path), "photos[%zu].tags", i);
        if (!json_is_array(tags) || json_array_size(tags) > MAX_TAGS) {
            return bad_value(p, path, tags, "an array of at most 8 strings");
        }
        for (size_t t = 0; t < json_array_size(tags); t++) {
            const json_t *tag = json_array_get(tags, t);
            if (!json_text_ok(tag, 1, TAG_CHARS, false)) {
                pipit_format(path, sizeof(path), "photos[%zu].tags[%zu]", i, t);
                return bad_value(p, path, tag, "a string of 1 to 32 characters");
            }
            copy_text(ph->tags[t], sizeof(ph->tags[t]), tag);
            ph->n_tags = t + 1;
        }
        if (!id_unique(p, "photos", s->photos[0].id, sizeof(*s->photos), i)) {
            return false;
        }
    }
    return true;
}

static bool parse_notes(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "notes", v, MAX_NOTES, sizeof(*s->notes), &items)) {
        return false;
    }
    s->notes = items;
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_note *n = &s->notes[i];
        const json_t *item = json_array_get(v, i);
        char path[48];
        pipit_format(path, sizeof(path), "notes[%zu]", i);
        s->n_notes = i + 1;
        if (!item_object(p, path, item, NOTE_FIELDS) ||
            !field_text(p, path, item, "id", 1, ID_CHARS, n->id, sizeof(n->id)) ||
            !field_dup(p, path, item, "title", 1, TITLE_CHARS, &n->title) ||
            !field_dup(p, path, item, "body", 0, NOTE_CHARS, &n->body) ||
            !id_unique(p, "notes", s->notes[0].id, sizeof(*s->notes), i)) {
            return false;
        }
        if (strchr(n->title, '\n') != NULL || strchr(n->title, '\t') != NULL) {
            pipit_format(path, sizeof(path), "notes[%zu].title", i);
            return bad_value(p, path, json_object_get(item, "title"), "a single line");
        }
    }
    return true;
}

static bool parse_alarms(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "alarms", v, MAX_ALARMS, sizeof(*s->alarms), &items)) {
        return false;
    }
    s->alarms = items;
    s->n_alarms = json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_alarm *a = &s->alarms[i];
        const json_t *item = json_array_get(v, i);
        char path[48], time[6];
        pipit_format(path, sizeof(path), "alarms[%zu]", i);
        if (!item_object(p, path, item, ALARM_FIELDS) ||
            !field_text(p, path, item, "id", 1, ID_CHARS, a->id, sizeof(a->id)) ||
            !field_text(p, path, item, "time", 5, 5, time, sizeof(time)) ||
            !field_text(p, path, item, "label", 1, LABEL_CHARS, a->label, sizeof(a->label)) ||
            !field_bool(p, path, item, "enabled", true, &a->enabled) ||
            !id_unique(p, "alarms", s->alarms[0].id, sizeof(*s->alarms), i)) {
            return false;
        }
        if (!parse_time(time, a->time) || strcmp(time, a->time) != 0) {
            pipit_format(path, sizeof(path), "alarms[%zu].time", i);
            return bad_value(p, path, json_object_get(item, "time"), "a 24-hour time HH:MM");
        }
    }
    return true;
}

static bool parse_timers(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "timers", v, MAX_TIMERS, sizeof(*s->timers), &items)) {
        return false;
    }
    s->timers = items;
    s->n_timers = json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_timer *t = &s->timers[i];
        const json_t *item = json_array_get(v, i);
        char path[48];
        int64_t minutes;
        pipit_format(path, sizeof(path), "timers[%zu]", i);
        if (!item_object(p, path, item, TIMER_FIELDS) ||
            !field_text(p, path, item, "id", 1, ID_CHARS, t->id, sizeof(t->id)) ||
            !field_int(p, path, item, "minutes", 1, TIMER_MAX_MINUTES, &minutes) ||
            !id_unique(p, "timers", s->timers[0].id, sizeof(*s->timers), i)) {
            return false;
        }
        t->minutes = (int32_t)minutes;
    }
    return true;
}

static bool parse_tickets(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "tickets", v, MAX_TICKETS, sizeof(*s->tickets), &items)) {
        return false;
    }
    s->tickets = items;
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_ticket *t = &s->tickets[i];
        const json_t *item = json_array_get(v, i);
        char path[48];
        int priority, status;
        pipit_format(path, sizeof(path), "tickets[%zu]", i);
        s->n_tickets = i + 1;
        if (!item_object(p, path, item, TICKET_FIELDS) ||
            !field_text(p, path, item, "id", 1, ID_CHARS, t->id, sizeof(t->id)) ||
            !field_enum(p, path, item, "priority", PRIORITY_NAMES, PRIORITY_COUNT, &priority) ||
            !field_enum(p, path, item, "status", TICKET_STATUS_NAMES, TICKET_STATUS_COUNT,
                        &status) ||
            !field_dup(p, path, item, "summary", 1, SUMMARY_CHARS, &t->summary) ||
            !id_unique(p, "tickets", s->tickets[0].id, sizeof(*s->tickets), i)) {
            return false;
        }
        t->priority = (enum priority)priority;
        t->status = (enum ticket_status)status;
    }
    return true;
}

static bool parse_files(struct parse *p, const json_t *v, struct phone_state *s) {
    void *items;
    if (!parse_array(p, "files", v, MAX_FILES, sizeof(*s->files), &items)) {
        return false;
    }
    s->files = items;
    s->n_files = json_array_size(v);
    for (size_t i = 0; i < json_array_size(v); i++) {
        struct phone_file *f = &s->files[i];
        const json_t *item = json_array_get(v, i);
        char path[48];
        pipit_format(path, sizeof(path), "files[%zu]", i);
        if (!item_object(p, path, item, FILE_FIELDS) ||
            !field_text(p, path, item, "id", 1, ID_CHARS, f->id, sizeof(f->id)) ||
            !field_text(p, path, item, "path", 2, PATH_CHARS, f->path, sizeof(f->path)) ||
            !field_int(p, path, item, "size_kb", 0, MAX_FILE_KB, &f->size_kb) ||
            !field_bool(p, path, item, "locked", false, &f->locked) ||
            !id_unique(p, "files", s->files[0].id, sizeof(*s->files), i)) {
            return false;
        }
        size_t n = strlen(f->path);
        if (f->path[0] != '/' || f->path[n - 1] == '/') {
            pipit_format(path, sizeof(path), "files[%zu].path", i);
            return bad_value(p, path, json_object_get(item, "path"),
                             "an absolute path to a file, \"/Documents/a.pdf\"");
        }
    }
    return true;
}

static bool parse_navigation(struct parse *p, const json_t *v, struct phone_state *s) {
    struct phone_navigation *n = &s->navigation;
    memset(n, 0, sizeof(*n));
    if (json_is_null(v)) {
        return true;
    }
    int mode;
    int64_t eta;
    if (!item_object(p, "navigation", v, NAVIGATION_FIELDS) ||
        !field_text(p, "navigation", v, "destination", 1, DEST_CHARS, n->destination,
                    sizeof(n->destination)) ||
        !field_enum(p, "navigation", v, "mode", MODE_NAMES, MODE_COUNT, &mode) ||
        !field_int(p, "navigation", v, "eta_min", 1, MAX_ETA_MIN, &eta)) {
        return false;
    }
    n->active = true;
    n->mode = (enum travel_mode)mode;
    n->eta_min = (int32_t)eta;
    return true;
}

static bool parse_ride(struct parse *p, const json_t *v, struct phone_state *s) {
    struct phone_ride *r = &s->ride;
    memset(r, 0, sizeof(*r));
    if (json_is_null(v)) {
        return true;
    }
    int service;
    int64_t pickup;
    if (!item_object(p, "ride", v, RIDE_FIELDS) ||
        !field_text(p, "ride", v, "id", 1, ID_CHARS, r->id, sizeof(r->id)) ||
        !field_text(p, "ride", v, "destination", 1, DEST_CHARS, r->destination,
                    sizeof(r->destination)) ||
        !field_enum(p, "ride", v, "service", SERVICE_NAMES, SERVICE_COUNT, &service) ||
        !field_int(p, "ride", v, "pickup_min", 1, MAX_ETA_MIN, &pickup)) {
        return false;
    }
    r->active = true;
    r->service = (enum ride_service)service;
    r->pickup_min = (int32_t)pickup;
    return true;
}

/* An object of some of `names` (the others keep their value in `out`). */
static bool parse_flags(struct parse *p,
                        const char *key,
                        const json_t *v,
                        const char *const *names,
                        int n,
                        bool *bools,
                        int64_t *ints) {
    if (!json_is_object(v)) {
        return bad_value(p, key, v, "an object");
    }
    const char *name;
    json_t *value;
    json_object_foreach((json_t *)v, name, value) {
        int i = 0;
        while (i < n && strcmp(names[i], name) != 0) {
            i++;
        }
        char path[96];
        if (i == n) {
            char expect[200];
            device_describe_string(name, path, sizeof(path));
            join_names(names, n, expect, sizeof(expect));
            pipit_format(p->why, sizeof(p->why), "%s: unknown key %s (expected %s)", key, path,
                         expect);
            return false;
        }
        pipit_format(path, sizeof(path), "%s.%s", key, name);
        if (bools != NULL) {
            if (!json_is_boolean(value)) {
                return bad_value(p, path, value, "true or false");
            }
            bools[i] = json_is_true(value);
        } else if (!json_int_in(value, 1, PHONE_COUNTER_MAX, &ints[i])) {
            return bad_value(p, path, value, "an integer from 1 to 999999999");
        }
    }
    return true;
}

static bool parse_bool_key(struct parse *p, const char *key, const json_t *v, bool *out) {
    if (!json_is_boolean(v)) {
        return bad_value(p, key, v, "true or false");
    }
    *out = json_is_true(v);
    return true;
}

/* Parse key `k` from `v` into the staging state `s`. */
static bool parse_key(struct parse *p, enum phone_key k, const json_t *v, struct phone_state *s) {
    switch (k) {
        case KEY_WIFI:
            return parse_bool_key(p, "wifi", v, &s->wifi);
        case KEY_BLUETOOTH:
            return parse_bool_key(p, "bluetooth", v, &s->bluetooth);
        case KEY_AIRPLANE_MODE:
            return parse_bool_key(p, "airplane_mode", v, &s->airplane_mode);
        case KEY_PERMISSIONS:
            return parse_flags(p, "permissions", v, PERM_NAMES, PERM_COUNT, s->permissions, NULL);
        case KEY_CONTACTS:
            return parse_contacts(p, v, s);
        case KEY_THREADS:
            return parse_threads(p, v, s);
        case KEY_PHOTOS:
            return parse_photos(p, v, s);
        case KEY_NOTES:
            return parse_notes(p, v, s);
        case KEY_ALARMS:
            return parse_alarms(p, v, s);
        case KEY_TIMERS:
            return parse_timers(p, v, s);
        case KEY_TICKETS:
            return parse_tickets(p, v, s);
        case KEY_FILES:
            return parse_files(p, v, s);
        case KEY_NAVIGATION:
            return parse_navigation(p, v, s);
        case KEY_RIDE:
            return parse_ride(p, v, s);
        case KEY_NEXT_IDS:
            return parse_flags(p, "next_ids", v, IDK_NAMES, IDK_COUNT, NULL, s->next_ids);
        case KEY_COUNT:
            break;
    }
    return false;
}

static enum pipit_status
state_apply(struct phone_state *state, const json_t *overrides, struct pipit_error *err) {
    char value[96];
    if (!json_is_object(overrides)) {
        device_describe_json(overrides, value, sizeof(value));
        return pipit_error_set(err, PIPIT_ERR_JSON, "phone: state overrides are not an object: %s",
                               value);
    }
    /* staging: the merged keys (permissions, next_ids) start from the current values */
    struct phone_state next;
    memset(&next, 0, sizeof(next));
    memcpy(next.permissions, state->permissions, sizeof(next.permissions));
    memcpy(next.next_ids, state->next_ids, sizeof(next.next_ids));
    uint32_t given = 0;
    struct parse p = {.why = "", .nomem = false};
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)overrides, key, v) {
        int k = 0;
        while (k < KEY_COUNT && strcmp(KEY_NAMES[k], key) != 0) {
            k++;
        }
        if (k == KEY_COUNT) {
            state_free(&next);
            device_describe_string(key, value, sizeof(value));
            return pipit_error_set(err, PIPIT_ERR_JSON, "phone: unknown state key: %s", value);
        }
        given |= UINT32_C(1) << k;
        if (!parse_key(&p, (enum phone_key)k, v, &next)) {
            state_free(&next);
            if (p.nomem) {
                return pipit_error_set(err, PIPIT_ERR_NOMEM, "phone: set_state: out of memory");
            }
            return pipit_error_set(err, PIPIT_ERR_JSON, "phone: invalid state value: %s", p.why);
        }
    }
    for (int k = 0; k < KEY_COUNT; k++) {
        if (given & (UINT32_C(1) << k)) {
            free_part(state, (enum phone_key)k);
            move_part(state, &next, (enum phone_key)k);
        }
    }
    state_free(&next);
    return PIPIT_OK;
}

static enum pipit_status
phone_set_state(void *self, const json_t *overrides, struct pipit_error *err) {
    struct phone *ph = self;
    if (ph == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "phone: set_state: NULL phone");
    }
    return state_apply(&ph->state, overrides, err);
}

static json_t *phone_get_state(const void *self) {
    const struct phone *ph = self;
    if (ph == NULL) {
        return NULL;
    }
    return state_to_json(&ph->state);
}

/* ============================================================================
 * lookups */

/* Index of the item whose ID (at stride `stride` from `ids`) equals `id`
 * case-insensitively, -1 when none. */
static long find_id(const char *ids, size_t stride, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++) {
        if (eq_nocase(ids + i * stride, id)) {
            return (long)i;
        }
    }
    return -1;
}

#define FIND_ID(arr, n, wanted) \
    ((n) > 0 ? find_id((arr)[0].id, sizeof((arr)[0]), (n), (wanted)) : -1)

/* Whether an item of kind `k` already has ID `id`. */
static bool id_taken(const struct phone_state *s, enum idkind k, const char *id) {
    switch (k) {
        case IDK_THREAD:
            return FIND_ID(s->threads, s->n_threads, id) >= 0;
        case IDK_ALARM:
            return FIND_ID(s->alarms, s->n_alarms, id) >= 0;
        case IDK_TIMER:
            return FIND_ID(s->timers, s->n_timers, id) >= 0;
        case IDK_NOTE:
            return FIND_ID(s->notes, s->n_notes, id) >= 0;
        case IDK_TICKET:
            return FIND_ID(s->tickets, s->n_tickets, id) >= 0;
        case IDK_RIDE:
            return s->ride.active && eq_nocase(s->ride.id, id);
        case IDK_COUNT:
            break;
    }
    return false;
}

/* ============================================================================
 * tools */

/* One call in progress. Tools check and prepare without touching `s`, build
 * `data`, then commit with stores that cannot fail. */
struct phone_call {
    const struct phone_spec *spec;
    const char *tool;
    struct phone_state *s;
    const json_t *args; /* an object */
    struct device_result *r;
    json_t *data; /* success: the result, built before the commit */
};

enum outcome {
    DONE,   /* committed, data set */
    FAILED, /* r holds the code and message; nothing changed */
    NOMEM,  /* an allocation failed; nothing changed */
};

static enum outcome fail(struct phone_call *c, const char *code, const char *fmt, ...)
    PIPIT_PRINTF(3, 4);

static enum outcome fail(struct phone_call *c, const char *code, const char *fmt, ...) {
    char msg[sizeof(c->r->message)];
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    device_result_fail(c->r, code, "%s", msg);
    return FAILED;
}

static enum outcome denied(struct phone_call *c, enum perm p) {
    return fail(c, "permission_denied", "the app is not allowed to %s", PERM_WHAT[p]);
}

/* The next ID of kind `k` into buf ("T-1001"), skipping IDs in use; *counter
 * is the number used. Fails with limit_reached past PHONE_COUNTER_MAX. */
static enum outcome
new_id(struct phone_call *c, enum idkind k, char *buf, size_t size, int64_t *counter) {
    int64_t n = c->s->next_ids[k];
    for (;; n++) {
        if (n > PHONE_COUNTER_MAX) {
            return fail(c, "limit_reached", "no %s IDs are left", IDK_NAMES[k]);
        }
        pipit_format(buf, size, "%s%" PRId64, IDK_PREFIX[k], n);
        if (!id_taken(c->s, k, buf)) {
            *counter = n;
            return DONE;
        }
    }
}

/* Fail with invalid_argument naming the argument and its value. */
static enum outcome
bad_arg(struct phone_call *c, const char *name, const json_t *v, const char *expect) {
    char value[96];
    if (v == NULL) {
        return fail(c, "invalid_argument", "argument \"%s\" is missing", name);
    }
    device_describe_json(v, value, sizeof(value));
    return fail(c, "invalid_argument", "argument \"%s\" must be %s, got %s", name, expect, value);
}

/* A text argument of 1..max_chars non-blank characters (newlines allowed when
 * `multiline`). *out is NULL when `optional` and the argument is missing. */
static bool arg_text(struct phone_call *c,
                     const char *name,
                     size_t max_chars,
                     bool multiline,
                     bool optional,
                     const char **out) {
    const json_t *v = json_object_get(c->args, name);
    for (size_t i = 0; i < c->spec->n_lengths; i++) {
        if (strcmp(c->spec->lengths[i].tool, c->tool) == 0 &&
            strcmp(c->spec->lengths[i].arg, name) == 0 &&
            c->spec->lengths[i].max_chars < max_chars) {
            max_chars = c->spec->lengths[i].max_chars; /* the spec's, stricter */
        }
    }
    *out = NULL;
    if (v == NULL && optional) {
        return true;
    }
    if (!json_text_ok(v, 1, max_chars, multiline)) {
        char expect[96];
        pipit_format(expect, sizeof(expect), "a non-empty string of at most %zu characters%s",
                     max_chars, multiline ? "" : " on one line");
        bad_arg(c, name, v, expect);
        return false;
    }
    *out = json_string_value(v);
    return true;
}

/* An argument naming one of `names` that the spec allows (`ok`, bit i: names[i]). */
static bool arg_enum(struct phone_call *c,
                     const char *name,
                     const char *const *names,
                     int n,
                     uint32_t ok,
                     int *out) {
    const json_t *v = json_object_get(c->args, name);
    *out = enum_find(v, names, n);
    *out = *out >= 0 && (ok & (UINT32_C(1) << *out)) != 0 ? *out : -1;
    if (*out < 0) {
        char expect[160];
        join_allowed(names, n, ok, expect, sizeof(expect));
        bad_arg(c, name, v, expect);
        return false;
    }
    return true;
}

static bool arg_bool(struct phone_call *c, const char *name, bool *out) {
    const json_t *v = json_object_get(c->args, name);
    if (!json_is_boolean(v)) {
        bad_arg(c, name, v, "true or false");
        return false;
    }
    *out = json_is_true(v);
    return true;
}

static bool online(const struct phone_state *s) {
    return s->wifi || !s->airplane_mode;
}

static enum outcome offline(struct phone_call *c) {
    return fail(c, "offline", "the phone is offline: airplane mode is on and Wi-Fi is off");
}

/* ---------------------------------------------------------------------------
 * messages */

struct recipient {
    char name[TEXT_BYTES(NAME_CHARS)]; /* the contact's name, or the number as given */
    long contact;                      /* index in contacts, -1 for a bare number */
};

/* Resolve a recipient: a phone number (a contact's, or any), a contact's full
 * name, or a unique word of a name ("Alice", "Chen"). Needs the contacts
 * permission for names. */
static enum outcome
resolve_recipient(struct phone_call *c, const char *query, struct recipient *out) {
    const struct phone_state *s = c->s;
    char digits[16], quoted[96];
    device_describe_string(query, quoted, sizeof(quoted));
    out->contact = -1;
    if (number_digits(query, digits)) {
        for (size_t i = 0; s->permissions[PERM_CONTACTS] && i < s->n_contacts; i++) {
            if (same_number(s->contacts[i].number, query)) {
                out->contact = (long)i;
                pipit_format(out->name, sizeof(out->name), "%s", s->contacts[i].name);
                return DONE;
            }
        }
        pipit_format(out->name, sizeof(out->name), "%s", query);
        return DONE;
    }
    if (!s->permissions[PERM_CONTACTS]) {
        return denied(c, PERM_CONTACTS);
    }
    char q[TEXT_BYTES(RECIPIENT_CHARS)], name[TEXT_BYTES(NAME_CHARS)];
    fold(query, q, sizeof(q));
    long found[3];
    size_t n_found = 0;
    for (size_t i = 0; i < s->n_contacts; i++) {
        fold(s->contacts[i].name, name, sizeof(name));
        if (q[0] != '\0' && strcmp(name, q) == 0) {
            n_found = 1;
            found[0] = (long)i;
            break;
        }
        if (has_word(name, q) && n_found < 3) {
            found[n_found++] = (long)i;
        }
    }
    if (n_found == 0) {
        return fail(c, "unknown_recipient", "no contact or phone number matches %s", quoted);
    }
    if (n_found > 1) {
        return fail(c, "ambiguous_recipient", "%s could be %s or %s%s", quoted,
                    s->contacts[found[0]].name, s->contacts[found[1]].name,
                    n_found > 2 ? " (or others)" : "");
    }
    out->contact = found[0];
    pipit_format(out->name, sizeof(out->name), "%s", s->contacts[found[0]].name);
    return DONE;
}

static long find_thread_with(const struct phone_state *s, const struct recipient *to) {
    for (size_t i = 0; i < s->n_threads; i++) {
        const char *who = s->threads[i].contact;
        if (to->contact >= 0 ? eq_nocase(who, to->name) : same_number(who, to->name)) {
            return (long)i;
        }
    }
    return -1;
}

/* Append an outgoing message `text` to the thread with `to`, creating the
 * thread when there is none; data {"thread_id", "recipient"} plus the extra
 * pair (key2, value2) when key2 is not NULL. */
static enum outcome deliver(struct phone_call *c,
                            const struct recipient *to,
                            const char *text,
                            const char *key2,
                            const char *value2) {
    struct phone_state *s = c->s;
    long t = find_thread_with(s, to);
    char id[TEXT_BYTES(ID_CHARS)];
    int64_t counter = 0;
    if (t < 0) {
        if (s->n_threads >= MAX_THREADS) {
            return fail(c, "limit_reached", "the phone keeps at most %d conversations",
                        MAX_THREADS);
        }
        if (new_id(c, IDK_THREAD, id, sizeof(id), &counter) != DONE) {
            return FAILED;
        }
    } else {
        pipit_format(id, sizeof(id), "%s", s->threads[t].id);
    }
    if (!online(s)) {
        return offline(c);
    }
    /* prepare: the text, room for the message (and the thread), the data */
    char *copy = dup_text(text, strlen(text));
    if (copy == NULL) {
        return NOMEM;
    }
    struct phone_message *msgs = NULL;
    if (t < 0 || s->threads[t].n_messages < MAX_MESSAGES) {
        size_t n = t < 0 ? 1 : s->threads[t].n_messages + 1;
        msgs = realloc(t < 0 ? NULL : s->threads[t].messages, n * sizeof(*msgs));
        if (msgs == NULL) {
            free(copy);
            return NOMEM;
        }
        if (t >= 0) {
            s->threads[t].messages = msgs; /* same content, more room */
        }
    }
    if (t < 0) {
        struct phone_thread *threads = realloc(s->threads, (s->n_threads + 1) * sizeof(*threads));
        if (threads == NULL) {
            free(msgs);
            free(copy);
            return NOMEM;
        }
        s->threads = threads;
    }
    /* an existing thread names the recipient as it always did */
    c->data = json_pack("{s:s,s:s}", "thread_id", id, "recipient",
                        t < 0 ? to->name : s->threads[t].contact);
    if (c->data != NULL && key2 != NULL && !put(c->data, key2, json_string(value2))) {
        json_decref(c->data);
        c->data = NULL;
    }
    if (c->data == NULL) {
        if (t < 0) {
            free(msgs);
        }
        free(copy);
        return NOMEM;
    }
    /* commit */
    struct phone_message m = {.outgoing = true, .unread = false, .text = copy};
    if (t < 0) {
        struct phone_thread *th = &s->threads[s->n_threads];
        memset(th, 0, sizeof(*th));
        pipit_format(th->id, sizeof(th->id), "%s", id);
        pipit_format(th->contact, sizeof(th->contact), "%s", to->name);
        th->messages = msgs;
        th->messages[0] = m;
        th->n_messages = 1;
        s->n_threads++;
        s->next_ids[IDK_THREAD] = counter + 1;
    } else {
        struct phone_thread *th = &s->threads[t];
        if (th->n_messages == MAX_MESSAGES) {
            /* full: the oldest message goes */
            free(th->messages[0].text);
            memmove(th->messages, th->messages + 1, (th->n_messages - 1) * sizeof(*th->messages));
            th->n_messages--;
        }
        th->messages[th->n_messages++] = m;
    }
    return DONE;
}

static enum outcome tool_send_message(struct phone_call *c) {
    const char *recipient, *body;
    struct recipient to;
    if (!c->s->permissions[PERM_MESSAGES]) {
        return denied(c, PERM_MESSAGES);
    }
    if (!arg_text(c, "recipient", RECIPIENT_CHARS, false, false, &recipient) ||
        !arg_text(c, "body", MESSAGE_CHARS, true, false, &body)) {
        return FAILED;
    }
    if (resolve_recipient(c, recipient, &to) != DONE) {
        return FAILED;
    }
    return deliver(c, &to, body, NULL, NULL);
}

static size_t thread_unread(const struct phone_thread *t) {
    size_t n = 0;
    for (size_t i = 0; i < t->n_messages; i++) {
        n += t->messages[i].unread ? 1 : 0;
    }
    return n;
}

static enum outcome tool_read_messages(struct phone_call *c) {
    const struct phone_state *s = c->s;
    const char *thread_id;
    char text[TEXT_BYTES(120)];
    if (!s->permissions[PERM_MESSAGES]) {
        return denied(c, PERM_MESSAGES);
    }
    if (!arg_text(c, "thread_id", ARG_ID_CHARS, false, true, &thread_id)) {
        return FAILED;
    }
    struct strbuf summary = {0};
    json_t *list = json_array();
    if (thread_id != NULL) {
        long t = FIND_ID(s->threads, s->n_threads, thread_id);
        if (t < 0) {
            json_decref(list);
            char quoted[96];
            device_describe_string(thread_id, quoted, sizeof(quoted));
            return fail(c, "not_found", "there is no conversation %s", quoted);
        }
        const struct phone_thread *th = &s->threads[t];
        size_t first = th->n_messages > MAX_RESULTS ? th->n_messages - MAX_RESULTS : 0;
        strbuf_printf(&summary, "%s:", th->contact);
        for (size_t i = first; i < th->n_messages; i++) {
            const struct phone_message *m = &th->messages[i];
            const char *from = m->outgoing ? "me" : th->contact;
            cut_text(m->text, 120, text, sizeof(text));
            if (list != NULL &&
                json_array_append_new(list, json_pack("{s:s,s:s}", "from", from, "text", text))) {
                json_decref(list);
                list = NULL;
            }
            strbuf_printf(&summary, "%s %s: \"%s\"", i == first ? "" : ";", from, text);
        }
        if (th->n_messages == 0) {
            strbuf_str(&summary, " no messages");
        }
        char *sum = strbuf_take(&summary);
        if (sum == NULL || list == NULL) {
            json_decref(list);
            free(sum);
            return NOMEM;
        }
        /* "o" takes `list`, also when json_pack fails */
        c->data = json_pack("{s:s,s:s,s:i,s:o,s:s}", "thread_id", th->id, "contact", th->contact,
                            "count", (int)th->n_messages, "messages", list, "summary", sum);
        free(sum);
        return c->data != NULL ? DONE : NOMEM;
    }
    size_t unread = 0;
    for (size_t i = 0; i < s->n_threads; i++) {
        unread += thread_unread(&s->threads[i]);
    }
    strbuf_printf(&summary, "%zu conversation%s, %zu unread", s->n_threads,
                  s->n_threads == 1 ? "" : "s", unread);
    /* newest conversation first */
    for (size_t k = 0; k < s->n_threads && k < MAX_RESULTS; k++) {
        const struct phone_thread *th = &s->threads[s->n_threads - 1 - k];
        const char *last = "";
        bool outgoing = false;
        if (th->n_messages > 0) {
            last = th->messages[th->n_messages - 1].text;
            outgoing = th->messages[th->n_messages - 1].outgoing;
        }
        cut_text(last, 80, text, sizeof(text));
        size_t u = thread_unread(th);
        if (list != NULL &&
            json_array_append_new(list,
                                  json_pack("{s:s,s:s,s:i,s:s}", "thread_id", th->id, "contact",
                                            th->contact, "unread", (int)u, "last", text)) != 0) {
            json_decref(list);
            list = NULL;
        }
        strbuf_printf(&summary, "%s %s (%s%s): %s\"%s\"", k == 0 ? "." : ";", th->contact, th->id,
                      u > 0 ? ", unread" : "", outgoing ? "me: " : "", text);
    }
    char *sum = strbuf_take(&summary);
    if (sum == NULL || list == NULL) {
        json_decref(list);
        free(sum);
        return NOMEM;
    }
    c->data = json_pack("{s:i,s:i,s:o,s:s}", "count", (int)s->n_threads, "unread", (int)unread,
                        "threads", list, "summary", sum);
    free(sum);
    return c->data != NULL ? DONE : NOMEM;
}

/* ---------------------------------------------------------------------------
 * photos */

static const char *const STOPWORDS[] = {
    "a",    "an",   "the",   "of",     "from",  "in",    "at",     "on",      "to",
    "with", "and",  "my",    "me",     "i",     "photo", "photos", "picture", "pictures",
    "pic",  "pics", "image", "images", "shot",  "shots", "taken",  "show",    "find",
    "all",  "some", "any",   "trip",   "last",  "that",  "this",   "during",  "for",
    "our",  "us",   "we",    "took",   "where", "when",  "was",    "were",    "by"};

static const char *const MONTHS[12] = {"january",   "february", "march",    "april",
                                       "may",       "june",     "july",     "august",
                                       "september", "october",  "november", "december"};

static bool stopword(const char *w) {
    for (size_t i = 0; i < sizeof(STOPWORDS) / sizeof(STOPWORDS[0]); i++) {
        if (strcmp(STOPWORDS[i], w) == 0) {
            return true;
        }
    }
    return false;
}

/* 1..12 when `w` names a month ("june", "jun"), else 0. */
static int month_of(const char *w) {
    size_t n = strlen(w);
    for (int m = 0; m < 12; m++) {
        if (strcmp(MONTHS[m], w) == 0 || (n == 3 && strncmp(MONTHS[m], w, 3) == 0)) {
            return m + 1;
        }
    }
    return 0;
}

/* One query word against one folded field: the field contains the word, or the
 * word contains a field of 3+ characters ("beaches" finds "beach"). */
static bool word_hits(const char *field, const char *word) {
    return strstr(field, word) != NULL || (strlen(field) >= 3 && strstr(word, field) != NULL);
}

static bool photo_matches(const struct phone_photo *ph, const char *word) {
    char f[TEXT_BYTES(PLACE_CHARS)];
    int month = month_of(word);
    if (month > 0) {
        return (ph->date[5] - '0') * 10 + (ph->date[6] - '0') == month;
    }
    fold(ph->place, f, sizeof(f));
    if (word_hits(f, word)) {
        return true;
    }
    fold(ph->date, f, sizeof(f));
    if (strstr(f, word) != NULL) {
        return true;
    }
    for (size_t t = 0; t < ph->n_tags; t++) {
        fold(ph->tags[t], f, sizeof(f));
        if (word_hits(f, word)) {
            return true;
        }
    }
    return false;
}

static enum outcome tool_search_photos(struct phone_call *c) {
    const struct phone_state *s = c->s;
    const char *query;
    if (!s->permissions[PERM_PHOTOS]) {
        return denied(c, PERM_PHOTOS);
    }
    if (!arg_text(c, "query", QUERY_CHARS, false, false, &query)) {
        return FAILED;
    }
    char q[TEXT_BYTES(QUERY_CHARS)];
    fold(query, q, sizeof(q));
    json_t *list = json_array();
    size_t count = 0;
    for (size_t i = 0; i < s->n_photos; i++) {
        const struct phone_photo *ph = &s->photos[i];
        bool all = true;
        /* every word that is not a stopword must hit the date, the place or a tag */
        for (const char *w = q; *w != '\0' && all;) {
            size_t len = strcspn(w, " ");
            char word[TEXT_BYTES(QUERY_CHARS)];
            memcpy(word, w, len);
            word[len] = '\0';
            if (!stopword(word)) {
                all = photo_matches(ph, word);
            }
            w += len + (w[len] == ' ' ? 1 : 0);
        }
        if (!all) {
            continue;
        }
        if (++count <= MAX_RESULTS && list != NULL) {
            json_t *tags = json_array();
            for (size_t t = 0; tags != NULL && t < ph->n_tags; t++) {
                if (json_array_append_new(tags, json_string(ph->tags[t])) != 0) {
                    json_decref(tags);
                    tags = NULL;
                }
            }
            if (json_array_append_new(list,
                                      json_pack("{s:s,s:s,s:s,s:o}", "photo_id", ph->id, "date",
                                                ph->date, "place", ph->place, "tags", tags)) != 0) {
                json_decref(list);
                list = NULL;
            }
        }
    }
    if (list == NULL) {
        return NOMEM;
    }
    c->data = json_pack("{s:i,s:o}", "count", (int)count, "photos", list);
    return c->data != NULL ? DONE : NOMEM;
}

static enum outcome tool_share_photo(struct phone_call *c) {
    const struct phone_state *s = c->s;
    const char *photo_id, *recipient;
    struct recipient to;
    if (!s->permissions[PERM_PHOTOS]) {
        return denied(c, PERM_PHOTOS);
    }
    if (!s->permissions[PERM_MESSAGES]) {
        return denied(c, PERM_MESSAGES);
    }
    if (!arg_text(c, "photo_id", ARG_ID_CHARS, false, false, &photo_id) ||
        !arg_text(c, "recipient", RECIPIENT_CHARS, false, false, &recipient)) {
        return FAILED;
    }
    long p = FIND_ID(s->photos, s->n_photos, photo_id);
    if (p < 0) {
        char quoted[96];
        device_describe_string(photo_id, quoted, sizeof(quoted));
        return fail(c, "not_found", "there is no photo %s in the gallery", quoted);
    }
    if (resolve_recipient(c, recipient, &to) != DONE) {
        return FAILED;
    }
    char text[TEXT_BYTES(PLACE_CHARS) + 64];
    pipit_format(text, sizeof(text), "[photo %s: %s, %s]", s->photos[p].id, s->photos[p].place,
                 s->photos[p].date);
    return deliver(c, &to, text, "photo_id", s->photos[p].id);
}

/* ---------------------------------------------------------------------------
 * places: navigation and rides */

struct place {
    const char *name;
    int32_t km10;        /* distance from here in tenths of a kilometre */
    const char *keys[3]; /* folded words that name it */
};

/* Known places, specific names before generic ones ("oakland" before "airport"). */
static const struct place PLACES[] = {
    {"Home", 60, {"home", NULL, NULL}},
    {"Work", 60, {"work", "office", NULL}},
    {"Oakland", 190, {"oakland", NULL, NULL}},
    {"San Francisco International Airport", 210, {"sfo", "airport", NULL}},
    {"Golden Gate Park", 55, {"golden gate park", NULL, NULL}},
    {"Golden Gate Bridge", 90, {"golden gate bridge", NULL, NULL}},
    {"Ferry Building", 30, {"ferry building", NULL, NULL}},
    {"Union Square", 25, {"union square", NULL, NULL}},
    {"Dolores Park", 20, {"dolores park", NULL, NULL}},
    {"Caltrain Station", 35, {"caltrain", "train station", NULL}},
    {"Blue Bottle Coffee", 8, {"blue bottle", "coffee", NULL}},
    {"Whole Foods Market", 18, {"whole foods", "grocery", "supermarket"}},
    {"UC Berkeley", 200, {"berkeley", NULL, NULL}},
    {"Stanford University", 520, {"stanford", NULL, NULL}},
};

#define ADDRESS_KM10 40 /* a street address: 4 km */

/* Resolve a destination: a known place, or a street address ("1 Market St").
 * Fills name and distance; false when neither. */
static bool resolve_place(const char *dest, char *name, size_t size, int32_t *km10) {
    char f[TEXT_BYTES(DEST_CHARS)];
    fold(dest, f, sizeof(f));
    for (size_t i = 0; i < sizeof(PLACES) / sizeof(PLACES[0]); i++) {
        for (size_t k = 0; k < 3 && PLACES[i].keys[k] != NULL; k++) {
            if (has_word(f, PLACES[i].keys[k])) {
                pipit_format(name, size, "%s", PLACES[i].name);
                *km10 = PLACES[i].km10;
                return true;
            }
        }
    }
    /* a street address starts with a house number and has a street name */
    bool letters = false;
    for (const char *p = f; *p != '\0'; p++) {
        letters = letters || (*p >= 'a' && *p <= 'z');
    }
    if (f[0] >= '1' && f[0] <= '9' && letters && strchr(f, ' ') != NULL) {
        pipit_format(name, size, "%s", dest);
        *km10 = ADDRESS_KM10;
        return true;
    }
    return false;
}

static enum outcome tool_navigate_to(struct phone_call *c) {
    const char *dest;
    int mode;
    if (!c->s->permissions[PERM_LOCATION]) {
        return denied(c, PERM_LOCATION);
    }
    if (!arg_text(c, "destination", DEST_CHARS, false, false, &dest) ||
        !arg_enum(c, "mode", MODE_NAMES, MODE_COUNT, c->spec->mode_ok, &mode)) {
        return FAILED;
    }
    struct phone_navigation nav = {.active = true, .mode = (enum travel_mode)mode};
    int32_t km10;
    if (!resolve_place(dest, nav.destination, sizeof(nav.destination), &km10)) {
        char quoted[96];
        device_describe_string(dest, quoted, sizeof(quoted));
        return fail(c, "not_found", "no place or address matches %s", quoted);
    }
    /* minutes = km / kmh * 60, rounded up, at least 1 */
    int32_t speed10 = MODE_KMH[mode] * 10;
    nav.eta_min = (km10 * 60 + speed10 - 1) / speed10;
    nav.eta_min = nav.eta_min < 1 ? 1 : nav.eta_min;
    c->data = json_pack("{s:s,s:s,s:i}", "destination", nav.destination, "mode", MODE_NAMES[mode],
                        "eta_min", (int)nav.eta_min);
    if (c->data == NULL) {
        return NOMEM;
    }
    c->s->navigation = nav;
    return DONE;
}

static enum outcome tool_request_ride(struct phone_call *c) {
    struct phone_state *s = c->s;
    const char *dest;
    int service;
    if (!s->permissions[PERM_LOCATION]) {
        return denied(c, PERM_LOCATION);
    }
    if (!arg_text(c, "destination", DEST_CHARS, false, false, &dest) ||
        !arg_enum(c, "service", SERVICE_NAMES, SERVICE_COUNT, c->spec->service_ok, &service)) {
        return FAILED;
    }
    struct phone_ride ride = {.active = true, .service = (enum ride_service)service};
    int32_t km10;
    if (!resolve_place(dest, ride.destination, sizeof(ride.destination), &km10)) {
        char quoted[96];
        device_describe_string(dest, quoted, sizeof(quoted));
        return fail(c, "not_found", "no place or address matches %s", quoted);
    }
    if (s->ride.active) {
        return fail(c, "ride_in_progress", "ride %s to %s is already on its way", s->ride.id,
                    s->ride.destination);
    }
    if (!online(s)) {
        return offline(c);
    }
    int64_t counter;
    if (new_id(c, IDK_RIDE, ride.id, sizeof(ride.id), &counter) != DONE) {
        return FAILED;
    }
    ride.pickup_min = SERVICE_PICKUP_MIN[service];
    /* fare: $2.50 + $1.60 per km, scaled by the service, in cents */
    int64_t cents = (250 + (int64_t)km10 * 16) * SERVICE_FARE_PERCENT[service] / 100;
    c->data = json_pack("{s:s,s:s,s:s,s:i,s:f}", "ride_id", ride.id, "destination",
                        ride.destination, "service", SERVICE_NAMES[service], "pickup_min",
                        (int)ride.pickup_min, "fare_usd", (double)cents / 100.0);
    if (c->data == NULL) {
        return NOMEM;
    }
    s->ride = ride;
    s->next_ids[IDK_RIDE] = counter + 1;
    return DONE;
}

/* ---------------------------------------------------------------------------
 * alarms and timers */

static enum outcome tool_set_alarm(struct phone_call *c) {
    struct phone_state *s = c->s;
    const char *at, *label;
    struct phone_alarm a = {.enabled = true};
    if (!arg_text(c, "time", 5, false, false, &at) ||
        !arg_text(c, "label", LABEL_CHARS, false, true, &label)) {
        return FAILED;
    }
    if (!parse_time(at, a.time)) {
        return bad_arg(c, "time", json_object_get(c->args, "time"), "a 24-hour time HH:MM");
    }
    if (s->n_alarms >= MAX_ALARMS) {
        return fail(c, "limit_reached", "the phone holds at most %d alarms", MAX_ALARMS);
    }
    int64_t counter;
    if (new_id(c, IDK_ALARM, a.id, sizeof(a.id), &counter) != DONE) {
        return FAILED;
    }
    pipit_format(a.label, sizeof(a.label), "%s", label != NULL ? label : "Alarm");
    struct phone_alarm *alarms = realloc(s->alarms, (s->n_alarms + 1) * sizeof(*alarms));
    if (alarms == NULL) {
        return NOMEM;
    }
    s->alarms = alarms;
    c->data = json_pack("{s:s,s:s,s:s}", "alarm_id", a.id, "time", a.time, "label", a.label);
    if (c->data == NULL) {
        return NOMEM;
    }
    s->alarms[s->n_alarms++] = a;
    s->next_ids[IDK_ALARM] = counter + 1;
    return DONE;
}

static enum outcome tool_set_timer(struct phone_call *c) {
    struct phone_state *s = c->s;
    const json_t *v = json_object_get(c->args, "minutes");
    int64_t minutes;
    if (!json_int_in(v, c->spec->timer_min, c->spec->timer_max, &minutes)) {
        char expect[64];
        pipit_format(expect, sizeof(expect), "an integer from %lld to %lld",
                     (long long)c->spec->timer_min, (long long)c->spec->timer_max);
        return bad_arg(c, "minutes", v, expect);
    }
    if (s->n_timers >= MAX_TIMERS) {
        return fail(c, "limit_reached", "the phone runs at most %d timers", MAX_TIMERS);
    }
    struct phone_timer t = {.minutes = (int32_t)minutes};
    int64_t counter;
    if (new_id(c, IDK_TIMER, t.id, sizeof(t.id), &counter) != DONE) {
        return FAILED;
    }
    struct phone_timer *timers = realloc(s->timers, (s->n_timers + 1) * sizeof(*timers));
    if (timers == NULL) {
        return NOMEM;
    }
    s->timers = timers;
    c->data = json_pack("{s:s,s:i}", "timer_id", t.id, "minutes", (int)t.minutes);
    if (c->data == NULL) {
        return NOMEM;
    }
    s->timers[s->n_timers++] = t;
    s->next_ids[IDK_TIMER] = counter + 1;
    return DONE;
}

static enum outcome tool_cancel_timer(struct phone_call *c) {
    struct phone_state *s = c->s;
    const char *timer_id;
    if (!arg_text(c, "timer_id", ARG_ID_CHARS, false, false, &timer_id)) {
        return FAILED;
    }
    long t = FIND_ID(s->timers, s->n_timers, timer_id);
    if (t < 0) {
        char quoted[96];
        device_describe_string(timer_id, quoted, sizeof(quoted));
        return fail(c, "not_found", "there is no running timer %s", quoted);
    }
    c->data = json_pack("{s:s,s:i,s:s}", "timer_id", s->timers[t].id, "minutes",
                        (int)s->timers[t].minutes, "status", "cancelled");
    if (c->data == NULL) {
        return NOMEM;
    }
    memmove(&s->timers[t], &s->timers[t + 1], (s->n_timers - (size_t)t - 1) * sizeof(*s->timers));
    s->n_timers--;
    return DONE;
}

/* ---------------------------------------------------------------------------
 * notes */

static enum outcome tool_create_note(struct phone_call *c) {
    struct phone_state *s = c->s;
    const char *title, *body;
    const json_t *bv = json_object_get(c->args, "body");
    if (!arg_text(c, "title", TITLE_CHARS, false, false, &title)) {
        return FAILED;
    }
    /* an empty body is a fine note; a missing one is not */
    if (!json_text_ok(bv, 0, BODY_ARG_CHARS, true)) {
        return bad_arg(c, "body", bv, "a string of at most 4000 characters");
    }
    body = json_string_value(bv);
    if (s->n_notes >= MAX_NOTES) {
        return fail(c, "limit_reached", "the phone holds at most %d notes", MAX_NOTES);
    }
    struct phone_note n = {.title = NULL};
    int64_t counter;
    if (new_id(c, IDK_NOTE, n.id, sizeof(n.id), &counter) != DONE) {
        return FAILED;
    }
    n.title = dup_text(title, strlen(title));
    n.body = dup_text(body, strlen(body));
    struct phone_note *notes = n.title != NULL && n.body != NULL
                                   ? realloc(s->notes, (s->n_notes + 1) * sizeof(*notes))
                                   : NULL;
    if (notes != NULL) {
        s->notes = notes;
        c->data = json_pack("{s:s,s:s}", "note_id", n.id, "title", n.title);
    }
    if (c->data == NULL) {
        free(n.title);
        free(n.body);
        return NOMEM;
    }
    s->notes[s->n_notes++] = n;
    s->next_ids[IDK_NOTE] = counter + 1;
    return DONE;
}

static enum outcome tool_append_note(struct phone_call *c) {
    struct phone_state *s = c->s;
    const char *note_id, *text;
    if (!arg_text(c, "note_id", ARG_ID_CHARS, false, false, &note_id) ||
        !arg_text(c, "text", BODY_ARG_CHARS, true, false, &text)) {
        return FAILED;
    }
    long i = FIND_ID(s->notes, s->n_notes, note_id);
    if (i < 0) {
        char quoted[96];
        device_describe_string(note_id, quoted, sizeof(quoted));
        return fail(c, "not_found", "there is no note %s", quoted);
    }
    struct phone_note *n = &s->notes[i];
    size_t old = strlen(n->body);
    size_t sep = old > 0 ? 1 : 0;
    size_t chars = utf8_chars(n->body) + sep + utf8_chars(text);
    if (chars > NOTE_CHARS) {
        return fail(c, "limit_reached", "a note holds at most %d characters", NOTE_CHARS);
    }
    size_t add = strlen(text);
    char *body = malloc(old + sep + add + 1);
    if (body == NULL) {
        return NOMEM;
    }
    memcpy(body, n->body, old);
    if (sep) {
        body[old] = '\n';
    }
    memcpy(body + old + sep, text, add + 1);
    c->data = json_pack("{s:s,s:s,s:i}", "note_id", n->id, "title", n->title, "length", (int)chars);
    if (c->data == NULL) {
        free(body);
        return NOMEM;
    }
    free(n->body);
    n->body = body;
    return DONE;
}

/* ---------------------------------------------------------------------------
 * tickets */

static enum outcome tool_create_ticket(struct phone_call *c) {
    struct phone_state *s = c->s;
    const char *summary;
    int priority;
    if (!s->permissions[PERM_TICKETS]) {
        return denied(c, PERM_TICKETS);
    }
    if (!arg_text(c, "summary", SUMMARY_CHARS, true, false, &summary) ||
        !arg_enum(c, "priority", PRIORITY_NAMES, PRIORITY_COUNT, c->spec->priority_ok, &priority)) {
        return FAILED;
    }
    if (s->n_tickets >= MAX_TICKETS) {
        return fail(c, "limit_reached", "the helpdesk keeps at most %d tickets", MAX_TICKETS);
    }
    if (!online(s)) {
        return offline(c);
    }
    struct phone_ticket t = {.priority = (enum priority)priority, .status = TICKET_OPEN};
    int64_t counter;
    if (new_id(c, IDK_TICKET, t.id, sizeof(t.id), &counter) != DONE) {
        return FAILED;
    }
    t.summary = dup_text(summary, strlen(summary));
    struct phone_ticket *tickets =
        t.summary != NULL ? realloc(s->tickets, (s->n_tickets + 1) * sizeof(*tickets)) : NULL;
    if (tickets != NULL) {
        s->tickets = tickets;
        c->data = json_pack("{s:s,s:s,s:s}", "ticket_id", t.id, "status", "open", "priority",
                            PRIORITY_NAMES[priority]);
    }
    if (c->data == NULL) {
        free(t.summary);
        return NOMEM;
    }
    s->tickets[s->n_tickets++] = t;
    s->next_ids[IDK_TICKET] = counter + 1;
    return DONE;
}

static enum outcome tool_get_ticket_status(struct phone_call *c) {
    const struct phone_state *s = c->s;
    const char *ticket_id;
    char id[ARG_ID_CHARS + 8];
    if (!s->permissions[PERM_TICKETS]) {
        return denied(c, PERM_TICKETS);
    }
    if (!arg_text(c, "ticket_id", ARG_ID_CHARS, false, false, &ticket_id)) {
        return FAILED;
    }
    long t = FIND_ID(s->tickets, s->n_tickets, ticket_id);
    /* "1001" means "T-1001" */
    if (t < 0 && strspn(ticket_id, "0123456789") == strlen(ticket_id)) {
        pipit_format(id, sizeof(id), "T-%s", ticket_id);
        t = FIND_ID(s->tickets, s->n_tickets, id);
    }
    if (t < 0) {
        char quoted[96];
        device_describe_string(ticket_id, quoted, sizeof(quoted));
        return fail(c, "not_found", "there is no ticket %s", quoted);
    }
    const struct phone_ticket *tk = &s->tickets[t];
    char summary[TEXT_BYTES(120)];
    cut_text(tk->summary, 120, summary, sizeof(summary));
    c->data = json_pack("{s:s,s:s,s:s,s:s}", "ticket_id", tk->id, "status",
                        TICKET_STATUS_NAMES[tk->status], "priority", PRIORITY_NAMES[tk->priority],
                        "summary", summary);
    return c->data != NULL ? DONE : NOMEM;
}

/* ---------------------------------------------------------------------------
 * files */

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* How many words of the folded query `q` (not stopwords, not "file" or "files") the folded path
 * `f` holds on word boundaries ("budget spreadsheet": "budget" of "budget 2024 xlsx"). */
static size_t path_words(const char *f, const char *q) {
    size_t hits = 0;
    for (const char *w = q; *w != '\0';) {
        size_t len = strcspn(w, " ");
        char word[TEXT_BYTES(FILE_QUERY_CHARS)];
        memcpy(word, w, len);
        word[len] = '\0';
        if (!stopword(word) && strcmp(word, "file") != 0 && strcmp(word, "files") != 0 &&
            has_word(f, word)) {
            hits++;
        }
        w += len + (w[len] == ' ' ? 1 : 0);
    }
    return hits;
}

static enum outcome tool_find_file(struct phone_call *c) {
    const struct phone_state *s = c->s;
    const char *name;
    if (!s->permissions[PERM_FILES]) {
        return denied(c, PERM_FILES);
    }
    if (!arg_text(c, "name", FILE_QUERY_CHARS, false, false, &name)) {
        return FAILED;
    }
    char q[TEXT_BYTES(FILE_QUERY_CHARS)], f[TEXT_BYTES(PATH_CHARS)];
    fold(name, q, sizeof(q));
    json_t *list = json_array();
    size_t count = 0, best = 0;
    /* the name anywhere in the path; else the files whose paths hold the most of its words */
    for (size_t i = 0; q[0] != '\0' && i < s->n_files; i++) {
        fold(s->files[i].path, f, sizeof(f));
        if (strstr(f, q) != NULL) {
            best = (size_t)-1;
            break;
        }
        size_t h = path_words(f, q);
        best = h > best ? h : best;
    }
    for (size_t i = 0; q[0] != '\0' && best > 0 && i < s->n_files; i++) {
        fold(s->files[i].path, f, sizeof(f));
        if (best == (size_t)-1 ? strstr(f, q) == NULL : path_words(f, q) != best) {
            continue;
        }
        if (++count <= MAX_RESULTS && list != NULL &&
            json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "file_id", s->files[i].id,
                                                  "name", base_name(s->files[i].path), "path",
                                                  s->files[i].path)) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    if (count == 0) {
        json_decref(list);
        char quoted[96];
        device_describe_string(name, quoted, sizeof(quoted));
        return fail(c, "file_not_found", "no file name or folder matches %s", quoted);
    }
    if (list == NULL) {
        return NOMEM;
    }
    c->data = json_pack("{s:i,s:o}", "count", (int)count, "files", list);
    return c->data != NULL ? DONE : NOMEM;
}

static enum outcome tool_open_file(struct phone_call *c) {
    const struct phone_state *s = c->s;
    const char *file_id;
    if (!s->permissions[PERM_FILES]) {
        return denied(c, PERM_FILES);
    }
    if (!arg_text(c, "file_id", PATH_CHARS, false, false, &file_id)) {
        return FAILED;
    }
    /* an ID, or (leniently) the exact path or file name */
    long i = FIND_ID(s->files, s->n_files, file_id);
    for (size_t k = 0; i < 0 && k < s->n_files; k++) {
        if (strcmp(s->files[k].path, file_id) == 0 ||
            strcmp(base_name(s->files[k].path), file_id) == 0) {
            i = (long)k;
        }
    }
    if (i < 0) {
        char quoted[96];
        device_describe_string(file_id, quoted, sizeof(quoted));
        return fail(c, "file_not_found", "there is no file %s", quoted);
    }
    const struct phone_file *f = &s->files[i];
    if (f->locked) {
        return fail(c, "permission_denied", "%s is in the secure folder", base_name(f->path));
    }
    c->data = json_pack("{s:s,s:s,s:s,s:I}", "file_id", f->id, "file_name", base_name(f->path),
                        "path", f->path, "size_kb", (json_int_t)f->size_kb);
    return c->data != NULL ? DONE : NOMEM;
}

/* ---------------------------------------------------------------------------
 * radios */

static enum outcome set_radio(struct phone_call *c, const char *key, bool *field) {
    bool enabled;
    if (!c->s->permissions[PERM_SETTINGS]) {
        return denied(c, PERM_SETTINGS);
    }
    if (!arg_bool(c, "enabled", &enabled)) {
        return FAILED;
    }
    c->data = json_pack("{s:b}", key, enabled);
    if (c->data == NULL) {
        return NOMEM;
    }
    *field = enabled;
    return DONE;
}

static enum outcome tool_set_wifi(struct phone_call *c) {
    return set_radio(c, "wifi", &c->s->wifi);
}

static enum outcome tool_set_bluetooth(struct phone_call *c) {
    return set_radio(c, "bluetooth", &c->s->bluetooth);
}

static enum outcome tool_set_airplane_mode(struct phone_call *c) {
    return set_radio(c, "airplane_mode", &c->s->airplane_mode);
}

struct phone_tool {
    const char *name;
    enum outcome (*run)(struct phone_call *c);
};

static const struct phone_tool TOOLS[] = {
    {"send_message", tool_send_message},
    {"read_messages", tool_read_messages},
    {"search_photos", tool_search_photos},
    {"share_photo", tool_share_photo},
    {"navigate_to", tool_navigate_to},
    {"request_ride", tool_request_ride},
    {"set_alarm", tool_set_alarm},
    {"set_timer", tool_set_timer},
    {"cancel_timer", tool_cancel_timer},
    {"create_note", tool_create_note},
    {"append_note", tool_append_note},
    {"create_ticket", tool_create_ticket},
    {"get_ticket_status", tool_get_ticket_status},
    {"find_file", tool_find_file},
    {"open_file", tool_open_file},
    {"set_wifi", tool_set_wifi},
    {"set_bluetooth", tool_set_bluetooth},
    {"set_airplane_mode", tool_set_airplane_mode},
};

static enum pipit_status
phone_call(void *self, const char *tool, const json_t *args, struct device_result *r) {
    struct phone *ph = self;
    size_t index = 0;
    json_t *empty = NULL;
    enum pipit_status st =
        device_call_begin("phone", ph, tool, TOOLS, sizeof(TOOLS) / sizeof(TOOLS[0]),
                          sizeof(TOOLS[0]), &index, &args, &empty, r);
    if (st != PIPIT_OK) {
        return st;
    }
    const struct phone_tool *t = &TOOLS[index];
    struct phone_call c = {
        .spec = &ph->spec, .tool = t->name, .s = &ph->state, .args = args, .r = r, .data = NULL};
    enum outcome o = t->run(&c);
    json_decref(empty);
    switch (o) {
        case DONE:
            r->ok = true;
            r->data = c.data;
            return PIPIT_OK;
        case FAILED:
            return PIPIT_OK;
        case NOMEM:
            break;
    }
    json_decref(c.data);
    device_result_clear(r);
    return PIPIT_ERR_NOMEM;
}

/* ============================================================================
 * state line and lifecycle */

/* The prompt's state line (docs/prompt.md): the toggles and the counts that
 * relative commands ("turn it back on", "cancel the timer") need. */
static void phone_state_line(const void *self, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    if (self == NULL) {
        buf[0] = '\0';
        return;
    }
    const struct phone_state *s = &((const struct phone *)self)->state;
    size_t unread = 0;
    for (size_t i = 0; i < s->n_threads; i++) {
        unread += thread_unread(&s->threads[i]);
    }
    pipit_format(buf, size,
                 "wifi=%s bluetooth=%s airplane_mode=%s alarms=%zu timers=%zu unread=%zu "
                 "navigating=%s ride=%s",
                 s->wifi ? "on" : "off", s->bluetooth ? "on" : "off",
                 s->airplane_mode ? "on" : "off", s->n_alarms, s->n_timers, unread,
                 s->navigation.active ? "yes" : "no", s->ride.active ? "yes" : "no");
}

static void phone_destroy(void *self) {
    struct phone *ph = self;
    if (ph == NULL) {
        return;
    }
    state_free(&ph->state);
    free(ph);
}

/* How people name the phone's state keys (src/ask.h): only what the tool set cannot say. */
static const struct device_key_words PHONE_WORDS[] = {
    {.key = "wifi", .names = "wi-fi|wi fi|wireless", .noun = "Wi-Fi"},
    {.key = "bluetooth", .noun = "Bluetooth"},
    {.key = "airplane_mode", .names = "airplane|flight mode|plane mode", .noun = "Airplane mode"},
};

static const struct device_ops PHONE_OPS = {
    .name = "phone",
    .destroy = phone_destroy,
    .call = phone_call,
    .get_state = phone_get_state,
    .set_state = phone_set_state,
    .state_line = phone_state_line,
    .words = PHONE_WORDS,
    .n_words = sizeof(PHONE_WORDS) / sizeof(PHONE_WORDS[0]),
};

/* ============================================================================
 * the spec */

static const struct pipit_schema *
tool_arg(const struct pipit_toolset *ts, const char *tool, const char *arg) {
    for (size_t i = 0; ts != NULL && i < ts->n_tools; i++) {
        const struct pipit_schema *params = ts->tools[i].params;
        for (size_t k = 0;
             strcmp(ts->tools[i].name, tool) == 0 && params != NULL && k < params->n_props; k++) {
            if (strcmp(params->props[k].name, arg) == 0) {
                return params->props[k].schema;
            }
        }
    }
    return NULL;
}

/* The values of `tool`.`arg`'s enum the phone simulates: every one of `known` when the spec
 * has no enum there; a value the phone does not simulate is an error naming it. */
static enum pipit_status spec_mask(const struct pipit_toolset *ts,
                                   const char *tool,
                                   const char *arg,
                                   const char *const *known,
                                   int n_known,
                                   uint32_t *ok,
                                   struct pipit_error *err) {
    const struct pipit_schema *a = tool_arg(ts, tool, arg);
    *ok = (UINT32_C(1) << n_known) - 1;
    if (a == NULL || a->n_enum == 0 || a->enum_str == NULL) {
        return PIPIT_OK;
    }
    *ok = 0;
    for (size_t i = 0; i < a->n_enum; i++) {
        int e = 0;
        while (e < n_known && strcmp(known[e], a->enum_str[i]) != 0) {
            e++;
        }
        if (e == n_known) {
            char names[160];
            join_names(known, n_known, names, sizeof(names));
            return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                   "phone: %s: %s.%s: \"%.40s\" is not a value the phone "
                                   "simulator knows (%s)",
                                   ts->name, tool, arg, a->enum_str[i], names);
        }
        *ok |= UINT32_C(1) << e;
    }
    return PIPIT_OK;
}

static enum pipit_status
phone_spec_init(const struct pipit_toolset *ts, struct phone_spec *sp, struct pipit_error *err) {
    memset(sp, 0, sizeof(*sp));
    sp->timer_min = 1;
    sp->timer_max = TIMER_MAX_MINUTES;
    const struct pipit_schema *m = tool_arg(ts, "set_timer", "minutes");
    if (m != NULL && m->has_min && m->has_max) {
        /* inside what a timer of the state can hold */
        sp->timer_min = m->min > 1 ? (int64_t)ceil(m->min) : 1;
        sp->timer_max = m->max < TIMER_MAX_MINUTES ? (int64_t)floor(m->max) : TIMER_MAX_MINUTES;
    }
    for (size_t i = 0; ts != NULL && i < ts->n_tools; i++) {
        const struct pipit_schema *params = ts->tools[i].params;
        for (size_t k = 0; params != NULL && k < params->n_props; k++) {
            const struct pipit_schema *a = params->props[k].schema;
            if (a->type != PIPIT_SCHEMA_STRING || a->max_length < 1 ||
                sp->n_lengths == PHONE_MAX_LENGTHS ||
                strlen(params->props[k].name) > PIPIT_TOOLSPEC_MAX_NAME) {
                continue;
            }
            pipit_format(sp->lengths[sp->n_lengths].tool, sizeof(sp->lengths[0].tool), "%s",
                         ts->tools[i].name);
            pipit_format(sp->lengths[sp->n_lengths].arg, sizeof(sp->lengths[0].arg), "%s",
                         params->props[k].name);
            sp->lengths[sp->n_lengths].max_chars = (size_t)a->max_length;
            sp->n_lengths++;
        }
    }
    enum pipit_status st =
        spec_mask(ts, "navigate_to", "mode", MODE_NAMES, MODE_COUNT, &sp->mode_ok, err);
    if (st == PIPIT_OK) {
        st = spec_mask(ts, "request_ride", "service", SERVICE_NAMES, SERVICE_COUNT, &sp->service_ok,
                       err);
    }
    if (st == PIPIT_OK) {
        st = spec_mask(ts, "create_ticket", "priority", PRIORITY_NAMES, PRIORITY_COUNT,
                       &sp->priority_ok, err);
    }
    return st;
}

enum pipit_status
phone_device_new(const struct pipit_toolset *ts, struct device *out, struct pipit_error *err) {
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "phone: NULL out");
    }
    out->ops = NULL;
    out->self = NULL;
    struct phone *ph = calloc(1, sizeof(*ph));
    if (ph == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "phone: out of memory");
    }
    enum pipit_status spec_st = phone_spec_init(ts, &ph->spec, err);
    if (spec_st != PIPIT_OK) {
        phone_destroy(ph);
        return spec_st;
    }
    /* DEFAULT_STATE is valid and inside the domain (the tests check it), so only
     * an allocation can fail here */
    for (size_t i = 0; i < sizeof(DEFAULT_STATE) / sizeof(DEFAULT_STATE[0]); i++) {
        json_t *part = json_loads(DEFAULT_STATE[i], 0, NULL);
        enum pipit_status st = part != NULL ? state_apply(&ph->state, part, NULL) : PIPIT_ERR_NOMEM;
        json_decref(part);
        if (st != PIPIT_OK) {
            phone_destroy(ph);
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "phone: out of memory");
        }
    }
    out->ops = &PHONE_OPS;
    out->self = ph;
    return PIPIT_OK;
}
