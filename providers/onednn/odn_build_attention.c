/* Attention as exporters write it,
 *
 *     MatMul(Q, K^T) -> [Mul|Div by a scalar, Add(bias or mask),
 *                        Where(mask, scores, fill)]... -> Softmax(last axis)
 *                    -> MatMul(., V)
 *
 * built as one step of odn_attention.c (its header says why). Q, K^T and V
 * are read where they lie, through the strides of their views (the head
 * split's Reshape/Transpose cost nothing), and when the output's only
 * reader is the Transpose that merges the heads back, the step writes that
 * layout directly. Anything else (a score modifier of another kind, an
 * operand computed only after the first MatMul, a float16 model, a CPU
 * without AVX2) leaves the nodes to their own builders. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "odn.h"
#include "odn_attention.h"
#include "odn_sgemm.h"

/* The step: the kernel's description with every data pointer NULL, filled
 * in at run time from the memories (whose buffers are bound per run). */
typedef struct att_step {
    odn_attention a;
    dnnl_memory_t q, k, v, o, t[ODN_ATT_MAX_MODS];
    int64_t q_off, k_off, v_off, o_off, t_off[ODN_ATT_MAX_MODS]; /* bytes past the handle (a view's offset0) */
    int threads;
    const struct odn_wino_scratch *scratch;
} att_step;

static void *data_at(dnnl_memory_t m, int64_t off) {
    void *h = NULL;
    if (m) dnnl_memory_get_data_handle(m, &h);
    return h ? (char *)h + off : NULL;
}

static tsr_status *run_attention(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    (void)src;
    (void)dst;
    const att_step *s = ctx;
    odn_attention a = s->a;
    a.q.data = data_at(s->q, s->q_off);
    a.k.data = data_at(s->k, s->k_off);
    a.v.data = data_at(s->v, s->v_off);
    a.o.data = data_at(s->o, s->o_off);
    bool ok = a.q.data && a.k.data && a.v.data && a.o.data && odn_wino_scratch_buf(s->scratch);
    for (int i = 0; i < a.nmods; i++)
        if (a.mods[i].kind == ODN_ATT_ADD || a.mods[i].kind == ODN_ATT_SELECT) {
            a.mods[i].t.data = data_at(s->t[i], s->t_off[i]);
            ok = ok && a.mods[i].t.data;
        }
    if (!ok) return odn_host->status_new(TSR_ERR_PROVIDER, "onednn: attention step without buffers");
    odn_attention_run(&a, odn_wino_scratch_buf(s->scratch), s->threads);
    return NULL;
}

static bool is_op(const tsr_node *n, const char *op) {
    if (!n || strcmp(odn_host->node_op_type(n), op) != 0) return false;
    const char *dom = odn_host->node_domain(n);
    return !dom[0] || strcmp(dom, "ai.onnx") == 0;
}

static bool is_float(const odn_value *v) {
    return v && !v->f16 && (v->elem_type == 0 || v->elem_type == TSR_FLOAT);
}

/* `v`'s dims right-aligned to rank r (leading 1s); false when v's rank is above r. */
static bool padded_dims(const odn_value *v, int32_t r, int64_t *d) {
    if (v->rank > r) return false;
    for (int32_t i = 0; i < r; i++) d[i] = i < r - v->rank ? 1 : v->dims[i - (r - v->rank)];
    return true;
}

/* Whether `v` broadcasts to `dims` (rank r) without enlarging it. */
static bool broadcasts_to(const odn_value *v, int32_t r, const int64_t *dims) {
    int64_t d[ODN_MAX_RANK];
    if (!padded_dims(v, r, d)) return false;
    for (int32_t i = 0; i < r; i++)
        if (d[i] != 1 && d[i] != dims[i]) return false;
    return true;
}

/* A float32 scalar constant's value. */
static bool scalar_constant(const odn_value *v, float *out) {
    if (!v || !v->constant || v->constant->elem_type != TSR_FLOAT || odn_numel(v->rank, v->dims) != 1 ||
        !v->constant->data || v->constant->nbytes < sizeof(float))
        return false;
    memcpy(out, v->constant->data, sizeof(float));
    return true;
}

/* The operand strides of memory descriptor `md` (plain, any strides) read
 * as a tensor of dims `dims` (rank r): 0 along broadcast dims. */
