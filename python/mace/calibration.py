"""Calibration statistics: per-tensor value ranges over a calibration set, and MACE's range file.

A calibration set is a sequence of batches, each a dict {tensor name: array} (the activations
of one run) or a lone array (named "input"). Four ways to turn it into a range [lo, hi] a
tensor is quantized over:

- ``minmax``: the smallest and largest value seen (MACE's ``quantize_stat.py`` with its
  default ``--percentile 0``). One streaming pass.
- ``percentile``: the ``percentile``-th (default 99.99) and ``100 - percentile``-th
  percentiles of the values, both tails cut separately as MACE's ``quantize_stat.py`` cuts
  its minimums and maximums separately (activations after ReLU are one-sided, so a range
  over |x| would waste half of it). Read from a ``bins``-bin histogram of x over
  [min, max], linear inside a bin: off from the exact percentile by at most one bin width.
- ``kl`` (entropy, as TensorRT and ncnn calibrate): a ``bins``-bin (2048) histogram of |x|
  over [0, max |x|]; for each threshold bin i from ``levels`` (128, int8) up, the
  distribution P of the first i bins (the clipped tail added to bin i - 1) against Q, the
  same bins quantized to ``levels`` levels and spread back over their non-empty bins; the
  threshold T = (i + 0.5) * bin width of the smallest KL(P || Q).
- ``mse``: the threshold T, on the bin edges of the |x| histogram, that minimises the mean
  squared error of a symmetric quantize-dequantize with ``levels - 1`` steps each side
  (scale T / 127 for int8), each bin's values taken at its centre.

For ``kl`` and ``mse`` the range is [min, max] clipped to [-T, T]. The histogram methods
read the calibration set twice (first min/max, then the histogram on that range, as ncnn and
TensorRT do), so it must be a sequence or a callable returning a fresh iterator.

The range file (``quantize_range_file`` of the deployment YAML) holds one line per tensor,
``name@@min,max``, the numbers written with ``%f`` exactly as MACE's ``quantize_stat.py``
prints them.

>>> import numpy as np
>>> from mace import calibration
>>> batches = [{"x": np.random.default_rng(i).standard_normal(1000)} for i in range(4)]
>>> r = calibration.tensor_ranges(batches, method="percentile", progress=False)
>>> calibration.write_range_file("overall_range", r)                # doctest: +SKIP
>>> calibration.read_range_file("overall_range")                    # doctest: +SKIP
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .errors import InvalidArgumentError, MaceError

METHODS = ("minmax", "percentile", "kl", "mse")


class RangeFileError(MaceError):
    """A range file line is not ``name@@min,max``; the message names the file and line."""


# ---- thresholds from histograms of |x| ----------------------------------------------------

def _kl(p: np.ndarray, q: np.ndarray) -> float:
    """KL(p || q) of two histograms normalised here; bins where p is 0 add nothing."""
    p = p / p.sum()
    q = q / q.sum()
    m = p > 0
    if np.any(q[m] == 0):
        return float("inf")
    return float(np.sum(p[m] * np.log(p[m] / q[m])))


def kl_threshold(hist: np.ndarray, width: float, levels: int = 128) -> float:
    """TensorRT's / ncnn's entropy threshold from a histogram of |x| with bins of `width`."""
    hist = np.asarray(hist, dtype=np.float64)
    n = len(hist)
    if n <= levels:
        return n * width
    best_i, best = n, float("inf")
    for i in range(levels, n + 1):
        p = hist[:i].copy()
        p[i - 1] += hist[i:].sum()  # the clipped tail lands in the last kept bin
        # Q: the first i bins merged into `levels` levels (the last level takes the
        # remainder), each level's count spread evenly over its non-empty bins.
        step = i // levels
        head = (levels - 1) * step
        src, nz = hist[:i], hist[:i] > 0
        sums = np.append(src[:head].reshape(levels - 1, step).sum(1), src[head:].sum())
        counts = np.append(nz[:head].reshape(levels - 1, step).sum(1), nz[head:].sum())
        per_bin = np.divide(sums, counts, out=np.zeros(levels), where=counts > 0)
        level_of = np.minimum(np.arange(i) // step, levels - 1)
        q = np.where(nz, per_bin[level_of], 0.0)
        d = _kl(p, q)
        if d < best:
            best, best_i = d, i
    return (best_i + 0.5) * width  # ncnn: the middle of the first clipped bin


def mse_threshold(hist: np.ndarray, width: float, levels: int = 128) -> float:
    """The bin edge T minimising the squared error of symmetric quantize-dequantize with
    `levels - 1` steps each side, each bin's values at its centre."""
    hist = np.asarray(hist, dtype=np.float64)
    centres = (np.arange(len(hist)) + 0.5) * width
    qmax = levels - 1
    best_t, best = len(hist) * width, float("inf")
    for i in range(1, len(hist) + 1):
        t = i * width
        scale = t / qmax
        dq = np.clip(np.round(centres / scale), 0, qmax) * scale
        err = float(np.dot(hist, (centres - dq) ** 2))
        if err < best:
            best, best_t = err, t
    return best_t


def _hist_percentile(hist: np.ndarray, lo: float, hi: float, q: float) -> float:
    """The q-th percentile (0..100) of the values a histogram over [lo, hi] counts, linear
    inside the bin it falls in."""
    c = np.cumsum(hist, dtype=np.float64)
    total = c[-1]
    width = (hi - lo) / len(hist)
    target = q / 100.0 * total
    b = int(np.searchsorted(c, target, side="left"))
    b = min(b, len(hist) - 1)
    before = c[b - 1] if b else 0.0
    frac = (target - before) / hist[b] if hist[b] else 0.0
    return float(lo + (b + min(max(frac, 0.0), 1.0)) * width)


