/* Building OpenCL programs once per device: in memory for the session, and
 * across sessions either in the host's compiled-piece cache (the blob of
 * each piece that uses the program, ocl_piece_cache.c) or in the
 * provider's own on-disk cache (ocl_disk_cache.c). A program's key hashes
 * the device, driver, build options and full source text, so it names the
 * same binary wherever it is kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "ocl_blob.h"
#include "ocl_sources.h"

uint64_t ocl_fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *s = data;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The terminating NUL is hashed too, so ("ab", "c") differs from ("a", "bc"). */
uint64_t ocl_fnv_str(uint64_t h, const char *s) { return ocl_fnv(h, s ? s : "", s ? strlen(s) + 1 : 1); }

static const char *source_text(const char *name) {
    for (unsigned i = 0; i < ocl_source_count; i++)
        if (strcmp(ocl_sources[i].name, name) == 0) return ocl_sources[i].text;
    return NULL;
}

tsr_status *ocl_program_from_binary(ocl_state *st, const unsigned char *binary, size_t size, const char *options,
                                    cl_program *out) {
    const ocl_device_desc *d = &st->devices[st->active];
    const unsigned char *bins[1] = {binary};
    cl_int bstatus = CL_SUCCESS, err;
    cl_program prog = clCreateProgramWithBinary(st->context, 1, &d->id, &size, bins, &bstatus, &err);
    if (!prog || err != CL_SUCCESS || bstatus != CL_SUCCESS) {
        if (prog) clReleaseProgram(prog);
        return ocl_error(TSR_ERR_PROVIDER, "opencl: the driver refused a program binary of %zu bytes (%s)", size,
                         ocl_cl_error_name(err != CL_SUCCESS ? err : bstatus));
    }
    /* a binary still needs a build (a link, for most drivers) before
     * clCreateKernel */
    err = clBuildProgram(prog, 1, &d->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        clReleaseProgram(prog);
        return ocl_error(TSR_ERR_PROVIDER, "opencl: building a program from its binary failed (%s)",
                         ocl_cl_error_name(err));
    }
    *out = prog;
    return NULL;
}

/* The program's binary for its one device, malloc'd. */
static tsr_status *fetch_binary(cl_program prog, unsigned char **binary, size_t *size) {
    cl_uint devices = 0;
    size_t n = 0;
    cl_int err = clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, NULL);
    if (err == CL_SUCCESS && devices != 1) err = CL_INVALID_PROGRAM; /* our contexts hold one device */
    if (err == CL_SUCCESS) err = clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL);
    if (err != CL_SUCCESS) return ocl_cl_error(err, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
    if (n == 0 || n > OCL_MAX_BINARY)
        return ocl_error(TSR_ERR_PROVIDER, "opencl: the driver gave a program binary of %zu bytes", n);
    unsigned char *bin = malloc(n);
    if (!bin) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (a %zu-byte program binary)", n);
    unsigned char *bins[1] = {bin};
    err = clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL);
    if (err != CL_SUCCESS) {
        free(bin);
        return ocl_cl_error(err, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
    }
    *binary = bin;
    *size = n;
    return NULL;
}

tsr_status *ocl_program_binary(ocl_state *st, size_t index, const unsigned char **binary, size_t *size) {
    ocl_program_entry *e = &st->programs[index];
    if (!e->binary) {
        tsr_status *s = fetch_binary(e->program, &e->binary, &e->binary_size);
        if (s) return s;
    }
    *binary = e->binary;
    *size = e->binary_size;
    return NULL;
}

static tsr_status *build_from_source(ocl_state *st, const char *text, const char *options, cl_program *out) {
    const ocl_device_desc *d = &st->devices[st->active];
    cl_int err;
    cl_program prog = clCreateProgramWithSource(st->context, 1, &text, NULL, &err);
    if (!prog) return ocl_cl_error(err, "clCreateProgramWithSource");
    err = clBuildProgram(prog, 1, &d->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[2048] = "";
        clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        log[sizeof log - 1] = 0;
        clReleaseProgram(prog);
        return ocl_error(TSR_ERR_PROVIDER, "opencl: building a program (options '%s') failed: %s", options, log);
    }
    *out = prog;
    return NULL;
}

