"""MindSpore's ``mindspore.mint.nn.functional``: activations, losses and layers' functions with PyTorch's
arguments, over opforge's operators (opforge/mint/__init__.py says which part of mint is here)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.tensor import Tensor

__all__ = [
    "relu", "gelu", "silu", "sigmoid", "tanh", "leaky_relu", "elu", "softmax", "log_softmax", "linear",
    "dropout", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "binary_cross_entropy_with_logits",
    "layer_norm", "one_hot", "flatten", "embedding", "pad", "conv2d", "max_pool2d", "avg_pool2d",
    "smooth_l1_loss", "kl_div", "group_norm", "interpolate",
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
    """The rows of ``weight`` [num_embeddings, embedding_dim] that the integer ``input`` indexes: ``input.shape +
    (embedding_dim,)``. The row ``padding_idx`` (when given; negative counts from the end) is looked up as it is
    but gets no gradient, as PyTorch's. ``max_norm`` and ``scale_grad_by_freq`` are not supported (ValueError)."""
    if max_norm is not None or scale_grad_by_freq:
        raise ValueError("For 'embedding', 'max_norm' and 'scale_grad_by_freq' are not supported by opforge.")
    if padding_idx is not None:
        rows = weight.shape[0]
        if isinstance(padding_idx, bool) or not isinstance(padding_idx, int) or not -rows <= padding_idx < rows:
            raise ValueError(
                f"For 'embedding', the 'padding_idx' must be an int in [{-rows}, {rows}), but got {padding_idx!r}."
            )
        keep = np.ones((rows, 1), np.float32)
        keep[padding_idx] = 0
        keep = ops.cast(Tensor(keep), weight.dtype)
        # the same values, the padding row's through stop_gradient: its gradient is 0
        weight = weight * keep + ops.stop_gradient(weight) * (1 - keep)
    return ops.gather(weight, input, 0)


def pad(input, pad, mode="constant", value=None):
    return ops.pad(input, pad, mode, value)


def _pair(value) -> tuple:
    return (value, value) if isinstance(value, int) else tuple(value)


def conv_padding(padding, stride=1) -> tuple:
    """(pad_mode, pads) of mint's ``padding`` ("valid", "same", an int or (pad_h, pad_w)): pads 0 for the named
    modes, else (top, bottom, left, right). "same" needs stride 1, as PyTorch's."""
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"For 'conv2d', the 'padding' must be 'valid', 'same', an int or a pair, got {padding!r}.")
        if padding == "same" and _pair(stride) != (1, 1):
            raise ValueError(f"For 'conv2d', padding='same' needs stride 1, but got stride {stride}.")
        return padding, 0
    ph, pw = _pair(padding)
    return ("pad", (ph, ph, pw, pw)) if ph or pw else ("valid", 0)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The 2-D convolution of ``input`` [N, C, H, W] with ``weight`` [O, C / groups, kh, kw] (+ ``bias``)."""
    pad_mode, pads = conv_padding(padding, stride)
    return ops.conv2d(input, weight, bias, stride, pad_mode, pads, dilation, groups)


def _pooled(input, kernel_size, stride, padding, fill):
    """The input padded by ``padding`` (an int or a pair) with ``fill``, and the (kernel, stride) pairs."""
    kernel = _pair(kernel_size)
    stride = kernel if stride is None else _pair(stride)
    ph, pw = _pair(padding)
    if ph > kernel[0] // 2 or pw > kernel[1] // 2:
        raise ValueError(f"For the pooling, the 'padding' {padding} must be at most half the kernel {kernel}.")
    return (ops.pad(input, (pw, pw, ph, ph), value=fill) if ph or pw else input), kernel, stride


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The maximum of each window (``stride`` the kernel by default; the padding never wins: -inf)."""
    if dilation not in (1, (1, 1)) or ceil_mode or return_indices:
        raise ValueError(
            "For 'max_pool2d', 'dilation' other than 1, 'ceil_mode' and 'return_indices' are not supported."
        )
    x, kernel, stride = _pooled(input, kernel_size, stride, padding, float("-inf"))
    return ops.max_pool2d(x, kernel, stride)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):  # fmt: skip
    """The mean of each window (``stride`` the kernel by default; zero padding counted, PyTorch's default)."""
    if ceil_mode or divisor_override is not None or (not count_include_pad and padding not in (0, (0, 0))):
        raise ValueError(
            "For 'avg_pool2d', 'ceil_mode', 'divisor_override' and count_include_pad=False with padding are not "
            "supported."
        )
    x, kernel, stride = _pooled(input, kernel_size, stride, padding, 0.0)
    return ops.avg_pool2d(x, kernel, stride)


