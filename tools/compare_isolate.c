/*
 * Running one node of the model alone, on values given from outside: the
 * way to tell whether a provider set *introduces* a difference at a node or
 * only amplifies one its inputs already carried (within tolerance). The
 * node (of the main graph or of a control-flow body alike) is cut out of the model file as a one-node ModelProto — its own
 * NodeProto bytes, the initializers it reads and the opset imports copied
 * verbatim, graph inputs and outputs typed from the given values — and run
 * in a fresh session with the set's providers.
 */
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"
#include "pb_writer.h"

/* ValueInfoProto{name, type{tensor_type{elem_type, shape}}} for a tensor. */
static bool put_value_info(pb_buf *graph, unsigned field, const char *name, const tsr_value *v) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = v ? tsr_value_tensor(v, &t) : NULL;
    if (!v || st) {
        tsr_status_free(st);
        return false; /* only tensors can be fed or typed */
    }
    pb_buf shape = {0}, tensor_type = {0}, type = {0}, info = {0};
    for (int32_t k = 0; k < t.rank; k++) {
        pb_buf dim = {0};
        pb_put_varint_field(&dim, 1, (uint64_t)t.dims[k]);
        pb_put_message(&shape, 1, &dim);
    }
    pb_put_varint_field(&tensor_type, 1, (uint64_t)t.elem_type);
    pb_put_message(&tensor_type, 2, &shape);
    pb_put_message(&type, 1, &tensor_type);
    pb_put_len_field(&info, 1, name, strlen(name));
    pb_put_message(&info, 2, &type);
    pb_put_message(graph, field, &info);
    return true;
}

static const cmpx_span *initializer(const cmpx_model *m, const char *name) {
    for (size_t i = 0; i < m->initializer_count; i++)
        if (strcmp(m->initializers[i].name, name) == 0) return &m->initializers[i];
    return NULL;
}

static bool seen_before(const cmpx_node *n, size_t k) {
    for (size_t j = 0; j < k; j++)
        if (strcmp(n->inputs[j], n->inputs[k]) == 0) return true;
    return false;
}

/* The one-node model's bytes; false (with a reason) when the node cannot be
 * cut out. `file` is the model file's contents. */
static bool build_model(const cmpx_model *m, const cmpx_node *n, const uint8_t *file, size_t file_size,
                        cmpx_value_lookup find, void *user, pb_buf *model, char *err, size_t err_size) {
    pb_buf graph = {0};
    if (n->raw_offset > file_size || n->raw_size > file_size - n->raw_offset) {
        snprintf(err, err_size, "the model file changed while comparing");
        return false;
    }
    pb_put_len_field(&graph, 1, file + n->raw_offset, n->raw_size);
    pb_put_len_field(&graph, 2, "isolated", 8);
    for (size_t k = 0; k < n->input_count; k++) {
        const char *in = n->inputs[k];
        if (!*in || seen_before(n, k)) continue;
        const cmpx_span *init = initializer(m, in);
        if (init) {
            if (init->offset > file_size || init->size > file_size - init->offset) {
                snprintf(err, err_size, "the model file changed while comparing");
                free(graph.p);
                return false;
            }
            pb_put_len_field(&graph, 5, file + init->offset, init->size);
        } else if (!put_value_info(&graph, 11, in, find(user, in))) {
            snprintf(err, err_size, "input '%s' was not observed as a tensor", in);
            free(graph.p);
            return false;
        }
    }
    size_t declared = 0;
    for (size_t k = 0; k < n->output_count; k++)
        if (*n->outputs[k] && put_value_info(&graph, 12, n->outputs[k], find(user, n->outputs[k]))) declared++;
    if (!declared) {
        snprintf(err, err_size, "none of its outputs was observed as a tensor");
        free(graph.p);
        return false;
    }
    pb_put_varint_field(model, 1, m->ir_version ? m->ir_version : 8);
    for (size_t i = 0; i < m->opset_count; i++) {
        const cmpx_span *o = &m->opsets[i];
        if (o->offset <= file_size && o->size <= file_size - o->offset)
            pb_put_len_field(model, 8, file + o->offset, o->size);
    }
    pb_put_message(model, 7, &graph);
    if (model->failed) {
        snprintf(err, err_size, "out of memory");
        return false;
    }
    return true;
}

/* The directory holding the model, for external data; NULL for ".". */
static char *model_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
}

bool cmpx_isolate(const char *model_path, const cmpx_model *m, const cmpx_node *n, const tsr_session_options *options,
                  cmpx_value_lookup find, void *user, tsr_value **outputs, char *err, size_t err_size) {
    void *file = NULL;
    size_t file_size = 0;
    if (!tio_read_file(model_path, &file, &file_size)) {
        snprintf(err, err_size, "cannot read %s", model_path);
        return false;
    }
    pb_buf model = {0};
    bool ok = build_model(m, n, file, file_size, find, user, &model, err, err_size);
    free(file);
    tsr_session *s = NULL;
    char *dir = ok ? model_dir(model_path) : NULL;
    tsr_status *st = ok ? tsr_session_create_from_buffer(options, model.p, model.len, dir ? dir : ".", &s) : NULL;
    free(dir);
    free(model.p);
    /* Feed every declared input; fetch every declared output. */
    size_t nin = s ? tsr_session_input_count(s) : 0, nout = s ? tsr_session_output_count(s) : 0;
    const char **in_names = calloc(nin + 1, sizeof *in_names);
    const char **out_names = calloc(nout + 1, sizeof *out_names);
    tsr_tensor *views = calloc(nin + 1, sizeof *views);
    const tsr_tensor **tensors = calloc(nin + 1, sizeof *tensors);
    tsr_value **got = calloc(nout + 1, sizeof *got);
    if (ok && !st && (!in_names || !out_names || !views || !tensors || !got)) {
        snprintf(err, err_size, "out of memory");
        ok = false;
    }
    for (size_t i = 0; ok && !st && i < nin; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_input_info(s, i, &info))) break;
        in_names[i] = info.name;
        views[i].struct_size = sizeof views[i];
        if ((st = tsr_value_tensor(find(user, info.name), &views[i]))) break;
        tensors[i] = &views[i];
    }
    for (size_t j = 0; ok && !st && j < nout; j++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_output_info(s, j, &info))) break;
        out_names[j] = info.name;
    }
    if (ok && !st) st = tsr_session_run(s, nin, in_names, tensors, nout, out_names, got);
    if (st) {
        cli_format(err, err_size, "%s", tsr_status_message(st));
        tsr_status_free(st);
        ok = false;
    }
    /* Hand the outputs back in the node's output order. */
    for (size_t k = 0; k < n->output_count; k++) {
        outputs[k] = NULL;
        for (size_t j = 0; ok && j < nout; j++)
            if (got[j] && strcmp(out_names[j], n->outputs[k]) == 0) {
                outputs[k] = got[j];
                got[j] = NULL;
            }
    }
    for (size_t j = 0; got && j < nout; j++) tsr_value_free(got[j]);
    free(got);
    free(in_names);
    free(out_names);
    free(views);
    free(tensors);
    tsr_session_free(s);
    return ok;
}
