"""Latency of mace against the CPU inference engines that install from PyPI, on mace.zoo models.

    python benchmarks/compare.py                         # every model, 1 and 2 threads
    python benchmarks/compare.py --models mobilenet_v2,resnet18 --rounds 10 --threads 1
    python benchmarks/compare.py --out /tmp/RESULTS.md --size 160
    python benchmarks/compare.py --models bert_encoder --out /tmp/bert.md   # 2 BERT-base layers
    python benchmarks/compare.py --int8 --models mobilenet_v2     # int8: benchmarks/compare_int8.py
    python benchmarks/compare.py --contention --peers onnxruntime   # beside a CPU-bound process
    python benchmarks/compare.py --interleaved --models mnasnet     # mace and onnxruntime in one process

Each zoo model (random weights, 1x3xSIZExSIZE; bert_encoder [1, 128, 768]) is exported to .onnx under a temporary folder and
loaded by mace (mace.Session, converted in memory) and by every peer that imports here:
onnxruntime, OpenVINO (from the .onnx), MNN (its own `mnnconvert` -> .mnn) and ncnn (pnnx ->
.ncnn.param/.bin, fp32 weights; onnx2ncnn when pnnx is missing). A peer that is not installed or
fails to convert or to run a model is reported as such in the tables, never dropped silently.
Every engine's output is checked against onnxruntime (max |err| / max(1, max |ref|)).

Timing: per model, every engine is loaded at every thread count in a process of its own (as its
own benchmark tool would run it: engines sharing a process disturb each other, see EngineProcess)
and warmed up, then ROUNDS rounds in which every engine runs once in turn at each thread count
(mace, peer, ..., at 1 thread, then the same at 2, then the next round) so that machine noise
hits all of them alike, thread-scaling ratios included, next to the host's own scaling on
FMA-bound work in the same rounds (make_host); an engine at N threads runs on the first N
cores, the same for every engine (pin_to_cores); the reported latency is the median over
rounds. While one engine runs the others' processes wait on a pipe. The ratio is mace's median
over the best peer's. mace's per-op profile (1 thread) says which layer type dominates its time.
Writes a Markdown report (default benchmarks/RESULTS.md), keeping the hand-written sections of
one already there after the new tables (--fresh: the tables alone). Needs: pip install openvino
MNN ncnn pnnx (not part of mace's dependencies). No assertion on timings anywhere.

Busy machines (issue 36): --contention runs a CPU-bound process (a Python busy loop, free to run
on any core) beside the engines for the whole measurement, as a build or a browser tab would;
--interleaved loads mace and onnxruntime at the same thread count in one process and, in each
round, alternates their runs with no pause for WARM_S, then times one run of each, back to back,
as a pipeline mixing the two libraries would (onnxruntime is the only peer there; --ort-threads N
keeps onnxruntime at N threads in every pair, so that mace at 1 and at N threads meet the same
session). --variant VAR=VALUE adds mace with that environment (e.g. MACE_THREAD_ADAPT=0, the
thread pool without its busy-machine policy) as another column of the same rounds.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Callable

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import mace  # noqa: E402
import mace.zoo  # noqa: E402
from mace.benchmark import collect  # noqa: E402

DEFAULT_MODELS = ["mobilenet_v1", "mobilenet_v2", "squeezenet1_1", "resnet18", "resnet50",
                  "shufflenet_v2", "mnasnet", "efficientnet_b0"]
PEERS = ["onnxruntime", "openvino", "mnn", "ncnn"]
WARMUP = 3
GAP_S = 0.1  # idle gap before each engine's runs in a round
# Untimed runs after the gap, at least one and for at least this long, before the timed one.
# After 100 ms idle the second vCPU of the 2-vCPU Xeon needed ~50 ms of load to run at full
# speed again: FMA-bound work (make_host) on 2 threads took 21.7 ms with one untimed run
# before it (1.44x over 1 thread), 15.3 ms after 50 ms of them (1.88x), 15.0 after 100 ms
# (1.95x), 14.8 after 200 ms (1.94x), and 14.7 back to back. With one untimed run, a
# model of a few milliseconds was timed before the second core was up to speed, whatever the
# engine. (Minutes later one untimed run was enough: 1.89x either way; the host changes.)
# Each engine's own benchmark tool times back-to-back runs after its warm-up too.
WARM_S = 0.1


# ---- engines ------------------------------------------------------------------------------
# Each make_<engine>(onnx_path, workdir, shape, threads) returns a function x -> output array,
# or raises with a message saying what failed (install, convert or load).

class PeerError(Exception):
    pass


# x is one array (the model's first input) or a dict {input name: array} (models of several
# inputs: benchmarks/realset.py); the function returns the model's first output.

def make_mace(path: str, workdir: str, shape, threads: int) -> Callable:
    sess = mace.Session(path, num_threads=threads)
    if len(sess.outputs) == 1 and len(sess.inputs) == 1:
        return lambda x: sess.run(x)[sess.outputs[0].name] if isinstance(x, dict) else sess.run(x)
    name, first = sess.inputs[0].name, sess.outputs[0].name  # run(array) gives every output
    return lambda x: sess.run(x if isinstance(x, dict) else {name: x})[first]


def make_onnxruntime(path: str, workdir: str, shape, threads: int) -> Callable:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    name, first = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    return lambda x: sess.run([first], x if isinstance(x, dict) else {name: x})[0]


def make_openvino(path: str, workdir: str, shape, threads: int) -> Callable:
    import openvino as ov
    core = ov.Core()
    model = core.read_model(path)
    if shape is not None and any(p.get_partial_shape().is_dynamic for p in model.inputs):
        # compiled for the benchmark's input shapes, as its own benchmark_app -shape would
        shapes = shape if isinstance(shape, dict) else {model.inputs[0].any_name: shape}
        model.reshape({p: ov.PartialShape(list(shapes[p.any_name])) for p in model.inputs
                       if p.any_name in shapes})
    cm = core.compile_model(model, "CPU", {
        "INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1,
        "INFERENCE_PRECISION_HINT": "f32"})
    req = cm.create_infer_request()
    out = cm.output(0)
    return lambda x: req.infer(x if isinstance(x, dict) else {0: x})[out]


def _run_tool(cmd: list[str], what: str, timeout: int = 300) -> None:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PeerError(f"{what} failed: {e}") from None
    if r.returncode != 0:
        tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or ["(no output)"]
        raise PeerError(f"{what} failed (exit {r.returncode}): {tail[0][:200]}")


def make_mnn(path: str, workdir: str, shape, threads: int) -> Callable:
    if isinstance(shape, dict):
        raise PeerError("this runner feeds one input; the model has several")
    import MNN
    mnn_path = os.path.join(workdir, "model.mnn")
    if not os.path.exists(mnn_path):
        tool = shutil.which("mnnconvert") or shutil.which("MNNConvert")
        if not tool:
            raise PeerError("mnnconvert not found")
        _run_tool([tool, "-f", "ONNX", "--modelFile", path, "--MNNModel", mnn_path,
                   "--bizCode", "mace"], "mnnconvert")
        if not os.path.exists(mnn_path):
            raise PeerError("mnnconvert wrote no .mnn")
    interp = MNN.Interpreter(mnn_path)
    sess = interp.createSession({"numThread": threads})
    inp = interp.getSessionInput(sess)
    out = interp.getSessionOutput(sess)
    out_shape = tuple(out.getShape())
    host = MNN.Tensor(out_shape, MNN.Halide_Type_Float, np.zeros(out_shape, np.float32),
                      MNN.Tensor_DimensionType_Caffe)

    def run(x):
        inp.copyFrom(MNN.Tensor(tuple(shape), MNN.Halide_Type_Float, x,
                                MNN.Tensor_DimensionType_Caffe))
        interp.runSession(sess)
        out.copyToHostTensor(host)
        return np.array(host.getData(), np.float32).reshape(out_shape)

    run._keep = (interp, sess)  # keep the session alive with the closure
    return run


def _pnnx_binary() -> str | None:
    spec = importlib.util.find_spec("pnnx")  # the package ships the binary; importing it needs torch
    if spec and spec.submodule_search_locations:
        exe = os.path.join(list(spec.submodule_search_locations)[0], "pnnx")
        if os.path.isfile(exe) and os.access(exe, os.X_OK):
            return exe
    return None


def make_ncnn(path: str, workdir: str, shape, threads: int) -> Callable:
    if isinstance(shape, dict):
        raise PeerError("this runner feeds one input; the model has several")
    import ncnn
    param, binf = os.path.join(workdir, "model.ncnn.param"), os.path.join(workdir, "model.ncnn.bin")
    if not os.path.exists(param):
        local = os.path.join(workdir, "model.onnx")
        if not os.path.exists(local):
            shutil.copy(path, local)
        exe = _pnnx_binary()
        if exe:
            dims = ",".join(str(d) for d in shape)
            _run_tool([exe, local, f"inputshape=[{dims}]", "fp16=0"], "pnnx")
        elif shutil.which("onnx2ncnn"):
            _run_tool([shutil.which("onnx2ncnn"), local, param, binf], "onnx2ncnn")
        else:
            raise PeerError("neither pnnx nor onnx2ncnn found")
        if not os.path.exists(param):
            raise PeerError("the converter wrote no .ncnn.param")
    net = ncnn.Net()
    net.opt.num_threads = threads
    for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage"):
        setattr(net.opt, flag, False)  # fp32 throughout, like the others
    if net.load_param(param) != 0 or net.load_model(binf) != 0:
        raise PeerError("ncnn cannot load the converted model")
    in_name, out_name = net.input_names()[0], net.output_names()[0]

    def run(x):
        ex = net.create_extractor()
        ex.input(in_name, ncnn.Mat(x[0]))
        ret, y = ex.extract(out_name)
        if ret != 0:
            raise PeerError(f"ncnn extract returned {ret}")
        return np.array(y)

    run._keep = net
    return run


# The host's own thread scaling, timed in the same rounds as the engines: FMA-bound work that
# no engine's code touches (float32 256x256 matrix products through numpy's BLAS, one BLAS
# thread a process: EngineProcess sets it), handed out one product at a time to `threads`
# Python threads, so a slower core takes fewer of them. On a virtual machine the cores need not
# be equally fast, nor stay so: on the 2-vCPU Xeon a C loop of independent AVX-512 FMAs took
# 183-366 ms on one thread from one second to the next, and on two at once one thread often
# took 190 ms while the other took 300 (the two vCPUs were not sharing work; their speeds
# differed). While that lasts, no engine's 2-thread speedup over a 1-thread run on the
# faster core can exceed 1 + slower / faster. The probe gauges how evenly the cores ran in the
# rounds it shares, not a bound on each engine's runs: it runs seconds apart from them, and the
# cores' speeds change within seconds (with one untimed run before each timed one it read
# 1.22x-2.04x model to model in one full run; with WARM_S of them, 1.69x-1.95x).
HOST_PRODUCTS = 128
HOST_N = 256
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def make_host(path: str, workdir: str, shape, threads: int) -> Callable:
    import threading
    rng = np.random.default_rng(0)
    mats = [(rng.standard_normal((HOST_N, HOST_N), dtype=np.float32),
             rng.standard_normal((HOST_N, HOST_N), dtype=np.float32),
             np.empty((HOST_N, HOST_N), np.float32)) for _ in range(threads)]

    def work(todo: list, i: int) -> None:
        a, b, c = mats[i]
        while True:
            try:
                todo.pop()  # atomic under the GIL; the product itself releases it
            except IndexError:
                return
            np.matmul(a, b, out=c)

    def run(x):
        todo = list(range(HOST_PRODUCTS))
        helpers = [threading.Thread(target=work, args=(todo, i)) for i in range(1, threads)]
        for h in helpers:
            h.start()
        work(todo, 0)
        for h in helpers:
            h.join()
        return mats[0][2]
    return run


MAKERS = {"mace": make_mace, "host": make_host, "onnxruntime": make_onnxruntime,
          "openvino": make_openvino, "mnn": make_mnn, "ncnn": make_ncnn}
MODULES = {"onnxruntime": "onnxruntime", "openvino": "openvino", "mnn": "MNN", "ncnn": "ncnn"}


def engine_versions() -> dict[str, str]:
    v = {"mace": f"{mace.__version__} (git {_git_rev()})"}
    for peer, dist in [("onnxruntime", "onnxruntime"), ("openvino", "openvino"), ("mnn", "MNN"),
                       ("ncnn", "ncnn"), ("pnnx (ncnn converter)", "pnnx")]:
        try:
            v[peer] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            v[peer] = "not installed (pip install " + dist + " failed or was not run)"
    return v


def _git_rev() -> str:
    try:
        return subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip() or "?"
    except OSError:
        return "?"


def _build_flags() -> str:
    """The C flags and ISA options of the extension's CMake build (build/py-*/), as compiled."""
    import glob
    build = sorted(glob.glob(os.path.join(os.path.dirname(HERE), "build", "py-*")))
    if not build:
        return "CMake build folder not found"
    flags, opts = "?", []
    try:
        with open(os.path.join(build[-1], "CMakeFiles", "mace_objects.dir", "flags.make")) as f:
            flags = next((ln.split("=", 1)[1].strip() for ln in f if ln.startswith("C_FLAGS")), "?")
        with open(os.path.join(build[-1], "CMakeCache.txt")) as f:
            opts = [ln.strip().replace(":BOOL", "") for ln in f if ln.startswith("MACE_ENABLE_")]
    except OSError:
        pass
    return f"C flags `{flags}`; " + ", ".join(opts)


