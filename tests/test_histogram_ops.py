"""ops.HistogramFixedWidth and ops.histc (opforge/ops/histogram.py) against NumPy, MindSpore's documented
examples, jit against eager, and bad inputs."""

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops
from opforge import dtype as ms


def _fixed_width_ref(x, low, high, nbins):
    step = (float(high) - float(low)) / nbins
    offset = (np.maximum(x, low) - low).astype(np.float64)
    bins = np.minimum(np.floor(offset / step), nbins - 1).astype(np.int64)
    return np.bincount(bins.ravel(), minlength=nbins).astype(np.int32)


def test_histogram_fixed_width_docs_example():
    x = Tensor(np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 15]), ms.float16)
    out = ops.HistogramFixedWidth(5)(x, Tensor(np.array([0.0, 5.0]), ms.float16))
    assert out.dtype == ms.int32 and out.asnumpy().tolist() == [2, 1, 1, 0, 2]


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.float32, np.float64])
def test_histogram_fixed_width_matches_numpy(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 25)) * 10).astype(dtype)
    value_range = np.array([-8, 12]).astype(dtype)
    for nbins in (1, 7, 40):
        got = ops.HistogramFixedWidth(nbins)(Tensor(x), Tensor(value_range))
        np.testing.assert_array_equal(got.asnumpy(), _fixed_width_ref(x, value_range[0], value_range[1], nbins))
        assert int(got.asnumpy().sum()) == x.size


def _histc_ref(x, bins, lo, hi):
    v = x.astype(np.float64).ravel()
    if lo == hi == 0:
        lo, hi = v.min(), v.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    v = v[(v >= lo) & (v <= hi)]
    idx = np.minimum(np.floor((v - lo) / (hi - lo) * bins), bins - 1).astype(np.int64)
    return np.bincount(idx, minlength=bins)


def test_histc_docs_examples_and_numpy():
    assert ops.histc(Tensor(np.array([1.0, 2, 1], np.float32)), bins=4, min=0.0, max=3.0).asnumpy().tolist() == [
        0.0, 2.0, 1.0, 0.0]  # fmt: skip
    out = ops.histc(Tensor(np.array([1.0, 1, 2, 2, 2, 5, 8], np.float32)), bins=5, min=0, max=9)
    assert out.dtype == ms.float32 and out.asnumpy().tolist() == [2.0, 3.0, 1.0, 0.0, 1.0]
    rng = np.random.default_rng(2)
    for dtype in (np.float32, np.float16, np.int32):
        x = (rng.standard_normal(60) * 5).astype(dtype)
        for bins, lo, hi in ((10, 0.0, 0.0), (7, -3, 4.5), (3, 2.0, 2.0)):
            got = ops.histc(Tensor(x), bins, lo, hi)
            assert got.dtype == (ms.int32 if dtype == np.int32 else ms.float32)
            np.testing.assert_array_equal(got.asnumpy(), _histc_ref(x, bins, lo, hi))
    assert ops.histc(Tensor(np.full(4, 3.0, np.float32)), 4).asnumpy().tolist() == [0.0, 0.0, 4.0, 0.0]


def test_histograms_under_jit():
    x = Tensor(np.random.default_rng(3).standard_normal(50).astype(np.float32))
    r = Tensor(np.array([-1.0, 1.0], np.float32))
    hist = ops.HistogramFixedWidth(6)
    np.testing.assert_array_equal(opforge.jit(hist)(x, r).asnumpy(), hist(x, r).asnumpy())
    np.testing.assert_array_equal(opforge.jit(lambda v: ops.histc(v, 8))(x).asnumpy(), ops.histc(x, 8).asnumpy())


def test_histogram_bad_inputs():
    x = Tensor(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="nbins"):
        ops.HistogramFixedWidth(0)
    with pytest.raises(TypeError, match="nbins"):
        ops.HistogramFixedWidth(2.0)
    with pytest.raises(ValueError, match="'int32'"):
        ops.HistogramFixedWidth(3, "int64")
    with pytest.raises(ValueError, match=r"'range'.*\[2\]"):
        ops.HistogramFixedWidth(3)(x, Tensor(np.zeros(3, np.float32)))
    with pytest.raises(TypeError, match="HistogramFixedWidth"):
        ops.HistogramFixedWidth(3)(x, Tensor(np.zeros(2, np.float64)))
    with pytest.raises(ValueError, match="'bins' must be positive"):
        ops.histc(x, 0)
    with pytest.raises(ValueError, match="must not exceed"):
        ops.histc(x, 3, 2.0, 1.0)
    with pytest.raises(TypeError, match="'min'"):
        ops.histc(x, 3, "0")
    with pytest.raises(TypeError, match="histc"):
        ops.histc(Tensor(np.zeros(3, np.int64)))
