/*
 * tessera run MODEL — run a model once. Inputs come from TensorProto files,
 * a test case's folder or constants, or are made up from the declared types
 * and shapes (cli_inputs.c), so any model can be smoke-tested with no data
 * at hand; outputs are summarised and optionally saved as TensorProto files
 * that `tessera test`-style tools can read back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Seed of the made-up inputs: fixed, so two runs (or two providers) see the
 * same data and their outputs can be compared. Input k uses SEED + k. */
#define RUN_SEED 0x7e55e7a5eedull
#define SUMMARY_VALUES 8

static void help(FILE *f) {
    fprintf(f,
            "usage: tessera run MODEL|CASE_DIR [options]\n"
            "\n"
            "Runs MODEL once and prints each output's name, type, shape and a summary.\n"
            "\n"
            "  -o, --output-dir DIR   write each output to DIR/NAME.pb ('/' in NAME -> '_')\n"
            "  --explain              print which provider runs which node, then run\n"
            "  --info                 print the model's metadata (producer, versions, opsets,\n"
            "                         properties) and declared inputs and outputs; do not run\n"
            "  --timeout-ms N         stop the run after N milliseconds (exit 1, 'cancelled')\n"
            "  --tag TEXT             tag the run's log lines with [TEXT]\n");
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
        if ((v = cli_option_value(argc, argv, &i, NULL, "--tag", &bad))) {
            a->tag = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (arg[0] == '-' && arg[1]) return cli_usage_error("run", "unknown option '%s'", arg);
        if (a->model) return cli_usage_error("run", "more than one model ('%s', '%s')", a->model, arg);
        a->model = arg;
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
    tsr_value **out_values = NULL;
    cli_feed in = {0};
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
    if (!out_values || !cli_feed_make(s, &a.inputs, &a.common, RUN_SEED, "run", &in)) goto done;
    for (size_t i = 0; i < in.count; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_input_info(s, i, &info))) {
            cli_report_status("input info", st);
            goto done;
        }
        print_io("input", &info, &in.views[i]);
    }

    if ((st = tsr_run_options_create(&ropts)) || (st = tsr_run_options_set_tag(ropts, a.tag)) ||
        (st = tsr_run_options_set_timeout_ms(ropts, a.timeout_ms)) ||
        (st = tsr_session_run_with_options(s, ropts, in.count, in.names, in.tensors, nout, NULL, out_values))) {
        cli_report_status("run", st);
        goto done;
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
    cli_feed_free(&in);
    for (size_t j = 0; out_values && j < nout; j++) tsr_value_free(out_values[j]);
    free(out_values);
    tsr_session_free(s);
    tsr_run_options_free(ropts);
    tsr_session_options_free(opts);
    free_args(&a);
    return rc;
}
