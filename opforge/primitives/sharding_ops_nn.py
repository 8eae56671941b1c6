"""Sharding rules of the network operators: convolution and its gradients, pooling, batch normalisation,
attention, the losses, the recurrent layers and the batched linear algebra. What a rule is:
``opforge/primitives/sharding_ops.py``; every rule here is checked by ``tests/mpi_scripts/rule_sweep.py``.

A convolution's strategy is MindSpore's ``((n, c, h, w), (o, c, 1, 1))`` (NCHW): the batch split ``n`` ways, the
input channels ``c`` ways (each rank convolves its channels with its slice of the weight: partial sums over that
axis), the output channels ``o`` ways (each rank holds its filters) and the spatial dims by blocks of rows (each
rank fetching the rows its windows reach in its neighbours' blocks); the kernel is whole. A grouped convolution
splits the batch and the spatial dims. Pooling splits the batch and the channels, and with "VALID" windows
the spatial dims as a convolution does; batch normalisation the
channels in training (the statistics span the rest) and anything in inference; attention the batch and the heads;
the losses and the recurrent layers their batch (the weights' gradients partial sums); the batched linear algebra
its batch dims.
"""

from __future__ import annotations

import functools
import math

from opforge.communication.management import get_rank
from opforge.dispatch.sharding import ShardPlan, TensorLayout, coords, mesh_with_repeat, replicated, sharding_rules
from opforge.geometry import conv_output_and_pads
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as A
from opforge.primitives import attention_ops as T
from opforge.primitives import conv_ops as C
from opforge.primitives import detection_ops as D
from opforge.primitives import linalg_ops as L
from opforge.primitives import nn_ops as N
from opforge.primitives.math_ops import Mul
from opforge.primitives.primitive import Primitive, with_attrs
from opforge.primitives.sharding_ops import (
    along_axes_rule,
    check_strategy,
    elementwise_rule,
    first_mesh,
    gather_along,
    on_mesh,
    shape_of,
    strategy_or,
    unsplit,
    world_size,
)
from opforge.tensor import Tensor

__all__: list = []  # (the rules are registered; nothing is imported from here)

_mul = Mul()


def _mesh_of(prim, splits: tuple) -> tuple:
    return mesh_with_repeat(world_size(), splits, prim.name)


def _layouts(mesh: tuple, *dims) -> list:
    """One layout per tuple of mesh-axis numbers (1-based into ``mesh``, None for a whole dim)."""
    return [TensorLayout.make(mesh, list(d)) for d in dims]


def _filter_whole(prim, strategy) -> None:
    """The filter's kernel dims are whole (the windows slide over them)."""
    if any(c != 1 for c in strategy[1][2:]):
        raise ValueError(
            f"For '{prim.name}', the strategy {strategy} splits the kernel dims of the filter (O, C, kh, kw): "
            "opforge splits its filters and channels only."
        )


def _on_common_mesh(layouts) -> TensorLayout:
    """The first input's layout on the device matrix the two inputs share (a whole first input takes the
    second's, so that the second's split can be kept)."""
    return on_mesh(layouts[0], first_mesh(layouts[:2]))


def _axis_if(lay: TensorLayout, dim: int, mesh: tuple, taken: tuple):
    """The mesh axis splitting ``lay``'s dim ``dim`` when ``lay`` is on ``mesh`` and the axis is free."""
    d = lay.dims[dim] if lay.mesh == mesh else None
    return None if d in taken else d


# ---------------------------------------------------------------------------------------------
# Convolution
#
# A spatial dim (H or W) split k ways: each rank holds a block of B = size / k rows and computes a block of the
# output's rows; the windows of its output rows reach rows of its neighbours' blocks (the halo), which one
# AllGather of the strips the neighbours need brings (of the whole blocks when a window reaches past a
# neighbour), zeros standing for the padding. The local call convolves that window without padding along the
# split dims. The output and input sizes must divide by k.


def _window_attrs(prim, dim: int) -> tuple:
    """``(kernel, stride, dilation, (pad before, pad after))`` of spatial dim ``dim`` (2 or 3) of a convolution
    or a pooling (whose pads follow from its mode alone)."""
    if isinstance(prim, _POOLS):
        return prim.kernel_size[dim], prim.strides[dim], 1, (0, 0)
    return prim.kernel_size[dim - 2], prim.stride[dim], prim.dilation[dim], prim.padding[2 * dim - 4 : 2 * dim - 2]


