/* The host's compiled-piece cache (provider.h: cache_compat, piece_export,
 * piece_import). Compiling a piece costs the OpenCL compiler's time for
 * each program its steps build (seconds a piece on PoCL); everything else
 * compile does (fusing nodes into steps, folding BatchNormalization into
 * weights, generating elementwise kernels' source) is host arithmetic
 * taking milliseconds. So a blob holds the binaries of the piece's
 * programs, and an import runs the same compile with every program made
 * from its binary (clCreateProgramWithBinary + clBuildProgram) instead of
 * from source: the steps, kernel arguments and work sizes come out as a
 * compile makes them, from the same graph (the host checked the piece is
 * the one the blob was written for), with nothing of them to trust from
 * the file. An import that would need the compiler fails instead, and the
 * host then compiles. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "ocl_blob.h"
#include "ocl_piece.h"
#include "ocl_sources.h"

/* A hash of every embedded kernel source: a blob of other sources holds
 * programs this build never asks for. */
static uint64_t sources_hash(void) {
    uint64_t h = OCL_FNV_SEED;
    for (unsigned i = 0; i < ocl_source_count; i++) {
        h = ocl_fnv_str(h, ocl_sources[i].name);
        h = ocl_fnv_str(h, ocl_sources[i].text);
    }
    return h;
}

/* Everything a program binary depends on besides its source: the provider,
 * the platform, the device and its driver, the kernel sources and the
 * options every build gets (per-program options such as -DT=uint are part
 * of each program's key). NULL when out of memory. */
static const char *compat_string(ocl_state *st) {
    if (st->compat) return st->compat;
    const ocl_device_desc *d = &st->devices[st->active];
    char pversion[256] = "?";
    if (clGetPlatformInfo(d->platform, CL_PLATFORM_VERSION, sizeof pversion - 1, pversion, NULL) != CL_SUCCESS)
        snprintf(pversion, sizeof pversion, "?");
    pversion[sizeof pversion - 1] = 0;
    /* What changes between builds and driver updates comes first: the
     * host quotes only the first 200 characters of a refused blob's
     * string. d->details (platform, device type, OpenCL and OpenCL C
     * versions, driver) is hashed into every program key, so it is here
     * whole. */
    const char *fmt = "opencl " OCL_PROVIDER_VERSION "; build options '' cpu_kernels=%d; kernel sources %016llx; "
                      "device '%s'; driver '%s'; platform version '%s'; %s";
    unsigned long long src = (unsigned long long)sources_hash();
    int cpu = st->cpu_kernels && d->kind == TSR_DEVICE_CPU;
    int n = snprintf(NULL, 0, fmt, cpu, src, d->name, d->driver, pversion, d->details);
    char *s = n > 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) return NULL;
    snprintf(s, (size_t)n + 1, fmt, cpu, src, d->name, d->driver, pversion, d->details);
    st->compat = s;
    return s;
}

const char *ocl_cache_compat(void *state, int32_t device) {
    ocl_state *st = state;
    /* Pieces run on device 0, the active device (the host allocates there):
     * the others are listed only to be chosen with device=N. */
    if (!st->have_device || device != 0) return NULL;
    /* The host asks this only when the session has a cache directory, and
     * before it compiles or imports each piece: from now on programs
     * built inside compile go into pieces' blobs (ocl_program.c). NULL
     * (out of memory) means the host stores nothing: the own cache stays. */
    const char *compat = compat_string(st);
    if (compat) st->host_cache = true;
    return compat;
}

tsr_status *ocl_piece_export(void *piece_state, void **bytes, size_t *size) {
    ocl_state *st = ocl_piece_owner(piece_state);
    const ocl_program_set *set = ocl_piece_programs(piece_state);
    const char *compat = compat_string(st);
    if (!compat) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    ocl_blob b = {.compat = ocl_fnv_str(OCL_FNV_SEED, compat), .plan = ocl_piece_plan(piece_state), .n = set->n};
    b.programs = calloc(set->n ? set->n : 1, sizeof *b.programs);
    if (!b.programs) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    tsr_status *s = NULL;
    for (size_t i = 0; i < set->n && !s; i++) {
        ocl_blob_program *bp = &b.programs[i];
        bp->key = st->programs[set->index[i]].key;
        s = ocl_program_binary(st, set->index[i], &bp->binary, &bp->size);
    }
    if (!s) s = ocl_blob_write(&b, bytes, size);
    ocl_blob_free(&b);
    return s;
}

/* The blob's programs are the ones the rebuilt piece asked for, in the
 * order it asked, and its steps are the ones that were stored. */
static tsr_status *same_piece(const ocl_blob *b, void *piece) {
    ocl_state *st = ocl_piece_owner(piece);
    const ocl_program_set *set = ocl_piece_programs(piece);
    if (set->n != b->n)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: not a usable compiled piece: it holds %zu program(s), the piece uses %zu", b->n,
                         set->n);
    for (size_t i = 0; i < set->n; i++)
        if (st->programs[set->index[i]].key != b->programs[i].key)
            return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                             "opencl: not a usable compiled piece: its program %zu is %016llx, the piece's "
                             "is %016llx",
                             i + 1, (unsigned long long)b->programs[i].key,
                             (unsigned long long)st->programs[set->index[i]].key);
    if (ocl_piece_plan(piece) != b->plan)
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: not a usable compiled piece: its steps differ from what this build makes "
                         "of the piece");
    return NULL;
}

tsr_status *ocl_piece_import(void *state, const tsr_graph *graph, const void *bytes, size_t size, void **piece_state) {
    ocl_state *st = state;
    *piece_state = NULL;
    if (!st->have_device) return ocl_error(TSR_ERR_PROVIDER, "opencl: no device");
    const char *compat = compat_string(st);
    if (!compat) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    ocl_blob b;
    tsr_status *s = ocl_blob_read(bytes, size, &b);
    if (s) return s;
    if (b.compat != ocl_fnv_str(OCL_FNV_SEED, compat)) {
        ocl_blob_free(&b);
        return ocl_error(TSR_ERR_INVALID_ARGUMENT,
                         "opencl: not a usable compiled piece: written for another device, driver or "
                         "provider build than '%s'",
                         compat);
    }
    uint64_t made = st->from_blob;
    st->importing = &b;
    s = ocl_piece_compile(state, graph, piece_state);
    st->importing = NULL;
    if (!s && (s = same_piece(&b, *piece_state))) {
        ocl_piece_release(*piece_state);
        *piece_state = NULL;
    }
    if (!s) {
        char msg[512];
        const tsr_node *first = ocl_host->graph_node(graph, 0);
        snprintf(msg, sizeof msg,
                 "piece starting at '%s' (%s): %llu program(s) made from the blob's binaries, %llu "
                 "already made this session; none compiled",
                 ocl_host->node_name(first), ocl_host->node_op_type(first), (unsigned long long)(st->from_blob - made),
                 (unsigned long long)(b.n - (st->from_blob - made)));
        ocl_host->log(TSR_LOG_INFO, "opencl", msg);
    }
    ocl_blob_free(&b);
    return s;
}
