/*
 * Col2Im (opset 18): the inverse of im2col. Input (N, C * prod(block),
 * L) holds, for each of the L block positions (in row-major order of the
 * block grid), the block's C * prod(block) values; they are summed back
 * into an (N, C, image_shape...) image. Overlapping blocks add up, and
 * positions that fall into the padding are dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "ref_image.h"

/* Attribute values and block sizes beyond this are rejected, which keeps
 * every product below well inside int64. */
#define C2I_MAX_PARAM ((int64_t)1 << 31)

/* Advances a row-major multi-index; false after the last one. */
static bool next_index(int64_t *idx, const int64_t *dims, size_t n) {
    for (size_t d = n; d-- > 0;) {
        if (++idx[d] < dims[d]) return true;
        idx[d] = 0;
    }
    return false;
}

tsr_status *ref_image_col2im(ref_ctx *c) {
    const tsr_tensor *X = ref_in(c, 0), *IS = ref_in(c, 1), *BS = ref_in(c, 2);
    if (!X || !IS || !BS)
        return ref_err(c, TSR_ERR_INVALID_MODEL, "Col2Im needs inputs input, image_shape and block_shape");
    bool is_float = ref_is_float(X->elem_type);
    if (!is_float && !ref_is_int(X->elem_type) && X->elem_type != TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not implemented", (int)X->elem_type);
    if (X->rank != 3) return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "input must be 3-D (N, C*prod(block), L)");
    int64_t *img = NULL, *blk = NULL;
    size_t ni = 0, nbk = 0;
    double *accf = NULL;
    uint64_t *acci = NULL; /* integers wrap, as integer adds do, without UB */
    tsr_status *st;
    if ((st = ref_tensor_i64(c, IS, &img, &ni)) || (st = ref_tensor_i64(c, BS, &blk, &nbk))) goto done;
    if (ni < 1 || ni != nbk || ni > REF_MAX_RANK - 2) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                     "image_shape (%zu values) and block_shape (%zu values) must have the same "
                     "length, 1 to %d",
                     ni, nbk, REF_MAX_RANK - 2);
        goto done;
    }
    size_t nd = ni;
    int64_t dil[REF_MAX_RANK], str[REF_MAX_RANK], pads[2 * REF_MAX_RANK];
    if ((st = ref_image_ints_attr(c, "dilations", nd, 1, 1, dil)) ||
        (st = ref_image_ints_attr(c, "strides", nd, 1, 1, str)) ||
        (st = ref_image_ints_attr(c, "pads", 2 * nd, 0, 0, pads)))
        goto done;
    int64_t nblk[REF_MAX_RANK], K = 1, L = 1;
    for (size_t d = 0; d < nd; d++) {
        if (dil[d] > C2I_MAX_PARAM || str[d] > C2I_MAX_PARAM || pads[d] > C2I_MAX_PARAM ||
            pads[nd + d] > C2I_MAX_PARAM || blk[d] < 1 || blk[d] > C2I_MAX_PARAM || img[d] < 0 ||
            img[d] > REF_IMAGE_MAX_ELEMS) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                         "axis %zu: image size %lld, block %lld, dilation, stride or pads out "
                         "of range",
                         d, (long long)img[d], (long long)blk[d]);
            goto done;
        }
        int64_t span = dil[d] * (blk[d] - 1) + 1;
        int64_t room = img[d] + pads[d] + pads[nd + d] - span;
        if (room < 0) {
            st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                         "axis %zu: a dilated block of %lld does not fit the padded image of %lld", d, (long long)span,
                         (long long)(img[d] + pads[d] + pads[nd + d]));
            goto done;
        }
        nblk[d] = room / str[d] + 1;
        if (K > X->dims[1] / blk[d] || L > X->dims[2] / nblk[d]) {
            K = -1;
            break;
        }
        K *= blk[d];
        L *= nblk[d];
    }
    if (K < 1 || X->dims[1] % K != 0 || L != X->dims[2]) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT,
                     "input shape (%lld, %lld, %lld) does not match the blocks: dimension 1 "
                     "must be a multiple of prod(block_shape) and dimension 2 the number of "
                     "block positions",
                     (long long)X->dims[0], (long long)X->dims[1], (long long)X->dims[2]);
        goto done;
    }
    int64_t N = X->dims[0], C = X->dims[1] / K;
    int64_t odims[REF_MAX_RANK], total, plane;
    odims[0] = N;
    odims[1] = C;
    memcpy(odims + 2, img, nd * sizeof *img);
    if (!ref_image_numel(odims, nd + 2, REF_IMAGE_MAX_ELEMS, &total) ||
        !ref_image_numel(img, nd, REF_IMAGE_MAX_ELEMS, &plane)) {
        st = ref_err(c, TSR_ERR_INVALID_ARGUMENT, "output of more than %lld elements", (long long)REF_IMAGE_MAX_ELEMS);
        goto done;
    }
    tsr_tensor *Y;
    if ((st = ref_out(c, 0, X->elem_type, (int32_t)nd + 2, odims, &Y)) || total == 0) goto done;
    if (is_float) accf = calloc((size_t)total, sizeof *accf);
    else acci = calloc((size_t)total, sizeof *acci);
    if (!accf && !acci) {
        st = ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
        goto done;
    }
    int64_t istr[REF_MAX_RANK];
    ref_strides((int32_t)nd, img, istr);
    for (int64_t nc = 0; nc < N * C; nc++) {
        int64_t koff[REF_MAX_RANK] = {0};
        int64_t k = 0;
        do {
            int64_t pos[REF_MAX_RANK] = {0};
            int64_t l = 0;
            do {
                int64_t off = 0;
                bool inside = true;
                for (size_t d = 0; d < nd && inside; d++) {
                    int64_t p = pos[d] * str[d] - pads[d] + koff[d] * dil[d];
                    inside = p >= 0 && p < img[d];
                    off += p * istr[d];
                }
                if (inside) {
                    size_t src = (size_t)((nc * K + k) * L + l), dst = (size_t)(nc * plane + off);
                    if (accf) accf[dst] += ref_load(X->elem_type, X->data, src);
                    else acci[dst] += (uint64_t)ref_load_i64(X->elem_type, X->data, src);
                }
                l++;
            } while (next_index(pos, nblk, nd));
            k++;
        } while (next_index(koff, blk, nd));
    }
    if (accf) ref_image_store_f64(Y, accf, (size_t)total);
    else
        for (int64_t i = 0; i < total; i++) ref_store_i64(Y->elem_type, Y->data, (size_t)i, (int64_t)acci[i]);
done:
    free(img);
    free(blk);
    free(accf);
    free(acci);
    return st;
}
