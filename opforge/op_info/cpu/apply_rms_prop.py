"""ApplyRMSProp CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

apply_rms_prop_op_info = (
    CpuRegOp("ApplyRMSProp")
    .input(0, "var", "required")
    .input(1, "mean_square", "required")
    .input(2, "moment", "required")
    .input(3, "learning_rate", "required")
    .input(4, "grad", "required")
    .input(5, "decay", "required")
    .input(6, "momentum", "required")
    .input(7, "epsilon", "required")
    .output(0, "var", "required")
    .attr("use_locking", "optional", "bool", "all", "False")
    .dtype_format(*[DataType.F16_Default] * 9)  # 8 inputs, 1 output, all one dtype
    .dtype_formats(*[DataType.F32_Default] * 9, *[DataType.F64_Default] * 9)
    .get_op_info()
)


@op_info_register(apply_rms_prop_op_info)
def _apply_rms_prop_cpu():
    """ApplyRMSProp CPU registration."""
