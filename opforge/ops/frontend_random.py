"""MindSpore's random operators as users call them, over the seeded kernels of
``opforge/primitives/random_ops.py`` (``Randn``, ``RandExt``, ``RandInt``, ``RandGamma``, ``RandPoisson``):
each call takes a (seed, offset) pair from a ``Generator`` (opforge/generator.py) and moves its offset on, so
successive calls draw new values and a program seeded with ``set_seed`` draws the same ones each run.

- The operator classes ``StandardNormal(seed=0, seed2=0)``, ``UniformReal(seed=0, seed2=0)`` and
  ``UniformInt(seed=0, seed2=0)`` own a generator, seeded from (seed, seed2) and the global seed, or from
  the global generator when both are 0 (MindSpore's rule: nothing set, fully random).
- ``RandomGamma``, ``Gamma``, ``Poisson`` and ``RandomPoisson`` (same seeding) broadcast their distributions'
  parameters to the output's shape for the RandGamma / RandPoisson kernels; ``gamma``, ``random_gamma`` and
  ``random_poisson`` are their functional forms.
- The functional ops (``randn``, ``rand``, ``randint``, their ``_like`` forms, ``standard_normal``,
  ``uniform``, ``normal``, ``bernoulli``, ``randperm``, ``multinomial``, ``shuffle``) draw from the default
  generator, or with ``seed`` given from a generator of that seed (the same values each call).

Inside ``opforge.jit`` the offset is a Tensor the trace refills before each replay, so a jitted function
draws new values at each call, the ones eager calls would."""

from __future__ import annotations

import numpy as np

from opforge import context
from opforge import dtype as mstype
from opforge import seed as global_seed
from opforge.dispatch.trace import replay_counter
from opforge.generator import Generator, default_generator
from opforge.ops import functional as F
from opforge.primitives import nn_ops, random_ops
from opforge.tensor import Tensor

__all__ = [
    "StandardNormal", "UniformReal", "UniformInt", "randn", "rand", "randint", "randn_like", "rand_like",
    "randint_like", "standard_normal", "uniform", "normal", "bernoulli", "randperm", "multinomial", "shuffle",
    "dropout", "RandomGamma", "Gamma", "Poisson", "RandomPoisson", "gamma", "random_gamma", "random_poisson",
]  # fmt: skip

_randn, _rand, _randint = random_ops.Randn(), random_ops.RandExt(), random_ops.RandInt()


def _generator_inputs(generator: Generator, device=None) -> tuple:
    """The (seed, offset) Tensors of the next call, on ``device`` (default: the context's); while a trace
    records, the offset one it refills."""
    device = device or context.get_context("device_target")
    counter = replay_counter(lambda: generator._step()[1], device)
    if counter is None:
        seed, offset = generator._step()
        counter = Tensor(np.array(offset, np.int64), device=device)
    else:
        seed = generator.initial_seed()
    return Tensor(np.array(seed, np.int64), device=device), counter


def _check_int(where: str, name: str, value, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"For '{where}', the '{name}' must be an int >= {minimum}, but got {value!r}.")
    return int(value)


def _generator_for(where: str, seed) -> Generator:
    """The default generator, or one of ``seed`` (the same values at each call)."""
    if seed is None:
        return default_generator
    return Generator().manual_seed(_check_int(where, "seed", seed))


def _shape(where: str, shape) -> tuple:
    if isinstance(shape, Tensor):
        shape = shape.asnumpy().tolist()
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(
        isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in shape
    ):
        raise TypeError(f"For '{where}', the 'shape' must be a tuple of int, but got {shape!r}.")
    return tuple(int(d) for d in shape)


def _size(where: str, size: tuple) -> tuple:
    """``*size``: ints, or one tuple or list of them."""
    return _shape(where, size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size))


def _float_dtype(where: str, dtype):
    dtype = mstype.float32 if dtype is None else dtype
    if not isinstance(dtype, mstype.Type) or dtype.kind != "f":
        raise TypeError(f"For '{where}', the 'dtype' must be a float dtype, but got {dtype!r}.")
    return dtype


