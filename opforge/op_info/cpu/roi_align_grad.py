"""ROIAlignGrad CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

roi_align_grad_op_info = (
    CpuRegOp("ROIAlignGrad")
    .input(0, "dy", "required")
    .input(1, "rois", "required")
    .output(0, "dx", "required")
    .attr("pooled_height", "required", "int", "all", None)
    .attr("pooled_width", "required", "int", "all", None)
    .attr("spatial_scale", "required", "float", "all", None)
    .attr("sample_num", "optional", "int", "all", "2")
    .attr("roi_end_mode", "optional", "int", "all", "1")
    .dtype_formats(DataType.F16_Default, DataType.F32_Default, DataType.F64_Default)
    .get_op_info()
)


@op_info_register(roi_align_grad_op_info)
def _roi_align_grad_cpu():
    """ROIAlignGrad CPU registration."""
