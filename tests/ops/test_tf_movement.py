"""BatchToSpaceND, SpaceToBatchND, Reverse, Stack, Unstack and Shape (mace ops with no ONNX
equivalent) on hand-built mace graphs, against NumPy references of TF's semantics."""
from __future__ import annotations

import numpy as np
import pytest

from dm_util import DTYPES, data, run_mace_ops


def _tf_space_to_batch(x_nchw, block, pads):
    """tf.space_to_batch_nd on the NHWC transpose, returned in NCHW."""
    x = x_nchw.transpose(0, 2, 3, 1)
    x = np.pad(x, [(0, 0), (pads[0], pads[1]), (pads[2], pads[3]), (0, 0)])
    n, h, w, c = x.shape
    bh, bw = block
    x = x.reshape(n, h // bh, bh, w // bw, bw, c).transpose(2, 4, 0, 1, 3, 5)
    return x.reshape(bh * bw * n, h // bh, w // bw, c).transpose(0, 3, 1, 2)


def _tf_batch_to_space(x_nchw, block, crops):
    x = x_nchw.transpose(0, 2, 3, 1)
    b, h, w, c = x.shape
    bh, bw = block
    n = b // (bh * bw)
    x = x.reshape(bh, bw, n, h, w, c).transpose(2, 3, 0, 4, 1, 5).reshape(n, h * bh, w * bw, c)
    x = x[:, crops[0]:h * bh - crops[1], crops[2]:w * bw - crops[3]]
    return x.transpose(0, 3, 1, 2)


S2B = [((1, 2, 4, 4), (2, 2), (0, 0, 0, 0)), ((2, 3, 5, 3), (2, 3), (1, 0, 2, 1)),
       ((1, 1, 1, 1), (1, 1), (0, 0, 0, 0)), ((2, 2, 3, 7), (3, 1), (0, 3, 0, 0)),
       ((1, 4, 2, 2), (4, 4), (1, 1, 2, 0))]


@pytest.mark.parametrize("shape,block,pads", S2B, ids=[str(i) for i in range(len(S2B))])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_space_to_batch_and_back(shape, block, pads, dtype):
    x = data(shape, dtype, seed=1)
    y, z = run_mace_ops(
        [("SpaceToBatchND", ["x"], ["y"], {"block_shape": list(block), "paddings": list(pads)}),
         ("BatchToSpaceND", ["y"], ["z"], {"block_shape": list(block), "crops": list(pads)})],
        {"x": x}, [("y", np.dtype(dtype)), ("z", np.dtype(dtype))])
    ref = _tf_space_to_batch(x, block, pads)
    np.testing.assert_array_equal(y, ref)
    np.testing.assert_array_equal(_tf_batch_to_space(ref, block, pads), x)
    np.testing.assert_array_equal(z, x)


@pytest.mark.parametrize("shape,block,crops", [((8, 2, 3, 2), (2, 2), (1, 2, 0, 3)),
                                               ((6, 1, 1, 4), (3, 2), (0, 2, 1, 1)),
                                               ((4, 3, 2, 2), (1, 4), (0, 0, 0, 0))])
def test_batch_to_space_crops(shape, block, crops):
    x = data(shape, np.float32, seed=2)
    (y,) = run_mace_ops([("BatchToSpaceND", ["x"], ["y"],
                          {"block_shape": list(block), "crops": list(crops)})],
                        {"x": x}, [("y", np.dtype(np.float32))])
    np.testing.assert_array_equal(y, _tf_batch_to_space(x, block, crops))


@pytest.mark.parametrize("shape,axes", [((5,), [0]), ((2, 3, 4), [1]), ((2, 3, 4), [0, 2]),
                                        ((2, 3, 4), [-1, 0, 1]), ((3, 1, 2, 5), []),
                                        ((1, 2, 3, 4, 5), [4, 2]), ((4, 1), [1])])
@pytest.mark.parametrize("dtype", DTYPES)
def test_reverse(shape, axes, dtype):
    x = data(shape, dtype, seed=3)
    (y,) = run_mace_ops([("Reverse", ["x"], ["y"], {"axes": axes})], {"x": x},
                        [("y", np.dtype(dtype))])
    np.testing.assert_array_equal(y, np.flip(x, axis=tuple(axes)) if axes else x)


@pytest.mark.parametrize("shape,n,axis", [((3,), 2, 0), ((3,), 4, 1), ((3,), 2, -1),
                                          ((2, 3, 4), 3, 0), ((2, 3, 4), 2, 2),
                                          ((2, 3, 4), 5, -2), ((2, 3, 4), 1, 3), ((), 3, 0),
                                          ((1, 1), 2, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_stack_unstack(shape, n, axis, dtype):
    xs = {f"x{i}": data(shape, dtype, seed=10 + i) for i in range(n)}
    ax = axis + len(shape) + 1 if axis < 0 else axis
    outs = [f"u{i}" for i in range(n)]
    res = run_mace_ops([("Stack", list(xs), ["y"], {"axis": axis}),
                        ("Unstack", ["y"], outs, {"axis": axis})], xs,
                       [("y", np.dtype(dtype))] + [(o, np.dtype(dtype)) for o in outs])
    np.testing.assert_array_equal(res[0], np.stack(list(xs.values()), axis=ax))
    for i, u in enumerate(res[1:]):
        np.testing.assert_array_equal(u.reshape(shape), xs[f"x{i}"])


@pytest.mark.parametrize("shape,start,end", [((2, 3, 4), None, None), ((5,), None, None),
                                             ((2, 3, 4, 5), 1, None), ((2, 3, 4, 5), -3, -1),
                                             ((2, 3), 5, 9), ((1, 0, 3), None, None)])
def test_shape(shape, start, end):
    x = data(shape, np.float32, seed=4)
    args = {k: v for k, v in (("start", start), ("end", end)) if v is not None}
    (y,) = run_mace_ops([("Shape", ["x"], ["y"], args)], {"x": x}, [("y", np.dtype(np.int64))])
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, np.array(shape, np.int64)[slice(start, end)])


def test_shape_feeds_reshape_at_infer():
    """Shape's output used as a value input (Reshape's shape) is evaluated at infer."""
    x, z = data((2, 3, 4), np.float32, seed=5), data((4, 6), np.float32, seed=6)
    (y,) = run_mace_ops([("Shape", ["x"], ["s"], {}), ("Reshape", ["z", "s"], ["y"], {})],
                        {"x": x, "z": z}, [("y", np.dtype(np.float32))])
    np.testing.assert_array_equal(y, z.reshape(2, 3, 4))


def test_unstack_bad_outputs():
    import mace
    with pytest.raises(mace.errors.InvalidModelError, match="outputs"):
        run_mace_ops([("Unstack", ["x"], ["a", "b"], {"axis": 0})],
                     {"x": data((3, 2), np.float32)}, [("a", np.dtype(np.float32))])
