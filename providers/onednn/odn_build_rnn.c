/* ONNX LSTM, GRU and RNN as one oneDNN RNN primitive (vanilla_lstm with or
 * without peepholes, vanilla_gru, lbr_gru for linear_before_reset=1,
 * vanilla_rnn), forward, reverse or bidirectional (bidirectional_concat).
 *
 * Constant weights are converted once per plan into oneDNN's ldigo layout
 * (then reordered into the layout the primitive asks for, through the
 * piece's constant cache):
 *   W [dirs, gates*H, I] -> weights_layer [1, dirs, I, gates, H]
 *   R [dirs, gates*H, H] -> weights_iter  [1, dirs, H, gates, H]
 * with the gates reordered: ONNX LSTM i,o,f,c -> oneDNN i,f,c,o; GRU z,r,h
 * = oneDNN u,r,o (same order); RNN one gate. The bias is Wb + Rb per gate,
 * except lbr_gru's, which has a fourth gate: oneDNN computes
 * o = tanh(W_o x + b_o + r * (U_o h + b_u')), so b_o = Wb_h and b_u' = Rb_h.
 * LSTM peepholes P [dirs, 3H] (i, o, f) become weights_peephole
 * [1, dirs, 3, H] in oneDNN's order i, f, o.
 *
 * X, initial_h/initial_c, Y_h/Y_c and (layout 1, or one direction) Y are
 * strided views of the ONNX tensors: oneDNN reads its [T, N, C] layer and
 * [1, dirs, N, H] state tensors through their strides. Only a
 * bidirectional Y in layout 0 ([T, 2, N, H], where oneDNN writes
 * [T, N, 2H]) is written to a buffer of its own and copied by a C loop.
 * Omitted outputs are not written (oneDNN skips dst_iter/dst_iter_c when
 * they are absent; an omitted Y gets a scratch buffer). */
#include <stdio.h>
#include <string.h>

#include "odn_rnn.h"

/* ONNX gate index of each oneDNN gate */
static const int lstm_map[4] = {0, 2, 3, 1}, gru_map[3] = {0, 1, 2}, rnn_map[1] = {0};
static const int *gate_map(int cell) {
    return cell == ODN_RNN_LSTM ? lstm_map : cell == ODN_RNN_VANILLA ? rnn_map : gru_map;
}
/* one distinct address per cell kind: the second key of converted weights
 * in the constant cache (the same W read as an LSTM and as a GRU would be
 * converted differently) */
static const char cell_tags[4] = {0};

bool odn_rnn_impl_ok(const_dnnl_primitive_desc_t pd) {
    dnnl_primitive_kind_t kind = dnnl_undefined_primitive;
    if (!pd || dnnl_primitive_desc_query(pd, dnnl_query_primitive_kind, 0, &kind) != dnnl_success || kind != dnnl_rnn)
        return false;
    const char *impl = odn_impl_name(pd);
    if (strcmp(impl, "brgemm") == 0) return true;
    /* oneDNN 2.6 names its RNN implementation "ref" whenever it does not
     * take the brgemm path (LSTM and vanilla RNN with AVX-512 only), but
     * that path is not a reference kernel: the cell products are its JIT
     * (packed) sgemm and the gate math its jit_uni_*_postgemm kernels,
     * which it builds for AVX2 and AVX-512 CPUs. Below AVX2 the gate math
     * is plain C++, so it counts as a reference kernel there. */
    if (strcmp(impl, "ref") == 0) return (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx2) == dnnl_cpu_isa_avx2;
    return false;
}

static dnnl_status_t strided(dnnl_memory_desc_t *md, int rank, const int64_t *dims, const int64_t *strides) {
    dnnl_dims_t d, s;
    for (int i = 0; i < rank; i++) {
        d[i] = dims[i];
        s[i] = strides[i];
    }
    return dnnl_memory_desc_init_by_strides(md, rank, d, dnnl_f32, s);
}

/* The strides of oneDNN's [T, N, C] layer tensor over ONNX's layout. */
static void layer_strides(int64_t layout, int64_t steps, int64_t batch, int64_t c, int64_t *s) {
    s[0] = layout ? c : batch * c;
    s[1] = layout ? steps * c : c;
    s[2] = 1;
}

/* The strides of oneDNN's [1, dirs, N, H] state over ONNX's [dirs, N, H]
 * (layout 0) or [N, dirs, H] (layout 1). */
