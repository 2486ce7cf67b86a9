/* Sessions: a loaded model, its providers, its pieces and its run plan. */
#ifndef TESSERA_RUNTIME_SESSION_H
#define TESSERA_RUNTIME_SESSION_H

#include <pthread.h>

#include "ir.h"
#include "model_compose.h"
#include "graph_plan.h"
#include "host_log.h"
#include "partition.h"
#include "plugin.h"
#include "rt_tensor.h"
#include "tessera/tessera.h"
#include "value.h"

typedef struct provider_option {
    char *provider, *key, *value;
} provider_option;

typedef struct dim_setting {
    char *symbol;
    int64_t value;
} dim_setting;

/* The default "tensor_bytes" limit: 16 GiB. */
#define TSR_DEFAULT_MAX_TENSOR_BYTES ((uint64_t)16 << 30)
/* The default "working_bytes" limit: 64 GiB. */
#define TSR_DEFAULT_MAX_WORKING_BYTES ((uint64_t)64 << 30)
/* The default "fold_bytes" limit: 256 MiB. */
#define TSR_DEFAULT_MAX_FOLD_BYTES ((uint64_t)256 << 20)

struct tsr_session_options {
    char **providers;
    size_t n_providers;
    provider_option *options;
    size_t n_options;
    int32_t threads;
    int32_t log_level;
    dim_setting *dims;
    size_t n_dims;
    bool observe_all;
    bool profiling;
    provider_option *assigns; /* provider = provider name, key = node or op, value unused */
    size_t n_assigns;
    int32_t policy;             /* tsr_policy */
    char *fallback;             /* provider name, or NULL */
    uint64_t max_tensor_bytes;  /* limit "tensor_bytes" */
    uint64_t max_working_bytes; /* limit "working_bytes" */
    uint64_t max_fold_bytes;    /* limit "fold_bytes"; 1: nothing folded */
    ir_limits limits;           /* model_bytes, external_bytes, graph_depth, function_* */
    char *cache_dir;            /* compiled-piece cache, or NULL */
    tsr_log_fn logger;          /* NULL: stderr */
    void *logger_user;
    compose_spec stages; /* models chained after the first (runtime/session_stages.c) */
};

/* Runs the main graph's nodes whose inputs are all constants once, making
 * their outputs constants (each node's outputs at most `limit` bytes; nodes
 * `pinned` says yes to are kept); runtime/session_fold.c. Needs the
 * session's providers and rules; before the main graph is planned.
 * *folded (n_folded entries, caller-owned) lists what was folded, also
 * when an error is returned. */
tsr_status *session_fold_constants(tsr_session *s, uint64_t limit, bool (*pinned)(const ir_node *, void *), void *ctx,
                                   folded_node **folded, size_t *n_folded);
/* Sets o's limits to their defaults (runtime/session_limits.c). */
void session_options_init_limits(tsr_session_options *o);
/* The session's model: `first` (stage 0, loaded from `label`) chained with
 * o's stages (runtime/session_stages.c); *out is `first` itself when o has
 * none. Consumes `first`, also on failure. */
tsr_status *session_chain_stages(ir_model *first, const char *label, const tsr_session_options *o, ir_model **out);

struct tsr_session {
    /* Held by every public call that reads or changes the session's state
     * (a run re-infers the graph's types, plans, appends to the profile):
     * runs of one session happen one at a time (tessera.h, "Threads"). */
    pthread_mutex_t lock;
    int32_t log_level;  /* the session's, applied on the calling thread during its calls */
    host_logger logger; /* the options', likewise; fn NULL: stderr */
    ir_model *model;
    tsr_plugin **plugins;
    provider_inst **provs;
    size_t n_provs;
    graph_plan main; /* the main graph partitioned, compiled, planned */
    pin_rule *pins;  /* --assign rules resolved to provider indices */
    size_t n_pins;
    plan_rules rules; /* pins and placement policy, for every graph planned */
    char *cache_dir;  /* the options' compiled-piece cache directory, or NULL */
    /* "working_bytes": each run's budget (core/run_budget.h); what the last
     * run held at most, and what it still held at its end (0 unless a
     * charge was lost: tests check it). */
    uint64_t max_working_bytes;
    uint64_t working_peak, working_left;
    ir_value **inputs; /* graph inputs the caller feeds (not initializers) */
    size_t n_inputs;
    /* The input shapes types were last inferred for (elem type, rank, dims
     * per graph input), so a run with other shapes re-infers first. */
    int64_t *shape_sig;
    size_t shape_sig_len;
    bool profiling;
    char *profile; /* JSON events so far, comma-separated */
    size_t profile_len, profile_cap;
    size_t profile_dropped; /* events not kept once the buffer is full */
    double profile_epoch;   /* exec_now() at session creation */
    /* tsr_node_info, built on first use */
    const char ***node_outputs;
    const char ***node_inputs;
    size_t *node_piece;
    /* nodes tsr_session_node_find handed out, with their output and input names */
    const ir_node **found_nodes;
    const char ***found_outputs;
    const char ***found_inputs;
    size_t n_found;
    /* per-input/output dims and symbols for tsr_io_info */
    int64_t **io_dims;
    const char ***io_syms;
    /* graph inputs (not initializers) and outputs sorted by name, so a run
     * finds each named input in O(log n): 100,000 inputs were matched by
     * pairwise strcmp, 1 s a run */
    struct io_name *inputs_by_name, *outputs_by_name;
    /* Values its runs left in a provider's memory for the application
     * (tsr_io_binding, runtime/device_value.c), a list under `lock`: freeing
     * the session gives their memory back while its providers still live. */
    struct tsr_device_value *device_values;
    uint64_t device_value_serial; /* the last id handed out */
    /* Planned blocks for the main graph's host intermediates, one plan per
     * input-shape signature (runtime/arena_plan.h); NULL: each allocated
     * alone. Has its own lock. */
    struct arena_plans *arena;
};
typedef struct io_name {
    const char *name;
    size_t index; /* in the graph's inputs[] / outputs[] */
} io_name;
/* The position of `name` among g's inputs (outputs), or SIZE_MAX. */
size_t session_input_index(const tsr_session *s, const char *name);
size_t session_output_index(const tsr_session *s, const char *name);

