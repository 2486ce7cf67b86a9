/* The log sink the host and plugins write through (host->log): lines at or
 * below the level of the session the calling thread works for, to the
 * application's logger or stderr, tagged with the run's tag. */
#ifndef TESSERA_CORE_HOST_LOG_H
#define TESSERA_CORE_HOST_LOG_H

#include <stdint.h>

#include "tessera/tessera.h"

void host_log(int32_t level, const char *who, const char *message);
/* Makes `level` this thread's log level until host_log_leave(returned). */
int32_t host_log_enter(int32_t level);
void host_log_leave(int32_t outer);
/* Sets the run tag log lines of this thread carry (NULL: none); returns the
 * one before, to give back when the call ends. */
const char *host_log_tag_enter(const char *tag);
/* The application's log sink for this thread's session call (fn NULL:
 * stderr); returns the one before, to give back when the call ends. */
typedef struct host_logger {
    tsr_log_fn fn;
    void *user;
} host_logger;
host_logger host_logger_enter(host_logger logger);

#endif
