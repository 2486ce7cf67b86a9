/* The bytes of a compiled piece in the host's compiled-piece cache: the
 * binaries of the programs the piece built, and what says whom they are
 * for. Reading checks every count, length and the checksum before anything
 * reaches the driver, so a cut, damaged or foreign blob is an error that
 * says which, never a read past its end. */
#ifndef OCL_BLOB_H
#define OCL_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include <tessera/provider.h>

typedef struct ocl_blob_program {
    uint64_t key;                /* as ocl_program_get names the program */
    const unsigned char *binary; /* points into the blob's bytes */
    size_t size;
} ocl_blob_program;

typedef struct ocl_blob {
    uint64_t compat; /* hash of the cache_compat string it was written under */
    uint64_t plan;   /* ocl_piece_plan of the piece that wrote it */
    size_t n;
    ocl_blob_program *programs; /* n, keys distinct; malloc'd by ocl_blob_read */
} ocl_blob;

/* Parses `size` bytes; the programs point into them, so the bytes must
 * outlive the blob's use. */
tsr_status *ocl_blob_read(const void *bytes, size_t size, ocl_blob *out);
void ocl_blob_free(ocl_blob *b);
/* The program stored under `key`, or NULL. */
const ocl_blob_program *ocl_blob_find(const ocl_blob *b, uint64_t key);
/* Serializes `b` into memory from host->alloc (the host frees it). */
tsr_status *ocl_blob_write(const ocl_blob *b, void **bytes, size_t *size);

#endif
