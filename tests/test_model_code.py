"""Models compiled into code (model_graph_format / model_data_format: code; mace/codegen.py,
cmake/model_library.cmake): mace convert writes C sources, cmake builds lib<library_name>.a and the
sample, which runs with no model file present and gives the .pb/.data run's outputs bit for bit
(same build, x86-64), and under qemu-aarch64 the host's within the whole-network tolerance (other
ISA: NEON's sums round differently from AVX's). The cmake builds are op-selected (the models'
ops.txt), unoptimised (-O0: they compile in a fraction of the time) and incremental, under
build/test_model_code/."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest

import mace
import mace.zoo
from mace import codegen

from helpers import scale_atol

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build", "test_model_code")
LIB = "lenetlib"


def _run(cmd, timeout=1800, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def _convert(tmp_path, graph_fmt="code", data_fmt="code"):
    """LeNet (random weights) through `mace convert --config`; returns the build folder."""
    model = mace.zoo.lenet()
    onnx.save(model, str(tmp_path / "lenet.onnx"))
    sha = hashlib.sha256(open(tmp_path / "lenet.onnx", "rb").read()).hexdigest()
    (tmp_path / "d.yml").write_text(f"""
library_name: {LIB}
model_graph_format: {graph_fmt}
model_data_format: {data_fmt}
models:
  lenet:
    platform: onnx
    model_file_path: lenet.onnx
    model_sha256_checksum: {sha}
    subgraphs:
      - input_tensors: [{model.graph.input[0].name}]
        input_shapes: ["1,1,28,28"]
        output_tensors: [{model.graph.output[0].name}]
