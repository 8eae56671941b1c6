"""MindSpore's parameter layout dictionary, what ``Model.infer_predict_layout`` and ``Model.infer_train_layout``
return in SEMI_AUTO_PARALLEL / AUTO_PARALLEL mode, and the layout step that fills it.

MindSpore compiles the network for the parallel mode and reads each parameter's layout from the compiled graph:
``{parameter name: (device_matrix, tensor_map, slice_shape, field_size, uniform_split, opt_shard_group)}``, the
lists of ints of the layout (the device matrix, the last axis fastest; per dim of the parameter, the
device-matrix axis splitting it counted from the right, or -1; this rank's block shape), the embedding field
size (0), whether the split is even (True) and the parallel optimizer's group ("" for a parameter it does not
split). ``load_distributed_checkpoint(network, files, predict_strategy)`` takes the dictionary.

opforge lays a sharded network's parameters out at its first call (``Cell.__call__`` under the sharding
interpreter, opforge/dispatch/sharding.py): each Parameter is split in place the first time an operator's
strategy wants it split, and the AUTO_PARALLEL search splits the ones it chose before that. The layout step
(``lay_out``) is that first call, run up to its first backward operator: a prediction network runs whole; a
training step runs its forward pass (to the loss) and stops there, so no gradient is computed and no optimizer
update runs. Whatever the forward pass wrote into Parameters (BatchNorm's moving statistics in training mode,
``Assign``) gets its value back, so the step leaves the values as they were; the parameters stay laid out, and
the next call runs on them. The entries come from ``sharding.mindspore_layout`` (the device matrix and tensor
map the strategy files hold, size-1 device-matrix axes dropped) and the layout's block shape. An optimizer's
state is laid out as the parameter it was cloned from (``ParamInfo.clone``), as MindSpore's, at the end of the
step; the parallel optimizer splits the states of whole parameters at their first update, after the layout step:
their entries show them whole. opforge's parallel optimizer splits optimizer states, never the
parameters, so every ``opt_shard_group`` is "".
"""

from __future__ import annotations

from opforge.bprop.tape import differentiated_operator
from opforge.dispatch import sharding
from opforge.dispatch.keep_writes import KeepWrites
from opforge.tensor import Parameter

__all__ = ["parameter_layout", "parameter_layout_dict", "lay_out"]


def parameter_layout(param: Parameter) -> tuple:
    """MindSpore's layout entry of ``param`` as it is laid out now: ``(device_matrix, tensor_map, slice_shape,
    field_size, uniform_split, opt_shard_group)``."""
    device_matrix, tensor_map = sharding.mindspore_layout(param)
    slice_shape = sharding.layout_of(param).local_shape(tuple(param._meta[1]))
    return list(device_matrix), list(tensor_map), [int(s) for s in slice_shape], 0, True, ""


def parameter_layout_dict(cell) -> dict:
    """``{parameter name: parameter_layout(parameter)}`` for every parameter of ``cell``."""
    return {p.name: parameter_layout(p) for p in cell.get_parameters()}


class _BackwardReached(BaseException):
    """The layout step's end: its first backward operator. A BaseException, so that no handler of errors on the
    way (``except Exception``) takes it for one."""


class _LayoutStep(KeepWrites):
    """Below the sharding interpreter during the layout step: keeps the value each written Parameter had (the step
    gives it back) and ends the step at the first call made by a bprop."""

    def process_primitive(self, prim, args: tuple):
        if differentiated_operator() is not None:
            raise _BackwardReached
        return super().process_primitive(prim, args)


def lay_out(cell, args: tuple) -> None:
    """The layout step of ``cell``'s call on ``args`` (the module's docstring): its parameters are laid out as
    its first call lays them out, their values unchanged. Run in a parallel mode. Nothing to do once a first call
    has run whole (``Cell.__call__`` marks the cell): its parameters keep the layouts it gave them, whatever the
    inputs of later calls."""
    if cell.__dict__.get("_sharded_laid_out"):
        return
    step = _LayoutStep()
    try:
        with step:
            cell(*args)
    except _BackwardReached:
        pass
    finally:
        step.restore()
    sharding.lay_out_clones(cell.get_parameters())
