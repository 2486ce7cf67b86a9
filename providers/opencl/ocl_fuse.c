/* Compiling a piece's nodes into steps, fusing as ocl_group.c decides. */
#include <stdlib.h>
#include <string.h>

#include "ocl_fuse.h"
#include "ocl_group.h"

void ocl_step_free(ocl_step *s) {
    if (s->op && s->op->release) s->op->release(s->op_state);
    free(s->in_names);
    free(s->out_names);
    memset(s, 0, sizeof *s);
}

/* `arg`: the piece's outputs, a sorted ocl_names. */
static bool piece_output(const char *name, void *arg) {
    size_t first;
    return ocl_names_find(arg, name, &first) > 0;
}

/* A step for one node through its op table entry. */
static tsr_status *single_step(ocl_state *st, const tsr_node *n, ocl_step *step) {
    const ocl_op *op = ocl_op_find(ocl_host->node_op_type(n));
    if (!op) return ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: no op '%s'", ocl_host->node_op_type(n));
    size_t ni = ocl_host->node_input_count(n), no = ocl_host->node_output_count(n);
    step->in_names = calloc(ni + 1, sizeof *step->in_names);
    step->out_names = calloc(no + 1, sizeof *step->out_names);
    if (!step->in_names || !step->out_names) return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
    for (size_t i = 0; i < ni; i++) {
        const tsr_value_info *v = ocl_host->node_input(n, i);
        step->in_names[i] = v ? ocl_host->value_name(v) : NULL;
    }
    for (size_t i = 0; i < no; i++) {
        const tsr_value_info *v = ocl_host->node_output(n, i);
        step->out_names[i] = v ? ocl_host->value_name(v) : NULL;
    }
    step->n_in = ni;
    step->n_out = no;
    step->node = n;
    tsr_status *s = op->prepare ? op->prepare(st, n, &step->op_state) : NULL;
    if (!s) step->op = op;
    return s;
}

/* (name, step) for every named input (or output) of the steps, sorted. */
static bool step_names(const ocl_step *steps, size_t n, bool outputs, ocl_names *t) {
    for (size_t i = 0; i < n; i++) {
        size_t count = outputs ? steps[i].n_out : steps[i].n_in;
        const char *const *names = outputs ? steps[i].out_names : steps[i].in_names;
        for (size_t k = 0; k < count; k++)
            if (names[k] && !ocl_names_add(t, names[k], i)) return false;
    }
    ocl_names_sort(t);
    return true;
}

/* A binary min-heap of step indices: the ready step that comes first. */
static void heap_push(size_t *h, size_t *n, size_t v) {
    size_t i = (*n)++;
    for (; i && h[(i - 1) / 2] > v; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n) {
    size_t top = h[0], last = h[--*n], i = 0;
    for (size_t c; (c = 2 * i + 1) < *n; i = c) {
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= last) break;
        h[i] = h[c];
    }
    h[i] = last;
    return top;
}

/* waits[i] = how many (input of step i, other step making it) pairs there
 * are; step i is ready when all those makers have run. */
static void count_waits(const ocl_step *steps, size_t n, const ocl_names *makers, size_t *waits) {
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < steps[i].n_in; k++) {
            size_t first, c = ocl_names_find(makers, steps[i].in_names[k], &first);
            for (size_t m = first; m < first + c; m++) waits[i] += makers->refs[m].index != i;
        }
}

/* Step `done` ran: its readers wait for one pair less per value it makes. */
static void release_readers(const ocl_step *done, size_t index, const ocl_names *readers, size_t *waits, size_t *heap,
                            size_t *nh) {
    for (size_t o = 0; o < done->n_out; o++) {
        size_t first, c = ocl_names_find(readers, done->out_names[o], &first);
        for (size_t r = first; r < first + c; r++) {
            size_t i = readers->refs[r].index;
            if (i != index && --waits[i] == 0) heap_push(heap, nh, i);
        }
    }
}

