/*
 * Tessera provider ABI — what a plugin (.so) implements and what the host
 * offers it. A plugin includes only this header (and types.h, which it pulls
 * in); it never sees Tessera's internal structs, so Tessera's IR can change
 * without breaking a shipped plugin.
 *
 * How a plugin is loaded:
 *   1. The host dlopens the .so and looks up one symbol, TSR_PROVIDER_ENTRY
 *      ("tessera_provider_entry"), of type tsr_provider_entry_fn.
 *   2. It calls it with the range of ABI versions it speaks and its host API
 *      table. The plugin picks the highest version both speak, fills
 *      args->abi_version and args->provider, and returns NULL; or it returns
 *      a status saying why it refuses (e.g. it needs a newer host).
 *   3. The host reads a member of any plugin struct only when that struct's
 *      struct_size covers it (TSR_HAS_MEMBER), so a plugin built against an
 *      older header keeps working with a newer host.
 *
 * The model a provider answers to is the *piece*: one node or a connected set
 * of nodes that the provider claimed. A provider answers two questions —
 * "which nodes do you claim, and grouped how?" (claim) and "compile this piece"
 * (compile) — and runs compiled pieces (run).
 *
 * Rules for every function here:
 *   - A returned `tsr_status *` is NULL on success; otherwise the receiver owns
 *     it. Plugins make statuses with host->status_new and never abort, exit or
 *     print to stdout.
 *   - Strings passed in are NUL-terminated and borrowed: copy them to keep them.
 *   - Handles (tsr_graph, tsr_node, tsr_value_info, tsr_attr) are owned by the
 *     host. Those seen in `claim` live until claim returns; those seen in
 *     `compile` live until the piece is released.
 *
 * Devices: a provider lists its devices (device_count, device_info); every
 * device of one provider has the same memory_kind. A piece runs on the
 * device it was claimed on (claim_piece_on; graph_device tells compile),
 * tensors carry their device in tsr_tensor.device_index, and every memory
 * call names the device.
 *
 * Completion — written now so an asynchronous device needs no ABI 2:
 *   - `run`, `copy_to_device` and `copy_between_devices` may return before
 *     the device has finished, once the work is queued. Work queued on one
 *     device must execute in the order it was queued.
 *   - `copy_to_host` is the synchronisation point: it returns only when
 *     the bytes are in host memory, so after all earlier work on that
 *     device.
 *   - `copy_between_devices` must order itself after the work that wrote
 *     its source and before later work on its destination.
 *   - `mem_free` may come as soon as the host needs a buffer no more, with
 *     work that reads it still queued: the provider defers the release.
 *   - `synchronize(device)` (optional) waits for everything queued on the
 *     device; the host calls it before a tensor in device memory leaves a
 *     run or a session (none does today: results come back through
 *     copy_to_host).
 *   - A synchronous provider (every call complete on return) meets all of
 *     this trivially and leaves `synchronize` NULL.
 *
 * Threads — what a provider may assume and must allow:
 *   - The entry runs once per process while the plugin stays loaded, however
 *     many sessions use it (the host keeps one load per file and shares it).
 *   - `create`'s instance belongs to one session. The host calls one
 *     instance's functions (claim, compile, run, release, memory and copy
 *     calls) from one thread at a time, but not always the same thread.
 *   - Instances of different sessions are called concurrently, from
 *     different threads: whatever a provider shares between instances
 *     (process-wide caches, a device context, counters) it must lock.
 *   - A compiled piece's `run` is never called concurrently with itself or
 *     with another call on the same instance, so a piece may keep scratch
 *     memory between runs without locking.
 *   - A provider may start threads of its own (an OpenMP pool) during a
 *     call; they must be done with the call's tensors when it returns.
 *
 * Compiles as C99 and as C++.
 */
#ifndef TESSERA_PROVIDER_H
#define TESSERA_PROVIDER_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI versions this header describes. */
#define TSR_PROVIDER_ABI_VERSION 1
#define TSR_PROVIDER_ENTRY "tessera_provider_entry"

