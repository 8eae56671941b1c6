"""ReLU6 CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

relu6_op_info = (
    CpuRegOp("ReLU6")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(relu6_op_info)
def _relu6_cpu():
    """ReLU6 CPU registration."""
