/*
 * What the files of the extension tessera._tessera share: the object types
 * and the helpers that turn statuses, values and arrays into one another
 * (defined in tessera_module.c). Include after Python.h,
 * numpy/arrayobject.h and tessera/tessera.h. Hidden: these names are the
 * extension's own, not exported from it.
 */
#ifndef TESSERA_PY_MODULE_H
#define TESSERA_PY_MODULE_H

#define TSR_PY_INTERNAL __attribute__((visibility("hidden")))

/* Owns one tsr_value; numpy arrays over it keep it alive. */
typedef struct {
    PyObject_HEAD tsr_value *value;
} ValueObject;

typedef struct {
    PyObject_HEAD tsr_session *session;
    size_t n_in, n_out;
    int32_t *in_elem, *in_kind; /* declared, per input */
    PyObject *in_index;         /* dict: input name -> index */
} SessionObject;

/* RunOptions: a tsr_run_options (tag, terminate, deadline). */
typedef struct {
    PyObject_HEAD tsr_run_options *ro;
    PyObject *tag; /* str or None, as set */
    int terminate;
    long long timeout_ms;
} RunOptionsObject;

TSR_PY_INTERNAL extern PyTypeObject ValueType, SessionType, RunOptionsType;

/* Raises the exception for `st` and frees it; returns NULL for `return`. */
TSR_PY_INTERNAL PyObject *raise_status(tsr_status *st);
/* An error of our own making, as Tessera's InvalidArgument. */
TSR_PY_INTERNAL PyObject *raise_invalid(const char *fmt, ...);
/* A _Value owning v (freed here when the object cannot be made). */
TSR_PY_INTERNAL PyObject *value_holder(tsr_value *v);
/* Any value as Python: arrays over `holder`, which owns v. */
TSR_PY_INTERNAL PyObject *value_to_py(const tsr_value *v, PyObject *holder);
/* A host tensor view over a numpy array (borrowed; the array must outlive it). */
TSR_PY_INTERNAL void tensor_view(PyArrayObject *arr, int32_t elem, int64_t *dims, tsr_tensor *t);
/* `obj` as a C-contiguous, aligned, native-order array of the declared
 * element type's kind; *elem_out gets its Tessera type. */
TSR_PY_INTERNAL PyArrayObject *input_array(PyObject *obj, int32_t declared, int32_t *elem_out);
/* -1 with RuntimeError when the Session was never initialised. */
TSR_PY_INTERNAL int check_session(SessionObject *self);

/* tsr_session_options from the dict tessera._session builds; NULL with
 * an exception set. */
TSR_PY_INTERNAL tsr_session_options *make_options(PyObject *opts);
/* Its chain of models: keys "stages", "connect", "prefixes"
 * (tessera_stages.c); -1 with an exception set. */
TSR_PY_INTERNAL int stages_apply(tsr_session_options *o, PyObject *opts);
/* check_options and compose, for the module's table. */
TSR_PY_INTERNAL extern PyMethodDef stages_methods[];

/* IoBinding and DeviceValue (tessera_iobinding.c): made ready, and added
 * to the module. */
TSR_PY_INTERNAL int iobinding_types_ready(void);
TSR_PY_INTERNAL int iobinding_add_types(PyObject *module);

#endif
