"""Errors: wrong inputs raise InvalidInputError naming the input and the expected and given
shape/dtype; corrupt or inconsistent models raise InvalidModelError and never crash."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mace
from mace import _mace, proto

import tiny_models as tm

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- inputs ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def relu():
    return mace.Session(tm.relu_model(), num_threads=1)


@pytest.fixture(scope="module")
def two_in():
    return mace.Session(tm.two_input_model(), num_threads=1)


def test_wrong_shape(two_in):
    # a + b cannot broadcast [2,3,4,6] with [2,3,4,5]: the engine's re-inference fails and
    # names the input, the shape the model has and the one given.
    with pytest.raises(mace.InvalidInputError) as e:
        two_in.run({"a": np.zeros((2, 3, 4, 6), np.float32), "b": tm.rand_x()})
    msg = str(e.value)
    assert "'a'" in msg and "[2,3,4,5]" in msg and "[2,3,4,6]" in msg
    # the session keeps working with the shape it had
    x = tm.rand_x()
    np.testing.assert_array_equal(two_in.run({"a": x, "b": x})["y"], x + x)


def test_new_shape_is_accepted_when_the_graph_allows_it():
    sess = mace.Session(tm.relu_model(), num_threads=1)
    for shape in [(1, 3, 7, 2), (2, 3, 4, 5), (4, 1, 1, 9)]:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(sess.run(x), np.maximum(x, 0))


def test_wrong_rank():
    relu = mace.Session(tm.relu_model(), num_threads=1)
    with pytest.raises(mace.InvalidInputError, match=r"'x'.*\(3, 4, 5\).*\(2, 3, 4, 5\)"):
        relu.run(np.zeros((3, 4, 5), np.float32))
    with pytest.raises(mace.InvalidInputError, match="'x'"):
        relu.run(np.float32(1.0))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float16, np.uint8, np.bool_])
def test_wrong_dtype(relu, dtype):
    with pytest.raises(mace.InvalidInputError) as e:
        relu.run(np.zeros(tm.SHAPE, dtype))
    msg = str(e.value)
    assert "'x'" in msg and "float32" in msg and np.dtype(dtype).name in msg


def test_unknown_name(relu):
    with pytest.raises(mace.InvalidInputError) as e:
        relu.run({"x": tm.rand_x(), "nope": tm.rand_x()})
    assert "'nope'" in str(e.value) and "'x'" in str(e.value)
    with pytest.raises(mace.InvalidInputError, match="unknown input 1"):
        relu.run({1: tm.rand_x()})


def test_missing_input(two_in):
    with pytest.raises(mace.InvalidInputError) as e:
        two_in.run({"a": tm.rand_x()})
    assert "missing input 'b'" in str(e.value) and "(2, 3, 4, 5)" in str(e.value)


def test_not_an_array(relu):
    with pytest.raises(mace.InvalidInputError, match="'x'"):
        relu.run("not an array")
    with pytest.raises(mace.InvalidInputError, match="'x'"):
        relu.run([[1.0, 2.0], [3.0]])  # ragged
    with pytest.raises(TypeError):
        relu._engine.run([tm.rand_x()])  # the engine takes a dict


def test_engine_checks_too():
    eng = _mace.Engine(tm.relu_model().graph_bytes(), b"")
    with pytest.raises(mace.InvalidInputError, match=r"'x'.*\(1, 1\)"):
        eng.run({"x": np.zeros((1, 1), np.float32)})
    with pytest.raises(mace.InvalidInputError, match="missing input 'x'"):
        eng.run({})


def test_error_classes():
    for cls in (mace.InvalidModelError, mace.InvalidInputError, mace.UnsupportedError):
        assert issubclass(cls, mace.MaceError)
    assert _mace.InvalidModelError is mace.InvalidModelError


def test_gpu_runs_or_is_unsupported_saying_why():
    """device="gpu": an engine where OpenCL has a device, else UnsupportedError naming OpenCL
    (test_opencl.py simulates the machine without it)."""
    if mace.devices():
        eng = _mace.Engine(tm.relu_model().graph_bytes(), b"", device="gpu")
        eng.close()
    else:
        with pytest.raises(mace.UnsupportedError, match="OpenCL"):
            _mace.Engine(tm.relu_model().graph_bytes(), b"", device="gpu")


# ---- corrupt models ------------------------------------------------------------------------

def _parts(model=None):
    model = model or tm.two_output_model()
    return model.graph_bytes(), model.weights_bytes()


def _net(graph: bytes):
    """The NetDef to edit, without its checksums: an edited graph then loads as a file written
    before checksums, so the structural checks behind them are what a test reaches."""
    net = proto.NetDef()
    net.ParseFromString(graph)
    net.ClearField("weights_crc32")
    net.ClearField("graph_crc32")
    return net


def _invalid(graph, weights=b"", match=None):
    with pytest.raises(mace.InvalidModelError, match=match):
        _mace.Engine(graph, weights)


def test_sanity_loads():
    graph, weights = _parts()
    _mace.Engine(graph, weights).run({"x": tm.rand_x()})


def test_empty_and_random_bytes():
    _invalid(b"")
    rng = np.random.default_rng(0)
    for n in (1, 7, 64, 1000):
        _invalid(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    _invalid(b"\xff" * 32)


def test_truncated_graph():
    graph, weights = _parts()
    for cut in (1, 2, len(graph) // 2, len(graph) - 1):
        _invalid(graph[:cut], weights)


def test_bit_flipped_tag():
    graph, weights = _parts()
    bad = bytearray(graph)
    bad[0] |= 0x07  # wire type 7 does not exist
    _invalid(bytes(bad), weights)


def test_weights_too_short(tmp_path):
    graph, weights = _parts()
    for n in (0, 10, len(weights) - 1):
        _invalid(graph, weights[:n], match="weights")
    pb = tmp_path / "m.pb"
    pb.write_bytes(graph)
    (tmp_path / "m.data").write_bytes(weights[: len(weights) // 2])
    with pytest.raises(mace.InvalidModelError, match="weights"):
        mace.Session(pb)


def test_const_offset_and_size():
    graph, weights = _parts()
    net = _net(graph)
    net.tensors[0].offset = 32  # not 64-aligned
    _invalid(net.SerializeToString(), weights, match="'w'.*64-byte aligned")
    net = _net(graph)  # under 64 bytes: aligned to its element size only (serialize.const_alignment)
    del net.tensors[0].dims[:]
    net.tensors[0].dims.append(3)
    net.tensors[0].data_size = 12
    net.tensors[0].offset = 2
    _invalid(net.SerializeToString(), weights, match="'w'.*offset 2 is not 4-byte aligned")
    net = _net(graph)
    net.tensors[0].offset = 1 << 40
    _invalid(net.SerializeToString(), weights, match="'w'")
    net = _net(graph)
    net.tensors[0].offset = -64
    _invalid(net.SerializeToString(), weights, match="'w'")
    net = _net(graph)
    net.tensors[0].data_size += 4  # disagrees with dims
    _invalid(net.SerializeToString(), weights + b"\0" * 64, match="'w'")
    net = _net(graph)
    net.tensors[0].dims[0] = -3
    _invalid(net.SerializeToString(), weights, match="'w'")
    net = _net(graph)
    net.tensors[0].dims[:] = [1 << 30, 1 << 30, 1 << 30]
    _invalid(net.SerializeToString(), weights, match="'w'")


def test_output_shape_disagrees():
    graph, weights = _parts()
    net = _net(graph)
    net.op[0].output_shape[0].dims[:] = [2, 3, 4, 6]
    _invalid(net.SerializeToString(), weights, match="'add'")
    net = _net(graph)
    del net.op[1].output_shape[0].dims[-1]
    _invalid(net.SerializeToString(), weights, match="'relu'")


def test_unknown_op_type():
    graph, weights = _parts()
    net = _net(graph)
    net.op[1].type = "NoSuchOp"
    _invalid(net.SerializeToString(), weights, match="NoSuchOp")
    net.op[1].type = ""
    _invalid(net.SerializeToString(), weights)


def test_input_produced_later():
    graph, weights = _parts(tm.chain_model())
    net = _net(graph)
    ops = [type(net.op[0])() for _ in net.op]
    for dst, src in zip(ops, reversed(net.op)):
        dst.CopyFrom(src)
    del net.op[:]
    net.op.extend(ops)
    _invalid(net.SerializeToString(), weights, match="'u'")


def test_cycle():
    graph, weights = _parts(tm.chain_model())
    net = _net(graph)
    net.op[0].input[0] = "u"  # t = u + w, u = relu(t): a cycle
    _invalid(net.SerializeToString(), weights, match="'u'")


def test_output_not_produced_or_missing():
    graph, weights = _parts()
    net = _net(graph)
    net.output_info[0].name = "ghost"
    _invalid(net.SerializeToString(), weights, match="ghost")
    net = _net(graph)
    del net.output_info[:]
    _invalid(net.SerializeToString(), weights)


def test_tensor_defined_twice():
    graph, weights = _parts()
    net = _net(graph)
    net.op[1].output[0] = "y"  # y is already the output of op 0
    net.output_info[1].name = "y"
    _invalid(net.SerializeToString(), weights, match="'y'")
    net = _net(graph)
    net.op[0].output[0] = "x"  # overwrites the model input
    _invalid(net.SerializeToString(), weights, match="'x'")


def test_bad_input_info():
    graph, weights = _parts()
    net = _net(graph)
    net.input_info[0].dims[1] = -1
    _invalid(net.SerializeToString(), weights, match="'x'")
    net = _net(graph)
    net.input_info[0].dims.extend([1] * 8)  # rank 12
    _invalid(net.SerializeToString(), weights, match="'x'")


def test_op_without_outputs():
    graph, weights = _parts()
    net = _net(graph)
    del net.op[1].output[:]
    _invalid(net.SerializeToString(), weights)


def test_bad_argument():
    graph, weights = _parts()
    net = _net(graph)
    for a in net.op[1].arg:
        if a.name == "activation":
            a.s = b"NO_SUCH_ACTIVATION"
    with pytest.raises((mace.InvalidModelError, mace.UnsupportedError), match="relu"):
        _mace.Engine(net.SerializeToString(), weights)


# ---- fuzzing in a subprocess: many corrupt variants, none may crash ------------------------

FUZZ = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, {here!r})
    import mace
    from mace import _mace
    import tiny_models as tm

    rng = np.random.default_rng({seed})
    counts = {{"loaded": 0, "ran": 0, "mace_errors": 0}}
    other = []
    x = tm.rand_x()

    def attempt(tag, graph, weights):
        print(tag, flush=True)  # the last line names the variant if this process dies
        try:
            eng = _mace.Engine(graph, weights, num_threads=2)
            counts["loaded"] += 1
            names = [i[0] for i in eng.inputs()]
            outs = eng.outputs()
            if names == ["x"] and all(int(np.prod(o[1])) < 1 << 20 for o in outs):
                eng.run({{"x": x}})
                counts["ran"] += 1
        except mace.MaceError:
            counts["mace_errors"] += 1
        except Exception as e:  # anything else is a bug of the extension
            other.append(f"{{tag}}: {{type(e).__name__}}: {{e}}")

    models = [tm.two_output_model(), tm.chain_model(), tm.relu_model()]
    for mi, m in enumerate(models):
        graph, weights = m.graph_bytes(), m.weights_bytes()
        for cut in range(len(graph)):
            attempt(f"model {{mi}} graph[:{{cut}}]", graph[:cut], weights)
        for cut in range(0, len(weights), 7):
            attempt(f"model {{mi}} weights[:{{cut}}]", graph, weights[:cut])
        for i in range({flips}):
            bad = bytearray(graph)
            nflip = 1 + (i % 3)
            for _ in range(nflip):
                pos = int(rng.integers(len(bad)))
                bad[pos] ^= 1 << int(rng.integers(8))
            attempt(f"model {{mi}} flip {{i}}", bytes(bad), weights)
        for i in range({flips} // 4):
            bad = bytearray(graph)
            pos = int(rng.integers(len(bad)))
            bad[pos] = int(rng.integers(256))
            attempt(f"model {{mi}} byte {{i}}", bytes(bad), weights)
    print("RESULT " + json.dumps({{"counts": counts, "other": other}}), flush=True)
""")


def test_fuzz_corrupt_models_never_crash():
    script = FUZZ.format(here=HERE, seed=1234, flips=200)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    last = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else "(no output)"
    assert res.returncode == 0, f"fuzz process died (rc {res.returncode}) at: {last}\n{res.stderr}"
    assert last.startswith("RESULT "), last
    result = json.loads(last[len("RESULT "):])
    assert not result["other"], "\n".join(result["other"][:10])
    assert result["counts"]["mace_errors"] > 0
