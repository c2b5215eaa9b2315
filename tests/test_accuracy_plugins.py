"""Accuracy-validation plugins (mace/accuracy.py): plugin files and their errors, the built-in
top-k plugin, mace.validate on a fp32 model and its fp16-weight version over real digits
(oracle: onnxruntime and NumPy), the per-layer locator on a deliberately perturbed model, the
deployment YAML's accuracy_validation_script and `mace validate`."""
from __future__ import annotations

import hashlib
import math
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import mace
from mace import accuracy, deploy, zoo
from mace.accuracy import PluginError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MNIST = os.path.join(ROOT, "..", "shared", "testdata", "onnx_mnist", "model.onnx")


def _mace(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mace", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _write(path, text: str) -> str:
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text))
    return str(path)


# A plugin file written the way a user writes one: samples and labels from .npy files.
PLUGIN = """
    import numpy as np
    from mace.accuracy import AccuracyPlugin, TopKMetric

    class Plugin(AccuracyPlugin):
        def __init__(self, dataset, k="3"):
            self.dataset, self.k = dataset, int(k)

        def load_dataset(self):
            x = np.load(self.dataset + "/x.npy")
            y = np.load(self.dataset + "/y.npy")
            return zip(x, y)

        def preprocess(self, sample):
            return sample.reshape(1, 28, 28)         # the batch axis is added for us

        def postprocess(self, outputs):
            return np.argsort(-outputs[next(iter(outputs))].reshape(-1))[:self.k]

        def metric(self):
            return TopKMetric(self.k)
"""


# --- mace.validate stays the metrics module ------------------------------------------------------
def test_mace_validate_is_the_metrics_module_and_callable():
    from mace import validate
    import mace.validate as v
    assert v is validate is mace.validate and callable(mace.validate)
    assert validate.compare(np.ones(3), np.ones(3)).cosine == pytest.approx(1.0)
    assert validate.sqnr_db(np.ones(2), np.ones(2)) == math.inf
    with pytest.raises(mace.InvalidArgumentError, match="give a plugin"):
        mace.validate(zoo.lenet(), data_type="fp16_fp32")
    with pytest.raises(mace.InvalidArgumentError, match="give model2 for a converted model"):
        mace.validate(mace.convert(zoo.lenet()), plugin="topk", data_type="fp16_fp32")
    with pytest.raises(mace.InvalidArgumentError, match="give model2, or data_type"):
        mace.validate(zoo.lenet(), plugin="topk")


def test_docstring_examples():
    import doctest
    failed, tried = doctest.testmod(accuracy)
    assert tried > 0 and failed == 0


# --- plugin files and their errors ----------------------------------------------------------
def _tiny_data(tmp_path, n=6):
    rng = np.random.default_rng(1)
    os.makedirs(tmp_path / "data", exist_ok=True)
    x = rng.random((n, 28, 28), np.float32)
    np.save(tmp_path / "data" / "x.npy", x)
    np.save(tmp_path / "data" / "y.npy", rng.integers(0, 10, n))
    return str(tmp_path / "data"), x


def test_plugin_file_runs_and_metric_matches_numpy(tmp_path):
    data, x = _tiny_data(tmp_path, 12)
    path = _write(tmp_path / "my_plugin.py", PLUGIN)
    fp32 = mace.convert(zoo.lenet())
    perturbed = mace.convert(_perturbed(zoo.lenet(), _weights(zoo.lenet())[0], 0.5))
    rep = mace.validate(fp32, perturbed, path, options={"dataset": data}, progress=False)
    # oracle: the classes each model gives, ranked by NumPy, against the labels
    y = np.load(os.path.join(data, "y.npy"))
    for model, got in ((fp32, rep.metric), (perturbed, rep.metric2)):
        sess = mace.Session(model)
        scores = np.stack([sess.run(s.reshape(1, 1, 28, 28)).reshape(-1) for s in x])
        top3 = np.argsort(-scores, axis=1, kind="stable")[:, :3]
        assert got == pytest.approx({
            "top1": 100.0 * np.mean(top3[:, 0] == y),
            "top3": 100.0 * np.mean([y[i] in top3[i] for i in range(len(y))])}, rel=1e-12)
    assert rep.samples == 12 and [o.name for o in rep.outputs] == [fp32.outputs[0].name]
    assert rep.outputs[0].sqnr_db < 40  # the perturbed weights change the scores


