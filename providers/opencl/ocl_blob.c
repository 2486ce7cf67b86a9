/* The compiled-piece blob's layout (all integers little-endian):
 *
 *   "TSROCLPC"  u32 format (1)  u32 program count
 *   u64 compat hash  u64 plan
 *   per program: u64 key, u64 binary size, the binary
 *   u64 checksum of every byte before it
 *
 * A piece may hold no program: one whose steps are views, or data
 * movement whose kernels are built at their first run. Its blob still
 * says the piece needs no compiler.
 *
 * The host checks its own checksum around the blob too; ours is checked
 * again because the blob is the provider's contract, and a blob that
 * reached us damaged would otherwise go straight into the driver's binary
 * loader, which is not written for hostile input. */
#include "ocl_blob.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

static const char magic[8] = {'T', 'S', 'R', 'O', 'C', 'L', 'P', 'C'};
enum { FORMAT = 1, HEADER = 32, PER_PROGRAM = 16, TRAILER = 8 };
/* more programs than any piece builds: a bound on what a damaged count
 * makes us allocate (the sizes bound it too) */
#define MAX_PROGRAMS 65536u

static uint64_t get64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Eight bytes a step: blobs reach megabytes, and FNV's byte loop would
 * cost more than the import saves on a fast driver. Detects damage, not
 * forgery. */
static uint64_t checksum(const unsigned char *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        h ^= get64(p + i);
        h *= 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    for (size_t k = n; k > i; k--) tail = tail << 8 | p[k - 1];
    h ^= tail;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 29);
}

static tsr_status *refused(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every error of reading a blob, prefixed alike so a log says what it is. */
static tsr_status *refused(const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: not a usable compiled piece: %s", why);
}

tsr_status *ocl_blob_read(const void *bytes, size_t size, ocl_blob *out) {
    const unsigned char *p = bytes;
    memset(out, 0, sizeof *out);
    if (size < sizeof magic || memcmp(p, magic, sizeof magic) != 0)
        return refused("not an OpenCL provider blob (no TSROCLPC header)");
    if (size < HEADER + TRAILER)
        return refused("cut short (%zu bytes, the header alone is %d)", size, HEADER + TRAILER);
    uint32_t format = get32(p + 8), n = get32(p + 12);
    if (format != FORMAT) return refused("blob format %u, this provider reads %d", format, FORMAT);
    size_t body = size - TRAILER;
    if (get64(p + body) != checksum(p, body)) return refused("damaged (its checksum does not match)");
    if (n > MAX_PROGRAMS || n > (body - HEADER) / PER_PROGRAM)
        return refused("a program count of %u does not fit its %zu bytes", n, size);
    out->compat = get64(p + 16);
    out->plan = get64(p + 24);
    out->programs = calloc(n ? n : 1, sizeof *out->programs);
    if (!out->programs) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    size_t at = HEADER;
    for (uint32_t i = 0; i < n; i++) {
        if (body - at < PER_PROGRAM) {
            ocl_blob_free(out);
            return refused("cut short (program %u of %u has no header)", i + 1, n);
        }
        uint64_t key = get64(p + at), len = get64(p + at + 8);
        at += PER_PROGRAM;
        if (len == 0 || len > OCL_MAX_BINARY || len > body - at) {
            ocl_blob_free(out);
            return refused("program %u of %u claims %llu bytes, %zu are left", i + 1, n, (unsigned long long)len,
                           body - at);
        }
        if (ocl_blob_find(out, key)) {
            ocl_blob_free(out);
            return refused("program %016llx is stored twice", (unsigned long long)key);
        }
        out->programs[i] = (ocl_blob_program){key, p + at, (size_t)len};
        out->n = i + 1;
        at += (size_t)len;
    }
    if (at != body) {
        size_t extra = body - at;
        ocl_blob_free(out);
        return refused("%zu bytes follow the last program", extra);
    }
    return NULL;
}

void ocl_blob_free(ocl_blob *b) {
    free(b->programs);
    memset(b, 0, sizeof *b);
}

const ocl_blob_program *ocl_blob_find(const ocl_blob *b, uint64_t key) {
    for (size_t i = 0; i < b->n; i++)
        if (b->programs[i].key == key) return &b->programs[i];
    return NULL;
}

tsr_status *ocl_blob_write(const ocl_blob *b, void **bytes, size_t *size) {
    size_t total = HEADER + TRAILER;
    for (size_t i = 0; i < b->n; i++) {
        if (b->programs[i].size > OCL_MAX_BINARY)
            return ocl_error(TSR_ERR_PROVIDER, "opencl: a %zu-byte program binary is too large to store",
                             b->programs[i].size);
        total += PER_PROGRAM + b->programs[i].size;
    }
    if (b->n > MAX_PROGRAMS)
        return ocl_error(TSR_ERR_PROVIDER, "opencl: a piece of %zu programs cannot be stored", b->n);
    unsigned char *p = ocl_host->alloc(total);
    if (!p) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (a %zu-byte blob)", total);
    memcpy(p, magic, sizeof magic);
    put32(p + 8, FORMAT);
    put32(p + 12, (uint32_t)b->n);
    put64(p + 16, b->compat);
    put64(p + 24, b->plan);
    size_t at = HEADER;
    for (size_t i = 0; i < b->n; i++) {
        put64(p + at, b->programs[i].key);
        put64(p + at + 8, b->programs[i].size);
        memcpy(p + at + PER_PROGRAM, b->programs[i].binary, b->programs[i].size);
        at += PER_PROGRAM + b->programs[i].size;
    }
    put64(p + at, checksum(p, at));
    *bytes = p;
    *size = total;
    return NULL;
}
