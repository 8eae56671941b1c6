"""An interpreter that leaves the Parameters as they were: it passes every primitive call on and keeps, before a
Parameter's first write, a copy of its value; ``restore()`` writes the copies back. For runs that must not change a
network: ``export``'s recording (a training network's step would train it) and the layout step of
``infer_train_layout`` / ``infer_predict_layout`` (BatchNorm's statistics)."""

from __future__ import annotations

from opforge.dispatch.binding import written_positions
from opforge.dispatch.interpreter import Interpreter
from opforge.tensor import Parameter


class KeepWrites(Interpreter):
    observer = True  # it only watches the calls: an in-place assignment changes nothing here

    def __init__(self):
        self.parent = None
        self.kept: dict = {}  # id(Parameter) -> (Parameter, a copy of its value before its first write)

    def process_primitive(self, prim, args: tuple):
        for i in written_positions(prim._signature()):
            param = args[i] if i < len(args) else None
            if isinstance(param, Parameter) and id(param) not in self.kept:
                self.kept[id(param)] = (param, _copy(param))
        return self.parent.process_primitive(prim, args)

    def restore(self) -> None:
        """Every written Parameter's value as before its first write (in place: its buffer is kept)."""
        for param, value in self.kept.values():
            param._meta[2].write(param._data, value)
        self.kept.clear()


def _copy(param: Parameter):
    """A copy of ``param``'s buffer, by its device (no Tensor read: a trace above may be recording)."""
    dtype, shape, device = param._meta
    copy = device.empty(shape, dtype.np_dtype)
    device.write(copy, param._data)
    return copy
