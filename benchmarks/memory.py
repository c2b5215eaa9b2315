"""Resident memory of a session and peak memory of conversion, mace beside onnxruntime.

    python benchmarks/memory.py [--models resnet50,bert_encoder] [--onnx a.onnx,b.onnx]
                                [--threads 1] [--rounds 3]

Every measurement runs in a fresh Python process that first imports what it will use (numpy,
onnx, mace with its converter, or onnxruntime) and runs a tiny model through it, so imports,
code pages and thread pools are not counted, then reads /proc/self/status:

- session: VmRSS after creating the session and running it once, minus VmRSS before
  ("+MB resident"); mace from the .onnx (`mace.Session("m.onnx")`, which converts in memory),
  mace from the converted .pb/.data, onnxruntime from the .onnx.
- peak: VmHWM (the process's peak resident set, reset through /proc/self/clear_refs after
  the imports) minus VmRSS before, over the same creation and run.
- conversion: the same peak over `mace.convert("m.onnx").save("m.pb", "m.data")`, and for
  onnxruntime over its own offline conversion, a session created with
  SessionOptions.optimized_model_filepath set (it writes the optimized .onnx).

onnxruntime runs with default SessionOptions (graph_optimization_level ORT_ENABLE_ALL, the
CPU arena on, memory pattern on), the CPU provider and intra_op_num_threads = --threads
(mace: num_threads = --threads). Each cell is the median over --rounds processes.
Models: mace.zoo builders by name (random weights; name@640 builds an image model for
640x640 inputs), or ONNX files given with --onnx.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

# Weights-heavy models at 224, and models whose activations outweigh their weights (a
# detector's or a segmenter's input size), where the arena decides.
DEFAULT_MODELS = ("mobilenet_v2,efficientnet_b0,resnet50,bert_encoder,convnext_tiny,"
                  "mobilenet_v2@640,resnet18@640,deeplabv3_resnet50@512")

# The worker: argv = mode, model paths, threads. Prints one JSON line of bytes.
WORKER = r"""
import json, os, sys
import numpy as np
mode, onnx_path, pb, data, out, threads = sys.argv[1:7]
threads = int(threads)

def status():
    got = {}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "VmHWM"):
                got[key] = int(line.split()[1]) * 1024
    return got

def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS

def feeds_of(specs):
    rng = np.random.default_rng(0)
    out = {}
    for name, shape, dtype in specs:
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in shape]
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            out[name] = rng.standard_normal(shape).astype(dtype)
        else:
            out[name] = np.zeros(shape, dtype)
    return out

def tiny_onnx():
    from onnx import helper, TensorProto
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()

if mode.startswith("mace"):
    import onnx, mace
    import mace.converters.model, mace.converters.onnx_converter  # noqa: F401
    warm = mace.Session(tiny_onnx(), num_threads=threads)
    warm.run(np.zeros((1, 4), np.float32)); warm.close(); del warm
    mace._mace.release_free_heap()
else:
    import onnx, onnxruntime as ort
    def ort_session(src, opts=None):
        opts = opts or ort.SessionOptions()
        opts.intra_op_num_threads = threads
        return ort.InferenceSession(src, opts, providers=["CPUExecutionProvider"])
    warm = ort_session(tiny_onnx())
    warm.run(None, {"x": np.zeros((1, 4), np.float32)}); del warm

before = status()["VmRSS"]
reset_peak()
if mode == "mace_convert":
    m = mace.convert(onnx_path)
    m.save(pb, data)
    del m
elif mode == "ort_convert":
    opts = ort.SessionOptions()
    opts.optimized_model_filepath = out
    s = ort_session(onnx_path, opts)
    del s
elif mode in ("mace_onnx", "mace_pb"):
    s = mace.Session(onnx_path, num_threads=threads) if mode == "mace_onnx" else \
        mace.Session(pb, data, num_threads=threads)
    s.run(feeds_of([(i.name, i.shape, i.dtype) for i in s.inputs]))
elif mode == "ort":
    s = ort_session(onnx_path)
    specs = [(i.name, i.shape, {"tensor(float)": np.float32, "tensor(int64)": np.int64,
                                "tensor(int32)": np.int32}.get(i.type, np.float32))
             for i in s.get_inputs()]
    s.run(None, feeds_of(specs))
