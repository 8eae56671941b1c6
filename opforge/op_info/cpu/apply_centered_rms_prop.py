"""ApplyCenteredRMSProp CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

apply_centered_rms_prop_op_info = (
    CpuRegOp("ApplyCenteredRMSProp")
    .input(0, "var", "required")
    .input(1, "mean_gradient", "required")
    .input(2, "mean_square", "required")
    .input(3, "moment", "required")
    .input(4, "grad", "required")
    .input(5, "learning_rate", "required")
    .input(6, "decay", "required")
    .input(7, "momentum", "required")
    .input(8, "epsilon", "required")
    .output(0, "var", "required")
    .attr("use_locking", "optional", "bool", "all", "False")
    .dtype_format(*[DataType.F16_Default] * 10)  # 9 inputs, 1 output, all one dtype
    .dtype_formats(*[DataType.F32_Default] * 10, *[DataType.F64_Default] * 10)
    .get_op_info()
)


@op_info_register(apply_centered_rms_prop_op_info)
def _apply_centered_rms_prop_cpu():
    """ApplyCenteredRMSProp CPU registration."""
