/*
 * fileio.c - atomic file writes and the FNV-1a checksum (see fileio.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool fileio_begin(struct fileio_tmp *w, const char *path) {
    if (w == NULL) {
        return false;
    }
    w->f = NULL;
    w->tmp[0] = '\0';
    w->path[0] = '\0';
    if (path == NULL || path[0] == '\0') {
        errno = EINVAL;
        return false;
    }
    int n = snprintf(w->tmp, sizeof(w->tmp), "%s.tmp.%ld", path, (long)getpid());
    int m = snprintf(w->path, sizeof(w->path), "%s", path);
    if (n < 0 || (size_t)n >= sizeof(w->tmp) || m < 0 || (size_t)m >= sizeof(w->path)) {
        errno = ENAMETOOLONG;
        return false;
    }
    w->f = fopen(w->tmp, "wb");
    return w->f != NULL;
}

bool fileio_write(struct fileio_tmp *w, const void *data, size_t n) {
    return w != NULL && w->f != NULL && (n == 0 || fwrite(data, 1, n, w->f) == n);
}

/* fsync the directory holding `path`, so a rename into it is durable. */
static void sync_dir(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
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

bool fileio_commit(struct fileio_tmp *w, bool ok, enum fileio_sync sync) {
    if (w == NULL || w->f == NULL) {
        return false;
    }
    ok = fflush(w->f) == 0 && ok;
    if (ok && sync == FILEIO_DURABLE) {
        ok = fsync(fileno(w->f)) == 0;
    }
    ok = fclose(w->f) == 0 && ok;
    w->f = NULL;
    if (!ok || rename(w->tmp, w->path) != 0) {
        int e = errno;
        unlink(w->tmp);
        errno = e;
        return false;
    }
    if (sync == FILEIO_DURABLE) {
        sync_dir(w->path);
    }
    return true;
}

uint64_t fileio_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}
