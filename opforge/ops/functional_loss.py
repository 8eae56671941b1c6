r"""The functional losses MindSpore composes of primitives: ``cross_entropy``, ``nll_loss``,
``binary_cross_entropy``, ``kl_div`` and ``cosine_embedding_loss`` (re-exported by ``opforge.ops.functional``).
Each is built from primitives with bprops (LogSoftmax, OneHot, Mul, ReduceSum, Log, Maximum, Sqrt,
Select...), so it differentiates and runs under ``jit``; ``nn.CrossEntropyLoss``, ``nn.BCELoss``,
``nn.KLDivLoss`` and ``nn.CosineEmbeddingLoss`` call them.
"""

from __future__ import annotations

import functools

from opforge import dtype as mstype
from opforge.primitives import array_ops, math_ops, nn_ops
from opforge.tensor import Tensor

__all__ = ["cross_entropy", "nll_loss", "binary_cross_entropy", "kl_div", "cosine_embedding_loss"]

_add = math_ops.Add()
_sub = math_ops.Sub()
_mul = math_ops.Mul()
_div = math_ops.RealDiv()
_neg = math_ops.Neg()
_log = math_ops.Log()
_maximum = math_ops.Maximum()
_not_equal = math_ops.NotEqual()
_greater = math_ops.Greater()
_equal = math_ops.Equal()
_sqrt = math_ops.Sqrt()
_square = math_ops.Square()
_cast = array_ops.Cast()
_reshape = array_ops.Reshape()
_select = array_ops.Select()
_ones_like = array_ops.OnesLike()
_zeros_like = array_ops.ZerosLike()
_sum_all = math_ops.ReduceSum()  # over the axes given at the call (() : all)
_mean_all = math_ops.ReduceMean()

_REDUCTIONS = ("none", "mean", "sum")
# The smallest probability BCE takes the log of (MindSpore's BinaryCrossEntropy kernels clamp the same way).
_BCE_EPSILON = 1e-12


@functools.cache
def _log_softmax(axis: int) -> nn_ops.LogSoftmax:
    return nn_ops.LogSoftmax(axis)


@functools.cache
def _one_hot(axis: int) -> array_ops.OneHot:
    return array_ops.OneHot(axis)


def _check_reduction(where: str, reduction, allowed=_REDUCTIONS) -> str:
    if reduction not in allowed:
        raise ValueError(f"For '{where}', the 'reduction' must be one of {allowed}, but got {reduction!r}.")
    return reduction


