/* Whether every OpenCL platform installed is PoCL driving only the host
 * CPU, told from the ICD loader's vendor files and PoCL's driver modules
 * without calling clGetPlatformIDs: that call loads PoCL and its LLVM
 * (about 120 ms and 65 MB of resident memory here), which a session that
 * did not name this provider should not pay for a device the host
 * providers outrun (TSR_PROVIDER_UNNAMED, ocl_provider.c).
 *
 * Conservative: anything this cannot read for certain (a vendor file
 * naming another library, loader overrides in the environment, PoCL's
 * drivers not found as loadable modules, a driver other than its CPU
 * ones) answers false, and the provider enumerates as usual. The rules
 * read are those of the Khronos and ocl-icd loaders: vendor files
 * `*.icd` in /etc/OpenCL/vendors (or the directory OCL_ICD_VENDORS
 * names), each holding a library path or name; PoCL's devices are chosen
 * by POCL_DEVICES, else every driver module beside libpocl in pocl/. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl.h"

/* PoCL's drivers that run kernels on the host CPU (PoCL 3: pthread,
 * basic; PoCL 4 and later: cpu, cpu-minimal). */
static bool cpu_driver(const char *name, size_t len) {
    static const char *const cpu[] = {"pthread", "basic", "cpu", "cpu-minimal"};
    for (size_t i = 0; i < sizeof cpu / sizeof *cpu; i++)
        if (strlen(cpu[i]) == len && strncmp(cpu[i], name, len) == 0) return true;
    return false;
}

static bool is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The library a vendor file names, trimmed; false when unreadable. */
static bool read_vendor(const char *dir, const char *file, char *lib, size_t size) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) return false;
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(lib, (int)size, f) != NULL;
    fclose(f);
    if (!ok) return false;
    size_t n = strlen(lib);
    while (n && (lib[n - 1] == '\n' || lib[n - 1] == '\r' || lib[n - 1] == ' ' || lib[n - 1] == '\t')) lib[--n] = 0;
    return n > 0;
}

/* The directory PoCL's library `lib` lies in: its own when a path, else
 * the ICD loader's (where the distribution installs both). */
static bool pocl_dir(const char *lib, char *dir, size_t size) {
    const char *slash = strrchr(lib, '/');
    if (slash) {
        size_t n = (size_t)(slash - lib);
        if (n + 1 > size) return false;
        memcpy(dir, lib, n);
        dir[n] = 0;
        return true;
    }
    Dl_info info;
    if (!dladdr((void *)clGetPlatformIDs, &info) || !info.dli_fname || !strrchr(info.dli_fname, '/')) return false;
    size_t n = (size_t)(strrchr(info.dli_fname, '/') - info.dli_fname);
    if (n + 1 > size) return false;
    memcpy(dir, info.dli_fname, n);
    dir[n] = 0;
    char path[4096];
    return snprintf(path, sizeof path, "%s/%s", dir, lib) < (int)sizeof path && access(path, R_OK) == 0;
}

/* Every driver module in `dir`/pocl is a CPU one (and there is one). */
static bool pocl_modules_cpu_only(const char *dir) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/pocl", dir) >= (int)sizeof path) return false;
    DIR *d = opendir(path);
    if (!d) return false;
    static const char prefix[] = "libpocl-devices-";
    size_t found = 0;
    bool only_cpu = true;
    for (struct dirent *e; only_cpu && (e = readdir(d));) {
        if (strncmp(e->d_name, prefix, sizeof prefix - 1) != 0) continue;
        const char *name = e->d_name + sizeof prefix - 1, *dot = strstr(name, ".so");
        if (!dot) continue;
        found++;
        only_cpu = cpu_driver(name, (size_t)(dot - name));
    }
    closedir(d);
    return only_cpu && found > 0;
}

/* POCL_DEVICES, when set, names only CPU drivers. */
static bool pocl_devices_cpu_only(const char *list) {
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        size_t n = strcspn(p, " ,");
        if (n && !cpu_driver(p, n)) return false;
        p += n;
    }
    return true;
}

bool ocl_only_host_cpu_platforms(void) {
    if (getenv("OCL_ICD_FILENAMES") || getenv("OPENCL_VENDOR_PATH") || getenv("OCL_ICD_VENDORS")) return false;
    const char *vendors = "/etc/OpenCL/vendors";
    if (!is_dir(vendors)) return false;
    DIR *d = opendir(vendors);
    if (!d) return false;
    size_t pocl = 0;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".icd") != 0) continue;
        char lib[1024], dir[4096];
        ok = read_vendor(vendors, e->d_name, lib, sizeof lib);
        const char *base = ok ? strrchr(lib, '/') : NULL;
        base = base ? base + 1 : lib;
        ok = ok && strncmp(base, "libpocl.so", 10) == 0 && pocl_dir(lib, dir, sizeof dir);
        const char *devices = getenv("POCL_DEVICES");
        ok = ok && (devices && *devices ? pocl_devices_cpu_only(devices) : pocl_modules_cpu_only(dir));
        pocl += ok;
    }
    closedir(d);
    return ok && pocl > 0;
}
