"""MindSpore's ``common.parameter``: ``Parameter`` and ``ParameterTuple``."""

from __future__ import annotations

from opforge.common.initializer import initializer
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

    def clone(self, prefix: str, init="same") -> ParameterTuple:
        """Copies of the Parameters named ``prefix.name``, of their shapes and dtypes: ``init="same"`` keeps
        the values, any other ``init`` (an initializer's name such as "zeros" or "ones", an ``Initializer``, a
        number) draws new ones (MindSpore's optimizers: ``params.clone(prefix="moments", init="zeros")``)."""
        if not isinstance(prefix, str) or not prefix:
            raise ValueError(f"For 'ParameterTuple.clone', the 'prefix' must be a non-empty str, but got {prefix!r}.")
        clones = []
        for p in self:
            clone = p.clone(init)
            clone.name = f"{prefix}.{p.name}"
            clones.append(clone)
        return ParameterTuple(clones)


def _parameter_clone(self, init="same") -> Parameter:
    """MindSpore's ``Parameter.clone(init='same')``: a new Parameter of the same name, shape, dtype,
    ``requires_grad`` and parallel flags; ``init="same"`` copies the value, any other ``init`` (an initializer's
    name, an ``Initializer``, a number, a Tensor) gives the new value (the zoo's YOLOX keeps EMA copies of the
    BatchNorm statistics this way)."""
    value = self if isinstance(init, str) and init == "same" else initializer(init, self.shape, self.dtype)
    clone = Parameter(
        value,
        name=self.name,
        requires_grad=self.requires_grad,
        layerwise_parallel=self.layerwise_parallel,
        parallel_optimizer=self.parallel_optimizer,
    )
    clone.param_info = self.param_info.clone()  # its settings, comm_fusion too (MindSpore's clone)
    return clone


_parameter_clone.__name__ = "clone"
Parameter.clone = _parameter_clone  # attached here, where the initializers are importable (as Parameter.value)
