/*
 * `tessera reduce`: declarations shared by cmd_reduce.c and its helpers
 * (reduce_*.c). Prefix rdc_. The command cuts candidate subgraphs out of a
 * model file (reduce_model.c), runs each on two provider sets in forked
 * children (reduce_jobs.c) and searches for the smallest one that still
 * shows the difference or the failure (cmd_reduce.c).
 */
#ifndef TESSERA_TOOLS_REDUCE_TOOL_H
#define TESSERA_TOOLS_REDUCE_TOOL_H

#include "compare_tool.h"

/* --- names to indices (reduce_model.c) ----------------------------------- */
/* An open-addressing table from borrowed strings to indices. */
typedef struct rdc_map {
    const char **keys;
    size_t *vals;
    size_t cap, count;
} rdc_map;

bool rdc_map_put(rdc_map *m, const char *key, size_t val); /* keeps the first */
bool rdc_map_get(const rdc_map *m, const char *key, size_t *val);
void rdc_map_free(rdc_map *m);

/* --- captured baseline values -------------------------------------------- */
/* A value the baseline computed on the whole model, saved as a TensorProto
 * file in the work folder by the capture job. */
typedef struct rdc_value {
    char *name;
    int32_t elem_type, rank;
    int64_t *dims;
    char *file;
} rdc_value;

typedef struct rdc_capture {
    rdc_value *values;
    size_t count;
    char **outputs; /* the model's graph outputs */
    size_t output_count;
} rdc_capture;

void rdc_capture_free(rdc_capture *c);
/* Reads the manifest the capture job wrote into `dir`; false with a reason. */
bool rdc_capture_read(const char *dir, rdc_capture *c, char *err, size_t err_size);

/* --- the model, ready for cutting ----------------------------------------- */
typedef struct rdc_graph {
    const char *path;
    char *base_dir; /* the model's folder, for external data */
    cmpx_model m;   /* nodes, initializers, opsets (compare_model.c) */
    uint8_t *file;  /* the file's bytes */
    size_t file_size;
    cmpx_span *functions; /* ModelProto.functions: copied whole */
    size_t function_count;
    cmpx_span *sparse; /* GraphProto.sparse_initializer, named */
    size_t sparse_count;
    rdc_map sparse_names; /* name -> index into sparse */
    /* Per node: the values it reads, its own inputs and then those its
     * subgraphs (If, Loop, Scan bodies) read from outside (implicit). */
    const char ***ins;
    size_t *in_count;
    char ***implicit;
    size_t *implicit_count;
    /* Per node, per entry of ins: the producing node, or SIZE_MAX. */
    size_t **producer;
    /* Per node, per output: the consuming nodes (may repeat). */
    size_t ***consumers;
    size_t **consumer_count;
    rdc_map initializers; /* name -> index into m.initializers */
    rdc_map captured;     /* name -> index into capture.values */
    bool *is_output;      /* per node output, flattened via out_base */
    size_t *out_base;     /* node -> first index in is_output */
    rdc_capture capture;
} rdc_graph;

/* Loads the file and indexes it (the capture comes later). */
bool rdc_graph_load(const char *path, rdc_graph *g, char *err, size_t err_size);
/* Indexes the capture and the graph outputs it lists; takes ownership. */
bool rdc_graph_set_capture(rdc_graph *g, rdc_capture *c, char *err, size_t err_size);
void rdc_graph_free(rdc_graph *g);

/* A candidate cut out of the model: the nodes where keep[i], in file order. */
typedef struct rdc_cut {
    uint8_t *model; /* a ModelProto */
    size_t model_size;
    size_t *inputs; /* graph inputs of the cut, as capture indices, in order */
    size_t input_count;
    char **outputs; /* its graph outputs' names (borrowed from the model) */
    size_t output_count;
    size_t node_count;
    bool *kept; /* per model node: in the cut (the nodes asked for, plus the
                 * makers of values the baseline did not capture) */
} rdc_cut;

