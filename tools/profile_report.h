/*
 * Presenting a session's profile (tsr_session_profile_take): a Chrome trace
 * file that Perfetto and chrome://tracing open, and a summary table of time
 * per provider, per op type and for copies. Used by `tessera bench
 * --profile FILE`; needs only the public API, so a test can link it alone.
 */
#ifndef TESSERA_TOOLS_PROFILE_REPORT_H
#define TESSERA_TOOLS_PROFILE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tessera/tessera.h"

/* Writes `events` (the JSON array tsr_session_profile_take returns) to
 * `path` as {"traceEvents": EVENTS, "displayTimeUnit": "ms"}. On failure
 * prints why to stderr and returns false. */
bool profile_write_trace(const char *path, const char *events);

/* Prints the summary of `events` to `f`: per provider, per op type (a
 * piece's time split evenly among its nodes) and for copies: count, total
 * ms, ms per run (`runs` is how many runs the events cover; 0 = unknown)
 * and share of all recorded time. False (with a message on stderr) when
 * the events are not the JSON array the library writes. */
bool profile_print_summary(FILE *f, const char *events, size_t runs);

/* Pieces of one provider and copies into and out of its memory, from a
 * profile's events ("from"/"to" of a copy event name the provider whose
 * memory, or "host"). */
typedef struct profile_copies {
    size_t pieces;     /* piece runs of `owner` */
    size_t to_owner;   /* copies into its memory */
    size_t from_owner; /* copies out of it */
    size_t other;      /* copies between other memories */
    double bytes;      /* all copies' bytes */
} profile_copies;
/* False (with a message on stderr) when `events` is not the library's array. */
bool profile_count_copies(const char *events, const char *owner, profile_copies *out);

/* Both at once for a session created with profiling on: takes its events
 * (so they are not reported twice), writes the trace to `path` (NULL: no
 * file) and prints the summary to `summary` (NULL: none). */
bool profile_report_session(tsr_session *session, const char *path, FILE *summary, size_t runs);

#endif
