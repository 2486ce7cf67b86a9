/* What a session tells callers about its inputs and outputs, and the checks
 * that a run's inputs match them. */
#include <stdlib.h>
#include <string.h>

#include "arena_plan.h"
#include "host_log.h"
#include "run_budget.h"
#include "run_options.h"
#include "session.h"
#include "status.h"

/* The io_dims/io_syms arrays hold inputs first, then outputs. */
static ir_value *io_value(const tsr_session *s, size_t k) {
    return k < s->n_inputs ? s->inputs[k] : s->model->graph->outputs[k - s->n_inputs];
}

static int io_name_cmp(const void *a, const void *b) {
    const io_name *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static size_t find_name(const io_name *sorted, size_t n, const char *name) {
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first entry >= name: the lowest index among equals */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(sorted[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && strcmp(sorted[lo].name, name) == 0 ? sorted[lo].index : SIZE_MAX;
}

size_t session_input_index(const tsr_session *s, const char *name) {
    return find_name(s->inputs_by_name, s->n_inputs, name);
}

size_t session_output_index(const tsr_session *s, const char *name) {
    return find_name(s->outputs_by_name, s->model->graph->n_outputs, name);
}

static tsr_status *sort_names(ir_value *const *values, size_t n, bool skip_constants, io_name **out, size_t *count) {
    io_name *a = malloc(sizeof *a * (n + 1));
    if (!a) return TSR_NO_MEMORY();
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!skip_constants || !values[i]->constant) a[m++] = (io_name){values[i]->name, i};
    qsort(a, m, sizeof *a, io_name_cmp);
    *out = a;
    if (count) *count = m;
    return NULL;
}

tsr_status *session_io_build(tsr_session *s) {
    ir_graph *g = s->model->graph;
    TSR_TRY(sort_names(g->inputs, g->n_inputs, true, &s->inputs_by_name, NULL));
    TSR_TRY(sort_names(g->outputs, g->n_outputs, false, &s->outputs_by_name, NULL));
    s->inputs = malloc(sizeof(ir_value *) * (g->n_inputs + 1));
    if (!s->inputs) return TSR_NO_MEMORY();
    for (size_t i = 0; i < g->n_inputs; i++)
        if (!g->inputs[i]->constant) s->inputs[s->n_inputs++] = g->inputs[i];
    size_t n = s->n_inputs + g->n_outputs;
    s->io_dims = calloc(n + 1, sizeof *s->io_dims);
    s->io_syms = calloc(n + 1, sizeof *s->io_syms);
    if (!s->io_dims || !s->io_syms) return TSR_NO_MEMORY();
    for (size_t k = 0; k < n; k++) {
        const ir_type *t = &io_value(s, k)->type;
        int32_t r = t->kind == IR_TYPE_TENSOR && t->rank > 0 ? t->rank : 0;
        s->io_dims[k] = malloc(sizeof(int64_t) * (size_t)(r + 1));
        s->io_syms[k] = malloc(sizeof(char *) * (size_t)(r + 1));
        if (!s->io_dims[k] || !s->io_syms[k]) return TSR_NO_MEMORY();
        for (int32_t d = 0; d < r; d++) {
            s->io_dims[k][d] = t->dims[d].value;
            s->io_syms[k][d] = t->dims[d].symbol;
        }
    }
    return NULL;
}

void session_io_free(tsr_session *s) {
    size_t n = s->n_inputs + (s->model && s->model->graph ? s->model->graph->n_outputs : 0);
    for (size_t k = 0; s->io_dims && k < n; k++) free(s->io_dims[k]);
    for (size_t k = 0; s->io_syms && k < n; k++) free((void *)s->io_syms[k]);
    free(s->io_dims);
    free(s->io_syms);
    free(s->inputs);
    free(s->inputs_by_name);
    free(s->outputs_by_name);
    free(s->shape_sig);
}

size_t tsr_session_input_count(const tsr_session *s) { return s ? s->n_inputs : 0; }
size_t tsr_session_output_count(const tsr_session *s) { return s ? s->model->graph->n_outputs : 0; }

static tsr_status *fill_info(const tsr_session *s, size_t k, tsr_io_info *out) {
    const ir_value *v = io_value(s, k);
    const ir_type *t = &v->type;
    if (!out || out->struct_size < offsetof(tsr_io_info, dim_symbols) + sizeof out->dim_symbols)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tsr_io_info.struct_size not set");
    out->name = v->name;
    out->elem_type = t->kind == IR_TYPE_TENSOR ? t->elem_type : 0;
    out->rank = t->kind == IR_TYPE_TENSOR ? t->rank : -1;
    out->dims = s->io_dims[k];
    out->dim_symbols = s->io_syms[k];
    if (TSR_HAS_MEMBER(out, tsr_io_info, kind)) {
        static const int32_t kinds[] = {
            [IR_TYPE_UNKNOWN] = TSR_VALUE_NONE,      [IR_TYPE_TENSOR] = TSR_VALUE_TENSOR,
            [IR_TYPE_SEQUENCE] = TSR_VALUE_SEQUENCE, [IR_TYPE_OPTIONAL] = TSR_VALUE_OPTIONAL,
            [IR_TYPE_MAP] = TSR_VALUE_MAP,           [IR_TYPE_SPARSE_TENSOR] = TSR_VALUE_TENSOR};
        out->kind = t->kind >= 0 && t->kind <= IR_TYPE_SPARSE_TENSOR ? kinds[t->kind] : TSR_VALUE_NONE;
    }
    return NULL;
}

tsr_status *tsr_session_input_info(const tsr_session *s, size_t i, tsr_io_info *out) {
    if (!s || i >= s->n_inputs) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input %zu out of range", i);
    return fill_info(s, i, out);
}

tsr_status *tsr_session_output_info(const tsr_session *s, size_t i, tsr_io_info *out) {
    if (!s || i >= s->model->graph->n_outputs) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output %zu out of range", i);
    return fill_info(s, s->n_inputs + i, out);
}

/* Checks one caller tensor against the declared input; device memory only
 * where `device_ok` (a device value bound through a tsr_io_binding). */
static tsr_status *check_tensor(const ir_value *v, const tsr_tensor *t, bool device_ok) {
    if (!t) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' is NULL", v->name);
    if (t->memory_kind != TSR_MEMORY_HOST && !(device_ok && t->memory_kind == TSR_MEMORY_DEVICE))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' must be in host memory", v->name);
    if (t->rank < 0 || t->rank > IR_MAX_RANK || (t->rank > 0 && !t->dims))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' has invalid rank %d", v->name, (int)t->rank);
    uint64_t count;
    size_t need;
    if (!ir_dims_count(t->rank, t->dims, &count) || !ir_elem_bytes(t->elem_type, count, &need))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' has an invalid shape or type", v->name);
    if (t->nbytes < need || (need && !t->data))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' holds %zu bytes; its shape needs %zu", v->name,
                         t->nbytes, need);
    /* against the declaration: an earlier run's sizes fill the symbolic
     * dims of the input's type, and must not bind the next run to them */
    if (v->type.kind != IR_TYPE_TENSOR) return NULL;
    int32_t elem = ir_input_declared_elem(v), rank = ir_input_declared_rank(v);
    if (elem && elem != t->elem_type)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' must be %s, got %s", v->name, tsr_elem_type_name(elem),
                         tsr_elem_type_name(t->elem_type));
    if (rank >= 0 && rank != t->rank)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' must have rank %d, got %d", v->name, (int)rank,
                         (int)t->rank);
    for (int32_t d = 0; d < rank; d++) {
        int64_t want = ir_input_declared_dim(v, d);
        if (want >= 0 && want != t->dims[d])
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' dimension %d must be %lld, got %lld", v->name,
                             (int)d, (long long)want, (long long)t->dims[d]);
    }
    return NULL;
}

