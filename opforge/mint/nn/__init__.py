"""MindSpore's ``mindspore.mint.nn``: cells with PyTorch's names and arguments over opforge's ``nn``, and
``functional`` (opforge/mint/nn/functional.py)."""

from __future__ import annotations

import math

import numpy as np

from opforge import dtype as mstype
from opforge import nn as _nn
from opforge import ops
from opforge.mint.nn import functional
from opforge.mint.nn.functional import conv_padding
from opforge.nn.init import HeUniform, Normal, Uniform, initializer
from opforge.tensor import Parameter, Tensor

__all__ = [
    "functional", "Linear", "ReLU", "GELU", "SiLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Flatten",
    "Identity", "MSELoss", "L1Loss", "Dropout", "Conv2d", "MaxPool2d", "AvgPool2d", "BatchNorm2d", "LayerNorm",
    "GroupNorm", "Embedding", "SmoothL1Loss", "BCEWithLogitsLoss", "CrossEntropyLoss", "NLLLoss", "KLDivLoss",
    "Upsample",
]  # fmt: skip

Identity = _nn.Identity


def _default_inits(fan_in: int, weight_init, bias_init) -> tuple:
    """PyTorch's (and mint's) defaults: HeUniform(sqrt(5)) weights, a bias uniform in +-1/sqrt(fan_in)."""
    weight_init = HeUniform(math.sqrt(5)) if weight_init is None else weight_init
    return weight_init, Uniform(1 / math.sqrt(fan_in)) if bias_init is None else bias_init


def _parameters_in(cell, dtype) -> None:
    """The cell's own Parameters made in ``dtype`` (mint's ``dtype=``; None keeps float32)."""
    if dtype is None:
        return
    for name, p in list(cell._params.items()):
        if p is not None:
            setattr(cell, name, Parameter(p.astype(dtype), p.name, p.requires_grad))


class Linear(_nn.Dense):
    """``Linear(in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None)``: y = x @ W.T
    + b, ``weight`` [out_features, in_features], initialised as mint's (and PyTorch's): HeUniform(sqrt(5)) weights,
    a bias uniform in +-1/sqrt(in_features)."""

    def __init__(self, in_features, out_features, bias=True, weight_init=None, bias_init=None, dtype=None):
        weight_init, bias_init = _default_inits(in_features, weight_init, bias_init)
        super().__init__(in_features, out_features, weight_init, bias_init, has_bias=bias)
        _parameters_in(self, dtype)
        self.in_features, self.out_features = in_features, out_features


class Conv2d(_nn.Conv2d):
    """``Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode="zeros", dtype=None)``: ``padding`` an int, (pad_h, pad_w), "valid" or "same"; initialised as
    ``Linear`` (fan_in = in_channels / groups * kh * kw). ``padding_mode`` "zeros" only."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", dtype=None):  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f"For 'Conv2d', the 'padding_mode' {padding_mode!r} is not supported: only 'zeros'.")
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        weight_init, bias_init = _default_inits(in_channels // groups * kh * kw, None, None)
        pad_mode, pads = conv_padding(padding, stride)
        super().__init__(in_channels, out_channels, (kh, kw), stride, pad_mode, pads, dilation, groups, bias,
                         weight_init, bias_init)  # fmt: skip
        _parameters_in(self, dtype)


class MaxPool2d(_nn.Cell):
    """``MaxPool2d(kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False)``
    (``mint.nn.functional.max_pool2d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def construct(self, input):
        return functional.max_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices
        )


