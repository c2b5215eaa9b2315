"""Seeded mutation fuzzer of the ONNX converter: every failure of mace.convert (and of loading and
running what it converted) must be a mace.MaceError subclass, never another exception, a signal or
a hang. Deterministic for a seed: byte mutations of the serialized model (bit flips, interesting
bytes, truncation, inserted and duplicated chunks) and structured ones through onnx's ModelProto
(dims, attributes, op types, tensor names, initializer data and dtypes, opset). A finding is
written to --findings (default tests/fuzz/findings/) with the traceback and the exit status is 1.

    python3 tests/fuzz/fuzz_onnx.py --seconds 60            # what .ci/fuzz runs
    python3 tests/fuzz/fuzz_onnx.py --iterations 5000 --seed 7
"""
from __future__ import annotations

import argparse
import glob
import os
import random
import resource
import signal
import sys
import time
import traceback
import warnings

import numpy as np
import onnx

import mace

HERE = os.path.dirname(os.path.abspath(__file__))
INTERESTING_INTS = [0, 1, -1, 2, 3, 7, 255, 2**15, 2**31 - 1, 2**31, -2**31, 2**32 + 1, 2**62,
                    -2**62]
INTERESTING_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x10, 0x12, 0x1a, 0x22]
OP_TYPES = ["Relu", "Add", "Conv", "Gemm", "MaxPool", "Softmax", "Flatten", "Reshape", "Concat",
            "Transpose", "MatMul", "Identity", "Slice", "Gather", "NoSuchOp", ""]
MAX_RUN_BYTES = 1 << 24  # a converted model whose inputs need more is loaded but not run


class Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise Hang("one case took longer than the per-case limit")


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice([1, 1, 2, 4, 8])):
        kind = rng.randrange(6)
        if not b:
            b = bytearray(rng.randbytes(8))
        pos = rng.randrange(len(b))
        if kind == 0:
            b[pos] ^= 1 << rng.randrange(8)
        elif kind == 1:
            b[pos] = rng.choice(INTERESTING_BYTES)
        elif kind == 2:
            del b[rng.randrange(len(b) + 1):]
        elif kind == 3:
            b[pos:pos] = rng.randbytes(rng.randrange(1, 16))
        elif kind == 4:
            end = min(len(b), pos + rng.randrange(1, 64))
            b[pos:pos] = b[pos:end]
        else:
            b[pos] = rng.randrange(256)
    return bytes(b)


def _dims(model: onnx.ModelProto):
    g = model.graph
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        yield from vi.type.tensor_type.shape.dim


def mutate_model(model: onnx.ModelProto, rng: random.Random) -> bytes:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    kind = rng.randrange(9)
    nodes, inits, dims = list(g.node), list(g.initializer), list(_dims(m))
    if kind == 0 and dims:
        d = rng.choice(dims)
        if rng.random() < 0.2:
            d.dim_param = rng.choice(["N", "", "batch"])
        else:
            d.dim_value = rng.choice(INTERESTING_INTS)
    elif kind == 1 and nodes:
        attrs = list(rng.choice(nodes).attribute)
        if attrs:
            a = rng.choice(attrs)
            if a.ints:
                a.ints[rng.randrange(len(a.ints))] = rng.choice(INTERESTING_INTS)
            elif a.type == onnx.AttributeProto.INT:
                a.i = rng.choice(INTERESTING_INTS)
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e30])
            else:
                a.type = rng.randrange(16)
    elif kind == 2 and nodes:
        rng.choice(nodes).op_type = rng.choice(OP_TYPES)
    elif kind == 3 and nodes:
        n = rng.choice(nodes)
        names = [t for t in list(n.input) + list(n.output)]
        pool = [t for nd in nodes for t in nd.input] + ["", "nowhere"]
        if names:
            i = rng.randrange(len(names))
            if i < len(n.input):
                n.input[i] = rng.choice(pool)
            else:
                n.output[i - len(n.input)] = rng.choice(pool)
    elif kind == 4 and inits:
        t = rng.choice(inits)
        if t.raw_data:
            t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data) + 1)]
        elif t.dims:
            t.dims[rng.randrange(len(t.dims))] = rng.choice(INTERESTING_INTS)
    elif kind == 5 and inits:
        rng.choice(inits).data_type = rng.randrange(0, 24)
    elif kind == 6 and nodes:
        g.node.remove(rng.choice(nodes))
    elif kind == 7 and m.opset_import:
        m.opset_import[0].version = rng.choice([1, 6, 7, 11, 13, 18, 28, 99, -1])
    else:
        vis = list(g.input) + list(g.output)
        if vis:
            rng.choice(vis).type.tensor_type.elem_type = rng.randrange(0, 24)
    data = m.SerializeToString()
    return mutate_bytes(data, rng) if rng.random() < 0.2 else data


