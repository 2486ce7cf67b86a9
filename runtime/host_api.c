/* The host API table given to every plugin (tsr_host_api): one const
 * table, assembled in the top layer because its slots come from all three
 * (the graph and run slots from core/, the claim sink from partitioner/),
 * passed down to plugin_load. The slots that only adapt an existing
 * function to the ABI's signature are here; the rest live with what they
 * act on. */
#include "host_api.h"

#include <stdlib.h>

#include "claim_sink.h"
#include "constant_release.h"
#include "graph_api.h"
#include "host_log.h"
#include "run_context.h"
#include "status.h"
#include "tessera/tessera.h"
#include "value.h"

/* --- statuses and memory -------------------------------------------------- */
static tsr_status *h_status_new(int32_t code, const char *message) {
    return tsr_error(code, "%s", message ? message : "(no message)");
}
static void h_status_free(tsr_status *s) { tsr_status_free(s); }
static const char *h_status_message(const tsr_status *s) { return tsr_status_message(s); }
static int32_t h_status_code(const tsr_status *s) { return (int32_t)tsr_status_code(s); }
static void *h_alloc(size_t n) { return malloc(n ? n : 1); }
static void h_free(void *p) { free(p); }

/* --- values (sequences, optionals, maps) --------------------------------- */
static int32_t h_val_kind(const tsr_value *v) { return tsr_value_get_kind(v); }
static size_t h_val_count(const tsr_value *v) { return tsr_value_count(v); }
static const tsr_value *h_val_item(const tsr_value *v, size_t i) { return tsr_value_item(v, i); }
static int32_t h_val_elem_type(const tsr_value *v) { return tsr_value_elem_type(v); }
static tsr_tensor *h_val_tensor(const tsr_value *v) { return (tsr_tensor *)value_tensor_view(v); }
static tsr_status *h_val_new_tensor(int32_t et, int32_t rank, const int64_t *dims, tsr_value **out) {
    return tsr_value_create_tensor(et, rank, dims, out);
}
static tsr_status *h_val_new_sequence(int32_t et, tsr_value **out) { return tsr_value_create_sequence(et, out); }
static tsr_status *h_val_new_optional(tsr_value *contents, int32_t et, tsr_value **out) {
    return tsr_value_create_optional(contents, et, out);
}
static tsr_status *h_val_append(tsr_value *seq, tsr_value *item) { return value_append(seq, item); }
static tsr_status *h_val_clone(const tsr_value *v, tsr_value **out) { return value_clone(v, out); }
static void h_val_free(tsr_value *v) { value_free(v); }

/* --- weights held in a provider's own form ------------------------------- */
static tsr_status *h_constant_release(const tsr_graph *piece, const tsr_value_info *value) {
    /* the host made both handles: a piece view and one of its IR's values */
    return constant_release((struct tsr_graph *)piece, (const ir_value *)value);
}

static const tsr_host_api host_table = {
    .struct_size = sizeof(tsr_host_api),
    .abi_version = TSR_PROVIDER_ABI_VERSION,
    .status_new = h_status_new,
    .status_free = h_status_free,
    .status_message = h_status_message,
    .status_code = h_status_code,
    .log = host_log,
    .alloc = h_alloc,
    .free = h_free,
    .graph_node_count = host_graph_node_count,
    .graph_node = host_graph_node,
    .graph_input_count = host_graph_input_count,
    .graph_input = host_graph_input,
    .graph_output_count = host_graph_output_count,
    .graph_output = host_graph_output,
    .graph_to_onnx = host_graph_to_onnx,
    .node_name = host_node_name,
    .node_op_type = host_node_op_type,
    .node_domain = host_node_domain,
    .node_opset = host_node_opset,
    .node_input_count = host_node_input_count,
    .node_input = host_node_input,
    .node_output_count = host_node_output_count,
    .node_output = host_node_output,
    .node_attr_count = host_node_attr_count,
    .node_attr = host_node_attr,
    .node_attr_find = host_node_attr_find,
    .value_name = host_value_name,
    .value_elem_type = host_value_elem_type,
    .value_rank = host_value_rank,
    .value_dim = host_value_dim,
    .value_dim_symbol = host_value_dim_symbol,
    .value_constant = host_value_constant,
    .attr_name = host_attr_name,
    .attr_type = host_attr_type,
    .attr_int = host_attr_int,
    .attr_float = host_attr_float,
    .attr_string = host_attr_string,
    .attr_list_size = host_attr_list_size,
    .attr_ints = host_attr_ints,
    .attr_floats = host_attr_floats,
    .attr_strings_at = host_attr_strings_at,
    .attr_tensor = host_attr_tensor,
    .attr_tensors_at = host_attr_tensors_at,
    .attr_graph = host_attr_graph,
    .attr_graphs_at = host_attr_graphs_at,
    .claim_piece = claim_sink_piece,
    .decline_node = claim_sink_decline,
    .run_input_count = host_run_input_count,
    .run_input = host_run_input,
    .run_output_count = host_run_output_count,
    .run_alloc_output = host_run_alloc_output,
    .tensor_set_string = host_tensor_set_string,
    .run_input_value = host_run_input_value,
    .run_set_output_value = host_run_set_output_value,
    .val_kind = h_val_kind,
    .val_count = h_val_count,
    .val_item = h_val_item,
    .val_elem_type = h_val_elem_type,
    .val_tensor = h_val_tensor,
    .val_new_tensor = h_val_new_tensor,
    .val_new_sequence = h_val_new_sequence,
    .val_new_optional = h_val_new_optional,
    .val_append = h_val_append,
    .val_clone = h_val_clone,
    .val_free = h_val_free,
    .node_flops = host_node_flops,
    .claim_piece_on = claim_sink_piece_on,
    .graph_device = host_graph_device,
    .run_should_stop = host_run_should_stop,
    .run_charge = host_run_charge,
    .constant_release = h_constant_release,
};

const tsr_host_api *host_api_table(void) { return &host_table; }
