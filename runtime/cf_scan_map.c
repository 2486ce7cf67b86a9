/* Scan (opset 8 with a batch axis, and 9+) and SequenceMap. */
#include <stdlib.h>
#include <string.h>

#include "control_flow.h"
#include "run_budget.h"
#include "run_context.h"
#include "status.h"

/* An ints attribute of `want` entries, or NULL when absent. */
static tsr_status *ints_attr(const ir_node *n, const char *name, size_t want, const int64_t **out) {
    const ir_attr *a = ir_node_attr(n, name);
    *out = NULL;
    if (!a) return NULL;
    if (a->type != TSR_ATTR_INTS || a->count != want)
        return tsr_error(TSR_ERR_INVALID_MODEL, "Scan '%s' attribute '%s' must list %zu ints", n->name, name, want);
    *out = a->ints;
    return NULL;
}

typedef struct scan_setup {
    size_t n_state, n_scan_in, n_scan_out;
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs;
} scan_setup;

/* One pass over the scan inputs: state[] (N) is updated in place, each
 * iteration's scan outputs are pushed to acc[] (K). */
static tsr_status *scan_pass(cf_piece *p, const outer_scope *os, const scan_setup *ss, rt_tensor *state,
                             const tsr_tensor *const *scans, scan_acc *acc, run_budget *budget,
                             const exec_hooks *hooks) {
    const graph_plan *body = &p->plans[0];
    const ir_graph *g = body->g;
    int64_t len = -1;
    int32_t axes[IR_MAX_RANK];
    for (size_t j = 0; j < ss->n_scan_in; j++) {
        const tsr_tensor *t = scans[j];
        int64_t a = ss->in_axes ? ss->in_axes[j] : 0;
        if (a < 0) a += t->rank;
        if (a < 0 || a >= t->rank)
            return tsr_error(TSR_ERR_INVALID_MODEL, "Scan '%s': scan input %zu has no axis %lld", p->node->name, j,
                             (long long)(ss->in_axes ? ss->in_axes[j] : 0));
        axes[j] = (int32_t)a;
        if (len >= 0 && t->dims[a] != len)
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "Scan '%s': scan inputs have different lengths (%lld, %lld)",
                             p->node->name, (long long)len, (long long)t->dims[a]);
        len = t->dims[a];
    }
    if (len < 0) len = 0;
    rt_tensor *ins = calloc(g->n_inputs + 1, sizeof *ins), *outs = calloc(g->n_outputs + 1, sizeof *outs);
    tsr_status *st = !ins || !outs ? TSR_NO_MEMORY() : NULL;
    for (int64_t t = 0; t < len && !st; t++) {
        for (size_t k = 0; k < ss->n_state; k++) rt_tensor_borrow_slot(&ins[k], &state[k]);
        for (size_t j = 0; j < ss->n_scan_in && !st; j++) {
            ir_tensor *sl;
            int64_t at = ss->in_dirs && ss->in_dirs[j] ? len - 1 - t : t;
            st = cf_slice(scans[j], axes[j], at, &sl);
            if (!st) {
                rt_tensor_release(&ins[ss->n_state + j]);
                cf_hold(&ins[ss->n_state + j], sl);
                st = run_budget_charge(&ins[ss->n_state + j], budget, sl->nbytes, "a scan input slice");
            }
        }
        if (!st) st = cf_run_body(p, 0, hooks, ins, os, true, budget, outs);
        if (st) st = tsr_error_wrap(st, "Scan '%s' iteration %lld", p->node->name, (long long)t);
        for (size_t k = 0; k < ss->n_state && !st; k++) rt_tensor_move(&state[k], &outs[k]);
        for (size_t k = 0; k < ss->n_scan_out && !st; k++) st = cf_acc_push(&acc[k], &outs[ss->n_state + k]);
        cf_release_all(outs, g->n_outputs);
    }
    cf_release_all(ins, g->n_inputs);
    free(ins);
    free(outs);
    return st;
}

