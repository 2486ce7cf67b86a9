/*
 * check-provider, check 2: op conformance. Every selected ONNX backend node
 * case runs on the plugin (policy "first", reference behind it), but only
 * where the plugin claims at least one node: the rest say nothing about it.
 * A claimed case fails the check when its outputs miss the expected ones by
 * more than `tessera test`'s tolerance (test_case.c) — unless reference
 * alone fails it too, which makes it the suite's or reference's problem,
 * not the plugin's (a SKIP, with the reason).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"

/* Ops whose expected outputs are one draw of numpy's generator: no
 * implementation can match them, so a claimed case is a SKIP. */
static const char *const random_ops[] = {"Bernoulli",        "Multinomial",   "RandomNormal",
                                         "RandomNormalLike", "RandomUniform", "RandomUniformLike"};

/* Result letters beyond TC_PASS/FAIL/SKIP. */
#define CASE_NOT_CLAIMED 'N'
#define CASE_BROKE_LOAD 'L' /* loads on reference alone, not with the plugin */

/* --- choosing cases ------------------------------------------------------ */
/* Whether case `name` (test_<op>...) is of op `op`: the op's name in lower
 * case (test_matmulinteger) or in snake case (test_reduce_sum_keepdims,
 * test_global_average_pool), then the end or '_'. So Conv takes test_conv_*
 * but not test_convtranspose_*. */
static bool name_has_op(const char *name, const char *op) {
    if (strncmp(name, "test_", 5) != 0) return false;
    name += 5;
    char lower[128], snake[160];
    size_t nl = 0, ns = 0;
    for (size_t i = 0; op[i] && nl + 1 < sizeof lower && ns + 2 < sizeof snake; i++) {
        unsigned char c = (unsigned char)op[i];
        bool upper = isupper(c);
        /* A word starts at a capital after a small letter or digit
         * (ReduceSum), or at the last capital of a run followed by a small
         * letter (QLinearConv -> q_linear_conv). */
        if (upper && i > 0 &&
            (islower((unsigned char)op[i - 1]) || isdigit((unsigned char)op[i - 1]) ||
             (isupper((unsigned char)op[i - 1]) && islower((unsigned char)op[i + 1]))))
            snake[ns++] = '_';
        lower[nl++] = (char)tolower(c);
        snake[ns++] = (char)tolower(c);
    }
    lower[nl] = snake[ns] = '\0';
    const char *forms[2] = {lower, snake};
    for (int f = 0; f < 2; f++) {
        size_t n = strlen(forms[f]);
        if (n && strncmp(name, forms[f], n) == 0 && (name[n] == '\0' || name[n] == '_')) return true;
    }
    return false;
}

static bool wanted(const char *name, void *user) {
    const cp_run *r = user;
    if (!r->op_count) return true;
    for (size_t i = 0; i < r->op_count; i++)
        if (name_has_op(name, r->ops[i])) return true;
    return false;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --expected-pass FILE: one FOLDER/CASE or CASE a line, '#' comments (the
 * conformance ctest's lists). */
static int read_expected(cp_run *r) {
    FILE *f = fopen(r->expected_path, "r");
    if (!f) return cli_usage_error("check-provider", "--expected-pass: cannot read '%s'", r->expected_path);
    char line[1024];
    int rc = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *slash = strrchr(line, '/'), *name = slash ? slash + 1 : line;
        if (!*name || line[0] == '#') continue;
        char **grown = realloc(r->expected, (r->expected_count + 1) * sizeof *grown);
        if (!grown || !(grown[r->expected_count] = strdup(name))) rc = CLI_EXIT_FAIL;
        if (grown) r->expected = grown;
        if (!rc) r->expected_count++;
    }
    fclose(f);
    if (r->expected_count) qsort(r->expected, r->expected_count, sizeof *r->expected, by_name);
    return rc;
}

/* Whether a failure of case `name` counts: always, unless --expected-pass
 * lists what is known to pass and `name` is not among them. */
static bool must_pass(const cp_run *r, const char *name) {
    return !r->expected_path || bsearch(&name, r->expected, r->expected_count, sizeof *r->expected, by_name);
}

int cp_select_cases(cp_run *r) {
    int rc = r->expected_path ? read_expected(r) : 0;
    if (!rc) rc = tc_collect(&r->cases, "check-provider", r->cases_path, wanted, r);
    if (rc) return rc;
    r->ops_tally.sampled_from = r->cases.count;
    if (r->max_cases && r->cases.count > r->max_cases) {
        /* Evenly spread over the sorted names, so a sample still covers the
         * alphabet of ops rather than the first few. */
        size_t n = r->cases.count, keep = r->max_cases;
        bool *take = calloc(n, sizeof *take);
        if (!take) return CLI_EXIT_FAIL;
        for (size_t i = 0; i < keep; i++) take[i * n / keep] = true;
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            if (take[i]) r->cases.items[k++] = r->cases.items[i];
            else {
                free(r->cases.items[i].name);
                free(r->cases.items[i].dir);
            }
        }
        r->cases.count = k;
        free(take);
    }
    return 0;
}

