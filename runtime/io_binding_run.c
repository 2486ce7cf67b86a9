/* tsr_session_run_with_binding: a run whose inputs may already be in a
 * provider's memory and whose outputs may stay there. The executor borrows
 * a bound device value's slot as it is, so a piece of the provider that
 * holds it reads it without a copy; outputs bound to device memory are not
 * read back but become device values the application owns. */
#include <stdlib.h>
#include <string.h>

#include "arena_plan.h"
#include "device_value.h"
#include "host_log.h"
#include "run_budget.h"
#include "run_options.h"
#include "status.h"

/* bound[k] for every graph input: what the binding feeds it. */
static tsr_status *feed_inputs(tsr_session *s, const tsr_io_binding *b, rt_tensor *bound) {
    const ir_graph *g = s->model->graph;
    for (size_t k = 0; k < g->n_inputs; k++) {
        const bound_input *in = &b->inputs[k];
        if (in->kind == BIND_HOST) {
            rt_tensor_borrow(&bound[k], &in->tensor);
        } else if (in->kind == BIND_DEVICE) {
            /* by id, so a value freed since it was bound is an error, not a
             * read of freed memory */
            const tsr_device_value *v = device_value_find(s, in->device_id);
            if (!v)
                return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' is bound to a device value that has been freed",
                                 g->inputs[k]->name);
            rt_tensor_borrow_slot(&bound[k], &v->slot);
        } else if (!g->inputs[k]->constant) {
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' is not bound", g->inputs[k]->name);
        }
    }
    return NULL;
}

/* Hands each bound output's result to the binding (consuming outs). */
static tsr_status *keep_outputs(tsr_session *s, tsr_io_binding *b, rt_tensor *outs) {
    tsr_status *st = NULL;
    for (size_t o = 0; o < b->n_outputs && !st; o++) {
        bound_output *r = &b->outputs[o];
        if (r->kind == BIND_OUT_HOST) st = session_output_value(&outs[o], &r->host);
        else if (r->kind == BIND_OUT_DEVICE) st = device_value_new(s, &outs[o], &r->dev);
    }
    if (st) io_binding_drop_results_locked(b);
    return st;
}

static tsr_status *binding_run(tsr_session *s, const tsr_run_options *opts, tsr_io_binding *b) {
    ir_graph *g = s->model->graph;
    io_binding_drop_results_locked(b);
    rt_tensor *bound = calloc(g->n_inputs + 1, sizeof *bound);
    rt_tensor *outs = calloc(g->n_outputs + 1, sizeof *outs);
    bool *to_host = calloc(g->n_outputs + 1, sizeof *to_host);
    tsr_status *st = !bound || !outs || !to_host ? TSR_NO_MEMORY() : feed_inputs(s, b, bound);
    /* Outputs bound nowhere stay where they are made and are dropped:
     * reading them back would be a copy nobody asked for. */
    for (size_t o = 0; o < g->n_outputs && !st; o++) to_host[o] = b->outputs[o].kind == BIND_OUT_HOST;
    run_budget budget;
    run_budget_init(&budget, s->max_working_bytes);
    run_options_apply(opts, &budget);
    run_observer ro = {s, &budget, 0, NULL, false, NULL, NULL, opts ? opts->tag : NULL, NULL, false};
    exec_hooks hooks;
    run_observer_hooks(&ro, &hooks);
    if (!st) st = session_reinfer_if_new_shapes(s, bound);
    arena_run ar;
    arena_run_begin(st ? NULL : s->arena, &s->main, s->shape_sig, s->shape_sig_len, &ar);
    if (!st) st = graph_run_arena(&s->main, s->provs, bound, NULL, false, to_host, &hooks, &budget, &ar, outs);
    arena_run_end(&ar, !st);
    if (!st && ro.error) st = ro.error;
    else tsr_status_free(ro.error);
    if (!st) st = keep_outputs(s, b, outs);
    for (size_t o = 0; outs && o < g->n_outputs; o++) rt_tensor_release(&outs[o]);
    for (size_t k = 0; bound && k < g->n_inputs; k++) rt_tensor_release(&bound[k]);
    free(to_host);
    free(outs);
    free(bound);
    s->working_peak = atomic_load(&budget.peak);
    s->working_left = atomic_load(&budget.live);
    return st;
}

tsr_status *tsr_session_run_with_binding(tsr_session *s, const tsr_run_options *opts, tsr_io_binding *b) {
    if (!s || !b) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and binding are required");
    if (b->session != s) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the binding was made for another session");
    /* One run at a time per session, in the session's log settings, as
     * tsr_session_run (tessera.h, "Threads"). */
    pthread_mutex_lock(&s->lock);
    int32_t outer = host_log_enter(s->log_level);
    const char *outer_tag = host_log_tag_enter(opts ? opts->tag : NULL);
    host_logger outer_logger = host_logger_enter(s->logger);
    tsr_status *st = binding_run(s, opts, b);
    host_logger_enter(outer_logger);
    host_log_tag_enter(outer_tag);
    host_log_leave(outer);
    pthread_mutex_unlock(&s->lock);
    return st;
}
