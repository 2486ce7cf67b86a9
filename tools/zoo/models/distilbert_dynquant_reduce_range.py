"""distilbert_dynquant quantized with reduce_range=True: 7-bit weights in [-64, 64].

Imitates: `quantize_dynamic(model, out, weight_type=QuantType.QInt8, reduce_range=True)`,
ONNX Runtime's advice for CPUs without VNNI. Covers MatMulInteger as oneDNN int8 matmul on
those CPUs (docs/onednn.md, "int8 without VNNI").
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distilbert_dynquant  # noqa: E402

META = dict(distilbert_dynquant.META,
            about="DistilBERT quantize_dynamic (QInt8, reduce_range): 7-bit weights, MatMulInteger")


def build(size):
    return distilbert_dynquant.build(size, reduce_range=True)