def _check_tensor(where: str, name: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{where}', the '{name}' must be a Tensor, but got {type(value).__name__}.")


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return _mean_all(loss, ())
    if reduction == "sum":
        return _sum_all(loss, ())
    return loss


def _reduce_in_float32(loss, reduction: str):
    """``_reduce``, a float16 loss summed in float32 and cast back (MindSpore's ``LossBase.get_loss``)."""
    if reduction != "none" and loss.dtype == mstype.float16:
        return _cast(_reduce(_cast(loss, mstype.float32), reduction), mstype.float16)
    return _reduce(loss, reduction)


def _class_weight(weight, inputs, class_dim: int):
    """The [C] class ``weight`` shaped to broadcast along ``class_dim`` of ``inputs`` (None: no weight)."""
    if weight is None:
        return None
    classes = inputs.shape[class_dim]
    if weight.ndim != 1 or weight.shape[0] != classes:
        raise ValueError(
            f"For 'cross_entropy', the 'weight' must be a 1-D Tensor of {classes} (the classes) elements, but got "
            f"shape {list(weight.shape)}."
        )
    if weight.dtype != inputs.dtype:
        weight = _cast(weight, inputs.dtype)
    return _reshape(weight, (classes,) + (1,) * (inputs.ndim - 1 - class_dim))


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    r"""MindSpore's ``ops.nll_loss``: the negative log likelihood of log-probabilities ``inputs`` (N, C) or
    (N, C, d1, ...) (or (C,)) at the class indices ``target`` (N) / (N, d1, ...) (int32 or int64):

    .. math::
        l_n = -w_{t_n} x_{n, t_n} \cdot 1\{t_n \ne ignore\_index\}

    "mean" divides the sum by :math:`\sum_n w_{t_n} 1\{t_n \ne ignore\_index\}`. With ``label_smoothing``
    :math:`\epsilon`, the loss is :math:`(1 - \epsilon) l + \frac{\epsilon}{C} s` with
    :math:`s_n = -\sum_c x_{n,c}` (unweighted, 0 where ignored; "mean" averages it over all N, as MindSpore).
    float16, float32, float64. Composed of OneHot, Mul and ReduceSum (a class index out of [0, C) gives 0).
    """
    where = "nll_loss"
    _check_tensor(where, "inputs", inputs)
    _check_tensor(where, "target", target)
    _check_reduction(where, reduction)
    if target.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{where}', the 'target' must be class indices (int32 or int64), but got {target.dtype}.")
    if inputs.ndim == 1:  # one sample: (C,) and a 0-d target
        loss = nll_loss(
            _reshape(inputs, (1, -1)), _reshape(target, (1,)), weight, ignore_index, reduction, label_smoothing
        )
        return _reshape(loss, ()) if reduction == "none" else loss
    class_dim = 1
    expected = inputs.shape[:1] + inputs.shape[2:]
    if tuple(target.shape) != tuple(expected):
        raise ValueError(
            f"For '{where}', the 'target' must have shape {list(expected)} (the 'inputs' {list(inputs.shape)} "
            f"without the class dim), but got {list(target.shape)}."
        )
    classes = inputs.shape[class_dim]
    dtype = inputs.dtype
    keep = _cast(_not_equal(target, ignore_index), dtype)  # 0 where ignored
    on, off = Tensor(1.0, dtype), Tensor(0.0, dtype)
    picked = _mul(_one_hot(class_dim)(target, classes, on, off), _reshape(keep, expected[:1] + (1,) + expected[1:]))
    w = _class_weight(weight, inputs, class_dim)
    if w is not None:
        picked_w = _mul(picked, w)
        loss_weights = _sum_all(picked_w, class_dim)
    else:
        picked_w, loss_weights = picked, keep
    loss = _neg(_sum_all(_mul(picked_w, inputs), class_dim))
    if reduction == "sum":
        loss = _sum_all(loss, ())
    elif reduction == "mean":
        loss = _div(_sum_all(loss, ()), _sum_all(loss_weights, ()))
    if not label_smoothing:
        return loss
    smooth = _mul(_neg(_sum_all(inputs, class_dim)), keep)
    smooth = _reduce(smooth, reduction)
    return _add(_mul(loss, 1.0 - label_smoothing), _mul(smooth, label_smoothing / classes))


def _soft_cross_entropy(log_probs, target, weight, reduction, label_smoothing, class_dim):
    """The loss of class-probability targets: :math:`l_n = -\\sum_c w_c y_{n,c} \\log p_{n,c}`."""
    classes = log_probs.shape[class_dim]
    if label_smoothing:
        target = _add(_mul(target, 1.0 - label_smoothing), label_smoothing / classes)
    product = _mul(log_probs, target)
    w = _class_weight(weight, log_probs, class_dim)
    if w is not None:
        product = _mul(product, w)
    if reduction == "sum":
        return _neg(_sum_all(product, ()))
    if reduction == "mean":  # averaged over the samples (every element but the class dim)
        samples = max(1, log_probs.size // classes)
        return _div(_neg(_sum_all(product, ())), float(samples))
    return _neg(_sum_all(product, class_dim))


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):  # noqa: A002
    r"""MindSpore's ``ops.cross_entropy``: the cross entropy of ``softmax(input)`` along the class dim (dim 1;
    dim 0 of a 1-D input) and ``target``, either

    - class indices (int32/int64, the input's shape without the class dim): ``nll_loss(log_softmax(input),
      target, weight, ignore_index, reduction, label_smoothing)``, or
    - class probabilities (the input's shape and dtype): :math:`l_n = -\sum_c w_c y_{n,c} \log p_{n,c}`, the
      targets smoothed to :math:`y (1 - \epsilon) + \epsilon / C` first; "mean" divides by the number of samples.

    ``weight`` a [C] class weight (None: ones); ``reduction`` "none", "mean" (default) or "sum";
    ``label_smoothing`` in [0, 1]. float16, float32, float64.
    """
    where = "cross_entropy"
    _check_tensor(where, "input", input)
    _check_tensor(where, "target", target)
    _check_reduction(where, reduction)
    if not isinstance(label_smoothing, (int, float)) or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"For '{where}', the 'label_smoothing' must be a float in [0, 1], but got {label_smoothing}.")
    class_dim = 0 if input.ndim == 1 else 1
    log_probs = _log_softmax(class_dim)(input)
    if input.dtype == target.dtype:
        if tuple(target.shape) != tuple(input.shape):
            raise ValueError(
                f"For '{where}', class-probability 'target' must have the 'input' shape {list(input.shape)}, but "
                f"got {list(target.shape)}."
            )
        return _soft_cross_entropy(log_probs, target, weight, reduction, float(label_smoothing), class_dim)
    return nll_loss(log_probs, target, weight, ignore_index, reduction, float(label_smoothing))


