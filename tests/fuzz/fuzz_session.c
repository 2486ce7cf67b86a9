/* libFuzzer target: a whole session, created on the reference provider and
 * run once on made-up inputs, from a mutated ModelProto. The mutator is
 * structure-aware: it decodes the model and edits what hostile or broken
 * models get wrong (op types, input and output counts, attribute values,
 * dims, opset versions, initializer shapes), then encodes it again, so
 * most inputs reach the shape rules and the kernels instead of stopping
 * at the protobuf decoder. One mutation in eight is a plain byte mutation.
 * TESSERA_FUZZ_REFERENCE is the reference plugin's path (set by CMake). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "tessera/tessera.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static const char *const ops[] = {"Relu",
                                  "Add",
                                  "Mul",
                                  "Conv",
                                  "MatMul",
                                  "Gemm",
                                  "Reshape",
                                  "Transpose",
                                  "Concat",
                                  "Split",
                                  "Slice",
                                  "Gather",
                                  "Softmax",
                                  "MaxPool",
                                  "AveragePool",
                                  "GlobalAveragePool",
                                  "BatchNormalization",
                                  "Pad",
                                  "Resize",
                                  "ReduceMean",
                                  "Expand",
                                  "Tile",
                                  "Where",
                                  "Cast",
                                  "Squeeze",
                                  "Unsqueeze",
                                  "Range",
                                  "ConstantOfShape",
                                  "TopK",
                                  "Einsum",
                                  "LSTM",
                                  "If",
                                  "Loop",
                                  "ScatterND",
                                  "GatherND",
                                  "NonZero",
                                  "Flatten",
                                  "Shape",
                                  "Size",
                                  "CumSum",
                                  "DepthToSpace",
                                  "QuantizeLinear",
                                  "DequantizeLinear",
                                  "Identity"};
static const int64_t ints[] = {0,         1,        2, 3, -1, -2, 7, 64, 1 << 16, (int64_t)1 << 31, (int64_t)1 << 40,
                               INT64_MAX, INT64_MIN};

static uint64_t next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void set_str(char **field, const char *value) {
    char *copy = strdup(value);
    if (!copy) return;
    if (*field && *field != protobuf_c_empty_string) free(*field);
    *field = copy;
}

/* A node's name list grows by a copy of one of its entries, or shrinks. */
static void edit_names(size_t *n, char ***names, uint64_t *rng) {
    if (*n && next(rng) % 2) {
        (*n)--;
        if ((*names)[*n] != protobuf_c_empty_string) free((*names)[*n]);
        return;
    }
    char **grown = realloc(*names, (*n + 1) * sizeof *grown);
    if (!grown) return;
    *names = grown;
    grown[*n] = strdup(*n ? grown[next(rng) % *n] : "");
    if (grown[*n]) (*n)++;
}

static void edit_attribute(Onnx__AttributeProto *a, uint64_t *rng) {
    int64_t v = ints[next(rng) % (sizeof ints / sizeof ints[0])];
    if (a->n_ints) a->ints[next(rng) % a->n_ints] = v;
    else if (a->has_i) a->i = v;
    else if (a->has_f) a->f = (float)v * 0.5f;
}

static void edit_dims(Onnx__TypeProto *t, uint64_t *rng) {
    if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type || !t->tensor_type->shape ||
        !t->tensor_type->shape->n_dim)
        return;
    Onnx__TensorShapeProto *sh = t->tensor_type->shape;
    Onnx__TensorShapeProto__Dimension *d = sh->dim[next(rng) % sh->n_dim];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) return;
    d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    d->dim_value = ints[next(rng) % 9];
}

