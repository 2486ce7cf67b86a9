/*
 * The inputs `tessera compare` feeds every provider set: files given with
 * -i, the rest made up exactly as `tessera run` makes them (same seed per
 * input index, symbolic dimensions from --dim or 1), so a comparison can be
 * reproduced with `tessera run -o` on each set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

/* cmd_run.c's RUN_SEED: the same made-up data as `tessera run`. */
#define COMPARE_SEED 0x7e55e7a5eedull

static bool load_pb(const char *file, tsr_value **out, char **name) {
    void *bytes;
    size_t size;
    if (!tio_read_file(file, &bytes, &size)) {
        fprintf(stderr, "tessera compare: cannot read %s: %s\n", file, strerror(errno));
        return false;
    }
    tsr_status *st = tsr_value_from_onnx_tensor(bytes, size, out, name);
    free(bytes);
    if (st) {
        char what[1200];
        cli_format(what, sizeof what, "%s is not a readable TensorProto", file);
        cli_report_status(what, st);
        return false;
    }
    return true;
}

static int64_t choose_dim(const cli_common *c, const tsr_io_info *info, int32_t k) {
    const char *sym = info->dim_symbols ? info->dim_symbols[k] : NULL;
    if (!sym) {
        fprintf(stderr, "tessera compare: note: input '%s': dimension %d is unknown; set to 1\n",
                info->name, (int)k);
        return 1;
    }
    for (size_t i = 0; i < c->dim_count; i++)
        if (strcmp(c->dims[i].symbol, sym) == 0) return c->dims[i].value;
    fprintf(stderr,
            "tessera compare: note: input '%s': dimension %d ('%s') set to 1 (use --dim %s=N)\n",
            info->name, (int)k, sym, sym);
    return 1;
}

static bool make_input(const cli_common *c, const tsr_io_info *info, size_t index,
                       tsr_value **out) {
    if (info->elem_type == TSR_UNDEFINED) {
        fprintf(stderr, "tessera compare: input '%s' is not a tensor; give it with -i %s=FILE.pb\n",
                info->name, info->name);
        return false;
    }
    int32_t rank = info->rank < 0 ? 0 : info->rank;
    int64_t *dims = calloc((size_t)rank + 1, sizeof *dims);
    if (!dims) return false;
    for (int32_t k = 0; k < rank; k++)
        dims[k] = info->dims[k] >= 0 ? info->dims[k] : choose_dim(c, info, k);
    tsr_status *st = tsr_value_create_tensor(info->elem_type, rank, dims, out);
    free(dims);
    if (!st && (st = tio_fill_generated(*out, COMPARE_SEED + index))) {
        tsr_value_free(*out);
        *out = NULL;
    }
    if (st) {
        char what[512];
        cli_format(what, sizeof what, "making input '%s'", info->name);
        cli_report_status(what, st);
        return false;
    }
    return true;
}

/* Places a loaded file at the index of the model input it names. */
static bool place_given(tsr_session *s, const cmpx_input_spec *g, cmpx_inputs *in) {
    tsr_value *v = NULL;
    char *stored = NULL;
    if (!load_pb(g->file, &v, &stored)) return false;
    const char *want = g->name ? g->name : stored;
    size_t k = in->count;
    for (size_t i = 0; want && i < in->count; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_input_info(s, i, &info);
        if (!st && strcmp(info.name, want) == 0) k = i;
        tsr_status_free(st);
    }
    bool ok = k < in->count && !in->values[k];
    if (k == in->count)
        fprintf(stderr, "tessera compare: %s: the model has no input named '%s'\n", g->file,
                want && *want ? want : "(no name in file; use -i NAME=FILE.pb)");
    else if (!ok)
        fprintf(stderr, "tessera compare: input '%s' given twice\n", want);
    free(stored);
    if (ok)
        in->values[k] = v;
    else
        tsr_value_free(v);
    return ok;
}

bool cmpx_inputs_make(tsr_session *s, const cmpx_input_spec *given, size_t given_count,
                      const cli_common *common, cmpx_inputs *in) {
    memset(in, 0, sizeof *in);
    size_t n = tsr_session_input_count(s);
    in->count = n;
    in->names = calloc(n + 1, sizeof *in->names);
    in->values = calloc(n + 1, sizeof *in->values);
    in->views = calloc(n + 1, sizeof *in->views);
    in->tensors = calloc(n + 1, sizeof *in->tensors);
    if (!in->names || !in->values || !in->views || !in->tensors) {
        fprintf(stderr, "tessera compare: out of memory\n");
        return false;
    }
    for (size_t g = 0; g < given_count; g++)
        if (!place_given(s, &given[g], in)) return false;
    for (size_t i = 0; i < n; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_input_info(s, i, &info);
        if (st) {
            cli_report_status("input info", st);
            return false;
        }
        /* A copy: the inputs outlive the session they were made for. */
        if (!(in->names[i] = strdup(info.name))) {
            fprintf(stderr, "tessera compare: out of memory\n");
            return false;
        }
        if (!in->values[i] && !make_input(common, &info, i, &in->values[i])) return false;
        in->views[i].struct_size = sizeof in->views[i];
        if ((st = tsr_value_tensor(in->values[i], &in->views[i]))) {
            cli_report_status("input tensor", st);
            return false;
        }
        in->tensors[i] = &in->views[i];
    }
    return true;
}

void cmpx_inputs_free(cmpx_inputs *in) {
    for (size_t i = 0; in->values && i < in->count; i++) tsr_value_free(in->values[i]);
    for (size_t i = 0; in->names && i < in->count; i++) free((void *)in->names[i]);
    free(in->names);
    free(in->values);
    free(in->views);
    free(in->tensors);
    memset(in, 0, sizeof *in);
}
