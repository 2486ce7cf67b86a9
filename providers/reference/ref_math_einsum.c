/*
 * Reference kernel: Einsum. The equation is parsed here: labels per input
 * dimension, repeated labels in one term (diagonals), "..." (broadcast,
 * right-aligned) and numpy's implicit output when there is no "->". The
 * operands are then contracted pairwise through a GEMM
 * (ref_math_einsum_pairs.c), sums in double as below. What that leaves
 * (an output label repeated) runs on the direct loop over every
 * combination of the equation's labels: for each, the product of the
 * inputs' elements is added to the output element, in double; exact to the
 * definition but about 40 ns per multiply-add.
 */
#include <stdlib.h>
#include <string.h>

#include "ref.h"
#include "ref_math.h"
#include "ref_math_einsum.h"

static int letter_id(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

/* One term's labels, one per dimension; ellipsis dims get EIN_LETTERS+j
 * with j right-aligned against the widest ellipsis. Returns the count or
 * -1 when malformed. `ell` gets the term's ellipsis rank (for inputs:
 * rank - letters; for the output: E). */
static int parse_term(const char *s, size_t len, int32_t rank, int ell_max, int *labels, int *ell_rank) {
    int n = 0, letters = 0;
    bool has_ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (has_ell || i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.') return -1;
            has_ell = true;
            i += 2;
        } else if (letter_id(s[i]) >= 0) {
            letters++;
        } else {
            return -1;
        }
    }
    int e = has_ell ? (rank >= 0 ? rank - letters : ell_max) : 0;
    if (e < 0 || letters + e > REF_MAX_RANK) return -1;
    *ell_rank = e;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int j = 0; j < e; j++) labels[n++] = EIN_LETTERS + (ell_max - e) + j;
            i += 2;
        } else {
            labels[n++] = letter_id(s[i]);
        }
    }
    return n;
}

