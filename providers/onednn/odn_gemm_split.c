/* The thread split of odn_gemm_split.h, written once for the int16 and
 * the u8 x s8 GEMM. */
#include "odn_gemm_split.h"

#include <omp.h>

void odn_gemm_split(int64_t m, int64_t tile_rows, int64_t panels, double ops, double b_bytes, int scratch_threads,
                    void *scratch, size_t per_thread, odn_gemm_part_fn part, const void *ctx) {
    int threads = omp_get_max_threads();
    if (threads > scratch_threads) threads = scratch_threads;
    if (threads < 1 || ops < 2e6) threads = 1;
    if (threads == 1) {
        part(ctx, 0, m, 0, panels, scratch);
        return;
    }
    int64_t tiles = (m + tile_rows - 1) / tile_rows;
    bool by_panels = b_bytes > 256.0 * 1024 || tiles < 2 * (int64_t)threads;
    int64_t units = by_panels ? panels : tiles;
    int64_t chunk = (units + 4 * threads - 1) / (4 * threads);
    if (chunk < 1) chunk = 1;
    int64_t chunks = (units + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t item = 0; item < chunks; item++) {
        void *s = (char *)scratch + (size_t)omp_get_thread_num() * per_thread;
        int64_t u0 = item * chunk, u1 = u0 + chunk < units ? u0 + chunk : units;
        if (by_panels) part(ctx, 0, m, u0, u1, s);
        else part(ctx, u0 * tile_rows, u1 * tile_rows < m ? u1 * tile_rows : m, 0, panels, s);
    }
}
