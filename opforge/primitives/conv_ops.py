"""Convolution and pooling (NCHW), as MindSpore defines them: Conv2D with its two gradients
(Conv2DBackpropInput, Conv2DBackpropFilter), MaxPool and AvgPool with MaxPoolGrad and AvgPoolGrad,
AdaptiveAvgPool2D with AdaptiveAvgPool2DGrad.

Output sizes (per spatial dim, input ``n``, kernel ``k``, stride ``s``, dilation ``d``):

* ``valid``: ``ceil((n - d * (k - 1)) / s)``, no padding;
* ``same``: ``ceil(n / s)``, padded by ``max(0, (out - 1) * s + d * (k - 1) + 1 - n)`` split as
  ``before = total // 2`` and ``after = total - before``;
* ``pad`` (Conv2D only): ``floor((n + before + after - d * (k - 1) - 1) / s) + 1`` with the
  explicit ``pad = (top, bottom, left, right)``.

Padding adds zeros for convolution, ``-inf`` for MaxPool and nothing for AvgPool (the mean is over
the window's elements inside the input, count_include_pad=False, as MindSpore's CPU and GPU).
"""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.geometry import conv_output_and_pads
from opforge.primitives._utils import UNKNOWN_DIM, _Operator, merge_shapes, same_shape
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = [
    "Conv2D",
    "Conv2DBackpropInput",
    "Conv2DTranspose",
    "Conv2DBackpropFilter",
    "MaxPool",
    "AvgPool",
    "MaxPoolGrad",
    "AvgPoolGrad",
    "MaxPoolGradGrad",
    "AdaptiveAvgPool2D",
    "AdaptiveAvgPool2DGrad",
]

_FLOATS = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)


def _int_or_tuple(prim_name, arg_name, value, allow_four=False, ret_four=False) -> tuple:
    """MindSpore's ``_check_positive_int_or_tuple``: an int or a tuple of 2 (or 4 when
    ``allow_four``) positive ints, as ``(h, w)`` or, with ``ret_four``, ``(1, 1, h, w)``."""
    lengths = "2 or 4" if allow_four else "2"
    if isinstance(value, bool) or not isinstance(value, (int, tuple)):
        raise TypeError(
            f"For '{prim_name}', the '{arg_name}' must be an int or a tuple of {lengths} ints, "
            f"but got {type(value).__name__}."
        )
    if isinstance(value, int):
        hw = (value, value)
    elif len(value) == 2:
        hw = tuple(value)
    elif len(value) == 4 and allow_four:
        hw = tuple(value[2:])
    else:
        raise ValueError(
            f"For '{prim_name}', the '{arg_name}' must be an int or a tuple of {lengths} ints, "
            f"but got a tuple of length {len(value)}: {value!r}."
        )
    for v in hw:
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"For '{prim_name}', the '{arg_name}' must hold positive ints, but got {value!r}.")
    return (1, 1, *hw) if ret_four else hw


def _pad4(prim_name, pad) -> tuple:
    validator.check_value_type("pad", pad, [int, tuple], prim_name)
    if isinstance(pad, int):
        pad = (pad,) * 4
    elif len(pad) != 4:
        raise ValueError(
            f"For '{prim_name}', the 'pad' must be an int or a tuple of 4 ints (top, bottom, left, right), "
            f"but got a tuple of length {len(pad)}: {pad!r}."
        )
    for p in pad:
        validator.check_value_type("pad", p, [int], prim_name)
        if p < 0:
            raise ValueError(f"For '{prim_name}', the 'pad' must hold non-negative ints, but got {pad!r}.")
    return tuple(pad)


def _check_4d(prim_name, arg_name, shape) -> None:
    if len(shape) != 4:
        raise ValueError(f"For '{prim_name}', the '{arg_name}' must be 4-D (NCHW), but got shape {list(shape)}.")


def _check_format(prim_name, data_format) -> str:
    validator.check_string(data_format, ["NCHW", "NHWC"], "data_format", prim_name)
    if data_format != "NCHW":
        raise ValueError(f"For '{prim_name}', only data_format 'NCHW' is supported, but got '{data_format}'.")
    return data_format


