"""MindSpore's module path ``mindspore.common.api``, which model-zoo scripts import ``jit`` from
(``from mindspore.common.api import jit``): the same object as ``opforge.jit``; ``ms_function``, MindSpore
1.x's name of ``jit``; and ``lazy_inline``, MindSpore's compile hint for a Cell's ``__init__``."""

from opforge.jit import jit

__all__ = ["jit", "ms_function", "lazy_inline"]


def ms_function(fn=None, obj=None, input_signature=None):
    """MindSpore 1.x's ``ms_function(fn=None, obj=None, input_signature=None)``, renamed ``jit`` in 2.0:
    ``jit(fn, input_signature=input_signature)`` (``@ms_function`` on a function or a ``construct``, or
    ``ms_function(fn)``; ``@ms_function(input_signature=...)`` gives the decorator). ``obj``, the object that
    told MindSpore 1.x's compile caches apart, is accepted and unused: opforge keeps one trace cache per
    decorated function and input signature."""
    del obj
    return jit(fn, input_signature=input_signature)


def lazy_inline(fn=None, attrs=None, policy=None):
    """MindSpore's ``@lazy_inline`` on a Cell's ``__init__`` (or ``@lazy_inline(attrs=..., policy=...)``): its
    graph compiler then compiles the cell's graph once for all its instances (a Transformer's layers). opforge
    runs each call of a cell through the same construct and traces at the first call, so it changes nothing;
    the arguments are checked as MindSpore checks them: ``attrs`` a str or a list/tuple of str (the ``__init__``
    arguments kept as attributes), ``policy`` None or "front"."""
    if attrs is not None and not isinstance(attrs, str):
        if not isinstance(attrs, (list, tuple)) or not all(isinstance(a, str) for a in attrs):
            raise TypeError(f"For 'lazy_inline', the 'attrs' must be a str or a list/tuple of str, but got {attrs!r}.")
    if policy not in (None, "front"):
        raise ValueError(f"For 'lazy_inline', the 'policy' must be None or 'front', but got {policy!r}.")
    if fn is None:
        return lambda f: f
    if not callable(fn):
        raise TypeError(f"For 'lazy_inline', the decorated object must be a function, but got {type(fn).__name__}.")
    return fn
