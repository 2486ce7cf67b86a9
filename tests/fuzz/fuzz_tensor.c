/* libFuzzer target: TensorProto, SequenceProto, OptionalProto and MapProto
 * input parsing (what `tessera run -i FILE.pb` and test cases feed), and
 * writing a parsed tensor back. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tessera/tessera.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    tsr_value *v = NULL;
    char *name = NULL;
    tsr_status *s = tsr_value_from_onnx_tensor(data, size, &v, &name);
    if (!s) {
        void *bytes = NULL;
        size_t n = 0;
        tsr_status_free(tsr_value_to_onnx_tensor(v, name, &bytes, &n));
        free(bytes);
    }
    tsr_status_free(s);
    tsr_value_free(v);
    free(name);
    static const int32_t kinds[] = {TSR_VALUE_SEQUENCE, TSR_VALUE_OPTIONAL, TSR_VALUE_MAP};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        v = NULL;
        name = NULL;
        tsr_status_free(tsr_value_from_onnx(data, size, kinds[k], &v, &name));
        tsr_value_free(v);
        free(name);
    }
    return 0;
}
