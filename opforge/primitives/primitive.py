"""Primitive: the base of every operator (docs/architecture.md, "One call").

A primitive holds its attrs and its inference; calling it hands the call to the current
interpreter (``opforge.dispatch.interpreter``), which by default runs the call's *plan*
(``opforge.dispatch.plan``): binding, inference and kernel selection done once per distinct call,
so later calls with the same metas go straight to the kernel.
"""

from __future__ import annotations

import copy
import functools
import inspect
import weakref

from opforge import _C, context
from opforge import dtype as mstype
from opforge.device import BACKENDS
from opforge.dispatch import binding, plan, sharding
from opforge.dispatch.interpreter import EVAL
from opforge.dispatch.signature import make_sig, sig_dtype
from opforge.kernels import registry
from opforge.parallel_layout import split_counts
from opforge.tensor import Tensor

__all__ = [
    "Primitive",
    "PrimitiveWithInfer",
    "PrimitiveWithCheck",
    "prim_attr_register",
    "primitive_classes",
    "with_attrs",
]

_IO_ATTRS = ("input_names", "output_names")
_classes: dict = {}  # every public operator class, by name
# The plans of primitive instances with equal attrs, one dict per (class, name, attrs, device) shared
# by all of them as their ``_plans``: a new instance finds its plans on its first call, and a new
# kernel drops every plan by clearing these dicts. Instances whose attrs have no key keep plans of
# their own, and are listed in ``_unshared`` for that.
_shared_plans: dict = {}
_unshared = weakref.WeakSet()


class _PrimitiveType(type):
    """The type of operator classes: their docstrings end with the kernels the registry holds for
    them, per backend, read when the docstring is asked for. The registrations are the one record
    of which dtypes a backend runs; a docstring says what the operator means."""

    @property
    def __doc__(cls):
        own = cls.__dict__.get("__doc__") or ""
        table = _kernel_table(cls.__name__)
        return f"{own.rstrip()}\n\n{table}" if table else own


def _kernel_table(op_name: str) -> str:
    lines = []
    for backend in BACKENDS:
        entries = registry.kernels_for(op_name, backend)
        if entries:
            lines.append(f"    {backend}: " + "; ".join(e.attr.short() for e in entries))
    if not lines:
        return ""
    return (
        "Kernels (from the registry; a dtype without its own runs on a wider one when that is lossless):\n"
        + "\n".join(lines)
    )