@pytest.mark.parametrize("body,words", [
    ("x = 1\n", "no plugin: define a class named 'Plugin' or one subclass"),
    ("from mace.accuracy import AccuracyPlugin\n"
     "class A(AccuracyPlugin): pass\nclass B(AccuracyPlugin): pass\n",
     "2 AccuracyPlugin subclasses (A, B): name the one to use 'Plugin'"),
    ("class Plugin:\n    def load_dataset(self): return []\n",
     "Plugin lacks the plugin method(s) preprocess, postprocess, metric"),
    ("Plugin = 3\n", "'Plugin' is a int, not a class"),
    ("import no_such_module_xyz\n", "importing the plugin file failed: ModuleNotFoundError"),
])
def test_bad_plugin_files_name_the_file_and_the_problem(tmp_path, body, words):
    path = _write(tmp_path / "bad.py", body)
    with pytest.raises(PluginError) as e:
        accuracy.load_plugin(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and words in msg and "\n" not in msg, msg
    assert isinstance(e.value, mace.MaceError)


def test_missing_plugin_file(tmp_path):
    path = str(tmp_path / "nope.py")
    with pytest.raises(PluginError, match=f"^{path}: plugin file not found.*topk"):
        mace.validate(zoo.lenet(), plugin=path, data_type="fp16_fp32")


def test_the_single_subclass_is_the_plugin(tmp_path):
    path = _write(tmp_path / "sub.py", PLUGIN.replace("class Plugin(", "class Digits("))
    data, _ = _tiny_data(tmp_path)
    p = accuracy.load_plugin(path, dataset=data)
    assert type(p).__name__ == "Digits" and p.k == 3


@pytest.mark.parametrize("method,bad,words", [
    ("preprocess", "return sample.reshape(5, 5)",
     "Plugin.preprocess failed on sample 0: ValueError: cannot reshape"),
    ("postprocess", "raise KeyError('logits')",
     "Plugin.postprocess failed on sample 0: KeyError: 'logits'"),
    ("load_dataset", "return 5", "Plugin.load_dataset returned a int, which is not iterable"),
    ("load_dataset", "return [np.zeros(3)]",
     "Plugin.load_dataset yielded a ndarray at sample 0: expected a (sample, label) pair"),
    ("load_dataset", "return iter([])", "load_dataset yielded no samples"),
    ("metric", "return 3", "metric() returned a int, which lacks accumulate"),
    ("__init__", "raise OSError('no data here')",
     "Plugin(dataset=) failed: OSError: no data here"),
])
def test_a_failing_method_names_file_method_and_sample(tmp_path, method, bad, words):
    data, _ = _tiny_data(tmp_path)
    src = textwrap.dedent(PLUGIN)
    start = src.index(f"    def {method}(")
    end = src.index("\n\n", start) if "\n\n" in src[start:] else len(src)
    header = src[start:src.index("\n", start)]
    src = src[:start] + header + f"\n        {bad}\n" + src[end:]
    path = _write(tmp_path / "p.py", src)
    with pytest.raises(PluginError) as e:
        mace.validate(zoo.lenet(), plugin=path, data_type="fp16_fp32",
                      options={"dataset": data}, progress=False)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and words in msg and "\n" not in msg, msg


def test_metric_failure_names_the_metric_method(tmp_path):
    class Metric:
        def accumulate(self, prediction, label):
            raise ZeroDivisionError("oops")

        def result(self):
            return 0.0

    class P(accuracy.AccuracyPlugin):
        def load_dataset(self):
            return [(np.zeros((1, 28, 28), np.float32), 0)]

        def metric(self):
            return Metric()
    with pytest.raises(PluginError, match=r"^plugin class P: Metric.accumulate failed on sample 0: "
                                          r"ZeroDivisionError: oops$"):
        mace.validate(zoo.lenet(), plugin=P, data_type="fp16_fp32", progress=False)


def test_progress_bar_through_tqdm(monkeypatch):
    """progress=True wraps the samples in tqdm (a stand-in module here, as in test_calibrate);
    without tqdm installed there is no bar and no error."""
    bars = []

    def fake_tqdm(it, desc=None, total=None, unit=None):
        bars.append((desc, total, unit))
        return it
    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=fake_tqdm))
    x = np.zeros((3, 1, 28, 28), np.float32)
    plugin = accuracy.TopK(x, [0, 1, 2], k=1)
    mace.validate(zoo.lenet(), plugin=plugin, data_type="fp16_fp32")
    mace.validate(zoo.lenet(), plugin=plugin, data_type="fp16_fp32", limit=2)
    mace.validate(zoo.lenet(), plugin=plugin, data_type="fp16_fp32", progress=False)
    assert bars == [("validate", 3, "sample"), ("validate", 2, "sample")]
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert mace.validate(zoo.lenet(), plugin=plugin, data_type="fp16_fp32").samples == 3


