"""AddN CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

add_n_op_info = (
    CpuRegOp("AddN")
    .input(0, "inputs", "dynamic")
    .output(0, "sum", "required")
    .dtype_formats(
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I8_Default,
        DataType.I16_Default,
        DataType.I32_Default,
        DataType.I64_Default,
        DataType.U8_Default,
    )
    .get_op_info()
)


@op_info_register(add_n_op_info)
def _add_n_cpu():
    """AddN CPU registration."""
