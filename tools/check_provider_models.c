/*
 * check-provider: model_round_trip. Node cases test ops one at a time, on
 * tiny shapes; a whole model tests what a plugin does between them (fused
 * pieces, layouts kept across nodes, copies where its pieces meet
 * reference's) on real sizes. Each model of --models DIR (ONNX test-case
 * folders, as the backend suite and tools/zoo's cases are laid out) where
 * the plugin claims a heavy op runs on [PLUGIN, reference] and must match
 * its expected outputs as `tessera test` judges them (test_case.c). Models
 * where it claims no heavy op are counted, not run: their light ops are
 * op_conformance's business.
 */
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"

/* The ops whose kernels a plugin exists for, and which a model spends its
 * time in. */
static const char *const heavy_ops[] = {
    "Conv", "ConvTranspose", "MatMul",      "Gemm",        "Attention",     "LSTM",   "GRU",
    "RNN",  "MatMulInteger", "ConvInteger", "QLinearConv", "QLinearMatMul", "Einsum",
};

/* Result letter beyond TC_PASS/FAIL/SKIP. */
#define MODEL_NO_HEAVY 'N'

static bool is_heavy(const char *op) {
    for (size_t i = 0; i < sizeof heavy_ops / sizeof heavy_ops[0]; i++)
        if (strcmp(op, heavy_ops[i]) == 0) return true;
    return false;
}

/* Heavy nodes of the session's main graph the plugin runs. */
static size_t claimed_heavy(const cp_run *r, const tsr_session *s) {
    size_t n = tsr_session_node_count(s), heavy = 0;
    for (size_t i = 0; i < n; i++) {
        tsr_node_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_node_info(s, i, &info);
        if (!st && info.provider && strcmp(info.provider, r->plugin_info.name) == 0 && is_heavy(info.op_type)) heavy++;
        tsr_status_free(st);
    }
    return heavy;
}

