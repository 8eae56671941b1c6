"""RandGamma CPU op info (csrc/kernels/cpu/random.cc)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_reg = (
    CpuRegOp("RandGamma")
    .input(0, "alpha", "required")
    .input(1, "seed", "required")
    .input(2, "offset", "required")
    .output(0, "output", "required")
)
for _t in (DataType.F16_Default, DataType.F32_Default, DataType.F64_Default):
    _reg = _reg.dtype_format(_t, DataType.I64_Default, DataType.I64_Default, _t)
rand_gamma_op_info = _reg.get_op_info()


@op_info_register(rand_gamma_op_info)
def _rand_gamma_cpu():
    """RandGamma CPU registration."""
