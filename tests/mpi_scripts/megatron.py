"""What several MPI scripts share: Megatron's column- then row-parallel MLP, and a tensor's whole value."""

import numpy as np

from opforge import nn
from opforge.dispatch.sharding import gather_whole, is_sharded


class MLP(nn.Cell):
    """``in_ -> hidden -> ReLU -> out`` with fc1 column-parallel and fc2 row-parallel over ``size`` ranks."""

    def __init__(self, in_: int, hidden: int, out: int, size: int, weight_init="normal", fc1_bias_init="zeros"):
        super().__init__()
        self.fc1 = nn.Dense(in_, hidden, weight_init=weight_init, bias_init=fc1_bias_init, activation="relu")
        self.fc2 = nn.Dense(hidden, out, weight_init=weight_init)
        self.fc1.matmul.shard(((1, 1), (size, 1)))
        self.fc1.bias_add.shard(((1, size), (size,)))
        self.fc2.matmul.shard(((1, size), (1, size)))

    def construct(self, x):
        return self.fc2(self.fc1(x))


def whole(t) -> np.ndarray:
    """``t``'s whole value on every rank (its blocks gathered when it is sharded: a collective)."""
    return gather_whole(t).asnumpy() if is_sharded(t) else t.asnumpy()
