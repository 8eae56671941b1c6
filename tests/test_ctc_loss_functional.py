"""MindSpore's ``ops.ctc_loss``: the reduced loss (against path enumeration and nn.CTCLoss) and its
``log_alpha`` (against the forward variables written out state by state in probabilities), the gradient
of the loss, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ctc_nll_by_paths

import opforge
from opforge import Tensor, nn, ops
from opforge.testing import numeric_grad


def _inputs(rng, time=5, batch=2, classes=3, width=2):
    logits = rng.standard_normal((time, batch, classes))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    targets = np.array([[1, 2], [2, 2]], np.int32)[:batch, :width]
    return log_probs, targets, np.array([5, 4], np.int32)[:batch], np.array([2, 1], np.int32)[:batch]


def _alpha_by_states(probs: np.ndarray, labels: list, blank: int, frames: int, width: int) -> np.ndarray:
    """The forward variables in probabilities, one state and frame at a time (Graves et al., 2006, eq. 6-7),
    as log; states past 2 * len(labels) + 1 and frames past ``frames`` stay -inf."""
    ext = [blank]
    for c in labels:
        ext += [c, blank]
    alpha = np.zeros((probs.shape[0], 2 * width + 1))
    alpha[0, 0] = probs[0, blank]
    if labels:
        alpha[0, 1] = probs[0, ext[1]]
    for t in range(1, frames):
        for s in range(len(ext)):
            total = alpha[t - 1, s] + (alpha[t - 1, s - 1] if s >= 1 else 0.0)
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                total += alpha[t - 1, s - 2]
            alpha[t, s] = total * probs[t, ext[s]]
    with np.errstate(divide="ignore"):
        return np.log(alpha)


def test_loss_and_log_alpha(rng):
    log_probs, targets, lengths_in, lengths_out = _inputs(rng)
    loss, log_alpha = ops.ctc_loss(
        Tensor(log_probs), Tensor(targets), Tensor(lengths_in), Tensor(lengths_out), reduction="none"
    )
    assert log_alpha.shape == (2, 5, 5) and log_alpha.dtype == opforge.float64
    for n in range(2):
        labels = targets[n, : lengths_out[n]].tolist()
        probs = np.exp(log_probs[:, n])
        expected = ctc_nll_by_paths(probs[: lengths_in[n]], labels, 0)
        np.testing.assert_allclose(loss.asnumpy()[n], expected, rtol=1e-10)
        alpha = _alpha_by_states(probs, labels, 0, lengths_in[n], targets.shape[1])
        np.testing.assert_allclose(log_alpha.asnumpy()[n], alpha, rtol=1e-10)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_reductions_match_nn_ctc_loss(reduction, rng):
    log_probs, targets, lengths_in, lengths_out = _inputs(rng, time=8, classes=4)
    args = (Tensor(log_probs.astype(np.float32)), Tensor(targets), Tensor(lengths_in), Tensor(lengths_out))
    loss, log_alpha = ops.ctc_loss(*args, reduction=reduction)
    np.testing.assert_allclose(loss.asnumpy(), nn.CTCLoss(reduction=reduction)(*args).asnumpy(), rtol=1e-6)
    assert log_alpha.dtype == opforge.float32


def test_loss_gradient(rng):
    log_probs, targets, lengths_in, lengths_out = _inputs(rng)

    def loss_of(lp):
        return ops.ctc_loss(lp, Tensor(targets), Tensor(lengths_in), Tensor(lengths_out))[0]

    got = opforge.grad(loss_of)(Tensor(log_probs)).asnumpy()

    def reference(lp):
        total = 0.0
        for n in range(2):
            probs = np.exp(lp[:, n])  # the loss of log-probabilities: its gradient as PyTorch's (logits' one)
            probs = probs / probs.sum(-1, keepdims=True)
            nll = ctc_nll_by_paths(probs[: lengths_in[n]], targets[n, : lengths_out[n]].tolist(), 0)
            total += nll / lengths_out[n]
        return total / 2

    np.testing.assert_allclose(got, numeric_grad(reference, log_probs), rtol=1e-5, atol=1e-8)


def test_zero_infinity_and_errors(rng):
    log_probs, targets, _, _ = _inputs(rng)
    impossible = (Tensor(log_probs), Tensor(np.array([[1, 1], [2, 2]], np.int32)), Tensor(np.array([2, 2], np.int32)))
    lengths_out = Tensor(np.array([2, 2], np.int32))
    loss, log_alpha = ops.ctc_loss(*impossible, lengths_out, reduction="none")
    assert np.isinf(loss.asnumpy()).all()  # "1 1" needs 3 frames
    assert np.isneginf(log_alpha.asnumpy()[:, 2:]).all()  # frames past the input lengths
    loss, _ = ops.ctc_loss(*impossible, lengths_out, reduction="none", zero_infinity=True)
    np.testing.assert_array_equal(loss.asnumpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="For 'ctc_loss', the 'reduction' must be"):
        ops.ctc_loss(*impossible, lengths_out, reduction="max")
    with pytest.raises(ValueError, match="For 'ctc_loss', the 'targets' must be 2-D"):
        ops.ctc_loss(impossible[0], Tensor(np.array([1, 2], np.int32)), impossible[2], lengths_out)