static bool operand_strides(const dnnl_memory_desc_t *md, size_t elem, int32_t r, const int64_t *dims,
                            odn_att_operand *op, int64_t *off) {
    if (md->format_kind != dnnl_blocked || md->format_desc.blocking.inner_nblks != 0 || md->ndims > r ||
        md->ndims < 1)
        return false;
    int64_t st[ODN_MAX_RANK];
    int32_t lead = r - md->ndims;
    for (int32_t i = 0; i < r; i++) {
        int64_t d = i < lead ? 1 : md->dims[i - lead];
        int64_t s = i < lead ? 0 : md->format_desc.blocking.strides[i - lead];
        if (d != 1 && d != dims[i]) return false;
        st[i] = d == 1 ? 0 : s;
        if (st[i] < 0) return false;
    }
    *op = (odn_att_operand){0};
    for (int32_t i = 0; i + 2 < r; i++) op->bstride[i] = st[i];
    op->rs = st[r - 2];
    op->cs = st[r - 1];
    *off = md->offset0 * (int64_t)elem;
    return true;
}

/* `v`'s memory as a plain tensor with any strides: its own when it is
 * one (a Transpose or Slice view), else a row-major copy. */
static tsr_status *float_mem(odn_plan *p, odn_value *v, const tsr_node *n, dnnl_memory_t *mem,
                             const dnnl_memory_desc_t **md) {
    if (v->md.format_kind == dnnl_blocked && v->md.format_desc.blocking.inner_nblks == 0 && v->mem) {
        *mem = v->mem;
        *md = &v->md;
        return NULL;
    }
    tsr_status *s = odn_plan_plain_mem(p, v, n, mem);
    if (!s) dnnl_memory_get_memory_desc(*mem, md);
    return s;
}

/* The nodes of one attention, found from its first MatMul. */
typedef struct att_match {
    const tsr_node *nodes[ODN_ATT_MAX_MODS + 3]; /* MatMul, mods..., Softmax, MatMul */
    int count;
    odn_value *q, *kt, *v, *o, *t[ODN_ATT_MAX_MODS];
    int32_t r;
    int64_t s_dims[ODN_MAX_RANK], o_dims[ODN_MAX_RANK];
    const odn_value *scores[ODN_ATT_MAX_MODS + 1]; /* the first product and each mod's result */
    int nscores;
    const tsr_node *skipped[2 * ODN_ATT_MAX_MODS]; /* Expands read through, and their Shapes */
    int nskipped;
    int shape_readers; /* Shape nodes reading the scores */
    /* a node built early (ready()) that failed: marked done, so the plan
     * must fail with its error rather than go on without it */
    tsr_status *pull_error;
} att_match;

/* The one reader of scores `v` other than Shape nodes (which count into
 * m->shape_readers: expand_as(scores) reads the scores' shape, and such a
 * Shape must feed an Expand the step reads through); NULL when none or
 * several, or when v leaves the piece. */
static const tsr_node *score_reader(const odn_plan *p, const odn_value *v, att_match *m) {
    if (v->output_index >= 0 || v->reader < 0) return NULL;
    const tsr_node *found = NULL;
    int readers = 0;
    for (size_t j = (size_t)v->reader; j < p->node_count && readers < v->consumers; j++) {
        const tsr_node *n = p->nodes[j];
        for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
            if (odn_plan_value((odn_plan *)p, odn_host->node_input(n, k)) != v) continue;
            readers++;
            if (p->done[j]) return NULL;
            if (strcmp(odn_host->node_op_type(n), "Shape") == 0) m->shape_readers++;
            else if (found && found != n) return NULL;
            else found = n;
        }
    }
    return found;
}

static bool ready(odn_plan *p, odn_value *v, int depth, att_match *m);

/* The node computing v inside the piece and not built yet, or NULL. */
static const tsr_node *pending_producer(odn_plan *p, const odn_value *v) {
    if (!v || v->producer < 0 || (size_t)v->producer >= p->node_count || p->done[v->producer]) return NULL;
    return p->nodes[v->producer];
}

/* A mask or bias `t` that is an Expand read only by `reader`, to the
 * scores' own shape (Expand(x, Shape(scores)): torch's expand_as, as
 * DistilBERT writes its mask) or to a constant shape that does not widen
 * them: its input, which the step reads with broadcast strides; else t. The
 * Expand (and its Shape) are then recorded to be skipped. */
