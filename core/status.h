/* Status objects: creation with a formatted message. */
#ifndef TESSERA_CORE_STATUS_H
#define TESSERA_CORE_STATUS_H

#include "tessera/types.h"

#if defined(__GNUC__)
#define TSR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TSR_PRINTF(a, b)
#endif

tsr_status *tsr_error(int32_t code, const char *fmt, ...) TSR_PRINTF(2, 3);
/* A new status whose message is `prefix: <old message>`; frees `inner`. */
tsr_status *tsr_error_wrap(tsr_status *inner, const char *fmt, ...) TSR_PRINTF(2, 3);
#define TSR_NO_MEMORY() tsr_error(TSR_ERR_NO_MEMORY, "out of memory")
/* Evaluates expr (a tsr_status *); returns it from the enclosing function when set. */
#define TSR_TRY(expr)                                                                                                  \
    do {                                                                                                               \
        tsr_status *tsr_try_s_ = (expr);                                                                               \
        if (tsr_try_s_) return tsr_try_s_;                                                                             \
    } while (0)

#endif
