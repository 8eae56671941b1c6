"""opforge's MINDIR files: a recorded ``Graph`` and its weights in one file that ``load`` reads back.

The file is a NumPy ``.npz`` archive read without pickle: ``graph`` holds the graph as JSON (nodes,
operator attributes, argument sources), and every Tensor (Parameters, constants) is an entry of raw
bytes whose dtype and shape the JSON gives. It is opforge's own container, not MindSpore's MindIR
protobuf: MindSpore does not read it (ONNX is the format both frameworks and others read).
"""

from __future__ import annotations

import json
import math

import numpy as np

from opforge import dtype as mstype
from opforge.ir.graph import Graph, Node, rebuild_primitive
from opforge.tensor import Parameter, Tensor

__all__ = ["save", "read"]

FORMAT = "opforge-mindir"
VERSION = 1


def save(graph: Graph, path: str) -> None:
    arrays: dict = {}
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "inputs": [[list(shape), dt.name] for shape, dt in graph.inputs],
        "nodes": [_node_doc(n, arrays) for n in graph.nodes],
        "outputs": _encode(graph.outputs, arrays),
        "params": {name: _tensor_ref(p, arrays, f"param:{name}", p.requires_grad) for name, p in graph.params.items()},
        "tensors": {key: _tensor_ref(t, arrays, f"tensor:{key}") for key, t in graph.tensors.items()},
        "metas": {str(slot): [list(shape), dt.name] for slot, (shape, dt) in graph.metas.items()},
    }
    text = json.dumps(doc, allow_nan=True)
    with open(path, "wb") as f:
        np.savez(f, graph=np.frombuffer(text.encode(), np.uint8), **arrays)


def read(path: str) -> Graph:
    try:
        archive = np.load(path, allow_pickle=False)
        doc = json.loads(bytes(archive["graph"]).decode())
    except (OSError, ValueError, KeyError) as e:
        raise RuntimeError(f"For 'load', '{path}' is not an opforge MINDIR file: {e}") from e
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise RuntimeError(
            f"For 'load', '{path}' is not an opforge MINDIR file of version {VERSION} (MindSpore's MindIR protobuf "
            f"is not read: export ONNX from MindSpore to move a network here)."
        )
    with archive:
        arrays = {k: archive[k] for k in archive.files if k != "graph"}
    params = {name: _parameter(name, ref, arrays) for name, ref in doc["params"].items()}
    tensors = {key: Tensor(_array(ref, arrays)) for key, ref in doc["tensors"].items()}
    nodes = [_node(d, arrays) for d in doc["nodes"]]
    inputs = [(tuple(shape), _dtype(name)) for shape, name in doc["inputs"]]
    metas = {int(slot): (tuple(shape), _dtype(name)) for slot, (shape, name) in doc["metas"].items()}
    return Graph(inputs, nodes, _decode(doc["outputs"], arrays), params, tensors, metas, doc["name"])


# -- nodes -------------------------------------------------------------------------------------


def _node_doc(node: Node, arrays: dict) -> dict:
    where = f"operator '{node.op}'"
    return {
        "op": node.op,
        "init_attrs": {k: _encode(v, arrays, where) for k, v in node.init_attrs.items()},
        "extra_attrs": {k: _encode(v, arrays, where) for k, v in node.extra_attrs.items()},
        "args": [_encode(a, arrays, where) for a in node.args],
        "outputs": node.outputs,
    }


def _node(doc: dict, arrays: dict) -> Node:
    init_attrs = {k: _decode(v, arrays) for k, v in doc["init_attrs"].items()}
    extra = {k: _decode(v, arrays) for k, v in doc["extra_attrs"].items()}
    outputs = doc["outputs"]
    outputs = outputs if outputs is None or isinstance(outputs, int) else list(outputs)
    prim = rebuild_primitive(doc["op"], init_attrs, extra)
    args = [_decode(a, arrays) for a in doc["args"]]
    return Node(doc["op"], init_attrs, extra, args, outputs, prim)


# -- values: JSON with tags for what JSON lacks (tuples, dtypes, arrays, non-finite floats) --------


def _encode(value, arrays: dict, where: str = "the graph"):
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, arrays, where) for v in value]}
    if isinstance(value, list):
        return [_encode(v, arrays, where) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: _encode(v, arrays, where) for k, v in value.items()}}
    if isinstance(value, mstype.Type):
        return {"dtype": value.name}
    if isinstance(value, np.generic):
        return _encode(value.item(), arrays, where)
    if isinstance(value, np.ndarray):
        return {"array": _array_ref(value, arrays, f"array:{len(arrays)}")}
    raise TypeError(
        f"For 'export', {where} holds a {type(value).__name__} ({value!r:.60}), which a MINDIR file cannot "
        f"store (it stores numbers, strings, tuples, lists, dtypes, arrays and Tensors)."
    )


def _decode(value, arrays: dict):
    if isinstance(value, list):
        return [_decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    ((tag, body),) = value.items()
    if tag == "tuple":
        return tuple(_decode(v, arrays) for v in body)
    if tag == "dict":
        return {k: _decode(v, arrays) for k, v in body.items()}
    if tag == "float":
        return float(body)
    if tag == "dtype":
        return _dtype(body)
    if tag == "array":
        return _array(body, arrays)
    raise RuntimeError(f"For 'load', the graph holds a value tagged '{tag}', which this opforge does not read.")


def _tensor_ref(t: Tensor, arrays: dict, key: str, requires_grad: bool | None = None) -> dict:
    ref = _array_ref(t.asnumpy(), arrays, key)
    ref["mstype"] = t.dtype.name
    if requires_grad is not None:
        ref["requires_grad"] = bool(requires_grad)
    return ref


def _array_ref(a: np.ndarray, arrays: dict, key: str) -> dict:
    # Raw bytes: the archive then holds every dtype (bfloat16 and float8 too) without pickle.
    arrays[key] = np.frombuffer(np.ascontiguousarray(a).tobytes(), np.uint8)
    return {"key": key, "dtype": str(a.dtype), "shape": list(a.shape)}


def _array(ref: dict, arrays: dict) -> np.ndarray:
    np_dtype = _dtype(ref["mstype"]).np_dtype if "mstype" in ref else np.dtype(ref["dtype"])
    return np.frombuffer(arrays[ref["key"]].tobytes(), np_dtype).reshape(ref["shape"])


def _parameter(name: str, ref: dict, arrays: dict) -> Parameter:
    return Parameter(Tensor(_array(ref, arrays)), name=name, requires_grad=ref.get("requires_grad", True))


def _dtype(name: str) -> mstype.Type:
    try:
        return mstype.to_dtype(name)
    except TypeError:
        raise RuntimeError(f"For 'load', the graph names the dtype '{name}', which opforge does not know.") from None
