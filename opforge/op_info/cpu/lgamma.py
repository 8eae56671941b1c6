"""Lgamma CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

lgamma_op_info = (
    CpuRegOp("Lgamma")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(lgamma_op_info)
def _lgamma_cpu():
    """Lgamma CPU registration."""
