/* Provider plugins: finding, loading and negotiating with a .so, and the
 * per-session provider instances made from them. */
#ifndef TESSERA_CORE_PLUGIN_H
#define TESSERA_CORE_PLUGIN_H

#include <stdbool.h>

#include "tessera/provider.h"

/* Newest and oldest provider ABI versions this host speaks. */
#define HOST_ABI_MIN 1
#define HOST_ABI_MAX TSR_PROVIDER_ABI_VERSION

typedef struct tsr_plugin {
    char *path;
    void *dl;
    const tsr_provider *vt;
    uint32_t abi_version;
    /* the process-wide registry (plugin.c): the file's real path, the
     * sessions and listings holding it, the next loaded plugin */
    char *key;
    size_t refs;
    struct tsr_plugin *next;
} tsr_plugin;

/* Reads a slot of the plugin's vtable only if the plugin's struct has it. */
#define PLUGIN_SLOT(pl, member) (TSR_HAS_MEMBER((pl)->vt, tsr_provider, member) ? (pl)->vt->member : NULL)

/* dlopens `path`, finds the entry symbol, negotiates, handing the plugin
 * `host`, the host API table (it must outlive the plugin; the session layer
 * assembles it: runtime/host_api.c). Errors name the path. A plugin already
 * loaded (the same file) is shared, its entry not run again, so it keeps
 * the table it was first given; each plugin_load is matched by one
 * plugin_unload. Thread-safe. */
tsr_status *plugin_load(const char *path, const tsr_host_api *host, tsr_plugin **out);
void plugin_unload(tsr_plugin *p);

/* The directories searched, in order: beside libtessera.so, then each of
 * TESSERA_PROVIDER_PATH. The caller frees each string and the array. */
tsr_status *plugin_search_dirs(char ***dirs, size_t *count);
/* Every libtessera_provider_*.so in the search dirs (first occurrence of a
 * file name wins). The caller frees each string and the array. */
tsr_status *plugin_list_files(char ***paths, size_t *count);
/* A name ("reference") or a path (contains '/' or ends in .so) to a file. */
tsr_status *plugin_resolve(const char *name_or_path, char **path);

/* A provider instance within one session. */
typedef struct provider_inst {
    tsr_plugin *plugin;
    void *state;
    const char *name; /* plugin's name */
    size_t n_devices;
    int32_t memory_kind; /* of device 0 */
    int32_t device_kind; /* of device 0 (tsr_device_kind) */
} provider_inst;

tsr_status *provider_create(tsr_plugin *plugin, const tsr_provider_config *config, provider_inst **out);
void provider_destroy(provider_inst *p);

#endif
