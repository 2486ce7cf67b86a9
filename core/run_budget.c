/* The "working_bytes" limit: see run_budget.h. */
#include "run_budget.h"

#include <time.h>

#include "status.h"

void run_budget_init(run_budget *b, uint64_t limit) {
    b->limit = limit;
    atomic_init(&b->live, 0);
    atomic_init(&b->peak, 0);
    b->terminate = NULL;
    b->deadline = 0;
    b->timeout_ms = 0;
}

double run_budget_clock(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

bool run_budget_stopped(const run_budget *b) {
    if (!b) return false;
    if (b->terminate && atomic_load_explicit(b->terminate, memory_order_relaxed)) return true;
    return b->deadline > 0 && run_budget_clock() > b->deadline;
}

tsr_status *run_budget_stop_error(const run_budget *b, const char *what) {
    if (b && b->terminate && atomic_load_explicit(b->terminate, memory_order_relaxed))
        return tsr_error(TSR_ERR_CANCELLED, "run stopped before %s: terminate was asked", what);
    return tsr_error(TSR_ERR_CANCELLED, "run stopped before %s: its deadline (%lld ms) passed", what,
                     (long long)(b ? b->timeout_ms : 0));
}

tsr_status *run_budget_reserve(run_budget *b, uint64_t bytes, const char *what) {
    if (!b) return NULL;
    uint64_t before = atomic_fetch_add(&b->live, bytes);
    uint64_t now = before + bytes;
    if (b->limit && (now < before || now > b->limit)) {
        atomic_fetch_sub(&b->live, bytes);
        return tsr_error(TSR_ERR_NO_MEMORY,
                         "%s of %llu bytes, with %llu bytes live, would make %llu bytes, over the "
                         "working_bytes limit (%llu)",
                         what, (unsigned long long)bytes, (unsigned long long)before, (unsigned long long)now,
                         (unsigned long long)b->limit);
    }
    uint64_t peak = atomic_load(&b->peak);
    while (now > peak && !atomic_compare_exchange_weak(&b->peak, &peak, now)) {}
    return NULL;
}

void run_budget_unreserve(run_budget *b, uint64_t bytes) {
    if (b) atomic_fetch_sub(&b->live, bytes);
}

void run_budget_assign(rt_tensor *t, run_budget *b, uint64_t bytes) {
    if (!b) return;
    t->budget = b;
    t->charged += bytes;
}

tsr_status *run_budget_charge(rt_tensor *t, run_budget *b, uint64_t bytes, const char *what) {
    TSR_TRY(run_budget_reserve(b, bytes, what));
    run_budget_assign(t, b, bytes);
    return NULL;
}

static uint64_t value_bytes(const tsr_value *v) {
    if (!v) return 0;
    if (v->kind == TSR_VALUE_TENSOR) return v->tensor ? v->tensor->nbytes : 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < v->n; i++) sum += value_bytes(v->items[i]);
    return sum;
}

uint64_t run_budget_slot_bytes(const rt_tensor *t) { return t->value ? value_bytes(t->value) : t->view.nbytes; }

tsr_status *run_budget_copy(rt_tensor *dst, const rt_tensor *src, provider_inst *dst_prov, int32_t dst_device,
                            run_budget *b, const char *what) {
    uint64_t bytes = run_budget_slot_bytes(src);
    TSR_TRY(run_budget_reserve(b, bytes, what));
    tsr_status *st = rt_tensor_copy_to(dst, src, dst_prov, dst_device);
    if (st) {
        run_budget_unreserve(b, bytes);
        return st;
    }
    run_budget_assign(dst, b, bytes);
    return NULL;
}
