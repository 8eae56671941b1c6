"""MindSpore's module path ``mindspore.train.serialization``,
which model-zoo scripts import from: the same objects as ``opforge.nn.checkpoint``,
``opforge.nn.checkpoint_convert``, ``opforge.nn.checkpoint_distributed`` and ``opforge.ir``."""

from opforge.ir import export, load
from opforge.nn.checkpoint import load_checkpoint, load_param_into_net, save_checkpoint
from opforge.nn.checkpoint_convert import ckpt_to_safetensors, safetensors_to_ckpt
from opforge.nn.checkpoint_distributed import (
    build_searched_strategy,
    load_distributed_checkpoint,
    merge_sliced_parameter,
)

__all__ = [
    "save_checkpoint", "load_checkpoint", "load_param_into_net", "export", "load",
    "build_searched_strategy", "merge_sliced_parameter", "load_distributed_checkpoint", "ckpt_to_safetensors",
    "safetensors_to_ckpt",
]  # fmt: skip
