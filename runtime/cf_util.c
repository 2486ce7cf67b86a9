/* Helpers for the control-flow runners: scope, inputs and outputs of the
 * node, scalars, slicing and stacking along an axis. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena_plan.h"
#include "control_flow.h"
#include "run_context.h"
#include "status.h"

static void borrow_input(const struct tsr_run_context *ctx, size_t k, rt_tensor *out) {
    memset(out, 0, sizeof *out);
    if (ctx->in_values && ctx->in_values[k]) rt_tensor_borrow_value(out, ctx->in_values[k]);
    else if (ctx->inputs[k]) rt_tensor_borrow(out, ctx->inputs[k]);
}

tsr_status *cf_outer_scope(const cf_piece *p, const struct tsr_run_context *ctx, rt_tensor **slots, outer_scope *out) {
    size_t n = p->view->n_inputs;
    rt_tensor *s = calloc(n + 1, sizeof *s);
    if (!s) return TSR_NO_MEMORY();
    for (size_t k = 0; k < n; k++) borrow_input(ctx, k, &s[k]);
    *slots = s;
    out->n = n;
    out->values = p->view->inputs;
    out->slots = s;
    return NULL;
}

void cf_node_input(const cf_piece *p, const struct tsr_run_context *ctx, size_t i, rt_tensor *out) {
    memset(out, 0, sizeof *out);
    const ir_value *nv = i < p->node->n_inputs ? p->node->inputs[i] : NULL;
    if (!nv) return;
    for (size_t k = 0; k < p->view->n_inputs; k++)
        if (p->view->inputs[k] == nv) {
            borrow_input(ctx, k, out);
            return;
        }
}

size_t cf_output_index(const cf_piece *p, size_t i) {
    const ir_value *nv = i < p->node->n_outputs ? p->node->outputs[i] : NULL;
    for (size_t j = 0; nv && j < p->view->n_outputs; j++)
        if (p->view->outputs[j] == nv) return j;
    return SIZE_MAX;
}

void cf_set_output(const cf_piece *p, struct tsr_run_context *ctx, size_t i, rt_tensor *src) {
    size_t j = cf_output_index(p, i);
    if (j == SIZE_MAX) rt_tensor_release(src);
    else rt_tensor_move(&ctx->outputs[j], src);
}

void cf_release_all(rt_tensor *t, size_t n) {
    for (size_t i = 0; t && i < n; i++) rt_tensor_release(&t[i]);
}

void cf_hold(rt_tensor *slot, ir_tensor *t) {
    memset(slot, 0, sizeof *slot);
    slot->host = t;
    slot->view = t->view;
}

tsr_status *cf_scalar_i64(const rt_tensor *t, const char *what, int64_t *out) {
    const tsr_tensor *v = &t->view;
    if (t->value || !v->struct_size || v->memory_kind != TSR_MEMORY_HOST)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "%s must be a tensor in host memory", what);
    uint64_t count;
    if (!ir_dims_count(v->rank, v->dims, &count) || count != 1)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "%s must hold exactly one element", what);
    switch (v->elem_type) {
    case TSR_BOOL:
    case TSR_UINT8:
    case TSR_INT8: *out = ((const uint8_t *)v->data)[0]; break;
    case TSR_INT32: *out = ((const int32_t *)v->data)[0]; break;
    case TSR_INT64: *out = ((const int64_t *)v->data)[0]; break;
    default:
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "%s has element type %d; expected bool or an integer", what,
                         (int)v->elem_type);
    }
    return NULL;
}

/* Bytes per element, refusing packed 4-bit types (their slices are not
 * byte-aligned). */
static tsr_status *elem_size(int32_t et, size_t *out) {
    size_t one, two;
    if (!ir_elem_bytes(et, 1, &one) || !ir_elem_bytes(et, 2, &two) || two != 2 * one || !one)
        return tsr_error(TSR_ERR_NOT_SUPPORTED, "element type %d cannot be sliced or stacked", (int)et);
    *out = one;
    return NULL;
}

/* Copies `count` elements, duplicating strings. */
static tsr_status *copy_elems(ir_tensor *dst, size_t dst_off, const tsr_tensor *src, size_t src_off, size_t count,
                              size_t esize) {
    if (src->elem_type != TSR_STRING) {
        if (count)
            memcpy((char *)dst->data + dst_off * esize, (const char *)src->data + src_off * esize, count * esize);
        return NULL;
    }
    const tsr_string *s = src->data;
    for (size_t i = 0; i < count; i++)
        TSR_TRY(ir_tensor_set_string(dst, dst_off + i, s[src_off + i].data, s[src_off + i].size));
    return NULL;
}

