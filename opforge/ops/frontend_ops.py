"""MindSpore operator classes that opforge builds from other primitives, with no kernel of their own:
``Zeros``, ``Ones`` (Fill), ``Einsum``, ``Meshgrid``, ``Unique`` (on the host),
``ResizeBilinearV2``/``ResizeBilinear`` (Gather, Mul and Add: opforge/ops/resize.py) and the class spellings
of the composite ops of opforge/ops/functional_extra.py (``Tril``, ``Roll``, ``GatherD``, ...); ``Depend``,
``Print``, ``Shape`` and ``TensorShape`` (opforge/ops/frontend_shape.py) are re-exported here. They are
constructed and called as MindSpore's (``ops.Zeros()((2, 3), mstype.float32)``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import functional_extra as _FX
from opforge.ops import resize
from opforge.ops.frontend_shape import (  # noqa: F401 (ops.<name>: re-exported)
    Depend,
    DType,
    DynamicShape,
    Print,
    Shape,
    TensorShape,
    depend,
    dyn_shape,
    print_,
    shape,
    tensor_arg,
)
from opforge.ops.host_op import HostOp
from opforge.primitives.nn_ops import ApplyMomentum
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "Zeros", "Ones", "FusedWeightScaleApplyMomentum", "Depend", "Print", "Meshgrid", "Einsum", "Shape",
    "TensorShape", "DynamicShape", "Unique", "DType",
    "ResizeBilinearV2", "ResizeBilinear", "shape", "dyn_shape", "unique", "depend", "print_",
]  # fmt: skip


class _Filled:
    value = 0

    def __call__(self, size, type=None):  # noqa: A002 (MindSpore's argument name)
        return F._filled(self.__class__.__name__, size, type, self.value)


class Zeros(_Filled):
    """``Zeros()(size, type)``: a tensor of ``size`` (an int or a tuple) filled with 0, of ``type``."""

    value = 0


class Ones(_Filled):
    """``Ones()(shape, type)``: a tensor of ``shape`` (an int or a tuple) filled with 1, of ``type``."""

    value = 1


class Einsum:
    """``Einsum(equation)(inputs)``: ``ops.einsum(equation, *inputs)``."""

    def __init__(self, equation):
        if not isinstance(equation, str):
            raise TypeError(f"For 'Einsum', the 'equation' must be a str, but got {type(equation).__name__}.")
        self.equation = equation

    def __call__(self, inputs):
        return F.einsum(self.equation, *inputs)


class Meshgrid:
    """``Meshgrid(indexing="xy")(inputs)``: ``ops.meshgrid(*inputs, indexing=indexing)``."""

    def __init__(self, indexing="xy"):
        if indexing not in ("xy", "ij"):
            raise ValueError(f"For 'Meshgrid', the 'indexing' must be 'xy' or 'ij', but got {indexing!r}.")
        self.indexing = indexing

    def __call__(self, inputs):
        return F.meshgrid(*inputs, indexing=self.indexing)


class Unique(HostOp):
    """``Unique()(input_x)`` for a 1-D ``input_x``: ``(y, idx)`` with ``y`` the distinct values in ascending
    order and ``idx`` (int32) the position in ``y`` of each element, so ``y[idx] == input_x``. The output's
    length depends on the data, so it is computed on the host (``np.unique``; a GPU tensor is copied there and
    back); not differentiable, and reading the data inside ``jit`` raises a TraceError."""

    def __call__(self, input_x):
        x = tensor_arg("Unique", input_x)
        if x.ndim != 1:
            raise ValueError(f"For 'Unique', the 'input_x' must be 1-D, but got shape {list(x.shape)}.")
        values, inverse = np.unique(x.asnumpy(), return_inverse=True)
        return (
            Tensor(values.astype(x.dtype.np_dtype), dtype=x.dtype, device=x.device),
            Tensor(inverse.reshape(-1).astype(np.int32), device=x.device),
        )


def _resize_size(op_name: str, size) -> tuple:
    """``(new_height, new_width)`` from a tuple or list of 2 positive ints, or (ResizeBilinearV2's ``size``) a
    1-D int Tensor of 2 elements, read on the host (inside ``jit`` a traced one raises TraceError)."""
    if isinstance(size, Tensor):
        if size.dtype not in mstype.int_type and size.dtype not in mstype.uint_type:
            raise TypeError(f"For '{op_name}', the 'size' Tensor must have an int dtype, but got {size.dtype}.")
        if size.ndim != 1:
            raise ValueError(f"For '{op_name}', the 'size' Tensor must be 1-D, but got shape {list(size.shape)}.")
        size = tuple(size.asnumpy().tolist())
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"For '{op_name}', the 'size' must be a tuple or list of 2 ints (new_height, new_width), "
            f"but got {type(size).__name__}."
        )
    if len(size) != 2:
        raise ValueError(
            f"For '{op_name}', the 'size' must have 2 elements (new_height, new_width), but got {len(size)}: {size!r}."
        )
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in size):
        raise TypeError(f"For '{op_name}', the 'size' must hold ints, but got {size!r}.")
    if any(v < 1 for v in size):
        raise ValueError(f"For '{op_name}', the 'size' must hold positive ints, but got {size!r}.")
    return int(size[0]), int(size[1])


class _BilinearResize:
    """What ResizeBilinearV2 and ResizeBilinear share: the attrs, the checks and the call of
    ``resize.resize_linear`` over H and W."""

    def _init_modes(self, align_corners, half_pixel_centers) -> None:
        self.name = type(self).__name__
        validator.check_value_type("align_corners", align_corners, [bool], self.name)
        validator.check_value_type("half_pixel_centers", half_pixel_centers, [bool], self.name)
        if align_corners and half_pixel_centers:  # MindSpore raises ValueError here too (its docs say TypeError)
            raise ValueError(
                f"For '{self.name}', the 'align_corners' and 'half_pixel_centers' cannot both be True: "
                f"if half_pixel_centers is True, align_corners must be False."
            )
        self.align_corners = align_corners
        self.half_pixel_centers = half_pixel_centers

    @property
    def mode(self) -> str:
        """The coordinate mode of ``resize.resize_linear``."""
        if self.align_corners:
            return "align_corners"
        return "half_pixel" if self.half_pixel_centers else "asymmetric"

    def infer_shape(self, x_shape, size) -> list:
        """``[N, C, new_height, new_width]``; ``x`` must be 4-D and ``size`` 2 positive ints."""
        if len(x_shape) != 4:
            raise ValueError(f"For '{self.name}', the 'x' must be 4-D (N, C, H, W), but got shape {list(x_shape)}.")
        return [x_shape[0], x_shape[1], *_resize_size(self.name, size)]

    def infer_dtype(self, x_dtype):
        """``x``'s dtype, one of float16, float32 and float64."""
        return validator.check_tensor_dtype_valid("x", x_dtype, resize.FLOATS, self.name)

    def _resize(self, x, size):
        if not isinstance(x, Tensor):
            raise TypeError(f"For '{self.name}', the 'x' must be a Tensor, but got {type(x).__name__}.")
        self.infer_dtype(x.dtype)
        shape = self.infer_shape(list(x.shape), size)
        return resize.resize_linear(self.name, x, tuple(shape[2:]), self.mode)

    def __repr__(self) -> str:
        return f"{self.name}<align_corners={self.align_corners}, half_pixel_centers={self.half_pixel_centers}>"


class ResizeBilinearV2(_BilinearResize):
    r"""``ResizeBilinearV2(align_corners=False, half_pixel_centers=False)(x, size)``: MindSpore's bilinear
    resize of ``x`` [N, C, H, W] to [N, C, new_height, new_width], ``size`` = (new_height, new_width) a tuple
    or list of 2 positive ints or a 1-D int Tensor of 2 elements.

    Per dim of ``n`` inputs and ``m`` outputs, output ``d`` reads the source coordinate
    :math:`src = d \cdot n / m` by default, :math:`d \cdot (n - 1) / (m - 1)` (0 when m = 1) with
    ``align_corners`` and :math:`\max((d + 0.5) \cdot n / m - 0.5, 0)` with ``half_pixel_centers``
    (TensorFlow's; both True is a ValueError), then
    :math:`y = x_{i_0} (1 - w) + x_{i_1} w` with :math:`i_0 = \min(\lfloor src \rfloor, n - 1)`,
    :math:`i_1 = \min(i_0 + 1, n - 1)`, :math:`w = src - i_0`; rows first, then columns.

    Not a kernel of its own: Gather, Mul and Add with weights computed on the host from the static shapes
    (opforge/ops/resize.py), so it is differentiable and runs under vmap and ``jit``.
    dtypes (CPU, GPU): float16 (computed in float32), float32, float64. ``half_pixel_centers`` runs on
    both backends (MindSpore refuses it on the CPU).
    """

    def __init__(self, align_corners=False, half_pixel_centers=False):
        self._init_modes(align_corners, half_pixel_centers)

    def __call__(self, x, size):
        return self._resize(x, size)


class ResizeBilinear(_BilinearResize):
    """``ResizeBilinear(size, align_corners=False, half_pixel_centers=False)(x)``: MindSpore's older
    operator (deprecated there for ResizeBilinearV2), ``size`` a tuple or list of 2 positive ints given at
    construction; ``ResizeBilinearV2(align_corners, half_pixel_centers)(x, size)``, the same formula,
    dtypes and backends. The output has ``x``'s dtype."""

    def __init__(self, size, align_corners=False, half_pixel_centers=False):
        self._init_modes(align_corners, half_pixel_centers)
        if not isinstance(size, (tuple, list)):
            raise TypeError(
                f"For '{self.name}', the 'size' must be a tuple or list of 2 ints, but got {type(size).__name__}."
            )
        self.size = _resize_size(self.name, size)

    def __call__(self, x):
        return self._resize(x, self.size)


def unique(input) -> tuple:  # noqa: A002 (MindSpore's argument name)
    """MindSpore's ``ops.unique``: ``(output, idx)`` of ``Unique`` (the input flattened first)."""
    x = input if input.ndim == 1 else F.reshape(input, (-1,))
    return Unique()(x)


# ---------------------------------------------------------------------------------------------------------
# Operator-class spellings of the composite ops of opforge/ops/functional_extra.py: each is constructed with
# MindSpore's attributes and called with its inputs, and runs the function (so it differentiates, batches
# under vmap and traces under jit as the function does).

__all__ += [
    "Tril", "Triu", "Eye", "Roll", "IsInf", "Lerp", "Identity", "Rank", "Size", "ScalarToTensor",
    "TupleToArray", "L2Normalize", "GatherD",
]  # fmt: skip


class Tril:
    """``Tril(diagonal=0)(x)``: ``ops.tril(x, diagonal)``, the lower triangle of the last two dims."""

    def __init__(self, diagonal=0):
        self.diagonal = _FX._int("Tril", "diagonal", diagonal)

    def __call__(self, x):
        return _FX._triangle("Tril", x, self.diagonal, False)


class Triu:
    """``Triu(diagonal=0)(x)``: ``ops.triu(x, diagonal)``, the upper triangle of the last two dims."""

    def __init__(self, diagonal=0):
        self.diagonal = _FX._int("Triu", "diagonal", diagonal)

    def __call__(self, x):
        return _FX._triangle("Triu", x, self.diagonal, True)


class Eye:
    """``Eye()(n, m, t)``: the [n, m] identity matrix of dtype ``t`` (``ops.eye(n, m, t)``)."""

    def __call__(self, n, m, t):
        return _FX.eye(n, m, t)


class Roll:
    """``Roll(shift, axis)(input_x)``: ``ops.roll(input_x, shift, axis)``, a cyclic shift along ``axis``
    (ints, or tuples of one length)."""

    def __init__(self, shift, axis):
        self.shift, self.axis = shift, axis

    def __call__(self, input_x):
        return _FX.roll(input_x, self.shift, self.axis)


class FusedWeightScaleApplyMomentum:
    r"""``FusedWeightScaleApplyMomentum()(weight_decay, loss_scale, variable, accumulation, learning_rate,
    gradient, momentum)``: Momentum with the weight decay and the loss-scale factor folded into the gradient
    (MindSpore's fused GPU operator; here a Mul/Add and ApplyMomentum), in place:

    .. math::
        g = gradient \cdot loss\_scale + weight\_decay \cdot variable \
        accumulation \leftarrow accumulation \cdot momentum + g \
        variable \leftarrow variable - learning\_rate \cdot accumulation

    ``loss_scale`` is the factor the gradient is multiplied by (an optimizer passes the reciprocal of its
    loss scale). ``variable`` and ``accumulation``: Parameters of one float dtype (float16, float32), updated
    in place; ``weight_decay``, ``loss_scale``, ``learning_rate`` and ``momentum``: numbers or scalar Tensors.
    Returns ``variable``."""

    def __init__(self):
        self._apply_momentum = ApplyMomentum()

    def __call__(self, weight_decay, loss_scale, variable, accumulation, learning_rate, gradient, momentum):
        where = "FusedWeightScaleApplyMomentum"
        gradient = _FX._tensor(where, "gradient", gradient)
        _FX._tensor(where, "variable", variable)
        g = F.add(
            F.mul(gradient, F.cast(loss_scale, gradient.dtype)), F.mul(variable, F.cast(weight_decay, variable.dtype))
        )
        return self._apply_momentum(variable, accumulation, learning_rate, g, momentum)


class IsInf:
    """``IsInf()(x)``: ``ops.isinf(x)``, True where x is +inf or -inf."""

    def __call__(self, x):
        return _FX._isinf(_FX._tensor("IsInf", "x", x))


class Lerp:
    """``Lerp()(start, end, weight)``: ``start + weight * (end - start)`` (``ops.lerp``)."""

    def __call__(self, start, end, weight):
        return _FX.lerp(start, end, weight)


class Identity:
    """``Identity()(x)``: a Tensor of ``x``'s shape, dtype and values (MindSpore's deprecated operator; a
    Reshape to the same shape, differentiable)."""

    def __call__(self, x):
        return F.reshape(_FX._tensor("Identity", "x", x), tuple(x.shape))


class Rank:
    """``Rank()(input_x)``: the number of dims of ``input_x`` as a Python int (``ops.rank``)."""

    def __call__(self, input_x):
        return F.rank(input_x)


class Size:
    """``Size()(input_x)``: the number of elements of ``input_x`` as a Python int (``ops.size``)."""

    def __call__(self, input_x):
        return F.size(input_x)


class ScalarToTensor:
    """``ScalarToTensor()(input_x, dtype=mstype.float32)``: a number as a 0-D Tensor (``ops.scalar_to_tensor``)."""

    def __call__(self, input_x, dtype=mstype.float32):
        return _FX.scalar_to_tensor(input_x, dtype)


class TupleToArray:
    """``TupleToArray()(input_x)``: a tuple of numbers as a 1-D Tensor, float32 if any is a float, else int64
    (``F.tuple_to_array``)."""

    def __call__(self, input_x):
        return F.tuple_to_array(input_x)


class L2Normalize:
    r"""``L2Normalize(axis=0, epsilon=1e-4)(x)``: :math:`\frac{x}{\sqrt{\max(\sum_{axis} x^2, \epsilon)}}`,
    ``axis`` an int or a tuple/list of ints (Square, ReduceSum, Maximum, Rsqrt, Mul; differentiable).
    dtypes: float16, bfloat16, float32, float64."""

    def __init__(self, axis=0, epsilon=1e-4):
        if not isinstance(axis, (int, tuple, list)) or isinstance(axis, bool):
            raise TypeError(f"For 'L2Normalize', the 'axis' must be an int, tuple or list, but got {axis!r}.")
        if not isinstance(epsilon, float):
            raise TypeError(f"For 'L2Normalize', the 'epsilon' must be a float, but got {type(epsilon).__name__}.")
        self.axis, self.epsilon = axis, epsilon

    def __call__(self, x):
        x = _FX._float("L2Normalize", "x", _FX._tensor("L2Normalize", "x", x))
        if x.ndim == 0:
            raise ValueError("For 'L2Normalize', the 'x' must have at least 1 dim, but got a scalar.")
        axes = _FX._axes("L2Normalize", "axis", self.axis, x.ndim)
        squares = F.reduce_sum_op(True)(F.square(x), axes)
        return F.mul(x, F.rsqrt(F.maximum(squares, self.epsilon)))


class GatherD:
    """``GatherD()(x, dim, index)``: ``ops.gather_elements(x, dim, index)``."""

    def __call__(self, x, dim, index):
        return _FX.gather_elements(x, dim, index)
