"""MindSpore 2.6's ``mindspore.parallel.function``: ``reshard(tensor, layout)`` (opforge/parallel/shard.py)."""

from opforge.parallel.shard import reshard

__all__ = ["reshard"]
