/* provider.h on its own, as strict C99: a complete (if useless) plugin
 * table, so every slot's type is spelled out in C. Also records the C
 * layout for abi_cxx.cpp. */
#include "tessera/provider.h"

#include <stdio.h>

#include "abi_layout.h"

static tsr_status *p_create(const tsr_provider_config *config, void **state) {
    (void)config;
    *state = NULL;
    return NULL;
}
static void p_destroy(void *state) { (void)state; }
static size_t p_device_count(void *state) {
    (void)state;
    return 0;
}
static tsr_status *p_device_info(void *state, size_t index, tsr_device_info *info) {
    (void)state;
    (void)index;
    (void)info;
    return NULL;
}
static tsr_status *p_claim(void *state, const tsr_graph *graph, tsr_claim_sink *sink) {
    (void)state;
    (void)graph;
    (void)sink;
    return NULL;
}
static tsr_status *p_compile(void *state, const tsr_graph *piece, void **piece_state) {
    (void)state;
    (void)piece;
    *piece_state = NULL;
    return NULL;
}
static tsr_status *p_run(void *piece_state, tsr_run_context *ctx) {
    (void)piece_state;
    (void)ctx;
    return NULL;
}
static void p_release(void *piece_state) { (void)piece_state; }

static const tsr_provider table = {sizeof(tsr_provider),
                                   "c99",
                                   "tests",
                                   "0",
                                   p_create,
                                   p_destroy,
                                   p_device_count,
                                   p_device_info,
                                   p_claim,
                                   p_compile,
                                   p_run,
                                   p_release,
                                   NULL,
                                   NULL,
                                   NULL,
                                   NULL,
                                   NULL,
                                   NULL,
                                   NULL,
                                   0,
                                   NULL,
                                   NULL,
                                   NULL};

static tsr_provider_entry_fn entry_type_check;

static tsr_status *entry(tsr_provider_entry_args *args) {
    args->abi_version = TSR_PROVIDER_ABI_VERSION;
    args->provider = &table;
    return NULL;
}

int abi_c99_provider_check(void) {
    entry_type_check = entry;
    tsr_provider_entry_args args = {sizeof args, 1, 1, NULL, "x.so", 0, NULL};
    if (entry_type_check(&args) || args.provider != &table ||
        !TSR_HAS_MEMBER(args.provider, tsr_provider, copy_to_host)) {
        fprintf(stderr, "provider.h: entry/table check failed\n");
        return 1;
    }
    return 0;
}

#include "tessera/tessera.h" /* for the layout list; also checks the two mix */

#define ABI_LAYOUT_ITEM(e) (e),
const size_t abi_layout_c[] = {ABI_LAYOUT_LIST(ABI_LAYOUT_ITEM)};
const size_t abi_layout_c_count = sizeof abi_layout_c / sizeof abi_layout_c[0];
