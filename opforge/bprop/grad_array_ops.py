"""bprops of the array operators (primitives/array_ops.py)."""

from __future__ import annotations

import numpy as np

from opforge.bprop._utils import sum_to_shape, zero_grads, zeros_like
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as P
from opforge.tensor import Tensor


@bprop_getters.register(P.Cast)
def get_bprop_cast(self):
    def bprop(x, dtype, out, dout):
        return F.cast(dout, x.dtype), None

    return bprop


@bprop_getters.register(P.Reshape)
def get_bprop_reshape(self):
    def bprop(x, shape, out, dout):
        return F.reshape(dout, x.shape), None

    return bprop


@bprop_getters.register(P.ExpandDims)
def get_bprop_expand_dims(self):
    def bprop(x, axis, out, dout):
        return F.reshape(dout, x.shape), None

    return bprop


@bprop_getters.register(P.Squeeze)
def get_bprop_squeeze(self):
    def bprop(x, out, dout):
        return (F.reshape(dout, x.shape),)

    return bprop


@bprop_getters.register(P.Transpose)
def get_bprop_transpose(self):
    transpose = P.Transpose()

    def bprop(x, perm, out, dout):
        inverse = [0] * len(perm)
        for i, p in enumerate(perm):
            inverse[p % len(perm)] = i
        return transpose(dout, tuple(inverse)), None

    return bprop


@bprop_getters.register(P.BroadcastTo)
def get_bprop_broadcast_to(self):
    def bprop(x, out, dout):
        return (sum_to_shape(dout, x.shape),)

    return bprop


def _zero_bprop(self):
    """Operators whose gradient is zero by definition (comparisons, indices, constants): zeros for
    every tensor input, None for the constant ones, so they can sit inside differentiated code."""

    def bprop(*args):
        return zero_grads(*args[:-2])

    return bprop


for _op in (P.ZerosLike, P.OnesLike, P.Fill, P.OneHot, P.Argmax, P.Range, P.Argmin):
    bprop_getters.register(_op)(_zero_bprop)


# -- data movement -----------------------------------------------------------------------------------


def _axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


@bprop_getters.register(P.Concat)
def get_bprop_concat(self):
    def bprop(x, out, dout):
        axis = _axis(self.axis, len(x[0].shape))
        slice_ = P.Slice()
        grads, start = [], 0
        for t in x:
            begin = [0] * len(t.shape)
            begin[axis] = start
            grads.append(slice_(dout, tuple(begin), tuple(t.shape)))
            start += t.shape[axis]
        return (tuple(grads),)

    return bprop


@bprop_getters.register(P.Stack)
def get_bprop_stack(self):
    def bprop(x, out, dout):
        parts = P.Unstack(self.axis)(dout)
        return (tuple(parts) if isinstance(parts, tuple) else (parts,),)

    return bprop


def _tuple_dout(dout, out) -> tuple:
    """The sensitivities of a multi-output op as a tuple (zeros where an output got none)."""
    douts = dout if isinstance(dout, tuple) else (dout,)
    outs = out if isinstance(out, tuple) else (out,)
    return tuple(zeros_like(o) if d is None else d for d, o in zip(douts, outs))


@bprop_getters.register(P.Split)
def get_bprop_split(self):
    concat = P.Concat(self.axis)

    def bprop(x, out, dout):
        return (concat(_tuple_dout(dout, out)),)

    return bprop


@bprop_getters.register(P.Unstack)
def get_bprop_unstack(self):
    stack = P.Stack(self.axis)

    def bprop(x, out, dout):
        return (stack(_tuple_dout(dout, out)),)

    return bprop


@bprop_getters.register(P.Slice)
def get_bprop_slice(self):
    slice_grad = G.SliceGrad()

    def bprop(x, begin, size, out, dout):
        return slice_grad(dout, x, begin, size), None, None

    return bprop


@bprop_getters.register(G.SliceGrad)
def get_bprop_slice_grad(self):
    slice_ = P.Slice()

    def bprop(dy, x, begin, size, out, dout):
        return slice_(dout, begin, size), zeros_like(x), None, None

    return bprop


def _masks(prim) -> dict:
    names = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
    return {n: getattr(prim, n) for n in names}


@bprop_getters.register(P.StridedSlice)
def get_bprop_strided_slice(self):
    grad = G.StridedSliceGrad(**_masks(self))

    def bprop(x, begin, end, strides, out, dout):
        return grad(dout, tuple(x.shape), begin, end, strides), None, None, None

    return bprop


@bprop_getters.register(G.StridedSliceGrad)
def get_bprop_strided_slice_grad(self):
    strided_slice = P.StridedSlice(**_masks(self))

    def bprop(dy, shapex, begin, end, strides, out, dout):
        return strided_slice(dout, begin, end, strides), None, None, None, None

    return bprop


