/* tsr_providers_discover: describe every plugin on the search path. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "host_api.h"
#include "plugin.h"
#include "status.h"
#include "tessera/tessera.h"

typedef struct found {
    char *path;
    char *error;
    tsr_plugin *plugin;
    void *state;
    size_t n_devices;
    tsr_device_info *devices;
} found;

struct tsr_provider_list {
    found *items;
    size_t n;
};

static tsr_status *add_path(tsr_provider_list *l, const char *path) {
    found *f = realloc(l->items, sizeof *f * (l->n + 1));
    if (!f) return TSR_NO_MEMORY();
    l->items = f;
    found *it = &f[l->n++];
    memset(it, 0, sizeof *it);
    if (!(it->path = strdup(path))) return TSR_NO_MEMORY();
    tsr_status *s = plugin_load(path, host_api_table(), &it->plugin);
    if (!s) {
        tsr_provider_config cfg = {sizeof cfg, 0, NULL, NULL, 0, TSR_LOG_WARNING, 0};
        s = it->plugin->vt->create(&cfg, &it->state);
        if (s) s = tsr_error_wrap(s, "provider '%s' could not start", it->plugin->vt->name);
    }
    if (!s) {
        it->n_devices = it->plugin->vt->device_count(it->state);
        it->devices = calloc(it->n_devices + 1, sizeof *it->devices);
        for (size_t d = 0; it->devices && d < it->n_devices && !s; d++) {
            it->devices[d].struct_size = sizeof(tsr_device_info);
            s = it->plugin->vt->device_info(it->state, d, &it->devices[d]);
        }
    }
    if (s) {
        it->error = strdup(tsr_status_message(s));
        tsr_status_free(s);
    }
    return NULL;
}

tsr_status *tsr_providers_discover(const char *const *extra_paths, size_t extra_count, tsr_provider_list **out) {
    if (!out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "out is NULL");
    tsr_provider_list *l = calloc(1, sizeof *l);
    if (!l) return TSR_NO_MEMORY();
    char **paths;
    size_t n;
    tsr_status *s = plugin_list_files(&paths, &n);
    for (size_t i = 0; !s && i < n; i++) s = add_path(l, paths[i]);
    if (paths)
        for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    for (size_t i = 0; !s && i < extra_count; i++) {
        char *p;
        s = plugin_resolve(extra_paths[i], &p);
        if (!s) {
            s = add_path(l, p);
            free(p);
        }
    }
    if (s) {
        tsr_provider_list_free(l);
        return s;
    }
    *out = l;
    return NULL;
}

size_t tsr_provider_list_size(const tsr_provider_list *l) { return l ? l->n : 0; }

tsr_status *tsr_provider_list_get(const tsr_provider_list *l, size_t i, tsr_provider_desc *out) {
    if (!l || i >= l->n || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "provider %zu out of range", i);
    /* A caller built against an older header has a shorter struct. */
    if (out->struct_size < offsetof(tsr_provider_desc, error) + sizeof out->error)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tsr_provider_desc.struct_size not set");
    const found *f = &l->items[i];
    const tsr_provider *vt = f->plugin ? f->plugin->vt : NULL;
    out->name = vt ? vt->name : "?";
    out->vendor = vt && vt->vendor ? vt->vendor : "";
    out->version = vt && vt->version ? vt->version : "";
    out->path = f->path;
    out->abi_version = f->plugin ? f->plugin->abi_version : 0;
    out->device_count = f->error ? 0 : f->n_devices;
    out->error = f->error;
    return NULL;
}

tsr_status *tsr_provider_list_device(const tsr_provider_list *l, size_t i, size_t d, tsr_device_desc *out) {
    if (!l || i >= l->n || !out || d >= l->items[i].n_devices || l->items[i].error)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "device %zu of provider %zu out of range", d, i);
    if (out->struct_size < offsetof(tsr_device_desc, memory_bytes) + sizeof out->memory_bytes)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tsr_device_desc.struct_size not set");
    const tsr_device_info *di = &l->items[i].devices[d];
    out->name = di->name ? di->name : "";
    out->vendor = di->vendor ? di->vendor : "";
    out->details = di->details;
    out->kind = di->kind;
    out->memory_kind = di->memory_kind;
    out->memory_bytes = di->memory_bytes;
    return NULL;
}

void tsr_provider_list_free(tsr_provider_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        found *f = &l->items[i];
        if (f->state) f->plugin->vt->destroy(f->state);
        free(f->devices);
        if (f->plugin) plugin_unload(f->plugin);
        free(f->path);
        free(f->error);
    }
    free(l->items);
    free(l);
}
