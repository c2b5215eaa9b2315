"""Lazy, bounded allocation (issue 37, item 7): a model declaring an input of 25 x 194,966,524
floats (19.5 GB) loads without allocating for it, and a run whose arena exceeds
MACE_MAX_ARENA_BYTES or Session's max_arena_bytes fails with OutOfResourcesError (a MaceError)
naming the size and the ceiling instead of an allocation the OOM killer ends. The large cases
run in a child process under an address-space limit, so a regression fails the test instead of
taking the machine's memory."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _child(body: str, env_extra=None) -> subprocess.CompletedProcess:
    code = textwrap.dedent("""
        import resource, sys
        sys.path.insert(0, %r)
        lim = 6 << 30
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        import numpy as np
        import mace
    """ % HERE) + textwrap.dedent(body)
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)


def test_huge_declared_input_loads_lazily():
    res = _child("""
        from mace.converters import ir
        import tiny_models
        big = [25, 194966524]
        m = tiny_models._graph(
            [ir.Op("Activation", "r0", ["x"], ["t"], {"activation": "RELU"}),
             ir.Op("Activation", "r1", ["t"], ["y"], {"activation": "RELU"})],
            [("x", big)], [("y", big)], shapes={"t": big})
        sess = mace.Session(m, num_threads=1)          # nothing of 19.5 GB fits under the limit
        assert list(sess.inputs[0].shape) == big, sess.inputs
        try:
            sess.run(np.zeros((25, 3, 1), np.float32))      # the wrong rank, refused first
        except mace.InvalidInputError as e:
            print("refused:", e)
        else:
            print("ran")
        try:                                            # the right shape, but a broadcast view
            sess.run(np.broadcast_to(np.float32(1), big))
        except mace.MaceError as e:
            print("copy refused:", type(e).__name__, e)
        else:
            print("ran")
    """)
    assert res.returncode == 0, res.stderr
    assert "refused:" in res.stdout and "194966524" in res.stdout, res.stdout
    assert "copy refused: OutOfResourcesError input 'x': out of memory" in res.stdout, res.stdout


def test_arena_over_the_ceiling_is_a_mace_error():
    """x [25, 1] expanded to [25, 194966524] inside the model: the input is small, the arena is
    19.5 GB; under MACE_MAX_ARENA_BYTES=1 GiB the run raises MaceError, and the session still
    runs shapes that fit."""
    res = _child("""
        from onnx import helper
        from helpers import make_model
        big = [25, 194966524]
        nodes = [helper.make_node("Expand", ["x", "s"], ["e"]),
                 helper.make_node("Relu", ["e"], ["r"]),
                 helper.make_node("ReduceSum", ["r", "axes"], ["y"], keepdims=1)]
        m = make_model(nodes, [("x", np.float32, [25, 1])], [("y", np.float32, [25, 1])],
                       initializers=[("s", np.array(big, np.int64)),
                                     ("axes", np.array([1], np.int64))])
        sess = mace.Session(m, num_threads=1)
        try:
            sess.run(np.ones((25, 1), np.float32))
        except mace.MaceError as e:
            print("refused:", type(e).__name__, e)
        else:
            print("ran")
    """, {"MACE_MAX_ARENA_BYTES": str(1 << 30)})
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert "refused:" in out and "ceiling of 1073741824 bytes" in out, out
    need = int(out.split("needs ")[1].split()[0])
    assert need >= 25 * 194966524 * 4, out


def _chain(n: int):
    """x [1, n] -> Relu -> Neg -> Relu -> y: two intermediates of n floats in the arena."""
    from onnx import helper
    from helpers import make_model
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Relu", ["b"], ["y"])]
    return make_model(nodes, [("x", np.float32, [1, n])], [("y", np.float32, [1, n])])


def test_session_max_arena_bytes_refuses_a_larger_arena():
    """Session(max_arena_bytes=N): a run whose arena needs more raises OutOfResourcesError (a
    MaceError and a MemoryError) naming both sizes; a session with room runs the same model."""
    import mace
    m = _chain(4096)
    x = np.linspace(-1, 1, 4096, dtype=np.float32)[None]
    with mace.Session(m, num_threads=1, max_arena_bytes=1000) as sess:
        with pytest.raises(mace.OutOfResourcesError) as e:
            sess.run(x)
    assert isinstance(e.value, mace.MaceError) and isinstance(e.value, MemoryError)
    msg = str(e.value)
    assert "ceiling of 1000 bytes" in msg and "max_arena_bytes" in msg, msg
    need = int(msg.split("needs ")[1].split()[0])
    assert need >= 4096 * 4, msg                      # at least one of the intermediates
    with mace.Session(m, num_threads=1, max_arena_bytes=1 << 20) as sess:
        np.testing.assert_array_equal(sess.run(x), np.maximum(-np.maximum(x, 0), 0))
        assert 0 < sess.memory_stats()["arena_bytes"] <= 1 << 20


def test_session_max_arena_bytes_overrides_the_environment():
    """max_arena_bytes over MACE_MAX_ARENA_BYTES: 0 is no limit; a value above it runs."""
    res = _child("""
        from test_bounded_alloc import _chain
        m = _chain(4096)
        x = np.ones((1, 4096), np.float32)
        for kw in ({}, {"max_arena_bytes": 0}, {"max_arena_bytes": 1 << 20}):
            try:
                mace.Session(m, num_threads=1, **kw).run(x)
                print(kw, "ran")
            except mace.OutOfResourcesError as e:
                print(kw, "refused:", e)
    """, {"MACE_MAX_ARENA_BYTES": "1000"})
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("{} refused:") and "ceiling of 1000 bytes" in lines[0], lines
    assert lines[1:] == ["{'max_arena_bytes': 0} ran", "{'max_arena_bytes': 1048576} ran"], lines


@pytest.mark.parametrize("bad", [-1, True, 1.5, "1000", 2**63])
def test_session_max_arena_bytes_must_be_a_size(bad):
    import mace
    with pytest.raises(mace.InvalidArgumentError, match="max_arena_bytes"):
        mace.Session(_chain(8), num_threads=1, max_arena_bytes=bad)