/* Steps are made at their group's first node, but a fused group may read
 * a node that comes later in node order (a view of another piece input
 * that joined this piece); order the steps so each runs after the steps
 * it reads from. Stable: of the ready steps, the first in the current order
 * runs next, so already ordered steps keep their order. Kahn's algorithm
 * with a heap and name tables (n log n); a scan of every step for every
 * input was cubic in big pieces. */
static bool order_steps(ocl_step *steps, size_t n) {
    ocl_names makers = {0}, readers = {0};
    ocl_step *sorted = malloc(sizeof *sorted * (n + 1));
    size_t *waits = calloc(n + 1, sizeof *waits);
    size_t *heap = malloc(sizeof *heap * (n + 1)), nh = 0, taken = 0;
    bool ok = sorted && waits && heap && step_names(steps, n, true, &makers) && step_names(steps, n, false, &readers);
    if (ok) {
        count_waits(steps, n, &makers, waits);
        for (size_t i = 0; i < n; i++)
            if (!waits[i]) heap_push(heap, &nh, i);
        while (nh) {
            size_t pick = heap_pop(heap, &nh);
            sorted[taken++] = steps[pick];
            release_readers(&steps[pick], pick, &readers, waits, heap, &nh);
        }
        ok = taken == n; /* else a cycle: leave the order alone */
    }
    if (ok) memcpy(steps, sorted, sizeof *steps * n);
    ocl_names_free(&makers);
    ocl_names_free(&readers);
    free(sorted);
    free(waits);
    free(heap);
    return ok;
}

tsr_status *ocl_fuse_steps(ocl_state *st, const tsr_graph *graph, ocl_step **out, size_t *n_out) {
    /* Built once: who reads each value, and the piece's outputs, by name. */
    ocl_nodes l;
    ocl_names outputs = {0};
    tsr_status *s = ocl_nodes_init(&l, graph);
    if (!s) s = ocl_names_of_outputs(&outputs, graph);
    size_t n = l.n;
    const tsr_node *const *nodes = l.at;
    bool *supported = calloc(n + 1, sizeof *supported);
    bool *taken = calloc(n + 1, sizeof *taken);
    ocl_step *steps = calloc(n + 1, sizeof *steps);
    size_t ns = 0;
    if (s) goto done;
    if (!supported || !taken || !steps) {
        s = ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) supported[i] = true;
    for (size_t i = 0; i < n && !s; i++) {
        if (taken[i]) continue;
        ocl_group g;
        ocl_group_from(&l, i, supported, taken, piece_output, &outputs, &g);
        const tsr_node *members[OCL_GROUP_MAX];
        for (size_t k = 0; k < g.count; k++) {
            members[k] = nodes[g.members[k]];
            taken[g.members[k]] = true;
        }
        ocl_step *step = &steps[ns++];
        if (g.kind == OCL_GROUP_ELEMENTWISE) {
            s = ocl_ew_group_step(st, members, g.count, step);
        } else if (g.kind == OCL_GROUP_ANCHOR) {
            size_t first_epi = g.has_bn || g.has_bias ? 2 : 1;
            s = ocl_anchor_step(st, members[0], g.has_bn ? members[1] : NULL, g.has_bias ? members[1] : NULL,
                                members + first_epi, g.count - first_epi, step);
        } else {
            s = single_step(st, members[0], step);
        }
    }
    if (!s && !order_steps(steps, ns))
        s = ocl_error(TSR_ERR_NOT_SUPPORTED, "opencl: the fused steps of this piece form a cycle");
done:
    if (s && steps) {
        for (size_t k = 0; k < ns; k++) ocl_step_free(&steps[k]);
        free(steps);
        steps = NULL;
        ns = 0;
    }
    ocl_nodes_free(&l);
    ocl_names_free(&outputs);
    free(supported);
    free(taken);
    *out = steps;
    *n_out = ns;
    return s;
}
