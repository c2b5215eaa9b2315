"""limit_opencl_kernel_time: kernel launches split into chunks along their outermost dimension
(global work offsets, a clFlush after each chunk) give the same bytes as whole launches, for
every GPU op model of tests/test_opencl.py and a zoo network, in fp32 and fp16 storage; the
launch counters show the chunks ran; the YAML key and the Session option, and their errors.

Oracle: the same model on a GPU session without the limit (bit for bit: chunking changes where
work-groups run, not what they compute). MACE_OPENCL_CHUNK_ITEMS (work items per chunk) is set
small so that the tests' small tensors are split. Without an OpenCL device these tests skip,
unless MACE_REQUIRE_OPENCL=1 (.ci/run), which makes that a failure."""
from __future__ import annotations

import numpy as np
import pytest

import mace
from mace import zoo
from test_opencl import CASES, _conv
from test_tensor import need_gpu

PRECISIONS = ["fp32", "fp16_storage"]
CHUNK_ITEMS = "32"


def pair(model, precision, monkeypatch, **kw):
    """(session without the limit, session with it), both on the GPU."""
    monkeypatch.setenv("MACE_OPENCL_CHUNK_ITEMS", CHUNK_ITEMS)
    opts = dict(device="gpu", gpu_precision=precision, num_threads=1, **kw)
    return mace.Session(model, **opts), mace.Session(model, limit_opencl_kernel_time=True, **opts)




@pytest.mark.parametrize("precision", PRECISIONS)
def test_chunked_launches_give_the_same_bytes(precision, monkeypatch):
    need_gpu()
    chunked_cases = []
    for case, (build, _) in CASES.items():
        model, feeds = build()
        plain, limited = pair(model, precision, monkeypatch)
        want = plain.run(dict(feeds))
        got = limited.run(dict(feeds))
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{case} {name}")
        p, c = plain.gpu_launch_stats(), limited.gpu_launch_stats()
        assert p["chunked_launches"] == p["chunks"] == 0, (case, p)
        assert c["launches"] == p["launches"], (case, p, c)  # 0: the op runs on the CPU
        assert c["chunks"] >= 2 * c["chunked_launches"], (case, c)
        if c["chunked_launches"]:
            chunked_cases.append(case)
    # every family ran chunked, those that index by work-group (MACE_GROUP_ID) included (a
    # few small cases launch one work-group per dimension: nothing there to split)
    for case in ("conv3x3", "conv1x1", "conv_depthwise", "gemm", "matmul", "softmax_rows",
                 "layernorm", "attention", "maxpool", "global_avgpool", "add_same",
                 "resize_linear", "concat", "batchnorm", "pad", "reshape_transpose"):
        assert case in chunked_cases, (case, sorted(set(CASES) - set(chunked_cases)))


@pytest.mark.parametrize("mode", ["64", "32", "16", "32:3", "64:2", "16:2"])
def test_chunked_gemm_variants(mode, monkeypatch):
    """Each fixed MACE_CL_GEMM tile and split-K variant (the split index is a work-group index
    along dimension 2) gives the same bytes chunked."""
    need_gpu()
    monkeypatch.setenv("MACE_CL_GEMM", mode)
    chunked = 0
    for case in ("conv3x3", "conv1x1", "conv_grouped", "gemm", "matmul", "attention"):
        model, feeds = CASES[case][0]()
        plain, limited = pair(model, "fp32", monkeypatch)
        want, got = plain.run(dict(feeds)), limited.run(dict(feeds))
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{case} {mode}")
        chunked += limited.gpu_launch_stats()["chunked_launches"]
    assert chunked > 0


@pytest.mark.parametrize("precision", PRECISIONS)
def test_chunked_network_and_profile(precision, monkeypatch):
    need_gpu()
    model = zoo.build("mobilenet_v2", width=0.35, size=64)
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
    plain, limited = pair(model, precision, monkeypatch)
    np.testing.assert_array_equal(limited.run(x), plain.run(x))
    stats = limited.gpu_launch_stats()
    assert stats["chunked_launches"] > 0 and stats["chunks"] > stats["chunked_launches"]
    # each chunk's profiling event counts toward its op's device time
    prof = limited.profile(x, rounds=1, warmup=0)
    assert all(s["ms"] > 0 for s in prof if s["device"] == "gpu" and s["type"] != "Transfer")