_REDUCTIONS = ("none", "mean", "sum")


def _reduced(name: str, loss, reduction: str, batchmean: bool = False):
    """``loss`` reduced by ``reduction``: "none", "mean", "sum" (and "batchmean" where ``batchmean``)."""
    allowed = _REDUCTIONS + (("batchmean",) if batchmean else ())
    if reduction not in allowed:
        raise ValueError(f"For '{name}', the 'reduction' must be one of {allowed}, but got {reduction!r}.")
    if reduction == "none":
        return loss
    if reduction == "mean":
        return ops.mean(loss)
    total = ops.sum(loss)
    return total if reduction == "sum" else total / (loss.shape[0] if loss.ndim else 1)


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    r"""The smooth L1 loss of d = input - target: :math:`0.5 d^2 / \beta` where :math:`|d| < \beta`, else
    :math:`|d| - 0.5 \beta`; ``beta`` >= 0 (0: the L1 loss), ``reduction`` "mean" (mint's default), "sum" or
    "none". float16, float32, float64 (the SmoothL1Loss primitive)."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or beta < 0:
        raise ValueError(f"For 'smooth_l1_loss', the 'beta' must be a number >= 0, but got {beta!r}.")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"For 'smooth_l1_loss', the 'reduction' must be one of {_REDUCTIONS}, but got {reduction!r}.")
    if beta == 0:
        return ops.l1_loss(input, target, reduction)
    return ops.smooth_l1_loss(input, target, float(beta), reduction)


def kl_div(input, target, reduction="mean", log_target=False):
    r"""The Kullback-Leibler divergence of the log-probabilities ``input`` from ``target`` (broadcast together):
    :math:`l = y (\log y - x)` (0 where y = 0), or with ``log_target`` (``target`` given as log y)
    :math:`l = e^{y} (y - x)`; ``reduction`` "mean" (over every element, the default), "batchmean" (the sum over
    the size of dim 0: the divergence's definition), "sum" or "none". Xlogy, Exp, Mul and the reductions:
    float16, float32, float64."""
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        loss = ops.xlogy(target, target) - target * input
    return _reduced("kl_div", loss, reduction, batchmean=True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    r"""The C channels of ``input`` [N, C, *] in ``num_groups`` groups, each normalised over its channels and the
    trailing dims: :math:`(x - E[x]) / \sqrt{Var[x] + \epsilon} \cdot weight_c + bias_c` (biased variance;
    ``weight`` and ``bias`` [C], ones and zeros when None). ``num_groups`` must divide C (ValueError)."""
    return ops.group_norm(input, num_groups, weight, bias, eps)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
    """``input`` [N, C, *spatial] resized to ``size`` (or by ``scale_factor``: out = floor(in * scale)), with
    ``mode`` "nearest" (1 to 3 spatial dims; output d reads floor(d * in / out), or floor(d / scale) with a
    ``scale_factor``), "linear" ([N, C, W]) or "bilinear" ([N, C, H, W]; half-pixel centres, or the corners
    aligned with ``align_corners=True``). Other modes raise ValueError. With "linear"/"bilinear" and a
    ``scale_factor`` whose out = in * scale is not a whole number, the source coordinates use in / out (as
    ``recompute_scale_factor=True`` does in PyTorch). float16, float32, float64."""
    return ops.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor)
