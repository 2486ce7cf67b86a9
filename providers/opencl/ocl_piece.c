/* Compiling and running pieces: each node (or fused group) becomes a step;
 * values passed between steps of one piece stay in private device buffers,
 * and only the piece's outputs go through the host's allocator.
 *
 * Buffer lifetimes within a run: a value's slot is `owned` when it holds a
 * reference this run must drop (a private buffer it created, or a view's
 * retained reference to its base's buffer); piece inputs and host-allocated
 * outputs are the host's. Every owned reference is dropped when the run
 * ends, after the last step was enqueued; OpenCL keeps a buffer alive until
 * the commands using it have finished, so nothing waits here.
 *
 * What a step sees while it runs, and the ops call, is in ocl_exec.c: the
 * driver calls the ops, the ops call ocl_exec_*, never the other way. */
#include <stdlib.h>
#include <string.h>

#include "ocl_exec.h"
#include "ocl_fuse.h"
#include "ocl_names.h"
#include "ocl_piece.h"

/* Which slot of a run's value array each value uses, worked out once at
 * compile: finding values by name at run time was a scan of every value
 * for every step input and output, quadratic in big pieces. */
typedef struct piece_slots {
    ocl_slot *proto; /* what a run's slots start as: names and output indices */
    size_t n;
    size_t *of_input;  /* piece input i -> slot */
    size_t *of_step;   /* each step's inputs, then outputs -> slot (SIZE_MAX: none) */
    size_t *step_base; /* where step k's entries start in of_step */
    size_t scratch;    /* the slot "" of omitted outputs; SIZE_MAX when none */
} piece_slots;

typedef struct ocl_piece {
    ocl_state *st;
    const tsr_graph *graph;
    ocl_step *steps;
    size_t n_steps;
    piece_slots slots;
    ocl_program_set programs; /* what compile asked for: its blob's programs */
} ocl_piece;

/* --- value slots (built at compile) ------------------------------------- */

static void slots_free(piece_slots *sl) {
    free(sl->proto);
    free(sl->of_input);
    free(sl->of_step);
    free(sl->step_base);
    memset(sl, 0, sizeof *sl);
}

/* Every value name in first-seen order: the piece's inputs, then each
 * step's outputs ("" for an omitted one), (name, position) pairs sorted. */
static bool seen_names(const ocl_piece *p, ocl_names *t) {
    size_t ni = ocl_host->graph_input_count(p->graph), pos = 0;
    for (size_t i = 0; i < ni; i++)
        if (!ocl_names_add(t, ocl_host->value_name(ocl_host->graph_input(p->graph, i)), pos++)) return false;
    for (size_t k = 0; k < p->n_steps; k++)
        for (size_t o = 0; o < p->steps[k].n_out; o++) {
            const char *nm = p->steps[k].out_names[o];
            if (!ocl_names_add(t, nm ? nm : "", pos++)) return false;
        }
    ocl_names_sort(t);
    return true;
}

/* slot[pos]: one slot per distinct name, numbered in first-seen order (the
 * order runs always used); a repeated name shares its first one's slot. */
static size_t number_slots(const ocl_names *t, size_t *slot) {
    for (size_t a = 0, b; a < t->n; a = b) {
        for (b = a; b < t->n && strcmp(t->refs[b].name, t->refs[a].name) == 0; b++)
            slot[t->refs[b].index] = t->refs[a].index; /* the first position of the name */
    }
    size_t n = 0;
    for (size_t pos = 0; pos < t->n; pos++) slot[pos] = slot[pos] == pos ? n++ : slot[slot[pos]];
    return n;
}

/* The slot of a value by name, SIZE_MAX when no slot has it. */
static size_t slot_named(const ocl_names *t, const size_t *slot, const char *name) {
    size_t first;
    return ocl_names_find(t, name, &first) ? slot[t->refs[first].index] : SIZE_MAX;
}

