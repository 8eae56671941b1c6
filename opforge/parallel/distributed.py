"""MindSpore 2.7's ``DistributedDataParallel`` (``mindspore.parallel.distributed``), PyTorch DDP's shape: a Cell
wrapping a network whose parameters' gradients are all-reduced (averaged) over a group by the backward pass of any
gradient taken through it (``value_and_grad``, ``grad``), in buckets started as they fill, with no reducer in the
training step. The buckets are ``nn.DistributedGradReducer``'s (opforge/nn/grad_reducer.py); the wrapper enlists
it on the tape of the gradient being taken (``enlist_reducer``), which feeds it each gradient as soon as it is
final (``ready``) and hands it the gradients at the end to wait for and average (``finish``).

Eagerly (MindSpore's PyNative mode; MindSpore supports no other); while a trace records, the gradients are
all-reduced by operators the trace replays. ``find_unused_parameters`` and ``static_graph`` are checked and kept
(an unused parameter's gradient is zeros, reduced as the others), ``reducer_mode`` too (opforge has one reducer).
"""

from __future__ import annotations

from contextlib import contextmanager

from opforge.bprop.tape import enlist_reducer
from opforge.communication.management import GlobalComm
from opforge.nn.cell import Cell
from opforge.nn.grad_reducer import DistributedGradReducer

__all__ = ["DistributedDataParallel"]

_WHERE = "DistributedDataParallel"
_REDUCER_MODES = ("CppReducer", "PythonReducer")


def _check_bool(arg: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{_WHERE}', the '{arg}' must be bool, but got {type(value).__name__}.")
    return value


class DistributedDataParallel(Cell):
    """``DistributedDataParallel(module, init_sync=True, process_group=None, bucket_cap_mb=None,
    find_unused_parameters=False, average_in_collective=False, static_graph=False, reducer_mode="CppReducer")``:
    ``module`` whose trainable parameters' gradients are averaged over ``process_group`` (the world by default)
    by the backward pass; ``init_sync`` broadcasts its parameters from the group's first rank now, so every rank
    starts equal; ``bucket_cap_mb`` (25 by default) sizes the buckets. ``average_in_collective`` chooses whether
    the mean divides before or after the sum (the same value here: before). Parameters keep their names."""

    def __init__(
        self,
        module,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        average_in_collective=False,
        static_graph=False,
        reducer_mode="CppReducer",
    ):
        super().__init__(auto_prefix=False)
        if not isinstance(module, Cell):
            raise TypeError(f"For '{_WHERE}', the 'module' must be a Cell, but got {type(module).__name__}.")
        for arg, value in (
            ("init_sync", init_sync),
            ("find_unused_parameters", find_unused_parameters),
            ("average_in_collective", average_in_collective),
            ("static_graph", static_graph),
        ):
            _check_bool(arg, value)
        if process_group is not None and not isinstance(process_group, str):
            raise TypeError(f"For '{_WHERE}', the 'process_group' must be str, but got {type(process_group).__name__}.")
        if reducer_mode not in _REDUCER_MODES:
            raise ValueError(
                f"For '{_WHERE}', the 'reducer_mode' must be one of {_REDUCER_MODES}, but got {reducer_mode!r}."
            )
        self.module = module
        self.find_unused_parameters, self.static_graph = find_unused_parameters, static_graph
        self.average_in_collective, self.reducer_mode = average_in_collective, reducer_mode
        group = process_group or GlobalComm.WORLD_COMM_GROUP
        reducer = DistributedGradReducer(module.trainable_params(), True, None, 1, group, bucket_cap_mb)
        if init_sync:
            reducer.broadcast_parameters()
        object.__setattr__(self, "_reducer", reducer)  # (not a sub-cell: its parameters are the module's)
        object.__setattr__(self, "_syncing", True)

    def construct(self, *args, **kwargs):
        if self._syncing:
            enlist_reducer(self._reducer)
        return self.module(*args, **kwargs)

    @contextmanager
    def no_sync(self):
        """Gradients taken inside are this rank's own (not reduced): for accumulating over several steps before
        one that reduces."""
        object.__setattr__(self, "_syncing", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_syncing", True)

    def zero_grad(self) -> None:
        """MindSpore's: clear the gradient buffers. opforge's gradients are returned by ``value_and_grad``, not
        kept in buffers between steps: nothing to clear."""
