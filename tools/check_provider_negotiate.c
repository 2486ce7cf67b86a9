/*
 * check-provider: negotiation. The plugin's entry is called directly, with
 * host ranges a real host never offers today but future and past hosts
 * will: a plugin that answers only the range of the host it was tested
 * with breaks the day the host's range moves (provider.h: the plugin picks
 * the highest version both speak, or refuses saying why).
 *
 * The entry runs once per process (provider.h, "Threads"), so every attempt
 * runs in a child of its own, which dlopens the plugin afresh; the parent
 * never loads it. The child hands back one line per attempt, the parent
 * judges the lines together (some rules compare two answers).
 *
 * The host table offered is a stand-in (the real one is libtessera's own):
 * statuses, log and heap, all an entry has a use for. Graph, claim and run
 * calls are valid only inside claim, compile and run, so they are NULL.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"
#include "tessera/provider.h"

#define V TSR_PROVIDER_ABI_VERSION
/* The range the host speaks: core/plugin.c's HOST_ABI_MIN..HOST_ABI_MAX. */
#define HOST_MIN 1u
#define HOST_MAX ((uint32_t)V)
/* Bytes a newer host's args would append; the plugin must leave them. */
#define TAIL 64
#define TAIL_BYTE 0xA5
/* core/plugin.c's MAX_TABLE_BYTES: no header version writes a larger table. */
#define MAX_TABLE 4096u

typedef enum want { ACCEPT, REFUSE, EITHER } want;

typedef struct attempt {
    const char *what;
    uint32_t min, max;
    int size; /* 0: sizeof the args; >0: that much more; <0: without the out members */
    want want;
} attempt;

static const attempt attempts[] = {
    {"this host", HOST_MIN, HOST_MAX, 0, ACCEPT},
    {"a newer host", 1, V + 5, 0, ACCEPT},
    {"a host too new", V + 1, V + 5, 0, REFUSE},
    {"a host too old", 0, 0, 0, REFUSE},
    {"a newer host's larger args", HOST_MIN, HOST_MAX, TAIL, ACCEPT},
    /* ABI 1 already had every member, so no host writes this; the plugin
     * may refuse it or not, but must not crash. */
    {"args without their out members", HOST_MIN, HOST_MAX, -1, EITHER},
};
#define ATTEMPTS (sizeof attempts / sizeof attempts[0])

/* --- the stand-in host, in the child -------------------------------------- */
typedef struct neg_status {
    int32_t code;
    char *message;
    struct neg_status *next;
} neg_status;

static neg_status *made; /* every status status_new made and nobody freed */

static tsr_status *h_status_new(int32_t code, const char *message) {
    neg_status *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->code = code;
    s->message = strdup(message ? message : "");
    s->next = made;
    made = s;
    return (tsr_status *)(void *)s;
}

/* The status, when the stand-in made it; a plugin's own pointer is not one. */
static neg_status *ours(const tsr_status *status) {
    for (neg_status *s = made; s; s = s->next)
        if ((const void *)s == (const void *)status) return s;
    return NULL;
}

static void h_status_free(tsr_status *status) {
    for (neg_status **at = &made; *at; at = &(*at)->next)
        if ((void *)*at == (void *)status) {
            neg_status *s = *at;
            *at = s->next;
            free(s->message);
            free(s);
            return;
        }
}

static const char *h_status_message(const tsr_status *status) {
    neg_status *s = ours(status);
    return s && s->message ? s->message : "";
}

static int32_t h_status_code(const tsr_status *status) {
    neg_status *s = ours(status);
    return s ? s->code : TSR_OK;
}

static void h_log(int32_t level, const char *provider_name, const char *message) {
    (void)level, (void)provider_name, (void)message;
}

static void *h_alloc(size_t size) { return malloc(size); }
static void h_free(void *ptr) { free(ptr); }

/* What core/plugin.c requires of a table, so a table it would refuse on one
 * host range is caught on the others too. NULL when sane. */
static const char *table_problem(const tsr_provider *vt) {
    if (!vt) return "no function table (args->provider NULL)";
    if (vt->struct_size < offsetof(tsr_provider, release) + sizeof vt->release)
        return "a function table whose struct_size does not reach `release`";
    if (vt->struct_size > MAX_TABLE) return "a function table of more than 4096 bytes";
    if (!vt->name || !*vt->name) return "a function table with no name";
    if (!vt->create || !vt->destroy || !vt->device_count || !vt->device_info || !vt->claim || !vt->compile ||
        !vt->run || !vt->release)
        return "a function table missing a required function";
    return NULL;
}

/* One attempt, in its child. Answers "A<TAB>version<TAB>tail intact
 * (0/1)<TAB>table problem" or "R<TAB>code<TAB>made by status_new
 * (0/1)<TAB>message"; kind 'E' for a plugin that cannot be called. */