static void state_strides(int64_t layout, int dirs, int64_t batch, int64_t hidden, int64_t *s) {
    s[0] = dirs * batch * hidden;
    s[1] = layout ? hidden : batch * hidden;
    s[2] = layout ? dirs * hidden : hidden;
    s[3] = 1;
}

/* Every descriptor but the states, which the caller fills (or leaves zero:
 * absent). plain: ldigo weights, else oneDNN's choice. */
static dnnl_status_t init_mds(const odn_rnn_attrs_t *a, const odn_rnn_consts *c, int64_t steps, int64_t batch,
                              bool plain, bool peephole, odn_rnn_mds *m) {
    int64_t H = c->hidden, D = a->dirs, G = a->gates, s[4];
    int64_t src[3] = {steps, batch, c->input}, dst[3] = {steps, batch, D * H};
    layer_strides(a->layout, steps, batch, c->input, s);
    dnnl_status_t st = strided(&m->src_layer, 3, src, s);
    layer_strides(a->layout, steps, batch, D * H, s);
    if (st == dnnl_success) st = strided(&m->dst_layer, 3, dst, s);
    dnnl_dims_t wl = {1, D, c->input, G, H}, wi = {1, D, H, G, H}, b = {1, D, G + (a->cell == ODN_RNN_LBR_GRU), H},
                wp = {1, D, 3, H};
    dnnl_format_tag_t wt = plain ? dnnl_ldigo : dnnl_format_tag_any;
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&m->wl, 5, wl, dnnl_f32, wt);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&m->wi, 5, wi, dnnl_f32, wt);
    if (st == dnnl_success) st = dnnl_memory_desc_init_by_tag(&m->bias, 4, b, dnnl_f32, dnnl_ldgo);
    if (st == dnnl_success && peephole) st = dnnl_memory_desc_init_by_tag(&m->wp, 4, wp, dnnl_f32, dnnl_ldgo);
    return st;
}

static dnnl_status_t make_pd(dnnl_engine_t engine, const odn_rnn_attrs_t *a, const odn_rnn_mds *m,
                             dnnl_primitive_desc_t *pd) {
    dnnl_rnn_desc_t d;
    dnnl_status_t st;
    dnnl_prop_kind_t prop = dnnl_forward_inference;
    switch (a->cell) {
    case ODN_RNN_LSTM:
        st = dnnl_lstm_forward_desc_init_v2(&d, prop, a->direction, &m->src_layer, &m->src_iter, &m->src_iter_c, &m->wl,
                                            &m->wi, &m->wp, &m->bias, &m->dst_layer, &m->dst_iter, &m->dst_iter_c, 0);
        break;
    case ODN_RNN_GRU:
        st = dnnl_gru_forward_desc_init(&d, prop, a->direction, &m->src_layer, &m->src_iter, &m->wl, &m->wi, &m->bias,
                                        &m->dst_layer, &m->dst_iter, 0);
        break;
    case ODN_RNN_LBR_GRU:
        st = dnnl_lbr_gru_forward_desc_init(&d, prop, a->direction, &m->src_layer, &m->src_iter, &m->wl, &m->wi,
                                            &m->bias, &m->dst_layer, &m->dst_iter, 0);
        break;
    default:
        st = dnnl_vanilla_rnn_forward_desc_init(&d, prop, a->activation, a->direction, &m->src_layer, &m->src_iter,
                                                &m->wl, &m->wi, &m->bias, &m->dst_layer, &m->dst_iter, 0, 0.0f, 0.0f);
        break;
    }
    if (st != dnnl_success) return st;
    st = dnnl_primitive_desc_create(pd, &d, NULL, engine, NULL);
    if (st != dnnl_success) return st;
    if (!odn_rnn_impl_ok(*pd)) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = NULL;
        return dnnl_unimplemented;
    }
    return dnnl_success;
}

/* Weights in the layout oneDNN asks for (reordered once per session
 * through the constant cache). On AVX2, where its only RNN path is the
 * packed-sgemm one ("ref"), that beats plain ldigo weights at every batch
 * (LSTM T=200 I=32 H=128 one thread: batch 2 2.36 -> 1.6 ms, batch 4 3.3 ->
 * 2.6; H=256 batch 4 5.5 -> 3.0; batch 1 even). With AVX-512, oneDNN's
 * brgemm LSTM/RNN kernels beat that path only for large batches (T=100
 * H=256: batch 1 3.6 vs 1.5 ms, batch 16 12.3 vs 11.5, batch 64 43.7 vs
 * 56.7): below batch 32 a brgemm choice is replaced by plain ldigo weights,
 * which keep oneDNN off brgemm. */
