"""The activation cells of MindSpore's nn list beyond those in layers.py: SeLU, CELU, Softsign, HShrink,
SoftShrink, Mish (primitives), SiLU, LogSigmoid, Hardtanh, Tanhshrink, PReLU (composed of primitives, as
MindSpore's are). Each name also joins ``get_activation`` (``Dense(..., activation='selu')``)."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell
from opforge.nn.layers import _ACTIVATIONS
from opforge.tensor import Parameter, Tensor

__all__ = [
    "SeLU",
    "CELU",
    "Softsign",
    "HShrink",
    "SoftShrink",
    "Mish",
    "SiLU",
    "LogSigmoid",
    "Hardtanh",
    "Tanhshrink",
    "PReLU",
]


def _number(cell: str, name: str, value) -> float:
    if not isinstance(value, (int, float, np.floating, np.integer)) or isinstance(value, bool):
        raise TypeError(f"For '{cell}', the '{name}' must be a number, but got {type(value).__name__}.")
    return float(value)


class SeLU(Cell):
    """``scale * elu(x, alpha)`` with the self-normalising constants (the SeLU primitive)."""

    def __init__(self):
        super().__init__()
        self.selu = ops.SeLU()

    def construct(self, x):
        return self.selu(x)


class CELU(Cell):
    """``x`` for x > 0, else ``alpha * (exp(x / alpha) - 1)`` (the CeLU primitive); alpha must not be 0."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = _number("CELU", "alpha", alpha)
        self.celu = ops.CeLU(alpha=self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"

    def construct(self, x):
        return self.celu(x)


class Softsign(Cell):
    """``x / (1 + |x|)`` (the Softsign primitive)."""

    def __init__(self):
        super().__init__()
        self.softsign = ops.Softsign()

    def construct(self, x):
        return self.softsign(x)


class HShrink(Cell):
    """``x`` where ``|x| > lambd``, else 0 (the HShrink primitive)."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = _number("HShrink", "lambd", lambd)
        self.hshrink = ops.HShrink(lambd=self.lambd)

    def extend_repr(self) -> str:
        return f"lambd={self.lambd}"

    def construct(self, input_x):
        return self.hshrink(input_x)


class SoftShrink(Cell):
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, else 0 (the SoftShrink primitive)."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = _number("SoftShrink", "lambd", lambd)
        self.softshrink = ops.SoftShrink(lambd=self.lambd)

    def extend_repr(self) -> str:
        return f"lambd={self.lambd}"

    def construct(self, input_x):
        return self.softshrink(input_x)


class Mish(Cell):
    """``x * tanh(softplus(x))`` (the Mish primitive)."""

    def __init__(self):
        super().__init__()
        self.mish = ops.Mish()

    def construct(self, x):
        return self.mish(x)


class SiLU(Cell):
    """``x * sigmoid(x)`` (``ops.silu``)."""

    def construct(self, x):
        return ops.silu(x)


class LogSigmoid(Cell):
    """``log(sigmoid(x)) = -softplus(-x)`` (``ops.logsigmoid``)."""

    def construct(self, x):
        return ops.logsigmoid(x)


class Hardtanh(Cell):
    """``x`` clipped to ``[min_val, max_val]`` (``ops.hardtanh``)."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val = _number("Hardtanh", "min_val", min_val)
        self.max_val = _number("Hardtanh", "max_val", max_val)
        if self.min_val > self.max_val:
            raise ValueError(
                f"For 'Hardtanh', the 'min_val' must be <= 'max_val', but got {self.min_val} and {self.max_val}."
            )

    def extend_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def construct(self, x):
        return ops.hardtanh(x, self.min_val, self.max_val)


class Tanhshrink(Cell):
    """``x - tanh(x)`` (``ops.tanhshrink``)."""

    def construct(self, x):
        return ops.tanhshrink(x)


class PReLU(Cell):
    """MindSpore's ``nn.PReLU(channel=1, w=0.25)``: ``x`` for x > 0, else ``w[c] * x`` with a learnable
    Parameter ``w`` of ``channel`` slopes over dim 1 (``ops.prelu``). ``w`` is a number, a list, a NumPy
    array or a Tensor of ``channel`` values."""

    def __init__(self, channel: int = 1, w=0.25):
        super().__init__()
        if isinstance(channel, bool) or not isinstance(channel, (int, np.integer)) or channel < 1:
            raise ValueError(f"For 'PReLU', the 'channel' must be an int >= 1, but got {channel!r}.")
        self.channel = int(channel)
        values = np.asarray(w.asnumpy() if isinstance(w, Tensor) else w, np.float32)
        if values.ndim == 0:
            values = np.full((self.channel,), float(values), np.float32)
        if values.shape != (self.channel,):
            raise ValueError(
                f"For 'PReLU', the 'w' must be a number or {self.channel} values (the channels), "
                f"but got shape {list(values.shape)}."
            )
        self.w = Parameter(Tensor(values, mstype.float32), "w")

    def extend_repr(self) -> str:
        return f"channel={self.channel}"

    def construct(self, x):
        return ops.prelu(x, self.w)


_ACTIVATIONS.update(
    selu=SeLU,
    celu=CELU,
    softsign=Softsign,
    hshrink=HShrink,
    softshrink=SoftShrink,
    mish=Mish,
    silu=SiLU,
    logsigmoid=LogSigmoid,
    hardtanh=Hardtanh,
    tanhshrink=Tanhshrink,
    prelu=PReLU,
)


# ---------------------------------------------------------------------------------------------
# MindSpore 2.x's ELU, Softmin, Softmax2d, GLU, Threshold and FastGelu, composed of primitives.


def _axis(cell: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{cell}', the 'axis' must be an int, but got {type(value).__name__}.")
    return int(value)


def _check_rank(cell: str, x, ranks: tuple) -> None:
    if x.ndim not in ranks:
        raise ValueError(
            f"For '{cell}', the input must have rank {' or '.join(map(str, ranks))}, but got shape {list(x.shape)}."
        )


class ELU(Cell):
    r"""MindSpore 2.x's ``nn.ELU(alpha=1.0)``: :math:`x` for :math:`x > 0`, else
    :math:`\alpha (e^x - 1)` (the Elu primitive; float16, float32, float64)."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = _number("ELU", "alpha", alpha)
        self.elu = ops.Elu(alpha=self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"

    def construct(self, x):
        return self.elu(x)


class Softmin(Cell):
    r"""MindSpore's ``nn.Softmin(axis=-1)``: :math:`\exp(-x_i) / \sum_j \exp(-x_j)` along ``axis`` (an int or a
    tuple of ints): the Softmax primitive of :math:`-x` (Neg). float16, float32, float64."""

    def __init__(self, axis=-1):
        super().__init__()
        if isinstance(axis, (tuple, list)):
            self.axis = tuple(_axis("Softmin", a) for a in axis)
        else:
            self.axis = _axis("Softmin", axis)
        self.softmax = ops.Softmax(self.axis)
        self.neg = ops.Neg()

    def extend_repr(self) -> str:
        return f"axis={self.axis}"

    def construct(self, x):
        return self.softmax(self.neg(x))


class Softmax2d(Cell):
    r"""MindSpore's ``nn.Softmax2d()``: the softmax over the channels (axis -3) of [C, H, W] or [N, C, H, W]:
    :math:`\exp(x_c) / \sum_{c'} \exp(x_{c'})` at each spatial position (the Softmax primitive).
    float16, float32, float64."""

    def __init__(self):
        super().__init__()
        self.softmax = ops.Softmax(-3)

    def construct(self, x):
        _check_rank("Softmax2d", x, (3, 4))
        return self.softmax(x)


class GLU(Cell):
    r"""MindSpore's ``nn.GLU(axis=-1)``: the gated linear unit :math:`a \otimes \sigma(b)`, with :math:`a` and
    :math:`b` the first and second halves of the input along ``axis`` (whose size must be even): Split,
    Sigmoid and Mul. float16, float32, float64."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = _axis("GLU", axis)
        self.split = ops.Split(self.axis, 2)
        self.sigmoid = ops.Sigmoid()

    def extend_repr(self) -> str:
        return f"axis={self.axis}"

    def construct(self, x):
        if not -x.ndim <= self.axis < max(x.ndim, 1) or x.shape[self.axis] % 2:
            raise ValueError(
                f"For 'GLU', the input's dim 'axis'={self.axis} must exist and have an even size, "
                f"but got shape {list(x.shape)}."
            )
        a, b = self.split(x)
        return a * self.sigmoid(b)


class Threshold(Cell):
    r"""MindSpore's ``nn.Threshold(threshold, value)``: :math:`x` where :math:`x > threshold`, else ``value``
    (Greater and Select; the gradient flows to the kept elements). Float and int inputs."""

    def __init__(self, threshold, value):
        super().__init__()
        self.threshold = _number("Threshold", "threshold", threshold)
        self.value = _number("Threshold", "value", value)
        self.greater = ops.Greater()
        self.select = ops.Select()

    def extend_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"

    def construct(self, input_x):
        keep = self.greater(input_x, ops.fill(input_x.dtype, input_x.shape, self.threshold))
        return self.select(keep, input_x, ops.fill(input_x.dtype, input_x.shape, self.value))


class FastGelu(Cell):
    r"""MindSpore's ``nn.FastGelu()``: :math:`\frac{x}{1 + e^{-1.702 |x|}} e^{0.851 (x - |x|)}`, the sigmoid
    approximation :math:`x \sigma(1.702 x)` of GeLU (Abs, Exp and the arithmetic primitives).
    float16, float32, float64."""

    def __init__(self):
        super().__init__()
        self.abs, self.exp = ops.Abs(), ops.Exp()

    def construct(self, x):
        a = self.abs(x)
        return x / (1.0 + self.exp(a * -1.702)) * self.exp((x - a) * 0.851)


_ACTIVATIONS.update(softmin=Softmin, softmax2d=Softmax2d, glu=GLU, fast_gelu=FastGelu, fastgelu=FastGelu)
__all__ += ["ELU", "Softmin", "Softmax2d", "GLU", "Threshold", "FastGelu"]


class RReLU(Cell):
    r"""MindSpore's ``nn.RReLU(lower=1/8, upper=1/3)``: :math:`x` where :math:`x \ge 0`, else :math:`\alpha x`
    with :math:`\alpha \sim U(lower, upper)` drawn for each element at each call (``ops.rand_like``: the default
    generator, so ``set_seed`` repeats the draws and a jitted call draws new ones), as MindSpore's, in
    training and evaluation alike. float16, float32, float64."""

    def __init__(self, lower=1 / 8, upper=1 / 3):
        super().__init__()
        for name, value in (("lower", lower), ("upper", upper)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"For 'RReLU', the '{name}' must be an int or a float, but got {type(value).__name__}.")
        if lower > upper:
            raise ValueError(f"For 'RReLU', the 'lower' must be at most 'upper' {upper}, but got {lower}.")
        self.lower, self.upper = float(lower), float(upper)

    def extend_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"

    def construct(self, x):
        if not isinstance(x, Tensor):
            raise TypeError(f"For 'RReLU', the 'x' must be a Tensor, but got {type(x).__name__}.")
        alpha = ops.rand_like(x) * (self.upper - self.lower) + self.lower
        return ops.select(ops.greater_equal(x, 0.0), x, x * alpha)


__all__ += ["RReLU"]
