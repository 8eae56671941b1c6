"""Elu GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

elu_op_info = (
    GpuRegOp("Elu")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .attr("alpha", "optional", "float", "all", "1.0")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(elu_op_info)
def _elu_gpu():
    """Elu GPU registration."""
