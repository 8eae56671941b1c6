"""Transposed convolutions beyond 2-D, from Conv2DBackpropInput (MindSpore's Conv2DTranspose) and data movement:
MindSpore's ``ops.Conv3DTranspose`` here, and the pieces ``nn.Conv1dTranspose`` and ``nn.Conv3dTranspose``
(opforge/nn/layers_conv_transpose.py) use. No kernel of their own: gradients, ``jit`` and both backends
come with the primitives they call.

A transposed convolution spreads each input element over the output through the kernel: along a dim of ``L``
inputs, kernel ``k``, stride ``s`` and dilation ``d``, input ``t`` adds ``w[a] * x[t]`` to output
``t * s + a * d`` of a "full" output of ``(L - 1) * s + d * (k - 1) + 1``. The result is that full output with
``head`` elements cut from its start and cut or zero-extended to ``out`` at its end (``transposed_extent``).
H and W are Conv2DBackpropInput's own (padded by ``head`` before), and a 3-D one adds, per depth tap ``a``,
the 2-D transposed convolutions of every input depth plane (batched) at depths ``t * s + a * d``
(zero-stuffed by the stride, then shifted).
"""

from __future__ import annotations

import functools

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.primitives import conv_ops, math_ops
from opforge.primitives._utils import require_known
from opforge.primitives.validator import Validator as validator
from opforge.tensor import Tensor

__all__ = ["Conv3DTranspose", "transposed_extent", "transposed_conv2d"]

_FLOATS = (mstype.float16, mstype.float32, mstype.float64)
_add_n = math_ops.AddN()


def transposed_extent(op: str, size: int, kernel: int, stride: int, dilation: int, pad_mode: str,
                      pads: tuple = (0, 0), output_padding: int = 0) -> tuple:  # fmt: skip
    """``(head, out)`` of a transposed convolution along one dim (MindSpore's rules, with ``f = d * (k - 1) +
    1`` the dilated kernel): "same" gives ``size * s`` outputs, cut ``max(0, f - s) // 2`` from the start;
    "valid" ``size * s + max(f - s, 0)``, nothing cut; "pad" ``(size - 1) * s + f - before - after +
    output_padding``, cut ``before``."""
    span = dilation * (kernel - 1) + 1
    if pad_mode == "same":
        head, out = max(0, span - stride) // 2, size * stride
    elif pad_mode == "valid":
        head, out = 0, size * stride + max(span - stride, 0)
    else:
        head = pads[0]
        out = (size - 1) * stride + span - pads[0] - pads[1] + output_padding
    if out <= 0:
        raise ValueError(
            f"For '{op}', the output would have a size of {out} along a dim of {size} (kernel {kernel}, stride "
            f"{stride}, dilation {dilation}, pads {tuple(pads)}), but it must be positive."
        )
    return head, out


def _fit(x: Tensor, axis: int, length: int) -> Tensor:
    """``x`` cut or zero-extended at its end along ``axis`` to ``length``."""
    n = x.shape[axis]
    if n > length:
        return F.slice_(x, (0,) * x.ndim, tuple(length if d == axis else s for d, s in enumerate(x.shape)))
    if n < length:
        return F._pad(tuple((0, length - n) if d == axis else (0, 0) for d in range(x.ndim)))(x)
    return x


@functools.lru_cache(maxsize=256)
def _backprop_input(out_channel, kernel, pad, stride, dilation, group) -> conv_ops.Conv2DBackpropInput:
    return conv_ops.Conv2DBackpropInput(
        out_channel, kernel, pad_mode="pad", pad=pad, stride=stride, dilation=dilation, group=group
    )


def transposed_conv2d(x: Tensor, weight: Tensor, out_channels: int, stride: tuple, dilation: tuple, group: int,
                      heads: tuple, outs: tuple) -> Tensor:  # fmt: skip
    """The 2-D transposed convolution of ``x`` [B, C_in, H, W] with ``weight`` [C_in, C_out / group, kh, kw]:
    [B, out_channels, outs[0], outs[1]], the full output less ``heads`` at the start of H and W (see
    ``transposed_extent``)."""
    kernel = tuple(weight.shape[2:])
    fulls = [(n - 1) * s + d * (k - 1) + 1 for n, s, d, k in zip(x.shape[2:], stride, dilation, kernel)]
    sizes = [full - head for full, head in zip(fulls, heads)]  # Conv2D maps these back to H, W
    prim = _backprop_input(x.shape[1], kernel, (heads[0], 0, heads[1], 0), tuple(stride), tuple(dilation), group)
    y = prim(x, weight, (x.shape[0], out_channels, *sizes))
    return _fit(_fit(y, 2, outs[0]), 3, outs[1])


