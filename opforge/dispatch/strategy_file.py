"""MindSpore's strategy file (``strategy_ckpt_save_file``): the layout of each parameter of a sharded network, the
protobuf message ``ParallelStrategyMap`` of MindSpore's ``node_strategy.proto``, read and written with the
``protobuf`` runtime.

A parameter's entry (``ParallelLayoutItem``) holds its ``ParallelLayouts``: the device matrix (``dev_matrix``,
the last axis fastest), the tensor map (``tensor_map``: per dim, the device-matrix axis splitting it counted
from the right, or -1), ``param_split_shape`` and ``indices_offset`` (uneven splits; empty when even),
``field`` (an embedding's field size; 0) and the optimizer-shard step and size (0: the optimizer does not split
the parameter). ``build_searched_strategy`` reads it back as ``{name: ParallelLayouts}`` for
``merge_sliced_parameter`` and ``load_distributed_checkpoint`` (opforge/nn/checkpoint_distributed.py).
"""

from __future__ import annotations

import os

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

__all__ = ["ParallelStrategyMap", "write_layouts", "read_layouts"]


def _build_schema():
    fdp = descriptor_pb2.FileDescriptorProto(
        name="opforge_mindspore_node_strategy.proto", package="mindspore.straspb", syntax="proto2"
    )
    F = descriptor_pb2.FieldDescriptorProto
    one, many, optional = F.LABEL_REQUIRED, F.LABEL_REPEATED, F.LABEL_OPTIONAL

    def message(name, *fields):
        m = fdp.message_type.add(name=name)
        for number, (field, label, kind) in enumerate(fields, start=1):
            if isinstance(kind, str):
                m.field.add(name=field, number=number, label=label, type=F.TYPE_MESSAGE, type_name=kind)
            else:
                m.field.add(name=field, number=number, label=label, type=kind)

    message("ParallelStrategy", ("dim", many, F.TYPE_UINT32))
    message(
        "ParallelStrategys",
        ("stage", one, F.TYPE_UINT32),
        ("parallel_strategy", many, ".mindspore.straspb.ParallelStrategy"),
    )
    message(
        "ParallelStrategyItem",
        ("node_name", one, F.TYPE_STRING),
        ("parallel_strategys", one, ".mindspore.straspb.ParallelStrategys"),
    )
    message("DevMatrix", ("dim", many, F.TYPE_UINT32))
    message("TensorMap", ("dim", many, F.TYPE_INT32))
    message("ParamSplitShape", ("dim", many, F.TYPE_INT64))
    message("IndicesOffset", ("dim", many, F.TYPE_INT64))
    message(
        "ParallelLayouts",
        ("dev_matrix", many, ".mindspore.straspb.DevMatrix"),
        ("tensor_map", many, ".mindspore.straspb.TensorMap"),
        ("param_split_shape", many, ".mindspore.straspb.ParamSplitShape"),
        ("indices_offset", many, ".mindspore.straspb.IndicesOffset"),
        ("field", one, F.TYPE_INT32),
        # required in newer MindSpore, absent from older files: read as optional, always written
        ("opt_weight_shard_step", optional, F.TYPE_INT32),
        ("opt_weight_shard_size", optional, F.TYPE_INT32),
    )
    message(
        "ParallelLayoutItem",
        ("param_name", one, F.TYPE_STRING),
        ("parallel_layouts", one, ".mindspore.straspb.ParallelLayouts"),
    )
    message(
        "ParallelStrategyMap",
        ("current_stage", one, F.TYPE_UINT32),
        ("parallel_strategy_item", many, ".mindspore.straspb.ParallelStrategyItem"),
        ("parallel_layout_item", many, ".mindspore.straspb.ParallelLayoutItem"),
    )  # fmt: skip
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("mindspore.straspb.ParallelStrategyMap"))


ParallelStrategyMap = _build_schema()


def write_layouts(path: str, layouts: dict, stage: int = 0) -> None:
    """Write ``{parameter name: (device matrix, tensor map)}`` to ``path`` (atomically: ranks writing one shared
    path each replace it whole)."""
    message = ParallelStrategyMap(current_stage=stage)
    for name, (dev_matrix, tensor_map) in layouts.items():
        item = message.parallel_layout_item.add(param_name=name)
        lay = item.parallel_layouts
        lay.dev_matrix.add().dim.extend(int(d) for d in dev_matrix)
        lay.tensor_map.add().dim.extend(int(m) for m in tensor_map)
        lay.param_split_shape.add()
        lay.indices_offset.add()
        lay.field, lay.opt_weight_shard_step, lay.opt_weight_shard_size = 0, 0, 0
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(message.SerializeToString())
    os.replace(tmp, path)


def read_layouts(path, where: str = "build_searched_strategy") -> dict:
    """``{parameter name: ParallelLayouts}`` of a strategy file (MindSpore's or opforge's)."""
    if not isinstance(path, str):
        raise TypeError(f"For '{where}', the 'strategy_filename' must be a str, but got {type(path).__name__}.")
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
    if not message.parallel_layout_item:
        raise ValueError(f"For '{where}', the strategy file {path!r} holds no parameter layout.")
    return {item.param_name: item.parallel_layouts for item in message.parallel_layout_item}
