/*
 * IoBinding and DeviceValue of tessera._tessera: tsr_io_binding and
 * tsr_device_value (tessera.h, "device-resident inputs and outputs") for
 * tessera.InferenceSession.io_binding() (tessera/_iobinding.py).
 *
 * Ownership: an IoBinding owns its tsr_io_binding and holds its Session,
 * and every array or DeviceValue bound as an input (the C binding borrows
 * them) until it is rebound or cleared. A DeviceValue owns its
 * tsr_device_value and holds the Session that made it, so the session is
 * freed after every value of it. Threads: a run releases the GIL; the
 * binding refuses other calls until the run is over (a binding serves one
 * run at a time).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL tessera_ARRAY_API
#define NO_IMPORT_ARRAY
#include <numpy/arrayobject.h>

#include <stdint.h>
#include <string.h>

#include <tessera/tessera.h>

#include "tessera_module.h"

/* ------------------------------------------------------------------------ */
/* DeviceValue                                                                */

typedef struct {
    PyObject_HEAD tsr_device_value *value;
    PyObject *session; /* the Session that made it: outlives it */
} DeviceValueObject;

static void DeviceValue_dealloc(DeviceValueObject *self) {
    tsr_device_value *v = self->value;
    self->value = NULL;
    /* waits for a run of its session in progress, which needs no GIL */
    Py_BEGIN_ALLOW_THREADS tsr_device_value_free(v);
    Py_END_ALLOW_THREADS Py_XDECREF(self->session);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int check_value(DeviceValueObject *self) {
    if (self->value) return 0;
    PyErr_SetString(PyExc_RuntimeError, "DeviceValue objects are made by IoBinding.take");
    return -1;
}

/* numpy(): a host copy, through the provider's copy_to_host. */
static PyObject *DeviceValue_numpy(DeviceValueObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_value(self) < 0) return NULL;
    tsr_value *host = NULL;
    tsr_status *st;
    Py_BEGIN_ALLOW_THREADS st = tsr_device_value_to_host(self->value, &host);
    Py_END_ALLOW_THREADS if (st) return raise_status(st);
    PyObject *holder = value_holder(host);
    if (!holder) return NULL;
    PyObject *r = value_to_py(((ValueObject *)holder)->value, holder);
    Py_DECREF(holder);
    return r;
}

/* info(): (elem_type, shape, memory_kind, device_index, provider). */
static PyObject *DeviceValue_info(DeviceValueObject *self, PyObject *Py_UNUSED(ignored)) {
    if (check_value(self) < 0) return NULL;
    tsr_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    const char *provider = NULL;
    tsr_status *st = tsr_device_value_info(self->value, &t, &provider);
    if (st) return raise_status(st);
    PyObject *shape = PyTuple_New(t.rank > 0 ? t.rank : 0);
    for (int32_t d = 0; shape && d < t.rank; d++) {
        PyObject *n = PyLong_FromLongLong((long long)t.dims[d]);
        if (!n) Py_CLEAR(shape);
        else PyTuple_SET_ITEM(shape, d, n);
    }
    if (!shape) return NULL;
    return Py_BuildValue("(iNiis)", (int)t.elem_type, shape, (int)t.memory_kind, (int)t.device_index, provider);
}

