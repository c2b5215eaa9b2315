"""mace on an OpenCL GPU (fp32 and fp16) against torch eager (fp32 and fp16) on the same GPU, batch 1.

    python benchmarks/gpu.py                               # every model, writes benchmarks/RESULTS_GPU.md
    python benchmarks/gpu.py --models resnet50 --rounds 20 --out /tmp/gpu.md

Each architecture is built by torchvision (random weights: no download) or torch.nn, exported to
ONNX by torch's TorchScript exporter (`dynamo=False`), converted by mace in memory and run by
mace.Session(device="gpu") at gpu_precision fp32, fp16 (half where the device has cl_khr_fp16,
else fp32: the precision the session resolved is reported) and fp16_storage (half storage on
every device). torch eager runs the same module on
CUDA (fp32, then fp16 via .half()), timed with torch.cuda.synchronize() around each run. Every
engine is warmed up, then ROUNDS rounds in which each runs once in turn (so that machine noise
hits all alike); the latency reported is the median. mace's outputs are checked against torch's
fp32 output (max |err| / max(1, max |ref|)). Session creation from the ONNX file is timed twice
per precision: cold (empty OpenCL binary cache) and warm (the cache file the cold run wrote).
Engine creation is also timed from the converted model (mace.convert, then .pb/.data saved once):
mace.Session(model.pb, device="gpu") cold (no binary cache) and warm (median of 5 with the cache
present), the issue's "warm engine creation" (no ONNX conversion in it).

Needs: torch with CUDA, torchvision, onnx, and mace built with OpenCL on a machine whose OpenCL
ICD sees the GPU (on NVIDIA: an ICD file naming libnvidia-opencl.so.1, OCL_ICD_VENDORS pointing
at its folder). No assertion on timings anywhere.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import mace  # noqa: E402

MODELS = ["mobilenet_v2", "resnet50", "squeezenet1_1", "efficientnet_b0", "transformer_encoder"]
PRECISIONS = ["fp32", "fp16", "fp16_storage"]
WARMUP = 5
WARM_CREATIONS = 5


def build(name: str):
    """(torch module in eval mode, example input) for one architecture."""
    import torch
    import torchvision
    torch.manual_seed(0)
    if name == "transformer_encoder":  # a BERT-base-sized encoder: 4 layers, d=768, 12 heads
        # Without the fused fast path: its aten op has no ONNX export, and eager then runs the
        # same decomposed layers the exported graph holds.
        torch.backends.mha.set_fastpath_enabled(False)
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        x = torch.randn(1, 128, 768)
    else:
        model = getattr(torchvision.models, name)(weights=None)
        x = torch.randn(1, 3, 224, 224)
    return model.eval(), x


def export(model, x, path: str) -> None:
    import torch
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, dynamo=False, opset_version=17,
                          input_names=["input"], output_names=["output"])


def rel_err(y, ref) -> float:
    y, ref = np.asarray(y, np.float64), np.asarray(ref, np.float64)
    return float(np.max(np.abs(y - ref)) / max(1.0, float(np.max(np.abs(ref)))))


def torch_runner(model, x, half: bool):
    import copy
    import torch
    m = copy.deepcopy(model).cuda()  # .half() converts in place: each runner has its own copy
    xx = x.cuda()
    if half:
        m, xx = m.half(), xx.half()

    def run():
        with torch.no_grad():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            y = m(xx)
            torch.cuda.synchronize()
            return (time.perf_counter() - t0) * 1e3, y
    return run


GPU_MEMORY = "buffer"  # --gpu-memory


def mace_session(onnx_path: str, precision: str, cache: str):
    t0 = time.perf_counter()
    sess = mace.Session(onnx_path, device="gpu", gpu_precision=precision, opencl_binary_file=cache,
                        gpu_memory=GPU_MEMORY)
    return sess, (time.perf_counter() - t0) * 1e3


def engine_creation(onnx_path: str, precision: str, workdir: str,
                    x: np.ndarray) -> tuple[float, float, float, float]:
    """(cold, warm, cold first run, warm first run) ms of mace.Session(model.pb,
    device="gpu") from the model converted for the GPU: cold without the binary cache, warm
    the median of WARM_CREATIONS with the cache the cold one wrote; then the first run of
    each session, which builds (cold) or loads (warm) the OpenCL programs its kernels need:
    creation builds none. The conversion and the .pb/.data are made once, outside the
    timing."""
    stem = os.path.join(workdir, os.path.splitext(os.path.basename(onnx_path))[0])
    pb, data = stem + ".pb", stem + ".data"
    if not os.path.exists(pb):
        mace.convert(onnx_path, device="gpu").save(pb, data)
    cache = f"{stem}.{precision}.engine.bin"

    def create() -> tuple[float, float]:
        t0 = time.perf_counter()
        sess = mace.Session(pb, data, device="gpu", gpu_precision=precision,
                            opencl_binary_file=cache, gpu_memory=GPU_MEMORY)
        t1 = time.perf_counter()
        sess.run(x)
        t2 = time.perf_counter()
        sess.close()
        return (t1 - t0) * 1e3, (t2 - t1) * 1e3
    cold = create()
    warm = [create() for _ in range(WARM_CREATIONS)]
    return (cold[0], statistics.median(w[0] for w in warm), cold[1],
            statistics.median(w[1] for w in warm))


def mace_runner(sess, x: np.ndarray):
    def run():
        t0 = time.perf_counter()
        y = sess.run(x)
        return (time.perf_counter() - t0) * 1e3, y
    return run


def first(y):
    if isinstance(y, dict):
        y = next(iter(y.values()))
    if isinstance(y, (list, tuple)):
        y = y[0]
    if hasattr(y, "detach"):
        y = y.detach().float().cpu().numpy()
    return np.asarray(y)


def measure(name: str, rounds: int, workdir: str) -> dict:
    import torch
    model, x = build(name)
    path = os.path.join(workdir, f"{name}.onnx")
    export(model, x, path)
    xn = x.numpy()
    with torch.no_grad():
        ref = first(model.cuda()(x.cuda()))
    row = {"model": name, "error": {}, "create_ms": {}, "engine_ms": {}, "resolved": {}}
    runners = {"torch fp32": torch_runner(model, x, False), "torch fp16": torch_runner(model, x, True)}
    for prec in PRECISIONS:
        cache = os.path.join(workdir, f"{name}.{prec}.bin")
        try:
            _, cold = mace_session(path, prec, cache)
            sess, warm = mace_session(path, prec, cache)
            row["engine_ms"][prec] = engine_creation(path, prec, workdir, xn)
        except mace.MaceError as e:
            row["error"][f"mace {prec}"] = f"{type(e).__name__}: {e}"
            continue
        row["create_ms"][prec] = (cold, warm)
        row["resolved"][prec] = sess.gpu_precision  # what fp16 became on this device
        runners[f"mace {prec}"] = mace_runner(sess, xn)
    outs = {}
    for eng, run in runners.items():
        for _ in range(WARMUP):
            _, y = run()
        outs[eng] = rel_err(first(y), ref)
    times = {eng: [] for eng in runners}
    for _ in range(rounds):
        for eng, run in runners.items():
            times[eng].append(run()[0])
    row["ms"] = {eng: statistics.median(t) for eng, t in times.items()}
    row["err"] = outs
    return row


def device_line() -> str:
    import torch
    devs = [d for d in mace.devices() if d.get("type", "").lower() == "gpu"] or mace.devices()
    cl = f"{devs[0].get('name')} ({devs[0].get('version')}, driver {devs[0].get('driver')})" \
        if devs else "no OpenCL device"
    return (f"GPU: {torch.cuda.get_device_name(0)}; mace sees {cl}; torch {torch.__version__}; "
            f"CPU: {platform.processor() or platform.machine()}")


def write(out: str, rows: list[dict], rounds: int) -> str:
    engines = ["torch fp32", "torch fp16", "mace fp32", "mace fp16", "mace fp16_storage"]
    lines = [f"# mace OpenCL vs torch eager, batch 1 ({datetime.date.today()})", "",
             device_line(), "",
             f"`python benchmarks/gpu.py --gpu-memory {GPU_MEMORY}`: median of {rounds} rounds, "
             "each engine once per round in "
             "turn; ms per run, host to host for mace (input upload and output download "
             "included), GPU-synchronised for torch. err: max |out - torch fp32| / max(1, max |ref|). "
             "session: mace.Session(model.onnx, device='gpu') wall time, the in-memory ONNX "
             "conversion included, without (cold) and with (warm) the OpenCL binary cache. "
             "engine: mace.Session(model.pb) from the converted model, cold (no binary cache) / "
             "warm (median of 5, cache present), then + its first run (which builds or loads "
             "the OpenCL programs: creation builds none). mace fp16 is gpu_precision='fp16', which runs "
             "fp32 on a device without cl_khr_fp16 (the 'fp16 runs' column says what it "
             "resolved to); fp16_storage stores half on every device.",
             "", "| model | " + " | ".join(engines) + " | mace fp16 / torch fp32 | fp16 runs |"
             " err fp32 | err fp16 | err fp16_storage | session cold/warm fp16 (ms) |"
             " engine cold/warm fp32 (ms) [+ first run] | engine cold/warm fp16_storage (ms)"
             " [+ first run] |",
             "|" + " --- |" * (len(engines) + 9)]
    for r in rows:
        ms = r.get("ms", {})
        cells = [f"{ms[e]:.2f}" if e in ms else "failed" for e in engines]
        ratio = f"{ms['mace fp16'] / ms['torch fp32']:.2f}" if "mace fp16" in ms and "torch fp32" in ms else "-"
        err = r.get("err", {})
        errs = [f"{err[e]:.1e}" if e in err else "-"
                for e in ("mace fp32", "mace fp16", "mace fp16_storage")]
        cw = r["create_ms"].get("fp16")
        eng = [r.get("engine_ms", {}).get(p) for p in ("fp32", "fp16_storage")]
        lines.append(f"| {r['model']} | " + " | ".join(cells) + f" | {ratio} | "
                     + r.get("resolved", {}).get("fp16", "-") + " | " + " | ".join(errs) + " | "
                     + (f"{cw[0]:.0f} / {cw[1]:.0f}" if cw else "-") + " | "
                     + " | ".join(f"{e[0]:.0f} / {e[1]:.0f} [+{e[2]:.0f} / +{e[3]:.0f}]"
                                  if e else "-" for e in eng) + " |")
    for r in rows:
        for eng, msg in r["error"].items():
            lines.append(f"\n- {r['model']}, {eng}: {msg}")
    text = "\n".join(lines) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_GPU.md"))
    ap.add_argument("--gpu-memory", choices=("buffer", "image"), default="buffer",
                    help="mace's activation memory (Session gpu_memory; YAML cl_mem_type)")
    args = ap.parse_args(argv)
    global GPU_MEMORY
    GPU_MEMORY = args.gpu_memory
    rows = []
    with tempfile.TemporaryDirectory() as wd:
        for name in args.models.split(","):
            print(f"== {name}", flush=True)
            try:
                rows.append(measure(name, args.rounds, wd))
            except Exception as e:  # a model that fails is reported, never dropped
                rows.append({"model": name, "error": {"all": f"{type(e).__name__}: {e}"},
                             "create_ms": {}})
            print(rows[-1], flush=True)
    print(write(args.out, rows, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
