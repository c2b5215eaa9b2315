"""mace.calibrate and `mace calibrate`: activation ranges of a calibration set, checked tensor
by tensor against onnxruntime (every node output added as a graph output, min/max in NumPy);
lists, generators, callables and folders of .npy files as the set; the range file; errors."""
from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import helper

from helpers import ORT_PROVIDERS, make_model, rand

import mace
from mace import calibration, cli

REL = 1e-4  # the project's tolerance, relative to max(1, max |tensor|)


def _weights(rng, inits, name, *shape):
    fan_in = int(np.prod(shape[1:]))
    inits.append((name, (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)))
    inits.append((name + "_b", rng.uniform(-0.5, 0.5, shape[0]).astype(np.float32)))
    return [name, name + "_b"]


def conv_net() -> onnx.ModelProto:
    """Stem convolution, Relu, depthwise and pointwise convolutions, a residual Add, Concat,
    max pooling, global pooling, Flatten and Gemm."""
    rng = np.random.default_rng(0)
    inits: list = []
    n = helper.make_node
    nodes = [
        n("Conv", ["x", *_weights(rng, inits, "w1", 8, 3, 3, 3)], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", *_weights(rng, inits, "w2", 8, 1, 3, 3)], ["c2"], pads=[1, 1, 1, 1],
          group=8),
        n("Relu", ["c2"], ["r2"]),
        n("Conv", ["r2", *_weights(rng, inits, "w3", 8, 8, 1, 1)], ["c3"]),
        n("Add", ["c3", "r1"], ["add"]),
        n("Sigmoid", ["add"], ["sig"]),
        n("Concat", ["add", "sig"], ["cat"], axis=1),
        n("MaxPool", ["cat"], ["pool"], kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalAveragePool", ["pool"], ["gap"]),
        n("Flatten", ["gap"], ["flat"], axis=1),
        n("Gemm", ["flat", *_weights(rng, inits, "fc", 5, 16)], ["logits"], transB=1),
    ]
    return make_model(nodes, [("x", np.float32, [1, 3, 8, 8])],
                      [("logits", np.float32, [1, 5])], initializers=inits)


def two_input_net() -> onnx.ModelProto:
    """Two inputs, each through a convolution, then Add, Relu, Mul by the second input."""
    rng = np.random.default_rng(1)
    inits: list = []
    n = helper.make_node
    nodes = [
        n("Conv", ["a", *_weights(rng, inits, "wa", 4, 3, 3, 3)], ["ca"], pads=[1, 1, 1, 1]),
        n("Conv", ["b", *_weights(rng, inits, "wb", 4, 2, 1, 1)], ["cb"]),
        n("Add", ["ca", "cb"], ["sum"]),
        n("Relu", ["sum"], ["act"]),
        n("Conv", ["act", *_weights(rng, inits, "wc", 2, 4, 1, 1)], ["proj"]),
        n("Mul", ["proj", "b"], ["y"]),
    ]
    return make_model(nodes, [("a", np.float32, [1, 3, 6, 6]), ("b", np.float32, [1, 2, 6, 6])],
                      [("y", np.float32, [1, 2, 6, 6])], initializers=inits)


def ort_ranges(model: onnx.ModelProto, batches: list[dict]) -> dict[str, tuple[float, float]]:
    """The oracle: onnxruntime (no graph optimizations) runs every batch with every node output
    as a graph output; min/max over the batches in NumPy, the model inputs' too."""
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    names = [o for node in m.graph.node for o in node.output if o]
    have = {o.name for o in m.graph.output}
    for name in names:
        if name not in have:
            m.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=ORT_PROVIDERS)
    lo: dict[str, float] = {}
    hi: dict[str, float] = {}
    for feeds in batches:
        values = dict(zip(names, sess.run(names, feeds)))
        values.update(feeds)
        for name, v in values.items():
            lo[name] = min(lo.get(name, np.inf), float(np.min(v)))
            hi[name] = max(hi.get(name, -np.inf), float(np.max(v)))
    return {name: (lo[name], hi[name]) for name in lo}


