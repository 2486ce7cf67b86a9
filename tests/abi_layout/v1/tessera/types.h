/*
 * Tessera — types shared by the application API (tessera.h) and the provider
 * ABI (provider.h). Compiles as C99 and as C++.
 *
 * Stability: every struct here starts with `struct_size` (set by whoever fills
 * it, to sizeof of the version they were compiled with) and grows only by
 * appending. A reader reads a member only when struct_size covers it; use
 * TSR_HAS_MEMBER.
 */
#ifndef TESSERA_TYPES_H
#define TESSERA_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TSR_EXPORT __declspec(dllexport)
#else
#define TSR_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct filled by the other side (its struct_size) holds `member`. */
#define TSR_HAS_MEMBER(ptr, type, member) ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/*
 * Element types. The numbers are ONNX's TensorProto.DataType values, so a
 * model's types cross the ABI unchanged.
 * \since ABI 1
 */
typedef enum tsr_elem_type {
    TSR_UNDEFINED = 0,
    TSR_FLOAT = 1,
    TSR_UINT8 = 2,
    TSR_INT8 = 3,
    TSR_UINT16 = 4,
    TSR_INT16 = 5,
    TSR_INT32 = 6,
    TSR_INT64 = 7,
    TSR_STRING = 8, /* elements are tsr_string */
    TSR_BOOL = 9,   /* one byte per element, 0 or 1 */
    TSR_FLOAT16 = 10,
    TSR_DOUBLE = 11,
    TSR_UINT32 = 12,
    TSR_UINT64 = 13,
    TSR_COMPLEX64 = 14,  /* two floats, real then imaginary */
    TSR_COMPLEX128 = 15, /* two doubles */
    TSR_BFLOAT16 = 16,
    TSR_FLOAT8E4M3FN = 17,
    TSR_FLOAT8E4M3FNUZ = 18,
    TSR_FLOAT8E5M2 = 19,
    TSR_FLOAT8E5M2FNUZ = 20,
    TSR_UINT4 = 21,      /* packed two per byte, low nibble first */
    TSR_INT4 = 22,       /* packed two per byte, low nibble first */
    TSR_FLOAT4E2M1 = 23, /* packed two per byte, low nibble first */
    TSR_FLOAT8E8M0 = 24,
    TSR_UINT2 = 25, /* packed four per byte, lowest bits first */
    TSR_INT2 = 26
} tsr_elem_type;

/* Status codes. \since ABI 1 */
typedef enum tsr_code {
    TSR_OK = 0,
    TSR_ERR_INVALID_ARGUMENT = 1, /* caller passed something wrong */
    TSR_ERR_INVALID_MODEL = 2,    /* model file or graph is malformed */
    TSR_ERR_NOT_SUPPORTED = 3,    /* valid, but nobody implements it */
    TSR_ERR_NO_MEMORY = 4,
    TSR_ERR_IO = 5,
    TSR_ERR_PROVIDER = 6, /* a provider failed or refused */
    TSR_ERR_RUNTIME = 7,  /* failure while running a model */
    TSR_ERR_ABI = 8       /* version negotiation failed */
} tsr_code;

/*
 * An error: a code and a message. NULL means success everywhere a
 * `tsr_status *` is returned. The receiver owns a non-NULL status and frees it
 * with tsr_status_free (application) or host->status_free (provider).
 */
typedef struct tsr_status tsr_status;

/* A string element of a TSR_STRING tensor: bytes, not NUL-terminated. */
typedef struct tsr_string {
    const char *data; /* owned by the tensor that holds the element */
    size_t size;
} tsr_string;

/* Log levels. \since ABI 1 */
typedef enum tsr_log_level {
    TSR_LOG_ERROR = 0,
    TSR_LOG_WARNING = 1,
    TSR_LOG_INFO = 2,
    TSR_LOG_DEBUG = 3
} tsr_log_level;

/* Where a tensor's bytes live. \since ABI 1 */
typedef enum tsr_memory_kind {
    TSR_MEMORY_HOST = 0,  /* ordinary CPU memory the host can read */
    TSR_MEMORY_DEVICE = 1 /* provider-owned memory; `data` is the provider's handle */
} tsr_memory_kind;

/* Dimension value used in shapes for a dimension not known until run time. */
#define TSR_DIM_UNKNOWN (-1)

/*
 * A tensor descriptor: shape, type and a pointer to the elements (dense,
 * row-major). It never owns anything: whoever hands it over says how long
 * `dims` and `data` live.
 * \since ABI 1
 */
typedef struct tsr_tensor {
    uint32_t struct_size; /* sizeof(tsr_tensor) of the filler */
    int32_t elem_type;    /* tsr_elem_type */
    int32_t rank;         /* number of dims; 0 for a scalar */
    const int64_t *dims;  /* rank entries; may be NULL when rank is 0 */
    void *data;           /* elements; may be NULL when there are none */
    size_t nbytes;        /* bytes at `data` */
    int32_t memory_kind;  /* tsr_memory_kind */
    int32_t device_index; /* the provider's device, for TSR_MEMORY_DEVICE */
} tsr_tensor;

/*
 * A value that is not only a tensor: a sequence of values, an optional
 * (holding zero or one value) or a map (a key tensor and a value sequence).
 * Opaque; the application API (tessera.h) and the provider host API
 * (provider.h) have accessors. Values of these kinds always live in host
 * memory. \since ABI 1 (host API slots appended in ABI 1, struct_size-gated)
 */
typedef struct tsr_value tsr_value;

/* What a tsr_value holds. \since ABI 1 */
typedef enum tsr_value_kind {
    TSR_VALUE_NONE = 0, /* unknown, or not a value */
    TSR_VALUE_TENSOR = 1,
    TSR_VALUE_SEQUENCE = 2,
    TSR_VALUE_OPTIONAL = 3,
    TSR_VALUE_MAP = 4
} tsr_value_kind;

#ifdef __cplusplus
}
#endif
#endif