/* ------------------------------------------------------------------------ */
/* Opaque handles (host-owned; see lifetimes above).                         */

typedef struct tsr_graph tsr_graph;             /* a graph or a piece of one */
typedef struct tsr_node tsr_node;               /* one ONNX node */
typedef struct tsr_value_info tsr_value_info;   /* a named tensor edge */
typedef struct tsr_attr tsr_attr;               /* one node attribute */
typedef struct tsr_claim_sink tsr_claim_sink;   /* collects a claim's answers */
typedef struct tsr_run_context tsr_run_context; /* one run of one piece */

/* ONNX AttributeProto.AttributeType numbers. */
typedef enum tsr_attr_type {
    TSR_ATTR_UNDEFINED = 0,
    TSR_ATTR_FLOAT = 1,
    TSR_ATTR_INT = 2,
    TSR_ATTR_STRING = 3,
    TSR_ATTR_TENSOR = 4,
    TSR_ATTR_GRAPH = 5,
    TSR_ATTR_FLOATS = 6,
    TSR_ATTR_INTS = 7,
    TSR_ATTR_STRINGS = 8,
    TSR_ATTR_TENSORS = 9,
    TSR_ATTR_GRAPHS = 10,
    TSR_ATTR_SPARSE_TENSOR = 11,
    TSR_ATTR_SPARSE_TENSORS = 12,
    TSR_ATTR_TYPE_PROTO = 13,
    TSR_ATTR_TYPE_PROTOS = 14
} tsr_attr_type;

/* Why a provider declines a node; shown to users beside the text. */
typedef enum tsr_decline_reason {
    TSR_DECLINE_OP = 1,        /* op type or domain not implemented */
    TSR_DECLINE_TYPE = 2,      /* element type not supported */
    TSR_DECLINE_SHAPE = 3,     /* rank, dynamic or oversized shape */
    TSR_DECLINE_ATTRIBUTE = 4, /* an attribute value not supported */
    TSR_DECLINE_OPSET = 5,     /* opset version not supported */
    TSR_DECLINE_OTHER = 6
} tsr_decline_reason;

/* ------------------------------------------------------------------------ */
/* What the host offers a plugin. Valid from the entry call until unload.    */

