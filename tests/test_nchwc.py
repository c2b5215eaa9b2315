"""The blocked activation layout NCHWc (csrc/runtime/cpu/layout.h): chains of pointwise and depthwise
convolutions and element-wise activations run on [N, ceil(C/b), H, W, b] tensors between
Reorder ops, the channel tail of the last block zero-padded (kernels/cpu/nchwc.h). Each model is
checked against onnxruntime and against the same model with the pass turned off (MACE_NCHWC=0);
the profile shows where the Reorders went. Channel counts that are not multiples of the block
(3, 12, 20, 24, 40, ...) are blocked like the others."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

import mace
from helpers import assert_close, make_model, nchwc_block, network_atol, rand, run_ort
from mace.converters import transforms


BLOCK = nchwc_block()


class Net:
    """A small ONNX graph builder: convolutions with random weights."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def _name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def conv(self, x, cin, cout, k=1, stride=1, group=1, pads=None, bias=True, dil=1):
        w = self._name("w")
        kh, kw = (k, k) if isinstance(k, int) else k
        fan_in = cin // group * kh * kw
        self.inits.append((w, (self.rng.standard_normal((cout, cin // group, kh, kw)) /
                               np.sqrt(fan_in)).astype(np.float32)))
        inputs = [x, w]
        if bias:
            b = self._name("b")
            self.inits.append((b, self.rng.uniform(-0.5, 0.5, cout).astype(np.float32)))
            inputs.append(b)
        y = self._name("conv")
        pads = pads if pads is not None else [dil * (kh // 2), dil * (kw // 2)] * 2
        self.nodes.append(helper.make_node("Conv", inputs, [y], kernel_shape=[kh, kw],
                                           strides=[stride, stride], group=group, pads=pads,
                                           dilations=[dil, dil]))
        return y

    def op(self, op_type, inputs, **attrs):
        y = self._name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [y], **attrs))
        return y

    def bn(self, x, c):
        """ONNX BatchNormalization with random statistics."""
        names = [self._name(k) for k in ("g", "be", "mu", "var")]
        vals = [self.rng.uniform(0.5, 1.5, c), self.rng.uniform(-0.5, 0.5, c),
                self.rng.uniform(-0.5, 0.5, c), self.rng.uniform(0.5, 2.0, c)]
        self.inits += [(n, v.astype(np.float32)) for n, v in zip(names, vals)]
        return self.op("BatchNormalization", [x] + names)

    def clip6(self, x):
        lo, hi = self._name("lo"), self._name("hi")
        self.inits += [(lo, np.array(0, np.float32)), (hi, np.array(6, np.float32))]
        return self.op("Clip", [x, lo, hi])

    def model(self, x_shape, outputs, opset=13):
        return make_model(self.nodes, [("x", np.float32, x_shape)],
                          [(o, np.float32, [None] * 4) for o in outputs], self.inits,
                          opset=opset)


def _types(sess, x):
    return [p["type"] for p in sess.profile(x, rounds=1, warmup=0)]


def _check(model, x, monkeypatch, threads=(1, 2)):
    """mace with the pass on (threads 1 and 2) and off against onnxruntime; returns the op
    types of the blocked run."""
    ref = run_ort(model, {"x": x})
    names = [o.name for o in model.graph.output]
    types = None
    for t in threads:
        sess = mace.Session(model, num_threads=t)
        out = sess.run({"x": x})
        for name, r in zip(names, ref):
            assert_close(out[name], r, what=f"{name} (NCHWc pass on, {t} threads)")
        types = types or _types(sess, x)
    monkeypatch.setenv("MACE_NCHWC", "0")
    sess = mace.Session(model, num_threads=1)
    out = sess.run({"x": x})
    for name, r in zip(names, ref):
        assert_close(out[name], r, what=f"{name} (NCHWc pass off)")
    assert "Reorder" not in _types(sess, x)
    monkeypatch.delenv("MACE_NCHWC")
    return types


def _inverted_residual(g, x, c, expand, k, stride, pads=None, act="clip"):
    h = g.conv(x, c, c * expand)
    h = g.clip6(h) if act == "clip" else g.op("Relu", [h])
    h = g.conv(h, c * expand, c * expand, k=k, stride=stride, group=c * expand, pads=pads)
    h = g.clip6(h) if act == "clip" else g.op("Relu", [h])
    y = g.conv(h, c * expand, c)
    return g.op("Add", [y, x]) if stride == 1 else y


def _one_chain(types):
    """Whether the profile is one blocked chain: a Reorder in first, one out last."""
    return types.count("Reorder") == 2 and types[0] == "Reorder" and types[-1] == "Reorder"


@pytest.mark.parametrize("n,c,hw,k,stride,pads", [
    (1, 16, 14, 3, 1, None),
    (2, 32, 9, 3, 2, None),
    (1, 16, 11, 5, 1, [1, 3, 3, 1]),
    (1, 48, 8, 7, 2, [3, 3, 3, 3]),
    (1, 64, 1, 3, 1, None),
    (3, 16, 6, 1, 1, [0, 0, 0, 0]),
    # channel tails: 24 -> 48, 72 (MobileNetV2); 40 -> 80, 120 (MNASNet); 20 -> 40, 60; 3 -> 6, 9
    (1, 24, 10, 3, 1, None),
    (2, 40, 9, 5, 2, None),
    (1, 20, 7, 3, 2, [0, 1, 1, 0]),
    (2, 3, 8, 3, 1, None),
])
def test_inverted_residual_chains_match(monkeypatch, n, c, hw, k, stride, pads):
    g = Net(seed=c + hw + k)
    h = _inverted_residual(g, "x", c, 2, k, stride, pads)
    h = _inverted_residual(g, h, c, 3, k, 1, None, act="relu")
    model = g.model([n, c, hw, hw], [h])
    types = _check(model, rand(n, c, hw, hw, seed=1), monkeypatch)
    if BLOCK:
        # one Reorder in (x), one out (the model output); the residual reads x blocked
        assert _one_chain(types), types
    else:
        assert "Reorder" not in types


def test_channel_tails_are_blocked(monkeypatch):
    g = Net(seed=3)
    h = _inverted_residual(g, "x", 12, 2, 3, 1)  # 12 and 24 channels: not multiples of 16 or 8
    h = _inverted_residual(g, h, 12, 2, 3, 1)
    model = g.model([1, 12, 10, 10], [h])
    types = _check(model, rand(1, 12, 10, 10, seed=2), monkeypatch)
    assert _one_chain(types) if BLOCK else "Reorder" not in types, types


@pytest.mark.parametrize("keepdims", [0, 1])
def test_global_mean_head_runs_in_the_chain(monkeypatch, keepdims):
    """ReduceMean over H and W after a chain of convolutions (the head of MNASNet and
    MobileNetV2) converts to a global average Pooling that runs blocked as the chain's last op:
    the Reorder back to NCHW follows it and moves [N, C, 1, 1], not the whole map."""
    g = Net(seed=9)
    h = "x"
    for cin, cout in [(20, 32), (32, 48), (48, 64), (64, 64), (64, 40)]:
        h = g.op("Relu", [g.conv(h, cin, cout)])
    m = g.op("ReduceMean", [h], axes=[2, 3], keepdims=keepdims)
    model = make_model(g.nodes, [("x", np.float32, [2, 20, 7, 5])],
                       [(m, np.float32, [2, 40, 1, 1] if keepdims else [2, 40])], g.inits,
                       opset=13)
    types = _check(model, rand(2, 20, 7, 5, seed=4), monkeypatch)
    assert "Reduce" not in types, types
    tail = ["Pooling", "Reorder"] + ([] if keepdims else ["Reshape"])
    assert types[-len(tail):] == tail if BLOCK else "Reorder" not in types, types


@pytest.mark.parametrize("c", [16, 20])
def test_blocked_tensors_read_outside_the_chain_and_returned(monkeypatch, c):
    """A mid-chain tensor that is also a model output and is read by an op that cannot run
    blocked (Softmax over channels) goes back to NCHW once, under its own name; with a channel
    tail the padded lanes stay out of it."""
    g = Net(seed=4)
    a = g.op("Relu", [g.conv("x", c, c)])
    for _ in range(3):  # a chain keeps more than two convolutions per Reorder (three here)
        a = g.op("Relu", [g.conv(a, c, c)])
    b = g.op("Relu", [g.conv(a, c, c, k=3, group=c)])
    d = g.conv(b, c, 2 * c)
    e = g.conv(g.op("Relu", [d]), 2 * c, c, bias=False)
    s = g.op("Softmax", [b], axis=1)
    model = g.model([2, c, 7, 5], [e, b, s])
    types = _check(model, rand(2, c, 7, 5, seed=3), monkeypatch)
    if BLOCK:
        assert types.count("Reorder") == 3, types  # x in; b and e out


# Every activation a chain can hold, with act(0) != 0 for SIGMOID (0.5) and HARDSIGMOID (beta):
# the padded lanes then hold non-zero values that only zero weights may meet.
ACTIVATIONS = {
    "relu": lambda g, h: g.op("Relu", [h]),
    "relux": lambda g, h: g.clip6(h),
    "leakyrelu": lambda g, h: g.op("LeakyRelu", [h], alpha=0.2),
    "sigmoid": lambda g, h: g.op("Sigmoid", [h]),
    "tanh": lambda g, h: g.op("Tanh", [h]),
    "hardsigmoid": lambda g, h: g.op("HardSigmoid", [h], alpha=0.3, beta=0.6),
    "hardswish": lambda g, h: g.op("HardSwish", [h]),
    "elu": lambda g, h: g.op("Elu", [h], alpha=0.7),
    "swish": lambda g, h: g.op("Mul", [h, g.op("Sigmoid", [h])]),
}


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
@pytest.mark.parametrize("c", [20, 40])
def test_activations_on_channel_tails(monkeypatch, act, c):
    """A chain over C and 2C channels (20 and 40 have tails under AVX-512, 20 under AVX2),
    then C + 2 (a tail under every block):
    the activation fused into the convolutions, standalone (on a tensor two ops read, so it
    stays an Activation op over the padded storage) and after a residual add."""
    f = ACTIVATIONS[act]
    g = Net(seed=7)
    h = f(g, g.conv("x", c, 2 * c))                        # fused into the pointwise
    d = g.conv(h, 2 * c, 2 * c, k=3, group=2 * c)
    a = f(g, d)                                            # d is read twice: standalone
    p = g.conv(a, 2 * c, c)
    q = g.conv(d, 2 * c, c, bias=False)
    y = f(g, g.op("Add", [p, q]))                          # the residual, then the activation
    y = f(g, g.conv(y, c, c, k=3, stride=2, group=c))
    y = g.conv(y, c, c + 2)                                # 22 / 42: a tail for every block
    model = g.model([2, c, 9, 7], [y], opset=14)
    types = _check(model, rand(2, c, 9, 7, seed=8) * 3, monkeypatch)
    if BLOCK:
        assert _one_chain(types), types


def test_short_chains_are_not_blocked(monkeypatch):
    """One convolution between two Reorders would cost more than it gains (a chain needs
    more than two convolutions per Reorder)."""
    g = Net(seed=5)
    y = g.op("Softmax", [g.op("Relu", [g.conv("x", 16, 16)])], axis=1)
    model = g.model([1, 16, 8, 8], [y])
    assert "Reorder" not in _check(model, rand(1, 16, 8, 8, seed=4), monkeypatch)
    # pointwise, depthwise, pointwise between two Reorders (a ShuffleNetV2 branch), measured
    # slower blocked than plain
    g = Net(seed=9)
    h = g.op("Relu", [g.conv("x", 32, 32)])
    h = g.conv(h, 32, 32, k=3, group=32)
    y = g.op("Softmax", [g.op("Relu", [g.conv(h, 32, 32)])], axis=1)
    model = g.model([1, 32, 8, 8], [y])
    assert "Reorder" not in _check(model, rand(1, 32, 8, 8, seed=5), monkeypatch)


def test_activations_on_blocked_tensors(monkeypatch):
    g = Net(seed=6)
    h = g.conv("x", 16, 32)
    h = g.op("LeakyRelu", [h], alpha=0.2)
    h = g.conv(h, 32, 32, k=3, group=32)
    h = g.op("Sigmoid", [h])
    h = g.conv(h, 32, 16)
    h = g.op("Tanh", [h])
    h = g.conv(h, 16, 16, k=3, stride=2, group=16)
    h = g.op("HardSigmoid", [h])
    h = g.conv(h, 16, 16)  # five convolutions: more than two per Reorder
    model = g.model([1, 16, 9, 9], [h])
    types = _check(model, rand(1, 16, 9, 9, seed=5), monkeypatch)
    if BLOCK in (8, 16):
        assert types.count("Reorder") == 2, types


@pytest.mark.parametrize("name", ["mobilenet_v2", "mnasnet"])
def test_zoo_networks_match_without_the_pass(monkeypatch, name):
    """At 64x64: the blocked run agrees with the plain one and onnxruntime, and everything
    from the stem convolution (which reads the plain input and writes blocked) to the pooling
    is one chain, the 24- and 40-channel layers (tails under AVX-512) included."""
    from mace import zoo
    model = zoo.build(name, size=64)
    x = rand(1, 3, 64, 64, seed=6)
    x_name = model.graph.input[0].name
    ref = run_ort(model, {x_name: x})[0]
    sess = mace.Session(model, num_threads=2)
    on = sess.run(x)
    if BLOCK:
        prof = sess.profile(x, rounds=1, warmup=0)
        types = [p["type"] for p in prof]
        assert types.count("Reorder") == 1 and types[0] == "Conv2D", types
        last = types.index("Reorder")
        blocked = {p["out_dims"][1] for p in prof[:last] if p["type"] == "Conv2D"}
        assert {24, 40} & blocked, sorted(blocked)
    monkeypatch.setenv("MACE_NCHWC", "0")
    off = mace.Session(model, num_threads=2).run(x)
    on = on if isinstance(on, np.ndarray) else next(iter(on.values()))
    off = off if isinstance(off, np.ndarray) else next(iter(off.values()))
    assert_close(on, ref, what="pass on", atol=network_atol(ref))
    assert_close(off, ref, what="pass off", atol=network_atol(ref))


@pytest.mark.parametrize("n,cin,cout,k,stride,pads,hw", [
    (1, 3, 32, 3, 2, [1, 1, 1, 1], 33),   # MobileNet's stem
    (2, 3, 64, 3, 2, [0, 0, 0, 0], 31),   # SqueezeNet's
    (1, 3, 64, 7, 2, [3, 3, 3, 3], 29),   # ResNet's
    (1, 1, 16, 5, 1, [2, 1, 0, 2], 17),
    (1, 4, 48, 3, 1, [1, 1, 1, 1], 9),
    (1, 3, 24, 3, 2, [1, 1, 1, 1], 20),   # 24 channels: padded to 32 under AVX-512
])
def test_first_convolution_writes_blocked(monkeypatch, n, cin, cout, k, stride, pads, hw):
    """A convolution of a plain input of up to 4 channels at the head of a chain reads the input
    as it is and writes the blocked layout (no Reorder in front of the chain) where at most 1/8
    of its output channels are padding; the max pool and convolutions behind it run blocked."""
    g = Net(seed=cin * 100 + cout)
    h = g.op("Relu", [g.conv("x", cin, cout, k=k, stride=stride, pads=pads)])
    h = g.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    for _ in range(3):
        h = g.op("Relu", [g.conv(h, cout, cout)])
    types = _check(g.model([n, cin, hw, hw], [h]), rand(n, cin, hw, hw, seed=cout), monkeypatch)
    if BLOCK:
        padded = -(-cout // BLOCK) * BLOCK
        if padded * 8 <= cout * 9:
            assert types[0] == "Conv2D" and types.count("Reorder") == 1, types
        else:  # the stem stays plain: the rest is a chain with a Reorder in, or no chain
            assert types[0] == "Conv2D" and types.count("Reorder") in (0, 2), types


def test_reorders_of_any_block():
    """Reorder ops written in a model: to NCHWc of a block that does not divide the channels
    (3 of 8: a tail of 2) and back is the identity; a blocked model output or a negative block
    is a clear error."""
    from mace.converters import ir
    from tiny_models import _graph
    x = rand(2, 8, 3, 5, seed=9)
    for block in (1, 3, 4, 5, 8, 16, 64):
        both = _graph([ir.Op("Reorder", "to", ["x"], ["b"], {"block": block}),
                       ir.Op("Reorder", "back", ["b"], ["y"], {"block": 0})],
                      [("x", [2, 8, 3, 5])], [("y", [2, 8, 3, 5])])
        np.testing.assert_array_equal(mace.Session(both).run(x), x, err_msg=f"block {block}")
    blocked_out = _graph([ir.Op("Reorder", "r", ["x"], ["y"], {"block": 3})],
                         [("x", [1, 8, 2, 2])], [("y", [1, 8, 2, 2])])
    with pytest.raises(mace.MaceError, match="blocked NCHWc layout"):
        mace.Session(blocked_out).run(np.zeros((1, 8, 2, 2), np.float32))
    worse = _graph([ir.Op("Reorder", "r", ["x"], ["y"], {"block": -2})],
                   [("x", [1, 8, 2, 2])], [("y", [1, 8, 2, 2])])
    with pytest.raises(mace.MaceError, match="block -2 is not in"):
        mace.Session(worse)


def test_first_convolution_argument_errors():
    """The argument the layout pass gives a first convolution (nchwc_out), written in a model
    by hand: on the model's output it is the blocked-output error, out of range or on a
    convolution the blocked kernels cannot write (a 1x1) a clear error naming it."""
    from mace.converters import ir
    from tiny_models import _graph
    w3 = rand(16, 3, 3, 3, seed=1)
    x = rand(1, 3, 8, 8, seed=2)

    def conv3(block):
        return _graph([ir.Op("Conv2D", "c", ["x", "w"], ["y"],
                             {"strides": [2, 2], "padding_values": [1, 1, 1, 1],
                              "nchwc_out": block})],
                      [("x", [1, 3, 8, 8])], [("y", [1, 16, 4, 4])], consts={"w": w3})
    with pytest.raises(mace.MaceError, match="blocked NCHWc layout"):
        mace.Session(conv3(16)).run(x)
    with pytest.raises(mace.MaceError, match="nchwc_out = 100 is not a block"):
        mace.Session(conv3(100)).run(x)
    w1 = rand(16, 3, 1, 1, seed=3)
    one = _graph([ir.Op("Conv2D", "c", ["x", "w"], ["y"], {"nchwc_out": 16})],
                 [("x", [1, 3, 8, 8])], [("y", [1, 16, 8, 8])], consts={"w": w1})
    with pytest.raises(mace.MaceError, match="cannot write the blocked"):
        mace.Session(one).run(x)


def _se(g, h, c, squeeze):
    """A squeeze-excitation: GlobalAveragePool, 1x1 conv, Swish, 1x1 conv, Sigmoid, Mul by the
    [N, C, 1, 1] scale."""
    s = g.op("GlobalAveragePool", [h])
    s = g.conv(s, c, squeeze)
    s = g.op("Mul", [s, g.op("Sigmoid", [s])])
    s = g.op("Sigmoid", [g.conv(s, squeeze, c)])
    return g.op("Mul", [h, s])


@pytest.mark.parametrize("n,c,hw,stride", [(1, 16, 10, 1), (2, 20, 9, 2), (1, 24, 7, 1),
                                           (1, 40, 1, 1)])
def test_squeeze_excitation_is_blocked(monkeypatch, n, c, hw, stride):
    """EfficientNet's MBConv blocks (depthwise, squeeze-excitation, projection) one chain: the
    global pooling, the FCs on 1x1 images and the broadcast Mul run blocked."""
    g = Net(seed=10 + c)
    h = g.conv("x", c, c)
    for _ in range(2):
        e = g.conv(h, c, 2 * c)
        e = g.op("Mul", [e, g.op("Sigmoid", [e])])
        e = g.conv(e, 2 * c, 2 * c, k=3, stride=stride, group=2 * c)
        e = _se(g, g.op("Mul", [e, g.op("Sigmoid", [e])]), 2 * c, max(c // 4, 1))
        h = g.conv(e, 2 * c, c)
    model = g.model([n, c, hw, hw], [h])
    types = _check(model, rand(n, c, hw, hw, seed=c), monkeypatch)
    if BLOCK:
        assert _one_chain(types), types
        assert "Pooling" in types and "Eltwise" in types, types


@pytest.mark.parametrize("swish_fused", [True, False], ids=["fused", "standalone"])
@pytest.mark.parametrize("n,c,hw,stride", [(1, 16, 24, 1), (2, 8, 17, 2), (1, 48, 5, 1),
                                           (2, 64, 3, 1)])
def test_row_band_and_channel_splits_at_odd_thread_counts(monkeypatch, n, c, hw, stride,
                                                          swish_fused):
    """Large planes are shared between threads in row bands (pointwise and depthwise with
    their SWISH fused or as a standalone Activation, and the residual Add), small ones by
    channel blocks (runtime/cpu/nchwc_split.h): both at 3 and 4 threads, on batches, with bands of
    uneven height."""
    if not swish_fused:
        monkeypatch.setattr(transforms, "FUSABLE_ACTIVATIONS",
                            transforms.FUSABLE_ACTIVATIONS - {"SWISH"})
    g = Net(seed=30 + c)
    e = g.conv("x", c, 2 * c)
    e = g.op("Mul", [e, g.op("Sigmoid", [e])])
    e = g.conv(e, 2 * c, 2 * c, k=3, stride=stride, group=2 * c)
    e = g.op("Mul", [e, g.op("Sigmoid", [e])])
    h = g.conv(e, 2 * c, c)
    h = g.op("Mul", [h, g.op("Sigmoid", [h])])
    r = g.conv(g.conv("x", c, c, k=3, stride=stride), c, c)
    h = g.op("Add", [h, g.op("Mul", [r, g.op("Sigmoid", [r])])])  # not fused into a conv
    model = g.model([n, c, hw, hw], [g.conv(h, c, c)])
    types = _check(model, rand(n, c, hw, hw, seed=c), monkeypatch, threads=(1, 3, 4))
    if BLOCK:
        assert ("Activation" in types) != swish_fused and "Eltwise" in types, types


@pytest.mark.parametrize("op,attrs,hw", [
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 11),
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), 10),
    ("MaxPool", dict(kernel_shape=[2, 3], strides=[1, 2], pads=[0, 1, 1, 0], dilations=[2, 1]),
     9),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 11),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=1), 12),
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1),
     10),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2]), 8),
    ("GlobalMaxPool", {}, 6),
])
@pytest.mark.parametrize("c", [20, 24])
def test_pooling_is_blocked(monkeypatch, op, attrs, hw, c):
    """Max / average pooling with padding, ceil mode, count_include_pad in a chain, on channel
    counts with a tail (20, 24 under AVX-512)."""
    g = Net(seed=30)
    h = g.op("Relu", [g.conv(g.conv(g.conv("x", c, c), c, c, k=3, group=c), c, c)])
    h = g.op(op, [h], **attrs)
    h = g.conv(g.conv(g.conv(h, c, c), c, c, k=3, group=c), c, c)
    model = g.model([2, c, hw, hw], [h], opset=13 if "dilations" not in attrs else 13)
    types = _check(model, rand(2, c, hw, hw, seed=3), monkeypatch, threads=(1, 2, 3))
    if BLOCK:
        assert _one_chain(types) and "Pooling" in types, types


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Max", "Min"])
@pytest.mark.parametrize("c", [20, 24])
def test_binary_ops_of_blocked_tensors(monkeypatch, op, c):
    """Two branches of a chain joined by a binary op of two blocked tensors (same shape), and
    the broadcast forms [N, C, H, W] op [N, C, 1, 1] (either side) and over N."""
    g = Net(seed=40)
    h = g.conv("x", c, c)
    a = g.conv(g.conv(h, c, c, k=3, group=c), c, c)
    b = g.conv(g.conv(h, c, c, k=3, group=c), c, c)
    y = g.op(op, [a, b])
    s = g.conv(g.op("GlobalMaxPool", [y]), c, c)
    y = g.op(op, [s, y]) if op != "Mul" else g.op(op, [y, s])
    y = g.op(op, [y, g.op("ReduceMean", [g.conv(y, c, c)], axes=[0], keepdims=1)])
    y = g.conv(g.conv(y, c, c), c, c)
    model = g.model([2, c, 6, 6], [y])
    types = _check(model, rand(2, c, 6, 6, seed=7), monkeypatch)
    if BLOCK:
        # x in, y out: the binary ops of blocked tensors and the pool ran blocked (an Add may
        # be fused into the convolution before it as its residual); the one that meets the
        # ReduceMean's plain output runs plain, and so does everything after it (two
        # convolutions are not worth their two Reorders), the convolution feeding ReduceMean
        # included (a sink of the chain: blocked, it would need a Reorder of its own)
        r = [i for i, t in enumerate(types) if t == "Reorder"]
        assert len(r) == 2 and r[0] == 0 and types[r[1] + 1] == "Conv2D", types
        assert "Pooling" in types[:r[1]] and types[r[1]:].count("Eltwise") == 1, types