@bprop_getters.register(P.Pad)
def get_bprop_pad(self):
    slice_ = P.Slice()
    begin = tuple(b for b, _ in self.paddings)

    def bprop(x, out, dout):
        return (slice_(dout, begin, tuple(x.shape)),)

    return bprop


@bprop_getters.register(P.ReverseV2)
def get_bprop_reverse_v2(self):
    reverse = P.ReverseV2(self.axis)

    def bprop(x, out, dout):
        return (reverse(dout),)

    return bprop


@bprop_getters.register(P.Tile)
def get_bprop_tile(self):
    def bprop(x, multiples, out, dout):
        padded = (1,) * (len(multiples) - len(x.shape)) + tuple(x.shape)
        interleaved = []
        for m, d in zip(multiples, padded):
            interleaved += [m, d]
        summed = F.reduce_sum_op()(F.reshape(dout, tuple(interleaved)), tuple(range(0, 2 * len(padded), 2)))
        return F.reshape(summed, tuple(x.shape)), None

    return bprop


@bprop_getters.register(P.Select)
def get_bprop_select(self):
    select = P.Select()

    def bprop(cond, x, y, out, dout):
        zeros = zeros_like(dout)
        return zeros_like(cond), select(cond, dout, zeros), select(cond, zeros, dout)

    return bprop


@bprop_getters.register(P.Gather)
def get_bprop_gather(self):
    transpose = P.Transpose()
    sums = {}  # (gathered axis, ranks of the moved dout and of the indices) -> UnsortedSegmentSum

    def segment_sum(a: int, moved_rank: int, ni: int):
        key = (a, moved_rank, ni)
        op = sums.get(key)
        if op is None:
            op = sums[key] = P.UnsortedSegmentSum()
            table = getattr(self, "in_strategy", None)
            if table is not None:  # semi-auto parallel: the gradient laid out as the table (each rank its block),
                s = table[0]  # the moved dout split as the table's dims other than the gathered one
                rest = (*s[:a], *s[a + 1 :])
                op.shard(((1,) * ni + rest, (1,) * ni), out_strategy=((s[a], *rest),))
        return op

    def bprop(params, indices, axis, out, dout):
        nd, ni = len(params.shape), len(indices.shape)
        a = _axis(axis, nd)
        # dout is params[:a] + indices + params[a+1:]: bring the indices' dims first, sum rows by index
        # into params.shape[a] rows, and put that dim back at a.
        perm = tuple(range(a, a + ni)) + tuple(range(a)) + tuple(range(a + ni, len(dout.shape)))
        moved = transpose(dout, perm) if perm != tuple(range(len(perm))) else dout
        summed = segment_sum(a, len(perm), ni)(moved, indices, params.shape[a])
        back = tuple(range(1, a + 1)) + (0,) + tuple(range(a + 1, nd))
        grad = transpose(summed, back) if back != tuple(range(nd)) else summed
        return grad, zeros_like(indices), None

    return bprop


@bprop_getters.register(P.UnsortedSegmentSum)
def get_bprop_unsorted_segment_sum(self):
    gather = P.Gather()

    def bprop(x, segment_ids, num_segments, out, dout):
        # Every id must be in [0, num_segments) here (Gather says which is not).
        return gather(dout, segment_ids, 0), zeros_like(segment_ids), None

    return bprop


@bprop_getters.register(P.GatherNd)
def get_bprop_gather_nd(self):
    segment_sum = P.UnsortedSegmentSum()

    def bprop(x, indices, out, dout):
        k = indices.shape[-1]
        x_shape = tuple(x.shape)
        rows = 1
        for d in indices.shape[:-1]:
            rows *= d
        inner = 1
        for d in x_shape[k:]:
            inner *= d
        lead = 1
        for d in x_shape[:k]:
            lead *= d
        # Each index row as one offset into the flattened leading k dims, then a segment sum of dout's rows.
        strides = [1] * k
        for d in range(k - 2, -1, -1):
            strides[d] = strides[d + 1] * x_shape[d + 1]
        stride_t = Tensor(np.asarray(strides, indices.dtype.np_dtype).reshape(k, 1), device=indices.device)
        flat_idx = F.reshape(F.matmul(F.reshape(indices, (rows, k)), stride_t), (rows,)) if k else None
        if flat_idx is None:
            flat_idx = Tensor(np.zeros((rows,), indices.dtype.np_dtype), device=indices.device)
        summed = segment_sum(F.reshape(dout, (rows, inner)), flat_idx, lead)
        return F.reshape(summed, x_shape), zeros_like(indices)

    return bprop


