"""What a GPU call checks of its inputs' values, checked on the device as the call runs: Gather's indices,
the sparse and NLL losses' labels, GatherNd's and the scatters' index rows, Polygamma's order, and the status a
factorization leaves per matrix. A value the CPU kernel would refuse is an error naming the operator, as there.

A check kernel (``RangeCheckKernel`` and ``RowRangeCheckKernel`` of ``csrc/kernels/cuda/range_check.cu``) gives
the call's kernels a copy of the indices with every bad value read as 0 (so they stay in bounds) and leaves the
least bad position in a word (``flag_word``); a check step of the call's ``device_launch`` reads that word back
after the launches (one copy to the host: in C where the call launches from C) and raises the error there
(``raise_flagged``); while a device graph is captured, after each launch of the graph."""

from __future__ import annotations

import numpy as np

from opforge.kernels.gpu.cuda import CudaKernel, function_for, register_device_kernel
from opforge.kernels.gpu.fill import fill_steps
from opforge.kernels.gpu.support import StepPlan, check_step

__all__ = ["checked_row_steps", "checked_steps", "failure_steps", "flag_word", "raise_flagged"]

_KERNELS = {  # (dtype, whether one value out of range is let through)
    (np.dtype(t), ignore): register_device_kernel(
        CudaKernel("range_check.cu", f"opforge::cuda::RangeCheckKernel<{t}_t, {str(ignore).lower()}>", None)
    )
    for t in ("int32", "int64")
    for ignore in (False, True)
}
_ROW_KERNELS = {
    np.dtype(t): register_device_kernel(
        CudaKernel("range_check.cu", f"opforge::cuda::RowRangeCheckKernel<{t}_t>", None)
    )
    for t in ("int32", "int64")
}


def checked_steps(plan: StepPlan, indices: tuple, n: int, np_dtype, bound: int, error, ignore=None) -> tuple:
    """Steps of ``plan`` giving its kernels the indices ``("in", i)`` (``n`` of ``np_dtype``, int32 or int64) as
    they may read them: returns the param of the in-range copy. After the plan's launches, a value out of
    ``[0, bound)`` (other than ``ignore``, where given) raises ``error(position, value)``."""
    runtime, np_dtype = plan.runtime, np.dtype(np_dtype)
    word, safe = flag_word(plan, n), plan.temp((n,), np_dtype)
    function = function_for(runtime, _KERNELS[np_dtype, ignore is not None])
    sizes = (np.int64(n), np.int64(bound), np.int64(0 if ignore is None else ignore))
    plan.kernel(function, n, [indices, safe, *sizes, word])
    raise_flagged(plan, word, n, lambda position, host: error(position, int(host.reshape(-1)[position])), indices[1])
    return safe


def checked_row_steps(plan: StepPlan, indices: tuple, rows: int, nd, np_dtype, error, before_writes=False) -> tuple:
    """``checked_steps`` for ``rows`` index rows of ``nd["k"]`` coordinates (``nd``: the ``NdIndex`` struct of
    ``functors/gather.h``), coordinate d in ``[0, nd["dim"][d])``; a bad row raises ``error(host)``, ``host``
    the indices copied to the host (the message names the row from them). ``before_writes``: the check runs
    before the steps added after it (a scatter into a Parameter writes nothing when it raises; a device graph
    cannot hold such a check, so its capture gives up)."""
    runtime, np_dtype, k = plan.runtime, np.dtype(np_dtype), int(nd["k"])
    word, safe = flag_word(plan, rows), plan.temp((rows * k,), np_dtype)
    plan.kernel(function_for(runtime, _ROW_KERNELS[np_dtype]), rows, [indices, safe, np.int64(rows), nd, word])
    raise_flagged(plan, word, rows, lambda row, host: error(host), indices[1], before_writes)
    return safe


def failure_steps(plan: StepPlan, info: tuple, n: int, error) -> None:
    """Steps of ``plan`` raising ``error(position)`` after its launches where the int32 ``info`` (a param of
    ``n``: a factorization's status per matrix, 0 done, -1 a non-finite input, > 0 failed) is above 0."""
    word, spare = flag_word(plan, n), plan.temp((n,), np.int32)
    function = function_for(plan.runtime, _KERNELS[np.dtype(np.int32), True])
    plan.kernel(function, n, [info, spare, np.int64(n), np.int64(1), np.int64(-1), word])
    raise_flagged(plan, word, n, lambda position, host: error(position), None)


def flag_word(plan: StepPlan, n: int) -> tuple:
    """The uint64 temporary a check kernel leaves the least bad position in: ``n`` (none) to begin with."""
    word = plan.temp((1,), np.uint64)
    plan.steps += fill_steps(plan.runtime, (1,), np.uint64, n, word)
    return word


def raise_flagged(plan: StepPlan, word: tuple, n: int, error, where, now: bool = False) -> None:
    """The check step of ``word``: where it holds a position below ``n``, ``error(position, host)`` is raised,
    ``host`` the call's input ``where`` copied to the host (a tuple of them for a tuple of inputs; None without
    one). ``now``: before the steps added later (while a graph is captured, its copy to the host is refused
    then), else after all of the plan's."""
    runtime = plan.runtime

    def host(inputs):
        if isinstance(where, tuple):
            return tuple(runtime.to_host(inputs[i]) for i in where)
        return None if where is None else runtime.to_host(inputs[where])

    def raised(position, inputs):
        return error(position, host(inputs))

    def fallback(first, inputs):
        def check():
            position = int(runtime.to_host(first)[0])
            if position < n:
                raise raised(position, inputs)

        if runtime.capturing() and not now:
            runtime.after_launch(check)
        else:
            check()

    if now:
        plan.steps.append(check_step(word, n, raised, fallback))
    else:
        plan.check(word, n, raised, fallback)
