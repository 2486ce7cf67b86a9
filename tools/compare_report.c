/*
 * How `tessera compare` words its findings, as text for people and as JSON
 * for scripts (docs/compare.md lists the fields). Everything goes to stdout;
 * the caller decides the surrounding structure.
 */
#include "compare_tool.h"

void cmpx_print_stats_text(const cmpx_stats *s) {
    if (!s->comparable) {
        printf("not comparable: %s", s->why);
        return;
    }
    if (s->why[0]) {
        printf("%s", cmpx_agrees(s) ? "equal" : s->why);
        return;
    }
    printf("max_abs %.3g  max_rel %.3g  over tolerance %zu of %zu", s->max_abs, s->max_rel, s->mismatches, s->count);
    if (s->nonfinite_mismatches) printf(" (%zu NaN/Inf)", s->nonfinite_mismatches);
    if (s->has_worst) printf("  worst [%zu]: %s vs %s", s->worst_index, s->baseline_value, s->value);
}

/* ", in iteration 3 of loop0" for a body node's run, "" elsewhere. */
static void where_text(const cmpx_sites *m, size_t site, const size_t *chain, char *buf, size_t size) {
    char text[1024];
    cmpx_chain_text(m, site, chain, m->items[site].depth, text, sizeof text);
    snprintf(buf, size, "%s%s", *text ? ", in " : "", text);
}

static void print_earliest_text(const cmpx_sites *m, const cmpx_divergence *d) {
    char label[512], where[1100];
    if (!d->has_earliest) return;
    cmpx_site_label(m, d->earliest, label, sizeof label);
    where_text(m, d->earliest, d->earliest_chain, where, sizeof where);
    printf("  differences start at: %s (%s)%s, max_abs %.3g on identical inputs\n", label,
           m->items[d->earliest].node->op_type, where, d->earliest_max_abs);
}

static void print_isolation_text(const cmpx_isolation *iso) {
    if (!iso->tried) return;
    if (!iso->ran) {
        printf("    alone on the baseline's inputs: could not run (%s)\n", iso->error);
        return;
    }
    printf("    alone on the baseline's inputs: ");
    cmpx_print_stats_text(&iso->stats);
    printf("\n      -> %s\n",
           cmpx_agrees(&iso->stats) ? "within tolerance: the node amplifies differences its "
                                      "inputs carried"
                                    : "over tolerance: the node itself introduces the difference");
}

void cmpx_print_divergence_text(const cmpx_sites *m, const cmpx_divergence *d, const cmpx_isolation *iso,
                                const char *provider, const char *baseline_provider) {
    if (!d->found) {
        printf("  first divergent node: none (%zu nodes compared, all within tolerance)\n", d->compared);
        print_earliest_text(m, d);
        return;
    }
    char label[512], where[1100];
    cmpx_site_label(m, d->node, label, sizeof label);
    where_text(m, d->node, d->chain, where, sizeof where);
    const cmpx_node *n = m->items[d->node].node;
    printf("  first divergent node: %s (%s%s%s) run by %s, baseline %s%s\n", label, *n->domain ? n->domain : "",
           *n->domain ? "." : "", n->op_type, provider, baseline_provider, where);
    printf("    output %s: ", d->output);
    cmpx_print_stats_text(&d->stats);
    printf("\n    inputs: %s (max_abs %.3g)\n",
           d->inputs_differed          ? "already over tolerance: the difference was inherited"
               : d->inputs_unobserved  ? "some not observable; the difference may be inherited"
               : d->inputs_max_abs > 0 ? "within tolerance, but not identical"
                                       : "identical: this node introduced the difference",
           d->inputs_max_abs);
    print_isolation_text(iso);
    printf("  nodes compared %zu, over tolerance %zu, introducing a difference %zu", d->compared, d->divergent,
           d->introducing);
    for (size_t i = 0; i < d->listed_count; i++) {
        cmpx_site_label(m, d->listed[i], label, sizeof label);
        printf("%s%s", i ? ", " : ": ", label);
    }
    printf("%s\n", d->introducing > d->listed_count ? ", ..." : "");
    print_earliest_text(m, d);
}

