/* Copies between host and device, and when they may leave the host thread
 * running ahead of the device.
 *
 * All work goes to one in-order queue, so a write followed by the kernels
 * that read it needs no events. A non-blocking write only needs its source
 * to stay untouched until the device has read it; the ABI lends the source
 * of copy_to_device for the call only, so a write is left running only when
 * the source provably outlives it:
 *   - a constant some compiled piece reads (value_constant data, which lives
 *     until that piece is released; release waits for the queue first);
 *   - a staging copy this file owns, freed once the write's event completes.
 * Everything else blocks. Reads block because the host uses the result next;
 * after a blocking read on an in-order queue every earlier command is done,
 * which is where staging memory is reclaimed. */
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

static int range_cmp(const void *a, const void *b) {
    const ocl_const_range *x = a, *y = b;
    return (x->begin > y->begin) - (x->begin < y->begin);
}

/* Sorts the ranges by start and notes the furthest end reached so far, so
 * an upload finds whether a range holds its source by binary search: a
 * scan of every constant per upload was quadratic in a model's constants.
 * Built after compiles and releases change the ranges, not per upload. */
static bool consts_index(ocl_state *st) {
    if (st->consts_reach) return true;
    st->consts_reach = malloc(sizeof *st->consts_reach * st->n_consts);
    if (!st->consts_reach) return false;
    qsort(st->consts, st->n_consts, sizeof *st->consts, range_cmp);
    const char *reach = st->consts[0].end;
    for (size_t i = 0; i < st->n_consts; i++) {
        if (st->consts[i].end > reach) reach = st->consts[i].end;
        st->consts_reach[i] = reach;
    }
    return true;
}

static void consts_stale(ocl_state *st) {
    free(st->consts_reach);
    st->consts_reach = NULL;
}

static bool is_const(ocl_state *st, const void *src, size_t nbytes) {
    const char *b = src, *e = b + nbytes;
    if (!st->n_consts) return false;
    if (!consts_index(st)) { /* out of memory: the scan still answers */
        for (size_t i = 0; i < st->n_consts; i++)
            if (b >= st->consts[i].begin && e <= st->consts[i].end) return true;
        return false;
    }
    /* lo = how many ranges start at or before b; one of them must reach e */
    size_t lo = 0, hi = st->n_consts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->consts[mid].begin <= b) lo = mid + 1;
        else hi = mid;
    }
    return lo && e <= st->consts_reach[lo - 1];
}

static void staging_free_at(ocl_state *st, size_t i) {
    clReleaseEvent(st->staging[i].done);
    free(st->staging[i].data);
    st->staging[i] = st->staging[--st->n_staging];
}

