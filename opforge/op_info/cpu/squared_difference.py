"""SquaredDifference CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

squared_difference_op_info = (
    CpuRegOp("SquaredDifference")
    .input(0, "x", "required")
    .input(1, "y", "required")
    .output(0, "output", "required")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    )
    .get_op_info()
)


@op_info_register(squared_difference_op_info)
def _squared_difference_cpu():
    """SquaredDifference CPU registration."""
