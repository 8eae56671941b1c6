"""``nn.CTCLoss``: MindSpore's cell over log-probabilities (PyTorch's argument order and reductions), computed by
the ``CTCLoss`` primitive (opforge/ops/functional_ctc.py)."""

from __future__ import annotations

from opforge import ops
from opforge.nn.loss import LossBase
from opforge.ops.functional_ctc import ctc_loss_per_sequence
from opforge.tensor import Tensor

__all__ = ["CTCLoss"]


class CTCLoss(LossBase):
    r"""``CTCLoss(blank=0, reduction='mean', zero_infinity=False)(log_probs, targets, input_lengths,
    target_lengths)``: :math:`loss_n = -\log p(targets_n | log\_probs_{:, n})` over every alignment of the
    target to the first ``input_lengths[n]`` frames (Graves et al., 2006). ``log_probs`` (T, N, C) or (T, C),
    log-softmax outputs, float32 or float64; ``targets`` (N, S) padded, or the targets concatenated (1-D);
    the lengths Tensors, tuples or ints. Reductions: "none" (N losses), "sum", "mean" (each loss divided by
    its target length, then the mean: PyTorch's). ``zero_infinity``: losses of impossible alignments (+inf)
    and their gradients become 0. The targets and lengths are read on the host."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction)
        if not isinstance(blank, int) or isinstance(blank, bool):
            raise TypeError(f"For 'CTCLoss', the 'blank' must be int, but got {type(blank).__name__}.")
        if not isinstance(zero_infinity, bool):
            raise TypeError(f"For 'CTCLoss', the 'zero_infinity' must be bool, but got {type(zero_infinity).__name__}.")
        self.blank, self.zero_infinity = blank, zero_infinity

    def construct(self, log_probs, targets, input_lengths, target_lengths):
        unbatched = isinstance(log_probs, Tensor) and log_probs.ndim == 2
        if unbatched:  # (T, C): one sequence
            log_probs = ops.expand_dims(log_probs, 1)
            targets = ops.reshape(targets, (1, -1)) if isinstance(targets, Tensor) else targets
        loss, lengths = ctc_loss_per_sequence(
            log_probs, targets, input_lengths, target_lengths, self.blank, self.zero_infinity
        )
        if self.reduction == "mean":  # each loss per target label first, as PyTorch's
            loss = ops.div(loss, Tensor(lengths.clip(1, None).astype(loss.dtype.np_dtype), device=loss.device))
        loss = self.get_loss(loss)
        return loss[0] if unbatched and self.reduction == "none" else loss
