/*
 * session.c - atomic session files with a version and a checksum (see session.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "session.h"

#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char SESSION_MAGIC[8] = {'P', 'I', 'P', 'I', 'T', 'S', 'E', 'S'};

uint64_t session_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static uint32_t get_u32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static bool write_all(int fd, const void *data, size_t n) {
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* fsync the directory holding `path`, so the rename itself is durable. */
static void sync_dir(const char *path) {
    char dir[4096];
    pipit_format(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        pipit_format(dir, sizeof(dir), ".");
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

enum pipit_status session_write(const char *path,
                                uint64_t model_fingerprint,
                                const char *json,
                                const uint8_t *kv,
                                size_t kv_len,
                                struct pipit_error *err) {
    pipit_error_clear(err);
    if (path == NULL || json == NULL || (kv == NULL && kv_len > 0)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "session: NULL argument");
    }
    char tmp[4096];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "session: path too long: %s", path);
    }
    size_t json_len = strlen(json);
    uint8_t head[40];
    memcpy(head, SESSION_MAGIC, 8);
    put_u32(head + 8, SESSION_VERSION);
    put_u32(head + 12, 0);
    put_u64(head + 16, model_fingerprint);
    put_u64(head + 24, json_len);
    put_u64(head + 32, kv_len);
    uint64_t sum = session_fnv1a(SESSION_FNV_OFFSET, head, sizeof(head));
    sum = session_fnv1a(sum, json, json_len);
    sum = session_fnv1a(sum, kv, kv_len);
    uint8_t tail[8];
    put_u64(tail, sum);

    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        return pipit_error_set(err, PIPIT_ERR_IO, "session: cannot write %s: %s", tmp,
                               strerror(errno));
    }
    bool ok = write_all(fd, head, sizeof(head)) && write_all(fd, json, json_len) &&
              write_all(fd, kv, kv_len) && write_all(fd, tail, sizeof(tail)) && fsync(fd) == 0;
    ok = (close(fd) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return pipit_error_set(err, PIPIT_ERR_IO, "session: cannot write %s: %s", path,
                               strerror(e));
    }
    sync_dir(path);
    return PIPIT_OK;
}

enum pipit_status session_read(const char *path,
                               uint64_t *fingerprint,
                               char **json,
                               uint8_t **kv,
                               size_t *kv_len,
                               struct pipit_error *err) {
    pipit_error_clear(err);
    if (path == NULL || fingerprint == NULL || json == NULL || kv == NULL || kv_len == NULL) {
        return pipit_error_set(err, PIPIT_ERR_INVALID_ARG, "session: NULL argument");
    }
    *json = NULL;
    *kv = NULL;
    *kv_len = 0;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return pipit_error_set(err, PIPIT_ERR_IO, "session: cannot open %s: %s", path,
                               strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_IO, "session: not a regular file: %s", path);
    }
    uint64_t size = (uint64_t)st.st_size;
    uint8_t head[40];
    if (size < sizeof(head) + 8 || fread(head, 1, sizeof(head), f) != sizeof(head)) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "session: truncated: %s has %llu bytes, a session has at least 48",
                               path, (unsigned long long)size);
    }
    if (memcmp(head, SESSION_MAGIC, 8) != 0) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "session: not a pipit session file: %s",
                               path);
    }
    uint32_t version = get_u32(head + 8);
    if (version != SESSION_VERSION) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_STATE,
                               "session: %s has format version %u, this pipit reads version %d",
                               path, version, SESSION_VERSION);
    }
    uint64_t jlen = get_u64(head + 24);
    uint64_t klen = get_u64(head + 32);
    if (jlen > SESSION_MAX_BYTES || klen > SESSION_MAX_BYTES ||
        sizeof(head) + jlen + klen + 8 != size) {
        fclose(f);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "session: sizes do not add up in %s (JSON %llu + KV %llu bytes, "
                               "file %llu): truncated or damaged",
                               path, (unsigned long long)jlen, (unsigned long long)klen,
                               (unsigned long long)size);
    }
    char *j = malloc((size_t)jlen + 1);
    uint8_t *k = malloc(klen > 0 ? (size_t)klen : 1);
    uint8_t tail[8];
    bool ok = j != NULL && k != NULL && fread(j, 1, (size_t)jlen, f) == jlen &&
              fread(k, 1, (size_t)klen, f) == klen && fread(tail, 1, 8, f) == 8;
    fclose(f);
    if (!ok) {
        free(j);
        free(k);
        return pipit_error_set(err, j == NULL || k == NULL ? PIPIT_ERR_NOMEM : PIPIT_ERR_IO,
                               "session: cannot read %s", path);
    }
    j[jlen] = '\0';
    uint64_t sum = session_fnv1a(SESSION_FNV_OFFSET, head, sizeof(head));
    sum = session_fnv1a(sum, j, (size_t)jlen);
    sum = session_fnv1a(sum, k, (size_t)klen);
    if (sum != get_u64(tail)) {
        free(j);
        free(k);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT,
                               "session: checksum mismatch in %s: the file is damaged", path);
    }
    if (strlen(j) != jlen) {
        free(j);
        free(k);
        return pipit_error_set(err, PIPIT_ERR_CORRUPT, "session: NUL byte in the JSON of %s", path);
    }
    *fingerprint = get_u64(head + 16);
    *json = j;
    *kv = k;
    *kv_len = (size_t)klen;
    return PIPIT_OK;
}
