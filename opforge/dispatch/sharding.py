"""Operator-level parallelism (MindSpore's ``shard`` in SEMI_AUTO_PARALLEL mode): layouts, the sharding
interpreter and the table of sharding rules.

Every rank runs the same program (SPMD). A *sharded tensor* looks like the whole (global) tensor - its
``shape`` and ``dtype`` are the global ones, so a tape, a loss or a user's code see what one process
would see - while its data is a ``ShardedValue``: this rank's block (a real Tensor) and its ``TensorLayout``.
The outermost call hands its outputs out as MindSpore's ranks get them, plain Tensors of this rank's block
(``finish``, ``virtual_output``), which remember their layout (``placement``) for ``gather_whole``.

A layout is MindSpore's pair of a *device matrix* (the ranks arranged as a grid, ``mesh``: one size per
axis, row-major, the last axis fastest) and a *tensor map* (``dims``: for each tensor dimension, the
mesh axis it is split over, or None when every rank along the mesh holds all of it). A fully
replicated tensor is an ordinary Tensor.

While a network runs in SEMI_AUTO_PARALLEL mode the ``ShardInterpreter`` is on the thread's
interpreter stack (``Cell.__call__`` installs it around the outermost cell's call), so every primitive
call reaches its ``process_primitive``, which

* passes a call that reads no sharded tensor and carries no strategy to its parent unchanged;
* else asks the operator's *sharding rule* (registered with ``@sharding_rules.register(P.MatMul)`` next
  to the primitives, ``opforge/primitives/sharding_ops.py``) for a ``ShardPlan``: the layout each tensor
  input must have (from the primitive's strategy, ``prim.shard(...)``, or propagated from the inputs'
  layouts), the layouts of the outputs, the mesh axes over which an output holds partial results (an
  AllReduce completes them: row-parallel MatMul), and the local arguments (shapes divided);
* redistributes each input to its layout with the collectives already in opforge, the one that sends
  least: an AlltoAll moves a mesh axis from one dim to another, else an AllGather over the ranks of one
  mesh axis and a local Slice; calls the primitive on the local blocks below this interpreter, and
  wraps the outputs;
* keeps an output's partial results pending (``ShardedValue.pending``) until an operator reads it: a
  ReduceScatter when the reader wants it split along a dim over a pending axis, else an AllReduce (the
  outermost cell's outputs are completed as it returns); a linear operator (a scale, Neg, Add or Sub of
  partial sums, ``ShardPlan.keep_partial``) reads the partial blocks as they are and its output stays
  pending;
* runs an operator without a rule on replicated inputs, warning once with its name.

A tape above this interpreter records the global calls, and its backward pass (bprops are primitives)
runs through the same rules, so gradients come out with the layouts of the parameters they belong to.
Parameters are split in place the first time a forward operator needs them split (their memory then is the
block's), and so are the optimizer states updated with them; an update follows its Parameter's layout and a
bprop reads a slice (``note_backward``), so the layouts are the forward pass's, as MindSpore's.
"""

from __future__ import annotations

import math
import threading
import warnings
import weakref
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional

from opforge import _C
from opforge.dispatch import placement
from opforge.dispatch.interpreter import EVAL, Interpreter, current_interpreter
from opforge.dispatch.op_table import OpTable
from opforge.dispatch.pipeline import stage_ranks
from opforge.dispatch.signature import sig_rw
from opforge.dispatch.trace import tracing
from opforge.parallel_context import (
    get_auto_parallel_context,
    input_strategies,
    operator_parallel,
    optimizer_parallel,
    optimizer_sharding,
)
from opforge.tensor import Parameter, Tensor, is_placeholder

__all__ = [
    "TensorLayout",
    "ShardedValue",
    "ShardPlan",
    "ShardInterpreter",
    "ShardingWarning",
    "sharding_rules",
    "set_collective_ops",
    "gather_whole",
    "is_sharded",
    "whole_values",
    "layout_of",
    "local_of",
    "pending_of",
    "replicated",
    "read_cost",
    "redistribution_cost",
    "redistribution_volume",
]


class ShardingWarning(UserWarning):
    """An operator without a sharding rule ran on replicated inputs."""


# Operator -> rule(prim, args, layouts, strategy) -> ShardPlan
sharding_rules = OpTable("sharding rule")


# ---------------------------------------------------------------------------------------------
# Layouts


