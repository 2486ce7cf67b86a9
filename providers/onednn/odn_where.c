/* Where (a select by a bool condition, broadcast against float32
 * operands) as a C loop over plain memories, so masked attention (scores
 * -> Where(mask, -inf, scores) -> Softmax) stays in one piece. The select
 * copies the chosen operand's bits, as the reference does (NaN payloads
 * and -0 kept). Dims where every operand broadcasts alike are merged
 * first, so a [1,1,T,T] mask over [B,H,T,T] scores runs rows of T*T.
 *
 * IsNaN is not claimed: a piece's outputs are typed by their dnnl
 * memories, which have no bool, so a piece whose IsNaN output left it
 * would fail to compile and go whole to the next provider. */
#include <string.h>

#include "odn_ops.h"

/* --- claims ---------------------------------------------------------------- */

static bool known_rank(const tsr_value_info *v) {
    return v && odn_host->value_rank(v) >= 0 && odn_host->value_rank(v) <= ODN_MAX_RANK;
}

int odn_claim_where(const tsr_node *n, char *why, size_t size) {
    if (odn_host->node_input_count(n) != 3 || !odn_input(n, 0) || !odn_input(n, 1) || !odn_input(n, 2))
        return odn_decline(why, size, TSR_DECLINE_OTHER, "Where with other than three inputs");
    const tsr_value_info *c = odn_input(n, 0), *x = odn_input(n, 1), *y = odn_input(n, 2);
    const tsr_value_info *o = odn_host->node_output(n, 0);
    if (odn_host->value_elem_type(c) != TSR_BOOL)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "condition is not bool");
    if (odn_host->value_elem_type(x) != TSR_FLOAT || odn_host->value_elem_type(y) != TSR_FLOAT || !o ||
        odn_host->value_elem_type(o) != TSR_FLOAT)
        return odn_decline(why, size, TSR_DECLINE_TYPE, "Where of other than float32 operands");
    const tsr_value_info *v[3] = {c, x, y};
    int32_t r = 0;
    for (int k = 0; k < 3; k++) {
        if (!known_rank(v[k]))
            return odn_decline(why, size, TSR_DECLINE_SHAPE, "operand rank unknown or above %d", ODN_MAX_RANK);
        if (odn_host->value_rank(v[k]) > r) r = odn_host->value_rank(v[k]);
    }
    /* every known dim broadcasts against the others' */
    for (int32_t i = 0; i < r; i++) {
        int64_t want = 1;
        for (int k = 0; k < 3; k++) {
            int32_t rk = odn_host->value_rank(v[k]);
            int64_t d = i < rk ? odn_host->value_dim(v[k], rk - 1 - i) : 1;
            if (d == 0) return odn_decline(why, size, TSR_DECLINE_SHAPE, "empty tensor");
            if (d > 1 && want > 1 && d != want)
                return odn_decline(why, size, TSR_DECLINE_SHAPE, "operands do not broadcast");
            if (d > 1) want = d;
        }
    }
    return 0;
}

/* --- loops ----------------------------------------------------------------- */

typedef struct where_loop {
    int32_t rank; /* of the merged dims */
    int64_t dims[ODN_MAX_RANK];
    int64_t st[3][ODN_MAX_RANK]; /* element strides of cond, x, y; 0 where broadcast */
    dnnl_memory_t cond, x, y;
} where_loop;

/* o[i] = c[i] ? x[i] : y[i] over n elements, strides 0 or 1 as constants so
 * the bit select vectorises. */
#define SELECT(SC, SX, SY)                                                                                             \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
        uint32_t m = 0u - (uint32_t)(c[i * (SC)] != 0);                                                                \
        o[i] = (x[i * (SX)] & m) | (y[i * (SY)] & ~m);                                                                 \
    }
static void select_row(const uint8_t *c, int64_t sc, const uint32_t *x, int64_t sx, const uint32_t *y, int64_t sy,
                       uint32_t *o, int64_t n) {
    if (sc == 1 && sx == 1 && sy == 1) SELECT(1, 1, 1)
    else if (sc == 1 && sx == 0 && sy == 1) SELECT(1, 0, 1)
    else if (sc == 1 && sx == 1 && sy == 0) SELECT(1, 1, 0)
    else if (sc == 1 && sx == 0 && sy == 0) SELECT(1, 0, 0)
    else if (sc == 0) {
        const uint32_t *from = c[0] ? x : y;
        int64_t s = c[0] ? sx : sy;
        if (s == 1) memcpy(o, from, (size_t)n * sizeof(uint32_t));
        else
            for (int64_t i = 0; i < n; i++) o[i] = from[i * s];
    } else SELECT(sc, sx, sy)
}
#undef SELECT

static const void *data_of(dnnl_memory_t m) {
    void *h = NULL;
    dnnl_memory_get_data_handle(m, &h);
    return h;
}

