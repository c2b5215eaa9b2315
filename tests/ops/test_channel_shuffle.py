"""ChannelShuffle (a mace op with no ONNX counterpart) on hand-built mace models against
NumPy's reshape -> transpose -> reshape: groups 1..C, ranks 2..5, every dtype."""
from __future__ import annotations

import numpy as np
import pytest

from dm_util import DTYPES, data, run_mace_ops

import mace


def _ref(x, g):
    n, c = x.shape[:2]
    return x.reshape(n, g, c // g, -1).transpose(0, 2, 1, 3).reshape(x.shape)


def _run(shape, group, dtype=np.float32):
    x = data(shape, dtype)
    (y,) = run_mace_ops([("ChannelShuffle", ["x"], ["y"], {"group": group})], {"x": x},
                        [("y", np.dtype(dtype))])
    np.testing.assert_array_equal(y, _ref(x, group))


@pytest.mark.parametrize("shape,group", [
    ((1, 4, 3, 3), 2), ((2, 6, 5, 3), 3), ((2, 6, 5, 3), 2), ((1, 12, 1, 1), 4),
    ((1, 5, 2, 2), 5), ((1, 5, 2, 2), 1), ((3, 8), 4), ((2, 6, 7), 3), ((1, 4, 2, 3, 2), 2),
    ((1, 116, 28, 28), 2),  # ShuffleNet v2 size, splits across threads
], ids=str)
def test_channel_shuffle(shape, group):
    _run(shape, group)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_channel_shuffle_dtypes(dtype):
    _run((2, 6, 3, 5), 3, dtype)


def test_channel_shuffle_bad_group():
    with pytest.raises(mace.MaceError, match="group"):
        _run((1, 6, 2, 2), 4)
