"""What the `mace` subcommands share: random model inputs and the --affinity option.

Layering: cli.py and benchmark.py import this module, it imports neither (tests/test_layers.py)."""
from __future__ import annotations

import argparse
from typing import Sequence

import numpy as np

from .session import AFFINITY_NAMES

AFFINITIES = list(AFFINITY_NAMES)
AFFINITY_HELP = ("thread placement: big (default: each thread on a core of its own among the "
                 "fastest), little, or none (left to the OS)")


def add_affinity_arg(p: argparse.ArgumentParser) -> None:
    """Adds `--affinity {big,little,none}` (default None: the session's default)."""
    p.add_argument("--affinity", choices=AFFINITIES, default=None, help=AFFINITY_HELP)


def parse_input_shapes(specs: Sequence[str] | None) -> dict[str, list[int]]:
    """{name: shape} from `--input_shape name:1,3,640,640` flags; ValueError names a bad one."""
    shapes: dict[str, list[int]] = {}
    for spec in specs or []:
        name, sep, dims = spec.rpartition(":")
        try:
            shape = [int(d) for d in dims.split(",")] if dims.strip() else []
        except ValueError:
            shape = None
        if not sep or not name or shape is None or any(d <= 0 for d in shape):
            raise ValueError(f"--input_shape {spec!r}: expected NAME:D1,D2,... with positive "
                             "dims, e.g. images:1,3,640,640")
        if name in shapes:
            raise ValueError(f"--input_shape names '{name}' twice")
        shapes[name] = shape
    return shapes


def random_input(shape: tuple, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """A random array for a model input: floats in [-1, 1), random bools, zeros otherwise."""
    shape = tuple(max(int(d), 1) for d in shape)
    if dtype is None:
        dtype = np.dtype(np.float32)
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    return np.zeros(shape, dtype)  # indices and shape-like inputs: 0 is always in range


def random_feeds(sess, seed: int, shapes: dict | None = None) -> dict[str, np.ndarray]:
    """{input name: random_input(...)} for every input of a mace.Session, from one seed; shapes
    ({name: shape}) overrides the session's input shapes."""
    rng = np.random.default_rng(seed)
    shapes = shapes or {}
    return {i.name: random_input(shapes.get(i.name, i.shape), i.dtype, rng) for i in sess.inputs}


def op_type_label(stat: dict) -> str:
    """An op's type, marked "(GPU)" for ops that ran on the GPU (their time is the kernels'
    device time); copies between devices keep their type, "Transfer"."""
    if stat.get("device") == "gpu" and stat["type"] != "Transfer":
        return f"{stat['type']}(GPU)"
    return stat["type"]