static tsr_status *run_where(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst) {
    (void)src;
    const where_loop *l = ctx;
    const uint8_t *c = data_of(l->cond);
    const uint32_t *x = data_of(l->x), *y = data_of(l->y);
    uint32_t *o = (uint32_t *)data_of(dst);
    int32_t r = l->rank;
    int64_t inner = l->dims[r - 1], rows = odn_numel(r - 1, l->dims);
#pragma omp parallel for if (rows * inner > 32768) schedule(static)
    for (int64_t i = 0; i < rows; i++) {
        int64_t off[3] = {0, 0, 0}, rem = i;
        for (int32_t d = r - 2; d >= 0; d--) {
            int64_t at = rem % l->dims[d];
            rem /= l->dims[d];
            for (int k = 0; k < 3; k++) off[k] += at * l->st[k][d];
        }
        select_row(c + off[0], l->st[0][r - 1], x + off[1], l->st[1][r - 1], y + off[2], l->st[2][r - 1], o + i * inner,
                   inner);
    }
    return NULL;
}

/* --- builders -------------------------------------------------------------- */

/* A constant's or a piece input's memory is made here on first use; the
 * input's buffer is bound at run time. */
tsr_status *odn_bool_mem(odn_plan *p, odn_value *v, const tsr_node *n, dnnl_memory_t *out) {
    if (v->mem) {
        *out = v->mem;
        return NULL;
    }
    if (v->producer >= 0 || (!v->constant && v->input_index < 0))
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: bool operand without a memory");
    dnnl_memory_desc_t md;
    if (odn_plain_md_typed(&md, v->rank, v->dims, dnnl_u8) != dnnl_success)
        return odn_node_error(n, TSR_ERR_PROVIDER, "bool layout");
    if (v->constant && v->constant->nbytes < (uint64_t)odn_numel(v->rank, v->dims))
        return odn_node_error(n, TSR_ERR_INVALID_MODEL, "condition holds fewer bytes than its shape");
    tsr_status *s = odn_plan_new_mem(p, &md, v->constant ? v->constant->data : DNNL_MEMORY_NONE, n, &v->mem);
    if (s) return s;
    v->md = md;
    if (!v->constant) p->input_mems[v->input_index] = v->mem;
    *out = v->mem;
    return NULL;
}

tsr_status *odn_build_where(odn_plan *p, size_t index) {
    const tsr_node *n = p->nodes[index];
    odn_value *v[3], *y = odn_plan_value(p, odn_host->node_output(n, 0));
    for (size_t k = 0; k < 3; k++) v[k] = odn_plan_value(p, odn_host->node_input(n, k));
    if (!v[0] || !v[1] || !v[2] || !y || !v[1]->mem || !v[2]->mem)
        return odn_node_error(n, TSR_ERR_PROVIDER, "internal: where inputs");
    int32_t ro = 0; /* the output's rank; the loop's at least 1 */
    for (int k = 0; k < 3; k++) ro = v[k]->rank > ro ? v[k]->rank : ro;
    int32_t r = ro ? ro : 1;
    /* each operand's dims padded to r, the output's, and strides */
    int64_t d[3][ODN_MAX_RANK], out[ODN_MAX_RANK], st[3][ODN_MAX_RANK];
    for (int k = 0; k < 3; k++)
        for (int32_t i = 0; i < r; i++) {
            int32_t lead = r - v[k]->rank;
            d[k][i] = i < lead ? 1 : v[k]->dims[i - lead];
        }
    for (int32_t i = 0; i < r; i++) {
        out[i] = 1;
        for (int k = 0; k < 3; k++) {
            if (d[k][i] != 1 && out[i] != 1 && d[k][i] != out[i])
                return odn_node_error(n, TSR_ERR_INVALID_ARGUMENT, "operands do not broadcast");
            if (d[k][i] != 1) out[i] = d[k][i];
        }
    }
    for (int k = 0; k < 3; k++) {
        int64_t s = 1;
        for (int32_t i = r - 1; i >= 0; i--) {
            st[k][i] = d[k][i] == out[i] && out[i] != 1 ? s : 0;
            s *= d[k][i];
        }
    }
    where_loop *l = odn_plan_alloc(p, sizeof *l);
    if (!l) return odn_node_error(n, TSR_ERR_NO_MEMORY, "out of memory");
    /* merge dim i into the run before it where every operand steps alike
     * (contiguous across both, or broadcast along both) */
    int32_t m = 0;
    for (int32_t i = 0; i < r; i++) {
        if (out[i] == 1 && r > 1) continue;
        bool merge = m > 0;
        for (int k = 0; merge && k < 3; k++) {
            bool bi = st[k][i] == 0, bp = l->st[k][m - 1] == 0;
            merge = bi == bp && (bi || l->st[k][m - 1] == st[k][i] * out[i]);
        }
        if (merge) {
            l->dims[m - 1] *= out[i];
            for (int k = 0; k < 3; k++) l->st[k][m - 1] = st[k][i];
        } else {
            l->dims[m] = out[i];
            for (int k = 0; k < 3; k++) l->st[k][m] = st[k][i];
            m++;
        }
    }
    if (m == 0) {
        l->dims[0] = 1;
        for (int k = 0; k < 3; k++) l->st[k][0] = 0;
        m = 1;
    }
    l->rank = m;
    tsr_status *s = odn_bool_mem(p, v[0], n, &l->cond);
    if (!s) s = odn_plan_plain_mem(p, v[1], n, &l->x);
    if (!s) s = odn_plan_plain_mem(p, v[2], n, &l->y);
    if (!s) s = odn_plan_define(p, y, ro, out, NULL, n);
    if (s) return s;
    dnnl_memory_t reads[3] = {l->cond, l->x, l->y};
    return odn_plan_add_loop_reading(p, run_where, l, l->x, y->mem, reads, 3, n);
}