def assert_ranges_match(got: dict, ref: dict, model: onnx.ModelProto, must: set[str]) -> None:
    """Every tensor in both agrees within REL; `must` (the tensors the converter keeps) is
    among them, as is most of the graph."""
    common = set(got) & set(ref)
    assert must <= common, f"missing from mace's ranges: {sorted(must - common)}"
    n_graph = len(ref)
    assert len(common) >= 0.6 * n_graph, (sorted(common), sorted(ref))
    assert not any("@" in n for n in got), sorted(got)
    for name in sorted(common):
        bound = REL * max(1.0, abs(ref[name][0]), abs(ref[name][1]))
        for g, r, what in zip(got[name], ref[name], ("min", "max")):
            assert abs(g - r) <= bound, f"{name} {what}: mace {g} vs onnxruntime {r}"


CONV_KEPT = {"x", "r1", "r2", "add", "sig", "cat", "pool", "gap", "flat", "logits"}
TWO_KEPT = {"a", "b", "cb", "act", "proj", "y"}


def _conv_batches(n: int = 3) -> list[np.ndarray]:
    return [rand(1, 3, 8, 8, seed=10 + i, low=-2.0, high=2.0) for i in range(n)]


def _two_batches(n: int = 3) -> list[dict]:
    return [{"a": rand(1, 3, 6, 6, seed=20 + i), "b": rand(1, 2, 6, 6, seed=30 + i, low=-3.0)}
            for i in range(n)]


def test_minmax_of_every_tensor_matches_onnxruntime():
    model = conv_net()
    batches = _conv_batches()
    got = mace.calibrate(mace.Session(model, num_threads=1), batches, "minmax",
                         progress=False)
    ref = ort_ranges(model, [{"x": b} for b in batches])
    assert_ranges_match(got, ref, model, CONV_KEPT)
    assert got["x"] == (float(np.min(batches)), float(np.max(batches)))  # the input, exactly


def test_two_inputs_from_a_path_with_a_generator(tmp_path):
    model = two_input_net()
    path = str(tmp_path / "two.onnx")
    onnx.save(model, path)
    batches = _two_batches()
    # minmax streams: a one-shot generator is fine
    got = mace.calibrate(path, (b for b in batches), "minmax", progress=False, num_threads=1)
    assert_ranges_match(got, ort_ranges(model, batches), model, TWO_KEPT)


def test_percentile_reads_the_set_twice_and_matches_numpy_within_a_bin():
    model = two_input_net()
    batches = _two_batches(4)
    bins = 2048
    got = mace.calibrate(mace.Session(model, num_threads=1), batches, names=["b", "act"],
                         percentile=99.0, bins=bins, progress=False)
    assert set(got) == {"b", "act"}
    ref = ort_ranges(model, batches)
    b = np.concatenate([x["b"].ravel() for x in batches]).astype(np.float64)
    width = (ref["b"][1] - ref["b"][0]) / bins
    # the histogram's percentile lies in the bin of the order statistic of rank ceil(q n)
    assert got["b"][0] == pytest.approx(np.percentile(b, 1.0, method="inverted_cdf"), abs=width)
    assert got["b"][1] == pytest.approx(np.percentile(b, 99.0, method="inverted_cdf"), abs=width)
    assert ref["act"][0] <= got["act"][0] <= got["act"][1] <= ref["act"][1] + 1e-6
    # a callable giving a fresh iterator also reads twice; kl and mse stay inside min/max
    for method in ("kl", "mse"):
        r = mace.calibrate(mace.Session(model, num_threads=1), lambda: iter(batches), method,
                           names=["act"], progress=False)
        assert ref["act"][0] - 1e-6 <= r["act"][0] <= r["act"][1] <= ref["act"][1] + 1e-6


