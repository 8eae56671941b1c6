"""What the model zoo's CRNN (tests/zoo/crnn, tests/test_zoo_crnn.py) needed of opforge, one focused check each:
``P.CTCLoss`` reading labels at or above the blank as the padding that ends a row (the zoo's ``CTCLoss`` cell
pads every label row with the blank and lists every position in ``labels_indices``), eagerly and inside
``jit`` / GRAPH_MODE, on both backends; and ``P.CTCLoss`` on float16 logits (the Ascend path's
``crnn(config, full_precision=False)``)."""

import numpy as np
import pytest
from helpers import ctc_nll_by_paths, softmax_rows

import opforge
from opforge import Tensor
from opforge.common import dtype as mstype
from opforge.errors import KernelError
from opforge.ops import operations as P
from opforge.testing import numeric_grad

STEPS, BATCH, CLASSES = 4, 3, 4  # blank = 3


def _ctc_nll(logits: np.ndarray, labels: list, blank: int) -> float:
    """-log p(labels | logits [T, C]) by every alignment (tests/helpers.py)."""
    return ctc_nll_by_paths(softmax_rows(logits), labels, blank)


def _padded(rng, dtype=np.float32):
    """Logits and the zoo's dense labels: every (batch, position) listed, rows padded with the blank (3) or
    above it; row 2 is all padding (an empty label)."""
    logits = rng.normal(size=(STEPS, BATCH, CLASSES)).astype(dtype)
    labels = np.array([[0, 1, 3], [2, 3, 7], [3, 3, 3]], np.int32)
    indices = np.array([[b, k] for b in range(BATCH) for k in range(3)], np.int64)
    seq = np.array([4, 3, 4], np.int32)
    want = [[0, 1], [2], []]
    return logits, indices, labels.reshape(-1), seq, want


def _args(logits, indices, values, seq, device="CPU"):
    return tuple(Tensor(a, device=device) for a in (logits, indices, values, seq))


def _reference(logits, seq, want):
    return np.array([_ctc_nll(logits[: seq[b], b].astype(np.float64), want[b], 3) for b in range(BATCH)])


def test_ctc_loss_reads_values_at_or_above_the_blank_as_row_padding(rng):
    logits, indices, values, seq, want = _padded(rng)
    loss, grad = P.CTCLoss()(*_args(logits, indices, values, seq))
    np.testing.assert_allclose(loss.asnumpy(), _reference(logits, seq, want), rtol=1e-5)
    # the same as the labels alone, gradient included (zero past a row's frames)
    sparse = [(b, k, v) for b, row in enumerate(want) for k, v in enumerate(row)]
    idx = np.array([[b, k] for b, k, _ in sparse], np.int64)
    vals = np.array([v for _, _, v in sparse], np.int32)
    loss2, grad2 = P.CTCLoss()(*_args(logits, idx, vals, seq))
    np.testing.assert_array_equal(loss.asnumpy(), loss2.asnumpy())
    np.testing.assert_array_equal(grad.asnumpy(), grad2.asnumpy())
    assert not grad.asnumpy()[3:, 1].any()


def test_ctc_loss_padding_gradient_matches_central_differences(rng):
    logits, indices, values, seq, want = _padded(rng, np.float64)
    _, idx, vals, lengths = _args(logits, indices, values, seq)
    got = opforge.grad(lambda x: P.CTCLoss()(x, idx, vals, lengths)[0].sum())(Tensor(logits)).asnumpy()
    want = numeric_grad(lambda a: float(np.sum(_reference(a, seq, want))), logits)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_ctc_loss_padding_under_jit_matches_eager(rng):
    logits, indices, values, seq, want = _padded(rng)
    _, idx, vals, lengths = _args(logits, indices, values, seq)
    ctc = P.CTCLoss()
    f = lambda x, v: ctc(x, idx, v, lengths)  # noqa: E731
    jitted = opforge.jit(f)
    for scale in (1.0, 2.0):  # traced, then replayed on new logits
        x = Tensor(logits * scale)
        eager, traced = f(x, vals), jitted(x, vals)
        np.testing.assert_allclose(traced[0].asnumpy(), _reference(logits * scale, seq, want), rtol=1e-5)
        np.testing.assert_array_equal(traced[0].asnumpy(), eager[0].asnumpy())
        np.testing.assert_array_equal(traced[1].asnumpy(), eager[1].asnumpy())
        assert traced[0].shape == (BATCH,) and traced[1].shape == (STEPS, BATCH, CLASSES)
    g = opforge.grad(lambda x: f(x, vals)[0].sum())
    np.testing.assert_allclose(opforge.jit(g)(Tensor(logits)).asnumpy(), g(Tensor(logits)).asnumpy(), atol=1e-6)


