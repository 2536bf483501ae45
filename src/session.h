/*
 * session.h - the session file: one agent's memory, action log, device state and the KV state
 * of its context, written atomically and read back only when intact.
 *
 * Layout (little-endian):
 *    0   8  magic "PIPITSES"
 *    8   4  format version (SESSION_VERSION)
 *   12   4  reserved, 0
 *   16   8  model fingerprint (pipit_model_fingerprint)
 *   24   8  J: bytes of the JSON part
 *   32   8  K: bytes of the KV part
 *   40   J  JSON: memory, action log, device state, prompt settings
 *   40+J K  KV state blob (pipit_context_save_state)
 *   ..   8  FNV-1a 64 checksum of everything before it
 *
 * Writing goes to "<path>.tmp" in the same directory, is fsync'ed, then renamed over <path>
 * and the directory is fsync'ed: a crash at any point leaves the old file or the new one.
 */
#ifndef PIPIT_SESSION_H
#define PIPIT_SESSION_H

#include "pipit.h"

#include <stddef.h>
#include <stdint.h>

#define SESSION_VERSION   1
#define SESSION_MAX_BYTES ((uint64_t)1 << 32) /* 4 GiB: anything larger is corrupt */

/* Write a session file atomically. */
enum pipit_status session_write(const char *path,
                                uint64_t model_fingerprint,
                                const char *json,
                                const uint8_t *kv,
                                size_t kv_len,
                                struct pipit_error *err);

/* Read and verify a session file. On success *json (NUL-terminated) and *kv are owned by the
 * caller (free with free); *fingerprint receives the model fingerprint it was written for.
 * Errors, each naming the file: PIPIT_ERR_IO (missing, unreadable), PIPIT_ERR_CORRUPT (bad
 * magic, truncated, sizes that do not add up, checksum mismatch), PIPIT_ERR_STATE (another
 * format version). Nothing is returned on error. */
enum pipit_status session_read(const char *path,
                               uint64_t *fingerprint,
                               char **json,
                               uint8_t **kv,
                               size_t *kv_len,
                               struct pipit_error *err);

#endif /* PIPIT_SESSION_H */
