"""Mixed precision, as MindSpore 2.x's ``mindspore.amp``: the amp levels (``auto_mixed_precision``,
``custom_mixed_precision``, ``build_train_network``, which ``Model(..., amp_level=...)`` calls), the
loss-scale managers and the functional loss scalers (``opforge/amp_loss_scaler.py``). The levels' cell
rewrites are in ``opforge/nn/amp_levels.py``, the "auto" level's operator rules in ``opforge/nn/amp_auto.py``;
the loss-scaled training cell is ``nn.TrainOneStepWithLossScaleCell`` (``opforge/nn/loss_scale.py``).

The levels, as MindSpore defines them:

* "O0": nothing changes.
* "O1": the white-list cells and operators (``get_white_list()``: convolutions, Dense, the RNN cells,
  MatMul, BatchMatMul, ReLU) compute in float16, their outputs cast back to float32; the rest stays float32.
* "O2": every cell in float16 but the black-list ones (``get_black_list()``: BatchNorm, LayerNorm), kept in
  float32 with their outputs cast to float16.
* "O3": every cell in float16, BatchNorm too.
* "auto": a rule per operator (``opforge/nn/amp_auto.py``). In ``build_train_network`` and ``Model``, "auto"
  is MindSpore's recommendation per device instead: "O2" on the GPU ("O3" on Ascend; the CPU refuses it).

``auto_mixed_precision`` at O2 and O3 casts the network's float outputs to float32. ``build_train_network``
(and ``Model``) instead casts the network into place and puts the loss in float32: at O2 and O3 its loss
cell casts the network's outputs and the label to float32 first; O2 takes a ``DynamicLossScaleManager()``
unless one is given; ``keep_batchnorm_fp32`` and ``cast_model_type`` override the level's choice."""

from __future__ import annotations

import inspect
import warnings

from opforge import context
from opforge import dtype as mstype
from opforge.amp_loss_scaler import DynamicLossScaler, LossScaler, StaticLossScaler, all_finite
from opforge.nn.amp_auto import auto_cast
from opforge.nn.amp_levels import (
    AMP_BLACK_LIST,
    AMP_WHITE_LIST,
    OutputTo32,
    black_list_rewrite,
    reset_traces,
    white_list_rewrite,
)
from opforge.nn.cell import Cell
from opforge.nn.loss_scale import (
    DynamicLossScaleUpdateCell,
    FixedLossScaleUpdateCell,
    ScaleSchedule,
    TrainOneStepWithLossScaleCell,
    check_number,
)
from opforge.nn.mixed_precision import mixed_precision_cast
from opforge.nn.optim import Optimizer
from opforge.nn.wrap import TrainOneStepCell, WithLossCell
from opforge.primitives.primitive import Primitive