def test_default_chunk_size_splits_only_large_launches(monkeypatch):
    """Without MACE_OPENCL_CHUNK_ITEMS a launch is split when it has more than 16384 work items:
    none of a 9x9 convolution's, some of a 1x16x256x256 one's."""
    need_gpu()
    monkeypatch.delenv("MACE_OPENCL_CHUNK_ITEMS", raising=False)
    small, feeds = _conv("small", 4, 4, 3, pad=1)
    s = mace.Session(small, device="gpu", gpu_precision="fp32", limit_opencl_kernel_time=True)
    s.run(feeds["x"])
    assert s.gpu_launch_stats()["chunked_launches"] == 0
    big, _ = _conv("big", 16, 16, 3, pad=1, hw=256)
    x = np.random.default_rng(1).standard_normal((1, 16, 256, 256)).astype(np.float32)
    b = mace.Session(big, device="gpu", gpu_precision="fp32", limit_opencl_kernel_time=True)
    ref = mace.Session(big, device="gpu", gpu_precision="fp32")
    np.testing.assert_array_equal(b.run(x), ref.run(x))
    assert b.gpu_launch_stats()["chunked_launches"] > 0


def test_option_errors(monkeypatch):
    need_gpu()
    model, _ = _conv("opts", 2, 2, 1)
    with pytest.raises(mace.InvalidArgumentError, match="limit_opencl_kernel_time"):
        mace.Session(model, device="gpu", limit_opencl_kernel_time=2)
    with pytest.raises(mace.InvalidArgumentError, match="limit_opencl_kernel_time applies to "
                                                        "device='gpu' only"):
        mace.Session(model, limit_opencl_kernel_time=True)
    monkeypatch.setenv("MACE_OPENCL_CHUNK_ITEMS", "-3")
    with pytest.raises(mace.InvalidArgumentError, match="MACE_OPENCL_CHUNK_ITEMS='-3'"):
        mace.Session(model, device="gpu", limit_opencl_kernel_time=True)
    mace.Session(model, device="gpu")  # the variable is read only with the limit on
    assert mace.Session(model, num_threads=1).gpu_launch_stats() == dict(
        launches=0, chunked_launches=0, chunks=0)


def _yaml(tmp_path, **extra):
    import hashlib

    import onnx
    model, _ = _conv("yaml", 3, 4, 3, pad=1, act="Relu", hw=32)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    m = {"platform": "onnx", "model_file_path": str(path), "model_sha256_checksum": sha,
         "data_type": "fp32_fp32",
         "subgraphs": [{"input_tensors": ["x"], "input_shapes": ["1,3,32,32"],
                        "output_tensors": ["y"]}]}
    m.update(extra)
    return {"library_name": "g", "models": {"m": m}}


def test_yaml_limit_opencl_kernel_time(tmp_path, monkeypatch):
    need_gpu()
    from mace import deploy
    monkeypatch.setenv("MACE_OPENCL_CHUNK_ITEMS", CHUNK_ITEMS)
    cfg = deploy.parse(_yaml(tmp_path, runtime="gpu", limit_opencl_kernel_time=1), str(tmp_path))
    assert cfg.models["m"].session_options()["limit_opencl_kernel_time"] == 1
    build = str(tmp_path / "build")
    deploy.convert_all(cfg, build)
    sess = deploy._session(cfg, cfg.models["m"], build, 1)
    x = deploy.make_inputs(cfg.models["m"], sess)
    off = deploy.parse(_yaml(tmp_path, runtime="gpu", limit_opencl_kernel_time=0), str(tmp_path))
    plain = deploy._session(off, off.models["m"], build, 1)
    np.testing.assert_array_equal(sess.run(x)["y"], plain.run(x)["y"])
    assert sess.gpu_launch_stats()["chunked_launches"] > 0
    assert plain.gpu_launch_stats()["chunked_launches"] == 0
    for extra, words in [({"runtime": "gpu", "limit_opencl_kernel_time": 2}, "expected 0 or 1"),
                         ({"runtime": "gpu", "limit_opencl_kernel_time": "yes"},
                          "expected 0 or 1"),
                         ({"runtime": "cpu", "limit_opencl_kernel_time": 1},
                          "only used with runtime gpu")]:
        with pytest.raises(deploy.ConfigError) as e:
            deploy.parse(_yaml(tmp_path, **extra), str(tmp_path))
        msg = str(e.value)
        assert msg.startswith("models.m.limit_opencl_kernel_time: ") and words in msg, msg
        assert "\n" not in msg


def test_gpu_hint_flags_are_refused_by_name(capsys):
    """MACE's --gpu_perf_hint / --gpu_priority_hint (Qualcomm context hints) are not flags of
    `mace run`: the command fails naming the flag rather than ignoring it."""
    from mace import cli
    for flag in ("--gpu_perf_hint", "--gpu_priority_hint"):
        with pytest.raises(SystemExit) as e:
            cli.main(["run", "m.onnx", flag, "3"])
        assert e.value.code != 0
        assert flag in capsys.readouterr().err
