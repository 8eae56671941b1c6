"""Pipeline parallel (MindSpore's ``pipeline_stages``, ``Cell.pipeline_stage`` and ``nn.PipelineCell``).

The ranks are split into ``pipeline_stages`` stages in order (stage = rank // (world // stages)); a cell
given ``cell.pipeline_stage = k`` runs on the ranks of stage k only. ``PipelineCell(network, micro_size)``
cuts each batch into ``micro_size`` micro-batches along dim 0 and runs them through the stages with the
1F1B schedule: a stage runs ``stages - stage - 1`` forward passes ahead, then alternates one forward and
one backward, then finishes the backward passes. Between stages the boundary tensors travel with
``ops.Send`` / ``ops.Receive`` forward and their gradients backward (a tensor made by one stage and read by a
later one crosses every boundary between them, each stage in between passing it on); each stage differentiates
only its
own part (a tape per micro-batch), seeded at the last stage by the loss and elsewhere by the gradient the
next stage sent back. As in MindSpore, the loss a step returns and differentiates is the sum of the
micro-batches' losses, on every rank (from the first rank of the last stage): with a loss that is a mean over
its batch, a step equals one process trained on the whole batch with ``micro_size`` times its gradients (a
``TrainOneStepCell`` of ``sens=micro_size``), and its loss is ``micro_size`` times that process's.

Operators with no data on this rank (the other stages' cells, a loss computed past this stage) are only
shape-inferred. A rank keeps only its stage's parameters: ``PipelineCell`` drops the data of the others
(they stay as placeholders, their shapes known), so an optimizer made after it keeps no state for them
and skips them, and ``opforge.memory.stats()`` counts this stage's weights only.
"""

from __future__ import annotations

import weakref
from collections import deque

from opforge import dtype as mstype
from opforge import ops
from opforge.bprop.cell_bprop import call_as_one_operation
from opforge.bprop.tape import Tape, backward, taping
from opforge.communication.management import GlobalComm, get_group_size, get_rank
from opforge.dispatch import pipeline as run_context
from opforge.dispatch import sharding
from opforge.dispatch.abstract import AbstractInterpreter, abstract_call
from opforge.dispatch.interpreter import Interpreter
from opforge.dispatch.pipeline import stage_of_rank
from opforge.dispatch.sharding import TensorLayout
from opforge.nn.cell import Cell
from opforge.parallel_context import get_auto_parallel_context
from opforge.primitives.comm_ops import _MAX_TAG
from opforge.tensor import Tensor, is_placeholder

__all__ = ["Pipeline", "PipelineCell", "PipelineGradReducer", "stage_of_rank", "sync_pipeline_shared_parameters"]

_FORWARD_TAG, _TAGS_PER_MICRO = 1000, 64
_TAGGED_MICROS = (_MAX_TAG + 1 - _FORWARD_TAG) // (2 * _TAGS_PER_MICRO)  # forward and backward tags within MPI's
_BACKWARD_TAG = _FORWARD_TAG + _TAGGED_MICROS * _TAGS_PER_MICRO


def _has_data(t) -> bool:
    return isinstance(t, Tensor) and hasattr(t, "_data")


class _ShapesOnly(Interpreter):
    """Below the pipeline's cells: an operator outside them belongs to the latest stage that made one of its inputs
    (its outputs are that stage's: ``_MicroBatch.made``), which reads the others as a cell of that stage would
    (``_Run.cross``: received here, or sent on); a call still reading a tensor without data (another stage's
    result) is only shape-inferred."""

    def __init__(self, run: _Run):
        self.parent = None
        self.run = run

    def process_primitive(self, prim, args: tuple):
        mb = self.run.micro
        stages = [s for s in map(mb.stage_of, _tensors(args)) if s is not None]
        stage = max(stages) if stages else None
        if stage is not None:
            args = _map_tensors(lambda t: self.run.cross(t, stage), args)
        if any(not _has_data(a) for a in _tensors(args)):
            out = abstract_call(prim, args, False)[0]
        else:
            out = self.parent.process_primitive(prim, args)
        if stage is not None:
            mb.made(out, stage)
        return out


