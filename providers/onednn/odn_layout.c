/* Which of the layouts a builder can reproduce for another shape a value
 * is in: plain (NCHW), channels-last (NHWC) or channel-blocked by 16
 * (nChw16c). Concat and Split keep their inputs' layout with it, so a
 * chain of convolutions around them pays no reorder to plain and back. */
#include "odn.h"

static const dnnl_format_tag_t plain_tags[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
static const dnnl_format_tag_t last_tags[] = {dnnl_format_tag_undef, dnnl_format_tag_undef, dnnl_acb, dnnl_acdb,
                                              dnnl_acdeb, dnnl_format_tag_undef};
static const dnnl_format_tag_t blocked_tags[] = {dnnl_format_tag_undef, dnnl_format_tag_undef, dnnl_aBc16b,
                                                 dnnl_aBcd16b, dnnl_aBcde16b, dnnl_format_tag_undef};

dnnl_format_tag_t odn_layout_tag(const odn_value *v) {
    if (v->rank < 1 || v->rank > 6) return dnnl_format_tag_undef;
    const dnnl_format_tag_t cands[3] = {plain_tags[v->rank - 1], last_tags[v->rank - 1], blocked_tags[v->rank - 1]};
    dnnl_dims_t d;
    for (int32_t i = 0; i < v->rank; i++) d[i] = v->dims[i];
    for (int k = 0; k < 3; k++) {
        dnnl_memory_desc_t md;
        if (cands[k] == dnnl_format_tag_undef ||
            dnnl_memory_desc_init_by_tag(&md, v->rank, d, v->md.data_type, cands[k]) != dnnl_success)
            continue;
        if (dnnl_memory_desc_equal(&md, &v->md)) return cands[k];
    }
    return dnnl_format_tag_undef;
}

bool odn_layout_is_blocked(dnnl_format_tag_t tag) {
    return tag == dnnl_aBc16b || tag == dnnl_aBcd16b || tag == dnnl_aBcde16b;
}
