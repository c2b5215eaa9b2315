"""Writes the fuzzers' seed corpus into tests/fuzz/corpus/ (committed; rerun after a model-format
change): loader/ holds mace models as fuzz_loader reads them ("MACF", u32 graph size, graph,
weights), run/ inputs for fuzz_run's tiny model, onnx/ the ONNX seeds of fuzz_onnx.py. The models
are the test suite's tiny models (tests/tiny_models.py) and a small CNN built with
tests/helpers.make_model.

    python3 tests/fuzz/make_corpus.py
"""
from __future__ import annotations

import os
import struct
import sys

import numpy as np
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import mace  # noqa: E402
import tiny_models  # noqa: E402
from helpers import make_model, rand  # noqa: E402


def small_cnn():
    """x[1,3,8,8] -> Conv 3x3 (4 ch) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm (5) -> Softmax."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
             helper.make_node("Softmax", ["g"], ["y"], axis=1)]
    inits = [("w", rand(4, 3, 3, 3, seed=1)), ("b", rand(4, seed=2)),
             ("fw", rand(5, 64, seed=3)), ("fb", rand(5, seed=4))]
    return make_model(nodes, [("x", np.float32, [1, 3, 8, 8])], [("y", np.float32, [1, 5])],
                      initializers=inits)


def loader_file(model) -> bytes:
    graph = model.graph_bytes()
    return b"MACF" + struct.pack("<I", len(graph)) + graph + bytes(model.weights_buffer())


def run_input(ndim, dtype, fmt, flags, dims, data=b"") -> bytes:
    return bytes([ndim, dtype, fmt, flags]) + b"".join(struct.pack("<H", d) for d in dims) + data


def main() -> None:
    out = {k: os.path.join(HERE, "corpus", k) for k in ("loader", "run", "onnx")}
    for d in out.values():
        os.makedirs(d, exist_ok=True)
    onnx_models = {"add_relu": tiny_models.onnx_add_relu(), "small_cnn": small_cnn()}
    models = {n: getattr(tiny_models, n + "_model")()
              for n in ("relu", "two_output", "chain", "two_input", "int64")}
    models.update({n: mace.convert(m) for n, m in onnx_models.items()})
    for name, m in models.items():
        with open(os.path.join(out["loader"], name + ".bin"), "wb") as f:
            f.write(loader_file(m))
    for name, m in onnx_models.items():
        with open(os.path.join(out["onnx"], name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    x = np.linspace(-1, 1, 48, dtype=np.float32).tobytes()
    runs = {"ok": run_input(4, 0, 2, 0, [1, 3, 4, 4], x),       # f32 NCHW, the model's shape
            "ok_run": run_input(4, 0, 2, 2, [1, 3, 4, 4], x),   # mace_engine_run path
            "nhwc": run_input(4, 0, 1, 0, [1, 4, 4, 3], x),
            "batch3": run_input(4, 0, 2, 0, [3, 3, 4, 4], x),
            "rank2": run_input(2, 0, 2, 0, [3, 16], x),
            "f16": run_input(4, 2, 2, 0, [1, 3, 4, 4], x),
            "bad_name": run_input(4, 0, 2, 1, [1, 3, 4, 4], x),
            "negative": run_input(4, 0, 2, 0, [1, 0xffff, 4, 4], x),
            # 12 MiB, above fuzz_run's run cap: resized only, then the next input runs
            "big_resize": run_input(4, 0, 2, 0, [1, 3, 1024, 1024], x)}
    for name, data in runs.items():
        with open(os.path.join(out["run"], name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
