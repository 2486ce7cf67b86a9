/*
 * `tessera compare`: declarations shared by cmd_compare.c and its helpers
 * (compare_*.c). Prefix cmpx_ keeps them apart from compare.c's cmp_, which
 * `tessera test` uses: that one answers "do these match?", these measure by
 * how much they differ.
 */
#ifndef TESSERA_TOOLS_COMPARE_TOOL_H
#define TESSERA_TOOLS_COMPARE_TOOL_H

#include "cli.h"

/* --- the model's own nodes (compare_model.c) ------------------------------ */
/* One node of the model file's main graph, as written there: the names a
 * user knows, whatever fusion or function expansion the session does. */
typedef struct cmpx_node {
    char *name;    /* "" when the model gave none */
    char *op_type;
    char *domain;  /* "" for ai.onnx */
    char **inputs; /* "" where an optional input is omitted */
    size_t input_count;
    char **outputs;
    size_t output_count;
    size_t raw_offset, raw_size; /* the NodeProto's bytes in the file */
} cmpx_node;

/* Where a message lies in the model file, to copy it verbatim. */
typedef struct cmpx_span {
    size_t offset, size;
    char *name; /* initializers: the tensor's name; else NULL */
} cmpx_span;

typedef struct cmpx_model {
    cmpx_node *nodes; /* in file order, which ONNX requires to be topological */
    size_t node_count;
    uint64_t ir_version;
    cmpx_span *opsets; /* ModelProto.opset_import entries */
    size_t opset_count;
    cmpx_span *initializers; /* GraphProto.initializer entries */
    size_t initializer_count;
} cmpx_model;

/* Reads the node list of the ModelProto in `path` (a small protobuf reader of
 * its own: the public API shows the session's nodes, not the file's inputs).
 * On failure writes a reason into err and returns false. */
bool cmpx_model_load(const char *path, cmpx_model *out, char *err, size_t err_size);
void cmpx_model_free(cmpx_model *m);

/* --- error figures (compare_stats.c) ------------------------------------- */
typedef struct cmpx_stats {
    bool comparable;        /* false: kind, type or shape differ (see why) */
    char why[256];
    size_t count;           /* scalar components compared */
    size_t mismatches;      /* components over tolerance */
    size_t nonfinite_mismatches; /* of those, NaN/Inf on one side only (or different infinities) */
    double max_abs;         /* over pairs of finite numbers */
    double max_rel;         /* |a-b| / |baseline|, over finite pairs with baseline != 0 */
    bool has_worst;         /* a worst element exists (count > 0) */
    size_t worst_index;     /* flat component index */
    char baseline_value[64], value[64]; /* the worst element, as text */
    bool numeric;           /* the worst element as numbers too: */
    double baseline_number, number;
} cmpx_stats;

/* Measures `got` against `baseline` with the same rule as cmp_tensors. The
 * worst element is the one furthest over its allowance (atol + rtol*|base|);
 * a NaN/Inf mismatch counts as infinitely far. */
void cmpx_measure(const tsr_value *baseline, const tsr_value *got, cmp_tolerance tol,
                  cmpx_stats *out);
/* True when the figures are within tolerance. */
bool cmpx_agrees(const cmpx_stats *s);
/* Merges `s` into `acc` (max of maxima, sum of counts); for a node with
 * several outputs. */
void cmpx_stats_merge(cmpx_stats *acc, const cmpx_stats *s);

/* --- against the float64 oracle (compare_accuracy.c) --------------------- */
typedef struct cmpx_accuracy {
    bool valid;      /* false: not a float tensor of the oracle's type and shape */
    size_t count;    /* pairs of finite numbers measured */
    double max_abs, max_rel, mean_abs;
    /* distance in units in the last place of the value's type, over the
     * finite pairs: median, 99th percentile, largest */
    double ulp_p50, ulp_p99, ulp_max;
} cmpx_accuracy;

void cmpx_accuracy_measure(const tsr_value *oracle, const tsr_value *got, cmpx_accuracy *out);
/* "vs oracle: max_abs ... mean_abs ... ulp p50 .. p99 .. max .." */
void cmpx_print_accuracy_text(const cmpx_accuracy *acc);
/* {"max_abs", "max_rel", "mean_abs", "ulp_p50", "ulp_p99", "ulp_max", "count"} or null. */
void cmpx_print_accuracy_json(const cmpx_accuracy *acc);

/* --- node by node (compare_nodes.c) ------------------------------------- */
/* The intermediate values both runs produced, by name, with their figures. */
typedef struct cmpx_observed {
    size_t count;
    const char *const *names;
    const cmpx_stats *stats; /* count entries, parallel to names */
} cmpx_observed;