tsr_status *odn_rnn_create_pd(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, const odn_rnn_consts *c,
                              int64_t steps, int64_t batch, odn_rnn_mds *m, dnnl_primitive_desc_t *pd) {
    odn_rnn_mds plain = *m;
    dnnl_status_t st = init_mds(a, c, steps, batch, false, c->p != NULL, m);
    if (st == dnnl_success) st = make_pd(p->engine, a, m, pd);
    if (st == dnnl_success && batch < 32 && strcmp(odn_impl_name(*pd), "brgemm") == 0) {
        dnnl_primitive_desc_t alt = NULL;
        if (init_mds(a, c, steps, batch, true, c->p != NULL, &plain) == dnnl_success &&
            make_pd(p->engine, a, &plain, &alt) == dnnl_success) {
            dnnl_primitive_desc_destroy(*pd);
            *pd = alt;
            *m = plain;
        }
    }
    if (st != dnnl_success) {
        /* oneDNN's choice refused: plain ldigo weights */
        *m = plain;
        st = init_mds(a, c, steps, batch, true, c->p != NULL, m);
        if (st == dnnl_success) st = make_pd(p->engine, a, m, pd);
    }
    if (st == dnnl_success) return NULL;
    if (st == dnnl_unimplemented)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "oneDNN has no kernel but its reference one for this cell");
    return odn_dnnl_error(n, "RNN setup", st);
}

bool odn_rnn_probe(const odn_rnn_attrs_t *a, const odn_rnn_consts *c, bool peephole, char *err, size_t size) {
    dnnl_engine_t engine = NULL;
    dnnl_primitive_desc_t pd = NULL;
    odn_rnn_mds m;
    memset(&m, 0, sizeof m);
    dnnl_status_t st = dnnl_engine_create(&engine, dnnl_cpu, 0);
    if (st == dnnl_success) st = init_mds(a, c, 2, 1, true, peephole, &m);
    if (st == dnnl_success) st = make_pd(engine, a, &m, &pd);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (engine) dnnl_engine_destroy(engine);
    if (st != dnnl_success)
        snprintf(err, size, "oneDNN has no kernel but its reference one for this %s cell",
                 a->cell == ODN_RNN_LSTM          ? "LSTM"
                     : a->cell == ODN_RNN_VANILLA ? "RNN"
                                                  : "GRU");
    return st == dnnl_success;
}

/* W or R [dirs, gates*H, K] into ldigo [dirs, K, gates, H]. */
static void to_ldigo(const float *w, float *out, int64_t dirs, int64_t gates, int64_t hidden, int64_t k,
                     const int *map) {
    for (int64_t d = 0; d < dirs; d++)
        for (int64_t g = 0; g < gates; g++)
            for (int64_t h = 0; h < hidden; h++) {
                const float *row = w + ((d * gates + map[g]) * hidden + h) * k;
                for (int64_t i = 0; i < k; i++) out[((d * k + i) * gates + g) * hidden + h] = row[i];
            }
}

/* A constant in oneDNN's layout `want` from our ldigo buffer. */
static tsr_status *weights_mem(odn_plan *p, const tsr_node *n, const void *host, int cell, const float *ldigo,
                               int64_t k, const odn_rnn_attrs_t *a, int64_t hidden, const dnnl_memory_desc_t *want,
                               dnnl_memory_t *out) {
    dnnl_memory_desc_t plain;
    dnnl_dims_t dims = {1, a->dirs, k, a->gates, hidden};
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&plain, 5, dims, dnnl_f32, dnnl_ldigo);
    if (st != dnnl_success) return odn_dnnl_error(n, "weights layout", st);
    dnnl_memory_t src;
    tsr_status *s = odn_plan_new_mem(p, &plain, (void *)ldigo, n, &src);
    if (s) return s;
    if (dnnl_memory_desc_equal(&plain, want)) {
        *out = src;
        return NULL;
    }
    return odn_arena_const_as_keyed(p, host, &cell_tags[cell], src, &plain, want, n, out);
}

/* The weights, bias and peepholes of directions dir .. dir + a->dirs - 1
 * of the node, converted for `pd` (m: its bias and peephole layouts):
 * out[0] weights_layer, out[1] weights_iter, out[2] bias, out[3]
 * peepholes or NULL. */
