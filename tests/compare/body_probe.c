/* Reads values inside control-flow bodies through the public API, for the
 * `compare` ctest: a session made with observe_all, run once on the given
 * inputs, asked for each VALUE by path ("loop0/body/if0/then_branch/m"),
 * which comes back as sequences nested one level per enclosing body
 * (tessera.h, "Values inside control-flow bodies"). Prints them as one JSON
 * object, sequences as lists and tensors as {"dims", "data"}, for numpy to
 * check; a failed run prints {"error": MESSAGE} and exits 1.
 *
 * usage: body_probe MODEL NAME=FILE.pb... -- VALUE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return p;
}

static void print_value(const tsr_value *v) {
    if (tsr_value_get_kind(v) == TSR_VALUE_SEQUENCE) {
        printf("[");
        for (size_t i = 0; i < tsr_value_count(v); i++) {
            if (i) printf(", ");
            print_value(tsr_value_item(v, i));
        }
        printf("]");
        return;
    }
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(v, &t);
    if (st) {
        tsr_status_free(st);
        printf("null");
        return;
    }
    size_t n = 1;
    printf("{\"dims\": [");
    for (int32_t d = 0; d < t.rank; d++) {
        printf("%s%lld", d ? ", " : "", (long long)t.dims[d]);
        n *= (size_t)t.dims[d];
    }
    printf("], \"data\": [");
    for (size_t i = 0; i < n; i++) {
        if (i) printf(", ");
        if (t.elem_type == TSR_FLOAT) printf("%.9g", (double)((const float *)t.data)[i]);
        else if (t.elem_type == TSR_INT64) printf("%lld", (long long)((const int64_t *)t.data)[i]);
        else if (t.elem_type == TSR_BOOL) printf("%s", ((const uint8_t *)t.data)[i] ? "true" : "false");
        else printf("null");
    }
    printf("]}");
}

int main(int argc, char **argv) {
    int sep = 2;
    while (sep < argc && strcmp(argv[sep], "--") != 0) sep++;
    if (argc < 2 || sep >= argc) {
        fprintf(stderr, "usage: body_probe MODEL NAME=FILE.pb... -- VALUE...\n");
        return 2;
    }
    size_t n_in = (size_t)(sep - 2), n_out = (size_t)(argc - sep - 1);
    const char **in_names = calloc(n_in + 1, sizeof *in_names);
    tsr_value **in_values = calloc(n_in + 1, sizeof *in_values);
    tsr_tensor *views = calloc(n_in + 1, sizeof *views);
    const tsr_tensor **ins = calloc(n_in + 1, sizeof *ins);
    tsr_value **outs = calloc(n_out + 1, sizeof *outs);
    if (!in_names || !in_values || !views || !ins || !outs) return 1;
    tsr_status *st = NULL;
    for (size_t i = 0; i < n_in && !st; i++) {
        char *arg = argv[2 + i], *eq = strchr(arg, '=');
        size_t size = 0;
        void *bytes = eq ? read_file(eq + 1, &size) : NULL;
        if (!bytes) {
            fprintf(stderr, "body_probe: cannot read input '%s'\n", arg);
            return 1;
        }
        *eq = 0;
        in_names[i] = arg;
        st = tsr_value_from_onnx_tensor(bytes, size, &in_values[i], NULL);
        free(bytes);
        views[i].struct_size = sizeof views[i];
        if (!st) st = tsr_value_tensor(in_values[i], &views[i]);
        ins[i] = &views[i];
    }
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    if (!st) st = tsr_session_options_create(&o);
    if (!st) st = tsr_session_options_add_provider(o, "reference");
    if (!st) st = tsr_session_options_set_observe_all(o, 1);
    if (!st) st = tsr_session_create(o, argv[1], &s);
    if (!st) st = tsr_session_run(s, n_in, in_names, ins, n_out, (const char *const *)argv + sep + 1, outs);
    int rc = 0;
    if (st) {
        printf("{\"error\": \"");
        for (const char *p = tsr_status_message(st); *p; p++) printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        printf("\"}\n");
        rc = 1;
    } else {
        printf("{");
        for (size_t j = 0; j < n_out; j++) {
            printf("%s\"%s\": ", j ? ", " : "", argv[sep + 1 + (int)j]);
            print_value(outs[j]);
        }
        printf("}\n");
    }
    tsr_status_free(st);
    for (size_t j = 0; j < n_out; j++) tsr_value_free(outs[j]);
    for (size_t i = 0; i < n_in; i++) tsr_value_free(in_values[i]);
    tsr_session_free(s);
    tsr_session_options_free(o);
    free(in_names);
    free(in_values);
    free(views);
    free(ins);
    free(outs);
    return rc;
}