def cpu_info() -> dict[str, str]:
    model, flags = platform.processor() or "?", []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model in ("?", "", "x86_64"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = line.split(":", 1)[1].split()
    except OSError:
        pass
    simd = [f for f in flags if f in ("sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c")
            or f.startswith("avx512") or f in ("avx_vnni", "amx_bf16", "amx_tile")]
    return {"cpu": model, "simd flags": " ".join(simd) or "?", "logical cores": str(os.cpu_count()),
            "python": platform.python_version(), "os": platform.platform()}


# ---- profile --------------------------------------------------------------------------------

def layer_class(op) -> str:
    """Conv2D split by what kernels it needs: depthwise, 1x1, or KxK; other types as is."""
    if op.type != "Conv2D" or not op.filter_shape:
        return op.type
    fs = [int(d) for d in op.filter_shape.strip("[]").split(",")]
    if op.group > 1 and fs[1] == 1:
        return f"Conv2D depthwise {fs[2]}x{fs[3]}"
    if op.group > 1:
        return f"Conv2D grouped {fs[2]}x{fs[3]}"
    return f"Conv2D {fs[2]}x{fs[3]}"


def profile_mace(path: str, x: np.ndarray, rounds: int) -> list[dict]:
    sess = mace.Session(path, num_threads=1)
    res = collect(sess, x if isinstance(x, dict) else {sess.inputs[0].name: x}, rounds=rounds,
                  warmup=1)
    by: dict[str, dict] = {}
    for o in res.ops:
        c = by.setdefault(layer_class(o), {"class": layer_class(o), "n": 0, "ms": 0.0, "macs": 0})
        c["n"] += 1
        c["ms"] += o.avg_ms
        c["macs"] += o.macs
    total = sum(c["ms"] for c in by.values()) or 1.0
    out = sorted(by.values(), key=lambda c: -c["ms"])
    for c in out:
        c["pct"] = 100.0 * c["ms"] / total
        c["gmacps"] = c["macs"] / (c["ms"] * 1e6) if c["ms"] > 0 else 0.0
    return out


# ---- the comparison ---------------------------------------------------------------------------

def rel_err(y, ref) -> float:
    if np.asarray(y).size != ref.size:  # detectors: a different number of boxes
        return float("inf")
    y = np.asarray(y, np.float32).reshape(ref.shape)
    ref = np.asarray(ref, np.float32)
    return float(np.abs(y - ref).max() / max(1.0, float(np.abs(ref).max())))


def pin_to_cores(threads: int) -> None:
    """Restricts this process to the first `threads` cores it may run on (every engine at a
    thread count gets the same ones); no change where there are not that many.

    The cores of a virtual machine need not run at one speed: on the 2-vCPU Xeon an FMA loop
    on each vCPU at once took 190 ms on one and 300 on the other, and which one was slower
    changed within minutes. Left to the scheduler, each engine's 1-thread process kept to the
    core it had run on (rounds of three engines timed as here): mace's MobileNetV1 ran on vCPU 1
    in 19 rounds of 20 (7.6-8.2 ms, or 10.7-11.3 when that vCPU was slow), onnxruntime's and
    OpenVINO's on vCPU 0, and mace / best peer at 1 thread read 0.75-0.92 in some runs and
    1.00-1.26 in others, an hour apart.
    Pinned, every engine of a round runs on the same core(s)."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        if len(cores) >= threads:
            os.sched_setaffinity(0, cores[:threads])


def _engine_main(conn, eng: str, path: str, wd: str, shape, threads: int, x) -> None:
    """One engine in its own process: load, warm up, send the output (or the error); then time
    a run per "run" received. Engines' workers poll for a while after a run (onnxruntime ~30-50
    ms, mace 50 ms): each timed run waits GAP_S for the last engine's to go idle, runs untimed
    for WARM_S (at least once), then once timed, so each engine is timed back to back with
    itself, on cores that are up to speed."""
    try:
        pin_to_cores(threads)
        fn = MAKERS[eng.split("[")[0]](path, wd, shape, threads)  # mace[VAR=..]: mace
        for _ in range(WARMUP):
            y = fn(x)
        conn.send(("ok", np.asarray(y)))
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {str(e).strip()[:160]}"))
        return
    while conn.recv() == "run":
        time.sleep(GAP_S)
        warm_end = time.perf_counter() + WARM_S
        fn(x)
        while time.perf_counter() < warm_end:
            fn(x)
        clock = time.process_time if os.environ.get("MACE_COMPARE_CLOCK") == "cpu" else \
            time.perf_counter
        t0 = clock()
        fn(x)
        conn.send((clock() - t0) * 1e3)


def _busy_main() -> None:
    """A CPU-bound process for --contention: spins until terminated."""
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xffffffff


def start_contention(ctx, n: int) -> list:
    """n busy processes, not pinned (the scheduler places them), stopped by stop_contention."""
    procs = [ctx.Process(target=_busy_main, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    return procs


def stop_contention(procs: list) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.join(10)


def _interleaved_main(conn, eng: str, path: str, wd: str, shape, threads: int, x) -> None:
    """mace and onnxruntime in this one process at `threads` threads: load, warm up, send both
    outputs; then per "run": wait GAP_S (the other processes' pools go idle), alternate mace and
    onnxruntime runs with no pause for WARM_S (at least once each), then time one mace run and
    at once one onnxruntime run, and send both times."""
    try:
        pin_to_cores(threads)
        fm = make_mace(path, wd, shape, threads)
        fo = make_onnxruntime(path, wd, shape, int(os.environ.get("MACE_COMPARE_ORT_THREADS") or
                                                   threads))
        for _ in range(WARMUP):
            ym, yo = fm(x), fo(x)
        conn.send(("ok", (np.asarray(ym), np.asarray(yo))))
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {str(e).strip()[:160]}"))
        return
    while conn.recv() == "run":
        time.sleep(GAP_S)
        warm_end = time.perf_counter() + WARM_S
        fm(x)
        fo(x)
        while time.perf_counter() < warm_end:
            fm(x)
            fo(x)
        t0 = time.perf_counter()
        fm(x)
        t1 = time.perf_counter()
        fo(x)
        t2 = time.perf_counter()
        conn.send(((t1 - t0) * 1e3, (t2 - t1) * 1e3))


def variant_env(eng: str) -> list[tuple[str, str]]:
    """The environment of an engine variant: "mace[A=1,B=2]" -> [("A", "1"), ("B", "2")]."""
    if "[" not in eng:
        return []
    return [tuple(kv.split("=", 1)) for kv in eng[eng.index("[") + 1:-1].split(",") if kv]


class EngineProcess:
    """An engine loaded in a child process (_engine_main). Engines sharing one process disturb
    each other: with OpenVINO and MNN loaded beside it, mace's SqueezeNet at 2 threads took 4.2
    ms after MNN's run against 2.6 otherwise (2-vCPU Xeon; neither peer's threads were busy, the
    cause is not known), which made the shared-process tables unfair to whichever engine ran
    there. Raises PeerError with the child's message when it fails to load or dies."""

    def __init__(self, ctx, eng, path, wd, shape, threads, x):
        self.eng = eng
        self.conn, child = ctx.Pipe()
        target = _interleaved_main if eng.startswith("interleaved") else _engine_main
        self.proc = ctx.Process(target=target, args=(child, eng, path, wd, shape, threads, x),
                                daemon=True)
        saved = {k: os.environ.get(k) for k in BLAS_THREAD_VARS}
        if eng == "host":  # one BLAS thread: set before the spawned child imports numpy
            os.environ.update({k: "1" for k in BLAS_THREAD_VARS})
        for var in variant_env(eng):  # mace[VAR=VALUE]: the variable set in its process only
            saved.setdefault(var[0], os.environ.get(var[0]))
            os.environ[var[0]] = var[1]
        try:
            self.proc.start()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        child.close()
        status, payload = self._recv()
        if status != "ok":
            self.close()
            raise PeerError(payload)
        self.y = payload

    def _recv(self):
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(5)
            raise PeerError(f"{self.eng}'s process died (exit code {self.proc.exitcode})") from None

    def time_run(self) -> float:
        self.conn.send("run")
        return self._recv()

    def close(self) -> None:
        try:
            self.conn.send("stop")
        except (BrokenPipeError, OSError):
            pass
        self.proc.join(30)
        if self.proc.is_alive():
            self.proc.kill()
        self.conn.close()


