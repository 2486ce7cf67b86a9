/* Creating a session: load, infer shapes, load providers, partition,
 * compile pieces (handing a failed piece to the next provider), plan. */
#include "session.h"
#include "arena_plan.h"
#include "host_block_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_flow.h"
#include "gradient.h"
#include "host_api.h"
#include "host_log.h"
#include "status.h"

static void fix_dims(ir_graph *g, const tsr_session_options *o) {
    for (size_t i = 0; i < g->n_inputs; i++) {
        ir_type *t = &g->inputs[i]->type;
        if (t->kind != IR_TYPE_TENSOR) continue;
        for (int32_t d = 0; d < t->rank; d++) {
            if (!t->dims[d].symbol) continue;
            for (size_t k = 0; k < o->n_dims; k++)
                if (strcmp(o->dims[k].symbol, t->dims[d].symbol) == 0) t->dims[d].value = o->dims[k].value;
        }
    }
}

/* Loads one provider for the session, with the options addressed to it;
 * `flags` are TSR_PROVIDER_* (provider.h). */
static tsr_status *add_provider(tsr_session *s, const tsr_session_options *o, const char *spec, uint32_t flags,
                                bool *option_used) {
    char *path;
    TSR_TRY(plugin_resolve(spec, &path));
    tsr_plugin *pl;
    tsr_status *st = plugin_load(path, host_api_table(), &pl);
    free(path);
    if (st) return st;
    for (size_t i = 0; i < s->n_provs; i++) {
        if (strcmp(s->provs[i]->name, pl->vt->name) == 0) {
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "provider '%s' listed twice", pl->vt->name);
            plugin_unload(pl);
            return st;
        }
    }
    size_t n = 0;
    const char **keys = calloc(o->n_options + 1, sizeof *keys);
    const char **vals = calloc(o->n_options + 1, sizeof *vals);
    if (!keys || !vals) st = TSR_NO_MEMORY();
    for (size_t i = 0; i < o->n_options && !st; i++) {
        if (strcmp(o->options[i].provider, pl->vt->name) != 0 && strcmp(o->options[i].provider, spec) != 0) continue;
        keys[n] = o->options[i].key;
        vals[n++] = o->options[i].value;
        option_used[i] = true;
    }
    provider_inst *pi = NULL;
    if (!st) {
        tsr_provider_config cfg = {sizeof cfg, n, keys, vals, o->threads, o->log_level, flags};
        st = provider_create(pl, &cfg, &pi);
    }
    free(keys);
    free(vals);
    tsr_plugin **np = st ? NULL : realloc(s->plugins, sizeof *np * (s->n_provs + 1));
    provider_inst **ni = st || !np ? NULL : realloc(s->provs, sizeof *ni * (s->n_provs + 1));
    if (np) s->plugins = np;
    if (ni) s->provs = ni;
    if (!st && (!np || !ni)) st = TSR_NO_MEMORY();
    if (st) {
        provider_destroy(pi);
        plugin_unload(pl);
        return st;
    }
    s->plugins[s->n_provs] = pl;
    s->provs[s->n_provs++] = pi;
    return NULL;
}

/* No providers named: every plugin found, accelerated first, reference last. */
/* In the default list, a provider whose device is the host CPU seen
 * through device memory (an OpenCL CPU driver such as PoCL) goes after the
 * reference provider: it computes on the same cores as the host providers,
 * and every value it touches must be copied in and out, so it only loses
 * time against them. Listed explicitly (-p), it keeps its place. */
static void demote_emulated_devices(tsr_session *s) {
    size_t ref = 0;
    while (ref < s->n_provs && strcmp(s->provs[ref]->name, "reference") != 0) ref++;
    if (ref == s->n_provs) return;
    for (size_t i = 0; i < ref;) {
        const provider_inst *p = s->provs[i];
        if (!(p->memory_kind == TSR_MEMORY_DEVICE && p->device_kind == TSR_DEVICE_CPU)) {
            i++;
            continue;
        }
        tsr_plugin *pl = s->plugins[i];
        provider_inst *pi = s->provs[i];
        for (size_t k = i; k < ref; k++) {
            s->plugins[k] = s->plugins[k + 1];
            s->provs[k] = s->provs[k + 1];
        }
        s->plugins[ref] = pl;
        s->provs[ref] = pi;
        ref--;
    }
}

