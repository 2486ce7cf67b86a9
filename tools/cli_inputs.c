/*
 * The inputs `tessera run` and `tessera bench` feed a session: TensorProto
 * files (-i), a test-case folder's test_data_set_0 (--case, or MODEL given
 * as the folder), constants (--fill), and made-up values for the rest.
 *
 * Given inputs are checked against the model's declared type and shape
 * before anything runs, so a wrong file is named with what the model wants
 * rather than surfacing as a kernel's error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"

#define CASE_MAX_INPUTS 100000

/* --- arguments ------------------------------------------------------------ */
static bool add_spec(cli_inputs_args *a, char *name, char *file, double fill) {
    cli_input_spec *grown = realloc(a->specs, (a->spec_count + 1) * sizeof *grown);
    if (!grown) {
        free(name);
        free(file);
        return false;
    }
    a->specs = grown;
    a->specs[a->spec_count++] = (cli_input_spec){name, file, fill};
    return true;
}

int cli_inputs_parse(cli_inputs_args *a, const char *cmd, int argc, char **argv, int *i) {
    bool bad = false;
    const char *v;
    if ((v = cli_option_value(argc, argv, i, "-i", "--input", &bad))) {
        /* NAME=FILE splits at the first '=' (file names with '=' are rarer
         * than ONNX input names with ':' or '.'); a name that itself holds
         * '=' can still be fed by `-i FILE`, which uses the name stored in
         * the TensorProto. */
        const char *eq = strchr(v, '=');
        if (eq && (eq == v || !eq[1])) {
            cli_usage_error(cmd, "-i wants NAME=FILE.pb or FILE.pb, not '%s'", v);
            return -1;
        }
        char *name = eq ? strndup(v, (size_t)(eq - v)) : NULL;
        char *file = strdup(eq ? eq + 1 : v);
        if ((eq && !name) || !file || !add_spec(a, name, file, 0)) {
            fprintf(stderr, "tessera %s: out of memory\n", cmd);
            return -1;
        }
        return 1;
    }
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--fill", &bad))) {
        const char *eq = strrchr(v, '=');
        double x;
        if (!eq || eq == v || !cli_parse_double(eq + 1, &x)) {
            cli_usage_error(cmd, "--fill wants NAME=NUMBER, not '%s'", v);
            return -1;
        }
        char *name = strndup(v, (size_t)(eq - v));
        if (!name || !add_spec(a, name, NULL, x)) {
            fprintf(stderr, "tessera %s: out of memory\n", cmd);
            return -1;
        }
        return 1;
    }
    if (bad) return -1;
    if ((v = cli_option_value(argc, argv, i, NULL, "--case", &bad))) {
        free(a->case_dir);
        if (!(a->case_dir = strdup(v))) return -1;
        return 1;
    }
    return bad ? -1 : 0;
}

static char *join(const char *dir, const char *file) {
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, file);
    return p;
}

static bool is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int cli_inputs_resolve_model(cli_inputs_args *a, const char *cmd, const char *model) {
    if (model && is_dir(model)) {
        char *m = join(model, "model.onnx");
        struct stat sb;
        if (!m || stat(m, &sb) != 0) {
            free(m);
            return cli_usage_error(cmd, "'%s' is a folder without a model.onnx (a test case holds one)", model);
        }
        a->model = m;
        if (!a->case_dir && !(a->case_dir = strdup(model))) return CLI_EXIT_USAGE;
        return 0;
    }
    if (model) return (a->model = strdup(model)) ? 0 : CLI_EXIT_USAGE;
    if (!a->case_dir) return cli_usage_error(cmd, "which model? (tessera %s MODEL, or a test-case folder)", cmd);
    if (!(a->model = join(a->case_dir, "model.onnx"))) return CLI_EXIT_USAGE;
    return 0;
}

void cli_inputs_free(cli_inputs_args *a) {
    for (size_t i = 0; i < a->spec_count; i++) {
        free(a->specs[i].name);
        free(a->specs[i].file);
    }
    free(a->specs);
    free(a->case_dir);
    free(a->model);
    memset(a, 0, sizeof *a);
}