/* Builds the cut of the nodes where keep[i] (and the makers of values they
 * read that the baseline did not capture); false with a reason when it
 * cannot be fed (a graph input the baseline did not capture) or has no
 * output. Its outputs are the values it makes that leave it (read by a node
 * outside, a graph output, or read by none); with RDC_CUT_SINKS_ONLY, only
 * those that no kept node reads. With RDC_CUT_INLINE_EXTERNAL, initializers
 * held as external data carry their bytes inline (a case folder stands
 * alone); otherwise they are copied verbatim and resolved against the
 * model's folder. */
enum { RDC_CUT_SINKS_ONLY = 1, RDC_CUT_INLINE_EXTERNAL = 2 };
bool rdc_cut_build(const rdc_graph *g, const bool *keep, unsigned flags, rdc_cut *out, char *err, size_t err_size);
void rdc_cut_free(rdc_cut *c);

/* --- running candidates in children (reduce_jobs.c) ---------------------- */
typedef enum rdc_mode { RDC_DIFFERENCE, RDC_ERROR } rdc_mode;

typedef struct rdc_set {
    char *list; /* as given */
    char **entries;
    size_t entry_count;
    bool oracle; /* --oracle: reference with precision=double */
} rdc_set;

typedef struct rdc_config {
    const char *model;
    rdc_set sets[2]; /* baseline, compared */
    cli_common common;
    cli_inputs_args inputs; /* -i, --fill, --case, as `tessera run` takes them */
    cmp_tolerance tol;
    rdc_mode mode;
    const char *error_text; /* --error-contains: the suspect's error must hold it */
    double timeout;
    const char *work_dir;
    bool verbose;
} rdc_config;

/* What a candidate showed. */
typedef enum rdc_verdict {
    RDC_REPRODUCES = 'R', /* the difference, or the failure, is there */
    RDC_CLEAN = 'N',      /* both sets agree, or the compared set runs */
    RDC_INFEASIBLE = 'X'  /* the baseline cannot run it, or it cannot be cut */
} rdc_verdict;

typedef struct rdc_result {
    rdc_verdict verdict;
    char detail[1024]; /* what differed, or the error, or why not */
} rdc_result;

/* Runs the baseline on the whole model with every value observable and
 * saves its inputs and node outputs into cfg->work_dir (a child does it). */
bool rdc_capture_run(const rdc_config *cfg, const rdc_graph *g, char *err, size_t err_size);
/* Runs a cut on both sets (children) and says what it showed. With
 * `case_dir`, the baseline's outputs go to case_dir/test_data_set_0. */
void rdc_try(const rdc_config *cfg, const rdc_graph *g, const rdc_cut *cut, const char *case_dir, rdc_result *out);

/* --- the summary as JSON (reduce_report.c) -------------------------------- */
/* What a reduction did, for --json. */
typedef struct rdc_summary {
    const char *model;  /* as given on the command line */
    const char *result; /* "reduced", "not_shown" (the whole model does not
                         * show it) or "error" (see `error`) */
    const char *error;  /* result "error": why, when known */
    const char *whole;  /* what the whole model showed, or NULL */
    const rdc_cut *cut; /* the case written, or NULL */
    const char *case_dir;
    bool case_shows;          /* the last run of the written case showed it */
    const char *final_detail; /* what that run saw */
    size_t tries;             /* candidates tried, the whole model included */
    bool gave_up;             /* step 4 stopped at --max-tries */
    double seconds;           /* wall time, capture and search included */
    char check[2][2048];      /* the `tessera test` lines for the case: passes, fails */
} rdc_summary;

/* Prints one JSON object on stdout (docs/compare.md, "--json"). `g` may
 * hold no model (node_count 0) when loading it failed. */
void rdc_print_json(const rdc_config *cfg, const rdc_graph *g, const rdc_summary *s);

/* The subcommand (cmd_reduce.c); tessera.c declares it too. */
int cmd_reduce(int argc, char **argv);

#endif