def test_ctc_loss_padding_on_gpu(rng):
    logits, indices, values, seq, want = _padded(rng)
    loss, grad = P.CTCLoss()(*_args(logits, indices, values, seq, "GPU"))
    assert loss.device == "GPU"
    np.testing.assert_allclose(loss.asnumpy(), _reference(logits, seq, want), rtol=1e-5)
    cpu = P.CTCLoss()(*_args(logits, indices, values, seq))[1]
    np.testing.assert_allclose(grad.asnumpy(), cpu.asnumpy(), rtol=1e-5, atol=1e-6)
    traced = opforge.jit(lambda *a: P.CTCLoss()(*a))(*_args(logits, indices, values, seq, "GPU"))
    np.testing.assert_allclose(traced[0].asnumpy(), loss.asnumpy(), rtol=1e-5)


def test_ctc_loss_rejects_a_label_after_the_padding(rng):
    logits, indices, values, seq, _ = _padded(rng)
    values = values.copy()
    values[4] = 3  # row 1: 2, 3 (padding), 2
    values[5] = 2
    message = r"For 'CTCLoss', labels_values\[5\] = 2 \(batch 1, position 2\) follows the padding"
    with pytest.raises(KernelError, match=message):
        P.CTCLoss()(*_args(logits, indices, values, seq))
    with pytest.raises(KernelError, match=message):  # the kernel's rule: the same inside jit
        opforge.jit(lambda *a: P.CTCLoss()(*a))(*_args(logits, indices, values, seq))
    with pytest.raises(Exception, match=r"labels_values\[0\] must be in \[0, 3\)"):  # negative: no padding
        P.CTCLoss()(*_args(logits, indices, -np.ones_like(values), seq))


@pytest.mark.parametrize("merge", [True, False])
def test_ctc_loss_on_float16_logits_computes_in_float32(rng, merge):
    logits, indices, values, seq, _ = _padded(rng)
    half = logits.astype(np.float16)
    ctc = P.CTCLoss(ctc_merge_repeated=merge)
    loss, grad = ctc(*_args(half, indices, values, seq))
    assert loss.dtype == mstype.float16 and grad.dtype == mstype.float16
    ref_loss, ref_grad = ctc(*_args(half.astype(np.float32), indices, values, seq))
    np.testing.assert_array_equal(loss.asnumpy(), ref_loss.asnumpy().astype(np.float16))
    np.testing.assert_array_equal(grad.asnumpy(), ref_grad.asnumpy().astype(np.float16))
    x = Tensor(half)
    g = opforge.grad(lambda x: ctc(x, *_args(logits, indices, values, seq)[1:])[0].sum())(x)
    assert g.dtype == mstype.float16
    np.testing.assert_allclose(g.asnumpy(), ref_grad.asnumpy(), atol=1e-3)
    with pytest.raises(TypeError, match="For 'CTCLoss', the 'x' must be a Tensor of dtype"):
        ctc(*_args(logits.astype(np.int32), indices, values, seq))


def test_ctc_loss_padding_under_vmap_matches_each_element(rng):
    logits, indices, values, seq, _ = _padded(rng)
    stacked = np.stack([values, np.array([1, 3, 3, 0, 2, 3, 2, 2, 3], np.int32)])
    _, idx, _, lengths = _args(logits, indices, values, seq)
    x = Tensor(logits)
    got = opforge.vmap(lambda v: P.CTCLoss()(x, idx, v, lengths)[0])(Tensor(stacked)).asnumpy()
    for k in range(2):
        np.testing.assert_allclose(got[k], P.CTCLoss()(x, idx, Tensor(stacked[k]), lengths)[0].asnumpy(), rtol=1e-6)
