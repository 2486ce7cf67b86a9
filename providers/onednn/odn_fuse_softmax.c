/* Transpose(p) -> Softmax(axis a) -> Transpose(p inverse) is a softmax
 * over axis p[a] of the first Transpose's input, as exporters write a
 * channel softmax of an NCHW map (to NHWC, softmax over the last axis, back
 * to NCHW). Built as one middle-axis softmax loop over the input's plain
 * data: no transposed copies, and the loop vectorises along the contiguous
 * spatial positions (FCN's 21-class head over 320x320: two reorders and a
 * softmax over rows of 21, 5.7 ms, became one loop). */
#include <string.h>

#include "odn.h"

/* The perm of Transpose `t` (rank r) into pm; false when absent or not a permutation. */
static bool transpose_perm(const tsr_node *t, int32_t r, int64_t *pm) {
    size_t count;
    const int64_t *perm = odn_attr_ints(t, "perm", &count);
    bool seen[ODN_MAX_RANK] = {false};
    if (perm && count != (size_t)r) return false;
    for (int32_t i = 0; i < r; i++) {
        pm[i] = perm ? perm[i] : r - 1 - i;
        if (pm[i] < 0 || pm[i] >= r || seen[pm[i]]) return false;
        seen[pm[i]] = true;
    }
    return true;
}

static bool is_op(const tsr_node *n, const char *op) {
    if (!n || strcmp(odn_host->node_op_type(n), op) != 0) return false;
    const char *dom = odn_host->node_domain(n);
    return !dom[0] || strcmp(dom, "ai.onnx") == 0;
}

tsr_status *odn_fuse_transposed_softmax(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *t1 = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(t1, 0));
    odn_value *y1 = odn_plan_value(p, odn_host->node_output(t1, 0));
    if (!x || !y1 || !x->produced || !x->mem || x->rank < 2 || x->rank > ODN_MAX_RANK) return NULL;
    int32_t r = x->rank;
    const tsr_node *sm = odn_plan_sole_consumer(p, y1);
    bool log = is_op(sm, "LogSoftmax");
    if (!sm || (!log && !is_op(sm, "Softmax"))) return NULL;
    int64_t a = odn_attr_int(sm, "axis", odn_host->node_opset(sm) < 13 ? 1 : -1);
    if (a < 0) a += r;
    /* before opset 13 an axis is a 2-D coercion: the same only for the last */
    if (a < 0 || a >= r || (odn_host->node_opset(sm) < 13 && a != r - 1)) return NULL;
    odn_value *ys = odn_plan_value(p, odn_host->node_output(sm, 0));
    const tsr_node *t2 = ys ? odn_plan_sole_consumer(p, ys) : NULL;
    int64_t p1[ODN_MAX_RANK], p2[ODN_MAX_RANK];
    if (!is_op(t2, "Transpose") || !transpose_perm(t1, r, p1) || !transpose_perm(t2, r, p2)) return NULL;
    for (int32_t i = 0; i < r; i++)
        if (p1[p2[i]] != i) return NULL;
    int64_t ax = p1[a];
    int64_t outer = odn_numel((int32_t)ax, x->dims), inner = odn_numel(r - (int32_t)ax - 1, x->dims + ax + 1);
    /* the last axis is a plain softmax oneDNN has a fast kernel for */
    if (inner <= 1 || outer < 0 || inner < 0) return NULL;
    odn_value *z = odn_plan_value(p, odn_host->node_output(t2, 0));
    if (!z) return NULL;
    *handled = true;
    p->done[odn_plan_node_index(p, sm)] = true;
    p->done[odn_plan_node_index(p, t2)] = true;
    dnnl_memory_t src, dst;
    tsr_status *s = odn_plan_plain_view(p, x, r, x->dims, NULL, t1, &src, NULL);
    if (!s) s = odn_plan_define(p, z, r, x->dims, NULL, sm);
    if (!s) s = odn_plan_plain_view(p, z, r, x->dims, NULL, sm, &dst, NULL);
    if (!s) s = odn_softmax_loop(p, sm, outer, x->dims[ax], inner, log, src, dst);
    return s;
}
