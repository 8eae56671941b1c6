"""MindSpore's ``mindspore.nn.utils``: ``no_init_parameters``."""

from __future__ import annotations

from contextlib import contextmanager

__all__ = ["no_init_parameters"]


@contextmanager
def no_init_parameters():
    """MindSpore's ``with no_init_parameters():`` around building a network and its optimizer: there, the
    Parameters made from ``initializer(...)`` keep no data until a checkpoint fills them or the first
    compilation initialises them (sliced, in a parallel mode), to save memory and time. opforge runs initialisers
    when a Parameter is made (``Tensor.init_data``), and a parallel network's first call splits its
    Parameters in place, so the block changes nothing: the values a network trains from, or loads, are the
    same."""
    yield
