"""Layers: Dense, Flatten, Dropout and the activation cells, each built from primitives."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge import ops
from opforge.dispatch.trace import replay_counter
from opforge.nn import init as _init
from opforge.nn.cell import Cell
from opforge.tensor import Parameter, Tensor

__all__ = [
    "Dense",
    "Flatten",
    "Dropout",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Elu",
    "Softmax",
    "LogSoftmax",
    "get_activation",
]


class ReLU(Cell):
    """``max(x, 0)`` (the ReLU primitive)."""

    def __init__(self):
        super().__init__()
        self.relu = ops.ReLU()

    def construct(self, x):
        return self.relu(x)


class Sigmoid(Cell):
    """``1 / (1 + exp(-x))`` (the Sigmoid primitive)."""

    def __init__(self):
        super().__init__()
        self.sigmoid = ops.Sigmoid()

    def construct(self, x):
        return self.sigmoid(x)


class Tanh(Cell):
    """``tanh(x)`` (the Tanh primitive)."""

    def __init__(self):
        super().__init__()
        self.tanh = ops.Tanh()

    def construct(self, x):
        return self.tanh(x)


class Elu(Cell):
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)`` (the Elu primitive)."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = float(alpha)
        self.elu = ops.Elu(alpha=self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"

    def construct(self, x):
        return self.elu(x)


class Softmax(Cell):
    """``exp(x) / sum(exp(x))`` along ``axis`` (the Softmax primitive)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis
        self.softmax = ops.Softmax(axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"

    def construct(self, x):
        return self.softmax(x)


class LogSoftmax(Cell):
    """``x - log(sum(exp(x)))`` along ``axis`` (the LogSoftmax primitive)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = axis
        self.log_softmax = ops.LogSoftmax(axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"

    def construct(self, x):
        return self.log_softmax(x)


_ACTIVATIONS = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh, "elu": Elu, "softmax": Softmax}


def get_activation(name, prim_name=None):
    """An activation cell from its MindSpore name ("relu", "relu6", "sigmoid", "tanh", "elu", "softmax",
    "logsoftmax", "gelu", "hswish", "hsigmoid", "leakyrelu", "softplus", and those of nn/activation.py:
    "selu", "celu", "silu", "softsign", "hshrink", "softshrink", "mish", "logsigmoid", "hardtanh",
    "tanhshrink", "prelu"; case-insensitive); None or a Cell passes through."""
    if name is None or isinstance(name, Cell):
        return name
    if isinstance(name, str) and name.lower() in _ACTIVATIONS:
        return _ACTIVATIONS[name.lower()]()
    raise ValueError(f"unknown activation {name!r}; give a Cell or one of {sorted(_ACTIVATIONS)}.")


class Dense(Cell):
    r"""Fully connected layer: :math:`y = \mathrm{activation}(x W^T + b)`.

    ``weight`` has shape ``[out_channels, in_channels]`` and ``bias`` ``[out_channels]``; ``x`` is
    ``[..., in_channels]`` (leading axes are flattened for the MatMul and restored after).
    ``weight_init`` / ``bias_init`` take anything ``nn.init.initializer`` takes.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        weight_init="normal",
        bias_init="zeros",
        has_bias: bool = True,
        activation=None,
        dtype=mstype.float32,
    ):
        super().__init__()
        for name, value in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
                raise ValueError(f"For 'Dense', the '{name}' must be a positive int, but got {value!r}.")
        if not isinstance(has_bias, bool):
            raise TypeError(f"For 'Dense', the 'has_bias' must be bool, but got {type(has_bias).__name__}.")
        self.in_channels, self.out_channels, self.has_bias = int(in_channels), int(out_channels), has_bias
        self.weight = Parameter(_init.initializer(weight_init, (self.out_channels, self.in_channels), dtype), "weight")
        self.bias = Parameter(_init.initializer(bias_init, (self.out_channels,), dtype), "bias") if has_bias else None
        self.matmul = ops.MatMul(transpose_b=True)
        self.bias_add = ops.BiasAdd()
        self.reshape = ops.Reshape()
        self.activation = get_activation(activation)
        self.activation_flag = self.activation is not None

    def construct(self, x):
        shape = x.shape
        if not shape or shape[-1] not in (self.in_channels, -1):  # -1: a placeholder's unknown dim
            raise ValueError(
                f"For 'Dense', the input's last dimension must be in_channels={self.in_channels}, "
                f"but got shape {list(shape)}."
            )
        if len(shape) != 2:
            x = self.reshape(x, (-1, self.in_channels))
        # The registries directly: attribute access to a Parameter or a Cell goes through __getattr__.
        params = self._params
        x = self.matmul(x, params["weight"])
        if self.has_bias:
            x = self.bias_add(x, params["bias"])
        if self.activation_flag:
            x = self._cells["activation"](x)
        if len(shape) != 2:
            x = self.reshape(x, tuple(shape[:-1]) + (self.out_channels,))
        return x

    def extend_repr(self) -> str:
        return f"input_channels={self.in_channels}, output_channels={self.out_channels}, has_bias={self.has_bias}"