@bprop_getters.register(P.TensorScatterUpdate)
def get_bprop_tensor_scatter_update(self):
    # The written slices take their gradient from dout there; x keeps dout elsewhere.
    def bprop(x, indices, updates, out, dout):
        dx = F.tensor_scatter_update(dout, indices, zeros_like(updates))
        return dx, zeros_like(indices), F.gather_nd(dout, indices)

    return bprop


@bprop_getters.register(P.TensorScatterAdd)
def get_bprop_tensor_scatter_add(self):
    def bprop(x, indices, updates, out, dout):
        return dout, zeros_like(indices), F.gather_nd(dout, indices)

    return bprop


@bprop_getters.register(P.TensorScatterSub)
def get_bprop_tensor_scatter_sub(self):
    def bprop(x, indices, updates, out, dout):
        return dout, zeros_like(indices), F.neg(F.gather_nd(dout, indices))

    return bprop


@bprop_getters.register(P.TensorScatterMul)
def get_bprop_tensor_scatter_mul(self):
    # out = x * u at the indexed slices: dx scales dout by the same updates; du = dout * x there (MindSpore's
    # rule: exact when the rows' indices are distinct, as a product of repeated rows would need the others).
    def bprop(x, indices, updates, out, dout):
        dx = F.tensor_scatter_mul(dout, indices, updates)
        return dx, zeros_like(indices), F.mul(F.gather_nd(dout, indices), F.gather_nd(x, indices))

    return bprop


@bprop_getters.register(P.TensorScatterDiv)
def get_bprop_tensor_scatter_div(self):
    # out = x / (u_1 ... u_k) at a slice: dx = dout / (u_1 ... u_k), du_j = -dout * out / u_j (repeated rows too).
    def bprop(x, indices, updates, out, dout):
        dx = F.tensor_scatter_div(dout, indices, updates)
        du = F.neg(F.div(F.gather_nd(F.mul(dout, out), indices), updates))
        return dx, zeros_like(indices), du

    return bprop


def _scatter_extreme_bprop(x, indices, updates, out, dout):
    """The gradient of TensorScatterMax/Min: dout goes to the operands equal to the result (x or an update
    row), split evenly among ties, as ReduceMax's bprop splits it."""
    x_wins = F.cast(F.equal(x, out), dout.dtype)
    u_wins = F.cast(F.equal(updates, F.gather_nd(out, indices)), dout.dtype)
    ties = F.maximum(F.tensor_scatter_add(x_wins, indices, u_wins), F.ones_like(x_wins))
    share = F.div(dout, ties)
    return F.mul(share, x_wins), zeros_like(indices), F.mul(F.gather_nd(share, indices), u_wins)


@bprop_getters.register(P.TensorScatterMax)
def get_bprop_tensor_scatter_max(self):
    return _scatter_extreme_bprop


@bprop_getters.register(P.TensorScatterMin)
def get_bprop_tensor_scatter_min(self):
    return _scatter_extreme_bprop


def _scatter_last(dvalues, indices, x_shape):
    """Zeros of ``x_shape`` with ``dvalues[..., j]`` added at ``[..., indices[..., j]]`` (the last dim)."""
    n = x_shape[-1]
    k = indices.shape[-1]
    rows = 1
    for d in x_shape[:-1]:
        rows *= d
    offsets = Tensor((np.arange(rows, dtype=np.int64) * n).astype(np.int32).reshape(rows, 1), device=indices.device)
    flat = F.reshape(F.add(F.reshape(indices, (rows, k)), offsets), (rows * k,))
    summed = P.UnsortedSegmentSum()(F.reshape(dvalues, (rows * k,)), flat, rows * n)
    return F.reshape(summed, tuple(x_shape))


@bprop_getters.register(P.TopK)
def get_bprop_top_k(self):
    def bprop(x, k, out, dout):
        dvalues = _tuple_dout(dout, out)[0]
        return _scatter_last(dvalues, out[1], tuple(x.shape)), None

    return bprop


@bprop_getters.register(P.Sort)
def get_bprop_sort(self):
    transpose = P.Transpose()

    def bprop(x, out, dout):
        dvalues = _tuple_dout(dout, out)[0]
        indices = out[1]
        nd = len(x.shape)
        a = _axis(self.axis, nd)
        if a == nd - 1:
            return (_scatter_last(dvalues, indices, tuple(x.shape)),)
        perm = tuple(d for d in range(nd) if d != a) + (a,)  # the sorted dim last
        inverse = [0] * nd
        for i, p in enumerate(perm):
            inverse[p] = i
        moved_shape = tuple(x.shape[p] for p in perm)
        grad = _scatter_last(transpose(dvalues, perm), transpose(indices, perm), moved_shape)
        return (transpose(grad, tuple(inverse)),)

    return bprop
