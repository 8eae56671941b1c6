"""MindSpore's ``AutoParallel`` (``mindspore.parallel.auto_parallel.AutoParallel``, MindSpore 2.6+): a Cell wrapping
a network (a Cell, or a function such as a training step) that carries its own parallel settings, in place of
the global ``set_auto_parallel_context``.

The methods (``dataset_strategy``, ``hsdp``, ``pipeline``, ``save_param_strategy_file``, ...) only record; the
settings hold while this cell runs as the outermost call (``parallel_net(x, y)``), or while a ``Model`` given it
builds, trains, evaluates or predicts (as MindSpore applies them at compile time), and the global context is as it
was afterwards. ``parallel_mode``: "semi_auto" is SEMI_AUTO_PARALLEL, "sharding_propagation" and
"recursive_programming" AUTO_PARALLEL with that search mode; a world of one rank runs stand-alone.

Settings opforge accepts but does not act on (each warns when set, saying so): the local-norm dumps, the
communication-group file, fp32 communication, ``transformer_opt``'s Ascend speed-up file and the operator
strategy files. ``pipeline``'s "gpipe" runs the 1F1B schedule (the same values). docs/parallel.md."""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager

from opforge.communication.management import GlobalComm, get_group_size, get_rank
from opforge.nn.cell import Cell
from opforge.parallel_context import ParallelMode, applied, check_option

__all__ = ["AutoParallel"]

PARALLEL_MODES = ("semi_auto", "sharding_propagation", "recursive_programming")
_SCHEDULERS = ("1f1b", "gpipe")  # the values of both are 1F1B's here
_LATER_SCHEDULERS = ("seqpipe", "seqvpp", "seqsmartvpp", "zero_bubble_v")  # virtual stages: not in opforge
_OPTIMIZER_LEVELS = ("level1", "level2", "level3")


def _where(method: str) -> str:
    return f"For 'AutoParallel.{method}'"


def _check_type(method: str, arg: str, value, kind):
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TypeError(f"{_where(method)}, the argument '{arg}' must be {names}, but got {type(value).__name__}.")
    return value


def _check_json_path(method: str, file_path):
    _check_type(method, "file_path", file_path, str)
    if not os.path.isabs(file_path):
        raise KeyError(f"{_where(method)}, the argument 'file_path' must be an absolute path, but got {file_path!r}.")
    if os.path.splitext(file_path)[1] != ".json":
        raise KeyError(f"{_where(method)}, the file type must be .json, but got {file_path!r}.")
    return file_path


def _world() -> tuple:
    """(rank, size) as AutoParallel reads them when built: the communication world's, or, before ``init()``,
    MindSpore's ``RANK_ID`` / ``RANK_SIZE`` environment variables."""
    if GlobalComm.INITED:
        return get_rank(), get_group_size()
    return int(os.getenv("RANK_ID", "0")), int(os.getenv("RANK_SIZE", "1"))