void cli_print_inputs_help(FILE *f) {
    fprintf(f,
            "  -i, --input NAME=FILE.pb\n"
            "                         feed input NAME from a serialized TensorProto\n"
            "                         (repeatable; `-i FILE.pb` uses the name inside the file)\n"
            "  --fill NAME=VALUE      feed input NAME filled with the constant VALUE (any\n"
            "                         numeric or bool type; shape from the model and --dim),\n"
            "                         e.g. a sample rate or a flag (repeatable)\n"
            "  --case DIR             feed the inputs of the test case DIR:\n"
            "                         DIR/test_data_set_0/input_N.pb, each matched to the\n"
            "                         input its TensorProto names, else the N-th input.\n"
            "                         MODEL may be omitted (DIR/model.onnx) or be a case\n"
            "                         folder itself. -i and --fill override single inputs\n"
            "  Inputs not given are made up from a fixed seed: floats uniform in [-1,1);\n"
            "  integers that index an axis (Gather/Scatter input 1) in [0,n), 1 for names\n"
            "  holding 'mask', else 1..4; bools alternating (all true for a mask); symbolic\n"
            "  dimensions from --dim, else 1 (with a note on stderr).\n");
}

/* --- loading and checking -------------------------------------------------- */
static bool load_pb(const char *cmd, const char *file, tsr_value **out, char **name) {
    void *bytes;
    size_t size;
    if (!tio_read_file(file, &bytes, &size)) {
        fprintf(stderr, "tessera %s: cannot read %s: %s\n", cmd, file, tio_file_error(errno));
        return false;
    }
    tsr_status *st = tsr_value_from_onnx_tensor(bytes, size, out, name);
    free(bytes);
    if (st) {
        fprintf(stderr, "tessera %s: %s is not a readable TensorProto: %s\n", cmd, file, tsr_status_message(st));
        tsr_status_free(st);
        return false;
    }
    return true;
}

/* The value must have the model's element type and rank, and its size on
 * every dimension the model fixes. */
static bool check_given(const char *cmd, const tsr_io_info *info, const char *file, const tsr_value *v) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(v, &t);
    if (st) {
        fprintf(stderr, "tessera %s: %s: %s\n", cmd, file, tsr_status_message(st));
        tsr_status_free(st);
        return false;
    }
    if (info->elem_type != TSR_UNDEFINED && t.elem_type != info->elem_type) {
        fprintf(stderr, "tessera %s: %s: input '%s' is %s in the model, the file holds %s\n", cmd, file, info->name,
                tsr_elem_type_name(info->elem_type), tsr_elem_type_name(t.elem_type));
        return false;
    }
    bool fits = info->rank < 0 || info->rank == t.rank;
    for (int32_t k = 0; fits && info->rank >= 0 && k < info->rank; k++)
        if (info->dims[k] >= 0 && info->dims[k] != t.dims[k]) fits = false;
    if (!fits) {
        char want[512], got[512];
        tio_format_shape(want, sizeof want, info->rank, info->dims);
        tio_format_shape(got, sizeof got, t.rank, t.dims);
        fprintf(stderr, "tessera %s: %s: input '%s' has shape %s in the model%s, the file holds %s\n", cmd, file,
                info->name, want, strchr(want, '?') ? " ('?': any size)" : "", got);
        return false;
    }
    return true;
}

static size_t find_input(const tsr_io_info *infos, size_t n, const char *name) {
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(infos[i].name, name) == 0) return i;
    return n;
}

/* An -i file: placed at the input it names. */
static bool place_file(const char *cmd, const cli_input_spec *g, const tsr_io_info *infos, cli_feed *f) {
    tsr_value *v = NULL;
    char *stored = NULL;
    if (!load_pb(cmd, g->file, &v, &stored)) return false;
    const char *want = g->name ? g->name : stored;
    size_t k = find_input(infos, f->count, want);
    bool ok = false;
    if (k == f->count)
        fprintf(stderr, "tessera %s: %s: the model has no input named '%s'\n", cmd, g->file,
                want && *want ? want : "(no name in the file; use -i NAME=FILE.pb)");
    else if (f->values[k]) fprintf(stderr, "tessera %s: input '%s' given twice\n", cmd, want);
    else ok = check_given(cmd, &infos[k], g->file, v);
    free(stored);
    if (ok) f->values[k] = v;
    else tsr_value_free(v);
    return ok;
}