""")
    r = _run([sys.executable, "-m", "mace", "convert", "--config", "d.yml"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return tmp_path / "build" / LIB


def _cmake_build(bdir, code_dir, extra=(), targets=("mace_model_run", "mace_run")):
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    cfg = _run(["cmake", "-S", ROOT, "-B", bdir, "-DCMAKE_BUILD_TYPE=Debug",
                "-DMACE_BUILD_TESTS=OFF", f"-DMACE_MODEL_DIR={code_dir}",
                f"-DMACE_OPS_FILE={code_dir}/ops.txt", *extra])
    assert cfg.returncode == 0, cfg.stderr[-3000:]
    b = _run(["cmake", "--build", bdir, "--target", *targets, "-j", "2"])
    assert b.returncode == 0, (b.stdout + b.stderr)[-3000:]


def test_generated_sources(tmp_path):
    lib = _convert(tmp_path)
    code = lib / "code"
    names = sorted(os.listdir(code))
    assert names == sorted(["lenetlib_models.h", "lenet.h", "lenet.c", "lenet_weights.c",
                            "main.c", "ops.txt", "mace_model_library.cmake"])
    h = (code / "lenet.h").read_text()
    assert ("mace_status mace_lenet_create_engine(const mace_config *config, "
            "mace_engine **engine);") in h
    w = (code / "lenet_weights.c").read_text()
    assert "static _Alignas(64) const unsigned char k_lenet_weights[" in w
    ops = (code / "ops.txt").read_text().split()
    graph = open(lib / "model" / "lenet.pb", "rb").read()
    assert ops == codegen.op_types(graph) and "Conv2D" in ops


def test_c_string_escapes_round_trip():
    """Every byte value survives the C string form (decoded as a C compiler reads it)."""
    data = bytes(range(256)) + b"??=?\"\\0\n1"
    text = codegen.c_string_lines(data)
    import ast
    parts = [ast.literal_eval("b" + line.strip()) for line in text.splitlines()]
    # Python's octal escapes read as C's: at most 3 digits, printable characters as themselves
    assert b"".join(parts) == data


def test_yaml_code_key_errors(tmp_path):
    from mace import deploy
    with pytest.raises(deploy.ConfigError, match="model_graph_format"):
        deploy.parse({"library_name": "x", "model_graph_format": "cpp", "models": {}})


@pytest.mark.parametrize("fmt", [("code", "code"), ("code", "file"), ("file", "code")],
                         ids=["graph+data", "graph", "data"])
def test_x86_code_model_matches_pb_run_bit_for_bit(tmp_path, fmt):
    lib = _convert(tmp_path, *fmt)
    bdir = os.path.join(BUILD, "host")
    _cmake_build(bdir, lib / "code")
    exe = os.path.join(bdir, "model", f"{LIB}_run")
    x = np.random.default_rng(0).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    # the sample runs from a folder holding no model file; the non-code part comes from a file
    run_dir = tmp_path / "device"
    run_dir.mkdir()
    os.replace(tmp_path / "x.npy", run_dir / "x.npy")
    model_dir = lib / "model"
    args = [exe, "--input", "x.npy", "--output_dir", "out"]
    if fmt == ("code", "file"):
        args += ["--weights", str(model_dir / "lenet.data")]
    elif fmt == ("file", "code"):
        args += ["--graph", str(model_dir / "lenet.pb")]
    r = _run(args, cwd=run_dir, timeout=300)
    assert r.returncode == 0, r.stderr
    ref = _run([os.path.join(bdir, "mace_run"), "--model", str(model_dir / "lenet.pb"),
                "--weights", str(model_dir / "lenet.data"), "--input", "x.npy",
                "--output_dir", "ref", "--round", "1", "--num_threads", "1"],
               cwd=run_dir, timeout=300)
    assert ref.returncode == 0, ref.stderr
    outs = sorted(os.listdir(run_dir / "out"))
    assert outs and outs == sorted(os.listdir(run_dir / "ref"))
    for f in outs:
        got, want = np.load(run_dir / "out" / f), np.load(run_dir / "ref" / f)
        assert got.shape == want.shape and got.tobytes() == want.tobytes(), f
    # and the Python front's run of the same files (another build of the same kernels)
    py = mace.Session(str(model_dir / "lenet.pb"), str(model_dir / "lenet.data")).run(x)
    np.testing.assert_allclose(np.load(run_dir / "out" / outs[0]), py, rtol=1e-5,
                               atol=scale_atol(py))


def test_op_not_compiled_in_names_op_and_build(tmp_path):
    """The op-selected mace_run of the test above refuses a model with another op, by name."""
    lib = _convert(tmp_path)
    bdir = os.path.join(BUILD, "host")
    _cmake_build(bdir, lib / "code")
    from tiny_models import chain_model
    m = chain_model()
    types = {op.type for op in m.graph.ops}
    ops = set((lib / "code" / "ops.txt").read_text().split()) | {"Reorder"}
    missing = sorted(types - ops)
    assert missing, f"chain_model's ops {types} are all in LeNet's"
    m.save(str(tmp_path / "c.pb"), str(tmp_path / "c.data"))
    r = _run([os.path.join(bdir, "mace_run"), "--model", str(tmp_path / "c.pb"),
              "--weights", str(tmp_path / "c.data"), "--round", "1"], timeout=120)
    assert r.returncode != 0
    assert "is not compiled into this library" in r.stderr and "MACE_OPS=" in r.stderr
    assert any(f"'{t}'" in r.stderr for t in missing), r.stderr


def test_op_selection_derives_kernel_cut_and_cpu_only(tmp_path):
    """cmake/op_selection.cmake at configure time (nothing built): the SIMD fields only unselected ops
    read are cut, the selected ops' are kept, and MACE_OPENCL=OFF registers no GPU kind."""
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    bdir = tmp_path / "b"
    cfg = _run(["cmake", "-S", ROOT, "-B", str(bdir), "-DMACE_BUILD_TESTS=OFF",
                "-DMACE_OPS=Conv2D,Pooling,FullyConnected,Reshape", "-DMACE_OPENCL=OFF"])
    assert cfg.returncode == 0, cfg.stderr[-3000:]
    sel = (bdir / "gen" / "mace_kernel_selection.h").read_text()
    for field in ("softmax_rows", "layer_norm", "reduce_rows", "transpose2d", "col2im", "q8_add"):
        assert f"MACE_KERNEL_DROPPED_{field} 1" in sel, field  # read by Softmax, LayerNorm, ...
    for field in ("dwconv", "nchwc_conv1x1", "nchwc_dwconv", "maxpool2d", "nchw_to_nchwc"):
        assert f"MACE_KERNEL_DROPPED_{field} " not in sel, field  # read by Conv2D, Pooling, Reorder
    cut = (bdir / "gen" / "ksel_manifest.inc").read_text()
    assert "mace_f32_softmax_rows" not in cut and "mace_f32_nchwc_dwconv)" in cut
    kinds = (bdir / "gen" / "ops_manifest.inc").read_text()
    assert "mace_op_conv2d_f32" in kinds and "_cl)" not in kinds and "softmax" not in kinds
    not_compiled = cfg.stdout.split("kernel files not compiled:")[1].splitlines()[0]
    assert "softmax__" in not_compiled and "nchwc_dwconv__" not in not_compiled