tsr_status *cf_slice(const tsr_tensor *t, int32_t axis, int64_t index, ir_tensor **out) {
    if (t->memory_kind != TSR_MEMORY_HOST) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "slicing a device tensor");
    if (axis < 0 || axis >= t->rank || index < 0 || index >= t->dims[axis])
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "slice %lld along axis %d is out of range", (long long)index,
                         (int)axis);
    size_t esize = 0;
    TSR_TRY(elem_size(t->elem_type, &esize));
    int64_t dims[IR_MAX_RANK];
    size_t outer = 1, inner = 1;
    int32_t r = 0;
    for (int32_t d = 0; d < t->rank; d++) {
        if (d == axis) continue;
        dims[r++] = t->dims[d];
        if (d < axis) outer *= (size_t)t->dims[d];
        else inner *= (size_t)t->dims[d];
    }
    ir_tensor *o;
    TSR_TRY(ir_tensor_new(t->elem_type, r, dims, &o));
    size_t n_axis = (size_t)t->dims[axis];
    for (size_t i = 0; i < outer; i++) {
        tsr_status *st = copy_elems(o, i * inner, t, (i * n_axis + (size_t)index) * inner, inner, esize);
        if (st) {
            ir_tensor_free(o);
            return st;
        }
    }
    *out = o;
    return NULL;
}

tsr_status *cf_stack(const rt_tensor *parts, size_t n, int32_t axis, bool reverse, int32_t elem_type,
                     int32_t empty_rank, const int64_t *empty_dims, ir_tensor **out) {
    if (n == 0) return ir_tensor_new(elem_type, empty_rank, empty_dims, out);
    const tsr_tensor *f = &parts[0].view;
    for (size_t i = 0; i < n; i++) {
        const tsr_tensor *t = &parts[i].view;
        if (parts[i].value || t->memory_kind != TSR_MEMORY_HOST)
            return tsr_error(TSR_ERR_NOT_SUPPORTED, "scan outputs must be host tensors");
        if (t->elem_type != f->elem_type || t->rank != f->rank ||
            (t->rank && memcmp(t->dims, f->dims, sizeof(int64_t) * (size_t)t->rank) != 0))
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "scan output %zu has a different shape or type than the first",
                             i);
    }
    if (axis < 0 || axis > f->rank) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "stack axis %d out of range", (int)axis);
    size_t esize = 0;
    TSR_TRY(elem_size(f->elem_type, &esize));
    int64_t dims[IR_MAX_RANK + 1];
    size_t outer = 1, inner = 1;
    for (int32_t d = 0, r = 0; d <= f->rank; d++) {
        if (d == axis) {
            dims[d] = (int64_t)n;
            continue;
        }
        dims[d] = f->dims[r];
        if (d < axis) outer *= (size_t)f->dims[r];
        else inner *= (size_t)f->dims[r];
        r++;
    }
    if (f->rank + 1 > IR_MAX_RANK) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "stacked rank too large");
    ir_tensor *o;
    TSR_TRY(ir_tensor_new(f->elem_type, f->rank + 1, dims, &o));
    for (size_t i = 0; i < outer; i++)
        for (size_t k = 0; k < n; k++) {
            const tsr_tensor *src = &parts[reverse ? n - 1 - k : k].view;
            tsr_status *st = copy_elems(o, (i * n + k) * inner, src, i * inner, inner, esize);
            if (st) {
                ir_tensor_free(o);
                return st;
            }
        }
    *out = o;
    return NULL;
}

/* A body's arena keeps one plan, not one per input shape as the main
 * graph's does: a carried value may change shape every iteration, and
 * each new shape would record and build a plan again. A tensor larger
 * than planned is allocated as before and the plan grows to it after that
 * iteration (arena_run_end), so one plan ends up fitting every iteration. */
tsr_status *cf_run_body(const cf_piece *p, size_t k, const exec_hooks *hooks, const rt_tensor *ins,
                        const outer_scope *os, bool to_host, struct run_budget *budget, rt_tensor *outs) {
    const graph_plan *body = &p->plans[k];
    arena_run ar;
    /* without an arena, not even its bookkeeping: a fused body runs as before */
    bool planned = p->arenas[k] != NULL;
    if (planned) arena_run_begin(p->arenas[k], body, NULL, 0, &ar);
    arena_run *arp = planned ? &ar : NULL;
    tsr_status *st;
    if (!hooks) {
        st = graph_run_arena(body, p->env->provs, ins, os, to_host, NULL, NULL, budget, arp, outs);
    } else {
        bool is_if = strcmp(p->node->op_type, "If") == 0;
        char path[1024];
        snprintf(path, sizeof path, "%s%s/%s/", hooks->path ? hooks->path : "", p->node->name,
                 is_if ? (k ? "else_branch" : "then_branch") : "body");
        exec_hooks child = *hooks;
        child.path = path;
        if (hooks->body_begin) hooks->body_begin(hooks->user, path);
        st = graph_run_arena(body, p->env->provs, ins, os, to_host, NULL, &child, budget, arp, outs);
    }
    if (planned) arena_run_end(&ar, !st);
    return st;
}
