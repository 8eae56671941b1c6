"""Wrapper cells: a network with its loss, and one training step (forward, backward, update)."""

from __future__ import annotations

import numbers
import os

import numpy as np

from opforge import context
from opforge import dtype as mstype
from opforge.bprop.grad_operation import GradOperation, _value_and_grad
from opforge.dispatch import sharding
from opforge.dispatch.trace import TraceError, tracing
from opforge.nn.cell import Cell
from opforge.nn.grad_reducer import DistributedGradReducer
from opforge.nn.layers import Identity
from opforge.nn.mixed_precision import mixed_precision_cast
from opforge.nn.optim import Optimizer
from opforge.nn.pipeline import PipelineCell
from opforge.nn.virtual_dataset import _VirtualDatasetCell  # noqa: F401 (MindSpore's cell_wrapper has it)
from opforge.parallel.auto_parallel import AutoParallel
from opforge.parallel_context import ParallelMode, _is_set, get_auto_parallel_context, optimizer_parallel
from opforge.tensor import Parameter, Tensor
from opforge.utils import ExitByRequest

__all__ = ["WithLossCell", "TrainOneStepCell", "WithEvalCell"]


class WithLossCell(Cell):
    """``loss_fn(backbone(data), label)``: a network and its loss as one cell."""

    def __init__(self, backbone: Cell, loss_fn: Cell):
        super().__init__(auto_prefix=False)
        if not isinstance(backbone, Cell) or not isinstance(loss_fn, Cell):
            raise TypeError("For 'WithLossCell', the 'backbone' and the 'loss_fn' must be Cells.")
        self._backbone = backbone
        self._loss_fn = loss_fn

    @property
    def backbone_network(self) -> Cell:
        return self._backbone

    def construct(self, data, label):
        cells = self._cells  # (attribute access to a Cell goes through __getattr__)
        return cells["_loss_fn"](cells["_backbone"](data), label)


class WithEvalCell(Cell):
    """``(loss, outputs, label)`` for evaluation: the network's outputs with their loss. With
    ``add_cast_fp32`` (what ``Model`` sets at amp O2, O3 and auto) the outputs and the label are cast to
    float32 first."""

    def __init__(self, network: Cell, loss_fn: Cell, add_cast_fp32: bool = False):
        super().__init__(auto_prefix=False)
        if not isinstance(add_cast_fp32, bool):
            raise TypeError(f"For 'WithEvalCell', the 'add_cast_fp32' must be bool, but got {add_cast_fp32!r}.")
        self._network = network
        self._loss_fn = loss_fn
        self.add_cast_fp32 = add_cast_fp32

    def construct(self, data, label):
        outputs = self._network(data)
        if self.add_cast_fp32:
            label = mixed_precision_cast(mstype.float32, label)
            outputs = mixed_precision_cast(mstype.float32, outputs)
        return self._loss_fn(outputs, label), outputs, label


def _pipeline_of(network):
    """The ``PipelineCell`` that ``network`` is, or that an ``AutoParallel`` cell wraps; else None."""
    if isinstance(network, AutoParallel):
        network = network.network
    return network if isinstance(network, PipelineCell) else None


