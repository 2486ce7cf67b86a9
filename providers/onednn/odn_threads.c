/* A process-wide budget of CPU cores shared by every oneDNN piece run, so
 * two sessions running at once do not each start one OpenMP thread per core
 * (oversubscribed, libgomp's spinning threads wait for descheduled ones and
 * both slow down many times over; see docs/onednn.md).
 *
 * A run reserves min(wanted, free cores), at least 1, and returns them when
 * it ends. The count is an atomic: no lock is held while oneDNN runs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#include "odn_threads.h"

static atomic_int in_use;
static atomic_int cores_cache; /* 0 until first asked */

int odn_threads_cores(void) {
    int c = atomic_load(&cores_cache);
    if (c > 0) return c;
    /* the cores this process may run on (taskset, cgroup cpusets), else all online */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) c = CPU_COUNT(&set);
    if (c <= 0) c = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (c <= 0) c = 1;
    atomic_store(&cores_cache, c);
    return c;
}

int odn_threads_reserve(int want) {
    int cores = odn_threads_cores();
    if (want < 1) want = 1;
    int used = atomic_load(&in_use);
    for (;;) {
        int free_cores = cores - used;
        int take = want < free_cores ? want : free_cores;
        if (take < 1) take = 1; /* never stall: at worst one thread over */
        if (atomic_compare_exchange_weak(&in_use, &used, used + take)) return take;
    }
}

void odn_threads_release(int n) {
    if (n > 0) atomic_fetch_sub(&in_use, n);
}

int odn_threads_in_use(void) { return atomic_load(&in_use); }
