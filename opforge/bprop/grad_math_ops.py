"""bprops of the math operators (primitives/math_ops.py) and of their grad operators (SqrtGrad,
MaximumGrad, MinimumGrad in primitives/_grad_ops.py), for higher-order gradients."""

from __future__ import annotations

import math

import numpy as np

from opforge.bprop._utils import broadcast_to, conj, grad_for, needs_input_grad, reduced_shape, sum_to_shape, zero_grads
from opforge.bprop.registry import bprop_getters
from opforge.ops import functional as F
from opforge.primitives import _grad_ops as G
from opforge.primitives import array_ops as A
from opforge.primitives import math_ops as P
from opforge.tensor import Tensor


@bprop_getters.register(P.Add)
def get_bprop_add(self):
    def bprop(x, y, out, dout):
        dx = grad_for(x, dout) if needs_input_grad(0) else None
        dy = grad_for(y, dout) if needs_input_grad(1) else None
        return dx, dy

    return bprop


@bprop_getters.register(P.Sub)
def get_bprop_sub(self):
    def bprop(x, y, out, dout):
        dx = grad_for(x, dout) if needs_input_grad(0) else None
        dy = grad_for(y, F.neg(dout)) if isinstance(y, Tensor) and needs_input_grad(1) else None
        return dx, dy

    return bprop


@bprop_getters.register(P.Mul)
def get_bprop_mul(self):
    def bprop(x, y, out, dout):
        # complex: dx = dout * conj(y), dy = dout * conj(x)
        dx = grad_for(x, F.mul(dout, conj(y))) if isinstance(x, Tensor) and needs_input_grad(0) else None
        dy = grad_for(y, F.mul(dout, conj(x))) if isinstance(y, Tensor) and needs_input_grad(1) else None
        return dx, dy

    return bprop


@bprop_getters.register(P.RealDiv)
def get_bprop_real_div(self):
    # complex: dx = dout / conj(y), dy = -dx * conj(out)
    def bprop(x, y, out, dout):
        dx = F.div(dout, conj(y))
        dy = grad_for(y, F.neg(F.mul(dx, conj(out)))) if isinstance(y, Tensor) and needs_input_grad(1) else None
        return (grad_for(x, dx) if needs_input_grad(0) else None), dy

    return bprop


@bprop_getters.register(P.Neg)
def get_bprop_neg(self):
    def bprop(x, out, dout):
        return (F.neg(dout),)

    return bprop


@bprop_getters.register(P.Exp)
def get_bprop_exp(self):
    def bprop(x, out, dout):
        return (F.mul(dout, conj(out)),)

    return bprop


@bprop_getters.register(P.Sin)
def get_bprop_sin(self):
    cos = P.Cos()

    def bprop(x, out, dout):
        return (F.mul(dout, conj(cos(x))),)

    return bprop


@bprop_getters.register(P.Cos)
def get_bprop_cos(self):
    sin = P.Sin()

    def bprop(x, out, dout):
        return (F.neg(F.mul(dout, conj(sin(x)))),)

    return bprop


@bprop_getters.register(P.Log1p)
def get_bprop_log1p(self):
    def bprop(x, out, dout):
        return (F.div(dout, F.add(x, 1.0)),)

    return bprop


@bprop_getters.register(P.Expm1)
def get_bprop_expm1(self):
    def bprop(x, out, dout):
        return (F.mul(dout, F.add(out, 1.0)),)

    return bprop


@bprop_getters.register(P.Reciprocal)
def get_bprop_reciprocal(self):
    # d(1/x) = -1/x^2 = -out^2
    def bprop(x, out, dout):
        return (F.neg(F.mul(dout, F.mul(out, out))),)

    return bprop


@bprop_getters.register(P.Rsqrt)
def get_bprop_rsqrt(self):
    # d(x^-1/2) = -x^-3/2 / 2 = -out^3 / 2
    def bprop(x, out, dout):
        return (F.mul(dout, F.mul(F.mul(out, F.mul(out, out)), -0.5)),)

    return bprop