class AvgPool2d(_nn.Cell):
    """``AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
    divisor_override=None)`` (``mint.nn.functional.avg_pool2d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):  # fmt: skip
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.ceil_mode = kernel_size, stride, padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def construct(self, input):
        return functional.avg_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
            self.divisor_override,
        )  # fmt: skip


class BatchNorm2d(_nn.Cell):
    """``BatchNorm2d(num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, dtype=None)``:
    (x - mean) / sqrt(var + eps) * weight + bias over N, H, W, with the batch's statistics while training (the
    running ones updated with PyTorch's momentum: new = (1 - momentum) * running + momentum * batch, the variance
    unbiased) and the running ones in evaluation (the batch's without ``track_running_stats``). Its Parameters
    have mint's names: ``weight``, ``bias``, ``running_mean``, ``running_var``, ``num_batches_tracked``."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, dtype=None):
        super().__init__()
        if isinstance(momentum, bool) or not isinstance(momentum, (int, float)) or not 0 <= momentum <= 1:
            raise ValueError(f"For 'BatchNorm2d', the 'momentum' must be a float in [0, 1], but got {momentum!r}.")
        self.num_features, self.eps, self.momentum = num_features, float(eps), float(momentum)
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = mstype.float32 if dtype is None else dtype

        def filled(value, name, trainable=True):
            return Parameter(Tensor(np.full(num_features, value, np.float32)).astype(dtype), name, trainable)

        self.weight = filled(1.0, "weight", affine)
        self.bias = filled(0.0, "bias", affine)
        self.running_mean = filled(0.0, "running_mean", False)
        self.running_var = filled(1.0, "running_var", False)
        self.num_batches_tracked = Parameter(Tensor(0, mstype.int64), "num_batches_tracked", False)

    def construct(self, input):
        batch_statistics = self.training or not self.track_running_stats
        if self.training and self.track_running_stats:
            ops.assign_add(self.num_batches_tracked, Tensor(1, mstype.int64))
        return ops.batch_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias, batch_statistics, self.momentum,
            self.eps,
        )  # fmt: skip

    def extend_repr(self) -> str:
        return f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class _Unary(_nn.Cell):
    _fn = None

    def construct(self, input):
        return type(self)._fn(input)


class ReLU(_Unary):
    _fn = staticmethod(functional.relu)


class SiLU(_Unary):
    _fn = staticmethod(functional.silu)


class Sigmoid(_Unary):
    _fn = staticmethod(functional.sigmoid)


class Tanh(_Unary):
    _fn = staticmethod(functional.tanh)


class GELU(_nn.Cell):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def construct(self, input):
        return functional.gelu(input, self.approximate)


class _AlongDim(_nn.Cell):
    """A function of its input along ``dim`` (the last dim when None)."""

    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, input):
        return type(self)._fn(input, self.dim)


class Softmax(_AlongDim):
    _fn = staticmethod(functional.softmax)


class LogSoftmax(_AlongDim):
    _fn = staticmethod(functional.log_softmax)


class Flatten(_nn.Cell):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def construct(self, input):
        return functional.flatten(input, self.start_dim, self.end_dim)


class _Loss(_nn.Cell):
    """A loss of (input, target) with ``reduction`` "mean", "sum" or "none"."""

    _fn = None

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def construct(self, input, target):
        return type(self)._fn(input, target, self.reduction)


class MSELoss(_Loss):
    _fn = staticmethod(functional.mse_loss)


class L1Loss(_Loss):
    _fn = staticmethod(functional.l1_loss)


