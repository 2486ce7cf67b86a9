/* libFuzzer target: the model loader, the graph check and shape inference
 * on arbitrary bytes. Every input must end in a model or a status, never a
 * crash, a sanitizer report or an unbounded allocation. */
#include <stddef.h>
#include <stdint.h>

#include "ir.h"
#include "tessera/tessera.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ir_model *m = NULL;
    tsr_status *s = ir_model_load_buffer(data, size, NULL, &m);
    if (!s && m) s = ir_infer_shapes(m->graph);
    tsr_status_free(s);
    ir_model_free(m);
    return 0;
}
