/* Runs pieces in order, frees each intermediate after its last reader, and
 * copies tensors between memories where pieces on different devices meet. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host_api.h"
#include "session.h"
#include "status.h"

tsr_status *exec_plan_build(tsr_session *s) {
    ir_graph *g = s->model->graph;
    s->plan.last_use = malloc(sizeof(size_t) * (g->n_values + 1));
    if (!s->plan.last_use) return TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_values; i++) s->plan.last_use[i] = SIZE_MAX;
    for (size_t p = 0; p < s->part.n_pieces; p++) {
        const struct tsr_graph *v = s->part.pieces[p].view;
        for (size_t k = 0; k < v->n_inputs; k++) s->plan.last_use[v->inputs[k]->index] = p;
    }
    return NULL;
}

void exec_plan_free(exec_plan *p) {
    free(p->last_use);
    p->last_use = NULL;
}

/* Whether a tensor can be read directly by a piece of `prov`. */
static bool readable_by(const rt_tensor *t, const provider_inst *prov) {
    if (prov->memory_kind == TSR_MEMORY_DEVICE)
        return t->view.memory_kind == TSR_MEMORY_DEVICE && t->dev_owner == prov;
    return t->view.memory_kind == TSR_MEMORY_HOST;
}

static tsr_status *run_piece(tsr_session *s, size_t pi, rt_tensor *slots) {
    piece *pc = &s->part.pieces[pi];
    const struct tsr_graph *v = pc->view;
    provider_inst *prov = s->provs[pc->prov_index];
    const tsr_tensor **ins = calloc(v->n_inputs + 1, sizeof *ins);
    rt_tensor *copies = calloc(v->n_inputs + 1, sizeof *copies);
    rt_tensor *outs = calloc(v->n_outputs + 1, sizeof *outs);
    tsr_status *st = NULL;
    if (!ins || !copies || !outs) {
        st = TSR_NO_MEMORY();
        goto done;
    }
    for (size_t k = 0; k < v->n_inputs && !st; k++) {
        const ir_value *iv = v->inputs[k];
        rt_tensor *slot = &slots[iv->index];
        if (!slot->view.struct_size) {
            st = tsr_error(TSR_ERR_RUNTIME, "value '%s' is needed by node '%s' but was not computed",
                           iv->name, v->nodes[0]->name);
            break;
        }
        if (readable_by(slot, prov)) {
            ins[k] = &slot->view;
        } else {
            st = rt_tensor_copy_to(&copies[k], slot, prov);
            ins[k] = &copies[k].view;
        }
    }
    if (!st) {
        struct tsr_run_context ctx = {v->n_inputs, ins, v->n_outputs, outs, prov, NULL, 0};
        st = prov->plugin->vt->run(pc->compiled, (tsr_run_context *)&ctx);
        run_context_end(&ctx);
        if (st) {
            const ir_node *n0 = v->nodes[0];
            st = tsr_error_wrap(st, "provider '%s' running %s'%s' (%s)", prov->name,
                                v->n_nodes > 1 ? "the piece starting at " : "node ", n0->name,
                                n0->op_type);
        }
    }
    for (size_t k = 0; k < v->n_outputs && !st; k++) {
        if (!outs[k].view.struct_size)
            st = tsr_error(TSR_ERR_PROVIDER, "provider '%s' did not produce '%s' (node '%s')",
                           prov->name, v->outputs[k]->name, v->nodes[0]->name);
    }
    if (!st) {
        for (size_t k = 0; k < v->n_outputs; k++) {
            rt_tensor *slot = &slots[v->outputs[k]->index];
            rt_tensor_release(slot);
            *slot = outs[k];
            memset(&outs[k], 0, sizeof outs[k]);
        }
        /* Liveness: drop what no later piece reads. */
        for (size_t k = 0; k < v->n_inputs; k++) {
            const ir_value *iv = v->inputs[k];
            if (s->plan.last_use[iv->index] == pi && !iv->is_graph_output)
                rt_tensor_release(&slots[iv->index]);
        }
    }
done:
    if (copies)
        for (size_t k = 0; k < v->n_inputs; k++) rt_tensor_release(&copies[k]);
    if (outs)
        for (size_t k = 0; k < v->n_outputs; k++) rt_tensor_release(&outs[k]);
    free(ins);
    free(copies);
    free(outs);
    return st;
}

tsr_status *exec_run(tsr_session *s, const tsr_tensor *const *inputs, rt_tensor *outputs) {
    ir_graph *g = s->model->graph;
    rt_tensor *slots = calloc(g->n_values + 1, sizeof *slots);
    if (!slots) return TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (v->constant && !v->producer) rt_tensor_borrow(&slots[i], &v->constant->view);
    }
    for (size_t i = 0; i < s->n_inputs; i++) rt_tensor_borrow(&slots[s->inputs[i]->index], inputs[i]);
    tsr_status *st = NULL;
    for (size_t p = 0; p < s->part.n_pieces && !st; p++) st = run_piece(s, p, slots);
    for (size_t o = 0; o < g->n_outputs && !st; o++) {
        rt_tensor *slot = &slots[g->outputs[o]->index];
        if (!slot->view.struct_size) {
            st = tsr_error(TSR_ERR_RUNTIME, "graph output '%s' was not computed", g->outputs[o]->name);
        } else if (slot->host && slot->host->view.data == slot->view.data) {
            /* Hand the owned host tensor over; a second output naming the
             * same value gets a copy. */
            outputs[o] = *slot;
            memset(slot, 0, sizeof *slot);
            rt_tensor_borrow(slot, &outputs[o].view);
        } else {
            st = rt_tensor_copy_to(&outputs[o], slot, NULL);
        }
    }
    for (size_t i = 0; i < g->n_values; i++) rt_tensor_release(&slots[i]);
    free(slots);
    if (st)
        for (size_t o = 0; o < g->n_outputs; o++) rt_tensor_release(&outputs[o]);
    return st;
}
