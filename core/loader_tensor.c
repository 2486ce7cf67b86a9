/* TensorProto <-> host tensor: typed fields, raw_data, external data,
 * sparse tensors. Every size is checked against the shape before anything
 * is allocated, so a file can't make us allocate more than it carries. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "loader_internal.h"
#include "status.h"
#include "tessera/tessera.h"

void loader_format_shape(char *buf, size_t size, size_t rank, const int64_t *dims) {
    size_t used = 0;
    int n = snprintf(buf, size, "[");
    if (n < 0 || (size_t)n >= size) return;
    used = (size_t)n;
    for (size_t i = 0; i < rank && used < size; i++) {
        n = snprintf(buf + used, size - used, i ? ",%lld" : "%lld", (long long)dims[i]);
        if (n < 0) return;
        used += (size_t)n;
    }
    if (used < size) snprintf(buf + used, size - used, "]");
}

/* --- external data -------------------------------------------------------- */

static bool parse_u64(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (!s || !*s) return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool has_dotdot_component(const char *path) {
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') return true;
        if (!slash) break;
        p = slash + 1;
    }
    return false;
}

/* Opens the external data of `tp` and checks that it holds exactly `nbytes`;
 * on success *fd is open and *offset is where the data starts. */
static tsr_status *external_open(const Onnx__TensorProto *tp, const char *base_dir, size_t nbytes, int *fd,
                                 uint64_t *offset) {
    const char *location = NULL, *off_s = NULL, *len_s = NULL;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key) continue;
        if (strcmp(e->key, "location") == 0) location = e->value;
        else if (strcmp(e->key, "offset") == 0) off_s = e->value;
        else if (strcmp(e->key, "length") == 0) len_s = e->value;
    }
    if (!base_dir)
        return tsr_error(TSR_ERR_INVALID_MODEL, "external data is not allowed here (no model directory to resolve it)");
    if (!location || !*location) return tsr_error(TSR_ERR_INVALID_MODEL, "external data without a location");
    if (location[0] == '/')
        return tsr_error(TSR_ERR_INVALID_MODEL, "external data location '%s' is an absolute path", location);
    if (has_dotdot_component(location))
        return tsr_error(TSR_ERR_INVALID_MODEL, "external data location '%s' leaves the model directory", location);
    uint64_t off = 0, len = 0;
    if (off_s && !parse_u64(off_s, &off))
        return tsr_error(TSR_ERR_INVALID_MODEL, "external data offset '%s' is not a number", off_s);
    if (len_s && !parse_u64(len_s, &len))
        return tsr_error(TSR_ERR_INVALID_MODEL, "external data length '%s' is not a number", len_s);

    size_t blen = strlen(base_dir), llen = strlen(location);
    char *joined = malloc(blen + llen + 2);
    if (!joined) return TSR_NO_MEMORY();
    memcpy(joined, base_dir, blen);
    joined[blen] = '/';
    memcpy(joined + blen + 1, location, llen + 1);
    char *real_base = realpath(base_dir, NULL);
    char *real_file = real_base ? realpath(joined, NULL) : NULL;
    tsr_status *st = NULL;
    if (!real_base) {
        st = tsr_error(TSR_ERR_IO, "model directory '%s': %s", base_dir, strerror(errno));
    } else if (!real_file) {
        st = tsr_error(TSR_ERR_IO, "external data '%s': %s", location, strerror(errno));
    } else {
        /* A symlink inside the directory may still point outside it. */
        size_t rb = strlen(real_base);
        bool inside = strcmp(real_base, "/") == 0 || (strncmp(real_file, real_base, rb) == 0 && real_file[rb] == '/');
        if (!inside)
            st = tsr_error(TSR_ERR_INVALID_MODEL, "external data location '%s' resolves outside the model directory",
                           location);
    }
    int f = -1;
    struct stat sb;
    if (!st) {
        f = open(real_file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (f < 0) st = tsr_error(TSR_ERR_IO, "external data '%s': %s", location, strerror(errno));
        else if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode))
            st = tsr_error(TSR_ERR_INVALID_MODEL, "external data '%s' is not a regular file", location);
    }
    if (!st) {
        uint64_t fsize = (uint64_t)sb.st_size;
        if (off > fsize)
            st = tsr_error(TSR_ERR_INVALID_MODEL, "external data offset %llu is past the end of '%s' (%llu bytes)",
                           (unsigned long long)off, location, (unsigned long long)fsize);
        else if (len_s && len > fsize - off)
            st = tsr_error(TSR_ERR_INVALID_MODEL,
                           "external data offset %llu + length %llu is past the end of '%s' "
                           "(%llu bytes)",
                           (unsigned long long)off, (unsigned long long)len, location, (unsigned long long)fsize);
        else {
            if (!len_s) len = fsize - off;
            if (len != nbytes)
                st = tsr_error(TSR_ERR_INVALID_MODEL, "external data has %llu bytes, the shape needs %zu",
                               (unsigned long long)len, nbytes);
        }
    }
    free(joined);
    free(real_base);
    free(real_file);
    if (st) {
        if (f >= 0) close(f);
        return st;
    }
    *fd = f;
    *offset = off;
    return NULL;
}

