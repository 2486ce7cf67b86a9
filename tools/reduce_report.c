/*
 * `tessera reduce --json`: the reduction as one JSON object, for scripts
 * that file or track the cases it writes (docs/compare.md lists the
 * fields). Only what the search already knows is printed; nothing runs here.
 */
#include "reduce_tool.h"

static void str_or_null(const char *s) {
    if (s) cmpx_json_string(stdout, s);
    else printf("null");
}

static void print_set(const rdc_set *set) {
    printf("{\"providers\": ");
    cmpx_json_string(stdout, set->list);
    printf(", \"oracle\": %s}", set->oracle ? "true" : "false");
}

/* The case's nodes ({"name", "op", "domain"}, file order), inputs (fed
 * from the baseline's run) and outputs. */
static void print_cut(const rdc_graph *g, const rdc_cut *cut) {
    printf("{\"nodes\": [");
    size_t listed = 0;
    for (size_t i = 0; i < g->m.node_count; i++) {
        if (!cut->kept[i]) continue;
        char label[512];
        cmpx_node_label(&g->m, i, label, sizeof label);
        printf("%s{\"name\": ", listed++ ? ", " : "");
        cmpx_json_string(stdout, label);
        printf(", \"op\": ");
        cmpx_json_string(stdout, g->m.nodes[i].op_type);
        printf(", \"domain\": ");
        cmpx_json_string(stdout, g->m.nodes[i].domain);
        printf("}");
    }
    printf("], \"inputs\": [");
    for (size_t i = 0; i < cut->input_count; i++) {
        if (i) printf(", ");
        cmpx_json_string(stdout, g->capture.values[cut->inputs[i]].name);
    }
    printf("], \"outputs\": [");
    for (size_t i = 0; i < cut->output_count; i++) {
        if (i) printf(", ");
        cmpx_json_string(stdout, cut->outputs[i]);
    }
    printf("]}");
}

void rdc_print_json(const rdc_config *cfg, const rdc_graph *g, const rdc_summary *s) {
    printf("{\"model\": ");
    cmpx_json_string(stdout, s->model);
    printf(", \"model_nodes\": %zu, \"baseline\": ", g->m.node_count);
    print_set(&cfg->sets[0]);
    printf(", \"suspect\": ");
    print_set(&cfg->sets[1]);
    printf(", \"failure_kind\": \"%s\", \"error_contains\": ", cfg->mode == RDC_ERROR ? "error" : "difference");
    str_or_null(cfg->error_text);
    printf(", \"rtol\": ");
    cmpx_json_number(stdout, cfg->tol.rtol);
    printf(", \"atol\": ");
    cmpx_json_number(stdout, cfg->tol.atol);
    printf(", \"result\": ");
    cmpx_json_string(stdout, s->result);
    printf(", \"error\": ");
    str_or_null(s->error);
    printf(", \"whole_model\": ");
    str_or_null(s->whole);
    printf(", \"reduced\": ");
    if (s->cut) print_cut(g, s->cut);
    else printf("null");
    printf(", \"case\": ");
    str_or_null(s->cut ? s->case_dir : NULL);
    printf(", \"case_shows_it\": %s, \"case_detail\": ", s->cut && s->case_shows ? "true" : "false");
    str_or_null(s->cut ? s->final_detail : NULL);
    printf(", \"check\": ");
    if (s->cut && s->case_shows) {
        printf("{\"passes\": ");
        cmpx_json_string(stdout, s->check[0]);
        printf(", \"fails\": ");
        cmpx_json_string(stdout, s->check[1]);
        printf("}");
    } else {
        printf("null");
    }
    printf(", \"tries\": %zu, \"stopped_at_max_tries\": %s, \"seconds\": ", s->tries, s->gave_up ? "true" : "false");
    cmpx_json_number(stdout, s->seconds);
    printf("}\n");
}
