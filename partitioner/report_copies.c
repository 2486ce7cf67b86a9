/* Where tensors cross memories: the same rule the executor applies in
 * run_piece (a piece reads a value held in another memory: copy; a constant
 * headed for a device: copied once and kept) and at the end of graph_run (a
 * graph output on a device is read back). */
#include "report_copies.h"

#include <stdlib.h>

static const provider_inst *memory_of(provider_inst *const *provs, size_t prov_index) {
    const provider_inst *pi = provs[prov_index];
    return pi->memory_kind == TSR_MEMORY_DEVICE ? pi : NULL;
}

size_t report_producer_piece(const partition *p, const ir_value *v) {
    if (!v->producer) return REPORT_HOST;
    for (size_t i = 0; i < p->n_pieces; i++) {
        const struct tsr_graph *w = p->pieces[i].view;
        for (size_t k = 0; k < w->n_outputs; k++)
            if (w->outputs[k] == v) return i;
    }
    return REPORT_HOST;
}

const provider_inst *report_holder(const partition *p, provider_inst *const *provs, const ir_value *v) {
    size_t i = report_producer_piece(p, v);
    return i == REPORT_HOST ? NULL : memory_of(provs, p->pieces[i].prov_index);
}

bool report_value_bytes(const ir_value *v, uint64_t *bytes) {
    if (v->constant) {
        if (v->constant->elem_type == TSR_STRING) return false;
        *bytes = v->constant->nbytes;
        return true;
    }
    const ir_type *t = &v->type;
    if (t->kind != IR_TYPE_TENSOR || t->rank < 0 || t->elem_type == TSR_STRING) return false;
    uint64_t count = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t n = t->dims[d].value;
        if (n < 0) return false;
        if (n && count > UINT64_MAX / (uint64_t)n) return false;
        count *= (uint64_t)n;
    }
    size_t b;
    if (!ir_elem_bytes(t->elem_type, count, &b)) return false;
    *bytes = b;
    return true;
}

static bool push(report_copy **arr, size_t *n, size_t *cap, report_copy c) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        report_copy *na = realloc(*arr, nc * sizeof *na);
        if (!na) return false;
        *arr = na;
        *cap = nc;
    }
    c.bytes_known = report_value_bytes(c.value, &c.bytes);
    if (!c.bytes_known) c.bytes = 0;
    (*arr)[(*n)++] = c;
    return true;
}

/* Whether v already crossed into memory `to`: the executor keeps such a
 * copy until v's last reader, so later readers there share it. */
static bool already(const report_copy *arr, size_t n, const ir_value *v, const provider_inst *to) {
    for (size_t i = 0; i < n; i++)
        if (arr[i].value == v && arr[i].to == to) return true;
    return false;
}

bool report_copies(const partition *p, provider_inst *const *provs, report_copy **out, size_t *count) {
    report_copy *arr = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    for (size_t i = 0; i < p->n_pieces && ok; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        const provider_inst *to = memory_of(provs, p->pieces[i].prov_index);
        for (size_t k = 0; k < v->n_inputs && ok; k++) {
            const ir_value *iv = v->inputs[k];
            const provider_inst *from = report_holder(p, provs, iv);
            if (from == to || already(arr, n, iv, to)) continue;
            report_copy c = {.value = iv,
                             .from_piece = report_producer_piece(p, iv),
                             .to_piece = i,
                             .from = from,
                             .to = to,
                             .once_per_session = iv->constant && !iv->producer && to};
            ok = push(&arr, &n, &cap, c);
        }
    }
    for (size_t i = 0; i < p->n_pieces && ok; i++) {
        const struct tsr_graph *v = p->pieces[i].view;
        const provider_inst *from = memory_of(provs, p->pieces[i].prov_index);
        if (!from) continue;
        for (size_t k = 0; k < v->n_outputs && ok; k++) {
            if (!v->outputs[k]->is_graph_output || already(arr, n, v->outputs[k], NULL)) continue;
            report_copy c = {
                .value = v->outputs[k], .from_piece = i, .to_piece = REPORT_HOST, .from = from, .to = NULL};
            ok = push(&arr, &n, &cap, c);
        }
    }
    if (!ok) {
        free(arr);
        return false;
    }
    *out = arr;
    *count = n;
    return true;
}
