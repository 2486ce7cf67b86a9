/* A graph made ready to run: partitioned over the session's providers, its
 * pieces compiled, and each value's last reader known. The main graph has
 * one; every If/Loop/Scan body has one too (runtime/control_flow.c). */
#ifndef TESSERA_RUNTIME_GRAPH_PLAN_H
#define TESSERA_RUNTIME_GRAPH_PLAN_H

#include "ir.h"
#include "partition.h"
#include "plugin.h"
#include "rt_tensor.h"

/* A constant (initializer) already copied into a provider's memory. */
typedef struct const_copy {
    const ir_value *value;
    const provider_inst *prov;
    int32_t device;
    rt_tensor copy;
} const_copy;

typedef struct graph_plan {
    ir_graph *g;
    partition part;
    size_t *last_use; /* per value index of g: last piece reading it, or SIZE_MAX */
    /* Weights go to a device once per session, not once per run. */
    const_copy **consts; /* each allocated alone: pieces hold pointers into them */
    size_t n_consts;
    uint64_t max_tensor_bytes; /* from the rules it was built with */
} graph_plan;

/* A node (by name or origin) or op type pinned to one provider. */
typedef struct pin_rule {
    const char *node_or_op;
    size_t prov_index;
    bool by_name; /* some node of the model has this name: match names only */
} pin_rule;

/* What a session's options say about placement, for every graph it plans. */
typedef struct plan_rules {
    const pin_rule *pins;
    size_t n_pins;
    placement_policy policy;
    uint64_t max_tensor_bytes; /* the session's "tensor_bytes" limit */
    const char *cache_dir;     /* compiled-piece cache, or NULL */
} plan_rules;

/* Partitions g over provs (in priority order) and compiles every piece; a
 * piece that fails to compile goes to the next provider that claims it.
 * Nodes matching a pin may go to the pinned provider only. */
tsr_status *graph_plan_build(ir_graph *g, provider_inst *const *provs, size_t n_provs, const plan_rules *rules,
                             graph_plan *out);
void graph_plan_free(graph_plan *p, provider_inst *const *provs);

/* Values of enclosing graphs that a body reads: values[i] (a value of the
 * immediately enclosing graph) is held by slots[i]. */
typedef struct outer_scope {
    size_t n;
    ir_value *const *values;
    const rt_tensor *slots;
} outer_scope;

/* Optional callbacks while a graph runs (profiling, observing values).
 * Times are seconds on a monotonic clock. */
typedef struct exec_hooks {
    void *user;
    /* "" for the main graph; inside a control-flow body the body's path,
     * "NODE/ATTRIBUTE/" (nested bodies append theirs). */
    const char *path;
    /* After piece `pi` of p ran; its outputs are in slots (by value index). */
    void (*piece_done)(void *user, const char *path, const graph_plan *p, size_t pi, const rt_tensor *slots, double t0,
                       double t1);
    /* After a tensor was copied between memories for piece `pi`
     * (pi == p->part.n_pieces: a graph output read back at the end). */
    void (*copy_done)(void *user, const char *path, const graph_plan *p, size_t pi, const ir_value *v,
                      const rt_tensor *from, const rt_tensor *to, double t0, double t1);
    /* Before a control-flow body runs once (may be NULL); `path` is the
     * body's, as for piece_done inside it. */
    void (*body_begin)(void *user, const char *path);
} exec_hooks;

double exec_now(void);

struct run_budget;

/*
 * Runs p->g once. inputs[i] feeds g->inputs[i] and is borrowed; an entry
 * holding nothing leaves the input to its initializer, if any. outer may be
 * NULL for the main graph. outputs[] (g->n_outputs entries, released first)
 * receive owned results; with to_host they are all in host memory,
 * otherwise they may stay in a provider's device memory. What the run
 * allocates is charged to `budget` (the run's "working_bytes"; NULL: not
 * counted), outputs included: they carry their charge until released.
 */
tsr_status *graph_run(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                      const outer_scope *outer, bool to_host, struct run_budget *budget, rt_tensor *outputs);
/* The same, calling `hooks` (may be NULL) as pieces finish. */
tsr_status *graph_run_hooked(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                             const outer_scope *outer, bool to_host, const exec_hooks *hooks, struct run_budget *budget,
                             rt_tensor *outputs);
/* The same, with to_host chosen per output: to_host_each[o] (NULL: every
 * output as all_to_host). A tsr_io_binding keeps some outputs in the
 * memory of the provider that made them and reads the others back. */
tsr_status *graph_run_each(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                           const outer_scope *outer, bool all_to_host, const bool *to_host_each,
                           const exec_hooks *hooks, struct run_budget *budget, rt_tensor *outputs);
/* The same, placing host intermediates in the run's planned arena (NULL:
 * each allocated alone; runtime/arena_plan.h). A control-flow body gets
 * its own body's arena (runtime/cf_util.c), never the enclosing graph's. */
struct arena_run;
tsr_status *graph_run_arena(const graph_plan *p, provider_inst *const *provs, const rt_tensor *inputs,
                            const outer_scope *outer, bool all_to_host, const bool *to_host_each,
                            const exec_hooks *hooks, struct run_budget *budget, struct arena_run *arena,
                            rt_tensor *outputs);

#endif
