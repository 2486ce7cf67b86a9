/* If and Loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_flow.h"
#include "run_budget.h"
#include "run_context.h"
#include "status.h"

tsr_status *cf_run_if(cf_piece *p, struct tsr_run_context *ctx) {
    rt_tensor cond;
    cf_node_input(p, ctx, 0, &cond);
    int64_t c;
    TSR_TRY(cf_scalar_i64(&cond, "If condition", &c));
    const graph_plan *body = &p->plans[c ? 0 : 1];
    const ir_graph *g = body->g;
    if (g->n_outputs != p->node->n_outputs)
        return tsr_error(TSR_ERR_INVALID_MODEL, "If '%s': branch '%s' has %zu outputs, the node %zu", p->node->name,
                         c ? "then_branch" : "else_branch", g->n_outputs, p->node->n_outputs);
    rt_tensor *scope = NULL, *ins = calloc(g->n_inputs + 1, sizeof *ins),
              *outs = calloc(g->n_outputs + 1, sizeof *outs);
    outer_scope os;
    tsr_status *st = !ins || !outs ? TSR_NO_MEMORY() : cf_outer_scope(p, ctx, &scope, &os);
    if (!st) st = cf_run_body(p, c ? 0 : 1, ctx->hooks, ins, &os, false, ctx->budget, outs);
    for (size_t i = 0; i < g->n_outputs && !st; i++) cf_set_output(p, ctx, i, &outs[i]);
    cf_release_all(outs, g->n_outputs);
    free(outs);
    free(ins);
    free(scope);
    return st;
}

/* The zero-iteration result of a scan output: empty along axis 0, the
 * other dims as declared (0 where unknown). */
static tsr_status *empty_scan(const ir_value *v, int32_t axis, ir_tensor **out) {
    const ir_type *t = v ? &v->type : NULL;
    int32_t et = t && t->kind == IR_TYPE_TENSOR && t->elem_type ? t->elem_type : TSR_FLOAT;
    int32_t rank = t && t->kind == IR_TYPE_TENSOR && t->rank > 0 ? t->rank : 1;
    int64_t dims[IR_MAX_RANK];
    for (int32_t d = 0; d < rank && d < IR_MAX_RANK; d++)
        dims[d] = t && t->rank > 0 && t->dims[d].value >= 0 ? t->dims[d].value : 0;
    if (axis >= 0 && axis < rank) dims[axis] = 0;
    return ir_tensor_new(et, rank, dims, out);
}

tsr_status *cf_acc_push(scan_acc *a, rt_tensor *t) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        rt_tensor *it = realloc(a->items, sizeof *it * cap);
        if (!it) return TSR_NO_MEMORY();
        a->items = it;
        a->cap = cap;
    }
    memset(&a->items[a->n], 0, sizeof a->items[a->n]);
    rt_tensor_move(&a->items[a->n++], t);
    return NULL;
}

void cf_acc_free(scan_acc *a, size_t n) {
    for (size_t k = 0; a && k < n; k++) {
        cf_release_all(a[k].items, a[k].n);
        free(a[k].items);
    }
    free(a);
}

/* Stacks each scan output's items (or makes it empty) into node output `out_i`. */
tsr_status *cf_emit_scans(cf_piece *p, struct tsr_run_context *ctx, scan_acc *acc, size_t k_count, size_t first_out,
                          const int64_t *axes, const int64_t *dirs) {
    for (size_t k = 0; k < k_count; k++) {
        ir_tensor *stacked = NULL;
        int32_t axis = 0;
        if (axes) {
            int64_t a = axes[k];
            int32_t rank = acc[k].n ? acc[k].items[0].view.rank : 0;
            if (a < 0) a += rank + 1;
            if (a < 0 || a > rank)
                return tsr_error(TSR_ERR_INVALID_MODEL, "%s '%s': scan_output_axes[%zu] is out of range",
                                 p->node->op_type, p->node->name, k);
            axis = (int32_t)a;
        }
        /* The stacked copy is as large as the items (still live): counted first. */
        uint64_t bytes = 0;
        for (size_t i = 0; i < acc[k].n; i++) bytes += run_budget_slot_bytes(&acc[k].items[i]);
        char what[256];
        snprintf(what, sizeof what, "%s '%s' scan output %zu", p->node->op_type, p->node->name, k);
        TSR_TRY(run_budget_reserve(ctx->budget, bytes, what));
        tsr_status *st = acc[k].n ? cf_stack(acc[k].items, acc[k].n, axis, dirs && dirs[k], 0, 0, NULL, &stacked)
                                  : empty_scan(p->node->outputs[first_out + k], axis, &stacked);
        if (st) {
            run_budget_unreserve(ctx->budget, bytes);
            return tsr_error_wrap(st, "%s '%s' scan output %zu", p->node->op_type, p->node->name, k);
        }
        rt_tensor slot;
        cf_hold(&slot, stacked);
        run_budget_assign(&slot, ctx->budget, bytes);
        cf_set_output(p, ctx, first_out + k, &slot);
    }
    return NULL;
}