static odn_value *unexpanded(odn_plan *p, odn_value *t, const tsr_node *reader, att_match *m) {
    const tsr_node *ex = pending_producer(p, t);
    if (!is_op(ex, "Expand") || odn_host->node_input_count(ex) != 2 || odn_plan_sole_consumer(p, t) != reader ||
        m->nskipped + 2 > 2 * ODN_ATT_MAX_MODS)
        return t;
    odn_value *x = odn_plan_value(p, odn_host->node_input(ex, 0));
    const tsr_value_info *sv = odn_host->node_input(ex, 1);
    odn_value *shape = odn_plan_value(p, sv);
    if (!x || !shape || x->elem_type != t->elem_type || !ready(p, x, 8, m) || !broadcasts_to(x, m->r, m->s_dims))
        return t;
    int64_t count, out[ODN_MAX_RANK];
    int32_t ro;
    const int64_t *dims = odn_plan_i64(p, sv, &count);
    const tsr_node *sh = pending_producer(p, shape);
    if (dims && count <= ODN_MAX_RANK && odn_expand_dims(x->dims, x->rank, dims, (int32_t)count, out, &ro) &&
        ro <= m->r) {
        int64_t pad[ODN_MAX_RANK];
        for (int32_t i = 0; i < m->r; i++) pad[i] = i < m->r - ro ? 1 : out[i - (m->r - ro)];
        for (int32_t i = 0; i < m->r; i++)
            if (pad[i] != 1 && pad[i] != m->s_dims[i]) return t;
        m->skipped[m->nskipped++] = ex;
        return x;
    }
    if (!is_op(sh, "Shape") || odn_host->node_attr_find(sh, "start") || odn_host->node_attr_find(sh, "end") ||
        odn_plan_sole_consumer(p, shape) != ex)
        return t;
    const odn_value *of = odn_plan_value(p, odn_host->node_input(sh, 0));
    for (int i = 0; i < m->nscores; i++)
        if (of == m->scores[i]) {
            m->skipped[m->nskipped++] = ex;
            m->skipped[m->nskipped++] = sh;
            return x;
        }
    return t;
}

/* One score modifier at node c reading the scores `cur`; false when c is
 * none the kernel takes. */
static bool match_mod(odn_plan *p, const tsr_node *c, const odn_value *cur, att_match *m, odn_att_mod *mod,
                      odn_value **t) {
    size_t nin = odn_host->node_input_count(c);
    odn_value *in[3] = {NULL, NULL, NULL};
    for (size_t i = 0; i < nin && i < 3; i++) in[i] = odn_plan_value(p, odn_host->node_input(c, i));
    *t = NULL;
    if ((is_op(c, "Mul") || is_op(c, "Div") || is_op(c, "Add")) && nin == 2) {
        bool first = in[0] == cur;
        odn_value *other = first ? in[1] : in[0];
        if (!other || other == cur || (!first && in[1] != cur)) return false;
        if (is_op(c, "Add")) {
            other = unexpanded(p, other, c, m);
            if (!is_float(other) || !broadcasts_to(other, m->r, m->s_dims)) return false;
            *mod = (odn_att_mod){.kind = ODN_ATT_ADD};
            *t = other;
            return true;
        }
        if (is_op(c, "Div") && !first) return false; /* c / s is not a scaling */
        *mod = (odn_att_mod){.kind = is_op(c, "Mul") ? ODN_ATT_MUL : ODN_ATT_DIV};
        return other->rank <= m->r && scalar_constant(other, &mod->value);
    }
    if (is_op(c, "Where") && nin == 3 && in[0] && in[0] != cur && (in[1] == cur) != (in[2] == cur)) {
        odn_value *fill = in[1] == cur ? in[2] : in[1];
        odn_value *cond = unexpanded(p, in[0], c, m);
        if (cond->elem_type != TSR_BOOL || !broadcasts_to(cond, m->r, m->s_dims) || fill->rank > m->r) return false;
        *mod = (odn_att_mod){.kind = ODN_ATT_SELECT, .fill_if_true = in[1] == fill};
        *t = cond;
        return scalar_constant(fill, &mod->value);
    }
    return false;
}

/* MatMul, Softmax and MatMul dims: Q [.., tq, d] x K^T [.., d, tk] -> S,
 * S x V [.., tk, dv] -> O with S's batch dims. */