def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    r"""MindSpore's ``ops.binary_cross_entropy``: for probabilities ``logits`` in (0, 1) and ``labels`` of the
    same shape,

    .. math::
        l_i = -w_i (y_i \log x_i + (1 - y_i) \log(1 - x_i))

    with each log's argument clamped to at least 1e-12; ``weight`` broadcasts to ``logits`` (None: ones);
    ``reduction`` "none", "mean" (default) or "sum". float16, float32, float64.
    """
    where = "binary_cross_entropy"
    _check_tensor(where, "logits", logits)
    _check_tensor(where, "labels", labels)
    _check_reduction(where, reduction)
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(
            f"For '{where}', the 'labels' must have the 'logits' shape {list(logits.shape)}, but got "
            f"{list(labels.shape)}."
        )
    log_x = _log(_maximum(logits, _BCE_EPSILON))
    log_1mx = _log(_maximum(_sub(1.0, logits), _BCE_EPSILON))
    loss = _neg(_add(_mul(labels, log_x), _mul(_sub(1.0, labels), log_1mx)))
    if weight is not None:
        loss = _mul(loss, weight)
    return _reduce(loss, reduction)


def kl_div(logits, labels, reduction="mean"):
    r"""MindSpore's ``ops.kl_div``: the Kullback-Leibler divergence of log-probabilities ``logits`` from the
    probabilities ``labels`` (same shape):

    .. math::
        l_i = y_i (\log y_i - x_i)

    (0 where :math:`y_i = 0`); ``reduction`` "none", "mean" (over all elements, the default), "sum" or
    "batchmean" (the sum divided by the batch size, dim 0). float16, float32, float64.
    """
    where = "kl_div"
    _check_tensor(where, "logits", logits)
    _check_tensor(where, "labels", labels)
    _check_reduction(where, reduction, _REDUCTIONS + ("batchmean",))
    if tuple(labels.shape) != tuple(logits.shape):
        raise ValueError(
            f"For '{where}', the 'labels' must have the 'logits' shape {list(logits.shape)}, but got "
            f"{list(labels.shape)}."
        )
    positive = _greater(labels, 0.0)
    # log(y) where y > 0 and log(1) = 0 elsewhere, so y * log(y) is 0 at y = 0 with a finite gradient.
    log_labels = _log(_select(positive, labels, _ones_like(labels)))
    loss = _mul(labels, _sub(log_labels, logits))
    if reduction == "batchmean":
        batch = logits.shape[0] if logits.ndim else 1
        return _div(_sum_all(loss, ()), float(batch))
    return _reduce(loss, reduction)


_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