#define CMPX_LISTED 8

typedef struct cmpx_divergence {
    bool found;             /* some node's outputs are over tolerance */
    size_t node;            /* the one reported: index into the model's nodes */
    const char *output;     /* its output with the most mismatches (borrowed) */
    cmpx_stats stats;       /* over all its observed outputs */
    bool inputs_differed;   /* one of its inputs was already over tolerance */
    bool inputs_unobserved; /* an input made by another node was not observed */
    double inputs_max_abs;  /* largest |diff| among its observed inputs */
    size_t compared;        /* nodes with at least one observed output */
    size_t divergent;       /* of those, over tolerance */
    size_t introducing;     /* of those, with inputs all observed and within tolerance */
    size_t listed[CMPX_LISTED]; /* the first introducing nodes (model indices) */
    size_t listed_count;
    /* The first node whose outputs differ at all (even within tolerance)
     * while its inputs are identical: where differences start. */
    bool has_earliest;
    size_t earliest;
    double earliest_max_abs;
} cmpx_divergence;

/* Walks the model's nodes in order and reports the first one whose outputs
 * are over tolerance while its inputs were observed within tolerance (the
 * node that introduced the divergence); failing that, the first divergent
 * node, flagged as having inherited or unobserved inputs. */
void cmpx_find_divergence(const cmpx_model *m, const cmpx_observed *obs, cmpx_divergence *out);

/* A display name for model node `i`: its name, or "#i OP (-> first output)"
 * when it has none. */
void cmpx_node_label(const cmpx_model *m, size_t i, char *buf, size_t size);

/* --- one node alone (compare_isolate.c) --------------------------------- */
/* The value named `name` (a graph input or an observed node output), or
 * NULL; borrowed. */
typedef const tsr_value *(*cmpx_value_lookup)(void *user, const char *name);

/* Runs model node `node` alone in a new session made with `options`, fed
 * the values `find` returns for its inputs (initializers come from the
 * file). outputs[k] receives node output k (NULL where it was not fetched);
 * the caller frees them. On failure writes why into err. */
bool cmpx_isolate(const char *model_path, const cmpx_model *m, size_t node,
                  const tsr_session_options *options, cmpx_value_lookup find, void *user,
                  tsr_value **outputs, char *err, size_t err_size);

/* --- reporting (compare_report.c) --------------------------------------- */
/* What running the divergent node alone showed (cmd_compare.c's isolate). */
typedef struct cmpx_isolation {
    bool tried, ran;
    cmpx_stats stats; /* the node alone vs the baseline's observed outputs */
    char error[512];  /* why it could not run */
} cmpx_isolation;

/* "max_abs ... max_rel ... over tolerance N of M  worst [i]: a vs b". */
void cmpx_print_stats_text(const cmpx_stats *s);
/* {"name", "max_abs", "max_rel", "mismatches", ..., "agree"}. */
void cmpx_print_stats_json(const char *name, const cmpx_stats *s);
/* The --per-node findings of one run; `provider` ran the node in the
 * compared set, `baseline_provider` in the baseline. */
void cmpx_print_divergence_text(const cmpx_model *m, const cmpx_divergence *d,
                                const cmpx_isolation *iso, const char *provider,
                                const char *baseline_provider);
void cmpx_print_divergence_json(const cmpx_model *m, const cmpx_divergence *d,
                                const cmpx_isolation *iso, const char *provider,
                                const char *baseline_provider);
/* {"name", "op", "max_abs"} of where differences start, or null. */
void cmpx_print_start_json(const cmpx_model *m, const cmpx_divergence *d);

/* --- inputs (compare_inputs.c) ------------------------------------------- */
typedef struct cmpx_input_spec {
    char *name; /* NULL: take the name stored in the file */
    const char *file;
} cmpx_input_spec;

typedef struct cmpx_inputs {
    size_t count;
    const char **names;   /* owned (malloc'd) */
    tsr_value **values;
    tsr_tensor *views;
    const tsr_tensor **tensors;
} cmpx_inputs;

/* Loads the given inputs and generates the rest as `tessera run` does (the
 * same seed, so the same data). Errors are printed. */
bool cmpx_inputs_make(tsr_session *s, const char *model, const cmpx_input_spec *given,
                      size_t given_count, const cli_common *common, cmpx_inputs *out);
void cmpx_inputs_free(cmpx_inputs *in);

/* --- JSON text ----------------------------------------------------------- */
/* Prints `s` as a JSON string literal, escaped. */
void cmpx_json_string(FILE *f, const char *s);
/* Prints a double as JSON (null for NaN/Inf, which JSON cannot hold). */
void cmpx_json_number(FILE *f, double v);

#endif
