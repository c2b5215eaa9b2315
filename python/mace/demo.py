"""The README's first command: build a model, convert it, run it next to onnxruntime.

    python -m mace.demo [--model mobilenet_v2] [--rounds 10] [--num_threads 2]

No downloads: the model is one of mace.zoo's architectures with random weights, so the
"predictions" are class indices of a random network; what matters is that mace and
onnxruntime agree and how fast each is.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _latency(fn, rounds: int) -> tuple[float, float]:
    # The engine that ran last (onnxruntime's reference run, before mace is timed) keeps its
    # workers spinning for tens of milliseconds and would take a core from this one: let them
    # go idle first (as benchmarks/compare.py does), then warm up.
    time.sleep(0.1)
    for _ in range(3):
        fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times)


def main(argv: list[str] | None = None) -> int:
    import mace
    from mace import zoo

    ap = argparse.ArgumentParser(prog="python -m mace.demo", description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="mobilenet_v2", choices=sorted(zoo.MODELS) + ["lenet"])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--num_threads", type=int, default=2)
    args = ap.parse_args(argv)

    onnx_model = zoo.build(args.model)
    shape = [d.dim_value for d in onnx_model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).uniform(0, 1, shape).astype(np.float32)

    t0 = time.perf_counter()
    model = mace.convert(onnx_model)
    t_convert = time.perf_counter() - t0
    sess = mace.Session(model, num_threads=args.num_threads)
    y = sess.run(x)
    print(f"model        {args.model} {shape} -> {list(y.shape)}, converted in {t_convert:.2f} s, "
          f"{len(model.graph.ops)} mace ops")

    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    if ort is not None:
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.num_threads
        ref_sess = ort.InferenceSession(onnx_model.SerializeToString(), so,
                                        providers=["CPUExecutionProvider"])
        name = ref_sess.get_inputs()[0].name
        ref = ref_sess.run(None, {name: x})[0]
    top = np.argsort(-y.ravel())[:5]
    print(f"mace top-5   {top.tolist()}  scores {np.round(y.ravel()[top], 3).tolist()}")
    if ort is not None:
        rtop = np.argsort(-ref.ravel())[:5]
        err = float(np.max(np.abs(y - ref)))
        scale = max(1.0, float(np.max(np.abs(ref))))
        print(f"ort  top-5   {rtop.tolist()}  scores {np.round(ref.ravel()[rtop], 3).tolist()}")
        print(f"agreement    max |mace - ort| = {err:.3g} (tolerance {1e-4 * scale:.3g}), "
              f"top-1 {'same' if top[0] == rtop[0] else 'DIFFERENT'}")
    med, best = _latency(lambda: sess.run(x), args.rounds)
    print(f"latency      mace {med:8.2f} ms median, {best:8.2f} ms min "
          f"({args.rounds} rounds, {args.num_threads} threads)")
    if ort is not None:
        med_r, best_r = _latency(lambda: ref_sess.run(None, {name: x}), args.rounds)
        print(f"             ort  {med_r:8.2f} ms median, {best_r:8.2f} ms min  "
              f"-> mace/ort = {med / med_r:.2f}")
    mem = sess.memory_stats() if hasattr(sess, "memory_stats") else None
    if mem:
        print(f"memory       intermediates {mem['arena_bytes'] / 2**20:.1f} MiB planned "
              f"(naive {mem['naive_bytes'] / 2**20:.1f} MiB), weights "
              f"{mem['weights_bytes'] / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
