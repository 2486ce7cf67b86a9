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

static bool piece_output(const char *name, void *arg) {
    const tsr_graph *g = arg;
    size_t n = ocl_host->graph_output_count(g);
    for (size_t i = 0; i < n; i++)
        if (strcmp(ocl_host->value_name(ocl_host->graph_output(g, i)), name) == 0) return true;
    return false;
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

static bool step_makes(const ocl_step *s, const char *name) {
    for (size_t o = 0; o < s->n_out; o++)
        if (s->out_names[o] && strcmp(s->out_names[o], name) == 0) return true;
    return false;
}

/* Steps are made at their group's first node, but a fused group may read
 * a node that comes later in node order (a view of another piece input
 * that joined this piece); order the steps so each runs after the steps
 * it reads from. Stable: already ordered steps keep their order. */
static bool order_steps(ocl_step *steps, size_t n) {
    ocl_step *sorted = malloc(sizeof *sorted * (n + 1));
    bool *done = calloc(n + 1, sizeof *done);
    bool ok = sorted && done;
    for (size_t taken = 0; ok && taken < n;) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++) {
            if (done[i]) continue;
            bool ready = true;
            for (size_t k = 0; k < steps[i].n_in && ready; k++) {
                const char *in = steps[i].in_names[k];
                for (size_t j = 0; in && j < n && ready; j++)
                    if (!done[j] && j != i && step_makes(&steps[j], in)) ready = false;
            }
            if (ready) pick = i;
        }
        if (pick == n) ok = false; /* a cycle: leave the order alone */
        else {
            done[pick] = true;
            sorted[taken++] = steps[pick];
        }
    }
    if (ok) memcpy(steps, sorted, sizeof *steps * n);
    free(sorted);
    free(done);
    return ok;
}

tsr_status *ocl_fuse_steps(ocl_state *st, const tsr_graph *graph, ocl_step **out, size_t *n_out) {
    size_t n = ocl_host->graph_node_count(graph);
    const tsr_node **nodes = calloc(n + 1, sizeof *nodes);
    bool *supported = calloc(n + 1, sizeof *supported);
    bool *taken = calloc(n + 1, sizeof *taken);
    ocl_step *steps = calloc(n + 1, sizeof *steps);
    size_t ns = 0;
    tsr_status *s = NULL;
    if (!nodes || !supported || !taken || !steps) {
        s = ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        nodes[i] = ocl_host->graph_node(graph, i);
        supported[i] = true;
    }
    for (size_t i = 0; i < n && !s; i++) {
        if (taken[i]) continue;
        ocl_group g;
        ocl_group_from(nodes, n, i, supported, taken, piece_output, (void *)graph, &g);
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
            s = ocl_anchor_step(st, members[0], g.has_bn ? members[1] : NULL,
                                g.has_bias ? members[1] : NULL, members + first_epi,
                                g.count - first_epi, step);
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
    free(nodes);
    free(supported);
    free(taken);
    *out = steps;
    *n_out = ns;
    return s;
}
