"""opforge: operators in the MindSpore primitive style, with kernels selected at run time."""

from opforge import dtype, kernels, op_info, ops, primitives  # noqa: I001  (kernels before primitives: they load BLAS)
from opforge.context import get_context, set_context
from opforge.dtype import (
    bfloat16,
    bool_,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from opforge.errors import KernelError, KernelNotFoundError
from opforge.op_info import cpu as _cpu_op_info
from opforge.tensor import Parameter, Tensor, from_dlpack

__version__ = "0.1.0"
