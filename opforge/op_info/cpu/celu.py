"""CeLU CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

celu_op_info = (
    CpuRegOp("CeLU")
    .input(0, "input_x", "required")
    .output(0, "output", "required")
    .attr("alpha", "optional", "float", "all", "1.0")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(celu_op_info)
def _celu_cpu():
    """CeLU CPU registration."""
