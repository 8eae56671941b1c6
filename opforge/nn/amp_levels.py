"""The cell rewrites behind MindSpore's amp levels (``opforge.amp``): its white and black lists, O1's casts
around the white-list cells and operators, O2's float32 islands for the black-list cells.

* **O1** (``white_list_rewrite``): each white-list cell runs in the low dtype (``to_float``) and its float
  outputs come back in float32; each white-list operator (a Primitive held by a cell of the user's) has its
  float inputs cast to the low dtype and its float outputs back to float32. Everything else runs in float32.
  This is what MindSpore's rewrite of the network inserts (Cast nodes before and after those nodes); the
  pairs of casts it then removes (float32 straight back to float16) change no value.
* **O2** (``black_list_rewrite``): the whole network in the low dtype, each black-list cell (BatchNorm,
  LayerNorm) in float32 with its outputs cast back to the low dtype (``_OutputTo16``).

Cells are matched as MindSpore matches them: a white-list cell or operator by its exact class, a black-list
cell by ``isinstance``. O1 looks inside the user's cells and opforge's containers (``SequentialCell``,
``CellList``, ``CellDict``) and wrappers, never inside opforge's own layers (MindSpore's rewrite keeps its
``nn`` layers whole), and leaves alone a cell the user set ``to_float(dtype)`` on.
"""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.nn.cell import Cell, CellDict, CellList, SequentialCell
from opforge.nn.layers import Dense
from opforge.nn.layers_conv import Conv1d, Conv2d, Conv2dTranspose, Conv3d
from opforge.nn.layers_conv_transpose import Conv1dTranspose, Conv3dTranspose
from opforge.nn.mixed_precision import mixed_precision_cast
from opforge.nn.normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm
from opforge.nn.rnn import GRUCell, LSTMCell, RNNCell
from opforge.nn.wrap import WithEvalCell, WithLossCell
from opforge.ops.conv_transpose import Conv3DTranspose
from opforge.ops.frontend_conv import Conv3D
from opforge.primitives.conv_ops import Conv2D, Conv2DBackpropInput
from opforge.primitives.math_ops import BatchMatMul, MatMul
from opforge.primitives.nn_ops import ReLU

__all__ = [
    "AMP_WHITE_LIST",
    "AMP_BLACK_LIST",
    "white_list_rewrite",
    "black_list_rewrite",
    "reset_traces",
    "OutputTo16",
    "OutputTo32",
]

# MindSpore's lists, less what opforge has not got (ops.PReLU, ops.Ger); ops.Conv2DTranspose is
# ops.Conv2DBackpropInput here.
AMP_WHITE_LIST = [
    Conv1d, Conv2d, Conv3d, Conv1dTranspose, Conv2dTranspose, Conv3dTranspose, Dense, LSTMCell, RNNCell, GRUCell,
    Conv2D, Conv3D, Conv2DBackpropInput, Conv3DTranspose, MatMul, BatchMatMul, ReLU,
]  # fmt: skip
AMP_BLACK_LIST = [BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm]


class OutputTo16(Cell):
    """A black-list cell kept in float32 inside a low-precision network: its float outputs cast back to
    ``dtype`` (MindSpore's ``_OutputTo16``). It runs in float32 itself, as the cell it wraps."""

    def __init__(self, backbone: Cell, dtype=mstype.float16):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        self.dtype = dtype
        object.__setattr__(self, "training", backbone.training)
        self.to_float(mstype.float32)

    def construct(self, *args, **kwargs):
        return mixed_precision_cast(self.dtype, self._backbone(*args, **kwargs))


class OutputTo32(Cell):
    """A network (or an O1 white-list cell) whose float outputs are cast back to float32 (MindSpore's
    ``_OutputTo32``)."""

    def __init__(self, backbone: Cell):
        super().__init__(auto_prefix=False)
        self._backbone = backbone
        object.__setattr__(self, "training", backbone.training)

    def construct(self, *args, **kwargs):
        return mixed_precision_cast(mstype.float32, self._backbone(*args, **kwargs))


