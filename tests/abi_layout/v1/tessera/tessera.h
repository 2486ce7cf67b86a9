/*
 * Tessera application API.
 *
 * Every function returns a `tsr_status *`: NULL on success, otherwise an error
 * the caller owns and frees with tsr_status_free. Out-parameters are written
 * only on success. Compiles as C99 and as C++.
 *
 * Typical use:
 *   tsr_session_options *o; tsr_session_options_create(&o);
 *   tsr_session_options_add_provider(o, "onednn");
 *   tsr_session_options_add_provider(o, "reference");
 *   tsr_session *s; tsr_session_create(o, "model.onnx", &s);
 *   tsr_session_options_free(o);
 *   ... tsr_session_run(s, ...) ...
 *   tsr_session_free(s);
 *
 * Threads:
 * - Sessions are independent: calls on different sessions may run at once
 *   from any threads, including session creation and freeing.
 * - tsr_session_run and tsr_session_run_values on one session may be called
 *   from many threads at once; that session's runs then happen one at a
 *   time, in the order the calls take its lock, each with its own inputs and
 *   outputs (a run is never affected by another's shapes). For runs in
 *   parallel, give each thread a session of its own.
 * - The session's other calls (node info, assignment reports, profile) may
 *   come from any thread during runs; they wait for the run in progress.
 * - tsr_session_free must not race with any other call on that session.
 * - Options objects and values are not locked: one thread at a time each.
 * - The log level is the session's own: lines a provider logs from the
 *   thread that called into the session follow it; lines from threads
 *   outside any session call (a provider's worker threads) are logged at
 *   TSR_LOG_WARNING and above.
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_VERSION_MAJOR 0
#define TESSERA_VERSION_MINOR 1
#define TESSERA_VERSION_PATCH 0

/* "0.1.0"; static. */
TSR_EXPORT const char *tsr_version(void);

/* --- statuses ------------------------------------------------------------ */
TSR_EXPORT void tsr_status_free(tsr_status *status); /* NULL is fine */
/* Borrowed; lives as long as `status`. "" for NULL. */
TSR_EXPORT const char *tsr_status_message(const tsr_status *status);
TSR_EXPORT tsr_code tsr_status_code(const tsr_status *status); /* TSR_OK for NULL */

/* --- element types ------------------------------------------------------- */
/* "float", "int64", ...; static. "undefined" for unknown numbers. */
TSR_EXPORT const char *tsr_elem_type_name(int32_t elem_type);
/* Bits per element (4 for int4, 128 for complex128); 0 for strings/unknown. */
TSR_EXPORT size_t tsr_elem_type_bits(int32_t elem_type);

/* --- providers ----------------------------------------------------------- */
/* Plugins found on the search path: the directory beside libtessera.so, its
 * tessera/providers subdirectory (where an install puts them), then each
 * directory of TESSERA_PROVIDER_PATH (colon-separated). */
typedef struct tsr_provider_list tsr_provider_list;

typedef struct tsr_provider_desc {
    uint32_t struct_size;
    const char *name; /* borrowed from the list */
    const char *vendor;
    const char *version;
    const char *path;     /* the plugin file */
    uint32_t abi_version; /* negotiated */
    size_t device_count;
    const char *error; /* non-NULL when the plugin failed to load; why */
} tsr_provider_desc;

typedef struct tsr_device_desc {
    uint32_t struct_size;
    const char *name; /* borrowed from the list */
    const char *vendor;
    const char *details; /* may be NULL */
    int32_t kind;        /* 0 cpu, 1 gpu, 2 accelerator, 3 other */
    int32_t memory_kind; /* tsr_memory_kind */
    uint64_t memory_bytes;
} tsr_device_desc;

/* Loads every plugin found (and those in `extra_paths`, files or
 * directories, may be NULL) to describe them. The caller frees the list. */
