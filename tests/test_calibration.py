"""mace.calibration: range statistics against independent NumPy computations; the range file."""
from __future__ import annotations

import numpy as np
import pytest

from mace import calibration
from mace.errors import InvalidArgumentError


def _batches(x: np.ndarray, n: int = 4, name: str = "t") -> list[dict]:
    return [{name: part} for part in np.array_split(x, n)]


def test_minmax_streams_over_batches():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(5000) * 3 + 1
    r = calibration.tensor_ranges(iter(_batches(x)), "minmax", progress=False)  # one pass
    assert r == {"t": (float(x.min()), float(x.max()))}


@pytest.mark.parametrize("p", [99.99, 99.9, 99.0])
def test_percentile_matches_numpy_within_one_bin(p):
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(200_000), rng.uniform(5, 30, 40)])  # long right tail
    bins = 2048
    lo, hi = calibration.tensor_ranges(_batches(x, 7), "percentile", percentile=p, bins=bins,
                                       progress=False)["t"]
    want_lo, want_hi = np.percentile(x, [100 - p, p])
    width = (x.max() - x.min()) / bins  # the histogram's resolution is the stated tolerance
    assert abs(lo - want_lo) <= width and abs(hi - want_hi) <= width
    assert hi < x.max() and lo > x.min()  # both tails are cut


def _mse(x: np.ndarray, t: float, qmax: int = 127) -> float:
    s = t / qmax
    return float(np.mean((x - np.clip(np.round(x / s), -qmax, qmax) * s) ** 2))


@pytest.mark.parametrize("levels", [128, 8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mse_threshold_against_brute_force(levels, seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(2000), [9.0, -7.5]])
    bins, qmax = 512, levels - 1
    lo, hi = calibration.tensor_ranges([{"t": x}], "mse", bins=bins, levels=levels,
                                       progress=False)["t"]
    t = max(-lo, hi)
    amax = np.abs(x).max()
    grid = np.arange(1, bins + 1) * amax / bins  # the same candidates, errors from raw values
    errs = np.array([_mse(x, g, qmax) for g in grid])
    # the search sees each value at its bin centre, so where the error curve is flat (int8
    # near max |x|) it may pick a neighbour of the exact optimum: its exact error stays
    # within 3% of the optimum's
    assert _mse(x, t, qmax) <= errs.min() * 1.03
    if levels == 8:  # few levels: clipping the outliers pays, and the search does it
        assert t < 0.5 * amax and _mse(x, t, qmax) < 0.5 * _mse(x, amax, qmax)


def test_mse_threshold_exact_on_bin_centres():
    """Values sitting on bin centres: the histogram search is exact, so it finds the grid's
    argmin (np.argmin: the first of equal minima, as the search keeps the first)."""
    bins = 256
    amax = 4.0
    width = amax / bins
    rng = np.random.default_rng(3)
    idx = np.minimum(np.abs(rng.standard_normal(2000)) * 30, bins - 1).astype(int)
    x = (idx + 0.5) * width * rng.choice([-1, 1], idx.size)
    x = np.append(x, (bins - 0.5) * width)
    hist, _ = np.histogram(np.abs(x), bins, (0, (bins) * width))
    t = calibration.mse_threshold(hist, width)
    grid = np.arange(1, bins + 1) * width
    assert t == pytest.approx(grid[int(np.argmin([_mse(x, g) for g in grid]))])


def test_kl_gaussian_with_outliers_clips_well_below_max():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(200_000), [60.0, -55.0, 58.0]])
    lo, hi = calibration.tensor_ranges(_batches(x), "kl", progress=False)["t"]
    assert lo == -hi  # symmetric threshold inside [min, max]
    assert 2.5 < hi < 0.15 * np.abs(x).max()


def test_kl_uniform_keeps_about_max():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, 200_000)
    lo, hi = calibration.tensor_ranges(_batches(x), "kl", progress=False)["t"]
    assert hi >= 0.97 * x.max() and lo <= 0.97 * x.min()


def test_kl_threshold_matches_a_direct_search():
    """kl_threshold against a plain, loop-by-loop transcription of the same definition."""
    rng = np.random.default_rng(6)
    hist = np.histogram(np.abs(rng.laplace(size=20_000)), 400)[0].astype(float)
    levels = 32

    def direct(h):
        best, best_i = np.inf, None
        for i in range(levels, len(h) + 1):
            p = h[:i].copy()
            p[-1] += h[i:].sum()
            q = np.zeros(i)
            step = i // levels
            for j in range(levels):
                a, b = j * step, (i if j == levels - 1 else (j + 1) * step)
                nz = h[a:b] > 0
                if nz.any():
                    q[a:b][nz] = h[a:b].sum() / nz.sum()
            pn, qn = p / p.sum(), q / q.sum()
            m = pn > 0
            d = np.inf if np.any(qn[m] == 0) else np.sum(pn[m] * np.log(pn[m] / qn[m]))
            if d < best:
                best, best_i = d, i
        return best_i

    width = 0.01
    assert calibration.kl_threshold(hist, width, levels) == pytest.approx(
        (direct(hist) + 0.5) * width)


def test_several_tensors_and_bare_arrays():
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(100), np.abs(rng.standard_normal(100))
    r = calibration.tensor_ranges([{"a": a, "b": b}], progress=False)
    assert r == {"a": (a.min(), a.max()), "b": (b.min(), b.max())}
    r = calibration.tensor_ranges(lambda: iter([a[:50], a[50:]]), "percentile", percentile=100,
                                  progress=False)
    assert r["input"] == pytest.approx((a.min(), a.max()))


def test_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="method"):
        calibration.tensor_ranges([np.zeros(3)], "histogram")
    with pytest.raises(InvalidArgumentError, match="twice"):
        calibration.tensor_ranges(iter([np.zeros(3)]), "kl")
    with pytest.raises(InvalidArgumentError, match="percentile"):
        calibration.tensor_ranges([np.zeros(3)], "percentile", percentile=20)


def test_range_file_round_trip(tmp_path):
    ranges = {"input": (-1.0, 1.0), "conv1/Relu:0": (0.0, 6.25), "fc": (-0.000123, 42.5)}
    path = calibration.write_range_file(tmp_path / "overall_range", ranges)
    text = open(path).read()
    assert text.splitlines() == ["input@@-1.000000,1.000000", "conv1/Relu:0@@0.000000,6.250000",
                                 "fc@@-0.000123,42.500000"]
    assert calibration.read_range_file(path) == ranges  # %f keeps these exactly
    rng = np.random.default_rng(8)
    many = {f"t{i}": tuple(sorted(rng.standard_normal(2) * 10)) for i in range(20)}
    back = calibration.read_range_file(calibration.write_range_file(tmp_path / "r2", many))
    assert list(back) == list(many)
    for k in many:  # %f rounds to 6 decimals
        assert np.allclose(back[k], many[k], rtol=0, atol=5e-7)


@pytest.mark.parametrize("line,why", [("x@@1.0", "name@@min,max"), ("x 1.0,2.0", "name@@min,max"),
                                      ("x@@a,b", "name@@min,max"), ("x@@2.0,1.0", "above max")])
def test_range_file_errors(tmp_path, line, why):
    p = tmp_path / "r"
    p.write_text(f"ok@@0,1\n{line}\n")
    with pytest.raises(calibration.RangeFileError, match=f"{p}:2: .*{why}"):
        calibration.read_range_file(p)
    with pytest.raises(InvalidArgumentError, match="cannot be written"):
        calibration.write_range_file(tmp_path / "w", {"a@@b": (0, 1)})
