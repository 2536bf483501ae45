/*
 * cloud.c - delegation to a larger model over an OpenAI-compatible chat-completions API.
 *
 * One call = up to 1 + retries HTTP attempts against POST <url>/v1/chat/completions, all inside
 * the caller's wall-clock budget. Each attempt is one blocking libcurl transfer with
 * CURLOPT_NOSIGNAL, a connect timeout and a total timeout cut to the time left, a maximum file
 * size and a write callback that refuses the byte after the limit, so an attempt always ends:
 * by an answer, an error or a timeout. Classification of an attempt:
 *
 *     2xx + JSON with choices[0].message.content   ok
 *     timeout (connect or total)                   cloud_timeout   retried
 *     HTTP 5xx                                     cloud_error     retried
 *     anything else (4xx, refused, truncated,      cloud_error     not retried: asking again
 *     too big, bad JSON, no content)                               would give the same answer
 *
 * The answer is trimmed and bounded; its first sentence, on one line, is the distilled summary
 * that the agent keeps in memory instead of the whole answer (see docs/cloud.md).
 */
#define _POSIX_C_SOURCE 200809L

#include "cloud.h"

#include "device.h"
#include "log.h"
#include "status.h"
#include "strbuf.h"
#include "untrusted.h"
#include "utf8.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ============================================================================
 * limits */

enum {
    CLOUD_URL_MAX = 2048,         /* bytes of the configured URL */
    CLOUD_KEY_MAX = 1024,         /* bytes of the API key */
    CLOUD_QUERY_MAX = 8192,       /* bytes of the query */
    CLOUD_REASON_MAX = 1024,      /* bytes of the escalation reason */
    CLOUD_MIN_ATTEMPT_MS = 50,    /* an attempt with less time than this is not started */
    CLOUD_SAFETY_MS = 15,         /* kept back from each attempt for parsing and bookkeeping */
    CLOUD_BACKOFF_MAX_MS = 10000, /* cap on one backoff sleep */
    CLOUD_ERROR_DETAIL = 96,      /* bytes of a server's error message quoted in ours */
    CLOUD_POLL_MS = 20,           /* longest wait between two looks at the cancel flag */
};

static const char SYSTEM_PROMPT[] =
    "You answer on behalf of a small on-device assistant that could not handle the user's "
    "request itself. Reply in plain text, in at most three short sentences that can be read "
    "out to the user as they are, and put the key fact in the first sentence.";

/* ============================================================================
 * libcurl global state: initialised once per process, on first use with a URL */

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_init_rc = CURLE_FAILED_INIT;

static void curl_init_once(void) {
    g_curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ============================================================================
 * the handle */

struct pipit_cloud {
    char *url;         /* full endpoint URL; NULL = not configured */
    char hostport[96]; /* "host:port" for messages */
    char *auth_header; /* "Authorization: Bearer <key>" or NULL */
    char *model;       /* NULL = omitted */
    json_t *extra;     /* object merged into the body, or NULL */
    struct pipit_cloud_params p;
    CURL *curl;   /* created on first use */
    CURLM *multi; /* runs each transfer (and keeps the connection cache between calls), so a
                     cancel flag is seen within CLOUD_POLL_MS */
    char errmsg[256];
};

struct pipit_cloud_params pipit_cloud_default_params(void) {
    struct pipit_cloud_params p;
    memset(&p, 0, sizeof(p));
    p.url = NULL;
    p.api_key = NULL;
    p.model = NULL;
    p.extra_json = NULL;
    p.connect_timeout_ms = 3000;
    p.timeout_ms = 20000;
    p.retries = 2;
    p.backoff_ms = 250;
    p.max_tokens = 256;
    p.max_response_bytes = 256 * 1024;
    p.max_answer_bytes = 1024;
    return p;
}

void pipit_cloud_params_from_env(struct pipit_cloud_params *params) {
    if (params == NULL) {
        return;
    }
    const char *v = getenv("PIPIT_CLOUD_URL");
    if (v != NULL && v[0] != '\0') {
        params->url = v;
    }
    v = getenv("PIPIT_CLOUD_KEY");
    if (v != NULL && v[0] != '\0') {
        params->api_key = v;
    }
    v = getenv("PIPIT_CLOUD_MODEL");
    if (v != NULL && v[0] != '\0') {
        params->model = v;
    }
}

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static bool has_control(const char *s) {
    for (; *s != '\0'; s++) {
        if ((unsigned char)*s < 0x20 || *s == 0x7f) {
            return true;
        }
    }
    return false;
}

/* Parse the URL with libcurl's own parser: scheme http/https, a host; fill hostport. */
static enum pipit_status
parse_url(struct pipit_cloud *c, const char *url, struct pipit_error *err) {
    CURLU *u = curl_url();
    if (u == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "cloud: out of memory parsing the URL");
    }
    char *scheme = NULL;
    char *host = NULL;
    char *port = NULL;
    enum pipit_status st = PIPIT_OK;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK) {
        st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "cloud: invalid URL: \"%.200s\"", url);
    } else if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
        st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                             "cloud: URL scheme must be http or https: \"%.200s\"", url);
    } else {
        pipit_format(c->hostport, sizeof(c->hostport), "%s:%s", host, port);
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return st;
}

