/*
 * memory.c - the agent's memory: full history or the Context State Object (see memory.h).
 */
#include "memory.h"

#include "status.h"
#include "strbuf.h"
#include "untrusted.h"
#include "utf8.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum memory_kind {
    MEM_GOAL = 0,
    MEM_DONE = 1,
    MEM_ERROR = 2,
    MEM_TRACKER = 3,
    MEM_HISTORY = 4,
};

#define MEMORY_MAX_LINES 4096

const char *pipit_memory_mode_str(enum pipit_memory_mode mode) {
    switch (mode) {
        case PIPIT_MEMORY_NONE:
            return "none";
        case PIPIT_MEMORY_FULL:
            return "full";
        case PIPIT_MEMORY_CSO:
            return "cso";
    }
    return "unknown";
}

void memory_init(struct memory *m, enum pipit_memory_mode mode) {
    memset(m, 0, sizeof(*m));
    m->mode = mode;
}

void memory_free(struct memory *m) {
    if (m == NULL) {
        return;
    }
    for (size_t i = 0; i < m->n; i++) {
        free(m->lines[i].text);
    }
    free(m->lines);
    memset(m, 0, sizeof(*m));
}

static enum pipit_status add_line(struct memory *m,
                                  const char *text,
                                  enum memory_kind kind,
                                  bool pinned,
                                  const char *tool,
                                  size_t max_bytes) {
    bool keep_newlines = kind == MEM_HISTORY; /* a transcript entry keeps its lines */
    if (m->n >= MEMORY_MAX_LINES) {
        /* a hard bound: the oldest line goes, whatever the budget */
        free(m->lines[0].text);
        memmove(m->lines, m->lines + 1, sizeof(*m->lines) * (m->n - 1));
        m->n--;
        m->n_trimmed++;
        if (m->delta_from > 0) {
            m->delta_from--;
        }
    }
    if (m->n == m->cap) {
        size_t cap = m->cap > 0 ? m->cap * 2 : 32;
        struct memory_line *l = realloc(m->lines, cap * sizeof(*l));
        if (l == NULL) {
            return PIPIT_ERR_NOMEM;
        }
        m->lines = l;
        m->cap = cap;
    }
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        return PIPIT_ERR_NOMEM;
    }
    memcpy(copy, text, len + 1);
    /* one line: no newlines inside */
    for (char *p = copy; *p != '\0' && !keep_newlines; p++) {
        if (*p == '\n' || *p == '\r' || *p == '\t') {
            *p = ' ';
        }
    }
    utf8_cut(copy, max_bytes);
    struct memory_line *line = &m->lines[m->n++];
    memset(line, 0, sizeof(*line));
    line->text = copy;
    line->kind = (int8_t)kind;
    line->pinned = pinned;
    pipit_format(line->tool, sizeof(line->tool), "%s", tool != NULL ? tool : "");
    return PIPIT_OK;
}

enum pipit_status memory_begin_turn(struct memory *m, const char *utterance) {
    pipit_format(m->utterance, sizeof(m->utterance), "%s", utterance != NULL ? utterance : "");
    m->turn_done = false;
    m->turn_failed = false;
    m->failed_tool[0] = '\0';
    return PIPIT_OK;
}

/* True when the state line shows `key` ("key=" at a word start): the prompt carries its current
 * value every turn, so memory need not repeat it. */
static bool shown_in(const char *state_line, const char *key) {
    size_t n = strlen(key);
    for (const char *p = state_line; p != NULL && (p = strstr(p, key)) != NULL; p++) {
        if ((p == state_line || p[-1] == ' ') && p[n] == '=') {
            return true;
        }
    }
    return false;
}

#define FACT_MAX_VALUE  40 /* bytes of a string value in a fact */
#define CLOUD_TOPIC_MAX 64 /* bytes of the question in a "cloud: answered" line */