class _WhiteListOperator:
    """An O1 white-list operator: its float inputs cast to ``dtype``, its float outputs back to float32 (the
    Casts MindSpore inserts before and after the node). Its attributes are the operator's."""

    def __init__(self, op, dtype):
        object.__setattr__(self, "_op", op)
        object.__setattr__(self, "_dtype", dtype)

    def __call__(self, *args, **kwargs):
        args = mixed_precision_cast(self._dtype, args)
        kwargs = mixed_precision_cast(self._dtype, kwargs)
        return mixed_precision_cast(mstype.float32, self._op(*args, **kwargs))

    def __getattr__(self, name):
        op = self.__dict__.get("_op")  # (absent while copy or pickle rebuilds the wrapper)
        if op is None or name.startswith("__"):  # (the operator's __deepcopy__ would copy it unwrapped)
            raise AttributeError(name)
        return getattr(op, name)

    def __repr__(self) -> str:
        return f"{self._op!r} (amp O1: in {self._dtype}, out Float32)"


_OPENED = (SequentialCell, CellList, CellDict, WithLossCell, WithEvalCell, OutputTo16, OutputTo32)


def _opened(cell: Cell) -> bool:
    """Whether O1 looks inside ``cell``: a cell of the user's, or a container or wrapper of opforge's."""
    return not type(cell).__module__.startswith("opforge.") or isinstance(cell, _OPENED)


def _split(white_list) -> tuple:
    cells = tuple(c for c in white_list if issubclass(c, Cell))
    return cells, tuple(c for c in white_list if not issubclass(c, Cell))


def white_list_rewrite(network: Cell, white_list, dtype) -> Cell:
    """O1 (MindSpore's ``_auto_white_list``): ``network`` with its white-list cells in ``dtype`` and their
    outputs cast to float32, its white-list operators' inputs cast to ``dtype`` and outputs to float32; the
    rest stays in float32. Rewritten in place; a network that is itself a white-list cell comes back wrapped."""
    if network.__dict__.get("_to_float") is dtype:  # the user's to_float(dtype): MindSpore leaves it
        return network
    cells, operators = _split(white_list)
    if type(network) in cells:
        return OutputTo32(network.to_float(dtype))
    _white_list_walk(network, cells, operators, dtype, set())
    return network


def _white_list_walk(cell: Cell, cells: tuple, operators: tuple, dtype, seen: set) -> None:
    if id(cell) in seen or cell.__dict__.get("_to_float") is dtype:
        return
    seen.add(id(cell))
    for name, value in list(cell.__dict__.items()):
        if type(value) in operators:
            object.__setattr__(cell, name, _WhiteListOperator(value, dtype))
    for name, child in list(cell._cells.items()):
        if child is None:
            continue
        if type(child) in cells:
            if child.__dict__.get("_to_float") is not dtype:  # (one the user set stays as it is)
                cell._cells[name] = OutputTo32(child.to_float(dtype))
        elif _opened(child):
            _white_list_walk(child, cells, operators, dtype, seen)


def black_list_rewrite(network: Cell, black_list, dtype) -> Cell:
    """O2 (MindSpore's ``_auto_black_list``): ``network`` in ``dtype``, each sub-cell that is an instance of a
    black-list class kept in float32 with its outputs cast back to ``dtype``. Rewritten in place."""
    network.to_float(dtype)
    black = tuple(black_list)
    for name, child in list(network._cells.items()):
        if child is None or child is network or isinstance(child, OutputTo16):  # (kept in float32 already)
            continue
        if black and isinstance(child, black):
            network._cells[name] = OutputTo16(child, dtype)
        else:
            black_list_rewrite(child, black_list, dtype)
    return network


def reset_traces(network: Cell) -> None:
    """Forget the graph-mode traces of ``network``'s cells: their calls now cast."""
    for _, cell in network.cells_and_names():
        cell.__dict__.pop("_jit_construct", None)