typedef struct tsr_host_api {
    uint32_t struct_size;
    uint32_t abi_version; /* the newest ABI version the host speaks */

    /* --- statuses and memory ------------------------------------------- */
    /* A new status; `message` is copied. The receiver owns it. */
    tsr_status *(*status_new)(int32_t code, const char *message);
    void (*status_free)(tsr_status *status);
    /* Borrowed; lives as long as `status`. */
    const char *(*status_message)(const tsr_status *status);
    int32_t (*status_code)(const tsr_status *status);
    /* Sends a line to the session's log (never stdout). */
    void (*log)(int32_t level, const char *provider_name, const char *message);
    /* Host heap, for buffers a plugin hands to the host (graph_to_onnx). */
    void *(*alloc)(size_t size);
    void (*free)(void *ptr);

    /* --- graphs --------------------------------------------------------- */
    /* In `claim`: the nodes not yet assigned, in topological order.
     * In `compile`: the piece's nodes, in topological order. */
    size_t (*graph_node_count)(const tsr_graph *graph);
    const tsr_node *(*graph_node)(const tsr_graph *graph, size_t index);
    /* In `compile`: the values the piece reads from outside itself (graph
     * inputs, initializers, other pieces' outputs), each once, in the order
     * `run_input` presents them. Constant ones also answer value_constant. */
    size_t (*graph_input_count)(const tsr_graph *graph);
    const tsr_value_info *(*graph_input)(const tsr_graph *graph, size_t index);
    /* In `compile`: the values the piece produces for others, in the order
     * `run_alloc_output` takes them. */
    size_t (*graph_output_count)(const tsr_graph *graph);
    const tsr_value_info *(*graph_output)(const tsr_graph *graph, size_t index);
    /* The graph (or piece) as a serialized ONNX ModelProto whose graph inputs
     * and outputs are the ones above. *bytes is allocated with host->alloc;
     * the caller frees it with host->free. Its opset_import holds one version
     * per domain: the nodes' own where they share one (a piece of one model
     * of a chain), else the newest, and then an older node whose op changed
     * in between is an error naming it (see node_opset). */
    tsr_status *(*graph_to_onnx)(const tsr_graph *graph, void **bytes, size_t *size);

    /* --- nodes ---------------------------------------------------------- */
    const char *(*node_name)(const tsr_node *node); /* may be "" */
    const char *(*node_op_type)(const tsr_node *node);
    const char *(*node_domain)(const tsr_node *node); /* "" is ai.onnx */
    /* The version of its domain the node was written for. Nodes of one graph
     * may differ (a chain of models at different opsets, expanded function
     * bodies): read each node's semantics at its own version. */
    int64_t (*node_opset)(const tsr_node *node);
    size_t (*node_input_count)(const tsr_node *node);
    /* NULL for an omitted optional input. */
    const tsr_value_info *(*node_input)(const tsr_node *node, size_t index);
    size_t (*node_output_count)(const tsr_node *node);
    /* NULL for an omitted optional output. */
    const tsr_value_info *(*node_output)(const tsr_node *node, size_t index);
    size_t (*node_attr_count)(const tsr_node *node);
    const tsr_attr *(*node_attr)(const tsr_node *node, size_t index);
    /* NULL when the node has no attribute of that name. */
    const tsr_attr *(*node_attr_find)(const tsr_node *node, const char *name);

    /* --- values --------------------------------------------------------- */
    const char *(*value_name)(const tsr_value_info *value);
    int32_t (*value_elem_type)(const tsr_value_info *value); /* 0 = unknown */
    int32_t (*value_rank)(const tsr_value_info *value);      /* -1 = unknown */
    /* TSR_DIM_UNKNOWN for a dimension known only at run time. */
    int64_t (*value_dim)(const tsr_value_info *value, int32_t axis);
    /* The symbolic name of a dimension, or NULL. */
    const char *(*value_dim_symbol)(const tsr_value_info *value, int32_t axis);
    /* The value's data when it is a constant (initializer or Constant node
     * output) in host memory, else NULL. Lives as long as the handle. */
    const tsr_tensor *(*value_constant)(const tsr_value_info *value);

    /* --- attributes ----------------------------------------------------- */
    const char *(*attr_name)(const tsr_attr *attr);
    int32_t (*attr_type)(const tsr_attr *attr); /* tsr_attr_type */
    int64_t (*attr_int)(const tsr_attr *attr);
    float (*attr_float)(const tsr_attr *attr);
    /* Bytes, not necessarily NUL-terminated; *size gets the length. */
    const char *(*attr_string)(const tsr_attr *attr, size_t *size);
    /* Element count of a list attribute (INTS, FLOATS, STRINGS, TENSORS, GRAPHS). */
    size_t (*attr_list_size)(const tsr_attr *attr);
    const int64_t *(*attr_ints)(const tsr_attr *attr);
    const float *(*attr_floats)(const tsr_attr *attr);
    const char *(*attr_strings_at)(const tsr_attr *attr, size_t index, size_t *size);
    /* Host memory; lives as long as the handle. */
    const tsr_tensor *(*attr_tensor)(const tsr_attr *attr);
    const tsr_tensor *(*attr_tensors_at)(const tsr_attr *attr, size_t index);
    const tsr_graph *(*attr_graph)(const tsr_attr *attr);
    const tsr_graph *(*attr_graphs_at)(const tsr_attr *attr, size_t index);

    /* --- claims (valid only inside `claim`) ----------------------------- */
    /* Claims `nodes` as one piece. A set whose nodes pass no values to each
     * other becomes one piece per connected part; the host may also split a
     * set to keep the graph acyclic, and says so. Handles not offered, or a
     * node named twice, are refused with TSR_ERR_INVALID_ARGUMENT.
     * cost_seconds: estimated run time, or a negative number when unknown.
     * `nodes` is borrowed. */
    tsr_status *(*claim_piece)(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count, double cost_seconds);
    /* Says why a node is not claimed; `text` is copied. */
    void (*decline_node)(tsr_claim_sink *sink, const tsr_node *node, int32_t reason, const char *text);

    /* --- running (valid only inside `run`) ------------------------------ */
    size_t (*run_input_count)(const tsr_run_context *ctx);
    /* Input `index` in graph_input order; NULL when an optional input is
     * omitted. Lives until `run` returns. In the provider's memory — except
     * for a piece that is one Shape or Size node on a host-memory provider,
     * which may get a tensor of another memory as its dims alone (data NULL,
     * nbytes 0): those ops read no element. */
    const tsr_tensor *(*run_input)(const tsr_run_context *ctx, size_t index);
    size_t (*run_output_count)(const tsr_run_context *ctx);
    /* Allocates output `index` (graph_output order) in the piece's memory
     * with the given type and shape; `dims` is copied. *out is host-owned and
     * lives until `run` returns. Its elements are uninitialised, except that
     * strings start empty. Each output is allocated once per run.
     * index (size_t)-1 allocates host scratch (for an output the model
     * drops) that the host frees when `run` returns. */
    tsr_status *(*run_alloc_output)(tsr_run_context *ctx, size_t index, int32_t elem_type, int32_t rank,
                                    const int64_t *dims, tsr_tensor **out);
    /* Sets element `index` of a TSR_STRING output allocated above; the bytes
     * are copied. */
    tsr_status *(*tensor_set_string)(tsr_tensor *tensor, size_t index, const char *data, size_t size);

    /* --- values that are not plain tensors (sequences, optionals, maps) --
     * Appended in ABI 1, after tensor_set_string: check TSR_HAS_MEMBER(host,
     * tsr_host_api, run_set_output_value) before use. Such values live in
     * host memory; a provider that claims nodes reading or producing them
     * must be able to read host memory. */
    /* Input `index` as a value of any kind; a plain tensor input is seen as
     * a TSR_VALUE_TENSOR value. NULL when omitted. Lives until `run` returns.
     * (run_input returns NULL for inputs that are not plain tensors.) */
    const tsr_value *(*run_input_value)(const tsr_run_context *ctx, size_t index);
    /* Sets output `index` to `value`, taking ownership (also on failure).
     * Use for non-tensor outputs; a TSR_VALUE_TENSOR value is accepted too. */
    tsr_status *(*run_set_output_value)(tsr_run_context *ctx, size_t index, tsr_value *value);
    int32_t (*val_kind)(const tsr_value *value);                        /* tsr_value_kind */
    size_t (*val_count)(const tsr_value *value);                        /* as tsr_value_count */
    const tsr_value *(*val_item)(const tsr_value *value, size_t index); /* borrowed */
    int32_t (*val_elem_type)(const tsr_value *value);
    /* The tensor of a TSR_VALUE_TENSOR value (borrowed), else NULL. The
     * tensor of a value the plugin made with val_new_tensor may be written. */
    tsr_tensor *(*val_tensor)(const tsr_value *value);
    /* New values, owned by the caller until handed over (run_set_output_value,
     * val_append, val_new_optional) or freed with val_free. */
    tsr_status *(*val_new_tensor)(int32_t elem_type, int32_t rank, const int64_t *dims, tsr_value **out);
    tsr_status *(*val_new_sequence)(int32_t elem_type, tsr_value **out);
    tsr_status *(*val_new_optional)(tsr_value *contents, int32_t elem_type, tsr_value **out);
    tsr_status *(*val_append)(tsr_value *sequence, tsr_value *item);
    tsr_status *(*val_clone)(const tsr_value *value, tsr_value **out);
    void (*val_free)(tsr_value *value);

    /* --- cost estimates (appended in ABI 1; check TSR_HAS_MEMBER(host,
     * tsr_host_api, node_flops) before use) ----------------------------- */
    /* The floating-point operations (a multiply-add counts 2) one run of
     * `node` does, estimated by the host from inferred shapes (a symbolic
     * dimension counts as 32); negative when a rank is not known. A provider turns it into the cost_seconds
     * it passes to claim_piece with its own throughput, so that a session
     * with the cost policy can weigh it against other providers and the
     * copies between them. */
    double (*node_flops)(const tsr_node *node);

    /* --- devices (appended in ABI 1; check TSR_HAS_MEMBER(host,
     * tsr_host_api, claim_piece_on) before use) ------------------------- */
    /* claim_piece for device `device` (0 .. device_count - 1) of the
     * provider: the piece compiles and runs there, its outputs are
     * allocated in that device's memory (mem_alloc receives the index) and
     * the host copies a tensor between devices where pieces on different
     * devices meet. claim_piece is claim_piece_on device 0. An index out of
     * range is refused with TSR_ERR_INVALID_ARGUMENT. */
    tsr_status *(*claim_piece_on)(tsr_claim_sink *sink, const tsr_node *const *nodes, size_t count, double cost_seconds,
                                  int32_t device);
    /* In `compile` (and for the piece's life): the device it was claimed on. */
    int32_t (*graph_device)(const tsr_graph *piece);

    /* --- stopping early (appended in ABI 1; check TSR_HAS_MEMBER(host,
     * tsr_host_api, run_should_stop) before use) ------------------------ */
    /* Inside `run`: nonzero when the application asked this run to stop
     * (tsr_run_options_set_terminate) or its deadline passed. A kernel that
     * can take long polls it between chunks of work (it costs a load and a
     * clock read) and then returns a status with code TSR_ERR_CANCELLED. */
    int32_t (*run_should_stop)(const tsr_run_context *ctx);

    /* --- a provider's own memory in a run (appended in ABI 1; check
     * TSR_HAS_MEMBER(host, tsr_host_api, run_charge) before use) ---------- */
    /* Inside `run`: counts `bytes` of the provider's own memory that this
     * piece run holds (the intermediates of a fused piece, scratch; not
     * outputs, which run_alloc_output counts) against the run's
     * "working_bytes" limit, from the call until `run` returns; calls add
     * up. A non-NULL status (TSR_ERR_NO_MEMORY, naming the limit and `what`)
     * means the limit would be passed: return it without running. `what`
     * is borrowed for the call. Returns NULL when no limit applies. */
    tsr_status *(*run_charge)(tsr_run_context *ctx, uint64_t bytes, const char *what);

    /* --- weights kept in a provider's own form (appended in ABI 1; check
     * TSR_HAS_MEMBER(host, tsr_host_api, constant_release) before use) --- */
    /* From `compile` or `run` of `piece`: the piece holds all it will ever
     * need of constant `value` in a form of its own (weights reordered or
     * packed) and promises never to read the constant's bytes again, from
     * any later call either. When every piece that reads the value has
     * released it and nothing else in the session reads it, the host gives
     * the bytes' memory back to the system (ONNX Runtime does the same with
     * pre-packed weights): a model's weights are then held once, not twice.
     * value_constant keeps answering with the same tensor (type, dims and
     * data address, which stays usable as a key), but the bytes of a
     * released constant may read as zeros. Releasing twice is harmless. A
     * value that is not a constant or that no node of the piece reads is
     * refused with TSR_ERR_INVALID_ARGUMENT; the receiver owns the status.
     * Calls for one session never overlap (the host serialises compile and
     * run of its pieces). */
    tsr_status *(*constant_release)(const tsr_graph *piece, const tsr_value_info *value);
} tsr_host_api;

