/* Runtime tensor slots: ownership and host<->device copies. */
#include "rt_tensor.h"

#include <stdlib.h>
#include <string.h>

#include "run_budget.h"
#include "status.h"

void rt_tensor_release(rt_tensor *t) {
    if (t->budget) run_budget_unreserve(t->budget, t->charged);
    if (t->borrowed) {
        memset(t, 0, sizeof *t);
        return;
    }
    if (t->host) ir_tensor_free(t->host);
    if (t->dev_owner && t->view.data) {
        const tsr_plugin *pl = t->dev_owner->plugin;
        void (*mem_free)(void *, int32_t, void *) = PLUGIN_SLOT(pl, mem_free);
        if (mem_free) mem_free(t->dev_owner->state, t->view.device_index, t->view.data);
    }
    free(t->dev_dims);
    value_free(t->value);
    memset(t, 0, sizeof *t);
}

tsr_status *rt_tensor_take_value(rt_tensor *t, tsr_value *v) {
    rt_tensor_release(t);
    if (v->kind != TSR_VALUE_TENSOR) {
        t->value = v;
        return NULL;
    }
    if (!v->tensor) {
        tsr_status *st = ir_tensor_clone(v->borrowed, &t->host);
        value_free(v);
        if (st) return st;
    } else {
        t->host = v->tensor;
        v->tensor = NULL;
        value_free(v);
    }
    t->view = t->host->view;
    return NULL;
}

void rt_tensor_borrow_value(rt_tensor *t, const tsr_value *v) {
    if (v->kind == TSR_VALUE_TENSOR) {
        rt_tensor_borrow(t, value_tensor_view(v));
        return;
    }
    rt_tensor_release(t);
    t->value = (tsr_value *)v;
    t->borrowed = true;
}

void rt_tensor_borrow_slot(rt_tensor *t, const rt_tensor *src) {
    rt_tensor_release(t);
    t->view = src->view;
    t->dev_owner = src->dev_owner;
    t->value = src->value;
    t->borrowed = true;
}

void rt_tensor_move(rt_tensor *dst, rt_tensor *src) {
    rt_tensor_release(dst);
    *dst = *src;
    memset(src, 0, sizeof *src);
}

tsr_status *rt_tensor_alloc_host(rt_tensor *t, int32_t elem_type, int32_t rank, const int64_t *dims) {
    ir_tensor *h;
    TSR_TRY(ir_tensor_new(elem_type, rank, dims, &h));
    rt_tensor_release(t);
    t->host = h;
    t->view = h->view;
    return NULL;
}

tsr_status *rt_tensor_alloc_device(rt_tensor *t, provider_inst *prov, int32_t device, int32_t elem_type, int32_t rank,
                                   const int64_t *dims) {
    const tsr_plugin *pl = prov->plugin;
    tsr_status *(*mem_alloc)(void *, int32_t, size_t, void **) = PLUGIN_SLOT(pl, mem_alloc);
    if (!mem_alloc) return tsr_error(TSR_ERR_PROVIDER, "provider '%s' has device memory but no mem_alloc", prov->name);
    uint64_t count;
    size_t nbytes;
    if (rank < 0 || rank > IR_MAX_RANK || !ir_dims_count(rank, dims, &count) ||
        !ir_elem_bytes(elem_type, count, &nbytes) || elem_type == TSR_STRING)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "bad device tensor shape or type");
    int64_t *d = malloc(sizeof(int64_t) * (size_t)(rank ? rank : 1));
    if (!d) return TSR_NO_MEMORY();
    if (rank) memcpy(d, dims, sizeof(int64_t) * (size_t)rank);
    void *handle = NULL;
    tsr_status *s = mem_alloc(prov->state, device, nbytes, &handle);
    if (s) {
        free(d);
        return tsr_error_wrap(s, "provider '%s' allocating %zu bytes on device %d", prov->name, nbytes, (int)device);
    }
    rt_tensor_release(t);
    t->dev_dims = d;
    t->dev_owner = prov;
    t->view.struct_size = sizeof t->view;
    t->view.elem_type = elem_type;
    t->view.rank = rank;
    t->view.dims = d;
    t->view.data = handle;
    t->view.nbytes = nbytes;
    t->view.memory_kind = TSR_MEMORY_DEVICE;
    t->view.device_index = device;
    return NULL;
}

