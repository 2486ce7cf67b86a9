/*
 * The core's own provider: it runs If, Loop, Scan and SequenceMap. Their
 * bodies are graphs, partitioned over the session's providers and run by the
 * same executor as the main graph, reading outer-scope values in place.
 * It is always the session's last provider, so a plugin that can run a
 * whole control-flow node (say, to fuse a loop) is asked first.
 */
#ifndef TESSERA_RUNTIME_CONTROL_FLOW_H
#define TESSERA_RUNTIME_CONTROL_FLOW_H

#include "graph_plan.h"
#include "plugin.h"

/* The built-in plugin record ("core"); static, never unloaded. */
tsr_plugin *control_flow_plugin(void);
/* Tells the core provider instance which providers bodies are given to
 * (the session's whole list, itself included, in order). */
void control_flow_bind(provider_inst *core, provider_inst *const *provs, size_t n_provs, const plan_rules *rules);

/* --- internal to runtime/cf_*.c ---------------------------------------- */
typedef struct cf_state {
    provider_inst *const *provs;
    size_t n_provs;
    const plan_rules *rules; /* the session's; lives as long as it */
} cf_state;

typedef struct cf_piece {
    const cf_state *env;
    const struct tsr_graph *view; /* the piece: one node, its inputs (outer reads too) */
    const ir_node *node;
    size_t n_plans;
    graph_plan plans[2]; /* If: then, else; others: body */
    /* Each body's planned arena: its intermediates placed in one block,
     * planned on its first run with given input shapes and reused by every
     * later iteration and run (NULL: allocated one by one). */
    struct arena_plans *arenas[2];
} cf_piece;

struct tsr_run_context;
tsr_status *cf_run_if(cf_piece *p, struct tsr_run_context *ctx);
tsr_status *cf_run_loop(cf_piece *p, struct tsr_run_context *ctx);
tsr_status *cf_run_scan(cf_piece *p, struct tsr_run_context *ctx);
tsr_status *cf_run_sequence_map(cf_piece *p, struct tsr_run_context *ctx);

/* Helpers shared by the runners (runtime/cf_util.c). */
/* Runs body k (p->plans[k]) with the hooks of the run that runs p (NULL:
 * none), its pieces named under "NODE/ATTRIBUTE/" in profiles. */
tsr_status *cf_run_body(const cf_piece *p, size_t k, const exec_hooks *hooks, const rt_tensor *ins,
                        const outer_scope *os, bool to_host, struct run_budget *budget, rt_tensor *outs);
/* The enclosing scope a body sees: the piece's inputs, as slots. */
tsr_status *cf_outer_scope(const cf_piece *p, const struct tsr_run_context *ctx, rt_tensor **slots, outer_scope *out);
/* Node input i as a slot view (nothing when omitted). */
void cf_node_input(const cf_piece *p, const struct tsr_run_context *ctx, size_t i, rt_tensor *out);
/* Index of node output i among the piece's outputs, or SIZE_MAX when unused. */
size_t cf_output_index(const cf_piece *p, size_t i);
/* Moves `src` into the piece output for node output i (or drops it). */
void cf_set_output(const cf_piece *p, struct tsr_run_context *ctx, size_t i, rt_tensor *src);
/* Releases n slots (t may be NULL). */
void cf_release_all(rt_tensor *t, size_t n);
/* A slot owning host tensor t. */
void cf_hold(rt_tensor *slot, ir_tensor *t);
/* Reads a scalar bool or integer tensor. */
tsr_status *cf_scalar_i64(const rt_tensor *t, const char *what, int64_t *out);
/* Slice `index` of t along `axis`, as a new host tensor of rank-1. */
tsr_status *cf_slice(const tsr_tensor *t, int32_t axis, int64_t index, ir_tensor **out);
/* Stacks n equal-shaped tensors along a new axis `axis`, in reverse order
 * when `reverse`. With n == 0 makes an empty tensor of elem_type whose
 * shape is `empty_dims` (rank empty_rank). */
tsr_status *cf_stack(const rt_tensor *parts, size_t n, int32_t axis, bool reverse, int32_t elem_type,
                     int32_t empty_rank, const int64_t *empty_dims, ir_tensor **out);

/* Per-iteration scan outputs, collected then stacked (runtime/cf_if_loop.c). */
typedef struct scan_acc {
    rt_tensor *items;
    size_t n, cap;
} scan_acc;
/* Moves t into the accumulator. */
tsr_status *cf_acc_push(scan_acc *a, rt_tensor *t);
/* Frees n accumulators and the array. */
void cf_acc_free(scan_acc *a, size_t n);
/* Stacks accumulator k into node output first_out + k, along axes[k]
 * (NULL: 0), reversed where dirs[k] (NULL: none). */
tsr_status *cf_emit_scans(cf_piece *p, struct tsr_run_context *ctx, scan_acc *acc, size_t k_count, size_t first_out,
                          const int64_t *axes, const int64_t *dirs);
/* Moves final loop-carried values to node outputs 0..n-1 (copying borrowed ones). */
tsr_status *cf_emit_carried(cf_piece *p, struct tsr_run_context *ctx, rt_tensor *carried, size_t n);

#endif