# ---------------------------------------------------------------------------------------------
# The operator classes


class _SeededOperator:
    """A random operator class: its generator seeded from (seed, seed2) and the global seed."""

    def __init__(self, seed=0, seed2=0):
        name = type(self).__name__
        self.seed, self.seed2 = _check_int(name, "seed", seed), _check_int(name, "seed2", seed2)
        if self.seed == 0 and self.seed2 == 0:
            start = global_seed.derived_seed()
        else:
            words = [self.seed, self.seed2, global_seed.get_seed() or 0]
            start = int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0] >> np.uint64(1))
        self._generator = Generator().manual_seed(start)

    def _inputs(self):
        return _generator_inputs(self._generator)


class StandardNormal(_SeededOperator):
    """``StandardNormal(seed=0, seed2=0)(shape)``: float32 values of the standard normal distribution (the
    Randn kernel), new ones at each call."""

    def __call__(self, shape):
        return _randn(_shape("StandardNormal", shape), *self._inputs(), mstype.float32)


class UniformReal(_SeededOperator):
    """``UniformReal(seed=0, seed2=0)(shape)``: float32 values uniform in [0, 1) (the RandExt kernel)."""

    def __call__(self, shape):
        return _rand(_shape("UniformReal", shape), *self._inputs(), mstype.float32)


def _int_value(where: str, name: str, value) -> int:
    if isinstance(value, Tensor):
        if value.size != 1 or value.dtype.kind not in "iu":
            got = f"a {value.dtype} Tensor of shape {list(value.shape)}"
            raise TypeError(f"For '{where}', the '{name}' must be one int, but got {got}.")
        value = value.asnumpy().item()
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"For '{where}', the '{name}' must be an int, but got {type(value).__name__}.")
    return int(value)


class UniformInt(_SeededOperator):
    """``UniformInt(seed=0, seed2=0)(shape, minval, maxval)``: int32 values uniform in [minval, maxval)
    (the RandInt kernel); ``minval`` and ``maxval`` ints or one-element int Tensors."""

    def __call__(self, shape, minval, maxval):
        low, high = _int_value("UniformInt", "minval", minval), _int_value("UniformInt", "maxval", maxval)
        return _randint(low, high, _shape("UniformInt", shape), *self._inputs(), mstype.int32)


# ---------------------------------------------------------------------------------------------
# The functional ops


def randn(*size, dtype=None, seed=None):
    """Standard normal values of shape ``size`` (``dtype``: a float type, default float32)."""
    dtype = _float_dtype("randn", dtype)
    return _randn(_size("randn", size), *_generator_inputs(_generator_for("randn", seed)), dtype)


def rand(*size, dtype=None, seed=None):
    """Values uniform in [0, 1) of shape ``size`` (``dtype``: a float type, default float32)."""
    dtype = _float_dtype("rand", dtype)
    return _rand(_size("rand", size), *_generator_inputs(_generator_for("rand", seed)), dtype)


def randn_like(input, seed=None, *, dtype=None):  # noqa: A002 (MindSpore's name)
    """``randn`` of ``input``'s shape, on its device, of ``dtype`` (default ``input``'s)."""
    dtype = _float_dtype("randn_like", input.dtype if dtype is None else dtype)
    seeds = _generator_inputs(_generator_for("randn_like", seed), input.device)
    return _randn(tuple(input.shape), *seeds, dtype)


def rand_like(input, seed=None, *, dtype=None):  # noqa: A002 (MindSpore's name)
    """``rand`` of ``input``'s shape, on its device, of ``dtype`` (default ``input``'s)."""
    dtype = _float_dtype("rand_like", input.dtype if dtype is None else dtype)
    seeds = _generator_inputs(_generator_for("rand_like", seed), input.device)
    return _rand(tuple(input.shape), *seeds, dtype)


def _int_dtype(where: str, dtype):
    dtype = mstype.int64 if dtype is None else dtype
    if dtype not in (mstype.int32, mstype.int64):
        raise TypeError(f"For '{where}', the 'dtype' must be int32 or int64, but got {dtype!r}.")
    return dtype