static tsr_status *check_input(const ir_value *v, const tsr_tensor *t) { return check_tensor(v, t, false); }

/* Checks one caller value against the declared input's kind. */
static tsr_status *check_value(const ir_value *v, const tsr_value *val) {
    if (!val) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' is NULL", v->name);
    if (val->kind == TSR_VALUE_TENSOR) return check_input(v, value_tensor_view(val));
    static const int32_t want[] = {[IR_TYPE_SEQUENCE] = TSR_VALUE_SEQUENCE,
                                   [IR_TYPE_OPTIONAL] = TSR_VALUE_OPTIONAL,
                                   [IR_TYPE_MAP] = TSR_VALUE_MAP};
    int32_t k = v->type.kind;
    if (k == IR_TYPE_UNKNOWN) return NULL;
    if (k < 0 || k > IR_TYPE_MAP || want[k] != val->kind)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "input '%s' is given as a value of kind %d, which its declared type does not allow", v->name,
                         (int)val->kind);
    return NULL;
}

tsr_status *session_check_input_slot(const ir_value *v, const rt_tensor *slot) {
    return slot->value ? check_value(v, slot->value) : check_tensor(v, &slot->view, true);
}

/* An owned result slot as a value the caller owns (consumes the slot). */
tsr_status *session_output_value(rt_tensor *o, tsr_value **out) {
    if (o->value) {
        if (o->borrowed) return value_clone(o->value, out);
        *out = o->value;
        o->value = NULL;
        return NULL;
    }
    if (o->host && !o->borrowed && o->host->view.data == o->view.data && o->host->nbytes == o->view.nbytes) {
        ir_tensor *t = o->host;
        o->host = NULL;
        return value_wrap_tensor(t, out);
    }
    ir_tensor *t;
    TSR_TRY(ir_tensor_clone(&o->view, &t));
    return value_wrap_tensor(t, out);
}

