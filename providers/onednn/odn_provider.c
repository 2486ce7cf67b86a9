/* The oneDNN provider's plugin entry: options, the device, claims grouped
 * into connected pieces, and compiled pieces that run as oneDNN plans. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <omp.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "odn.h"
#include "odn_threads.h"

const tsr_host_api *odn_host;

typedef struct odn_state {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    int threads;           /* threads a run wants: intra_op_threads, else OpenMP's default */
    odn_options opt;       /* winograd, packed_gemm, attention (default 1), int8_saturation (0) */
    odn_group_memo groups; /* the last claim's groups (odn_group.c) */
} odn_state;

/* A plan per input-shape set (and value inputs' data), so inputs that alternate between sizes
 * (dynamic batch, sequence lengths) do not rebuild every run; the least
 * recently used goes when all are taken. The plans share the reordered
 * weights (consts), so another slot costs its intermediates only. */
#define ODN_PLAN_SLOTS 4

typedef struct odn_plan_slot {
    odn_plan *plan; /* NULL while free */
    int threads;    /* the OpenMP thread count its primitives were made for */
    uint64_t used;  /* the piece's run count when it last ran */
} odn_plan_slot;

typedef struct odn_piece {
    odn_state *state;
    const tsr_graph *graph;
    odn_const_cache *consts;
    odn_plan_slot slots[ODN_PLAN_SLOTS];
    uint64_t runs;
    int full_runs;          /* runs in a row that could have had more threads than the plan's */
    const odn_plan *latest; /* the plan that ran (or was built) last */
    char *description;      /* piece_describe's answer, rebuilt on each call */
} odn_piece;

static tsr_status *odn_create(const tsr_provider_config *config, void **state) {
    odn_options opt = {.winograd = true, .packed_gemm = true, .attention = true};
    for (size_t i = 0; i < config->option_count; i++) {
        const char *k = config->option_keys[i], *v = config->option_values[i];
        bool flag = strcmp(v, "0") == 0 || strcmp(v, "1") == 0;
        if (flag && strcmp(k, "winograd") == 0) {
            opt.winograd = v[0] == '1';
            continue;
        }
        if (flag && strcmp(k, "packed_gemm") == 0) {
            opt.packed_gemm = v[0] == '1';
            continue;
        }
        if (flag && strcmp(k, "attention") == 0) {
            opt.attention = v[0] == '1';
            continue;
        }
        if (flag && strcmp(k, "int8_saturation") == 0) {
            opt.int8_saturation = v[0] == '1';
            continue;
        }
        return odn_node_error(NULL, TSR_ERR_INVALID_ARGUMENT,
                              "option '%s=%s' is not known (known: winograd=0|1, packed_gemm=0|1, attention=0|1, "
                              "int8_saturation=0|1)",
                              k, v);
    }
    odn_state *s = calloc(1, sizeof *s);
    if (!s) return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    s->opt = opt;
    /* OpenMP's default is read here, on the creating thread: later runs
     * change their own thread's count with omp_set_num_threads */
    s->threads = config->intra_op_threads > 0 ? config->intra_op_threads : omp_get_max_threads();
    dnnl_status_t st = dnnl_engine_create(&s->engine, dnnl_cpu, 0);
    if (st == dnnl_success) st = dnnl_stream_create(&s->stream, s->engine, dnnl_stream_default_flags);
    if (st != dnnl_success) {
        if (s->engine) dnnl_engine_destroy(s->engine);
        free(s);
        return odn_dnnl_error(NULL, "CPU engine creation", st);
    }
    *state = s;
    return NULL;
}

static void odn_destroy(void *state) {
    odn_state *s = state;
    if (!s) return;
    dnnl_stream_destroy(s->stream);
    dnnl_engine_destroy(s->engine);
    odn_group_memo_clear(&s->groups);
    free(s);
}

static size_t odn_device_count(void *state) {
    (void)state;
    return 1;
}