/* --- made-up and constant inputs ------------------------------------------- */
static int64_t choose_dim(const char *cmd, const cli_common *c, const tsr_io_info *info, int32_t k) {
    const char *sym = info->dim_symbols ? info->dim_symbols[k] : NULL;
    if (sym) {
        for (size_t i = 0; i < c->dim_count; i++)
            if (strcmp(c->dims[i].symbol, sym) == 0) return c->dims[i].value;
        fprintf(stderr, "tessera %s: note: input '%s': dimension %d ('%s') set to 1 (use --dim %s=N)\n", cmd,
                info->name, (int)k, sym, sym);
    } else {
        fprintf(stderr, "tessera %s: note: input '%s': dimension %d is unnamed and unknown; set to 1\n", cmd,
                info->name, (int)k);
    }
    return 1;
}

/* A zeroed tensor of the model's type and shape (--dim applied). */
static bool create_input(const char *cmd, const cli_common *c, const tsr_io_info *info, const char *how,
                         tsr_value **out) {
    if (info->elem_type == TSR_UNDEFINED) {
        fprintf(stderr, "tessera %s: input '%s' is not a tensor (or its type is unknown); give it with -i %s=FILE.pb\n",
                cmd, info->name, info->name);
        return false;
    }
    int32_t rank = info->rank;
    if (rank < 0) {
        fprintf(stderr, "tessera %s: note: input '%s' has an unknown rank; using a scalar\n", cmd, info->name);
        rank = 0;
    }
    int64_t *dims = calloc((size_t)rank + 1, sizeof *dims);
    if (!dims) return false;
    for (int32_t k = 0; k < rank; k++) dims[k] = info->dims[k] >= 0 ? info->dims[k] : choose_dim(cmd, c, info, k);
    tsr_status *st = tsr_value_create_tensor(info->elem_type, rank, dims, out);
    free(dims);
    if (st) {
        fprintf(stderr, "tessera %s: %s input '%s': %s\n", cmd, how, info->name, tsr_status_message(st));
        tsr_status_free(st);
        return false;
    }
    return true;
}

static bool place_fill(const char *cmd, const cli_common *c, const cli_input_spec *g, const tsr_io_info *infos,
                       cli_feed *f) {
    size_t k = find_input(infos, f->count, g->name);
    if (k == f->count) {
        fprintf(stderr, "tessera %s: --fill %s=%g: the model has no input named '%s'\n", cmd, g->name, g->fill,
                g->name);
        return false;
    }
    if (f->values[k]) {
        fprintf(stderr, "tessera %s: input '%s' given twice\n", cmd, g->name);
        return false;
    }
    if (!create_input(cmd, c, &infos[k], "making", &f->values[k])) return false;
    char why[256];
    if (!tio_fill_constant(f->values[k], g->fill, why, sizeof why)) {
        fprintf(stderr, "tessera %s: --fill %s=%g: %s\n", cmd, g->name, g->fill, why);
        return false;
    }
    return true;
}

/* --- a test case's inputs --------------------------------------------------- */
/* DIR/test_data_set_0/input_K.pb, K = 0, 1, ...: matched by the name inside
 * the file when it names an input, else by position. Inputs already given
 * (-i, --fill) keep their value. */
static bool place_case(const char *cmd, const char *dir, const tsr_io_info *infos, cli_feed *f, bool *given) {
    char *set = join(dir, "test_data_set_0");
    if (!set) return false;
    size_t k = 0;
    bool ok = true;
    for (; ok && k < CASE_MAX_INPUTS; k++) {
        char leaf[64];
        snprintf(leaf, sizeof leaf, "input_%zu.pb", k);
        char *file = join(set, leaf);
        struct stat sb;
        if (!file || stat(file, &sb) != 0) {
            free(file);
            break;
        }
        tsr_value *v = NULL;
        char *stored = NULL;
        ok = load_pb(cmd, file, &v, &stored);
        size_t at = ok ? find_input(infos, f->count, stored) : f->count;
        if (ok && at == f->count) at = k; /* not a name the model has: by position */
        if (ok && at >= f->count) {
            fprintf(stderr, "tessera %s: %s: the model has no input named '%s' and only %zu input(s)\n", cmd, file,
                    stored ? stored : "", f->count);
            ok = false;
        } else if (ok && given[at]) {
            tsr_value_free(v); /* -i or --fill wins */
            v = NULL;
        } else if (ok && f->values[at]) {
            fprintf(stderr, "tessera %s: %s: input '%s' has a value from another file of the case\n", cmd, file,
                    infos[at].name);
            ok = false;
        } else if (ok && (ok = check_given(cmd, &infos[at], file, v))) {
            f->values[at] = v;
            v = NULL;
        }
        tsr_value_free(v);
        free(stored);
        free(file);
    }
    if (ok && k == 0 && f->count > 0) {
        fprintf(stderr, "tessera %s: %s: no input_0.pb (is %s a test case?)\n", cmd, set, dir);
        ok = false;
    }
    free(set);
    return ok;
}

