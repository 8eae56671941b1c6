"""MindSpore 1.x cells the model zoo's research programs still use: ``nn.MatMul`` (broadcasting matrix product
of any ranks), ``nn.Norm`` (the Euclidean norm over axes), ``nn.InstanceNorm1d`` and ``nn.InstanceNorm3d``
(``nn.InstanceNorm2d``'s rule over [N, C, L] and [N, C, D, H, W]) and ``nn.ForwardValueAndGrad`` (the loss and
its gradients in one call). All compute with primitives, so they differentiate, run under ``jit`` and on both
backends."""

from __future__ import annotations

import functools
from types import FunctionType, MethodType

from opforge import ops
from opforge.bprop import stop_gradient
from opforge.bprop.grad_operation import GradOperation
from opforge.common.parameter import ParameterTuple
from opforge.nn.cell import Cell
from opforge.nn.normalization import InstanceNorm2d, _normalize
from opforge.primitives.validator import Validator as validator

__all__ = ["MatMul", "Norm", "InstanceNorm1d", "InstanceNorm3d", "ForwardValueAndGrad"]


def _broadcast_batch(cls: str, shape1: tuple, shape2: tuple) -> tuple:
    """The broadcast batch dims (all but the last two) of two shapes of rank >= 2, NumPy's rule."""
    batch1, batch2 = shape1[:-2], shape2[:-2]
    out = []
    for i in range(1, max(len(batch1), len(batch2)) + 1):
        a = batch1[-i] if i <= len(batch1) else 1
        b = batch2[-i] if i <= len(batch2) else 1
        if a != b and 1 not in (a, b):
            raise ValueError(f"For '{cls}', the x1 shape {list(shape1)} and x2 shape {list(shape2)} can not broadcast.")
        out.append(b if a == 1 else a)
    return tuple(reversed(out))


@functools.lru_cache(maxsize=16)
def _matmul(kind, transpose_a: bool, transpose_b: bool):
    return kind(transpose_a, transpose_b)


class MatMul(Cell):
    r"""MindSpore 1.x's ``nn.MatMul(transpose_x1=False, transpose_x2=False)``: the matrix product of ``x1`` and
    ``x2`` of any ranks, as ``np.matmul`` with transposes of the last two dims:

    - two 1-D inputs: their dot product (a 0-D Tensor: ReduceSum of Mul);
    - a 1-D ``x1`` is a row (1, n), a 1-D ``x2`` a column (n, 1), that dim removed from the result (the
      transpose flag of a 1-D input is ignored);
    - two 2-D inputs: MatMul; otherwise BatchMatMul, the batch dims (all but the last two) broadcast (BroadcastTo).

    ``ValueError`` where x1's columns (after its transpose) differ from x2's rows, or the batch dims do not
    broadcast; ``TypeError`` for a non-bool flag."""

    def __init__(self, transpose_x1=False, transpose_x2=False):
        super().__init__()
        cls = "MatMul"
        self.transpose_x1 = validator.check_value_type("transpose_x1", transpose_x1, [bool], cls)
        self.transpose_x2 = validator.check_value_type("transpose_x2", transpose_x2, [bool], cls)
        self.reduce_sum = ops.ReduceSum()

    def extend_repr(self) -> str:
        return f"transpose_x1={self.transpose_x1}, transpose_x2={self.transpose_x2}"

    def construct(self, x1, x2):
        r1, r2 = x1.ndim, x2.ndim
        if r1 == 0 or r2 == 0:
            raise ValueError(f"For 'MatMul', the inputs must have rank >= 1, but got shapes {x1.shape} and {x2.shape}.")
        cols = x1.shape[0] if r1 == 1 else x1.shape[-2 if self.transpose_x1 else -1]
        rows = x2.shape[0] if r2 == 1 else x2.shape[-1 if self.transpose_x2 else -2]
        if cols != rows:
            raise ValueError(
                "For 'MatMul', the column of matrix dimensions of x1 should be equal to the row of matrix dimensions "
                f"of x2, but got {cols} and {rows}."
            )
        if r1 == 1 and r2 == 1:
            return self.reduce_sum(x1 * x2, -1)
        if r1 == 1:
            x1 = ops.expand_dims(x1, 0)
        if r2 == 1:
            x2 = ops.expand_dims(x2, 1)
        flags = (r1 > 1 and self.transpose_x1, r2 > 1 and self.transpose_x2)  # (a 1-D input is not transposed)
        if x1.ndim == 2 and x2.ndim == 2:
            out = _matmul(ops.MatMul, *flags)(x1, x2)
        else:
            batch = _broadcast_batch("MatMul", tuple(x1.shape), tuple(x2.shape))
            if tuple(x1.shape[:-2]) != batch:
                x1 = ops.broadcast_to(x1, batch + tuple(x1.shape[-2:]))
            if tuple(x2.shape[:-2]) != batch:
                x2 = ops.broadcast_to(x2, batch + tuple(x2.shape[-2:]))
            out = _matmul(ops.BatchMatMul, *flags)(x1, x2)
        if r1 == 1:
            out = ops.squeeze(out, -2)
        if r2 == 1:
            out = ops.squeeze(out, -1)
        return out