static tsr_status *add_all_providers(tsr_session *s, const tsr_session_options *o, bool *used) {
    char **paths;
    size_t n;
    TSR_TRY(plugin_list_files(&paths, &n));
    tsr_status *st = NULL;
    for (int pass = 0; pass < 2 && !st; pass++) {
        for (size_t i = 0; i < n && !st; i++) {
            bool is_ref = strstr(paths[i], "libtessera_provider_reference.so") != NULL;
            if (is_ref != (pass == 1)) continue;
            tsr_status *e = add_provider(s, o, paths[i], TSR_PROVIDER_UNNAMED, used);
            if (e && pass == 1) {
                st = e;
            } else if (e) {
                /* NOT_SUPPORTED: the provider declined a session that did
                 * not name it (an emulated device), not a failure */
                bool declined = tsr_status_code(e) == TSR_ERR_NOT_SUPPORTED;
                host_log(declined ? TSR_LOG_INFO : TSR_LOG_WARNING, NULL, tsr_status_message(e));
                tsr_status_free(e);
            }
        }
    }
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    if (!st) demote_emulated_devices(s);
    if (!st && s->n_provs == 0)
        st = tsr_error(TSR_ERR_PROVIDER, "no provider plugins found (set TESSERA_PROVIDER_PATH)");
    return st;
}

/* The fallback provider goes last among the plugins (added if not listed),
 * so in list order only what nobody else claims reaches it. */
static tsr_status *place_fallback(tsr_session *s, const tsr_session_options *o, bool *used, size_t *index) {
    *index = SIZE_MAX;
    if (!o->fallback) return NULL;
    size_t f = 0;
    while (f < s->n_provs && strcmp(s->provs[f]->name, o->fallback) != 0) f++;
    if (f == s->n_provs) {
        TSR_TRY(add_provider(s, o, o->fallback, 0, used));
    } else {
        tsr_plugin *pl = s->plugins[f];
        provider_inst *pi = s->provs[f];
        for (size_t i = f; i + 1 < s->n_provs; i++) {
            s->plugins[i] = s->plugins[i + 1];
            s->provs[i] = s->provs[i + 1];
        }
        s->plugins[s->n_provs - 1] = pl;
        s->provs[s->n_provs - 1] = pi;
    }
    *index = s->n_provs - 1;
    return NULL;
}

/* The core's control-flow provider goes last, so plugins are asked first. */
static tsr_status *add_core_provider(tsr_session *s, const tsr_session_options *o) {
    tsr_provider_config cfg = {sizeof cfg, 0, NULL, NULL, o->threads, o->log_level, 0};
    provider_inst *pi;
    TSR_TRY(provider_create(control_flow_plugin(), &cfg, &pi));
    tsr_plugin **np = realloc(s->plugins, sizeof *np * (s->n_provs + 1));
    if (np) s->plugins = np;
    provider_inst **ni = np ? realloc(s->provs, sizeof *ni * (s->n_provs + 1)) : NULL;
    if (ni) s->provs = ni;
    if (!np || !ni) {
        provider_destroy(pi);
        return TSR_NO_MEMORY();
    }
    s->plugins[s->n_provs] = control_flow_plugin();
    s->provs[s->n_provs++] = pi;
    return NULL;
}

static bool graph_has_name(const ir_graph *g, const char *name, bool op) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (op ? strcmp(n->op_type, name) == 0 : n->name && strcmp(n->name, name) == 0) return true;
        for (size_t a = 0; a < n->n_attrs; a++) {
            const ir_attr *at = &n->attrs[a];
            size_t k = at->g ? 1 : (at->graphs ? at->count : 0);
            for (size_t j = 0; j < k; j++)
                if (graph_has_name(at->g ? at->g : at->graphs[j], name, op)) return true;
        }
    }
    return false;
}

