/* The session's assignment as data: JSON and Graphviz DOT (the text table,
 * tsr_session_assignment_text, is in partitioner/report.c). */
#include "partition.h"
#include "session.h"
#include "status.h"

typedef char *(*report_fn)(const partition *, const ir_graph *, provider_inst *const *, size_t);

static tsr_status *assignment(const tsr_session *s, char **out, report_fn fn) {
    if (!s || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and out are required");
    char *t = fn(&s->main.part, s->model->graph, s->provs, s->n_provs);
    if (!t) return TSR_NO_MEMORY();
    *out = t;
    return NULL;
}

tsr_status *tsr_session_assignment_json(const tsr_session *s, char **out) {
    return assignment(s, out, partition_json);
}

tsr_status *tsr_session_assignment_dot(const tsr_session *s, char **out) {
    return assignment(s, out, partition_dot);
}