def randint(low, high, size, seed=None, *, dtype=None):
    """Integers uniform in [low, high) of shape ``size`` (``dtype`` int32 or int64, default int64)."""
    dtype = _int_dtype("randint", dtype)
    low, high = _int_value("randint", "low", low), _int_value("randint", "high", high)
    return _randint(low, high, _shape("randint", size), *_generator_inputs(_generator_for("randint", seed)), dtype)


def randint_like(input, low, high, seed=None, *, dtype=None):  # noqa: A002 (MindSpore's name)
    """``randint`` of ``input``'s shape, on its device (``dtype`` default int64)."""
    dtype = _int_dtype("randint_like", dtype)
    low, high = _int_value("randint_like", "low", low), _int_value("randint_like", "high", high)
    seeds = _generator_inputs(_generator_for("randint_like", seed), input.device)
    return _randint(low, high, tuple(input.shape), *seeds, dtype)


def standard_normal(shape, seed=None):
    """float32 standard normal values of ``shape``."""
    return randn(_shape("standard_normal", shape), seed=seed)


def uniform(shape, minval, maxval, seed=None, dtype=mstype.float32):
    """Values uniform in [minval, maxval) of ``shape``: a float ``dtype`` gives ``minval + (maxval - minval) *
    u`` (``minval`` and ``maxval`` Tensors broadcast with ``shape``), int32 the integers of [minval, maxval)."""
    shape = _shape("uniform", shape)
    if dtype in (mstype.int32, mstype.int64):
        return randint(minval, maxval, shape, seed, dtype=dtype)
    u = rand(shape, dtype=_float_dtype("uniform", dtype), seed=seed)
    return F.add(minval, F.mul(F.sub(maxval, minval), u))


def normal(shape, mean, stddev, seed=None):
    """``mean + stddev * z`` with z standard normal of ``shape`` (``mean`` and ``stddev`` broadcast)."""
    return F.add(mean, F.mul(stddev, randn(_shape("normal", shape), seed=seed)))


def bernoulli(input, p=0.5, seed=None):  # noqa: A002 (MindSpore's name)
    """1 with probability ``p`` (a float or a Tensor broadcast with ``input``), else 0, in ``input``'s shape
    and dtype."""
    u = rand_like(input, seed, dtype=mstype.float32)
    return F.cast(F.less(u, p), input.dtype)


def randperm(n, seed=0, offset=0, dtype=mstype.int64):
    """A random permutation of [0, n): the order that sorts n uniform draws of the generator (seed, offset)
    (a float64 draw each: ties have probability about n^2 / 2^54)."""
    n = _check_int("randperm", "n", n)
    generator = Generator().manual_seed(_check_int("randperm", "seed", seed))
    generator.set_state([generator.initial_seed(), _check_int("randperm", "offset", offset)])
    u = _rand((n,), *_generator_inputs(generator), mstype.float64)
    return F.cast(F.sort(u)[1], dtype)


def shuffle(x, seed=None):
    """``x`` with its first dim in a random order."""
    if not x.shape:
        raise ValueError("For 'shuffle', the 'x' must have at least 1 dim, but got a 0-d Tensor.")
    u = rand((x.shape[0],), dtype=mstype.float64, seed=seed)
    return F.gather(x, F.sort(u)[1], 0)


