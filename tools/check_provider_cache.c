/* Check 8 of `tessera check-provider`: the compiled-piece cache. A plugin
 * with piece_export/piece_import (provider.h) must give the same answers
 * from an imported piece as from a compiled one: a case it passed in check
 * 2 runs in a session with a fresh cache directory (compiling and storing
 * its pieces), then in a second session, which must import every piece
 * (the host logs "imported from" for each) and pass again. A plugin that
 * stores nothing does not cache: SKIP. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_provider.h"

typedef struct heard {
    size_t imported, refused;
    char first_refusal[512];
} heard;

/* The session's log lines, to count imports and refusals. */
static void listen(void *user, int32_t level, const char *source, const char *message) {
    (void)level;
    (void)source;
    heard *h = user;
    if (strstr(message, ": imported from '")) h->imported++;
    if (strstr(message, "compiled-piece cache:")) {
        if (!h->refused++) snprintf(h->first_refusal, sizeof h->first_refusal, "%s", message);
    }
}

/* Files the plugin stored in dir ("NAME-<key>.tsrpiece"); removes every
 * file when `clean`. */
static size_t stored(const char *dir, const char *plugin, bool clean) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0, plen = strlen(plugin);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (strncmp(e->d_name, plugin, plen) == 0 && e->d_name[plen] == '-' && strstr(e->d_name, ".tsrpiece")) n++;
        if (clean) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
    return n;
}

/* One session on the case with the cache in dir; TC_PASS when the outputs
 * match the case's. */
static tc_kind cached_run(const cp_run *r, const tc_case *c, const char *dir, heard *h, char *why, size_t size) {
    tsr_session_options *o = NULL;
    tsr_status *st = cp_plugin_options(r, &o);
    if (!st) st = tsr_session_options_set_cache_dir(o, dir);
    if (!st) st = tsr_session_options_set_log_level(o, TSR_LOG_INFO);
    if (!st) st = tsr_session_options_set_logger(o, listen, h);
    if (st) {
        cli_format(why, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        tsr_session_options_free(o);
        return TC_FAIL;
    }
    tsr_session *s = cp_open_case(o, c->dir, why, size);
    tsr_session_options_free(o);
    char *set = s ? cp_first_data_set(c->dir) : NULL;
    tc_data d;
    tc_kind k = TC_FAIL;
    if (set && (k = tc_load_data_set(s, set, &d, why, size)) == TC_PASS) {
        k = tc_run_data(s, &d, r->tol, why, size);
        tc_data_free(&d);
    }
    free(set);
    tsr_session_free(s);
    return k;
}

char cp_job_compiled_cache(const cp_run *r, char *msg, size_t size) {
    const cp_op_tally *t = &r->ops_tally;
    if (!t->passed_count) {
        snprintf(msg, size, "no claimed case passed check 2 to run");
        return TC_SKIP;
    }
    char dir[] = "/tmp/tessera-check-cache-XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(msg, size, "cannot make a temporary cache directory");
        return TC_FAIL;
    }
    const tc_case *c = &r->cases.items[t->passed_cases[0].index];
    const char *name = r->plugin_info.name;
    char why[TC_REASON_MAX / 2];
    heard first = {0}, second = {0};
    char kind = TC_PASS;
    size_t files = 0;
    if (cached_run(r, c, dir, &first, why, sizeof why) != TC_PASS) {
        cli_format(msg, size, "%s with a cache directory: %s", c->name, why);
        kind = TC_FAIL;
    } else if (!(files = stored(dir, name, false))) {
        cli_format(msg, size, "%s stored no compiled piece (no piece_export): nothing to check", name);
        kind = TC_SKIP;
    } else if (cached_run(r, c, dir, &second, why, sizeof why) != TC_PASS) {
        cli_format(msg, size, "%s from imported pieces: %s", c->name, why);
        kind = TC_FAIL;
    } else if (second.refused || second.imported < files) {
        cli_format(msg, size, "%s: the second session imported %zu of %zu stored piece%s%s%s", c->name, second.imported,
                   files, files == 1 ? "" : "s", second.refused ? "; " : "",
                   second.refused ? second.first_refusal : "");
        kind = TC_FAIL;
    } else {
        cli_format(msg, size, "%s: %zu piece%s stored, then imported by a second session, outputs correct", c->name,
                   files, files == 1 ? "" : "s");
    }
    stored(dir, name, true);
    rmdir(dir);
    return kind;
}
