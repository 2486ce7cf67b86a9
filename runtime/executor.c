/* Runs a graph's pieces in order, frees each intermediate after its last
 * reader, and copies tensors between memories where pieces on different
 * devices meet. The same code runs the main graph and control-flow bodies. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena_plan.h"
#include "control_flow.h"
#include "graph_plan.h"
#include "graph_view.h"
#include "output_check.h"
#include "run_budget.h"
#include "run_context.h"
#include "status.h"

/* Whether a slot can be read directly by a piece of `prov` on `device`. */
static bool readable_by(const rt_tensor *t, const provider_inst *prov, int32_t device) {
    if (t->value) return prov->memory_kind != TSR_MEMORY_DEVICE;
    if (prov->memory_kind == TSR_MEMORY_DEVICE)
        return t->view.memory_kind == TSR_MEMORY_DEVICE && t->dev_owner == prov && t->view.device_index == device;
    return t->view.memory_kind == TSR_MEMORY_HOST;
}

/* A piece that is one Shape or Size node on a host provider reads its
 * input's dims only: a tensor in device memory reaches it as a dims-only
 * view (data NULL, nbytes 0) instead of being copied to the host whole. */
static bool reads_dims_only(const struct tsr_graph *v, const provider_inst *prov) {
    if (v->n_nodes != 1 || prov->memory_kind != TSR_MEMORY_HOST) return false;
    const ir_node *n = v->nodes[0];
    return (!n->domain || !n->domain[0]) && (strcmp(n->op_type, "Shape") == 0 || strcmp(n->op_type, "Size") == 0);
}

/* A device provider that reads constants from host memory itself
 * (TSR_PROVIDER_HOST_CONSTANTS) gets them without a copy. */
static bool reads_host_constants(const provider_inst *prov) {
    const tsr_provider *vt = prov->plugin->vt;
    return TSR_HAS_MEMBER(vt, tsr_provider, flags) && (vt->flags & TSR_PROVIDER_HOST_CONSTANTS);
}

double exec_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The session-long copy of constant `v` in the memory of prov's device,
 * made on first use. */
static tsr_status *constant_copy(graph_plan *gp, const ir_value *v, const rt_tensor *slot, provider_inst *prov,
                                 int32_t device, const rt_tensor **out) {
    for (size_t i = 0; i < gp->n_consts; i++)
        if (gp->consts[i]->value == v && gp->consts[i]->prov == prov && gp->consts[i]->device == device) {
            *out = &gp->consts[i]->copy;
            return NULL;
        }
    const_copy **c = realloc(gp->consts, sizeof *c * (gp->n_consts + 1));
    if (!c) return TSR_NO_MEMORY();
    gp->consts = c;
    const_copy *e = calloc(1, sizeof *e);
    if (!e) return TSR_NO_MEMORY();
    tsr_status *st = rt_tensor_copy_to(&e->copy, slot, prov, device);
    if (st) {
        free(e);
        return st;
    }
    e->value = v;
    e->prov = prov;
    e->device = device;
    c[gp->n_consts++] = e;
    *out = &e->copy;
    return NULL;
}

/* mirrors[i]: value i copied into another memory during this run, kept
 * until its last reader, so a value several pieces on a device read (a
 * residual input, say) crosses once per run, not once per piece. */
