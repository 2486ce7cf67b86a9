/* The host side of constant_release: a provider that keeps a weight in a
 * form of its own (reordered, packed) says its piece will not read the
 * constant's bytes again, and once no reader is left the host hands the
 * memory back. Without it a model's weights sit in memory twice for the
 * session's life (BERT-base: 324 MiB as loaded, 324 MiB packed).
 *
 * The bytes are dropped with madvise(MADV_DONTNEED) rather than freed: the
 * tensor keeps its address, which providers use as the key of what they
 * derived from it, and a stray read finds zeros instead of freed memory. */
#include "constant_release.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host_log.h"
#include "status.h"

static const ir_value *real_value(const ir_value *v) {
    for (int d = 0; v && v->is_outer && v->outer && d <= IR_MAX_GRAPH_DEPTH; d++) v = v->outer;
    return v;
}

static bool node_reads(const ir_node *n, const ir_value *r) {
    for (size_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && real_value(n->inputs[i]) == r) return true;
    return false;
}

/* Nodes of g and of every graph below it that read r, counting a graph
 * output that is r as a reader no provider can release. */
static size_t readers_in(const ir_graph *g, const ir_value *r, int depth) {
    size_t count = 0;
    for (size_t i = 0; i < g->n_outputs; i++)
        if (real_value(g->outputs[i]) == r) count++;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (node_reads(n, r)) count++;
        if (depth >= IR_MAX_GRAPH_DEPTH) continue;
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            if (at->g) count += readers_in(at->g, r, depth + 1);
            for (size_t k = 0; at->graphs && k < at->count; k++)
                if (at->graphs[k]) count += readers_in(at->graphs[k], r, depth + 1);
        }
    }
    return count;
}

/* The pages wholly inside the tensor's buffer go back to the system. */
static void drop_bytes(const ir_value *r, ir_tensor *t) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || !t->data) return;
    char msg[512];
    snprintf(msg, sizeof msg, "constant '%s' (%zu bytes) is held by its readers' providers alone; its bytes are freed",
             r->name ? r->name : "", t->nbytes);
    host_log(TSR_LOG_INFO, "host", msg);
    uintptr_t begin = ((uintptr_t)t->data + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page;
    uintptr_t end = ((uintptr_t)t->data + t->nbytes) / (uintptr_t)page * (uintptr_t)page;
    if (end > begin) (void)madvise((void *)begin, end - begin, MADV_DONTNEED); /* advice: keeping them is correct */
    t->bytes_released = true;
}

tsr_status *constant_release(struct tsr_graph *piece, const ir_value *value) {
    const ir_value *r = real_value(value);
    if (!piece || !piece->compiled_piece)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "constant_release: not a compiled piece");
    if (!r || !r->constant) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "constant_release: not a constant");
    size_t inside = 0;
    for (size_t i = 0; i < piece->n_nodes; i++)
        if (node_reads(piece->nodes[i], r)) inside++;
    if (!inside)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "constant_release: no node of the piece reads '%s'", r->name);
    if (r->constant->bytes_released) return NULL;
    for (size_t i = 0; i < piece->n_released; i++)
        if (piece->released[i] == r) return NULL; /* released before: counted once */
    const ir_value **grown = realloc(piece->released, (piece->n_released + 1) * sizeof *grown);
    if (!grown) return TSR_NO_MEMORY();
    piece->released = grown;
    piece->released[piece->n_released++] = r;
    ir_value *w = (ir_value *)r; /* the session's own IR: the count is host bookkeeping */
    w->released_readers += inside;
    const ir_graph *root = piece->ir;
    while (root && root->parent) root = root->parent;
    if (root && root->model) root->model->constants_released = true;
    /* an input a caller may feed, a value kept for observation or one the
     * host hands out keeps its bytes */
    if (r->is_graph_input || r->is_graph_output || r->observed) return NULL;
    if (root && w->released_readers >= readers_in(root, r, 0)) drop_bytes(r, w->constant);
    return NULL;
}
