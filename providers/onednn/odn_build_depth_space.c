/* DepthToSpace (DCR and CRD) and SpaceToDepth on the oneDNN provider. Each
 * is, by the ONNX spec, a Reshape to 6-D, a Transpose and a Reshape back;
 * here that is one oneDNN reorder (its jit reorder, as a written-out
 * Reshape/Transpose/Reshape gets) from a 6-D strided view of the input's
 * plain data into the output's plain buffer read as the permuted 6-D
 * shape. The reference provider's generic permute is several times slower
 * on the same copy (a super-resolution model's pixel shuffle). */
#include <string.h>

#include "odn.h"
#include "odn_ops.h"

typedef enum ds_kind { DS_DCR, DS_CRD, DS_S2D } ds_kind;

/* The node's kind; false for a DepthToSpace mode other than DCR and CRD. */
static bool kind_of(const tsr_node *n, ds_kind *k) {
    if (strcmp(odn_host->node_op_type(n), "SpaceToDepth") == 0) {
        *k = DS_S2D;
        return true;
    }
    if (odn_attr_string_is(n, "mode", "CRD", false)) {
        *k = DS_CRD;
        return true;
    }
    *k = DS_DCR;
    return odn_attr_string_is(n, "mode", "DCR", true);
}

/* Why dims `d` (-1 where unknown) do not fit blocksize b, or NULL; dims
 * unknown when claimed are checked again when the plan is built. */
static const char *misfit(ds_kind k, int64_t b, const int64_t *d) {
    if (k != DS_S2D) return d[1] >= 0 && d[1] % (b * b) ? "channels not divisible by blocksize^2" : NULL;
    if ((d[2] >= 0 && d[2] % b) || (d[3] >= 0 && d[3] % b)) return "height or width not divisible by blocksize";
    return NULL;
}

int odn_claim_depth_space(const tsr_node *n, char *why, size_t size) {
    int r = odn_claim_ranked(n, why, size); /* float32 or float16, rank known */
    if (r) return r;
    const tsr_value_info *x = odn_host->node_input(n, 0);
    ds_kind k;
    if (!kind_of(n, &k)) return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "mode is neither DCR nor CRD");
    if (odn_host->value_rank(x) != 4)
        return odn_decline(why, size, TSR_DECLINE_SHAPE, "input of rank %d, not 4", (int)odn_host->value_rank(x));
    int64_t b = odn_attr_int(n, "blocksize", 0);
    if (b < 1 || b > (INT64_C(1) << 20))
        return odn_decline(why, size, TSR_DECLINE_ATTRIBUTE, "blocksize %lld", (long long)b);
    int64_t d[4];
    for (int32_t i = 0; i < 4; i++) d[i] = odn_host->value_dim(x, i);
    const char *bad = misfit(k, b, d);
    return bad ? odn_decline(why, size, TSR_DECLINE_SHAPE, "%s", bad) : 0;
}

/* The 6-D shape the spec reshapes x (dims x4) to, its permutation, and how
 * many of the 6 axes each of x's 4 axes splits into. */
static void view_of(ds_kind k, int64_t b, const int64_t *x4, int64_t *vd, int64_t *perm, int32_t *parts) {
    static const int64_t dcr[6] = {0, 3, 4, 1, 5, 2}, crd[6] = {0, 1, 4, 2, 5, 3}, s2d[6] = {0, 3, 5, 1, 2, 4};
    int64_t n = x4[0], c = x4[1], h = x4[2], w = x4[3];
    if (k == DS_S2D) {
        int64_t v[6] = {n, c, h / b, b, w / b, b};
        int32_t pa[4] = {1, 1, 2, 2};
        memcpy(vd, v, sizeof v);
        memcpy(perm, s2d, sizeof s2d);
        memcpy(parts, pa, sizeof pa);
        return;
    }
    int64_t cc = c / (b * b);
    int64_t v_dcr[6] = {n, b, b, cc, h, w}, v_crd[6] = {n, cc, b, b, h, w};
    int32_t pa[4] = {1, 3, 1, 1};
    memcpy(vd, k == DS_DCR ? v_dcr : v_crd, sizeof v_dcr);
    memcpy(perm, k == DS_DCR ? dcr : crd, sizeof dcr);
    memcpy(parts, pa, sizeof pa);
}

/* Strides of the 6 view axes when x's axis i (stride s4[i]) is split into
 * parts[i] consecutive axes of vd: the last part keeps the stride, each
 * one before it steps over the parts after it. */
