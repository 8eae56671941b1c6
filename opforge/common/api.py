"""MindSpore's module path ``mindspore.common.api``, which model-zoo scripts import ``jit`` from
(``from mindspore.common.api import jit``): the same object as ``opforge.jit``."""

from opforge.jit import jit

__all__ = ["jit"]
