/* Concat as one oneDNN concat: in the layout all its inputs share (plain,
 * channels-last, or nChw16c when every part is whole blocks), else over
 * plain views of them. Where each input is one contiguous run of the
 * output per outer index (plain layouts; nChw16c along whole channel
 * blocks), it copies those runs itself instead: oneDNN 2.6's simple concat
 * moved a U-Net/FCN skip connection at 4 GB/s, 2-3x below memcpy. */
#include <string.h>

#include "odn.h"

#define COPY_SLICES 8 /* a large run split so the threads share it */
#define SMALL_RUN 64  /* runs up to this are copied element by element */

typedef struct concat_runs {
    int count;
    int64_t outer;
    size_t es;                                                  /* element bytes */
    size_t run[ODN_MAX_ARGS], offset[ODN_MAX_ARGS], out_stride; /* bytes */
    dnnl_memory_t in[ODN_MAX_ARGS];
} concat_runs;

/* A run of a few elements: a memcpy call per 4-byte piece (RAFT's grid,
 * 231k rows of two 1-element pieces) costs more than the copy. */
static inline void copy_run(char *dst, const char *src, size_t len, size_t es) {
    if (len > SMALL_RUN) {
        memcpy(dst, src, len);
    } else if (es == 4) {
        for (size_t b = 0; b < len; b += 4) {
            uint32_t v;
            memcpy(&v, src + b, 4);
            memcpy(dst + b, &v, 4);
        }
    } else {
        for (size_t b = 0; b < len; b++) dst[b] = src[b];
    }
}

static tsr_status *run_concat(const void *ctx, dnnl_memory_t first, dnnl_memory_t dst) {
    const concat_runs *c = ctx;
    (void)first; /* also c->in[0]; named in the step for the arena */
    const char *base[ODN_MAX_ARGS];
    void *out = NULL;
    for (int i = 0; i < c->count; i++) {
        void *h = NULL;
        dnnl_memory_get_data_handle(c->in[i], &h);
        base[i] = h;
    }
    dnnl_memory_get_data_handle(dst, &out);
    size_t total = c->out_stride * (size_t)c->outer;
    bool big = total > ((size_t)1 << 20);
    if (c->outer >= 64 || !big) {
        /* enough rows to share: each task copies whole output rows */
#pragma omp parallel for if (big) schedule(static)
        for (int64_t o = 0; o < c->outer; o++) {
            char *row = (char *)out + (size_t)o * c->out_stride;
            for (int i = 0; i < c->count; i++)
                copy_run(row + c->offset[i], base[i] + (size_t)o * c->run[i], c->run[i], c->es);
        }
        return NULL;
    }
    /* fewer rows than threads may want, and long ones: each run cut in
     * COPY_SLICES so the threads share it (at most 63 x 8 tasks per input) */
    int64_t tasks = c->outer * c->count * COPY_SLICES;
#pragma omp parallel for if (big) schedule(static)
    for (int64_t t = 0; t < tasks; t++) {
        int64_t o = t / (c->count * COPY_SLICES);
        int i = (int)((t / COPY_SLICES) % c->count), sl = (int)(t % COPY_SLICES);
        size_t part = c->run[i] / COPY_SLICES, from = part * (size_t)sl;
        size_t len = sl == COPY_SLICES - 1 ? c->run[i] - from : part;
        if (len)
            memcpy((char *)out + (size_t)o * c->out_stride + c->offset[i] + from,
                   base[i] + (size_t)o * c->run[i] + from, len);
    }
    return NULL;
}

static size_t dt_size(dnnl_data_type_t dt) {
    switch (dt) {
    case dnnl_f32:
    case dnnl_s32: return 4;
    case dnnl_f16:
    case dnnl_bf16: return 2;
    case dnnl_s8:
    case dnnl_u8: return 1;
    default: return 0;
    }
}

/* The runs, when every input is one contiguous block of the output per
 * index of the dims before the axis; false otherwise. */
