"""MindSpore's ``mindspore.ops.operations.comm_ops`` path (``from mindspore.ops.operations.comm_ops import
ReduceOp``): the collective operators and ``ReduceOp`` (opforge/primitives/comm_ops.py)."""

from opforge.primitives.comm_ops import *  # noqa: F403
from opforge.primitives.comm_ops import __all__  # noqa: F401
