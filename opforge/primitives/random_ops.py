"""The random operators: ``Randn``, ``RandExt``, ``RandInt``, ``RandGamma`` and ``RandPoisson``, whose
generator's seed and offset are inputs (one int64 Tensor each, read by the kernel at each launch), as
MindSpore's generator-driven random operators are. Value i is a pure function of (seed, offset, i)
(``csrc/include/opforge/functors/random.h``), so the CPU and the GPU draw the same values. The stateful front
ends (``StandardNormal``, ``UniformReal``, ``UniformInt``, ``Gamma``, ``RandomPoisson``, ``ops.randn``, ...)
pick the seeds and broadcast the distributions' parameters to the output's shape:
``opforge/ops/frontend_random.py``."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.dispatch import signature as sig
from opforge.primitives._utils import _Operator
from opforge.primitives.primitive import prim_attr_register
from opforge.primitives.validator import Validator as validator

__all__ = ["Randn", "RandExt", "RandInt", "RandGamma", "RandPoisson"]

_FLOAT_TYPES = (mstype.float16, mstype.bfloat16, mstype.float32, mstype.float64)
_INT_TYPES = (mstype.int32, mstype.int64)
_GAMMA_TYPES = (mstype.float16, mstype.float32, mstype.float64)
_POISSON_TYPES = (mstype.int32, mstype.int64, mstype.float16, mstype.float32, mstype.float64)


def _check_shape(prim_name: str, shape) -> list:
    if not isinstance(shape, (tuple, list)) or not all(type(d) is int for d in shape):
        raise TypeError(f"For '{prim_name}', the 'shape' must be a tuple of int, but got {shape!r}.")
    if any(d < 0 for d in shape):
        raise ValueError(f"For '{prim_name}', each dim of 'shape' must be >= 0, but got {list(shape)}.")
    return list(shape)


def _check_seeds(prim_name: str, seed, offset) -> None:
    for name, dtype in (("seed", seed), ("offset", offset)):
        validator.check_tensor_dtype_valid(name, dtype, [mstype.int64], prim_name)


def _check_dtype(prim_name: str, dtype, valid) -> mstype.Type:
    if not isinstance(dtype, mstype.Type) or dtype not in valid:
        raise TypeError(f"For '{prim_name}', the 'dtype' must be one of {[str(t) for t in valid]}, but got {dtype!r}.")
    return dtype


class _SeededFloat(_Operator):
    __mindspore_signature__ = (
        sig.make_sig("shape"),
        sig.make_sig("seed"),
        sig.make_sig("offset"),
        sig.make_sig("dtype"),
    )
    constant_inputs = ((0, "shape"), (3, "dtype"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["shape", "seed", "offset", "dtype"], outputs=["output"])

    def infer_shape(self, shape, seed, offset, dtype):
        for name, s in (("seed", seed), ("offset", offset)):
            if list(s) not in ([], [1]):
                raise ValueError(f"For '{self.name}', the '{name}' must be one int64 (shape [] or [1]), but got {s}.")
        return _check_shape(self.name, shape)

    def infer_dtype(self, shape, seed, offset, dtype):
        _check_seeds(self.name, seed, offset)
        return _check_dtype(self.name, dtype, _FLOAT_TYPES)


class Randn(_SeededFloat):
    r"""Standard normal values: ``Randn()(shape, seed, offset, dtype)``; by Box-Muller on pairs, elements
    :math:`2k` and :math:`2k+1` are :math:`r \cos t` and :math:`r \sin t` with
    :math:`r = \sqrt{-2 \ln(1 - u_{2k})}`, :math:`t = 2 \pi u_{2k+1}` and :math:`u_j` the generator's uniform
    draws of (seed, offset), computed in float64 for float64 and in float32 otherwise.
    dtypes (CPU, GPU): float16, bfloat16, float32, float64; seed and offset int64."""


class RandExt(_SeededFloat):
    r"""Uniform values in [0, 1): ``RandExt()(shape, seed, offset, dtype)``, value i the generator's draw
    :math:`u_i` of (seed, offset) (53 random bits, rounded to ``dtype``: float16 and bfloat16 may round up
    to 1). dtypes (CPU, GPU): float16, bfloat16, float32, float64; seed and offset int64."""


class RandInt(_Operator):
    r"""Uniform integers in [low, high): ``RandInt()(low, high, shape, seed, offset, dtype)``, value i
    :math:`low + \lfloor bits_i \cdot (high - low) / 2^{64} \rfloor` with :math:`bits_i` the generator's 64
    random bits of (seed, offset). ``low`` and ``high`` are Python ints, ``high > low``, both within
    ``dtype``. dtypes (CPU, GPU): int32, int64; seed and offset int64."""

    __mindspore_signature__ = (
        sig.make_sig("low"),
        sig.make_sig("high"),
        sig.make_sig("shape"),
        sig.make_sig("seed"),
        sig.make_sig("offset"),
        sig.make_sig("dtype"),
    )
    constant_inputs = ((0, "low"), (1, "high"), (2, "shape"), (5, "dtype"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["low", "high", "shape", "seed", "offset", "dtype"], outputs=["output"])

    def infer_shape(self, low, high, shape, seed, offset, dtype):
        for name, v in (("low", low), ("high", high)):
            if type(v) is not int:
                raise TypeError(f"For '{self.name}', the '{name}' must be an int, but got {type(v).__name__}.")
        if high <= low:
            raise ValueError(f"For '{self.name}', the 'high' must be greater than 'low' {low}, but got {high}.")
        for name, s in (("seed", seed), ("offset", offset)):
            if list(s) not in ([], [1]):
                raise ValueError(f"For '{self.name}', the '{name}' must be one int64 (shape [] or [1]), but got {s}.")
        return _check_shape(self.name, shape)

    def infer_dtype(self, low, high, shape, seed, offset, dtype):
        _check_seeds(self.name, seed, offset)
        dtype = _check_dtype(self.name, dtype, _INT_TYPES)
        info = (-(2**31), 2**31) if dtype == mstype.int32 else (-(2**63), 2**63)
        if not (info[0] <= low and high <= info[1]):
            raise ValueError(
                f"For '{self.name}', 'low' and 'high' must lie in [{info[0]}, {info[1]}] for {dtype}, "
                f"but got [{low}, {high})."
            )
        return dtype


class _Parametrized(_Operator):
    """``Prim()(parameter, seed, offset[, dtype])``: a value of a distribution for each element of the
    parameter tensor, the output of its shape."""

    def _check(self, param, seed, offset) -> list:
        for name, s in (("seed", seed), ("offset", offset)):
            if list(s) not in ([], [1]):
                raise ValueError(f"For '{self.name}', the '{name}' must be one int64 (shape [] or [1]), but got {s}.")
        return list(param)


class RandGamma(_Parametrized):
    r"""Standard gamma values (scale 1) of the shapes ``alpha``: ``RandGamma()(alpha, seed, offset)``, element
    i drawn by Marsaglia and Tsang's rejection from its own stream of the generator's draws of (seed,
    offset) (``functors/random.h``, in float64), :math:`\alpha < 1` boosted by :math:`u^{1/\alpha}`; an alpha
    <= 0 or NaN gives NaN. dtypes (CPU, GPU): float16, float32, float64; seed and offset int64."""

    __mindspore_signature__ = (sig.make_sig("alpha"), sig.make_sig("seed"), sig.make_sig("offset"))

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["alpha", "seed", "offset"], outputs=["output"])

    def infer_shape(self, alpha, seed, offset):
        return self._check(alpha, seed, offset)

    def infer_dtype(self, alpha, seed, offset):
        _check_seeds(self.name, seed, offset)
        return validator.check_tensor_dtype_valid("alpha", alpha, _GAMMA_TYPES, self.name)


class RandPoisson(_Parametrized):
    r"""Poisson counts of the means ``rate``: ``RandPoisson()(rate, seed, offset, dtype)``, element i drawn from
    its own stream of the generator's draws (Knuth's product of uniforms below rate 10, Hormann's transformed
    rejection above). A rate < 0, +inf or NaN gives NaN, or -1 in an integer ``dtype``; a count past an
    integer type's range its highest value. dtypes (CPU, GPU): rate float16, float32, float64; output int32,
    int64, float16, float32, float64; seed and offset int64."""

    __mindspore_signature__ = (
        sig.make_sig("rate"),
        sig.make_sig("seed"),
        sig.make_sig("offset"),
        sig.make_sig("dtype"),
    )
    constant_inputs = ((3, "dtype"),)

    @prim_attr_register
    def __init__(self):
        self.init_prim_io_names(inputs=["rate", "seed", "offset", "dtype"], outputs=["output"])

    def infer_shape(self, rate, seed, offset, dtype):
        return self._check(rate, seed, offset)

    def infer_dtype(self, rate, seed, offset, dtype):
        _check_seeds(self.name, seed, offset)
        validator.check_tensor_dtype_valid("rate", rate, _GAMMA_TYPES, self.name)
        return _check_dtype(self.name, dtype, _POISSON_TYPES)
