"""Conj CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

conj_op_info = (
    CpuRegOp("Conj")
    .input(0, "input", "required")
    .output(0, "output", "required")
    .dtype_formats(
        DataType.C64_Default,
        DataType.C128_Default,
        DataType.F16_Default,
        DataType.BF16_Default,
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    )
    .get_op_info()
)


@op_info_register(conj_op_info)
def _conj_cpu():
    """Conj CPU registration."""
