"""``Model``: MindSpore's high-level training API over opforge's cells (``mindspore.train.Model``).

``Model(network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
amp_level="O0")``: with ``loss_fn`` and ``optimizer`` the training step is
``TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)``; with an optimizer and no loss the network
already returns the loss; with neither, the network is the training step itself (``Model(TrainOneStepCell
(...))``, as MindSpore trains it), its outputs passed to the callbacks as ``net_outputs``.
``train(epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0)`` runs
the step on every batch of the dataset (its columns passed in order), calling the callbacks;
``eval(valid_dataset)`` returns ``{metric name: value}``; ``predict(*data)`` runs the network;
``fit`` trains and evaluates after each epoch. In GRAPH_MODE (``set_context(mode=GRAPH_MODE)``) the step
is traced once and replayed (``opforge.jit``); in DATA_PARALLEL mode ``TrainOneStepCell`` all-reduces
the gradients, each rank reading its shard of the dataset (``num_shards``/``shard_id``); with both, the
step is one trace on the CPU (an AllReduce operator per gradient) and runs eagerly on the GPU (its buckets
on NCCL), unless the parallel optimizer is on (``enable_parallel_optimizer``): then it is one trace there
too.
``dataset_sink_mode=True`` (``train``, ``fit``) runs each epoch as one sink of ``sink_size`` steps (the
whole dataset for -1), the batches read as one stream across epochs, with MindSpore's callback counts:
``opforge/train/sink.py``; ``eval``'s sink mode gives the same metrics.
``infer_predict_layout(*predict_data)`` and ``infer_train_layout(train_dataset, dataset_sink_mode=True,
sink_size=-1)`` lay the network's parameters out in SEMI_AUTO_PARALLEL / AUTO_PARALLEL mode without changing their
values and return MindSpore's parameter layout dictionary (opforge/parallel/parameter_layout.py).
"""

from __future__ import annotations

import functools
import sys
from contextlib import nullcontext

import numpy as np

from opforge import context, log
from opforge.amp import AMP_LEVELS, LossScaleManager, build_train_network
from opforge.communication import GlobalComm, get_group_size, get_rank
from opforge.dispatch.sharding import whole_values
from opforge.nn.cell import Cell
from opforge.nn.optim import Optimizer
from opforge.nn.wrap import WithEvalCell
from opforge.parallel.auto_parallel import AutoParallel
from opforge.parallel.parameter_layout import lay_out, parameter_layout_dict
from opforge.parallel_context import (  # noqa: F401 (mindspore.train.model has ParallelMode)
    ParallelMode,
    get_auto_parallel_context,
    input_strategies,
    operator_parallel,
)
from opforge.tensor import Tensor
from opforge.train.callback import Callback, CallbackParam, LossMonitor, ProgressBar, RunContext
from opforge.train.metrics import Loss, Metric, get_metric_fn
from opforge.train.sink import TrainSink, check_sink_size

__all__ = ["Model"]

_MODEL_KWARGS = ("loss_scale_manager", "keep_batchnorm_fp32", "boost_config_dict", "acc_level")


def _metrics(metrics) -> dict:
    if metrics is None:
        return {}
    if isinstance(metrics, dict):
        out = {}
        for name, m in metrics.items():
            if not isinstance(m, Metric):
                raise TypeError(f"For 'Model', the metric '{name}' must be a Metric, but got {type(m).__name__}.")
            out[name] = m
        return out
    if isinstance(metrics, (set, list, tuple)):
        return {name: get_metric_fn(name) for name in metrics}
    raise TypeError(f"For 'Model', the 'metrics' must be a set of names or a dict of Metrics, but got {metrics!r}.")


def _callbacks(callbacks) -> list:
    if callbacks is None:
        return []
    callbacks = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]
    for cb in callbacks:
        if not isinstance(cb, Callback):
            raise TypeError(f"For 'Model', each callback must be a Callback, but got {type(cb).__name__}.")
    return callbacks


def _device_number() -> int:
    return get_group_size() if GlobalComm.INITED else 1  # (not initialised: a world of one)


