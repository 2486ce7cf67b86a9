/*
 * check-provider's report: a "PASS|FAIL|SKIP name: detail" line per check
 * (scripts grep them, as they grep `tessera test`'s), the plugin's devices
 * as `tessera providers` lists them, and a summary line; or, with --json,
 * one object holding the same.
 */
#include <inttypes.h>
#include <string.h>

#include "check_provider.h"
#include "compare_tool.h"

/* Text output lists this many failed cases; JSON lists them all. */
#define FAILURES_SHOWN 50

static const char *word(char status) { return status == TC_PASS ? "PASS" : status == TC_SKIP ? "SKIP" : "FAIL"; }

void cp_print_plugin(const cp_run *r) {
    for (size_t k = 0; k < r->plugin_info.device_count; k++) {
        const cp_device *d = &r->plugin_info.devices[k];
        tsr_device_desc desc = {.struct_size = sizeof desc,
                                .name = d->name,
                                .vendor = d->vendor,
                                .details = d->details,
                                .kind = d->kind,
                                .memory_kind = d->memory_kind,
                                .memory_bytes = d->memory_bytes};
        cli_print_device(stdout, "  ", k, &desc);
    }
}

static void print_failures(char *const *lines, size_t count, const char *what) {
    for (size_t i = 0; i < count && i < FAILURES_SHOWN; i++) printf("  FAIL %s\n", lines[i]);
    if (count > FAILURES_SHOWN)
        printf("  ... and %zu more failed %s (--json lists them all)\n", count - FAILURES_SHOWN, what);
}

void cp_print_check(const cp_run *r, const cp_check *c) {
    printf("%s %s: %s [%.2f s]\n", word(c->status), c->name, c->detail ? c->detail : "", c->seconds);
    if (strcmp(c->name, "op_conformance") == 0)
        print_failures(r->ops_tally.failures, r->ops_tally.failure_count, "cases");
    else if (strcmp(c->name, "model_round_trip") == 0) {
        print_failures(r->models_tally.failures.lines, r->models_tally.failures.count, "models");
        for (size_t i = 0; !r->verbose && i < r->models_tally.skips.count; i++)
            printf("  SKIP %s\n", r->models_tally.skips.lines[i]);
    } else if (strcmp(c->name, "negotiation") == 0 && (r->verbose || c->status == TC_FAIL))
        /* Every answer, so a failure shows beside what the plugin got right. */
        for (size_t i = 0; i < r->negotiation.count; i++) printf("  %s\n", r->negotiation.lines[i]);
    fflush(stdout);
}

static void totals(const cp_run *r, size_t *pass, size_t *fail, size_t *skip) {
    *pass = *fail = *skip = 0;
    for (size_t i = 0; i < r->check_count; i++) {
        char s = r->checks[i].status;
        if (s == TC_PASS) ++*pass;
        else if (s == TC_SKIP) ++*skip;
        else ++*fail;
    }
}

void cp_print_summary(const cp_run *r, double seconds) {
    size_t pass, fail, skip;
    totals(r, &pass, &fail, &skip);
    printf("summary: %zu passed, %zu failed, %zu skipped in %.1f s: %s\n", pass, fail, skip, seconds,
           fail ? "the plugin does NOT conform" : "no failures");
}

static void json_key_string(const char *key, const char *value, bool comma) {
    printf("%s\"%s\": ", comma ? ", " : "", key);
    if (value) cmpx_json_string(stdout, value);
    else printf("null");
}

static void json_devices(const cp_plugin *p) {
    printf(", \"devices\": [");
    for (size_t k = 0; k < p->device_count; k++) {
        const cp_device *d = &p->devices[k];
        printf("%s{", k ? ", " : "");
        json_key_string("name", d->name, false);
        json_key_string("vendor", d->vendor, true);
        json_key_string("kind", cli_device_kind_name(d->kind), true);
        json_key_string("memory_kind", cli_memory_kind_name(d->memory_kind), true);
        printf(", \"memory_bytes\": %" PRIu64, d->memory_bytes);
        json_key_string("details", d->details && *d->details ? d->details : NULL, true);
        printf("}");
    }
    printf("]");
}

/* "reason" after the first ": " of "name: reason", as {"KEY": name, "reason": reason}. */
static void json_failure(const char *f, const char *key, bool comma) {
    const char *colon = strstr(f, ": ");
    size_t n = colon ? (size_t)(colon - f) : strlen(f);
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), f);
    printf("%s{", comma ? ", " : "");
    json_key_string(key, name, false);
    json_key_string("reason", colon ? colon + 2 : "", true);
    printf("}");
}

static void json_model_counts(const cp_model_tally *t) {
    printf(", \"models\": %zu, \"models_run\": %zu, \"claimed_heavy_ops\": %zu, "
           "\"passed\": %zu, \"failed\": %zu, \"skipped\": %zu, \"no_heavy_op\": %zu, "
           "\"failures\": [",
           t->models, t->ran, t->heavy, t->passed, t->failed, t->skipped, t->no_heavy);
    for (size_t i = 0; i < t->failures.count; i++) json_failure(t->failures.lines[i], "model", i);
    printf("], \"skips\": [");
    for (size_t i = 0; i < t->skips.count; i++) json_failure(t->skips.lines[i], "model", i);
    printf("]");
}

static void json_lines(const char *key, const cp_lines *l) {
    printf(", \"%s\": [", key);
    for (size_t i = 0; i < l->count; i++) {
        if (i) printf(", ");
        cmpx_json_string(stdout, l->lines[i]);
    }
    printf("]");
}

static void json_op_counts(const cp_op_tally *t) {
    printf(", \"cases\": %zu, \"cases_before_sampling\": %zu, \"claimed_passed\": %zu, "
           "\"claimed_failed\": %zu, \"failed_to_load\": %zu, \"claimed_skipped\": %zu, "
           "\"not_claimed\": %zu, \"failures\": [",
           t->cases, t->sampled_from, t->passed, t->failed, t->broke_load, t->skipped, t->not_claimed);
    for (size_t i = 0; i < t->failure_count; i++) json_failure(t->failures[i], "case", i);
    printf("]");
}

void cp_print_json(const cp_run *r, double seconds) {
    const cp_plugin *p = &r->plugin_info;
    printf("{");
    json_key_string("plugin", r->plugin, false);
    json_key_string("provider", p->name, true);
    json_key_string("vendor", p->vendor, true);
    json_key_string("version", p->version, true);
    printf(", \"abi_version\": %" PRIu32, p->abi_version);
    json_devices(p);
    json_key_string("cases_dir", r->cases_path, true);
    json_key_string("models_dir", r->models_path, true);
    printf(", \"checks\": [");
    for (size_t i = 0; i < r->check_count; i++) {
        const cp_check *c = &r->checks[i];
        printf("%s{", i ? ", " : "");
        json_key_string("name", c->name, false);
        json_key_string("status", word(c->status), true);
        json_key_string("detail", c->detail ? c->detail : "", true);
        printf(", \"seconds\": %.3f", c->seconds);
        if (strcmp(c->name, "op_conformance") == 0) json_op_counts(&r->ops_tally);
        else if (strcmp(c->name, "negotiation") == 0) json_lines("attempts", &r->negotiation);
        else if (strcmp(c->name, "model_round_trip") == 0) json_model_counts(&r->models_tally);
        printf("}");
    }
    size_t pass, fail, skip;
    totals(r, &pass, &fail, &skip);
    printf("], \"totals\": {\"passed\": %zu, \"failed\": %zu, \"skipped\": %zu}, "
           "\"seconds\": %.3f}\n",
           pass, fail, skip, seconds);
}