def _pair_names(pair: str) -> tuple[str, str]:
    """"interleaved[V]" -> ("mace[V]", "onnxruntime[V]"): the pair's two engines."""
    v = pair[len("interleaved"):]
    return "mace" + v, "onnxruntime" + v


def compare_model(name: str, size: int, threads_list: list[int], rounds: int, peers: list[str],
                  tmp: str, log, interleaved: bool = False, variants: tuple = ()) -> dict:
    model = mace.zoo.build(name, size=size) if name in mace.zoo.MODELS else mace.zoo.build(name)
    wd = os.path.join(tmp, name)
    os.makedirs(wd, exist_ok=True)
    path = os.path.join(wd, f"{name}.onnx")
    onnx.save(model, path)
    shape = tuple(d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim)
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    return compare_onnx(name, path, x, shape, threads_list, rounds, peers, wd, log, interleaved,
                        variants)


def compare_onnx(name: str, path: str, x, shape, threads_list: list[int], rounds: int,
                 peers: list[str], wd: str, log, interleaved: bool = False,
                 variants: tuple = ()) -> dict:
    """Times the .onnx at `path` on input x (one array, or a dict {input name: array}; shape:
    its shape, or a dict of them) with mace and the peers, as compare_model describes; the
    result's "rounds" holds every engine's per-round times."""
    import onnxruntime as ort
    ref_sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    ref = ref_sess.run(None, x if isinstance(x, dict) else {ref_sess.get_inputs()[0].name: x})[0]
    result = {"model": name, "status": {}, "err": {}, "lat": {}}
    ctx = multiprocessing.get_context("spawn")
    # Every (engine, thread count) in a process of its own, all loaded before the first round
    # and timed in the same rounds (1-thread and 2-thread runs side by side), so that a slow
    # minute of the host hits both sides of the thread-scaling ratios too, not only the
    # engine ratios. (The thread counts used to run one after the other: ResNet-50's 2-thread
    # speedup read 1.82x and then 1.74x in a rerun 20 minutes later.)
    runners: dict[tuple[str, int], EngineProcess] = {}
    try:
        host = ["host"] if len(threads_list) > 1 and not interleaved else []
        for t in threads_list:
            pairs = ["interleaved"] + [f"interleaved[{v}]" for v in variants]
            maces = ["mace"] + [f"mace[{v}]" for v in variants]
            for eng in pairs if interleaved else maces + peers + host:
                if result["status"].get(eng, "ok") != "ok":
                    continue
                try:
                    if eng in MODULES and importlib.util.find_spec(MODULES[eng]) is None:
                        raise PeerError("not installed")
                    proc = EngineProcess(ctx, eng, path, wd, shape, t, x)
                    if eng.startswith("interleaved"):  # mace's and onnxruntime's outputs
                        for e, y in zip(_pair_names(eng), proc.y):
                            result["err"][e] = max(result["err"].get(e, 0.0), rel_err(y, ref))
                    elif eng != "host":
                        result["err"][eng] = max(result["err"].get(eng, 0.0),
                                                 rel_err(proc.y, ref))
                    runners[(eng, t)] = proc
                    result["status"][eng] = "ok"
                except Exception as e:  # any failure of a peer is reported, not fatal
                    result["status"][eng] = f"{type(e).__name__}: {str(e).strip()[:160]}"
                    log(f"  {name}: {eng} failed: {result['status'][eng]}")
                    for key in [k for k in runners if k[0] == eng]:  # none of its counts left
                        runners.pop(key).close()
        times = {key: [] for key in runners}
        for _ in range(rounds):
            for key, proc in list(runners.items()):  # mace 1, peer 1, ..., mace 2, peer 2, ...
                if key not in runners:
                    continue
                try:
                    times[key].append(proc.time_run())  # interleaved: (mace, onnxruntime)
                except Exception as e:  # a peer that dies mid-run is reported
                    eng = key[0]
                    result["status"][eng] = f"{type(e).__name__}: {str(e).strip()[:160]}"
                    log(f"  {name}: {eng} failed: {result['status'][eng]}")
                    for k in [k for k in runners if k[0] == eng]:
                        runners.pop(k).close()
                        times.pop(k)
    finally:
        for proc in runners.values():
            proc.close()
    for pair in [p for p in result["status"] if p.startswith("interleaved")]:
        # the pair's (mace, onnxruntime) times and status, as two engines'
        status = result["status"].pop(pair)
        for i, e in enumerate(_pair_names(pair)):
            result["status"][e] = status
            for t in threads_list:
                if (pair, t) in times:
                    times[(e, t)] = [p[i] for p in times[(pair, t)]]
    times = {k: v for k, v in times.items() if not k[0].startswith("interleaved")}
    result["rounds"] = times  # per round, for the thread-scaling ratios
    for key, ts in times.items():
        result["lat"][key] = statistics.median(ts)
    for t in threads_list:
        log(f"  {name} threads={t}: " + ", ".join(f"{e} {statistics.median(ts):.2f} ms"
                                                   for (e, tt), ts in times.items() if tt == t))
    result["profile"] = profile_mace(path, x, rounds=max(2, min(rounds, 5)))
    return result


