/*
 * policy.c - harness-owned limits: default turn parameters, thermal scaling
 * and the sysfs thermal reader, the wall-clock budget, the identical-failure
 * breaker.
 *
 * Nothing here allocates or keeps state between calls; every object lives in
 * the caller's memory. The sysfs reader touches only
 * <root>/class/thermal/thermal_zone<anything>/temp and reads at most
 * TEMP_FILE_CAP bytes of each.
 */
#define _POSIX_C_SOURCE 200809L

#include "policy.h"

#include "status.h"
#include "utf8.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEMP_FILE_CAP 64 /* bytes read from one temp file */
#define PATH_CAP      1024

/* ============================================================================
 * defaults */

struct policy_params policy_default_params(bool gpu) {
    struct policy_params p;
    p.max_steps = 3;
    p.turn_budget_ms = gpu ? 5000.0 : 15000.0;
    p.max_tokens = 64;
    p.breaker_threshold = POLICY_BREAKER_DEFAULT;
    return p;
}

/* ============================================================================
 * thermal */

const char *pipit_thermal_str(enum pipit_thermal t) {
    switch (t) {
        case PIPIT_THERMAL_NONE:
            return "none";
        case PIPIT_THERMAL_LIGHT:
            return "light";
        case PIPIT_THERMAL_MODERATE:
            return "moderate";
        case PIPIT_THERMAL_SEVERE:
            return "severe";
        case PIPIT_THERMAL_CRITICAL:
            return "critical";
    }
    return "unknown thermal state";
}

static int32_t at_least_1(int32_t v) {
    return v < 1 ? 1 : v;
}

void policy_thermal_limits(enum pipit_thermal t,
                           int32_t base_threads,
                           int32_t base_max_tokens,
                           struct policy_limits *out) {
    if (out == NULL) {
        return;
    }
    int32_t threads = at_least_1(base_threads);
    int32_t tokens = at_least_1(base_max_tokens);
    switch (t) {
        case PIPIT_THERMAL_NONE:
        case PIPIT_THERMAL_LIGHT:
            *out = (struct policy_limits){threads, 0, tokens, false};
            return;
        case PIPIT_THERMAL_MODERATE:
            *out =
                (struct policy_limits){at_least_1(threads / 2), 200, at_least_1(tokens / 2), false};
            return;
        case PIPIT_THERMAL_SEVERE:
            *out = (struct policy_limits){1, 500, at_least_1(tokens / 4), false};
            return;
        case PIPIT_THERMAL_CRITICAL:
            break;
    }
    /* CRITICAL, and any value outside the enum: fail safe */
    *out = (struct policy_limits){0, 0, 0, true};
}

enum pipit_thermal policy_thermal_from_mc(int32_t millicelsius) {
    if (millicelsius < POLICY_THERMAL_LIGHT_MC) {
        return PIPIT_THERMAL_NONE;
    }
    if (millicelsius < POLICY_THERMAL_MODERATE_MC) {
        return PIPIT_THERMAL_LIGHT;
    }
    if (millicelsius < POLICY_THERMAL_SEVERE_MC) {
        return PIPIT_THERMAL_MODERATE;
    }
    if (millicelsius < POLICY_THERMAL_CRITICAL_MC) {
        return PIPIT_THERMAL_SEVERE;
    }
    return PIPIT_THERMAL_CRITICAL;
}

/* Parse a temp file's content: optional spaces, one decimal integer (optional
 * sign), optional trailing whitespace. False for anything else or out of the
 * plausible range. */
static bool parse_temp(const char *text, int32_t *out) {
    const char *p = text;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (!((*p >= '0' && *p <= '9') || ((*p == '-' || *p == '+') && p[1] >= '0' && p[1] <= '9'))) {
        return false;
    }
    errno = 0;
    char *end = NULL;
    long v = strtol(p, &end, 10);
    if (errno != 0 || end == p) {
        return false;
    }
    while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') {
        end++;
    }
    if (*end != '\0' || v < POLICY_THERMAL_MIN_MC || v > POLICY_THERMAL_MAX_MC) {
        return false;
    }
    *out = (int32_t)v;
    return true;
}

/* Read one temp file; false when it cannot be read or is not a valid reading. */
static bool read_temp(const char *path, int32_t *out) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    char buf[TEMP_FILE_CAP + 1];
    size_t n = fread(buf, 1, TEMP_FILE_CAP + 1, f);
    bool read_error = ferror(f) != 0;
    fclose(f);
    if (read_error || n == 0 || n > TEMP_FILE_CAP) {
        return false; /* unreadable (EINVAL on a disabled zone), empty or far too long */
    }
    buf[n] = '\0';
    if (memchr(buf, '\0', n) != NULL) {
        return false;
    }
    return parse_temp(buf, out);
}