/* A key that may become a fact: a plain name ([a-z][a-z0-9_]*, 1..40 bytes, ASCII case
 * ignored), never text that a result made up ("<call>x", "ignore previous ..."). */
static bool is_fact_key(const char *key) {
    size_t n = 0;
    for (; key[n] != '\0'; n++) {
        char c = key[n];
        bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!letter && !(n > 0 && ((c >= '0' && c <= '9') || c == '_'))) {
            return false;
        }
    }
    return n > 0 && n <= 40;
}

/* A string of a tool's result as the value of a fact: cleaned (untrusted.h), without the
 * characters calls and JSON are made of (()[]{}<>="`), cut to FACT_MAX_VALUE bytes; text of
 * several words is quoted, so it reads as data, not as a command. `size` >= FACT_MAX_VALUE + 3. */
static void fact_value(const char *text, char *buf, size_t size) {
    char *c = untrusted_clean(text, (size_t)-1, UNTRUSTED_ONE_LINE);
    if (c == NULL) {
        buf[0] = '\0';
        return;
    }
    size_t o = 0;
    for (const char *p = c; *p != '\0'; p++) {
        char ch = strchr("()[]{}<>=\"`", *p) != NULL ? ' ' : *p;
        if (ch != ' ' || (o > 0 && c[o - 1] != ' ')) {
            c[o++] = ch; /* in place: one space between words */
        }
    }
    c[o] = '\0';
    utf8_cut(c, FACT_MAX_VALUE);
    for (o = strlen(c); o > 0 && c[o - 1] == ' ';) {
        c[--o] = '\0';
    }
    if (strchr(c, ' ') != NULL) {
        pipit_format(buf, size, "\"%s\"", c);
    } else {
        pipit_format(buf, size, "%s", c);
    }
    free(c);
}

/* A failure code for memory: [a-z0-9_.-] only (a handler's code is its text), "failed" when
 * nothing is left. */
static void clean_code(const char *code, char *buf, size_t size) {
    size_t o = 0;
    for (const char *p = code != NULL ? code : ""; *p != '\0' && o + 1 < size; p++) {
        char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-') {
            buf[o++] = c;
        } else if (c >= 'A' && c <= 'Z') {
            buf[o++] = (char)(c - 'A' + 'a');
        }
    }
    buf[o] = '\0';
    if (o == 0) {
        pipit_format(buf, size, "failed");
    }
}

/* A list or record in a result is remembered by the IDs it holds ("photos: P-106, P-107"), or
 * by its size when it holds none: later turns refer to items by ID. */
static void append_ids(struct strbuf *b, const char *key, const json_t *v) {
    strbuf_printf(b, "%s:", key);
    size_t n_ids = 0;
    const json_t *items[64];
    size_t n_items = 0;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && n_items < 64; i++) {
            items[n_items++] = json_array_get(v, i);
        }
    } else {
        items[n_items++] = v;
    }
    for (size_t i = 0; i < n_items; i++) {
        const char *k;
        json_t *f;
        json_object_foreach((json_t *)items[i], k, f) {
            size_t len = strlen(k);
            if (json_is_string(f) && len >= 3 && strcmp(k + len - 3, "_id") == 0) {
                strbuf_printf(b, "%s %s", n_ids > 0 ? "," : "", json_string_value(f));
                n_ids++;
            }
        }
    }
    if (n_ids == 0) {
        strbuf_printf(b, " %zu item%s", n_items, n_items == 1 ? "" : "s");
    }
}