/* Names and piece output indices of the slots a run starts from. */
static tsr_status *fill_proto(piece_slots *sl, const ocl_names *t, const size_t *slot, const tsr_graph *graph) {
    ocl_names outputs = {0};
    tsr_status *s = ocl_names_of_outputs(&outputs, graph);
    for (size_t pos = 0; pos < t->n && !s; pos++) {
        const ocl_name_ref *r = &t->refs[pos]; /* visits every position once */
        ocl_slot *v = &sl->proto[slot[r->index]];
        size_t first;
        v->name = r->name;
        /* sorted by index within a name: the first match is the first output */
        v->out_index = r->name[0] && ocl_names_find(&outputs, r->name, &first) ? outputs.refs[first].index : SIZE_MAX;
    }
    ocl_names_free(&outputs);
    return s;
}

/* Each step's inputs and outputs -> slots. */
static void map_steps(piece_slots *sl, const ocl_piece *p, const ocl_names *t, const size_t *slot) {
    size_t e = 0, pos = ocl_host->graph_input_count(p->graph);
    for (size_t k = 0; k < p->n_steps; k++) {
        const ocl_step *step = &p->steps[k];
        sl->step_base[k] = e;
        for (size_t i = 0; i < step->n_in; i++)
            sl->of_step[e++] = slot_named(t, slot, step->in_names[i]); /* NULL: SIZE_MAX */
        for (size_t o = 0; o < step->n_out; o++) sl->of_step[e++] = slot[pos++];
    }
}

static tsr_status *slots_build(ocl_piece *p) {
    piece_slots *sl = &p->slots;
    size_t ni = ocl_host->graph_input_count(p->graph), entries = 0;
    for (size_t k = 0; k < p->n_steps; k++) entries += p->steps[k].n_in + p->steps[k].n_out;
    ocl_names t = {0};
    bool ok = seen_names(p, &t);
    size_t *slot = ok ? malloc(sizeof *slot * (t.n + 1)) : NULL;
    sl->n = slot ? number_slots(&t, slot) : 0;
    sl->proto = calloc(sl->n + 1, sizeof *sl->proto);
    sl->of_input = malloc(sizeof *sl->of_input * (ni + 1));
    sl->of_step = malloc(sizeof *sl->of_step * (entries + 1));
    sl->step_base = malloc(sizeof *sl->step_base * (p->n_steps + 1));
    tsr_status *s = NULL;
    if (!slot || !sl->proto || !sl->of_input || !sl->of_step || !sl->step_base)
        s = ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (value slots)");
    if (!s) s = fill_proto(sl, &t, slot, p->graph);
    if (!s) {
        for (size_t i = 0; i < ni; i++) sl->of_input[i] = slot[i];
        map_steps(sl, p, &t, slot);
        sl->scratch = slot_named(&t, slot, "");
    }
    ocl_names_free(&t);
    free(slot);
    return s;
}

/* --- compile / run / release -------------------------------------------- */

void ocl_piece_release(void *ps) {
    ocl_piece *p = ps;
    if (!p) return;
    ocl_consts_drop(p->st, p);
    for (size_t i = 0; i < p->n_steps; i++) ocl_step_free(&p->steps[i]);
    free(p->steps);
    slots_free(&p->slots);
    free(p->programs.index);
    free(p);
}

tsr_status *ocl_piece_compile(void *state, const tsr_graph *graph, void **out) {
    ocl_state *st = state;
    if (!st->have_device) return ocl_error(TSR_ERR_PROVIDER, "opencl: no device");
    ocl_piece *p = calloc(1, sizeof *p);
    if (!p) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    p->st = st;
    p->graph = graph;
    /* every program the steps ask for is listed: the piece's blob holds them */
    st->recording = &p->programs;
    tsr_status *s = ocl_fuse_steps(st, graph, &p->steps, &p->n_steps);
    st->recording = NULL;
    if (!s) s = slots_build(p);
    /* The host uploads constant inputs from this memory, which lives until
     * release: those writes need not block (ocl_transfer.c). */
    size_t ni = ocl_host->graph_input_count(graph);
    for (size_t i = 0; i < ni && !s; i++) {
        const tsr_tensor *c = ocl_host->value_constant(ocl_host->graph_input(graph, i));
        if (c && c->memory_kind == TSR_MEMORY_HOST) s = ocl_consts_add(st, p, c->data, c->nbytes);
    }
    if (s) {
        ocl_piece_release(p);
        return s;
    }
    *out = p;
    return NULL;
}

ocl_state *ocl_piece_owner(const void *ps) { return ((const ocl_piece *)ps)->st; }

