"""GPU op info. The GPU has a kernel for every KernelAttr the CPU registers (opforge/kernels/gpu/
mirrors them), so an operator's GPU declaration is its CPU one, ``CpuRegOp`` rows and all, with the
GPU as its target: one list of dtypes per operator, declared once in ``opforge/op_info/cpu/``.

A GPU-only operator (a user's) registers its own ``GpuRegOp`` op info instead.
"""

from __future__ import annotations

import dataclasses

from opforge.op_info import cpu as _cpu  # noqa: F401 - the declarations mirrored here
from opforge.op_info.reg_op import OpInfo
from opforge.op_info.registry import all_op_infos, get_op_info, op_info_register

__all__ = ["mirror_cpu_op_info"]


def mirror_cpu_op_info(op_name: str) -> OpInfo:
    """Register ``op_name``'s CPU op info for the GPU too; returns the GPU's."""
    cpu = get_op_info(op_name, "CPU")
    if cpu is None:
        raise ValueError(f"For '{op_name}', there is no CPU op info to declare the GPU kernels with.")
    gpu = dataclasses.replace(cpu, backend="GPU")
    op_info_register(gpu)
    return gpu


# Every built-in operator: one without its GPU kernels then shows in `opforge doctor`.
for _info in all_op_infos():
    if _info.backend == "CPU":
        mirror_cpu_op_info(_info.op_name)