def test_division_is_not_blocked(monkeypatch):
    """DIV (and POW) could turn the tail lanes into Inf / NaN: the chain stops there."""
    g = Net(seed=50)

    def five_convs(h):
        for _ in range(2):
            h = g.conv(g.conv(h, 20, 20), 20, 20, k=3, group=20)
        return g.conv(h, 20, 20)

    h = five_convs("x")
    h = five_convs(g.op("Div", [h, g.op("Abs", [h])]))
    types = _check(g.model([1, 20, 8, 8], [h]), rand(1, 20, 8, 8, seed=8), monkeypatch)
    if BLOCK:
        r = [i for i, t in enumerate(types) if t == "Reorder"]
        assert len(r) == 4 and set(types[r[1] + 1:r[2]]) == {"Eltwise"}, types  # Abs, Div


@pytest.mark.parametrize("c", [16, 20])
def test_broadcast_across_channels_in_a_chain(monkeypatch, c):
    """A computed [N, 1, H, W] operand (spatial attention) meets a blocked [N, C, H, W] one: the
    layout pass cannot see shapes, so Eltwise takes it blocked and computes it on plain copies."""
    g = Net(seed=60)
    h = g.conv(g.conv(g.conv("x", c, c), c, c, k=3, group=c), c, c)
    y = g.op("Mul", [h, g.op("Sigmoid", [g.conv(h, c, 1)])])
    y = g.op("Sub", [g.conv(y, c, 1), y])
    y = g.conv(g.conv(g.conv(y, c, c), c, c, k=3, group=c), c, c)
    types = _check(g.model([2, c, 7, 7], [y]), rand(2, c, 7, 7, seed=9), monkeypatch)
    if BLOCK:
        assert _one_chain(types), types
