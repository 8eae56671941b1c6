"""Mixed precision, as MindSpore's ``mindspore.amp``: the loss-scale managers and
``auto_mixed_precision`` (a network run in float16). The training cell they drive is
``nn.TrainOneStepWithLossScaleCell`` (``opforge/nn/loss_scale.py``); ``Model(..., amp_level=...,
loss_scale_manager=...)`` builds it from them."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge import ops
from opforge.nn.cell import Cell
from opforge.nn.loss_scale import (
    DynamicLossScaleUpdateCell,
    FixedLossScaleUpdateCell,
    ScaleSchedule,
    TrainOneStepWithLossScaleCell,
    check_number,
)
from opforge.nn.normalization import BatchNorm1d, BatchNorm2d
from opforge.nn.wrap import TrainOneStepCell, WithLossCell

__all__ = [
    "LossScaleManager",
    "FixedLossScaleManager",
    "DynamicLossScaleManager",
    "auto_mixed_precision",
    "build_train_network",
]

AMP_LEVELS = ("O0", "O1", "O2", "O3", "auto")


class LossScaleManager:
    """The loss scale of a training loop and how it changes on an overflow."""

    def get_loss_scale(self) -> float:
        raise NotImplementedError

    def update_loss_scale(self, overflow: bool) -> None:
        raise NotImplementedError

    def get_update_cell(self):
        raise NotImplementedError


class FixedLossScaleManager(LossScaleManager):
    """A constant scale. With ``drop_overflow_update`` a step whose gradients overflow is skipped (the
    update cell checks them); without, every step updates, and the optimizer's ``loss_scale`` must be this
    scale (it divides the gradients), as in MindSpore."""

    def __init__(self, loss_scale: float = 128.0, drop_overflow_update: bool = True):
        if not isinstance(drop_overflow_update, bool):
            raise TypeError("For 'FixedLossScaleManager', the 'drop_overflow_update' must be bool.")
        self._loss_scale = check_number("FixedLossScaleManager", "loss_scale", loss_scale, 1.0, strict=False)
        self._drop_overflow_update = drop_overflow_update

    def get_loss_scale(self) -> float:
        return self._loss_scale

    def get_drop_overflow_update(self) -> bool:
        return self._drop_overflow_update

    def update_loss_scale(self, overflow: bool) -> None:
        """A fixed scale stays."""

    def get_update_cell(self):
        return FixedLossScaleUpdateCell(self._loss_scale) if self._drop_overflow_update else None


class DynamicLossScaleManager(LossScaleManager):
    """A scale divided by ``scale_factor`` on an overflow (not below 1) and multiplied by it after
    ``scale_window`` steps without one; overflowing steps are skipped."""

    def __init__(self, init_loss_scale: float = 2**24, scale_factor: int = 2, scale_window: int = 2000):
        where = "DynamicLossScaleManager"
        self.loss_scale = check_number(where, "init_loss_scale", init_loss_scale, 1.0, strict=False)
        self.schedule = ScaleSchedule(where, scale_factor, scale_window)
        self.scale_factor, self.scale_window = scale_factor, scale_window
        self.increase_ratio, self.decrease_ratio = scale_factor, 1.0 / scale_factor

    def get_loss_scale(self) -> float:
        return self.loss_scale

    def get_drop_overflow_update(self) -> bool:
        return True

    def update_loss_scale(self, overflow: bool) -> None:
        """The scale after a step that did (or did not) overflow, as the update cell moves it."""
        self.loss_scale = self.schedule.next(self.loss_scale, overflow)

    def get_update_cell(self):
        return DynamicLossScaleUpdateCell(self.loss_scale, self.scale_factor, self.scale_window)


class _OutputTo32(Cell):
    """A float16 network whose float outputs are cast back to float32 (the loss runs in float32)."""

    def __init__(self, network: Cell):
        super().__init__(auto_prefix=False)
        self._backbone = network

    def construct(self, *inputs):
        out = self._backbone(*inputs)
        if isinstance(out, tuple):
            return tuple(_to32(o) for o in out)
        return _to32(out)


def _to32(t):
    return ops.Cast()(t, mstype.float32) if getattr(t, "dtype", None) in (mstype.float16, mstype.bfloat16) else t


def auto_mixed_precision(network: Cell, amp_level: str = "O0", dtype=mstype.float16) -> Cell:
    """``network`` run in ``dtype`` (float16 by default): "O0" leaves it in float32; "O1" and "O2" cast
    its cells' float inputs to ``dtype`` but keep the BatchNorm cells in float32 (O1 is not MindSpore's
    list of operators: it runs as O2); "O3" casts every cell. Its float outputs come back in float32."""
    if amp_level not in AMP_LEVELS:
        raise ValueError(
            f"For 'auto_mixed_precision', the 'amp_level' must be one of {AMP_LEVELS}, but got {amp_level!r}."
        )
    if not isinstance(network, Cell):
        raise TypeError(f"For 'auto_mixed_precision', the 'network' must be a Cell, but got {type(network).__name__}.")
    if amp_level == "O0":
        return network
    network.to_float(dtype)
    if amp_level != "O3":
        for _, cell in network.cells_and_names():
            if isinstance(cell, (BatchNorm1d, BatchNorm2d)):
                cell.to_float(mstype.float32)
    return _OutputTo32(network)


def build_train_network(network: Cell, optimizer, loss_fn=None, level: str = "O0", boost_level: str = "O0", **kwargs):
    """MindSpore's ``amp.build_train_network``: ``network`` (with ``loss_fn`` when given) in the mixed
    precision of ``level``, as one training step (``loss_scale_manager``, a keyword: a loss-scaled one)."""
    network = auto_mixed_precision(network, "O2" if level == "auto" else level)
    if loss_fn is not None:
        network = WithLossCell(network, loss_fn)
    return train_step(network, optimizer, kwargs.pop("loss_scale_manager", None))


def train_step(network: Cell, optimizer, manager: LossScaleManager | None) -> Cell:
    """The training step of ``network`` (its output the loss): plain, or loss-scaled by ``manager``'s update
    cell (a fixed scale that never skips a step only scales the loss: the optimizer's loss_scale divides)."""
    update_cell = manager.get_update_cell() if manager is not None else None
    if update_cell is not None:
        return TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell)
    return TrainOneStepCell(network, optimizer, sens=manager.get_loss_scale() if manager is not None else 1.0)
