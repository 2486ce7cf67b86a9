/* A min-heap of positions (size_t) in a caller's array: Kahn's algorithm
 * that always takes the earliest ready item keeps an order that is already
 * sorted as it was (graph_check.c for nodes, partition.c for pieces). */
#ifndef TESSERA_INDEX_HEAP_H
#define TESSERA_INDEX_HEAP_H

#include <stddef.h>

static inline void index_heap_push(size_t *h, size_t *n, size_t v) {
    size_t i = (*n)++;
    h[i] = v;
    while (i > 0 && h[(i - 1) / 2] > h[i]) {
        size_t p = (i - 1) / 2, t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

/* The smallest position; *n must be > 0. */
static inline size_t index_heap_pop(size_t *h, size_t *n) {
    size_t top = h[0], i = 0;
    h[0] = h[--(*n)];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l] < h[m]) m = l;
        if (r < *n && h[r] < h[m]) m = r;
        if (m == i) break;
        size_t t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
    return top;
}

#endif
