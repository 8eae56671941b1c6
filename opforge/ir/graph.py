"""A network recorded as a graph of primitive calls: what ``export`` writes and ``load`` reads back.

``record(net, *inputs)`` runs the network once under a ``Tracer`` (the recorder ``opforge.jit`` uses)
and keeps each primitive call as a ``Node``: the operator's class name, the arguments its constructor
took (``init_attrs``) and any attribute set after it (``add_prim_attr``), and where each argument
comes from: an input of the graph, an earlier node's output, a ``Parameter`` (by name), a constant
Tensor, or a Python value. ``Graph.run`` calls the rebuilt primitives on new inputs; ``nn.GraphCell``
wraps it as a Cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from opforge import dtype as mstype
from opforge.dispatch.keep_writes import KeepWrites
from opforge.dispatch.trace import Tracer
from opforge.parallel.parameter_layout import lay_out
from opforge.parallel_context import operator_parallel
from opforge.primitives import Primitive, primitive_classes
from opforge.tensor import Parameter, Tensor

__all__ = ["Graph", "Node", "record", "rebuild_primitive"]


@dataclass
class Node:
    """One primitive call. ``args``: per argument, ("input", i), ("value", slot) for an earlier node's
    output, ("param", name), ("tensor", key) for a constant Tensor, ("const", python value) or
    ("seq", "tuple"|"list", [sources]); ``outputs``: the slot of its one output, a list of slots (None
    where an output is not a Tensor), or None."""

    op: str
    init_attrs: dict
    extra_attrs: dict
    args: list
    outputs: object
    prim: Primitive = field(repr=False, compare=False)


@dataclass
class Graph:
    """A recorded program: its inputs' shapes and dtypes, its nodes in call order, its outputs
    (("value", slot), ("input", i), ("param", name), ("tensor", key), ("const", v), or
    ("tuple"|"list", [specs])), the Parameters it reads and its constant Tensors."""

    inputs: list  # (shape, dtype) per input
    nodes: list
    outputs: object
    params: dict  # name -> Parameter
    tensors: dict  # key -> Tensor
    metas: dict  # slot -> (shape, dtype) of each node output, as recorded
    name: str = "graph"

    def run(self, inputs, params=None):
        """The outputs for ``inputs`` (Tensors of the recorded shapes and dtypes), reading ``params``
        (name -> Parameter) where given, else the recorded Parameters."""
        self.check_inputs(inputs)
        params = self.params if params is None else params
        env = {}

        def value(source):
            kind = source[0]
            if kind == "input":
                return inputs[source[1]]
            if kind == "value":
                return env[source[1]]
            if kind == "param":
                return params[source[1]]
            if kind == "tensor":
                return self.tensors[source[1]]
            if kind == "seq":
                items = [value(s) for s in source[2]]
                return tuple(items) if source[1] == "tuple" else items
            return source[1]

        for node in self.nodes:
            # the call the recorder saw: the primitive's own call path, under any Python __call__ of
            # its class (BatchNorm's training update, recorded as its own nodes, is not run twice)
            out = Primitive.__call__(node.prim, *[value(a) for a in node.args])
            _store(env, node.outputs, out)
        return _build(self.outputs, value)

    def check_inputs(self, inputs) -> None:
        if len(inputs) != len(self.inputs):
            raise TypeError(f"For '{self.name}', the graph takes {len(self.inputs)} input(s), but got {len(inputs)}.")
        for i, (x, (shape, dt)) in enumerate(zip(inputs, self.inputs)):
            if not isinstance(x, Tensor):
                raise TypeError(f"For '{self.name}', input {i} must be a Tensor, but got {type(x).__name__}.")
            if tuple(x.shape) != tuple(shape) or x.dtype != dt:
                raise ValueError(
                    f"For '{self.name}', input {i} must be a Tensor of shape {tuple(shape)} and dtype {dt} "
                    f"(the shapes it was exported with), but got shape {tuple(x.shape)} and dtype {x.dtype}."
                )

    def operators(self) -> list:
        """The operator names the graph calls, in first-call order."""
        return list(dict.fromkeys(n.op for n in self.nodes))


def _store(env: dict, outputs, value) -> None:
    if outputs is None:
        return
    if isinstance(outputs, int):
        env[outputs] = value
        return
    for slot, v in zip(outputs, value):
        if slot is not None:
            env[slot] = v


def _build(spec, value):
    kind = spec[0]
    if kind in ("tuple", "list"):
        items = [_build(s, value) for s in spec[1]]
        return tuple(items) if kind == "tuple" else items
    return value(spec)


# -- recording -----------------------------------------------------------------------------------


def record(net, *inputs, name: str | None = None) -> Graph:
    """Run ``net(*inputs)`` once (a Cell or a function of Tensors) and keep its primitive calls; the Parameters it
    writes (a training step's weights, BatchNorm's statistics) are given their values back."""
    for i, x in enumerate(inputs):
        if not isinstance(x, Tensor):
            raise TypeError(
                f"For 'export', every input must be a Tensor, but input {i} is {type(x).__name__}: give the "
                f"network's Tensor inputs (a Python value it takes is fixed inside it instead)."
            )
    where = name or type(net).__name__
    if operator_parallel() and hasattr(net, "get_parameters"):
        lay_out(net, inputs)  # a parallel network's first call splits its weights, outside operators: not recorded
    tracer = Tracer(list(inputs), where, fuse=False, graph=False)
    kept = KeepWrites()  # recording a training step leaves its weights as they were
    try:
        with tracer, kept:
            out = net(*inputs)
    finally:
        kept.restore()
    # a parallel network's record is one rank's local program: its strategies are applied already (its blocks and
    # collectives are in it), and a loaded copy runs as it is
    return _Recorder(tracer, where, local=operator_parallel()).graph(inputs, out)


class _Recorder:
    """Turns a Tracer's steps (slots, constants) into nodes (inputs, values, named Parameters)."""

    def __init__(self, tracer: Tracer, where: str, local: bool = False):
        self.tracer = tracer
        self.where = where
        self.local = local  # a rank's local program: the operators' strategies left out
        self.params: dict = {}
        self.tensors: dict = {}
        self.tensor_keys: dict = {}  # id -> key (the Tensors stay alive in self.tensors)

    def graph(self, inputs, out) -> Graph:
        nodes = [self.node(step) for step in self.tracer.steps]
        outputs = self.output(self.tracer.output_spec(out))
        metas = [(tuple(x.shape), x.dtype) for x in inputs]
        recorded = self.tracer.metas
        slots = {
            slot: (tuple(recorded[slot][1]), recorded[slot][0]) for slot in range(self.tracer.n_inputs, len(recorded))
        }
        return Graph(metas, nodes, outputs, self.params, self.tensors, slots, self.where)

    def node(self, step) -> Node:
        prim = step.prim
        op = type(prim).__name__
        init_attrs, extra = primitive_state(prim)
        if self.local:
            extra = {k: v for k, v in extra.items() if k not in _STRATEGY_ATTRS}
        return Node(op, init_attrs, extra, [self.source(s) for s in step.sources], step.outputs, prim)

    def source(self, source):
        kind = source[0]
        if kind == "slot":
            slot = source[1]
            return ("input", slot) if slot < self.tracer.n_inputs else ("value", slot)
        if kind == "seq":
            return ("seq", source[1].__name__, [self.source(s) for s in source[2]])
        return self.constant(source[1])

    def constant(self, value):
        if isinstance(value, Parameter):
            known = self.params.setdefault(value.name, value)
            if known is not value:
                raise ValueError(
                    f"For 'export', two Parameters of {self.where} share the name '{value.name}': give them "
                    f"unique names (a Cell's parameters are named by their attribute paths)."
                )
            return ("param", value.name)
        if isinstance(value, Tensor):
            key = self.tensor_keys.get(id(value))  # one entry per Tensor, however many calls read it
            if key is None:
                key = self.tensor_keys[id(value)] = f"const_{len(self.tensors)}"
                self.tensors[key] = value
            return ("tensor", key)
        return ("const", value)

    def output(self, spec):
        kind = spec[0]
        if kind in ("tuple", "list"):
            return (kind, [self.output(s) for s in spec[1]])
        if kind == "dict":
            raise TypeError(f"For 'export', {self.where} returns a dict: return a Tensor or a tuple of them.")
        if kind == "wrap":  # a parallel network's output block: a rank's graph returns its block, as MindSpore's
            return self.output(spec[2][0])  # per-rank MINDIR files do
        return self.source(spec)


