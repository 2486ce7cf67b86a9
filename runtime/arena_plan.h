/* A session's planned arena for the host tensors its kernels make (ONNX
 * Runtime's "memory pattern"): after one run with a set of input shapes,
 * each intermediate's size and lifetime are known, so later runs with the
 * same shapes place them at planned offsets of one block instead of
 * allocating each (runtime/arena_plan.c). */
#ifndef TESSERA_RUNTIME_ARENA_PLAN_H
#define TESSERA_RUNTIME_ARENA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph_plan.h"
#include "rt_tensor.h"

/* Plans kept per session (one per input-shape signature, least recently
 * used goes first) and idle blocks kept between runs. */
#define ARENA_MAX_PLANS 4
#define ARENA_MAX_IDLE_BLOCKS 2
/* Every placed tensor starts on this boundary (oneDNN and vector loads
 * want 64). */
#define ARENA_ALIGN 64

typedef struct arena_plans arena_plans;
struct arena_plan;
struct arena_block;
struct arena_record;

/* One run's use of the arena: on the caller's stack, between
 * arena_run_begin and arena_run_end. Fields are arena_plan.c's. */
typedef struct arena_run {
    arena_plans *a; /* NULL: the run neither places nor records */
    const graph_plan *gp;
    struct arena_plan *plan;   /* the plan placed by, or being recorded */
    struct arena_block *block; /* where this run places (placing runs) */
    bool recording;
    bool grew;                /* a planned tensor came larger than planned */
    struct arena_record *rec; /* recording: every request, in order */
    size_t n_rec, cap_rec;
    bool rec_failed;            /* out of memory while recording: plan nothing */
    uint64_t placed, allocated; /* tensors placed in the block / allocated one by one */
} arena_run;

/* What the pieces' run contexts carry (struct tsr_run_context.place_user):
 * the run and the piece, to tell which planned tensor a request is. */
typedef struct arena_piece {
    arena_run *run;
    size_t piece;
    size_t n_scratch; /* scratch requests so far in this piece run */
} arena_piece;

/* What the arena did; tests and reports read it. */
typedef struct arena_stats {
    uint64_t plans;         /* plans kept now */
    uint64_t blocks;        /* idle blocks kept now */
    uint64_t block_bytes;   /* their bytes together (tensor region and dims) */
    uint64_t planned_bytes; /* tensor region of the plan the last run used; 0: none */
    uint64_t placed;        /* tensors the last run placed in a block */
    uint64_t allocated;     /* host tensors the last run's kernels had allocated one
                              * by one (graph outputs, unplanned or too large ones) */
    uint64_t runs_placed;   /* runs so far that placed from a plan */
} arena_stats;

/* A session's arena, with no plan yet; NULL when out of memory (runs then
 * allocate every tensor). */
arena_plans *arena_plans_new(void);
/* From now on a tensor that comes larger than planned is planned half as
 * large again (not just as large) when the plan grows: a control-flow
 * body's tensor that grows every iteration (a sequence built up, a range
 * to the iteration count) then re-plans a logarithmic number of times, not
 * once per iteration. Call before the first run. */
void arena_plans_grow_ahead(arena_plans *a);
/* Frees plans and blocks; no run may be in progress. */
void arena_plans_free(arena_plans *a);
/* Starts a run of gp (the session's main graph, or a control-flow body)
 * whose inputs have the shape signature sig[len] (session.h's shape_sig;
 * bodies use none: len 0, one plan): it places into a block
 * when a plan for sig is known, records the sizes otherwise. Never fails:
 * without memory, or with a NULL `a`, the run allocates as before. Safe
 * from several threads on one arena; each run gets a block of its own. */
void arena_run_begin(arena_plans *a, const graph_plan *gp, const int64_t *sig, size_t len, arena_run *r);
/* Ends the run: a recording run that succeeded (ok) makes its plan; the
 * block goes back to the pool. Every tensor the run placed must have been
 * released. */
void arena_run_end(arena_run *r, bool ok);
/* The run context's place hook (core/run_context.h; user is an
 * arena_piece): places host tensor
 * request `index` (an output of the piece, or (size_t)-1 for scratch) of
 * `bytes` in the run's block as a borrowed slot; false to allocate it as
 * usual. */
bool arena_place(void *user, size_t index, size_t bytes, int32_t elem_type, int32_t rank, const int64_t *dims,
                 rt_tensor *slot);
void arena_plans_stats(arena_plans *a, arena_stats *out);

#endif
