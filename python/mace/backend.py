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
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        in_vis = [helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(np.asarray(x).dtype), np.asarray(x).shape)
            for name, x in zip(node.input, inputs) if name]
        outs = [name for name in node.output if name]
        graph = helper.make_graph([node], "run_node", in_vis,
                                  [helper.make_empty_tensor_value_info(n) for n in outs])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = min(model.ir_version, 10)
        # onnx >= 1.23's checker wants every graph output typed: take the types shape
        # inference gives, else outputs_info's (dtype, shape), else leave the check out.
        typed = _typed_outputs(model, outs, outputs_info)
        feeds = {name: np.asarray(x) for name, x in zip(node.input, inputs) if name}
        if typed is None:
            session = Session(model, num_threads=kwargs.get("num_threads", -1))
            return MaceRep(session, outs).run(feeds)
        del model.graph.output[:]
        model.graph.output.extend(typed)
        return cls.prepare(model, device, **kwargs).run(feeds)


def _typed_outputs(model: onnx.ModelProto, outs: list[str], outputs_info: Any) -> list | None:
    """A typed ValueInfoProto per output of a one-node model, or None where one stays unknown."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
        known = {vi.name: vi for vi in inferred.graph.output}
    except Exception:  # noqa: BLE001 - inference is best effort; outputs_info may still do
        known = {}
    typed = []
    for i, name in enumerate(outs):
        vi = known.get(name)
        t = vi.type.tensor_type if vi is not None and vi.type.HasField("tensor_type") else None
        if t is not None and t.elem_type and t.HasField("shape"):
            typed.append(vi)
        elif outputs_info is not None and i < len(outputs_info):
            dtype, shape = outputs_info[i]
            typed.append(helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape))
        else:
            return None
    return typed


prepare = MaceBackend.prepare
run_model = MaceBackend.run_model
run_node = MaceBackend.run_node
supports_device = MaceBackend.supports_device