/* True when `line` holds the fact `fact` ("key: value") as a whole item. */
static bool line_has_fact(const char *line, const char *fact, size_t len) {
    for (const char *p = line; (p = strstr(p, fact)) != NULL; p++) {
        bool starts = p == line || (p >= line + 2 && p[-2] == ',' && p[-1] == ' ');
        bool ends = p[len] == '\0' || (p[len] == ',' && p[len + 1] == ' ');
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

/* True when memory already knows `fact` about the entity `id_fact` ("ticket_id: T-1001"), or,
 * with no ID, as a fact of a line without an ID. */
static bool known_fact(const struct memory *m, const char *id_fact, const char *fact) {
    size_t len = strlen(fact);
    for (size_t i = 0; i < m->n; i++) {
        const char *t = m->lines[i].text;
        if (m->lines[i].kind != MEM_DONE) {
            continue;
        }
        bool same_entity = id_fact != NULL ? line_has_fact(t, id_fact, strlen(id_fact))
                                           : strstr(t, "_id: ") == NULL;
        if (same_entity && line_has_fact(t, fact, len)) {
            return true;
        }
    }
    return false;
}

/* Append the pairs of a compact JSON object as "key: value, key: value" (strings unquoted,
 * reals with %g, other values as JSON), except the keys `state_line` shows. */
static void append_facts(const struct memory *m,
                         struct strbuf *b,
                         const char *json,
                         const char *state_line,
                         bool ids_only) {
    json_t *o = json != NULL ? json_loads(json, 0, NULL) : NULL;
    const char *key;
    json_t *v;
    size_t start = b->len;
    /* the entity's ID, if the result names one: facts are new or not about that entity */
    char id_fact[128] = "";
    json_object_foreach(o, key, v) {
        size_t len = strlen(key);
        if (json_is_string(v) && len >= 3 && strcmp(key + len - 3, "_id") == 0) {
            pipit_format(id_fact, sizeof(id_fact), "%s: %s", key, json_string_value(v));
            break;
        }
    }
    bool new_fact = false;
    json_object_foreach(o, key, v) {
        if (state_line != NULL && shown_in(state_line, key)) {
            continue;
        }
        if (strcmp(key, "count") == 0) {
            continue; /* a count says nothing the items do not */
        }
        if (!is_fact_key(key)) {
            continue; /* a key is the result's text too: only plain names become facts */
        }
        size_t klen = strlen(key);
        bool id_like = (klen >= 3 && strcmp(key + klen - 3, "_id") == 0) || json_is_array(v) ||
                       json_is_object(v);
        if (ids_only && !id_like) {
            continue; /* a read changed nothing: only what it showed, by ID */
        }
        size_t before = b->len;
        strbuf_str(b, b->len > start ? ", " : "");
        if (json_is_string(v)) {
            /* facts, not documents: long text is cut (the IDs carry the reference); a result's
             * text is data: no call syntax, no control text (untrusted.h) */
            char val[FACT_MAX_VALUE + 3];
            fact_value(json_string_value(v), val, sizeof(val));
            strbuf_printf(b, "%s: %s", key, val);
        } else if (json_is_array(v) || json_is_object(v)) {
            append_ids(b, key, v);
        } else if (json_is_real(v)) {
            strbuf_printf(b, "%s: %g", key, json_real_value(v)); /* 0.2, not 0.2000000001 */
        } else {
            char *val = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY);
            if (val != NULL) {
                strbuf_printf(b, "%s: %s", key, val);
                free(val);
            }
        }
        /* the text just appended, without its separator: "key: value" */
        const char *fact = b->data + before + (before > start ? 2 : 0);
        bool is_id = id_fact[0] != '\0' && strcmp(fact, id_fact) == 0;
        if (!is_id && known_fact(m, id_fact[0] != '\0' ? id_fact : NULL, fact)) {
            b->len = before; /* already known: not repeated */
            b->data[before] = '\0';
        } else if (!is_id) {
            new_fact = true;
        }
    }
    if (!new_fact && id_fact[0] != '\0' && known_fact(m, id_fact, id_fact)) {
        b->len = start; /* nothing new about a known entity */
        if (b->data != NULL) {
            b->data[start] = '\0';
        }
    }
    json_decref(o);
}

/* True when the fact line `facts` ("k: v, k: v") sets `key`. */
static bool facts_have_key(const char *facts, const char *key, size_t key_len) {
    for (const char *p = facts; p != NULL; p = strstr(p, ", ")) {
        if (p != facts) {
            p += 2;
        }
        if (strncmp(p, key, key_len) == 0 && p[key_len] == ':') {
            return true;
        }
        if (*p == '\0') {
            break;
        }
    }
    return false;
}

static bool is_id_key(const char *key, size_t len) {
    return (len == 2 && strncmp(key, "id", 2) == 0) ||
           (len >= 3 && strncmp(key + len - 3, "_id", 3) == 0);
}

/* Line i is obsolete: it goes (the agent rebuilds the memory part of its KV cache after a turn
 * that changed n_superseded). */
static void drop_superseded(struct memory *m, size_t i) {
    free(m->lines[i].text);
    memmove(m->lines + i, m->lines + i + 1, sizeof(*m->lines) * (m->n - i - 1));
    m->n--;
    if (m->delta_from > i) {
        m->delta_from--;
    }
    m->n_superseded++;
}

/* A CSO holds facts, not a history of them: an older fact line whose every key the new line
 * sets again is obsolete. Lines with an ID are never superseded (a later turn may name any of
 * them). The agent's KV cache drops the old line when it rebuilds the memory after the turn. */
static void supersede(struct memory *m, const char *facts) {
    for (size_t i = 0; i < m->n;) {
        const char *t = m->lines[i].text;
        bool obsolete = m->lines[i].kind == MEM_DONE;
        for (const char *p = t; obsolete && p != NULL;) {
            const char *colon = strstr(p, ": ");
            if (colon == NULL) {
                obsolete = false;
                break;
            }
            size_t klen = (size_t)(colon - p);
            if (is_id_key(p, klen) || !facts_have_key(facts, p, klen)) {
                obsolete = false;
                break;
            }
            p = strstr(colon + 2, ", ");
            if (p != NULL) {
                p += 2;
            }
        }
        if (obsolete) {
            drop_superseded(m, i);
        } else {
            i++;
        }
    }
}

/* An open goal is closed when the tool that failed it later succeeds ("timer 7 seconds" refused,
 * then "make it 5" done): the goal is met or replaced, and a stale `user_goal:` would pull later
 * turns back to it. It goes like a superseded fact. A goal whose turn failed without naming a tool
 * stays until trimmed. */
static void resolve_goals(struct memory *m, const char *tool) {
    for (size_t i = 0; i < m->n;) {
        if (m->lines[i].kind == MEM_GOAL && m->lines[i].tool[0] != '\0' &&
            strcmp(m->lines[i].tool, tool) == 0) {
            drop_superseded(m, i);
        } else {
            i++;
        }
    }
}

enum pipit_status memory_record_call(struct memory *m,
                                     const char *tool,
                                     const char *args_json,
                                     bool ok,
                                     const char *code,
                                     const char *data_json,
                                     const char *state_line,
                                     enum memory_call kind) {
    if (m->mode != PIPIT_MEMORY_CSO) {
        return PIPIT_OK;
    }
    struct strbuf b = {0};
    if (ok && kind == MEMORY_CALL_CLOUD) {
        /* the harness's summary, never the answer: the answer is text from outside and would
         * sit in the permanent prompt for good (docs/memory.md, "Untrusted text"); the question
         * was the person's own words (the agent passes them as user_query_context) */
        (void)data_json;
        json_t *a = args_json != NULL ? json_loads(args_json, 0, NULL) : NULL;
        const char *q = json_string_value(json_object_get(a, "user_query_context"));
        char topic[CLOUD_TOPIC_MAX + 1];
        untrusted_clean_into(q, topic, sizeof(topic), UNTRUSTED_ONE_LINE);
        json_decref(a);
        for (char *p = topic; *p != '\0'; p++) {
            if (*p == '"') {
                *p = '\''; /* the quotes are the harness's */
            }
        }
        if (topic[0] != '\0') {
            strbuf_printf(&b, "cloud: answered \"%s\"", topic);
        } else {
            strbuf_str(&b, "cloud: answered");
        }
    } else if (ok) {
        /* what changed, as facts (and the IDs later turns refer to), not how it was asked */
        append_facts(m, &b, data_json, state_line, kind == MEMORY_CALL_READ);
        if (b.len == 0) {
            json_t *d = data_json != NULL ? json_loads(data_json, 0, NULL) : NULL;
            bool had_data = json_object_size(d) > 0;
            json_decref(d);
            m->turn_done = true;
            if (had_data) {
                strbuf_free(&b); /* every change is on the state line: nothing to keep */
                return PIPIT_OK;
            }
            strbuf_printf(&b, "done: %s", tool);
        }
    } else {
        m->turn_failed = true;
        if (m->failed_tool[0] == '\0') {
            pipit_format(m->failed_tool, sizeof(m->failed_tool), "%s", tool);
        }
        char c[64];
        clean_code(code, c, sizeof(c));
        strbuf_printf(&b, "tool_error: %s %s", tool, c);
        /* the same error is already pinned: saying it again adds tokens, not facts */
        for (size_t i = 0; !b.failed && i < m->n; i++) {
            if (m->lines[i].kind == MEM_ERROR && m->lines[i].pinned &&
                strcmp(m->lines[i].text, b.data) == 0) {
                strbuf_free(&b);
                return PIPIT_OK;
            }
        }
    }
    if (b.failed) {
        strbuf_free(&b);
        return PIPIT_ERR_NOMEM;
    }
    if (ok) {
        supersede(m, b.data);
        resolve_goals(m, tool);
        m->turn_done = true;
        /* a success resolves the tool's earlier errors: they go like superseded facts (a
         * stale "tool_error: set_timer ..." pulled later turns back to the timer) */
        for (size_t i = 0; i < m->n;) {
            if (m->lines[i].kind == MEM_ERROR && strcmp(m->lines[i].tool, tool) == 0) {
                drop_superseded(m, i);
            } else {
                i++;
            }
        }
    }
    enum pipit_status st =
        add_line(m, b.data, ok ? MEM_DONE : MEM_ERROR, !ok, tool, MEMORY_MAX_LINE);
    strbuf_free(&b);
    return st;
}

enum pipit_status memory_end_turn(struct memory *m) {
    if (m->mode != PIPIT_MEMORY_CSO || !m->turn_failed || m->turn_done || m->utterance[0] == '\0') {
        return PIPIT_OK;
    }
    /* a request that failed: the user's goal is still open (the latest is pinned) */
    for (size_t i = 0; i < m->n; i++) {
        if (m->lines[i].kind == MEM_GOAL) {
            m->lines[i].pinned = false;
        }
    }
    struct strbuf b = {0};
    strbuf_printf(&b, "user_goal: %s", m->utterance);
    enum pipit_status st =
        b.failed ? PIPIT_ERR_NOMEM
                 : add_line(m, b.data, MEM_GOAL, true, m->failed_tool, MEMORY_MAX_LINE);
    strbuf_free(&b);
    return st;
}

enum pipit_status memory_record_exchange(struct memory *m,
                                         const char *prompt,
                                         const char *model_text,
                                         const char *results,
                                         const char *sentence) {
    if (m->mode != PIPIT_MEMORY_FULL) {
        return PIPIT_OK;
    }
    struct strbuf b = {0};
    strbuf_str(&b, prompt != NULL ? prompt : "");
    strbuf_str(&b, model_text != NULL ? model_text : "");
    if (results != NULL && results[0] != '\0') {
        strbuf_str(&b, "\nTool: ");
        strbuf_str(&b, results);
    }
    strbuf_str(&b, "\nAssistant: ");
    strbuf_str(&b, sentence != NULL ? sentence : "");
    enum pipit_status st = PIPIT_ERR_NOMEM;
    if (!b.failed) {
        /* one history entry, kept verbatim (newlines included): trimmed as a unit */
        st = add_line(m, b.data, MEM_HISTORY, false, NULL, 1u << 20);
    }
    strbuf_free(&b);
    return st;
}

bool memory_add_tracker_line(struct memory *m, const char *line) {
    if (m->mode != PIPIT_MEMORY_CSO || line == NULL) {
        return false;
    }
    /* "key: value": a lower-case key of letters, digits and _, then a non-empty value */
    size_t k = 0;
    while (islower((unsigned char)line[k]) || isdigit((unsigned char)line[k]) || line[k] == '_') {
        k++;
    }
    if (k == 0 || k > 32 || line[k] != ':' || line[k + 1] != ' ' || line[k + 2] == '\0' ||
        strlen(line) > MEMORY_MAX_LINE) {
        return false;
    }
    /* the tracker read text from outside (tool results): a line with call syntax or control
     * text is refused, never repaired into something plausible */
    if (untrusted_has_syntax(line) || strchr(line, '\n') != NULL) {
        return false;
    }
    /* no duplicate of an existing line */
    for (size_t i = 0; i < m->n; i++) {
        if (strcmp(m->lines[i].text, line) == 0) {
            return false;
        }
    }
    return add_line(m, line, MEM_TRACKER, false, NULL, MEMORY_MAX_LINE) == PIPIT_OK;
}

static char *join_lines(const struct memory *m, size_t from, size_t to) {
    struct strbuf b = {0};
    strbuf_str(&b, "");
    for (size_t i = from; i < to && i < m->n; i++) {
        strbuf_str(&b, m->lines[i].text);
        strbuf_str(&b, "\n");
    }
    return strbuf_take(&b);
}

char *memory_take_delta(struct memory *m) {
    char *d = join_lines(m, m->delta_from, m->n);
    if (d != NULL) {
        if (m->delta_from < m->n) {
            m->n_batches++;
        }
        for (size_t i = m->delta_from; i < m->n; i++) {
            m->lines[i].batch = m->n_batches;
        }
        m->delta_from = m->n;
    }
    return d;
}

char *memory_text(const struct memory *m) {
    return join_lines(m, 0, m->n);
}

char *memory_text_range(const struct memory *m, size_t from, size_t to) {
    return join_lines(m, from, to);
}

size_t memory_group_end(const struct memory *m, size_t from) {
    size_t i = from + 1;
    while (i < m->n && m->lines[i].batch == m->lines[from].batch) {
        i++;
    }
    return i < m->n ? i : m->n;
}

size_t memory_bytes(const struct memory *m) {
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        n += strlen(m->lines[i].text) + 1;
    }
    return n;
}

