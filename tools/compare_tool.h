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
struct cmpx_body;

/* One node of the model file's main graph (or of a control-flow body), as
 * written there: the names a user knows, whatever fusion or function
 * expansion the session does. */
typedef struct cmpx_node {
    char *name; /* "" when the model gave none */
    char *op_type;
    char *domain;  /* "" for ai.onnx */
    char **inputs; /* "" where an optional input is omitted */
    size_t input_count;
    char **outputs;
    size_t output_count;
    size_t raw_offset, raw_size; /* the NodeProto's bytes in the file */
    /* Graph attributes named then_branch, else_branch or body, in file
     * order (the bodies of If, Loop, Scan, SequenceMap). */
    struct cmpx_body *bodies;
    size_t body_count;
    int64_t num_scan_inputs; /* Scan's attribute; 0 when absent */
} cmpx_node;

/* A control-flow body: a subgraph attribute of a node. */
typedef struct cmpx_body {
    char *attribute; /* then_branch, else_branch or body */
    cmpx_node *nodes;
    size_t node_count;
    char **inputs; /* GraphProto.input names, in order */
    size_t input_count;
    char **outputs; /* GraphProto.output names, in order */
    size_t output_count;
    char **initializers; /* names of the body's own initializers */
    size_t initializer_count;
} cmpx_body;

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
 * its own: the file's nodes as written, bodies included, and where their
 * bytes lie; compare_model.c says why the public API does not do).
 * On failure writes a reason into err and returns false. */
bool cmpx_model_load(const char *path, cmpx_model *out, char *err, size_t err_size);
void cmpx_model_free(cmpx_model *m);
/* A display name for main-graph node `i`: its name, or "#i OP (-> first
 * output)" when it has none. */
void cmpx_node_label(const cmpx_model *m, size_t i, char *buf, size_t size);

/* --- error figures (compare_stats.c) ------------------------------------- */
typedef struct cmpx_stats {
    bool comparable; /* false: kind, type or shape differ (see why) */
    char why[256];
    size_t count;                       /* scalar components compared */
    size_t mismatches;                  /* components over tolerance */
    size_t nonfinite_mismatches;        /* of those, NaN/Inf on one side only (or different infinities) */
    double max_abs;                     /* over pairs of finite numbers */
    double max_rel;                     /* |a-b| / |baseline|, over finite pairs with baseline != 0 */
    bool has_worst;                     /* a worst element exists (count > 0) */
    size_t worst_index;                 /* flat component index */
    char baseline_value[64], value[64]; /* the worst element, as text */
    bool numeric;                       /* the worst element as numbers too: */
    double baseline_number, number;
} cmpx_stats;

/* Measures `got` against `baseline` with the same rule as cmp_tensors. The
 * worst element is the one furthest over its allowance (atol + rtol*|base|);
 * a NaN/Inf mismatch counts as infinitely far. */
void cmpx_measure(const tsr_value *baseline, const tsr_value *got, cmp_tolerance tol, cmpx_stats *out);
/* True when the figures are within tolerance. */
bool cmpx_agrees(const cmpx_stats *s);
/* Merges `s` into `acc` (max of maxima, sum of counts); for a node with
 * several outputs. */
void cmpx_stats_merge(cmpx_stats *acc, const cmpx_stats *s);

