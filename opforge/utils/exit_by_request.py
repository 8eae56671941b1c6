"""MindSpore's ``ExitByRequest`` (``mindspore.utils``): the collective half of a graceful exit.

A training step built with ``MS_ENABLE_GRACEFUL_EXIT=1`` (``nn.TrainOneStepCell``) holds two Parameters:
``graceful_init`` (int32 ``[0]``; a rank asked to stop sets it to ``[1]``, ``train.OnRequestExit`` does) and
``graceful_exit`` (bool). Each step sums ``graceful_init`` over the ranks and writes into ``graceful_exit``
whether every rank asked, so that all ranks stop after the same step. In one process the callback sets
``graceful_exit`` itself and the step does nothing."""

from __future__ import annotations

import numpy as np

from opforge import dtype as mstype
from opforge.communication.management import GlobalComm, get_group_size
from opforge.primitives.array_ops import Assign
from opforge.primitives.comm_ops import AllReduce
from opforge.primitives.math_ops import Equal, ReduceAll
from opforge.tensor import Tensor

__all__ = ["ExitByRequest"]


class ExitByRequest:
    """``exit_by_request(grad, init_value, exit_value)``: with several ranks, ``exit_value`` (a bool Parameter)
    becomes whether ``init_value`` (an int32 ``[1]``-shaped Parameter) is 1 on every rank; returns ``grad``."""

    def __init__(self):
        self.group_size = get_group_size() if GlobalComm.INITED else 1
        self.is_distributed = self.group_size > 1
        self.all_reduce, self.equal, self.reduce_all, self.assign = AllReduce(), Equal(), ReduceAll(), Assign()
        self.base = Tensor(np.array([self.group_size], np.int32), mstype.int32)

    def exit_by_request(self, grad, init_value, exit_value):
        if self.is_distributed:
            asked = self.reduce_all(self.equal(self.all_reduce(init_value), self.base))
            self.assign(exit_value, asked)
        return grad
