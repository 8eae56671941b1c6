"""MindSpore operator classes that opforge builds from other primitives, with no kernel of their own:
``Zeros``, ``Ones`` (Fill), ``Depend`` (graph-mode ordering: eagerly its first input), ``Print``, ``Shape``
(the shape as a tuple), ``TensorShape``/``DynamicShape`` (the shape as an int Tensor), ``Unique`` (on the
host) and ``ResizeBilinearV2``/``ResizeBilinear`` (Gather, Mul and Add: opforge/ops/resize.py). They are
constructed and called as MindSpore's (``ops.Zeros()((2, 3), mstype.float32)``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops import resize
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = [
    "Zeros", "Ones", "Depend", "Print", "Meshgrid", "Einsum", "Shape", "TensorShape", "DynamicShape", "Unique",
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


class Depend:
    """``Depend()(value, expr)``: ``value``. In MindSpore's graph mode it orders ``expr`` before the users
    of ``value``; calls run in program order here (eagerly and in a trace), so ``expr`` has run already."""

    def __call__(self, value, expr):
        return value


class Print:
    """``Print()(*inputs)``: prints the Tensors (their values) and strings, one line each, as MindSpore's
    Print in PyNative mode; returns None."""

    def __call__(self, *inputs):
        for x in inputs:
            if isinstance(x, Tensor):
                print(f"Tensor(shape={list(x.shape)}, dtype={x.dtype}, value=\n{np.array2string(x.asnumpy())})")
            elif isinstance(x, (str, int, float, bool, mstype.Type)):
                print(x)
            else:
                raise TypeError(
                    f"For 'Print', each input must be a Tensor, a string or a number, but got {type(x).__name__}."
                )


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


def depend(value, expr):
    """MindSpore's ``ops.depend``: ``Depend()(value, expr)``, that is ``value``."""
    return value


def print_(*input_x):
    """MindSpore's ``ops.print_``: ``Print()(*input_x)``."""
    return Print()(*input_x)


def _tensor_arg(op_name: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"For '{op_name}', the 'input_x' must be a Tensor, but got {type(x).__name__}.")
    return x


class Shape:
    """``Shape()(input_x)``: the shape of ``input_x`` as a tuple of ints (-1 where a placeholder's dim is
    unknown), as MindSpore's."""

    def __call__(self, input_x):
        return tuple(_tensor_arg("Shape", input_x).shape)


class TensorShape:
    """``TensorShape(dtype=mstype.int64)()(input_x)``: the shape of ``input_x`` as a 1-D int Tensor."""

    def __init__(self, dtype=mstype.int64):
        self.dtype = mstype.to_dtype(dtype)
        if self.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For '{type(self).__name__}', the 'dtype' must be int32 or int64, but got {self.dtype}.")

    def __call__(self, input_x):
        shape = tuple(_tensor_arg(type(self).__name__, input_x).shape)
        if any(d < 0 for d in shape):
            raise ValueError(
                f"For '{type(self).__name__}', the shape {list(shape)} has unknown dims: there is no value to give yet."
            )
        return Tensor(np.asarray(shape, self.dtype.np_dtype), device=input_x.device)


class DynamicShape(TensorShape):
    """``DynamicShape()(input_x)``: MindSpore's older name of TensorShape."""


class Unique:
    """``Unique()(input_x)`` for a 1-D ``input_x``: ``(y, idx)`` with ``y`` the distinct values in ascending
    order and ``idx`` (int32) the position in ``y`` of each element, so ``y[idx] == input_x``. The output's
    length depends on the data, so it is computed on the host (``np.unique``; a GPU tensor is copied there and
    back); not differentiable, and reading the data inside ``jit`` raises a TraceError."""

    def __call__(self, input_x):
        x = _tensor_arg("Unique", input_x)
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


def shape(input_x) -> tuple:
    """MindSpore's ``ops.shape``: ``input_x``'s shape as a tuple."""
    return Shape()(input_x)


def dyn_shape(input_x) -> Tensor:
    """MindSpore's ``ops.dyn_shape``: ``input_x``'s shape as an int64 Tensor."""
    return TensorShape()(input_x)


def unique(input) -> tuple:  # noqa: A002 (MindSpore's argument name)
    """MindSpore's ``ops.unique``: ``(output, idx)`` of ``Unique`` (the input flattened first)."""
    x = input if input.ndim == 1 else F.reshape(input, (-1,))
    return Unique()(x)
