"""ROIAlign and ROIAlignGrad CPU op info: the same attrs, and the same dtype for every input and output."""

from opforge.op_info import CpuRegOp, DataType, op_info_register


def _roi_align_op_info(name: str, first: str, output: str):
    return (
        CpuRegOp(name)
        .input(0, first, "required")
        .input(1, "rois", "required")
        .output(0, output, "required")
        .attr("pooled_height", "required", "int", "all", None)
        .attr("pooled_width", "required", "int", "all", None)
        .attr("spatial_scale", "required", "float", "all", None)
        .attr("sample_num", "optional", "int", "all", "2")
        .attr("roi_end_mode", "optional", "int", "all", "1")
        .dtype_formats(DataType.F16_Default, DataType.F32_Default, DataType.F64_Default)
        .get_op_info()
    )


roi_align_op_info = _roi_align_op_info("ROIAlign", "features", "output")
roi_align_grad_op_info = _roi_align_op_info("ROIAlignGrad", "dy", "dx")


@op_info_register(roi_align_op_info)
def _roi_align_cpu():
    """ROIAlign CPU registration."""


@op_info_register(roi_align_grad_op_info)
def _roi_align_grad_cpu():
    """ROIAlignGrad CPU registration."""