def _save_folder(folder, batches, inputs=None, drop_batch_axis=False):
    os.makedirs(folder, exist_ok=True)
    for k, b in enumerate(batches):
        if inputs is None:
            np.save(os.path.join(folder, f"{k:04d}.npy"), b[0] if drop_batch_axis else b)
        else:
            for name in inputs:
                os.makedirs(os.path.join(folder, name), exist_ok=True)
                np.save(os.path.join(folder, name, f"{k:04d}.npy"), b[name])


def test_folder_of_npy_files(tmp_path):
    model = conv_net()
    batches = _conv_batches()
    _save_folder(str(tmp_path / "one"), batches, drop_batch_axis=True)  # (3, 8, 8) per file
    got = mace.calibrate(mace.Session(model, num_threads=1), str(tmp_path / "one"), "minmax",
                         progress=False)
    assert_ranges_match(got, ort_ranges(model, [{"x": b} for b in batches]), model, CONV_KEPT)

    model2 = two_input_net()
    batches2 = _two_batches()
    _save_folder(str(tmp_path / "two"), batches2, inputs=["a", "b"])
    got = mace.calibrate(mace.Session(model2, num_threads=1), tmp_path / "two", "minmax",
                         progress=False)
    assert_ranges_match(got, ort_ranges(model2, batches2), model2, TWO_KEPT)
    # a folder reads twice as well
    pct = mace.calibrate(mace.Session(model2, num_threads=1), tmp_path / "two", progress=False)
    assert set(pct) == set(got)


def test_cli_writes_a_range_file_that_reads_back(tmp_path, capsys):
    model = conv_net()
    onnx.save(model, str(tmp_path / "m.onnx"))
    batches = _conv_batches()
    _save_folder(str(tmp_path / "calib"), batches)
    out = str(tmp_path / "ranges.txt")
    rc = cli.main(["calibrate", str(tmp_path / "m.onnx"), "--calibration", str(tmp_path / "calib"),
                   "--method", "minmax", "--output", out, "--num_threads", "1", "--no_progress"])
    assert rc == 0, capsys.readouterr().err
    back = mace.read_range_file(out)
    ref = ort_ranges(model, [{"x": b} for b in batches])
    assert_ranges_match(back, ref, model, CONV_KEPT)
    direct = mace.calibrate(str(tmp_path / "m.onnx"), batches, "minmax", progress=False,
                            num_threads=1)
    assert set(back) == set(direct)
    for name, (lo, hi) in direct.items():  # %f: six decimals
        assert back[name] == pytest.approx((lo, hi), abs=6e-7), name
    # a .pb with its .data beside it
    mace.convert(model).save(str(tmp_path / "m.pb"), str(tmp_path / "m.data"))
    rc = cli.main(["calibrate", str(tmp_path / "m.pb"), "--calibration", str(tmp_path / "calib"),
                   "--method", "minmax", "--output", out, "--no_progress"])
    assert rc == 0 and mace.read_range_file(out) == back


@pytest.mark.parametrize("argv, why", [
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--method", "histogram"], "argument --method: invalid choice: 'histogram'"),
    (["--percentile", "abc"], "argument --percentile: invalid float value: 'abc'"),
])
def test_cli_bad_flags_fail_in_one_line(tmp_path, capsys, argv, why):
    with pytest.raises(SystemExit) as e:
        cli.main(["calibrate", "m.onnx", "--calibration", str(tmp_path), *argv])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("mace calibrate: error: ") and why in err, err


