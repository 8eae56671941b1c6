"""MindSpore's ``common.parameter``: ``Parameter`` and ``ParameterTuple``."""

from __future__ import annotations

from opforge.tensor import Parameter

__all__ = ["Parameter", "ParameterTuple"]


class ParameterTuple(tuple):
    """A tuple of Parameters (a network's weights for ``GradOperation(get_by_list=True)``)."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for i, p in enumerate(items):
            if not isinstance(p, Parameter):
                raise TypeError(
                    f"For 'ParameterTuple', every element must be a Parameter, but element {i} is {type(p).__name__}."
                )
        return super().__new__(cls, items)

    def clone(self, prefix: str, init: str = "same") -> ParameterTuple:
        """Copies of the Parameters named ``prefix.name`` (``init="same"``: the same values)."""
        if init != "same":
            raise ValueError(f"For 'ParameterTuple.clone', only init='same' is supported, but got {init!r}.")
        return ParameterTuple(Parameter(p, name=f"{prefix}.{p.name}", requires_grad=p.requires_grad) for p in self)