static PyMethodDef DeviceValue_methods[] = {
    {"numpy", (PyCFunction)DeviceValue_numpy, METH_NOARGS, "A host copy as a numpy array (waits for the device)."},
    {"info", (PyCFunction)DeviceValue_info, METH_NOARGS,
     "(elem_type, shape, memory_kind, device_index, provider name or 'host')."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DeviceValueType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.DeviceValue",
    .tp_basicsize = sizeof(DeviceValueObject),
    .tp_dealloc = (destructor)DeviceValue_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tsr_device_value: a run's output left where it was made (IoBinding.take(name, device=True)).",
    .tp_methods = DeviceValue_methods,
};

/* ------------------------------------------------------------------------ */
/* IoBinding                                                                  */

typedef struct {
    PyObject_HEAD tsr_io_binding *binding;
    SessionObject *session;
    PyObject *keep; /* dict: input name -> the array or DeviceValue bound */
    int busy;       /* a run with the GIL released is using the binding */
} IoBindingObject;

static void IoBinding_dealloc(IoBindingObject *self) {
    tsr_io_binding *b = self->binding;
    self->binding = NULL;
    /* before the session it may hold results of; freeing them waits for a
     * run of the session in progress, which needs no GIL */
    Py_BEGIN_ALLOW_THREADS tsr_io_binding_free(b);
    Py_END_ALLOW_THREADS Py_XDECREF(self->keep);
    Py_XDECREF(self->session);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* IoBinding(session) */
static int IoBinding_init(IoBindingObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"session", NULL};
    PyObject *sess;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!:IoBinding", kwlist, &SessionType, &sess)) return -1;
    if (self->binding) {
        PyErr_SetString(PyExc_RuntimeError, "IoBinding is already initialised");
        return -1;
    }
    if (check_session((SessionObject *)sess) < 0) return -1;
    tsr_status *st = tsr_io_binding_create(((SessionObject *)sess)->session, &self->binding);
    if (st) return raise_status(st), -1;
    if (!(self->keep = PyDict_New())) return -1;
    self->session = (SessionObject *)Py_NewRef(sess);
    return 0;
}

static int usable(IoBindingObject *self) {
    if (!self->binding) {
        PyErr_SetString(PyExc_RuntimeError, "the IoBinding is not initialised");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the IoBinding is in use by a run: a binding serves one run at a time");
        return -1;
    }
    return 0;
}

/* bind_input(name, array_or_device_value) */
static PyObject *IoBinding_bind_input(IoBindingObject *self, PyObject *args) {
    PyObject *name_obj, *obj;
    if (!PyArg_ParseTuple(args, "UO:bind_input", &name_obj, &obj) || usable(self) < 0) return NULL;
    const char *name = PyUnicode_AsUTF8(name_obj);
    if (!name) return NULL;
    tsr_status *st;
    PyObject *kept;
    if (PyObject_TypeCheck(obj, &DeviceValueType)) {
        if (check_value((DeviceValueObject *)obj) < 0) return NULL;
        st = tsr_io_binding_bind_input_device(self->binding, name, ((DeviceValueObject *)obj)->value);
        kept = Py_NewRef(obj);
    } else {
        /* the declared type converts lists and scalars; an unknown name
         * is reported by the binding, in Tessera's words */
        PyObject *idx = PyDict_GetItemWithError(self->session->in_index, name_obj);
        if (!idx && PyErr_Occurred()) return NULL;
        int32_t declared = idx ? self->session->in_elem[PyLong_AsSize_t(idx)] : 0, elem = 0;
        if (declared == TSR_STRING) return raise_invalid("input '%s': string tensors cannot be bound yet", name);
        PyArrayObject *arr = input_array(obj, declared, &elem);
        if (!arr) return NULL;
        int64_t dims[NPY_MAXDIMS];
        tsr_tensor t;
        tensor_view(arr, elem, dims, &t);
        st = tsr_io_binding_bind_input(self->binding, name, &t); /* dims copied, data borrowed */
        kept = (PyObject *)arr;
    }
    if (st) {
        Py_DECREF(kept);
        return raise_status(st);
    }
    int r = PyDict_SetItem(self->keep, name_obj, kept);
    Py_DECREF(kept);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

/* bind_output(name, device=False) */
static PyObject *IoBinding_bind_output(IoBindingObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"name", "device", NULL};
    const char *name;
    int device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "s|p:bind_output", kwlist, &name, &device) || usable(self) < 0)
        return NULL;
    tsr_status *st = device ? tsr_io_binding_bind_output_device(self->binding, name)
                            : tsr_io_binding_bind_output(self->binding, name);
    if (st) return raise_status(st);
    Py_RETURN_NONE;
}

