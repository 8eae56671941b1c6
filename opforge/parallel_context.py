"""The auto-parallel context (MindSpore's ``set_auto_parallel_context``): how training spreads over ranks.

``parallel_mode`` is ``ParallelMode.STAND_ALONE`` (the default), ``ParallelMode.DATA_PARALLEL``, or
``SEMI_AUTO_PARALLEL`` / ``AUTO_PARALLEL``, where operators run split across the ranks by their
strategies (``Primitive.shard``; in AUTO_PARALLEL the operators without one follow their inputs' layouts,
which SEMI_AUTO_PARALLEL does too): see docs/parallel.md. In data-parallel mode
``nn.TrainOneStepCell`` builds an ``nn.DistributedGradReducer`` that all-reduces the gradients over
the world group before the optimizer runs (divided by the number of ranks when ``gradients_mean``).

Options and defaults (MindSpore's names):

- ``parallel_mode`` ("stand_alone"): "stand_alone", "data_parallel", "semi_auto_parallel" or
  "auto_parallel"; MindSpore's "hybrid_parallel" is refused with a clear error.
- ``full_batch`` (False): in (semi-)auto parallel mode, whether every rank reads the whole batch (True) or
  its own block of it, the global batch being the ranks' batches concatenated (False).
- ``dataset_strategy`` ("data_parallel"): MindSpore's newer name for the same choice, "data_parallel" or
  "full_batch" (setting ``full_batch`` with it), or a tuple with a strategy per input of the outermost cell (a
  tuple of split counts, one per dim, or a ``Layout``): each rank's input is its block of the global tensor,
  placed as an operator's strategy places it (the ranks a strategy leaves over repeat the blocks: rank r holds
  block ``r % blocks``). Setting it with ``full_batch`` in one call is a ValueError, as in MindSpore.
- ``search_mode`` ("recursive_programming", MindSpore's default): how AUTO_PARALLEL lays out operators
  without a strategy: "recursive_programming" or "dynamic_programming" search the whole network for the
  cheapest strategies before its first step (``opforge/parallel/strategy_search.py``; one exact search
  serves both names), "sharding_propagation" lets each operator follow the layouts it reads as it runs.
  ``auto_parallel_search_mode`` is its older name (MindSpore warns that it goes; so does opforge).
- ``enable_parallel_optimizer`` (False): optimizer parallel (ZeRO stage 1) in DATA_PARALLEL and (semi-)auto
  parallel mode: each rank keeps and updates 1/N of every optimizer state (split along dim 0 when it
  divides; with pipeline stages, N is the ranks of one stage), then the updated blocks of the weights are
  all-gathered, so every rank holds whole weights.
- ``parallel_optimizer_config`` ({"parallel_optimizer_threshold": 0, "optimizer_weight_shard_size": -1,
  "gradient_accumulation_shard": False, "optimizer_level": "level1"}): how optimizer parallel splits: a state of
  fewer KB than the threshold stays whole (MindSpore's default is 64 KB; opforge's 0 splits every state whose
  rows divide), and with a shard size k the states are split over groups of k consecutive ranks of a stage,
  each group holding a whole copy (-1: one group of all of them). The other two keys are checked and kept
  (the gradients are not accumulated across steps; the states' split is the same at every level).
- ``pipeline_stages`` (1): the number of pipeline stages the ranks are split into (``Cell.pipeline_stage``,
  ``nn.PipelineCell``; opforge/nn/pipeline.py).
- ``gradients_mean`` (False): divide the all-reduced gradients by the number of ranks.
- ``device_num`` (1, or the world's size once set to None / never set): the divisor of the mean;
  read as the group's size when it was not set.
- ``global_rank`` (0): recorded; the rank a process has comes from ``opforge.communication``.
- ``parameter_broadcast`` (True): broadcast every trained Parameter from rank 0 when the
  ``TrainOneStepCell`` is built (data parallel), or every whole Parameter from the first rank of each
  pipeline stage at a parallel network's first call (operator parallel), so that every rank starts from the
  same weights. MindSpore's default is False because its graph compiler starts ranks from one seed;
  opforge's eager ranks initialise their weights independently, so the broadcast is on unless it is switched
  off.
- ``all_reduce_fusion_config`` ([]): parameter indices where a new fusion bucket starts
  (``[2, 4]`` on 6 parameters: buckets 0-1, 2-3, 4-5). Empty: buckets by size.
- ``comm_fusion`` ({"allreduce": {"mode": "auto", "config": None}}): MindSpore's fusion setting for the
  all-reduce: mode "auto" (buckets of 25 MB, PyTorch DDP's default; MindSpore's "auto" is 64 MB),
  "size" (``config`` in MB) or "index" (``config`` a list like ``all_reduce_fusion_config``).
- ``enable_alltoall`` (False): MindSpore's switch between an AlltoAll and AllGather + Split + Concat where a
  tensor changes its split dimension; the values are the same either way. Checked and kept: opforge's
  interpreter redistributes with the collective that sends least (an AlltoAll there, docs/parallel.md).
- ``loss_repeated_mean`` (True): a loss computed alike on several ranks (ranks its layout does not split it
  over) contributes its gradient once, as one process computes it; with False, MindSpore sums the repeats: a
  parallel network's backward pass starts from the sensitivity times the number of ranks of the pipeline
  stage holding the same block of the output (``sharding.loss_repeats``), so every gradient is that many times
  one process's.
- ``pipeline_result_broadcast`` (False): an evaluation network cut into stages (pipeline inference) hands its
  last stage's outputs to every rank when True, zeros to the other stages when False (MindSpore's); a
  ``PipelineCell``'s loss reaches every rank either way in opforge.
- ``strategy_ckpt_save_file`` (""), ``strategy_ckpt_load_file`` (""), ``strategy_ckpt_config`` ({"save_file": "",
  "load_file": "", "only_trainable_params": True}): the strategy file (MindSpore's protobuf of each parameter's
  layout; its JSON form for a name ending with ``.json``) a sharded network writes after its first step
  (``save_file``: every rank writes it), and the one ``load_distributed_checkpoint`` reads when given none
  (``load_file``); opforge's operators take their strategies from ``shard``, not from a loaded file.
"""

