"""The CTC loss of PyTorch-ordered inputs (``nn.CTCLoss``'s: log-probabilities [T, N, C], padded or
concatenated targets, a blank anywhere), computed by MindSpore's ``CTCLoss`` primitive: the classes are
reordered so the blank is last and the targets turned into its sparse labels (read on the host: their count
depends on the lengths). Its gradient with respect to ``log_probs`` is PyTorch's, ``exp(log_probs) - gamma``:
the gradient of the logits under a ``log_softmax``, which is how log-probabilities are made.

``ctc_loss`` is MindSpore's functional form (``ops.ctc_loss``): the reduced loss and the forward variables
``log_alpha`` of the recursion, computed on the host from the same inputs (they are a value, not
differentiated)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.primitives import ctc_ops
from opforge.tensor import Tensor

__all__ = ["ctc_loss_per_sequence", "ctc_loss"]

_ctc = ctc_ops.CTCLoss(False, True, True)  # labels longer than their frames: loss 0 here, +inf below


def _host_ints(name: str, value, what: str) -> np.ndarray:
    if isinstance(value, Tensor):
        if value.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For 'CTCLoss', the '{name}' must be int32 or int64, but got {value.dtype}.")
        return value.asnumpy().astype(np.int64).reshape(-1)
    if isinstance(value, (tuple, list)) or (isinstance(value, int) and not isinstance(value, bool)):
        return np.asarray(value, np.int64).reshape(-1)
    raise TypeError(f"For 'CTCLoss', the '{name}' must be {what}, but got {type(value).__name__}.")


def _sparse_labels(targets: np.ndarray, target_lengths: np.ndarray, batch: int, blank: int) -> tuple:
    """(indices [M, 2] int64, values [M] int32) of MindSpore's CTCLoss, classes above the blank shifted down,
    and each sequence's frames needed (a blank between equal neighbours). Vectorised: no loop per label."""
    rows = np.repeat(np.arange(batch), target_lengths)
    starts = np.cumsum(target_lengths) - target_lengths
    positions = np.arange(rows.size) - np.repeat(starts, target_lengths)
    if targets.ndim == 2:
        if np.any(target_lengths > targets.shape[1]):
            raise ValueError(
                f"For 'CTCLoss', the 'target_lengths' must be at most {targets.shape[1]} (S), but got "
                f"{target_lengths.tolist()}."
            )
        values = targets[rows, positions]
    else:
        values = targets[: rows.size]
    bad = (values == blank) | (values < 0)
    if bad.any():
        b = int(rows[np.flatnonzero(bad)[0]])
        raise ValueError(f"For 'CTCLoss', the targets of sequence {b} must be classes other than the blank {blank}.")
    repeats = (values[1:] == values[:-1]) & (rows[1:] == rows[:-1])
    needed = target_lengths + np.bincount(rows[1:][repeats], minlength=batch)
    indices = np.stack([rows, positions], axis=1).astype(np.int64)
    return indices, (values - (values > blank)).astype(np.int32), needed


def ctc_loss_per_sequence(log_probs, targets, input_lengths, target_lengths, blank: int, zero_infinity: bool):
    """``(loss [N], target_lengths [N] as a host array)``: -log p(target | log_probs) of each sequence."""
    if not isinstance(log_probs, Tensor) or not isinstance(targets, Tensor):
        raise TypeError("For 'CTCLoss', the 'log_probs' and 'targets' must be Tensors.")
    if log_probs.dtype not in (mstype.float32, mstype.float64):
        raise TypeError(f"For 'CTCLoss', the 'log_probs' must be float32 or float64, but got {log_probs.dtype}.")
    if log_probs.ndim != 3:
        raise ValueError(
            f"For 'CTCLoss', the 'log_probs' must be 3-D (T, N, C), but got shape {list(log_probs.shape)}."
        )
    time, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise ValueError(f"For 'CTCLoss', the 'blank' must be in [0, {classes}), but got {blank}.")
    lengths_in = _host_ints("input_lengths", input_lengths, "a Tensor, a tuple or an int")
    lengths_out = _host_ints("target_lengths", target_lengths, "a Tensor, a tuple or an int")
    lengths_in, lengths_out = (np.broadcast_to(v, (batch,)) if v.size == 1 else v for v in (lengths_in, lengths_out))
    if lengths_in.size != batch or lengths_out.size != batch:
        raise ValueError(f"For 'CTCLoss', the 'input_lengths' and 'target_lengths' must hold {batch} values (N).")
    if np.any(lengths_in > time) or np.any(lengths_in < 0):
        raise ValueError(
            f"For 'CTCLoss', the 'input_lengths' must be in [0, {time}] (T), but got {lengths_in.tolist()}."
        )
    indices, values, needed = _sparse_labels(targets.asnumpy(), lengths_out, batch, blank)
    order = [c for c in range(classes) if c != blank] + [blank]
    device = log_probs.device
    logits = F.gather(log_probs, Tensor(np.asarray(order, np.int32), device=device), 2)
    seq_len = Tensor(lengths_in.astype(np.int32), device=device)
    loss, _ = _ctc(logits, Tensor(indices, device=device), Tensor(values, device=device), seq_len)
    impossible = needed > lengths_in  # no alignment: +inf, as PyTorch's (the kernel gave 0 and a zero gradient)
    if impossible.any():
        loss = F.add(loss, Tensor(np.where(impossible, np.inf, 0.0).astype(loss.dtype.np_dtype), device=device))
    if zero_infinity:
        loss = F.select(FX.isinf(loss), F.zeros_like(loss), loss)
    return loss, lengths_out


