/*
 * check-provider: the sessions every check opens — the plugin first under
 * policy "first" (so it gets every node it claims, copies or not: the
 * point is to test it, not to place well), reference behind it for the
 * rest, and reference alone as the baseline.
 */
#include <stdlib.h>
#include <string.h>

#include "check_provider.h"

bool cp_is_reference(const cp_run *r) { return r->plugin_info.name && strcmp(r->plugin_info.name, "reference") == 0; }

/* The user's shared options with `providers` as the list. The strings are
 * borrowed into a shallow copy, which cli_make_session_options only reads. */
static tsr_status *options_with(const cp_run *r, char **providers, size_t count, int32_t policy,
                                bool with_provider_options, tsr_session_options **out) {
    cli_common c = r->common;
    c.providers = providers;
    c.provider_count = count;
    c.policy = policy;
    if (!with_provider_options) c.provider_option_count = 0;
    return cli_make_session_options(&c, out);
}

tsr_status *cp_plugin_options(const cp_run *r, tsr_session_options **out) {
    char *list[2] = {r->plugin, (char *)"reference"};
    /* Reference listed twice is refused; as the plugin it runs alone. */
    return options_with(r, list, cp_is_reference(r) ? 1 : 2, TSR_POLICY_FIRST, true, out);
}

tsr_status *cp_reference_options(const cp_run *r, tsr_session_options **out) {
    char *list[1] = {(char *)"reference"};
    /* Options naming the plugin would name a provider not in the session. */
    return options_with(r, list, 1, -1, false, out);
}

tsr_session *cp_open_case(const tsr_session_options *o, const char *case_dir, char *reason, size_t size) {
    char *model = tc_join(case_dir, "model.onnx");
    tsr_session *s = NULL;
    tsr_status *st = model ? tsr_session_create(o, model, &s) : NULL;
    if (!model) snprintf(reason, size, "out of memory");
    if (st) {
        snprintf(reason, size, "load: %s", tsr_status_message(st));
        tsr_status_free(st);
        s = NULL;
    }
    free(model);
    return s;
}

size_t cp_claimed_nodes(const cp_run *r, const tsr_session *s) {
    size_t n = tsr_session_node_count(s), mine = 0;
    for (size_t i = 0; i < n; i++) {
        tsr_node_info info = {.struct_size = sizeof info};
        tsr_status *st = tsr_session_node_info(s, i, &info);
        if (!st && info.provider && strcmp(info.provider, r->plugin_info.name) == 0) mine++;
        tsr_status_free(st);
    }
    return mine;
}

char *cp_first_data_set(const char *case_dir) {
    char **sets;
    int n = tc_data_sets(case_dir, &sets);
    char *first = n > 0 ? strdup(sets[0]) : NULL;
    tc_free_names(sets);
    return first;
}
