/*
 * check-provider, check 3: error paths.
 *  - unknown_option: provider.h says unknown option keys must be refused
 *    with TSR_ERR_INVALID_ARGUMENT naming the key; a plugin that ignores
 *    them silently turns every user's typo into a default.
 *  - wrong_shape: a run with an input of the wrong rank must fail with a
 *    status (not crash, not succeed), and the session must still give the
 *    right answer on the next, correct run.
 */
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"

#define BAD_KEY "no_such_option_xyz"

/* A case to load: the first the plugin passed in check 2, else any. */
static const tc_case *some_case(const cp_run *r) {
    if (r->ops_tally.passed_count) return &r->cases.items[r->ops_tally.passed_cases[0].index];
    return r->cases.count ? &r->cases.items[0] : NULL;
}

char cp_job_unknown_option(const cp_run *r, char *msg, size_t size) {
    const tc_case *c = some_case(r);
    if (!c) {
        snprintf(msg, size, "no test case to load");
        return TC_SKIP;
    }
    tsr_session_options *o = NULL;
    tsr_status *st = cp_plugin_options(r, &o);
    if (!st) st = tsr_session_options_set_provider_option(o, r->plugin_info.name, BAD_KEY, "1");
    if (st) {
        cli_format(msg, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        tsr_session_options_free(o);
        return TC_FAIL;
    }
    char *model = tc_join(c->dir, "model.onnx");
    tsr_session *s = NULL;
    st = model ? tsr_session_create(o, model, &s) : NULL;
    tsr_session_options_free(o);
    free(model);
    char kind = TC_FAIL;
    if (!st) {
        cli_format(msg, size,
                   "a session on %s was created with option %s=1: unknown keys must be "
                   "refused (TSR_ERR_INVALID_ARGUMENT)",
                   c->name, BAD_KEY);
    } else if (tsr_status_code(st) != TSR_ERR_INVALID_ARGUMENT) {
        cli_format(msg, size, "refused with code %d, not TSR_ERR_INVALID_ARGUMENT (%d): %s", (int)tsr_status_code(st),
                   (int)TSR_ERR_INVALID_ARGUMENT, tsr_status_message(st));
    } else if (!strstr(tsr_status_message(st), BAD_KEY)) {
        cli_format(msg, size, "refused, but the message does not name the key '%s': %s", BAD_KEY,
                   tsr_status_message(st));
    } else {
        kind = TC_PASS;
        cli_format(msg, size, "refused with TSR_ERR_INVALID_ARGUMENT: %s", tsr_status_message(st));
    }
    tsr_status_free(st);
    tsr_session_free(s);
    return kind;
}

/* An input of data set `d` that has a declared rank: the one to get wrong. */
static bool pick_input(tsr_session *s, const tc_data *d, size_t *k, tsr_tensor *t) {
    for (size_t i = 0; i < d->nin; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_input_info(s, i, &info);
        bool ok = !st && info.rank >= 0 && info.rank < 16 && tsr_value_get_kind(d->inputs[i]) == TSR_VALUE_TENSOR;
        tsr_status_free(st);
        if (ok && !(st = tsr_value_tensor(d->inputs[i], t)) && t->rank == info.rank) {
            *k = i;
            return true;
        }
        tsr_status_free(st);
    }
    return false;
}

/* Runs `s` with input k replaced by a tensor of one more dimension (2 in
 * front of the right shape). */
static char bad_run(const cp_run *r, tsr_session *s, tc_data *d, const char *case_name, char *msg, size_t size) {
    size_t k;
    tsr_tensor t;
    if (!pick_input(s, d, &k, &t)) return 0;
    int64_t dims[17] = {2};
    for (int32_t i = 0; i < t.rank; i++) dims[i + 1] = t.dims[i];
    tsr_value *bad = NULL, *good = d->inputs[k];
    tsr_status *st = tsr_value_create_tensor(t.elem_type, t.rank + 1, dims, &bad);
    if (st) {
        cli_format(msg, size, "cannot make the wrong input: %s", tsr_status_message(st));
        tsr_status_free(st);
        return TC_FAIL;
    }
    size_t nout = tsr_session_output_count(s);
    tsr_value **outs = calloc(nout + 1, sizeof *outs);
    if (!outs) {
        tsr_value_free(bad);
        snprintf(msg, size, "out of memory");
        return TC_FAIL;
    }
    d->inputs[k] = bad;
    st = tsr_session_run_values(s, d->nin, d->names, (const tsr_value *const *)d->inputs, nout, NULL, outs);
    d->inputs[k] = good;
    tsr_value_free(bad);
    for (size_t i = 0; i < nout; i++) tsr_value_free(outs[i]);
    free(outs);
    if (!st) {
        cli_format(msg, size, "%s: a run with input '%s' of rank %d (the model's: %d) succeeded", case_name,
                   d->names[k], (int)t.rank + 1, (int)t.rank);
        return TC_FAIL;
    }
    char refused[TC_REASON_MAX / 2];
    cli_format(refused, sizeof refused, "%s", tsr_status_message(st));
    tsr_status_free(st);
    /* The error must leave the session whole. */
    char why[TC_REASON_MAX / 2];
    if (tc_run_data(s, d, r->tol, why, sizeof why) != TC_PASS) {
        cli_format(msg, size, "%s: after a refused run, the next correct one went wrong: %s", case_name, why);
        return TC_FAIL;
    }
    cli_format(msg, size, "%s: input '%s' of rank %d refused (%s); the next run was correct", case_name, d->names[k],
               (int)t.rank + 1, refused);
    return TC_PASS;
}

char cp_job_wrong_shape(const cp_run *r, char *msg, size_t size) {
    const cp_op_tally *t = &r->ops_tally;
    if (!t->passed_count) {
        snprintf(msg, size, "no claimed case passed check 2, so there is no model to run");
        return TC_SKIP;
    }
    for (size_t i = 0; i < t->passed_count; i++) {
        const tc_case *c = &r->cases.items[t->passed_cases[i].index];
        char reason[TC_REASON_MAX];
        tsr_session_options *o = NULL;
        tsr_status *st = cp_plugin_options(r, &o);
        if (st) {
            cli_format(msg, size, "session options: %s", tsr_status_message(st));
            tsr_status_free(st);
            return TC_FAIL;
        }
        tsr_session *s = cp_open_case(o, c->dir, reason, sizeof reason);
        tsr_session_options_free(o);
        char *set = s ? cp_first_data_set(c->dir) : NULL;
        tc_data d;
        char kind = 0;
        if (set && tc_load_data_set(s, set, &d, reason, sizeof reason) == TC_PASS) {
            kind = bad_run(r, s, &d, c->name, msg, size);
            tc_data_free(&d);
        }
        free(set);
        tsr_session_free(s);
        if (kind) return kind;
    }
    snprintf(msg, size, "no case the plugin passed has an input of known rank");
    return TC_SKIP;
}