TSR_EXPORT tsr_status *tsr_providers_discover(const char *const *extra_paths, size_t extra_count,
                                              tsr_provider_list **out);
TSR_EXPORT size_t tsr_provider_list_size(const tsr_provider_list *list);
/* Fills *out (set out->struct_size first) with borrowed strings that live
 * as long as the list. */
TSR_EXPORT tsr_status *tsr_provider_list_get(const tsr_provider_list *list, size_t index, tsr_provider_desc *out);
TSR_EXPORT tsr_status *tsr_provider_list_device(const tsr_provider_list *list, size_t index, size_t device,
                                                tsr_device_desc *out);
TSR_EXPORT void tsr_provider_list_free(tsr_provider_list *list);

/* --- session options ----------------------------------------------------- */
typedef struct tsr_session_options tsr_session_options;

TSR_EXPORT tsr_status *tsr_session_options_create(tsr_session_options **out);
TSR_EXPORT void tsr_session_options_free(tsr_session_options *options);
/* Appends a provider, by name ("reference") or by path to a .so, to the
 * ordered list; earlier providers are asked first. With no provider added,
 * every plugin found is used, accelerated ones first and reference last.
 * `name_or_path` is copied. */
TSR_EXPORT tsr_status *tsr_session_options_add_provider(tsr_session_options *options, const char *name_or_path);
/* A key=value option for the named provider; copied. Unknown keys are
 * refused by the provider when the session is created. */
TSR_EXPORT tsr_status *tsr_session_options_set_provider_option(tsr_session_options *options, const char *provider,
                                                               const char *key, const char *value);
/* Threads per operator; 0 lets each provider choose. */
TSR_EXPORT tsr_status *tsr_session_options_set_threads(tsr_session_options *options, int32_t intra_op_threads);
/* Where log lines go: stderr by default, at TSR_LOG_WARNING. */
TSR_EXPORT tsr_status *tsr_session_options_set_log_level(tsr_session_options *options, int32_t level);
/* Fixes a symbolic dimension (e.g. "batch") to a value before planning. */
TSR_EXPORT tsr_status *tsr_session_options_set_dim(tsr_session_options *options, const char *symbol, int64_t value);

/* --- values -------------------------------------------------------------- */
/* A value the library owns: a tensor, or a sequence, optional or map of
 * values (tsr_value is declared in types.h). */

/* A copy of `tensor` (host memory) as a new value the caller owns. */
TSR_EXPORT tsr_status *tsr_value_from_tensor(const tsr_tensor *tensor, tsr_value **out);
/* A new tensor of the given type and shape, zero-filled; caller owns it. */
TSR_EXPORT tsr_status *tsr_value_create_tensor(int32_t elem_type, int32_t rank, const int64_t *dims, tsr_value **out);
/* Parses a serialized ONNX TensorProto. `name` (may be NULL) receives its
 * name, malloc'd, which the caller frees with free(). */
TSR_EXPORT tsr_status *tsr_value_from_onnx_tensor(const void *bytes, size_t size, tsr_value **out, char **name);
/* Serializes a tensor value as a TensorProto with `name`; *bytes is
 * malloc'd and the caller frees it with free(). */
TSR_EXPORT tsr_status *tsr_value_to_onnx_tensor(const tsr_value *value, const char *name, void **bytes, size_t *size);
/* A borrowed view of the tensor; valid while the value lives. For
 * TSR_STRING, data points to tsr_string elements. */
TSR_EXPORT tsr_status *tsr_value_tensor(const tsr_value *value, tsr_tensor *out);
/* Sets string element `index` of a string tensor value (bytes copied). */
TSR_EXPORT tsr_status *tsr_value_set_string(tsr_value *value, size_t index, const char *data, size_t size);
TSR_EXPORT void tsr_value_free(tsr_value *value); /* NULL is fine */

