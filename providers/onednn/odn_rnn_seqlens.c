/* LSTM, GRU and RNN whose sequence_lens differ per batch row or are fed at
 * run time (PyTorch's packed sequences), on oneDNN with ONNX's semantics:
 * row b runs its first len_b steps only (the reverse direction from step
 * len_b - 1 down to 0), its Y rows from len_b on are zero and its Y_h/Y_c
 * are the state after its last step (the initial state when len_b = 0, as
 * the reference provider does).
 *
 * oneDNN's RNN primitive has no per-row lengths, and its dst_iter is the
 * state after the last step only, so one primitive over all T steps cannot
 * give the cell state of a shorter row (nor start a reversed one at its own
 * last step). Here one single-step primitive per direction (batch B) is
 * run step by step from a C loop, which keeps each direction's states and
 * commits a step's new state only for the rows still inside their length:
 * frozen rows keep theirs, not-yet-started reverse rows keep the initial
 * one. Steps at or past the longest length are skipped. The lengths are
 * read at run time, so one plan serves every set of lengths.
 *
 * The primitives are plan steps (so the plan owns and destroys them); each
 * also runs once there on scratch states, which the loop after it
 * overwrites. */
#include <string.h>

#include "odn_rnn.h"

typedef struct seq_ctx {
    const tsr_node *node;
    int64_t steps, batch, input, hidden, layout;
    int dirs;
    bool lstm, reverse[2]; /* per direction: runs from the last step down */
    dnnl_stream_t stream;
    dnnl_primitive_t prim[2]; /* per direction: one step, batch rows */
    dnnl_exec_arg_t args[2][ODN_MAX_ARGS];
    int nargs[2];
    const int64_t *fixed; /* lengths known when built, else NULL */
    dnnl_memory_t lens;   /* int32 or int64 lengths read each run, else NULL */
    bool lens64;
    dnnl_memory_t x, ih, ic, y, yh, yc; /* the ONNX tensors (plain); NULL: absent */
    float *xs;                          /* the step's input rows [B, I] */
    float *h[2], *c[2];                 /* each direction's state [B, H] */
    float *hn, *cn;                     /* the state the step computed */
    int64_t *len;                       /* this run's lengths */
} seq_ctx;

static void *handle(dnnl_memory_t m) {
    void *p = NULL;
    if (m) dnnl_memory_get_data_handle(m, &p);
    return p;
}

/* Offsets (in floats) of X's row (t, b), of Y's (t, dir, b) and of a
 * state's (dir, b) in ONNX's layout 0 or 1. */
static int64_t x_off(const seq_ctx *s, int64_t t, int64_t b) {
    return (s->layout ? b * s->steps + t : t * s->batch + b) * s->input;
}
static int64_t y_off(const seq_ctx *s, int64_t t, int dir, int64_t b) {
    return (s->layout ? (b * s->steps + t) * s->dirs + dir : (t * s->dirs + dir) * s->batch + b) * s->hidden;
}
static int64_t state_off(const seq_ctx *s, int dir, int64_t b) {
    return (s->layout ? b * s->dirs + dir : dir * s->batch + b) * s->hidden;
}

/* This run's lengths into s->len, each checked; `longest` their maximum. */
static tsr_status *load_lens(seq_ctx *s, int64_t *longest) {
    const void *src = s->fixed ? (const void *)s->fixed : handle(s->lens);
    bool wide = s->fixed || s->lens64;
    *longest = 0;
    for (int64_t b = 0; b < s->batch; b++) {
        int64_t v = wide ? ((const int64_t *)src)[b] : ((const int32_t *)src)[b];
        if (v < 0 || v > s->steps)
            return odn_node_error(s->node, TSR_ERR_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                                  (long long)b, (long long)v, (long long)s->steps);
        s->len[b] = v;
        if (v > *longest) *longest = v;
    }
    return NULL;
}

/* The rows of Y at step t and direction dir: the new state where the row
 * is inside its length (which becomes its state), else zeros. */