static tsr_status *scan_setup_read(cf_piece *p, size_t first_state, scan_setup *ss) {
    const ir_node *n = p->node;
    const ir_graph *g = p->plans[0].g;
    const ir_attr *m = ir_node_attr(n, "num_scan_inputs");
    if (!m || m->type != TSR_ATTR_INT || m->i < 1 || (size_t)m->i > n->n_inputs - first_state)
        return tsr_error(TSR_ERR_INVALID_MODEL, "Scan '%s': num_scan_inputs is missing or out of range", n->name);
    ss->n_scan_in = (size_t)m->i;
    ss->n_state = n->n_inputs - first_state - ss->n_scan_in;
    if (g->n_inputs != ss->n_state + ss->n_scan_in || g->n_outputs < ss->n_state || n->n_outputs != g->n_outputs)
        return tsr_error(TSR_ERR_INVALID_MODEL, "Scan '%s': body inputs/outputs do not match the node", n->name);
    ss->n_scan_out = g->n_outputs - ss->n_state;
    const char *dir_in = n->opset < 9 ? "directions" : "scan_input_directions";
    TSR_TRY(ints_attr(n, dir_in, ss->n_scan_in, &ss->in_dirs));
    if (n->opset >= 9) {
        TSR_TRY(ints_attr(n, "scan_input_axes", ss->n_scan_in, &ss->in_axes));
        TSR_TRY(ints_attr(n, "scan_output_axes", ss->n_scan_out, &ss->out_axes));
        TSR_TRY(ints_attr(n, "scan_output_directions", ss->n_scan_out, &ss->out_dirs));
    }
    return NULL;
}

/* Opset 9+: no batch axis. */
static tsr_status *scan9(cf_piece *p, struct tsr_run_context *ctx, const outer_scope *os, const scan_setup *ss) {
    rt_tensor *state = calloc(ss->n_state + 1, sizeof *state), *scan_in = calloc(ss->n_scan_in + 1, sizeof *scan_in);
    const tsr_tensor **scans = calloc(ss->n_scan_in + 1, sizeof *scans);
    scan_acc *acc = calloc(ss->n_scan_out + 1, sizeof *acc);
    tsr_status *st = !state || !scan_in || !scans || !acc ? TSR_NO_MEMORY() : NULL;
    for (size_t k = 0; k < ss->n_state && !st; k++) cf_node_input(p, ctx, k, &state[k]);
    for (size_t j = 0; j < ss->n_scan_in && !st; j++) {
        cf_node_input(p, ctx, ss->n_state + j, &scan_in[j]);
        if (scan_in[j].value || !scan_in[j].view.struct_size)
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "Scan '%s': scan input %zu must be a tensor", p->node->name, j);
        scans[j] = &scan_in[j].view;
    }
    if (!st) st = scan_pass(p, os, ss, state, scans, acc, ctx->budget, ctx->hooks);
    if (!st) st = cf_emit_carried(p, ctx, state, ss->n_state);
    if (!st) st = cf_emit_scans(p, ctx, acc, ss->n_scan_out, ss->n_state, ss->out_axes, ss->out_dirs);
    cf_release_all(state, ss->n_state);
    cf_acc_free(acc, ss->n_scan_out);
    free(state);
    free(scan_in);
    free(scans);
    return st;
}

/* Opset 8: axis 0 of every input and output is a batch; each batch entry is
 * scanned on its own (sequence_lens, if given, must be the full length). */