class Primitive(metaclass=_PrimitiveType):
    """Base class of operators. Subclass it, register attrs with ``@prim_attr_register``.

    Without ``infer_shape``/``infer_dtype`` the output has the first tensor input's shape and dtype.
    """

    __mindspore_signature__ = ()
    # A call that acts beyond its outputs (a collective talks to other ranks): a trace never merges
    # two such calls (opforge/dispatch/cse.py), as MindSpore's side_effect_* flags keep them apart.
    side_effect = False
    # The one output is the first input's data in another shape (Reshape, ExpandDims, Squeeze): on the
    # CPU a call then returns a view of that input instead of launching a copy, unless the input is a
    # Parameter (written in place later, which a view would show).
    output_is_view = False
    # (position, name) of the inputs that are Python values (an axis, a shape, a range's bounds). A Tensor
    # given there is folded to its value at the call, as MindSpore folds constant Tensors.
    constant_inputs: tuple = ()
    # Defaults read from the class until an instance sets its own (construction sets only the rest).
    input_names = None
    output_names = None
    _device = None
    _attrs_key = None  # the key its plans are shared under, once _adopt_plans has run
    # What an interpreter derives from the attrs and a call's abstract inputs (the sharding interpreter's
    # ShardPlans), by its own keys: dropped with the kernel plans when the attrs change.
    _derived = None
    # The sharding strategy of ``shard`` (semi-auto parallel): one tuple of split counts per tensor input.
    in_strategy = None
    out_strategy = None
    # Bit i set: a Python number at position i is a weak scalar of a dtype group (keyed by type, not
    # value); the C call path reads it to key a call as plan.plan_key does.
    _weak_positions = 0

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._weak_positions = sum(1 << i for i in cls._group_positions() if i < 64)
        if not cls.__name__.startswith("_") and cls.__module__ != __name__:  # operators, not base classes
            _classes[cls.__name__] = cls

    def __init__(self, name: str | None = None):
        _init_primitive(self, name or type(self).__name__, {})

    # -- attrs --------------------------------------------------------------------------------
    def add_prim_attr(self, name: str, value) -> Primitive:
        self.attrs[name] = value
        if _is_field(type(self), name):
            self.__dict__[name] = value
        self._forget_plans()
        return self

    def shard(self, in_strategy, out_strategy=None) -> Primitive:
        """MindSpore's ``shard``: how to split each tensor input across the devices in semi-auto parallel
        mode, one tuple per tensor input with one split count per dim (``MatMul().shard(((2, 1), (1, 1)))``
        splits the rows of ``x`` in two), or one MindSpore ``Layout`` per input (opforge/parallel_layout.py).
        ``out_strategy`` lays the output out so afterwards. Outside SEMI_AUTO_PARALLEL / AUTO_PARALLEL the
        strategy is recorded and ignored (docs/parallel.md)."""
        in_strategy = _check_strategy(self.name, "in_strategy", in_strategy)
        self.attrs["in_strategy"] = in_strategy
        self.__dict__["in_strategy"] = in_strategy
        if out_strategy is not None:
            out_strategy = _check_strategy(self.name, "out_strategy", out_strategy)
            self.attrs["out_strategy"] = out_strategy
            self.__dict__["out_strategy"] = out_strategy
        self._forget_plans()
        return self

    def recompute(self, mode=True) -> Primitive:
        """MindSpore's ``Primitive.recompute(mode=True)``: sets the attr ``recompute`` to ``mode`` (a bool) and returns
        the primitive. MindSpore's graph compiler then recomputes this operator's output in the backward pass
        instead of keeping it. An opforge tape keeps what a call's bprop needs (its inputs and output) either way,
        so the flag is recorded and changes no computation; recomputing whole blocks is ``Cell.recompute()`` /
        ``opforge.recompute`` (docs/nn.md, "Recomputation"). Accepted in both modes (MindSpore's is GRAPH_MODE only)."""
        if not isinstance(mode, bool):
            raise TypeError(
                f"For '{self.name}', the 'mode' of 'recompute' must be bool, but got {type(mode).__name__}."
            )
        return self.add_prim_attr("recompute", mode)

    def del_prim_attr(self, name: str) -> Primitive:
        if name not in self.attrs:
            raise KeyError(f"For '{self.name}', there is no attr '{name}' to delete.")
        del self.attrs[name]
        if _is_field(type(self), name):
            self.__dict__.pop(name, None)
        self._forget_plans()
        return self

    def get_attr_dict(self) -> dict:
        return self.attrs

    def init_prim_io_names(self, inputs, outputs) -> None:
        """Name the inputs and outputs (constant inputs reach C++ kernels as attrs by these names)."""
        self.input_names = self.attrs["input_names"] = list(inputs)
        self.output_names = self.attrs["output_names"] = list(outputs)
        if self._plans or self._attrs_key is not None:  # else: a new instance, nothing to forget yet
            self._forget_plans()

    def set_device(self, device_target: str) -> Primitive:
        """Run this primitive on ``device_target``; its tensor inputs must live there."""
        if device_target not in BACKENDS:
            raise ValueError(
                f"For '{self.name}', the 'device_target' must be one of {BACKENDS}, but got {device_target!r}."
            )
        self._device = device_target
        return self.add_prim_attr("primitive_target", device_target)

    def _forget_plans(self) -> None:
        # Replaced, never cleared in place: it may be the shared dict of the former attrs. (While
        # _attrs_key is None, _plans is this instance's own.)
        self._plans = {}
        self._attrs_key = None
        self._derived = None

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.attrs.items() if k not in _IO_ATTRS)
        return f"Prim[{self.name}]<{shown}>" if shown else f"Prim[{self.name}]"

    # -- copies -------------------------------------------------------------------------------
    def __copy__(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.attrs = dict(self.attrs)
        new.init_attrs = dict(self.init_attrs)
        new._plans = {}
        new._derived = None
        return new

    def __deepcopy__(self, memo):
        new = object.__new__(type(self))
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            if key == "_derived":
                continue
            new.__dict__[key] = {} if key == "_plans" else copy.deepcopy(value, memo)
        return new

    def clone(self) -> Primitive:
        """A new primitive of the same class with the same attrs (no ``__init__`` re-run)."""
        return copy.deepcopy(self)

    # -- inference ----------------------------------------------------------------------------
    def __infer__(self, *args) -> dict:
        """Output meta from input metas: each arg is ``{'shape', 'dtype', 'value'}``."""
        for a in args:
            if isinstance(a["dtype"], mstype.Type):
                return {"shape": a["shape"], "dtype": a["dtype"], "value": None}
        raise TypeError(f"For '{self.name}', at least one input must be a Tensor.")

    # -- the call path ------------------------------------------------------------------------
    def _call(self, *args, **kwargs):
        """The call path in Python. ``Primitive.__call__`` is its C twin (``_C.make_primitive_call``),
        which serves cached all-Tensor calls itself when no interpreter is installed on the thread
        and hands everything else to this method."""
        if kwargs:
            args = binding.bind_arguments(self.name, self._call_signature(), args, kwargs)
        args = tuple([plan.python_scalar(a) for a in args])  # NumPy scalars (in tuples too): Python numbers
        if self.constant_inputs:
            args = self._fold_constant_tensors(args)
        # no interpreter: the bottom one's evaluation (its errors name a placeholder or a split Tensor read)
        return (_C.current_interpreter() or EVAL).process_primitive(self, args)

    def _fold_constant_tensors(self, args: tuple) -> tuple:
        """Tensors at ``constant_inputs`` as their values, as MindSpore folds constant Tensors: integer
        and bool ones of any rank (an axis, a shape: ``ReduceSum()(x, Tensor(1))``,
        ``Reshape()(x, Tensor([2, 3]))``; 1-d and more as tuples) and 0-d floats (a bound, a fill value:
        ``Range()(Tensor(0.0), Tensor(1.0), Tensor(0.25))``). Any other Tensor, or one with no data,
        stays, for the check that names it; inside a trace, reading a traced one raises TraceError."""
        folded = list(args)
        for i, _ in self.constant_inputs:
            t = folded[i] if i < len(folded) else None
            if not isinstance(t, Tensor) or t._data is None:
                continue
            whole = t.dtype in mstype.int_type or t.dtype in mstype.uint_type or t.dtype == mstype.bool_
            if whole or (t.dtype in mstype.float_type and t.ndim == 0):
                value = t.asnumpy().tolist()
                folded[i] = tuple(value) if isinstance(value, list) else value
        return tuple(folded)

    def _raise_if_sharded(self, args: tuple) -> None:
        """A ValueError naming the input that is a Tensor split across ranks, outside the parallel network that
        split it (a split Parameter, which kernels cannot read as one array). The plan built for its global
        meta is dropped, so that the next such call comes here again rather than to the kernel's check."""
        flat = [(i, a) for i, arg in enumerate(args) for a in (arg if isinstance(arg, (tuple, list)) else (arg,))]
        for i, a in flat:
            if sharding.is_sharded(a):
                self._plans.pop(self._plan_key(args), None)
                raise ValueError(
                    f"For '{self.name}', the input {i} is a Tensor split across ranks ({a._data.layout}, global "
                    f"shape {list(a.shape)}), outside the parallel network that split it; read it with "
                    "opforge.dispatch.sharding.local_of(t) (this "
                    "rank's block) or gather_whole(t) (the whole value on every rank)."
                )

    def _plan_key(self, args: tuple) -> tuple:
        try:
            return tuple([a._meta for a in args])
        except AttributeError:
            return plan.plan_key(self, args)

    def _plan_for(self, args: tuple):
        """The plan for a call with these arguments: cached per metas, else built."""
        key = self._plan_key(args)
        found = self._plans.get(key)
        return found if found is not None else self._new_plan(args, key)

    def _new_plan(self, args: tuple, key: tuple):
        self._adopt_plans()
        plans = self._plans
        found = plans.get(key)
        if found is None:
            found = plan.build_plan(self, args)
            plan.remember(plans, key, found)
        return found

    def _adopt_plans(self) -> bool:
        """Make ``_plans`` the dict shared by the instances with these attrs (kept private when an
        attr has no key); whether it changed. The C fast path asks this on a miss, so the first call
        of a new instance already finds the plans of its attrs."""
        key = self._attrs_key
        if key is None:
            try:
                key = _C.attrs_key(self)  # (class, name, plan.freeze_attrs of the attrs, device)
            except TypeError:
                key = False
            self._attrs_key = key
        if key is False:
            _unshared.add(self)
            return False
        plans = _shared_plans.get(key)
        if plans is None:
            if len(_shared_plans) >= plan.MAX_PLANS:  # ever-new attrs must not grow memory without bound
                _drop_shared_plans()
            plans = _shared_plans[key] = {}
        if plans is self._plans:
            return False
        self._plans = plans
        return True

    def _bound_inputs(self, args: tuple) -> tuple:
        """Every input of a call, defaults included (what bprops receive)."""
        if len(args) < len(self.__mindspore_signature__):
            return binding.bind_arguments(self.name, self._signature(), args, {})
        return args

    @classmethod
    @functools.cache
    def _signature(cls) -> tuple:
        return tuple(cls.__mindspore_signature__)

    def _call_signature(self) -> tuple:
        """The declared signature, else one built from the input names (for keyword calls)."""
        return self._signature() or tuple(make_sig(n) for n in (self.input_names or ()))

    @classmethod
    @functools.cache
    def _group_positions(cls) -> frozenset:
        return frozenset(i for i, s in enumerate(cls._signature()) if s.dtype != sig_dtype.T_EMPTY_DEFAULT_VALUE)

    def _arg_name(self, i: int) -> str:
        signature = self._signature()
        if i < len(signature):
            return signature[i].name
        if self.input_names and i < len(self.input_names):
            return self.input_names[i]
        return f"input{i}"

    def _has_infer_value(self) -> bool:
        return False


class PrimitiveWithInfer(Primitive):
    """A primitive whose output meta comes from ``infer_shape`` and ``infer_dtype``.

    Tensor arguments reach them as a shape (list) and a dtype; constant arguments as their value.
    ``infer_value`` may return the result outright (it receives tensors as Tensors).
    """

    def infer_shape(self, *args):
        return _first_tensor(self.name, args, "shape")

    def infer_dtype(self, *args):
        return _first_tensor(self.name, args, "dtype")

    def infer_value(self, *args):
        return None

    def _has_infer_value(self) -> bool:
        return type(self).infer_value is not PrimitiveWithInfer.infer_value

    def __infer__(self, *args) -> dict:
        shapes = [a["shape"] for a in args]
        dtypes = [a["dtype"] for a in args]
        return {
            "shape": self.infer_shape(*shapes),
            "dtype": self.infer_dtype(*dtypes),
            "value": None,
        }


class PrimitiveWithCheck(Primitive):
    """A primitive that validates with ``check_shape`` and ``check_dtype``; the output meta is the
    first tensor input's unless ``infer_shape``/``infer_dtype`` are also defined."""

    def check_shape(self, *args) -> None:
        pass

    def check_dtype(self, *args) -> None:
        pass

    def __infer__(self, *args) -> dict:
        shapes = [a["shape"] for a in args]
        dtypes = [a["dtype"] for a in args]
        self.check_shape(*shapes)
        self.check_dtype(*dtypes)
        shape = self.infer_shape(*shapes) if hasattr(type(self), "infer_shape") else None
        dtype = self.infer_dtype(*dtypes) if hasattr(type(self), "infer_dtype") else None
        first = super().__infer__(*args)
        return {
            "shape": first["shape"] if shape is None else shape,
            "dtype": first["dtype"] if dtype is None else dtype,
            "value": None,
        }


# Attrs read as fields (prim.alpha): each attr is also an instance attribute, as in MindSpore, unless
# its name is one of the class's own (a method, input_names) or the instance's state. (A __getattr__
# would do it too, but then Python cannot specialise any attribute read of a primitive: each cost
# about 0.1 us, and the call paths read many.)
_STATE = frozenset({"name", "attrs", "init_attrs"})


def _check_strategy(prim_name: str, arg: str, strategy) -> tuple:
    """A strategy as a tuple of tuples of positive ints (a MindSpore ``Layout`` read as its split counts), or a
    TypeError/ValueError naming the operator."""
    if isinstance(strategy, (tuple, list)):
        strategy = [split_counts(s) for s in strategy]
    if not isinstance(strategy, (tuple, list)) or not all(isinstance(s, (tuple, list)) for s in strategy):
        raise TypeError(
            f"For '{prim_name}.shard', the '{arg}' must be a tuple of tuples of ints (one per tensor input), "
            f"but got {strategy!r}."
        )
    out = []
    for s in strategy:
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in s):
            raise TypeError(f"For '{prim_name}.shard', the '{arg}' must hold ints, but got {strategy!r}.")
        if any(c < 1 for c in s):
            raise ValueError(
                f"For '{prim_name}.shard', every split count of '{arg}' must be >= 1, but got {strategy!r}."
            )
        out.append(tuple(s))
    return tuple(out)


