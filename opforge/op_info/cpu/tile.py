"""Tile CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

tile_op_info = (
    CpuRegOp("Tile")
    .input(0, "x", "required")
    .output(0, "output", "required")
    .attr("multiples", "required", "listInt", "all")
    .dtype_formats(*DataType.ALL_Default)
    .get_op_info()
)


@op_info_register(tile_op_info)
def _tile_cpu():
    """Tile CPU registration."""
