r"""The functional losses MindSpore composes of primitives: ``cross_entropy``, ``nll_loss``,
``binary_cross_entropy``, ``kl_div``, ``cosine_embedding_loss``, ``l1_loss``, ``smooth_l1_loss``, ``huber_loss``,
``binary_cross_entropy_with_logits``, ``margin_ranking_loss``, ``triplet_margin_loss``, ``hinge_embedding_loss``,
``soft_margin_loss``, ``multi_margin_loss``, ``multilabel_margin_loss`` and ``gaussian_nll_loss`` (re-exported
by ``opforge.ops.functional``).
Each is built from primitives with bprops (LogSoftmax, OneHot, Mul, ReduceSum, Log, Maximum, Sqrt,
Select...), so it differentiates and runs under ``jit``; ``nn.CrossEntropyLoss``, ``nn.BCELoss``,
``nn.KLDivLoss`` and ``nn.CosineEmbeddingLoss`` call them.
"""

from __future__ import annotations

import functools

import numpy as np

from opforge import dtype as mstype
from opforge.primitives import array_ops, math_ops, nn_ops
from opforge.tensor import Tensor

__all__ = [
    "cross_entropy", "nll_loss", "binary_cross_entropy", "kl_div", "cosine_embedding_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "binary_cross_entropy_with_logits", "margin_ranking_loss",
    "triplet_margin_loss", "hinge_embedding_loss", "soft_margin_loss", "multi_margin_loss",
    "multilabel_margin_loss", "gaussian_nll_loss",
]  # fmt: skip

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


# -- Regression, margin and likelihood losses (MindSpore 2.x's ops.l1_loss ... ops.gaussian_nll_loss) ---------

_abs = math_ops.Abs()
_exp = math_ops.Exp()
_pow = math_ops.Pow()
_minimum = math_ops.Minimum()
_less = math_ops.Less()
_greater_equal = math_ops.GreaterEqual()
_cumprod = math_ops.CumProd()
_relu = nn_ops.ReLU()
_softplus = nn_ops.Softplus()
_expand_dims = array_ops.ExpandDims()
_bce_with_logits_none = nn_ops.BCEWithLogitsLoss("none")
_HALF_LOG_2PI = 0.9189385332046727  # 0.5 * log(2 * pi)


@functools.cache
def _smooth_l1(beta: float, reduction: str) -> nn_ops.SmoothL1Loss:
    return nn_ops.SmoothL1Loss(beta=beta, reduction=reduction)


def _check_float_dtype(where: str, name: str, value, dtypes=_FLOATS) -> None:
    if value.dtype not in dtypes:
        names = ", ".join(str(d).lower() for d in dtypes)
        raise TypeError(f"For '{where}', the '{name}' must be one of {names}, but got {value.dtype}.")


def _check_same_dtype(where: str, n1: str, x1, n2: str, x2) -> None:
    if x1.dtype != x2.dtype:
        raise TypeError(
            f"For '{where}', the '{n1}' and '{n2}' must have the same dtype, but got {x1.dtype} and {x2.dtype}."
        )


def _check_same_shape(where: str, n1: str, x1, n2: str, x2) -> None:
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(
            f"For '{where}', the '{n1}' and '{n2}' must have the same shape, but got {list(x1.shape)} and "
            f"{list(x2.shape)}."
        )


def _check_broadcast(where: str, n1: str, x1, n2: str, x2) -> tuple:
    try:
        return tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    except ValueError:
        raise ValueError(
            f"For '{where}', the '{n1}' shape {list(x1.shape)} and the '{n2}' shape {list(x2.shape)} must broadcast "
            f"to one shape."
        ) from None


def _check_number(where: str, name: str, value, types=(int, float), positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, types):
        kinds = " or ".join(t.__name__ for t in types)
        raise TypeError(f"For '{where}', the '{name}' must be {kinds}, but got {type(value).__name__}.")
    if positive and not value > 0:
        raise ValueError(f"For '{where}', the '{name}' must be > 0, but got {value}.")
    return float(value)


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _pair_inputs(where: str, names: tuple, x, y, same_shape: bool, same_dtype: bool = True):
    """Checks of the common (prediction, target) pair: Tensors of one float dtype (or, without ``same_dtype``, a
    float prediction and any target, promoted by the arithmetic), of one shape or broadcasting."""
    n1, n2 = names
    _check_tensor(where, n1, x)
    _check_tensor(where, n2, y)
    _check_float_dtype(where, n1, x)
    if same_dtype:
        _check_same_dtype(where, n1, x, n2, y)
    if same_shape:
        _check_same_shape(where, n1, x, n2, y)
    else:
        _check_broadcast(where, n1, x, n2, y)