/* Frees staging copies whose writes have finished (or failed). */
static void staging_reap(ocl_state *st, bool all_done) {
    for (size_t i = st->n_staging; i-- > 0;) {
        cl_int status = CL_COMPLETE;
        if (!all_done)
            clGetEventInfo(st->staging[i].done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        if (status == CL_COMPLETE || status < 0) staging_free_at(st, i);
    }
}

/* The queue has drained (a blocking call or clFinish returned). */
static void queue_idle(ocl_state *st) {
    st->queue_busy = false;
    staging_reap(st, true);
}

static tsr_status *upload_staged(ocl_state *st, cl_mem dst, const void *src, size_t nbytes) {
    if (st->n_staging == st->cap_staging) {
        size_t cap = st->cap_staging ? st->cap_staging * 2 : 16;
        ocl_staging *g = realloc(st->staging, sizeof *g * cap);
        if (!g) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (staging list)");
        st->staging = g;
        st->cap_staging = cap;
    }
    void *copy = malloc(nbytes);
    if (!copy) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (staging %zu bytes)", nbytes);
    memcpy(copy, src, nbytes);
    cl_event ev = NULL;
    cl_int err = clEnqueueWriteBuffer(st->queue, dst, CL_FALSE, 0, nbytes, copy, 0, NULL, &ev);
    if (err != CL_SUCCESS) {
        free(copy);
        return ocl_cl_error(err, "clEnqueueWriteBuffer(staged)");
    }
    st->staging[st->n_staging++] = (ocl_staging){copy, ev};
    st->uploads_staged++;
    return NULL;
}

tsr_status *ocl_upload(ocl_state *st, cl_mem dst, const void *src, size_t nbytes) {
    if (!nbytes) return NULL;
    if (st->n_staging) staging_reap(st, false);
    cl_int err;
    if (is_const(st, src, nbytes)) {
        err = clEnqueueWriteBuffer(st->queue, dst, CL_FALSE, 0, nbytes, src, 0, NULL, NULL);
        if (err != CL_SUCCESS) return ocl_cl_error(err, "clEnqueueWriteBuffer(constant)");
        st->uploads_const++;
        st->queue_busy = true;
        return NULL;
    }
    if (st->queue_busy) {
        /* Kernels are queued: blocking would wait for all of them. */
        tsr_status *s = upload_staged(st, dst, src, nbytes);
        if (s) return s;
        st->queue_busy = true;
        return NULL;
    }
    /* An idle queue: a blocking write waits only for itself. */
    err = clEnqueueWriteBuffer(st->queue, dst, CL_TRUE, 0, nbytes, src, 0, NULL, NULL);
    if (err != CL_SUCCESS) return ocl_cl_error(err, "clEnqueueWriteBuffer");
    st->uploads_blocking++;
    queue_idle(st);
    return NULL;
}

tsr_status *ocl_read(ocl_state *st, cl_mem src, size_t offset, size_t nbytes, void *dst) {
    if (!nbytes) return NULL;
    cl_int err = clEnqueueReadBuffer(st->queue, src, CL_TRUE, offset, nbytes, dst, 0, NULL, NULL);
    if (err != CL_SUCCESS) return ocl_cl_error(err, "clEnqueueReadBuffer");
    queue_idle(st);
    return NULL;
}

tsr_status *ocl_device_copy(ocl_state *st, cl_mem src, cl_mem dst, size_t nbytes) {
    if (!nbytes) return NULL;
    cl_int err = clEnqueueCopyBuffer(st->queue, src, dst, 0, 0, nbytes, 0, NULL, NULL);
    if (err != CL_SUCCESS) return ocl_cl_error(err, "clEnqueueCopyBuffer");
    st->copies++;
    st->queue_busy = true;
    return NULL;
}

tsr_status *ocl_consts_add(ocl_state *st, const void *owner, const void *data, size_t nbytes) {
    if (!data || !nbytes) return NULL;
    if (st->n_consts == st->cap_consts) {
        size_t cap = st->cap_consts ? st->cap_consts * 2 : 64;
        ocl_const_range *g = realloc(st->consts, sizeof *g * cap);
        if (!g) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (constant list)");
        st->consts = g;
        st->cap_consts = cap;
    }
    st->consts[st->n_consts++] = (ocl_const_range){data, (const char *)data + nbytes, owner};
    consts_stale(st);
    return NULL;
}

void ocl_consts_drop(ocl_state *st, const void *owner) {
    bool had = false;
    for (size_t i = st->n_consts; i-- > 0;)
        if (st->consts[i].owner == owner) {
            st->consts[i] = st->consts[--st->n_consts];
            had = true;
        }
    if (had) consts_stale(st);
    if (had && st->queue_busy) {
        clFinish(st->queue);
        queue_idle(st);
    }
}

void ocl_transfers_finish(ocl_state *st) {
    if (st->queue) clFinish(st->queue);
    queue_idle(st);
    free(st->staging);
    st->staging = NULL;
    st->cap_staging = 0;
    consts_stale(st);
    free(st->consts);
    st->consts = NULL;
    st->n_consts = st->cap_consts = 0;
}
