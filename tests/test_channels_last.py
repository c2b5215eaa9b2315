"""Channels-last regions (converters/transforms.py: rewrite_channels_last, fold_channel_scale):
Transpose to NHWC, ops over the last axis, Transpose back, as torchvision's ConvNeXt and
LayerNorm2d export, become NCHW ops (LayerNorm over the channels, 1x1 Conv2Ds) with no
Transpose; each model against onnxruntime, and where the rewrite must not happen, that it
did not."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, nchwc_block, rand, scale_atol

import mace

C_LAST, C_FIRST = [0, 2, 3, 1], [0, 3, 1, 2]


def _types(model):
    return [op.type for op in mace.convert(model).graph.ops]


def _ln(x, out, c, seed, opset17=True):
    """LayerNormalization over the last axis: the opset-17 op, or written out as opset 13."""
    scale, bias = rand(c, seed=seed) + 1.5, rand(c, seed=seed + 1)
    inits = [(f"{out}_s", scale), (f"{out}_b", bias)]
    if opset17:
        return [helper.make_node("LayerNormalization", [x, f"{out}_s", f"{out}_b"], [out],
                                 axis=-1, epsilon=1e-6)], inits
    inits.append((f"{out}_two", np.array(2.0, np.float32)))
    inits.append((f"{out}_eps", np.array(1e-6, np.float32)))
    n = [helper.make_node("ReduceMean", [x], [f"{out}_m"], axes=[-1]),
         helper.make_node("Sub", [x, f"{out}_m"], [f"{out}_d"]),
         helper.make_node("Pow", [f"{out}_d", f"{out}_two"], [f"{out}_p"]),
         helper.make_node("ReduceMean", [f"{out}_p"], [f"{out}_v"], axes=[-1]),
         helper.make_node("Add", [f"{out}_v", f"{out}_eps"], [f"{out}_ve"]),
         helper.make_node("Sqrt", [f"{out}_ve"], [f"{out}_sd"]),
         helper.make_node("Div", [f"{out}_d", f"{out}_sd"], [f"{out}_n"]),
         helper.make_node("Mul", [f"{out}_n", f"{out}_s"], [f"{out}_ns"]),
         helper.make_node("Add", [f"{out}_ns", f"{out}_b"], [out])]
    return n, inits


def _block_nodes(x, y, c, opset17, bias_first, p=""):
    """x -> depthwise 7x7 -> Transpose -> LayerNorm -> Linear 4c -> GELU -> Linear c ->
    Transpose -> * layer scale [c, 1, 1] -> + x = y; tensor names start with p."""
    nodes = [helper.make_node("Conv", [x, p + "dw", p + "dwb"], [p + "h"], group=c,
                              kernel_shape=[7, 7], pads=[3, 3, 3, 3]),
             helper.make_node("Transpose", [p + "h"], [p + "t"], perm=C_LAST)]
    ln, inits = _ln(p + "t", p + "n", c, 5, opset17)
    nodes += ln
    inits += [(p + "dw", rand(c, 1, 7, 7, seed=1) * 0.3), (p + "dwb", rand(c, seed=2)),
              (p + "w1", (rand(c, 4 * c, seed=3) / np.sqrt(c)).astype(np.float32)),
              (p + "b1", rand(4 * c, seed=4)),
              (p + "w2", (rand(4 * c, c, seed=6) / np.sqrt(4 * c)).astype(np.float32)),
              (p + "b2", rand(c, seed=7)), (p + "ls", rand(c, 1, 1, seed=8, low=0.5, high=1.0)),
              (p + "r2", np.array(1.4142135, np.float32)), (p + "one", np.array(1.0, np.float32)),
              (p + "half", np.array(0.5, np.float32))]
    add1 = [p + "b1", p + "m1"] if bias_first else [p + "m1", p + "b1"]
    nodes += [helper.make_node("MatMul", [p + "n", p + "w1"], [p + "m1"]),
              helper.make_node("Add", add1, [p + "a1"]),
              helper.make_node("Div", [p + "a1", p + "r2"], [p + "g0"]),
              helper.make_node("Erf", [p + "g0"], [p + "g1"]),
              helper.make_node("Add", [p + "g1", p + "one"], [p + "g2"]),
              helper.make_node("Mul", [p + "a1", p + "g2"], [p + "g3"]),
              helper.make_node("Mul", [p + "g3", p + "half"], [p + "g"]),
              helper.make_node("MatMul", [p + "g", p + "w2"], [p + "m2"]),
              helper.make_node("Add", [p + "m2", p + "b2"], [p + "a2"]),
              helper.make_node("Transpose", [p + "a2"], [p + "u"], perm=C_FIRST),
              helper.make_node("Mul", [p + "ls", p + "u"], [p + "s"]),
              helper.make_node("Add", [p + "s", x], [y])]
    return nodes, inits


def _convnext_block(c, hw, opset17=True, extra_output=None, bias_first=True, blocks=1):
    """ConvNeXt blocks (_block_nodes) one after the other, x -> y."""
    nodes, inits = [], []
    for i in range(blocks):
        n, t = _block_nodes("x" if i == 0 else f"y{i - 1}", "y" if i == blocks - 1 else f"y{i}",
                            c, opset17, bias_first, p=f"b{i}_")
        nodes += n
        inits += t
    outs = [("y", np.float32, [1, c, hw, hw])]
    if extra_output:
        outs.append((extra_output, np.float32, [1, hw, hw, 4 * c]))
    return make_model(nodes, [("x", np.float32, [1, c, hw, hw])], outs, initializers=inits,
                      opset=17 if opset17 else 13)


@pytest.mark.parametrize("c,hw", [(16, 8), (24, 9), (96, 14)], ids=str)
@pytest.mark.parametrize("opset17", [True, False], ids=["op17", "written_out"])
@pytest.mark.parametrize("threads", [1, 2])
def test_convnext_block_loses_its_transposes(c, hw, opset17, threads):
    model = _convnext_block(c, hw, opset17)
    types = _types(model)
    # depthwise, LayerNorm over the channels, 1x1 + GELU, 1x1 + scale + residual
    assert types == ["Conv2D", "LayerNorm", "Conv2D", "Conv2D"], types
    ops = mace.convert(model).graph.ops
    assert ops[1].args["axis"] == 1 and ops[1].args["norm_dims"] == 1
    assert ops[2].args["activation"] == "GELU" and len(ops[3].inputs) == 4  # the residual
    check_model(model, {"x": rand(1, c, hw, hw, seed=9) * 2}, num_threads=threads)


def test_convnext_block_runs_blocked():
    """LayerNorm over the channels keeps two blocks one blocked chain: Reorders only at its
    ends."""
    model = _convnext_block(32, 14, blocks=2)
    x = rand(1, 32, 14, 14, seed=9)
    check_model(model, {"x": x})
    if not nchwc_block():
        pytest.skip("the blocked layout is off under this MACE_CPU_ISA")
    types = [p["type"] for p in mace.Session(model, num_threads=1).profile(x, rounds=1)]
    assert types.count("Reorder") == 2 and types[0] == "Reorder", types


def test_linear_bias_as_first_addend():
    check_model(_convnext_block(16, 8, bias_first=False), {"x": rand(1, 16, 8, 8, seed=3)})
    assert "Transpose" not in _types(_convnext_block(16, 8, bias_first=False))


def test_region_tensor_that_is_a_graph_output_keeps_the_transposes():
    model = _convnext_block(16, 8, extra_output="b0_g")
    assert _types(model).count("Transpose") == 2
    check_model(model, {"x": rand(1, 16, 8, 8, seed=3)})


@pytest.mark.parametrize("c", [3, 16, 17, 40])
@pytest.mark.parametrize("around", ["alone", "convs"])
def test_layer_norm2d(c, around):
    """torchvision's LayerNorm2d (Transpose, LayerNorm, Transpose): on NCHW alone (the plain
    kernel over a middle axis) and inside a chain of convolutions long enough to run blocked
    (two 3x3s before it, three 1x1s after: the blocked kernel, channel tails padded)."""
    hw = 11
    nodes, inits = _ln("t", "n", c, 3)
    nodes = [helper.make_node("Transpose", ["a"], ["t"], perm=C_LAST)] + nodes + \
            [helper.make_node("Transpose", ["n"], ["b"], perm=C_FIRST)]
    if around == "convs":
        before = [helper.make_node("Conv", [x, f"w{i}"], [y], kernel_shape=[3, 3],
                                   pads=[1, 1, 1, 1]) for i, (x, y) in enumerate([("x", "a0"),
                                                                                  ("a0", "a")])]
        after = [helper.make_node("Conv", [x, f"v{i}"], [y], kernel_shape=[1, 1])
                 for i, (x, y) in enumerate([("b", "b0"), ("b0", "b1"), ("b1", "y")])]
        nodes = before + nodes + after
        inits += [(f"w{i}", rand(c, c, 3, 3, seed=7 + i) / np.float32(3)) for i in range(2)]
        inits += [(f"v{i}", rand(c, c, 1, 1, seed=9 + i)) for i in range(3)]
    else:
        nodes[0].input[0] = "x"
        nodes[-1].output[0] = "y"
    model = make_model(nodes, [("x", np.float32, [2, c, hw, hw])],
                       [("y", np.float32, [2, c, hw, hw])], initializers=inits, opset=17)
    assert "Transpose" not in _types(model)
    x = rand(2, c, hw, hw, seed=4) * 3 + 1
    for threads in (1, 2):
        # convolution chains around the norm: sums of hundreds of terms (scale_atol)
        check_model(model, {"x": x}, num_threads=threads, atol=scale_atol)
    if around == "convs" and nchwc_block() and c >= 16:  # 3 channels: the pass keeps NCHW
        types = [p["type"] for p in mace.Session(model, num_threads=1).profile(x, rounds=1)]
        assert types == ["Reorder"] + ["Conv2D"] * 2 + ["LayerNorm"] + ["Conv2D"] * 3 + \
            ["Reorder"], types


def test_transposes_around_an_op_without_an_nchw_form_stay():
    """Softmax over the last axis of NHWC is not over the channels of NCHW here: kept."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=C_LAST),
             helper.make_node("Softmax", ["t"], ["s"], axis=-1),
             helper.make_node("Transpose", ["s"], ["y"], perm=C_FIRST)]
    model = make_model(nodes, [("x", np.float32, [1, 8, 5, 5])],
                       [("y", np.float32, [1, 8, 5, 5])])
    assert _types(model).count("Transpose") == 2
    check_model(model, {"x": rand(1, 8, 5, 5, seed=1)})


