"""Batching rules (vmap) of the array operators, and the helpers every rule module uses.

A rule is ``rule(prim, args, dims, size) -> (out, out_dims)`` (``opforge/dispatch/batching.py``):
``args`` are the real values (a batched Tensor holds the whole batch, its batch dimension at
``dims[i]``; None: not batched), and the primitives a rule calls run below the batching interpreter.
Most rules move the batch dimensions to the front and call the operator on shifted axes.
"""

from __future__ import annotations

from opforge.dispatch.batching import batching_rules, fallback_calls, sequential, set_axis_ops
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as A
from opforge.primitives.primitive import primitive_classes, with_attrs

__all__ = ["vmap_report"]

_transpose = A.Transpose()
_reshape = A.Reshape()
_expand_dims = A.ExpandDims()


def moveaxis(x, src: int, dst: int):
    """``x`` with its axis ``src`` moved to ``dst`` (one Transpose; none when it is already there)."""
    rank = len(x.shape)
    src, dst = src % rank, dst % rank
    if src == dst:
        return x
    perm = [i for i in range(rank) if i != src]
    perm.insert(dst, src)
    return _transpose(x, tuple(perm))


def to_front(x, d):
    """``x`` with its batch dimension ``d`` first (None: unchanged)."""
    return x if d is None or d == 0 else moveaxis(x, d, 0)


def broadcast_axis(x, axis: int, size: int):
    """A new axis of ``size`` at ``axis``: every slice along it is ``x``."""
    y = _expand_dims(x, axis)
    shape = list(y.shape)
    shape[axis] = size
    return A.BroadcastTo(tuple(shape))(y)


def materialize(x, d, size: int):
    """``x`` batched at the front: moved there, or broadcast along a new first axis when unbatched."""
    return broadcast_axis(x, 0, size) if d is None else to_front(x, d)


def pad_rank(x, rank: int):
    """A front-batched ``x`` of element rank < ``rank`` with 1s inserted after the batch dimension,
    so that it broadcasts against unbatched values of element rank ``rank`` like one element does."""
    shape = x.shape
    missing = rank - (len(shape) - 1)
    if missing <= 0:
        return x
    return _reshape(x, (shape[0],) + (1,) * missing + tuple(shape[1:]))


def elem_rank(x, d) -> int:
    """The rank of one element of ``x`` (batched at ``d``, or not batched)."""
    return len(x.shape) - (d is not None)


def elem_shape(x, d) -> tuple:
    shape = tuple(x.shape)
    return shape if d is None else shape[:d] + shape[d + 1 :]


def norm_axis(prim, axis: int, rank: int, name: str = "axis") -> int:
    """``axis`` of a rank-``rank`` element in [0, rank), or the operator's ValueError."""
    r = max(rank, 1)  # a 0-d element takes axis 0 or -1, as the operators' own checks
    if not -r <= axis < r:
        raise ValueError(f"For '{prim.name}', the '{name}' must be in [{-r}, {r}), but got {axis}.")
    return axis % r if rank else 0


def _unstack(x, axis: int):
    return A.Unstack(axis=axis)(x)


def _stack(tensors, axis: int):
    return A.Stack(axis=axis)(tuple(tensors))


set_axis_ops(moveaxis=moveaxis, unstack=_unstack, stack=_stack, broadcast=broadcast_axis)


def vmap_report() -> dict:
    """The operators with and without a batching rule (every operator class defined so far), and
    the operators that ran the sequential fallback in this process with their call counts:
    ``{"with_rule": [...], "without_rule": [...], "fallback_calls": {name: calls}}``."""
    names = sorted(primitive_classes())
    return {
        "with_rule": [n for n in names if n in batching_rules],
        "without_rule": [n for n in names if n not in batching_rules],
        "fallback_calls": fallback_calls(),
    }


# ---------------------------------------------------------------------------------------------
# Elementwise operators (shared with the math and nn families)


def elementwise_rule(broadcasting: bool = True):
    """The rule of an elementwise operator: batched inputs moved to the front and padded to the
    broadcast rank; unbatched ones left to broadcast (or, for operators that need equal shapes,
    broadcast along the batch). Python numbers and other constants pass as they are."""

    def rule(prim, args, dims, size):
        tensors = [(a, d) for a, d in zip(args, dims) if hasattr(a, "shape") and not isinstance(d, tuple)]
        rank = max((elem_rank(a, d) for a, d in tensors), default=0)
        new = []
        for a, d in zip(args, dims):
            if d is not None:
                new.append(pad_rank(to_front(a, d), rank))
            elif not broadcasting and hasattr(a, "shape") and hasattr(a, "dtype"):
                new.append(broadcast_axis(a, 0, size))
            else:
                new.append(a)
        return prim(*new), 0

    return rule


