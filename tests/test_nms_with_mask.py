"""NMSWithMask's kernels (csrc/kernels/cpu/nms_with_mask.cc, cuda/nms_with_mask.cu) against a box-by-box NumPy
transcription in the input's dtype, on the CPU and the GPU (the host emulation without one), eagerly and in a
trace; box counts around the GPU's 64-box mask words."""

from __future__ import annotations

import numpy as np
import pytest

import opforge
from opforge import Tensor, ops


def _nms_numpy(boxes: np.ndarray, threshold: float):
    """(sorted boxes, keep), every operation in the boxes' dtype as NumPy computes it."""
    t = boxes.dtype.type
    score = boxes[:, 4].astype(np.float64)
    order = sorted(range(len(boxes)), key=lambda i: (np.isnan(score[i]), -score[i] if not np.isnan(score[i]) else 0))
    s = boxes[order]
    keep = np.ones(len(s), bool)
    with np.errstate(all="ignore"):
        area = (s[:, 2] - s[:, 0]) * (s[:, 3] - s[:, 1])
        for i in range(len(s)):
            if not keep[i]:
                continue
            for j in range(i + 1, len(s)):
                w = np.maximum(np.minimum(s[i, 2], s[j, 2]) - np.maximum(s[i, 0], s[j, 0]), t(0))
                h = np.maximum(np.minimum(s[i, 3], s[j, 3]) - np.maximum(s[i, 1], s[j, 1]), t(0))
                inter = w * h
                if inter / ((area[i] + area[j]) - inter) > t(threshold):
                    keep[j] = False
    return s, keep


def _boxes(n: int, dtype, rng, span=40.0) -> np.ndarray:
    x0, y0 = rng.uniform(0, span, n), rng.uniform(0, span, n)
    w, h = rng.uniform(1, span / 3, n), rng.uniform(1, span / 3, n)
    score = rng.choice(rng.uniform(0, 1, max(n // 3, 1)), n)  # ties
    return np.stack([x0, y0, x0 + w, y0 + h, score], 1).astype(dtype)


@pytest.mark.parametrize("device", ["CPU", "GPU"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 130])
def test_nms_with_mask_matches_numpy(device, dtype, n, rng):
    b = _boxes(n, dtype, rng)
    for threshold in (0.1, 0.5):
        boxes, idx, mask = ops.NMSWithMask(threshold)(Tensor(b, device=device))
        assert boxes.device == device
        want_boxes, want_keep = _nms_numpy(b, threshold)
        np.testing.assert_array_equal(boxes.asnumpy(), want_boxes)
        np.testing.assert_array_equal(idx.asnumpy(), np.arange(n, dtype=np.int32))
        np.testing.assert_array_equal(mask.asnumpy(), want_keep)


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_nms_with_mask_nan_and_degenerate_boxes(device):
    b = np.array(
        [
            [0, 0, 10, 10, np.nan],  # NaN score: last
            [1, 1, 11, 11, 0.5],
            [0, 0, 10, 10, 0.9],
            [0, 0, 0, 0, 0.7],  # zero area: 0 / 0 overlaps nothing
            [np.nan, 0, 10, 10, 0.6],  # NaN coordinate: suppresses nothing, is not suppressed
            [2, 2, 12, 12, 0.5],  # a tie with row 1: after it
        ],
        np.float32,
    )
    boxes, _, mask = ops.NMSWithMask(0.3)(Tensor(b, device=device))
    want_boxes, want_keep = _nms_numpy(b, 0.3)
    np.testing.assert_array_equal(boxes.asnumpy(), want_boxes)
    np.testing.assert_array_equal(mask.asnumpy(), want_keep)
    assert np.isnan(boxes.asnumpy()[-1, 4])


@pytest.mark.parametrize("device", ["CPU", "GPU"])
def test_nms_with_mask_in_a_trace_and_under_grad(device, rng):
    b = _boxes(70, np.float32, rng)

    def kept_scores(x):
        boxes, _, mask = ops.NMSWithMask(0.2)(x)
        return boxes[:, 4] * ops.cast(mask, opforge.float32)

    eager = kept_scores(Tensor(b, device=device)).asnumpy()
    traced = opforge.jit(kept_scores)
    for _ in range(2):  # the recording call and a replay
        np.testing.assert_array_equal(traced(Tensor(b, device=device)).asnumpy(), eager)
    grad = opforge.grad(lambda x: kept_scores(x).sum())(Tensor(b, device=device))
    np.testing.assert_array_equal(grad.asnumpy(), np.zeros_like(b))  # no gradient through the choice


def test_nms_with_mask_gpu_equals_cpu_on_many_boxes(rng):
    b = _boxes(300, np.float32, rng, span=200.0)  # five mask words, many suppressions across words
    cpu = ops.NMSWithMask(0.05)(Tensor(b))
    gpu = ops.NMSWithMask(0.05)(Tensor(b, device="GPU"))
    for c, g in zip(cpu, gpu):
        np.testing.assert_array_equal(c.asnumpy(), g.asnumpy())
    assert 0 < cpu[2].asnumpy().sum() < 300
