/*
 * ONNX backend test cases (CASE/model.onnx plus
 * CASE/test_data_set_K/{input,output}_N.pb): finding them, reading a data
 * set, and running one against a session with the tolerance rule of
 * compare.c. Shared by `tessera test` and `tessera check-provider`, so a
 * case means the same thing to both.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* --- finding cases ------------------------------------------------------- */
bool tc_is_dir(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static bool is_file(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

char *tc_join(const char *a, const char *b) {
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

bool tc_is_case(const char *dir) {
    char *m = tc_join(dir, "model.onnx");
    bool yes = m && is_file(m);
    free(m);
    return yes;
}

static bool add_case(tc_list *l, const char *dir, tc_filter want, void *user) {
    char *d = strdup(dir);
    if (!d) return false;
    /* The name is the folder's last component, without trailing slashes. */
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/') d[--n] = '\0';
    const char *slash = strrchr(d, '/');
    const char *base = slash ? slash + 1 : d;
    if (want && !want(base, user)) {
        free(d);
        return true;
    }
    tc_case *grown = realloc(l->items, (l->count + 1) * sizeof *grown);
    if (!grown) {
        free(d);
        return false;
    }
    l->items = grown;
    char *name = strdup(base);
    if (!name) {
        free(d);
        return false;
    }
    l->items[l->count].name = name;
    l->items[l->count++].dir = d;
    return true;
}

static int only_dirs(const struct dirent *e) { return e->d_name[0] != '.'; }

int tc_collect(tc_list *l, const char *cmd, const char *path, tc_filter want, void *user) {
    struct stat sb;
    if (stat(path, &sb) != 0) return cli_usage_error(cmd, "'%s': %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) {
        /* CASE/model.onnx names its case; other files come from globs
         * (a README beside the case folders) and are passed over. */
        const char *slash = strrchr(path, '/');
        if (strcmp(slash ? slash + 1 : path, "model.onnx") == 0) {
            char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
            bool ok = dir && add_case(l, dir, want, user);
            free(dir);
            return ok ? 0 : CLI_EXIT_FAIL;
        }
        fprintf(stderr, "tessera %s: note: '%s' is not a test case folder\n", cmd, path);
        return 0;
    }
    if (tc_is_case(path)) return add_case(l, path, want, user) ? 0 : CLI_EXIT_FAIL;
    struct dirent **list;
    int n = scandir(path, &list, only_dirs, alphasort);
    if (n < 0) {
        fprintf(stderr, "tessera %s: cannot list %s: %s\n", cmd, path, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    int found = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        char *sub = tc_join(path, list[i]->d_name);
        if (sub && tc_is_dir(sub) && tc_is_case(sub)) {
            found++;
            if (!rc && !add_case(l, sub, want, user)) rc = CLI_EXIT_FAIL;
        }
        free(sub);
        free(list[i]);
    }
    free(list);
    /* Only a note: `tessera test suite/` + `*` may sweep up a folder of other
     * files (onnx-tests/onnxruntime-1.30), and that should not stop the run.
     * No case at all is the caller's to judge. */
    if (!rc && !found) fprintf(stderr, "tessera %s: note: '%s' holds no model.onnx and no case folders\n", cmd, path);
    return rc;
}

void tc_list_free(tc_list *l) {
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].name);
        free(l->items[i].dir);
    }
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

/* --- one data set -------------------------------------------------------- */
static int data_set_filter(const struct dirent *e) { return strncmp(e->d_name, "test_data_set_", 14) == 0; }

/* Number of consecutive PREFIX_0.pb, PREFIX_1.pb, ... in dir. */
static size_t count_pbs(const char *dir, const char *prefix) {
    size_t n = 0;
    for (;;) {
        char file[64];
        snprintf(file, sizeof file, "%s_%zu.pb", prefix, n);
        char *p = tc_join(dir, file);
        bool yes = p && is_file(p);
        free(p);
        if (!yes) return n;
        n++;
    }
}

/*
 * Loads dir/PREFIX_k.pb. A file the tool cannot read as a tensor — the
 * library says "not supported" (a SequenceProto, an OptionalProto) or the
 * model declares that value as a non-tensor — is a SKIP: the test is fine,
 * this tool just cannot feed or check it. Any other failure is the
 * library's, so a FAIL.
 */
static tc_kind load_pb(const char *dir, const char *prefix, size_t k, int32_t declared_type, int32_t kind,
                       tsr_value **out, char **name, char *reason, size_t size) {
    char file[64];
    snprintf(file, sizeof file, "%s_%zu.pb", prefix, k);
    char *path = tc_join(dir, file);
    void *bytes = NULL;
    size_t n = 0;
    if (!path || !tio_read_file(path, &bytes, &n)) {
        snprintf(reason, size, "cannot read %s: %s", file, tio_file_error(errno));
        free(path);
        return TC_FAIL;
    }
    free(path);
    tsr_status *st = tsr_value_from_onnx(bytes, n, kind, out, name);
    free(bytes);
    if (!st) return TC_PASS;
    tc_kind r =
        tsr_status_code(st) == TSR_ERR_NOT_SUPPORTED || (declared_type == TSR_UNDEFINED && kind == TSR_VALUE_NONE)
        ? TC_SKIP
        : TC_FAIL;
    snprintf(reason, size, "%s is not a readable value: %s", file, tsr_status_message(st));
    tsr_status_free(st);
    return r;
}

void tc_data_free(tc_data *d) {
    for (size_t i = 0; d->inputs && i < d->nin; i++) tsr_value_free(d->inputs[i]);
    for (size_t i = 0; d->expected && i < d->nexp; i++) tsr_value_free(d->expected[i]);
    free(d->inputs);
    free(d->expected);
    free(d->names);
    memset(d, 0, sizeof *d);
}

tc_kind tc_load_data_set(tsr_session *s, const char *dir, tc_data *d, char *reason, size_t size) {
    size_t model_in = tsr_session_input_count(s), model_out = tsr_session_output_count(s);
    tsr_status *st;
    memset(d, 0, sizeof *d);
    d->nin = count_pbs(dir, "input");
    d->nexp = count_pbs(dir, "output");
    if (d->nin > model_in) {
        snprintf(reason, size, "%zu input files, but the model has %zu inputs", d->nin, model_in);
        return TC_FAIL;
    }
    if (d->nexp > model_out) {
        snprintf(reason, size, "%zu output files, but the model has %zu outputs", d->nexp, model_out);
        return TC_FAIL;
    }
    d->inputs = calloc(d->nin + 1, sizeof *d->inputs);
    d->expected = calloc(d->nexp + 1, sizeof *d->expected);
    d->names = calloc(d->nin + 1, sizeof *d->names);
    if (!d->inputs || !d->expected || !d->names) {
        snprintf(reason, size, "out of memory");
        tc_data_free(d);
        return TC_FAIL;
    }
    tc_kind r = TC_PASS;
    for (size_t k = 0; k < d->nin && r == TC_PASS; k++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_input_info(s, k, &info))) {
            snprintf(reason, size, "input info %zu: %s", k, tsr_status_message(st));
            tsr_status_free(st);
            r = TC_FAIL;
            break;
        }
        char *stored = NULL;
        r = load_pb(dir, "input", k, info.elem_type, info.kind, &d->inputs[k], &stored, reason, size);
        /* Files are matched by position; the stored name only cross-checks
         * that the library lists inputs in graph order. */
        if (r == TC_PASS && stored && *stored && strcmp(stored, info.name) != 0)
            fprintf(stderr, "note: input_%zu.pb is named '%s' but model input %zu is '%s'\n", k, stored, k, info.name);
        free(stored);
        d->names[k] = info.name;
    }
    for (size_t k = 0; k < d->nexp && r == TC_PASS; k++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if ((st = tsr_session_output_info(s, k, &info))) {
            snprintf(reason, size, "output info %zu: %s", k, tsr_status_message(st));
            tsr_status_free(st);
            r = TC_FAIL;
            break;
        }
        r = load_pb(dir, "output", k, info.elem_type, info.kind, &d->expected[k], NULL, reason, size);
    }
    if (r != TC_PASS) tc_data_free(d);
    return r;
}

