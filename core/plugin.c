/* Loading provider plugins like the OpenCL ICD loader: a search path, an
 * entry symbol, a version handshake. */
#include "plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "status.h"

#define PLUGIN_PREFIX "libtessera_provider_"
/* Relative to libtessera.so's directory; matches the install rules. */
#define PLUGIN_SUBDIR "/tessera/providers"

static void unload(tsr_plugin *p) {
    /* Under sanitizers, keep the code mapped so leak reports can symbolize. */
#ifndef TESSERA_KEEP_PLUGINS_LOADED
    dlclose(p->dl);
#endif
    free(p->path);
    free(p->key);
    free(p);
}

/* A table no header version could have written: far larger than any
 * version of tsr_provider will be. */
#define MAX_TABLE_BYTES 4096

/* Names show in reports, options (`onednn:key=value`) and --assign rules:
 * lower-case letters, digits and '_', and not a name the host uses itself. */
static bool valid_name(const char *name) {
    size_t n = strnlen(name, 64);
    if (n == 0 || n >= 64 || strcmp(name, "core") == 0 || strcmp(name, "auto") == 0) return false;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_')) return false;
    return true;
}

static tsr_status *check_table(const tsr_provider *vt, const char *path) {
    if (vt->struct_size > MAX_TABLE_BYTES)
        return tsr_error(TSR_ERR_ABI, "provider '%s' gives a function table of %u bytes (at most %d make sense)", path,
                         (unsigned)vt->struct_size, MAX_TABLE_BYTES);
    if (!valid_name(vt->name))
        return tsr_error(TSR_ERR_ABI,
                         "provider '%s' calls itself '%.64s': a name is 1 to 63 of [a-z0-9_], and not 'core' or 'auto'",
                         path, vt->name);
    return NULL;
}

static tsr_status *load_new(const char *path, const tsr_host_api *host, tsr_plugin **out) {
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        return tsr_error(TSR_ERR_PROVIDER, "cannot load provider '%s': %s", path, e ? e : "?");
    }
    tsr_provider_entry_fn entry;
    *(void **)&entry = dlsym(dl, TSR_PROVIDER_ENTRY);
    if (!entry) {
        dlclose(dl);
        return tsr_error(TSR_ERR_PROVIDER, "'%s' is not a Tessera provider: no symbol %s", path, TSR_PROVIDER_ENTRY);
    }
    tsr_provider_entry_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.host_abi_min = HOST_ABI_MIN;
    args.host_abi_max = HOST_ABI_MAX;
    args.host = host;
    args.plugin_path = path;
    tsr_status *s = entry(&args);
    if (s) {
        dlclose(dl);
        return tsr_error_wrap(s, "provider '%s' refused to load", path);
    }
    if (args.abi_version < HOST_ABI_MIN || args.abi_version > HOST_ABI_MAX) {
        dlclose(dl);
        return tsr_error(TSR_ERR_ABI, "provider '%s' chose ABI %u; this host speaks %u..%u", path, args.abi_version,
                         HOST_ABI_MIN, HOST_ABI_MAX);
    }
    const tsr_provider *vt = args.provider;
    if (!vt || vt->struct_size < offsetof(tsr_provider, release) + sizeof vt->release || !vt->name || !vt->create ||
        !vt->destroy || !vt->claim || !vt->compile || !vt->run || !vt->release || !vt->device_count ||
        !vt->device_info) {
        dlclose(dl);
        return tsr_error(TSR_ERR_ABI, "provider '%s' returned an incomplete function table", path);
    }
    tsr_status *bad = check_table(vt, path);
    if (bad) {
        dlclose(dl);
        return bad;
    }
    tsr_plugin *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path))) {
        free(p);
        dlclose(dl);
        return TSR_NO_MEMORY();
    }
    p->dl = dl;
    p->vt = vt;
    p->abi_version = args.abi_version;
    *out = p;
    return NULL;
}

/* Every plugin loaded now, each once: sessions share it, so its entry runs
 * once per process (while loaded) and no session rewrites what another's
 * plugin was told. */
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static tsr_plugin *loaded; /* linked through next */

