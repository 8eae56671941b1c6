"""``nn.MicroBatchInterleaved`` and ``GradAccumulation`` (MindSpore's): the batch split into parts along dim 0,
the network run on each and the outputs added. MindSpore uses the first in semi-auto parallel so that one
part's communication overlaps another's computation, the second to accumulate gradients over micro-batches
(the gradient of the sum is the sum of the parts' gradients); opforge runs the parts one after the other (the
same values)."""

from __future__ import annotations

from opforge.nn.cell import Cell
from opforge.primitives import array_ops
from opforge.tensor import Tensor

__all__ = ["GradAccumulation", "GradAccumulationCell", "MicroBatchInterleaved"]

_slice = array_ops.Slice()


class MicroBatchInterleaved(Cell):
    r"""MindSpore's ``nn.MicroBatchInterleaved(network, interleave_num=2)``: ``cell(*inputs)`` is

    .. math:: \sum_{i=0}^{k-1} network(inputs[\lfloor iN/k \rfloor : \lfloor (i+1)N/k \rfloor])

    with :math:`k` = ``interleave_num`` and each Tensor input (of rank >= 1; others passed whole) sliced along
    dim 0 of size N (at least k). ``network`` must return one Tensor (usually a loss; note a mean loss becomes the
    sum of the parts' means, as MindSpore's). Parameters keep their names (``auto_prefix=False``).
    ``interleave_num`` an int > 0: else TypeError / ValueError, as MindSpore's."""

    _parts_arg = "interleave_num"

    def __init__(self, network, interleave_num=2):
        super().__init__(auto_prefix=False)
        name, arg = type(self).__name__, self._parts_arg
        if not isinstance(network, Cell):
            raise TypeError(f"For '{name}', the 'network' must be a Cell, but got {type(network).__name__}.")
        if isinstance(interleave_num, bool) or not isinstance(interleave_num, int):
            raise TypeError(
                f"For '{name}', the argument '{arg}' must be integer, but got the type : "
                f"{type(interleave_num).__name__}."
            )
        if interleave_num <= 0:
            raise ValueError(f"For '{name}', the argument '{arg}' must be large than 0, but got {interleave_num}.")
        self.network = network
        self.interleave_num = interleave_num

    def _part(self, x, i: int):
        if not isinstance(x, Tensor) or x.ndim == 0:
            return x
        n, k = x.shape[0], self.interleave_num
        if n < k:
            raise ValueError(
                f"For '{type(self).__name__}', each Tensor input's dim 0 must be at least {self._parts_arg} ({k}), "
                f"but got shape {list(x.shape)}."
            )
        begin, end = i * n // k, (i + 1) * n // k
        return _slice(x, (begin,) + (0,) * (x.ndim - 1), (end - begin, *x.shape[1:]))

    def construct(self, *inputs):
        output = None
        for i in range(self.interleave_num):
            out = self.network(*(self._part(x, i) for x in inputs))
            if not isinstance(out, Tensor):
                raise TypeError(
                    f"For '{type(self).__name__}', the output of the 'network' must be a single Tensor, but got "
                    f"{type(out).__name__}."
                )
            output = out if output is None else output + out
        return output

    def extend_repr(self) -> str:
        return f"interleave_num={self.interleave_num}"


class GradAccumulation(MicroBatchInterleaved):
    r"""MindSpore's ``GradAccumulation(network, micro_size)`` (``mindspore.parallel.nn``): ``cell(*inputs)`` is
    the sum of ``network`` over ``micro_size`` equal parts of the batch (dim 0 must divide by it: else a
    ValueError, as MindSpore's), so its gradient is the gradients of the micro-batches accumulated."""

    _parts_arg = "micro_size"

    def __init__(self, network, micro_size):
        super().__init__(network, micro_size)
        self.micro_size = micro_size

    def _part(self, x, i: int):
        if isinstance(x, Tensor) and x.ndim > 0 and x.shape[0] % self.micro_size:
            raise ValueError(
                f"For micro batch initialization, the 0th dimension shape of input({x.shape[0]}) must be divided by "
                f"micro size({self.micro_size})"
            )
        return super()._part(x, i)

    def extend_repr(self) -> str:
        return f"micro_size={self.micro_size}"


GradAccumulationCell = GradAccumulation  # MindSpore's older name (``nn.GradAccumulationCell(network, micro_size)``)
