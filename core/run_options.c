/* tsr_run_options: a tag, a terminate flag another thread may set while
 * runs use it, and a deadline (tessera.h, "run options"). */
#include <stdlib.h>
#include <string.h>

#include "run_options.h"
#include "status.h"

tsr_status *tsr_run_options_create(tsr_run_options **out) {
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is NULL");
    tsr_run_options *o = calloc(1, sizeof *o);
    if (!o) return TSR_NO_MEMORY();
    atomic_init(&o->terminate, 0);
    *out = o;
    return NULL;
}

void tsr_run_options_free(tsr_run_options *o) {
    if (!o) return;
    free(o->tag);
    free(o);
}

tsr_status *tsr_run_options_set_tag(tsr_run_options *o, const char *tag) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "run options are required");
    if (tag && strlen(tag) > 256) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a run tag is at most 256 bytes");
    char *copy = tag && *tag ? strdup(tag) : NULL;
    if (tag && *tag && !copy) return TSR_NO_MEMORY();
    free(o->tag);
    o->tag = copy;
    return NULL;
}

tsr_status *tsr_run_options_set_terminate(tsr_run_options *o, int32_t terminate) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "run options are required");
    atomic_store(&o->terminate, terminate != 0);
    return NULL;
}

tsr_status *tsr_run_options_set_timeout_ms(tsr_run_options *o, int64_t ms) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "run options are required");
    if (ms < 0)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "a run timeout is 0 (none) or a number of milliseconds, not %lld",
                         (long long)ms);
    o->timeout_ms = ms;
    return NULL;
}

void run_options_apply(const tsr_run_options *o, run_budget *b) {
    if (!o) return;
    b->terminate = &o->terminate;
    b->timeout_ms = o->timeout_ms;
    b->deadline = o->timeout_ms ? run_budget_clock() + (double)o->timeout_ms / 1000.0 : 0;
}
