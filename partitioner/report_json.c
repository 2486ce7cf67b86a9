/* The assignment as JSON, for tools: providers with their devices, pieces,
 * copies between memories, function expansions and declines. The shape is
 * docs/partition.schema.json; docs/partition.md describes it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition.h"
#include "report_buf.h"
#include "report_copies.h"
#include "tessera/tessera.h"

static const char *device_kind(int32_t k) {
    switch (k) {
    case TSR_DEVICE_CPU: return "cpu";
    case TSR_DEVICE_GPU: return "gpu";
    case TSR_DEVICE_ACCELERATOR: return "accelerator";
    default: return "other";
    }
}

static const char *decline_code(int32_t r) {
    switch (r) {
    case TSR_DECLINE_OP: return "op";
    case TSR_DECLINE_TYPE: return "type";
    case TSR_DECLINE_SHAPE: return "shape";
    case TSR_DECLINE_ATTRIBUTE: return "attribute";
    case TSR_DECLINE_OPSET: return "opset";
    default: return "other";
    }
}

static void json_piece_ref(report_buf *b, size_t piece) {
    if (piece == REPORT_HOST) report_buf_printf(b, "null");
    else report_buf_printf(b, "%zu", piece);
}

/* What the provider says about its devices; a device it cannot describe is
 * listed with the provider's error instead of failing the whole report. */
static void json_devices(report_buf *b, const provider_inst *pi) {
    report_buf_printf(b, "[");
    for (size_t d = 0; d < pi->n_devices; d++) {
        tsr_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        tsr_status *st = pi->plugin->vt->device_info(pi->state, d, &info);
        report_buf_printf(b, "%s{\"index\":%zu,", d ? "," : "", d);
        if (st) {
            report_buf_printf(b, "\"error\":");
            report_buf_json_string(b, tsr_status_message(st));
            tsr_status_free(st);
        } else {
            report_buf_printf(b, "\"name\":");
            report_buf_json_string(b, info.name);
            report_buf_printf(b, ",\"vendor\":");
            report_buf_json_string(b, info.vendor);
            report_buf_printf(b, ",\"kind\":\"%s\",\"memory\":\"%s\",\"memory_bytes\":", device_kind(info.kind),
                              info.memory_kind == TSR_MEMORY_DEVICE ? "device" : "host");
            if (info.memory_bytes) report_buf_printf(b, "%" PRIu64, info.memory_bytes);
            else report_buf_printf(b, "null");
            if (info.details) {
                report_buf_printf(b, ",\"details\":");
                report_buf_json_string(b, info.details);
            }
        }
        report_buf_printf(b, "}");
    }
    report_buf_printf(b, "]");
}

static void json_providers(report_buf *b, provider_inst *const *provs, size_t n_provs) {
    report_buf_printf(b, "\"providers\":[");
    for (size_t i = 0; i < n_provs; i++) {
        const provider_inst *pi = provs[i];
        report_buf_printf(b, "%s\n  {\"name\":", i ? "," : "");
        report_buf_json_string(b, pi->name);
        report_buf_printf(b, ",\"version\":");
        report_buf_json_string(b, pi->plugin->vt->version);
        report_buf_printf(b,
                          ",\"memory\":\"%s\",\"devices\":", pi->memory_kind == TSR_MEMORY_DEVICE ? "device" : "host");
        json_devices(b, pi);
        report_buf_printf(b, "}");
    }
    report_buf_printf(b, "\n]");
}

static void json_names(report_buf *b, ir_value *const *vals, size_t n) {
    report_buf_printf(b, "[");
    for (size_t k = 0; k < n; k++) {
        if (k) report_buf_printf(b, ",");
        report_buf_json_string(b, vals[k]->name);
    }
    report_buf_printf(b, "]");
}

static void json_piece_list(report_buf *b, const partition *p, provider_inst *const *provs, report_bodies_fn bodies,
                            const char *path, int depth);

/* A control-flow piece's bodies: their pieces, nested (schema: subgraphs). */
static void json_subgraphs(report_buf *b, const piece *pc, provider_inst *const *provs, report_bodies_fn bodies,
                           const char *path, int depth) {
    report_body body[REPORT_MAX_BODIES];
    size_t nb = bodies && depth < 16 ? bodies(pc, provs[pc->prov_index], body, REPORT_MAX_BODIES) : 0;
    if (!nb) return;
    report_buf_printf(b, ",\"subgraphs\":[");
    for (size_t k = 0; k < nb; k++) {
        char sub[512];
        snprintf(sub, sizeof sub, "%s%s/%s", path, pc->view->nodes[0]->name, body[k].attr);
        report_buf_printf(b, "%s{\"attribute\":", k ? "," : "");
        report_buf_json_string(b, body[k].attr);
        report_buf_printf(b, ",\"path\":");
        report_buf_json_string(b, sub);
        report_buf_printf(b, ",\"nodes\":%zu,\"pieces\":", body[k].g->n_nodes);
        size_t len = strlen(sub);
        if (len + 1 < sizeof sub) sub[len] = '/', sub[len + 1] = 0;
        json_piece_list(b, body[k].part, provs, bodies, sub, depth + 1);
        report_buf_printf(b, "}");
    }
    report_buf_printf(b, "]");
}

