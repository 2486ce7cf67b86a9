/* The provider's own on-disk program cache: one file per program binary in
 * $XDG_CACHE_HOME/tessera/opencl/ (else ~/.cache/tessera/opencl/), named by
 * the program's key (device, driver, options and source text hashed), so a
 * later session skips the OpenCL compiler without being asked to. Programs
 * a piece builds while the host's compiled-piece cache is on go into the
 * host's blobs instead (ocl_program.c decides). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl.h"

static const char cache_magic[8] = {'T', 'S', 'R', 'C', 'L', 'B', 'N', '1'};

/* The cache directory, created if missing; false when there is none. */
static bool cache_dir(char *buf, size_t size) {
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/') n = snprintf(buf, size, "%s/tessera", xdg);
    else if (home && home[0] == '/') n = snprintf(buf, size, "%s/.cache/tessera", home);
    else return false;
    if (n < 0 || (size_t)n + 16 >= size) return false;
    /* mkdir -p of the last two levels is enough: $HOME exists. */
    char *slash = strrchr(buf, '/');
    *slash = 0;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
    *slash = '/';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
    strcat(buf, "/opencl");
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) return false;
    return true;
}

bool ocl_disk_cache_path(uint64_t key, char *path, size_t size) {
    char dir[4096];
    if (!cache_dir(dir, sizeof dir)) return false;
    int n = snprintf(path, size, "%s/%016llx.bin", dir, (unsigned long long)key);
    return n > 0 && (size_t)n < size;
}

cl_program ocl_disk_cache_load(ocl_state *st, const char *path, uint64_t key, const char *options) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char magic[8];
    uint64_t fkey = 0, size = 0;
    unsigned char *bin = NULL;
    cl_program prog = NULL;
    if (fread(magic, 1, 8, f) == 8 && memcmp(magic, cache_magic, 8) == 0 && fread(&fkey, sizeof fkey, 1, f) == 1 &&
        fkey == key && fread(&size, sizeof size, 1, f) == 1 && size > 0 && size <= OCL_MAX_BINARY &&
        (bin = malloc((size_t)size)) && fread(bin, 1, (size_t)size, f) == size) {
        tsr_status *s = ocl_program_from_binary(st, bin, (size_t)size, options, &prog);
        if (s) ocl_host->status_free(s); /* stale or damaged: the caller builds it */
    }
    free(bin);
    fclose(f);
    return prog;
}

void ocl_disk_cache_store(const char *path, uint64_t key, const unsigned char *binary, size_t size) {
    /* Write beside, then rename: a concurrent reader never sees half a file. */
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    uint64_t sz = size;
    bool ok = f && fwrite(cache_magic, 1, 8, f) == 8 && fwrite(&key, sizeof key, 1, f) == 1 &&
        fwrite(&sz, sizeof sz, 1, f) == 1 && fwrite(binary, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}
