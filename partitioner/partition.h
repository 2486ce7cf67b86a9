/* Splitting a graph into pieces, each run by one provider. */
#ifndef TESSERA_PARTITION_H
#define TESSERA_PARTITION_H

#include "claim_sink.h"
#include "function_expand.h"
#include "ir.h"
#include "plugin.h"

typedef struct piece {
    size_t prov_index;      /* into the session's provider list */
    struct tsr_graph *view; /* nodes, inputs, outputs (host-API view) */
    double cost;            /* provider's estimate, seconds; < 0 unknown */
    void *compiled;         /* provider's piece state after compile */
} piece;

typedef struct declined {
    ir_node *node;
    size_t prov_index;
    int32_t reason;
    char *text;
} declined;

/* A node that must not go to a provider (its piece failed to compile there). */
typedef struct exclusion {
    ir_node *node;
    size_t prov_index;
} exclusion;

/* How nodes several providers can run are placed. */
typedef enum placement_kind {
    PLACE_ORDER = 0, /* the first provider in the list that claims it; a cheap node
                      * (shape arithmetic, small elementwise) whose neighbours sit
                      * in another memory goes to a provider there when one can
                      * run it, instead of costing two copies */
    PLACE_COST = 1,  /* the least estimated time, copies between memories included */
    PLACE_FIRST = 2  /* the first provider that claims it, copies or not (testing a provider) */
} placement_kind;

typedef struct placement_policy {
    int32_t kind; /* placement_kind */
    /* A provider (index) that gets only the nodes no other provider claims,
     * or SIZE_MAX for none. */
    size_t fallback;
} placement_policy;

/* Order of the list (cheap nodes kept with their neighbours), no fallback. */
placement_policy placement_default(void);

/* A node computed once at session creation and removed, its outputs now
 * constants (runtime/session_fold.c): for the assignment report. */
typedef struct folded_node {
    char *node, *op;
    char *body; /* NODE/ATTRIBUTE path of the body that held it, or NULL */
    char **outputs; /* the values it made, now constants */
    size_t n_outputs;
} folded_node;
void folded_node_clear(folded_node *f);

typedef struct partition {
    piece *pieces; /* in an order that runs (topological over pieces) */
    size_t n_pieces;
    declined *declines;
    size_t n_declines;
    size_t declines_cap;
    /* (node, provider) -> 1 + position in declines: open addressing, so
     * keeping a decline is O(1), not O(declines) (a round of 500,000
     * unclaimed function ops took minutes; partition_declines.c) */
    size_t *decline_index;
    size_t decline_index_cap; /* a power of two, or 0 */
    expansion *expanded;      /* function ops replaced by their bodies, in order */
    size_t n_expanded;
    placement_policy policy; /* what placed the nodes */
    size_t n_moved;          /* nodes placed against list order (cost, copies saved) */
    folded_node *folded;     /* set by the session after partitioning; owned */
    size_t n_folded;
} partition;

/* Asks providers in order for claims over g's still-unassigned nodes and
 * builds pieces. A function op nobody claims whole is replaced in g by its
 * body (see function_expand.h), shapes are inferred again and the providers
 * asked again. A node nobody claims that is not a function op is an error
 * listing every provider's reason. */
tsr_status *partition_graph(ir_graph *g, provider_inst *const *provs, size_t n_provs, const exclusion *excl,
                            size_t n_excl, partition *out);
/* The same under a placement policy (partition_graph uses placement_default). */
tsr_status *partition_graph_policy(ir_graph *g, provider_inst *const *provs, size_t n_provs, const exclusion *excl,
                                   size_t n_excl, const placement_policy *policy, partition *out);
void partition_free(partition *p);

/* Moves the sink's declines (their texts) into out->declines under provider
 * `prov`, skipping a (node, provider) pair already there. */
tsr_status *partition_keep_declines(partition *out, struct tsr_claim_sink *sink, size_t prov);

/* How compiled piece `pc` runs, as its provider describes it
 * (piece_describe: kernels or library primitives, ';'-separated); NULL when
 * the provider says nothing or the piece is built at its first run. Valid
 * until the piece next runs. */
const char *partition_piece_impl(const piece *pc, const provider_inst *prov);

/* The bodies of a control-flow piece (If, Loop, Scan, SequenceMap: the core
 * runs them and partitions their bodies when it compiles), for the reports
 * to show nested under their node. */
typedef struct report_body {
    const char *attr; /* "then_branch", "else_branch", "body" */
    const ir_graph *g;
    const partition *part;
} report_body;
/* Fills up to `max` bodies of compiled piece pc; returns how many (0 for a
 * piece that is not control flow). The reports take NULL for "none known". */
typedef size_t (*report_bodies_fn)(const piece *pc, const provider_inst *prov, report_body *out, size_t max);
#define REPORT_MAX_BODIES 2

/* A readable table: piece, provider, node count, ops, first node, with the
 * pieces of control-flow bodies nested under their node ("loop_0/body");
 * then each piece's implementations, then declines. malloc'd. */
char *partition_text(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs,
                     report_bodies_fn bodies);
/* The same as JSON (docs/partition.schema.json): providers with devices,
 * pieces (a control-flow piece with its bodies' pieces as "subgraphs"),
 * copies, expansions, declines, totals. malloc'd; NULL when out of
 * memory. */
char *partition_json(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs,
                     report_bodies_fn bodies);
/* The same as a Graphviz digraph: one cluster per piece (a control-flow
 * piece's bodies as clusters inside it), nodes coloured by provider, copies as dashed red edges, host boxes, a legend. malloc'd;
 * NULL when out of memory. */
char *partition_dot(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs,
                    report_bodies_fn bodies);

#endif