@dataclass(frozen=True)
class TensorLayout:
    """``mesh``: the device matrix (sizes, the last axis fastest); ``dims``: per tensor dim, the mesh axis
    splitting it or None. Size-1 mesh axes are dropped, so equal layouts compare equal."""

    mesh: tuple
    dims: tuple

    def __post_init__(self):  # tuples, however built: layouts compare and hash by value
        object.__setattr__(self, "mesh", tuple(self.mesh))
        object.__setattr__(self, "dims", tuple(self.dims))

    @staticmethod
    def make(mesh, dims) -> TensorLayout:
        mesh, dims = tuple(int(m) for m in mesh), tuple(dims)
        keep = [i for i, m in enumerate(mesh) if m > 1]
        renumber = {old: new for new, old in enumerate(keep)}
        return TensorLayout(
            tuple(mesh[i] for i in keep), tuple(renumber.get(d) if d is not None else None for d in dims)
        )

    @property
    def is_replicated(self) -> bool:
        return all(d is None for d in self.dims)

    def splits(self, i: int) -> int:
        d = self.dims[i]
        return 1 if d is None else self.mesh[d]

    def local_shape(self, shape) -> tuple:
        return tuple(s // self.splits(i) for i, s in enumerate(shape))

    def with_dims(self, dims) -> TensorLayout:
        return TensorLayout(self.mesh, tuple(dims))

    def tensor_map(self) -> tuple:
        """MindSpore's tensor map: per dim, the mesh axis counted from the right, or -1."""
        n = len(self.mesh)
        return tuple(-1 if d is None else n - 1 - d for d in self.dims)

    def __str__(self) -> str:
        return f"Layout(device_matrix={list(self.mesh)}, tensor_map={list(self.tensor_map())})"


def replicated(rank: int, mesh=()) -> TensorLayout:
    return TensorLayout(tuple(m for m in mesh if m > 1), (None,) * rank)


def mesh_with_repeat(world: int, axes, op_name: str) -> tuple:
    """The device matrix of a strategy: its axes, after a leading axis of the ranks that repeat the work
    (MindSpore's repeated calculation) when the strategy uses fewer ranks than the world has."""
    used = math.prod(axes)
    if used <= 0 or world % used:
        raise ValueError(
            f"For '{op_name}', the strategy uses {used} devices, which does not divide the {world} devices of "
            "the parallel context (set_auto_parallel_context(device_num=...) or the world's size)."
        )
    return (world // used, *axes)


def coords(rank: int, mesh) -> tuple:
    out = []
    for m in reversed(mesh):
        out.append(rank % m)
        rank //= m
    return tuple(reversed(out))


def axis_ranks(rank: int, mesh, axis: int) -> list:
    """The world ranks along mesh axis ``axis`` through ``rank`` (in the axis' order)."""
    c = list(coords(rank, mesh))
    ranks = []
    for i in range(mesh[axis]):
        c[axis] = i
        r = 0
        for m, ci in zip(mesh, c):
            r = r * m + ci
        ranks.append(r)
    return ranks


# ---------------------------------------------------------------------------------------------
# Sharded tensors


class ShardedValue:
    """The data of a sharded tensor: ``local`` (this rank's block, a Tensor) and its ``layout``; ``shape``
    is the global shape.

    ``pending``: None, or ``(how, axes)`` when ``local`` is this rank's *partial* result of a reduction
    (``how``: "sum", "mean", ...) over the ranks of those mesh axes, not completed yet: the consumer
    decides how (a ReduceScatter when it wants the tensor split along a dim, an AllReduce when whole).
    ``done``: the blocks already made from a pending value, by target layout."""

    __slots__ = ("local", "layout", "shape", "pending", "done")

    def __init__(self, local: Tensor, layout: TensorLayout, shape: tuple, pending=None):
        self.local, self.layout, self.shape = local, layout, tuple(shape)
        self.pending, self.done = pending, {}

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.local._meta[0].itemsize

    def trace_output(self) -> tuple:
        """(this rank's block, a function wrapping a new block as this value is wrapped): what a trace returning
        a sharded Tensor records, so that each replay returns its own block wrapped, not this call's value."""
        layout, shape, pending = self.layout, self.shape, self.pending
        return self.local, lambda block: _wrap(block, layout, shape, pending)

    def complete(self) -> Tensor:
        """The block under ``layout``, the pending reduction done (an AllReduce over each pending axis)."""
        if self.pending is not None:
            how, axes = self.pending
            self.local = _finish_partial(self.local, how, axes, self.layout.mesh)
            self.pending, self.done = None, {}
        return self.local

    def set_whole(self, whole: Tensor) -> None:
        """Take a new whole (global) value, keeping this rank's block of it: ``Parameter.set_data`` of a split
        parameter (a checkpoint loaded into a sharded network). A slice, no collective."""
        block = redistribute(whole, replicated(len(self.shape), self.layout.mesh), self.layout, self.shape)
        self.local.set_data(block)
        self.pending, self.done = None, {}

    def __array__(self, *args, **kwargs):
        if self.layout.is_replicated:  # a partial sum read whole: every rank reads it the same
            return self.complete().__array__(*args, **kwargs)
        raise RuntimeError(
            f"This Tensor is sharded across ranks ({self.layout}, global shape {list(self.shape)}): each rank "
            "holds one block. Read it after an operator that needs it whole, or gather it on every rank with "
            "opforge.dispatch.sharding.gather_whole(t)."
        )

    def shown_block(self) -> Tensor:
        """What printing the Tensor shows: this rank's block, as each of MindSpore's ranks prints its slice of a
        parallel network's output. A pending partial result is not completed here (an AllReduce that a print on
        one rank would leave the others waiting for): it raises, naming the way."""
        if self.pending is not None:
            raise RuntimeError(
                f"This Tensor holds partial results pending a reduction across ranks ({self.pending}): complete it on "
                "every rank first (opforge.dispatch.sharding.local_of(t)), then print."
            )
        return self.local

    def copy(self):
        """What ``Tensor.asnumpy`` reads on the CPU: the value when every rank holds it whole, else the error
        of ``__array__``."""
        return self.__array__().copy()

    def __repr__(self) -> str:
        partial = f", partial {self.pending}" if self.pending is not None else ""
        return f"ShardedValue(shape={list(self.shape)}, {self.layout}, local={list(self.local.shape)}{partial})"


def is_sharded(t) -> bool:
    return isinstance(t, Tensor) and getattr(t, "_data", None).__class__ is ShardedValue


def pending_of(t):
    """``(how, axes)`` of a tensor holding pending partial results, else None."""
    data = getattr(t, "_data", None) if isinstance(t, Tensor) else None
    return data.pending if data.__class__ is ShardedValue else None


def layout_of(t) -> TensorLayout:
    """``t``'s layout: a sharded tensor's, else replicated (a parallel call's output block is a plain Tensor: its
    place in the whole is ``placement.placement_of``'s)."""
    data = getattr(t, "_data", None)
    if data.__class__ is ShardedValue:
        return data.layout
    return replicated(len(t._meta[1]))


def rewrap_placed(value):
    """``value`` (a Tensor, or a tuple or list of them) with each block a parallel call handed out made again the
    sharded tensor it is a block of: given back to a parallel call (a gradient to an optimizer's), it is read
    with its layout."""
    if isinstance(value, (tuple, list)):
        return type(value)(rewrap_placed(v) for v in value)
    where = placement.placement_of(value) if isinstance(value, Tensor) else None
    return value if where is None else _wrap(value, *where)


def mindspore_layout(t, stages: int = 1) -> tuple:
    """``(device matrix, tensor map)`` of ``t`` as MindSpore's strategy files hold them: a replicated tensor's
    device matrix is the ranks (of one pipeline stage, with ``stages``), its tensor map all -1. In a pipeline
    the stages are the most significant part of a rank's number, so of the leading (repeat) axis of a mesh:
    a stage's device matrix is that axis divided by ``stages`` (dropped when it becomes 1)."""
    layout = layout_of(t)
    world = _ops.world()[1] if _ops.world is not None else 1
    if layout.is_replicated:
        return [world // stages], [-1] * len(t._meta[1])
    mesh, tensor_map = list(layout.mesh), list(layout.tensor_map())
    if stages > 1:
        if mesh[0] % stages or len(mesh) - 1 in tensor_map:
            raise ValueError(f"The layout {layout} of a parameter is not within one of {stages} pipeline stages.")
        mesh[0] //= stages
        if mesh[0] == 1 and len(mesh) > 1:
            mesh = mesh[1:]
    return mesh, tensor_map


def local_of(t):
    """This rank's block of ``t`` (a pending partial result completed first)."""
    data = getattr(t, "_data", None)
    return data.complete() if data.__class__ is ShardedValue else t


def gather_whole(t) -> Tensor:
    """The whole (global) value of ``t`` on every rank: its blocks all-gathered (a pending partial result
    completed first), or those of a parallel network's output handed out as this rank's block; ``t`` itself
    when it is whole."""
    data = getattr(t, "_data", None)
    if data.__class__ is ShardedValue:
        layout, shape, t = data.layout, data.shape, data.complete()
    else:
        where = placement.placement_of(t)
        if where is None:
            return t
        layout, shape = where
    return redistribute(t, layout, replicated(len(shape), layout.mesh), shape)


def sum_over_ranks(x: Tensor, ranks: tuple) -> Tensor:
    """``x`` summed over the world ``ranks`` (an AllReduce on their group, made on first use; every one of them
    must call it)."""
    return _ops.all_reduce(x, "sum", _ops.group(tuple(ranks)))


def block_of(t, layout: TensorLayout) -> Tensor:
    """This rank's block of ``t`` (whole or sharded) under ``layout``, its blocks moved as needed."""
    return redistribute(local_of(t), layout_of(t), layout, tuple(t._meta[1]))


def from_block(local: Tensor, layout: TensorLayout, shape: tuple) -> Tensor:
    """The tensor of global ``shape`` laid out as ``layout`` whose block on this rank is ``local``."""
    return _wrap(local, layout, tuple(shape))


def finish(out, output_layout=None):
    """The outermost call's outputs as MindSpore's ranks get them, plain Tensors: partial results completed; a
    split output this rank's block (``placement`` remembers its layout: ``gather_whole``), moved first to the
    layout ``output_layout(global shape)`` gives (None: as the network left it)."""
    if isinstance(out, (tuple, list)):
        return type(out)(finish(o, output_layout) for o in out)
    if not isinstance(out, Tensor):
        return out
    shape = tuple(out._meta[1])
    # (MindSpore's VirtualOutput skips a Parameter: a network returning its split weight hands out its block)
    wanted = None if output_layout is None or isinstance(out, Parameter) else output_layout(shape)
    if not is_sharded(out):
        if wanted is None or wanted.is_replicated:
            return out
        return placement.place(redistribute(out, replicated(len(shape)), wanted, shape), wanted, shape)
    data = out._data
    if wanted is not None and data.pending is not None:
        block = _reduce_partial(data, wanted, shape)  # a partial sum wanted split: a ReduceScatter
        if block is not None:
            return placement.place(block, wanted, shape) if not wanted.is_replicated else _plain(out, block)
    block, layout = data.complete(), data.layout
    if isinstance(out, Parameter):  # its block, the weight itself left as it is
        return placement.place(block, layout, data.shape)
    if wanted is not None and wanted != layout:
        block, layout = redistribute(block, layout, wanted, data.shape), wanted
    if layout.is_replicated:
        return _plain(out, block)
    return placement.place(block, layout, data.shape)


def _plain(out: Tensor, whole: Tensor) -> Tensor:
    out._data = whole._data  # the same Tensor (a tape may have recorded it), now plain
    return out


def finish_as(value, like):
    """``value`` finished (``finish``) in the layout of ``like``: this rank's block where ``like`` is split (the
    gradient of a batch-split input is the rank's rows, as MindSpore gives it), else as ``finish`` leaves it."""
    if not isinstance(value, Tensor) or not isinstance(like, Tensor):  # (an argument that is not a Tensor)
        return finish(value)
    layout = layout_of(like)
    if layout.is_replicated:
        return finish(value)
    if is_sharded(value):
        return finish(value, lambda _shape: layout)
    shape = value._meta[1]
    block = redistribute(value, replicated(len(shape), layout.mesh), layout, shape)
    return placement.place(block, layout, shape)


def virtual_output(training: bool, stages: int):
    """MindSpore's VirtualOutput: an evaluation network's outputs (no gradient taken in its call) follow its inputs,
    without ``dataset_strategy``'s tuple: whole with ``full_batch``, else split along the batch dim as the inputs
    are (when it divides), on every pipeline stage alike (a pipeline's outputs are its last stage's, broadcast); a
    training network's as its operators left them.
    A function of the global shape giving the layout, or None."""
    _, world = _ops.world()
    if training or input_strategies() is not None:
        return None
    if get_auto_parallel_context("full_batch"):
        return lambda shape: replicated(len(shape))
    per_stage = world // stages
    return lambda shape: batch_layout(len(shape), stages) if shape and shape[0] % per_stage == 0 else None


def whole_values(out):
    """``out`` (a Tensor or a nested tuple of them) with every sharded Tensor gathered whole: what a training
    loop run alike on every rank (``Model``'s) hands its callbacks and metrics, so a loss or logits split by a
    strategy read as one process's. A collective each such Tensor: every rank must call it."""
    if isinstance(out, (tuple, list)):
        return type(out)(whole_values(o) for o in out)
    return gather_whole(out)


def _wrap(local: Tensor, layout: TensorLayout, shape: tuple, pending=None) -> Tensor:
    if layout.is_replicated and pending is None:
        return local
    return Tensor._from_array(ShardedValue(local, layout, shape, pending), local._meta[0], local._meta[2])


# ---------------------------------------------------------------------------------------------
# The collectives the interpreter moves blocks with (primitives, above this module)


class _CollectiveOps:
    """Set by ``set_collective_ops`` (``opforge/primitives/sharding_ops.py``)."""

    all_gather = all_reduce = slice = None  # (x, dim, group) / (x, op, group) / (x, dim, index, parts)
    reduce_scatter = all_to_all = None  # (x, dim, op, group) / (x, split_dim, concat_dim, group)
    world = group = None  # () -> (rank, size) / (ranks) -> group name
    exchange = None  # (tuple of ints, ranks or None) -> every rank's tuple (of those ranks; None: all), in order
    assign = None  # (parameter, value): write value into parameter in place
    pack = unpack = None  # (blocks) -> one flat buffer / (flat, shapes) -> the blocks


_ops = _CollectiveOps()


def set_collective_ops(
    *,
    all_gather,
    all_reduce,
    reduce_scatter,
    all_to_all,
    broadcast,
    slice,
    world,
    group,
    exchange,
    assign,
    pack,
    unpack,
) -> None:
    """``all_gather(x, dim, group)`` (blocks concatenated along ``dim`` in group order),
    ``all_reduce(x, op, group)``, ``reduce_scatter(x, dim, op, group)`` (the reduction's block of this
    rank along ``dim``), ``all_to_all(x, split_dim, concat_dim, group)`` (MindSpore's AlltoAll),
    ``broadcast(x, root, group)`` (the value of the group's rank ``root``),
    ``slice(x, dim, index, parts)`` (block ``index`` of ``parts`` along ``dim``), ``world() -> (rank,
    size)`` and ``group(ranks) -> name`` (the communication group of those world ranks, created on first
    use), ``exchange(values, ranks) -> [values of each of those ranks]`` (None: the world), ``pack(blocks)``
    (flattened, concatenated) and ``unpack(flat, shapes)`` (pack's inverse), written with primitives."""
    _ops.all_gather, _ops.all_reduce, _ops.slice, _ops.world, _ops.group = all_gather, all_reduce, slice, world, group
    _ops.reduce_scatter, _ops.all_to_all, _ops.broadcast = reduce_scatter, all_to_all, broadcast
    _ops.exchange, _ops.assign = exchange, assign
    _ops.pack, _ops.unpack = pack, unpack


_counts: dict = {}
_received: dict = {}


def count_collective(name: str, x: Tensor | None = None, ranks: int = 1, factor: float = 0.0) -> None:
    """One more ``name``; a rank of a group of ``ranks`` receives ``factor * (ranks - 1) / ranks`` times
    the block ``x`` (an AllGather ``ranks``, a ring AllReduce 2, a ReduceScatter or an AlltoAll 1). Called by the
    redistributions and by rules running their own collectives (a convolution's halo exchange)."""
    _counts[name] = _counts.get(name, 0) + 1
    if x is not None:
        _received[name] = _received.get(name, 0.0) + factor * math.prod(x._meta[1]) * (ranks - 1) / ranks


def redistribution_counts(reset: bool = False) -> dict:
    """Collective name ("AllGather", "AllReduce", "ReduceScatter", "AlltoAll") or "Slice" -> how many the
    interpreter has run to redistribute tensors and complete partial results, and rules have run in their
    local calls (forward and backward);
    ``reset`` zeroes the counts after reading them."""
    out = dict(_counts)
    if reset:
        _counts.clear()
    return out


def redistribution_volume(reset: bool = False) -> dict:
    """Collective name -> the elements this rank has received through it (the counts' volume)."""
    out = {name: int(v) for name, v in _received.items()}
    if reset:
        _received.clear()
    return out


_STRATEGY_WORDS = 24  # a strategy travels as this many ints: the operator's name's CRC, then the split counts


def _encode(prim_name: str, strategy) -> tuple:
    words = [zlib.crc32(prim_name.encode())]
    for s in strategy or ():
        words += [*s, -1]
    words = words[:_STRATEGY_WORDS]
    return tuple(words + [0] * (_STRATEGY_WORDS - len(words)))


def _decode(words) -> tuple:
    strategy, current = [], []
    for w in list(words)[1:]:
        if w == -1:
            strategy.append(tuple(current))
            current = []
        elif w == 0:
            break
        else:
            current.append(int(w))
    return tuple(strategy)


def check_same_strategy(prim, ranks=None) -> None:
    """Every rank running an operator (``ranks``: those of this rank's pipeline stage; None: all) must give it
    the same strategy: a rank that differs would run other collectives and hang or compute garbage. Checked
    at the operator's first sharded call; raises on every one of those ranks."""
    mine = _encode(prim.name, prim.in_strategy)
    everyone = _ops.exchange(mine, ranks)
    if any(tuple(e) != mine for e in everyone):
        numbers = ranks if ranks is not None else range(len(everyone))
        shown = ", ".join(f"rank {r}: {_decode(e)}" for r, e in zip(numbers, everyone))
        raise ValueError(
            f"For '{prim.name}', the ranks gave different sharding strategies ({shown}); every rank must run "
            "the same program with the same shard() strategies."
        )


def _group_along(mesh, axis: int):
    rank, _ = _ops.world()
    return _ops.group(tuple(axis_ranks(rank, mesh, axis)))


def redistribute(x: Tensor, src: TensorLayout, dst: TensorLayout, shape: tuple) -> Tensor:
    """``x`` (this rank's block of a tensor of global ``shape`` laid out as ``src``) as its block under ``dst``:
    an AlltoAll for a mesh axis that moves from one dim to another, then an AllGather over the ranks of each
    axis ``dst`` does not split as ``src`` does, then a local slice for each split ``dst`` adds."""
    if src == dst:
        return x
    if src.mesh != dst.mesh and not src.is_replicated:  # different device matrices: through the whole tensor
        x = redistribute(x, src, replicated(len(shape), src.mesh), shape)
        src = replicated(len(shape), dst.mesh)
    x, src = _move_splits(x, src, dst)
    rank, _ = _ops.world()
    for i, (a, b) in enumerate(zip(src.dims, dst.dims)):
        if a is not None and a != b:  # gather what dst does not split (or splits otherwise)
            count_collective("AllGather", x, src.mesh[a], src.mesh[a])
            x = _ops.all_gather(x, i, _group_along(src.mesh, a))
    here = coords(rank, dst.mesh) if dst.mesh else ()
    for i, (a, b) in enumerate(zip(src.dims, dst.dims)):
        if b is not None and a != b:
            count_collective("Slice")
            x = _ops.slice(x, i, here[b], dst.mesh[b])
    return x


def redistribution_cost(src: TensorLayout, dst: TensorLayout, shape: tuple, per_collective: float = 0.0) -> float:
    """The elements a rank receives when ``redistribute`` takes a tensor of global ``shape`` from ``src`` to
    ``dst`` (the steps it takes: through the whole tensor across device matrices, an AlltoAll per moved
    axis, an AllGather per axis ``dst`` drops; slices are free), plus ``per_collective`` for each collective
    (a latency, in elements: the strategy search's; propagation compares volumes alone)."""
    if src == dst:
        return 0.0
    if src.mesh != dst.mesh:
        if src.is_replicated:
            return 0.0
        gathers = sum(a is not None for a in src.dims)
        return float(math.prod(shape) - math.prod(src.local_shape(shape))) + gathers * per_collective
    block, cost, dims = float(math.prod(src.local_shape(shape))), 0.0, list(src.dims)
    for i, a in enumerate(dims):
        if a is not None and dst.dims[i] != a and any(b == a and dims[j] is None for j, b in enumerate(dst.dims)):
            cost += block * (src.mesh[a] - 1) / src.mesh[a] + per_collective  # an AlltoAll: the block's size stays
            j = next(j for j, b in enumerate(dst.dims) if b == a and dims[j] is None)
            dims[i], dims[j] = None, a
    for i, a in enumerate(dims):
        if a is not None and dst.dims[i] != a:
            cost += block * (src.mesh[a] - 1) + per_collective  # an AllGather: the block grows mesh[a] times
            block *= src.mesh[a]
    return cost


def read_cost(t, want: TensorLayout) -> float:
    """The elements a rank receives when the interpreter gives ``t`` the layout ``want`` (``_as_layout``):
    once one reader has its block of a pending partial result, the cheapest redistribution of a block made
    already; else ``layout_read_cost``."""
    if not isinstance(t, Tensor):
        return 0.0
    data = t._data
    if data.__class__ is ShardedValue and data.pending is not None and data.done:
        return _cheapest_done(data, want)[0]
    return layout_read_cost(layout_of(t), pending_of(t), want, tuple(t._meta[1]))


def layout_read_cost(
    have: TensorLayout, pending, want: TensorLayout, shape: tuple, per_collective: float = 0.0
) -> float:
    """The elements a rank receives to read a tensor of global ``shape`` laid out as ``have`` (its partial
    results pending over ``pending = (how, axes)``, or None) in the layout ``want``: the pending results
    sliced to what ``want`` reads over the other axes (free), completed (a ReduceScatter where ``want`` splits
    a dim over a pending axis, an AllReduce over the others), then ``redistribution_cost``; ``per_collective``
    is added for each collective."""
    cost = 0.0
    if pending is not None:
        how, axes = pending
        sliced = _sliced_before_reducing(have, want, axes)
        have = have.with_dims([want.dims[i] if i in sliced else a for i, a in enumerate(have.dims)])
        block = math.prod(have.local_shape(shape))
        d = _scatter_dim(how, have, want, axes)
        if d is not None:
            axis = want.dims[d]
            cost += block * (have.mesh[axis] - 1) / have.mesh[axis] + per_collective
            block /= have.mesh[axis]
            have = have.with_dims([axis if i == d else a for i, a in enumerate(have.dims)])
            axes = tuple(a for a in axes if a != axis)
        cost += sum(2.0 * block * (have.mesh[a] - 1) / have.mesh[a] + per_collective for a in axes)
    if have.dims == want.dims and (have.is_replicated or have.mesh == want.mesh):
        return cost
    return cost + redistribution_cost(have, want, shape, per_collective)


def _move_splits(x: Tensor, src: TensorLayout, dst: TensorLayout):
    """A mesh axis splitting dim i under ``src`` and dim j under ``dst`` (j whole under ``src``): one
    AlltoAll over that axis' ranks sends each rank only the parts of its new block it lacks (1/n of the
    block each way), where an AllGather would bring the whole dim i and a slice drop most of it."""
    if src.mesh != dst.mesh:
        return x, src
    dims = list(src.dims)
    for i in range(len(dims)):
        a = dims[i]
        if a is None or dst.dims[i] == a:
            continue
        j = next((j for j, b in enumerate(dst.dims) if b == a and dims[j] is None), None)
        if j is not None:
            count_collective("AlltoAll", x, src.mesh[a], 1.0)
            x = _ops.all_to_all(x, j, i, _group_along(src.mesh, a))
            dims[i], dims[j] = None, a
    return x, src.with_dims(dims)


def _sliced_before_reducing(have: TensorLayout, want: TensorLayout, axes: tuple) -> list:
    """The dims ``want`` splits over a mesh axis that is not pending and that ``have`` uses nowhere (an axis
    moving from another dim is an AlltoAll's), where ``have`` leaves them whole: a pending partial result is
    sliced there first (a local slice, which commutes with the reduction over the ranks), so its reduction
    moves only the block read."""
    if want.mesh != have.mesh:
        return []
    free = [b for b in want.dims if b is not None and b not in axes and b not in have.dims]
    return [d for d, (a, b) in enumerate(zip(have.dims, want.dims)) if a is None and b in free]


def _scatter_dim(how: str, have: TensorLayout, want: TensorLayout, axes: tuple):
    """The dim ``want`` splits over a pending axis of a partial sum (or mean) that ``have`` leaves whole: its
    reduction is a ReduceScatter there; None where there is none."""
    if how not in ("sum", "mean") or want.mesh != have.mesh:
        return None
    return next((d for d, (a, b) in enumerate(zip(have.dims, want.dims)) if a is None and b in axes), None)


def _reduce_partial(data: ShardedValue, want: TensorLayout, shape: tuple):
    """A pending partial result read in a layout ``want`` that splits some dim ``data.layout`` leaves whole:
    sliced first over the axes that are not pending (``_sliced_before_reducing``), then a ReduceScatter
    where ``want`` splits a dim over a pending axis (each rank receives only its block of the sum) and an
    AllReduce over the other pending axes, then redistributed; None when ``want`` splits no such dim (the
    value is completed in place)."""
    how, axes = data.pending
    have, x = data.layout, data.local
    sliced = _sliced_before_reducing(have, want, axes)
    d = _scatter_dim(how, have, want, axes)
    if not sliced and d is None:
        return None
    here = coords(_ops.world()[0], have.mesh)
    for i in sliced:
        count_collective("Slice")
        x = _ops.slice(x, i, here[want.dims[i]], have.mesh[want.dims[i]])
    have = have.with_dims([want.dims[i] if i in sliced else a for i, a in enumerate(have.dims)])
    if d is not None:
        axis = want.dims[d]
        count_collective("ReduceScatter", x, have.mesh[axis], 1.0)
        x = _ops.reduce_scatter(x, d, "sum", _group_along(have.mesh, axis))
        if how == "mean":
            x = x * (1.0 / have.mesh[axis])
        have = have.with_dims([axis if i == d else a for i, a in enumerate(have.dims)])
        axes = tuple(a for a in axes if a != axis)
    if axes:
        x = _finish_partial(x, how, axes, have.mesh)
    return redistribute(x, have, want, shape)


def _cheapest_done(data: ShardedValue, want: TensorLayout):
    """``(cost, layout, block)`` of the block made already from a pending value (``data.done``) that is
    cheapest to redistribute to ``want``."""
    found = [(TensorLayout(*key), block) for key, block in data.done.items()]
    return min(((redistribution_cost(lay, want, data.shape), lay, b) for lay, b in found), key=lambda c: c[0])


def _from_done(data: ShardedValue, want: TensorLayout) -> Tensor:
    """A pending partial sum already reduced for one reader, wanted otherwise by another: its reduced block
    redistributed (an AlltoAll or an AllGather of a block) instead of a second reduction of the whole."""
    _, have, block = _cheapest_done(data, want)
    return redistribute(block, have, want, data.shape)


def _check_divisible(prim_name: str, arg: str, shape: tuple, layout: TensorLayout) -> None:
    for i, s in enumerate(shape):
        k = layout.splits(i)
        if s % k:
            raise ValueError(
                f"For '{prim_name}', the strategy splits dim {i} of '{arg}' (size {s}) into {k} parts, but {s} "
                f"is not a multiple of {k}."
            )


# ---------------------------------------------------------------------------------------------
# Plans


@dataclass
class ShardPlan:
    """What a rule decides for one call.

    ``inputs``: per argument, the layout a tensor must have (None for non-tensor arguments or a tensor
    taken as it comes); ``outputs``: the layout of each output; ``partial``: per output, the reduction
    ("sum", "max", "min", "prod", "mean") and the mesh axes over which the local results are partial;
    ``args``: the arguments of the local call where they differ (local shapes), by position;
    ``local``: the primitive of the local call (default: the same); ``keep_partial``: the inputs read as
    their pending partial blocks, not completed (a linear operator: its ``partial`` output then holds the
    same partial results; the rule gives such an input the layout it has)."""

    inputs: list
    outputs: list
    partial: dict = field(default_factory=dict)
    args: dict = field(default_factory=dict)
    local: Optional[object] = None
    keep_whole: set = field(default_factory=set)  # written Parameters updated by blocks, gathered back whole
    keep_partial: set = field(default_factory=set)
    # what the strategy's entries describe when not the tensor inputs (OneHot's: its output): (name, layout)
    strategy_of: Optional[list] = None


_REDUCE_OPS = {"sum": "sum", "max": "max", "min": "min", "prod": "prod", "mean": "sum"}


def _finish_partial(out: Tensor, how: str, axes: tuple, mesh: tuple) -> Tensor:
    for axis in axes:
        count_collective("AllReduce", out, mesh[axis], 2.0)
        out = _ops.all_reduce(out, _REDUCE_OPS[how], _group_along(mesh, axis))
        if how == "mean":
            out = out * (1.0 / mesh[axis])
    return out


def complete_together(values, readers) -> None:
    """Complete the pending partial sums among ``values`` (a step's gradients; ``readers[i]`` the tensor
    ``values[i]`` updates, read in its layout) in buckets: one AllReduce per pending axis for all the values of
    one device matrix, pending reduction and dtype, where each reader would run its own (the data-parallel
    reducer fuses its gradients so too). In place: each value's block becomes its completed block. A value
    whose reader takes another layout (a block of it: a ReduceScatter then) is left to its reader."""
    buckets: dict = {}
    for v, reader in zip(values, readers):
        data = getattr(v, "_data", None)
        if data.__class__ is not ShardedValue or data.pending is None or data.pending[0] not in ("sum", "mean"):
            continue
        want, have = layout_of(reader), data.layout
        if have.dims != want.dims or not (have.is_replicated or have.mesh == want.mesh):
            continue
        buckets.setdefault((data.layout.mesh, data.pending, data.local._meta[0]), []).append(data)
    for (mesh, (how, axes), _), members in buckets.items():
        if len(members) < 2:
            continue
        flat = _finish_partial(_ops.pack([d.local for d in members]), how, axes, mesh)
        for d, block in zip(members, _ops.unpack(flat, [d.local._meta[1] for d in members])):
            d.local, d.pending, d.done = block, None, {}


_warned: set = set()
_replicated_calls: dict = {}


def _replicated_plan(prim, args: tuple, layouts: tuple) -> ShardPlan:
    name = prim.name
    _replicated_calls[name] = _replicated_calls.get(name, 0) + 1
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"semi-auto parallel: '{name}' has no sharding rule; it runs on whole (gathered) inputs on every "
            "rank. opforge.dispatch.sharding.replicated_calls() counts such calls.",
            ShardingWarning,
            stacklevel=3,
        )
    inputs = [None if lay is None else replicated(len(lay.dims)) for lay in layouts]
    return ShardPlan(inputs=inputs, outputs=None)


def replicated_calls() -> dict:
    """Operator name -> calls that ran replicated for want of a rule."""
    return dict(_replicated_calls)


_active = threading.local()


def active() -> bool:
    """Whether a ShardInterpreter is installed on this thread."""
    return getattr(_active, "depth", 0) > 0


def broadcast_parameters(params, stages: int) -> None:
    """Set every whole Parameter of ``params`` to the value of the first rank of this rank's pipeline stage (one
    Broadcast per dtype): a parallel network's ranks then start from one model however each initialised it
    (``parameter_broadcast``). Split Parameters (laid out by another network's call) and other stages'
    placeholders are left alone."""
    params = list(params)
    for p in params:
        _mark_broadcast(p)
    ranks = stage_ranks(*_ops.world(), stages)
    if len(ranks) == 1:
        return
    by_dtype: dict = {}
    for p in params:
        if hasattr(p, "_data") and p._data.__class__ is not ShardedValue:
            by_dtype.setdefault(p._meta[0], []).append(p)
    group = _ops.group(ranks)
    previous = _C.set_interpreter(None)  # eagerly: a first call under a grad's tape records none of it
    try:
        for members in by_dtype.values():
            flat = _ops.broadcast(_ops.pack(members), 0, group)
            for p, value in zip(members, _ops.unpack(flat, [p._meta[1] for p in members])):
                _ops.assign(p, value)
    finally:
        _C.set_interpreter(previous)


_broadcast: dict = {}  # id(Parameter) -> weak reference: the Parameters a parallel call made equal across ranks


def _mark_broadcast(p) -> None:
    key = id(p)
    _broadcast[key] = weakref.ref(p, lambda _ref: _broadcast.pop(key, None))


def broadcast_first_reads(args: tuple, stages: int) -> None:
    """``broadcast_parameters`` of the Parameters among an operator's ``args`` that no parallel call broadcast
    yet: a parallel function (``AutoParallel(fn)``, a jitted training step) has no Cell to list its weights up
    front, so each is made equal across the ranks before its first read."""
    fresh = [
        a
        for arg in args
        for a in (arg if isinstance(arg, (tuple, list)) else (arg,))
        if isinstance(a, Parameter) and id(a) not in _broadcast
    ]
    if fresh:
        broadcast_parameters(fresh, stages)


def loss_repeats(t) -> int:
    """How many ranks of this rank's pipeline stage compute the same block of ``t`` in a parallel network's
    call with MindSpore's ``loss_repeated_mean=False`` (1 otherwise). MindSpore divides the sensitivity of a
    loss by that count (VirtualDiv) unless the option is False, and the gradients' sums over the repeating
    ranks then give one process's gradient; opforge's sharded gradients are one process's, so with False a
    backward pass starts from its sensitivity times that count, as MindSpore's does."""
    if not active() or not operator_parallel() or get_auto_parallel_context("loss_repeated_mean"):
        return 1
    layout = layout_of(t)
    used = math.prod(layout.mesh[d] for d in set(layout.dims) if d is not None)
    return _ops.world()[1] // get_auto_parallel_context("pipeline_stages") // used


def run_outermost(call, args: tuple, kwargs: dict, name: str):
    """``call(*args, **kwargs)`` as a parallel network's outermost call (a Cell's, or a jitted training step's,
    MindSpore's functional style; ``name`` says which, in errors): every operator below sharded and the
    optimizers' updates split, as the auto parallel context says; the inputs laid out by its dataset strategy;
    the outputs finished. Under a gradient's tape, a call that split a tensor raises after it: the tape sees the
    blocks' calls, not the tensors it differentiates (the gradients would come out zero)."""
    outer = current_interpreter()
    under_tape = outer is not None and any(i.differentiates for i in outer.enclosing())
    stages = get_auto_parallel_context("pipeline_stages")
    with ShardInterpreter(
        optimizer_parallel=optimizer_parallel(),
        strategies=operator_parallel(),
        pipeline_stages=stages,
        optimizer_sharding=optimizer_sharding(),
        broadcast_reads=operator_parallel() and get_auto_parallel_context("parameter_broadcast"),
    ) as interpreter:
        args, kwargs = rewrap_placed(args), {k: rewrap_placed(v) for k, v in kwargs.items()}
        if operator_parallel():
            args = batch_inputs(args, get_auto_parallel_context("full_batch"), input_strategies(), stages)
        out = finish(call(*args, **kwargs), virtual_output(interpreter.differentiated, stages))
    if under_tape and interpreter.split_seen:
        raise RuntimeError(
            f"For '{name}', a parallel network's outermost call is differentiated from outside it, which loses its "
            "gradients (its operators ran on blocks the gradient outside does not see): take the gradient inside "
            "the parallel call, as MindSpore's parallel training does (nn.TrainOneStepCell(net_with_loss, "
            "optimizer), or a function calling value_and_grad wrapped in opforge.jit or AutoParallel)."
        )
    return out


def _splits_any(lay) -> bool:
    """Whether a plan's layout (or a tuple input's list of them) splits a tensor."""
    if isinstance(lay, (list, tuple)):
        return any(_splits_any(item) for item in lay)
    return isinstance(lay, TensorLayout) and not lay.is_replicated


def outer_call_active() -> bool:
    """Whether a parallel network's outermost call is under way on this thread (running sharded, or as
    ``inner_calls`` says): the cells called inside are inner cells."""
    return active() or getattr(_active, "recording", 0) > 0


@contextmanager
def inner_calls():
    """While the block runs, the cells and jitted functions called on this thread are inner calls, never a parallel
    network's outermost call: while the strategy search records a network (``opforge/parallel/strategy_search.py``),
    and while a loaded graph (a rank's local program, ``nn.GraphCell``) replays as it was recorded."""
    _active.recording = getattr(_active, "recording", 0) + 1
    try:
        yield
    finally:
        _active.recording -= 1


def split_parameter(param: Parameter, layout: TensorLayout) -> None:
    """Split a replicated Parameter in place to its block under ``layout`` (a local slice, no communication)."""
    shape = tuple(param._meta[1])
    block = redistribute(local_of(param), replicated(len(shape), layout.mesh), layout, shape)
    _split_in_place(param, block, layout)


def lay_out_clones(params) -> None:
    """Split each whole Parameter among ``params`` cloned from a split one (an optimizer's state) as that one, in
    place: MindSpore lays a clone out with its source when it compiles; here once a first call laid the sources
    out (a state's first update would split it so too)."""
    for p in params:
        if not is_placeholder(p) and layout_of(p).is_replicated:
            layout = cloned_layout(p)
            if layout is not None:
                split_parameter(p, layout)


def strategy_layout(strategy: tuple, name: str) -> TensorLayout:
    """The layout of a tensor that one strategy tuple (a split count per dim) describes: dim i split over axis
    i + 1 of the strategy's device matrix (``mesh_with_repeat``: axis 0 the ranks that repeat the work)."""
    mesh = mesh_with_repeat(_ops.world()[1], strategy, name)
    return TensorLayout.make(mesh, list(range(1, len(strategy) + 1)))


def input_blocks(shapes: list, full_batch: bool, strategies=None, stages: int = 1) -> list:
    """The layout and global shape of each input of a parallel network's outermost call, given each rank's
    shapes (``None`` for an argument that is not a Tensor, or one of rank 0): the whole tensor with
    ``full_batch``; else its block of the batch dim, split over the ranks of a pipeline stage (all of them
    without ``stages``; the stages repeat it), or with ``strategies`` (``dataset_strategy``'s tuple, a strategy
    per Tensor input) the block its strategy gives it. A mismatch is a ValueError naming ``dataset_strategy``."""
    if strategies is not None:
        return _blocks_by_strategy(shapes, strategies)
    out = []
    for shape in shapes:
        if shape is None or full_batch:
            out.append(None if shape is None else (replicated(len(shape)), tuple(shape)))
        else:
            layout = batch_layout(len(shape), stages)
            out.append((layout, (shape[0] * layout.splits(0), *shape[1:])))
    return out


def batch_layout(ndim: int, stages: int = 1) -> TensorLayout:
    """A batch's layout: dim 0 split over the ranks of a pipeline stage (all of them without ``stages``; the
    stages repeat it)."""
    per_stage = _ops.world()[1] // stages
    return TensorLayout.make((stages, per_stage), (1,) + (None,) * (ndim - 1))


def _blocks_by_strategy(shapes: list, strategies: tuple) -> list:
    tensors = [s for s in shapes if s is not None]
    if len(tensors) != len(strategies):
        raise ValueError(
            f"For 'dataset_strategy', there must be one strategy per Tensor input of the network ({len(tensors)}), "
            f"but got {len(strategies)}: {strategies}."
        )
    picks = iter(strategies)
    out = []
    for shape in shapes:
        if shape is None:
            out.append(None)
            continue
        strategy = next(picks)
        if len(strategy) != len(shape):
            raise ValueError(
                f"For 'dataset_strategy', the strategy {strategy} must have a split count per dim of its input, "
                f"of shape {list(shape)} on each rank."
            )
        layout = strategy_layout(strategy, "dataset_strategy")
        out.append((layout, tuple(d * layout.splits(i) for i, d in enumerate(shape))))
    return out


def batch_inputs(args: tuple, full_batch: bool, strategies=None, stages: int = 1) -> tuple:
    """The outermost cell's Tensor arguments as ``input_blocks`` lays them out: with ``full_batch`` every rank
    holds the whole batch (replicated); else each rank's Tensor is its block of the global batch (split along
    dim 0 over all ranks, as MindSpore's semi-auto parallel reads a dataset), or of the global tensor its
    ``dataset_strategy`` describes (``strategies``)."""
    shapes = [tuple(a._meta[1]) if _is_input(a) else None for a in args]
    out = []
    for a, block in zip(args, input_blocks(shapes, full_batch, strategies, stages)):
        out.append(a if block is None or is_sharded(a) else _wrap(a, *block))
    return tuple(out)


def local_row_parts(x, parts: int):
    """``x`` cut into ``parts`` micro-batches along dim 0 rank by rank when dim 0 is split (part i of the global
    batch is every rank's i-th block of its rows: no communication, as MindSpore's micro-batches are cut);
    None when it is not (the caller slices the whole)."""
    if not is_sharded(x) or x._data.pending is not None:
        return None
    layout, shape = layout_of(x), tuple(x._meta[1])
    if layout.dims[0] is None:
        return None
    local = local_of(x)
    rows = local._meta[1][0] // parts
    return [_wrap(local[i * rows : (i + 1) * rows], layout, (shape[0] // parts, *shape[1:])) for i in range(parts)]


def _is_input(a) -> bool:
    return isinstance(a, Tensor) and len(a._meta[1]) > 0


def split_full_batch(args: tuple, where: str) -> tuple:
    """MindSpore's ``_VirtualDataset`` with ``full_batch``: every rank holds the whole batch, and each Tensor
    argument (of rank >= 1, not sharded yet) becomes split along dim 0 over all ranks, as ``batch_inputs``
    lays out a batch read in blocks; this rank keeps its block (a local slice, no communication). Dim 0 must
    divide by the ranks: else a ValueError naming ``where``."""
    _, size = _ops.world()
    if size == 1:
        return args
    out = []
    for a in args:
        if isinstance(a, Tensor) and not is_sharded(a) and len(a._meta[1]) > 0:
            shape = tuple(a._meta[1])
            if shape[0] % size:
                raise ValueError(
                    f"For '{where}', the batch dim of each input must be divisible by the {size} ranks under "
                    f"full_batch, but got shape {list(shape)}."
                )
            layout = batch_layout(len(shape))
            a = _wrap(redistribute(a, replicated(len(shape), (size,)), layout, shape), layout, shape)
        out.append(a)
    return tuple(out)


# The optimizers' in-place updates (their rules split the states under optimizer parallel): operator names.
optimizer_updates: set = set()


class ShardInterpreter(Interpreter):
    """Runs primitive calls that read sharded tensors or carry a strategy by their sharding rule; with
    ``optimizer_parallel`` the optimizers' updates too, even on whole tensors (ZeRO stage 1)."""

    def __init__(
        self,
        optimizer_parallel: bool = False,
        strategies: bool = True,
        pipeline_stages: int = 1,
        optimizer_sharding: tuple = (-1, 0),
        broadcast_reads: bool = False,
    ):
        self.parent = None
        self.broadcast_reads = broadcast_reads  # parameter_broadcast: each Parameter before its first read
        self.optimizer_parallel = optimizer_parallel
        self.strategies = strategies  # False in DATA_PARALLEL mode, where shard() strategies are ignored
        self.pipeline_stages = pipeline_stages  # optimizer parallel splits over the ranks of one stage
        self.optimizer_sharding = tuple(optimizer_sharding)  # (shard size or -1, threshold in bytes)
        self.world = _ops.world()  # (rank, size), fixed while the outermost call runs
        self.split_seen = False  # whether a call ran on blocks of a split tensor
        self.differentiated = False  # whether a gradient was taken above it (a training network's call)
        self.backward_depth = 0  # > 0 while a backward pass runs: its bprops lay no Parameter out

    def __enter__(self):
        super().__enter__()
        _active.depth = getattr(_active, "depth", 0) + 1
        return self

    def __exit__(self, *exc) -> None:
        _active.depth -= 1
        super().__exit__(*exc)

    def note_differentiation(self) -> None:
        self.differentiated = True

    def note_backward(self, running: bool) -> None:
        self.backward_depth += 1 if running else -1

    def process_primitive(self, prim, args: tuple):
        if self.broadcast_reads:
            broadcast_first_reads(args, self.pipeline_stages)
        strategy = getattr(prim, "in_strategy", None) if self.strategies else None
        if (
            strategy is None
            and not any(_reads_sharded(a) for a in args)
            and not (self.optimizer_parallel and prim.name in optimizer_updates)
        ):
            return self.parent.process_primitive(prim, args)
        nsig = len(prim.__mindspore_signature__)
        if len(args) < nsig:
            args = tuple(prim._bound_inputs(tuple(args)))
        layouts = tuple(_layout_or_none(a) for a in args)
        parent = self.parent
        previous = _C.set_interpreter(None if parent is EVAL else parent)  # the local calls go below
        try:
            return self._run(prim, args, layouts, strategy)
        finally:
            _C.set_interpreter(previous)

    def _run(self, prim, args: tuple, layouts: tuple, strategy):
        if strategy is not None and not prim.__dict__.get("_strategy_checked"):
            check_same_strategy(prim, self._stage_ranks())
            prim.__dict__["_strategy_checked"] = True
        plan = self._plan(prim, args, layouts, strategy)
        if not self.split_seen:
            self.split_seen = any(_splits_any(lay) for lay in (*plan.inputs, *(plan.outputs or ())))
        local_args = []
        kept_whole = {}
        for i, (a, want) in enumerate(zip(args, plan.inputs)):
            if i in plan.keep_whole:  # a weight updated by blocks and gathered back whole (ZeRO stage 1)
                block = redistribute(local_of(a), layout_of(a), want, a._meta[1])
                kept_whole[i] = _block_parameter(a, block)
                local_args.append(kept_whole[i])
            elif i in plan.args:
                local_args.append(plan.args[i])
            elif i in plan.keep_partial:  # a linear operator: the partial block as it is, still partial
                local_args.append(a._data.local)
            elif isinstance(a, Tensor) and want is not None:
                local_args.append(self._as_layout(prim, i, a, want))
            elif isinstance(a, (tuple, list)) and a and isinstance(want, (tuple, list)):
                local_args.append(type(a)(self._as_layout(prim, i, t, w) for t, w in zip(a, want)))
            else:
                local_args.append(local_of(a) if isinstance(a, Tensor) else a)
        local_prim = plan.local if plan.local is not None else prim
        out = local_prim(*local_args)
        for i, block in kept_whole.items():
            whole = redistribute(block, plan.inputs[i], layout_of(args[i]), args[i]._meta[1])
            _ops.assign(local_of(args[i]), whole)
        outs = out if isinstance(out, tuple) else (out,)
        layouts_out = plan.outputs or [replicated(len(o._meta[1])) for o in outs]
        results = []
        for k, (o, lay) in enumerate(zip(outs, layouts_out)):
            pending = plan.partial.get(k)
            if pending is not None and _written_input(prim, args, k) is not None:
                o, pending = _finish_partial(o, *pending, lay.mesh), None  # a Parameter holds whole values
            results.append(self._output(prim, args, k, o, lay, pending))
        return tuple(results) if isinstance(out, tuple) else results[0]

    def _plan(self, prim, args: tuple, layouts: tuple, strategy) -> ShardPlan:
        """The rule's plan for this call, kept on the primitive by the call's abstract inputs (``_plan_key``):
        a step calls each operator with the same shapes and layouts, and the rule (a cost search for
        propagation) runs once for them."""
        rule = sharding_rules.get(type(prim))
        context = (rule, strategy, self.optimizer_parallel, self.pipeline_stages, self.optimizer_sharding, self.world)
        key = _plan_key(args, layouts, context)
        plans = prim._derived
        plan = plans.get(key) if plans is not None and key is not None else None
        if plan is None:
            plan = self._new_plan(rule, prim, args, layouts, strategy)
            if key is not None:
                if plans is None or len(plans) >= _PLANS_KEPT:
                    plans = prim._derived = {}
                plans[key] = plan
        return plan

    def _new_plan(self, rule, prim, args: tuple, layouts: tuple, strategy) -> ShardPlan:
        plan = rule(prim, args, layouts, strategy) if rule is not None else None
        if plan is not None and strategy is not None:
            check_strategy_followed(prim, args, plan, strategy)
        if plan is not None and self.optimizer_parallel and prim.name in optimizer_updates:
            plan = zero_plan(prim, args, plan, self.pipeline_stages, *self.optimizer_sharding)
        if plan is None:
            if strategy is not None:
                raise ValueError(
                    f"For '{prim.name}', a sharding strategy was set (shard({strategy})), but opforge has no "
                    "sharding rule for it; register one with @sharding_rules.register(...)."
                )
            plan = _replicated_plan(prim, args, layouts)
        return plan

    def _stage_ranks(self):
        """The ranks of this rank's pipeline stage (consecutive: the only ones that run its operators); None
        without stages."""
        return None if self.pipeline_stages == 1 else stage_ranks(*self.world, self.pipeline_stages)

    def _as_layout(self, prim, i: int, t, want: TensorLayout):
        if not isinstance(t, Tensor):
            return t
        shape = t._meta[1]
        have = layout_of(t)
        data = t._data
        if data.__class__ is ShardedValue and data.pending is not None:
            key = (tuple(want.mesh), tuple(want.dims))
            block = data.done.get(key)
            if block is None:
                _check_divisible(prim.name, prim._arg_name(i), shape, want)
                block = _from_done(data, want) if data.done else _reduce_partial(data, want, shape)
            if block is not None:
                data.done[key] = block  # a second reader (a bprop) takes the same block
                return block
        if have.dims == want.dims and (have.is_replicated or have.mesh == want.mesh):
            return local_of(t)
        _check_divisible(prim.name, prim._arg_name(i), shape, want)
        block = redistribute(local_of(t), have, want, shape)
        if isinstance(t, Parameter) and have.is_replicated and not want.is_replicated and not self.backward_depth:
            # A parameter (or an optimizer state) is split once, in place: its memory is its block's. Its layout is
            # the forward pass's (or an update's, following it): a bprop wanting it split reads a slice, as
            # MindSpore derives the backward pass from the forward's strategies.
            _split_in_place(t, block, want)
            return local_of(t)
        return block

    @staticmethod
    def _output(prim, args: tuple, k: int, local: Tensor, layout: TensorLayout, pending=None):
        written = _written_input(prim, args, k)
        if written is not None:  # an in-place output is the Parameter it wrote (MindSpore's convention)
            return written
        shape = tuple(s * layout.splits(i) for i, s in enumerate(local._meta[1]))
        return _wrap(local, layout, shape, pending)


def check_strategy_followed(prim, args: tuple, plan: ShardPlan, strategy: tuple) -> None:
    """A strategy is followed as it is or refused, as MindSpore's: a rule that would lay a tensor input out
    other than its strategy says (an axis its operator reads whole, a broadcast dim, an input it keeps whole)
    makes the call a ValueError naming the input, not a silently different split. (An optimizer update
    follows its Parameter's layout, whatever its strategy.)"""
    if prim.name in optimizer_updates:
        return
    inputs = list(plan.strategy_of or [])  # (name, planned layout) of each tensor, a tuple's (Concat's) included
    for i, a in enumerate(args if plan.strategy_of is None else ()):
        if isinstance(a, Tensor):
            inputs.append((prim._arg_name(i), plan.inputs[i]))
        elif isinstance(a, (tuple, list)) and a and all(isinstance(t, Tensor) for t in a):
            lays = plan.inputs[i] if isinstance(plan.inputs[i], (tuple, list)) else [None] * len(a)
            inputs += [(f"{prim._arg_name(i)}[{k}]", lay) for k, lay in enumerate(lays)]
    for (name, lay), wanted in zip(inputs, strategy):
        got = tuple(lay.splits(d) for d in range(len(lay.dims))) if isinstance(lay, TensorLayout) else None
        if got is not None and len(wanted) < len(got):  # broadcast by the primitive before the call (BCE's
            got = got[len(got) - len(wanted) :]  # weights): the strategy is of its own, trailing, dims
        if got is not None and got != tuple(wanted):
            raise ValueError(
                f"For '{prim.name}', the strategy {strategy} splits the input '{name}' as "
                f"{tuple(wanted)}, but its sharding rule splits it only as {got} here: set that input's strategy "
                f"to {got}."
            )


def zero_plan(
    prim, args: tuple, plan: ShardPlan, pipeline_stages: int = 1, shard_size: int = -1, threshold: int = 0
) -> ShardPlan:
    """ZeRO stage 1 for an optimizer update whose variable is whole: the states (the other written
    Parameters) are split along dim 0 over the ranks of this rank's pipeline stage (all ranks without a
    pipeline), or over groups of ``shard_size`` consecutive ones of them (each group a whole copy), once and
    in place; the variable is updated by its block and gathered back whole; the gradient and the rest of the
    variable's shape are taken by blocks. A variable of fewer than ``threshold`` bytes stays whole."""
    var = args[0]
    dtype, shape, _ = var._meta
    _, world = _ops.world()
    size = world // pipeline_stages  # the ranks of a stage: consecutive, the mesh's last axis
    if shard_size != -1 and size % shard_size:
        raise ValueError(
            f"For '{prim.name}', the parallel optimizer's 'optimizer_weight_shard_size' ({shard_size}) must divide "
            f"the {size} ranks of a stage."
        )
    parts = size if shard_size == -1 else shard_size
    small = math.prod(shape) * dtype.itemsize < threshold
    if not layout_of(var).is_replicated or not shape or shape[0] % parts or parts == 1 or small:
        return plan  # already split by a strategy, a scalar, rows that do not divide, or below the threshold
    block = TensorLayout.make((pipeline_stages, size // parts, parts), (2,) + (None,) * (len(shape) - 1))
    inputs = list(plan.inputs)
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and a._meta[1] == shape:
            inputs[i] = block
    return ShardPlan(inputs=inputs, outputs=plan.outputs, keep_whole={0})


def _block_parameter(weight: Parameter, block: Tensor) -> Parameter:
    """A Parameter holding ``block`` (this rank's rows of ``weight``) for an in-place update. Eagerly a copy
    of it; while a trace records, a Parameter the trace keeps, filled by an Assign (an operator: every
    replay refills it from the weight as it is then, where a copy made outside operators would replay the
    first step's rows)."""
    if not tracing():
        return Parameter(block, name=weight.name, requires_grad=weight.requires_grad)
    dtype, shape, device = block._meta
    empty = Tensor._from_array(device.empty(shape, dtype.np_dtype), dtype, device)
    holder = Parameter(empty, name=weight.name, requires_grad=weight.requires_grad)
    _ops.assign(holder, block)
    return holder


def pending_over_ranks(grads: tuple, mean: bool, degree: int) -> tuple:
    """Data-parallel gradients (each rank's own, whole) as partial sums over all ranks left pending, divided
    by ``degree`` when ``mean``: the optimizer update that reads one as its block (ZeRO stage 1) completes it
    with a ReduceScatter, one that reads it whole with an AllReduce. Collectives are operators here, so a
    trace records them (the bucketed ``DistributedGradReducer`` talks MPI outside operators)."""
    _, size = _ops.world()
    if size == 1:
        return grads if not mean or degree == 1 else tuple(g * (1.0 / degree) for g in grads)
    how = "mean" if mean and degree == size else "sum"
    out = []
    for g in grads:
        if mean and degree != size:
            g = g * (1.0 / degree)
        shape = g._meta[1]
        out.append(_wrap(g, TensorLayout((size,), (None,) * len(shape)), shape, (how, (0,))))
    return tuple(out)


def _written_input(prim, args: tuple, k: int):
    """The Parameter written as output ``k`` (the k-th RW_WRITE argument), or None."""
    n = 0
    for i, s in enumerate(prim.__mindspore_signature__):
        if s.rw == sig_rw.RW_WRITE:
            if n == k:
                return args[i]
            n += 1
    return None


def _split_in_place(param: Parameter, block: Tensor, layout: TensorLayout) -> None:
    local = Parameter(block, name=param.name, requires_grad=param.requires_grad)
    param._data = ShardedValue(local, layout, param._meta[1])
    info = param.param_info
    key = id(info)
    _split_by_info[key] = weakref.ref(param, lambda ref: _forget(_split_by_info, key, ref))


_split_by_info: dict = {}  # id(ParamInfo) -> weak reference to the split Parameter holding it


def _forget(registry: dict, key, ref) -> None:
    """A weak registry's entry gone with its object (unless another object took the key since)."""
    if registry.get(key) is ref:
        del registry[key]


def cloned_layout(param: Parameter):
    """The layout of the split Parameter ``param`` was cloned from (an optimizer state's weight: MindSpore lays a
    clone out as its source), or None when there is none, it is whole or of another shape."""
    source = param.param_info.cloned_from
    ref = _split_by_info.get(id(source)) if source is not None else None
    weight = ref() if ref is not None else None
    if weight is None or weight.param_info is not source or weight._meta[1] != param._meta[1]:
        return None
    return layout_of(weight)


def _reads_sharded(a) -> bool:
    if isinstance(a, Tensor):
        return a._data.__class__ is ShardedValue if hasattr(a, "_data") else False
    if isinstance(a, (tuple, list)):
        return any(_reads_sharded(t) for t in a)
    return False


_PLANS_KEPT = 64  # plans per primitive (eager calls with ever new shapes start the table again)


def _plan_key(args: tuple, layouts: tuple, context: tuple):
    """What a rule's plan depends on beyond the primitive's attrs: each tensor's dtype, shape, device, layout
    and pending partial results (with the blocks made of them already, which the cost of reading it depends
    on), the values of the other arguments, and ``context``. None when an argument cannot be a key."""
    parts = [context]
    for a, lay in zip(args, layouts):
        part = _arg_key(a, lay)
        if part is None:
            return None
        parts.append(part)
    return tuple(parts)


def _arg_key(a, lay):
    if isinstance(a, Tensor):
        data = a._data
        if data.__class__ is ShardedValue and data.pending is not None:
            return (a._meta, lay, data.pending, frozenset(data.done))
        if isinstance(a, Parameter):  # (what the Assign rule reads: a trained weight, a clone of a split one)
            return (a._meta, lay, a.requires_grad, a.param_info.cloned_from is not None and cloned_layout(a))
        return (a._meta, lay)
    if isinstance(a, (tuple, list)) and lay is not None:  # a tuple of tensors (AddN, Concat)
        parts = tuple(_arg_key(t, t_lay) for t, t_lay in zip(a, lay))
        return None if None in parts else (type(a), parts)
    try:
        hash(a)
    except TypeError:
        return None
    return (type(a), a)  # by type too: 1, 1.0 and True are equal keys


def _layout_or_none(a):
    if isinstance(a, Tensor):
        return layout_of(a)
    if isinstance(a, (tuple, list)) and a and all(isinstance(t, Tensor) for t in a):
        return tuple(layout_of(t) for t in a)
    return None
