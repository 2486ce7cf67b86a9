/*
 * tessera check-provider PLUGIN.so — the conformance kit for a provider
 * plugin, needing no source tree: loads the plugin through the public API
 * and runs its checks on it (load and devices, ABI negotiation, op
 * conformance on the ONNX backend node cases, error paths, concurrency,
 * host<->device copies, the compiled-piece cache, whole models), printing
 * a PASS/FAIL/SKIP line per check and a summary, or one JSON object. Exit status 1 when any check failed.
 *
 * This file parses the arguments and runs the checks in order; each check
 * lives in its own check_provider_*.c (check_provider.h says why they run in
 * forked children).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_provider.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera check-provider [options] PLUGIN.so\n"
            "\n"
            "Checks a provider plugin the way Tessera will use it, and prints a\n"
            "PASS, FAIL or SKIP line per check, then a summary:\n"
            "  load                  it loads, negotiates an ABI version and describes\n"
            "                        its devices\n"
            "  negotiation           its entry, called with this host's ABI range, a newer\n"
            "                        host's, one too new and one too old for it, and args\n"
            "                        with a larger and a smaller struct_size, picks a\n"
            "                        version in the range or refuses with a message\n"
            "  op_conformance        every ONNX backend node case where it claims a node\n"
            "                        runs on [PLUGIN, reference] under policy \"first\"\n"
            "                        and matches the expected outputs (tolerances as\n"
            "                        `tessera test`); cases it does not claim are counted\n"
            "  unknown_option        an unknown provider option is refused with\n"
            "                        TSR_ERR_INVALID_ARGUMENT naming the key\n"
            "  wrong_shape           a run with an input of the wrong rank fails cleanly,\n"
            "                        and the next run is right\n"
            "  concurrency_sessions  %d threads x %d runs, a session each, equal the\n"
            "                        single-threaded outputs\n"
            "  concurrency_shared    the same on one shared session\n"
            "  device_copies         for device memory: a claimed case's copies in and\n"
            "                        out are made and its outputs are right (SKIP for\n"
            "                        host memory)\n"
            "  compiled_cache        pieces it exports are imported by a second session,\n"
            "                        outputs still right (SKIP when it stores none)\n"
            "  model_round_trip      every model of --models where it claims a heavy op\n"
            "                        (Conv, ConvTranspose, MatMul, Gemm, Attention,\n"
            "                        LSTM/GRU/RNN, MatMulInteger, ConvInteger, QLinearConv,\n"
            "                        QLinearMatMul, Einsum) runs on [PLUGIN, reference] and\n"
            "                        matches its expected outputs (SKIP without --models)\n"
            "wrong_shape to compiled_cache reuse a case the plugin passed. Exit status\n"
            "1 when a check failed, 2 on a usage error.\n"
            "\n"
            "  --cases DIR            the ONNX node test cases (a folder of test_*\n"
            "                         folders, or a suite holding node/); default: the\n"
            "                         first of $TESSERA_ONNX_TESTS/node,\n"
            "                         ../shared/onnx-tests/node, and beside this build\n"
            "                         the shared suite or the generated onnx 1.12 one\n"
            "  --models DIR           whole-model test cases: DIR/NAME/model.onnx and\n"
            "                         DIR/NAME/test_data_set_*/ (the backend suite's layout,\n"
            "                         as tools/zoo/run_zoo_tests.sh writes its cases)\n"
            "  --ops LIST             only cases of these ops (comma-separated ONNX op\n"
            "                         types: Relu,Conv takes test_relu*, test_conv_*)\n"
            "  --max-cases N          at most N cases, evenly spread (default 0: all)\n"
            "  --expected-pass FILE   cases known to pass (FOLDER/CASE or CASE a line, as\n"
            "                         tests/conformance/expected_pass*.txt): a claimed\n"
            "                         case not listed that fails is a SKIP\n"
            "  --json                 print one JSON object: plugin, provider, version,\n"
            "                         devices, checks [{name, status, detail}], totals\n"
            "  -v, --verbose          also print each claimed case's result\n"
            "  -j, --jobs N           cases run at once (default: number of CPUs)\n"
            "  --timeout SECONDS      per case and per check (default 120)\n"
            "  --rtol R, --atol A     float tolerances (default 1e-3, 1e-5)\n"
            "  --no-fork              run everything in this process (for a debugger; a\n"
            "                         crash then ends the run)\n"
            "  --provider-option PROVIDER:KEY=VALUE, -t/--threads N, --log-level LEVEL,\n"
            "  --dim NAME=VALUE, --limit NAME=VALUE\n"
            "                         as for `tessera run`\n",
            CP_THREADS, CP_RUNS);
}

