/*
 * tessera._tessera: the CPython extension under the `tessera` package.
 *
 * A thin layer over the application API (abi/include/tessera/tessera.h).
 * The ONNX Runtime-shaped classes (InferenceSession, SessionOptions, NodeArg)
 * are Python, in tessera/_session.py; this file does what must be fast or
 * must touch tensors:
 *
 *   Session          a tsr_session; run() feeds numpy arrays without copying
 *                    them (C-contiguous, aligned, native byte order, of the
 *                    declared type) and hands outputs to numpy without
 *                    copying them either: each array's base is a _Value that
 *                    owns the tsr_value the run returned, freed when the last
 *                    array over it goes. The GIL is released while the
 *                    session is created and while it runs.
 *   IoBinding, DeviceValue   tsr_io_binding and tsr_device_value
 *                    (python/src/tessera_iobinding.c).
 *   list_providers() the plugins found, with their devices.
 *   check_options, compose   chains of models (python/src/tessera_stages.c).
 *   tensor_to_onnx / tensor_from_onnx   TensorProto bytes <-> numpy.
 *   TesseraError and one subclass per tsr_code, each with a class attribute
 *   `code` (the tsr_code number) and `code_name`; instances carry
 *   Tessera's message as args[0] and `.message`.
 *
 * Ownership: every tsr_status is freed here; a tsr_value is owned by
 * exactly one _Value (outputs) or freed before the call returns (inputs
 * built for tsr_session_run_values).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_ARRAY_API
#include <numpy/arrayobject.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tessera/tessera.h>

#include "tessera_module.h"

/* ------------------------------------------------------------------------ */
/* errors                                                                     */

#define N_CODES 10
static PyObject *error_base;           /* tessera.TesseraError */
static PyObject *error_class[N_CODES]; /* by tsr_code; [0] = error_base */

static const struct {
    const char *name, *code_name, *doc;
} error_names[N_CODES] = {
    {"TesseraError", "OK", "Base class of Tessera's errors: `code` and `code_name` say which tsr_code."},
    {"InvalidArgument", "INVALID_ARGUMENT", "The caller passed something wrong (TSR_ERR_INVALID_ARGUMENT)."},
    {"InvalidModel", "INVALID_MODEL", "The model file or graph is malformed (TSR_ERR_INVALID_MODEL)."},
    {"NotSupported", "NOT_SUPPORTED", "Valid, but no provider implements it (TSR_ERR_NOT_SUPPORTED)."},
    {"NoMemory", "NO_MEMORY", "Out of memory, or over a resource limit (TSR_ERR_NO_MEMORY)."},
    {"IOFailure", "IO", "A file could not be read or written (TSR_ERR_IO)."},
    {"ProviderError", "PROVIDER", "A provider failed or refused (TSR_ERR_PROVIDER)."},
    {"RuntimeFailure", "RUNTIME", "Failure while running a model (TSR_ERR_RUNTIME)."},
    {"ABIError", "ABI", "Provider ABI version negotiation failed (TSR_ERR_ABI)."},
    {"Cancelled", "CANCELLED", "A run stopped early: terminate asked or its deadline passed (TSR_ERR_CANCELLED)."},
};

/* Raises the exception for `st` and frees it; returns NULL for `return`. */
PyObject *raise_status(tsr_status *st) {
    tsr_code code = tsr_status_code(st);
    PyObject *cls = (code > 0 && code < N_CODES) ? error_class[code] : error_base;
    PyObject *msg = PyUnicode_DecodeUTF8(tsr_status_message(st), (Py_ssize_t)strlen(tsr_status_message(st)), "replace");
    tsr_status_free(st);
    if (!msg) return NULL;
    PyObject *exc = PyObject_CallOneArg(cls, msg);
    if (exc) {
        if (PyObject_SetAttrString(exc, "message", msg) == 0) PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    Py_DECREF(msg);
    return NULL;
}

/* An error of our own making, as Tessera's InvalidArgument. */
PyObject *raise_invalid(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!msg) return NULL;
    PyObject *exc = PyObject_CallOneArg(error_class[TSR_ERR_INVALID_ARGUMENT], msg);
    if (exc) {
        if (PyObject_SetAttrString(exc, "message", msg) == 0)
            PyErr_SetObject(error_class[TSR_ERR_INVALID_ARGUMENT], exc);
        Py_DECREF(exc);
    }
    Py_DECREF(msg);
    return NULL;
}

