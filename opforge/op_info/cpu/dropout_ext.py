"""DropoutExt CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

dropout_ext_op_info = (
    CpuRegOp("DropoutExt")
    .input(0, "input", "required")
    .input(1, "seed", "required")
    .input(2, "offset", "required")
    .output(0, "output", "required")
    .output(1, "mask", "required")
    .attr("p", "optional", "float", "all", "0.5")
    .dtype_format(
        DataType.F16_Default, DataType.I64_Default, DataType.I64_Default, DataType.F16_Default, DataType.F16_Default
    )
    .dtype_format(
        DataType.BF16_Default, DataType.I64_Default, DataType.I64_Default, DataType.BF16_Default, DataType.BF16_Default
    )
    .dtype_format(
        DataType.F32_Default, DataType.I64_Default, DataType.I64_Default, DataType.F32_Default, DataType.F32_Default
    )
    .dtype_format(
        DataType.F64_Default, DataType.I64_Default, DataType.I64_Default, DataType.F64_Default, DataType.F64_Default
    )
    .get_op_info()
)


@op_info_register(dropout_ext_op_info)
def _dropout_ext_cpu():
    """DropoutExt CPU registration."""