static tsr_status *read_fully(int fd, uint64_t offset, void *dst, size_t n) {
    char *p = dst;
    while (n > 0) {
        if (offset > (uint64_t)INT64_MAX) return tsr_error(TSR_ERR_IO, "offset too large");
        ssize_t r = pread(fd, p, n, (off_t)offset);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return tsr_error(TSR_ERR_IO, "reading external data: %s",
                             r < 0 ? strerror(errno) : "file shrank while reading");
        p += r;
        n -= (size_t)r;
        offset += (uint64_t)r;
    }
    return NULL;
}

/* --- typed fields ---------------------------------------------------------- */

/* Which repeated field carries a type when raw_data is not used, per the
 * ONNX spec, and how many entries `count` elements take there. */
typedef enum { FIELD_FLOAT, FIELD_INT32, FIELD_INT64, FIELD_DOUBLE, FIELD_UINT64, FIELD_STRING } field_kind;

static const char *const field_names[] = {"float_data",  "int32_data",  "int64_data",
                                          "double_data", "uint64_data", "string_data"};

static field_kind typed_field(int32_t et) {
    switch (et) {
    case TSR_FLOAT:
    case TSR_COMPLEX64: return FIELD_FLOAT;
    case TSR_DOUBLE:
    case TSR_COMPLEX128: return FIELD_DOUBLE;
    case TSR_INT64: return FIELD_INT64;
    case TSR_UINT32:
    case TSR_UINT64: return FIELD_UINT64;
    case TSR_STRING: return FIELD_STRING;
    default: return FIELD_INT32; /* int32 and every narrower type, as bit patterns */
    }
}

static size_t field_len(const Onnx__TensorProto *tp, field_kind k) {
    switch (k) {
    case FIELD_FLOAT: return tp->n_float_data;
    case FIELD_INT32: return tp->n_int32_data;
    case FIELD_INT64: return tp->n_int64_data;
    case FIELD_DOUBLE: return tp->n_double_data;
    case FIELD_UINT64: return tp->n_uint64_data;
    case FIELD_STRING: return tp->n_string_data;
    }
    return 0;
}

/* Copies the typed field into t (whose size matches). Narrow types keep the
 * low bits of each int32 entry: the spec stores float16/bfloat16/float8 as
 * bit patterns and packs 4-bit and 2-bit types into one byte per entry. */
static tsr_status *copy_typed(const Onnx__TensorProto *tp, ir_tensor *t) {
    size_t bits = tsr_elem_type_bits(t->elem_type);
    uint8_t *d = t->data;
    switch (typed_field(t->elem_type)) {
    case FIELD_FLOAT:
        if (t->nbytes) memcpy(d, tp->float_data, t->nbytes);
        break;
    case FIELD_DOUBLE:
        if (t->nbytes) memcpy(d, tp->double_data, t->nbytes);
        break;
    case FIELD_INT64:
        if (t->nbytes) memcpy(d, tp->int64_data, t->nbytes);
        break;
    case FIELD_UINT64:
        for (size_t i = 0; i < tp->n_uint64_data; i++) {
            if (t->elem_type == TSR_UINT64) {
                memcpy(d + 8 * i, &tp->uint64_data[i], 8);
            } else {
                uint32_t v = (uint32_t)tp->uint64_data[i];
                memcpy(d + 4 * i, &v, 4);
            }
        }
        break;
    case FIELD_INT32:
        for (size_t i = 0; i < tp->n_int32_data; i++) {
            int32_t v = tp->int32_data[i];
            if (bits == 32) memcpy(d + 4 * i, &v, 4);
            else if (bits == 16) {
                uint16_t h = (uint16_t)v;
                memcpy(d + 2 * i, &h, 2);
            } else if (t->elem_type == TSR_BOOL) d[i] = v != 0;
            else d[i] = (uint8_t)v; /* 8-bit, or one packed byte of 4/2-bit data */
        }
        break;
    case FIELD_STRING:
        for (size_t i = 0; i < tp->n_string_data; i++)
            TSR_TRY(ir_tensor_set_string(t, i, (const char *)tp->string_data[i].data, tp->string_data[i].len));
        break;
    }
    return NULL;
}

