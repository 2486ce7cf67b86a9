/*
 * tessera run MODEL — run a model once. Inputs come from TensorProto files
 * or are made up from the declared types and shapes, so any model can be
 * smoke-tested with no data at hand; outputs are summarised and optionally
 * saved as TensorProto files that `tessera test`-style tools can read back.
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
            "usage: tessera run MODEL [options]\n"
            "\n"
            "Runs MODEL once and prints each output's name, type, shape and a summary.\n"
            "\n"
            "  -i, --input NAME=FILE.pb\n"
            "                         feed input NAME from a serialized TensorProto\n"
            "                         (repeatable; `-i FILE.pb` uses the name inside the file).\n"
            "                         Inputs not given are generated: floats uniform in\n"
            "                         [-1,1) from a fixed seed, integers 0..3, bools\n"
            "                         alternating; symbolic dimensions come from --dim or\n"
            "                         are 1 (with a note on stderr)\n"
            "  -o, --output-dir DIR   write each output to DIR/NAME.pb ('/' in NAME -> '_')\n"
            "  --explain              print which provider runs which node, then run\n");
    cli_print_common_help(f, true);
}

typedef struct run_input {
    char *name; /* NULL: take the name from the file */
    const char *file;
} run_input;

typedef struct run_args {
    const char *model;
    run_input *inputs;
    size_t input_count;
    const char *output_dir;
    bool explain;
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
        if ((v = cli_option_value(argc, argv, &i, "-i", "--input", &bad))) {
            run_input *grown = realloc(a->inputs, (a->input_count + 1) * sizeof *grown);
            if (!grown) return CLI_EXIT_FAIL;
            a->inputs = grown;
            /* NAME=FILE splits at the first '=' (file names with '=' are
             * rarer than ONNX input names with ':' or '.'); a name that
             * itself holds '=' can still be fed by `-i FILE`, which uses the
             * name stored in the TensorProto. */
            const char *eq = strchr(v, '=');
            run_input *in = &a->inputs[a->input_count++];
            in->name = eq ? strndup(v, (size_t)(eq - v)) : NULL;
            in->file = eq ? eq + 1 : v;
            if (eq && (eq == v || !eq[1]))
                return cli_usage_error("run", "-i wants NAME=FILE.pb, not '%s'", v);
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if ((v = cli_option_value(argc, argv, &i, "-o", "--output-dir", &bad))) {
            a->output_dir = v;
            continue;
        }
        if (bad) return CLI_EXIT_USAGE;
        if (strcmp(arg, "--explain") == 0) {
            a->explain = true;
            continue;
        }
        if (arg[0] == '-' && arg[1]) return cli_usage_error("run", "unknown option '%s'", arg);
        if (a->model) return cli_usage_error("run", "more than one model ('%s', '%s')", a->model, arg);
        a->model = arg;
    }
    if (!a->model) return cli_usage_error("run", "no MODEL given");
    return 0;
}

static void free_args(run_args *a) {
    for (size_t i = 0; i < a->input_count; i++) free(a->inputs[i].name);
    free(a->inputs);
    cli_common_free(&a->common);
}

/* Loads a TensorProto file; *name receives the name stored in it. */
static bool load_pb(const char *file, tsr_value **out, char **name) {
    void *bytes;
    size_t size;
    if (!tio_read_file(file, &bytes, &size)) {
        fprintf(stderr, "tessera: cannot read %s: %s\n", file, strerror(errno));
        return false;
    }
    tsr_status *st = tsr_value_from_onnx_tensor(bytes, size, out, name);
    free(bytes);
    if (st) {
        char what[1200];
        snprintf(what, sizeof what, "%s is not a readable TensorProto", file);
        cli_report_status(what, st);
        return false;
    }
    return true;
}

/* The value of a dimension for a made-up input: --dim for a named symbol,
 * else 1, said once per symbol so the user knows what was assumed. */
static int64_t choose_dim(const run_args *a, const tsr_io_info *info, int32_t k) {
    const char *sym = info->dim_symbols ? info->dim_symbols[k] : NULL;
    if (sym) {
        for (size_t i = 0; i < a->common.dim_count; i++)
            if (strcmp(a->common.dims[i].symbol, sym) == 0) return a->common.dims[i].value;
        fprintf(stderr, "tessera: note: input '%s': dimension %d ('%s') set to 1 (use --dim %s=N)\n",
                info->name, (int)k, sym, sym);
    } else {
        fprintf(stderr, "tessera: note: input '%s': dimension %d is unnamed and unknown; set to 1\n",
                info->name, (int)k);
    }
    return 1;
}

