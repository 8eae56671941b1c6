"""RandPoisson CPU op info (csrc/kernels/cpu/random.cc)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_reg = (
    CpuRegOp("RandPoisson")
    .input(0, "rate", "required")
    .input(1, "seed", "required")
    .input(2, "offset", "required")
    .output(0, "output", "required")
    .attr("dtype", "required", "type", "all")
)
_OUTPUTS = (
    DataType.I32_Default,
    DataType.I64_Default,
    DataType.F16_Default,
    DataType.F32_Default,
    DataType.F64_Default,
)
for _rate in (DataType.F16_Default, DataType.F32_Default, DataType.F64_Default):
    for _out in _OUTPUTS:
        _reg = _reg.dtype_format(_rate, DataType.I64_Default, DataType.I64_Default, _out)
rand_poisson_op_info = _reg.get_op_info()


@op_info_register(rand_poisson_op_info)
def _rand_poisson_cpu():
    """RandPoisson CPU registration."""
