"""Pipeline parallel's run context: while ``nn.PipelineCell`` runs a micro-batch, ``Cell.__call__`` hands
every cell that has a ``pipeline_stage`` to the current run (``opforge/nn/pipeline.py``), which runs the
cell when it belongs to this rank's stage, sends or receives at the stage boundaries, and evaluates the
other stages' cells abstractly (shapes only). Kept here, below ``nn``, so ``Cell`` needs no import of the
cell that drives it."""

from __future__ import annotations

import threading

__all__ = ["current_run", "running", "stage_of_rank", "stage_ranks"]

_state = threading.local()


def stage_of_rank(rank: int, world: int, stages: int) -> int:
    """The pipeline stage of ``rank``: the ranks split into ``stages`` consecutive groups."""
    if stages < 1 or world % stages:
        raise ValueError(
            f"For 'PipelineCell', the 'pipeline_stages' ({stages}) must divide the number of devices ({world})."
        )
    return rank // (world // stages)


def stage_ranks(rank: int, world: int, stages: int) -> tuple:
    """The world ranks of ``rank``'s pipeline stage (consecutive)."""
    per_stage = world // stages
    first = stage_of_rank(rank, world, stages) * per_stage
    return tuple(range(first, first + per_stage))


def current_run():
    """The pipeline run of this thread, or None."""
    return getattr(_state, "run", None)


class running:
    """``with running(run):`` makes ``run`` the thread's pipeline run."""

    def __init__(self, run):
        self.run = run

    def __enter__(self):
        self.previous = current_run()
        _state.run = self.run
        return self.run

    def __exit__(self, *exc) -> None:
        _state.run = self.previous
