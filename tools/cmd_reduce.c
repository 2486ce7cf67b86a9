/*
 * tessera reduce MODEL -p BASELINE -p SUSPECT [-o DIR] — shrink a model whose
 * outputs differ beyond tolerance between two provider sets (or, with
 * --fail-on error, that fails or crashes on the second) to a small subgraph
 * that still shows it, saved as a test case `tessera test` runs
 * (docs/compare.md, "tessera reduce").
 *
 * The baseline first runs the whole model once with every value observable;
 * its values feed every cut. The search then tries cuts (reduce_model.c),
 * each run on both sets in forked children (reduce_jobs.c):
 *   1. the whole model must show it;
 *   2. the shortest prefix of the nodes, in file (topological) order, that
 *      still shows it (bisection);
 *   3. the shortest suffix of that prefix that still does, its inputs fed
 *      from the baseline's values (bisection);
 *   4. then nodes are dropped from what is left, halves first, then single
 *      nodes, as long as what remains still shows it (delta debugging).
 * A cut the baseline cannot run, or that needs a value the baseline did not
 * hand back, counts as not showing it.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reduce_tool.h"

#define DEFAULT_RTOL 1e-3
#define DEFAULT_ATOL 1e-4
#define DEFAULT_TIMEOUT 300.0
#define DEFAULT_MAX_TRIES 2000

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera reduce MODEL -p BASELINE -p SUSPECT [options]\n"
            "       tessera reduce MODEL --oracle -p SUSPECT [options]\n"
            "\n"
            "Finds a small subgraph of MODEL that still shows what goes wrong with the\n"
            "provider set SUSPECT: outputs that differ from BASELINE's beyond tolerance\n"
            "(default) or, with --fail-on error, an error or a crash. Each candidate runs\n"
            "in a child process on inputs captured from BASELINE's run of the whole model.\n"
            "The result is written as a test case (DIR/model.onnx and\n"
            "DIR/test_data_set_0/input_K.pb, output_K.pb from BASELINE) that\n"
            "`tessera test -p SUSPECT DIR` fails and `tessera test -p BASELINE DIR` passes.\n"
            "Exit status 0 when a case was written, 1 when the whole model does not show\n"
            "the problem (or the baseline fails), 2 on a usage error.\n"
            "\n"
            "  -p, --providers LIST   a provider set (exactly two: baseline, suspect)\n"
            "  --oracle               the baseline is the float64 oracle (reference with\n"
            "                         precision=double); then give only -p SUSPECT\n"
            "  -o, --output-dir DIR   where to write the case (default: reduced)\n"
            "  --fail-on WHAT         difference (default) or error\n"
            "  --error-contains TEXT  with --fail-on error: only an error (or crash\n"
            "                         report) whose message holds TEXT counts\n"
            "  --rtol R               relative tolerance (default %g)\n"
            "  --atol A               absolute tolerance (default %g)\n"
            "  --timeout SECONDS      per candidate run; a run past it counts as a\n"
            "                         failure (default %g; 0: none)\n"
            "  --max-tries N          stop dropping nodes after N candidates and write\n"
            "                         the smallest found so far (default %d)\n"
            "  -v, --verbose          print every candidate tried\n"
            "  --json                 print one JSON object (the case's nodes, inputs,\n"
            "                         outputs, candidates tried, time) instead of text\n"
            "  --provider-option PROVIDER:KEY=VALUE\n"
            "                         an option for one provider, passed to the sets\n"
            "                         that have it (repeatable)\n"
            "  -t, --threads N        threads per operator (0: the provider chooses)\n"
            "  --log-level LEVEL      error, warning, info or debug\n"
            "  --dim NAME=VALUE       fix a symbolic dimension (repeatable)\n",
            DEFAULT_RTOL, DEFAULT_ATOL, DEFAULT_TIMEOUT, DEFAULT_MAX_TRIES);
    cli_print_inputs_help(f);
}

/* --- arguments ------------------------------------------------------------- */
typedef struct reduce_args {
    rdc_config cfg;
    size_t set_count;
    bool oracle;
    const char *out_dir;
    const char *model; /* as given: a file or a test-case folder */
    int64_t max_tries;
    bool json; /* --json: stdout gets one JSON object, not the text report */
} reduce_args;

