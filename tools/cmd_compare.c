/*
 * tessera compare MODEL -p LIST_A -p LIST_B ... — run the same inputs on
 * several provider sets and say how far each result is from the first
 * set's (the baseline), output by output; with --per-node, also which node
 * of the model introduced the difference (see docs/compare.md).
 */
#include <stdlib.h>
#include <string.h>

#include "compare_tool.h"

#define DEFAULT_RTOL 1e-3
#define DEFAULT_ATOL 1e-4

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera compare MODEL -p LIST_A -p LIST_B [-p LIST_C ...] [options]\n"
            "\n"
            "Runs MODEL on the same inputs with each provider set (-p, comma-separated, in\n"
            "priority order; the first set is the baseline) and reports, per output and\n"
            "run: max absolute and relative error, elements over tolerance, the worst\n"
            "element with both values, NaN/Inf mismatches. Exit status 1 when any output\n"
            "is over tolerance (|a-b| > atol + rtol*|baseline|).\n"
            "\n"
            "  -p, --providers LIST   a provider set (repeat: at least two)\n"
            "  -i, --input NAME=FILE.pb\n"
            "                         feed input NAME from a TensorProto (repeatable);\n"
            "                         others are made up as `tessera run` does\n"
            "  --rtol R               relative tolerance (default %g)\n"
            "  --atol A               absolute tolerance (default %g)\n"
            "  --per-node             compare every node output and name the first node\n"
            "                         that introduces a difference (slower: each node\n"
            "                         output becomes a piece boundary)\n"
            "  --oracle               add the float64 oracle (reference with\n"
            "                         precision=double) as the baseline: every -p set is\n"
            "                         compared with it, with mean error and ULP distance\n"
            "                         (then one -p is enough)\n"
            "  --json                 print one JSON object instead of text\n"
            "  --provider-option PROVIDER:KEY=VALUE\n"
            "                         an option for one provider, passed to every set\n"
            "                         that has that provider (repeatable)\n"
            "  -t, --threads N        threads per operator (0: the provider chooses)\n"
            "  --log-level LEVEL      error, warning, info or debug\n"
            "  --dim NAME=VALUE       fix a symbolic dimension (repeatable)\n",
            DEFAULT_RTOL, DEFAULT_ATOL);
}

typedef struct provider_set {
    char *list;     /* as given, for the report */
    char **entries; /* split at commas */
    size_t entry_count;
    char **plugin_names;   /* for path entries: the name the plugin reports */
    tsr_value **outputs;   /* graph outputs, from a session as it normally runs */
    tsr_session *observed; /* --per-node: a session with every value observable */
    tsr_value **values;    /* --per-node: per observed name, from `observed` */
    bool oracle;           /* --oracle: reference with precision=double */
} provider_set;

typedef struct compare_args {
    const char *model;
    provider_set *sets;
    size_t set_count;
    cmpx_input_spec *inputs;
    size_t input_count;
    cmp_tolerance tol;
    bool json, per_node, oracle;
    cli_common common; /* everything but -p */
} compare_args;

static bool add_set(compare_args *a, const char *list) {
    provider_set *grown = realloc(a->sets, (a->set_count + 1) * sizeof *grown);
    if (!grown) return false;
    a->sets = grown;
    provider_set *ps = &a->sets[a->set_count++];
    memset(ps, 0, sizeof *ps);
    if (!(ps->list = strdup(list))) return false;
    return cli_split_providers("compare", list, &ps->entries, &ps->entry_count);
}

