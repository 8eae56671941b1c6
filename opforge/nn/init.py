"""Weight initializers (MindSpore's ``common.initializer``) and the seed they draw from.

``initializer(init, shape, dtype)`` gives a Tensor filled by ``init``: a name ("normal",
"uniform", "zeros", "ones", "xavier_uniform", "xavier_normal", "he_uniform", "he_normal",
"truncatedNormal", "orthogonal", "identity", "dirac", or a class name such as "XavierUniform", "HeNormal";
case-insensitive), an ``Initializer`` instance or
class, a number (a constant), or a
Tensor / NumPy array of the right shape.

Random initializers (and ``nn.Dropout`` masks) draw from one NumPy generator. Seed it with
``opforge.nn.set_seed(seed)`` (also ``opforge.nn.init.set_seed``) for reproducible networks;
without a seed it is seeded from the operating system's entropy.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from opforge import dtype as mstype
from opforge.seed import derived_seed, get_seed, seed_sets, set_seed  # noqa: F401 (the initializers' seed)
from opforge.seed import rng as _rng
from opforge.tensor import Tensor

__all__ = [
    "set_seed",
    "get_seed",
    "Initializer",
    "Normal",
    "Uniform",
    "Zero",
    "One",
    "Constant",
    "XavierUniform",
    "XavierNormal",
    "TruncatedNormal",
    "HeUniform",
    "HeNormal",
    "Orthogonal",
    "Identity",
    "Dirac",
    "initializer",
]


def _fans(shape) -> tuple:
    """(fan_in, fan_out) of a weight: Dense weights are [out, in]; conv weights [out, in, *kernel]."""
    shape = tuple(shape)
    if len(shape) < 2:
        raise ValueError(f"For fan-based initializers, the shape must have at least 2 dims, but got {list(shape)}.")
    receptive = math.prod(shape[2:]) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _assignment(arr: np.ndarray, num) -> np.ndarray:
    """Write ``num`` (a scalar or an array of ``arr``'s shape) into ``arr`` in place and return ``arr``:
    MindSpore's ``common.initializer._assignment``, which user-written ``_initialize`` methods call."""
    if arr.shape == ():
        arr[()] = num
    else:
        arr[...] = num
    return arr


def _calculate_fan_in_and_fan_out(shape) -> tuple:
    """(fan_in, fan_out) of a weight shape (a tuple, or anything with ``.shape``): MindSpore's private helper
    of the same name, which the model zoo imports."""
    return _fans(shape.shape if hasattr(shape, "shape") else shape)


def _calculate_correct_fan(shape, mode: str) -> int:
    """fan_in or fan_out of a weight shape, by ``mode``: MindSpore's private helper of the same name."""
    if mode.lower() not in ("fan_in", "fan_out"):
        raise ValueError(f"For '_calculate_correct_fan', the 'mode' must be 'fan_in' or 'fan_out', got {mode!r}.")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(shape)
    return fan_in if mode.lower() == "fan_in" else fan_out


def _calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain of an activation (MindSpore's private helper): 1 for linear, conv and sigmoid,
    5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (slope ``param``, default 0.01)."""
    return _gain(nonlinearity, param)


def _gain(nonlinearity: str, param=None) -> float:
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d", "conv3d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r} (linear, sigmoid, tanh, relu, leaky_relu).")


class Initializer:
    """Base class: ``init(shape) -> float64 NumPy array``; ``initializer`` casts to the dtype.

    A subclass overrides either ``sample(shape)`` (returning the array) or, as MindSpore's initializers and
    the model zoo's own (``KaimingNormal``, DCGAN's ``Normal``) do, ``_initialize(arr)``, which fills a NumPy
    array in place (``arr[:] = ...``, or ``_assignment(arr, values)``). ``init(arr)`` with an array fills that
    array in place and returns it (MindSpore's ``Initializer.__call__(arr)``); ``init(shape)`` returns a new one.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def sample(self, shape: tuple) -> np.ndarray:
        if type(self)._initialize is Initializer._initialize:
            raise NotImplementedError(
                f"For '{type(self).__name__}', an Initializer must override 'sample(shape)' or '_initialize(arr)'."
            )
        arr = np.zeros(shape, dtype=np.float64)
        self._initialize(arr)
        return arr

    def _initialize(self, arr: np.ndarray) -> None:
        """MindSpore's hook: fill ``arr`` in place (the built-in initializers fill it from ``sample``)."""
        if type(self).sample is Initializer.sample:
            raise NotImplementedError(
                f"For '{type(self).__name__}', an Initializer must override 'sample(shape)' or '_initialize(arr)'."
            )
        _assignment(arr, self.sample(arr.shape))

    def __call__(self, shape) -> np.ndarray:
        if isinstance(shape, np.ndarray):
            self._initialize(shape)
            return shape
        return self.sample(tuple(shape))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


class Normal(Initializer):
    """N(mean, sigma^2); MindSpore's default sigma is 0.01."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        super().__init__(sigma=sigma, mean=mean)
        self.sigma, self.mean = float(sigma), float(mean)

    def sample(self, shape):
        return _rng().normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    """U(-scale, scale); MindSpore's default scale is 0.07."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = float(scale)

    def sample(self, shape):
        return _rng().uniform(-self.scale, self.scale, shape)


class Constant(Initializer):
    """Every element ``value``."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def sample(self, shape):
        return np.full(shape, self.value, dtype=np.float64)


class Zero(Constant):
    def __init__(self):
        super().__init__(0.0)
        self._kwargs = {}


class One(Constant):
    def __init__(self):
        super().__init__(1.0)
        self._kwargs = {}


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) truncated to [a, b] (redrawn outside): MindSpore's ``TruncatedNormal(sigma=0.01,
    mean=0.0, a=-2.0, b=2.0)``, the bounds absolute as MindSpore's are."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        if not a < b:
            raise ValueError(f"For 'TruncatedNormal', the bounds must satisfy a < b, but got a={a}, b={b}.")
        self.sigma, self.mean, self.a, self.b = float(sigma), float(mean), float(a), float(b)

    def sample(self, shape):
        rng = _rng()
        out = rng.normal(self.mean, self.sigma, shape)
        outside = (out < self.a) | (out > self.b)
        while outside.any():  # redraw the few outside the bounds
            out[outside] = rng.normal(self.mean, self.sigma, int(outside.sum()))
            outside = (out < self.a) | (out > self.b)
        return out


class XavierUniform(Initializer):
    """Glorot uniform: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1.0):
        super().__init__(gain=gain)
        self.gain = float(gain)

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _rng().uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    """Glorot normal: N(0, s^2) with s = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1.0):
        super().__init__(gain=gain)
        self.gain = float(gain)

    def sample(self, shape):
        fan_in, fan_out = _fans(shape)
        return _rng().normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


class _He(Initializer):
    def __init__(self, negative_slope=0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"For '{type(self).__name__}', the 'mode' must be 'fan_in' or 'fan_out', got {mode!r}.")
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape) -> float:
        fan_in, fan_out = _fans(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_He):
    """Kaiming uniform: U(-b, b) with b = gain * sqrt(3 / fan) (gain from ``nonlinearity``)."""

    def sample(self, shape):
        bound = math.sqrt(3.0) * self._std(shape)
        return _rng().uniform(-bound, bound, shape)


class HeNormal(_He):
    """Kaiming normal: N(0, (gain / sqrt(fan))^2)."""

    def sample(self, shape):
        return _rng().normal(0.0, self._std(shape), shape)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times ``gain``: the Q of a QR factorisation of a normal [rows, cols] draw
    (rows = shape[0], cols = the product of the rest; sign-corrected so the draw is uniform over the
    orthogonal group), reshaped to ``shape``. MindSpore's ``Orthogonal(gain=1.)``; needs 2+ dims."""

    def __init__(self, gain: float = 1.0):
        super().__init__(gain=gain)
        self.gain = float(gain)

    def sample(self, shape):
        if len(shape) < 2:
            raise ValueError(f"For 'Orthogonal', the shape must have at least 2 dims, but got {list(shape)}.")
        rows, cols = shape[0], math.prod(shape[1:])
        flat = _rng().normal(0.0, 1.0, (max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(flat)
        q = q * np.where(np.diag(r) < 0, -1.0, 1.0)  # the sign of R's diagonal, for a uniform Q
        if rows < cols:
            q = q.T
        return self.gain * q.reshape(shape)


class Identity(Initializer):
    """The 2-D identity matrix (ones on the main diagonal of a [rows, cols] shape): MindSpore's ``Identity``."""

    def sample(self, shape):
        if len(shape) != 2:
            raise ValueError(f"For 'Identity', the shape must have 2 dims, but got {list(shape)}.")
        return np.eye(shape[0], shape[1])


class Dirac(Initializer):
    """A convolution weight [out, in / groups, *kernel] that passes its input through: in each of ``groups``
    groups, output channel i takes input channel i at the kernel's centre (MindSpore's ``Dirac(groups=1)``)."""

    def __init__(self, groups: int = 1):
        super().__init__(groups=groups)
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            raise ValueError(f"For 'Dirac', the 'groups' must be an int >= 1, but got {groups!r}.")
        self.groups = int(groups)

    def sample(self, shape):
        if len(shape) not in (3, 4, 5) or shape[0] % self.groups:
            raise ValueError(
                f"For 'Dirac', the shape must have 3, 4 or 5 dims with dim 0 divisible by groups={self.groups}, "
                f"but got {list(shape)}."
            )
        out = np.zeros(shape)
        per_group = shape[0] // self.groups
        centre = tuple(k // 2 for k in shape[2:])
        for g in range(self.groups):
            for i in range(min(per_group, shape[1])):
                out[(g * per_group + i, i, *centre)] = 1.0
        return out


# MindSpore registers each initializer under its class name in lower case ("xavieruniform", "henormal", ...;
# so "XavierUniform" and "HeNormal" work, the lookup being case-insensitive) and under its aliases.
_BY_NAME = {
    "normal": Normal,
    "xavieruniform": XavierUniform,
    "xaviernormal": XavierNormal,
    "heuniform": HeUniform,
    "henormal": HeNormal,
    "uniform": Uniform,
    "zeros": Zero,
    "zero": Zero,
    "ones": One,
    "one": One,
    "xavier_uniform": XavierUniform,
    "xavier_normal": XavierNormal,
    "truncatednormal": TruncatedNormal,
    "truncated_normal": TruncatedNormal,
    "he_uniform": HeUniform,
    "he_normal": HeNormal,
    "orthogonal": Orthogonal,
    "identity": Identity,
    "dirac": Dirac,
}


def initializer(init, shape, dtype=mstype.float32) -> Tensor:
    """A Tensor of ``shape`` and ``dtype`` filled by ``init`` (see the module docstring)."""
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ValueError(f"For 'initializer', the 'shape' must be non-negative, but got {list(shape)}.")
    dtype = mstype.to_dtype(dtype)
    if isinstance(init, (Tensor, np.ndarray)):
        array = np.asarray(init)
        if array.shape != shape:
            raise ValueError(
                f"For 'initializer', the given tensor has shape {list(array.shape)}, but the shape is {list(shape)}."
            )
        return Tensor(array.astype(dtype.np_dtype))
    if isinstance(init, str):
        cls = _BY_NAME.get(init.lower())
        if cls is None:
            raise ValueError(f"For 'initializer', unknown initializer {init!r}; known: {sorted(_BY_NAME)}.")
        init = cls()
    elif isinstance(init, numbers.Number) and not isinstance(init, bool):
        init = Constant(init)
    elif isinstance(init, type) and issubclass(init, Initializer):
        init = init()
    if not isinstance(init, Initializer):
        raise TypeError(
            f"For 'initializer', the 'init' must be a str, a number, an Initializer or a Tensor, "
            f"but got {type(init).__name__}."
        )
    return Tensor(np.asarray(init(shape)).astype(dtype.np_dtype))
