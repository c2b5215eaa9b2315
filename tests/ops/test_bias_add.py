"""BiasAdd and the ops' argument checks, on mace graphs built directly (no ONNX op maps to BiasAdd)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import assert_close, rand


def _session(op_type, inputs, consts, out_shape, **args):
    """A one-op mace graph: graph inputs given as {name: shape}, constants as {name: array}."""
    import mace
    from mace.converters import ir
    from mace.converters.model import MaceModel
    g = ir.Graph(name="t")
    names = list(inputs) + list(consts)
    g.inputs = [ir.TensorInfo(n, list(s), np.dtype(np.float32), "NONE") for n, s in inputs.items()]
    g.outputs = [ir.TensorInfo("y", list(out_shape), np.dtype(np.float32), "NONE")]
    g.consts = dict(consts)
    g.ops = [ir.Op(op_type, "op0", names, ["y"], args)]
    return mace.Session(MaceModel(g))


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (1, 4, 5, 6), (2, 3, 1, 1), (1, 3, 2, 3, 4),
                                   (2, 64, 33, 17)], ids=lambda s: "x".join(map(str, s)))
def test_bias_add(shape):
    x, b = rand(*shape, seed=1), rand(shape[1], seed=2)
    sess = _session("BiasAdd", {"x": shape}, {"b": b}, shape)
    ref = x + b.reshape((1, -1) + (1,) * (len(shape) - 2))
    assert_close(sess.run({"x": x})["y"], ref)


def test_batch_norm_fused_relux():
    shape = (2, 3, 4, 5)
    x, s, o = rand(*shape, seed=1, low=-8, high=8), rand(3, seed=2), rand(3, seed=3)
    sess = _session("BatchNorm", {"x": shape}, {"s": s, "o": o}, shape, activation="RELUX",
                    max_limit=1.5)
    ref = np.clip(x * s.reshape(1, 3, 1, 1) + o.reshape(1, 3, 1, 1), 0, 1.5)
    assert_close(sess.run({"x": x})["y"], ref)


BAD = [
    ("Conv2D", {"x": (1, 4, 5, 5)}, {"w": rand(6, 3, 3, 3)}, {"group": 2}, "channels"),
    ("Conv2D", {"x": (1, 4, 5, 5)}, {"w": rand(6, 2, 3, 3)}, {"group": 3}, "group"),
    ("Conv2D", {"x": (1, 4, 5, 5)}, {"w": rand(6, 4, 3)}, {}, "rank"),
    ("Conv2D", {"x": (1, 4, 5, 5)}, {"w": rand(6, 4, 3, 3), "b": rand(5)}, {}, "bias"),
    ("Conv2D", {"x": (1, 4, 2, 2)}, {"w": rand(6, 4, 3, 3)}, {}, "not positive"),
    ("Conv2D", {"x": (1, 4, 5, 5)}, {"w": rand(6, 4, 3, 3)}, {"strides": [0, 1]}, "strides"),
    ("Conv2D", {"x": (1, 4, 5, 5)}, {"w": rand(6, 4, 3, 3)}, {"padding": "FULL"}, "padding"),
    ("Deconv2D", {"x": (1, 4, 5, 5)}, {"w": rand(3, 2, 3, 3)}, {}, "channels"),
    ("Deconv2D", {"x": (1, 4, 5, 5)}, {"w": rand(4, 2, 3, 3), "b": rand(3)}, {}, "bias"),
    ("Deconv2D", {"x": (1, 4, 5, 5)}, {"w": rand(4, 2, 3, 3)}, {"padding_values": [4, 4, 4, 4]},
     "not positive"),
    ("Pooling", {"x": (1, 4, 2, 2)}, {}, {"pooling_type": "MAX", "kernels": [3, 3]},
     "not positive"),
    ("Pooling", {"x": (1, 4, 5, 5)}, {}, {"pooling_type": "L2", "kernels": [3, 3]},
     "pooling_type"),
    ("FullyConnected", {"x": (2, 6)}, {"w": rand(4, 5)}, {}, "features"),
    ("FullyConnected", {"x": (2, 6)}, {"w": rand(4, 6), "b": rand(6)}, {}, "bias"),
    ("MatMul", {"x": (2, 3, 4)}, {"w": rand(5, 6)}, {}, "inner"),
    ("MatMul", {"x": (2, 3, 4)}, {"w": rand(3, 4, 6)}, {}, "broadcast"),
    ("BatchNorm", {"x": (1, 4, 5, 5)}, {"s": rand(3), "o": rand(4)}, {}, "scale"),
    ("BiasAdd", {"x": (1, 4, 5, 5)}, {"b": rand(5)}, {}, "bias"),
]


@pytest.mark.parametrize("op_type,inputs,consts,args,match", BAD,
                         ids=[f"{b[0]}-{b[4]}" for b in BAD])
def test_invalid_model(op_type, inputs, consts, args, match):
    import mace
    with pytest.raises(mace.errors.InvalidModelError, match=match) as e:
        _session(op_type, inputs, consts, [1], **args)
    assert "op0" in str(e.value)