static int parse_args(int argc, char **argv, compare_args *a) {
    cli_common_init(&a->common);
    a->tol.rtol = DEFAULT_RTOL;
    a->tol.atol = DEFAULT_ATOL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        bool bad = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            return -1;
        }
        /* -p is ours: each one is a set, not more entries of one list. */
        if ((v = cli_option_value(argc, argv, &i, "-p", "--providers", &bad)) ||
            (v = cli_option_value(argc, argv, &i, NULL, "--provider", &bad))) {
            if (!add_set(a, v)) return CLI_EXIT_USAGE;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        int r = cli_parse_common(&a->common, argc, argv, &i, true);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, "-i", "--input", &bad))) {
            cmpx_input_spec *grown = realloc(a->inputs, (a->input_count + 1) * sizeof *grown);
            if (!grown) return CLI_EXIT_FAIL;
            a->inputs = grown;
            const char *eq = strchr(v, '=');
            if (eq && (eq == v || !eq[1])) return cli_usage_error("compare", "-i wants NAME=FILE.pb, not '%s'", v);
            cmpx_input_spec *in = &a->inputs[a->input_count++];
            in->name = eq ? strndup(v, (size_t)(eq - v)) : NULL;
            in->file = eq ? eq + 1 : v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        double *tol_slot = NULL;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--rtol", &bad))) tol_slot = &a->tol.rtol;
        else if (!bad && (v = cli_option_value(argc, argv, &i, NULL, "--atol", &bad))) tol_slot = &a->tol.atol;
        if (bad) return CLI_EXIT_USAGE;
        if (tol_slot) {
            if (!cli_parse_double(v, tol_slot) || *tol_slot < 0)
                return cli_usage_error("compare", "%s wants a number >= 0, not '%s'", arg, v);
            continue;
        }
        if (strcmp(arg, "--json") == 0) {
            a->json = true;
            continue;
        }
        if (strcmp(arg, "--per-node") == 0) {
            a->per_node = true;
            continue;
        }
        if (strcmp(arg, "--oracle") == 0) {
            a->oracle = true;
            continue;
        }
        if (arg[0] == '-' && arg[1]) return cli_usage_error("compare", "unknown option '%s'", arg);
        if (a->model) return cli_usage_error("compare", "more than one model ('%s', '%s')", a->model, arg);
        a->model = arg;
    }
    if (!a->model) return cli_usage_error("compare", "no MODEL given");
    if (a->oracle) {
        /* The oracle goes first: it is the baseline. */
        if (a->set_count < 1) return cli_usage_error("compare", "give a provider set (-p A)");
        if (!add_set(a, "reference")) return CLI_EXIT_FAIL;
        provider_set oracle = a->sets[a->set_count - 1];
        memmove(a->sets + 1, a->sets, (a->set_count - 1) * sizeof *a->sets);
        oracle.oracle = true;
        a->sets[0] = oracle;
    }
    if (a->set_count < 2) return cli_usage_error("compare", "give at least two provider sets (-p A -p B)");
    return 0;
}

static void free_values(tsr_value **values, size_t count) {
    for (size_t i = 0; values && i < count; i++) tsr_value_free(values[i]);
    free(values);
}

static void free_set(provider_set *ps, size_t output_count, size_t value_count) {
    for (size_t i = 0; i < ps->entry_count; i++) {
        free(ps->entries[i]);
        if (ps->plugin_names) free(ps->plugin_names[i]);
    }
    free_values(ps->outputs, output_count);
    free_values(ps->values, value_count);
    free(ps->entries);
    free(ps->plugin_names);
    free(ps->list);
    tsr_session_free(ps->observed);
}

static void free_args(compare_args *a, size_t output_count, size_t value_count) {
    for (size_t i = 0; i < a->set_count; i++) free_set(&a->sets[i], output_count, value_count);
    free(a->sets);
    for (size_t i = 0; i < a->input_count; i++) free(a->inputs[i].name);
    free(a->inputs);
    cli_common_free(&a->common);
}

/* A path entry ("./x.so") is known to --provider-option by the name its
 * plugin reports, which only loading it tells. */
static void learn_plugin_names(provider_set *ps) {
    ps->plugin_names = calloc(ps->entry_count + 1, sizeof *ps->plugin_names);
    if (!ps->plugin_names) return;
    for (size_t i = 0; i < ps->entry_count; i++) {
        if (!strchr(ps->entries[i], '/')) continue;
        const char *path = ps->entries[i];
        tsr_provider_list *list = NULL;
        tsr_status *st = tsr_providers_discover(&path, 1, &list);
        if (st) {
            tsr_status_free(st);
            continue;
        }
        for (size_t k = 0; k < tsr_provider_list_size(list); k++) {
            tsr_provider_desc d = {.struct_size = sizeof d};
            if (!tsr_provider_list_get(list, k, &d) && d.path && d.name && strcmp(d.path, path) == 0 &&
                !ps->plugin_names[i])
                ps->plugin_names[i] = strdup(d.name);
        }
        tsr_provider_list_free(list);
    }
}

static bool set_has_provider(const provider_set *ps, const char *name) {
    for (size_t i = 0; i < ps->entry_count; i++)
        if (strcmp(ps->entries[i], name) == 0 ||
            (ps->plugin_names && ps->plugin_names[i] && strcmp(ps->plugin_names[i], name) == 0))
            return true;
    return false;
}

