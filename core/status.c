/* Status objects shared by the library and, through the host API, plugins. */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

struct tsr_status {
    int32_t code;
    char message[];
};

/* Returned when even the error can't be allocated; never freed. */
static struct {
    int32_t code;
    char message[16];
} oom_status = {TSR_ERR_NO_MEMORY, "out of memory"};

static tsr_status *status_vmake(int32_t code, const char *prefix, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) n = 0;
    size_t plen = prefix ? strlen(prefix) : 0;
    tsr_status *s = malloc(sizeof *s + plen + (size_t)n + 1);
    if (!s) return (tsr_status *)&oom_status;
    s->code = code;
    vsnprintf(s->message, (size_t)n + 1, fmt, ap);
    if (prefix) memcpy(s->message + n, prefix, plen + 1);
    return s;
}

tsr_status *tsr_error(int32_t code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    tsr_status *s = status_vmake(code, NULL, fmt, ap);
    va_end(ap);
    return s;
}

tsr_status *tsr_error_wrap(tsr_status *inner, const char *fmt, ...) {
    if (!inner) return NULL;
    char *tail = malloc(strlen(inner->message) + 3);
    if (!tail) return inner;
    strcpy(tail, ": ");
    strcat(tail, inner->message);
    va_list ap;
    va_start(ap, fmt);
    tsr_status *s = status_vmake(inner->code, tail, fmt, ap);
    va_end(ap);
    free(tail);
    tsr_status_free(inner);
    return s;
}

void tsr_status_free(tsr_status *status) {
    if (status && status != (tsr_status *)&oom_status) free(status);
}

const char *tsr_status_message(const tsr_status *status) { return status ? status->message : ""; }

tsr_code tsr_status_code(const tsr_status *status) { return status ? (tsr_code)status->code : TSR_OK; }
