/* Internal interface of the OpenCL provider: devices, the session state,
 * program building and the per-op launchers. */
#ifndef OCL_H
#define OCL_H

#include <CL/cl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tessera/provider.h>
#include <tessera/provider_util.h>

#define OCL_MAX_RANK 8
/* The plugin's version: the host keys cached pieces by it, and it is part
 * of the compatibility string. */
#define OCL_PROVIDER_VERSION "0.1.0"
/* A program binary larger than this is not one of ours: refuse to read it. */
#define OCL_MAX_BINARY ((size_t)256 << 20)

extern const tsr_host_api *ocl_host;

/* One device found on one platform; the strings are what device_info shows. */
typedef struct ocl_device_desc {
    cl_platform_id platform;
    cl_device_id id;
    char name[256];
    char vendor[256];
    char details[768];
    char driver[128]; /* driver version, part of the program cache key */
    int32_t kind;     /* tsr_device_kind */
    uint64_t global_mem;
} ocl_device_desc;

/* A program built for the active device, remembered by source and options. */
typedef struct ocl_program_entry {
    uint64_t key;
    cl_program program;
    /* its binary, fetched once when the first piece using it is exported
     * (PoCL compiles every kernel to produce it: not worth doing twice) */
    unsigned char *binary;
    size_t binary_size;
} ocl_program_entry;

/* The programs one piece asked for while compiling, as indices into
 * ocl_state.programs in first-use order, each once: what its exported
 * blob carries (ocl_piece_cache.c). */
typedef struct ocl_program_set {
    size_t *index;
    size_t n, cap;
} ocl_program_set;

struct ocl_blob; /* ocl_blob.h */

/* A kernel of a program, made once and shared by every step that runs it
 * (ocl_kernel_from). */
typedef struct ocl_kernel_entry {
    cl_program program;
    char name[64];
    cl_kernel kernel; /* the cache's reference */
} ocl_kernel_entry;

/* Host memory that outlives every write from it: a constant some compiled
 * piece reads (value_constant data lives until that piece is released). */
typedef struct ocl_const_range {
    const char *begin, *end;
    const void *owner; /* the piece that registered it */
} ocl_const_range;

/* A provider-owned copy of host data that a non-blocking write still reads;
 * freed once `done` completes. */
typedef struct ocl_staging {
    void *data;
    cl_event done;
} ocl_staging;

/* Work done for one op type (the first node of a step), counted always and
 * logged with profile=1: proof of which ops launch kernels and which are
 * views. */
typedef struct ocl_op_stats {
    char op_type[32];
    uint64_t steps, kernels, copies, views;
    double kernel_s; /* from events, with profile=1 */
} ocl_op_stats;

/* The provider instance of one session. */
typedef struct ocl_state {
    ocl_device_desc *devices;
    size_t n_devices;
    size_t active;    /* index into devices of the one we run on */
    bool have_device; /* false when no platform/device exists */
    cl_context context;
    cl_command_queue queue;
    ocl_program_entry *programs;
    size_t n_programs;
    ocl_kernel_entry *shared_kernels;
    size_t n_shared, cap_shared;
    bool disk_cache; /* option cache=0 turns the on-disk cache off */
    /* The host's compiled-piece cache (ocl_piece_cache.c). host_cache: the
     * host asked for cache_compat, so it stores this session's pieces and
     * programs built while compiling a piece go into its blobs instead of
     * the on-disk program cache. */
    bool host_cache;
    char *compat;                     /* the compatibility string, made on first ask */
    ocl_program_set *recording;       /* during compile: the piece's program list */
    const struct ocl_blob *importing; /* during piece_import: programs come from it */
    /* programs this session: built from source while compiling pieces and
     * at run time, made from the on-disk cache's and from imported blobs'
     * binaries */
    uint64_t built_compile, built_run, from_disk, from_blob;
    bool cpu_kernels; /* option cpu_kernels=0: the GPU-shaped GEMM and conv kernels on CPUs too */
    /* option profile=1: kernel time from events, copy time from the clock;
     * the totals go to the log when the session ends */
    bool profile;
    cl_event *events;
    size_t *event_ops; /* the op_stats slot each event is counted under */
    size_t n_events, cap_events;
    double kernel_s, to_device_s, to_host_s;
    uint64_t to_device_bytes, to_host_bytes, runs;
    /* counters: kernels launched, device-side buffer copies, views made */
    uint64_t kernels, copies, views;
    ocl_op_stats *op_stats;
    size_t n_op_stats;
    size_t cur_op; /* slot of the step running now, SIZE_MAX outside steps */
    /* uploads (ocl_transfer.c): how each host->device copy was done */
    uint64_t uploads_const, uploads_staged, uploads_blocking;
    ocl_const_range *consts;
    size_t n_consts, cap_consts;
    /* consts sorted by begin: [i] is the furthest end among consts[0..i];
     * NULL when stale (ocl_transfer.c) */
    const char **consts_reach;
    ocl_staging *staging;
    size_t n_staging, cap_staging;
    /* true while commands may be queued that no blocking call waited for */
    bool queue_busy;
} ocl_state;

