/*
 * session.c - atomic session files with a version and a checksum (see session.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "session.h"

#include "fileio.h"
#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char SESSION_MAGIC[8] = {'P', 'I', 'P', 'I', 'T', 'S', 'E', 'S'};

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
    size_t json_len = strlen(json);
    uint8_t head[40];
    memcpy(head, SESSION_MAGIC, 8);
    put_u32(head + 8, SESSION_VERSION);
    put_u32(head + 12, 0);
    put_u64(head + 16, model_fingerprint);
    put_u64(head + 24, json_len);
    put_u64(head + 32, kv_len);
    uint64_t sum = fileio_fnv1a(FILEIO_FNV_OFFSET, head, sizeof(head));
    sum = fileio_fnv1a(sum, json, json_len);
    sum = fileio_fnv1a(sum, kv, kv_len);
    uint8_t tail[8];
    put_u64(tail, sum);

    struct fileio_tmp w;
    if (!fileio_begin(&w, path)) {
        return pipit_error_set(err, PIPIT_ERR_IO, "session: cannot write %s: %s", path,
                               strerror(errno));
    }
    bool ok = fileio_write(&w, head, sizeof(head)) && fileio_write(&w, json, json_len) &&
              fileio_write(&w, kv, kv_len) && fileio_write(&w, tail, sizeof(tail));
    if (!fileio_commit(&w, ok, FILEIO_DURABLE)) {
        return pipit_error_set(err, PIPIT_ERR_IO, "session: cannot write %s: %s", path,
                               strerror(errno));
    }
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
    uint64_t sum = fileio_fnv1a(FILEIO_FNV_OFFSET, head, sizeof(head));
    sum = fileio_fnv1a(sum, j, (size_t)jlen);
    sum = fileio_fnv1a(sum, k, (size_t)klen);
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
