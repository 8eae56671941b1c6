"""Log GPU op info."""

from opforge.op_info import DataType, GpuRegOp, op_info_register

log_op_info = (
    GpuRegOp("Log")
    .input(0, "x", "required")
    .output(0, "y", "required")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(log_op_info)
def _log_gpu():
    """Log GPU registration."""
