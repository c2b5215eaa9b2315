"""GroupNorm: ONNX InstanceNormalization and GroupNormalization (opset 18 per-group,
opset 21 per-channel scale/bias) against onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import assert_close, check_model, make_model, rand, run_mace, run_ort  # noqa: E501

SHAPES = [(1, 1, 1), (2, 3, 1), (1, 4, 1, 1), (2, 3, 5, 7), (1, 6, 9), (2, 4, 3, 2, 3), (1, 8, 33, 17)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("eps", [None, 1e-2])
def test_instance_norm(shape, eps):
    c = shape[1]
    kw = {} if eps is None else {"epsilon": eps}
    m = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], **kw)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                   initializers=[("s", rand(c, seed=2) + 1.5), ("b", rand(c, seed=3))])
    check_model(m, {"x": rand(*shape, seed=1) * 4 + 1})


def test_instance_norm_runtime_params():
    shape = (2, 3, 4, 4)
    m = make_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
                   [("x", np.float32, list(shape)), ("s", np.float32, [3]),
                    ("b", np.float32, [3])], [("y", np.float32, list(shape))])
    check_model(m, {"x": rand(*shape, seed=1), "s": rand(3, seed=2), "b": rand(3, seed=3)})


GROUP_CASES = [((1, 4, 3, 3), 2), ((2, 6, 5), 3), ((2, 6, 5), 1), ((2, 6, 5), 6),
               ((1, 8, 1, 1), 4), ((3, 4, 2, 3, 2), 2), ((1, 2), 2), ((1, 16, 17, 9), 4)]


def _group_model(shape, groups, scale, bias, opset):
    return make_model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                        num_groups=groups, epsilon=1e-3)],
                      [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                      initializers=[("s", scale), ("b", bias)], opset=opset)


@pytest.mark.parametrize("shape,groups", GROUP_CASES, ids=str)
def test_group_norm(shape, groups):
    c = shape[1]
    check_model(_group_model(shape, groups, rand(c, seed=2) + 1.5, rand(c, seed=3), 21),
                {"x": rand(*shape, seed=1) * 3})


@pytest.mark.parametrize("shape,groups", GROUP_CASES, ids=str)
def test_group_norm_opset18(shape, groups):
    # Opset 18's per-group scale/bias (the checker calls that form deprecated, so the model
    # is built at 21 and relabelled); oracle: opset 21 with the values repeated per channel.
    cpg = shape[1] // groups
    s, b = rand(groups, seed=2) + 1.5, rand(groups, seed=3)
    m18 = _group_model(shape, groups, s, b, 21)
    m18.opset_import[0].version = 18
    ref = _group_model(shape, groups, np.repeat(s, cpg), np.repeat(b, cpg), 21)
    feeds = {"x": rand(*shape, seed=1) * 3}
    assert_close(run_mace(m18, feeds)[0], run_ort(ref, feeds)[0])


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    shape = (4, 32, 20, 20)
    m = make_model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"],
                                     num_groups=8)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))],
                   initializers=[("s", rand(32, seed=2)), ("b", rand(32, seed=3))], opset=21)
    check_model(m, {"x": rand(*shape, seed=1)}, num_threads=threads)
