/*
 * tessera bench MODEL|CASE_DIR — how fast a model runs: session-creation time, then
 * latency over timed runs after untimed warm-ups (median, min, p90 by nearest
 * rank, as ../shared/bench/ort-bench reports them), and peak memory.
 *
 * The work is split into phases (create, make inputs, warm up, measure,
 * report) around one bench_result, so further observers — a per-piece
 * --profile, say — can hook into the measured loop without reshaping it.
 * Inputs are `tessera run`'s (cli_inputs.c): files, a test case, constants,
 * or made up.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "profile_report.h"

#define BENCH_SEED 0x7e55e7a5eedull /* the same made-up inputs as `tessera run` */
#define BENCH_MAX_RUNS 1000000

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera bench MODEL|CASE_DIR [MODEL...] [options]\n"
            "\n"
            "Creates a session for MODEL, runs it --warmup times untimed, then --runs\n"
            "times timed, on the inputs below (files, a test case, constants, or made\n"
            "up). Prints median, min and p90 latency, session creation time and peak\n"
            "RSS. `tessera bench CASE_DIR` runs CASE_DIR/model.onnx on the case's inputs.\n"
            "\n"
            "  --runs N               timed runs (default 20)\n"
            "  --warmup N             untimed runs first (default 5)\n"
            "  --json                 print one JSON object: model, threads, runs, median_ms,\n"
            "                         min_ms, p90_ms, create_ms, peak_rss_mb, working_peak_mb\n"
            "  --profile FILE         record each piece run and copy during the timed runs:\n"
            "                         a Chrome trace to FILE and a summary per provider, op\n"
            "                         type and copy (stderr with --json); latencies then\n"
            "                         include the recording's small cost\n");
    cli_print_inputs_help(f);
    cli_print_chain_help(f);
    cli_print_common_help(f, true);
}

typedef struct bench_args {
    const char *model; /* as given (reported); inputs.model is the file */
    cli_inputs_args inputs;
    int64_t runs, warmup;
    bool json;
    const char *profile; /* trace file, or NULL */
    cli_common common;
} bench_args;

