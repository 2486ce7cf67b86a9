/*
 * The reference provider's image and detection operators: the table that
 * ref_registry.c picks up (ref_ops_image). Kernels live in ref_image_*.c,
 * one operator per file; ref_image_util.c holds what they share.
 */
#include <stdio.h>
#include <string.h>

#include "ref_image.h"

int ref_image_check_grid_sample(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* The element type of node input i, 0 when unknown or absent. */
static int32_t input_type(const tsr_host_api *host, const tsr_node *node, size_t i) {
    const tsr_value_info *v = tsr_util_node_input(host, node, i);
    return v ? host->value_elem_type(v) : 0;
}

/* Operators that compute on any numeric (or bool) element type. */
static int check_numeric(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    int32_t t = input_type(host, node, 0);
    if (t != 0 && !ref_is_float(t) && !ref_is_int(t) && t != TSR_BOOL) {
        snprintf(why, why_size, "%s of element type %d is not implemented", host->node_op_type(node), (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

static int check_image_decoder(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size) {
    int32_t t = input_type(host, node, 0);
    if (t != 0 && t != TSR_UINT8) {
        snprintf(why, why_size, "ImageDecoder reads a uint8 stream, not element type %d", (int)t);
        return TSR_DECLINE_TYPE;
    }
    const tsr_attr *a = host->node_attr_find(node, "pixel_format");
    if (a) {
        size_t n;
        const char *s = host->attr_string(a, &n);
        if (!((n == 3 && !memcmp(s, "RGB", 3)) || (n == 3 && !memcmp(s, "BGR", 3)) ||
              (n == 9 && !memcmp(s, "Grayscale", 9)))) {
            snprintf(why, why_size, "pixel_format '%.*s' is not RGB, BGR or Grayscale", (int)(n < 40 ? n : 40), s);
            return TSR_DECLINE_ATTRIBUTE;
        }
    }
    return 0;
}

/* min_opset: where the operator first appears in ai.onnx; later versions
 * are covered by the same kernel (each reads its opset where they differ). */
const ref_op ref_ops_image[] = {
    {"", "GridSample", 16, ref_image_grid_sample, ref_image_check_grid_sample},
    {"", "AffineGrid", 20, ref_image_affine_grid, ref_check_float},
    {"", "RoiAlign", 10, ref_image_roi_align, ref_check_float},
    {"", "NonMaxSuppression", 10, ref_image_nms, NULL},
    {"", "Col2Im", 18, ref_image_col2im, check_numeric},
    {"", "DeformConv", 19, ref_image_deform_conv, ref_check_float},
    {"", "MaxUnpool", 9, ref_image_max_unpool, check_numeric},
    {"", "ImageDecoder", 20, ref_image_decoder, check_image_decoder},
    {NULL, NULL, 0, NULL, NULL},
};