def reducing_elementwise_rule(prim, args, dims, size):
    """Elementwise operators whose outputs have their inputs' shapes (MaximumGrad: dx, dy summed over
    the broadcast): every input batched, so no batch element is summed into another."""
    shapes = [elem_shape(a, d) for a, d in zip(args, dims)]
    rank = max(len(s) for s in shapes)
    new = [pad_rank(materialize(a, d, size), rank) for a, d in zip(args, dims)]
    out = prim(*new)
    outs = out if isinstance(out, tuple) else (out,)
    fixed = tuple(_reshape(o, (size,) + shapes[i]) for i, o in enumerate(outs))
    return (fixed if isinstance(out, tuple) else fixed[0]), 0


_same_shape = elementwise_rule(broadcasting=False)
batching_rules.register(A.Select)(_same_shape)
batching_rules.register(A.ZerosLike, A.OnesLike)(elementwise_rule())


@batching_rules.register(A.Cast)
def _cast_rule(prim, args, dims, size):
    x, dtype = args
    return prim(x, dtype), dims[0]


# ---------------------------------------------------------------------------------------------
# Shape operators


@batching_rules.register(A.Reshape)
def _reshape_rule(prim, args, dims, size):
    x, shape = args
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return prim(to_front(x, dims[0]), (size,) + shape), 0


@batching_rules.register(A.Transpose)
def _transpose_rule(prim, args, dims, size):
    x, perm = args
    rank = elem_rank(x, dims[0])
    if len(perm) != rank:  # the operator's own error
        return prim(x, perm), dims[0]
    perm = (0,) + tuple(norm_axis(prim, p, rank, "perm") + 1 for p in perm)
    return prim(to_front(x, dims[0]), perm), 0


@batching_rules.register(A.ExpandDims)
def _expand_dims_rule(prim, args, dims, size):
    x, axis = args
    rank = elem_rank(x, dims[0]) + 1
    return prim(to_front(x, dims[0]), norm_axis(prim, axis, rank) + 1), 0


@batching_rules.register(A.Squeeze)
def _squeeze_rule(prim, args, dims, size):
    (x,) = args
    shape = elem_shape(x, dims[0])
    axis = prim.axis if isinstance(prim.axis, (tuple, list)) else (prim.axis,)
    if not axis:
        axis = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        axis = tuple(norm_axis(prim, a, len(shape)) for a in axis)
        for a in axis:
            if shape[a] != 1:
                raise ValueError(
                    f"For '{prim.name}', the dimension {a} of 'input_x' {list(shape)} to squeeze must be 1, "
                    f"but got {shape[a]}."
                )
    if not axis:
        return x, dims[0]
    return with_attrs(prim, axis=tuple(a + 1 for a in axis))(to_front(x, dims[0])), 0


@batching_rules.register(A.BroadcastTo)
def _broadcast_to_rule(prim, args, dims, size):
    (x,) = args
    shape = tuple(prim.shape)
    x = pad_rank(to_front(x, dims[0]), len(shape))
    return with_attrs(prim, shape=(size,) + shape)(x), 0


@batching_rules.register(A.Tile)
def _tile_rule(prim, args, dims, size):
    x, multiples = args
    multiples = tuple(multiples)
    x = pad_rank(to_front(x, dims[0]), len(multiples))
    return prim(x, (1,) + multiples), 0


@batching_rules.register(A.Concat, A.Stack)
def _join_rule(prim, args, dims, size):
    """Concat and Stack: every part batched on axis 0, the join one axis further (Stack's axis counts
    the new dim, so its element rank is one more)."""
    (xs,) = args
    ds = dims[0]
    rank = elem_rank(xs[0], ds[0]) + (1 if isinstance(prim, A.Stack) else 0)
    axis = norm_axis(prim, prim.axis, rank)
    parts = tuple(materialize(x, d, size) for x, d in zip(xs, ds))
    return with_attrs(prim, axis=axis + 1)(parts), 0


@batching_rules.register(A.Unstack)
def _unstack_rule(prim, args, dims, size):
    (x,) = args
    rank = elem_rank(x, dims[0])
    axis = norm_axis(prim, prim.axis, rank)
    return with_attrs(prim, axis=axis + 1)(to_front(x, dims[0])), 0


@batching_rules.register(A.Pad)
def _pad_rule(prim, args, dims, size):
    (x,) = args
    return with_attrs(prim, paddings=((0, 0), *prim.paddings))(to_front(x, dims[0])), 0


@batching_rules.register(A.Slice)
def _slice_rule(prim, args, dims, size):
    x, begin, size_arg = args
    return prim(to_front(x, dims[0]), (0,) + tuple(begin), (size,) + tuple(size_arg)), 0


@batching_rules.register(A.Argmax, A.Argmin)
def _argmax_rule(prim, args, dims, size):
    (x,) = args
    rank = elem_rank(x, dims[0])
    if rank == 0:  # a 0-d element: its one number along a unit axis
        return _reshape(with_attrs(prim, axis=-1)(pad_rank(to_front(x, dims[0]), 1)), (size,)), 0
    axis = norm_axis(prim, prim.axis, rank) - rank  # negative: the batch dimension in front changes nothing
    return with_attrs(prim, axis=axis)(to_front(x, dims[0])), 0


