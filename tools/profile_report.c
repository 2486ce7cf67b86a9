/*
 * Profile presentation: the trace file and the summary table.
 *
 * The events come as the JSON array the library writes; the summary reads
 * them back with a small JSON reader of its own (the command uses only the
 * public API, and the array is the API). The reader is strict about syntax,
 * bounded in nesting, and never reads past the terminating NUL; anything it
 * does not understand makes the summary fail with a message, not a guess.
 */
#include "profile_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32
#define FIELD_MAX 65536 /* longest string kept from an event; longer ones are cut */
/* An "ops" list that fills the field was cut and may end in a partial name. */
#define LIBRARY_OPS_CUT (FIELD_MAX - 1)

/* --- trace file ---------------------------------------------------------- */
bool profile_write_trace(const char *path, const char *events) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tessera: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    fprintf(f, "{\"traceEvents\": %s, \"displayTimeUnit\": \"ms\"}\n", events && *events ? events : "[]");
    bool ok = !ferror(f);
    if (fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "tessera: cannot write %s: %s\n", path, strerror(errno));
    return ok;
}

/* --- reading events ------------------------------------------------------ */
typedef struct json_in {
    const char *p;
    bool bad;
} json_in;

typedef struct event {
    char cat[32], provider[128], ops[FIELD_MAX];
    char from[128], to[128]; /* copies: "host" or the provider whose memory */
    char impl[FIELD_MAX];    /* the provider's piece_describe, ';'-separated */
    double dur_us, bytes;
} event;

static void skip_ws(json_in *in) {
    while (*in->p == ' ' || *in->p == '\n' || *in->p == '\r' || *in->p == '\t') in->p++;
}

static bool expect(json_in *in, char c) {
    skip_ws(in);
    if (*in->p != c) {
        in->bad = true;
        return false;
    }
    in->p++;
    return true;
}

/* Reads a string into out (cut to size; NULL to discard). Escapes are
 * decoded; \u escapes beyond ASCII become '?', which a summary can bear. */
static bool read_string(json_in *in, char *out, size_t size) {
    if (!expect(in, '"')) return false;
    size_t n = 0;
    for (;;) {
        char c = *in->p;
        if (c == 0 || (unsigned char)c < 0x20) {
            in->bad = true;
            return false;
        }
        in->p++;
        if (c == '"') break;
        if (c == '\\') {
            char e = *in->p;
            if (!e) {
                in->bad = true;
                return false;
            }
            in->p++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                unsigned v = 0;
                for (int k = 0; k < 4; k++) {
                    char h = *in->p;
                    int d = h >= '0' && h <= '9' ? h - '0'
                        : h >= 'a' && h <= 'f'   ? h - 'a' + 10
                        : h >= 'A' && h <= 'F'   ? h - 'A' + 10
                                                 : -1;
                    if (d < 0) {
                        in->bad = true;
                        return false;
                    }
                    v = v * 16 + (unsigned)d;
                    in->p++;
                }
                c = v < 0x80 ? (char)v : '?';
                break;
            }
            default: c = e; break; /* \" \\ \/ */
            }
        }
        if (out && n + 1 < size) out[n++] = c;
    }
    if (out && size) out[n] = 0;
    return true;
}

static bool read_number(json_in *in, double *out) {
    skip_ws(in);
    char *end;
    errno = 0;
    double v = strtod(in->p, &end);
    if (end == in->p || errno == ERANGE) {
        in->bad = true;
        return false;
    }
    in->p = end;
    if (out) *out = v;
    return true;
}

static bool skip_value(json_in *in, int depth);

/* Calls member(key) for each member of an object; member reads the value. */
typedef bool (*member_fn)(json_in *in, const char *key, void *user, int depth);

static bool read_object(json_in *in, member_fn member, void *user, int depth) {
    if (depth > MAX_DEPTH || !expect(in, '{')) {
        in->bad = true;
        return false;
    }
    skip_ws(in);
    if (*in->p == '}') {
        in->p++;
        return true;
    }
    for (;;) {
        char key[64];
        if (!read_string(in, key, sizeof key) || !expect(in, ':')) return false;
        if (!member(in, key, user, depth + 1)) return false;
        skip_ws(in);
        if (*in->p == ',') {
            in->p++;
            continue;
        }
        return expect(in, '}');
    }
}

static bool skip_member(json_in *in, const char *key, void *user, int depth) {
    (void)key;
    (void)user;
    return skip_value(in, depth);
}

