/*
 * status.h - internal helpers for status codes and `struct pipit_error`.
 *
 * Every module reports failures the same way: a status code plus one message of
 * the form
 * "<module>: <what failed>: <offending value>". These helpers format that
 * message with truncation handled (a message is cut, never overflowed).
 */
#ifndef PIPIT_STATUS_H
#define PIPIT_STATUS_H

#include "pipit.h"

#include <stdarg.h>

#if defined(__GNUC__)
#define PIPIT_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PIPIT_PRINTF(fmt, args)
#endif

/* Reset `err` to "no error" (NULL is allowed). */
void pipit_error_clear(struct pipit_error *err);

/* Fill `err` (NULL is allowed) with `status` and a formatted message;
 * line/column 0, offset -1. Returns `status` so callers can `return
 * pipit_error_set(...)`. */
enum pipit_status
pipit_error_set(struct pipit_error *err, enum pipit_status status, const char *fmt, ...)
    PIPIT_PRINTF(3, 4);

/* Format into a fixed buffer; the result is always NUL-terminated, cut if too
 * long. */
void pipit_format(char *buf, size_t size, const char *fmt, ...) PIPIT_PRINTF(3, 4);
void pipit_vformat(char *buf, size_t size, const char *fmt, va_list ap) PIPIT_PRINTF(3, 0);

/* Monotonic clock in milliseconds. */
double pipit_now_ms(void);

#endif /* PIPIT_STATUS_H */
