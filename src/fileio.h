/*
 * fileio.h - files written whole or not at all, and the checksum pipit's own formats use.
 *
 * Every file pipit writes (models, vocabularies, sessions, checkpoints, the decoder's cache)
 * goes through fileio_begin()/fileio_commit(): the bytes go to a private temp file beside the
 * target (`<path>.tmp.<pid>`), which is flushed, synced (unless the file is a disposable
 * cache), closed and renamed over the target; then the directory is synced so the rename
 * itself survives a power cut. A reader sees the old file or the new one, never a torn one;
 * on any failure the temp file is removed and the target is untouched.
 *
 * Thread safety: a `struct fileio_tmp` is used by one thread; different paths are independent.
 */
#ifndef PIPIT_FILEIO_H
#define PIPIT_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How far a commit goes. */
enum fileio_sync {
    FILEIO_DURABLE = 0,    /* fsync the file and its directory (sessions, models) */
    FILEIO_DISPOSABLE = 1, /* rename only: a cache that a torn file's checksum rejects */
};

/* An open temp file and the target it will replace. */
struct fileio_tmp {
    FILE *f;         /* write here between begin and commit */
    char tmp[4096];  /* the temp file's path */
    char path[4096]; /* the target */
};

/* Open a temp file for `path`. False (w->f NULL, errno set; ENAMETOOLONG for a path that does
 * not fit) when it cannot be created. */
bool fileio_begin(struct fileio_tmp *w, const char *path);

/* Finish: when `ok` (everything was written) flush, sync as `sync` says, close and rename over
 * the target; otherwise, or when any of that fails, close and remove the temp file. Returns
 * whether the target now holds the new bytes (errno set on failure). A NULL or never-opened
 * `w` is false. */
bool fileio_commit(struct fileio_tmp *w, bool ok, enum fileio_sync sync);

/* Write `n` bytes to the temp file; false on a short write. */
bool fileio_write(struct fileio_tmp *w, const void *data, size_t n);

/* FNV-1a 64 of `n` bytes, continuing from `h` (start with FILEIO_FNV_OFFSET): the checksum of
 * session files and the decoder's cache (against damage, not forgery). */
#define FILEIO_FNV_OFFSET 14695981039346656037ull
uint64_t fileio_fnv1a(uint64_t h, const void *data, size_t n);

#endif /* PIPIT_FILEIO_H */