# ---------------------------------------------------------------------------------------------
# Convolution


class _ConvBase(_Operator):
    """The attrs Conv2D and its gradients share, checked as MindSpore checks them."""

    def _init_conv(self, out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group, data_format):
        name = self.name
        self.out_channel = validator.check_positive_int(out_channel, "out_channel", name)
        self.kernel_size = _int_or_tuple(name, "kernel_size", kernel_size)
        self.add_prim_attr("kernel_size", self.kernel_size)
        self.stride = _int_or_tuple(name, "stride", stride, allow_four=True, ret_four=True)
        self.add_prim_attr("stride", self.stride)
        self.dilation = _int_or_tuple(name, "dilation", dilation, allow_four=True, ret_four=True)
        self.add_prim_attr("dilation", self.dilation)
        validator.check_value_type("pad_mode", pad_mode, [str], name)
        self.pad_mode = validator.check_string(pad_mode.lower(), ["valid", "same", "pad"], "pad_mode", name)
        self.add_prim_attr("pad_mode", self.pad_mode)
        self.padding = _pad4(name, pad)
        if self.pad_mode != "pad" and self.padding != (0, 0, 0, 0):
            raise ValueError(
                f"For '{name}', the 'pad' must be zero when 'pad_mode' is not 'pad', but got 'pad' {pad!r} and "
                f"'pad_mode' '{self.pad_mode}'."
            )
        self.add_prim_attr("pad", self.padding)
        self.mode = validator.check_equal_int(mode, 1, "mode", name)
        self.group = validator.check_positive_int(group, "group", name)
        self.add_prim_attr("groups", self.group)
        self.format = _check_format(name, data_format)
        self.add_prim_attr("format", self.format)
        if self.out_channel % self.group:
            raise ValueError(
                f"For '{name}', the 'out_channel' must be divisible by 'group', but got out_channel "
                f"{self.out_channel} and group {self.group}."
            )

    def _out_hw(self, h, w) -> list:
        kh, kw = self.kernel_size
        t, b, left, right = self.padding
        oh = conv_output_and_pads(self.name, h, kh, self.stride[2], self.dilation[2], self.pad_mode, (t, b))[0]
        ow = conv_output_and_pads(self.name, w, kw, self.stride[3], self.dilation[3], self.pad_mode, (left, right))[0]
        return [oh, ow]

    def _check_weight(self, w_shape, in_channels, w_name="weight") -> None:
        _check_4d(self.name, w_name, w_shape)
        want = [self.out_channel, None, *self.kernel_size]
        if not same_shape(w_shape, [self.out_channel, w_shape[1], *self.kernel_size]):
            raise ValueError(
                f"For '{self.name}', the '{w_name}' must have shape [out_channel={self.out_channel}, "
                f"in_channel/group, {want[2]}, {want[3]}], but got {list(w_shape)}."
            )
        if in_channels >= 0 and w_shape[1] >= 0 and in_channels != w_shape[1] * self.group:
            raise ValueError(
                f"For '{self.name}', the input channels {in_channels} must equal the '{w_name}' dim 1 "
                f"({w_shape[1]}) times 'group' ({self.group}), but they do not."
            )

    def _check_size(self, arg_name, size) -> list:
        if (
            not isinstance(size, (tuple, list))
            or len(size) != 4
            or any(isinstance(d, bool) or not isinstance(d, int) or d < UNKNOWN_DIM for d in size)
        ):
            raise ValueError(
                f"For '{self.name}', the '{arg_name}' must be a tuple of 4 non-negative ints (-1: an unknown dim, "
                f"from a placeholder's shape), but got {size!r}."
            )
        return list(size)

    def _float_dtypes(self, args: dict):
        return validator.check_tensors_dtypes_same_and_valid(args, _FLOATS, self.name)