static void split_strides(const int64_t *vd, const int32_t *parts, const int64_t *s4, int64_t *s6) {
    int32_t a = 5;
    for (int32_t i = 3; i >= 0; i--) {
        int64_t s = s4[i];
        for (int32_t j = 0; j < parts[i]; j++, a--) {
            s6[a] = s;
            s *= vd[a];
        }
    }
}

/* x's strides as laid out when it is plain with any strides (a Transpose
 * view; not one at an offset), else the plain ones, and the memory to read
 * them from. */
static tsr_status *input_strides(odn_plan *p, odn_value *x, const tsr_node *n, int64_t *s4, dnnl_memory_t *base) {
    const dnnl_memory_desc_t *xm = &x->md;
    bool strided = xm->format_kind == dnnl_blocked && xm->format_desc.blocking.inner_nblks == 0 && xm->ndims == 4 &&
                   xm->offset0 == 0 && xm->data_type == dnnl_f32;
    int64_t s = 1;
    for (int32_t i = 3; i >= 0; i--) {
        s4[i] = strided ? xm->format_desc.blocking.strides[i] : s;
        s *= x->dims[i];
    }
    *base = x->mem;
    return strided ? NULL : odn_plan_plain_mem(p, x, n, base);
}

/* The 6-D view of x's plain data (x's own strides when it is plain with
 * any), reading the plain copy of a blocked x. */
static tsr_status *plain_view(odn_plan *p, odn_value *x, const tsr_node *n, const int64_t *vd, const int64_t *perm,
                              const int32_t *parts, dnnl_memory_desc_t *md, dnnl_memory_t *base) {
    int64_t s4[4], s6[6];
    tsr_status *st = input_strides(p, x, n, s4, base);
    if (st) return st;
    split_strides(vd, parts, s4, s6);
    dnnl_dims_t d6, str6;
    for (int32_t a = 0; a < 6; a++) {
        d6[a] = vd[perm[a]];
        str6[a] = s6[perm[a]];
    }
    if (dnnl_memory_desc_init_by_strides(md, 6, d6, dnnl_f32, str6) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "6-D layout");
    return NULL;
}

tsr_status *odn_build_depth_space(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *x = odn_plan_value(p, odn_host->node_input(n, 0));
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    if (!x || !y || !x->produced || !x->mem) return odn_node_error(n, TSR_ERR_PROVIDER, "internal: inputs");
    ds_kind k;
    int64_t b = odn_attr_int(n, "blocksize", 0);
    if (!kind_of(n, &k) || x->rank != 4 || b < 1 || b > (INT64_C(1) << 20))
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "needs a rank 4 input, blocksize >= 1, mode DCR or CRD");
    const char *bad = misfit(k, b, x->dims);
    if (bad) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "%s %lld (input %lldx%lldx%lldx%lld)", bad,
                                   (long long)b, (long long)x->dims[0], (long long)x->dims[1],
                                   (long long)x->dims[2], (long long)x->dims[3]);
    int64_t vd[6], perm[6], od[6], y4[4];
    int32_t parts[4];
    view_of(k, b, x->dims, vd, perm, parts);
    for (int32_t a = 0; a < 6; a++) od[a] = vd[perm[a]];
    /* the output is the permuted 6-D shape with adjacent axes merged */
    y4[0] = x->dims[0];
    y4[1] = k == DS_S2D ? od[1] * od[2] * od[3] : od[1];
    y4[2] = k == DS_S2D ? od[4] : od[2] * od[3];
    y4[3] = k == DS_S2D ? od[5] : od[4] * od[5];
    dnnl_memory_desc_t src_md, dst_md;
    if (odn_plain_md(&dst_md, 6, od) != dnnl_success) return odn_node_error(n, TSR_ERR_PROVIDER, "6-D layout");
    /* A 6-D view of a convolution's nChw8c output itself, which oneDNN 2.6
     * takes (jit:uni), reorders 3x slower than a plain copy first and this
     * view of it (a pixel shuffle of 1x128x256x256: 95 ms against 29). */
    dnnl_memory_t base;
    tsr_status *st = plain_view(p, x, n, vd, perm, parts, &src_md, &base);
    if (st) return st;
    dnnl_memory_t src, dst;
    st = odn_plan_define(p, y, 4, y4, NULL, n);
    if (!st) st = odn_plan_view(p, base, &src_md, n, &src);
    if (!st) st = odn_plan_view(p, y->mem, &dst_md, n, &dst);
    return st ? st : odn_plan_add_reorder(p, src, &src_md, dst, &dst_md, n);
}