@bprop_getters.register(P.Log)
def get_bprop_log(self):
    def bprop(x, out, dout):
        return (F.div(dout, conj(x)),)

    return bprop


def _matmul_grads(cls, ta: bool, tb: bool) -> tuple:
    """``(grad_x, grad_y)`` of ``out = op(x) @ op(y)`` (``cls``: MatMul, or BatchMatMul on the last two
    dims), each a function of ``(x, y, dout)``; every case keeps the products in layouts BLAS takes directly."""
    if not ta and not tb:
        dx_op, dy_op = cls(transpose_b=True), cls(transpose_a=True)
        return (lambda x, y, d: dx_op(d, y)), (lambda x, y, d: dy_op(x, d))
    if ta and not tb:
        dx_op, dy_op = cls(transpose_b=True), cls()
        return (lambda x, y, d: dx_op(y, d)), (lambda x, y, d: dy_op(x, d))
    if not ta and tb:
        dx_op, dy_op = cls(), cls(transpose_a=True)
        return (lambda x, y, d: dx_op(d, y)), (lambda x, y, d: dy_op(d, x))
    both = cls(transpose_a=True, transpose_b=True)
    return (lambda x, y, d: both(y, d)), (lambda x, y, d: both(d, x))


@bprop_getters.register(P.MatMul)
def get_bprop_matmul(self):
    grad_x, grad_y = _matmul_grads(P.MatMul, self.transpose_a, self.transpose_b)

    def bprop(x, y, out, dout):
        # Mixed dtypes were promoted in the call (and are again in the products): cast back per input.
        # A product nobody needs (a layer's input gradient when the input is data) is not computed.
        dx = grad_for(x, grad_x(x, y, dout)) if needs_input_grad(0) else None
        dy = grad_for(y, grad_y(x, y, dout)) if needs_input_grad(1) else None
        return dx, dy

    return bprop


def _broadcast_back(dout, x, axis):
    """dout of a reduction, broadcast back over the reduced axes of ``x``."""
    x_shape = x._meta[1]
    if not x_shape:
        return dout
    if not dout._meta[1]:  # a full reduction's 0-d dout broadcasts as it is
        return broadcast_to(dout, x_shape)
    kept = reduced_shape(x_shape, axis)
    shape = dout._meta[1]
    # dout of shape ``kept`` without its leading 1s (the reduced leading axes, or all of them, of a
    # reduction without keep_dims) broadcasts as it is: no Reshape.
    lead = len(kept) - len(shape)
    if shape != kept and not (lead > 0 and kept[lead:] == shape and all(d == 1 for d in kept[:lead])):
        dout = F.reshape(dout, kept)
    return broadcast_to(dout, x_shape)


@bprop_getters.register(P.ReduceSum)
def get_bprop_reduce_sum(self):
    def bprop(x, axis, out, dout):
        return _broadcast_back(dout, x, axis), None

    return bprop


@bprop_getters.register(P.ReduceMean)
def get_bprop_reduce_mean(self):
    def bprop(x, axis, out, dout):
        count = math.prod(x.shape) // max(1, math.prod(out.shape))
        return F.div(_broadcast_back(dout, x, axis), float(max(count, 1))), None

    return bprop


# Elementwise math added with the second slice.


@bprop_getters.register(P.Square)
def get_bprop_square(self):
    def bprop(x, out, dout):
        return (F.mul(F.mul(dout, conj(x)), 2.0),)

    return bprop


@bprop_getters.register(P.Sqrt)
def get_bprop_sqrt(self):
    sqrt_grad = G.SqrtGrad()

    def bprop(x, out, dout):
        if out.dtype.kind == "c":  # dx = dout / conj(2 out) (SqrtGrad is real)
            return (F.div(dout, conj(F.mul(out, 2.0))),)
        return (sqrt_grad(out, dout),)

    return bprop


