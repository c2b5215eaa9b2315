"""The subset of TensorFlow's GraphDef schema the TensorFlow front end reads, built at import.

No generated code: a proto3 FileDescriptorProto for GraphDef / NodeDef / AttrValue /
TensorProto / TensorShapeProto and the function library (FunctionDef) is assembled with
descriptor_pb2 (field numbers are those of tensorflow/core/framework/*.proto) and turned into
message classes. DataType is read as a
plain int (DT_FLOAT 1, DT_DOUBLE 2, DT_INT32 3, DT_UINT8 4, DT_INT8 6, DT_INT64 9, DT_BOOL 10,
DT_HALF 19).
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_PKG = "mace_tf"
_T = {"int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64, "float": _F.TYPE_FLOAT,
      "double": _F.TYPE_DOUBLE, "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING,
      "bytes": _F.TYPE_BYTES}

# message -> [(name, number, type, repeated, oneof)]; type "msg:Name" for messages.
_MESSAGES = {
    "Dim": [("size", 1, "int64", False, None), ("name", 2, "string", False, None)],
    "TensorShapeProto": [("dim", 2, "msg:Dim", True, None),
                         ("unknown_rank", 3, "bool", False, None)],
    "TensorProto": [("dtype", 1, "int32", False, None),
                    ("tensor_shape", 2, "msg:TensorShapeProto", False, None),
                    ("tensor_content", 4, "bytes", False, None),
                    ("half_val", 13, "int32", True, None),
                    ("float_val", 5, "float", True, None),
                    ("double_val", 6, "double", True, None),
                    ("int_val", 7, "int32", True, None),
                    ("string_val", 8, "bytes", True, None),
                    ("int64_val", 10, "int64", True, None),
                    ("bool_val", 11, "bool", True, None)],
    "ListValue": [("s", 2, "bytes", True, None), ("i", 3, "int64", True, None),
                  ("f", 4, "float", True, None), ("b", 5, "bool", True, None),
                  ("type", 6, "int32", True, None),
                  ("shape", 7, "msg:TensorShapeProto", True, None),
                  ("tensor", 8, "msg:TensorProto", True, None)],
    "AttrValue": [("list", 1, "msg:ListValue", False, "value"),
                  ("s", 2, "bytes", False, "value"), ("i", 3, "int64", False, "value"),
                  ("f", 4, "float", False, "value"), ("b", 5, "bool", False, "value"),
                  ("type", 6, "int32", False, "value"),
                  ("shape", 7, "msg:TensorShapeProto", False, "value"),
                  ("tensor", 8, "msg:TensorProto", False, "value"),
                  ("placeholder", 9, "string", False, "value"),
                  ("func", 10, "msg:NameAttrList", False, "value")],
    "NodeDef": [("name", 1, "string", False, None), ("op", 2, "string", False, None),
                ("input", 3, "string", True, None), ("device", 4, "string", False, None),
                ("attr", 5, "msg:NodeDef.AttrEntry", True, None)],
    "GraphDef": [("node", 1, "msg:NodeDef", True, None),
                 ("library", 2, "msg:FunctionDefLibrary", False, None)],
    # Functions (a call's body: Keras's jit-compiled grouped convolution, tf.function calls).
    "NameAttrList": [("name", 1, "string", False, None),
                     ("attr", 2, "msg:NameAttrList.AttrEntry", True, None)],
    "ArgDef": [("name", 1, "string", False, None)],
    "OpDef": [("name", 1, "string", False, None), ("input_arg", 2, "msg:ArgDef", True, None),
              ("output_arg", 3, "msg:ArgDef", True, None)],
    "FunctionDef": [("signature", 1, "msg:OpDef", False, None),
                    ("node_def", 3, "msg:NodeDef", True, None),
                    ("ret", 4, "msg:FunctionDef.RetEntry", True, None)],
    "FunctionDefLibrary": [("function", 1, "msg:FunctionDef", True, None)],
}
# message -> (entry name, value type) of its map fields
_MAPS = {"NodeDef": ("AttrEntry", "msg:AttrValue"), "NameAttrList": ("AttrEntry", "msg:AttrValue"),
         "FunctionDef": ("RetEntry", "string")}


def _fill(m, fields):
    oneofs: dict[str, int] = {}
    for fname, num, ftype, repeated, oneof in fields:
        f = m.field.add(name=fname, number=num)
        f.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
        if ftype.startswith("msg:"):
            f.type = _F.TYPE_MESSAGE
            f.type_name = f".{_PKG}.{ftype[4:]}"
        else:
            f.type = _T[ftype]
        if oneof:
            if oneof not in oneofs:
                oneofs[oneof] = len(m.oneof_decl)
                m.oneof_decl.add(name=oneof)
            f.oneof_index = oneofs[oneof]


def _build():
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{_PKG}.proto", package=_PKG, syntax="proto3")
    for mname, fields in _MESSAGES.items():
        m = fdp.message_type.add(name=mname)
        _fill(m, fields)
        if mname in _MAPS:
            ename, vtype = _MAPS[mname]
            entry = m.nested_type.add(name=ename)
            entry.options.map_entry = True
            _fill(entry, [("key", 1, "string", False, None),
                          ("value", 2, vtype, False, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    fd = pool.FindFileByName(fdp.name)
    return {name: message_factory.GetMessageClass(fd.message_types_by_name[name])
            for name in _MESSAGES}


_CLASSES = _build()
GraphDef = _CLASSES["GraphDef"]
NodeDef = _CLASSES["NodeDef"]
AttrValue = _CLASSES["AttrValue"]
TensorProto = _CLASSES["TensorProto"]
TensorShapeProto = _CLASSES["TensorShapeProto"]
FunctionDef = _CLASSES["FunctionDef"]

DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT8, DT_INT64, DT_BOOL, DT_HALF = \
    1, 2, 3, 4, 6, 9, 10, 19
