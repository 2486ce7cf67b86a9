/* Internal interface of the OpenCL provider: devices, the session state,
 * program building and the per-op launchers. */
#ifndef OCL_H
#define OCL_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tessera/provider.h>

#define OCL_MAX_RANK 8

extern const tsr_host_api *ocl_host;

/* One device found on one platform; the strings are what device_info shows. */
typedef struct ocl_device_desc {
    cl_platform_id platform;
    cl_device_id id;
    char name[256];
    char vendor[256];
    char details[768];
    char driver[128];   /* driver version, part of the program cache key */
    int32_t kind;       /* tsr_device_kind */
    uint64_t global_mem;
} ocl_device_desc;

/* A program built for the active device, remembered by source and options. */
typedef struct ocl_program_entry {
    uint64_t key;
    cl_program program;
} ocl_program_entry;

/* The provider instance of one session. */
typedef struct ocl_state {
    ocl_device_desc *devices;
    size_t n_devices;
    size_t active;      /* index into devices of the one we run on */
    bool have_device;   /* false when no platform/device exists */
    cl_context context;
    cl_command_queue queue;
    ocl_program_entry *programs;
    size_t n_programs;
    bool disk_cache;    /* option cache=0 turns the on-disk cache off */
    /* option profile=1: kernel time from events, copy time from the clock;
     * the totals go to the log when the session ends */
    bool profile;
    cl_event *events;
    size_t n_events, cap_events;
    double kernel_s, to_device_s, to_host_s;
    uint64_t to_device_bytes, to_host_bytes, runs;
} ocl_state;

/* --- statuses ----------------------------------------------------------- */
tsr_status *ocl_error(int32_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
tsr_status *ocl_cl_error(cl_int err, const char *what);
const char *ocl_cl_error_name(cl_int err);

/* --- devices (ocl_device.c) -------------------------------------------- */
tsr_status *ocl_devices_enumerate(ocl_device_desc **out, size_t *count);
/* Picks a device from an option value: an index or part of a name. */
tsr_status *ocl_device_select(const ocl_device_desc *devs, size_t n, const char *spec,
                              size_t *index);

/* --- programs (ocl_program.c) ------------------------------------------ */
/* `prefix`, the named embedded sources and `extra` (either may be NULL)
 * concatenated, built with `options` for the active device, cached in memory
 * and on disk. The program belongs to the state. */
tsr_status *ocl_program_get(ocl_state *st, const char *prefix, const char *const *source_names,
                            size_t n_names, const char *extra, const char *options,
                            cl_program *out);
tsr_status *ocl_kernel_from(cl_program prog, const char *kernel_name, cl_kernel *out);
tsr_status *ocl_kernel_create(ocl_state *st, const char *source_name, const char *options,
                              const char *kernel_name, cl_kernel *out);
void ocl_programs_release(ocl_state *st);

/* --- launching ---------------------------------------------------------- */
tsr_status *ocl_launch(ocl_state *st, cl_kernel k, cl_uint dims, const size_t *global,
                       const size_t *local, const char *what);
/* A 1-D launch over n items with the device's preferred group size. */
tsr_status *ocl_launch_1d(ocl_state *st, cl_kernel k, size_t n, const char *what);
/* With profile=1: waits for the queue and adds the finished kernels' times. */
void ocl_profile_collect(ocl_state *st);
double ocl_now(void);

/* A small read-only int buffer of shape data for one launch. */
tsr_status *ocl_meta_buffer(ocl_state *st, const int32_t *data, size_t count, cl_mem *out);

#endif