def test_real_tqdm_bar(capsys):
    pytest.importorskip("tqdm")
    x = np.zeros((2, 1, 28, 28), np.float32)
    mace.validate(zoo.lenet(), plugin=accuracy.TopK(x, [0, 1]), data_type="fp16_fp32")
    assert "validate: 100%" in capsys.readouterr().err


# --- the built-in top-k plugin --------------------------------------------------------------
def test_topk_metric_against_numpy():
    rng = np.random.default_rng(5)
    scores, labels = rng.random((200, 10)), rng.integers(0, 10, 200)
    m = accuracy.TopKMetric(5)
    p = accuracy.TopK(list(scores), labels, k=5)
    for s, label in p.load_dataset():
        m.accumulate(p.postprocess({"y": s[None]}), label)
    rank = np.argsort(-scores, axis=1)
    top5 = np.mean([labels[i] in rank[i, :5] for i in range(200)])
    assert m.result() == {"top1": 100.0 * np.mean(rank[:, 0] == labels), "top5": 100.0 * top5}


def _digit_folder(tmp_path, images, labels) -> str:
    d = tmp_path / "digits"
    d.mkdir()
    lines = ["# file class"]
    for i, (img, label) in enumerate(zip(images, labels)):
        np.save(d / f"d{i:04d}.npy", img.reshape(1, 28, 28))
        lines.append(f"d{i:04d}.npy {int(label)}")
    (d / "labels.txt").write_text("\n".join(lines) + "\n")
    return str(d)


@pytest.mark.parametrize("labels_txt,words", [
    (None, "labels.txt not found"),
    ("a.npy\n", "labels.txt:1: expected '<file>.npy <class>', got 'a.npy'"),
    ("a.npy x\n", "expected '<file>.npy <class>'"),
    ("missing.npy 3\n", "labels.txt:1: "),
    ("# nothing\n", "lists no samples"),
])
def test_topk_folder_errors(tmp_path, labels_txt, words):
    if labels_txt is not None:
        (tmp_path / "labels.txt").write_text(labels_txt)
    with pytest.raises(mace.InvalidArgumentError, match="^built-in plugin 'topk': topk: ") as e:
        accuracy.load_plugin("topk", dataset=str(tmp_path))
    assert words in str(e.value)


def test_topk_option_errors():
    with pytest.raises(mace.InvalidArgumentError, match="k must be an integer"):
        accuracy.TopK([np.zeros(3)], [0], k="five")
    with pytest.raises(mace.InvalidArgumentError, match="2 samples but 1 labels"):
        accuracy.TopK([np.zeros(3)] * 2, [0])
    with pytest.raises(mace.InvalidArgumentError, match="^built-in plugin 'topk': topk: give a "
                                                        "dataset"):
        accuracy.load_plugin("topk")
    with pytest.raises(PluginError, match="TopK.postprocess failed on sample 0: "
                                          "InvalidArgumentError: topk: output .* has shape "
                                          r"\[1, 8, 28, 28\]"):
        conv = onnx.helper.make_model(onnx.helper.make_graph(
            [onnx.helper.make_node("Relu", ["x"], ["y"])], "g",
            [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 8, 28, 28])],
            [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8, 28, 28])]),
            opset_imports=[onnx.helper.make_opsetid("", 13)])
        mace.validate(conv, plugin=accuracy.TopK([np.zeros((8, 28, 28))], [0]),
                      data_type="fp16_fp32", progress=False)


