/* 3x3 weights into oneDNN 2.6's 2x3 Winograd layouts (odn_wino_weights.c). */
#ifndef ODN_WINO_WEIGHTS_H
#define ODN_WINO_WEIGHTS_H
#include <stdbool.h>

#include <oneapi/dnnl/dnnl.h>

/* Writes f32 oihw weights `src` (src_md) into dst, laid out as dst_md, a
 * Winograd weights descriptor. False, with nothing written, for layouts it
 * does not know (the caller then uses oneDNN's reorder). */
bool odn_wino_weights(const dnnl_memory_desc_t *src_md, const float *src, const dnnl_memory_desc_t *dst_md, float *dst);

#endif
