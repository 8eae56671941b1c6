"""The GPU's Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter (im2col + the runtime's GEMM, the direct
sums where a group has one output channel: opforge/kernels/gpu/conv.py) against the CPU kernels, on the GPU
the tests run: groups (depthwise too), dilations, strides, the pad modes, odd sizes, a batch cut into several
chunks and an empty batch."""

from __future__ import annotations

import numpy as np
import pytest

from opforge import Tensor, ops
from opforge.kernels import registry
from opforge.kernels.gpu import conv as gpu_conv

# (n, c, h, w, oc, attrs)
CASES = {
    "valid 3x3": (2, 3, 7, 9, 4, {"kernel_size": 3}),
    "pad 1 stride 2": (3, 4, 11, 8, 6, {"kernel_size": 3, "pad_mode": "pad", "pad": 1, "stride": 2}),
    "pad (0,2,1,3) d(2,3)": (
        2,
        2,
        9,
        10,
        3,
        {"kernel_size": (3, 2), "pad_mode": "pad", "pad": (0, 2, 1, 3), "dilation": (2, 3)},
    ),
    "same k(2,5) s(1,3) group 2": (
        2,
        4,
        7,
        13,
        6,
        {"kernel_size": (2, 5), "pad_mode": "same", "stride": (1, 3), "group": 2},
    ),
    "depthwise same d2": (3, 5, 8, 6, 5, {"kernel_size": 3, "pad_mode": "same", "dilation": 2, "group": 5}),
    "one output channel s2": (2, 3, 6, 7, 1, {"kernel_size": 3, "pad_mode": "same", "stride": 2}),
    "group 2 one output channel each": (2, 4, 6, 6, 2, {"kernel_size": (2, 3), "group": 2, "dilation": (2, 1)}),
    "1x1": (2, 6, 5, 7, 4, {"kernel_size": 1}),
    "1x1 group 3 stride 2": (2, 6, 5, 7, 9, {"kernel_size": 1, "stride": 2, "group": 3}),
    "1x1 pad": (2, 3, 4, 4, 2, {"kernel_size": 1, "pad_mode": "pad", "pad": (1, 0, 0, 1)}),
    "window wider than stride, large pad": (
        1,
        1,
        3,
        3,
        2,
        {"kernel_size": 5, "pad_mode": "pad", "pad": 3, "stride": 2},
    ),
}


def _prims(oc, attrs):
    full = {"pad_mode": "valid", "pad": 0, "stride": 1, "dilation": 1, "group": 1, **attrs}
    return (
        ops.Conv2D(oc, **full),
        ops.Conv2DBackpropInput(oc, **full),
        ops.Conv2DBackpropFilter(oc, **full),
    )


def _run_all(case, dtype, rng, device):
    """Forward, dx and dw of ``case`` on ``device`` for inputs drawn from ``rng`` (NumPy arrays back)."""
    n, c, h, w, oc, attrs = case
    fwd, dx_prim, dw_prim = _prims(oc, attrs)
    x = rng.uniform(-2, 2, (n, c, h, w)).astype(dtype)
    wt = rng.uniform(-1, 1, (oc, c // fwd.group, *fwd.kernel_size)).astype(dtype)
    y = fwd(Tensor(x, device=device), Tensor(wt, device=device))
    dout = rng.uniform(-2, 2, y.shape).astype(dtype)
    dx = dx_prim(Tensor(dout, device=device), Tensor(wt, device=device), x.shape)
    dw = dw_prim(Tensor(dout, device=device), Tensor(x, device=device), wt.shape)
    assert {t.device for t in (y, dx, dw)} == {device}
    return y.asnumpy(), dx.asnumpy(), dw.asnumpy()


def _compare(case, dtype, rtol, atol):
    seed = 7
    cpu = _run_all(case, dtype, np.random.default_rng(seed), "CPU")
    gpu = _run_all(case, dtype, np.random.default_rng(seed), "GPU")
    for name, a, b in zip(("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"), gpu, cpu):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol, err_msg=name)
    return gpu


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_gpu_conv_matches_the_cpu(case):
    _compare(case, np.float64, 1e-12, 1e-12)
    _compare(case, np.float32, 1e-5, 1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_conv_half_types_match_the_cpu(dtype):
    from opforge import dtype as mstype

    np_dtype = getattr(mstype, dtype).np_dtype
    tol = 2e-2 if dtype == "bfloat16" else 4e-3
    _compare(CASES["same k(2,5) s(1,3) group 2"], np_dtype, tol, tol)


@pytest.fixture
def chunk_sizes(monkeypatch):
    """Records the samples per chunk of each call."""
    sizes = []
    chunks = gpu_conv._chunks

    def recording(n, nb):
        sizes.append(nb)
        return chunks(n, nb)

    monkeypatch.setattr(gpu_conv, "_chunks", recording)
    return sizes


@pytest.mark.parametrize("case", ["pad 1 stride 2", "same k(2,5) s(1,3) group 2", "1x1"])
def test_gpu_conv_in_several_chunks_matches_one(case, monkeypatch, chunk_sizes):
    n, c, h, w, oc, attrs = CASES[case]
    big = (7, c, h, w, oc, attrs)  # 7 samples: chunks of 2 leave a chunk of 1
    whole = _compare(big, np.float64, 1e-12, 1e-12)
    assert chunk_sizes == [7, 7, 7]
    kh, kw = _prims(oc, attrs)[0].kernel_size
    columns_per_sample = c * kh * kw * whole[0].shape[2] * whole[0].shape[3]
    monkeypatch.setattr(gpu_conv, "COLUMN_BYTES", columns_per_sample * 8 * 2)  # 2 samples' float64 columns
    registry.invalidate()  # the chunks are chosen when a call's plan is made
    try:
        chunked = _compare(big, np.float64, 1e-12, 1e-12)
    finally:
        registry.invalidate()  # no chunked plan outlives the patch
    assert chunk_sizes[3:5] == [2, 2] and chunk_sizes[5] < 2  # the filter's per-sample dw counts too
    for a, b in zip(chunked, whole):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)


def test_gpu_conv_empty_batch_and_channels():
    for case in [(0, 3, 6, 6, 4, {"kernel_size": 3}), (2, 0, 6, 6, 4, {"kernel_size": 3, "pad_mode": "same"})]:
        y, dx, dw = _compare(case, np.float32, 0, 0)
        assert not dw.any() and not dx.any()


def test_gpu_conv_backprops_are_reproducible():
    case = CASES["depthwise same d2"]
    first = _run_all(case, np.float32, np.random.default_rng(3), "GPU")
    again = _run_all(case, np.float32, np.random.default_rng(3), "GPU")
    for a, b in zip(first, again):
        assert np.array_equal(a, b)