void rt_tensor_borrow(rt_tensor *t, const tsr_tensor *src) {
    rt_tensor_release(t);
    t->view = *src;
    t->view.struct_size = sizeof t->view;
    t->borrowed = true;
}

tsr_status *rt_tensor_copy_to(rt_tensor *dst, const rt_tensor *src, provider_inst *dst_prov, int32_t dst_device) {
    if (src->value) {
        if (dst_prov && dst_prov->memory_kind == TSR_MEMORY_DEVICE)
            return tsr_error(TSR_ERR_NOT_SUPPORTED,
                             "provider '%s' keeps tensors in device memory and cannot take a "
                             "sequence, optional or map",
                             dst_prov->name);
        tsr_value *c;
        TSR_TRY(value_clone(src->value, &c));
        return rt_tensor_take_value(dst, c);
    }
    const tsr_tensor *v = &src->view;
    rt_tensor tmp;
    memset(&tmp, 0, sizeof tmp);
    bool to_device = dst_prov && dst_prov->memory_kind == TSR_MEMORY_DEVICE;
    if (to_device) {
        TSR_TRY(rt_tensor_alloc_device(&tmp, dst_prov, dst_device, v->elem_type, v->rank, v->dims));
    } else {
        TSR_TRY(rt_tensor_alloc_host(&tmp, v->elem_type, v->rank, v->dims));
    }
    tsr_status *s = NULL;
    if (v->memory_kind == TSR_MEMORY_DEVICE && src->dev_owner) {
        provider_inst *sp = src->dev_owner;
        tsr_status *(*to_host)(void *, int32_t, void *, const void *, size_t) = PLUGIN_SLOT(sp->plugin, copy_to_host);
        tsr_status *(*between)(void *, int32_t, void *, int32_t, const void *, size_t) =
            PLUGIN_SLOT(sp->plugin, copy_between_devices);
        if (to_device && sp == dst_prov && between) {
            s = between(sp->state, dst_device, tmp.view.data, v->device_index, v->data, v->nbytes);
        } else if (to_device) {
            /* Device to device through the host: simple, and rare. */
            void *bounce = malloc(v->nbytes ? v->nbytes : 1);
            if (!bounce) s = TSR_NO_MEMORY();
            if (!s) s = to_host(sp->state, v->device_index, bounce, v->data, v->nbytes);
            if (!s) {
                tsr_status *(*to_dev)(void *, int32_t, void *, const void *, size_t) =
                    PLUGIN_SLOT(dst_prov->plugin, copy_to_device);
                s = to_dev(dst_prov->state, dst_device, tmp.view.data, bounce, v->nbytes);
            }
            free(bounce);
        } else {
            s = to_host(sp->state, v->device_index, tmp.view.data, v->data, v->nbytes);
        }
    } else if (to_device) {
        tsr_status *(*to_dev)(void *, int32_t, void *, const void *, size_t) =
            PLUGIN_SLOT(dst_prov->plugin, copy_to_device);
        s = to_dev(dst_prov->state, dst_device, tmp.view.data, v->data, v->nbytes);
    } else if (v->elem_type == TSR_STRING) {
        const tsr_string *strs = v->data;
        for (size_t i = 0; !s && i < v->nbytes / sizeof(tsr_string); i++)
            s = ir_tensor_set_string(tmp.host, i, strs[i].data, strs[i].size);
    } else if (v->nbytes) {
        memcpy(tmp.view.data, v->data, v->nbytes);
    }
    if (s) {
        rt_tensor_release(&tmp);
        return s;
    }
    rt_tensor_release(dst);
    *dst = tmp;
    return NULL;
}