static tsr_status *odn_device_info(void *state, size_t index, tsr_device_info *info) {
    (void)state;
    if (index != 0) return odn_host->status_new(TSR_ERR_INVALID_ARGUMENT, "onednn: no such device");
    static char details[96];
    const dnnl_version_t *v = dnnl_version();
    snprintf(details, sizeof details, "oneDNN %d.%d.%d, OpenMP", v->major, v->minor, v->patch);
    info->name = "host CPU";
    info->vendor = "oneDNN";
    if (TSR_HAS_MEMBER(info, tsr_device_info, details)) info->details = details;
    info->kind = TSR_DEVICE_CPU;
    info->memory_kind = TSR_MEMORY_HOST;
    info->memory_bytes = 0;
    return NULL;
}

/* Run-time Resize/Upsample scales are read when a plan is built, so they
 * must come from outside the piece: the nodes computing them (a Div and a
 * Concat of float vectors, which the provider could run) are left to
 * others. */
static void leave_scales_producers(const tsr_graph *graph, bool *claimed, tsr_claim_sink *sink) {
    size_t n = odn_host->graph_node_count(graph);
    for (size_t j = 0; j < n; j++) {
        const tsr_node *r = odn_host->graph_node(graph, j);
        const char *op = odn_host->node_op_type(r);
        bool upsample = strcmp(op, "Upsample") == 0;
        if (!claimed[j] || (!upsample && strcmp(op, "Resize") != 0)) continue;
        size_t k = upsample || odn_host->node_opset(r) < 11 ? 1 : 2;
        const tsr_value_info *sv = odn_input(r, k);
        if (!sv || odn_host->value_constant(sv) || odn_host->value_elem_type(sv) != TSR_FLOAT) continue;
        for (size_t i = 0; i < n; i++) {
            const tsr_node *m = odn_host->graph_node(graph, i);
            for (size_t o = 0; claimed[i] && o < odn_host->node_output_count(m); o++)
                if (odn_host->node_output(m, o) == sv) {
                    claimed[i] = false;
                    odn_host->decline_node(
                        sink, m, TSR_DECLINE_OTHER,
                        "computes Resize scales, which the plan reads when it is built (from outside its piece)");
                }
        }
    }
}

/* Groups the claimed nodes into pieces, first giving up shape arithmetic
 * (odn_shape_calc.c) whose values would leave its piece. */
static tsr_status *claim_groups(const tsr_graph *graph, bool *claimed, const bool *shape_node, odn_group_memo *memo,
                                tsr_claim_sink *sink) {
    size_t n = odn_host->graph_node_count(graph);
    int *group = malloc((n + 1) * sizeof *group), groups = 0;
    if (!group) return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    tsr_status *s;
    bool again;
    do {
        s = odn_group_assign(graph, claimed, memo, group, &groups);
        again = !s && odn_shape_calc_unclaim(graph, claimed, shape_node, group, sink);
        /* a node gone from inside a group can leave a path out of it and back
         * (which the host would split anywhere, a shape value from its
         * reader): group afresh, not from the memo this grouping just saved */
        if (again && memo) odn_group_memo_clear(memo);
    } while (again);
    if (!s) s = odn_group_emit(graph, group, groups, sink);
    free(group);
    return s;
}

static tsr_status *odn_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    odn_state *st = state;
    size_t n = odn_host->graph_node_count(graph);
    bool *claimed = calloc(n + 1, sizeof *claimed), *shape_node = calloc(n + 1, sizeof *shape_node);
    if (!claimed || !shape_node || !odn_shape_calc_mark(graph, shape_node)) {
        free(claimed);
        free(shape_node);
        return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const tsr_node *node = odn_host->graph_node(graph, i);
        char why[256] = "";
        int reason = shape_node[i] ? 0 : odn_claim_check(node, why, sizeof why);
        if (reason) odn_host->decline_node(sink, node, reason, why);
        else claimed[i] = true;
    }
    leave_scales_producers(graph, claimed, sink);
    tsr_status *s = claim_groups(graph, claimed, shape_node, &st->groups, sink);
    free(claimed);
    free(shape_node);
    return s;
}