tc_kind tc_check_outputs(tsr_session *s, const tc_data *d, tsr_value *const *outputs, cmp_tolerance tol, char *reason,
                         size_t size) {
    for (size_t k = 0; k < d->nexp; k++) {
        tsr_io_info info = {.struct_size = sizeof info};
        const char *oname = "?";
        tsr_status *st = tsr_session_output_info(s, k, &info);
        if (!st) oname = info.name;
        tsr_status_free(st);
        if (!outputs[k]) {
            snprintf(reason, size, "output %zu '%s': no value returned", k, oname);
            return TC_FAIL;
        }
        char why[TC_REASON_MAX - 256];
        if (!cmp_values(outputs[k], d->expected[k], tol, why, sizeof why)) {
            snprintf(reason, size, "output %zu '%s': %s", k, oname, why);
            return TC_FAIL;
        }
    }
    return TC_PASS;
}

tc_kind tc_run_data(tsr_session *s, const tc_data *d, cmp_tolerance tol, char *reason, size_t size) {
    size_t nout = tsr_session_output_count(s);
    tsr_value **outputs = calloc(nout + 1, sizeof *outputs);
    if (!outputs) {
        snprintf(reason, size, "out of memory");
        return TC_FAIL;
    }
    tc_kind r = TC_FAIL;
    tsr_status *st =
        tsr_session_run_values(s, d->nin, d->names, (const tsr_value *const *)d->inputs, nout, NULL, outputs);
    if (st) {
        snprintf(reason, size, "run: %s", tsr_status_message(st));
        tsr_status_free(st);
    } else {
        r = tc_check_outputs(s, d, outputs, tol, reason, size);
    }
    for (size_t k = 0; k < nout; k++) tsr_value_free(outputs[k]);
    free(outputs);
    return r;
}

