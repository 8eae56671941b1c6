"""A recorded ``Graph`` as an ONNX model: each node through its operator's rule (``onnx_rules``).

A rule gets a ``Builder`` and the node's arguments (value names for Tensors, the values themselves for
Python arguments) and returns the ONNX value name of each output; the builder adds ONNX nodes,
constants (initializers) and fresh names. Parameters become initializers named as the Parameters.
Needs the ``onnx`` package (``pip install "opforge[export]"``).
"""

from __future__ import annotations

import numpy as np

from opforge.ir.graph import Graph
from opforge.tensor import Tensor

try:
    import onnx
    from onnx import helper, numpy_helper
except ImportError:  # the export extra is not installed: export(file_format="ONNX") says so
    onnx = None

__all__ = ["OPSET", "Builder", "ExportError", "register", "rules", "to_onnx"]

OPSET = 18  # Reduce* take their axes as an input; LayerNormalization exists (17)

_RULES: dict = {}


class ExportError(TypeError):
    """A graph that ONNX cannot express: an operator without a rule, or a case its rule refuses."""


def register(*ops: str):
    """``@register("ReLU")``: the ONNX rule of the operators named (their Primitive class names)."""

    def deco(fn):
        for op in ops:
            _RULES[op] = fn
        return fn

    return deco


def rules() -> dict:
    """Operator name -> its ONNX rule."""
    return dict(_RULES)


class Builder:
    """What a rule builds with. ``node(op_type, inputs, n_out=1, **attrs)`` adds an ONNX node and
    returns its output name (a list of them when ``n_out`` > 1); ``const(array)`` adds a constant;
    ``meta(name)`` gives a value's (shape, dtype) as recorded; ``prim`` is the node's primitive; ``needed``
    says which of its outputs the graph reads (a rule may give None for the others)."""

    def __init__(self):
        self.nodes: list = []
        self.initializers: list = []
        self.metas: dict = {}  # value name -> (shape, mstype)
        self.prim = None
        self.out: list = []  # the current node's outputs' (shape, dtype), as recorded
        self.needed: list = []  # per output of the current node: whether the graph reads it
        self.taken: set = set()  # the graph's own names (inputs, weights, constants): fresh names avoid them
        self._count = 0

    def fresh(self, hint: str = "t") -> str:
        while True:
            self._count += 1
            name = f"{hint}_{self._count}"
            if name not in self.taken:
                return name

    def node(self, op_type: str, inputs: list, n_out: int = 1, **attrs):
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=self.fresh(op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, array, hint: str = "const") -> str:
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values, hint: str = "ints") -> str:
        """A constant int64 vector, or a scalar for a single int."""
        if isinstance(values, (int, np.integer)):
            return self.const(np.asarray(values, np.int64), hint)
        return self.const(np.asarray(list(values), np.int64).reshape(-1), hint)

    def meta(self, name: str) -> tuple:
        return self.metas[name]

    def operand(self, value, like: str) -> str:
        """A value name for ``value``: itself when it is one, else a constant of ``like``'s dtype (a
        Python number beside a Tensor, as the operator promotes it)."""
        if isinstance(value, str):
            return value
        return self.const(np.asarray(value, self.meta(like)[1].np_dtype))

    def elem(self, dtype) -> int:
        """ONNX's element type for an opforge dtype."""
        return _elem(dtype)

    def refuse(self, why: str):
        raise ExportError(f"For 'export' to ONNX, the operator '{type(self.prim).__name__}': {why}")


