/*
 * The sequence family of the reference provider (sequences and optionals):
 * its table is in ref_ops_sequence.c, its kernels (ref_sequence_<op>) in
 * ref_sequence_*.c, one file per group of ops, and what they share in
 * ref_sequence_util.c. Values that are not plain tensors reach kernels
 * through the host API's value slots (run_input_value and friends).
 */
#ifndef TESSERA_REF_SEQUENCE_H
#define TESSERA_REF_SEQUENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ref.h"

/* --- shared helpers and the claim-time check (ref_sequence_util.c) ------- */
/* Node input i as a value of any kind; NULL when omitted. */
const tsr_value *ref_sequence_in_value(ref_ctx *c, size_t i);
tsr_status *ref_sequence_need_kind(ref_ctx *c, size_t i, int32_t kind, const tsr_value **out);
/* Hands `v` over as node output i (dropped when the model does not use it). */
tsr_status *ref_sequence_set_out(ref_ctx *c, size_t i, tsr_value *v);
/* A host copy of a tensor as a new value. */
tsr_status *ref_sequence_tensor_value(ref_ctx *c, const tsr_tensor *t, tsr_value **out);
/* Copies tensor t into node output i. */
tsr_status *ref_sequence_out_copy(ref_ctx *c, size_t i, const tsr_tensor *t);
/* A position input (scalar int32/int64), normalised into [0, limit]. */
tsr_status *ref_sequence_position(ref_ctx *c, size_t i, int64_t len, bool inclusive_end, int64_t dflt, int64_t *out);
/* Declines when the host predates value slots. */
int ref_sequence_check_values(const tsr_host_api *h, const tsr_node *n, char *why, size_t size);

/* Kernels defined in ref_sequence_list.c. */
tsr_status *ref_sequence_sequence_empty(ref_ctx *c);
tsr_status *ref_sequence_sequence_construct(ref_ctx *c);
tsr_status *ref_sequence_sequence_at(ref_ctx *c);
tsr_status *ref_sequence_sequence_insert(ref_ctx *c);
tsr_status *ref_sequence_sequence_erase(ref_ctx *c);
tsr_status *ref_sequence_sequence_length(ref_ctx *c);

/* Kernels defined in ref_sequence_split.c. */
tsr_status *ref_sequence_split_to_sequence(ref_ctx *c);
tsr_status *ref_sequence_concat_from_sequence(ref_ctx *c);

/* Kernels defined in ref_sequence_optional.c. */
tsr_status *ref_sequence_optional(ref_ctx *c);
tsr_status *ref_sequence_optional_has_element(ref_ctx *c);
tsr_status *ref_sequence_optional_get_element(ref_ctx *c);

#endif
