/* Which operator versions change what a node of an older version means
 * (opset_compat.h). The since-versions come from ONNX's operator-set headers
 * (op_versions_table.c); which of them matter is written here, from the
 * operator changelog: a version not listed below only added types, or
 * attributes and optional inputs whose defaults keep the older meaning, so
 * a node of the older version reads the same under it. */
#include "opset_compat.h"

#include <stdlib.h>
#include <string.h>

#include "status.h"

typedef opset_change_kind (*judge_fn)(const ir_node *n);

/* A since-version that matters, to the nodes `judge` picks (NULL: all). */
typedef struct change_row {
    const char *domain;
    const char *op;
    int64_t since;
    opset_change_kind kind; /* what it is for a node it matters to */
    judge_fn judge;         /* OPSET_SAME where the node does not use what changed */
    const char *what;
} change_row;

static bool has_attr(const ir_node *n, const char *name) { return ir_node_attr(n, name) != NULL; }

static int64_t attr_int(const ir_node *n, const char *name, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->type == TSR_ATTR_INT ? a->i : dflt;
}

static bool has_input(const ir_node *n, size_t i) { return i < n->n_inputs && n->inputs[i]; }

static bool uses_outputs_after_first(const ir_node *n) {
    for (size_t i = 1; i < n->n_outputs; i++)
        if (n->outputs[i]) return true;
    return false;
}

static opset_change_kind if_attr(const ir_node *n, const char *name, opset_change_kind k) {
    return has_attr(n, name) ? k : OPSET_SAME;
}

static opset_change_kind j_axes(const ir_node *n) { return if_attr(n, "axes", OPSET_REWRITE); }
static opset_change_kind j_split(const ir_node *n) { return if_attr(n, "split", OPSET_REWRITE); }
static opset_change_kind j_shape(const ir_node *n) { return if_attr(n, "shape", OPSET_REWRITE); }
static opset_change_kind j_ratio(const ir_node *n) { return if_attr(n, "ratio", OPSET_REWRITE); }
static opset_change_kind j_paddings(const ir_node *n) { return if_attr(n, "paddings", OPSET_REWRITE); }
static opset_change_kind j_consumed(const ir_node *n) { return if_attr(n, "consumed_inputs", OPSET_REWRITE); }
static opset_change_kind j_p(const ir_node *n) { return if_attr(n, "p", OPSET_BREAKS); }
static opset_change_kind j_output_sequence(const ir_node *n) { return if_attr(n, "output_sequence", OPSET_BREAKS); }
static opset_change_kind j_no_axis(const ir_node *n) { return has_attr(n, "axis") ? OPSET_SAME : OPSET_REWRITE; }
static opset_change_kind j_second_input(const ir_node *n) { return has_input(n, 1) ? OPSET_BREAKS : OPSET_SAME; }
static opset_change_kind j_min_max(const ir_node *n) {
    return has_attr(n, "min") || has_attr(n, "max") ? OPSET_REWRITE : OPSET_SAME;
}
static opset_change_kind j_extra_outputs(const ir_node *n) {
    return uses_outputs_after_first(n) ? OPSET_BREAKS : OPSET_SAME;
}
static opset_change_kind j_ceil_mode(const ir_node *n) {
    return attr_int(n, "ceil_mode", 0) ? OPSET_BREAKS : OPSET_SAME;
}
/* broadcast=0 (or none) needed equal shapes, which numpy rules keep */
static opset_change_kind j_broadcast(const ir_node *n) {
    if (!has_attr(n, "broadcast") && !has_attr(n, "axis")) return OPSET_SAME;
    return attr_int(n, "broadcast", 0) ? OPSET_BREAKS : OPSET_REWRITE;
}
/* Gemm-6's broadcast=1 is the unidirectional broadcast Gemm-7 always does */
static opset_change_kind j_gemm_broadcast(const ir_node *n) { return if_attr(n, "broadcast", OPSET_REWRITE); }
static opset_change_kind j_is_test(const ir_node *n) {
    if (!has_attr(n, "is_test")) return strcmp(n->op_type, "Dropout") == 0 ? OPSET_SAME : OPSET_BREAKS;
    return attr_int(n, "is_test", 0) || strcmp(n->op_type, "Dropout") == 0 ? OPSET_REWRITE : OPSET_BREAKS;
}
static opset_change_kind j_spatial(const ir_node *n) {
    if (!has_attr(n, "spatial")) return OPSET_SAME;
    return attr_int(n, "spatial", 1) == 1 ? OPSET_REWRITE : OPSET_BREAKS;
}
/* Before 13 the input is flattened to 2-D at axis: the same as one axis
 * only for the last, which axis -1 names whatever the rank. */