bool memory_unpin_oldest(struct memory *m) {
    for (size_t i = 0; i < m->n; i++) {
        if (m->lines[i].pinned) {
            m->lines[i].pinned = false;
            return true;
        }
    }
    return false;
}

size_t memory_trim(struct memory *m, size_t max_bytes) {
    size_t dropped = 0;
    size_t bytes = memory_bytes(m);
    size_t i = 0;
    while (bytes > max_bytes && i < m->n) {
        if (m->lines[i].pinned) {
            i++;
            continue;
        }
        bytes -= strlen(m->lines[i].text) + 1;
        free(m->lines[i].text);
        memmove(m->lines + i, m->lines + i + 1, sizeof(*m->lines) * (m->n - i - 1));
        m->n--;
        if (m->delta_from > i) {
            m->delta_from--;
        }
        dropped++;
    }
    if (dropped > 0) {
        m->n_trimmed += dropped;
        m->n_trims++;
    }
    return dropped;
}

/* ============================================================================ persistence */

json_t *memory_to_json(const struct memory *m) {
    json_t *lines = json_array();
    for (size_t i = 0; i < m->n && lines != NULL; i++) {
        json_array_append_new(lines, json_pack("{s:s,s:i,s:b,s:s,s:I}", "text", m->lines[i].text,
                                               "kind", (int)m->lines[i].kind, "pinned",
                                               (int)m->lines[i].pinned, "tool", m->lines[i].tool,
                                               "batch", (json_int_t)m->lines[i].batch));
    }
    return json_pack("{s:s,s:o,s:I,s:I,s:I}", "mode", pipit_memory_mode_str(m->mode), "lines",
                     lines, "n_trimmed", (json_int_t)m->n_trimmed, "n_trims",
                     (json_int_t)m->n_trims, "n_superseded", (json_int_t)m->n_superseded);
}

