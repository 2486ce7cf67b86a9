/* A growing text buffer for the assignment reports, and JSON escaping. */
#include "report_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void report_buf_printf(report_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
}

size_t report_buf_utf8_seq(const char *s) {
    const unsigned char *u = (const unsigned char *)s;
    unsigned char c = u[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;      /* no overlong forms */
        else if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F; /* nothing past U+10FFFF */
    } else {
        return 0;
    }
    if (u[1] < lo || u[1] > hi) return 0;
    /* A NUL terminator fails this test, so the loop never reads past it. */
    for (size_t k = 2; k < n; k++)
        if (u[k] < 0x80 || u[k] > 0xBF) return 0;
    return n;
}

void report_buf_json_string(report_buf *b, const char *s) {
    report_buf_printf(b, "\"");
    for (const char *q = s ? s : ""; *q && !b->failed;) {
        unsigned char ch = (unsigned char)*q;
        size_t n = report_buf_utf8_seq(q);
        if (ch == '"' || ch == '\\') report_buf_printf(b, "\\%c", ch);
        else if (ch == '\n') report_buf_printf(b, "\\n");
        else if (ch == '\t') report_buf_printf(b, "\\t");
        else if (ch < 0x20) report_buf_printf(b, "\\u%04x", ch);
        else if (n == 0) report_buf_printf(b, "\\ufffd");
        else report_buf_printf(b, "%.*s", (int)n, q);
        q += n ? n : 1;
    }
    report_buf_printf(b, "\"");
}

char *report_buf_finish(report_buf *b) {
    if (b->failed || !b->p) {
        free(b->p);
        b->p = NULL;
        return b->failed ? NULL : calloc(1, 1);
    }
    char *t = b->p;
    b->p = NULL;
    return t;
}
