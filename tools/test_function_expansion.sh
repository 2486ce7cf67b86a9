#!/usr/bin/env bash
# Proves function-op expansion on the conformance data: for every function op
# with a body in partitioner/functions/, runs its conformance cases (not the
# _expanded ones) twice with the reference provider: as is, and told to
# decline the op (option decline), which forces the body through the
# partitioner. Prints per op: cases, passing as is, passing expanded; then a
# total. Exits 1 when a case that passes as is fails expanded.
#
# usage: tools/test_function_expansion.sh [BUILD_DIR] [SUITES_DIR]
#        (defaults: build, ../shared/onnx-tests)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SUITES=${2:-../shared/onnx-tests}
TESSERA="$BUILD/bin/tessera"
[ -x "$TESSERA" ] || { echo "no $TESSERA; build first" >&2; exit 2; }
[ -d "$SUITES/node" ] || { echo "no conformance suite at $SUITES/node" >&2; exit 2; }

# op  case-name prefixes (a case matches PREFIX or PREFIX_*; a prefix
# without a folder is in node/). pytorch-converted's PReLU cases are left out:
# they use opset 6, whose PRelu broadcasts differently and has no body.
CASES='
AffineGrid test_affine_grid
Attention test_attention
BlackmanWindow test_blackmanwindow
CastLike test_castlike
CausalConvWithState test_causal_conv_with_state
Celu test_celu
CenterCropPad test_center_crop_pad
Clip test_clip
DynamicQuantizeLinear test_dynamicquantizelinear
Elu test_elu pytorch-converted/test_ELU
FlexAttention test_flexattention
Gelu test_gelu
GreaterOrEqual test_greater_equal
GroupNormalization test_group_normalization
HammingWindow test_hammingwindow
HannWindow test_hannwindow
HardSigmoid test_hardsigmoid
HardSwish test_hardswish
LayerNormalization test_layer_normalization
LeakyRelu test_leakyrelu pytorch-converted/test_LeakyReLU
LessOrEqual test_less_equal
LinearAttention test_linear_attention
LogSoftmax test_logsoftmax pytorch-converted/test_LogSoftmax pytorch-converted/test_log_softmax
MeanVarianceNormalization test_mvn
Mish test_mish
NegativeLogLikelihoodLoss test_nllloss
PRelu test_prelu
Range test_range
ReduceL1 test_reduce_l1
ReduceL2 test_reduce_l2
ReduceLogSum test_reduce_log_sum_asc_axes test_reduce_log_sum_default test_reduce_log_sum_desc_axes test_reduce_log_sum_empty_set test_reduce_log_sum_negative_axes
ReduceLogSumExp test_reduce_log_sum_exp
ReduceSumSquare test_reduce_sum_square
Relu test_relu
RMSNormalization test_rms_normalization
RotaryEmbedding test_rotary_embedding
Selu test_selu pytorch-converted/test_SELU
Shrink test_shrink
Softmax test_softmax pytorch-converted/test_Softmax pytorch-converted/test_softmax
SoftmaxCrossEntropyLoss test_sce
Softplus test_softplus pytorch-converted/test_Softplus
Softsign test_softsign pytorch-converted/test_Softsign
Swish test_swish
SwiGLU test_swiglu
ThresholdedRelu test_thresholdedrelu
'

passes() { # op-or-empty case-dirs... -> prints the names that pass
    local op=$1
    shift
    local opt=()
    [ -n "$op" ] && opt=(--provider-option "reference:decline=$op")
    "$TESSERA" test -p reference "${opt[@]}" "$@" 2>/dev/null | awk '$1 == "PASS" {print $2}'
}

total=0 total_base=0 total_exp=0 regressions=0
printf '%-28s %6s %8s %9s\n' op cases "as is" expanded
while read -r op prefixes; do
    [ -n "$op" ] || continue
    dirs=()
    for p in $prefixes; do
        case $p in */*) ;; *) p=node/$p ;; esac
        for d in "$SUITES/$p" "$SUITES/$p"_*; do
            [ -d "$d" ] || continue
            case $(basename "$d") in *_expanded*) continue ;; esac
            dirs+=("$d")
        done
    done
    [ ${#dirs[@]} -gt 0 ] || continue
    base=$(passes "" "${dirs[@]}" | sort)
    expd=$(passes "$op" "${dirs[@]}" | sort)
    nb=$(printf '%s' "$base" | grep -c . || true)
    ne=$(printf '%s' "$expd" | grep -c . || true)
    lost=$(comm -23 <(printf '%s\n' "$base") <(printf '%s\n' "$expd") | grep . || true)
    printf '%-28s %6d %8d %9d\n' "$op" ${#dirs[@]} "$nb" "$ne"
    if [ -n "$lost" ]; then
        printf '    passes as is, fails expanded: %s\n' $lost
        regressions=$((regressions + $(printf '%s\n' "$lost" | grep -c .)))
    fi
    total=$((total + ${#dirs[@]}))
    total_base=$((total_base + nb))
    total_exp=$((total_exp + ne))
done <<<"$CASES"
printf '%-28s %6d %8d %9d\n' total "$total" "$total_base" "$total_exp"
echo "cases passing as is but failing expanded: $regressions"
[ "$regressions" -eq 0 ]