enum pipit_status memory_from_json(struct memory *m, const json_t *j, struct pipit_error *err) {
    const json_t *lines = json_object_get(j, "lines");
    const char *mode = json_string_value(json_object_get(j, "mode"));
    if (!json_is_array(lines) || mode == NULL) {
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "memory: $.memory: lines or mode missing");
    }
    if (strcmp(mode, pipit_memory_mode_str(m->mode)) != 0) {
        return pipit_error_set(err, PIPIT_ERR_STATE,
                               "memory: the session was made in memory mode '%s', this agent "
                               "uses '%s'",
                               mode, pipit_memory_mode_str(m->mode));
    }
    struct memory fresh;
    memory_init(&fresh, m->mode);
    size_t i;
    json_t *line;
    json_array_foreach(lines, i, line) {
        const char *text = json_string_value(json_object_get(line, "text"));
        json_int_t kind = json_integer_value(json_object_get(line, "kind"));
        const json_t *pinned = json_object_get(line, "pinned");
        const char *tool = json_string_value(json_object_get(line, "tool"));
        if (text == NULL || kind < MEM_GOAL || kind > MEM_HISTORY || !json_is_boolean(pinned) ||
            tool == NULL) {
            memory_free(&fresh);
            return pipit_error_set(err, PIPIT_ERR_CORRUPT, "memory: $.memory.lines[%zu] malformed",
                                   i);
        }
        if (kind == MEM_DONE && strncmp(text, "cloud: ", 7) == 0 &&
            strncmp(text, "cloud: answered", 15) != 0) {
            text = "cloud: answered"; /* an answer, from an older session: not kept */
            fresh.n_cleaned++;
        } else if (kind != MEM_GOAL && kind != MEM_HISTORY && untrusted_has_syntax(text)) {
            fresh.n_cleaned++; /* call syntax or control text: never back into the context */
            continue;
        }
        if (add_line(&fresh, text, (enum memory_kind)kind, json_is_true(pinned), tool,
                     kind == MEM_HISTORY ? (1u << 20) : MEMORY_MAX_LINE) != PIPIT_OK) {
            memory_free(&fresh);
            return pipit_error_set(err, PIPIT_ERR_NOMEM, "memory: out of memory");
        }
        /* the delta it came in (older sessions have none: one run) */
        json_int_t batch = json_integer_value(json_object_get(line, "batch"));
        fresh.lines[fresh.n - 1].batch = batch > 0 && batch <= UINT32_MAX ? (uint32_t)batch : 1;
        if (fresh.lines[fresh.n - 1].batch > fresh.n_batches) {
            fresh.n_batches = fresh.lines[fresh.n - 1].batch;
        }
    }
    fresh.n_trimmed = (size_t)json_integer_value(json_object_get(j, "n_trimmed"));
    fresh.n_trims = (size_t)json_integer_value(json_object_get(j, "n_trims"));
    fresh.n_superseded = (size_t)json_integer_value(json_object_get(j, "n_superseded"));
    fresh.delta_from = fresh.n; /* everything restored is already in the context */
    memory_free(m);
    *m = fresh;
    return PIPIT_OK;
}