/* Re-infers types when this run's input shapes differ from the last ones
 * inferred for, so every value's type describes the run (and a
 * contradiction, say an impossible broadcast, is reported before running). */
tsr_status *session_reinfer_if_new_shapes(tsr_session *s, const rt_tensor *bound) {
    ir_graph *g = s->model->graph;
    size_t len = 0;
    for (size_t i = 0; i < g->n_inputs; i++) len += 2 + (bound[i].value ? 0 : (size_t)bound[i].view.rank);
    int64_t *sig = malloc(sizeof *sig * (len + 1));
    if (!sig) return TSR_NO_MEMORY();
    size_t k = 0;
    for (size_t i = 0; i < g->n_inputs; i++) {
        const tsr_tensor *t = &bound[i].view;
        bool tensor = rt_present(&bound[i]) && !bound[i].value;
        sig[k++] = tensor ? t->elem_type : -1;
        sig[k++] = tensor ? t->rank : -1;
        for (int32_t d = 0; tensor && d < t->rank; d++) sig[k++] = t->dims[d];
    }
    if (s->shape_sig && s->shape_sig_len == len && memcmp(sig, s->shape_sig, sizeof *sig * len) == 0) {
        free(sig);
        return NULL;
    }
    const tsr_tensor **ts = calloc(g->n_inputs + 1, sizeof *ts);
    if (!ts) {
        free(sig);
        return TSR_NO_MEMORY();
    }
    for (size_t i = 0; i < g->n_inputs; i++)
        if (rt_present(&bound[i]) && !bound[i].value && !g->inputs[i]->constant) ts[i] = &bound[i].view;
    tsr_status *st = ir_infer_shapes_for_inputs(g, g->n_inputs, ts);
    free(ts);
    free(s->shape_sig);
    s->shape_sig = st ? NULL : sig;
    s->shape_sig_len = st ? 0 : len;
    if (st) free(sig);
    return st;
}

