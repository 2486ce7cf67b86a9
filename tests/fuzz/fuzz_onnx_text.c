/* libFuzzer target: the parser of function bodies in ONNX's text syntax
 * (partitioner/onnx_text.c), on arbitrary text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "onnx_text.h"
#include "tessera/tessera.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    ir_function *f = NULL;
    tsr_status_free(onnx_text_parse_function(text, "fuzz", &f));
    ir_function_free(f);
    free(text);
    return 0;
}