class Dropout(_nn.Cell):
    """Zeros each element with probability ``p`` while training (``set_train()``), scaling the rest."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p

    def construct(self, input):
        return functional.dropout(input, self.p, self.training)


def _filled(shape, value, name, dtype, trainable=True) -> Parameter:
    dtype = mstype.float32 if dtype is None else dtype
    return Parameter(Tensor(np.full(shape, value, np.float32)).astype(dtype), name, trainable)


class LayerNorm(_nn.Cell):
    """``LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None)``: over the trailing
    dims ``normalized_shape`` (an int or a tuple), (x - E[x]) / sqrt(Var[x] + eps) * weight + bias (biased
    variance), ``weight`` ones and ``bias`` zeros of shape ``normalized_shape`` (trainable with
    ``elementwise_affine``; no ``bias`` with bias=False)."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not shape or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in shape):
            raise ValueError(
                f"For 'LayerNorm', the 'normalized_shape' must be an int or a tuple of ints >= 1, but got "
                f"{normalized_shape!r}."
            )
        self.normalized_shape, self.eps, self.elementwise_affine = shape, float(eps), elementwise_affine
        self.weight = _filled(shape, 1.0, "weight", dtype, elementwise_affine) if elementwise_affine else None
        self.bias = _filled(shape, 0.0, "bias", dtype, elementwise_affine) if elementwise_affine and bias else None

    def construct(self, input):
        return functional.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extend_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class GroupNorm(_nn.Cell):
    """``GroupNorm(num_groups, num_channels, eps=1e-5, affine=True, dtype=None)``: the channels of [N, C, *] in
    ``num_groups`` groups, each normalised over its channels and the trailing dims, then a per-channel ``weight``
    (ones) and ``bias`` (zeros), trainable with ``affine``. ``num_groups`` must divide ``num_channels``."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=None):
        super().__init__()
        for arg, value in (("num_groups", num_groups), ("num_channels", num_channels)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"For 'GroupNorm', the '{arg}' must be an int >= 1, but got {value!r}.")
        if num_channels % num_groups:
            raise ValueError(
                f"For 'GroupNorm', the 'num_channels' ({num_channels}) must divide by 'num_groups' ({num_groups})."
            )
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, float(eps), affine
        self.weight = _filled(num_channels, 1.0, "weight", dtype, affine) if affine else None
        self.bias = _filled(num_channels, 0.0, "bias", dtype, affine) if affine else None

    def construct(self, input):
        return functional.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extend_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class Embedding(_nn.Cell):
    """``Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
    scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, dtype=None)``: the rows of ``weight``
    [num_embeddings, embedding_dim] that integer ids index (``mint.nn.functional.embedding``), ``weight`` drawn
    from N(0, 1) (PyTorch's) or ``_weight`` when given, not trained with ``_freeze``; the row ``padding_idx`` starts
    at zeros and gets no gradient. ``max_norm`` and ``scale_grad_by_freq`` raise ValueError; ``sparse`` changes
    nothing (the gradient is dense)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, dtype=None):  # fmt: skip
        super().__init__()
        for arg, value in (("num_embeddings", num_embeddings), ("embedding_dim", embedding_dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"For 'Embedding', the '{arg}' must be an int >= 1, but got {value!r}.")
        if max_norm is not None or scale_grad_by_freq:
            raise ValueError("For 'Embedding', 'max_norm' and 'scale_grad_by_freq' are not supported by opforge.")
        if padding_idx is not None and (
            isinstance(padding_idx, bool) or not isinstance(padding_idx, int)
            or not -num_embeddings <= padding_idx < num_embeddings
        ):  # fmt: skip
            raise ValueError(
                f"For 'Embedding', the 'padding_idx' must be an int in [{-num_embeddings}, {num_embeddings}), but "
                f"got {padding_idx!r}."
            )
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        shape = (num_embeddings, embedding_dim)
        if _weight is None:
            table = initializer(Normal(1.0), shape, mstype.float32 if dtype is None else dtype)
            if self.padding_idx is not None:
                data = table.asnumpy().copy()
                data[self.padding_idx] = 0
                table = Tensor(data)
        else:
            if tuple(_weight.shape) != shape:
                raise ValueError(f"For 'Embedding', the '_weight' must have shape {shape}, but got {_weight.shape}.")
            table = _weight if dtype is None else _weight.astype(dtype)
        self.weight = Parameter(table, "weight", not _freeze)

    def construct(self, input):
        return functional.embedding(input, self.weight, self.padding_idx)

    def extend_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}, padding_idx={self.padding_idx}"


class SmoothL1Loss(_nn.Cell):
    """``SmoothL1Loss(reduction="mean", beta=1.0)`` (``mint.nn.functional.smooth_l1_loss``)."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def construct(self, input, target):
        return functional.smooth_l1_loss(input, target, self.reduction, self.beta)


class BCEWithLogitsLoss(_nn.Cell):
    """``BCEWithLogitsLoss(weight=None, reduction="mean", pos_weight=None)``
    (``mint.nn.functional.binary_cross_entropy_with_logits``)."""

    def __init__(self, weight=None, reduction="mean", pos_weight=None):
        super().__init__()
        self.weight, self.reduction, self.pos_weight = weight, reduction, pos_weight

    def construct(self, input, target):
        return functional.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction, self.pos_weight)


class CrossEntropyLoss(_nn.Cell):
    """``CrossEntropyLoss(weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0)``: the cross
    entropy of ``softmax(input)`` along dim 1 and class indices or class probabilities
    (``mint.nn.functional.cross_entropy``)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction
        self.label_smoothing = label_smoothing

    def construct(self, input, target):
        return functional.cross_entropy(
            input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing
        )


class NLLLoss(_nn.Cell):
    """``NLLLoss(weight=None, ignore_index=-100, reduction="mean")`` (``mint.nn.functional.nll_loss``)."""

    def __init__(self, weight=None, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.weight, self.ignore_index, self.reduction = weight, ignore_index, reduction

    def construct(self, input, target):
        return functional.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class KLDivLoss(_nn.Cell):
    """``KLDivLoss(reduction="mean", log_target=False)`` (``mint.nn.functional.kl_div``)."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def construct(self, input, target):
        return functional.kl_div(input, target, self.reduction, self.log_target)


class Upsample(_nn.Cell):
    """``Upsample(size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None)``
    (``mint.nn.functional.interpolate``: "nearest", "linear", "bilinear")."""

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def construct(self, input):
        return functional.interpolate(
            input, self.size, self.scale_factor, self.mode, self.align_corners, self.recompute_scale_factor
        )
