"""MindSpore's module path ``mindspore.train.serialization``,
which model-zoo scripts import from: the same objects as ``opforge.nn.checkpoint`` and ``opforge.ir``."""

from opforge.ir import export, load
from opforge.nn.checkpoint import load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["save_checkpoint", "load_checkpoint", "load_param_into_net", "export", "load"]