def _show_progress(callbacks) -> bool:
    """A progress bar on a terminal (rank 0's only), unless a callback prints the losses already."""
    rank = get_rank() if GlobalComm.INITED else 0
    printing = any(isinstance(c, (LossMonitor, ProgressBar)) for c in callbacks)
    return sys.stdout.isatty() and rank == 0 and not printing


def _check_bool(where: str, name: str, value) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"For '{where}', the '{name}' must be a bool, but got {type(value).__name__}.")
    return value


def _tensors(row) -> tuple:
    return tuple(v if isinstance(v, Tensor) else Tensor(np.asarray(v)) for v in row)


def _check_layout_mode(network: str) -> None:
    """MindSpore's conditions of ``infer_predict_layout`` / ``infer_train_layout``."""
    if not context.graph_mode():
        raise RuntimeError(
            f"Pre-compile process that generate parameter layout for the {network} network only supports GRAPH "
            "MODE currently."
        )
    if not operator_parallel():
        mode = get_auto_parallel_context("parallel_mode")
        raise RuntimeError(
            f"'infer_{network}_layout' only supports 'semi_auto_parallel' and 'auto_parallel' mode, but got {mode}."
        )


def _check_tensors(where: str, data) -> None:
    """Every item a Tensor, or a list or tuple of them (MindSpore's ``check_input_data(data_class=Tensor)``)."""
    for item in data:
        if isinstance(item, (list, tuple)):
            _check_tensors(where, item)
        elif not isinstance(item, Tensor):
            raise TypeError(f"For '{where}', the input data must be Tensors, but got {type(item).__name__}.")