def _fire(g, x, cin, squeeze, expand):
    """SqueezeNet's Fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""
    s = g.op("Relu", [g.conv(x, cin, squeeze)])
    e1 = g.op("Relu", [g.conv(s, squeeze, expand)])
    e3 = g.op("Relu", [g.conv(s, squeeze, expand, k=3)])
    return g.op("Concat", [e1, e3], axis=1)


@pytest.mark.parametrize("squeeze,expand", [(16, 32), (16, 20), (12, 24), (16, 24)])
def test_fire_modules_are_one_chain(monkeypatch, squeeze, expand):
    """Two Fire modules: the 3x3 expands (16 or 12 input channels: conv2d.c's rule) run on
    the blocked direct KxK kernel and the Concats on blocked inputs, so everything is one
    chain. Expands of 20 / 24 channels are not multiples of the block (16 under AVX-512, 8 for
    20 under AVX2): the Concat moves lanes and zeroes the output's tail; 32 is a block copy."""
    g = Net(seed=squeeze + expand)
    h = _fire(g, "x", 24, squeeze, expand)
    h = _fire(g, h, 2 * expand, squeeze, expand)
    model = g.model([2, 24, 13, 11], [h])
    types = _check(model, rand(2, 24, 13, 11, seed=10), monkeypatch)
    if BLOCK:
        assert _one_chain(types), types
        assert types.count("Concat") == 2, types


@pytest.mark.parametrize("k,stride,pads,hw", [
    (3, 2, [1, 1, 1, 1], (14, 14)),
    (3, 2, [0, 1, 1, 0], (9, 12)),
    (3, 1, [0, 0, 0, 0], (5, 17)),
    (5, 1, [2, 1, 0, 2], (6, 6)),
    (3, 1, [1, 1, 1, 1], (1, 9)),
    (3, 1, [1, 1, 1, 1], (2, 1)),
    (7, 2, [3, 3, 3, 3], (11, 16)),
    (3, 1, [0, 4, 1, 3], (5, 6)),    # padding past the window: columns of zeros only
])
def test_direct_kxk_chains_match(monkeypatch, k, stride, pads, hw):
    """Chains of group-1 KxK convolutions of 12 and 16 input channels (20 and 24 outputs:
    tails), one with a fused residual, stride 2, asymmetric, no and oversized padding, 1xN and
    tiny images, on the blocked direct kernel (narrow planes on a copy with the padding
    written in, rows of at most half a register tile two a tile)."""
    g = Net(seed=k + stride + hw[0])
    h = g.op("Relu", [g.conv("x", 12, 20, k=k, stride=stride, pads=pads)])
    r = g.op("Relu", [g.conv(h, 20, 16)])
    t = g.op("Add", [g.conv(r, 16, 16, k=3), r])
    y = g.op("Relu", [g.conv(g.op("Relu", [t]), 16, 24, k=3)])
    y = g.conv(y, 24, 20)  # five convolutions: more than two per Reorder
    model = g.model([1, 12, *hw], [y])
    types = _check(model, rand(1, 12, *hw, seed=11), monkeypatch)
    if BLOCK:
        assert _one_chain(types), types


@pytest.mark.parametrize("c,group,dil,k,stride,hw", [
    (32, 1, 2, 3, 1, (13, 15)),     # dilated
    (40, 1, 3, 3, 2, (17, 16)),     # dilated, stride 2, a channel tail at 16
    (24, 1, 4, 3, 1, (6, 7)),       # taps past the plane: some windows all padding
    (64, 4, 1, 3, 1, (12, 12)),     # groups of 16: whole blocks at every width
    (64, 16, 1, 3, 2, (15, 14)),    # groups of 4: 4 a block at 16, 2 at 8, 1 at 4
    (96, 4, 2, 3, 1, (11, 10)),     # groups of 24: 2 a block at 16, dilated
    (64, 8, 1, 5, 1, (9, 9)),       # groups of 8, 5x5
    (48, 1, 1, 5, 1, (14, 13)),     # 5x5 of more than 16 input channels
    (48, 1, 1, (1, 7), 1, (17, 17)),  # Inception's 1x7
    (48, 1, 1, (7, 1), 2, (17, 12)),
    (64, 32, 1, 3, 1, (10, 10)),    # groups of 2: 8 a block at 16 (plain there)
    (32, 32, 2, 3, 1, (13, 15)),    # depthwise, dilated (DeepLab's)
    (40, 40, 3, 3, 2, (17, 16)),    # depthwise, dilated, stride 2, a channel tail
    (24, 24, 4, 5, 1, (5, 6)),      # depthwise 5x5, taps past the plane, small planes
])
def test_dilated_grouped_and_wide_windows_in_chains(monkeypatch, c, group, dil, k, stride, hw):
    """Bottlenecks (1x1, the KxK, 1x1, residual) around dilated, grouped and 5x5 / 1x7
    convolutions run on the blocked direct kernel (groups narrower than a block merged into
    blocks, their filters zero between the groups; rows with border columns on a copy with the
    padding written in), dilated depthwise ones on the depthwise kernel, at 1 to 3 threads,
    against onnxruntime and the plain path."""
    g = Net(seed=90 + c + group + dil)
    h = g.op("Relu", [g.conv("x", c, c)])
    for i in range(2):
        t = g.op("Relu", [g.conv(h, c, c, k=k, stride=stride if i == 0 else 1, group=group,
                                 dil=dil)])
        t = g.conv(t, c, c)
        h = g.op("Relu", [g.op("Add", [t, h]) if i or stride == 1 else t])
    model = g.model([2, c, *hw], [g.conv(h, c, c)])
    types = _check(model, rand(2, c, *hw, seed=17), monkeypatch, threads=(1, 2, 3))
    merged = 0 if not BLOCK else (1 if group == 1 else next(
        (m for m in range(1, group + 1) if group % m == 0 and m * c // group % BLOCK == 0), 0))
    if BLOCK and (group == c or 1 <= merged <= 4):
        assert _one_chain(types), types


@pytest.mark.parametrize("c,group,dil,k,hw", [
    (32, 1, 2, 3, (13, 15)),   # dilated
    (64, 4, 1, 3, (12, 12)),   # grouped
    (40, 40, 2, 3, (11, 9)),   # depthwise, dilated
    (24, 1, 1, 5, (9, 10)),    # 5x5 of more than 16 channels
])
def test_lone_convolutions_run_blocked(monkeypatch, c, group, dil, k, hw):
    """A dilated, grouped or wide-window convolution runs blocked even alone between two
    Reorders (MACE_NCHWC_ALONE, core/op.h): its plain form is im2col + a GEMM per group, or the
    scalar reference for a dilated depthwise one."""
    g = Net(seed=7 + c)
    model = g.model([2, c, *hw], [g.conv("x", c, c, k=k, group=group, dil=dil)])
    types = _check(model, rand(2, c, *hw, seed=23), monkeypatch, threads=(1, 2))
    if BLOCK and (group in (1, c) or c // group * 4 % BLOCK == 0):
        assert types == ["Reorder", "Conv2D", "Reorder"], types


def test_densenet_block_is_one_chain(monkeypatch):
    """DenseNet's layers (Concat -> BatchNorm -> Relu -> 1x1 -> BatchNorm -> Relu -> 3x3, the
    first BatchNorm after a Concat, so no convolution absorbs it) run blocked, channel tails
    included: such BatchNorms become 1x1 depthwise convolutions with the Relu fused
    (converters/transforms.py: batchnorm_to_depthwise), where a BatchNorm op broke the chain;
    the 3x3s of 12 outputs (too few for Winograd) run direct; and every Concat, which also
    reads the plain stem output (at block 16, 24 channels pad too much to be written blocked),
    stays in the chain, that input reordered once (runtime/cpu/layout.c)."""
    g = Net(seed=5)
    h = g.op("Relu", [g.conv("x", 3, 24, k=3, stride=2)])
    feats, c = [h], 24
    for _ in range(9):  # the last Concats of more than 8 inputs
        t = g.op("Concat", feats, axis=1) if len(feats) > 1 else feats[0]
        t = g.op("Relu", [g.bn(t, c)])
        t = g.op("Relu", [g.bn(g.conv(t, c, 32, bias=False), 32)])
        feats.append(g.conv(t, 32, 12, k=3, bias=False))
        c += 12
    y = g.conv(g.op("Relu", [g.bn(g.op("Concat", feats, axis=1), c)]), c, 16)
    model = g.model([2, 3, 23, 21], [y])
    types = _check(model, rand(2, 3, 23, 21, seed=19), monkeypatch)
    assert "BatchNorm" not in types and "Activation" not in types, types
    if BLOCK:
        # one Reorder at the end, and one after the stem where it runs plain
        assert types[-1] == "Reorder" and "Reorder" not in types[2:-1], types


@pytest.mark.parametrize("n,cin,c,k,stride,hw", [
    (2, 3, 32, 3, 2, (33, 31)),    # first convolution (plain input), then a max pool
    (1, 3, 32, 7, 2, (40, 40)),
    (2, 24, 20, 3, 2, (30, 29)),   # ResNet's 3x3/2, batch, channel tails
    (1, 32, 32, 3, 2, (25, 26)),
    (1, 12, 16, 5, 1, (9, 40)),    # fewer output rows than 3 threads' bands can share evenly
])
def test_direct_kxk_row_bands(monkeypatch, n, cin, c, k, stride, hw):
    """Direct convolutions whose input plane outweighs their filter share it between threads
    in row bands (ops/conv2d_nchwc.c), as does the max pool behind the first one: at 2 and 3
    threads, on batches, bands of uneven height, residual fused."""
    g = Net(seed=40 + cin + k)
    h = "x" if cin == 3 else g.op("Relu", [g.conv("x", cin, cin)])
    h = g.op("Relu", [g.conv(h, cin, c, k=k, stride=stride)])
    if cin == 3:
        h = g.op("MaxPool", [h], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    h = g.op("Relu", [g.conv(h, c, c)])
    t = g.op("Add", [g.conv(h, c, c, k=3), h])
    y = g.conv(g.op("Relu", [t]), c, c)
    model = g.model([n, cin, *hw], [y])
    types = _check(model, rand(n, cin, *hw, seed=12), monkeypatch, threads=(1, 2, 3))
    if BLOCK:
        print("TYPES", types)


@pytest.mark.parametrize("n,cout,hw", [(1, 1000, 5), (2, 40, 3), (1, 200, 9)])
def test_pointwise_groups_of_an_odd_block_count(monkeypatch, n, cout, hw):
    """A pointwise layer with more output channels than pixels and an odd number of output
    blocks (1000: 63 of 16 or 125 of 8) splits its filter between threads in groups of an even
    number of blocks, the last one a block short (ops/conv2d_nchwc.c): at 2 and 3 threads."""
    g = Net(seed=70 + cout)
    h = "x"
    for _ in range(4):
        h = g.op("Relu", [g.conv(h, 32, 32)])
    model = g.model([n, 32, hw, hw], [g.conv(h, 32, cout)])
    types = _check(model, rand(n, 32, hw, hw, seed=16), monkeypatch, threads=(1, 2, 3))
    if BLOCK:
        assert _one_chain(types), types


def test_squeezenet_is_blocked(monkeypatch):
    """SqueezeNet 1.1 at 64x64 agrees with onnxruntime and runs blocked from its stem
    convolution (reading the plain input) to the classifier: max pools, Concats, the 3x3
    expands of 16 input channels on the direct kernel and those of 32 to 64 by Winograd on the
    blocked layout (ops/winograd_nchwc.h)."""
    from mace import zoo
    model = zoo.build("squeezenet1_1", size=64)
    x = rand(1, 3, 64, 64, seed=12)
    ref = run_ort(model, {model.graph.input[0].name: x})[0]
    sess = mace.Session(model, num_threads=2)
    on = sess.run(x)
    on = on if isinstance(on, np.ndarray) else next(iter(on.values()))
    assert_close(on, ref, what="pass on", atol=network_atol(ref))
    if BLOCK:
        types = [p["type"] for p in sess.profile(x, rounds=1, warmup=0)]
        last = types.index("Reorder")
        assert types.count("Reorder") == 1 and types[:2] == ["Conv2D", "Pooling"], types
        inside = types[:last]
        assert inside.count("Concat") == 8 and inside.count("Pooling") == 4, types
        assert inside.count("Conv2D") == 26, types


def _bottleneck(g, x, cin, mid, cout, stride):
    """ResNet's bottleneck: 1x1, 3x3 (the stride), 1x1 and the shortcut (a 1x1 of the stride
    where the shape changes), added, then Relu."""
    h = g.op("Relu", [g.conv(x, cin, mid, pads=[0] * 4)])
    h = g.op("Relu", [g.conv(h, mid, mid, k=3, stride=stride)])
    h = g.conv(h, mid, cout, pads=[0] * 4)
    s = x if stride == 1 and cin == cout else g.conv(x, cin, cout, stride=stride, pads=[0] * 4)
    return g.op("Relu", [g.op("Add", [h, s])])


@pytest.mark.parametrize("n,c,hw", [(1, 32, (12, 12)), (2, 20, (9, 14)), (1, 40, (7, 7)),
                                    (1, 24, (28, 28)), (1, 64, (3, 5))])
def test_resnet_chains_are_blocked(monkeypatch, n, c, hw):
    """Bottlenecks and basic blocks with more than 16 input channels per 3x3: the stride-1 3x3s
    by Winograd F(2,3) / F(4,3) on the blocked layout (automatic: F(4,3) on the larger planes,
    F(2,3) on the smaller, the direct kernel below 7x7), the stride-2 3x3s on the direct kernel,
    the 1x1 stride-2 shortcuts as a subsampled copy and the pointwise kernel, with residuals,
    channel tails (20, 40: padded under AVX-512 or AVX2) and odd plane sizes: one chain."""
    g = Net(seed=c + hw[0])
    h = g.op("Relu", [g.conv("x", c, 2 * c, k=3)])                  # 3x3 stride 1
    h = _bottleneck(g, h, 2 * c, c, 2 * c, 1)
    h = _bottleneck(g, h, 2 * c, c, 4 * c, 2)                       # 3x3 / 2, 1x1 / 2 shortcut
    b = g.op("Relu", [g.conv(h, 4 * c, 4 * c, k=3)])                # basic block, residual
    h = g.op("Relu", [g.op("Add", [g.conv(b, 4 * c, 4 * c, k=3), h])])
    h = g.conv(h, 4 * c, c + 2)                                     # a tail for every block
    model = g.model([n, c, *hw], [h])
    types = _check(model, rand(n, c, *hw, seed=13), monkeypatch)
    if BLOCK:
        assert _one_chain(types), types


def _run_with_winograd(model, x, winograd, threads):
    """The model converted with every Conv2D's winograd argument set to `winograd`, run at each
    thread count against onnxruntime; returns the last session."""
    ref = run_ort(model, {"x": x})[0]
    converted = mace.convert(model)
    for op in converted.graph.ops:
        if op.type == "Conv2D":
            op.args["winograd"] = winograd
    for t in threads:
        sess = mace.Session(converted, num_threads=t)
        assert_close(sess.run({"x": x})[sess.outputs[0].name], ref,
                     what=f"winograd {winograd}, {t} threads")
    return sess


@pytest.mark.parametrize("winograd", [2, 4])
def test_blocked_winograd_thread_shares(monkeypatch, winograd):
    """Blocked Winograd layers of enough tiles give each thread an equal, contiguous share of
    all images' tiles (ops/winograd_nchwc.c): shares that cross images (batch 2 at 3 threads),
    blocks cut within a share, tiles past the plane's edge (45x43)."""
    g = Net(seed=50 + winograd)
    h = g.op("Relu", [g.conv("x", 24, 32)])
    t = g.op("Relu", [g.conv(h, 32, 32, k=3)])
    h = g.op("Relu", [g.op("Add", [g.conv(t, 32, 32, k=3), h])])
    model = g.model([2, 24, 45, 43], [g.conv(g.conv(h, 32, 32), 32, 24)])
    _run_with_winograd(model, rand(2, 24, 45, 43, seed=15), winograd, (2, 3))


@pytest.mark.parametrize("winograd", [2, 4, 0])
@pytest.mark.parametrize("act", ["Relu", "Sigmoid"])
def test_blocked_winograd_argument(winograd, act):
    """The winograd argument picks F(2,3) or F(4,3) on the blocked layout too (tiles past the
    image's edge on a 10x13 plane; a residual and an activation in registers or after the
    stores); 0 keeps the 3x3s plain, out of the chain."""
    g = Net(seed=winograd)
    h = g.op("Relu", [g.conv("x", 24, 32, pads=[0] * 4)])
    for mid in (24, 40):
        t = g.op(act, [g.conv(h, 32, mid, pads=[0] * 4)])
        t = g.op(act, [g.conv(t, mid, 32, k=3)])
        h = g.op(act, [g.op("Add", [g.conv(t, 32, 32, k=3), h])])
    x = rand(1, 24, 10, 13, seed=14)
    sess = _run_with_winograd(g.model([1, 24, 10, 13], [h]), x, winograd, (1, 2))
    if BLOCK:
        types = _types(sess, x)
        assert _one_chain(types) == bool(winograd), types


def test_elementwise_op_on_a_plain_operand_of_any_rank(monkeypatch):
    """An Add of a blocked tensor and a rank-1 model input inside a run of convolutions: the
    Add runs plain (a Reorder takes only 4-D tensors, and in front of an element-wise op it
    would buy nothing), the convolutions on either side stay blocked."""
    g = Net(seed=60)
    h = "x"
    for i in range(10):  # five convolutions per Reorder pair on either side
        h = g.conv(h, 16, 16)
        if i == 4:
            h = g.op("Add", [h, "w"])
    model = make_model(g.nodes, [("x", np.float32, [1, 16, 8, 8]), ("w", np.float32, [8])],
                       [(h, np.float32, [None] * 4)], g.inits)
    feeds = {"x": rand(1, 16, 8, 8, seed=9), "w": rand(8, seed=10)}
    ref = run_ort(model, feeds)[0]
    sess = mace.Session(model, num_threads=2)
    assert_close(sess.run(feeds)[h], ref, what="Add of a rank-1 input")
    if BLOCK:
        types = [p["type"] for p in sess.profile(feeds, rounds=1, warmup=0)]
        r = [i for i, t in enumerate(types) if t == "Reorder"]
        assert len(r) == 4 and types[r[1] + 1] == "Eltwise", types
