"""`mace tune MODEL -o params.txt`: OpenCL work-group sizes tuned on this machine's GPU and
written to an `opencl_parameter_file` (seed 003's tuning step), which `Session(...,
opencl_parameter_file=)`, `mace_run --opencl_parameter_file` and the YAML's key then read.

It runs the model on the GPU with the runtime's tuner on (the `MACE_TUNING=1` mode of
docs/opencl.md): each kernel launch not yet in the file is timed with a few work-group shapes
and the fastest is kept; the file is written when the session closes. Entries already in the
file are kept, so tuning more input shapes adds to it."""
from __future__ import annotations

import argparse
import os
import sys

from .cli_common import parse_input_shapes, random_feeds


def tune(model, output: str | os.PathLike, weights=None, input_shapes=None,
         gpu_precision: str = "fp16", rounds: int = 2, seed: int = 0) -> int:
    """Tunes `model` on the GPU and writes (or extends) the parameter file `output`; returns the
    number of launches the file holds. Raises UnsupportedError without OpenCL."""
    import mace
    old = os.environ.get("MACE_TUNING")
    os.environ["MACE_TUNING"] = "1"  # read when the OpenCL runtime is created
    try:
        sess = mace.Session(model, weights, device="gpu", gpu_precision=gpu_precision,
                            opencl_parameter_file=output, input_shapes=input_shapes)
    finally:
        if old is None:
            del os.environ["MACE_TUNING"]
        else:
            os.environ["MACE_TUNING"] = old
    try:
        feeds = random_feeds(sess, seed, input_shapes)
        for _ in range(max(1, rounds)):
            sess.run(feeds)
    finally:
        sess.close()  # the runtime writes the file as it is destroyed
    if not os.path.exists(output):
        raise mace.MaceError(f"the tuner wrote no parameter file at {output} (no kernel ran on "
                             "the GPU, or the file could not be written)")
    with open(output) as f:
        return sum(1 for line in f if line.strip())


def cmd_tune(args: argparse.Namespace) -> int:
    import mace
    try:
        shapes = parse_input_shapes(args.input_shape)
    except ValueError as e:
        print(f"mace tune: {e}", file=sys.stderr)
        return 2
    is_onnx = str(args.model).lower().endswith(".onnx")
    try:
        n = tune(args.model, args.output, args.weights, shapes if is_onnx else None,
                 args.gpu_precision, args.round, args.seed)
    except (mace.MaceError, OSError) as e:
        msg = " ".join(str(e).split("\n"))
        print(f"mace tune: {type(e).__name__}: {msg}", file=sys.stderr)
        return 1
    print(f"wrote {n} tuned launches to {args.output}")
    return 0


def add_tune(sub) -> None:
    p = sub.add_parser("tune", help="tune OpenCL work-group sizes into an opencl_parameter_file",
                       description="Runs MODEL on the GPU with the tuner on and writes the "
                                   "fastest work-group size of each kernel launch to OUTPUT.")
    p.add_argument("model", help="model.onnx or model.pb")
    p.add_argument("-o", "--output", required=True, help="parameter file to write (extended "
                   "if it exists)")
    p.add_argument("--weights", default=None, help="weights file of a .pb (default: MODEL.data)")
    p.add_argument("--gpu_precision", choices=["fp16", "fp32", "fp16_storage"], default="fp16",
                   help="the session's gpu_precision (default fp16: half where the device has "
                   "cl_khr_fp16, else fp32)")
    p.add_argument("--input_shape", action="append", default=None, metavar="NAME:D1,D2,...",
                   help="shape of input NAME (repeatable); tune once per shape you deploy")
    p.add_argument("--round", type=int, default=2, help="runs with the tuner on (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.set_defaults(func=cmd_tune)
