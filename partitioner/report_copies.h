/* The copies a partition makes between memories, as the executor makes them
 * (runtime/executor.c): where a piece reads a value held in another memory, and
 * where a graph output is read back from a device. Shared by the reports. */
#ifndef TESSERA_REPORT_COPIES_H
#define TESSERA_REPORT_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "partition.h"

/* A piece index that stands for the host side: graph inputs and
 * initializers (as a source), the caller reading graph outputs (as a target). */
#define REPORT_HOST SIZE_MAX

typedef struct report_copy {
    const ir_value *value;
    size_t from_piece;         /* the piece producing value, or REPORT_HOST */
    size_t to_piece;           /* the piece reading it, or REPORT_HOST (graph output) */
    const provider_inst *from; /* memory it is copied from: its provider, NULL for host */
    const provider_inst *to;   /* memory it is copied to; NULL for host */
    bool once_per_session;     /* a constant, copied to the device on first use and kept */
    bool bytes_known;          /* bytes is valid (static shape, fixed-size elements) */
    uint64_t bytes;
} report_copy;

/* The piece whose outputs include v, or REPORT_HOST. */
size_t report_producer_piece(const partition *p, const ir_value *v);

/* The memory holding v between pieces: the device provider whose piece
 * produced it, or NULL for host memory. */
const provider_inst *report_holder(const partition *p, provider_inst *const *provs, const ir_value *v);

/* Bytes of v from its constant data or its static shape; false when unknown
 * (symbolic or unknown dims, not a tensor, strings). */
bool report_value_bytes(const ir_value *v, uint64_t *bytes);

/* Every copy, in run order: each piece's inputs, then graph outputs. *out
 * is malloc'd (NULL when there are none); false when out of memory. */
bool report_copies(const partition *p, provider_inst *const *provs, report_copy **out, size_t *count);

#endif
