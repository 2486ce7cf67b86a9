/*
 * Tensors for the command line: files, element decoding (every ONNX element
 * type, including the packed and 8-bit float ones, decoded to double or
 * int64 so comparison and summaries need one code path) and text
 * formatting. Making tensors (made-up inputs, constants) is tensor_fill.c.
 *
 * The decoders are written here, not borrowed from the library, because
 * the command may use only the public API — and an independent decoder is
 * what a conformance check should use anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* --- files --------------------------------------------------------------- */
const char *tio_file_error(int errnum) {
    if (errnum == EINVAL) return "not a regular file";
    if (errnum == EFBIG) return "larger than the 16 GiB limit";
    return strerror(errnum);
}

bool tio_read_file(const char *path, void **bytes, size_t *size) {
    /* non-blocking, so a FIFO is refused by the check below instead of
     * waiting for a writer; regular files only, so /dev/zero cannot grow a
     * buffer without end; exactly the size fstat gives, within the limit */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0) {
        close(fd);
        errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
        return false;
    }
    if ((uint64_t)sb.st_size > TIO_MAX_FILE_BYTES) {
        close(fd);
        errno = EFBIG;
        return false;
    }
    size_t n = (size_t)sb.st_size, got = 0;
    char *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return false;
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    int err = errno;
    close(fd);
    if (got != n) {
        free(buf);
        errno = got < n && err ? err : EIO;
        return false;
    }
    *bytes = buf;
    *size = n;
    return true;
}

bool tio_write_file(const char *path, const void *bytes, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(bytes, 1, size, f) == size;
    if (fclose(f) != 0) ok = false;
    return ok;
}

bool tio_make_dirs(const char *path) {
    char *p = strdup(path);
    if (!p) return false;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            free(p);
            return false;
        }
        *s = '/';
    }
    bool ok = mkdir(p, 0777) == 0 || errno == EEXIST;
    free(p);
    return ok;
}

char *tio_sanitize_name(const char *name) {
    /* Only '/' (and a leading '.', which would hide the file or name "..")
     * can hurt; other characters ONNX names use (':' '.') are fine on Linux. */
    char *s = strdup(*name ? name : "unnamed");
    if (!s) return NULL;
    for (char *p = s; *p; p++)
        if (*p == '/' || *p == '\\') *p = '_';
    if (s[0] == '.') s[0] = '_';
    return s;
}

/* --- types --------------------------------------------------------------- */
size_t tio_element_count(int32_t rank, const int64_t *dims) {
    size_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= dims[i] > 0 ? (size_t)dims[i] : 0;
    return n;
}

bool tio_is_float_type(int32_t t) {
    switch (t) {
    case TSR_FLOAT:
    case TSR_DOUBLE:
    case TSR_FLOAT16:
    case TSR_BFLOAT16:
    case TSR_COMPLEX64:
    case TSR_COMPLEX128:
    case TSR_FLOAT8E4M3FN:
    case TSR_FLOAT8E4M3FNUZ:
    case TSR_FLOAT8E5M2:
    case TSR_FLOAT8E5M2FNUZ:
    case TSR_FLOAT4E2M1:
    case TSR_FLOAT8E8M0: return true;
    default: return false;
    }
}

bool tio_is_complex_type(int32_t t) { return t == TSR_COMPLEX64 || t == TSR_COMPLEX128; }

bool tio_is_signed_int_type(int32_t t) {
    return t == TSR_INT8 || t == TSR_INT16 || t == TSR_INT32 || t == TSR_INT64 || t == TSR_INT4 || t == TSR_INT2;
}

bool tio_is_unsigned_int_type(int32_t t) {
    return t == TSR_UINT8 || t == TSR_UINT16 || t == TSR_UINT32 || t == TSR_UINT64 || t == TSR_UINT4 ||
        t == TSR_UINT2 || t == TSR_BOOL;
}

size_t tio_component_count(const tsr_tensor *t) {
    size_t n = tio_element_count(t->rank, t->dims);
    return tio_is_complex_type(t->elem_type) ? 2 * n : n;
}

