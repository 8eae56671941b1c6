"""Where a parallel network's output handed out as one rank's block sits in the whole tensor.

MindSpore's ranks get their own slice of a split output as a plain Tensor: operators, ``asnumpy`` and
``print`` then read that slice. opforge hands such an output out the same way, and remembers here the
layout and the global shape of the block, so that ``sharding.gather_whole`` can still assemble the whole
value and a trace replaying the network hands out each replay's block with the same placement. Kept by
identity, weakly: a Tensor forgets its placement when it is collected. (Below ``sharding`` and ``trace``,
which both read it.)"""

from __future__ import annotations

import weakref

_placements: dict = {}  # id(tensor) -> (weak reference, layout, global shape)


def place(block, layout, shape: tuple):
    """Remember that the plain Tensor ``block`` is this rank's block of a tensor of global ``shape`` laid out as
    ``layout``; returns ``block``."""
    key = id(block)
    _placements[key] = (weakref.ref(block, lambda _ref: _placements.pop(key, None)), layout, tuple(shape))
    return block


def placement_of(t):
    """``(layout, global shape)`` of a block handed out by ``place``, else None."""
    entry = _placements.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    return entry[1], entry[2]


def placer(layout):
    """A function placing a new block as ``layout`` says (the global shape the block's times the splits: a
    replay of other shapes, dynamic ones, places its own): what a trace's replay calls on the block it returns."""
    return lambda block: place(block, layout, tuple(n * layout.splits(i) for i, n in enumerate(block._meta[1])))
