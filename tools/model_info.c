/* `tessera run --info`: what a model says about itself and the inputs and
 * outputs it declares (types, fixed and symbolic dims), without running it. */
#include <stdio.h>

#include "cli.h"

/* "[batch,3,224,224]"; "[?]" for a dim neither fixed nor named. */
static void print_declared(const char *kind, const tsr_io_info *info) {
    printf("%s %s: %s ", kind, info->name, info->elem_type ? tsr_elem_type_name(info->elem_type) : "(type unknown)");
    if (info->rank < 0) {
        printf("(shape unknown)\n");
        return;
    }
    putchar('[');
    for (int32_t d = 0; d < info->rank; d++) {
        if (d) putchar(',');
        if (info->dims[d] >= 0) printf("%lld", (long long)info->dims[d]);
        else printf("%s", info->dim_symbols && info->dim_symbols[d] ? info->dim_symbols[d] : "?");
    }
    printf("]\n");
}

int cli_print_model_info(const tsr_session *s) {
    tsr_model_metadata m = {.struct_size = sizeof m};
    tsr_status *st = tsr_session_metadata(s, &m);
    if (st) {
        cli_report_status("metadata", st);
        return CLI_EXIT_FAIL;
    }
    printf("producer: %s %s\n", m.producer_name, m.producer_version);
    printf("domain: %s\nmodel version: %lld\nir version: %lld\ngraph: %s\n", m.domain, (long long)m.model_version,
           (long long)m.ir_version, m.graph_name);
    if (m.doc_string[0]) printf("doc: %s\n", m.doc_string);
    for (size_t i = 0; i < m.opset_count; i++) {
        const char *domain;
        int64_t version;
        if (!tsr_session_opset(s, i, &domain, &version))
            printf("opset: %s %lld\n", domain[0] ? domain : "ai.onnx", (long long)version);
    }
    for (size_t i = 0; i < m.property_count; i++) {
        const char *key, *value;
        if (!tsr_session_metadata_property(s, i, &key, &value)) printf("property %s: %s\n", key, value);
    }
    for (size_t i = 0; i < tsr_session_input_count(s); i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_input_info(s, i, &info))) {
            cli_report_status("input info", st);
            return CLI_EXIT_FAIL;
        }
        print_declared("input", &info);
    }
    for (size_t i = 0; i < tsr_session_output_count(s); i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_output_info(s, i, &info))) {
            cli_report_status("output info", st);
            return CLI_EXIT_FAIL;
        }
        print_declared("output", &info);
    }
    return CLI_EXIT_OK;
}
