"""The CTC loss of PyTorch-ordered inputs (``nn.CTCLoss``'s: log-probabilities [T, N, C], padded or
concatenated targets, a blank anywhere), computed by MindSpore's ``CTCLoss`` primitive: the classes are
reordered so the blank is last and the targets turned into its sparse labels (read on the host: their count
depends on the lengths). Its gradient with respect to ``log_probs`` is PyTorch's, ``exp(log_probs) - gamma``:
the gradient of the logits under a ``log_softmax``, which is how log-probabilities are made."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as FX
from opforge.primitives import ctc_ops
from opforge.tensor import Tensor

__all__ = ["ctc_loss_per_sequence"]

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
