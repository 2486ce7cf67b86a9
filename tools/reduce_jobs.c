/*
 * The work of `tessera reduce` that calls the library, each piece in a
 * forked child (fork_pool.c): a provider under suspicion may crash or hang,
 * and that must cost one verdict, not the reduction. The parent never calls
 * the library (no library thread or lock exists when it forks); children
 * hand values to each other through TensorProto files in the work folder.
 *
 *   capture: the baseline set on the whole model with every value
 *            observable; every graph input and node output it hands back is
 *            written as v_K.pb and listed in manifest.txt.
 *   try:     a cut on the baseline set (job 0: its outputs go to a_K.pb, and
 *            to the case folder when writing the result), then on the
 *            compared set (job 1), which checks its outputs against a_K.pb
 *            (difference mode) or only whether it runs (error mode).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_tool.h"

/* cmd_run.c's RUN_SEED: made-up inputs are those `tessera run` makes. */
#define RDC_SEED 0x7e55e7a5eedull

/* --- session options ---------------------------------------------------- */
/* The plugin name behind a path entry ("./x.so"), which --provider-option
 * uses; NULL when it cannot be loaded. */
static char *plugin_name(const char *path) {
    tsr_provider_list *list = NULL;
    tsr_status *st = tsr_providers_discover(&path, 1, &list);
    if (st) {
        tsr_status_free(st);
        return NULL;
    }
    char *name = NULL;
    for (size_t k = 0; k < tsr_provider_list_size(list) && !name; k++) {
        tsr_provider_desc d = {.struct_size = sizeof d};
        if (!tsr_provider_list_get(list, k, &d) && d.path && d.name && strcmp(d.path, path) == 0) name = strdup(d.name);
    }
    tsr_provider_list_free(list);
    return name;
}

static bool set_has(const rdc_set *s, const char *provider) {
    for (size_t i = 0; i < s->entry_count; i++) {
        if (strcmp(s->entries[i], provider) == 0) return true;
        if (!strchr(s->entries[i], '/')) continue;
        char *name = plugin_name(s->entries[i]);
        bool same = name && strcmp(name, provider) == 0;
        free(name);
        if (same) return true;
    }
    return false;
}

/* As `tessera compare` makes them: the shared options, the set's providers,
 * and the provider options of providers the set holds. */
static tsr_status *set_options(const rdc_config *cfg, const rdc_set *set, bool observe, tsr_session_options **out) {
    cli_common c = cfg->common;
    c.provider_option_count = 0;
    tsr_session_options *o = NULL;
    tsr_status *st = cli_make_session_options(&c, &o);
    if (st) return st;
    for (size_t i = 0; !st && i < set->entry_count; i++) st = tsr_session_options_add_provider(o, set->entries[i]);
    for (size_t i = 0; !st && i < cfg->common.provider_option_count; i++) {
        const cli_provider_option *po = &cfg->common.provider_options[i];
        if (set_has(set, po->provider))
            st = tsr_session_options_set_provider_option(o, po->provider, po->key, po->value);
    }
    if (!st && set->oracle) st = tsr_session_options_set_provider_option(o, "reference", "precision", "double");
    if (!st && observe) st = tsr_session_options_set_observe_all(o, 1);
    if (st) {
        tsr_session_options_free(o);
        return st;
    }
    *out = o;
    return NULL;
}

/* Copies the status's message into msg and frees it; returns `kind`. */
static char fail_with(tsr_status *st, const char *what, char kind, char *msg, size_t size) {
    cli_format(msg, size, "%s: %s", what, tsr_status_message(st));
    tsr_status_free(st);
    return kind;
}

static bool safe_name(const char *s) { return !strpbrk(s, "\t\n\r"); }

/* Writes `v` as a TensorProto called `name` to `path`. */
static bool save_value(const tsr_value *v, const char *name, const char *path) {
    void *bytes = NULL;
    size_t size = 0;
    tsr_status *st = tsr_value_to_onnx_tensor(v, name, &bytes, &size);
    if (st) {
        tsr_status_free(st);
        return false;
    }
    bool ok = tio_write_file(path, bytes, size);
    free(bytes);
    return ok;
}

static char *path_in(const char *dir, const char *fmt, size_t k) {
    char name[64];
    snprintf(name, sizeof name, fmt, k);
    return tc_join(dir, name);
}

/* --- capture --------------------------------------------------------------- */
typedef struct capture_ctx {
    const rdc_config *cfg;
    const rdc_graph *g;
    char kind;
    bool died;
    char text[FP_MESSAGE_MAX];
} capture_ctx;