/* --- where the cases are ------------------------------------------------- */
/* DIR, or DIR/node when DIR is a suite (onnx-tests/) rather than a folder
 * of cases; NULL when neither exists. */
static char *node_folder(const char *dir) {
    if (!dir || !tc_is_dir(dir)) return NULL;
    char *node = tc_join(dir, "node");
    if (node && tc_is_dir(node) && !tc_is_case(dir)) return node;
    free(node);
    return strdup(dir);
}

/* The suite `tessera test` and the conformance ctest use, found without the
 * build's settings: the environment, then ../shared from here, then the
 * places a build tree keeps it (bin/ -> the source root's ../shared, or the
 * onnx 1.12 suite the onnx_suite ctest fixture generates). */
static char *default_cases(void) {
    char exe[PATH_MAX], *candidates[4] = {0};
    const char *env = getenv("TESSERA_ONNX_TESTS");
    candidates[0] = env && *env ? tc_join(env, "node") : NULL;
    candidates[1] = strdup("../shared/onnx-tests/node");
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        candidates[2] = tc_join(exe, "../../../shared/onnx-tests/node");
        candidates[3] = tc_join(exe, "../tests/conformance/onnx112-suite/node");
    }
    char *found = NULL;
    for (size_t i = 0; i < 4; i++) {
        if (!found && candidates[i] && tc_is_dir(candidates[i])) found = realpath(candidates[i], NULL);
        free(candidates[i]);
    }
    return found;
}

/* --- arguments ----------------------------------------------------------- */
static int split_ops(cp_run *r, const char *list) {
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n) {
            char **grown = realloc(r->ops, (r->op_count + 1) * sizeof *grown);
            if (!grown) return CLI_EXIT_FAIL;
            r->ops = grown;
            if (!(grown[r->op_count] = strndup(p, n))) return CLI_EXIT_FAIL;
            r->op_count++;
        }
        p += n + (p[n] == ',');
    }
    return r->op_count ? 0 : cli_usage_error("check-provider", "--ops wants op types, e.g. Relu,Conv");
}

