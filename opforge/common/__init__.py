"""MindSpore's ``common`` package: ``common.dtype``, ``common.initializer``, ``common.parameter``,
``common.tensor``, and the names ``mindspore.common`` exports that model-zoo scripts import from it
(``from mindspore.common import set_seed``, ``Tensor``, ``Parameter``, ``dtype``)."""

from opforge.common import api, dtype, initializer, parameter, tensor
from opforge.common.parameter import Parameter, ParameterTuple
from opforge.nn.init import get_seed, set_seed
from opforge.tensor import Tensor

__all__ = [
    "api", "dtype", "initializer", "parameter", "tensor", "Parameter", "ParameterTuple", "Tensor", "set_seed",
    "get_seed",
]  # fmt: skip
