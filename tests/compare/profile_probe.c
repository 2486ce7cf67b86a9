/* profile_probe MODEL TRACE.json [PROVIDER...]: runs MODEL twice on zeroed
 * inputs with profiling on, then hands the session to profile_report.c as
 * `tessera bench --profile` does, so the trace file and the summary can be
 * tested without the bench command. Inputs must have static shapes. */
#include <stdio.h>
#include <stdlib.h>

#include "profile_report.h"

#define PROBE_RUNS 2

static int fail(const char *what, tsr_status *st) {
    fprintf(stderr, "profile_probe: %s: %s\n", what, tsr_status_message(st));
    tsr_status_free(st);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: profile_probe MODEL TRACE.json [PROVIDER...]\n");
        return 2;
    }
    tsr_session_options *o;
    tsr_status *st = tsr_session_options_create(&o);
    if (st) return fail("options", st);
    for (int i = 3; !st && i < argc; i++) st = tsr_session_options_add_provider(o, argv[i]);
    if (!st) st = tsr_session_options_set_profiling(o, 1);
    tsr_session *s = NULL;
    if (!st) st = tsr_session_create(o, argv[1], &s);
    tsr_session_options_free(o);
    if (st) return fail("session", st);

    size_t nin = tsr_session_input_count(s), nout = tsr_session_output_count(s);
    tsr_value **in = calloc(nin + 1, sizeof *in), **out = calloc(nout + 1, sizeof *out);
    tsr_tensor *views = calloc(nin + 1, sizeof *views);
    const tsr_tensor **tensors = calloc(nin + 1, sizeof *tensors);
    const char **names = calloc(nin + 1, sizeof *names);
    int rc = !in || !out || !views || !tensors || !names;
    for (size_t i = 0; !rc && i < nin; i++) {
        tsr_io_info info = {.struct_size = sizeof info};
        if (!(st = tsr_session_input_info(s, i, &info)))
            st = tsr_value_create_tensor(info.elem_type, info.rank, info.dims, &in[i]);
        views[i].struct_size = sizeof views[i];
        if (!st) st = tsr_value_tensor(in[i], &views[i]);
        if (st) rc = fail("input", st);
        names[i] = info.name;
        tensors[i] = &views[i];
    }
    for (int r = 0; !rc && r < PROBE_RUNS; r++) {
        if ((st = tsr_session_run(s, nin, names, tensors, nout, NULL, out))) rc = fail("run", st);
        for (size_t j = 0; j < nout; j++) {
            tsr_value_free(out[j]);
            out[j] = NULL;
        }
    }
    if (!rc && !profile_report_session(s, argv[2], stdout, PROBE_RUNS)) rc = 1;
    for (size_t i = 0; in && i < nin; i++) tsr_value_free(in[i]);
    free(in);
    free(out);
    free(views);
    free(tensors);
    free(names);
    tsr_session_free(s);
    return rc;
}