static tsr_status *session_run(tsr_session *s, const tsr_run_options *ro_opts, size_t input_count,
                               const char *const *input_names, const tsr_tensor *const *tensors,
                               const tsr_value *const *values, size_t output_count, const char *const *output_names,
                               tsr_value **outputs) {
    if (!s || !outputs || (input_count && (!input_names || (!tensors && !values))))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session, names, inputs and outputs are required");
    ir_graph *g = s->model->graph;
    rt_tensor *bound = calloc(g->n_inputs + 1, sizeof *bound);
    rt_tensor *outs = calloc(g->n_outputs + 1, sizeof *outs);
    tsr_status *st = NULL;
    if (!bound || !outs) st = TSR_NO_MEMORY();
    for (size_t i = 0; i < input_count && !st; i++) {
        size_t k = input_names[i] ? session_input_index(s, input_names[i]) : SIZE_MAX;
        if (!input_names[i]) st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "input name %zu is NULL", i);
        else if (k == SIZE_MAX) st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "the model has no input '%s'", input_names[i]);
        else if (rt_present(&bound[k]))
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' given twice", input_names[i]);
        else if (values && !(st = check_value(g->inputs[k], values[i]))) rt_tensor_borrow_value(&bound[k], values[i]);
        else if (!values && !(st = check_input(g->inputs[k], tensors[i]))) rt_tensor_borrow(&bound[k], tensors[i]);
    }
    for (size_t k = 0; k < g->n_inputs && !st; k++)
        if (!g->inputs[k]->constant && !rt_present(&bound[k]))
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s' was not given", g->inputs[k]->name);
    size_t *pick = calloc(output_count + 1, sizeof *pick);
    if (!st && !pick) st = TSR_NO_MEMORY();
    if (!st && !output_names && output_count != g->n_outputs)
        st =
            tsr_error(TSR_ERR_INVALID_ARGUMENT, "the model has %zu outputs, %zu requested", g->n_outputs, output_count);
    const ir_value **wanted = calloc(output_count + 1, sizeof *wanted);
    rt_tensor *got = calloc(output_count + 1, sizeof *got);
    body_want *bodies = calloc(output_count + 1, sizeof *bodies);
    bool any_body = false;
    if (!st && (!wanted || !got || !bodies)) st = TSR_NO_MEMORY();
    for (size_t j = 0; j < output_count && !st; j++) {
        if (!output_names) {
            pick[j] = j;
            continue;
        }
        if (!output_names[j]) {
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "output name %zu is NULL", j);
            break;
        }
        size_t k = session_output_index(s, output_names[j]);
        if (k == SIZE_MAX) k = g->n_outputs;
        pick[j] = k;
        if (k < g->n_outputs) continue;
        /* Not a graph output: an observed intermediate value, if kept. */
        const ir_value *v = ir_graph_find(g, output_names[j]);
        if (v && v->observed) wanted[j] = v;
        else if (v)
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT,
                           "'%s' is not a graph output; create the session with observe_all to read it",
                           output_names[j]);
        /* or a value inside a control-flow body, by path (observe_all) */
        else if (!(st = session_body_want(s, output_names[j], &got[j], &bodies[j])) && bodies[j].value) any_body = true;
        else if (!st) st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "the model has no output '%s'", output_names[j]);
    }
    run_budget budget;
    run_budget_init(&budget, s->max_working_bytes);
    run_options_apply(ro_opts, &budget);
    run_observer ro = {s,      &budget, output_count, wanted, false, got, NULL, ro_opts ? ro_opts->tag : NULL,
                       bodies, any_body};
    for (size_t j = 0; j < output_count && wanted && !ro.any_wanted; j++) ro.any_wanted = wanted[j] != NULL;
    exec_hooks hooks;
    run_observer_hooks(&ro, &hooks);
    if (!st) st = session_reinfer_if_new_shapes(s, bound);
    arena_run ar;
    arena_run_begin(st ? NULL : s->arena, &s->main, s->shape_sig, s->shape_sig_len, &ar);
    if (!st) st = graph_run_arena(&s->main, s->provs, bound, NULL, true, NULL, &hooks, &budget, &ar, outs);
    arena_run_end(&ar, !st);
    if (!st && ro.error) st = ro.error;
    else tsr_status_free(ro.error);
    tsr_value **made = calloc(output_count + 1, sizeof *made);
    /* first[k]: 1 + the first request of graph output k */
    size_t *first = calloc(g->n_outputs + 1, sizeof *first);
    if (!st && (!made || !first)) st = TSR_NO_MEMORY();
    for (size_t j = 0; j < output_count && !st; j++) {
        if (wanted[j] || bodies[j].value) {
            st = rt_present(&got[j]) ? session_output_value(&got[j], &made[j])
                                     : tsr_error(TSR_ERR_RUNTIME, "value '%s' was not computed", output_names[j]);
            continue;
        }
        rt_tensor *o = &outs[pick[j]];
        /* The same output asked for twice: later ones copy the first. */
        size_t q = first[pick[j]];
        if (!q) first[pick[j]] = j + 1;
        st = q ? value_clone(made[q - 1], &made[j]) : session_output_value(o, &made[j]);
    }
    free(first);
    if (!st) {
        for (size_t j = 0; j < output_count; j++) outputs[j] = made[j];
    } else if (made) {
        for (size_t j = 0; j < output_count; j++) tsr_value_free(made[j]);
    }
    for (size_t k = 0; outs && k < g->n_outputs; k++) rt_tensor_release(&outs[k]);
    for (size_t k = 0; bound && k < g->n_inputs; k++) rt_tensor_release(&bound[k]);
    for (size_t j = 0; got && j < output_count; j++) rt_tensor_release(&got[j]);
    for (size_t j = 0; bodies && j < output_count; j++) body_want_free(&bodies[j]);
    free(bodies);
    free(got);
    free(wanted);
    free(made);
    free(pick);
    free(outs);
    free(bound);
    s->working_peak = atomic_load(&budget.peak);
    s->working_left = atomic_load(&budget.live);
    return st;
}

