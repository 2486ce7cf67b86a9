"""qdq_resnet18 quantized with reduce_range=True: 7-bit weights in [-64, 64].

Imitates: `quantize_static(..., QuantFormat.QDQ, reduce_range=True)`, the setting ONNX
Runtime's documentation gives for CPUs without VNNI (AVX2, AVX-512 before Cascade Lake),
where u8 x s8 pair sums in 16 bits (vpmaddubsw) cannot saturate with such weights. Covers
Tessera's int8 primitives on those CPUs (docs/onednn.md, "int8 without VNNI").
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import qdq_resnet18  # noqa: E402

META = dict(qdq_resnet18.META, about="ResNet-18 QDQ with reduce_range (7-bit int8 weights), opset 13")


def build(size="small"):
    return qdq_resnet18.build(size, reduce_range=True)