/* The endpoint: a URL already ending in /chat/completions as is, else <base>/v1/chat/completions
 * (trailing slashes of the base dropped). */
static char *endpoint_url(const char *base) {
    static const char SUFFIX[] = "/chat/completions";
    static const char PATH[] = "/v1/chat/completions";
    size_t n = strlen(base);
    size_t ns = sizeof(SUFFIX) - 1;
    if (n >= ns && strcmp(base + n - ns, SUFFIX) == 0) {
        return dup_n(base, n);
    }
    while (n > 0 && base[n - 1] == '/') {
        n--;
    }
    struct strbuf b = {0};
    strbuf_add(&b, base, n);
    strbuf_str(&b, PATH);
    return strbuf_take(&b);
}

enum pipit_status pipit_cloud_init(const struct pipit_cloud_params *params,
                                   struct pipit_cloud **out,
                                   struct pipit_error *err) {
    pipit_error_clear(err);
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "cloud: out is NULL");
    }
    *out = NULL;
    struct pipit_cloud_params p = params != NULL ? *params : pipit_cloud_default_params();
    if (p.connect_timeout_ms < 1 || p.timeout_ms < 1 || p.retries < 0 || p.retries > 5 ||
        p.backoff_ms < 0 || p.max_tokens < 0 || p.max_response_bytes < 1024 ||
        p.max_response_bytes > 64u * 1024 * 1024 || p.max_answer_bytes < 64 ||
        p.max_answer_bytes > 65536) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                               "cloud: parameter out of range: connect_timeout_ms=%d "
                               "timeout_ms=%d retries=%d backoff_ms=%d max_tokens=%d "
                               "max_response_bytes=%zu max_answer_bytes=%zu",
                               (int)p.connect_timeout_ms, (int)p.timeout_ms, (int)p.retries,
                               (int)p.backoff_ms, (int)p.max_tokens, p.max_response_bytes,
                               p.max_answer_bytes);
    }
    struct pipit_cloud *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return pipit_error_set(err, PIPIT_ERR_NOMEM, "cloud: out of memory");
    }
    c->p = p;
    c->p.url = c->p.api_key = c->p.model = c->p.extra_json = NULL; /* not kept: borrowed */
    enum pipit_status st = PIPIT_OK;

    if (p.url != NULL && p.url[0] != '\0') {
        size_t n = strnlen(p.url, CLOUD_URL_MAX + 1);
        if (n > CLOUD_URL_MAX || has_control(p.url)) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "cloud: invalid URL (over %d bytes or control characters)",
                                 CLOUD_URL_MAX);
            goto fail;
        }
        /* Only now, with somewhere to send to, does libcurl get initialised. */
        pthread_once(&g_curl_once, curl_init_once);
        if (g_curl_init_rc != CURLE_OK) {
            st = pipit_error_set(err, PIPIT_ERR_BACKEND, "cloud: curl_global_init failed: %s",
                                 curl_easy_strerror(g_curl_init_rc));
            goto fail;
        }
        c->url = endpoint_url(p.url);
        if (c->url == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_NOMEM, "cloud: out of memory");
            goto fail;
        }
        st = parse_url(c, c->url, err);
        if (st != PIPIT_OK) {
            goto fail;
        }
    }
    if (p.api_key != NULL && p.api_key[0] != '\0') {
        size_t n = strnlen(p.api_key, CLOUD_KEY_MAX + 1);
        if (n > CLOUD_KEY_MAX || has_control(p.api_key)) {
            /* never quote the key */
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "cloud: invalid API key (over %d bytes or control characters)",
                                 CLOUD_KEY_MAX);
            goto fail;
        }
        struct strbuf b = {0};
        strbuf_str(&b, "Authorization: Bearer ");
        strbuf_add(&b, p.api_key, n);
        c->auth_header = strbuf_take(&b);
        if (c->auth_header == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_NOMEM, "cloud: out of memory");
            goto fail;
        }
    }
    if (p.model != NULL && p.model[0] != '\0') {
        size_t n = strnlen(p.model, 256);
        if (n >= 256) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "cloud: model name over 255 bytes");
            goto fail;
        }
        c->model = dup_n(p.model, n);
        if (c->model == NULL) {
            st = pipit_error_set(err, PIPIT_ERR_NOMEM, "cloud: out of memory");
            goto fail;
        }
    }
    if (p.extra_json != NULL) {
        json_error_t jerr;
        c->extra = json_loads(p.extra_json, JSON_REJECT_DUPLICATES, &jerr);
        if (!json_is_object(c->extra)) {
            st = pipit_error_set(err, PIPIT_ERR_INVALID_ARG,
                                 "cloud: extra_json is not a JSON object: %s",
                                 c->extra == NULL ? jerr.text : "not an object");
            goto fail;
        }
    }
    *out = c;
    return PIPIT_OK;
