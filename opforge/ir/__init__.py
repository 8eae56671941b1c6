"""A network as a file: MindSpore's ``export`` (MINDIR and ONNX files) and ``load`` (MINDIR).

``export(net, *inputs, file_name, file_format)`` records the network's primitive calls on the inputs
(``opforge.ir.graph``) and writes them: MINDIR, opforge's own file of the graph and its weights
(``opforge.ir.mindir``), or ONNX through each operator's ONNX rule (``opforge.ir.onnx_rules``).
``load`` reads a MINDIR file back as a graph that ``nn.GraphCell`` runs.
"""

from __future__ import annotations

import os

from opforge.ir import mindir, onnx_rules
from opforge.ir.graph import Graph, record
from opforge.ir.onnx import ExportError, to_onnx

__all__ = ["export", "load", "Graph", "ExportError", "to_onnx", "onnx_rules"]

_SUFFIX = {"MINDIR": ".mindir", "ONNX": ".onnx", "AIR": ".air"}


def export(net, *inputs, file_name, file_format, **kwargs) -> None:
    """MindSpore's ``export``: record ``net`` (a Cell or a function of Tensors) on ``inputs`` and write
    it to ``file_name`` (the format's suffix added when it has none; its folder made when missing).
    ``file_format``: "MINDIR" (read back by ``load``) or "ONNX" (opset 18; needs the ``onnx`` package). Record a
    network for inference after ``set_train(False)``: the graph is what the network did on these inputs."""
    fmt = _format(file_format)
    _refuse_options(kwargs)
    if not isinstance(file_name, str) or not file_name:
        raise TypeError(f"For 'export', 'file_name' must be a non-empty str, but got {file_name!r}.")
    root, ext = os.path.splitext(file_name)
    path = file_name if ext.lower() == _SUFFIX[fmt] else file_name + _SUFFIX[fmt]
    graph = record(net, *inputs)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)  # (MindSpore's export makes the folder)
    if fmt == "MINDIR":
        mindir.save(graph, path)
    else:
        with open(path, "wb") as f:
            f.write(to_onnx(graph).SerializeToString())


def load(file_name, **kwargs) -> Graph:
    """MindSpore's ``load``: the graph in an opforge MINDIR file, to run with ``nn.GraphCell``."""
    _refuse_options(kwargs, what="load", key="dec_key")
    if not isinstance(file_name, str):
        raise ValueError(f"For 'load', 'file_name' must be a str, but got {type(file_name).__name__}.")
    if not os.path.isfile(file_name):
        raise ValueError(f"For 'load', the MINDIR file '{file_name}' does not exist.")
    return mindir.read(file_name)


def _format(file_format) -> str:
    fmt = file_format.upper() if isinstance(file_format, str) else file_format
    if fmt == "AIR":
        raise ValueError("For 'export', the AIR format is Ascend's: opforge writes 'MINDIR' and 'ONNX'.")
    if fmt not in ("MINDIR", "ONNX"):
        raise ValueError(f"For 'export', 'file_format' must be 'MINDIR' or 'ONNX', but got {file_format!r}.")
    return fmt


def _refuse_options(kwargs: dict, what: str = "export", key: str = "enc_key") -> None:
    if kwargs.get(key) is not None:
        raise NotImplementedError(f"For '{what}', opforge does not encrypt model files: leave '{key}' unset.")
    unknown = set(kwargs) - {"enc_key", "enc_mode", "dec_key", "dec_mode", "quant_mode", "mean", "std_dev"}
    if unknown:
        raise TypeError(f"For '{what}', unexpected keyword argument(s) {sorted(unknown)}.")
