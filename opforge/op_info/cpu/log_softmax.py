"""LogSoftmax CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

log_softmax_op_info = (
    CpuRegOp("LogSoftmax")
    .input(0, "logits", "required")
    .output(0, "output", "required")
    .attr("axis", "optional", "int", "all", "-1")
    .dtype_formats(DataType.F16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(log_softmax_op_info)
def _log_softmax_cpu():
    """LogSoftmax CPU registration."""