def test_constant_along_another_axis_keeps_the_transposes():
    """An Add of a [W, 1] constant (along W of NHWC, not the channels) is not rewritten."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=C_LAST),
             helper.make_node("Add", ["t", "c"], ["s"]),
             helper.make_node("Transpose", ["s"], ["y"], perm=C_FIRST)]
    model = make_model(nodes, [("x", np.float32, [1, 8, 5, 5])],
                       [("y", np.float32, [1, 8, 5, 5])], initializers=[("c", rand(5, 1, seed=2))])
    assert _types(model).count("Transpose") == 2
    check_model(model, {"x": rand(1, 8, 5, 5, seed=1)})


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("scale_shape,folds", [((8, 1, 1), True), ((1,), True),
                                               ((1, 1, 6, 6), False)], ids=str)
def test_channel_scale_folds_into_the_convolution(bias, scale_shape, folds):
    """fold_channel_scale: Conv -> Mul by a constant along the channels (or a scalar) becomes
    the Conv with its filter and bias scaled; a constant along H and W stays a Mul."""
    ins = ["x", "w", "b"] if bias else ["x", "w"]
    nodes = [helper.make_node("Conv", ins, ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Mul", ["c", "s"], ["y"])]
    inits = [("w", rand(8, 4, 3, 3, seed=1)), ("s", rand(*scale_shape, seed=3, low=0.5))]
    if bias:
        inits.append(("b", rand(8, seed=2)))
    model = make_model(nodes, [("x", np.float32, [1, 4, 6, 6])],
                       [("y", np.float32, [1, 8, 6, 6])], initializers=inits)
    assert _types(model) == (["Conv2D"] if folds else ["Conv2D", "Eltwise"])
    check_model(model, {"x": rand(1, 4, 6, 6, seed=4)})
