"""Cell: the base of every network, layer, loss and optimizer (MindSpore's ``nn.Cell``).

A Cell computes in ``construct``; calling the cell calls it. Parameters and sub-cells assigned as
attributes are registered, in order, so a cell tree can list its weights with hierarchical names
(``fc1.weight``), switch train/eval mode, be printed and be saved to a checkpoint.

Parameter names follow MindSpore: a Parameter assigned to a cell takes the attribute name (when it
has no name of its own), and a sub-cell assigned to a cell whose ``auto_prefix`` is True has its
parameters renamed to their path from that cell (``fc1.weight``; every sub-cell on the way adds its
attribute name, ``auto_prefix=False`` ones too). Wrappers (``WithLossCell``,
``TrainOneStepCell``, optimizers) use ``auto_prefix=False``, so the network's names do not change
when it is wrapped and a checkpoint saved from the wrapper loads into the bare network.

A ParameterTuple assigned as an attribute registers its Parameters under their own names, as MindSpore's
(``_set_attr_for_parameter_tuple``); the listings give each Parameter object once, so a network's weights held
again by an optimizer's or a wrapper's tuple appear once, and keep the names their own cells give them.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterator, Mapping

from opforge import context, log
from opforge import dtype as mstype
from opforge.bprop import cell_bprop
from opforge.bprop import recompute as recomputation
from opforge.common.parameter import ParameterTuple
from opforge.communication.management import get_group_size, get_rank
from opforge.dispatch import pipeline, sharding, strategy_file
from opforge.dispatch.interpreter import current_interpreter
from opforge.jit import JitFunction
from opforge.jit_config import check_jit_config
from opforge.nn.mixed_precision import cell_constants, mixed_precision_cast, parameters_cast_to
from opforge.parallel import strategy_search
from opforge.parallel.shard import shard_cell
from opforge.parallel_context import (
    get_auto_parallel_context,
    operator_parallel,
    optimizer_parallel,
    searches_strategies,
    strategy_ckpt_file,
)
from opforge.primitives.array_ops import Assign
from opforge.tensor import Parameter, PlaceholderError, Tensor, is_placeholder

_TO_FLOAT_TYPES = (mstype.float16, mstype.bfloat16, mstype.float32)
# the flags MindSpore's to_float sets on each cell (add_flags_recursive(fp16=True) is to_float(float16) there)
_PRECISION_FLAGS = {"fp16": mstype.float16, "bf16": mstype.bfloat16, "fp32": mstype.float32}
_assign = Assign()


def _describe_inputs(cell, args, kwargs) -> str:
    """``x=Tensor(Float64, [2, 3])``: the call's arguments under construct's parameter names."""
    code = getattr(type(cell).construct, "__code__", None)
    names = code.co_varnames[1 : code.co_argcount] if code is not None else ()

    def show(v):
        return f"Tensor({v.dtype}, {list(v.shape)})" if isinstance(v, Tensor) else type(v).__name__

    parts = [f"{names[i] if i < len(names) else f'arg{i}'}={show(a)}" for i, a in enumerate(args)]
    return ", ".join(parts + [f"{k}={show(v)}" for k, v in kwargs.items()])


def _named_by_cell(cell, error: Exception, args, kwargs) -> Exception:
    """``error`` led by the Cell the user called and its inputs (the operator's own message follows); the
    innermost Cell names it, the enclosing ones pass it on unchanged."""
    if getattr(error, "_opforge_cell", None) is not None:
        return error
    name = type(cell).__name__
    if str(error).startswith(f"For '{name}'"):  # the Cell's own check: it names itself already
        error._opforge_cell = name
        return error
    message = f"For '{name}' (a Cell) called with {_describe_inputs(cell, args, kwargs)}: {error}"
    try:
        named = type(error)(message)
    except Exception:  # an exception type that takes other arguments: keep it as it is
        named = error
    named._opforge_cell = name
    return named


__all__ = ["Cell", "SequentialCell", "CellList", "CellDict"]

_DEFAULT_NAME = "Parameter"


def _mark_in_cell(param: Parameter) -> None:
    """Record that a cell holds ``param`` as its own (an attribute, ``insert_param_to_cell``, or the ParameterTuple
    that registered it first); kept in its ParamInfo, which a copy of the cell copies and ``clone()`` does not."""
    param.param_info._in_cell = True


def _in_cell(param: Parameter) -> bool:
    return getattr(param.param_info, "_in_cell", False)


class HookHandle:
    """What ``Cell.register_forward_hook`` / ``register_forward_pre_hook`` return: ``remove()`` drops the hook."""

    _next_id = 0

    def __init__(self, hooks: OrderedDict, hook_fn):
        HookHandle._next_id += 1
        self._hooks, self.handle_id = hooks, HookHandle._next_id
        hooks[self.handle_id] = hook_fn

    def remove(self) -> None:
        self._hooks.pop(self.handle_id, None)


_STAGE_ATTRS = ("pipeline_stage", "pipeline_segment")  # read by the pipeline (opforge/nn/pipeline.py)


def _check_stage(name: str, value) -> None:
    """MindSpore's checks of ``Cell.pipeline_stage`` / ``pipeline_segment``: an int >= 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"For 'Cell', the property '{name}' must be int type, but got type : {type(value).__name__}.")
    if value < 0:
        raise ValueError(f"For 'Cell', the property '{name}' can not be less than 0, but got {value}.")


class Cell:
    """Base class of networks. Subclass it, assign Parameters and Cells in ``__init__`` and compute
    in ``construct``::

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 2)

            def construct(self, x):
                return self.fc(x)
    """

    def __init__(self, auto_prefix: bool = True, flags: dict | None = None):
        """MindSpore's ``Cell(auto_prefix=True, flags=None)``: ``flags``, a dict, is set as ``add_flags(**flags)``."""
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_cells", OrderedDict())
        object.__setattr__(self, "_params_list", OrderedDict())  # PyNative's ParameterTuple attributes
        object.__setattr__(self, "_borrowed", set())  # keys of _params that a ParameterTuple borrowed
        object.__setattr__(self, "_auto_prefix", bool(auto_prefix))
        object.__setattr__(self, "training", False)
        object.__setattr__(self, "_phase", "train")  # MindSpore's: set_train(False) makes it "predict"
        if flags:
            if not isinstance(flags, Mapping):
                raise TypeError(f"For 'Cell', the 'flags' must be a dict, but got {type(flags).__name__}.")
            self.add_flags(**flags)

    # -- registration ---------------------------------------------------------------------------
    def _registries(self):
        try:
            return self.__dict__["_params"], self.__dict__["_cells"]
        except KeyError:
            raise AttributeError(
                f"For '{type(self).__name__}', call super().__init__() before assigning attributes."
            ) from None

    def __setattr__(self, name: str, value) -> None:
        if name in _STAGE_ATTRS:
            _check_stage(name, value)
        self.__dict__.pop("_float_constants", None)  # what to_float casts may change (_construct)
        if isinstance(value, ParameterTuple):
            self._set_attr_for_parameter_tuple(name, value)
            return
        if isinstance(value, (Parameter, Cell)):
            params, cells = self._registries()
            self.__dict__.pop(name, None)
            self._forget_param(name)
            cells.pop(name, None)
            self.__dict__.get("_params_list", {}).pop(name, None)
            if isinstance(value, Parameter):
                if value.name == _DEFAULT_NAME:
                    value.name = name
                params[name] = value
                _mark_in_cell(value)
            else:
                cells[name] = value
                if self._auto_prefix:
                    value.update_parameters_name(name + ".")
            return
        params = self.__dict__.get("_params")
        cells = self.__dict__.get("_cells")
        if params is not None and name in params:
            if isinstance(value, Tensor) and params[name] is not None:
                # MindSpore's ``self.param = tensor`` in construct: the Parameter takes the value (an Assign,
                # so a traced construct replays it), keeping its shape and dtype
                _assign(params[name], value)
                return
            if value is not None:
                raise TypeError(
                    f"For '{type(self).__name__}', the attribute '{name}' is a Parameter; assign a Parameter, a Tensor "
                    f"or None, not {type(value).__name__}."
                )
            self._forget_param(name)
        if cells is not None and name in cells:
            if value is not None:
                raise TypeError(
                    f"For '{type(self).__name__}', the attribute '{name}' is a Cell; assign a Cell or None, "
                    f"not {type(value).__name__}."
                )
            del cells[name]
        params_list = self.__dict__.get("_params_list")
        if params_list and name in params_list:  # a ParameterTuple attribute (PyNative) given another value
            del params_list[name]
        object.__setattr__(self, name, value)

    def _set_attr_for_parameter_tuple(self, name: str, value: ParameterTuple) -> None:
        """MindSpore's: each Parameter of the tuple is registered in this cell under its own name (a repeated
        object once; a default-named one renamed ``Parameter$<n>`` first; two different ones of one name a
        ValueError), so ``trainable_params()`` and checkpoints list it; the tuple is kept in ``_params_list`` in
        PyNative mode, as a plain attribute in graph mode. A Parameter some cell holds already (a network's, in
        an optimizer's or a wrapper's tuple) is listed here too, once overall, and keeps its name: the
        auto-prefix renaming (``update_parameters_name``) passes over it here."""
        params, cells = self._registries()
        where = type(self).__name__
        unique, names = [], {}
        for item in value:
            if any(item is u for u in unique):  # one object more than once: checked and registered once
                continue
            if item.name == _DEFAULT_NAME:
                log.warning(
                    f"For '{where}', the Parameter named '{_DEFAULT_NAME}' in the ParameterTuple '{name}' is renamed: "
                    "please set a unique name for each parameter of a ParameterTuple."
                )
                count = self.__dict__.get("_default_name_id", 1)
                object.__setattr__(self, "_default_name_id", count + 1)
                item.name = f"{_DEFAULT_NAME}${count}"
            if item.name in names:
                raise ValueError(
                    f"For '{where}', the ParameterTuple '{name}' holds two different Parameters named '{item.name}': "
                    "please set a unique name for each parameter."
                )
            names[item.name] = item
            unique.append(item)
        # the attribute's previous value gives way (the Parameters an earlier ParameterTuple registered stay
        # registered, as MindSpore's do)
        self.__dict__.pop(name, None)
        self._forget_param(name)
        cells.pop(name, None)
        for item in unique:
            if params.get(item.name) is item:  # registered so already (as its own, or borrowed): left as it is
                continue
            borrowed = _in_cell(item)  # another cell holds it as its own
            self.insert_param_to_cell(item.name, item, check_name_contain_dot=False)
            if borrowed:
                self.__dict__["_borrowed"].add(item.name)
        params_list = self.__dict__["_params_list"]
        if context.graph_mode():
            params_list.pop(name, None)
            object.__setattr__(self, name, value)
        else:
            params_list[name] = value

    def _forget_param(self, key: str) -> None:
        """Drop the ``_params`` entry ``key`` (if any)."""
        self.__dict__["_params"].pop(key, None)
        self.__dict__.get("_borrowed", set()).discard(key)

    def __getattr__(self, name: str):
        # Reached only when normal lookup fails: registered Parameters and Cells, PyNative's ParameterTuples.
        d = self.__dict__
        if "_params" in d and name in d["_params"]:
            return d["_params"][name]
        if "_cells" in d and name in d["_cells"]:
            return d["_cells"][name]
        if "_params_list" in d and name in d["_params_list"]:
            return d["_params_list"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        d.pop("_float_constants", None)
        if name in d.get("_params", {}):
            self._forget_param(name)
        elif name in d.get("_cells", {}):
            del d["_cells"][name]
        elif name in d.get("_params_list", {}):  # (its Parameters stay registered, as MindSpore's)
            del d["_params_list"][name]
        else:
            object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name: str, param: Parameter, check_name_contain_dot: bool = True) -> None:
        """MindSpore's: register ``param`` (a Parameter, or None) under ``param_name``. KeyError for an empty name,
        for a name with a dot unless ``check_name_contain_dot`` is False (optimizer states: ``moment1.fc.weight``)
        and for the name of another attribute of the cell; a Parameter of the default name takes ``param_name``."""
        if not isinstance(param_name, str) or not param_name:
            raise KeyError("For 'insert_param_to_cell', the argument 'param_name' should not be None.")
        if check_name_contain_dot and "." in param_name:
            raise KeyError("For 'insert_param_to_cell', the argument 'param_name' should not contain '.'.")
        params, _ = self._registries()
        if param_name not in params and hasattr(self, param_name):
            raise KeyError(
                f"For 'insert_param_to_cell', the {param_name} parameter already exists in the network. Cannot "
                "insert another parameter with the same name."
            )
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"For 'insert_param_to_cell', the argument 'param' must be 'Parameter' if not None, "
                f"but got {type(param)}."
            )
        if param is not None:
            if param.name == _DEFAULT_NAME:
                param.name = param_name
            _mark_in_cell(param)
        self.__dict__.get("_borrowed", set()).discard(param_name)
        params[param_name] = param

    def insert_child_to_cell(self, child_name: str, child: Cell) -> None:
        """Register ``child`` under ``child_name`` (as attribute assignment does)."""
        if not isinstance(child, Cell):
            raise TypeError(f"For 'insert_child_to_cell', the 'child' must be a Cell, but got {type(child)}.")
        _, cells = self._registries()
        cells[child_name] = child
        if self._auto_prefix:
            child.update_parameters_name(child_name + ".")

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """Rename every parameter to ``prefix`` + its attribute path in this cell, as MindSpore's: the path
        runs through every sub-cell, ``auto_prefix=False`` ones included (their flag only stops them renaming
        what is assigned to them); a shared parameter takes its first path. A Parameter that a ParameterTuple
        lists in a cell not holding it as its own (an optimizer's ``parameters``, a wrapper's ``weights``)
        takes no path through that cell: it keeps the name its own cell gives it."""
        seen = set()
        cells = self.cells_and_names() if recurse else [("", self)]
        for cell_name, cell in cells:
            borrowed = cell.__dict__.get("_borrowed", ())
            for key, p in cell._params.items():
                if p is None or key in borrowed or id(p) in seen:
                    continue
                seen.add(id(p))
                p.name = prefix + (f"{cell_name}.{key}" if cell_name else key)

    @property
    def cls_name(self) -> str:
        """The name the cell gives itself in errors: its class name unless set (MindSpore's ``Cell.cls_name``)."""
        return self.__dict__.get("_cls_name") or type(self).__name__

    @cls_name.setter
    def cls_name(self, value: str) -> None:
        object.__setattr__(self, "_cls_name", value)

    # -- traversal ------------------------------------------------------------------------------
    def init_parameters_data(self, auto_parallel_mode: bool = False) -> dict:
        """MindSpore's: initialise the parameters' data. opforge's parameters hold their data from the start
        (initialisers run when a Parameter is made), so this only returns ``{name: parameter}``."""
        return dict(self.parameters_and_names())

    def cells_and_names(self, cells=None, name_prefix: str = "") -> Iterator:
        """(name, cell) for this cell ('' or ``name_prefix``) and every sub-cell, depth first, each once."""
        seen = set() if cells is None else cells
        if id(self) in seen:
            return
        seen.add(id(self))
        yield name_prefix, self
        for key, cell in self._cells.items():
            if cell is not None:
                yield from cell.cells_and_names(seen, f"{name_prefix}.{key}" if name_prefix else key)

    def name_cells(self) -> OrderedDict:
        """The direct sub-cells by attribute name."""
        return OrderedDict(self._cells)

    def cells(self) -> list:
        """The direct sub-cells."""
        return list(self._cells.values())

    def parameters_and_names(self, name_prefix: str = "", expand: bool = True) -> Iterator:
        """(path, Parameter) for every parameter of this cell (and of its sub-cells when ``expand``),
        each once; the path is the attribute path (``fc1.weight``)."""
        seen = set()
        cells = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        for cell_name, cell in cells:
            for key, p in cell._params.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{cell_name}.{key}" if cell_name else key), p

    def get_parameters(self, expand: bool = True) -> Iterator:
        """Every parameter (each once)."""
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse: bool = True) -> list:
        """The parameters with ``requires_grad`` True."""
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list:
        """The parameters with ``requires_grad`` False."""
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self) -> OrderedDict:
        """``{parameter.name: parameter}`` (the names a checkpoint uses)."""
        return OrderedDict((p.name, p) for p in self.get_parameters())

    # -- mode -----------------------------------------------------------------------------------
    def set_train(self, mode: bool = True) -> Cell:
        """Training mode (``Dropout`` drops) or, with ``mode=False``, evaluation mode; recursive."""
        if not isinstance(mode, bool):
            raise TypeError(f"For 'set_train', the 'mode' must be bool, but got {type(mode).__name__}.")
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "training", mode)
        # MindSpore's phase name, of this cell only ('train' until set_train(False)); the zoo's TinyBERT reads it
        object.__setattr__(self, "_phase", "train" if mode else "predict")
        return self

    def to_float(self, dst_type) -> Cell:
        """Run this cell and every cell in it with its float Tensor inputs cast to ``dst_type``
        (float16, bfloat16 or float32; MindSpore's mixed precision by cell); returns the cell."""
        if dst_type not in _TO_FLOAT_TYPES:
            raise ValueError(
                f"For 'to_float', the 'dst_type' must be one of {[str(t) for t in _TO_FLOAT_TYPES]}, "
                f"but got {dst_type}."
            )
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "_to_float", dst_type)
        return self

    def set_grad(self, requires_grad: bool = True) -> Cell:
        """Accepted for MindSpore compatibility: eager gradients need no preparation."""
        return self

    def set_comm_fusion(self, fusion_type, recurse: bool = True) -> Cell:
        """MindSpore's: ``comm_fusion = fusion_type`` (an int >= 0) on every trainable Parameter of this cell,
        and of its sub-cells with ``recurse`` (``Parameter.comm_fusion``). Returns the cell."""
        if isinstance(fusion_type, bool) or not isinstance(fusion_type, int):
            raise TypeError(f"For 'set_comm_fusion', the 'fusion_type' must be an int, but got {fusion_type!r}.")
        if fusion_type < 0:
            raise ValueError(f"For 'set_comm_fusion', the 'fusion_type' must be >= 0, but got {fusion_type}.")
        for param in self.trainable_params(recurse):
            param.comm_fusion = fusion_type
        return self

    def recompute(self, **kwargs) -> None:
        """MindSpore's ``Cell.recompute(**kwargs)``: when a gradient is taken through this cell's calls, their
        intermediate tensors are not kept; the backward pass runs the cell's forward again and differentiates that
        (the call's outputs are kept). Random operators draw the same values again (opforge/bprop/recompute.py).
        Keywords (bool, as MindSpore's): ``mp_comm_recompute`` (default True), ``parallel_optimizer_comm_recompute``
        (False), ``recompute_slice_activation`` (False): MindSpore's handling of communication operators in
        (semi-)auto parallel mode, kept on the cell; opforge recomputes the whole forward, collectives included.
        TypeError for a keyword that is not a bool, ValueError for another keyword; configured once, as MindSpore's:
        RuntimeError when this cell, a cell in it or a cell holding it was configured already."""
        recomputation.configure_cell(self, kwargs)

    def add_flags(self, **flags) -> Cell:
        """MindSpore's graph-compiler hints (``loop_can_unroll=True``, ...): recorded in ``get_flags()`` and as
        attributes, as MindSpore does; opforge's tracer needs none of them. The precision flags are what
        MindSpore's ``to_float`` sets, and act as it does: ``fp16=True`` (``bf16``, ``fp32``) runs this cell with
        its float inputs cast to float16 (bfloat16, float32). Returns the cell."""
        self.get_flags().update(flags)
        for key, value in flags.items():
            object.__setattr__(self, key, value)
            if key in _PRECISION_FLAGS and value is True:
                object.__setattr__(self, "_to_float", _PRECISION_FLAGS[key])
        return self

    def add_flags_recursive(self, **flags) -> Cell:
        """``add_flags`` on this cell and every cell in it."""
        for _, cell in self.cells_and_names():
            cell.add_flags(**flags)
        return self

    def get_flags(self) -> dict:
        """The flags ``add_flags`` recorded."""
        if "_func_graph_flags" not in self.__dict__:
            object.__setattr__(self, "_func_graph_flags", {})
        return self._func_graph_flags

    def set_jit_config(self, jit_config) -> None:
        """MindSpore's ``Cell.set_jit_config``: a ``JitConfig`` (or a dict of its options), checked and kept as
        ``jit_config_dict``; only the first is kept, as MindSpore's (a later one is ignored, with a warning).
        opforge's graph mode traces and replays whatever the options say (opforge/jit_config.py)."""
        config = check_jit_config("Cell.set_jit_config", jit_config)
        if self.__dict__.get("_jit_config_dict"):
            log.warning("For Cell, jit config can only be set once, ignore this setting.")
            return
        object.__setattr__(self, "_jit_config_dict", dict(config.jit_config_dict) if config is not None else {})

    @property
    def jit_config_dict(self) -> dict:
        """The options ``set_jit_config`` kept ({} before)."""
        return self.__dict__.get("_jit_config_dict", {})

    # -- call -----------------------------------------------------------------------------------
    def construct(self, *args, **kwargs):
        raise NotImplementedError(f"For '{type(self).__name__}', define construct().")

    def __call__(self, *args, **kwargs):
        specs = self.__dict__.get("_dynamic_shape_inputs")
        if specs is not None and current_interpreter() is None:
            # (set_inputs binds the cell's own call: MindSpore compiles the outermost graph with it, and a cell
            # called inside a trace, a gradient or a parallel call is not checked against it)
            _check_call_inputs(type(self).__name__, specs, args, len(kwargs))
        if (operator_parallel() or optimizer_parallel()) and not sharding.outer_call_active():
            if context.graph_mode() and self.__dict__.get("_sharded_laid_out") and not self._staged_inference():
                # the trace records each rank's local program (the interpreter runs inside it): the local
                # calls with their collectives, optimizer parallel's reduce-scatters, updates and all-gathers,
                # a pipeline's 1F1B schedule with its Send/Receive
                return self._sharded_graph(*args, **kwargs)
            laid_out = self.__dict__.get("_sharded_laid_out")
            if not laid_out and operator_parallel() and get_auto_parallel_context("parameter_broadcast"):
                sharding.broadcast_parameters(self.get_parameters(), get_auto_parallel_context("pipeline_stages"))
            out = self._sharded(*args, **kwargs)
            # The first call splits the parameters in place; later ones may be traced.
            if not laid_out:
                object.__setattr__(self, "_sharded_laid_out", True)
                sharding.lay_out_clones(self.get_parameters())
                self._save_strategy_file()
            return out
        return self._dispatch_call(args, kwargs)

    def _save_strategy_file(self) -> None:
        """MindSpore's ``strategy_ckpt_save_file``: each parameter's layout, once the first call laid them out."""
        path = strategy_ckpt_file("save")
        if not path or not operator_parallel():
            return
        trainable_only = get_auto_parallel_context("strategy_ckpt_config")["only_trainable_params"]
        params = self.trainable_params() if trainable_only else self.get_parameters()
        # a pipeline's rank writes its stage's parameters (the others are placeholders here), as MindSpore's
        stages = get_auto_parallel_context("pipeline_stages")
        params = [p for p in params if not is_placeholder(p)]
        layouts = {p.name: sharding.mindspore_layout(p, stages) for p in params}
        stage = pipeline.stage_of_rank(get_rank(), get_group_size(), stages)
        strategy_file.write_layouts(path, layouts, stage, shapes={p.name: p.shape for p in params})

    def _sharded(self, *args, **kwargs):
        """The outermost cell's call in a parallel mode: every operator below runs sharded, and the
        optimizers' updates split (docs/parallel.md)."""
        if searches_strategies() and not self.__dict__.get("_strategies_searched"):
            object.__setattr__(self, "_strategies_searched", True)
            self._search_strategies(args, kwargs)
        call = lambda *a, **k: self._call_construct(a, k)  # noqa: E731
        if self._staged_inference():  # each rank runs its pipeline stage's cells (opforge/nn/pipeline.py)
            call = lambda *a, _call=call, **k: pipeline.forward_stages(self, _call, a, k)  # noqa: E731
        return sharding.run_outermost(call, args, kwargs, type(self).__name__)

    def _staged_inference(self) -> bool:
        """Whether this outermost call is an evaluation cut into pipeline stages (no PipelineCell)."""
        return get_auto_parallel_context("pipeline_stages") > 1 and pipeline.cuts_into_stages(self)

    def _search_strategies(self, args, kwargs) -> None:
        """AUTO_PARALLEL's strategy search (``opforge/parallel/strategy_search.py``), before the first call. A
        network whose Python reads its tensors' values cannot be recorded from shapes: it falls back to sharding
        propagation, with a warning saying why; so does a network cut into pipeline stages (each stage's ranks are
        a world of their own, which the search does not model)."""
        if get_auto_parallel_context("pipeline_stages") > 1:
            warnings.warn(
                f"For '{type(self).__name__}', the strategy search (AUTO_PARALLEL) does not cut pipeline stages: its "
                "operators follow their inputs' layouts (sharding propagation) instead.",
                sharding.ShardingWarning,
                stacklevel=3,
            )
            return
        try:
            strategy_search.search_strategies(self, args, kwargs, get_auto_parallel_context("full_batch"))
        except PlaceholderError as e:
            warnings.warn(
                f"For '{type(self).__name__}', the strategy search (AUTO_PARALLEL) could not record the network from "
                f"its shapes ({e}); its operators follow their inputs' layouts (sharding propagation) instead.",
                sharding.ShardingWarning,
                stacklevel=3,
            )

    @property
    def _sharded_graph(self) -> JitFunction:
        jitted = self.__dict__.get("_jit_sharded")
        if jitted is None:
            jitted = JitFunction(self._sharded)
            jitted.outermost = True
            object.__setattr__(self, "_jit_sharded", jitted)
        return jitted

    def _dispatch_call(self, args, kwargs):
        hooks = self.__dict__.get("_forward_hooks")
        if not hooks or context.graph_mode():  # (MindSpore runs these hooks in PyNative mode only)
            return self._run_call(args, kwargs)
        for hook_fn in list(hooks["pre"].values()):
            new = hook_fn(self, args)
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        out = self._run_call(args, kwargs)
        for hook_fn in list(hooks["post"].values()):
            new = hook_fn(self, args, out)
            if new is not None:
                out = new
        return out

    # -- forward hooks (MindSpore's, PyNative mode) ---------------------------------------------
    def register_forward_pre_hook(self, hook_fn) -> HookHandle:
        """``hook_fn(cell, inputs)`` runs before each call of this cell (in PYNATIVE_MODE, as MindSpore's); a
        value it returns replaces the inputs (a tuple, or one input). Returns a handle whose ``remove()`` drops it."""
        return self._add_forward_hook("pre", hook_fn, "register_forward_pre_hook")

    def register_forward_hook(self, hook_fn) -> HookHandle:
        """``hook_fn(cell, inputs, output)`` runs after each call of this cell (in PYNATIVE_MODE, as MindSpore's);
        a value it returns replaces the output. Returns a handle whose ``remove()`` drops it."""
        return self._add_forward_hook("post", hook_fn, "register_forward_hook")

    def _add_forward_hook(self, kind: str, hook_fn, where: str) -> HookHandle:
        if not callable(hook_fn):
            raise TypeError(f"For '{where}', the 'hook_fn' must be a function, but got {type(hook_fn).__name__}.")
        hooks = self.__dict__.get("_forward_hooks")
        if hooks is None:
            hooks = {"pre": OrderedDict(), "post": OrderedDict()}
            object.__setattr__(self, "_forward_hooks", hooks)
        return HookHandle(hooks[kind], hook_fn)

    def _run_call(self, args, kwargs):
        dst = self.__dict__.get("_to_float")
        if dst is not None:  # its float inputs, in tuples, lists, dicts and keyword arguments too (MindSpore's)
            args, kwargs = mixed_precision_cast(dst, args), mixed_precision_cast(dst, kwargs)
        run = pipeline.current_run()
        if run is not None and "pipeline_stage" in self.__dict__:
            return run.call(self, args, kwargs)  # this rank runs, sends, receives or only shapes it
        try:
            if getattr(type(self), "bprop", None) is not None:  # its own backward (MindSpore's Cell.bprop)
                return cell_bprop.call_with_bprop(self, lambda: self._call_construct(args, kwargs), args)
            if "_recompute_kwargs" in self.__dict__:  # Cell.recompute(): its activations recomputed in backward
                run = lambda: self._call_construct(args, kwargs)  # noqa: E731
                return recomputation.call_recomputed(self, run, args, kwargs, type(self).__name__)
            return self._call_construct(args, kwargs)
        except (TypeError, ValueError) as e:
            raise _named_by_cell(self, e, args, kwargs) from e

    def _call_construct(self, args, kwargs):
        spec = self.__dict__.get("_shard_spec")
        if spec is not None:  # Cell.shard: its inputs, Parameters and outputs laid out so
            return spec.call(lambda *a, **k: self._construct_call(a, k), args, kwargs, self.parameters_and_names)
        return self._construct_call(args, kwargs)

    def _construct_call(self, args, kwargs):
        if context.graph_mode():
            return self._graph(*args, **kwargs)
        return self._construct(*args, **kwargs)

    def set_param_ps(self, recurse: bool = True, init_in_server: bool = False) -> None:
        """MindSpore's ``Cell.set_param_ps``: ``Parameter.set_param_ps(init_in_server)`` of each trainable
        Parameter (of the sub-cells too with ``recurse``): recorded, the parameters train where the network runs
        (opforge/ps_context.py)."""
        for p in self.trainable_params(recurse):
            p.set_param_ps(init_in_server)

    def place(self, role: str, rank_id: int) -> None:
        """MindSpore's ``Cell.place(role, rank_id)`` (distributed graph partition: the cell's operators run on the
        process ``role`` ``rank_id`` of a dynamic cluster, their outputs sent to the others): checked and recorded
        on the cell and its sub-cells (``_placement``). opforge's processes each run the whole program, which
        computes the same values."""
        if role != "MS_WORKER":
            raise ValueError(f"For '{type(self).__name__}.place', the 'role' must be 'MS_WORKER', but got {role!r}.")
        if isinstance(rank_id, bool) or not isinstance(rank_id, int) or rank_id < 0:
            raise ValueError(
                f"For '{type(self).__name__}.place', the 'rank_id' must be an int >= 0, but got {rank_id!r}."
            )
        for _, cell in self.cells_and_names():
            object.__setattr__(cell, "_placement", (role, rank_id))

    def shard(self, in_strategy, out_strategy=None, parameter_plan=None, device="Ascend", level=0):
        """MindSpore's ``Cell.shard``: in SEMI_AUTO_PARALLEL and AUTO_PARALLEL mode this cell runs with its inputs
        laid out as ``in_strategy`` says (one tuple of split counts per input, or None to leave it), its
        outputs as ``out_strategy`` says, and its Parameters as ``parameter_plan`` says ({name: strategy}, a
        name matched whole or by its end, a leading "self." dropped); the operators inside follow those layouts
        (sharding propagation). Returns a function calling the cell, as MindSpore's (opforge/parallel/shard.py;
        docs/parallel.md)."""
        return shard_cell(self, in_strategy, out_strategy, parameter_plan, device, level)

    def _construct(self, *args, **kwargs):
        """``construct``, its primitives reading float Parameters and this cell's constant float Tensors in
        the to_float dtype when one is set (opforge/nn/mixed_precision.py); what graph mode traces."""
        dst = self.__dict__.get("_to_float")
        if dst is None:
            return self.construct(*args, **kwargs)
        constants = self.__dict__.get("_float_constants")
        if constants is None:  # kept until an attribute changes (__setattr__, __delattr__)
            constants = cell_constants(self)
            object.__setattr__(self, "_float_constants", constants)
        with parameters_cast_to(dst, constants):
            return self.construct(*args, **kwargs)

    @property
    def _graph(self) -> JitFunction:
        """This cell's construct, traced per input signature (graph mode); made on first use."""
        jitted = self.__dict__.get("_jit_construct")
        if jitted is None:
            jitted = JitFunction(self._construct, name=f"{type(self).__name__}.construct")
            object.__setattr__(self, "_jit_construct", jitted)
        return jitted

    # -- dynamic shapes (docs/dynamic_shape.md) -------------------------------------------------
    def set_inputs(self, *inputs) -> None:
        """The input specs of later calls, as MindSpore's: placeholders such as
        ``Tensor(shape=[None, 3], dtype=mstype.float32)`` (a None / -1 dim may vary, the shape None an
        unknown rank) or concrete Tensors. Each call is checked against them (count, dtype, rank and
        every known dim); ``opforge.eval_shape(cell)`` and ``jit`` read them (``get_inputs``)."""
        object.__setattr__(self, "_dynamic_shape_inputs", tuple(inputs))

    def get_inputs(self):
        """The specs given to ``set_inputs``, or None."""
        return self.__dict__.get("_dynamic_shape_inputs")

    def compile(self, *args, **kwargs) -> None:
        """MindSpore's ``Cell.compile(*inputs)``: there, the graph is built for these inputs before a call
        (``predict`` after it). opforge builds nothing ahead: a call runs (PYNATIVE_MODE) or is traced at the
        first call (GRAPH_MODE); here the inputs are checked against ``set_inputs``'s specs when there are
        some, and nothing runs."""
        specs = self.__dict__.get("_dynamic_shape_inputs")
        if specs is not None:
            _check_call_inputs(type(self).__name__, specs, args, len(kwargs))

    # -- printing -------------------------------------------------------------------------------
    def extend_repr(self) -> str:
        """Extra text shown between the brackets of this cell's repr (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extend_repr()
        name = type(self).__name__
        if not self._cells:
            return f"{name}<{extra}>"
        lines = [f"{name}<{extra}"]
        for key, cell in self._cells.items():
            body = repr(cell).replace("\n", "\n  ")
            lines.append(f"  ({key}): {body}")
        lines.append("  >")
        return "\n".join(lines)


class SequentialCell(Cell):
    """Runs cells in order, each on the previous one's output. ``SequentialCell([a, b])``,
    ``SequentialCell(a, b)`` or ``SequentialCell(OrderedDict(name=cell))``; children are named
    ``"0"``, ``"1"`` ... unless named by the dict."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if len(args) == 1 and isinstance(args[0], dict):
            for key, cell in args[0].items():
                self._check(cell)
                self.insert_child_to_cell(str(key), cell)
            return
        for i, cell in enumerate(args):
            self._check(cell)
            self.insert_child_to_cell(str(i), cell)

    @staticmethod
    def _check(cell) -> None:
        if not isinstance(cell, Cell):
            raise TypeError(f"For 'SequentialCell', every item must be a Cell, but got {type(cell).__name__}.")

    def append(self, cell: Cell) -> SequentialCell:
        self._check(cell)
        self.insert_child_to_cell(str(len(self._cells)), cell)
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return _view(SequentialCell(), self._cells, index)
        return list(self._cells.values())[index]

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def construct(self, x):
        for cell in self._cells.values():
            x = cell(x)
        return x