class Flatten(Cell):
    """Flattens every axis but the first: ``[N, ...] -> [N, prod(...)]`` (the Reshape primitive)."""

    def __init__(self):
        super().__init__()
        self.reshape = ops.Reshape()

    def construct(self, x):
        if x.ndim < 1:
            raise ValueError(f"For 'Flatten', the input must have at least 1 dimension, but got shape {list(x.shape)}.")
        n, rest = x.shape[0], x.shape[1:]
        if n < 0 and all(d >= 0 for d in rest):  # a placeholder's unknown batch: the rest is known
            return self.reshape(x, (-1, int(np.prod(rest))))
        return self.reshape(x, (n, -1) if n else (0, int(np.prod(rest))))


class ClipByNorm(Cell):
    r"""MindSpore's ``nn.ClipByNorm(axis=None)``: ``cell(x, clip_norm)`` is
    :math:`x \cdot clip\_norm / \max(\lVert x \rVert_2, clip\_norm)`, the 2-norm over ``axis`` (every
    dim when None), so a tensor whose norm is at most ``clip_norm`` is unchanged."""

    def __init__(self, axis=None):
        super().__init__()
        self.axis = () if axis is None else axis

    def construct(self, x, clip_norm):
        norm = ops.sqrt(ops.ReduceSum(keep_dims=True)(ops.square(x), self.axis))
        clip_norm = ops.Cast()(clip_norm, x.dtype) if isinstance(clip_norm, Tensor) else clip_norm
        return x * clip_norm / ops.maximum(norm, clip_norm)


class Dropout(Cell):
    """Zeroes each element with probability ``p = 1 - keep_prob`` in training mode and scales the
    rest by ``1 / keep_prob``; the identity in evaluation mode (``set_train(False)``, the default).

    Runs the Dropout primitive (its counter-based generator, the same on the CPU and the GPU) with
    ``Seed0`` = this cell's seed (``seed``, or drawn from the global generator, ``nn.set_seed``) and
    ``Seed1`` = the number of training calls so far, so every step draws a new mask and two cells with
    one seed draw the same sequence. Differentiates through the primitive's bprop (DropoutGrad).
    Under ``jit`` and in GRAPH_MODE it runs ``DropoutExt`` with the step as a Tensor that each replay
    refills with the next step (``replay_counter``): the replayed steps draw the masks eager calls would.
    """

    def __init__(self, keep_prob: float = 0.5, p: float | None = None, seed: int | None = None, dtype=mstype.float32):
        super().__init__()
        if p is not None:
            if not isinstance(p, (float, int)) or isinstance(p, bool) or not 0.0 <= p < 1.0:
                raise ValueError(f"For 'Dropout', the 'p' must be a float in [0, 1), but got {p!r}.")
            keep_prob = 1.0 - p
        if not isinstance(keep_prob, (float, int)) or isinstance(keep_prob, bool) or not 0.0 < keep_prob <= 1.0:
            raise ValueError(f"For 'Dropout', the 'keep_prob' must be a float in (0, 1], but got {keep_prob!r}.")
        self.keep_prob = float(keep_prob)
        self.p = 1.0 - self.keep_prob
        self.seed = _init.derived_seed() if seed is None else int(seed)
        self.step = 0
        # MindSpore's attribute: the zoo's parallel programs shard it (``dropout.dropout.shard(((dp, 1),))``);
        # each call runs a Dropout of its own seeds, with this primitive's strategy
        self.dropout = ops.Dropout(keep_prob=self.keep_prob)

    def extend_repr(self) -> str:
        return f"p={self.p:g}"

    def construct(self, x):
        if not self.training or self.keep_prob == 1.0:
            return x
        strategy = self.dropout.in_strategy
        return dropout_with(x, self.keep_prob, self.seed, dropout_step(self, x.device), strategy)


