"""``HostOp``: what MindSpore programs call on an operator instance besides calling it (``add_prim_attr``,
``shard``, ``set_device``, ``name``, ``attrs``), for opforge's operator classes that are not Primitives: those
composed of other primitives (IOU, CropAndResize, ...) or run on the host (Unique, Shape, DType).

Model-zoo networks configure such operators where they build them (``ops.Unique().shard(((1,),))`` in
Wide&Deep, ``reduce.add_prim_attr("cross_batch", True)``). The primitives these classes call are the ones that
run, so the attributes are recorded (``attrs``) and otherwise change nothing; a strategy is checked as a
Primitive's (``Primitive.shard``) and, as outside SEMI_AUTO_PARALLEL / AUTO_PARALLEL, recorded and ignored."""

from __future__ import annotations

from opforge.device import BACKENDS
from opforge.primitives.primitive import _check_strategy

__all__ = ["HostOp"]


class HostOp:
    """A mixin giving an operator class MindSpore's Primitive configuration methods (module docstring). The
    classes' own ``__init__`` need not call it: the attributes are made on first use."""

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def attrs(self) -> dict:
        if "_host_attrs" not in self.__dict__:
            self.__dict__["_host_attrs"] = {}
        return self.__dict__["_host_attrs"]

    def add_prim_attr(self, name: str, value):
        """Records ``value`` under ``name`` in ``attrs``; returns the operator."""
        if not isinstance(name, str):
            raise TypeError(f"For '{self.name}.add_prim_attr', the 'name' must be str, but got {type(name).__name__}.")
        self.attrs[name] = value
        return self

    def shard(self, in_strategy, out_strategy=None):
        """Records the strategies (checked as ``Primitive.shard`` checks them); returns the operator."""
        self.attrs["in_strategy"] = _check_strategy(self.name, "in_strategy", in_strategy)
        if out_strategy is not None:
            self.attrs["out_strategy"] = _check_strategy(self.name, "out_strategy", out_strategy)
        return self

    def set_device(self, device_target: str):
        """Records ``device_target`` (the inputs' device decides where the primitives inside run)."""
        if device_target not in BACKENDS:
            raise ValueError(
                f"For '{self.name}', the 'device_target' must be one of {BACKENDS}, but got {device_target!r}."
            )
        return self.add_prim_attr("primitive_target", device_target)
