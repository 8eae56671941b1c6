"""Erfinv CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

erfinv_op_info = (
    CpuRegOp("Erfinv")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(erfinv_op_info)
def _erfinv_cpu():
    """Erfinv CPU registration."""