from __future__ import annotations

import copy
import warnings
from contextlib import contextmanager

from opforge.parallel_layout import checked_split_counts

__all__ = [
    "ParallelMode",
    "set_auto_parallel_context",
    "get_auto_parallel_context",
    "reset_auto_parallel_context",
    "DEFAULT_BUCKET_MB",
]

DEFAULT_BUCKET_MB = 25.0  # PyTorch DDP's bucket_cap_mb


class ParallelMode:
    """The parallel modes, MindSpore's names and values."""

    STAND_ALONE = "stand_alone"
    DATA_PARALLEL = "data_parallel"
    HYBRID_PARALLEL = "hybrid_parallel"
    SEMI_AUTO_PARALLEL = "semi_auto_parallel"
    AUTO_PARALLEL = "auto_parallel"
    MODE_LIST = [STAND_ALONE, DATA_PARALLEL, HYBRID_PARALLEL, SEMI_AUTO_PARALLEL, AUTO_PARALLEL]


_SUPPORTED_MODES = (
    ParallelMode.STAND_ALONE,
    ParallelMode.DATA_PARALLEL,
    ParallelMode.SEMI_AUTO_PARALLEL,
    ParallelMode.AUTO_PARALLEL,
)

_DEFAULTS = {
    "parallel_mode": ParallelMode.STAND_ALONE,
    "gradients_mean": False,
    "device_num": 1,
    "global_rank": 0,
    "parameter_broadcast": True,
    "all_reduce_fusion_config": [],
    "comm_fusion": {"allreduce": {"mode": "auto", "config": None}},
    "full_batch": False,
    "dataset_strategy": "data_parallel",
    "search_mode": "recursive_programming",
    "enable_parallel_optimizer": False,
    "pipeline_stages": 1,
    "parallel_optimizer_config": {
        "parallel_optimizer_threshold": 0,
        "optimizer_weight_shard_size": -1,
        "gradient_accumulation_shard": False,
        "optimizer_level": "level1",
    },
    "strategy_ckpt_save_file": "",
    "strategy_ckpt_load_file": "",
    "strategy_ckpt_config": {"save_file": "", "load_file": "", "only_trainable_params": True},
    "enable_alltoall": False,
    "loss_repeated_mean": True,
    "pipeline_result_broadcast": False,
}
_state: dict = copy.deepcopy(_DEFAULTS)
_explicit: set = set()  # the options set by the user since the last reset