class TrainOneStepCell(Cell):
    """One training step: ``loss = network(*inputs)``, the gradients of the loss with respect to
    the optimizer's parameters, then ``optimizer(grads)``. Returns the loss (before the update).

    ``network`` is usually a ``WithLossCell``. ``sens`` is the loss's sensitivity (as MindSpore's
    ``F.fill(loss.dtype, loss.shape, sens)``): the gradients are ``sens`` times those of the loss.
    The network is put in training mode.

    Data parallel (``set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL)``), as
    MindSpore's: ``reducer_flag`` is True and ``grad_reducer`` is an ``nn.DistributedGradReducer`` of the
    weights (``mean`` from ``gradients_mean``, ``degree`` from ``device_num`` when it was set, else the
    world's size) that all-reduces the gradients before the optimizer, each fused bucket starting while
    the backward pass goes on. With ``parameter_broadcast`` (on by default) the weights are broadcast
    from rank 0 here, so every rank starts equal.
    """

    def __init__(self, network: Cell, optimizer: Optimizer, sens: float = 1.0):
        super().__init__(auto_prefix=False)
        if not isinstance(network, Cell):
            raise TypeError(f"For 'TrainOneStepCell', the 'network' must be a Cell, but got {type(network)}.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"For 'TrainOneStepCell', the 'optimizer' must be an Optimizer, but got {type(optimizer)}.")
        if isinstance(sens, bool) or not isinstance(sens, numbers.Real):
            raise TypeError(f"For 'TrainOneStepCell', the 'sens' must be a float, but got {type(sens).__name__}.")
        self.network = network
        self.network.set_train()
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.sens = float(sens)
        self.parallel_mode = get_auto_parallel_context("parallel_mode")
        self.reducer_flag = self.parallel_mode == ParallelMode.DATA_PARALLEL
        self.grad_reducer = Identity()  # MindSpore's: subclasses call self.grad_reducer(grads) unconditionally
        on_ready = None
        if self.reducer_flag:
            mean = get_auto_parallel_context("gradients_mean")
            degree = get_auto_parallel_context("device_num") if _is_set("device_num") else None
            self.grad_reducer = DistributedGradReducer(self.weights, mean, degree)
            if get_auto_parallel_context("parameter_broadcast"):
                self.grad_reducer.broadcast_parameters()
            if self.grad_reducer.group_size > 1:
                on_ready = self.grad_reducer.ready
        self._value_and_grad = _value_and_grad(
            self.network, None, self.weights, False, "TrainOneStepCell", True, on_ready
        )
        # MindSpore's graceful exit (train.OnRequestExit): two flags, and a step that agrees on them across ranks
        self.use_graceful_exit = os.environ.get("MS_ENABLE_GRACEFUL_EXIT") == "1"
        if self.use_graceful_exit:
            self.graceful_exit = ExitByRequest()
            self.exit_param = Parameter(Tensor(False, mstype.bool_), name="graceful_exit")
            self.init_param = Parameter(Tensor(np.array([0], np.int32)), name="graceful_init")

    # MindSpore's attributes, for subclasses that write their own construct (the model zoo's BERT, ...)
    @property
    def grad(self):
        """``GradOperation(get_by_list=True, sens_param=True)``: ``self.grad(network, weights)(*inputs, sens)``."""
        return GradOperation(get_by_list=True, sens_param=True)

    @property
    def grad_no_sens(self):
        """``GradOperation(get_by_list=True)``."""
        return GradOperation(get_by_list=True)

    def _call_construct(self, args, kwargs):
        # Data parallel in GRAPH_MODE (MindSpore's usual distributed loop) is traced on the CPU: the trace
        # records the gradients' AllReduce operators (DistributedGradReducer.reduce_with_operators) and
        # replays the whole step from C++. On the GPU the step runs eagerly, its buckets on NCCL (a
        # trace there would capture NCCL into a device graph, which has not run on a GPU).
        if self.reducer_flag and context.graph_mode() and not optimizer_parallel() and not tracing():
            if not self._cells["grad_reducer"].traceable:
                return self.construct(*args, **kwargs)
        return super()._call_construct(args, kwargs)

    def construct(self, *inputs):
        sens = self.sens
        pipeline = _pipeline_of(self.network)
        if pipeline is not None:  # its 1F1B schedule differentiates stage by stage
            loss, grads = pipeline.value_and_grad(self.weights, *inputs)
        else:
            loss, grads = self._value_and_grad(None if sens == 1.0 else float(sens), *inputs)
        if self.reducer_flag:
            grads = self._reduce(grads)
        if self.use_graceful_exit:
            grads = self.graceful_exit.exit_by_request(grads, self.init_param, self.exit_param)
        self._cells["optimizer"](grads)  # (attribute access to a Cell goes through __getattr__)
        return loss

    def _reduce(self, grads: tuple) -> tuple:
        """The data-parallel gradients, reduced over the ranks. Eagerly by the bucketed reducer (its
        all-reduces overlap the backward pass); while a trace records, by operators the trace replays: an
        AllReduce per gradient, or for an optimizer-parallel step pending partial sums that the sharded
        optimizer update reduce-scatters."""
        reducer = self._cells["grad_reducer"]
        if not tracing():
            return reducer(grads)
        if sharding.active():  # optimizer parallel: the sharding interpreter runs the updates
            return sharding.pending_over_ranks(grads, reducer.mean, reducer.degree)
        if not reducer.traceable:
            raise TraceError(
                "For 'TrainOneStepCell', data-parallel gradient reduction on the GPU all-reduces buckets on "
                "NCCL outside operators, which a trace (jit) does not replay: call the step without jit (in "
                "GRAPH_MODE it runs eagerly), or use enable_parallel_optimizer=True."
            )
        return reducer.reduce_with_operators(grads)
