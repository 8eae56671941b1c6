"""BatchNorm CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

batch_norm_op_info = (
    CpuRegOp("BatchNorm")
    .input(0, "x", "required")
    .input(1, "scale", "required")
    .input(2, "offset", "required")
    .input(3, "mean", "required")
    .input(4, "variance", "required")
    .output(0, "y", "required")
    .output(1, "batch_mean", "required")
    .output(2, "batch_variance", "required")
    .output(3, "reserve_space_1", "required")
    .output(4, "reserve_space_2", "required")
    .attr("is_training", "optional", "bool", "all", "False")
    .attr("epsilon", "optional", "float", "all", "1e-05")
    .attr("momentum", "optional", "float", "all", "0.1")
    .attr("data_format", "optional", "str", "all", "NCHW")
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(batch_norm_op_info)
def _batch_norm_cpu():
    """BatchNorm CPU registration."""
