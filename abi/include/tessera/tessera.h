/*
 * Tessera application API.
 *
 * Every function returns a `tsr_status *`: NULL on success, otherwise an error
 * the caller owns and frees with tsr_status_free. Out-parameters are written
 * only on success. Compiles as C99 and as C++.
 *
 * Versions: what was added after a struct or this API first took shape is
 * tagged "appended in ABI N", as sqlite3_vfs tags its methods, so a reader
 * knows which libraries have it. Library 0.1.x is ABI 1; a struct member is
 * read only when struct_size covers it (TSR_HAS_MEMBER).
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
    /* appended in ABI 1 (read only when struct_size covers it): */
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
 * naming a node wins over one naming its op type. A pinned Einsum stays an
 * Einsum (others that are matrix products become MatMul at load). */
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
    /* appended in ABI 1 (filled only when struct_size covers them): */
    size_t input_count;
    /* input value names in order, "" where an optional input is omitted; a
     * control-flow node's own inputs, not the values its bodies read from
     * outside */
    const char *const *inputs;
} tsr_node_info;
/* All strings and arrays are borrowed and live as long as the session. The
 * nodes are the session's graph after its rewrites, not the file's: Constant
 * nodes folded away (their outputs read like initializers), an Einsum that
 * is a matrix product lowered to MatMul, function ops no provider runs
 * whole expanded (see origin). */
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

/* --- resource limits (appended in ABI 1) --- */
/* Sets resource limit `name` (borrowed: read during the call only) to
 * `value` (> 0). A run that would exceed a
 * limit fails with TSR_ERR_NO_MEMORY and a message naming the limit, the
 * size asked for and the node asking, instead of being killed for memory.
 *   "tensor_bytes"  the largest tensor a run may allocate, in host or
 *                   device memory (default 16 GiB)
 *   "working_bytes" the tensors one run holds at once, all together, in
 *                   host or device memory: kernel outputs and scratch,
 *                   copies between memories, If/Loop/Scan/SequenceMap
 *                   bodies and results, and what providers report of
 *                   their own memory for a piece run (host run_charge:
 *                   the oneDNN provider's intermediates); outputs count
 *                   until the run returns (default 64 GiB)
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
 *   "fold_bytes"    (appended in ABI 1) the most bytes a node's outputs may
 *                   take for the node to be computed once when the session
 *                   is made, its inputs being constants, instead of on
 *                   every run (constant folding; default 256 MiB; 1 turns
 *                   folding off; docs/partition.md, "Constant folding")
 * An unknown name or a value <= 0 is TSR_ERR_INVALID_ARGUMENT. */
TSR_EXPORT tsr_status *tsr_session_options_set_limit(tsr_session_options *options, const char *name, int64_t value);

/* --- model metadata (appended in ABI 1) ----------------------------------
 * What the model file says about itself, as ONNX Runtime's ModelMetadata.
 * Strings are borrowed and live as long as the session; "" when the model
 * leaves one out. */
typedef struct tsr_model_metadata {
    uint32_t struct_size;      /* set by the caller: sizeof(tsr_model_metadata) */
    const char *producer_name; /* "pytorch", "tf2onnx", ... */
    const char *producer_version;
    const char *domain;
    int64_t model_version;
    const char *doc_string;
    const char *graph_name;
    int64_t ir_version;
    size_t property_count; /* metadata_props entries: tsr_session_metadata_property */
    size_t opset_count;    /* opset imports: tsr_session_opset */
} tsr_model_metadata;
TSR_EXPORT tsr_status *tsr_session_metadata(const tsr_session *session, tsr_model_metadata *out);
/* metadata_props entry `index` (< property_count), in file order; *key and
 * *value are borrowed. */
TSR_EXPORT tsr_status *tsr_session_metadata_property(const tsr_session *session, size_t index, const char **key,
                                                     const char **value);
/* Opset import `index` (< opset_count): *domain ("" for ai.onnx) borrowed. */
TSR_EXPORT tsr_status *tsr_session_opset(const tsr_session *session, size_t index, const char **domain,
                                         int64_t *version);

