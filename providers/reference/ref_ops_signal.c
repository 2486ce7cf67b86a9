/*
 * The reference provider's signal-processing operators: the table
 * ref_registry.c picks up. Kernels live in ref_signal_*.c.
 */
#include <stdio.h>

#include "ref_signal.h"

/* DFT and STFT transform float tensors only. */
static int check_float_input(const tsr_host_api *host, const tsr_node *node, char *why,
                             size_t why_size) {
    const tsr_value_info *x = host->node_input_count(node) > 0 ? host->node_input(node, 0) : NULL;
    int32_t t = x ? host->value_elem_type(x) : 0;
    if (t != 0 && !ref_is_float(t)) {
        snprintf(why, why_size, "%s of element type %d is not implemented",
                 host->node_op_type(node), (int)t);
        return TSR_DECLINE_TYPE;
    }
    return 0;
}

const ref_op ref_ops_signal[] = {
    {"", "DFT", 17, ref_signal_dft, check_float_input},
    {"", "STFT", 17, ref_signal_stft, check_float_input},
    {"", "HannWindow", 17, ref_signal_hann, ref_signal_check_output_type},
    {"", "HammingWindow", 17, ref_signal_hamming, ref_signal_check_output_type},
    {"", "BlackmanWindow", 17, ref_signal_blackman, ref_signal_check_output_type},
    {"", "MelWeightMatrix", 17, ref_signal_mel, ref_signal_check_output_type},
    {NULL, NULL, 0, NULL, NULL},
};