void cmpx_print_stats_json(const char *name, const cmpx_stats *s) {
    printf("{\"name\": ");
    cmpx_json_string(stdout, name);
    printf(", \"max_abs\": ");
    cmpx_json_number(stdout, s->max_abs);
    printf(", \"max_rel\": ");
    cmpx_json_number(stdout, s->max_rel);
    printf(", \"mismatches\": %zu, \"nonfinite_mismatches\": %zu, \"count\": %zu, ", s->mismatches,
           s->nonfinite_mismatches, s->count);
    if (s->has_worst) printf("\"worst_index\": %zu, ", s->worst_index);
    else printf("\"worst_index\": null, ");
    printf("\"baseline_value\": ");
    if (s->has_worst && s->numeric) cmpx_json_number(stdout, s->baseline_number);
    else if (s->has_worst) cmpx_json_string(stdout, s->baseline_value);
    else printf("null");
    printf(", \"value\": ");
    if (s->has_worst && s->numeric) cmpx_json_number(stdout, s->number);
    else if (s->has_worst) cmpx_json_string(stdout, s->value);
    else printf("null");
    printf(", \"agree\": %s", cmpx_agrees(s) ? "true" : "false");
    if (s->why[0]) {
        printf(", \"why\": ");
        cmpx_json_string(stdout, s->why);
    }
    printf("}");
}

static void print_isolation_json(const cmpx_isolation *iso) {
    if (!iso->tried) {
        printf("null");
        return;
    }
    printf("{\"ran\": %s", iso->ran ? "true" : "false");
    if (iso->ran) {
        printf(", \"max_abs\": ");
        cmpx_json_number(stdout, iso->stats.max_abs);
        printf(", \"max_rel\": ");
        cmpx_json_number(stdout, iso->stats.max_rel);
        printf(", \"mismatches\": %zu, \"agree\": %s", iso->stats.mismatches,
               cmpx_agrees(&iso->stats) ? "true" : "false");
    } else {
        printf(", \"error\": ");
        cmpx_json_string(stdout, iso->error);
    }
    printf("}");
}

/* A body node's run, one index per enclosing body (outermost first), or
 * null in the main graph. */
static void print_chain_json(const cmpx_sites *m, size_t site, const size_t *chain) {
    size_t depth = m->items[site].depth;
    if (!depth) {
        printf("null");
        return;
    }
    printf("[");
    for (size_t i = 0; i < depth; i++) printf("%s%zu", i ? ", " : "", chain[i]);
    printf("]");
}

void cmpx_print_divergence_json(const cmpx_sites *m, const cmpx_divergence *d, const cmpx_isolation *iso,
                                const char *provider, const char *baseline_provider) {
    if (!d->found) {
        printf("null");
        return;
    }
    char label[512], where[1024];
    cmpx_site_label(m, d->node, label, sizeof label);
    cmpx_chain_text(m, d->node, d->chain, m->items[d->node].depth, where, sizeof where);
    printf("{\"name\": ");
    cmpx_json_string(stdout, label);
    printf(", \"op\": ");
    cmpx_json_string(stdout, m->items[d->node].node->op_type);
    printf(", \"iteration\": ");
    print_chain_json(m, d->node, d->chain);
    printf(", \"where\": ");
    cmpx_json_string(stdout, where);
    printf(", \"provider\": ");
    cmpx_json_string(stdout, provider);
    printf(", \"baseline_provider\": ");
    cmpx_json_string(stdout, baseline_provider);
    printf(", \"output\": ");
    cmpx_json_string(stdout, d->output);
    printf(", \"max_abs\": ");
    cmpx_json_number(stdout, d->stats.max_abs);
    printf(", \"max_rel\": ");
    cmpx_json_number(stdout, d->stats.max_rel);
    printf(", \"mismatches\": %zu, \"inputs_differed\": %s, \"inputs_unobserved\": %s, "
           "\"inputs_max_abs\": ",
           d->stats.mismatches, d->inputs_differed ? "true" : "false", d->inputs_unobserved ? "true" : "false");
    cmpx_json_number(stdout, d->inputs_max_abs);
    printf(", \"nodes_compared\": %zu, \"nodes_over_tolerance\": %zu, \"nodes_introducing\": %zu", d->compared,
           d->divergent, d->introducing);
    printf(", \"isolated\": ");
    print_isolation_json(iso);
    printf("}");
}

void cmpx_print_start_json(const cmpx_sites *m, const cmpx_divergence *d) {
    if (!d->has_earliest) {
        printf("null");
        return;
    }
    char label[512];
    cmpx_site_label(m, d->earliest, label, sizeof label);
    printf("{\"name\": ");
    cmpx_json_string(stdout, label);
    printf(", \"op\": ");
    cmpx_json_string(stdout, m->items[d->earliest].node->op_type);
    printf(", \"iteration\": ");
    print_chain_json(m, d->earliest, d->earliest_chain);
    printf(", \"max_abs\": ");
    cmpx_json_number(stdout, d->earliest_max_abs);
    printf("}");
}
