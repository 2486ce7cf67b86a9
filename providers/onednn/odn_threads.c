/* A process-wide budget of CPU cores shared by every oneDNN piece run, so
 * two sessions running at once do not each start one OpenMP thread per core
 * (oversubscribed, libgomp's spinning threads wait for descheduled ones and
 * both slow down many times over; see docs/onednn.md).
 *
 * A run reserves min(wanted, free cores), at least 1, and returns them when
 * it ends. The count is an atomic: no lock is held while oneDNN runs.
 *
 * Other processes take cores too: on two cores shared with one busy
 * process, a ViT-Tiny run at 2 threads took 311-441 ms against 50 ms at
 * one (ONNX Runtime: 150 ms), libgomp's threads spinning at each barrier
 * for a descheduled partner. Runs watch for that (odn_threads_observe) and
 * fall back to one thread while it lasts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
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

/* Contention cap (odn_threads_observe): 1 while on, else 0. Window sums
 * of multi-thread runs since the last verdict (wall and the calling
 * thread's CPU time, in microseconds); calm one-thread runs under the cap
 * and how many the cap waits for. */
static atomic_int capped;
static atomic_long window_us, window_cpu_us;
static atomic_int high_windows; /* windows in a row over OFF_CORE_SHARE */
static atomic_int calm_runs;
static atomic_int calm_needed = 8;

/* Judged over at least this much multi-thread run time, so one piece's
 * unlucky tick decides nothing. */
#define WINDOW_US 20000
/* The calling thread off its core for more than this share of the run,
 * in HIGH_WINDOWS windows in a row. It computes or spins at a barrier
 * whenever it has a core, so time off one means another thread took it or
 * libgomp put it to sleep waiting for a slower partner. Measured on 2
 * cores (ViT-Tiny, DistilBERT, QDQ ResNet-18, GPT-2, SD-VAE at 2 threads):
 * beside one busy process, run after run of windows at 0.45-0.80 (0.5 in
 * phases without autogroup scheduling); quiet, or beside nice'd builds,
 * 0-0.1 with lone windows up to 0.32 and the first run's up to 0.67. */
#define OFF_CORE_SHARE 0.35
#define HIGH_WINDOWS 3
#define CALM_MAX 1024

/* Runnable threads on the system now (/proc/loadavg's fourth field),
 * this one included; -1 when unknown. */
static int running_now(void) {
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1;
    double a, b, c;
    int running = -1, total;
    if (fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &running, &total) != 5) running = -1;
    fclose(f);
    return running;
}

static int (*running_probe)(void) = running_now;

void odn_threads_set_running_probe(int (*probe)(void)) { running_probe = probe ? probe : running_now; }

void odn_threads_observe(int threads, double wall_ms, double cpu_ms) {
    if (threads > 1) {
        long w = (long)(wall_ms * 1000.0), c = (long)(cpu_ms * 1000.0);
        long us = atomic_fetch_add(&window_us, w) + w;
        long cpu = atomic_fetch_add(&window_cpu_us, c) + c;
        if (us < WINDOW_US) return;
        atomic_store(&window_us, 0);
        atomic_store(&window_cpu_us, 0);
        if ((double)(us - cpu) <= OFF_CORE_SHARE * (double)us) {
            atomic_store(&high_windows, 0);
            return;
        }
        if (atomic_fetch_add(&high_windows, 1) + 1 >= HIGH_WINDOWS) {
            atomic_store(&high_windows, 0);
            atomic_store(&capped, 1);
            atomic_store(&calm_runs, 0);
            int need = atomic_load(&calm_needed);
            atomic_store(&calm_needed, need * 2 < CALM_MAX ? need * 2 : CALM_MAX);
        }
        return;
    }
    if (!atomic_load(&capped)) return;
    if (atomic_fetch_add(&calm_runs, 1) + 1 < atomic_load(&calm_needed)) return;
    atomic_store(&calm_runs, 0);
    /* lifted only with a core to spare besides this thread */
    int running = running_probe();
    if (running >= 0 && running < odn_threads_cores()) atomic_store(&capped, 0);
}

bool odn_threads_capped(void) { return atomic_load(&capped) != 0; }

int odn_threads_reserve(int want) {
    int cores = odn_threads_cores();
    if (want < 1) want = 1;
    if (atomic_load(&capped)) want = 1;
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
