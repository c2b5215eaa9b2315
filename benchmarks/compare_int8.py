"""int8 latency of mace against onnxruntime and OpenVINO (`python benchmarks/compare.py --int8`).

    python benchmarks/compare.py --int8 --models mobilenet_v2,resnet50 --threads 1,2 \\
        --out /tmp/int8.md

Per mace.zoo model (random weights, 1x3xSIZExSIZE): the fp32 .onnx is exported; CALIB seeded
random inputs calibrate both sides: mace.quantize (per-channel i8 weights, u8 activations, the
default minmax method) writes mace's int8 .pb/.data, and onnxruntime.quantization.quantize_static
(QDQ format, per channel, QInt8 weights, QUInt8 activations, MinMax) writes the QDQ .onnx that
onnxruntime and OpenVINO run. mace's own fp32 model runs beside them. Timing is compare.py's:
every engine in a process of its own, pinned to the first N cores, ROUNDS interleaved rounds,
the median reported (with --cpu-time, at 1 thread: each run's CPU time, the minimum reported).
Agreement with the fp32 model (onnxruntime fp32 on EVAL other seeded
inputs): mean cosine of the outputs and the share of inputs whose top-1 class is the fp32 one.
No assertion on timings anywhere.
"""
from __future__ import annotations

import datetime
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnx

import compare
from compare import EngineProcess, PeerError

import mace
import mace.zoo

CALIB = 16
EVAL = 8
ENGINES = ["mace", "onnxruntime", "openvino"]  # int8; "mace_fp32" runs beside them


def _inputs(shape, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(n)]


def _ort_qdq(fp32_path: str, qdq_path: str, input_name: str, calib: list[np.ndarray]) -> None:
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{input_name: x} for x in calib])

        def get_next(self):
            return next(self.it, None)

    pre = qdq_path + ".pre.onnx"
    quant_pre_process(fp32_path, pre, skip_symbolic_shape=True)
    quantize_static(pre, qdq_path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    calibrate_method=CalibrationMethod.MinMax)


def _cosine(a, b) -> float:
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def _agreement(paths: dict, fp32_path: str, input_name: str, evals) -> dict:
    """{engine: (mean cosine, top-1 agreement)} against onnxruntime fp32 on `evals`."""
    import onnxruntime as ort
    ref = ort.InferenceSession(fp32_path, providers=["CPUExecutionProvider"])
    want = [ref.run(None, {input_name: x})[0] for x in evals]
    out = {}
    for eng, path in paths.items():
        try:
            fn = compare.MAKERS["mace" if eng.startswith("mace") else eng](path, "", None, 1)
            got = [np.asarray(fn(x)) for x in evals]
        except Exception as e:  # reported in the table
            out[eng] = f"{type(e).__name__}: {str(e)[:80]}"
            continue
        cos = statistics.mean(_cosine(g, w) for g, w in zip(got, want))
        top1 = statistics.mean(float(np.argmax(g) == np.argmax(w)) for g, w in zip(got, want))
        out[eng] = (cos, top1)
    return out


