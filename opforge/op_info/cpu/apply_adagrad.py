"""ApplyAdagrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

apply_adagrad_op_info = (
    CpuRegOp("ApplyAdagrad")
    .input(0, "var", "required")
    .input(1, "accum", "required")
    .input(2, "lr", "required")
    .input(3, "grad", "required")
    .output(0, "var", "required")
    .output(1, "accum", "required")
    .attr("update_slots", "optional", "bool", "all", "True")
    .dtype_format(*[DataType.F16_Default] * 6)  # 4 inputs, 2 outputs, all one dtype
    .dtype_formats(*[DataType.F32_Default] * 6, *[DataType.F64_Default] * 6)
    .get_op_info()
)


@op_info_register(apply_adagrad_op_info)
def _apply_adagrad_cpu():
    """ApplyAdagrad CPU registration."""