def _tensors(value):
    """The Tensors in ``value`` (a Tensor, or a tuple or list of them, nested)."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _tensors(v)


def _map_tensors(fn, value):
    """``value`` with ``fn`` applied to each Tensor in it (nested tuples and lists kept)."""
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_map_tensors(fn, v) for v in value)
    return value


class _ByIdentity:
    """Values kept per tensor, by identity, holding the tensor weakly: an entry goes with its tensor, so the
    activations of a long pipelined call are freed as usual, and a later tensor reusing an id finds nothing."""

    def __init__(self):
        self._entries: dict = {}

    def get(self, t):
        entry = self._entries.get(id(t))
        return entry[1] if entry is not None and entry[0]() is t else None

    def put(self, t, value) -> None:
        key, entries = id(t), self._entries

        def forget(ref):
            if entries.get(key, (None,))[0] is ref:
                del entries[key]

        entries[key] = (weakref.ref(t, forget), value)


class _MicroBatch:
    """One micro-batch's forward pass on this stage: its tape, what it received and what it sends, and the
    stage that made each tensor crossing stages."""

    def __init__(self, index: int, weight_stages: dict):
        self.index = index
        self.tape = Tape()
        self.received: list = []  # boundary inputs from the previous stage (watched)
        self.sent: list = []  # boundary outputs for the next stage
        self.loss = None
        self.weight_stages = weight_stages  # id(weight) -> (weight, the stage whose cells hold it)
        self.made_by = _ByIdentity()  # tensor -> the stage whose cell (or operator outside cells) made it
        self.got = _ByIdentity()  # tensor of an earlier stage -> the tensor received for it
        self.crossed = _ByIdentity()  # the tensors sent on

    def stage_of(self, t: Tensor):
        made = self.made_by.get(t)
        if made is not None:
            return made
        entry = self.weight_stages.get(id(t))
        return entry[1] if entry is not None and entry[0] is t else None

    def made(self, out, stage: int) -> None:
        for t in _tensors(out):
            self.made_by.put(t, stage)


class _Run:
    """The state of one PipelineCell step on this rank (the ``Cell.__call__`` hook's target)."""

    def __init__(self, stage: int, stages: int, rank: int, per_stage: int, rows=None):
        self.stage, self.stages = stage, stages
        self.rank, self.per_stage = rank, per_stage
        self.prev = rank - per_stage if stage > 0 else None
        self.next = rank + per_stage if stage < stages - 1 else None
        self.rows = rows  # (layout, micro-batch size) when the batch is split over a stage's ranks; else None
        self.micro = None
        self.abstract = 0

    def boundary_layout(self, shape: tuple):
        """How a tensor crossing stages travels: a micro-batch's rows split as the inputs' were, each rank
        exchanging its block with the rank of the next stage holding the same rows, when its dim 0 is the
        micro-batch's; else None (whole). Sender and receiver decide alike, from the shape."""
        if self.rows is None or not shape or shape[0] != self.rows[1]:
            return None
        layout = self.rows[0]
        return TensorLayout(layout.mesh, (layout.dims[0],) + (None,) * (len(shape) - 1))

    def send(self, t: Tensor, tag: int, peer: int) -> None:
        layout = self.boundary_layout(tuple(t.shape))
        ops.Send(tag, peer)(sharding.gather_whole(t) if layout is None else sharding.block_of(t, layout))

    def receive(self, tag: int, peer: int, shape: tuple, dtype) -> Tensor:
        layout = self.boundary_layout(shape)
        if layout is None:
            return ops.Receive(tag, peer, shape, dtype)()
        return sharding.from_block(ops.Receive(tag, peer, layout.local_shape(shape), dtype)(), layout, shape)

    def call(self, cell, args: tuple, kwargs: dict):
        t = cell.pipeline_stage if self.stages > 1 else self.stage  # (one stage: MindSpore ignores pipeline_stage)
        if self.abstract:
            return cell._call_construct(args, kwargs)
        args = _map_tensors(lambda a: self.cross(a, t), args)
        kwargs = {k: _map_tensors(lambda a: self.cross(a, t), v) for k, v in kwargs.items()}
        out = cell._call_construct(args, kwargs) if t == self.stage else self._shapes_of(cell, args, kwargs)
        self.micro.made(out, t)
        return out

    def cross(self, a: Tensor, reader: int):
        """``a`` as stage ``reader`` reads it here (a cell of that stage, or an operator outside the cells that
        belongs to it). A tensor a stage made crosses every boundary between that stage and its readers, in the
        order the tensors are first read past a boundary (alike on every rank): this stage receives what an
        earlier stage made for itself or a later one (passing it on), and sends on what it made for a later one,
        so only neighbouring stages talk (1F1B stays deadlock-free)."""
        made, mb = self.micro.stage_of(a), self.micro
        if made is None or reader <= made or reader < self.stage:
            if reader == self.stage and not _has_data(a):
                raise ValueError(
                    f"For 'PipelineCell', stage {self.stage} reads a tensor without data here that no earlier stage "
                    "made: compute it inside the cells, or from the network's inputs."
                )
            return a
        if made < self.stage:  # made before this stage: received from the previous one
            got = mb.got.get(a)
            if got is None:
                got = self._receive(a)
                mb.got.put(a, got)
            if reader == self.stage:
                return got
            a = got  # a later stage reads it: passed on
        if made <= self.stage < reader and mb.crossed.get(a) is None:
            mb.crossed.put(a, True)
            self.passing(a)
        return a

    def passing(self, t: Tensor) -> None:
        """``t`` is one of the tensors this stage sends on: PipelineCell's schedule sends them after the micro-batch's
        forward pass (and takes their gradients back)."""
        self.micro.sent.append(t)

    def _shapes_of(self, cell, args, kwargs):
        self.abstract += 1
        try:
            with AbstractInterpreter():
                out = cell._call_construct(args, kwargs)
        finally:
            self.abstract -= 1
        return out

    def _receive(self, placeholder: Tensor) -> Tensor:
        dtype, shape, _ = placeholder._meta
        t = self.receive(self.forward_tag(len(self.micro.received)), self.prev, tuple(shape), dtype)
        self.micro.tape.watch(t)
        self.micro.received.append(t)
        return t

    def forward_tag(self, k: int) -> int:
        return _tag(_FORWARD_TAG, self.micro.index, k)


class _ForwardRun(_Run):
    """An evaluation network's call cut into its stages without ``PipelineCell`` (MindSpore's pipeline inference):
    one forward pass (the network loops over its micro-batches itself, as MindSpore's sample does), each tensor
    crossing a boundary sent as soon as a later stage's cell reads it, where the next stage receives it: every
    stage meets the boundaries in the same program order, so the blocking sends find their receives."""

    def __init__(self, stage: int, stages: int, rank: int, per_stage: int, weight_stages: dict):
        super().__init__(stage, stages, rank, per_stage)
        self.micro = _MicroBatch(0, weight_stages)
        self.sent = 0

    def passing(self, t: Tensor) -> None:
        self.send(t, self.forward_tag(self.sent), self.next)
        self.sent += 1

    def forward_tag(self, k: int) -> int:  # (one pass of any length: the tags repeat, MPI keeps their order)
        return _tag(_FORWARD_TAG, k // _TAGS_PER_MICRO, k % _TAGS_PER_MICRO)


def _weight_stages(network: Cell) -> dict:
    """``{id(weight): (weight, stage)}`` of the weights of one stage's cells: that stage makes them."""
    return {id(p): (p, min(s)) for p, s in _stages_of_parameters(network).values() if len(s) == 1}


def _evaluation_in_stages(cell: Cell) -> bool:
    """Whether ``cell`` is an evaluation network (none of its cells training) with staged cells and no
    ``PipelineCell``: its call is cut into stages by ``_forward_stages``."""
    cells = [c for _, c in cell.cells_and_names()]
    staged = any("pipeline_stage" in c.__dict__ for c in cells)
    return staged and not any(c.training or isinstance(c, PipelineCell) for c in cells)


def _forward_stages(cell: Cell, call, args: tuple, kwargs: dict):
    """``call(*args, **kwargs)``, ``cell``'s outermost call in evaluation cut into pipeline stages: each rank runs its
    stage's cells only (the other stages' weights dropped at the first call, shared ones synchronised) and receives
    and sends what crosses its boundaries (``_ForwardRun``). The outputs are the last stage's: with
    ``pipeline_result_broadcast`` every rank's (MindSpore's), else zeros off the last stage."""
    weight_stages = cell.__dict__.get("_pipeline_weight_stages")
    if weight_stages is None:  # (the first call: the other stages' weights dropped)
        _release_other_stages(cell)
        weight_stages = _weight_stages(cell)
        object.__setattr__(cell, "_pipeline_weight_stages", weight_stages)
    stages = get_auto_parallel_context("pipeline_stages")
    rank, world = get_rank(), get_group_size()
    run = _ForwardRun(stage_of_rank(rank, world, stages), stages, rank, world // stages, weight_stages)
    with run_context.running(run), _ShapesOnly(run):
        out = call(*args, **kwargs)
    late = [s for s in map(run.micro.stage_of, _tensors(out)) if s is not None and s != stages - 1]
    if late:  # (every rank knows: the stages that made the outputs are the same everywhere)
        raise ValueError(
            f"For '{type(cell).__name__}', a pipeline's outputs must be made by its last stage ({stages - 1}), but one "
            f"is stage {late[0]}'s: return what the last stage's cells compute."
        )
    return _last_stage_result(out, run, get_auto_parallel_context("pipeline_result_broadcast"))


def _last_stage_result(out, run: _Run, broadcast: bool):
    """The last stage's ``out`` (a Tensor or a nested tuple or list of them): on every rank, each from its
    counterpart of the last stage (a sum with the other stages' zeros), with ``broadcast``; else zeros elsewhere."""
    if isinstance(out, (tuple, list)):
        return type(out)(_last_stage_result(o, run, broadcast) for o in out)
    if not isinstance(out, Tensor):
        return out
    mine = out if _has_data(out) and run.next is None else ops.Zeros()(tuple(out.shape), out.dtype)
    if not broadcast:
        return mine
    group = _shared_group(set(range(run.stages)), run.rank, run.per_stage)
    return sharding.sum_over_ranks(mine, group)


run_context.register_forward(_evaluation_in_stages, _forward_stages)


def _tag(base: int, micro: int, k: int) -> int:
    """The message tag of the ``k``-th tensor crossing a boundary in micro-batch ``micro`` (tags repeat every
    ``_TAGGED_MICROS`` micro-batches: MPI keeps the order of one sender's messages of one tag)."""
    if k >= _TAGS_PER_MICRO:
        raise ValueError(
            f"For 'PipelineCell', more than {_TAGS_PER_MICRO} tensors cross one boundary between stages in one "
            "micro-batch: return fewer, larger tensors from the stages' cells."
        )
    return base + (micro % _TAGGED_MICROS) * _TAGS_PER_MICRO + k


def _split_rows(inputs: tuple):
    """(layout, rows) of the first micro-batch input split along dim 0 over ranks; None when none is."""
    for x in inputs:
        if sharding.is_sharded(x) and sharding.layout_of(x).dims[0] is not None:
            return sharding.layout_of(x), x.shape[0]
    return None


def _stages_of_parameters(network: Cell) -> dict:
    """``{id(parameter): (parameter, {stages})}``: the stages whose cells hold each parameter (the nearest
    enclosing ``pipeline_stage``; a parameter of no staged cell is left out: every rank keeps it)."""
    found = {}

    def walk(cell: Cell, owner) -> None:
        owner = cell.__dict__.get("pipeline_stage", owner)
        params, cells = cell._registries()
        for p in params.values():
            if owner is not None:
                found.setdefault(id(p), (p, set()))[1].add(owner)
        for child in cells.values():
            walk(child, owner)

    walk(network, None)
    return found


def _shared_group(stages: set, rank: int, per_stage: int) -> tuple:
    """The ranks holding a parameter shared by ``stages``: this rank's counterpart in each of them."""
    return tuple(s * per_stage + rank % per_stage for s in sorted(stages))


def _release_other_stages(network: Cell):
    """Drop the data of every parameter only other stages hold: this rank never reads it; a parameter cells of
    several stages share (tied embeddings) stays on each of them, set to the first stage's value. Returns
    ``{id(parameter): its stages}`` of those shared ones; None when there are no stages (yet: an
    ``AutoParallel`` wrapper sets them when it runs)."""
    stages = get_auto_parallel_context("pipeline_stages")
    if stages == 1 or not GlobalComm.INITED:
        return None
    stage = stage_of_rank(get_rank(), get_group_size(), stages)
    users = _stages_of_parameters(network)
    for p, holders in users.values():
        if stage not in holders and not is_placeholder(p):
            del p._data  # a placeholder now: its shape and dtype stay
    _sync_shared(users, stages)
    return {key: holders for key, (_, holders) in users.items() if len(holders) > 1}


def sync_pipeline_shared_parameters(net: Cell) -> None:
    """MindSpore's ``sync_pipeline_shared_parameters(net)``: every parameter that cells of several pipeline stages
    hold takes the value of its first stage's copy, on the ranks of the other stages (a sum over those ranks of
    the first one's value and the others' zeros). Nothing without pipeline stages."""
    if not isinstance(net, Cell):
        raise TypeError(
            f"For 'sync_pipeline_shared_parameters', the 'net' must be a Cell, but got {type(net).__name__}."
        )
    stages = get_auto_parallel_context("pipeline_stages")
    if stages > 1 and GlobalComm.INITED:
        _sync_shared(_stages_of_parameters(net), stages)


def _sync_shared(users: dict, stages: int) -> None:
    rank, world = get_rank(), get_group_size()
    stage = stage_of_rank(rank, world, stages)
    for p, holders in users.values():
        if len(holders) > 1 and stage in holders:
            mine = p if stage == min(holders) else ops.ZerosLike()(p)
            p.set_data(sharding.sum_over_ranks(mine, _shared_group(holders, rank, world // stages)))


def _configure(network: Cell, config: dict, attr: str, arg: str) -> None:
    """MindSpore's ``stage_config`` / ``segment_config``: ``attr`` of each sub-cell named by its whole dotted
    path from ``network`` (as ``cells_and_names`` spells it) set to the value; a name matching no cell is a
    KeyError listing the names there are."""
    if not isinstance(config, dict):
        raise TypeError(f"For 'PipelineCell', the argument '{arg}' must be a dict, but got {type(config).__name__}.")
    left = dict(config)
    for name, cell in network.cells_and_names():
        if name and name in left:  # (the network itself has no name: MindSpore's rule)
            setattr(cell, attr, left.pop(name))  # (checked by Cell: an int >= 0)
    if left:
        names = [name for name, _ in network.cells_and_names() if name]
        raise KeyError(
            f"For 'PipelineCell', the argument '{arg}' : {left} is not found in 'network': its cells are {names}."
        )


class PipelineCell(Cell):
    """``PipelineCell(network, micro_size, stage_config=None, segment_config=None)``: ``network`` (usually a
    ``WithLossCell``) run in ``micro_size`` micro-batches through the pipeline stages (module docstring).
    ``stage_config`` gives sub-cells their ``pipeline_stage`` by name (``{"_backbone.fc1": 0, ...}``), as
    setting the attribute does; ``segment_config`` their ``pipeline_segment`` (kept: MindSpore's virtual
    stages, which opforge's 1F1B schedule does not have). ``TrainOneStepCell`` recognises it and trains with
    its 1F1B schedule; called alone it returns the sum of the micro-batches' losses (MindSpore's)."""

    def __init__(self, network: Cell, micro_size: int, stage_config=None, segment_config=None):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"For 'PipelineCell', the 'network' must be a Cell, but got {type(network).__name__}.")
        if isinstance(micro_size, bool) or not isinstance(micro_size, int) or micro_size < 1:
            raise ValueError(f"For 'PipelineCell', the 'micro_size' must be an int >= 1, but got {micro_size!r}.")
        if stage_config is not None:
            _configure(network, stage_config, "pipeline_stage", "stage_config")
        if segment_config is not None:
            _configure(network, segment_config, "pipeline_segment", "segment_config")
        self.network = network
        self.micro_size = micro_size
        self._shared = _release_other_stages(network)  # None until the stages are known
        self._weight_stages = None

    def construct(self, *inputs):
        """The sum of the micro-batches' losses. While a gradient is taken (``value_and_grad`` of a function calling
        it, MindSpore's functional pipeline training), the 1F1B schedule computes the weights' gradients as it
        runs, and the call is recorded as one operation on the weights whose backward hands them on."""
        if not taping():
            return self.value_and_grad((), *inputs)[0]
        weights = tuple(self.network.trainable_params())
        found = []

        def run():
            loss, grads = self.value_and_grad(weights, *inputs)
            found.extend(grads)
            return loss

        def bprop(*args):
            dout = args[-1]
            return tuple(g if is_placeholder(g) else g * dout for g in found)

        return call_as_one_operation("PipelineCell", bprop, run, weights)

    # -- the schedule ---------------------------------------------------------------------------------
    def _split(self, inputs: tuple) -> list:
        m = self.micro_size
        parts = []
        for x in inputs:
            n = x.shape[0]
            if n % m:
                raise ValueError(f"For 'PipelineCell', the batch ({n}) must be a multiple of the 'micro_size' ({m}).")
            size = n // m
            local = sharding.local_row_parts(x, m)  # a batch split over a stage's ranks: each cuts its own rows
            parts.append(local or [x[i * size : (i + 1) * size] for i in range(m)])
        return [tuple(p[i] for p in parts) for i in range(m)]

    def value_and_grad(self, weights, *inputs):
        """``(loss, grads)``: one step's loss (the micro-batches' sum) and the gradients of ``weights`` (zeros
        for the weights of other stages), by the 1F1B schedule."""
        stages = get_auto_parallel_context("pipeline_stages")
        if self._shared is None:
            self._shared = _release_other_stages(self.network)
        if self._weight_stages is None:
            self._weight_stages = _weight_stages(self.network)
        rank, world = get_rank(), get_group_size()
        stage = stage_of_rank(rank, world, stages)
        micros = self._split(inputs)
        run = _Run(stage, stages, rank, world // stages, _split_rows(micros[0]))
        m = self.micro_size
        warm = min(stages - stage - 1, m)
        grads = [None] * len(weights)
        waiting: deque = deque()
        losses = []
        pending_sends: list = []
        with run_context.running(run):
            for i in range(m):
                mb = self._forward(run, i, micros[i], weights)
                waiting.append(mb)
                if mb.loss is not None:
                    losses.append(mb.loss)
                if i < warm:
                    self._send_forward(run, mb)
                    continue
                pending_sends.append(mb)  # sent after the next backward's receive: no crossing sends
                self._backward(run, waiting.popleft(), weights, grads)
                for sent in pending_sends:
                    self._send_forward(run, sent)
                pending_sends.clear()
            while waiting:
                self._backward(run, waiting.popleft(), weights, grads)
        grads = [(w if is_placeholder(w) else ops.ZerosLike()(w)) if g is None else g for w, g in zip(weights, grads)]
        self._sum_shared(weights, grads, stage, rank, world // stages)
        return self._loss(losses, rank, world, stages), tuple(grads)

    def _sum_shared(self, weights, grads: list, stage: int, rank: int, per_stage: int) -> None:
        """A weight cells of several stages share: each stage's copy gets the sum of their gradients, so the
        copies take the same update (the same order of weights on every rank: the same collectives)."""
        shared = self._shared or {}  # (None: one stage)
        for k, w in enumerate(weights):
            stages = shared.get(id(w), ())
            if stage in stages:
                grads[k] = sharding.sum_over_ranks(grads[k], _shared_group(stages, rank, per_stage))

    def _forward(self, run: _Run, index: int, inputs: tuple, weights) -> _MicroBatch:
        mb = _MicroBatch(index, self._weight_stages)
        run.micro = mb
        with mb.tape:
            for w in weights:
                mb.tape.watch(w)
            with _ShapesOnly(run):
                out = self.network(*inputs)
        if run.next is None:  # the last stage holds the loss
            mb.loss = out
        return mb

    def _send_forward(self, run: _Run, mb: _MicroBatch) -> None:
        if run.next is None:
            return
        for k, t in enumerate(mb.sent):
            run.send(t, _tag(_FORWARD_TAG, mb.index, k), run.next)

    def _backward(self, run: _Run, mb: _MicroBatch, weights, grads: list) -> None:
        if run.next is None:
            outputs = (mb.loss,)
            repeats = sharding.loss_repeats(mb.loss)  # loss_repeated_mean=False: MindSpore's sums (grad_operation)
            senses = (ops.OnesLike()(mb.loss) * float(repeats) if repeats > 1 else ops.OnesLike()(mb.loss),)
        else:
            outputs = tuple(mb.sent)
            senses = tuple(
                run.receive(_tag(_BACKWARD_TAG, mb.index, k), run.next, tuple(t.shape), t.dtype)
                for k, t in enumerate(mb.sent)
            )
        found = backward(mb.tape, outputs, senses)
        for j, w in enumerate(weights):
            g = found.get(id(w))
            if g is not None:
                grads[j] = g if grads[j] is None else grads[j] + g
        if run.prev is not None:
            for k, t in enumerate(mb.received):
                g = found.get(id(t))
                run.send(ops.ZerosLike()(t) if g is None else g, _tag(_BACKWARD_TAG, mb.index, k), run.prev)

    def _loss(self, losses: list, rank: int, world: int, stages: int):
        last = world - world // stages  # the first rank of the last stage holds the loss everyone gets
        if losses:
            total = losses[0]
            for x in losses[1:]:
                total = total + x
        else:
            total = Tensor(0.0, mstype.float32)
        if world == 1:
            return total
        if rank != last and losses:  # another rank of the last stage: the same loss, counted once
            total = ops.ZerosLike()(total)
        # A sum of that rank's loss and every other rank's zero gives everyone the loss exactly, with a
        # collective on one Tensor, which a trace's native replay runs (Broadcast's is a tuple)
        return ops.AllReduce()(total)


class Pipeline(PipelineCell):
    """MindSpore 2.6's name of ``PipelineCell`` (``mindspore.parallel.nn.Pipeline``)."""


class PipelineGradReducer(Cell):
    """MindSpore's ``PipelineGradReducer(parameters, scale_sense=1.0, opt_shard=None)`` for functional pipeline
    training (``grads = reducer(grads)`` between ``value_and_grad`` of a ``Pipeline`` and the optimizer):
    ``reducer(grads)`` is each gradient divided by ``scale_sense``. MindSpore's compiler accumulates the
    micro-batches' gradients into the reducer's buffers; opforge's ``PipelineCell`` hands on the gradients its
    1F1B schedule accumulated, so there is nothing to keep. ``opt_shard`` (None: the context's
    ``enable_parallel_optimizer``) is checked and kept."""

    def __init__(self, parameters, scale_sense=1.0, opt_shard=None):
        super().__init__(auto_prefix=False)
        name = "PipelineGradReducer"
        if not isinstance(parameters, (list, tuple)) or not all(isinstance(p, Tensor) for p in parameters):
            raise TypeError(f"For '{name}', the 'parameters' must be a ParameterTuple, but got {parameters!r}.")
        if isinstance(scale_sense, bool) or not isinstance(scale_sense, (int, float)) or scale_sense <= 0:
            raise ValueError(f"For '{name}', the 'scale_sense' must be a number > 0, but got {scale_sense!r}.")
        if opt_shard is not None and not isinstance(opt_shard, bool):
            raise TypeError(f"For '{name}', the 'opt_shard' must be a bool or None, but got {opt_shard!r}.")
        self.parameters = tuple(parameters)
        self.scale_sense = float(scale_sense)
        self.opt_shard = get_auto_parallel_context("enable_parallel_optimizer") if opt_shard is None else opt_shard

    def construct(self, grads):
        if len(grads) != len(self.parameters):
            raise ValueError(
                f"For 'PipelineGradReducer', there must be a gradient per parameter ({len(self.parameters)}), but "
                f"got {len(grads)}."
            )
        if self.scale_sense == 1.0:
            return tuple(grads)
        return tuple(g if is_placeholder(g) else g * (1.0 / self.scale_sense) for g in grads)