class CellList(Cell):
    """MindSpore's ``nn.CellList(*args, **kwargs)``: a list of cells, registered as children ``"0"``, ``"1"`` ...
    (it has no ``construct``). ``args`` is at most one list of cells; the keyword ``auto_prefix`` (default True)
    is the Cell's: False leaves the names of the parameters of the cells added (``append``, ``extend``,
    ``insert``, ``cell_list[i] = cell``) as they are, without the ``"<index>."`` prefix."""

    def __init__(self, *args, **kwargs):
        unknown = sorted(set(kwargs) - {"auto_prefix"})
        if unknown:
            raise TypeError(f"For 'CellList', the only keyword argument is 'auto_prefix', but got {unknown}.")
        if len(args) > 1:
            raise TypeError(f"For 'CellList', give at most one list of cells, but got {len(args)} arguments.")
        super().__init__(auto_prefix=kwargs.get("auto_prefix", True))
        if args and args[0] is not None:
            self.extend(args[0])

    def _reindex(self) -> None:
        cells = list(self._cells.values())
        self._cells.clear()
        for i, cell in enumerate(cells):
            self.insert_child_to_cell(str(i), cell)

    def append(self, cell: Cell) -> CellList:
        SequentialCell._check(cell)
        self.insert_child_to_cell(str(len(self._cells)), cell)
        return self

    def extend(self, cells) -> CellList:
        for cell in cells:
            self.append(cell)
        return self

    def insert(self, index: int, cell: Cell) -> None:
        SequentialCell._check(cell)
        cells = list(self._cells.values())
        cells.insert(index, cell)
        self._cells.clear()
        for i, c in enumerate(cells):
            self.insert_child_to_cell(str(i), c)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return _view(CellList(), self._cells, index)
        return list(self._cells.values())[index]

    def __setitem__(self, index: int, cell: Cell) -> None:
        SequentialCell._check(cell)
        key = list(self._cells)[index]
        self.insert_child_to_cell(key, cell)

    def __delitem__(self, index) -> None:
        keys = list(self._cells)
        for key in keys[index] if isinstance(index, slice) else [keys[index]]:
            del self._cells[key]
        self._reindex()

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells.values())

    def construct(self, *args, **kwargs):
        raise NotImplementedError("For 'CellList', there is no construct(): iterate over its cells.")