static opset_change_kind j_softmax(const ir_node *n) {
    return attr_int(n, "axis", 1) == -1 ? OPSET_SAME : OPSET_REWRITE;
}
static opset_change_kind j_roi_mode(const ir_node *n) {
    return has_attr(n, "coordinate_transformation_mode") ? OPSET_SAME : OPSET_REWRITE;
}
static opset_change_kind j_grid_mode(const ir_node *n) {
    const ir_attr *a = ir_node_attr(n, "mode");
    if (!a || a->type != TSR_ATTR_STRING || !a->s) return OPSET_SAME; /* bilinear, now called linear */
    return strcmp(a->s, "bilinear") == 0 || strcmp(a->s, "bicubic") == 0 ? OPSET_REWRITE : OPSET_SAME;
}
static opset_change_kind j_dropout_mask(const ir_node *n) { return j_extra_outputs(n); }

#define REWRITE(op, v, j, w)                                                                                           \
    { "", op, v, OPSET_REWRITE, j, w }
#define BREAKS(op, v, j, w)                                                                                            \
    { "", op, v, OPSET_BREAKS, j, w }
#define CONSUMED(op) REWRITE(op, 6, j_consumed, "attribute consumed_inputs was removed")
#define BROADCAST(op) BREAKS(op, 7, j_broadcast, "the broadcast and axis attributes gave way to numpy broadcasting")
#define AXES_INPUT(op, v) REWRITE(op, v, j_axes, "axes moved from an attribute to an input")
#define SOFTMAX(op) REWRITE(op, 13, j_softmax, "axis no longer flattens the input to 2-D, and defaults to -1")