static tsr_status *set_options(const compare_args *a, provider_set *ps, bool observe, tsr_session_options **out) {
    /* The shared options minus provider options, which go only to the sets
     * holding their provider (a session refuses options for strangers). */
    cli_common c = a->common;
    c.provider_option_count = 0;
    tsr_session_options *o = NULL;
    tsr_status *st = cli_make_session_options(&c, &o);
    if (st) return st;
    if (!ps->plugin_names) learn_plugin_names(ps);
    for (size_t i = 0; !st && i < ps->entry_count; i++) st = tsr_session_options_add_provider(o, ps->entries[i]);
    for (size_t i = 0; !st && i < a->common.provider_option_count; i++) {
        const cli_provider_option *po = &a->common.provider_options[i];
        if (set_has_provider(ps, po->provider))
            st = tsr_session_options_set_provider_option(o, po->provider, po->key, po->value);
    }
    if (!st && ps->oracle) st = tsr_session_options_set_provider_option(o, "reference", "precision", "double");
    if (!st && observe) st = tsr_session_options_set_observe_all(o, 1);
    if (st) {
        tsr_session_options_free(o);
        return st;
    }
    *out = o;
    return NULL;
}

static bool open_set(const compare_args *a, provider_set *ps, bool observe, tsr_session **out) {
    tsr_session_options *o = NULL;
    tsr_status *st = set_options(a, ps, observe, &o);
    if (!st) st = tsr_session_create(o, a->model, out);
    tsr_session_options_free(o);
    if (st) {
        char what[1200];
        cli_format(what, sizeof what, "providers %s: loading %s", ps->list, a->model);
        cli_report_status(what, st);
        return false;
    }
    return true;
}

/* --- which values to fetch ------------------------------------------------ */
typedef struct name_list {
    const char **names;
    size_t count;
    size_t *depths; /* observed values: bodies around each (0: main graph); else NULL */
} name_list;

static bool list_has(const name_list *l, const char *name) {
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->names[i], name) == 0) return true;
    return false;
}

static bool list_add(name_list *l, const char *name) {
    const char **grown = realloc(l->names, (l->count + 1) * sizeof *grown);
    if (!grown) return false;
    l->names = grown;
    l->names[l->count++] = name;
    return true;
}

/* The graph outputs' names, copied: they outlive the session. */
static bool output_names(tsr_session *s, name_list *l) {
    size_t n = tsr_session_output_count(s);
    for (size_t j = 0; j < n; j++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_output_info(s, j, &info);
        if (st) {
            cli_report_status("output info", st);
            return false;
        }
        char *copy = strdup(info.name);
        if (!copy || !list_add(l, copy)) {
            free(copy);
            return false;
        }
    }
    return true;
}

/* Node `i` of the session; false (status dropped) when it cannot be read. */
static bool node_info(const tsr_session *s, size_t i, tsr_node_info *info) {
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    tsr_status *st = tsr_session_node_info(s, i, info);
    bool ok = st == NULL;
    tsr_status_free(st);
    return ok;
}

static bool session_makes(const tsr_session *s, const char *value) {
    size_t n = tsr_session_node_count(s);
    for (size_t i = 0; i < n; i++) {
        tsr_node_info info;
        if (!node_info(s, i, &info)) continue;
        for (size_t k = 0; k < info.output_count; k++)
            if (strcmp(info.outputs[k], value) == 0) return true;
    }
    return false;
}

/* Whether session `s` runs the body node named `path` (the core runs its
 * body, so the library can hand back its values) and it makes `value`. */
static bool body_makes(const tsr_session *s, const char *path, const char *value) {
    tsr_node_info info = {.struct_size = sizeof info};
    tsr_status *st = tsr_session_node_find(s, path, &info);
    if (st) {
        tsr_status_free(st);
        return false;
    }
    for (size_t k = 0; k < info.output_count; k++)
        if (strcmp(info.outputs[k], value) == 0) return true;
    return false;
}

/* Every model node output that each observing session can hand back: values
 * inside a function expanded in one set and run whole in another are not
 * comparable and are left out. Body nodes are found by path, so unnamed
 * ones are left out too; their values are named PATH/VALUE, as the library
 * takes them. Names are copied. */
