/* The "working_bytes" limit while a session runs: the bytes of the tensors
 * a run holds live at once (kernel outputs and scratch, copies between
 * memories, results of If/Loop/Scan/SequenceMap bodies), host or device.
 * Each charge is carried by the slot that owns the memory and given back
 * when the slot is released (rt_tensor_release), so a value's bytes count
 * from its allocation to its last reader. One budget per run. */
#ifndef TESSERA_CORE_RUN_BUDGET_H
#define TESSERA_CORE_RUN_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "rt_tensor.h"

typedef struct run_budget {
    uint64_t limit;        /* 0: none */
    _Atomic uint64_t live; /* charged now */
    _Atomic uint64_t peak; /* the most charged at once */
    /* Stopping early (tsr_run_options): the application's terminate flag
     * (NULL: none) and the deadline on run_budget_clock (0: none). */
    const _Atomic int32_t *terminate;
    double deadline;
    int64_t timeout_ms; /* for the message */
} run_budget;

/* A budget of `limit` bytes (0: none) with nothing charged. */
void run_budget_init(run_budget *b, uint64_t limit);
/* Reserves `bytes` before they are allocated: TSR_ERR_NO_MEMORY, naming the
 * limit, `what` asks, the bytes and those already live, when they would
 * pass the limit. b may be NULL (nothing is counted). */
tsr_status *run_budget_reserve(run_budget *b, uint64_t bytes, const char *what);
/* Gives back a reservation nobody carries (the allocation failed). */
void run_budget_unreserve(run_budget *b, uint64_t bytes);
/* Hands `bytes` reserved from b to slot t, which carries them (with any it
 * carries already) until it is released. */
void run_budget_assign(rt_tensor *t, run_budget *b, uint64_t bytes);
/* Reserve and assign at once, for memory that already exists (a value a
 * kernel built); on failure t is left as it was. */
tsr_status *run_budget_charge(rt_tensor *t, run_budget *b, uint64_t bytes, const char *what);
/* The bytes a slot owns: its tensor's, or every tensor's in its value. */
uint64_t run_budget_slot_bytes(const rt_tensor *t);
/* Seconds on a monotonic clock. */
double run_budget_clock(void);
/* Whether the run should stop (terminate asked, or past its deadline); b
 * may be NULL (never). */
bool run_budget_stopped(const run_budget *b);
/* The TSR_ERR_CANCELLED status for a run that stops before `what`. */
tsr_status *run_budget_stop_error(const run_budget *b, const char *what);
/* rt_tensor_copy_to with the copy charged to b first. */
tsr_status *run_budget_copy(rt_tensor *dst, const rt_tensor *src, provider_inst *dst_prov, int32_t dst_device,
                            run_budget *b, const char *what);

#endif
