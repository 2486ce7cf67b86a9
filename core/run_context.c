/* The host API's run side: a provider's kernel reads its inputs and makes
 * its outputs through these, so every byte it allocates is checked against
 * the session's tensor_bytes limit and counted in the run's working_bytes
 * before it exists, and lands in the memory of the piece's device. */
#include "run_context.h"

#include <stdlib.h>
#include <string.h>

#include "run_budget.h"
#include "status.h"

#define R(x) ((struct tsr_run_context *)(x))
size_t host_run_input_count(const tsr_run_context *c) { return R(c)->n_inputs; }
const tsr_tensor *host_run_input(const tsr_run_context *c, size_t i) {
    return i < R(c)->n_inputs ? R(c)->inputs[i] : NULL;
}
size_t host_run_output_count(const tsr_run_context *c) { return R(c)->n_outputs; }

const tsr_value *host_run_input_value(const tsr_run_context *cx, size_t i) {
    struct tsr_run_context *c = (struct tsr_run_context *)R(cx);
    if (i >= c->n_inputs) return NULL;
    if (c->in_values && c->in_values[i]) return c->in_values[i];
    if (!c->inputs[i]) return NULL;
    if (!c->wrappers && !(c->wrappers = calloc(c->n_inputs, sizeof *c->wrappers))) return NULL;
    if (!c->wrappers[i] && value_borrow_tensor(c->inputs[i], &c->wrappers[i])) return NULL;
    return c->wrappers[i];
}

tsr_status *host_run_set_output_value(tsr_run_context *cx, size_t index, tsr_value *v) {
    struct tsr_run_context *c = R(cx);
    if (!v) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "run_set_output_value: NULL value");
    if (index >= c->n_outputs || rt_present(&c->outputs[index])) {
        value_free(v);
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output %zu is out of range or already set", index);
    }
    rt_tensor *slot = &c->outputs[index];
    TSR_TRY(rt_tensor_take_value(slot, v));
    /* Built by the kernel already: counted now, so what follows sees it. */
    tsr_status *st = run_budget_charge(slot, c->budget, run_budget_slot_bytes(slot), "an output value");
    if (st) rt_tensor_release(slot);
    return st;
}

int32_t host_run_should_stop(const tsr_run_context *c) {
    return c && run_budget_stopped(((const struct tsr_run_context *)c)->budget);
}

tsr_status *host_run_charge(tsr_run_context *c, uint64_t bytes, const char *what) {
    struct tsr_run_context *ctx = (struct tsr_run_context *)c;
    if (!ctx || !bytes || !ctx->budget) return NULL;
    TSR_TRY(run_budget_reserve(ctx->budget, bytes, what && *what ? what : "a provider's own memory"));
    ctx->charged += bytes;
    return NULL;
}

tsr_status *host_run_alloc_output(tsr_run_context *cx, size_t index, int32_t elem_type, int32_t rank,
                                  const int64_t *dims, tsr_tensor **out) {
    struct tsr_run_context *c = R(cx);
    rt_tensor *slot;
    bool device = c->prov && c->prov->memory_kind == TSR_MEMORY_DEVICE;
    if (index == (size_t)-1) {
        rt_tensor **s = realloc(c->scratch, sizeof *s * (c->n_scratch + 1));
        if (!s) return TSR_NO_MEMORY();
        c->scratch = s;
        if (!(slot = calloc(1, sizeof *slot))) return TSR_NO_MEMORY();
        s[c->n_scratch++] = slot;
    } else if (index >= c->n_outputs) {
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output index %zu out of range (%zu outputs)", index, c->n_outputs);
    } else {
        slot = &c->outputs[index];
        if (rt_present(slot)) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output %zu allocated twice", index);
    }
    if (rank < 0 || rank > IR_MAX_RANK || (rank > 0 && !dims))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output rank %d is invalid", (int)rank);
    uint64_t count;
    size_t bytes;
    if (!ir_dims_count(rank, dims, &count) || !ir_elem_bytes(elem_type, count, &bytes))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "output shape is negative or too large");
    if (c->max_tensor_bytes && bytes > c->max_tensor_bytes)
        return tsr_error(TSR_ERR_NO_MEMORY, "an output of %zu bytes exceeds the session's tensor_bytes limit (%llu)",
                         bytes, (unsigned long long)c->max_tensor_bytes);
    TSR_TRY(run_budget_reserve(c->budget, bytes, index == (size_t)-1 ? "scratch" : "an output"));
    /* A host tensor the run's arena planned (runtime/arena_plan.c) goes
     * into its block instead of an allocation of its own. */
    bool placed = !device && elem_type != TSR_STRING && c->place &&
        c->place(c->place_user, index, bytes, elem_type, rank, dims, slot);
    tsr_status *s = placed                  ? NULL
        : device && elem_type != TSR_STRING ? rt_tensor_alloc_device(slot, c->prov, c->device, elem_type, rank, dims)
                                            : rt_tensor_alloc_host(slot, elem_type, rank, dims);
    if (s) {
        run_budget_unreserve(c->budget, bytes);
        return s;
    }
    run_budget_assign(slot, c->budget, bytes);
    *out = &slot->view;
    return NULL;
}

void run_context_end(struct tsr_run_context *ctx) {
    if (ctx->charged) run_budget_unreserve(ctx->budget, ctx->charged);
    ctx->charged = 0;
    for (size_t i = 0; i < ctx->n_scratch; i++) {
        rt_tensor_release(ctx->scratch[i]);
        free(ctx->scratch[i]);
    }
    free(ctx->scratch);
    ctx->scratch = NULL;
    ctx->n_scratch = 0;
    if (ctx->wrappers)
        for (size_t i = 0; i < ctx->n_inputs; i++) value_free(ctx->wrappers[i]);
    free(ctx->wrappers);
    ctx->wrappers = NULL;
}

tsr_status *host_tensor_set_string(tsr_tensor *t, size_t index, const char *data, size_t size) {
    if (!t || t->elem_type != TSR_STRING || t->memory_kind != TSR_MEMORY_HOST)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor_set_string on a non-string tensor");
    return ir_strings_set(t->data, t->nbytes, index, data, size);
}
