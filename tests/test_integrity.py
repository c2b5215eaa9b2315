"""Model-file integrity: checksums, files changed under a live session, corrupt ONNX input,
and the command line's one-line failures (issue 37)."""
import os
import random
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mace  # noqa: E402

K, N = 96, 160  # a weight of 60 KB: several pages of .data


def _weights():
    rng = np.random.default_rng(7)
    w = rng.standard_normal((K, N)).astype(np.float32)
    b = rng.standard_normal((N,)).astype(np.float32)
    return w, b


def _onnx_model():
    w, b = _weights()
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["y"])]
    g = helper.make_graph(nodes, "mm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, K])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, N])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _input():
    return np.random.default_rng(1).standard_normal((2, K)).astype(np.float32)


def _expected():  # NumPy oracle
    w, b = _weights()
    return _input() @ w + b


@pytest.fixture()
def saved(tmp_path):
    pb, data = mace.convert(_onnx_model()).save(tmp_path / "m.pb", tmp_path / "m.data")
    return pb, data


def test_checksums_are_recorded(saved):
    pb, data = saved
    graph, blob = open(pb, "rb").read(), open(data, "rb").read()
    assert graph[-6:-4] == b"\xc5\x3e"
    assert struct.unpack("<I", graph[-4:])[0] == zlib.crc32(graph[:-6])
    net = mace.proto.NetDef()
    net.ParseFromString(graph)
    assert net.weights_crc32 == zlib.crc32(blob)
    assert net.graph_crc32 == zlib.crc32(graph[:-6])
    out = mace.Session(pb, data, num_threads=1).run(_input())
    np.testing.assert_allclose(out, _expected(), rtol=1e-5, atol=1e-5)


def _flip(path, rng):
    raw = bytearray(open(path, "rb").read())
    bit = rng.randrange(len(raw) * 8)
    raw[bit // 8] ^= 1 << (bit % 8)
    return bytes(raw), bit


@pytest.mark.parametrize("which", ["data", "pb"])
def test_every_single_bit_flip_is_rejected(saved, tmp_path, which):
    pb, data = saved
    target = data if which == "data" else pb
    good = open(target, "rb").read()
    rng = random.Random(37 if which == "data" else 38)
    accepted = []
    for _ in range(200):
        bad, bit = _flip(target, rng)
        with open(target, "wb") as f:
            f.write(bad)
        try:
            mace.Session(pb, data, num_threads=1)
            accepted.append(bit)
        except mace.InvalidModelError as e:
            assert os.fspath(pb) in str(e) or "checksum" in str(e), str(e)
    with open(target, "wb") as f:
        f.write(good)
    assert accepted == [], f"{len(accepted)} flipped bits of .{which} loaded: {accepted[:10]}"


def test_mismatch_names_the_file_and_what(saved):
    pb, data = saved
    raw = bytearray(open(data, "rb").read())
    raw[103] ^= 0x20  # an exponent bit of weight 25
    open(data, "wb").write(raw)
    with pytest.raises(mace.InvalidModelError, match="weights checksum mismatch") as e:
        mace.Session(pb, data, num_threads=1)
    assert os.fspath(pb) in str(e.value)
    # Skipping the check loads the corrupt weights, and they change the result.
    out = mace.Session(pb, data, num_threads=1, verify_checksum=False).run(_input())
    assert not np.allclose(out, _expected(), rtol=1e-5, atol=1e-5)


def test_graph_flip_names_the_graph(saved):
    pb, data = saved
    raw = bytearray(open(pb, "rb").read())
    raw[len(raw) // 2] ^= 1
    open(pb, "wb").write(raw)
    with pytest.raises(mace.InvalidModelError, match="graph"):
        mace.Session(pb, data, num_threads=1)


def test_models_without_checksums_still_load(saved, tmp_path):
    pb, data = saved
    net = mace.proto.NetDef()
    net.ParseFromString(open(pb, "rb").read())
    net.ClearField("graph_crc32")
    net.ClearField("weights_crc32")
    old = tmp_path / "old.pb"
    old.write_bytes(net.SerializeToString())
    out = mace.Session(old, data, num_threads=1).run(_input())
    np.testing.assert_allclose(out, _expected(), rtol=1e-5, atol=1e-5)
    # One checksum without the other is a damaged file, not an old one.
    net.weights_crc32 = zlib.crc32(open(data, "rb").read())
    old.write_bytes(net.SerializeToString())
    with pytest.raises(mace.InvalidModelError, match="no graph checksum"):
        mace.Session(old, data, num_threads=1)


def test_buffers_are_verified_too(saved):
    pb, data = saved
    graph, blob = open(pb, "rb").read(), bytearray(open(data, "rb").read())
    np.testing.assert_allclose(mace.Session(graph, bytes(blob), num_threads=1).run(_input()),
                               _expected(), rtol=1e-5, atol=1e-5)
    blob[5] ^= 0x10
    with pytest.raises(mace.InvalidModelError, match="weights checksum"):
        mace.Session(graph, bytes(blob), num_threads=1)


_LIVE = textwrap.dedent("""
    import os, sys, numpy as np, mace
    pb, data, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    x = np.load(sys.argv[4])
    sess = mace.Session(pb, data, num_threads=1)
    first = sess.run(x)
    if mode == "truncate":
        os.truncate(data, 0)
    elif mode == "half":
        os.truncate(data, os.path.getsize(data) // 2)
    else:  # rewrite in place with other bytes
        n = os.path.getsize(data)
        with open(data, "r+b") as f:
            f.write(b"\\x7f" * n)
    try:
        again = sess.run(x)
    except mace.MaceError as e:
        print("MaceError", e)
        sys.exit(0)
    print("same" if np.array_equal(first, again) else "CHANGED")
    np.save(sys.argv[5], again)
""")


@pytest.mark.parametrize("mode", ["truncate", "half", "rewrite"])
def test_weights_file_changed_under_a_live_session(saved, tmp_path, mode):
    pb, data = saved
    np.save(tmp_path / "x.npy", _input())
    r = subprocess.run([sys.executable, "-c", _LIVE, os.fspath(pb), os.fspath(data), mode,
                        os.fspath(tmp_path / "x.npy"), os.fspath(tmp_path / "y.npy")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"exit {r.returncode} (a negative one is a signal): {r.stderr}"
    assert r.stdout.startswith("same"), r.stdout + r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), _expected(), rtol=1e-5, atol=1e-5)


# ---- the command line ----------------------------------------------------------------------

def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mace", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def _one_line_failure(r):
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("mace"), r.stderr


def test_cli_missing_model(tmp_path):
    r = _cli("run", os.fspath(tmp_path / "nope.onnx"))
    _one_line_failure(r)
    assert "nope.onnx" in r.stderr


def test_cli_directory_as_model(tmp_path):
    d = tmp_path / "dir.onnx"
    d.mkdir()
    _one_line_failure(_cli("run", os.fspath(d)))
    p = tmp_path / "dir.pb"
    p.mkdir()
    r = _cli("run", os.fspath(p))
    _one_line_failure(r)
    assert "out of memory" not in r.stderr and "regular file" in r.stderr, r.stderr


def test_cli_debug_prints_the_traceback(tmp_path):
    r = _cli("run", os.fspath(tmp_path / "nope.onnx"), "--debug")
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_cli_unwritable_build_dir(tmp_path):
    onnx.save(_onnx_model(), tmp_path / "m.onnx")
    (tmp_path / "m.yml").write_text(textwrap.dedent(f"""
        library_name: lib
        target_abis: [host]
        models:
          m:
            platform: onnx
            model_file_path: {tmp_path / 'm.onnx'}
            model_sha256_checksum: {__import__('hashlib').sha256(
                (tmp_path / 'm.onnx').read_bytes()).hexdigest()}
            subgraphs:
              - input_tensors: [x]
                input_shapes: [2,{K}]
                output_tensors: [y]
                output_shapes: [2,{N}]
        """))
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    r = _cli("convert", "--config", os.fspath(tmp_path / "m.yml"), "--build_dir",
             os.fspath(blocker / "build"))
    _one_line_failure(r)


# ---- corrupt ONNX files --------------------------------------------------------------------

def _cnn_onnx_model():
    """Conv, Relu, Reshape, Gemm, Softmax: attributes of several kinds for the mutations to hit."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "B"),
             numpy_helper.from_array(np.array([1, -1], np.int64), "S"),
             numpy_helper.from_array(rng.standard_normal((10, 256)).astype(np.float32), "G")]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "S"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "G"], ["g"], name="fc", transB=1),
             helper.make_node("Softmax", ["g"], ["y"], name="sm", axis=1)]
    g = helper.make_graph(nodes, "net",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mutated_onnx_files_fail_as_mace_errors(tmp_path):
    # Seeded: before the converter wrapped them, these 300 cases raised a TypeError and a
    # UnicodeDecodeError besides MaceErrors.
    good = _cnn_onnx_model().SerializeToString()
    rng = random.Random(2)
    x = np.zeros((1, 3, 8, 8), np.float32)
    others = []
    for i in range(300):
        raw = bytearray(good)
        if i % 3 == 2:
            raw = raw[:rng.randrange(1, len(raw))]
        else:
            for _ in range(rng.choice((1, 1, 2, 8))):
                bit = rng.randrange(len(raw) * 8)
                raw[bit // 8] ^= 1 << (bit % 8)
        path = tmp_path / "bad.onnx"
        path.write_bytes(bytes(raw))
        try:
            mace.Session(path, num_threads=1).run(x)
        except mace.MaceError:
            pass
        except Exception as e:  # noqa: BLE001 - what this test looks for
            others.append(f"case {i}: {type(e).__name__}: {e}")
    assert others == [], "\n".join(others[:10])