/* Sorted by domain, op, since (opset_compat_rows_sorted checks). */
static const change_row rows[] = {
    CONSUMED("Abs"),
    CONSUMED("Add"),
    BROADCAST("Add"),
    BROADCAST("And"),
    BREAKS("AveragePool", 22, j_ceil_mode, "with ceil_mode, windows starting in the right padding are dropped"),
    CONSUMED("BatchNormalization"),
    BREAKS("BatchNormalization", 7, j_is_test, "attribute is_test was removed (inference needs is_test=1)"),
    BREAKS("BatchNormalization", 9, j_spatial, "attribute spatial was removed (spatial=0 has no equivalent)"),
    BREAKS("BatchNormalization", 14, j_extra_outputs, "the training outputs changed"),
    BREAKS("Cast", 6, NULL, "attribute to became an enum"),
    CONSUMED("Ceil"),
    CONSUMED("Clip"),
    REWRITE("Clip", 11, j_min_max, "min and max moved from attributes to inputs"),
    REWRITE("Concat", 4, j_no_axis, "axis became required (it was 1 by default)"),
    REWRITE("DFT", 20, NULL, "axis moved from an attribute (default 1) to an input (default -2)"),
    CONSUMED("Div"),
    BROADCAST("Div"),
    CONSUMED("Dropout"),
    REWRITE("Dropout", 7, j_is_test, "attribute is_test was removed"),
    BREAKS("Dropout", 10, j_dropout_mask, "the mask output became bool"),
    REWRITE("Dropout", 12, j_ratio, "ratio moved from an attribute to an input"),
    CONSUMED("Elu"),
    BROADCAST("Equal"),
    CONSUMED("Exp"),
    CONSUMED("Floor"),
    BREAKS("GRU", 7, j_output_sequence, "attribute output_sequence was removed"),
    CONSUMED("Gemm"),
    REWRITE("Gemm", 7, j_gemm_broadcast, "attribute broadcast was removed (C always broadcasts)"),
    BREAKS("GlobalLpPool", 2, j_p, "attribute p became an int"),
    BROADCAST("Greater"),
    REWRITE("GridSample", 20, j_grid_mode, "modes bilinear and bicubic were renamed linear and cubic"),
    BREAKS("GroupNormalization", 21, NULL, "scale and bias became per channel, not per group"),
    CONSUMED("HardSigmoid"),
    SOFTMAX("Hardmax"),
    CONSUMED("InstanceNormalization"),
    BREAKS("LSTM", 7, j_output_sequence, "attribute output_sequence was removed"),
    CONSUMED("LeakyRelu"),
    BROADCAST("Less"),
    CONSUMED("Log"),
    SOFTMAX("LogSoftmax"),
    BREAKS("LpPool", 2, j_p, "attribute p became an int"),
    CONSUMED("Max"),
    BREAKS("MaxPool", 22, j_ceil_mode, "with ceil_mode, windows starting in the right padding are dropped"),
    CONSUMED("Mean"),
    CONSUMED("Min"),
    CONSUMED("Mul"),
    BROADCAST("Mul"),
    CONSUMED("Neg"),
    BROADCAST("Or"),
    CONSUMED("PRelu"),
    BREAKS("PRelu", 7, NULL, "slope broadcasts numpy-style instead of per channel"),
    REWRITE("Pad", 2, j_paddings, "attribute paddings was renamed pads"),
    REWRITE("Pad", 11, NULL, "pads and value moved from attributes to inputs"),
    BROADCAST("Pow"),
    BREAKS("RNN", 7, j_output_sequence, "attribute output_sequence was removed"),
    CONSUMED("Reciprocal"),
    AXES_INPUT("ReduceL1", 18),
    AXES_INPUT("ReduceL2", 18),
    AXES_INPUT("ReduceLogSum", 18),
    AXES_INPUT("ReduceLogSumExp", 18),
    AXES_INPUT("ReduceMax", 18),
    AXES_INPUT("ReduceMean", 18),
    AXES_INPUT("ReduceMin", 18),
    AXES_INPUT("ReduceProd", 18),
    AXES_INPUT("ReduceSum", 13),
    AXES_INPUT("ReduceSumSquare", 18),
    CONSUMED("Relu"),
    REWRITE("Reshape", 5, j_shape, "shape moved from an attribute to an input"),
    BREAKS("Resize", 11, NULL, "Resize-10's coordinate mapping gave way to coordinate_transformation_mode"),
    REWRITE("RoiAlign", 16, j_roi_mode, "coordinate_transformation_mode appeared, defaulting to half_pixel"),
    BREAKS("Scan", 9, NULL, "the batch axis and sequence_lens were removed"),
    REWRITE("Scatter", 11, NULL, "Scatter was deprecated for ScatterElements (the same operation)"),
    CONSUMED("Selu"),
    CONSUMED("Sigmoid"),
    REWRITE("Slice", 10, NULL, "starts, ends and axes moved from attributes to inputs"),
    SOFTMAX("Softmax"),
    BREAKS("Split", 2, j_second_input, "split moved from an input to an attribute"),
    REWRITE("Split", 13, j_split, "split moved from an attribute to an input"),
    CONSUMED("Sqrt"),
    AXES_INPUT("Squeeze", 13),
    CONSUMED("Sub"),
    BROADCAST("Sub"),
    CONSUMED("Sum"),
    CONSUMED("Tanh"),
    BREAKS("Tile", 6, NULL, "tiles and axis inputs were replaced by repeats"),
    REWRITE("TopK", 10, NULL, "k moved from an attribute to an input"),
    AXES_INPUT("Unsqueeze", 13),
    BREAKS("Upsample", 7, NULL, "height_scale and width_scale gave way to scales"),
    REWRITE("Upsample", 9, NULL, "scales moved from an attribute to an input"),
    BREAKS("Upsample", 10, NULL, "Upsample was deprecated for Resize"),
    BROADCAST("Xor"),
    {"ai.onnx.ml", "LabelEncoder", 2, OPSET_BREAKS, NULL, "its attributes were renamed and retyped"},
    {"ai.onnx.ml", "TreeEnsembleClassifier", 5, OPSET_BREAKS, NULL, "deprecated for TreeEnsemble"},
    {"ai.onnx.ml", "TreeEnsembleRegressor", 5, OPSET_BREAKS, NULL, "deprecated for TreeEnsemble"},
};