def _geometry(prim, dim: int, size: int) -> tuple:
    """``(span, stride, pad before, output size)`` of spatial dim ``dim`` for an input of ``size``."""
    kernel, stride, dilation, pads = _window_attrs(prim, dim)
    out, before, _ = conv_output_and_pads(prim.name, size, kernel, stride, dilation, prim.pad_mode, pads)
    return dilation * (kernel - 1) + 1, stride, before, out


def _pads(prim, sizes: tuple, split: dict) -> tuple:
    """The (top, bottom, left, right) padding of a local call on whole ``sizes`` (H, W): 0 along split dims."""
    pads = []
    for dim, size in zip((2, 3), sizes):
        kernel, stride, dilation, both = _window_attrs(prim, dim)
        _, before, after = conv_output_and_pads(prim.name, size, kernel, stride, dilation, prim.pad_mode, both)
        pads += [0, 0] if dim in split else [before, after]
    return tuple(pads)


def _spatial_refusal(prim, dim: int, size: int, parts: int):
    """Why dim ``dim`` of an input of that whole ``size`` cannot split ``parts`` ways (None: it can)."""
    _, stride, _, out = _geometry(prim, dim, size)
    if size % parts or out % parts:
        return f"its input size {size} and output size {out} must divide by the {parts} parts"
    if any(n < 1 for _, n in _gradient_windows(prim, dim, size, parts)):
        return f"a block of {size // parts} input rows would be read by no window (the stride is {stride})"
    return None


def _spatial_splits(prim, lay: TensorLayout, sizes: tuple, strict: bool) -> dict:
    """``{dim: mesh axis}`` of ``lay``'s split spatial dims that can stay split (with ``strict``, a split that
    cannot raises, naming the operator)."""
    split = {}
    for dim, size in zip((2, 3), sizes):
        axis = lay.dims[dim]
        if axis is None:
            continue
        why = _spatial_refusal(prim, dim, size, lay.mesh[axis])
        if why is None:
            split[dim] = axis
        elif strict:
            raise ValueError(f"For '{prim.name}', spatial dim {dim} cannot split {lay.mesh[axis]} ways: {why}.")
    return split


_pads_ops: dict = {}
_concats: dict = {}
_slice = A.Slice()


def _rows(x, dim: int, begin: int, n: int):
    shape = tuple(x.shape)
    if begin == 0 and n == shape[dim]:
        return x
    return _slice(x, tuple(begin if i == dim else 0 for i in range(len(shape))), shape[:dim] + (n,) + shape[dim + 1 :])


def _pad_rows(x, dim: int, before: int, after: int):
    if before == after == 0:
        return x
    pads = tuple((before, after) if i == dim else (0, 0) for i in range(len(x.shape)))
    op = _pads_ops.get(pads) or _pads_ops.setdefault(pads, A.Pad(pads))
    return op(x)


def _join(parts: list, dim: int):
    if len(parts) == 1:
        return parts[0]
    op = _concats.get(dim) or _concats.setdefault(dim, A.Concat(dim))
    return op(tuple(parts))


def _halo_window(x, dim: int, mesh: tuple, axis: int, windows: list):
    """Rows ``[start, start + length)`` of the whole tensor along ``dim`` (zeros outside it), ``windows[q]``
    being ``(start, length)`` of the rank at coordinate ``q`` on mesh axis ``axis`` and ``x`` this rank's block:
    one AllGather of the strips of each block that the neighbours' windows reach."""
    k, rows, q = mesh[axis], x.shape[dim], coords(get_rank(), mesh)[axis]
    lo = max(0, *(p * rows - start for p, (start, _) in enumerate(windows)))
    hi = max(0, *(start + n - (p + 1) * rows for p, (start, n) in enumerate(windows)))
    start, length = windows[q]
    if lo == hi == 0:
        around, base = x, q * rows
    elif lo <= rows and hi <= rows:  # the neighbours' edges: each block's first hi rows and last lo rows
        edges = [_rows(x, dim, b, n) for b, n in ((0, hi), (rows - lo, lo)) if n]
        strips = gather_along(_join(edges, dim), dim, mesh, axis)
        parts = [_rows(strips, dim, (q - 1) * (hi + lo) + hi, lo)] if q > 0 and lo else []
        parts += [x] + ([_rows(strips, dim, (q + 1) * (hi + lo), hi)] if q < k - 1 and hi else [])
        around = _pad_rows(_join(parts, dim), dim, lo if q == 0 else 0, hi if q == k - 1 else 0)
        base = q * rows - lo
    else:
        around = _pad_rows(gather_along(x, dim, mesh, axis), dim, lo, hi)
        base = -lo
    return _rows(around, dim, start - base, length)