def _network_settings(method):
    """Model's entry points run with an ``AutoParallel`` network's parallel settings in force, as MindSpore
    applies them around each (opforge/parallel/auto_parallel.py)."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self._settings():
            return method(self, *args, **kwargs)

    return run


class Model:
    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None, eval_network=None, eval_indexes=None,
                 amp_level="O0", boost_level="O0", **kwargs):  # fmt: skip
        if not isinstance(network, Cell):
            raise TypeError(f"For 'Model', the 'network' must be a Cell, but got {type(network).__name__}.")
        if optimizer is not None and not isinstance(optimizer, Optimizer):
            raise TypeError(f"For 'Model', the 'optimizer' must be an Optimizer, but got {type(optimizer).__name__}.")
        if amp_level not in AMP_LEVELS:
            raise ValueError(f"For 'Model', the 'amp_level' must be one of {AMP_LEVELS}, but got {amp_level!r}.")
        if optimizer is None and amp_level != "O0":  # (MindSpore's rule: amp is applied to the network it trains)
            raise ValueError(
                "For 'Model', auto mixed precision needs an 'optimizer' (it is applied to the training network), "
                f"but the 'optimizer' is None and the 'amp_level' is {amp_level!r}; set amp_level='O0'."
            )
        if eval_indexes is not None and len(eval_indexes) != 3:
            raise ValueError("For 'Model', the 'eval_indexes' must be [loss index, output index, label index].")
        for key in kwargs:
            if key not in _MODEL_KWARGS:
                raise ValueError(f"For 'Model', the keyword arguments are {_MODEL_KWARGS}, but got {key!r}.")
        manager = self._loss_scale_manager = kwargs.get("loss_scale_manager")
        if manager is not None and not isinstance(manager, LossScaleManager):
            raise TypeError(f"For 'Model', the 'loss_scale_manager' must be a LossScaleManager, but got {manager!r}.")
        if manager is not None and optimizer is None:
            raise ValueError("For 'Model', a 'loss_scale_manager' needs an 'optimizer', but the 'optimizer' is None.")
        # MindSpore's amp configuration: only what was given overrides the level's choice
        self._amp_config = {k: kwargs[k] for k in ("loss_scale_manager", "keep_batchnorm_fp32") if k in kwargs}
        self._amp_level, self._boost_level = amp_level, boost_level
        self._network, self._loss_fn, self._optimizer = network, loss_fn, optimizer
        self._metric_fns = _metrics(metrics)
        self._eval_indexes = eval_indexes
        # build_train_network casts the network in place (to_float, BatchNorm kept in float32), so the eval
        # and predict networks run in the training network's precision, as in MindSpore
        with self._settings():
            self._train_network = self._build_train_network()
        cast_fp32 = amp_level in ("O2", "O3", "auto")
        self._eval_network = eval_network or (
            WithEvalCell(network, loss_fn, add_cast_fp32=cast_fp32) if loss_fn is not None else None
        )
        if self._metric_fns and self._eval_network is None:
            raise ValueError("For 'Model', metrics need a 'loss_fn' or an 'eval_network' to evaluate with.")
        if eval_network is None:  # WithEvalCell's outputs: (loss, logits, label)
            self._eval_indexes = [0, 1, 2]

    def _settings(self):
        return self._network.applied() if isinstance(self._network, AutoParallel) else nullcontext()

    def _build_train_network(self):
        if self._optimizer is None:
            # Without a loss_fn the network is trained as given (MindSpore's way): a cell that makes its own
            # step (TrainOneStepCell, TrainOneStepWithLossScaleCell, a GAN's pair of steps). A loss_fn and no
            # optimizer would update nothing: train() says so.
            return self._network if self._loss_fn is None else None
        return build_train_network(
            self._network, self._optimizer, self._loss_fn, level=self._amp_level, boost_level=self._boost_level,
            **self._amp_config,
        )  # fmt: skip

    @property
    def train_network(self):
        return self._train_network

    @property
    def predict_network(self):
        return self._network

    @property
    def eval_network(self):
        return self._eval_network

    # -- training ----------------------------------------------------------------------------------
    @_network_settings
    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1, initial_epoch=0):
        """Train ``epoch - initial_epoch`` epochs on ``train_dataset`` (its columns in order are the training
        network's inputs, usually data and label)."""
        self._check_epoch(epoch, initial_epoch)
        if self._train_network is None:
            raise RuntimeError("For 'Model.train', a Model with a 'loss_fn' needs an 'optimizer' to train.")
        sink, batch_num = self._sink("Model.train", train_dataset, dataset_sink_mode, sink_size)
        self._run_train(epoch, train_dataset, _callbacks(callbacks), initial_epoch, None, sink, batch_num)

    @_network_settings
    def fit(self, epoch, train_dataset, valid_dataset=None, valid_frequency=1, callbacks=None,
            dataset_sink_mode=False, valid_dataset_sink_mode=False, sink_size=-1, initial_epoch=0):  # fmt: skip
        """Train, evaluating on ``valid_dataset`` every ``valid_frequency`` epochs (the metrics go to the
        callbacks as ``run_context.original_args().metrics`` and are printed)."""
        self._check_epoch(epoch, initial_epoch)
        if self._train_network is None:
            raise RuntimeError("For 'Model.fit', a Model with a 'loss_fn' needs an 'optimizer' to train.")
        sink, batch_num = self._sink("Model.fit", train_dataset, dataset_sink_mode, sink_size)
        valid = (valid_dataset, valid_frequency, _check_bool("Model.fit", "valid_dataset_sink_mode",
                                                             valid_dataset_sink_mode))  # fmt: skip
        self._run_train(epoch, train_dataset, _callbacks(callbacks), initial_epoch, valid, sink, batch_num)

    @staticmethod
    def _sink(where, dataset, sink_mode, sink_size):
        """The run's sinks (opforge/train/sink.py), or None without sink mode, and the steps of an epoch
        (MindSpore's ``batch_num``): the dataset's size, or ``sink_size`` when it sinks that many."""
        _check_bool(where, "dataset_sink_mode", sink_mode)
        size = check_sink_size(where, sink_size, dataset)  # (MindSpore checks it in either mode)
        if not sink_mode:
            return None, size
        return TrainSink(dataset, sink_size, where), sink_size if sink_size > 0 else size

    @staticmethod
    def _check_epoch(epoch, initial_epoch):
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            raise ValueError(f"For 'Model.train', the 'epoch' must be an int >= 1, but got {epoch!r}.")
        if not isinstance(initial_epoch, int) or not 0 <= initial_epoch < epoch:
            raise ValueError(
                f"For 'Model.train', the 'initial_epoch' must be in [0, {epoch}), but got {initial_epoch!r}."
            )

    def _run_train(self, epoch, dataset, callbacks, initial_epoch, valid, sink, batch_num):
        if _show_progress(callbacks):
            callbacks = [*callbacks, ProgressBar()]
        net = self._train_network
        step = net
        cb = CallbackParam(
            train_network=net, network=self._network, loss_fn=self._loss_fn, optimizer=self._optimizer,
            epoch_num=epoch, batch_num=batch_num, cur_epoch_num=initial_epoch, cur_step_num=initial_epoch * batch_num,
            train_dataset=dataset, net_outputs=None, mode="train", metrics=None, list_callback=callbacks,
            parallel_mode=get_auto_parallel_context("parallel_mode"), device_number=_device_number(),
            dataset_sink_mode=sink is not None, train_dataset_element=None, last_save_ckpt_step=None,
            latest_ckpt_file=None, loss_scale_mananger=self._loss_scale_manager, is_arf=False,  # (its spelling)
            initial_step=initial_epoch * batch_num,
        )  # fmt: skip
        run_context = RunContext(cb)

        def hook(name):
            self._hook(callbacks, name, run_context)

        def run_step(row):  # (a loss a strategy left split, whole for the callbacks)
            return whole_values(step(*_tensors(row)))

        net.set_train(True)
        hook("on_train_begin")
        for e in range(initial_epoch, epoch):
            cb.cur_epoch_num = e + 1
            hook("on_train_epoch_begin")
            if sink is not None:  # one sink (a stop request ends training after it, as in MindSpore)
                sink.run_epoch(run_step, cb, hook)
            else:
                for row in dataset.create_tuple_iterator():
                    cb.cur_step_num += 1
                    cb.train_dataset_element = row  # the step's inputs, as MindSpore gives them to callbacks
                    hook("on_train_step_begin")
                    cb.net_outputs = run_step(row)
                    hook("on_train_step_end")
                    if run_context.get_stop_requested():
                        break
            if valid is not None and valid[0] is not None and (e + 1) % valid[1] == 0:
                cb.metrics = self.eval(valid[0], dataset_sink_mode=valid[2])
                net.set_train(True)
                print(f"Eval result: epoch {e + 1}, metrics: {cb.metrics}", flush=True)
            hook("on_train_epoch_end")
            if run_context.get_stop_requested():
                break
        hook("on_train_end")

    @staticmethod
    def _hook(callbacks, name, run_context):
        for c in callbacks:
            getattr(c, name)(run_context)

    # -- evaluation and prediction -----------------------------------------------------------------
    @_network_settings
    def eval(self, valid_dataset, callbacks=None, dataset_sink_mode=False) -> dict:
        """``{metric name: value}`` over ``valid_dataset`` (data and label columns)."""
        if not self._metric_fns:
            raise ValueError("For 'Model.eval', the Model needs 'metrics' to evaluate.")
        # sink mode feeds the eval network one batch per sink (MindSpore's loop size 1): the same steps
        _check_bool("Model.eval", "dataset_sink_mode", dataset_sink_mode)
        callbacks = _callbacks(callbacks)
        net = self._eval_network
        net.set_train(False)
        for m in self._metric_fns.values():
            m.clear()
        cb = CallbackParam(eval_network=net, valid_dataset=valid_dataset, cur_step_num=0, net_outputs=None, mode="eval",
                           dataset_sink_mode=dataset_sink_mode, eval_dataset_element=None)  # fmt: skip
        run_context = RunContext(cb)
        self._hook(callbacks, "on_eval_begin", run_context)
        for row in valid_dataset.create_tuple_iterator():
            cb.cur_step_num += 1
            cb.eval_dataset_element = row
            self._hook(callbacks, "on_eval_step_begin", run_context)
            outputs = whole_values(net(*_tensors(row)))  # (the metrics read logits a strategy split whole)
            cb.net_outputs = outputs
            self._update_metrics(outputs)
            self._hook(callbacks, "on_eval_step_end", run_context)
            if run_context.get_stop_requested():  # (MindSpore's: OnRequestExit stops an evaluation so)
                break
        result = {name: m.eval() for name, m in self._metric_fns.items()}
        cb.metrics = result
        self._hook(callbacks, "on_eval_end", run_context)
        return result

    def _update_metrics(self, outputs):
        """MindSpore's rule: a user's eval_network without eval_indexes gives every metric all its outputs
        (``metric.update(*outputs)``); with them (or WithEvalCell's), a Loss gets the loss and the others
        (output, label)."""
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        if not isinstance(outputs, (tuple, list)):
            raise ValueError(
                f"For 'Model.eval', the eval network must return a Tensor or a tuple, but got {type(outputs).__name__}."
            )
        if self._eval_indexes is not None and len(outputs) < 3:
            raise ValueError(
                "For 'Model.eval', with 'eval_indexes' the eval network must return at least 3 outputs, "
                f"but got {len(outputs)}."
            )
        for m in self._metric_fns.values():
            if self._eval_indexes is None:
                m.update(*outputs)
            elif isinstance(m, Loss):
                m.update(outputs[self._eval_indexes[0]])
            else:
                m.update(outputs[self._eval_indexes[1]], outputs[self._eval_indexes[2]])

    @_network_settings
    def predict(self, *predict_data):
        """The network's outputs on ``predict_data`` (evaluation mode), as MindSpore's ranks get them in a parallel
        mode: whole with ``full_batch``, else each rank's rows (``sharding.gather_whole`` assembles them)."""
        self._network.set_train(False)
        return self._network(*_tensors(predict_data))

    # -- parameter layouts (SEMI_AUTO_PARALLEL / AUTO_PARALLEL) ------------------------------------
    @_network_settings
    def infer_predict_layout(self, *predict_data) -> dict:
        """MindSpore's: the layout of every parameter of the prediction network on ``predict_data`` (Tensors, or
        lists and tuples of them), ``{name: (device_matrix, tensor_map, slice_shape, field_size, uniform_split,
        opt_shard_group)}``, for ``load_distributed_checkpoint``. The network's first call lays its parameters
        out (opforge/parallel/parameter_layout.py), in evaluation mode; their values do not change. GRAPH_MODE,
        SEMI_AUTO_PARALLEL or AUTO_PARALLEL, as MindSpore's (RuntimeError otherwise); MindSpore 2.x's warning when
        the inputs are not ``full_batch`` (each rank's rows of them) and no ``dataset_strategy`` tuple says how."""
        _check_layout_mode("predict")
        if not get_auto_parallel_context("full_batch") and input_strategies() is None:
            log.warning("Using non full-batch dataset in model prediction may lead to incorrect data.")
        _check_tensors("Model.infer_predict_layout", predict_data)
        self._network.set_train(False)
        lay_out(self._network, predict_data)
        self._network._save_strategy_file()  # (MindSpore writes it when it compiles for the layouts)
        return parameter_layout_dict(self._network)

    @_network_settings
    def infer_train_layout(self, train_dataset, dataset_sink_mode=True, sink_size=-1) -> dict:
        """MindSpore's: the layout of every parameter of the training network, laid out on the first batch of
        ``train_dataset`` (its columns in order, as ``train`` gives them) by the step's forward pass, which is
        run up to the loss: no gradient, no update, the parameters' values unchanged
        (opforge/parallel/parameter_layout.py; the optimizer's states laid out as their parameters; the parallel
        optimizer's split by the first training step, listed whole). The arguments are ``train``'s; only
        ``dataset_sink_mode=True`` is supported (ValueError), and GRAPH_MODE with SEMI_AUTO_PARALLEL or
        AUTO_PARALLEL (RuntimeError), as MindSpore's."""
        _check_layout_mode("train")
        _check_bool("Model.infer_train_layout", "dataset_sink_mode", dataset_sink_mode)
        if not dataset_sink_mode:
            raise ValueError("Only dataset sink mode is supported for now.")
        check_sink_size("infer_train_layout", sink_size, train_dataset)
        if self._train_network is None:
            raise RuntimeError("For 'Model.infer_train_layout', a Model with a 'loss_fn' needs an 'optimizer'.")
        # the first batch, read as output_shapes reads it: the dataset's epochs are not moved on
        inputs = _tensors(train_dataset._first_row())
        self._train_network.set_train(True)
        lay_out(self._train_network, inputs)
        self._train_network._save_strategy_file()  # (MindSpore writes it when it compiles for the layouts)
        return parameter_layout_dict(self._train_network)
