"""TopK CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_top_k = (
    CpuRegOp("TopK")
    .input(0, "input", "required")
    .output(0, "values", "required")
    .output(1, "indices", "required")
    .attr("k", "required", "int", "all")
    .attr("sorted", "optional", "bool", "all", "True")
)
for _t in ("F16", "BF16", "F32", "F64", "I8", "I16", "I32", "I64", "U8"):
    _top_k = _top_k.dtype_format(
        getattr(DataType, f"{_t}_Default"), getattr(DataType, f"{_t}_Default"), DataType.I32_Default
    )
top_k_op_info = _top_k.get_op_info()


@op_info_register(top_k_op_info)
def _top_k_cpu():
    """TopK CPU registration."""
