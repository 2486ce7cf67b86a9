/* The contention cap of odn_threads.c: multi-thread runs whose calling
 * thread spent more than 35% of a 20 ms window off its core, three windows
 * in a row, cap later reservations at one thread; windows at or under that
 * share (which restart the count), or not yet full, do not. One-thread
 * runs under the cap count calm runs and lift it no sooner than the calm
 * count asks (8, doubled per relapse), and then only when the system shows
 * a core free (a probe replaces /proc/loadavg here, so the test does not
 * depend on the machine's load). Values are the rules' own thresholds,
 * worked by hand. */
#include <stdio.h>

#include "../odn_threads.h"

static int failed;

/* Runnable threads as /proc/loadavg would say: every core, or just us. */
static int all_busy(void) { return odn_threads_cores(); }
static int one_running(void) { return 1; }

static void expect(bool ok, const char *what) {
    if (!ok) {
        printf("FAIL: %s\n", what);
        failed = 1;
    }
}

int main(void) {
    int cores = odn_threads_cores();
    if (cores < 2) {
        printf("SKIP: one core\n");
        return 77;
    }
    /* 19 ms with 10 ms off core: the window is not full, no verdict */
    odn_threads_observe(2, 19.0, 9.0);
    expect(!odn_threads_capped(), "a window short of 20 ms capped");
    /* that window completed: 20 ms, 12.5 on core, 37.5% off: one high */
    odn_threads_observe(2, 1.0, 3.5);
    /* 30% off: at or under the share, the count starts again */
    odn_threads_observe(2, 20.0, 14.0);
    /* two high windows (40% off), then a calm one, then two high again */
    odn_threads_observe(2, 20.0, 12.0);
    odn_threads_observe(2, 20.0, 12.0);
    odn_threads_observe(2, 20.0, 20.0);
    odn_threads_observe(2, 20.0, 12.0);
    odn_threads_observe(2, 20.0, 12.0);
    expect(!odn_threads_capped(), "capped without three high windows in a row");
    int got = odn_threads_reserve(2);
    expect(got == 2, "uncapped reservation of 2 on a free machine is not 2");
    odn_threads_release(got);
    /* the third in a row */
    odn_threads_observe(2, 20.0, 12.0);
    expect(odn_threads_capped(), "three windows 40% off core did not cap");
    got = odn_threads_reserve(2);
    expect(got == 1, "capped reservation is not 1");
    odn_threads_release(got);
    /* calm one-thread runs: the first relapse asks for 16; with every core
     * busy the 16th leaves the cap on and the count starts again */
    odn_threads_set_running_probe(all_busy);
    for (int i = 0; i < 15; i++) odn_threads_observe(1, 5.0, 5.0);
    expect(odn_threads_capped(), "the cap lifted before 16 calm runs");
    odn_threads_observe(1, 5.0, 5.0);
    expect(odn_threads_capped(), "the cap lifted with every core busy");
    /* a core free: 15 more calm runs are not enough, the 16th lifts it */
    odn_threads_set_running_probe(one_running);
    for (int i = 0; i < 15; i++) odn_threads_observe(1, 5.0, 5.0);
    expect(odn_threads_capped(), "the cap lifted 15 runs after the last check");
    odn_threads_observe(1, 5.0, 5.0);
    expect(!odn_threads_capped(), "the cap stayed on with a core free after 16 calm runs");
    got = odn_threads_reserve(2);
    expect(got == 2, "reservation after the cap lifted is not 2");
    odn_threads_release(got);
    odn_threads_set_running_probe(NULL);
    printf("%s\n", failed ? "threads_cap: failed" : "threads_cap: all rules hold");
    return failed;
}
