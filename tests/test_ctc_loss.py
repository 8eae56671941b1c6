"""CTC: MindSpore's CTCLoss primitive and nn.CTCLoss (PyTorch-ordered inputs, any blank, reductions,
zero_infinity) against the sum over every alignment, PyTorch's ctc_loss where it is installed, and the GPU
(emulation) against the CPU. The sweep (tests/op_db_ctc.py) checks the primitive on every kernel."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ctc_nll_by_paths, softmax_rows
from op_db import OP_DB

import opforge
from opforge import Tensor, nn, ops


def test_the_reference_is_the_sum_over_alignments(rng):
    x = rng.uniform(-2, 2, size=(5, 2, 4))
    indices = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.int64)
    values, seq_len = np.array([1, 1, 2, 0], np.int32), np.array([5, 4], np.int32)
    loss, _ = ops.CTCLoss()(Tensor(x), Tensor(indices), Tensor(values), Tensor(seq_len))
    ref, _ = OP_DB["CTCLoss"].ref(ops.CTCLoss(), x, indices, values, seq_len)
    for b, (labels, steps) in enumerate([([1, 1], 5), ([2, 0], 4)]):
        expected = ctc_nll_by_paths(softmax_rows(x[:steps, b]), labels, 3)
        assert np.isclose(ref[b], expected, rtol=1e-12) and np.isclose(loss.asnumpy()[b], expected, rtol=1e-12)


@pytest.mark.parametrize("blank", [0, 2, 4])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nn_ctc_loss_sums_the_alignments(blank, reduction, rng):
    log_probs = np.log(softmax_rows(rng.uniform(-2, 2, size=(4, 2, 5))))
    targets = np.array([[1, 3], [3, 0]]) if blank != 0 else np.array([[1, 3], [3, 2]])
    targets[targets == blank] = (blank + 1) % 5
    lengths = np.array([2, 1])
    got = nn.CTCLoss(blank, reduction)(Tensor(log_probs), Tensor(targets.astype(np.int32)), (4, 3), (2, 1))
    per_seq = np.array(
        [
            ctc_nll_by_paths(np.exp(log_probs[:steps, b]), list(targets[b, : lengths[b]]), blank)
            for b, steps in [(0, 4), (1, 3)]
        ]
    )
    expected = {"none": per_seq, "sum": per_seq.sum(), "mean": (per_seq / lengths).mean()}[reduction]
    np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-12)


def test_concatenated_targets_unbatched_inputs_and_zero_infinity(rng):
    log_probs = np.log(softmax_rows(rng.uniform(-2, 2, size=(3, 2, 4))))
    padded = nn.CTCLoss(reduction="none")(
        Tensor(log_probs), Tensor(np.array([[1, 2], [3, 0]], np.int32)), (3, 3), (2, 1)
    )
    flat = nn.CTCLoss(reduction="none")(Tensor(log_probs), Tensor(np.array([1, 2, 3], np.int32)), (3, 3), (2, 1))
    np.testing.assert_allclose(flat.asnumpy(), padded.asnumpy())
    one = nn.CTCLoss(reduction="none")(Tensor(log_probs[:, 0]), Tensor(np.array([1, 2], np.int32)), 3, 2)
    assert np.isclose(one.asnumpy(), padded.asnumpy()[0])
    # Three equal labels need five frames: no alignment in three (+inf), or 0 with zero_infinity, no gradient.
    targets, lengths = Tensor(np.array([[1, 1, 1], [2, 0, 0]], np.int32)), (3, 1)
    inf = nn.CTCLoss(reduction="none")(Tensor(log_probs), targets, (3, 3), lengths)
    assert np.isinf(inf.asnumpy()[0]) and np.isfinite(inf.asnumpy()[1])

    def zeroed(lp):
        return nn.CTCLoss(reduction="sum", zero_infinity=True)(lp, targets, (3, 3), lengths)

    grad = opforge.grad(zeroed)(Tensor(log_probs)).asnumpy()
    assert np.isclose(zeroed(Tensor(log_probs)).asnumpy(), inf.asnumpy()[1]) and not grad[:, 0].any()


def test_matches_pytorch_values_and_gradients(rng):
    torch = pytest.importorskip("torch")
    log_probs = np.log(softmax_rows(rng.uniform(-2, 2, size=(7, 3, 5))))
    targets, in_len, tgt_len = np.array([[1, 2, 2], [3, 1, 4], [4, 4, 1]]), (7, 5, 6), (3, 2, 1)
    for blank in (0, 2):
        tg = np.where(targets == blank, (blank + 1) % 5, targets)
        leaf = torch.tensor(log_probs, requires_grad=True)
        expected = torch.nn.functional.ctc_loss(
            leaf, torch.tensor(tg), torch.tensor(in_len), torch.tensor(tgt_len), blank
        )
        expected.backward()

        def loss(lp, tg=tg, blank=blank):
            return nn.CTCLoss(blank)(lp, Tensor(tg.astype(np.int32)), in_len, tgt_len)

        np.testing.assert_allclose(loss(Tensor(log_probs)).asnumpy(), expected.item(), rtol=1e-12)
        np.testing.assert_allclose(opforge.grad(loss)(Tensor(log_probs)).asnumpy(), leaf.grad.numpy(), atol=1e-12)


def test_the_gpu_matches_the_cpu(rng):
    x = rng.uniform(-2, 2, size=(6, 3, 5))
    indices = np.array([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]], np.int64)
    values, seq_len = np.array([1, 1, 3, 0, 2, 0], np.int32), np.array([6, 2, 5], np.int32)
    args = (Tensor(indices), Tensor(values), Tensor(seq_len))
    cpu = ops.CTCLoss()(Tensor(x), *args)
    gpu = ops.CTCLoss()(Tensor(x, device="GPU"), *(a.to("GPU") for a in args))
    for c, g in zip(cpu, gpu):
        assert g.device == "GPU"
        np.testing.assert_allclose(g.asnumpy(), c.asnumpy(), rtol=1e-12, atol=1e-14)


def test_bad_inputs_name_the_argument():
    lp = Tensor(np.full((3, 1, 4), np.log(0.25)))
    with pytest.raises(ValueError, match="For 'CTCLoss', the 'blank' must be in \\[0, 4\\), but got 4"):
        nn.CTCLoss(blank=4)(lp, Tensor(np.array([[1]], np.int32)), 3, 1)
    with pytest.raises(ValueError, match="the targets of sequence 0 must be classes other than the blank 0"):
        nn.CTCLoss()(lp, Tensor(np.array([[0]], np.int32)), 3, 1)
    with pytest.raises(ValueError, match="'input_lengths' must be in \\[0, 3\\]"):
        nn.CTCLoss()(lp, Tensor(np.array([[1]], np.int32)), 4, 1)
    with pytest.raises(TypeError, match="'zero_infinity' must be bool"):
        nn.CTCLoss(zero_infinity=1)
    with pytest.raises(ValueError, match="'reduction' must be one of"):
        nn.CTCLoss(reduction="avg")
