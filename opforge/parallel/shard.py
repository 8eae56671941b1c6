"""MindSpore's ``shard`` of a Cell or a function (``mindspore.shard``, ``mindspore.parallel.shard``,
``Cell.shard``): the layouts of its inputs (``in_strategy``), of its outputs (``out_strategy``) and of its
Parameters by name (``parameter_plan``), the operators inside following them (sharding propagation), in
SEMI_AUTO_PARALLEL and AUTO_PARALLEL mode. Each strategy is a tuple of split counts, one per dim, or a
MindSpore ``Layout`` (opforge/parallel_layout.py), as in ``Primitive.shard``; None leaves that input or output
as it is. Outside those modes, and outside a parallel
network's call, the strategies are kept and change nothing (as ``Primitive.shard``'s). docs/parallel.md."""

from __future__ import annotations

import warnings

from opforge.dispatch import sharding
from opforge.parallel_context import operator_parallel
from opforge.parallel_layout import Layout, checked_split_counts
from opforge.primitives.sharding_ops import relayout, strategy_layout
from opforge.tensor import Tensor

__all__ = ["ShardSpec", "reshard", "shard", "shard_cell"]

_DEVICES = ("CPU", "GPU", "Ascend")


def _strategies(where: str, arg: str, value, optional: bool):
    """``value`` as a tuple of strategies (tuples of positive ints) or Nones, or a TypeError/ValueError."""
    if value is None and optional:
        return None
    if not isinstance(value, tuple):
        raise TypeError(f"For '{where}', the '{arg}' must be a tuple, but got {type(value).__name__}.")
    subject = f"For '{where}', each element of '{arg}' (or None)"
    return tuple(None if s is None else checked_split_counts(s, subject) for s in value)


class ShardSpec:
    """What ``shard`` was given for one Cell or function (``name``, for errors), checked; ``call`` runs it
    with its inputs, Parameters and outputs laid out so."""

    def __init__(self, name: str, in_strategy, out_strategy=None, parameter_plan=None, device="Ascend", level=0):
        where = f"{name}.shard"
        self.name = name
        self.in_strategy = _strategies(where, "in_strategy", in_strategy, optional=False)
        self.out_strategy = _strategies(where, "out_strategy", out_strategy, optional=True)
        if parameter_plan is not None and not isinstance(parameter_plan, dict):
            raise TypeError(
                f"For '{where}', the 'parameter_plan' must be a dict or None, but got {type(parameter_plan).__name__}."
            )
        plan = parameter_plan or {}
        if not all(isinstance(k, str) for k in plan):
            raise TypeError(f"For '{where}', the keys of 'parameter_plan' must be str, but got {list(plan)}.")
        plan = {k.removeprefix("self."): v for k, v in plan.items()}  # MindSpore's keys may name them as attributes
        self.parameter_plan = dict(zip(plan, _strategies(where, "parameter_plan", tuple(plan.values()), False)))
        if device not in _DEVICES:
            raise ValueError(f"For '{where}', the 'device' must be one of {_DEVICES}, but got {device!r}.")
        if level not in (0, 1, 2) or isinstance(level, bool):
            raise ValueError(f"For '{where}', the 'level' must be 0, 1 or 2, but got {level!r}.")
        self.device, self.level = device, level
        self._parameters_laid_out = False

    def call(self, run, args: tuple, kwargs: dict, named_parameters=None):
        """``run(*args, **kwargs)`` with the inputs, and the Parameters ``named_parameters()`` yields, laid out
        as the strategies say, then the outputs; only inside a parallel network's call in a mode that shards
        operators (elsewhere ``run`` as it is)."""
        if not (operator_parallel() and sharding.active()):
            return run(*args, **kwargs)
        if named_parameters is not None and not self._parameters_laid_out:
            self._lay_out_parameters(named_parameters)
        args = self._laid_out(args, self.in_strategy, "in_strategy")
        out = run(*args, **kwargs)
        if self.out_strategy is None:
            return out
        many = isinstance(out, tuple)
        laid = self._laid_out(out if many else (out,), self.out_strategy, "out_strategy")
        return laid if many else laid[0]

    def _laid_out(self, values: tuple, strategies: tuple, arg: str) -> tuple:
        if len(strategies) != len(values):
            raise ValueError(
                f"For '{self.name}.shard', the '{arg}' must have one strategy (or None) per "
                f"{'input' if arg == 'in_strategy' else 'output'} ({len(values)}), but got {len(strategies)}."
            )
        out = []
        for k, (v, s) in enumerate(zip(values, strategies)):
            if s is not None and not isinstance(v, Tensor):
                raise TypeError(f"For '{self.name}.shard', '{arg}[{k}]' lays out a Tensor, but got {type(v).__name__}.")
            out.append(v if s is None else relayout(v, s, f"{self.name}.shard"))
        return tuple(out)

    def _lay_out_parameters(self, named_parameters) -> None:
        """Each Parameter ``parameter_plan`` names (by its name, or the end of it after a '.') split in place
        once; a name that matches none, or a Parameter laid out already, is skipped with a warning (MindSpore
        skips them)."""
        self._parameters_laid_out = True
        params = list(named_parameters())
        for key, strategy in self.parameter_plan.items():
            found = [p for name, p in params if name == key or name.endswith("." + key) or p.name == key]
            if not found:
                warnings.warn(
                    f"For '{self.name}.shard', the parameter_plan names '{key}', which is none of its Parameters: "
                    "skipped.",
                    sharding.ShardingWarning,
                    stacklevel=4,
                )
                continue
            param = found[0]
            if not sharding.layout_of(param).is_replicated:
                warnings.warn(
                    f"For '{self.name}.shard', the Parameter '{param.name}' is laid out already "
                    f"({sharding.layout_of(param)}): its parameter_plan entry is skipped.",
                    sharding.ShardingWarning,
                    stacklevel=4,
                )
                continue
            if len(strategy) != len(param.shape):
                raise ValueError(
                    f"For '{self.name}.shard', the parameter_plan of '{key}' must have one split count per dim "
                    f"({len(param.shape)}), but got {strategy}."
                )
            sharding.split_parameter(param, strategy_layout(strategy, f"{self.name}.shard"))


