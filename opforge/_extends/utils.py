"""MindSpore's ``mindspore._extends.utils``: ``cell_attr_register``."""

from __future__ import annotations

import functools
import inspect

__all__ = ["cell_attr_register"]


def cell_attr_register(fn=None, attrs=None):
    """MindSpore's decorator of a Cell's ``__init__`` (``@cell_attr_register`` or
    ``@cell_attr_register(attrs=...)``): after ``__init__`` runs, ``self.cell_init_args`` is the class name
    followed by the arguments it was called with (without ``self``; defaults not filled in), or, given ``attrs``,
    the values of those attributes of the cell (a list of names: the values of the ones it has, in a list; one
    name: that attribute's value when it has it, else []). MindSpore's graph compiler keys its cell reuse on
    that string; opforge records it (``cell_init_args``) the same way."""
    if attrs is not None and not isinstance(attrs, (list, str)):
        raise ValueError(f"For 'cell_attr_register', the 'attrs' must be a list or a str, but got {attrs!r}.")
    if isinstance(attrs, list):
        for name in attrs:
            if not isinstance(name, str):
                raise ValueError(f"For 'cell_attr_register', each attr must be a str, but got {name!r}.")

    def decorate(init):
        signature = inspect.signature(init)

        @functools.wraps(init)
        def wrapped(self, *args, **kwargs):
            if attrs is None:
                bound = signature.bind(self, *args, **kwargs).arguments
                values = [v for k, v in bound.items() if k != next(iter(signature.parameters))]
            init(self, *args, **kwargs)
            if isinstance(attrs, list):
                values = [getattr(self, name) for name in attrs if hasattr(self, name)]
            elif isinstance(attrs, str):
                values = getattr(self, attrs) if hasattr(self, attrs) else []
            text = type(self).__name__ + (str(values) if attrs is not None else str(_ValuesView(values)))
            object.__setattr__(self, "cell_init_args", text)

        return wrapped

    return decorate(fn) if fn is not None else decorate


class _ValuesView(list):
    """The bound arguments' values, printed as MindSpore prints them (``dict_values([...])``)."""

    def __repr__(self) -> str:
        return f"dict_values({list.__repr__(self)})"

    __str__ = __repr__