static bool manifest_value(FILE *f, const char *dir, size_t k, const char *name, const tsr_value *v) {
    tsr_tensor t = {.struct_size = sizeof t};
    tsr_status *st = tsr_value_tensor(v, &t);
    if (st || !safe_name(name)) {
        tsr_status_free(st);
        return false; /* not a tensor: cuts that need it cannot be fed */
    }
    char *path = path_in(dir, "v_%zu.pb", k);
    bool ok = path && save_value(v, name, path);
    if (ok) {
        fprintf(f, "V\t%d\t%d\t", (int)t.elem_type, (int)t.rank);
        for (int32_t d = 0; d < t.rank; d++) fprintf(f, "%s%lld", d ? "," : "", (long long)t.dims[d]);
        fprintf(f, "%s\t%s\t%s\n", t.rank ? "" : "-", path, name);
    }
    free(path);
    return ok;
}

static char capture_job(size_t index, void *user, char *msg, size_t size) {
    (void)index;
    capture_ctx *cx = user;
    const rdc_config *cfg = cx->cfg;
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    tsr_status *st = set_options(cfg, &cfg->sets[0], true, &o);
    if (!st) st = tsr_session_create(o, cfg->model, &s);
    tsr_session_options_free(o);
    if (st) return fail_with(st, "loading the model on the baseline", 'E', msg, size);
    cli_feed in = {0};
    if (!cli_feed_make(s, &cfg->inputs, &cfg->common, RDC_SEED, "reduce", &in)) {
        snprintf(msg, size, "the model's inputs could not be made (see above)");
        tsr_session_free(s);
        return 'E';
    }
    /* Every node output of the file that this session makes. */
    rdc_map made = {0};
    size_t sn = tsr_session_node_count(s);
    for (size_t i = 0; i < sn; i++) {
        tsr_node_info info = {.struct_size = sizeof info};
        tsr_status *e = tsr_session_node_info(s, i, &info);
        if (e) {
            tsr_status_free(e);
            continue;
        }
        for (size_t k = 0; k < info.output_count; k++)
            if (*info.outputs[k]) rdc_map_put(&made, info.outputs[k], 0);
    }
    const char **names = NULL;
    size_t count = 0;
    rdc_map listed = {0};
    const cmpx_model *m = &cx->g->m;
    for (size_t i = 0; i < m->node_count; i++)
        for (size_t k = 0; k < m->nodes[i].output_count; k++) {
            const char *v = m->nodes[i].outputs[k];
            if (!*v || !rdc_map_get(&made, v, NULL) || rdc_map_get(&listed, v, NULL)) continue;
            const char **grown = realloc(names, (count + 1) * sizeof *grown);
            if (!grown || !rdc_map_put(&listed, v, count)) {
                free(grown ? grown : names);
                names = NULL;
                break;
            }
            names = grown;
            names[count++] = v;
        }
    rdc_map_free(&made);
    rdc_map_free(&listed);
    tsr_value **values = calloc(count + 1, sizeof *values);
    char kind = 'E';
    if (!values || (count && !names)) {
        snprintf(msg, size, "out of memory");
        goto done;
    }
    /* Nothing to fetch when every node was folded away (constants only). */
    st = count ? tsr_session_run(s, in.count, in.names, in.tensors, count, names, values) : NULL;
    if (st) {
        kind = fail_with(st, "running the model on the baseline", 'E', msg, size);
        goto done;
    }
    char *mpath = tc_join(cfg->work_dir, "manifest.txt");
    FILE *f = mpath ? fopen(mpath, "w") : NULL;
    free(mpath);
    if (!f) {
        snprintf(msg, size, "cannot write in %s: %s", cfg->work_dir, strerror(errno));
        goto done;
    }
    size_t saved = 0, k = 0;
    for (size_t i = 0; i < in.count; i++, k++) saved += manifest_value(f, cfg->work_dir, k, in.names[i], in.values[i]);
    for (size_t i = 0; i < count; i++, k++) saved += manifest_value(f, cfg->work_dir, k, names[i], values[i]);
    size_t nout = tsr_session_output_count(s);
    for (size_t j = 0; j < nout; j++) {
        tsr_io_info info = {.struct_size = sizeof info};
        tsr_status *e = tsr_session_output_info(s, j, &info);
        if (!e && safe_name(info.name)) fprintf(f, "O\t%s\n", info.name);
        tsr_status_free(e);
    }
    bool ok = fflush(f) == 0 && !ferror(f);
    fclose(f);
    if (!ok) {
        snprintf(msg, size, "cannot write the manifest in %s", cfg->work_dir);
        goto done;
    }
    snprintf(msg, size, "%zu of %zu values captured", saved, in.count + count);
    kind = 'O';
done:
    for (size_t i = 0; values && i < count; i++) tsr_value_free(values[i]);
    free(values);
    free(names);
    cli_feed_free(&in);
    tsr_session_free(s);
    return kind;
}

