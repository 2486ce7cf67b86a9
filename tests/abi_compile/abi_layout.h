/* Offsets and sizes of the ABI structs, as one translation unit's compiler
 * lays them out: abi_c99_provider.c fills abi_layout_c (compiled as C99),
 * abi_cxx.cpp computes the same list as C++ and compares. */
#ifndef TESSERA_ABI_LAYOUT_H
#define TESSERA_ABI_LAYOUT_H

#include <stddef.h>

#define ABI_LAYOUT_LIST(X)                                                                                             \
    X(sizeof(tsr_tensor))                                                                                              \
    X(offsetof(tsr_tensor, dims))                                                                                      \
    X(offsetof(tsr_tensor, data))                                                                                      \
    X(offsetof(tsr_tensor, nbytes))                                                                                    \
    X(offsetof(tsr_tensor, memory_kind))                                                                               \
    X(offsetof(tsr_tensor, device_index))                                                                              \
    X(sizeof(tsr_string))                                                                                              \
    X(sizeof(tsr_host_api))                                                                                            \
    X(offsetof(tsr_host_api, status_new))                                                                              \
    X(offsetof(tsr_host_api, graph_to_onnx))                                                                           \
    X(offsetof(tsr_host_api, value_constant))                                                                          \
    X(offsetof(tsr_host_api, attr_graphs_at))                                                                          \
    X(offsetof(tsr_host_api, claim_piece))                                                                             \
    X(offsetof(tsr_host_api, run_alloc_output))                                                                        \
    X(offsetof(tsr_host_api, tensor_set_string))                                                                       \
    X(sizeof(tsr_device_info))                                                                                         \
    X(offsetof(tsr_device_info, details))                                                                              \
    X(offsetof(tsr_device_info, memory_bytes))                                                                         \
    X(sizeof(tsr_provider_config))                                                                                     \
    X(offsetof(tsr_provider_config, option_values))                                                                    \
    X(offsetof(tsr_provider_config, log_level))                                                                        \
    X(sizeof(tsr_provider))                                                                                            \
    X(offsetof(tsr_provider, name))                                                                                    \
    X(offsetof(tsr_provider, create))                                                                                  \
    X(offsetof(tsr_provider, claim))                                                                                   \
    X(offsetof(tsr_provider, release))                                                                                 \
    X(offsetof(tsr_provider, mem_alloc))                                                                               \
    X(offsetof(tsr_provider, copy_to_host))                                                                            \
    X(offsetof(tsr_provider, piece_describe))                                                                          \
    X(sizeof(tsr_provider_entry_args))                                                                                 \
    X(offsetof(tsr_provider_entry_args, host))                                                                         \
    X(offsetof(tsr_provider_entry_args, plugin_path))                                                                  \
    X(offsetof(tsr_provider_entry_args, abi_version))                                                                  \
    X(offsetof(tsr_provider_entry_args, provider))                                                                     \
    X(sizeof(tsr_provider_desc))                                                                                       \
    X(offsetof(tsr_provider_desc, abi_version))                                                                        \
    X(offsetof(tsr_provider_desc, error))                                                                              \
    X(sizeof(tsr_device_desc))                                                                                         \
    X(offsetof(tsr_device_desc, memory_bytes))                                                                         \
    X(sizeof(tsr_io_info))                                                                                             \
    X(offsetof(tsr_io_info, dims))                                                                                     \
    X(offsetof(tsr_io_info, dim_symbols))                                                                              \
    X(sizeof(tsr_elem_type))                                                                                           \
    X(sizeof(tsr_code))

#ifdef __cplusplus
extern "C" {
#endif
extern const size_t abi_layout_c[];
extern const size_t abi_layout_c_count;
#ifdef __cplusplus
}
#endif

#endif