/* --- compiled-piece cache (appended in ABI 1) ----------------------------
 * Pieces of providers that can export what they compiled (tsr_provider's
 * piece_export/piece_import) are stored in `dir` (which must exist) and
 * imported by later sessions instead of compiled again; a blob written by
 * another provider version, device or library, or damaged, is ignored with
 * a warning in the log. NULL or "" turns the cache off (the default). The
 * string is copied. */
TSR_EXPORT tsr_status *tsr_session_options_set_cache_dir(tsr_session_options *options, const char *dir);

/* --- nodes inside control-flow bodies (appended in ABI 1) -----------------
 * A node by name, as tsr_session_node_info gives it, or a node inside the
 * body of an If, Loop, Scan or SequenceMap by its path NODE/ATTRIBUTE/NAME
 * (ATTRIBUTE: then_branch, else_branch or body; bodies nest, as in
 * "loop0/body/if0/then_branch/relu"), the names the reports and profiles
 * use. For a body node, out->piece indexes its body's pieces and out->name
 * is its own name. Set out->struct_size first; strings and arrays are
 * borrowed and live as long as the session. No such node:
 * TSR_ERR_INVALID_ARGUMENT. */
TSR_EXPORT tsr_status *tsr_session_node_find(const tsr_session *session, const char *path, tsr_node_info *out);
/* Values inside control-flow bodies (appended in ABI 1): with observe_all,
 * every node output inside bodies is kept observable too, and
 * tsr_session_run's output_names may name one by path, NODE/ATTRIBUTE/VALUE
 * (nested as above: "loop0/body/if0/then_branch/r"). Its output is a
 * sequence with one item per time the body ran in that run, in order: per
 * iteration for a Loop, Scan or SequenceMap body, once for an If branch
 * taken (empty when not). In nested bodies the items are themselves
 * sequences, one level per enclosing body, outermost first:
 * "loop0/body/if0/then_branch/r" holds one sequence per iteration of loop0,
 * each holding r once when if0 took then_branch in that iteration and
 * nothing otherwise. Leaves are copies in host memory. A body a provider
 * runs as a whole (not the core) adds no items. */

/* --- run options (appended in ABI 1) --------------------------------------
 * Settings for single runs: a tag, a way to stop a run from another thread,
 * and a deadline. One tsr_run_options may serve many runs, one after the
 * other or at once. */
typedef struct tsr_run_options tsr_run_options;
TSR_EXPORT tsr_status *tsr_run_options_create(tsr_run_options **out);
/* Not while a run uses it. NULL is fine. */
TSR_EXPORT void tsr_run_options_free(tsr_run_options *options);
/* A tag for the runs using these options: it leads every log line they
 * write ("[tag] ...") and is each of their profile events' "tag". Copied;
 * NULL or "" removes it. */
TSR_EXPORT tsr_status *tsr_run_options_set_tag(tsr_run_options *options, const char *tag);
/* Nonzero asks every run using these options to stop: it returns
 * TSR_ERR_CANCELLED at the next piece boundary (a loop iteration counts),
 * or sooner inside providers that check (the reference provider's long
 * kernels do). Safe to call from any thread while runs use `options`; the
 * flag stays until set back to 0, so later runs stop at once. */
TSR_EXPORT tsr_status *tsr_run_options_set_terminate(tsr_run_options *options, int32_t terminate);
/* A run using these options that has not finished `milliseconds` after it
 * began stops as on terminate, with TSR_ERR_CANCELLED. 0 (the default): no
 * deadline. */
TSR_EXPORT tsr_status *tsr_run_options_set_timeout_ms(tsr_run_options *options, int64_t milliseconds);
/* tsr_session_run and tsr_session_run_values with run options (NULL: as
 * without). A cancelled run frees what it made and returns no outputs. */
