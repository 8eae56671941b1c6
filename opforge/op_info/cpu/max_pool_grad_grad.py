"""MaxPoolGradGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

max_pool_grad_grad_op_info = (
    CpuRegOp("MaxPoolGradGrad")
    .input(0, "x_origin", "required")
    .input(1, "out_origin", "required")
    .input(2, "grad", "required")
    .output(0, "output", "required")
    .attr("kernel_size", "required", "listInt", "all", None)
    .attr("strides", "required", "listInt", "all", None)
    .attr("pad_mode", "required", "str", "VALID,SAME", None)
    .dtype_formats(DataType.F16_Default, DataType.BF16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(max_pool_grad_grad_op_info)
def _max_pool_grad_grad_cpu():
    """MaxPoolGradGrad CPU registration."""
