"""Writing backend-style test cases, shared by the kernel case generators
here (kernel_cases.py, fastpath_cases.py, reference_speed_cases.py): a
model of the given nodes and its inputs and expected outputs as .pb files,
the layout `tessera test` reads."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.float64): TensorProto.DOUBLE,
         np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.int32): TensorProto.INT32,
         np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
         np.dtype(object): TensorProto.STRING}


def save_case(out_dir, name, nodes, inputs, outputs, inits=(), opset=13):
    """nodes: one node or a list; inputs, outputs, inits: (name, array)
    lists. Writes OUT_DIR/NAME/{model.onnx, test_data_set_0/} and prints
    the case folder."""
    if not isinstance(nodes, list):
        nodes = [nodes]
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, TYPES[a.dtype], a.shape) for n, a in inputs],
                          [helper.make_tensor_value_info(n, TYPES[a.dtype], a.shape) for n, a in outputs],
                          [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    d = os.path.join(out_dir, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for prefix, arrs in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrs):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (prefix, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
    print(d)