class Conv2D(_ConvBase):
    r"""2-D convolution (cross-correlation) of ``x`` [N, C, H, W] with ``weight``
    [out_channel, C / group, kh, kw]:

    .. math:: out[n, o, i, j] = \sum_{c, p, q} x[n, g C_g + c, i s_h + p d_h - pad_t, j s_w + q d_w - pad_l]
              \cdot w[o, c, p, q],\quad g = \lfloor o / (out\_channel / group) \rfloor

    (zero outside the input). Output [N, out_channel, oh, ow], sizes by ``pad_mode`` (module docstring).
    Attrs as MindSpore: ``out_channel``, ``kernel_size`` (int or (kh, kw)), ``mode`` (1), ``pad_mode``
    ("valid", "same" or "pad"), ``pad`` (int or (top, bottom, left, right); "pad" mode only),
    ``stride`` and ``dilation`` (int, 2- or 4-tuple), ``group``, ``data_format`` ("NCHW").
    dtypes: float16, bfloat16, float32, float64 on the CPU (BLAS GEMM on im2col columns, half types
    computed in float32) and the GPU.
    """

    @prim_attr_register
    def __init__(
        self,
        out_channel,
        kernel_size,
        mode=1,
        pad_mode="valid",
        pad=0,
        stride=1,
        dilation=1,
        group=1,
        data_format="NCHW",
    ):
        self._init_conv(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group, data_format)
        self.init_prim_io_names(inputs=["x", "w"], outputs=["output"])

    def infer_shape(self, x_shape, w_shape):
        _check_4d(self.name, "x", x_shape)
        self._check_weight(w_shape, x_shape[1])
        return [x_shape[0], self.out_channel, *self._out_hw(x_shape[2], x_shape[3])]

    def infer_dtype(self, x_dtype, w_dtype):
        return self._float_dtypes({"x": x_dtype, "w": w_dtype})


class Conv2DBackpropInput(_ConvBase):
    r"""The gradient of Conv2D with respect to its input: ``Conv2DBackpropInput(...)(dout, weight,
    input_size)`` gives dx of shape ``input_size`` (a constant (N, C, H, W)) for the Conv2D of the
    same attrs whose output gradient is ``dout``. Attrs: those of Conv2D (``pad_list`` accepted for
    MindSpore compatibility; the padding follows from ``pad_mode``, ``pad`` and the sizes).
    dtypes: float16, bfloat16, float32, float64.
    """

    constant_inputs = ((2, "input_sizes"),)

    @prim_attr_register
    def __init__(
        self,
        out_channel,
        kernel_size,
        pad_mode="valid",
        pad=0,
        pad_list=None,
        mode=1,
        stride=1,
        dilation=1,
        group=1,
        data_format="NCHW",
    ):
        self._init_conv(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group, data_format)
        self.init_prim_io_names(inputs=["out_backprop", "filter", "input_sizes"], outputs=["output"])

    def infer_shape(self, dout_shape, w_shape, input_size):
        size = self._check_size("input_size", input_size)
        _check_4d(self.name, "out_backprop", dout_shape)
        self._check_weight(w_shape, size[1], "filter")
        want = [size[0], self.out_channel, *self._out_hw(size[2], size[3])]
        if not same_shape(dout_shape, want):
            raise ValueError(
                f"For '{self.name}', the 'out_backprop' must have the Conv2D output shape {want} for input_size "
                f"{size}, but got {list(dout_shape)}."
            )
        return size

    def infer_dtype(self, dout_dtype, w_dtype, input_size):
        return self._float_dtypes({"out_backprop": dout_dtype, "filter": w_dtype})


