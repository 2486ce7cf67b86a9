/* Counters of what each op type costs on the device (kernels, device-side
 * copies, views) and the profile=1 report at session end. Counting is a few
 * additions per step, so it is always on; only the report needs profile=1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

size_t ocl_stats_begin(ocl_state *st, const char *op_type) {
    size_t slot = SIZE_MAX;
    for (size_t i = 0; i < st->n_op_stats && slot == SIZE_MAX; i++)
        if (strncmp(st->op_stats[i].op_type, op_type, sizeof st->op_stats[i].op_type - 1) == 0) slot = i;
    if (slot == SIZE_MAX) {
        ocl_op_stats *g = realloc(st->op_stats, sizeof *g * (st->n_op_stats + 1));
        if (g) { /* counters are best effort */
            st->op_stats = g;
            slot = st->n_op_stats++;
            memset(&g[slot], 0, sizeof g[slot]);
            snprintf(g[slot].op_type, sizeof g[slot].op_type, "%s", op_type);
        }
    }
    st->cur_op = slot;
    return slot;
}

void ocl_stats_end(ocl_state *st, size_t slot, uint64_t kernels, uint64_t copies, uint64_t views) {
    st->cur_op = SIZE_MAX;
    if (slot >= st->n_op_stats) return;
    ocl_op_stats *e = &st->op_stats[slot];
    e->steps++;
    e->kernels += kernels;
    e->copies += copies;
    e->views += views;
}

void ocl_stats_log(ocl_state *st) {
    if (!st->profile) return;
    char line[512];
    /* This first line's format is parsed by tools/bench_vs_ort.sh. */
    snprintf(line, sizeof line,
             "profile: %llu piece runs; kernels %.3f ms; host->device %.3f ms (%.1f MiB); "
             "device->host %.3f ms (%.1f MiB)",
             (unsigned long long)st->runs, st->kernel_s * 1e3, st->to_device_s * 1e3,
             (double)st->to_device_bytes / 1048576.0, st->to_host_s * 1e3, (double)st->to_host_bytes / 1048576.0);
    /* warnings, so they show at the default log level */
    ocl_host->log(TSR_LOG_WARNING, "opencl", line);
    snprintf(line, sizeof line,
             "profile: uploads: %llu from constants and %llu staged without waiting, %llu blocking "
             "on an idle queue",
             (unsigned long long)st->uploads_const, (unsigned long long)st->uploads_staged,
             (unsigned long long)st->uploads_blocking);
    ocl_host->log(TSR_LOG_WARNING, "opencl", line);
    /* where the programs came from: proof that an imported session ran no
     * compiler for its pieces (docs/opencl.md, "Caching compiled pieces") */
    snprintf(line, sizeof line,
             "profile: programs: %llu built from source while compiling pieces, %llu at their first "
             "run; %llu made from imported pieces' binaries, %llu from the program cache's",
             (unsigned long long)st->built_compile, (unsigned long long)st->built_run,
             (unsigned long long)st->from_blob, (unsigned long long)st->from_disk);
    ocl_host->log(TSR_LOG_WARNING, "opencl", line);
    snprintf(line, sizeof line, "profile: %llu kernel launches, %llu device-side copies, %llu views",
             (unsigned long long)st->kernels, (unsigned long long)st->copies, (unsigned long long)st->views);
    ocl_host->log(TSR_LOG_WARNING, "opencl", line);
    for (size_t i = 0; i < st->n_op_stats; i++) {
        const ocl_op_stats *e = &st->op_stats[i];
        snprintf(line, sizeof line,
                 "profile: steps led by %s: %llu runs, %llu kernels, %llu copies, %llu views; "
                 "kernels %.3f ms",
                 e->op_type, (unsigned long long)e->steps, (unsigned long long)e->kernels,
                 (unsigned long long)e->copies, (unsigned long long)e->views, e->kernel_s * 1e3);
        ocl_host->log(TSR_LOG_WARNING, "opencl", line);
    }
}

void ocl_stats_free(ocl_state *st) {
    free(st->op_stats);
    st->op_stats = NULL;
    st->n_op_stats = 0;
}
