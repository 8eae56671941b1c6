"""Sort CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_sort = (
    CpuRegOp("Sort")
    .input(0, "x", "required")
    .output(0, "y1", "required")
    .output(1, "y2", "required")
    .attr("axis", "optional", "int", "all", "-1")
    .attr("descending", "optional", "bool", "all", "False")
)
for _t in ("F16", "BF16", "F32", "F64", "I8", "I16", "I32", "I64", "U8"):
    _sort = _sort.dtype_format(
        getattr(DataType, f"{_t}_Default"), getattr(DataType, f"{_t}_Default"), DataType.I32_Default
    )
sort_op_info = _sort.get_op_info()


@op_info_register(sort_op_info)
def _sort_cpu():
    """Sort CPU registration."""
