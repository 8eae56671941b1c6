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

import json
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


def write_layouts(path: str, layouts: dict, stage: int = 0, shapes: dict | None = None) -> None:
    """Write ``{parameter name: (device matrix, tensor map)}`` of pipeline stage ``stage`` to ``path``
    (atomically: ranks writing one shared path each replace it whole); ``shapes`` (``{name: whole shape}``) goes
    into a JSON file."""
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
    _write(path, message, shapes or {})


def is_json(path: str) -> bool:
    """Whether ``path`` names a JSON strategy file (MindSpore's rule: its name ends with ``.json``)."""
    return str(path).endswith(".json")


def _write(path: str, message, shapes: dict, as_json: bool | None = None) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    as_json = is_json(path) if as_json is None else as_json
    content = json.dumps(_to_json(message, shapes)).encode() if as_json else message.SerializeToString()
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(content)
    os.replace(tmp, path)


def _to_json(message, shapes: dict) -> dict:
    strategies = {
        item.node_name: {
            "stage": item.parallel_strategys.stage,
            "parallel_strategy": [list(s.dim) for s in item.parallel_strategys.parallel_strategy],
        }
        for item in message.parallel_strategy_item
    }
    layouts = {}
    for item in message.parallel_layout_item:
        lay = item.parallel_layouts
        entry = {"dev_matrix": list(lay.dev_matrix[0].dim), "tensor_map": list(lay.tensor_map[0].dim)}
        if item.param_name in shapes:
            entry["tensor_shape"] = [int(n) for n in shapes[item.param_name]]
        entry.update(
            field=lay.field,
            opt_weight_shard_step=lay.opt_weight_shard_step,
            opt_weight_shard_size=lay.opt_weight_shard_size,
        )
        split = list(lay.param_split_shape[0].dim) if lay.param_split_shape else []
        if split:  # an uneven split's blocks: MindSpore writes the two lists only then
            entry["param_split_shape"], entry["indices_offset"] = split, list(lay.indices_offset[0].dim)
        layouts[item.param_name] = entry
    return {
        "current_stage": message.current_stage,
        "parallel_strategy_item": strategies,
        "parallel_layout_item": layouts,
    }


def _from_json(content: dict) -> tuple:
    """The message and ``{name: tensor_shape}`` of a JSON strategy file's content (KeyError, TypeError or
    ValueError where it does not have MindSpore's form)."""
    message, shapes = ParallelStrategyMap(current_stage=int(content.get("current_stage", 0))), {}
    for name, entry in content.get("parallel_strategy_item", {}).items():
        strategys = message.parallel_strategy_item.add(node_name=name).parallel_strategys
        strategys.stage = int(entry["stage"])
        for dims in entry["parallel_strategy"]:
            strategys.parallel_strategy.add().dim.extend(int(d) for d in dims)
    for name, entry in content.get("parallel_layout_item", {}).items():
        lay = message.parallel_layout_item.add(param_name=name).parallel_layouts
        lay.dev_matrix.add().dim.extend(int(d) for d in entry["dev_matrix"])
        lay.tensor_map.add().dim.extend(int(m) for m in entry["tensor_map"])
        lay.param_split_shape.add().dim.extend(int(n) for n in entry.get("param_split_shape", []))
        lay.indices_offset.add().dim.extend(int(n) for n in entry.get("indices_offset", []))
        lay.field = int(entry.get("field", 0))
        lay.opt_weight_shard_step = int(entry.get("opt_weight_shard_step", 0))
        lay.opt_weight_shard_size = int(entry.get("opt_weight_shard_size", 0))
        if "tensor_shape" in entry:
            shapes[name] = [int(n) for n in entry["tensor_shape"]]
    return message, shapes


def merge_stages(paths: list, merged_path: str, where: str = "merge_pipeline_strategys") -> None:
    """One strategy file of every stage's (MindSpore's pipeline-merged file): each stage's layouts renamed
    ``"{stage}-{name}"``; a second file of a stage already merged is skipped (the stage's other ranks')."""
    merged, merged_shapes, stages = ParallelStrategyMap(current_stage=1), {}, set()
    for path in sorted(paths):
        message, shapes = _load(path, where)
        if not message.parallel_strategy_item or not message.parallel_layout_item:
            raise ValueError(f"For '{where}', the strategy file {path!r} is empty.")
        stage = message.parallel_strategy_item[0].parallel_strategys.stage
        if stage in stages:
            continue
        stages.add(stage)
        for item in message.parallel_layout_item:
            if item.param_name in shapes:
                merged_shapes[f"{stage}-{item.param_name}"] = shapes[item.param_name]
            item.param_name = f"{stage}-{item.param_name}"
        merged.parallel_strategy_item.extend(message.parallel_strategy_item)
        merged.parallel_layout_item.extend(message.parallel_layout_item)
    # the sources' form, whatever the merged file's name (MindSpore's)
    _write(merged_path, merged, merged_shapes, as_json=is_json(paths[0]))


def read_layouts(path, where: str = "build_searched_strategy") -> dict:
    """``{parameter name: ParallelLayouts}`` of a strategy file (MindSpore's or opforge's)."""
    if not isinstance(path, str):
        raise TypeError(f"For '{where}', the 'strategy_filename' must be a str, but got {type(path).__name__}.")
    message, _ = _load(path, where)
    if not message.parallel_layout_item:
        raise ValueError(f"For '{where}', the strategy file {path!r} holds no parameter layout.")
    return {item.param_name: item.parallel_layouts for item in message.parallel_layout_item}


def _load(path: str, where: str) -> tuple:
    """The message of the strategy file ``path`` and the whole shapes it names (a JSON file's). JSON by its name
    or its first byte: MindSpore merges JSON files into JSON whatever the merged file's name (a protobuf
    ParallelStrategyMap cannot start with "{", a group tag)."""
    if not os.path.isfile(path):
        raise ValueError(f"For '{where}', no strategy file at {path!r}.")
    with open(path, "rb") as f:
        content = f.read()
    if not content:
        raise ValueError(f"For '{where}', the strategy file {path!r} is empty.")
    if not (is_json(path) or content.lstrip().startswith(b"{")):
        return _parse_protobuf(content, path, where), {}
    try:
        return _from_json(json.loads(content))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        detail = f"it lacks the key {e}" if isinstance(e, KeyError) else str(e)
        raise ValueError(
            f"For '{where}', {path!r} is not a JSON strategy file of MindSpore's form ({detail})."
        ) from None


def _parse_protobuf(content: bytes, path: str, where: str):
    message = ParallelStrategyMap()
    try:
        message.ParseFromString(content)
    except DecodeError as e:
        raise ValueError(
            f"For '{where}', {path!r} is not a strategy file (its protobuf cannot be parsed: {e})."
        ) from None
    return message