static bool split_set(rdc_set *s, const char *list) {
    memset(s, 0, sizeof *s);
    if (!(s->list = strdup(list))) return false;
    return cli_split_providers("reduce", list, &s->entries, &s->entry_count);
}

static void free_args(reduce_args *a) {
    for (size_t s = 0; s < 2; s++) {
        rdc_set *set = &a->cfg.sets[s];
        for (size_t i = 0; i < set->entry_count; i++) free(set->entries[i]);
        free(set->entries);
        free(set->list);
    }
    cli_inputs_free(&a->cfg.inputs);
    cli_common_free(&a->cfg.common);
}

static int parse_args(int argc, char **argv, reduce_args *a) {
    rdc_config *cfg = &a->cfg;
    cli_common_init(&cfg->common);
    cfg->tol.rtol = DEFAULT_RTOL;
    cfg->tol.atol = DEFAULT_ATOL;
    cfg->timeout = DEFAULT_TIMEOUT;
    cfg->mode = RDC_DIFFERENCE;
    a->out_dir = "reduced";
    a->max_tries = DEFAULT_MAX_TRIES;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        bool bad = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            return -1;
        }
        if ((v = cli_option_value(argc, argv, &i, "-p", "--providers", &bad)) ||
            (v = cli_option_value(argc, argv, &i, NULL, "--provider", &bad))) {
            if (a->set_count == 2) return cli_usage_error("reduce", "give exactly two provider sets (-p A -p B)");
            if (!split_set(&cfg->sets[a->set_count++], v)) return CLI_EXIT_USAGE;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        int r = cli_parse_common(&cfg->common, argc, argv, &i, true);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((r = cli_inputs_parse(&cfg->inputs, "reduce", argc, argv, &i)) < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, "-o", "--output-dir", &bad))) {
            if (!*v) return cli_usage_error("reduce", "-o wants a folder");
            a->out_dir = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--fail-on", &bad))) {
            if (strcmp(v, "difference") == 0) cfg->mode = RDC_DIFFERENCE;
            else if (strcmp(v, "error") == 0) cfg->mode = RDC_ERROR;
            else return cli_usage_error("reduce", "--fail-on wants difference or error, not '%s'", v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--error-contains", &bad))) {
            if (!*v) return cli_usage_error("reduce", "--error-contains wants some text");
            cfg->error_text = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--max-tries", &bad))) {
            if (!cli_parse_int64(v, &a->max_tries) || a->max_tries < 1)
                return cli_usage_error("reduce", "--max-tries wants a count >= 1, not '%s'", v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        double *num = NULL;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--rtol", &bad))) num = &cfg->tol.rtol;
        else if (!bad && (v = cli_option_value(argc, argv, &i, NULL, "--atol", &bad))) num = &cfg->tol.atol;
        else if (!bad && (v = cli_option_value(argc, argv, &i, NULL, "--timeout", &bad))) num = &cfg->timeout;
        if (bad) return CLI_EXIT_USAGE;
        if (num) {
            if (!cli_parse_double(v, num) || *num < 0)
                return cli_usage_error("reduce", "%s wants a number >= 0, not '%s'", arg, v);
            continue;
        }
        if (strcmp(arg, "--oracle") == 0) {
            a->oracle = true;
            continue;
        }
        if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            cfg->verbose = true;
            continue;
        }
        if (strcmp(arg, "--json") == 0) {
            a->json = true;
            continue;
        }
        if (arg[0] == '-' && arg[1]) return cli_usage_error("reduce", "unknown option '%s'", arg);
        if (a->model) return cli_usage_error("reduce", "more than one model ('%s', '%s')", a->model, arg);
        a->model = arg;
    }
    int rc = cli_inputs_resolve_model(&cfg->inputs, "reduce", a->model);
    if (rc) return rc;
    cfg->model = cfg->inputs.model;
    if (a->oracle) {
        if (a->set_count != 1) return cli_usage_error("reduce", "with --oracle give one provider set (-p SUSPECT)");
        cfg->sets[1] = cfg->sets[0];
        if (!split_set(&cfg->sets[0], "reference")) return CLI_EXIT_FAIL;
        cfg->sets[0].oracle = true;
        a->set_count = 2;
    }
    if (a->set_count != 2) return cli_usage_error("reduce", "give exactly two provider sets (-p BASELINE -p SUSPECT)");
    if (cfg->error_text && cfg->mode != RDC_ERROR)
        return cli_usage_error("reduce", "--error-contains goes with --fail-on error");
    if (cfg->common.provider_count) return cli_usage_error("reduce", "provider sets are given with -p only");
    /* A cut holds some of the nodes; a rule naming a node it lacks would
     * make its sessions fail. */
    if (cfg->common.assign_count) return cli_usage_error("reduce", "--assign is not supported (cuts lack most nodes)");
    return 0;
}

