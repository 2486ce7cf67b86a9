/*
 * The oneDNN provider's internals, shared by its files.
 *
 * Module prefixes: odn_attr_ (reading node attributes), odn_claim_ (which
 * nodes we take and why not), odn_plan_ (values, memories and steps of one
 * compiled piece), odn_build_ (turning nodes into oneDNN primitives),
 * odn_fuse_ (absorbing following nodes as post-ops).
 *
 * A piece is compiled into a *plan*: an ordered list of steps (oneDNN
 * primitives, plus a few plain C loops) over dnnl memories. A plan is built
 * for one set of input shapes; the run rebuilds it when the shapes change.
 * Values that live inside the piece may stay in oneDNN's blocked formats;
 * piece inputs and outputs are always plain row-major.
 */
#ifndef TESSERA_ODN_H
#define TESSERA_ODN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include <tessera/provider.h>
#include <tessera/provider_util.h>

extern const tsr_host_api *odn_host;

#define ODN_MAX_RANK 6 /* oneDNN allows 12; no op we claim needs more than 6 */
#define ODN_MAX_ARGS 16

/* --- attributes ---------------------------------------------------------- */
int64_t odn_attr_int(const tsr_node *n, const char *name, int64_t dflt);
float odn_attr_float(const tsr_node *n, const char *name, float dflt);
/* The INTS attribute `name`: its values and count, or NULL and 0 when absent.
 * All odn_attr_ readers are tsr_util_attr_* (provider_util.h) on odn_host: an
 * attribute of the wrong type reads as absent. */
const int64_t *odn_attr_ints(const tsr_node *n, const char *name, size_t *count);
/* Input k of n, or NULL when omitted or past the last. */
static inline const tsr_value_info *odn_input(const tsr_node *n, size_t k) {
    return tsr_util_node_input(odn_host, n, k);
}
/* The constant int64 or int32 vector input k of n into v (at most max
 * values): its length, or -1 when it is not such a constant (Pad's pads,
 * Slice's starts...). */
int64_t odn_const_ints(const tsr_node *n, size_t k, int64_t *v, int64_t max);
/* True when the STRING attribute `name` equals `want`; `dflt` when absent. */
bool odn_attr_string_is(const tsr_node *n, const char *name, const char *want, bool dflt);

