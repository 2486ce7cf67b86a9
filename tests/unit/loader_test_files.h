/* Helpers shared by the loader's unit tests (test_loader.c,
 * test_loader_split.c): the test models' paths, whole-file I/O, and
 * the garbling of a model's bytes. */
#ifndef TESSERA_TESTS_LOADER_TEST_FILES_H
#define TESSERA_TESTS_LOADER_TEST_FILES_H

#include <stddef.h>
#include <stdint.h>

/* $TESSERA_TEST_DATA/loader/NAME (tests/data without it), in a static
 * buffer the next call overwrites. */
const char *data_path(const char *name);

/* The whole file, malloc'd (*size its length); NULL when it cannot be read. */
unsigned char *slurp(const char *path, size_t *size);

/* Writes n bytes to path, failing the test (fatally) when it cannot open it. */
void write_file(const char *path, const void *data, size_t n);

/* Overwrites `flips` bytes of b[0..n) (n > 0) at pseudo-random places
 * with pseudo-random values from *seed (an LCG), so a garbled file is the
 * same on every run. */
void garble(unsigned char *b, size_t n, int flips, uint32_t *seed);

#endif
