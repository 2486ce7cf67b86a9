/* The log sink of the host API (host->log) and of the host itself: per
 * thread, because one process may run sessions with different levels,
 * loggers and run tags at once, and a session call is on one thread. */
#include "host_log.h"

#include <stdio.h>

/* The log level of the session this thread is working for (set by
 * host_log_enter for the span of a session call); threads outside any,
 * such as a provider's worker threads, log warnings and errors. */
static _Thread_local int32_t thread_log_level = -1;

int32_t host_log_enter(int32_t level) {
    int32_t outer = thread_log_level;
    thread_log_level = level;
    return outer;
}

void host_log_leave(int32_t outer) { thread_log_level = outer; }

/* The tag of the run this thread is working for (tsr_run_options_set_tag),
 * or NULL. */
static _Thread_local const char *thread_log_tag;

const char *host_log_tag_enter(const char *tag) {
    const char *outer = thread_log_tag;
    thread_log_tag = tag;
    return outer;
}

/* The application's sink for the session call this thread is in. */
static _Thread_local host_logger thread_logger;

host_logger host_logger_enter(host_logger logger) {
    host_logger outer = thread_logger;
    thread_logger = logger;
    return outer;
}

void host_log(int32_t level, const char *who, const char *message) {
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (level > (thread_log_level >= 0 ? thread_log_level : TSR_LOG_WARNING)) return;
    if (level < 0 || level > 3) level = 3;
    const char *tag = thread_log_tag;
    if (thread_logger.fn) {
        if (!tag) {
            thread_logger.fn(thread_logger.user, level, who ? who : "core", message ? message : "");
            return;
        }
        char line[4096];
        snprintf(line, sizeof line, "[%s] %s", tag, message ? message : "");
        thread_logger.fn(thread_logger.user, level, who ? who : "core", line);
        return;
    }
    fprintf(stderr, "tessera %s%s%s: %s%s%s%s\n", names[level], who ? " " : "", who ? who : "", tag ? "[" : "",
            tag ? tag : "", tag ? "] " : "", message);
}