static tsr_status *run_piece(const graph_plan *gp, provider_inst *const *provs, size_t pi, rt_tensor *slots,
                             rt_tensor *mirrors, const exec_hooks *hooks, run_budget *budget, arena_run *arena) {
    const piece *pc = &gp->part.pieces[pi];
    const struct tsr_graph *v = pc->view;
    provider_inst *prov = provs[pc->prov_index];
    int32_t dev = v->device;
    const tsr_tensor **ins = calloc(v->n_inputs + 1, sizeof *ins);
    bool dims_only = reads_dims_only(v, prov);
    tsr_tensor *dims_views = dims_only ? calloc(v->n_inputs + 1, sizeof *dims_views) : NULL;
    const tsr_value **vals = calloc(v->n_inputs + 1, sizeof *vals);
    rt_tensor *outs = calloc(v->n_outputs + 1, sizeof *outs);
    tsr_status *st = NULL;
    if (!ins || !vals || !outs || (dims_only && !dims_views)) {
        st = TSR_NO_MEMORY();
        goto done;
    }
    for (size_t k = 0; k < v->n_inputs; k++) {
        const ir_value *iv = v->inputs[k];
        const rt_tensor *slot = &slots[iv->index];
        if (!rt_present(slot)) {
            /* An optional input the graph leaves out (e.g. an empty-named
             * body input) is simply absent. */
            if (iv->is_graph_input || iv->is_outer) continue;
            st = tsr_error(TSR_ERR_RUNTIME, "value '%s' is needed by node '%s' but was not computed", iv->name,
                           v->nodes[0]->name);
            break;
        }
        bool host_constant = iv->constant && !iv->producer && !slot->value;
        if (host_constant && slot->view.memory_kind == TSR_MEMORY_HOST && reads_host_constants(prov)) {
            /* the provider reads it from host memory itself */
        } else if (!readable_by(slot, prov, dev) && host_constant && prov->memory_kind == TSR_MEMORY_DEVICE) {
            const rt_tensor *cached = NULL;
            if ((st = constant_copy((graph_plan *)gp, iv, slot, prov, dev, &cached))) break;
            slot = cached;
        } else if (dims_only && !readable_by(slot, prov, dev) && !slot->value) {
            dims_views[k] = slot->view;
            dims_views[k].memory_kind = TSR_MEMORY_HOST;
            dims_views[k].device_index = 0;
            dims_views[k].data = NULL;
            dims_views[k].nbytes = 0;
            ins[k] = &dims_views[k];
            continue;
        } else if (!readable_by(slot, prov, dev)) {
            rt_tensor *m = &mirrors[iv->index];
            if (!rt_present(m) || !readable_by(m, prov, dev)) {
                /* A third memory replaces the mirror: rare, and still correct. */
                rt_tensor_release(m);
                double t0 = hooks ? exec_now() : 0;
                char what[256];
                snprintf(what, sizeof what, "a copy of '%s' for node '%s' on provider '%s'", iv->name,
                         v->nodes[0]->name, prov->name);
                if ((st = run_budget_copy(m, slot, prov, dev, budget, what))) break;
                if (hooks && hooks->copy_done)
                    hooks->copy_done(hooks->user, hooks->path ? hooks->path : "", gp, pi, iv, slot, m, t0, exec_now());
            }
            slot = m;
        }
        if (slot->value) vals[k] = slot->value;
        else ins[k] = &slot->view;
    }
    double t_start = 0;
    if (!st) {
        struct tsr_run_context ctx = {v->n_inputs,          ins,    v->n_outputs, outs,  prov, NULL, 0,   vals, NULL,
                                      gp->max_tensor_bytes, budget, dev,          hooks, 0,    NULL, NULL};
        /* Control-flow pieces move tensors into and out of their bodies:
         * they keep allocating each (arena_plan.c). */
        arena_piece ap = {arena, pi, 0};
        if (arena && prov->plugin != control_flow_plugin()) {
            ctx.place = arena_place;
            ctx.place_user = &ap;
        }
        t_start = hooks ? exec_now() : 0;
        st = prov->plugin->vt->run(pc->compiled, (tsr_run_context *)&ctx);
        run_context_end(&ctx);
        if (st) {
            const ir_node *n0 = v->nodes[0];
            st = tsr_error_wrap(st, "provider '%s' running %s'%s' (%s)", prov->name,
                                v->n_nodes > 1 ? "the piece starting at " : "node ", n0->name, n0->op_type);
        }
    }
    for (size_t k = 0; k < v->n_outputs && !st; k++) {
        if (!rt_present(&outs[k]))
            st = tsr_error(TSR_ERR_PROVIDER, "provider '%s' did not produce '%s' (node '%s')", prov->name,
                           v->outputs[k]->name, v->nodes[0]->name);
        else
            st = output_check(prov, v->outputs[k]->producer ? v->outputs[k]->producer : v->nodes[0], v->outputs[k],
                              &outs[k]);
    }
    if (!st) {
        for (size_t k = 0; k < v->n_outputs; k++) rt_tensor_move(&slots[v->outputs[k]->index], &outs[k]);
        if (hooks && hooks->piece_done)
            hooks->piece_done(hooks->user, hooks->path ? hooks->path : "", gp, pi, slots, t_start, exec_now());
        /* Liveness: drop what no later piece reads. */
        for (size_t k = 0; k < v->n_inputs; k++) {
            const ir_value *iv = v->inputs[k];
            if (gp->last_use[iv->index] == pi && !iv->is_graph_output) {
                rt_tensor_release(&slots[iv->index]);
                rt_tensor_release(&mirrors[iv->index]);
            }
        }
    }
done:
    if (outs)
        for (size_t k = 0; k < v->n_outputs; k++) rt_tensor_release(&outs[k]);
    free(ins);
    free(dims_views);
    free(vals);
    free(outs);
    return st;
}

/* Binds the body's placeholders for outer values to the enclosing slots. */
static tsr_status *bind_outer(const ir_graph *g, const outer_scope *outer, rt_tensor *slots) {
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (!v->is_outer) continue;
        size_t k = 0;
        while (outer && k < outer->n && outer->values[k] != v->outer) k++;
        if (!outer || k == outer->n) continue; /* unused here; a reader will complain */
        rt_tensor_borrow_slot(&slots[i], &outer->slots[k]);
    }
    return NULL;
}

