/* Looking inside a session: profiling events, values observed between
 * pieces, and which provider runs each node. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_view.h"
#include "host_log.h"
#include "report_buf.h"
#include "run_budget.h"
#include "session.h"
#include "status.h"

/* A run's profile is bounded: beyond this, events are counted, not kept. */
#define PROFILE_MAX_BYTES ((size_t)64 << 20)

tsr_status *tsr_session_options_set_observe_all(tsr_session_options *o, int32_t enabled) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "options are required");
    o->observe_all = enabled != 0;
    return NULL;
}

tsr_status *tsr_session_options_set_profiling(tsr_session_options *o, int32_t enabled) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "options are required");
    o->profiling = enabled != 0;
    return NULL;
}

/* Appends printf output to the profile; false when it no longer fits. */
static bool prof_add(tsr_session *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || s->profile_len + (size_t)n + 2 > PROFILE_MAX_BYTES) return false;
    size_t need = s->profile_len + (size_t)n + 2;
    if (need > s->profile_cap) {
        size_t cap = s->profile_cap ? s->profile_cap : 4096;
        while (cap < need) cap *= 2;
        char *p = realloc(s->profile, cap);
        if (!p) return false;
        s->profile = p;
        s->profile_cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(s->profile + s->profile_len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->profile_len += (size_t)n;
    return true;
}

static size_t tensor_bytes(const rt_tensor *t) { return t->value ? 0 : t->view.nbytes; }

static void on_piece(void *user, const char *path, const graph_plan *p, size_t pi, const rt_tensor *slots, double t0,
                     double t1) {
    run_observer *ro = user;
    tsr_session *s = ro->s;
    const struct tsr_graph *v = p->part.pieces[pi].view;
    /* Values asked for by name (observed intermediates, rare): copy them
     * out as their piece finishes. Skipped whole when none is asked for:
     * the scan is pieces x outputs, quadratic on 100,000-output graphs. */
    for (size_t w = 0; w < ro->n_wanted && ro->any_wanted && !ro->error && !path[0]; w++) {
        if (!ro->wanted[w] || rt_present(&ro->got[w])) continue;
        for (size_t k = 0; k < v->n_outputs; k++)
            if (v->outputs[k] == ro->wanted[w])
                ro->error = run_budget_copy(&ro->got[w], &slots[v->outputs[k]->index], NULL, 0, ro->budget,
                                            "a copy of an observed value");
    }
    /* values inside bodies: one copy per time their body runs */
    if (path[0] && ro->any_body_wanted && !ro->error) session_body_piece_done(ro, v, slots);
    if (!s->profiling) return;
    const provider_inst *prov = s->provs[p->part.pieces[pi].prov_index];
    /* Whole lists, however large the piece: per-op summaries need them. */
    report_buf nodes = {0}, ops = {0}, ev = {0};
    for (size_t i = 0; i < v->n_nodes; i++) {
        const ir_node *n = v->nodes[i];
        report_buf_printf(&nodes, "%s%s%s", i ? "," : "", path, n->origin ? n->origin : n->name ? n->name : "");
        report_buf_printf(&ops, "%s%s", i ? "," : "", n->op_type);
    }
    size_t bin = 0, bout = 0;
    for (size_t k = 0; k < v->n_inputs; k++) bin += tensor_bytes(&slots[v->inputs[k]->index]);
    for (size_t k = 0; k < v->n_outputs; k++) bout += tensor_bytes(&slots[v->outputs[k]->index]);
    report_buf_printf(&ev, "%s{\"name\":", s->profile_len ? "," : "");
    report_buf_json_string(&ev, v->n_nodes == 1 ? ops.p : "piece");
    report_buf_printf(&ev,
                      ",\"cat\":\"piece\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":1,\"tid\":%zu,"
                      "\"args\":{\"provider\":\"%s\",\"device\":%d,\"piece\":%zu,\"nodes\":",
                      (t0 - s->profile_epoch) * 1e6, (t1 - t0) * 1e6, p->part.pieces[pi].prov_index, prov->name,
                      (int)v->device, pi);
    report_buf_json_string(&ev, nodes.p);
    report_buf_printf(&ev, ",\"ops\":");
    report_buf_json_string(&ev, ops.p);
    report_buf_printf(&ev, ",\"bytes_in\":%zu,\"bytes_out\":%zu", bin, bout);
    if (ro->tag) {
        report_buf_printf(&ev, ",\"tag\":");
        report_buf_json_string(&ev, ro->tag);
    }
    if (path[0]) {
        /* inside a control-flow body: its piece ids are the body's */
        report_buf_printf(&ev, ",\"path\":");
        report_buf_json_string(&ev, path);
    }
    const tsr_provider *vt = prov->plugin->vt;
    const char *impl = TSR_HAS_MEMBER(vt, tsr_provider, piece_describe) && vt->piece_describe
        ? vt->piece_describe(p->part.pieces[pi].compiled)
        : NULL;
    if (impl && impl[0]) {
        report_buf_printf(&ev, ",\"impl\":");
        report_buf_json_string(&ev, impl);
    }
    report_buf_printf(&ev, "}}");
    char *text = nodes.failed || ops.failed ? NULL : report_buf_finish(&ev);
    if (!text || !prof_add(s, "%s", text)) s->profile_dropped++;
    free(text);
    free(nodes.p);
    free(ops.p);
    if (!text) free(ev.p);
}

static void on_copy(void *user, const char *path, const graph_plan *p, size_t pi, const ir_value *v,
                    const rt_tensor *from, const rt_tensor *to, double t0, double t1) {
    run_observer *ro = user;
    tsr_session *s = ro->s;
    if (!s->profiling) return;
    const provider_inst *dst = pi < p->part.n_pieces ? s->provs[p->part.pieces[pi].prov_index] : NULL;
    const char *src = from->dev_owner ? from->dev_owner->name : "host";
    const char *to_name = dst && to->view.memory_kind == TSR_MEMORY_DEVICE ? dst->name : "host";
    report_buf ev = {0};
    report_buf_printf(&ev,
                      "%s{\"name\":\"copy\",\"cat\":\"copy\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,"
                      "\"pid\":1,\"tid\":%zu,\"args\":{\"value\":",
                      s->profile_len ? "," : "", (t0 - s->profile_epoch) * 1e6, (t1 - t0) * 1e6, s->n_provs);
    if (path[0]) {
        char *named = malloc(strlen(path) + strlen(v->name) + 1);
        if (named) sprintf(named, "%s%s", path, v->name);
        report_buf_json_string(&ev, named ? named : v->name);
        free(named);
    } else {
        report_buf_json_string(&ev, v->name);
    }
    report_buf_printf(&ev, ",\"from\":\"%s\",\"to\":\"%s\",\"bytes\":%zu", src, to_name, tensor_bytes(from));
    /* the devices, where the memories are a provider's */
    if (from->dev_owner) report_buf_printf(&ev, ",\"from_device\":%d", (int)from->view.device_index);
    if (to->view.memory_kind == TSR_MEMORY_DEVICE)
        report_buf_printf(&ev, ",\"to_device\":%d", (int)to->view.device_index);
    report_buf_printf(&ev, "}}");
    char *text = report_buf_finish(&ev);
    if (!text || !prof_add(s, "%s", text)) s->profile_dropped++;
    free(text);
}

void run_observer_hooks(run_observer *ro, exec_hooks *out) {
    out->user = ro;
    out->path = "";
    out->piece_done = on_piece;
    out->copy_done = on_copy;
    out->body_begin = ro->any_body_wanted ? session_body_begin : NULL;
}

static tsr_status *profile_take(tsr_session *s, char **json);

tsr_status *tsr_session_profile_take(tsr_session *s, char **json) {
    if (!s || !json) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and json are required");
    pthread_mutex_lock(&s->lock);
    tsr_status *st = profile_take(s, json);
    pthread_mutex_unlock(&s->lock);
    return st;
}

static tsr_status *profile_take(tsr_session *s, char **json) {
    if (!s->profiling) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "profiling was not enabled for this session");
    size_t n = s->profile_len;
    char *out = malloc(n + 3);
    if (!out) return TSR_NO_MEMORY();
    out[0] = '[';
    if (n) memcpy(out + 1, s->profile, n);
    out[n + 1] = ']';
    out[n + 2] = 0;
    s->profile_len = 0;
    if (s->profile_dropped) {
        char msg[128];
        snprintf(msg, sizeof msg, "profile full: %zu events were not recorded", s->profile_dropped);
        host_log(TSR_LOG_WARNING, NULL, msg);
        s->profile_dropped = 0;
    }
    *json = out;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Who runs what                                                             */

const char **session_value_names(ir_value *const *values, size_t n) {
    const char **names = calloc(n + 1, sizeof *names);
    for (size_t k = 0; names && k < n; k++) names[k] = values[k] ? values[k]->name : "";
    return names;
}

void session_node_info_fill(const ir_node *n, const char **outputs, const char **inputs, tsr_node_info *out) {
    out->name = n->name ? n->name : "";
    out->op_type = n->op_type;
    out->domain = n->domain ? n->domain : "";
    out->origin = n->origin;
    out->output_count = n->n_outputs;
    out->outputs = outputs;
    /* a caller built against an older header has no room for these */
    if (!TSR_HAS_MEMBER(out, tsr_node_info, inputs)) return;
    out->input_count = n->n_inputs;
    out->inputs = inputs;
}

static void free_node_table(tsr_session *s) {
    const ir_graph *g = s->model ? s->model->graph : NULL;
    for (size_t i = 0; g && s->node_outputs && i < g->n_nodes; i++) free(s->node_outputs[i]);
    for (size_t i = 0; g && s->node_inputs && i < g->n_nodes; i++) free(s->node_inputs[i]);
    free(s->node_outputs);
    free(s->node_inputs);
    free(s->node_piece);
    s->node_outputs = s->node_inputs = NULL;
    s->node_piece = NULL;
}

/* node_piece is set last: it says the table is complete. */
static tsr_status *build_node_table(tsr_session *s) {
    const ir_graph *g = s->model->graph;
    size_t *piece = calloc(g->n_nodes + 1, sizeof *piece);
    s->node_outputs = calloc(g->n_nodes + 1, sizeof *s->node_outputs);
    s->node_inputs = calloc(g->n_nodes + 1, sizeof *s->node_inputs);
    bool ok = piece && s->node_outputs && s->node_inputs;
    for (size_t i = 0; ok && i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        s->node_outputs[i] = session_value_names(n->outputs, n->n_outputs);
        s->node_inputs[i] = session_value_names(n->inputs, n->n_inputs);
        ok = s->node_outputs[i] && s->node_inputs[i];
        piece[i] = SIZE_MAX;
    }
    if (!ok) {
        free(piece);
        free_node_table(s);
        return TSR_NO_MEMORY();
    }
    for (size_t p = 0; p < s->main.part.n_pieces; p++) {
        const struct tsr_graph *v = s->main.part.pieces[p].view;
        for (size_t k = 0; k < v->n_nodes; k++)
            if (v->nodes[k]->graph == g) piece[v->nodes[k]->index] = p;
    }
    s->node_piece = piece;
    return NULL;
}

size_t tsr_session_node_count(const tsr_session *s) { return s ? s->model->graph->n_nodes : 0; }

tsr_status *tsr_session_node_info(const tsr_session *cs, size_t index, tsr_node_info *out) {
    tsr_session *s = (tsr_session *)cs; /* the table is built lazily */
    if (!s || !out || index >= s->model->graph->n_nodes)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "node %zu out of range", index);
    if (out->struct_size < offsetof(tsr_node_info, outputs) + sizeof out->outputs)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tsr_node_info.struct_size not set");
    pthread_mutex_lock(&s->lock);
    tsr_status *st = s->node_piece ? NULL : build_node_table(s);
    pthread_mutex_unlock(&s->lock);
    if (st) return st;
    size_t p = s->node_piece[index];
    session_node_info_fill(s->model->graph->nodes[index], s->node_outputs[index], s->node_inputs[index], out);
    out->piece = p;
    out->provider = p == SIZE_MAX ? "" : s->provs[s->main.part.pieces[p].prov_index]->name;
    return NULL;
}

void session_observe_free(tsr_session *s) {
    free_node_table(s);
    for (size_t i = 0; i < s->n_found; i++) {
        free(s->found_outputs[i]);
        free(s->found_inputs[i]);
    }
    free(s->found_outputs);
    free(s->found_inputs);
    free(s->found_nodes);
    free(s->profile);
}