static int make_errors(PyObject *module) {
    for (int c = 0; c < N_CODES; c++) {
        char qual[64];
        snprintf(qual, sizeof qual, "tessera.%s", error_names[c].name);
        PyObject *dict = Py_BuildValue("{s:i,s:s}", "code", c, "code_name", error_names[c].code_name);
        if (!dict) return -1;
        PyObject *bases;
        if (c == 0) bases = Py_BuildValue("(O)", PyExc_RuntimeError);
        else if (c == TSR_ERR_INVALID_ARGUMENT) bases = Py_BuildValue("(OO)", error_base, PyExc_ValueError);
        else if (c == TSR_ERR_NOT_SUPPORTED) bases = Py_BuildValue("(OO)", error_base, PyExc_NotImplementedError);
        else if (c == TSR_ERR_NO_MEMORY) bases = Py_BuildValue("(OO)", error_base, PyExc_MemoryError);
        else bases = Py_BuildValue("(O)", error_base);
        if (!bases) {
            Py_DECREF(dict);
            return -1;
        }
        PyObject *cls = PyErr_NewExceptionWithDoc(qual, error_names[c].doc, bases, dict);
        Py_DECREF(bases);
        Py_DECREF(dict);
        if (!cls) return -1;
        error_class[c] = cls; /* the module keeps a reference too */
        if (c == 0) error_base = cls;
        if (PyModule_AddObjectRef(module, error_names[c].name, cls) < 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* element types                                                              */

/* numpy type number for a Tessera element type; -1 when numpy has none. */
static int elem_to_npy(int32_t e) {
    switch (e) {
    case TSR_FLOAT: return NPY_FLOAT32;
    case TSR_UINT8: return NPY_UINT8;
    case TSR_INT8: return NPY_INT8;
    case TSR_UINT16: return NPY_UINT16;
    case TSR_INT16: return NPY_INT16;
    case TSR_INT32: return NPY_INT32;
    case TSR_INT64: return NPY_INT64;
    case TSR_STRING: return NPY_OBJECT;
    case TSR_BOOL: return NPY_BOOL;
    case TSR_FLOAT16: return NPY_FLOAT16;
    case TSR_DOUBLE: return NPY_FLOAT64;
    case TSR_UINT32: return NPY_UINT32;
    case TSR_UINT64: return NPY_UINT64;
    case TSR_COMPLEX64: return NPY_COMPLEX64;
    case TSR_COMPLEX128: return NPY_COMPLEX128;
    default: return -1;
    }
}

/* Tessera element type of a numpy dtype, by kind and size (so int64 is
 * int64 whether numpy calls it long or longlong); 0 when none. */
static int32_t descr_to_elem(const PyArray_Descr *d) {
    int sz = (int)d->elsize;
    switch (d->kind) {
    case 'b': return sz == 1 ? TSR_BOOL : 0;
    case 'f': return sz == 2 ? TSR_FLOAT16 : sz == 4 ? TSR_FLOAT : sz == 8 ? TSR_DOUBLE : 0;
    case 'i': return sz == 1 ? TSR_INT8 : sz == 2 ? TSR_INT16 : sz == 4 ? TSR_INT32 : sz == 8 ? TSR_INT64 : 0;
    case 'u': return sz == 1 ? TSR_UINT8 : sz == 2 ? TSR_UINT16 : sz == 4 ? TSR_UINT32 : sz == 8 ? TSR_UINT64 : 0;
    case 'c': return sz == 8 ? TSR_COMPLEX64 : sz == 16 ? TSR_COMPLEX128 : 0;
    case 'O':
    case 'U':
    case 'S': return TSR_STRING;
    default: return 0;
    }
}

/* float32 -> bfloat16, round to nearest even; NaN stays a quiet NaN. */
static uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* ------------------------------------------------------------------------ */
/* _Value: owns one tsr_value; the base object of the arrays made over it.    */

static void Value_dealloc(ValueObject *self) {
    tsr_value_free(self->value);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PyTypeObject ValueType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera._Value",
    .tp_basicsize = sizeof(ValueObject),
    .tp_dealloc = (destructor)Value_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Owns a value a run returned; numpy arrays over it keep it alive.",
};

PyObject *value_holder(tsr_value *v) {
    ValueObject *h = PyObject_New(ValueObject, &ValueType);
    if (!h) {
        tsr_value_free(v);
        return NULL;
    }
    h->value = v;
    return (PyObject *)h;
}

/* A string tensor as an object array of str (bytes where not UTF-8). */
static PyObject *strings_to_numpy(const tsr_tensor *t, const npy_intp *dims) {
    PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(t->rank, (npy_intp *)dims, NPY_OBJECT);
    if (!arr) return NULL;
    npy_intp n = PyArray_SIZE(arr);
    PyObject **slot = (PyObject **)PyArray_DATA(arr);
    const tsr_string *s = (const tsr_string *)t->data;
    for (npy_intp i = 0; i < n; i++) {
        PyObject *o = PyUnicode_DecodeUTF8(s[i].data ? s[i].data : "", (Py_ssize_t)s[i].size, "strict");
        if (!o) {
            PyErr_Clear();
            o = PyBytes_FromStringAndSize(s[i].data, (Py_ssize_t)s[i].size);
        }
        if (!o) {
            Py_DECREF(arr);
            return NULL;
        }
        Py_XSETREF(slot[i], o);
    }
    return (PyObject *)arr;
}

/* Packed sub-byte types, one element per byte (signed types sign-extended). */
static PyObject *unpack_subbyte(const tsr_tensor *t, const npy_intp *dims, int bits, int is_signed) {
    PyArrayObject *arr =
        (PyArrayObject *)PyArray_SimpleNew(t->rank, (npy_intp *)dims, is_signed ? NPY_INT8 : NPY_UINT8);
    if (!arr) return NULL;
    npy_intp n = PyArray_SIZE(arr);
    uint8_t *out = (uint8_t *)PyArray_DATA(arr);
    const uint8_t *in = (const uint8_t *)t->data;
    int per = 8 / bits;
    uint8_t mask = (uint8_t)((1u << bits) - 1u);
    for (npy_intp i = 0; i < n; i++) {
        uint8_t v = (uint8_t)((in[i / per] >> ((i % per) * bits)) & mask);
        if (is_signed && (v & (1u << (bits - 1)))) v = (uint8_t)(v | (uint8_t)~mask);
        out[i] = v;
    }
    return (PyObject *)arr;
}

/* A tensor value as a numpy array: over the value's own bytes (holder is
 * the array's base) where numpy has the type, else converted. */
static PyObject *tensor_to_numpy(const tsr_value *v, PyObject *holder) {
    tsr_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    tsr_status *st = tsr_value_tensor(v, &t);
    if (st) return raise_status(st);
    if (t.memory_kind != TSR_MEMORY_HOST) return raise_invalid("an output is not in host memory");
    npy_intp dims[NPY_MAXDIMS];
    if (t.rank < 0 || t.rank > NPY_MAXDIMS)
        return raise_invalid("an output has rank %d, above numpy's %d", (int)t.rank, NPY_MAXDIMS);
    for (int32_t d = 0; d < t.rank; d++) dims[d] = (npy_intp)t.dims[d];
    if (t.elem_type == TSR_STRING) return strings_to_numpy(&t, dims);
    if (t.elem_type == TSR_BFLOAT16) {
        /* float32 (exact), as onnx's numpy_helper gives bfloat16 */
        PyArrayObject *arr = (PyArrayObject *)PyArray_SimpleNew(t.rank, dims, NPY_FLOAT32);
        if (!arr) return NULL;
        const uint16_t *in = (const uint16_t *)t.data;
        uint32_t *out = (uint32_t *)PyArray_DATA(arr);
        for (npy_intp i = 0, n = PyArray_SIZE(arr); i < n; i++) out[i] = (uint32_t)in[i] << 16;
        return (PyObject *)arr;
    }
    switch (t.elem_type) {
    case TSR_UINT4: return unpack_subbyte(&t, dims, 4, 0);
    case TSR_INT4: return unpack_subbyte(&t, dims, 4, 1);
    case TSR_FLOAT4E2M1: return unpack_subbyte(&t, dims, 4, 0);
    case TSR_UINT2: return unpack_subbyte(&t, dims, 2, 0);
    case TSR_INT2: return unpack_subbyte(&t, dims, 2, 1);
    default: break;
    }
    int npy = elem_to_npy(t.elem_type);
    if (npy < 0) {
        /* the float8 types: their raw bytes */
        if (tsr_elem_type_bits(t.elem_type) == 8) npy = NPY_UINT8;
        else
            return raise_invalid("an output has element type %s, which numpy cannot hold",
                                 tsr_elem_type_name(t.elem_type));
    }
    if (!t.data || t.nbytes == 0) return PyArray_ZEROS(t.rank, dims, npy, 0);
    PyArray_Descr *descr = PyArray_DescrFromType(npy);
    if (!descr) return NULL;
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, t.rank, dims, NULL, t.data, NPY_ARRAY_CARRAY, NULL);
    if (!arr) return NULL;
    Py_INCREF(holder);
    if (PyArray_SetBaseObject((PyArrayObject *)arr, holder) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* Any value: a tensor as an array, a sequence as a list, an optional as
 * None or its contents, a map as a dict. */
PyObject *value_to_py(const tsr_value *v, PyObject *holder) {
    switch (tsr_value_get_kind(v)) {
    case TSR_VALUE_TENSOR: return tensor_to_numpy(v, holder);
    case TSR_VALUE_SEQUENCE: {
        size_t n = tsr_value_count(v);
        PyObject *list = PyList_New((Py_ssize_t)n);
        if (!list) return NULL;
        for (size_t i = 0; i < n; i++) {
            PyObject *item = value_to_py(tsr_value_item(v, i), holder);
            if (!item) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, item);
        }
        return list;
    }
    case TSR_VALUE_OPTIONAL:
        if (tsr_value_count(v) == 0) Py_RETURN_NONE;
        return value_to_py(tsr_value_item(v, 0), holder);
    case TSR_VALUE_MAP: {
        PyObject *keys = value_to_py(tsr_value_item(v, 0), holder);
        PyObject *vals = keys ? value_to_py(tsr_value_item(v, 1), holder) : NULL;
        PyObject *klist = vals ? PySequence_List(keys) : NULL;
        PyObject *dict = klist ? PyDict_New() : NULL;
        Py_ssize_t n = klist ? PyList_GET_SIZE(klist) : 0;
        if (dict && (!PyList_Check(vals) || PyList_GET_SIZE(vals) != n)) {
            Py_CLEAR(dict);
            raise_invalid("a map output's keys and values differ in count");
        }
        for (Py_ssize_t i = 0; dict && i < n; i++) {
            PyObject *k = PyList_GET_ITEM(klist, i);
            PyObject *kk = PyObject_CallMethod(k, "item", NULL); /* numpy scalar -> int/str */
            if (!kk) {
                PyErr_Clear();
                kk = Py_NewRef(k);
            }
            if (PyDict_SetItem(dict, kk, PyList_GET_ITEM(vals, i)) < 0) Py_CLEAR(dict);
            Py_DECREF(kk);
        }
        Py_XDECREF(keys);
        Py_XDECREF(vals);
        Py_XDECREF(klist);
        return dict;
    }
    default: return raise_invalid("an output has no value");
    }
}

/* ------------------------------------------------------------------------ */
/* inputs                                                                     */

/* A host tensor view over a numpy array (borrowed; the array must outlive it). */
void tensor_view(PyArrayObject *arr, int32_t elem, int64_t *dims, tsr_tensor *t) {
    int rank = PyArray_NDIM(arr);
    for (int d = 0; d < rank; d++) dims[d] = (int64_t)PyArray_DIM(arr, d);
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->elem_type = elem;
    t->rank = rank;
    t->dims = rank ? dims : NULL;
    t->data = PyArray_DATA(arr);
    t->nbytes = (size_t)PyArray_NBYTES(arr);
    t->memory_kind = TSR_MEMORY_HOST;
}

/* `obj` as a C-contiguous, aligned, native-order array: itself (a new
 * reference, no copy) when it already is one; else numpy converts it, to
 * the declared type `elem` when `obj` is not an array (lists, scalars).
 * For a bfloat16 input, a uint16 array is taken as its bits and a float32
 * array is rounded to bfloat16 (a copy). Sets
 * *elem_out to the Tessera type of the result. */
PyArrayObject *input_array(PyObject *obj, int32_t declared, int32_t *elem_out) {
    PyArray_Descr *want = NULL;
    if (!PyArray_Check(obj)) {
        int npy = declared == TSR_BFLOAT16 ? NPY_FLOAT32 : elem_to_npy(declared); /* rounded below */
        if (npy >= 0) want = PyArray_DescrFromType(npy);
    }
    /* CheckFromAny: FromAny alone leaves a byte-swapped array as it is */
    PyArrayObject *arr = (PyArrayObject *)PyArray_CheckFromAny(
        obj, want, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
    if (!arr) return NULL;
    int32_t elem = descr_to_elem(PyArray_DESCR(arr));
    if (declared == TSR_BFLOAT16 && elem == TSR_UINT16) elem = TSR_BFLOAT16; /* its bits */
    if (declared == TSR_BFLOAT16 && elem == TSR_FLOAT) {
        PyArrayObject *bf = (PyArrayObject *)PyArray_SimpleNew(PyArray_NDIM(arr), PyArray_DIMS(arr), NPY_UINT16);
        if (!bf) {
            Py_DECREF(arr);
            return NULL;
        }
        const float *in = (const float *)PyArray_DATA(arr);
        uint16_t *out = (uint16_t *)PyArray_DATA(bf);
        for (npy_intp i = 0, n = PyArray_SIZE(arr); i < n; i++) out[i] = f32_to_bf16(in[i]);
        Py_DECREF(arr);
        arr = bf;
        elem = TSR_BFLOAT16;
    }
    if (!elem) {
        PyObject *r = PyObject_Repr((PyObject *)PyArray_DESCR(arr));
        Py_DECREF(arr);
        if (r) {
            raise_invalid("numpy dtype %U has no ONNX element type", r);
            Py_DECREF(r);
        }
        return NULL;
    }
    *elem_out = elem;
    return arr;
}

/* A tensor value (a copy) from anything numpy can take; strings too. */
static tsr_status *value_from_array(PyObject *obj, int32_t declared, tsr_value **out, int *pyerr) {
    int32_t elem = 0;
    PyArrayObject *arr = input_array(obj, declared, &elem);
    if (!arr) {
        *pyerr = 1;
        return NULL;
    }
    int64_t dims[NPY_MAXDIMS];
    tsr_status *st;
    if (elem != TSR_STRING) {
        tsr_tensor t;
        tensor_view(arr, elem, dims, &t);
        st = tsr_value_from_tensor(&t, out);
        Py_DECREF(arr);
        return st;
    }
    int rank = PyArray_NDIM(arr);
    for (int d = 0; d < rank; d++) dims[d] = (int64_t)PyArray_DIM(arr, d);
    st = tsr_value_create_tensor(TSR_STRING, rank, dims, out);
    if (st) {
        Py_DECREF(arr);
        return st;
    }
    PyObject *flat = PyArray_Ravel(arr, NPY_CORDER);
    PyObject *items = flat ? PySequence_List(flat) : NULL;
    Py_XDECREF(flat);
    Py_DECREF(arr);
    if (!items) {
        tsr_value_free(*out);
        *out = NULL;
        *pyerr = 1;
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items) && !st; i++) {
        PyObject *o = PyList_GET_ITEM(items, i);
        const char *data;
        Py_ssize_t size;
        if (PyBytes_Check(o)) {
            data = PyBytes_AS_STRING(o);
            size = PyBytes_GET_SIZE(o);
        } else if (PyUnicode_Check(o)) {
            data = PyUnicode_AsUTF8AndSize(o, &size);
            if (!data) break;
        } else {
            PyErr_Format(PyExc_TypeError, "a string input holds a %.100s", Py_TYPE(o)->tp_name);
            break;
        }
        st = tsr_value_set_string(*out, (size_t)i, data, (size_t)size);
    }
    Py_DECREF(items);
    if (st || PyErr_Occurred()) {
        tsr_value_free(*out);
        *out = NULL;
        if (!st) *pyerr = 1;
    }
    return st;
}

/* Any input as a value: a list for a sequence, None for an empty optional. */
static tsr_status *value_from_py(PyObject *obj, int32_t kind, int32_t elem, tsr_value **out, int *pyerr) {
    if (kind == TSR_VALUE_OPTIONAL) {
        if (obj == Py_None) return tsr_value_create_optional(NULL, elem, out);
        tsr_value *inner = NULL;
        tsr_status *st = value_from_py(
            obj, PyList_Check(obj) || PyTuple_Check(obj) ? TSR_VALUE_SEQUENCE : TSR_VALUE_TENSOR, elem, &inner, pyerr);
        if (st || *pyerr) return st;
        return tsr_value_create_optional(inner, elem, out);
    }
    *out = NULL;
    if (kind == TSR_VALUE_SEQUENCE) {
        PyObject *fast = PySequence_Fast(obj, "a sequence input must be a list of arrays");
        if (!fast) {
            *pyerr = 1;
            return NULL;
        }
        tsr_status *st = tsr_value_create_sequence(elem, out);
        for (Py_ssize_t i = 0; !st && i < PySequence_Fast_GET_SIZE(fast); i++) {
            tsr_value *item = NULL;
            st = value_from_array(PySequence_Fast_GET_ITEM(fast, i), elem, &item, pyerr);
            if (!st && !*pyerr) st = tsr_value_sequence_append(*out, item);
            if (*pyerr) break;
        }
        Py_DECREF(fast);
        if (st || *pyerr) {
            tsr_value_free(*out);
            *out = NULL;
        }
        return st;
    }
    if (kind == TSR_VALUE_MAP) {
        *pyerr = 1;
        raise_invalid("map inputs are not supported from Python yet");
        return NULL;
    }
    return value_from_array(obj, elem, out, pyerr);
}

/* ------------------------------------------------------------------------ */
/* Session                                                                    */

static void Session_dealloc(SessionObject *self) {
    tsr_session_free(self->session);
    free(self->in_elem);
    Py_XDECREF(self->in_index);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Iterates a list of pairs (a, b) of str; returns -1 with an exception set. */
typedef tsr_status *(*pair_fn)(tsr_session_options *, PyObject *, PyObject *);

static int apply_pairs(tsr_session_options *o, PyObject *opts, const char *key, pair_fn fn) {
    PyObject *list = PyDict_GetItemString(opts, key); /* borrowed */
    if (!list || list == Py_None) return 0;
    PyObject *fast = PySequence_Fast(list, "session options: expected a list of pairs");
    if (!fast) return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_TypeError, "session option '%s': expected (key, value) tuples", key);
            return -1;
        }
        tsr_status *st = fn(o, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        if (st || PyErr_Occurred()) {
            Py_DECREF(fast);
            if (st) raise_status(st);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

static tsr_status *pair_assign(tsr_session_options *o, PyObject *a, PyObject *b) {
    const char *x = PyUnicode_AsUTF8(a), *y = x ? PyUnicode_AsUTF8(b) : NULL;
    return y ? tsr_session_options_assign(o, x, y) : NULL;
}
static tsr_status *pair_dim(tsr_session_options *o, PyObject *a, PyObject *b) {
    const char *x = PyUnicode_AsUTF8(a);
    long long v = x ? PyLong_AsLongLong(b) : -1;
    return (x && !PyErr_Occurred()) ? tsr_session_options_set_dim(o, x, (int64_t)v) : NULL;
}
static tsr_status *pair_limit(tsr_session_options *o, PyObject *a, PyObject *b) {
    const char *x = PyUnicode_AsUTF8(a);
    long long v = x ? PyLong_AsLongLong(b) : -1;
    return (x && !PyErr_Occurred()) ? tsr_session_options_set_limit(o, x, (int64_t)v) : NULL;
}
/* provider options: (provider, (key, value)) */
static tsr_status *pair_provider_option(tsr_session_options *o, PyObject *a, PyObject *b) {
    const char *p = PyUnicode_AsUTF8(a);
    if (!p) return NULL;
    if (!PyTuple_Check(b) || PyTuple_GET_SIZE(b) != 2) {
        PyErr_SetString(PyExc_TypeError, "provider option: expected (provider, (key, value))");
        return NULL;
    }
    const char *k = PyUnicode_AsUTF8(PyTuple_GET_ITEM(b, 0));
    const char *v = k ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(b, 1)) : NULL;
    return v ? tsr_session_options_set_provider_option(o, p, k, v) : NULL;
}

static int int_option(PyObject *opts, const char *key, long *out) {
    PyObject *v = PyDict_GetItemString(opts, key);
    if (!v || v == Py_None) return 0;
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = x;
    return 1;
}

/* tsr_session_options from the dict tessera._session builds (keys below). */
tsr_session_options *make_options(PyObject *opts) {
    tsr_session_options *o = NULL;
    tsr_status *st = tsr_session_options_create(&o);
    if (st) {
        raise_status(st);
        return NULL;
    }
    if (!opts || opts == Py_None) return o;
    if (!PyDict_Check(opts)) {
        PyErr_SetString(PyExc_TypeError, "options must be a dict");
        goto fail;
    }
    PyObject *provs = PyDict_GetItemString(opts, "providers");
    if (provs && provs != Py_None) {
        PyObject *fast = PySequence_Fast(provs, "providers must be a list of names");
        if (!fast) goto fail;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && !st; i++) {
            const char *name = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
            if (!name) break;
            st = tsr_session_options_add_provider(o, name);
        }
        Py_DECREF(fast);
        if (st) {
            raise_status(st);
            goto fail;
        }
        if (PyErr_Occurred()) goto fail;
    }
    long v;
    int r;
    if ((r = int_option(opts, "threads", &v)) < 0) goto fail;
    if (r && (st = tsr_session_options_set_threads(o, (int32_t)v))) goto fail_st;
    if ((r = int_option(opts, "log_level", &v)) < 0) goto fail;
    if (r && (st = tsr_session_options_set_log_level(o, (int32_t)v))) goto fail_st;
    if ((r = int_option(opts, "profiling", &v)) < 0) goto fail;
    if (r && (st = tsr_session_options_set_profiling(o, (int32_t)v))) goto fail_st;
    if ((r = int_option(opts, "observe_all", &v)) < 0) goto fail;
    if (r && (st = tsr_session_options_set_observe_all(o, (int32_t)v))) goto fail_st;
    if ((r = int_option(opts, "policy", &v)) < 0) goto fail;
    if (r && (st = tsr_session_options_set_policy(o, (int32_t)v))) goto fail_st;
    PyObject *fb = PyDict_GetItemString(opts, "fallback");
    if (fb && fb != Py_None) {
        const char *name = PyUnicode_AsUTF8(fb);
        if (!name) goto fail;
        if ((st = tsr_session_options_set_fallback(o, name))) goto fail_st;
    }
    if (apply_pairs(o, opts, "provider_options", pair_provider_option) < 0) goto fail;
    if (apply_pairs(o, opts, "assign", pair_assign) < 0) goto fail;
    if (apply_pairs(o, opts, "dims", pair_dim) < 0) goto fail;
    if (apply_pairs(o, opts, "limits", pair_limit) < 0) goto fail;
    if (stages_apply(o, opts) < 0) goto fail;
    return o;
fail_st:
    raise_status(st);
fail:
    tsr_session_options_free(o);
    return NULL;
}

/* Session(model, options=None, base_dir=None): model is a path (str) or the
 * model's bytes (any buffer). */
static int Session_init(SessionObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"model", "options", "base_dir", NULL};
    PyObject *model, *opts = Py_None, *base_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO", kwlist, &model, &opts, &base_obj)) return -1;
    if (self->session) {
        PyErr_SetString(PyExc_RuntimeError, "Session is already initialised");
        return -1;
    }
    const char *base_dir = NULL;
    if (base_obj != Py_None && !(base_dir = PyUnicode_AsUTF8(base_obj))) return -1;
    tsr_session_options *o = make_options(opts);
    if (!o) return -1;
    tsr_status *st;
    tsr_session *s = NULL;
    if (PyUnicode_Check(model)) {
        const char *path = PyUnicode_AsUTF8(model);
        if (!path) {
            tsr_session_options_free(o);
            return -1;
        }
        Py_BEGIN_ALLOW_THREADS st = tsr_session_create(o, path, &s);
        Py_END_ALLOW_THREADS
    } else {
        Py_buffer view;
        if (PyObject_GetBuffer(model, &view, PyBUF_SIMPLE) < 0) {
            tsr_session_options_free(o);
            PyErr_SetString(PyExc_TypeError, "model must be a path (str) or the model's bytes");
            return -1;
        }
        Py_BEGIN_ALLOW_THREADS st = tsr_session_create_from_buffer(o, view.buf, (size_t)view.len, base_dir, &s);
        Py_END_ALLOW_THREADS PyBuffer_Release(&view);
    }
    tsr_session_options_free(o);
    if (st) {
        raise_status(st);
        return -1;
    }
    self->session = s;
    self->n_in = tsr_session_input_count(s);
    self->n_out = tsr_session_output_count(s);
    self->in_elem = calloc(2 * self->n_in + 1, sizeof *self->in_elem);
    self->in_index = PyDict_New();
    if (!self->in_elem || !self->in_index) {
        PyErr_NoMemory();
        return -1;
    }
    self->in_kind = self->in_elem + self->n_in;
    for (size_t i = 0; i < self->n_in; i++) {
        tsr_io_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if ((st = tsr_session_input_info(s, i, &info))) {
            raise_status(st);
            return -1;
        }
        self->in_elem[i] = info.elem_type;
        self->in_kind[i] = TSR_HAS_MEMBER(&info, tsr_io_info, kind) ? info.kind : TSR_VALUE_NONE;
        PyObject *idx = PyLong_FromSize_t(i);
        if (!idx || PyDict_SetItemString(self->in_index, info.name, idx) < 0) {
            Py_XDECREF(idx);
            return -1;
        }
        Py_DECREF(idx);
    }
    return 0;
}

int check_session(SessionObject *self) {
    if (self->session) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the session is not initialised");
    return -1;
}

/* [(name, elem_type, shape or None, kind)]; shape entries are ints, symbol
 * strings, or None where neither is known. */
static PyObject *io_list(SessionObject *self, int outputs) {
    if (check_session(self) < 0) return NULL;
    size_t n = outputs ? self->n_out : self->n_in;
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    for (size_t i = 0; i < n; i++) {
        tsr_io_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        tsr_status *st = outputs ? tsr_session_output_info(self->session, i, &info)
                                 : tsr_session_input_info(self->session, i, &info);
        if (st) {
            Py_DECREF(list);
            return raise_status(st);
        }
        PyObject *shape;
        if (info.rank < 0) {
            shape = Py_NewRef(Py_None);
        } else {
            shape = PyList_New(info.rank);
            for (int32_t d = 0; shape && d < info.rank; d++) {
                PyObject *e;
                if (info.dim_symbols && info.dim_symbols[d]) e = PyUnicode_FromString(info.dim_symbols[d]);
                else if (info.dims[d] >= 0) e = PyLong_FromLongLong(info.dims[d]);
                else e = Py_NewRef(Py_None);
                if (!e) Py_CLEAR(shape);
                else PyList_SET_ITEM(shape, d, e);
            }
        }
        int kind = TSR_HAS_MEMBER(&info, tsr_io_info, kind) ? info.kind : TSR_VALUE_NONE;
        PyObject *item = shape ? Py_BuildValue("(siNi)", info.name, (int)info.elem_type, shape, kind) : NULL;
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyObject *Session_inputs(SessionObject *self, PyObject *Py_UNUSED(ignored)) { return io_list(self, 0); }
static PyObject *Session_outputs(SessionObject *self, PyObject *Py_UNUSED(ignored)) { return io_list(self, 1); }

/* --- RunOptions: a tsr_run_options (tag, terminate, deadline) ---------- */

static int RunOptions_init(RunOptionsObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":RunOptions", kwlist)) return -1;
    if (!self->ro) {
        tsr_status *st = tsr_run_options_create(&self->ro);
        if (st) return raise_status(st), -1;
    }
    if (!self->tag) self->tag = Py_NewRef(Py_None);
    return 0;
}

static void RunOptions_dealloc(RunOptionsObject *self) {
    tsr_run_options_free(self->ro);
    Py_XDECREF(self->tag);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *RunOptions_get_tag(RunOptionsObject *self, void *unused) {
    (void)unused;
    return Py_NewRef(self->tag ? self->tag : Py_None);
}

static int RunOptions_set_tag(RunOptionsObject *self, PyObject *v, void *unused) {
    (void)unused;
    if (!self->ro) return PyErr_SetString(PyExc_RuntimeError, "RunOptions not initialised"), -1;
    const char *text = NULL;
    if (v && v != Py_None && !(text = PyUnicode_AsUTF8(v))) return -1;
    tsr_status *st = tsr_run_options_set_tag(self->ro, text);
    if (st) return raise_status(st), -1;
    Py_XSETREF(self->tag, Py_NewRef(v ? v : Py_None));
    return 0;
}

static PyObject *RunOptions_get_terminate(RunOptionsObject *self, void *unused) {
    (void)unused;
    return PyBool_FromLong(self->terminate);
}

/* Safe from another thread while a run that uses these options has the GIL released. */
static int RunOptions_set_terminate(RunOptionsObject *self, PyObject *v, void *unused) {
    (void)unused;
    int flag = v ? PyObject_IsTrue(v) : 0;
    if (flag < 0) return -1;
    if (!self->ro) return PyErr_SetString(PyExc_RuntimeError, "RunOptions not initialised"), -1;
    tsr_status *st = tsr_run_options_set_terminate(self->ro, flag);
    if (st) return raise_status(st), -1;
    self->terminate = flag;
    return 0;
}

static PyObject *RunOptions_get_timeout(RunOptionsObject *self, void *unused) {
    (void)unused;
    return PyLong_FromLongLong(self->timeout_ms);
}

static int RunOptions_set_timeout(RunOptionsObject *self, PyObject *v, void *unused) {
    (void)unused;
    long long ms = v ? PyLong_AsLongLong(v) : 0;
    if (ms == -1 && PyErr_Occurred()) return -1;
    if (!self->ro) return PyErr_SetString(PyExc_RuntimeError, "RunOptions not initialised"), -1;
    tsr_status *st = tsr_run_options_set_timeout_ms(self->ro, ms);
    if (st) return raise_status(st), -1;
    self->timeout_ms = ms;
    return 0;
}

static PyGetSetDef RunOptions_getset[] = {
    {"run_tag", (getter)RunOptions_get_tag, (setter)RunOptions_set_tag,
     "a tag for the runs using these options: leads their log lines, tags their profile events", NULL},
    {"terminate", (getter)RunOptions_get_terminate, (setter)RunOptions_set_terminate,
     "True stops runs using these options (tessera.Cancelled); settable from another thread", NULL},
    {"timeout_ms", (getter)RunOptions_get_timeout, (setter)RunOptions_set_timeout,
     "a run not finished after this many milliseconds stops (tessera.Cancelled); 0: none", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject RunOptionsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.RunOptions",
    .tp_basicsize = sizeof(RunOptionsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Per-run options: run_tag, terminate, timeout_ms (tsr_run_options).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)RunOptions_init,
    .tp_dealloc = (destructor)RunOptions_dealloc,
    .tp_getset = RunOptions_getset,
};

/* run(output_names, feed): output_names None (every output) or a sequence of
 * str; feed a dict name -> array / list / None. Returns a list. */
static PyObject *Session_run(SessionObject *self, PyObject *args, PyObject *kwds) {
    PyObject *names_obj, *feed, *run_options = Py_None; /* a RunOptions, or anything else: none */
    static char *kwlist[] = {"output_names", "input_feed", "run_options", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!|O:run", kwlist, &names_obj, &PyDict_Type, &feed, &run_options))
        return NULL;
    if (check_session(self) < 0) return NULL;
    Py_ssize_t n_in = PyDict_Size(feed);
    PyObject *names_fast = NULL;
    size_t n_out = self->n_out;
    if (names_obj != Py_None) {
        if (PyUnicode_Check(names_obj)) {
            PyErr_SetString(PyExc_TypeError, "output_names must be a list of str or None, not a str");
            return NULL;
        }
        /* a tuple of our own: a list could change while the GIL is released */
        names_fast = PyTuple_Check(names_obj) ? Py_NewRef(names_obj) : PySequence_Tuple(names_obj);
        if (!names_fast) return NULL;
        if (PySequence_Fast_GET_SIZE(names_fast) == 0) Py_CLEAR(names_fast); /* [] = all, as ONNX Runtime */
        else n_out = (size_t)PySequence_Fast_GET_SIZE(names_fast);
    }
    /* one block: input names, keys+arrays kept alive, tensors, pointers, dims, values, outputs */
    size_t ni = (size_t)n_in;
    char *block = calloc(1,
                         ni *
                                 (sizeof(char *) + 2 * sizeof(PyObject *) + sizeof(tsr_tensor) + sizeof(tsr_tensor *) +
                                  sizeof(tsr_value *) + NPY_MAXDIMS * sizeof(int64_t)) +
                             n_out * (sizeof(char *) + sizeof(tsr_value *)) + 16);
    if (!block) {
        Py_XDECREF(names_fast);
        return PyErr_NoMemory();
    }
    const char **in_names = (const char **)block;
    PyObject **keep = (PyObject **)(in_names + ni); /* 2 per input: key, array */
    tsr_tensor *tensors = (tsr_tensor *)(keep + 2 * ni);
    const tsr_tensor **tptr = (const tsr_tensor **)(tensors + ni);
    tsr_value **values = (tsr_value **)(tptr + ni);
    const char **out_names = (const char **)(values + ni);
    tsr_value **outs = (tsr_value **)(out_names + n_out);
    int64_t *dims = (int64_t *)(outs + n_out);
    PyObject *result = NULL;
    tsr_status *st = NULL;
    size_t kept = 0;
    int use_values = 0;

    /* The feed's keys and values, held for the call (another thread may
     * change the dict while the GIL is released). */
    Py_ssize_t pos = 0;
    PyObject *key, *val;
    size_t i = 0;
    while (PyDict_Next(feed, &pos, &key, &val) && i < ni) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "input_feed keys must be input names (str)");
            goto done;
        }
        keep[2 * i] = Py_NewRef(key);
        keep[2 * i + 1] = Py_NewRef(val);
        kept = i + 1;
        if (!(in_names[i] = PyUnicode_AsUTF8(key))) goto done;
        PyObject *idx = PyDict_GetItemWithError(self->in_index, key);
        if (!idx && PyErr_Occurred()) goto done;
        if (!idx) { /* Tessera's words, before numpy guesses at a type */
            raise_invalid("the model has no input '%U'", key);
            goto done;
        }
        size_t k = PyLong_AsSize_t(idx);
        int32_t kind = self->in_kind[k];
        if (kind == TSR_VALUE_SEQUENCE || kind == TSR_VALUE_OPTIONAL || kind == TSR_VALUE_MAP || val == Py_None)
            use_values = 1;
        if (PyArray_Check(val) && descr_to_elem(PyArray_DESCR((PyArrayObject *)val)) == TSR_STRING) use_values = 1;
        if (!PyArray_Check(val) && self->in_elem[k] == TSR_STRING) use_values = 1;
        i++;
    }
    if (i != ni) {
        PyErr_SetString(PyExc_RuntimeError, "input_feed changed size during run");
        goto done;
    }
    for (i = 0; i < ni; i++) {
        PyObject *idx = PyDict_GetItemWithError(self->in_index, keep[2 * i]); /* found above */
        if (!idx) goto done;
        size_t k = PyLong_AsSize_t(idx);
        int32_t declared = self->in_elem[k];
        if (use_values) {
            int pyerr = 0;
            int32_t kind = self->in_kind[k];
            st = value_from_py(keep[2 * i + 1], kind, declared, &values[i], &pyerr);
            if (st || pyerr) goto done;
        } else {
            int32_t elem = 0;
            PyArrayObject *arr = input_array(keep[2 * i + 1], declared, &elem);
            if (!arr) goto done;
            Py_SETREF(keep[2 * i + 1], (PyObject *)arr); /* the array read during the run */
            tensor_view(arr, elem, dims + i * NPY_MAXDIMS, &tensors[i]);
            tptr[i] = &tensors[i];
        }
    }
    for (size_t j = 0; names_fast && j < n_out; j++)
        if (!(out_names[j] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(names_fast, j)))) goto done;

    /* the options object is kept alive by the caller's reference for the call */
    const tsr_run_options *ro =
        PyObject_TypeCheck(run_options, &RunOptionsType) ? ((RunOptionsObject *)run_options)->ro : NULL;
    Py_BEGIN_ALLOW_THREADS if (use_values) st = tsr_session_run_values_with_options(
        self->session, ro, ni, in_names, (const tsr_value *const *)values, n_out, names_fast ? out_names : NULL, outs);
    else st =
        tsr_session_run_with_options(self->session, ro, ni, in_names, tptr, n_out, names_fast ? out_names : NULL, outs);
    Py_END_ALLOW_THREADS if (st) goto done;

    result = PyList_New((Py_ssize_t)n_out);
    for (size_t j = 0; j < n_out; j++) {
        PyObject *holder = result ? value_holder(outs[j]) : NULL;
        if (!result) tsr_value_free(outs[j]);
        outs[j] = NULL;
        PyObject *item = holder ? value_to_py(((ValueObject *)holder)->value, holder) : NULL;
        Py_XDECREF(holder); /* arrays over it hold their own references */
        if (!item) Py_CLEAR(result);
        else PyList_SET_ITEM(result, (Py_ssize_t)j, item);
    }
done:
    if (st) raise_status(st);
    for (i = 0; i < ni; i++) tsr_value_free(values[i]);
    for (i = 0; i < 2 * kept; i++) Py_XDECREF(keep[i]);
    Py_XDECREF(names_fast);
    free(block);
    return result;
}

static PyObject *take_string(tsr_status *st, char *s) {
    if (st) return raise_status(st);
    PyObject *r = PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace");
    free(s);
    return r;
}

static PyObject *Session_assignment_json(SessionObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_session(self) < 0) return NULL;
    char *s = NULL;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_session_assignment_json(self->session, &s);
    Py_END_ALLOW_THREADS return take_string(st, s);
}