static char attempt_job(const cp_run *r, size_t index, char *msg, size_t size) {
    const attempt *a = &attempts[index];
    char *real = realpath(r->plugin, NULL);
    void *dl = dlopen(real ? real : r->plugin, RTLD_NOW | RTLD_LOCAL);
    free(real);
    if (!dl) {
        const char *e = dlerror();
        snprintf(msg, size, "cannot dlopen: %s", e ? e : "?");
        return 'E';
    }
    tsr_provider_entry_fn entry;
    *(void **)&entry = dlsym(dl, TSR_PROVIDER_ENTRY);
    if (!entry) {
        snprintf(msg, size, "no symbol %s", TSR_PROVIDER_ENTRY);
        return 'E';
    }
    static tsr_host_api host;
    host = (tsr_host_api){.struct_size = sizeof host,
                          .abi_version = a->max,
                          .status_new = h_status_new,
                          .status_free = h_status_free,
                          .status_message = h_status_message,
                          .status_code = h_status_code,
                          .log = h_log,
                          .alloc = h_alloc,
                          .free = h_free};
    /* The args in a buffer with room for a newer host's tail. */
    static _Alignas(tsr_provider_entry_args) unsigned char buf[sizeof(tsr_provider_entry_args) + TAIL];
    memset(buf, TAIL_BYTE, sizeof buf);
    tsr_provider_entry_args *args = (tsr_provider_entry_args *)(void *)buf;
    memset(args, 0, sizeof *args);
    args->struct_size = a->size > 0 ? (uint32_t)(sizeof *args + (size_t)a->size)
        : a->size < 0               ? (uint32_t)offsetof(tsr_provider_entry_args, abi_version)
                                    : (uint32_t)sizeof *args;
    args->host_abi_min = a->min;
    args->host_abi_max = a->max;
    args->host = &host;
    args->plugin_path = r->plugin;
    tsr_status *st = entry(args);
    if (st) {
        neg_status *s = ours(st);
        if (s && s->message) fp_one_line(s->message); /* the fields are tab-separated */
        snprintf(msg, size, "R\t%" PRId32 "\t%d\t%s", s ? s->code : -1, s != NULL, s && s->message ? s->message : "");
        return 'R';
    }
    bool tail = true;
    for (size_t i = sizeof *args; i < sizeof buf; i++) tail = tail && buf[i] == TAIL_BYTE;
    const char *bad = table_problem(args->provider);
    snprintf(msg, size, "A\t%" PRIu32 "\t%d\t%s", args->abi_version, tail, bad ? bad : "");
    return 'A';
}

/* --- judging, in the parent ------------------------------------------------ */
typedef struct answer {
    char kind; /* 'A' accepted, 'R' refused, 'E' not callable, FP_FAILED died */
    uint32_t version;
    bool tail_intact, status_ours;
    int32_t code;
    char *text; /* the refusal's message, the table's problem, or why it died */
} answer;

typedef struct neg_state {
    const cp_run *run;
    answer got[ATTEMPTS];
} neg_state;

static char job(size_t index, void *user, char *msg, size_t size) {
    return attempt_job(((neg_state *)user)->run, index, msg, size);
}

static void attempt_done(size_t index, const fp_result *res, void *user) {
    answer *a = &((neg_state *)user)->got[index];
    const char *t = res->text ? res->text : "";
    a->kind = res->died ? FP_FAILED : res->kind;
    if (a->kind == 'A' || a->kind == 'R') {
        const char *f1 = strchr(t, '\t'), *f2 = f1 ? strchr(f1 + 1, '\t') : NULL,
                   *f3 = f2 ? strchr(f2 + 1, '\t') : NULL;
        long x = f1 ? strtol(f1 + 1, NULL, 10) : -1, y = f2 ? strtol(f2 + 1, NULL, 10) : 0;
        if (a->kind == 'A') a->version = (uint32_t)x;
        else a->code = (int32_t)x;
        a->tail_intact = a->status_ours = y != 0;
        t = f3 ? f3 + 1 : "";
    }
    a->text = strdup(t);
}

/* "a newer host (1..6)", with the struct_size where it is not the usual. */
static void name_attempt(size_t i, char *buf, size_t size) {
    const attempt *a = &attempts[i];
    size_t usual = sizeof(tsr_provider_entry_args);
    size_t ss = a->size > 0 ? usual + (size_t)a->size
        : a->size < 0       ? offsetof(tsr_provider_entry_args, abi_version)
                            : usual;
    if (ss != usual)
        snprintf(buf, size, "%s (%" PRIu32 "..%" PRIu32 ", struct_size %zu, not %zu)", a->what, a->min, a->max, ss,
                 usual);
    else snprintf(buf, size, "%s (%" PRIu32 "..%" PRIu32 ")", a->what, a->min, a->max);
}

