"""Pipeline parallel's run context: while ``nn.PipelineCell`` runs a micro-batch, ``Cell.__call__`` hands
every cell that has a ``pipeline_stage`` to the current run (``opforge/nn/pipeline.py``), which runs the
cell when it belongs to this rank's stage, sends or receives at the stage boundaries, and evaluates the
other stages' cells abstractly (shapes only). Kept here, below ``nn``, so ``Cell`` needs no import of the
cell that drives it."""

from __future__ import annotations

import threading

__all__ = ["current_run", "running", "stage_of_rank", "stage_ranks", "register_forward", "forward_stages"]

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


_forward = [None, None]  # opforge/nn/pipeline.py's forward pass cut into stages (``register_forward``)


def register_forward(applies, runner) -> None:
    """``applies(cell)``: whether a network's outermost call is an evaluation cut into stages (pipeline inference
    without PipelineCell); ``runner(cell, call, args, kwargs)`` runs it stage by stage. Registered by
    opforge/nn/pipeline.py, reached by ``Cell`` here."""
    _forward[:] = [applies, runner]


def cuts_into_stages(cell) -> bool:
    applies = _forward[0]
    return current_run() is None and applies is not None and applies(cell)


def forward_stages(cell, call, args: tuple, kwargs: dict):
    """``call(*args, **kwargs)`` cut into the pipeline's stages by the registered runner."""
    return _forward[1](cell, call, args, kwargs)


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