/* --- the feed --------------------------------------------------------------- */
static bool is_int_type(int32_t t) {
    return t != TSR_BOOL && (tio_is_signed_int_type(t) || tio_is_unsigned_int_type(t));
}

bool cli_feed_make(tsr_session *s, const cli_inputs_args *a, const cli_common *c, uint64_t seed, const char *cmd,
                   cli_feed *f) {
    memset(f, 0, sizeof *f);
    size_t n = tsr_session_input_count(s);
    f->count = n;
    f->names = calloc(n + 1, sizeof *f->names);
    f->values = calloc(n + 1, sizeof *f->values);
    f->views = calloc(n + 1, sizeof *f->views);
    f->tensors = calloc(n + 1, sizeof *f->tensors);
    tsr_io_info *infos = calloc(n + 1, sizeof *infos);
    bool *given = calloc(n + 1, sizeof *given);
    int64_t *bounds = calloc(n + 1, sizeof *bounds);
    bool ok = f->names && f->values && f->views && f->tensors && infos && given && bounds;
    if (!ok) fprintf(stderr, "tessera %s: out of memory\n", cmd);
    for (size_t i = 0; ok && i < n; i++) {
        infos[i].struct_size = sizeof infos[i];
        tsr_status *st = tsr_session_input_info(s, i, &infos[i]);
        if (st) {
            cli_report_status("input info", st);
            ok = false;
        } else if (!(f->names[i] = strdup(infos[i].name))) {
            ok = false;
        }
    }
    /* Given inputs first, so a typo is caught before made-up data hides it. */
    for (size_t g = 0; ok && g < a->spec_count; g++)
        ok = a->specs[g].file ? place_file(cmd, &a->specs[g], infos, f) : place_fill(cmd, c, &a->specs[g], infos, f);
    for (size_t i = 0; ok && i < n; i++) given[i] = f->values[i] != NULL;
    if (ok && a->case_dir) ok = place_case(cmd, a->case_dir, infos, f, given);
    bool need_bounds = false;
    for (size_t i = 0; ok && i < n; i++) need_bounds |= !f->values[i] && is_int_type(infos[i].elem_type);
    if (ok && need_bounds && a->model && !ms_index_bounds(a->model, n, f->names, bounds))
        fprintf(stderr, "tessera %s: note: could not read %s's nodes; made-up integers are 1..4\n", cmd, a->model);
    for (size_t i = 0; ok && i < n; i++) {
        if (f->values[i]) continue;
        tio_int_hint hint = {.index_bound = need_bounds ? bounds[i] : -1,
                             .mask = strcasestr(infos[i].name, "mask") != NULL};
        ok = create_input(cmd, c, &infos[i], "making", &f->values[i]);
        tsr_status *st = ok ? tio_fill_generated(f->values[i], seed + i, hint) : NULL;
        if (st) {
            fprintf(stderr, "tessera %s: making input '%s': %s\n", cmd, infos[i].name, tsr_status_message(st));
            tsr_status_free(st);
            ok = false;
        }
    }
    for (size_t i = 0; ok && i < n; i++) {
        f->views[i].struct_size = sizeof f->views[i];
        tsr_status *st = tsr_value_tensor(f->values[i], &f->views[i]);
        if (st) {
            cli_report_status("input tensor", st);
            ok = false;
        }
        f->tensors[i] = &f->views[i];
    }
    free(infos);
    free(given);
    free(bounds);
    return ok;
}

void cli_feed_free(cli_feed *f) {
    for (size_t i = 0; f->values && i < f->count; i++) tsr_value_free(f->values[i]);
    for (size_t i = 0; f->names && i < f->count; i++) free((void *)f->names[i]);
    free(f->values);
    free(f->names);
    free(f->views);
    free(f->tensors);
    memset(f, 0, sizeof *f);
}