typedef struct bench_result {
    double create_ms;
    double *run_ms; /* one per timed run */
    size_t run_count;
    double median_ms, min_ms, p90_ms;
    double peak_rss_mb;
    double working_mb; /* the last run's peak of live tensors (tsr_session_working_bytes) */
} bench_result;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_args(int argc, char **argv, bench_args *a) {
    cli_common_init(&a->common);
    a->runs = 20;
    a->warmup = 5;
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
        if ((r = cli_parse_chain(&a->common, argc, argv, &i)) < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((r = cli_inputs_parse(&a->inputs, "bench", argc, argv, &i)) < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--runs", &bad))) {
            if (!cli_parse_int64(v, &a->runs) || a->runs < 1 || a->runs > BENCH_MAX_RUNS)
                return cli_usage_error("bench", "--runs wants 1..%d, not '%s'", BENCH_MAX_RUNS, v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--warmup", &bad))) {
            if (!cli_parse_int64(v, &a->warmup) || a->warmup < 0 || a->warmup > BENCH_MAX_RUNS)
                return cli_usage_error("bench", "--warmup wants 0..%d, not '%s'", BENCH_MAX_RUNS, v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--profile", &bad))) {
            a->profile = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (strcmp(arg, "--json") == 0) {
            a->json = true;
            continue;
        }
        if (arg[0] == '-' && arg[1]) return cli_usage_error("bench", "unknown option '%s'", arg);
        if (a->model) cli_add_stage(&a->common, arg); /* a chain (cli_chain.c) */
        else a->model = arg;
    }
    int rc = cli_inputs_resolve_model(&a->inputs, "bench", a->model);
    if (!a->model) a->model = a->inputs.case_dir;
    return rc;
}

/* One run; the outputs are freed at once (their allocation is part of the
 * cost an application pays too). */
static bool run_once(tsr_session *s, const cli_feed *in, tsr_value **outs, size_t nout) {
    tsr_status *st = tsr_session_run(s, in->count, in->names, in->tensors, nout, NULL, outs);
    for (size_t j = 0; j < nout; j++) {
        tsr_value_free(outs[j]);
        outs[j] = NULL;
    }
    if (st) cli_report_status("run", st);
    return !st;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarise(bench_result *r) {
    double *sorted = malloc(r->run_count * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, r->run_ms, r->run_count * sizeof *sorted);
    qsort(sorted, r->run_count, sizeof *sorted, cmp_double);
    size_t n = r->run_count;
    r->min_ms = sorted[0];
    r->median_ms = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    size_t rank = (size_t)ceil(0.9 * (double)n); /* nearest rank, 1-based */
    r->p90_ms = sorted[(rank ? rank : 1) - 1];
    free(sorted);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) r->peak_rss_mb = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void report(const bench_args *a, const bench_result *r) {
    if (a->json) {
        printf("{\"model\": ");
        json_string(stdout, a->model);
        printf(", \"threads\": %d, \"runs\": %zu, \"median_ms\": %.4f, \"min_ms\": %.4f, \"p90_ms\": %.4f, "
               "\"create_ms\": %.3f, \"peak_rss_mb\": %.1f, \"working_peak_mb\": %.2f}\n",
               a->common.threads < 0 ? 0 : (int)a->common.threads, r->run_count, r->median_ms, r->min_ms, r->p90_ms,
               r->create_ms, r->peak_rss_mb, r->working_mb);
        return;
    }
    printf("model        %s\n", a->model);
    if (a->common.threads > 0) printf("threads      %d\n", (int)a->common.threads);
    else printf("threads      provider's choice\n");
    printf("runs         %zu (after %" PRId64 " warm-up)\n", r->run_count, a->warmup);
    printf("median       %.3f ms\nmin          %.3f ms\np90          %.3f ms\n", r->median_ms, r->min_ms, r->p90_ms);
    printf("create       %.1f ms\npeak RSS     %.1f MiB\nworking set  %.2f MiB (tensors of one run at once)\n",
           r->create_ms, r->peak_rss_mb, r->working_mb);
}

int cmd_bench(int argc, char **argv) {
    bench_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        cli_inputs_free(&a.inputs);
        cli_common_free(&a.common);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    rc = CLI_EXIT_FAIL;
    tsr_session_options *opts = NULL;
    tsr_session *s = NULL;
    cli_feed in = {0};
    bench_result r = {0};
    tsr_value **outs = NULL;
    tsr_status *st;
    if ((st = cli_make_session_options(&a.common, &opts))) {
        cli_report_status("session options", st);
        goto done;
    }
    if (a.profile && (st = tsr_session_options_set_profiling(opts, 1))) {
        cli_report_status("profiling", st);
        goto done;
    }
    double t0 = now_ms();
    if ((st = tsr_session_create(opts, a.inputs.model, &s))) {
        char what[1100];
        snprintf(what, sizeof what, "loading %s", a.inputs.model);
        cli_report_status(what, st);
        goto done;
    }
    r.create_ms = now_ms() - t0;
    if (!cli_feed_make(s, &a.inputs, &a.common, BENCH_SEED, "bench", &in)) goto done;
    size_t nout = tsr_session_output_count(s);
    outs = calloc(nout + 1, sizeof *outs);
    r.run_ms = calloc((size_t)a.runs, sizeof *r.run_ms);
    if (!outs || !r.run_ms) goto done;
    for (int64_t i = 0; i < a.warmup; i++)
        if (!run_once(s, &in, outs, nout)) goto done;
    if (a.profile) {
        /* drop the warm-ups' events: the profile covers the timed runs */
        char *events = NULL;
        if ((st = tsr_session_profile_take(s, &events))) {
            cli_report_status("profile", st);
            goto done;
        }
        free(events);
    }
    for (int64_t i = 0; i < a.runs; i++) {
        double start = now_ms();
        if (!run_once(s, &in, outs, nout)) goto done;
        r.run_ms[r.run_count++] = now_ms() - start;
    }
    summarise(&r);
    uint64_t wpeak = 0, wleft = 0;
    tsr_status *ws = tsr_session_working_bytes(s, &wpeak, &wleft);
    tsr_status_free(ws);
    r.working_mb = (double)wpeak / (1024.0 * 1024.0);
    report(&a, &r);
    rc = CLI_EXIT_OK;
    if (a.profile && !profile_report_session(s, a.profile, a.json ? stderr : stdout, r.run_count)) rc = CLI_EXIT_FAIL;
done:
    free(outs);
    free(r.run_ms);
    cli_feed_free(&in);
    tsr_session_free(s);
    tsr_session_options_free(opts);
    cli_inputs_free(&a.inputs);
    cli_common_free(&a.common);
    return rc;
}