def _triple(op: str, arg: str, value, minimum: int = 1) -> tuple:
    """An int or a tuple of 3 (or, with the leading (1, 1), 5) ints, at least ``minimum``: (d, h, w)."""
    if isinstance(value, bool) or not isinstance(value, (int, tuple)):
        raise TypeError(f"For '{op}', the '{arg}' must be an int or a tuple of 3 ints, but got {type(value).__name__}.")
    if isinstance(value, int):
        value = (value,) * 3
    if len(value) == 5 and tuple(value[:2]) == (1, 1):
        value = value[2:]
    if len(value) != 3:
        raise ValueError(f"For '{op}', the '{arg}' must be an int or a tuple of 3 ints, but got {value!r}.")
    if any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in value):
        raise ValueError(f"For '{op}', the '{arg}' must hold ints of at least {minimum}, but got {value!r}.")
    return tuple(value)


def _pad6(op: str, pad) -> tuple:
    if isinstance(pad, bool) or not isinstance(pad, (int, tuple)):
        raise TypeError(f"For '{op}', the 'pad' must be an int or a tuple of 6 ints, but got {type(pad).__name__}.")
    pad = (pad,) * 6 if isinstance(pad, int) else tuple(pad)
    if len(pad) == 3:
        pad = tuple(p for p in pad for _ in range(2))
    if len(pad) != 6 or any(isinstance(p, bool) or not isinstance(p, int) or p < 0 for p in pad):
        raise ValueError(
            f"For '{op}', the 'pad' must be a non-negative int or 6 of them (head, tail, top, bottom, left, right), "
            f"but got {pad!r}."
        )
    return pad