static void keep_result(size_t index, const fp_result *r, void *user) {
    (void)index;
    capture_ctx *cx = user;
    cx->kind = r->kind;
    cx->died = r->died;
    snprintf(cx->text, sizeof cx->text, "%s", r->text ? r->text : "");
    if (r->log && (cx->cfg->verbose || r->kind != 'O')) fprintf(stderr, "%s", r->log);
}

bool rdc_capture_run(const rdc_config *cfg, const rdc_graph *g, char *err, size_t err_size) {
    capture_ctx cx = {.cfg = cfg, .g = g};
    fp_pool pool = {.count = 1,
                    .jobs = 1,
                    .timeout = cfg->timeout,
                    .fork = true,
                    .job = capture_job,
                    .done = keep_result,
                    .user = &cx};
    fp_run(&pool);
    if (cx.kind != 'O') {
        snprintf(err, err_size, "%s%s", cx.died ? "the baseline's capture run " : "", cx.text);
        return false;
    }
    if (cfg->verbose) fprintf(stderr, "capture: %s\n", cx.text);
    return true;
}

/* --- trying a cut ---------------------------------------------------------- */
typedef struct try_ctx {
    const rdc_config *cfg;
    const rdc_graph *g;
    const rdc_cut *cut;
    const char *case_dir;
    bool baseline_ok;
    char kind[2];
    char text[2][1024];
    bool died[2];
} try_ctx;

/* The cut's inputs, read back from the capture's files. */
static bool load_inputs(const try_ctx *tx, tsr_value **values, tsr_tensor *views, const tsr_tensor **tensors,
                        const char **names, char *msg, size_t size) {
    for (size_t i = 0; i < tx->cut->input_count; i++) {
        const rdc_value *v = &tx->g->capture.values[tx->cut->inputs[i]];
        void *bytes = NULL;
        size_t n = 0;
        if (!tio_read_file(v->file, &bytes, &n)) {
            snprintf(msg, size, "cannot read %s: %s", v->file, tio_file_error(errno));
            return false;
        }
        tsr_status *st = tsr_value_from_onnx_tensor(bytes, n, &values[i], NULL);
        free(bytes);
        if (!st) {
            views[i].struct_size = sizeof views[i];
            st = tsr_value_tensor(values[i], &views[i]);
        }
        if (st) {
            fail_with(st, v->file, 'E', msg, size);
            return false;
        }
        tensors[i] = &views[i];
        names[i] = v->name;
    }
    return true;
}

/* Job 0 runs the baseline, job 1 the compared set. */
static char try_job(size_t index, void *user, char *msg, size_t size) {
    try_ctx *tx = user;
    const rdc_config *cfg = tx->cfg;
    const rdc_cut *cut = tx->cut;
    if (index == 1 && !tx->baseline_ok) {
        snprintf(msg, size, "skipped: the baseline cannot run the cut");
        return 'S';
    }
    size_t nin = cut->input_count, nout = cut->output_count;
    tsr_value **in_values = calloc(nin + 1, sizeof *in_values);
    tsr_tensor *views = calloc(nin + 1, sizeof *views);
    const tsr_tensor **tensors = calloc(nin + 1, sizeof *tensors);
    const char **in_names = calloc(nin + 1, sizeof *in_names);
    tsr_value **outs = calloc(nout + 1, sizeof *outs);
    tsr_session_options *o = NULL;
    tsr_session *s = NULL;
    char kind = 'E';
    if (!in_values || !views || !tensors || !in_names || !outs) {
        snprintf(msg, size, "out of memory");
        goto done;
    }
    if (!load_inputs(tx, in_values, views, tensors, in_names, msg, size)) goto done;
    tsr_status *st = set_options(cfg, &cfg->sets[index], false, &o);
    if (!st) st = tsr_session_create_from_buffer(o, cut->model, cut->model_size, tx->g->base_dir, &s);
    if (st) {
        kind = fail_with(st, "session", 'E', msg, size);
        goto done;
    }
    st = tsr_session_run(s, nin, in_names, tensors, nout, (const char *const *)cut->outputs, outs);
    if (st) {
        kind = fail_with(st, "run", 'E', msg, size);
        goto done;
    }
    if (index == 0) {
        for (size_t j = 0; j < nout; j++) {
            char *path = path_in(cfg->work_dir, "a_%zu.pb", j);
            bool ok = path && save_value(outs[j], cut->outputs[j], path);
            free(path);
            if (ok && tx->case_dir) {
                path = path_in(tx->case_dir, "test_data_set_0/output_%zu.pb", j);
                ok = path && save_value(outs[j], cut->outputs[j], path);
                free(path);
            }
            if (!ok) {
                snprintf(msg, size, "cannot save output '%s'", cut->outputs[j]);
                goto done;
            }
        }
        snprintf(msg, size, "ran");
        kind = 'O';
        goto done;
    }
    if (cfg->mode == RDC_ERROR) {
        snprintf(msg, size, "ran");
        kind = 'O';
        goto done;
    }
    /* Difference mode: each output against the baseline's. */
    kind = 'O';
    size_t worst = SIZE_MAX;
    cmpx_stats worst_stats = {0};
    for (size_t j = 0; j < nout; j++) {
        char *path = path_in(cfg->work_dir, "a_%zu.pb", j);
        void *bytes = NULL;
        size_t n = 0;
        tsr_value *want = NULL;
        bool read = path && tio_read_file(path, &bytes, &n);
        free(path);
        st = read ? tsr_value_from_onnx_tensor(bytes, n, &want, NULL) : NULL;
        free(bytes);
        if (!read || st) {
            tsr_status_free(st);
            snprintf(msg, size, "the baseline's output '%s' is unreadable", cut->outputs[j]);
            kind = 'E';
            goto done;
        }
        cmpx_stats s1;
        cmpx_measure(want, outs[j], cfg->tol, &s1);
        tsr_value_free(want);
        if (!cmpx_agrees(&s1) &&
            (worst == SIZE_MAX || s1.mismatches > worst_stats.mismatches ||
             (s1.mismatches == worst_stats.mismatches && s1.max_abs > worst_stats.max_abs))) {
            worst = j;
            worst_stats = s1;
        }
    }
    if (worst == SIZE_MAX) {
        snprintf(msg, size, "outputs agree");
    } else if (!worst_stats.comparable) {
        cli_format(msg, size, "output '%s': %s", cut->outputs[worst], worst_stats.why);
        kind = 'D';
    } else {
        cli_format(msg, size,
                   "output '%s': max_abs %.3g, max_rel %.3g, %zu of %zu over tolerance "
                   "(worst [%zu]: %s vs %s)",
                   cut->outputs[worst], worst_stats.max_abs, worst_stats.max_rel, worst_stats.mismatches,
                   worst_stats.count, worst_stats.worst_index, worst_stats.baseline_value, worst_stats.value);
        kind = 'D';
    }
done:
    for (size_t i = 0; in_values && i < nin; i++) tsr_value_free(in_values[i]);
    for (size_t j = 0; outs && j < nout; j++) tsr_value_free(outs[j]);
    free(in_values);
    free(views);
    free(tensors);
    free(in_names);
    free(outs);
    tsr_session_free(s);
    tsr_session_options_free(o);
    return kind;
}