def dropout_step(owner, device: str):
    """The Seed1 of ``owner``'s next dropout mask: ``owner.step`` (a Python int, moved on), or while a
    trace records, a Tensor each replay refills with the next one (``replay_counter``)."""

    def advance() -> int:
        step = owner.step
        owner.step = step + 1
        return step

    counter = replay_counter(advance, device)
    return advance() if counter is None else counter


def dropout_with(x, keep_prob: float, seed: int, step, strategy=None):
    """``x`` through the Dropout mask of (``seed``, ``step``): the Dropout primitive for an int step,
    ``DropoutExt`` for a Tensor one (the same mask; its kernel reads the step at each replay). ``strategy``:
    the Dropout's sharding strategy (``Primitive.shard``), or None."""
    if isinstance(step, Tensor):
        seed = Tensor(np.array(seed, np.int64), device=x.device)
        # (no strategy: DropoutExt follows x's layout, what an elementwise strategy for x asks of it)
        return ops.DropoutExt(p=1.0 - keep_prob)(x, seed, step)[0]
    prim = ops.Dropout(keep_prob=keep_prob, Seed0=seed, Seed1=step)
    if strategy is not None:
        prim.shard(strategy)
    return prim(x)[0]


# ---------------------------------------------------------------------------------------------
# GELU, HSigmoid, HSwish, LeakyReLU, Softplus: MindSpore's cells over the elementwise primitives.


class GELU(Cell):
    """GeLU: ``approximate=True`` MindSpore's tanh formula (the GeLU primitive), False the exact
    ``x * Phi(x)`` (``ops.gelu(x, "none")``)."""

    def __init__(self, approximate: bool = True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise TypeError(f"For 'GELU', the 'approximate' must be a bool, but got {type(approximate).__name__}.")
        self.approximate = approximate

    def extend_repr(self) -> str:
        return f"approximate={self.approximate}"

    def construct(self, x):
        return ops.gelu(x, "tanh" if self.approximate else "none")


class HSigmoid(Cell):
    """``relu6(x + 3) / 6`` (the HSigmoid primitive)."""

    def __init__(self):
        super().__init__()
        self.hsigmoid = ops.HSigmoid()

    def construct(self, x):
        return self.hsigmoid(x)


class HSwish(Cell):
    """``x * relu6(x + 3) / 6`` (the HSwish primitive)."""

    def __init__(self):
        super().__init__()
        self.hswish = ops.HSwish()

    def construct(self, x):
        return self.hswish(x)


class LeakyReLU(Cell):
    """``x`` for x >= 0, ``alpha * x`` below: ``ops.leaky_relu`` (Maximum, or Minimum for alpha > 1)."""

    def __init__(self, alpha: float = 0.2):
        super().__init__()
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool):
            raise TypeError(f"For 'LeakyReLU', the 'alpha' must be a number, but got {type(alpha).__name__}.")
        self.alpha = float(alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)