def test_cli_errors_in_one_line(tmp_path, capsys):
    onnx.save(conv_net(), str(tmp_path / "m.onnx"))
    os.makedirs(str(tmp_path / "empty"))
    rc = cli.main(["calibrate", str(tmp_path / "m.onnx"), "--calibration", str(tmp_path / "empty"),
                   "--output", str(tmp_path / "r.txt")])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and len(err.splitlines()) == 1, err
    assert "InvalidArgumentError: calibration: no .npy files in" in err
    assert not os.path.exists(str(tmp_path / "r.txt"))
    rc = cli.main(["calibrate", str(tmp_path / "none.onnx"), "--calibration", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert rc == 1 and "no such file" in err and len(err.splitlines()) == 1, err


def test_errors(tmp_path):
    sess = mace.Session(conv_net(), num_threads=1)
    with pytest.raises(mace.InvalidArgumentError, match="calibration set is empty"):
        mace.calibrate(sess, [], "minmax", progress=False)
    with pytest.raises(mace.InvalidArgumentError, match="calibration set is empty"):
        mace.calibrate(sess, [], progress=False)
    with pytest.raises(mace.InvalidArgumentError, match="no .npy files"):
        mace.calibrate(sess, str(tmp_path), progress=False)
    # a wrong input shape: the engine's error, naming the input and the sample
    bad = [rand(1, 3, 8, 8), rand(1, 4, 8, 8)]
    with pytest.raises(mace.InvalidInputError,
                       match=r"^calibration sample 1: input 'x': expected shape \[1,3,8,8\], "
                             r"given \[1,4,8,8\]"):
        mace.calibrate(sess, bad, "minmax", progress=False)
    # the two-pass methods refuse a one-shot generator, naming the way out
    for method in ("percentile", "kl", "mse"):
        with pytest.raises(mace.InvalidArgumentError, match=f"method '{method}' reads the "
                                                            "calibration set twice"):
            mace.calibrate(sess, (x for x in _conv_batches()), method, progress=False)
    with pytest.raises(mace.InvalidArgumentError, match="method: expected one of"):
        mace.calibrate(sess, _conv_batches(), "entropy", progress=False)
    with pytest.raises(mace.InvalidArgumentError, match="num_threads: cannot be given"):
        mace.calibrate(sess, _conv_batches(), num_threads=2, progress=False)
    with pytest.raises(mace.InvalidArgumentError, match="calibration must be a list"):
        mace.calibrate(sess, rand(1, 3, 8, 8), "minmax", progress=False)
    with pytest.raises(mace.InvalidArgumentError, match="nope"):
        mace.calibrate(sess, _conv_batches(), "minmax", names=["nope"], progress=False)

    two = mace.Session(two_input_net(), num_threads=1)
    with pytest.raises(mace.InvalidInputError, match="2 inputs \\('a', 'b'\\)"):
        mace.calibrate(two, [rand(1, 3, 6, 6)], "minmax", progress=False)
    _save_folder(str(tmp_path / "two"), _two_batches(2), inputs=["a"])
    with pytest.raises(mace.InvalidArgumentError, match="one subfolder per input.*missing: 'b'"):
        mace.calibrate(two, str(tmp_path / "two"), "minmax", progress=False)
    os.makedirs(str(tmp_path / "two" / "b"))
    np.save(str(tmp_path / "two" / "b" / "other.npy"), rand(1, 2, 6, 6))
    with pytest.raises(mace.InvalidArgumentError, match="hold different .npy file names"):
        mace.calibrate(two, str(tmp_path / "two"), "minmax", progress=False)


def test_progress_bar_through_tqdm(monkeypatch):
    """progress=True wraps each pass in tqdm (a stand-in module here, so the test does not
    depend on tqdm being installed); progress=False does not."""
    import sys
    import types
    bars = []

    def fake_tqdm(it, desc=None, total=None, unit=None):
        bars.append((desc, total))
        return it
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=fake_tqdm))
    sess = mace.Session(conv_net(), num_threads=1)
    mace.calibrate(sess, _conv_batches(2), progress=True)
    assert bars == [("calibration: ranges", 2), ("calibration: percentile histograms", 2)]
    mace.calibrate(sess, _conv_batches(2), "minmax", progress=False)
    assert len(bars) == 2
    # without tqdm: no bar, no error
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert mace.calibrate(sess, _conv_batches(2), "minmax", progress=True)


def test_docstring_example():
    import doctest
    runner = doctest.DocTestRunner(verbose=False)
    for test in doctest.DocTestFinder().find(calibration.calibrate, "calibrate", globs={}):
        runner.run(test)
    failed, tried = runner.summarize(verbose=False)
    assert tried > 0 and failed == 0
