/*
 * Private to the reference provider's string kernels (ref_ops_text.c and
 * ref_text_*.c): the kernels the table lists and the few helpers they share.
 */
#ifndef TESSERA_REF_TEXT_H
#define TESSERA_REF_TEXT_H

#include "ref.h"

tsr_status *ref_text_string_normalizer(ref_ctx *c);
tsr_status *ref_text_string_concat(ref_ctx *c);
tsr_status *ref_text_string_split(ref_ctx *c);
tsr_status *ref_text_regex_full_match(ref_ctx *c);
int ref_text_check_regex(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);
tsr_status *ref_text_tfidf(ref_ctx *c);
int ref_text_check_tfidf(const tsr_host_api *host, const tsr_node *node, char *why, size_t why_size);

/* Input i as a string tensor: its elements in *out (NULL when it has none).
 * An error naming the node when it is missing or not of type string. */
tsr_status *ref_text_in_strings(ref_ctx *c, size_t i, const tsr_tensor **t, const tsr_string **out);

/* Case mapping of UTF-8 text (ref_text_case.c). */
typedef struct ref_text_case ref_text_case;
/* A case mapper for `locale_name` (ONNX's "en_US" style, may be NULL or
 * ""), falling back to C.UTF-8 and then to built-in Latin-1 rules. NULL only
 * when out of memory. */
ref_text_case *ref_text_case_open(const char *locale_name);
void ref_text_case_close(ref_text_case *m);
/* Upper- (upper = true) or lower-cases s[0..n) into a new malloc'ed buffer
 * *out of *out_n bytes (NUL-terminated). Returns 0, or -1 for invalid UTF-8
 * and -2 when out of memory. */
int ref_text_case_map(const ref_text_case *m, bool upper, const char *s, size_t n, char **out, size_t *out_n);

#endif
