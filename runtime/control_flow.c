/* The core provider's table: claims control-flow nodes, compiles their
 * bodies into graph plans, dispatches runs. */
#include "control_flow.h"

#include <stdlib.h>
#include <string.h>

#include "arena_plan.h"
#include "graph_view.h"
#include "host_api.h"
#include "run_context.h"
#include "status.h"

typedef tsr_status *(*cf_runner)(cf_piece *, struct tsr_run_context *);

static cf_runner runner_for(const ir_node *n) {
    if (n->domain && n->domain[0]) return NULL;
    if (strcmp(n->op_type, "If") == 0) return cf_run_if;
    if (strcmp(n->op_type, "Loop") == 0) return cf_run_loop;
    if (strcmp(n->op_type, "Scan") == 0) return cf_run_scan;
    if (strcmp(n->op_type, "SequenceMap") == 0) return cf_run_sequence_map;
    return NULL;
}

static tsr_status *cf_create(const tsr_provider_config *config, void **state) {
    (void)config;
    cf_state *s = calloc(1, sizeof *s);
    if (!s) return TSR_NO_MEMORY();
    *state = s;
    return NULL;
}

static void cf_destroy(void *state) { free(state); }
static size_t cf_device_count(void *state) {
    (void)state;
    return 1;
}

static tsr_status *cf_device_info(void *state, size_t index, tsr_device_info *info) {
    (void)state;
    (void)index;
    info->name = "host (control flow)";
    info->vendor = "Tessera";
    info->details = "runs If, Loop, Scan and SequenceMap; bodies go to the session's providers";
    info->kind = TSR_DEVICE_CPU;
    info->memory_kind = TSR_MEMORY_HOST;
    info->memory_bytes = 0;
    return NULL;
}

static tsr_status *cf_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    const struct tsr_graph *g = (const struct tsr_graph *)graph;
    const tsr_host_api *h = host_api_table();
    for (size_t i = 0; i < g->n_nodes; i++) {
        const tsr_node *n = (const tsr_node *)g->nodes[i];
        if (runner_for(g->nodes[i])) TSR_TRY(h->claim_piece(sink, &n, 1, -1.0));
    }
    return NULL;
}

static void cf_release(void *ps) {
    cf_piece *p = ps;
    if (!p) return;
    for (size_t i = 0; i < p->n_plans; i++) {
        arena_plans_free(p->arenas[i]);
        graph_plan_free(&p->plans[i], p->env->provs);
    }
    free(p);
}

/* Whether a piece of the body makes a value that is not one of the body's
 * outputs, outside nested control flow: something an arena would place.
 * A body that is one fused piece (oneDNN's, often) has none, and would
 * only pay the arena's bookkeeping every iteration. */
static bool has_intermediates(const graph_plan *gp, const cf_state *env) {
    for (size_t p = 0; p < gp->part.n_pieces; p++) {
        const piece *pc = &gp->part.pieces[p];
        if (env->provs[pc->prov_index]->plugin == control_flow_plugin()) continue;
        for (size_t k = 0; k < pc->view->n_outputs; k++)
            if (!pc->view->outputs[k]->is_graph_output) return true;
    }
    return false;
}

static tsr_status *cf_compile(void *state, const tsr_graph *piece, void **out) {
    const cf_state *env = state;
    const struct tsr_graph *v = (const struct tsr_graph *)piece;
    if (v->n_nodes != 1 || !runner_for(v->nodes[0]))
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "the core provider runs single control-flow nodes");
    const ir_node *n = v->nodes[0];
    cf_piece *p = calloc(1, sizeof *p);
    if (!p) return TSR_NO_MEMORY();
    p->env = env;
    p->view = v;
    p->node = n;
    static const char *const if_bodies[] = {"then_branch", "else_branch"};
    static const char *const body[] = {"body"};
    bool is_if = strcmp(n->op_type, "If") == 0;
    const char *const *names = is_if ? if_bodies : body;
    size_t count = is_if ? 2 : 1;
    tsr_status *st = NULL;
    for (size_t i = 0; i < count && !st; i++) {
        const ir_attr *a = ir_node_attr(n, names[i]);
        if (!a || a->type != TSR_ATTR_GRAPH || !a->g) {
            st = tsr_error(TSR_ERR_INVALID_MODEL, "%s '%s' has no graph attribute '%s'", n->op_type, n->name, names[i]);
            break;
        }
        st = graph_plan_build(a->g, env->provs, env->n_provs, env->rules, &p->plans[i]);
        if (st) st = tsr_error_wrap(st, "%s '%s' attribute '%s'", n->op_type, n->name, names[i]);
        else {
            p->arenas[p->n_plans] = has_intermediates(&p->plans[p->n_plans], env) ? arena_plans_new() : NULL;
            arena_plans_grow_ahead(p->arenas[p->n_plans]);
            p->n_plans++;
        }
    }
    if (st) {
        cf_release(p);
        return st;
    }
    *out = p;
    return NULL;
}

static tsr_status *cf_run(void *ps, tsr_run_context *ctx) {
    cf_piece *p = ps;
    return runner_for(p->node)(p, (struct tsr_run_context *)ctx);
}

static const tsr_provider cf_table = {
    .struct_size = sizeof(tsr_provider),
    .name = "core",
    .vendor = "Tessera",
    .version = "0.1.0",
    .create = cf_create,
    .destroy = cf_destroy,
    .device_count = cf_device_count,
    .device_info = cf_device_info,
    .claim = cf_claim,
    .compile = cf_compile,
    .run = cf_run,
    .release = cf_release,
};

tsr_plugin *control_flow_plugin(void) {
    static tsr_plugin plugin = {
        .path = "(built into libtessera)", .vt = &cf_table, .abi_version = TSR_PROVIDER_ABI_VERSION};
    return &plugin;
}

void control_flow_bind(provider_inst *core, provider_inst *const *provs, size_t n_provs, const plan_rules *rules) {
    cf_state *s = core->state;
    s->provs = provs;
    s->n_provs = n_provs;
    s->rules = rules;
}