/* ------------------------------------------------------------------------ */
/* What a plugin describes about itself.                                      */

typedef enum tsr_device_kind {
    TSR_DEVICE_CPU = 0,
    TSR_DEVICE_GPU = 1,
    TSR_DEVICE_ACCELERATOR = 2,
    TSR_DEVICE_OTHER = 3
} tsr_device_kind;

typedef struct tsr_device_info {
    uint32_t struct_size;  /* filled by the host before the call */
    const char *name;      /* owned by the plugin; lives until destroy */
    const char *vendor;    /* owned by the plugin; lives until destroy */
    const char *details;   /* free text (driver, units, memory); plugin-owned; may be NULL */
    int32_t kind;          /* tsr_device_kind */
    int32_t memory_kind;   /* tsr_memory_kind of the tensors its pieces use */
    uint64_t memory_bytes; /* 0 when unknown */
} tsr_device_info;

/* Settings a provider instance is created with. Everything is borrowed for
 * the duration of `create`. */
typedef struct tsr_provider_config {
    uint32_t struct_size;
    size_t option_count;
    const char *const *option_keys;   /* option_count entries */
    const char *const *option_values; /* option_count entries */
    int32_t intra_op_threads;         /* 0 = provider's choice */
    int32_t log_level;                /* tsr_log_level */
    /* appended in ABI 1 (read only when TSR_HAS_MEMBER(config,
     * tsr_provider_config, flags)): TSR_PROVIDER_* bits */
    uint32_t flags;
} tsr_provider_config;

