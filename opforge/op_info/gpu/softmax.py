"""Softmax GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

softmax_op_info = (
    GpuRegOp("Softmax")
    .input(0, "logits", "required")
    .output(0, "output", "required")
    .attr("axis", "optional", "listInt", "all", "(-1,)")
    .dtype_formats(DataType.F16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(softmax_op_info)
def _softmax_gpu():
    """Softmax GPU registration."""
