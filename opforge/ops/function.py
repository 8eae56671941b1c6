"""MindSpore's ``mindspore.ops.function`` (``from mindspore.ops import function as F``): the functional API, that
is every function of ``opforge.ops`` (``F.range``, ``F.tril``, ``F.cast``, ...), without the operator classes
and modules. ``opforge.ops`` is fully imported before this module, so each name is the one ``ops.<name>`` has."""

import inspect as _inspect
import types as _types

from opforge import ops as _ops

_DECORATORS = {"constexpr", "op_info_register", "prim_attr_register"}  # the operator-definition helpers
__all__ = sorted(
    name
    for name, value in vars(_ops).items()
    if not name.startswith("_")
    and name not in _DECORATORS
    and not _inspect.isclass(value)
    and not isinstance(value, _types.ModuleType)
)
globals().update({name: getattr(_ops, name) for name in __all__})
