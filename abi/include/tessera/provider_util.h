/*
 * Tessera provider helpers — optional conveniences over the host API table
 * (provider.h) that every plugin otherwise writes for itself: attribute
 * readers that check the attribute's type and fall back to the ONNX default,
 * bounds-checked node input and output lookups, and a macro that returns a
 * failed status.
 *
 * Not part of the binary ABI: everything here is a static inline function or
 * a macro, compiled into the plugin, calling only slots of tsr_host_api that
 * ABI 1 has always had. A plugin may include it or ignore it; a newer copy of
 * this header never changes what an existing plugin exports or expects.
 *
 * Every helper takes the host table as its first argument (plugins keep the
 * table the entry call gave them, usually in a global) and the node whose
 * attributes or edges it reads. Handles and strings returned are borrowed
 * with the lifetimes provider.h gives them.
 *
 * Compiles as C99 and as C++.
 */
#ifndef TESSERA_PROVIDER_UTIL_H
#define TESSERA_PROVIDER_UTIL_H

#include <string.h>

#include "provider.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Evaluates `expr` (a tsr_status *) once and returns it from the enclosing
 * function when it is an error. */
#define TSR_TRY(expr)                                                                                                  \
    do {                                                                                                               \
        tsr_status *tsr_try_status_ = (expr);                                                                          \
        if (tsr_try_status_) return tsr_try_status_;                                                                   \
    } while (0)

/* --- attributes ---------------------------------------------------------- */
/* The attribute `name` of `node` when it has type `type` (a tsr_attr_type);
 * NULL when absent or of another type, so a malformed model reads as if the
 * attribute were left out and gets the op's default. */
static inline const tsr_attr *tsr_util_attr_typed(const tsr_host_api *host, const tsr_node *node, const char *name,
                                                  int32_t type) {
    const tsr_attr *a = host->node_attr_find(node, name);
    return a && host->attr_type(a) == type ? a : NULL;
}

/* Whether the node has an attribute `name`, of any type. */
static inline int tsr_util_attr_has(const tsr_host_api *host, const tsr_node *node, const char *name) {
    return host->node_attr_find(node, name) != NULL;
}

static inline int64_t tsr_util_attr_int(const tsr_host_api *host, const tsr_node *node, const char *name,
                                        int64_t dflt) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_INT);
    return a ? host->attr_int(a) : dflt;
}

static inline float tsr_util_attr_float(const tsr_host_api *host, const tsr_node *node, const char *name, float dflt) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_FLOAT);
    return a ? host->attr_float(a) : dflt;
}

/* An INTS attribute: *count entries at the returned pointer; NULL and 0
 * when absent, empty or of another type. */
static inline const int64_t *tsr_util_attr_ints(const tsr_host_api *host, const tsr_node *node, const char *name,
                                                size_t *count) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_INTS);
    const int64_t *v = a ? host->attr_ints(a) : NULL;
    *count = v ? host->attr_list_size(a) : 0;
    return v;
}

/* A FLOATS attribute, as tsr_util_attr_ints. */
static inline const float *tsr_util_attr_floats(const tsr_host_api *host, const tsr_node *node, const char *name,
                                                size_t *count) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_FLOATS);
    const float *v = a ? host->attr_floats(a) : NULL;
    *count = v ? host->attr_list_size(a) : 0;
    return v;
}

/* A STRING attribute's bytes, or `dflt` when absent or of another type.
 * *size (may be NULL) gets the length: 0, or strlen(dflt) for a non-NULL
 * default. The host keeps a NUL after the bytes, so the result reads as a C
 * string when the attribute holds no NUL itself. */
static inline const char *tsr_util_attr_string(const tsr_host_api *host, const tsr_node *node, const char *name,
                                               const char *dflt, size_t *size) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_STRING);
    size_t n = 0;
    const char *s = a ? host->attr_string(a, &n) : dflt;
    if (!a && dflt) n = strlen(dflt);
    if (size) *size = n;
    return s;
}

/* Whether a STRING attribute equals `want` exactly (same bytes, same
 * length); `dflt` when absent or of another type. */
static inline int tsr_util_attr_string_is(const tsr_host_api *host, const tsr_node *node, const char *name,
                                          const char *want, int dflt) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_STRING);
    if (!a) return dflt;
    size_t n = 0;
    const char *s = host->attr_string(a, &n);
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

/* A TENSOR attribute (host memory), or NULL. */
static inline const tsr_tensor *tsr_util_attr_tensor(const tsr_host_api *host, const tsr_node *node, const char *name) {
    const tsr_attr *a = tsr_util_attr_typed(host, node, name, TSR_ATTR_TENSOR);
    return a ? host->attr_tensor(a) : NULL;
}

/* --- node edges ----------------------------------------------------------- */
/* Input `i` of the node, or NULL when omitted or past the last one, so that
 * optional trailing inputs need no separate count check. */
static inline const tsr_value_info *tsr_util_node_input(const tsr_host_api *host, const tsr_node *node, size_t i) {
    return i < host->node_input_count(node) ? host->node_input(node, i) : NULL;
}

/* Output `i`, as tsr_util_node_input. */
static inline const tsr_value_info *tsr_util_node_output(const tsr_host_api *host, const tsr_node *node, size_t i) {
    return i < host->node_output_count(node) ? host->node_output(node, i) : NULL;
}

#ifdef __cplusplus
}
#endif
#endif
