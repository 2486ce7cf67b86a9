/*
 * tessera run MODEL [MODEL...] — run a model, or a chain of models made
 * one (cli_chain.c), once. Inputs come from TensorProto files,
 * a test case's folder or constants, or are made up from the declared types
 * and shapes (cli_inputs.c), so any model can be smoke-tested with no data
 * at hand; outputs are summarised and optionally saved as TensorProto files
 * that `tessera test`-style tools can read back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Seed of the made-up inputs: fixed, so two runs (or two providers) see the
 * same data and their outputs can be compared. Input k uses SEED + k. */
#define RUN_SEED 0x7e55e7a5eedull
#define SUMMARY_VALUES 8

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera run MODEL|CASE_DIR [MODEL...] [options]\n"
            "\n"
            "Runs MODEL once and prints each output's name, type, shape and a summary.\n"
            "\n"
            "  -o, --output-dir DIR   write each output to DIR/NAME.pb ('/' in NAME -> '_')\n"
            "  --explain              print which provider runs which node, then run\n"
            "  --info                 print the model's metadata (producer, versions, opsets,\n"
            "                         properties) and declared inputs and outputs; do not run\n"
            "  --repeat N             run N times on one session, printing each run's time\n"
            "                         (outputs of the last run); -i NAME=FILE given again\n"
            "                         for a NAME starts another input set, used in turn\n"
            "                         (symbolic shapes changing between runs)\n"
            "  --timeout-ms N         stop the run after N milliseconds (exit 1, 'cancelled')\n"
            "  --tag TEXT             tag the run's log lines with [TEXT]\n");
    cli_print_chain_help(f);
    cli_print_inputs_help(f);
    cli_print_common_help(f, true);
}

typedef struct run_args {
    const char *model; /* as given; inputs.model is the file */
    cli_inputs_args inputs;
    const char *output_dir;
    bool explain;
    bool info;
    long long timeout_ms; /* 0: none */
    long repeat;          /* runs; 0: once per input set */
    const char *tag;
    cli_common common;
} run_args;

