/* A growing text buffer for the assignment reports (JSON, DOT), and the
 * escaping they need. */
#ifndef TESSERA_CORE_REPORT_BUF_H
#define TESSERA_CORE_REPORT_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct report_buf {
    char *p;
    size_t len, cap;
    bool failed; /* out of memory: later appends do nothing, report_buf_finish gives NULL */
} report_buf;

void report_buf_printf(report_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Appends `s` as a JSON string literal, quotes included: '"', '\\' and
 * control bytes escaped, bytes that are not valid UTF-8 written as U+FFFD,
 * so any node or tensor name gives valid JSON. NULL is written as "". */
void report_buf_json_string(report_buf *b, const char *s);
/* Length of the valid UTF-8 sequence at s (1..4), or 0 when s does not
 * start one. s[0] must not be NUL. */
size_t report_buf_utf8_seq(const char *s);
/* The text (malloc'd; the caller frees it), or NULL when an append failed. */
char *report_buf_finish(report_buf *b);

#endif
