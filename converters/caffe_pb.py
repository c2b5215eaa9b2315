"""The subset of Caffe's caffe.proto the Caffe front end reads, built at import time.

No generated code: the FileDescriptorProto is assembled here with descriptor_pb2 (field
numbers are those of BVLC caffe.proto) and turned into message classes. Unknown fields
(fillers, data layers' parameters, ...) are skipped by the binary parser and, with
allow_unknown_field, by the text parser.
"""
from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_T = {"int32": _F.TYPE_INT32, "int64": _F.TYPE_INT64, "uint32": _F.TYPE_UINT32,
      "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "bool": _F.TYPE_BOOL,
      "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES}

# message -> [(name, number, type, label 'o'|'r'|'p' (packed repeated), default)]
# type: a scalar name above, "msg:Name" or "enum:Name".
_MESSAGES = {
    "BlobShape": [("dim", 1, "int64", "p", None)],
    "BlobProto": [("shape", 7, "msg:BlobShape", "o", None), ("data", 5, "float", "p", None),
                  ("double_data", 8, "double", "p", None),
                  ("num", 1, "int32", "o", "0"), ("channels", 2, "int32", "o", "0"),
                  ("height", 3, "int32", "o", "0"), ("width", 4, "int32", "o", "0")],
    "NetStateRule": [("phase", 1, "enum:Phase", "o", None)],
    "NetParameter": [("name", 1, "string", "o", None), ("input", 3, "string", "r", None),
                     ("input_shape", 8, "msg:BlobShape", "r", None),
                     ("input_dim", 4, "int32", "r", None),
                     ("layer", 100, "msg:LayerParameter", "r", None),
                     ("layers", 2, "msg:V1LayerParameter", "r", None)],
    "ConvolutionParameter": [
        ("num_output", 1, "uint32", "o", None), ("bias_term", 2, "bool", "o", "true"),
        ("pad", 3, "uint32", "r", None), ("kernel_size", 4, "uint32", "r", None),
        ("group", 5, "uint32", "o", "1"), ("stride", 6, "uint32", "r", None),
        ("pad_h", 9, "uint32", "o", "0"), ("pad_w", 10, "uint32", "o", "0"),
        ("kernel_h", 11, "uint32", "o", None), ("kernel_w", 12, "uint32", "o", None),
        ("stride_h", 13, "uint32", "o", None), ("stride_w", 14, "uint32", "o", None),
        ("axis", 16, "int32", "o", "1"), ("dilation", 18, "uint32", "r", None)],
    "PoolingParameter": [
        ("pool", 1, "enum:PoolMethod", "o", "MAX"), ("kernel_size", 2, "uint32", "o", None),
        ("stride", 3, "uint32", "o", "1"), ("pad", 4, "uint32", "o", "0"),
        ("kernel_h", 5, "uint32", "o", None), ("kernel_w", 6, "uint32", "o", None),
        ("stride_h", 7, "uint32", "o", None), ("stride_w", 8, "uint32", "o", None),
        ("pad_h", 9, "uint32", "o", "0"), ("pad_w", 10, "uint32", "o", "0"),
        ("global_pooling", 12, "bool", "o", "false"),
        ("round_mode", 13, "enum:RoundMode", "o", "CEIL")],
    "InnerProductParameter": [
        ("num_output", 1, "uint32", "o", None), ("bias_term", 2, "bool", "o", "true"),
        ("axis", 5, "int32", "o", "1"), ("transpose", 6, "bool", "o", "false")],
    "ReLUParameter": [("negative_slope", 1, "float", "o", "0")],
    "PReLUParameter": [("channel_shared", 2, "bool", "o", "false")],
    "ELUParameter": [("alpha", 1, "float", "o", "1")],
    "EltwiseParameter": [("operation", 1, "enum:EltwiseOp", "o", "SUM"),
                         ("coeff", 2, "float", "r", None)],
    "ConcatParameter": [("concat_dim", 1, "uint32", "o", None), ("axis", 2, "int32", "o", "1")],
    "SliceParameter": [("slice_dim", 1, "uint32", "o", None),
                       ("slice_point", 2, "uint32", "r", None), ("axis", 3, "int32", "o", "1")],
    "SoftmaxParameter": [("axis", 2, "int32", "o", "1")],
    "BatchNormParameter": [("use_global_stats", 1, "bool", "o", None),
                           ("eps", 3, "float", "o", "1e-5")],
    "ScaleParameter": [("axis", 1, "int32", "o", "1"), ("num_axes", 2, "int32", "o", "1"),
                       ("bias_term", 4, "bool", "o", "false")],
    "BiasParameter": [("axis", 1, "int32", "o", "1"), ("num_axes", 2, "int32", "o", "1")],
    "FlattenParameter": [("axis", 1, "int32", "o", "1"), ("end_axis", 2, "int32", "o", "-1")],
    "ReshapeParameter": [("shape", 1, "msg:BlobShape", "o", None),
                         ("axis", 2, "int32", "o", "0"), ("num_axes", 3, "int32", "o", "-1")],
    "CropParameter": [("axis", 1, "int32", "o", "2"), ("offset", 2, "uint32", "r", None)],
    "PowerParameter": [("power", 1, "float", "o", "1"), ("scale", 2, "float", "o", "1"),
                       ("shift", 3, "float", "o", "0")],
    "LRNParameter": [("local_size", 1, "uint32", "o", "5"), ("alpha", 2, "float", "o", "1"),
                     ("beta", 3, "float", "o", "0.75"),
                     ("norm_region", 4, "enum:NormRegion", "o", "ACROSS_CHANNELS"),
                     ("k", 5, "float", "o", "1")],
    "InputParameter": [("shape", 1, "msg:BlobShape", "r", None)],
    "PermuteParameter": [("order", 1, "uint32", "r", None)],
}

_LAYER_PARAMS = [  # (field, number in LayerParameter, number in V1LayerParameter or None)
    ("batch_norm_param", 139, None), ("bias_param", 141, None), ("concat_param", 104, 9),
    ("convolution_param", 106, 10), ("crop_param", 144, None), ("dropout_param", 108, None),
    ("eltwise_param", 110, 24), ("elu_param", 140, None), ("flatten_param", 135, None),
    ("inner_product_param", 117, 17), ("input_param", 143, None), ("lrn_param", 118, 18),
    ("pooling_param", 121, 19), ("power_param", 122, 21), ("prelu_param", 131, None),
    ("relu_param", 123, 30), ("reshape_param", 133, None), ("scale_param", 142, None),
    ("softmax_param", 125, 39), ("slice_param", 126, 31), ("permute_param", 202, None),
]
_PARAM_TYPE = {"batch_norm_param": "BatchNormParameter", "bias_param": "BiasParameter",
               "concat_param": "ConcatParameter", "convolution_param": "ConvolutionParameter",
               "crop_param": "CropParameter", "dropout_param": None,
               "eltwise_param": "EltwiseParameter", "elu_param": "ELUParameter",
               "flatten_param": "FlattenParameter",
               "inner_product_param": "InnerProductParameter",
               "input_param": "InputParameter", "lrn_param": "LRNParameter",
               "pooling_param": "PoolingParameter", "power_param": "PowerParameter",
               "prelu_param": "PReLUParameter", "relu_param": "ReLUParameter",
               "reshape_param": "ReshapeParameter", "scale_param": "ScaleParameter",
               "softmax_param": "SoftmaxParameter", "slice_param": "SliceParameter",
               "permute_param": "PermuteParameter"}

_MESSAGES["LayerParameter"] = [
    ("name", 1, "string", "o", None), ("type", 2, "string", "o", None),
    ("bottom", 3, "string", "r", None), ("top", 4, "string", "r", None),
    ("phase", 10, "enum:Phase", "o", None), ("blobs", 7, "msg:BlobProto", "r", None),
    ("include", 8, "msg:NetStateRule", "r", None), ("exclude", 9, "msg:NetStateRule", "r", None),
] + [(f, n, f"msg:{_PARAM_TYPE[f]}", "o", None) for f, n, _ in _LAYER_PARAMS if _PARAM_TYPE[f]]
_MESSAGES["V1LayerParameter"] = [
    ("bottom", 2, "string", "r", None), ("top", 3, "string", "r", None),
    ("name", 4, "string", "o", None), ("type", 5, "enum:LayerType", "o", None),
    ("blobs", 6, "msg:BlobProto", "r", None),
    ("include", 32, "msg:NetStateRule", "r", None), ("exclude", 33, "msg:NetStateRule", "r", None),
] + [(f, v1, f"msg:{_PARAM_TYPE[f]}", "o", None) for f, _, v1 in _LAYER_PARAMS
     if v1 is not None and _PARAM_TYPE[f]]

_ENUMS = {
    "Phase": [("TRAIN", 0), ("TEST", 1)],
    "PoolMethod": [("MAX", 0), ("AVE", 1), ("STOCHASTIC", 2)],
    "RoundMode": [("CEIL", 0), ("FLOOR", 1)],
    "EltwiseOp": [("PROD", 0), ("SUM", 1), ("MAX", 2)],
    "NormRegion": [("ACROSS_CHANNELS", 0), ("WITHIN_CHANNEL", 1)],
    "LayerType": [("NONE", 0), ("ABSVAL", 35), ("ACCURACY", 1), ("ARGMAX", 30), ("BNLL", 2),
                  ("CONCAT", 3), ("CONTRASTIVE_LOSS", 37), ("CONVOLUTION", 4), ("DATA", 5),
                  ("DECONVOLUTION", 39), ("DROPOUT", 6), ("DUMMY_DATA", 32),
                  ("EUCLIDEAN_LOSS", 7), ("ELTWISE", 25), ("EXP", 38), ("FLATTEN", 8),
                  ("HDF5_DATA", 9), ("HDF5_OUTPUT", 10), ("HINGE_LOSS", 28), ("IM2COL", 11),
                  ("IMAGE_DATA", 12), ("INFOGAIN_LOSS", 13), ("INNER_PRODUCT", 14), ("LRN", 15),
                  ("MEMORY_DATA", 29), ("MULTINOMIAL_LOGISTIC_LOSS", 16), ("MVN", 34),
                  ("POOLING", 17), ("POWER", 26), ("RELU", 18), ("SIGMOID", 19),
                  ("SIGMOID_CROSS_ENTROPY_LOSS", 27), ("SILENCE", 36), ("SOFTMAX", 20),
                  ("SOFTMAX_LOSS", 21), ("SPLIT", 22), ("SLICE", 33), ("TANH", 23),
                  ("WINDOW_DATA", 24), ("THRESHOLD", 31)],
}
_PKG = "mace_caffe"


def _build():
    fdp = descriptor_pb2.FileDescriptorProto(name=f"{_PKG}.proto", package=_PKG, syntax="proto2")
    for ename, values in _ENUMS.items():
        # Enum values are scoped to their parent: one holder message per enum keeps
        # values such as MAX (PoolMethod, EltwiseOp) apart, as caffe.proto's nesting does.
        e = fdp.message_type.add(name=f"E{ename}").enum_type.add(name=ename)
        for vname, num in values:
            e.value.add(name=vname, number=num)
    for mname, fields in _MESSAGES.items():
        m = fdp.message_type.add(name=mname)
        for fname, num, ftype, label, default in fields:
            f = m.field.add(name=fname, number=num)
            f.label = _F.LABEL_OPTIONAL if label == "o" else _F.LABEL_REPEATED
            if label == "p":
                f.options.packed = True
            if ftype.startswith("msg:"):
                f.type = _F.TYPE_MESSAGE
                f.type_name = f".{_PKG}.{ftype[4:]}"
            elif ftype.startswith("enum:"):
                f.type = _F.TYPE_ENUM
                f.type_name = f".{_PKG}.E{ftype[5:]}.{ftype[5:]}"
            else:
                f.type = _T[ftype]
            if default is not None:
                f.default_value = default
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    fd = pool.FindFileByName(fdp.name)
    return {name: message_factory.GetMessageClass(fd.message_types_by_name[name])
            for name in _MESSAGES}


_CLASSES = _build()
NetParameter = _CLASSES["NetParameter"]
LayerParameter = _CLASSES["LayerParameter"]
V1LayerParameter = _CLASSES["V1LayerParameter"]
BlobProto = _CLASSES["BlobProto"]
BlobShape = _CLASSES["BlobShape"]