/* config->flags: the application did not name this provider; the host
 * loaded it because its plugin was found (no provider list, or the cost
 * policy). A provider that can tell at once that it would only slow such a
 * session down (its only devices emulate an accelerator on the host CPU)
 * may refuse to start with TSR_ERR_NOT_SUPPORTED: the host then leaves it
 * out and logs why at info level. Named, it must start. (appended in ABI 1) */
#define TSR_PROVIDER_UNNAMED 0x1u

/*
 * A provider's functions. The table and its strings are owned by the plugin
 * and must live until the plugin is unloaded (a static const table is usual).
 * Slots marked optional may be NULL.
 */
typedef struct tsr_provider {
    uint32_t struct_size;
    const char *name; /* short, lower-case, unique: "reference", "onednn" */
    const char *vendor;
    const char *version; /* the plugin's own version */

    /* Makes an instance for one session. Unknown option keys must be refused
     * with TSR_ERR_INVALID_ARGUMENT naming the key. *state is the plugin's. */
    tsr_status *(*create)(const tsr_provider_config *config, void **state);
    void (*destroy)(void *state);

    size_t (*device_count)(void *state);
    /* Fills `info` (whose struct_size the host set). */
    tsr_status *(*device_info)(void *state, size_t index, tsr_device_info *info);

    /* Looks at the graph's unassigned nodes; calls host->claim_piece for what
     * it will run and may call host->decline_node for the rest. */
    tsr_status *(*claim)(void *state, const tsr_graph *graph, tsr_claim_sink *sink);

    /* Prepares a claimed piece. A failure hands the piece to the next
     * provider. *piece_state is the plugin's, freed by `release`. */
    tsr_status *(*compile)(void *state, const tsr_graph *piece, void **piece_state);
    /* Runs a compiled piece once. May be called again with other shapes.
     * The host checks every output it hands back: element type, rank and
     * the dims shape inference derived must match, or the run fails with
     * an error naming the provider, node and value. */
    tsr_status *(*run)(void *piece_state, tsr_run_context *ctx);
    void (*release)(void *piece_state);

    /* Optional: device memory, for providers whose devices' memory_kind is
     * TSR_MEMORY_DEVICE. A handle is what tsr_tensor.data holds. */
    tsr_status *(*mem_alloc)(void *state, int32_t device, size_t nbytes, void **handle);
    void (*mem_free)(void *state, int32_t device, void *handle);
    tsr_status *(*copy_to_device)(void *state, int32_t device, void *dst_handle, const void *src_host, size_t nbytes);
    tsr_status *(*copy_to_host)(void *state, int32_t device, void *dst_host, const void *src_handle, size_t nbytes);

    /* Optional, appended in ABI 1 (check TSR_HAS_MEMBER(provider,
     * tsr_provider, piece_describe)): how a compiled piece runs now, for
     * profiles and reports — one entry per kernel or library primitive,
     * separated by ';' (e.g. "convolution brgconv:avx512_core;binary
     * jit:uni"). May return NULL or "" when it has nothing to say. The string
     * is owned by the piece state and valid until its next run or release. */
    const char *(*piece_describe)(void *piece_state);

    /* Optional, appended in ABI 1: copies `nbytes` from a buffer of one of
     * this provider's devices to a buffer of another, without passing
     * through host memory. When NULL the host bounces such copies through
     * a host buffer (copy_to_host, then copy_to_device). Both handles are
     * this provider's (from mem_alloc) and stay owned by the host's
     * tensors: the call neither frees nor keeps them. */
    tsr_status *(*copy_between_devices)(void *state, int32_t dst_device, void *dst_handle, int32_t src_device,
                                        const void *src_handle, size_t nbytes);
    /* Optional, appended in ABI 1: returns once all work queued on `device`
     * is complete (see "Completion" above). NULL: the provider is
     * synchronous. */
    tsr_status *(*synchronize)(void *state, int32_t device);
    /* Appended in ABI 1: TSR_PROVIDER_* bits; 0 (or absent) for none. */
    uint32_t flags;

    /* Optional, appended in ABI 1: the compiled-piece cache, for providers
     * whose compile is slow (a GPU or NPU compiler). All three, or none.
     * When a session has a cache directory (tsr_session_options_set_cache_dir,
     * `--cache-dir`), the host looks for a blob of each piece this provider
     * claims before calling compile: one written for the same piece (same
     * nodes, attributes, value types and shapes, constant data), by the
     * same provider name and version, for the same device, under the same
     * compatibility string. It then calls piece_import instead of compile.
     * After a compile it calls piece_export and stores the bytes. A blob
     * that is missing, foreign, stale or corrupt is never imported: the host
     * compiles and says why in the session's log. */
    /* What else a blob written for `device` depends on (library and driver
     * versions, the device model and ISA): a blob is imported only where
     * this string is the same. Owned by the instance; lives until destroy.
     * NULL: nothing is cached for this device. */
    const char *(*cache_compat)(void *state, int32_t device);
    /* The compiled piece as bytes: *bytes allocated with host->alloc, freed
     * by the host. */
    tsr_status *(*piece_export)(void *piece_state, void **bytes, size_t *size);
    /* Instead of compile: the piece made from bytes piece_export wrote for
     * this very piece (the host checked). `bytes` is borrowed for the call.
     * A failure (a blob it cannot read) makes the host compile instead. */
    tsr_status *(*piece_import)(void *state, const tsr_graph *piece, const void *bytes, size_t size,
                                void **piece_state);
} tsr_provider;