tsr_status *odn_rnn_weights(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *ap, const odn_rnn_consts *c, int dir,
                            const_dnnl_primitive_desc_t pd, const odn_rnn_mds *mp, dnnl_memory_t out[4]) {
    const odn_rnn_attrs_t a = *ap;
    const odn_rnn_mds m = *mp;
    int64_t H = c->hidden, D = a.dirs, G = a.gates, I = c->input;
    tsr_status *s = NULL;
    const int *map = gate_map(a.cell);
    /* the first direction's slices; the constant cache keys on these
     * addresses, distinct per direction */
    const float *wsrc = (const float *)c->w->data + dir * G * H * I,
                *rsrc = (const float *)c->r->data + dir * G * H * H;
    const float *bsrc = c->b ? (const float *)c->b->data + dir * 2 * G * H : NULL;
    const float *psrc = c->p ? (const float *)c->p->data + dir * 3 * H : NULL;
    int64_t BG = G + (a.cell == ODN_RNN_LBR_GRU);
    float *wl = odn_plan_alloc(p, (size_t)(D * I * G * H) * sizeof(float));
    float *wi = odn_plan_alloc(p, (size_t)(D * H * G * H) * sizeof(float));
    float *bias = odn_plan_alloc(p, (size_t)(D * BG * H) * sizeof(float));
    float *peep = c->p ? odn_plan_alloc(p, (size_t)(D * 3 * H) * sizeof(float)) : NULL;
    if (!wl || !wi || !bias || (c->p && !peep)) return odn_node_error(n, TSR_ERR_NO_MEMORY, "converted weights");
    to_ldigo(wsrc, wl, D, G, H, I, map);
    to_ldigo(rsrc, wi, D, G, H, H, map);
    for (int64_t d = 0; d < D; d++) {
        for (int64_t g = 0; g < G; g++)
            for (int64_t h = 0; h < H; h++) {
                float wb = bsrc ? bsrc[d * 2 * G * H + map[g] * H + h] : 0.0f;
                float rb = bsrc ? bsrc[d * 2 * G * H + G * H + map[g] * H + h] : 0.0f;
                bias[(d * BG + g) * H + h] = (a.cell == ODN_RNN_LBR_GRU && g == 2) ? wb : wb + rb;
                if (a.cell == ODN_RNN_LBR_GRU && g == 2) bias[(d * BG + 3) * H + h] = rb;
            }
        /* ONNX P: i, o, f; oneDNN: i, f, o */
        static const int pmap[3] = {0, 2, 1};
        for (int64_t g = 0; peep && g < 3; g++)
            for (int64_t h = 0; h < H; h++) peep[(d * 3 + g) * H + h] = psrc[d * 3 * H + pmap[g] * H + h];
    }
    out[3] = NULL;
    s = weights_mem(p, n, wsrc, a.cell, wl, I, &a, H, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                    &out[0]);
    if (!s)
        s = weights_mem(p, n, rsrc, a.cell, wi, H, &a, H, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1),
                        &out[1]);
    /* bias and peepholes: ldgo, as described */
    if (!s) s = odn_plan_new_mem(p, &m.bias, bias, n, &out[2]);
    if (!s && peep) s = odn_plan_new_mem(p, &m.wp, peep, n, &out[3]);
    return s;
}

typedef struct y_copy {
    int64_t steps, batch, hidden; /* two directions */
} y_copy;

/* oneDNN's [T, N, 2, H] into ONNX's [T, 2, N, H]. */
static tsr_status *copy_y(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    const y_copy *c = ctx;
    void *sp = NULL, *dp = NULL;
    dnnl_memory_get_data_handle(src, &sp);
    dnnl_memory_get_data_handle(dst, &dp);
    const float *s = sp;
    float *d = dp;
    size_t row = (size_t)c->hidden * sizeof(float);
    for (int64_t t = 0; t < c->steps; t++)
        for (int64_t dir = 0; dir < 2; dir++)
            for (int64_t b = 0; b < c->batch; b++)
                memcpy(d + ((t * 2 + dir) * c->batch + b) * c->hidden, s + ((t * c->batch + b) * 2 + dir) * c->hidden,
                       row);
    return NULL;
}

static odn_value *output(odn_plan *p, const tsr_node *n, size_t k) {
    return k < odn_host->node_output_count(n) ? odn_plan_value(p, odn_host->node_output(n, k)) : NULL;
}

static odn_value *input(odn_plan *p, const tsr_node *n, size_t k) {
    return k < odn_host->node_input_count(n) ? odn_plan_value(p, odn_host->node_input(n, k)) : NULL;
}

