"""NMSWithMask CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_nms = (
    CpuRegOp("NMSWithMask")
    .input(0, "bboxes", "required")
    .output(0, "selected_boxes", "required")
    .output(1, "selected_idx", "required")
    .output(2, "selected_mask", "required")
    .attr("iou_threshold", "optional", "float", "all", "0.5")
)
for _t in (DataType.F16_Default, DataType.F32_Default):
    _nms = _nms.dtype_format(_t, _t, DataType.I32_Default, DataType.BOOL_Default)
nms_with_mask_op_info = _nms.get_op_info()


@op_info_register(nms_with_mask_op_info)
def _nms_with_mask_cpu():
    """NMSWithMask CPU registration."""