tsr_status *plugin_load(const char *path, const tsr_host_api *host, tsr_plugin **out) {
    /* one file under several names (a symlink, a relative path) is one plugin */
    char *real = realpath(path, NULL);
    const char *key = real ? real : path;
    pthread_mutex_lock(&loaded_lock);
    tsr_plugin *p = loaded;
    while (p && strcmp(p->key, key) != 0) p = p->next;
    tsr_status *s = NULL;
    if (p) {
        p->refs++;
    } else if (!(s = load_new(path, host, &p))) {
        p->key = strdup(key);
        if (!p->key) {
            s = TSR_NO_MEMORY();
            unload(p);
        } else {
            p->refs = 1;
            p->next = loaded;
            loaded = p;
        }
    }
    pthread_mutex_unlock(&loaded_lock);
    free(real);
    if (!s) *out = p;
    return s;
}

void plugin_unload(tsr_plugin *p) {
    if (!p) return;
    pthread_mutex_lock(&loaded_lock);
    bool last = --p->refs == 0;
    if (last) {
        tsr_plugin **at = &loaded;
        while (*at && *at != p) at = &(*at)->next;
        if (*at) *at = p->next;
    }
    pthread_mutex_unlock(&loaded_lock);
    if (last) unload(p);
}

static tsr_status *push_str(char ***arr, size_t *n, const char *s, size_t len) {
    char **a = realloc(*arr, sizeof(char *) * (*n + 1));
    if (!a) return TSR_NO_MEMORY();
    *arr = a;
    if (!(a[*n] = strndup(s, len))) return TSR_NO_MEMORY();
    (*n)++;
    return NULL;
}