class Softplus(Cell):
    """``log(1 + exp(beta * x)) / beta`` (``ops.softplus``; the Softplus primitive)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def extend_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"

    def construct(self, x):
        return ops.softplus(x, self.beta, self.threshold)


class ReLU6(Cell):
    """``min(max(x, 0), 6)`` (the ReLU6 primitive)."""

    def __init__(self):
        super().__init__()
        self.relu6 = ops.ReLU6()

    def construct(self, x):
        return self.relu6(x)


_ACTIVATIONS.update(
    gelu=GELU,
    hsigmoid=HSigmoid,
    hswish=HSwish,
    leakyrelu=LeakyReLU,
    softplus=Softplus,
    relu6=ReLU6,
    logsoftmax=LogSoftmax,
)
__all__ += ["GELU", "HSigmoid", "HSwish", "LeakyReLU", "Softplus", "ReLU6"]


class Pad(Cell):
    """MindSpore's ``nn.Pad(paddings, mode="CONSTANT")``: ``paddings`` one (before, after) pair per dim;
    "CONSTANT" pads with zeros (the Pad primitive), "REFLECT" and "SYMMETRIC" with the input's mirror image
    (without and with the edge; ``ops.functional.mirror_pad``, built from Slice, ReverseV2 and Concat)."""

    def __init__(self, paddings, mode="CONSTANT"):
        super().__init__()
        if not isinstance(mode, str) or mode.upper() not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
            raise ValueError(f"For 'Pad', the 'mode' must be 'CONSTANT', 'REFLECT' or 'SYMMETRIC', but got {mode!r}.")
        self.mode = mode.upper()
        self.paddings = tuple(tuple(p) for p in paddings)
        self.pad = ops.Pad(self.paddings) if self.mode == "CONSTANT" else None

    def construct(self, x):
        if self.pad is not None:
            return self.pad(x)
        return ops.functional.mirror_pad(x, self.paddings, self.mode)

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"


class Identity(Cell):
    """MindSpore's ``nn.Identity``: returns its input unchanged (a placeholder layer, such as ViT's pool)."""

    def construct(self, x):
        return x


class Embedding(Cell):
    r"""MindSpore's ``nn.Embedding(vocab_size, embedding_size, use_one_hot=False, embedding_table='normal',
    dtype=mstype.float32, padding_idx=None)``: ``out[..., :] = table[ids[...], :]`` for integer ``ids`` of any
    shape, giving ``ids.shape + (embedding_size,)``. The table is a Parameter (``embedding_table``) drawn by
    ``embedding_table`` (an initializer name, Initializer, Tensor or array); ``padding_idx`` zeroes that row
    at the start. The lookup is the Gather primitive (its gradient a scatter-add into the table's rows);
    ``use_one_hot`` computes it as OneHot(ids) @ table instead, as MindSpore does."""

    def __init__(
        self, vocab_size, embedding_size, use_one_hot=False, embedding_table="normal", dtype=mstype.float32,
        padding_idx=None,
    ):  # fmt: skip
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("embedding_size", embedding_size)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"For 'Embedding', the '{name}' must be an int >= 1, but got {value!r}.")
        if padding_idx is not None and not -vocab_size <= int(padding_idx) < vocab_size:
            raise ValueError(
                f"For 'Embedding', the 'padding_idx' must be in [{-vocab_size}, {vocab_size}), but got {padding_idx}."
            )
        self.vocab_size, self.embedding_size = int(vocab_size), int(embedding_size)
        self.use_one_hot, self.padding_idx = bool(use_one_hot), padding_idx
        table = _init.initializer(embedding_table, (self.vocab_size, self.embedding_size), dtype)
        if padding_idx is not None:
            data = table.asnumpy().copy()
            data[int(padding_idx)] = 0
            table = Tensor(data)
        self.embedding_table = Parameter(table, "embedding_table")
        self.gather = ops.Gather()
        self.one_hot = ops.OneHot()
        self.matmul = ops.MatMul()
        self.reshape = ops.Reshape()

    def construct(self, ids):
        if ids.dtype not in (mstype.int32, mstype.int64):
            raise TypeError(f"For 'Embedding', the 'input' must be int32 or int64 ids, but got {ids.dtype}.")
        if not self.use_one_hot:
            return self.gather(self.embedding_table, ids, 0)
        flat = self.reshape(ids, (-1,))
        on = Tensor(1.0, self.embedding_table.dtype)
        off = Tensor(0.0, self.embedding_table.dtype)
        rows = self.matmul(self.one_hot(flat, self.vocab_size, on, off), self.embedding_table)
        return self.reshape(rows, (*ids.shape, self.embedding_size))

    def extend_repr(self) -> str:
        return f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, use_one_hot={self.use_one_hot}"


__all__ += ["Identity", "Embedding", "Pad", "ClipByNorm"]


class _ChannelDropout(Cell):
    """Channel dropout: in training mode each channel (a whole feature map ``x[n, c]``) is zeroed with
    probability ``p`` and the rest scaled by ``1 / (1 - p)``; the identity in evaluation mode. The mask is
    the Dropout primitive's (``dropout_with``) of a ones Tensor of shape [N, C, 1, ...], broadcast by Mul,
    with ``nn.Dropout``'s seeds: Seed0 the cell's seed, Seed1 its count of training calls, a Tensor a jitted
    step refills at each replay (``dropout_step``), so every step, eager or replayed, draws a new mask."""

    _ranks: tuple = ()

    def __init__(self, p: float = 0.5):
        super().__init__()
        name = type(self).__name__
        if isinstance(p, bool) or not isinstance(p, (float, int)):
            raise TypeError(f"For '{name}', the 'p' must be a float, but got {type(p).__name__}.")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"For '{name}', the 'p' must be in [0.0, 1.0], but got {p}.")
        self.p = float(p)
        self.keep_prob = 1.0 - self.p
        self.seed = _init.derived_seed()
        self.step = 0

    def extend_repr(self) -> str:
        return f"p={self.p:g}"

    def construct(self, x):
        name = type(self).__name__
        if x.ndim not in self._ranks:
            raise ValueError(
                f"For '{name}', the input must have rank {' or '.join(map(str, self._ranks))}, "
                f"but got shape {list(x.shape)}."
            )
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return x * 0
        lead = x.ndim - self._ranks[-1] + 2  # the [N,] C dims that own a mask value (C alone for unbatched)
        shape = tuple(x.shape[:lead]) + (1,) * (x.ndim - lead)
        ones = ops.ones(shape, x.dtype)
        return x * dropout_with(ones, self.keep_prob, self.seed, dropout_step(self, x.device))


class Dropout1d(_ChannelDropout):
    """MindSpore's ``nn.Dropout1d(p=0.5)``: channel dropout of [N, C, L] (or [C, L]): each ``x[n, c, :]`` is
    zeroed with probability ``p`` in training mode, the rest scaled by ``1 / (1 - p)``. float16, float32,
    float64."""

    _ranks = (2, 3)


class Dropout2d(_ChannelDropout):
    """MindSpore's ``nn.Dropout2d(p=0.5)``: channel dropout of [N, C, H, W]: each feature map ``x[n, c]`` is
    zeroed with probability ``p`` in training mode, the rest scaled by ``1 / (1 - p)``. float16, float32,
    float64."""

    _ranks = (4,)


class Dropout3d(_ChannelDropout):
    """MindSpore's ``nn.Dropout3d(p=0.5)``: channel dropout of [N, C, D, H, W]: each ``x[n, c]`` is zeroed
    with probability ``p`` in training mode, the rest scaled by ``1 / (1 - p)``. float16, float32, float64."""

    _ranks = (5,)


__all__ += ["Dropout1d", "Dropout2d", "Dropout3d"]