static int cmp_key(const char *d1, const char *o1, int64_t s1, const char *d2, const char *o2, int64_t s2) {
    int r = strcmp(d1, d2);
    if (!r) r = strcmp(o1, o2);
    if (!r) r = s1 < s2 ? -1 : s1 > s2;
    return r;
}

static const change_row *find_row(const char *domain, const char *op, int64_t since) {
    size_t lo = 0, hi = sizeof rows / sizeof rows[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = cmp_key(rows[mid].domain, rows[mid].op, rows[mid].since, domain, op, since);
        if (r == 0) return &rows[mid];
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* First table row of (domain, op), or op_version_count when none. */
static size_t first_version(const char *domain, const char *op) {
    size_t lo = 0, hi = op_version_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(op_version_table[mid].domain, op_version_table[mid].op, 0, domain, op, 0) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < op_version_count && strcmp(op_version_table[lo].domain, domain) == 0 &&
        strcmp(op_version_table[lo].op, op) == 0)
        return lo;
    return op_version_count;
}

bool opset_compat_rows_sorted(void) {
    for (size_t i = 1; i < sizeof rows / sizeof rows[0]; i++)
        if (cmp_key(rows[i - 1].domain, rows[i - 1].op, rows[i - 1].since, rows[i].domain, rows[i].op, rows[i].since) >=
                0 ||
            !opset_has_version(rows[i].domain, rows[i].op, rows[i].since))
            return false;
    return rows[0].since > 0 && opset_has_version(rows[0].domain, rows[0].op, rows[0].since);
}

bool opset_has_version(const char *domain, const char *op, int64_t since) {
    for (size_t i = first_version(domain, op); i < op_version_count && strcmp(op_version_table[i].op, op) == 0 &&
         strcmp(op_version_table[i].domain, domain) == 0;
         i++)
        if (op_version_table[i].since == since) return true;
    return false;
}

static bool calls_local_function(const ir_model *m, const ir_node *n) {
    for (size_t i = 0; m && i < m->n_functions; i++)
        if (strcmp(m->functions[i]->name, n->op_type) == 0 && strcmp(m->functions[i]->domain, n->domain) == 0)
            return true;
    return false;
}

tsr_status *opset_next_change(const ir_model *m, const ir_node *n, int64_t from, int64_t to, opset_change *out,
                              bool *found) {
    *found = false;
    if (to <= from || calls_local_function(m, n)) return NULL; /* functions are found by name alone */
    const char *d = n->domain ? n->domain : "";
    const op_version_domain *dom = NULL;
    for (size_t i = 0; i < op_version_domain_count && !dom; i++)
        if (strcmp(op_version_domains[i].domain, d) == 0) dom = &op_version_domains[i];
    if (!dom)
        return tsr_error(TSR_ERR_NOT_SUPPORTED,
                         "what changed between versions of domain '%s' is not known (only ai.onnx's and "
                         "ai.onnx.ml's are)",
                         d);
    if (to > dom->newest)
        return tsr_error(TSR_ERR_NOT_SUPPORTED, "Tessera's operator table ends at opset %lld of %s",
                         (long long)dom->newest, *d ? d : "ai.onnx");
    size_t i = first_version(d, n->op_type);
    if (i == op_version_count)
        return tsr_error(TSR_ERR_INVALID_MODEL, "%s is not an operator of %s", n->op_type, *d ? d : "ai.onnx");
    for (; i < op_version_count && strcmp(op_version_table[i].op, n->op_type) == 0 &&
         strcmp(op_version_table[i].domain, d) == 0;
         i++) {
        int64_t s = op_version_table[i].since;
        if (s <= from || s > to) continue;
        const change_row *r = find_row(d, n->op_type, s);
        opset_change_kind k = !r ? OPSET_SAME : r->judge ? r->judge(n) : r->kind;
        if (k == OPSET_SAME) continue;
        *out = (opset_change){s, k, r->what};
        *found = true;
        return NULL;
    }
    return NULL;
}
