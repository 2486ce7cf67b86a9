/* The OpenCL provider's entry point, instance lifetime, devices and device
 * memory. Claims live in ocl_claim.c, pieces in ocl_piece.c. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "ocl_piece.h"

const tsr_host_api *ocl_host;

static void state_free(ocl_state *st) {
    if (!st) return;
    ocl_programs_release(st);
    free(st->compat);
    if (st->queue) clReleaseCommandQueue(st->queue);
    if (st->context) clReleaseContext(st->context);
    free(st->devices);
    free(st);
}

static tsr_status *open_device(ocl_state *st) {
    const ocl_device_desc *d = &st->devices[st->active];
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)d->platform, 0};
    cl_int err;
    st->context = clCreateContext(props, 1, &d->id, NULL, NULL, &err);
    if (!st->context) return ocl_cl_error(err, "clCreateContext");
    /* In order: a copy, then the kernels that read it, need no events. */
    st->queue = clCreateCommandQueue(st->context, d->id, st->profile ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (!st->queue) return ocl_cl_error(err, "clCreateCommandQueue");
    return NULL;
}

static tsr_status *ocl_create(const tsr_provider_config *cfg, void **out) {
    ocl_state *st = calloc(1, sizeof *st);
    if (!st) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    st->disk_cache = true;
    st->cpu_kernels = true;
    st->cur_op = SIZE_MAX;
    const char *device_spec = NULL;
    for (size_t i = 0; i < cfg->option_count; i++) {
        const char *k = cfg->option_keys[i], *v = cfg->option_values[i];
        if (strcmp(k, "device") == 0) {
            device_spec = v;
        } else if (strcmp(k, "cache") == 0 && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)) {
            st->disk_cache = v[0] == '1';
        } else if (strcmp(k, "profile") == 0 && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)) {
            st->profile = v[0] == '1';
        } else if (strcmp(k, "cpu_kernels") == 0 && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)) {
            st->cpu_kernels = v[0] == '1';
        } else {
            free(st);
            return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                             "opencl: unknown option '%s' (known: device=INDEX|NAME, cache=0|1, profile=0|1, "
                             "cpu_kernels=0|1)",
                             k);
        }
    }
    /* Not named, and only PoCL's CPU device to offer: the host would put
     * it after the reference provider, where it gets no node, so loading
     * PoCL would only cost the session time and memory. */
    if (TSR_HAS_MEMBER(cfg, tsr_provider_config, flags) && (cfg->flags & TSR_PROVIDER_UNNAMED) && !device_spec &&
        ocl_only_host_cpu_platforms()) {
        free(st);
        return ocl_error(TSR_ERR_NOT_SUPPORTED,
                         "opencl: not used: the only OpenCL platform installed is PoCL on the host CPU, which the "
                         "host providers outrun (name it, -p opencl, to use it)");
    }
    tsr_status *s = ocl_devices_enumerate(&st->devices, &st->n_devices);
    if (!s && device_spec) {
        s = st->n_devices
            ? ocl_device_select(st->devices, st->n_devices, device_spec, &st->active)
            : ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: option device=%s but no OpenCL device exists", device_spec);
    }
    if (!s && st->n_devices) {
        s = open_device(st);
        st->have_device = s == NULL;
    }
    if (s) {
        state_free(st);
        return s;
    }
    *out = st;
    return NULL;
}

static void ocl_destroy(void *state) {
    ocl_state *st = state;
    if (!st) return;
    /* Pending writes may read staging copies or constants: wait first. */
    ocl_transfers_finish(st);
    if (st->profile) {
        ocl_profile_collect(st);
        ocl_stats_log(st);
    }
    ocl_stats_free(st);
    free(st->events);
    free(st->event_ops);
    state_free(st);
}

/* The active device is listed first: the host allocates on device 0. */
static size_t device_order(const ocl_state *st, size_t index) {
    if (index == 0) return st->active;
    return index <= st->active ? index - 1 : index;
}

static size_t ocl_device_count(void *state) { return ((ocl_state *)state)->n_devices; }

