"""RandExt CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_random = (
    CpuRegOp("RandExt")
    .input(0, "seed", "required")
    .input(1, "offset", "required")
    .output(0, "output", "required")
    .attr("shape", "required", "listInt", "all")
    .attr("dtype", "required", "type", "all")
)
for _t in DataType.FLOAT_Default:
    _random = _random.dtype_format(DataType.I64_Default, DataType.I64_Default, _t)
rand_ext_op_info = _random.get_op_info()


@op_info_register(rand_ext_op_info)
def _rand_ext_cpu():
    """RandExt CPU registration."""
