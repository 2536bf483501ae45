/*
 * status.c - status names, error structs, pipit_free and the monotonic clock.
 */
#define _POSIX_C_SOURCE 200809L

#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *pipit_status_str(enum pipit_status status) {
    switch (status) {
        case PIPIT_OK:
            return "ok";
        case PIPIT_ERR_INVALID_ARG:
            return "invalid argument";
        case PIPIT_ERR_NOMEM:
            return "out of memory";
        case PIPIT_ERR_IO:
            return "i/o error";
        case PIPIT_ERR_NOT_GGUF:
            return "not a GGUF file";
        case PIPIT_ERR_CORRUPT:
            return "corrupt file";
        case PIPIT_ERR_UNSUPPORTED_ARCH:
            return "unsupported model architecture";
        case PIPIT_ERR_MODEL:
            return "model rejected";
        case PIPIT_ERR_BACKEND:
            return "backend initialisation failed";
        case PIPIT_ERR_CONTEXT_FULL:
            return "context full";
        case PIPIT_ERR_ABORTED:
            return "aborted";
        case PIPIT_ERR_DECODE:
            return "decode failed";
        case PIPIT_ERR_GRAMMAR:
            return "invalid grammar";
        case PIPIT_ERR_TOKENIZE:
            return "tokenization failed";
        case PIPIT_ERR_TEMPLATE:
            return "chat template failed";
        case PIPIT_ERR_ADAPTER:
            return "adapter error";
        case PIPIT_ERR_STATE:
            return "invalid state";
        case PIPIT_ERR_NO_CANDIDATES:
            return "no candidate token";
        case PIPIT_ERR_SPEC:
            return "invalid tool specification";
        case PIPIT_ERR_UNKNOWN_TOOL:
            return "unknown tool";
        case PIPIT_ERR_INVALID_ARGS:
            return "invalid arguments";
        case PIPIT_ERR_PARSE:
            return "output does not parse";
        case PIPIT_ERR_TOOL_FAILED:
            return "tool failed";
        case PIPIT_ERR_JSON:
            return "invalid JSON";
    }
    return "unknown status";
}

void pipit_free(void *ptr) {
    free(ptr);
}

void pipit_error_clear(struct pipit_error *err) {
    if (err == NULL) {
        return;
    }
    memset(err, 0, sizeof(*err));
    err->offset = -1;
}

void pipit_vformat(char *buf, size_t size, const char *fmt, va_list ap) {
    if (buf == NULL || size == 0) {
        return;
    }
    int n = vsnprintf(buf, size, fmt, ap);
    if (n < 0) {
        buf[0] = '\0';
    } else if ((size_t)n >= size && size >= 4) {
        /* truncated: mark it so a reader knows the message was cut, at a character's start
         * (never half a UTF-8 sequence before the mark) */
        size_t at = size - 4;
        while (at > 0 && ((unsigned char)buf[at] & 0xC0) == 0x80) {
            at--;
        }
        memcpy(buf + at, "...", 4);
    }
}

void pipit_format(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(buf, size, fmt, ap);
    va_end(ap);
}

enum pipit_status
pipit_error_set(struct pipit_error *err, enum pipit_status status, const char *fmt, ...) {
    if (err == NULL) {
        return status;
    }
    pipit_error_clear(err);
    err->status = status;
    va_list ap;
    va_start(ap, fmt);
    pipit_vformat(err->text, sizeof(err->text), fmt, ap);
    va_end(ap);
    return status;
}

double pipit_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
