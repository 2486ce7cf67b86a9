/* Views of a graph as providers see it: struct tsr_graph, the concrete
 * struct behind the ABI's opaque tsr_graph handle (tsr_node is ir_node,
 * tsr_value_info is ir_value, tsr_attr is ir_attr), made of a whole graph
 * or of a set of its nodes (graph_view.c). */
#ifndef TESSERA_CORE_GRAPH_VIEW_H
#define TESSERA_CORE_GRAPH_VIEW_H

#include "ir.h"
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
    /* a piece handed to a provider's compile: only those may release
     * constants (a claim's offer lives on the stack) */
    bool compiled_piece;
    /* constants this piece released (constant_release), each counted once */
    const ir_value **released;
    size_t n_released;
};

/* A view of all of g (nodes, declared inputs and outputs). */
tsr_status *graph_view_whole(ir_graph *g, struct tsr_graph **out);
/* A view of the given nodes, with inputs (values read from outside, each
 * once) and outputs (values used outside: by other nodes of g's node list
 * not in the set, by g's outputs, or by subgraphs). Arrays are copied. */
tsr_status *graph_view_nodes(ir_graph *g, ir_node *const *nodes, size_t n, struct tsr_graph **out);
void graph_view_free(struct tsr_graph *v);
/* What `claim` is offered: the nodes given (borrowed), g's declared inputs
 * and outputs; a value on the caller's stack, freed with it. */
struct tsr_graph graph_view_offer(ir_graph *g, ir_node **nodes, size_t n);
/* How many nodes of g read each value (a node's subgraphs count once), and
 * scratch kept zeroed between uses: built once, it makes each
 * graph_view_nodes_counted O(set) instead of O(graph). Valid while g
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
/* graph_view_nodes with the readers counted once for g. */
tsr_status *graph_view_nodes_counted(graph_readers *r, ir_node *const *nodes, size_t n, struct tsr_graph **out);

#endif