static void json_piece_list(report_buf *b, const partition *p, provider_inst *const *provs, report_bodies_fn bodies,
                            const char *path, int depth) {
    report_buf_printf(b, "[");
    for (size_t i = 0; i < p->n_pieces; i++) {
        const piece *pc = &p->pieces[i];
        const struct tsr_graph *v = pc->view;
        report_buf_printf(b, "%s\n  {\"id\":%zu,\"provider\":", i ? "," : "", i);
        report_buf_json_string(b, provs[pc->prov_index]->name);
        report_buf_printf(b, ",\"device\":%d", (int)v->device);
        /* ops[k] is the op of nodes[k], so the two read side by side. */
        report_buf_printf(b, ",\"nodes\":[");
        for (size_t k = 0; k < v->n_nodes; k++) {
            if (k) report_buf_printf(b, ",");
            report_buf_json_string(b, v->nodes[k]->name);
        }
        report_buf_printf(b, "],\"ops\":[");
        for (size_t k = 0; k < v->n_nodes; k++) {
            if (k) report_buf_printf(b, ",");
            report_buf_json_string(b, v->nodes[k]->op_type);
        }
        report_buf_printf(b, "],\"inputs\":");
        json_names(b, v->inputs, v->n_inputs);
        report_buf_printf(b, ",\"outputs\":");
        json_names(b, v->outputs, v->n_outputs);
        const char *impl = partition_piece_impl(pc, provs[pc->prov_index]);
        if (impl) {
            report_buf_printf(b, ",\"impl\":");
            report_buf_json_string(b, impl);
        }
        json_subgraphs(b, pc, provs, bodies, path, depth);
        report_buf_printf(b, "}");
    }
    report_buf_printf(b, "\n]");
}

static void json_pieces(report_buf *b, const partition *p, provider_inst *const *provs, report_bodies_fn bodies) {
    report_buf_printf(b, "\"pieces\":");
    json_piece_list(b, p, provs, bodies, "", 0);
}

static void json_copies(report_buf *b, const report_copy *c, size_t n) {
    report_buf_printf(b, "\"copies\":[");
    for (size_t i = 0; i < n; i++) {
        report_buf_printf(b, "%s\n  {\"tensor\":", i ? "," : "");
        report_buf_json_string(b, c[i].value->name);
        report_buf_printf(b, ",\"bytes\":");
        if (c[i].bytes_known) report_buf_printf(b, "%" PRIu64, c[i].bytes);
        else report_buf_printf(b, "null");
        report_buf_printf(b, ",\"from_piece\":");
        json_piece_ref(b, c[i].from_piece);
        report_buf_printf(b, ",\"to_piece\":");
        json_piece_ref(b, c[i].to_piece);
        report_buf_printf(b, ",\"from_memory\":");
        report_buf_json_string(b, c[i].from ? c[i].from->name : "host");
        report_buf_printf(b, ",\"to_memory\":");
        report_buf_json_string(b, c[i].to ? c[i].to->name : "host");
        if (c[i].once_per_session) report_buf_printf(b, ",\"once_per_session\":true");
        report_buf_printf(b, "}");
    }
    report_buf_printf(b, "%s]", n ? "\n" : "");
}

/* Whether node n of the final graph came from expansion e: a top-level
 * record owns every node whose origin is its node (nested expansions
 * included); a nested one (e->origin set) the nodes named "<its node>/...". */
static bool from_expansion(const ir_node *n, const expansion *e) {
    if (!n->origin) return false;
    if (!e->origin) return strcmp(n->origin, e->node) == 0;
    size_t l = strlen(e->node);
    return strcmp(n->origin, e->origin) == 0 && strncmp(n->name, e->node, l) == 0 && n->name[l] == '/';
}

static void json_expanded(report_buf *b, const partition *p, const ir_graph *g) {
    report_buf_printf(b, "\"expanded\":[");
    for (size_t i = 0; i < p->n_expanded; i++) {
        const expansion *e = &p->expanded[i];
        report_buf_printf(b, "%s\n  {\"node\":", i ? "," : "");
        report_buf_json_string(b, e->node);
        report_buf_printf(b, ",\"op\":");
        report_buf_json_string(b, e->op);
        report_buf_printf(b, ",\"domain\":");
        report_buf_json_string(b, e->domain);
        if (e->origin) {
            report_buf_printf(b, ",\"inside\":");
            report_buf_json_string(b, e->origin);
        }
        report_buf_printf(b, ",\"body_size\":%zu,\"body_nodes\":[", e->body_nodes);
        size_t k = 0;
        for (size_t j = 0; j < g->n_nodes; j++) {
            if (!from_expansion(g->nodes[j], e)) continue;
            if (k++) report_buf_printf(b, ",");
            report_buf_json_string(b, g->nodes[j]->name);
        }
        report_buf_printf(b, "]}");
    }
    report_buf_printf(b, "%s]", p->n_expanded ? "\n" : "");
}