static PyObject *IoBinding_clear(IoBindingObject *self, PyObject *Py_UNUSED(ignored)) {
    if (usable(self) < 0) return NULL;
    tsr_io_binding_clear(self->binding);
    PyDict_Clear(self->keep);
    Py_RETURN_NONE;
}

/* run(run_options=None): the GIL is released while the session runs. */
static PyObject *IoBinding_run(IoBindingObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"run_options", NULL};
    PyObject *run_options = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:run", kwlist, &run_options) || usable(self) < 0) return NULL;
    const tsr_run_options *ro =
        PyObject_TypeCheck(run_options, &RunOptionsType) ? ((RunOptionsObject *)run_options)->ro : NULL;
    tsr_status *st;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS st = tsr_session_run_with_binding(self->session->session, ro, self->binding);
    Py_END_ALLOW_THREADS self->busy = 0;
    if (st) return raise_status(st);
    Py_RETURN_NONE;
}

/* take(name, device=False): the last run's result, now Python's. */
static PyObject *IoBinding_take(IoBindingObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"name", "device", NULL};
    const char *name;
    int device = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "s|p:take", kwlist, &name, &device) || usable(self) < 0) return NULL;
    if (device) {
        DeviceValueObject *dv = PyObject_New(DeviceValueObject, &DeviceValueType);
        if (!dv) return NULL;
        dv->value = NULL;
        dv->session = Py_NewRef((PyObject *)self->session);
        tsr_status *st = tsr_io_binding_take_output_device(self->binding, name, &dv->value);
        if (st) {
            Py_DECREF(dv);
            return raise_status(st);
        }
        return (PyObject *)dv;
    }
    tsr_value *v = NULL;
    tsr_status *st = tsr_io_binding_take_output(self->binding, name, &v);
    if (st) return raise_status(st);
    PyObject *holder = value_holder(v);
    if (!holder) return NULL;
    PyObject *r = value_to_py(((ValueObject *)holder)->value, holder);
    Py_DECREF(holder);
    return r;
}

static PyMethodDef IoBinding_methods[] = {
    {"bind_input", (PyCFunction)IoBinding_bind_input, METH_VARARGS,
     "bind_input(name, array or DeviceValue): the array is held (not copied) until rebound."},
    {"bind_output", (PyCFunction)(void (*)(void))IoBinding_bind_output, METH_VARARGS | METH_KEYWORDS,
     "bind_output(name, device=False): read back, or left where it is made."},
    {"clear", (PyCFunction)IoBinding_clear, METH_NOARGS, "Unbinds everything."},
    {"run", (PyCFunction)(void (*)(void))IoBinding_run, METH_VARARGS | METH_KEYWORDS,
     "run(run_options=None): one run of the session with this binding."},
    {"take", (PyCFunction)(void (*)(void))IoBinding_take, METH_VARARGS | METH_KEYWORDS,
     "take(name, device=False): the last run's result (an array, or a DeviceValue)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject IoBindingType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tessera._tessera.IoBinding",
    .tp_basicsize = sizeof(IoBindingObject),
    .tp_dealloc = (destructor)IoBinding_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "IoBinding(session): a tsr_io_binding (see tessera.InferenceSession.io_binding).",
    .tp_methods = IoBinding_methods,
    .tp_init = (initproc)IoBinding_init,
    .tp_new = PyType_GenericNew,
};

int iobinding_types_ready(void) {
    return PyType_Ready(&IoBindingType) < 0 || PyType_Ready(&DeviceValueType) < 0 ? -1 : 0;
}

int iobinding_add_types(PyObject *m) {
    if (PyModule_AddObjectRef(m, "IoBinding", (PyObject *)&IoBindingType) < 0) return -1;
    return PyModule_AddObjectRef(m, "DeviceValue", (PyObject *)&DeviceValueType);
}
