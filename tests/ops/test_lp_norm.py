"""LpNorm and MVN: ONNX LpNormalization (p 1/2, every axis) and MeanVarianceNormalization
(axes sets, contiguous or not) against onnxruntime. MVN groups of one element (or constant
ones) are left out: onnxruntime computes E[x^2] - E[x]^2 in float and returns NaN there,
where mace (two-pass variance) returns the exact 0."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from helpers import check_model, make_model, rand

SHAPES = [(7,), (1, 1), (3, 10), (2, 3, 4, 5), (2, 1, 3), (3, 33, 17)]


def _cases():
    for shape in SHAPES:
        for axis in range(-len(shape), len(shape)):
            yield shape, axis


@pytest.mark.parametrize("shape,axis", list(_cases()), ids=str)
@pytest.mark.parametrize("p", [1, 2])
def test_lp_norm(shape, axis, p):
    m = make_model([helper.make_node("LpNormalization", ["x"], ["y"], axis=axis, p=p)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))])
    check_model(m, {"x": rand(*shape, seed=axis + 4) * 3})


def test_lp_norm_default_and_zero_rows():
    x = rand(3, 4, seed=1)
    x[1] = 0
    m = make_model([helper.make_node("LpNormalization", ["x"], ["y"])],
                   [("x", np.float32, [3, 4])], [("y", np.float32, [3, 4])])
    check_model(m, {"x": x})


MVN_CASES = [((2, 3, 4, 5), None), ((2, 3, 4, 5), [0, 2, 3]), ((2, 3, 4, 5), [1]),
             ((2, 3, 4, 5), [0, 1, 2, 3]), ((2, 3, 4, 5), [1, 3]), ((2, 3, 4, 5), [-1, -2]),
             ((1, 1, 2, 2), None), ((3, 7), [1]), ((3, 7), [0]), ((2, 3, 4), [0, 2]),
             ((1, 8, 9, 11), None), ((2, 2, 3, 2, 3), [2, 4])]


@pytest.mark.parametrize("shape,axes", MVN_CASES, ids=str)
def test_mvn(shape, axes):
    kw = {} if axes is None else {"axes": axes}
    m = make_model([helper.make_node("MeanVarianceNormalization", ["x"], ["y"], **kw)],
                   [("x", np.float32, list(shape))], [("y", np.float32, list(shape))])
    check_model(m, {"x": rand(*shape, seed=2) * 4 + 1})


@pytest.mark.parametrize("threads", [1, 3])
def test_threads(threads):
    shape = (4, 30, 20, 20)
    m = make_model([helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[1, 3]),
                    helper.make_node("LpNormalization", ["y"], ["z"], axis=2)],
                   [("x", np.float32, list(shape))], [("z", np.float32, list(shape))])
    check_model(m, {"x": rand(*shape, seed=5)}, num_threads=threads)
