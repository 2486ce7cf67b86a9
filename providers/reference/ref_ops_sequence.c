/*
 * The reference provider's sequence and optional operators: the table that
 * ref_registry.c lists. The kernels live in ref_sequence_*.c, one file per
 * group of ops; ref_sequence_util.c holds what they share.
 */

#include <stddef.h>

#include "ref_sequence.h"

const ref_op ref_ops_sequence[] = {
    {"", "SequenceEmpty", 11, ref_sequence_sequence_empty, ref_sequence_check_values},
    {"", "SequenceConstruct", 11, ref_sequence_sequence_construct, ref_sequence_check_values},
    {"", "SequenceAt", 11, ref_sequence_sequence_at, ref_sequence_check_values},
    {"", "SequenceInsert", 11, ref_sequence_sequence_insert, ref_sequence_check_values},
    {"", "SequenceErase", 11, ref_sequence_sequence_erase, ref_sequence_check_values},
    {"", "SequenceLength", 11, ref_sequence_sequence_length, ref_sequence_check_values},
    {"", "SplitToSequence", 11, ref_sequence_split_to_sequence, ref_sequence_check_values},
    {"", "ConcatFromSequence", 11, ref_sequence_concat_from_sequence, ref_sequence_check_values},
    {"", "Optional", 15, ref_sequence_optional, ref_sequence_check_values},
    {"", "OptionalHasElement", 15, ref_sequence_optional_has_element, ref_sequence_check_values},
    {"", "OptionalGetElement", 15, ref_sequence_optional_get_element, ref_sequence_check_values},
    {NULL, NULL, 0, NULL, NULL},
};
