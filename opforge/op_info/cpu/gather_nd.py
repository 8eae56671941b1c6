"""GatherNd CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_gather_nd = (
    CpuRegOp("GatherNd").input(0, "input_x", "required").input(1, "indices", "required").output(0, "y", "required")
)
for _t in DataType.ALL_Default:
    for _i in (DataType.I32_Default, DataType.I64_Default):
        _gather_nd = _gather_nd.dtype_format(_t, _i, _t)
gather_nd_op_info = _gather_nd.get_op_info()


@op_info_register(gather_nd_op_info)
def _gather_nd_cpu():
    """GatherNd CPU registration."""
