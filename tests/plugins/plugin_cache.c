/* A plugin with the compiled-piece cache slots: it runs Relu, logs (at
 * info level) "compiled" or "imported" for each piece so a test sees which
 * happened, exports a piece as "RELU:<node name>" and refuses to import
 * bytes that are not that. Option `compat` sets its compatibility string
 * (default "cache-test 1"), as a new driver version would change it;
 * option `compile_ms` makes each compile take that long, as a device
 * compiler would (to measure what the cache saves). */
#include <time.h>

#include "plugin_common.h"

static const char *const ops[] = {"Relu", NULL};

typedef struct cache_state {
    tp_state base; /* tp_compile reads the scale through it */
    char compat[128];
    long compile_ms;
} cache_state;

static tsr_status *create(const tsr_provider_config *config, void **state) {
    cache_state *s = calloc(1, sizeof *s);
    if (!s) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    s->base.scale = 1.0f;
    snprintf(s->compat, sizeof s->compat, "cache-test 1");
    for (size_t i = 0; i < config->option_count; i++) {
        const char *key = config->option_keys[i], *val = config->option_values[i];
        if (strcmp(key, "compat") == 0) {
            snprintf(s->compat, sizeof s->compat, "%s", val);
        } else if (strcmp(key, "compile_ms") == 0) {
            s->compile_ms = strtol(val, NULL, 10);
        } else {
            free(s);
            return tp_error(TSR_ERR_INVALID_ARGUMENT,
                            "cache provider has no option '%s' (it knows: compat, compile_ms)", key);
        }
    }
    *state = s;
    return NULL;
}

static tsr_status *claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    return tp_claim_ops(graph, sink, ops, "cache");
}

static void say(const char *what, const tsr_graph *piece) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s '%s'", what, host->node_name(host->graph_node(piece, 0)));
    host->log(TSR_LOG_INFO, "cache", msg);
}

static tsr_status *compile(void *state, const tsr_graph *piece, void **piece_state) {
    long ms = ((cache_state *)state)->compile_ms;
    if (ms > 0 && ms < 100000) {
        struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    tsr_status *s = tp_compile(state, piece, piece_state);
    if (!s) say("compiled", piece);
    return s;
}

static const char *cache_compat(void *state, int32_t device) {
    (void)device;
    return ((cache_state *)state)->compat;
}

static tsr_status *piece_export(void *piece_state, void **bytes, size_t *size) {
    const tp_piece *p = piece_state;
    char text[160];
    int n = snprintf(text, sizeof text, "RELU:%s", p->name);
    *bytes = host->alloc((size_t)n);
    if (!*bytes) return host->status_new(TSR_ERR_NO_MEMORY, "out of memory");
    memcpy(*bytes, text, (size_t)n);
    *size = (size_t)n;
    return NULL;
}

static tsr_status *piece_import(void *state, const tsr_graph *piece, const void *bytes, size_t size,
                                void **piece_state) {
    char want[160];
    int n = snprintf(want, sizeof want, "RELU:%s", host->node_name(host->graph_node(piece, 0)));
    if (size != (size_t)n || memcmp(bytes, want, size) != 0)
        return host->status_new(TSR_ERR_INVALID_ARGUMENT, "the blob is not for this piece");
    tsr_status *s = tp_compile(state, piece, piece_state); /* cheap here; a real one would not compile */
    if (!s) say("imported", piece);
    return s;
}

static const tsr_provider table = {
    .struct_size = sizeof(tsr_provider),
    .name = "cache",
    .vendor = "Tessera tests",
    .version = "1",
    .create = create,
    .destroy = tp_destroy,
    .device_count = tp_device_count,
    .device_info = tp_device_info,
    .claim = claim,
    .compile = compile,
    .run = tp_run,
    .release = tp_release,
    .cache_compat = cache_compat,
    .piece_export = piece_export,
    .piece_import = piece_import,
};

TSR_EXPORT tsr_status *tessera_provider_entry(tsr_provider_entry_args *args) { return tp_entry(args, &table); }