/* --- one case, in a child ------------------------------------------------ */
static bool has_random_op(const tsr_session *s) {
    size_t n = tsr_session_node_count(s);
    for (size_t i = 0; i < n; i++) {
        tsr_node_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_node_info(s, i, &info);
        bool random = false;
        for (size_t k = 0; !st && k < sizeof random_ops / sizeof random_ops[0]; k++)
            random = random || strcmp(info.op_type, random_ops[k]) == 0;
        tsr_status_free(st);
        if (random) return true;
    }
    return false;
}

tc_kind cp_baseline(const cp_run *r, const char *dir, bool load_only, char *reason, size_t size) {
    tsr_session_options *o = NULL;
    tsr_status *st = cp_reference_options(r, &o);
    if (st) {
        snprintf(reason, size, "%s", tsr_status_message(st));
        tsr_status_free(st);
        return TC_FAIL;
    }
    tsr_session *s = cp_open_case(o, dir, reason, size);
    tsr_session_options_free(o);
    tc_kind k = !s ? TC_FAIL : load_only ? TC_PASS : tc_run_case(s, dir, r->tol, reason, size);
    tsr_session_free(s);
    return k;
}

static char run_one(const cp_run *r, const tc_case *c, char *msg, size_t size) {
    char reason[TC_REASON_MAX], base[TC_REASON_MAX];
    tsr_session_options *o = NULL;
    tsr_status *st = cp_plugin_options(r, &o);
    if (st) {
        snprintf(msg, size, "session options: %s", tsr_status_message(st));
        tsr_status_free(st);
        return TC_FAIL;
    }
    tsr_session *s = cp_open_case(o, c->dir, reason, sizeof reason);
    tsr_session_options_free(o);
    if (!s) {
        /* A model reference cannot load either is no news about the plugin;
         * one only the plugin's presence breaks is (a claim that errs). */
        if (!must_pass(r, c->name)) {
            cli_format(msg, size, "not in %s: %s", r->expected_path, reason);
            return TC_SKIP;
        }
        if (!cp_is_reference(r) && cp_baseline(r, c->dir, true, base, sizeof base) != TC_PASS) {
            cli_format(msg, size, "does not load with reference alone either: %s", base);
            return TC_SKIP;
        }
        cli_format(msg, size, "%s", reason);
        return CASE_BROKE_LOAD;
    }
    size_t mine = cp_claimed_nodes(r, s), all = tsr_session_node_count(s);
    char kind;
    if (!mine) {
        kind = CASE_NOT_CLAIMED;
        msg[0] = '\0';
    } else if (has_random_op(s)) {
        kind = TC_SKIP;
        snprintf(msg, size, "expected outputs are random draws (a Random*/Bernoulli node)");
    } else if ((kind = (char)tc_run_case(s, c->dir, r->tol, reason, sizeof reason)) == TC_PASS) {
        snprintf(msg, size, "%zu of %zu nodes on %s", mine, all, r->plugin_info.name);
    } else if (kind == TC_FAIL && !must_pass(r, c->name)) {
        kind = TC_SKIP;
        cli_format(msg, size, "not in %s: %s", r->expected_path, reason);
    } else if (kind == TC_FAIL && !cp_is_reference(r) && cp_baseline(r, c->dir, false, base, sizeof base) != TC_PASS) {
        kind = TC_SKIP;
        cli_format(msg, size, "fails with reference alone too: %s", base);
    } else {
        cli_format(msg, size, "%s (%zu of %zu nodes on %s)", reason, mine, all, r->plugin_info.name);
    }
    tsr_session_free(s);
    return kind;
}

