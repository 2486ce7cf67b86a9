/* The loader tests' shared helpers (loader_test_files.h), in one place so
 * the whole-file and split-path tests read, write and garble files the
 * same way. */
#include "loader_test_files.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>

const char *data_path(const char *name) {
    const char *root = getenv("TESSERA_TEST_DATA");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/loader/%s", root ? root : "tests/data", name);
    return buf;
}

unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return b;
}

void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT(fwrite(data, 1, n, f) == n);
    fclose(f);
}

void garble(unsigned char *b, size_t n, int flips, uint32_t *seed) {
    for (int k = 0; k < flips; k++) {
        *seed = *seed * 1664525u + 1013904223u;
        size_t pos = (*seed >> 8) % n;
        *seed = *seed * 1664525u + 1013904223u;
        b[pos] = (unsigned char)(*seed >> 24);
    }
}
