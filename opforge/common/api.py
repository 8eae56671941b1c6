"""MindSpore's module path ``mindspore.common.api``, which model-zoo scripts import ``jit`` from
(``from mindspore.common.api import jit``): the same object as ``opforge.jit``; and ``ms_function``, MindSpore
1.x's name of ``jit``."""

from opforge.jit import jit

__all__ = ["jit", "ms_function"]


def ms_function(fn=None, obj=None, input_signature=None):
    """MindSpore 1.x's ``ms_function(fn=None, obj=None, input_signature=None)``, renamed ``jit`` in 2.0:
    ``jit(fn, input_signature=input_signature)`` (``@ms_function`` on a function or a ``construct``, or
    ``ms_function(fn)``; ``@ms_function(input_signature=...)`` gives the decorator). ``obj``, the object that
    told MindSpore 1.x's compile caches apart, is accepted and unused: opforge keeps one trace cache per
    decorated function and input signature."""
    del obj
    return jit(fn, input_signature=input_signature)