fail:
    pipit_cloud_free(c);
    return st;
}

/* Overwrite a secret before freeing it (volatile: the stores are not optimised away). */
static void free_secret(char *s) {
    if (s == NULL) {
        return;
    }
    volatile char *v = s;
    while (*v != '\0') {
        *v++ = '\0';
    }
    free(s);
}

void pipit_cloud_free(struct pipit_cloud *cloud) {
    if (cloud == NULL) {
        return;
    }
    if (cloud->curl != NULL) {
        curl_easy_cleanup(cloud->curl);
    }
    if (cloud->multi != NULL) {
        curl_multi_cleanup(cloud->multi);
    }
    free(cloud->url);
    free_secret(cloud->auth_header);
    free(cloud->model);
    json_decref(cloud->extra);
    free(cloud);
}

bool pipit_cloud_configured(const struct pipit_cloud *cloud) {
    return cloud != NULL && cloud->url != NULL;
}

const char *pipit_cloud_errmsg(const struct pipit_cloud *cloud) {
    return cloud != NULL ? cloud->errmsg : "cloud: NULL handle";
}

void pipit_cloud_result_clear(struct pipit_cloud_result *result) {
    if (result == NULL) {
        return;
    }
    free(result->answer);
    memset(result, 0, sizeof(*result));
}

/* ============================================================================
 * text: UTF-8, trimming, bounding, distilling */