static bool as_runs(odn_plan *p, const tsr_node *n, size_t count, int32_t r, int64_t axis, dnnl_format_tag_t tag,
                    const int64_t *out, const dnnl_exec_arg_t *args, concat_runs **runs) {
    bool blocked = odn_layout_is_blocked(tag);
    bool plain = tag == dnnl_format_tag_undef || tag == dnnl_a || tag == dnnl_ab || tag == dnnl_abc ||
        tag == dnnl_abcd || tag == dnnl_abcde || tag == dnnl_abcdef;
    if (!(plain || (blocked && axis == 1)) || count < 1) return false;
    concat_runs *c = odn_plan_alloc(p, sizeof *c);
    if (!c) return false;
    c->count = (int)count;
    c->outer = 1;
    for (int64_t d = 0; d < axis; d++) c->outer *= out[d];
    size_t inner = 1, es = 0;
    for (int32_t d = (int32_t)axis + 1; d < r; d++) inner *= (size_t)out[d];
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        const odn_value *v = odn_plan_value(p, odn_host->node_input(n, i));
        const dnnl_memory_desc_t *md;
        dnnl_memory_get_memory_desc(args[i].memory, &md);
        es = dt_size(md->data_type);
        if (!es || (md->format_kind == dnnl_blocked && md->offset0 != 0)) return false;
        c->in[i] = args[i].memory;
        c->es = es;
        c->run[i] = (size_t)v->dims[axis] * inner * es;
        c->offset[i] = off;
        off += c->run[i];
    }
    c->out_stride = off;
    *runs = c;
    return true;
}

#define ODN_CONCAT_MAX_INPUTS (ODN_MAX_ARGS - 1) /* plus DST */

tsr_status *odn_build_concat(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    size_t count = odn_host->node_input_count(n);
    odn_value *y = odn_plan_value(p, odn_host->node_output(n, 0));
    odn_value *first = count ? odn_plan_value(p, odn_host->node_input(n, 0)) : NULL;
    if (!y || !first || count > ODN_CONCAT_MAX_INPUTS || first->rank < 1)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: concat inputs");
    int32_t r = first->rank;
    int64_t axis = odn_attr_int(n, "axis", 0);
    if (axis < -r || axis >= r) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "axis out of range");
    if (axis < 0) axis += r;
    int64_t out[ODN_MAX_RANK];
    for (int32_t d = 0; d < r; d++) out[d] = first->dims[d];
    out[axis] = 0;
    dnnl_memory_desc_t mds[ODN_CONCAT_MAX_INPUTS];
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    dnnl_format_tag_t tag = y->output_index >= 0 ? dnnl_format_tag_undef : odn_layout_tag(first);
    for (size_t i = 0; i < count && tag != dnnl_format_tag_undef; i++) {
        odn_value *v = odn_plan_value(p, odn_host->node_input(n, i));
        if (!v || !v->mem || v->rank != r || odn_layout_tag(v) != tag ||
            (odn_layout_is_blocked(tag) && (axis != 1 || v->dims[1] % odn_block() != 0)))
            tag = dnnl_format_tag_undef;
    }
    for (size_t i = 0; i < count; i++) {
        odn_value *v = odn_plan_value(p, odn_host->node_input(n, i));
        if (!v || !v->mem || v->rank != r)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu rank differs", i);
        for (int32_t d = 0; d < r; d++)
            if (d != axis && v->dims[d] != first->dims[d])
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "input %zu dim %d differs", i, (int)d);
        if (out[axis] > INT64_MAX - v->dims[axis]) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "size overflows");
        out[axis] += v->dims[axis];
        args[i].arg = DNNL_ARG_MULTIPLE_SRC + (int)i;
        if (tag != dnnl_format_tag_undef) {
            mds[i] = v->md;
            args[i].memory = v->mem;
            continue;
        }
        tsr_status *s = odn_plan_plain_view(p, v, r, v->dims, NULL, n, &args[i].memory, &mds[i]);
        if (s) return s;
    }
    dnnl_memory_desc_t y_md;
    dnnl_dims_t od;
    for (int32_t d = 0; d < r; d++) od[d] = out[d];
    if (tag != dnnl_format_tag_undef &&
        dnnl_memory_desc_init_by_tag(&y_md, r, od, first->md.data_type, tag) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: concat layout");
    tsr_status *s = odn_plan_define(p, y, r, out, tag != dnnl_format_tag_undef ? &y_md : NULL, n);
    if (s) return s;
    concat_runs *runs;
    if (as_runs(p, n, count, r, axis, tag, out, args, &runs)) {
        dnnl_exec_arg_t largs[ODN_MAX_ARGS];
        largs[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, args[0].memory};
        largs[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, y->mem};
        for (size_t i = 1; i < count; i++)
            largs[i + 1] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + (int)i, args[i].memory};
        return odn_plan_add_loop_args(p, run_concat, runs, largs, (int)count + 1, n);
    }
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_concat_primitive_desc_create(&pd, &y->md, (int)count, (int)axis, mds, NULL, p->engine);
    if (st != dnnl_success) return odn_dnnl_error(n, "concat setup", st);
    args[count] = (dnnl_exec_arg_t){DNNL_ARG_DST, y->mem};
    s = odn_plan_add_primitive(p, pd, n, args, (int)count + 1);
    dnnl_primitive_desc_destroy(pd);
    return s;
}
