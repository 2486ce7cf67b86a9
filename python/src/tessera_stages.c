/*
 * Chains of models from Python (tsr_session_options_add_stage, _connect,
 * _set_stage_prefix, tsr_model_compose): the keys "stages", "connect" and
 * "prefixes" of the options dict tessera._session builds, and the module
 * functions check_options and compose.
 *
 * SessionOptions is plain Python, turned into a tsr_session_options only
 * when a session is made; check_options lets SessionOptions.connect and
 * .set_stage_prefix build one at once and throw it away, so a bad stage
 * index raises where the caller made the mistake, with the C message.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_ARRAY_API
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>

#include <stdlib.h>

#include <tessera/tessera.h>

#include "tessera_module.h"

/* A stage index from Python: a non-negative int (size_t in C). */
static int stage_index(PyObject *obj, size_t *out) {
    size_t v = PyLong_AsSize_t(obj);
    if (v == (size_t)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            raise_invalid("a stage index must be 0 or more");
        }
        return -1;
    }
    *out = v;
    return 0;
}

/* opts[key] as a fast sequence, NULL without error when absent. */
static PyObject *list_item(PyObject *opts, const char *key, int *err) {
    PyObject *list = PyDict_GetItemString(opts, key); /* borrowed */
    *err = 0;
    if (!list || list == Py_None) return NULL;
    PyObject *fast = PySequence_Fast(list, "session options: expected a list");
    if (!fast) *err = 1;
    return fast;
}

static int apply_paths(tsr_session_options *o, PyObject *opts) {
    int err;
    PyObject *fast = list_item(opts, "stages", &err);
    if (!fast) return err ? -1 : 0;
    tsr_status *st = NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && !st; i++) {
        const char *path = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(fast, i));
        if (!path) break;
        st = tsr_session_options_add_stage(o, path);
    }
    Py_DECREF(fast);
    if (st) raise_status(st);
    return PyErr_Occurred() ? -1 : 0;
}

/* "connect": [(stage, output, input)] */
static int apply_links(tsr_session_options *o, PyObject *opts) {
    int err;
    PyObject *fast = list_item(opts, "connect", &err);
    if (!fast) return err ? -1 : 0;
    tsr_status *st = NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && !st; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            PyErr_SetString(PyExc_TypeError, "session option 'connect': expected (stage, output, input) tuples");
            break;
        }
        size_t stage;
        if (stage_index(PyTuple_GET_ITEM(t, 0), &stage) < 0) break;
        const char *out = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 1));
        const char *in = out ? PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 2)) : NULL;
        if (!in) break;
        st = tsr_session_options_connect(o, stage, out, in);
    }
    Py_DECREF(fast);
    if (st) raise_status(st);
    return PyErr_Occurred() ? -1 : 0;
}

/* "prefixes": [(stage, prefix or None)] */
static int apply_prefixes(tsr_session_options *o, PyObject *opts) {
    int err;
    PyObject *fast = list_item(opts, "prefixes", &err);
    if (!fast) return err ? -1 : 0;
    tsr_status *st = NULL;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && !st; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2) {
            PyErr_SetString(PyExc_TypeError, "session option 'prefixes': expected (stage, prefix) tuples");
            break;
        }
        size_t stage;
        if (stage_index(PyTuple_GET_ITEM(t, 0), &stage) < 0) break;
        PyObject *p = PyTuple_GET_ITEM(t, 1);
        const char *prefix = p == Py_None ? NULL : PyUnicode_AsUTF8(p);
        if (p != Py_None && !prefix) break;
        st = tsr_session_options_set_stage_prefix(o, stage, prefix);
    }
    Py_DECREF(fast);
    if (st) raise_status(st);
    return PyErr_Occurred() ? -1 : 0;
}

int stages_apply(tsr_session_options *o, PyObject *opts) {
    /* paths first: connect and prefix check their stage against them */
    if (apply_paths(o, opts) < 0 || apply_links(o, opts) < 0 || apply_prefixes(o, opts) < 0) return -1;
    return 0;
}

/* check_options(opts): builds the tsr_session_options and frees it. */
static PyObject *mod_check_options(PyObject *Py_UNUSED(m), PyObject *opts) {
    tsr_session_options *o = make_options(opts);
    if (!o) return NULL;
    tsr_session_options_free(o);
    Py_RETURN_NONE;
}

/* compose(path, opts) -> bytes: tsr_model_compose. */
static PyObject *mod_compose(PyObject *Py_UNUSED(m), PyObject *args) {
    const char *path;
    PyObject *opts = Py_None;
    if (!PyArg_ParseTuple(args, "s|O:compose", &path, &opts)) return NULL;
    tsr_session_options *o = make_options(opts);
    if (!o) return NULL;
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_model_compose(o, path, &bytes, &size);
    Py_END_ALLOW_THREADS tsr_session_options_free(o);
    if (st) return raise_status(st);
    PyObject *r = PyBytes_FromStringAndSize((const char *)bytes, (Py_ssize_t)size);
    free(bytes);
    return r;
}

PyMethodDef stages_methods[] = {
    {"check_options", mod_check_options, METH_O,
     "check_options(opts): raises what making a session's options from opts would (stages included)."},
    {"compose", mod_compose, METH_VARARGS,
     "compose(path, opts=None) -> bytes: the model and opts' stages merged, as one ONNX model."},
    {NULL, NULL, 0, NULL},
};
