"""MindSpore's ``ops.RandomChoiceWithMask``, composed of a uniform draw (``UniformReal``'s seeded kernel), TopK
and integer math, so it runs on the CPU and the GPU and inside ``jit`` (no data read on the host)."""

from __future__ import annotations

from opforge import dtype as mstype
from opforge.ops import functional as F
from opforge.ops.frontend_random import UniformReal
from opforge.ops.host_op import HostOp
from opforge.primitives import array_ops
from opforge.tensor import Tensor

__all__ = ["RandomChoiceWithMask"]


class RandomChoiceWithMask(HostOp):
    r"""MindSpore's ``ops.RandomChoiceWithMask(count=256, seed=0, seed2=0)``: ``(index, mask)`` for a bool
    ``input_x`` of 1 to 5 dims: up to ``count`` of its True positions, chosen at random without replacement, in a
    random order. ``index`` int32 [count, rank] holds their coordinates, ``mask`` bool [count] says which rows
    are real; rows past the number of True elements are zeros with ``mask`` False (as MindSpore's).

    Every element draws :math:`u \sim U[0, 1)`; the True ones are ranked by :math:`u` (False ones get -1) and
    TopK keeps the first ``count``. Seeds as ``UniformReal(seed, seed2)``: each call draws anew, and a program
    seeded with ``set_seed`` draws the same each run. Not differentiable (its outputs are integers/bools)."""

    def __init__(self, count=256, seed=0, seed2=0):
        for name, value in (("count", count), ("seed", seed), ("seed2", seed2)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(
                    f"For 'RandomChoiceWithMask', the '{name}' must be an int, but got {type(value).__name__}."
                )
        if count < 1:
            raise ValueError(f"For 'RandomChoiceWithMask', the 'count' must be > 0, but got {count}.")
        if seed < 0 or seed2 < 0:
            raise ValueError(f"For 'RandomChoiceWithMask', the seeds must be >= 0, but got {seed} and {seed2}.")
        self.count, self.seed, self.seed2 = count, seed, seed2
        self._uniform = UniformReal(seed, seed2)

    def __call__(self, input_x):
        if not isinstance(input_x, Tensor):
            raise TypeError(
                f"For 'RandomChoiceWithMask', the 'input_x' must be a Tensor, but got {type(input_x).__name__}."
            )
        if input_x.dtype != mstype.bool_:
            raise TypeError(f"For 'RandomChoiceWithMask', the 'input_x' must be bool, but got {input_x.dtype}.")
        if not 1 <= input_x.ndim <= 5:
            raise ValueError(
                f"For 'RandomChoiceWithMask', the 'input_x' must have 1 to 5 dims, but got shape {list(input_x.shape)}."
            )
        shape = tuple(input_x.shape)
        n = int(F.size(input_x))
        flat = F.reshape(input_x, (n,))
        key = F.select(flat, self._uniform((n,)), F.fill(mstype.float32, (n,), -1.0))
        k = min(self.count, n)
        values, order = array_ops.TopK(sorted=True)(key, k)
        mask = F.greater_equal(values, 0.0)
        position = F.cast(order, mstype.int32) * F.cast(mask, mstype.int32)
        coords, stride = [], 1
        for dim in reversed(shape):  # unravel the flat position, last dim first
            coords.append((position // stride) % dim)
            stride *= dim
        index = F.stack(coords[::-1], axis=1)
        if k < self.count:  # fewer elements than count: zero rows, masked out
            index = F.concat((index, F.zeros((self.count - k, len(shape)), mstype.int32)), axis=0)
            mask = F.concat((mask, F.zeros((self.count - k,), mstype.bool_)), axis=0)
        return index, mask