class Conv2DBackpropFilter(_ConvBase):
    r"""The gradient of Conv2D with respect to its weight: ``Conv2DBackpropFilter(...)(dout, x,
    filter_size)`` gives dw of shape ``filter_size`` (a constant (out_channel, C / group, kh, kw)).
    Attrs: those of Conv2D (``pad_list`` accepted for MindSpore compatibility).
    dtypes: float16, bfloat16, float32, float64.
    """

    constant_inputs = ((2, "filter_sizes"),)

    @prim_attr_register
    def __init__(
        self,
        out_channel,
        kernel_size,
        pad_mode="valid",
        pad=0,
        pad_list=(0, 0, 0, 0),
        mode=1,
        stride=(1, 1),
        dilation=(1, 1, 1, 1),
        group=1,
        data_format="NCHW",
    ):
        self._init_conv(out_channel, kernel_size, mode, pad_mode, pad, stride, dilation, group, data_format)
        self.init_prim_io_names(inputs=["out_backprop", "input", "filter_sizes"], outputs=["output"])

    def infer_shape(self, dout_shape, x_shape, filter_size):
        size = self._check_size("filter_size", filter_size)
        _check_4d(self.name, "out_backprop", dout_shape)
        _check_4d(self.name, "input", x_shape)
        self._check_weight(size, x_shape[1], "filter_size")
        want = [x_shape[0], self.out_channel, *self._out_hw(x_shape[2], x_shape[3])]
        if not same_shape(dout_shape, want):
            raise ValueError(
                f"For '{self.name}', the 'out_backprop' must have the Conv2D output shape {want} for input "
                f"{list(x_shape)}, but got {list(dout_shape)}."
            )
        return size

    def infer_dtype(self, dout_dtype, x_dtype, filter_size):
        return self._float_dtypes({"out_backprop": dout_dtype, "input": x_dtype})


# ---------------------------------------------------------------------------------------------
# Pooling


class _PoolBase(_Operator):
    def _init_pool(self, kernel_size, strides, pad_mode, data_format):
        name = self.name
        validator.check_value_type("pad_mode", pad_mode, [str], name)
        self.pad_mode = validator.check_string(pad_mode.upper(), ["VALID", "SAME"], "pad_mode", name)
        self.add_prim_attr("pad_mode", self.pad_mode)
        self.kernel_size = _int_or_tuple(name, "kernel_size", kernel_size, allow_four=True, ret_four=True)
        self.add_prim_attr("kernel_size", self.kernel_size)
        self.strides = _int_or_tuple(name, "strides", strides, allow_four=True, ret_four=True)
        self.add_prim_attr("strides", self.strides)
        self.format = _check_format(name, data_format)
        self.add_prim_attr("format", self.format)

    def _out_shape(self, x_shape) -> list:
        _check_4d(self.name, "x", x_shape)
        out = list(x_shape[:2])
        for i in (2, 3):
            out.append(
                conv_output_and_pads(self.name, x_shape[i], self.kernel_size[i], self.strides[i], 1, self.pad_mode)[0]
            )
        return out


class _Pool(_PoolBase):
    @prim_attr_register
    def __init__(self, kernel_size=1, strides=1, pad_mode="valid", data_format="NCHW"):
        self._init_pool(kernel_size, strides, pad_mode, data_format)
        self.init_prim_io_names(inputs=["x"], outputs=["output"])

    def infer_shape(self, x_shape):
        return self._out_shape(x_shape)

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("x", x_dtype, _FLOATS, self.name)


class MaxPool(_Pool):
    r"""2-D max pooling of ``x`` [N, C, H, W]: each output is the maximum of its
    ``kernel_size`` window (windows ``strides`` apart; "SAME" pads with -inf, NaN propagates).
    Attrs as MindSpore: ``kernel_size`` and ``strides`` (int, 2- or 4-tuple), ``pad_mode`` ("valid" or
    "same", stored upper case), ``data_format`` ("NCHW"). dtypes: float16, bfloat16, float32, float64.
    """


class AvgPool(_Pool):
    r"""2-D average pooling of ``x`` [N, C, H, W]: each output is the mean of the elements of its window
    inside the input (with "SAME" padding the padded positions are not counted). Attrs as MaxPool.
    dtypes: float16, bfloat16, float32, float64.
    """