def multinomial(input, num_samples, replacement=True, seed=None):  # noqa: A002 (MindSpore's name)
    """``num_samples`` category indices per row of ``input`` (1-D or 2-D non-negative weights, not
    necessarily summing to 1), int64. With replacement: the inverse of each row's cumulative distribution at
    uniform draws; without: the ``num_samples`` largest of log(w) + Gumbel noise (each row needs that many
    nonzero weights)."""
    num_samples = _check_int("multinomial", "num_samples", num_samples, 1)
    rows = input if len(input.shape) == 2 else F.expand_dims(input, 0)
    if len(rows.shape) != 2:
        raise ValueError(f"For 'multinomial', the 'input' must be 1-D or 2-D, but got shape {list(input.shape)}.")
    n, categories = rows.shape
    probs = F.cast(rows, mstype.float64)
    if replacement:
        cdf = F.cumsum(probs, 1)
        u = F.mul(rand((n, num_samples, 1), dtype=mstype.float64, seed=seed), F.expand_dims(cdf[:, -1:], 2))
        below = F.cast(F.less_equal(F.expand_dims(cdf, 1), u), mstype.int64)  # [n, samples, categories]
        out = F.minimum(F.reduce_sum_op()(below, 2), categories - 1)
    else:
        if num_samples > categories:
            raise ValueError(
                f"For 'multinomial', the 'num_samples' must be at most the {categories} categories without "
                f"replacement, but got {num_samples}."
            )
        gumbel = F.neg(F.log(F.neg(F.log(rand((n, categories), dtype=mstype.float64, seed=seed)))))
        out = F.cast(F.topk(F.add(F.log(probs), gumbel), num_samples)[1], mstype.int64)
    return out if len(input.shape) == 2 else F.reshape(out, (num_samples,))


def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002 (MindSpore's name)
    """MindSpore 2.x's ``ops.dropout``: each element zeroed with probability ``p``, the rest scaled by
    ``1 / (1 - p)`` (``DropoutExt``, its seeds from the default generator, or from ``seed``); ``input`` itself
    when ``training`` is False or ``p`` is 0. float16, bfloat16, float32, float64."""
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"For 'dropout', the 'p' must be a float in [0, 1], but got {p!r}.")
    if not isinstance(input, Tensor):
        raise TypeError(f"For 'dropout', the 'input' must be a Tensor, but got {type(input).__name__}.")
    if not training or p == 0:
        return input
    if p == 1:
        return F.zeros_like(input)
    seeds = _generator_inputs(_generator_for("dropout", seed), input.device)
    return nn_ops.DropoutExt(float(p))(input, *seeds)[0]


# ---------------------------------------------------------------------------------------------
# Gamma and Poisson: the RandGamma and RandPoisson kernels on the parameters broadcast to the output

_rand_gamma, _rand_poisson = random_ops.RandGamma(), random_ops.RandPoisson()
_PARAM_FLOATS = (mstype.float16, mstype.float32, mstype.float64)


def _parameter(where: str, name: str, value, dtypes=_PARAM_FLOATS) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"For '{where}', the '{name}' must be a Tensor, but got {type(value).__name__}.")
    if value.dtype not in dtypes:
        raise TypeError(
            f"For '{where}', the '{name}' must be one of {[str(t) for t in dtypes]}, but got {value.dtype}."
        )
    return value