@bprop_getters.register(G.SqrtGrad)
def get_bprop_sqrt_grad(self):
    sqrt_grad = G.SqrtGrad()

    def bprop(y, dy, out, dout):
        # out = dy / (2 y): d/dy = -out / y, d/d(dy) = 1 / (2 y).
        d_y = F.neg(F.div(F.mul(dout, out), y)) if needs_input_grad(0) else None
        return d_y, (sqrt_grad(y, dout) if needs_input_grad(1) else None)

    return bprop


def _in_dtype(v, like: Tensor):
    """An operand of a promoting binary op as the grad op takes it: a Tensor of ``like``'s dtype."""
    dtype, _, device = like._meta
    if not isinstance(v, Tensor):
        return Tensor._from_array(device.scalar(v, dtype.np_dtype), dtype, device)  # a weak Python scalar
    return v if v.dtype is dtype else F.cast(v, dtype)


def _min_max_bprop(grad_op_cls):
    def getter(self):
        grad_op = grad_op_cls()

        def bprop(x, y, out, dout):
            # The grad op sends dout to the input the forward picked (x on ties), summed to x's and y's shapes.
            dx, dy = grad_op(_in_dtype(x, dout), _in_dtype(y, dout), dout)
            return (grad_for(x, dx) if needs_input_grad(0) else None), (
                grad_for(y, dy) if needs_input_grad(1) else None
            )

        return bprop

    return getter


def _min_max_grad_bprop(grad_op_cls):
    def getter(self):
        grad_op = grad_op_cls(grad_x=self.grad_x, grad_y=self.grad_y)

        def bprop(x, y, dout_fwd, out, dout):
            # out = (sum_to_x(dout_fwd * m), sum_to_y(dout_fwd * (1 - m))) with a piecewise-constant mask m:
            # no gradient for x and y; for dout_fwd, the incoming gradients broadcast back and routed by
            # the same mask (x and y broadcast to dout_fwd's shape first, so nothing is summed).
            d_dx, d_dy = dout
            ddout = None
            if needs_input_grad(2):
                shape = dout_fwd.shape
                bx, by = broadcast_to(x, shape), broadcast_to(y, shape)
                ddout = F.add(
                    grad_op(bx, by, broadcast_to(d_dx, shape))[0], grad_op(bx, by, broadcast_to(d_dy, shape))[1]
                )
            return (*zero_grads(x, y), ddout)

        return bprop

    return getter


bprop_getters.register(P.Maximum)(_min_max_bprop(G.MaximumGrad))
bprop_getters.register(P.Minimum)(_min_max_bprop(G.MinimumGrad))
bprop_getters.register(G.MaximumGrad)(_min_max_grad_bprop(G.MaximumGrad))
bprop_getters.register(G.MinimumGrad)(_min_max_grad_bprop(G.MinimumGrad))


def _reduce_select_bprop(self):
    equal = P.Equal()
    reduce_sum = P.ReduceSum(keep_dims=True)

    def bprop(x, axis, out, dout):
        # dout goes to the positions equal to the max (min), split evenly between ties.
        kept = reduced_shape(x.shape, axis) if x.ndim else ()
        out_b = _broadcast_back(out, x, axis)
        mask = F.cast(equal(x, out_b), dout.dtype)
        count = reduce_sum(mask, axis) if x.ndim else mask
        share = F.div(F.reshape(dout, kept) if x.ndim else dout, count)
        return F.mul(mask, broadcast_to(share, x.shape)), None

    return bprop


bprop_getters.register(P.ReduceMax)(_reduce_select_bprop)
bprop_getters.register(P.ReduceMin)(_reduce_select_bprop)