/* The program's source: `prefix`, the named sources and `extra`, each
 * followed by a newline; `total` is a size that fits them. */
static char *source_join(const char *prefix, const char *const *names, size_t n_names, const char *extra,
                         size_t total) {
    char *text = malloc(total);
    if (!text) return NULL;
    text[0] = 0;
    if (prefix) {
        strcat(text, prefix);
        strcat(text, "\n");
    }
    for (size_t i = 0; i < n_names; i++) {
        strcat(text, source_text(names[i]));
        strcat(text, "\n");
    }
    if (extra) strcat(text, extra);
    return text;
}

/* The parts of a program's source text (ocl_program_get's arguments), joined
 * only when the program is built from source. */
typedef struct program_source {
    const char *prefix;
    const char *const *names;
    size_t n_names;
    const char *extra;
    size_t total; /* bytes that hold the joined text */
} program_source;

/* The program under `key` made from the imported blob's binary; a piece
 * being imported builds nothing from source. */
static tsr_status *from_blob(ocl_state *st, uint64_t key, const char *options, cl_program *out) {
    const ocl_blob_program *bp = ocl_blob_find(st->importing, key);
    if (!bp)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: not a usable compiled piece: it holds no binary of program %016llx, "
                         "which this piece uses (it was written for another piece, or by another build "
                         "of the provider)",
                         (unsigned long long)key);
    tsr_status *s = ocl_program_from_binary(st, bp->binary, bp->size, options, out);
    if (!s) st->from_blob++;
    return s;
}

static tsr_status *make_program(ocl_state *st, uint64_t key, const program_source *src, const char *options,
                                cl_program *out) {
    if (st->importing) return from_blob(st, key, options, out);
    /* Inside a compile with the host's cache on, the piece's blob keeps
     * this program: the own cache would only hold a second copy, and
     * reading it would hide whether the host's cache works. */
    char path[4200];
    bool disk = st->disk_cache && !(st->host_cache && st->recording) && ocl_disk_cache_path(key, path, sizeof path);
    if (disk && (*out = ocl_disk_cache_load(st, path, key, options))) {
        st->from_disk++;
        return NULL;
    }
    char *text = source_join(src->prefix, src->names, src->n_names, src->extra, src->total);
    if (!text) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    tsr_status *s = build_from_source(st, text, options, out);
    free(text);
    if (s) return s;
    if (st->recording) st->built_compile++;
    else st->built_run++;
    if (!disk) return NULL;
    unsigned char *bin = NULL;
    size_t size = 0;
    tsr_status *b = fetch_binary(*out, &bin, &size);
    if (b) /* no binary to keep: the next session builds again */
        ocl_host->status_free(b);
    else ocl_disk_cache_store(path, key, bin, size);
    free(bin);
    return NULL;
}

/* Adds st->programs[index] to the piece being compiled, once. */
static tsr_status *record(ocl_program_set *set, size_t index) {
    for (size_t i = 0; i < set->n; i++)
        if (set->index[i] == index) return NULL;
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 4;
        size_t *g = realloc(set->index, sizeof *g * cap);
        if (!g) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        set->index = g;
        set->cap = cap;
    }
    set->index[set->n++] = index;
    return NULL;
}