class Norm(Cell):
    r"""MindSpore 1.x's ``nn.Norm(axis=(), keep_dims=False)``: :math:`\sqrt{\sum x^2}` over ``axis`` (an int or
    a tuple; () is every dim), the reduced dims kept with size 1 when ``keep_dims``, else squeezed (with
    ``axis=()`` every size-1 dim goes, as MindSpore's Squeeze of ()). Square, ReduceSum, Sqrt, Squeeze."""

    def __init__(self, axis=(), keep_dims=False):
        super().__init__()
        validator.check_value_type("keep_dims", keep_dims, [bool], "Norm")
        validator.check_value_type("axis", axis, [int, tuple], "Norm")
        self.axis = axis
        self.keep_dims = keep_dims
        self.reduce_sum = ops.ReduceSum(True)
        self.squeeze = ops.Squeeze(axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}, keep_dims={self.keep_dims}"

    def construct(self, x):
        out = ops.sqrt(self.reduce_sum(ops.square(x), self.axis))
        return out if self.keep_dims else self.squeeze(out)


class _InstanceNormNd(InstanceNorm2d):
    """``InstanceNorm2d``'s parameters and rule over the spatial dims of a rank-``_rank`` input."""

    _rank = 4
    _layout = "(N, C, H, W)"

    def construct(self, x):
        shape = tuple(x.shape)
        cls = type(self).__name__
        if len(shape) != self._rank or shape[1] != self.num_features:
            layout = self._layout.replace("C", str(self.num_features))
            raise ValueError(f"For '{cls}', the input must have shape {layout}, but got {list(shape)}.")
        axes = tuple(range(2, self._rank))
        y, mean, var = _normalize(x, axes, self.eps)
        if self.training:
            count = 1
            for d in shape[2:]:
                count *= d
            self._update_moving(mean, var, count, (0, *axes))
        scale = ops.Reshape()(self.gamma, (-1,) + (1,) * (self._rank - 2))
        shift = ops.Reshape()(self.beta, (-1,) + (1,) * (self._rank - 2))
        return y * scale + shift

    def _update_moving(self, mean, var, count: int, axes: tuple) -> None:
        dtype = self.moving_mean.dtype
        mean = ops.Cast()(ops.ReduceMean()(stop_gradient(mean), axes), dtype)
        unbiased = ops.ReduceMean()(stop_gradient(var), axes) * (count / max(count - 1, 1))
        m = self.momentum
        ops.Assign()(self.moving_mean, self.moving_mean * (1.0 - m) + mean * m)
        ops.Assign()(self.moving_variance, self.moving_variance * (1.0 - m) + ops.Cast()(unbiased, dtype) * m)


class InstanceNorm1d(_InstanceNormNd):
    r"""MindSpore's ``nn.InstanceNorm1d(num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones",
    beta_init="zeros")``: ``nn.InstanceNorm2d``'s normalisation (each sample's channel over its L positions,
    scaled by ``gamma`` and shifted by ``beta``; the moving statistics updated in training) of ``x`` [N, C, L]."""

    _rank = 3
    _layout = "(N, C, L)"


class InstanceNorm3d(_InstanceNormNd):
    r"""MindSpore's ``nn.InstanceNorm3d(num_features, eps=1e-5, momentum=0.1, affine=True, gamma_init="ones",
    beta_init="zeros")``: ``nn.InstanceNorm2d``'s normalisation (each sample's channel over its D x H x W
    positions) of ``x`` [N, C, D, H, W]."""

    _rank = 5
    _layout = "(N, C, D, H, W)"


class ForwardValueAndGrad(Cell):
    """MindSpore's ``nn.ForwardValueAndGrad(network, weights=None, get_all=False, get_by_list=False,
    sens_param=False)``: ``(network(*inputs), gradients)``, the gradients those of ``GradOperation(get_all,
    get_by_list, sens_param)`` of ``network`` (with respect to the first input; every input with ``get_all``;
    ``weights`` with ``get_by_list``; both as ``(input grads, weight grads)``). With ``sens_param`` the last
    input is the sensitivity (the output's gradient) and the network gets the others. ``network`` a Cell or a
    function; ``TypeError`` for non-bool flags and for ``get_by_list`` without a sequence of Parameters."""

    def __init__(self, network, weights=None, get_all=False, get_by_list=False, sens_param=False):
        super().__init__(auto_prefix=False)
        cls = "ForwardValueAndGrad"
        if not isinstance(network, (Cell, FunctionType, MethodType)):
            raise TypeError(
                f"For '{cls}', the 'network' must be a Cell, a function or a method, but got {type(network)}."
            )
        validator.check_value_type("get_all", get_all, [bool], cls)
        validator.check_value_type("get_by_list", get_by_list, [bool], cls)
        if get_by_list and not isinstance(weights, (ParameterTuple, tuple, list)):
            raise TypeError(
                f"For '{cls}', when 'get_by_list' is set to True, the 'weights' must be a sequence of Parameters, "
                f"but got {type(weights)}."
            )
        self.network = network
        if isinstance(network, Cell):
            network.set_grad()
        self.weights = ParameterTuple(weights) if isinstance(weights, list) else weights
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, bool(sens_param)
        self.grad = GradOperation(get_all=get_all, get_by_list=get_by_list, sens_param=self.sens_param)

    def construct(self, *inputs):
        forward_inputs = inputs[:-1] if self.sens_param else inputs
        loss = self.network(*forward_inputs)
        if self.get_by_list:
            grads = self.grad(self.network, self.weights)(*inputs)
        else:
            grads = self.grad(self.network)(*inputs)
        return loss, grads