/* --- the search ------------------------------------------------------------ */
typedef struct search {
    const rdc_config *cfg;
    const rdc_graph *g;
    bool *keep;
    size_t tries;
    size_t max_tries;
    bool gave_up;    /* step 4 stopped at max_tries */
    rdc_result last; /* of the last cut that showed it */
} search;

/* Whether the cut of the nodes where keep[i] shows the problem. */
static bool shows(search *sr, const bool *keep, const char *what, rdc_result *out) {
    rdc_cut cut;
    rdc_result r = {0};
    char err[1024];
    sr->tries++;
    if (!rdc_cut_build(sr->g, keep, 0, &cut, err, sizeof err)) {
        r.verdict = RDC_INFEASIBLE;
        cli_format(r.detail, sizeof r.detail, "cannot cut: %s", err);
    } else {
        rdc_try(sr->cfg, sr->g, &cut, NULL, &r);
    }
    if (sr->cfg->verbose)
        fprintf(stderr, "try %zu: %s (%zu nodes): %s: %s\n", sr->tries, what, cut.node_count,
                r.verdict == RDC_REPRODUCES  ? "shows it"
                    : r.verdict == RDC_CLEAN ? "clean"
                                             : "cannot run",
                r.detail);
    rdc_cut_free(&cut);
    if (r.verdict == RDC_REPRODUCES) sr->last = r;
    if (out) *out = r;
    return r.verdict == RDC_REPRODUCES;
}

static void keep_range(search *sr, size_t lo, size_t hi) {
    for (size_t i = 0; i < sr->g->m.node_count; i++) sr->keep[i] = i >= lo && i <= hi;
}

/* Steps 2 and 3; [*lo, *hi] shows it on return. */
static void bisect(search *sr, size_t *lo, size_t *hi) {
    char what[96];
    size_t a = 0, b = sr->g->m.node_count - 1; /* [0, b] shows it */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        keep_range(sr, 0, mid);
        snprintf(what, sizeof what, "nodes 0..%zu", mid);
        if (shows(sr, sr->keep, what, NULL)) b = mid;
        else a = mid + 1;
    }
    *hi = b;
    a = 0; /* [a, hi] shows it */
    b = *hi;
    while (a < b) {
        size_t mid = a + (b - a + 1) / 2;
        keep_range(sr, mid, *hi);
        snprintf(what, sizeof what, "nodes %zu..%zu", mid, *hi);
        if (shows(sr, sr->keep, what, NULL)) a = mid;
        else b = mid - 1;
    }
    *lo = a;
    keep_range(sr, *lo, *hi);
}

/* Step 4: drops chunks of `members` (node indices, count *n) while the
 * rest still shows it; halves first, down to single nodes. */
