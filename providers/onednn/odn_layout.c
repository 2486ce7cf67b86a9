/* Which of the layouts a builder can reproduce for another shape a value
 * is in: plain (NCHW), channels-last (NHWC) or channel-blocked (nChw16c
 * where oneDNN's kernels are AVX-512 ones, nChw8c where they are AVX2
 * ones: odn_block). Concat and Split keep their inputs' layout with it, so
 * a chain of convolutions around them pays no reorder to plain and back. */
#include "odn.h"

static const dnnl_format_tag_t plain_tags[] = {dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
static const dnnl_format_tag_t last_tags[] = {
    dnnl_format_tag_undef, dnnl_format_tag_undef, dnnl_acb, dnnl_acdb, dnnl_acdeb, dnnl_format_tag_undef};

int odn_block(void) {
    /* 0x27 is avx512_core's bit set: its JIT convolutions block by 16,
     * the AVX2 ones by 8 (and take nChw16c only through slow kernels) */
    static int block;
    if (!block) {
        int isa = (int)dnnl_get_effective_cpu_isa();
        block = (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core ? 16 : 8;
    }
    return block;
}

dnnl_format_tag_t odn_blocked_tag(int32_t rank) {
    bool b16 = odn_block() == 16;
    switch (rank) {
    case 3: return b16 ? dnnl_aBc16b : dnnl_aBc8b;
    case 4: return b16 ? dnnl_aBcd16b : dnnl_aBcd8b;
    case 5: return b16 ? dnnl_aBcde16b : dnnl_aBcde8b;
    default: return dnnl_format_tag_undef;
    }
}

dnnl_format_tag_t odn_layout_tag(const odn_value *v) {
    if (v->rank < 1 || v->rank > 6) return dnnl_format_tag_undef;
    const dnnl_format_tag_t cands[3] = {plain_tags[v->rank - 1], last_tags[v->rank - 1], odn_blocked_tag(v->rank)};
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
    return tag != dnnl_format_tag_undef &&
        (tag == odn_blocked_tag(3) || tag == odn_blocked_tag(4) || tag == odn_blocked_tag(5));
}

bool odn_md_flat_f32(const dnnl_memory_desc_t *md) {
    if (md->format_kind != dnnl_blocked || md->data_type != dnnl_f32) return false;
    for (int d = 0; d < md->ndims; d++)
        if (md->padded_dims[d] != md->dims[d] || md->padded_offsets[d] != 0) return false;
    return md->offset0 == 0 && dnnl_memory_desc_get_size(md) == (size_t)odn_numel(md->ndims, md->dims) * sizeof(float);
}

float *odn_mem_f32(dnnl_memory_t mem) {
    void *h = NULL;
    const dnnl_memory_desc_t *md = NULL;
    if (!mem || dnnl_memory_get_data_handle(mem, &h) != dnnl_success || !h) return NULL;
    if (dnnl_memory_get_memory_desc(mem, &md) != dnnl_success) return NULL;
    return (float *)h + md->offset0;
}