static bool match_shapes(att_match *m) {
    int32_t r = m->q->rank > m->kt->rank ? m->q->rank : m->kt->rank;
    if (m->q->rank < 2 || m->kt->rank < 2 || m->v->rank < 2 || r > 2 + ODN_ATT_MAX_BATCH || m->v->rank > r)
        return false;
    int64_t pq[ODN_MAX_RANK], pk[ODN_MAX_RANK], pv[ODN_MAX_RANK];
    padded_dims(m->q, r, pq);
    padded_dims(m->kt, r, pk);
    padded_dims(m->v, r, pv);
    if (pq[r - 1] != pk[r - 2] || pv[r - 2] != pk[r - 1]) return false;
    for (int32_t i = 0; i + 2 < r; i++) {
        if (pq[i] != pk[i] && pq[i] != 1 && pk[i] != 1) return false;
        m->s_dims[i] = pq[i] == 1 ? pk[i] : pq[i];
        if (pv[i] != 1 && pv[i] != m->s_dims[i]) return false; /* V would widen the stack */
        m->o_dims[i] = m->s_dims[i];
    }
    m->s_dims[r - 2] = m->o_dims[r - 2] = pq[r - 2];
    m->s_dims[r - 1] = pk[r - 1];
    m->o_dims[r - 1] = pv[r - 1];
    m->r = r;
    return odn_numel(r, m->s_dims) > 0 && odn_numel(r, m->o_dims) > 0;
}

/* Whether `v` is computed, building now the node that computes it when
 * that is a view (Reshape-like), a Slice or shape arithmetic whose inputs
 * are, or can be so made (DistilBERT reshapes its mask, to a shape computed
 * from the hidden states, after the scores' MatMul, where the step runs;
 * GPT-2 slices its causal mask to the sequence lengths there): building
 * such a node early changes nothing but its place among the steps. */
static bool ready(odn_plan *p, odn_value *v, int depth, att_match *m) {
    if (v->produced) return true;
    const tsr_node *n = pending_producer(p, v);
    static const char *const views[] = {"Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Slice"};
    bool early = n && odn_shape_calc_node(p, n);
    for (size_t i = 0; n && i < sizeof views / sizeof *views; i++) early = early || is_op(n, views[i]);
    if (!early || depth == 0 || odn_host->node_output_count(n) != 1) return false;
    for (size_t k = 0; k < odn_host->node_input_count(n); k++) {
        const tsr_value_info *vi = odn_host->node_input(n, k);
        odn_value *x = vi ? odn_plan_value(p, vi) : NULL;
        if (vi && (!x || !ready(p, x, depth - 1, m))) return false;
    }
    const tsr_node *building = p->building;
    tsr_status *s = odn_build_node(p, (size_t)v->producer);
    p->building = building;
    if (s) {
        if (m->pull_error) odn_host->status_free(s);
        else m->pull_error = s;
        return false;
    }
    return v->produced;
}

/* Every operand computed by a step already: an exporter may write a mask
 * or a position bias after the first MatMul, and the step runs there. */
static bool operands_ready(odn_plan *p, att_match *m, int nmods) {
    odn_value *need[3 + ODN_ATT_MAX_MODS] = {m->q, m->kt, m->v};
    int count = 3;
    for (int i = 0; i < nmods; i++)
        if (m->t[i]) need[count++] = m->t[i];
    for (int i = 0; i < count; i++)
        /* a bool piece input gets its memory when first read (odn_bool_mem) */
        if (!ready(p, need[i], 8, m) || (!need[i]->mem && !need[i]->constant && need[i]->input_index < 0) ||
            need[i]->defer_src)
            return false;
    return true;
}