def _is_field(cls, name) -> bool:
    return isinstance(name, str) and not name.startswith("_") and name not in _STATE and not hasattr(cls, name)


def _init_primitive(prim, name: str, attrs: dict) -> None:
    # What every instance holds (prim_attr_register's wrapper sets the same, inlined).
    prim.name = name
    prim.attrs = attrs
    prim.init_attrs = dict(attrs)
    prim._plans = {}  # call key -> plan; the shared dict of its attrs after the first call


def _drop_shared_plans() -> None:
    # Cleared in place: every instance holding one of these dicts loses its plans with it.
    for plans in _shared_plans.values():
        plans.clear()
    _shared_plans.clear()


def _forget_all_plans() -> None:
    """A kernel was registered, or the context's device changed: every plan may now select differently
    (a call without Tensor inputs runs on the context's device, and its plan is keyed without one)."""
    _drop_shared_plans()
    for prim in list(_unshared):
        prim._forget_plans()


registry.on_change(_forget_all_plans)
context.on_device_target_change(_forget_all_plans)
_C.set_plan_sharing(_shared_plans, plan.freeze)  # the C fast path adopts shared plans as _adopt_plans does


def primitive_classes() -> dict:
    """Every operator class defined so far (built-in and user-defined), by name."""
    return dict(_classes)