def _l1(where: str, names: tuple, x, y, reduction: str, same_dtype: bool = True):
    _check_reduction(where, reduction)
    _pair_inputs(where, names, x, y, same_shape=False, same_dtype=same_dtype)
    return _reduce_in_float32(_abs(_sub(x, y)), reduction)


def l1_loss(input, target, reduction="mean"):  # noqa: A002 (MindSpore's name)
    r"""MindSpore's ``ops.l1_loss``: the mean absolute error :math:`l_i = |x_i - y_i|` of ``input`` and ``target``
    (one float dtype; shapes that broadcast), reduced by ``reduction``: "none" (the broadcast shape), "mean"
    (default) or "sum" (a float16 loss is reduced in float32). Sub and Abs. float16, float32, float64."""
    return _l1("l1_loss", ("input", "target"), input, target, reduction)


def smooth_l1_loss(input, target, beta=1.0, reduction="none"):  # noqa: A002
    r"""MindSpore's ``ops.smooth_l1_loss``: with :math:`d = x - y`,

    .. math::
        l_i = \begin{cases} 0.5 d_i^2 / \beta, & |d_i| < \beta \\ |d_i| - 0.5 \beta, & \text{otherwise} \end{cases}

    ``input`` and ``target`` of one float dtype and shape; ``beta`` a float > 0; ``reduction`` "none" (default,
    as MindSpore), "mean" or "sum". The SmoothL1Loss primitive (differentiated by SmoothL1LossGrad).
    float16, float32, float64."""
    where = "smooth_l1_loss"
    _check_reduction(where, reduction)
    beta = _check_number(where, "beta", beta, (float,), positive=True)
    _pair_inputs(where, ("input", "target"), input, target, same_shape=True)
    return _smooth_l1(beta, reduction)(input, target)


def _huber(where: str, names: tuple, x, y, reduction: str, delta):
    _check_reduction(where, reduction)
    delta = _check_number(where, "delta", delta, (int, float), positive=True)
    _pair_inputs(where, names, x, y, same_shape=False)
    d = _abs(_sub(x, y))
    q = _minimum(d, delta)  # |d| where |d| < delta, else delta: 0.5 q^2 + delta (|d| - q) is the loss either way
    loss = _add(_mul(_square(q), 0.5), _mul(_sub(d, q), delta))
    return _reduce_in_float32(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    r"""MindSpore's ``ops.huber_loss``: with :math:`d = x - y`,

    .. math::
        l_i = \begin{cases} 0.5 d_i^2, & |d_i| < \delta \\ \delta (|d_i| - 0.5 \delta), & \text{otherwise} \end{cases}

    ``input`` and ``target`` of one float dtype, shapes that broadcast; ``delta`` an int or float > 0;
    ``reduction`` "none" (the broadcast shape), "mean" (default) or "sum". Computed as
    :math:`0.5 q^2 + \delta (|d| - q)` with :math:`q = \min(|d|, \delta)` (Abs, Minimum, Mul, Add), which
    differentiates everywhere. float16, float32, float64."""
    return _huber("huber_loss", ("input", "target"), input, target, reduction, delta)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction="mean"):  # noqa: A002
    r"""MindSpore's ``ops.binary_cross_entropy_with_logits``: binary cross entropy of ``sigmoid(input)`` and the
    probabilities ``target`` (the input's shape and dtype),

    .. math::
        l_i = -w_i (p_i y_i \log \sigma(x_i) + (1 - y_i) \log(1 - \sigma(x_i)))

    computed stably by the BCEWithLogitsLoss primitive; ``weight`` :math:`w` and ``pos_weight`` :math:`p`
    (Tensors that broadcast to the input; None: ones); ``reduction`` "none", "mean" (default) or "sum".
    float16, float32, float64."""
    where = "binary_cross_entropy_with_logits"
    _check_reduction(where, reduction)
    _pair_inputs(where, ("input", "target"), input, target, same_shape=True)
    weights = []
    for name, value in (("weight", weight), ("pos_weight", pos_weight)):
        if value is None:
            value = _ones_like(input)
        else:
            _check_tensor(where, name, value)
            _check_broadcast(where, "input", input, name, value)
            if tuple(np.broadcast_shapes(tuple(input.shape), tuple(value.shape))) != tuple(input.shape):
                raise ValueError(
                    f"For '{where}', the '{name}' must broadcast to the 'input' shape {list(input.shape)}, but got "
                    f"{list(value.shape)}."
                )
            if value.dtype != input.dtype:
                value = _cast(value, input.dtype)
        weights.append(value)
    return _reduce_in_float32(_bce_with_logits_none(input, target, weights[0], weights[1]), reduction)


