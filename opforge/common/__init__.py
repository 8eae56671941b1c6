"""MindSpore's ``common`` package: ``common.dtype``, ``common.initializer``, ``common.parameter``,
``common.tensor``, and the names ``mindspore.common`` exports that model-zoo scripts import from it
(``from mindspore.common import set_seed``, ``Tensor``, ``Parameter``, ``dtype``, ``RowTensor``,
``JitConfig``)."""

from opforge.common import api, dtype, initializer, jit_config, parameter, seed, sparse_tensor, tensor
from opforge.common.dtype import QuantDtype
from opforge.common.jit_config import JitConfig
from opforge.common.parameter import Parameter, ParameterTuple
from opforge.common.sparse_tensor import RowTensor
from opforge.nn.init import get_seed, set_seed
from opforge.tensor import Tensor

__all__ = [
    "api", "dtype", "initializer", "parameter", "tensor", "Parameter", "ParameterTuple", "Tensor", "set_seed",
    "get_seed", "seed", "sparse_tensor", "RowTensor", "jit_config", "JitConfig", "QuantDtype",
]  # fmt: skip
