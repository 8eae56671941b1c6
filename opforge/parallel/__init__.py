"""MindSpore's ``mindspore.parallel`` paths that model-zoo scripts import: ``_utils`` (``_get_device_num``,
``_get_parallel_mode``, ``_get_gradients_mean``, ...) and ``_auto_parallel_context``
(``auto_parallel_context()``), both reading opforge's auto-parallel context (opforge/parallel_context.py) and
communication state. ``ParallelMode``, the strategy-search parameters (``set_algo_parameters``,
opforge/parallel/algo_parameter_config.py), ``shard`` (opforge/parallel/shard.py) and ``Layout``
(opforge/parallel_layout.py) are exported here, as
MindSpore's ``mindspore.parallel`` has them."""

from opforge.parallel.algo_parameter_config import get_algo_parameters, reset_algo_parameters, set_algo_parameters
from opforge.parallel.shard import reshard, shard
from opforge.parallel_context import ParallelMode
from opforge.parallel_layout import Layout

__all__ = [
    "Layout",
    "ParallelMode",
    "set_algo_parameters",
    "get_algo_parameters",
    "reset_algo_parameters",
    "reshard",
    "shard",
]
