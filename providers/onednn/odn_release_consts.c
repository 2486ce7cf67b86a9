/* Weights held once. A plan reorders or packs each constant weight into
 * the piece's constant cache; where no step reads the host's copy after
 * that, the host is told (constant_release) and gives those bytes back:
 * BERT-base's 324 MiB of weights were otherwise held twice for the
 * session's life, and twice at its peak.
 *
 * For the peak, the cache is filled after the plan is built (the builders
 * only allocate the entries, whose pages stay untouched until written),
 * one weight at a time, each released as soon as its last form is made:
 * while packing, memory holds the host's weights not yet packed plus the
 * packed ones, about one copy in all.
 *
 * Only for plans built at compile time, with every input shape known: a
 * later plan then has the same shapes (one is rebuilt only for another
 * thread count) and finds the same forms in the cache. A plan that wants a
 * released constant in a new form fails, naming it (odn_const_cache_add
 * refuses a released key), rather than reading the zeros left behind.
 * Pieces with shapes known only at run time keep the host's bytes. */
#include <stdlib.h>

#include "odn.h"
#include "odn_sgemm.h"

struct odn_fill {
    const void *key1; /* the constant whose bytes it reads */
    const tsr_node *node;
    void *buf; /* the cache entry it fills */
    bool packed;
    /* a reorder */
    dnnl_memory_t src, dst;
    dnnl_memory_desc_t src_md, dst_md;
    /* a packing for odn_sgemm */
    const float *b;
    int64_t k, cols, stride_k, stride_n;
    /* a builder's own form */
    void (*fn)(const void *ctx, void *buf);
    const void *ctx;
};

bool odn_fill_deferred(const odn_plan *p) { return p->release_consts; }

static odn_fill *fill_new(odn_plan *p, const void *key1, const tsr_node *n, void *buf) {
    if (p->fill_count == p->fill_cap) {
        size_t cap = p->fill_cap ? 2 * p->fill_cap : 16;
        odn_fill *f = realloc(p->fills, cap * sizeof *f);
        if (!f) return NULL;
        p->fills = f;
        p->fill_cap = cap;
    }
    odn_fill *f = &p->fills[p->fill_count++];
    *f = (odn_fill){.key1 = key1, .node = n, .buf = buf};
    return f;
}

tsr_status *odn_fill_add_reorder(odn_plan *p, const void *key1, const tsr_node *n, dnnl_memory_t src,
                                 const dnnl_memory_desc_t *src_md, dnnl_memory_t dst, const dnnl_memory_desc_t *dst_md,
                                 void *buf) {
    odn_fill *f = fill_new(p, key1, n, buf);
    if (!f) return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights to reorder");
    f->src = src;
    f->dst = dst;
    f->src_md = *src_md;
    f->dst_md = *dst_md;
    return NULL;
}

tsr_status *odn_fill_add_pack(odn_plan *p, const void *key1, const tsr_node *n, const float *b, int64_t k,
                              int64_t cols, int64_t stride_k, int64_t stride_n, void *buf) {
    odn_fill *f = fill_new(p, key1, n, buf);
    if (!f) return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights to pack");
    f->packed = true;
    f->b = b;
    f->k = k;
    f->cols = cols;
    f->stride_k = stride_k;
    f->stride_n = stride_n;
    return NULL;
}

tsr_status *odn_fill_add_fn(odn_plan *p, const void *key1, const tsr_node *n, void (*fn)(const void *ctx, void *buf),
                            const void *ctx, void *buf) {
    odn_fill *f = fill_new(p, key1, n, buf);
    if (!f) return odn_node_error(n, TSR_ERR_NO_MEMORY, "weights to transform");
    f->fn = fn;
    f->ctx = ctx;
    return NULL;
}

/* Every reader of v in the piece takes it from the constant cache. */
static bool held_in_cache(const odn_value *v) {
    return v->constant && v->constant->data && v->consumers > 0 && v->cached_reads == v->consumers &&
        v->output_index < 0;
}

static void release_key(odn_plan *p, const void *key1) {
    if (!TSR_HAS_MEMBER(odn_host, tsr_host_api, constant_release) || !odn_host->constant_release) return;
    for (size_t i = 0; i < p->value_count; i++) {
        const odn_value *v = &p->values[i];
        if (v->constant && v->constant->data == key1 && held_in_cache(v) &&
            odn_const_cache_mark_released(p->consts, key1)) {
            tsr_status *s = odn_host->constant_release(p->piece, v->info);
            if (!s) continue;
            /* refused: the bytes stay, and later plans may read them */
            odn_host->status_free(s);
            odn_const_cache_unmark_released(p->consts, key1);
        }
    }
}

static bool read_later(const odn_plan *p, size_t i) {
    for (size_t j = i + 1; j < p->fill_count; j++)
        if (p->fills[j].key1 == p->fills[i].key1) return true;
    return false;
}

static bool fill_pending(const odn_plan *p, const void *key1) {
    for (size_t i = 0; i < p->fill_count; i++)
        if (p->fills[i].key1 == key1) return true;
    return false;
}

/* Static plans release after their deferred fills (odn_fills_run); a value
 * read only in forms that plans for other shapes find in the cache is
 * released by any plan, as soon as its last reader is built. */
void odn_const_read_cached(odn_plan *p, odn_value *v, bool fixed) {
    v->cached_reads++;
    if (fixed) v->fixed_reads++;
    if (!held_in_cache(v)) return;
    const void *key1 = v->constant->data;
    if (p->release_consts ? fill_pending(p, key1) : v->fixed_reads != v->consumers) return;
    release_key(p, key1);
}

tsr_status *odn_fills_run(odn_plan *p) {
    for (size_t i = 0; i < p->fill_count; i++) {
        odn_fill *f = &p->fills[i];
        if (f->fn) {
            f->fn(f->ctx, f->buf);
        } else if (f->packed) {
            odn_sgemm_pack(f->b, f->k, f->cols, f->stride_k, f->stride_n, f->buf);
        } else {
            tsr_status *s = odn_reorder_once(p, f->src, &f->src_md, f->dst, &f->dst_md, f->node);
            if (s) return s;
        }
        odn_const_cache_ready(p->consts, f->buf);
        if (p->release_consts && !read_later(p, i)) release_key(p, f->key1);
    }
    return NULL;
}

void odn_fills_free(odn_plan *p) {
    free(p->fills);
    p->fills = NULL;
    p->fill_count = p->fill_cap = 0;
}
