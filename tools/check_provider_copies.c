/*
 * check-provider, check 5: copies between host and device memory. For a
 * plugin whose devices have memory of their own, the host moves every
 * tensor that crosses into or out of its pieces through the plugin's
 * copy_to_device / copy_to_host: a claimed case with host inputs and host
 * outputs exercises both, and its outputs are right only when both are.
 * The session's profile (tsr_session_options_set_profiling) records each
 * copy with the memory it came from and went to (docs/compare.md), which
 * says that copies did happen. Host-memory plugins have no copies: a SKIP.
 */
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"
#include "profile_report.h"

/* Claimed cases tried in turn until one records copies both ways. */
#define CASES_TRIED 8

static bool has_device_memory(const cp_run *r) {
    for (size_t k = 0; k < r->plugin_info.device_count; k++)
        if (r->plugin_info.devices[k].memory_kind == TSR_MEMORY_DEVICE) return true;
    return false;
}

/* One case with profiling: TC_PASS with the copies counted, or why not. */
static tc_kind profiled_run(const cp_run *r, const tc_case *c, profile_copies *copies, char *why, size_t size) {
    tsr_session_options *o = NULL;
    tsr_status *st = cp_plugin_options(r, &o);
    if (!st) st = tsr_session_options_set_profiling(o, 1);
    if (st) {
        cli_format(why, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        tsr_session_options_free(o);
        return TC_FAIL;
    }
    tsr_session *s = cp_open_case(o, c->dir, why, size);
    tsr_session_options_free(o);
    char *set = s ? cp_first_data_set(c->dir) : NULL, *events = NULL;
    tc_data d;
    tc_kind k = TC_FAIL;
    if (set && (k = tc_load_data_set(s, set, &d, why, size)) == TC_PASS) {
        k = tc_run_data(s, &d, r->tol, why, size);
        tc_data_free(&d);
    }
    if (k == TC_PASS && (st = tsr_session_profile_take(s, &events))) {
        cli_format(why, size, "profile: %s", tsr_status_message(st));
        tsr_status_free(st);
        k = TC_FAIL;
    }
    if (k == TC_PASS && !profile_count_copies(events, r->plugin_info.name, copies)) {
        snprintf(why, size, "the profile is not the library's JSON array");
        k = TC_FAIL;
    }
    free(events);
    free(set);
    tsr_session_free(s);
    return k;
}

char cp_job_device_copies(const cp_run *r, char *msg, size_t size) {
    const cp_op_tally *t = &r->ops_tally;
    if (!has_device_memory(r)) {
        snprintf(msg, size, "every device of %s uses host memory: no copies to check", r->plugin_info.name);
        return TC_SKIP;
    }
    if (!t->passed_count) {
        snprintf(msg, size, "no claimed case passed check 2 to run");
        return TC_SKIP;
    }
    profile_copies best = {0};
    const tc_case *best_case = NULL;
    for (size_t i = 0; i < t->passed_count && i < CASES_TRIED; i++) {
        const tc_case *c = &r->cases.items[t->passed_cases[i].index];
        profile_copies got;
        char why[TC_REASON_MAX / 2];
        if (profiled_run(r, c, &got, why, sizeof why) != TC_PASS) {
            /* It passed in check 2: profiling must not change the answer. */
            cli_format(msg, size, "%s with profiling: %s", c->name, why);
            return TC_FAIL;
        }
        if (!best_case || got.to_owner + got.from_owner > best.to_owner + best.from_owner) {
            best = got;
            best_case = c;
        }
        if (got.to_owner && got.from_owner) break;
    }
    if (!best.to_owner && !best.from_owner) {
        cli_format(msg, size,
                   "%s reports device memory, but %s ran %zu piece%s with no copy into "
                   "or out of its memory",
                   r->plugin_info.name, best_case->name, best.pieces, best.pieces == 1 ? "" : "s");
        return TC_FAIL;
    }
    cli_format(msg, size, "%s: %zu cop%s host->%s and %zu %s->host (%.0f bytes), outputs correct", best_case->name,
               best.to_owner, best.to_owner == 1 ? "y" : "ies", r->plugin_info.name, best.from_owner,
               r->plugin_info.name, best.bytes);
    return TC_PASS;
}
