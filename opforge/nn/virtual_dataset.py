"""MindSpore's ``_VirtualDatasetCell`` (``mindspore.nn.wrap.cell_wrapper._VirtualDatasetCell``): the wrapper that
marks a network's inputs as the data-parallel batch in (semi-)auto parallel mode (the model zoo's PanGu-alpha and
OPT wrap their loss networks in it)."""

from __future__ import annotations

from opforge.dispatch import sharding
from opforge.nn.cell import Cell
from opforge.parallel_context import get_auto_parallel_context, operator_parallel

__all__ = ["_VirtualDatasetCell"]


class _VirtualDatasetCell(Cell):
    """``_VirtualDatasetCell(backbone)``: ``cell(*inputs)`` is ``backbone(*inputs)`` with the inputs laid out as
    the data-parallel batch, what MindSpore's ``_VirtualDataset`` operator does in SEMI_AUTO_PARALLEL and
    AUTO_PARALLEL mode:

    * ``full_batch`` False (each rank reads its own part of the batch): the outermost cell's call already took
      each rank's Tensors as its block of the global batch (``sharding.batch_inputs``), so they pass through;
    * ``full_batch`` True (every rank reads the whole batch): each Tensor input of rank >= 1 is split along
      dim 0 over the ranks, each rank keeping its block (``sharding.split_full_batch``; dim 0 must divide by
      the ranks), so the operators below compute on the blocks, as MindSpore's data-parallel slices;
    * other modes (stand-alone, DATA_PARALLEL): the inputs pass through.

    Parameters keep their names (``auto_prefix=False``), and the backbone's ``jit_config_dict`` is taken, as
    MindSpore's (``_get_attr_from_cell``)."""

    def __init__(self, backbone):
        super().__init__(auto_prefix=False)
        if not isinstance(backbone, Cell):
            raise TypeError(
                f"For '_VirtualDatasetCell', the 'backbone' must be a Cell, but got {type(backbone).__name__}."
            )
        self._backbone = backbone
        if backbone.jit_config_dict:
            self.set_jit_config(dict(backbone.jit_config_dict))

    def construct(self, *inputs):
        if operator_parallel() and sharding.active() and get_auto_parallel_context("full_batch"):
            inputs = sharding.split_full_batch(inputs, "_VirtualDatasetCell")
        return self._backbone(*inputs)
