"""AssignSub GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

assign_sub_op_info = (
    GpuRegOp("AssignSub")
    .input(0, "variable", "required")
    .input(1, "value", "required")
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


@op_info_register(assign_sub_op_info)
def _assign_sub_gpu():
    """AssignSub GPU registration."""
