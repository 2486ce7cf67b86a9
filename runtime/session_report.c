/* The session's assignment as a text table, JSON and Graphviz DOT (the
 * formatting is partitioner/report*.c's). */
#include <string.h>

#include "control_flow.h"
#include "partition.h"
#include "session.h"
#include "status.h"

typedef char *(*report_fn)(const partition *, const ir_graph *, provider_inst *const *, size_t, report_bodies_fn);

/* The bodies the core planned for a control-flow piece. */
static size_t cf_bodies(const piece *pc, const provider_inst *prov, report_body *out, size_t max) {
    if (prov->plugin != control_flow_plugin() || !pc->compiled) return 0;
    const cf_piece *cp = pc->compiled;
    bool is_if = strcmp(cp->node->op_type, "If") == 0;
    size_t n = cp->n_plans < max ? cp->n_plans : max;
    for (size_t k = 0; k < n; k++)
        out[k] =
            (report_body){is_if ? (k ? "else_branch" : "then_branch") : "body", cp->plans[k].g, &cp->plans[k].part};
    return n;
}

static tsr_status *assignment(const tsr_session *s, char **out, report_fn fn) {
    if (!s || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and out are required");
    pthread_mutex_lock((pthread_mutex_t *)&s->lock); /* a run may be re-inferring types */
    char *t = fn(&s->main.part, s->model->graph, s->provs, s->n_provs, cf_bodies);
    pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
    if (!t) return TSR_NO_MEMORY();
    *out = t;
    return NULL;
}

tsr_status *tsr_session_assignment_text(const tsr_session *s, char **out) { return assignment(s, out, partition_text); }

tsr_status *tsr_session_assignment_json(const tsr_session *s, char **out) { return assignment(s, out, partition_json); }

tsr_status *tsr_session_assignment_dot(const tsr_session *s, char **out) { return assignment(s, out, partition_dot); }