# ---- per-tensor statistics ----------------------------------------------------------------

class TensorStats:
    """The statistics of one tensor: min/max (first pass), then histograms on that range."""

    def __init__(self, bins: int = 2048):
        self.bins = bins
        self.lo = float("inf")
        self.hi = float("-inf")
        self.hist: np.ndarray | None = None      # of x over [lo, hi]
        self.abs_hist: np.ndarray | None = None  # of |x| over [0, max |x|]

    @property
    def amax(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    def observe_range(self, x: np.ndarray) -> None:
        if x.size:
            self.lo = min(self.lo, float(x.min()))
            self.hi = max(self.hi, float(x.max()))

    def observe_hist(self, x: np.ndarray, signed: bool, absolute: bool) -> None:
        x = x.astype(np.float64, copy=False).ravel()
        if signed:
            h, _ = np.histogram(x, self.bins, (self.lo, self.hi if self.hi > self.lo
                                                else self.lo + 1.0))
            self.hist = h if self.hist is None else self.hist + h
        if absolute:
            h, _ = np.histogram(np.abs(x), self.bins, (0.0, self.amax or 1.0))
            self.abs_hist = h if self.abs_hist is None else self.abs_hist + h

    def range(self, method: str, percentile: float = 99.99, levels: int = 128
              ) -> tuple[float, float]:
        if self.lo > self.hi:
            raise MaceError("no values were observed")
        if method == "minmax" or self.lo == self.hi:
            return self.lo, self.hi
        if method == "percentile":
            return (_hist_percentile(self.hist, self.lo, self.hi, 100.0 - percentile),
                    _hist_percentile(self.hist, self.lo, self.hi, percentile))
        width = self.amax / self.bins
        find = kl_threshold if method == "kl" else mse_threshold
        t = min(find(self.abs_hist, width, levels), self.amax)
        return max(self.lo, -t), min(self.hi, t)


# ---- over a calibration set ---------------------------------------------------------------

def _as_dict(batch: Any) -> dict:
    if isinstance(batch, dict):
        return batch
    return {"input": batch}


def _progress(it: Iterable, enabled: bool, desc: str, total: int | None) -> Iterable:
    if not enabled:
        return it
    try:
        from tqdm import tqdm
    except ImportError:  # the bar is a nicety; tqdm is not a dependency
        return it
    return tqdm(it, desc=desc, total=total, unit="batch")


def tensor_ranges(batches: Iterable | Callable[[], Iterator], method: str = "minmax", *,
                  percentile: float = 99.99, bins: int = 2048, levels: int = 128,
                  progress: bool = True) -> dict[str, tuple[float, float]]:
    """The range [lo, hi] of every tensor named in the batches, by `method` (module doc).

    `batches`: a sequence of dicts {name: array} or arrays, or a callable returning a fresh
    iterator over them (the histogram methods read it twice). `levels`: 128 for int8.
    """
    if method not in METHODS:
        raise InvalidArgumentError(f"method: expected one of {list(METHODS)}, got {method!r}")
    if not 50.0 < percentile <= 100.0:
        raise InvalidArgumentError(f"percentile: expected a number in (50, 100], got {percentile}")
    if bins < 2 or levels < 2:
        raise InvalidArgumentError(f"bins and levels must be at least 2, got {bins}, {levels}")
    two_pass = method != "minmax"
    if callable(batches):
        fresh = batches
    else:
        if two_pass and iter(batches) is batches:
            raise InvalidArgumentError(f"method {method!r} reads the calibration set twice: give "
                                       "a sequence or a callable returning a fresh iterator")
        fresh = lambda: iter(batches)  # noqa: E731
    total = len(batches) if hasattr(batches, "__len__") else None
    stats: dict[str, TensorStats] = {}
    for batch in _progress(fresh(), progress, "calibration: ranges", total):
        for name, x in _as_dict(batch).items():
            stats.setdefault(name, TensorStats(bins)).observe_range(np.asarray(x))
    if two_pass:
        signed, absolute = method == "percentile", method != "percentile"
        for batch in _progress(fresh(), progress, f"calibration: {method} histograms", total):
            for name, x in _as_dict(batch).items():
                stats[name].observe_hist(np.asarray(x), signed, absolute)
    return {name: s.range(method, percentile, levels) for name, s in stats.items()}


# ---- MACE's range file --------------------------------------------------------------------

def write_range_file(path: str | os.PathLike, ranges: dict[str, tuple[float, float]]) -> str:
    """Writes `name@@min,max` per tensor (MACE's quantize_stat.py format); returns the path."""
    lines = []
    for name, (lo, hi) in ranges.items():
        if "@@" in name or "\n" in name or not name:
            raise InvalidArgumentError(f"range file: tensor name {name!r} cannot be written "
                                       "(empty, or holds '@@' or a newline)")
        lines.append("%s@@%f,%f\n" % (name, lo, hi))
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return path


def read_range_file(path: str | os.PathLike) -> dict[str, tuple[float, float]]:
    """Reads a range file back: {name: (min, max)}; a bad line raises RangeFileError."""
    path = os.fspath(path)
    out: dict[str, tuple[float, float]] = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.split("@@")
            try:
                if len(parts) != 2:
                    raise ValueError
                lo, hi = (float(v) for v in parts[1].split(","))
            except ValueError:
                raise RangeFileError(f"{path}:{no}: expected 'name@@min,max', got "
                                     f"{line[:60]!r}") from None
            if not lo <= hi:
                raise RangeFileError(f"{path}:{no}: min {lo} is above max {hi}")
            out[parts[0]] = (lo, hi)
    return out