/* Hooks for one run: profiling events and values asked for by name that
 * are not graph outputs (runtime/session_observe.c). */
typedef struct run_observer {
    tsr_session *s;
    struct run_budget *budget; /* copies of observed values count in it */
    size_t n_wanted;
    const ir_value *const *wanted; /* NULL entries: graph outputs */
    bool any_wanted;               /* some entry is not NULL */
    rt_tensor *got;                /* n_wanted slots */
    tsr_status *error;
    const char *tag; /* the run's tag (profile events carry it), or NULL */
    /* Values inside control-flow bodies asked for by path: n_wanted
     * entries (value NULL for the others); their slots in `got` hold
     * nested sequences (runtime/session_observe_body.c). */
    struct body_want *bodies;
    bool any_body_wanted;
} run_observer;
void run_observer_hooks(run_observer *ro, exec_hooks *out);
void session_observe_free(tsr_session *s);
/* The names of `n` values for tsr_node_info, "" where a value is NULL (an
 * omitted optional one): a malloc'd array of borrowed names, NULL when out
 * of memory. */
const char **session_value_names(ir_value *const *values, size_t n);
/* Fills out's members from `n` where out->struct_size covers them: all but
 * provider and piece. */
void session_node_info_fill(const ir_node *n, const char **outputs, const char **inputs, tsr_node_info *out);

/* A value made inside a control-flow body, asked for by path. */
typedef struct body_want {
    const ir_value *value; /* in its body's graph; NULL: not a body value */
    size_t depth;          /* bodies around it: 1 for a body of a main-graph node */
    char **prefixes;       /* depth entries, outermost first: each body's path
                            * "NODE/ATTRIBUTE/" as cf_run_body names it */
} body_want;
/* observe_all: marks every node output of g and of its bodies observed. */
void session_observe_every_value(ir_graph *g);
/* Resolves `path` (NODE/ATTRIBUTE/.../VALUE) to an observed body value; on
 * success `slot` holds the empty outermost sequence. out->value stays NULL
 * (and NULL is returned) when there is no such value. */
tsr_status *session_body_want(const tsr_session *s, const char *path, rt_tensor *slot, body_want *out);
void body_want_free(body_want *w);
/* exec_hooks.body_begin for a run_observer: a run of the body at `path`
 * starts, opening one more item in the values of bodies nested in it. */
void session_body_begin(void *user, const char *path);
/* A piece of a body finished: copies the asked-for values it made. */
void session_body_piece_done(run_observer *ro, const struct tsr_graph *v, const rt_tensor *slots);

/* Input/output descriptions for tsr_io_info (runtime/session_io.c). */
tsr_status *session_io_build(tsr_session *s);
void session_io_free(tsr_session *s);
/* Checks what `slot` holds against graph input v's declared kind, type and
 * shape; a tensor may be in device memory. */
tsr_status *session_check_input_slot(const ir_value *v, const rt_tensor *slot);
/* An owned result slot as a value the caller owns (consumes the slot). */
tsr_status *session_output_value(rt_tensor *o, tsr_value **out);
/* Re-infers types when the inputs in `bound` (one per graph input) have
 * other shapes than the last run's. */
tsr_status *session_reinfer_if_new_shapes(tsr_session *s, const rt_tensor *bound);
/* Frees the memory of every device value s's runs made that is still held
 * (runtime/device_value.c); the handles stay valid, to be freed. */
void session_device_values_orphan(tsr_session *s);

#endif
