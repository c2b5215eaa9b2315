"""Standard architectures built as ONNX models with random weights, no downloads.

They are written the way torch.onnx (opset 13) exports torchvision models: Constant nodes,
unfolded BatchNormalization, Clip with min/max as inputs, Flatten->Gemm or a
Shape->Gather->Unsqueeze->Concat->Reshape chain before the classifier, ReduceMean over the
spatial axes. Used by the tests, the demo and the benchmarks.

    >>> import mace.zoo
    >>> model = mace.zoo.build("mobilenet_v2", width=0.25)
    >>> model.graph.input[0].name
    'input'
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class _Builder:
    """Accumulates nodes and initializers with torch-exporter naming habits."""

    def __init__(self, seed: int = 0, opset: int = 13):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.opset = opset
        self.count = 0

    def name(self, base: str) -> str:
        self.count += 1
        return f"{base}_{self.count}"

    def weight(self, shape, scale=None, base="w") -> str:
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        scale = scale if scale is not None else np.sqrt(2.0 / max(fan_in, 1))
        arr = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        return self.init(arr, base)

    def init(self, arr: np.ndarray, base="c") -> str:
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(arr, n))
        return n

    def constant(self, arr: np.ndarray) -> str:
        out = self.name("Constant_out")
        self.nodes.append(helper.make_node("Constant", [], [out], name=self.name("Constant"),
                                           value=numpy_helper.from_array(arr)))
        return out

    def node(self, op: str, inputs: list[str], n_out: int = 1, **attrs) -> str | list[str]:
        outs = [self.name(f"{op}_out") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=False, pad=None, dilation=1) -> str:
        w = self.weight((cout, cin // group, k, k))
        ins = [x, w] + ([self.init(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b")]
                        if bias else [])
        p = dilation * (k // 2) if pad is None else pad
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[p, p, p, p], group=group, dilations=[dilation, dilation])

    def bn(self, x, c) -> str:
        gamma = self.init(self.rng.uniform(0.5, 1.5, c).astype(np.float32), "gamma")
        beta = self.init(self.rng.uniform(-0.2, 0.2, c).astype(np.float32), "beta")
        mean = self.init(self.rng.uniform(-0.2, 0.2, c).astype(np.float32), "mean")
        var = self.init(self.rng.uniform(0.5, 1.5, c).astype(np.float32), "var")
        return self.node("BatchNormalization", [x, gamma, beta, mean, var], epsilon=1e-5,
                         momentum=0.9)

    def conv_bn(self, x, cin, cout, k, stride=1, group=1, act="relu", dilation=1) -> str:
        y = self.bn(self.conv(x, cin, cout, k, stride, group, dilation=dilation), cout)
        if act == "relu":
            y = self.node("Relu", [y])
        elif act == "relu6":
            y = self.node("Clip", [y, self.constant(np.array(0, np.float32)),
                                   self.constant(np.array(6, np.float32))])
        elif act == "hardswish":
            y = self.hardswish(y)
        return y

    def hardswish(self, x) -> str:
        """torch's Hardswish: the op from opset 14, before it x * HardSigmoid(x) (alpha 1/6,
        beta 0.5)."""
        if self.opset >= 14:
            return self.node("HardSwish", [x])
        return self.node("Mul", [x, self.node("HardSigmoid", [x], alpha=1 / 6, beta=0.5)])

    def classifier_reshape(self, x, cin, classes) -> str:
        """torch's x.view(x.size(0), -1) followed by Linear: Shape->Gather->Unsqueeze->Concat->Reshape."""
        shape = self.node("Shape", [x])
        batch = self.node("Gather", [shape, self.constant(np.array(0, np.int64))], axis=0)
        batch1 = self.node("Unsqueeze", [batch, self.constant(np.array([0], np.int64))])
        target = self.node("Concat", [batch1, self.constant(np.array([-1], np.int64))], axis=0)
        flat = self.node("Reshape", [x, target])
        return self.gemm(flat, cin, classes)

    def gemm(self, x, cin, cout) -> str:
        w = self.weight((cout, cin), scale=np.sqrt(1.0 / cin))
        b = self.init(self.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b")
        return self.node("Gemm", [x, w, b], alpha=1.0, beta=1.0, transB=1)

    def model(self, x_name, out, input_shape, name, out_shape=None) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, name,
            [helper.make_tensor_value_info(x_name, TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="mace.zoo")
        m.ir_version = 8
        return m


def _ch(c: int, width: float) -> int:
    return max(8, int(round(c * width / 8)) * 8)


def mobilenet_v1(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    b = _Builder(seed)
    c = _ch(32, width)
    x = b.conv_bn("input", 3, c, 3, 2)
    cfg = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)] + [(512, 1)] * 5 + \
          [(1024, 2), (1024, 1)]
    for out, s in cfg:
        o = _ch(out, width)
        x = b.conv_bn(x, c, c, 3, s, group=c)
        x = b.conv_bn(x, c, o, 1)
        c = o
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    return b.model("input", b.gemm(x, c, classes), [1, 3, size, size], "mobilenet_v1",
                   [1, classes])


def mobilenet_v2(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    b = _Builder(seed)
    c = _ch(32, width)
    x = b.conv_bn("input", 3, c, 3, 2, act="relu6")
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
           (6, 160, 3, 2), (6, 320, 1, 1)]
    for t, out, n, s in cfg:
        o = _ch(out, width)
        for i in range(n):
            stride = s if i == 0 else 1
            h = b.conv_bn(x, c, c * t, 1, act="relu6") if t != 1 else x
            h = b.conv_bn(h, c * t, c * t, 3, stride, group=c * t, act="relu6")
            h = b.conv_bn(h, c * t, o, 1, act=None)
            x = b.node("Add", [x, h]) if stride == 1 and c == o else h
            c = o
    last = _ch(1280, max(width, 1.0))
    x = b.conv_bn(x, c, last, 1, act="relu6")
    x = b.node("ReduceMean", [x], axes=[2, 3], keepdims=0)
    return b.model("input", b.gemm(x, last, classes), [1, 3, size, size], "mobilenet_v2",
                   [1, classes])


def _fire(b, x, cin, s, e):
    sq = b.node("Relu", [b.conv(x, cin, s, 1, bias=True)])
    e1 = b.node("Relu", [b.conv(sq, s, e, 1, bias=True)])
    e3 = b.node("Relu", [b.conv(sq, s, e, 3, bias=True)])
    return b.node("Concat", [e1, e3], axis=1), 2 * e


def squeezenet(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    b = _Builder(seed)
    c = _ch(64, width)
    x = b.node("Relu", [b.conv("input", 3, c, 3, 2, bias=True, pad=0)])
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    for i, (s, e) in enumerate([(16, 64), (16, 64), (32, 128), (32, 128), (48, 192), (48, 192),
                                (64, 256), (64, 256)]):
        x, c = _fire(b, x, c, _ch(s, width), _ch(e, width))
        if i in (1, 3):
            x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    x = b.node("Relu", [b.conv(x, c, classes, 1, bias=True)])
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    return b.model("input", x, [1, 3, size, size], "squeezenet1_1", [1, classes])


def _basic_block(b, x, cin, cout, stride):
    h = b.conv_bn(x, cin, cout, 3, stride)
    h = b.conv_bn(h, cout, cout, 3, 1, act=None)
    sc = b.conv_bn(x, cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else x
    return b.node("Relu", [b.node("Add", [h, sc])])


def _bottleneck(b, x, cin, mid, stride, dilation=1):
    cout = mid * 4
    h = b.conv_bn(x, cin, mid, 1)
    h = b.conv_bn(h, mid, mid, 3, stride, dilation=dilation)
    h = b.conv_bn(h, mid, cout, 1, act=None)
    sc = b.conv_bn(x, cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else x
    return b.node("Relu", [b.node("Add", [h, sc])])


def _resnext_block(b, x, cin, planes, stride, groups, group_width):
    """torchvision's ResNeXt Bottleneck: 1x1, grouped 3x3 (groups x group_width channels),
    1x1 to planes * 4."""
    mid, cout = groups * group_width, planes * 4
    h = b.conv_bn(x, cin, mid, 1)
    h = b.conv_bn(h, mid, mid, 3, stride, group=groups)
    h = b.conv_bn(h, mid, cout, 1, act=None)
    sc = b.conv_bn(x, cin, cout, 1, stride, act=None) if stride != 1 or cin != cout else x
    return b.node("Relu", [b.node("Add", [h, sc])])


def _resnet(blocks, bottleneck, width, size, classes, seed, name):
    b = _Builder(seed)
    c = _ch(64, width)
    x = b.conv_bn("input", 3, c, 7, 2)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for stage, n in enumerate(blocks):
        mid = _ch(64 * 2 ** stage, width)
        for i in range(n):
            stride = 2 if stage > 0 and i == 0 else 1
            if bottleneck:
                x = _bottleneck(b, x, c, mid, stride)
                c = mid * 4
            else:
                x = _basic_block(b, x, c, mid, stride)
                c = mid
    x = b.node("GlobalAveragePool", [x])
    return b.model("input", b.classifier_reshape(x, c, classes), [1, 3, size, size], name,
                   [1, classes])


def resnet18(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    return _resnet([2, 2, 2, 2], False, width, size, classes, seed, "resnet18")


def resnet50(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    return _resnet([3, 4, 6, 3], True, width, size, classes, seed, "resnet50")


def resnext50_32x4d(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """ResNeXt-50 32x4d (torchvision resnext50_32x4d): ResNet-50 with grouped 3x3s, 32 groups
    of 4 channels in stage 1 (8, 16, 32 in the later stages)."""
    b = _Builder(seed)
    c = _ch(64, width)
    x = b.conv_bn("input", 3, c, 7, 2)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for stage, n in enumerate([3, 4, 6, 3]):
        planes = _ch(64 * 2 ** stage, width)
        for i in range(n):
            x = _resnext_block(b, x, c, planes, 2 if stage > 0 and i == 0 else 1, 32,
                               max(1, planes * 2 // 32))
            c = planes * 4
    x = b.node("GlobalAveragePool", [x])
    return b.model("input", b.classifier_reshape(x, c, classes), [1, 3, size, size],
                   "resnext50_32x4d", [1, classes])


def densenet121(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """DenseNet-121 (torchvision densenet121): dense blocks of 6, 12, 24, 16 layers (BN, ReLU,
    1x1 to 4 x growth, BN, ReLU, 3x3 to growth, concatenated), growth 32, transitions halving
    the channels (BN, ReLU, 1x1, 2x2 average pool)."""
    b = _Builder(seed)
    growth, c = _ch(32, width), _ch(64, width)
    x = b.conv_bn("input", 3, c, 7, 2)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for block, n in enumerate([6, 12, 24, 16]):
        feats = [x]
        for _ in range(n):
            h = b.node("Concat", feats, axis=1) if len(feats) > 1 else feats[0]
            h = b.node("Relu", [b.bn(h, c)])
            h = b.conv_bn(h, c, 4 * growth, 1)
            feats.append(b.conv(h, 4 * growth, growth, 3))
            c += growth
        x = b.node("Concat", feats, axis=1)
        if block < 3:
            x = b.conv(b.node("Relu", [b.bn(x, c)]), c, c // 2, 1)
            c //= 2
            x = b.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("GlobalAveragePool", [b.node("Relu", [b.bn(x, c)])])
    return b.model("input", b.classifier_reshape(x, c, classes), [1, 3, size, size],
                   "densenet121", [1, classes])


def deeplabv3_resnet50(width=1.0, size=224, classes=21, seed=0,
                       output_stride=16) -> onnx.ModelProto:
    """DeepLabV3 (torchvision deeplabv3_resnet50's head): a ResNet-50 whose last stages trade
    their stride for dilation (output stride 16: stage 4 dilated 2, ASPP rates 6, 12, 18; 8:
    stages 3 and 4 dilated 2 and 4, rates 12, 24, 36, torchvision's default), ASPP (1x1, three
    dilated 3x3s and an image-pooling branch, concatenated), a 3x3 and a 1x1 classifier, and a
    bilinear resize back to the input size."""
    if output_stride not in (8, 16):
        raise ValueError(f"output_stride {output_stride}: 8 or 16")
    b = _Builder(seed)
    c = _ch(64, width)
    x = b.conv_bn("input", 3, c, 7, 2)
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    dilate = [False, output_stride == 8, True]
    dil, hw = 1, (size + 1) // 2
    hw = (hw + 1) // 2
    for stage, n in enumerate([3, 4, 6, 3]):
        mid = _ch(64 * 2 ** stage, width)
        first_dil, stride = dil, 2 if stage > 0 else 1
        if stage > 0 and dilate[stage - 1]:
            dil, stride = dil * 2, 1
        hw = (hw + stride - 1) // stride
        for i in range(n):
            x = _bottleneck(b, x, c, mid, stride if i == 0 else 1,
                            first_dil if i == 0 else dil)
            c = mid * 4
    a = _ch(256, width)
    rates = [6, 12, 18] if output_stride == 16 else [12, 24, 36]
    branches = [b.conv_bn(x, c, a, 1)] + [b.conv_bn(x, c, a, 3, dilation=r) for r in rates]
    pool = b.conv_bn(b.node("GlobalAveragePool", [x]), c, a, 1)
    branches.append(b.node("Resize", [pool, "", "", b.init(np.array([1, a, hw, hw], np.int64),
                                                          "sizes")],
                           mode="linear", coordinate_transformation_mode="pytorch_half_pixel"))
    y = b.conv_bn(b.node("Concat", branches, axis=1), 5 * a, a, 1)
    y = b.conv(b.conv_bn(y, a, a, 3), a, classes, 1, bias=True)
    y = b.node("Resize", [y, "", "", b.init(np.array([1, classes, size, size], np.int64),
                                            "sizes")],
               mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
    return b.model("input", y, [1, 3, size, size], "deeplabv3_resnet50",
                   [1, classes, size, size])


def _shuffle_block(b, x, cin, cout, stride, size):
    """torchvision ShuffleNetV2 InvertedResidual: chunk/branches, Concat, channel shuffle."""
    half = cout // 2
    if stride == 1:
        x1, x2 = b.node("Split", [x, b.constant(np.array([cin // 2, cin // 2], np.int64))], 2,
                        axis=1)
        h = b.conv_bn(x2, cin // 2, half, 1)
    else:
        x1 = b.conv_bn(x, cin, cin, 3, stride, group=cin, act=None)
        x1 = b.conv_bn(x1, cin, half, 1)
        h = b.conv_bn(x, cin, half, 1)
    h = b.conv_bn(h, half, half, 3, stride, group=half, act=None)
    h = b.conv_bn(h, half, half, 1)
    y = b.node("Concat", [x1, h], axis=1)
    y = b.node("Reshape", [y, b.constant(np.array([1, 2, half, size, size], np.int64))])
    y = b.node("Transpose", [y], perm=[0, 2, 1, 3, 4])
    return b.node("Reshape", [y, b.constant(np.array([1, cout, size, size], np.int64))])


def shufflenet_v2(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """ShuffleNetV2 x1.0 (stage channels 116/232/464 scaled by width, kept even)."""
    b = _Builder(seed)
    c = _ch(24, width)
    x = b.conv_bn("input", 3, c, 3, 2)
    s = (size - 1) // 2 + 1
    x = b.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    s = (s - 1) // 2 + 1
    for out, n in [(116, 4), (232, 8), (464, 4)]:
        o = 2 * max(4, int(round(out / 2 * width)))
        for i in range(n):
            stride = 2 if i == 0 else 1
            s = (s - 1) // stride + 1
            x = _shuffle_block(b, x, c, o, stride, s)
            c = o
    last = _ch(1024, max(width, 1.0))
    x = b.conv_bn(x, c, last, 1)
    x = b.node("ReduceMean", [x], axes=[2, 3], keepdims=0)
    return b.model("input", b.gemm(x, last, classes), [1, 3, size, size], "shufflenet_v2",
                   [1, classes])


def mnasnet(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """MNASNet 1.0 (torchvision mnasnet1_0): inverted residuals with 3x3 and 5x5 depthwise."""
    b = _Builder(seed)
    c = _ch(32, width)
    x = b.conv_bn("input", 3, c, 3, 2)
    x = b.conv_bn(x, c, c, 3, 1, group=c)
    o = _ch(16, width)
    x = b.conv_bn(x, c, o, 1, act=None)
    c = o
    for out, k, s, t, n in [(24, 3, 2, 3, 3), (40, 5, 2, 3, 3), (80, 5, 2, 6, 3), (96, 3, 1, 6, 2),
                            (192, 5, 2, 6, 4), (320, 3, 1, 6, 1)]:
        o = _ch(out, width)
        for i in range(n):
            stride = s if i == 0 else 1
            h = b.conv_bn(x, c, c * t, 1)
            h = b.conv_bn(h, c * t, c * t, k, stride, group=c * t)
            h = b.conv_bn(h, c * t, o, 1, act=None)
            x = b.node("Add", [h, x]) if stride == 1 and c == o else h
            c = o
    last = _ch(1280, max(width, 1.0))
    x = b.conv_bn(x, c, last, 1)
    x = b.node("ReduceMean", [x], axes=[2, 3], keepdims=0)
    return b.model("input", b.gemm(x, last, classes), [1, 3, size, size], "mnasnet",
                   [1, classes])


def _divisible8(v: float) -> int:
    """torchvision's _make_divisible(v, 8)."""
    n = max(8, int(v + 4) // 8 * 8)
    return n + 8 if n < 0.9 * v else n


def mobilenet_v3_large(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """MobileNetV3-Large (torchvision mobilenet_v3_large): inverted residuals with 3x3 and 5x5
    depthwise convolutions, ReLU or Hardswish, squeeze-excitations ending in a Hardsigmoid
    (opset 13: Hardswish written as x * HardSigmoid(x))."""
    b = _Builder(seed)
    c = _divisible8(16 * width)
    x = b.conv_bn("input", 3, c, 3, 2, act="hardswish")
    for k, exp, out, se, act, stride in [
            (3, 16, 16, 0, "relu", 1), (3, 64, 24, 0, "relu", 2), (3, 72, 24, 0, "relu", 1),
            (5, 72, 40, 1, "relu", 2), (5, 120, 40, 1, "relu", 1), (5, 120, 40, 1, "relu", 1),
            (3, 240, 80, 0, "hardswish", 2), (3, 200, 80, 0, "hardswish", 1),
            (3, 184, 80, 0, "hardswish", 1), (3, 184, 80, 0, "hardswish", 1),
            (3, 480, 112, 1, "hardswish", 1), (3, 672, 112, 1, "hardswish", 1),
            (5, 672, 160, 1, "hardswish", 2), (5, 960, 160, 1, "hardswish", 1),
            (5, 960, 160, 1, "hardswish", 1)]:
        e, o = _divisible8(exp * width), _divisible8(out * width)
        h = b.conv_bn(x, c, e, 1, act=act) if e != c else x
        h = b.conv_bn(h, e, e, k, stride, group=e, act=act)
        if se:
            sq = _divisible8(e // 4)
            g = b.node("GlobalAveragePool", [h])
            g = b.node("Relu", [b.conv(g, e, sq, 1, bias=True)])
            g = b.node("HardSigmoid", [b.conv(g, sq, e, 1, bias=True)], alpha=1 / 6, beta=0.5)
            h = b.node("Mul", [g, h])
        h = b.conv_bn(h, e, o, 1, act=None)
        x = b.node("Add", [h, x]) if stride == 1 and c == o else h
        c = o
    last = 6 * c
    x = b.conv_bn(x, c, last, 1, act="hardswish")
    x = b.node("Flatten", [b.node("GlobalAveragePool", [x])], axis=1)
    x = b.hardswish(b.gemm(x, last, 1280))
    return b.model("input", b.gemm(x, 1280, classes), [1, 3, size, size], "mobilenet_v3_large",
                   [1, classes])


def _silu(b, x) -> str:
    """torch's SiLU at opset 13: x * Sigmoid(x)."""
    return b.node("Mul", [x, b.node("Sigmoid", [x])])


def _mbconv(b, x, cin, cout, k, stride, t):
    """torchvision EfficientNet MBConv: expand, depthwise, squeeze-excitation, project."""
    c = cin * t
    h = _silu(b, b.conv_bn(x, cin, c, 1, act=None)) if t != 1 else x
    h = _silu(b, b.conv_bn(h, c, c, k, stride, group=c, act=None))
    sq = max(1, cin // 4)
    se = b.node("GlobalAveragePool", [h])
    se = _silu(b, b.conv(se, c, sq, 1, bias=True))
    se = b.node("Sigmoid", [b.conv(se, sq, c, 1, bias=True)])
    h = b.node("Mul", [se, h])
    h = b.conv_bn(h, c, cout, 1, act=None)
    return b.node("Add", [h, x]) if stride == 1 and cin == cout else h


def efficientnet_b0(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """EfficientNet-B0 (torchvision efficientnet_b0): MBConv with SE and SiLU."""
    b = _Builder(seed)
    c = _ch(32, width)
    x = _silu(b, b.conv_bn("input", 3, c, 3, 2, act=None))
    for t, k, s, out, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
                            (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        o = _ch(out, width)
        for i in range(n):
            x = _mbconv(b, x, c, o, k, s if i == 0 else 1, t)
            c = o
    last = _ch(1280, max(width, 1.0))
    x = _silu(b, b.conv_bn(x, c, last, 1, act=None))
    x = b.node("GlobalAveragePool", [x])
    x = b.node("Flatten", [x], axis=1)
    return b.model("input", b.gemm(x, last, classes), [1, 3, size, size], "efficientnet_b0",
                   [1, classes])


def lenet(seed=0) -> onnx.ModelProto:
    """A small MNIST-style CNN (1x1x28x28 -> 10)."""
    b = _Builder(seed)
    x = b.node("Relu", [b.conv("input", 1, 8, 5, bias=True, pad=2)])
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("Relu", [b.conv(x, 8, 16, 5, bias=True, pad=2)])
    x = b.node("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("Flatten", [x], axis=1)
    x = b.node("Relu", [b.gemm(x, 16 * 7 * 7, 64)])
    x = b.node("Softmax", [b.gemm(x, 64, 10)], axis=1)
    return b.model("input", x, [1, 1, 28, 28], "lenet", [1, 10])


def _layer_norm(b, x, d, eps=1e-12) -> str:
    """torch's LayerNorm at opset 13, written out: ReduceMean, Sub, Pow 2, ReduceMean, Add eps,
    Sqrt, Div, Mul weight, Add bias."""
    mean = b.node("ReduceMean", [x], axes=[-1])
    diff = b.node("Sub", [x, mean])
    var = b.node("ReduceMean", [b.node("Pow", [diff, b.constant(np.array(2.0, np.float32))])],
                 axes=[-1])
    std = b.node("Sqrt", [b.node("Add", [var, b.constant(np.array(eps, np.float32))])])
    y = b.node("Div", [diff, std])
    y = b.node("Mul", [y, b.init(b.rng.uniform(0.8, 1.2, d).astype(np.float32), "ln_w")])
    return b.node("Add", [y, b.init(b.rng.uniform(-0.1, 0.1, d).astype(np.float32), "ln_b")])


def _linear(b, x, cin, cout) -> str:
    """torch's Linear on a 3-D input: MatMul with the transposed weight, then Add bias."""
    y = b.node("MatMul", [x, b.weight((cin, cout), scale=np.sqrt(1.0 / cin))])
    return b.node("Add", [b.init(b.rng.uniform(-0.1, 0.1, cout).astype(np.float32), "b"), y])


def _gelu(b, x) -> str:
    """torch's exact GELU at opset 13: x * (1 + erf(x / sqrt 2)) * 0.5."""
    e = b.node("Erf", [b.node("Div", [x, b.constant(np.array(1.4142135, np.float32))])])
    y = b.node("Mul", [x, b.node("Add", [e, b.constant(np.array(1.0, np.float32))])])
    return b.node("Mul", [y, b.constant(np.array(0.5, np.float32))])


def _layer_norm2d(b, x, c) -> str:
    """torchvision's LayerNorm2d: the channels moved last, LayerNorm, moved back."""
    y = _layer_norm(b, b.node("Transpose", [x], perm=[0, 2, 3, 1]), c, eps=1e-6)
    return b.node("Transpose", [y], perm=[0, 3, 1, 2])


def convnext_tiny(width=1.0, size=224, classes=1000, seed=0) -> onnx.ModelProto:
    """ConvNeXt-T (torchvision convnext_tiny) as torch.onnx exports it at opset 13: a 4x4/4
    stem, blocks of a 7x7 depthwise convolution, the channels moved last (Transpose), LayerNorm
    written out, Linear to 4x, exact GELU, Linear back, moved first again, a per-channel layer
    scale (Mul) and the residual Add; 2x2/2 downsampling after a LayerNorm2d. Depths 3, 3, 9, 3,
    widths 96, 192, 384, 768. Layer scales are drawn from [0.5, 1] (torchvision starts them at
    1e-6, which would hide the blocks from an output check)."""
    b = _Builder(seed)
    dims = [_ch(d, width) for d in (96, 192, 384, 768)]
    x = b.conv("input", 3, dims[0], 4, 4, bias=True, pad=0)
    x = _layer_norm2d(b, x, dims[0])
    for stage, n in enumerate([3, 3, 9, 3]):
        c = dims[stage]
        if stage > 0:
            x = b.conv(_layer_norm2d(b, x, dims[stage - 1]), dims[stage - 1], c, 2, 2,
                       bias=True, pad=0)
        for _ in range(n):
            h = b.conv(x, c, c, 7, group=c, bias=True)
            h = _layer_norm(b, b.node("Transpose", [h], perm=[0, 2, 3, 1]), c, eps=1e-6)
            h = _linear(b, _gelu(b, _linear(b, h, c, 4 * c)), 4 * c, c)
            h = b.node("Transpose", [h], perm=[0, 3, 1, 2])
            scale = b.init(b.rng.uniform(0.5, 1.0, (c, 1, 1)).astype(np.float32), "layer_scale")
            x = b.node("Add", [b.node("Mul", [scale, h]), x])
    x = _layer_norm2d(b, b.node("GlobalAveragePool", [x]), dims[3])
    x = b.node("Flatten", [x], axis=1)
    return b.model("input", b.gemm(x, dims[3], classes), [1, 3, size, size], "convnext_tiny",
                   [1, classes])


def bert_encoder(layers=2, seq=128, hidden=768, heads=12, ffn=3072, seed=0) -> onnx.ModelProto:
    """BERT-base encoder layers (HuggingFace BertLayer, no attention mask) as torch.onnx exports
    them at opset 13: input [1, seq, hidden] -> [1, seq, hidden]."""
    b = _Builder(seed)
    dh = hidden // heads
    split = b.constant(np.array([1, seq, heads, dh], np.int64))
    merge = b.constant(np.array([1, seq, hidden], np.int64))
    x = "input"
    for _ in range(layers):
        q, k, v = (b.node("Reshape", [_linear(b, x, hidden, hidden), split]) for _ in range(3))
        q = b.node("Transpose", [q], perm=[0, 2, 1, 3])
        k = b.node("Transpose", [k], perm=[0, 2, 3, 1])
        v = b.node("Transpose", [v], perm=[0, 2, 1, 3])
        s = b.node("Div", [b.node("MatMul", [q, k]),
                           b.constant(np.array(np.sqrt(dh), np.float32))])
        ctx = b.node("MatMul", [b.node("Softmax", [s], axis=-1), v])
        ctx = b.node("Reshape", [b.node("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        x = _layer_norm(b, b.node("Add", [_linear(b, ctx, hidden, hidden), x]), hidden)
        h = _linear(b, _gelu(b, _linear(b, x, hidden, ffn)), ffn, hidden)
        x = _layer_norm(b, b.node("Add", [h, x]), hidden)
    return b.model("input", x, [1, seq, hidden], "bert_encoder", [1, seq, hidden])



def transformer_encoder(layers=4, seq=128, hidden=768, heads=12, ffn=3072, seed=0) -> onnx.ModelProto:
    """torch.nn.TransformerEncoder(TransformerEncoderLayer(hidden, heads, ffn, dropout=0,
    batch_first=True), layers) as torch's TorchScript exporter writes it at opset 17 (the
    fused fast path off, as benchmarks/gpu.py exports it), shapes static so Shape chains are
    folded to constants: per layer the packed in-projection (MatMul + Add), unflatten /
    unsqueeze / transpose / squeeze and a Gather per q, k, v, head split by Reshape +
    Transpose, scaled_dot_product_attention's symbolic (q and K^T each multiplied by
    sqrt(1/sqrt(dh)), MatMul, Softmax, MatMul), the heads merged and out_proj as a 2-D Gemm,
    the residual Add and LayerNormalization, the ReLU feed-forward. Input and output
    [1, seq, hidden]. torch deep-copies one layer into all, so the layers share weights."""
    b = _Builder(seed, opset=17)
    dh = hidden // heads

    def c64(v):
        return b.constant(np.array(v, np.int64))

    w_in = b.weight((hidden, 3 * hidden), scale=np.sqrt(1.0 / hidden))  # in_proj_weight^T
    b_in = b.init(b.rng.uniform(-0.1, 0.1, 3 * hidden).astype(np.float32), "in_proj_bias")
    w_out = b.weight((hidden, hidden), scale=np.sqrt(1.0 / hidden))
    b_out = b.init(b.rng.uniform(-0.1, 0.1, hidden).astype(np.float32), "out_proj_bias")
    w1 = b.weight((hidden, ffn), scale=np.sqrt(1.0 / hidden))
    b1 = b.init(b.rng.uniform(-0.1, 0.1, ffn).astype(np.float32), "b1")
    w2 = b.weight((ffn, hidden), scale=np.sqrt(1.0 / ffn))
    b2 = b.init(b.rng.uniform(-0.1, 0.1, hidden).astype(np.float32), "b2")
    ln = [(b.init(b.rng.uniform(0.8, 1.2, hidden).astype(np.float32), "ln_w"),
           b.init(b.rng.uniform(-0.1, 0.1, hidden).astype(np.float32), "ln_b")) for _ in range(2)]
    sqrt_scale = b.constant(np.array(np.sqrt(1.0 / np.sqrt(dh)), np.float32))
    x = "input"
    for _ in range(layers):
        t = b.node("Transpose", [x], perm=[1, 0, 2])                       # [seq, 1, hidden]
        proj = b.node("Add", [b.node("MatMul", [t, w_in]), b_in])
        proj = b.node("Reshape", [proj, c64([seq, 1, 3, hidden])])         # unflatten
        proj = b.node("Unsqueeze", [proj, c64([0])])
        proj = b.node("Transpose", [proj], perm=[3, 1, 2, 0, 4])
        proj = b.node("Squeeze", [proj, c64([-2])])                        # [3, seq, 1, hidden]
        qkv = []
        for i in range(3):
            h = b.node("Gather", [proj, c64(i)], axis=0)                    # [seq, 1, hidden]
            h = b.node("Transpose", [b.node("Reshape", [h, c64([seq, heads, dh])])],
                       perm=[1, 0, 2])                                      # [heads, seq, dh]
            qkv.append(b.node("Reshape", [h, c64([1, heads, seq, dh])]))
        q, k, v = qkv
        kt = b.node("Transpose", [k], perm=[0, 1, 3, 2])
        s = b.node("MatMul", [b.node("Mul", [q, sqrt_scale]), b.node("Mul", [kt, sqrt_scale])])
        ctx = b.node("MatMul", [b.node("Softmax", [s], axis=-1), v])       # [1, heads, seq, dh]
        ctx = b.node("Reshape", [b.node("Transpose", [ctx], perm=[2, 0, 1, 3]),
                                 c64([seq, hidden])])
        att = b.node("Gemm", [ctx, w_out, b_out], alpha=1.0, beta=1.0, transB=1)
        att = b.node("Transpose", [b.node("Reshape", [att, c64([seq, 1, hidden])])],
                     perm=[1, 0, 2])
        x = b.node("LayerNormalization", [b.node("Add", [x, att]), *ln[0]], axis=-1,
                   epsilon=1e-5)
        h = b.node("Relu", [b.node("Add", [b.node("MatMul", [x, w1]), b1])])
        h = b.node("Add", [b.node("MatMul", [h, w2]), b2])
        x = b.node("LayerNormalization", [b.node("Add", [x, h]), *ln[1]], axis=-1, epsilon=1e-5)
    return b.model("input", x, [1, seq, hidden], "transformer_encoder", [1, seq, hidden])

MODELS: dict[str, Callable[..., onnx.ModelProto]] = {
    "mobilenet_v1": mobilenet_v1,
    "mobilenet_v2": mobilenet_v2,
    "squeezenet1_1": squeezenet,
    "resnet18": resnet18,
    "resnet50": resnet50,
    "shufflenet_v2": shufflenet_v2,
    "mnasnet": mnasnet,
    "efficientnet_b0": efficientnet_b0,
}


# Not image models (no width/size/classes): built by name too, benchmarked on request.
OTHER_MODELS: dict[str, Callable[..., onnx.ModelProto]] = {
    "lenet": lenet,
    "bert_encoder": bert_encoder,
    "transformer_encoder": transformer_encoder,
    "resnext50_32x4d": resnext50_32x4d,
    "densenet121": densenet121,
    "deeplabv3_resnet50": deeplabv3_resnet50,
    "convnext_tiny": convnext_tiny,
    "mobilenet_v3_large": mobilenet_v3_large,
}


def build(name: str, **kw) -> onnx.ModelProto:
    """Builds the named architecture (see MODELS and OTHER_MODELS) with random weights."""
    fn = MODELS.get(name) or OTHER_MODELS.get(name)
    if fn is None:
        raise KeyError(f"unknown model {name!r}; known: {sorted(MODELS) + sorted(OTHER_MODELS)}")
    return fn(**kw)