def with_attrs(prim, **changes):
    """A new primitive of ``prim``'s class with some constructor attrs changed (a batching rule's call on a
    moved axis, a sharding rule's local call on blocks)."""
    attrs = {k: v for k, v in prim.init_attrs.items() if k != "name"}
    attrs.update(changes)
    return type(prim)(**attrs)


registry.set_operator_names(_classes.keys)  # register_kernel warns about a name no operator has


def _first_tensor(prim_name, values, what):
    for v in values:
        if what == "dtype" and isinstance(v, mstype.Type):
            return v
        if what == "shape" and isinstance(v, list):
            return v
    raise TypeError(f"For '{prim_name}', at least one input must be a Tensor.")


def prim_attr_register(fn):
    """Decorate ``__init__``: its arguments, defaults applied, become attrs before the body runs.
    Constructor misuse is a TypeError naming the operator."""
    binder = _ConstructorBinder(inspect.signature(fn))
    no_arguments = None if binder.required else binder.defaults  # the attrs of a call without arguments

    @functools.wraps(fn)
    def deco(self, /, *args, **kwargs):
        name = type(self).__name__
        if args or kwargs or no_arguments is None:
            attrs = binder.bind(name, args, kwargs)
        else:
            attrs = no_arguments.copy()
        # Primitive.__init__'s state (_init_primitive), inlined: this runs for every new instance.
        self.name = name
        self.attrs = attrs
        self.init_attrs = attrs.copy()
        self._plans = {}
        cls = type(self)
        if cls not in binder.fields_of:  # which parameters are fields, per class
            binder.fields_of[cls] = tuple(n for n in binder.names if _is_field(cls, n))
        for key in binder.fields_of[cls]:
            setattr(self, key, attrs[key])
        fn(self, *args, **kwargs)

    return deco


