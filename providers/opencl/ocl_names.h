/* Values found by name in log time: a sorted table of (name, index) pairs,
 * built once per claim, compile or piece. Comparing a name against every
 * node or value instead made claims, compiles and runs quadratic: minutes
 * on a graph of 100,000 nodes.
 *
 * Keyed by name, not by tsr_value_info pointer: the ABI does not promise
 * one handle per value, while ONNX makes value names unique, and names are
 * what this provider always compared. */
#ifndef OCL_NAMES_H
#define OCL_NAMES_H

#include "ocl.h"

typedef struct ocl_name_ref {
    const char *name; /* borrowed from the host or a step */
    size_t index;     /* what the caller numbers: a node, step, value... */
} ocl_name_ref;

typedef struct ocl_names {
    ocl_name_ref *refs;
    size_t n, cap;
} ocl_names;

/* Appends a pair; call ocl_names_sort before finding. False when out of memory. */
bool ocl_names_add(ocl_names *t, const char *name, size_t index);
/* Sorts by name, then index. */
void ocl_names_sort(ocl_names *t);
/* How many pairs are named `name` (0 when none, or when `name` is NULL, an
 * omitted value); they are refs[*first .. *first + count), in index order. */
size_t ocl_names_find(const ocl_names *t, const char *name, size_t *first);
void ocl_names_free(ocl_names *t);

/* The graph's (or piece's) outputs, indexed by position; sorted. */
tsr_status *ocl_names_of_outputs(ocl_names *t, const tsr_graph *graph);

#endif
