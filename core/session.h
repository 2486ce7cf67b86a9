/* Sessions: a loaded model, its providers, its pieces and its run plan. */
#ifndef TESSERA_CORE_SESSION_H
#define TESSERA_CORE_SESSION_H

#include "ir.h"
#include "partition.h"
#include "plugin.h"
#include "rt_tensor.h"
#include "tessera/tessera.h"

typedef struct provider_option {
    char *provider, *key, *value;
} provider_option;

typedef struct dim_setting {
    char *symbol;
    int64_t value;
} dim_setting;

struct tsr_session_options {
    char **providers;
    size_t n_providers;
    provider_option *options;
    size_t n_options;
    int32_t threads;
    int32_t log_level;
    dim_setting *dims;
    size_t n_dims;
};

struct tsr_value {
    ir_tensor *tensor;
};

/* What the executor needs, computed once per session. */
typedef struct exec_plan {
    size_t *last_use; /* per value index of the main graph: last piece reading it, or SIZE_MAX */
} exec_plan;

struct tsr_session {
    ir_model *model;
    tsr_plugin **plugins;
    provider_inst **provs;
    size_t n_provs;
    partition part;
    exec_plan plan;
    ir_value **inputs; /* graph inputs the caller feeds (not initializers) */
    size_t n_inputs;
    /* per-input/output dims and symbols for tsr_io_info */
    int64_t **io_dims;
    const char ***io_syms;
};

/* Input/output descriptions for tsr_io_info (core/session_io.c). */
tsr_status *session_io_build(tsr_session *s);
void session_io_free(tsr_session *s);

tsr_status *exec_plan_build(tsr_session *s);
void exec_plan_free(exec_plan *p);
tsr_status *exec_run(tsr_session *s, const tsr_tensor *const *inputs, rt_tensor *outputs);

#endif
