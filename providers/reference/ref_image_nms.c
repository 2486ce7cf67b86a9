/*
 * NonMaxSuppression (opsets 10, 11): per batch and class, greedily keeps
 * the highest-scoring boxes, dropping each box whose IoU with a kept one
 * is strictly above iou_threshold, up to max_output_boxes_per_class.
 *
 * Boxes are [y1, x1, y2, x2] with any two opposite corners
 * (center_point_box 0) or [x_center, y_center, width, height] (1).
 * Equal scores keep the lower box index first. IoU is computed in single
 * precision like the reference and ONNX Runtime, so threshold ties decide
 * the same way.
 */
#include <math.h>
#include <stdlib.h>

#include "ref_image.h"

typedef struct nms_cand {
    float score;
    int64_t index;
} nms_cand;

typedef struct nms_box {
    float x0, x1, y0, y1; /* x0 <= x1, y0 <= y1 */
} nms_box;

/* Descending score, then ascending index; NaN scores sort last. The order
 * is total and strict (indices are distinct), so popping a heap yields the
 * same sequence a full sort would. */
static inline bool cand_before(const nms_cand *a, const nms_cand *b) {
    bool an = isnan(a->score), bn = isnan(b->score);
    if (an != bn) return bn;
    if (!an && a->score != b->score) return a->score > b->score;
    return a->index < b->index;
}

/* Restores the heap property below slot i of a heap of n candidates whose
 * root is the one that comes first. */
static void heap_down(nms_cand *h, size_t n, size_t i) {
    nms_cand v = h[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n) break;
        size_t r = l + 1, m = r < n && cand_before(&h[r], &h[l]) ? r : l;
        if (!cand_before(&h[m], &v)) break;
        h[i] = h[m];
        i = m;
    }
    h[i] = v;
}

static nms_box to_box(const float *v, bool center) {
    nms_box b;
    if (center) {
        float hw = v[2] / 2, hh = v[3] / 2;
        b = (nms_box){v[0] - hw, v[0] + hw, v[1] - hh, v[1] + hh};
    } else {
        b.x0 = v[1] < v[3] ? v[1] : v[3];
        b.x1 = v[1] < v[3] ? v[3] : v[1];
        b.y0 = v[0] < v[2] ? v[0] : v[2];
        b.y1 = v[0] < v[2] ? v[2] : v[0];
    }
    return b;
}

static bool suppresses(const nms_box *a, const nms_box *b, float iou_threshold) {
    float ix0 = a->x0 > b->x0 ? a->x0 : b->x0, ix1 = a->x1 < b->x1 ? a->x1 : b->x1;
    if (ix1 <= ix0) return false;
    float iy0 = a->y0 > b->y0 ? a->y0 : b->y0, iy1 = a->y1 < b->y1 ? a->y1 : b->y1;
    if (iy1 <= iy0) return false;
    float inter = (ix1 - ix0) * (iy1 - iy0);
    float area_a = (a->x1 - a->x0) * (a->y1 - a->y0), area_b = (b->x1 - b->x0) * (b->y1 - b->y0);
    float uni = area_a + area_b - inter;
    if (inter <= 0 || area_a <= 0 || area_b <= 0 || uni <= 0) return false;
    return inter / uni > iou_threshold;
}

/* The single value of an optional scalar input (shape [] or [1]); false
 * when it is absent or empty. */
static bool scalar_input(ref_ctx *c, size_t i, double *v) {
    const tsr_tensor *t = ref_in(c, i);
    if (!t || ref_numel(t) == 0) return false;
    *v = ref_load(t->elem_type, t->data, 0);
    return true;
}