static bool observed_names(const compare_args *a, const cmpx_sites *sites, name_list *l) {
    for (size_t i = 0; i < sites->count; i++) {
        const cmpx_site *site = &sites->items[i];
        const cmpx_node *n = site->node;
        if (site->depth && !*n->name) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s%s", site->prefix, n->name);
        for (size_t k = 0; k < n->output_count; k++) {
            const char *v = n->outputs[k];
            char *name = *v ? malloc(strlen(site->prefix) + strlen(v) + 1) : NULL;
            if (!name) {
                if (*v) return false;
                continue;
            }
            sprintf(name, "%s%s", site->prefix, v);
            bool everywhere = !list_has(l, name);
            for (size_t s = 0; everywhere && s < a->set_count; s++)
                everywhere =
                    site->depth ? body_makes(a->sets[s].observed, path, v) : session_makes(a->sets[s].observed, v);
            size_t *depths = everywhere ? realloc(l->depths, (l->count + 1) * sizeof *depths) : NULL;
            if (depths) l->depths = depths;
            if (!everywhere || !depths || !list_add(l, name)) {
                free(name);
                if (everywhere) return false;
                continue;
            }
            l->depths[l->count - 1] = site->depth;
        }
    }
    return true;
}

/* Runs `s` on the inputs, fetching the values named in `l` (all graph
 * outputs when `l` is NULL). */
static bool run_session(const provider_set *ps, tsr_session *s, const cmpx_inputs *in, const name_list *l, size_t count,
                        tsr_value ***out) {
    *out = calloc(count + 1, sizeof **out);
    if (!*out) return false;
    tsr_status *st = tsr_session_run(s, in->count, in->names, in->tensors, count, l ? l->names : NULL, *out);
    if (st) {
        char what[512];
        cli_format(what, sizeof what, "providers %s: run", ps->list);
        cli_report_status(what, st);
        return false;
    }
    return true;
}

/* The provider that runs the node making `value` in session `s`; for a
 * body node, the one running it, found by path. */
static const char *provider_of(const tsr_session *s, const cmpx_sites *sites, size_t site, const char *value) {
    if (sites->items[site].depth) {
        char path[2048];
        cmpx_site_label(sites, site, path, sizeof path);
        tsr_node_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_node_find(s, path, &info);
        tsr_status_free(st);
        return st ? "?" : info.provider;
    }
    size_t n = tsr_session_node_count(s);
    for (size_t i = 0; i < n; i++) {
        tsr_node_info info;
        if (!node_info(s, i, &info)) continue;
        for (size_t k = 0; k < info.output_count; k++)
            if (strcmp(info.outputs[k], value) == 0) return info.provider;
    }
    return "?";
}

/* --- running the divergent node alone -------------------------------------- */
/* The baseline's values as the divergent node saw them, in its run. */
typedef struct baseline_values {
    const cmpx_sites *sites;
    const cmpx_observed *obs; /* series hold the baseline's items */
    size_t site;
    const size_t *chain;
    const cmpx_inputs *inputs;
} baseline_values;

static const tsr_value *find_baseline(void *user, const char *name) {
    const baseline_values *b = user;
    const char *graph_name = NULL;
    const tsr_value *v = cmpx_baseline_input(b->sites, b->obs, b->site, b->chain, name, &graph_name);
    for (size_t i = 0; !v && graph_name && i < b->inputs->count; i++)
        if (strcmp(b->inputs->names[i], graph_name) == 0) v = b->inputs->values[i];
    return v;
}

/* When the divergent node's inputs already differed a little, runs it alone
 * with set `ps` on the baseline's exact inputs: over tolerance still means
 * the node (its provider) introduces the difference; within means it only
 * amplifies what its inputs carried. */
static void isolate(const compare_args *a, provider_set *ps, const cmpx_model *m, const cmpx_divergence *d,
                    const baseline_values *b, cmpx_isolation *out) {
    memset(out, 0, sizeof *out);
    if (!d->found || d->inputs_unobserved || d->inputs_max_abs == 0) return;
    out->tried = true;
    const cmpx_node *n = b->sites->items[d->node].node;
    tsr_value **got = calloc(n->output_count + 1, sizeof *got);
    tsr_session_options *o = NULL;
    tsr_status *st = got ? set_options(a, ps, false, &o) : NULL;
    if (!got) {
        snprintf(out->error, sizeof out->error, "out of memory");
    } else if (st) {
        cli_format(out->error, sizeof out->error, "%s", tsr_status_message(st));
        tsr_status_free(st);
    } else if (cmpx_isolate(a->model, m, n, o, find_baseline, (void *)b, got, out->error, sizeof out->error)) {
        out->ran = true;
        out->stats.comparable = true;
        for (size_t k = 0; k < n->output_count; k++) {
            const tsr_value *want = *n->outputs[k] ? find_baseline((void *)b, n->outputs[k]) : NULL;
            if (!got[k] || !want) continue;
            cmpx_stats s;
            cmpx_measure(want, got[k], a->tol, &s);
            cmpx_stats_merge(&out->stats, &s);
        }
    }
    for (size_t k = 0; got && k < n->output_count; k++) tsr_value_free(got[k]);
    free(got);
    tsr_session_options_free(o);
}

