"""MindSpore's strategy file (``strategy_ckpt_save_file``): the layout of each parameter of a sharded network, the
protobuf message ``ParallelStrategyMap`` of MindSpore's ``node_strategy.proto``, read and written with the
``protobuf`` runtime.

A parameter's entry (``ParallelLayoutItem``) holds its ``ParallelLayouts``: the device matrix (``dev_matrix``,
the last axis fastest), the tensor map (``tensor_map``: per dim, the device-matrix axis splitting it counted
from the right, or -1), ``param_split_shape`` and ``indices_offset`` (uneven splits; empty when even),
``field`` (an embedding's field size; 0) and the optimizer-shard step and size (0: the optimizer does not split
the parameter). ``build_searched_strategy`` reads it back as ``{name: ParallelLayouts}`` for
``merge_sliced_parameter`` and ``load_distributed_checkpoint`` (opforge/nn/checkpoint_distributed.py).

The ``ParallelStrategyItem`` entries name the pipeline stage the file is of (MindSpore writes one per operator,
with its strategy; opforge one per parameter, with its split counts): a pipeline's rank writes its stage's
parameters, with device matrices over the stage's ranks. ``merge_stages`` joins the stages' files into one, each
layout renamed ``"{stage}-{name}"`` as MindSpore's ``merge_pipeline_strategys`` does.
"""

from __future__ import annotations

import os

from google.protobuf.message import DecodeError

from opforge.utils.protobuf_schema import message_classes

__all__ = ["ParallelStrategyMap", "write_layouts", "read_layouts", "merge_stages"]


def _dims(kind: str) -> list:
    return [("dim", 1, "repeated", kind)]


ParallelStrategyMap = message_classes(
    "opforge_mindspore_node_strategy.proto",
    "mindspore.straspb",
    {
        "ParallelStrategy": _dims("uint32"),
        "ParallelStrategys": [
            ("stage", 1, "required", "uint32"),
            ("parallel_strategy", 2, "repeated", "ParallelStrategy"),
        ],
        "ParallelStrategyItem": [
            ("node_name", 1, "required", "string"),
            ("parallel_strategys", 2, "required", "ParallelStrategys"),
        ],
        "DevMatrix": _dims("uint32"),
        "TensorMap": _dims("int32"),
        "ParamSplitShape": _dims("int64"),
        "IndicesOffset": _dims("int64"),
        "ParallelLayouts": [
            ("dev_matrix", 1, "repeated", "DevMatrix"),
            ("tensor_map", 2, "repeated", "TensorMap"),
            ("param_split_shape", 3, "repeated", "ParamSplitShape"),
            ("indices_offset", 4, "repeated", "IndicesOffset"),
            ("field", 5, "required", "int32"),
            # required in newer MindSpore, absent from older files: read as optional, always written
            ("opt_weight_shard_step", 6, "optional", "int32"),
            ("opt_weight_shard_size", 7, "optional", "int32"),
        ],
        "ParallelLayoutItem": [
            ("param_name", 1, "required", "string"),
            ("parallel_layouts", 2, "required", "ParallelLayouts"),
        ],
        "ParallelStrategyMap": [
            ("current_stage", 1, "required", "uint32"),
            ("parallel_strategy_item", 2, "repeated", "ParallelStrategyItem"),
            ("parallel_layout_item", 3, "repeated", "ParallelLayoutItem"),
        ],
    },
)["ParallelStrategyMap"]


def write_layouts(path: str, layouts: dict, stage: int = 0) -> None:
    """Write ``{parameter name: (device matrix, tensor map)}`` of pipeline stage ``stage`` to ``path``
    (atomically: ranks writing one shared path each replace it whole)."""
    message = ParallelStrategyMap(current_stage=stage)
    for name, (dev_matrix, tensor_map) in layouts.items():
        item = message.parallel_layout_item.add(param_name=name)
        lay = item.parallel_layouts
        lay.dev_matrix.add().dim.extend(int(d) for d in dev_matrix)
        lay.tensor_map.add().dim.extend(int(m) for m in tensor_map)
        lay.param_split_shape.add()
        lay.indices_offset.add()
        lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = 0, 0, 0
        splits = [1 if m == -1 else int(dev_matrix[len(dev_matrix) - 1 - m]) for m in tensor_map]
        strategy = message.parallel_strategy_item.add(node_name=name).parallel_strategys
        strategy.stage = stage
        strategy.parallel_strategy.add().dim.extend(splits)
    _write(path, message)


def _write(path: str, message) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(message.SerializeToString())
    os.replace(tmp, path)


def merge_stages(paths: list, merged_path: str, where: str = "merge_pipeline_strategys") -> None:
    """One strategy file of every stage's (MindSpore's pipeline-merged file): each stage's layouts renamed
    ``"{stage}-{name}"``; a second file of a stage already merged is skipped (the stage's other ranks')."""
    merged, stages = ParallelStrategyMap(current_stage=1), set()
    for path in sorted(paths):
        message = _parse(path, where)
        if not message.parallel_strategy_item or not message.parallel_layout_item:
            raise ValueError(f"For '{where}', the strategy file {path!r} is empty.")
        stage = message.parallel_strategy_item[0].parallel_strategys.stage
        if stage in stages:
            continue
        stages.add(stage)
        for item in message.parallel_layout_item:
            item.param_name = f"{stage}-{item.param_name}"
        merged.parallel_strategy_item.extend(message.parallel_strategy_item)
        merged.parallel_layout_item.extend(message.parallel_layout_item)
    _write(merged_path, merged)


def read_layouts(path, where: str = "build_searched_strategy") -> dict:
    """``{parameter name: ParallelLayouts}`` of a strategy file (MindSpore's or opforge's)."""
    if not isinstance(path, str):
        raise TypeError(f"For '{where}', the 'strategy_filename' must be a str, but got {type(path).__name__}.")
    message = _parse(path, where)
    if not message.parallel_layout_item:
        raise ValueError(f"For '{where}', the strategy file {path!r} holds no parameter layout.")
    return {item.param_name: item.parallel_layouts for item in message.parallel_layout_item}


def _parse(path: str, where: str):
    if not os.path.isfile(path):
        raise ValueError(f"For '{where}', no strategy file at {path!r}.")
    if os.path.getsize(path) == 0:
        raise ValueError(f"For '{where}', the strategy file {path!r} is empty.")
    message = ParallelStrategyMap()
    try:
        with open(path, "rb") as f:
            message.ParseFromString(f.read())
    except DecodeError as e:
        raise ValueError(
            f"For '{where}', {path!r} is not a strategy file (its protobuf cannot be parsed: {e})."
        ) from None
    return message
