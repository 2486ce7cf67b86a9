/* Sorted name tables (see ocl_names.h). */
#include <stdlib.h>
#include <string.h>

#include "ocl_names.h"

bool ocl_names_add(ocl_names *t, const char *name, size_t index) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        ocl_name_ref *g = realloc(t->refs, sizeof *g * cap);
        if (!g) return false;
        t->refs = g;
        t->cap = cap;
    }
    t->refs[t->n++] = (ocl_name_ref){name, index};
    return true;
}

static int ref_cmp(const void *a, const void *b) {
    const ocl_name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

void ocl_names_sort(ocl_names *t) {
    if (t->n > 1) qsort(t->refs, t->n, sizeof *t->refs, ref_cmp);
}

/* The first pair whose name is above `name` (upper) or not below it. */
static size_t bound(const ocl_names *t, const char *name, bool upper) {
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->refs[mid].name, name);
        if (c < 0 || (upper && c == 0)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Binary searches both ends: a value read by 100,000 nodes costs as
 * little to find as one read once. */
size_t ocl_names_find(const ocl_names *t, const char *name, size_t *first) {
    *first = 0;
    if (!name) return 0;
    *first = bound(t, name, false);
    return bound(t, name, true) - *first;
}

void ocl_names_free(ocl_names *t) {
    free(t->refs);
    memset(t, 0, sizeof *t);
}

tsr_status *ocl_names_of_outputs(ocl_names *t, const tsr_graph *graph) {
    size_t no = ocl_host->graph_output_count(graph);
    for (size_t i = 0; i < no; i++)
        if (!ocl_names_add(t, ocl_host->value_name(ocl_host->graph_output(graph, i)), i))
            return ocl_error(TSR_ERR_NO_MEMORY, "opencl: out of memory (output names)");
    ocl_names_sort(t);
    return NULL;
}
