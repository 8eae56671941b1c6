"""Batching rules (vmap) of the nn and conv operators: the activations and their gradients (elementwise),
Softmax/LogSoftmax (the axis counted from the end), BiasAdd, the convolutions and pooling (the batch folded into
the samples, or side by side as groups: Conv2DBackpropFilter) and the losses. See ``opforge/dispatch/batching.py``."""

from __future__ import annotations

from opforge.dispatch.batching import batching_rules, sequential
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as A
from opforge.primitives import conv_ops as C
from opforge.primitives import math_ops as P
from opforge.primitives import nn_ops as N
from opforge.primitives.batching_array_ops import (
    elem_rank,
    elementwise_rule,
    materialize,
    norm_axis,
    pad_rank,
    to_front,
    with_attrs,
)
from opforge.tensor import Tensor

batching_rules.register(N.ReLU, N.Elu, N.Sigmoid, N.Tanh, N.GeLU, N.Softplus, N.HSigmoid, N.HSwish, N.ReLU6)(
    elementwise_rule()
)
batching_rules.register(N.SeLU, N.CeLU, N.Softsign, N.HShrink, N.SoftShrink, N.Mish)(elementwise_rule())
batching_rules.register(
    G.ReluGrad,
    G.EluGrad,
    G.SigmoidGrad,
    G.TanhGrad,
    G.SoftplusGrad,
    G.HSigmoidGrad,
    G.HSwishGrad,
    G.GeLUGrad,
    G.ReLU6Grad,
)(elementwise_rule(broadcasting=False))

_reshape = A.Reshape()
_add = P.Add()


@batching_rules.register(N.Softmax, N.LogSoftmax)
def _softmax_rule(prim, args, dims, size):
    (x,) = args
    rank = elem_rank(x, dims[0])
    axis = prim.axis[0] if isinstance(prim.axis, (tuple, list)) else prim.axis
    if rank == 0:  # a 0-d element: its one number along a unit axis
        norm_axis(prim, axis, 0)
        return _reshape(with_attrs(prim, axis=-1)(pad_rank(to_front(x, dims[0]), 1)), (size,)), 0
    axis = norm_axis(prim, axis, rank) - rank  # from the end: the batch dimension in front changes nothing
    return with_attrs(prim, axis=axis)(to_front(x, dims[0])), 0


@batching_rules.register(N.BiasAdd)
def _bias_add_rule(prim, args, dims, size):
    x, b = args
    dx, db = dims
    rank = elem_rank(x, dx)
    if rank < 2 or elem_rank(b, db) != 1:  # the operator's own checks, on one element
        raise ValueError(
            f"For '{prim.name}', 'input_x' must have rank >= 2 and 'bias' rank 1, but got ranks {rank} and "
            f"{elem_rank(b, db)}."
        )
    if db is None:
        # The batch folded into the element's first (N) axis: one BiasAdd.
        x = to_front(x, dx)
        shape = tuple(x.shape)
        out = prim(_reshape(x, (shape[0] * shape[1],) + shape[2:]), b)
        return _reshape(out, shape), 0
    # A batched bias: x + b placed on the channel axis of each element.
    rank = elem_rank(x, dx)
    if rank < 2:
        raise ValueError(f"For '{prim.name}', the rank of 'input_x' must be at least 2, but got {rank}.")
    b = to_front(b, db)
    channel = 1 if prim.data_format == "NCHW" else rank - 1
    xshape = tuple(x.shape) if dx is None else tuple(to_front(x, dx).shape[1:])
    if xshape[channel] != b.shape[1]:
        raise ValueError(
            f"For '{prim.name}', the size of 'bias' must equal the channel size {xshape[channel]} of "
            f"'input_x' {list(xshape)} ({prim.data_format}), but got {b.shape[1]}."
        )
    shape = [size] + [1] * rank
    shape[1 + channel] = b.shape[1]
    x = x if dx is None else to_front(x, dx)
    return _add(x, _reshape(b, tuple(shape))), 0


# ---------------------------------------------------------------------------------------------
# Operators on a batch of samples (N first): the vmapped batch folded into N


def fold_rule(folded: tuple, reason: str, size_arg: int | None = None):
    """The rule of an operator whose inputs at ``folded`` have the samples first (N, ...) and whose
    other inputs are shared (weights): the vmapped batch is folded into N (one call on B*N samples)
    and unfolded from each output. A batched shared input runs sequentially. ``size_arg``: a constant
    input giving an output shape (N first), multiplied by B."""

    def rule(prim, args, dims, size):
        if any(d is not None for i, d in enumerate(dims) if i not in folded):
            return sequential(prim, args, dims, size, reason)
        new = list(args)
        n = None
        for i in folded:
            a = materialize(args[i], dims[i], size)
            shape = tuple(a.shape)
            if len(shape) < 2:
                return sequential(prim, args, dims, size, reason)
            n = shape[1]
            new[i] = _reshape(a, (size * shape[1],) + shape[2:])
        if size_arg is not None:
            shape_arg = tuple(args[size_arg])
            new[size_arg] = (size * shape_arg[0],) + shape_arg[1:]
        out = prim(*new)
        outs = out if isinstance(out, tuple) else (out,)
        unfolded = tuple(_reshape(o, (size, n) + tuple(o.shape[1:])) for o in outs)
        return (unfolded if isinstance(out, tuple) else unfolded[0]), 0

    return rule


