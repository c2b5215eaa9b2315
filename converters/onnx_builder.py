"""Builds an ONNX graph op by op, for the Caffe and TensorFlow front ends.

Those front ends translate their layers into ONNX nodes (opset 13) and hand the model to the
ONNX front end, so that folding, shape inference and the mace op handlers are shared by all
platforms.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from mace.errors import UnsupportedError

from . import ir

OPSET = 13


class OnnxBuilder:
    def __init__(self, name: str = "model"):
        self.name = name or "model"
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, np.ndarray] = {}
        self.inputs: list[tuple[str, list[int], np.dtype]] = []
        self.names: set[str] = set()
        self._handlers = None

    def unique(self, base: str) -> str:
        base = base or "t"
        name, k = base, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def reserve(self, names: Iterable[str]) -> None:
        self.names.update(names)

    def add_input(self, name: str, shape: list, dtype=np.float32) -> None:
        """shape: ints, None for a dim left symbolic (given a size per run)."""
        self.names.add(name)
        self.inputs.append((name, [None if d is None else int(d) for d in shape],
                            np.dtype(dtype)))

    def const(self, value, base: str = "const", dtype=None) -> str:
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == np.float64 and dtype is None:
            arr = arr.astype(np.float32)
        name = self.unique(base)
        self.inits[name] = np.array(arr, order="C")
        return name

    def set_const(self, name: str, value) -> None:
        self.names.add(name)
        self.inits[name] = np.array(value, order="C")

    def node(self, op: str, inputs: list[str], outputs=1, name: str | None = None,
             **attrs) -> list[str]:
        """Adds a node; outputs is a count (names made up) or a list of names."""
        base = name or op
        if isinstance(outputs, int):
            outputs = [self.unique(f"{base}_out{i}" if i else f"{base}_out")
                       for i in range(outputs)]
        else:
            self.names.update(outputs)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op, list(inputs), list(outputs),
                                           name=self.unique(base), **attrs))
        return list(outputs)

    def node1(self, op, inputs, out: str | None = None, name: str | None = None, **attrs) -> str:
        return self.node(op, inputs, [out] if out else 1, name=name, **attrs)[0]

    def has_handler(self, op: str) -> bool:
        if self._handlers is None:
            from . import onnx_ops
            self._handlers = onnx_ops.load_all()
        return op in self._handlers

    def require(self, what: str, *ops: str) -> None:
        """UnsupportedError naming `what` (a layer / node) if mace cannot run an ONNX op."""
        for op in ops:
            if not self.has_handler(op):
                raise UnsupportedError(f"{what} needs the ONNX op {op}, which mace does not "
                                       "support yet")

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        ins = [helper.make_tensor_value_info(
            n, helper.np_dtype_to_tensor_dtype(dt),
            [f"{n}_d{k}" if d is None else d for k, d in enumerate(s)])
            for n, s, dt in self.inputs]
        outs = [helper.make_tensor_value_info(o, 0, None) for o in outputs]
        inits = [numpy_helper.from_array(v, k) for k, v in self.inits.items()]
        g = helper.make_graph(self.nodes, self.name, ins, outs, initializer=inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 8
        return m

    def to_graph(self, outputs: list[str], formats: dict[str, str] | None = None) -> ir.Graph:
        from .onnx_converter import OnnxConverter
        graph = OnnxConverter(self.model(outputs), outputs=outputs).convert()
        for t in list(graph.inputs) + list(graph.outputs):
            if formats and t.name in formats and len(t.shape) == 4:
                t.data_format = formats[t.name]
        return graph