tsr_status *ref_math_einsum(ref_ctx *c) {
    const char *eq_raw = ref_attr_str(c, "equation", NULL);
    if (!eq_raw) return ref_err(c, TSR_ERR_INVALID_MODEL, "attribute 'equation' is required");
    size_t nin = c->n_in;
    if (nin == 0 || nin > EIN_MAX_INPUTS)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "Einsum with %zu inputs is not supported", nin);
    ein_eq q;
    const tsr_tensor **in = q.in;
    q.nin = nin;
    for (size_t k = 0; k < nin; k++) {
        in[k] = ref_in(c, k);
        if (!in[k]) return ref_err(c, TSR_ERR_INVALID_MODEL, "input %zu is required", k);
    }
    int32_t t = in[0]->elem_type;
    int cls = m_class(t);
    if (cls == MC_NONE || t == TSR_BOOL)
        return ref_err(c, TSR_ERR_NOT_SUPPORTED, "element type %d is not supported", (int)t);

    /* The equation without spaces. */
    char eq[512];
    size_t el = 0;
    for (const char *p = eq_raw; *p && el < sizeof eq - 1; p++)
        if (*p != ' ') eq[el++] = *p;
    eq[el] = 0;
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : el;

    /* Inputs: term boundaries, then the widest ellipsis. */
    size_t start[EIN_MAX_INPUTS], len[EIN_MAX_INPUTS];
    size_t k = 0, s0 = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i == lhs_len || eq[i] == ',') {
            if (k >= nin) return ref_err(c, TSR_ERR_INVALID_MODEL, "more terms than inputs");
            start[k] = s0;
            len[k] = i - s0;
            k++;
            s0 = i + 1;
        }
    }
    if (k != nin) return ref_err(c, TSR_ERR_INVALID_MODEL, "equation has %zu terms for %zu inputs", k, nin);
    int(*labels)[REF_MAX_RANK] = q.labels;
    int ell_max = 0, dummy;
    for (k = 0; k < nin; k++) {
        int e;
        int n = parse_term(eq + start[k], len[k], in[k]->rank, REF_MAX_RANK, labels[k], &e);
        if (n < 0 || n != in[k]->rank)
            return ref_err(c, TSR_ERR_INVALID_MODEL, "term %zu does not match input rank %d", k, (int)in[k]->rank);
        if (e > ell_max) ell_max = e;
    }
    for (k = 0; k < nin; k++) (void)parse_term(eq + start[k], len[k], in[k]->rank, ell_max, labels[k], &dummy);

    /* Label sizes (size-1 ellipsis dims broadcast). */
    int64_t *size = q.size;
    int count[EIN_MAX_LABELS] = {0};
    for (int l = 0; l < EIN_MAX_LABELS; l++) size[l] = -1;
    for (k = 0; k < nin; k++)
        for (int32_t d = 0; d < in[k]->rank; d++) {
            int l = labels[k][d];
            int64_t v = in[k]->dims[d];
            count[l]++;
            if (size[l] < 0 || size[l] == 1) size[l] = v;
            else if (v != size[l] && !(l >= EIN_LETTERS && v == 1))
                return ref_err(c, TSR_ERR_INVALID_ARGUMENT, "label sizes %lld and %lld disagree", (long long)size[l],
                               (long long)v);
        }

    /* Output labels: given, or the ellipsis then the letters seen once,
     * alphabetically (numpy's implicit mode). */
    int *olab = q.olab;
    int on = 0;
    if (arrow) {
        int e;
        on = parse_term(arrow + 2, strlen(arrow + 2), -1, ell_max, olab, &e);
        if (on < 0) return ref_err(c, TSR_ERR_INVALID_MODEL, "bad output term");
        for (int i = 0; i < on; i++)
            if (size[olab[i]] < 0) return ref_err(c, TSR_ERR_INVALID_MODEL, "output label not in any input");
    } else {
        for (int j = 0; j < ell_max; j++) olab[on++] = EIN_LETTERS + j;
        for (int l = 0; l < EIN_LETTERS; l++)
            if (count[l] == 1) {
                if (on == REF_MAX_RANK) return ref_err(c, TSR_ERR_INVALID_MODEL, "output of rank over %d", on);
                olab[on++] = l;
            }
    }
    int64_t odims[REF_MAX_RANK];
    for (int i = 0; i < on; i++) odims[i] = size[olab[i]];
    tsr_tensor *o;
    tsr_status *st = ref_out(c, 0, t, on, odims, &o);
    if (st) return st;
    q.on = on;
    bool done;
    st = ref_math_einsum_pairs(c, &q, t, o, &done);
    if (st || done) return st;
    uint64_t nout = ref_numel(o);

    /* Every label used, output labels first; per label, each input's and
     * the output's stride (repeated labels add up: a diagonal). */
    int all[EIN_MAX_LABELS];
    int na = 0;
    bool used[EIN_MAX_LABELS] = {false};
    for (int i = 0; i < on; i++)
        if (!used[olab[i]]) {
            used[olab[i]] = true;
            all[na++] = olab[i];
        }
    for (int l = 0; l < EIN_MAX_LABELS; l++)
        if (size[l] >= 0 && !used[l]) {
            used[l] = true;
            all[na++] = l;
        }
    int64_t(*st_in)[EIN_MAX_LABELS] = calloc(nin + 1, sizeof *st_in);
    double *acc = calloc(nout ? nout : 1, sizeof(double));
    if (!st_in || !acc) {
        free(st_in);
        free(acc);
        return ref_err(c, TSR_ERR_NO_MEMORY, "out of memory");
    }
    for (k = 0; k < nin; k++) {
        int64_t s = 1;
        for (int32_t d = in[k]->rank - 1; d >= 0; d--) {
            if (in[k]->dims[d] != 1 || size[labels[k][d]] == 1) st_in[k][labels[k][d]] += s;
            s *= in[k]->dims[d];
        }
    }
    {
        int64_t s = 1;
        for (int i = on - 1; i >= 0; i--) {
            st_in[nin][olab[i]] += s;
            s *= odims[i];
        }
    }
    uint64_t total = 1;
    for (int a = 0; a < na; a++) total *= (uint64_t)size[all[a]];
    int64_t idx[EIN_MAX_LABELS] = {0};
    int64_t off[EIN_MAX_INPUTS + 1] = {0};
    for (uint64_t it = 0; it < total; it++) {
        if ((it & 0xFFFF) == 0xFFFF && ref_work(c, 0x10000 * (int64_t)nin)) {
            free(st_in);
            free(acc);
            return ref_stopped(c);
        }
        double p = 1.0;
        for (k = 0; k < nin; k++) p *= m_ldd(in[k]->elem_type, in[k]->data, (size_t)off[k]);
        acc[off[nin]] += p;
        for (int a = na - 1; a >= 0; a--) {
            int l = all[a];
            idx[a]++;
            for (size_t j = 0; j <= nin; j++) off[j] += st_in[j][l];
            if (idx[a] < size[l]) break;
            for (size_t j = 0; j <= nin; j++) off[j] -= st_in[j][l] * size[l];
            idx[a] = 0;
        }
    }
    for (uint64_t i = 0; i < nout; i++) m_std(t, o->data, (size_t)i, acc[i]);
    free(st_in);
    free(acc);
    return NULL;
}