static bool match(odn_plan *p, const tsr_node *mm1, att_match *m, odn_attention *a) {
    *m = (att_match){.nodes = {mm1}, .count = 1};
    *a = (odn_attention){0};
    m->q = odn_plan_value(p, odn_host->node_input(mm1, 0));
    m->kt = odn_plan_value(p, odn_host->node_input(mm1, 1));
    odn_value *cur = odn_plan_value(p, odn_host->node_output(mm1, 0));
    if (!is_float(m->q) || !is_float(m->kt) || !is_float(cur)) return false;
    const tsr_node *c = score_reader(p, cur, m);
    /* the Softmax, and the shapes, come first: mods need S's dims */
    const tsr_node *sm = c;
    const odn_value *at = cur;
    for (int i = 0; sm && !is_op(sm, "Softmax") && i <= ODN_ATT_MAX_MODS; i++) {
        at = odn_plan_value(p, odn_host->node_output(sm, 0));
        sm = at ? score_reader(p, at, &(att_match){0}) : NULL;
    }
    if (!is_op(sm, "Softmax")) return false;
    odn_value *ps = odn_plan_value(p, odn_host->node_output(sm, 0));
    const tsr_node *mm2 = ps ? odn_plan_sole_consumer(p, ps) : NULL;
    if (!is_op(mm2, "MatMul") || odn_plan_value(p, odn_host->node_input(mm2, 0)) != ps) return false;
    m->v = odn_plan_value(p, odn_host->node_input(mm2, 1));
    m->o = odn_plan_value(p, odn_host->node_output(mm2, 0));
    if (!is_float(m->v) || m->v == ps || !is_float(m->o) || !is_float(ps) || !match_shapes(m)) return false;
    int64_t axis = odn_attr_int(sm, "axis", odn_host->node_opset(sm) < 13 ? 1 : -1);
    if (axis != -1 && axis != m->r - 1) return false;
    /* the mods, in order */
    m->scores[m->nscores++] = cur;
    while (c != sm) {
        if (a->nmods == ODN_ATT_MAX_MODS) return false;
        odn_value *out = odn_plan_value(p, odn_host->node_output(c, 0));
        if (!is_float(out) || !match_mod(p, c, cur, m, &a->mods[a->nmods], &m->t[a->nmods])) return false;
        m->nodes[m->count++] = c;
        a->nmods++;
        cur = out;
        m->scores[m->nscores++] = cur;
        c = score_reader(p, cur, m);
    }
    int shapes_skipped = 0;
    for (int i = 0; i < m->nskipped; i++) shapes_skipped += is_op(m->skipped[i], "Shape");
    if (shapes_skipped != m->shape_readers) return false; /* a Shape of the scores that outlives them */
    m->nodes[m->count++] = sm;
    m->nodes[m->count++] = mm2;
    return operands_ready(p, m, a->nmods);
}

/* The kernel's sizes into `a`, and whether it takes them, with dense
 * operands standing in for the real ones: checked before any operand gets
 * a plain copy for the step. */
static bool sizes_fit(const att_match *m, odn_attention *a) {
    int32_t r = m->r;
    a->nb = r - 2;
    for (int32_t i = 0; i + 2 < r; i++) a->batch[i] = m->s_dims[i];
    a->tq = m->s_dims[r - 2];
    a->tk = m->s_dims[r - 1];
    a->d = m->q->dims[m->q->rank - 1];
    a->dv = m->o_dims[r - 1];
    /* dense row-major operands for now; describe() sets the real strides */
    int64_t stack = 1;
    for (int32_t i = r - 3; i >= 0; i--) {
        a->q.bstride[i] = stack * a->tq * a->d;
        a->k.bstride[i] = stack * a->d * a->tk;
        a->v.bstride[i] = stack * a->tk * a->dv;
        a->o.bstride[i] = stack * a->tq * a->dv;
        stack *= a->batch[i];
    }
    a->q.rs = a->d;
    a->k.rs = a->tk;
    a->v.rs = a->o.rs = a->dv;
    a->q.cs = a->k.cs = a->v.cs = a->o.cs = 1;
    /* below 16 query rows (a decoder's step with a KV cache) packing K and
     * V costs more than the products: 1 row by 500 keys, 12 heads, ran at
     * 7.7 GFLOP/s, 16 rows at 54 */
    return a->tq >= 16 && odn_attention_supported(a) && odn_attention_scratch_bytes(a, omp_get_max_threads()) > 0;
}

/* The operands' memories and strides; *fits false when a layout does not
 * fit the kernel. */
