/* The process-wide core budget of oneDNN piece runs (odn_threads.c). */
#ifndef TESSERA_ODN_THREADS_H
#define TESSERA_ODN_THREADS_H

/* Cores this process may use (affinity mask, else online CPUs). */
int odn_threads_cores(void);
/* Reserves min(want, free cores) threads, at least 1; returns the count. */
int odn_threads_reserve(int want);
/* Returns `n` reserved threads. */
void odn_threads_release(int n);
/* Threads reserved now (for tests and diagnostics). */
int odn_threads_in_use(void);

#endif