TSR_EXPORT tsr_status *tsr_session_run_with_options(tsr_session *session, const tsr_run_options *options,
                                                    size_t input_count, const char *const *input_names,
                                                    const tsr_tensor *const *inputs, size_t output_count,
                                                    const char *const *output_names, tsr_value **outputs);
TSR_EXPORT tsr_status *tsr_session_run_values_with_options(tsr_session *session, const tsr_run_options *options,
                                                           size_t input_count, const char *const *input_names,
                                                           const tsr_value *const *inputs, size_t output_count,
                                                           const char *const *output_names, tsr_value **outputs);

/* --- logging to the application (appended in ABI 1) --------------------
 * Every line the host and the providers write for sessions made with these
 * options (while the session is made and while it runs, at or below its log
 * level) goes to `fn` instead of stderr: `source` is "core" or the
 * provider's name, `message` the text (run tag included), both borrowed for
 * the call. fn is called on the thread making the session call and must not
 * call back into that session; a line a provider writes from a thread of
 * its own (outside any session call) still goes to stderr. NULL restores
 * stderr. user_data is the application's: handed back to fn as given, never
 * freed, and kept by every session made from these options, so it must
 * outlive them. */
typedef void (*tsr_log_fn)(void *user_data, int32_t level, const char *source, const char *message);
TSR_EXPORT tsr_status *tsr_session_options_set_logger(tsr_session_options *options, tsr_log_fn fn, void *user_data);

/* --- working memory of runs (appended in ABI 1) ----------------------------
 * The tensors the session's last run held at once at most (*peak) and still
 * held when it ended (*left: 0 unless outputs were kept), in bytes: what
 * the "working_bytes" limit counts (node outputs, scratch, copies between
 * memories, bodies' values; host and device; a provider's own buffers
 * where it reports them through run_charge, while its piece runs). */
TSR_EXPORT tsr_status *tsr_session_working_bytes(const tsr_session *session, uint64_t *peak, uint64_t *left);

/* --- chains of models (appended in ABI 1) ---------------------------------
 * A session over models run one after the other: a pre-processing graph
 * (decode, resize, crop, normalize), the model, a post-processing graph.
 * They are made one graph right after loading, as onnx.compose.merge_models
 * merges two, so shape inference, placement and providers' fusion see one
 * graph, seams included. The model given to tsr_session_create (or
 * _from_buffer) is stage 0; tsr_session_options_add_stage appends stage 1,
 * 2, ... (`path` copied; its external data is read beside it). Stage k's
 * inputs are fed by the connections named for it, or, when none is, by
 * stage k-1's outputs in order (inputs that have an initializer are not
 * counted). The session's inputs are stage 0's, then every later stage's
 * unconnected ones; its outputs, stage after stage, those not connected,
 * then the last stage's. A value name two stages use is an error naming it
 * (give prefixes); so is one metadata_props key with two values, one
 * function defined twice, and an output and input whose declared types
 * disagree. A domain imported at several versions is imported at the newest
 * and each node keeps its own file's version. ir_version is the largest.
 * Each stage's file is checked against the limits on its own. */
TSR_EXPORT tsr_status *tsr_session_options_add_stage(tsr_session_options *options, const char *path);
/* Output `output` of an earlier stage (the nearest that has one so named)
 * feeds input `input` of stage `stage` (1 .. stages added; 0: the one stage
 * after stage 0 that has an input so named, an error when none or several
 * do), both named as in their own files, before prefixes. Repeatable; a
 * stage with any connection is fed by its connections only. Strings
 * copied. */
TSR_EXPORT tsr_status *tsr_session_options_connect(tsr_session_options *options, size_t stage, const char *output,
                                                   const char *input);
/* Every name of stage `stage` (0 .. stages added): values, nodes, those in
 * subgraphs, model-local functions and the ops calling them, gets `prefix`,
 * as onnx.compose.add_prefix (copied; NULL or "" for none). A prefix on
 * stage 0 applies even with no stage added. */
TSR_EXPORT tsr_status *tsr_session_options_set_stage_prefix(tsr_session_options *options, size_t stage,
                                                            const char *prefix);