class _PoolGrad(_PoolBase):
    @prim_attr_register
    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", data_format="NCHW"):
        self._init_pool(kernel_size, strides, pad_mode, data_format)
        self.init_prim_io_names(inputs=["x_origin", "out_origin", "grad"], outputs=["output"])

    def infer_shape(self, x_shape, out_shape, dout_shape):
        want = self._out_shape(x_shape)
        for arg, shape in (("out_origin", out_shape), ("grad", dout_shape)):
            if not same_shape(shape, want):
                raise ValueError(
                    f"For '{self.name}', the '{arg}' must have the pooled shape {want} of 'x_origin' "
                    f"{list(x_shape)}, but got {list(shape)}."
                )
        return list(x_shape)

    def infer_dtype(self, x_dtype, out_dtype, dout_dtype):
        args = {"x_origin": x_dtype, "out_origin": out_dtype, "grad": dout_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, _FLOATS, self.name)


class MaxPoolGrad(_PoolGrad):
    r"""The gradient of MaxPool: ``MaxPoolGrad(...)(x, out, dout)`` adds each ``dout`` element to the
    position of its window's maximum in ``x`` (the first one on ties; a NaN counts as the maximum).
    dtypes: float16, bfloat16, float32, float64."""


class AvgPoolGrad(_PoolGrad):
    r"""The gradient of AvgPool: ``AvgPoolGrad(...)(x, out, dout)`` spreads each ``dout`` element evenly
    over the input elements of its window. dtypes: float16, bfloat16, float32, float64."""


class MaxPoolGradGrad(_PoolBase):
    r"""The gradient of MaxPoolGrad with respect to its ``grad`` input: ``MaxPoolGradGrad(...)(x, out,
    grad)`` takes ``grad`` of x's shape and gives, for each output of MaxPool(x), the element of
    ``grad`` at its window's maximum (the one MaxPoolGrad routes to). dtypes: float16, bfloat16,
    float32, float64."""

    @prim_attr_register
    def __init__(self, kernel_size=1, strides=1, pad_mode="VALID", data_format="NCHW"):
        self._init_pool(kernel_size, strides, pad_mode, data_format)
        self.init_prim_io_names(inputs=["x_origin", "out_origin", "grad"], outputs=["output"])

    def infer_shape(self, x_shape, out_shape, grad_shape):
        want = self._out_shape(x_shape)
        if not same_shape(out_shape, want):
            raise ValueError(
                f"For '{self.name}', the 'out_origin' must have the pooled shape {want} of 'x_origin' "
                f"{list(x_shape)}, but got {list(out_shape)}."
            )
        if not same_shape(grad_shape, x_shape):
            raise ValueError(
                f"For '{self.name}', the 'grad' must have the shape of 'x_origin' {list(x_shape)}, "
                f"but got {list(grad_shape)}."
            )
        return merge_shapes(want, out_shape)

    def infer_dtype(self, x_dtype, out_dtype, grad_dtype):
        args = {"x_origin": x_dtype, "out_origin": out_dtype, "grad": grad_dtype}
        return validator.check_tensors_dtypes_same_and_valid(args, _FLOATS, self.name)


# ---------------------------------------------------------------------------------------------
# Adaptive pooling

_ADAPTIVE_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