static bool is_space(unsigned char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Cut a clean, valid UTF-8 string `s` to at most `max` bytes: unchanged when it fits; else
 * at the last space within max-3 bytes (or at a character boundary when there is no space
 * in the second half) followed by "...". `max` >= 4. */
static void cut_text(char *s, size_t max) {
    size_t n = strlen(s);
    if (n <= max) {
        return;
    }
    size_t end = utf8_boundary(s, max - 3);
    size_t space = end;
    while (space > 0 && s[space] != ' ' && s[space] != '\n') {
        space--;
    }
    if (space >= (max - 3) / 2) {
        end = space;
    }
    while (end > 0 && strchr(" \n,;:", s[end - 1]) != NULL) {
        end--;
    }
    memcpy(s + end, "...", 4);
}

void cloud_distill(const char *answer, char *buf, size_t size) {
    if (buf == NULL || size == 0) {
        return;
    }
    buf[0] = '\0';
    if (answer == NULL) {
        return;
    }
    /* A heading line ("## Night mode") followed by text is a title, not the answer. */
    while (is_space((unsigned char)*answer)) {
        answer++;
    }
    while (answer[0] == '#') {
        const char *nl = strchr(answer, '\n');
        if (nl == NULL) {
            break;
        }
        const char *next = nl;
        while (is_space((unsigned char)*next)) {
            next++;
        }
        if (*next == '\0') {
            break;
        }
        answer = next;
    }
    char *line = untrusted_clean(answer, (size_t)-1, UNTRUSTED_ONE_LINE);
    if (line == NULL) {
        return;
    }
    /* Leading list or heading markers say nothing. */
    size_t start = 0;
    while (line[start] == '#' || line[start] == '*' || line[start] == '-' || line[start] == '>' ||
           line[start] == ' ') {
        start++;
    }
    char *s = line + start;
    /* The first sentence: up to '.', '!' or '?' followed by a space or the end. */
    for (size_t i = 0; s[i] != '\0'; i++) {
        if ((s[i] == '.' || s[i] == '!' || s[i] == '?') && (s[i + 1] == ' ' || s[i + 1] == '\0')) {
            s[i + 1] = '\0';
            break;
        }
    }
    size_t max = PIPIT_CLOUD_SUMMARY_MAX;
    if (size - 1 < max) {
        max = size - 1;
    }
    if (max >= 4) {
        cut_text(s, max);
        pipit_format(buf, size, "%s", s);
    } else {
        buf[0] = '\0';
    }
    free(line);
}

/* ============================================================================
 * one attempt */

/* A response body, refused beyond `limit` bytes. */
struct body {
    char *data;
    size_t len;
    size_t cap;
    size_t limit;
    bool over;  /* more than `limit` bytes arrived */
    bool nomem; /* an allocation failed */
};

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *user_data) {
    struct body *b = user_data;
    size_t n = size * nmemb;
    if (n > b->limit - b->len) {
        b->over = true;
        return 0; /* CURLE_WRITE_ERROR: the transfer stops here */
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap != 0 ? b->cap : 4096;
        while (cap < b->len + n + 1) {
            cap *= 2;
        }
        if (cap > b->limit + 1) {
            cap = b->limit + 1;
        }
        char *d = realloc(b->data, cap);
        if (d == NULL) {
            b->nomem = true;
            return 0;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, n);
    b->len += n;
    b->data[b->len] = '\0';
    return n;
}

enum attempt_kind {
    ATTEMPT_OK = 0,
    ATTEMPT_TIMEOUT = 1,   /* retried */
    ATTEMPT_SERVER = 2,    /* HTTP 5xx: retried */
    ATTEMPT_ERROR = 3,     /* not retried */
    ATTEMPT_NOMEM = 4,     /* not retried */
    ATTEMPT_CANCELLED = 5, /* the cancel flag was set: not retried */
};

struct attempt {
    enum attempt_kind kind;
    long http_status;
    char *content; /* ATTEMPT_OK: choices[0].message.content, malloc'ed */
    char message[256];
};

/* The "error.message" of an OpenAI-style error body, cleaned and cut, into buf ("" if none). */
static void error_detail(const struct body *b, char *buf, size_t size) {
    buf[0] = '\0';
    if (b->data == NULL || b->len == 0) {
        return;
    }
    json_t *root = json_loadb(b->data, b->len, 0, NULL);
    json_t *e = json_object_get(root, "error");
    const char *m =
        json_is_object(e) ? json_string_value(json_object_get(e, "message")) : json_string_value(e);
    if (m != NULL) {
        char *t = untrusted_clean(m, (size_t)-1, UNTRUSTED_ONE_LINE);
        if (t != NULL) {
            if (t[0] != '\0') {
                cut_text(t, CLOUD_ERROR_DETAIL);
                pipit_format(buf, size, ": %s", t);
            }
            free(t);
        }
    }
    json_decref(root);
}

/* Read choices[0].message.content out of a 2xx body. */
static void parse_answer(const struct pipit_cloud *c, const struct body *b, struct attempt *a) {
    json_error_t jerr;
    json_t *root = json_loadb(b->data != NULL ? b->data : "", b->len, 0, &jerr);
    if (root == NULL) {
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message),
                     "invalid JSON from %s (%zu bytes) at line %d column %d: %.80s", c->hostport,
                     b->len, jerr.line, jerr.column, jerr.text);
        return;
    }
    json_t *choices = json_object_get(root, "choices");
    json_t *msg = json_object_get(json_array_get(choices, 0), "message");
    json_t *content = json_object_get(msg, "content");
    if (!json_is_string(content)) {
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message),
                     "no choices[0].message.content in the answer from %s", c->hostport);
        json_decref(root);
        return;
    }
    /* jansson checked the UTF-8; an embedded \u0000 ends the text. The answer is data shown to
     * the person: no call syntax, no control text (untrusted.h) */
    a->content = untrusted_clean(json_string_value(content), (size_t)-1, 0);
    json_decref(root);
    if (a->content == NULL) {
        a->kind = ATTEMPT_NOMEM;
        pipit_format(a->message, sizeof(a->message), "out of memory reading the answer");
        return;
    }
    if (a->content[0] == '\0') {
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message), "an empty answer from %s", c->hostport);
        free(a->content);
        a->content = NULL;
        return;
    }
    a->kind = ATTEMPT_OK;
}

static bool cancelled(const atomic_bool *cancel) {
    return cancel != NULL && atomic_load(cancel);
}