/* --- against the float64 oracle (compare_accuracy.c) --------------------- */
typedef struct cmpx_accuracy {
    bool valid;   /* false: not a float tensor of the oracle's type and shape */
    size_t count; /* pairs of finite numbers measured */
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

/* --- nodes inside control-flow bodies (compare_sites.c) ------------------ */
/* Bodies nested deeper than this are not walked. */
#define CMPX_MAX_DEPTH 16

/* A node the comparison walks: in the main graph or inside a body. */
typedef struct cmpx_site {
    const cmpx_node *node;
    char *prefix;          /* "" in the main graph, else its body's path,
                            * "NODE/ATTRIBUTE/" (nested ones appended), as
                            * the library names bodies */
    size_t index;          /* its position in its graph */
    size_t parent;         /* the site of the node holding its body, or SIZE_MAX */
    const cmpx_body *body; /* that body, or NULL */
    size_t depth;          /* bodies around it */
} cmpx_site;

typedef struct cmpx_sites {
    cmpx_site *items; /* file order, each body's nodes before the node holding it */
    size_t count;
    const cmpx_model *model; /* borrowed */
} cmpx_sites;

bool cmpx_is_control_flow(const cmpx_node *n); /* If, Loop, Scan, SequenceMap */
bool cmpx_sites_build(const cmpx_model *m, cmpx_sites *out);
void cmpx_sites_free(cmpx_sites *s);
/* A display name for site `i`: prefix + its name, or prefix + "#i OP (->
 * first output)" when it has none. */
void cmpx_site_label(const cmpx_sites *s, size_t i, char *buf, size_t size);
/* Where in the loops a run of site `site` was: "iteration 3 of loop0" (one
 * phrase per enclosing Loop/Scan, "item N of" for SequenceMap, innermost
 * first); "" when every enclosing body is an If branch. */
void cmpx_chain_text(const cmpx_sites *s, size_t site, const size_t *chain, size_t depth, char *buf, size_t size);

/* --- one value over the runs of its body (compare_series.c) --------------- */
typedef struct cmpx_series {
    size_t depth;           /* levels of bodies; 0: a main-graph value, one item */
    size_t count;           /* items, in run order */
    size_t *chains;         /* count x depth: each item's index per level, outermost first */
    cmpx_stats *stats;      /* count */
    const tsr_value **base; /* count: the baseline's item (borrowed; NULL where the runs part) */
} cmpx_series;

/* Pairs the items of two values nested `depth` levels deep (sequences of
 * the body's runs) and measures each; a level where the body ran a
 * different number of times adds one item that is not comparable. */
bool cmpx_series_measure(const tsr_value *base, const tsr_value *got, size_t depth, cmp_tolerance tol,
                         cmpx_series *out);
void cmpx_series_free(cmpx_series *s);
/* The item at `chain` (depth entries), or SIZE_MAX. */
size_t cmpx_series_find(const cmpx_series *s, const size_t *chain);

/* --- node by node (compare_nodes.c) ------------------------------------- */
/* The intermediate values both runs produced, by name (body values by path,
 * "loop0/body/VALUE"), each with its figures per run of its body. */
typedef struct cmpx_observed {
    size_t count;
    const char *const *names;
    const cmpx_series *series; /* count entries, parallel to names */
} cmpx_observed;

#define CMPX_LISTED 8

typedef struct cmpx_divergence {
    bool found;                   /* some node's outputs are over tolerance */
    size_t node;                  /* the one reported: index into the sites */
    size_t chain[CMPX_MAX_DEPTH]; /* the run of its body where it diverged first */
    const char *output;           /* its output with the most mismatches (borrowed) */
    cmpx_stats stats;             /* over all its observed outputs, in that run */
    bool inputs_differed;         /* one of its inputs was already over tolerance */
    bool inputs_unobserved;       /* an input made by another node was not observed */
    double inputs_max_abs;        /* largest |diff| among its observed inputs */
    size_t compared;              /* nodes with at least one observed output */
    size_t divergent;             /* of those, over tolerance */
    size_t introducing;           /* of those, with inputs all observed and within tolerance */
    size_t listed[CMPX_LISTED];   /* the first introducing nodes (site indices) */
    size_t listed_count;
    /* The first node whose outputs differ at all (even within tolerance)
     * while its inputs are identical: where differences start. */
    bool has_earliest;
    size_t earliest;
    size_t earliest_chain[CMPX_MAX_DEPTH];
    double earliest_max_abs;
} cmpx_divergence;

/* Walks the sites in order and reports the first one whose outputs are over
 * tolerance while its inputs were observed within tolerance (the node that
 * introduced the divergence); failing that, the first divergent node,
 * flagged as having inherited or unobserved inputs. A body node is judged
 * run by run: at the first run of its body where its outputs go over
 * tolerance, against its inputs in that same run (loop-carried inputs are
 * the previous run's outputs, or the loop's inputs in the first). A node
 * holding a body in which some node diverges does not itself introduce. */
void cmpx_find_divergence(const cmpx_sites *sites, const cmpx_observed *obs, cmpx_divergence *out);

/* The baseline's value `name` as site `site` read it in the run `chain`
 * of its body (borrowed), or NULL. *graph_name then receives the name of
 * the main graph's input or initializer it is (a loop's first iteration
 * reads the loop's inputs under the body's names), which the caller has,
 * or NULL when it was not observed whole (a scanned slice, an iteration
 * number, a value no session handed back). */
const tsr_value *cmpx_baseline_input(const cmpx_sites *sites, const cmpx_observed *obs, size_t site,
                                     const size_t *chain, const char *name, const char **graph_name);

/* --- one node alone (compare_isolate.c) --------------------------------- */
/* The value named `name` (a graph input or an observed node output), or
 * NULL; borrowed. */
typedef const tsr_value *(*cmpx_value_lookup)(void *user, const char *name);

/* Runs node `n` of the model alone in a new session made with `options`,
 * fed the values `find` returns for its inputs (initializers of the main
 * graph come from the file). outputs[k] receives node output k (NULL where
 * it was not fetched); the caller frees them. On failure writes why into
 * err. */
bool cmpx_isolate(const char *model_path, const cmpx_model *m, const cmpx_node *n, const tsr_session_options *options,
                  cmpx_value_lookup find, void *user, tsr_value **outputs, char *err, size_t err_size);

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
void cmpx_print_divergence_text(const cmpx_sites *m, const cmpx_divergence *d, const cmpx_isolation *iso,
                                const char *provider, const char *baseline_provider);
void cmpx_print_divergence_json(const cmpx_sites *m, const cmpx_divergence *d, const cmpx_isolation *iso,
                                const char *provider, const char *baseline_provider);
/* {"name", "op", "iteration", "max_abs"} of where differences start, or null. */
void cmpx_print_start_json(const cmpx_sites *m, const cmpx_divergence *d);

/* --- inputs (compare_inputs.c) ------------------------------------------- */
typedef struct cmpx_input_spec {
    char *name; /* NULL: take the name stored in the file */
    const char *file;
} cmpx_input_spec;

typedef struct cmpx_inputs {
    size_t count;
    const char **names; /* owned (malloc'd) */
    tsr_value **values;
    tsr_tensor *views;
    const tsr_tensor **tensors;
} cmpx_inputs;

/* Loads the given inputs and generates the rest as `tessera run` does (the
 * same seed, so the same data). Errors are printed. */
bool cmpx_inputs_make(tsr_session *s, const char *model, const cmpx_input_spec *given, size_t given_count,
                      const cli_common *common, cmpx_inputs *out);
void cmpx_inputs_free(cmpx_inputs *in);

/* --- JSON text ----------------------------------------------------------- */
/* Prints `s` as a JSON string literal, escaped. */
void cmpx_json_string(FILE *f, const char *s);
/* Prints a double as JSON (null for NaN/Inf, which JSON cannot hold). */
void cmpx_json_number(FILE *f, double v);

#endif