class _ConstructorBinder:
    """Binds a primitive's constructor arguments to its parameters, defaults applied: built once per
    ``__init__`` (``inspect.Signature.bind`` on every construction was most of its cost)."""

    def __init__(self, fn_sig: inspect.Signature):
        self.signature = fn_sig
        params = list(fn_sig.parameters.values())[1:]  # without self
        self.names = tuple(p.name for p in params)
        self.defaults = {p.name: p.default for p in params}  # in order; the required ones are empty
        self.required = tuple(p.name for p in params if p.default is p.empty)
        self.simple = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params)
        self.fields_of: dict = {}  # class -> the parameters that are its instances' fields too
        shown = ", ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}" for p in params)
        self.its = f"its arguments are ({shown})" if params else "it takes none"

    def bind(self, prim_name: str, args: tuple, kwargs: dict) -> dict:
        """``{parameter: value}`` for every parameter, in order."""
        if self.simple and len(args) <= len(self.names):
            values = self.defaults.copy()
            if args:
                values.update(zip(self.names, args))
            if kwargs:
                if not (kwargs.keys() <= values.keys() and kwargs.keys().isdisjoint(self.names[: len(args)])):
                    self._explain(prim_name, args, kwargs)
                values.update(kwargs)
            if not self.required or all(values[name] is not inspect.Parameter.empty for name in self.required):
                return values
        self._explain(prim_name, args, kwargs)
        bound = self.signature.bind(None, *args, **kwargs)  # a signature with *args or keyword-only ones
        bound.apply_defaults()
        return dict(list(bound.arguments.items())[1:])

    def _explain(self, prim_name: str, args: tuple, kwargs: dict) -> None:
        """Raise the TypeError naming the operator for arguments that do not bind."""
        params = list(self.signature.parameters.values())[1:]
        if not self.simple:
            try:
                self.signature.bind(None, *args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"For '{prim_name}', the constructor's arguments do not bind: {exc}.") from None
            return
        if len(args) > len(params):
            if not params:
                raise TypeError(f"For '{prim_name}', the constructor takes no arguments, but got {len(args)}.")
            raise TypeError(
                f"For '{prim_name}', the constructor takes {len(params)} positional arguments, but got {len(args)}; "
                f"{self.its}."
            )
        for key in kwargs:
            if key not in self.defaults:
                raise TypeError(f"For '{prim_name}', the constructor has no argument '{key}'; {self.its}.")
            if key in self.names[: len(args)]:
                raise TypeError(
                    f"For '{prim_name}', the constructor got the argument '{key}' by position and by keyword."
                )
        for name in self.names[len(args) :]:
            if self.defaults[name] is inspect.Parameter.empty and name not in kwargs:
                raise TypeError(f"For '{prim_name}', the constructor's argument '{name}' is missing; {self.its}.")


# The C call path: cached all-Tensor calls with no interpreter never enter Python; the rest reach
# Primitive._call.
Primitive.__call__ = _C.make_primitive_call(Tensor, Primitive._call)
