/* The process-wide core budget of oneDNN piece runs (odn_threads.c). */
#ifndef TESSERA_ODN_THREADS_H
#define TESSERA_ODN_THREADS_H

#include <stdbool.h>

/* Cores this process may use (affinity mask, else online CPUs). */
int odn_threads_cores(void);
/* Reserves min(want, free cores) threads, at least 1; returns the count. */
int odn_threads_reserve(int want);
/* Returns `n` reserved threads. */
void odn_threads_release(int n);
/* Threads reserved now (for tests and diagnostics). */
int odn_threads_in_use(void);

/* Contention from outside the process. Runs with more than one thread
 * whose calling thread spent much of their `wall_ms` off its core (its CPU
 * time `cpu_ms` short of it), over 20 ms windows, three in a row, cap
 * every later reservation at one thread: another process holds a core, and libgomp's threads would spin at
 * each barrier for a descheduled partner, many times slower than one
 * thread. The cap lifts after a number of calm one-thread runs, doubling
 * after each relapse, and only while the system has a core free. */
void odn_threads_observe(int threads, double wall_ms, double cpu_ms);
/* Whether the cap is on (for odn_run, which measures only then or with
 * more than one thread). */
bool odn_threads_capped(void);
/* For tests: `probe` answers how many threads are runnable instead of
 * /proc/loadavg (NULL restores it). */
void odn_threads_set_running_probe(int (*probe)(void));

#endif