static void shrink(search *sr, size_t *members, size_t *n) {
    size_t chunk = (*n + 1) / 2;
    while (*n > 1 && chunk >= 1) {
        bool dropped = false;
        for (size_t start = 0; start<*n && * n> 1;) {
            if (sr->tries >= sr->max_tries) {
                sr->gave_up = true;
                break;
            }
            size_t len = chunk < *n - start ? chunk : *n - start;
            if (len >= *n) break;
            for (size_t i = 0; i < sr->g->m.node_count; i++) sr->keep[i] = false;
            for (size_t j = 0; j < *n; j++) sr->keep[members[j]] = j < start || j >= start + len;
            char what[96];
            snprintf(what, sizeof what, "without %zu node%s from #%zu", len, len == 1 ? "" : "s", members[start]);
            if (shows(sr, sr->keep, what, NULL)) {
                memmove(members + start, members + start + len, (*n - start - len) * sizeof *members);
                *n -= len;
                dropped = true;
            } else {
                start += len;
            }
        }
        if (sr->gave_up) break;
        if (chunk == 1) {
            if (!dropped) break;
        } else {
            chunk = (chunk + 1) / 2;
        }
    }
    for (size_t i = 0; i < sr->g->m.node_count; i++) sr->keep[i] = false;
    for (size_t j = 0; j < *n; j++) sr->keep[members[j]] = true;
}

/* --- the work folder and the case ------------------------------------------ */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Removes input_*.pb and output_*.pb a previous case left in `dir`. */
static void clear_data_set(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if ((strncmp(n, "input_", 6) == 0 || strncmp(n, "output_", 7) == 0) && len > 3 &&
            strcmp(n + len - 3, ".pb") == 0) {
            char *p = tc_join(dir, n);
            if (p) remove(p);
            free(p);
        }
    }
    closedir(d);
}

static bool copy_file(const char *from, const char *to) {
    void *bytes = NULL;
    size_t n = 0;
    if (!tio_read_file(from, &bytes, &n)) return false;
    bool ok = tio_write_file(to, bytes, n);
    free(bytes);
    return ok;
}

/* Writes the case folder `dir` for the cut: model and inputs here, the
 * baseline's outputs by a last run, whose verdict goes to *r. */
static bool write_cut(const search *sr, const char *dir, bool sinks_only, rdc_cut *cut, rdc_result *r) {
    char err[1024];
    memset(cut, 0, sizeof *cut);
    memset(r, 0, sizeof *r);
    char *data = tc_join(dir, "test_data_set_0");
    char *model = tc_join(dir, "model.onnx");
    bool ok = data && model && tio_make_dirs(data);
    if (!ok) {
        fprintf(stderr, "tessera reduce: cannot create %s: %s\n", data ? data : dir, strerror(errno));
        goto done;
    }
    clear_data_set(data);
    unsigned flags = RDC_CUT_INLINE_EXTERNAL | (sinks_only ? RDC_CUT_SINKS_ONLY : 0u);
    if (!rdc_cut_build(sr->g, sr->keep, flags, cut, err, sizeof err)) {
        fprintf(stderr, "tessera reduce: %s\n", err);
        ok = false;
        goto done;
    }
    ok = tio_write_file(model, cut->model, cut->model_size);
    for (size_t i = 0; ok && i < cut->input_count; i++) {
        char name[64];
        snprintf(name, sizeof name, "input_%zu.pb", i);
        char *to = tc_join(data, name);
        ok = to && copy_file(sr->g->capture.values[cut->inputs[i]].file, to);
        free(to);
    }
    if (!ok) {
        fprintf(stderr, "tessera reduce: cannot write the case in %s: %s\n", dir, strerror(errno));
        goto done;
    }
    rdc_try(sr->cfg, sr->g, cut, dir, r);
done:
    free(data);
    free(model);
    return ok;
}

/* The case: with only the outputs no kept node reads when that still shows
 * it (values the search kept as outputs for nodes now cut away are noise),
 * else with every output the search had. */