class _ShardedFunction:
    """A function ``shard`` was given: called, it runs as its ``ShardSpec`` says."""

    def __init__(self, fn, spec: ShardSpec):
        self.fn, self.spec = fn, spec
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self.spec.call(self.fn, args, kwargs)


def shard_cell(cell, in_strategy, out_strategy=None, parameter_plan=None, device="Ascend", level=0):
    """MindSpore's ``Cell.shard``: from now on ``cell`` runs as its ``ShardSpec`` says (``Cell`` calls it through
    ``_shard_spec``). Returns a function calling it, as MindSpore's: kept as another attribute of the network
    (``self.block_shard = self.block.shard(...)``), it does not register the cell, and its Parameters, again."""
    spec = ShardSpec(type(cell).__name__, in_strategy, out_strategy, parameter_plan, device, level)
    object.__setattr__(cell, "_shard_spec", spec)
    return _CellCall(cell)


class _CellCall:
    """The function ``Cell.shard`` returns: a call of the cell."""

    def __init__(self, cell):
        self.cell = cell
        self.__name__ = type(cell).__name__

    def __call__(self, *args, **kwargs):
        return self.cell(*args, **kwargs)


def shard(fn, in_strategy, out_strategy=None, parameter_plan=None, device="Ascend", level=0):
    """MindSpore's ``shard(fn, in_strategy, out_strategy=None, parameter_plan=None, device="Ascend", level=0)``:
    ``fn`` (a Cell: ``shard_cell``; or a function, returned wrapped) runs with its inputs
    laid out as ``in_strategy`` says (one tuple of split counts per input, or None), its outputs as
    ``out_strategy`` says, and a Cell's Parameters as ``parameter_plan`` says ({name: strategy}); the operators
    inside follow those layouts. ``device`` and ``level`` are checked and kept, as MindSpore's (which does not
    use them either)."""
    if hasattr(fn, "construct") and hasattr(fn, "parameters_and_names"):  # a Cell (nn imports this module)
        return shard_cell(fn, in_strategy, out_strategy, parameter_plan, device, level)
    if not callable(fn):
        raise TypeError(f"For 'shard', the 'fn' must be a Cell or a function, but got {type(fn).__name__}.")
    if parameter_plan:
        raise ValueError("For 'shard', a 'parameter_plan' needs a Cell with Parameters as 'fn', but got a function.")
    name = getattr(fn, "__name__", type(fn).__name__)
    return _ShardedFunction(fn, ShardSpec(name, in_strategy, out_strategy, None, device, level))


def reshard(tensor, layout):
    """MindSpore's ``reshard(tensor, layout)``: ``tensor`` laid out as the ``Layout`` says (a Tensor equal to
    it), the operators after it following; inside a parallel network's call in SEMI_AUTO_PARALLEL or
    AUTO_PARALLEL mode, else ``tensor`` itself."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"For 'reshard', the 'tensor' must be a Tensor, but got {type(tensor).__name__}.")
    if not isinstance(layout, Layout):
        raise TypeError(f"For 'reshard', the 'layout' must be a Layout, but got {type(layout).__name__}.")
    counts = layout.split_counts()
    if not (operator_parallel() and sharding.active()):
        return tensor
    return relayout(tensor, counts, "reshard")