_STRATEGY_ATTRS = ("in_strategy", "out_strategy")  # (Primitive.shard's)


def primitive_state(prim: Primitive) -> tuple:
    """(constructor arguments, attributes set after construction) of ``prim``, checked by building a
    new instance from them (what ``load`` does)."""
    op = type(prim).__name__
    if primitive_classes().get(op) is not type(prim):
        raise TypeError(
            f"For 'export', the operator '{op}' ({type(prim).__module__}) is not a registered Primitive "
            f"class that load could build again."
        )
    init_attrs = {k: v for k, v in prim.init_attrs.items() if k != "name"}
    fresh = rebuild_primitive(op, init_attrs, {})
    extra = {k: v for k, v in prim.attrs.items() if k not in fresh.attrs or not _same(fresh.attrs[k], v)}
    return init_attrs, extra


def rebuild_primitive(op: str, init_attrs: dict, extra_attrs: dict) -> Primitive:
    cls = primitive_classes().get(op)
    if cls is None:
        raise RuntimeError(
            f"The graph calls the operator '{op}', which no imported module defines: import the module that "
            f"defines it (a user's operator) before loading."
        )
    try:
        prim = cls(**init_attrs)
    except TypeError as e:
        raise TypeError(f"The operator '{op}' cannot be built again from its attributes {init_attrs}: {e}") from e
    for k, v in extra_attrs.items():
        prim.add_prim_attr(k, v)
    return prim


def _same(a, b) -> bool:
    if isinstance(a, mstype.Type) or isinstance(b, mstype.Type):
        return a is b
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return a is b