int tc_data_sets(const char *case_dir, char ***names) {
    struct dirent **sets = NULL;
    int n = scandir(case_dir, &sets, data_set_filter, alphasort);
    if (n <= 0) {
        *names = NULL;
        return 0;
    }
    char **out = calloc((size_t)n + 1, sizeof *out);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (out && (out[k] = tc_join(case_dir, sets[i]->d_name))) k++;
        free(sets[i]);
    }
    free(sets);
    *names = out;
    return out ? k : -1;
}

void tc_free_names(char **names) {
    for (size_t i = 0; names && names[i]; i++) free(names[i]);
    free(names);
}

tc_kind tc_run_case(tsr_session *s, const char *case_dir, cmp_tolerance tol, char *reason, size_t size) {
    char **sets;
    int nsets = tc_data_sets(case_dir, &sets);
    reason[0] = '\0';
    if (nsets <= 0) {
        snprintf(reason, size, nsets < 0 ? "out of memory" : "no test_data_set_* folders");
        tc_free_names(sets);
        return nsets < 0 ? TC_FAIL : TC_SKIP;
    }
    tc_kind r = TC_FAIL;
    for (int i = 0; i < nsets; i++) {
        char why[TC_REASON_MAX - 64];
        tc_data d;
        r = tc_load_data_set(s, sets[i], &d, why, sizeof why);
        if (r == TC_PASS) {
            r = tc_run_data(s, &d, tol, why, sizeof why);
            tc_data_free(&d);
        }
        if (r != TC_PASS) {
            /* Name the data set only when there is a choice of them. A long
             * reason is cut: the line is for people, the start says enough. */
            const char *slash = strrchr(sets[i], '/');
            if (nsets > 1) cli_format(reason, size, "%s: %s", slash ? slash + 1 : sets[i], why);
            else cli_format(reason, size, "%s", why);
            break;
        }
    }
    tc_free_names(sets);
    return r;
}
