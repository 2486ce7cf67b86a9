/* What the model file says about itself (tsr_session_metadata and friends),
 * read from the loaded model; nothing is copied. */
#include "session.h"
#include "status.h"

static const char *or_empty(const char *s) { return s ? s : ""; }

tsr_status *tsr_session_metadata(const tsr_session *s, tsr_model_metadata *out) {
    if (!s || !out) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session and out are required");
    if (out->struct_size < offsetof(tsr_model_metadata, opset_count) + sizeof out->opset_count)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "tsr_model_metadata.struct_size not set");
    const ir_model *m = s->model;
    out->producer_name = or_empty(m->producer_name);
    out->producer_version = or_empty(m->producer_version);
    out->domain = or_empty(m->domain);
    out->model_version = m->model_version;
    out->doc_string = or_empty(m->doc_string);
    out->graph_name = or_empty(m->graph ? m->graph->name : NULL);
    out->ir_version = m->ir_version;
    out->property_count = m->n_metadata;
    out->opset_count = m->n_opsets;
    return NULL;
}

tsr_status *tsr_session_metadata_property(const tsr_session *s, size_t index, const char **key, const char **value) {
    if (!s || !key || !value) return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session, key and value are required");
    if (index >= s->model->n_metadata)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "metadata property %zu out of range (%zu)", index,
                         s->model->n_metadata);
    *key = or_empty(s->model->metadata[index].key);
    *value = or_empty(s->model->metadata[index].value);
    return NULL;
}

tsr_status *tsr_session_opset(const tsr_session *s, size_t index, const char **domain, int64_t *version) {
    if (!s || !domain || !version)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "session, domain and version are required");
    if (index >= s->model->n_opsets)
        return tsr_error(TSR_ERR_INVALID_ARGUMENT, "opset %zu out of range (%zu)", index, s->model->n_opsets);
    *domain = or_empty(s->model->opsets[index].domain);
    *version = s->model->opsets[index].version;
    return NULL;
}
