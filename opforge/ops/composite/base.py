"""MindSpore's ``mindspore.ops.composite.base``: ``add_flags``, the decorator that marks a function (or a
Cell's ``construct``) with graph-compiler flags such as ``has_effect=True``. opforge runs (and traces) a
function's Python in order, so the flags change nothing; they are recorded where MindSpore records them."""

__all__ = ["add_flags"]


def add_flags(fn=None, **flags):
    """``@add_flags(has_effect=True)`` or ``add_flags(fn, **flags)``: returns ``fn``, its
    ``_func_graph_flags`` dict updated with ``flags`` (MindSpore's attribute)."""

    def deco(fn):
        if not callable(fn):
            raise TypeError(f"For 'add_flags', the decorated object must be callable, but got {type(fn).__name__}.")
        if not hasattr(fn, "_func_graph_flags"):
            fn._func_graph_flags = {}
        fn._func_graph_flags.update(flags)
        return fn

    return deco if fn is None else deco(fn)
