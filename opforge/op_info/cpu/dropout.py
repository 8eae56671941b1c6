"""Dropout CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

dropout_op_info = (
    CpuRegOp("Dropout")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .output(1, "mask", "required")
    .attr("keep_prob", "optional", "float", "all", "0.5")
    .attr("Seed0", "optional", "int", "all", "0")
    .attr("Seed1", "optional", "int", "all", "0")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(dropout_op_info)
def _dropout_cpu():
    """Dropout CPU registration."""