/* tsr_provider.flags: constants (initializers, Constant-node outputs) stay
 * in host memory. A device provider that uploads or reorders its weights
 * itself at compile time (from value_constant) sets it; the host then hands
 * its pieces constant inputs as host tensors (memory_kind TSR_MEMORY_HOST)
 * instead of copying them into device memory. */
#define TSR_PROVIDER_HOST_CONSTANTS 1u

/* ------------------------------------------------------------------------ */
/* The entry point.                                                           */

typedef struct tsr_provider_entry_args {
    uint32_t struct_size;
    /* in */
    uint32_t host_abi_min;    /* oldest ABI version the host speaks */
    uint32_t host_abi_max;    /* newest ABI version the host speaks */
    const tsr_host_api *host; /* lives until the plugin is unloaded */
    const char *plugin_path;  /* the .so's path; borrowed during the call */
    /* out */
    uint32_t abi_version;         /* the version the plugin implements */
    const tsr_provider *provider; /* plugin-owned; lives until unload */
} tsr_provider_entry_args;

typedef tsr_status *(*tsr_provider_entry_fn)(tsr_provider_entry_args *args);

/* Every plugin defines exactly this (and, ideally, exports nothing else):
 *   TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args);
 */

#ifdef __cplusplus
}
#endif
#endif