def mode_note(args) -> str:
    """What --contention / --interleaved changed in the timing, for the report's header."""
    note = ""
    if args.contention:
        note += (f" **Contention:** {args.contention} CPU-bound process(es) (a Python busy loop, "
                 "not pinned) ran beside the engines for the whole measurement.")
    if args.interleaved:
        ort = (f"onnxruntime at {args.ort_threads} thread(s) in every pair (its column gives that "
               "session's time beside mace at the row's thread count)" if args.ort_threads else
               "onnxruntime at the same thread count")
        note += (f" **Interleaved:** mace and {ort} share one "
                 f"process; each round alternates their runs with no pause for {WARM_S * 1e3:.0f}"
                 " ms, then times one mace run and at once one onnxruntime run.")
    if args.variants:
        note += (" Columns mace[VAR=VALUE]: mace with those environment variables set in its "
                 "process, timed in the same rounds.")
    return note


def write_report(out: str, results: list[dict], args, versions: dict, cpu: dict,
                 elapsed: float) -> None:
    engines = ["mace"] + [f"mace[{v}]" for v in args.variants] + args.peers
    if args.interleaved:  # each variant's pair has its own onnxruntime
        engines += [f"onnxruntime[{v}]" for v in args.variants]
    L = ["# mace vs. PyPI CPU inference engines", "",
         f"Generated by `python benchmarks/compare.py {' '.join(sys.argv[1:])}` on "
         f"{datetime.date.today().isoformat()} in {elapsed / 60:.1f} min. Models are mace.zoo "
         f"architectures with random weights at 1x3x{args.size}x{args.size} (bert_encoder: "
         f"[1, 128, 768]), fp32, batch 1. "
         f"Every engine runs in a process of its own, at N threads pinned to the first N cores "
         f"(the same for every engine). "
         f"Latency = median of {args.rounds} interleaved rounds (in each round every engine at "
         f"every thread count, in turn, waits {GAP_S * 1e3:.0f} ms for the previous engine's "
         f"polling workers to go idle, "
         f"runs untimed for {WARM_S * 1e3:.0f} ms (at least once), then once timed) after "
         f"{WARMUP} warm-up runs each; ratio = mace / best peer (> 1: mace is slower)."
         + mode_note(args),
         "",
         "**Noise warning:** this machine is shared (other jobs, builds and tests run on it at the "
         "same time) and virtualised; the load average below says how busy it was. Interleaving "
         "spreads the noise over all engines alike, but treat small differences as ties, and "
         "when the load exceeds the core count the multi-thread rows mostly measure contention.",
         "",
         "## Machine", ""]
    L += [f"- {k}: {v}" for k, v in cpu.items()]
    L += [f"- MACE_CPU_ISA: {os.environ.get('MACE_CPU_ISA', 'unset (mace picks the best the CPU has)')}",
          f"- load average (1 min) at start / end of the run: {args.load[0]:.1f} / "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} logical cores"]
    L += [f"- mace build: the Python extension as `pip install -e .` builds it ({_build_flags()})",
          "",
          "## Engines", ""]
    L += [f"- {k}: {v}" for k, v in versions.items()]
    L += ["", "Settings: onnxruntime ORT_ENABLE_ALL, sequential, intra-op threads = N; OpenVINO "
          "CPU plugin, LATENCY hint, 1 stream, INFERENCE_NUM_THREADS = N, f32 precision; MNN "
          "Interpreter session numThread = N (model from its `mnnconvert`); ncnn num_threads = N, "
          "fp16/bf16 storage and arithmetic off (model from pnnx with fp16=0).", ""]
    L += ["## Latency (ms, median)", "",
          "| model | threads | " + " | ".join(engines) + " | best peer | mace / best |",
          "|---|---:|" + "---:|" * len(engines) + "---|---:|"]
    for r in results:
        for t in args.threads:
            cells = []
            best = None
            for e in engines:
                ms = r["lat"].get((e, t))
                cells.append(f"{ms:.2f}" if ms is not None else "failed" if
                             r["status"].get(e, "ok") != "ok" else "-")
                if not e.startswith("mace") and e in args.peers and ms is not None and \
                        (best is None or ms < best[1]):
                    best = (e, ms)
            m = r["lat"].get(("mace", t))
            ratio = f"{m / best[1]:.2f}" if best and m else "-"
            L.append(f"| {r['model']} | {t} | " + " | ".join(cells) +
                     f" | {best[0] if best else '-'} | {ratio} |")
    for t in args.threads:
        ratios = []
        for r in results:
            m = r["lat"].get(("mace", t))
            peers = [r["lat"][(e, t)] for e in args.peers if (e, t) in r["lat"]]
            if m and peers:
                ratios.append(m / min(peers))
        if ratios:
            g = float(np.exp(np.mean(np.log(ratios))))
            L.append(f"\nGeometric mean of mace / best peer at {t} thread{'s' if t > 1 else ''}: "
                     f"**{g:.2f}** over {len(ratios)} models.")
    if len(args.threads) > 1:
        t0, tn = args.threads[0], args.threads[-1]
        L += ["", f"## Thread scaling ({t0} -> {tn} threads, same rounds)", "",
              f"Each engine's median at {t0} thread{'s' if t0 > 1 else ''} over its median at "
              f"{tn}; in brackets the median over rounds of the same ratio taken round by round "
              "(the two runs of a round are seconds apart). host: the machine's own scaling "
              f"in the same rounds, {HOST_PRODUCTS} float32 {HOST_N}x{HOST_N} matrix products "
              "(numpy, one BLAS thread each) handed out one at a time to the threads (see "
              "make_host in compare.py): a gauge of how evenly the two cores ran in those "
              "rounds, sampled seconds apart from each engine's runs, not a bound on them.",
              "",
              "| model | " + " | ".join(engines) + " | host |",
              "|---|" + "---:|" * (len(engines) + 1)]
        for r in results:
            cells = []
            for e in engines + ["host"]:
                a, b = r.get("rounds", {}).get((e, t0)), r.get("rounds", {}).get((e, tn))
                if not a or not b:
                    cells.append("-")
                    continue
                pair = statistics.median(x / y for x, y in zip(a, b))
                cells.append(f"{statistics.median(a) / statistics.median(b):.2f}x ({pair:.2f})")
            L.append(f"| {r['model']} | " + " | ".join(cells) + " |")
    L += ["", "## Output check (max |err| / max(1, max |ref|) against onnxruntime)", "",
          "| model | " + " | ".join(engines) + " |", "|---|" + "---:|" * len(engines)]
    for r in results:
        L.append(f"| {r['model']} | " + " | ".join(
            f"{r['err'][e]:.1e}" if e in r["err"] else "failed" for e in engines) + " |")
    failures = [(r["model"], e, s) for r in results for e, s in r["status"].items() if s != "ok"]
    L += ["", "## Failures", ""]
    L += [f"- {m}, {e}: {s}" for m, e, s in failures] or ["- none: every engine converted and ran "
                                                          "every model."]
    L += ["", "## Where mace spends its time (1 thread, per-op profile)", "",
          "Conv2D is split by kernel kind (depthwise / 1x1 / KxK). GMACPS = multiply-accumulates "
          "per second in that layer class (G/s); `mace benchmark MODEL.onnx` shows it per op.", "",
          "| model | top layer class (% of time, GMACPS) | 2nd | 3rd |", "|---|---|---|---|"]
    for r in results:
        cells = [f"{c['class']} ({c['pct']:.0f}%, {c['gmacps']:.1f})" for c in r["profile"][:3]]
        L.append(f"| {r['model']} | " + " | ".join(cells + ["-"] * (3 - len(cells))) + " |")
    L += ["", "## Reading it", "", args.notes or "(no notes)", ""]
    text = "\n".join(L)
    if not args.fresh:
        text = _keep_written_sections(text, out, keep_notes=args.notes is None)
    with open(out, "w") as f:
        f.write(text)


