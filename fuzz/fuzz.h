/*
 * fuzz.h - helpers shared by the libFuzzer targets in fuzz/ (docs/fuzz.md).
 *
 * Each target is one LLVMFuzzerTestOneInput() over a public (or stable internal) entry point.
 * The input is never trusted to be NUL-terminated: entry points that take a length get the
 * fuzzer's buffer as it is (ASan catches a read past it); those that take a C string get a
 * copy. A target stops the run with fuzz_fail() only when the library broke a promise that
 * does not depend on the input being valid (a compiled grammar llama.cpp refuses, a saved
 * session that does not load back); crashes, leaks, UB and timeouts are the sanitizers' and
 * libFuzzer's to report.
 */
#ifndef PIPIT_FUZZ_H
#define PIPIT_FUZZ_H

#include "pipit_tools.h" /* pipit.h and the tooling: scenarios, the simulated devices */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken promise: say which, then abort (libFuzzer saves the input as a crash). */
__attribute__((noreturn, format(printf, 1, 2))) static inline void fuzz_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz: broken promise: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* A NUL-terminated copy of `n` bytes (the fuzzer's buffer is not terminated). */
static inline char *fuzz_strndup(const uint8_t *data, size_t n) {
    char *s = malloc(n + 1);
    if (s == NULL) {
        fuzz_fail("out of memory copying %zu bytes", n);
    }
    if (n > 0) {
        memcpy(s, data, n);
    }
    s[n] = '\0';
    return s;
}

/* A shipped tool pack (tools/<name>.json); the harness cannot run without it. */
static inline struct pipit_toolset *fuzz_load_pack(const char *name) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/tools/%s.json", PIPIT_SOURCE_DIR, name);
    struct pipit_toolset *ts = NULL;
    struct pipit_error err;
    if (pipit_toolset_load_file(path, &ts, &err) != PIPIT_OK) {
        fuzz_fail("cannot load %s: %s", path, err.text);
    }
    return ts;
}

/* A scratch file path "<dir>/pipit-fuzz-<pid>-<name>" for targets that need files: dir is
 * /dev/shm when it is writable (fsync and rename cost nothing there), else $TMPDIR or /tmp. No
 * directory is created; the target unlinks its files after each input, since libFuzzer may end
 * the process without running atexit handlers. */
static inline void fuzz_scratch_path(char *buf, size_t size, const char *name) {
    const char *tmp = getenv("TMPDIR");
    const char *dir = access("/dev/shm", W_OK) == 0   ? "/dev/shm"
                      : tmp != NULL && tmp[0] != '\0' ? tmp
                                                      : "/tmp";
    snprintf(buf, size, "%s/pipit-fuzz-%ld-%s", dir, (long)getpid(), name);
}

#endif /* PIPIT_FUZZ_H */