static bool write_case(const search *sr, const char *dir, rdc_cut *cut, rdc_result *r) {
    if (!write_cut(sr, dir, true, cut, r)) return false;
    if (r->verdict == RDC_REPRODUCES) return true;
    rdc_cut_free(cut);
    return write_cut(sr, dir, false, cut, r);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void
append(char *buf, size_t size, const char *fmt, ...) {
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    if (used < size) vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/* The `tessera test` line that passes (set 0) or fails (set 1) on the case. */
static void format_check(const rdc_config *cfg, size_t set, const char *dir, char *buf, size_t size) {
    buf[0] = 0;
    append(buf, size, "tessera test -p %s", cfg->sets[set].list);
    if (cfg->sets[set].oracle) append(buf, size, " --provider-option reference:precision=double");
    if (cfg->tol.rtol != 1e-3 || cfg->tol.atol != 1e-5)
        append(buf, size, " --rtol %g --atol %g", cfg->tol.rtol, cfg->tol.atol);
    for (size_t i = 0; i < cfg->common.provider_option_count; i++) {
        const cli_provider_option *po = &cfg->common.provider_options[i];
        bool named = false;
        for (size_t k = 0; k < cfg->sets[set].entry_count; k++)
            named =
                named || strcmp(cfg->sets[set].entries[k], po->provider) == 0 || strchr(cfg->sets[set].entries[k], '/');
        if (named) append(buf, size, " --provider-option %s:%s=%s", po->provider, po->key, po->value);
    }
    append(buf, size, " %s", dir);
}

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int cmd_reduce(int argc, char **argv) {
    reduce_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free_args(&a);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    rdc_config *cfg = &a.cfg;
    rdc_graph g;
    char err[2048];
    char *work = NULL, *data_dir = NULL;
    bool out_existed = true;
    search sr = {.cfg = cfg, .g = &g, .max_tries = (size_t)a.max_tries};
    /* --json: the text report is left out; errors still go to stderr */
    FILE *text = a.json ? NULL : stdout;
    rdc_summary sum = {.model = cfg->model, .result = "error", .case_dir = a.out_dir};
    rdc_cut cut = {0};
    rdc_result whole = {0}, final = {0};
    double start = now_seconds();
    err[0] = 0;
    rc = CLI_EXIT_FAIL;
    if (!rdc_graph_load(cfg->model, &g, err, sizeof err)) {
        fprintf(stderr, "tessera reduce: %s\n", err);
        sum.error = err;
        goto done;
    }
    if (g.m.node_count == 0) {
        fprintf(stderr, "tessera reduce: %s has no nodes\n", cfg->model);
        sum.error = "the model has no nodes";
        goto done;
    }
    /* The case folder must be writable: better to learn it before the search
     * (and to remove it again, if it is new and nothing was written). */
    struct stat sb;
    out_existed = stat(a.out_dir, &sb) == 0;
    data_dir = tc_join(a.out_dir, "test_data_set_0");
    if (!data_dir || !tio_make_dirs(data_dir)) {
        fprintf(stderr, "tessera reduce: cannot create %s: %s\n", data_dir ? data_dir : a.out_dir, strerror(errno));
        goto done;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    if (!(work = malloc(strlen(tmp) + 32))) goto done;
    snprintf(work, strlen(tmp) + 32, "%s/tessera-reduce-XXXXXX", tmp);
    if (!mkdtemp(work)) {
        fprintf(stderr, "tessera reduce: cannot create a work folder %s: %s\n", work, strerror(errno));
        goto done;
    }
    cfg->work_dir = work;
    if (text) {
        fprintf(text, "reduce: %s (%zu nodes): baseline %s, suspect %s, ", cfg->model, g.m.node_count,
                cfg->sets[0].oracle ? "the oracle (reference, precision=double)" : cfg->sets[0].list,
                cfg->sets[1].list);
        if (cfg->mode == RDC_ERROR) fprintf(text, "looking for an error or crash\n");
        else fprintf(text, "looking for a difference (rtol %g, atol %g)\n", cfg->tol.rtol, cfg->tol.atol);
        fflush(text);
    }

    rdc_capture cap;
    if (!rdc_capture_run(cfg, &g, err, sizeof err) || !rdc_capture_read(cfg->work_dir, &cap, err, sizeof err) ||
        !rdc_graph_set_capture(&g, &cap, err, sizeof err)) {
        fprintf(stderr, "tessera reduce: baseline %s: %s\n", cfg->sets[0].list, err);
        sum.error = err;
        goto done;
    }
    if (!(sr.keep = calloc(g.m.node_count, sizeof *sr.keep))) goto done;

    keep_range(&sr, 0, g.m.node_count - 1);
    bool shown = shows(&sr, sr.keep, "the whole model", &whole);
    sum.whole = whole.detail;
    if (!shown) {
        sum.result = "not_shown";
        if (!text) goto done;
        fprintf(text, "the whole model does not show it: %s\n", whole.detail);
        if (cfg->mode == RDC_DIFFERENCE && strstr(whole.detail, " fails"))
            fprintf(text, "(the suspect fails: try --fail-on error)\n");
        if (cfg->error_text && whole.verdict == RDC_CLEAN && !strstr(whole.detail, " runs"))
            fprintf(text, "(its error does not contain '%s')\n", cfg->error_text);
        goto done;
    }
    if (text) {
        fprintf(text, "whole model: %s\n", sr.last.detail);
        fflush(text);
    }
    size_t lo, hi;
    bisect(&sr, &lo, &hi);
    if (text) {
        fprintf(text, "bisection: nodes %zu..%zu of %zu show it (%zu tries)\n", lo, hi, g.m.node_count, sr.tries);
        fflush(text);
    }
    size_t n = hi - lo + 1;
    size_t *members = malloc(n * sizeof *members);
    if (!members) goto done;
    for (size_t j = 0; j < n; j++) members[j] = lo + j;
    shrink(&sr, members, &n);
    free(members);

    if (!write_case(&sr, a.out_dir, &cut, &final)) {
        rdc_cut_free(&cut);
        memset(&cut, 0, sizeof cut);
        goto done;
    }
    sum.result = "reduced";
    sum.cut = &cut;
    sum.case_shows = final.verdict == RDC_REPRODUCES;
    sum.final_detail = final.detail;
    format_check(cfg, 0, a.out_dir, sum.check[0], sizeof sum.check[0]);
    format_check(cfg, 1, a.out_dir, sum.check[1], sizeof sum.check[1]);
    if (final.verdict == RDC_REPRODUCES) rc = CLI_EXIT_OK;
    if (!text) goto done;
    fprintf(text, "reduced to %zu node%s (%zu tries%s):\n", cut.node_count, cut.node_count == 1 ? "" : "s", sr.tries,
            sr.gave_up ? "; stopped at --max-tries, it may shrink further" : "");
    for (size_t i = 0; i < g.m.node_count; i++) {
        if (!cut.kept[i]) continue;
        char label[256];
        cmpx_node_label(&g.m, i, label, sizeof label);
        fprintf(text, "  %s (%s%s%s)\n", label, g.m.nodes[i].domain, *g.m.nodes[i].domain ? "." : "",
                g.m.nodes[i].op_type);
    }
    fprintf(text, "inputs from the baseline's run: ");
    for (size_t i = 0; i < cut.input_count; i++)
        fprintf(text, "%s%s", i ? ", " : "", g.capture.values[cut.inputs[i]].name);
    fprintf(text, "%s\noutputs: ", cut.input_count ? "" : "none");
    for (size_t i = 0; i < cut.output_count; i++) fprintf(text, "%s%s", i ? ", " : "", cut.outputs[i]);
    fprintf(text, "\n%s\n", final.detail);
    fprintf(text, "wrote %s: model.onnx, test_data_set_0 (%zu input%s, %zu expected output%s from %s)\n", a.out_dir,
            cut.input_count, cut.input_count == 1 ? "" : "s", cut.output_count, cut.output_count == 1 ? "" : "s",
            cfg->sets[0].oracle ? "the oracle" : cfg->sets[0].list);
    if (final.verdict == RDC_REPRODUCES) {
        fprintf(text, "check:\n  %s   # passes\n  %s   # fails\n", sum.check[0], sum.check[1]);
    } else {
        fprintf(text, "warning: the last run of the case did not show it again (flaky?)\n");
    }

done:
    if (a.json) {
        sum.tries = sr.tries;
        sum.gave_up = sr.gave_up;
        sum.seconds = now_seconds() - start;
        rdc_print_json(cfg, &g, &sum);
    }
    rdc_cut_free(&cut);
    fflush(stdout);
    if (cfg->work_dir) remove_tree(cfg->work_dir);
    if (rc != CLI_EXIT_OK && !out_existed && data_dir) {
        rmdir(data_dir); /* only when empty */
        rmdir(a.out_dir);
    }
    free(data_dir);
    free(work);
    free(sr.keep);
    rdc_graph_free(&g);
    free_args(&a);
    return rc;
}