@bprop_getters.register(P.ReduceProd)
def get_bprop_reduce_prod(self):
    equal = P.Equal()
    reduce_sum = P.ReduceSum(keep_dims=True)
    reduce_prod = P.ReduceProd(keep_dims=True)

    def bprop(x, axis, out, dout):
        # d out / d x_i = the product of the other elements of x_i's slice, computed without dividing
        # by zero: with z = (x == 0) and p = the product of the slice with its zeros replaced by 1,
        # it is p / x_i where the slice has no zero, p at the one zero of a slice with one zero, else 0.
        if not x.ndim:
            return dout, None  # a 0-d input is its own product
        z = F.cast(equal(x, F.zeros_like(x)), x.dtype)
        safe = F.add(F.mul(x, F.sub(1.0, z)), z)
        p = reduce_prod(safe, axis)
        zeros = reduce_sum(z, axis)
        none = F.cast(equal(zeros, F.zeros_like(zeros)), x.dtype)
        one = F.cast(equal(zeros, F.ones_like(zeros)), x.dtype)
        nonzero_part = F.mul(F.mul(F.sub(1.0, z), F.div(broadcast_to(p, x.shape), safe)), broadcast_to(none, x.shape))
        others = F.add(nonzero_part, F.mul(z, broadcast_to(F.mul(p, one), x.shape)))
        return F.mul(others, _broadcast_back(dout, x, axis)), None

    return bprop


@bprop_getters.register(P.ReduceAll)
@bprop_getters.register(P.ReduceAny)
def get_bprop_reduce_logical(self):
    def bprop(x, axis, out, dout):
        return zero_grads(x, axis)

    return bprop


@bprop_getters.register(P.Equal)
def get_bprop_equal(self):
    def bprop(x, y, out, dout):
        return zero_grads(x, y)

    return bprop


@bprop_getters.register(P.AddN)
def get_bprop_add_n(self):
    def bprop(x, out, dout):
        return (tuple(dout for _ in x),)

    return bprop


@bprop_getters.register(P.BatchMatMul)
def get_bprop_batch_matmul(self):
    # MatMul's four cases on the last two dims; broadcast batch dims summed back to each input's shape.
    grad_x, grad_y = _matmul_grads(P.BatchMatMul, self.transpose_a, self.transpose_b)

    def bprop(x, y, out, dout):
        dx = grad_for(x, sum_to_shape(grad_x(x, y, dout), x.shape)) if needs_input_grad(0) else None
        dy = grad_for(y, sum_to_shape(grad_y(x, y, dout), y.shape)) if needs_input_grad(1) else None
        return dx, dy

    return bprop


@bprop_getters.register(P.CumSum)
def get_bprop_cumsum(self):
    # The adjoint of a cumulative sum is the cumulative sum the other way round.
    backward = P.CumSum(exclusive=self.exclusive, reverse=not self.reverse)

    def bprop(x, axis, out, dout):
        return backward(dout, axis), None

    return bprop


@bprop_getters.register(P.Cummax, P.Cummin)
def get_bprop_extreme_scan(self):
    # Each dvalues_k flows to the element its running extreme came from: a segment sum of dout over the
    # flattened positions, position k's segment being k moved along the axis to indices_k.
    segment_sum = A.UnsortedSegmentSum()

    def bprop(x, out, dout):
        indices, dvalues = out[1], dout[0]
        shape = tuple(x.shape)
        axis = self.axis % len(shape)
        stride = math.prod(shape[axis + 1 :])
        along = np.arange(shape[axis], dtype=np.int64).reshape((-1,) + (1,) * (len(shape) - axis - 1))
        base = np.arange(math.prod(shape), dtype=np.int64).reshape(shape) - along * stride
        ids = F.reshape(F.add(F.mul(indices, stride), Tensor(base, device=indices.device)), (-1,))
        dx = segment_sum(F.reshape(dvalues, (-1,)), ids, math.prod(shape))
        return (F.reshape(dx, shape),)

    return bprop


@bprop_getters.register(P.CumProd)
def get_bprop_cumprod(self):
    # MindSpore's rule: dx_i = sum over k of dout_k * out_k / x_i for the k whose product holds x_i, a
    # cumulative sum the other way round divided by x (non-finite where x is 0).
    backward = P.CumSum(exclusive=self.exclusive, reverse=not self.reverse)

    def bprop(x, axis, out, dout):
        return backward(dout * out, axis) / x, None

    return bprop


@bprop_getters.register(P.Conj)
def get_bprop_conj(self):
    # conj is R-linear: its adjoint is conj itself.
    def bprop(x, out, dout):
        return (F.conj(dout),)

    return bprop