def to_onnx(graph: Graph, opset: int = OPSET):
    """The ONNX ModelProto of ``graph``; ExportError names an operator ONNX cannot take."""
    if onnx is None:
        raise ImportError("export(file_format='ONNX') needs the 'onnx' package: pip install 'opforge[export]'.")
    live, needed = _live(graph)
    missing = sorted({n.op for n in live} - _RULES.keys())
    b = Builder()
    names: dict = {}  # graph source -> ONNX value name
    inputs = []
    for i, (shape, dt) in enumerate(graph.inputs):
        names[("input", i)] = f"input_{i}"
        b.metas[f"input_{i}"] = (tuple(shape), dt)
        inputs.append(helper.make_tensor_value_info(f"input_{i}", _elem(dt), list(shape)))
    for pname, p in graph.params.items():
        _constant(b, names, ("param", pname), pname, p)
    for key, t in graph.tensors.items():
        _constant(b, names, ("tensor", key), key, t)
    for node in live:  # in call order: a refusal of an earlier operator is the one reported
        if node.op in missing:
            raise ExportError(
                f"For 'export' to ONNX, opforge has no ONNX rule for the operator(s) {missing} that {graph.name} "
                f"calls; MINDIR files take every operator (file_format='MINDIR')."
            )
        _convert(b, names, graph, node, needed)
    outputs = []
    for k, spec in enumerate(_flat(graph.outputs)):
        source = names.get(tuple(spec) if isinstance(spec, list) else spec)
        if source is None:
            raise ExportError(f"For 'export' to ONNX, output {k} of {graph.name} is not a Tensor the graph computes.")
        out = f"output_{k}"
        b.nodes.append(helper.make_node("Identity", [source], [out]))
        shape, dt = b.meta(source)
        outputs.append(helper.make_tensor_value_info(out, _elem(dt), list(shape)))
    used = {name for n in b.nodes for name in n.input}  # weights only the left-out nodes read are not kept
    initializers = [t for t in b.initializers if t.name in used]
    body = helper.make_graph(b.nodes, graph.name, inputs, outputs, initializers)
    model = helper.make_model(body, opset_imports=[helper.make_opsetid("", opset)], producer_name="opforge")
    model.ir_version = min(model.ir_version, 10)  # what onnxruntime releases read
    onnx.checker.check_model(model)
    return model


def _live(graph: Graph) -> tuple:
    """(the nodes the graph's outputs read, in call order; the slots read). An ONNX graph has no state: a
    node whose results no output reads (the update of a training BatchNorm's moving statistics, an Assign
    to a weight) is left out, as MindSpore's exporter leaves out the nodes nothing refers to. (A weight read
    after an in-place write is read from the write's output, so the write stays and needs its rule.)"""
    needed = {s[1] for s in _flat(graph.outputs) if s[0] == "value"}
    live = []
    for node in reversed(graph.nodes):
        slots = [node.outputs] if isinstance(node.outputs, int) else list(node.outputs or [])
        if any(slot in needed for slot in slots if slot is not None):
            live.append(node)
            needed.update(s[1] for s in _sources(node.args) if s[0] == "value")
    return live[::-1], needed


def _sources(args) -> list:
    out = []
    for a in args:
        out.extend(_sources(a[2]) if a[0] == "seq" else [tuple(a)])
    return out


def _constant(b: Builder, names: dict, source, name: str, t: Tensor) -> None:
    b.initializers.append(numpy_helper.from_array(t.asnumpy(), name))
    b.metas[name] = (tuple(t.shape), t.dtype)
    b.taken.add(name)
    names[source] = name


def _convert(b: Builder, names: dict, graph: Graph, node, needed: set) -> None:
    b.prim = node.prim
    slots = [node.outputs] if isinstance(node.outputs, int) else list(node.outputs or [])
    b.out = [graph.metas.get(slot) for slot in slots]
    b.needed = [slot is not None and slot in needed for slot in slots]
    args = [_argument(names, a) for a in node.args]
    produced = _RULES[node.op](b, *args)
    produced = [produced] if isinstance(produced, str) else list(produced)
    for slot, name in zip(slots, produced):
        if slot is None or name is None:
            continue
        names[("value", slot)] = name
        b.metas[name] = graph.metas[slot]


def _argument(names: dict, source):
    kind = source[0]
    if kind == "seq":
        return [_argument(names, s) for s in source[2]]
    if kind == "const":
        return source[1]
    name = names.get(tuple(source))
    if name is None:
        raise ExportError(f"For 'export' to ONNX, a value the graph reads ({source}) is an output ONNX does not give.")
    return name


def _flat(spec) -> list:
    if spec[0] in ("tuple", "list"):
        return [s for item in spec[1] for s in _flat(item)]
    return [spec]


def _elem(dt) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dt.np_dtype))
