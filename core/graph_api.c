/* The host API's read side: plugins see the IR only through these
 * accessors over opaque handles, so Tessera's IR can change without
 * breaking a shipped plugin. Out-of-range indices answer NULL rather than
 * trusting the plugin. */
#include "graph_api.h"

#include <string.h>

#include "cost.h"
#include "graph_view.h"
#include "onnx_writer.h"

/* --- graph views ---------------------------------------------------------- */
#define G(x) ((const struct tsr_graph *)(x))
size_t host_graph_node_count(const tsr_graph *g) { return G(g)->n_nodes; }
const tsr_node *host_graph_node(const tsr_graph *g, size_t i) {
    return i < G(g)->n_nodes ? (const tsr_node *)G(g)->nodes[i] : NULL;
}
size_t host_graph_input_count(const tsr_graph *g) { return G(g)->n_inputs; }
const tsr_value_info *host_graph_input(const tsr_graph *g, size_t i) {
    return i < G(g)->n_inputs ? (const tsr_value_info *)G(g)->inputs[i] : NULL;
}
size_t host_graph_output_count(const tsr_graph *g) { return G(g)->n_outputs; }
const tsr_value_info *host_graph_output(const tsr_graph *g, size_t i) {
    return i < G(g)->n_outputs ? (const tsr_value_info *)G(g)->outputs[i] : NULL;
}
tsr_status *host_graph_to_onnx(const tsr_graph *g, void **bytes, size_t *size) {
    return onnx_write_view(G(g), bytes, size);
}

/* --- nodes ---------------------------------------------------------------- */
#define N(x) ((const ir_node *)(x))
const char *host_node_name(const tsr_node *n) { return N(n)->name ? N(n)->name : ""; }
const char *host_node_op_type(const tsr_node *n) { return N(n)->op_type; }
const char *host_node_domain(const tsr_node *n) { return N(n)->domain ? N(n)->domain : ""; }
int64_t host_node_opset(const tsr_node *n) { return N(n)->opset; }
size_t host_node_input_count(const tsr_node *n) { return N(n)->n_inputs; }
const tsr_value_info *host_node_input(const tsr_node *n, size_t i) {
    return i < N(n)->n_inputs ? (const tsr_value_info *)N(n)->inputs[i] : NULL;
}
size_t host_node_output_count(const tsr_node *n) { return N(n)->n_outputs; }
const tsr_value_info *host_node_output(const tsr_node *n, size_t i) {
    return i < N(n)->n_outputs ? (const tsr_value_info *)N(n)->outputs[i] : NULL;
}
size_t host_node_attr_count(const tsr_node *n) { return N(n)->n_attrs; }
const tsr_attr *host_node_attr(const tsr_node *n, size_t i) {
    return i < N(n)->n_attrs ? (const tsr_attr *)&N(n)->attrs[i] : NULL;
}
const tsr_attr *host_node_attr_find(const tsr_node *n, const char *name) {
    return (const tsr_attr *)ir_node_attr(N(n), name);
}

/* --- values --------------------------------------------------------------- */
#define V(x) ((const ir_value *)(x))
/* Outer-scope placeholders answer with the value they stand for. */
static const ir_value *v_real(const tsr_value_info *v) {
    const ir_value *r = V(v);
    while (r && r->is_outer && r->outer) r = r->outer;
    return r;
}
const char *host_value_name(const tsr_value_info *v) { return V(v)->name; }
int32_t host_value_elem_type(const tsr_value_info *v) {
    const ir_value *r = v_real(v);
    return r->type.kind == IR_TYPE_TENSOR ? r->type.elem_type : 0;
}
int32_t host_value_rank(const tsr_value_info *v) {
    const ir_value *r = v_real(v);
    return r->type.kind == IR_TYPE_TENSOR ? r->type.rank : -1;
}
int64_t host_value_dim(const tsr_value_info *v, int32_t axis) {
    const ir_value *r = v_real(v);
    if (r->type.kind != IR_TYPE_TENSOR || axis < 0 || axis >= r->type.rank) return TSR_DIM_UNKNOWN;
    return r->type.dims[axis].value;
}
const char *host_value_dim_symbol(const tsr_value_info *v, int32_t axis) {
    const ir_value *r = v_real(v);
    if (r->type.kind != IR_TYPE_TENSOR || axis < 0 || axis >= r->type.rank) return NULL;
    return r->type.dims[axis].symbol;
}
const tsr_tensor *host_value_constant(const tsr_value_info *v) {
    const ir_value *r = v_real(v);
    return r->constant ? &r->constant->view : NULL;
}

/* --- attributes ----------------------------------------------------------- */
#define A(x) ((const ir_attr *)(x))
const char *host_attr_name(const tsr_attr *a) { return A(a)->name; }
int32_t host_attr_type(const tsr_attr *a) { return A(a)->type; }
int64_t host_attr_int(const tsr_attr *a) { return A(a)->i; }
float host_attr_float(const tsr_attr *a) { return A(a)->f; }
const char *host_attr_string(const tsr_attr *a, size_t *size) {
    if (size) *size = A(a)->s ? A(a)->s_len : 0;
    return A(a)->s ? A(a)->s : "";
}
size_t host_attr_list_size(const tsr_attr *a) { return A(a)->count; }
const int64_t *host_attr_ints(const tsr_attr *a) { return A(a)->ints; }
const float *host_attr_floats(const tsr_attr *a) { return A(a)->floats; }
const char *host_attr_strings_at(const tsr_attr *a, size_t i, size_t *size) {
    if (!A(a)->strings || i >= A(a)->count) {
        if (size) *size = 0;
        return NULL;
    }
    if (size) *size = A(a)->string_lens ? A(a)->string_lens[i] : strlen(A(a)->strings[i]);
    return A(a)->strings[i];
}
const tsr_tensor *host_attr_tensor(const tsr_attr *a) { return A(a)->t ? &A(a)->t->view : NULL; }
const tsr_tensor *host_attr_tensors_at(const tsr_attr *a, size_t i) {
    return A(a)->tensors && i < A(a)->count && A(a)->tensors[i] ? &A(a)->tensors[i]->view : NULL;
}
static const tsr_graph *whole_view(ir_graph *g) {
    if (!g) return NULL;
    if (!g->view && graph_view_whole(g, &g->view)) return NULL;
    return (const tsr_graph *)g->view;
}
const tsr_graph *host_attr_graph(const tsr_attr *a) { return whole_view(A(a)->g); }
const tsr_graph *host_attr_graphs_at(const tsr_attr *a, size_t i) {
    return A(a)->graphs && i < A(a)->count ? whole_view(A(a)->graphs[i]) : NULL;
}

int32_t host_graph_device(const tsr_graph *g) { return g ? G(g)->device : 0; }
double host_node_flops(const tsr_node *n) { return n ? cost_node_flops(N(n)) : -1.0; }