/* --- statuses ----------------------------------------------------------- */
tsr_status *ocl_error(int32_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
tsr_status *ocl_cl_error(cl_int err, const char *what);
const char *ocl_cl_error_name(cl_int err);

/* --- devices (ocl_device.c) -------------------------------------------- */
tsr_status *ocl_devices_enumerate(ocl_device_desc **out, size_t *count);
/* Whether the only platforms installed are PoCL on the host CPU, read from
 * the ICD vendor files without loading any driver (ocl_icd_probe.c). */
bool ocl_only_host_cpu_platforms(void);
/* Picks a device from an option value: an index or part of a name. */
tsr_status *ocl_device_select(const ocl_device_desc *devs, size_t n, const char *spec, size_t *index);

/* --- programs (ocl_program.c) ------------------------------------------ */
/* FNV-1a, for program keys and the other hashes of the provider. */
uint64_t ocl_fnv(uint64_t h, const void *data, size_t n);
uint64_t ocl_fnv_str(uint64_t h, const char *s); /* the NUL too; NULL reads as "" */
#define OCL_FNV_SEED 1469598103934665603ull
/* `prefix`, the named embedded sources and `extra` (either may be NULL)
 * concatenated, built with `options` for the active device, cached in memory
 * and on disk (ocl_program.c says where). The program belongs to the state.
 * While a piece compiles it is listed in st->recording; while a piece is
 * imported it is made from st->importing's binary, or the call fails. */
tsr_status *ocl_program_get(ocl_state *st, const char *prefix, const char *const *source_names, size_t n_names,
                            const char *extra, const char *options, cl_program *out);
/* A reference (the caller releases it) to the session's one kernel object
 * named `kernel_name` of `prog`: steps running the same kernel share it,
 * so each launch sets all of its arguments (OpenCL takes their values at
 * enqueue, so a launch queued before is unaffected). */
tsr_status *ocl_kernel_from(ocl_state *st, cl_program prog, const char *kernel_name, cl_kernel *out);
/* A program for the active device made from `binary` and built with
 * `options`; an error names what the driver said. */
tsr_status *ocl_program_from_binary(ocl_state *st, const unsigned char *binary, size_t size, const char *options,
                                    cl_program *out);
tsr_status *ocl_kernel_create(ocl_state *st, const char *source_name, const char *options, const char *kernel_name,
                              cl_kernel *out);
void ocl_programs_release(ocl_state *st);
/* The binary of st->programs[index] (owned by the entry), fetched from the
 * driver on first use. */
tsr_status *ocl_program_binary(ocl_state *st, size_t index, const unsigned char **binary, size_t *size);

/* --- the on-disk program cache (ocl_disk_cache.c) ---------------------- */
/* The cache's file for `key` in *path; false when there is no cache
 * directory ($XDG_CACHE_HOME or $HOME unset, or mkdir failed). */
bool ocl_disk_cache_path(uint64_t key, char *path, size_t size);
/* The program stored under `key`, built for the active device; NULL when
 * absent, stale or damaged. */
cl_program ocl_disk_cache_load(ocl_state *st, const char *path, uint64_t key, const char *options);
/* Stores `binary` under `key`; failures only cost the next session a build. */
void ocl_disk_cache_store(const char *path, uint64_t key, const unsigned char *binary, size_t size);

/* --- launching ---------------------------------------------------------- */
tsr_status *ocl_launch(ocl_state *st, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                       const char *what);
/* A 1-D launch over n items with the device's preferred group size. */
tsr_status *ocl_launch_1d(ocl_state *st, cl_kernel k, size_t n, const char *what);
/* With profile=1: waits for the queue and adds the finished kernels' times. */
void ocl_profile_collect(ocl_state *st);
double ocl_now(void);

/* --- transfers (ocl_transfer.c) ---------------------------------------- */
/* Host->device. Never blocks on the queue when the source is a registered
 * constant (written straight from it) or when work is queued (staged
 * through a provider-owned copy); blocks only when the queue is idle, where
 * blocking costs nothing extra and saves the staging copy. */
tsr_status *ocl_upload(ocl_state *st, cl_mem dst, const void *src, size_t nbytes);
/* Device->host, blocking: the host reads `dst` right after. */
tsr_status *ocl_read(ocl_state *st, cl_mem src, size_t offset, size_t nbytes, void *dst);
/* Device->device on the queue, non-blocking. */
tsr_status *ocl_device_copy(ocl_state *st, cl_mem src, cl_mem dst, size_t nbytes);
/* Registers/unregisters the constants a piece reads; see ocl_const_range. */
tsr_status *ocl_consts_add(ocl_state *st, const void *owner, const void *data, size_t nbytes);
/* Drops `owner`'s ranges; waits for the queue first if it has any, since a
 * write from them may still be pending and their memory may go next. */
void ocl_consts_drop(ocl_state *st, const void *owner);
/* Waits for the queue and frees everything staged (session end). */
void ocl_transfers_finish(ocl_state *st);

/* --- counters (ocl_stats.c) --------------------------------------------- */
/* The counters of an op type (SIZE_MAX when out of memory); the kernels
 * launched until ocl_stats_end are timed under it. */
size_t ocl_stats_begin(ocl_state *st, const char *op_type);
/* Adds one step's work to the slot ocl_stats_begin gave. */
void ocl_stats_end(ocl_state *st, size_t slot, uint64_t kernels, uint64_t copies, uint64_t views);
/* With profile=1: the session's totals and per-op counters to the log. */
void ocl_stats_log(ocl_state *st);
void ocl_stats_free(ocl_state *st);

/* A small read-only int buffer of shape data for one launch. */
tsr_status *ocl_meta_buffer(ocl_state *st, const int32_t *data, size_t count, cl_mem *out);

#endif