/* Figures for each of `count` values of set `r` against the baseline's. */
static cmpx_stats *measure_all(const compare_args *a, tsr_value *const *base, tsr_value *const *got, size_t count) {
    cmpx_stats *stats = calloc(count + 1, sizeof *stats);
    if (!stats) {
        fprintf(stderr, "tessera compare: out of memory\n");
        return NULL;
    }
    for (size_t i = 0; i < count; i++) cmpx_measure(base[i], got[i], a->tol, &stats[i]);
    return stats;
}

/* Figures for each observed value of set `r` against the baseline's, run by
 * run of its body. */
static cmpx_series *measure_series(const compare_args *a, const provider_set *base, const provider_set *ps,
                                   const name_list *l) {
    cmpx_series *series = calloc(l->count + 1, sizeof *series);
    bool ok = series != NULL;
    for (size_t i = 0; ok && i < l->count; i++)
        ok = cmpx_series_measure(base->values[i], ps->values[i], l->depths[i], a->tol, &series[i]);
    if (!ok) {
        fprintf(stderr, "tessera compare: out of memory\n");
        for (size_t i = 0; series && i < l->count; i++) cmpx_series_free(&series[i]);
        free(series);
        return NULL;
    }
    return series;
}

/* Compares set `r` with the baseline and prints its part. *agree says
 * whether its graph outputs agree; false on failure. */
static bool report_run(const compare_args *a, size_t r, const name_list *outs, const name_list *obs_names,
                       const cmpx_model *m, const cmpx_sites *sites, const cmpx_inputs *in, bool *agree) {
    provider_set *base = &a->sets[0], *ps = &a->sets[r];
    cmpx_stats *stats = measure_all(a, base->outputs, ps->outputs, outs->count);
    cmpx_series *series = a->per_node ? measure_series(a, base, ps, obs_names) : NULL;
    if (!stats || (a->per_node && !series)) {
        free(stats);
        free(series);
        return false;
    }
    *agree = true;
    for (size_t i = 0; i < outs->count; i++) *agree = *agree && cmpx_agrees(&stats[i]);
    cmpx_divergence d = {0};
    cmpx_isolation iso = {0};
    if (a->per_node) {
        cmpx_observed obs = {obs_names->count, obs_names->names, series};
        cmpx_find_divergence(sites, &obs, &d);
        baseline_values b = {sites, &obs, d.node, d.chain, in};
        isolate(a, ps, m, &d, &b, &iso);
    }
    const char *provider = d.found ? provider_of(ps->observed, sites, d.node, d.output) : "";
    const char *baseline_provider = d.found ? provider_of(base->observed, sites, d.node, d.output) : "";
    if (a->json) {
        printf("%s{\"providers\": ", r > 1 ? ", " : "");
        cmpx_json_string(stdout, ps->list);
        printf(", \"agree\": %s, \"outputs\": [", *agree ? "true" : "false");
        for (size_t i = 0; i < outs->count; i++) {
            if (i) printf(", ");
            cmpx_print_stats_json(outs->names[i], &stats[i]);
        }
        printf("]");
        if (a->oracle) {
            /* the same outputs' figures against the oracle, in order */
            printf(", \"accuracy\": [");
            for (size_t i = 0; i < outs->count; i++) {
                cmpx_accuracy acc;
                cmpx_accuracy_measure(base->outputs[i], ps->outputs[i], &acc);
                printf("%s{\"name\": ", i ? ", " : "");
                cmpx_json_string(stdout, outs->names[i]);
                printf(", \"vs_oracle\": ");
                cmpx_print_accuracy_json(&acc);
                printf("}");
            }
            printf("]");
        }
        printf(", \"first_divergent_node\": ");
        if (a->per_node) cmpx_print_divergence_json(sites, &d, &iso, provider, baseline_provider);
        else printf("null");
        printf(", \"differences_start\": ");
        cmpx_print_start_json(sites, &d);
        printf("}");
    } else {
        printf("run: %s\n", ps->list);
        for (size_t i = 0; i < outs->count; i++) {
            printf("  output %s: ", outs->names[i]);
            cmpx_print_stats_text(&stats[i]);
            printf("  %s\n", cmpx_agrees(&stats[i]) ? "ok" : "DIFFERS");
            if (a->oracle) {
                cmpx_accuracy acc;
                cmpx_accuracy_measure(base->outputs[i], ps->outputs[i], &acc);
                printf("    ");
                cmpx_print_accuracy_text(&acc);
                printf("\n");
            }
        }
        if (a->per_node) {
            cmpx_print_divergence_text(sites, &d, &iso, provider, baseline_provider);
            /* Observing every value splits fused pieces; a difference that
             * only the fused kernel makes shows here and nowhere else. */
            if (!*agree && !d.found)
                printf("  note: the outputs differ but no node does when every value is "
                       "observed: a fused piece is the likely cause (see docs/compare.md)\n");
        }
        printf("  result: %s\n", *agree ? "agree" : "differ");
    }
    free(stats);
    for (size_t i = 0; series && i < obs_names->count; i++) cmpx_series_free(&series[i]);
    free(series);
    return true;
}