static tsr_status *scan8(cf_piece *p, struct tsr_run_context *ctx, const outer_scope *os, const scan_setup *ss) {
    rt_tensor lens;
    cf_node_input(p, ctx, 0, &lens);
    if (rt_present(&lens))
        return tsr_error(TSR_ERR_NOT_SUPPORTED, "Scan '%s' (opset 8): sequence_lens is not supported", p->node->name);
    size_t ns = ss->n_state, nin = ss->n_scan_in, nout = ss->n_scan_out;
    rt_tensor *init = calloc(ns + 1, sizeof *init), *scan_in = calloc(nin + 1, sizeof *scan_in);
    rt_tensor *state = calloc(ns + 1, sizeof *state), *slices = calloc(nin + 1, sizeof *slices);
    const tsr_tensor **scans = calloc(nin + 1, sizeof *scans);
    scan_acc *final = calloc(ns + 1, sizeof *final), *per_batch = calloc(nout + 1, sizeof *per_batch);
    tsr_status *st = !init || !scan_in || !state || !slices || !scans || !final || !per_batch ? TSR_NO_MEMORY() : NULL;
    int64_t batch = -1;
    for (size_t k = 0; k < ns && !st; k++) cf_node_input(p, ctx, 1 + k, &init[k]);
    for (size_t j = 0; j < nin && !st; j++) cf_node_input(p, ctx, 1 + ns + j, &scan_in[j]);
    for (size_t k = 0; k < ns + nin && !st; k++) {
        const rt_tensor *t = k < ns ? &init[k] : &scan_in[k - ns];
        if (t->value || t->view.rank < 1 || (batch >= 0 && t->view.dims[0] != batch))
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "Scan '%s' (opset 8): inputs need the same batch axis 0",
                           p->node->name);
        else batch = t->view.dims[0];
    }
    for (int64_t b = 0; b < batch && !st; b++) {
        scan_acc *acc = calloc(nout + 1, sizeof *acc);
        if (!acc) st = TSR_NO_MEMORY();
        for (size_t k = 0; k < ns && !st; k++) {
            ir_tensor *sl;
            if (!(st = cf_slice(&init[k].view, 0, b, &sl))) {
                rt_tensor_release(&state[k]);
                cf_hold(&state[k], sl);
            }
        }
        for (size_t j = 0; j < nin && !st; j++) {
            ir_tensor *sl;
            if (!(st = cf_slice(&scan_in[j].view, 0, b, &sl))) {
                rt_tensor_release(&slices[j]);
                cf_hold(&slices[j], sl);
                scans[j] = &slices[j].view;
            }
        }
        if (!st) st = scan_pass(p, os, ss, state, scans, acc, ctx->budget, ctx->hooks);
        for (size_t k = 0; k < ns && !st; k++) st = cf_acc_push(&final[k], &state[k]);
        for (size_t k = 0; k < nout && !st; k++) {
            ir_tensor *stacked;
            st = cf_stack(acc[k].items, acc[k].n, 0, false, 0, 0, NULL, &stacked);
            if (!st) {
                rt_tensor slot;
                cf_hold(&slot, stacked);
                st = run_budget_charge(&slot, ctx->budget, stacked->nbytes, "a Scan batch's outputs");
                if (!st) st = cf_acc_push(&per_batch[k], &slot);
                rt_tensor_release(&slot);
            }
        }
        cf_acc_free(acc, nout);
    }
    if (!st) st = cf_emit_scans(p, ctx, final, ns, 0, NULL, NULL);
    if (!st) st = cf_emit_scans(p, ctx, per_batch, nout, ns, NULL, NULL);
    cf_release_all(state, ns);
    cf_release_all(slices, nin);
    cf_acc_free(final, ns);
    cf_acc_free(per_batch, nout);
    free(init);
    free(scan_in);
    free(state);
    free(slices);
    free(scans);
    return st;
}

tsr_status *cf_run_scan(cf_piece *p, struct tsr_run_context *ctx) {
    scan_setup ss;
    memset(&ss, 0, sizeof ss);
    size_t first_state = p->node->opset < 9 ? 1 : 0;
    TSR_TRY(scan_setup_read(p, first_state, &ss));
    rt_tensor *scope = NULL;
    outer_scope os;
    TSR_TRY(cf_outer_scope(p, ctx, &scope, &os));
    tsr_status *st = first_state ? scan8(p, ctx, &os, &ss) : scan9(p, ctx, &os, &ss);
    free(scope);
    return st;
}

