/* Which implementation runs an LSTM, GRU or RNN node whose sequences all
 * run their full length (no sequence_lens, or constant lengths all T):
 * oneDNN's full-sequence RNN primitive (odn_build_rnn.c) or our own
 * recurrence (odn_rnn_seqlens.c, lengths taken as all T).
 *
 * Measured on a 2-vCPU Zen3 (AVX2) for LSTM, GRU (linear_before_reset 0
 * and 1) and RNN, forward and bidirectional, H 64..512, batch 1/4/16, T 20
 * and 100, at 1 and 2 threads (docs/onednn.md, "Recurrent ops"): the loop
 * is faster nearly everywhere (to 0.5x at H 64, where the primitive's
 * per-step overhead dominates). It loses by 0-25 % with one sequence
 * (batch 1) of H >= 128: each step is then a matrix-vector product bound by
 * reading R, which oneDNN streams a little better, unless the two
 * directions of a bidirectional node run on a thread each (2+ threads),
 * which halves the loop's time. */
#include <omp.h>

#include "odn_rnn.h"
#include "odn_sgemm.h"

bool odn_rnn_loop_wins(const odn_rnn_attrs_t *a, const odn_rnn_consts *c, int64_t steps, int64_t batch) {
    (void)steps;
    if (!odn_sgemm_supported()) return false;
    bool split = a->dirs == 2 && omp_get_max_threads() >= 2;
    return !(batch == 1 && c->hidden >= 128 && !split);
}
