/* Grouping nodes for fusion (see ocl_group.h). */
#include <stdlib.h>
#include <string.h>

#include "ocl_fuse.h"
#include "ocl_group.h"

bool ocl_node_supported(const tsr_node *n, int32_t *reason, const char **why, char *buf, size_t size) {
    if (ocl_host->node_domain(n)[0]) {
        *reason = TSR_DECLINE_OP;
        *why = "only the default ONNX domain";
        return false;
    }
    if (ocl_ew_is_elementwise(n)) return true;
    const ocl_op *op = ocl_op_find(ocl_host->node_op_type(n));
    if (!op) {
        *reason = TSR_DECLINE_OP;
        *why = "no OpenCL kernel for this op";
        return false;
    }
    *why = op->check(n, reason, buf, size);
    return *why == NULL;
}

static bool is_anchor(const tsr_node *n) {
    const char *op = ocl_host->node_op_type(n);
    return !strcmp(op, "Conv") || !strcmp(op, "Gemm") || !strcmp(op, "MatMul");
}

static const char *out0(const tsr_node *n) {
    const tsr_value_info *v = ocl_host->node_output_count(n) == 1 ? ocl_host->node_output(n, 0) : NULL;
    return v ? ocl_host->value_name(v) : NULL;
}

bool ocl_is_view(const tsr_node *n) {
    static const char *const views[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    if (ocl_host->node_domain(n)[0]) return false;
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        if (!strcmp(ocl_host->node_op_type(n), views[i])) return true;
    return false;
}

tsr_status *ocl_nodes_init(ocl_nodes *l, const tsr_graph *graph) {
    memset(l, 0, sizeof *l);
    l->n = ocl_host->graph_node_count(graph);
    l->at = calloc(l->n + 1, sizeof *l->at);
    if (!l->at) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    for (size_t j = 0; j < l->n; j++) {
        l->at[j] = ocl_host->graph_node(graph, j);
        size_t ni = ocl_host->node_input_count(l->at[j]);
        for (size_t k = 0; k < ni; k++) {
            const tsr_value_info *v = ocl_host->node_input(l->at[j], k);
            if (v && !ocl_names_add(&l->readers, ocl_host->value_name(v), j)) {
                ocl_nodes_free(l);
                return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (readers)");
            }
        }
    }
    ocl_names_sort(&l->readers);
    return NULL;
}

void ocl_nodes_free(ocl_nodes *l) {
    free(l->at);
    ocl_names_free(&l->readers);
    memset(l, 0, sizeof *l);
}

/* A value's reads are sorted by reading node (twice for a node reading it
 * twice), so only the last two matter: exactly one read comes after `from`
 * when the last does and the one before it does not. */
size_t ocl_sole_consumer(const ocl_nodes *l, size_t from, const char *name) {
    size_t first, count = ocl_names_find(&l->readers, name, &first);
    if (!count) return SIZE_MAX;
    const ocl_name_ref *last = &l->readers.refs[first + count - 1];
    if (last->index <= from || (count > 1 && last[-1].index > from)) return SIZE_MAX;
    return last->index;
}

/* BatchNormalization that folds into the conv before it: inference form,
 * constant parameters, reading the conv's output as X. */
static bool bn_foldable(const tsr_node *conv, const tsr_node *bn) {
    if (strcmp(ocl_host->node_op_type(bn), "BatchNormalization") || ocl_host->node_domain(bn)[0]) return false;
    if (strcmp(ocl_host->node_op_type(conv), "Conv") || ocl_host->node_output_count(bn) != 1) return false;
    if (!ocl_host->value_constant(ocl_host->node_input(conv, 1))) return false;
    if (ocl_input_present(conv, 2) && !ocl_host->value_constant(ocl_host->node_input(conv, 2))) return false;
    if (ocl_host->node_input_count(bn) != 5) return false;
    for (size_t i = 1; i < 5; i++)
        if (!ocl_input_present(bn, i) || !ocl_host->value_constant(ocl_host->node_input(bn, i))) return false;
    return ocl_attr_int(bn, "training_mode", 0) == 0;
}

/* Add(MatMul, b) or Add(b, MatMul) with a constant float b that only runs
 * along the output's last axis (shape [..., 1, N], N = B's last dim, rank no
 * more than the output's): the GEMM kernel's bias operand, added after the
 * product just as the Add would, so the result is the same bits. */
bool ocl_bias_foldable(const tsr_node *mm, const tsr_node *add, const char *mm_out) {
    if (strcmp(ocl_host->node_op_type(mm), "MatMul") || strcmp(ocl_host->node_op_type(add), "Add") ||
        ocl_host->node_domain(add)[0] || ocl_host->node_input_count(add) != 2 || ocl_host->node_output_count(add) != 1)
        return false;
    const tsr_value_info *x0 = ocl_host->node_input(add, 0), *x1 = ocl_host->node_input(add, 1);
    if (!x0 || !x1) return false;
    bool first = !strcmp(ocl_host->value_name(x0), mm_out);
    if (!first && strcmp(ocl_host->value_name(x1), mm_out)) return false;
    const tsr_value_info *bv = first ? x1 : x0;
    const tsr_tensor *b = ocl_host->value_constant(bv);
    if (!b || b->elem_type != TSR_FLOAT || b->rank < 1 || !strcmp(ocl_host->value_name(bv), mm_out)) return false;
    int32_t ra = ocl_host->value_rank(ocl_host->node_input(mm, 0));
    const tsr_value_info *B = ocl_host->node_input(mm, 1);
    int32_t rb = ocl_host->value_rank(B);
    if (ra < 2 || rb < 2 || b->rank > (ra > rb ? ra : rb)) return false;
    int64_t n = ocl_host->value_dim(B, rb - 1);
    if (n < 1 || b->dims[b->rank - 1] != n) return false;
    for (int32_t d = 0; d + 1 < b->rank; d++)
        if (b->dims[d] != 1) return false;
    return true;
}

void ocl_group_from(const ocl_nodes *l, size_t start, const bool *supported, const bool *taken,
                    bool (*is_boundary)(const char *name, void *arg), void *arg, ocl_group *g) {
    const tsr_node *const *nodes = l->at;
    memset(g, 0, sizeof *g);
    g->count = 1;
    g->members[0] = start;
    const tsr_node *first = nodes[start];
    /* An Identity that starts a group is a view (no kernel); after another
     * elementwise node it costs nothing in the fused kernel either. */
    bool ew = ocl_ew_is_elementwise(first) && strcmp(ocl_host->node_op_type(first), "Identity");
    g->kind = ew ? OCL_GROUP_ELEMENTWISE : is_anchor(first) ? OCL_GROUP_ANCHOR : OCL_GROUP_SINGLE;
    if (g->kind == OCL_GROUP_SINGLE) return;
    size_t cur = start;
    while (g->count < OCL_GROUP_MAX) {
        const char *name = out0(nodes[cur]);
        if (!name || (is_boundary && is_boundary(name, arg))) break;
        size_t j = ocl_sole_consumer(l, cur, name);
        if (j == SIZE_MAX || !supported[j] || taken[j]) break;
        const tsr_node *next = nodes[j];
        if (g->kind == OCL_GROUP_ANCHOR) {
            if (g->count == 1 && ocl_bias_foldable(first, next, name)) {
                g->has_bias = true;
                g->members[g->count++] = j;
                cur = j;
                continue;
            }
            /* an epilogue reads the anchor's value as its first input */
            const tsr_value_info *x0 = ocl_host->node_input(next, 0);
            if (!x0 || strcmp(ocl_host->value_name(x0), name)) break;
            if (g->count == 1 && bn_foldable(first, next)) {
                g->has_bn = true;
            } else if (!ocl_ew_is_epilogue(next)) {
                break;
            }
        } else if (!ocl_ew_is_elementwise(next)) {
            break;
        }
        g->members[g->count++] = j;
        cur = j;
    }
}
