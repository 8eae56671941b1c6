"""MindSpore's ``Symbol``: a dynamic dim of an input spec (``Tensor(shape=[Symbol(divisor=8), 1, 28, 28])``, given
to ``Cell.set_inputs``) with the facts MindSpore's graph compiler may assume about it."""

from __future__ import annotations

__all__ = ["Symbol"]


def _int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For 'Symbol', the '{name}' must be an int, but got {type(value).__name__}.")
    if value < low:
        raise ValueError(f"For 'Symbol', the '{name}' must be >= {low}, but got {value}.")
    return value


class Symbol:
    """``Symbol(max=0, min=1, divisor=1, remainder=0, unique=False)``: a dim in [``min``, ``max``] (``max`` 0:
    unbounded) with ``dim % divisor == remainder``; ``unique``: a Symbol used in several places means one size.
    opforge reads it as an unknown dim (-1, as ``None``): the values are checked here, and a call is not held to
    them (they are hints for MindSpore's compiler)."""

    def __init__(self, max=0, min=1, divisor=1, remainder=0, unique=False, **kwargs):  # noqa: A002 (MindSpore's)
        self.max, self.min = _int("max", max, 0), _int("min", min, 1)
        if self.max and self.max < self.min:
            raise ValueError(f"For 'Symbol', the 'max' ({max}) must be 0 or >= the 'min' ({min}).")
        self.divisor = _int("divisor", divisor, 1)
        self.remainder = _int("remainder", remainder, 0)
        if self.remainder >= self.divisor:
            raise ValueError(f"For 'Symbol', the 'remainder' ({remainder}) must be < the 'divisor' ({divisor}).")
        if not isinstance(unique, bool):
            raise TypeError(f"For 'Symbol', the 'unique' must be a bool, but got {type(unique).__name__}.")
        self.unique = unique
        self.kwargs = dict(kwargs)

    def __repr__(self) -> str:
        return (
            f"Symbol(max={self.max}, min={self.min}, divisor={self.divisor}, remainder={self.remainder}, "
            f"unique={self.unique})"
        )