/* Whether a plugin newer than this kit answered: it chose a version above
 * V for the newer host, so it speaks V+1.. and must take a host that
 * offers only those. */
static bool speaks_newer(const answer *got) { return got[1].kind == 'A' && got[1].version > V; }

/* Judges answer i, with the others for the rules that compare two; writes
 * what happened (when right) or what is wrong into `line`. */
static bool judge(const answer *got, size_t i, char *line, size_t size) {
    const attempt *a = &attempts[i];
    const answer *g = &got[i];
    char who[160];
    name_attempt(i, who, sizeof who);
    if (g->kind != 'A' && g->kind != 'R') {
        cli_format(line, size, "%s: %s", who, *g->text ? g->text : "no answer");
        return false;
    }
    if (g->kind == 'R') {
        bool must_accept = a->want == ACCEPT || (i == 2 && speaks_newer(got));
        if (!g->status_ours) cli_format(line, size, "%s: refused with a status not made by host->status_new", who);
        else if (g->code == TSR_OK || !*g->text)
            cli_format(line, size, "%s: refused with %s", who, g->code == TSR_OK ? "code TSR_OK" : "an empty message");
        else if (must_accept)
            cli_format(line, size, "%s: refused (code %" PRId32 ": %s), but it must accept%s", who, g->code, g->text,
                       a->want == ACCEPT ? "" : ": it chose an ABI above this kit's for a newer host");
        else {
            cli_format(line, size, "%s: refused (code %" PRId32 ": %s)", who, g->code, g->text);
            return true;
        }
        return false;
    }
    if (g->version < a->min || g->version > a->max)
        cli_format(line, size, "%s: chose ABI %" PRIu32 ", outside the range offered%s", who, g->version,
                   a->want == REFUSE ? " (it must refuse, with a message)" : "");
    else if (*g->text) cli_format(line, size, "%s: ABI %" PRIu32 " with %s", who, g->version, g->text);
    else if (i == 1 && got[0].kind == 'A' && g->version < got[0].version)
        cli_format(line, size,
                   "%s: chose ABI %" PRIu32 ", older than the %" PRIu32
                   " it chose for this host (the highest both speak is wanted)",
                   who, g->version, got[0].version);
    else if (i == 2 && !speaks_newer(got))
        cli_format(line, size,
                   "%s: chose ABI %" PRIu32 ", yet it implements none above %d (it chose %" PRIu32 " for a newer host)",
                   who, g->version, V, got[1].version);
    else if (a->size > 0 && !g->tail_intact) cli_format(line, size, "%s: wrote past the members it knows", who);
    else if (a->size > 0 && got[0].kind == 'A' && g->version != got[0].version)
        cli_format(line, size, "%s: chose ABI %" PRIu32 ", not the %" PRIu32 " it chose for the same range", who,
                   g->version, got[0].version);
    else {
        cli_format(line, size, "%s: ABI %" PRIu32, who, g->version);
        return true;
    }
    return false;
}

void cp_check_negotiation(cp_run *r, cp_check *out) {
    out->name = "negotiation";
    if (!r->fork) {
        out->status = TC_SKIP;
        out->detail = strdup("the entry runs once per process (provider.h), and --no-fork keeps "
                             "every check in this one");
        return;
    }
    neg_state ns = {.run = r};
    fp_pool pool = {.count = ATTEMPTS,
                    .jobs = r->jobs,
                    .timeout = r->timeout,
                    .fork = true,
                    .job = job,
                    .done = attempt_done,
                    .user = &ns};
    fp_run(&pool);
    char detail[TC_REASON_MAX] = "", line[TC_REASON_MAX];
    size_t failed = 0, refused = 0;
    for (size_t i = 0; i < ATTEMPTS; i++) {
        bool ok = judge(ns.got, i, line, sizeof line);
        cp_push_text(&r->negotiation.lines, &r->negotiation.count, line);
        refused += ns.got[i].kind == 'R';
        if (!ok) {
            size_t n = strlen(detail);
            cli_format(detail + n, sizeof detail - n, "%s%s", failed ? "; " : "", line);
            failed++;
        }
        free(ns.got[i].text);
    }
    out->status = failed ? TC_FAIL : TC_PASS;
    if (!failed)
        cli_format(detail, sizeof detail,
                   "%zu host ranges and args sizes answered as provider.h asks: ABI %" PRIu32 " for this host, %" PRIu32
                   " for a newer one, %zu refused with a message",
                   ATTEMPTS, ns.got[0].version, ns.got[1].version, refused);
    out->detail = strdup(detail);
}