/* The model at `path` and the stages of `options` (may be NULL: none)
 * merged as a session would merge them, serialized as an ONNX ModelProto
 * (weights inline, Constant nodes as initializers; no providers loaded).
 * One file holds one version per domain: nodes of a stage at an older
 * version are rewritten where their op changed in form only (an attribute
 * become an input, ...), and a node whose op changed in meaning is an error
 * naming it (docs/compose.md).
 * *bytes is malloc'd; the caller frees it with free(). */
TSR_EXPORT tsr_status *tsr_model_compose(const tsr_session_options *options, const char *path, void **bytes,
                                         size_t *size);

/* --- device-resident inputs and outputs (appended in ABI 1) ---------------
 * A tsr_io_binding says, once, where a session's inputs come from and where
 * its outputs go, as ONNX Runtime's IoBinding: an input from a host tensor
 * or from a tsr_device_value, an output to host memory or left in the
 * memory of the provider whose piece made it. A loop that feeds a model's
 * output back in (an RNN's state, a decoder's KV cache) then makes no host
 * round trip per run:
 *
 *   tsr_io_binding *b; tsr_io_binding_create(s, &b);
 *   tsr_io_binding_bind_output(b, "y");               (read back every run)
 *   tsr_io_binding_bind_output_device(b, "state_out"); (left where it is made)
 *   tsr_io_binding_bind_input(b, "state_in", &zeros);  (first run: host)
 *   tsr_device_value *state = NULL;
 *   for each step:
 *       tsr_io_binding_bind_input(b, "x", &x);
 *       tsr_session_run_with_binding(s, NULL, b);
 *       tsr_device_value *next; tsr_io_binding_take_output_device(b, "state_out", &next);
 *       tsr_io_binding_bind_input_device(b, "state_in", next);
 *       tsr_device_value_free(state); state = next;
 *       tsr_value *y; tsr_io_binding_take_output(b, "y", &y); ... tsr_value_free(y);
 *   tsr_device_value_free(state); tsr_io_binding_free(b);
 *
 * A bound device value read by a piece of the provider (and device) whose
 * memory holds it is used in place; read by any other piece it is copied
 * as any value crossing memories is, once per run. The profile
 * (tsr_session_profile_take) shows every copy a run made: the loop above
 * on "-p opencl,reference" copies x in and y out, and no byte of state.
 *
 * Threads: a binding belongs to its session and to one thread at a time;
 * never give one binding to two runs at once (each concurrent run needs its
 * own). Calls on device values take their session's lock: they wait for
 * a run in progress, and they are calls on that session for
 * tsr_session_free ("Threads" above).
 *
 * Completion: providers may still be computing a device value when its run
 * returns; tsr_device_value_to_host reads it through the provider's
 * copy_to_host, which waits for that work (provider.h, "Completion"), so
 * what it returns is final. Runs of the session see device values in the
 * order the runs were made, with no wait in between.
 */
typedef struct tsr_io_binding tsr_io_binding;
/* A tensor (or a sequence, optional or map, which always live in host
 * memory) made by a run of one session and kept where it was made: a
 * provider's device memory, or host memory for a host provider. Owned by
 * the application, freed with tsr_device_value_free. Freeing its session
 * frees its contents (device memory must go back before the provider
 * goes): the handle then only accepts tsr_device_value_free, and other
 * calls on it fail with TSR_ERR_INVALID_ARGUMENT. */
typedef struct tsr_device_value tsr_device_value;

/* A binding for `session` (borrowed: must outlive every call on the
 * binding except tsr_io_binding_free), with nothing bound. *out is the
 * caller's, freed with tsr_io_binding_free. */
TSR_EXPORT tsr_status *tsr_io_binding_create(tsr_session *session, tsr_io_binding **out);
/* Frees the binding and the results it still holds (outputs not taken).
 * Device values bound as inputs are the application's and stay. May come
 * after its session was freed. NULL is fine. */