static tsr_status *describe(odn_plan *p, const tsr_node *n, const att_match *m, att_step *s, bool *fits) {
    odn_attention *a = &s->a;
    int32_t r = m->r;
    *fits = false;
    /* Q and K^T are read as S's batch over their own matrices */
    int64_t qd[ODN_MAX_RANK], kd[ODN_MAX_RANK], vd[ODN_MAX_RANK];
    memcpy(qd, m->s_dims, sizeof qd);
    memcpy(kd, m->s_dims, sizeof kd);
    memcpy(vd, m->o_dims, sizeof vd);
    qd[r - 1] = a->d;
    kd[r - 2] = a->d;
    vd[r - 2] = a->tk;
    const dnnl_memory_desc_t *md;
    tsr_status *e = float_mem(p, m->q, n, &s->q, &md);
    if (e || !operand_strides(md, sizeof(float), r, qd, &a->q, &s->q_off)) return e;
    e = float_mem(p, m->kt, n, &s->k, &md);
    if (e || !operand_strides(md, sizeof(float), r, kd, &a->k, &s->k_off)) return e;
    e = float_mem(p, m->v, n, &s->v, &md);
    if (e || !operand_strides(md, sizeof(float), r, vd, &a->v, &s->v_off)) return e;
    for (int i = 0; i < a->nmods; i++) {
        if (!m->t[i]) continue;
        bool cond = a->mods[i].kind == ODN_ATT_SELECT;
        e = cond ? odn_bool_mem(p, m->t[i], n, &s->t[i]) : float_mem(p, m->t[i], n, &s->t[i], &md);
        if (e) return e;
        if (cond) dnnl_memory_get_memory_desc(s->t[i], &md);
        if (md->data_type != (cond ? dnnl_u8 : dnnl_f32)) return NULL;
        if (!operand_strides(md, cond ? 1 : sizeof(float), r, m->s_dims, &a->mods[i].t, &s->t_off[i])) return NULL;
    }
    *fits = odn_attention_supported(a);
    return NULL;
}

/* The output: plain, or laid out so that its sole reader, a Transpose,
 * finds its own output plain (the heads merged back). */
static tsr_status *define_output(odn_plan *p, const tsr_node *mm2, const att_match *m, att_step *s) {
    dnnl_memory_desc_t md;
    bool transposed = odn_matmul_transposed_dst(p, m->o, m->r, m->o_dims, &md);
    tsr_status *e = odn_plan_define(p, m->o, m->r, m->o_dims, transposed ? &md : NULL, mm2);
    if (e) return e;
    if (!operand_strides(&m->o->md, sizeof(float), m->r, m->o_dims, &s->a.o, &s->o_off) || s->a.o.cs != 1)
        return odn_node_error(mm2, TSR_ERR_PROVIDER, "internal: attention output layout");
    for (int32_t i = 0; i + 2 < m->r; i++)
        if (s->a.o.bstride[i] == 0 && m->o_dims[i] > 1)
            return odn_node_error(mm2, TSR_ERR_PROVIDER, "internal: attention output layout");
    s->o = m->o->mem;
    return NULL;
}

tsr_status *odn_fuse_attention(odn_plan *p, size_t index, bool *handled) {
    *handled = false;
    const tsr_node *n = p->nodes[index];
    att_match m;
    att_step st;
    memset(&st, 0, sizeof st);
    if (!p->fuse || !p->attention || !odn_sgemm_supported()) return NULL;
    bool matched = match(p, n, &m, &st.a);
    if (m.pull_error || !matched) return m.pull_error;
    if (!sizes_fit(&m, &st.a)) return NULL;
    bool fits;
    tsr_status *e = describe(p, n, &m, &st, &fits);
    if (e || !fits) return e;
    st.threads = omp_get_max_threads();
    size_t bytes = odn_attention_scratch_bytes(&st.a, st.threads);
    if (bytes == 0) return NULL;
    *handled = true;
    for (int i = 1; i < m.count; i++) p->done[odn_plan_node_index(p, m.nodes[i])] = true;
    for (int i = 0; i < m.nskipped; i++) p->done[odn_plan_node_index(p, m.skipped[i])] = true;
    const tsr_node *mm2 = m.nodes[m.count - 1];
    e = define_output(p, mm2, &m, &st);
    if (!e) e = odn_wino_scratch_grow(p, n, bytes, &st.scratch);
    att_step *s = e ? NULL : odn_plan_alloc(p, sizeof *s);
    if (!e && !s) e = odn_node_error(n, TSR_ERR_NO_MEMORY, "attention step");
    if (e) return e;
    *s = st;
    dnnl_exec_arg_t args[4 + ODN_ATT_MAX_MODS];
    int nargs = 0;
    args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, s->q};
    args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_DST, s->o};
    args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + 2, s->k};
    args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + 3, s->v};
    for (int i = 0; i < s->a.nmods; i++)
        if (s->t[i]) {
            args[nargs] = (dnnl_exec_arg_t){DNNL_ARG_MULTIPLE_SRC + nargs, s->t[i]};
            nargs++;
        }
    e = odn_plan_add_loop_args(p, run_attention, s, args, nargs, n);
    if (!e) snprintf(p->steps[p->step_count - 1].impl, sizeof p->steps[0].impl, "attention:avx2");
    return e;
}
