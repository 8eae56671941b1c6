"""Values a function hands to the host as it runs, besides what it returns (the summary operators' values).

``emit(sink, key, value)`` calls ``sink(key, value)`` at once. While ``opforge.jit`` records a trace it also keeps
the emission (``capturing``): the trace returns the emitted Tensors as extra outputs, and every replay hands the
replay's values to the same sinks (``deliver``) -- the Python that emitted them does not run again.
"""

from __future__ import annotations

import contextlib

__all__ = ["emit", "capturing", "deliver"]

_captures: list = []  # one list per trace being recorded (nested jit: the innermost)


def emit(sink, key, value) -> None:
    sink(key, value)
    if _captures:
        _captures[-1].append((sink, key, value))


@contextlib.contextmanager
def capturing():
    """A list that fills with the ``(sink, key, value)`` emitted inside the block."""
    emitted: list = []
    _captures.append(emitted)
    try:
        yield emitted
    finally:
        _captures.pop()


def deliver(targets, values) -> None:
    """A replay's emitted ``values`` to the ``(sink, key)`` pairs recorded with the trace."""
    for (sink, key), value in zip(targets, values):
        sink(key, value)
