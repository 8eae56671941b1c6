"""MindSpore's ``mindspore.parallel._utils``: the helpers model-zoo training scripts call to read the
parallel setup (``_get_device_num``, ``_get_parallel_mode``, ``_get_gradients_mean``, ``_get_global_rank``,
...), over opforge's auto-parallel context and communication state."""

from __future__ import annotations

from opforge.parallel._auto_parallel_context import _get_auto_parallel_context
from opforge.parallel_context import ParallelMode

__all__ = [
    "_get_device_num",
    "_get_global_rank",
    "_get_parallel_mode",
    "_get_gradients_mean",
    "_get_parameter_broadcast",
    "_get_enable_parallel_optimizer",
    "_get_pipeline_stages",
    "_get_stage_device_num",
    "_get_full_batch",
    "_is_in_auto_parallel_mode",
    "_is_sharding_propagation",
    "_device_number_check",
]


def _get_device_num() -> int:
    """``device_num`` when set, else the communication world's size (1 before ``init``)."""
    return _get_auto_parallel_context("device_num")


def _get_global_rank() -> int:
    return _get_auto_parallel_context("global_rank")


def _get_parallel_mode() -> str:
    return _get_auto_parallel_context("parallel_mode")


def _get_gradients_mean() -> bool:
    return _get_auto_parallel_context("gradients_mean")


def _get_parameter_broadcast() -> bool:
    return _get_auto_parallel_context("parameter_broadcast")


def _get_enable_parallel_optimizer() -> bool:
    return _get_auto_parallel_context("enable_parallel_optimizer")


def _get_pipeline_stages() -> int:
    return _get_auto_parallel_context("pipeline_stages")


def _get_stage_device_num() -> int:
    """The ranks of one pipeline stage."""
    return _get_device_num() // _get_pipeline_stages()


def _get_full_batch() -> bool:
    return _get_auto_parallel_context("full_batch")


def _is_in_auto_parallel_mode() -> bool:
    return _get_parallel_mode() in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)


def _is_sharding_propagation() -> bool:
    return (
        _get_parallel_mode() == ParallelMode.AUTO_PARALLEL
        and _get_auto_parallel_context("search_mode") == "sharding_propagation"
    )


def _device_number_check(parallel_mode, device_number) -> None:
    """A stand-alone job runs on one device: a ValueError otherwise."""
    if parallel_mode == ParallelMode.STAND_ALONE and device_number != 1:
        raise ValueError(f"If the parallel_mode is stand_alone, the device_number must be 1, but got {device_number}.")
