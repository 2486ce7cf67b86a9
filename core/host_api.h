/* The host side of the provider ABI: the function table plugins call, and
 * the concrete structs behind its opaque handles. tsr_node is ir_node,
 * tsr_value_info is ir_value, tsr_attr is ir_attr; tsr_graph is a view. */
#ifndef TESSERA_CORE_HOST_API_H
#define TESSERA_CORE_HOST_API_H

#include "ir.h"
#include "rt_tensor.h"
#include "tessera/provider.h"

struct tsr_graph {
    ir_graph *ir;
    size_t n_nodes;
    ir_node **nodes;
    size_t n_inputs;
    ir_value **inputs;
    size_t n_outputs;
    ir_value **outputs;
    int32_t device; /* a piece's: the provider's device it was claimed on */
};

const tsr_host_api *host_api_table(void);

/* A view of all of g (nodes, declared inputs and outputs). */
tsr_status *host_graph_view_whole(ir_graph *g, struct tsr_graph **out);
/* A view of the given nodes, with inputs (values read from outside, each
 * once) and outputs (values used outside: by other nodes of g's node list
 * not in the set, by g's outputs, or by subgraphs). Arrays are copied. */
tsr_status *host_graph_view_nodes(ir_graph *g, ir_node *const *nodes, size_t n,
                                  struct tsr_graph **out);
void host_graph_view_free(struct tsr_graph *v);
/* How many nodes of g read each value (a node's subgraphs count once), and
 * scratch kept zeroed between uses: built once, it makes each
 * host_graph_view_nodes_counted O(set) instead of O(graph). Valid while g
 * does not change. */
typedef struct graph_readers {
    const ir_graph *g;
    uint32_t *total;  /* by value index */
    uint32_t *inside; /* scratch, by value index */
    bool *in_set;     /* scratch, by node index */
    bool *seen;       /* scratch, by value index */
} graph_readers;
tsr_status *graph_readers_new(const ir_graph *g, graph_readers **out);
void graph_readers_free(graph_readers *r);
/* host_graph_view_nodes with the readers counted once for g. */
tsr_status *host_graph_view_nodes_counted(graph_readers *r, ir_node *const *nodes, size_t n,
                                          struct tsr_graph **out);

typedef struct claim_entry {
    ir_node **nodes;
    size_t n;
    double cost;
    int32_t device; /* of the claiming provider */
} claim_entry;

typedef struct decline_entry {
    ir_node *node;
    int32_t reason;
    char *text;
} decline_entry;

struct tsr_claim_sink {
    const struct tsr_graph *offered; /* the nodes a claim may name */
    claim_entry *claims;
    size_t n_claims;
    decline_entry *declines;
    size_t n_declines;
    /* The offered nodes sorted by address (claim_check.c): built on the
     * first claim, so a handle is checked in O(log n) without reading
     * through it. */
    const struct ir_node **offered_sorted;
    size_t n_devices; /* the claiming provider's: claim_piece_on checks against it */
};

void claim_sink_clear(struct tsr_claim_sink *s);
/* True when `node` (any pointer) is one of the offered nodes. */
bool claim_offered(struct tsr_claim_sink *s, const void *node);
/* NULL when `nodes` may be claimed: offered nodes, none twice. part[i]
 * (count entries) gets the connected part of nodes[i], numbered from 0 in
 * the order parts are first named; *n_parts their number. */
tsr_status *claim_check(struct tsr_claim_sink *s, const tsr_node *const *nodes, size_t count, size_t *part,
                        size_t *n_parts);

struct tsr_run_context {
    size_t n_inputs;
    const tsr_tensor *const *inputs; /* NULL entries allowed */
    size_t n_outputs;
    rt_tensor *outputs;              /* n_outputs slots, filled by run_alloc_output */
    provider_inst *prov;             /* whose memory outputs go to */
    rt_tensor **scratch;             /* one allocation each: a kernel keeps pointers */
    size_t n_scratch;                /* to earlier ones while it allocates more */
    const tsr_value *const *in_values; /* n_inputs entries or NULL: non-tensor inputs */
    tsr_value **wrappers;              /* lazily made TENSOR views for run_input_value */
    uint64_t max_tensor_bytes;         /* 0: no limit */
    struct run_budget *budget;         /* the run's "working_bytes"; NULL: not counted */
    int32_t device;                    /* the piece's device: where outputs go */
    const struct exec_hooks *hooks;    /* the run's, for control-flow bodies; may be NULL */
    uint64_t charged;                  /* provider memory counted by run_charge, given back at the end */
};

/* Frees scratch tensors and value wrappers a run made. */
void run_context_end(struct tsr_run_context *ctx);

/* Log sink used by the host and plugins: lines at or below the level of
 * the session the calling thread works for. */
void host_log(int32_t level, const char *who, const char *message);
/* Makes `level` this thread's log level until host_log_leave(returned). */
int32_t host_log_enter(int32_t level);
void host_log_leave(int32_t outer);
/* Sets the run tag log lines of this thread carry (NULL: none); returns the
 * one before, to give back when the call ends. */
const char *host_log_tag_enter(const char *tag);
/* The application's log sink for this thread's session call (fn NULL:
 * stderr); returns the one before, to give back when the call ends. */
typedef struct host_logger {
    tsr_log_fn fn;
    void *user;
} host_logger;
host_logger host_logger_enter(host_logger logger);

#endif