static int parse_args(int argc, char **argv, cp_run *r) {
    const char *cases = NULL;
    cli_common_init(&r->common);
    r->tol.rtol = 1e-3;
    r->tol.atol = 1e-5;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    r->jobs = cpus > 0 ? (size_t)cpus : 1;
    r->timeout = 120;
    r->fork = true;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        bool bad = false;
        int64_t n;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            return -1;
        }
        int c = cli_parse_common(&r->common, argc, argv, &i, true);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--cases", &bad))) {
            cases = v;
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--models", &bad))) {
            free(r->models_path);
            if (!(r->models_path = strdup(v))) return CLI_EXIT_FAIL;
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--ops", &bad))) {
            int rc = split_ops(r, v);
            if (rc) return rc;
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--max-cases", &bad))) {
            if (!cli_parse_int64(v, &n) || n < 0)
                return cli_usage_error("check-provider", "--max-cases wants a number >= 0, not '%s'", v);
            r->max_cases = (size_t)n;
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--expected-pass", &bad))) {
            free(r->expected_path);
            if (!(r->expected_path = strdup(v))) return CLI_EXIT_FAIL;
        } else if ((v = cli_option_value(argc, argv, &i, "-j", "--jobs", &bad))) {
            if (!cli_parse_int64(v, &n) || n < 1 || n > 4096)
                return cli_usage_error("check-provider", "-j wants a number from 1 to 4096, not '%s'", v);
            r->jobs = (size_t)n;
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--timeout", &bad))) {
            if (!cli_parse_double(v, &r->timeout) || r->timeout < 0)
                return cli_usage_error("check-provider", "--timeout wants seconds >= 0, not '%s'", v);
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--rtol", &bad))) {
            if (!cli_parse_double(v, &r->tol.rtol) || r->tol.rtol < 0)
                return cli_usage_error("check-provider", "--rtol wants a number >= 0, not '%s'", v);
        } else if ((v = cli_option_value(argc, argv, &i, NULL, "--atol", &bad))) {
            if (!cli_parse_double(v, &r->tol.atol) || r->tol.atol < 0)
                return cli_usage_error("check-provider", "--atol wants a number >= 0, not '%s'", v);
        } else if (bad) {
            return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--json") == 0) {
            r->json = true;
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            r->verbose = true;
        } else if (strcmp(arg, "--no-fork") == 0) {
            r->fork = false;
        } else if (arg[0] == '-' && arg[1]) {
            return cli_usage_error("check-provider", "unknown option '%s'", arg);
        } else if (r->plugin) {
            return cli_usage_error("check-provider", "one PLUGIN at a time ('%s' and '%s')", r->plugin, arg);
        } else if (!(r->plugin = strdup(arg))) {
            return CLI_EXIT_FAIL;
        }
        if (bad) return CLI_EXIT_USAGE;
    }
    /* The kit decides the providers and their placement: that is what it
     * checks. */
    const cli_common *c = &r->common;
    if (c->provider_count || c->policy >= 0 || c->fallback || c->assign_count)
        return cli_usage_error("check-provider", "-p, --policy, --fallback and --assign are the kit's to choose");
    if (!r->plugin) return cli_usage_error("check-provider", "no PLUGIN given");
    r->cases_path = cases ? node_folder(cases) : default_cases();
    if (!r->cases_path && cases) return cli_usage_error("check-provider", "--cases '%s' is not a folder", cases);
    if (!r->cases_path)
        return cli_usage_error("check-provider",
                               "no ONNX node test cases found; pass --cases DIR (e.g. "
                               "onnx/backend/test/data/node of a pip-installed onnx)");
    return 0;
}

/* --- running ------------------------------------------------------------- */
/* Checks 3-8: one job each, one at a time, so each check's time is its own. */
static const struct {
    const char *name;
    char (*fn)(const cp_run *r, char *msg, size_t size);
} late_checks[] = {
    {"unknown_option", cp_job_unknown_option},         {"wrong_shape", cp_job_wrong_shape},
    {"concurrency_sessions", cp_job_sessions_threads}, {"concurrency_shared", cp_job_shared_session},
    {"device_copies", cp_job_device_copies},           {"compiled_cache", cp_job_compiled_cache},
};
#define LATE_COUNT (sizeof late_checks / sizeof late_checks[0])

typedef struct late_state {
    cp_run *run;
    double last; /* when the previous check finished */
} late_state;

static char late_job(size_t index, void *user, char *msg, size_t size) {
    const late_state *ls = user;
    char kind = late_checks[index].fn(ls->run, msg, size);
    fp_one_line(msg);
    return kind;
}

static void add_check(cp_run *r, const char *name, char status, const char *detail, double secs) {
    cp_check *c = &r->checks[r->check_count++];
    c->name = name;
    c->status = status;
    c->detail = strdup(detail ? detail : "");
    c->seconds = secs;
    if (!r->json) cp_print_check(r, c);
}

static void late_done(size_t index, const fp_result *res, void *user) {
    late_state *ls = user;
    double now = fp_now();
    char status = res->kind == TC_PASS || res->kind == TC_SKIP ? res->kind : TC_FAIL;
    add_check(ls->run, late_checks[index].name, status, res->text, now - ls->last);
    ls->last = now;
}

