/*
 * Reference kernels for string operators: StringNormalizer, StringConcat,
 * StringSplit, RegexFullMatch and TfIdfVectorizer (one ref_text_*.c file
 * each). String tensors hold tsr_string elements whose bytes the host owns;
 * outputs are written through host->tensor_set_string.
 */
#include "ref_text.h"

tsr_status *ref_text_in_strings(ref_ctx *c, size_t i, const tsr_tensor **t, const tsr_string **out) {
    const tsr_tensor *x = ref_in(c, i);
    if (!x) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is missing", i);
    if (x->elem_type != TSR_STRING)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a string tensor (type %d)", i,
                       (int)x->elem_type);
    if (x->memory_kind != TSR_MEMORY_HOST)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu is not in host memory", i);
    *t = x;
    *out = x->data;
    return NULL;
}

const ref_op ref_ops_text[] = {
    {"", "StringNormalizer", 10, ref_text_string_normalizer, NULL},
    {"", "StringConcat", 20, ref_text_string_concat, NULL},
    {"", "StringSplit", 20, ref_text_string_split, NULL},
    {"", "RegexFullMatch", 20, ref_text_regex_full_match, ref_text_check_regex},
    {"", "TfIdfVectorizer", 9, ref_text_tfidf, ref_text_check_tfidf},
    {NULL, NULL, 0, NULL, NULL},
};