/* A body output as a value for a result sequence (consumes the slot). */
static tsr_status *slot_to_value(rt_tensor *slot, tsr_value **out) {
    if (slot->value && !slot->borrowed) {
        *out = slot->value;
        slot->value = NULL;
        rt_tensor_release(slot);
        return NULL;
    }
    if (slot->value) {
        tsr_status *st = value_clone(slot->value, out);
        rt_tensor_release(slot);
        return st;
    }
    ir_tensor *t = slot->host;
    tsr_status *st = NULL;
    if (t && !slot->borrowed && t->view.data == slot->view.data) slot->host = NULL;
    else st = ir_tensor_clone(&slot->view, &t);
    rt_tensor_release(slot);
    return st ? st : value_wrap_tensor(t, out);
}

tsr_status *cf_run_sequence_map(cf_piece *p, struct tsr_run_context *ctx) {
    const ir_node *n = p->node;
    const graph_plan *body = &p->plans[0];
    const ir_graph *g = body->g;
    if (g->n_inputs != n->n_inputs || g->n_outputs != n->n_outputs)
        return tsr_error(TSR_ERR_INVALID_MODEL, "SequenceMap '%s': body inputs/outputs do not match the node", n->name);
    size_t ni = n->n_inputs, no = n->n_outputs;
    rt_tensor *in = calloc(ni + 1, sizeof *in), *ins = calloc(ni + 1, sizeof *ins),
              *outs = calloc(no + 1, sizeof *outs);
    /* result sequences, each in a slot that carries its items' charge */
    rt_tensor *results = calloc(no + 1, sizeof *results);
    rt_tensor *scope = NULL;
    outer_scope os;
    tsr_status *st = !in || !ins || !outs || !results ? TSR_NO_MEMORY() : cf_outer_scope(p, ctx, &scope, &os);
    for (size_t i = 0; i < ni && !st; i++) cf_node_input(p, ctx, i, &in[i]);
    size_t len = 0;
    if (!st && (!in[0].value || in[0].value->kind != TSR_VALUE_SEQUENCE))
        st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "SequenceMap '%s': input 0 must be a sequence", n->name);
    else if (!st) len = in[0].value->n;
    for (size_t i = 1; i < ni && !st; i++)
        if (in[i].value && in[i].value->kind == TSR_VALUE_SEQUENCE && in[i].value->n != len)
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT,
                           "SequenceMap '%s': sequence input %zu has %zu items, input 0 has %zu", n->name, i,
                           in[i].value->n, len);
    for (size_t k = 0; k < no && !st; k++) {
        const ir_type *t = n->outputs[k] ? &n->outputs[k]->type : NULL;
        int32_t et = t && t->kind == IR_TYPE_SEQUENCE && t->elem ? t->elem->elem_type : 0;
        st = value_new_sequence(et, &results[k].value);
    }
    for (size_t it = 0; it < len && !st; it++) {
        for (size_t i = 0; i < ni; i++) {
            if (in[i].value && in[i].value->kind == TSR_VALUE_SEQUENCE)
                rt_tensor_borrow_value(&ins[i], in[i].value->items[it]);
            else rt_tensor_borrow_slot(&ins[i], &in[i]);
        }
        st = cf_run_body(p, 0, ctx->hooks, ins, &os, true, ctx->budget, outs);
        if (st) st = tsr_error_wrap(st, "SequenceMap '%s' item %zu", n->name, it);
        for (size_t k = 0; k < no && !st; k++) {
            tsr_value *v;
            /* the item's charge leaves with its slot: the sequence takes it on */
            uint64_t bytes = run_budget_slot_bytes(&outs[k]);
            st = slot_to_value(&outs[k], &v);
            if (!st) st = value_append(results[k].value, v);
            if (!st) st = run_budget_charge(&results[k], ctx->budget, bytes, "a SequenceMap result");
        }
        cf_release_all(outs, no);
    }
    for (size_t k = 0; k < no && !st; k++) cf_set_output(p, ctx, k, &results[k]);
    cf_release_all(results, no);
    cf_release_all(ins, ni);
    free(in);
    free(ins);
    free(outs);
    free(results);
    free(scope);
    return st;
}
