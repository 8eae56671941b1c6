"""BatchMatMul CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

batch_matmul_op_info = (
    CpuRegOp("BatchMatMul")
    .input(0, "x1", "required")
    .input(1, "x2", "required")
    .output(0, "output", "required")
    .attr("transpose_a", "required", "bool", "all", "False")
    .attr("transpose_b", "required", "bool", "all", "False")
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


@op_info_register(batch_matmul_op_info)
def _batch_matmul_cpu():
    """BatchMatMul CPU registration."""
