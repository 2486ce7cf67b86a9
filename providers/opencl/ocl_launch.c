/* Enqueueing kernels and the small shape buffers they read; profiling. */
#include <stdlib.h>
#include <time.h>

#include "ocl.h"

double ocl_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Keeps the launch's event for ocl_profile_collect; a full list is drained. */
static void keep_event(ocl_state *st, cl_event ev) {
    if (st->n_events == st->cap_events) {
        size_t cap = st->cap_events ? st->cap_events * 2 : 256;
        cl_event *g = realloc(st->events, sizeof *g * cap);
        if (g) st->events = g;
        size_t *o = g ? realloc(st->event_ops, sizeof *o * cap) : NULL;
        if (o) st->event_ops = o;
        if (!g || !o) {
            clReleaseEvent(ev);
            return;
        }
        st->cap_events = cap;
    }
    st->event_ops[st->n_events] = st->cur_op;
    st->events[st->n_events++] = ev;
}

void ocl_profile_collect(ocl_state *st) {
    if (!st->profile) return;
    clFinish(st->queue);
    for (size_t i = 0; i < st->n_events; i++) {
        cl_ulong t0 = 0, t1 = 0;
        if (clGetEventProfilingInfo(st->events[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(st->events[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS &&
            t1 > t0) {
            st->kernel_s += (double)(t1 - t0) * 1e-9;
            if (st->event_ops[i] < st->n_op_stats) st->op_stats[st->event_ops[i]].kernel_s += (double)(t1 - t0) * 1e-9;
        }
        clReleaseEvent(st->events[i]);
    }
    st->n_events = 0;
}

tsr_status *ocl_launch(ocl_state *st, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                       const char *what) {
    for (cl_uint d = 0; d < dims; d++)
        if (global[d] == 0) return NULL;
    cl_event ev = NULL;
    cl_int err = clEnqueueNDRangeKernel(st->queue, k, dims, NULL, global, local, 0, NULL, st->profile ? &ev : NULL);
    if (err != CL_SUCCESS) return ocl_cl_error(err, what);
    st->kernels++;
    st->queue_busy = true;
    if (ev) keep_event(st, ev);
    return NULL;
}

tsr_status *ocl_launch_1d(ocl_state *st, cl_kernel k, size_t n, const char *what) {
    /* Round up to a multiple of 64; kernels check their bound. */
    size_t local = 64, global = (n + local - 1) / local * local;
    return ocl_launch(st, k, 1, &global, &local, what);
}

tsr_status *ocl_meta_buffer(ocl_state *st, const int32_t *data, size_t count, cl_mem *out) {
    cl_int err;
    int32_t dummy = 0;
    *out = clCreateBuffer(st->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (count ? count : 1) * sizeof(int32_t),
                          count ? (void *)data : &dummy, &err);
    return *out ? NULL : ocl_cl_error(err, "clCreateBuffer(meta)");
}