else:
    raise SystemExit(f"unknown mode {mode}")
after = status()
print(json.dumps({"rss": after["VmRSS"] - before, "peak": after["VmHWM"] - before}))
"""

MODES = ("mace_onnx", "mace_pb", "ort", "mace_convert", "ort_convert")


def measure(mode: str, paths: dict, threads: int) -> dict:
    cmd = [sys.executable, "-c", WORKER, mode, paths["onnx"], paths["pb"], paths["data"],
           paths["ort_out"], str(threads)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{mode} on {paths['onnx']} failed:\n{res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def prepare(name: str, workdir: str) -> dict:
    """Paths of the model as .onnx and converted .pb/.data (converted in a process of its own,
    which the conversion measurement repeats)."""
    if name.endswith(".onnx"):
        src = os.path.abspath(name)
        base = os.path.splitext(os.path.basename(name))[0]
    else:  # a zoo name, or name@size for an image model at that input size
        from mace import zoo
        import onnx
        base = name.replace("@", "_")
        arch, _, size = name.partition("@")
        src = os.path.join(workdir, f"{base}.onnx")
        onnx.save(zoo.build(arch, **({"size": int(size)} if size else {})), src)
    stem = os.path.join(workdir, base)
    paths = {"onnx": src, "pb": stem + ".pb", "data": stem + ".data",
             "ort_out": stem + ".ort_opt.onnx", "name": base}
    subprocess.run([sys.executable, "-c",
                    "import sys, mace; mace.convert(sys.argv[1]).save(sys.argv[2], sys.argv[3])",
                    src, paths["pb"], paths["data"]], check=True)
    return paths


def mb(v: float) -> str:
    return f"{v / 1e6:+.0f}"


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_rev() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, cwd=os.path.dirname(os.path.abspath(__file__))
                              ).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=DEFAULT_MODELS, help="mace.zoo names, comma-separated "
                    "('' for none)")
    ap.add_argument("--onnx", default="", help="ONNX files, comma-separated")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    names = [m for m in args.models.split(",") if m] + [p for p in args.onnx.split(",") if p]
    import onnxruntime
    import mace
    rows = []
    with tempfile.TemporaryDirectory() as wd:
        for name in names:
            paths = prepare(name, wd)
            weights = os.path.getsize(paths["data"])
            got: dict[str, list[dict]] = {m: [] for m in MODES}
            for _ in range(args.rounds):  # interleaved so drift hits every mode alike
                for mode in MODES:
                    got[mode].append(measure(mode, paths, args.threads))
            med = {m: {k: statistics.median(r[k] for r in got[m]) for k in ("rss", "peak")}
                   for m in MODES}
            rows.append((paths["name"], weights, med))
            print(f"{paths['name']}: " + ", ".join(
                f"{m} {mb(med[m]['rss'])}/{mb(med[m]['peak'])}" for m in MODES),
                file=sys.stderr, flush=True)
    print(f"Generated by `python benchmarks/memory.py --threads {args.threads} --rounds "
          f"{args.rounds}` at {git_rev()}: mace {getattr(mace, '__version__', '?')}, "
          f"onnxruntime {onnxruntime.__version__}; {cpu_model()}, {os.cpu_count()} logical "
          "cores, Linux, glibc malloc.\n")
    print("MB (10^6 bytes). Session: resident memory added by creating the session and running "
          "it once (VmRSS after minus before), then / the peak over the same (VmHWM minus "
          "VmRSS before). Conversion: peak over mace.convert(onnx).save(pb, data) and over "
          "onnxruntime writing its optimized model (optimized_model_filepath).\n")
    print("| model | .data | mace from .onnx | mace from .pb/.data | onnxruntime "
          "| conversion peak, mace | onnxruntime |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, weights, med in rows:
        cell = lambda m: f"{mb(med[m]['rss'])} / {mb(med[m]['peak'])}"  # noqa: E731
        print(f"| {name} | {weights / 1e6:.1f} | {cell('mace_onnx')} | {cell('mace_pb')} | "
              f"{cell('ort')} | {mb(med['mace_convert']['peak'])} | "
              f"{mb(med['ort_convert']['peak'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