static bool skip_value(json_in *in, int depth) {
    skip_ws(in);
    if (depth > MAX_DEPTH) {
        in->bad = true;
        return false;
    }
    switch (*in->p) {
    case '"': return read_string(in, NULL, 0);
    case '{': return read_object(in, skip_member, NULL, depth);
    case '[':
        in->p++;
        skip_ws(in);
        if (*in->p == ']') {
            in->p++;
            return true;
        }
        for (;;) {
            if (!skip_value(in, depth + 1)) return false;
            skip_ws(in);
            if (*in->p == ',') {
                in->p++;
                continue;
            }
            return expect(in, ']');
        }
    case 't':
    case 'f':
    case 'n': {
        const char *word = *in->p == 't' ? "true" : *in->p == 'f' ? "false" : "null";
        size_t n = strlen(word);
        if (strncmp(in->p, word, n) != 0) {
            in->bad = true;
            return false;
        }
        in->p += n;
        return true;
    }
    default: return read_number(in, NULL);
    }
}

/* A number, or the number inside a string ("device":0 vs "device":"0"). */
static bool read_number_member(json_in *in, double *out) {
    skip_ws(in);
    if (*in->p == '"') {
        char buf[64];
        if (!read_string(in, buf, sizeof buf)) return false;
        *out = strtod(buf, NULL);
        return true;
    }
    return read_number(in, out);
}

static bool args_member(json_in *in, const char *key, void *user, int depth) {
    event *e = user;
    if (strcmp(key, "provider") == 0) return read_string(in, e->provider, sizeof e->provider);
    if (strcmp(key, "ops") == 0) return read_string(in, e->ops, sizeof e->ops);
    if (strcmp(key, "impl") == 0) return read_string(in, e->impl, sizeof e->impl);
    if (strcmp(key, "bytes") == 0) return read_number_member(in, &e->bytes);
    if (strcmp(key, "from") == 0) return read_string(in, e->from, sizeof e->from);
    if (strcmp(key, "to") == 0) return read_string(in, e->to, sizeof e->to);
    return skip_value(in, depth);
}

static bool event_member(json_in *in, const char *key, void *user, int depth) {
    event *e = user;
    if (strcmp(key, "cat") == 0) return read_string(in, e->cat, sizeof e->cat);
    if (strcmp(key, "dur") == 0) return read_number_member(in, &e->dur_us);
    if (strcmp(key, "args") == 0) {
        skip_ws(in);
        if (*in->p == '{') return read_object(in, args_member, e, depth);
    }
    return skip_value(in, depth);
}

/* --- tallies ------------------------------------------------------------- */
typedef struct tally_row {
    char *key;
    double count, total_us, bytes;
    double fused; /* of count, nodes that ran inside a multi-node piece */
} tally_row;

typedef struct tally {
    tally_row *rows;
    size_t count;
    bool failed;
} tally;

static tally_row *tally_get(tally *t, const char *key) {
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].key, key) == 0) return &t->rows[i];
    tally_row *grown = realloc(t->rows, (t->count + 1) * sizeof *grown);
    if (!grown) {
        t->failed = true;
        return NULL;
    }
    t->rows = grown;
    tally_row *r = &t->rows[t->count];
    memset(r, 0, sizeof *r);
    if (!(r->key = strdup(key))) {
        t->failed = true;
        return NULL;
    }
    t->count++;
    return r;
}

static void tally_add(tally *t, const char *key, double count, double us, double bytes, double fused) {
    tally_row *r = tally_get(t, key);
    if (!r) return;
    r->count += count;
    r->total_us += us;
    r->bytes += bytes;
    r->fused += fused;
}

static void tally_free(tally *t) {
    for (size_t i = 0; i < t->count; i++) free(t->rows[i].key);
    free(t->rows);
}

static int by_time_desc(const void *a, const void *b) {
    double x = ((const tally_row *)a)->total_us, y = ((const tally_row *)b)->total_us;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* One piece's time split evenly among its nodes: the trace times pieces,
 * not nodes, and an even split keeps the per-op column summing to the
 * total rather than counting a fused piece once per op. */
static void add_piece_ops(tally *ops, event *e, size_t *cut_lists) {
    size_t len = strlen(e->ops);
    if (len >= LIBRARY_OPS_CUT) {
        char *last = strrchr(e->ops, ',');
        if (last) *last = 0; /* the partial name */
        ++*cut_lists;
    }
    size_t nodes = 1;
    for (const char *p = e->ops; *p; p++) nodes += *p == ',';
    double share = e->dur_us / (double)nodes;
    const char *p = e->ops;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char op[128];
        snprintf(op, sizeof op, "%.*s", (int)(n < sizeof op ? n : sizeof op - 1), p);
        tally_add(ops, *op ? op : "(unknown)", 1, share, 0, nodes > 1 ? 1 : 0);
        if (!comma) break;
        p = comma + 1;
    }
}