tsr_status *graph_run(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                      const outer_scope *outer, bool to_host, run_budget *budget, rt_tensor *outputs) {
    return graph_run_hooked(p, provs, inputs, outer, to_host, NULL, budget, outputs);
}

tsr_status *graph_run_hooked(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                             const outer_scope *outer, bool to_host, const exec_hooks *hooks, run_budget *budget,
                             rt_tensor *outputs) {
    return graph_run_each(p, provs, inputs, outer, to_host, NULL, hooks, budget, outputs);
}

tsr_status *graph_run_each(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                           const outer_scope *outer, bool all_to_host, const bool *to_host_each,
                           const exec_hooks *hooks, run_budget *budget, rt_tensor *outputs) {
    return graph_run_arena(p, provs, inputs, outer, all_to_host, to_host_each, hooks, budget, NULL, outputs);
}

tsr_status *graph_run_arena(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                            const outer_scope *outer, bool all_to_host, const bool *to_host_each,
                            const exec_hooks *hooks, run_budget *budget, struct arena_run *arena, rt_tensor *outputs) {
    const ir_graph *g = p->g;
    rt_tensor *slots = calloc(g->n_values + 1, sizeof *slots);
    rt_tensor *mirrors = calloc(g->n_values + 1, sizeof *mirrors);
    if (!slots || !mirrors) {
        free(slots);
        free(mirrors);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (v->constant && !v->producer) rt_tensor_borrow(&slots[i], &v->constant->view);
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        if (rt_present(&inputs[i])) rt_tensor_borrow_slot(&slots[g->inputs[i]->index], &inputs[i]);
    tsr_status *st = bind_outer(g, outer, slots);
    for (size_t pi = 0; pi < p->part.n_pieces && !st; pi++) {
        if (run_budget_stopped(budget)) {
            const ir_node *n0 = p->part.pieces[pi].view->nodes[0];
            char what[300];
            snprintf(what, sizeof what, "node '%.200s' (%s)", n0->name, n0->op_type);
            st = run_budget_stop_error(budget, what);
            break;
        }
        st = run_piece(p, provs, pi, slots, mirrors, hooks, budget, arena);
    }
    for (size_t o = 0; o < g->n_outputs && !st; o++) {
        rt_tensor *slot = &slots[g->outputs[o]->index];
        bool on_device = !slot->value && slot->view.memory_kind == TSR_MEMORY_DEVICE;
        bool to_host = to_host_each ? to_host_each[o] : all_to_host;
        if (!rt_present(slot)) {
            st = tsr_error(TSR_ERR_RUNTIME, "graph output '%s' was not computed", g->outputs[o]->name);
        } else if (to_host && on_device && rt_present(&mirrors[g->outputs[o]->index]) &&
                   !mirrors[g->outputs[o]->index].value && !mirrors[g->outputs[o]->index].borrowed &&
                   mirrors[g->outputs[o]->index].view.memory_kind == TSR_MEMORY_HOST) {
            /* A host piece already read it back this run. */
            rt_tensor_move(&outputs[o], &mirrors[g->outputs[o]->index]);
            rt_tensor_borrow_slot(&mirrors[g->outputs[o]->index], &outputs[o]);
        } else if (!slot->borrowed && !(to_host && on_device)) {
            /* Hand the owned result over; a second output naming the same
             * value gets a copy. */
            rt_tensor_move(&outputs[o], slot);
            rt_tensor_borrow_slot(slot, &outputs[o]);
        } else {
            double t0 = hooks ? exec_now() : 0;
            char what[256];
            snprintf(what, sizeof what, "a copy of graph output '%s'", g->outputs[o]->name);
            st = run_budget_copy(&outputs[o], slot, to_host || !on_device ? NULL : slot->dev_owner,
                                 slot->view.device_index, budget, what);
            /* Reading a result back also waits for the device: worth seeing. */
            if (!st && on_device && hooks && hooks->copy_done)
                hooks->copy_done(hooks->user, hooks->path ? hooks->path : "", p, p->part.n_pieces, g->outputs[o], slot,
                                 &outputs[o], t0, exec_now());
        }
    }
    for (size_t i = 0; i < g->n_values; i++) {
        rt_tensor_release(&mirrors[i]);
        rt_tensor_release(&slots[i]);
    }
    free(mirrors);
    free(slots);
    if (st)
        for (size_t o = 0; o < g->n_outputs; o++) rt_tensor_release(&outputs[o]);
    return st;
}