static tsr_status *shape_error(int32_t et, size_t rank, const int64_t *dims, const char *what, unsigned long long have,
                               const char *unit, unsigned long long need) {
    char shape[256];
    loader_format_shape(shape, sizeof shape, rank, dims);
    return tsr_error(TSR_ERR_INVALID_MODEL, "%s has %llu %s, shape %s %s needs %llu", what, have, unit, shape,
                     tsr_elem_type_name(et), need);
}

/* Counts nbytes more external data against the limit. */
static tsr_status *external_charge(loader_ext *ext, size_t nbytes) {
    if (ext->used > ext->limit || nbytes > ext->limit - ext->used)
        return tsr_error(TSR_ERR_NO_MEMORY,
                         "external data of %zu bytes would make %llu bytes read in all, over the "
                         "external_bytes limit (%llu)",
                         nbytes, (unsigned long long)ext->used + nbytes, (unsigned long long)ext->limit);
    ext->used += nbytes;
    return NULL;
}

tsr_status *loader_tensor_decode(Onnx__TensorProto *tp, loader_ext *ext, ir_tensor **out) {
    int32_t et = tp->has_data_type ? tp->data_type : 0;
    if (et == TSR_UNDEFINED) return tsr_error(TSR_ERR_INVALID_MODEL, "data_type is not set");
    if (et != TSR_STRING && tsr_elem_type_bits(et) == 0)
        return tsr_error(TSR_ERR_INVALID_MODEL, "unknown data_type %d", (int)et);
    if (tp->segment) return tsr_error(TSR_ERR_NOT_SUPPORTED, "segmented tensors are not supported");
    if (tp->n_dims > IR_MAX_RANK)
        return tsr_error(TSR_ERR_INVALID_MODEL, "rank %zu is above the limit of %d", tp->n_dims, IR_MAX_RANK);
    for (size_t i = 0; i < tp->n_dims; i++)
        if (tp->dims[i] < 0)
            return tsr_error(TSR_ERR_INVALID_MODEL, "dims[%zu] is negative (%lld)", i, (long long)tp->dims[i]);
    uint64_t count;
    size_t nbytes;
    char shape[256];
    if (!ir_dims_count((int32_t)tp->n_dims, tp->dims, &count) || !ir_elem_bytes(et, count, &nbytes)) {
        loader_format_shape(shape, sizeof shape, tp->n_dims, tp->dims);
        return tsr_error(TSR_ERR_INVALID_MODEL, "shape %s %s is too large", shape, tsr_elem_type_name(et));
    }
    bool external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    int fd = -1;
    uint64_t offset = 0;
    if (external) {
        if (et == TSR_STRING) return tsr_error(TSR_ERR_INVALID_MODEL, "string tensors cannot use external data");
        TSR_TRY(external_open(tp, ext ? ext->base_dir : NULL, nbytes, &fd, &offset));
        tsr_status *over = external_charge(ext, nbytes);
        if (over) {
            close(fd);
            return over;
        }
    } else if (tp->has_raw_data) {
        if (et == TSR_STRING) return tsr_error(TSR_ERR_INVALID_MODEL, "string tensors cannot use raw_data");
        if (tp->raw_data.len != nbytes)
            return shape_error(et, tp->n_dims, tp->dims, "raw_data", tp->raw_data.len, "bytes", nbytes);
    } else {
        field_kind k = typed_field(et);
        uint64_t need = count;
        size_t bits = tsr_elem_type_bits(et);
        if (et == TSR_COMPLEX64 || et == TSR_COMPLEX128) need = count * 2; /* count fits: bytes did */
        else if (bits > 0 && bits < 8) need = nbytes;                      /* one packed byte per entry */
        if (field_len(tp, k) != need)
            return shape_error(et, tp->n_dims, tp->dims, field_names[k], field_len(tp, k), "values", need);
    }

    ir_tensor *t = NULL;
    tsr_status *st;
    bool raw = !external && tp->has_raw_data;
    if (raw && nbytes > 0) {
        /* Take protobuf-c's copy of the bytes (malloc'd by the default
         * allocator) instead of copying it again: big models then peak at
         * about twice their size, not three times. */
        st = ir_tensor_new(et, (int32_t)tp->n_dims, tp->dims, &t);
        if (!st) {
            /* ir_tensor_new's zeroed buffer was never touched: large ones
             * are fresh mmap pages, so this costs no copy. */
            free(t->data);
            t->data = tp->raw_data.data;
            tp->raw_data.data = NULL;
            tp->raw_data.len = 0;
            tp->has_raw_data = 0;
            ir_tensor_sync_view(t);
        }
    } else {
        st = ir_tensor_new(et, (int32_t)tp->n_dims, tp->dims, &t);
    }
    if (!st && tp->name && !(t->name = strdup(tp->name))) st = TSR_NO_MEMORY();
    if (!st) {
        if (external) st = read_fully(fd, offset, t->data, nbytes);
        else if (!raw) st = copy_typed(tp, t);
    }
    if (!st && et == TSR_BOOL)
        for (size_t i = 0; i < t->nbytes; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    if (fd >= 0) close(fd);
    if (st) {
        if (t) ir_tensor_free(t);
        return st;
    }
    *out = t;
    return NULL;
}

/* --- sparse ---------------------------------------------------------------- */

tsr_status *loader_sparse_decode(const Onnx__SparseTensorProto *sp, loader_ext *ext, ir_tensor **out) {
    if (!sp->values) return tsr_error(TSR_ERR_INVALID_MODEL, "sparse tensor without values");
    if (sp->n_dims > IR_MAX_RANK)
        return tsr_error(TSR_ERR_INVALID_MODEL, "sparse rank %zu is above the limit", sp->n_dims);
    ir_tensor *vals = NULL, *idx = NULL, *dense = NULL;
    tsr_status *st = loader_tensor_decode(sp->values, ext, &vals);
    if (st) return tsr_error_wrap(st, "values");
    int32_t et = vals->elem_type;
    size_t bits = tsr_elem_type_bits(et);
    uint64_t dense_count = 0, nnz = vals->rank == 1 ? (uint64_t)vals->dims[0] : 0;
    size_t dense_bytes = 0;
    if (vals->rank != 1) {
        st = tsr_error(TSR_ERR_INVALID_MODEL, "sparse values must be 1-D, not rank %d", (int)vals->rank);
    } else if (et != TSR_STRING && bits % 8 != 0) {
        st = tsr_error(TSR_ERR_NOT_SUPPORTED, "sparse %s tensors are not supported", tsr_elem_type_name(et));
    } else if (!ir_dims_count((int32_t)sp->n_dims, sp->dims, &dense_count) ||
               !ir_elem_bytes(et, dense_count, &dense_bytes) || dense_bytes > LOADER_MAX_DENSIFIED_BYTES) {
        char shape[256];
        loader_format_shape(shape, sizeof shape, sp->n_dims, sp->dims);
        st = tsr_error(TSR_ERR_INVALID_MODEL, "sparse dense shape %s is negative or too large", shape);
    } else if (nnz > 0 && !sp->indices) {
        st = tsr_error(TSR_ERR_INVALID_MODEL, "sparse tensor without indices");
    }
    if (!st && sp->indices) {
        st = loader_tensor_decode(sp->indices, ext, &idx);
        if (st) st = tsr_error_wrap(st, "indices");
        else if (idx->elem_type != TSR_INT64) st = tsr_error(TSR_ERR_INVALID_MODEL, "sparse indices must be int64");
        else if (!((idx->rank == 1 && (uint64_t)idx->dims[0] == nnz) ||
                   (idx->rank == 2 && (uint64_t)idx->dims[0] == nnz && (uint64_t)idx->dims[1] == sp->n_dims)))
            st = tsr_error(TSR_ERR_INVALID_MODEL, "sparse indices must be [%llu] or [%llu,%zu]",
                           (unsigned long long)nnz, (unsigned long long)nnz, sp->n_dims);
    }
    if (!st) st = ir_tensor_new(et, (int32_t)sp->n_dims, sp->dims, &dense);
    size_t esize = et == TSR_STRING ? sizeof(tsr_string) : bits / 8;
    for (uint64_t k = 0; !st && k < nnz; k++) {
        const int64_t *ix = idx->data;
        uint64_t pos = 0;
        bool ok = true;
        if (idx->rank == 1) {
            ok = ix[k] >= 0 && (uint64_t)ix[k] < dense_count;
            pos = (uint64_t)ix[k];
        } else {
            for (size_t d = 0; d < sp->n_dims && ok; d++) {
                int64_t c = ix[k * sp->n_dims + d];
                ok = c >= 0 && c < sp->dims[d];
                pos = pos * (uint64_t)sp->dims[d] + (uint64_t)c;
            }
        }
        if (!ok) {
            st = tsr_error(TSR_ERR_INVALID_MODEL, "sparse index %llu is out of range", (unsigned long long)k);
        } else if (et == TSR_STRING) {
            const tsr_string *s = (const tsr_string *)vals->data + k;
            st = ir_tensor_set_string(dense, (size_t)pos, s->data, s->size);
        } else {
            memcpy((uint8_t *)dense->data + pos * esize, (uint8_t *)vals->data + k * esize, esize);
        }
    }
    if (!st && sp->values->name && !(dense->name = strdup(sp->values->name))) st = TSR_NO_MEMORY();
    ir_tensor_free(vals);
    ir_tensor_free(idx);
    if (st) {
        ir_tensor_free(dense);
        return st;
    }
    *out = dense;
    return NULL;
}

/* --- public entry points -------------------------------------------------- */

/* The same bytes often parse as either message (both start with a name and
 * an elem_type), so this is only asked once the TensorProto reading failed. */
static bool looks_like_container(const void *bytes, size_t size) {
    Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, size, bytes);
    bool seq = sp && sp->has_elem_type && sp->elem_type >= 1 && sp->elem_type <= 5;
    if (sp) onnx__sequence_proto__free_unpacked(sp, NULL);
    return seq;
}