/* tsr_value_kind of a value (TSR_VALUE_NONE for NULL). */
TSR_EXPORT int32_t tsr_value_get_kind(const tsr_value *value);
/* Items of a sequence; 0 or 1 for an optional; 2 for a map (keys, values). */
TSR_EXPORT size_t tsr_value_count(const tsr_value *value);
/* Item `index` of a sequence, the contents of an optional (index 0), or for
 * a map the key tensor (0) and the value sequence (1). Borrowed: lives as
 * long as `value`. NULL when out of range. */
TSR_EXPORT const tsr_value *tsr_value_item(const tsr_value *value, size_t index);
/* The element type of a sequence's or optional's tensors (which an empty
 * one still has), or of a tensor value; 0 when unknown. */
TSR_EXPORT int32_t tsr_value_elem_type(const tsr_value *value);
/* A new empty sequence whose items will be tensors of `elem_type` (0 when
 * unknown); caller owns it. */
TSR_EXPORT tsr_status *tsr_value_create_sequence(int32_t elem_type, tsr_value **out);
/* Appends `item` to a sequence, taking ownership of it (also on failure). */
TSR_EXPORT tsr_status *tsr_value_sequence_append(tsr_value *sequence, tsr_value *item);
/* A new optional holding `contents` (ownership taken, also on failure) or,
 * when contents is NULL, none with element type `elem_type`. */
TSR_EXPORT tsr_status *tsr_value_create_optional(tsr_value *contents, int32_t elem_type, tsr_value **out);
/* A deep copy; caller owns it. */
TSR_EXPORT tsr_status *tsr_value_clone(const tsr_value *value, tsr_value **out);
/* Parses a serialized ONNX TensorProto, SequenceProto, OptionalProto or
 * MapProto, as `kind` (a tsr_value_kind) says: the bytes do not tell them
 * apart. `name` as for tsr_value_from_onnx_tensor. */
TSR_EXPORT tsr_status *tsr_value_from_onnx(const void *bytes, size_t size, int32_t kind, tsr_value **out, char **name);

/* --- sessions ------------------------------------------------------------ */
typedef struct tsr_session tsr_session;

/* `options` may be NULL (defaults) and may be freed after the call. */
TSR_EXPORT tsr_status *tsr_session_create(const tsr_session_options *options, const char *path, tsr_session **out);
/* The model bytes are read during the call only. External data, if any, is
 * resolved against `base_dir` (may be NULL: then it is refused). */
TSR_EXPORT tsr_status *tsr_session_create_from_buffer(const tsr_session_options *options, const void *bytes,
                                                      size_t size, const char *base_dir, tsr_session **out);
TSR_EXPORT void tsr_session_free(tsr_session *session); /* NULL is fine */

/* A graph input or output as declared by the model. */
typedef struct tsr_io_info {
    uint32_t struct_size;
    const char *name;               /* borrowed; lives as long as the session */
    int32_t elem_type;              /* 0 when not a tensor or unknown */
    int32_t rank;                   /* -1 when unknown */
    const int64_t *dims;            /* rank entries, TSR_DIM_UNKNOWN where symbolic */
    const char *const *dim_symbols; /* rank entries, NULL where not symbolic */
    /* appended in 0.2 (read only when struct_size covers it): */
    int32_t kind; /* tsr_value_kind the model declares; TSR_VALUE_NONE when unknown */
} tsr_io_info;

TSR_EXPORT size_t tsr_session_input_count(const tsr_session *session);
TSR_EXPORT size_t tsr_session_output_count(const tsr_session *session);
/* Fill *out (set out->struct_size first). */
TSR_EXPORT tsr_status *tsr_session_input_info(const tsr_session *session, size_t index, tsr_io_info *out);
TSR_EXPORT tsr_status *tsr_session_output_info(const tsr_session *session, size_t index, tsr_io_info *out);

/*
 * Runs the model. inputs[i] (host memory, borrowed for the call, not copied)
 * feeds the graph input named input_names[i]. outputs[j] receives a new value
 * for output_names[j], which the caller frees with tsr_value_free; pass
 * output_names = NULL to get every graph output in declaration order (then
 * `outputs` must have tsr_session_output_count entries).
 */