static void commit(seq_ctx *s, int64_t t, int dir) {
    int64_t H = s->hidden;
    float *y = handle(s->y);
    size_t row = (size_t)H * sizeof(float);
    for (int64_t b = 0; b < s->batch; b++) {
        bool on = t < s->len[b];
        if (on) {
            memcpy(s->h[dir] + b * H, s->hn + b * H, row);
            if (s->lstm) memcpy(s->c[dir] + b * H, s->cn + b * H, row);
        }
        if (y) {
            if (on) memcpy(y + y_off(s, t, dir, b), s->hn + b * H, row);
            else memset(y + y_off(s, t, dir, b), 0, row);
        }
    }
}

static tsr_status *run_seq(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    (void)src;
    (void)dst;
    seq_ctx *s = (seq_ctx *)ctx;
    int64_t B = s->batch, H = s->hidden, I = s->input, longest;
    size_t row = (size_t)H * sizeof(float);
    tsr_status *e = load_lens(s, &longest);
    if (e) return e;
    const float *x = handle(s->x), *ih = handle(s->ih), *ic = handle(s->ic);
    float *y = handle(s->y), *yh = handle(s->yh), *yc = handle(s->yc);
    for (int dir = 0; dir < s->dirs; dir++) {
        for (int64_t b = 0; b < B; b++) {
            if (ih) memcpy(s->h[dir] + b * H, ih + state_off(s, dir, b), row);
            else memset(s->h[dir] + b * H, 0, row);
            if (!s->lstm) continue;
            if (ic) memcpy(s->c[dir] + b * H, ic + state_off(s, dir, b), row);
            else memset(s->c[dir] + b * H, 0, row);
        }
        /* every row is past its length from `longest` on */
        for (int64_t t = longest; y && t < s->steps; t++)
            for (int64_t b = 0; b < B; b++) memset(y + y_off(s, t, dir, b), 0, row);
        for (int64_t k = 0; k < longest; k++) {
            int64_t t = s->reverse[dir] ? longest - 1 - k : k;
            for (int64_t b = 0; b < B; b++) memcpy(s->xs + b * I, x + x_off(s, t, b), (size_t)I * sizeof(float));
            dnnl_status_t st = dnnl_primitive_execute(s->prim[dir], s->stream, s->nargs[dir], s->args[dir]);
            if (st == dnnl_success) st = dnnl_stream_wait(s->stream);
            if (st != dnnl_success) return odn_dnnl_error(s->node, "RNN step", st);
            commit(s, t, dir);
        }
        for (int64_t b = 0; b < B; b++) {
            if (yh) memcpy(yh + state_off(s, dir, b), s->h[dir] + b * H, row);
            if (yc) memcpy(yc + state_off(s, dir, b), s->c[dir] + b * H, row);
        }
    }
    return NULL;
}

static odn_value *input(odn_plan *p, const tsr_node *n, size_t k) {
    return k < odn_host->node_input_count(n) ? odn_plan_value(p, odn_host->node_input(n, k)) : NULL;
}

static odn_value *output(odn_plan *p, const tsr_node *n, size_t k) {
    return k < odn_host->node_output_count(n) ? odn_plan_value(p, odn_host->node_output(n, k)) : NULL;
}

/* A float buffer of the plan, and a plain dnnl memory over it. */
static tsr_status *buffer(odn_plan *p, const tsr_node *n, int rank, const int64_t *dims, float **buf,
                          dnnl_memory_t *mem, dnnl_memory_desc_t *md) {
    int64_t count = odn_numel(rank, dims);
    *buf = count > 0 ? odn_plan_alloc(p, (size_t)count * sizeof(float)) : NULL;
    if (!*buf) return odn_node_error(n, TSR_ERR_NO_MEMORY, "RNN state");
    memset(*buf, 0, (size_t)count * sizeof(float));
    if (odn_plain_md(md, rank, dims) != dnnl_success) return odn_node_error(n, TSR_ERR_PROVIDER, "RNN state layout");
    return odn_plan_new_mem(p, md, *buf, n, mem);
}

/* A float32 input (X, initial_h, initial_c) of shape `want` as plain memory. */
static tsr_status *plain_in(odn_plan *p, const tsr_node *n, odn_value *v, const char *what, const int64_t *want,
                            dnnl_memory_t *mem) {
    if (v->elem_type != TSR_FLOAT && v->elem_type != 0)
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "%s is not float32", what);
    if (v->rank != 3 || memcmp(v->dims, want, 3 * sizeof(int64_t)) != 0)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "%s is not [%lld, %lld, %lld]", what, (long long)want[0],
                              (long long)want[1], (long long)want[2]);
    return odn_plan_plain_mem(p, v, n, mem);
}

