"""mace as an ONNX backend (onnx.backend.base.Backend): prepare / run_model / run_node.

    >>> import mace.backend, numpy as np
    >>> from onnx import helper, TensorProto
    >>> node = helper.make_node("Relu", ["x"], ["y"])
    >>> mace.backend.run_node(node, [np.array([-1.0, 2.0], np.float32)])[0].tolist()
    [0.0, 2.0]
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from .session import Session


class MaceRep(BackendRep):
    """A prepared model: run(inputs) with inputs in the model's input order (or a dict)."""

    def __init__(self, session: Session, output_names: list[str]):
        self.session = session
        self.output_names = output_names

    def run(self, inputs: Any, **kwargs: Any) -> tuple:
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            feeds = {spec.name: x for spec, x in zip(self.session.inputs, inputs)}
        out = self.session.run(feeds)
        return namedtupledict("Outputs", self.output_names)(*[out[n] for n in self.output_names])


class MaceBackend(Backend):
    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> MaceRep:
        super().prepare(model, device, **kwargs)
        num_threads = kwargs.get("num_threads", -1)
        session = Session(model, num_threads=num_threads)
        return MaceRep(session, [o.name for o in model.graph.output])

    @classmethod
    def run_model(cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU",
                  **kwargs: Any) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Sequence[np.ndarray], device: str = "CPU",
                 outputs_info: Any = None, **kwargs: Any) -> tuple:
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        in_vis = [helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.asarray(x).dtype), np.asarray(x).shape)
            for name, x in zip(node.input, inputs) if name]
        out_vis = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
        graph = helper.make_graph([node], "run_node", in_vis, out_vis)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = min(model.ir_version, 10)
        feeds = {name: np.asarray(x) for name, x in zip(node.input, inputs) if name}
        return cls.prepare(model, device, **kwargs).run(feeds)


prepare = MaceBackend.prepare
run_model = MaceBackend.run_model
run_node = MaceBackend.run_node
supports_device = MaceBackend.supports_device
