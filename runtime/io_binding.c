/* tsr_io_binding: which graph inputs come from host tensors or device
 * values, which outputs are read back or left in a provider's memory, and
 * the results of the last run until the application takes them. Checks
 * happen when something is bound, so a wrong binding is reported where it
 * was made; the run itself is runtime/io_binding_run.c. */
#include <stdlib.h>
#include <string.h>

#include "device_value.h"
#include "status.h"

tsr_status *tsr_io_binding_create(tsr_session *s, tsr_io_binding **out) {
    if (!s || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and out are required");
    const ir_graph *g = s->model->graph;
    tsr_io_binding *b = calloc(1, sizeof *b);
    if (!b) return TSR_NO_MEMORY();
    b->session = s;
    b->n_inputs = g->n_inputs;
    b->n_outputs = g->n_outputs;
    b->inputs = calloc(g->n_inputs + 1, sizeof *b->inputs);
    b->outputs = calloc(g->n_outputs + 1, sizeof *b->outputs);
    if (!b->inputs || !b->outputs) {
        tsr_io_binding_free(b);
        return TSR_NO_MEMORY();
    }
    *out = b;
    return NULL;
}

static void unbind_input(bound_input *in) {
    free(in->dims);
    memset(in, 0, sizeof *in);
}

/* Results are device values of the session: freeing them takes its lock
 * unless the caller holds it already. */
static void drop_results(tsr_io_binding *b, bool locked) {
    for (size_t o = 0; o < b->n_outputs; o++) {
        bound_output *r = &b->outputs[o];
        tsr_value_free(r->host);
        if (locked) device_value_free_locked(r->dev);
        else tsr_device_value_free(r->dev);
        r->host = NULL;
        r->dev = NULL;
    }
}

void io_binding_drop_results_locked(tsr_io_binding *b) { drop_results(b, true); }

void tsr_io_binding_clear(tsr_io_binding *b) {
    if (!b) return;
    drop_results(b, false);
    for (size_t i = 0; i < b->n_inputs; i++) unbind_input(&b->inputs[i]);
    for (size_t o = 0; o < b->n_outputs; o++) b->outputs[o].kind = BIND_OUT_NONE;
}

void tsr_io_binding_free(tsr_io_binding *b) {
    if (!b) return;
    if (b->outputs && b->inputs) tsr_io_binding_clear(b);
    free(b->inputs);
    free(b->outputs);
    free(b);
}

/* The graph input index of `name`, one the caller feeds. */
static tsr_status *input_index(const tsr_io_binding *b, const char *name, size_t *k) {
    if (!b || !name) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "binding and name are required");
    *k = session_input_index(b->session, name);
    if (*k == SIZE_MAX) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the model has no input '%s'", name);
    return NULL;
}

tsr_status *tsr_io_binding_bind_input(tsr_io_binding *b, const char *name, const tsr_tensor *t) {
    size_t k;
    TSR_TRY(input_index(b, name, &k));
    if (!t) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': tensor is NULL", name);
    if (t->memory_kind != TSR_MEMORY_HOST)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "input '%s' must be in host memory; bind a device value with tsr_io_binding_bind_input_device",
                         name);
    rt_tensor view;
    memset(&view, 0, sizeof view);
    rt_tensor_borrow(&view, t);
    TSR_TRY(session_check_input_slot(b->session->model->graph->inputs[k], &view));
    int64_t *dims = malloc(sizeof *dims * (size_t)(t->rank + 1));
    if (!dims) return TSR_NO_MEMORY();
    if (t->rank) memcpy(dims, t->dims, sizeof *dims * (size_t)t->rank);
    bound_input *in = &b->inputs[k];
    unbind_input(in);
    in->kind = BIND_HOST;
    in->tensor = view.view;
    in->tensor.dims = dims;
    in->dims = dims;
    return NULL;
}

tsr_status *tsr_io_binding_bind_input_device(tsr_io_binding *b, const char *name, const tsr_device_value *v) {
    size_t k;
    TSR_TRY(input_index(b, name, &k));
    if (!v) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': device value is NULL", name);
    if (!v->session)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "input '%s': the session that made this device value has been freed",
                         name);
    if (v->session != b->session)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "input '%s': the device value was made by another session; values live in the memory of their "
                         "own session's providers",
                         name);
    TSR_TRY(session_check_input_slot(b->session->model->graph->inputs[k], &v->slot));
    bound_input *in = &b->inputs[k];
    unbind_input(in);
    in->kind = BIND_DEVICE;
    in->device_id = v->id;
    return NULL;
}

static tsr_status *bind_output(tsr_io_binding *b, const char *name, bound_output_kind kind) {
    if (!b || !name) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "binding and name are required");
    size_t k = session_output_index(b->session, name);
    if (k == SIZE_MAX) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the model has no output '%s'", name);
    b->outputs[k].kind = kind;
    return NULL;
}

tsr_status *tsr_io_binding_bind_output(tsr_io_binding *b, const char *name) {
    return bind_output(b, name, BIND_OUT_HOST);
}

tsr_status *tsr_io_binding_bind_output_device(tsr_io_binding *b, const char *name) {
    return bind_output(b, name, BIND_OUT_DEVICE);
}

/* The result slot of output `name`, bound as `kind`. */
static tsr_status *result_of(tsr_io_binding *b, const char *name, bound_output_kind kind, bound_output **r) {
    if (!b || !name) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "binding, name and out are required");
    size_t k = session_output_index(b->session, name);
    if (k == SIZE_MAX) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the model has no output '%s'", name);
    *r = &b->outputs[k];
    if ((*r)->kind == BIND_OUT_NONE) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output '%s' is not bound", name);
    if ((*r)->kind != kind)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output '%s' is bound to %s; take it with %s", name,
                         (*r)->kind == BIND_OUT_HOST ? "host memory" : "device memory",
                         (*r)->kind == BIND_OUT_HOST ? "tsr_io_binding_take_output"
                                                     : "tsr_io_binding_take_output_device");
    if (!(*r)->host && !(*r)->dev)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "output '%s' holds no result: no run made one since it was bound, or it was taken", name);
    return NULL;
}

tsr_status *tsr_io_binding_take_output(tsr_io_binding *b, const char *name, tsr_value **out) {
    bound_output *r = NULL;
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "binding, name and out are required");
    TSR_TRY(result_of(b, name, BIND_OUT_HOST, &r));
    *out = r->host;
    r->host = NULL;
    return NULL;
}

tsr_status *tsr_io_binding_take_output_device(tsr_io_binding *b, const char *name, tsr_device_value **out) {
    bound_output *r = NULL;
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "binding, name and out are required");
    TSR_TRY(result_of(b, name, BIND_OUT_DEVICE, &r));
    *out = r->dev;
    r->dev = NULL;
    return NULL;
}
