/*
 * tessera test PATH... — run ONNX backend test cases (CASE/model.onnx plus
 * CASE/test_data_set_K/{input,output}_N.pb) and compare the outputs.
 *
 * Each case runs in a forked child (fork_pool.c): while the library is
 * young a case may crash or hang, and that must cost one FAIL line, not the
 * whole run. The same children give -j parallelism. Results are printed in
 * case order, so the output is identical whatever -j is. Finding cases and
 * running them is test_case.c, shared with `tessera check-provider`.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera test [options] PATH...\n"
            "\n"
            "Runs ONNX backend test cases. A PATH is a case folder (holding model.onnx\n"
            "and test_data_set_*/) or a folder of case folders. Prints PASS, FAIL or\n"
            "SKIP per case (SKIP: test data this tool cannot read, e.g. a sequence),\n"
            "then a count. Exit status 0 only when no case failed.\n"
            "\n"
            "  --rtol R               relative tolerance for floats (default 1e-3)\n"
            "  --atol A               absolute tolerance for floats (default 1e-5)\n"
            "  -j, --jobs N           cases run at once (default: number of CPUs)\n"
            "  --timeout SECONDS      per case; a case past it FAILs (default 120)\n"
            "  --filter GLOB          only cases whose name matches (repeatable)\n"
            "  --no-fork              run cases in this process, one by one (for a\n"
            "                         debugger; a crash then ends the run)\n"
            "  -v, --verbose          also print what each non-passing case wrote to\n"
            "                         stderr (library log lines, notes)\n");
    cli_print_common_help(f, true);
}

typedef struct test_args {
    cli_common common;
    cmp_tolerance tol;
    long jobs;
    double timeout;
    bool fork;
    bool verbose;
    char **filters;
    size_t filter_count;
    tc_list cases;
} test_args;

/* --- cases -------------------------------------------------------------- */
static bool wanted(const char *name, void *user) {
    const test_args *a = user;
    if (a->filter_count == 0) return true;
    for (size_t i = 0; i < a->filter_count; i++)
        if (fnmatch(a->filters[i], name, 0) == 0) return true;
    return false;
}

/* Runs every data set of one case. Cleans up fully before returning, so a
 * crash in the library's teardown is caught as a crash, not a PASS. */
