/* Input and output counts per operator: a binary search of the generated
 * table, so a node with one input too many is refused before any provider
 * reads past its inputs. */
#include "op_arity.h"

#include <stdio.h>
#include <string.h>

#include "status.h"

static int cmp_key(const op_arity *e, const char *domain, const char *op) {
    int c = strcmp(e->domain, domain);
    return c ? c : strcmp(e->op, op);
}

const op_arity *op_arity_find(const char *domain, const char *op, int64_t opset) {
    if (!domain || !op) return NULL;
    if (strcmp(domain, "ai.onnx") == 0) domain = "";
    bool known_domain = false;
    for (size_t i = 0; i < op_arity_domain_count; i++)
        if (strcmp(op_arity_domains[i].domain, domain) == 0) {
            if (opset > op_arity_domains[i].newest) return NULL;
            known_domain = true;
        }
    if (!known_domain) return NULL;
    /* first entry of (domain, op) */
    size_t lo = 0, hi = op_arity_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(&op_arity_table[mid], domain, op) < 0) lo = mid + 1;
        else hi = mid;
    }
    const op_arity *best = NULL;
    for (size_t i = lo; i < op_arity_count && cmp_key(&op_arity_table[i], domain, op) == 0; i++)
        if (op_arity_table[i].since <= opset) best = &op_arity_table[i];
    return best;
}

static void range_text(char *buf, size_t size, int32_t lo, int32_t hi) {
    if (hi < 0) snprintf(buf, size, "%d or more", (int)lo);
    else if (lo == hi) snprintf(buf, size, "%d", (int)lo);
    else snprintf(buf, size, "%d to %d", (int)lo, (int)hi);
}

tsr_status *op_arity_check(const ir_node *n) {
    const op_arity *a = op_arity_find(n->domain ? n->domain : "", n->op_type, n->opset);
    if (!a) return NULL;
    char want[48];
    if (n->n_inputs < (size_t)a->min_in || (a->max_in >= 0 && n->n_inputs > (size_t)a->max_in)) {
        range_text(want, sizeof want, a->min_in, a->max_in);
        return tsr_error(TSR_ERR_INVALID_MODEL, "%s (opset %lld) takes %s input%s, not %zu", n->op_type,
                         (long long)n->opset, want, a->max_in == 1 ? "" : "s", n->n_inputs);
    }
    if (n->n_outputs < (size_t)a->min_out || (a->max_out >= 0 && n->n_outputs > (size_t)a->max_out)) {
        range_text(want, sizeof want, a->min_out, a->max_out);
        return tsr_error(TSR_ERR_INVALID_MODEL, "%s (opset %lld) has %s output%s, not %zu", n->op_type,
                         (long long)n->opset, want, a->max_out == 1 ? "" : "s", n->n_outputs);
    }
    return NULL;
}
