/* Session options: providers in priority order, their key=value options,
 * threads, log level, fixed symbolic dimensions. Limits: session_limits.c. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "session.h"
#include "status.h"

tsr_status *tsr_session_options_create(tsr_session_options **out) {
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is NULL");
    tsr_session_options *o = calloc(1, sizeof *o);
    if (!o) return TSR_NO_MEMORY();
    o->log_level = TSR_LOG_WARNING;
    session_options_init_limits(o);
    *out = o;
    return NULL;
}

void tsr_session_options_free(tsr_session_options *o) {
    if (!o) return;
    for (size_t i = 0; i < o->n_providers; i++) free(o->providers[i]);
    for (size_t i = 0; i < o->n_options; i++) {
        free(o->options[i].provider);
        free(o->options[i].key);
        free(o->options[i].value);
    }
    for (size_t i = 0; i < o->n_dims; i++) free(o->dims[i].symbol);
    for (size_t i = 0; i < o->n_assigns; i++) {
        free(o->assigns[i].provider);
        free(o->assigns[i].key);
    }
    free(o->assigns);
    free(o->fallback);
    free(o->cache_dir);
    compose_spec_clear(&o->stages);
    free(o->providers);
    free(o->options);
    free(o->dims);
    free(o);
}

tsr_status *tsr_session_options_add_provider(tsr_session_options *o, const char *name_or_path) {
    if (!o || !name_or_path || !*name_or_path) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "provider name is empty");
    char **p = realloc(o->providers, sizeof *p * (o->n_providers + 1));
    if (!p) return TSR_NO_MEMORY();
    o->providers = p;
    if (!(p[o->n_providers] = strdup(name_or_path))) return TSR_NO_MEMORY();
    o->n_providers++;
    return NULL;
}

tsr_status *tsr_session_options_set_provider_option(tsr_session_options *o, const char *provider, const char *key,
                                                    const char *value) {
    if (!o || !provider || !key || !value || !*key)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "provider option needs provider, key and value");
    provider_option *p = realloc(o->options, sizeof *p * (o->n_options + 1));
    if (!p) return TSR_NO_MEMORY();
    o->options = p;
    provider_option *n = &p[o->n_options];
    n->provider = strdup(provider);
    n->key = strdup(key);
    n->value = strdup(value);
    if (!n->provider || !n->key || !n->value) {
        free(n->provider);
        free(n->key);
        free(n->value);
        return TSR_NO_MEMORY();
    }
    o->n_options++;
    return NULL;
}

tsr_status *tsr_session_options_set_threads(tsr_session_options *o, int32_t threads) {
    if (!o || threads < 0 || threads > 4096)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "thread count %d out of range", (int)threads);
    o->threads = threads;
    return NULL;
}

tsr_status *tsr_session_options_set_log_level(tsr_session_options *o, int32_t level) {
    if (!o || level < TSR_LOG_ERROR || level > TSR_LOG_DEBUG)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "log level %d out of range 0..3", (int)level);
    o->log_level = level;
    return NULL;
}

tsr_status *tsr_session_options_set_dim(tsr_session_options *o, const char *symbol, int64_t value) {
    if (!o || !symbol || !*symbol || value < 0)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "dimension '%s' needs a non-negative value", symbol ? symbol : "");
    dim_setting *d = realloc(o->dims, sizeof *d * (o->n_dims + 1));
    if (!d) return TSR_NO_MEMORY();
    o->dims = d;
    if (!(d[o->n_dims].symbol = strdup(symbol))) return TSR_NO_MEMORY();
    d[o->n_dims++].value = value;
    return NULL;
}

tsr_status *tsr_session_options_assign(tsr_session_options *o, const char *node_or_op, const char *provider) {
    if (!o || !node_or_op || !*node_or_op || !provider || !*provider)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "assign needs a node or op name and a provider");
    provider_option *p = realloc(o->assigns, sizeof *p * (o->n_assigns + 1));
    if (!p) return TSR_NO_MEMORY();
    o->assigns = p;
    provider_option *n = &p[o->n_assigns];
    n->provider = strdup(provider);
    n->key = strdup(node_or_op);
    n->value = NULL;
    if (!n->provider || !n->key) {
        free(n->provider);
        free(n->key);
        return TSR_NO_MEMORY();
    }
    o->n_assigns++;
    return NULL;
}

tsr_status *tsr_session_options_set_policy(tsr_session_options *o, int32_t policy) {
    if (!o || policy < TSR_POLICY_ORDER || policy > TSR_POLICY_FIRST)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "placement policy %d is not %d (order), %d (cost) or %d (first)",
                         (int)policy, TSR_POLICY_ORDER, TSR_POLICY_COST, TSR_POLICY_FIRST);
    o->policy = policy;
    return NULL;
}

tsr_status *tsr_session_options_set_fallback(tsr_session_options *o, const char *provider) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "options is NULL");
    char *copy = NULL;
    if (provider && *provider && !(copy = strdup(provider))) return TSR_NO_MEMORY();
    free(o->fallback);
    o->fallback = copy;
    return NULL;
}

tsr_status *tsr_session_options_set_cache_dir(tsr_session_options *o, const char *dir) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL options");
    char *copy = NULL;
    if (dir && *dir) {
        struct stat sb;
        if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "cache directory '%s' is not a directory", dir);
        if (strlen(dir) > 3000) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "cache directory path is too long");
        if (!(copy = strdup(dir))) return TSR_NO_MEMORY();
    }
    free(o->cache_dir);
    o->cache_dir = copy;
    return NULL;
}

tsr_status *tsr_session_options_set_logger(tsr_session_options *o, tsr_log_fn fn, void *user_data) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL options");
    o->logger = fn;
    o->logger_user = fn ? user_data : NULL;
    return NULL;
}
