/* Which nodes go together: the one rule shared by claims (one piece per
 * group) and compiles (one step per group), so what is claimed together is
 * what gets fused. */
#ifndef OCL_GROUP_H
#define OCL_GROUP_H

#include "ocl_names.h"
#include "ocl_op.h"

#define OCL_GROUP_MAX 16

typedef enum ocl_group_kind {
    OCL_GROUP_SINGLE,      /* one node, its own op */
    OCL_GROUP_ELEMENTWISE, /* a chain of elementwise nodes, one generated kernel */
    OCL_GROUP_ANCHOR       /* Conv/Gemm/MatMul + optional BatchNormalization or bias + epilogues */
} ocl_group_kind;

typedef struct ocl_group {
    ocl_group_kind kind;
    size_t count;
    size_t members[OCL_GROUP_MAX]; /* indices into the node list */
    bool has_bn;                   /* members[1] is a BatchNormalization folded in */
    bool has_bias;                 /* members[1] is an Add of a constant bias to a MatMul */
} ocl_group;

/* The nodes of a claim or a piece with, by value name, the nodes that read
 * each value: built once, so finding a value's readers is a binary search,
 * not a scan of every node (which made claims quadratic). */
typedef struct ocl_nodes {
    const tsr_node **at; /* in the host's (topological) order */
    size_t n;
    ocl_names readers; /* (input name, node index) of every present input */
} ocl_nodes;

tsr_status *ocl_nodes_init(ocl_nodes *l, const tsr_graph *graph);
void ocl_nodes_free(ocl_nodes *l);

/* Whether this provider runs the node; else the decline reason and text. */
bool ocl_node_supported(const tsr_node *n, int32_t *reason, const char **why, char *buf, size_t size);

/* Reshape, Flatten, Squeeze, Unsqueeze, Identity: a new shape on the same
 * bytes, run as a view of the input's buffer when inside a piece. */
bool ocl_is_view(const tsr_node *n);

/* The only node after l->at[from] reading `name`, or SIZE_MAX (none, or
 * several; a node reading it twice counts twice). */
size_t ocl_sole_consumer(const ocl_nodes *l, size_t from, const char *name);

/* Whether `add` adds a constant bias along the last axis to MatMul `mm`'s
 * output `mm_out`, so the GEMM kernel can add it (ocl_group.c). */
bool ocl_bias_foldable(const tsr_node *mm, const tsr_node *add, const char *mm_out);

/* Groups l->at[start] with the nodes after it that it can fuse with.
 * `taken` marks nodes already grouped; `is_boundary(name)` says a value is
 * needed outside (so it cannot stay private to a fused kernel). */
void ocl_group_from(const ocl_nodes *l, size_t start, const bool *supported, const bool *taken,
                    bool (*is_boundary)(const char *name, void *arg), void *arg, ocl_group *out);

#endif