/* --- one model, in a child ------------------------------------------------ */
/* The message is "HEAVY<TAB>text": the parent adds the counts up. */
static char run_model(const cp_run *r, const tc_case *m, size_t *heavy, char *msg, size_t size) {
    char reason[TC_REASON_MAX], base[TC_REASON_MAX];
    tsr_session_options *o = NULL;
    tsr_status *st = cp_plugin_options(r, &o);
    if (st) {
        cli_format(msg, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        return TC_FAIL;
    }
    tsr_session *s = cp_open_case(o, m->dir, reason, sizeof reason);
    tsr_session_options_free(o);
    if (!s) {
        /* As in op_conformance: only a load the plugin's presence breaks
         * is the plugin's. */
        if (!cp_is_reference(r) && cp_baseline(r, m->dir, true, base, sizeof base) != TC_PASS) {
            cli_format(msg, size, "does not load with reference alone either: %s", base);
            return TC_SKIP;
        }
        cli_format(msg, size, "loads on reference alone, not with the plugin: %s", reason);
        return TC_FAIL;
    }
    size_t mine = cp_claimed_nodes(r, s), all = tsr_session_node_count(s);
    *heavy = claimed_heavy(r, s);
    char kind;
    if (!*heavy) {
        kind = MODEL_NO_HEAVY;
        cli_format(msg, size, "%zu of %zu nodes on %s, no heavy op", mine, all, r->plugin_info.name);
    } else if ((kind = (char)tc_run_case(s, m->dir, r->tol, reason, sizeof reason)) == TC_PASS) {
        cli_format(msg, size, "%zu heavy ops, %zu of %zu nodes on %s", *heavy, mine, all, r->plugin_info.name);
    } else if (kind == TC_FAIL && !cp_is_reference(r) && cp_baseline(r, m->dir, false, base, sizeof base) != TC_PASS) {
        kind = TC_SKIP;
        cli_format(msg, size, "fails with reference alone too: %s", base);
    } else {
        cli_format(msg, size, "%s (%zu heavy ops, %zu of %zu nodes on %s)", reason, *heavy, mine, all,
                   r->plugin_info.name);
    }
    tsr_session_free(s);
    return kind;
}

static char model_job(size_t index, void *user, char *msg, size_t size) {
    const cp_run *r = user;
    char text[TC_REASON_MAX];
    size_t heavy = 0;
    char kind = run_model(r, &r->models.items[index], &heavy, text, sizeof text);
    fp_one_line(text);
    cli_format(msg, size, "%zu\t%s", heavy, text);
    return kind;
}

/* --- in the parent ------------------------------------------------------- */
static void model_done(size_t index, const fp_result *res, void *user) {
    cp_run *r = user;
    cp_model_tally *t = &r->models_tally;
    const char *name = r->models.items[index].name, *text = res->text ? res->text : "";
    const char *tab = res->died ? NULL : strchr(text, '\t');
    size_t heavy = tab ? strtoul(text, NULL, 10) : 0;
    if (tab) text = tab + 1;
    char kind = res->died ? TC_FAIL : res->kind;
    char line[TC_REASON_MAX + 256];
    cli_format(line, sizeof line, "%s: %s", name, *text ? text : "(no reason)");
    switch (kind) {
    case MODEL_NO_HEAVY: t->no_heavy++; break;
    case TC_SKIP:
        /* Few models, and a skip hides what was not tested: each is named. */
        t->skipped++;
        cp_push_text(&t->skips.lines, &t->skips.count, line);
        break;
    default:
        t->ran++;
        t->heavy += heavy;
        if (kind == TC_PASS) {
            t->passed++;
        } else {
            /* A crash or a timeout is the plugin's too: reference alone
             * runs these models without one. */
            t->failed++;
            cp_push_text(&t->failures.lines, &t->failures.count, line);
        }
    }
    if (r->verbose && !r->json) {
        const char *word = kind == TC_PASS ? "PASS"
            : kind == TC_SKIP              ? "SKIP"
            : kind == MODEL_NO_HEAVY       ? "NOT RUN"
                                           : "FAIL";
        printf("  %s %s%s%s\n", word, name, *text ? ": " : "", text);
        fflush(stdout);
    }
}

void cp_check_models(cp_run *r, cp_check *out) {
    cp_model_tally *t = &r->models_tally;
    out->name = "model_round_trip";
    char detail[TC_REASON_MAX];
    if (!r->models_path) {
        out->status = TC_SKIP;
        out->detail = strdup("no --models DIR given");
        return;
    }
    t->models = r->models.count;
    fp_pool pool = {.count = r->models.count,
                    .jobs = r->jobs,
                    .timeout = r->timeout,
                    .fork = r->fork,
                    .job = model_job,
                    .done = model_done,
                    .user = r};
    fp_run(&pool);
    char skipped[96] = "", idle[128] = "";
    if (t->skipped) snprintf(skipped, sizeof skipped, "; %zu skipped", t->skipped);
    if (t->no_heavy)
        snprintf(idle, sizeof idle, "; %zu with no heavy op on %s not run", t->no_heavy, r->plugin_info.name);
    if (t->failed) {
        out->status = TC_FAIL;
        cli_format(detail, sizeof detail, "%zu of %zu models differ, first %s%s%s", t->failed, t->ran,
                   t->failures.lines[0], skipped, idle);
    } else if (t->ran) {
        out->status = TC_PASS;
        cli_format(detail, sizeof detail, "%zu model%s, %zu claimed heavy op%s, all match%s%s", t->ran,
                   t->ran == 1 ? "" : "s", t->heavy, t->heavy == 1 ? "" : "s", skipped, idle);
    } else {
        out->status = TC_SKIP;
        cli_format(detail, sizeof detail,
                   "%zu model%s in %s, none with a heavy op (Conv, MatMul, Gemm, Attention, "
                   "LSTM, ...) %s claims%s",
                   t->models, t->models == 1 ? "" : "s", r->models_path, r->plugin_info.name, skipped);
    }
    out->detail = strdup(detail);
}