class CellDict(Cell):
    """MindSpore's ``nn.CellDict(*args, **kwargs)``: an ordered dict of cells, registered as children under
    their keys (so their parameters are the container's, named ``key.<name>``). ``args`` is at most one
    mapping (dict, OrderedDict, CellDict) or iterable of (key, cell) pairs, added in their order; keyword
    arguments follow. Keys are non-empty strings without "." (TypeError, KeyError otherwise); values are
    Cells (TypeError). It has no ``construct``: index it by key. The keyword ``auto_prefix`` (default True) is
    the Cell's, as MindSpore's ``CellDict`` means to read it: False leaves the names of the parameters of the
    cells added as they are, without the ``"<key>."`` prefix."""

    def __init__(self, *args, **kwargs):
        super().__init__(auto_prefix=kwargs.pop("auto_prefix", True))
        if len(args) > 1:
            raise TypeError(f"For 'CellDict', give at most one positional argument, but got {len(args)}.")
        if args:
            self.update(args[0])
        if kwargs:
            self.update(kwargs)

    @staticmethod
    def _check_key(key) -> str:
        if not isinstance(key, str):
            raise TypeError(f"For 'CellDict', every key must be a str, but got {type(key).__name__}.")
        if not key or "." in key:
            raise KeyError(f"For 'CellDict', a key must be non-empty and hold no '.', but got {key!r}.")
        return key

    def __getitem__(self, key: str) -> Cell:
        return self._cells[key]

    def __setitem__(self, key: str, cell: Cell) -> None:
        if not isinstance(cell, Cell):
            raise TypeError(f"For 'CellDict', every value must be a Cell, but got {type(cell).__name__}.")
        self.insert_child_to_cell(self._check_key(key), cell)

    def __delitem__(self, key: str) -> None:
        del self._cells[key]

    def __len__(self) -> int:
        return len(self._cells)

    def __iter__(self):
        return iter(self._cells)

    def __contains__(self, key) -> bool:
        return key in self._cells

    def clear(self) -> None:
        self._cells.clear()

    def pop(self, key: str) -> Cell:
        return self._cells.pop(key)

    def keys(self):
        return self._cells.keys()

    def values(self):
        return self._cells.values()

    def items(self):
        return self._cells.items()

    def update(self, cells) -> None:
        """Add (or replace) the cells of a mapping or of an iterable of (key, cell) pairs, in their order."""
        if hasattr(cells, "items") and callable(cells.items):
            pairs = list(cells.items())
        else:
            pairs = []
            for i, pair in enumerate(cells):
                if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                    raise TypeError(
                        f"For 'CellDict', item {i} of the cells must be a (key, cell) pair, but got {pair!r}."
                    )
                pairs.append(tuple(pair))
        for key, cell in pairs:
            self[key] = cell

    def construct(self, *args, **kwargs):
        raise NotImplementedError("For 'CellDict', there is no construct(): index it by key.")