class Conv3DTranspose:
    r"""3-D transposed convolution (MindSpore's ``ops.Conv3DTranspose``), the gradient of a Conv3D with
    respect to its input: ``Conv3DTranspose(in_channel, out_channel, kernel_size, mode=1, pad_mode="valid",
    pad=0, stride=1, dilation=1, group=1, output_padding=0, data_format="NCDHW")(dout, weight)``, ``dout`` [N,
    in_channel, D, H, W], ``weight`` [in_channel, out_channel / group, kd, kh, kw]:

    .. math:: out[n, o, t s_d + a d_d - p_{head}, \ldots] \mathrel{+}= \sum_c dout[n, c, t, \ldots] \,
              w[c, o', a, \ldots]

    over the input channels c of o's group. Output [N, out_channel, D_out, H_out, W_out] with, per dim (``f =
    dilation * (k - 1) + 1``): "pad": ``(D - 1) * stride - head - tail + f + output_padding``; "same": ``D *
    stride``; "valid": ``D * stride + max(f - stride, 0)``. ``pad``: an int or (head, tail, top, bottom, left,
    right), with "pad" only; ``output_padding`` (an int or 3; "pad" only) must be below the stride or the
    dilation of its dim; ``stride`` and ``dilation`` an int, 3 or (1, 1, d, h, w). MindSpore's optional
    ``bias`` input must be None.

    No kernel of its own: per depth tap, one Conv2DBackpropInput over the input's depth planes batched
    together, shifted into place and summed (the module docstring). dtypes: float16, float32 (MindSpore's) and
    float64, both inputs the same."""

    def __init__(self, in_channel, out_channel, kernel_size, mode=1, pad_mode="valid", pad=0, stride=1,
                 dilation=1, group=1, output_padding=0, data_format="NCDHW"):  # fmt: skip
        name = self.name = "Conv3DTranspose"
        self.in_channel = validator.check_positive_int(in_channel, "in_channel", name)
        self.out_channel = validator.check_positive_int(out_channel, "out_channel", name)
        self.kernel_size = _triple(name, "kernel_size", kernel_size)
        self.mode = validator.check_equal_int(mode, 1, "mode", name)
        validator.check_value_type("pad_mode", pad_mode, [str], name)
        self.pad_mode = validator.check_string(pad_mode.lower(), ["valid", "same", "pad"], "pad_mode", name)
        self.pad = _pad6(name, pad)
        self.stride = _triple(name, "stride", stride)
        self.dilation = _triple(name, "dilation", dilation)
        self.group = validator.check_positive_int(group, "group", name)
        self.output_padding = _triple(name, "output_padding", output_padding, minimum=0)
        self.data_format = validator.check_string(data_format, ["NCDHW"], "data_format", name)
        if self.pad_mode != "pad" and (any(self.pad) or any(self.output_padding)):
            raise ValueError(
                f"For '{name}', the 'pad' and 'output_padding' must be 0 unless 'pad_mode' is 'pad', but got pad "
                f"{self.pad} and output_padding {self.output_padding} with pad_mode '{self.pad_mode}'."
            )
        for op, s, d in zip(self.output_padding, self.stride, self.dilation):
            if op >= max(s, d):
                raise ValueError(
                    f"For '{name}', the 'output_padding' must be below the stride or the dilation of its dim, but "
                    f"got output_padding {self.output_padding}, stride {self.stride}, dilation {self.dilation}."
                )
        if self.in_channel % self.group or self.out_channel % self.group:
            raise ValueError(
                f"For '{name}', the 'in_channel' ({self.in_channel}) and 'out_channel' ({self.out_channel}) must be "
                f"divisible by 'group' ({self.group})."
            )

    def __repr__(self) -> str:
        return (
            f"{self.name}(in_channel={self.in_channel}, out_channel={self.out_channel}, kernel_size="
            f"{self.kernel_size}, pad_mode={self.pad_mode!r}, pad={self.pad}, stride={self.stride}, dilation="
            f"{self.dilation}, group={self.group}, output_padding={self.output_padding})"
        )

    def extents(self, spatial) -> list:
        """``(head, out)`` of D, H and W for an input of those ``spatial`` sizes."""
        return [
            transposed_extent(self.name, n, k, s, d, self.pad_mode, self.pad[2 * i : 2 * i + 2], op)
            for i, (n, k, s, d, op) in enumerate(
                zip(spatial, self.kernel_size, self.stride, self.dilation, self.output_padding)
            )
        ]

    def _check(self, x: Tensor, w: Tensor) -> None:
        for arg, t in (("dout", x), ("weight", w)):
            if not isinstance(t, Tensor):
                raise TypeError(f"For '{self.name}', the '{arg}' must be a Tensor, but got {type(t).__name__}.")
            if t.ndim != 5:
                raise ValueError(f"For '{self.name}', the '{arg}' must be 5-D, but got shape {list(t.shape)}.")
        validator.check_tensors_dtypes_same_and_valid({"dout": x.dtype, "weight": w.dtype}, _FLOATS, self.name)
        want = (self.in_channel, self.out_channel // self.group, *self.kernel_size)
        if tuple(w.shape) != want:
            raise ValueError(
                f"For '{self.name}', the 'weight' must have shape [in_channel, out_channel / group, kd, kh, kw] = "
                f"{list(want)}, but got {list(w.shape)}."
            )
        if x.shape[1] != self.in_channel:
            raise ValueError(
                f"For '{self.name}', the 'dout' must have in_channel={self.in_channel} channels, but got shape "
                f"{list(x.shape)}."
            )
        require_known(self.name, "dout", x.shape, why="its depth taps need the sizes")

    def __call__(self, dout, weight, bias=None):
        if bias is not None:
            raise ValueError(f"For '{self.name}', the 'bias' must be None, but got {type(bias).__name__}.")
        self._check(dout, weight)
        n, c, depth, h, w = dout.shape
        (head_d, out_d), (head_h, out_h), (head_w, out_w) = self.extents((depth, h, w))
        kd = self.kernel_size[0]
        sd, dd = self.stride[0], self.dilation[0]
        planes = F.reshape(F.transpose(dout, (0, 2, 1, 3, 4)), (n * depth, c, h, w))
        taps = F.unstack(weight, axis=2) if kd > 1 else (F.reshape(weight, (*weight.shape[:2], *weight.shape[3:])),)
        full_d = (depth - 1) * sd + dd * (kd - 1) + 1
        parts = []
        for a in range(kd):
            y = transposed_conv2d(planes, taps[a], self.out_channel, self.stride[1:], self.dilation[1:], self.group,
                                  (head_h, head_w), (out_h, out_w))  # fmt: skip
            y = F.reshape(y, (n, depth, self.out_channel, out_h, out_w))
            if sd > 1:  # zero-stuffed: input depth t at t * sd
                zeros = F.zeros_like(y)
                y = F.reshape(F.stack([y] + [zeros] * (sd - 1), 2), (n, depth * sd, self.out_channel, out_h, out_w))
                y = _fit(y, 1, (depth - 1) * sd + 1)
            before = a * dd
            after = full_d - before - y.shape[1]
            parts.append(F._pad(((0, 0), (before, after), (0, 0), (0, 0), (0, 0)))(y) if before or after else y)
        full = parts[0] if kd == 1 else _add_n(tuple(parts))  # [N, full_d, O, H', W']
        if head_d:
            full = F.slice_(full, (0, head_d, 0, 0, 0), (n, full_d - head_d, self.out_channel, out_h, out_w))
        return F.transpose(_fit(full, 1, out_d), (0, 2, 1, 3, 4))