/* Takes `count` threads for the calling thread's oneDNN work: OpenMP's
 * thread count is per calling thread, so two sessions on two threads each
 * keep their own. */
static void use_threads(int count) { omp_set_num_threads(count); }

static void odn_release(void *piece_state) {
    odn_piece *p = piece_state;
    if (!p) return;
    for (size_t i = 0; i < ODN_PLAN_SLOTS; i++) odn_plan_free(p->slots[i].plan);
    odn_const_cache_free(p->consts); /* after the plans whose memories point into it */
    free(p->description);
    free(p);
}

/* True when the plan can be built before any run: every input shape is
 * known and no input is a value input, whose data the plan is built for. */
static bool input_shapes_known(const tsr_graph *graph) {
    for (size_t i = 0; i < odn_host->graph_input_count(graph); i++) {
        const tsr_value_info *v = odn_host->graph_input(graph, i);
        if (odn_is_value_input(v) || odn_is_scales_input(graph, v)) return false;
        int32_t rank = odn_host->value_rank(v);
        if (rank < 0) return false;
        for (int32_t d = 0; d < rank; d++)
            if (odn_host->value_dim(v, d) < 0) return false;
    }
    return true;
}

static tsr_status *odn_compile(void *state, const tsr_graph *graph, void **piece_state) {
    odn_piece *p = calloc(1, sizeof *p);
    if (!p) return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    p->state = state;
    p->graph = graph;
    p->consts = odn_const_cache_new();
    /* With every shape known, build now: weights get reordered once here.
     * A shape known only at run time defers the build to the first run. */
    tsr_status *s = p->consts ? NULL : odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    if (!s && input_shapes_known(graph)) {
        int threads = odn_threads_reserve(p->state->threads);
        use_threads(threads);
        s = odn_plan_build(p->state->engine, p->state->stream, &p->state->opt, p->consts, graph, NULL,
                           &p->slots[0].plan);
        p->slots[0].threads = threads;
        p->latest = p->slots[0].plan;
        odn_threads_release(threads);
    }
    if (s) {
        odn_release(p);
        return s;
    }
    *piece_state = p;
    return NULL;
}

/* A run takes its threads from the process-wide budget (odn_threads.c).
 * oneDNN fixes a primitive's thread count when it is created (its kernels
 * split the work for that many), so a plan made for more threads than the
 * run got is rebuilt for fewer at once, and one made for fewer is rebuilt
 * for all the run wants after GROW_AFTER runs in a row that could have had
 * them (so alternating load does not rebuild every run); in between it runs
 * with its own count and hands the surplus back. oneDNN's primitive cache
 * keeps both versions, so a rebuild mostly costs the constant weights'
 * reorders. */
#define GROW_AFTER 8