static tsr_status *ocl_device_info(void *state, size_t index, tsr_device_info *info) {
    ocl_state *st = state;
    if (index >= st->n_devices) return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: no device %zu", index);
    const ocl_device_desc *d = &st->devices[device_order(st, index)];
    info->name = d->name;
    info->vendor = d->vendor;
    info->details = d->details;
    info->kind = d->kind;
    /* Only the device this session runs on holds tensors; the others are
     * listed so users can pick one with device=N. */
    info->memory_kind = TSR_MEMORY_DEVICE;
    info->memory_bytes = d->global_mem;
    return NULL;
}

static tsr_status *ocl_mem_alloc(void *state, int32_t device, size_t nbytes, void **handle) {
    ocl_state *st = state;
    (void)device;
    if (!st->have_device) return ocl_error(TSR_ERR_PROVIDER, "opencl: no device");
    cl_int err;
    /* OpenCL refuses empty buffers; an empty tensor still needs a handle. */
    cl_mem m = clCreateBuffer(st->context, CL_MEM_READ_WRITE, nbytes ? nbytes : 4, NULL, &err);
    if (!m) return ocl_cl_error(err, "clCreateBuffer");
    *handle = m;
    return NULL;
}

static void ocl_mem_free(void *state, int32_t device, void *handle) {
    (void)state;
    (void)device;
    if (handle) clReleaseMemObject((cl_mem)handle);
}

static tsr_status *ocl_copy_to_device(void *state, int32_t device, void *dst, const void *src, size_t nbytes) {
    ocl_state *st = state;
    (void)device;
    if (!nbytes) return NULL;
    double t0 = st->profile ? ocl_now() : 0;
    /* Non-blocking where `src` provably outlives the write (ocl_transfer.c). */
    tsr_status *s = ocl_upload(st, (cl_mem)dst, src, nbytes);
    if (st->profile) {
        st->to_device_s += ocl_now() - t0;
        st->to_device_bytes += nbytes;
    }
    return s;
}

static tsr_status *ocl_copy_to_host(void *state, int32_t device, void *dst, const void *src, size_t nbytes) {
    ocl_state *st = state;
    (void)device;
    if (!nbytes) return NULL;
    if (st->profile) ocl_profile_collect(st); /* the read waits for them anyway */
    double t0 = st->profile ? ocl_now() : 0;
    /* Blocking: the host reads `dst` as soon as this returns. */
    tsr_status *s = ocl_read(st, (cl_mem)src, 0, nbytes, dst);
    if (st->profile) {
        st->to_host_s += ocl_now() - t0;
        st->to_host_bytes += nbytes;
    }
    return s;
}

static const tsr_provider ocl_provider = {
    .struct_size = sizeof(tsr_provider),
    .name = "opencl",
    .vendor = "Tessera",
    .version = OCL_PROVIDER_VERSION,
    .create = ocl_create,
    .destroy = ocl_destroy,
    .device_count = ocl_device_count,
    .device_info = ocl_device_info,
    .claim = ocl_claim,
    .compile = ocl_piece_compile,
    .run = ocl_piece_run,
    .release = ocl_piece_release,
    .mem_alloc = ocl_mem_alloc,
    .mem_free = ocl_mem_free,
    .copy_to_device = ocl_copy_to_device,
    .copy_to_host = ocl_copy_to_host,
    .cache_compat = ocl_cache_compat,
    .piece_export = ocl_piece_export,
    .piece_import = ocl_piece_import,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    if (args->host_abi_max < 1 || args->host_abi_min > TSR_PROVIDER_ABI_VERSION)
        return args->host->status_new(TSR_ERR_ABI, "opencl provider implements ABI 1");
    ocl_host = args->host;
    /* Keep this plugin, and with it the ICD loader and driver, mapped until
     * the process exits: drivers such as PoCL keep worker threads that
     * outlive every clRelease*, and unmapping their code under them crashes. */
    if (args->plugin_path) dlopen(args->plugin_path, RTLD_NOW | RTLD_NODELETE | RTLD_NOLOAD);
    args->abi_version = 1;
    args->provider = &ocl_provider;
    return NULL;
}
