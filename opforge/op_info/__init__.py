"""Op info: per-backend declarations of which dtypes each operator supports."""

from opforge.op_info.data_type import DataType
from opforge.op_info.reg_op import CpuRegOp, CustomRegOp, GpuRegOp, OpInfo, RegOp
from opforge.op_info.registry import OpInfoMismatchError, all_op_infos, get_op_info, op_info_register

__all__ = [
    "DataType",
    "RegOp",
    "CpuRegOp",
    "GpuRegOp",
    "CustomRegOp",
    "OpInfo",
    "op_info_register",
    "get_op_info",
    "all_op_infos",
    "OpInfoMismatchError",
]