tsr_status *ir_tensor_from_proto_bytes(const void *bytes, size_t size, ir_tensor **out) {
    if (!bytes && size) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL bytes");
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, bytes);
    tsr_status *st =
        tp ? loader_tensor_decode(tp, NULL, out) : tsr_error(TSR_ERR_INVALID_MODEL, "not a valid TensorProto");
    if (st && tp) st = tsr_error_wrap(st, "tensor '%s'", tp->name ? tp->name : "");
    if (tp) onnx__tensor_proto__free_unpacked(tp, NULL);
    if (st && looks_like_container(bytes, size)) {
        tsr_status_free(st);
        st = tsr_error(TSR_ERR_NOT_SUPPORTED,
                       "this is a SequenceProto or OptionalProto, not a TensorProto; "
                       "reading those is not supported yet");
    }
    return st;
}

tsr_status *ir_tensor_to_proto_bytes(const tsr_tensor *t, const char *name, void **bytes, size_t *size) {
    uint64_t count;
    size_t nbytes;
    if (!t || !bytes || !size) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL argument");
    if (t->memory_kind != TSR_MEMORY_HOST) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor is not in host memory");
    if (t->rank < 0 || t->rank > IR_MAX_RANK || (t->rank > 0 && !t->dims) || !ir_dims_count(t->rank, t->dims, &count) ||
        !ir_elem_bytes(t->elem_type, count, &nbytes))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor has an invalid type or shape");
    if (t->nbytes != nbytes || (nbytes && !t->data))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tensor holds %zu bytes, its shape needs %zu", t->nbytes, nbytes);
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.n_dims = (size_t)t->rank;
    tp.dims = (int64_t *)t->dims; /* pack only reads */
    tp.has_data_type = 1;
    tp.data_type = t->elem_type;
    tp.name = (char *)name;
    ProtobufCBinaryData *strs = NULL;
    if (t->elem_type == TSR_STRING) {
        size_t n = (size_t)count;
        const tsr_string *s = t->data;
        if (n && !(strs = calloc(n, sizeof *strs))) return TSR_NO_MEMORY();
        for (size_t i = 0; i < n; i++) {
            strs[i].data = (uint8_t *)s[i].data;
            strs[i].len = s[i].size;
        }
        tp.n_string_data = n;
        tp.string_data = strs;
    } else {
        tp.has_raw_data = 1;
        tp.raw_data.data = t->data;
        tp.raw_data.len = nbytes;
    }
    size_t len = onnx__tensor_proto__get_packed_size(&tp);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        free(strs);
        return TSR_NO_MEMORY();
    }
    onnx__tensor_proto__pack(&tp, buf);
    free(strs);
    *bytes = buf;
    *size = len;
    return NULL;
}