static void json_folded(report_buf *b, const partition *p) {
    report_buf_printf(b, "\"folded\":[");
    for (size_t i = 0; i < p->n_folded; i++) {
        const folded_node *f = &p->folded[i];
        report_buf_printf(b, "%s\n  {\"node\":", i ? "," : "");
        report_buf_json_string(b, f->node);
        report_buf_printf(b, ",\"op\":");
        report_buf_json_string(b, f->op);
        if (f->body) {
            report_buf_printf(b, ",\"body\":");
            report_buf_json_string(b, f->body);
        }
        report_buf_printf(b, ",\"outputs\":[");
        for (size_t k = 0; k < f->n_outputs; k++) {
            if (k) report_buf_printf(b, ",");
            report_buf_json_string(b, f->outputs[k]);
        }
        report_buf_printf(b, "]}");
    }
    report_buf_printf(b, "%s]", p->n_folded ? "\n" : "");
}

static void json_declined(report_buf *b, const partition *p, provider_inst *const *provs) {
    report_buf_printf(b, "\"declined\":[");
    for (size_t i = 0; i < p->n_declines; i++) {
        const declined *d = &p->declines[i];
        report_buf_printf(b, "%s\n  {\"node\":", i ? "," : "");
        report_buf_json_string(b, d->node->name);
        report_buf_printf(b, ",\"op\":");
        report_buf_json_string(b, d->node->op_type);
        report_buf_printf(b, ",\"provider\":");
        report_buf_json_string(b, provs[d->prov_index]->name);
        report_buf_printf(b, ",\"code\":\"%s\",\"reason\":", decline_code(d->reason));
        report_buf_json_string(b, d->text);
        report_buf_printf(b, "}");
    }
    report_buf_printf(b, "%s]", p->n_declines ? "\n" : "");
}

/* Counts for a glance: copy_bytes is what every run moves (copies of known
 * size); constants kept on a device after the first run are counted apart. */
static void json_totals(report_buf *b, const partition *p, const ir_graph *g, provider_inst *const *provs,
                        size_t n_provs, const report_copy *c, size_t n_copies) {
    uint64_t per_run = 0, once = 0;
    size_t unknown = 0;
    for (size_t i = 0; i < n_copies; i++) {
        if (!c[i].bytes_known) unknown++;
        else if (c[i].once_per_session) once += c[i].bytes;
        else per_run += c[i].bytes;
    }
    report_buf_printf(b, "\"totals\":{\"pieces\":%zu,\"nodes\":%zu,\"nodes_per_provider\":{", p->n_pieces, g->n_nodes);
    for (size_t i = 0; i < n_provs; i++) {
        size_t n = 0;
        for (size_t k = 0; k < p->n_pieces; k++)
            if (p->pieces[k].prov_index == i) n += p->pieces[k].view->n_nodes;
        if (i) report_buf_printf(b, ",");
        report_buf_json_string(b, provs[i]->name);
        report_buf_printf(b, ":%zu", n);
    }
    report_buf_printf(b,
                      "},\"copies\":%zu,\"copy_bytes\":%" PRIu64 ",\"once_per_session_bytes\":%" PRIu64
                      ",\"copies_of_unknown_size\":%zu,\"expanded\":%zu,\"declined\":%zu,\"folded\":%zu}",
                      n_copies, per_run, once, unknown, p->n_expanded, p->n_declines, p->n_folded);
}

/* What placed the nodes: the policy, the fallback provider, and how many
 * nodes went against list order. */
static void json_placement(report_buf *b, const partition *p, provider_inst *const *provs, size_t n_provs) {
    const char *policy = p->policy.kind == PLACE_COST ? "cost" : p->policy.kind == PLACE_FIRST ? "first" : "order";
    report_buf_printf(b, "\"placement\":{\"policy\":\"%s\",\"fallback\":", policy);
    if (p->policy.fallback < n_provs) report_buf_json_string(b, provs[p->policy.fallback]->name);
    else report_buf_printf(b, "null");
    report_buf_printf(b, ",\"moved\":%zu}", p->n_moved);
}

char *partition_json(const partition *p, const ir_graph *g, provider_inst *const *provs, size_t n_provs,
                     report_bodies_fn bodies) {
    report_copy *copies = NULL;
    size_t n_copies = 0;
    if (!report_copies(p, provs, &copies, &n_copies)) return NULL;
    report_buf b = {0};
    report_buf_printf(&b, "{");
    json_providers(&b, provs, n_provs);
    report_buf_printf(&b, ",\n");
    json_pieces(&b, p, provs, bodies);
    report_buf_printf(&b, ",\n");
    json_copies(&b, copies, n_copies);
    report_buf_printf(&b, ",\n");
    json_expanded(&b, p, g);
    report_buf_printf(&b, ",\n");
    json_declined(&b, p, provs);
    report_buf_printf(&b, ",\n");
    json_folded(&b, p);
    report_buf_printf(&b, ",\n");
    json_totals(&b, p, g, provs, n_provs, copies, n_copies);
    report_buf_printf(&b, ",\n");
    json_placement(&b, p, provs, n_provs);
    report_buf_printf(&b, "}\n");
    free(copies);
    return report_buf_finish(&b);
}
