"""Values a function hands to the host as it runs, besides what it returns (the summary operators' values).

``emit(sink, key, value)`` calls ``sink(key, value)`` at once. While ``opforge.jit`` records a trace it keeps the
emission instead (``capturing``): the trace returns the emitted Tensors as extra outputs, and the traced run and
every replay hand their values to the same sinks (``deliver``) once the step's program has run -- the Python that
emitted them does not run again, and a sink never sees a Tensor still being traced.
"""

from __future__ import annotations

import contextlib
import threading

__all__ = ["emit", "capturing", "deliver"]

# Per thread, as traces are: one list per trace being recorded (nested jit: the innermost last).
_local = threading.local()


def _captures() -> list:
    stack = getattr(_local, "captures", None)
    if stack is None:
        stack = _local.captures = []
    return stack


def emit(sink, key, value) -> None:
    stack = _captures()
    if stack:
        stack[-1].append((sink, key, value))
    else:
        sink(key, value)


@contextlib.contextmanager
def capturing():
    """A list that fills with the ``(sink, key, value)`` emitted inside the block."""
    emitted: list = []
    stack = _captures()
    stack.append(emitted)
    try:
        yield emitted
    finally:
        stack.pop()


def deliver(targets, values) -> None:
    """A replay's emitted ``values`` to the ``(sink, key)`` pairs recorded with the trace."""
    for (sink, key), value in zip(targets, values):
        sink(key, value)
