"""MindSpore's ``mindspore.train.train_thor``: ``ConvertModelUtils.convert_to_thor_model`` turns a ``Model`` whose
optimizer is THOR (``nn.thor``) into a ``ModelThor``, and ``ConvertNetUtils().convert_to_thor_net(net)`` puts THOR
layers in a network (``nn.thor`` calls it; opforge/nn/thor_layer.py).

``ModelThor`` trains as ``Model`` does (``train``, ``fit``, ``eval``, ``predict``; with or without
``dataset_sink_mode``, the callbacks called as ``Model`` calls them), each step alternating as MindSpore's GPU
loop does: step 0, ``frequency``, ``2 * frequency``, ... run with the ``thor`` flag set on every cell (the layers
record their statistics and the optimizer computes new inverses: MindSpore's phase ``train0``), the steps between
with it cleared (the stored inverses reused: ``train1``). MindSpore's non-sink loop sets no flag (every step is a
THOR step); here both modes alternate. In GRAPH_MODE each phase is traced once and replayed.
"""

from __future__ import annotations

from opforge.jit import JitFunction
from opforge.nn.cell import Cell
from opforge.nn.optim_thor import ThorGpu
from opforge.nn.thor_layer import ConvertNetUtils
from opforge.nn.wrap import TrainOneStepCell
from opforge.train.model import Model

__all__ = ["ConvertNetUtils", "ConvertModelUtils", "ModelThor"]


class _ThorTrainStep(Cell):
    """The training step of a ``ModelThor``: ``network`` (the step Model builds) with the ``thor`` flag set on
    every ``frequency``-th call, counted from the first, and cleared on the others."""

    def __init__(self, network, frequency: int):
        super().__init__(auto_prefix=False)
        self.network = network
        self.frequency = frequency
        self.steps = 0
        self.add_flags_recursive(thor=True)

    def __call__(self, *inputs):
        thor = self.steps % self.frequency == 0
        if thor != self.thor:
            self.add_flags_recursive(thor=thor)
        self.steps += 1
        return super().__call__(*inputs)

    def construct(self, *inputs):
        return self.network(*inputs)

    @property
    def _graph(self) -> JitFunction:
        """GRAPH_MODE: one trace per phase (MindSpore compiles 'train0' and 'train1' apart)."""
        jitted = self.__dict__.get("_jit_construct")
        if jitted is None:
            jitted = JitFunction(self._construct, state=lambda: (self.training, self.thor))
            object.__setattr__(self, "_jit_construct", jitted)
        return jitted


class ModelThor(Model):
    """MindSpore's ``ModelThor``: a ``Model`` whose steps alternate THOR steps and steps reusing the inverses, the
    THOR optimizer's ``frequency`` apart (see the module docstring). Built by ``convert_to_thor_model``."""

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", **kwargs):  # fmt: skip
        thor = network.optimizer if isinstance(network, TrainOneStepCell) else optimizer
        if not isinstance(thor, ThorGpu):
            raise TypeError(
                "For 'ModelThor', the 'optimizer' (or that of the TrainOneStepCell given as 'network') must be the "
                f"optimizer nn.thor returns, but got {type(thor).__name__}."
            )
        self._frequency = thor.get_frequency()
        super().__init__(network, loss_fn, optimizer, metrics, eval_network, eval_indexes, amp_level, **kwargs)

    def _build_train_network(self):
        step = super()._build_train_network()
        return None if step is None else _ThorTrainStep(step, self._frequency)

    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):  # fmt: skip
        if valid_dataset is not None and dataset_sink_mode is True:  # (MindSpore's rule)
            raise ValueError("Evaluation in training is currently not supported in the second-order scenario of thor.")
        super().fit(epoch, train_dataset, valid_dataset, valid_frequency, callbacks, dataset_sink_mode,
                    valid_dataset_sink_mode, sink_size, initial_epoch)  # fmt: skip


class ConvertModelUtils:
    """MindSpore's ``ConvertModelUtils``."""

    @staticmethod
    def convert_to_thor_model(model, network, loss_fn=None, optimizer=None, metrics=None, amp_level="O0",
                              loss_scale_manager=None, keep_batchnorm_fp32=False):  # fmt: skip
        """A ``ModelThor`` training ``network`` with the THOR ``optimizer`` (``network`` a ``TrainOneStepCell``:
        that step; else ``network`` and ``loss_fn`` in the mixed precision ``amp_level``, ``loss_scale_manager``
        and ``keep_batchnorm_fp32`` say, with ``metrics``); ``model`` itself when ``optimizer`` is not THOR's."""
        if not isinstance(optimizer, ThorGpu):
            return model
        if isinstance(network, TrainOneStepCell):
            return ModelThor(network=network)
        return ModelThor(network=network, loss_fn=loss_fn, optimizer=optimizer, amp_level=amp_level,
                         loss_scale_manager=loss_scale_manager, keep_batchnorm_fp32=keep_batchnorm_fp32,
                         metrics=metrics)  # fmt: skip
