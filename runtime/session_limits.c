/* Resource limits of a session (tsr_session_options_set_limit): their names,
 * defaults and ranges. Where each is enforced: docs/security.md, "Limits". */
#include <stdint.h>
#include <string.h>

#include "session.h"
#include "status.h"

#define KNOWN_LIMITS                                                                                                   \
    "tensor_bytes, working_bytes, model_bytes, external_bytes, graph_depth, function_nodes, "                          \
    "function_depth, fold_bytes"

void session_options_init_limits(tsr_session_options *o) {
    o->max_tensor_bytes = TSR_DEFAULT_MAX_TENSOR_BYTES;
    o->max_working_bytes = TSR_DEFAULT_MAX_WORKING_BYTES;
    o->max_fold_bytes = TSR_DEFAULT_MAX_FOLD_BYTES;
    o->limits = ir_limits_default();
}

/* A depth (graph_depth, function_depth) within 1..max. */
static tsr_status *set_depth(const char *name, int64_t value, int32_t max, int32_t *out) {
    if (value > max)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "limit %s=%lld: at most %d (what the stack is known to hold; "
                         "docs/security.md)",
                         name, (long long)value, (int)max);
    *out = (int32_t)value;
    return NULL;
}

tsr_status *tsr_session_options_set_limit(tsr_session_options *o, const char *name, int64_t value) {
    if (!o || !name) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "options and name are required");
    if (value <= 0) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "limit %s=%lld: a limit is > 0", name, (long long)value);
    uint64_t v = (uint64_t)value;
    if (strcmp(name, "tensor_bytes") == 0) o->max_tensor_bytes = v;
    else if (strcmp(name, "working_bytes") == 0) o->max_working_bytes = v;
    else if (strcmp(name, "fold_bytes") == 0) o->max_fold_bytes = v;
    else if (strcmp(name, "model_bytes") == 0) o->limits.model_bytes = v;
    else if (strcmp(name, "external_bytes") == 0) o->limits.external_bytes = v;
    else if (strcmp(name, "function_nodes") == 0) o->limits.function_nodes = v;
    else if (strcmp(name, "graph_depth") == 0)
        return set_depth(name, value, IR_MAX_GRAPH_DEPTH, &o->limits.graph_depth);
    else if (strcmp(name, "function_depth") == 0)
        return set_depth(name, value, IR_MAX_FUNCTION_DEPTH, &o->limits.function_depth);
    else return tsr_error(TSR_ERR_INVALID_ARGUMENT, "no limit named '%s' (known: " KNOWN_LIMITS ")", name);
    return NULL;
}

tsr_status *tsr_session_working_bytes(const tsr_session *cs, uint64_t *peak, uint64_t *left) {
    if (!cs || !peak || !left) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session, peak and left are required");
    tsr_session *s = (tsr_session *)cs; /* read under the lock a run holds */
    pthread_mutex_lock(&s->lock);
    *peak = s->working_peak;
    *left = s->working_left;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}
