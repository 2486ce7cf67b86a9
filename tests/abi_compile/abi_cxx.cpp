// The public headers as strict C++11, both at once and in either order, and
// the same struct layout as the C compiler gives (abi_layout_c, from
// abi_c99_provider.c compiled as C99 into this program).
#include "tessera/provider.h"
#include "tessera/provider_util.h"
#include "tessera/tessera.h"
#include "tessera/types.h"

#include <cstdio>

#include "abi_layout.h"

namespace {

tsr_status *create(const tsr_provider_config *, void **state) {
    *state = nullptr;
    return nullptr;
}
void destroy(void *) {}
size_t device_count(void *) { return 0; }
tsr_status *device_info(void *, size_t, tsr_device_info *) { return nullptr; }
tsr_status *claim(void *, const tsr_graph *, tsr_claim_sink *) { return nullptr; }
tsr_status *compile(void *, const tsr_graph *, void **ps) {
    *ps = nullptr;
    return nullptr;
}
// provider_util.h's macro and helpers in C++: a compile kernel that reads
// an attribute of its piece's first node, as a C++ plugin would.
tsr_status *run(void *, tsr_run_context *) { return nullptr; }
const tsr_host_api *util_host = nullptr;
tsr_status *util_compile(const tsr_graph *piece) {
    const tsr_node *n = util_host->graph_node(piece, 0);
    size_t count = 0;
    if (tsr_util_attr_int(util_host, n, "axis", 0) < 0 || tsr_util_attr_ints(util_host, n, "pads", &count) ||
        tsr_util_attr_string_is(util_host, n, "mode", "linear", 1) || tsr_util_node_input(util_host, n, 0))
        TSR_TRY(util_host->status_new(TSR_ERR_INVALID_ARGUMENT, "unsupported"));
    return nullptr;
}
void release(void *) {}

// A table a C++ plugin would write (no designated initializers in C++11).
const tsr_provider table = {sizeof(tsr_provider),
                            "cxx",
                            "tests",
                            "0",
                            create,
                            destroy,
                            device_count,
                            device_info,
                            claim,
                            compile,
                            run,
                            release,
                            nullptr,
                            nullptr,
                            nullptr,
                            nullptr,
                            nullptr,
                            nullptr,
                            nullptr,
                            0,
                            nullptr,
                            nullptr,
                            nullptr};

tsr_status *entry(tsr_provider_entry_args *args) {
    args->abi_version = TSR_PROVIDER_ABI_VERSION;
    args->provider = &table;
    return nullptr;
}

} // namespace

int main() {
    tsr_status *(*compile_fn)(const tsr_graph *) = util_compile; // type-checked, never run
    (void)compile_fn;
    tsr_provider_entry_fn fn = entry;
    tsr_provider_entry_args args = {sizeof args, 1, 1, nullptr, "x.so", 0, nullptr};
    if (fn(&args) || !TSR_HAS_MEMBER(args.provider, tsr_provider, copy_to_host)) {
        std::fprintf(stderr, "C++: entry/table check failed\n");
        return 1;
    }
#define ABI_LAYOUT_ITEM(e) (e),
    const size_t cxx[] = {ABI_LAYOUT_LIST(ABI_LAYOUT_ITEM)};
    const size_t n = sizeof cxx / sizeof cxx[0];
    if (n != abi_layout_c_count) {
        std::fprintf(stderr, "layout lists differ in length\n");
        return 1;
    }
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (cxx[i] != abi_layout_c[i]) {
            std::fprintf(stderr, "layout item %zu: C++ %zu, C %zu\n", i, cxx[i], abi_layout_c[i]);
            bad = 1;
        }
    }
    if (!bad) std::printf("public headers compile as C++11; %zu layout items agree with C\n", n);
    return bad;
}