def _margin_ranking(where: str, x1, x2, target, margin, reduction: str):
    names = ("input1", "input2", "target")
    for name, value in zip(names, (x1, x2, target)):
        _check_tensor(where, name, value)
    _check_reduction(where, reduction)
    margin = _check_number(where, "margin", margin, (float,))
    _check_float_dtype(where, "input1", x1)
    _check_same_dtype(where, "input1", x1, "input2", x2)
    _check_same_dtype(where, "input1", x1, "target", target)
    _check_same_shape(where, "input1", x1, "input2", x2)
    _check_same_shape(where, "input1", x1, "target", target)
    loss = _relu(_add(_neg(_mul(target, _sub(x1, x2))), margin))
    return _reduce_in_float32(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    r"""MindSpore's ``ops.margin_ranking_loss``: for ``input1`` :math:`x_1`, ``input2`` :math:`x_2` and ``target``
    :math:`y` (1 or -1: which input should rank higher), all three of one shape and float dtype,

    .. math::
        l_i = \max(0, -y_i (x_{1,i} - x_{2,i}) + margin)

    ``margin`` a float (default 0.0); ``reduction`` "none" (the inputs' shape), "mean" (default) or "sum".
    Sub, Mul, Neg, ReLU. float16, float32, float64."""
    return _margin_ranking("margin_ranking_loss", input1, input2, target, margin, reduction)


def _p_distance(a, b, p: int, eps: float):
    """:math:`\\lVert a - b + eps \\rVert_p` over dim 1 (the vectors of (N, D, ...) inputs)."""
    d = _add(_sub(a, b), eps)
    if p == 2:
        return _sqrt(_sum_all(_square(d), 1))
    if p == 1:
        return _sum_all(_abs(d), 1)
    return _pow(_sum_all(_pow(_abs(d), float(p)), 1), 1.0 / p)


def _triplet_margin(where: str, names: tuple, anchor, positive, negative, margin, p, eps, swap, reduction):
    for name, value in zip(names, (anchor, positive, negative)):
        _check_tensor(where, name, value)
    _check_reduction(where, reduction)
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError(f"For '{where}', the 'p' must be an int, but got {type(p).__name__}.")
    if p < 1:
        raise ValueError(f"For '{where}', the 'p' (the norm of the distance) must be >= 1, but got {p}.")
    eps = _check_number(where, "eps", eps, (float,))
    _check_bool(where, "swap", swap)
    if isinstance(margin, Tensor):
        if margin.ndim != 0:
            raise ValueError(f"For '{where}', a Tensor 'margin' must be 0-d, but got shape {list(margin.shape)}.")
        if margin.dtype != anchor.dtype:
            margin = _cast(margin, anchor.dtype)
    else:
        margin = _check_number(where, "margin", margin, (int, float))
    a, pos, neg = names
    _check_float_dtype(where, a, anchor)
    for name, value in ((pos, positive), (neg, negative)):
        _check_same_dtype(where, a, anchor, name, value)
        _check_same_shape(where, a, anchor, name, value)
    if anchor.ndim < 2:
        raise ValueError(
            f"For '{where}', the '{a}' must have at least 2 dims (N, D, ...): the distance is taken over dim 1, but "
            f"got shape {list(anchor.shape)}."
        )
    d_pos = _p_distance(anchor, positive, p, eps)
    d_neg = _p_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _minimum(d_neg, _p_distance(positive, negative, p, eps))
    loss = _relu(_add(_sub(d_pos, d_neg), margin))
    return _reduce_in_float32(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction="mean"):
    r"""MindSpore's ``ops.triplet_margin_loss``: for ``anchor`` :math:`a`, ``positive`` :math:`p` and ``negative``
    :math:`n` of one shape (N, D) or (N, D, d1, ...) and float dtype (vectors along dim 1),

    .. math::
        l_i = \max(d(a_i, p_i) - d(a_i, n_i) + margin, 0), \qquad d(x, y) = \lVert x - y + eps \rVert_p

    With ``swap``, :math:`d(a_i, n_i)` is replaced by :math:`\min(d(a_i, n_i), d(p_i, n_i))` (Balntas et al.'s
    distance swap). ``margin`` a float (or an int, or a 0-d Tensor), default 1.0; ``p`` an int >= 1 (default 2);
    ``eps`` a float (default 1e-6); ``reduction`` "none" (shape (N) or (N, d1, ...)), "mean" (default) or "sum".
    Sub, Abs/Square, Pow/Sqrt, ReduceSum, Minimum, ReLU. float16, float32, float64."""
    names = ("anchor", "positive", "negative")
    return _triplet_margin("triplet_margin_loss", names, anchor, positive, negative, margin, p, eps, swap, reduction)


def _hinge_embedding(where: str, names: tuple, x, y, margin, reduction: str):
    n1, n2 = names
    _check_tensor(where, n1, x)
    _check_tensor(where, n2, y)
    _check_reduction(where, reduction)
    margin = _check_number(where, "margin", margin, (int, float))
    _check_float_dtype(where, n1, x)
    if y.dtype == mstype.bool_ or y.dtype not in mstype.number_type:
        raise TypeError(f"For '{where}', the '{n2}' must hold 1 or -1 as numbers, but got dtype {y.dtype}.")
    _check_broadcast(where, n1, x, n2, y)
    positive = _cast(_greater(y, 0), x.dtype)
    negative = _cast(_less(y, 0), x.dtype)
    loss = _add(_mul(x, positive), _mul(_relu(_sub(margin, x)), negative))
    return _reduce_in_float32(loss, reduction)


def hinge_embedding_loss(inputs, targets, margin=1.0, reduction="mean"):
    r"""MindSpore's ``ops.hinge_embedding_loss``: for ``inputs`` :math:`x` (often distances) and ``targets``
    :math:`y` of 1 or -1 (shapes that broadcast),

    .. math::
        l_i = \begin{cases} x_i, & y_i = 1 \\ \max(0, margin - x_i), & y_i = -1 \end{cases}

    (as MindSpore, a positive label counts as 1, a negative one as -1 and 0 gives 0). ``margin`` an int or
    float (default 1.0); ``reduction`` "none", "mean" (default) or "sum". Greater, Less, Mul, ReLU.
    inputs float16, float32, float64; targets of any number dtype."""
    return _hinge_embedding("hinge_embedding_loss", ("inputs", "targets"), inputs, targets, margin, reduction)


def _soft_margin(where: str, names: tuple, x, y, reduction: str):
    _check_reduction(where, reduction)
    _pair_inputs(where, names, x, y, same_shape=True)
    return _reduce_in_float32(_softplus(_neg(_mul(y, x))), reduction)


def soft_margin_loss(input, target, reduction="mean"):  # noqa: A002
    r"""MindSpore's ``ops.soft_margin_loss``: the two-class logistic loss of ``input`` :math:`x` and ``target``
    :math:`y` of 1 or -1 (one shape and float dtype),

    .. math::
        l_i = \log(1 + \exp(-y_i x_i))

    ("mean", the default, divides the sum by the number of elements); computed as ``softplus(-y * x)`` (Mul,
    Neg, Softplus), which neither overflows nor loses digits. float16, float32, float64."""
    return _soft_margin("soft_margin_loss", ("input", "target"), input, target, reduction)


def _multi_margin(where: str, x, target, p, margin, weight, reduction: str):
    _check_tensor(where, "input", x)
    _check_tensor(where, "target", target)
    _check_reduction(where, reduction)
    if isinstance(p, bool) or not isinstance(p, int):
        raise TypeError(f"For '{where}', the 'p' must be an int, but got {type(p).__name__}.")
    if p not in (1, 2):
        raise ValueError(f"For '{where}', the 'p' must be 1 or 2, but got {p}.")
    margin = _check_number(where, "margin", margin, (int, float))
    _check_float_dtype(where, "input", x)
    if target.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{where}', the 'target' must be class indices (int32 or int64), but got {target.dtype}.")
    if x.ndim != 2:
        raise ValueError(f"For '{where}', the 'input' must be 2-D (N, C), but got shape {list(x.shape)}.")
    if target.ndim != 1 or target.shape[0] != x.shape[0]:
        raise ValueError(
            f"For '{where}', the 'target' must be 1-D (N,) with N = {x.shape[0]} (the 'input' batch), but got shape "
            f"{list(target.shape)}."
        )
    classes = x.shape[1]
    if weight is not None:
        _check_tensor(where, "weight", weight)
        if weight.ndim != 1 or weight.shape[0] != classes:
            raise ValueError(
                f"For '{where}', the 'weight' must be 1-D (C,) with C = {classes} (the classes), but got shape "
                f"{list(weight.shape)}."
            )
        if weight.dtype != x.dtype:
            weight = _cast(weight, x.dtype)
    dtype = x.dtype
    one_hot = _one_hot(1)(target, classes, Tensor(1.0, dtype), Tensor(0.0, dtype))  # 0 rows: index out of range
    x_y = _sum_all(_mul(x, one_hot), 1)  # x[n, y_n], (N,)
    hinge = _relu(_add(_sub(x, _reshape(x_y, (-1, 1))), margin))
    if p == 2:
        hinge = _square(hinge)
    hinge = _mul(hinge, _sub(1.0, one_hot))  # every class but y_n
    loss = _div(_sum_all(hinge, 1), float(classes))
    if weight is not None:
        loss = _mul(loss, _sum_all(_mul(one_hot, weight), 1))  # w[y_n]
    return _reduce_in_float32(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1, weight=None, reduction="mean"):  # noqa: A002
    r"""MindSpore's ``ops.multi_margin_loss``: the multi-class hinge loss of scores ``input`` :math:`x` (N, C)
    and class indices ``target`` :math:`y` (N,) (int32 or int64, in [0, C)):

    .. math::
        l_n = \frac{w_{y_n}}{C} \sum_{i \ne y_n} \max(0, margin - x_{n, y_n} + x_{n, i})^p

    ``p`` 1 (default) or 2; ``margin`` an int or float (default 1); ``weight`` None or a (C,) Tensor of class
    weights; ``reduction`` "none" (shape (N,)), "mean" (default) or "sum". OneHot, Mul, ReduceSum, ReLU (a class
    index out of [0, C) picks no score). float16, float32, float64."""
    return _multi_margin("multi_margin_loss", input, target, p, margin, weight, reduction)


def _multilabel_margin(where: str, names: tuple, x, target, reduction: str):
    n1, n2 = names
    _check_tensor(where, n1, x)
    _check_tensor(where, n2, target)
    _check_reduction(where, reduction)
    _check_float_dtype(where, n1, x)
    if target.dtype not in (mstype.int32, mstype.int64):
        raise TypeError(
            f"For '{where}', the '{n2}' must be class indices (int32 or int64, -1 padded), but got {target.dtype}."
        )
    if x.ndim not in (1, 2):
        raise ValueError(f"For '{where}', the '{n1}' must be (C) or (N, C), but got shape {list(x.shape)}.")
    _check_same_shape(where, n1, x, n2, target)
    if x.ndim == 1:
        loss = _multilabel_margin(where, names, _reshape(x, (1, -1)), _reshape(target, (1, -1)), reduction)
        return _reshape(loss, ()) if reduction == "none" else loss
    dtype = x.dtype
    classes = x.shape[1]
    # The targets are the indices before the first negative one: valid[n, j] is 1 for those.
    valid = _cumprod(_cast(_greater_equal(target, 0), dtype), 1)
    picked = _mul(_one_hot(-1)(target, classes, Tensor(1.0, dtype), Tensor(0.0, dtype)), _expand_dims(valid, 2))
    is_target = _minimum(_sum_all(picked, 1), 1.0)  # (N, C): 1 where class c is a target
    x_target = _sum_all(_mul(picked, _expand_dims(x, 1)), 2)  # x[n, y[n, j]], (N, J)
    hinge = _relu(_add(_sub(_expand_dims(x, 1), _expand_dims(x_target, 2)), 1.0))  # (N, J, C)
    hinge = _mul(_mul(hinge, _expand_dims(valid, 2)), _expand_dims(_sub(1.0, is_target), 1))
    loss = _div(_sum_all(hinge, (1, 2)), float(classes))
    return _reduce_in_float32(loss, reduction)


def multilabel_margin_loss(input, target, reduction="mean"):  # noqa: A002
    r"""MindSpore's ``ops.multilabel_margin_loss``: the multi-label hinge loss of scores ``input`` :math:`x`
    (C) or (N, C) and ``target`` :math:`y` of the input's shape holding each sample's target classes first,
    padded with -1 (only the indices before the first negative one count):

    .. math::
        l_n = \frac{1}{C} \sum_{j} \sum_{i \notin y_n} \max(0, 1 - (x_{n, y_{n,j}} - x_{n, i}))

    ``reduction`` "none" (shape (N,); 0-d for a (C) input), "mean" (default) or "sum". Returns the loss only
    (MindSpore's primitive also returns an ``is_target`` mask). GreaterEqual, CumProd, OneHot, Mul, ReduceSum,
    ReLU. input float16, float32, float64; target int32 or int64."""
    return _multilabel_margin("multilabel_margin_loss", ("input", "target"), input, target, reduction)


def _poisson_nll(where: str, x, target, log_input, full, eps, reduction: str):
    _check_reduction(where, reduction)
    _check_bool(where, "log_input", log_input)
    _check_bool(where, "full", full)
    eps = _check_number(where, "eps", eps, (float,), positive=True)
    _pair_inputs(where, ("input", "target"), x, target, same_shape=True)
    if log_input:
        loss = _sub(_exp(x), _mul(target, x))
    else:
        loss = _sub(x, _mul(target, _log(_add(x, eps))))
    if full:
        above_one = _greater(target, 1.0)
        safe = _select(above_one, target, _ones_like(target))  # log(1) = 0 where the term is dropped
        stirling = _add(_sub(_mul(_add(safe, 0.5), _log(safe)), safe), _HALF_LOG_2PI)
        loss = _add(loss, _mul(stirling, _cast(above_one, x.dtype)))
    return _reduce_in_float32(loss, reduction)


def _gaussian_nll(where: str, names: tuple, x, target, var, full, eps, reduction: str):
    n1, n2, nv = names
    for name, value in zip(names, (x, target, var)):
        _check_tensor(where, name, value)
    _check_reduction(where, reduction)
    _check_bool(where, "full", full)
    eps = _check_number(where, "eps", eps, (float,), positive=True)
    _check_float_dtype(where, n1, x)
    _check_same_dtype(where, n1, x, n2, target)
    _check_same_dtype(where, n1, x, nv, var)
    shape = _check_broadcast(where, n1, x, n2, target)
    if var.ndim == len(shape) - 1 and tuple(var.shape) == shape[:-1]:
        var = _expand_dims(var, -1)  # one variance per sample: the last dim was left out
    if not _broadcasts(shape, var.shape) or tuple(np.broadcast_shapes(shape, tuple(var.shape))) != shape:
        raise ValueError(
            f"For '{where}', the '{nv}' must have the shape {list(shape)} of '{n1}', or that shape with one dim of 1 "
            f"or without its last dim, but got {list(var.shape)}."
        )
    var = _maximum(var, eps)
    loss = _mul(_add(_log(var), _div(_square(_sub(x, target)), var)), 0.5)
    if full:
        loss = _add(loss, _HALF_LOG_2PI)
    return _reduce_in_float32(loss, reduction)


def _broadcasts(shape, other) -> bool:
    try:
        np.broadcast_shapes(tuple(shape), tuple(other))
    except ValueError:
        return False
    return True


def gaussian_nll_loss(x, target, var, full=False, eps=1e-06, reduction="mean"):
    r"""MindSpore's ``ops.gaussian_nll_loss``: the negative log likelihood of ``target`` under Gaussians of mean
    ``x`` and variance ``var``:

    .. math::
        l_i = \frac{1}{2}\left(\log \max(var_i, eps) + \frac{(x_i - y_i)^2}{\max(var_i, eps)}\right)
        + \text{full} \cdot \frac{1}{2} \log 2\pi

    ``x`` and ``target`` of one float dtype, shapes that broadcast; ``var`` of their shape, or with one dim of 1,
    or without the last dim (one variance per sample); ``full`` a bool (default False); ``eps`` a float > 0
    (default 1e-6); ``reduction`` "none", "mean" (default) or "sum". Maximum, Log, Sub, Square, RealDiv.
    float16, float32, float64."""
    return _gaussian_nll("gaussian_nll_loss", ("x", "target", "var"), x, target, var, full, eps, reduction)