/* One run at a time per session (tessera.h, "Threads"). */
static tsr_status *session_run_locked(tsr_session *s, const tsr_run_options *ro, size_t input_count,
                                      const char *const *input_names, const tsr_tensor *const *tensors,
                                      const tsr_value *const *values, size_t output_count,
                                      const char *const *output_names, tsr_value **outputs) {
    if (!s) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session, names, inputs and outputs are required");
    pthread_mutex_lock(&s->lock);
    int32_t outer = host_log_enter(s->log_level);
    const char *outer_tag = host_log_tag_enter(ro ? ro->tag : NULL);
    host_logger outer_logger = host_logger_enter(s->logger);
    tsr_status *st = session_run(s, ro, input_count, input_names, tensors, values, output_count, output_names, outputs);
    host_logger_enter(outer_logger);
    host_log_tag_enter(outer_tag);
    host_log_leave(outer);
    pthread_mutex_unlock(&s->lock);
    return st;
}

tsr_status *tsr_session_run(tsr_session *s, size_t input_count, const char *const *input_names,
                            const tsr_tensor *const *inputs, size_t output_count, const char *const *output_names,
                            tsr_value **outputs) {
    return session_run_locked(s, NULL, input_count, input_names, inputs, NULL, output_count, output_names, outputs);
}

tsr_status *tsr_session_run_values(tsr_session *s, size_t input_count, const char *const *input_names,
                                   const tsr_value *const *inputs, size_t output_count, const char *const *output_names,
                                   tsr_value **outputs) {
    return session_run_locked(s, NULL, input_count, input_names, NULL, inputs, output_count, output_names, outputs);
}

tsr_status *tsr_session_run_with_options(tsr_session *s, const tsr_run_options *ro, size_t input_count,
                                         const char *const *input_names, const tsr_tensor *const *inputs,
                                         size_t output_count, const char *const *output_names, tsr_value **outputs) {
    return session_run_locked(s, ro, input_count, input_names, inputs, NULL, output_count, output_names, outputs);
}

tsr_status *tsr_session_run_values_with_options(tsr_session *s, const tsr_run_options *ro, size_t input_count,
                                                const char *const *input_names, const tsr_value *const *inputs,
                                                size_t output_count, const char *const *output_names,
                                                tsr_value **outputs) {
    return session_run_locked(s, ro, input_count, input_names, NULL, inputs, output_count, output_names, outputs);
}