def _broadcast_shape(where: str, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ValueError(f"For '{where}', the shapes {[list(s) for s in shapes]} do not broadcast.") from None


def _standard_gamma(alpha: Tensor, shape: tuple, generator: Generator) -> Tensor:
    return _rand_gamma(F.broadcast_to(alpha, shape), *_generator_inputs(generator, alpha.device))


def _poisson(rate: Tensor, shape: tuple, dtype, generator: Generator) -> Tensor:
    if rate.dtype.kind != "f":  # integer rates: counts in float64 (exact for int32, to 2^53 for int64)
        rate = F.cast(rate, mstype.float64)
    return _rand_poisson(F.broadcast_to(rate, shape), *_generator_inputs(generator, rate.device), dtype)


class RandomGamma(_SeededOperator):
    """``RandomGamma(seed=0, seed2=0)(shape, alpha)``: gamma values of shape ``alpha`` and scale 1, of shape
    ``shape + alpha.shape`` and alpha's dtype (float16, float32, float64); the RandGamma kernel."""

    def __call__(self, shape, alpha):
        alpha = _parameter("RandomGamma", "alpha", alpha)
        return _standard_gamma(alpha, _shape("RandomGamma", shape) + tuple(alpha.shape), self._generator)


class Gamma(_SeededOperator):
    """``Gamma(seed=0, seed2=0)(shape, alpha, beta)``: gamma values of shape ``alpha`` and inverse scale
    ``beta`` (RandGamma's value / beta), of the shape ``shape``, ``alpha`` and ``beta`` broadcast to; float32."""

    def __call__(self, shape, alpha, beta):
        alpha = _parameter("Gamma", "alpha", alpha, (mstype.float32,))
        beta = _parameter("Gamma", "beta", beta, (mstype.float32,))
        out = _broadcast_shape("Gamma", _shape("Gamma", shape), alpha.shape, beta.shape)
        return F.div(_standard_gamma(alpha, out, self._generator), F.broadcast_to(beta, out))


class Poisson(_SeededOperator):
    """``Poisson(seed=0, seed2=0)(shape, mean)``: int32 Poisson counts of the means ``mean`` (float32), of the
    shape ``shape`` and ``mean`` broadcast to; the RandPoisson kernel."""

    def __call__(self, shape, mean):
        mean = _parameter("Poisson", "mean", mean, (mstype.float32,))
        out = _broadcast_shape("Poisson", _shape("Poisson", shape), mean.shape)
        return _poisson(mean, out, mstype.int32, self._generator)


_POISSON_RATES = (*_PARAM_FLOATS, mstype.int32, mstype.int64)
_POISSON_OUTPUTS = (mstype.int32, mstype.int64, *_PARAM_FLOATS)


def _poisson_dtype(where: str, dtype):
    if dtype not in _POISSON_OUTPUTS:
        raise TypeError(
            f"For '{where}', the 'dtype' must be one of {[str(t) for t in _POISSON_OUTPUTS]}, but got {dtype!r}."
        )
    return dtype


class RandomPoisson(_SeededOperator):
    """``RandomPoisson(seed=0, seed2=0, dtype=mstype.int64)(shape, rate)``: Poisson counts of the means
    ``rate`` (float16, float32, float64, int32, int64), of shape ``shape + rate.shape`` and ``dtype`` (int32,
    int64, float16, float32, float64)."""

    def __init__(self, seed=0, seed2=0, dtype=mstype.int64):
        super().__init__(seed, seed2)
        self.dtype = _poisson_dtype("RandomPoisson", dtype)

    def __call__(self, shape, rate):
        rate = _parameter("RandomPoisson", "rate", rate, _POISSON_RATES)
        return _poisson(rate, _shape("RandomPoisson", shape) + tuple(rate.shape), self.dtype, self._generator)


def gamma(shape, alpha, beta, seed=None):
    """``ops.gamma``: ``Gamma``'s values from the default generator (or one of ``seed``)."""
    alpha = _parameter("gamma", "alpha", alpha, (mstype.float32,))
    beta = _parameter("gamma", "beta", beta, (mstype.float32,))
    out = _broadcast_shape("gamma", _shape("gamma", shape), alpha.shape, beta.shape)
    return F.div(_standard_gamma(alpha, out, _generator_for("gamma", seed)), F.broadcast_to(beta, out))


def random_gamma(shape, alpha, seed=None):
    """``ops.random_gamma``: ``RandomGamma``'s values (shape ``shape + alpha.shape``) from the default
    generator (or one of ``seed``)."""
    alpha = _parameter("random_gamma", "alpha", alpha)
    out = _shape("random_gamma", shape) + tuple(alpha.shape)
    return _standard_gamma(alpha, out, _generator_for("random_gamma", seed))


def random_poisson(shape, rate, seed=None, dtype=mstype.float32):
    """``ops.random_poisson``: Poisson counts of ``rate`` (shape ``shape + rate.shape``) from the default
    generator (or one of ``seed``), as ``dtype``."""
    rate = _parameter("random_poisson", "rate", rate, _POISSON_RATES)
    dtype = _poisson_dtype("random_poisson", dtype)
    return _poisson(
        rate, _shape("random_poisson", shape) + tuple(rate.shape), dtype, _generator_for("random_poisson", seed)
    )