static void run_checks(cp_run *r) {
    double t = fp_now();
    cp_check load = {0};
    cp_check_load(r, &load);
    add_check(r, load.name, load.status, load.detail, fp_now() - t);
    free(load.detail);
    if (!r->json && r->plugin_info.loaded) cp_print_plugin(r);
    /* Even for a plugin the host refused: how it answers other ranges
     * tells why. */
    t = fp_now();
    cp_check neg = {0};
    cp_check_negotiation(r, &neg);
    add_check(r, neg.name, neg.status, neg.detail, fp_now() - t);
    free(neg.detail);
    if (!r->plugin_info.loaded) {
        add_check(r, "op_conformance", TC_SKIP, "the plugin did not load", 0);
        for (size_t i = 0; i < LATE_COUNT; i++)
            add_check(r, late_checks[i].name, TC_SKIP, "the plugin did not load", 0);
        add_check(r, "model_round_trip", TC_SKIP, "the plugin did not load", 0);
        return;
    }
    t = fp_now();
    cp_check ops = {0};
    cp_check_ops(r, &ops);
    add_check(r, ops.name, ops.status, ops.detail, fp_now() - t);
    free(ops.detail);
    late_state ls = {r, fp_now()};
    fp_pool pool = {.count = LATE_COUNT,
                    .jobs = 1,
                    .timeout = r->timeout,
                    .fork = r->fork,
                    .job = late_job,
                    .done = late_done,
                    .user = &ls};
    fp_run(&pool);
    t = fp_now();
    cp_check models = {0};
    cp_check_models(r, &models);
    add_check(r, models.name, models.status, models.detail, fp_now() - t);
    free(models.detail);
}

static void free_lines(cp_lines *l) {
    for (size_t i = 0; i < l->count; i++) free(l->lines[i]);
    free(l->lines);
}

static void free_run(cp_run *r) {
    cp_plugin *p = &r->plugin_info;
    for (size_t k = 0; k < p->device_count; k++) {
        free(p->devices[k].name);
        free(p->devices[k].vendor);
        free(p->devices[k].details);
    }
    free(p->devices);
    free(p->name);
    free(p->vendor);
    free(p->version);
    for (size_t i = 0; i < r->ops_tally.failure_count; i++) free(r->ops_tally.failures[i]);
    free(r->ops_tally.failures);
    free(r->ops_tally.passed_cases);
    free_lines(&r->negotiation);
    free_lines(&r->models_tally.failures);
    free_lines(&r->models_tally.skips);
    tc_list_free(&r->models);
    free(r->models_path);
    for (size_t i = 0; i < r->check_count; i++) free(r->checks[i].detail);
    for (size_t i = 0; i < r->expected_count; i++) free(r->expected[i]);
    free(r->expected);
    free(r->expected_path);
    for (size_t i = 0; i < r->op_count; i++) free(r->ops[i]);
    free(r->ops);
    tc_list_free(&r->cases);
    free(r->plugin);
    free(r->cases_path);
    cli_common_free(&r->common);
}

int cmd_check_provider(int argc, char **argv) {
    cp_run r = {0};
    int rc = parse_args(argc, argv, &r);
    if (rc) {
        free_run(&r);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    double start = fp_now();
    if ((rc = cp_select_cases(&r))) {
        free_run(&r);
        return rc;
    }
    if (r.cases.count == 0) {
        fprintf(stderr, "tessera check-provider: no case in %s%s\n", r.cases_path,
                r.op_count ? " is of the ops --ops names" : "");
        free_run(&r);
        return CLI_EXIT_USAGE;
    }
    if (r.models_path && (rc = tc_collect(&r.models, "check-provider", r.models_path, NULL, NULL))) {
        free_run(&r);
        return rc;
    }
    if (!r.json) {
        printf("tessera check-provider %s\ncases: %s\n", r.plugin, r.cases_path);
        if (r.models_path) printf("models: %s (%zu)\n", r.models_path, r.models.count);
    }
    run_checks(&r);
    double secs = fp_now() - start;
    if (r.json) cp_print_json(&r, secs);
    else cp_print_summary(&r, secs);
    bool failed = false;
    for (size_t i = 0; i < r.check_count; i++) failed = failed || r.checks[i].status == TC_FAIL;
    free_run(&r);
    return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