def int8_model(name: str, size: int, threads_list: list[int], rounds: int, tmp: str,
               log) -> dict:
    model = mace.zoo.build(name, size=size)
    wd = os.path.join(tmp, name)
    os.makedirs(wd, exist_ok=True)
    fp32 = os.path.join(wd, f"{name}.onnx")
    onnx.save(model, fp32)
    inp = model.graph.input[0].name
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    calib = _inputs(shape, CALIB, 1)
    t0 = time.time()
    q = mace.quantize(fp32, calib)
    mace_pb, _ = q.save(os.path.join(wd, f"{name}_int8.pb"))
    log(f"  mace.quantize: {time.time() - t0:.1f} s")
    qdq = os.path.join(wd, f"{name}_qdq.onnx")
    t0 = time.time()
    _ort_qdq(fp32, qdq, inp, calib)
    log(f"  onnxruntime quantize_static: {time.time() - t0:.1f} s")
    paths = {"mace": mace_pb, "onnxruntime": qdq, "openvino": qdq, "mace_fp32": fp32}
    result = {"model": name, "status": {}, "lat": {},
              "sizes": {"fp32": os.path.getsize(os.path.splitext(mace.convert(fp32).save(
                  os.path.join(wd, f"{name}_fp32.pb"))[0])[0] + ".data"),
                        "int8": os.path.getsize(os.path.splitext(mace_pb)[0] + ".data")}}
    x = _inputs(shape, 1, 0)[0]
    ctx = compare.multiprocessing.get_context("spawn")
    runners = {}
    try:
        for t in threads_list:
            for eng, path in paths.items():
                if result["status"].get(eng, "ok") != "ok":
                    continue
                try:
                    runners[(eng, t)] = EngineProcess(ctx, "mace" if eng.startswith("mace")
                                                      else eng, path, wd, shape, t, x)
                    result["status"][eng] = "ok"
                except (PeerError, Exception) as e:
                    result["status"][eng] = f"{type(e).__name__}: {str(e).strip()[:160]}"
                    log(f"  {name}: {eng} failed: {result['status'][eng]}")
        times = {key: [] for key in runners}
        for _ in range(rounds):
            for key, proc in runners.items():
                times[key].append(proc.time_run())
    finally:
        for proc in runners.values():
            proc.close()
    for key, ts in times.items():
        result["lat"][key] = min(ts) if os.environ.get("MACE_COMPARE_CLOCK") == "cpu" else \
            statistics.median(ts)
    for t in threads_list:
        log(f"  {name} threads={t}: " + ", ".join(f"{e} {result['lat'][(e, tt)]:.2f} ms"
                                                   for (e, tt) in times if tt == t))
    result["agree"] = _agreement({k: v for k, v in paths.items() if k != "mace_fp32"}, fp32, inp,
                                 _inputs(shape, EVAL, 2))
    return result


def write_report(out: str, results: list[dict], args, elapsed: float) -> None:
    cpu = compare.cpu_info()
    L = ["# int8: mace against onnxruntime and OpenVINO", "",
         f"Generated by `python benchmarks/compare.py {' '.join(sys.argv[1:])}` on "
         f"{datetime.date.today().isoformat()} in {elapsed / 60:.1f} min. See "
         f"benchmarks/compare_int8.py for the method. Load average at the start: "
         f"{' '.join(f'{v:.1f}' for v in args.load)}.", "", "## Machine", ""]
    L += [f"- {k}: {v}" for k, v in cpu.items()]
    L += ["", "## CPU time of one run (ms, minimum over the rounds; --cpu-time)" if
          getattr(args, "cpu_time", False) else "## Latency (ms, median)", "",
          "| model | threads | mace int8 | onnxruntime int8 | OpenVINO int8 | mace fp32 | "
          "mace int8 / best peer int8 | mace int8 / mace fp32 |",
          "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for t in args.threads:
            lat = {e: r["lat"].get((e, t)) for e in ENGINES + ["mace_fp32"]}
            cell = {e: (f"{v:.2f}" if v is not None else r["status"].get(e, "-")[:40])
                    for e, v in lat.items()}
            peers = [lat[e] for e in ENGINES[1:] if lat[e] is not None]
            vs_peer = f"{lat['mace'] / min(peers):.2f}" if lat["mace"] and peers else "-"
            vs_fp32 = f"{lat['mace'] / lat['mace_fp32']:.2f}" if lat["mace"] and \
                lat["mace_fp32"] else "-"
            L.append(f"| {r['model']} | {t} | {cell['mace']} | {cell['onnxruntime']} | "
                     f"{cell['openvino']} | {cell['mace_fp32']} | {vs_peer} | {vs_fp32} |")
    L += ["", f"## Agreement with the fp32 model ({EVAL} inputs; cosine, top-1 agreement)", "",
          "| model | mace int8 | onnxruntime int8 | OpenVINO int8 | mace .data int8 / fp32 |",
          "|---|---|---|---|---|"]
    for r in results:
        cells = []
        for e in ENGINES:
            a = r["agree"].get(e)
            cells.append(f"{a[0]:.4f}, {a[1]:.2f}" if isinstance(a, tuple) else str(a)[:40])
        L.append(f"| {r['model']} | " + " | ".join(cells) +
                 f" | {r['sizes']['int8'] / r['sizes']['fp32']:.3f} |")
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")


def main(args) -> int:
    def log(msg):
        print(msg, flush=True)

    t0 = time.time()
    args.load = os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory(prefix="mace_int8_") as tmp:
        for name in args.models:
            log(f"{name}:")
            results.append(int8_model(name, args.size, args.threads, args.rounds, tmp, log))
    write_report(args.out, results, args, time.time() - t0)
    log(f"wrote {args.out} ({(time.time() - t0) / 60:.1f} min)")
    return 0
