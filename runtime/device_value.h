/* Values a run leaves in a provider's memory for the application
 * (tsr_device_value, tessera.h "device-resident inputs and outputs"), and
 * the tsr_io_binding that makes and reads them. */
#ifndef TESSERA_RUNTIME_DEVICE_VALUE_H
#define TESSERA_RUNTIME_DEVICE_VALUE_H

#include "rt_tensor.h"
#include "session.h"

struct tsr_device_value {
    /* The session whose run made it and whose list holds it; NULL once
     * that session was freed (the contents went with it). */
    tsr_session *session;
    uint64_t id;    /* unique in its session: bindings name inputs by it */
    rt_tensor slot; /* owned, charged to no run */
    struct tsr_device_value *prev, *next;
};

/* A new device value of s holding what `slot` held (moved: slot is left
 * empty, its run charge given back). Caller holds s->lock. */
tsr_status *device_value_new(tsr_session *s, rt_tensor *slot, tsr_device_value **out);
/* Frees v; the caller holds its session's lock (or it has none). */
void device_value_free_locked(tsr_device_value *v);
/* The live device value of s with this id, or NULL (freed). Caller holds
 * s->lock. */
tsr_device_value *device_value_find(tsr_session *s, uint64_t id);

/* What one graph input of a binding is fed from. */
typedef enum bound_input_kind { BIND_NONE = 0, BIND_HOST = 1, BIND_DEVICE = 2 } bound_input_kind;
typedef struct bound_input {
    bound_input_kind kind;
    tsr_tensor tensor; /* BIND_HOST: the descriptor, dims owned below */
    int64_t *dims;
    uint64_t device_id; /* BIND_DEVICE: the value's id in the session */
} bound_input;

/* Where one graph output of a binding goes, and what the last run left. */
typedef enum bound_output_kind { BIND_OUT_NONE = 0, BIND_OUT_HOST = 1, BIND_OUT_DEVICE = 2 } bound_output_kind;
typedef struct bound_output {
    bound_output_kind kind;
    tsr_value *host;       /* BIND_OUT_HOST: the last result, not taken */
    tsr_device_value *dev; /* BIND_OUT_DEVICE: the same */
} bound_output;

struct tsr_io_binding {
    tsr_session *session;
    size_t n_inputs, n_outputs; /* the session's graph inputs and outputs */
    bound_input *inputs;        /* by graph input index */
    bound_output *outputs;      /* by graph output index */
};

/* Frees the results b holds; the caller holds the session's lock. */
void io_binding_drop_results_locked(tsr_io_binding *b);

#endif