/* A message "NODE_NAME (OP): text" as a status. */
tsr_status *odn_node_error(const tsr_node *n, int32_t code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A status for a failed oneDNN call, naming the node and what was attempted. */
tsr_status *odn_dnnl_error(const tsr_node *n, const char *what, dnnl_status_t st);

/* --- claims ------------------------------------------------------------- */
/* 0 when the node is one we compute exactly; otherwise a tsr_decline_reason
 * with `why` filled. */
int odn_claim_check(const tsr_node *n, char *why, size_t why_size);

/* The groups the last full claim formed, by node. Placement asks again
 * offering only the nodes the survey claimed: that offer hides the nodes
 * between them (Shape -> Concat feeding a Reshape), so grouping it afresh
 * could not see the paths through them; it reuses these groups instead. */
typedef struct odn_group_memo {
    const tsr_node **nodes; /* sorted by address */
    int *group;             /* per node: its group, or -1 when not claimed */
    size_t count;
} odn_group_memo;
void odn_group_memo_clear(odn_group_memo *m);
/* Groups the nodes marked in `claimed` into convex pieces of connected
 * nodes: each node's group (-1 when not claimed; n entries) and their
 * count, remembering the groups in `memo` (or, when every offered node is
 * in it already, keeping its groups); then each group claimed as a piece. */
tsr_status *odn_group_assign(const tsr_graph *graph, const bool *claimed, odn_group_memo *memo, int *group,
                             int *group_count);
tsr_status *odn_group_emit(const tsr_graph *graph, const int *group, int groups, tsr_claim_sink *sink);
/* Shape arithmetic computed when a plan is built (odn_shape_calc.c): marks
 * the nodes of `graph` it may claim (false on no memory). */
bool odn_shape_calc_mark(const tsr_graph *graph, bool *shape_node);
/* Unclaims (declining) marked nodes whose value some reader outside their
 * group, or not a marked node, Reshape's shape or Resize's sizes, reads;
 * true when it unclaimed any (the groups are then to be made again). */
bool odn_shape_calc_unclaim(const tsr_graph *graph, bool *claimed, const bool *shape_node, const int *group,
                            tsr_claim_sink *sink);


/* --- plans ------------------------------------------------------------- */
typedef struct odn_value {
    const tsr_value_info *info;
    int32_t rank;
    int64_t dims[ODN_MAX_RANK];
    int input_index;            /* position among the piece's inputs, or -1 */
    int output_index;           /* position among the piece's outputs, or -1 */
    const tsr_tensor *constant; /* initializer data, or NULL */
    /* a view of constant data (a Transpose of an initializer, as a tied
     * LM head reads its embedding): those bytes, keying a once-only reorder
     * of the view; NULL otherwise */
    const void *const_view;
    int consumers;         /* nodes of the piece reading it */
    /* of those, the ones whose steps read the constant only in a form of
     * the piece's constant cache (reordered, packed): when all do, the host
     * may drop its bytes (odn_release_consts.c) */
    int cached_reads;
    /* of those, the ones whose form every plan of the piece makes alike,
     * whatever its input shapes, and so finds in the cache: a piece with
     * shapes known only at run time may release a value all of whose reads
     * are such (odn_const_read_cached) */
    int fixed_reads;
    bool produced;         /* computed by a step already (or an input) */
    bool is_view;          /* mem shares another value's buffer */
    dnnl_memory_desc_t md; /* the layout `mem` holds */
    dnnl_memory_t mem;
    dnnl_memory_t plain_mem; /* plain copy for consumers that need one, or NULL */
    int32_t elem_type;       /* TSR_* type the value holds (0: unknown, taken as float) */
    bool f16;                /* float16 in the model, held as float32 in the plan (odn_f16.c) */
    const int64_t *i64;      /* a value input's int64 data, copied when the plan was built; else NULL */
    int64_t i64_count;
    const float *f32; /* a float32 value input's data (Resize/Upsample scales), likewise */
    int64_t f32_count;
    int producer; /* index of the piece node writing it, or -1 */
    int reader;   /* index of the first piece node reading it, or -1 */
    /* a per-channel Mul folded into the 1x1 convolution reading it
     * (odn_fold_scale.c): the value is defer_src times defer_scale and no
     * step computes it; NULL otherwise */
    struct odn_value *defer_src, *defer_scale;
} odn_value;

typedef struct odn_plan odn_plan;

/* The provider's options (tessera --provider-option onednn:KEY=VALUE). */
typedef struct odn_options {
    bool winograd;    /* winograd=0|1: 3x3 stride-1 convolutions may use Winograd */
    bool packed_gemm; /* packed_gemm=0|1: constant-weight matmuls may use odn_sgemm.c */
    bool attention;   /* attention=0|1: MatMul -> Softmax -> MatMul may run as odn_attention.c */
    /* int8_saturation=0|1 (default 0): on CPUs without VNNI, int8 ops use
     * oneDNN's int8 kernels even where their 16-bit pair sums may saturate,
     * as ONNX Runtime's MLAS does there (docs/onednn.md) */
    bool int8_saturation;
} odn_options;
typedef struct odn_const_cache odn_const_cache;
typedef struct odn_fill odn_fill;

/* A hash table from pointers to indices (odn_plan_index.c); putting a key
 * already there keeps the first index. */
typedef struct odn_index {
    const void **keys; /* NULL: empty slot */
    size_t *vals;
    size_t cap, count;
} odn_index;
bool odn_index_put(odn_index *x, const void *key, size_t val);
bool odn_index_get(const odn_index *x, const void *key, size_t *val);
void odn_index_free(odn_index *x);

/* A step that is not a oneDNN primitive: a C loop over plain memories. */
typedef tsr_status *(*odn_loop_fn)(const void *ctx, dnnl_memory_t src, dnnl_memory_t dst);

typedef struct odn_step {
    dnnl_primitive_t prim; /* NULL for a loop step */
    int nargs;
    dnnl_exec_arg_t args[ODN_MAX_ARGS];
    odn_loop_fn loop;
    const void *loop_ctx;
    const tsr_node *node; /* for error messages */
    char impl[64];        /* "convolution brgconv:avx512_core"; "" for a loop */
} odn_step;

struct odn_plan {
    bool fuse; /* absorb following nodes as post-ops (off when that left oneDNN without a fast kernel) */
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    bool winograd;    /* 3x3 stride-1 convolutions may use Winograd */
    bool packed_gemm; /* constant-weight matmuls may use the packed GEMM */
    bool attention;   /* MatMul -> Softmax -> MatMul may run as one attention step */
    /* int8 ops run as oneDNN's int8 primitives: their sums are exact here
     * (odn_int8_exact_plan), or the int8_saturation option allows them */
    bool int8_primitives;
    /* the packed GEMM's per-thread A blocks, shared by its steps (a plan's
     * steps run one at a time), sized for sgemm_threads (odn_build_sgemm.c) */
    float *sgemm_scratch;
    int sgemm_threads;
    /* the Winograd steps' scratch, the largest need (odn_build_conv_wino_f43.c) */
    struct odn_wino_scratch *wino_scratch;
    void *once_scratch; /* the scratchpad of constant reorders while building */
    size_t once_scratch_size;
    odn_const_cache *consts; /* the piece's, outliving the plan */
    /* built at compile time: the cache is filled after the build and host
     * weights held there alone are released (odn_release_consts.c) */
    bool release_consts;
    struct odn_fill *fills;
    size_t fill_count, fill_cap;
    const tsr_graph *piece;
    size_t node_count;
    const tsr_node **nodes;
    bool *done; /* node already turned into a step (itself or fused) */
    /* the node whose builder runs (odn_build_node): the primitive the
     * nodes after it fuse into as post-ops */
    const tsr_node *building;
    odn_value *values;
    size_t value_count, value_cap;
    odn_index value_index; /* value info -> position in values */
    odn_index node_index;  /* node -> position in nodes */
    odn_step *steps;
    size_t step_count, step_cap;
    /* memories whose handle is set at run time from an input or output */
    dnnl_memory_t *input_mems;  /* one per piece input, or NULL */
    dnnl_memory_t *output_mems; /* one per piece output */
    int64_t *input_dims;        /* the input shapes the plan was built for */
    int32_t *input_ranks;
    /* per piece input: the data of a value input (odn_is_value_input) the
     * plan was built for, a copy the plan owns; NULL for other inputs */
    const void **input_values;
    size_t *input_value_bytes;
    int32_t *input_value_types;
    /* owned buffers (folded weights etc.) freed with the plan */
    void **buffers;
    size_t buffer_count, buffer_cap;
    /* views: memories sharing another memory's buffer under another
     * descriptor (reshapes, transposed operands); re-pointed each run */
    dnnl_memory_t *view_mems, *view_bases;
    size_t view_count, view_cap, view_cap2;
    /* set by a builder before odn_fuse_post_ops: an Add of a same-shape
     * tensor nobody reads later may become a sum post-op that accumulates
     * into that tensor's buffer (oneDNN 2.6's fast convolutions take sum but
     * not a full-tensor binary post-op); sum_into is then that tensor */
    bool prefer_sum;
    odn_value *sum_into;
    /* set by a builder before odn_fuse_post_ops: the primitive computes in
     * a 2-D frame [rows, last dim], so binary operands are viewed that way */
    bool fuse_collapse_2d;
    /* set by a builder before odn_fuse_post_ops: absorb unary ops only (the
     * primitive's frame has no place for a broadcast operand) */
    bool fuse_no_binary;
    /* set by the binary builder: absorb only binary ops whose operand spans
     * the output (oneDNN 2.6's binary primitive applies a per-channel
     * binary post-op as a scalar, its channel 0, on [N>1, C, 1...]) */
    bool fuse_no_broadcast_binary;
    /* intermediates placed in one shared buffer by odn_arena_place */
    dnnl_memory_t *arena_mems;
    size_t arena_count, arena_cap;
    size_t arena_bytes;
    /* extra dnnl memories to destroy with the plan */
    dnnl_memory_t *mems;
    size_t mem_count, mem_cap;
};

/* Builds a plan for `piece` with the given input tensors (dims taken from
 * them; data unused) or, when `inputs` is NULL, from the shapes the graph
 * declares; fails with TSR_ERR_NOT_SUPPORTED when one is unknown
 * (odn_plan_build.c). */
tsr_status *odn_plan_build(dnnl_engine_t engine, dnnl_stream_t stream, const odn_options *opt, odn_const_cache *consts,
                           const tsr_graph *piece, const tsr_tensor *const *inputs, odn_plan **out);
void odn_plan_free(odn_plan *p);
/* Value inputs: non-constant int64 piece inputs (a Reshape's shape computed
 * at run time by Shape/Gather/Concat on another provider) of at most
 * ODN_MAX_VALUE_ELEMS elements. The plan reads their data on the host when
 * it is built, so a piece with one always builds at its first run, and a
 * plan is built for their values as well as for the input shapes. */
#define ODN_MAX_VALUE_ELEMS 16
bool odn_is_value_input(const tsr_value_info *vi);
/* Also value inputs: non-constant float32 1-D piece inputs that every node
 * of `piece` reading them reads as Resize's or Upsample's scales (torch's
 * F.interpolate(x, size=...) at opset 9-10 computes them from Shape). */
bool odn_is_scales_input(const tsr_graph *piece, const tsr_value_info *vi);
/* The float32 data of a constant or value input `vi` (NULL when neither). */
const float *odn_plan_f32(odn_plan *p, const tsr_value_info *vi, int64_t *count);
/* The int64 data `vi` has while the plan is built: its constant's, or the
 * value input's; NULL (count 0) when it has none or is not int64. */
const int64_t *odn_plan_i64(odn_plan *p, const tsr_value_info *vi, int64_t *count);
/* True when the inputs have the shapes the plan was built for, and value
 * inputs the same data. */
bool odn_plan_matches(const odn_plan *p, const tsr_tensor *const *inputs, size_t count);
tsr_status *odn_plan_run(odn_plan *p, tsr_run_context *ctx);

/* Gives every intermediate registered in arena_mems its place in one
 * buffer, sharing bytes between tensors whose lives (in steps) do not
 * overlap. Called once the plan's steps are final. */
tsr_status *odn_arena_place(odn_plan *p);
/* A memory holding constant `src` (layout `src_md`) in layout `md`:
 * reordered now into the piece's constant cache (huge pages when large
 * enough), or found there when an earlier plan of the piece did the same.
 * key1 is the host constant src comes from (its tensor data: it outlives
 * every plan, unlike a buffer of the plan's own, whose address a later
 * plan's could reuse); key2 what src was derived with, or NULL. */
tsr_status *odn_arena_const_as_keyed(odn_plan *p, const void *key1, const void *key2, dnnl_memory_t src,
                                     const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md, const tsr_node *n,
                                     dnnl_memory_t *out);
/* The same, for a caller that reads nothing of the result while the plan
 * is built: the reorder may wait until the plan is (odn_fill_deferred). */
tsr_status *odn_arena_const_deferred(odn_plan *p, const void *key1, const void *key2, dnnl_memory_t src,
                                     const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md, const tsr_node *n,
                                     dnnl_memory_t *out);

/* Constant weights in oneDNN's layouts, shared by every plan of a piece
 * (odn_consts.c). Entries are found by (key1, key2, source layout, layout);
 * add hands out a buffer for the caller to fill, found only once marked
 * ready. The cache owns every buffer until it is freed. */
odn_const_cache *odn_const_cache_new(void);
void odn_const_cache_free(odn_const_cache *c);
void *odn_const_cache_find(const odn_const_cache *c, const void *key1, const void *key2,
                           const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *md);
void *odn_const_cache_add(odn_const_cache *c, const void *key1, const void *key2, const dnnl_memory_desc_t *src_md,
                          const dnnl_memory_desc_t *md, size_t nbytes);
void odn_const_cache_ready(odn_const_cache *c, const void *data);
/* Keys whose host bytes went back to the host (odn_release_consts.c):
 * odn_const_cache_add refuses them, find still answers. mark is false
 * when out of memory. */
bool odn_const_cache_mark_released(odn_const_cache *c, const void *key1);
void odn_const_cache_unmark_released(odn_const_cache *c, const void *key1);
bool odn_const_cache_released(const odn_const_cache *c, const void *key1);
/* The piece's choice of int8 primitives (odn_int8_exact_plan), made by its
 * first plan from the weights' bytes: later plans may find them released.
 * -1 until set. */
int odn_const_cache_int8_choice(const odn_const_cache *c);
void odn_const_cache_set_int8_choice(odn_const_cache *c, bool int8);
tsr_status *odn_const_released_error(const tsr_node *n);
/* Filling the constant cache after a plan is built, releasing each host
 * weight once its last form is made (odn_release_consts.c). While
 * odn_fill_deferred, builders allocate a cache entry and add its fill
 * instead of filling it; odn_fills_run runs them when the plan is built. */
bool odn_fill_deferred(const odn_plan *p);
tsr_status *odn_fill_add_reorder(odn_plan *p, const void *key1, const tsr_node *n, dnnl_memory_t src,
                                 const dnnl_memory_desc_t *src_md, dnnl_memory_t dst, const dnnl_memory_desc_t *dst_md,
                                 void *buf);
tsr_status *odn_fill_add_pack(odn_plan *p, const void *key1, const tsr_node *n, const float *b, int64_t k,
                              int64_t cols, int64_t stride_k, int64_t stride_n, void *buf);
/* A fill by fn(ctx, buf): a form only its builder knows (ctx lives as long as the plan). */
tsr_status *odn_fill_add_fn(odn_plan *p, const void *key1, const tsr_node *n, void (*fn)(const void *ctx, void *buf),
                            const void *ctx, void *buf);
tsr_status *odn_fills_run(odn_plan *p);
/* A step of the plan reads v's constant from the cache only (fixed: in a
 * form any plan of the piece makes alike); once all of v's readers do,
 * its host bytes are released, now or after the plan's deferred fills. */
void odn_const_read_cached(odn_plan *p, odn_value *v, bool fixed);
void odn_fills_free(odn_plan *p);

/* Helpers for builders. */
odn_value *odn_plan_value(odn_plan *p, const tsr_value_info *vi); /* NULL when unknown */
/* The value of `vi`, added to the plan when new (the piece's values are
 * added as the plan is built); NULL when out of memory. */
odn_value *odn_plan_add_value(odn_plan *p, const tsr_value_info *vi);
/* Index of the node in the plan, or -1. */
int odn_plan_node_index(const odn_plan *p, const tsr_node *n);
/* The only node reading `v` inside the piece when `v` is not a piece output
 * and has exactly one reader that is not yet done; else NULL. */
const tsr_node *odn_plan_sole_consumer(const odn_plan *p, const odn_value *v);
/* Memory of `v` in plain row-major layout, adding a reorder step if needed. */
tsr_status *odn_plan_plain_mem(odn_plan *p, odn_value *v, const tsr_node *n, dnnl_memory_t *out);
/* Memory of `v` in layout `md`, reordering into a new memory if needed. When
 * `v` is constant the reorder runs now, once. */
tsr_status *odn_plan_mem_as(odn_plan *p, odn_value *v, const dnnl_memory_desc_t *md, const tsr_node *n,
                            dnnl_memory_t *out);
/* Gives `v` (a node output) its shape and layout. A piece output always gets
 * the plain layout, whatever `md` says (pass NULL for plain). */
tsr_status *odn_plan_define(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims, const dnnl_memory_desc_t *md,
                            const tsr_node *n);
/* Copies src (layout src_md) into dst (layout dst_md) now, once: for
 * constant data that is not a value of the piece (shifted int8 weights). */
tsr_status *odn_plan_reorder_now(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                                 const dnnl_memory_desc_t *dst_md, const tsr_node *n);
/* Appends a step copying src (layout src_md) into dst (layout dst_md). */
tsr_status *odn_plan_add_reorder(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                                 const dnnl_memory_desc_t *dst_md, const tsr_node *n);
/* Appends a primitive step built from `pd` (which the step takes over). */
tsr_status *odn_plan_add_primitive(odn_plan *p, const_dnnl_primitive_desc_t pd, const tsr_node *n,
                                   const dnnl_exec_arg_t *args, int nargs);
tsr_status *odn_plan_add_loop(odn_plan *p, odn_loop_fn fn, const void *ctx, dnnl_memory_t src, dnnl_memory_t dst,
                              const tsr_node *n);
/* A loop step with every memory it touches in args (for the arena's
 * lifetimes): args[0] is passed as its src, args[1] as its dst, the rest
 * it reaches through ctx. */
tsr_status *odn_plan_add_loop_args(odn_plan *p, odn_loop_fn fn, const void *ctx, const dnnl_exec_arg_t *args, int nargs,
                                   const tsr_node *n);
/* The same for a loop that also reads `also_read` (through its ctx): named
 * here so the arena keeps that memory alive up to this step. */
tsr_status *odn_plan_add_loop_with(odn_plan *p, odn_loop_fn fn, const void *ctx, dnnl_memory_t src, dnnl_memory_t dst,
                                   dnnl_memory_t also_read, const tsr_node *n);
/* The same for a loop that reads `reads` (NULL entries skipped) through
 * its ctx: zero points, scales and the like, which may be intermediates of
 * the piece (a DynamicQuantizeLinear's outputs) whose arena bytes must stay
 * theirs up to this step. */
tsr_status *odn_plan_add_loop_reading(odn_plan *p, odn_loop_fn fn, const void *ctx, dnnl_memory_t src,
                                      dnnl_memory_t dst, const dnnl_memory_t *reads, size_t nreads, const tsr_node *n);
/* A memory over `base`'s buffer described by `md` (same bytes, other
 * shape or strides). */
tsr_status *odn_plan_view(odn_plan *p, dnnl_memory_t base, const dnnl_memory_desc_t *md, const tsr_node *n,
                          dnnl_memory_t *out);
/* A view of `v`'s plain data with shape `dims` (same element count) and
 * row-major strides, or `strides` when given. */
tsr_status *odn_plan_plain_view(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims, const int64_t *strides,
                                const tsr_node *n, dnnl_memory_t *out, dnnl_memory_desc_t *md_out);
/* A memory for an intermediate in layout `md`, its buffer placed in the
 * plan's arena by odn_arena_place. */
tsr_status *odn_plan_arena_mem(odn_plan *p, const dnnl_memory_desc_t *md, const tsr_node *n, dnnl_memory_t *out);
/* A buffer the plan owns (freed with it); NULL on overflow or no memory. */
void *odn_plan_alloc(odn_plan *p, size_t nbytes);
/* A dnnl memory on `handle` (or allocated) that the plan destroys. */
/* Reorders constant src into dst now (odn_reorder_once.c); the scratchpad
 * it uses is the plan's until odn_reorder_once_done. */
tsr_status *odn_reorder_once(odn_plan *p, dnnl_memory_t src, const dnnl_memory_desc_t *src_md, dnnl_memory_t dst,
                             const dnnl_memory_desc_t *dst_md, const tsr_node *n);
void odn_reorder_once_done(odn_plan *p);
tsr_status *odn_plan_new_mem(odn_plan *p, const dnnl_memory_desc_t *md, void *handle, const tsr_node *n,
                             dnnl_memory_t *out);
/* Plain row-major f32 descriptor. */
dnnl_status_t odn_plain_md(dnnl_memory_desc_t *md, int32_t rank, const int64_t *dims);
/* Plain row-major descriptor of element type `dt`. */
dnnl_status_t odn_plain_md_typed(dnnl_memory_desc_t *md, int32_t rank, const int64_t *dims, dnnl_data_type_t dt);
/* The dnnl type of a TSR_* element type; dnnl_data_type_undef when none. */
dnnl_data_type_t odn_dnnl_type(int32_t tsr_type);
/* Element count, or -1 when it overflows. */
int64_t odn_numel(int32_t rank, const int64_t *dims);

/* --- float16 (odn_f16.c) -------------------------------------------------- */
/* Float16 values are computed in float32: converted from float16 where
 * they enter a piece (constants once, at build; inputs by a step of every
 * run), rounded back (to nearest even) where they leave it. */
/* True when `vi` (of model type `type`) is float16 and is held as float32
 * in plan `p`: every reader in the piece is a float op (not a quantization
 * op, which reads float16 scales as such). */
bool odn_f16_promoted(const odn_plan *p, const tsr_value_info *vi, int32_t type);
/* Fails (TSR_ERR_NOT_SUPPORTED, so the piece goes to another provider)
 * when a float op of the piece reads a float16 value that stays float16
 * because a quantization op reads it too. */
tsr_status *odn_f16_check(const odn_plan *p);
/* Sets up promoted piece input `v` (input `index`; `t` the constant or the
 * input tensor, or NULL): a float32 memory, and for a run-time input a
 * float16 boundary memory and the conversion step. */
tsr_status *odn_f16_input(odn_plan *p, odn_value *v, size_t index, const tsr_tensor *t);
/* The float16 boundary memory of promoted piece output `v`, after a step
 * rounding its float32 data into it. */
tsr_status *odn_f16_output(odn_plan *p, odn_value *v, dnnl_memory_t *out);
/* Element-wise conversions (F16C where the CPU has it; round to nearest
 * even; NaN stays NaN, overflow becomes infinity). */
void odn_f16_to_f32(const uint16_t *src, float *dst, int64_t count);
void odn_f32_to_f16(const float *src, uint16_t *dst, int64_t count);

/* --- one-value constants, float32 or float16 (odn_scalar_const.c) ---------- */
/* The value of a one-element float32 or float16 tensor (any rank); false
 * for anything else. */
bool odn_tensor_scalar(const tsr_tensor *t, float *out);
/* A one-element constant of the plan: its value, whether the model stores
 * it as float16, and whether there is one (ok). */
typedef struct odn_scalar {
    float value;
    bool half, ok;
} odn_scalar;
odn_scalar odn_value_scalar(odn_plan *p, const tsr_value_info *vi);
/* Whether `s` is the constant `want` as stored: a float32 one within
 * rel32 * |want| (0: exactly), a float16 one when `want` rounds to it. */
bool odn_scalar_near(odn_scalar s, double want, double rel32);

/* --- builders ------------------------------------------------------------ */
/* Turns node `index` (and any following nodes it absorbs) into steps with
 * the builder of its op's row (odn_ops.h). */
tsr_status *odn_build_node(odn_plan *p, size_t index);
/* Whether plan node n is shape arithmetic (odn_shape_calc.c), and its
 * builder: the value computed now, into its i64, with no step. */
bool odn_shape_calc_node(const odn_plan *p, const tsr_node *n);
tsr_status *odn_build_shape_calc(odn_plan *p, size_t index);
tsr_status *odn_build_conv(odn_plan *p, size_t index);
/* A depthwise 1-D convolution of constant float weights as a C loop
 * (odn_build_dwconv1d.c), wanted where oneDNN would pick its im2col kernel
 * for it (dims at the convolution's rank 4, oneDNN's conventions). */
bool odn_dwconv1d_wanted(odn_plan *p, const odn_value *x, const odn_value *w, const odn_value *b, int64_t group,
                         const dnnl_dims_t xd, const dnnl_dims_t wd, const dnnl_dims_t yd, const dnnl_dims_t strides,
                         const dnnl_dims_t dilation, const dnnl_dims_t pad_l, const dnnl_dims_t pad_r);
/* Explicit zero padding before a convolution oneDNN would otherwise leave to
 * its im2col kernel (odn_conv_pad.c): whether `padded` (a 4-D f32 source
 * layout) is one the loop writes (plain or channel-blocked; *tag), and the
 * step padding `x` (the same layout at the unpadded size) by pads {top,
 * left, bottom, right} into a new memory *out of layout `padded`. */
bool odn_conv_pad_tag(const dnnl_memory_desc_t *padded, dnnl_format_tag_t *tag);
tsr_status *odn_conv_pad_src(odn_plan *p, const tsr_node *n, dnnl_memory_t x, const dnnl_memory_desc_t *padded,
                             dnnl_format_tag_t tag, const int64_t pads[4], dnnl_memory_t *out);
/* A 2-D convolution of at most 4 output channels and constant float
 * weights as a C loop over 8-channel input blocks (odn_conv_small_oc.c),
 * where oneDNN's kernels waste most of their 8-channel output blocks;
 * `out` the output dims, the geometry in oneDNN's conventions. */
bool odn_conv_small_oc_wanted(const odn_value *x, const odn_value *w, const odn_value *b, int64_t group,
                              const int64_t *out);
tsr_status *odn_build_conv_small_oc(odn_plan *p, const tsr_node *n, odn_value *x, const odn_value *w,
                                    const odn_value *b, odn_value *y, const int64_t *out, const int64_t *strides,
                                    const int64_t *dilation, const int64_t *pad_l);
/* A ConvTranspose whose kernel equals its stride (see
 * odn_build_deconv_tiles.c) with kh * kw * M <= 4 on input channels a
 * multiple of 8, through the same loop (*handled false, nothing added,
 * when it does not apply). */
tsr_status *odn_build_deconv_tiles_small(odn_plan *p, const tsr_node *n, odn_value *x, const odn_value *w,
                                         const odn_value *b, odn_value *y, int64_t kh, int64_t kw, bool *handled);
tsr_status *odn_build_dwconv1d(odn_plan *p, const tsr_node *n, odn_value *x, const odn_value *w, const odn_value *b,
                               odn_value *y, const int64_t *out, int64_t stride, int64_t dil, int64_t pad);
tsr_status *odn_build_matmul(odn_plan *p, size_t index);
tsr_status *odn_build_gemm(odn_plan *p, size_t index);
/* Runs a matmul with constant 2-D weights (and bias, post-ops in `attr`
 * whose operands are post_args) as the packed-weights GEMM when oneDNN's
 * choice `pd` is its gemm:jit kernel (odn_build_sgemm.c). *done says
 * whether it did; when not, nothing was added to the plan. */
tsr_status *odn_sgemm_try(odn_plan *p, const tsr_node *n, const_dnnl_primitive_desc_t pd, const void *const_key,
                          dnnl_memory_t a_mem, const dnnl_memory_desc_t *a_md, dnnl_memory_t b_mem,
                          const dnnl_memory_desc_t *b_md, dnnl_memory_t bias_mem, const_dnnl_primitive_attr_t attr,
                          odn_value *last, int32_t onnx_rank, const int64_t *onnx_dims,
                          const dnnl_exec_arg_t *post_args, int npost, bool *done);
/* tanh-GELU as a C loop from `count` floats of src into dst (the same
 * memory or one of the same odn_md_flat_f32 layout; odn_gelu_loop.c),
 * where odn_gelu_loop_supported: oneDNN 2.6's gelu_tanh eltwise runs 4-5x
 * slower than its erf form on AVX2. */
bool odn_gelu_loop_supported(void);
tsr_status *odn_gelu_loop_add(odn_plan *p, const tsr_node *n, dnnl_memory_t src, dnnl_memory_t dst, int64_t count);
/* Appends the packed GEMM c = a x B (+ bias) as a step: a plain f32 [m, k]
 * with row stride lda, B packed by odn_sgemm_pack (k x cols, owned by the
 * piece's constant cache), c plain f32 [m, cols]. */
tsr_status *odn_sgemm_add_step(odn_plan *p, const tsr_node *n, int64_t m, int64_t cols, int64_t k, int64_t lda,
                               dnnl_memory_t a, const float *packed, const float *bias, dnnl_memory_t c);
tsr_status *odn_build_pool(odn_plan *p, size_t index);
tsr_status *odn_build_batchnorm(odn_plan *p, size_t index);
/* BatchNormalization of constant statistics on a plain input as a C loop
 * (odn_build_bn1d.c: oneDNN 2.6 has only ncsp_bnorm there); *handled
 * false when it does not apply. */
tsr_status *odn_bn_loop_try(odn_plan *p, size_t index, bool *handled);
tsr_status *odn_build_eltwise(odn_plan *p, size_t index);
tsr_status *odn_build_binary(odn_plan *p, size_t index);
/* PRelu (odn_build_prelu.c): a constant one-value slope as the eltwise
 * relu with that alpha, else oneDNN's prelu in X's layout (or plain) where
 * it has a JIT kernel, else a C loop over plain memories. */
tsr_status *odn_build_prelu(odn_plan *p, size_t index);
tsr_status *odn_build_softmax(odn_plan *p, size_t index);
tsr_status *odn_build_layernorm(odn_plan *p, size_t index);
tsr_status *odn_build_instnorm(odn_plan *p, size_t index); /* a C loop: odn_build_instnorm.c */
/* Pad (constant, reflect, edge, wrap; constant pads) as a C loop:
 * odn_build_pad.c */
int odn_pad_check(const tsr_node *n, char *why, size_t why_size);
tsr_status *odn_build_pad(odn_plan *p, size_t index);
/* Slice of float data with constant starts/ends/axes/steps as a C loop:
 * odn_build_slice.c */
int odn_slice_check(const tsr_node *n, char *why, size_t why_size);
tsr_status *odn_build_slice(odn_plan *p, size_t index);
/* Whether Slice takes data of element type t as bytes (bool, uint8, int8). */
bool odn_slice_byte_type(int32_t t);
/* Expand of float32 or one-byte data as a C loop (odn_build_expand.c). */
int odn_claim_expand(const tsr_node *n, char *why, size_t size);
tsr_status *odn_build_expand(odn_plan *p, size_t index);
/* ONNX's bidirectional broadcast of dims x (rank rx) and shape s (rank
 * rs) into out (rank *ro); false when they do not broadcast. */
bool odn_expand_dims(const int64_t *x, int32_t rx, const int64_t *s, int32_t rs, int64_t *out, int32_t *ro);
tsr_status *odn_build_reshape(odn_plan *p, size_t index); /* Reshape, Flatten, Identity */
tsr_status *odn_build_transpose(odn_plan *p, size_t index);
/* Transpose -> (Log)Softmax -> inverse Transpose from node `index` as one
 * softmax over the input's matching axis (odn_fuse_softmax.c); *handled
 * false when the pattern is not there. */
tsr_status *odn_fuse_transposed_softmax(odn_plan *p, size_t index, bool *handled);
/* MatMul -> score modifiers -> Softmax -> MatMul, from the first MatMul at
 * `index`, as one attention step (odn_build_attention.c); *handled false
 * (NULL returned) when the nodes are not that or the kernel does not take
 * them. */
tsr_status *odn_fuse_attention(odn_plan *p, size_t index, bool *handled);
/* When the only reader of matmul result `y` (dims `out`, rank r) is a
 * Transpose, a layout `md` whose strides make that Transpose's output plain
 * (odn_build_matmul.c); false otherwise. */
bool odn_matmul_transposed_dst(odn_plan *p, const odn_value *y, int32_t r, const int64_t *out, dnnl_memory_desc_t *md);
/* A bool value's memory (bytes, plain): its own once made; a constant's
 * data or, for a piece input, the input tensor's (odn_where.c). */
tsr_status *odn_bool_mem(odn_plan *p, odn_value *v, const tsr_node *n, dnnl_memory_t *out);
tsr_status *odn_build_erf(odn_plan *p, size_t index);
tsr_status *odn_build_concat(odn_plan *p, size_t index);
tsr_status *odn_build_split(odn_plan *p, size_t index);
/* 0 when Split node `n` on a rank-`rank` input (axis length `axis_dim`, -1
 * when unknown) is one we build; else a tsr_decline_reason with `why`. */
int odn_split_check(const tsr_node *n, int32_t rank, int64_t axis_dim, char *why, size_t size);
/* The format tag of v's layout among plain, channels-last and nChw16c
 * (odn_layout.c), or dnnl_format_tag_undef. */
dnnl_format_tag_t odn_layout_tag(const odn_value *v);
bool odn_layout_is_blocked(dnnl_format_tag_t tag);
/* The channel block of the blocked layouts oneDNN's fast kernels use on
 * this CPU (16 with AVX-512, 8 with AVX2), and that layout's tag for rank
 * 3-5 (undef otherwise). */
int odn_block(void);
/* A grouped convolution's constant weights w ([m, cin_g, taps]) with groups
 * merged so each holds a multiple of odn_block() channels, block-diagonal
 * (odn_conv_groups.c): the new group count and plan-owned weights
 * [m, cin_g * group / merged_group, taps]; false when not worth it. */
bool odn_conv_merge_groups(odn_plan *p, int64_t group, int64_t m, int64_t cin_g, int64_t taps, const float *w,
                           int64_t *merged_group, float **merged);
dnnl_format_tag_t odn_blocked_tag(int32_t rank);
/* Whether md can be walked as one flat float32 array: plain, or blocked
 * without padding, from offset 0 (odn_layout.c). */
bool odn_md_flat_f32(const dnnl_memory_desc_t *md);
/* The address of a float32 memory's first element (its buffer plus the
 * layout's offset0), or NULL. */
float *odn_mem_f32(dnnl_memory_t mem);
tsr_status *odn_build_deconv(odn_plan *p, size_t index);
bool odn_deconv_pads(const tsr_node *n, int32_t sp, int32_t i, int64_t in, int64_t st, int64_t dl, int64_t k,
                     int64_t op, int64_t *b0, int64_t *e0, int64_t *out_len);
/* ConvTranspose with kernel == stride as one batched matmul into the NHWC
 * output (odn_build_deconv_tiles.c); *handled false when it does not apply. */
tsr_status *odn_build_deconv_tiles(odn_plan *p, size_t index, bool *handled);
/* 2-D ConvTranspose as a matmul and a gather (odn_build_deconv_gemm.c);
 * *handled false when it does not apply. */
tsr_status *odn_build_deconv_gemm(odn_plan *p, size_t index, bool *handled);
tsr_status *odn_build_reduce(odn_plan *p, size_t index);
/* A Reduce* node's axes as per-dim flags (false when the axes are not
 * constant or out of range). */
bool odn_reduce_axes(const tsr_node *n, int32_t rank, bool *reduce);
/* A reduction node's operands, shared by the Reduce* builders. */
typedef struct odn_reduce_io {
    odn_value *x;
    int64_t kept[ODN_MAX_RANK]; /* x's dims with the reduced axes 1 */
    bool shrinks;               /* some reduced axis is longer than 1 */
    dnnl_memory_t src, dst;     /* dst seen at x's rank, with `kept` */
    dnnl_memory_desc_t src_md, dst_md;
} odn_reduce_io;
/* Defines the output (keepdims honoured) and fills io. */
tsr_status *odn_reduce_setup(odn_plan *p, const tsr_node *n, odn_reduce_io *io);
tsr_status *odn_build_logsum(odn_plan *p, size_t index); /* ReduceLogSum, ReduceLogSumExp */
tsr_status *odn_build_lrn(odn_plan *p, size_t index);
tsr_status *odn_build_resize(odn_plan *p, size_t index);
/* MatMulInteger, QLinearMatMul (odn_build_quant.c) and their claim check
 * (0, or a tsr_decline_reason with `why`). */
tsr_status *odn_build_quant_matmul(odn_plan *p, size_t index);
/* DynamicQuantizeLinear (a C loop) and exact integer-to-float Casts (a
 * reorder), so dynamically quantized matmuls stay in one piece
 * (odn_build_dynquant.c). */
int odn_dynquant_check(const tsr_node *n, char *why, size_t why_size);
tsr_status *odn_build_dynquant(odn_plan *p, size_t index);
tsr_status *odn_build_cast(odn_plan *p, size_t index);
int odn_quant_check(const tsr_node *n, char *why, size_t size);
/* 0 when Resize node `n` on an input of shape `in_dims` is one oneDNN's
 * resampling computes exactly (then out_dims and *linear are set); otherwise
 * a tsr_decline_reason with `why` naming the attribute. */
/* Resize/Upsample of a 4-D input as a C loop (odn_resize_loop.c) for the
 * mappings oneDNN's resampling lacks; the check says which it takes. */
int odn_resize_loop_check(const tsr_node *n, int32_t rank, char *why, size_t size);
bool odn_resize_shape(const tsr_node *n, const int64_t *in, int64_t *out, double *scales);
tsr_status *odn_resize_loop(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *y);
/* The same for Upsample (opsets 7-9): nearest by integer spatial factors. */
int odn_upsample_check(const tsr_node *n, int32_t rank, const int64_t *in_dims, int64_t *out_dims, char *why,
                       size_t size);
int odn_resize_check(const tsr_node *n, int32_t rank, const int64_t *in_dims, int64_t *out_dims, bool *linear,
                     char *why, size_t size);

/* Creates the primitive for `desc` with `attr`, defines `last` (the value the
 * primitive writes) from the dst layout oneDNN chose, and appends the step
 * with `args` plus DST. */
tsr_status *odn_build_finish(odn_plan *p, const tsr_node *n, const void *desc, dnnl_primitive_attr_t attr,
                             odn_value *last, int32_t rank, const int64_t *dims, dnnl_exec_arg_t *args, int nargs);

/* The same from a primitive descriptor the caller keeps (and destroys). */
tsr_status *odn_build_finish_pd(odn_plan *p, const tsr_node *n, const_dnnl_primitive_desc_t pd, odn_value *last,
                                int32_t rank, const int64_t *dims, dnnl_exec_arg_t *args, int nargs);

/* oneDNN's name for the implementation `pd` picked ("jit:uni", "ref:any"). */
const char *odn_impl_name(const_dnnl_primitive_desc_t pd);
/* True for oneDNN's reference implementations, which are never run: they
 * are tens to thousands of times slower than its JIT kernels. */
bool odn_impl_is_ref(const char *impl);
/* "2x3x4 strides 12:4:1" (dims, then strides of a blocked layout), for messages. */
void odn_md_text(const dnnl_memory_desc_t *md, char *buf, size_t size);
/* dnnl_primitive_desc_create, but a reference implementation counts as
 * none: dnnl_unimplemented, nothing to destroy. */
dnnl_status_t odn_pd_create(odn_plan *p, const void *desc, const_dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd);

/* An eltwise op as oneDNN sees it. */
typedef struct odn_eltwise {
    dnnl_alg_kind_t alg;
    float alpha, beta;
} odn_eltwise;
/* Up to two eltwise steps that compute node `n` (HardSigmoid needs two);
 * returns the count, 0 when `n` is not a unary op we map. */
int odn_eltwise_of(const tsr_node *n, odn_eltwise out[2]);
/* Appends one eltwise primitive from src to dst (both laid out as `md`). */
tsr_status *odn_eltwise_step(odn_plan *p, const tsr_node *n, const odn_eltwise *el, const dnnl_memory_desc_t *md,
                             dnnl_memory_t src, dnnl_memory_t dst);

/* A 3x3 stride-1 convolution, dilated up to 4, on the AVX2 Winograd kernel
 * where oneDNN has none (odn_build_conv_wino_f43.c): whether its shape
 * fits, and the build,
 * given the post-ops already fused (po, nargs, sum_into), the filter's
 * floats w_data (maybe a folded copy, cached under key2; NULL: w's own) and
 * bias floats (NULL: none). *handled false (and NULL returned): the
 * post-ops or layouts do not fit and the caller builds oneDNN's. */
/* The plan's Winograd scratch (both kernels' steps; they run one at a
 * time): grown to at least `bytes` (64-byte aligned) as steps are built,
 * its buffer read at run time. */
tsr_status *odn_wino_scratch_grow(odn_plan *p, const tsr_node *n, size_t bytes, const struct odn_wino_scratch **out);
void *odn_wino_scratch_buf(const struct odn_wino_scratch *s);
bool odn_conv_wino_f43_wanted(odn_plan *p, const odn_value *x, const odn_value *w, int64_t group,
                              const int64_t *strides, const int64_t *dilation, const int64_t *pad_l,
                              const int64_t *out);
tsr_status *odn_build_conv_wino_f43(odn_plan *p, const tsr_node *n, odn_value *x, odn_value *w, const float *w_data,
                                    const void *key2, const float *bias, odn_value *last, odn_value *sum_into,
                                    const int64_t *out, const int64_t *dilation, const int64_t *pad_l,
                                    const_dnnl_post_ops_t po, int nargs, bool *handled);

/* Winograd with the activation run after it (odn_conv_wino.c): true when
 * every post-op in `po` is an unscaled eltwise (at most ODN_WINO_TAIL_MAX),
 * copied to `tail`; and whether oneDNN has a JIT kernel for each on `md`. */
#define ODN_WINO_TAIL_MAX 4
bool odn_conv_wino_tail(const_dnnl_post_ops_t po, odn_eltwise *tail, int *count);
bool odn_conv_wino_tail_fast(odn_plan *p, const odn_eltwise *tail, int count, const dnnl_memory_desc_t *md);

/* y = a OP b by broadcasting as a C loop over plain memories, for shapes
 * oneDNN has no fast binary kernel for; da/db are a's and b's dims padded
 * to `rank`. */
/* A per-channel Mul whose one reader is a 1x1 convolution, folded into its
 * weights (odn_fold_scale.c): whether y = a * s may be, and the step that
 * writes the scaled weights (w_md: the convolution's weights layout) each
 * run into a new memory, *out. */
bool odn_fold_scale_fits(odn_plan *p, const odn_value *a, const odn_value *y, const int64_t *dims, const int64_t *db);
tsr_status *odn_fold_scale_weights(odn_plan *p, const tsr_node *n, odn_value *scale, dnnl_memory_t w_mem,
                                   const dnnl_memory_desc_t *w_md, int64_t m, int64_t c, dnnl_memory_t *out);
/* A per-channel operand over a 4-D float tensor in nChw16c or NHWC, applied
 * in that layout by a C loop (odn_channel_loop.c). */
bool odn_channel_loop_fits(const odn_value *a, const char *op, int32_t rank, const int64_t *dims, const int64_t *db);
tsr_status *odn_build_channel_loop(odn_plan *p, const tsr_node *n, odn_value *a, odn_value *b, odn_value *y,
                                   const int64_t *dims, const int64_t *db);
tsr_status *odn_build_binary_loop(odn_plan *p, const tsr_node *n, odn_value *a, odn_value *b, odn_value *y,
                                  int32_t rank, const int64_t *dims, const int64_t *da, const int64_t *db);
/* One step of that loop over plain memories already made: y = a alg b,
 * y of `dims` (y may be a: accumulating in place). */
tsr_status *odn_binary_loop_step(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, dnnl_memory_t ma,
                                  dnnl_memory_t mb, dnnl_memory_t my, int32_t rank, const int64_t *dims,
                                  const int64_t *da, const int64_t *db);
/* Sum, Mean, Max, Min of any number of inputs (odn_build_variadic.c). */
tsr_status *odn_build_variadic(odn_plan *p, size_t index);

/* C-loop steps over plain float32 memories for what oneDNN has only a
 * reference kernel for (odn_loops.c). */
bool odn_eltwise_loop_known(dnnl_alg_kind_t alg);
tsr_status *odn_eltwise_loop(odn_plan *p, const tsr_node *n, const odn_eltwise *el, int64_t count, dnnl_memory_t src,
                             dnnl_memory_t dst);
/* softmax (or log-softmax) over the middle of [outer, axis, inner] */
tsr_status *odn_softmax_loop(odn_plan *p, const tsr_node *n, int64_t outer, int64_t axis, int64_t inner, bool log,
                             dnnl_memory_t src, dnnl_memory_t dst);
/* Reduce* of `alg` (oneDNN's reduction algorithms; power for the norms)
 * over the flagged dims of a plain [dims] input into the plain kept-dims
 * output */
tsr_status *odn_reduce_loop(odn_plan *p, const tsr_node *n, dnnl_alg_kind_t alg, float power, int32_t rank,
                            const int64_t *dims, const bool *reduce, dnnl_memory_t src, dnnl_memory_t dst);

/* Binary algorithms by op type; 0 when not binary. */
dnnl_alg_kind_t odn_binary_alg(const char *op_type);

/* LSTM, GRU, RNN on oneDNN's RNN primitive (odn_build_rnn.c) and their
 * claim check (odn_claim_rnn.c: 0, or a tsr_decline_reason with `why`). */
tsr_status *odn_build_rnn(odn_plan *p, size_t index);
int odn_rnn_check(const tsr_node *n, char *why, size_t size);
/* True for an RNN primitive whose kernels are JIT ones although oneDNN 2.6
 * names its non-brgemm RNN implementation "ref" (see odn_build_rnn.c). */
bool odn_rnn_impl_ok(const_dnnl_primitive_desc_t pd);

/* --- fusion -------------------------------------------------------------- */
/* An empty post-op list and primitive attributes for a builder to fill;
 * the caller destroys both. */
tsr_status *odn_post_ops_new(const tsr_node *n, dnnl_post_ops_t *po, dnnl_primitive_attr_t *attr);
/* Given the node at `index` whose output `v` a primitive is about to produce
 * with `rank`/`dims`, absorbs following single-consumer eltwise and binary
 * nodes into `po` (adding their extra operands to `args`). Returns the value
 * the primitive really produces (the last absorbed node's output). */
tsr_status *odn_fuse_post_ops(odn_plan *p, odn_value *v, int32_t rank, const int64_t *dims, dnnl_post_ops_t po,
                              dnnl_exec_arg_t *args, int *nargs, odn_value **last);

/* When `x` feeds exactly a Gelu written out in primitive ops, marks those
 * nodes done and sets *out to the Gelu's output. */
bool odn_fuse_gelu(odn_plan *p, const odn_value *x, odn_value **out);
/* The same for the tanh approximation written out (gelu_tanh). */
bool odn_fuse_gelu_tanh(odn_plan *p, const odn_value *x, odn_value **out);

/* When ReduceMean node `index` starts a LayerNorm written out in primitive
 * ops, builds it as one layer normalization, marks its nodes done and sets
 * *handled; else leaves everything as it was. */
tsr_status *odn_fuse_layernorm(odn_plan *p, size_t index, bool *handled);
/* When Pow/Mul node `index` squares the input of an RMSNorm written out in
 * primitive ops, builds it as one C loop (odn_fuse_rmsnorm.c), marks its
 * nodes done and sets *handled; else leaves everything as it was. */
tsr_status *odn_fuse_rmsnorm(odn_plan *p, size_t index, bool *handled);

/* When `x` feeds exactly `x * Sigmoid(x)` or `x * HardSigmoid(x)` (as
 * HardSwish), marks those nodes done, sets *el to the one eltwise that
 * computes it and *out to the Mul's output. */
bool odn_fuse_gated_act(odn_plan *p, const odn_value *x, odn_eltwise *el, odn_value **out);
/* When node `index` starts one of those activations on a value no
 * primitive absorbed it into, builds it as one eltwise step (*handled). */
tsr_status *odn_build_written_act(odn_plan *p, size_t index, bool *handled);

/* Writes the reason a node is declined into why[size] and returns `reason`
 * (a tsr_decline_reason), for claim checks. */
int odn_decline(char *why, size_t size, int reason, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