/* Counts each implementation a piece run used ("onednn: convolution
 * brgconv:avx512_core"), so a slow library fallback (oneDNN's "ref:any")
 * shows by name. */
static void add_piece_impls(tally *impls, const event *e) {
    for (const char *p = e->impl; *p;) {
        const char *semi = strchr(p, ';');
        size_t n = semi ? (size_t)(semi - p) : strlen(p);
        char key[256];
        snprintf(key, sizeof key, "%s: %.*s", e->provider, (int)(n < 200 ? n : 200), p);
        tally_add(impls, key, 1, 0, 0, 0);
        if (!semi) break;
        p = semi + 1;
    }
}

static int by_count_desc(const void *a, const void *b) {
    double x = ((const tally_row *)a)->count, y = ((const tally_row *)b)->count;
    return x < y ? 1 : x > y ? -1 : strcmp(((const tally_row *)a)->key, ((const tally_row *)b)->key);
}

static void print_impls(FILE *f, tally *t, size_t runs) {
    qsort(t->rows, t->count, sizeof *t->rows, by_count_desc);
    fprintf(f, "%-56s %10s\n", "implementation (as the provider names it)", runs ? "per run" : "count");
    for (size_t i = 0; i < t->count; i++)
        fprintf(f, "  %-54.54s %10.1f\n", t->rows[i].key, runs ? t->rows[i].count / (double)runs : t->rows[i].count);
}

typedef enum extra_column { NO_EXTRA, BYTES_COLUMN, FUSED_COLUMN } extra_column;

static void print_table(FILE *f, const char *title, const char *count_name, tally *t, double all_us, size_t runs,
                        extra_column extra) {
    qsort(t->rows, t->count, sizeof *t->rows, by_time_desc);
    fprintf(f, "%-24s %10s %12s %12s %7s%s\n", title, count_name, "total ms", runs ? "ms/run" : "", "share",
            extra == BYTES_COLUMN       ? "        MB"
                : extra == FUSED_COLUMN ? "   in fused"
                                        : "");
    for (size_t i = 0; i < t->count; i++) {
        const tally_row *r = &t->rows[i];
        char per_run[32] = "";
        if (runs) snprintf(per_run, sizeof per_run, "%.3f", r->total_us / 1e3 / (double)runs);
        fprintf(f, "  %-22.22s %10.0f %12.3f %12s %6.1f%%", r->key, r->count, r->total_us / 1e3, per_run,
                all_us > 0 ? 100.0 * r->total_us / all_us : 0.0);
        if (extra == BYTES_COLUMN) fprintf(f, " %9.2f", r->bytes / 1e6);
        if (extra == FUSED_COLUMN) fprintf(f, " %10.0f", r->fused);
        fputc('\n', f);
    }
}

/* Calls fn for each event of the array; false (with a message on stderr)
 * when `events` is not the JSON array the library writes. */
static bool for_each_event(const char *events, void (*fn)(event *e, void *user), void *user) {
    const char *start = events ? events : "";
    json_in in = {start, false};
    bool ok = expect(&in, '[');
    skip_ws(&in);
    if (ok && *in.p == ']') {
        in.p++;
    } else {
        while (ok) {
            /* 128 KiB of text fields: empty them rather than clear them all,
             * once per event */
            event e;
            e.cat[0] = e.provider[0] = e.ops[0] = e.impl[0] = e.from[0] = e.to[0] = 0;
            e.dur_us = e.bytes = 0;
            if (!read_object(&in, event_member, &e, 1)) break;
            if (!isfinite(e.dur_us) || e.dur_us < 0) e.dur_us = 0;
            fn(&e, user);
            skip_ws(&in);
            if (*in.p == ',') {
                in.p++;
                continue;
            }
            ok = expect(&in, ']');
            break;
        }
    }
    skip_ws(&in);
    ok = ok && !in.bad && *in.p == 0;
    if (!ok)
        fprintf(stderr, "tessera: the profile is not a JSON array of trace events (near byte %zu)\n",
                (size_t)(in.p - start));
    return ok;
}