def test_op_selected_run_matches_full_library_bit_for_bit(tmp_path):
    """The op-selected build of the tests above (LeNet's ops; cmake/op_selection.cmake also leaves out
    the SIMD kernel fields no selected op reads) runs LeNet to the same bits as the full library (the
    Python extension: every op, every kernel)."""
    lib = _convert(tmp_path)
    bdir = os.path.join(BUILD, "host")
    _cmake_build(bdir, lib / "code")
    with open(os.path.join(bdir, "gen", "mace_kernel_selection.h")) as f:
        dropped = [line.split()[1] for line in f if line.startswith("#define MACE_KERNEL_DROPPED_")]
    assert "MACE_KERNEL_DROPPED_layer_norm" in dropped, dropped  # LeNet has no LayerNorm op
    model_dir = lib / "model"
    x = np.random.default_rng(2).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = _run([os.path.join(bdir, "mace_run"), "--model", str(model_dir / "lenet.pb"),
              "--weights", str(model_dir / "lenet.data"), "--input", str(tmp_path / "x.npy"),
              "--output_dir", str(tmp_path / "out"), "--round", "1", "--num_threads", "1"],
             timeout=300)
    assert r.returncode == 0, r.stderr
    outs = os.listdir(tmp_path / "out")
    assert len(outs) == 1
    got = np.load(tmp_path / "out" / outs[0])
    full = mace.Session(str(model_dir / "lenet.pb"), str(model_dir / "lenet.data"),
                        num_threads=1).run(x)
    assert got.shape == full.shape and got.tobytes() == full.tobytes(), np.abs(got - full).max()


def _arm64_ready() -> bool:
    return bool(shutil.which("aarch64-linux-gnu-gcc") and shutil.which("qemu-aarch64")
                and os.path.exists("/usr/lib/aarch64-linux-gnu/libprotobuf-c.a"))


@pytest.mark.skipif(not _arm64_ready(), reason="no aarch64 cross toolchain / qemu-aarch64 "
                                               "(.ci/arm64 installs them)")
def test_arm64_code_model_under_qemu_matches_host(tmp_path):
    """The aarch64 sample (static, no Python, no model file) under qemu-aarch64 against the
    host's .pb/.data run: NEON vs AVX sums, within rtol 1e-4 + scale_atol (the whole-network
    bound of tests/helpers.py); mace_run of the same aarch64 build on the .pb/.data: bit for bit."""
    lib = _convert(tmp_path)
    bdir = os.path.join(BUILD, "arm64")
    _cmake_build(bdir, lib / "code",
                 extra=[f"-DCMAKE_TOOLCHAIN_FILE={ROOT}/cmake/aarch64-linux-gnu.cmake",
                        "-DCMAKE_EXE_LINKER_FLAGS=-static",
                        "-DPROTOBUF_C_LIBRARY=/usr/lib/aarch64-linux-gnu/libprotobuf-c.a",
                        "-DMACE_LIBM=/usr/aarch64-linux-gnu/lib/libm.a"])  # static
    exe = os.path.join(bdir, "model", f"{LIB}_run")
    file_out = _run(["file", exe]).stdout if shutil.which("file") else "aarch64"
    assert "aarch64" in file_out
    x = np.random.default_rng(1).uniform(0, 1, (1, 1, 28, 28)).astype(np.float32)
    run_dir = tmp_path / "device"
    run_dir.mkdir()
    np.save(run_dir / "x.npy", x)
    r = _run(["qemu-aarch64", exe, "--input", "x.npy", "--output_dir", "out"], cwd=run_dir,
             timeout=600)
    assert r.returncode == 0, r.stderr
    model_dir = lib / "model"
    r = _run(["qemu-aarch64", os.path.join(bdir, "mace_run"), "--model",
              str(model_dir / "lenet.pb"), "--weights", str(model_dir / "lenet.data"),
              "--input", "x.npy", "--output_dir", "ref", "--round", "1", "--num_threads", "1"],
             cwd=run_dir, timeout=600)
    assert r.returncode == 0, r.stderr
    host = mace.Session(str(model_dir / "lenet.pb"), str(model_dir / "lenet.data")).run(x)
    outs = sorted(os.listdir(run_dir / "out"))
    assert len(outs) == 1
    got = np.load(run_dir / "out" / outs[0])
    assert got.tobytes() == np.load(run_dir / "ref" / outs[0]).tobytes()
    np.testing.assert_allclose(got, host, rtol=1e-4, atol=scale_atol(host))
    # this cross build has no arm64 libcrypto: an encrypted model is refused as unsupported
    if "OPENSSL_CRYPTO_LIBRARY-NOTFOUND" in open(os.path.join(bdir, "CMakeCache.txt")).read():
        from mace import encrypt
        encrypt.encrypt_files(str(model_dir / "lenet.pb"), str(model_dir / "lenet.data"),
                              bytes(32), str(run_dir / "e.pb"), str(run_dir / "e.data"))
        r = _run(["qemu-aarch64", os.path.join(bdir, "mace_run"), "--model", "e.pb",
                  "--weights", "e.data", "--round", "1"], cwd=run_dir, timeout=120)
        assert r.returncode != 0 and "built without OpenSSL's libcrypto" in r.stderr, r.stderr
