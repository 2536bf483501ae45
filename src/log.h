/*
 * log.h - pipit's log sink. The library never prints: messages go to the
 * callback an embedder sets with pipit_log_set(), or nowhere. llama.cpp's and
 * ggml's logs are routed here too.
 */
#ifndef PIPIT_LOG_H
#define PIPIT_LOG_H

#include "pipit.h"
#include "status.h"

/* Send one message to the current callback (dropped when none or below the
 * minimum level). */
void pipit_log(enum pipit_log_level level, const char *fmt, ...) PIPIT_PRINTF(2, 3);

/* True when a message at `level` would reach a callback (skip expensive
 * formatting). */
bool pipit_log_enabled(enum pipit_log_level level);

#endif /* PIPIT_LOG_H */
