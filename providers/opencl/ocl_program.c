/* Building OpenCL programs once per device: in memory for the session and on
 * disk (keyed by device, driver and source hash) so a later session skips the
 * compiler. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl.h"
#include "ocl_sources.h"

/* A cached binary larger than this is not ours; refuse to read it. */
#define OCL_MAX_BINARY (256u << 20)
static const char cache_magic[8] = {'T', 'S', 'R', 'C', 'L', 'B', 'N', '1'};

static uint64_t fnv1a(uint64_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s) {
    return fnv1a(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static const char *source_text(const char *name) {
    for (unsigned i = 0; i < ocl_source_count; i++)
        if (strcmp(ocl_sources[i].name, name) == 0) return ocl_sources[i].text;
    return NULL;
}

/* The cache directory, created if missing; false when there is none. */
static bool cache_dir(char *buf, size_t size) {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, size, "%s/tessera", xdg);
    else if (home && home[0] == '/')
        n = snprintf(buf, size, "%s/.cache/tessera", home);
    else
        return false;
    if (n < 0 || (size_t)n + 16 >= size) return false;
    /* mkdir -p of the last two levels is enough: $HOME exists. */
    char *slash = strrchr(buf, '/');
    *slash = 0;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
    *slash = '/';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
    strcat(buf, "/opencl");
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
    return true;
}

static cl_program load_cached(ocl_state *st, const char *path, uint64_t key) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char magic[8];
    uint64_t fkey = 0, size = 0;
    unsigned char *bin = NULL;
    cl_program prog = NULL;
    if (fread(magic, 1, 8, f) == 8 && memcmp(magic, cache_magic, 8) == 0 &&
        fread(&fkey, sizeof fkey, 1, f) == 1 && fkey == key && fread(&size, sizeof size, 1, f) == 1 &&
        size > 0 && size <= OCL_MAX_BINARY && (bin = malloc((size_t)size)) &&
        fread(bin, 1, (size_t)size, f) == size) {
        const ocl_device_desc *d = &st->devices[st->active];
        size_t len = (size_t)size;
        const unsigned char *bins[1] = {bin};
        cl_int bstatus = CL_SUCCESS, err;
        prog = clCreateProgramWithBinary(st->context, 1, &d->id, &len, bins, &bstatus, &err);
        if (prog && (err != CL_SUCCESS || bstatus != CL_SUCCESS ||
                     clBuildProgram(prog, 1, &d->id, "", NULL, NULL) != CL_SUCCESS)) {
            clReleaseProgram(prog);
            prog = NULL;
        }
    }
    free(bin);
    fclose(f);
    return prog;
}

static void store_cached(ocl_state *st, const char *path, uint64_t key, cl_program prog) {
    size_t size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
        size == 0 || size > OCL_MAX_BINARY)
        return;
    unsigned char *bin = malloc(size);
    if (!bin) return;
    unsigned char *bins[1] = {bin};
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS) {
        /* Write beside, then rename: a concurrent reader never sees half a file. */
        char tmp[4300];
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        FILE *f = fopen(tmp, "wb");
        uint64_t sz = size;
        bool ok = f && fwrite(cache_magic, 1, 8, f) == 8 && fwrite(&key, sizeof key, 1, f) == 1 &&
                  fwrite(&sz, sizeof sz, 1, f) == 1 && fwrite(bin, 1, size, f) == size;
        if (f && fclose(f) != 0) ok = false;
        if (!ok || rename(tmp, path) != 0) remove(tmp);
    }
    (void)st;
    free(bin);
}

static tsr_status *build_from_source(ocl_state *st, const char *text, const char *options,
                                     cl_program *out) {
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
        return ocl_error(TSR_ERR_PROVIDER, "opencl: building a program (options '%s') failed: %s",
                         options, log);
    }
    *out = prog;
    return NULL;
}

tsr_status *ocl_program_get(ocl_state *st, const char *prefix, const char *const *names,
                            size_t n_names, const char *extra, const char *options,
                            cl_program *out) {
    const ocl_device_desc *d = &st->devices[st->active];
    size_t total = (extra ? strlen(extra) : 0) + (prefix ? strlen(prefix) : 0) + 2;
    for (size_t i = 0; i < n_names; i++) {
        const char *t = source_text(names[i]);
        if (!t) return ocl_error(TSR_ERR_PROVIDER, "opencl: no kernel source '%s'", names[i]);
        total += strlen(t) + 1;
    }
    uint64_t key = 1469598103934665603ull;
    key = fnv_str(key, d->name);
    key = fnv_str(key, d->driver);
    key = fnv_str(key, d->details);
    key = fnv_str(key, options);
    key = fnv_str(key, prefix);
    for (size_t i = 0; i < n_names; i++) key = fnv_str(key, source_text(names[i]));
    key = fnv_str(key, extra);
    for (size_t i = 0; i < st->n_programs; i++) {
        if (st->programs[i].key == key) {
            *out = st->programs[i].program;
            return NULL;
        }
    }
    ocl_program_entry *grown = realloc(st->programs, sizeof *grown * (st->n_programs + 1));
    if (!grown) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    st->programs = grown;

    char dir[4096], path[4200];
    bool cached = st->disk_cache && cache_dir(dir, sizeof dir);
    if (cached) snprintf(path, sizeof path, "%s/%016llx.bin", dir, (unsigned long long)key);
    cl_program prog = cached ? load_cached(st, path, key) : NULL;
    if (!prog) {
        char *text = malloc(total);
        if (!text) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
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
        tsr_status *s = build_from_source(st, text, options, &prog);
        free(text);
        if (s) return s;
        if (cached) store_cached(st, path, key, prog);
    }
    st->programs[st->n_programs].key = key;
    st->programs[st->n_programs++].program = prog;
    *out = prog;
    return NULL;
}

tsr_status *ocl_kernel_create(ocl_state *st, const char *source_name, const char *options,
                              const char *kernel_name, cl_kernel *out) {
    cl_program prog;
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
tsr_status *ocl_kernel_from(ocl_state *st, cl_program prog, const char *kernel_name,
                            cl_kernel *out) {
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
    for (size_t i = 0; i < st->n_programs; i++) clReleaseProgram(st->programs[i].program);
    free(st->programs);
    st->programs = NULL;
    st->n_programs = 0;
}
