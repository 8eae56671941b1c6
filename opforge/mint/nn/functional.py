"""MindSpore's ``mindspore.mint.nn.functional``: activations, losses and layers' functions with PyTorch's
arguments, over opforge's operators (opforge/mint/__init__.py says which part of mint is here)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.tensor import Tensor

__all__ = [
    "relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "elu", "softmax", "log_softmax", "linear",
    "dropout", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy_with_logits",
    "layer_norm", "one_hot", "flatten", "embedding", "pad",
]  # fmt: skip

sigmoid, tanh = ops.sigmoid, ops.tanh


def relu(input, inplace=False):
    """max(input, 0) (``inplace`` is kept: a new Tensor either way)."""
    return ops.relu(input)


def gelu(input, approximate="none"):
    """x * Phi(x); ``approximate="tanh"`` the tanh approximation (mint's default: the exact erf form)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"For 'gelu', the 'approximate' must be 'none' or 'tanh', but got {approximate!r}.")
    return ops.gelu(input, approximate)


def silu(input, inplace=False):
    return ops.silu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return ops.leaky_relu(input, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    return ops.elu(input, alpha)


def _along(fn, input, dim, dtype):
    x = input if dtype is None else ops.cast(input, dtype)
    return fn(x, -1 if dim is None else dim)


def softmax(input, dim=None, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim`` (the last dim when None), in ``dtype`` when given."""
    return _along(ops.softmax, input, dim, dtype)


def log_softmax(input, dim=None, dtype=None):
    return _along(ops.log_softmax, input, dim, dtype)


def linear(input, weight, bias=None):
    """input @ weight.T + bias (``weight`` [out_features, in_features])."""
    out = ops.matmul(input, ops.swapaxes(weight, 0, 1))
    return out if bias is None else out + bias


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeros each element with probability ``p`` and scales the others by 1 / (1 - p) while ``training``."""
    return ops.dropout(input, p, training)


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    return ops.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    return ops.nll_loss(input, target, weight, ignore_index, reduction)


def mse_loss(input, target, reduction="mean"):
    return ops.mse_loss(input, target, reduction)


def l1_loss(input, target, reduction="mean"):
    return ops.l1_loss(input, target, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):
    return ops.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


def one_hot(tensor, num_classes=-1):
    """int64 one-hot rows of ``tensor``'s classes (``num_classes`` -1: the largest class + 1, read on the host)."""
    if num_classes == -1:
        num_classes = int(ops.max(tensor)[0].asnumpy()) + 1
    return ops.one_hot(tensor, num_classes, Tensor(1, mstype.int64), Tensor(0, mstype.int64))


def flatten(input, start_dim=1, end_dim=-1):
    return ops.flatten(input, start_dim=start_dim, end_dim=end_dim)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False):
    """The rows of ``weight`` that ``input`` indexes (``max_norm`` and ``scale_grad_by_freq`` not supported)."""
    if max_norm is not None or scale_grad_by_freq:
        raise ValueError("For 'embedding', 'max_norm' and 'scale_grad_by_freq' are not supported by opforge.")
    return ops.gather(weight, input, 0)


def pad(input, pad, mode="constant", value=None):
    return ops.pad(input, pad, mode, value)