TSR_EXPORT tsr_status *tsr_session_run(tsr_session *session, size_t input_count, const char *const *input_names,
                                       const tsr_tensor *const *inputs, size_t output_count,
                                       const char *const *output_names, tsr_value **outputs);

/* As tsr_session_run, with inputs given as values of any kind (tensors,
 * sequences, optionals, maps), borrowed for the call. */
TSR_EXPORT tsr_status *tsr_session_run_values(tsr_session *session, size_t input_count, const char *const *input_names,
                                              const tsr_value *const *inputs, size_t output_count,
                                              const char *const *output_names, tsr_value **outputs);

/* Pins nodes to a provider (both strings are copied): every node named
 * `node_or_op` (or made from it by function expansion) and every node whose op type is `node_or_op` goes
 * to `provider` (a name in the session's list) and to no other. Session
 * creation fails when nothing in the model matches, or when that provider
 * declines a pinned node (the error carries its reason). Repeatable; a rule
 * naming a node wins over one naming its op type. */
TSR_EXPORT tsr_status *tsr_session_options_assign(tsr_session_options *options, const char *node_or_op,
                                                  const char *provider);

/* --- observing, profiling, and who runs what ------------------------------ */
/* When enabled, every node output stays observable: it becomes a piece
 * boundary (a fused piece must produce it too, or is split there) and
 * tsr_session_run's output_names may name it. Slower; meant for comparing
 * providers node by node. */
TSR_EXPORT tsr_status *tsr_session_options_set_observe_all(tsr_session_options *options, int32_t enabled);
/* When enabled, each run records one event per piece run and per copy. */
TSR_EXPORT tsr_status *tsr_session_options_set_profiling(tsr_session_options *options, int32_t enabled);
/* The events recorded since the session began or the last call, as a JSON
 * array of Chrome trace events ("ph":"X", "ts"/"dur" in microseconds; args:
 * provider, device, nodes, ops, bytes_in, bytes_out for pieces; value,
 * from, to, bytes for copies). *json is malloc'd; the caller frees it. */
TSR_EXPORT tsr_status *tsr_session_profile_take(tsr_session *session, char **json);

/* One node of the session's main graph and where it runs. */
typedef struct tsr_node_info {
    uint32_t struct_size;
    const char *name; /* "" when the model gave none */
    const char *op_type;
    const char *domain;   /* "" for ai.onnx */
    const char *origin;   /* the model's node it was expanded from, or NULL */
    const char *provider; /* name of the provider that runs it */
    size_t piece;         /* index of its piece in run order */
    size_t output_count;
    const char *const *outputs; /* output value names, "" where omitted */
} tsr_node_info;
/* All strings and arrays are borrowed and live as long as the session. */
TSR_EXPORT size_t tsr_session_node_count(const tsr_session *session);
/* Node `index` in topological order; set out->struct_size first. */
TSR_EXPORT tsr_status *tsr_session_node_info(const tsr_session *session, size_t index, tsr_node_info *out);

/* Which provider runs which node: a human-readable table, malloc'd; the
 * caller frees it with free(). */
TSR_EXPORT tsr_status *tsr_session_assignment_text(const tsr_session *session, char **out);