static PyObject *Session_assignment_text(SessionObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_session(self) < 0) return NULL;
    char *s = NULL;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_session_assignment_text(self->session, &s);
    Py_END_ALLOW_THREADS return take_string(st, s);
}

static PyObject *Session_assignment_dot(SessionObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_session(self) < 0) return NULL;
    char *s = NULL;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_session_assignment_dot(self->session, &s);
    Py_END_ALLOW_THREADS return take_string(st, s);
}

static PyObject *Session_profile_take(SessionObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_session(self) < 0) return NULL;
    char *s = NULL;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_session_profile_take(self->session, &s);
    Py_END_ALLOW_THREADS return take_string(st, s);
}

static PyObject *Session_metadata(SessionObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_session(self) < 0) return NULL;
    tsr_model_metadata m;
    memset(&m, 0, sizeof m);
    m.struct_size = sizeof m;
    tsr_status *st = tsr_session_metadata(self->session, &m);
    if (st) return raise_status(st);
    PyObject *props = PyDict_New(), *opsets = props ? PyDict_New() : NULL;
    for (size_t i = 0; opsets && i < m.property_count; i++) {
        const char *k, *v;
        if ((st = tsr_session_metadata_property(self->session, i, &k, &v))) {
            Py_DECREF(props);
            Py_DECREF(opsets);
            return raise_status(st);
        }
        PyObject *pv = PyUnicode_DecodeUTF8(v, (Py_ssize_t)strlen(v), "replace");
        if (!pv || PyDict_SetItemString(props, k, pv) < 0) Py_CLEAR(opsets);
        Py_XDECREF(pv);
    }
    for (size_t i = 0; opsets && i < m.opset_count; i++) {
        const char *d;
        int64_t ver;
        if ((st = tsr_session_opset(self->session, i, &d, &ver))) {
            Py_DECREF(props);
            Py_DECREF(opsets);
            return raise_status(st);
        }
        PyObject *pv = PyLong_FromLongLong(ver);
        if (!pv || PyDict_SetItemString(opsets, d, pv) < 0) Py_CLEAR(opsets);
        Py_XDECREF(pv);
    }
    if (!opsets) {
        Py_XDECREF(props);
        return NULL;
    }
    return Py_BuildValue("{s:s,s:s,s:s,s:L,s:s,s:s,s:L,s:N,s:N}", "producer_name", m.producer_name, "producer_version",
                         m.producer_version, "domain", m.domain, "model_version", (long long)m.model_version,
                         "doc_string", m.doc_string, "graph_name", m.graph_name, "ir_version", (long long)m.ir_version,
                         "properties", props, "opsets", opsets);
}