def _sections(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(what comes before the first "## " heading, [(heading line, the section's text)])."""
    parts = ("\n" + text).split("\n## ")
    head = parts[0][1:]
    return head, [("## " + p.split("\n", 1)[0], "## " + p) for p in parts[1:]]


def _keep_written_sections(text: str, out: str, keep_notes: bool) -> str:
    """The new report, followed by the sections of the report already at `out` that this script
    does not generate (notes written by hand: what changed between tables, measurements of
    single layers), in their order; its "Reading it" too unless --notes gives a new one. A
    rerun of the documented command rewrites the tables, not the history written under them
    (--fresh: the tables alone)."""
    if not os.path.exists(out):
        return text
    with open(out) as f:
        _, old = _sections(f.read())
    head, new = _sections(text)
    if keep_notes and any(h == "## Reading it" for h, _ in old):
        new = [(h, body) for h, body in new if h != "## Reading it"]
    replaced = {h for h, _ in new}
    kept = [body for h, body in old if h not in replaced]
    if not kept:
        return text
    print(f"kept {len(kept)} section(s) of the report already at {out} (--fresh: none)",
          flush=True)
    parts = [head.rstrip("\n")] + [body.rstrip("\n") for _, body in new] + \
        [body.rstrip("\n") for body in kept]
    return "\n\n".join(parts) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated mace.zoo names (default: the eight image models; "
                         "also mace.zoo.OTHER_MODELS: bert_encoder, convnext_tiny, ...)")
    ap.add_argument("--rounds", type=int, default=10, help="timed rounds per engine (default 10)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--peers", default=",".join(PEERS), help=f"subset of {','.join(PEERS)}")
    ap.add_argument("--size", type=int, default=224, help="input height and width (default 224)")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"), help="report path")
    ap.add_argument("--notes", default=None, help="text (or @file) for the report's last section")
    ap.add_argument("--int8", action="store_true",
                    help="mace int8 (mace.quantize) against onnxruntime and OpenVINO running "
                         "onnxruntime's QDQ model of the same calibration (benchmarks/"
                         "compare_int8.py); --out defaults to benchmarks/RESULTS_int8.md")
    ap.add_argument("--cpu-time", action="store_true",
                    help="with --int8 at 1 thread: time each run in CPU time (time.process_time, "
                         "which a preempted run does not inflate: for a shared, loaded machine) "
                         "and report the minimum over the rounds")
    ap.add_argument("--contention", type=int, nargs="?", const=1, default=0, metavar="N",
                    help="run N CPU-bound processes (default 1) beside the engines for the whole "
                         "measurement")
    ap.add_argument("--interleaved", action="store_true",
                    help="mace and onnxruntime in one process, their runs alternating with no "
                         "pause (onnxruntime is the only peer)")
    ap.add_argument("--ort-threads", type=int, default=0, metavar="N",
                    help="with --interleaved: onnxruntime at N threads in every pair (default: "
                         "mace's thread count), e.g. 2 to time mace at 1 and 2 threads beside the "
                         "same 2-thread onnxruntime session")
    ap.add_argument("--variant", action="append", default=[], metavar="VAR=VALUE[,VAR=VALUE]",
                    help="also time mace with these environment variables set in its process, "
                         "in the same rounds (a column mace[VAR=VALUE]; e.g. MACE_THREAD_ADAPT=0)")
    ap.add_argument("--fresh", action="store_true",
                    help="write the generated tables alone; by default the sections of an "
                         "existing report at --out that are not generated here (hand-written "
                         "notes) are kept after them")
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.threads = [int(t) for t in args.threads.split(",") if t]
    args.peers = [p for p in args.peers.split(",") if p]
    bad = [m for m in args.models if m not in mace.zoo.MODELS and
           m not in mace.zoo.OTHER_MODELS] + \
          [p for p in args.peers if p not in PEERS]
    if bad or args.rounds < 1:
        ap.error(f"unknown model/peer {bad} or --rounds < 1")
    args.variants = args.variant
    if any("=" not in kv for v in args.variants for kv in v.split(",")):
        ap.error("--variant takes VAR=VALUE[,VAR=VALUE]")
    if args.contention < 0:
        ap.error("--contention N needs N >= 0")
    if args.interleaved:
        args.peers = ["onnxruntime"]
    if args.ort_threads:
        if not args.interleaved or args.ort_threads < 1:
            ap.error("--ort-threads N takes N >= 1 and goes with --interleaved")
        os.environ["MACE_COMPARE_ORT_THREADS"] = str(args.ort_threads)  # read by the pairs' processes
    if args.int8 and (args.contention or args.interleaved):
        ap.error("--int8 does not take --contention or --interleaved")
    if args.cpu_time:
        if not args.int8 or args.threads != [1]:
            ap.error("--cpu-time goes with --int8 and --threads 1 (a process's CPU time sums "
                     "its threads)")
        os.environ["MACE_COMPARE_CLOCK"] = "cpu"  # read by the engines' processes
    if args.int8:
        import compare_int8
        if args.out == os.path.join(HERE, "RESULTS.md"):
            args.out = os.path.join(HERE, "RESULTS_int8.md")
        return compare_int8.main(args)
    if args.notes and args.notes.startswith("@"):
        with open(args.notes[1:]) as f:
            args.notes = f.read().strip()

    def log(msg):
        print(msg, flush=True)

    t0 = time.time()
    args.load = os.getloadavg()
    versions, cpu = engine_versions(), cpu_info()
    results = []
    busy = start_contention(multiprocessing.get_context("spawn"), args.contention)
    try:
        with tempfile.TemporaryDirectory(prefix="mace_compare_") as tmp:
            for name in args.models:
                log(f"{name}:")
                results.append(compare_model(name, args.size, args.threads, args.rounds,
                                             args.peers, tmp, log, args.interleaved,
                                             tuple(args.variants)))
    finally:
        stop_contention(busy)
    write_report(args.out, results, args, versions, cpu, time.time() - t0)
    log(f"wrote {args.out} ({(time.time() - t0) / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