def _forward_windows(prim, dim: int, size: int, parts: int) -> list:
    """The input rows each output block reads: output rows [q * b, (q + 1) * b) read input rows from
    q * b * stride - pad on, (b - 1) * stride + span of them."""
    span, stride, before, out = _geometry(prim, dim, size)
    b = out // parts
    return [(q * b * stride - before, (b - 1) * stride + span) for q in range(parts)]


def _windowed(x, split: dict, mesh: tuple, windows_of):
    for dim, axis in split.items():
        x = _halo_window(x, dim, mesh, axis, windows_of(dim))
    return x


@sharding_rules.register(C.Conv2D)
def _conv2d_rule(prim, args, layouts, strategy):
    """out[n, o] = sum over c of x[n, c] * w[o, c]: batch and filters split, input channels partial sums; H and
    W split by blocks of rows (the halo fetched)."""
    if prim.data_format != "NCHW":
        return None
    grouped, sizes = prim.group != 1, shape_of(args[0])[2:]
    if strategy is not None:
        check_strategy(prim, strategy, [4, 4])
        _filter_whole(prim, strategy)
        (n, c, h, w), (o, c_w, *_) = strategy
        if c != c_w or (grouped and (c, o) != (1, 1)):
            raise ValueError(
                f"For '{prim.name}', the strategy {strategy} must split x's channels as w's (got {c} and {c_w})"
                + (", and a grouped convolution neither its channels nor its filters." if grouped else ".")
            )
        mesh = _mesh_of(prim, (n, c, o, h, w))
        x_lay, w_lay, out = _layouts(mesh, (1, 2, 4, 5), (3, 2, None, None), (1, 3, 4, 5))
        split = _spatial_splits(prim, x_lay, sizes, strict=True)
    else:
        x_lay = _on_common_mesh(layouts)
        split = _spatial_splits(prim, x_lay, sizes, strict=False)
        x_lay = unsplit(x_lay, [d for d in (1, 2, 3) if (d == 1 and grouped) or (d > 1 and d not in split)])
        o_axis = None if grouped else _axis_if(layouts[1], 0, x_lay.mesh, x_lay.dims)
        w_lay = x_lay.with_dims([o_axis, x_lay.dims[1], None, None])
        out = x_lay.with_dims([x_lay.dims[0], o_axis, *x_lay.dims[2:]])
    plan = ShardPlan(inputs=[x_lay, w_lay], outputs=[out])
    if x_lay.dims[1] is not None:
        plan.partial[0] = ("sum", (x_lay.dims[1],))
    changes = {"out_channel": prim.out_channel // w_lay.splits(0)} if w_lay.splits(0) > 1 else {}
    if split:
        local_prim = with_attrs(prim, pad_mode="pad", pad=_pads(prim, sizes, split), **changes)
        mesh = x_lay.mesh

        def windows(dim):
            return _forward_windows(prim, dim, sizes[dim - 2], mesh[split[dim]])

        plan.local = lambda x, w: local_prim(_windowed(x, split, mesh, windows), w)
    elif changes:
        plan.local = with_attrs(prim, **changes)
    return plan


def _gradient_windows(prim, dim: int, size: int, parts: int) -> list:
    """The output rows whose windows reach each input block, ``(first, count)``: input row y takes the gradient
    of the output rows i with i * stride - pad <= y <= i * stride - pad + span - 1."""
    span, stride, before, _ = _geometry(prim, dim, size)
    b = size // parts
    out = []
    for q in range(parts):
        first = -(-(q * b + before - span + 1) // stride)
        out.append((first, (q * b + b - 1 + before) // stride - first + 1))
    return out


def _span_of(prim, dim: int, size: int, window: tuple) -> tuple:
    """``(first input row, rows)`` that the output rows ``window`` (first, count) read."""
    span, stride, before, _ = _geometry(prim, dim, size)
    first, count = window
    return first * stride - before, (count - 1) * stride + span


def _block_of(dx, split: dict, mesh: tuple, size: tuple, begins: dict):
    """This rank's block of each split dim of ``dx``, whose rows start at global row ``begins[dim]`` (zeros
    for the block's rows it lacks: rows no window reads)."""
    for dim, axis in split.items():
        q, rows, begin = coords(get_rank(), mesh)[axis], size[dim] // mesh[axis], begins[dim]
        before, after = max(0, begin - q * rows), max(0, q * rows + rows - begin - dx.shape[dim])
        dx = _rows(_pad_rows(dx, dim, before, after), dim, q * rows - begin + before, rows)
    return dx


def _backprop_input_local(prim, local_prim, split: dict, mesh: tuple, size: tuple):
    """dx's block of each split dim: the adjoint of the convolution over the window of dout reaching it (no
    padding), the rows of its input span that are the block's."""
    windows = {d: _gradient_windows(prim, d, size[d], mesh[a]) for d, a in split.items()}

    def local(dout, w, local_size):
        spans = {d: _span_of(prim, d, size[d], windows[d][coords(get_rank(), mesh)[a]]) for d, a in split.items()}
        shape = tuple(spans[d][1] if d in spans else n for d, n in enumerate(local_size))
        dx = local_prim(_windowed(dout, split, mesh, windows.get), w, shape)
        return _block_of(dx, split, mesh, size, {d: begin for d, (begin, _) in spans.items()})

    return local


def _conv_grad_plan(prim, args, layouts, strategy, shared: int, alike: str) -> ShardPlan:
    """A convolution's gradient from ``dout`` (N, O, ...) and a second input whose dim 0 is dout's dim ``shared``
    (the filter's O for dx, x's N for dw) and whose dim 1 is C: the output (dout's other dim, C), summed over
    dout's dim ``shared`` (partial sums over its axis); ``alike`` names the dims split alike in messages. H and W
    split as the forward's: dx by its input blocks (the dout rows reaching each fetched), dw from each rank's
    dout rows and the x rows they read (partial sums over those axes too)."""
    if prim.data_format != "NCHW":
        return None
    grouped, size, kept = prim.group != 1, tuple(args[2]), 1 - shared
    whole_in = size if shared == 1 else shape_of(args[1])  # the forward's input (dx's size, or x)
    if strategy is not None:
        check_strategy(prim, strategy[:2], [4, 4])
        if shared == 1:
            _filter_whole(prim, strategy)
        dout_splits, (second, c, *second_hw) = strategy[0], strategy[1]
        if second != dout_splits[shared] or (grouped and (dout_splits[1], c) != (1, 1)):
            raise ValueError(
                f"For '{prim.name}', the strategy {strategy} must split {alike} alike (got {dout_splits[shared]} "
                f"and {second})"
                + (", and a grouped convolution neither its channels nor its filters." if grouped else ".")
            )
        if shared == 0 and tuple(second_hw) != tuple(dout_splits[2:]):
            raise ValueError(f"For '{prim.name}', the strategy {strategy} must split x's H and W as dout's.")
        mesh = _mesh_of(prim, (*dout_splits, c))
        second_dims = (shared + 1, 5, None, None) if shared else (1, 5, 3, 4)
        dout, other, out = _layouts(mesh, (1, 2, 3, 4), second_dims, (kept + 1, 5, None, None))
        split = _spatial_splits(prim, dout, whole_in[2:], strict=True)
    else:
        dout = _on_common_mesh(layouts)
        split = _spatial_splits(prim, dout, whole_in[2:], strict=False)
        dout = unsplit(dout, [d for d in (1, 2, 3) if (d == 1 and grouped) or (d > 1 and d not in split)])
        c_axis = None if grouped else _axis_if(layouts[1], 1, dout.mesh, dout.dims)
        other = dout.with_dims([dout.dims[shared], c_axis, *((None, None) if shared else dout.dims[2:])])
        out = dout.with_dims([dout.dims[kept], c_axis, None, None])
    if shared == 1 and split:
        out = out.with_dims([*out.dims[:2], *dout.dims[2:]])  # dx: split as the forward's input was
    plan = ShardPlan(inputs=[dout, other, None], outputs=[out])
    partial_axes = (dout.dims[shared],) if dout.dims[shared] is not None else ()
    if shared == 0:
        partial_axes += tuple(split.values())  # dw: each rank's rows' share
    if partial_axes:
        plan.partial[0] = ("sum", partial_axes)
    changes = {"out_channel": prim.out_channel // dout.splits(1)} if dout.splits(1) > 1 else {}
    plan.args[2] = out.local_shape(size)
    if not split:
        if changes:
            plan.local = with_attrs(prim, **changes)
        return plan
    local_prim = with_attrs(prim, pad_mode="pad", pad=_pads(prim, whole_in[2:], split), **changes)
    mesh = dout.mesh
    if shared == 1:
        plan.local = _backprop_input_local(prim, local_prim, split, mesh, size)
    else:

        def windows(dim):
            return _forward_windows(prim, dim, whole_in[dim], mesh[split[dim]])

        plan.local = lambda dy, x, filter_size: local_prim(dy, _windowed(x, split, mesh, windows), filter_size)
    return plan


@sharding_rules.register(C.Conv2DBackpropInput)
def _conv2d_backprop_input_rule(prim, args, layouts, strategy):
    """dx[n, c] = sum over o of dout[n, o] (*) w[o, c]: partial sums over the filters' axis."""
    return _conv_grad_plan(prim, args, layouts, strategy, 1, "dout's channels and the filter's")


@sharding_rules.register(C.Conv2DBackpropFilter)
def _conv2d_backprop_filter_rule(prim, args, layouts, strategy):
    """dw[o, c] = sum over n of dout[n, o] (*) x[n, c]: partial sums over the batch's axis."""
    return _conv_grad_plan(prim, args, layouts, strategy, 0, "dout's batch and x's")


# ---------------------------------------------------------------------------------------------
# Pooling: the batch and the channels split; with "VALID" windows H and W too, by blocks of rows with their
# halo, as a convolution's


_POOLS = (C.MaxPool, C.AvgPool, C.MaxPoolGrad, C.AvgPoolGrad, C.MaxPoolGradGrad)


def _pooled_axes(prim, args, rank):
    return [rank - 2, rank - 1]  # (NCHW: the only format opforge's pooling takes)


def _pool_plan(prim, args, layouts, strategy):
    """The pooling's layout (every input alike, the gradients' pooled inputs on the same axes) and the spatial
    dims it keeps split (a "SAME" window's padding is not a zero: those dims whole)."""
    sizes = shape_of(args[0])[2:]
    lay = strategy_or(prim, strategy, layouts, 4)
    split = {} if prim.pad_mode != "VALID" else _spatial_splits(prim, lay, sizes, strict=strategy is not None)
    lay = unsplit(lay, [d for d in (2, 3) if d not in split])
    return ShardPlan(inputs=[lay] * len(args), outputs=[lay]), split, lay.mesh


@sharding_rules.register(C.MaxPool, C.AvgPool, C.MaxPoolGradGrad)
def _pool_rule(prim, args, layouts, strategy):
    """out = the windows' max or mean: each rank pools the windows of its block of output rows (the input rows
    they read fetched); MaxPoolGradGrad reads ``grad`` by those windows too."""
    plan, split, mesh = _pool_plan(prim, args, layouts, strategy)
    if split:
        size = shape_of(args[0])
        windows = {d: _forward_windows(prim, d, size[d], mesh[a]) for d, a in split.items()}

        def local(x, *rest):  # MaxPoolGradGrad's (out, grad): out as it is, grad by x's windows
            fetched = [_windowed(t, split, mesh, windows.get) for t in (x, *rest[1:])]
            return prim(fetched[0], *rest[:1], *fetched[1:])

        plan.local = local
    return plan


@sharding_rules.register(C.MaxPoolGrad, C.AvgPoolGrad)
def _pool_grad_rule(prim, args, layouts, strategy):
    """dx: each rank's block from the output rows whose windows reach it (their x rows, out and dout fetched),
    the rows of that span that are the block's."""
    plan, split, mesh = _pool_plan(prim, args, layouts, strategy)
    if split:
        size = shape_of(args[0])
        windows = {d: _gradient_windows(prim, d, size[d], mesh[a]) for d, a in split.items()}
        spans = {d: [_span_of(prim, d, size[d], w) for w in windows[d]] for d in split}

        def local(x, out, dout):
            dx = prim(
                *(_windowed(t, split, mesh, f) for t, f in ((x, spans.get), (out, windows.get), (dout, windows.get)))
            )
            begins = {d: spans[d][coords(get_rank(), mesh)[a]][0] for d, a in split.items()}
            return _block_of(dx, split, mesh, size, begins)

        plan.local = local
    return plan


sharding_rules.register(C.AdaptiveAvgPool2D)(along_axes_rule(_pooled_axes))


@sharding_rules.register(C.AdaptiveAvgPool2DGrad)
def _adaptive_avg_pool_grad_rule(prim, args, layouts, strategy):
    dy = shape_of(args[0])
    lay = unsplit(strategy_or(prim, strategy, layouts, len(dy)), [len(dy) - 2, len(dy) - 1])
    return ShardPlan(inputs=[lay, None], outputs=[lay], args={1: lay.local_shape(tuple(args[1]))})


# ---------------------------------------------------------------------------------------------
# Batch normalisation: per channel


def _channel_plan(prim, args, layouts, strategy, nvectors: int, nout_full: int, nout_vectors: int) -> ShardPlan:
    """x (N, C, ...) split by channels (and, out of training, anywhere); the per-channel vectors by the
    channels' axis."""
    rank = len(shape_of(args[0]))
    lay = strategy_or(prim, strategy, layouts, rank)
    if prim.is_training:
        lay = unsplit(lay, [i for i in range(rank) if i != 1])
    vector = lay.with_dims([lay.dims[1]])
    inputs = [lay] * (len(args) - nvectors) + [vector] * nvectors
    return ShardPlan(inputs=inputs, outputs=[lay] * nout_full + [vector] * nout_vectors)


@sharding_rules.register(N.BatchNorm)
def _batch_norm_rule(prim, args, layouts, strategy):
    if prim.data_format != "NCHW":
        return None
    plan = _channel_plan(prim, args, layouts, strategy, nvectors=4, nout_full=1, nout_vectors=4)
    # the kernel on the blocks (BatchNorm's own call, in training, updates the moving statistics: the caller's)
    plan.local = functools.partial(Primitive.__call__, prim)
    return plan


@sharding_rules.register(G.BatchNormGrad)
def _batch_norm_grad_rule(prim, args, layouts, strategy):
    """dscale and dbias sum over the batch and the spatial dims: out of training those may be split too, which
    leaves them partial sums."""
    plan = _channel_plan(prim, args, layouts, strategy, nvectors=3, nout_full=1, nout_vectors=2)
    lay = plan.inputs[0]
    summed = tuple(d for i, d in enumerate(lay.dims) if i != 1 and d is not None)
    if summed:
        plan.partial = {1: ("sum", summed), 2: ("sum", summed)}
    return plan


# ---------------------------------------------------------------------------------------------
# Attention: (batch, heads, seq, dim), the batch and the heads split


def _attention_plan(prim, args, layouts, strategy, nout: int) -> ShardPlan:
    lay = unsplit(strategy_or(prim, strategy, layouts, 4), [2, 3])
    q_shape = shape_of(args[0])

    def like_q(a):
        if not isinstance(a, Tensor):
            return None
        shape = shape_of(a)
        return lay.with_dims([lay.dims[i] if i < 2 and shape[i] == q_shape[i] else None for i in range(len(shape))])

    inputs = [like_q(a) for a in args]
    return ShardPlan(inputs=inputs, outputs=[lay] * nout)


@sharding_rules.register(T.ScaledDotProductAttention)
def _attention_rule(prim, args, layouts, strategy):
    plan = _attention_plan(prim, args, layouts, strategy, 1)
    lay = plan.outputs[0]
    plan.outputs = [lay, lay.with_dims(lay.dims[:2] + (None,))]  # softmax_lse: (batch, heads, seq)
    return plan


@sharding_rules.register(T.ScaledDotProductAttentionGrad)
def _attention_grad_rule(prim, args, layouts, strategy):
    return _attention_plan(prim, args, layouts, strategy, 3)


# ---------------------------------------------------------------------------------------------
# Losses: elementwise terms, then a sum or a mean over the blocks


def _reduced(plan: ShardPlan, lay: TensorLayout, reduction: str) -> ShardPlan:
    """The loss's output: ``lay`` with no reduction, else a scalar holding each rank's sum (or mean, of equal
    blocks) pending over the axes that split ``lay``."""
    if reduction == "none":
        plan.outputs = [lay]
        return plan
    plan.outputs = [lay.with_dims([])]
    split = tuple(d for d in lay.dims if d is not None)
    if split:
        plan.partial[0] = ("sum" if reduction == "sum" else "mean", split)
    return plan


@sharding_rules.register(N.BCEWithLogitsLoss, N.SmoothL1Loss)
def _elementwise_loss_rule(prim, args, layouts, strategy):
    """logits and labels alike; BCE's weight and pos_weight broadcast to them, split where their dims are the
    logits'."""
    rank = len(shape_of(args[0]))
    lay = strategy_or(prim, strategy, layouts, rank)
    shape = shape_of(args[0])

    def broadcast(a):
        if not isinstance(a, Tensor):
            return None
        s = shape_of(a)
        return lay.with_dims([lay.dims[rank - len(s) + j] if s[j] == shape[rank - len(s) + j] else None
                              for j in range(len(s))])  # fmt: skip

    return _reduced(ShardPlan(inputs=[broadcast(a) for a in args], outputs=[]), lay, prim.reduction)


@sharding_rules.register(N.NLLLoss)
def _nll_loss_rule(prim, args, layouts, strategy):
    """The batch split; the classes whole. A weighted mean divides by the whole batch's weight, which a block
    does not have: with ``reduction="mean"`` the batch is whole too."""
    rank = len(shape_of(args[0]))
    lay = unsplit(strategy_or(prim, strategy, layouts, rank), [1] if rank > 1 else [])
    if prim.reduction == "mean":
        lay = unsplit(lay, [0])
    labels, weight = lay.with_dims(lay.dims[:1]), replicated(len(shape_of(args[2])), lay.mesh)
    plan = _reduced(ShardPlan(inputs=[lay, labels, weight], outputs=[]), labels, prim.reduction)
    total = labels.with_dims([])
    if lay.dims[0] is not None:  # the weights of this block's labels
        plan.partial[1] = ("sum", (lay.dims[0],))
    plan.outputs.append(total)
    return plan


@sharding_rules.register(G.SmoothL1LossGrad)
def _smooth_l1_grad_rule(prim, args, layouts, strategy):
    """The gradient of each element; of a mean, each block's scaled by its share of the whole count (the
    kernel divides by the block's)."""
    lay = strategy_or(prim, strategy, layouts, len(shape_of(args[0])))
    dout = lay if prim.reduction == "none" else replicated(0, lay.mesh)
    plan = ShardPlan(inputs=[lay, lay, dout], outputs=[lay])
    splits = math.prod(lay.splits(i) for i in range(len(lay.dims)))
    if prim.reduction == "mean" and splits > 1:
        plan.local = lambda p, t, d: _mul(prim(p, t, d), 1.0 / splits)
    return plan


@sharding_rules.register(G.NLLLossGrad)
def _nll_loss_grad_rule(prim, args, layouts, strategy):
    """The batch split (the kernel divides a mean by ``total_weight``, the whole batch's, an input)."""
    rank = len(shape_of(args[0]))
    lay = unsplit(strategy_or(prim, strategy, layouts, rank), [1] if rank > 1 else [])
    rows = lay.with_dims(lay.dims[:1])
    loss_grad = rows if prim.reduction == "none" else replicated(len(shape_of(args[1])), lay.mesh)
    weight, total = (replicated(len(shape_of(a)), lay.mesh) for a in args[3:5])
    return ShardPlan(inputs=[lay, loss_grad, rows, weight, total], outputs=[lay])


@sharding_rules.register(G.MaximumGrad, G.MinimumGrad)
def _extremum_grad_rule(prim, args, layouts, strategy):
    """Elementwise when x1, x2 and dout have one shape (a broadcast input's gradient is summed back to its
    shape: no rule, it runs whole)."""
    if len({shape_of(a) for a in args[:3]}) > 1:
        return None
    return elementwise_rule(nout=2)(prim, args, layouts, strategy)


# ---------------------------------------------------------------------------------------------
# Batched linear algebra: each matrix whole, the batch dims split


@sharding_rules.register(
    L.Cholesky, L.Eigh, L.Lu, L.LogMatrixDeterminant, L.MatrixDeterminant, L.MatrixInverse, L.MatrixSolve,
    L.MatrixTriangularSolve, L.Qr, L.Svd,
)  # fmt: skip
def _batched_matrix_rule(prim, args, layouts, strategy):
    """Every input and output leads with the first input's batch dims (all but its last two), split alike."""
    shapes = [shape_of(a) for a in args if isinstance(a, Tensor)]
    batch = len(shapes[0]) - 2
    lay = unsplit(strategy_or(prim, strategy, layouts, len(shapes[0])), [batch, batch + 1])

    def leading(shape):
        return lay.with_dims(
            [lay.dims[i] if i < batch and shape[i] == shapes[0][i] else None for i in range(len(shape))]
        )

    outs = prim.infer_shape(*shapes)
    outs = outs if outs and isinstance(outs[0], (list, tuple)) else [outs]
    return ShardPlan(inputs=[leading(shape_of(a)) if isinstance(a, Tensor) else None for a in args],
                     outputs=[leading(o) for o in outs])  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Recurrent layers: the batch split (each rank runs its sequences), the weights whole


_WEIGHTS = {"w_ih", "w_hh", "bias", "b_ih", "b_hh"}


@sharding_rules.register(N.LSTMLayer, N.GRULayer, N.RNNLayer, G.LSTMLayerGrad, G.GRULayerGrad, G.RNNLayerGrad)
def _recurrent_rule(prim, args, layouts, strategy):
    """x and every per-sequence tensor ([seq, batch, ...] or [batch, ...]) split along the batch; the weights
    whole, their gradients partial sums over the batch's axis."""
    x = strategy_or(prim, strategy, layouts, 3)
    x = unsplit(x, [0, 2])
    axis = x.dims[1]

    def per_batch(rank: int) -> TensorLayout:
        return x.with_dims([None, axis, None] if rank == 3 else [axis] + [None] * (rank - 1))

    names = prim._signature()
    inputs = [
        None if not isinstance(a, Tensor)
        else replicated(len(shape_of(a)), x.mesh) if names[i].name in _WEIGHTS
        else per_batch(len(shape_of(a)))
        for i, a in enumerate(args)
    ]  # fmt: skip
    outs = prim.infer_shape(*[shape_of(a) for a in args if isinstance(a, Tensor)])
    plan = ShardPlan(inputs=inputs, outputs=[])
    for k, (name, shape) in enumerate(zip(prim.output_names, outs)):
        if name.startswith(("dw", "db")):  # a weight's gradient: the sum of the ranks' sequences'
            plan.outputs.append(replicated(len(shape), x.mesh))
            if axis is not None:
                plan.partial[k] = ("sum", (axis,))
        else:
            plan.outputs.append(per_batch(len(shape)))
    return plan


# ---------------------------------------------------------------------------------------------
# ROIAlign: the channels split (each rank pools its channels) and the RoIs (each rank its RoIs)


def _roi_layouts(prim, args, layouts, strategy, data_rank: int) -> tuple:
    """(the 4-D tensor's layout, the RoIs') on one device matrix: its channels (dim 1) and, for the RoIs' tensor,
    its rows split; the rest whole."""
    if strategy is not None:
        check_strategy(prim, strategy[:2], [data_rank, 2])
        mesh = _mesh_of(prim, (*strategy[0], *strategy[1]))
        data, rois = _layouts(mesh, range(1, data_rank + 1), range(data_rank + 1, data_rank + 3))
    else:
        data = _on_common_mesh(layouts)
        rois = data.with_dims([_axis_if(layouts[1], 0, data.mesh, data.dims), None])
    return data, unsplit(rois, [1])


@sharding_rules.register(D.ROIAlign)
def _roi_align_rule(prim, args, layouts, strategy):
    features, rois = _roi_layouts(prim, args, layouts, strategy, 4)
    features = unsplit(features, [0, 2, 3])
    out = features.with_dims([rois.dims[0], features.dims[1], None, None])
    return ShardPlan(inputs=[features, rois], outputs=[out])


@sharding_rules.register(D.ROIAlignGrad)
def _roi_align_grad_rule(prim, args, layouts, strategy):
    """dx sums over the RoIs: partial sums over the RoIs' axis."""
    dy, rois = _roi_layouts(prim, args, layouts, strategy, 4)
    dy = unsplit(dy, [2, 3])
    rois = rois.with_dims([dy.dims[0], None])
    dx = dy.with_dims([None, dy.dims[1], None, None])
    plan = ShardPlan(inputs=[dy, rois, None], outputs=[dx], args={2: dx.local_shape(tuple(args[2]))})
    if dy.dims[0] is not None:
        plan.partial[0] = ("sum", (dy.dims[0],))
    return plan