tsr_status *ref_image_nms(ref_ctx *c) {
    const tsr_tensor *B = ref_in(c, 0), *S = ref_in(c, 1);
    if (!B || !S) return ref_err(c, TSR_ERR_INVALID_MODEL, "NonMaxSuppression needs boxes and scores");
    if (B->elem_type != TSR_FLOAT || S->elem_type != TSR_FLOAT)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "boxes and scores must be float tensors");
    if (B->rank != 3 || B->dims[2] != 4)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "boxes must have shape (num_batches, num_boxes, 4)");
    if (S->rank != 3 || S->dims[0] != B->dims[0] || S->dims[2] != B->dims[1])
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "scores must have shape (%lld, num_classes, %lld) to match boxes",
                       (long long)B->dims[0], (long long)B->dims[1]);
    for (size_t i = 2; i < 5; i++) {
        const tsr_tensor *t = ref_in(c, i);
        if (t && ref_numel(t) > 1) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input %zu must be a scalar", i);
    }
    int64_t cpb = ref_attr_int(c, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "center_point_box must be 0 or 1, got %lld", (long long)cpb);
    double max_out_d = 0, iou_d = 0, score_d = 0;
    scalar_input(c, 2, &max_out_d);
    scalar_input(c, 3, &iou_d);
    bool use_score = scalar_input(c, 4, &score_d);
    int64_t nb = B->dims[0], nboxes = B->dims[1], ncls = S->dims[1];
    /* More boxes than exist can never be kept: clamp before converting. */
    int64_t max_out = 0;
    if (max_out_d > 0) max_out = max_out_d < (double)nboxes ? (int64_t)max_out_d : nboxes;
    float iou_t = (float)iou_d, score_t = (float)score_d;

    const float *boxes = B->data, *scores = S->data;
    nms_cand *cand = malloc((size_t)(nboxes ? nboxes : 1) * sizeof *cand);
    nms_box *all = malloc((size_t)(nboxes ? nboxes : 1) * sizeof *all);
    int64_t *kept = malloc((size_t)(nboxes ? nboxes : 1) * sizeof *kept);
    /* Selected triples; at most nb * ncls * max_out of them, grown as needed. */
    int64_t *sel = NULL;
    size_t nsel = 0, cap = 0;
    tsr_status *st = NULL;
    if (!cand || !all || !kept) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    for (int64_t b = 0; b < nb && max_out > 0; b++) {
        for (int64_t i = 0; i < nboxes; i++) all[i] = to_box(boxes + (size_t)((b * nboxes + i) * 4), cpb == 1);
        for (int64_t k = 0; k < ncls; k++) {
            const float *sc = scores + (size_t)((b * ncls + k) * nboxes);
            size_t nc = 0;
            for (int64_t i = 0; i < nboxes; i++)
                if (!use_score || sc[i] > score_t) cand[nc++] = (nms_cand){sc[i], i};
            /* Lazy selection: a heap built in O(n), popped only until
             * max_out boxes are kept (a full sort cost most of the time
             * when few of many candidates are kept). */
            for (size_t j = nc / 2; j-- > 0;) heap_down(cand, nc, j);
            int64_t nkept = 0;
            size_t left = nc;
            while (left > 0 && nkept < max_out) {
                if (ref_work(c, nkept)) {
                    st = ref_stopped(c);
                    goto done;
                }
                int64_t idx = cand[0].index;
                cand[0] = cand[--left];
                heap_down(cand, left, 0);
                bool keep = true;
                for (int64_t q = 0; q < nkept && keep; q++) keep = !suppresses(&all[idx], &all[kept[q]], iou_t);
                if (!keep) continue;
                kept[nkept++] = idx;
                if (nsel == cap) {
                    size_t ncap = cap ? cap * 2 : 64;
                    int64_t *grown = realloc(sel, ncap * 3 * sizeof *grown);
                    if (!grown) {
                        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
                        goto done;
                    }
                    sel = grown;
                    cap = ncap;
                }
                sel[nsel * 3] = b;
                sel[nsel * 3 + 1] = k;
                sel[nsel * 3 + 2] = idx;
                nsel++;
            }
        }
    }
    int64_t odims[2] = {(int64_t)nsel, 3};
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, TSR_INT64, 2, odims, &Y))) goto done;
    for (size_t i = 0; i < nsel * 3; i++) ((int64_t *)Y->data)[i] = sel[i];
done:
    free(cand);
    free(all);
    free(kept);
    free(sel);
    return st;
}
