/* Regressions of what the libFuzzer session target (tests/fuzz/
 * fuzz_session.c) found: each model of tests/data/fuzz/ (written by
 * tests/data/make_fuzz_regressions.py) gets a session on the reference
 * provider and, when creation succeeds, one run on zero-filled inputs, as
 * the fuzzer does. Each must end in a clean error naming the problem, or
 * in a clean run; before its fix each crashed, overflowed or hung. */
#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

typedef struct fuzz_case {
    const char *model; /* in tests/data/fuzz/ */
    const char *words; /* in the error message; NULL: the run must succeed */
} fuzz_case;

static const fuzz_case CASES[] = {
    {"conv_transpose_output_padding.onnx", "output_padding value"},
    {"maxpool_same_huge_kernel.onnx", "kernel size 9223372036854775807"},
    {"split_huge_entry.onnx", "split entries sum to more than 2^56"},
    {"conv_huge_pad.onnx", NULL},
    {"range_huge.onnx", "Range of 9.22337e+18 elements"},
    {"resize_huge_scale.onnx", "makes axis 2 longer than 2^56"},
    {"resize_runtime_huge_scale.onnx", "scale 4.61169e+18 makes axis 0 too large"},
    {"slice_min_step.onnx", NULL},
    {"slice_backward_before_start.onnx", NULL},
    {"eyelike_min_k.onnx", NULL},
    {"onehot_huge_depth.onnx", "depth 1e+30"},
    {"onehot_empty_indices.onnx", NULL},
    {"empty_initializer_huge_dims.onnx", "shape [0,1099511627776,1099511627776] float is too large"},
    {"empty_input_huge_dims.onnx", "its known dims make more than 2^56 elements"},
    {"einsum_truncated_ellipsis.onnx", "bad equation 'ij->.'"},
    {"convinteger_wide_padded_window.onnx", NULL},
    {"roialign_huge_sampling.onnx", "need more than 2^30 samples"},
    {"maxunpool_huge_stride.onnx", "kernel, stride, pads or size out of range"},
    {"attention_huge_heads.onnx", "does not split into 9223372036854775807 heads"},
};

static const char *data_path(const char *name) {
    static char buf[1024];
    const char *dir = getenv("TESSERA_TEST_DATA");
    snprintf(buf, sizeof buf, "%s/fuzz/%s", dir && *dir ? dir : "tests/data", name);
    return buf;
}

static int suite_init(void) {
    const char *lib = getenv("TESSERA_BUILD_LIB");
    return setenv("TESSERA_PROVIDER_PATH", lib && *lib ? lib : "build/lib", 1) == 0 ? 0 : 1;
}

/* Zero-filled inputs of the declared types, unknown dims 1 (as the fuzzer). */
static tsr_status *make_inputs(const tsr_session *s, size_t n, const char **names, tsr_value **values) {
    for (size_t i = 0; i < n; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_input_info(s, i, &info);
        if (st) return st;
        int64_t dims[8];
        CU_ASSERT_FATAL(info.rank >= 0 && info.rank <= 8);
        for (int32_t d = 0; d < info.rank; d++) dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
        names[i] = info.name;
        if ((st = tsr_value_create_tensor(info.elem_type, info.rank, dims, &values[i]))) return st;
    }
    return NULL;
}

/* The status of creating and running c's model: NULL when both succeed. */
static tsr_status *create_and_run(const fuzz_case *c) {
    tsr_session_options *o;
    tsr_status *st = tsr_session_options_create(&o);
    if (st) return st;
    tsr_status_free(tsr_session_options_add_provider(o, "reference"));
    tsr_status_free(tsr_session_options_set_threads(o, 1));
    tsr_status_free(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    tsr_status_free(tsr_session_options_set_limit(o, "tensor_bytes", 256 << 20));
    tsr_session *s = NULL;
    st = tsr_session_create(o, data_path(c->model), &s);
    tsr_session_options_free(o);
    if (st) return st;
    size_t n_in = tsr_session_input_count(s), n_out = tsr_session_output_count(s);
    const char **names = calloc(n_in + 1, sizeof *names);
    tsr_value **values = calloc(n_in + 1, sizeof *values);
    tsr_value **outputs = calloc(n_out + 1, sizeof *outputs);
    CU_ASSERT_FATAL(names && values && outputs);
    st = make_inputs(s, n_in, names, values);
    if (!st) st = tsr_session_run_values(s, n_in, names, (const tsr_value *const *)values, n_out, NULL, outputs);
    for (size_t j = 0; j < n_out && !st; j++) tsr_value_free(outputs[j]);
    for (size_t i = 0; i < n_in; i++) tsr_value_free(values[i]);
    free(names);
    free(values);
    free(outputs);
    tsr_session_free(s);
    return st;
}

static void test_regressions(void) {
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const fuzz_case *c = &CASES[i];
        tsr_status *st = create_and_run(c);
        const char *msg = st ? tsr_status_message(st) : NULL;
        bool ok = c->words ? msg && strstr(msg, c->words) : !st;
        if (!ok)
            fprintf(stderr, "\n  %s: %s (want %s)\n", c->model, msg ? msg : "no error",
                    c->words ? c->words : "a clean run");
        CU_ASSERT(ok);
        tsr_status_free(st);
    }
}

void unit_register(void) {
    CU_pSuite s = CU_add_suite("fuzz_regressions", suite_init, NULL);
    CU_add_test(s, "each fuzz finding ends in a clean error or run", test_regressions);
}