typedef struct summary {
    tally providers, ops, copies, impls;
    size_t n_pieces, n_copies, cut_lists, n_control;
    double piece_us, copy_us, control_us;
} summary;

static void add_to_summary(event *e, void *user) {
    summary *s = user;
    if (strcmp(e->cat, "copy") == 0) {
        s->n_copies++;
        s->copy_us += e->dur_us;
        tally_add(&s->copies, "copies", 1, e->dur_us, e->bytes, 0);
    } else if (strcmp(e->cat, "piece") == 0 && strcmp(e->provider, "core") == 0) {
        /* an If/Loop/Scan/SequenceMap: its time is its bodies' pieces and
         * copies, recorded as events of their own */
        s->n_control++;
        s->control_us += e->dur_us;
    } else if (strcmp(e->cat, "piece") == 0) {
        s->n_pieces++;
        s->piece_us += e->dur_us;
        tally_add(&s->providers, *e->provider ? e->provider : "(unknown)", 1, e->dur_us, 0, 0);
        add_piece_ops(&s->ops, e, &s->cut_lists);
        add_piece_impls(&s->impls, e);
    }
}

bool profile_print_summary(FILE *f, const char *events, size_t runs) {
    summary s = {0};
    bool ok = for_each_event(events, add_to_summary, &s);
    if (ok && (s.providers.failed || s.ops.failed || s.copies.failed || s.impls.failed)) {
        fprintf(stderr, "tessera: out of memory summarising the profile\n");
        ok = false;
    } else if (ok) {
        double all = s.piece_us + s.copy_us;
        fprintf(f, "profile: %zu piece runs, %zu copies, %.3f ms recorded", s.n_pieces, s.n_copies, all / 1e3);
        if (runs) fprintf(f, " over %zu runs", runs);
        fputc('\n', f);
        if (s.n_control)
            fprintf(f,
                    "control flow: %zu If/Loop/Scan/SequenceMap runs, %.3f ms, their bodies' pieces and copies\n"
                    "  counted below by provider and op\n",
                    s.n_control, s.control_us / 1e3);
        print_table(f, "provider", "pieces", &s.providers, all, runs, NO_EXTRA);
        if (s.n_copies) print_table(f, "copies", "count", &s.copies, all, runs, BYTES_COLUMN);
        print_table(f, "op type", "nodes", &s.ops, all, runs, FUSED_COLUMN);
        if (s.impls.count) print_impls(f, &s.impls, runs);
        bool any_fused = false;
        for (size_t i = 0; i < s.ops.count; i++) any_fused = any_fused || s.ops.rows[i].fused > 0;
        if (any_fused)
            fprintf(f,
                    "(a multi-node piece's time is split evenly among its nodes; run with\n"
                    " every value observed for per-node times of unfused kernels)\n");
        if (s.cut_lists)
            fprintf(f,
                    "(%zu piece events list only their first ops: lists are cut\n"
                    " at %d bytes; their time is split among the ops listed)\n",
                    s.cut_lists, LIBRARY_OPS_CUT);
    }
    tally_free(&s.providers);
    tally_free(&s.ops);
    tally_free(&s.copies);
    tally_free(&s.impls);
    return ok;
}

typedef struct copy_count {
    const char *owner;
    profile_copies *out;
} copy_count;

static void add_copy(event *e, void *user) {
    copy_count *c = user;
    if (strcmp(e->cat, "piece") == 0 && strcmp(e->provider, c->owner) == 0) c->out->pieces++;
    if (strcmp(e->cat, "copy") != 0) return;
    if (strcmp(e->to, c->owner) == 0) c->out->to_owner++;
    else if (strcmp(e->from, c->owner) == 0) c->out->from_owner++;
    else c->out->other++;
    if (isfinite(e->bytes) && e->bytes > 0) c->out->bytes += e->bytes;
}

bool profile_count_copies(const char *events, const char *owner, profile_copies *out) {
    memset(out, 0, sizeof *out);
    copy_count c = {owner, out};
    return for_each_event(events, add_copy, &c);
}

bool profile_report_session(tsr_session *session, const char *path, FILE *summary, size_t runs) {
    char *events = NULL;
    tsr_status *st = tsr_session_profile_take(session, &events);
    if (st) {
        fprintf(stderr, "tessera: profile: %s\n", tsr_status_message(st));
        tsr_status_free(st);
        return false;
    }
    bool ok = true;
    if (path) ok = profile_write_trace(path, events);
    if (summary && !profile_print_summary(summary, events, runs)) ok = false;
    free(events);
    return ok;
}