static void try_done(size_t index, const fp_result *r, void *user) {
    try_ctx *tx = user;
    tx->kind[index] = r->kind;
    tx->died[index] = r->died;
    snprintf(tx->text[index], sizeof tx->text[index], "%s", r->text ? r->text : "");
    fp_one_line(tx->text[index]);
    if (index == 0) tx->baseline_ok = r->kind == 'O';
    if (r->log && tx->cfg->verbose && r->kind != 'O') fprintf(stderr, "%s", r->log);
}

void rdc_try(const rdc_config *cfg, const rdc_graph *g, const rdc_cut *cut, const char *case_dir, rdc_result *out) {
    try_ctx tx = {.cfg = cfg, .g = g, .cut = cut, .case_dir = case_dir};
    /* One at a time: job 1 forks after job 0 is done, and learns from
     * baseline_ok whether to run at all. */
    fp_pool pool = {
        .count = 2, .jobs = 1, .timeout = cfg->timeout, .fork = true, .job = try_job, .done = try_done, .user = &tx};
    fp_run(&pool);
    if (tx.kind[0] != 'O') {
        out->verdict = RDC_INFEASIBLE;
        cli_format(out->detail, sizeof out->detail, "baseline %s: %s", cfg->sets[0].list, tx.text[0]);
        return;
    }
    const char *set = cfg->sets[1].list;
    if (cfg->mode == RDC_ERROR) {
        bool failed = tx.kind[1] != 'O';
        bool same = !cfg->error_text || strstr(tx.text[1], cfg->error_text);
        out->verdict = failed && same ? RDC_REPRODUCES : RDC_CLEAN;
        cli_format(out->detail, sizeof out->detail, "%s %s%s", set,
                   tx.died[1]   ? ""
                       : failed ? "fails: "
                                : "",
                   failed ? tx.text[1] : "runs");
        return;
    }
    if (tx.kind[1] == 'D') {
        out->verdict = RDC_REPRODUCES;
        cli_format(out->detail, sizeof out->detail, "%s differs: %s", set, tx.text[1]);
    } else if (tx.kind[1] == 'O') {
        out->verdict = RDC_CLEAN;
        snprintf(out->detail, sizeof out->detail, "outputs agree");
    } else {
        /* The compared set fails or crashes: not the difference sought. */
        out->verdict = RDC_CLEAN;
        cli_format(out->detail, sizeof out->detail, "%s %s%s", set, tx.died[1] ? "" : "fails: ", tx.text[1]);
    }
}