def _view(new: Cell, cells: OrderedDict, index: slice) -> Cell:
    """``new`` holding a slice of ``cells`` without renaming their parameters (they stay named
    after the cell they belong to)."""
    for i, cell in enumerate(list(cells.values())[index]):
        new._cells[str(i)] = cell
    return new


def _check_call_inputs(cell_name: str, specs: tuple, args: tuple, n_keywords: int = 0) -> None:
    """A call's inputs against the specs of ``set_inputs`` (the positional ones; keywords are counted):
    a clear error naming the cell and input."""
    where = f"For '{cell_name}', the inputs were set by set_inputs"
    if len(args) + n_keywords != len(specs):
        raise TypeError(f"{where} to {len(specs)} inputs, but the call got {len(args) + n_keywords}.")
    for i, (spec, arg) in enumerate(zip(specs, args)):
        if not isinstance(spec, Tensor):
            continue
        if not isinstance(arg, Tensor):
            raise TypeError(f"{where}: input {i} must be a Tensor, but got {type(arg).__name__}.")
        if arg.dtype != spec.dtype:
            raise TypeError(f"{where}: input {i} must have dtype {spec.dtype}, but got {arg.dtype}.")
        want, got = spec.shape, arg.shape
        if want == (-2,) or got == (-2,):
            continue
        if len(got) != len(want) or any(w >= 0 and g >= 0 and w != g for w, g in zip(want, got)):
            raise ValueError(f"{where}: input {i} must have shape {list(want)} (-1: any size), but got {list(got)}.")