tsr_status *ocl_program_get(ocl_state *st, const char *prefix, const char *const *names, size_t n_names,
                            const char *extra, const char *options, cl_program *out) {
    const ocl_device_desc *d = &st->devices[st->active];
    size_t total = (extra ? strlen(extra) : 0) + (prefix ? strlen(prefix) : 0) + 2;
    for (size_t i = 0; i < n_names; i++) {
        const char *t = source_text(names[i]);
        if (!t) return ocl_error(TSR_ERR_PROVIDER, "opencl: no kernel source '%s'", names[i]);
        total += strlen(t) + 1;
    }
    uint64_t key = OCL_FNV_SEED;
    key = ocl_fnv_str(key, d->name);
    key = ocl_fnv_str(key, d->driver);
    key = ocl_fnv_str(key, d->details);
    key = ocl_fnv_str(key, options);
    key = ocl_fnv_str(key, prefix);
    for (size_t i = 0; i < n_names; i++) key = ocl_fnv_str(key, source_text(names[i]));
    key = ocl_fnv_str(key, extra);
    size_t index = 0;
    while (index < st->n_programs && st->programs[index].key != key) index++;
    if (index == st->n_programs) {
        ocl_program_entry *grown = realloc(st->programs, sizeof *grown * (st->n_programs + 1));
        if (!grown) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        st->programs = grown;
        const program_source src = {prefix, names, n_names, extra, total};
        cl_program prog = NULL;
        tsr_status *s = make_program(st, key, &src, options, &prog);
        if (s) return s;
        st->programs[index] = (ocl_program_entry){.key = key, .program = prog};
        st->n_programs++;
    }
    if (st->recording) {
        tsr_status *s = record(st->recording, index);
        if (s) return s;
    }
    *out = st->programs[index].program;
    return NULL;
}

tsr_status *ocl_kernel_create(ocl_state *st, const char *source_name, const char *options, const char *kernel_name,
                              cl_kernel *out) {
    cl_program prog = NULL;
    tsr_status *s = ocl_program_get(st, NULL, &source_name, 1, NULL, options ? options : "", &prog);
    if (s) return s;
    return ocl_kernel_from(st, prog, kernel_name, out);
}

static tsr_status *kernel_new(cl_program prog, const char *kernel_name, cl_kernel *out) {
    cl_int err;
    *out = clCreateKernel(prog, kernel_name, &err);
    if (!*out) {
        char what[160];
        snprintf(what, sizeof what, "clCreateKernel(%s)", kernel_name);
        return ocl_cl_error(err, what);
    }
    return NULL;
}

static ocl_kernel_entry *kernel_find(ocl_state *st, cl_program prog, const char *kernel_name) {
    for (size_t i = 0; i < st->n_shared; i++) {
        ocl_kernel_entry *e = &st->shared_kernels[i];
        if (e->program == prog && strcmp(e->name, kernel_name) == 0) return e;
    }
    return NULL;
}

/* Shared rather than one kernel object per step: PoCL lists a program's
 * kernels and searches the list to free one, so the 100,000 kernels of
 * 100,000 one-node pieces took minutes to free at session end. */
tsr_status *ocl_kernel_from(ocl_state *st, cl_program prog, const char *kernel_name, cl_kernel *out) {
    ocl_kernel_entry *e = kernel_find(st, prog, kernel_name);
    if (e) {
        cl_int err = clRetainKernel(e->kernel);
        if (err != CL_SUCCESS) return ocl_cl_error(err, "clRetainKernel");
        *out = e->kernel;
        return NULL;
    }
    tsr_status *s = kernel_new(prog, kernel_name, out);
    if (s || strlen(kernel_name) >= sizeof e->name) return s; /* a long name: not shared */
    if (st->n_shared == st->cap_shared) {
        size_t cap = st->cap_shared ? st->cap_shared * 2 : 16;
        ocl_kernel_entry *g = realloc(st->shared_kernels, sizeof *g * cap);
        if (!g) return NULL; /* not shared, still valid */
        st->shared_kernels = g;
        st->cap_shared = cap;
    }
    if (clRetainKernel(*out) != CL_SUCCESS) return NULL;
    e = &st->shared_kernels[st->n_shared++];
    e->program = prog;
    snprintf(e->name, sizeof e->name, "%s", kernel_name);
    e->kernel = *out;
    return NULL;
}

void ocl_programs_release(ocl_state *st) {
    /* newest first: the order PoCL frees in constant time */
    for (size_t i = st->n_shared; i-- > 0;) clReleaseKernel(st->shared_kernels[i].kernel);
    free(st->shared_kernels);
    st->shared_kernels = NULL;
    st->n_shared = st->cap_shared = 0;
    for (size_t i = 0; i < st->n_programs; i++) {
        clReleaseProgram(st->programs[i].program);
        free(st->programs[i].binary);
    }
    free(st->programs);
    st->programs = NULL;
    st->n_programs = 0;
}