/* A state input (initial_h/initial_c) as oneDNN's [1, dirs, N, H] view. */
static tsr_status *state_in(odn_plan *p, const tsr_node *n, odn_value *v, const char *what, const odn_rnn_attrs_t *a,
                            const odn_rnn_consts *c, int64_t batch, dnnl_memory_desc_t *md, dnnl_memory_t *mem) {
    int64_t want[3] = {a->layout ? batch : a->dirs, a->layout ? a->dirs : batch, c->hidden};
    if (v && v->elem_type != TSR_FLOAT && v->elem_type != 0)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "%s is not float32", what);
    if (!v || !v->mem || v->rank != 3 || memcmp(v->dims, want, sizeof want) != 0)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "%s is not [%lld, %lld, %lld]", what, (long long)want[0],
                              (long long)want[1], (long long)want[2]);
    int64_t dims[4] = {1, a->dirs, batch, c->hidden}, s[4];
    state_strides(a->layout, a->dirs, batch, c->hidden, s);
    return odn_plan_plain_view(p, v, 4, dims, s, n, mem, md);
}

/* A state output (Y_h/Y_c): defined in ONNX's shape, seen as [1, dirs, N, H]. */
static tsr_status *state_out(odn_plan *p, const tsr_node *n, odn_value *v, const odn_rnn_attrs_t *a,
                             const odn_rnn_consts *c, int64_t batch, dnnl_memory_desc_t *md, dnnl_memory_t *mem) {
    int64_t shape[3] = {a->layout ? batch : a->dirs, a->layout ? a->dirs : batch, c->hidden};
    tsr_status *s = odn_plan_define(p, v, 3, shape, NULL, n);
    if (s) return s;
    int64_t dims[4] = {1, a->dirs, batch, c->hidden}, st[4];
    state_strides(a->layout, a->dirs, batch, c->hidden, st);
    return odn_plan_plain_view(p, v, 4, dims, st, n, mem, md);
}

