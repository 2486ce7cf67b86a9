/* The slots of the host API (tsr_host_api) that read the IR through the
 * opaque handles: graph views, nodes, values, attributes, and the static
 * estimates offered to providers. Each is named host_<slot>; the table that
 * plugins receive is assembled in runtime/host_api.c. */
#ifndef TESSERA_CORE_GRAPH_API_H
#define TESSERA_CORE_GRAPH_API_H

#include "tessera/provider.h"

size_t host_graph_node_count(const tsr_graph *g);
const tsr_node *host_graph_node(const tsr_graph *g, size_t i);
size_t host_graph_input_count(const tsr_graph *g);
const tsr_value_info *host_graph_input(const tsr_graph *g, size_t i);
size_t host_graph_output_count(const tsr_graph *g);
const tsr_value_info *host_graph_output(const tsr_graph *g, size_t i);
tsr_status *host_graph_to_onnx(const tsr_graph *g, void **bytes, size_t *size);
int32_t host_graph_device(const tsr_graph *g);

const char *host_node_name(const tsr_node *n);
const char *host_node_op_type(const tsr_node *n);
const char *host_node_domain(const tsr_node *n);
int64_t host_node_opset(const tsr_node *n);
size_t host_node_input_count(const tsr_node *n);
const tsr_value_info *host_node_input(const tsr_node *n, size_t i);
size_t host_node_output_count(const tsr_node *n);
const tsr_value_info *host_node_output(const tsr_node *n, size_t i);
size_t host_node_attr_count(const tsr_node *n);
const tsr_attr *host_node_attr(const tsr_node *n, size_t i);
const tsr_attr *host_node_attr_find(const tsr_node *n, const char *name);
double host_node_flops(const tsr_node *n);

const char *host_value_name(const tsr_value_info *v);
int32_t host_value_elem_type(const tsr_value_info *v);
int32_t host_value_rank(const tsr_value_info *v);
int64_t host_value_dim(const tsr_value_info *v, int32_t axis);
const char *host_value_dim_symbol(const tsr_value_info *v, int32_t axis);
const tsr_tensor *host_value_constant(const tsr_value_info *v);

const char *host_attr_name(const tsr_attr *a);
int32_t host_attr_type(const tsr_attr *a);
int64_t host_attr_int(const tsr_attr *a);
float host_attr_float(const tsr_attr *a);
const char *host_attr_string(const tsr_attr *a, size_t *size);
size_t host_attr_list_size(const tsr_attr *a);
const int64_t *host_attr_ints(const tsr_attr *a);
const float *host_attr_floats(const tsr_attr *a);
const char *host_attr_strings_at(const tsr_attr *a, size_t i, size_t *size);
const tsr_tensor *host_attr_tensor(const tsr_attr *a);
const tsr_tensor *host_attr_tensors_at(const tsr_attr *a, size_t i);
/* A subgraph attribute as a whole-graph view, made on first use and kept
 * with the graph (ir.c frees it). */
const tsr_graph *host_attr_graph(const tsr_attr *a);
const tsr_graph *host_attr_graphs_at(const tsr_attr *a, size_t i);

#endif
