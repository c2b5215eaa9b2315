"""Strips an exported ONNX model for the tests: float initializers of more than 8 values
lose their data (tests refill them with seeded random values), exporter metadata goes.
Usage: python strip.py in.onnx out.onnx"""
import sys, onnx, numpy as np
from onnx import numpy_helper
src, dst = sys.argv[1], sys.argv[2]
m = onnx.load(src)
n = 0
for t in m.graph.initializer:
    a = numpy_helper.to_array(t)
    if a.dtype.kind == "f" and a.size > 8:
        dims, dt, name = list(t.dims), t.data_type, t.name
        t.Clear()
        t.name, t.data_type = name, dt
        t.dims.extend(dims)
        t.doc_string = "stripped"
        n += 1
for node in m.graph.node:  # exporter metadata (stack traces, names) is not needed
    del node.metadata_props[:]
    node.doc_string = ""
for vi in list(m.graph.value_info) + list(m.graph.input) + list(m.graph.output):
    del vi.metadata_props[:]
    vi.doc_string = ""
for t in m.graph.initializer:
    del t.metadata_props[:]
del m.graph.value_info[:]
del m.metadata_props[:]
onnx.save(m, dst)