def _check_margin(where: str, margin, allow_int: bool) -> float:
    """``margin`` as a float in [-1, 1]; an int is taken only where MindSpore takes one (the functional form)."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float) if allow_int else float):
        raise TypeError(f"For '{where}', the 'margin' must be a float, but got {type(margin).__name__}.")
    margin = float(margin)
    if not -1.0 <= margin <= 1.0:
        raise ValueError(f"For '{where}', the 'margin' must be in [-1.0, 1.0], but got {margin}.")
    return margin


def _cosine_embedding(where: str, names: tuple, x1, x2, target, margin: float, reduction: str, hint: str = ""):
    """The cosine embedding loss of ``nn.CosineEmbeddingLoss`` and ``ops.cosine_embedding_loss``; ``names`` are
    their names for the three inputs (the two forms call them differently)."""
    n1, n2, nt = names
    for name, value in zip(names, (x1, x2, target)):
        _check_tensor(where, name, value)
    _check_reduction(where, reduction)
    if x1.dtype != x2.dtype:
        raise TypeError(
            f"For '{where}', the '{n1}' and '{n2}' must have the same dtype, but got {x1.dtype} and {x2.dtype}."
        )
    if x1.dtype not in _FLOATS:
        raise TypeError(f"For '{where}', the '{n1}' must be float16, float32 or float64{hint}, but got {x1.dtype}.")
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(
            f"For '{where}', the '{n1}' and '{n2}' must have the same shape, but got {list(x1.shape)} and "
            f"{list(x2.shape)}."
        )
    if x1.ndim < 2:
        raise ValueError(
            f"For '{where}', the '{n1}' must have at least 2 dims (N, D, ...): the cosine is taken over dim 1, but "
            f"got shape {list(x1.shape)}."
        )
    expected = tuple(x1.shape[:1]) + tuple(x1.shape[2:])
    if tuple(target.shape) != expected:
        raise ValueError(
            f"For '{where}', the '{nt}' must have shape {list(expected)} (the '{n1}' shape {list(x1.shape)} without "
            f"dim 1), but got {list(target.shape)}."
        )
    if target.dtype == mstype.bool_ or target.dtype not in mstype.number_type:
        raise TypeError(f"For '{where}', the '{nt}' must hold 1 or -1 as numbers, but got dtype {target.dtype}.")
    prod_sum = _sum_all(_mul(x1, x2), 1)
    norms = _mul(_sqrt(_sum_all(_square(x1), 1)), _sqrt(_sum_all(_square(x2), 1)))
    cosine = _div(prod_sum, norms)
    zeros = _zeros_like(cosine)
    positive = _select(_equal(target, 1), _sub(1.0, cosine), zeros)
    negative = _select(_equal(target, -1), _maximum(_sub(cosine, margin), 0.0), zeros)
    return _reduce_in_float32(_add(positive, negative), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    r"""MindSpore's ``ops.cosine_embedding_loss``: how far apart two batches of vectors point, for ``input1``
    and ``input2`` of one shape and dtype, (N, D) or (N, D, d1, ...) (the vectors along dim 1), and ``target``
    (N) or (N, d1, ...) of 1 (similar) or -1 (dissimilar):

    .. math::
        \cos = \frac{\sum_d x_{1,d} x_{2,d}}{\sqrt{\sum_d x_{1,d}^2} \sqrt{\sum_d x_{2,d}^2}}, \qquad
        l = \begin{cases} 1 - \cos, & y = 1 \\ \max(0, \cos - margin), & y = -1 \\ 0, & \text{otherwise}
        \end{cases}

    ``margin`` a float (or an int) in [-1, 1]; ``reduction`` "none" (the target's shape), "mean" (default) or
    "sum" (a float16 loss is reduced in float32). float16, float32, float64; int32 and int64 inputs are cast
    to float32 first, as MindSpore. A zero vector has no cosine: its loss is NaN, as MindSpore's.
    """
    where = "cosine_embedding_loss"
    margin = _check_margin(where, margin, allow_int=True)
    names = ("input1", "input2", "target")
    for name, value in zip(names, (input1, input2, target)):
        _check_tensor(where, name, value)
    if input1.dtype == input2.dtype and input1.dtype in (mstype.int32, mstype.int64):
        input1, input2 = _cast(input1, mstype.float32), _cast(input2, mstype.float32)
    hint = " (int32 and int64 are cast to float32)"
    return _cosine_embedding(where, names, input1, input2, target, margin, reduction, hint)
