"""mace's model-format messages (NetDef, OperatorDef, ...) as Python protobuf classes.

They are built from `_generated/mace.desc`, a FileDescriptorSet that the CMake build (run by setup.py) compiles from
proto/mace.proto with protoc at build time. A descriptor set is plain protobuf data, so it
works with whatever protobuf runtime is installed (no generated-code version coupling).
"""
from __future__ import annotations

import os

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_DESC = os.path.join(os.path.dirname(__file__), "_generated", "mace.desc")


def _load():
    if not os.path.exists(_DESC):
        raise ImportError(f"{_DESC} is missing: build the package (pip install -e .) so "
                          "the build compiles proto/mace.proto")
    fds = descriptor_pb2.FileDescriptorSet()
    with open(_DESC, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"mace.{name}"))
            for name in ("NetDef", "OperatorDef", "Argument", "ConstTensor", "OutputShape",
                         "InputOutputInfo", "QuantizeActivationInfo")}, pool


_classes, _pool = _load()
NetDef = _classes["NetDef"]
OperatorDef = _classes["OperatorDef"]
Argument = _classes["Argument"]
ConstTensor = _classes["ConstTensor"]
OutputShape = _classes["OutputShape"]
InputOutputInfo = _classes["InputOutputInfo"]
QuantizeActivationInfo = _classes["QuantizeActivationInfo"]

_dt = _pool.FindEnumTypeByName("mace.DataType")
DataType = {v.name: v.number for v in _dt.values}
_df = _pool.FindEnumTypeByName("mace.DataFormat")
DataFormat = {v.name: v.number for v in _df.values}