tsr_status *plugin_search_dirs(char ***dirs, size_t *count) {
    *dirs = NULL;
    *count = 0;
    Dl_info info;
    if (dladdr((void *)plugin_search_dirs, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        const char *dir = slash ? info.dli_fname : ".";
        size_t len = slash ? (size_t)(slash - info.dli_fname) : 1;
        TSR_TRY(push_str(dirs, count, dir, len));
        /* The build tree keeps plugins beside the library; an installed tree
         * (cmake --install) keeps them in <libdir>/tessera/providers, out of
         * the system's library directory. */
        char *sub = malloc(len + sizeof PLUGIN_SUBDIR);
        if (!sub) return TSR_NO_MEMORY();
        memcpy(sub, dir, len);
        memcpy(sub + len, PLUGIN_SUBDIR, sizeof PLUGIN_SUBDIR);
        tsr_status *s = push_str(dirs, count, sub, strlen(sub));
        free(sub);
        if (s) return s;
    }
    const char *env = getenv("TESSERA_PROVIDER_PATH");
    while (env && *env) {
        const char *colon = strchr(env, ':');
        size_t len = colon ? (size_t)(colon - env) : strlen(env);
        if (len) TSR_TRY(push_str(dirs, count, env, len));
        env = colon ? colon + 1 : NULL;
    }
    return NULL;
}

static void free_strs(char **a, size_t n) {
    for (size_t i = 0; i < n; i++) free(a[i]);
    free(a);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

tsr_status *plugin_list_files(char ***paths, size_t *count) {
    char **dirs;
    size_t nd;
    TSR_TRY(plugin_search_dirs(&dirs, &nd));
    char **names = NULL;
    size_t nn = 0;
    *paths = NULL;
    *count = 0;
    tsr_status *s = NULL;
    for (size_t d = 0; d < nd && !s; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir) continue;
        char **here = NULL;
        size_t nh = 0;
        struct dirent *e;
        while (!s && (e = readdir(dir))) {
            size_t len = strlen(e->d_name);
            if (strncmp(e->d_name, PLUGIN_PREFIX, strlen(PLUGIN_PREFIX)) != 0 || len < 4 ||
                strcmp(e->d_name + len - 3, ".so") != 0)
                continue;
            s = push_str(&here, &nh, e->d_name, len);
        }
        closedir(dir);
        if (nh) qsort(here, nh, sizeof *here, cmp_str);
        for (size_t i = 0; i < nh && !s; i++) {
            bool seen = false;
            for (size_t j = 0; j < nn; j++) seen = seen || strcmp(names[j], here[i]) == 0;
            if (seen) continue;
            s = push_str(&names, &nn, here[i], strlen(here[i]));
            if (!s) {
                size_t plen = strlen(dirs[d]) + strlen(here[i]) + 2;
                char *full = malloc(plen);
                if (!full) {
                    s = TSR_NO_MEMORY();
                    break;
                }
                snprintf(full, plen, "%s/%s", dirs[d], here[i]);
                s = push_str(paths, count, full, strlen(full));
                free(full);
            }
        }
        free_strs(here, nh);
    }
    free_strs(names, nn);
    free_strs(dirs, nd);
    if (s) {
        free_strs(*paths, *count);
        *paths = NULL;
        *count = 0;
    }
    return s;
}

tsr_status *plugin_resolve(const char *name_or_path, char **path) {
    size_t len = strlen(name_or_path);
    if (strchr(name_or_path, '/') || (len > 3 && strcmp(name_or_path + len - 3, ".so") == 0)) {
        if (!(*path = strdup(name_or_path))) return TSR_NO_MEMORY();
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        char ch = name_or_path[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
            return tsr_error(TSR_ERR_INVALID_ARGUMENT, "bad provider name '%s'", name_or_path);
    }
    char **dirs;
    size_t nd;
    TSR_TRY(plugin_search_dirs(&dirs, &nd));
    tsr_status *s = NULL;
    *path = NULL;
    for (size_t d = 0; d < nd && !*path; d++) {
        size_t plen = strlen(dirs[d]) + strlen(PLUGIN_PREFIX) + len + 5;
        char *full = malloc(plen);
        if (!full) {
            s = TSR_NO_MEMORY();
            break;
        }
        snprintf(full, plen, "%s/%s%s.so", dirs[d], PLUGIN_PREFIX, name_or_path);
        struct stat st;
        if (stat(full, &st) == 0) *path = full;
        else free(full);
    }
    if (!s && !*path) {
        size_t cap = 64;
        for (size_t d = 0; d < nd; d++) cap += strlen(dirs[d]) + 2;
        char *where = calloc(1, cap);
        for (size_t d = 0; where && d < nd; d++) {
            if (d) strcat(where, ":");
            strcat(where, dirs[d]);
        }
        s = tsr_error(TSR_ERR_PROVIDER,
                      "provider '%s' not found (looked for %s%s.so in %s; set "
                      "TESSERA_PROVIDER_PATH or give a path)",
                      name_or_path, PLUGIN_PREFIX, name_or_path, where ? where : "?");
        free(where);
    }
    free_strs(dirs, nd);
    return s;
}

tsr_status *provider_create(tsr_plugin *plugin, const tsr_provider_config *config, provider_inst **out) {
    provider_inst *p = calloc(1, sizeof *p);
    if (!p) return TSR_NO_MEMORY();
    p->plugin = plugin;
    p->name = plugin->vt->name;
    tsr_status *s = plugin->vt->create(config, &p->state);
    if (s) {
        free(p);
        return tsr_error_wrap(s, "provider '%s' (%s)", plugin->vt->name, plugin->path);
    }
    p->n_devices = plugin->vt->device_count(p->state);
    p->memory_kind = TSR_MEMORY_HOST;
    if (p->n_devices > 0) {
        tsr_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        tsr_status *ds = plugin->vt->device_info(p->state, 0, &info);
        if (ds) {
            plugin->vt->destroy(p->state);
            free(p);
            return tsr_error_wrap(ds, "provider '%s': device 0", plugin->vt->name);
        }
        p->memory_kind = info.memory_kind;
        p->device_kind = info.kind;
    }
    /* Pieces on any device share the provider's memory kind. */
    for (size_t d = 1; d < p->n_devices && d < 1024; d++) {
        tsr_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        tsr_status *ds = plugin->vt->device_info(p->state, d, &info);
        if (!ds && info.memory_kind != p->memory_kind)
            ds = tsr_error(TSR_ERR_ABI, "device %zu's memory kind differs from device 0's", d);
        if (ds) {
            plugin->vt->destroy(p->state);
            free(p);
            return tsr_error_wrap(ds, "provider '%s': device %zu", plugin->vt->name, d);
        }
    }
    const tsr_provider *vt = plugin->vt;
    if (p->memory_kind == TSR_MEMORY_DEVICE &&
        (!PLUGIN_SLOT(plugin, mem_alloc) || !PLUGIN_SLOT(plugin, mem_free) || !PLUGIN_SLOT(plugin, copy_to_device) ||
         !PLUGIN_SLOT(plugin, copy_to_host))) {
        vt->destroy(p->state);
        free(p);
        return tsr_error(TSR_ERR_ABI,
                         "provider '%s' (%s) has device memory but not all of mem_alloc, mem_free, copy_to_device "
                         "and copy_to_host",
                         vt->name, plugin->path);
    }
    *out = p;
    return NULL;
}

void provider_destroy(provider_inst *p) {
    if (!p) return;
    p->plugin->vt->destroy(p->state);
    free(p);
}
