"""UnsortedSegmentSum CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_uss = (
    CpuRegOp("UnsortedSegmentSum")
    .input(0, "x", "required")
    .input(1, "segment_ids", "required")
    .output(0, "y", "required")
    .attr("num_segments", "required", "int", "all")
)
for _t in (
    DataType.F16_Default,
    DataType.BF16_Default,
    DataType.F32_Default,
    DataType.F64_Default,
    DataType.I32_Default,
    DataType.I64_Default,
):
    for _i in (DataType.I32_Default, DataType.I64_Default):
        _uss = _uss.dtype_format(_t, _i, _t)
unsorted_segment_sum_op_info = _uss.get_op_info()


@op_info_register(unsorted_segment_sum_op_info)
def _unsorted_segment_sum_cpu():
    """UnsortedSegmentSum CPU registration."""