/* Resolves --assign rules to provider indices; nothing may go unmatched. */
static tsr_status *resolve_pins(tsr_session *s, const tsr_session_options *o) {
    if (!o->n_assigns) return NULL;
    s->pins = calloc(o->n_assigns, sizeof *s->pins);
    if (!s->pins) return TSR_NO_MEMORY();
    for (size_t i = 0; i < o->n_assigns; i++) {
        const provider_option *a = &o->assigns[i];
        size_t p = 0;
        while (p < s->n_provs && strcmp(s->provs[p]->name, a->provider) != 0) p++;
        if (p == s->n_provs)
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "assign %s=%s: provider '%s' is not in the session", a->key,
                             a->provider, a->provider);
        bool by_name = graph_has_name(s->model->graph, a->key, false);
        if (!by_name && !graph_has_name(s->model->graph, a->key, true))
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "assign %s=%s: the model has no node and no op type named '%s'",
                             a->key, a->provider, a->key);
        char *name = strdup(a->key); /* options may be freed after creation */
        if (!name) return TSR_NO_MEMORY();
        s->pins[s->n_pins++] = (pin_rule){name, p, by_name};
    }
    return NULL;
}

/* A node the options pin to a provider, by its name or its op type: it
 * stays as the model writes it, so the pin finds it. */
static bool pinned(const ir_node *n, void *ctx) {
    const tsr_session_options *o = ctx;
    for (size_t i = 0; i < o->n_assigns; i++) {
        const char *key = o->assigns[i].key;
        if (strcmp(key, n->op_type) == 0 || (n->name && strcmp(key, n->name) == 0)) return true;
    }
    return false;
}

/* Folds constants (before partitioning, so no piece is made for what runs
 * only then), then partitions and compiles the main graph; the report
 * keeps what was folded. */
static tsr_status *plan_main(tsr_session *s, const tsr_session_options *o) {
    folded_node *folded = NULL;
    size_t n_folded = 0;
    tsr_status *st = NULL;
    if (!o->observe_all && o->max_fold_bytes > 1)
        st = session_fold_constants(s, o->max_fold_bytes, pinned, (void *)o, &folded, &n_folded);
    if (!st) st = graph_plan_build(s->model->graph, s->provs, s->n_provs, &s->rules, &s->main);
    if (!st) {
        s->main.part.folded = folded;
        s->main.part.n_folded = n_folded;
        return NULL;
    }
    for (size_t i = 0; i < n_folded; i++) folded_node_clear(&folded[i]);
    free(folded);
    return st;
}

static tsr_status *session_finish(tsr_session *s, const tsr_session_options *o) {
    tsr_session_options defaults;
    if (!o) {
        memset(&defaults, 0, sizeof defaults);
        defaults.log_level = TSR_LOG_WARNING;
        session_options_init_limits(&defaults);
        o = &defaults;
    }
    s->max_working_bytes = o->max_working_bytes;
    s->log_level = o->log_level;
    fix_dims(s->model->graph, o);
    /* Gradient nodes become backward graphs before anything is inferred. */
    TSR_TRY(gradient_expand(s->model->graph));
    /* Einsum as MatMul: runs where matmuls run (core/einsum_lower.c) */
    TSR_TRY(ir_graph_lower_einsum_except(s->model->graph, pinned, (void *)o));
    TSR_TRY(ir_infer_shapes(s->model->graph));
    /* observing every value keeps each Pad's output too */
    if (!o->observe_all) TSR_TRY(ir_graph_fold_pads(s->model->graph));
    /* likewise each value between two Transposes that cancel */
    if (!o->observe_all) TSR_TRY(ir_graph_cancel_transposes(s->model->graph));
    /* a loop body's pass-through Identities were a piece per iteration */
    if (!o->observe_all) TSR_TRY(ir_graph_elide_body_identities(s->model->graph));
    bool *used = calloc(o->n_options + 1, 1);
    if (!used) return TSR_NO_MEMORY();
    tsr_status *st = NULL;
    if (o->n_providers == 0) st = add_all_providers(s, o, used);
    for (size_t i = 0; i < o->n_providers && !st; i++) st = add_provider(s, o, o->providers[i], 0, used);
    size_t fallback = SIZE_MAX;
    if (!st) st = place_fallback(s, o, used, &fallback);
    for (size_t i = 0; i < o->n_options && !st; i++)
        if (!used[i])
            st = tsr_error(TSR_ERR_INVALID_ARGUMENT, "option %s=%s names provider '%s', which is not in the session",
                           o->options[i].key, o->options[i].value, o->options[i].provider);
    free(used);
    if (!st) st = add_core_provider(s, o);
    if (!st) st = resolve_pins(s, o);
    s->rules = (plan_rules){s->pins, s->n_pins, placement_default(), o->max_tensor_bytes, NULL};
    s->rules.policy.kind = o->policy == TSR_POLICY_COST ? PLACE_COST
        : o->policy == TSR_POLICY_FIRST                 ? PLACE_FIRST
                                                        : PLACE_ORDER;
    s->rules.policy.fallback = fallback;
    if (!st && o->cache_dir && !(s->cache_dir = strdup(o->cache_dir))) st = TSR_NO_MEMORY();
    s->rules.cache_dir = s->cache_dir;
    if (!st) control_flow_bind(s->provs[s->n_provs - 1], s->provs, s->n_provs, &s->rules);
    s->profiling = o->profiling;
    s->profile_epoch = exec_now();
    /* Observing every value: each node output is a piece boundary, in
     * control-flow bodies too. */
    if (o->observe_all) session_observe_every_value(s->model->graph);
    if (!st) st = plan_main(s, o);
    if (!st) st = session_io_build(s);
    return st;
}