static void mutate_model(Onnx__ModelProto *m, uint64_t *rng) {
    Onnx__GraphProto *g = m->graph;
    switch (next(rng) % 7) {
    case 0:
        if (g && g->n_node)
            set_str(&g->node[next(rng) % g->n_node]->op_type, ops[next(rng) % (sizeof ops / sizeof ops[0])]);
        break;
    case 1:
        if (g && g->n_node) {
            Onnx__NodeProto *n = g->node[next(rng) % g->n_node];
            edit_names(&n->n_input, &n->input, rng);
        }
        break;
    case 2:
        if (g && g->n_node) {
            Onnx__NodeProto *n = g->node[next(rng) % g->n_node];
            edit_names(&n->n_output, &n->output, rng);
        }
        break;
    case 3:
        if (g && g->n_node) {
            Onnx__NodeProto *n = g->node[next(rng) % g->n_node];
            if (n->n_attribute) edit_attribute(n->attribute[next(rng) % n->n_attribute], rng);
        }
        break;
    case 4:
        if (g && g->n_input) edit_dims(g->input[next(rng) % g->n_input]->type, rng);
        break;
    case 5:
        if (m->n_opset_import) {
            Onnx__OperatorSetIdProto *o = m->opset_import[next(rng) % m->n_opset_import];
            o->has_version = 1;
            o->version = (int64_t)(next(rng) % 26);
        }
        break;
    default:
        if (g && g->n_initializer) {
            Onnx__TensorProto *t = g->initializer[next(rng) % g->n_initializer];
            if (t->n_dims) t->dims[next(rng) % t->n_dims] = ints[next(rng) % 9];
        }
        break;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    uint64_t rng = seed;
    Onnx__ModelProto *m = next(&rng) % 8 ? onnx__model_proto__unpack(NULL, size, data) : NULL;
    if (!m) return LLVMFuzzerMutate(data, size, max_size);
    mutate_model(m, &rng);
    size_t need = onnx__model_proto__get_packed_size(m);
    if (need <= max_size) size = onnx__model_proto__pack(m, data);
    onnx__model_proto__free_unpacked(m, NULL);
    return size;
}

/* Zero-filled inputs of the declared types; dims unknown are 1. False when
 * an input is not a tensor or is too big to be worth a run. */
static bool make_inputs(const tsr_session *s, size_t n, const char **names, tsr_value **values) {
    for (size_t i = 0; i < n; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if (tsr_session_input_info(s, i, &info) || info.elem_type == 0 || info.rank < 0 || info.rank > 8) return false;
        int64_t dims[8], count = 1;
        for (int32_t d = 0; d < info.rank; d++) {
            dims[d] = info.dims[d] < 0 ? 1 : info.dims[d];
            if (dims[d] > 4096 || (count *= dims[d] ? dims[d] : 1) > 4096) return false;
        }
        names[i] = info.name;
        tsr_status *st = tsr_value_create_tensor(info.elem_type, info.rank, dims, &values[i]);
        if (st) {
            tsr_status_free(st);
            return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    if (tsr_session_options_create(&o)) return 0;
    tsr_status_free(tsr_session_options_add_provider(o, TESSERA_FUZZ_REFERENCE));
    tsr_status_free(tsr_session_options_set_threads(o, 1));
    tsr_status_free(tsr_session_options_set_log_level(o, TSR_LOG_ERROR));
    /* well under tools/fuzz.sh's 512 MiB allocation limit: a bigger tensor
     * must be refused by the session, not reach malloc; and small enough
     * that a sanitized naive kernel fills one inside the 10 s per input */
    tsr_status_free(tsr_session_options_set_limit(o, "tensor_bytes", 16 << 20));
    /* and many tensors together, and the IR function expansion makes
     * (about 600 bytes a node), well under its 2 GiB RSS */
    tsr_status_free(tsr_session_options_set_limit(o, "working_bytes", 256 << 20));
    tsr_status_free(tsr_session_options_set_limit(o, "function_nodes", 100000));
    tsr_status *st = tsr_session_create_from_buffer(o, data, size, NULL, &s);
    tsr_session_options_free(o);
    if (st) {
        tsr_status_free(st);
        return 0;
    }
    size_t n_in = tsr_session_input_count(s), n_out = tsr_session_output_count(s);
    const char **names = calloc(n_in + 1, sizeof *names);
    tsr_value **values = calloc(n_in + 1, sizeof *values);
    tsr_value **outputs = calloc(n_out + 1, sizeof *outputs);
    /* A model within every limit may still ask for hours of naive work (a
     * pooling window covering a large input for every output): the run is
     * stopped after 1 s, well inside libFuzzer's 10 s per input, as an
     * application would with a deadline. Stopping must be clean too. */
    tsr_run_options *ro = NULL;
    if (tsr_run_options_create(&ro) == NULL) tsr_status_free(tsr_run_options_set_timeout_ms(ro, 1000));
    if (names && values && outputs && n_in <= 64 && make_inputs(s, n_in, names, values)) {
        st = tsr_session_run_values_with_options(s, ro, n_in, names, (const tsr_value *const *)values, n_out, NULL,
                                                 outputs);
        bool ran = st == NULL;
        tsr_status_free(st);
        for (size_t j = 0; j < n_out && ran; j++) tsr_value_free(outputs[j]);
    }
    for (size_t i = 0; values && i < n_in; i++) tsr_value_free(values[i]);
    free(names);
    free(values);
    free(outputs);
    tsr_run_options_free(ro);
    tsr_session_free(s);
    return 0;
}