static int parse_args(int argc, char **argv, run_args *a) {
    cli_common_init(&a->common);
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
        if ((r = cli_inputs_parse(&a->inputs, "run", argc, argv, &i)) < 0) return CLI_EXIT_USAGE;
        if (r > 0) continue;
        if ((v = cli_option_value(argc, argv, &i, "-o", "--output-dir", &bad))) {
            a->output_dir = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (strcmp(arg, "--explain") == 0) {
            a->explain = true;
            continue;
        }
        if (strcmp(arg, "--info") == 0) {
            a->info = true;
            continue;
        }
        if ((v = cli_option_value(argc, argv, &i, NULL, "--timeout-ms", &bad))) {
            char *end = NULL;
            a->timeout_ms = strtoll(v, &end, 10);
            if (!*v || *end || a->timeout_ms <= 0)
                return cli_usage_error("run", "--timeout-ms wants a positive number of milliseconds, not '%s'", v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--repeat", &bad))) {
            char *end = NULL;
            a->repeat = strtol(v, &end, 10);
            if (!*v || *end || a->repeat <= 0 || a->repeat > 1000000)
                return cli_usage_error("run", "--repeat wants a number of runs (1..1000000), not '%s'", v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, NULL, "--tag", &bad))) {
            a->tag = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (arg[0] == '-' && arg[1]) return cli_usage_error("run", "unknown option '%s'", arg);
        if (a->model) cli_add_stage(&a->common, arg); /* a chain: run pre.onnx model.onnx */
        else a->model = arg;
    }
    if (!a->model && !a->inputs.case_dir) return cli_usage_error("run", "no MODEL given");
    return cli_inputs_resolve_model(&a->inputs, "run", a->model);
}

static void free_args(run_args *a) {
    cli_inputs_free(&a->inputs);
    cli_common_free(&a->common);
}

static void print_io(const char *kind, const tsr_io_info *info, const tsr_tensor *t) {
    char shape[512];
    tio_format_shape(shape, sizeof shape, t->rank, t->dims);
    printf("%s %s: %s %s\n", kind, info->name, tsr_elem_type_name(t->elem_type), shape);
}

static bool write_output(const char *dir, const char *name, const tsr_value *v) {
    void *bytes;
    size_t size;
    tsr_status *st = tsr_value_to_onnx_tensor(v, name, &bytes, &size);
    if (st) {
        char what[512];
        snprintf(what, sizeof what, "serializing output '%s'", name);
        cli_report_status(what, st);
        return false;
    }
    char *file = tio_sanitize_name(name);
    size_t len = strlen(dir) + strlen(file ? file : "") + 8;
    char *path = malloc(len);
    bool ok = file && path;
    if (ok) {
        snprintf(path, len, "%s/%s.pb", dir, file);
        ok = tio_write_file(path, bytes, size);
        if (!ok) fprintf(stderr, "tessera: cannot write %s: %s\n", path, strerror(errno));
    }
    free(path);
    free(file);
    free(bytes);
    return ok;
}

/* -i NAME=FILE given again for a NAME starts the next input set: the sets
 * are runs of specs, set k from start[k] to start[k + 1]. Returns how many
 * (at least 1). start has room for spec_count + 2 entries. */
static size_t input_sets(const cli_inputs_args *a, size_t *start) {
    size_t n = 0;
    start[0] = 0;
    for (size_t i = 0; i < a->spec_count; i++) {
        const char *name = a->specs[i].name;
        for (size_t j = start[n]; name && j < i; j++)
            if (a->specs[j].name && strcmp(a->specs[j].name, name) == 0) {
                start[++n] = i;
                break;
            }
    }
    start[++n] = a->spec_count;
    return n;
}

int cmd_run(int argc, char **argv) {
    run_args a = {0};
    int rc = parse_args(argc, argv, &a);
    if (rc) {
        free_args(&a);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    tsr_session_options *opts = NULL;
    tsr_session *s = NULL;
    tsr_run_options *ropts = NULL;
    cli_feed *feeds = NULL;
    size_t n_sets = 0, made = 0;
    size_t *set_start = calloc(a.inputs.spec_count + 2, sizeof *set_start);
    tsr_value **out_values = NULL;
    size_t nout = 0;
    tsr_status *st;
    rc = CLI_EXIT_FAIL;

    if ((st = cli_make_session_options(&a.common, &opts))) {
        cli_report_status("session options", st);
        goto done;
    }
    if ((st = tsr_session_create(opts, a.inputs.model, &s))) {
        char what[1100];
        snprintf(what, sizeof what, "loading %s", a.inputs.model);
        cli_report_status(what, st);
        goto done;
    }
    if (a.info) {
        rc = cli_print_model_info(s);
        goto done;
    }
    if (a.explain) {
        char *text = NULL;
        if ((st = tsr_session_assignment_text(s, &text))) {
            cli_report_status("assignment", st);
            goto done;
        }
        fputs(text, stdout);
        if (*text && text[strlen(text) - 1] != '\n') putchar('\n');
        free(text);
        fflush(stdout);
    }

    nout = tsr_session_output_count(s);
    out_values = calloc(nout + 1, sizeof *out_values);
    n_sets = input_sets(&a.inputs, set_start);
    feeds = calloc(n_sets, sizeof *feeds);
    if (!out_values || !set_start || !feeds) goto done;
    for (size_t k = 0; k < n_sets; k++) {
        cli_inputs_args one = a.inputs;
        one.specs = a.inputs.specs + set_start[k];
        one.spec_count = set_start[k + 1] - set_start[k];
        if (!cli_feed_make(s, &one, &a.common, RUN_SEED, "run", &feeds[k])) goto done;
        made = k + 1;
        for (size_t i = 0; i < feeds[k].count; i++) {
            tsr_io_info info = {.struct_size = sizeof info};
            if ((st = tsr_session_input_info(s, i, &info))) {
                cli_report_status("input info", st);
                goto done;
            }
            if (n_sets > 1) printf("set %zu ", k);
            print_io("input", &info, &feeds[k].views[i]);
        }
    }
    if ((st = tsr_run_options_create(&ropts)) || (st = tsr_run_options_set_tag(ropts, a.tag)) ||
        (st = tsr_run_options_set_timeout_ms(ropts, a.timeout_ms))) {
        cli_report_status("run options", st);
        goto done;
    }
    size_t runs = a.repeat > 0 && (size_t)a.repeat > n_sets ? (size_t)a.repeat : n_sets;
    for (size_t r = 0; r < runs; r++) {
        const cli_feed *in = &feeds[r % n_sets];
        for (size_t j = 0; j < nout; j++) tsr_value_free(out_values[j]), out_values[j] = NULL;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        st = tsr_session_run_with_options(s, ropts, in->count, in->names, in->tensors, nout, NULL, out_values);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (st) {
            char what[64];
            snprintf(what, sizeof what, runs > 1 ? "run %zu" : "run", r);
            cli_report_status(what, st);
            goto done;
        }
        if (runs > 1)
            printf("run %zu (input set %zu): %.3f ms\n", r, r % n_sets,
                   (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    }
    if (a.output_dir && !tio_make_dirs(a.output_dir)) {
        fprintf(stderr, "tessera: cannot create %s: %s\n", a.output_dir, strerror(errno));
        goto done;
    }
    rc = CLI_EXIT_OK;
    for (size_t j = 0; j < nout; j++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_tensor t = {.struct_size = sizeof t};
        if ((st = tsr_session_output_info(s, j, &info)) || (st = tsr_value_tensor(out_values[j], &t))) {
            cli_report_status("output", st);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        print_io("output", &info, &t);
        tio_print_summary(stdout, &t, SUMMARY_VALUES);
        if (a.output_dir && !write_output(a.output_dir, info.name, out_values[j])) rc = CLI_EXIT_FAIL;
    }

done:
    for (size_t k = 0; k < made; k++) cli_feed_free(&feeds[k]);
    free(feeds);
    free(set_start);
    for (size_t j = 0; out_values && j < nout; j++) tsr_value_free(out_values[j]);
    free(out_values);
    tsr_session_free(s);
    tsr_run_options_free(ropts);
    tsr_session_options_free(opts);
    free_args(&a);
    return rc;
}
