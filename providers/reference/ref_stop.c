/* Stopping a long kernel early when the host says the run is cancelled
 * (tsr_host_api.run_should_stop, absent from older hosts). */
#include "ref.h"

bool ref_should_stop(const ref_ctx *c) {
    const tsr_host_api *h = c->host;
    return c->run && TSR_HAS_MEMBER(h, tsr_host_api, run_should_stop) && h->run_should_stop &&
        h->run_should_stop(c->run);
}

tsr_status *ref_stopped(ref_ctx *c) { return ref_err(c, TSR_ERR_CANCELLED, "stopped: the run was cancelled"); }

bool ref_work(ref_ctx *c, int64_t units) {
    c->work += units > 0 ? units : 1;
    if (c->work < REF_WORK_PER_CHECK) return false;
    c->work = 0;
    return ref_should_stop(c);
}