tsr_status *odn_build_rnn(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    char why[256];
    odn_rnn_attrs_t a;
    odn_rnn_consts c;
    if (odn_rnn_attrs(n, &a, why, sizeof why) || odn_rnn_operands(n, &a, &c, why, sizeof why))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "%s", why);
    odn_value *x = input(p, n, 0);
    if (!x || !x->mem || (x->elem_type != TSR_FLOAT && x->elem_type != 0))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "X is not float32");
    if (x->rank != 3 || x->dims[2] != c.input)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "X is not [seq, batch, %lld] (layout %lld)",
                              (long long)c.input, (long long)a.layout);
    int64_t steps = x->dims[a.layout ? 1 : 0], batch = x->dims[a.layout ? 0 : 1], H = c.hidden, D = a.dirs;
    if (steps < 1 || batch < 1) return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "empty sequence or batch");
    bool lens = odn_host->node_input_count(n) > 4 && odn_host->node_input(n, 4);
    if ((lens && !odn_rnn_seq_full(c.seq, steps, batch)) || odn_rnn_loop_wins(&a, &c, steps, batch))
        return odn_build_rnn_seqlens(p, n, &a, &c, steps, batch);

    odn_rnn_mds m;
    memset(&m, 0, sizeof m);
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    int nargs = 0;
    dnnl_memory_t src_layer, src_iter = NULL, src_iter_c = NULL, dst_iter = NULL, dst_iter_c = NULL;
    dnnl_memory_desc_t src_md;
    tsr_status *s;
    {
        int64_t dims[3] = {steps, batch, c.input}, st[3];
        layer_strides(a.layout, steps, batch, c.input, st);
        s = odn_plan_plain_view(p, x, 3, dims, st, n, &src_layer, &src_md);
        if (s) return s;
    }
    odn_value *ih = input(p, n, 5), *ic = a.cell == ODN_RNN_LSTM ? input(p, n, 6) : NULL;
    dnnl_memory_desc_t ih_md, ic_md, yh_md, yc_md;
    memset(&ih_md, 0, sizeof ih_md);
    ic_md = yh_md = yc_md = ih_md;
    if (ih && (s = state_in(p, n, ih, "initial_h", &a, &c, batch, &ih_md, &src_iter))) return s;
    if (ic && (s = state_in(p, n, ic, "initial_c", &a, &c, batch, &ic_md, &src_iter_c))) return s;

    /* outputs */
    odn_value *y = output(p, n, 0), *yh = output(p, n, 1), *yc = a.cell == ODN_RNN_LSTM ? output(p, n, 2) : NULL;
    if (yh && (s = state_out(p, n, yh, &a, &c, batch, &yh_md, &dst_iter))) return s;
    if (yc && (s = state_out(p, n, yc, &a, &c, batch, &yc_md, &dst_iter_c))) return s;

    /* oneDNN's LSTM takes both initial states or neither, and writes both
     * final ones or neither: a missing one is zeros / scratch of the plan */
    if (a.cell == ODN_RNN_LSTM && (!src_iter != !src_iter_c || !dst_iter != !dst_iter_c)) {
        dnnl_memory_desc_t plain;
        dnnl_dims_t dims = {1, D, batch, H};
        dnnl_status_t st = dnnl_memory_desc_init_by_tag(&plain, 4, dims, dnnl_f32, dnnl_ldnc);
        if (st != dnnl_success) return odn_dnnl_error(n, "state layout", st);
        if (!src_iter != !src_iter_c) {
            size_t bytes = (size_t)(D * batch * H) * sizeof(float);
            float *zeros = odn_plan_alloc(p, bytes);
            if (!zeros) return odn_node_error(n, TSR_ERR_NO_MEMORY, "zero initial state");
            memset(zeros, 0, bytes);
            s = odn_plan_new_mem(p, &plain, zeros, n, src_iter ? &src_iter_c : &src_iter);
            if (s) return s;
            *(ih ? &ic_md : &ih_md) = plain;
        }
        if (!dst_iter != !dst_iter_c) {
            s = odn_plan_new_mem(p, &plain, DNNL_MEMORY_ALLOCATE, n, dst_iter ? &dst_iter_c : &dst_iter);
            if (s) return s;
            *(yh ? &yc_md : &yh_md) = plain;
        }
    }
    /* the states are views of the ONNX tensors (or absent: zero descriptors) */
    m.src_iter = ih_md;
    m.src_iter_c = ic_md;
    m.dst_iter = yh_md;
    m.dst_iter_c = yc_md;
    dnnl_primitive_desc_t pd = NULL;
    s = odn_rnn_create_pd(p, n, &a, &c, steps, batch, &m, &pd);
    if (s) return s;

    /* Y: a view where oneDNN's [T, N, dirs*H] is ONNX's layout, else a
     * buffer of the plan's (copied to a bidirectional layout-0 Y, or
     * scratch when Y is omitted) */
    dnnl_memory_t dst_layer = NULL, y_buf = NULL;
    const dnnl_memory_desc_t *dl_md = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    if (y) {
        int64_t shape[4] = {a.layout ? batch : steps, a.layout ? steps : D, a.layout ? D : batch, H};
        s = odn_plan_define(p, y, 4, shape, NULL, n);
        if (!s && (a.layout || D == 1)) {
            int64_t dims[3] = {steps, batch, D * H}, st[3];
            layer_strides(a.layout, steps, batch, D * H, st);
            s = odn_plan_plain_view(p, y, 3, dims, st, n, &dst_layer, NULL);
        }
        if (s) goto fail;
    }
    if (!dst_layer) {
        s = odn_plan_new_mem(p, dl_md, DNNL_MEMORY_ALLOCATE, n, &y_buf);
        if (s) goto fail;
        dst_layer = y_buf;
    }

    /* weights, bias, peepholes */
    {
        dnnl_memory_t w[4];
        s = odn_rnn_weights(p, n, &a, &c, 0, pd, &m, w);
        if (s) goto fail;
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_LAYER, src_layer};
        if (src_iter) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_ITER, src_iter};
        if (src_iter_c) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_ITER_C, src_iter_c};
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS_LAYER, w[0]};
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS_ITER, w[1]};
        if (w[3]) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS_PEEPHOLE, w[3]};
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, w[2]};
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST_LAYER, dst_layer};
        if (dst_iter) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST_ITER, dst_iter};
        if (dst_iter_c) args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST_ITER_C, dst_iter_c};
    }
    s = odn_plan_add_primitive(p, pd, n, args, nargs);
    dnnl_primitive_desc_destroy(pd);
    pd = NULL;
    if (s) return s;
    if (y && y_buf) {
        y_copy *yc_ctx = odn_plan_alloc(p, sizeof *yc_ctx);
        if (!yc_ctx) return odn_node_error(n, TSR_ERR_NO_MEMORY, "Y copy");
        *yc_ctx = (y_copy){steps, batch, H};
        return odn_plan_add_loop(p, copy_y, yc_ctx, y_buf, y->mem, n);
    }
    return NULL;
fail:
    if (pd) dnnl_primitive_desc_destroy(pd);
    return s;
}