/* One transfer on the handle's multi handle, polled every CLOUD_POLL_MS so that `cancel` stops
 * it promptly (curl_easy_perform would look at it only from a progress callback, about once a
 * second while the server is silent). *was_cancelled tells a cancel from another abort. */
static CURLcode
perform(struct pipit_cloud *c, CURL *h, const atomic_bool *cancel, bool *was_cancelled) {
    *was_cancelled = false;
    if (c->multi == NULL) {
        c->multi = curl_multi_init();
        if (c->multi == NULL) {
            return CURLE_OUT_OF_MEMORY;
        }
    }
    if (curl_multi_add_handle(c->multi, h) != CURLM_OK) {
        return CURLE_FAILED_INIT;
    }
    CURLcode rc = CURLE_OK;
    int running = 1;
    for (;;) {
        if (cancelled(cancel)) {
            *was_cancelled = true;
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        if (curl_multi_perform(c->multi, &running) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
        if (running == 0) {
            int left = 0;
            CURLMsg *m;
            rc = CURLE_GOT_NOTHING;
            while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
                if (m->msg == CURLMSG_DONE && m->easy_handle == h) {
                    rc = m->data.result;
                }
            }
            break;
        }
        if (curl_multi_poll(c->multi, NULL, 0, CLOUD_POLL_MS, NULL) != CURLM_OK) {
            rc = CURLE_FAILED_INIT;
            break;
        }
    }
    curl_multi_remove_handle(c->multi, h);
    return rc;
}

static void run_attempt(struct pipit_cloud *c,
                        const char *body_json,
                        long timeout_ms,
                        const atomic_bool *cancel,
                        struct attempt *a) {
    memset(a, 0, sizeof(*a));
    struct body b = {.limit = c->p.max_response_bytes};
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';

    if (c->curl == NULL) {
        c->curl = curl_easy_init();
    } else {
        curl_easy_reset(c->curl); /* options gone; connections live in the multi handle */
    }
    CURL *h = c->curl;
    struct curl_slist *l = NULL;
    if (h != NULL) {
        l = curl_slist_append(NULL, "Content-Type: application/json");
        headers = l;
    }
    if (l != NULL) {
        l = curl_slist_append(headers, "Accept: application/json");
    }
    if (l != NULL) {
        l = curl_slist_append(headers, "Expect:"); /* no 100-continue round trip */
    }
    if (l != NULL && c->auth_header != NULL) {
        l = curl_slist_append(headers, c->auth_header);
    }
    if (h == NULL || l == NULL) {
        curl_slist_free_all(headers);
        a->kind = ATTEMPT_NOMEM;
        pipit_format(a->message, sizeof(a->message), "out of memory preparing the request");
        return;
    }
    long connect_ms = c->p.connect_timeout_ms < timeout_ms ? c->p.connect_timeout_ms : timeout_ms;
    curl_easy_setopt(h, CURLOPT_URL, c->url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body_json);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body_json));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "pipit/" PIPIT_VERSION);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->p.max_response_bytes);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif

    bool was_cancelled = false;
    CURLcode rc = perform(c, h, cancel, &was_cancelled);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->http_status);
    /* errbuf and the body's pointer must not outlive this frame */
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, NULL);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(headers);

    const char *hp = c->hostport;
    if (was_cancelled) {
        a->kind = ATTEMPT_CANCELLED;
        pipit_format(a->message, sizeof(a->message), "the request to %s was cancelled", hp);
    } else if (rc == CURLE_OK) {
        long s = a->http_status;
        if (s >= 200 && s < 300) {
            parse_answer(c, &b, a);
        } else {
            char detail[CLOUD_ERROR_DETAIL + 8];
            error_detail(&b, detail, sizeof(detail));
            a->kind = s >= 500 && s < 600 ? ATTEMPT_SERVER : ATTEMPT_ERROR;
            pipit_format(a->message, sizeof(a->message), "HTTP %ld from %s%s", s, hp, detail);
        }
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        a->kind = ATTEMPT_TIMEOUT;
        pipit_format(a->message, sizeof(a->message),
                     "the cloud assistant at %s didn't answer in time", hp);
    } else if (b.nomem) {
        a->kind = ATTEMPT_NOMEM;
        pipit_format(a->message, sizeof(a->message), "out of memory reading the answer");
    } else if (b.over || rc == CURLE_FILESIZE_EXCEEDED) {
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message),
                     "the answer from %s is over the %zu-byte limit", hp, c->p.max_response_bytes);
    } else if (rc == CURLE_PARTIAL_FILE) {
        curl_off_t expected = -1;
        curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &expected);
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message),
                     "the answer from %s was cut off after %zu of %lld bytes", hp, b.len,
                     (long long)expected);
    } else if (rc == CURLE_COULDNT_CONNECT) {
        long os_errno = 0;
        curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message), "cannot connect to %s: %s", hp,
                     os_errno == ECONNREFUSED ? "connection refused" : curl_easy_strerror(rc));
    } else if (rc == CURLE_GOT_NOTHING) {
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message), "%s closed the connection without answering",
                     hp);
    } else {
        a->kind = ATTEMPT_ERROR;
        pipit_format(a->message, sizeof(a->message), "request to %s failed: %s", hp,
                     errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc));
    }
    free(b.data);
}