/* --- placement policy ---------------------------------------------------- */
/* How a node that several providers can run is placed. */
typedef enum tsr_policy {
    /* The first provider in the list that claims it. A cheap node (shape
     * arithmetic, small elementwise) whose neighbours are in a device's
     * memory still goes to a provider there when one can run it, rather
     * than cost two copies. */
    TSR_POLICY_ORDER = 0,
    /* The least estimated time: providers' cost estimates (claim_piece's
     * cost_seconds) plus the copies a placement causes between memories;
     * the list order breaks ties. */
    TSR_POLICY_COST = 1,
    /* The first provider in the list that claims it, whatever the copies:
     * for testing a provider on every node it claims. */
    TSR_POLICY_FIRST = 2
} tsr_policy;
TSR_EXPORT tsr_status *tsr_session_options_set_policy(tsr_session_options *options, int32_t policy);
/* A provider that runs only the nodes no other provider claims, named as in
 * tsr_session_options_add_provider (copied; NULL or "" for none). It is added
 * to the list if absent and asked last; a warning names the nodes it got.
 * Without one, a node nobody claims fails session creation with every
 * provider's reason. */
TSR_EXPORT tsr_status *tsr_session_options_set_fallback(tsr_session_options *options, const char *provider);

/* --- assignment as data --- */
/* The assignment of tsr_session_assignment_text as one JSON object (schema:
 * docs/partition.schema.json): "providers" (name, version, devices),
 * "pieces" (id, provider, nodes, ops, inputs, outputs), "copies" (tensor,
 * bytes or null, from_piece and to_piece, null for the host side),
 * "expanded" (function ops replaced by their bodies), "declined" (node, op,
 * provider, reason) and "totals". UTF-8; names are escaped. *out is
 * malloc'd; the caller frees it with free(). */
TSR_EXPORT tsr_status *tsr_session_assignment_json(const tsr_session *session, char **out);
/* The same as a Graphviz digraph (DOT): one cluster per piece labelled with
 * its id and provider, nodes filled with their provider's colour and
 * labelled name and op, a legend, data edges, copies between memories as
 * dashed red edges labelled with tensor and bytes, graph inputs and outputs
 * as host boxes. *out is malloc'd; the caller frees it with free(). */
TSR_EXPORT tsr_status *tsr_session_assignment_dot(const tsr_session *session, char **out);

/* --- resource limits (appended after 0.2) --- */
/* Sets resource limit `name` (borrowed: read during the call only) to
 * `value` (> 0). A run that would exceed a
 * limit fails with TSR_ERR_NO_MEMORY and a message naming the limit, the
 * size asked for and the node asking, instead of being killed for memory.
 *   "tensor_bytes"  the largest tensor a run may allocate, in host or
 *                   device memory (default 16 GiB)
 *   "working_bytes" the tensors one run holds at once, all together, in
 *                   host or device memory: kernel outputs and scratch,
 *                   copies between memories, If/Loop/Scan/SequenceMap
 *                   bodies and results; outputs count until the run
 *                   returns (default 64 GiB)
 * The next five are checked when the session is created; exceeding one
 * fails tsr_session_create (and _from_buffer) with the code given, and a
 * message naming the limit, its value, the size found and where:
 *   "model_bytes"   the model file, by its size before it is read, or the
 *                   buffer given (default 4 GiB; TSR_ERR_NO_MEMORY)
 *   "external_bytes" the external data read, all tensors and files
 *                   together (default 64 GiB; TSR_ERR_NO_MEMORY)
 *   "graph_depth"   subgraph nesting, If/Loop/Scan bodies inside bodies;
 *                   checked on the raw bytes before they are decoded
 *                   (default 64, at most 256; TSR_ERR_INVALID_MODEL)
 *   "function_nodes" the nodes expanding function ops may make, all graphs
 *                   together (default 1000000; TSR_ERR_NO_MEMORY)
 *   "function_depth" function ops found in the bodies of expanded ones,
 *                   level after level: functions calling functions
 *                   (default 64, at most 1024; TSR_ERR_INVALID_MODEL)
 * graph_depth or function_depth above its most: TSR_ERR_INVALID_ARGUMENT.
 * An unknown name or a value <= 0 is TSR_ERR_INVALID_ARGUMENT. */
TSR_EXPORT tsr_status *tsr_session_options_set_limit(tsr_session_options *options, const char *name, int64_t value);

#ifdef __cplusplus
}
#endif
#endif