TSR_EXPORT void tsr_io_binding_free(tsr_io_binding *binding);
/* Graph input `name` (copied) is fed from `tensor`, in host memory,
 * checked here against the input's declared type and shape. The descriptor
 * and its dims are copied; the elements (`tensor->data`) are borrowed and
 * read by every later run until the input is bound again or the binding
 * cleared or freed. Replaces an earlier binding of the input. */
TSR_EXPORT tsr_status *tsr_io_binding_bind_input(tsr_io_binding *binding, const char *name, const tsr_tensor *tensor);
/* Graph input `name` (copied) is fed from `value`, which must come from a
 * run of the binding's session (another session's: TSR_ERR_INVALID_ARGUMENT)
 * and is checked here against the input's declared type and shape.
 * Borrowed: it stays the application's; freeing it while bound makes the
 * next run fail with an error naming the input, not read freed memory. */
TSR_EXPORT tsr_status *tsr_io_binding_bind_input_device(tsr_io_binding *binding, const char *name,
                                                        const tsr_device_value *value);
/* Graph output `name` (copied) is read back into host memory by each run
 * and taken with tsr_io_binding_take_output. */
TSR_EXPORT tsr_status *tsr_io_binding_bind_output(tsr_io_binding *binding, const char *name);
/* Graph output `name` (copied) stays in the memory of the provider whose
 * piece made it (host memory for a host provider); each run makes a new
 * tsr_device_value, taken with tsr_io_binding_take_output_device.
 * Outputs bound neither way are computed and dropped: never copied. */
TSR_EXPORT tsr_status *tsr_io_binding_bind_output_device(tsr_io_binding *binding, const char *name);
/* Unbinds every input and output and frees the results not taken. */
TSR_EXPORT void tsr_io_binding_clear(tsr_io_binding *binding);
/* Runs `session` with the binding's inputs and outputs (every graph input
 * without an initializer must be bound), with run options as
 * tsr_session_run_with_options (`options` may be NULL). First frees the
 * results the previous run left in the binding (not taken); a failed run
 * leaves none. The binding must have been made for `session`. */
TSR_EXPORT tsr_status *tsr_session_run_with_binding(tsr_session *session, const tsr_run_options *options,
                                                    tsr_io_binding *binding);
/* The last run's result for output `name`, bound with
 * tsr_io_binding_bind_output: *out becomes the caller's (freed with
 * tsr_value_free) and the binding holds it no more. */
TSR_EXPORT tsr_status *tsr_io_binding_take_output(tsr_io_binding *binding, const char *name, tsr_value **out);
/* The same for an output bound with tsr_io_binding_bind_output_device:
 * *out becomes the caller's (freed with tsr_device_value_free). */
TSR_EXPORT tsr_status *tsr_io_binding_take_output_device(tsr_io_binding *binding, const char *name,
                                                         tsr_device_value **out);
/* What a device value holds: *out gets its element type, rank, dims
 * (borrowed: live as long as the value), nbytes, memory_kind and
 * device_index; `data` is the provider's handle for device memory (opaque:
 * read it with tsr_device_value_to_host) or the elements for host memory
 * (borrowed, as dims). Set out->struct_size first. *provider (may be NULL)
 * gets the name of the provider whose memory holds it, or "host"
 * (borrowed: lives as long as the session). A sequence, optional or map
 * gives a zero tensor with elem_type 0. */
TSR_EXPORT tsr_status *tsr_device_value_info(const tsr_device_value *value, tsr_tensor *out, const char **provider);
/* A copy of the value in host memory, made through the provider's
 * copy_to_host (the sync point: it waits for the work that makes the value).
 * *out is the caller's, freed with tsr_value_free. */
TSR_EXPORT tsr_status *tsr_device_value_to_host(const tsr_device_value *value, tsr_value **out);
/* Gives the memory back to its provider (waiting for a run of its session
 * in progress). NULL is fine; so is a value whose session was freed. */
TSR_EXPORT void tsr_device_value_free(tsr_device_value *value);

#ifdef __cplusplus
}
#endif
#endif