# --- real digits: the trained MNIST CNN, fp32 against fp16 weights ---------------------------
@pytest.fixture(scope="module")
def digits():
    if not os.path.isfile(MNIST):
        pytest.skip(f"{MNIST} is absent (shared test data)")
    from test_weight_storage import _digits_mnist_way
    images, labels = _digits_mnist_way()
    return images * 255.0, labels  # the MNIST model takes 0..255, ink high


def _ort_top1(model: onnx.ModelProto, images) -> np.ndarray:
    import onnxruntime as ort
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.array([int(np.argmax(sess.run(None, {name: img.reshape(1, 1, 28, 28)})[0]))
                     for img in images])


@pytest.mark.parametrize("data_type", ["fp16_fp32", "bf16_fp32"])
def test_mnist_fp32_against_half_weights_on_real_digits(digits, data_type):
    """The metric on every one of the 1,797 digits, for both models, equals the top-1 of
    onnxruntime running the ONNX model with fp32 weights and with the same rounded weights;
    the output agreement equals NumPy's cosine/SQNR of mace's outputs."""
    from test_weight_storage import _round_weights
    images, labels = digits
    rep = mace.validate(MNIST, plugin="topk", data_type=data_type, progress=False,
                        options={"dataset": list(images.reshape(-1, 1, 28, 28)),
                                 "labels": labels, "k": 1})
    onnx_model = onnx.load(MNIST)
    want = 100.0 * np.mean(_ort_top1(onnx_model, images) == labels)
    want2 = 100.0 * np.mean(_ort_top1(_round_weights(onnx_model, data_type), images) == labels)
    assert rep.samples == len(labels) == 1797
    assert rep.metric == {"top1": want} and rep.metric2 == {"top1": want2}, (rep.metric,
                                                                            rep.metric2)
    print(f"\nonnx_mnist {data_type}: " + "; ".join(rep.lines()))
    # the agreement, computed again here from the two sessions' outputs
    s1, s2 = mace.Session(MNIST), mace.Session(mace.convert(MNIST, data_type=data_type))
    x = np.stack([s1.run(img.reshape(1, 1, 28, 28)) for img in images]).astype(np.float64)
    y = np.stack([s2.run(img.reshape(1, 1, 28, 28)) for img in images]).astype(np.float64)
    cos = [float(a.ravel() @ b.ravel() / np.linalg.norm(a) / np.linalg.norm(b))
           for a, b in zip(x, y)]
    (out,) = rep.outputs
    assert out.sqnr_db == pytest.approx(10 * np.log10(np.sum(x * x) / np.sum((x - y) ** 2)),
                                        rel=1e-9)
    assert out.cosine_mean == pytest.approx(np.mean(cos), rel=1e-12)
    assert out.cosine_min == pytest.approx(np.min(cos), rel=1e-12)
    assert out.max_abs_err == np.max(np.abs(x - y))
    assert out.sqnr_db > 30


# --- per-layer comparison ---------------------------------------------------------------------
def _weights(model: onnx.ModelProto) -> list[str]:
    """Initializers read as a Conv / MatMul / Gemm weight (input 1)."""
    inits = {t.name for t in model.graph.initializer}
    return [n.input[1] for n in model.graph.node
            if n.op_type in ("Conv", "MatMul", "Gemm") and n.input[1] in inits]