batching_rules.register(C.Conv2D)(fold_rule((0,), "batches only 'x' (a batched weight needs one call per element)"))
batching_rules.register(C.Conv2DBackpropInput)(
    fold_rule((0,), "batches only 'dout' (a batched weight needs one call per element)", size_arg=2)
)
batching_rules.register(C.MaxPool, C.AvgPool)(fold_rule((0,), "batches only 'x'"))
batching_rules.register(C.AdaptiveAvgPool2D)(fold_rule((0,), "batches 'x'"))
batching_rules.register(C.AdaptiveAvgPool2DGrad)(fold_rule((0,), "batches 'input_grad'", size_arg=1))
batching_rules.register(C.MaxPoolGrad, C.AvgPoolGrad, C.MaxPoolGradGrad)(fold_rule((0, 1, 2), "batches its inputs"))
batching_rules.register(N.SoftmaxCrossEntropyWithLogits)(fold_rule((0, 1), "batches its inputs"))
_transpose, _one_hot, _log_softmax = A.Transpose(), A.OneHot(), N.LogSoftmax()
_sum, _mean = P.ReduceSum(), P.ReduceMean()


@batching_rules.register(N.SparseSoftmaxCrossEntropyWithLogits)
def _sparse_softmax_cross_entropy_rule(prim, args, dims, size):
    """The samples of all elements folded into one call of the operator, which checks the labels as it does. With
    ``is_grad`` that call's gradient is ``(softmax - one_hot) / (B * N)``: times B, each element's. Without, that
    call only checks (its mean over all elements is dropped), and each element's mean loss is the mean over its
    rows of ``-log_softmax(logits) . one_hot(label)``."""
    logits, labels = (materialize(a, d, size) for a, d in zip(args, dims))
    if len(logits.shape) != 3 or len(labels.shape) != 2:
        return sequential(prim, args, dims, size, "checks its ranks")  # (the operator's error, on one element)
    _, n, c = logits.shape
    folded = prim(_reshape(logits, (size * n, c)), _reshape(labels, (size * n,)))
    if prim.is_grad:
        return _reshape(folded * float(size), (size, n, c)), 0
    one_hot = _one_hot(labels, c, Tensor(1.0, logits.dtype), Tensor(0.0, logits.dtype))  # (labels checked above)
    return -_mean(_sum(_log_softmax(logits) * one_hot, 2), 1), 0


@batching_rules.register(C.Conv2DBackpropFilter)
def _conv_filter_grad_rule(prim, args, dims, size):
    """Each element's filter gradient at once: the B elements side by side as groups of one grouped convolution
    (channels (B * C) of ``x`` and (B * out_channel) of ``dout``, ``group`` B times larger), a per-sample gradient's
    weight gradient in one call. NCHW; a batched ``filter_size`` cannot be."""
    dout, x, filter_size = args
    if dims[2] is not None or prim.data_format != "NCHW":
        return sequential(prim, args, dims, size, "batches 'dout' and 'x' (NCHW)")
    dout, x = materialize(dout, dims[0], size), materialize(x, dims[1], size)
    if len(dout.shape) != 5 or len(x.shape) != 5:
        return sequential(prim, args, dims, size, "checks its ranks")
    side_by_side = [_reshape(_transpose(t, (1, 0, 2, 3, 4)), (t.shape[1], size * t.shape[2]) + tuple(t.shape[3:]))
                    for t in (dout, x)]  # fmt: skip
    grouped = with_attrs(prim, out_channel=size * prim.out_channel, group=size * prim.group)
    filter_size = tuple(filter_size)
    out = grouped(*side_by_side, (size * filter_size[0],) + filter_size[1:])
    return _reshape(out, (size,) + filter_size), 0


batching_rules.register(G.DropoutGrad)(elementwise_rule(broadcasting=False))


# ---------------------------------------------------------------------------------------------
# Losses with a reduction: per element "none", then reduced over the element's axes

_reduce = {"mean": P.ReduceMean(), "sum": P.ReduceSum()}


def _loss_rule(prim, args, dims, size):
    tensors = [(a, d) for a, d in zip(args, dims) if hasattr(a, "shape")]
    rank = max(elem_rank(a, d) for a, d in tensors)
    new = [pad_rank(materialize(a, d, size), rank) if hasattr(a, "shape") else a for a, d in zip(args, dims)]
    out = with_attrs(prim, reduction="none")(*new)
    if prim.reduction == "none" or len(out.shape) == 1:
        return out, 0
    return _reduce[prim.reduction](out, tuple(range(1, len(out.shape)))), 0


batching_rules.register(N.SmoothL1Loss, N.BCEWithLogitsLoss)(_loss_rule)


@batching_rules.register(N.LayerNorm)
def _layer_norm_rule(prim, args, dims, size):
    x, gamma, beta = args
    if dims[1] is not None or dims[2] is not None:
        return sequential(prim, args, dims, size, "batches only 'input_x'")
    rank = elem_rank(x, dims[0])
    norm = norm_axis(prim, prim.begin_norm_axis, rank, "begin_norm_axis") + 1
    params = norm_axis(prim, prim.begin_params_axis, rank, "begin_params_axis") + 1
    return with_attrs(prim, begin_norm_axis=norm, begin_params_axis=params)(to_front(x, dims[0]), gamma, beta), 0