def _where(name: str) -> str:
    return f"For 'set_auto_parallel_context', the '{name}'"


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{_where(name)} must be bool, but got {type(value).__name__}.")
    return value


def _check_int(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{_where(name)} must be int, but got {type(value).__name__}.")
    if not low <= value <= high:
        raise ValueError(f"{_where(name)} must be in [{low}, {high}], but got {value}.")
    return value


def _check_mode(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{_where(name)} must be str, but got {type(value).__name__}.")
    if value not in ParallelMode.MODE_LIST:
        raise ValueError(f"{_where(name)} must be one of {ParallelMode.MODE_LIST}, but got {value!r}.")
    if value not in _SUPPORTED_MODES:
        raise ValueError(
            f"{_where(name)} {value!r} is not supported by opforge: only {list(_SUPPORTED_MODES)} "
            f"(data parallelism) are."
        )
    return value


def _check_indices(name, value):
    if not isinstance(value, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise TypeError(f"{_where(name)} must be a list of int, but got {value!r}.")
    value = list(value)
    if any(i <= 0 for i in value) or any(b <= a for a, b in zip(value, value[1:])):
        raise ValueError(f"{_where(name)} must hold increasing parameter indices > 0, but got {value}.")
    return value


def _check_comm_fusion(name, value):
    if not isinstance(value, dict):
        raise TypeError(f"{_where(name)} must be a dict, but got {type(value).__name__}.")
    unknown = set(value) - {"allreduce", "allgather", "reducescatter", "openstate"}
    if unknown:
        raise ValueError(f"{_where(name)} has unknown keys {sorted(unknown)}; opforge fuses 'allreduce'.")
    result = copy.deepcopy(_DEFAULTS["comm_fusion"])
    for key, item in value.items():
        if key == "openstate":
            _check_bool("comm_fusion['openstate']", item)
            result[key] = item
            continue
        if not isinstance(item, dict) or set(item) - {"mode", "config"}:
            raise ValueError(f"{_where(name)}[{key!r}] must be a dict with 'mode' and 'config', but got {item!r}.")
        mode = item.get("mode", "auto")
        config = item.get("config")
        if mode == "auto":
            config = None
        elif mode == "size":
            if isinstance(config, bool) or not isinstance(config, (int, float)) or config <= 0:
                raise ValueError(f"{_where(name)}[{key!r}] mode 'size' needs a 'config' in MB > 0, but got {config!r}.")
        elif mode == "index":
            config = _check_indices(f"comm_fusion['{key}']['config']", config)
        else:
            raise ValueError(f"{_where(name)}[{key!r}]['mode'] must be 'auto', 'size' or 'index', but got {mode!r}.")
        result[key] = {"mode": mode, "config": config}
    return result


def _check_str(name, value):
    if not isinstance(value, str):
        raise TypeError(f"{_where(name)} must be str, but got {type(value).__name__}.")
    return value


def _check_strategy_ckpt_config(name, value):
    if not isinstance(value, dict):
        raise TypeError(f"{_where(name)} must be a dict, but got {type(value).__name__}.")
    unknown = set(value) - {"save_file", "load_file", "only_trainable_params"}
    if unknown:
        raise ValueError(f"{_where(name)} has unknown keys {sorted(unknown)}: 'save_file', 'load_file', "
                         "'only_trainable_params'.")  # fmt: skip
    result = dict(_DEFAULTS["strategy_ckpt_config"])
    for key, item in value.items():
        result[key] = (_check_bool if key == "only_trainable_params" else _check_str)(f"{name}['{key}']", item)
    return result


def _check_dataset_strategy(name, value):
    """ "data_parallel", "full_batch", or a tuple of per-input strategies (split counts; a Layout read as its)."""
    if isinstance(value, str):
        if value not in ("data_parallel", "full_batch"):
            raise ValueError(f"{_where(name)} must be 'data_parallel', 'full_batch' or a tuple, but got {value!r}.")
        return value
    if not isinstance(value, tuple):
        raise TypeError(f"{_where(name)} must be str or tuple, but got {type(value).__name__}.")
    return tuple(checked_split_counts(s, f"{_where(name)} must hold a strategy per input; each") for s in value)


def _check_optimizer_config(name, value):
    if not isinstance(value, dict):
        raise TypeError(f"{_where(name)} must be a dict, but got {type(value).__name__}.")
    result = dict(_DEFAULTS["parallel_optimizer_config"])
    unknown = set(value) - set(result)
    if unknown:
        raise ValueError(f"{_where(name)} has unknown keys {sorted(unknown)}: {sorted(result)}.")
    for key, item in value.items():
        where = f"{name}['{key}']"
        if key == "gradient_accumulation_shard":
            _check_bool(where, item)
        elif key == "optimizer_level":
            if item not in ("level1", "level2", "level3"):
                raise ValueError(f"{_where(where)} must be 'level1', 'level2' or 'level3', but got {item!r}.")
        elif key == "parallel_optimizer_threshold":
            _check_int(where, item, 0, 2**40)
        elif item != -1:
            _check_int(where, item, 1, 4096)
        result[key] = item
    return result


_CHECKS = {
    "parallel_mode": _check_mode,
    "gradients_mean": _check_bool,
    "device_num": lambda n, v: _check_int(n, v, 1, 4096),
    "global_rank": lambda n, v: _check_int(n, v, 0, 4095),
    "parameter_broadcast": _check_bool,
    "all_reduce_fusion_config": _check_indices,
    "comm_fusion": _check_comm_fusion,
    "full_batch": _check_bool,
    "dataset_strategy": _check_dataset_strategy,
    "enable_parallel_optimizer": _check_bool,
    "pipeline_stages": lambda n, v: _check_int(n, v, 1, 4096),
    "parallel_optimizer_config": _check_optimizer_config,
    "search_mode": lambda n, v: _check_search_mode(n, v),
    "auto_parallel_search_mode": lambda n, v: _check_search_mode(n, v),
    "strategy_ckpt_save_file": _check_str,
    "strategy_ckpt_load_file": _check_str,
    "strategy_ckpt_config": _check_strategy_ckpt_config,
    "enable_alltoall": _check_bool,
    "loss_repeated_mean": _check_bool,
    "pipeline_result_broadcast": _check_bool,
}


def strategy_ckpt_file(kind: str) -> str:
    """The strategy file to ``"save"`` or ``"load"``: ``strategy_ckpt_config``'s, else the older option's
    (``strategy_ckpt_save_file`` / ``strategy_ckpt_load_file``); "" when neither is set."""
    return _state["strategy_ckpt_config"][f"{kind}_file"] or _state[f"strategy_ckpt_{kind}_file"]


SEARCH_MODES = ("recursive_programming", "dynamic_programming", "sharding_propagation")


def _check_search_mode(name, value):
    if value not in SEARCH_MODES:
        raise ValueError(f"{_where(name)} must be one of {list(SEARCH_MODES)}, but got {value!r}.")
    return value


def searches_strategies() -> bool:
    """Whether AUTO_PARALLEL searches the strategies of the whole network before its first step (a search
    mode other than sharding propagation)."""
    return _state["parallel_mode"] == ParallelMode.AUTO_PARALLEL and _state["search_mode"] != "sharding_propagation"


def operator_parallel() -> bool:
    """Whether operators run sharded (SEMI_AUTO_PARALLEL or AUTO_PARALLEL): ``Cell.__call__`` then runs the
    outermost cell under the sharding interpreter (``opforge/dispatch/sharding.py``)."""
    return _state["parallel_mode"] in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)


def optimizer_parallel() -> bool:
    """Whether optimizer states are split across the ranks (``enable_parallel_optimizer`` in a parallel mode)."""
    return _state["enable_parallel_optimizer"] and _state["parallel_mode"] != ParallelMode.STAND_ALONE


def check_option(key: str, value, where: str = "set_auto_parallel_context"):
    """``value`` of option ``key`` as the context keeps it, or a TypeError/ValueError naming ``where`` (the
    function the user called)."""
    check = _CHECKS.get(key)
    if check is None:
        raise ValueError(f"For '{where}', unknown option '{key}'; options: {sorted(_CHECKS)}.")
    try:
        return check(key, value)
    except (TypeError, ValueError) as e:
        if where == "set_auto_parallel_context":
            raise
        raise type(e)(str(e).replace("For 'set_auto_parallel_context', the", f"For '{where}', the", 1)) from None


def optimizer_sharding() -> tuple:
    """(shard size, threshold in bytes) of optimizer parallel (``parallel_optimizer_config``; -1: all the ranks of
    a stage)."""
    config = _state["parallel_optimizer_config"]
    return config["optimizer_weight_shard_size"], config["parallel_optimizer_threshold"] * 1024


def set_auto_parallel_context(**kwargs) -> None:
    """Set auto-parallel options by name (see the module's docstring for each option and its default)."""
    checked = {}
    for key, value in kwargs.items():
        value = check_option(key, value)
        if key == "auto_parallel_search_mode":  # the older name of search_mode
            warnings.warn(
                "The attribute 'auto_parallel_search_mode' is replaced by 'search_mode' (as in MindSpore, where "
                "it will be deleted).",
                DeprecationWarning,
                stacklevel=2,
            )
            key = "search_mode"
        checked[key] = value
    if "dataset_strategy" in checked:
        if "full_batch" in checked:
            raise ValueError(
                "For 'set_auto_parallel_context', 'dataset_strategy' and 'full_batch' cannot be set together: "
                "dataset_strategy='full_batch' is full_batch=True."
            )
        checked["full_batch"] = checked["dataset_strategy"] == "full_batch"
    elif "full_batch" in checked:
        checked["dataset_strategy"] = "full_batch" if checked["full_batch"] else "data_parallel"
    _state.update(checked)  # all or nothing: a bad option leaves the context as it was
    _explicit.update(checked)


def get_auto_parallel_context(attr_key: str):
    """Read one auto-parallel option."""
    if attr_key not in _CHECKS:
        raise ValueError(f"For 'get_auto_parallel_context', unknown option '{attr_key}'; options: {sorted(_CHECKS)}.")
    if attr_key == "auto_parallel_search_mode":
        attr_key = "search_mode"
    return copy.deepcopy(_state[attr_key])


def reset_auto_parallel_context() -> None:
    """Every option back to its default (stand-alone mode)."""
    _state.clear()
    _state.update(copy.deepcopy(_DEFAULTS))
    _explicit.clear()


def input_strategies():
    """``dataset_strategy``'s tuple of per-input strategies, or None when the inputs are whole batches or blocks
    of the batch dim (``full_batch``)."""
    value = _state["dataset_strategy"]
    return value if isinstance(value, tuple) else None


@contextmanager
def applied(options: dict):
    """The context with exactly ``options`` set (the others at their defaults) while the block runs, then as it
    was: MindSpore's ``AutoParallel`` cell brings its own settings to the calls it runs under."""
    saved, saved_explicit = copy.deepcopy(_state), set(_explicit)
    reset_auto_parallel_context()
    try:
        set_auto_parallel_context(**options)
        yield
    finally:
        _state.clear()
        _state.update(saved)
        _explicit.clear()
        _explicit.update(saved_explicit)


def _is_set(attr_key: str) -> bool:
    """Whether the user set ``attr_key`` since the last reset (``device_num`` defaults to the group size)."""
    return attr_key in _explicit


def _fusion_plan() -> tuple:
    """``("size", megabytes)`` or ``("index", [indices])``: how the gradient reducer builds its buckets.

    ``all_reduce_fusion_config`` wins when set; else ``comm_fusion['allreduce']``."""
    indices = _state["all_reduce_fusion_config"]
    if indices:
        return "index", list(indices)
    fusion = _state["comm_fusion"].get("allreduce", {"mode": "auto"})
    if fusion["mode"] == "index":
        return "index", list(fusion["config"])
    if fusion["mode"] == "size":
        return "size", float(fusion["config"])
    return "size", DEFAULT_BUCKET_MB