static tsr_status *session_new(ir_model *m, const tsr_session_options *o, tsr_session **out) {
    tsr_session *s = calloc(1, sizeof *s);
    if (!s) {
        ir_model_free(m);
        return TSR_NO_MEMORY();
    }
    s->model = m;
    pthread_mutex_init(&s->lock, NULL);
    s->arena = arena_plans_new(); /* NULL: runs allocate each tensor, as before */
    s->logger = (host_logger){o ? o->logger : NULL, o ? o->logger_user : NULL};
    int32_t outer = host_log_enter(o ? o->log_level : TSR_LOG_WARNING);
    host_logger outer_logger = host_logger_enter(s->logger);
    tsr_status *st = session_finish(s, o);
    host_logger_enter(outer_logger);
    host_log_leave(outer);
    if (st) {
        tsr_session_free(s);
        return st;
    }
    *out = s;
    return NULL;
}

tsr_status *tsr_session_create(const tsr_session_options *o, const char *path, tsr_session **out) {
    if (!path || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "path and out are required");
    ir_model *m;
    TSR_TRY(ir_model_load_file_limited(path, o ? &o->limits : NULL, &m));
    TSR_TRY(session_chain_stages(m, path, o, &m));
    return session_new(m, o, out);
}

tsr_status *tsr_session_create_from_buffer(const tsr_session_options *o, const void *bytes, size_t size,
                                           const char *base_dir, tsr_session **out) {
    if (!bytes || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "bytes and out are required");
    ir_model *m;
    TSR_TRY(ir_model_load_buffer_limited(bytes, size, base_dir, o ? &o->limits : NULL, &m));
    TSR_TRY(session_chain_stages(m, "the model buffer", o, &m));
    return session_new(m, o, out);
}

void tsr_session_free(tsr_session *s) {
    if (!s) return;
    session_device_values_orphan(s); /* their providers go below */
    graph_plan_free(&s->main, s->provs);
    for (size_t i = 0; i < s->n_pins; i++) free((char *)s->pins[i].node_or_op);
    free(s->pins);
    free(s->cache_dir);
    for (size_t i = 0; i < s->n_provs; i++) provider_destroy(s->provs[i]);
    /* Graph views made on demand for plugins go with the model; unload
     * plugins last so nothing they own is referenced afterwards. */
    for (size_t i = 0; i < s->n_provs; i++)
        if (s->plugins[i] != control_flow_plugin()) plugin_unload(s->plugins[i]);
    free(s->provs);
    free(s->plugins);
    session_io_free(s); /* reads s->model->graph: before the model goes */
    session_observe_free(s);
    ir_model_free(s->model);
    arena_plans_free(s->arena);
    pthread_mutex_destroy(&s->lock);
    free(s);
    /* the buffers its runs left for the next run (others' runs refill it) */
    host_block_trim();
}