/* ============================================================================
 * the call */

/* Sleep `ms`, in slices of CLOUD_POLL_MS while a cancel flag may end it early. */
static void sleep_ms(double ms, const atomic_bool *cancel) {
    if (!(ms > 0)) {
        return;
    }
    if (cancel != NULL) {
        double end = pipit_now_ms() + ms;
        for (double left = ms; left > 0 && !cancelled(cancel); left = end - pipit_now_ms()) {
            sleep_ms(left < CLOUD_POLL_MS ? left : CLOUD_POLL_MS, NULL);
        }
        return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_nsec = 999999999L;
    }
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void fail_result(struct pipit_cloud_result *out, const char *code, const char *message) {
    out->ok = false;
    pipit_format(out->code, sizeof(out->code), "%s", code);
    pipit_format(out->message, sizeof(out->message), "%s", message);
}

/* The request body, or NULL when a string is not valid UTF-8 or memory ran out. */
static char *build_body(const struct pipit_cloud *c, const char *query, const char *reason) {
    json_t *body = json_object();
    json_t *msgs = json_array();
    json_t *sys = json_object();
    json_t *user = json_object();
    char *out = NULL;
    struct strbuf sb = {0};
    strbuf_str(&sb, SYSTEM_PROMPT);
    if (reason != NULL && reason[0] != '\0') {
        strbuf_str(&sb, " It handed this request over because: ");
        strbuf_str(&sb, reason);
    }
    char *system_text = strbuf_take(&sb);
    json_t *sys_content = system_text != NULL ? json_string(system_text) : NULL;
    json_t *user_content = json_string(query);
    if (body == NULL || msgs == NULL || sys == NULL || user == NULL || sys_content == NULL ||
        user_content == NULL) {
        json_decref(sys_content);
        json_decref(user_content);
        goto done;
    }
    if (json_object_set_new(sys, "role", json_string("system")) != 0 ||
        json_object_set_new(sys, "content", sys_content) != 0 ||
        json_object_set_new(user, "role", json_string("user")) != 0 ||
        json_object_set_new(user, "content", user_content) != 0 ||
        json_array_append(msgs, sys) != 0 || json_array_append(msgs, user) != 0) {
        goto done;
    }
    if (c->model != NULL && json_object_set_new(body, "model", json_string(c->model)) != 0) {
        goto done;
    }
    if (json_object_set(body, "messages", msgs) != 0 ||
        json_object_set_new(body, "stream", json_false()) != 0) {
        goto done;
    }
    if (c->p.max_tokens > 0 &&
        json_object_set_new(body, "max_tokens", json_integer(c->p.max_tokens)) != 0) {
        goto done;
    }
    if (c->extra != NULL && json_object_update(body, c->extra) != 0) {
        goto done;
    }
    out = json_dumps(body, JSON_COMPACT);
done:
    free(system_text);
    json_decref(sys);
    json_decref(user);
    json_decref(msgs);
    json_decref(body);
    return out;
}

enum pipit_status pipit_cloud_ask(struct pipit_cloud *cloud,
                                  const char *query,
                                  const char *reason,
                                  double budget_ms,
                                  struct pipit_cloud_result *out) {
    return cloud_ask(cloud, query, reason, budget_ms, NULL, out);
}

enum pipit_status cloud_ask(struct pipit_cloud *cloud,
                            const char *query,
                            const char *reason,
                            double budget_ms,
                            const atomic_bool *cancel,
                            struct pipit_cloud_result *out) {
    char scratch[256];
    char *errmsg = cloud != NULL ? cloud->errmsg : scratch;
    size_t errsize = cloud != NULL ? sizeof(cloud->errmsg) : sizeof(scratch);
    errmsg[0] = '\0';
    if (out == NULL) {
        pipit_format(errmsg, errsize, "cloud: out is NULL");
        return PIPIT_ERR_INVALID_ARG;
    }
    memset(out, 0, sizeof(*out));
    double t0 = pipit_now_ms();
    if (query == NULL) {
        pipit_format(errmsg, errsize, "cloud: query is NULL");
        return PIPIT_ERR_INVALID_ARG;
    }
    size_t nq = strnlen(query, CLOUD_QUERY_MAX + 1);
    size_t nr = reason != NULL ? strnlen(reason, CLOUD_REASON_MAX + 1) : 0;
    if (nq > CLOUD_QUERY_MAX || nr > CLOUD_REASON_MAX) {
        pipit_format(errmsg, errsize, "cloud: %s over %d bytes",
                     nq > CLOUD_QUERY_MAX ? "query" : "reason",
                     nq > CLOUD_QUERY_MAX ? CLOUD_QUERY_MAX : CLOUD_REASON_MAX);
        return PIPIT_ERR_INVALID_ARG;
    }
    if (!utf8_valid(query, nq) || (reason != NULL && !utf8_valid(reason, nr))) {
        pipit_format(errmsg, errsize, "cloud: %s is not valid UTF-8",
                     utf8_valid(query, nq) ? "reason" : "query");
        return PIPIT_ERR_INVALID_ARG;
    }

    if (!pipit_cloud_configured(cloud)) {
        /* Nothing leaves the device: no socket, no libcurl. */
        fail_result(out, CLOUD_NOT_CONFIGURED,
                    "the cloud assistant isn't configured (no URL: set PIPIT_CLOUD_URL)");
        out->latency_ms = pipit_now_ms() - t0;
        return PIPIT_OK;
    }
    if (isnan(budget_ms)) {
        budget_ms = 0;
    }
    double deadline = t0 + budget_ms; /* +inf for HUGE_VAL */
    if (budget_ms < CLOUD_MIN_ATTEMPT_MS + CLOUD_SAFETY_MS) {
        char m[256];
        pipit_format(m, sizeof(m),
                     "the cloud assistant at %s didn't answer in time (%.0f ms left in the "
                     "budget: nothing sent)",
                     cloud->hostport, budget_ms > 0 ? budget_ms : 0.0);
        fail_result(out, CLOUD_TIMEOUT, m);
        out->latency_ms = pipit_now_ms() - t0;
        return PIPIT_OK;
    }

    char *body = build_body(cloud, query, reason);
    if (body == NULL) {
        pipit_format(errmsg, errsize, "cloud: out of memory building the request");
        return PIPIT_ERR_NOMEM;
    }

    struct attempt a;
    memset(&a, 0, sizeof(a));
    a.kind = ATTEMPT_ERROR;
    for (int32_t n = 1;; n++) {
        double left = deadline - pipit_now_ms() - CLOUD_SAFETY_MS;
        double t = (double)cloud->p.timeout_ms < left ? (double)cloud->p.timeout_ms : left;
        if (t < 1) {
            t = 1; /* 0 would mean "no timeout" to libcurl */
        }
        double ta = pipit_now_ms();
        run_attempt(cloud, body, (long)t, cancel, &a);
        out->attempts = n;
        out->http_status = (int32_t)a.http_status;
        pipit_log(PIPIT_LOG_INFO, "cloud: attempt %d to %s: %s (%.0f ms, timeout %.0f ms)", (int)n,
                  cloud->hostport, a.kind == ATTEMPT_OK ? "ok" : a.message, pipit_now_ms() - ta, t);
        if (a.kind != ATTEMPT_TIMEOUT && a.kind != ATTEMPT_SERVER) {
            break;
        }
        if (n > cloud->p.retries) {
            break;
        }
        double backoff = (double)cloud->p.backoff_ms * (double)(1u << (n - 1));
        if (backoff > CLOUD_BACKOFF_MAX_MS) {
            backoff = CLOUD_BACKOFF_MAX_MS;
        }
        if (pipit_now_ms() + backoff + CLOUD_MIN_ATTEMPT_MS + CLOUD_SAFETY_MS > deadline) {
            break; /* another attempt would not fit in the budget */
        }
        sleep_ms(backoff, cancel);
        if (cancelled(cancel)) {
            a.kind = ATTEMPT_CANCELLED;
            pipit_format(a.message, sizeof(a.message), "the request to %s was cancelled",
                         cloud->hostport);
            break;
        }
        free(a.content);
        a.content = NULL;
    }
    free(body);

    enum pipit_status st = PIPIT_OK;
    const char *plural = out->attempts == 1 ? "" : "s";
    char m[256];
    switch (a.kind) {
        case ATTEMPT_OK: {
            /* distilled from the whole answer: its first sentence may survive the cut */
            cloud_distill(a.content, out->summary, sizeof(out->summary));
            cut_text(a.content, cloud->p.max_answer_bytes);
            out->ok = true;
            out->answer = a.content;
            a.content = NULL;
            break;
        }
        case ATTEMPT_TIMEOUT:
            pipit_format(m, sizeof(m), "%s (%d attempt%s, %.0f ms)", a.message, (int)out->attempts,
                         plural, pipit_now_ms() - t0);
            fail_result(out, CLOUD_TIMEOUT, m);
            break;
        case ATTEMPT_SERVER:
            pipit_format(m, sizeof(m), "%s (%d attempt%s)", a.message, (int)out->attempts, plural);
            fail_result(out, CLOUD_ERROR, m);
            break;
        case ATTEMPT_ERROR:
            fail_result(out, CLOUD_ERROR, a.message);
            break;
        case ATTEMPT_CANCELLED:
            fail_result(out, CLOUD_CANCELLED, a.message);
            break;
        case ATTEMPT_NOMEM:
            fail_result(out, CLOUD_ERROR, a.message);
            pipit_format(errmsg, errsize, "cloud: %s", a.message);
            st = PIPIT_ERR_NOMEM;
            break;
    }
    free(a.content);
    out->latency_ms = pipit_now_ms() - t0;
    return st;
}

/* ============================================================================
 * the agent's tool */

enum pipit_status cloud_tool_call(struct pipit_cloud *cloud,
                                  const json_t *args,
                                  double budget_ms,
                                  const atomic_bool *cancel,
                                  struct device_result *r,
                                  struct pipit_cloud_result *detail) {
    if (r == NULL) {
        return PIPIT_ERR_INVALID_ARG;
    }
    memset(r, 0, sizeof(*r));
    if (detail != NULL) {
        memset(detail, 0, sizeof(*detail));
    }
    if (!json_is_object(args)) {
        device_result_fail(r, "invalid_argument", "the arguments are not an object");
        return PIPIT_ERR_INVALID_ARGS;
    }
    const json_t *q = json_object_get(args, CLOUD_ARG_QUERY);
    const json_t *why = json_object_get(args, CLOUD_ARG_REASON);
    if (!json_is_string(q)) {
        char d[64];
        device_describe_json(q, d, sizeof(d));
        device_result_fail(r, "invalid_argument", "%s must be a string, not %s", CLOUD_ARG_QUERY,
                           d);
        return PIPIT_ERR_INVALID_ARGS;
    }
    if (json_string_length(q) > CLOUD_QUERY_MAX) {
        device_result_fail(r, "invalid_argument", "%s is over %d bytes", CLOUD_ARG_QUERY,
                           CLOUD_QUERY_MAX);
        return PIPIT_ERR_INVALID_ARGS;
    }
    const char *reason = json_is_string(why) ? json_string_value(why) : NULL;
    if (reason != NULL && json_string_length(why) > CLOUD_REASON_MAX) {
        reason = NULL; /* only context for the cloud model: drop rather than refuse */
    }

    struct pipit_cloud_result res;
    memset(&res, 0, sizeof(res));
    enum pipit_status st = cloud_ask(cloud, json_string_value(q), reason, budget_ms, cancel, &res);
    if (st == PIPIT_ERR_INVALID_ARG) {
        device_result_fail(r, "invalid_argument", "%s",
                           cloud != NULL ? pipit_cloud_errmsg(cloud) : "invalid query");
        pipit_cloud_result_clear(&res);
        return PIPIT_ERR_INVALID_ARGS;
    }
    if (res.ok) {
        json_t *data = json_object();
        if (data == NULL || json_object_set_new(data, "answer", json_string(res.answer)) != 0 ||
            json_object_set_new(data, "summary", json_string(res.summary)) != 0) {
            json_decref(data);
            device_result_fail(r, CLOUD_ERROR, "out of memory");
            pipit_cloud_result_clear(&res);
            return PIPIT_ERR_NOMEM;
        }
        r->ok = true;
        r->data = data;
    } else {
        device_result_fail(r, res.code[0] != '\0' ? res.code : CLOUD_ERROR, "%s", res.message);
    }
    if (detail != NULL) {
        *detail = res;
    } else {
        pipit_cloud_result_clear(&res);
    }
    return st;
}