/* Final loop-carried values: owned ones move out, borrowed ones are copied. */
tsr_status *cf_emit_carried(cf_piece *p, struct tsr_run_context *ctx, rt_tensor *carried, size_t n) {
    for (size_t k = 0; k < n; k++) {
        if (carried[k].borrowed) {
            rt_tensor c;
            memset(&c, 0, sizeof c);
            char what[256];
            snprintf(what, sizeof what, "%s '%s' output %zu", p->node->op_type, p->node->name, k);
            TSR_TRY(run_budget_copy(&c, &carried[k], NULL, 0, ctx->budget, what));
            rt_tensor_move(&carried[k], &c);
        }
        cf_set_output(p, ctx, k, &carried[k]);
    }
    return NULL;
}

tsr_status *cf_run_loop(cf_piece *p, struct tsr_run_context *ctx) {
    const ir_node *n = p->node;
    const graph_plan *body = &p->plans[0];
    const ir_graph *g = body->g;
    if (n->n_inputs < 2 || g->n_inputs != n->n_inputs || g->n_outputs + 1 < n->n_inputs)
        return tsr_error(TSR_ERR_INVALID_MODEL, "Loop '%s': body has %zu inputs and %zu outputs for %zu node inputs",
                         n->name, g->n_inputs, g->n_outputs, n->n_inputs);
    size_t nc = n->n_inputs - 2, nk = g->n_outputs - 1 - nc;
    rt_tensor trip, cond0;
    cf_node_input(p, ctx, 0, &trip);
    cf_node_input(p, ctx, 1, &cond0);
    int64_t max_trip = INT64_MAX, cond = 1;
    if (rt_present(&trip)) TSR_TRY(cf_scalar_i64(&trip, "Loop trip count", &max_trip));
    if (rt_present(&cond0)) TSR_TRY(cf_scalar_i64(&cond0, "Loop condition", &cond));
    if (!rt_present(&trip) && !rt_present(&cond0))
        return tsr_error(TSR_ERR_INVALID_MODEL,
                         "Loop '%s' has neither a trip count nor a condition: it would never end", n->name);
    rt_tensor *scope = NULL, *ins = calloc(g->n_inputs + 1, sizeof *ins),
              *outs = calloc(g->n_outputs + 1, sizeof *outs), *carried = calloc(nc + 1, sizeof *carried);
    scan_acc *acc = calloc(nk + 1, sizeof *acc);
    ir_tensor *iter_t = NULL, *cond_t = NULL;
    outer_scope os;
    tsr_status *st = !ins || !outs || !carried || !acc ? TSR_NO_MEMORY() : cf_outer_scope(p, ctx, &scope, &os);
    if (!st) st = ir_tensor_new(TSR_INT64, 0, NULL, &iter_t);
    if (!st) st = ir_tensor_new(TSR_BOOL, 0, NULL, &cond_t);
    for (size_t k = 0; k < nc && !st; k++) cf_node_input(p, ctx, 2 + k, &carried[k]);
    for (int64_t i = 0; !st && i < max_trip && cond; i++) {
        *(int64_t *)iter_t->data = i;
        *(uint8_t *)cond_t->data = 1;
        rt_tensor_borrow(&ins[0], &iter_t->view);
        rt_tensor_borrow(&ins[1], &cond_t->view);
        for (size_t k = 0; k < nc; k++) rt_tensor_borrow_slot(&ins[2 + k], &carried[k]);
        st = cf_run_body(p, 0, ctx->hooks, ins, &os, true, ctx->budget, outs);
        if (st) {
            st = tsr_error_wrap(st, "Loop '%s' iteration %lld", n->name, (long long)i);
            break;
        }
        st = cf_scalar_i64(&outs[0], "Loop body condition output", &cond);
        for (size_t k = 0; k < nc && !st; k++) rt_tensor_move(&carried[k], &outs[1 + k]);
        for (size_t k = 0; k < nk && !st; k++) st = cf_acc_push(&acc[k], &outs[1 + nc + k]);
        cf_release_all(outs, g->n_outputs);
    }
    if (!st) st = cf_emit_carried(p, ctx, carried, nc);
    if (!st) st = cf_emit_scans(p, ctx, acc, nk, nc, NULL, NULL);
    cf_release_all(ins, g->n_inputs);
    cf_release_all(outs, g->n_outputs);
    cf_release_all(carried, nc);
    cf_acc_free(acc, nk);
    ir_tensor_free(iter_t);
    ir_tensor_free(cond_t);
    free(ins);
    free(outs);
    free(carried);
    free(scope);
    return st;
}