static PyObject *Session_nodes(SessionObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_session(self) < 0) return NULL;
    size_t n = tsr_session_node_count(self->session);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        tsr_node_info ni;
        memset(&ni, 0, sizeof ni);
        ni.struct_size = sizeof ni;
        tsr_status *st = tsr_session_node_info(self->session, i, &ni);
        if (st) {
            Py_DECREF(list);
            return raise_status(st);
        }
        PyObject *outs = PyList_New((Py_ssize_t)ni.output_count);
        for (size_t j = 0; outs && j < ni.output_count; j++) {
            PyObject *s = PyUnicode_FromString(ni.outputs[j]);
            if (!s) Py_CLEAR(outs);
            else PyList_SET_ITEM(outs, (Py_ssize_t)j, s);
        }
        PyObject *item = outs ? Py_BuildValue("{s:s,s:s,s:s,s:z,s:s,s:n,s:N}", "name", ni.name, "op_type", ni.op_type,
                                              "domain", ni.domain, "origin", ni.origin, "provider", ni.provider,
                                              "piece", (Py_ssize_t)ni.piece, "outputs", outs)
                              : NULL;
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyMethodDef Session_methods[] = {
    {"inputs", (PyCFunction)Session_inputs, METH_NOARGS, "[(name, elem_type, shape, kind)] of the graph inputs."},
    {"outputs", (PyCFunction)Session_outputs, METH_NOARGS, "[(name, elem_type, shape, kind)] of the graph outputs."},
    {"run", (PyCFunction)(void (*)(void))Session_run, METH_VARARGS | METH_KEYWORDS,
     "run(output_names or None, feed dict, run_options=None) -> list of outputs."},
    {"assignment_json", (PyCFunction)Session_assignment_json, METH_NOARGS, "The assignment as JSON text."},
    {"assignment_text", (PyCFunction)Session_assignment_text, METH_NOARGS, "The assignment as a table."},
    {"assignment_dot", (PyCFunction)Session_assignment_dot, METH_NOARGS, "The assignment as Graphviz DOT."},
    {"profile_take", (PyCFunction)Session_profile_take, METH_NOARGS, "Profile events since the last take (JSON)."},
    {"metadata", (PyCFunction)Session_metadata, METH_NOARGS, "The model's metadata as a dict."},
    {"nodes", (PyCFunction)Session_nodes, METH_NOARGS, "Every node and the provider that runs it."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject SessionType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.Session",
    .tp_basicsize = sizeof(SessionObject),
    .tp_dealloc = (destructor)Session_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Session(model, options=None, base_dir=None): a tsr_session (see tessera.InferenceSession).",
    .tp_methods = Session_methods,
    .tp_init = (initproc)Session_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------------ */
/* module functions                                                           */

static PyObject *mod_version(PyObject *Py_UNUSED(m), PyObject *Py_UNUSED(ignored)) {
    return PyUnicode_FromString(tsr_version());
}

static const char *device_kind_name(int32_t k) {
    static const char *names[] = {"cpu", "gpu", "accelerator", "other"};
    return k >= 0 && k < 4 ? names[k] : "other";
}

/* list_providers(extra_paths=None) -> [dict] */
static PyObject *mod_list_providers(PyObject *Py_UNUSED(m), PyObject *args) {
    PyObject *extra = Py_None;
    if (!PyArg_ParseTuple(args, "|O:list_providers", &extra)) return NULL;
    PyObject *fast = NULL;
    const char **paths = NULL;
    size_t n_paths = 0;
    if (extra != Py_None) {
        fast = PySequence_Fast(extra, "extra_paths must be a list of str");
        if (!fast) return NULL;
        n_paths = (size_t)PySequence_Fast_GET_SIZE(fast);
        paths = calloc(n_paths + 1, sizeof *paths);
        if (!paths) {
            Py_DECREF(fast);
            return PyErr_NoMemory();
        }
        for (size_t i = 0; i < n_paths; i++)
            if (!(paths[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i)))) {
                free(paths);
                Py_DECREF(fast);
                return NULL;
            }
    }
    tsr_provider_list *pl = NULL;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_providers_discover(paths, n_paths, &pl);
    Py_END_ALLOW_THREADS free(paths);
    Py_XDECREF(fast);
    if (st) return raise_status(st);
    size_t n = tsr_provider_list_size(pl);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        tsr_provider_desc d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        if ((st = tsr_provider_list_get(pl, i, &d))) {
            Py_CLEAR(list);
            raise_status(st);
            break;
        }
        PyObject *devs = PyList_New((Py_ssize_t)d.device_count);
        for (size_t k = 0; devs && k < d.device_count; k++) {
            tsr_device_desc dd;
            memset(&dd, 0, sizeof dd);
            dd.struct_size = sizeof dd;
            if ((st = tsr_provider_list_device(pl, i, k, &dd))) {
                Py_CLEAR(devs);
                raise_status(st);
                break;
            }
            PyObject *dev = Py_BuildValue("{s:z,s:z,s:z,s:s,s:s,s:K}", "name", dd.name, "vendor", dd.vendor, "details",
                                          dd.details, "kind", device_kind_name(dd.kind), "memory",
                                          dd.memory_kind == TSR_MEMORY_DEVICE ? "device" : "host", "memory_bytes",
                                          (unsigned long long)dd.memory_bytes);
            if (!dev) Py_CLEAR(devs);
            else PyList_SET_ITEM(devs, (Py_ssize_t)k, dev);
        }
        PyObject *item = devs
            ? Py_BuildValue("{s:z,s:z,s:z,s:z,s:I,s:z,s:N}", "name", d.name, "vendor", d.vendor, "version", d.version,
                            "path", d.path, "abi_version", (unsigned)d.abi_version, "error", d.error, "devices", devs)
            : NULL;
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    tsr_provider_list_free(pl);
    return list;
}

/* tensor_to_onnx(array, name) -> bytes: a serialized TensorProto (a copy). */
static PyObject *mod_tensor_to_onnx(PyObject *Py_UNUSED(m), PyObject *args) {
    PyObject *obj;
    const char *name;
    if (!PyArg_ParseTuple(args, "Os:tensor_to_onnx", &obj, &name)) return NULL;
    tsr_value *v = NULL;
    int pyerr = 0;
    tsr_status *st = value_from_array(obj, 0, &v, &pyerr);
    if (pyerr) return NULL;
    if (st) return raise_status(st);
    void *bytes = NULL;
    size_t size = 0;
    st = tsr_value_to_onnx_tensor(v, name, &bytes, &size);
    tsr_value_free(v);
    if (st) return raise_status(st);
    PyObject *r = PyBytes_FromStringAndSize((const char *)bytes, (Py_ssize_t)size);
    free(bytes);
    return r;
}

/* tensor_from_onnx(bytes) -> (name or None, array): parses a TensorProto. */
static PyObject *mod_tensor_from_onnx(PyObject *Py_UNUSED(m), PyObject *args) {
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*:tensor_from_onnx", &view)) return NULL;
    tsr_value *v = NULL;
    char *name = NULL;
    tsr_status *st = tsr_value_from_onnx_tensor(view.buf, (size_t)view.len, &v, &name);
    PyBuffer_Release(&view);
    if (st) return raise_status(st);
    PyObject *holder = value_holder(v);
    PyObject *arr = holder ? value_to_py(v, holder) : NULL;
    Py_XDECREF(holder);
    PyObject *r = arr ? Py_BuildValue("(zN)", name && *name ? name : NULL, arr) : NULL;
    free(name);
    return r;
}

static PyMethodDef module_methods[] = {
    {"version", mod_version, METH_NOARGS, "Tessera's version, e.g. '0.1.0'."},
    {"list_providers", mod_list_providers, METH_VARARGS,
     "list_providers(extra_paths=None): the plugins found, each a dict with its devices."},
    {"tensor_to_onnx", mod_tensor_to_onnx, METH_VARARGS, "tensor_to_onnx(array, name) -> TensorProto bytes."},
    {"tensor_from_onnx", mod_tensor_from_onnx, METH_VARARGS, "tensor_from_onnx(bytes) -> (name, array)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_tessera",
    "Tessera's C API for the tessera package.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__tessera(void) {
    import_array();
    if (PyType_Ready(&ValueType) < 0 || PyType_Ready(&SessionType) < 0 || PyType_Ready(&RunOptionsType) < 0 ||
        iobinding_types_ready() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (make_errors(m) < 0 || PyModule_AddFunctions(m, stages_methods) < 0 ||
        PyModule_AddObjectRef(m, "Session", (PyObject *)&SessionType) < 0 ||
        PyModule_AddObjectRef(m, "RunOptions", (PyObject *)&RunOptionsType) < 0 || iobinding_add_types(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    static const struct {
        const char *name;
        int value;
    } consts[] = {
        {"VALUE_NONE", TSR_VALUE_NONE},         {"VALUE_TENSOR", TSR_VALUE_TENSOR},
        {"VALUE_SEQUENCE", TSR_VALUE_SEQUENCE}, {"VALUE_OPTIONAL", TSR_VALUE_OPTIONAL},
        {"VALUE_MAP", TSR_VALUE_MAP},
    };
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
        if (PyModule_AddIntConstant(m, consts[i].name, consts[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