@batching_rules.register(A.Gather)
def _gather_rule(prim, args, dims, size):
    params, indices, axis = args
    dp, di = dims[0], dims[1]
    if isinstance(axis, int) and dp is not None and di is None:
        rank = elem_rank(params, dp)
        return prim(to_front(params, dp), indices, norm_axis(prim, axis, rank) + 1), 0
    if isinstance(axis, int) and dp is None and di is not None:
        # The batch axis of the indices lands where the gathered axis was.
        return prim(params, to_front(indices, di), axis), norm_axis(prim, axis, len(params.shape))
    return sequential(prim, args, dims, size, "batches 'input_params' or 'input_indices', not both")


@batching_rules.register(A.OneHot)
def _one_hot_rule(prim, args, dims, size):
    indices, depth, on_value, off_value = args
    if any(d is not None for d in dims[1:]):
        return sequential(prim, args, dims, size, "batches only 'indices'")
    axis = prim.axis if prim.axis == -1 else prim.axis + 1
    return with_attrs(prim, axis=axis)(to_front(indices, dims[0]), depth, on_value, off_value), 0


@batching_rules.register(A.TopK)
def _top_k_rule(prim, args, dims, size):
    x, k = args
    if elem_rank(x, dims[0]) == 0 or dims[1] is not None:
        return sequential(prim, args, dims, size, "batches only an 'input_x' of rank >= 1")
    return prim(to_front(x, dims[0]), k), 0  # along the last axis


@batching_rules.register(A.Sort)
def _sort_rule(prim, args, dims, size):
    (x,) = args
    rank = elem_rank(x, dims[0])
    if rank == 0:
        return sequential(prim, args, dims, size, "batches only an input of rank >= 1")
    axis = norm_axis(prim, prim.axis, rank) - rank
    return with_attrs(prim, axis=axis)(to_front(x, dims[0])), 0


@batching_rules.register(A.ReverseV2)
def _reverse_rule(prim, args, dims, size):
    (x,) = args
    rank = elem_rank(x, dims[0])
    axis = tuple(norm_axis(prim, a, rank) + 1 for a in prim.axis)
    return with_attrs(prim, axis=axis)(to_front(x, dims[0])), 0


@batching_rules.register(A.Split)
def _split_rule(prim, args, dims, size):
    (x,) = args
    rank = elem_rank(x, dims[0])
    return with_attrs(prim, axis=norm_axis(prim, prim.axis, rank) + 1)(to_front(x, dims[0])), 0


@batching_rules.register(A.StridedSlice)
def _strided_slice_rule(prim, args, dims, size):
    x, begin, end, strides = args
    if any(d is not None for d in dims[1:]):
        return sequential(prim, args, dims, size, "batches only 'input_x'")
    # The batch axis first, taken whole: every mask shifted past it, its bits set in begin/end_mask.
    shifted = with_attrs(
        prim,
        begin_mask=(prim.begin_mask << 1) | 1,
        end_mask=(prim.end_mask << 1) | 1,
        ellipsis_mask=prim.ellipsis_mask << 1,
        new_axis_mask=prim.new_axis_mask << 1,
        shrink_axis_mask=prim.shrink_axis_mask << 1,
    )
    return shifted(to_front(x, dims[0]), (0,) + tuple(begin), (size,) + tuple(end), (1,) + tuple(strides)), 0


@batching_rules.register(G.SliceGrad)
def _slice_grad_rule(prim, args, dims, size):
    dy, x, begin, size_arg = args
    dy, x = materialize(dy, dims[0], size), materialize(x, dims[1], size)  # x: only its shape is read
    return prim(dy, x, (0,) + tuple(begin), (size,) + tuple(size_arg)), 0


@batching_rules.register(G.StridedSliceGrad)
def _strided_slice_grad_rule(prim, args, dims, size):
    dy, shapex, begin, end, strides = args
    shifted = with_attrs(
        prim,
        begin_mask=(prim.begin_mask << 1) | 1,
        end_mask=(prim.end_mask << 1) | 1,
        ellipsis_mask=prim.ellipsis_mask << 1,
        new_axis_mask=prim.new_axis_mask << 1,
        shrink_axis_mask=prim.shrink_axis_mask << 1,
    )
    dy = to_front(dy, dims[0])
    return shifted(dy, (size,) + tuple(shapex), (0,) + tuple(begin), (size,) + tuple(end), (1,) + tuple(strides)), 0


@batching_rules.register(A.UnsortedSegmentSum)
def _unsorted_segment_sum_rule(prim, args, dims, size):
    x, ids, num_segments = args
    k = len(ids.shape) if hasattr(ids, "shape") else 0
    if dims[1] is not None or dims[2] is not None or k > elem_rank(x, dims[0]):
        return sequential(prim, args, dims, size, "batches only 'x'")
    # The batch axis right after the segmented axes: it lands after the segments in the output.
    return prim(moveaxis(x, dims[0], k), ids, num_segments), 1
