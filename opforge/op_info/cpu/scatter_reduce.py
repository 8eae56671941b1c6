"""The reducing scatters' CPU op info: ScatterR and ScatterNdR (in place, ``use_locking``) and TensorScatterR,
for R in Add, Sub, Mul, Div, Max, Min (one kernel template, csrc/kernels/cpu/gather.cc)."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_REDUCTIONS = {"Add": DataType.NUMBER_Default, "Sub": DataType.NUMBER_Default, "Mul": DataType.NUMBER_Default}
_REDUCTIONS.update({"Div": DataType.FLOAT_Default, "Max": DataType.NUMBER_Default, "Min": DataType.NUMBER_Default})


def _scatter_op_info(name: str, dtypes, in_place: bool):
    reg = (
        CpuRegOp(name)
        .input(0, "input_x", "required")
        .input(1, "indices", "required")
        .input(2, "updates", "required")
        .output(0, "y", "required")
    )
    if in_place:
        reg = reg.attr("use_locking", "optional", "bool", "all", "False")
    for t in dtypes:
        for i in (DataType.I32_Default, DataType.I64_Default):
            reg = reg.dtype_format(t, i, t, t)
    return reg.get_op_info()


scatter_reduce_op_infos = tuple(
    _scatter_op_info(f"{spelling}{r}", dtypes, spelling != "TensorScatter")
    for r, dtypes in _REDUCTIONS.items()
    for spelling in ("Scatter", "ScatterNd", "TensorScatter")
)
for _info in scatter_reduce_op_infos:
    op_info_register(_info)
