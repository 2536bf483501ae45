/*
 * log.c - the process-wide log callback.
 *
 * Invariant: the callback, its user data and the minimum level change together
 * under one mutex, so a message is never delivered to a callback with another
 * callback's user data.
 */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static pipit_log_fn log_fn = NULL;
static void *log_user_data = NULL;
static enum pipit_log_level log_min_level = PIPIT_LOG_INFO;

void pipit_log_set(pipit_log_fn fn, void *user_data, enum pipit_log_level min_level) {
    pthread_mutex_lock(&log_mutex);
    log_fn = fn;
    log_user_data = user_data;
    log_min_level = min_level;
    pthread_mutex_unlock(&log_mutex);
}

bool pipit_log_enabled(enum pipit_log_level level) {
    pthread_mutex_lock(&log_mutex);
    bool on = log_fn != NULL && level >= log_min_level;
    pthread_mutex_unlock(&log_mutex);
    return on;
}

void pipit_log(enum pipit_log_level level, const char *fmt, ...) {
    char text[1024];
    pthread_mutex_lock(&log_mutex);
    if (log_fn != NULL && level >= log_min_level) {
        va_list ap;
        va_start(ap, fmt);
        pipit_vformat(text, sizeof(text), fmt, ap);
        va_end(ap);
        log_fn(level, text, log_user_data);
    }
    pthread_mutex_unlock(&log_mutex);
}
