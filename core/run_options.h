/* tsr_run_options (core/run_options.c). */
#ifndef TESSERA_CORE_RUN_OPTIONS_H
#define TESSERA_CORE_RUN_OPTIONS_H

#include <stdatomic.h>

#include "run_budget.h"
#include "tessera/tessera.h"

struct tsr_run_options {
    char *tag;                 /* NULL: none */
    _Atomic int32_t terminate; /* set from any thread */
    int64_t timeout_ms;        /* 0: none */
};

/* Points b at o's terminate flag and sets its deadline from now (o may be
 * NULL: nothing changes). */
void run_options_apply(const tsr_run_options *o, run_budget *b);

#endif