/* --- decoding ------------------------------------------------------------ */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0) v = ldexp(m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double bf16_to_double(uint16_t b) {
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/*
 * A small float with `eb` exponent and `mb` mantissa bits. The "fn" formats
 * (E4M3FN) have no infinity and one NaN pattern per sign (all ones); the
 * "fnuz" ones have no infinity, no negative zero, and 0x80 as their only NaN;
 * E5M2 follows IEEE (infinity and NaNs at the top exponent).
 */
enum { MF_IEEE, MF_FN, MF_FNUZ, MF_PLAIN };
static double minifloat_to_double(unsigned bits, int eb, int mb, int bias, int kind) {
    unsigned sign = (bits >> (eb + mb)) & 1;
    unsigned e = (bits >> mb) & ((1u << eb) - 1);
    unsigned m = bits & ((1u << mb) - 1);
    if (kind == MF_FNUZ && sign && e == 0 && m == 0) return NAN;
    if (kind == MF_FN && e == (1u << eb) - 1 && m == (1u << mb) - 1) return NAN;
    if (kind == MF_IEEE && e == (1u << eb) - 1) return m ? NAN : (sign ? -INFINITY : INFINITY);
    double v = e == 0 ? ldexp(m, 1 - bias - mb) : ldexp(m + (1u << mb), (int)e - bias - mb);
    return sign ? -v : v;
}

static unsigned packed_bits(const uint8_t *p, size_t i, int width) {
    int per = 8 / width;
    return (p[i / (size_t)per] >> ((i % (size_t)per) * (size_t)width)) & ((1u << width) - 1);
}

bool tio_element_as_int(const tsr_tensor *t, size_t i, int64_t *s, uint64_t *u) {
    const void *d = t->data;
    int64_t sv = 0;
    uint64_t uv = 0;
    switch (t->elem_type) {
    case TSR_INT8: sv = ((const int8_t *)d)[i]; break;
    case TSR_INT16: sv = ((const int16_t *)d)[i]; break;
    case TSR_INT32: sv = ((const int32_t *)d)[i]; break;
    case TSR_INT64: sv = ((const int64_t *)d)[i]; break;
    case TSR_INT4: {
        unsigned b = packed_bits(d, i, 4);
        sv = b >= 8 ? (int64_t)b - 16 : b;
        break;
    }
    case TSR_INT2: {
        unsigned b = packed_bits(d, i, 2);
        sv = b >= 2 ? (int64_t)b - 4 : b;
        break;
    }
    case TSR_UINT8: uv = ((const uint8_t *)d)[i]; break;
    case TSR_UINT16: uv = ((const uint16_t *)d)[i]; break;
    case TSR_UINT32: uv = ((const uint32_t *)d)[i]; break;
    case TSR_UINT64: uv = ((const uint64_t *)d)[i]; break;
    case TSR_UINT4: uv = packed_bits(d, i, 4); break;
    case TSR_UINT2: uv = packed_bits(d, i, 2); break;
    /* Any nonzero byte is true: a kernel that writes 0xff must still match. */
    case TSR_BOOL: uv = ((const uint8_t *)d)[i] != 0; break;
    default: return false;
    }
    if (tio_is_signed_int_type(t->elem_type)) uv = (uint64_t)sv;
    else sv = (int64_t)uv;
    if (s) *s = sv;
    if (u) *u = uv;
    return true;
}

bool tio_element_as_double(const tsr_tensor *t, size_t i, double *out) {
    const void *d = t->data;
    const uint8_t *b = d;
    switch (t->elem_type) {
    case TSR_FLOAT:
    case TSR_COMPLEX64: *out = ((const float *)d)[i]; return true;
    case TSR_DOUBLE:
    case TSR_COMPLEX128: *out = ((const double *)d)[i]; return true;
    case TSR_FLOAT16: *out = half_to_double(((const uint16_t *)d)[i]); return true;
    case TSR_BFLOAT16: *out = bf16_to_double(((const uint16_t *)d)[i]); return true;
    case TSR_FLOAT8E4M3FN: *out = minifloat_to_double(b[i], 4, 3, 7, MF_FN); return true;
    case TSR_FLOAT8E4M3FNUZ: *out = minifloat_to_double(b[i], 4, 3, 8, MF_FNUZ); return true;
    case TSR_FLOAT8E5M2: *out = minifloat_to_double(b[i], 5, 2, 15, MF_IEEE); return true;
    case TSR_FLOAT8E5M2FNUZ: *out = minifloat_to_double(b[i], 5, 2, 16, MF_FNUZ); return true;
    case TSR_FLOAT4E2M1: *out = minifloat_to_double(packed_bits(b, i, 4), 2, 1, 1, MF_PLAIN); return true;
    case TSR_FLOAT8E8M0: *out = b[i] == 0xff ? NAN : ldexp(1.0, (int)b[i] - 127); return true;
    default: {
        int64_t s;
        uint64_t u;
        if (!tio_element_as_int(t, i, &s, &u)) return false;
        *out = tio_is_signed_int_type(t->elem_type) ? (double)s : (double)u;
        return true;
    }
    }
}

/* --- text ---------------------------------------------------------------- */
void tio_format_shape(char *buf, size_t size, int32_t rank, const int64_t *dims) {
    size_t n = 0;
    if (rank < 0) {
        snprintf(buf, size, "[?]");
        return;
    }
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (int32_t i = 0; i < rank && n < size; i++)
        n += (size_t)(dims[i] < 0 ? snprintf(buf + n, size - n, "%s?", i ? "," : "")
                                  : snprintf(buf + n, size - n, "%s%" PRId64, i ? "," : "", dims[i]));
    if (n < size) snprintf(buf + n, size - n, "]");
}

static void format_double(char *buf, size_t size, double v) {
    /* %.9g shows every float digit and keeps doubles readable. */
    snprintf(buf, size, "%.9g", v);
}

void tio_format_element(char *buf, size_t size, const tsr_tensor *t, size_t i) {
    if (t->elem_type == TSR_STRING) {
        const tsr_string *s = &((const tsr_string *)t->data)[i];
        size_t n = s->size > 40 ? 40 : s->size;
        snprintf(buf, size, "\"%.*s%s\"", (int)n, s->data ? s->data : "", s->size > n ? "..." : "");
        return;
    }
    if (t->elem_type == TSR_BOOL) {
        snprintf(buf, size, "%s", ((const uint8_t *)t->data)[i] ? "true" : "false");
        return;
    }
    if (tio_is_complex_type(t->elem_type)) {
        double re, im;
        tio_element_as_double(t, 2 * i, &re);
        tio_element_as_double(t, 2 * i + 1, &im);
        snprintf(buf, size, "%.9g%+.9gi", re, im);
        return;
    }
    if (tio_is_float_type(t->elem_type)) {
        double v;
        tio_element_as_double(t, i, &v);
        format_double(buf, size, v);
        return;
    }
    int64_t s;
    uint64_t u;
    if (!tio_element_as_int(t, i, &s, &u)) {
        snprintf(buf, size, "?");
        return;
    }
    if (tio_is_signed_int_type(t->elem_type)) snprintf(buf, size, "%" PRId64, s);
    else snprintf(buf, size, "%" PRIu64, u);
}

void tio_print_summary(FILE *f, const tsr_tensor *t, size_t show) {
    size_t n = tio_element_count(t->rank, t->dims);
    char buf[128];
    fprintf(f, "  values:");
    if (n == 0) {
        fprintf(f, " (empty)\n");
        return;
    }
    /* A device tensor's `data` is the provider's handle, not bytes to read. */
    if (!t->data || t->memory_kind != TSR_MEMORY_HOST) {
        fprintf(f, " (not in host memory)\n");
        return;
    }
    for (size_t i = 0; i < n && i < show; i++) {
        tio_format_element(buf, sizeof buf, t, i);
        fprintf(f, " %s", buf);
    }
    if (n > show) fprintf(f, " ... (%zu total)", n);
    fputc('\n', f);
    if (t->elem_type == TSR_STRING || tio_is_complex_type(t->elem_type)) return;
    if (t->elem_type == TSR_BOOL) {
        size_t ones = 0;
        for (size_t i = 0; i < n; i++) ones += ((const uint8_t *)t->data)[i] != 0;
        fprintf(f, "  true: %zu of %zu\n", ones, n);
        return;
    }
    /* NaN and infinities are counted apart so one of them does not turn
     * min/max/mean into noise. */
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    size_t finite = 0, nans = 0, infs = 0;
    for (size_t i = 0; i < n; i++) {
        double v;
        if (!tio_element_as_double(t, i, &v)) return;
        if (isnan(v)) {
            nans++;
            continue;
        }
        if (isinf(v)) {
            infs++;
            continue;
        }
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        sum += v;
        finite++;
    }
    if (finite) fprintf(f, "  min %.9g  max %.9g  mean %.9g", lo, hi, sum / (double)finite);
    else fprintf(f, "  no finite values");
    if (nans) fprintf(f, "  nan: %zu", nans);
    if (infs) fprintf(f, "  inf: %zu", infs);
    fputc('\n', f);
}
