/* A plugin with a race between sessions, for `tessera check-provider`'s
 * concurrency check: it runs float Relu through one scratch accumulator
 * shared by every instance (acc += x; wait; y = relu(acc); acc -= x), with
 * no lock. One run at a time is right — so op conformance and the shared
 * session pass, where the host serialises runs — but two sessions running
 * at once see each other's values, which concurrency_sessions must catch.
 * (provider.h: instances of different sessions run at once; what they
 * share needs a lock.) */
#include <time.h>

#include "plugin_common.h"

#define RACY_MAX 4096

static float acc[RACY_MAX];

static const char *const ops[] = {"Relu", NULL};

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "racy");
}

static tsr_status *run(void *piece_state, tsr_run_context *ctx) {
    const tp_piece *p = piece_state;
    const tsr_tensor *x = host->run_input(ctx, (size_t)p->in[0]);
    if (!x || x->elem_type != TSR_FLOAT || tp_count(x) > RACY_MAX)
        return tp_error(TSR_ERR_NOT_SUPPORTED, "racy: float tensors of at most %d elements", RACY_MAX);
    tsr_tensor *y;
    tsr_status *s =
        host->run_alloc_output(ctx, p->out >= 0 ? (size_t)p->out : (size_t)-1, TSR_FLOAT, x->rank, x->dims, &y);
    if (s) return s;
    size_t n = tp_count(x);
    const float *in = x->data;
    float *out = y->data;
    for (size_t i = 0; i < n; i++) acc[i] += in[i];
    /* Long enough for the other session's run to land in the window. */
    struct timespec wait = {0, 2 * 1000 * 1000};
    nanosleep(&wait, NULL);
    for (size_t i = 0; i < n; i++) {
        out[i] = acc[i] > 0 ? acc[i] : 0.0f;
        acc[i] -= in[i];
    }
    return NULL;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "racy",
    .vendor = "Tessera tests",
    .version = "0",
    .create = tp_create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = tp_compile,
    .run = run,
    .release = tp_release,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
