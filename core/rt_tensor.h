/* A tensor while a model runs: in host memory (owned or borrowed) or in a
 * provider's device memory. */
#ifndef TESSERA_CORE_RT_TENSOR_H
#define TESSERA_CORE_RT_TENSOR_H

#include "ir.h"
#include "plugin.h"

typedef struct rt_tensor {
    tsr_tensor view;          /* what pieces see */
    ir_tensor *host;          /* owned host tensor, or NULL */
    int64_t *dev_dims;        /* owned dims of a device tensor */
    provider_inst *dev_owner; /* provider whose memory holds view.data, or NULL */
} rt_tensor;

/* Releases what the slot owns and zeroes it (borrowed data is left alone). */
void rt_tensor_release(rt_tensor *t);
/* Makes `t` own a new host tensor. */
tsr_status *rt_tensor_alloc_host(rt_tensor *t, int32_t elem_type, int32_t rank,
                                 const int64_t *dims);
/* Makes `t` own a new tensor in `prov`'s device 0 memory. */
tsr_status *rt_tensor_alloc_device(rt_tensor *t, provider_inst *prov, int32_t elem_type,
                                   int32_t rank, const int64_t *dims);
/* Makes `t` a borrowed view of `src`. */
void rt_tensor_borrow(rt_tensor *t, const tsr_tensor *src);
/* Copies src into a new tensor in `dst_prov`'s memory (NULL = host). */
tsr_status *rt_tensor_copy_to(rt_tensor *dst, const rt_tensor *src, provider_inst *dst_prov);

#endif