def check_one(data: bytes) -> str:
    """Converts, loads and (when small) runs data; any exception but MaceError propagates.
    Returns how far the case got: "refused", "converted", "loaded" or "ran"."""
    stage = "refused"
    try:
        model = mace.convert(data)
        stage = "converted"
        sess = mace.Session(model, num_threads=1)
        stage = "loaded"
        feeds = {}
        for t in sess.inputs:
            if t.dtype is None:
                return stage
            shape = [d if isinstance(d, int) and d >= 0 else 1 for d in t.shape]
            if int(np.prod(shape, dtype=np.float64)) * np.dtype(t.dtype).itemsize > MAX_RUN_BYTES:
                return stage
            feeds[t.name] = np.zeros(shape, dtype=t.dtype)
        sess.run(feeds)
        stage = "ran"
    except mace.MaceError:
        pass
    return stage


def seeds(corpus: str) -> list[bytes]:
    out = []
    for p in sorted(glob.glob(os.path.join(corpus, "*.onnx"))):
        with open(p, "rb") as f:
            out.append(f.read())
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=0, help="0: until --seconds")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus", "onnx"))
    ap.add_argument("--findings", default=os.path.join(HERE, "findings"))
    ap.add_argument("--case-seconds", type=int, default=20)
    ap.add_argument("--memory-gb", type=float, default=8.0,
                    help="address-space limit, so that a huge allocation fails instead of the machine")
    args = ap.parse_args(argv)
    lim = int(args.memory_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (lim, resource.getrlimit(resource.RLIMIT_AS)[1]))
    signal.signal(signal.SIGALRM, _on_alarm)
    warnings.filterwarnings("ignore")  # NumPy's overflow warnings on mutated weights
    pool = seeds(args.corpus)
    if not pool:
        print(f"fuzz_onnx: no .onnx seeds in {args.corpus}", file=sys.stderr)
        return 2
    protos = [onnx.load_from_string(s) for s in pool]
    rng = random.Random(args.seed)
    start, n, findings = time.monotonic(), 0, 0
    stages = dict.fromkeys(["refused", "converted", "loaded", "ran"], 0)
    while (n < args.iterations) if args.iterations else (time.monotonic() - start < args.seconds):
        i = rng.randrange(len(pool))
        data = mutate_bytes(pool[i], rng) if rng.random() < 0.5 else mutate_model(protos[i], rng)
        n += 1
        signal.alarm(args.case_seconds)
        try:
            stages[check_one(data)] += 1
        except BaseException as e:  # noqa: BLE001 - every non-MaceError is the finding
            if isinstance(e, KeyboardInterrupt):
                raise
            findings += 1
            os.makedirs(args.findings, exist_ok=True)
            path = os.path.join(args.findings, f"seed{args.seed}_case{n}.onnx")
            with open(path, "wb") as f:
                f.write(data)
            with open(path + ".txt", "w") as f:
                f.write(traceback.format_exc())
            print(f"fuzz_onnx: case {n}: {type(e).__name__}: {str(e)[:200]} -> {path}",
                  file=sys.stderr)
        finally:
            signal.alarm(0)
    print(f"fuzz_onnx: {n} cases in {time.monotonic() - start:.0f} s (seed {args.seed}), "
          f"{findings} findings; furthest stage reached: "
          + ", ".join(f"{k} {v}" for k, v in stages.items()))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