def _reduced(loss, lengths: np.ndarray, reduction: str):
    """ "none", "sum", or "mean": each loss divided by its target length (at least 1), then the mean."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return F.reduce_sum_op(False)(loss, ())
    lengths = Tensor(lengths.clip(1, None).astype(loss.dtype.np_dtype), device=loss.device)
    return F.reduce_mean_op(False)(F.div(loss, lengths), ())


def _log_alpha(log_probs: np.ndarray, targets: np.ndarray, lengths_in: np.ndarray, lengths_out: np.ndarray, blank: int):
    """The forward variables [N, T, 2S + 1] over the blank-interleaved targets l' (S = targets' columns):
    alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] where l'[s] is a label unlike
    l'[s-2]) + log_probs[t, l'[s]], from alpha[0, 0] and alpha[0, 1]; -inf past each sequence's frames and
    2 target_length + 1 states."""
    time, batch, _ = log_probs.shape
    states = 2 * targets.shape[1] + 1
    ext = np.full((batch, states), blank, np.int64)
    ext[:, 1::2] = targets
    skip = np.zeros((batch, states), bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid = np.arange(states)[None, :] < (2 * lengths_out[:, None] + 1)
    emit = np.take_along_axis(log_probs.transpose(1, 0, 2), ext[:, None, :], axis=2)  # [N, T, states]
    out = np.full((batch, time, states), -np.inf)
    alpha = np.full((batch, states), -np.inf)
    alpha[:, :2] = emit[:, 0, :2]
    alpha = np.where(valid, alpha, -np.inf)
    for t in range(time):
        if t:
            prev = np.stack(
                [
                    alpha,
                    np.pad(alpha, ((0, 0), (1, 0)), constant_values=-np.inf)[:, :-1],
                    np.where(skip, np.pad(alpha, ((0, 0), (2, 0)), constant_values=-np.inf)[:, :-2], -np.inf),
                ]
            )
            top = prev.max(0)
            safe = np.where(np.isfinite(top), top, 0.0)
            with np.errstate(divide="ignore"):
                alpha = np.log(np.exp(prev - safe).sum(0)) + safe + emit[:, t]
            alpha = np.where(valid & np.isfinite(top), alpha, -np.inf)
        out[:, t] = np.where((t < lengths_in)[:, None], alpha, -np.inf)
    return out


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    r"""MindSpore's ``ops.ctc_loss``: ``(loss, log_alpha)`` for log-probabilities (T, N, C) and padded targets
    (N, S): the loss of each sequence, -log p(target | log_probs) (Graves et al., 2006), reduced by
    ``reduction`` ("none", "sum", or "mean": each loss over its target length, then the mean); ``log_alpha``
    [N, T, 2S + 1] the recursion's forward variables (-inf where unreachable), in log_probs' dtype.
    ``zero_infinity``: impossible alignments' losses (+inf) and gradients become 0. dtypes: float32, float64;
    the loss differentiates (PyTorch's gradient), ``log_alpha`` is a value."""
    if reduction not in ("none", "sum", "mean"):
        raise ValueError(f"For 'ctc_loss', the 'reduction' must be 'none', 'sum' or 'mean', but got {reduction!r}.")
    if isinstance(targets, Tensor) and targets.ndim != 2:
        raise ValueError(f"For 'ctc_loss', the 'targets' must be 2-D (N, S), but got shape {list(targets.shape)}.")
    loss, lengths_out = ctc_loss_per_sequence(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity)
    time, batch, _ = log_probs.shape
    lengths_in = _host_ints("input_lengths", input_lengths, "a Tensor, a tuple or an int")
    lengths_in = np.broadcast_to(lengths_in, (batch,)) if lengths_in.size == 1 else lengths_in
    alpha = _log_alpha(log_probs.asnumpy().astype(np.float64), targets.asnumpy().astype(np.int64), lengths_in,
                       lengths_out, blank)  # fmt: skip
    log_alpha = Tensor(alpha.astype(log_probs.dtype.np_dtype), device=log_probs.device)
    return _reduced(loss, lengths_out, reduction), log_alpha
