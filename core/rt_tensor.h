/* A tensor while a model runs: in host memory (owned or borrowed) or in a
 * provider's device memory. */
#ifndef TESSERA_CORE_RT_TENSOR_H
#define TESSERA_CORE_RT_TENSOR_H

#include "ir.h"
#include "plugin.h"
#include "value.h"

struct run_budget;

typedef struct rt_tensor {
    tsr_tensor view;          /* what pieces see */
    ir_tensor *host;          /* owned host tensor, or NULL */
    int64_t *dev_dims;        /* owned dims of a device tensor */
    provider_inst *dev_owner; /* provider whose memory holds view.data, or NULL */
    /* A sequence, optional or map instead of a tensor (view is then zero). */
    tsr_value *value;
    /* view.data, device memory or value belong to someone else: release
     * only forgets them. */
    bool borrowed;
    /* Bytes of a run's "working_bytes" budget this slot carries (what it
     * owns), given back on release; moves with the slot (core/run_budget.h). */
    struct run_budget *budget;
    uint64_t charged;
} rt_tensor;

/* Whether the slot holds anything (a tensor or another value). */
static inline bool rt_present(const rt_tensor *t) { return t->view.struct_size || t->value; }
/* Makes `t` hold `v`, taking ownership; a TENSOR value becomes a plain host
 * tensor slot. */
tsr_status *rt_tensor_take_value(rt_tensor *t, tsr_value *v);
/* Makes `t` a borrowed view of `v` (a tensor view when v is a TENSOR). */
void rt_tensor_borrow_value(rt_tensor *t, const tsr_value *v);

/* Releases what the slot owns and zeroes it (borrowed data is left alone),
 * giving back what it carried of a run's budget. */
void rt_tensor_release(rt_tensor *t);
/* Makes `t` own a new host tensor. */
tsr_status *rt_tensor_alloc_host(rt_tensor *t, int32_t elem_type, int32_t rank, const int64_t *dims);
/* Makes `t` own a new tensor in the memory of `prov`'s device `device`. */
tsr_status *rt_tensor_alloc_device(rt_tensor *t, provider_inst *prov, int32_t device, int32_t elem_type, int32_t rank,
                                   const int64_t *dims);
/* Makes `t` a borrowed view of `src` (host memory). */
void rt_tensor_borrow(rt_tensor *t, const tsr_tensor *src);
/* Makes `t` borrow whatever `src` holds (host or device tensor, or value). */
void rt_tensor_borrow_slot(rt_tensor *t, const rt_tensor *src);
/* Moves src into dst (dst released first); src is left empty. */
void rt_tensor_move(rt_tensor *dst, rt_tensor *src);
/* Copies src into a new tensor in the memory of `dst_prov`'s device
 * `dst_device` (dst_prov NULL: host memory; the device is then ignored). */
tsr_status *rt_tensor_copy_to(rt_tensor *dst, const rt_tensor *src, provider_inst *dst_prov, int32_t dst_device);

#endif