static char case_job(size_t index, void *user, char *msg, size_t size) {
    const cp_run *r = user;
    char kind = run_one(r, &r->cases.items[index], msg, size);
    fp_one_line(msg);
    return kind;
}

/* --- in the parent ------------------------------------------------------- */
bool cp_push_text(char ***list, size_t *count, const char *text) {
    char **grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) return false;
    *list = grown;
    if (!(grown[*count] = strdup(text))) return false;
    ++*count;
    return true;
}

static void case_done(size_t index, const fp_result *res, void *user) {
    cp_run *r = user;
    cp_op_tally *t = &r->ops_tally;
    const char *name = r->cases.items[index].name, *text = res->text ? res->text : "";
    char line[TC_REASON_MAX + 256];
    switch (res->kind) {
    case TC_PASS: {
        cp_passed *grown = realloc(t->passed_cases, (t->passed_count + 1) * sizeof *grown);
        if (grown) {
            t->passed_cases = grown;
            /* run_one's message starts with the count of claimed nodes. */
            size_t mine = 0;
            if (sscanf(text, "%zu of", &mine) != 1) mine = 0;
            grown[t->passed_count++] = (cp_passed){index, mine};
        }
        t->passed++;
        break;
    }
    case TC_SKIP: t->skipped++; break;
    case CASE_NOT_CLAIMED: t->not_claimed++; break;
    default:
        /* A crash or a timeout counts against the plugin: reference alone
         * runs the whole suite without one. So does a session that only
         * the plugin's presence keeps from loading. */
        t->failed++;
        if (res->kind == CASE_BROKE_LOAD) t->broke_load++;
        cli_format(line, sizeof line, "%s: %s", name, *text ? text : "(no reason)");
        cp_push_text(&t->failures, &t->failure_count, line);
        break;
    }
    if (r->verbose && !r->json && res->kind != CASE_NOT_CLAIMED) {
        const char *word = res->kind == TC_PASS ? "PASS" : res->kind == TC_SKIP ? "SKIP" : "FAIL";
        printf("  %s %s%s%s\n", word, name, *text ? ": " : "", text);
        fflush(stdout);
    }
}

/* Most claimed nodes first, then case order: checks 3-5 take the first
 * passed cases, and a case where the plugin runs more has more to race on
 * and more to copy. */
static int by_claims(const void *a, const void *b) {
    const cp_passed *x = a, *y = b;
    if (x->claimed != y->claimed) return x->claimed < y->claimed ? 1 : -1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void cp_check_ops(cp_run *r, cp_check *out) {
    cp_op_tally *t = &r->ops_tally;
    t->cases = r->cases.count;
    fp_pool pool = {.count = r->cases.count,
                    .jobs = r->jobs,
                    .timeout = r->timeout,
                    .fork = r->fork,
                    .job = case_job,
                    .done = case_done,
                    .user = r};
    fp_run(&pool);
    if (t->passed_count) qsort(t->passed_cases, t->passed_count, sizeof *t->passed_cases, by_claims);
    char detail[TC_REASON_MAX], sample[96] = "";
    if (t->sampled_from > t->cases)
        snprintf(sample, sizeof sample, " (an even sample of %zu; --max-cases 0 for all)", t->sampled_from);
    size_t claimed = t->passed + t->failed + t->skipped;
    char broke[96] = "";
    if (t->broke_load) snprintf(broke, sizeof broke, " (%zu would not load with the plugin)", t->broke_load);
    cli_format(detail, sizeof detail,
               "%zu cases%s: %zu claimed: %zu passed, %zu failed%s, %zu skipped; %zu not claimed", t->cases, sample,
               claimed, t->passed, t->failed, broke, t->skipped, t->not_claimed);
    out->name = "op_conformance";
    /* Claiming nothing is not a failure of conformance (a plugin for one
     * custom op claims nothing here), but nothing was tested: a SKIP, which
     * the summary shows. */
    out->status = t->failed ? TC_FAIL : claimed ? TC_PASS : TC_SKIP;
    if (!claimed && !t->failed)
        strncat(detail, "; the plugin claimed no node of any case, so nothing was tested",
                sizeof detail - strlen(detail) - 1);
    out->detail = strdup(detail);
}
