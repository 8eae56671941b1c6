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