static bool make_input(const run_args *a, const tsr_io_info *info, size_t index, tsr_value **out) {
    if (info->elem_type == TSR_UNDEFINED) {
        fprintf(stderr,
                "tessera: input '%s' is not a tensor (or its type is unknown); "
                "give it with -i %s=FILE.pb\n",
                info->name, info->name);
        return false;
    }
    int32_t rank = info->rank;
    if (rank < 0) {
        fprintf(stderr, "tessera: note: input '%s' has an unknown rank; using a scalar\n",
                info->name);
        rank = 0;
    }
    int64_t *dims = calloc((size_t)rank + 1, sizeof *dims);
    if (!dims) return false;
    for (int32_t k = 0; k < rank; k++)
        dims[k] = info->dims[k] >= 0 ? info->dims[k] : choose_dim(a, info, k);
    tsr_status *st = tsr_value_create_tensor(info->elem_type, rank, dims, out);
    free(dims);
    if (!st && (st = tio_fill_generated(*out, RUN_SEED + index))) {
        tsr_value_free(*out);
        *out = NULL;
    }
    if (st) {
        char what[512];
        snprintf(what, sizeof what, "making input '%s'", info->name);
        cli_report_status(what, st);
        return false;
    }
    return true;
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
    tsr_value **in_values = NULL, **out_values = NULL;
    const tsr_tensor **in_tensors = NULL;
    tsr_tensor *in_views = NULL;
    const char **in_names = NULL;
    size_t nin = 0, nout = 0;
    tsr_status *st;
    rc = CLI_EXIT_FAIL;

    if ((st = cli_make_session_options(&a.common, &opts))) {
        cli_report_status("session options", st);
        goto done;
    }
    if ((st = tsr_session_create(opts, a.model, &s))) {
        char what[1100];
        snprintf(what, sizeof what, "loading %s", a.model);
        cli_report_status(what, st);
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

    nin = tsr_session_input_count(s);
    nout = tsr_session_output_count(s);
    in_values = calloc(nin + 1, sizeof *in_values);
    in_tensors = calloc(nin + 1, sizeof *in_tensors);
    in_views = calloc(nin + 1, sizeof *in_views);
    in_names = calloc(nin + 1, sizeof *in_names);
    out_values = calloc(nout + 1, sizeof *out_values);
    if (!in_values || !in_tensors || !in_views || !in_names || !out_values) goto done;

    /* Given inputs first, matched by name, so a typo is caught before any
     * made-up data hides it. */
    for (size_t g = 0; g < a.input_count; g++) {
        tsr_value *v = NULL;
        char *stored = NULL;
        if (!load_pb(a.inputs[g].file, &v, &stored)) goto done;
        const char *want = a.inputs[g].name ? a.inputs[g].name : stored;
        size_t k = nin;
        for (size_t i = 0; want && i < nin; i++) {
            tsr_io_info info = {.struct_size = sizeof info};
            if (!tsr_session_input_info(s, i, &info) && strcmp(info.name, want) == 0) k = i;
        }
        if (k == nin) {
            fprintf(stderr, "tessera: %s: the model has no input named '%s'\n", a.inputs[g].file,
                    want && *want ? want : "(no name in file; use -i NAME=FILE.pb)");
            tsr_value_free(v);
            free(stored);
            goto done;
        }
        free(stored);
        if (in_values[k]) {
            fprintf(stderr, "tessera: input '%s' given twice\n", want);
            tsr_value_free(v);
            goto done;
        }
        in_values[k] = v;
    }
    for (size_t i = 0; i < nin; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_input_info(s, i, &info))) {
            cli_report_status("input info", st);
            goto done;
        }
        in_names[i] = info.name;
        if (!in_values[i] && !make_input(&a, &info, i, &in_values[i])) goto done;
        in_views[i].struct_size = sizeof in_views[i];
        if ((st = tsr_value_tensor(in_values[i], &in_views[i]))) {
            cli_report_status("input tensor", st);
            goto done;
        }
        in_tensors[i] = &in_views[i];
        print_io("input", &info, &in_views[i]);
    }

    if ((st = tsr_session_run(s, nin, in_names, in_tensors, nout, NULL, out_values))) {
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
    for (size_t i = 0; in_values && i < nin; i++) tsr_value_free(in_values[i]);
    for (size_t j = 0; out_values && j < nout; j++) tsr_value_free(out_values[j]);
    free(in_values);
    free(in_tensors);
    free(in_views);
    free(in_names);
    free(out_values);
    tsr_session_free(s);
    tsr_session_options_free(opts);
    free_args(&a);
    return rc;
}