int cmd_compare(int argc, char **argv) {
    compare_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free_args(&a, 0, 0);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    cmpx_model model = {0};
    cmpx_sites sites = {0};
    cmpx_inputs in = {0};
    name_list outs = {0}, obs = {0};
    tsr_session *plain = NULL;
    rc = CLI_EXIT_FAIL;
    char err[1200];
    if (a.per_node && !cmpx_model_load(a.model, &model, err, sizeof err)) {
        fprintf(stderr, "tessera compare: %s\n", err);
        goto done;
    }
    if (a.per_node && !cmpx_sites_build(&model, &sites)) {
        fprintf(stderr, "tessera compare: out of memory\n");
        goto done;
    }
    /* Graph outputs from each set as it normally runs (fused), one session
     * at a time so only one copy of the weights is alive. */
    for (size_t s = 0; s < a.set_count; s++) {
        provider_set *ps = &a.sets[s];
        if (!open_set(&a, ps, false, &plain)) goto done;
        if (s == 0 &&
            (!cmpx_inputs_make(plain, a.model, a.inputs, a.input_count, &a.common, &in) || !output_names(plain, &outs)))
            goto done;
        if (!run_session(ps, plain, &in, &outs, outs.count, &ps->outputs)) goto done;
        tsr_session_free(plain);
        plain = NULL;
    }
    /* Then every node output, from sessions that keep them all observable. */
    if (a.per_node) {
        for (size_t s = 0; s < a.set_count; s++)
            if (!open_set(&a, &a.sets[s], true, &a.sets[s].observed)) goto done;
        if (!observed_names(&a, &sites, &obs)) goto done;
        for (size_t s = 0; s < a.set_count; s++)
            if (!run_session(&a.sets[s], a.sets[s].observed, &in, &obs, obs.count, &a.sets[s].values)) goto done;
    }

    bool all_agree = true;
    if (a.json) {
        printf("{\"baseline\": ");
        cmpx_json_string(stdout, a.oracle ? "oracle" : a.sets[0].list);
        printf(", \"oracle\": %s", a.oracle ? "true" : "false");
        printf(", \"rtol\": %g, \"atol\": %g, \"runs\": [", a.tol.rtol, a.tol.atol);
    } else {
        printf("baseline: %s (rtol %g, atol %g)\n", a.oracle ? "oracle (reference, precision=double)" : a.sets[0].list,
               a.tol.rtol, a.tol.atol);
    }
    for (size_t r = 1; r < a.set_count; r++) {
        bool agree;
        if (!report_run(&a, r, &outs, &obs, &model, &sites, &in, &agree)) goto done;
        all_agree = all_agree && agree;
    }
    if (a.json) printf("]}\n");
    rc = all_agree ? CLI_EXIT_OK : CLI_EXIT_FAIL;

done:
    fflush(stdout);
    tsr_session_free(plain);
    cmpx_inputs_free(&in);
    free_args(&a, outs.count, obs.count);
    for (size_t i = 0; i < outs.count; i++) free((void *)outs.names[i]);
    free(outs.names);
    for (size_t i = 0; i < obs.count; i++) free((void *)obs.names[i]);
    free(obs.names);
    free(obs.depths);
    cmpx_sites_free(&sites);
    cmpx_model_free(&model);
    return rc;
}