def _perturbed(model: onnx.ModelProto, name: str, rel: float, seed: int = 0) -> onnx.ModelProto:
    """A copy of `model` with Gaussian noise of `rel` times its std added to weight `name`."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if t.name == name:
            w = numpy_helper.to_array(t)
            noise = np.random.default_rng(seed).normal(0, rel * float(w.std()), w.shape)
            t.CopyFrom(numpy_helper.from_array((w + noise).astype(w.dtype), name))
    return m


def _layer_of(model, weight: str) -> str:
    """The output of the converted op that reads ONNX initializer `weight` (as it is, or as
    the converter renamed it after folding a Reshape/transpose into it: `weight_...`)."""
    (op,) = [op for op in model.graph.ops
             if any(i == weight or i.startswith(weight + "_") for i in op.inputs)]
    return op.outputs[0]


def _layer_inputs(n=4):
    rng = np.random.default_rng(2)
    return [rng.random((1, 1, 28, 28), np.float32) * 255 for _ in range(n)]


# The MNIST CNN's weights: two convolutions and the FullyConnected (a reshaped initializer).
MNIST_WEIGHTS = ["Parameter5", "Parameter87", "Parameter193"]


@pytest.mark.parametrize("weight", MNIST_WEIGHTS, ids=["conv1", "conv2", "fc"])
def test_layers_names_the_perturbed_layer(weight):
    """Noise of 10% of its std added to one weight: the locator names the op that reads it;
    every layer before it is bit-identical (SQNR inf) and the layer itself is below 30 dB."""
    if not os.path.isfile(MNIST):
        pytest.skip(f"{MNIST} is absent (shared test data)")
    base = onnx.load(MNIST)
    fp32 = mace.convert(base)
    bad = mace.convert(_perturbed(base, weight, 0.1))
    rep = accuracy.compare_layers(fp32, bad, _layer_inputs())
    expected = _layer_of(fp32, weight)
    assert rep.first_below == expected, rep.lines()
    names = [r.name for r in rep.layers]
    i = names.index(expected)
    assert all(r.sqnr_db == math.inf for r in rep.layers[:i])
    assert rep.layers[i].sqnr_db < 30
    assert rep.samples == 4 and not rep.skipped


def test_layers_fp16_all_above_threshold_and_numbers_match_numpy():
    if not os.path.isfile(MNIST):
        pytest.skip(f"{MNIST} is absent (shared test data)")
    fp32, half = mace.convert(MNIST), mace.convert(MNIST, data_type="fp16_fp32")
    inputs = _layer_inputs(3)
    rep = accuracy.compare_layers(fp32, half, inputs)
    assert rep.first_below is None and "all 6 layers at or above 30 dB" in rep.lines()[-1]
    s1, s2 = mace.Session(fp32), mace.Session(half)
    acts = [(s1.run_with_intermediates(x), s2.run_with_intermediates(x)) for x in inputs]
    assert [r.name for r in rep.layers] == list(acts[0][0])  # execution order
    for r in rep.layers:
        a = np.concatenate([p[r.name].ravel() for p, _ in acts]).astype(np.float64)
        b = np.concatenate([q[r.name].ravel() for _, q in acts]).astype(np.float64)
        assert r.sqnr_db == pytest.approx(10 * np.log10(a @ a / ((a - b) @ (a - b))), rel=1e-9)
    # a threshold above every layer's SQNR names the first layer
    high = accuracy.compare_layers(fp32, half, inputs, threshold_db=1000)
    assert high.first_below == rep.layers[0].name


def test_layers_skips_tensors_only_one_model_has():
    same = accuracy.compare_layers(zoo.lenet(), zoo.lenet(), _layer_inputs(1))
    assert same.first_below is None and not same.skipped
    assert {r.sqnr_db for r in same.layers} == {math.inf}
    # obfuscated names: only the output (whose name obfuscation keeps) in common; every other
    # tensor listed as skipped with the reason
    from mace.converters import obfuscate
    m = mace.convert(zoo.lenet())
    obfuscate.obfuscate_names(m.graph)
    m.invalidate()
    rep = accuracy.compare_layers(zoo.lenet(), m, _layer_inputs(1))
    assert [r.name for r in rep.layers] == [m.outputs[0].name] == [same.layers[-1].name]
    assert set(rep.skipped.values()) == {"only in model", "only in model2"}
    assert len(rep.skipped) == 2 * (len(same.layers) - 1) and rep.first_below is None


def test_validate_with_layers(digits):
    images, labels = digits
    base = onnx.load(MNIST)
    weight = MNIST_WEIGHTS[1]
    bad = mace.convert(_perturbed(base, weight, 0.1))
    rep = mace.validate(MNIST, bad, accuracy.TopK(list(images[:50].reshape(-1, 1, 28, 28)),
                                                  labels[:50]), layers=True, layer_samples=5,
                        progress=False)
    assert rep.samples == 50 and rep.layers.samples == 5
    assert rep.layers.first_below == _layer_of(mace.convert(base), weight)


# --- the deployment YAML and the command line -----------------------------------------------------
def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _project(tmp_path, digits, data_type="fp16_fp32", script=True) -> str:
    images, labels = digits
    d = tmp_path
    onnx.save(onnx.load(MNIST), d / "mnist.onnx")
    _digit_folder(tmp_path, images[:40], labels[:40])
    _write(d / "digits_plugin.py", """
        import os
        from mace.accuracy import TopK

        class Plugin(TopK):
            def __init__(self, dataset=os.path.join(os.path.dirname(__file__), "digits"), k=2):
                super().__init__(dataset, k=k)
    """)
    name = onnx.load(MNIST).graph.output[0].name
    _write(d / "deploy.yml", f"""
        library_name: digits
        models:
          mnist:
            platform: onnx
            model_file_path: mnist.onnx
            model_sha256_checksum: {_sha(d / "mnist.onnx")}
            data_type: {data_type}
            {"accuracy_validation_script: digits_plugin.py" if script else ""}
            subgraphs:
              - input_tensors: [Input3]
                input_shapes: ["1,1,28,28"]
                output_tensors: [{name}]
    """)
    return str(d)


def test_yaml_accuracy_validation_script_is_honoured(tmp_path, digits):
    d = _project(tmp_path, digits)
    cfg = deploy.load(os.path.join(d, "deploy.yml"))
    assert cfg.models["mnist"].accuracy_validation_script == os.path.join(d, "digits_plugin.py")
    text = open(os.path.join(d, "deploy.yml")).read().replace("digits_plugin.py", "gone.py")
    with pytest.raises(deploy.ConfigError, match=r"^models.mnist.accuracy_validation_script: "
                                                 r"file not found: .*gone.py$"):
        deploy.parse(__import__("yaml").safe_load(text), d)


def test_mace_validate_config(tmp_path, digits):
    d = _project(tmp_path, digits)
    res = _mace("validate", "--config", "deploy.yml", cwd=d)
    assert res.returncode == 1 and "mace convert --config" in res.stderr, res.stderr
    assert _mace("convert", "--config", "deploy.yml", cwd=d).returncode == 0
    res = _mace("validate", "--config", "deploy.yml", "--layers", "--no_progress", cwd=d)
    assert res.returncode == 0, res.stdout + res.stderr
    # the same numbers from Python: TopK over the folder, fp32 against the converted .pb
    rep = mace.validate(MNIST, os.path.join(d, "build", "digits", "model", "mnist.pb"),
                        accuracy.TopK(os.path.join(d, "digits"), k=2), progress=False)
    lines = res.stdout.splitlines()
    assert "[mnist] samples: 40" in lines
    for k in ("top1", "top2"):
        a, b = rep.metric[k], rep.metric2[k]
        assert f"[mnist] metric {k}: model {a:.4f}  model2 {b:.4f}  (model2 - model " \
               f"{b - a:+.4f})" in lines, res.stdout
    assert f"[mnist] {rep.outputs[0].line()}" in lines
    assert "[mnist] all 6 layers at or above 30 dB (8 sample(s))" in lines


def test_mace_validate_config_needs_a_plugin(tmp_path, digits):
    d = _project(tmp_path, digits, script=False)
    assert _mace("convert", "--config", "deploy.yml", cwd=d).returncode == 0
    res = _mace("validate", "--config", "deploy.yml", cwd=d)
    assert res.returncode == 1 and res.stderr.count("\n") == 1
    assert "models.mnist: no accuracy plugin: give --plugin" in res.stderr
    res = _mace("validate", "--config", "deploy.yml", "--plugin", "topk", "--dataset", "digits",
                "--option", "k=1", "--no_progress", cwd=d)
    assert res.returncode == 0 and "[mnist] metric top1:" in res.stdout, res.stderr
    assert "top2" not in res.stdout
    res = _mace("validate", "--config", "deploy.yml", "--layers", "--threshold", "200", cwd=d)
    assert res.returncode == 1 and "[mnist] first layer below 200 dB: ReLU32_Output_0" in \
        res.stdout, res.stdout + res.stderr


def test_mace_validate_models_from_the_command_line(tmp_path, digits):
    images, labels = digits
    data = _digit_folder(tmp_path, images[:30], labels[:30])
    base = onnx.load(MNIST)
    weight = MNIST_WEIGHTS[1]
    onnx.save(_perturbed(base, weight, 0.1), tmp_path / "bad.onnx")
    res = _mace("validate", MNIST, "bad.onnx", "--plugin", "topk", "--dataset", data, "--layers",
                "--no_progress", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert f"first layer below 30 dB: {_layer_of(mace.convert(base), weight)}" in res.stdout
    assert "samples: 30" in res.stdout and "metric top5:" in res.stdout
    # one model and --data_type; --layers alone runs on random inputs
    res = _mace("validate", MNIST, "--data_type", "bf16_fp32", "--layers", cwd=tmp_path)
    assert res.returncode == 0 and "all 6 layers at or above 30 dB (8 sample(s))" in res.stdout
    path = _write(tmp_path / "bad_plugin.py", "x = 1\n")
    for args, words in [
            ((MNIST, "--data_type", "fp16_fp32", "--plugin", path), "no plugin"),
            ((MNIST, "--plugin", "topk"), "give MODEL MODEL2, or MODEL with --data_type"),
            ((MNIST, "--data_type", "fp16_fp32"), "give --plugin"),
            ((MNIST, "--data_type", "fp16_fp32", "--plugin", "topk", "--option", "k"),
             "--option: expected KEY=VALUE"),
            ((MNIST, "--data_type", "fp16_fp32", "--plugin", "topk", "--dataset", data,
              "--option", "kk=1"), "TopK(kk=, dataset=) failed: TypeError")]:
        res = _mace("validate", *args, cwd=tmp_path)
        assert res.returncode == 1 and words in res.stderr, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and res.stderr.startswith("mace validate: ")
    res = _mace("validate", MNIST, "--bogus", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "--bogus" in res.stderr


# --- int8 tensors: dequantized with the scale and zero point of the op that writes them ---------
def _relu_reshape_models(axis: int | None):
    """fp32: x -> Relu -> r -> Reshape -> p -> Relu -> y. The int8 version, as mace.quantize
    names it: r quantized (r_q8, u8: per tensor, or per channel along `axis`), reshaped as
    bytes (p_q8 keeps r_q8's scale and zero point), dequantized for the float Relu; the
    Dequantize outputs (r_dq, p_dq) are the engine's own dequantization, the test's oracle."""
    from mace.converters import ir
    from mace.converters.model import MaceModel
    shape, pooled = [1, 4, 6, 6], [1, 4, 36]
    pool = {"shape": pooled}

    def graph(ops, consts, dtypes, shapes):
        g = ir.Graph("g", ops, consts, [ir.TensorInfo("x", shape)], [ir.TensorInfo("y", pooled)])
        g.dtypes.update(dtypes)
        g.shapes.update(shapes)
        return MaceModel(g)
    relu = {"activation": "RELU"}
    fp32 = graph([ir.Op("Activation", "relu", ["x"], ["r"], relu),
                  ir.Op("Reshape", "reshape", ["r"], ["p"], pool),
                  ir.Op("Activation", "relu2", ["p"], ["y"], relu)], {}, {},
                 {"r": shape, "p": pooled, "y": pooled})
    n = 1 if axis is None else shape[axis]
    scale = np.linspace(0.01, 0.03, n).astype(np.float32)
    zp = np.arange(3, 3 + n).astype(np.uint8)
    args = {} if axis is None else {"axis": axis}
    q = graph([ir.Op("Activation", "relu", ["x"], ["r_f"], relu),
               ir.Op("Quantize", "q", ["r_f", "s", "z"], ["r_q8"], args),
               ir.Op("Dequantize", "dq", ["r_q8", "s", "z"], ["r_dq"], args),
               ir.Op("Reshape", "reshape", ["r_q8"], ["p_q8"], pool),
               ir.Op("Dequantize", "dq2", ["p_q8", "s", "z"], ["p_dq"], args),
               ir.Op("Activation", "relu2", ["p_dq"], ["y"], relu)],
              {"s": scale, "z": zp}, {"r_q8": np.dtype(np.uint8), "p_q8": np.dtype(np.uint8)},
              {"r_f": shape, "r_q8": shape, "r_dq": shape, "p_q8": pooled, "p_dq": pooled,
               "y": pooled})
    return fp32, q


@pytest.mark.parametrize("axis", [None, 1], ids=["per_tensor", "per_channel"])
def test_layers_dequantize_int8_tensors(tmp_path, axis):
    fp32, q = _relu_reshape_models(axis)
    inputs = [np.random.default_rng(i).normal(size=(1, 4, 6, 6)).astype(np.float32)
              for i in range(3)]
    q.save(tmp_path / "q.pb", tmp_path / "q.data")
    s1, s2 = mace.Session(fp32), mace.Session(q)
    acts = [(s1.run_with_intermediates(x), s2.run_with_intermediates(x)) for x in inputs]
    for model2 in (q, str(tmp_path / "q.pb")):  # a converted model, or read from its files
        rep = accuracy.compare_layers(fp32, model2, inputs, threshold_db=1000)
        assert [(r.name, r.int8) for r in rep.layers] == [("r", "r_q8"), ("p", "p_q8"),
                                                          ("y", None)]
        assert set(rep.skipped) == {"r_f", "r_dq", "p_dq"}
        assert rep.first_below == "r"
        for r, deq in zip(rep.layers, ("r_dq", "p_dq", "y")):
            a = np.concatenate([p[r.name].ravel() for p, _ in acts]).astype(np.float64)
            b = np.concatenate([o[deq].ravel() for _, o in acts]).astype(np.float64)
            want = 10 * np.log10(a @ a / ((a - b) @ (a - b)))
            assert r.sqnr_db == pytest.approx(want, rel=1e-6), (r, want)
            assert 25 < r.sqnr_db < 60
    assert "layer r (int8 r_q8): SQNR" in rep.lines()[0]


def test_yaml_nhwc_inputs_reach_the_model_transposed(tmp_path):
    """input_data_formats NHWC of an ONNX (NCHW) model: the plugin's samples are NHWC, as the
    YAML says, and reach the model transposed; the same numbers as validating the NCHW samples
    directly against the converted .pb."""
    net = zoo.mobilenet_v1(width=0.25, size=32, classes=10)
    onnx.save(net, tmp_path / "mnet.onnx")
    rng = np.random.default_rng(4)
    nhwc = rng.random((12, 32, 32, 3), np.float32)
    labels = rng.integers(0, 10, 12)
    folder = tmp_path / "data"
    folder.mkdir()
    for i, x in enumerate(nhwc):
        np.save(folder / f"s{i}.npy", x)
    (folder / "labels.txt").write_text("".join(f"s{i}.npy {y}\n" for i, y in enumerate(labels)))
    _write(tmp_path / "deploy.yml", f"""
        library_name: t
        models:
          mnet:
            platform: onnx
            model_file_path: mnet.onnx
            model_sha256_checksum: {_sha(tmp_path / "mnet.onnx")}
            data_type: bf16_fp32
            subgraphs:
              - input_tensors: [{net.graph.input[0].name}]
                input_shapes: [[1, 32, 32, 3]]
                input_data_formats: NHWC
                output_tensors: [{net.graph.output[0].name}]
    """)
    cfg = deploy.load(tmp_path / "deploy.yml")
    build = str(tmp_path / "build")
    deploy.convert_all(cfg, build, log=lambda s: None)
    lines: list[str] = []
    assert accuracy.validate_config(cfg, build, "topk", {"dataset": str(folder), "k": "3"},
                                    progress=False, log=lines.append) == 0
    want = mace.validate(str(tmp_path / "mnet.onnx"), str(tmp_path / "build/t/model/mnet.pb"),
                         accuracy.TopK(list(nhwc.transpose(0, 3, 1, 2)), labels, k=3),
                         progress=False)
    assert lines[2:] == [f"[mnet] {line}" for line in want.lines()], lines
    assert want.outputs[0].sqnr_db < 60  # bf16 weights: the two models differ


def test_a_sample_the_model_rejects_names_the_plugin_and_sample():
    x = [np.zeros((1, 28, 28), np.float32), np.zeros((3, 28, 28), np.float32)]
    with pytest.raises(mace.InvalidInputError, match=r"^plugin TopK: sample 1 as preprocessed: "):
        mace.validate(zoo.lenet(), plugin=accuracy.TopK(x, [0, 1]), data_type="fp16_fp32",
                      progress=False)
