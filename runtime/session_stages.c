/* Chains of models in session options (tsr_session_options_add_stage,
 * _connect, _set_stage_prefix), loading a chain for a session, and
 * tsr_model_compose. The merging itself: model_compose.c. */
#include <stdlib.h>
#include <string.h>

#include "onnx_writer.h"
#include "opset_convert.h"
#include "session.h"
#include "status.h"

/* Paths and names are kept within what a message or a file name can hold;
 * a longer one is a mistake, not a model. */
#define STAGE_TEXT_MAX 4096

static tsr_status *text_ok(const char *what, const char *s) {
    if (!s || !*s) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "%s is empty", what);
    if (strlen(s) > STAGE_TEXT_MAX)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "%s is longer than %d bytes", what, STAGE_TEXT_MAX);
    return NULL;
}

tsr_status *tsr_session_options_add_stage(tsr_session_options *o, const char *path) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL options");
    TSR_TRY(text_ok("stage path", path));
    compose_spec *s = &o->stages;
    char **p = realloc(s->paths, sizeof *p * (s->n_paths + 1));
    if (!p) return TSR_NO_MEMORY();
    s->paths = p;
    if (!(p[s->n_paths] = strdup(path))) return TSR_NO_MEMORY();
    s->n_paths++;
    return NULL;
}

tsr_status *tsr_session_options_connect(tsr_session_options *o, size_t stage, const char *output, const char *input) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL options");
    TSR_TRY(text_ok("connect: the output name", output));
    TSR_TRY(text_ok("connect: the input name", input));
    compose_spec *s = &o->stages;
    if (stage > s->n_paths || !s->n_paths)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT,
                         "connect %s=%s: stage %zu is not one of the stages added (1 to %zu, or 0 "
                         "for the one with that input)",
                         output, input, stage, s->n_paths);
    compose_link *l = realloc(s->links, sizeof *l * (s->n_links + 1));
    if (!l) return TSR_NO_MEMORY();
    s->links = l;
    l = &l[s->n_links];
    l->stage = stage;
    l->output = strdup(output);
    l->input = strdup(input);
    if (!l->output || !l->input) {
        free(l->output);
        free(l->input);
        return TSR_NO_MEMORY();
    }
    s->n_links++;
    return NULL;
}

tsr_status *tsr_session_options_set_stage_prefix(tsr_session_options *o, size_t stage, const char *prefix) {
    if (!o) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "NULL options");
    compose_spec *s = &o->stages;
    if (stage > s->n_paths)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "prefix for stage %zu: the stages are 0 (the model) to %zu", stage,
                         s->n_paths);
    if (prefix && *prefix) TSR_TRY(text_ok("stage prefix", prefix));
    if (stage >= s->n_prefixes) {
        char **p = realloc(s->prefixes, sizeof *p * (stage + 1));
        if (!p) return TSR_NO_MEMORY();
        for (size_t i = s->n_prefixes; i <= stage; i++) p[i] = NULL;
        s->prefixes = p;
        s->n_prefixes = stage + 1;
    }
    char *copy = NULL;
    if (prefix && *prefix && !(copy = strdup(prefix))) return TSR_NO_MEMORY();
    free(s->prefixes[stage]);
    s->prefixes[stage] = copy;
    return NULL;
}

static bool has_prefix(const compose_spec *s) {
    for (size_t i = 0; i < s->n_prefixes; i++)
        if (s->prefixes[i]) return true;
    return false;
}

tsr_status *session_chain_stages(ir_model *first, const char *label, const tsr_session_options *o, ir_model **out) {
    if (!o || (!o->stages.n_paths && !has_prefix(&o->stages))) {
        *out = first;
        return NULL;
    }
    const compose_spec *s = &o->stages;
    size_t n = s->n_paths + 1;
    ir_model **models = calloc(n, sizeof *models);
    const char **labels = calloc(n, sizeof *labels);
    tsr_status *st = models && labels ? NULL : TSR_NO_MEMORY();
    if (!st) {
        models[0] = first;
        labels[0] = label;
    }
    /* each file under the session's limits, its external data beside it */
    for (size_t k = 1; k < n && !st; k++) {
        labels[k] = s->paths[k - 1];
        st = ir_model_load_file_limited(s->paths[k - 1], &o->limits, &models[k]);
        if (st) st = tsr_error_wrap(st, "stage %zu '%s'", k, s->paths[k - 1]);
    }
    if (!st) {
        st = ir_model_compose(models, labels, n, s, out); /* consumes them all */
    } else {
        ir_model_free(first);
        for (size_t k = 1; models && k < n; k++) ir_model_free(models[k]);
    }
    free(models);
    free(labels);
    return st;
}

tsr_status *tsr_model_compose(const tsr_session_options *o, const char *path, void **bytes, size_t *size) {
    if (!path || !bytes || !size) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "path, bytes and size are required");
    ir_model *m;
    TSR_TRY(ir_model_load_file_limited(path, o ? &o->limits : NULL, &m));
    TSR_TRY(session_chain_stages(m, path, o, &m));
    /* one file holds one version per domain: older stages' nodes converted */
    tsr_status *st = ir_model_settle_opsets(m);
    if (!st) st = onnx_write_model(m, bytes, size);
    ir_model_free(m);
    return st;
}