enum pipit_status
policy_thermal_read_mc(const char *sysfs_root, int32_t *out_mc, struct pipit_error *err) {
    if (out_mc == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "policy: thermal read: NULL output");
    }
    const char *root = sysfs_root != NULL ? sysfs_root : "/sys";
    char dir_path[PATH_CAP];
    int w = snprintf(dir_path, sizeof(dir_path), "%s/class/thermal", root);
    if (w < 0 || (size_t)w >= sizeof(dir_path)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "policy: sysfs root too long: %.64s...",
                               root);
    }
    DIR *dir = opendir(dir_path);
    if (dir == NULL) {
        int e = errno;
        return pipit_error_set(err, PIPIT_ERR_IO, "policy: cannot open thermal directory: %s (%s)",
                               dir_path, strerror(e));
    }
    int n_zones = 0;
    int n_valid = 0;
    int32_t hottest = 0;
    struct dirent *de;
    while (n_zones < POLICY_THERMAL_MAX_ZONES && (de = readdir(dir)) != NULL) {
        if (strncmp(de->d_name, "thermal_zone", 12) != 0) {
            continue;
        }
        n_zones++;
        char temp_path[PATH_CAP];
        w = snprintf(temp_path, sizeof(temp_path), "%s/%s/temp", dir_path, de->d_name);
        if (w < 0 || (size_t)w >= sizeof(temp_path)) {
            continue;
        }
        int32_t mc = 0;
        if (read_temp(temp_path, &mc)) {
            if (n_valid == 0 || mc > hottest) {
                hottest = mc;
            }
            n_valid++;
        }
    }
    closedir(dir);
    if (n_zones == 0) {
        return pipit_error_set(err, PIPIT_ERR_IO, "policy: no thermal zones: %s/thermal_zone*",
                               dir_path);
    }
    if (n_valid == 0) {
        return pipit_error_set(err, PIPIT_ERR_IO,
                               "policy: no valid temperature in %d thermal zones: %s", n_zones,
                               dir_path);
    }
    *out_mc = hottest;
    return PIPIT_OK;
}

enum pipit_status
policy_thermal_read(const char *sysfs_root, enum pipit_thermal *out, struct pipit_error *err) {
    if (out == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "policy: thermal read: NULL output");
    }
    int32_t mc = 0;
    enum pipit_status st = policy_thermal_read_mc(sysfs_root, &mc, err);
    if (st == PIPIT_OK) {
        *out = policy_thermal_from_mc(mc);
    }
    return st;
}

/* ============================================================================
 * wall-clock budget */

void policy_clock_start(struct policy_clock *c, double budget_ms) {
    if (c == NULL) {
        return;
    }
    c->start_ms = pipit_now_ms();
    c->budget_ms = (budget_ms > 0.0) ? budget_ms : 0.0; /* NaN compares false: unlimited */
}

double policy_clock_elapsed_ms(const struct policy_clock *c) {
    if (c == NULL) {
        return 0.0;
    }
    double e = pipit_now_ms() - c->start_ms;
    return e > 0.0 ? e : 0.0;
}

double policy_clock_remaining_ms(const struct policy_clock *c) {
    if (c == NULL) {
        return 0.0;
    }
    if (!(c->budget_ms > 0.0)) {
        return HUGE_VAL;
    }
    double r = c->budget_ms - policy_clock_elapsed_ms(c);
    return r > 0.0 ? r : 0.0;
}

bool policy_clock_expired(const struct policy_clock *c) {
    if (c == NULL) {
        return true;
    }
    if (!(c->budget_ms > 0.0)) {
        return false;
    }
    return policy_clock_elapsed_ms(c) >= c->budget_ms;
}

/* ============================================================================
 * identical-failure breaker */

/* FNV-1a over a string and a separator byte, continuing from `h`. */
static uint64_t fnv1a(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    h ^= 0xFF; /* separator: ("ab","c") and ("a","bc") differ */
    h *= 0x100000001b3ULL;
    return h;
}

static void copy_cut(char *dst, size_t cap, const char *src, size_t n) {
    if (n > cap - 1) {
        n = cap - 1;
        n = utf8_boundary(src, n); /* never end inside a UTF-8 character */
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The kept (possibly cut) copy is the start of `full`. */
static bool is_prefix(const char *kept, const char *full) {
    size_t n = strlen(kept);
    return strncmp(kept, full, n) == 0;
}

static int32_t breaker_threshold(const struct policy_breaker *b) {
    return b->threshold > 0 ? b->threshold : POLICY_BREAKER_DEFAULT;
}

void policy_breaker_init(struct policy_breaker *b, int32_t threshold) {
    if (b == NULL) {
        return;
    }
    memset(b, 0, sizeof(*b));
    b->threshold = threshold > 0 ? threshold : POLICY_BREAKER_DEFAULT;
}

void policy_breaker_reset(struct policy_breaker *b) {
    if (b == NULL) {
        return;
    }
    policy_breaker_init(b, b->threshold);
}

bool policy_breaker_record(struct policy_breaker *b,
                           const char *tool,
                           const char *args_canonical,
                           bool ok,
                           const char *code) {
    if (b == NULL) {
        return false;
    }
    if (ok) {
        policy_breaker_reset(b);
        return false;
    }
    tool = tool != NULL ? tool : "";
    args_canonical = args_canonical != NULL ? args_canonical : "";
    code = code != NULL ? code : "";
    size_t tl = strlen(tool);
    size_t al = strlen(args_canonical);
    size_t cl = strlen(code);
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv1a(h, tool, tl);
    h = fnv1a(h, args_canonical, al);
    h = fnv1a(h, code, cl);

    bool same = b->count > 0 && b->hash == h && b->tool_len == tl && b->args_len == al &&
                b->code_len == cl && is_prefix(b->tool, tool) &&
                is_prefix(b->args, args_canonical) && is_prefix(b->code, code);
    if (same) {
        if (b->count < INT32_MAX) {
            b->count++;
        }
    } else {
        b->count = 1;
        b->hash = h;
        b->tool_len = tl;
        b->args_len = al;
        b->code_len = cl;
        copy_cut(b->tool, sizeof(b->tool), tool, tl);
        copy_cut(b->args, sizeof(b->args), args_canonical, al);
        copy_cut(b->code, sizeof(b->code), code, cl);
    }
    return b->count >= breaker_threshold(b);
}

bool policy_breaker_tripped(const struct policy_breaker *b) {
    return b != NULL && b->count > 0 && b->count >= breaker_threshold(b);
}