__all__ = [
    "LossScaleManager",
    "FixedLossScaleManager",
    "DynamicLossScaleManager",
    "LossScaler",
    "StaticLossScaler",
    "DynamicLossScaler",
    "all_finite",
    "auto_mixed_precision",
    "custom_mixed_precision",
    "get_white_list",
    "get_black_list",
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


_LOW_DTYPES = (mstype.float16, mstype.bfloat16)
_BOOST_LEVELS = ("O0", "O1", "O2")
_TRAIN_KWARGS = ("cast_model_type", "keep_batchnorm_fp32", "loss_scale_manager")


def get_white_list() -> list:
    """A copy of the O1 white list: the cells ``nn.Conv1d``, ``nn.Conv2d``, ``nn.Conv3d``,
    ``nn.Conv1dTranspose``, ``nn.Conv2dTranspose``, ``nn.Conv3dTranspose``, ``nn.Dense``, ``nn.LSTMCell``,
    ``nn.RNNCell``, ``nn.GRUCell`` and the operators ``ops.Conv2D``, ``ops.Conv3D``, ``ops.Conv2DBackpropInput``
    (= ``ops.Conv2DTranspose``), ``ops.Conv3DTranspose``, ``ops.MatMul``, ``ops.BatchMatMul``, ``ops.ReLU``
    (MindSpore's list, less ``ops.PReLU`` and ``ops.Ger``, which opforge has not got)."""
    return list(AMP_WHITE_LIST)


def get_black_list() -> list:
    """A copy of the O2 black list: ``nn.BatchNorm1d``, ``nn.BatchNorm2d``, ``nn.BatchNorm3d``,
    ``nn.LayerNorm``."""
    return list(AMP_BLACK_LIST)


def _check_dtype(where: str, dtype) -> None:
    if dtype not in _LOW_DTYPES:
        raise ValueError(f"For '{where}', the 'dtype' must be mstype.float16 or mstype.bfloat16, but got {dtype!r}.")


def _check_level(where: str, name: str, level, levels=AMP_LEVELS) -> None:
    if not isinstance(level, str):
        raise TypeError(f"For '{where}', the '{name}' must be a str, one of {levels}, but got {type(level).__name__}.")
    if level not in levels:
        raise ValueError(f"For '{where}', the '{name}' must be one of {levels}, but got {level!r}.")


def auto_mixed_precision(network, amp_level: str = "O0", dtype=mstype.float16):
    """MindSpore's ``amp.auto_mixed_precision``: ``network`` with the mixed precision of ``amp_level``, its low
    precision ``dtype`` (float16 or bfloat16). "O0" returns it unchanged; "O1" computes the white-list cells
    and operators in ``dtype`` (``get_white_list()``), their outputs cast back to float32, the rest in float32;
    "O2" computes every cell in ``dtype`` but the black-list ones (``get_black_list()``), kept in float32;
    "O3" every cell in ``dtype``. At O2 and O3 the network's float outputs come back in float32. "auto"
    applies a rule per operator (``opforge/nn/amp_auto.py``; ``network`` may then be a function) and casts no
    output back. Cells are rewritten in place (a network wrapped by O2, O3 or auto, or an O1 network that is
    itself a white-list cell, comes back in a wrapper). Raises TypeError for a ``network`` that is no Cell,
    ValueError for a bad ``dtype`` or ``amp_level``."""
    where = "auto_mixed_precision"
    if not isinstance(network, Cell) and not (amp_level == "auto" and inspect.isroutine(network)):
        raise TypeError(
            f"For '{where}', the 'network' must be a Cell (or a function, at amp_level 'auto'), "
            f"but got {type(network).__name__}."
        )
    _check_dtype(where, dtype)
    if not isinstance(amp_level, str) or amp_level not in AMP_LEVELS:  # (MindSpore: ValueError for any other)
        raise ValueError(f"For '{where}', the 'amp_level' must be one of {AMP_LEVELS}, but got {amp_level!r}.")
    if amp_level == "O0":
        return network
    previous = getattr(network, "_amp_level", None)
    if previous is not None:
        warnings.warn(
            f"The network's auto mixed-precision level is adjusted from {previous} to {amp_level}; repeated "
            "calls to mixed-precision interfaces nest their casts.",
            stacklevel=2,
        )
    if amp_level == "O1":
        network = white_list_rewrite(network, AMP_WHITE_LIST, dtype)
    elif amp_level == "O2":
        network = OutputTo32(black_list_rewrite(network, AMP_BLACK_LIST, dtype))
    elif amp_level == "O3":
        network = OutputTo32(network.to_float(dtype))
    else:
        network = auto_cast(network, dtype)
    if isinstance(network, Cell):
        reset_traces(network)
        object.__setattr__(network, "_amp_level", amp_level)
    else:
        network._amp_level = amp_level
    return network


def _is_operator_class(cls) -> bool:
    """A Primitive class, or one of opforge's operators composed of primitives (``ops.Conv3D``)."""
    return issubclass(cls, Primitive) or cls.__module__.startswith("opforge.ops.")


def _check_list(custom_list, name: str) -> None:
    where = "custom_mixed_precision"
    if not isinstance(custom_list, list):
        raise TypeError(f"For '{where}', the '{name}' must be a list, but got {type(custom_list).__name__}.")
    for elem in custom_list:
        if not isinstance(elem, type):
            raise TypeError(f"For '{where}', each element of the '{name}' must be a class, but got {elem!r}.")
        if name == "white_list" and not (issubclass(elem, Cell) or _is_operator_class(elem)):
            raise TypeError(
                f"For '{where}', each element of the 'white_list' must be a Cell or a Primitive class, but got {elem}."
            )
        if name == "black_list" and not issubclass(elem, Cell):
            raise TypeError(f"For '{where}', each element of the 'black_list' must be a Cell class, but got {elem}.")
    if name == "black_list":
        for elem in AMP_BLACK_LIST:
            if elem not in custom_list:
                warnings.warn(f"{elem.__name__} is removed from the internal black list.", stacklevel=3)


def custom_mixed_precision(network, *, white_list=None, black_list=None, dtype=mstype.float16) -> Cell:
    """MindSpore's ``amp.custom_mixed_precision``: O1 with ``white_list`` (Cell and Primitive classes, matched
    by exact class) or O2 with ``black_list`` (Cell classes, matched by ``isinstance``) instead of the built-in
    lists; exactly one of the two. ``dtype``: float16 or bfloat16. With a black list the network's float
    outputs come back in float32. Raises TypeError for a ``network`` that is no Cell or a malformed list,
    ValueError for none or both lists, or a bad ``dtype``."""
    where = "custom_mixed_precision"
    if not isinstance(network, Cell):
        raise TypeError(f"For '{where}', the 'network' must be a Cell, but got {type(network).__name__}.")
    if white_list is None and black_list is None:
        raise ValueError(f"For '{where}', one of the 'white_list' and the 'black_list' must be provided.")
    if white_list is not None and black_list is not None:
        raise ValueError(f"For '{where}', the 'white_list' and the 'black_list' cannot both be provided.")
    _check_dtype(where, dtype)
    if white_list is not None:
        _check_list(white_list, "white_list")
        network = white_list_rewrite(network, white_list, dtype)
    else:
        _check_list(black_list, "black_list")
        network = OutputTo32(black_list_rewrite(network, black_list, dtype))
    reset_traces(network)
    return network


def _level_config(level: str) -> dict:
    """MindSpore's ``_config_level``: what each level casts, and its default loss-scale manager."""
    fp16 = level in ("O2", "O3")
    return {
        "keep_batchnorm_fp32": level == "O2",
        "cast_model_type": mstype.float16 if fp16 else mstype.float32,
        "loss_scale_manager": DynamicLossScaleManager() if level == "O2" else None,
    }


def _train_level(level, boost_level) -> str:
    """The level, "auto" resolved as MindSpore does: "O2" on the GPU, "O3" on Ascend, refused elsewhere."""
    _check_level("build_train_network", "level", level)
    _check_level("build_train_network", "boost_level", boost_level, _BOOST_LEVELS)
    if level != "auto":
        return level
    target = context.get_context("device_target")
    if target == "GPU":
        return "O2"
    if target == "Ascend":
        return "O3"
    raise ValueError(
        f"For 'build_train_network', the level 'auto' is only supported when the 'device_target' is GPU or "
        f"Ascend, but got {target!r}; set the level ('O2' is MindSpore's choice for the GPU)."
    )


def _check_train_kwargs(kwargs: dict) -> None:
    where = "build_train_network"
    for arg in kwargs:
        if arg not in _TRAIN_KWARGS:
            raise ValueError(f"For '{where}', the keyword arguments are {_TRAIN_KWARGS}, but got {arg!r}.")
    cast_type = kwargs.get("cast_model_type", mstype.float32)
    if cast_type not in (mstype.float16, mstype.float32):
        raise TypeError(f"For '{where}', the 'cast_model_type' must be float16 or float32, but got {cast_type!r}.")
    if not isinstance(kwargs.get("keep_batchnorm_fp32", False), bool):
        raise TypeError(
            f"For '{where}', the 'keep_batchnorm_fp32' must be bool, but got {kwargs['keep_batchnorm_fp32']!r}."
        )
    manager = kwargs.get("loss_scale_manager")
    if manager is not None and not isinstance(manager, LossScaleManager):
        raise TypeError(f"For '{where}', the 'loss_scale_manager' must be a LossScaleManager, but got {manager!r}.")


def _cast_model(network: Cell, config: dict, level: str) -> Cell:
    """MindSpore's ``_auto_mixed_precision_process``: a float16 model cast in place, its BatchNorm and
    LayerNorm cells kept in float32 with ``keep_batchnorm_fp32``; O0 and O1 as ``auto_mixed_precision``."""
    if config["cast_model_type"] is mstype.float16:
        if config["keep_batchnorm_fp32"]:
            network = black_list_rewrite(network, AMP_BLACK_LIST, mstype.float16)
        else:
            network.to_float(mstype.float16)
    elif not config["keep_batchnorm_fp32"] and level == "O2":
        network.to_float(mstype.float16)
    elif level in ("O2", "O3"):  # cast_model_type=float32 overrides the level
        return network
    else:
        network = auto_mixed_precision(network, level)
    reset_traces(network)
    return network


class _WithFloat32Loss(WithLossCell):
    """The loss cell of a float16 model (MindSpore's amp ``WithLossCell``): the network's outputs and the
    label cast to float32 before the loss."""

    def construct(self, data, label):
        cells = self._cells
        out = mixed_precision_cast(mstype.float32, cells["_backbone"](data))
        return cells["_loss_fn"](out, mixed_precision_cast(mstype.float32, label))


def build_train_network(network: Cell, optimizer, loss_fn=None, level: str = "O0", boost_level: str = "O0", **kwargs):
    """MindSpore's ``amp.build_train_network``: the training step of ``network`` (with ``loss_fn`` when given)
    in the mixed precision of ``level``. "O0" and "O1" as ``auto_mixed_precision``; "O2" the network cast to
    float16 in place with its BatchNorm/LayerNorm cells in float32, and a ``DynamicLossScaleManager()``; "O3"
    the whole network in float16, no loss scale; "auto" is "O2" on the GPU (ValueError on the CPU). The
    keywords ``cast_model_type`` (float16 or float32), ``keep_batchnorm_fp32`` and ``loss_scale_manager``
    override the level's. With a float16 model the loss runs in float32 (outputs and label cast first). A
    loss-scale manager with an update cell makes the step ``nn.TrainOneStepWithLossScaleCell`` (opforge runs
    it on the CPU too); ``boost_level`` is checked and otherwise ignored."""
    if not isinstance(network, Cell):
        raise TypeError(f"For 'build_train_network', the 'network' must be a Cell, but got {type(network).__name__}.")
    if not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"For 'build_train_network', the 'optimizer' must be an Optimizer, but got {type(optimizer).__name__}."
        )
    level = _train_level(level, boost_level)
    _check_train_kwargs(kwargs)
    config = {**_level_config(level), **kwargs}
    network = _cast_model(network, config, level)
    if loss_fn is not None:
        if not isinstance(loss_fn, Cell):
            raise TypeError(
                f"For 'build_train_network', the 'loss_fn' must be a Cell, but got {type(loss_fn).__name__}."
            )
        fp16 = config["cast_model_type"] is mstype.float16
        network = (_WithFloat32Loss if fp16 else WithLossCell)(network, loss_fn)
    return train_step(network, optimizer, config["loss_scale_manager"])


def train_step(network: Cell, optimizer, manager: LossScaleManager | None) -> Cell:
    """The training step of ``network`` (its output the loss): plain, or loss-scaled by ``manager``'s update
    cell (a fixed scale that never skips a step only scales the loss: the optimizer's loss_scale divides)."""
    update_cell = manager.get_update_cell() if manager is not None else None
    if update_cell is not None:
        return TrainOneStepWithLossScaleCell(network, optimizer, scale_sense=update_cell)
    return TrainOneStepCell(network, optimizer, sens=manager.get_loss_scale() if manager is not None else 1.0)
