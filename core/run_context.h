/* What a provider's run sees of the host: struct tsr_run_context, the
 * concrete struct behind the ABI's opaque tsr_run_context handle (its
 * inputs, its output slots, the run's limits), and the host API slots that
 * act on it (run_context.c, named host_<slot>; the table is assembled in
 * runtime/host_api.c). */
#ifndef TESSERA_CORE_RUN_CONTEXT_H
#define TESSERA_CORE_RUN_CONTEXT_H

#include "rt_tensor.h"
#include "tessera/provider.h"

struct run_budget;
struct exec_hooks;

struct tsr_run_context {
    size_t n_inputs;
    const tsr_tensor *const *inputs; /* NULL entries allowed */
    size_t n_outputs;
    rt_tensor *outputs;                /* n_outputs slots, filled by run_alloc_output */
    provider_inst *prov;               /* whose memory outputs go to */
    rt_tensor **scratch;               /* one allocation each: a kernel keeps pointers */
    size_t n_scratch;                  /* to earlier ones while it allocates more */
    const tsr_value *const *in_values; /* n_inputs entries or NULL: non-tensor inputs */
    tsr_value **wrappers;              /* lazily made TENSOR views for run_input_value */
    uint64_t max_tensor_bytes;         /* 0: no limit */
    struct run_budget *budget;         /* the run's "working_bytes"; NULL: not counted */
    int32_t device;                    /* the piece's device: where outputs go */
    const struct exec_hooks *hooks;    /* the run's, for control-flow bodies; may be NULL */
    uint64_t charged;                  /* provider memory counted by run_charge, given back at the end */
    /* Puts a host tensor of `bytes` into `slot` (borrowed) where the run's
     * planned arena has room for it (runtime/arena_plan.c), or answers
     * false to have it allocated alone; NULL: no arena. */
    bool (*place)(void *place_user, size_t index, size_t bytes, int32_t elem_type, int32_t rank, const int64_t *dims,
                  rt_tensor *slot);
    void *place_user;
};

/* Frees scratch tensors and value wrappers a run made. */
void run_context_end(struct tsr_run_context *ctx);

size_t host_run_input_count(const tsr_run_context *c);
const tsr_tensor *host_run_input(const tsr_run_context *c, size_t i);
size_t host_run_output_count(const tsr_run_context *c);
tsr_status *host_run_alloc_output(tsr_run_context *c, size_t index, int32_t elem_type, int32_t rank,
                                  const int64_t *dims, tsr_tensor **out);
const tsr_value *host_run_input_value(const tsr_run_context *c, size_t i);
tsr_status *host_run_set_output_value(tsr_run_context *c, size_t index, tsr_value *v);
int32_t host_run_should_stop(const tsr_run_context *c);
tsr_status *host_run_charge(tsr_run_context *c, uint64_t bytes, const char *what);
tsr_status *host_tensor_set_string(tsr_tensor *t, size_t index, const char *data, size_t size);

#endif
