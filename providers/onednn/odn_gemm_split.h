/* How the integer GEMMs (odn_igemm.c, odn_igemm8.c) share a product among
 * the run's OpenMP threads. */
#ifndef ODN_GEMM_SPLIT_H
#define ODN_GEMM_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Computes rows [r0, r1) x column panels [p0, p1) of the product, with
 * `scratch` the calling thread's own block. */
typedef void (*odn_gemm_part_fn)(const void *ctx, int64_t r0, int64_t r1, int64_t p0, int64_t p1, void *scratch);

/* Runs part over m rows (tiles of tile_rows) x `panels` panels: on one
 * thread below 2 million operations (`ops`) or with one thread; else on
 * at most scratch_threads threads, each with its `per_thread` bytes of
 * `scratch`, sharing panels when B (`b_bytes`) is too large for each
 * thread to read all of it from L2 (or the rows are few), else rows, in
 * several chunks each taken as threads come free (a VM's cores come and
 * go). */
void odn_gemm_split(int64_t m, int64_t tile_rows, int64_t panels, double ops, double b_bytes, int scratch_threads,
                    void *scratch, size_t per_thread, odn_gemm_part_fn part, const void *ctx);

#endif