class AutoParallel(Cell):
    """``AutoParallel(network, parallel_mode="semi_auto")``: ``network`` (a Cell or a function) run with the
    parallel settings this cell's methods record. Its Parameters keep their names (``auto_prefix=False``)."""

    def __init__(self, network, parallel_mode: str = "semi_auto"):
        super().__init__(auto_prefix=False)
        if parallel_mode not in PARALLEL_MODES:
            raise ValueError(
                f"For 'AutoParallel', the argument 'parallel_mode' must be one of {list(PARALLEL_MODES)}, but got "
                f"{parallel_mode!r}."
            )
        if not (isinstance(network, Cell) or callable(network)):
            raise TypeError(
                f"For 'AutoParallel', the argument 'network' must be a Cell or a function, but got "
                f"{type(network).__name__}."
            )
        self.network = network
        self._parallel_mode = parallel_mode
        self._global_rank, self._device_num = _world()
        self._dataset_strategy_config = "data_parallel"
        self._save_strategy_file_path = ""
        self._load_strategy_file_path = ""
        self._only_trainable_params = True
        self._enable_parallel_optimizer = False
        self._optimizer_weight_shard_size = -1
        self._parallel_optimizer_threshold = 64
        self._optimizer_level = "level1"
        self._pipeline_stages = 1
        self._pipeline_result_broadcast = False
        self._pipeline_interleave = False
        self._pipeline_scheduler = "1f1b"
        self._comm_fusion_config = None
        self._gradients_mean = False
        self._loss_repeated_mean = True
        self._gradient_fp32_sync = True
        self._init_param_in_compile = True
        self._applying = 0

    # -- the settings ---------------------------------------------------------------------------
    def context_options(self) -> dict:
        """The ``set_auto_parallel_context`` options this cell's settings amount to."""
        mode, search = ParallelMode.SEMI_AUTO_PARALLEL, "recursive_programming"
        if self._device_num == 1:
            mode = ParallelMode.STAND_ALONE
        elif self._parallel_mode != "semi_auto":
            mode, search = ParallelMode.AUTO_PARALLEL, self._parallel_mode
        options = {
            "parallel_mode": mode,
            "search_mode": search,
            "global_rank": self._global_rank,
            "dataset_strategy": self._dataset_strategy_config,
            "gradients_mean": self._gradients_mean,
            "loss_repeated_mean": self._loss_repeated_mean,
            "enable_parallel_optimizer": self._enable_parallel_optimizer,
            "pipeline_stages": self._pipeline_stages,
            "pipeline_result_broadcast": self._pipeline_result_broadcast,
            "strategy_ckpt_config": {
                "save_file": self._save_strategy_file_path,
                "load_file": self._load_strategy_file_path,
                "only_trainable_params": self._only_trainable_params,
            },
        }
        if self._enable_parallel_optimizer:
            options["parallel_optimizer_config"] = {
                "parallel_optimizer_threshold": self._parallel_optimizer_threshold,
                "optimizer_weight_shard_size": self._optimizer_weight_shard_size,
                "optimizer_level": self._optimizer_level,
            }
        if self._comm_fusion_config is not None:
            options["comm_fusion"] = self._comm_fusion_config
        return options

    @contextmanager
    def applied(self):
        """This cell's settings in force (the global context as it was afterwards); nested uses apply once."""
        if self._applying:
            yield
            return
        with applied(self.context_options()):
            self._applying += 1
            try:
                yield
            finally:
                self._applying -= 1

    def __call__(self, *args, **kwargs):
        with self.applied():
            return super().__call__(*args, **kwargs)

    def construct(self, *args, **kwargs):
        return self.network(*args, **kwargs)

    # -- MindSpore's methods ---------------------------------------------------------------------
    def dataset_strategy(self, config):
        """How each rank's inputs are read: "data_parallel" (its block of the batch dim), "full_batch" (the whole
        batch), or a tuple with a strategy per input (split counts per dim, or a ``Layout``)."""
        if config is None:
            raise ValueError(f"{_where('dataset_strategy')}, the argument 'config' must not be None.")
        check_option("dataset_strategy", config, "AutoParallel.dataset_strategy")
        self._dataset_strategy_config = config

    def save_param_strategy_file(self, file_path):
        """Each rank writes its parameters' layouts to ``file_path`` after the first step (the strategy file)."""
        self._save_strategy_file_path = _check_type("save_param_strategy_file", "file_path", file_path, str)

    @property
    def param_strategy_file(self) -> str:
        """The strategy file ``save_param_strategy_file`` set ("" when none): ``load_distributed_checkpoint`` of a
        network holding this cell reads it when given no strategy file."""
        return self._save_strategy_file_path

    def load_param_strategy_file(self, file_path):
        """The strategy file ``load_distributed_checkpoint`` reads when given none."""
        self._load_strategy_file_path = _check_type("load_param_strategy_file", "file_path", file_path, str)

    def disable_strategy_file_only_for_trainable_params(self):
        """The strategy file lists every parameter, not only the trainable ones."""
        self._only_trainable_params = False

    def hsdp(self, shard_size=-1, threshold=64, optimizer_level="level1"):
        """Optimizer parallel (ZeRO): each data-parallel rank keeps and updates its block of every optimizer
        state of at least ``threshold`` KB, split over groups of ``shard_size`` consecutive ranks (-1: all the
        ranks of a stage), the updated weights all-gathered (``parallel_optimizer_config``). ``optimizer_level``
        is checked and kept (opforge splits the states alike at every level)."""
        if not isinstance(shard_size, int) or isinstance(shard_size, bool) or not (shard_size > 0 or shard_size == -1):
            raise ValueError(f"{_where('hsdp')}, shard_size must be a positive integer or -1, but got {shard_size!r}.")
        if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 0:
            raise ValueError(f"{_where('hsdp')}, threshold must be a positive integer or 0, but got {threshold!r}.")
        if optimizer_level not in _OPTIMIZER_LEVELS:
            raise ValueError(
                f"{_where('hsdp')}, optimizer_level must be one of {list(_OPTIMIZER_LEVELS)}, but got "
                f"{optimizer_level!r}."
            )
        self._enable_parallel_optimizer = True
        self._optimizer_weight_shard_size = shard_size
        self._parallel_optimizer_threshold = threshold
        self._optimizer_level = optimizer_level

    def pipeline(self, stages=1, output_broadcast=False, interleave=False, scheduler="1f1b"):
        """The ranks cut into ``stages`` pipeline stages (``Cell.pipeline_stage``, ``nn.PipelineCell``); the
        loss reaches every rank; ``output_broadcast``: an evaluation network's last-stage outputs reach every rank
        (the context's ``pipeline_result_broadcast``)."""
        _check_type("pipeline", "stages", stages, int)
        if stages <= 0:
            raise ValueError(f"{_where('pipeline')}, the argument 'stages' must be larger than zero, but got {stages}.")
        _check_type("pipeline", "output_broadcast", output_broadcast, bool)
        _check_type("pipeline", "interleave", interleave, bool)
        _check_type("pipeline", "scheduler", scheduler, str)
        if scheduler in _LATER_SCHEDULERS or interleave:
            raise NotImplementedError(
                f"{_where('pipeline')}, opforge runs the '1f1b' schedule without virtual stages: the scheduler "
                f"{scheduler!r} with interleave={interleave} is not implemented."
            )
        if scheduler not in _SCHEDULERS:
            raise ValueError(
                f"{_where('pipeline')}, the argument 'scheduler' must be one of {list(_SCHEDULERS + _LATER_SCHEDULERS)}"
                f", but got {scheduler!r}."
            )
        self._pipeline_stages = stages
        self._pipeline_result_broadcast = output_broadcast
        self._pipeline_interleave = interleave
        self._pipeline_scheduler = scheduler

    def get_pipeline_stages(self) -> int:
        return self._pipeline_stages

    def comm_fusion(self, config):
        """MindSpore's fusion of the gradients' collectives: {"allreduce": {"mode": ..., "config": ...}, ...}."""
        if not isinstance(config, dict):
            raise TypeError(f"{_where('comm_fusion')}, the argument 'config' must be dict, but got {config!r}.")
        check_option("comm_fusion", config, "AutoParallel.comm_fusion")  # now, not at the first call
        self._comm_fusion_config = dict(config)

    def enable_gradients_mean(self):
        """Data-parallel gradients are the mean over the ranks, not the sum."""
        self._gradients_mean = True

    def disable_loss_repeated_mean(self):
        """MindSpore's ``loss_repeated_mean=False``: a loss computed alike on several ranks of a stage gives
        each gradient summed over them (the sensitivity times their count), not one process's."""
        self._loss_repeated_mean = False

    def no_init_parameters_in_compile(self):
        """Kept (MindSpore's memory saving at compile time; opforge's parameters are split when first read)."""
        self._init_param_in_compile = False

    def disable_gradient_fp32_sync(self):
        """Kept: opforge reduces gradients in their own dtype."""
        self._gradient_fp32_sync = False

    def enable_fp32_communication(self):
        self._ignore("enable_fp32_communication", "its collectives communicate in the tensors' own dtype")

    def set_group_ckpt_save_file(self, file_path):
        _check_type("set_group_ckpt_save_file", "file_path", file_path, str)
        self._ignore("set_group_ckpt_save_file", "no communication-group file is written")

    def print_local_norm(self):
        self._ignore("print_local_norm", "no local norm is printed")

    def dump_local_norm(self, file_path):
        _check_type("dump_local_norm", "file_path", file_path, str)
        self._ignore("dump_local_norm", "no local norm is written")

    def enable_device_local_norm(self):
        self._ignore("enable_device_local_norm", "no local norm is written")

    def save_operator_strategy_file(self, file_path):
        _check_json_path("save_operator_strategy_file", file_path)
        self._ignore("save_operator_strategy_file", "no operator strategy file is written")

    def load_operator_strategy_file(self, file_path):
        _check_json_path("load_operator_strategy_file", file_path)
        self._ignore("load_operator_strategy_file", "operators take their strategies from shard()")

    def transformer_opt(self, file_path):
        """Ascend's parallel speed-up file: None or "" switches it off; a path must exist, and is kept."""
        if file_path in (None, ""):
            return
        _check_type("transformer_opt", "file_path", file_path, str)
        if not os.path.exists(file_path):
            raise ValueError(f"{_where('transformer_opt')}, the file {file_path!r} does not exist.")
        self._ignore("transformer_opt", "its speed-up options are Ascend's")

    @staticmethod
    def _ignore(method: str, why: str) -> None:
        """A setting opforge does not act on: checked by the caller, then a warning saying what does not happen."""
        warnings.warn(f"{_where(method)}: accepted, but opforge does not act on it: {why}.", UserWarning, stacklevel=3)
