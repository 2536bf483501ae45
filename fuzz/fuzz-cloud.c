/*
 * fuzz-cloud.c - the cloud answer parser: whatever an OpenAI-compatible endpoint sends back,
 * through pipit_cloud_ask() (libcurl, the body limit, parse_answer / error_detail, cleaning,
 * cutting and distilling the answer; docs/cloud.md). The endpoint is a server thread in this
 * process on 127.0.0.1 that answers every request with the current input; no retries.
 *
 * Input: one mode byte, then the response body.
 *   bits 0-2  HTTP status: 200 200 200 200 201 400 429 500
 *   bit 3     truncated: Content-Length promises 7 bytes more than are sent
 *   bit 4     max_response_bytes 1024 (else the default)
 *   bits 5-6  max_answer_bytes 64, 200, 1024 (the default), 65536
 * Promises checked (pipit.h, "cloud"): a result is always produced; ok means an answer that
 * is non-empty, valid UTF-8 and within max_answer_bytes, with a NUL-terminated summary of at
 * most PIPIT_CLOUD_SUMMARY_MAX bytes; a failure carries one of the three codes.
 * Seeds: fuzz/corpus/cloud/ (answers as llama-server and hosted APIs send them, errors).
 */
#include "fuzz.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

static int g_listen = -1;
static char g_url[64];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_response; /* the bytes to send, set per input */
static size_t g_response_len;

static bool readable(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) > 0;
}

/* Read one request (headers and a Content-Length body); false when the client went away. */
static bool read_request(int c) {
    char buf[16384];
    size_t n = 0;
    char *end = NULL;
    while (end == NULL) {
        if (n + 1 >= sizeof(buf) || !readable(c, 5000)) {
            return false;
        }
        ssize_t r = read(c, buf + n, sizeof(buf) - 1 - n);
        if (r <= 0) {
            return false;
        }
        n += (size_t)r;
        buf[n] = '\0';
        end = strstr(buf, "\r\n\r\n");
    }
    size_t body = 0;
    for (char *line = strstr(buf, "\r\n"); line != NULL && line < end;
         line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "Content-Length:", 15) == 0) {
            body = (size_t)strtoul(line + 17, NULL, 10);
        }
    }
    size_t have = n - (size_t)(end + 4 - buf);
    while (have < body) {
        if (!readable(c, 5000)) {
            return false;
        }
        ssize_t r = read(c, buf, sizeof(buf));
        if (r <= 0) {
            return false;
        }
        have += (size_t)r;
    }
    return true;
}

static void *serve(void *arg) {
    (void)arg;
    for (;;) {
        int c = accept(g_listen, NULL, NULL);
        if (c < 0) {
            continue;
        }
        if (read_request(c)) {
            pthread_mutex_lock(&g_lock);
            size_t off = 0;
            while (off < g_response_len) {
                ssize_t w = send(c, g_response + off, g_response_len - off, MSG_NOSIGNAL);
                if (w <= 0) {
                    break;
                }
                off += (size_t)w;
            }
            pthread_mutex_unlock(&g_lock);
        }
        shutdown(c, SHUT_WR);
        close(c);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    g_listen = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (g_listen < 0 || bind(g_listen, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(g_listen, 16) != 0 || getsockname(g_listen, (struct sockaddr *)&a, &len) != 0) {
        fuzz_fail("cannot listen on 127.0.0.1");
    }
    snprintf(g_url, sizeof(g_url), "http://127.0.0.1:%d", (int)ntohs(a.sin_port));
    pthread_t t;
    if (pthread_create(&t, NULL, serve, NULL) != 0) {
        fuzz_fail("cannot start the server thread");
    }
    pthread_detach(t);
    return 0;
}

static bool valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
        if (k == 9 || (k == 1 && c < 0xc2) || i + k >= n) {
            return false;
        }
        uint32_t cp = k == 0 ? c : (uint32_t)(c & (0x3f >> k));
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
            return false;
        }
        i += k + 1;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    static const int STATUS[8] = {200, 200, 200, 200, 201, 400, 429, 500};
    static const size_t ANSWER[4] = {64, 200, 1024, 65536};
    uint8_t mode = data[0];
    data++;
    size--;
    int status = STATUS[mode & 7];
    bool truncated = (mode & 8) != 0;

    char head[256];
    int hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      status, size + (truncated ? 7 : 0));
    pthread_mutex_lock(&g_lock);
    free(g_response);
    g_response = malloc((size_t)hn + size + 1);
    memcpy(g_response, head, (size_t)hn);
    if (size > 0) {
        memcpy(g_response + hn, data, size);
    }
    g_response_len = (size_t)hn + size;
    pthread_mutex_unlock(&g_lock);

    /* one client per limit combination, kept: a client is reusable between calls */
    static struct pipit_cloud *clients[8];
    size_t which = ((mode >> 4) & 1) | (size_t)((mode >> 5) & 3) << 1;
    struct pipit_cloud_params cp = pipit_cloud_default_params();
    cp.url = g_url;
    cp.retries = 0;
    cp.backoff_ms = 0;
    cp.connect_timeout_ms = 2000;
    cp.timeout_ms = 5000;
    if (mode & 16) {
        cp.max_response_bytes = 1024;
    }
    cp.max_answer_bytes = ANSWER[(mode >> 5) & 3];
    struct pipit_error err;
    if (clients[which] == NULL && pipit_cloud_init(&cp, &clients[which], &err) != PIPIT_OK) {
        fuzz_fail("cannot create the client: %s", err.text);
    }
    struct pipit_cloud *cloud = clients[which];
    struct pipit_cloud_result res;
    memset(&res, 0, sizeof(res));
    if (pipit_cloud_ask(cloud, "what is the tallest mountain?", "knowledge", 10000.0, &res) !=
        PIPIT_OK) {
        fuzz_fail("no result: %s", pipit_cloud_errmsg(cloud));
    }
    if (memchr(res.summary, '\0', sizeof(res.summary)) == NULL ||
        memchr(res.code, '\0', sizeof(res.code)) == NULL ||
        memchr(res.message, '\0', sizeof(res.message)) == NULL) {
        fuzz_fail("a result string is not NUL-terminated");
    }
    if (res.ok) {
        size_t n = res.answer != NULL ? strlen(res.answer) : 0;
        if (n == 0 || n > cp.max_answer_bytes) {
            fuzz_fail("ok with an answer of %zu bytes (limit %zu)", n, cp.max_answer_bytes);
        }
        if (!valid_utf8((const unsigned char *)res.answer, n) ||
            !valid_utf8((const unsigned char *)res.summary, strlen(res.summary))) {
            fuzz_fail("ok with an answer or summary that is not valid UTF-8");
        }
        if (strlen(res.summary) > PIPIT_CLOUD_SUMMARY_MAX) {
            fuzz_fail("a summary of %zu bytes", strlen(res.summary));
        }
    } else {
        if (res.answer != NULL) {
            fuzz_fail("a failed result with an answer");
        }
        if (strcmp(res.code, "cloud_error") != 0 && strcmp(res.code, "cloud_timeout") != 0 &&
            strcmp(res.code, "cloud_not_configured") != 0) {
            fuzz_fail("a failure with the code \"%s\"", res.code);
        }
    }
    pipit_cloud_result_clear(&res);
    return 0;
}