/* Where the lengths come from: fixed when known now (a constant, or an
 * int64 value input the plan is built for), else read each run. */
static tsr_status *lengths(odn_plan *p, const tsr_node *n, const odn_rnn_consts *c, seq_ctx *s) {
    int64_t B = s->batch;
    if (c->seq) {
        const tsr_tensor *t = c->seq;
        int64_t *fixed = odn_plan_alloc(p, (size_t)B * sizeof(int64_t));
        if (!fixed) return odn_node_error(n, TSR_ERR_NO_MEMORY, "sequence_lens");
        bool ok = t->rank == 1 && t->dims[0] == B;
        for (int64_t b = 0; ok && b < B; b++) {
            if (t->elem_type == TSR_INT64 && t->nbytes >= (uint64_t)(b + 1) * 8)
                fixed[b] = ((const int64_t *)t->data)[b];
            else if (t->elem_type == TSR_INT32 && t->nbytes >= (uint64_t)(b + 1) * 4)
                fixed[b] = ((const int32_t *)t->data)[b];
            else ok = false;
        }
        if (!ok)
            return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "sequence_lens is not an integer [%lld]", (long long)B);
        s->fixed = fixed;
        return NULL;
    }
    int64_t count = 0;
    const int64_t *v64 = odn_plan_i64(p, odn_host->node_input(n, 4), &count);
    if (v64) {
        if (count != B) return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "sequence_lens is not [%lld]", (long long)B);
        s->fixed = v64;
        return NULL;
    }
    odn_value *v = input(p, n, 4);
    if (!v || !v->mem || (v->elem_type != TSR_INT32 && v->elem_type != TSR_INT64))
        return odn_node_error(n, TSR_ERR_NOT_SUPPORTED, "sequence_lens is not an int32 or int64 tensor");
    if (v->rank != 1 || v->dims[0] != B)
        return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "sequence_lens is not [%lld]", (long long)B);
    s->lens64 = v->elem_type == TSR_INT64;
    return odn_plan_plain_mem(p, v, n, &s->lens);
}

