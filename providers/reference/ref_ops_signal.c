/*
 * The reference provider's signal-processing operators: the table
 * ref_registry.c picks up. Kernels live in ref_signal_*.c.
 */
#include "ref_signal.h"

const ref_op ref_ops_signal[] = {
    {"", "DFT", 17, ref_signal_dft, ref_check_float},
    {"", "STFT", 17, ref_signal_stft, ref_check_float},
    {"", "HannWindow", 17, ref_signal_hann, ref_signal_check_output_type},
    {"", "HammingWindow", 17, ref_signal_hamming, ref_signal_check_output_type},
    {"", "BlackmanWindow", 17, ref_signal_blackman, ref_signal_check_output_type},
    {"", "MelWeightMatrix", 17, ref_signal_mel, ref_signal_check_output_type},
    {NULL, NULL, 0, NULL, NULL},
};