class AdaptiveAvgPool2D(_Operator):
    r"""2-D adaptive average pooling of ``x`` [C, H, W] or [N, C, H, W] to ``output_size`` (MindSpore's
    ``ops.AdaptiveAvgPool2D``): output (i, j) is the mean of the window

    .. math::
        h_{start} = \lfloor i H_{in} / H_{out} \rfloor,\quad h_{end} = \lceil (i + 1) H_{in} / H_{out} \rceil,
        \quad w_{start} = \lfloor j W_{in} / W_{out} \rfloor,\quad w_{end} = \lceil (j + 1) W_{in} / W_{out} \rceil,

        y(i, j) = \frac{\sum x[h_{start}:h_{end}, w_{start}:w_{end}]}{(h_{end} - h_{start})(w_{end} - w_{start})}

    ``output_size``: an int h (an h x h output) or a pair (h, w) whose entries are positive ints or None (that
    dim keeps the input's size); stored as the attr ``output_size`` with None as -1. The output shape is
    ``x.shape[:-2] + (h_out, w_out)``. dtypes: float16, float32, float64 (MindSpore's), on the CPU and the GPU.
    """

    @prim_attr_register
    def __init__(self, output_size):
        name = self.name
        if isinstance(output_size, bool) or not isinstance(output_size, (int, tuple)):
            raise TypeError(
                f"For '{name}', the 'output_size' must be an int or a tuple of 2 ints or None, "
                f"but got {type(output_size).__name__}."
            )
        if isinstance(output_size, tuple) and len(output_size) != 2:
            raise ValueError(
                f"For '{name}', the 'output_size' tuple must have 2 elements, but got {len(output_size)}: "
                f"{output_size!r}."
            )
        sizes = (output_size, output_size) if isinstance(output_size, int) else output_size
        for v in sizes:
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError(
                    f"For '{name}', the 'output_size' must hold ints or None, but got {type(v).__name__}: "
                    f"{output_size!r}."
                )
            if v <= 0:
                raise ValueError(f"For '{name}', the 'output_size' must hold positive ints, but got {output_size!r}.")
        self.output_size = tuple(-1 if v is None else v for v in sizes)
        self.add_prim_attr("output_size", self.output_size)
        self.init_prim_io_names(inputs=["x"], outputs=["y"])

    def infer_shape(self, x_shape):
        if len(x_shape) not in (3, 4):
            raise ValueError(f"For '{self.name}', the 'input_x' must be 3-D or 4-D, but got shape {list(x_shape)}.")
        for d in x_shape[-2:]:
            if d == 0:
                raise ValueError(
                    f"For '{self.name}', the 'input_x' must have non-empty H and W, but got shape {list(x_shape)}."
                )
        out = [x if s == -1 else s for x, s in zip(x_shape[-2:], self.output_size)]
        return [*x_shape[:-2], *out]

    def infer_dtype(self, x_dtype):
        return validator.check_tensor_dtype_valid("input_x", x_dtype, _ADAPTIVE_FLOATS, self.name)


class AdaptiveAvgPool2DGrad(_Operator):
    r"""The gradient of AdaptiveAvgPool2D (MindSpore's ``AdaptiveAvgPool2DGrad``):
    ``AdaptiveAvgPool2DGrad()(input_grad, orig_input_shape)`` gives dx of shape ``orig_input_shape`` (a
    constant: a tuple, or an integer Tensor folded to one) whose element (y, x) is
    :math:`\sum dy(i, j) / |window(i, j)|` over the outputs (i, j) whose windows hold it. The pooled size is
    ``input_grad``'s last two dims. dtypes: float16, float32, float64."""

    constant_inputs = ((1, "orig_input_shape"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["input_grad", "orig_input_shape"], outputs=["output"])

    def infer_shape(self, dy_shape, orig_input_shape):
        shape = orig_input_shape
        if not isinstance(shape, tuple) or any(isinstance(d, bool) or not isinstance(d, int) for d in shape):
            raise TypeError(f"For '{self.name}', the 'orig_input_shape' must be a tuple of ints, but got {shape!r}.")
        if len(shape) not in (3, 4) or len(dy_shape) != len(shape) or not same_shape(dy_shape[:-2], shape[:-2]):
            raise ValueError(
                f"For '{self.name}', the 'input_grad' {list(dy_shape)} and 'orig_input_shape' {list(shape)} must be "
                f"3-D or 4-D with the same leading dims."
            )
        if any(d <= 0 for d in shape[-2:]) or any(d == 0 for d in dy_shape[-2:]):
            raise ValueError(
                f"For '{self.name}', the input and pooled H and W must be positive, but got {list(shape)} and "
                f"{list(dy_shape)}."
            )
        return list(shape)

    def infer_dtype(self, dy_dtype, orig_input_shape):
        return validator.check_tensor_dtype_valid("input_grad", dy_dtype, _ADAPTIVE_FLOATS, self.name)


Conv2DTranspose = Conv2DBackpropInput  # MindSpore's name of the same operator (a transposed convolution)