static double ms_between(const struct timespec *a, const struct timespec *b) {
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
}
static tsr_status *odn_run(void *piece_state, tsr_run_context *ctx) {
    odn_piece *p = piece_state;
    int want = p->state->threads, threads = odn_threads_reserve(want);
    size_t n_in = odn_host->run_input_count(ctx);
    const tsr_tensor *stack_inputs[16];
    const tsr_tensor **inputs = n_in <= 16 ? stack_inputs : calloc(n_in, sizeof *inputs);
    if (!inputs) {
        odn_threads_release(threads);
        return odn_host->status_new(TSR_ERR_NO_MEMORY, "onednn: out of memory");
    }
    for (size_t i = 0; i < n_in; i++) inputs[i] = odn_host->run_input(ctx, i);
    tsr_status *s = NULL;
    /* the slot whose plan fits these shapes, else a free or the least
     * recently used one */
    odn_plan_slot *slot = NULL;
    for (size_t i = 0; i < ODN_PLAN_SLOTS && !slot; i++)
        if (p->slots[i].plan && odn_plan_matches(p->slots[i].plan, inputs, n_in)) slot = &p->slots[i];
    bool fits = slot != NULL;
    for (size_t i = 0; i < ODN_PLAN_SLOTS && !slot; i++)
        if (!p->slots[i].plan) slot = &p->slots[i];
    if (!slot) {
        slot = &p->slots[0];
        for (size_t i = 1; i < ODN_PLAN_SLOTS; i++)
            if (p->slots[i].used < slot->used) slot = &p->slots[i];
    }
    p->full_runs = fits && slot->threads < threads && threads == want ? p->full_runs + 1 : 0;
    bool rebuild = !fits || slot->threads > threads || p->full_runs >= GROW_AFTER;
    if (!rebuild && slot->threads < threads) {
        odn_threads_release(threads - slot->threads);
        threads = slot->threads;
    }
    use_threads(threads);
    if (rebuild) {
        odn_plan_free(slot->plan);
        slot->plan = NULL;
        s = odn_plan_build(p->state->engine, p->state->stream, &p->state->opt, p->consts, p->graph, inputs,
                           &slot->plan);
        slot->threads = threads;
        p->full_runs = 0;
    }
    slot->used = ++p->runs;
    p->latest = slot->plan;
    if (inputs != stack_inputs) free(inputs);
    if (!s) {
        /* watched for contention only where it matters: more than one
         * thread, or under the cap (to lift it) */
        bool watch = threads > 1 || odn_threads_capped();
        struct timespec w0, w1, c0, c1;
        if (watch) {
            clock_gettime(CLOCK_MONOTONIC, &w0);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        }
        s = odn_plan_run(slot->plan, ctx);
        if (watch) {
            clock_gettime(CLOCK_MONOTONIC, &w1);
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
            bool was = odn_threads_capped();
            odn_threads_observe(threads, ms_between(&w0, &w1), ms_between(&c0, &c1));
            /* said once per change, so a user comparing thread counts knows */
            if (was != odn_threads_capped())
                odn_host->log(TSR_LOG_INFO, "onednn",
                              was ? "cores free again: runs take their full thread count"
                                  : "other processes hold the cores: runs use one thread until they are free");
        }
    }
    odn_threads_release(threads);
    return s;
}

/* The oneDNN implementation of each primitive of the latest plan, in step
 * order ("convolution brgconv:avx512_core;binary jit:uni"); C loops are
 * named "loop" and their op ("loop Softmax"). */
static const char *odn_piece_describe(void *piece_state) {
    odn_piece *p = piece_state;
    const odn_plan *plan = p ? p->latest : NULL;
    if (!plan) return NULL;
    size_t size = 1;
    for (size_t i = 0; i < plan->step_count; i++) size += strlen(plan->steps[i].impl) + 6;
    char *d = realloc(p->description, size);
    if (!d) return NULL;
    p->description = d;
    size_t len = 0;
    d[0] = 0;
    for (size_t i = 0; i < plan->step_count; i++) {
        const char *impl = plan->steps[i].impl[0] ? plan->steps[i].impl : "loop";
        len += (size_t)snprintf(d + len, size - len, "%s%s", i ? ";" : "", impl);
    }
    return d;
}

static const tsr_provider odn_provider = {
    .struct_size = sizeof(tsr_provider),
    .name = "onednn",
    .vendor = "Tessera",
    .version = "0.1.0",
    .create = odn_create,
    .destroy = odn_destroy,
    .device_count = odn_device_count,
    .device_info = odn_device_info,
    .claim = odn_claim,
    .compile = odn_compile,
    .run = odn_run,
    .release = odn_release,
    .piece_describe = odn_piece_describe,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) {
    if (args->host_abi_min > TSR_PROVIDER_ABI_VERSION || args->host_abi_max < 1)
        return args->host->status_new(TSR_ERR_ABI, "onednn provider implements ABI 1 only");
    odn_host = args->host;
    args->abi_version = TSR_PROVIDER_ABI_VERSION;
    args->provider = &odn_provider;
    return NULL;
}