const ocl_program_set *ocl_piece_programs(const void *ps) { return &((const ocl_piece *)ps)->programs; }

uint64_t ocl_piece_plan(const void *ps) {
    const ocl_piece *p = ps;
    uint64_t h = ocl_fnv(OCL_FNV_SEED, &p->n_steps, sizeof p->n_steps);
    for (size_t k = 0; k < p->n_steps; k++) {
        const ocl_step *step = &p->steps[k];
        h = ocl_fnv_str(h, step->op ? step->op->op_type : NULL);
        h = ocl_fnv_str(h, ocl_host->node_name(step->node));
        h = ocl_fnv(h, &step->n_in, sizeof step->n_in);
        for (size_t i = 0; i < step->n_in; i++) h = ocl_fnv_str(h, step->in_names[i]);
        h = ocl_fnv(h, &step->n_out, sizeof step->n_out);
        for (size_t o = 0; o < step->n_out; o++) h = ocl_fnv_str(h, step->out_names[o]);
    }
    return h;
}

/* Piece input i's tensor into its slot. */
static tsr_status *bind_input(ocl_piece *p, tsr_run_context *ctx, ocl_slot *vals, size_t i) {
    ocl_slot *v = &vals[p->slots.of_input[i]];
    const tsr_tensor *t = ocl_host->run_input(ctx, i);
    if (!t) return NULL;
    if (t->memory_kind != TSR_MEMORY_DEVICE)
        return ocl_error(TSR_ERR_PROVIDER, "opencl: input '%s' is not in device memory", v->name);
    if (!ocl_tensor_fill(&v->t, t->elem_type, t->rank, t->dims))
        return ocl_error(TSR_ERR_INVALID_ARGUMENT, "opencl: input '%s' has an unsupported type or rank", v->name);
    v->t.mem = (cl_mem)t->data;
    v->present = true;
    return NULL;
}

static tsr_status *run_step(ocl_piece *p, size_t k, tsr_run_context *ctx, ocl_slot *vals) {
    const ocl_step *step = &p->steps[k];
    const size_t *in = p->slots.of_step + p->slots.step_base[k];
    ocl_exec x = {.st = p->st,
                  .step = step,
                  .ctx = ctx,
                  .vals = vals,
                  .in_slot = in,
                  .out_slot = in + step->n_in,
                  .scratch = p->slots.scratch};
    /* The scratch slot for omitted outputs is reusable per step. */
    ocl_slot *scratch = x.scratch != SIZE_MAX ? &vals[x.scratch] : NULL;
    if (scratch && scratch->present) {
        if (scratch->owned) clReleaseMemObject(scratch->t.mem);
        scratch->present = scratch->owned = false;
    }
    ocl_state *st = p->st;
    uint64_t k0 = st->kernels, c0 = st->copies, v0 = st->views;
    size_t slot = ocl_stats_begin(st, ocl_host->node_op_type(step->node));
    tsr_status *s = step->op->run(&x, step->op_state);
    ocl_stats_end(st, slot, st->kernels - k0, st->copies - c0, st->views - v0);
    if (s) {
        tsr_status *w =
            ocl_error(ocl_host->status_code(s), "opencl: node '%s' (%s): %s", ocl_host->node_name(step->node),
                      ocl_host->node_op_type(step->node), ocl_host->status_message(s));
        ocl_host->status_free(s);
        s = w;
    }
    return s;
}

tsr_status *ocl_piece_run(void *ps, tsr_run_context *ctx) {
    ocl_piece *p = ps;
    size_t n = p->slots.n;
    ocl_slot *vals = malloc(sizeof *vals * (n + 1));
    if (!vals) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    memcpy(vals, p->slots.proto, sizeof *vals * n);
    tsr_status *s = NULL;
    size_t ni = ocl_host->graph_input_count(p->graph);
    for (size_t i = 0; i < ni && !s; i++) s = bind_input(p, ctx, vals, i);
    for (size_t k = 0; k < p->n_steps && !s; k++) s = run_step(p, k, ctx, vals);
    for (size_t i = 0; i < n; i++)
        if (vals[i].owned && vals[i].t.mem) clReleaseMemObject(vals[i].t.mem);
    free(vals);
    p->st->runs++;
    ocl_profile_collect(p->st);
    return s;
}
