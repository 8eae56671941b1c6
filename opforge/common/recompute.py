"""MindSpore's ``mindspore.recompute`` (``mindspore.common.recompute``): the functional form of
``Cell.recompute()``."""

from __future__ import annotations

from opforge.bprop.recompute import call_recomputed
from opforge.nn.cell import Cell

__all__ = ["recompute"]


def recompute(block, *args, **kwargs):
    """``block(*args, **kwargs)``, whose intermediate tensors are not kept while a gradient is taken: the backward
    pass runs the call again and differentiates that (opforge/bprop/recompute.py), in PYNATIVE_MODE and in
    GRAPH_MODE. ``block`` must be a Cell (TypeError otherwise, as MindSpore's); the keyword arguments go to it.
    Returns what ``block`` returns."""
    if not isinstance(block, Cell):
        raise TypeError(
            f"For 'recompute', the 'block' must be a Cell (recompute supports only blocks inherited from Cell), "
            f"but got {type(block).__name__}."
        )
    return call_recomputed(block, lambda: block(*args, **kwargs), args, kwargs, type(block).__name__)