static tc_kind run_case(const test_args *a, const tc_case *c, char *reason, size_t size) {
    tsr_session_options *opts = NULL;
    tsr_session *s = NULL;
    tc_kind r = TC_FAIL;
    tsr_status *st;
    char *model = tc_join(c->dir, "model.onnx");
    reason[0] = '\0';

    if (!model) {
        snprintf(reason, size, "out of memory");
        goto done;
    }
    if ((st = cli_make_session_options(&a->common, &opts))) {
        snprintf(reason, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        goto done;
    }
    if ((st = tsr_session_create(opts, model, &s))) {
        snprintf(reason, size, "load: %s", tsr_status_message(st));
        tsr_status_free(st);
        goto done;
    }
    r = tc_run_case(s, c->dir, a->tol, reason, size);
done:
    tsr_session_free(s);
    tsr_session_options_free(opts);
    free(model);
    return r;
}

/* --- running cases (fork_pool.c) ------------------------------------------ */
typedef struct test_tally {
    const test_args *args;
    size_t pass, fail, skip;
} test_tally;

/* In the child (or in this process with --no-fork). */
static char case_job(size_t index, void *user, char *msg, size_t size) {
    const test_tally *t = user;
    char reason[TC_REASON_MAX];
    tc_kind r = run_case(t->args, &t->args->cases.items[index], reason, sizeof reason);
    /* One result is one line: a library message with newlines or tabs
     * would break the "PASS|FAIL|SKIP name: reason" lines scripts read. */
    fp_one_line(reason);
    snprintf(msg, size, "%s", r == TC_PASS ? "" : reason);
    return (char)r;
}

/* In the parent, in case order. */
static void case_done(size_t index, const fp_result *res, void *user) {
    test_tally *t = user;
    const tc_case *c = &t->args->cases.items[index];
    char kind = res->kind == TC_PASS || res->kind == TC_SKIP ? res->kind : TC_FAIL;
    const char *word = kind == TC_PASS ? "PASS" : kind == TC_SKIP ? "SKIP" : "FAIL";
    if (kind == TC_PASS) t->pass++;
    else if (kind == TC_SKIP) t->skip++;
    else t->fail++;
    if (kind == TC_PASS) printf("%s %s\n", word, c->name);
    else printf("%s %s: %s\n", word, c->name, res->text && *res->text ? res->text : "(no reason)");
    if (t->args->verbose && kind != TC_PASS && res->log && *res->log) {
        /* Indented so a script reading "PASS|FAIL|SKIP name" lines is not
         * confused by log text. */
        for (const char *p = res->log; *p;) {
            const char *nl = strchr(p, '\n');
            int n = nl ? (int)(nl - p) : (int)strlen(p);
            printf("    | %.*s\n", n, p);
            p += n + (nl ? 1 : 0);
        }
    }
    fflush(stdout);
}

/* --- arguments ----------------------------------------------------------- */
static int parse_args(int argc, char **argv, test_args *a, char ***paths, size_t *npaths) {
    cli_common_init(&a->common);
    a->tol.rtol = 1e-3;
    a->tol.atol = 1e-5;
    a->jobs = sysconf(_SC_NPROCESSORS_ONLN);
    if (a->jobs < 1) a->jobs = 1;
    a->timeout = 120;
    a->fork = true;
    *paths = calloc((size_t)argc, sizeof **paths);
    a->filters = calloc((size_t)argc, sizeof *a->filters);
    if (!*paths || !a->filters) return CLI_EXIT_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        bool bad = false;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            help(stdout);
            return -1;
        }
        int r = cli_parse_common(&a->common, argc, argv, &i, true);
        if (r < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--rtol", &bad))) {
            if (!cli_parse_double(v, &a->tol.rtol) || a->tol.rtol < 0)
                return cli_usage_error("test", "--rtol wants a number >= 0, not '%s'", v);
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--atol", &bad))) {
            if (!cli_parse_double(v, &a->tol.atol) || a->tol.atol < 0)
                return cli_usage_error("test", "--atol wants a number >= 0, not '%s'", v);
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, "-j", "--jobs", &bad))) {
            int64_t n;
            if (!cli_parse_int64(v, &n) || n < 1 || n > 4096)
                return cli_usage_error("test", "-j wants a number from 1 to 4096, not '%s'", v);
            a->jobs = (long)n;
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--timeout", &bad))) {
            if (!cli_parse_double(v, &a->timeout) || a->timeout < 0)
                return cli_usage_error("test", "--timeout wants seconds >= 0 (0: none), not '%s'", v);
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--filter", &bad))) {
            a->filters[a->filter_count++] = (char *)v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (strcmp(arg, "--no-fork") == 0) {
            a->fork = false;
            continue;
        }
        if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            a->verbose = true;
            continue;
        }
        if (strncmp(arg, "-j", 2) == 0 && arg[2]) { /* -j8, as make spells it */
            int64_t n;
            if (!cli_parse_int64(arg + 2, &n) || n < 1 || n > 4096)
                return cli_usage_error("test", "-j wants a number from 1 to 4096, not '%s'", arg + 2);
            a->jobs = (long)n;
            continue;
        }
        if (arg[0] == '-' && arg[1]) return cli_usage_error("test", "unknown option '%s'", arg);
        (*paths)[(*npaths)++] = argv[i];
    }
    if (*npaths == 0) return cli_usage_error("test", "no PATH given");
    return 0;
}

int cmd_test(int argc, char **argv) {
    test_args a = {0};
    char **paths = NULL;
    size_t npaths = 0;
    int rc = parse_args(argc, argv, &a, &paths, &npaths);
    if (rc) {
        rc = rc < 0 ? CLI_EXIT_OK : rc;
        goto done;
    }
    for (size_t i = 0; i < npaths && !rc; i++) rc = tc_collect(&a.cases, "test", paths[i], wanted, &a);
    if (rc) goto done;
    if (a.cases.count == 0) {
        rc = a.filter_count ? (fprintf(stderr, "tessera test: no case matches --filter\n"), CLI_EXIT_FAIL)
                            : cli_usage_error("test", "no test cases found");
        goto done;
    }
    test_tally t = {.args = &a};
    fp_pool pool = {.count = a.cases.count,
                    .jobs = (size_t)a.jobs,
                    .timeout = a.timeout,
                    .fork = a.fork,
                    .job = case_job,
                    .done = case_done,
                    .user = &t};
    fp_run(&pool);
    printf("%zu passed, %zu failed, %zu skipped\n", t.pass, t.fail, t.skip);
    rc = t.fail ? CLI_EXIT_FAIL : CLI_EXIT_OK;

done:
    tc_list_free(&a.cases);
    free(a.filters);
    free(paths);
    cli_common_free(&a.common);
    return rc;
}
