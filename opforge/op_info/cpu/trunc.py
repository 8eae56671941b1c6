"""Trunc CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

trunc_op_info = (
    CpuRegOp("Trunc")
    .input(0, "input_x", "required")
    .output(0, "output_y", "required")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I8_Default,
        DataType.I32_Default,
        DataType.U8_Default,
    )
    .get_op_info()
)


@op_info_register(trunc_op_info)
def _trunc_cpu():
    """Trunc CPU registration."""