tsr_status *odn_build_rnn_seqlens(odn_plan *p, const tsr_node *n, const odn_rnn_attrs_t *a, const odn_rnn_consts *c,
                                  int64_t steps, int64_t batch) {
    seq_ctx *s = odn_plan_alloc(p, sizeof *s);
    if (!s) return odn_node_error(n, TSR_ERR_NO_MEMORY, "RNN context");
    memset(s, 0, sizeof *s);
    int64_t B = batch, H = c->hidden, I = c->input;
    *s = (seq_ctx){.node = n,
                   .steps = steps,
                   .batch = B,
                   .input = I,
                   .hidden = H,
                   .layout = a->layout,
                   .dirs = a->dirs,
                   .lstm = a->cell == ODN_RNN_LSTM,
                   .stream = p->stream};
    s->reverse[0] = a->direction == dnnl_unidirectional_right2left;
    s->reverse[1] = true;
    s->len = odn_plan_alloc(p, (size_t)B * sizeof(int64_t));
    if (!s->len) return odn_node_error(n, TSR_ERR_NO_MEMORY, "RNN context");
    tsr_status *e = lengths(p, n, c, s);
    if (e) return e;

    /* the ONNX tensors */
    int64_t xd[3] = {a->layout ? B : steps, a->layout ? steps : B, I};
    int64_t sd[3] = {a->layout ? B : a->dirs, a->layout ? a->dirs : B, H};
    if ((e = plain_in(p, n, input(p, n, 0), "X", xd, &s->x))) return e;
    odn_value *ih = input(p, n, 5), *ic = s->lstm ? input(p, n, 6) : NULL;
    if (ih && (e = plain_in(p, n, ih, "initial_h", sd, &s->ih))) return e;
    if (ic && (e = plain_in(p, n, ic, "initial_c", sd, &s->ic))) return e;
    odn_value *y = output(p, n, 0), *yh = output(p, n, 1), *yc = s->lstm ? output(p, n, 2) : NULL;
    if (y) {
        int64_t shape[4] = {a->layout ? B : steps, a->layout ? steps : a->dirs, a->layout ? a->dirs : B, H};
        if ((e = odn_plan_define(p, y, 4, shape, NULL, n)) || (e = odn_plan_plain_mem(p, y, n, &s->y))) return e;
    }
    if (yh && ((e = odn_plan_define(p, yh, 3, sd, NULL, n)) || (e = odn_plan_plain_mem(p, yh, n, &s->yh)))) return e;
    if (yc && ((e = odn_plan_define(p, yc, 3, sd, NULL, n)) || (e = odn_plan_plain_mem(p, yc, n, &s->yc)))) return e;

    /* one step of one direction over the plan's buffers */
    odn_rnn_attrs_t one = *a;
    one.dirs = 1;
    one.layout = 0;
    one.direction = dnnl_unidirectional_left2right;
    int64_t layer[3] = {1, B, I}, out[3] = {1, B, H}, state[4] = {1, 1, B, H};
    dnnl_memory_t xs, hn, cn = NULL, hscratch = NULL, hm[2] = {NULL, NULL}, cm[2] = {NULL, NULL};
    odn_rnn_mds m;
    memset(&m, 0, sizeof m);
    if ((e = buffer(p, n, 3, layer, &s->xs, &xs, &m.src_layer)) ||
        (e = buffer(p, n, 3, out, &s->hn, &hn, &m.dst_layer)))
        return e;
    for (int d = 0; d < a->dirs; d++) {
        if ((e = buffer(p, n, 4, state, &s->h[d], &hm[d], &m.src_iter))) return e;
        if (s->lstm && (e = buffer(p, n, 4, state, &s->c[d], &cm[d], &m.src_iter_c))) return e;
    }
    if (s->lstm) {
        /* oneDNN's LSTM writes both final states or neither: h also lands
         * in dst_layer, read from there */
        float *unused;
        if ((e = buffer(p, n, 4, state, &unused, &hscratch, &m.dst_iter)) ||
            (e = buffer(p, n, 4, state, &s->cn, &cn, &m.dst_iter_c)))
            return e;
    }
    for (int d = 0; d < a->dirs; d++) {
        odn_rnn_mds md = m;
        dnnl_primitive_desc_t pd = NULL;
        if ((e = odn_rnn_create_pd(p, n, &one, c, 1, B, &md, &pd))) return e;
        dnnl_memory_t w[4];
        e = odn_rnn_weights(p, n, &one, c, d, pd, &md, w);
        if (e) {
            dnnl_primitive_desc_destroy(pd);
            return e;
        }
        dnnl_exec_arg_t *args = s->args[d];
        int k = 0;
        args[k++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_LAYER, xs};
        args[k++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_ITER, hm[d]};
        if (s->lstm) args[k++] = (dnnl_exec_arg_t){DNNL_ARG_SRC_ITER_C, cm[d]};
        args[k++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS_LAYER, w[0]};
        args[k++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS_ITER, w[1]};
        if (w[3]) args[k++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS_PEEPHOLE, w[3]};
        args[k++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, w[2]};
        args[k++] = (dnnl_exec_arg_t){DNNL_ARG_DST_LAYER, hn};
        if (s->lstm) {
            args[k++] = (dnnl_exec_arg_t){DNNL_ARG_DST_ITER, hscratch};
            args[k++] = (dnnl_exec_arg_t){DNNL_ARG_DST_ITER_C, cn};
        }
        s->nargs[d] = k;
        /* the plan owns the primitive: a step of its own (run once on
         * scratch states each run, before the loop sets them) */
        e = odn_plan_add_primitive(p, pd, n, args, k);
        dnnl_primitive_desc_destroy(pd);
        if (e) return e;
        s->prim[d] = p->steps[p->step_count - 1].prim;
    }
    /* the loop reads and writes the ONNX tensors (named for the arena) */
    dnnl_exec_arg_t largs[8];
    int k = 0;
    dnnl_memory_t touched[7] = {s->x, s->y ? s->y : hn, s->ih, s->ic, s->lens, s->yh, s->yc};
    for (int i = 0; i < 7; i++)
        if (touched[i]) largs[k++] = (dnnl_exec_arg_t){i == 1 ? DNNL_ARG_DST : DNNL_ARG_MULTIPLE_SRC + i, touched[i]};
    return odn_plan_add_loop_args(p, run_seq, s, largs, k, n);
}
